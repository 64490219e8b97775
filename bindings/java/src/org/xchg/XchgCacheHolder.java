package org.xchg;

/**
 * A task's hold on a decoded broadcast (xchg_cache_holder).  Its batches
 * come out through the Arrow C Data Interface, into structs whose addresses
 * the caller passes: Arrow Java's {@code ArrowArray.allocateNew(allocator)}
 * and {@code memoryAddress()}, then {@code Data.importVectorSchemaRoot}.
 * What is exported is the caller's own: it stays valid after
 * {@link #release} and after the cache is closed, and is freed by its
 * release callback (Arrow Java calls it when the imported vectors close).
 *
 * <p>Methods are thread-safe.  Using a released holder, or releasing it
 * twice, throws IllegalStateException.
 */
public final class XchgCacheHolder implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  private final XchgCache cache;
  private long handle;
  // Keeps the chunk buffers reachable (direct ones are read in place)
  // until the holder is released, as xchg_cache_acquire requires.
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

  /** Fills the ArrowSchema at address with the holder's schema, a "+s" of its columns. */
  public synchronized void exportSchema(long schemaAddress) {
    nExportSchema(live(), checkAddress(schemaAddress));
  }

  /** Fills the ArrowArray at address with batch i, a "+s" of the holder's columns. */
  public synchronized void exportBatch(long index, long arrayAddress) {
    nExportBatch(live(), index, checkAddress(arrayAddress));
  }

  /** Fills the ArrowArrayStream at address with every batch in order. */
  public synchronized void exportStream(long streamAddress) {
    nExportStream(live(), checkAddress(streamAddress));
  }

  /** Sum, null count and rows of column i of the holder over every batch (for tests). */
  public synchronized ColumnChecksum columnChecksum(int column) {
    long[] v = new long[3];
    nColumnChecksum(live(), column, v);
    return new ColumnChecksum(v[0], v[1], v[2]);
  }

  /**
   * Drops the hold.  Exported arrays stay valid.
   *
   * @throws IllegalStateException when already released
   */
  public void release() {
    if (!drop()) throw new IllegalStateException("XchgCacheHolder released twice");
  }

  /** Releases the holder unless it already is (for try-with-resources). */
  @Override
  public void close() {
    drop();
  }

  private boolean drop() {
    synchronized (this) {
      if (handle == 0) return false;
      long h = handle;
      handle = 0;
      chunks = null;
      nRelease(h);
    }
    cache.leave();
    return true;
  }

  public synchronized boolean isReleased() {
    return handle == 0;
  }

  private long live() {
    if (handle == 0) throw new IllegalStateException("XchgCacheHolder used after release");
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
