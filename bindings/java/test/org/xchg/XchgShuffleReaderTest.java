package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.checkEq;
import static org.xchg.TestSupport.expectThrows;
import static org.xchg.TestSupport.scenario;

import com.github.luben.zstd.ZstdOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import net.jpountz.lz4.LZ4FrameOutputStream;

/**
 * XchgShuffleReader fed as a reduce task is: Comet native shuffle blocks
 * written here in Java, as Comet's ShuffleBlockWriter frames them (u64le
 * length of what follows, u64le field count, codec tag, a whole IPC stream
 * compressed with the tag's codec), by an independent producer: the IPC
 * streams by IpcStreamWriter (a writer of its own), compressed by Debian's
 * lz4-java (LZ4FrameOutputStream, "LZ4_") and zstd-jni (ZstdOutputStream,
 * "ZSTD"), or stored ("NONE").  The blocks go in as InputStreams, heap
 * (read-only too) and direct ByteBuffers, several inputs, incrementally with NEED_INPUT in
 * between; every value of every coalesced batch is checked against the
 * values computed here, and every batch's row count against the greedy
 * coalescing rule.  Projection, the kill check (between calls and inside a
 * long next), readaheadBytes, bad blocks, the metrics, close.
 */
public final class XchgShuffleReaderTest {
  private XchgShuffleReaderTest() {}

  // ---- the data: row g of the whole input has these values ------------------

  static Long c0(long g) {
    return g % 7 == 3 ? null : g * 1_000_003L ^ (g << 40) ^ (g % 2 == 0 ? 0 : Long.MIN_VALUE);
  }

  static Integer c1(long g) {
    return g % 11 == 5 ? null : (int) (g * 37 - 5000);
  }

  static String c2(long g) {
    if (g % 5 == 2) return null;
    if (g % 9 == 0) return "";
    return "v" + Long.toString(g * 31, 36) + (g % 17 == 1 ? "é€" : "") + "x".repeat((int) (g % 13));
  }

  static final String[] NAMES = {"c0", "c1", "c2"};

  /** One Comet block: its rows [first, first + rows) of the data, framed and compressed. */
  record Block(long first, int rows, byte[] bytes) {}

  static byte[] ipcStream(long first, int rows) {
    Object[] a = new Object[rows], b = new Object[rows], c = new Object[rows];
    for (int i = 0; i < rows; i++) {
      a[i] = c0(first + i);
      b[i] = c1(first + i);
      c[i] = c2(first + i);
    }
    return IpcStreamWriter.stream(List.of(
        new IpcStreamWriter.Column("c0", IpcStreamWriter.Type.INT64, a),
        new IpcStreamWriter.Column("c1", IpcStreamWriter.Type.INT32, b),
        new IpcStreamWriter.Column("c2", IpcStreamWriter.Type.UTF8, c)));
  }

  /** Codec tags, as Comet writes them. */
  static final String NONE = "NONE", LZ4 = "LZ4_", ZSTD = "ZSTD";

  static byte[] compress(String codec, byte[] ipc) throws IOException {
    if (codec.equals(NONE)) return ipc;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // Comet's lz4_flex FrameEncoder writes 64 KiB blocks; zstd, one frame.
    try (OutputStream z = codec.equals(LZ4)
        ? new LZ4FrameOutputStream(out, LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB)
        : new ZstdOutputStream(out, 1)) {
      z.write(ipc);
    }
    return out.toByteArray();
  }

