/* stream_istream.c — the decompressing input stream: windows, refills,
 * metrics, codec names and detection, and the pass-through "none" codec. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/args.h"
#include "codec/helpers.h"
#include "codec/stream_registry.h"
#include "io/source_impl.h"

#define KIB 1024u
#define DETECT_BYTES 20

static const char *const codec_names[] = {"none",        "lz4-frame",     "zstd",  "lz4-java",
                                          "snappy-java", "snappy-framed", "comet", "auto"};

const char *xchg_stream_codec_name(xchg_stream_codec codec) {
  if ((unsigned)codec < sizeof codec_names / sizeof codec_names[0]) return codec_names[codec];
  return "unknown";
}

xchg_status xchg_stream_codec_from_name(const char *name, xchg_stream_codec *out, xchg_error *err) {
  if (name == NULL || out == NULL)
    return base_null_argument("xchg_stream_codec_from_name", !name ? "name" : "out", err);
  for (unsigned i = 0; i < sizeof codec_names / sizeof codec_names[0]; i++) {
    if (strcmp(name, codec_names[i]) == 0) {
      *out = (xchg_stream_codec)i;
      return XCHG_OK;
    }
  }
  return xchg_errorf(err, XCHG_EINVAL,
                     "unknown stream codec '%s' (expected none, lz4-frame, zstd, lz4-java, "
                     "snappy-java, snappy-framed, comet or auto)",
                     name);
}

static int is_comet_tag(const uint8_t *p) {
  return memcmp(p, "SNAP", 4) == 0 || memcmp(p, "LZ4_", 4) == 0 || memcmp(p, "ZSTD", 4) == 0 ||
         memcmp(p, "NONE", 4) == 0;
}

xchg_stream_codec xchg_stream_codec_detect(const void *bytes, size_t size) {
  if (bytes == NULL) return XCHG_STREAM_NONE; /* no bytes, whatever size says */
  const uint8_t *p = bytes;
  /* Skippable frames are shared by LZ4 and zstd: look past them. */
  while (size >= 8 && is_skippable_frame_magic(stream_le32(p))) {
    uint64_t skip = 8 + (uint64_t)stream_le32(p + 4);
    if (skip >= size) return XCHG_STREAM_LZ4_FRAME; /* cannot tell; both skip it */
    p += skip;
    size -= (size_t)skip;
  }
  if (size >= 4 && stream_le32(p) == 0x184D2204u) return XCHG_STREAM_LZ4_FRAME;
  if (size >= 4 && stream_le32(p) == 0xFD2FB528u) return XCHG_STREAM_ZSTD;
  if (size >= 8 && memcmp(p, "LZ4Block", 8) == 0) return XCHG_STREAM_LZ4_JAVA;
  if (size >= 8 && memcmp(p, "\x82SNAPPY\0", 8) == 0) return XCHG_STREAM_SNAPPY_JAVA;
  if (size >= 10 && memcmp(p, "\xff\x06\x00\x00sNaPpY", 10) == 0) return XCHG_STREAM_SNAPPY_FRAMED;
  if (size >= 20 && is_comet_tag(p + 16) && stream_le64(p) >= 12) return XCHG_STREAM_COMET;
  return XCHG_STREAM_NONE;
}

void xchg_istream_options_init(xchg_istream_options *opts) {
  if (!opts) return; /* nothing to fill */
  memset(opts, 0, sizeof *opts);
  opts->window_size = 64 * KIB;
  opts->read_size = 64 * KIB;
  opts->metrics = 1;
  opts->max_block_size = (size_t)256 * KIB * KIB;
}

void xchg_stream_encode_options_init(xchg_stream_encode_options *opts) {
  if (!opts) return; /* nothing to fill */
  memset(opts, 0, sizeof *opts);
  opts->block_size = 32 * KIB;
  opts->checksum = 1;
  opts->comet_inner = XCHG_STREAM_LZ4_FRAME;
}

/* ---- compressed input -------------------------------------------------- */

static xchg_status grow_input(xchg_istream *s, size_t cap, xchg_error *err) {
  if (cap <= s->in_cap) return XCHG_OK;
  uint8_t *p = realloc(s->in_owned, cap);
  if (p == NULL) return xchg_errorf(err, XCHG_ENOMEM, "stream: no memory for %zu input bytes", cap);
  s->in_owned = p;
  s->in = p;
  s->in_cap = cap;
  return XCHG_OK;
}

