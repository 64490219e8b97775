package org.xchg;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A small hand-written reader of Arrow IPC framing and of the few
 * flatbuffer tables a JVM needs to read a RecordBatch the way Spark's Arrow
 * cache serializer does: cut a stream into its messages, and find where the
 * selected columns' buffers are in a batch's body.  Independent of xchg (the
 * tests check xchg's copy counter against it; the benchmark's JVM baseline
 * reads with it).  Flat schemas only: the cache shape's.
 */
final class IpcMessages {
  private IpcMessages() {}

  /** Message header types (Message.fbs). */
  static final int SCHEMA = 1, DICTIONARY = 2, RECORD_BATCH = 3;

  /** One message of a stream: [start, end) of the stream's bytes. */
  record Message(int type, int start, int metadataStart, int metadataLength, int bodyStart, long bodyLength) {
    int end() {
      return (int) (bodyStart + bodyLength);
    }
  }

  /** The messages of an IPC stream, up to its end-of-stream marker. */
  static List<Message> split(byte[] stream) {
    ByteBuffer b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    List<Message> out = new ArrayList<>();
    int at = 0;
    while (at + 8 <= stream.length) {
      int length = b.getInt(at) == -1 ? b.getInt(at + 4) : b.getInt(at);
      int meta = b.getInt(at) == -1 ? at + 8 : at + 4;
      if (length == 0) break;
      int message = root(b, meta);
      int type = Byte.toUnsignedInt(b.get(field(b, message, 1)));
      long bodyLength = b.getLong(field(b, message, 3));
      Message m = new Message(type, at, meta, length, meta + length, bodyLength);
      out.add(m);
      at = m.end();
    }
    return out;
  }

  /** The bytes of stream[m.start, m.end). */
  static byte[] bytes(byte[] stream, Message m) {
    byte[] out = new byte[m.end() - m.start()];
    System.arraycopy(stream, m.start(), out, 0, out.length);
    return out;
  }

  /** Per batch, the payload an engine stores: the batch's message alone (no dictionaries). */
  static List<byte[]> batchPayloads(byte[] stream) {
    List<byte[]> out = new ArrayList<>();
    for (Message m : split(stream)) {
      if (m.type() == DICTIONARY) throw new IllegalArgumentException("dictionaries not supported here");
      if (m.type() == RECORD_BATCH) out.add(bytes(stream, m));
    }
    return out;
  }

  // ---- flatbuffers -----------------------------------------------------------

  private static int root(ByteBuffer b, int base) {
    return base + b.getInt(base);
  }

  /** Position of slot's scalar in table t, or -1 when absent. */
  private static int field(ByteBuffer b, int t, int slot) {
    int vt = t - b.getInt(t);
    int vtSize = Short.toUnsignedInt(b.getShort(vt));
    int entry = 4 + 2 * slot;
    if (entry >= vtSize) return -1;
    int off = Short.toUnsignedInt(b.getShort(vt + entry));
    return off == 0 ? -1 : t + off;
  }

  private static int indirect(ByteBuffer b, int p) {
    return p + b.getInt(p);
  }

  // ---- schema ------------------------------------------------------------------

  /** Buffers per top-level column of a flat schema (from its schema message). */
  static int[] bufferCounts(byte[] schemaMessage) {
    ByteBuffer b = ByteBuffer.wrap(schemaMessage).order(ByteOrder.LITTLE_ENDIAN);
    int meta = b.getInt(0) == -1 ? 8 : 4;
    int schema = indirect(b, field(b, root(b, meta), 2));
    int fields = indirect(b, field(b, schema, 1));
    int n = b.getInt(fields);
    int[] counts = new int[n];
    for (int i = 0; i < n; i++) {
      int f = indirect(b, fields + 4 + 4 * i);
      int typeType = Byte.toUnsignedInt(b.get(field(b, f, 2)));
      int children = field(b, f, 5);
      if ((children >= 0 && b.getInt(indirect(b, children)) > 0) || field(b, f, 4) >= 0)
        throw new IllegalArgumentException("nested or dictionary fields are not supported here");
      counts[i] = typeType == 4 || typeType == 5 ? 3 : 2; // Binary, Utf8: offsets and data too
    }
    return counts;
  }

  // ---- record batches ----------------------------------------------------------------

  /** Where a RecordBatch's selected buffers are in its payload, and how they are compressed. */
  record Layout(long rows, int codec, int bodyStart, long[] offsets, long[] lengths) {
    long selectedBytes() {
      long n = 0;
      for (long l : lengths) n += l;
      return n;
    }
  }

  /** Body compression codecs (CompressionType in Message.fbs); NONE when absent. */
  static final int NONE = -1, LZ4_FRAME = 0, ZSTD = 1;

  /**
   * Every buffer of the selected columns of the RecordBatch message in
   * payload[offset...], in IPC order, bufferCounts[c] per column (from
   * {@link #bufferCounts}); a validity bitmap counts as empty (length 0)
   * when its column has no nulls, since no reader needs it then.
   */
  static Layout layout(ByteBuffer b, int offset, int[] bufferCounts, int[] columns) {
    int meta = b.getInt(offset) == -1 ? offset + 8 : offset + 4;
    int metaLength = b.getInt(meta - 4);
    int message = root(b, meta);
    int batch = indirect(b, field(b, message, 2));
    int lengthAt = field(b, batch, 0);
    long rows = lengthAt < 0 ? 0 : b.getLong(lengthAt);
    int nodes = indirect(b, field(b, batch, 1));
    int buffers = indirect(b, field(b, batch, 2));
    int compressionAt = field(b, batch, 3);
    int codec = NONE;
    if (compressionAt >= 0) {
      int codecAt = field(b, indirect(b, compressionAt), 0);
      codec = codecAt < 0 ? LZ4_FRAME : b.get(codecAt);
    }
    int[] firstBuffer = new int[bufferCounts.length + 1];
    for (int i = 0; i < bufferCounts.length; i++) firstBuffer[i + 1] = firstBuffer[i] + bufferCounts[i];
    List<long[]> ranges = new ArrayList<>();
    for (int c : columns) {
      long nullCount = b.getLong(nodes + 4 + 16 * c + 8);
      for (int k = 0; k < bufferCounts[c]; k++) {
        int spec = buffers + 4 + 16 * (firstBuffer[c] + k);
        boolean needed = k > 0 || nullCount > 0;
        ranges.add(new long[] {b.getLong(spec), needed ? b.getLong(spec + 8) : 0});
      }
    }
    long[] offsets = new long[ranges.size()];
    long[] lengths = new long[ranges.size()];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = ranges.get(i)[0];
      lengths[i] = ranges.get(i)[1];
    }
    return new Layout(rows, codec, meta + metaLength, offsets, lengths);
  }
}
