package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.expectThrows;
import static org.xchg.TestSupport.scenario;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * XchgBatchDecoder on the cache shape, as `xchg gen cache --sums` writes it
 * (a generator that shares no code with the decoder, and prints the sums
 * each column must have): payloads cut out of the stream by IpcMessages (a
 * flatbuffer reader of its own), decoded from heap arrays and direct
 * buffers, whole and projected, one at a time and many at once, with full
 * and bounds-only validation; the heap copy counter against the byte
 * ranges IpcMessages finds; no Java allocation per batch; the typed C Data
 * handles; the recycler's figures and trim; GC running during a decode;
 * bad payloads.
 */
public final class XchgBatchDecoderTest {
  private XchgBatchDecoderTest() {}

  static final int COLUMNS = 6;
  static final int BATCH_ROWS = 10_000;
  static final long ROWS = 3 * BATCH_ROWS + 123; // a short last batch

  static CacheShape.Data gen(String codec) throws Exception {
    return CacheShape.gen(null, codec, ROWS);
  }

  static XchgBatchDecoder.Options opts(int[] columns, int threads) {
    return new XchgBatchDecoder.Options().columns(columns).threads(threads);
  }

  static ByteBuffer direct(byte[] bytes) {
    ByteBuffer b = ByteBuffer.allocateDirect(bytes.length + 16);
    b.position(16); // a position that is not 0 must be honoured
    b.put(bytes);
    b.position(16);
    return b;
  }

  /** Adds the checksums of the decoded batch at address to sums/nulls/rows. */
  static void add(XchgBatchDecoder r, XchgArrowArray a, int[] columns, long[][] acc) {
    try (XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
      r.exportSchema(schema);
      for (int k = 0; k < columns.length; k++) {
        ColumnChecksum c = TestHooks.columnChecksum(schema.memoryAddress(), a.memoryAddress(), k);
        acc[0][columns[k]] += c.sum();
        acc[1][columns[k]] += c.nulls();
        acc[2][columns[k]] += c.rows();
      }
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

  /**
   * One payload per call, from the heap and from direct buffers, into one
   * struct released and reused (typed) and into fresh ones by address (as
   * Arrow Java's ArrowArray.memoryAddress() is passed).
   */
  static void oneByOne(CacheShape.Data c, int[] columns, XchgValidation v, String what) {
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(columns, 0).validation(v));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      long[][] heap = new long[3][COLUMNS], dir = new long[3][COLUMNS];
      long[][] wrapped = new long[3][COLUMNS], readOnly = new long[3][COLUMNS];
      for (int i = 0; i < c.payloads().size(); i++) {
        byte[] p = c.payloads().get(i);
        byte[] padded = new byte[p.length + 9];
        System.arraycopy(p, 0, padded, 5, p.length);
        long rows = r.decode(padded, 5, p.length, i, a);
        checkEq(i < 3 ? BATCH_ROWS : 123, rows, what + " heap rows of batch " + i);
        add(r, a, columns, heap);
        a.release();
        for (boolean ro : new boolean[] {false, true}) {
          ByteBuffer b = heapBuffer(p, ro);
          checkEq(rows, r.decode(b, i, a), what + (ro ? " read-only" : "") + " heap ByteBuffer rows of batch " + i);
          checkEq(8, b.position(), what + ": the position left as it was");
          add(r, a, columns, ro ? readOnly : wrapped);
          a.release();
        }
        try (XchgArrowArray fresh = Xchg.allocateArrowArray()) {
          checkEq(rows, r.decode(direct(p), i, fresh.memoryAddress()), what + " direct rows of batch " + i);
          add(r, fresh, columns, dir);
        }
      }
      checkSums(c, columns, heap, what + " heap");
      checkSums(c, columns, dir, what + " direct");
      checkSums(c, columns, wrapped, what + " heap ByteBuffer");
      checkSums(c, columns, readOnly, what + " read-only heap ByteBuffer");
    }
  }

  /**
   * A heap ByteBuffer of payload p at array offset 5 and position 8 (its
   * bytes from 13 of an array whose other bytes are 0xA5, which a wrong
   * offset would read), read-only (its array hidden from Java) or not.
   */
  static ByteBuffer heapBuffer(byte[] p, boolean readOnly) {
    byte[] backing = new byte[p.length + 30];
    java.util.Arrays.fill(backing, (byte) 0xA5);
    System.arraycopy(p, 0, backing, 13, p.length);
    ByteBuffer b = ByteBuffer.wrap(backing, 5, p.length + 20).slice();
    if (readOnly) b = b.asReadOnlyBuffer();
    b.position(8).limit(8 + p.length);
    check(b.hasArray() != readOnly && !b.isDirect(), "a heap buffer, its array hidden when read-only");
    return b;
  }