/* The source's held-back error (see src_failed), reported. */
static xchg_status source_failure(const xchg_istream *s, xchg_error *err) {
  if (err != NULL) *err = s->src_failure;
  return s->src_failed;
}

/* Reads the source into the room behind in_end.  The bytes read before an
 * error are kept and the error held (src_failed): it is reported now only
 * if they are fewer than `want`, else at the codec's next fill, once it
 * has decoded them. */
static xchg_status read_source(xchg_istream *s, size_t want, size_t *got, xchg_error *err) {
  int64_t t0 = s->opts.metrics ? monotonic_ns() : 0;
  xchg_status st = xchg_source_read(s->src, s->in_owned + s->in_end, s->in_cap - s->in_end, got,
                                    &s->src_failure);
  if (s->opts.metrics) s->m.blocking_ns += monotonic_ns() - t0;
  s->in_end += *got;
  if (st == XCHG_OK) return XCHG_OK;
  s->src_failed = st;
  return s->in_end < want ? source_failure(s, err) : XCHG_OK;
}

xchg_status stream_in_fill(xchg_istream *s, size_t want, xchg_error *err) {
  size_t have = s->in_end - s->in_pos;
  if (have >= want || s->src_eof) return XCHG_OK;
  uint64_t to_limit = s->in_limit - (s->in_base + s->in_pos);
  if (to_limit <= have) return XCHG_OK;
  if (to_limit < want) want = (size_t)to_limit;
  if (s->src_failed != XCHG_OK) return source_failure(s, err);
  /* Move what is left to the front, then read behind it. */
  if (s->in_pos > 0) {
    memmove(s->in_owned, s->in_owned + s->in_pos, have);
    s->in_base += s->in_pos;
    s->in_pos = 0;
    s->in_end = have;
  }
  while (s->in_end < want) {
    if (s->in_end == s->in_cap || s->in_cap < s->opts.read_size) {
      /* Grow as the bytes arrive, doubling: a bogus length on the wire
       * cannot make us allocate much more than the sender really sends. */
      size_t cap = s->in_cap <= SIZE_MAX / 2 ? s->in_cap * 2 : SIZE_MAX;
      if (cap < s->opts.read_size) cap = s->opts.read_size;
      if (cap > want && want > s->opts.read_size) cap = want;
      xchg_status st = grow_input(s, cap, err);
      if (st != XCHG_OK) return st;
    }
    size_t got = 0;
    xchg_status st = read_source(s, want, &got, err);
    if (st != XCHG_OK) return st;
    if (s->src_failed != XCHG_OK) break; /* its error waits for the codec's next fill */
    if (got == 0) {
      s->src_eof = 1;
      break;
    }
  }
  return XCHG_OK;
}

xchg_status stream_out_reserve(xchg_istream *s, size_t n, xchg_error *err) {
  if (n <= s->out_cap) return XCHG_OK;
  uint8_t *p = malloc(n);
  if (p == NULL) return xchg_errorf(err, XCHG_ENOMEM, "stream: no memory for a %zu-byte window", n);
  free(s->out);
  s->out = p;
  s->out_cap = n;
  return XCHG_OK;
}

xchg_status stream_out_take(xchg_istream *s, size_t need, uint8_t **out, size_t *room,
                            xchg_error *err) {
  if (s->direct != NULL && need <= s->direct_cap) {
    *out = s->direct;
    *room = s->direct_cap;
    return XCHG_OK;
  }
  size_t n = need > s->opts.window_size ? need : s->opts.window_size;
  xchg_status st = stream_out_reserve(s, n, err);
  *out = s->out;
  *room = n;
  return st;
}

/* ---- the stream -------------------------------------------------------- */

/* Reads a source that lives in memory in place: no copy of the input. */
static void use_memory_input(xchg_istream *s, xchg_buf *memory) {
  s->in = xchg_buf_data(memory);
  s->in_end = xchg_buf_size(memory);
  s->in_pos = (size_t)xchg_source_position(s->src);
  if (s->in_pos > s->in_end) s->in_pos = s->in_end;
  s->src_eof = 1;
}

