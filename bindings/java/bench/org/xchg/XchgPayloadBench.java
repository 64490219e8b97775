package org.xchg;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What one payload costs, on one thread: shape `cache` (500 payloads of
 * 10,000 rows by default), each round a loop over every payload of one
 * decode into one XchgArrowArray and its release (xchg; with --group N,
 * one decodeMany of N payloads and their releases) or one JvmReader
 * read without the sums (the JVM baseline of XchgCachedBench), nothing
 * else timed: no decoder opened, no thread handed work.  Per case, the
 * thread CPU time (ThreadMXBean.getCurrentThreadCpuTime, which another
 * process on the cores does not add to) and the wall time of a round
 * divided by its payloads, median of the rounds after two warm-up rounds
 * [min-max]; cases take turns round by round.  Last, a round more per
 * case, untimed: the Java heap bytes it allocates per payload
 * (getThreadAllocatedBytes), and for xchg the rows decoded, checked.
 *
 * <pre>
 *   bindings/java/bench.sh payload [--codecs none,lz4,zstd] [--reads narrow,full]
 *                                  [--sources direct,heap] [--sides xchg,jvm] [--trusted] [--rounds 20]
 *                                  [--group 1] [--rows N] [--json]
 * </pre>
 */
public final class XchgPayloadBench {
  private XchgPayloadBench() {}

  static int group; // payloads per xchg call: 1, decode; more, decodeMany (--group)

  /** One measured loop. */
  record Case(String codec, String read, String source, String side) {}

  public static void main(String[] args) throws Exception {
    long rows = 5_000_000;
    int rounds = 20;
    boolean json = false;
    String cli = null;
    String[] codecs = {"none"}, reads = {"narrow", "full"}, sources = {"direct", "heap"}, sides = {"xchg", "jvm"};
    XchgValidation validation = XchgValidation.FULL;
    group = 1;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--cli" -> cli = args[++i];
        case "--json" -> json = true;
        case "--codecs" -> codecs = args[++i].split(",");
        case "--reads" -> reads = args[++i].split(",");
        case "--sources" -> sources = args[++i].split(",");
        case "--sides" -> sides = args[++i].split(",");
        case "--trusted" -> validation = XchgValidation.BOUNDS;
        case "--group" -> group = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (rounds < 1 || group < 1) throw new IllegalArgumentException("--rounds and --group must be at least 1");
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    List<String> lines = new ArrayList<>();
    if (!json)
      System.out.printf("per payload on one thread, validation %s: thread CPU and wall µs, median of %d "
          + "rounds after 2 warm-ups [min-max]; alloc = Java heap bytes per payload; xchg: %s%n", validation, rounds,
          group == 1 ? "decode" : "decodeMany of " + group);
    for (String codec : codecs) {
      CacheShape.Data data = CacheShape.gen(cli, codec, rows);
      byte[][] heap = data.payloads().toArray(new byte[0][]);
      ByteBuffer[] direct = new ByteBuffer[heap.length];
      for (int i = 0; i < heap.length; i++) {
        direct[i] = ByteBuffer.allocateDirect(heap[i].length);
        direct[i].put(heap[i]).flip();
      }
      int[] bufferCounts = IpcMessages.bufferCounts(data.schema());
      List<Case> cases = new ArrayList<>();
      for (String read : reads)
        for (String source : sources)
          for (String side : sides) cases.add(new Case(codec, read, source, side));
      List<Loop> loops = new ArrayList<>();
      for (Case k : cases) loops.add(new Loop(k, data, heap, direct, bufferCounts, validation));
      double[][] cpu = new double[cases.size()][rounds], wall = new double[cases.size()][rounds];
      for (int round = -2; round < rounds; round++) {
        for (int c = 0; c < cases.size(); c++) {
          long c0 = mx.getCurrentThreadCpuTime(), w0 = System.nanoTime();
          loops.get(c).run(false);
          long w1 = System.nanoTime(), c1 = mx.getCurrentThreadCpuTime();
          if (round < 0) continue;
          cpu[c][round] = (c1 - c0) / 1e3 / heap.length;
          wall[c][round] = (w1 - w0) / 1e3 / heap.length;
        }
      }
      for (int c = 0; c < cases.size(); c++) {
        Case k = cases.get(c);
        double alloc = loops.get(c).allocationPerPayload();
        double[] tc = cpu[c].clone(), tw = wall[c].clone();
        Arrays.sort(tc);
        Arrays.sort(tw);
        double mc = tc[rounds / 2], mw = tw[rounds / 2];
        if (json) {
          lines.add(String.format(Locale.ROOT, "{\"codec\":\"%s\",\"read\":\"%s\",\"source\":\"%s\",\"side\":\"%s\","
                  + "\"validation\":\"%s\",\"cpu_us\":%.3f,\"cpu_min_us\":%.3f,\"cpu_max_us\":%.3f,\"wall_us\":%.3f,"
                  + "\"wall_min_us\":%.3f,\"wall_max_us\":%.3f,\"jvm_alloc_bytes_per_payload\":%.2f}",
              k.codec(), k.read(), k.source(), k.side(), validation.name().toLowerCase(Locale.ROOT), mc, tc[0],
              tc[rounds - 1], mw, tw[0], tw[rounds - 1], alloc));
          continue;
        }
        System.out.printf(Locale.ROOT, "%-5s %-6s %-6s %-4s  cpu %7.3f [%.3f-%.3f]  wall %7.3f [%.3f-%.3f]  alloc %.2f%n",
            k.codec(), k.read(), k.source(), k.side(), mc, tc[0], tc[rounds - 1], mw, tw[0], tw[rounds - 1], alloc);
      }
      for (Loop l : loops) l.close();
    }
    if (json) System.out.println("{\"results\":[\n" + String.join(",\n", lines) + "\n]}");
  }

