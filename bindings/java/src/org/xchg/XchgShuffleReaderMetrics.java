package org.xchg;

import java.lang.annotation.Native;

/**
 * A snapshot of xchg_shuffle_reader_metrics (see xchg/shuffle.h for each
 * field): blocks and rows read, bytes as read (wire) and as decoded,
 * batches handed out (of which passed through without a copy, and cut
 * short by a changed dictionary), and the time spent decompressing,
 * copying into place and waiting for input, in nanoseconds.
 */
public record XchgShuffleReaderMetrics(
    long blocks,
    long rows,
    long wireBytes,
    long decodedBytes,
    long batches,
    long passthroughBatches,
    long dictionaryCuts,
    long decompressNanos,
    long copyNanos,
    long waitNanos) {

  /** Where the native code puts each counter (xchg_shuffle_reader_metrics's field of the same name). */
  @Native static final int BLOCKS = 0;
  @Native static final int ROWS = 1;
  @Native static final int WIRE_BYTES = 2;
  @Native static final int DECODED_BYTES = 3;
  @Native static final int BATCHES = 4;
  @Native static final int PASSTHROUGH_BATCHES = 5;
  @Native static final int DICTIONARY_CUTS = 6;
  @Native static final int DECOMPRESS_NS = 7;
  @Native static final int COPY_NS = 8;
  @Native static final int WAIT_NS = 9;
  @Native static final int COUNT = 10;

  static XchgShuffleReaderMetrics of(long[] v) {
    return new XchgShuffleReaderMetrics(v[BLOCKS], v[ROWS], v[WIRE_BYTES], v[DECODED_BYTES],
        v[BATCHES], v[PASSTHROUGH_BATCHES], v[DICTIONARY_CUTS], v[DECOMPRESS_NS], v[COPY_NS],
        v[WAIT_NS]);
  }
}