xchg_status xchg_istream_open(xchg_source *src, xchg_stream_codec codec,
                              const xchg_istream_options *opts, xchg_istream **out,
                              xchg_error *err) {
  static const char who[] = "xchg_istream_open";
  if (out == NULL) {
    xchg_source_free(src); /* taken over, as on any failure */
    return base_null_argument(who, "out", err);
  }
  *out = NULL;
  if (src == NULL) return base_null_argument(who, "src", err);
  xchg_istream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    xchg_source_free(src);
    return xchg_errorf(err, XCHG_ENOMEM, "stream: no memory");
  }
  s->src = src;
  if (opts != NULL) {
    s->opts = *opts;
    if (s->opts.window_size == 0) s->opts.window_size = 64 * KIB;
    if (s->opts.read_size == 0) s->opts.read_size = 64 * KIB;
    if (s->opts.max_block_size == 0) s->opts.max_block_size = (size_t)256 * KIB * KIB;
  } else {
    xchg_istream_options_init(&s->opts);
  }
  s->in_limit = UINT64_MAX;
  s->comet_field_count = -1;
  xchg_buf *memory = xchg_source_memory(src);
  if (memory != NULL) {
    /* The source's reference keeps the bytes alive while we read them. */
    use_memory_input(s, memory);
    xchg_buf_unref(memory);
  }
  s->in_start = s->in_base + s->in_pos;

  xchg_status st = XCHG_OK;
  if (codec == XCHG_STREAM_AUTO) {
    st = stream_in_fill(s, DETECT_BYTES, err);
    if (st == XCHG_OK) codec = xchg_stream_codec_detect(stream_in_ptr(s), stream_in_avail(s));
  }
  if (st == XCHG_OK) {
    s->codec = codec;
    s->ops = stream_decoder_for(codec);
    if (s->ops == NULL) st = xchg_errorf(err, XCHG_EINVAL, "stream: invalid codec %d", (int)codec);
  }
  if (st == XCHG_OK) st = s->ops->create(&s->state, err);
  if (st != XCHG_OK) {
    s->ops = NULL;
    xchg_istream_free(s);
    return st;
  }
  *out = s;
  return XCHG_OK;
}

xchg_status xchg_istream_reset(xchg_istream *s, xchg_source *src, const xchg_istream_origin *origin,
                               xchg_error *err) {
  if (s == NULL || src == NULL) {
    xchg_source_free(src);
    return base_null_argument("xchg_istream_reset", s ? "src" : "the stream", err);
  }
  xchg_source_free(s->src);
  s->src = src;
  s->in = s->in_owned;
  s->in_pos = s->in_end = 0;
  s->in_base = origin ? origin->byte : 0; /* in[0] is byte 0 of src */
  s->caller_names_blocks = origin && origin->caller_names_blocks;
  s->in_limit = UINT64_MAX;
  s->src_eof = 0;
  s->src_failed = XCHG_OK;
  s->win_base = 0;
  stream_set_window(s, NULL, 0);
  s->done = s->member_end = 0;
  s->comet_field_count = -1;
  s->failed = XCHG_OK;
  memset(&s->m, 0, sizeof s->m);
  xchg_buf *memory = xchg_source_memory(src);
  if (memory != NULL) {
    use_memory_input(s, memory);
    xchg_buf_unref(memory);
  }
  s->in_start = s->in_base + s->in_pos;
  s->ops->reset(s->state);
  return XCHG_OK;
}

xchg_stream_codec xchg_istream_codec(const xchg_istream *s) {
  return s ? s->codec : XCHG_STREAM_AUTO;
}

typedef xchg_status (*decoder_step)(xchg_istream *s, void *state, xchg_error *err);

/* Runs one step of the codec (refill or finish) with the window emptied,
 * keeping the metrics.  Only here is the clock read.  An error sticks. */
