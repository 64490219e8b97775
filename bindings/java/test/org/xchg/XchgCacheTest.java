package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.expectThrows;
import static org.xchg.TestSupport.scenario;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * The shared cache as a Spark executor's tasks use it: Java threads acquire
 * one broadcast whose bytes were compressed in this JVM by lz4-java exactly
 * as Spark does, around an Arrow IPC stream made by `xchg gen broadcast`;
 * every thread checks its values against the generator's sums.
 */
public final class XchgCacheTest {
  private static final int THREADS = 8;
  private static final int CHUNK = 1 << 20; // Spark's ChunkedByteBuffer pieces, smaller

  private static TestSupport.Broadcast data;
  private static byte[] spark; // data.ipc() compressed as Spark does

  public static void main(String[] args) throws Exception {
    data = TestSupport.genBroadcast(100_000, 1);
    spark = TestSupport.sparkLz4(data.ipc());
    System.out.printf("broadcast: %d rows, IPC %d bytes, lz4-java %d bytes%n", data.rows(),
        data.ipc().length, spark.length);

    scenario("8 threads share one decode (heap chunks)",
        () -> manyThreads(true, TestSupport.Kind.HEAP));
    scenario("8 threads share one decode (direct chunks)",
        () -> manyThreads(true, TestSupport.Kind.DIRECT));
    scenario("8 threads, sharing off (mixed chunks)",
        () -> manyThreads(false, TestSupport.Kind.MIXED));
    scenario("read-only heap chunks: read in place, a hit reads nothing", XchgCacheTest::readOnlyChunks);
    scenario("killed waiters: cancelled, or the kill check's own exception", XchgCacheTest::killedWaiter);
    scenario("failing source: its error to the decoder, one retries for all", XchgCacheTest::failingSource);
    scenario("bad bytes alone: format and truncation errors, nothing cached", XchgCacheTest::badBytes);
    scenario("no bytes, however given: one empty broadcast", XchgCacheTest::noBytes);
    scenario("two streams in one part refused, as two parts read", XchgCacheTest::twoStreamsInOnePart);
    scenario("columns subset and several parts", XchgCacheTest::columnsAndParts);
    scenario("exports outlive holder and cache", XchgCacheTest::exportsOutlive);
    scenario("exports into a struct still holding one refused", XchgCacheTest::fullStructs);
    scenario("a retain time under 1 ms: the entry freed once it passed", XchgCacheTest::retainUnderMillisecond);
    scenario("misuse throws, never crashes", XchgCacheTest::misuse);
    TestSupport.exit();
  }

  private static ByteBuffer[] sparkChunks(TestSupport.Kind kind) {
    return TestSupport.chunks(spark, CHUNK, kind);
  }

  /** Checks every column of h against the generator's sums. */
  private static void checkValues(XchgCacheHolder h, String who) {
    checkEq(data.rows(), h.numRows(), who + ": rows");
    checkEq((data.rows() + 8191) / 8192, h.numBatches(), who + ": batches");
    for (int c = 0; c < 3; c++) {
      ColumnChecksum sum = h.columnChecksum(c);
      String col = who + ": column " + TestSupport.BROADCAST_COLUMNS[c];
      checkEq(data.sums()[c], sum.sum(), col + " sum");
      checkEq(data.nulls()[c], sum.nulls(), col + " nulls");
      checkEq(data.rows(), sum.rows(), col + " rows");
    }
  }

  private static void checkMemoryBack(long bytes, long buffers, String what) {
    checkEq(bytes, TestSupport.liveBytes(), what + ": native bytes back to the start");
    checkEq(buffers, Xchg.liveBuffers(), what + ": live buffers back to the start");
  }

