package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.scenario;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * XchgCache.Options.hostDir: two caches (as two executors) on one host
 * directory decode a broadcast once between them; a directory others may
 * write to is refused and each cache decodes its own, with the same values.
 * (The cross-process rules themselves are tested in C, tests/test_host_store.c.)
 */
public final class XchgHostCacheTest {
  private static TestSupport.Broadcast data;
  private static byte[] spark;

  public static void main(String[] args) throws Exception {
    data = TestSupport.genBroadcast(50_000, 3);
    spark = TestSupport.sparkLz4(data.ipc());
    scenario("two caches on one host directory: one decode", () -> shared(true));
    scenario("a world-writable host directory: refused, private decodes", () -> shared(false));
    scenario("no host retention: the released segment is evicted", XchgHostCacheTest::evicted);
    scenario("a host retain time under 1 ms: the segment removed once it passed",
        XchgHostCacheTest::retainUnderMillisecond);
    scenario("a host directory named beyond the BMP: made under that name", XchgHostCacheTest::named);
    scenario("a key beyond the BMP: its UTF-8 in the segment; NUL and lone surrogates refused",
        XchgHostCacheTest::keys);
    TestSupport.exit();
  }

  private static void checkValues(XchgCacheHolder h, String who) {
    checkEq(data.rows(), h.numRows(), who + ": rows");
    for (int c = 0; c < 3; c++) checkEq(data.sums()[c], h.columnChecksum(c).sum(), who + ": column " + c);
  }

