/* tests/test_shuffle.c — the shuffle reader (xchg/shuffle.h).
 *
 * Inputs are made of the Arrow gold files and the hand-built sample of
 * the types the gold files lack (tests/support/roundtrip.h): every batch
 * cut into blocks of 1 to 13 rows (so that blocks start at every bit
 * offset of the output), each block written as its own IPC stream (body
 * compression none, LZ4 or zstd) and framed as plain IPC or as a Comet
 * block (NONE, LZ4_, ZSTD, SNAP); and the gold streams themselves as
 * blocks, as Arrow's writers wrote them.  The coalesced batches are
 * checked value by value, row range by row range (tests/support/
 * array_equal.c), against two references that share no code with the
 * coalescer: each block read alone by xchg_ipc_reader, and the batches of
 * the file the blocks were cut from (the concatenation of the blocks, as
 * it was before the cutting).  Each batch must also keep the format's
 * rules (tests/support/array_valid.c) and hold at least the target rows.
 *
 * Then: sources that are not in memory, passing large blocks through,
 * dictionaries that change (and the ids the reader lists), the metrics, and
 * bad input — cut anywhere,
 * damaged Comet headers, corrupt compressed bytes, another schema — each
 * an error naming the block, with the batches before it intact. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen/shape_shuffle.h"
#include "support/encoded.h"
#include "support/array_equal.h"
#include "support/array_valid.h"
#include "support/c_fixture.h"
#include "support/ipc_bodies.h"
#include "support/roundtrip.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "ipc/flatbuf.h"
#include "ipc/format.h"
#include "xchg/shuffle.h"
#include "xchg/testing.h"
#include "xchg/xchg.h"

#define MSG 2048
#define COMET_BLOCK_HEADER 20 /* a Comet block's header: length, field count, codec tag */

/* ---- inputs ------------------------------------------------------------------- */

/* A run of rows the output must hold next: rows [row, row + n) of a. */
typedef struct segment {
  const struct ArrowArray *a;
  int64_t row, n;
} segment;

typedef struct segments {
  segment *items;
  int64_t n, cap, rows;
} segments;

static void add_segment(segments *s, const struct ArrowArray *a, int64_t row, int64_t n) {
  if (n == 0) return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->items = realloc(s->items, (size_t)s->cap * sizeof *s->items);
    if (!s->items) abort();
  }
  s->items[s->n++] = (segment){a, row, n};
  s->rows += n;
}

/* An input being made: its bytes, and each block's IPC stream read alone. */
typedef struct input {
  tu_bytes bytes;
  int64_t blocks;
  size_t *ends;     /* where each block ends in bytes */
  int64_t *rows_of; /* each block's rows (when read alone) */
  int64_t rows_so_far;
  segments alone;          /* the rows of every block, as read alone */
  struct ArrowArray *kept; /* the batches those segments point into */
  int64_t n_kept, cap_kept;
  int bad; /* the blocks are not all readable alone: do not try */
} input;

static void keep(input *in, struct ArrowArray *a) {
  if (in->n_kept == in->cap_kept) {
    in->cap_kept = in->cap_kept ? 2 * in->cap_kept : 64;
    in->kept = realloc(in->kept, (size_t)in->cap_kept * sizeof *in->kept);
    if (!in->kept) abort();
  }
  in->kept[in->n_kept++] = *a;
}

static void input_free(input *in) {
  free(in->bytes.data);
  free(in->ends);
  free(in->rows_of);
  free(in->alone.items);
  for (int64_t i = 0; i < in->n_kept; i++) in->kept[i].release(&in->kept[i]);
  free(in->kept);
  memset(in, 0, sizeof *in);
}

/* Reads one block's IPC stream alone, adding its rows to in->alone. */
static int read_alone(input *in, const uint8_t *stream, size_t size, char *msg) {
  xchg_ipc_reader *r;
  xchg_error err;
  xchg_source *src;
  /* A copy of its own, which the batches read from it keep alive. */
  xchg_buf *copy = xchg_buf_alloc(size);
  if (!copy) abort();
  memcpy(xchg_buf_mutable_data(copy), stream, size);
  xchg_status st = xchg_source_from_buf(copy, &src, &err);
  xchg_buf_unref(copy);
  if (st == XCHG_OK) st = xchg_ipc_reader_open(src, NULL, &r, &err);
  if (st != XCHG_OK)
    return tu_errorf(msg, MSG, "block %lld read alone: %s", (long long)in->blocks, err.message);
  int64_t first = in->n_kept;
  for (;;) {
    struct ArrowArray a;
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK) {
      xchg_ipc_reader_free(r);
      return tu_errorf(msg, MSG, "block %lld read alone: %s", (long long)in->blocks, err.message);
    }
    if (!a.release) break;
    keep(in, &a);
  }
  xchg_ipc_reader_free(r);
  /* kept may have moved: the segments point into it once all is made. */
  for (int64_t i = first; i < in->n_kept; i++)
    add_segment(&in->alone, (void *)(intptr_t)(i + 1), 0, in->kept[i].length);
  return 0;
}

static void resolve(input *in) {
  for (int64_t i = 0; i < in->alone.n; i++)
    in->alone.items[i].a = &in->kept[(intptr_t)in->alone.items[i].a - 1];
}

static const xchg_stream_codec comet_inner[] = {XCHG_STREAM_NONE, XCHG_STREAM_LZ4_FRAME,
                                                XCHG_STREAM_ZSTD, XCHG_STREAM_SNAPPY_FRAMED};

/* Adds one block: the IPC stream `stream`, framed as IPC (comet < 0) or
 * as a Comet block with inner codec comet_inner[comet]. */
static void end_block(input *in) {
  if (!(in->ends = realloc(in->ends, (size_t)in->blocks * sizeof *in->ends))) abort();
  in->ends[in->blocks - 1] = in->bytes.size;
  if (!(in->rows_of = realloc(in->rows_of, (size_t)in->blocks * sizeof *in->rows_of))) abort();
  in->rows_of[in->blocks - 1] = in->alone.rows - (in->blocks > 1 ? in->rows_so_far : 0);
  in->rows_so_far = in->alone.rows;
}

static int add_block(input *in, const uint8_t *stream, size_t size, int comet, int64_t columns,
                     char *msg) {
  if (!in->bad && read_alone(in, stream, size, msg) != 0) return -1;
  in->blocks++;
  if (comet < 0) {
    tu_bytes_append(&in->bytes, stream, size);
    end_block(in);
    return 0;
  }
  if (!tu_append_comet_block(&in->bytes, stream, size, comet_inner[comet], columns))
    return tu_errorf(msg, MSG, "comet encode of block %lld failed", (long long)in->blocks - 1);
  end_block(in);
  return 0;
}

/* Rows [row, row + n) of a "+s" batch, as a slice that borrows it. */
static void noop_release(struct ArrowArray *a) { a->release = NULL; }

static struct ArrowArray slice(const struct ArrowArray *batch, int64_t row, int64_t n) {
  struct ArrowArray s = *batch;
  s.offset = batch->offset + row;
  s.length = n;
  s.null_count = 0;
  s.release = noop_release;
  return s;
}

static const int64_t block_rows[] = {1, 2, 3, 5, 8, 7, 4, 6, 13, 0, 9, 11};

/* Every batch of d cut into blocks, each written with codec. */
static int add_sliced(input *in, const rt_data *d, xchg_block_codec codec, int comet, char *msg) {
  xchg_ipc_write_options wo;
  xchg_ipc_write_options_init(&wo);
  wo.codec = codec;
  int64_t k = 0;
  for (int64_t b = 0; b < d->n; b++) {
    for (int64_t row = 0; row < d->batches[b].length;) {
      int64_t n = block_rows[k++ % (int64_t)(sizeof block_rows / sizeof *block_rows)];
      if (n > d->batches[b].length - row) n = d->batches[b].length - row;
      struct ArrowArray s = slice(&d->batches[b], row, n);
      xchg_buf *stream;
      if (rt_write(&d->schema, &s, 1, &wo, &stream, msg, MSG) != 0) return -1;
      int rc = add_block(in, xchg_buf_data(stream), xchg_buf_size(stream),
                         comet < 0 ? -1 : (int)((comet + k) % 4), d->schema.n_children, msg);
      xchg_buf_unref(stream);
      if (rc != 0) return -1;
      row += n;
    }
  }
  return 0;
}

/* ---- reading and checking --------------------------------------------------------- */

typedef struct output {
  struct ArrowArray *batches;
  int64_t n;
  xchg_shuffle_reader_metrics m;
  xchg_status st;
  char error[XCHG_ERROR_MESSAGE_SIZE];
} output;

static void output_free(output *o) {
  for (int64_t i = 0; i < o->n; i++) o->batches[i].release(&o->batches[i]);
  free(o->batches);
  memset(o, 0, sizeof *o);
}

/* A source behind a callback that notes a read on any thread but the one
 * reading: with a pool, only the calling thread reads a source that is not
 * in memory (a JVM's InputStream may be read there only). */
typedef struct caller_bytes {
  xchg_source *bytes; /* tu_unseekable_source's: reads of odd sizes */
  pthread_t caller;
} caller_bytes;

static _Atomic int read_elsewhere;

static xchg_status caller_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  caller_bytes *c = ctx;
  if (!pthread_equal(pthread_self(), c->caller)) atomic_store(&read_elsewhere, 1);
  return xchg_source_read(c->bytes, dst, n, got, err);
}

static void caller_close(void *ctx) {
  caller_bytes *c = ctx;
  xchg_source_free(c->bytes);
  free(c);
}

static xchg_source *caller_source(const uint8_t *data, size_t size, uint64_t seed) {
  caller_bytes *c = malloc(sizeof *c);
  xchg_source *src = NULL;
  xchg_error err;
  if (!c) return NULL;
  *c = (caller_bytes){tu_unseekable_source(data, size, seed), pthread_self()};
  if (!c->bytes || xchg_source_from_callback(caller_read, caller_close, c, &src, &err) != XCHG_OK)
    caller_close(c);
  return src;
}

/* How the input reaches the reader. */
enum { FROM_MEMORY, FROM_CHUNKS, FROM_CALLBACK, FROM_SPLIT };

static int add_sources(xchg_shuffle_reader *r, const input *in, int how, char *msg) {
  xchg_error err;
  static const uint8_t nothing[1];
  const uint8_t *p = in->bytes.data ? in->bytes.data : nothing; /* no NULL + 0 below */
  size_t size = in->bytes.size;
  xchg_source *src = NULL;
  xchg_status st = XCHG_OK;
  if (how == FROM_MEMORY) {
    st = xchg_source_from_memory(p, size, NULL, NULL, &src, &err);
  } else if (how == FROM_CHUNKS) {
    xchg_chunk chunks[3] = {
        {p, size / 3}, {p + size / 3, size / 3}, {p + 2 * (size / 3), size - 2 * (size / 3)}};
    st = xchg_source_from_chunks(chunks, 3, NULL, NULL, &src, &err);
  } else if (how == FROM_CALLBACK) {
    src = caller_source(p, size, size);
  } else {
    /* An empty source, then the input split where a block starts. */
    if ((st = xchg_source_from_memory(p, 0, NULL, NULL, &src, &err)) == XCHG_OK)
      st = xchg_shuffle_reader_add_source(r, src, &err);
    src = NULL;
    if (st == XCHG_OK) st = xchg_source_from_memory(p, size, NULL, NULL, &src, &err);
  }
  if (st == XCHG_OK && !src) st = XCHG_ENOMEM;
  if (st == XCHG_OK) st = xchg_shuffle_reader_add_source(r, src, &err);
  return st == XCHG_OK ? 0 : tu_errorf(msg, MSG, "adding the source: %s", err.message);
}

/* Every case runs twice: decoded on the calling thread, then read ahead
 * on a pool (on_both). */
static xchg_pool *pool, *pools[2];

static xchg_shuffle_reader_options with_pool(const xchg_shuffle_reader_options *o) {
  xchg_shuffle_reader_options p = *o;
  p.read.pool = pool;
  if (pool) p.read.readahead_bytes = 1 << 12; /* small: the limit is met often */
  return p;
}

static int read_all(const input *in, const xchg_shuffle_reader_options *given, int how, output *out,
                    char *msg) {
  memset(out, 0, sizeof *out);
  xchg_shuffle_reader *r;
  xchg_error err;
  xchg_shuffle_reader_options o_pooled = with_pool(given), *o = &o_pooled;
  if (xchg_shuffle_reader_open(o, &r, &err) != XCHG_OK)
    return tu_errorf(msg, MSG, "open: %s", err.message);
  if (add_sources(r, in, how, msg) != 0) {
    xchg_shuffle_reader_free(r);
    return -1;
  }
  int64_t cap = 0;
  for (;;) {
    struct ArrowArray a;
    out->st = xchg_shuffle_reader_next(r, &a, &err);
    if (out->st != XCHG_OK) {
      snprintf(out->error, sizeof out->error, "%s", err.message);
      break;
    }
    if (!a.release) break;
    if (out->n == cap) {
      cap = cap ? 2 * cap : 16;
      out->batches = realloc(out->batches, (size_t)cap * sizeof *out->batches);
      if (!out->batches) abort();
    }
    out->batches[out->n++] = a;
  }
  xchg_shuffle_reader_get_metrics(r, &out->m);
  xchg_shuffle_reader_free(r); /* the batches outlive it */
  if (atomic_exchange(&read_elsewhere, 0))
    return tu_errorf(msg, MSG, "a source behind a callback was read off the calling thread");
  return 0;
}

/* The output's rows, in order, against the segments'. */
static int compare(const struct ArrowSchema *schema, const output *out, const segments *s,
                   const char *what, char *msg) {
  int64_t k = 0, used = 0;
  for (int64_t b = 0; b < out->n; b++) {
    const struct ArrowArray *a = &out->batches[b];
    char why[MSG];
    if (array_valid(schema, a, why, sizeof why) != 0)
      return tu_errorf(msg, MSG, "batch %lld breaks a rule of the format: %s", (long long)b, why);
    for (int64_t row = 0; row < a->length;) {
      if (k == s->n)
        return tu_errorf(msg, MSG, "batch %lld has rows past the %lld expected", (long long)b,
                         (long long)s->rows);
      const segment *g = &s->items[k];
      int64_t n = g->n - used < a->length - row ? g->n - used : a->length - row;
      if (array_range_equal(schema, a, row, g->a, g->row + used, n, why, sizeof why) != 0)
        return tu_errorf(msg, MSG, "batch %lld rows [%lld, +%lld) differ from %s: %s", (long long)b,
                         (long long)row, (long long)n, what, why);
      row += n;
      used += n;
      if (used == g->n) {
        k++;
        used = 0;
      }
    }
  }
  if (k != s->n)
    return tu_errorf(msg, MSG, "%lld rows missing",
                     (long long)(s->rows - (k < s->n ? s->items[k].row : 0)));
  return 0;
}

