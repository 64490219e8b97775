/* stream_frames.h — the frame codecs: self-delimiting compressed frames
 * (LZ4 frame, zstd, the snappy framing format, none), which the Comet block
 * format carries inside its blocks (private to src/codec). */
#ifndef XCHG_CODEC_STREAM_FRAMES_H
#define XCHG_CODEC_STREAM_FRAMES_H

#include "codec/stream_window.h"

extern const stream_decoder_ops stream_none_decoder;
extern const stream_decoder_ops stream_lz4frame_decoder;
extern const stream_decoder_ops stream_zstd_decoder;
extern const stream_decoder_ops stream_snappyframed_decoder;

/* Each appends one complete stream of src to sink. */
xchg_status stream_encode_lz4frame(const xchg_stream_encode_options *o, const uint8_t *src,
                                   size_t n, stream_sink *sink, xchg_error *err);
xchg_status stream_encode_zstd(const xchg_stream_encode_options *o, const uint8_t *src, size_t n,
                               stream_sink *sink, xchg_error *err);
xchg_status stream_encode_snappyframed(const xchg_stream_encode_options *o, const uint8_t *src,
                                       size_t n, stream_sink *sink, xchg_error *err);

/* The encoder of a frame codec (NONE, LZ4_FRAME, ZSTD, SNAPPY_FRAMED);
 * XCHG_EINVAL for any other codec. */
xchg_status stream_encode_frame(xchg_stream_codec codec, const xchg_stream_encode_options *o,
                                const uint8_t *src, size_t n, stream_sink *sink, xchg_error *err);

#endif
