/* stream_registry.c — every stream codec by its xchg_stream_codec. */
#include "codec/stream_registry.h"

const stream_decoder_ops *stream_decoder_for(xchg_stream_codec codec) {
  switch (codec) {
    case XCHG_STREAM_NONE: return &stream_none_decoder;
    case XCHG_STREAM_LZ4_FRAME: return &stream_lz4frame_decoder;
    case XCHG_STREAM_ZSTD: return &stream_zstd_decoder;
    case XCHG_STREAM_LZ4_JAVA: return &stream_lz4java_decoder;
    case XCHG_STREAM_SNAPPY_JAVA: return &stream_snappyjava_decoder;
    case XCHG_STREAM_SNAPPY_FRAMED: return &stream_snappyframed_decoder;
    case XCHG_STREAM_COMET: return &stream_comet_decoder;
    case XCHG_STREAM_AUTO: break;
  }
  return NULL;
}

xchg_status stream_encode_any(xchg_stream_codec codec, const xchg_stream_encode_options *o,
                              const uint8_t *src, size_t n, stream_sink *sink, xchg_error *err) {
  switch (codec) {
    case XCHG_STREAM_LZ4_JAVA: return stream_encode_lz4java(o, src, n, sink, err);
    case XCHG_STREAM_SNAPPY_JAVA: return stream_encode_snappyjava(o, src, n, sink, err);
    case XCHG_STREAM_COMET: return stream_encode_comet(o, src, n, sink, err);
    default: return stream_encode_frame(codec, o, src, n, sink, err);
  }
}
