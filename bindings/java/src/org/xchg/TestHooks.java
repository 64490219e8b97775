package org.xchg;

import java.nio.ByteBuffer;

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

  /**
   * Sum, null count and rows of column i of the batch at arrayAddress (a
   * "+s" of the selected columns, exported by any reader), as the schema
   * at schemaAddress (that reader's {@code exportSchema}) describes it;
   * touches every value.
   */
  static ColumnChecksum columnChecksum(long schemaAddress, long arrayAddress, int column) {
    long[] v = new long[3];
    nColumnChecksum(schemaAddress, arrayAddress, column, v);
    return new ColumnChecksum(v[0], v[1], v[2]);
  }

  private static native void nColumnChecksum(long schema, long array, int column, long[] out);

  /**
   * Sets views[0..2] to direct ByteBuffers (big-endian, as JNI makes them)
   * over the buffers of column {@code column} of that batch (validity,
   * values or offsets, string data; null for an absent one), so that Java
   * code reads the values in place, as a consumer of the export does;
   * valid until the array is released.  For the column types {@link
   * #columnChecksum} sums.
   */
  static void columnBuffers(long schemaAddress, long arrayAddress, int column, ByteBuffer[] views) {
    if (views.length < 3) throw new IllegalArgumentException("views needs 3 entries");
    nColumnBuffers(schemaAddress, arrayAddress, column, views);
  }

  private static native void nColumnBuffers(long schema, long array, int column, ByteBuffer[] views);
}
