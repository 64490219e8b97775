package org.xchg;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A small hand-written Arrow IPC stream writer, independent of xchg: the
 * schema message, one record batch and the end-of-stream marker, for flat
 * schemas of nullable int32, int64 and utf8 columns, with its own
 * flatbuffer encoder (Schema.fbs, Message.fbs).  Tables are laid out
 * root first, each vtable just before its table and every child after its
 * parent (uoffsets point forward, as flatbuffers require); scalars are
 * aligned to their size, body buffers to 8 bytes.
 */
final class IpcStreamWriter {
  private IpcStreamWriter() {}

  /** Column types: int32, int64, utf8. */
  enum Type {
    INT32,
    INT64,
    UTF8
  }

  /** One column of a batch: values[i] (Integer, Long or String) or null. */
  record Column(String name, Type type, Object[] values) {}

  /** The bytes of one IPC stream holding one batch of the columns (all of equal length). */
  static byte[] stream(List<Column> columns) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeMessage(out, schemaMessage(columns), new byte[0]);
    Body body = body(columns);
    writeMessage(out, batchMessage(columns, body), body.bytes);
    out.writeBytes(new byte[] {-1, -1, -1, -1, 0, 0, 0, 0}); // end of stream
    return out.toByteArray();
  }

  /** The schema message's flatbuffer. */
  private static byte[] schemaMessage(List<Column> columns) {
    List<Table> fields = new ArrayList<>();
    for (Column c : columns) {
      Table type =
          c.type == Type.UTF8
              ? new Table() // Utf8: no fields
              : new Table().i32(0, c.type == Type.INT32 ? 32 : 64).u8(1, 1); // bitWidth, is_signed
      fields.add(
          new Table()
              .string(0, c.name) // name
              .u8(1, 1) // nullable
              .u8(2, c.type == Type.UTF8 ? 5 : 2) // type_type: Utf8 5, Int 2
              .table(3, type)
              .tables(5, List.of())); // children
    }
    Table schema = new Table().i16(0, 0).tables(1, fields); // endianness little, fields
    return message(1, schema, 0);
  }

  // ---- the body ------------------------------------------------------------

  private record Body(byte[] bytes, long[] buffers, long[] nodes) {}

  private static Body body(List<Column> columns) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<Long> buffers = new ArrayList<>(); // offset, length pairs
    List<Long> nodes = new ArrayList<>(); // length, null count pairs
    for (Column c : columns) {
      int n = c.values.length;
      byte[] validity = new byte[(n + 7) / 8];
      int nulls = 0;
      for (int i = 0; i < n; i++) {
        if (c.values[i] != null) validity[i >> 3] |= (byte) (1 << (i & 7));
        else nulls++;
      }
      nodes.add((long) n);
      nodes.add((long) nulls);
      addBuffer(out, buffers, nulls == 0 ? new byte[0] : validity);
      ByteBuffer values;
      switch (c.type) {
        case INT32 -> {
          values = le(4 * n);
          for (Object v : c.values) values.putInt(v == null ? 0 : (Integer) v);
          addBuffer(out, buffers, values.array());
        }
        case INT64 -> {
          values = le(8 * n);
          for (Object v : c.values) values.putLong(v == null ? 0 : (Long) v);
          addBuffer(out, buffers, values.array());
        }
        case UTF8 -> {
          ByteArrayOutputStream data = new ByteArrayOutputStream();
          ByteBuffer offsets = le(4 * (n + 1));
          offsets.putInt(0);
          for (Object v : c.values) {
            if (v != null) data.writeBytes(((String) v).getBytes(StandardCharsets.UTF_8));
            offsets.putInt(data.size());
          }
          addBuffer(out, buffers, offsets.array());
          addBuffer(out, buffers, data.toByteArray());
        }
      }
    }
    return new Body(out.toByteArray(), toArray(buffers), toArray(nodes));
  }

  private static void addBuffer(ByteArrayOutputStream body, List<Long> buffers, byte[] b) {
    buffers.add((long) body.size());
    buffers.add((long) b.length);
    body.writeBytes(b);
    body.writeBytes(new byte[pad8(b.length)]);
  }

  private static byte[] batchMessage(List<Column> columns, Body body) {
    Table batch =
        new Table()
            .i64(0, columns.get(0).values.length) // length
            .structs(1, body.nodes) // nodes
            .structs(2, body.buffers); // buffers
    return message(3, batch, body.bytes.length);
  }

  /** Message { version V5, header_type, header, bodyLength }. */
  private static byte[] message(int headerType, Table header, long bodyLength) {
    return new Table().i16(0, 4).u8(1, headerType).table(2, header).i64(3, bodyLength).finish();
  }

  /** Continuation marker, padded metadata length, metadata, padding, body. */
  private static void writeMessage(ByteArrayOutputStream out, byte[] metadata, byte[] body) {
    int padded = metadata.length + pad8(metadata.length);
    ByteBuffer prefix = le(8);
    prefix.putInt(-1).putInt(padded);
    out.writeBytes(prefix.array());
    out.writeBytes(metadata);
    out.writeBytes(new byte[padded - metadata.length]);
    out.writeBytes(body);
  }

  // ---- flatbuffers ------------------------------------------------------------

  /** A table to encode: its fields by slot, scalars inline, the rest as children. */
  static final class Table {
    private record Field(int slot, int size, long value, Object child) {}

    private final List<Field> fields = new ArrayList<>();

    Table u8(int slot, int v) {
      fields.add(new Field(slot, 1, v, null));
      return this;
    }

    Table i16(int slot, int v) {
      fields.add(new Field(slot, 2, v, null));
      return this;
    }

    Table i32(int slot, int v) {
      fields.add(new Field(slot, 4, v, null));
      return this;
    }

    Table i64(int slot, long v) {
      fields.add(new Field(slot, 8, v, null));
      return this;
    }

    Table string(int slot, String s) {
      fields.add(new Field(slot, 4, 0, s.getBytes(StandardCharsets.UTF_8)));
      return this;
    }

    Table table(int slot, Table t) {
      fields.add(new Field(slot, 4, 0, t));
      return this;
    }

    Table tables(int slot, List<Table> ts) {
      fields.add(new Field(slot, 4, 0, ts));
      return this;
    }

    /** A vector of structs of two longs each (FieldNode, Buffer): longs as pairs. */
    Table structs(int slot, long[] longs) {
      fields.add(new Field(slot, 4, 0, longs));
      return this;
    }

    /** The flatbuffer with this table as its root. */
    byte[] finish() {
      Writer w = new Writer();
      w.u32(0);
      w.patch(0, write(w));
      return w.bytes();
    }

    /** Writes the vtable, the table and then its children; returns the table's position. */
    @SuppressWarnings("unchecked")
    private int write(Writer w) {
      int slots = 0;
      for (Field f : fields) slots = Math.max(slots, f.slot + 1);
      // Inline layout: the soffset, then each field aligned to its size.
      int[] at = new int[fields.size()];
      int size = 4;
      for (int i = 0; i < fields.size(); i++) {
        int s = fields.get(i).size;
        size = (size + s - 1) / s * s;
        at[i] = size;
        size += s;
      }
      int vtSize = 4 + 2 * slots;
      // The table starts 8-aligned, right after its vtable (2-aligned).
      int vt = w.size();
      while ((vt + vtSize) % 8 != 0) vt++;
      w.padTo(vt);
      w.u16(vtSize);
      w.u16(size);
      short[] offsets = new short[slots];
      for (int i = 0; i < fields.size(); i++) offsets[fields.get(i).slot] = (short) at[i];
      for (short o : offsets) w.u16(o);
      int table = w.size();
      w.i32(table - vt); // soffset: the vtable is at table - soffset
      for (int i = 0; i < fields.size(); i++) {
        w.padTo(table + at[i]);
        Field f = fields.get(i);
        switch (f.size) {
          case 1 -> w.u8((int) f.value);
          case 2 -> w.u16((int) f.value);
          case 4 -> w.i32((int) f.value);
          default -> w.i64(f.value);
        }
      }
      w.padTo(table + size);
      for (int i = 0; i < fields.size(); i++) {
        Object c = fields.get(i).child;
        if (c == null) continue;
        int child;
        if (c instanceof byte[] s) {
          w.align(4);
          child = w.size();
          w.u32(s.length);
          w.raw(s);
          w.u8(0);
        } else if (c instanceof Table t) {
          child = t.write(w);
        } else if (c instanceof long[] longs) {
          while ((w.size() + 4) % 8 != 0) w.u8(0); // the elements 8-aligned
          child = w.size();
          w.u32(longs.length / 2);
          for (long v : longs) w.i64(v);
        } else {
          List<Table> ts = (List<Table>) c;
          w.align(4);
          child = w.size();
          w.u32(ts.size());
          int slotsAt = w.size();
          for (int k = 0; k < ts.size(); k++) w.u32(0);
          for (int k = 0; k < ts.size(); k++) {
            int pos = slotsAt + 4 * k;
            w.patch(pos, ts.get(k).write(w));
          }
        }
        w.patch(table + at[i], child);
      }
      return table;
    }
  }

  /** Little-endian bytes, growing; patch writes a uoffset (target - position). */
  private static final class Writer {
    private ByteBuffer b = le(256);

    int size() {
      return b.position();
    }

    private void room(int n) {
      if (b.remaining() >= n) return;
      ByteBuffer bigger = le(Math.max(b.capacity() * 2, b.position() + n));
      b.flip();
      bigger.put(b);
      b = bigger;
    }

    void u8(int v) {
      room(1);
      b.put((byte) v);
    }

    void u16(int v) {
      room(2);
      b.putShort((short) v);
    }

    void i32(int v) {
      room(4);
      b.putInt(v);
    }

    void u32(int v) {
      i32(v);
    }

    void i64(long v) {
      room(8);
      b.putLong(v);
    }

    void raw(byte[] bytes) {
      room(bytes.length);
      b.put(bytes);
    }

    void padTo(int pos) {
      while (size() < pos) u8(0);
    }

    void align(int n) {
      while (size() % n != 0) u8(0);
    }

    void patch(int pos, int target) {
      b.putInt(pos, target - pos);
    }

    byte[] bytes() {
      byte[] out = new byte[b.position()];
      b.flip();
      b.get(out);
      return out;
    }
  }

  private static ByteBuffer le(int n) {
    return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static int pad8(int n) {
    return (8 - n % 8) % 8;
  }

  private static long[] toArray(List<Long> list) {
    long[] a = new long[list.size()];
    for (int i = 0; i < a.length; i++) a[i] = list.get(i);
    return a;
  }
}
