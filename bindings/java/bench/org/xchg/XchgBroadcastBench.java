package org.xchg;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Shape `broadcast` of shared/bench/SHAPES.md from the JVM: N tasks on T
 * threads each acquire one broadcast (Arrow IPC in Spark's lz4-java stream,
 * made in this JVM as Spark makes it), read every batch of every column
 * (checksum, checked against the generator's sums) and release it, with
 * sharing off and on.  Prints the CPU of the tasks (thread CPU time from
 * acquire to release), wall time and decodes: medians of --runs runs after
 * one warm-up, min-max beside, and the on/off ratios.
 *
 * <pre>
 *   java -cp CLASSES:TEST_CLASSES:/usr/share/java/lz4-java.jar \
 *        -Dxchg.jni.library=BUILD/libxchg_jni.so org.xchg.XchgBroadcastBench \
 *        --cli BUILD/xchg [--rows 1000000] [--tasks 128] [--threads 8] [--runs 5]
 *        [--direct] [--retain]
 * </pre>
 */
public final class XchgBroadcastBench {
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  public static void main(String[] args) throws Exception {
    long rows = 1_000_000;
    int tasks = 128, threads = 8, runs = 5;
    boolean direct = false, retain = false;
    String cli = System.getenv("XCHG_CLI");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--tasks" -> tasks = Integer.parseInt(args[++i]);
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--cli" -> cli = args[++i];
        case "--direct" -> direct = true;
        case "--retain" -> retain = true;
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (cli == null) throw new IllegalArgumentException("give --cli PATH-OF-xchg (or XCHG_CLI)");
    TestSupport.Broadcast data = genWith(cli, rows);
    byte[] spark = TestSupport.sparkLz4(data.ipc());
    ByteBuffer[] chunks = TestSupport.chunks(spark, 4 << 20,
        direct ? TestSupport.Kind.DIRECT : TestSupport.Kind.HEAP);
    System.out.printf("machine: %d cpus, %s%n", Runtime.getRuntime().availableProcessors(), cpuModel());
    System.out.printf("broadcast: %,d rows, IPC %,d bytes, lz4-java %,d bytes in %d %s chunks; "
            + "%d tasks on %d threads, %d runs after 1 warm-up%s%n",
        rows, data.ipc().length, spark.length, chunks.length, direct ? "direct" : "heap", tasks,
        threads, runs, retain ? ", entries retained" : "");

    double[][] cpu = new double[2][runs], wall = new double[2][runs], decodes = new double[2][runs];
    double[][] peakMb = new double[2][runs], acquire = new double[2][runs];
    for (int run = -1; run < runs; run++) {
      for (int mode = 0; mode < 2; mode++) {
        Result r = runOnce(chunks, data, mode == 1, retain, tasks, threads);
        if (run >= 0) {
          cpu[mode][run] = r.taskCpuMs;
          wall[mode][run] = r.wallMs;
          decodes[mode][run] = r.decodes;
          peakMb[mode][run] = r.peakBytes / 1e6;
          acquire[mode][run] = r.acquireCpuMs;
        }
      }
    }
    String[] names = {"sharing off", "sharing on "};
    for (int mode = 0; mode < 2; mode++) {
      System.out.printf(
          "%s: tasks' CPU %s ms (%.2f ms per task; in acquire %s ms), wall %s ms, decodes %s, "
              + "peak native MB %s%n",
          names[mode], fmt(cpu[mode]), median(cpu[mode]) / tasks, fmt(acquire[mode]), fmt(wall[mode]),
          fmt(decodes[mode]), fmt(peakMb[mode]));
    }
    System.out.printf("on/off: tasks' CPU %.3f, of which acquire %.3f, wall %.3f%n",
        median(cpu[1]) / median(cpu[0]), median(acquire[1]) / median(acquire[0]),
        median(wall[1]) / median(wall[0]));
  }

  private static TestSupport.Broadcast genWith(String cli, long rows) throws Exception {
    // TestSupport reads XCHG_CLI from the environment; run the same command here.
    Path out = Files.createTempFile("xchg-bench", ".arrows");
    try {
      Process p = new ProcessBuilder(cli, "gen", "broadcast", out.toString(), "-f", "--outer", "none",
              "--rows", Long.toString(rows), "--sums")
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String json = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (p.waitFor() != 0) throw new IllegalStateException("xchg gen failed");
      long[] sums = new long[3];
      for (int i = 0; i < 3; i++) {
        java.util.regex.Matcher m = java.util.regex.Pattern
            .compile("\"" + TestSupport.BROADCAST_COLUMNS[i] + "\":\\s*\\{\"sum\":\\s*\"(\\d+)\"")
            .matcher(json);
        if (!m.find()) throw new IllegalStateException("no sums in " + json);
        sums[i] = Long.parseUnsignedLong(m.group(1));
      }
      return new TestSupport.Broadcast(Files.readAllBytes(out), sums, new long[3], rows);
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private record Result(double taskCpuMs, double acquireCpuMs, double wallMs, long decodes,
      long peakBytes) {}

  private static Result runOnce(ByteBuffer[] chunks, TestSupport.Broadcast data, boolean sharing,
      boolean retain, int tasks, int threads) throws Exception {
    XchgCache.Options o = new XchgCache.Options().sharing(sharing);
    if (retain) o.retainBytes(Long.MAX_VALUE);
    AtomicLong cpuNs = new AtomicLong();
    AtomicLong acquireNs = new AtomicLong();
    AtomicLong peak = new AtomicLong();
    long base = Xchg.bufferMetrics().liveBytes();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (XchgCache cache = XchgCache.create(o)) {
      long t0 = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        done.add(pool.submit(() -> {
          long c0 = CPU.getCurrentThreadCpuTime();
          try (XchgCacheHolder h = cache.acquire("broadcast_0", chunks, StreamCodec.LZ4_JAVA, () -> false)) {
            acquireNs.addAndGet(CPU.getCurrentThreadCpuTime() - c0);
            peak.accumulateAndGet(Xchg.bufferMetrics().liveBytes() - base, Math::max);
            for (int c = 0; c < 3; c++) {
              if (h.columnChecksum(c).sum() != data.sums()[c]) {
                throw new IllegalStateException("wrong sum in column " + c);
              }
            }
          }
          cpuNs.addAndGet(CPU.getCurrentThreadCpuTime() - c0);
        }));
      }
      for (Future<?> f : done) f.get();
      double wallMs = (System.nanoTime() - t0) / 1e6;
      return new Result(cpuNs.get() / 1e6, acquireNs.get() / 1e6, wallMs, cache.metrics().decodes(),
          peak.get());
    } finally {
      pool.shutdown();
    }
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static String fmt(double[] v) {
    double min = Arrays.stream(v).min().orElse(0), max = Arrays.stream(v).max().orElse(0);
    return String.format("%.0f [%.0f-%.0f]", median(v), min, max);
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) return line.substring(line.indexOf(':') + 1).trim();
      }
    } catch (Exception e) {
      // not Linux: leave it out
    }
    return "unknown CPU";
  }
}