/* Every batch but the last holds at least the target, unless a changed
 * dictionary cut it. */
static int check_sizes(const output *out, int64_t target, char *msg) {
  int64_t short_ones = 0;
  for (int64_t b = 0; b + 1 < out->n; b++) short_ones += out->batches[b].length < target;
  if (short_ones > out->m.dictionary_cuts)
    return tu_errorf(msg, MSG,
                     "%lld batches before the last are shorter than %lld rows, with %lld "
                     "dictionary cuts",
                     (long long)short_ones, (long long)target, (long long)out->m.dictionary_cuts);
  for (int64_t b = 0; b < out->n; b++)
    if (out->batches[b].length == 0)
      return tu_errorf(msg, MSG, "batch %lld is empty", (long long)b);
  return 0;
}

static int check_metrics(const output *out, const input *in, int64_t rows, char *msg) {
  const xchg_shuffle_reader_metrics *m = &out->m;
  if (m->blocks != in->blocks || m->rows != rows || m->batches != out->n ||
      m->wire_bytes != (int64_t)in->bytes.size)
    return tu_errorf(msg, MSG,
                     "metrics: %lld blocks, %lld rows, %lld batches, %lld wire bytes; "
                     "expected %lld, %lld, %lld, %zu",
                     (long long)m->blocks, (long long)m->rows, (long long)m->batches,
                     (long long)m->wire_bytes, (long long)in->blocks, (long long)rows,
                     (long long)out->n, in->bytes.size);
  return 0;
}

/* Reads in every way and checks against both references. */
static void check_input(const char *name, const rt_data *d, const segments *original, input *in) {
  static const int64_t targets[] = {1, 10, 1 << 20};
  static int how_next;
  resolve(in);
  for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    o.target_rows = targets[t];
    int how = how_next++ % 4;
    output out;
    char msg[MSG] = "";
    int rc = read_all(in, &o, how, &out, msg);
    if (rc == 0 && out.st != XCHG_OK) rc = tu_errorf(msg, MSG, "read: %s", out.error);
    if (rc == 0) rc = compare(&d->schema, &out, &in->alone, "the blocks read alone", msg);
    if (rc == 0 && original)
      rc = compare(&d->schema, &out, original, "the file cut into blocks", msg);
    if (rc == 0) rc = check_sizes(&out, targets[t], msg);
    if (rc == 0) rc = check_metrics(&out, in, in->alone.rows, msg);
    char what[512];
    snprintf(what, sizeof what, "%s, target %lld rows, source kind %d", name, (long long)targets[t],
             how);
    TU_CHECK(rc == 0, "%s: %s", what, msg);
    output_free(&out);
  }
}

static void original_segments(const rt_data *d, int copies, segments *s) {
  for (int c = 0; c < copies; c++)
    for (int64_t b = 0; b < d->n; b++) add_segment(s, &d->batches[b], 0, d->batches[b].length);
}

/* One data set in every framing and codec. */
static void check_data(const char *name, const rt_data *d, const uint8_t *stream,
                       size_t stream_size) {
  static const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};
  segments once = {0}, thrice = {0};
  original_segments(d, 1, &once);
  original_segments(d, 3, &thrice);
  for (int framing = -1; framing < 4; framing++) {
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
      if (framing >= 1 && c > 0)
        continue; /* a compressed body in a compressed block: once is enough */
      input in = {0};
      char msg[MSG], what[512];
      snprintf(what, sizeof what, "%s cut into blocks, %s body, %s%s", name,
               xchg_block_codec_name(codecs[c]), framing < 0 ? "ipc" : "comet ",
               framing < 0 ? "" : xchg_stream_codec_name(comet_inner[framing]));
      if (add_sliced(&in, d, codecs[c], framing, msg) != 0)
        TU_CHECK((-1) == 0, "%s: %s", what, msg);
      else
        check_input(what, d, &once, &in);
      input_free(&in);
    }
    if (!stream) continue;
    /* The file as its writer wrote it, three times over. */
    input in = {0};
    char msg[MSG] = "", what[512];
    snprintf(what, sizeof what, "%s as written, 3 blocks, %s%s", name,
             framing < 0 ? "ipc" : "comet ",
             framing < 0 ? "" : xchg_stream_codec_name(comet_inner[framing]));
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
      rc = add_block(&in, stream, stream_size, framing, d->schema.n_children, msg);
    if (rc != 0)
      TU_CHECK((-1) == 0, "%s: %s", what, msg);
    else
      check_input(what, d, &thrice, &in);
    input_free(&in);
  }
  free(once.items);
  free(thrice.items);
}

/* Every second gold file from the first or the second: the gold files are
 * most of the suite's time, in two cases that ctest runs side by side (see
 * CMakeLists.txt). */
static void check_gold_half(size_t half) {
  char **paths;
  size_t count;
  if (rt_find_all_gold(&paths, &count) != 0) {
    TU_CHECK(0, "gold files: none found");
    return;
  }
  TU_CHECK(count > half, "gold files: %zu found, none for this half", count);
  for (size_t i = half; i < count; i += 2) {
    char stream_path[4096], msg[MSG];
    rt_gold_stream_path(paths[i], stream_path, sizeof stream_path);
    rt_data d = {0};
    size_t size;
    uint8_t *stream = tu_read_file(stream_path, &size);
    if (!stream || rt_read_file(stream_path, &d, msg, sizeof msg) != 0) {
      TU_CHECK(0, "%s: %s", stream_path, stream ? msg : "cannot read it");
    } else {
      const char *name = strrchr(stream_path, '/');
      check_data(name ? name + 1 : stream_path, &d, stream, size);
    }
    free(stream);
    rt_data_free(&d);
  }
  rt_free_paths(paths, count);
}

static void check_gold_even(void) { check_gold_half(0); }
static void check_gold_odd(void) { check_gold_half(1); }

static void check_sample(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  rt_data d = {0};
  d.schema = *schema;
  struct ArrowArray copies[5];
  for (int i = 0; i < 5; i++) copies[i] = *batch;
  d.batches = copies;
  d.n = 5;
  check_data("hand-built sample (views, list views, run ends, unions, dictionaries)", &d, NULL, 0);
}

/* ---- the rest ------------------------------------------------------------------- */

/* Blocks of the primitive gold file, cut small, as IPC with codec. */
static int primitive_input(input *in, rt_data *d, xchg_block_codec codec, int comet, char *msg) {
  const char *dir = tu_testdata_dir();
  char path[4096];
  snprintf(path, sizeof path, "%s/arrow-gold/1.0.0-littleendian/generated_primitive.stream", dir);
  memset(in, 0, sizeof *in);
  if (rt_read_file(path, d, msg, MSG) != 0 || add_sliced(in, d, codec, comet, msg) != 0) return -1;
  resolve(in);
  return 0;
}

/* A big uncompressed block in memory comes out pointing into the input. */
static void check_pass_through(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.target_rows = 1;
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && (out.st != XCHG_OK || out.m.passthrough_batches != out.n || out.n == 0))
    rc = tu_errorf(msg, MSG, "%lld of %lld batches passed through (%s)",
                   (long long)out.m.passthrough_batches, (long long)out.n, out.error);
  for (int64_t b = 0; rc == 0 && b < out.n; b++) {
    const struct ArrowArray *col = out.batches[b].children[0];
    const uint8_t *p = col->buffers[1];
    if (p && (p < in.bytes.data || p >= in.bytes.data + in.bytes.size))
      rc = tu_errorf(msg, MSG, "batch %lld's first column was copied", (long long)b);
  }
  TU_CHECK(rc == 0, "a block at least the target passes through without a copy: %s", msg);
  output_free(&out);
  input_free(&in);
  rt_data_free(&d);
}

/* Two blocks with different dictionaries: the batch is cut between them. */
static void check_dictionary_cut(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  /* The sample's dictionary column in two blocks, the second with its
   * dictionary's values in another order (and so other indices). */
  rt_data d = {0};
  d.schema = *schema;
  struct ArrowArray copies[2] = {*batch, *batch};
  d.batches = copies;
  d.n = 2;
  input in = {0};
  char msg[MSG] = "";
  int rc = add_sliced(&in, &d, XCHG_BLOCK_NONE, -1, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  output out = {0};
  if (rc == 0) {
    resolve(&in);
    rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  }
  if (rc == 0 && (out.st != XCHG_OK || out.n != 1 || out.m.dictionary_cuts != 0))
    rc = tu_errorf(msg, MSG, "equal dictionaries: %lld batches, %lld cuts (%s)", (long long)out.n,
                   (long long)out.m.dictionary_cuts, out.error);
  TU_CHECK(rc == 0, "blocks with the same dictionary bytes make one batch: %s", msg);
  output_free(&out);
  input_free(&in);
}

/* The sample written alone (rows [0, rows) of it) as an IPC stream, less
 * its dictionary messages; NULL on failure, with msg. */
static xchg_buf *without_dictionaries(int64_t rows, char *msg) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  struct ArrowArray part = slice(batch, 0, rows);
  xchg_buf *stream;
  if (rt_write(schema, &part, 1, NULL, &stream, msg, MSG) != 0) return NULL;
  tu_body bodies[16];
  int64_t n = tu_map_bodies(xchg_buf_data(stream), xchg_buf_size(stream), bodies, 16);
  xchg_buf *out = xchg_buf_alloc(xchg_buf_size(stream));
  size_t size = 0, from = 0;
  for (int64_t i = 0; out && i < n; i++) {
    if (bodies[i].kind != XCHG_MESSAGE_DICTIONARY) continue;
    size_t start = (size_t)bodies[i].metadata_offset - 8; /* its framing */
    memcpy(xchg_buf_mutable_data(out) + size, xchg_buf_data(stream) + from, start - from);
    size += start - from;
    from = (size_t)(bodies[i].offset + bodies[i].length);
  }
  if (out) {
    memcpy(xchg_buf_mutable_data(out) + size, xchg_buf_data(stream) + from,
           xchg_buf_size(stream) - from);
    size += xchg_buf_size(stream) - from;
  }
  xchg_buf *cut = out ? xchg_buf_slice(out, 0, size) : NULL;
  xchg_buf_unref(out);
  xchg_buf_unref(stream);
  if (!cut) tu_errorf(msg, MSG, "out of memory");
  return cut;
}

/* A block whose batch uses a dictionary its stream does not define: the
 * error names the block and the message, once each. */
