package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.expectThrows;
import static org.xchg.TestSupport.scenario;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import net.jpountz.lz4.LZ4BlockInputStream;

/**
 * XchgInputStream against lz4-java's own LZ4BlockInputStream over the same
 * bytes, made by LZ4BlockOutputStream as Spark makes them: rows of a 4-byte
 * length and a 100-byte payload, read back two reads per row as a
 * sort-shuffle row reader does.
 */
public final class XchgInputStreamTest {
  private static final int ROWS = 50_000;
  private static final int PAYLOAD = 100;

  private static byte[] raw;
  private static byte[] spark;

  public static void main(String[] args) throws Exception {
    raw = rows(ROWS, 42);
    spark = TestSupport.sparkLz4(raw);
    byte[] javaDecoded;
    try (InputStream in = new LZ4BlockInputStream(new ByteArrayInputStream(spark))) {
      javaDecoded = in.readAllBytes();
    }
    check(Arrays.equals(raw, javaDecoded), "lz4-java round trip (the reference itself)");

    for (TestSupport.Kind kind : TestSupport.Kind.values()) {
      scenario("rows, two reads per row, " + kind + " chunks", () -> {
        try (XchgInputStream in = new XchgInputStream(
            TestSupport.chunks(spark, 7777, kind), StreamCodec.LZ4_JAVA)) {
          readRows(in, javaDecoded);
        }
      });
    }
    scenario("rows, read-only MIXED chunks (heap ones read in place)", () -> {
      ByteBuffer[] chunks = TestSupport.chunks(spark, 7777, TestSupport.Kind.MIXED);
      for (int i = 0; i < chunks.length; i++) chunks[i] = chunks[i].asReadOnlyBuffer();
      check(!chunks[0].isDirect() && !chunks[0].hasArray(), "the heap chunks hide their array");
      try (XchgInputStream in = new XchgInputStream(chunks, StreamCodec.LZ4_JAVA)) {
        readRows(in, javaDecoded);
      }
    });
    scenario("rows from an InputStream that returns short reads", () -> {
      try (XchgInputStream in = new XchgInputStream(new Dribble(spark, 999), StreamCodec.AUTO)) {
        check(in.codec() == StreamCodec.LZ4_JAVA, "AUTO detects lz4-java: " + in.codec());
        readRows(in, javaDecoded);
      }
    });
    for (TestSupport.Kind kind : new TestSupport.Kind[] {TestSupport.Kind.DIRECT, TestSupport.Kind.MIXED}) {
      scenario("empty mapped chunks among " + kind + " chunks", () -> emptyMappedChunks(kind, javaDecoded));
    }
    scenario("mixed reads: bulk, single bytes, skip", XchgInputStreamTest::mixedReads);
    scenario("errors: corrupt, truncated, a throwing source, use after close",
        XchgInputStreamTest::errors);
    scenario("a source that throws after some bytes of a 64 KiB read", XchgInputStreamTest::throwsMidRead);
    TestSupport.exit();
  }

  /**
   * An empty file's mapped buffer (direct, without an address) is a chunk of
   * nothing, as an empty heap or direct buffer is: first, in the middle
   * and last, the stream reads as without them.
   */
  static void emptyMappedChunks(TestSupport.Kind kind, byte[] want) throws IOException {
    ByteBuffer[] chunks = TestSupport.chunks(spark, 7777, kind);
    ByteBuffer empty = TestSupport.emptyMappedBuffer();
    ByteBuffer[] with = new ByteBuffer[chunks.length + 3];
    int half = chunks.length / 2;
    with[0] = empty;
    System.arraycopy(chunks, 0, with, 1, half);
    with[half + 1] = empty;
    System.arraycopy(chunks, half, with, half + 2, chunks.length - half);
    with[with.length - 1] = empty;
    try (XchgInputStream in = new XchgInputStream(with, StreamCodec.LZ4_JAVA)) {
      check(Arrays.equals(want, in.readAllBytes()), kind + " chunks with empty mapped ones: the bytes");
    }
  }