  /** u64le length of what follows, u64le field count, the tag, the compressed stream. */
  static byte[] frame(String tag, long fieldCount, byte[] compressed) {
    ByteBuffer b = ByteBuffer.allocate(20 + compressed.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(12 + compressed.length).putLong(fieldCount);
    b.put(tag.getBytes(StandardCharsets.US_ASCII)).put(compressed);
    return b.array();
  }

  static Block block(long first, int rows, String codec) throws IOException {
    return new Block(first, rows, frame(codec, 3, compress(codec, ipcStream(first, rows))));
  }

  /** Blocks of random sizes (1..maxRows rows) over rows [0, total), codecs taking turns. */
  static List<Block> blocks(long total, int maxRows, String[] codecs, long seed) throws IOException {
    Random rnd = new Random(seed);
    List<Block> out = new ArrayList<>();
    for (long g = 0; g < total; ) {
      int rows = (int) Math.min(total - g, 1 + rnd.nextInt(maxRows));
      out.add(block(g, rows, codecs[out.size() % codecs.length]));
      g += rows;
    }
    return out;
  }

  static byte[] concat(List<Block> blocks, int from, int to) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = from; i < to; i++) out.writeBytes(blocks.get(i).bytes());
    return out.toByteArray();
  }

  // ---- how an input is handed over ----------------------------------------

  enum Feed {
    STREAM, // an InputStream that returns few bytes per read
    HEAP, // a heap ByteBuffer, a slice with a position
    DIRECT, // a direct ByteBuffer with a position
    READ_ONLY // a read-only heap ByteBuffer (its array hidden), a slice with a position
  }

  /** An InputStream returning at most 7,000 bytes a read: the reader must loop. */
  static InputStream trickle(byte[] bytes) {
    return new ByteArrayInputStream(bytes) {
      @Override
      public synchronized int read(byte[] b, int off, int len) {
        return super.read(b, off, Math.min(len, 7000));
      }
    };
  }

  static ByteBuffer heap(byte[] bytes) {
    byte[] backing = new byte[bytes.length + 20];
    System.arraycopy(bytes, 0, backing, 13, bytes.length);
    ByteBuffer b = ByteBuffer.wrap(backing, 5, bytes.length + 10).slice(); // arrayOffset 5
    b.position(8).limit(8 + bytes.length);
    return b;
  }

  static ByteBuffer direct(byte[] bytes) {
    ByteBuffer b = ByteBuffer.allocateDirect(bytes.length + 16);
    b.position(16 - 5).put(bytes).flip();
    b.position(16 - 5);
    return b;
  }

  static void add(XchgShuffleReader r, byte[] bytes, Feed feed) throws IOException {
    switch (feed) {
      case STREAM -> r.addInput(trickle(bytes));
      case HEAP -> r.addInput(heap(bytes));
      case DIRECT -> r.addInput(direct(bytes));
      default -> {
        ByteBuffer b = heap(bytes).asReadOnlyBuffer();
        r.addInput(b);
        checkEq(8, b.position(), "a read-only buffer's position is left as it was");
      }
    }
  }

  // ---- checking what comes out ------------------------------------------------

  /** Reads batches and checks every value: rows handed out so far, batch row counts. */
  static final class Checker {
    final XchgShuffleReader r;
    final int[] columns; // selected, in schema order
    final XchgArrowArray array = Xchg.allocateArrowArray();
    final List<Long> batchRows = new ArrayList<>();
    long rows; // rows checked so far
    int needInput;
    final String what;

    Checker(XchgShuffleReader r, int[] columns, String what) {
      this.r = r;
      this.columns = columns;
      this.what = what;
    }

    /** Drains batches until NEED_INPUT or END; returns what stopped it. */
    XchgShuffleReader.Result drain() {
      for (;;) {
        XchgShuffleReader.Result res = r.next(array);
        if (res != XchgShuffleReader.Result.BATCH) {
          check(TestHooks.arrayReleased(array.memoryAddress()), what + ": " + res + " leaves the struct empty");
          if (res == XchgShuffleReader.Result.NEED_INPUT) needInput++;
          return res;
        }
        long n = TestHooks.arrayLength(array.memoryAddress());
        batchRows.add(n);
        checkBatch(r, array.memoryAddress(), columns, rows, n, what + " batch " + batchRows.size());
        rows += n;
        array.release();
      }
    }
  }

  /** Every value of the batch at address, whose first row is row `first` of the data, as r describes it. */
  static void checkBatch(XchgShuffleReader r, long address, int[] columns, long first, long n, String what) {
    try (XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
      check(r.exportSchema(schema), what + ": the reader has a schema");
      checkBatch(schema.memoryAddress(), address, columns, first, n, what);
    }
  }

  /** As above, the batch as the schema at schemaAddress describes it. */
  static void checkBatch(long schemaAddress, long address, int[] columns, long first, long n, String what) {
    ByteBuffer[] v = new ByteBuffer[3];
    for (int k = 0; k < columns.length; k++) {
      int col = columns[k];
      TestHooks.columnBuffers(schemaAddress, address, k, v);
      for (ByteBuffer b : v) if (b != null) b.order(ByteOrder.LITTLE_ENDIAN);
      int off = (int) TestHooks.childOffset(address, k);
      long sum = 0, nulls = 0;
      int bad = 0;
      for (int i = 0; i < n; i++) {
        long g = first + i;
        int j = off + i;
        boolean valid = v[0] == null || ((v[0].get(j >> 3) >> (j & 7)) & 1) != 0;
        Object want = col == 0 ? c0(g) : col == 1 ? c1(g) : c2(g);
        Object got = null;
        if (valid) {
          got = switch (col) {
            case 0 -> v[1].getLong(8 * j);
            case 1 -> v[1].getInt(4 * j);
            default -> {
              int s = v[1].getInt(4 * j), e = v[1].getInt(4 * j + 4);
              byte[] bytes = new byte[e - s];
              v[2].get(s, bytes);
              yield new String(bytes, StandardCharsets.UTF_8);
            }
          };
        }
        if (want == null) nulls++;
        else sum += col == 2 ? byteSum((String) want) : col == 0 ? (Long) want : (long) (Integer) want;
        if (!java.util.Objects.equals(want, got) && bad++ < 3)
          check(false, what + ": " + NAMES[col] + " row " + g + ": want " + want + ", got " + got);
      }
      ColumnChecksum c = TestHooks.columnChecksum(schemaAddress, address, k);
      checkEq(sum, c.sum(), what + ": " + NAMES[col] + " checksum");
      checkEq(nulls, c.nulls(), what + ": " + NAMES[col] + " nulls");
      checkEq(n, c.rows(), what + ": " + NAMES[col] + " rows");
    }
  }

  static long byteSum(String s) {
    long sum = 0;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) sum += b & 0xff;
    return sum;
  }

  /**
   * The row counts of the batches xchg/shuffle.h promises: whole blocks
   * until at least target rows, the rest last.  An input's end does not
   * cut a batch: rows short of the target wait for the next input.
   */
  static List<Long> greedy(List<Block> blocks, long target) {
    List<Long> out = new ArrayList<>();
    long pending = 0;
    for (Block b : blocks) {
      pending += b.rows();
      if (pending >= target) {
        out.add(pending);
        pending = 0;
      }
    }
    if (pending > 0) out.add(pending);
    return out;
  }

  static XchgShuffleReader.Options opts(long targetRows) {
    return new XchgShuffleReader.Options().framing(XchgShuffleReader.Framing.COMET).targetRows(targetRows);
  }

  static final int[] ALL = {0, 1, 2};

  // ---- scenarios ----------------------------------------------------------------

  /**
   * Blocks in `inputs` inputs handed over one by one with feed (the feeds
   * take turns when null), drained after each: NEED_INPUT in between,
   * every value, batch sizes, metrics.
   */
  static void incremental(List<Block> blocks, int inputs, Feed feed, long target, int threads, String what)
      throws IOException {
    long rows = 0, wire = 0;
    for (Block b : blocks) {
      rows += b.rows();
      wire += b.bytes().length;
    }
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(target).threads(threads))) {
      Checker c = new Checker(r, ALL, what);
      try (XchgArrowSchema s = Xchg.allocateArrowSchema()) {
        check(!r.exportSchema(s), what + ": no schema before any input");
      }
      int per = (blocks.size() + inputs - 1) / inputs;
      for (int i = 0, in = 0; i < blocks.size(); i += per, in++) {
        Feed f = feed != null ? feed : Feed.values()[in % Feed.values().length];
        add(r, concat(blocks, i, Math.min(blocks.size(), i + per)), f);
        check(c.drain() == XchgShuffleReader.Result.NEED_INPUT, what + ": NEED_INPUT after input " + in);
      }
      r.endInput();
      r.endInput(); // again: changes nothing
      check(c.drain() == XchgShuffleReader.Result.END, what + ": END after endInput");
      check(r.next(c.array) == XchgShuffleReader.Result.END, what + ": END again");
      checkEq(rows, c.rows, what + ": rows");
      check(c.needInput >= inputs, what + ": NEED_INPUT at least once per input (" + c.needInput + ")");
      check(c.batchRows.equals(greedy(blocks, target)),
          what + ": batch rows " + c.batchRows + ", want " + greedy(blocks, target));
      try (XchgArrowSchema s = Xchg.allocateArrowSchema()) {
        check(r.exportSchema(s), what + ": schema after input");
        for (int k = 0; k < 3; k++)
          check(NAMES[k].equals(TestHooks.schemaName(s.memoryAddress(), k)), what + ": schema child " + k);
        check("+s".equals(TestHooks.schemaFormat(s.memoryAddress(), -1)), what + ": a struct");
      }
      XchgShuffleReaderMetrics m = r.metrics();
      checkEq(blocks.size(), m.blocks(), what + ": metrics blocks");
      checkEq(rows, m.rows(), what + ": metrics rows");
      checkEq(wire, m.wireBytes(), what + ": metrics wire bytes");
      checkEq(c.batchRows.size(), m.batches(), what + ": metrics batches");
      check(m.decodedBytes() > 0, what + ": metrics decoded bytes " + m.decodedBytes());
      check(m.decompressNanos() + m.copyNanos() > 0, what + ": metrics decode time");
      c.array.close();
    }
  }

  /** The first message of an IPC stream, its framing (marker and length) included or not. */
  static byte[] firstMessage(byte[] stream, boolean framed) {
    int length = ByteBuffer.wrap(stream, 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    int from = framed ? 0 : 8;
    return java.util.Arrays.copyOfRange(stream, from, 8 + length);
  }

  static void checkSchemaNames(XchgShuffleReader r, int[] columns, String what) {
    try (XchgArrowSchema s = Xchg.allocateArrowSchema()) {
      check(r.exportSchema(s), what + ": exportSchema");
      for (int k = 0; k < columns.length; k++)
        check(NAMES[columns[k]].equals(TestHooks.schemaName(s.memoryAddress(), k)), what + ": schema child " + k);
    }
  }

  /**
   * Options.schema: the schema before any block and for a partition without
   * blocks; the blocks read against it, framed or not; a block of another
   * schema refused naming it; a bad schema message or a column out of range
   * refused by open.
   */
  static void givenSchema(List<Block> blocks) throws IOException {
    byte[] stream = ipcStream(0, 1);
    for (boolean framed : new boolean[] {true, false}) {
      String what = "schema given, " + (framed ? "framed" : "bare");
      XchgShuffleReader.Options o = opts(500).schema(firstMessage(stream, framed)).columns(2, 0);
      try (XchgShuffleReader r = XchgShuffleReader.open(o)) {
        checkSchemaNames(r, new int[] {0, 2}, what + ", before any block");
        add(r, concat(blocks, 0, blocks.size()), Feed.HEAP);
        r.endInput();
        Checker c = new Checker(r, new int[] {0, 2}, what);
        check(c.drain() == XchgShuffleReader.Result.END, what + ": END");
        check(c.batchRows.equals(greedy(blocks, 500)), what + ": batch rows " + c.batchRows);
        c.array.close();
      }
      try (XchgShuffleReader empty = XchgShuffleReader.open(o)) {
        empty.addInput(new ByteArrayInputStream(new byte[0]));
        empty.endInput();
        checkSchemaNames(empty, new int[] {0, 2}, what + ", no block");
        try (XchgArrowArray a = Xchg.allocateArrowArray()) {
          check(empty.next(a) == XchgShuffleReader.Result.END, what + ", no block: END");
        }
      }
    }
    // Another schema: c1 as int64.  The first block is refused, named.
    byte[] other = IpcStreamWriter.stream(List.of(
        new IpcStreamWriter.Column("c0", IpcStreamWriter.Type.INT64, new Object[] {1L}),
        new IpcStreamWriter.Column("c1", IpcStreamWriter.Type.INT64, new Object[] {1L}),
        new IpcStreamWriter.Column("c2", IpcStreamWriter.Type.UTF8, new Object[] {"x"})));
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).schema(firstMessage(other, true)));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      add(r, concat(blocks, 0, 3), Feed.DIRECT);
      r.endInput();
      XchgException e = expectThrows(XchgException.class, "a block of another schema", () -> r.next(a));
      if (e != null) {
        check(e.status() == XchgException.Status.FORMAT, "another schema: " + e.status());
        check(e.getMessage().contains("block 0"), "another schema names the block: " + e.getMessage());
      }
    }
    byte[] cut = java.util.Arrays.copyOf(firstMessage(stream, true), 20);
    XchgException e = expectThrows(XchgException.class, "a cut schema message",
        () -> XchgShuffleReader.open(opts(500).schema(cut)).close());
    if (e != null) {
      check(e.status() == XchgException.Status.FORMAT, "a cut schema message: " + e.status());
      // named once ('the options' schema message: schema message: ...' before)
      check(e.getMessage().startsWith("the options' schema message: ")
              && e.getMessage().indexOf("schema message: ") == e.getMessage().lastIndexOf("schema message: "),
          "a cut schema message, named once: " + e.getMessage());
    }
    e = expectThrows(XchgException.class, "column 3 of a given schema",
        () -> XchgShuffleReader.open(opts(500).schema(firstMessage(stream, true)).columns(3)).close());
    if (e != null) check(e.status() == XchgException.Status.INVALID_ARGUMENT, "column 3: " + e.status());
  }

  /**
   * The same rows as plain IPC streams, one per block, with framing IPC
   * and AUTO; and targetBytes 1, which makes every block a batch.
   */
  static void ipcFramingAndTargetBytes(List<Block> blocks) throws IOException {
    ByteArrayOutputStream ipc = new ByteArrayOutputStream();
    List<Long> perBlock = new ArrayList<>();
    for (Block b : blocks) {
      ipc.writeBytes(ipcStream(b.first(), b.rows()));
      perBlock.add((long) b.rows());
    }
    for (XchgShuffleReader.Framing f : new XchgShuffleReader.Framing[] {
        XchgShuffleReader.Framing.IPC, XchgShuffleReader.Framing.AUTO}) {
      try (XchgShuffleReader r = XchgShuffleReader.open(
          new XchgShuffleReader.Options().framing(f).targetRows(1_000_000).targetBytes(1))) {
        Checker c = new Checker(r, ALL, "IPC framing " + f);
        r.addInput(heap(ipc.toByteArray()));
        r.endInput();
        check(c.drain() == XchgShuffleReader.Result.END, c.what + ": END");
        check(c.batchRows.equals(perBlock), c.what + ": a batch per block with targetBytes 1");
        checkEq(blocks.size(), r.metrics().blocks(), c.what + ": blocks");
      }
    }
  }

  /**
   * No Java garbage per block: the same inputs (an InputStream, a heap and
   * a direct buffer) added and drained many times on the calling thread
   * (threads 1) allocate less than a byte per block, after a warm-up that
   * lets the JIT settle and makes the reader's one chunk buffer.
   */
  static void noAllocation(List<Block> blocks) throws IOException {
    final int inputs = 60;
    byte[] bytes = concat(blocks, 0, blocks.size());
    ByteArrayInputStream stream = new ByteArrayInputStream(bytes);
    ByteBuffer heap = heap(bytes), direct = direct(bytes);
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(4096).threads(1));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      String[] ways = {"InputStream", "heap ByteBuffer", "direct ByteBuffer"};
      for (int way = 0; way < ways.length; way++) {
        long added = 0, allocated = 0;
        for (int round = 0; round < 2; round++) { // round 0 warms up
          long before = mx.getCurrentThreadAllocatedBytes();
          for (int k = 0; k < inputs; k++) {
            switch (way) {
              case 0 -> {
                stream.reset();
                r.addInput(stream);
              }
              case 1 -> r.addInput(heap);
              default -> r.addInput(direct);
            }
            while (r.next(a) == XchgShuffleReader.Result.BATCH) a.release();
          }
          allocated = mx.getCurrentThreadAllocatedBytes() - before;
          added = (long) inputs * blocks.size();
        }
        System.out.printf("     %s: %d bytes of Java heap for %d blocks%n", ways[way], allocated, added);
        check(allocated < added, ways[way] + ": " + allocated + " bytes allocated for " + added + " blocks");
      }
    }
  }

  /**
   * A read-only heap buffer (its array hidden from Java) is copied once, by
   * the native code straight from its array, as the cache reads such
   * chunks: addInput allocates no Java heap, in a fresh reader (a 64 KiB
   * chunk array was made there to copy it through) nor per input (a
   * duplicate of the buffer each).  The bytes read are the buffer's, its
   * array offset and position added, among other bytes (0xA5) that a
   * wrong offset would read; a slice of a read-only buffer at another
   * offset too.  The native entry refuses what the Java side never gives
   * it (a direct buffer, bytes beyond the array) without harm.
   */
  static void readOnlyInPlace(List<Block> blocks) throws Exception {
    byte[] bytes = concat(blocks, 0, blocks.size());
    check(bytes.length > 2 * XchgShuffleReader.CHUNK, "read-only: the input spans chunks (" + bytes.length + ")");
    byte[] backing = new byte[bytes.length + 40];
    java.util.Arrays.fill(backing, (byte) 0xA5);
    System.arraycopy(bytes, 0, backing, 13, bytes.length);
    ByteBuffer atOffset = ByteBuffer.wrap(backing, 5, bytes.length + 30).slice().asReadOnlyBuffer();
    atOffset.position(8).limit(8 + bytes.length); // array offset 5, position 8: bytes 13..
    ByteBuffer sliced = ByteBuffer.wrap(backing, 3, bytes.length + 30).asReadOnlyBuffer().slice();
    sliced.position(10).limit(10 + bytes.length); // a slice of a read-only buffer: offset 3, position 10
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    for (int warm = 0; warm < 3; warm++) { // classes loaded, code run
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(4096).threads(1))) {
        r.addInput(atOffset);
      }
    }
    for (ByteBuffer b : new ByteBuffer[] {atOffset, sliced}) {
      String what = "read-only at array offset " + (b == atOffset ? "5, position 8" : "3 (a slice), position 10");
      check(b.isReadOnly() && !b.hasArray() && !b.isDirect(), what + ": hides its array");
      int position = b.position();
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(4096).threads(1))) {
        long before = mx.getCurrentThreadAllocatedBytes();
        r.addInput(b);
        long first = mx.getCurrentThreadAllocatedBytes() - before;
        checkEq(position, b.position(), what + ": position left as it was");
        r.endInput();
        Checker c = new Checker(r, ALL, what);
        check(c.drain() == XchgShuffleReader.Result.END, what + ": END");
        long rows = 0;
        for (Block k : blocks) rows += k.rows();
        checkEq(rows, c.rows, what + ": every row, every value checked");
        checkEq((long) bytes.length, r.metrics().wireBytes(), what + ": wire bytes");
        c.array.close();
        System.out.printf("     %s: %d bytes of Java heap for a fresh reader's addInput%n", what, first);
        check(first < 1024, what + ": a fresh reader's addInput allocates " + first
            + " bytes of Java heap (a 64 KiB chunk array copied the bytes before)");
      }
    }
    final int inputs = 200;
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(4096).threads(1));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      long allocated = 0;
      for (int k = 0; k < inputs; k++) {
        long before = mx.getCurrentThreadAllocatedBytes();
        r.addInput(atOffset);
        allocated += mx.getCurrentThreadAllocatedBytes() - before;
        while (r.next(a) == XchgShuffleReader.Result.BATCH) a.release();
      }
      System.out.printf("     read-only: %d bytes of Java heap for %d addInput calls%n", allocated, inputs);
      check(allocated < 1024, "read-only: " + inputs + " addInput calls allocate " + allocated
          + " bytes of Java heap (a duplicate of the buffer each before)");
    }
    // The native entry's own checks, reached past the Java side.
    java.lang.reflect.Method append = XchgShuffleReader.class.getDeclaredMethod(
        "nAppendHidden", long.class, ByteBuffer.class, int.class, int.class);
    append.setAccessible(true);
    java.lang.reflect.Field field = XchgShuffleReader.class.getDeclaredField("handle");
    field.setAccessible(true);
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(4096))) {
      NativeHandle handle = (NativeHandle) field.get(r);
      long h = handle.enter();
      try {
        Object[][] bad = {{ByteBuffer.allocateDirect(16), 0, 16}, {atOffset, 0, bytes.length + 36},
            {atOffset, -1, 4}, {atOffset, 4, -1}};
        for (Object[] args : bad) {
          Throwable t = null;
          try {
            append.invoke(null, h, args[0], args[1], args[2]);
          } catch (java.lang.reflect.InvocationTargetException e) {
            t = e.getCause();
          }
          check(t instanceof IllegalArgumentException, "nAppendHidden(" + args[0] + ", " + args[1] + ", "
              + args[2] + ") refused: " + t);
        }
        append.invoke(null, h, atOffset, 0, bytes.length + 35); // to the array's last byte: taken
      } finally {
        handle.leave();
      }
    }
  }

  /**
   * What the reader holds of an input it copied (an InputStream's bytes, a
   * heap buffer's) is xchg's native memory, counted in its live bytes and
   * so in Xchg.allocatedBytes, as the engine watching it needs (it was
   * malloc'd apart, unseen); until the reader and the batches are gone.
   */
  static void inputsCounted(List<Block> blocks) throws IOException {
    byte[] bytes = concat(blocks, 0, blocks.size());
    long live0 = TestSupport.liveBytes();
    for (Feed feed : new Feed[] {Feed.STREAM, Feed.HEAP, Feed.READ_ONLY}) {
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(100))) {
        long before = TestSupport.liveBytes(); // allocatedBytes less the blocks kept for reuse
        add(r, bytes, feed);
        long held = TestSupport.liveBytes() - before;
        check(held >= bytes.length && held <= 2L * bytes.length,
            feed + ": " + held + " bytes counted for an input of " + bytes.length);
        new Checker(r, ALL, "counted " + feed).drain();
      }
      checkEq(live0, TestSupport.liveBytes(), feed + ": live bytes back once closed");
    }
  }

  /**
   * A NONE block whose c2 offsets decrease in the middle (in bounds):
   * refused with FULL validation (naming the block), read with BOUNDS.
   */
  static void validation() throws IOException {
    int rows = 10;
    byte[] ipc = ipcStream(100, rows);
    ByteBuffer want = ByteBuffer.allocate(4 * (rows + 1)).order(ByteOrder.LITTLE_ENDIAN);
    int end = 0;
    want.putInt(0);
    for (int i = 0; i < rows; i++) {
      String v = c2(100 + i);
      end += v == null ? 0 : v.getBytes(StandardCharsets.UTF_8).length;
      want.putInt(end);
    }
    int at = TestSupport.indexOf(ipc, want.array());
    check(at > 0, "validation: the c2 offsets found in the stream");
    ByteBuffer b = ByteBuffer.wrap(ipc).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(at + 8, b.getInt(at + 12) + 1); // offsets[2] > offsets[3], both within the data
    byte[] bytes = frame(NONE, 3, ipc);
    for (XchgValidation v : XchgValidation.values()) {
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(1000).validation(v));
          XchgArrowArray a = Xchg.allocateArrowArray()) {
        r.addInput(heap(bytes));
        r.endInput();
        if (v == XchgValidation.FULL) {
          XchgException e = expectThrows(XchgException.class, "validation FULL", () -> r.next(a));
          if (e != null) check(e.getMessage().startsWith("block 0 (source 0, byte 0)"), "validation FULL: " + e.getMessage());
        } else {
          check(r.next(a) == XchgShuffleReader.Result.BATCH, "validation BOUNDS: read");
          checkEq(rows, TestHooks.arrayLength(a.memoryAddress()), "validation BOUNDS: rows");
        }
      }
    }
  }

  /** Only c2 and c0 (given out of order): batches hold them in schema order. */
  static void projection(List<Block> blocks) throws IOException {
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).columns(2, 0))) {
      Checker c = new Checker(r, new int[] {0, 2}, "projection");
      r.addInput(direct(concat(blocks, 0, blocks.size())));
      r.endInput();
      check(c.drain() == XchgShuffleReader.Result.END, "projection: END");
      try (XchgArrowSchema s = Xchg.allocateArrowSchema()) {
        r.exportSchema(s.memoryAddress());
        check("c0".equals(TestHooks.schemaName(s.memoryAddress(), 0)), "projection: first column c0");
        check("c2".equals(TestHooks.schemaName(s.memoryAddress(), 1)), "projection: second column c2");
        IllegalStateException full = expectThrows(IllegalStateException.class,
            "projection: a schema struct still holding one", () -> r.exportSchema(s));
        if (full != null) check(full.getMessage().contains("still holds a schema: release it"), "schema: " + full.getMessage());
        check("c2".equals(TestHooks.schemaName(s.memoryAddress(), 1)), "projection: the refused export left it as it was");
        expectThrows(IndexOutOfBoundsException.class, "projection: 2 columns",
            () -> TestHooks.schemaName(s.memoryAddress(), 2));
      }
      c.array.close();
    }
  }

  /**
   * A NONE block of at least the target, in a direct buffer, passes
   * through (its arrays point into the buffer): the batch stays valid
   * after the reader is closed and its values are still right.
   */
  static void passthroughOutlivesReader() throws IOException {
    List<Block> blocks = List.of(block(0, 3000, NONE), block(3000, 10, NONE));
    XchgArrowArray a = Xchg.allocateArrowArray();
    XchgShuffleReader r = XchgShuffleReader.open(opts(1000));
    r.addInput(direct(concat(blocks, 0, 2)));
    r.endInput();
    check(r.next(a) == XchgShuffleReader.Result.BATCH, "passthrough: a batch");
    checkEq(1, r.metrics().passthroughBatches(), "passthrough: passed through");
    checkEq(3000, TestHooks.arrayLength(a.memoryAddress()), "passthrough: rows");
    try (XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
      check(r.exportSchema(schema), "passthrough: a schema");
      r.close();
      System.gc(); // the buffer is reachable only through the batch now
      checkBatch(schema.memoryAddress(), a.memoryAddress(), ALL, 0, 3000, "passthrough after close");
    }
    a.close();
  }

  /**
   * The kill check: CANCELLED between InputStream chunks and at next, and
   * from then on at every next and addInput, even once it says false again
   * (it is not asked again); its own exception as is, then CANCELLED.  An
   * InputStream that throws, or whose read returns 0, leaves nothing of it
   * behind.
   */
  static void killCheck(List<Block> blocks) throws IOException {
    AtomicBoolean killed = new AtomicBoolean();
    AtomicInteger asked = new AtomicInteger();
    byte[] all = concat(blocks, 0, blocks.size());
    check(all.length > 3 * XchgShuffleReader.CHUNK, "kill: the input spans chunks");
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).killCheck(() -> {
          return asked.incrementAndGet() > 2 && killed.get();
        }));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      killed.set(true);
      XchgException e = expectThrows(XchgException.class, "kill: while reading an InputStream",
          () -> r.addInput(new ByteArrayInputStream(all)));
      if (e != null) check(e.isCancelled(), "kill: cancelled, got " + e.status());
      checkEq(3, asked.get(), "kill: asked before each chunk until killed");
      String said = e == null ? null : e.getMessage();
      e = expectThrows(XchgException.class, "kill: at next", () -> r.next(a));
      if (e != null) check(e.isCancelled() && e.getMessage().equals(said), "kill at next: cancelled: " + e.getMessage());
      killed.set(false);
      stillCancelled(r, a, said, "kill: once the check says false again");
      checkEq(3, asked.get(), "kill: not asked once the reader is cancelled");
      checkEq(0, r.metrics().blocks(), "kill: no block read");
    }
    // The calls that read no input do not ask it.
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).schema(firstMessage(ipcStream(0, 1), true)).killCheck(() -> {
          asked.incrementAndGet();
          return false;
        }));
        XchgArrowSchema s = Xchg.allocateArrowSchema()) {
      asked.set(0);
      r.exportSchema(s);
      r.metrics();
      r.endInput();
      checkEq(0, asked.get(), "kill: asked by exportSchema, metrics or endInput");
    }
    // Killed at next's own question, before its work: the same.
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).killCheck(killed::get));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      r.addInput(heap(concat(blocks, 0, 2)));
      r.endInput();
      killed.set(true);
      XchgException e = expectThrows(XchgException.class, "kill: before next's work", () -> r.next(a));
      if (e != null) check(e.isCancelled(), "kill before next's work: cancelled, got " + e.status());
      killed.set(false);
      stillCancelled(r, a, e == null ? null : e.getMessage(), "kill before next's work, then false");
      check(TestHooks.arrayReleased(a.memoryAddress()), "kill before next's work: the struct is left empty");
    }
    RuntimeException own = new IllegalStateException("TaskKilledException");
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).killCheck(() -> {
          throw own;
        }));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      RuntimeException got = expectThrows(RuntimeException.class, "kill check that throws",
          () -> r.addInput(heap(all)));
      check(got == own, "kill check's own exception comes through as thrown: " + got);
      stillCancelled(r, a, null, "after the kill check threw");
    }
    // With a pool building batches ahead: the call whose kill check throws throws its exception,
    // as on one thread, and hands out no batch, nor does any call after it; at each question in turn.
    int late = 0, swallowed = 0;
    for (int k = 1; k <= 20; k++) {
      int at = k;
      AtomicInteger n = new AtomicInteger();
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(500).threads(2).killCheck(() -> {
            if (n.incrementAndGet() >= at) throw own;
            return false;
          }));
          XchgArrowArray a = Xchg.allocateArrowArray()) {
        RuntimeException got = null;
        try {
          r.addInput(direct(all));
          r.endInput();
          while (r.next(a) == XchgShuffleReader.Result.BATCH) {
            if (n.get() >= at) late++;
            a.release();
          }
        } catch (RuntimeException e) {
          got = e;
        }
        if (n.get() >= at && got != own) swallowed++;
      }
    }
    checkEq(0, late, "kill with a pool: batches from or after the call whose kill check threw");
    checkEq(0, swallowed, "kill with a pool: reads whose kill check's exception did not come through");
    // An InputStream that throws inside a 64 KiB chunk, after bytes of it: its exception, and nothing
    // of it is left, no block cut short by the throw (the next input is read alone).
    check(all.length % XchgShuffleReader.CHUNK != 0, "the InputStream throws inside a chunk");
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(500))) {
      IOException boom = new IOException("network gone");
      IOException got = expectThrows(IOException.class, "an InputStream that throws",
          () -> r.addInput(new java.io.SequenceInputStream(new ByteArrayInputStream(all), new InputStream() {
            @Override
            public int read() throws IOException {
              throw boom;
            }
          })));
      check(got == boom, "an InputStream's exception comes through as thrown: " + got);
      checkLost(got, 0, all.length, "an InputStream that throws");
      readsAlone(r, blocks, "after an InputStream threw");
    }
    // An InputStream whose read returns 0 (or more than asked for) once its bytes are out breaks
    // read's contract: an IOException saying so, nothing of it left (not a loop asking again).
    for (int extra : new int[] {-1, 1}) {
      String what = extra < 0 ? "an InputStream read returning 0" : "an InputStream read returning too much";
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(500))) {
        AtomicInteger calls = new AtomicInteger();
        InputStream broken = new ByteArrayInputStream(all) {
          @Override
          public synchronized int read(byte[] b, int off, int len) {
            if (available() > 0) return super.read(b, off, len);
            if (calls.incrementAndGet() > 100) return -1; // the reader looped: end it
            return extra < 0 ? 0 : len + extra;
          }
        };
        IOException got = expectThrows(IOException.class, what, () -> r.addInput(broken));
        int ask = XchgShuffleReader.CHUNK - all.length % XchgShuffleReader.CHUNK;
        String want = "InputStream.read returned " + (extra < 0 ? 0 : ask + extra) + " for " + ask + " bytes";
        if (got != null) check(want.equals(got.getMessage()), what + ": " + got.getMessage() + ", want " + want);
        checkLost(got, 0, all.length, what);
        checkEq(1, calls.get(), what + ": read once after its bytes");
        readsAlone(r, blocks, "after " + what);
      }
    }
  }

  /**
   * e, what an InputStream threw, carries one suppressed XchgException (IO)
   * saying what was lost: the input (source index), the bytes read of it.
   */
  static void checkLost(Throwable e, long source, long bytes, String what) {
    if (e == null) return;
    Throwable[] s = e.getSuppressed();
    checkEq(1, s.length, what + ": a suppressed exception saying what was lost");
    if (s.length != 1) return;
    check(s[0] instanceof XchgException && ((XchgException) s[0]).status() == XchgException.Status.IO,
        what + ": the suppressed one is an XchgException IO: " + s[0]);
    String want = "XchgShuffleReader.addInput: the InputStream of source " + source + " threw after " + bytes
        + " bytes: nothing of it was added (its " + bytes + " bytes read and the rest of it are lost; the reader holds"
        + " its first " + source + " inputs and takes more: add the stream again, whole, to read it)";
    check(want.equals(s[0].getMessage()), what + ": said " + s[0].getMessage() + ", want " + want);
  }

  /**
   * An InputStream that throws after `bytes` bytes, in the middle of a
   * block and of a 64 KiB read, as the second input: nothing of it is
   * handed out (an input is added whole or not at all), the error says so,
   * naming source 1 and the bytes read; added again whole, every block of
   * both inputs reads in order.
   */
  static void throwsMidBlock(List<Block> blocks) throws IOException {
    byte[] first = concat(blocks, 0, 2);
    byte[] rest = concat(blocks, 2, blocks.size());
    int bytes = XchgShuffleReader.CHUNK + 4464;
    long whole = 0;
    int cut = 2; // the first block the throw cuts
    for (int at = 0; at + blocks.get(cut).bytes().length <= bytes; cut++) at += blocks.get(cut).bytes().length;
    for (int i = 2; i < cut; i++) whole += blocks.get(i).rows();
    check(cut > 3 && cut < blocks.size(), "the throw is after whole blocks, inside block " + cut);
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(100))) {
      Checker c = new Checker(r, ALL, "throws mid-block");
      r.addInput(new ByteArrayInputStream(first));
      c.drain();
      long before = c.rows;
      IOException boom = new IOException("connection reset");
      InputStream failing = new InputStream() {
        int at;

        @Override
        public int read() {
          throw new AssertionError("read byte by byte");
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          if (at == bytes) throw boom;
          int n = Math.min(Math.min(len, 1000), bytes - at); // short reads: the throw inside a 64 KiB read
          System.arraycopy(rest, at, b, off, n);
          at += n;
          return n;
        }
      };
      IOException got = expectThrows(IOException.class, "throws mid-block", () -> r.addInput(failing));
      check(got == boom, "throws mid-block: as thrown: " + got);
      checkLost(got, 1, bytes, "throws mid-block");
      check(c.drain() == XchgShuffleReader.Result.NEED_INPUT, "throws mid-block: nothing of it to hand out");
      checkEq(before, c.rows, "throws mid-block: none of its " + whole + " rows of whole blocks handed out");
      r.addInput(new ByteArrayInputStream(rest));
      r.endInput();
      check(c.drain() == XchgShuffleReader.Result.END, "throws mid-block, added again: END");
      long all = 0;
      for (Block b : blocks) all += b.rows();
      checkEq(all, c.rows, "throws mid-block, added again: every row, in order");
      c.array.close();
    }
  }

  /** An option setter refuses `bad`, its message naming the option and the value given. */
  static void refusedNaming(String option, long bad, TestSupport.Body set) {
    IllegalArgumentException e = expectThrows(IllegalArgumentException.class, option + "(" + bad + ")", set);
    String want = option + " must be positive, not " + bad;
    if (e != null) check(want.equals(e.getMessage()), option + "(" + bad + "): " + e.getMessage() + ", want " + want);
  }

  /** next and addInput throw CANCELLED (with the message `said` when not null), the struct left empty. */
  static void stillCancelled(XchgShuffleReader r, XchgArrowArray a, String said, String what) {
    for (int k = 0; k < 2; k++) {
      XchgException e = expectThrows(XchgException.class, what + ": next", () -> r.next(a));
      if (e != null) check(e.isCancelled() && (said == null || e.getMessage().equals(said)),
          what + ": next: cancelled as before, got " + e.status() + ": " + e.getMessage());
    }
    check(TestHooks.arrayReleased(a.memoryAddress()), what + ": the struct is left empty");
    for (Feed f : Feed.values()) {
      XchgException e = expectThrows(XchgException.class, what + ": addInput " + f, () -> add(r, new byte[0], f));
      if (e != null) check(e.isCancelled() && (said == null || e.getMessage().equals(said)),
          what + ": addInput " + f + ": cancelled as before, got " + e.status() + ": " + e.getMessage());
    }
  }

  /** The first two blocks as one input, then the end: read alone (nothing of an input that failed is left). */
  static void readsAlone(XchgShuffleReader r, List<Block> blocks, String what) throws IOException {
    Checker c = new Checker(r, ALL, what);
    r.addInput(new ByteArrayInputStream(concat(blocks, 0, 2)));
    r.endInput();
    check(c.drain() == XchgShuffleReader.Result.END, what + ": END");
    checkEq(blocks.get(0).rows() + blocks.get(1).rows(), c.rows, what + ": only the next input's rows");
    checkEq(2, r.metrics().blocks(), what + ": only the next input's blocks");
    c.array.close();
  }

  /**
   * An empty file's mapped buffer (direct, without an address) is an empty
   * input, as an empty heap or direct buffer is: the next input's blocks
   * read as without it.
   */
  static void emptyMappedInput(List<Block> blocks) throws IOException {
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(100))) {
      r.addInput(TestSupport.emptyMappedBuffer());
      readsAlone(r, blocks, "after an empty mapped input");
    }
  }

  /**
   * The kill check inside one long next (every block makes one batch): asked
   * before the first block and once 64 KiB of blocks were read since it was
   * last asked, the call throws CANCELLED as soon as it says true (no block
   * read after it, the struct left empty), and so does every later next
   * and addInput, even once the check says false again; what it throws
   * mid-next comes through as thrown, then CANCELLED.  A direct buffer the killed reader read from
   * becomes unreachable once the reader is closed: nothing of it is kept.
   */
  static void killMidNext(List<Block> blocks) throws Exception {
    final long step = 64 << 10;
    byte[] all = concat(blocks, 0, blocks.size());
    long largest = 0;
    for (Block b : blocks) largest = Math.max(largest, b.bytes().length);
    check(all.length > 4 * step, "kill mid-next: " + all.length + " bytes of blocks");
    AtomicBoolean armed = new AtomicBoolean(), killed = new AtomicBoolean();
    AtomicInteger asked = new AtomicInteger();
    java.lang.ref.WeakReference<ByteBuffer> input;
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(1_000_000).threads(1).killCheck(() -> {
          // the first question is the Java side's, before the call; then the reader's
          if (armed.get() && asked.incrementAndGet() == 4) killed.set(true);
          return killed.get();
        }));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      ByteBuffer d = direct(all);
      input = new java.lang.ref.WeakReference<>(d);
      r.addInput(d);
      d = null;
      r.endInput();
      armed.set(true);
      XchgException e = expectThrows(XchgException.class, "kill mid-next", () -> r.next(a));
      XchgShuffleReaderMetrics m = r.metrics();
      if (e != null) {
        check(e.isCancelled(), "kill mid-next: cancelled, got " + e.status() + ": " + e.getMessage());
        check(e.getMessage().contains("cancelled before block " + m.blocks()), "kill mid-next: " + e.getMessage());
      }
      checkEq(4, asked.get(), "kill mid-next: asked until it said so, not once after");
      check(m.wireBytes() >= 2 * step && m.wireBytes() <= 2 * (step + largest),
          "kill mid-next: " + m.wireBytes() + " bytes of blocks read before the kill");
      check(TestHooks.arrayReleased(a.memoryAddress()), "kill mid-next: the struct is left empty");
      killed.set(false);
      stillCancelled(r, a, e == null ? null : e.getMessage(), "kill mid-next, then next again");
    }
    for (int k = 0; k < 50 && input.get() != null; k++) {
      System.gc();
      Thread.sleep(10);
    }
    check(input.get() == null, "kill mid-next: the closed reader keeps its direct input reachable");
    RuntimeException own = new IllegalStateException("TaskKilledException");
    AtomicInteger calls = new AtomicInteger();
    AtomicBoolean armedToThrow = new AtomicBoolean();
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(1_000_000).threads(1).killCheck(() -> {
          if (armedToThrow.get() && calls.incrementAndGet() == 3) throw own;
          return false;
        }));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      r.addInput(heap(all));
      r.endInput();
      armedToThrow.set(true);
      RuntimeException got = expectThrows(RuntimeException.class, "a kill check that throws mid-next",
          () -> r.next(a));
      check(got == own, "the kill check's own exception comes through mid-next: " + got);
      checkEq(3, calls.get(), "a kill check that throws is not asked again");
      check(r.metrics().wireBytes() < all.length, "a kill check that throws: not every block read");
      stillCancelled(r, a, null, "a kill check that threw mid-next");
      checkEq(3, calls.get(), "a kill check that threw is not asked again by later calls");
    }
  }

  /**
   * readaheadBytes: positive only; with a pool it bounds how far the reader
   * plans ahead of the batch handed out: 1 byte plans only that batch's
   * blocks, 400 KiB several batches of about 80 KiB more (batches under an
   * eighth of it would be placed on the calling thread, one at a time); the
   * same batches either way.
   */
  static void readahead(List<Block> blocks) throws IOException {
    for (long bad : new long[] {0, -1, Long.MIN_VALUE})
      refusedNaming("readaheadBytes", bad, () -> new XchgShuffleReader.Options().readaheadBytes(bad));
    byte[] all = concat(blocks, 0, blocks.size());
    final long target = 3000;
    List<Long> want = greedy(blocks, target);
    long[] readAtFirst = new long[2];
    long[] sizes = {1, 400 << 10};
    for (int k = 0; k < 2; k++) {
      try (XchgShuffleReader r = XchgShuffleReader.open(opts(target).threads(3).readaheadBytes(sizes[k]))) {
        Checker c = new Checker(r, ALL, "readahead " + sizes[k]);
        r.addInput(heap(all));
        r.endInput();
        check(r.next(c.array) == XchgShuffleReader.Result.BATCH, "readahead: a first batch");
        readAtFirst[k] = r.metrics().blocks();
        long n = TestHooks.arrayLength(c.array.memoryAddress());
        checkBatch(r, c.array.memoryAddress(), ALL, 0, n, "readahead " + sizes[k] + " batch 1");
        c.rows = n;
        c.batchRows.add(n);
        c.array.release();
        check(c.drain() == XchgShuffleReader.Result.END, "readahead " + sizes[k] + ": END");
        check(c.batchRows.equals(want), "readahead " + sizes[k] + ": batch rows " + c.batchRows);
        c.array.close();
      }
    }
    long first = 0;
    for (long rows = 0; rows < target; first++) rows += blocks.get((int) first).rows();
    System.out.printf("     blocks read for the first batch: %d with readaheadBytes 1, %d with 400 KiB (%d in it)%n",
        readAtFirst[0], readAtFirst[1], first);
    checkEq(first, readAtFirst[0], "readaheadBytes 1: only the first batch's blocks are read");
    check(readAtFirst[1] > 2 * first, "readaheadBytes 400 KiB: " + readAtFirst[1] + " blocks read ahead");
  }

  /** Expects next to fail with status `status` and a message naming block `index`. */
  static void badBlocks(List<Block> good) throws IOException {
    byte[] ok = concat(good, 0, 3);
    Block b = good.get(3);
    String blockName = "block 3 (source 0, byte " + ok.length + ")";
    // The last block cut short by 5 bytes.
    byte[] cut = new byte[ok.length + b.bytes().length - 5];
    System.arraycopy(concat(good, 0, 4), 0, cut, 0, cut.length);
    failsAt(cut, XchgException.Status.IO, blockName, "the block is cut short: the input ends at byte ");
    // Wrong field count.
    byte[] four = frame(ZSTD, 4, compress(ZSTD, ipcStream(b.first(), b.rows())));
    failsAt(join(ok, four), XchgException.Status.FORMAT, blockName, "field count is 4");
    // Unknown codec tag.
    byte[] tag = b.bytes().clone();
    tag[16] = 'Q';
    failsAt(join(ok, tag), XchgException.Status.FORMAT, blockName, "codec tag");
    // An error quoting a field named beyond the BMP: its offsets past its values.
    String name = "s\uD83D\uDE00";
    byte[] named = IpcStreamWriter.stream(List.of(
        new IpcStreamWriter.Column(name, IpcStreamWriter.Type.UTF8, new Object[] {"zz", "yy"})));
    byte[] offsets = {0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0};
    int at = TestSupport.indexOf(named, offsets);
    check(at > 0, "the offsets of the stream written");
    named[at + 8] = 0x7f;
    failsAt(named, XchgShuffleReader.Framing.IPC, XchgException.Status.FORMAT, "block 0",
        "field '" + name + "'");
  }

  static byte[] join(byte[] a, byte[] b) {
    byte[] out = new byte[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  static void failsAt(byte[] input, XchgException.Status status, String block, String words) throws IOException {
    failsAt(input, XchgShuffleReader.Framing.COMET, status, block, words);
  }

  static void failsAt(byte[] input, XchgShuffleReader.Framing framing, XchgException.Status status, String block,
      String words) throws IOException {
    String what = "bad input (" + words + ")";
    try (XchgShuffleReader r = XchgShuffleReader.open(opts(1_000_000).framing(framing));
        XchgArrowArray a = Xchg.allocateArrowArray()) {
      r.addInput(heap(input));
      r.endInput();
      XchgException e = expectThrows(XchgException.class, what, () -> r.next(a));
      if (e == null) return;
      System.out.println("  " + what + ": " + e.getMessage());
      check(e.status() == status, what + ": status " + e.status() + ", want " + status);
      check(e.getMessage().contains(block), what + ": names " + block + ": " + e.getMessage());
      check(e.getMessage().contains(words), what + ": says '" + words + "': " + e.getMessage());
      XchgException again = expectThrows(XchgException.class, what + ", again", () -> r.next(a));
      if (again != null) check(again.getMessage().equals(e.getMessage()), what + ": the same error again");
      check(TestHooks.arrayReleased(a.memoryAddress()), what + ": struct left empty");
    }
  }

  /** close twice, use after close, close during a call, misuse. */
  static void closeAndMisuse(List<Block> blocks) throws Exception {
    XchgShuffleReader r = XchgShuffleReader.open(opts(100));
    try (XchgArrowArray a = Xchg.allocateArrowArray()) {
      // A call under way: close refuses, the call finishes, then close works.
      CountDownLatch inRead = new CountDownLatch(1), release = new CountDownLatch(1);
      byte[] bytes = concat(blocks, 0, 4);
      InputStream blocking = new InputStream() {
        int at = 0;

        @Override
        public int read() {
          byte[] one = new byte[1];
          return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
          if (at == 0) {
            inRead.countDown();
            try {
              release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          if (at == bytes.length) return -1;
          int n = Math.min(len, bytes.length - at);
          System.arraycopy(bytes, at, b, off, n);
          at += n;
          return n;
        }
      };
      Thread t = new Thread(() -> {
        try {
          r.addInput(blocking);
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      t.start();
      check(inRead.await(60, TimeUnit.SECONDS), "close: the call started");
      expectThrows(IllegalStateException.class, "close during a call", r::close);
      release.countDown();
      t.join(60_000);
      r.endInput();
      check(r.next(a) == XchgShuffleReader.Result.BATCH, "close: the reader still works after a refused close");
      expectThrows(IllegalStateException.class, "next into a full struct", () -> r.next(a));
      a.release();
      expectThrows(IllegalArgumentException.class, "null address", () -> r.next(0L));
      XchgException e = expectThrows(XchgException.class, "input after endInput",
          () -> r.addInput(heap(bytes)));
      if (e != null) check(e.status() == XchgException.Status.INVALID_ARGUMENT, "input after endInput: " + e.status());
      if (e != null) check(e.getMessage().equals("addInput after endInput: the input has ended"), "input after endInput: " + e.getMessage());
      // An InputStream after endInput is refused before a byte of it is read.
      java.io.ByteArrayInputStream unread = new java.io.ByteArrayInputStream(bytes);
      expectThrows(XchgException.class, "an InputStream after endInput", () -> r.addInput(unread));
      checkEq(bytes.length, unread.available(), "bytes left unread of an InputStream after endInput");
      r.close();
      r.close(); // twice: nothing
      expectThrows(IllegalStateException.class, "next after close", () -> r.next(a));
      expectThrows(IllegalStateException.class, "addInput after close", () -> r.addInput(heap(bytes)));
      expectThrows(IllegalStateException.class, "endInput after close", r::endInput);
      expectThrows(IllegalStateException.class, "metrics after close", r::metrics);
      refusedNaming("targetRows", 0, () -> new XchgShuffleReader.Options().targetRows(0));
      refusedNaming("targetBytes", -5, () -> new XchgShuffleReader.Options().targetBytes(-5));
      expectThrows(IllegalArgumentException.class, "threads " + Integer.MAX_VALUE,
          () -> new XchgShuffleReader.Options().threads(Integer.MAX_VALUE));
      try (XchgShuffleReader bad = XchgShuffleReader.open(opts(100).columns(3))) {
        bad.addInput(heap(bytes));
        bad.endInput();
        e = expectThrows(XchgException.class, "column 3 of 3", () -> bad.next(a));
        if (e != null) check(e.status() == XchgException.Status.INVALID_ARGUMENT, "column 3 of 3: " + e.status());
      }
      try (XchgShuffleReader empty = XchgShuffleReader.open(opts(100));
          XchgArrowSchema schema = Xchg.allocateArrowSchema()) {
        empty.addInput(new ByteArrayInputStream(new byte[0]));
        empty.endInput();
        check(empty.next(a) == XchgShuffleReader.Result.END, "no block: END");
        e = expectThrows(XchgException.class, "no block: no schema", () -> empty.exportSchema(schema));
        if (e != null) check(e.status() == XchgException.Status.FORMAT, "no block: no schema: " + e.status());
      }
    }
  }

  public static void main(String[] args) throws Exception {
    String[] mixed = {LZ4, ZSTD, NONE};
    List<Block> small = blocks(20_000, 120, mixed, 1);
    List<Block> big = blocks(60_000, 3000, mixed, 2);
    for (Feed f : Feed.values()) {
      scenario("mixed codecs, " + f + ", 5 inputs, target 1000",
          () -> incremental(small, 5, f, 1000, 1, "mixed " + f));
    }
    for (String codec : mixed) {
      List<Block> one = blocks(15_000, 200, new String[] {codec}, 3);
      scenario(codec + " only, feeds taking turns, 7 inputs, target 2048",
          () -> incremental(one, 7, null, 2048, 1, codec));
    }
    scenario("large blocks, pool of 3 threads, feeds taking turns",
        () -> incremental(big, 4, null, 8192, 3, "large, pool"));
    scenario("one block per input, target 1 (a batch per block)",
        () -> incremental(small.subList(0, 40), 40, Feed.STREAM, 1, 1, "target 1"));
    scenario("plain IPC streams (framing IPC, AUTO), targetBytes", () -> ipcFramingAndTargetBytes(small.subList(0, 30)));
    scenario("no Java allocation per block", () -> noAllocation(small.subList(0, 30)));
    scenario("read-only heap buffer: read in place, no Java heap", () -> readOnlyInPlace(small.subList(0, 200)));
    scenario("copied inputs counted in allocatedBytes", () -> inputsCounted(small.subList(0, 200)));
    scenario("validation FULL and BOUNDS", XchgShuffleReaderTest::validation);
    scenario("projection", () -> projection(small));
    scenario("a schema given in the options", () -> givenSchema(small.subList(0, 50)));
    scenario("passthrough batch outlives the reader", XchgShuffleReaderTest::passthroughOutlivesReader);
    scenario("kill check", () -> killCheck(big));
    scenario("kill check inside a long next", () -> killMidNext(small));
    scenario("an InputStream that throws mid-block: what was lost", () -> throwsMidBlock(small));
    scenario("readaheadBytes", () -> readahead(small));
    scenario("bad blocks name the block", () -> badBlocks(small));
    scenario("an empty mapped input", () -> emptyMappedInput(small));
    scenario("close and misuse", () -> closeAndMisuse(small));
    TestSupport.exit();
  }
}
