package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.expectThrows;
import static org.xchg.TestSupport.scenario;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * XchgBatchReader on the cache shape, as `xchg gen cache --sums` writes it
 * (a generator that shares no code with the reader, and prints the sums
 * each column must have): payloads cut out of the stream by IpcMessages (a
 * flatbuffer reader of its own), decoded from heap arrays and direct
 * buffers, whole and projected, one at a time and many at once; the heap
 * copy counter against the byte ranges IpcMessages finds; bad payloads.
 */
public final class XchgBatchReaderTest {
  private XchgBatchReaderTest() {}

  static final int COLUMNS = 6;
  static final int BATCH_ROWS = 10_000;
  static final long ROWS = 3 * BATCH_ROWS + 123; // a short last batch

  static CacheShape.Data gen(String codec) throws Exception {
    return CacheShape.gen(null, codec, ROWS);
  }

  static ByteBuffer direct(byte[] bytes) {
    ByteBuffer b = ByteBuffer.allocateDirect(bytes.length + 16);
    b.position(16); // a position that is not 0 must be honoured
    b.put(bytes);
    b.position(16);
    return b;
  }

  /** Adds the checksums of the decoded batch at address to sums/nulls/rows. */
  static void add(XchgBatchReader r, long address, int[] columns, long[][] acc) {
    for (int k = 0; k < columns.length; k++) {
      ColumnChecksum c = r.columnChecksum(address, k);
      acc[0][columns[k]] += c.sum();
      acc[1][columns[k]] += c.nulls();
      acc[2][columns[k]] += c.rows();
    }
  }

  static void checkSums(CacheShape.Data c, int[] columns, long[][] acc, String what) {
    for (int col : columns) {
      check(acc[0][col] == c.sums()[col], what + ": c" + col + " sum " + Long.toUnsignedString(acc[0][col])
          + ", want " + Long.toUnsignedString(c.sums()[col]));
      checkEq(c.nulls()[col], acc[1][col], what + ": c" + col + " nulls");
      checkEq(ROWS, acc[2][col], what + ": c" + col + " rows");
    }
  }

  static final int[] ALL = {0, 1, 2, 3, 4, 5};
  static final int[] NARROW = {4};

  /** One payload per call, from the heap and from direct buffers. */
  static void oneByOne(CacheShape.Data c, int[] columns, String what) {
    try (XchgBatchReader r = XchgBatchReader.open(c.schema(), columns, 0)) {
      long a = Xchg.allocateArrowArray();
      long[][] heap = new long[3][COLUMNS], dir = new long[3][COLUMNS];
      try {
        for (int i = 0; i < c.payloads().size(); i++) {
          byte[] p = c.payloads().get(i);
          byte[] padded = new byte[p.length + 9];
          System.arraycopy(p, 0, padded, 5, p.length);
          long rows = r.decode(padded, 5, p.length, i, a);
          checkEq(i < 3 ? BATCH_ROWS : 123, rows, what + " heap rows of batch " + i);
          add(r, a, columns, heap);
          Xchg.freeArrowArray(a);
          a = Xchg.allocateArrowArray();
          r.decode(direct(p), i, a);
          add(r, a, columns, dir);
          Xchg.freeArrowArray(a);
          a = Xchg.allocateArrowArray();
        }
      } finally {
        Xchg.freeArrowArray(a);
      }
      checkSums(c, columns, heap, what + " heap");
      checkSums(c, columns, dir, what + " direct");
    }
  }

  /** Every payload in one call, on a pool of 4 threads. */
  static void many(CacheShape.Data c, int[] columns, String what) {
    int n = c.payloads().size();
    byte[][] heap = c.payloads().toArray(new byte[0][]);
    ByteBuffer[] dir = new ByteBuffer[n];
    for (int i = 0; i < n; i++) dir[i] = direct(heap[i]);
    try (XchgBatchReader r = XchgBatchReader.open(c.schema(), columns, 4)) {
      for (int source = 0; source < 2; source++) {
        long[] addresses = new long[n];
        for (int i = 0; i < n; i++) addresses[i] = Xchg.allocateArrowArray();
        long[][] acc = new long[3][COLUMNS];
        if (source == 0) r.decodeMany(heap, 0, addresses);
        else r.decodeMany(dir, 0, addresses);
        for (long a : addresses) {
          add(r, a, columns, acc);
          Xchg.freeArrowArray(a);
        }
        checkSums(c, columns, acc, what + (source == 0 ? " many heap" : " many direct"));
      }
    }
  }