  /** ROWS rows of (int32 LE length = 100, 100 lowercase letters), seeded. */
  static byte[] rows(int rows, long seed) {
    Random r = new Random(seed);
    byte[] out = new byte[rows * (4 + PAYLOAD)];
    ByteBuffer b = ByteBuffer.wrap(out).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < rows; i++) {
      b.putInt(PAYLOAD);
      for (int j = 0; j < PAYLOAD; j++) b.put((byte) ('a' + r.nextInt(26)));
    }
    return out;
  }

  private static void readRows(XchgInputStream in, byte[] want) throws IOException {
    long bytes0 = TestSupport.liveBytes();
    ByteArrayOutputStream got = new ByteArrayOutputStream(want.length);
    byte[] len = new byte[4];
    byte[] payload = new byte[PAYLOAD];
    int rows = 0;
    while (true) {
      int n = in.readNBytes(len, 0, 4);
      if (n == 0) break;
      checkEq(4, n, "length prefix of row " + rows);
      int l = ByteBuffer.wrap(len).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
      if (l != PAYLOAD) {
        check(false, "row " + rows + " length " + l);
        return;
      }
      checkEq(PAYLOAD, in.readNBytes(payload, 0, PAYLOAD), "payload of row " + rows);
      got.write(len);
      got.write(payload);
      rows++;
    }
    checkEq(ROWS, rows, "rows");
    check(Arrays.equals(want, got.toByteArray()), "bytes equal lz4-java's decoding");
    checkEq(-1, in.read(), "read at the end");
    checkEq(want.length, in.position(), "position");
    check(TestSupport.liveBytes() >= bytes0, "memory figure sane");
  }

  private static void mixedReads() throws IOException {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    try (XchgInputStream in =
        new XchgInputStream(TestSupport.chunks(spark, 65536, TestSupport.Kind.MIXED),
            StreamCodec.LZ4_JAVA)) {
      Random r = new Random(7);
      int at = 0;
      while (at < raw.length) {
        int op = r.nextInt(3);
        if (op == 0) {
          checkEq(raw[at] & 0xff, in.read(), "single byte at " + at);
          at++;
        } else if (op == 1) {
          long want = Math.min(r.nextInt(100_000), raw.length - at);
          checkEq(want, in.skip(want), "skip at " + at);
          at += (int) want;
        } else {
          byte[] buf = new byte[r.nextInt(200_000) + 1];
          int n = in.readNBytes(buf, 0, buf.length);
          checkEq(Math.min(buf.length, raw.length - at), n, "bulk read at " + at);
          if (!Arrays.equals(raw, at, at + n, buf, 0, n)) check(false, "bulk bytes at " + at);
          at += n;
        }
      }
      checkEq(-1, in.read(), "end");
      checkEq(0, in.skip(10), "skip at the end");
    }
    checkEq(bytes0, TestSupport.liveBytes(), "native bytes back after close");
    checkEq(buffers0, Xchg.liveBuffers(), "live buffers back after close");
  }

  private static void errors() throws IOException {
    long bytes0 = TestSupport.liveBytes(), buffers0 = Xchg.liveBuffers();
    byte[] bad = spark.clone();
    bad[bad.length / 3] ^= 0x21;
    IOException e = expectThrows(IOException.class, "corrupt block", () -> {
      try (XchgInputStream in = new XchgInputStream(
          TestSupport.chunks(bad, 5000, TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA)) {
        in.readAllBytes();
      }
    });
    if (e != null) {
      check(e.getCause() instanceof XchgException x && x.status() == XchgException.Status.FORMAT,
          "corrupt: XchgException FORMAT cause: " + e.getCause());
      System.out.println("     corrupt said: " + e.getMessage());
    }
    byte[] cut = Arrays.copyOf(spark, spark.length - 77);
    e = expectThrows(IOException.class, "truncated", () -> {
      try (XchgInputStream in = new XchgInputStream(
          TestSupport.chunks(cut, 5000, TestSupport.Kind.DIRECT), StreamCodec.LZ4_JAVA)) {
        in.readAllBytes();
      }
    });
    if (e != null) {
      check(e.getCause() instanceof XchgException x && x.status() == XchgException.Status.IO,
          "truncated: XchgException IO cause: " + e.getCause());
      System.out.println("     truncated said: " + e.getMessage());
    }
    // A read that meets the cut after some bytes returns them (InputStream.read throws only when
    // it cannot read the first byte); the next read throws.
    try (XchgInputStream in = new XchgInputStream(
        TestSupport.chunks(cut, 5000, TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA)) {
      byte[] all = new byte[raw.length];
      int n = -1;
      try {
        n = in.read(all, 0, all.length);
      } catch (IOException first) {
        check(false, "truncated, one read of all: the bytes before the cut, not " + first);
      }
      check(n > 0 && n < raw.length, "truncated, one read of all: a part, " + n + " bytes");
      if (n > 0) check(Arrays.equals(raw, 0, n, all, 0, n), "truncated: the part read is the rows' start");
      checkEq(Math.max(n, 0), in.position(), "truncated: position() counts the bytes read");
      expectThrows(IOException.class, "truncated: the next read", () -> in.read(all, 0, all.length));
    }
    IOException boom = new IOException("network gone");
    e = expectThrows(IOException.class, "throwing source", () -> {
      InputStream failing = new Dribble(spark, 4096) {
        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          if (given > spark.length / 2) throw boom;
          return super.read(b, off, len);
        }
      };
      try (XchgInputStream in = new XchgInputStream(failing, StreamCodec.LZ4_JAVA)) {
        in.readAllBytes();
      }
    });
    if (e != null) {
      check(e.getCause() instanceof XchgException x && x.getCause() == boom,
          "throwing source: the source's exception is the cause's cause: " + e.getCause());
    }
    XchgInputStream closed =
        new XchgInputStream(TestSupport.chunks(spark, 5000, TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA);
    closed.close();
    closed.close();
    expectThrows(IOException.class, "read after close", closed::read);
    checkEq(bytes0, TestSupport.liveBytes(), "native bytes back after errors");
    checkEq(buffers0, Xchg.liveBuffers(), "live buffers back after errors");
  }

  /**
   * A source that hands out bytes, then throws inside the same 64 KiB read
   * of the native side: one read of it all returns every byte before the
   * throw (uncompressed: the source's own bytes; lz4-java: what the same
   * bytes cut there decode to), position() counts them, and the next read
   * throws, the source's exception the cause of its XchgException.
   */
  private static void throwsMidRead() throws IOException {
    int cut = 100_000; // inside the second 64 KiB read
    check(cut % 65536 != 0, "the throw is not at the start of a 64 KiB read");
    readsUpToThrow(StreamCodec.NONE, raw, cut, Arrays.copyOf(raw, cut));
    byte[] before; // what the lz4-java bytes cut there decode to, read before the truncation's error
    try (XchgInputStream in = new XchgInputStream(
        TestSupport.chunks(Arrays.copyOf(spark, cut), 5000, TestSupport.Kind.HEAP), StreamCodec.LZ4_JAVA)) {
      byte[] all = new byte[raw.length];
      before = Arrays.copyOf(all, Math.max(in.read(all, 0, all.length), 0));
    }
    check(before.length > 65536, "lz4-java cut at " + cut + ": decodes to more than a read's worth");
    readsUpToThrow(StreamCodec.LZ4_JAVA, spark, cut, before);
  }

  /** Reads `source` through codec from a Dribble that throws once `cut` bytes are out; want is what comes first. */
  private static void readsUpToThrow(StreamCodec codec, byte[] source, int cut, byte[] want) throws IOException {
    IOException boom = new IOException("network gone");
    InputStream failing = new Dribble(source, 1000) {
      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        if (given >= cut) throw boom;
        return super.read(b, off, Math.min(len, cut - given));
      }
    };
    try (XchgInputStream in = new XchgInputStream(failing, codec)) {
      byte[] all = new byte[raw.length];
      int n = -1;
      try {
        n = in.read(all, 0, all.length);
      } catch (IOException first) {
        check(false, codec + " throwing at " + cut + ": one read of it all returns the bytes first, not " + first);
      }
      checkEq(want.length, n, codec + " throwing at " + cut + ": the bytes before the throw");
      if (n == want.length) check(Arrays.equals(want, 0, n, all, 0, n), codec + ": the bytes read are the data's");
      checkEq(Math.max(n, 0), in.position(), codec + ": position() counts the bytes read");
      IOException e = expectThrows(IOException.class, codec + ": the next read", () -> in.read(all, 0, all.length));
      if (e != null)
        check(e.getCause() instanceof XchgException x && x.getCause() == boom,
            codec + ": the source's exception is the cause's cause: " + e.getCause());
    }
  }

  /** An InputStream that hands out at most `step` bytes per read. */
  static class Dribble extends InputStream {
    private final byte[] bytes;
    private final int step;
    int given;

    Dribble(byte[] bytes, int step) {
      this.bytes = bytes;
      this.step = step;
    }

    @Override
    public int read() {
      return given < bytes.length ? bytes[given++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (given >= bytes.length) return -1;
      int n = Math.min(Math.min(len, step), bytes.length - given);
      System.arraycopy(bytes, given, b, off, n);
      given += n;
      return n;
    }
  }
}
