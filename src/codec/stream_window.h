/* stream_window.h — what every stream codec shares with the input stream
 * (private to src/codec): the stream's state, its input and window, the
 * encoders' sink.  Codecs include this; which codecs exist is told by
 * stream_frames.h and stream_registry.h, above it.
 *
 * An xchg_istream owns two buffers: the compressed input, read from the
 * source (or, for a source held in memory, the source's own bytes read in
 * place), and the decompressed window.  Each codec is a `stream_decoder`
 * whose refill() consumes input through the in_* helpers below and sets the
 * window [win.pos, win.end).  A codec may point the window straight into
 * the input (a stored block): the input only moves during the next refill,
 * when the window is finished with. */
#ifndef XCHG_CODEC_STREAM_WINDOW_H
#define XCHG_CODEC_STREAM_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/stream.h"
#include "xchg/testing.h"

typedef struct stream_decoder_ops {
  const char *name;
  /* Creates the decoder's state in *state. */
  xchg_status (*create)(void **state, xchg_error *err);
  void (*destroy)(void *state);
  /* Forgets any frame in progress: the next bytes start a new stream. */
  void (*reset)(void *state);
  /* Produces the next non-empty window, or leaves it empty at a clean end
   * of the input (as far as the input limit, when one is set).  Input that
   * stops inside a frame or block is XCHG_EIO. */
  xchg_status (*refill)(xchg_istream *s, void *state, xchg_error *err);
  /* The consumer has read all it needs (xchg_source_finish), and the window
   * is empty: goes on with the current frame, never starting the next,
   * until its end, reading and verifying its trailer (end mark, checksum,
   * end block) — cut or corrupt as refill() would report it.  Decoded bytes
   * met on the way become the window and end the call: they are left for a
   * reader who goes on, and the trailer is not reached.  So an empty window
   * afterwards means the frame is finished (or none was in progress).  NULL
   * for formats whose blocks are whole once decoded and that have no end
   * marker (snappy-java, the snappy framing, none). */
  xchg_status (*finish)(xchg_istream *s, void *state, xchg_error *err);
} stream_decoder_ops;

struct xchg_istream {
  /* The current window, first: the inline xchg_istream_read reads it
   * through xchg_istream_window_ (stream.h), and it is all a read served
   * from the window touches. */
  xchg_istream_window_ win;
  const uint8_t *win_start;
  uint64_t win_base; /* decompressed offset of win_start */

  xchg_istream_options opts;
  xchg_stream_codec codec;
  const stream_decoder_ops *ops;
  void *state;

  xchg_source *src;
  /* Compressed input: bytes [in_pos, in_end) of `in` are available;
   * in[0] is at source offset in_base. */
  const uint8_t *in;
  size_t in_pos, in_end;
  uint8_t *in_owned; /* the buffer `in` points to, unless read in place */
  size_t in_cap;
  uint64_t in_base;  /* with an origin (xchg_istream_reset), an offset in the caller's input */
  uint64_t in_start; /* source offset the stream started at */
  uint64_t in_limit; /* absolute source offset the codec may not read past */
  int src_eof;
  /* The source's error after some bytes, held back until the codec has
   * used those bytes and asks for more (stream_in_fill): what a source
   * delivered before failing is decoded, not dropped with the error. */
  xchg_status src_failed;
  xchg_error src_failure;

  uint8_t *out; /* the decompressed window's storage */
  size_t out_cap;
  /* During xchg_istream_next_into, the caller's memory: a codec that
   * decodes into it (stream_out_take) spares the copy out of the window. */
  uint8_t *direct;
  size_t direct_cap;

  int done;       /* the end of the stream (or of a member) was reached */
  int member_end; /* ... and it is the end of a member, not of the input */
  int64_t comet_field_count;
  int caller_names_blocks; /* xchg_istream_origin: Comet messages leave the block's name out */
  xchg_status failed;      /* sticky error status, with its message: */
  xchg_error failure;

  xchg_istream_metrics m;
};

/* Makes at least `want` input bytes contiguous at in_ptr(s), unless the
 * input (or the limit) ends first; check in_avail() afterwards.  A source
 * error is returned once the bytes it came after are fewer than `want`. */
xchg_status stream_in_fill(xchg_istream *s, size_t want, xchg_error *err);

static inline size_t stream_in_avail(const xchg_istream *s) {
  size_t avail = s->in_end - s->in_pos;
  uint64_t here = s->in_base + s->in_pos;
  if (s->in_limit - here < avail) avail = (size_t)(s->in_limit - here);
  return avail;
}
/* NULL before any input (NULL + 0 is undefined, hence the test). */
static inline const uint8_t *stream_in_ptr(const xchg_istream *s) {
  return s->in ? s->in + s->in_pos : NULL;
}
static inline void stream_in_consume(xchg_istream *s, size_t n) { s->in_pos += n; }
/* Source offset of the next input byte, for error messages. */
static inline uint64_t stream_in_offset(const xchg_istream *s) { return s->in_base + s->in_pos; }

/* Makes the window storage at least n bytes (XCHG_ENOMEM otherwise). */
xchg_status stream_out_reserve(xchg_istream *s, size_t n, xchg_error *err);

/* Where a codec decodes the next window of at least `need` bytes: the
 * caller's memory of xchg_istream_next_into when `need` fits there, else
 * the window storage, grown to the larger of `need` and the window size.
 * *room is how many bytes *out takes. */
xchg_status stream_out_take(xchg_istream *s, size_t need, uint8_t **out, size_t *room,
                            xchg_error *err);

/* Sets the window to [p, p + n); p may be NULL when n is 0 (NULL + 0 is
 * undefined behaviour in C, hence the test). */
static inline void stream_set_window(xchg_istream *s, const uint8_t *p, size_t n) {
  s->win_start = p;
  s->win.pos = p;
  s->win.end = n ? p + n : p;
}

/* Little- and big-endian loads and stores. */
static inline uint32_t stream_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t stream_le64(const uint8_t *p) {
  return (uint64_t)stream_le32(p) | (uint64_t)stream_le32(p + 4) << 32;
}
static inline uint32_t stream_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline void stream_put_le32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static inline void stream_put_le64(uint8_t *p, uint64_t v) {
  stream_put_le32(p, (uint32_t)v);
  stream_put_le32(p + 4, (uint32_t)(v >> 32));
}
static inline void stream_put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* A growable output for the encoders. */
typedef struct stream_sink {
  uint8_t *data;
  size_t size, cap;
} stream_sink;

/* Makes room for n more bytes and returns where they go (NULL: no memory). */
uint8_t *stream_sink_reserve(stream_sink *sink, size_t n);
xchg_status stream_sink_append(stream_sink *sink, const void *p, size_t n, xchg_error *err);
/* Hands the bytes over as an xchg_buf (the sink is emptied either way). */
xchg_status stream_sink_finish(stream_sink *sink, xchg_buf **out, xchg_error *err);
void stream_sink_free(stream_sink *sink);

#endif