static void check_dictionary_missing(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  char msg[MSG] = "";
  input in = {0};
  xchg_buf *whole = NULL, *bare = without_dictionaries(RT_SAMPLE_ROWS, msg);
  int rc = bare && rt_write(schema, batch, 1, NULL, &whole, msg, MSG) == 0 ? 0 : -1;
  in.bad = 1; /* the second block is not readable alone */
  if (rc == 0) rc = add_block(&in, xchg_buf_data(whole), xchg_buf_size(whole), -1, 0, msg);
  if (rc == 0) rc = add_block(&in, xchg_buf_data(bare), xchg_buf_size(bare), -1, 0, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  const char *at = strstr(out.error, "message ");
  if (rc == 0 && (out.st != XCHG_EFORMAT || !strstr(out.error, "block 1 (source 0, byte ") ||
                  !strstr(out.error, "is used before the block defines it") || !at ||
                  strstr(at + 1, "message ")))
    rc = tu_errorf(msg, MSG, "%s: %s", xchg_status_name(out.st), out.error);
  TU_CHECK(rc == 0, "a block without its dictionary: %s", msg);
  output_free(&out);
  input_free(&in);
  /* A block of no row needs no dictionary: it adds nothing. */
  xchg_buf *empty = without_dictionaries(0, msg);
  memset(&in, 0, sizeof in);
  in.bad = 1;
  rc = empty ? 0 : -1;
  if (rc == 0) rc = add_block(&in, xchg_buf_data(whole), xchg_buf_size(whole), -1, 0, msg);
  if (rc == 0) rc = add_block(&in, xchg_buf_data(empty), xchg_buf_size(empty), -1, 0, msg);
  if (rc == 0) rc = add_block(&in, xchg_buf_data(whole), xchg_buf_size(whole), -1, 0, msg);
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  int64_t rows = 0;
  for (int64_t b = 0; rc == 0 && b < out.n; b++) rows += out.batches[b].length;
  if (rc == 0 && (out.st != XCHG_OK || rows != 2 * RT_SAMPLE_ROWS))
    rc = tu_errorf(msg, MSG, "%lld rows: %s", (long long)rows, out.error);
  TU_CHECK(rc == 0, "a block of no row without its dictionary: %s", msg);
  output_free(&out);
  input_free(&in);
  xchg_buf_unref(empty);
  xchg_buf_unref(whole);
  xchg_buf_unref(bare);
}

/* Offsets need not start at 0: blocks whose utf8 or list column starts
 * its offsets at 1 (so that a list's child values are used from row 1,
 * their validity bits from bit 1), between blocks whose offsets start at
 * 0, against the blocks read alone. */
static int start_offsets_at_one(xchg_buf *stream, char *msg) {
  tu_body bodies[4];
  int64_t n = tu_map_bodies(xchg_buf_data(stream), xchg_buf_size(stream), bodies, 4);
  for (int64_t i = 0; i < n; i++) {
    if (bodies[i].kind != XCHG_MESSAGE_RECORD_BATCH) continue;
    uint8_t *p =
        xchg_buf_mutable_data(stream) + bodies[i].offset; /* the offsets: validity is empty */
    int32_t first, second;
    memcpy(&first, p, 4);
    memcpy(&second, p + 4, 4);
    if (first != 0 || second < 1)
      return tu_errorf(msg, MSG, "unexpected offsets %d, %d", first, second);
    first = 1;
    memcpy(p, &first, 4);
    return 0;
  }
  return tu_errorf(msg, MSG, "no record batch");
}

static int expect_error(const input *in, xchg_status want, const char *needle,
                        const segments *before, const struct ArrowSchema *schema, char *msg);

/* Sets the last of the first record batch's 6 offsets (the first
 * buffer of its body) to `value`. */
static int set_last_offset(xchg_buf *stream, int32_t value, char *msg) {
  tu_body bodies[4];
  int64_t n = tu_map_bodies(xchg_buf_data(stream), xchg_buf_size(stream), bodies, 4);
  for (int64_t i = 0; i < n; i++)
    if (bodies[i].kind == XCHG_MESSAGE_RECORD_BATCH) {
      memcpy(xchg_buf_mutable_data(stream) + bodies[i].offset + 5 * 4, &value, 4);
      return 0;
    }
  return tu_errorf(msg, MSG, "no record batch");
}

static void check_offsets_from_one(void) {
  static const int32_t str_offsets[] = {0, 2, 3, 6, 6, 8}, list_offsets[] = {0, 2, 3, 6, 6, 9};
  static const char chars[] = "abcdefgh";
  static const int32_t values[] = {10, 11, 12, 13, 14, 15, 16, 17, 18};
  static const uint8_t value_bits[] = {0x6f, 0x01}; /* values 4 and 7 are null */
  struct ArrowSchema item, list, str, *list_kids[1] = {&item}, *cols[2], root;
  struct ArrowArray item_a, list_a, str_a, *list_a_kids[1] = {&item_a}, *col_a[2], root_a;
  tu_fixture_schema(&item, "i", "item", 0, NULL);
  tu_fixture_schema(&list, "+l", "l", 1, list_kids);
  tu_fixture_schema(&str, "u", "s", 0, NULL);
  const void *item_b[] = {value_bits, values}, *list_b[] = {NULL, list_offsets},
             *str_b[] = {NULL, str_offsets, chars};
  tu_fixture_array(&item_a, 9, 2, item_b, 0, NULL);
  item_a.null_count = 2;
  tu_fixture_array(&list_a, 5, 2, list_b, 1, list_a_kids);
  tu_fixture_array(&str_a, 5, 3, str_b, 0, NULL);
  for (int c = 0; c < 2; c++) {
    cols[0] = c ? &list : &str;
    col_a[0] = c ? &list_a : &str_a;
    tu_fixture_schema(&root, "+s", "", 1, cols);
    tu_fixture_array(&root_a, 5, 1, (const void *[]){NULL}, 1, col_a);
    input in = {0};
    char msg[MSG] = "";
    int rc = 0;
    for (int b = 0; b < 7 && rc == 0; b++) {
      xchg_buf *stream;
      rc = rt_write(&root, &root_a, 1, NULL, &stream, msg, MSG);
      if (rc == 0 && b % 2 == 1) rc = start_offsets_at_one(stream, msg);
      if (rc == 0)
        rc = add_block(&in, xchg_buf_data(stream), xchg_buf_size(stream), c ? 1 : -1, 1,
                       msg); /* the list in comet LZ4_ blocks */
      if (stream) xchg_buf_unref(stream);
    }
    if (rc == 0) resolve(&in);
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    output out = {0};
    if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
    if (rc == 0 && (out.st != XCHG_OK || out.n != 1))
      rc = tu_errorf(msg, MSG, "%lld batches: %s", (long long)out.n, out.error);
    if (rc == 0) rc = compare(&root, &out, &in.alone, "the blocks read alone", msg);
    TU_CHECK(rc == 0, "%s: %s",
             c ? "list offsets from 1 (child values and bits from row 1)" : "utf8 offsets from 1",
             msg);
    output_free(&out);
    input_free(&in);
    /* A last offset past the values, in the third block. */
    memset(&in, 0, sizeof in);
    in.bad = 1;
    rc = 0;
    for (int b = 0; b < 4 && rc == 0; b++) {
      xchg_buf *stream;
      rc = rt_write(&root, &root_a, 1, NULL, &stream, msg, MSG);
      if (rc == 0 && b == 2) rc = set_last_offset(stream, 1000, msg);
      if (rc == 0)
        rc = add_block(&in, xchg_buf_data(stream), xchg_buf_size(stream), c ? 1 : -1, 1, msg);
      if (stream) xchg_buf_unref(stream);
    }
    if (rc == 0) rc = expect_error(&in, XCHG_EFORMAT, "block 2 (source 0, byte", NULL, NULL, msg);
    if (rc == 0) {
      output bad;
      read_all(&in, &o, FROM_MEMORY, &bad, msg);
      if (!strstr(bad.error, "are 0 and 1000, outside [0, "))
        rc = tu_errorf(msg, MSG, "the error does not name the offsets: %s", bad.error);
      output_free(&bad);
    }
    TU_CHECK(rc == 0, "%s: %s", c ? "a list offset past the child" : "a utf8 offset past the data",
             msg);
    input_free(&in);
  }
}

/* ---- bad input ------------------------------------------------------------------- */

static int expect_error(const input *in, xchg_status want, const char *needle,
                        const segments *before, const struct ArrowSchema *schema, char *msg) {
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.target_rows = 4;
  output out;
  int rc = read_all(in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && out.st == XCHG_OK)
    rc = tu_errorf(msg, MSG, "no error (%lld batches)", (long long)out.n);
  if (rc == 0 && want != XCHG_OK && out.st != want)
    rc = tu_errorf(msg, MSG, "status %s, not %s: %s", xchg_status_name(out.st),
                   xchg_status_name(want), out.error);
  if (rc == 0 && (!strstr(out.error, needle) || !strstr(out.error, "block ")))
    rc = tu_errorf(msg, MSG, "the error does not say '%s' and the block: %s", needle, out.error);
  /* The batches before the error: valid, and the input's first rows. */
  if (rc == 0 && before) {
    segments s = *before;
    int64_t rows = 0;
    for (int64_t b = 0; b < out.n; b++) rows += out.batches[b].length;
    segments head = {0};
    for (int64_t i = 0, left = rows; i < s.n && left > 0; i++) {
      int64_t n = s.items[i].n < left ? s.items[i].n : left;
      add_segment(&head, s.items[i].a, s.items[i].row, n);
      left -= n;
    }
    rc = compare(schema, &out, &head, "the input's first rows", msg);
    free(head.items);
  }
  output_free(&out);
  return rc;
}

/* Sets entry k of the first record batch's Buffer (slot BATCH_BUFFERS:
 * offset, length) or FieldNode (BATCH_NODES: length, null count) vector. */
static int set_batch_entry(xchg_buf *stream, int slot, uint32_t k, uint64_t first, uint64_t second,
                           char *msg) {
  tu_body bodies[4];
  int64_t n = tu_map_bodies(xchg_buf_data(stream), xchg_buf_size(stream), bodies, 4);
  for (int64_t i = 0; i < n; i++) {
    if (bodies[i].kind != XCHG_MESSAGE_RECORD_BATCH) continue;
    uint8_t *meta = xchg_buf_mutable_data(stream) + bodies[i].metadata_offset;
    fb_table m, batch;
    fb_vector buffers;
    if (fb_root(meta, (size_t)bodies[i].metadata_bytes, &m) <= 0 ||
        fb_table_field(&m, MSG_HEADER, &batch) <= 0 ||
        fb_vector_field(&batch, slot, 16, &buffers) <= 0 || k >= buffers.count)
      return tu_errorf(msg, MSG, "no entry %u in the record batch's vector %d", k, slot);
    uint8_t *spec = meta + (fb_vector_elem(&buffers, k) - meta);
    memcpy(spec, &first, 8);
    memcpy(spec + 8, &second, 8);
    return 0;
  }
  return tu_errorf(msg, MSG, "no record batch");
}

/* With slot DECLARED_LENGTH: the 8-byte uncompressed length that buffer k
 * of the first record batch's compressed body starts with, set to first. */
enum { DECLARED_LENGTH = -1 };

static int set_declared_length(xchg_buf *stream, uint32_t k, uint64_t first, char *msg) {
  tu_body bodies[4];
  int64_t n = tu_map_bodies(xchg_buf_data(stream), xchg_buf_size(stream), bodies, 4);
  for (int64_t i = 0; i < n; i++) {
    if (bodies[i].kind != XCHG_MESSAGE_RECORD_BATCH) continue;
    const uint8_t *meta = xchg_buf_data(stream) + bodies[i].metadata_offset;
    fb_table m, batch;
    fb_vector buffers;
    if (fb_root(meta, (size_t)bodies[i].metadata_bytes, &m) <= 0 ||
        fb_table_field(&m, MSG_HEADER, &batch) <= 0 ||
        fb_vector_field(&batch, BATCH_BUFFERS, 16, &buffers) <= 0 || k >= buffers.count)
      return tu_errorf(msg, MSG, "no buffer %u in the record batch", k);
    uint64_t offset = fb_load_u64(fb_vector_elem(&buffers, k));
    memcpy(xchg_buf_mutable_data(stream) + bodies[i].offset + offset, &first, 8);
    return 0;
  }
  return tu_errorf(msg, MSG, "no record batch");
}

/* A fault made in a block: entry k of its record batch's vector `slot`
 * set (set_batch_entry), or buffer k's declared length (DECLARED_LENGTH);
 * block -1 makes none. */
typedef struct fault {
  int block, slot;
  uint32_t k;
  uint64_t first, second;
} fault;

/* n blocks of one batch of `columns` columns, each an IPC stream written
 * with wo (NULL: the defaults), framed as add_block frames them, the
 * fault f made; the input is marked bad (blocks are not read alone). */
static int add_blocks(input *in, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                      int n, const xchg_ipc_write_options *wo, int comet, const fault *f,
                      char *msg) {
  in->bad = 1;
  int rc = 0;
  for (int b = 0; b < n && rc == 0; b++) {
    xchg_buf *stream;
    rc = rt_write(schema, batch, 1, wo, &stream, msg, MSG);
    if (rc == 0 && b == f->block)
      rc = f->slot == DECLARED_LENGTH
               ? set_declared_length(stream, f->k, f->first, msg)
               : set_batch_entry(stream, f->slot, f->k, f->first, f->second, msg);
    if (rc == 0)
      rc = add_block(in, xchg_buf_data(stream), xchg_buf_size(stream), comet, batch->n_children,
                     msg);
    if (stream) xchg_buf_unref(stream);
  }
  return rc;
}

/* A Buffer of the third block's record batch set outside its body: past
 * its end, or at a negative offset or length (as unsigned, huge); or
 * inside it, but shorter than the column's values.  Or its FieldNode
 * made bad: a null count above the length or negative, a negative length,
 * a column's length not the batch's. */
static void check_buffer_ranges(void) {
  static const int32_t values[] = {1, 2, 3};
  struct ArrowSchema col, *cols[1] = {&col}, root;
  struct ArrowArray col_a, *col_as[1] = {&col_a}, root_a;
  tu_fixture_schema(&col, "i", "c0", 0, NULL);
  tu_fixture_schema(&root, "+s", "", 1, cols);
  tu_fixture_array(&col_a, 3, 2, (const void *[]){NULL, values}, 0, NULL);
  tu_fixture_array(&root_a, 3, 1, (const void *[]){NULL}, 1, col_as);
  static const struct {
    int slot;
    uint32_t k;
    uint64_t first, second;
    const char *what, *needle;
    int plain; /* only of an uncompressed body */
  } bad[] = {
      {BATCH_BUFFERS, 1, 64, 8, "buffer past the body's end", "lies outside the 16-byte body", 0},
      {BATCH_BUFFERS, 1, (uint64_t)-8, 8, "buffer at a negative offset",
       "lies outside the 16-byte body", 0},
      {BATCH_BUFFERS, 1, 0, (uint64_t)-8, "buffer of a negative length",
       "lies outside the 16-byte body", 0},
      {BATCH_BUFFERS, 1, 8, 16, "buffer running past the body's end",
       "lies outside the 16-byte body", 0},
      {BATCH_BUFFERS, 1, 0, 8, "buffer shorter than its 3 values",
       "buffer 1: buffer has 8 bytes, [0, +12) needed", 1},
      {BATCH_NODES, 0, 3, 4, "node of more nulls than rows",
       "field node has length 3 and null_count 4", 0},
      {BATCH_NODES, 0, 3, (uint64_t)-1, "node of a negative null count",
       "field node has length 3 and null_count -1", 0},
      {BATCH_NODES, 0, (uint64_t)-1, 0, "node of a negative length",
       "field node has length -1 and null_count 0", 0},
      {BATCH_NODES, 0, 2, 0, "column shorter than the batch", "column has 2 rows, the batch 3", 0}};
  for (int comet = -1; comet < 2; comet += 2)
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
      if (bad[t].plain && comet > 0) continue;
      input in = {0};
      char msg[MSG] = "";
      fault f = {2, bad[t].slot, bad[t].k, bad[t].first, bad[t].second};
      int rc = add_blocks(&in, &root, &root_a, 4, NULL, comet, &f, msg);
      if (rc == 0) rc = expect_error(&in, XCHG_EFORMAT, "field 'c0'", NULL, NULL, msg);
      if (rc == 0) {
        xchg_shuffle_reader_options o;
        xchg_shuffle_reader_options_init(&o);
        output out;
        rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
        if (rc == 0 &&
            (!strstr(out.error, "block 2 (source 0, byte ") || !strstr(out.error, bad[t].needle)))
          rc =
              tu_errorf(msg, MSG, "the error does not name the block and the fault: %s", out.error);
        output_free(&out);
      }
      TU_CHECK(rc == 0, "%s blocks: a %s: %s", comet < 0 ? "ipc" : "comet lz4", bad[t].what, msg);
      input_free(&in);
    }
}

/* A batch of `rows` rows of two columns, c0 and c1, of format `format`,
 * both holding `values`: fixtures that borrow them (and point into the
 * struct, which stays where it is). */
typedef struct two_columns {
  struct ArrowSchema c0, c1, *cols[2], root;
  struct ArrowArray a0, a1, *kids[2], batch;
  const void *buffers[2];
} two_columns;

static void two_columns_init(two_columns *t, const char *format, const void *values, int64_t rows) {
  t->cols[0] = &t->c0;
  t->cols[1] = &t->c1;
  t->kids[0] = &t->a0;
  t->kids[1] = &t->a1;
  t->buffers[0] = NULL;
  t->buffers[1] = values;
  tu_fixture_schema(&t->c0, format, "c0", 0, NULL);
  tu_fixture_schema(&t->c1, format, "c1", 0, NULL);
  tu_fixture_schema(&t->root, "+s", "", 2, t->cols);
  tu_fixture_array(&t->a0, rows, 2, t->buffers, 0, NULL);
  tu_fixture_array(&t->a1, rows, 2, t->buffers, 0, NULL);
  tu_fixture_array(&t->batch, rows, 1, t->buffers, 2, t->kids);
}

/* A fault in the second column of a block's batch (its values' buffer
 * shorter than its values): read on the pool, the error is the one the
 * calling thread reports alone, word for word, after the same batches. */
static void check_pooled_error(void) {
  static const int32_t values[] = {1, 2, 3};
  two_columns t;
  two_columns_init(&t, "i", values, 3);
  input in = {0};
  char msg[MSG] = "";
  /* c1's values: buffer 3, at byte 16 of the 32-byte body, 8 bytes of 12 */
  fault f = {4, BATCH_BUFFERS, 3, 16, 8};
  int rc = add_blocks(&in, &t.root, &t.batch, 6, NULL, -1, &f, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.target_rows = 6;
  output alone = {0}, pooled = {0};
  xchg_pool *with = pool;
  pool = NULL;
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &alone, msg);
  pool = with;
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &pooled, msg);
  if (rc == 0 &&
      (alone.st != XCHG_EFORMAT || !strstr(alone.error, "block 4 (source 0, byte ") ||
       !strstr(alone.error, "field 'c1', buffer 3: buffer has 8 bytes, [0, +12) needed")))
    rc = tu_errorf(msg, MSG, "alone: %s: %s", xchg_status_name(alone.st), alone.error);
  if (rc == 0 && (pooled.st != alone.st || strcmp(pooled.error, alone.error) != 0 ||
                  pooled.n != alone.n || alone.n != 2))
    rc = tu_errorf(msg, MSG, "on the pool: %s after %lld batches; alone: %s after %lld",
                   pooled.error, (long long)pooled.n, alone.error, (long long)alone.n);
  output_free(&alone);
  output_free(&pooled);
  TU_CHECK(rc == 0, "a fault in the second column, alone and on the pool: %s", msg);
  input_free(&in);
}