  /**
   * columnBuffers: Java code summing the views in place (the benchmark's
   * Checksum) finds the generator's sums, and each view is exactly as long
   * as its buffer's Arrow length.
   */
  static void views(CacheShape.Data c, String what) {
    int[] counts = IpcMessages.bufferCounts(c.schema());
    XchgCachedBench.Checksum sums = new XchgCachedBench.Checksum(counts, ALL);
    try (XchgBatchReader r = XchgBatchReader.open(c.schema(), ALL, 1)) {
      ByteBuffer[] v = new ByteBuffer[3];
      for (int i = 0; i < c.payloads().size(); i++) {
        long a = Xchg.allocateArrowArray();
        byte[] p = c.payloads().get(i);
        int rows = (int) r.decode(p, 0, p.length, i, a);
        for (int k = 0; k < COLUMNS; k++) {
          r.columnBuffers(a, k, v);
          for (ByteBuffer b : v) if (b != null) b.order(ByteOrder.LITTLE_ENDIAN);
          sums.addColumn(k, rows, v[0], v[1], v[2]);
          int width = k == 1 ? 4 : k == 3 ? 4 : 8;
          checkEq(k == 5 ? (rows + 7) / 8 : (long) (k == 3 ? rows + 1 : rows) * width, v[1].capacity(),
              what + " batch " + i + " c" + k + " values view");
          if (k == 3) checkEq(v[1].getInt(4 * rows), v[2].capacity(), what + " c3 data view");
          if (v[0] != null) checkEq((rows + 7) / 8, v[0].capacity(), what + " c" + k + " validity view");
        }
        if (i == 0) {
          long at = a;
          XchgException e = expectThrows(XchgException.class, "view of column 6",
              () -> r.columnBuffers(at, 6, v));
          check(e.getMessage().contains("column 6 out of range"), "column 6: " + e.getMessage());
          expectThrows(IllegalArgumentException.class, "2 views", () -> r.columnBuffers(at, 0, new ByteBuffer[2]));
        }
        Xchg.freeArrowArray(a);
      }
    }
    long[][] acc = new long[3][COLUMNS];
    sums.addTo(acc);
    for (int k = 0; k < COLUMNS; k++) {
      check(acc[0][k] == c.sums()[k], what + ": c" + k + " sum over the views");
      checkEq(c.nulls()[k], acc[1][k], what + ": c" + k + " nulls over the views");
    }
  }

  /** Heap bytes copied: exactly the selected buffers' ranges (none with no column). */
  static void copyCounter(CacheShape.Data c, int[] columns, String what) {
    int[] counts = IpcMessages.bufferCounts(c.schema());
    try (XchgBatchReader r = XchgBatchReader.open(c.schema(), columns, 1)) {
      long selected = 0, metadata = 0;
      long a = Xchg.allocateArrowArray();
      for (int i = 0; i < c.payloads().size(); i++) {
        byte[] p = c.payloads().get(i);
        IpcMessages.Layout l =
            IpcMessages.layout(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0, counts, columns);
        selected += l.selectedBytes();
        metadata += l.bodyStart();
        checkEq(l.rows(), r.decode(p, 0, p.length, i, a), what + " rows of batch " + i);
        Xchg.freeArrowArray(a);
        a = Xchg.allocateArrowArray();
      }
      Xchg.freeArrowArray(a);
      checkEq(selected, r.heapBytesCopied(), what + ": heap bytes copied");
      checkEq(metadata, r.metadataBytesCopied(), what + ": metadata bytes copied");
      if (columns.length == 0) checkEq(0, r.heapBytesCopied(), what + ": no body read");
    }
  }

  /**
   * From a direct buffer, uncompressed values are exported in place (no
   * buffer of their size is allocated), and the buffer stays reachable
   * until the array is released.
   */
  static void zeroCopy(CacheShape.Data none) {
    try (XchgBatchReader r = XchgBatchReader.open(none.schema(), NARROW, 1)) {
      long a = Xchg.allocateArrowArray();
      long before = Xchg.allocatedBytes();
      r.decode(direct(none.payloads().get(0)), 0, a); // the only reference is the array's
      long grew = Xchg.allocatedBytes() - before;
      check(grew < 8 * BATCH_ROWS, "direct, uncompressed: " + grew + " bytes allocated (copied?)");
      for (int i = 0; i < 3; i++) {
        System.gc();
        byte[] litter = new byte[1 << 20];
        litter[i] = 1;
      }
      long[][] acc = new long[3][COLUMNS];
      add(r, a, NARROW, acc);
      checkEq(BATCH_ROWS, acc[2][4], "rows after GC");
      Xchg.freeArrowArray(a);
      long b = Xchg.allocateArrowArray();
      before = Xchg.allocatedBytes();
      byte[] p = none.payloads().get(0);
      r.decode(p, 0, p.length, 0, b);
      check(Xchg.allocatedBytes() - before >= 8 * BATCH_ROWS, "heap payload not copied?");
      Xchg.freeArrowArray(b);
    }
  }

  static void wholeStream(CacheShape.Data c) {
    try (XchgBatchReader r = XchgBatchReader.open(c.schema(), ALL, 0)) {
      long a = Xchg.allocateArrowArray();
      checkEq(ROWS, r.decode(c.stream(), 0, c.stream().length, 0, a), "stream payload rows");
      long[][] acc = new long[3][COLUMNS];
      add(r, a, ALL, acc);
      checkSums(c, ALL, acc, "stream payload");
      Xchg.freeArrowArray(a);
    }
  }

