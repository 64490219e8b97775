package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.scenario;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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

  private static void shared(boolean privateDir) throws Exception {
    Path base = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of("/tmp");
    Path dir = Files.createTempDirectory(base, "xchg-host-java-");
    if (!privateDir) Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    XchgCache.Options o = new XchgCache.Options().hostDir(dir.toString()).hostRetainBytes(1L << 40);
    XchgCache a = XchgCache.open(o), b = XchgCache.open(o);
    try {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 1 << 20, TestSupport.Kind.HEAP);
      XchgCacheHolder ha = a.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false);
      XchgCacheHolder hb = b.acquire("bc", chunks, StreamCodec.LZ4_JAVA, () -> false);
      checkValues(ha, "first cache");
      checkValues(hb, "second cache");
      ha.release();
      hb.release();
      checkEq(1, a.metrics().decodes(), "the first cache decodes");
      checkEq(privateDir ? 0 : 1, b.metrics().decodes(), "the second cache's decodes");
      checkEq(privateDir ? 1 : 0, segments(dir), "segments in the directory");
    } finally {
      a.close();
      b.close();
      try (Stream<Path> s = Files.list(dir)) {
        s.forEach(p -> p.toFile().delete());
      }
      check(Files.deleteIfExists(dir), "the test directory removed");
    }
  }
}