/* Blocks of 3 rows of an int32 column with a null and a boolean column,
 * coalesced into batches of 9 rows: in both bitmaps (the int32's
 * validity, the booleans' values) the 7 bits past the 9th row are 0, as
 * the IPC format wants a buffer's padding, not what the memory held
 * before (a writer copies whole bytes into its output). */
static void check_bitmap_padding(void) {
  static const uint8_t validity[] = {0x5}, booleans[] = {0x3};
  static const int32_t ints[] = {1, 0, 3};
  const void *int_buffers[] = {validity, ints}, *bool_buffers[] = {NULL, booleans},
             *root_buffers[] = {NULL};
  struct ArrowSchema c0, c1, *cols[] = {&c0, &c1}, root;
  struct ArrowArray a0, a1, *kids[] = {&a0, &a1}, batch;
  tu_fixture_schema(&c0, "i", "ints", 0, NULL);
  tu_fixture_schema(&c1, "b", "flags", 0, NULL);
  tu_fixture_schema(&root, "+s", "", 2, cols);
  tu_fixture_array(&a0, 3, 2, int_buffers, 0, NULL);
  a0.null_count = 1;
  tu_fixture_array(&a1, 3, 2, bool_buffers, 0, NULL);
  tu_fixture_array(&batch, 3, 1, root_buffers, 2, kids);
  input in = {0};
  char msg[MSG] = "";
  fault none = {-1, 0, 0, 0, 0};
  int rc = add_blocks(&in, &root, &batch, 6, NULL, -1, &none, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.target_rows = 9;
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && (out.st != XCHG_OK || out.n != 2))
    rc = tu_errorf(msg, MSG, "%lld batches: %s", (long long)out.n, out.error);
  for (int64_t b = 0; rc == 0 && b < out.n; b++) {
    const struct ArrowArray *got = &out.batches[b];
    const uint8_t *bits[] = {got->children[0]->buffers[0], got->children[1]->buffers[1]};
    for (int i = 0; i < 2 && rc == 0; i++)
      if (got->length != 9 || !bits[i] || bits[i][1] >> 1 != 0)
        rc = tu_errorf(msg, MSG, "batch %lld of %lld rows: %s bitmap's second byte is 0x%02x",
                       (long long)b, (long long)got->length, i ? "the values" : "the validity",
                       bits[i] ? bits[i][1] : 0);
  }
  output_free(&out);
  TU_CHECK(rc == 0, "bits past the last row: %s", msg);
  input_free(&in);
}

/* Two blocks of a list<null> column (its values free to hold, however
 * many) of 2^30 values each beside an int32 column: coalesced, the list's
 * 32-bit offsets would reach 2^31, so the batch is cut between them, each
 * block's row in a batch of its own, whole: the int32 column appended
 * before the list met the overflow is undone. */
static void check_offsets_overflow(void) {
  static const int32_t offsets[2] = {0, 1 << 30}, keys[2][1] = {{7}, {8}};
  struct ArrowSchema key, item, list, *items[1] = {&item}, *cols[2] = {&key, &list}, root;
  tu_fixture_schema(&key, "i", "k", 0, NULL);
  tu_fixture_schema(&item, "n", "item", 0, NULL);
  tu_fixture_schema(&list, "+l", "l", 1, items);
  tu_fixture_schema(&root, "+s", "", 2, cols);
  input in = {0};
  char msg[MSG] = "";
  int rc = 0;
  for (int b = 0; b < 2 && rc == 0; b++) {
    struct ArrowArray nulls, k, l, *l_kids[1] = {&nulls}, *kids[2] = {&k, &l}, batch;
    tu_fixture_array(&nulls, 1 << 30, 0, (const void *[]){NULL}, 0, NULL);
    nulls.null_count = 1 << 30;
    tu_fixture_array(&k, 1, 2, (const void *[]){NULL, keys[b]}, 0, NULL);
    tu_fixture_array(&l, 1, 2, (const void *[]){NULL, offsets}, 1, l_kids);
    tu_fixture_array(&batch, 1, 1, (const void *[]){NULL}, 2, kids);
    xchg_buf *stream;
    rc = rt_write(&root, &batch, 1, NULL, &stream, msg, MSG);
    if (rc == 0) rc = add_block(&in, xchg_buf_data(stream), xchg_buf_size(stream), -1, 2, msg);
    if (stream) xchg_buf_unref(stream);
  }
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && (out.st != XCHG_OK || out.n != 2))
    rc = tu_errorf(msg, MSG, "%s: %lld batches, not 2 (%s)", xchg_status_name(out.st),
                   (long long)out.n, out.error);
  for (int64_t b = 0; rc == 0 && b < out.n; b++) {
    const struct ArrowArray *a = &out.batches[b];
    char why[MSG];
    if (array_valid(&root, a, why, sizeof why) != 0)
      rc = tu_errorf(msg, MSG, "batch %lld breaks a rule of the format: %s", (long long)b, why);
    else if (a->length != 1 || a->children[0]->length != 1 ||
             ((const int32_t *)a->children[0]->buffers[1])[a->children[0]->offset] != keys[b][0] ||
             a->children[1]->children[0]->length != 1 << 30)
      rc = tu_errorf(msg, MSG, "batch %lld is not block %lld's row", (long long)b, (long long)b);
  }
  output_free(&out);
  TU_CHECK(rc == 0, "list offsets reaching 2^31 cut the batch: %s", msg);
  input_free(&in);
}

static void check_truncated(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  for (int comet = -1; comet < 2; comet++) {
    int rc =
        primitive_input(&in, &d, comet < 0 ? XCHG_BLOCK_LZ4_FRAME : XCHG_BLOCK_NONE, comet, msg);
    size_t full = in.bytes.size;
    /* Cut everywhere in the last 600 bytes, and every 97 bytes before:
     * an error, or (cut where a block ends) fewer rows, never more. */
    int errors = 0;
    for (size_t cut = 1; rc == 0 && cut < full; cut += cut + 600 < full ? 97 : 1) {
      input part = in;
      part.bytes.size = cut;
      xchg_shuffle_reader_options o;
      xchg_shuffle_reader_options_init(&o);
      output out;
      rc = read_all(&part, &o, FROM_MEMORY, &out, msg);
      int64_t rows = 0;
      for (int64_t b = 0; b < out.n; b++) rows += out.batches[b].length;
      if (rc == 0 && out.st == XCHG_OK && rows >= in.alone.rows)
        rc = tu_errorf(msg, MSG, "cut at byte %zu of %zu: all %lld rows", cut, full,
                       (long long)rows);
      if (rc == 0 && out.st != XCHG_OK && !strstr(out.error, "block "))
        rc = tu_errorf(msg, MSG, "cut at byte %zu: the error names no block: %s", cut, out.error);
      if (rc == 0 && out.st != XCHG_OK && strstr(out.error, "comet block"))
        rc = tu_errorf(msg, MSG, "cut at byte %zu: the error names the block twice: %s", cut,
                       out.error);
      errors += out.st != XCHG_OK;
      output_free(&out);
    }
    if (rc == 0 && errors == 0) rc = tu_errorf(msg, MSG, "no cut was an error");
    TU_CHECK(rc == 0, "%s: %s",
             comet < 0 ? "ipc blocks cut anywhere"
             : comet   ? "comet lz4 blocks cut anywhere"
                       : "comet blocks cut anywhere",
             msg);
    input_free(&in);
    rt_data_free(&d);
  }
}

/* Damages the second Comet block's header or bytes. */
static void check_comet_damage(void) {
  static const struct {
    const char *what, *needle;
    xchg_status st;
    int field; /* 0: length +16, 1: length -16, 2: field count, 3: tag, 4: compressed byte */
  } cases[] = {
      {"a header length longer than the input", "the block is cut short", XCHG_OK, 0},
      {"a header length shorter than its stream", "", XCHG_OK, 1},
      {"a field count that is not the schema's", "field count", XCHG_EFORMAT, 2},
      {"an unknown codec tag", "unknown codec tag", XCHG_EFORMAT, 3},
      {"corrupt compressed bytes", "", XCHG_OK, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    input in;
    rt_data d = {0};
    char msg[MSG] = "";
    int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, 1 /* inner codecs rotate from LZ4 */, msg);
    uint8_t *p = in.bytes.data;
    uint64_t first = 0, second;
    if (rc == 0) {
      memcpy(&first, p, 8);
      first += 8;
      memcpy(&second, p + first, 8);
      uint8_t *h = p + first;
      switch (cases[i].field) {
        case 0:
          second = in.bytes.size;
          memcpy(h, &second, 8);
          break;
        case 1:
          second -= 16;
          memcpy(h, &second, 8);
          break;
        case 2: h[8] ^= 1; break;
        case 3: memcpy(h + 16, "LZ5_", 4); break;
        default: h[20 + second / 2 - 6] ^= 0x5a; break;
      }
      rc = expect_error(&in, cases[i].st, cases[i].needle, &in.alone, &d.schema, msg);
    }
    if (rc == 0 && cases[i].field != 0) {
      /* the second block is block 1, at the byte where the first ends */
      char where[64];
      snprintf(where, sizeof where, "block 1 (source 0, byte %llu)", (unsigned long long)first);
      output out;
      xchg_shuffle_reader_options o;
      xchg_shuffle_reader_options_init(&o);
      read_all(&in, &o, FROM_MEMORY, &out, msg);
      if (!strstr(out.error, where))
        rc = tu_errorf(msg, MSG, "the error does not say '%s': %s", where, out.error);
      else if (strstr(out.error, "comet block"))
        rc = tu_errorf(msg, MSG, "the error names the block twice: %s", out.error);
      output_free(&out);
    }
    TU_CHECK(rc == 0, "%s: %s", cases[i].what, msg);
    input_free(&in);
    rt_data_free(&d);
  }
}

/* A block of another schema after the first ones. */
static void check_other_schema(void) {
  input in;
  rt_data d = {0}, other = {0};
  char msg[MSG] = "", path[4096];
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
  const char *dir = tu_testdata_dir();
  snprintf(path, sizeof path, "%s/arrow-gold/1.0.0-littleendian/generated_nested.stream", dir);
  size_t size;
  uint8_t *stream = tu_read_file(path, &size);
  if (rc == 0 && !stream) rc = tu_errorf(msg, MSG, "cannot read %s", path);
  size_t at = in.bytes.size;
  if (rc == 0) tu_bytes_append(&in.bytes, stream, size);
  if (rc == 0) rc = expect_error(&in, XCHG_EFORMAT, "not the first block's", NULL, NULL, msg);
  if (rc == 0) {
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    output out;
    read_all(&in, &o, FROM_MEMORY, &out, msg);
    char where[64];
    snprintf(where, sizeof where, "block %lld (source 0, byte %zu)", (long long)in.blocks, at);
    if (!strstr(out.error, where))
      rc = tu_errorf(msg, MSG, "the error does not say '%s': %s", where, out.error);
    output_free(&out);
  }
  TU_CHECK(rc == 0, "a block of another schema: %s", msg);
  /* with the options' schema message, block 0 is compared with it: the
   * error names the options' schema, not block 0 as "the first block" */
  if (rc == 0) {
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    o.schema_message = stream; /* its schema message, framing included */
    uint32_t len;
    memcpy(&len, stream + 4, 4);
    o.schema_message_size = 8 + (size_t)len;
    output out;
    read_all(&in, &o, FROM_MEMORY, &out, msg);
    if (!strstr(out.error, "block 0 (source 0, byte 0): its schema is not the options' schema's") ||
        strstr(out.error, "first block"))
      rc = tu_errorf(msg, MSG, "the error does not name the options' schema: %s", out.error);
    output_free(&out);
    TU_CHECK(rc == 0, "a block of another schema than the options': %s", msg);
  }
  free(stream);
  input_free(&in);
  rt_data_free(&d);
  rt_data_free(&other);
}

/* The options' schema message in each framing a stream may have (the
 * continuation marker and length, the pre-0.15 length alone, the
 * flatbuffer alone): the blocks read against it, as many rows as without. */
static void check_given_schema_framings(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
  uint32_t length = 0;
  if (rc == 0) memcpy(&length, in.bytes.data + 4, 4);
  static const char *const names[] = {"continuation marker", "pre-0.15 length", "flatbuffer alone"};
  const size_t skip[] = {0, 4, 8}; /* the length alone follows the marker */
  for (int f = 0; rc == 0 && f < 3; f++) {
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    o.schema_message = in.bytes.data + skip[f];
    o.schema_message_size = 8 + (size_t)length - skip[f];
    output out;
    rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
    int64_t rows = 0;
    for (int64_t b = 0; b < out.n; b++) rows += out.batches[b].length;
    if (rc == 0 && (out.st != XCHG_OK || rows != out.m.rows || out.m.blocks != in.blocks))
      rc = tu_errorf(msg, MSG, "%s: %s (%lld rows, %lld of %lld blocks)", names[f], out.error,
                     (long long)rows, (long long)out.m.blocks, (long long)in.blocks);
    output_free(&out);
  }
  TU_CHECK(rc == 0, "the options' schema message in each framing: %s", msg);
  input_free(&in);
  rt_data_free(&d);
}

/* An IPC file handed to the shuffle reader: the error says so, rather
 * than reading its magic as a metadata length. */
static void check_ipc_file(void) {
  input in = {0};
  char msg[MSG] = "", path[4096];
  snprintf(path, sizeof path, "%s/arrow-gold/1.0.0-littleendian/generated_primitive.arrow_file",
           tu_testdata_dir());
  size_t size;
  uint8_t *file = tu_read_file(path, &size);
  int rc = file ? 0 : tu_errorf(msg, MSG, "cannot read %s", path);
  if (rc == 0) tu_bytes_append(&in.bytes, file, size);
  if (rc == 0)
    rc = expect_error(&in, XCHG_EFORMAT, "block 0 (source 0, byte 0): it is an Arrow IPC file",
                      NULL, NULL, msg);
  TU_CHECK(rc == 0, "an IPC file: %s", msg);
  free(file);
  input_free(&in);
}

/* The ids an IPC reader of p[0..size) lists, with top-level column
 * `column` alone (-1: all), into ids; how many (-1: it failed). */