  /** Every payload in one call, on a pool of 4 threads, by address and typed. */
  static void many(CacheShape.Data c, int[] columns, String what) {
    int n = c.payloads().size();
    byte[][] heap = c.payloads().toArray(new byte[0][]);
    ByteBuffer[] dir = new ByteBuffer[n];
    for (int i = 0; i < n; i++) dir[i] = direct(heap[i]);
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(columns, 4))) {
      for (int source = 0; source < 4; source++) {
        XchgArrowArray[] arrays = new XchgArrowArray[n];
        long[] addresses = new long[n];
        for (int i = 0; i < n; i++) addresses[i] = (arrays[i] = Xchg.allocateArrowArray()).memoryAddress();
        long[][] acc = new long[3][COLUMNS];
        switch (source) {
          case 0 -> r.decodeMany(heap, 0, addresses);
          case 1 -> r.decodeMany(dir, 0, addresses);
          case 2 -> r.decodeMany(heap, 0, arrays);
          default -> r.decodeMany(dir, 0, arrays);
        }
        for (XchgArrowArray a : arrays) {
          add(r, a, columns, acc);
          a.close();
        }
        checkSums(c, columns, acc, what + " many, way " + source);
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
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 1));
         XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
      r.exportSchema(schema);
      long s = schema.memoryAddress();
      ByteBuffer[] v = new ByteBuffer[3];
      for (int i = 0; i < c.payloads().size(); i++) {
        try (XchgArrowArray array = Xchg.allocateArrowArray()) {
          long a = array.memoryAddress();
          byte[] p = c.payloads().get(i);
          int rows = (int) r.decode(p, 0, p.length, i, a);
          for (int k = 0; k < COLUMNS; k++) {
            TestHooks.columnBuffers(s, a, k, v);
            for (ByteBuffer b : v) if (b != null) b.order(ByteOrder.LITTLE_ENDIAN);
            sums.addColumn(k, rows, v[0], v[1], v[2]);
            int width = k == 1 ? 4 : k == 3 ? 4 : 8;
            checkEq(k == 5 ? (rows + 7) / 8 : (long) (k == 3 ? rows + 1 : rows) * width, v[1].capacity(),
                what + " batch " + i + " c" + k + " values view");
            if (k == 3) checkEq(v[1].getInt(4 * rows), v[2].capacity(), what + " c3 data view");
            if (v[0] != null) checkEq((rows + 7) / 8, v[0].capacity(), what + " c" + k + " validity view");
          }
          if (i == 0) {
            XchgException e = expectThrows(XchgException.class, "view of column 6",
                () -> TestHooks.columnBuffers(s, a, 6, v));
            if (e != null) check(e.getMessage().contains("column 6 out of range"), "column 6: " + e.getMessage());
            expectThrows(IllegalArgumentException.class, "2 views", () -> TestHooks.columnBuffers(s, a, 0, new ByteBuffer[2]));
          }
        }
      }
    }
    long[][] acc = new long[3][COLUMNS];
    sums.addTo(acc);
    for (int k = 0; k < COLUMNS; k++) {
      check(acc[0][k] == c.sums()[k], what + ": c" + k + " sum over the views");
      checkEq(c.nulls()[k], acc[1][k], what + ": c" + k + " nulls over the views");
    }
  }

  /**
   * Heap bytes copied: exactly the selected buffers' ranges (none with no
   * column), one at a time on the calling thread and many at once on the
   * pool's threads.
   */
  static void copyCounter(CacheShape.Data c, int[] columns, String what) {
    int[] counts = IpcMessages.bufferCounts(c.schema());
    long selected = 0, metadata = 0;
    for (byte[] p : c.payloads()) {
      IpcMessages.Layout l =
          IpcMessages.layout(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0, counts, columns);
      selected += l.selectedBytes();
      metadata += l.bodyStart();
    }
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(columns, 1));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      for (int i = 0; i < c.payloads().size(); i++) {
        byte[] p = c.payloads().get(i);
        r.decode(p, 0, p.length, i, a);
        a.release();
      }
      checkEq(selected, r.heapBytesCopied(), what + ": heap bytes copied");
      checkEq(metadata, r.metadataBytesCopied(), what + ": metadata bytes copied");
      if (columns.length == 0) checkEq(0, r.heapBytesCopied(), what + ": no body read");
      // Read-only heap buffers: read in place as byte[] payloads are, the same ranges.
      for (int i = 0; i < c.payloads().size(); i++) {
        r.decode(heapBuffer(c.payloads().get(i), true), i, a);
        a.release();
      }
      checkEq(2 * selected, r.heapBytesCopied(), what + ": heap bytes copied, read-only buffers too");
      checkEq(2 * metadata, r.metadataBytesCopied(), what + ": metadata bytes copied, read-only buffers too");
    }
    byte[][] heap = c.payloads().toArray(new byte[0][]);
    XchgArrowArray[] arrays = new XchgArrowArray[heap.length];
    for (int i = 0; i < heap.length; i++) arrays[i] = Xchg.allocateArrowArray();
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(columns, 2))) {
      r.decodeMany(heap, 0, arrays);
      checkEq(selected, r.heapBytesCopied(), what + ": heap bytes copied on the pool");
      checkEq(metadata, r.metadataBytesCopied(), what + ": metadata bytes copied on the pool");
    }
    for (XchgArrowArray a : arrays) a.close();
  }

  /**
   * From a direct buffer, uncompressed values are exported in place (no
   * buffer of their size is allocated), and the buffer stays reachable
   * until the array is released.
   */
  static void zeroCopy(CacheShape.Data none) {
    try (XchgBatchDecoder r = XchgBatchDecoder.open(none.schema(), opts(NARROW, 1));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      long before = TestSupport.liveBytes();
      r.decode(direct(none.payloads().get(0)), 0, a); // the only reference is the array's
      long grew = TestSupport.liveBytes() - before;
      check(grew < 8 * BATCH_ROWS, "direct, uncompressed: " + grew + " bytes allocated (copied?)");
      for (int i = 0; i < 3; i++) {
        System.gc();
        byte[] litter = new byte[1 << 20];
        litter[i] = 1;
      }
      long[][] acc = new long[3][COLUMNS];
      add(r, a, NARROW, acc);
      checkEq(BATCH_ROWS, acc[2][4], "rows after GC");
      a.release();
      before = TestSupport.liveBytes();
      byte[] p = none.payloads().get(0);
      r.decode(p, 0, p.length, 0, a);
      check(TestSupport.liveBytes() - before >= 8 * BATCH_ROWS, "heap payload not copied?");
    }
  }

  static void wholeStream(CacheShape.Data c) {
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 0));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      checkEq(ROWS, r.decode(c.stream(), 0, c.stream().length, 0, a), "stream payload rows");
      long[][] acc = new long[3][COLUMNS];
      add(r, a, ALL, acc);
      checkSums(c, ALL, acc, "stream payload");
    }
  }

  /** The heap bytes every live thread allocated so far (threads that ended are not counted). */
  static long allocatedByAllThreads() {
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (long b : mx.getThreadAllocatedBytes(mx.getAllThreadIds())) sum += Math.max(b, 0);
    return sum;
  }

  /**
   * decode and decodeMany allocate no Java object: over many batches, from
   * the heap and direct buffers, into typed structs and by address, the
   * JVM's threads (the pool's attached workers included) allocate less than
   * a byte per batch, after a warm-up that lets the JIT settle.
   */
  static void noAllocation(CacheShape.Data c) throws Exception {
    int n = c.payloads().size();
    byte[][] heap = c.payloads().toArray(new byte[0][]);
    ByteBuffer[] dir = new ByteBuffer[n];
    for (int i = 0; i < n; i++) dir[i] = direct(heap[i]);
    ByteBuffer[] readOnly = new ByteBuffer[n];
    for (int i = 0; i < n; i++) readOnly[i] = heapBuffer(heap[i], true);
    XchgArrowArray[] arrays = new XchgArrowArray[n];
    long[] addresses = new long[n];
    for (int i = 0; i < n; i++) addresses[i] = (arrays[i] = Xchg.allocateArrowArray()).memoryAddress();
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(NARROW, 2))) {
      String[] ways = {"decode heap", "decode direct", "decodeMany heap", "decodeMany direct typed",
          "decode read-only heap ByteBuffer"};
      for (int way = 0; way < ways.length; way++) {
        long batches = 0, bytes = 0;
        for (int round = 0; round < 2; round++) { // round 0 warms up
          boolean here = way < 2 || way == 4; // calls decoding on the calling thread only
          long before = here ? mx.getCurrentThreadAllocatedBytes() : allocatedByAllThreads();
          long decoded = 0;
          for (int k = 0; k < 1000; k++) {
            switch (way) {
              case 0 -> {
                for (int i = 0; i < n; i++) {
                  r.decode(heap[i], 0, heap[i].length, i, arrays[i]);
                  arrays[i].release();
                }
              }
              case 1 -> {
                for (int i = 0; i < n; i++) {
                  r.decode(dir[i], i, addresses[i]);
                  arrays[i].release();
                }
              }
              case 2 -> {
                r.decodeMany(heap, 0, addresses);
                for (XchgArrowArray a : arrays) a.release();
              }
              case 4 -> {
                for (int i = 0; i < n; i++) {
                  r.decode(readOnly[i], i, arrays[i]);
                  arrays[i].release();
                }
              }
              default -> {
                r.decodeMany(dir, 0, arrays);
                for (XchgArrowArray a : arrays) a.release();
              }
            }
            decoded += n;
          }
          long after = here ? mx.getCurrentThreadAllocatedBytes() : allocatedByAllThreads();
          batches = decoded;
          bytes = after - before;
        }
        System.out.printf("     %s: %d bytes of Java heap for %d batches%n", ways[way], bytes, batches);
        check(bytes < batches, ways[way] + ": " + bytes + " bytes allocated for " + batches + " batches");
      }
    }
    for (XchgArrowArray a : arrays) a.close();
  }

  /**
   * The typed C Data handles: the address is the struct's, a struct still
   * holding an array is refused (its release would be lost), release makes
   * it reusable, a closed one is refused, close twice is a no-op; schema
   * and stream structs likewise.
   */
  static void typedHandles(CacheShape.Data c) {
    byte[] p = c.payloads().get(0);
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 1))) {
      XchgArrowArray a = Xchg.allocateArrowArray();
      check(a.memoryAddress() != 0, "an address");
      check(TestHooks.arrayReleased(a.memoryAddress()), "a new struct holds nothing");
      checkEq(BATCH_ROWS, r.decode(p, 0, p.length, 0, a), "rows into a typed struct");
      checkEq(BATCH_ROWS, TestHooks.arrayLength(a.memoryAddress()), "the struct at the address holds them");
      IllegalStateException full = expectThrows(IllegalStateException.class, "a struct still holding an array",
          () -> r.decode(p, 0, p.length, 0, a));
      if (full != null) check(full.getMessage().contains("release it"), "still holds: " + full.getMessage());
      expectThrows(IllegalStateException.class, "many into a struct still holding an array",
          () -> r.decodeMany(new byte[][] {p}, 0, new XchgArrowArray[] {a}));
      checkEq(BATCH_ROWS, TestHooks.arrayLength(a.memoryAddress()), "the refused call left it as it was");
      a.release();
      check(TestHooks.arrayReleased(a.memoryAddress()), "released");
      a.release(); // releasing an empty struct does nothing
      checkEq(BATCH_ROWS, r.decode(direct(p), 0, a), "reused after release");
      a.close(); // releases what it holds
      a.close();
      expectThrows(IllegalStateException.class, "memoryAddress after close", a::memoryAddress);
      expectThrows(IllegalStateException.class, "decode into a closed struct",
          () -> r.decode(p, 0, p.length, 0, a));
      expectThrows(IllegalStateException.class, "decodeMany into a closed struct",
          () -> r.decodeMany(new byte[][] {p}, 0, new XchgArrowArray[] {a}));
      try (XchgArrowSchema s = Xchg.allocateArrowSchema()) {
        r.exportSchema(s);
        checkEq(COLUMNS, countChildren(s.memoryAddress()), "schema columns");
        check("c4".equals(TestHooks.schemaName(s.memoryAddress(), 4)), "c4 named");
        IllegalStateException held = expectThrows(IllegalStateException.class, "a schema struct still holding one",
            () -> r.exportSchema(s));
        if (held != null) check(held.getMessage().contains("still holds a schema: release it"), "schema: " + held.getMessage());
        expectThrows(IllegalStateException.class, "a schema struct still holding one, by address",
            () -> r.exportSchema(s.memoryAddress()));
        check("c4".equals(TestHooks.schemaName(s.memoryAddress(), 4)), "the refused export left the schema as it was");
        s.release();
        expectThrows(IllegalStateException.class, "a released schema", () -> TestHooks.schemaName(s.memoryAddress(), 0));
        r.exportSchema(s.memoryAddress());
        check("+s".equals(TestHooks.schemaFormat(s.memoryAddress(), -1)), "schema by address");
      }
      try (XchgArrowArrayStream s = Xchg.allocateArrowArrayStream()) {
        check(s.memoryAddress() != 0, "a stream struct");
      }
    }
  }

  /**
   * decodeMany with one struct given twice (a typed handle, an address; a
   * few targets, and many, past the pairwise check) is refused before
   * anything is decoded, naming the two indices: nothing exported, no
   * native memory left behind (the second decode into the struct lost the
   * first's release).
   */
  static void duplicateTargets(CacheShape.Data c) {
    byte[] p = c.payloads().get(0);
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgArrowArray[] many = new XchgArrowArray[100];
    for (int i = 0; i < many.length; i++) many[i] = Xchg.allocateArrowArray();
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 2))) {
      XchgArrowArray x = many[0], y = many[1];
      IllegalArgumentException e = expectThrows(IllegalArgumentException.class, "one typed struct twice",
          () -> r.decodeMany(new byte[][] {p, p, p}, 0, new XchgArrowArray[] {x, y, x}));
      if (e != null) check(e.getMessage().contains("arrays 0 and 2"), "one typed struct twice: " + e.getMessage());
      nothingExported(many, "one typed struct twice");
      e = expectThrows(IllegalArgumentException.class, "one address twice",
          () -> r.decodeMany(new ByteBuffer[] {direct(p), direct(p)}, 0, new long[] {y.memoryAddress(), y.memoryAddress()}));
      if (e != null) check(e.getMessage().contains("arrays 0 and 1"), "one address twice: " + e.getMessage());
      nothingExported(many, "one address twice");
      byte[][] payloads = new byte[many.length][];
      Arrays.fill(payloads, p);
      XchgArrowArray[] targets = many.clone();
      targets[70] = targets[40];
      targets[90] = targets[5];
      e = expectThrows(IllegalArgumentException.class, "one struct twice among 100",
          () -> r.decodeMany(payloads, 0, targets));
      if (e != null) check(e.getMessage().contains("arrays 40 and 70"), "one struct twice among 100: " + e.getMessage());
      nothingExported(many, "one struct twice among 100");
      r.decodeMany(payloads, 0, many); // each its own: decoded
      checkEq(BATCH_ROWS, TestHooks.arrayLength(many[99].memoryAddress()), "100 distinct structs");
    }
    for (XchgArrowArray a : many) a.close();
    checkEq(bytes0, TestSupport.liveBytes(), "one struct twice: native bytes back to the start");
    checkEq(buffers0, Xchg.liveBuffers(), "one struct twice: live buffers back to the start");
  }

  /** Every struct is empty (then released anyway, so that a failure here does not cascade). */
  static void nothingExported(XchgArrowArray[] arrays, String what) {
    for (int i = 0; i < arrays.length; i++) {
      if (!TestHooks.arrayReleased(arrays[i].memoryAddress())) {
        check(false, what + ": exported into array " + i);
        break;
      }
    }
    for (XchgArrowArray a : arrays) a.release();
  }

  static int countChildren(long schema) {
    for (int n = 0; ; n++) {
      try {
        TestHooks.schemaFormat(schema, n);
      } catch (IndexOutOfBoundsException e) {
        return n;
      }
    }
  }

  /**
   * The recycler through Java: after batches are released, the blocks it
   * keeps count in allocatedBytes (live + recycled), stay under its limit,
   * serve the next batches (reusedBlocks grows), and trimBuffers gives them
   * back.
   */
  static void recycler(CacheShape.Data c) {
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 1));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      byte[] p = c.payloads().get(0);
      r.decode(p, 0, p.length, 0, a);
      a.release();
      XchgBufferMetrics m = Xchg.bufferMetrics();
      check(m.recycledBytes() > 0 && m.recycledBlocks() > 0, "a released batch's blocks are kept: " + m);
      checkEq(64L << 20, m.recycleLimitBytes(), "the limit");
      check(m.recycledBytes() <= m.recycleLimitBytes(), "under the limit: " + m);
      checkEq(m.liveBytes() + m.recycledBytes(), m.allocatedBytes(), "allocated = live + recycled");
      check(Xchg.allocatedBytes() >= m.recycledBytes(), "allocatedBytes counts them");
      r.decode(p, 0, p.length, 0, a);
      check(Xchg.bufferMetrics().reusedBlocks() > m.reusedBlocks(), "the next batch reuses them");
      a.release();
      long kept = Xchg.bufferMetrics().recycledBytes();
      long freed = Xchg.trimBuffers(0);
      m = Xchg.bufferMetrics();
      checkEq(kept, freed, "trim gave back what was kept");
      checkEq(0, m.recycledBytes(), "nothing kept after trim");
      checkEq(m.liveBytes(), Xchg.allocatedBytes(), "allocatedBytes is the live bytes after trim");
      checkEq(0, Xchg.trimBuffers(0), "a second trim has nothing to give back");
      IllegalArgumentException refused =
          expectThrows(IllegalArgumentException.class, "negative keep", () -> Xchg.trimBuffers(-1));
      String want = "keepBytes must not be negative, not -1";
      if (refused != null) check(want.equals(refused.getMessage()), "negative keep: " + refused.getMessage() + ", want " + want);
    }
  }

  /**
   * A garbage collection runs while a long decodeMany copies out of heap
   * arrays: the copies are never inside a critical region (which would hold
   * the GC off until the call ended).  Tried up to ten times: the GC must
   * both start and end while one call is still under way.
   */
  static void gcDuringDecode(CacheShape.Data c) throws Exception {
    List<byte[]> many = new ArrayList<>();
    for (int k = 0; k < 100; k++) many.addAll(c.payloads());
    byte[][] heap = many.toArray(new byte[0][]);
    XchgArrowArray[] arrays = new XchgArrowArray[heap.length];
    for (int i = 0; i < heap.length; i++) arrays[i] = Xchg.allocateArrowArray();
    GarbageCollectorMXBean[] gcs = ManagementFactory.getGarbageCollectorMXBeans().toArray(new GarbageCollectorMXBean[0]);
    boolean seen = false;
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 2))) {
      for (int attempt = 0; attempt < 10 && !seen; attempt++) {
        AtomicBoolean running = new AtomicBoolean(true);
        Thread decoder = new Thread(() -> {
          r.decodeMany(heap, 0, arrays);
          running.set(false);
        });
        decoder.start();
        Thread.sleep(5);
        long gcBefore = 0, gcAfter = 0;
        for (GarbageCollectorMXBean g : gcs) gcBefore += g.getCollectionCount();
        boolean before = running.get();
        System.gc();
        boolean after = running.get();
        for (GarbageCollectorMXBean g : gcs) gcAfter += g.getCollectionCount();
        decoder.join();
        seen = before && after && gcAfter > gcBefore;
        for (XchgArrowArray a : arrays) a.release();
      }
    }
    for (XchgArrowArray a : arrays) a.close();
    check(seen, "no GC ran from start to end inside a decodeMany of heap payloads");
  }

  /**
   * A decoder's own pool: its workers, attached to the JVM to copy heap
   * payloads, show as JVM threads while it is open and are detached (gone)
   * once it is closed.
   */
  static void poolThreadsDetached(CacheShape.Data c) throws Exception {
    java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    byte[][] heap = c.payloads().toArray(new byte[0][]);
    XchgArrowArray[] arrays = new XchgArrowArray[heap.length];
    for (int i = 0; i < heap.length; i++) arrays[i] = Xchg.allocateArrowArray();
    int before = mx.getThreadCount(), during;
    try (XchgBatchDecoder r = XchgBatchDecoder.open(c.schema(), opts(ALL, 4))) {
      for (int k = 0; k < 20; k++) { // until every worker has copied once
        r.decodeMany(heap, 0, arrays);
        for (XchgArrowArray a : arrays) a.release();
      }
      during = mx.getThreadCount();
    }
    for (XchgArrowArray a : arrays) a.close();
    int after = mx.getThreadCount();
    for (int i = 0; i < 200 && after > before; i++) { // a detached thread may take a moment to end
      Thread.sleep(10);
      after = mx.getThreadCount();
    }
    check(during > before, "heap decodeMany attached no pool worker: " + before + " threads, " + during + " during");
    checkEq(before, after, "JVM threads after the decoder closed");
  }

  static XchgException decodeFails(XchgBatchDecoder r, byte[] p, int length, long batch) {
    try (XchgArrowArray a = Xchg.allocateArrowArray()) {
      return expectThrows(XchgException.class, "batch " + batch, () -> r.decode(p, 0, length, batch, a));
    }
  }

  /** Damages bytes [from, to) of a copy of p. */
  static byte[] damaged(byte[] p, int from, int to) {
    byte[] bad = p.clone();
    for (int i = from; i < to; i++) bad[i] ^= 0x5a;
    return bad;
  }

  /**
   * Bad payloads fail with the batch named, never crash, at both trust
   * levels: every cut, a damaged ZSTD body, a buffer range outside the body.
   */
  static void badInput(CacheShape.Data zstd, byte[] other, XchgValidation v) {
    String how = " (" + v + ")";
    try (XchgBatchDecoder r = XchgBatchDecoder.open(zstd.schema(), opts(ALL, 0).validation(v))) {
      byte[] p = zstd.payloads().get(1);
      for (int cut = 0; cut < p.length; cut += 1 + cut / 8) {
        XchgException e = decodeFails(r, p, cut, 7);
        if (e != null) check(e.getMessage().contains("batch 7: "), "cut at " + cut + how + ": " + e.getMessage());
      }
      // Damage c0's compressed values (sequential ids: they compress): the codec refuses them.
      IpcMessages.Layout l = IpcMessages.layout(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0,
          IpcMessages.bufferCounts(zstd.schema()), new int[] {0});
      int values = (int) (l.bodyStart() + l.offsets()[0]);
      byte[] bad = damaged(p, values + 12, values + 40);
      XchgException e = decodeFails(r, bad, bad.length, 8);
      if (e != null)
        check(e.getMessage().contains("batch 8: ") && e.getMessage().contains("field 'c0'")
                && e.getMessage().contains("buffer "),
            "damaged body" + how + ": " + e.getMessage());
      // A stream of another schema.
      e = decodeFails(r, other, other.length, 9);
      if (e != null)
        check(e.status() == XchgException.Status.FORMAT && e.getMessage().contains("schema"),
            "other schema" + how + ": " + e.getMessage());
      // decodeMany: nothing exported, the failing batch named.
      XchgArrowArray[] arrays = {Xchg.allocateArrowArray(), Xchg.allocateArrowArray()};
      XchgException m =
          expectThrows(XchgException.class, "many", () -> r.decodeMany(new byte[][] {p, bad}, 20, arrays));
      if (m != null) check(m.getMessage().contains("batch 21: "), "many" + how + ": " + m.getMessage());
      for (XchgArrowArray a : arrays) {
        check(TestHooks.arrayReleased(a.memoryAddress()), "many" + how + ": nothing exported");
        a.close();
      }
    }
  }

  /**
   * Uncompressed payloads whose buffers lie: a buffer range past the body
   * and a last offset past the string data fail at both trust levels; an
   * offset in the middle that decreases fails in full validation and is
   * what bounds-only validation lets through (the O(n) check it skips).
   */
  static void lyingBuffers(CacheShape.Data none) {
    byte[] p = none.payloads().get(0);
    int[] counts = IpcMessages.bufferCounts(none.schema());
    IpcMessages.Layout l = IpcMessages.layout(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0, counts,
        new int[] {3});
    int offsets = (int) (l.bodyStart() + l.offsets()[1]);
    ByteBuffer w = ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN);
    int dataLength = (int) l.lengths()[2];
    byte[] lastBeyond = p.clone();
    ByteBuffer.wrap(lastBeyond).order(ByteOrder.LITTLE_ENDIAN).putInt(offsets + 4 * BATCH_ROWS, dataLength + 1);
    byte[] middleDown = p.clone();
    ByteBuffer.wrap(middleDown).order(ByteOrder.LITTLE_ENDIAN)
        .putInt(offsets + 4 * 5000, w.getInt(offsets + 4 * 4999) - 1);
    for (XchgValidation v : XchgValidation.values()) {
      String how = " (" + v + ")";
      try (XchgBatchDecoder r = XchgBatchDecoder.open(none.schema(), opts(new int[] {3}, 1).validation(v))) {
        XchgException e = decodeFails(r, lastBeyond, lastBeyond.length, 3);
        if (e != null)
          check(e.getMessage().contains("batch 3: ") && e.getMessage().contains("field 'c3'")
              && e.getMessage().contains("the last"), "last offset past the data" + how + ": " + e.getMessage());
        byte[] rangeOut = p.clone(); // c3's data buffer said to start past the body
        int spec = findBufferSpec(p, l.offsets()[2], l.lengths()[2]);
        ByteBuffer.wrap(rangeOut).order(ByteOrder.LITTLE_ENDIAN).putLong(spec, 1L << 40);
        e = decodeFails(r, rangeOut, rangeOut.length, 4);
        if (e != null)
          check(e.getMessage().contains("batch 4: ") && e.getMessage().contains("outside"),
              "range past the body" + how + ": " + e.getMessage());
        if (v == XchgValidation.FULL) {
          e = decodeFails(r, middleDown, middleDown.length, 5);
          if (e != null) check(e.getMessage().contains("below the one before"), "decreasing offset: " + e.getMessage());
        } else {
          try (XchgArrowArray a = Xchg.allocateArrowArray()) {
            checkEq(BATCH_ROWS, r.decode(middleDown, 0, middleDown.length, 5, a),
                "bounds only: a decreasing offset in the middle is not looked at");
          }
        }
      }
    }
  }

  /** Where, in the metadata, the Buffer struct {offset, length} of a body range is. */
  static int findBufferSpec(byte[] p, long offset, long length) {
    ByteBuffer b = ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN);
    for (int at = 0; at + 16 <= p.length; at += 8)
      if (b.getLong(at) == offset && b.getLong(at + 8) == length) return at;
    throw new IllegalStateException("no Buffer {" + offset + ", " + length + "} in the metadata");
  }

  static void misuse(CacheShape.Data zstd) {
    XchgException e = expectThrows(XchgException.class, "column 6",
        () -> XchgBatchDecoder.open(zstd.schema(), opts(new int[] {1, 6}, 0)));
    if (e != null)
      check(e.status() == XchgException.Status.INVALID_ARGUMENT && e.getMessage().contains("column index 6"),
          "column 6: " + e.getMessage());
    expectThrows(XchgException.class, "no schema", () -> XchgBatchDecoder.open(zstd.payloads().get(0)));
    // Bytes after the schema message (the stream's next ones, garbage) would be dropped unseen.
    byte[] schema = zstd.schema(), trailed = Arrays.copyOf(schema, schema.length + 16);
    Arrays.fill(trailed, schema.length, trailed.length, (byte) 0xAB);
    XchgException trailing = expectThrows(XchgException.class, "schema with trailing bytes",
        () -> XchgBatchDecoder.open(trailed));
    if (trailing != null)
      check(trailing.status() == XchgException.Status.FORMAT
              && trailing.getMessage().contains("16 trailing bytes, from byte " + schema.length),
          "schema with trailing bytes: " + trailing.getMessage());
    expectThrows(IllegalArgumentException.class, "negative threads", () -> new XchgBatchDecoder.Options().threads(-1));
    IllegalArgumentException many = expectThrows(IllegalArgumentException.class, "too many threads",
        () -> new XchgBatchDecoder.Options().threads(Xchg.MAX_THREADS + 1));
    if (many != null)
      check(many.getMessage().equals("threads must be from 0 to 4096, not 4097"), "too many threads: " + many.getMessage());
    byte[] p = zstd.payloads().get(0);
    try (XchgBatchDecoder r = XchgBatchDecoder.open(zstd.schema()); XchgArrowArray a = Xchg.allocateArrowArray()) {
      expectThrows(IndexOutOfBoundsException.class, "range", () -> r.decode(p, 4, p.length, 0, a));
      // Named as decoding errors name a payload: by the batch number given to the call.
      IllegalArgumentException heap = expectThrows(IllegalArgumentException.class, "a heap ByteBuffer among many",
          () -> r.decodeMany(new ByteBuffer[] {direct(p), ByteBuffer.wrap(p)}, 10, new long[] {1, 2}));
      if (heap != null)
        check(heap.getMessage().equals("batch 11 (payload 1): a heap ByteBuffer, not a direct one: decodeMany("
                + "ByteBuffer[], ...) takes direct ones only; decode(ByteBuffer, ...) reads a heap one in place"),
            "a heap ByteBuffer among many: " + heap.getMessage());
      heap = expectThrows(IllegalArgumentException.class, "a read-only heap ByteBuffer among many",
          () -> r.decodeMany(new ByteBuffer[] {direct(p), heapBuffer(p, true)}, 10, new XchgArrowArray[] {a, a}));
      if (heap != null)
        check(heap.getMessage().startsWith("batch 11 (payload 1): a heap ByteBuffer (read-only, its array hidden),"
                + " not a direct one: "), "a read-only heap ByteBuffer among many: " + heap.getMessage());
      check(TestHooks.arrayReleased(a.memoryAddress()), "nothing decoded when a payload is refused");
      // nDecodeHidden's own checks, reached past decode's: what the Java side never passes it.
      Object[][] hidden = {{direct(p), 0, p.length}, {heapBuffer(p, true), 8, p.length + 20},
          {heapBuffer(p, true), -1, 4}, {heapBuffer(p, true), 8, -1}};
      for (Object[] args : hidden) {
        String what = "nDecodeHidden(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
        IllegalArgumentException bad = expectThrows(IllegalArgumentException.class, what,
            () -> callNative(r, "nDecodeHidden", new Class<?>[] {ByteBuffer.class, int.class, int.class,
                long.class, long.class}, args[0], args[1], args[2], 0L, a.memoryAddress()));
        if (bad != null)
          check(bad.getMessage().startsWith("XchgBatchDecoder: not a heap buffer"), what + ": " + bad.getMessage());
        check(TestHooks.arrayReleased(a.memoryAddress()), what + ": nothing exported");
      }
      // An empty file's mapped buffer (no address) is an empty payload, not a buffer refused.
      XchgException empty = expectThrows(XchgException.class, "an empty mapped payload",
          () -> r.decode(TestSupport.emptyMappedBuffer(), 6, a));
      if (empty != null)
        check(empty.getMessage().equals("batch 6: the payload of 0 bytes holds no record batch"),
            "an empty mapped payload: " + empty.getMessage());
      expectThrows(IllegalArgumentException.class, "null address", () -> r.decode(p, 0, p.length, 0, 0L));
      expectThrows(IllegalArgumentException.class, "too few addresses",
          () -> r.decodeMany(new byte[][] {p, p}, 0, new long[] {a.memoryAddress()}));
      NullPointerException none = expectThrows(NullPointerException.class, "a null payload",
          () -> r.decodeMany(new byte[][] {p, null}, 7, new XchgArrowArray[] {a, a}));
      if (none != null) check(none.getMessage().equals("batch 8 (payload 1) is null"), "a null payload: " + none.getMessage());
      none = expectThrows(NullPointerException.class, "a null direct payload",
          () -> r.decodeMany(new ByteBuffer[] {null}, 3, new XchgArrowArray[] {a}));
      if (none != null)
        check(none.getMessage().equals("batch 3 (payload 0) is null"), "a null direct payload: " + none.getMessage());
    }
    try (XchgBatchDecoder r = XchgBatchDecoder.open(zstd.schema()); XchgArrowArray a = Xchg.allocateArrowArray()) {
      XchgException bad = expectThrows(XchgException.class, "a position past the limit",
          () -> decodeDirectRange(r, direct(p), 20, 10, a));
      if (bad != null)
        check(bad.status() == XchgException.Status.INVALID_ARGUMENT && bad.getMessage().contains("position 20"),
            "position past the limit: " + bad.getMessage());
      check(TestHooks.arrayReleased(a.memoryAddress()), "nothing exported for a position past the limit");
      // decodeMany reads the payload array again natively: a caller's thread may have put a heap
      // buffer or null there after the Java side checked it (here, passed straight to the native
      // method).  Read as a direct buffer, a heap one's address would crash the JVM.
      try (XchgArrowArray b = Xchg.allocateArrowArray()) {
        Object[][] swaps = {{"nDecodeDirectMany", new ByteBuffer[] {direct(p), ByteBuffer.wrap(p)}, "a heap ByteBuffer"},
            {"nDecodeDirectMany", new ByteBuffer[] {direct(p), null}, "null"},
            {"nDecodeHeapMany", new byte[][] {p, null}, "null"}};
        for (Object[] swap : swaps) {
          String what = swap[0] + ": payload 1 became " + swap[2];
          IllegalArgumentException changed = expectThrows(IllegalArgumentException.class, what,
              () -> decodeManyUnchecked(r, (String) swap[0], (Object[]) swap[1], new XchgArrowArray[] {a, b}));
          if (changed != null)
            check(changed.getMessage().contains("payload 1 became " + swap[2] + " during the call"),
                what + ": " + changed.getMessage());
          check(TestHooks.arrayReleased(a.memoryAddress()) && TestHooks.arrayReleased(b.memoryAddress()),
              "nothing exported when " + what);
        }
      }
    }
    XchgBatchDecoder closed = XchgBatchDecoder.open(zstd.schema(), opts(null, 1));
    closed.close();
    closed.close();
    expectThrows(IllegalStateException.class, "closed", () -> closed.decode(p, 0, 10, 0, 1L));
    expectThrows(IllegalStateException.class, "counter after close", closed::heapBytesCopied);
  }

  /**
   * nDecodeDirect with the position and limit given (decode passes the
   * buffer's own, which a thread moving them during the call could make a
   * pair of which this is).
   */
  static long decodeDirectRange(XchgBatchDecoder r, ByteBuffer b, int position, int limit, XchgArrowArray a)
      throws Exception {
    return (long) callNative(r, "nDecodeDirect", new Class<?>[] {ByteBuffer.class, int.class, int.class,
        long.class, long.class}, b, position, limit, 0L, a.memoryAddress());
  }

  /** nDecodeDirectMany or nDecodeHeapMany (`many`) without decodeMany's checks of the payloads. */
  static void decodeManyUnchecked(XchgBatchDecoder r, String many, Object[] payloads, XchgArrowArray[] arrays)
      throws Exception {
    callNative(r, many, new Class<?>[] {payloads.getClass(), long.class, long[].class, XchgArrowArray[].class},
        payloads, 0L, null, arrays);
  }

  /** Native method `name` of the decoder, reached by reflection, given its handle and args. */
  static Object callNative(XchgBatchDecoder r, String name, Class<?>[] types, Object... args) throws Exception {
    java.lang.reflect.Field f = XchgBatchDecoder.class.getDeclaredField("handle");
    f.setAccessible(true);
    NativeHandle handle = (NativeHandle) f.get(r);
    Class<?>[] all = new Class<?>[types.length + 1];
    all[0] = long.class;
    System.arraycopy(types, 0, all, 1, types.length);
    java.lang.reflect.Method m = XchgBatchDecoder.class.getDeclaredMethod(name, all);
    m.setAccessible(true);
    Object[] values = new Object[args.length + 1];
    System.arraycopy(args, 0, values, 1, args.length);
    values[0] = handle.enter();
    try {
      return m.invoke(null, values);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause() instanceof Exception x ? x : e;
    } finally {
      handle.leave();
    }
  }

  public static void main(String[] args) throws Exception {
    CacheShape.Data none = gen("none"), lz4 = gen("lz4"), zstd = gen("zstd");
    for (CacheShape.Data c : new CacheShape.Data[] {none, lz4, zstd}) {
      String codec = c == none ? "none" : c == lz4 ? "lz4" : "zstd";
      for (XchgValidation v : XchgValidation.values()) {
        scenario(codec + ": full, one by one, " + v, () -> oneByOne(c, ALL, v, codec + " full " + v));
        scenario(codec + ": narrow, one by one, " + v, () -> oneByOne(c, NARROW, v, codec + " narrow " + v));
      }
      scenario(codec + ": many at once", () -> many(c, ALL, codec));
      scenario(codec + ": heap copies, narrow", () -> copyCounter(c, NARROW, codec + " narrow"));
      scenario(codec + ": heap copies, full", () -> copyCounter(c, ALL, codec + " full"));
      scenario(codec + ": heap copies, no column", () -> copyCounter(c, new int[0], codec + " none"));
      scenario(codec + ": whole stream payload", () -> wholeStream(c));
      scenario(codec + ": column views summed in Java", () -> views(c, codec));
    }
    scenario("direct: zero-copy, kept reachable", () -> zeroCopy(none));
    scenario("no Java allocation per batch", () -> noAllocation(lz4));
    scenario("typed C Data handles", () -> typedHandles(lz4));
    scenario("one struct twice in decodeMany", () -> duplicateTargets(lz4));
    scenario("recycled blocks: counted, reused, trimmed", () -> recycler(lz4));
    scenario("a GC runs during a heap decodeMany", () -> gcDuringDecode(none));
    scenario("a decoder's pool workers detached when it closes", () -> poolThreadsDetached(zstd));
    byte[] other = TestSupport.genBroadcast(1000, 1).ipc();
    for (XchgValidation v : XchgValidation.values())
      scenario("bad input, " + v, () -> badInput(zstd, other, v));
    scenario("lying buffers: full vs bounds-only", () -> lyingBuffers(none));
    scenario("misuse", () -> misuse(zstd));
    TestSupport.exit();
  }
}
