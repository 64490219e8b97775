package org.xchg;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Reads the buffers of an exported batch of shape {@code cache} in place,
 * the way Arrow Java's C Data import reaches them: the ArrowArray structs'
 * fields read in place (Arrow's MemoryUtil reads them with Unsafe; here
 * through views of the structs), each buffer wrapped as a direct ByteBuffer
 * by DirectByteBuffer's own constructor (as ArrowBuf.nioBuffer does), with
 * no JNI call.  It needs
 * {@code --add-opens java.base/java.nio=ALL-UNNAMED}, as Arrow Java does on
 * JDK 17.  (A JNI call per column making the views with NewDirectByteBuffer
 * cost 0.2-0.6 µs a column: a consumer's cost no consumer of the export
 * pays, which the benchmark charged to xchg.)  The sums of every read are
 * checked against the generator's, so a wrong layout here fails the
 * benchmark.
 */
final class ExportViews {
  private ExportViews() {}

  private static final MethodHandle WRAP;

  static {
    try {
      Constructor<?> c = Class.forName("java.nio.DirectByteBuffer").getDeclaredConstructor(long.class, int.class);
      c.setAccessible(true);
      WRAP = MethodHandles.lookup().unreflectConstructor(c)
          .asType(MethodType.methodType(ByteBuffer.class, long.class, int.class));
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("ExportViews needs --add-opens java.base/java.nio=ALL-UNNAMED", e);
    }
  }

  // struct ArrowArray: int64 length, null_count, offset, n_buffers, n_children;
  // const void **buffers; struct ArrowArray **children; ... (80 bytes)
  private static final int LENGTH = 0, OFFSET = 16, BUFFERS = 40, CHILDREN = 48, STRUCT = 80;

  /** The batch's row count. */
  static int rows(long batch) {
    return (int) wrap(batch, STRUCT).getLong(LENGTH);
  }

  /**
   * Views of the buffers of the batch's columns (child j is column
   * cols[j]) into all, in the layout Checksum.addBatch takes: per column
   * its validity (null when absent), values or offsets, and for c3 its
   * string data.
   */
  static ByteBuffer[] of(long batch, int[] cols, int[] bufferCounts, ByteBuffer[] all) {
    ByteBuffer children = wrap(wrap(batch, STRUCT).getLong(CHILDREN), 8L * cols.length);
    int at = 0;
    for (int j = 0; j < cols.length; j++) {
      ByteBuffer child = wrap(children.getLong(8 * j), STRUCT);
      long end = child.getLong(OFFSET) + child.getLong(LENGTH);
      int c = cols[j];
      ByteBuffer buffers = wrap(child.getLong(BUFFERS), 8L * bufferCounts[c]);
      long validity = buffers.getLong(0), values = buffers.getLong(8);
      all[at] = validity == 0 ? null : wrap(validity, (end + 7) / 8);
      if (c == 3) { // utf8: int32 offsets, then the bytes up to the last one
        all[at + 1] = wrap(values, 4 * (end + 1));
        all[at + 2] = wrap(buffers.getLong(16), all[at + 1].getInt((int) (4 * end)));
      } else {
        all[at + 1] = wrap(values, c == 5 ? (end + 7) / 8 : (c == 1 ? 4 : 8) * end);
      }
      at += bufferCounts[c];
    }
    return all;
  }

  private static ByteBuffer wrap(long address, long size) {
    try {
      return ((ByteBuffer) WRAP.invokeExact(address, (int) size)).order(ByteOrder.LITTLE_ENDIAN);
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }
}
