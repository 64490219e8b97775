/* stream_zstd.c — zstd frames as a stream codec: concatenated frames,
 * skippable frames skipped and content checksums verified (libzstd does
 * both); plus the encoder. */
#include <zstd.h>

#include "codec/frame_decoder.h"
#include "codec/stream_frames.h"

static void *zstd_context(void) { return ZSTD_createDStream(); }

static void zstd_free(void *dstream) { ZSTD_freeDStream(dstream); }

static void zstd_forget(void *dstream) { ZSTD_DCtx_reset(dstream, ZSTD_reset_session_only); }

/* ZSTD_decompressStream returns 0 where a frame ends (its checksum
 * verified), else a hint of the input it wants next. */
static int zstd_decode(void *dstream, uint8_t *dst, size_t *dst_n, const uint8_t *src,
                       size_t *src_n, const char **why) {
  ZSTD_outBuffer out = {dst, *dst_n, 0};
  ZSTD_inBuffer in = {src, *src_n, 0};
  size_t ret = ZSTD_decompressStream(dstream, &out, &in);
  if (ZSTD_isError(ret)) {
    *why = ZSTD_getErrorName(ret);
    return -1;
  }
  *dst_n = out.pos;
  *src_n = in.pos;
  return ret != 0;
}

static const frame_library zstd_library = {"zstd",      zstd_context, zstd_free,
                                           zstd_forget, zstd_decode,  0};

static xchg_status zstd_create(void **state, xchg_error *err) {
  return frame_decoder_create(&zstd_library, state, err);
}

const stream_decoder_ops stream_zstd_decoder = {"zstd",
                                                zstd_create,
                                                frame_decoder_destroy,
                                                frame_decoder_reset,
                                                frame_decoder_refill,
                                                frame_decoder_finish};

xchg_status stream_encode_zstd(const xchg_stream_encode_options *o, const uint8_t *src, size_t n,
                               stream_sink *sink, xchg_error *err) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  if (cctx == NULL) return xchg_errorf(err, XCHG_ENOMEM, "zstd encode: no memory");
  size_t bound = ZSTD_compressBound(n);
  uint8_t *dst = stream_sink_reserve(sink, bound);
  xchg_status st = XCHG_OK;
  if (dst == NULL) {
    st = xchg_errorf(err, XCHG_ENOMEM, "zstd encode: no memory");
  } else {
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, o->level ? o->level : 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, o->checksum ? 1 : 0);
    size_t written = ZSTD_compress2(cctx, dst, bound, src, n);
    if (ZSTD_isError(written))
      st = xchg_errorf(err, XCHG_EINVAL, "zstd encode: %s", ZSTD_getErrorName(written));
    else
      sink->size += written;
  }
  ZSTD_freeCCtx(cctx);
  return st;
}
