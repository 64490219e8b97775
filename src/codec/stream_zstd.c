/* stream_zstd.c — zstd frames as a stream codec: concatenated frames,
 * skippable frames skipped and content checksums verified (libzstd does
 * both); plus the encoder. */
#include <stdlib.h>
#include <zstd.h>

#include "codec/stream_frames.h"

typedef struct zstd_state {
  ZSTD_DStream *dstream;
  int in_frame;
  int64_t frame_index;
  uint64_t frame_start;
} zstd_state;

static xchg_status zstd_create(void **state, xchg_error *err) {
  zstd_state *st = calloc(1, sizeof *st);
  if (st == NULL || (st->dstream = ZSTD_createDStream()) == NULL) {
    free(st);
    return xchg_errorf(err, XCHG_ENOMEM, "zstd: cannot create a decompression context");
  }
  *state = st;
  return XCHG_OK;
}

static void zstd_destroy(void *state) {
  zstd_state *st = state;
  if (st == NULL) return;
  ZSTD_freeDStream(st->dstream);
  free(st);
}

static void zstd_reset(void *state) {
  zstd_state *st = state;
  ZSTD_DCtx_reset(st->dstream, ZSTD_reset_session_only);
  st->in_frame = 0;
}

/* Runs libzstd over the input available into out; sets *ended when the
 * frame ended (its last block read and its checksum, if any, verified). */
static xchg_status decode_some(xchg_istream *s, zstd_state *st, ZSTD_outBuffer *out, int *ended,
                               xchg_error *err) {
  size_t avail = stream_in_avail(s);
  ZSTD_inBuffer in = {stream_in_ptr(s), avail, 0};
  size_t before = out->pos;
  size_t ret = ZSTD_decompressStream(st->dstream, out, &in);
  *ended = 0;
  if (ZSTD_isError(ret)) {
    uint64_t at = stream_in_offset(s);
    zstd_reset(st);
    return xchg_errorf(err, XCHG_EFORMAT,
                       "zstd frame %lld (starting at byte %llu): %s, in the %zu bytes from byte %llu",
                       (long long)st->frame_index, (unsigned long long)st->frame_start,
                       ZSTD_getErrorName(ret), avail, (unsigned long long)at);
  }
  stream_in_consume(s, in.pos);
  if (ret == 0) {
    st->in_frame = 0;
    st->frame_index++;
    *ended = 1;
  } else if (in.pos == 0 && out->pos == before) {
    return xchg_errorf(err, XCHG_EIO,
                       "zstd frame %lld (starting at byte %llu) is truncated: the input ends at "
                       "byte %llu",
                       (long long)st->frame_index, (unsigned long long)st->frame_start,
                       (unsigned long long)stream_in_offset(s));
  }
  return XCHG_OK;
}

static xchg_status zstd_refill(xchg_istream *s, void *state, xchg_error *err) {
  zstd_state *st = state;
  xchg_status status = stream_out_reserve(s, s->opts.window_size, err);
  if (status != XCHG_OK) return status;
  ZSTD_outBuffer out = {s->out, s->opts.window_size, 0};
  while (out.pos < out.size) {
    if (stream_in_avail(s) == 0) {
      if (out.pos > 0) break;
      status = stream_in_fill(s, 1, err);
      if (status != XCHG_OK) return status;
    }
    if (stream_in_avail(s) == 0 && !st->in_frame) break;
    if (!st->in_frame) {
      st->in_frame = 1;
      st->frame_start = stream_in_offset(s);
    }
    int ended;
    status = decode_some(s, st, &out, &ended, err);
    if (status != XCHG_OK) return status;
  }
  stream_set_window(s, s->out, out.pos);
  return XCHG_OK;
}

/* Decodes on to the end of the current frame, where ZSTD_decompressStream
 * returns 0 having verified the content checksum: the last block's end and
 * the checksum are otherwise read only when the next window is asked for. */
static xchg_status zstd_finish(xchg_istream *s, void *state, xchg_error *err) {
  zstd_state *st = state;
  xchg_status status = XCHG_OK;
  if (st->in_frame) status = stream_out_reserve(s, s->opts.window_size, err);
  while (status == XCHG_OK && st->in_frame) {
    status = stream_in_fill(s, 1, err);
    if (status != XCHG_OK) break;
    ZSTD_outBuffer out = {s->out, s->opts.window_size, 0};
    int ended;
    status = decode_some(s, st, &out, &ended, err);
    if (status == XCHG_OK && out.pos > 0) { /* data follows: left for a reader who goes on */
      stream_set_window(s, s->out, out.pos);
      break;
    }
  }
  return status;
}

const stream_decoder_ops stream_zstd_decoder = {"zstd",      zstd_create, zstd_destroy,
                                                zstd_reset,  zstd_refill, zstd_finish};

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
