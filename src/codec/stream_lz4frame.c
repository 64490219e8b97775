/* stream_lz4frame.c — LZ4 frames as a stream codec: concatenated frames,
 * skippable frames skipped, block and content checksums verified (liblz4
 * does all three); plus the encoder. */
#include <lz4frame.h>
#include <stdlib.h>

#include "codec/stream_frames.h"

typedef struct lz4frame_state {
  LZ4F_dctx *dctx;
  int in_frame;         /* a frame has started and not yet ended */
  int64_t frame_index;  /* frames (skippable ones included) seen so far */
  uint64_t frame_start; /* compressed offset of the current frame */
} lz4frame_state;

static xchg_status lz4frame_create(void **state, xchg_error *err) {
  lz4frame_state *st = calloc(1, sizeof *st);
  if (st == NULL) return xchg_errorf(err, XCHG_ENOMEM, "lz4 frame: no memory");
  if (LZ4F_isError(LZ4F_createDecompressionContext(&st->dctx, LZ4F_VERSION))) {
    free(st);
    return xchg_errorf(err, XCHG_ENOMEM, "lz4 frame: cannot create a decompression context");
  }
  *state = st;
  return XCHG_OK;
}

static void lz4frame_destroy(void *state) {
  lz4frame_state *st = state;
  if (st == NULL) return;
  LZ4F_freeDecompressionContext(st->dctx);
  free(st);
}

static void lz4frame_reset(void *state) {
  lz4frame_state *st = state;
  LZ4F_resetDecompressionContext(st->dctx);
  st->in_frame = 0;
}

/* Runs liblz4 over the input available, writing at most *dst_n bytes at
 * dst; sets *dst_n to the bytes written and *ended when the frame ended
 * (its end mark read and its content checksum, if any, verified). */
static xchg_status decode_some(xchg_istream *s, lz4frame_state *st, uint8_t *dst, size_t *dst_n,
                               int *ended, xchg_error *err) {
  size_t avail = stream_in_avail(s), src_n = avail;
  size_t hint = LZ4F_decompress(st->dctx, dst, dst_n, stream_in_ptr(s), &src_n, NULL);
  *ended = 0;
  if (LZ4F_isError(hint)) {
    uint64_t at = stream_in_offset(s);
    LZ4F_resetDecompressionContext(st->dctx);
    return xchg_errorf(err, XCHG_EFORMAT,
                       "lz4 frame %lld (starting at byte %llu): %s, in the %zu bytes from byte %llu",
                       (long long)st->frame_index, (unsigned long long)st->frame_start,
                       LZ4F_getErrorName(hint), avail, (unsigned long long)at);
  }
  stream_in_consume(s, src_n);
  if (hint == 0) {
    st->in_frame = 0;
    st->frame_index++;
    *ended = 1;
  } else if (src_n == 0 && *dst_n == 0) {
    /* No input left and nothing more to flush: the frame was cut. */
    return xchg_errorf(err, XCHG_EIO,
                       "lz4 frame %lld (starting at byte %llu) is truncated: the input ends at "
                       "byte %llu",
                       (long long)st->frame_index, (unsigned long long)st->frame_start,
                       (unsigned long long)stream_in_offset(s));
  }
  return XCHG_OK;
}

static xchg_status lz4frame_refill(xchg_istream *s, void *state, xchg_error *err) {
  lz4frame_state *st = state;
  xchg_status status = stream_out_reserve(s, s->opts.window_size, err);
  if (status != XCHG_OK) return status;
  size_t produced = 0;
  while (produced < s->opts.window_size) {
    if (stream_in_avail(s) == 0) {
      if (produced > 0) break; /* hand out what we have rather than block */
      status = stream_in_fill(s, 1, err);
      if (status != XCHG_OK) return status;
    }
    if (stream_in_avail(s) == 0 && !st->in_frame) break; /* clean end between frames */
    if (!st->in_frame) {
      st->in_frame = 1;
      st->frame_start = stream_in_offset(s);
    }
    size_t dst_n = s->opts.window_size - produced;
    int ended;
    status = decode_some(s, st, s->out + produced, &dst_n, &ended, err);
    if (status != XCHG_OK) return status;
    produced += dst_n;
    /* Hand the window out at a frame's end: starting the next frame in
     * the space left would make liblz4 decode its first block into a side
     * buffer and copy it over in pieces. */
    if (ended && produced > 0) break;
  }
  stream_set_window(s, s->out, produced);
  return XCHG_OK;
}

/* Decodes on to the end of the current frame: the end mark and content
 * checksum that follow the last data byte are otherwise read only when the
 * next window is asked for. */
static xchg_status lz4frame_finish(xchg_istream *s, void *state, xchg_error *err) {
  lz4frame_state *st = state;
  xchg_status status = XCHG_OK;
  if (st->in_frame) status = stream_out_reserve(s, s->opts.window_size, err);
  while (status == XCHG_OK && st->in_frame) {
    status = stream_in_fill(s, 1, err);
    if (status != XCHG_OK) break;
    size_t dst_n = s->opts.window_size;
    int ended;
    status = decode_some(s, st, s->out, &dst_n, &ended, err);
    if (status == XCHG_OK && dst_n > 0) { /* data follows: left for a reader who goes on */
      stream_set_window(s, s->out, dst_n);
      break;
    }
  }
  return status;
}

const stream_decoder_ops stream_lz4frame_decoder = {
    "lz4 frame", lz4frame_create, lz4frame_destroy, lz4frame_reset, lz4frame_refill,
    lz4frame_finish};

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
  prefs.frameInfo.contentChecksumFlag = o->checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  prefs.frameInfo.contentSize = n;
  prefs.compressionLevel = o->level;
  size_t bound = LZ4F_compressFrameBound(n, &prefs);
  uint8_t *dst = stream_sink_reserve(sink, bound);
  if (dst == NULL) return xchg_errorf(err, XCHG_ENOMEM, "lz4 frame encode: no memory");
  size_t written = LZ4F_compressFrame(dst, bound, src, n, &prefs);
  if (LZ4F_isError(written))
    return xchg_errorf(err, XCHG_EINVAL, "lz4 frame encode: %s", LZ4F_getErrorName(written));
  sink->size += written;
  return XCHG_OK;
}
