/* lz4_frames.h — LZ4 frames decoded in one piece into a buffer of known
 * size (private to src/codec; the Arrow IPC body codec LZ4_FRAME). */
#ifndef XCHG_CODEC_LZ4_FRAMES_H
#define XCHG_CODEC_LZ4_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/error.h"

/* Decodes the LZ4 frames of src[0, src_size) — one or more, skippable
 * frames skipped — into exactly dst[0, dst_size): every header field,
 * block size and checksum checked, and the output exactly dst_size bytes
 * long.  XCHG_EFORMAT, naming the compressed byte at fault, otherwise. */
xchg_status codec_lz4_frames_decode(const uint8_t *src, size_t src_size, uint8_t *dst,
                                    size_t dst_size, xchg_error *err);

#endif
