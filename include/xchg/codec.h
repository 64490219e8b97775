/** \file
 * xchg/codec.h — block codecs: one compressed buffer in, one buffer out.
 *
 * Arrow IPC body compression compresses each buffer of a record batch on its
 * own, as one LZ4 frame or one zstd frame.  These calls decompress straight
 * into the caller's destination (its final, aligned buffer) and reuse one
 * decompression context per thread, so that many small buffers do not each
 * pay for creating a context.
 *
 * Threads: every function may be called on any thread at the same time.
 */
#ifndef XCHG_CODEC_H
#define XCHG_CODEC_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/buf.h"
#include "xchg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The body compressions of Arrow IPC (BodyCompression.codec). */
typedef enum xchg_block_codec {
  XCHG_BLOCK_NONE = 0,      /**< uncompressed */
  XCHG_BLOCK_LZ4_FRAME = 1, /**< one LZ4 frame per buffer */
  XCHG_BLOCK_ZSTD = 2       /**< one zstd frame per buffer */
} xchg_block_codec;

/** "none", "lz4", "zstd". */
XCHG_API const char *xchg_block_codec_name(xchg_block_codec codec);

/** Decompresses src (exactly one codec stream, possibly several concatenated
 * frames) into dst, which must receive exactly dst_size bytes: producing
 * fewer or more is an XCHG_EFORMAT error, as is any corrupt input.  For
 * XCHG_BLOCK_NONE, src is copied (its size must be dst_size); a codec
 * outside the enum is XCHG_EINVAL, and so is a NULL src or dst with a size
 * above 0, naming it (NULL with size 0 is an empty buffer). */
XCHG_API XCHG_NODISCARD xchg_status xchg_block_decompress(xchg_block_codec codec, const void *src,
                                                          size_t src_size, void *dst,
                                                          size_t dst_size, xchg_error *err);

/** The most that src_size bytes of the codec's format can decompress to,
 * whatever they hold: 255 bytes per byte for LZ4 frames (a match costs at
 * least a token and a 2-byte offset, and each further 255 bytes of its
 * length one more byte), 32768 for zstd (a block costs at least 4 bytes,
 * e.g. an RLE block, and yields at most 128 KiB); saturates at SIZE_MAX. */
XCHG_API size_t xchg_block_max_decompressed_size(xchg_block_codec codec, size_t src_size);

/** Checks a size declared for src before dst_size bytes are allocated for
 * it, from src's length and frame headers alone: more than
 * xchg_block_max_decompressed_size, or (zstd) other than the content size
 * its frame headers state when every frame states one, is an XCHG_EFORMAT
 * error naming both sizes.  Passing does not make src valid:
 * xchg_block_decompress still checks every byte.  A NULL src with a
 * src_size above 0 is XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_block_check_size(xchg_block_codec codec, const void *src,
                                                          size_t src_size, size_t dst_size,
                                                          xchg_error *err);

/** The compression levels codec takes, from *min to *max, 0 (the codec's
 * default) among them: LZ4 frames 0 to 12 (1 and 2 the fast compressor, 3
 * to 12 the high-compression one), zstd libzstd's ZSTD_minCLevel() to
 * ZSTD_maxCLevel() (-131072 to 22 in libzstd 1.5; negative levels are the
 * fast ones), NONE 0 alone.  A NULL min or max is not written. */
XCHG_API void xchg_block_codec_levels(xchg_block_codec codec, int *min, int *max);

/** Compresses src at level (0 = the codec's default; outside
 * xchg_block_codec_levels an XCHG_EINVAL error) into a new buffer in *out
 * (NULL on failure; a NULL out, or a NULL src with a src_size above 0, is
 * XCHG_EINVAL naming it). */
XCHG_API XCHG_NODISCARD xchg_status xchg_block_compress(xchg_block_codec codec, int level,
                                                        const void *src, size_t src_size,
                                                        xchg_buf **out, xchg_error *err);

#ifdef __cplusplus
}
#endif
#endif
