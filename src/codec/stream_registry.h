/* stream_registry.h — every stream codec, by xchg_stream_codec: the frame
 * codecs of stream_frames.h and the formats built on blocks or frames
 * (lz4-java, snappy-java, Comet).  Only the input stream and the encode
 * entry point look codecs up (private to src/codec). */
#ifndef XCHG_CODEC_STREAM_REGISTRY_H
#define XCHG_CODEC_STREAM_REGISTRY_H

#include "codec/stream_frames.h"

extern const stream_decoder_ops stream_lz4java_decoder;
extern const stream_decoder_ops stream_snappyjava_decoder;
extern const stream_decoder_ops stream_comet_decoder;

xchg_status stream_encode_lz4java(const xchg_stream_encode_options *o, const uint8_t *src, size_t n,
                                  stream_sink *sink, xchg_error *err);
xchg_status stream_encode_snappyjava(const xchg_stream_encode_options *o, const uint8_t *src,
                                     size_t n, stream_sink *sink, xchg_error *err);
xchg_status stream_encode_comet(const xchg_stream_encode_options *o, const uint8_t *src, size_t n,
                                stream_sink *sink, xchg_error *err);

/* The decoder of a concrete codec (not AUTO), NULL for none. */
const stream_decoder_ops *stream_decoder_for(xchg_stream_codec codec);

/* Appends one complete stream of src in codec to sink. */
xchg_status stream_encode_any(xchg_stream_codec codec, const xchg_stream_encode_options *o,
                              const uint8_t *src, size_t n, stream_sink *sink, xchg_error *err);

#endif
