package org.xchg;

/**
 * The stream codecs of xchg/stream.h: how a byte stream is compressed as a
 * whole.  Spark's {@code spark.io.compression.codec=lz4} is {@link #LZ4_JAVA}
 * (lz4-java's LZ4BlockOutputStream); Comet's "lz4" is {@link #LZ4_FRAME}.
 */
public enum StreamCodec {
  /** Bytes pass through unchanged (plain Arrow IPC). */
  NONE(0),
  LZ4_FRAME(1),
  ZSTD(2),
  /** lz4-java's LZ4BlockOutputStream, Spark's "lz4". */
  LZ4_JAVA(3),
  /** snappy-java's SnappyOutputStream, Spark's "snappy". */
  SNAPPY_JAVA(4),
  SNAPPY_FRAMED(5),
  /** Comet native shuffle blocks. */
  COMET(6),
  /** Decoding only: detect the codec from the first bytes. */
  AUTO(7);

  /** The value of the C enum xchg_stream_codec. */
  final int id;

  StreamCodec(int id) {
    this.id = id;
  }
}