static xchg_status run_decoder(xchg_istream *s, decoder_step step, xchg_error *err) {
  s->win_base += (uint64_t)(s->win.end - s->win_start);
  stream_set_window(s, NULL, 0);
  int64_t t0 = s->opts.metrics ? monotonic_ns() : 0;
  xchg_status st = step(s, s->state, &s->failure);
  if (s->opts.metrics) s->m.wall_ns += monotonic_ns() - t0;
  s->m.compressed_bytes = (int64_t)(stream_in_offset(s) - s->in_start);
  if (st != XCHG_OK) {
    stream_set_window(s, NULL, 0);
    s->failed = st;
    if (err != NULL) *err = s->failure;
    return st;
  }
  size_t n = (size_t)(s->win.end - s->win_start);
  if (n > 0) {
    s->m.refills++;
    s->m.decompressed_bytes += (int64_t)n;
  }
  return XCHG_OK;
}

static xchg_status sticky_failure(const xchg_istream *s, xchg_error *err) {
  if (err != NULL) *err = s->failure;
  return s->failed;
}

/* Finishes the current window and asks the codec for the next one. */
static xchg_status refill(xchg_istream *s, xchg_error *err) {
  if (s->failed != XCHG_OK) return sticky_failure(s, err);
  if (s->done) {
    s->win_base += (uint64_t)(s->win.end - s->win_start);
    stream_set_window(s, NULL, 0);
    return XCHG_OK;
  }
  xchg_status st = run_decoder(s, s->ops->refill, err);
  if (st == XCHG_OK && s->win.end == s->win_start) s->done = 1;
  return st;
}

/* Reads and verifies the rest of the current frame (stream_decoder_ops'
 * finish) once the consumer is done with it.  Unread decoded bytes in the
 * window are data that follows, left for whoever reads on: the frame's end
 * is not next, so there is nothing to verify yet. */
static xchg_status finish_frame(xchg_istream *s, xchg_error *err) {
  if (s->failed != XCHG_OK) return sticky_failure(s, err);
  if (s->win.pos != s->win.end || s->done || s->ops->finish == NULL) return XCHG_OK;
  return run_decoder(s, s->ops->finish, err);
}

/* The caller's mistake, which leaves the stream as it was (no sticky error). */
static xchg_status bad_read_arguments(const xchg_istream *s, const void *dst, size_t n,
                                      const size_t *got, xchg_error *err) {
  static const char who[] = "xchg_istream_read";
  if (s == NULL || got == NULL) return base_null_argument(who, !s ? "the stream" : "got", err);
  return dst == NULL && n > 0 ? base_null_span(who, "dst", n, err) : XCHG_OK;
}

xchg_status xchg_istream_read_call(xchg_istream *s, void *dst, size_t n, size_t *got,
                                   xchg_error *err) {
  xchg_status bad = bad_read_arguments(s, dst, n, got, err);
  if (bad != XCHG_OK) return bad;
  size_t have = (size_t)(s->win.end - s->win.pos);
  uint8_t *d = dst;
  size_t done = 0;
  while (done < n) {
    size_t take = have < n - done ? have : n - done;
    if (take > 0) {
      memcpy(d + done, s->win.pos, take);
      s->win.pos += take;
      done += take;
      have -= take;
      continue;
    }
    xchg_status st = refill(s, err);
    if (st != XCHG_OK) {
      *got = done;
      return st;
    }
    have = (size_t)(s->win.end - s->win.pos);
    if (have == 0) break; /* the end */
  }
  *got = done;
  return XCHG_OK;
}

xchg_status xchg_istream_next(xchg_istream *s, const void **ptr, size_t *len, xchg_error *err) {
  if (s == NULL || ptr == NULL || len == NULL)
    return base_null_argument("xchg_istream_next", !s ? "the stream" : !ptr ? "ptr" : "len", err);
  if (s->win.pos == s->win.end) {
    xchg_status st = refill(s, err);
    if (st != XCHG_OK) {
      *ptr = NULL;
      *len = 0;
      return st;
    }
  }
  *ptr = s->win.pos;
  *len = (size_t)(s->win.end - s->win.pos);
  s->win.pos = s->win.end;
  return XCHG_OK;
}

/* Copies what is left of the window, up to cap bytes, to dst. */
static size_t take_window(xchg_istream *s, uint8_t *dst, size_t cap) {
  size_t n = (size_t)(s->win.end - s->win.pos);
  if (n > cap) n = cap;
  if (n == 0) return 0; /* the window may be NULL */
  memcpy(dst, s->win.pos, n);
  s->win.pos += n;
  return n;
}

