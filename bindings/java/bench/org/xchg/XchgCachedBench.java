package org.xchg;

import com.github.luben.zstd.Zstd;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Shape `cache` of shared/bench/SHAPES.md from the JVM: a cached relation
 * held as one IPC RecordBatch payload per 10,000-row batch, as {@code
 * byte[]} and as direct buffers, body compression none / LZ4_FRAME / ZSTD,
 * read full and narrow (c4), every selected value summed and checked
 * against the generator's sums on both sides.
 *
 * <p>Two modes, the same work on both sides.  {@code batch}: groups of
 * payloads (--group, default 50) read whole, then summed: xchg with
 * XchgBatchDecoder.decodeMany on 1 thread and on all cores, the JVM with a
 * reader per slot of the group (its buffers kept across groups) on as many
 * threads; both then sum the group's held batches split over those
 * threads.  {@code tasks}, as Spark runs a cached scan: T task threads each
 * read their own share of the payloads one at a time (decode, sum,
 * release; parallelism across tasks, not inside a read).  Every timed run
 * starts with the caches evicted (evictCaches).  JVM baseline, done as well as the JVM can, as
 * Spark's Arrow cache serializer does: parse the RecordBatch flatbuffer
 * (IpcMessages), copy the selected buffers' ranges into one reused direct
 * buffer (from the heap; from a direct payload, slices), decompress each
 * buffer direct to direct into reused buffers with the codecs Spark's
 * Arrow path uses (lz4-java's native LZ4 decompressor over the frame's
 * blocks, zstd-jni), then sum the values.  Medians of --runs runs after one
 * warm-up, runs of every case interleaved.
 *
 * <pre>
 *   bindings/java/bench.sh cached [--json] [--runs K] [--trusted] [--rows N] [--codecs none,lz4,zstd]
 *                                 [--modes batch,tasks] [--group 50] [--decode-only] [--no-stall]
 * </pre>
 *
 * <p>Both sides sum with the same Java code (Checksum.addBatch), on as many
 * threads: xchg's exported buffers are read in place through direct
 * ByteBuffer views made as Arrow Java's import reaches them (ExportViews).
 * {@code --decode-only} leaves the sums out on both sides (the values are
 * then not checked).  {@code --trusted} reads with bounds checks only
 * (XchgValidation.BOUNDS).  Per case also: the Java heap bytes allocated
 * per batch by the reading alone (the case run once more without the sums
 * and untimed, ThreadMXBean.getThreadAllocatedBytes summed over every
 * thread), and the heap bytes copied.  Last, unless --no-stall: the longest
 * stall of a thread that allocates all along, with no reads running and
 * during full heap reads of each side on one thread.
 */
public final class XchgCachedBench {
  private XchgCachedBench() {}

  static final int[] FULL = {0, 1, 2, 3, 4, 5};
  static final int[] NARROW = {4};
  static int group = 50; // payloads per decodeMany in batch mode (--group)
  static final int EVICT_BYTES = 64 << 20; // twice the host's 32 MiB L3

  /** One measured case. */
  record Case(String codec, String read, String source, String mode, String side, int threads) {
    Case jvmTwin() {
      return new Case(codec, read, source, mode, "jvm", threads);
    }
  }