static int64_t ipc_ids(const uint8_t *p, size_t size, int64_t column, int64_t *ids, int64_t cap) {
  xchg_error err;
  xchg_ipc_reader *r = NULL;
  int64_t n = -1;
  if (xchg_ipc_reader_open_memory(p, size, NULL, NULL, NULL, &r, &err) == XCHG_OK &&
      (column < 0 || xchg_ipc_reader_select_indices(r, &column, 1, &err) == XCHG_OK))
    n = xchg_ipc_reader_dictionary_ids(r, ids, cap);
  xchg_ipc_reader_free(r);
  return n;
}

/* xchg_shuffle_reader_dictionary_ids: none before the schema is read,
 * then the blocks' ids as an IPC reader of one block lists them, the
 * selected columns' only (gold files whose ids the writer's default
 * numbering would not give: shared, nested). */
static void check_dictionary_ids(void) {
  static const char *const gold[] = {"4.0.0-shareddict/generated_shared_dict.stream",
                                     "1.0.0-littleendian/generated_nested_dictionary.stream"};
  for (size_t g = 0; g < sizeof gold / sizeof gold[0]; g++)
    for (int64_t column = -1; column < 2; column++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/arrow-gold/%s", tu_testdata_dir(), gold[g]);
      tu_bytes b = tu_read_bytes(path);
      int64_t want[8], got[8];
      int64_t n = b.data ? ipc_ids(b.data, b.size, column, want, 8) : -1;
      xchg_shuffle_reader_options o;
      xchg_shuffle_reader_options_init(&o);
      o.columns = column < 0 ? NULL : &column;
      o.n_columns = column < 0 ? 0 : 1;
      xchg_shuffle_reader *r = NULL;
      xchg_source *src = NULL;
      xchg_error err;
      struct ArrowSchema schema = {0};
      int ok = n > 0 && n <= 8 && xchg_shuffle_reader_open(&o, &r, &err) == XCHG_OK &&
               xchg_source_from_memory(b.data, b.size, NULL, NULL, &src, &err) == XCHG_OK &&
               xchg_shuffle_reader_add_source(r, src, &err) == XCHG_OK &&
               xchg_shuffle_reader_dictionary_ids(r, got, 8) == 0 &&
               xchg_shuffle_reader_schema(r, &schema, &err) == XCHG_OK &&
               xchg_shuffle_reader_dictionary_ids(r, got, 8) == n &&
               memcmp(got, want, (size_t)n * sizeof *got) == 0;
      TU_CHECK(ok, "%s, column %lld: the shuffle reader's dictionary ids are not the IPC reader's",
               gold[g], (long long)column);
      if (schema.release) schema.release(&schema);
      xchg_shuffle_reader_free(r);
      free(b.data);
    }
}

/* A Comet block whose IPC stream has bytes after its end-of-stream
 * marker, and a stored block whose header claims more bytes than the
 * input has, its stream whole: errors naming the block. */
static void check_comet_framing(void) {
  for (int inner = 0; inner < 2; inner++) {
    input in;
    rt_data d = {0};
    char msg[MSG] = "";
    int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
    /* Re-frame the plain IPC blocks as Comet blocks, the third with 8
     * bytes after its stream. */
    input comet = {0};
    comet.bad = 1;
    for (int64_t b = 0; rc == 0 && b < in.blocks; b++) {
      size_t from = b ? in.ends[b - 1] : 0, size = in.ends[b] - from;
      uint8_t *stream = malloc(size + 8);
      if (!stream) abort();
      memcpy(stream, in.bytes.data + from, size);
      memset(stream + size, 0, 8);
      rc = add_block(&comet, stream, size + (b == 2 ? 8 : 0), inner ? 1 : 0, d.schema.n_children,
                     msg);
      free(stream);
    }
    char where[64];
    snprintf(where, sizeof where, "block 2 (source 0, byte %zu)", comet.ends[1]);
    output out = {0};
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    if (rc == 0) rc = read_all(&comet, &o, FROM_MEMORY, &out, msg);
    if (rc == 0 && (out.st != XCHG_EFORMAT ||
                    !strstr(out.error, "8 bytes follow its IPC stream's end-of-stream") ||
                    !strstr(out.error, where)))
      rc = tu_errorf(msg, MSG, "%s: %s", xchg_status_name(out.st), out.error);
    output_free(&out);
    TU_CHECK(rc == 0, "%s: %s",
             inner ? "bytes after the end-of-stream marker in a comet lz4 block"
                   : "bytes after the end-of-stream marker in a stored comet block",
             msg);
    input_free(&comet);
    /* The last block's header states 16 bytes more than there are. */
    memset(&comet, 0, sizeof comet);
    comet.bad = 1;
    rc = 0;
    for (int64_t b = 0; rc == 0 && b < in.blocks; b++) {
      size_t from = b ? in.ends[b - 1] : 0;
      rc = add_block(&comet, in.bytes.data + from, in.ends[b] - from, inner ? 1 : 0,
                     d.schema.n_children, msg);
    }
    size_t last = comet.blocks > 1 ? comet.ends[comet.blocks - 2] : 0;
    uint64_t len;
    if (rc == 0) {
      memcpy(&len, comet.bytes.data + last, 8);
      len += 16;
      memcpy(comet.bytes.data + last, &len, 8);
      rc = read_all(&comet, &o, FROM_MEMORY, &out, msg);
    }
    snprintf(where, sizeof where, "block %lld (source 0, byte %zu)", (long long)comet.blocks - 1,
             last);
    if (rc == 0 && (out.st == XCHG_OK || !strstr(out.error, "the block is cut short") ||
                    !strstr(out.error, where)))
      rc = tu_errorf(msg, MSG, "%s: %s", xchg_status_name(out.st), out.error);
    output_free(&out);
    TU_CHECK(rc == 0, "%s: %s",
             inner ? "a comet lz4 block's header longer than the input"
                   : "a stored comet block's header longer than the input",
             msg);
    input_free(&comet);
    input_free(&in);
    rt_data_free(&d);
  }
}

/* A block before the last whose header states more bytes than the input
 * holds: 100,000 more (cut short, or a wrong length), or 2^40 (more than
 * max_batch_bytes: refused unread).  Read from memory and through a
 * callback source, the error names that block, not the next one's bytes
 * read as its stream, and is word for word the same both ways; the blocks
 * before it come out first. */
static void check_comet_overrun(void) {
  static const uint64_t stated[] = {100000, (uint64_t)1 << 40};
  static const xchg_status want[] = {XCHG_EIO, XCHG_ELIMIT};
  static const char *const lead[] = {"the block is cut short: the input ends at byte ",
                                     "its header states 1099511627776 bytes, "};
  static const char *const words[] = {", which states 100000 (or the block's length is wrong)",
                                      "more than max_batch_bytes"};
  for (int inner = 0; inner < 2; inner++)
    for (int k = 0; k < 2; k++) {
      input in, comet = {0};
      rt_data d = {0};
      char msg[MSG] = "", where[64];
      int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
      comet.bad = 1;
      for (int64_t b = 0; rc == 0 && b < in.blocks; b++) {
        size_t from = b ? in.ends[b - 1] : 0;
        rc = add_block(&comet, in.bytes.data + from, in.ends[b] - from, inner ? 1 : 0,
                       d.schema.n_children, msg);
      }
      if (rc == 0 && comet.blocks < 3) rc = tu_errorf(msg, MSG, "fewer than 3 blocks");
      if (rc == 0) memcpy(comet.bytes.data + comet.ends[0], &stated[k], 8); /* block 1's */
      snprintf(where, sizeof where, "block 1 (source 0, byte %zu): ", comet.ends[0]);
      xchg_shuffle_reader_options o;
      xchg_shuffle_reader_options_init(&o);
      o.target_rows = 1; /* block 0's batch is out before the error */
      output mem = {0}, cb = {0};
      if (rc == 0) rc = read_all(&comet, &o, FROM_MEMORY, &mem, msg);
      if (rc == 0) rc = read_all(&comet, &o, FROM_CALLBACK, &cb, msg);
      if (rc == 0 && (mem.st != want[k] || !strstr(mem.error, where) ||
                      !strstr(mem.error, lead[k]) || !strstr(mem.error, words[k]) || mem.n < 1))
        rc = tu_errorf(msg, MSG, "from memory: %s after %lld batches: %s", xchg_status_name(mem.st),
                       (long long)mem.n, mem.error);
      if (rc == 0 && (cb.st != mem.st || strcmp(cb.error, mem.error) != 0 || cb.n != mem.n))
        rc = tu_errorf(msg, MSG, "through a callback: %s after %lld batches: %s",
                       xchg_status_name(cb.st), (long long)cb.n, cb.error);
      output_free(&mem);
      output_free(&cb);
      TU_CHECK(rc == 0, "a %s comet block's header stating %llu bytes: %s",
               inner ? "lz4" : "stored", (unsigned long long)stated[k], msg);
      input_free(&comet);
      input_free(&in);
      rt_data_free(&d);
    }
}

/* With a pool, the reader plans batches ahead within readahead_bytes: with
 * it at 1 byte, the first batch out leaves at most one planned after it. */
static void check_readahead_bound(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
  xchg_shuffle_reader_options given;
  xchg_shuffle_reader_options_init(&given);
  given.target_rows = 4;
  xchg_shuffle_reader_options o = with_pool(&given);
  o.read.readahead_bytes = 1;
  xchg_shuffle_reader *r = NULL;
  xchg_error err;
  if (rc == 0 && (xchg_shuffle_reader_open(&o, &r, &err) != XCHG_OK ||
                  xchg_shuffle_reader_add_source(r, tu_memory_source(in.bytes.data, in.bytes.size),
                                                 &err) != XCHG_OK))
    rc = tu_errorf(msg, MSG, "setting up: %s", err.message);
  struct ArrowArray a = {0};
  if (rc == 0 && (xchg_shuffle_reader_next(r, &a, &err) != XCHG_OK || !a.release))
    rc = tu_errorf(msg, MSG, "next: %s", err.message);
  xchg_shuffle_reader_metrics m;
  if (r) xchg_shuffle_reader_get_metrics(r, &m);
  /* blocks of 1, 2, 3, 5, 8, ... rows: the first two batches of 4 rows
   * take 4 blocks, and a fifth may be open; six batches would take 8 */
  if (rc == 0 && m.blocks > 5)
    rc = tu_errorf(msg, MSG, "%lld blocks planned for the first batch of %lld rows",
                   (long long)m.blocks, (long long)a.length);
  if (a.release) a.release(&a);
  xchg_shuffle_reader_free(r);
  TU_CHECK(rc == 0, "read-ahead stays within readahead_bytes: %s", msg);
  input_free(&in);
  rt_data_free(&d);
}

/* A batch's first buffers are sized for the target it will reach, rows or
 * bytes, whichever its blocks reach first, and never past max_batch_bytes.
 * With target_rows far past the input and target_bytes small, the bytes
 * bound them: sized by the rows alone, 1-row blocks with a target of 10^7
 * rows reserved 5.4 GB for 37 rows, and a target of 2^63 - 1 rows failed
 * for want of memory; with both targets that large, max_batch_bytes
 * bounds each buffer. */
/* The buffers of arr and of its children and dictionaries, those present. */
static int64_t count_buffers(const struct ArrowArray *arr) {
  int64_t n = 0;
  for (int64_t i = 0; i < arr->n_buffers; i++) n += arr->buffers[i] != NULL;
  for (int64_t i = 0; i < arr->n_children; i++) n += count_buffers(arr->children[i]);
  if (arr->dictionary) n += count_buffers(arr->dictionary);
  return n;
}

static void check_reservation_bound(void) {
  static const struct {
    int64_t rows, bytes, max_batch, most_held;
  } cases[] = {
      {10000000, 256 << 10, (int64_t)1 << 32, 1 << 20},
      {INT64_MAX, 256 << 10, (int64_t)1 << 32, 1 << 20},
      {INT64_MAX, INT64_MAX, 64 << 10, 64 << 20},
  };
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    input in;
    rt_data d = {0};
    char msg[MSG] = "";
    int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, -1, msg);
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    o.target_rows = cases[t].rows;
    o.target_bytes = cases[t].bytes;
    o.read.max_batch_bytes = cases[t].max_batch;
    xchg_buf_metrics before, held;
    xchg_buf_get_metrics(&before);
    output out = {0};
    if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
    xchg_buf_get_metrics(&held);
    int64_t grown = held.live_bytes - before.live_bytes;
    if (rc == 0 && (out.st != XCHG_OK || out.n != 1))
      rc = tu_errorf(msg, MSG, "%lld batches, not 1 (%s)", (long long)out.n, out.error);
    if (rc == 0 && grown > cases[t].most_held)
      rc = tu_errorf(msg, MSG, "%lld bytes held for one batch of %lld rows", (long long)grown,
                     (long long)out.batches[0].length);
    /* each buffer at most max_batch_bytes: a quarter more held 5 GiB for
     * each of a few rows' buffers by default, past the 4 GiB cap */
    int64_t n_bufs = rc == 0 ? count_buffers(&out.batches[0]) : 0;
    if (rc == 0 && grown > n_bufs * cases[t].max_batch)
      rc = tu_errorf(msg, MSG, "%lld bytes held for %lld buffers of at most %lld bytes",
                     (long long)grown, (long long)n_bufs, (long long)cases[t].max_batch);
    output_free(&out);
    TU_CHECK(rc == 0, "target_rows %lld, target_bytes %lld, max_batch_bytes %lld: %s",
             (long long)cases[t].rows, (long long)cases[t].bytes, (long long)cases[t].max_batch,
             msg);
    input_free(&in);
    rt_data_free(&d);
  }
}

/* ---- input over time ------------------------------------------------------------- */

/* Reads `in` with the incremental option, per_source blocks to a source,
 * each source added between two calls to next (alternately in memory and
 * behind a callback), then ends the input.  Every batch handed out before
 * the end must hold the target; *waits counts the XCHG_EAGAIN outcomes. */