xchg_status xchg_istream_next_into(xchg_istream *s, void *dst, size_t cap, size_t *n,
                                   xchg_error *err) {
  if (s == NULL || dst == NULL || n == NULL)
    return base_null_argument("xchg_istream_next_into",
                              !s     ? "the stream"
                              : !dst ? "dst"
                                     : "n",
                              err);
  *n = 0;
  if (cap == 0) return xchg_errorf(err, XCHG_EINVAL, "xchg_istream_next_into: no room (cap 0)");
  if (s->win.pos != s->win.end) {
    *n = take_window(s, dst, cap);
    return XCHG_OK;
  }
  s->direct = dst;
  s->direct_cap = cap;
  xchg_status st = refill(s, err);
  s->direct = NULL;
  if (st != XCHG_OK) return st;
  if (s->win_start == dst) { /* decoded in place */
    *n = (size_t)(s->win.end - s->win.pos);
    s->win.pos = s->win.end;
    return XCHG_OK;
  }
  *n = take_window(s, dst, cap);
  return XCHG_OK;
}

void xchg_istream_unread(xchg_istream *s, size_t n) {
  if (!s) return;
  size_t back = (size_t)(s->win.pos - s->win_start);
  s->win.pos -= n <= back ? n : back;
}

xchg_status xchg_istream_next_member(xchg_istream *s, int *more, xchg_error *err) {
  if (s == NULL || more == NULL)
    return base_null_argument("xchg_istream_next_member", !s ? "the stream" : "more", err);
  *more = 0;
  if (s->failed != XCHG_OK) {
    if (err != NULL) *err = s->failure;
    return s->failed;
  }
  while (!s->done) { /* skip what is left of the current member */
    s->win.pos = s->win.end;
    xchg_status st = refill(s, err);
    if (st != XCHG_OK) return st;
  }
  if (!s->member_end) return XCHG_OK; /* the end of the input */
  xchg_status st = stream_in_fill(s, 1, err);
  if (st != XCHG_OK) return st;
  if (stream_in_avail(s) == 0) return XCHG_OK; /* that was the last one */
  s->done = 0;
  s->member_end = 0;
  *more = 1;
  return XCHG_OK;
}

int64_t xchg_istream_comet_field_count(const xchg_istream *s) {
  return s ? s->comet_field_count : -1;
}

int64_t xchg_istream_position(const xchg_istream *s) {
  if (!s) return 0;
  return (int64_t)(s->win_base + (uint64_t)(s->win.pos - s->win_start));
}

void xchg_istream_get_metrics(const xchg_istream *s, xchg_istream_metrics *out) {
  if (out) *out = s ? s->m : (xchg_istream_metrics){0};
}

void xchg_istream_free(xchg_istream *s) {
  if (s == NULL) return;
  if (s->ops != NULL) s->ops->destroy(s->state);
  xchg_source_free(s->src);
  free(s->in_owned);
  free(s->out);
  free(s);
}

/* ---- the decompressed bytes as an xchg_source ---------------------------- */

/* Errors say where in the decoded stream the read began: a borrowed
 * source's own position starts at 0 wherever it was made (one per IPC
 * stream of a Comet input, say) and would name nothing. */
static xchg_status source_read(xchg_source *src, void *dst, size_t n, size_t *got,
                               xchg_error *err) {
  int64_t at = xchg_istream_position(src->impl);
  xchg_status st = xchg_istream_read(src->impl, dst, n, got, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "reading at decoded byte %lld: ", (long long)at);
  return st;
}

static xchg_status source_finish(xchg_source *src, xchg_error *err) {
  return finish_frame(src->impl, err);
}

static void source_close(xchg_source *src) { xchg_istream_free(src->impl); }

static const xchg_source_vtable owning_source = {source_read, NULL, source_close, source_finish};
static const xchg_source_vtable borrowing_source = {source_read, NULL, NULL, source_finish};

/* A source over s, which stays the caller's on failure. */
static xchg_status stream_source(const xchg_source_vtable *vtable, const char *who, xchg_istream *s,
                                 xchg_source **out, xchg_error *err) {
  if (out == NULL) return base_null_argument(who, "out", err);
  *out = NULL;
  if (s == NULL) return base_null_argument(who, "s", err);
  return xchg_source_create(vtable, s, -1, NULL, who, out, err);
}