  static XchgException decodeFails(XchgBatchReader r, byte[] p, int length, long batch) {
    long a = Xchg.allocateArrowArray();
    try {
      return expectThrows(XchgException.class, "batch " + batch, () -> r.decode(p, 0, length, batch, a));
    } finally {
      Xchg.freeArrowArray(a);
    }
  }

  static void badInput(CacheShape.Data zstd, byte[] other) {
    try (XchgBatchReader r = XchgBatchReader.open(zstd.schema(), ALL, 0)) {
      byte[] p = zstd.payloads().get(1);
      for (int cut = 0; cut < p.length; cut += 1 + cut / 8) {
        XchgException e = decodeFails(r, p, cut, 7);
        if (e != null) check(e.getMessage().contains("batch 7: "), "cut at " + cut + ": " + e.getMessage());
      }
      // Damage c0's compressed values (sequential ids: they compress): the codec refuses them.
      IpcMessages.Layout l = IpcMessages.layout(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0,
          IpcMessages.bufferCounts(zstd.schema()), new int[] {0});
      byte[] bad = p.clone();
      int values = (int) (l.bodyStart() + l.offsets()[0]);
      for (int i = values + 12; i < values + 40; i++) bad[i] ^= 0x5a;
      XchgException e = decodeFails(r, bad, bad.length, 8);
      if (e != null)
        check(e.getMessage().contains("batch 8: ") && e.getMessage().contains("field 'c0'")
                && e.getMessage().contains("buffer "),
            "damaged body: " + e.getMessage());
      // A stream of another schema.
      e = decodeFails(r, other, other.length, 9);
      if (e != null)
        check(e.status() == XchgException.Status.FORMAT && e.getMessage().contains("schema"),
            "other schema: " + e.getMessage());
      // decodeMany: nothing exported, the failing batch named.
      long[] addresses = {Xchg.allocateArrowArray(), Xchg.allocateArrowArray()};
      XchgException m =
          expectThrows(XchgException.class, "many", () -> r.decodeMany(new byte[][] {p, bad}, 20, addresses));
      if (m != null) check(m.getMessage().contains("batch 21: "), "many: " + m.getMessage());
      for (long a : addresses) {
        expectThrows(IllegalStateException.class, "not exported", () -> Xchg.arrowArrayLength(a));
        Xchg.freeArrowArray(a);
      }
      long a = Xchg.allocateArrowArray();
      expectThrows(IndexOutOfBoundsException.class, "range", () -> r.decode(p, 4, p.length, 0, a));
      expectThrows(IllegalArgumentException.class, "heap ByteBuffer",
          () -> r.decode(ByteBuffer.wrap(p), 0, a));
      Xchg.freeArrowArray(a);
    }
    XchgException e = expectThrows(XchgException.class, "column 6",
        () -> XchgBatchReader.open(zstd.schema(), new int[] {1, 6}, 0));
    if (e != null)
      check(e.status() == XchgException.Status.INVALID_ARGUMENT && e.getMessage().contains("column index 6"),
          "column 6: " + e.getMessage());
    expectThrows(XchgException.class, "no schema",
        () -> XchgBatchReader.open(zstd.payloads().get(0), null, 0));
    XchgBatchReader closed = XchgBatchReader.open(zstd.schema(), null, 1);
    closed.close();
    closed.close();
    expectThrows(IllegalStateException.class, "closed",
        () -> closed.decode(zstd.payloads().get(0), 0, 10, 0, 1));
  }

  public static void main(String[] args) throws Exception {
    CacheShape.Data none = gen("none"), lz4 = gen("lz4"), zstd = gen("zstd");
    for (CacheShape.Data c : new CacheShape.Data[] {none, lz4, zstd}) {
      String codec = c == none ? "none" : c == lz4 ? "lz4" : "zstd";
      scenario(codec + ": full, one by one", () -> oneByOne(c, ALL, codec + " full"));
      scenario(codec + ": narrow, one by one", () -> oneByOne(c, NARROW, codec + " narrow"));
      scenario(codec + ": many at once", () -> many(c, ALL, codec));
      scenario(codec + ": heap copies, narrow", () -> copyCounter(c, NARROW, codec + " narrow"));
      scenario(codec + ": heap copies, full", () -> copyCounter(c, ALL, codec + " full"));
      scenario(codec + ": heap copies, no column", () -> copyCounter(c, new int[0], codec + " none"));
      scenario(codec + ": whole stream payload", () -> wholeStream(c));
      scenario(codec + ": column views summed in Java", () -> views(c, codec));
    }
    scenario("direct: zero-copy, kept reachable", () -> zeroCopy(none));
    byte[] other = TestSupport.genBroadcast(1000, 1).ipc();
    scenario("bad input", () -> badInput(zstd, other));
    TestSupport.exit();
  }
}