  private static long segments(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".seg")).count();
    }
  }

  /** The host counters of a cache holding the broadcast: mapped from the store, or decoded
   * privately after the store was refused. */
  private static void checkHostMetrics(XchgCacheMetrics m, boolean mapped, long hostDecodes,
      String who) {
    checkEq(hostDecodes, m.hostDecodes(), who + ": host decodes");
    checkEq(mapped ? 1 : 0, m.hostMaps(), who + ": host maps");
    checkEq(0, m.hostWaits(), who + ": host waits");
    checkEq(mapped ? 0 : 1, m.hostFallbacks(), who + ": host fallbacks");
    checkEq(0, m.hostEvictions(), who + ": host evictions");
    check(m.bytesHeld() > 0, who + ": bytes held");
    checkEq(mapped ? m.bytesHeld() : 0, m.bytesShared(), who + ": shared bytes");
  }

  private static Path newDir() throws IOException {
    Path base = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of("/tmp");
    return Files.createTempDirectory(base, "xchg-host-java-");
  }

  private static void removeDir(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      s.forEach(p -> p.toFile().delete());
    }
    check(Files.deleteIfExists(dir), "the test directory removed");
  }

  private static void shared(boolean privateDir) throws Exception {
    Path dir = newDir();
    if (!privateDir) Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    XchgCache.Options o = new XchgCache.Options().hostDir(dir).hostRetainBytes(1L << 40);
    XchgCache a = XchgCache.create(o), b = XchgCache.create(o);
    try {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 1 << 20, TestSupport.Kind.HEAP);
      XchgCacheHolder ha = a.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false);
      XchgCacheHolder hb = b.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false);
      checkValues(ha, "first cache");
      checkValues(hb, "second cache");
      checkHostMetrics(a.metrics(), privateDir, privateDir ? 1 : 0, "first cache");
      checkHostMetrics(b.metrics(), privateDir, 0, "second cache");
      ha.close();
      hb.close();
      checkEq(1, a.metrics().decodes(), "the first cache decodes");
      checkEq(privateDir ? 0 : 1, b.metrics().decodes(), "the second cache's decodes");
      checkEq(privateDir ? 1 : 0, segments(dir), "segments in the directory");
    } finally {
      a.close();
      b.close();
      removeDir(dir);
    }
  }

  /**
   * A directory whose name holds a character outside the BMP is made, and
   * its segment written, under the Path's own name (the system's bytes of
   * it, not JNI's modified UTF-8, which names such a character by its two
   * surrogates).  Skipped where the JDK cannot name such a path (an ASCII
   * sun.jnu.encoding).
   */
  private static void named() throws Exception {
    Path parent = newDir();
    Path dir;
    try {
      dir = parent.resolve("host-\uD83D\uDE00-\u00e9");
    } catch (java.nio.file.InvalidPathException e) {
      System.out.println("  skipped: " + e.getMessage());
      removeDir(parent);
      return;
    }
    XchgCache c = XchgCache.create(new XchgCache.Options().hostDir(dir));
    try {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 1 << 20, TestSupport.Kind.HEAP);
      try (XchgCacheHolder h = c.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false)) {
        checkValues(h, "the cache");
        check(Files.isDirectory(dir), "the directory made under the Path's name");
        checkEq(1, Files.isDirectory(dir) ? segments(dir) : 0, "segments in it while held");
        checkEq(1, c.metrics().hostDecodes(), "host decodes");
      }
    } finally {
      c.close();
      try (Stream<Path> s = Files.list(parent)) {
        for (Path p : (Iterable<Path>) s::iterator) removeDir(p);
      }
      removeDir(parent);
    }
  }

  /**
   * The host store names a broadcast by its key's UTF-8 bytes, as a C
   * process names it (not JNI's modified UTF-8, where the emoji is two
   * surrogates of three bytes each): the segment holds them.  A key with a
   * NUL (which a C key cannot hold) or a lone surrogate (which UTF-8 cannot
   * encode) is refused, not turned into another key.
   */
  private static void keys() throws Exception {
    Path dir = newDir();
    XchgCache c = XchgCache.create(new XchgCache.Options().hostDir(dir));
    try {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 1 << 20, TestSupport.Kind.HEAP);
      String key = "bc-\uD83D\uDE00-\u00e9";
      try (XchgCacheHolder h = c.acquire(key, chunks, StreamCodec.LZ4_JAVA, () -> false)) {
        checkValues(h, "the cache");
        byte[] segment;
        try (Stream<Path> s = Files.list(dir)) {
          Path seg = s.filter(p -> p.toString().endsWith(".seg")).findFirst().orElseThrow();
          segment = Files.readAllBytes(seg);
        }
        byte[] utf8 = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        check(TestSupport.indexOf(segment, utf8) >= 0, "the key's UTF-8 bytes in the segment");
      }
      for (String bad : new String[] {"bc\u0000x", "bc-\uD83D"}) {
        IllegalArgumentException e = TestSupport.expectThrows(IllegalArgumentException.class,
            "key " + bad.length() + " chars", () -> c.acquire(bad, chunks, StreamCodec.LZ4_JAVA, () -> false));
        if (e != null)
          check(e.getMessage().startsWith("cache key "), "refused key: " + e.getMessage());
      }
      checkEq(1, c.metrics().decodes(), "decodes: the good key's only");
    } finally {
      c.close();
      removeDir(dir);
    }
  }

  /** With a host budget of 0 bytes, dropping the only mapping removes the segment. */
  /** A host retain time under 1 ms is a limit (it was 0 ms in the native options: no limit). */
  private static void retainUnderMillisecond() throws Exception {
    Path dir = newDir();
    XchgCache c = XchgCache.create(new XchgCache.Options().hostDir(dir).hostRetainBytes(1L << 40)
        .hostRetainTime(Duration.ofNanos(1000)));
    try {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 1 << 20, TestSupport.Kind.HEAP);
      c.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false).close();
      checkEq(1, segments(dir), "segments once released");
      Thread.sleep(20);
      c.trim();
      checkEq(0, segments(dir), "segments once the time passed");
      checkEq(1, c.metrics().hostEvictions(), "host evictions");
    } finally {
      c.close();
      removeDir(dir);
    }
  }

  private static void evicted() throws Exception {
    Path dir = newDir();
    XchgCache c = XchgCache.create(new XchgCache.Options().hostDir(dir));
    try {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 1 << 20, TestSupport.Kind.HEAP);
      XchgCacheHolder h = c.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false);
      checkValues(h, "the cache");
      checkEq(1, segments(dir), "segments while held");
      h.close();
      XchgCacheMetrics m = c.metrics();
      checkEq(1, m.hostEvictions(), "host evictions");
      checkEq(0, m.bytesShared(), "shared bytes once released");
      checkEq(0, segments(dir), "segments once released");
    } finally {
      c.close();
      removeDir(dir);
    }
  }
}
