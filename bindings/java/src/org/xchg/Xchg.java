package org.xchg;

/**
 * Loads the native library (libxchg_jni) and exposes process-wide figures
 * of xchg's native memory, plus small helpers for callers that hold Arrow C
 * Data Interface structs without Arrow Java.
 *
 * <p>The library is loaded from the path in the system property
 * {@code xchg.jni.library} when it is set, otherwise by
 * {@code System.loadLibrary("xchg_jni")} (java.library.path).
 */
public final class Xchg {
  private Xchg() {}

  static {
    String path = System.getProperty("xchg.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("xchg_jni");
    }
  }

  /** Makes sure the native library is loaded (the static initialiser above). */
  static void ensureLoaded() {}

  /** Bytes held in buffers xchg allocated, process-wide (xchg_buf_allocated_bytes). */
  public static native long allocatedBytes();

  /** Number of live xchg buffers, process-wide (xchg_buf_live_count). */
  public static native long liveBuffers();

  /**
   * A zeroed {@code struct ArrowArray} in native memory (for callers without
   * Arrow Java's {@code ArrowArray.allocateNew}); free it with
   * {@link #freeArrowArray}.
   */
  public static native long allocateArrowArray();

  /** Releases the array the struct holds (if any) and frees the struct. */
  public static native void freeArrowArray(long address);

  /** Releases the array the struct holds (if any), keeping the struct for reuse. */
  public static native void releaseArrowArray(long address);

  /** The {@code length} field of the ArrowArray at address. */
  public static native long arrowArrayLength(long address);

  /** A zeroed {@code struct ArrowSchema}; free it with {@link #freeArrowSchema}. */
  public static native long allocateArrowSchema();

  /** Releases the schema the struct holds (if any) and frees the struct. */
  public static native void freeArrowSchema(long address);

  /**
   * The format string of child i of the ArrowSchema at address, or of the
   * schema itself when i is -1.
   */
  public static native String arrowSchemaFormat(long address, int child);

  /** The name of child i of the ArrowSchema at address (-1: the schema itself). */
  public static native String arrowSchemaName(long address, int child);
}
