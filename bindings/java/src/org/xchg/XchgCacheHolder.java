package org.xchg;

/**
 * A task's hold on a decoded broadcast (xchg_cache_holder).  Its batches
 * come out through the Arrow C Data Interface, into structs the caller
 * passes: Arrow Java's {@code ArrowArray.allocateNew(allocator)} (by its
 * {@code memoryAddress()}), then {@code Data.importVectorSchemaRoot}, or
 * xchg's own {@link XchgArrowArray}.  What is exported is the caller's
 * own: it stays valid after {@link #close} and after the cache is closed,
 * and is freed by its release callback (Arrow Java calls it when the
 * imported vectors close).
 *
 * <p>Methods are thread-safe.  {@link #close} (xchg_cache_holder_release)
 * drops the hold; a second close does nothing, any other call on a closed
 * holder throws IllegalStateException.
 */
public final class XchgCacheHolder implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  private final XchgCache cache;
  private long handle;
  // Keeps the chunk buffers reachable (direct ones are read in place)
  // until the holder is closed, as xchg_cache_acquire requires.
  @SuppressWarnings("unused")
  private Chunks chunks;

  XchgCacheHolder(XchgCache cache, long handle, Chunks chunks) {
    this.cache = cache;
    this.handle = handle;
    this.chunks = chunks;
  }

  public synchronized long numBatches() {
    return nNumBatches(live());
  }

  public synchronized long numRows() {
    return nNumRows(live());
  }

  /**
   * Fills the ArrowSchema at address, which must be empty (released), with
   * the holder's schema, a "+s" of its columns.
   *
   * @throws IllegalStateException when the struct still holds a schema
   */
  public synchronized void exportSchema(long schemaAddress) {
    nExportSchema(live(), checkAddress(schemaAddress));
  }

  /** As {@link #exportSchema(long)}, into xchg's struct. */
  public void exportSchema(XchgArrowSchema schema) {
    exportSchema(schema.memoryAddress());
  }

  /**
   * Fills the ArrowArray at address, which must be empty (released), with
   * batch i, a "+s" of the holder's columns.
   *
   * @throws IndexOutOfBoundsException when i is not in [0, {@link #numBatches})
   * @throws IllegalStateException when the struct still holds an array
   */
  public synchronized void exportBatch(long index, long arrayAddress) {
    nExportBatch(live(), index, checkAddress(arrayAddress));
  }

  /** As {@link #exportBatch(long, long)}, into xchg's struct. */
  public void exportBatch(long index, XchgArrowArray array) {
    exportBatch(index, array.memoryAddress());
  }

  /**
   * Fills the ArrowArrayStream at address, which must be empty (released),
   * with every batch in order.
   *
   * @throws IllegalStateException when the struct still holds a stream
   */
  public synchronized void exportStream(long streamAddress) {
    nExportStream(live(), checkAddress(streamAddress));
  }

  /** As {@link #exportStream(long)}, into xchg's struct. */
  public void exportStream(XchgArrowArrayStream stream) {
    exportStream(stream.memoryAddress());
  }

  /** Sum, null count and rows of column i of the holder over every batch (tests). */
  synchronized ColumnChecksum columnChecksum(int column) {
    long[] v = new long[3];
    nColumnChecksum(live(), column, v);
    return new ColumnChecksum(v[0], v[1], v[2]);
  }

  /** Drops the hold (xchg_cache_holder_release).  Exported arrays stay valid. */
  @Override
  public void close() {
    synchronized (this) {
      if (handle == 0) return;
      long h = handle;
      handle = 0;
      chunks = null;
      nRelease(h);
    }
    cache.leave();
  }

  public synchronized boolean isClosed() {
    return handle == 0;
  }

  private long live() {
    if (handle == 0) throw new IllegalStateException("XchgCacheHolder used after close");
    return handle;
  }

  private static long checkAddress(long address) {
    if (address == 0) throw new IllegalArgumentException("null struct address");
    return address;
  }

  private static native long nNumBatches(long holder);

  private static native long nNumRows(long holder);

  private static native void nExportSchema(long holder, long address);

  private static native void nExportBatch(long holder, long index, long address);

  private static native void nExportStream(long holder, long address);

  private static native void nColumnChecksum(long holder, int column, long[] out);

  private static native void nRelease(long holder);
}