static int read_incremental(const input *in, int64_t target, int64_t per_source, output *out,
                            int64_t *waits, char *msg) {
  memset(out, 0, sizeof *out);
  *waits = 0;
  xchg_shuffle_reader_options given;
  xchg_shuffle_reader_options_init(&given);
  given.target_rows = target;
  given.incremental = 1;
  xchg_shuffle_reader_options o = with_pool(&given);
  xchg_shuffle_reader *r;
  xchg_error err;
  if (xchg_shuffle_reader_open(&o, &r, &err) != XCHG_OK)
    return tu_errorf(msg, MSG, "open: %s", err.message);
  int rc = 0;
  struct ArrowSchema schema;
  xchg_status st = xchg_shuffle_reader_schema(r, &schema, &err);
  if (st != XCHG_EAGAIN)
    rc = tu_errorf(msg, MSG, "schema before any input: %s, not XCHG_EAGAIN", xchg_status_name(st));
  int64_t cap = 0, added = 0, returned = 0;
  for (int64_t b = 0; rc == 0 && b <= in->blocks; b += per_source) {
    int ended = b >= in->blocks;
    if (ended) {
      if (xchg_shuffle_reader_end_input(r, &err) != XCHG_OK)
        rc = tu_errorf(msg, MSG, "end_input: %s", err.message);
    } else {
      int64_t last = b + per_source < in->blocks ? b + per_source : in->blocks;
      size_t from = b ? in->ends[b - 1] : 0, to = in->ends[last - 1];
      xchg_source *src = (b / per_source) % 2
                             ? caller_source(in->bytes.data + from, to - from, (uint64_t)b)
                             : tu_memory_source(in->bytes.data + from, to - from);
      if (xchg_shuffle_reader_add_source(r, src, &err) != XCHG_OK)
        rc = tu_errorf(msg, MSG, "add_source: %s", err.message);
      for (int64_t k = b; k < last; k++) added += in->rows_of[k];
    }
    for (; rc == 0;) {
      struct ArrowArray a;
      st = xchg_shuffle_reader_next(r, &a, &err);
      if (st == XCHG_EAGAIN && !ended && !a.release) {
        ++*waits;
        /* A batch is cut as soon as its rows reach the target. */
        if (added - returned >= target)
          rc = tu_errorf(msg, MSG,
                         "XCHG_EAGAIN with %lld rows added and not handed out, target %lld",
                         (long long)(added - returned), (long long)target);
        break;
      }
      if (st != XCHG_OK) {
        rc = tu_errorf(msg, MSG, "next after %lld blocks: %s: %s", (long long)b,
                       xchg_status_name(st), err.message);
        break;
      }
      if (!a.release) break;
      if (!ended && a.length < target)
        rc = tu_errorf(msg, MSG, "a batch of %lld rows, short of %lld, before the input ended",
                       (long long)a.length, (long long)target);
      returned += a.length;
      if (out->n == cap &&
          !(out->batches =
                realloc(out->batches, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *out->batches)))
        abort();
      out->batches[out->n++] = a;
    }
  }
  if (rc == 0 &&
      xchg_shuffle_reader_add_source(r, tu_memory_source(in->bytes.data, 1), &err) != XCHG_EINVAL)
    rc = tu_errorf(msg, MSG, "a source added after end_input was taken");
  if (rc == 0 && atomic_exchange(&read_elsewhere, 0))
    rc = tu_errorf(msg, MSG, "a source behind a callback was read off the calling thread");
  xchg_shuffle_reader_get_metrics(r, &out->m);
  xchg_shuffle_reader_free(r);
  return rc;
}

static void check_incremental(void) {
  static const int64_t targets[] = {1, 10, 1 << 20}, per_source[] = {1, 3};
  for (int comet = -1; comet < 2; comet++) {
    input in;
    rt_data d = {0};
    char msg[MSG] = "";
    int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, comet, msg);
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
      for (size_t k = 0; k < sizeof per_source / sizeof *per_source; k++) {
        output out = {0};
        int64_t waits = 0;
        char what[256];
        if (rc == 0) rc = read_incremental(&in, targets[t], per_source[k], &out, &waits, msg);
        if (rc == 0) rc = compare(&d.schema, &out, &in.alone, "the blocks read alone", msg);
        if (rc == 0) rc = check_sizes(&out, targets[t], msg);
        if (rc == 0) rc = check_metrics(&out, &in, in.alone.rows, msg);
        /* Each source is one call short of the next: a wait at least per
         * source that leaves rows short of the target. */
        if (rc == 0 && waits < (targets[t] > in.alone.rows ? in.blocks / per_source[k] : 1))
          rc = tu_errorf(msg, MSG, "%lld waits for input over %lld sources", (long long)waits,
                         (long long)(in.blocks / per_source[k]));
        if (rc == 0 && targets[t] > in.alone.rows && out.n != 1)
          rc = tu_errorf(msg, MSG,
                         "%lld batches: the rows short of the target come out once, at the end",
                         (long long)out.n);
        snprintf(what, sizeof what, "incremental input, %s, %lld blocks a source, target %lld%s",
                 comet < 0 ? "ipc"
                 : comet   ? "comet lz4"
                           : "comet",
                 (long long)per_source[k], (long long)targets[t],
                 targets[t] > in.alone.rows ? " (all pending at end_input)" : "");
        TU_CHECK(rc == 0, "%s: %s", what, msg);
        output_free(&out);
        rc = 0;
      }
    }
    input_free(&in);
    rt_data_free(&d);
  }
}

/* A callback source that counts the bytes read from it. */
typedef struct counted {
  const uint8_t *data;
  size_t size, pos;
  pthread_t caller;
} counted;

static xchg_status counted_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  (void)err;
  counted *c = ctx;
  if (!pthread_equal(pthread_self(), c->caller)) atomic_store(&read_elsewhere, 1);
  *got = n < c->size - c->pos ? n : c->size - c->pos;
  if (*got) memcpy(dst, c->data + c->pos, *got);
  c->pos += *got;
  return XCHG_OK;
}

static void no_close(void *ctx) { (void)ctx; }

/* A source that is not in memory is read a chunk at a time, not whole;
 * a block larger than max_batch_bytes is refused before it is read. */
static void check_bounded_reading(void) {
  for (int comet = -1; comet < 2; comet += 2) {
    input in;
    rt_data d = {0};
    char msg[MSG] = "";
    int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, comet, msg);
    size_t one = in.bytes.size, largest = 0;
    for (int64_t b = 0; b < in.blocks; b++) {
      size_t size = in.ends[b] - (b ? in.ends[b - 1] : 0);
      if (size > largest) largest = size;
    }
    uint8_t *copy = malloc(one);
    if (!copy) abort();
    memcpy(copy, in.bytes.data, one);
    while (rc == 0 && in.bytes.size < ((size_t)5 << 20)) tu_bytes_append(&in.bytes, copy, one);
    free(copy);
    counted c = {in.bytes.data, in.bytes.size, 0, pthread_self()};
    xchg_shuffle_reader_options given;
    xchg_shuffle_reader_options_init(&given);
    given.target_rows = 1;
    xchg_shuffle_reader_options o = with_pool(&given);
    xchg_shuffle_reader *r = NULL;
    xchg_source *src = NULL;
    xchg_error err;
    if (rc == 0 && (xchg_shuffle_reader_open(&o, &r, &err) != XCHG_OK ||
                    xchg_source_from_callback(counted_read, no_close, &c, &src, &err) != XCHG_OK ||
                    xchg_shuffle_reader_add_source(r, src, &err) != XCHG_OK))
      rc = tu_errorf(msg, MSG, "setting up: %s", err.message);
    int64_t rows = 0, batches = 0;
    for (struct ArrowArray a; rc == 0;) {
      if (xchg_shuffle_reader_next(r, &a, &err) != XCHG_OK) {
        rc = tu_errorf(msg, MSG, "next: %s", err.message);
        break;
      }
      if (!a.release) break;
      /* read ahead at most about readahead_bytes of batches, each of
       * whole blocks of chunks of 1 MiB */
      if (++batches == 1 && c.pos > ((size_t)1 << 20) + largest + (pool ? ((size_t)2 << 20) : 0))
        rc = tu_errorf(msg, MSG, "%zu of %zu bytes read for the first batch", c.pos, c.size);
      rows += a.length;
      a.release(&a);
    }
    int64_t copies = (int64_t)(in.bytes.size / one);
    if (rc == 0 && rows != copies * in.alone.rows)
      rc = tu_errorf(msg, MSG, "%lld rows, not %lld", (long long)rows,
                     (long long)(copies * in.alone.rows));
    if (rc == 0 && atomic_exchange(&read_elsewhere, 0))
      rc = tu_errorf(msg, MSG, "the source was read off the calling thread");
    xchg_shuffle_reader_free(r);
    TU_CHECK(rc == 0, "%s: %s",
             comet < 0 ? "a callback source of ipc blocks is read 1 MiB at a time"
                       : "a callback source of comet blocks is read 1 MiB at a time",
             msg);
    /* A block above max_batch_bytes: XCHG_ELIMIT, before it is read. */
    c.pos = 0;
    given.read.max_batch_bytes = (int64_t)largest / 2;
    o = with_pool(&given);
    rc = 0;
    if (xchg_shuffle_reader_open(&o, &r, &err) != XCHG_OK ||
        xchg_source_from_callback(counted_read, no_close, &c, &src, &err) != XCHG_OK ||
        xchg_shuffle_reader_add_source(r, src, &err) != XCHG_OK)
      rc = tu_errorf(msg, MSG, "setting up: %s", err.message);
    xchg_status st = XCHG_OK;
    for (struct ArrowArray a; rc == 0 && st == XCHG_OK;) {
      st = xchg_shuffle_reader_next(r, &a, &err);
      if (st != XCHG_OK || !a.release) break;
      a.release(&a);
    }
    if (rc == 0 && (st != XCHG_ELIMIT || !strstr(err.message, "max_batch_bytes") ||
                    !strstr(err.message, "source 0")))
      rc = tu_errorf(msg, MSG, "%s: %s", xchg_status_name(st), st == XCHG_OK ? "" : err.message);
    if (rc == 0 && c.pos > ((size_t)1 << 20) + largest)
      rc = tu_errorf(msg, MSG, "%zu bytes read", c.pos);
    xchg_shuffle_reader_free(r);
    TU_CHECK(rc == 0, "a block above max_batch_bytes in a callback source: %s", msg);
    input_free(&in);
    rt_data_free(&d);
  }
}

/* A damaged Comet LZ4 block past the first MiB of a source that is not in
 * memory (read a chunk at a time, each chunk's bytes decompressed by
 * istreams reset onto it): the error names the block by its byte in the
 * source, and so do the codec's own words (where its frame starts), as
 * read from memory, where the source is one chunk. */
static void check_far_damage(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, 0 /* inner codecs rotate from NONE */, msg);
  size_t one = in.bytes.size;
  uint8_t *copy = malloc(one);
  if (!copy) abort();
  memcpy(copy, in.bytes.data, one);
  while (rc == 0 && in.bytes.size < ((size_t)3 << 20)) tu_bytes_append(&in.bytes, copy, one);
  free(copy);
  /* The first LZ4 block past 1.5 MiB, a byte in its middle flipped. */
  size_t at = 0;
  int64_t index = 0;
  uint64_t len = 0;
  for (; rc == 0 && at + COMET_BLOCK_HEADER <= in.bytes.size; at += 8 + len, index++) {
    memcpy(&len, in.bytes.data + at, 8);
    if (at > ((size_t)3 << 19) && memcmp(in.bytes.data + at + 16, "LZ4_", 4) == 0) break;
  }
  if (rc == 0 && at + COMET_BLOCK_HEADER > in.bytes.size) rc = tu_errorf(msg, MSG, "no LZ4 block");
  if (rc == 0) in.bytes.data[at + 8 + len / 2 + 6] ^= 0x5a;
  output mem = {0}, far = {0};
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &mem, msg);
  if (rc == 0) rc = read_all(&in, &o, FROM_CALLBACK, &far, msg);
  char where[128], frame[64];
  snprintf(where, sizeof where, "block %lld (source 0, byte %zu): lz4 frame 0 (starting at byte ",
           (long long)index, at);
  snprintf(frame, sizeof frame, "(starting at byte %zu)", at + COMET_BLOCK_HEADER);
  if (rc == 0 && (mem.st == XCHG_OK || strncmp(mem.error, where, strlen(where)) != 0 ||
                  !strstr(mem.error, frame)))
    rc = tu_errorf(msg, MSG, "from memory: %s: %s (want %s...%s)", xchg_status_name(mem.st),
                   mem.error, where, frame);
  if (rc == 0 && (far.st != mem.st || strcmp(far.error, mem.error) != 0))
    rc = tu_errorf(msg, MSG, "from a callback: %s; from memory: %s", far.error, mem.error);
  output_free(&mem);
  output_free(&far);
  TU_CHECK(rc == 0, "a damaged comet lz4 block past the first MiB: %s", msg);
  input_free(&in);
  rt_data_free(&d);
}

/* A cancel callback that says yes from its `after`-th question on. */
typedef struct asked {
  int n, after;
} asked;

static int cancel_after(void *ctx) {
  asked *a = ctx;
  return ++a->n >= a->after;
}

/* The cancel check is asked before the first block and then once 64 KiB
 * of blocks were read since the last question, inside one long next (a
 * megabyte of blocks makes one batch): once it says yes, next fails at
 * once with XCHG_ECANCELLED, before the block after, and every later call
 * does without asking again; before that, the output is whole. */
static void check_cancel(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, 1, msg);
  size_t one = in.bytes.size, largest = 0;
  for (int64_t b = 0; b < in.blocks; b++)
    if (in.ends[b] - (b ? in.ends[b - 1] : 0) > largest)
      largest = in.ends[b] - (b ? in.ends[b - 1] : 0);
  int64_t copies = 1;
  uint8_t *copy = malloc(one);
  if (!copy) abort();
  memcpy(copy, in.bytes.data, one);
  for (; rc == 0 && in.bytes.size < ((size_t)1 << 20); copies++)
    tu_bytes_append(&in.bytes, copy, one);
  free(copy);
  const size_t step = (size_t)64 << 10, total = in.bytes.size;
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.target_rows = copies * in.alone.rows; /* one batch of every block */
  asked never = {0, INT32_MAX}, soon = {0, 3};
  o.cancel = cancel_after;
  o.cancel_ctx = &never;
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && (out.st != XCHG_OK || out.n != 1 || never.n < (int)(total / (step + largest)) ||
                  never.n > (int)(total / step) + 2))
    rc = tu_errorf(msg, MSG, "never cancelled: %s, %lld batches, asked %d times for %zu bytes",
                   xchg_status_name(out.st), (long long)out.n, never.n, total);
  output_free(&out);
  o.cancel_ctx = &soon;
  xchg_shuffle_reader_options pooled = with_pool(&o);
  xchg_shuffle_reader *r = NULL;
  xchg_error err;
  if (rc == 0 && (xchg_shuffle_reader_open(&pooled, &r, &err) != XCHG_OK ||
                  add_sources(r, &in, FROM_MEMORY, msg) != 0))
    rc = tu_errorf(msg, MSG, "open: %s", err.message);
  struct ArrowArray a;
  xchg_shuffle_reader_metrics m = {0};
  char where[64] = "";
  for (int call = 0; rc == 0 && call < 2; call++) {
    xchg_status st = xchg_shuffle_reader_next(r, &a, &err);
    xchg_shuffle_reader_get_metrics(r, &m);
    snprintf(where, sizeof where, "cancelled before block %lld", (long long)m.blocks);
    if (st != XCHG_ECANCELLED || a.release || soon.n != 3 || !strstr(err.message, where) ||
        m.wire_bytes < (int64_t)(2 * step) || m.wire_bytes > (int64_t)(2 * (step + largest)))
      rc = tu_errorf(msg, MSG, "call %d: %s (%s), asked %d times, %lld bytes read", call,
                     xchg_status_name(st), st == XCHG_OK ? "" : err.message, soon.n,
                     (long long)m.wire_bytes);
  }
  xchg_shuffle_reader_free(r);
  TU_CHECK(rc == 0, "a cancelled reader: %s", msg);

  /* Batches of one copy each: with a pool, relays plan them ahead on its
   * threads, which ask no cancel check; the calling thread asks it once a
   * call, and the call it says yes in fails: no batch comes after it,
   * however many were built ahead. */
  asked fourth = {0, 4};
  o.cancel_ctx = &fourth;
  o.target_rows = in.alone.rows;
  pooled = with_pool(&o);
  r = NULL;
  int64_t rows = 0;
  xchg_status st = XCHG_OK;
  if (rc == 0 && (xchg_shuffle_reader_open(&pooled, &r, &err) != XCHG_OK ||
                  add_sources(r, &in, FROM_MEMORY, msg) != 0))
    rc = tu_errorf(msg, MSG, "open: %s", err.message);
  int after_yes = 0; /* batches handed out once the check said yes */
  while (rc == 0 && (st = xchg_shuffle_reader_next(r, &a, &err)) == XCHG_OK && a.release) {
    rows += a.length;
    after_yes += fourth.n >= fourth.after;
    a.release(&a);
  }
  if (rc == 0 && (st != XCHG_ECANCELLED || after_yes > 0 || rows >= (copies - 1) * in.alone.rows))
    rc = tu_errorf(msg, MSG, "%s after %lld of %lld rows, asked %d times, %d batches after a yes",
                   xchg_status_name(st), (long long)rows, (long long)(copies * in.alone.rows),
                   fourth.n, after_yes);
  xchg_shuffle_reader_free(r);
  TU_CHECK(rc == 0, "cancelled while batches are planned ahead: %s", msg);

  input_free(&in);
  rt_data_free(&d);
}