  public static void main(String[] args) throws Exception {
    long rows = 5_000_000;
    int runs = 5;
    boolean json = false;
    boolean touch = true;
    boolean stall = true;
    XchgValidation validation = XchgValidation.FULL;
    String cli = null;
    String[] codecs = {"none", "lz4", "zstd"};
    String[] modes = {"batch", "tasks"};
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--cli" -> cli = args[++i];
        case "--json" -> json = true;
        case "--codecs" -> codecs = args[++i].split(",");
        case "--modes" -> modes = args[++i].split(",");
        case "--decode-only" -> touch = false;
        case "--trusted" -> validation = XchgValidation.BOUNDS;
        case "--no-stall" -> stall = false;
        case "--group" -> group = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    int cores = Runtime.getRuntime().availableProcessors();
    List<String> lines = new ArrayList<>();
    if (!json)
      System.out.printf("cache shape: %,d rows, payloads of 10,000 rows; %d cores; validation %s; median of "
          + "%d runs after 1 warm-up (min-max); alloc = Java heap bytes per batch read%n", rows, cores,
          validation, runs);
    CacheShape.Data none = null;
    for (String codec : codecs) {
      CacheShape.Data data = CacheShape.gen(cli, codec, rows);
      if (codec.equals("none")) none = data;
      try (Bench b = new Bench(data, cores, validation)) {
        for (String read : new String[] {"full", "narrow"}) {
          int[] cols = read.equals("full") ? FULL : NARROW;
          List<Case> cases = new ArrayList<>();
          for (String mode : modes)
            for (String source : new String[] {"heap", "direct"})
              for (String side : new String[] {"xchg", "jvm"})
                for (int threads : new int[] {1, cores}) cases.add(new Case(codec, read, source, mode, side, threads));
          double[][] ms = new double[cases.size()][runs], decodeMs = new double[cases.size()][runs];
          long[] copied = new long[cases.size()];
          for (int run = -1; run < runs; run++) {
            for (int c = 0; c < cases.size(); c++) {
              b.evictCaches();
              b.decodeNanos = 0;
              long t0 = System.nanoTime();
              copied[c] = b.run(cases.get(c), cols, touch);
              double t = (System.nanoTime() - t0) / 1e6;
              if (run >= 0) {
                ms[c][run] = t;
                decodeMs[c][run] = b.decodeNanos / 1e6;
              }
            }
          }
          double[] alloc = new double[cases.size()];
          for (int c = 0; c < cases.size(); c++) alloc[c] = b.allocationPerBatch(cases.get(c), cols);
          report(cases, ms, decodeMs, copied, alloc, b.selectedBytes(cols), validation, json, lines);
        }
      }
    }
    if (stall && none != null) {
      try (Bench b = new Bench(none, cores, validation)) {
        stalls(b, json, lines);
      }
    }
    if (json) System.out.println("{\"results\":[\n" + String.join(",\n", lines) + "\n]}");
  }

  static double median(double[] values) {
    double[] t = values.clone();
    Arrays.sort(t);
    return t[t.length / 2];
  }

  static void report(List<Case> cases, double[][] ms, double[][] decodeMs, long[] copied, double[] alloc,
      long selected, XchgValidation validation, boolean json, List<String> lines) {
    for (int c = 0; c < cases.size(); c++) {
      Case k = cases.get(c);
      double[] t = ms[c].clone();
      Arrays.sort(t);
      double median = t[t.length / 2], min = t[0], max = t[t.length - 1];
      // batch mode only: there the decoding and the sums are phases of their own
      String decode = k.mode().equals("batch") ? String.format(Locale.ROOT, "%.2f", median(decodeMs[c])) : "null";
      if (json) {
        lines.add(String.format(Locale.ROOT, "{\"codec\":\"%s\",\"read\":\"%s\",\"source\":\"%s\","
                + "\"mode\":\"%s\",\"side\":\"%s\",\"threads\":%d,\"validation\":\"%s\",\"median_ms\":%.2f,"
                + "\"min_ms\":%.2f,\"max_ms\":%.2f,\"decode_median_ms\":%s,\"heap_bytes_copied\":%d,"
                + "\"selected_bytes\":%d,\"jvm_alloc_bytes_per_batch\":%.1f}",
            k.codec(), k.read(), k.source(), k.mode(), k.side(), k.threads(),
            validation.name().toLowerCase(Locale.ROOT), median, min, max, decode, copied[c], selected, alloc[c]));
        continue;
      }
      String ratio = "";
      if (k.side().equals("xchg"))
        ratio = String.format(Locale.ROOT, "  xchg/jvm %.3f", median / median(ms[cases.indexOf(k.jvmTwin())]));
      System.out.printf(Locale.ROOT, "%-5s %-6s %-6s %-5s %-4s %2d thr: %8.2f ms (%.2f-%.2f)%s  alloc %6.1f  "
              + "heap copied %,d (%.3fx selected)%s%n", k.codec(), k.read(), k.source(), k.mode(), k.side(),
          k.threads(), median, min, max, decode.equals("null") ? "" : "  decoding " + decode + " ms", alloc[c],
          copied[c], selected == 0 ? 0.0 : (double) copied[c] / selected, ratio);
    }
  }

