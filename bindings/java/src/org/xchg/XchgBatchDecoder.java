package org.xchg;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Decodes the batches of a cached relation (xchg_batch_decoder): opened
 * once per relation with its schema (the bytes of an IPC schema message)
 * and the columns to read, it decodes payloads — each an encapsulated
 * RecordBatch message with the dictionary messages it needs, or a whole
 * IPC stream — into Arrow C Data Interface structs the caller owns: Arrow
 * Java's {@code ArrowArray.allocateNew(allocator)}, by its {@code
 * memoryAddress()}, or xchg's {@link XchgArrowArray}.
 *
 * <p>Copy discipline: from a heap {@code byte[]} (or a heap {@code
 * ByteBuffer}'s array, a read-only one's too), the framing and metadata
 * are read first (small; {@link #metadataBytesCopied}), then exactly the
 * selected buffers' byte ranges are copied out with {@code
 * GetByteArrayRegion}, at most 64 KiB per call ({@link #heapBytesCopied}):
 * an uncompressed buffer straight into its final 64-byte-aligned place, a
 * compressed one into the copy it is then decompressed from into its
 * final place.  {@link #decodeMany} makes those copies on the decoder's
 * threads, never inside a JNI critical region, so a garbage collection
 * waits at most for one 64 KiB copy per thread.  From a direct {@code
 * ByteBuffer}, uncompressed buffers are not copied at all: the exported
 * arrays point into the buffer and keep it reachable until they are
 * released.  With no column selected only the row count is decoded and no
 * byte of a body is read.
 *
 * <p>Validation is full by default: every buffer's bounds, and offsets
 * monotonic and null counts matching the validity bitmaps, since Arrow
 * Java reads an imported array's values unchecked (about 5 µs per
 * 10,000-row batch of six columns).  A relation the engine wrote itself
 * may be read with {@link XchgValidation#BOUNDS}.
 *
 * <p>Decoding allocates no Java object (but an exception's).  What is
 * exported is the caller's own and stays valid after {@link #close}.  A
 * bad payload (truncated, corrupt, of another schema) throws an {@link
 * XchgException} whose message names the batch, message, field and
 * buffer.  Methods are thread-safe; decodes run concurrently.
 */
public final class XchgBatchDecoder implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  /** What to decode and how (xchg_ipc_read_options). */
  public static final class Options {
    int[] columns = null;
    int threads = 0;
    XchgValidation validation = XchgValidation.FULL;

    /**
     * The top-level column indices to decode, given in any order: the
     * batches hold them in schema order, each once ({@code columns(3, 1)}
     * gives c1, c3; {@code columns(5, 5)} one column), nested children
     * following their parent, as {@link XchgShuffleReader.Options#columns}
     * does (an {@link XchgCache} holder keeps the order given, repeats
     * included); null (the default) for all, none for the row count only.
     */
    public Options columns(int... indices) {
      columns = indices == null ? null : indices.clone();
      return this;
    }

    /**
     * The threads {@link #decodeMany} decodes on, the caller's included: 0
     * (the default) for xchg's process-wide pool, one per core; 1 for the
     * calling thread only; more for a pool of the decoder's own, at most
     * {@link Xchg#MAX_THREADS}.
     */
    public Options threads(int n) {
      threads = Xchg.checkThreads(n);
      return this;
    }

    /** How much of the values is checked (default {@link XchgValidation#FULL}). */
    public Options validation(XchgValidation level) {
      validation = Objects.requireNonNull(level, "level");
      return this;
    }
  }

  private final NativeHandle handle;

  private XchgBatchDecoder(long handle) {
    this.handle = new NativeHandle("XchgBatchDecoder", handle);
  }

  /** A decoder of every column, with the default options. */
  public static XchgBatchDecoder open(byte[] schemaMessage) {
    return open(schemaMessage, new Options());
  }

  /**
   * A decoder of the relation whose schema message is {@code schemaMessage}
   * (with or without its IPC framing, and nothing after it),
   * xchg_batch_decoder_open.
   *
   * @throws XchgException when the schema message is invalid, is followed by
   *     bytes its framing does not count ("schema message: 16 trailing
   *     bytes, from byte 1936 ..."), or a column is out of range
   */
  public static XchgBatchDecoder open(byte[] schemaMessage, Options options) {
    Objects.requireNonNull(schemaMessage, "schemaMessage");
    long[] cols = null;
    if (options.columns != null) {
      cols = new long[options.columns.length];
      for (int i = 0; i < cols.length; i++) cols[i] = options.columns[i];
    }
    return new XchgBatchDecoder(nOpen(schemaMessage, cols, options.threads, options.validation.id));
  }

  /**
   * Fills the ArrowSchema at address, which must be empty (released), with
   * the schema of the decoded batches.
   *
   * @throws IllegalStateException when the struct still holds a schema
   */
  public void exportSchema(long schemaAddress) {
    long h = handle.enter();
    try {
      nExportSchema(h, checkAddress(schemaAddress));
    } finally {
      handle.leave();
    }
  }

  /** As {@link #exportSchema(long)}, into xchg's struct. */
  public void exportSchema(XchgArrowSchema schema) {
    exportSchema(schema.memoryAddress());
  }

  /**
   * Decodes payload[offset, offset + length) into the ArrowArray at
   * arrayAddress, on the calling thread; batch is the number an error gives
   * the payload.
   *
   * @return the batch's rows
   * @throws XchgException for a bad payload (truncated, corrupt, of another
   *     schema, without a record batch), naming the batch
   * @throws IndexOutOfBoundsException when the range is not inside payload
   * @throws IllegalStateException when the struct still holds an array
   */
  public long decode(byte[] payload, int offset, int length, long batch, long arrayAddress) {
    checkRange(payload, offset, length);
    checkAddress(arrayAddress);
    long h = handle.enter();
    try {
      return nDecodeHeap(h, payload, offset, length, batch, arrayAddress);
    } finally {
      handle.leave();
    }
  }

  /** As {@link #decode(byte[], int, int, long, long)}, into xchg's struct. */
  public long decode(byte[] payload, int offset, int length, long batch, XchgArrowArray array) {
    return decode(payload, offset, length, batch, array.memoryAddress());
  }

  /**
   * Decodes the buffer's bytes from its position to its limit (its position
   * is left as it is), as {@link #decode(byte[], int, int, long, long)}
   * does a heap payload.  A direct buffer is read in place (see the class
   * comment); a heap one, a read-only one too (Spark's {@code
   * ManagedBuffer.nioByteBuffer()} may be one), is read in place from its
   * array as a {@code byte[]} payload is, exactly the ranges a heap payload
   * has copied ({@link #heapBytesCopied}): the native code takes the array
   * a read-only buffer hides from Java, so nothing is copied onto the Java
   * heap, as {@link XchgCache#acquire} and {@link
   * XchgShuffleReader#addInput(ByteBuffer)} read such buffers.
   *
   * @return the batch's rows
   */
  public long decode(ByteBuffer payload, long batch, long arrayAddress) {
    Objects.requireNonNull(payload, "payload");
    checkAddress(arrayAddress);
    if (payload.hasArray())
      return decode(payload.array(), payload.arrayOffset() + payload.position(), payload.remaining(), batch,
          arrayAddress);
    long h = handle.enter();
    try {
      return payload.isDirect()
          ? nDecodeDirect(h, payload, payload.position(), payload.limit(), batch, arrayAddress)
          : nDecodeHidden(h, payload, payload.position(), payload.remaining(), batch, arrayAddress);
    } finally {
      handle.leave();
    }
  }

  /** As {@link #decode(ByteBuffer, long, long)}, into xchg's struct. */
  public long decode(ByteBuffer payload, long batch, XchgArrowArray array) {
    return decode(payload, batch, array.memoryAddress());
  }

  /**
   * Decodes whole arrays payloads[i] into the ArrowArray at
   * arrayAddresses[i], in parallel on the decoder's threads (the copies out
   * of the heap included).  Errors name batch firstBatch + i; on an error
   * nothing is exported.
   *
   * @throws IllegalArgumentException when two of the addresses are one
   *     struct (naming both indices), before anything is decoded
   * @throws IllegalStateException when a struct still holds an array
   */
  public void decodeMany(byte[][] payloads, long firstBatch, long[] arrayAddresses) {
    checkHeap(payloads, firstBatch);
    checkAddresses(payloads.length, arrayAddresses);
    long h = handle.enter();
    try {
      nDecodeHeapMany(h, payloads, firstBatch, arrayAddresses, null);
    } finally {
      handle.leave();
    }
  }

  /** As {@link #decodeMany(byte[][], long, long[])}, into xchg's structs. */
  public void decodeMany(byte[][] payloads, long firstBatch, XchgArrowArray[] arrays) {
    checkHeap(payloads, firstBatch);
    checkArrays(payloads.length, arrays);
    long h = handle.enter();
    try {
      nDecodeHeapMany(h, payloads, firstBatch, null, arrays);
    } finally {
      handle.leave();
    }
  }

  /**
   * As {@link #decodeMany(byte[][], long, long[])}, from direct buffers
   * (position to limit).
   *
   * @throws IllegalArgumentException for a heap buffer, read-only or not,
   *     naming it by its batch and index, before anything is decoded: heap
   *     payloads go one at a time to {@link #decode(ByteBuffer, long, long)},
   *     or as {@code byte[]} ones to {@link #decodeMany(byte[][], long, long[])}
   */
  public void decodeMany(ByteBuffer[] payloads, long firstBatch, long[] arrayAddresses) {
    for (int i = 0; i < payloads.length; i++) checkDirect(payloads[i], firstBatch + i, i);
    checkAddresses(payloads.length, arrayAddresses);
    long h = handle.enter();
    try {
      nDecodeDirectMany(h, payloads, firstBatch, arrayAddresses, null);
    } finally {
      handle.leave();
    }
  }

  /** As {@link #decodeMany(ByteBuffer[], long, long[])}, into xchg's structs. */
  public void decodeMany(ByteBuffer[] payloads, long firstBatch, XchgArrowArray[] arrays) {
    for (int i = 0; i < payloads.length; i++) checkDirect(payloads[i], firstBatch + i, i);
    checkArrays(payloads.length, arrays);
    long h = handle.enter();
    try {
      nDecodeDirectMany(h, payloads, firstBatch, null, arrays);
    } finally {
      handle.leave();
    }
  }

  /**
   * Body bytes copied out of heap arrays so far: the selected buffers' ranges
   * (compressed or not), nothing else.
   */
  public long heapBytesCopied() {
    long h = handle.enter();
    try {
      return nCopied(h, false);
    } finally {
      handle.leave();
    }
  }

  /** Framing and flatbuffer bytes copied out of heap arrays so far. */
  public long metadataBytesCopied() {
    long h = handle.enter();
    try {
      return nCopied(h, true);
    } finally {
      handle.leave();
    }
  }

  /**
   * Frees the decoder once no call runs.  Exported arrays stay valid.  A
   * second close does nothing.
   *
   * @throws IllegalStateException while a call runs
   */
  @Override
  public void close() {
    handle.close(XchgBatchDecoder::nClose);
  }

  private static void checkHeap(byte[][] payloads, long firstBatch) {
    for (int i = 0; i < payloads.length; i++) checkPresent(payloads[i], firstBatch + i, i);
  }

  /** Named as decoding errors name a payload: by its batch number and its index i of many. */
  private static void checkPresent(Object payload, long batch, int i) {
    if (payload == null) throw new NullPointerException("batch " + batch + " (payload " + i + ") is null");
  }

  private static void checkDirect(ByteBuffer payload, long batch, int i) {
    checkPresent(payload, batch, i);
    if (!payload.isDirect())
      throw new IllegalArgumentException("batch " + batch + " (payload " + i + "): a heap ByteBuffer"
          + (payload.hasArray() ? "" : " (read-only, its array hidden)")
          + ", not a direct one: decodeMany(ByteBuffer[], ...) takes direct ones only; decode(ByteBuffer, ...)"
          + " reads a heap one in place");
  }

  private static void checkAddresses(int payloads, long[] addresses) {
    if (addresses.length != payloads)
      throw new IllegalArgumentException(
          payloads + " payloads but " + addresses.length + " array addresses");
    for (long a : addresses) checkAddress(a);
  }

  private static void checkArrays(int payloads, XchgArrowArray[] arrays) {
    if (arrays.length != payloads)
      throw new IllegalArgumentException(payloads + " payloads but " + arrays.length + " arrays");
    for (XchgArrowArray a : arrays) a.memoryAddress(); // throws when closed
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

  private static native long nOpen(byte[] schemaMessage, long[] columns, int threads, int validation);

  private static native void nClose(long decoder);

  private static native void nExportSchema(long decoder, long address);

  private static native long nDecodeHeap(
      long decoder, byte[] payload, int offset, int length, long batch, long address);

  /**
   * position and limit are the payload's, read here: two JNI field reads
   * fewer per payload (the native side refuses a position past the limit,
   * as a race with a thread moving them could make).
   */
  /** A read-only heap buffer's bytes [position, position + length), read from its hidden array. */
  private static native long nDecodeHidden(
      long decoder, ByteBuffer payload, int position, int length, long batch, long address);

  private static native long nDecodeDirect(
      long decoder, ByteBuffer payload, int position, int limit, long batch, long address);

  /** Exactly one of addresses and arrays is non-null. */
  private static native void nDecodeHeapMany(
      long decoder, byte[][] payloads, long firstBatch, long[] addresses, XchgArrowArray[] arrays);

  private static native void nDecodeDirectMany(
      long decoder, ByteBuffer[] payloads, long firstBatch, long[] addresses, XchgArrowArray[] arrays);

  private static native long nCopied(long decoder, boolean metadata);

}