  /** One case's loop over every payload, with what it keeps across rounds. */
  static final class Loop implements AutoCloseable {
    final Case k;
    final byte[][] heap;
    final ByteBuffer[] direct;
    final XchgBatchDecoder decoder;
    final XchgArrowArray array;
    final XchgArrowArray[][] arrays; // per group of --group payloads
    final byte[][][] heapGroups;
    final ByteBuffer[][] directGroups;
    final XchgCachedBench.JvmReader jvm;
    final long rows;

    Loop(Case k, CacheShape.Data data, byte[][] heap, ByteBuffer[] direct, int[] bufferCounts,
        XchgValidation validation) {
      this.k = k;
      this.heap = heap;
      this.direct = direct;
      this.rows = data.rows();
      int[] cols = k.read().equals("full") ? XchgCachedBench.FULL : XchgCachedBench.NARROW;
      boolean xchg = k.side().equals("xchg");
      decoder = xchg ? XchgBatchDecoder.open(data.schema(),
          new XchgBatchDecoder.Options().columns(cols).threads(1).validation(validation)) : null;
      array = xchg ? Xchg.allocateArrowArray() : null;
      int groups = (heap.length + group - 1) / group;
      arrays = new XchgArrowArray[xchg && group > 1 ? groups : 0][];
      heapGroups = new byte[arrays.length][][];
      directGroups = new ByteBuffer[arrays.length][];
      for (int g = 0; g < arrays.length; g++) {
        int first = g * group, end = Math.min(heap.length, first + group);
        heapGroups[g] = Arrays.copyOfRange(heap, first, end);
        directGroups[g] = Arrays.copyOfRange(direct, first, end);
        arrays[g] = new XchgArrowArray[end - first];
        for (int i = 0; i < arrays[g].length; i++) arrays[g][i] = Xchg.allocateArrowArray();
      }
      jvm = xchg ? null : new XchgCachedBench.JvmReader(bufferCounts, cols, false);
    }

    /** One loop over every payload; with check, the decoded rows are counted and checked. */
    void run(boolean check) {
      boolean fromHeap = k.source().equals("heap");
      if (jvm != null) {
        for (int i = 0; i < heap.length; i++)
          if (fromHeap) jvm.readHeap(heap[i]);
          else jvm.readDirect(direct[i]);
        return;
      }
      long rows = 0;
      for (int g = 0; g < arrays.length; g++) {
        if (fromHeap) decoder.decodeMany(heapGroups[g], (long) g * group, arrays[g]);
        else decoder.decodeMany(directGroups[g], (long) g * group, arrays[g]);
        for (XchgArrowArray a : arrays[g]) {
          if (check) rows += TestHooks.arrayLength(a.memoryAddress());
          a.release();
        }
      }
      for (int i = 0; arrays.length == 0 && i < heap.length; i++) {
        rows += fromHeap ? decoder.decode(heap[i], 0, heap[i].length, i, array) : decoder.decode(direct[i], i, array);
        array.release();
      }
      if (check && rows != this.rows) throw new IllegalStateException(k + ": " + rows + " rows decoded, want " + this.rows);
    }

    double allocationPerPayload() {
      com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      run(true); // once before: the checked path's first run loads classes
      long before = mx.getCurrentThreadAllocatedBytes();
      run(true); // checked here, as a row count is not free in decodeMany's case
      return (double) (mx.getCurrentThreadAllocatedBytes() - before) / heap.length;
    }

    @Override
    public void close() {
      if (array != null) array.close();
      for (XchgArrowArray[] group : arrays)
        for (XchgArrowArray a : group) a.close();
      if (decoder != null) decoder.close();
    }
  }
}
