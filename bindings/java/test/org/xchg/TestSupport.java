package org.xchg;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;

/** What the Java tests and the benchmark share: data, Spark's codec, checks. */
final class TestSupport {
  private TestSupport() {}

  /** Spark's default seed for lz4-java's streaming XXH32 (LZ4BlockOutputStream). */
  static final int SPARK_LZ4_SEED = 0x9747b28c;

  /**
   * Compresses bytes exactly as Spark's LZ4CompressionCodec does: 32 KiB
   * blocks, the fastest compressor, XXH32 with Spark's seed, no sync flush.
   */
  static byte[] sparkLz4(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 2 + 64);
    try (LZ4BlockOutputStream lz4 =
        new LZ4BlockOutputStream(
            out,
            32 * 1024,
            LZ4Factory.fastestInstance().fastCompressor(),
            XXHashFactory.fastestInstance().newStreamingHash32(SPARK_LZ4_SEED).asChecksum(),
            false)) {
      lz4.write(data);
    }
    return out.toByteArray();
  }

  /** bytes cut into chunks of chunkSize, heap or direct (alternating when mixed). */
  enum Kind {
    HEAP,
    DIRECT,
    MIXED
  }

  static ByteBuffer[] chunks(byte[] bytes, int chunkSize, Kind kind) {
    List<ByteBuffer> list = new ArrayList<>();
    for (int at = 0, i = 0; at < bytes.length; at += chunkSize, i++) {
      int n = Math.min(chunkSize, bytes.length - at);
      boolean direct = kind == Kind.DIRECT || (kind == Kind.MIXED && i % 2 == 1);
      ByteBuffer b;
      if (direct) {
        b = ByteBuffer.allocateDirect(n + 3);
        b.position(3); // a position that is not 0 must be honoured
        b.put(bytes, at, n);
        b.position(3);
      } else {
        // A slice of a larger array: arrayOffset() and position() must be honoured.
        byte[] backing = new byte[n + 10];
        System.arraycopy(bytes, at, backing, 7, n);
        b = ByteBuffer.wrap(backing, 2, n + 5).slice();
        b.position(5);
        b.limit(5 + n);
      }
      list.add(b);
    }
    return list.toArray(new ByteBuffer[0]);
  }

  /**
   * What FileChannel.map gives for an empty file, as an engine mapping an
   * empty block file gets it: a direct buffer without an address (the JDK
   * maps nothing).
   */
  static ByteBuffer emptyMappedBuffer() throws IOException {
    Path empty = Files.createTempFile("xchg-empty", ".bin");
    try (FileChannel ch = FileChannel.open(empty)) {
      return ch.map(FileChannel.MapMode.READ_ONLY, 0, 0);
    } finally {
      Files.delete(empty);
    }
  }

  /** The broadcast shape's IPC stream and the sums its generator printed. */
  record Broadcast(byte[] ipc, long[] sums, long[] nulls, long rows) {}

  static final String[] BROADCAST_COLUMNS = {"k", "d_long", "d_str"};

  /**
   * Runs `$XCHG_CLI gen broadcast --outer none --sums` (a generator that
   * shares no code with the reader) and reads back its bytes and sums.
   * Throws when XCHG_CLI is not set: the test cannot run without it.
   */
  static Broadcast genBroadcast(long rows, long seed) throws IOException, InterruptedException {
    String cli = System.getenv("XCHG_CLI");
    if (cli == null || cli.isEmpty())
      throw new IllegalStateException("XCHG_CLI is not set: run the tests through ctest");
    Path out = Files.createTempFile("xchg-broadcast", ".arrows");
    try {
      Process p =
          new ProcessBuilder(cli, "gen", "broadcast", out.toString(), "-f", "--outer", "none", "--rows",
                  Long.toString(rows), "--seed", Long.toString(seed), "--sums")
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      String json;
      try (InputStream in = p.getInputStream()) {
        json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
      if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IOException("xchg gen broadcast failed: " + json);
      }
      long[] sums = new long[3];
      long[] nulls = new long[3];
      for (int i = 0; i < 3; i++) {
        Matcher m =
            Pattern.compile(
                    "\"" + BROADCAST_COLUMNS[i] + "\":\\s*\\{\"sum\":\\s*\"(\\d+)\",\\s*\"nulls\":\\s*(\\d+)")
                .matcher(json);
        if (!m.find()) throw new IOException("no sums for " + BROADCAST_COLUMNS[i] + " in " + json);
        sums[i] = Long.parseUnsignedLong(m.group(1));
        nulls[i] = Long.parseLong(m.group(2));
      }
      return new Broadcast(Files.readAllBytes(out), sums, nulls, rows);
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** Data bytes of live xchg buffers: what a leak check compares (allocatedBytes counts kept blocks too). */
  static long liveBytes() {
    return Xchg.bufferMetrics().liveBytes();
  }

  // ---- checks -------------------------------------------------------------

  private static final List<String> failures = new ArrayList<>();

  static synchronized void check(boolean ok, String what) {
    if (!ok) {
      failures.add(what);
      System.out.println("FAIL: " + what);
    }
  }

  static void checkEq(long want, long got, String what) {
    check(want == got, what + ": want " + want + ", got " + got);
  }

  static synchronized int failureCount() {
    return failures.size();
  }

  interface Body {
    void run() throws Exception;
  }

  /** Runs a scenario; an exception it throws is a failure. */
  static void scenario(String name, Body body) {
    int before = failureCount();
    long t0 = System.nanoTime();
    try {
      body.run();
    } catch (Throwable t) {
      check(false, name + ": threw " + t);
      t.printStackTrace(System.out);
    }
    System.out.printf(
        "%s %s (%.0f ms)%n",
        failureCount() == before ? "ok  " : "FAIL", name, (System.nanoTime() - t0) / 1e6);
  }

  /** Expects body to throw an exception of class c; returns it. */
  static <T extends Throwable> T expectThrows(Class<T> c, String what, Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      if (c.isInstance(t)) return c.cast(t);
      check(false, what + ": threw " + t + ", want " + c.getSimpleName());
      return null;
    }
    check(false, what + ": did not throw " + c.getSimpleName());
    return null;
  }

  static void exit() {
    int n = failureCount();
    System.out.println(n == 0 ? "all passed" : n + " failure(s)");
    System.exit(n == 0 ? 0 : 1);
  }

  /** Where `needle` first occurs in `hay`, or -1. */
  static int indexOf(byte[] hay, byte[] needle) {
    for (int i = 0; i + needle.length <= hay.length; i++)
      if (java.util.Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) return i;
    return -1;
  }

}