  private static void join(List<Thread> threads) throws InterruptedException {
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(120));
      check(!t.isAlive(), t.getName() + " finished");
    }
  }

  private static Thread start(String name, TestSupport.Body body) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } catch (Throwable e) {
        check(false, name + " threw " + e);
        e.printStackTrace(System.out);
      }
    }, name);
    t.start();
    return t;
  }

  /** THREADS threads acquire the same key at once; all hold it at the same time. */
  private static void manyThreads(boolean sharing, TestSupport.Kind kind) throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgCache cache = XchgCache.create(new XchgCache.Options().sharing(sharing));
    CyclicBarrier allAcquired = new CyclicBarrier(THREADS);
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < THREADS; i++) {
      String name = "task-" + i;
      ByteBuffer[] chunks = sparkChunks(kind); // each task its own copy, as each executor task
      threads.add(start(name, () -> {
        go.await();
        XchgCacheHolder h = cache.acquire("broadcast_7", chunks, StreamCodec.LZ4_JAVA, () -> false);
        try {
          allAcquired.await(60, TimeUnit.SECONDS); // everyone holds it now
          checkValues(h, name);
        } finally {
          h.close();
        }
      }));
    }
    go.countDown();
    join(threads);
    XchgCacheMetrics m = cache.metrics();
    checkEq(sharing ? 1 : THREADS, m.decodes(), "decodes");
    checkEq(THREADS, m.acquisitions(), "acquisitions");
    checkEq(0, m.failedDecodes(), "failed decodes");
    checkEq(0, m.entries(), "entries alive after every release");
    cache.close();
    checkMemoryBack(bytes0, buffers0, "after all released");
  }

  /** The Java heap bytes the calling thread has allocated so far. */
  private static long allocatedHere() {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    return mx.getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  private static ByteBuffer[] readOnly(ByteBuffer[] chunks) {
    ByteBuffer[] out = new ByteBuffer[chunks.length];
    for (int i = 0; i < chunks.length; i++) out[i] = chunks[i].asReadOnlyBuffer();
    return out;
  }

  /**
   * Read-only heap chunks (their array hidden from Java, at an array offset
   * and a position): the decode reads them in place, and an acquire that
   * finds the broadcast decoded reads nothing, so that it copies nothing
   * either.  Counted by the Java heap the acquiring thread allocates: every
   * acquire copied every read-only chunk whole first, a hit's too (the
   * broadcast's size each time), and its holder kept the copy.
   */
  private static void readOnlyChunks() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    ByteBuffer[] chunks = readOnly(sparkChunks(TestSupport.Kind.HEAP));
    check(chunks[0].isReadOnly() && !chunks[0].hasArray(), "the chunks hide their array");
    try (XchgCache cache = XchgCache.create()) {
      cache.acquire("warm-up", chunks, StreamCodec.LZ4_JAVA, null).close(); // classes loaded, code run
      long before = allocatedHere();
      XchgCacheHolder decoded = cache.acquire("ro", chunks, StreamCodec.LZ4_JAVA, () -> false);
      long decodeAlloc = allocatedHere() - before;
      checkValues(decoded, "read-only chunks");
      before = allocatedHere();
      XchgCacheHolder hit = cache.acquire("ro", chunks, StreamCodec.LZ4_JAVA, () -> false);
      long hitAlloc = allocatedHere() - before;
      checkValues(hit, "read-only chunks, hit");
      // Not read at all: bytes that are no stream do for a decoded key.
      ByteBuffer[] zeros = {ByteBuffer.allocate(spark.length).asReadOnlyBuffer()};
      before = allocatedHere();
      XchgCacheHolder other = cache.acquire("ro", zeros, StreamCodec.LZ4_JAVA, null);
      long otherAlloc = allocatedHere() - before;
      checkValues(other, "a hit over other bytes");
      System.out.printf("  Java heap allocated: decode %d B, hit %d B, hit over zeros %d B (%d B of chunks)%n",
          decodeAlloc, hitAlloc, otherAlloc, spark.length);
      check(decodeAlloc < spark.length / 16, "a decode of read-only chunks copies none on the Java heap: "
          + decodeAlloc + " bytes allocated for " + spark.length + " bytes of chunks");
      check(hitAlloc < 16 * 1024, "a hit copies nothing: " + hitAlloc + " bytes allocated");
      check(otherAlloc < 16 * 1024, "a hit over zeros copies nothing: " + otherAlloc + " bytes allocated");
      checkEq(2, cache.metrics().decodes(), "decodes (the warm-up's and one)");
      other.close();
      hit.close();
      decoded.close();
    }
    checkMemoryBack(bytes0, buffers0, "read-only chunks");
  }

  /**
   * A broadcast of no bytes: no parts, one part of no chunks, one of empty
   * chunks (heap, direct, an empty file's mapped buffer), several such
   * parts, with any codec: each the same empty broadcast (no batches, no
   * rows, no columns).  One part of no bytes among parts of bytes is a
   * FORMAT error naming it.
   */
  private static void noBytes() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    ByteBuffer[] empties = {ByteBuffer.allocate(0), ByteBuffer.allocateDirect(0),
        TestSupport.emptyMappedBuffer(), ByteBuffer.wrap(new byte[4], 2, 0).slice().asReadOnlyBuffer()};
    ByteBuffer[][][] forms = {new ByteBuffer[0][], {{}}, {empties}, {{}, empties, {}}};
    String[] names = {"no parts", "a part of no chunks", "a part of empty chunks", "three parts of none"};
    try (XchgCache cache = XchgCache.create()) {
      for (int f = 0; f < forms.length; f++) {
        for (StreamCodec codec : new StreamCodec[] {StreamCodec.NONE, StreamCodec.LZ4_JAVA, StreamCodec.AUTO}) {
          String what = names[f] + ", " + codec;
          String key = "empty " + f + " " + codec;
          try (XchgCacheHolder h = cache.acquire(key, forms[f], codec, null, null)) {
            checkEq(0, h.numBatches(), what + ": batches");
            checkEq(0, h.numRows(), what + ": rows");
          }
          if (forms[f].length == 1) { // the one-part overload, as a task calls it
            try (XchgCacheHolder h = cache.acquire(key + " one", forms[f][0], codec, null)) {
              checkEq(0, h.numBatches(), what + " (chunks overload): batches");
            }
          }
          int ff = f;
          XchgException e = expectThrows(XchgException.class, what + ", column 0",
              () -> cache.acquire(key + " col", forms[ff], codec, new int[] {0}, null));
          if (e != null) {
            check(e.status() == XchgException.Status.INVALID_ARGUMENT, what + ", column 0: " + e.status());
            check(e.getMessage().contains("column 0 of 0"), what + ", column 0: " + e.getMessage());
          }
        }
      }
      checkEq(0, cache.metrics().failedDecodes(), "failed decodes");
      ByteBuffer[] stream = TestSupport.chunks(spark, CHUNK, TestSupport.Kind.HEAP);
      XchgException e = expectThrows(XchgException.class, "a part of no bytes among others",
          () -> cache.acquire("one empty part", new ByteBuffer[][] {stream, empties}, StreamCodec.LZ4_JAVA,
              null, null));
      if (e != null) {
        check(e.status() == XchgException.Status.FORMAT, "a part of no bytes among others: " + e.status());
        check(e.getMessage().startsWith("part 1: "), "names part 1: " + e.getMessage());
      }
    }
    checkMemoryBack(bytes0, buffers0, "no bytes");
  }

  /**
   * Two IPC streams concatenated into one part (plain, and inside one
   * lz4-java stream as Spark would compress them): FORMAT naming the part
   * and the byte where the second begins, where the first stream's batches
   * alone came out (half the rows, unsaid); the same as two parts: both.
   */
  private static void twoStreamsInOnePart() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    byte[] ipc = data.ipc();
    byte[] two = java.util.Arrays.copyOf(ipc, 2 * ipc.length);
    System.arraycopy(ipc, 0, two, ipc.length, ipc.length);
    try (XchgCache cache = XchgCache.create()) {
      String want = "part 0: bytes follow its IPC stream's end-of-stream marker, from byte " + ipc.length;
      for (boolean lz4 : new boolean[] {false, true}) {
        byte[] bytes = lz4 ? TestSupport.sparkLz4(two) : two;
        StreamCodec codec = lz4 ? StreamCodec.LZ4_JAVA : StreamCodec.NONE;
        XchgException e = expectThrows(XchgException.class, "two streams in one part, " + codec,
            () -> cache.acquire("two", TestSupport.chunks(bytes, CHUNK, TestSupport.Kind.MIXED), codec, null).close());
        if (e != null) {
          check(e.status() == XchgException.Status.FORMAT, "two streams in one part: " + e.status());
          check(e.getMessage().startsWith(want), "two streams in one part: " + e.getMessage() + ", want " + want);
        }
      }
      ByteBuffer[] one = TestSupport.chunks(ipc, CHUNK, TestSupport.Kind.HEAP);
      try (XchgCacheHolder h = cache.acquire("two parts", new ByteBuffer[][] {one, one}, StreamCodec.NONE, null, null)) {
        checkEq(2 * data.rows(), h.numRows(), "two parts: rows");
      }
    }
    checkMemoryBack(bytes0, buffers0, "two streams in one part");
  }

  /**
   * A decoder held up in its own kill check (asked while decoding); meanwhile
   * two waiters are killed, one by its check returning true, one by its
   * check throwing.  The decode goes on and succeeds for the decoder.
   */
  private static void killedWaiter() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgCache cache = XchgCache.create(new XchgCache.Options().waitCheck(Duration.ofMillis(10)));
    CountDownLatch decoding = new CountDownLatch(1);
    CountDownLatch waitersDone = new CountDownLatch(2);
    BooleanSupplier slowDecoder = () -> {
      decoding.countDown();
      try {
        waitersDone.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return false;
    };
    List<Thread> threads = new ArrayList<>();
    threads.add(start("decoder", () -> {
      try (XchgCacheHolder h =
          cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA, slowDecoder)) {
        checkValues(h, "decoder");
      }
    }));
    check(decoding.await(60, TimeUnit.SECONDS), "the decoder started");
    AtomicBoolean kill = new AtomicBoolean();
    CountDownLatch asked = new CountDownLatch(2);
    threads.add(start("killed", () -> {
      XchgException e = expectThrows(XchgException.class, "killed waiter", () ->
          cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA, () -> {
            asked.countDown();
            return kill.get();
          }));
      if (e != null) {
        check(e.isCancelled(), "killed waiter: status CANCELLED, got " + e.status());
        check(e.getMessage().contains("cancelled"), "killed waiter: message " + e.getMessage());
      }
      waitersDone.countDown();
    }));
    final class TaskKilled extends RuntimeException {
      private static final long serialVersionUID = 1L;
    }
    threads.add(start("throwing", () -> {
      expectThrows(TaskKilled.class, "kill check that throws", () ->
          cache.acquire("b", sparkChunks(TestSupport.Kind.DIRECT), StreamCodec.LZ4_JAVA, () -> {
            asked.countDown();
            if (kill.get()) throw new TaskKilled();
            return false;
          }));
      waitersDone.countDown();
    }));
    check(asked.await(60, TimeUnit.SECONDS), "both waiters were asked while waiting");
    kill.set(true);
    join(threads);
    XchgCacheMetrics m = cache.metrics();
    checkEq(1, m.decodes(), "decodes");
    checkEq(2, m.cancellations(), "cancellations");
    checkEq(3, m.acquisitions(), "acquisitions");
    cache.close();
    checkMemoryBack(bytes0, buffers0, "after the killed waiters");
  }

  /**
   * The first acquirer's bytes are corrupt (one flipped byte in an lz4-java
   * block): it gets the format error; the waiters, whose bytes are good,
   * start over and one of them decodes for all.
   */
  private static void failingSource() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgCache cache = XchgCache.create(new XchgCache.Options().waitCheck(Duration.ofMillis(10)));
    byte[] bad = spark.clone();
    bad[bad.length / 2] ^= 0x5a;
    CountDownLatch decoding = new CountDownLatch(1);
    CountDownLatch waiting = new CountDownLatch(3);
    AtomicBoolean released = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    threads.add(start("bad-decoder", () -> {
      XchgException e = expectThrows(XchgException.class, "corrupt bytes", () ->
          cache.acquire("b", TestSupport.chunks(bad, CHUNK, TestSupport.Kind.HEAP),
              StreamCodec.LZ4_JAVA, () -> {
                decoding.countDown();
                // Hold the decode up until every waiter waits.
                while (!released.get()) {
                  try {
                    if (waiting.await(10, TimeUnit.MILLISECONDS)) released.set(true);
                  } catch (InterruptedException ie) {
                    return true;
                  }
                }
                return false;
              }));
      if (e != null) {
        check(e.status() == XchgException.Status.FORMAT, "corrupt bytes: status" + ": " + e.status());
        check(e.getMessage().matches(".*(byte|offset).*"),
            "corrupt bytes: the message names where: " + e.getMessage());
        System.out.println("     corrupt bytes said: " + e.getMessage());
      }
    }));
    check(decoding.await(60, TimeUnit.SECONDS), "the bad decoder started");
    for (int i = 0; i < 3; i++) {
      String name = "waiter-" + i;
      threads.add(start(name, () -> {
        try (XchgCacheHolder h = cache.acquire("b", sparkChunks(TestSupport.Kind.MIXED),
            StreamCodec.LZ4_JAVA, () -> {
              waiting.countDown();
              return false;
            })) {
          checkValues(h, name);
        }
      }));
    }
    join(threads);
    XchgCacheMetrics m = cache.metrics();
    checkEq(1, m.failedDecodes(), "failed decodes");
    check(m.decodes() >= 2 && m.decodes() <= 4, "decodes (the failed one, then one retry for all, "
        + "or more if a waiter released before another retried): " + m.decodes());
    cache.close();
    checkMemoryBack(bytes0, buffers0, "after the failing source");
  }

  private static void badBytes() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    try (XchgCache cache = XchgCache.create()) {
      byte[] cut = java.util.Arrays.copyOf(spark, spark.length - 1000);
      XchgException e = expectThrows(XchgException.class, "truncated", () ->
          cache.acquire("b", TestSupport.chunks(cut, CHUNK, TestSupport.Kind.DIRECT),
              StreamCodec.LZ4_JAVA, null));
      if (e != null) {
        check(e.status() == XchgException.Status.IO, "truncated: status" + ": " + e.status());
        System.out.println("     truncated said: " + e.getMessage());
      }
      // Plain IPC declared as lz4-java: a format error, not a crash.
      e = expectThrows(XchgException.class, "wrong codec", () ->
          cache.acquire("b", TestSupport.chunks(data.ipc(), CHUNK, TestSupport.Kind.HEAP),
              StreamCodec.LZ4_JAVA, null));
      if (e != null) check(e.status() == XchgException.Status.FORMAT, "wrong codec" + ": " + e.status());
      // A decoder killed part way (its kill check is asked while decoding).
      java.util.concurrent.atomic.AtomicInteger asks = new java.util.concurrent.atomic.AtomicInteger();
      e = expectThrows(XchgException.class, "decoder killed", () ->
          cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA,
              () -> asks.incrementAndGet() > 3));
      if (e != null) check(e.isCancelled(), "decoder killed: CANCELLED, got " + e.status());
      check(asks.get() > 3, "the decoder's kill check was asked while decoding: " + asks.get());
      // The failures were not cached: good bytes under the same key decode.
      try (XchgCacheHolder h = cache.acquire("b", sparkChunks(TestSupport.Kind.MIXED),
          StreamCodec.AUTO, null)) {
        checkValues(h, "after failures");
      }
      checkEq(3, cache.metrics().failedDecodes(), "failed decodes");
    }
    checkMemoryBack(bytes0, buffers0, "after bad bytes");
  }

  private static void columnsAndParts() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    TestSupport.Broadcast second = TestSupport.genBroadcast(30_000, 2);
    byte[] secondSpark = TestSupport.sparkLz4(second.ipc());
    try (XchgCache cache = XchgCache.create()) {
      ByteBuffer[][] parts = {sparkChunks(TestSupport.Kind.HEAP),
          TestSupport.chunks(secondSpark, 4096, TestSupport.Kind.MIXED)};
      try (XchgCacheHolder h = cache.acquire("two", parts, StreamCodec.LZ4_JAVA, new int[] {2, 0}, null)) {
        checkEq(data.rows() + second.rows(), h.numRows(), "two parts: rows");
        ColumnChecksum str = h.columnChecksum(0), k = h.columnChecksum(1);
        checkEq(data.sums()[2] + second.sums()[2], str.sum(), "two parts: d_str sum");
        checkEq(data.sums()[0] + second.sums()[0], k.sum(), "two parts: k sum");
        try (XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
          h.exportSchema(schema);
          long at = schema.memoryAddress();
          checkEq(2, countChildren(at), "two parts: columns");
          check("d_str".equals(TestHooks.schemaName(at, 0)), "column 0 is d_str");
          check("u".equals(TestHooks.schemaFormat(at, 0)), "d_str is utf8");
          check("k".equals(TestHooks.schemaName(at, 1)), "column 1 is k");
          check("l".equals(TestHooks.schemaFormat(at, 1)), "k is int64");
        }
      }
      // Plain IPC (no stream codec), in small heap and direct chunks.
      try (XchgCacheHolder h = cache.acquire("plain",
          TestSupport.chunks(data.ipc(), 100_003, TestSupport.Kind.MIXED), StreamCodec.NONE, null)) {
        checkValues(h, "plain IPC");
      }
    }
    checkMemoryBack(bytes0, buffers0, "after parts");
  }

  private static int countChildren(long schema) {
    int n = 0;
    while (true) {
      try {
        TestHooks.schemaFormat(schema, n);
        n++;
      } catch (IndexOutOfBoundsException e) {
        return n;
      }
    }
  }

  /** Arrays and streams exported stay valid after release and close, and free everything. */
  private static void exportsOutlive() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgCache cache = XchgCache.create();
    XchgCacheHolder h = cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA, null);
    XchgArrowArray[] arrays = new XchgArrowArray[(int) h.numBatches()];
    for (int i = 0; i < arrays.length; i++) {
      arrays[i] = Xchg.allocateArrowArray();
      if (i % 2 == 0) h.exportBatch(i, arrays[i]);
      else h.exportBatch(i, arrays[i].memoryAddress()); // as with Arrow Java's ArrowArray
    }
    h.close();
    cache.close();
    check(TestSupport.liveBytes() > bytes0, "exported batches still hold their buffers");
    long rows = 0;
    for (XchgArrowArray a : arrays) rows += TestHooks.arrayLength(a.memoryAddress());
    checkEq(data.rows(), rows, "rows of the exported batches after close");
    for (XchgArrowArray a : arrays) a.close();
    checkMemoryBack(bytes0, buffers0, "after the exported arrays were released");
  }

  /**
   * exportBatch, exportStream and exportSchema into a struct that still
   * holds an array, a stream or a schema are refused (overwritten, its
   * release would be lost, and the decoded broadcast with it), the struct
   * left as it was; native memory back once everything is released.
   */
  private static void fullStructs() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgCache cache = XchgCache.create();
    try (XchgCacheHolder h = cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA, null);
        XchgArrowArray a = Xchg.allocateArrowArray();
        XchgArrowArrayStream s = Xchg.allocateArrowArrayStream();
        XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
      check(h.numBatches() >= 2, "two batches at least");
      h.exportBatch(0, a);
      long rows = TestHooks.arrayLength(a.memoryAddress());
      for (boolean typed : new boolean[] {true, false}) {
        String what = typed ? "exportBatch into a full typed struct" : "exportBatch into a full struct by address";
        IllegalStateException e = expectThrows(IllegalStateException.class, what, () -> {
          if (typed) h.exportBatch(1, a);
          else h.exportBatch(1, a.memoryAddress());
        });
        if (e != null) check(e.getMessage().contains("still holds an array: release it"), what + ": " + e.getMessage());
        checkEq(rows, TestHooks.arrayLength(a.memoryAddress()), what + ": left as it was");
      }
      h.exportStream(s);
      IllegalStateException e = expectThrows(IllegalStateException.class, "exportStream into a full struct",
          () -> h.exportStream(s.memoryAddress()));
      if (e != null) check(e.getMessage().contains("still holds a stream: release it"), "exportStream: " + e.getMessage());
      h.exportSchema(schema);
      String name = TestHooks.schemaName(schema.memoryAddress(), 0);
      e = expectThrows(IllegalStateException.class, "exportSchema into a full struct", () -> h.exportSchema(schema));
      if (e != null) check(e.getMessage().contains("still holds a schema: release it"), "exportSchema: " + e.getMessage());
      check(name.equals(TestHooks.schemaName(schema.memoryAddress(), 0)), "exportSchema: left as it was");
      a.release();
      h.exportBatch(1, a); // once released: reused
      s.release();
      h.exportStream(s);
    }
    cache.close();
    checkMemoryBack(bytes0, buffers0, "after exports into full structs were refused");
  }

  /** A retain time under 1 ms is a limit (it was 0 ms in the native options: no limit). */
  private static void retainUnderMillisecond() throws Exception {
    try (XchgCache cache = XchgCache.create(
             new XchgCache.Options().retainBytes(1L << 40).retainTime(Duration.ofNanos(1000)))) {
      cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA, null).close();
      checkEq(1, cache.metrics().retained(), "retained once released");
      Thread.sleep(20);
      cache.trim();
      checkEq(0, cache.metrics().retained(), "retained once its time passed");
      checkEq(1, cache.metrics().evictions(), "evictions");
    }
  }

  private static void misuse() throws Exception {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    XchgCache cache = XchgCache.create();
    XchgCacheHolder h = cache.acquire("b", sparkChunks(TestSupport.Kind.DIRECT), StreamCodec.LZ4_JAVA, null);
    expectThrows(IllegalStateException.class, "close with a holder held", cache::close);
    XchgArrowArray array = Xchg.allocateArrowArray();
    expectThrows(IndexOutOfBoundsException.class, "batch out of range",
        () -> h.exportBatch(h.numBatches(), array));
    array.close();
    expectThrows(IllegalStateException.class, "a closed struct", () -> h.exportBatch(0, array));
    expectThrows(IllegalArgumentException.class, "null address", () -> h.exportBatch(0, 0));
    XchgException e = expectThrows(XchgException.class, "column out of range", () -> h.columnChecksum(3));
    if (e != null) check(e.status() == XchgException.Status.INVALID_ARGUMENT, "column out of range" + ": " + e.status());
    expectThrows(XchgException.class, "column index out of range at acquire", () ->
        cache.acquire("b", new ByteBuffer[][] {sparkChunks(TestSupport.Kind.DIRECT)}, StreamCodec.LZ4_JAVA,
            new int[] {5}, null));
    h.close();
    check(h.isClosed(), "closed");
    h.close(); // a second close: no-op
    expectThrows(IllegalStateException.class, "use after close", h::numRows);
    cache.close();
    cache.close(); // closing twice: no-op
    expectThrows(IllegalStateException.class, "acquire after close", () ->
        cache.acquire("b", sparkChunks(TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA, null));
    expectThrows(IllegalStateException.class, "metrics after close", cache::metrics);
    expectThrows(IllegalArgumentException.class, "bad options", () ->
        XchgCache.create(new XchgCache.Options().waitCheck(Duration.ZERO)));
    // A bad option is refused by its setter, the error naming it and its value.
    // A billion years does not fit the native options' milliseconds (it threw ArithmeticException in create).
    Duration eons = Duration.ofDays(365L * 1_000_000_000);
    String[][] named = {{"waitCheck", "PT0.0000005S"}, {"retainBytes", "-1"}, {"retainTime", "PT-5S"},
        {"hostRetainBytes", "-1"}, {"hostRetainTime", "PT-5S"}, {"waitCheck", eons.toString()},
        {"retainTime", eons.toString()}, {"hostRetainTime", eons.toString()}};
    TestSupport.Body[] setters = {
        () -> new XchgCache.Options().waitCheck(Duration.ofNanos(500)),
        () -> new XchgCache.Options().retainBytes(-1),
        () -> new XchgCache.Options().retainTime(Duration.ofSeconds(-5)),
        () -> new XchgCache.Options().hostRetainBytes(-1),
        () -> new XchgCache.Options().hostRetainTime(Duration.ofSeconds(-5)),
        () -> new XchgCache.Options().waitCheck(eons),
        () -> new XchgCache.Options().retainTime(eons),
        () -> new XchgCache.Options().hostRetainTime(eons)};
    for (int i = 0; i < setters.length; i++) {
      IllegalArgumentException bad = expectThrows(IllegalArgumentException.class, named[i][0], setters[i]);
      if (bad != null)
        check(bad.getMessage().startsWith(named[i][0] + " must") && bad.getMessage().endsWith(named[i][1]),
            named[i][0] + ": the error names the option and its value: " + bad.getMessage());
    }
    try (XchgCache other = XchgCache.create()) {
      expectThrows(NullPointerException.class, "null chunk", () ->
          other.acquire("b", new ByteBuffer[] {null}, StreamCodec.NONE, null));
    }
    checkMemoryBack(bytes0, buffers0, "after misuse");
  }
}