  /**
   * The longest pause seen by a thread that allocates all along (a short
   * array a time, kept for a while in a ring so that young collections have
   * work), over about a second: with no reads running, with a thread as
   * busy as a reader that calls no native code and allocates nothing
   * (busyPass: what any work on the other core adds), then during full
   * heap reads of uncompressed payloads by each side on one thread (xchg:
   * decodeMany on the caller; JVM: its copies), repeated.
   */
  static void stalls(Bench b, boolean json, List<String> lines) throws Exception {
    String[] what = {"none", "busy", "xchg", "jvm"};
    double[][] worst = new double[what.length][3];
    for (int round = 0; round < 3; round++) {
      for (int w = 0; w < what.length; w++) {
        AtomicBoolean reading = new AtomicBoolean(true);
        Case k = new Case("none", "full", "heap", "batch", what[w], 1);
        Thread reader = new Thread(() -> {
          try {
            while (reading.get()) {
              switch (k.side()) {
                case "none" -> Thread.sleep(1);
                case "busy" -> b.busyPass();
                default -> b.run(k, FULL, false);
              }
            }
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        });
        reader.start();
        worst[w][round] = longestAllocationStallMs(1000);
        reading.set(false);
        reader.join();
      }
    }
    for (int w = 0; w < what.length; w++) {
      double median = median(worst[w]), max = Arrays.stream(worst[w]).max().getAsDouble();
      if (json)
        lines.add(String.format(Locale.ROOT, "{\"stall\":\"allocating thread\",\"reads\":\"%s\",\"codec\":\"none\","
            + "\"read\":\"full\",\"source\":\"heap\",\"threads\":1,\"median_ms\":%.3f,\"max_ms\":%.3f}", what[w],
            median, max));
      else
        System.out.printf(Locale.ROOT, "longest stall of an allocating thread, reads: %-4s  %.3f ms (max of 3: %.3f)%n",
            what[w], median, max);
    }
  }

  static double longestAllocationStallMs(long forMs) {
    Object[] ring = new Object[4096];
    long end = System.nanoTime() + forMs * 1_000_000, last = System.nanoTime(), worst = 0;
    for (int i = 0; ; i++) {
      ring[i & 4095] = new byte[64 + (i & 255)];
      long now = System.nanoTime();
      worst = Math.max(worst, now - last);
      last = now;
      if (now > end) break;
    }
    return worst / 1e6;
  }

  /** The payloads of one codec and what reads them. */
  static final class Bench implements AutoCloseable {
    final CacheShape.Data data;
    final byte[][] heap;
    final ByteBuffer[] direct;
    final byte[][][] heapGroups; // the payloads by group, as decodeMany takes them
    final ByteBuffer[][] directGroups;
    final int[] bufferCounts;
    final ExecutorService pool;
    final int cores;
    final XchgValidation validation;
    final JvmReader[][] jvmSlots = new JvmReader[2][]; // batch mode's held reads: [full, narrow][group]
    final byte[] evict = new byte[EVICT_BYTES];
    long decodeNanos; // batch mode: the run's time in decodeMany (xchg) or the loads (JVM), not the sums

    Bench(CacheShape.Data data, int cores, XchgValidation validation) {
      this.data = data;
      this.cores = cores;
      this.validation = validation;
      heap = data.payloads().toArray(new byte[0][]);
      direct = new ByteBuffer[heap.length];
      for (int i = 0; i < heap.length; i++) {
        direct[i] = ByteBuffer.allocateDirect(heap[i].length);
        direct[i].put(heap[i]).flip();
      }
      int groups = (heap.length + group - 1) / group;
      heapGroups = new byte[groups][][];
      directGroups = new ByteBuffer[groups][];
      for (int g = 0; g < groups; g++) {
        int first = g * group, end = Math.min(heap.length, first + group);
        heapGroups[g] = Arrays.copyOfRange(heap, first, end);
        directGroups[g] = Arrays.copyOfRange(direct, first, end);
      }
      bufferCounts = IpcMessages.bufferCounts(data.schema());
      pool = Executors.newFixedThreadPool(cores);
    }

    /**
     * Writes every cache line of twice the last-level cache, so that
     * each timed run starts with none of the payloads (nor their page-table
     * entries) cached, as a scan over a cached relation larger than the
     * cache does: else a case would run warm or cold by where it falls in
     * the order (a side's one-thread run right after the heap cases, the
     * other's right after a run over the same payloads).
     */
    void evictCaches() {
      for (int i = 0; i < evict.length; i += 64) evict[i]++;
    }

    long selectedBytes(int[] cols) {
      long n = 0;
      for (byte[] p : heap)
        n += IpcMessages.layout(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0, bufferCounts, cols)
            .selectedBytes();
      return n;
    }

    /** Runs one case, checks its sums when it made them; returns the heap bytes it copied. */
    long run(Case k, int[] cols, boolean touch) throws Exception {
      long[][] acc = new long[3][CacheShape.COLUMNS];
      long copied;
      if (k.side().equals("jvm"))
        copied = k.mode().equals("tasks") ? runJvm(k, cols, touch, acc) : runJvmBatch(k, cols, touch, acc);
      else if (k.mode().equals("tasks")) copied = runXchgTasks(k, cols, touch, acc);
      else copied = runXchgBatch(k, cols, touch, acc);
      for (int c : touch ? cols : new int[0])
        if (acc[0][c] != data.sums()[c] || acc[1][c] != data.nulls()[c])
          throw new IllegalStateException(k + ": c" + c + " sum " + Long.toUnsignedString(acc[0][c])
              + " nulls " + acc[1][c] + ", want " + Long.toUnsignedString(data.sums()[c]) + " / "
              + data.nulls()[c]);
      return copied;
    }

    /**
     * The Java heap bytes per batch that reading alone allocates: the case
     * run once more without the sums, every thread's allocation summed
     * (ThreadMXBean.getThreadAllocatedBytes over all live threads: the
     * pools' threads live on, so none is missed).
     */
    double allocationPerBatch(Case k, int[] cols) throws Exception {
      long before = allocatedByAllThreads();
      run(k, cols, false);
      return (double) (allocatedByAllThreads() - before) / heap.length;
    }

    static long allocatedByAllThreads() {
      com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      long sum = 0;
      for (long b : mx.getThreadAllocatedBytes(mx.getAllThreadIds())) sum += Math.max(b, 0);
      return sum;
    }

    XchgBatchDecoder decoder(int[] cols, int threads) {
      return XchgBatchDecoder.open(data.schema(),
          new XchgBatchDecoder.Options().columns(cols).threads(threads).validation(validation));
    }

    long runXchgBatch(Case k, int[] cols, boolean touch, long[][] acc) throws Exception {
      try (XchgBatchDecoder r = decoder(cols, k.threads() == 1 ? 1 : 0)) {
        XchgArrowArray[] arrays = new XchgArrowArray[group];
        for (int i = 0; i < group; i++) arrays[i] = Xchg.allocateArrowArray();
        XchgArrowArray[] last = Arrays.copyOf(arrays, heapGroups[heapGroups.length - 1].length);
        for (int g = 0; g < heapGroups.length; g++) {
          XchgArrowArray[] at = g == heapGroups.length - 1 ? last : arrays;
          long t0 = System.nanoTime();
          if (k.source().equals("heap")) r.decodeMany(heapGroups[g], (long) g * group, at);
          else r.decodeMany(directGroups[g], (long) g * group, at);
          decodeNanos += System.nanoTime() - t0;
          if (touch) sumXchg(at, cols, k.threads(), acc);
          for (XchgArrowArray a : at) a.release();
        }
        for (XchgArrowArray a : arrays) a.close();
        return r.heapBytesCopied();
      }
    }

    /**
     * T task threads, each reading its share of the payloads one at a time
     * with one decoder (on the calling thread: parallelism is across tasks),
     * summing each batch and releasing it before the next.
     */
    long runXchgTasks(Case k, int[] cols, boolean touch, long[][] acc) throws Exception {
      int threads = k.threads();
      try (XchgBatchDecoder r = decoder(cols, 1)) {
        List<Future<Checksum>> parts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int from = heap.length * t / threads, to = heap.length * (t + 1) / threads;
          parts.add(pool.submit(() -> {
            Checksum s = new Checksum(bufferCounts, cols);
            ByteBuffer[] views = new ByteBuffer[16];
            try (XchgArrowArray a = Xchg.allocateArrowArray()) {
              for (int i = from; i < to; i++) {
                if (k.source().equals("heap")) r.decode(heap[i], 0, heap[i].length, i, a);
                else r.decode(direct[i], i, a);
                if (touch) sumExport(s, a.memoryAddress(), cols, views);
                a.release();
              }
            }
            return s;
          }));
        }
        for (Future<Checksum> f : parts) f.get().addTo(acc);
        return r.heapBytesCopied();
      }
    }

    /**
     * Sums a decoded batch, its buffers read in place as Arrow Java's
     * import reaches them (ExportViews), through the very call the JVM side
     * sums the views its load made with (Checksum.addBatch): summing loops
     * called from elsewhere compiled differently, and read the same bytes
     * up to 15% slower.
     */
    void sumExport(Checksum s, long batch, int[] cols, ByteBuffer[] views) {
      s.addBatch(ExportViews.rows(batch), ExportViews.of(batch, cols, bufferCounts, views));
    }

    /**
     * Sums the decoded batches with the JVM side's code (Checksum), split
     * over as many threads as the JVM side uses.
     */
    void sumXchg(XchgArrowArray[] at, int[] cols, int threads, long[][] acc)
        throws Exception {
      for (Checksum s : inParts(threads, at.length, (from, to) -> {
             Checksum part = new Checksum(bufferCounts, cols);
             ByteBuffer[] views = new ByteBuffer[16];
             for (int i = from; i < to; i++) sumExport(part, at[i].memoryAddress(), cols, views);
             return part;
           }))
        s.addTo(acc);
    }

    /** The JVM baseline of tasks mode: each of T threads reads its share one payload at a time. */
    long runJvm(Case k, int[] cols, boolean touch, long[][] acc) throws Exception {
      long copied = 0;
      for (JvmReader j : inParts(k.threads(), heap.length, (from, to) -> {
             JvmReader part = new JvmReader(bufferCounts, cols, touch);
             for (int i = from; i < to; i++) {
               if (k.source().equals("heap")) part.readHeap(heap[i]);
               else part.readDirect(direct[i]);
             }
             return part;
           })) {
        j.sums.addTo(acc);
        copied += j.copied;
      }
      return copied;
    }

    /**
     * The JVM baseline of batch mode, done as decodeMany and the sums are:
     * each group of payloads read whole (split over T threads) into a
     * reader per slot, each with its own buffers kept across groups and
     * runs (as xchg's released buffers serve its next ones), then the
     * group's batches summed (split over T threads), so that both sides
     * hold a group's decoded batches at once before they read them.
     */
    long runJvmBatch(Case k, int[] cols, boolean touch, long[][] acc) throws Exception {
      int threads = k.threads();
      JvmReader[] slots = jvmSlots[cols == FULL ? 0 : 1];
      if (slots == null) {
        slots = jvmSlots[cols == FULL ? 0 : 1] = new JvmReader[group];
        for (int i = 0; i < group; i++) slots[i] = new JvmReader(bufferCounts, cols, false);
      }
      long copied = 0;
      for (JvmReader j : slots) j.copied = 0;
      for (int g = 0; g < heapGroups.length; g++) {
        int n = heapGroups[g].length, first = g * group;
        JvmReader[] at = slots;
        long t0 = System.nanoTime();
        inParts(threads, n, (from, to) -> {
          for (int i = from; i < to; i++) {
            if (k.source().equals("heap")) at[i].loadHeap(heap[first + i]);
            else at[i].loadDirect(direct[first + i]);
          }
          return null;
        });
        decodeNanos += System.nanoTime() - t0;
        if (!touch) continue;
        for (Checksum s : inParts(threads, n, (from, to) -> {
               Checksum part = new Checksum(bufferCounts, cols);
               for (int i = from; i < to; i++) at[i].sumLoaded(part);
               return part;
             }))
          s.addTo(acc);
      }
      for (JvmReader j : slots) copied += j.copied;
      return copied;
    }

    /**
     * Reads every payload's bytes in Java, allocating nothing and calling
     * no native code: the stall measurement's control, a thread as busy
     * as a reading one, so that what a read adds to the pauses of an
     * allocating thread is told from what any busy thread on the other
     * core adds (GC threads share the cores with it).
     */
    void busyPass() {
      long sum = 0;
      for (byte[] p : heap)
        for (int i = 0; i + 8 <= p.length; i += 8) sum += (long) LONGS.get(p, i);
      busySink = sum;
    }

    static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    volatile long busySink; // keeps busyPass's reads from being optimised away

    /** A part of [0, n). */
    interface Part<T> {
      T run(int from, int to) throws Exception;
    }

    /** [0, n) cut into `threads` parts, run on the pool (one thread: on the caller); their results. */
    <T> List<T> inParts(int threads, int n, Part<T> part) throws Exception {
      List<Future<T>> parts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int from = n * t / threads, to = n * (t + 1) / threads;
        parts.add(threads == 1 ? CompletableFuture.completedFuture(part.run(from, to))
                               : pool.submit(() -> part.run(from, to)));
      }
      List<T> results = new ArrayList<>();
      for (Future<T> f : parts) results.add(f.get());
      return results;
    }