xchg_status xchg_source_from_istream(xchg_istream *s, xchg_source **out, xchg_error *err) {
  xchg_status status = stream_source(&owning_source, "xchg_source_from_istream", s, out, err);
  if (status != XCHG_OK) xchg_istream_free(s); /* taken over even so */
  return status;
}

xchg_status xchg_source_from_istream_borrowed(xchg_istream *s, xchg_source **out, xchg_error *err) {
  return stream_source(&borrowing_source, "xchg_source_from_istream_borrowed", s, out, err);
}

/* ---- "none": the input is the output ----------------------------------- */

static xchg_status none_create(void **state, xchg_error *err) {
  *state = NULL;
  return XCHG_OK;
}
static void none_destroy(void *state) {}
static void none_reset(void *state) {}

static xchg_status none_refill(xchg_istream *s, void *state, xchg_error *err) {
  xchg_status st = stream_in_fill(s, 1, err);
  if (st != XCHG_OK) return st;
  size_t n = stream_in_avail(s);
  /* Hand out the input in place: it stays put until the next refill. */
  stream_set_window(s, stream_in_ptr(s), n);
  stream_in_consume(s, n);
  return XCHG_OK;
}

const stream_decoder_ops stream_none_decoder = {"none",     none_create, none_destroy,
                                                none_reset, none_refill, NULL};

/* ---- encoding ---------------------------------------------------------- */

uint8_t *stream_sink_reserve(stream_sink *sink, size_t n) {
  if (sink->cap - sink->size < n || sink->data == NULL) {
    size_t cap = sink->cap ? sink->cap : 4096;
    while (cap - sink->size < n) { /* grows by doubling, checking for overflow */
      if (cap > SIZE_MAX / 2) return NULL;
      cap *= 2;
    }
    uint8_t *p = realloc(sink->data, cap);
    if (p == NULL) return NULL;
    sink->data = p;
    sink->cap = cap;
  }
  return sink->data + sink->size;
}

xchg_status stream_sink_append(stream_sink *sink, const void *p, size_t n, xchg_error *err) {
  uint8_t *dst = stream_sink_reserve(sink, n);
  if (dst == NULL) return xchg_errorf(err, XCHG_ENOMEM, "stream encode: no memory");
  if (n > 0) memcpy(dst, p, n);
  sink->size += n;
  return XCHG_OK;
}

static void free_sink_data(void *ctx, const void *data, size_t size) { free(ctx); }

xchg_status stream_sink_finish(stream_sink *sink, xchg_buf **out, xchg_error *err) {
  if (sink->data == NULL && stream_sink_reserve(sink, 1) == NULL)
    return xchg_errorf(err, XCHG_ENOMEM, "stream encode: no memory");
  *out = xchg_buf_wrap(sink->data, sink->size, free_sink_data, sink->data);
  if (*out == NULL) {
    stream_sink_free(sink);
    return xchg_errorf(err, XCHG_ENOMEM, "stream encode: no memory");
  }
  memset(sink, 0, sizeof *sink);
  return XCHG_OK;
}

void stream_sink_free(stream_sink *sink) {
  free(sink->data);
  memset(sink, 0, sizeof *sink);
}

xchg_status xchg_stream_encode(xchg_stream_codec codec, const xchg_stream_encode_options *opts,
                               const void *src, size_t size, xchg_buf **out, xchg_error *err) {
  if (!out) return base_null_argument("xchg_stream_encode", "out", err);
  *out = NULL;
  xchg_stream_encode_options defaults;
  if (opts == NULL) {
    xchg_stream_encode_options_init(&defaults);
    opts = &defaults;
  }
  if (src == NULL && size > 0) return xchg_errorf(err, XCHG_EINVAL, "stream encode: no input");
  stream_sink sink = {0};
  xchg_status st = stream_encode_any(codec, opts, src, size, &sink, err);
  if (st != XCHG_OK) {
    stream_sink_free(&sink);
    return st;
  }
  return stream_sink_finish(&sink, out, err);
}
