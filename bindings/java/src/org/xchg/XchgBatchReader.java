package org.xchg;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads the batches of a cached relation (xchg_batch_decoder): created once
 * per relation with its schema (the bytes of an IPC schema message) and the
 * columns to read, it decodes payloads — each an encapsulated RecordBatch
 * message with the dictionary messages it needs, or a whole IPC stream —
 * into Arrow C Data Interface structs at addresses the caller owns (Arrow
 * Java's {@code ArrowArray.allocateNew(allocator).memoryAddress()}).
 *
 * <p>Copy discipline: from a heap {@code byte[]}, the framing and metadata
 * are read first (small; {@link #metadataBytesCopied}), then exactly the
 * selected buffers' byte ranges are copied out with
 * {@code GetByteArrayRegion} ({@link #heapBytesCopied}): an uncompressed
 * buffer straight into its final 64-byte-aligned place, a compressed one
 * into the copy it is then decompressed from into its final place.  From a
 * direct {@code ByteBuffer}, uncompressed buffers are not copied at all: the
 * exported arrays point into the buffer and keep it reachable until they
 * are released.  With no column selected only the row count is decoded and
 * no byte of a body is read.
 *
 * <p>Validation is full: every buffer's bounds, and offsets monotonic and
 * null counts matching the validity bitmaps, since Arrow Java reads an
 * imported array's values unchecked and a corrupt payload must not crash
 * the JVM (about 5 µs per 10,000-row batch of six columns).
 *
 * <p>What is exported is the caller's own and stays valid after
 * {@link #close}.  A bad payload (truncated, corrupt, of another schema)
 * throws an {@link XchgException} whose message names the batch, message,
 * field and buffer.  Methods are thread-safe; decodes run concurrently.
 */
public final class XchgBatchReader implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  private long handle;
  private int running; // decodes under way, guarded by this
  private final AtomicLong heapBytes = new AtomicLong();
  private final AtomicLong metadataBytes = new AtomicLong();

  private XchgBatchReader(long handle) {
    this.handle = handle;
  }

  /**
   * A reader of the relation whose schema message is {@code schemaMessage}
   * (with or without its IPC framing).
   *
   * @param columns top-level column indices to decode (nested children
   *     follow their parent), or null for all
   * @param threads threads that decompress and validate payloads decoded
   *     together: 0 for xchg's process-wide pool (one per core), 1 for the
   *     calling thread only
   * @throws XchgException when the schema message is invalid or a column is
   *     out of range
   */
  public static XchgBatchReader open(byte[] schemaMessage, int[] columns, int threads) {
    if (schemaMessage == null) throw new NullPointerException("schemaMessage");
    if (threads < 0) throw new IllegalArgumentException("threads must be >= 0");
    long[] cols = null;
    if (columns != null) {
      cols = new long[columns.length];
      for (int i = 0; i < columns.length; i++) cols[i] = columns[i];
    }
    return new XchgBatchReader(nOpen(schemaMessage, cols, threads));
  }

  /** Fills the ArrowSchema at address with the schema of the decoded batches. */
  public void exportSchema(long schemaAddress) {
    long h = enter();
    try {
      nExportSchema(h, checkAddress(schemaAddress));
    } finally {
      leave();
    }
  }

  /**
   * Decodes payload[offset, offset + length) into the ArrowArray at
   * arrayAddress; batch is the number an error gives the payload.
   *
   * @return the batch's rows
   */
  public long decode(byte[] payload, int offset, int length, long batch, long arrayAddress) {
    checkRange(payload, offset, length);
    decodeHeap(new byte[][] {payload}, new int[] {offset}, new int[] {length}, batch,
        new long[] {checkAddress(arrayAddress)});
    return Xchg.arrowArrayLength(arrayAddress);
  }

  /** Decodes the direct buffer's bytes from its position to its limit; returns the rows. */
  public long decode(ByteBuffer payload, long batch, long arrayAddress) {
    decodeMany(new ByteBuffer[] {payload}, batch, new long[] {arrayAddress});
    return Xchg.arrowArrayLength(arrayAddress);
  }

  /**
   * Decodes whole arrays payloads[i] into the ArrowArray at arrayAddresses[i],
   * in parallel on the reader's threads (the copies out of the heap are made
   * on the calling thread, as JNI requires).  Errors name batch firstBatch + i;
   * on an error nothing is exported.
   */
  public void decodeMany(byte[][] payloads, long firstBatch, long[] arrayAddresses) {
    int n = checkCounts(payloads.length, arrayAddresses);
    int[] offsets = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) lengths[i] = payloads[i].length;
    decodeHeap(payloads, offsets, lengths, firstBatch, arrayAddresses);
  }

  /** As {@link #decodeMany(byte[][], long, long[])}, from direct buffers (position to limit). */
  public void decodeMany(ByteBuffer[] payloads, long firstBatch, long[] arrayAddresses) {
    int n = checkCounts(payloads.length, arrayAddresses);
    int[] positions = new int[n];
    int[] limits = new int[n];
    for (int i = 0; i < n; i++) {
      if (!payloads[i].isDirect())
        throw new IllegalArgumentException("payload " + i + " is not a direct ByteBuffer");
      positions[i] = payloads[i].position();
      limits[i] = payloads[i].limit();
    }
    long h = enter();
    try {
      nDecodeDirect(h, payloads, positions, limits, firstBatch, arrayAddresses);
    } finally {
      leave();
    }
  }

  /**
   * Body bytes copied out of heap arrays so far: the selected buffers' ranges
   * (compressed or not), nothing else.
   */
  public long heapBytesCopied() {
    return heapBytes.get();
  }

  /** Framing and flatbuffer bytes copied out of heap arrays so far. */
  public long metadataBytesCopied() {
    return metadataBytes.get();
  }

  /**
   * Sum, null count and rows of column i of the batch at arrayAddress, as
   * decoded by this reader (for tests and benchmarks: touches every value).
   */
  public ColumnChecksum columnChecksum(long arrayAddress, int column) {
    long[] v = new long[3];
    long h = enter();
    try {
      nColumnChecksum(h, checkAddress(arrayAddress), column, v);
    } finally {
      leave();
    }
    return new ColumnChecksum(v[0], v[1], v[2]);
  }

  /**
   * Sets views[0..2] to direct ByteBuffers (big-endian, as JNI makes them)
   * over the buffers of column {@code column} of the batch at arrayAddress
   * (validity, values or offsets, string data; null for an absent one), so
   * that Java code can
   * read the values in place, as a consumer of the export does.  The views
   * are valid until the array is released.  For the column types
   * {@link #columnChecksum} sums.
   *
   * @param views an array of at least 3 entries
   */
  public void columnBuffers(long arrayAddress, int column, ByteBuffer[] views) {
    if (views.length < 3) throw new IllegalArgumentException("views needs 3 entries");
    long h = enter();
    try {
      nColumnBuffers(h, checkAddress(arrayAddress), column, views);
    } finally {
      leave();
    }
  }

  /**
   * Frees the reader once no decode runs.  Exported arrays stay valid.  A
   * second close does nothing.
   *
   * @throws IllegalStateException while a decode runs
   */
  @Override
  public synchronized void close() {
    if (handle == 0) return;
    if (running > 0) throw new IllegalStateException("XchgBatchReader closed while decoding");
    nClose(handle);
    handle = 0;
  }

  private void decodeHeap(
      byte[][] payloads, int[] offsets, int[] lengths, long firstBatch, long[] addresses) {
    long[] copied = new long[2];
    long h = enter();
    try {
      nDecodeHeap(h, payloads, offsets, lengths, firstBatch, addresses, copied);
    } finally {
      leave();
      heapBytes.addAndGet(copied[0]);
      metadataBytes.addAndGet(copied[1]);
    }
  }

  private synchronized long enter() {
    if (handle == 0) throw new IllegalStateException("XchgBatchReader used after close");
    running++;
    return handle;
  }

  private synchronized void leave() {
    running--;
  }

  private static int checkCounts(int payloads, long[] addresses) {
    if (addresses.length != payloads)
      throw new IllegalArgumentException(
          payloads + " payloads but " + addresses.length + " array addresses");
    for (long a : addresses) checkAddress(a);
    return payloads;
  }

  private static void checkRange(byte[] payload, int offset, int length) {
    if (offset < 0 || length < 0 || offset > payload.length - length)
      throw new IndexOutOfBoundsException(
          "payload range [" + offset + ", +" + length + ") of a " + payload.length + "-byte array");
  }

  private static long checkAddress(long address) {
    if (address == 0) throw new IllegalArgumentException("null struct address");
    return address;
  }

  private static native long nOpen(byte[] schemaMessage, long[] columns, int threads);

  private static native void nExportSchema(long reader, long address);

  private static native void nDecodeHeap(
      long reader,
      byte[][] payloads,
      int[] offsets,
      int[] lengths,
      long firstBatch,
      long[] addresses,
      long[] copied);

  private static native void nDecodeDirect(
      long reader,
      ByteBuffer[] payloads,
      int[] positions,
      int[] limits,
      long firstBatch,
      long[] addresses);

  private static native void nColumnChecksum(long reader, long address, int column, long[] out);

  private static native void nColumnBuffers(
      long reader, long address, int column, ByteBuffer[] views);

  private static native void nClose(long reader);
}
