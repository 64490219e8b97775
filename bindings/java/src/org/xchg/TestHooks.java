package org.xchg;

/**
 * What the tests and the benchmark (package org.xchg) read from C Data
 * structs without Arrow Java; not part of the API.
 */
final class TestHooks {
  private TestHooks() {}

  static {
    Xchg.ensureLoaded();
  }

  /** The {@code length} of the ArrowArray at address; IllegalStateException when it is released. */
  static native long arrayLength(long address);

  /** The {@code offset} of child i of the ArrowArray at address; IllegalStateException when it is released. */
  static native long childOffset(long address, int child);

  /** True when the ArrowArray at address holds nothing (its release callback is NULL). */
  static native boolean arrayReleased(long address);

  /** The format string of child i of the ArrowSchema at address, or of the schema itself (-1). */
  static native String schemaFormat(long address, int child);

  /** The name of child i of the ArrowSchema at address (-1: the schema itself). */
  static native String schemaName(long address, int child);
}
