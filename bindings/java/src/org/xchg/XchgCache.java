package org.xchg;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * A shared decoded cache (xchg/cache.h): each broadcast, named by a key, is
 * decoded once per process however many tasks acquire it; every task gets
 * its own Arrow arrays over the one decoded copy.
 *
 * <pre>
 *   XchgCache cache = XchgCache.create(new XchgCache.Options());  // one per executor
 *   // in each task:
 *   try (XchgCacheHolder h = cache.acquire("broadcast_7", chunks, StreamCodec.LZ4_JAVA,
 *                                          () -&gt; context.isInterrupted())) {
 *     for (long i = 0; i &lt; h.numBatches(); i++) {
 *       try (ArrowArray array = ArrowArray.allocateNew(allocator)) {  // the caller's to close
 *         h.exportBatch(i, array.memoryAddress());  // then Data.importVectorSchemaRoot(...)
 *       }
 *     }
 *   }
 * </pre>
 *
 * All methods are thread-safe.  {@link #close} refuses (IllegalStateException)
 * while holders are held or acquisitions are running; arrays exported from
 * holders stay valid after close.
 */
public final class XchgCache implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  /** The options of xchg_cache_options. */
  public static final class Options {
    boolean sharing = true;
    Duration waitCheck = Duration.ofMillis(100);
    long retainBytes = 0;
    Duration retainTime = Duration.ZERO;
    XchgValidation validation = XchgValidation.FULL;
    Path hostDir = null;
    long hostRetainBytes = 0;
    Duration hostRetainTime = Duration.ZERO;

    /** False: every acquirer decodes its own copy (same results, same API). */
    public Options sharing(boolean on) {
      sharing = on;
      return this;
    }

    /** How often a waiting acquirer asks its kill check (default 100 ms; at least 1 ms). */
    public Options waitCheck(Duration interval) {
      if (Objects.requireNonNull(interval, "interval").compareTo(Duration.ofMillis(1)) < 0)
        throw new IllegalArgumentException("waitCheck must be at least 1 ms, not " + interval);
      waitCheck = fitsMillis(interval, "waitCheck");
      return this;
    }

    /** Keep unreferenced entries up to this many bytes (default 0: none). */
    public Options retainBytes(long bytes) {
      retainBytes = notNegative(bytes, "retainBytes");
      return this;
    }

    /**
     * Free a retained entry this long after its last release (default zero:
     * no limit; a time under 1 ms counts as 1 ms).
     */
    public Options retainTime(Duration time) {
      retainTime = notNegative(time, "retainTime");
      return this;
    }

    /**
     * {@link XchgValidation#BOUNDS}: broadcasts the engine wrote itself,
     * the O(n) checks of values skipped (default {@link XchgValidation#FULL}).
     */
    public Options validation(XchgValidation level) {
      validation = Objects.requireNonNull(level, "level");
      return this;
    }

    /**
     * The host store: a directory (e.g. on /dev/shm) shared by the executors
     * of this user on the machine, so that one of them decodes a broadcast
     * and the others map that copy (xchg/cache.h, "Host store").  It must be
     * owned by the user and not group/world-writable (created 0700 when
     * missing); any failure of the store falls back to a decode in this
     * process.  Null (default): none.
     */
    public Options hostDir(Path dir) {
      hostDir = dir;
      return this;
    }

    /** Host-wide budget on the segments' bytes, all processes (default 0). */
    public Options hostRetainBytes(long bytes) {
      hostRetainBytes = notNegative(bytes, "hostRetainBytes");
      return this;
    }

    /**
     * Remove an unheld segment this long after its last release (default
     * zero: no limit; a time under 1 ms counts as 1 ms).
     */
    public Options hostRetainTime(Duration time) {
      hostRetainTime = notNegative(time, "hostRetainTime");
      return this;
    }

    // Checked here, where the caller sees which option was wrong (create's check names none).
    private static long notNegative(long v, String what) {
      if (v < 0) throw new IllegalArgumentException(what + " must not be negative, not " + v);
      return v;
    }

    private static Duration notNegative(Duration d, String what) {
      if (Objects.requireNonNull(d, "time").isNegative())
        throw new IllegalArgumentException(what + " must not be negative, not " + d);
      return fitsMillis(d, what);
    }

    /** The native options count time in milliseconds, in a long. */
    private static Duration fitsMillis(Duration d, String what) {
      if (d.compareTo(Duration.ofMillis(Long.MAX_VALUE)) > 0)
        throw new IllegalArgumentException(what + " must be at most Long.MAX_VALUE ms, not " + d);
      return d;
    }
  }

  private long handle;
  private int users; // holders held plus acquisitions running

  private XchgCache(long handle) {
    this.handle = handle;
  }

  /** A cache with the default options (xchg_cache_create). */
  public static XchgCache create() {
    return create(new Options());
  }

  /**
   * A cache with options o (xchg_cache_create).
   *
   * A {@link Options#hostDir} that cannot be used (refused for its owner or
   * rights, not made) is no error: the cache decodes in this process, and
   * counts each such acquisition in {@link XchgCacheMetrics#hostFallbacks}.
   *
   * @throws XchgException when the native cache cannot be made (out of memory)
   */
  public static XchgCache create(Options o) {
    long h = nCreate(o.sharing, o.waitCheck.toMillis(), o.retainBytes, millisUp(o.retainTime),
        o.validation.id, o.hostDir == null ? null : pathBytes(o.hostDir), o.hostRetainBytes,
        millisUp(o.hostRetainTime));
    return new XchgCache(h);
  }

  /**
   * A retain time in the native options' milliseconds, a part of one
   * rounded up: 0 there is no limit, which a time under 1 ms is not.
   */
  private static long millisUp(Duration d) {
    long ms = d.toMillis();
    return d.equals(Duration.ofMillis(ms)) ? ms : ms + 1;
  }

  /**
   * The bytes of path as the JDK's file APIs name it to the system (in
   * sun.jnu.encoding), not JNI's modified UTF-8, which names a character
   * outside the BMP (an emoji, say) by its two surrogates: the directory
   * would be made under another name than the Path's.
   */
  private static byte[] pathBytes(Path path) {
    Charset cs;
    try {
      cs = Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
    } catch (IllegalArgumentException e) {
      cs = Charset.defaultCharset();
    }
    return path.toString().getBytes(cs);
  }

  /**
   * A key's UTF-8 bytes, the names C callers give a broadcast in the host
   * store (JNI's modified UTF-8 would name a character outside the BMP by
   * its two surrogates, so that a C process looking the key up would miss
   * it).  A NUL, which a C key cannot hold, and a lone surrogate, which
   * UTF-8 cannot encode, are refused rather than the key changed into
   * another's.
   */
  private static byte[] keyBytes(String key) {
    if (key.indexOf('\0') >= 0)
      throw new IllegalArgumentException("cache key holds a NUL character, which a key cannot");
    try {
      ByteBuffer b = StandardCharsets.UTF_8.newEncoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .encode(CharBuffer.wrap(key));
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      return bytes;
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("cache key is not valid Unicode (a lone surrogate)", e);
    }
  }

  /**
   * Acquires broadcast {@code key} made of one IPC stream, whose bytes are
   * the concatenation of {@code chunks} (heap or direct; from each buffer's
   * position to its limit) wrapped in {@code codec}.  Decodes it unless
   * another acquirer has or is doing so, in which case it waits, asking
   * {@code killCheck} (may be null) every waitCheck interval; killCheck is asked
   * while decoding too.  The chunks must not change until the holder is
   * released.  One stream: bytes after its end-of-stream marker (a second
   * stream concatenated) are an XchgException (FORMAT) naming the part and
   * the byte; give each stream a part of its own (the overload below).
   *
   * <p>The chunks are read only by a decode, in place (heap ones 64 KiB at
   * a time, read-only heap ones too): an acquire that finds what it asks
   * for decoded reads none of them, and no chunk is ever copied whole onto
   * the Java heap.
   *
   * <p>Chunks that hold no byte at all (none, or only empty ones) are an
   * empty broadcast, as no parts are (see {@link #acquire(String,
   * ByteBuffer[][], StreamCodec, int[], BooleanSupplier)}): no batches, no
   * rows, no columns.
   *
   * @throws XchgException with xchg's message; status CANCELLED when killed
   * @throws IllegalArgumentException for a key holding a NUL or a lone
   *     surrogate (the host store names a key by its UTF-8 bytes, as C does)
   * @throws RuntimeException whatever killCheck threw, as thrown
   */
  public XchgCacheHolder acquire(
      String key, ByteBuffer[] chunks, StreamCodec codec, BooleanSupplier killCheck) {
    return acquire(key, new ByteBuffer[][] {chunks}, codec, null, killCheck);
  }

  /**
   * Acquires broadcast {@code key} made of several IPC streams ("parts", one
   * chunk array each, equal schemas) and reads only {@code columns} (top-level
   * indices; the holder's batches hold them in the order given, repeats
   * included: {@code {2, 0, 2}} gives columns 2, 0 and 2 again, where
   * {@link XchgBatchDecoder} and {@link XchgShuffleReader} keep schema
   * order; null for all).
   *
   * <p>A broadcast of no bytes, however it comes (no parts; parts without
   * chunks; chunks that are all empty, as an empty file's mapped buffer
   * is), is one and the same empty broadcast: no batches, no rows, and a
   * schema of no columns (so that asking for a column is an {@link
   * XchgException} with status INVALID_ARGUMENT, "column 0 of 0"), as an
   * engine that broadcasts an empty relation as no buffers expects.  A
   * part without bytes among parts with bytes is not an IPC stream: a
   * FORMAT error naming the part, as for any other part that is not one.
   */
  public XchgCacheHolder acquire(
      String key, ByteBuffer[][] parts, StreamCodec codec, int[] columns, BooleanSupplier killCheck) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(codec, "codec");
    byte[] keyBytes = keyBytes(key);
    Chunks c = Chunks.of(parts);
    // No bytes is no parts (xchg's empty broadcast), not parts that are
    // empty IPC streams, which one part with no bytes would be.
    if (c.holdNoBytes()) c = Chunks.of(new ByteBuffer[0][]);
    long[] cols = null;
    if (columns != null) {
      cols = new long[columns.length];
      for (int i = 0; i < columns.length; i++) cols[i] = columns[i];
    }
    long cache = enter();
    long h = 0;
    try {
      h = nAcquire(cache, keyBytes, c.buffers, c.heap, c.offsets, c.lengths, c.partStarts, codec.id,
          cols, killCheck);
      return new XchgCacheHolder(this, h, c);
    } finally {
      if (h == 0) leave();
    }
  }

  /** The cache's counters now. */
  public XchgCacheMetrics metrics() {
    long[] v = new long[XchgCacheMetrics.COUNT];
    synchronized (this) {
      nMetrics(live(), v);
    }
    return XchgCacheMetrics.of(v);
  }

  /** Frees retained entries past their retain time now (xchg_cache_trim). */
  public synchronized void trim() {
    nTrim(live());
  }

  /**
   * Frees the cache.  Closing a closed cache does nothing.
   *
   * @throws IllegalStateException while holders are held or acquisitions run
   */
  @Override
  public synchronized void close() {
    if (handle == 0) return;
    if (users > 0) {
      throw new IllegalStateException(
          "XchgCache.close: " + users + " holder(s) still held or acquiring; close them first");
    }
    nDestroy(handle);
    handle = 0;
  }

  private long live() {
    if (handle == 0) throw new IllegalStateException("XchgCache used after close");
    return handle;
  }

  private synchronized long enter() {
    long h = live();
    users++;
    return h;
  }

  /** A holder was released, or an acquisition failed. */
  synchronized void leave() {
    users--;
  }

  private static native long nCreate(boolean sharing, long waitCheckMs, long retainBytes,
      long retainMs, int validation, byte[] hostDir, long hostRetainBytes, long hostRetainMs);

  private static native void nDestroy(long cache);

  private static native void nMetrics(long cache, long[] out);

  private static native void nTrim(long cache);

  private static native long nAcquire(long cache, byte[] key, ByteBuffer[] buffers, byte[][] heap,
      int[] offsets, int[] lengths, int[] partStarts, int codec, long[] columns,
      BooleanSupplier killCheck);
}
