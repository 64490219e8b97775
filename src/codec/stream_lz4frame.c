/* stream_lz4frame.c — LZ4 frames as a stream codec: concatenated frames,
 * skippable frames skipped, block and content checksums verified (liblz4
 * does all three); plus the encoder. */
#include <lz4frame.h>
#include <string.h>

#include "codec/frame_decoder.h"
#include "codec/lz4f_words.h"
#include "codec/stream_frames.h"

static void *lz4frame_context(void) {
  LZ4F_dctx *dctx = NULL;
  return LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)) ? NULL : dctx;
}

static void lz4frame_free(void *dctx) { LZ4F_freeDecompressionContext(dctx); }

static void lz4frame_forget(void *dctx) { LZ4F_resetDecompressionContext(dctx); }

/* What liblz4 says of src's frame, which it refused (error), in words.
 * What `lz4 -l` writes is an unknown frame type to liblz4: it is named,
 * as the user can undo it, when the frame begins in src. */
static const char *refusal_words(size_t error, const uint8_t *src, size_t size) {
  if (size >= 4 && memcmp(src, "\x02\x21\x4c\x18", 4) == 0 &&
      strcmp(LZ4F_getErrorName(error), "ERROR_frameType_unknown") == 0)
    return "an LZ4 legacy frame (lz4 -l), which xchg does not read: decompress it first, lz4 -d";
  return codec_lz4f_error_words(error);
}

/* LZ4F_decompress returns 0 at a frame's end, else a hint of the input it
 * wants next. */
static int lz4frame_decode(void *dctx, uint8_t *dst, size_t *dst_n, const uint8_t *src,
                           size_t *src_n, const char **why) {
  size_t given = *src_n;
  size_t hint = LZ4F_decompress(dctx, dst, dst_n, src, src_n, NULL);
  if (LZ4F_isError(hint)) {
    *why = refusal_words(hint, src, given);
    return -1;
  }
  return hint != 0;
}

static const frame_library lz4frame_library = {"lz4",           lz4frame_context, lz4frame_free,
                                               lz4frame_forget, lz4frame_decode,  1};

static xchg_status lz4frame_create(void **state, xchg_error *err) {
  return frame_decoder_create(&lz4frame_library, state, err);
}

const stream_decoder_ops stream_lz4frame_decoder = {"lz4 frame",           lz4frame_create,
                                                    frame_decoder_destroy, frame_decoder_reset,
                                                    frame_decoder_refill,  frame_decoder_finish};

static LZ4F_blockSizeID_t block_size_id(size_t block_size) {
  if (block_size <= 64 * 1024) return LZ4F_max64KB;
  if (block_size <= 256 * 1024) return LZ4F_max256KB;
  if (block_size <= 1024 * 1024) return LZ4F_max1MB;
  return LZ4F_max4MB;
}

xchg_status stream_encode_lz4frame(const xchg_stream_encode_options *o, const uint8_t *src,
                                   size_t n, stream_sink *sink, xchg_error *err) {
  LZ4F_preferences_t prefs = {0};
  prefs.frameInfo.blockSizeID = block_size_id(o->block_size);
  prefs.frameInfo.contentChecksumFlag =
      o->checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  prefs.frameInfo.contentSize = n;
  prefs.compressionLevel = o->level;
  size_t bound = LZ4F_compressFrameBound(n, &prefs);
  uint8_t *dst = stream_sink_reserve(sink, bound);
  if (dst == NULL) return xchg_errorf(err, XCHG_ENOMEM, "lz4 frame encode: no memory");
  size_t written = LZ4F_compressFrame(dst, bound, src, n, &prefs);
  if (LZ4F_isError(written))
    return xchg_errorf(err, XCHG_EINVAL, "lz4 frame encode: %s", codec_lz4f_error_words(written));
  sink->size += written;
  return XCHG_OK;
}
