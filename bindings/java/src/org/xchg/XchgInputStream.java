package org.xchg;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * An InputStream of the decompressed bytes of a compressed stream
 * (xchg_istream of xchg/stream.h): what a sort-shuffle row reader pulls
 * rows from.  The compressed bytes come from ByteBuffers (direct ones read
 * in place, heap ones copied out 64 KiB at a time) or from another
 * InputStream (read 64 KiB at a time).  A read copies decompressed bytes
 * straight from xchg's window into the caller's array; small reads cost
 * one JNI call each, so readers of many small records should read through
 * a buffer or in larger pieces.
 *
 * <p>Corrupt or truncated input throws an IOException whose cause is an
 * {@link XchgException} carrying xchg's message (compressed byte offset,
 * block or frame); a read that meets the error after some bytes returns
 * them, and the next read throws.  Not meant for concurrent use, but safe
 * under it.
 */
public final class XchgInputStream extends InputStream {
  static {
    Xchg.ensureLoaded();
  }

  private long handle;
  // Keeps the compressed buffers (or stream) reachable while native code reads them.
  @SuppressWarnings("unused")
  private Object source;

  /** Decompresses the concatenation of chunks (position to limit of each). */
  public XchgInputStream(ByteBuffer[] chunks, StreamCodec codec) throws IOException {
    Objects.requireNonNull(codec, "codec");
    Chunks c = Chunks.of(chunks);
    source = c;
    handle = open(() -> nOpenChunks(c.buffers, c.heap, c.offsets, c.lengths, codec.id));
  }

  /** Decompresses what {@code compressed} yields; closing this stream closes it. */
  public XchgInputStream(InputStream compressed, StreamCodec codec) throws IOException {
    Objects.requireNonNull(compressed, "compressed");
    Objects.requireNonNull(codec, "codec");
    source = compressed;
    handle = open(() -> nOpenInput(compressed, codec.id));
  }

  private interface Opener {
    long open();
  }

  private static long open(Opener o) throws IOException {
    try {
      return o.open();
    } catch (XchgException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  @Override
  public synchronized int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    long h = live();
    if (len == 0) return 0;
    try {
      return nRead(h, b, off, len);
    } catch (XchgException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  @Override
  public synchronized long skip(long n) throws IOException {
    long h = live();
    if (n <= 0) return 0;
    try {
      return nSkip(h, n);
    } catch (XchgException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  /** The codec in use (the detected one with AUTO). */
  public synchronized StreamCodec codec() throws IOException {
    int id = nCodec(live());
    for (StreamCodec c : StreamCodec.values()) {
      if (c.id == id) return c;
    }
    throw new IllegalStateException("unknown codec id " + id);
  }

  /** Decompressed bytes read so far. */
  public synchronized long position() throws IOException {
    return nPosition(live());
  }

  @Override
  public synchronized void close() throws IOException {
    if (handle == 0) return;
    long h = handle;
    handle = 0;
    nClose(h);
    Object s = source;
    source = null;
    if (s instanceof InputStream in) in.close();
  }

  private long live() throws IOException {
    if (handle == 0) throw new IOException("XchgInputStream used after close");
    return handle;
  }

  private static native long nOpenChunks(
      ByteBuffer[] buffers, byte[][] heap, int[] offsets, int[] lengths, int codec);

  private static native long nOpenInput(InputStream in, int codec);

  private static native int nRead(long stream, byte[] dst, int off, int len);

  private static native long nSkip(long stream, long n);

  private static native int nCodec(long stream);

  private static native long nPosition(long stream);

  private static native void nClose(long stream);
}
