package org.xchg;

import java.lang.annotation.Native;

/**
 * The stream codecs of xchg/stream.h: how a byte stream is compressed as a
 * whole.  Spark's {@code spark.io.compression.codec=lz4} is {@link #LZ4_JAVA}
 * (lz4-java's LZ4BlockOutputStream); Comet's "lz4" is {@link #LZ4_FRAME}.
 */
public enum StreamCodec {
  /** Bytes pass through unchanged (plain Arrow IPC). */
  NONE(StreamCodec.NONE_ID),
  LZ4_FRAME(StreamCodec.LZ4_FRAME_ID),
  ZSTD(StreamCodec.ZSTD_ID),
  /** lz4-java's LZ4BlockOutputStream, Spark's "lz4". */
  LZ4_JAVA(StreamCodec.LZ4_JAVA_ID),
  /** snappy-java's SnappyOutputStream, Spark's "snappy". */
  SNAPPY_JAVA(StreamCodec.SNAPPY_JAVA_ID),
  SNAPPY_FRAMED(StreamCodec.SNAPPY_FRAMED_ID),
  /** Comet native shuffle blocks. */
  COMET(StreamCodec.COMET_ID),
  /** Decoding only: detect the codec from the first bytes. */
  AUTO(StreamCodec.AUTO_ID);

  /** The values of the C enum xchg_stream_codec (checked against it when the library is built). */
  @Native static final int NONE_ID = 0;

  @Native static final int LZ4_FRAME_ID = 1;
  @Native static final int ZSTD_ID = 2;
  @Native static final int LZ4_JAVA_ID = 3;
  @Native static final int SNAPPY_JAVA_ID = 4;
  @Native static final int SNAPPY_FRAMED_ID = 5;
  @Native static final int COMET_ID = 6;
  @Native static final int AUTO_ID = 7;

  /** The value of the C enum xchg_stream_codec. */
  final int id;

  StreamCodec(int id) {
    this.id = id;
  }
}
