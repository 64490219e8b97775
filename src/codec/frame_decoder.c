/* frame_decoder.c — see frame_decoder.h. */
#include "codec/frame_decoder.h"

#include <stdlib.h>

#include "codec/helpers.h"

typedef struct frame_state {
  const frame_library *lib;
  void *ctx;
  int in_frame;         /* a frame has started and not yet ended */
  int64_t frame_index;  /* frames (skippable ones included) seen so far */
  uint64_t frame_start; /* compressed offset of the current frame */
  /* A frame's failure met after bytes of the same window: they go out
   * first, and the next refill returns it. */
  xchg_status deferred;
  xchg_error deferred_err;
} frame_state;

xchg_status frame_decoder_create(const frame_library *lib, void **state, xchg_error *err) {
  frame_state *st = calloc(1, sizeof *st);
  if (st == NULL) return xchg_errorf(err, XCHG_ENOMEM, "%s frame: no memory", lib->name);
  st->lib = lib;
  if ((st->ctx = lib->create()) == NULL) {
    free(st);
    return xchg_errorf(err, XCHG_ENOMEM, "%s frame: cannot create a decompression context",
                       lib->name);
  }
  *state = st;
  return XCHG_OK;
}

void frame_decoder_destroy(void *state) {
  frame_state *st = state;
  if (st == NULL) return;
  st->lib->destroy(st->ctx);
  free(st);
}

void frame_decoder_reset(void *state) {
  frame_state *st = state;
  st->lib->reset(st->ctx);
  st->in_frame = 0;
  st->frame_index = 0; /* a new stream: its frames count from 0 in messages */
  st->deferred = XCHG_OK;
}

/* Runs the library over the input available, writing at most *dst_n bytes
 * at dst; sets *dst_n to the bytes written and *ended when the frame ended. */
static xchg_status decode_some(xchg_istream *s, frame_state *st, uint8_t *dst, size_t *dst_n,
                               int *ended, xchg_error *err) {
  size_t avail = stream_in_avail(s), src_n = avail;
  const char *why = NULL;
  int more = st->lib->decode(st->ctx, dst, dst_n, stream_in_ptr(s), &src_n, &why);
  *ended = 0;
  if (more < 0) {
    xchg_status bad =
        xchg_errorf(err, XCHG_EFORMAT,
                    "%s frame %lld (starting at byte %llu): %s, in the %zu bytes from byte %llu",
                    st->lib->name, (long long)st->frame_index, (unsigned long long)st->frame_start,
                    why, avail, (unsigned long long)stream_in_offset(s));
    frame_decoder_reset(st);
    return bad;
  }
  stream_in_consume(s, src_n);
  if (more == 0) {
    st->in_frame = 0;
    st->frame_index++;
    *ended = 1;
  } else if (src_n == 0 && *dst_n == 0) {
    /* No input left and nothing more to flush: the frame was cut. */
    return xchg_errorf(err, XCHG_EIO, "%s frame %lld (starting at byte %llu)" CUT_SHORT_AT,
                       st->lib->name, (long long)st->frame_index,
                       (unsigned long long)st->frame_start,
                       (unsigned long long)stream_in_offset(s));
  }
  return XCHG_OK;
}

xchg_status frame_decoder_refill(xchg_istream *s, void *state, xchg_error *err) {
  frame_state *st = state;
  if (st->deferred != XCHG_OK) {
    *err = st->deferred_err;
    return st->deferred;
  }
  uint8_t *out;
  size_t room;
  xchg_status status = stream_out_take(s, 1, &out, &room, err);
  if (status != XCHG_OK) return status;
  size_t produced = 0;
  while (produced < room) {
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
    size_t dst_n = room - produced;
    int ended;
    status = decode_some(s, st, out + produced, &dst_n, &ended, err);
    if (status != XCHG_OK && produced == 0) return status;
    if (status != XCHG_OK) { /* the bytes before it are good: they go out first */
      st->deferred = status;
      st->deferred_err = *err;
      break;
    }
    produced += dst_n;
    if (ended && produced > 0 && st->lib->window_ends_with_frame) break;
  }
  stream_set_window(s, out, produced);
  return XCHG_OK;
}

/* Decodes on to the end of the current frame: its trailer (end mark,
 * content checksum) follows the last data byte and is otherwise read only
 * when the next window is asked for. */
xchg_status frame_decoder_finish(xchg_istream *s, void *state, xchg_error *err) {
  frame_state *st = state;
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
