package org.xchg;

/**
 * Loads the native library (libxchg_jni) and gives process-wide figures of
 * xchg's native memory, a way to give back what it keeps for reuse, and
 * the C Data Interface structs for callers without Arrow Java.
 *
 * <p>The library is loaded from the path in the system property
 * {@code xchg.jni.library} when it is set, otherwise by
 * {@code System.loadLibrary("xchg_jni")} (java.library.path).
 */
public final class Xchg {
  private Xchg() {}

  /** The most threads a reader's or decoder's pool may have (XCHG_POOL_MAX_THREADS). */
  public static final int MAX_THREADS = 4096;

  /** n as the threads option of a reader or decoder: 0 to {@link #MAX_THREADS}. */
  static int checkThreads(int n) {
    if (n < 0 || n > MAX_THREADS)
      throw new IllegalArgumentException("threads must be from 0 to " + MAX_THREADS + ", not " + n);
    return n;
  }

  static {
    String path = System.getProperty("xchg.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("xchg_jni");
    }
    checkVersion(Xchg.class.getPackage().getImplementationVersion(), version());
  }

  /**
   * Refuses a native library of another xchg than the jar (an older
   * libxchg_jni left on java.library.path): its calls would not be this
   * jar's. Classes run from a directory, with no jar version, are not checked.
   */
  static void checkVersion(String jar, String library) {
    if (jar != null && !jar.equals(library))
      throw new UnsatisfiedLinkError(
          "xchg.jar " + jar + " loaded libxchg_jni of xchg " + library
              + ": install the two from the same build");
  }

  /** The version of the native library loaded ("major.minor.patch", xchg_version_string). */
  public static native String version();

  /** Makes sure the native library is loaded (the static initialiser above). */
  static void ensureLoaded() {}

  /**
   * Bytes of native memory xchg holds for its buffers, process-wide
   * (xchg_buf_allocated_bytes): live buffers plus the blocks of released
   * ones it keeps for reuse (see {@link #bufferMetrics}, {@link #trimBuffers}).
   * Buffers are what grows with the data: decoded batches, copied inputs.
   * Not counted is the working memory of objects while they are open, which
   * their options bound and their close frees: an {@link XchgInputStream}'s
   * decompression window and input buffer (64 KiB each; for a block format
   * such as LZ4_JAVA, as large as its largest block), the codecs' own
   * contexts (allocated inside libzstd and liblz4, out of xchg's sight),
   * and each thread's cache of small blocks and buffer headers (at most
   * 256 KiB and 64 headers a thread, kept as malloc keeps its own).
   */
  public static native long allocatedBytes();

  /** Number of live xchg buffers, process-wide (xchg_buf_live_count). */
  public static native long liveBuffers();

  /** xchg's buffer figures now (xchg_buf_get_metrics). */
  public static XchgBufferMetrics bufferMetrics() {
    long[] v = new long[XchgBufferMetrics.COUNT];
    nBufferMetrics(v);
    return XchgBufferMetrics.of(v);
  }

  /**
   * Gives the blocks xchg keeps for reuse back to the system until at most
   * keepBytes of them remain (0: all); returns the bytes given back
   * (xchg_buf_trim).  Buffers in use are not affected.
   */
  public static long trimBuffers(long keepBytes) {
    if (keepBytes < 0) throw new IllegalArgumentException("keepBytes must not be negative, not " + keepBytes);
    return nTrimBuffers(keepBytes);
  }

  /** A zeroed {@code struct ArrowArray} in native memory; close it when done. */
  public static XchgArrowArray allocateArrowArray() {
    return new XchgArrowArray();
  }

  /** A zeroed {@code struct ArrowSchema} in native memory; close it when done. */
  public static XchgArrowSchema allocateArrowSchema() {
    return new XchgArrowSchema();
  }

  /** A zeroed {@code struct ArrowArrayStream} in native memory; close it when done. */
  public static XchgArrowArrayStream allocateArrowArrayStream() {
    return new XchgArrowArrayStream();
  }

  private static native void nBufferMetrics(long[] out);

  private static native long nTrimBuffers(long keepBytes);
}