static xchg_status append_block(void *ctx, const void *data, size_t n, int64_t block,
                                int64_t blocks, xchg_error *err) {
  (void)block;
  (void)blocks;
  (void)err;
  tu_bytes_append(ctx, data, n);
  return XCHG_OK;
}

/* With a pool, the reader builds batches ahead of the caller, who asks the
 * cancel check: the call it says yes in fails, and so does every later
 * one, whatever was built ahead (dropped).  Blocks of the shuffle shape
 * (4,096 of 5 columns x 64 rows), batches of 4,096 rows, on pools of 2 and
 * 3 threads, the check saying yes at each of its first 30 questions in
 * turn (a call handing out a batch built ahead need not ask). */
static void cancel_with_pool(void) {
  shape_shuffle_config c = {1, 262144, 64, 5, SHAPE_SHUFFLE_IPC, SHAPE_SHUFFLE_NONE};
  tu_bytes blocks = {0};
  xchg_error err;
  if (!TU_OK(shape_shuffle_encode(&c, append_block, &blocks, NULL, &err), err)) return;
  int from_yes_call = 0, after_yes_call = 0, not_cancelled = 0;
  for (int p = 0; p < 2; p++)
    for (int after = 1; after <= 30; after++) {
      asked turn = {0, after};
      xchg_shuffle_reader_options o;
      xchg_shuffle_reader_options_init(&o);
      o.target_rows = 4096;
      o.read.pool = pools[p];
      o.cancel = cancel_after;
      o.cancel_ctx = &turn;
      xchg_shuffle_reader *r = NULL;
      xchg_source *src;
      if (!TU_OK(xchg_shuffle_reader_open(&o, &r, &err), err) ||
          !TU_OK(xchg_source_from_memory(blocks.data, blocks.size, NULL, NULL, &src, &err), err) ||
          !TU_OK(xchg_shuffle_reader_add_source(r, src, &err), err)) {
        xchg_shuffle_reader_free(r);
        break;
      }
      struct ArrowArray a;
      xchg_status st;
      for (;;) {
        int said_yes = turn.n >= turn.after;
        if ((st = xchg_shuffle_reader_next(r, &a, &err)) != XCHG_OK || !a.release) break;
        from_yes_call += !said_yes && turn.n >= turn.after;
        after_yes_call += said_yes;
        a.release(&a);
      }
      not_cancelled += turn.n >= turn.after && st != XCHG_ECANCELLED;
      xchg_shuffle_reader_free(r);
    }
  TU_CHECK(from_yes_call == 0 && after_yes_call == 0 && not_cancelled == 0,
           "batches from the call whose check said yes: %d, from later calls: %d; reads not "
           "cancelled: %d",
           from_yes_call, after_yes_call, not_cancelled);
  free(blocks.data);
}

/* Where each block of the shape starts, as shape_shuffle_encode writes them. */
typedef struct shape_blocks {
  tu_bytes bytes;
  size_t starts[64];
  int64_t n;
} shape_blocks;

static xchg_status append_shape_block(void *ctx, const void *data, size_t n, int64_t block,
                                      int64_t blocks, xchg_error *err) {
  shape_blocks *b = ctx;
  if (block < 64) b->starts[block] = b->bytes.size;
  b->n = blocks;
  return append_block(&b->bytes, data, n, block, blocks, err);
}

/* What a read of data ends with: its error message, or "" when it ends. */
static void read_to_error(const uint8_t *data, size_t size, xchg_pool *with, char *out, size_t n) {
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.read.pool = with;
  xchg_shuffle_reader *r = NULL;
  xchg_source *src;
  xchg_error err;
  xchg_status st = xchg_shuffle_reader_open(&o, &r, &err);
  if (st == XCHG_OK) st = xchg_source_from_memory(data, size, NULL, NULL, &src, &err);
  if (st == XCHG_OK) st = xchg_shuffle_reader_add_source(r, src, &err);
  struct ArrowArray a;
  while (st == XCHG_OK && (st = xchg_shuffle_reader_next(r, &a, &err)) == XCHG_OK && a.release)
    a.release(&a);
  snprintf(out, n, "%s", st == XCHG_OK ? "" : err.message);
  xchg_shuffle_reader_free(r);
}

/* A bad block (a field node whose length is not the batch's, found as the
 * block is placed) before the block the input is cut in, both in one
 * batch: the bad block is the error, on one thread (each block placed as
 * it is planned) and on a pool (the batch planned whole before it is
 * placed: its planned blocks are placed before the cut is reported). */
static void first_bad_block_with_pool(void) {
  shape_shuffle_config c = {1, 40 * 64, 64, 5, SHAPE_SHUFFLE_IPC, SHAPE_SHUFFLE_NONE};
  shape_blocks b = {0};
  xchg_error err;
  if (!TU_OK(shape_shuffle_encode(&c, append_shape_block, &b, NULL, &err), err)) return;
  const uint64_t node[4] = {64, 0, 64, 0}; /* c0's and c1's field nodes, little-endian */
  uint8_t *bad = NULL;
  for (size_t at = b.starts[8]; at + sizeof node <= b.starts[9] && !bad; at += 8)
    if (memcmp(b.bytes.data + at, node, sizeof node) == 0) bad = b.bytes.data + at + 16;
  if (!TU_CHECK(bad != NULL && b.n == 40, "no field nodes of 64 rows in block 8 of %lld",
                (long long)b.n)) {
    free(b.bytes.data);
    return;
  }
  bad[0] = 65;
  char want[64], alone[MSG], pooled[MSG];
  snprintf(want, sizeof want, "block 8 (source 0, byte %zu): ", b.starts[8]);
  size_t cut = b.starts[26] + 30;
  read_to_error(b.bytes.data, cut, NULL, alone, sizeof alone);
  TU_CHECK(strstr(alone, want) != NULL, "without a pool: '%s', not %s...", alone, want);
  for (int p = 0; p < 2; p++) {
    read_to_error(b.bytes.data, cut, pools[p], pooled, sizeof pooled);
    TU_CHECK(strcmp(pooled, alone) == 0, "with a pool of %d threads: '%s', without: '%s'", p + 2,
             pooled, alone);
  }
  free(b.bytes.data);
}

/* A plain IPC block whose record batch states a body past max_batch_bytes,
 * read from a source not in memory (which reads whole blocks into
 * memory): the blocks before it come out, then XCHG_ELIMIT naming it,
 * with a pool or without (the whole chunk of blocks was dropped, the
 * error named no block, and with a pool the read failed before its first
 * batch). */
static void block_over_limit_unseekable(void) {
  shape_shuffle_config c = {1, 40 * 64, 64, 5, SHAPE_SHUFFLE_IPC, SHAPE_SHUFFLE_NONE};
  shape_blocks b = {0};
  xchg_error err;
  if (!TU_OK(shape_shuffle_encode(&c, append_shape_block, &b, NULL, &err), err)) return;
  /* the record batch message's bodyLength: the 8 bytes of its metadata
   * holding the body length the reader reports */
  tu_body bodies[4];
  int64_t n = tu_map_bodies(b.bytes.data + b.starts[6], b.starts[7] - b.starts[6], bodies, 4);
  uint8_t *body_length = NULL;
  for (int64_t i = 0; i < n && !body_length; i++) {
    if (bodies[i].kind != XCHG_MESSAGE_RECORD_BATCH) continue;
    uint8_t *m = b.bytes.data + b.starts[6] + bodies[i].metadata_offset;
    for (int64_t at = 0; at + 8 <= bodies[i].metadata_bytes && !body_length; at += 8)
      if (memcmp(m + at, &(uint64_t){(uint64_t)bodies[i].length}, 8) == 0) body_length = m + at;
  }
  if (!TU_CHECK(body_length != NULL, "no body length found in block 6")) {
    free(b.bytes.data);
    return;
  }
  const uint64_t huge = (uint64_t)1 << 41;
  memcpy(body_length, &huge, 8);
  char want[64];
  snprintf(want, sizeof want, "block 6 (source 0, byte %zu): ", b.starts[6]);
  for (int p = -1; p < 2; p++) {
    xchg_shuffle_reader_options o;
    xchg_shuffle_reader_options_init(&o);
    o.target_rows = 100;
    o.read.pool = p < 0 ? NULL : pools[p];
    xchg_shuffle_reader *r = NULL;
    xchg_status st = xchg_shuffle_reader_open(&o, &r, &err);
    if (st == XCHG_OK)
      st = xchg_shuffle_reader_add_source(r, tu_unseekable_source(b.bytes.data, b.bytes.size, 7),
                                          &err);
    int64_t rows = 0;
    struct ArrowArray a;
    while (st == XCHG_OK && (st = xchg_shuffle_reader_next(r, &a, &err)) == XCHG_OK && a.release) {
      rows += a.length;
      a.release(&a);
    }
    TU_CHECK(st == XCHG_ELIMIT && rows >= 4 * 64 && strstr(err.message, want) &&
                 strstr(err.message, "max_batch_bytes"),
             "%s: %lld rows, then %s: %s (want %s...)", p < 0 ? "no pool" : "a pool",
             (long long)rows, xchg_status_name(st), st != XCHG_OK ? err.message : "", want);
    xchg_shuffle_reader_free(r);
  }
  free(b.bytes.data);
}

/* A Comet block whose IPC stream decompresses to more than max_batch_bytes:
 * XCHG_ELIMIT naming the block. */
static void check_decompressed_limit(void) {
  input in;
  rt_data d = {0};
  char msg[MSG] = "";
  int rc = primitive_input(&in, &d, XCHG_BLOCK_NONE, 1, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.read.max_batch_bytes = 600; /* below every block's stream, above its compressed bytes */
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && (out.st != XCHG_ELIMIT ||
                  !strstr(out.error, "decompresses to more than max_batch_bytes (600)") ||
                  !strstr(out.error, "block 0 (source 0, byte 0)")))
    rc = tu_errorf(msg, MSG, "%s: %s", xchg_status_name(out.st), out.error);
  output_free(&out);
  TU_CHECK(rc == 0, "a comet block decompressing past max_batch_bytes: %s", msg);
  input_free(&in);
  rt_data_free(&d);
}

/* Four blocks of two int64 columns of 64 values, their bodies LZ4_FRAME,
 * fault f done to them. */
static int two_lz4_blocks(input *in, const fault *f, char *msg) {
  int64_t values[64];
  for (int i = 0; i < 64; i++) values[i] = i * 7919;
  two_columns t;
  two_columns_init(&t, "l", values, 64);
  xchg_ipc_write_options wo;
  xchg_ipc_write_options_init(&wo);
  wo.codec = XCHG_BLOCK_LZ4_FRAME;
  return add_blocks(in, &t.root, &t.batch, 4, &wo, -1, f, msg);
}

/* Blocks of two int64 columns, LZ4_FRAME bodies, whose batch decodes to
 * 1,024 bytes, 512 a column: with max_batch_bytes 768 each column fits,
 * the two do not: XCHG_ELIMIT naming the second, the bound being on the
 * batch's sum. */
static void check_batch_limit_sum(void) {
  input in = {0};
  char msg[MSG] = "";
  fault none = {-1, 0, 0, 0, 0};
  int rc = two_lz4_blocks(&in, &none, msg);
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.read.max_batch_bytes = 768;
  output out = {0};
  if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
  if (rc == 0 && (out.st != XCHG_ELIMIT || out.n != 0 ||
                  !strstr(out.error, "block 0 (source 0, byte 0): message 1 at byte ") ||
                  !strstr(out.error,
                          "field 'c1', buffer 3: uncompressed length 512 after 512 "
                          "bytes of the batch's other buffers exceeds max_batch_bytes")))
    rc = tu_errorf(msg, MSG, "%s after %lld batches: %s", xchg_status_name(out.st),
                   (long long)out.n, out.error);
  output_free(&out);
  TU_CHECK(rc == 0, "two columns decoding past max_batch_bytes together: %s", msg);
  input_free(&in);
}

/* A Buffer of an LZ4_FRAME body whose length a damaged byte made huge
 * (2^62): XCHG_EFORMAT naming it.  The batch's estimated bytes, counted
 * before the buffer is placed, must not take that length as it is: four
 * times it (the decompression cost) overflowed, which UBSan stops at. */
static void check_huge_compressed_length(void) {
  input in = {0};
  char msg[MSG] = "";
  fault f = {2, BATCH_BUFFERS, 1, 0, (uint64_t)1 << 62};
  int rc = two_lz4_blocks(&in, &f, msg);
  if (rc == 0)
    rc = expect_error(&in, XCHG_EFORMAT,
                      "field 'c0', buffer 1: range [0, +4611686018427387904) lies outside", NULL,
                      NULL, msg);
  TU_CHECK(rc == 0, "an LZ4_FRAME buffer of length 2^62: %s", msg);
  input_free(&in);
}

