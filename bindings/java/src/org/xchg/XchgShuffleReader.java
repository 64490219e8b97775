package org.xchg;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.Native;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * The reduce side of a shuffle (xchg_shuffle_reader, xchg/shuffle.h): the
 * block streams a reduce task fetches go in as they arrive, coalesced
 * batches of about a target size come out as Arrow C Data Interface structs
 * the caller owns (Arrow Java's {@code ArrowArray.allocateNew(allocator)},
 * by its {@code memoryAddress()}, or xchg's {@link XchgArrowArray}).
 *
 * <pre>
 *   try (XchgShuffleReader r = XchgShuffleReader.open(new XchgShuffleReader.Options()
 *           .framing(XchgShuffleReader.Framing.COMET).killCheck(context::isInterrupted))) {
 *     for (each fetched block stream in) {       // as Spark's fetcher hands them over
 *       r.addInput(in);
 *       while (r.next(array.memoryAddress()) == XchgShuffleReader.Result.BATCH) consume(array);
 *     }
 *     r.endInput();
 *     while (r.next(array.memoryAddress()) == XchgShuffleReader.Result.BATCH) consume(array);
 *   }
 * </pre>
 *
 * <p>Input: each {@link #addInput} adds one source holding any number of
 * whole blocks (Comet native shuffle blocks or Arrow IPC streams, see
 * {@link Framing}); a block does not span two inputs.  An {@link
 * InputStream} is read to its end on the calling thread, 64 KiB at a time
 * through one chunk buffer the reader keeps, into one native buffer (the
 * only copy); a heap {@link ByteBuffer}, a read-only one too, is copied
 * once into native memory, straight from its array;
 * a direct one is read in place, without a copy, and stays reachable until
 * the reader is closed and every batch whose arrays point into it (an
 * uncompressed block large enough to pass through) is released: its bytes
 * must not change until then.  {@link #endInput} says no input follows.
 *
 * <p>Output: {@link #next} fills a struct with the next batch, a {@code
 * "+s"} struct array of the selected columns with at least targetRows rows
 * or targetBytes bytes (only the last is shorter, or one cut by a changed
 * dictionary), or tells that the input so far holds no whole batch ({@link
 * Result#NEED_INPUT}: add input or end it, and call again), or that the
 * input has ended and every row was handed out ({@link Result#END}).
 * Batches stay valid after {@link #close} and after any error.
 *
 * <p>Kill check: the task's kill check (a {@link BooleanSupplier}, see
 * {@link Options#killCheck}) is asked before the work of each {@link
 * #addInput} and {@link #next} (not by the calls that read no input:
 * {@link #endInput}, {@link #exportSchema}, {@link #metrics}), between
 * the 64 KiB chunks of an InputStream, and inside {@link #next} (on the
 * calling thread) before the first block and then before a block once 64
 * KiB of blocks were read since it was last asked, so that a next that
 * reads thousands of blocks stops soon after the task is killed; once it says
 * true the call throws an {@link XchgException} whose status is CANCELLED
 * (nothing of an input being added is kept), and every later {@link #next}
 * and {@link #addInput} throws CANCELLED too, without asking it again; what
 * it throws itself (an engine's TaskKilledException) comes through as
 * thrown, and the reader is cancelled the same way.
 *
 * <p>Errors: bad input throws an {@link XchgException} with xchg's message,
 * which names the block (its index over all inputs, the input, and its
 * byte offset there), the message, field and buffer; after such an error
 * every later {@link #next} throws it again.
 *
 * <p>Threads: calls are serialised (a reader is one task's); with more than
 * one thread the blocks ahead decompress and the batches ahead are built
 * on the reader's pool while the caller consumes the current one.  {@link
 * #close} during a call throws IllegalStateException and leaves the reader
 * open; a second close does nothing.
 */
public final class XchgShuffleReader implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  /** The values of xchg_shuffle_framing (checked against the C enum when the library is built). */
  @Native static final int FRAMING_AUTO = 0;

  @Native static final int FRAMING_COMET = 1;
  @Native static final int FRAMING_IPC = 2;

  /** What {@link #next} returned, as the native code tells it. */
  @Native static final int NEXT_BATCH = 0;

  @Native static final int NEXT_END = 1;
  @Native static final int NEXT_NEED_INPUT = 2;

  /** How the blocks of an input are framed (xchg_shuffle_framing). */
  public enum Framing {
    /** Per input, from its first bytes: Comet blocks when bytes 16..19 are a Comet codec tag. */
    AUTO(FRAMING_AUTO),
    /**
     * Comet native shuffle blocks: a u64le length of what follows, a u64le
     * field count, a codec tag ("NONE", "LZ4_" for an LZ4 frame, "ZSTD",
     * "SNAP" for snappy's framing format) and a whole Arrow IPC stream
     * compressed with that codec.
     */
    COMET(FRAMING_COMET),
    /** Arrow IPC streams one after another, body compression none, LZ4_FRAME or ZSTD. */
    IPC(FRAMING_IPC);

    final int id;

    Framing(int id) {
      this.id = id;
    }
  }

  /** What {@link #next} did. */
  public enum Result {
    /** The struct holds the next batch. */
    BATCH,
    /** The input ended and every row was handed out: the struct is left empty. */
    END,
    /** The input so far holds no whole batch: add input or end it, then call again. */
    NEED_INPUT
  }

  /** What to read and how (xchg_shuffle_reader_options). */
  public static final class Options {
    byte[] schema = null;
    int[] columns = null;
    Framing framing = Framing.AUTO;
    long targetRows = 0; // 0: xchg's default
    long targetBytes = 0;
    long readaheadBytes = 0;
    int threads = 0;
    XchgValidation validation = XchgValidation.FULL;
    BooleanSupplier killCheck = null;

    /**
     * The schema of the blocks, as the bytes of an IPC schema message
     * (its framing included or not: a stream's first message, or what
     * Arrow Java's {@code MessageSerializer.serialize} writes; nothing
     * after it, as {@link XchgBatchDecoder#open} takes it), copied
     * here; null (the default) to take it from the first block.  Given,
     * {@link #open} parses it (a bad one, or a column out of range, fails
     * there), {@link #exportSchema} has it before any block (a reduce
     * partition without blocks still has a schema), and every block's
     * schema must be this one.
     */
    public Options schema(byte[] message) {
      schema = message == null ? null : message.clone();
      return this;
    }

    /**
     * The top-level column indices to read, in any order (batches hold
     * them in schema order); null (the default) for all, none for row
     * counts only.  An index out of range fails the first {@link #next}
     * (or {@link #open}, with a {@link #schema}).
     */
    public Options columns(int... indices) {
      columns = indices == null ? null : indices.clone();
      return this;
    }

    /** How the inputs are framed (default {@link Framing#AUTO}). */
    public Options framing(Framing f) {
      framing = Objects.requireNonNull(f, "framing");
      return this;
    }

    /** A batch goes out once it holds this many rows (default 8192), or targetBytes. */
    public Options targetRows(long rows) {
      targetRows = positive(rows, "targetRows");
      return this;
    }

    /** A batch goes out once its buffers hold this many bytes (default 64 MiB), or targetRows. */
    public Options targetBytes(long bytes) {
      targetBytes = positive(bytes, "targetBytes");
      return this;
    }

    /** With a pool: about how many bytes of batches are built ahead (default 32 MiB). */
    public Options readaheadBytes(long bytes) {
      readaheadBytes = positive(bytes, "readaheadBytes");
      return this;
    }

    /**
     * The threads batches are built on, the caller's included: 0 (the
     * default) for xchg's process-wide pool, one per core; 1 for the
     * calling thread only; more for a pool of the reader's own, at most
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

    /** The task's kill check, asked as the class comment says; null (the default) for none. */
    public Options killCheck(BooleanSupplier check) {
      killCheck = check;
      return this;
    }

    private static long positive(long v, String what) {
      if (v <= 0) throw new IllegalArgumentException(what + " must be positive, not " + v);
      return v;
    }
  }

  /** Bytes an InputStream is read by (and a heap ByteBuffer, read-only or not, copied by) between kill checks. */
  static final int CHUNK = 64 * 1024;

  private final NativeHandle handle;
  private final Object calls = new Object(); // serialises the calls: the C reader is single-threaded
  private final BooleanSupplier killCheck;
  private final BooleanSupplier nativeKillCheck; // killCheck as next's C reader asks it: killed()
  private String cancelled; // once the kill check said true or threw: what every later call throws
  private boolean ended; // endInput was called: addInput is refused before it reads anything
  private byte[] chunk; // the InputStream chunk buffer, made at the first addInput(InputStream)
  private long inputs; // inputs added so far: the C reader's source index of the next one

  private XchgShuffleReader(long handle, BooleanSupplier killCheck) {
    this.handle = new NativeHandle("XchgShuffleReader", handle);
    this.killCheck = killCheck;
    this.nativeKillCheck = killCheck == null ? null : this::killed;
  }

  /** A reader of every column with the default options. */
  public static XchgShuffleReader open() {
    return open(new Options());
  }

  /**
   * A reader with options o, without input yet (xchg_shuffle_reader_open).
   *
   * @throws XchgException when the native reader cannot be made
   */
  public static XchgShuffleReader open(Options o) {
    long[] cols = null;
    if (o.columns != null) {
      cols = new long[o.columns.length];
      for (int i = 0; i < cols.length; i++) cols[i] = o.columns[i];
    }
    long h = nOpen(o.schema, cols, o.framing.id, o.targetRows, o.targetBytes, o.readaheadBytes, o.threads,
        o.validation.id, o.killCheck != null);
    return new XchgShuffleReader(h, o.killCheck);
  }

  /**
   * Adds the bytes of {@code in}, read to its end now (it is not closed),
   * as one input.  On an exception nothing of it is added: an input is
   * added whole or not at all, so that the reader goes on with the inputs
   * before it and takes more (the stream again, whole, say), and no block
   * is cut short.  So, unlike an {@link XchgInputStream}, which hands out
   * the bytes before its source's exception and then throws, the blocks
   * read whole before the stream threw are not handed out: what the
   * stream threw comes out as thrown (an engine's own exception stays
   * itself), with an {@link XchgException} (status IO) added to it as
   * suppressed, saying what was lost, e.g. "XchgShuffleReader.addInput:
   * the InputStream of source 2 threw after 70000 bytes: nothing of it was
   * added (its 70000 bytes read and the rest of it are lost; the reader
   * holds its first 2 inputs and takes more: add the stream again, whole,
   * to read it)".
   *
   * @throws IOException what reading {@code in} threw, or when its read
   *     returned 0 (or more bytes than asked for), which it must not (either
   *     with the suppressed XchgException above)
   * @throws XchgException CANCELLED when the kill check says so; INVALID_ARGUMENT after {@link #endInput}
   *     (before a byte of {@code in} is read)
   */
  public void addInput(InputStream in) throws IOException {
    Objects.requireNonNull(in, "in");
    long h = handle.enter();
    try {
      synchronized (calls) {
        checkInputOpen();
        if (chunk == null) chunk = new byte[CHUNK];
        boolean added = false;
        try {
          long read = 0; // bytes of in appended
          for (boolean end = false; !end; ) {
            askKillCheck();
            int n = 0;
            try {
              for (int got; n < CHUNK && !(end = (got = in.read(chunk, n, CHUNK - n)) < 0); n += got) {
                // 0 (or more than asked for) breaks read's contract: looping on it would spin forever.
                if (got == 0 || got > CHUNK - n)
                  throw new IOException("InputStream.read returned " + got + " for " + (CHUNK - n) + " bytes");
              }
            } catch (Exception e) { // the stream's own (an engine's, checked or not), rethrown as is
              e.addSuppressed(lostInput(read + n));
              throw e;
            }
            if (n > 0) nAppend(h, chunk, 0, n);
            read += n;
          }
          nCommit(h);
          inputs++;
          added = true;
        } finally {
          if (!added) nDiscard(h);
        }
      }
    } finally {
      handle.leave();
    }
  }

  /**
   * Adds the buffer's bytes from its position to its limit as one input
   * (its position is left as it is): a direct buffer read in place (see the
   * class comment for how long its bytes must stay as they are), a heap
   * one copied now into native memory, 64 KiB at a time straight from its
   * array (the kill check asked in between), read-only ones too (Spark's
   * {@code ManagedBuffer.nioByteBuffer()} may be one): the native code
   * reads the array Java hides in place, as {@link XchgCache#acquire} and
   * {@link XchgInputStream} do, so that no byte goes through the Java heap
   * and nothing is allocated there.
   *
   * @throws XchgException CANCELLED when the kill check says so; INVALID_ARGUMENT after {@link #endInput}
   */
  public void addInput(ByteBuffer buffer) {
    Objects.requireNonNull(buffer, "buffer");
    long h = handle.enter();
    try {
      synchronized (calls) {
        checkInputOpen();
        askKillCheck();
        if (buffer.isDirect()) {
          nAddDirect(h, buffer);
          inputs++;
          return;
        }
        boolean added = false;
        try {
          // A read-only heap buffer hides its array from Java, not from the native
          // side: it reads the array in place (the buffer's array offset added
          // there), one copy as a writable buffer's, not through a Java chunk.
          boolean hidden = !buffer.hasArray();
          int at = hidden ? buffer.position() : buffer.arrayOffset() + buffer.position();
          int end = at + buffer.remaining();
          nReserve(h, end - at); // one buffer of its size: no regrowth
          for (int n; at < end; at += n) {
            n = Math.min(CHUNK, end - at);
            if (hidden) {
              nAppendHidden(h, buffer, at, n);
            } else {
              nAppend(h, buffer.array(), at, n);
            }
            if (at + n < end) askKillCheck();
          }
          nCommit(h);
          inputs++;
          added = true;
        } finally {
          if (!added) nDiscard(h);
        }
      }
    } finally {
      handle.leave();
    }
  }

  /** What an InputStream that threw after {@code read} bytes lost: all of it (see addInput). */
  private XchgException lostInput(long read) {
    return new XchgException(XchgException.XCHG_EIO, "XchgShuffleReader.addInput: the InputStream of source "
        + inputs + " threw after " + read + " bytes: nothing of it was added (its " + read
        + " bytes read and the rest of it are lost; the reader holds its first " + inputs
        + " inputs and takes more: add the stream again, whole, to read it)", null);
  }

  /** Says that no input follows: rows waiting for the target go out as the last batch.  Idempotent. */
  public void endInput() {
    long h = handle.enter();
    try {
      synchronized (calls) {
        nEndInput(h);
        ended = true;
      }
    } finally {
      handle.leave();
    }
  }

  /**
   * Fills the ArrowSchema at schemaAddress, which must be empty (released),
   * with the schema of the batches (the selected columns, a fresh copy each
   * call).
   *
   * @return false, and the struct untouched, while the input so far holds no block (and
   *     the options gave no {@link Options#schema})
   * @throws XchgException when the input ended without any block and no schema was given, or
   *     the first block's schema is bad
   * @throws IllegalStateException when the struct still holds a schema
   */
  public boolean exportSchema(long schemaAddress) {
    checkAddress(schemaAddress);
    long h = handle.enter();
    try {
      synchronized (calls) {
        return nExportSchema(h, schemaAddress);
      }
    } finally {
      handle.leave();
    }
  }

  /** As {@link #exportSchema(long)}, into xchg's struct. */
  public boolean exportSchema(XchgArrowSchema schema) {
    return exportSchema(schema.memoryAddress());
  }

  /**
   * The next coalesced batch into the ArrowArray at arrayAddress, which must
   * be empty (released); see {@link Result}.
   *
   * @throws XchgException for bad input (naming the block) or when killed
   * @throws IllegalStateException when the struct still holds an array
   */
  public Result next(long arrayAddress) {
    checkAddress(arrayAddress);
    long h = handle.enter();
    try {
      synchronized (calls) {
        checkNotCancelled();
        askKillCheck();
        int r;
        try {
          r = nNext(h, arrayAddress, nativeKillCheck);
        } catch (XchgException e) {
          // The C reader's own CANCELLED ("cancelled before block N"): said again by every later call.
          if (e.isCancelled()) cancelled = e.getMessage();
          throw e;
        }
        return r == NEXT_BATCH ? Result.BATCH : r == NEXT_END ? Result.END : Result.NEED_INPUT;
      }
    } finally {
      handle.leave();
    }
  }

  /** As {@link #next(long)}, into xchg's struct. */
  public Result next(XchgArrowArray array) {
    return next(array.memoryAddress());
  }

  /** The reader's counters now. */
  public XchgShuffleReaderMetrics metrics() {
    long[] v = new long[XchgShuffleReaderMetrics.COUNT];
    long h = handle.enter();
    try {
      synchronized (calls) {
        nMetrics(h, v);
      }
    } finally {
      handle.leave();
    }
    return XchgShuffleReaderMetrics.of(v);
  }

  /**
   * Frees the reader and its inputs once no call runs (a direct buffer
   * stays reachable while a batch points into it).  Batches handed out
   * stay valid.  A second close does nothing.
   *
   * @throws IllegalStateException while a call runs
   */
  @Override
  public void close() {
    handle.close(XchgShuffleReader::nClose);
  }

  /**
   * Asks the kill check (under {@code calls}, also for the C reader inside
   * nNext): once it says true or throws, the reader is cancelled for good.
   */
  private boolean killed() {
    if (killCheck == null) return false;
    boolean killed;
    try {
      killed = killCheck.getAsBoolean();
    } catch (Throwable t) {
      cancelled = "XchgShuffleReader: the task's kill check threw " + t;
      throw t;
    }
    if (killed) cancelled = "XchgShuffleReader: the task's kill check says it is killed";
    return killed;
  }

  private void askKillCheck() {
    if (killed()) checkNotCancelled();
  }

  /** Throws CANCELLED, with the first cancellation's message, once the reader was cancelled. */
  private void checkNotCancelled() {
    if (cancelled != null) throw new XchgException(XchgException.XCHG_ECANCELLED, cancelled, null);
  }

  /** addInput may still add: not cancelled, and endInput not called (then nothing of its input is read). */
  private void checkInputOpen() {
    checkNotCancelled();
    if (ended)
      throw new XchgException(XchgException.XCHG_EINVAL, "addInput after endInput: the input has ended", null);
  }

  private static long checkAddress(long address) {
    if (address == 0) throw new IllegalArgumentException("null struct address");
    return address;
  }

  private static native long nOpen(byte[] schema, long[] columns, int framing, long targetRows, long targetBytes,
      long readaheadBytes, int threads, int validation, boolean killable);

  private static native void nClose(long reader);

  /** Room for length more bytes of the input being appended. */
  private static native void nReserve(long reader, int length);

  private static native void nAppend(long reader, byte[] chunk, int offset, int length);

  /** Appends a read-only heap buffer's bytes [position, position + length), read from its hidden array. */
  private static native void nAppendHidden(long reader, ByteBuffer buffer, int position, int length);

  private static native void nCommit(long reader);

  private static native void nDiscard(long reader);

  private static native void nAddDirect(long reader, ByteBuffer buffer);

  private static native void nEndInput(long reader);

  private static native boolean nExportSchema(long reader, long address);

  private static native int nNext(long reader, long address, BooleanSupplier killCheck);

  private static native void nMetrics(long reader, long[] out);

}
