package org.xchg;

import java.lang.annotation.Native;

/**
 * A snapshot of xchg_buf_metrics (xchg/buf.h): xchg's buffers, process-wide.
 *
 * @param allocatedBytes liveBytes + recycledBytes ({@link Xchg#allocatedBytes})
 * @param liveBytes data bytes of live buffers
 * @param liveBuffers live buffers of every kind ({@link Xchg#liveBuffers})
 * @param recycledBytes blocks of released buffers kept for the next ones of
 *     their size (last in, first out, so that a reader releasing each batch
 *     before decoding the next reuses memory still in the CPU's cache), at
 *     most recycleLimitBytes; {@link Xchg#trimBuffers} gives them back
 * @param recycledBlocks how many blocks recycledBytes is
 * @param recycleLimitBytes the bound on recycledBytes
 * @param reusedBlocks allocations served by a kept block, since the start
 */
public record XchgBufferMetrics(
    long allocatedBytes,
    long liveBytes,
    long liveBuffers,
    long recycledBytes,
    long recycledBlocks,
    long recycleLimitBytes,
    long reusedBlocks) {

  /** Where the native code puts each figure. */
  @Native static final int ALLOCATED_BYTES = 0;

  @Native static final int LIVE_BYTES = 1;
  @Native static final int LIVE_BUFFERS = 2;
  @Native static final int RECYCLED_BYTES = 3;
  @Native static final int RECYCLED_BLOCKS = 4;
  @Native static final int RECYCLE_LIMIT_BYTES = 5;
  @Native static final int REUSED_BLOCKS = 6;
  @Native static final int COUNT = 7;

  static XchgBufferMetrics of(long[] v) {
    return new XchgBufferMetrics(v[ALLOCATED_BYTES], v[LIVE_BYTES], v[LIVE_BUFFERS], v[RECYCLED_BYTES],
        v[RECYCLED_BLOCKS], v[RECYCLE_LIMIT_BYTES], v[REUSED_BLOCKS]);
  }
}