/* A compressed buffer whose declared uncompressed length is negative or
 * past max_buffer_bytes: XCHG_EFORMAT or XCHG_ELIMIT naming it, checked
 * before any memory of that size is asked for (it was taken first, so
 * the error was "out of memory for 1099511627776 bytes"). */
static void check_declared_lengths(void) {
  static const struct {
    int64_t declared;
    xchg_status st;
    const char *needle;
  } bad[] = {
      {-2, XCHG_EFORMAT, "field 'c0', buffer 1: negative uncompressed length -2"},
      {(int64_t)1 << 40, XCHG_ELIMIT,
       "field 'c0', buffer 1: uncompressed length 1099511627776 exceeds max_buffer_bytes"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    input in = {0};
    char msg[MSG] = "";
    fault f = {2, DECLARED_LENGTH, 1, (uint64_t)bad[i].declared, 0};
    int rc = two_lz4_blocks(&in, &f, msg);
    if (rc == 0) rc = expect_error(&in, bad[i].st, bad[i].needle, NULL, NULL, msg);
    TU_CHECK(rc == 0, "an LZ4_FRAME buffer declaring %lld bytes: %s", (long long)bad[i].declared,
             msg);
    input_free(&in);
  }
}

/* Every byte of a block's IPC stream damaged in turn (three ways): an
 * error names the block, and a field only when it is about one: errors of
 * the batch as a whole or of the schema's list of fields named an empty
 * one ("field '': the schema uses 4 buffers, the message has ...",
 * "field '': invalid child 0"). */
static void check_damaged_bytes(void) {
  int64_t values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  two_columns t;
  two_columns_init(&t, "l", values, 8);
  xchg_buf *stream;
  char msg[MSG] = "";
  int rc = rt_write(&t.root, &t.batch, 1, NULL, &stream, msg, MSG);
  static const uint8_t flips[] = {0x01, 0x80, 0xff};
  int failed = 0, unnamed = 0, blank = 0;
  for (size_t at = 0; rc == 0 && at < xchg_buf_size(stream); at++) {
    for (int f = 0; f < 3 && rc == 0; f++) {
      input in = {.bad = 1};
      xchg_buf_mutable_data(stream)[at] ^= flips[f];
      rc = add_block(&in, xchg_buf_data(stream), xchg_buf_size(stream), -1, 2, msg);
      xchg_buf_mutable_data(stream)[at] ^= flips[f];
      xchg_shuffle_reader_options o;
      xchg_shuffle_reader_options_init(&o);
      o.framing = XCHG_SHUFFLE_FRAMING_IPC;
      output out;
      if (rc == 0) rc = read_all(&in, &o, FROM_MEMORY, &out, msg);
      if (rc == 0 && out.st != XCHG_OK) {
        failed++;
        if (strncmp(out.error, "block ", 6) != 0 && unnamed++ == 0)
          TU_CHECK(0, "damaged byte %zu: the block not named: %s", at, out.error);
        if (strstr(out.error, "field ''") && blank++ == 0)
          TU_CHECK(0, "damaged byte %zu: an empty field named: %s", at, out.error);
      }
      if (rc == 0) output_free(&out);
      input_free(&in);
    }
  }
  if (stream) xchg_buf_unref(stream);
  TU_CHECK(rc == 0 && failed > 0 && unnamed == 0 && blank == 0,
           "%d damaged blocks failed, %d without the block named, %d naming field '': %s", failed,
           unnamed, blank, msg);
}

/* Misuse: XCHG_EINVAL. */
static void check_options(void) {
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  /* the defaults shuffle.h states: a read-ahead of a few coalesced batches
   * of 50 columns, not the IPC reader's 8 MiB */
  TU_CHECK(o.framing == XCHG_SHUFFLE_FRAMING_AUTO && o.target_rows == 8192 &&
               o.target_bytes == (int64_t)64 << 20 && o.read.readahead_bytes == (int64_t)32 << 20,
           "defaults: framing %d, target_rows %lld, target_bytes %lld, readahead_bytes %lld",
           (int)o.framing, (long long)o.target_rows, (long long)o.target_bytes,
           (long long)o.read.readahead_bytes);
  xchg_shuffle_reader *r;
  xchg_error err;
  char msg[MSG] = "";
  int rc = 0;
  o.read.readahead_bytes = 0;
  if (xchg_shuffle_reader_open(&o, &r, &err) != XCHG_EINVAL ||
      !strstr(err.message, "readahead_bytes"))
    rc = tu_errorf(msg, MSG, "readahead_bytes 0 was taken");
  TU_CHECK(rc == 0, "readahead_bytes must be positive: %s", msg);
  xchg_shuffle_reader_options_init(&o);
  rc = xchg_shuffle_reader_open(&o, &r, &err) == XCHG_OK
           ? 0
           : tu_errorf(msg, MSG, "open: %s", err.message);
  struct ArrowArray a;
  if (rc == 0 && xchg_shuffle_reader_next(r, &a, &err) != XCHG_OK)
    rc = tu_errorf(msg, MSG, "next: %s", err.message);
  if (rc == 0 && xchg_shuffle_reader_add_source(r, tu_memory_source("x", 1), &err) != XCHG_EINVAL)
    rc = tu_errorf(msg, MSG, "without the incremental option, a source added after next was taken");
  if (rc == 0 && xchg_shuffle_reader_end_input(NULL, &err) != XCHG_EINVAL)
    rc = tu_errorf(msg, MSG, "end_input(NULL)");
  xchg_shuffle_reader_free(r);
  TU_CHECK(rc == 0, "sources come before the first read without the incremental option: %s", msg);
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Without a pool every batch is placed as its blocks are read: that time
 * is the batch's decoding, and the metrics count it (decompress_ns for
 * IPC body compression, copy_ns for plain blocks), most of the time
 * spent in xchg_shuffle_reader_next reading from memory.  Before, only
 * the batch's last step was timed: 0.2 ms of 277 ms decompressing. */
static void decode_time(void) {
  static const xchg_block_codec codecs[] = {XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_NONE};
  for (int c = 0; c < 2; c++) {
    input in;
    rt_data d = {0};
    char msg[MSG] = "";
    int rc = primitive_input(&in, &d, codecs[c], -1, msg);
    tu_bytes many = {0};
    for (int i = 0; rc == 0 && i < 300; i++) tu_bytes_append(&many, in.bytes.data, in.bytes.size);
    xchg_shuffle_reader *r = NULL;
    xchg_source *src = NULL;
    xchg_error err;
    if (rc == 0 &&
        (xchg_shuffle_reader_open(NULL, &r, &err) != XCHG_OK ||
         xchg_source_from_memory(many.data, many.size, NULL, NULL, &src, &err) != XCHG_OK ||
         xchg_shuffle_reader_add_source(r, src, &err) != XCHG_OK))
      rc = tu_errorf(msg, MSG, "open: %s", err.message);
    int64_t spent = 0;
    for (;;) {
      struct ArrowArray a;
      int64_t t0 = now_ns();
      xchg_status st = rc == 0 ? xchg_shuffle_reader_next(r, &a, &err) : XCHG_EINVAL;
      spent += now_ns() - t0;
      if (st != XCHG_OK) rc = rc ? rc : tu_errorf(msg, MSG, "next: %s", err.message);
      if (rc != 0 || !a.release) break;
      a.release(&a);
    }
    xchg_shuffle_reader_metrics m;
    xchg_shuffle_reader_get_metrics(r, &m);
    int64_t timed = codecs[c] == XCHG_BLOCK_NONE ? m.copy_ns : m.decompress_ns;
    if (rc == 0 && timed < spent / 2)
      rc = tu_errorf(msg, MSG, "%s: %lld ns of %lld in next counted (decompress %lld, copy %lld)",
                     codecs[c] == XCHG_BLOCK_NONE ? "copy_ns" : "decompress_ns", (long long)timed,
                     (long long)spent, (long long)m.decompress_ns, (long long)m.copy_ns);
    xchg_shuffle_reader_free(r);
    free(many.data);
    input_free(&in);
    rt_data_free(&d);
    TU_CHECK(rc == 0, "decoding time without a pool: %s", msg);
  }
}

/* A NULL reader or out is XCHG_EINVAL naming it, not a crash, and not the
 * reader's failure: its next call with real arguments reads as usual. */
static void null_arguments(void) {
  xchg_shuffle_reader *r = NULL;
  xchg_error err;
  char msg[MSG] = "";
  int rc = 0;
  struct ArrowArray a;
  struct ArrowSchema s;
  xchg_shuffle_reader_metrics m;
  if (xchg_shuffle_reader_open(NULL, NULL, &err) != XCHG_EINVAL ||
      !strstr(err.message, "out is NULL"))
    rc = tu_errorf(msg, MSG, "open(NULL out): %s", err.message);
  if (rc == 0 && (xchg_shuffle_reader_next(NULL, &a, &err) != XCHG_EINVAL || a.release ||
                  strcmp(err.message, "xchg_shuffle_reader_next: the reader is NULL") != 0))
    rc = tu_errorf(msg, MSG, "next(NULL reader): %s", err.message);
  if (rc == 0 && (xchg_shuffle_reader_schema(NULL, &s, &err) != XCHG_EINVAL || s.release ||
                  strcmp(err.message, "xchg_shuffle_reader_schema: the reader is NULL") != 0))
    rc = tu_errorf(msg, MSG, "schema(NULL reader): %s", err.message);
  memset(&m, 0xff, sizeof m);
  xchg_shuffle_reader_get_metrics(NULL, &m);
  if (rc == 0 && (m.blocks != 0 || m.batches != 0 || m.wait_ns != 0))
    rc = tu_errorf(msg, MSG, "metrics of a NULL reader are not 0");
  if (rc == 0 && xchg_shuffle_reader_open(NULL, &r, &err) != XCHG_OK)
    rc = tu_errorf(msg, MSG, "open: %s", err.message);
  xchg_shuffle_reader_get_metrics(r, NULL);
  if (rc == 0 && (xchg_shuffle_reader_next(r, NULL, &err) != XCHG_EINVAL ||
                  strcmp(err.message, "xchg_shuffle_reader_next: out is NULL") != 0))
    rc = tu_errorf(msg, MSG, "next(NULL out): %s", err.message);
  if (rc == 0 && (xchg_shuffle_reader_schema(r, NULL, &err) != XCHG_EINVAL ||
                  strcmp(err.message, "xchg_shuffle_reader_schema: out is NULL") != 0))
    rc = tu_errorf(msg, MSG, "schema(NULL out): %s", err.message);
  if (rc == 0 && (xchg_shuffle_reader_next(r, &a, &err) != XCHG_OK || a.release))
    rc = tu_errorf(msg, MSG, "next after next(NULL out), of an empty input: %s", err.message);
  xchg_shuffle_reader_free(r);
  TU_CHECK(rc == 0, "NULL arguments: %s", msg);
  /* An input of no block has no schema, but is whole: next ends it
   * without error after schema said so, as it does alone. */
  TU_CHECK(xchg_shuffle_reader_open(NULL, &r, &err) == XCHG_OK, "open: %s", err.message);
  xchg_status st = r ? xchg_shuffle_reader_schema(r, &s, &err) : XCHG_EINVAL;
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, "no schema: the input holds no block"),
           "schema of no block: %s", err.message);
  st = r ? xchg_shuffle_reader_next(r, &a, &err) : XCHG_EINVAL;
  TU_CHECK(st == XCHG_OK && !a.release, "next after schema of no block: %s", err.message);
  xchg_shuffle_reader_free(r);
}

/* Each case runs twice: decoded on the calling thread, then read ahead on a
 * pool (the output must be the same): of 2 threads for some cases, which
 * takes paths of its own (Comet blocks with a codec planned and built by
 * the caller, small batches built as planned), of 3 for the others, more
 * than the machine may have cores; chosen by the case's name, so that a
 * case run alone runs as in the whole suite. */
static void on_both(void (*check)(void), const char *name) {
  pool = NULL;
  check();
  pool = pools[strlen(name) % 2];
  check();
  pool = pools[1]; /* the other cases' */
}

#define BOTH(name) \
  static void name(void) { on_both(check_##name, #name); }
BOTH(gold_even)
BOTH(gold_odd)
BOTH(sample)
BOTH(pass_through)
BOTH(dictionary_cut)
BOTH(offsets_from_one)
BOTH(truncated)
BOTH(buffer_ranges)
BOTH(comet_damage)
BOTH(comet_framing)
BOTH(comet_overrun)
BOTH(decompressed_limit)
BOTH(far_damage)
BOTH(offsets_overflow)
BOTH(batch_limit_sum)
BOTH(huge_compressed_length)
BOTH(declared_lengths)
BOTH(damaged_bytes)
BOTH(cancel)
BOTH(other_schema)
BOTH(given_schema_framings)
BOTH(ipc_file)
BOTH(incremental)
BOTH(bounded_reading)
BOTH(bitmap_padding)

int main(int argc, char **argv) {
  xchg_error err;
  if (!TU_OK(xchg_pool_create(2, &pools[0], &err), err) ||
      !TU_OK(xchg_pool_create(3, &pools[1], &err), err))
    return 1;
  pool = pools[1];
  static const tu_case cases[] = {
      {"gold_even", gold_even},
      {"gold_odd", gold_odd},
      {"sample", sample},
      {"pass_through", pass_through},
      {"dictionary_cut", dictionary_cut},
      {"dictionary_missing", check_dictionary_missing},
      {"offsets_from_one", offsets_from_one},
      {"truncated", truncated},
      {"buffer_ranges", buffer_ranges},
      {"comet_damage", comet_damage},
      {"comet_framing", comet_framing},
      {"comet_overrun", comet_overrun},
      {"decompressed_limit", decompressed_limit},
      {"far_damage", far_damage},
      {"pooled_error", check_pooled_error},
      {"bitmap_padding", bitmap_padding},
      {"offsets_overflow", offsets_overflow},
      {"batch_limit_sum", batch_limit_sum},
      {"huge_compressed_length", huge_compressed_length},
      {"declared_lengths", declared_lengths},
      {"damaged_bytes", damaged_bytes},
      {"cancel", cancel},
      {"cancel_with_pool", cancel_with_pool},
      {"first_bad_block_with_pool", first_bad_block_with_pool},
      {"block_over_limit_unseekable", block_over_limit_unseekable},
      {"other_schema", other_schema},
      {"given_schema_framings", given_schema_framings},
      {"ipc_file", ipc_file},
      {"dictionary_ids", check_dictionary_ids},
      {"readahead_bound", check_readahead_bound},
      {"reservation_bound", check_reservation_bound},
      {"incremental", incremental},
      {"bounded_reading", bounded_reading},
      {"options", check_options},
      {"null_arguments", null_arguments},
      {"decode_time", decode_time},
  };
  int rc = TU_MAIN(argc, argv, "shuffle", cases);
  xchg_pool_free(pools[0]);
  xchg_pool_free(pools[1]);
  return rc;
}
