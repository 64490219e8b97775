package org.xchg;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * ByteBuffers as the native side takes them: for chunk i either a direct
 * buffer (read in place) or a heap array (copied out 64 KiB at a time, see
 * the README), with the offset and length of the bytes between the
 * buffer's position and its limit.  The buffers' positions are not moved.
 */
final class Chunks {
  final ByteBuffer[] direct;
  final byte[][] heap;
  final int[] offsets;
  final int[] lengths;
  /** Part p is chunks [partStarts[p], partStarts[p+1]). */
  final int[] partStarts;

  private Chunks(int n, int parts) {
    direct = new ByteBuffer[n];
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

  private void set(int i, ByteBuffer b) {
    lengths[i] = b.remaining();
    if (b.isDirect()) {
      direct[i] = b;
      offsets[i] = b.position();
    } else if (b.hasArray()) {
      heap[i] = b.array();
      offsets[i] = b.arrayOffset() + b.position();
    } else {
      // A read-only heap buffer hides its array: copy its bytes once.
      byte[] copy = new byte[b.remaining()];
      b.duplicate().get(copy);
      heap[i] = copy;
      offsets[i] = 0;
    }
  }
}