    @Override
    public void close() {
      pool.shutdown();
    }
  }

  /**
   * Every selected value of a batch summed, by column: the same code on
   * both sides, over the JVM side's buffers and over views of xchg's.
   */
  static final class Checksum {
    final int[] bufferCounts, cols;
    final long[] sums = new long[CacheShape.COLUMNS], nulls = new long[CacheShape.COLUMNS];

    Checksum(int[] bufferCounts, int[] cols) {
      this.bufferCounts = bufferCounts;
      this.cols = cols;
    }

    void addTo(long[][] acc) {
      for (int c = 0; c < CacheShape.COLUMNS; c++) {
        acc[0][c] += sums[c];
        acc[1][c] += nulls[c];
      }
    }

    /** Sums the views of one batch: each column's buffers in order (validity, values, data). */
    void addBatch(int rows, ByteBuffer[] views) {
      int v = 0; // validity is null without nulls
      for (int c : cols) {
        addColumn(c, rows, views[v], views[v + 1], bufferCounts[c] == 3 ? views[v + 2] : null);
        v += bufferCounts[c];
      }
    }

    void addColumn(int c, int rows, ByteBuffer validity, ByteBuffer values, ByteBuffer data) {
      long s = 0, n = 0;
      switch (c) {
        case 0, 4 -> {
          for (int i = 0; i < rows; i++) s += values.getLong(8 * i);
        }
        case 1 -> {
          for (int i = 0; i < rows; i++) s += values.getInt(4 * i);
        }
        case 2 -> {
          for (int i = 0; i < rows; i++) {
            if (validity != null && ((validity.get(i >> 3) >> (i & 7)) & 1) == 0) n++;
            else s += values.getLong(8 * i);
          }
        }
        case 3 -> {
          int from = values.getInt(0), to = values.getInt(4 * rows);
          for (int j = from; j < to; j++) s += data.get(j) & 0xff;
        }
        default -> {
          for (int i = 0; i < rows; i++) s += (values.get(i >> 3) >> (i & 7)) & 1;
        }
      }
      sums[c] += s;
      nulls[c] += n;
    }
  }

  /**
   * The JVM baseline for one thread: Spark's Arrow cache path, with scratch
   * buffers reused across batches (the best case for it).
   */
  static final class JvmReader {
    static final LZ4SafeDecompressor LZ4 = LZ4Factory.fastestInstance().safeDecompressor();
    final int[] bufferCounts, cols;
    final Checksum sums;
    long copied;
    ByteBuffer selected = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    final ByteBuffer[] out = new ByteBuffer[16]; // one per buffer of a full read

    final boolean touch;

    JvmReader(int[] bufferCounts, int[] cols, boolean touch) {
      this.touch = touch;
      this.bufferCounts = bufferCounts;
      this.cols = cols;
      sums = new Checksum(bufferCounts, cols);
    }

    IpcMessages.Layout layout; // the payload loaded last, and its selected buffers decoded
    ByteBuffer[] views;

    void readHeap(byte[] payload) {
      loadHeap(payload);
      if (touch) sumLoaded(sums);
    }

    void readDirect(ByteBuffer payload) {
      loadDirect(payload);
      if (touch) sumLoaded(sums);
    }

    /** Sums the payload loaded last into s. */
    void sumLoaded(Checksum s) {
      s.addBatch((int) layout.rows(), views);
    }

    void loadHeap(byte[] payload) {
      ByteBuffer wrapped = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
      IpcMessages.Layout l = IpcMessages.layout(wrapped, 0, bufferCounts, cols);
      long total = l.selectedBytes();
      if (selected.capacity() < total)
        selected = ByteBuffer.allocateDirect((int) total * 2).order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer[] views = new ByteBuffer[l.offsets().length];
      int at = 0;
      for (int i = 0; i < views.length; i++) {
        int len = (int) l.lengths()[i];
        if (len == 0) continue;
        selected.put(at, payload, (int) (l.bodyStart() + l.offsets()[i]), len);
        views[i] = selected.slice(at, len).order(ByteOrder.LITTLE_ENDIAN);
        at += len;
      }
      copied += total;
      decompressAll(l, views);
    }

    void loadDirect(ByteBuffer payload) {
      ByteBuffer b = payload.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      IpcMessages.Layout l = IpcMessages.layout(b, 0, bufferCounts, cols);
      ByteBuffer[] views = new ByteBuffer[l.offsets().length];
      for (int i = 0; i < views.length; i++)
        if (l.lengths()[i] > 0)
          views[i] = b.slice((int) (l.bodyStart() + l.offsets()[i]), (int) l.lengths()[i])
              .order(ByteOrder.LITTLE_ENDIAN);
      decompressAll(l, views);
    }

    /** Decompresses the views as needed; they become the loaded payload's. */
    void decompressAll(IpcMessages.Layout l, ByteBuffer[] views) {
      for (int i = 0; i < views.length; i++)
        if (views[i] != null) views[i] = decompress(l.codec(), views[i], i);
      layout = l;
      this.views = views;
    }

    /** The buffer's bytes decompressed (a reused direct buffer per slot), or as they are. */
    ByteBuffer decompress(int codec, ByteBuffer raw, int slot) {
      if (codec == IpcMessages.NONE) return raw;
      long size = raw.getLong(0);
      ByteBuffer src = raw.slice(8, raw.limit() - 8);
      if (size == -1) return src.order(ByteOrder.LITTLE_ENDIAN);
      if (out[slot] == null || out[slot].capacity() < size)
        out[slot] = ByteBuffer.allocateDirect((int) size * 2).order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer dst = out[slot];
      if (codec == IpcMessages.ZSTD) {
        long n = Zstd.decompressDirectByteBuffer(dst, 0, (int) size, src, 0, src.limit());
        if (Zstd.isError(n) || n != size) throw new IllegalStateException("zstd: " + n + " of " + size);
      } else {
        lz4Frame(src, dst, (int) size);
      }
      return dst.slice(0, (int) size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** An LZ4 frame of independent blocks, block by block, direct to direct. */
    static void lz4Frame(ByteBuffer src, ByteBuffer dst, int size) {
      ByteBuffer s = src.order(ByteOrder.LITTLE_ENDIAN);
      if (s.getInt(0) != 0x184D2204) throw new IllegalStateException("not an LZ4 frame");
      int flg = s.get(4) & 0xff;
      if ((flg & 0x20) == 0) throw new IllegalStateException("linked LZ4 blocks");
      int at = 4 + 2 + ((flg & 0x08) != 0 ? 8 : 0) + ((flg & 0x01) != 0 ? 4 : 0) + 1;
      boolean blockChecksums = (flg & 0x10) != 0;
      int done = 0;
      for (;;) {
        int word = s.getInt(at);
        at += 4;
        if (word == 0) break;
        int len = word & 0x7fffffff;
        if ((word & 0x80000000) != 0) {
          dst.put(done, s, at, len);
          done += len;
        } else {
          done += LZ4.decompress(s, at, len, dst, done, size - done);
        }
        at += len + (blockChecksums ? 4 : 0);
      }
      if (done != size) throw new IllegalStateException("LZ4 frame gave " + done + " of " + size + " bytes");
    }
  }
}
