/* xchg/codec.h — block codecs: one compressed buffer in, one buffer out.
 *
 * Arrow IPC body compression compresses each buffer of a record batch on its
 * own, as one LZ4 frame or one zstd frame.  These calls decompress straight
 * into the caller's destination (its final, aligned buffer) and reuse one
 * decompression context per thread, so that many small buffers do not each
 * pay for creating a context. */
#ifndef XCHG_CODEC_H
#define XCHG_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/buf.h"
#include "xchg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum xchg_block_codec {
  XCHG_BLOCK_NONE = 0,
  XCHG_BLOCK_LZ4_FRAME = 1,
  XCHG_BLOCK_ZSTD = 2
} xchg_block_codec;

/* "none", "lz4", "zstd". */
const char *xchg_block_codec_name(xchg_block_codec codec);

/* Decompresses src (exactly one codec stream, possibly several concatenated
 * frames) into dst, which must receive exactly dst_size bytes: producing
 * fewer or more is an XCHG_EFORMAT error, as is any corrupt input. */
xchg_status xchg_block_decompress(xchg_block_codec codec, const void *src, size_t src_size,
                                  void *dst, size_t dst_size, xchg_error *err);

/* Compresses src at level (0 = the codec's default) into a new buffer. */
xchg_status xchg_block_compress(xchg_block_codec codec, int level, const void *src,
                                size_t src_size, xchg_buf **out, xchg_error *err);

/* Number of xchg_block_decompress calls made so far in this process, and
 * the bytes they produced: lets tests prove what was (not) decompressed. */
int64_t xchg_block_decompress_calls(void);
int64_t xchg_block_decompressed_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
