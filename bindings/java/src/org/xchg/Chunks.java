package org.xchg;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * ByteBuffers as the native side takes them: for chunk i either a buffer
 * (a direct one, read in place; or a read-only heap one, whose array the
 * native side takes from the buffer's fields, as Java cannot) or a heap
 * array (copied out 64 KiB at a time, see the README), with the offset and
 * length of the bytes between the buffer's position and its limit (for a
 * read-only heap buffer, the position: the native side adds the array
 * offset).  Nothing is copied here, and the buffers' positions are not
 * moved.
 */
final class Chunks {
  final ByteBuffer[] buffers;
  final byte[][] heap;
  final int[] offsets;
  final int[] lengths;
  /** Part p is chunks [partStarts[p], partStarts[p+1]). */
  final int[] partStarts;

  private Chunks(int n, int parts) {
    buffers = new ByteBuffer[n];
    heap = new byte[n][];
    offsets = new int[n];
    lengths = new int[n];
    partStarts = new int[parts + 1];
  }

  static Chunks of(ByteBuffer[] chunks) {
    return of(new ByteBuffer[][] {chunks});
  }

  static Chunks of(ByteBuffer[][] parts) {
    Objects.requireNonNull(parts, "parts");
    int n = 0;
    for (ByteBuffer[] part : parts) {
      n += Objects.requireNonNull(part, "a part's chunk array").length;
    }
    Chunks c = new Chunks(n, parts.length);
    int i = 0;
    for (int p = 0; p < parts.length; p++) {
      c.partStarts[p] = i;
      for (ByteBuffer b : parts[p]) {
        c.set(i++, Objects.requireNonNull(b, "a chunk"));
      }
    }
    c.partStarts[parts.length] = i;
    return c;
  }

  /** Whether the chunks hold no byte at all (no part, no chunk, or only empty ones). */
  boolean holdNoBytes() {
    for (int n : lengths) if (n > 0) return false;
    return true;
  }

  private void set(int i, ByteBuffer b) {
    lengths[i] = b.remaining();
    if (b.hasArray()) {
      heap[i] = b.array();
      offsets[i] = b.arrayOffset() + b.position();
    } else {
      // Direct, or a read-only heap buffer, whose array only native code can
      // reach: it is read in place, never copied whole onto the Java heap (as
      // it was on every acquire, a cache hit's too, and kept by the holder).
      buffers[i] = b;
      offsets[i] = b.position();
    }
  }
}
