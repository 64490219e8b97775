/* stream_frames.c — the encoder of each frame codec (stream_frames.h). */
#include "codec/stream_frames.h"

xchg_status stream_encode_frame(xchg_stream_codec codec, const xchg_stream_encode_options *o,
                                const uint8_t *src, size_t n, stream_sink *sink, xchg_error *err) {
  switch (codec) {
    case XCHG_STREAM_NONE: return stream_sink_append(sink, src, n, err);
    case XCHG_STREAM_LZ4_FRAME: return stream_encode_lz4frame(o, src, n, sink, err);
    case XCHG_STREAM_ZSTD: return stream_encode_zstd(o, src, n, sink, err);
    case XCHG_STREAM_SNAPPY_FRAMED: return stream_encode_snappyframed(o, src, n, sink, err);
    default:
      return xchg_errorf(err, XCHG_EINVAL, "stream encode: no encoder for codec %s",
                         xchg_stream_codec_name(codec));
  }
}
