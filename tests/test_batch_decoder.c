/* test_batch_decoder.c — xchg_batch_decoder (xchg/ipc.h) and
 * xchg_source_from_read_at (xchg/io.h): payloads cut from IPC streams the
 * writer made (tests/support/cache_data, whose values follow from their
 * position, so that every value is checked without a copy to compare
 * with), decoded with a schema given once, projected, from memory and
 * through positional reads that count what they copy, one at a time and
 * many at once on a pool; and bad payloads, which must fail with the
 * batch, field and buffer named, never crash. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "support/cache_data.h"
#include "support/sources.h"
#include "support/array_equal.h"
#include "support/array_valid.h"
#include "support/ipc_bodies.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/ipc.h"

#define N_BATCHES 3
static const int64_t ROWS[N_BATCHES] = {1000, 700, 1};
static const int64_t ALL[CD_COLUMNS] = {0, 1, 2};

/* A stream cut into its messages: message i is [starts[i], starts[i+1]);
 * message 0 is the schema, the last one ends where the end-of-stream
 * marker starts. */
typedef struct split {
  xchg_buf *stream;
  int64_t n;
  int64_t starts[32];
  xchg_message_kind kinds[32];
} split;

/* Cuts s->stream (set) into its messages. */
static void split_messages(split *s) {
  tu_body bodies[32];
  s->n = tu_map_bodies(xchg_buf_data(s->stream), xchg_buf_size(s->stream), bodies, 31);
  for (int64_t i = 0; i < s->n; i++) {
    s->kinds[i] = bodies[i].kind;
    s->starts[i + 1] = bodies[i].offset + bodies[i].length;
  }
}

static void split_stream(xchg_block_codec codec, split *s) {
  memset(s, 0, sizeof *s);
  TU_CHECK(cd_make_stream(0, ROWS, N_BATCHES, 0, codec, &s->stream) == 0);
  split_messages(s);
}

/* Payload of batch b as an engine stores it: the dictionary messages
 * before it, then its record batch message. */
static tu_bytes batch_payload(const split *s, int64_t b) {
  tu_bytes out = {0};
  const uint8_t *data = xchg_buf_data(s->stream);
  for (int64_t i = 1, seen = 0; i < s->n && seen <= b; i++) {
    int is_batch = s->kinds[i] == XCHG_MESSAGE_RECORD_BATCH;
    if (!is_batch || seen == b)
      tu_bytes_append(&out, data + s->starts[i], (size_t)(s->starts[i + 1] - s->starts[i]));
    seen += is_batch;
  }
  return out;
}

static xchg_batch_decoder *open_with(const split *s, const int64_t *cols, int64_t n_cols,
                                     xchg_pool *pool, int64_t task_bytes) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = pool;
  if (task_bytes > 0) opts.task_bytes = task_bytes;
  xchg_batch_decoder *dec = NULL;
  xchg_error err;
  TU_OK(xchg_batch_decoder_open(xchg_buf_data(s->stream), (size_t)s->starts[1], cols, n_cols, &opts,
                                &dec, &err),
        err);
  return dec;
}

static xchg_batch_decoder *open_decoder(const split *s, const int64_t *cols, int64_t n_cols,
                                        xchg_pool *pool) {
  return open_with(s, cols, n_cols, pool, 0);
}

/* The stream of codec split into payloads, and a decoder of all its
 * columns (NULL after a failed check); split_close frees both. */
static xchg_batch_decoder *split_and_open(xchg_block_codec codec, split *s) {
  split_stream(codec, s);
  return open_decoder(s, NULL, 0, NULL);
}

static void split_close(split *s, xchg_batch_decoder *dec) {
  xchg_batch_decoder_free(dec);
  xchg_buf_unref(s->stream);
}

/* ---- batches of no rows ------------------------------------------------------ */

/* Streams of no batch: the schema and the marker, with the dictionary
 * between them or not, decoded by decoders of every column, of the
 * dictionary-encoded one alone and of none, one at a time and many at once
 * on a pool (the stream among payloads of rows). */
static void test_streams_of_no_batch(void) {
  static const int64_t rows[1] = {5};
  split s;
  memset(&s, 0, sizeof s);
  TU_CHECK(cd_make_stream(0, rows, 1, 0, XCHG_BLOCK_ZSTD, &s.stream) == 0);
  split_messages(&s);
  const uint8_t *data = xchg_buf_data(s.stream);
  tu_bytes streams[2] = {{0}, {0}};
  for (int k = 0; k < 2; k++) {
    tu_bytes_append(&streams[k], data, (size_t)s.starts[k ? 2 : 1]);
    tu_bytes_append(&streams[k], "\xff\xff\xff\xff\0\0\0\0", 8);
  }
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(2, &pool, NULL) == XCHG_OK, "cannot create a pool");
  static const int64_t dict_only[1] = {2};
  for (int sel = 0; sel < 3; sel++) {
    int64_t n_cols = sel == 0 ? CD_COLUMNS : sel == 1 ? 1 : 0;
    xchg_batch_decoder *dec =
        open_with(&s, sel == 0 ? NULL : dict_only, sel == 0 ? 0 : n_cols, pool, 1);
    tu_bytes one = batch_payload(&s, 0);
    for (int k = 0; k < 2 && dec; k++) {
      xchg_source *srcs[3] = {tu_memory_source(one.data, one.size),
                              tu_memory_source(streams[k].data, streams[k].size),
                              tu_memory_source(one.data, one.size)};
      struct ArrowArray outs[3];
      xchg_error err;
      xchg_status st = xchg_batch_decoder_decode(dec, srcs[1], 4, &outs[1], &err);
      TU_CHECK(st == XCHG_OK, "a stream of no batch (%d, columns %d): %s", k, sel, err.message);
      if (st == XCHG_OK) {
        struct ArrowSchema schema;
        char msg[256] = "";
        TU_OK(xchg_batch_decoder_schema(dec, &schema, &err), err);
        TU_CHECK(array_valid(&schema, &outs[1], msg, sizeof msg) == 0,
                 "a stream of no batch (%d, columns %d): %s", k, sel, msg);
        schema.release(&schema);
        TU_CHECK(outs[1].length == 0 && outs[1].n_children == n_cols &&
                     (n_cols == 0 || (outs[1].children[0]->length == 0 &&
                                      (sel == 0 || outs[1].children[0]->dictionary != NULL))),
                 "a stream of no batch (%d, columns %d): %lld rows, %lld columns", k, sel,
                 (long long)outs[1].length, (long long)outs[1].n_children);
        outs[1].release(&outs[1]);
      }
      st = xchg_batch_decoder_decode_many(dec, srcs, 3, 0, outs, NULL, &err);
      TU_CHECK(st == XCHG_OK, "many, a stream of no batch (%d, columns %d): %s", k, sel,
               err.message);
      for (int i = 0; i < 3 && st == XCHG_OK; i++) {
        TU_CHECK(outs[i].length == (i == 1 ? 0 : 5) && outs[i].n_children == n_cols,
                 "many, payload %d (%d, columns %d): %lld rows", i, k, sel,
                 (long long)outs[i].length);
        outs[i].release(&outs[i]);
      }
      for (int i = 0; i < 3; i++) xchg_source_free(srcs[i]);
    }
    free(one.data);
    xchg_batch_decoder_free(dec);
  }
  xchg_pool_free(pool);
  for (int k = 0; k < 2; k++) free(streams[k].data);
  xchg_buf_unref(s.stream);
}

/* A batch of zero rows decodes to an array of zero rows, its columns all
 * there, alone, with the marker after it, and as a whole stream; so does a
 * whole stream of no batch (an empty part of a relation), its dictionary
 * or not, all columns, one or none, one payload or many on a pool. */
static void test_empty_batches(void) {
  static const int64_t rows[] = {0, 5, 0};
  split s;
  memset(&s, 0, sizeof s);
  TU_CHECK(cd_make_stream(0, rows, 3, 0, XCHG_BLOCK_LZ4_FRAME, &s.stream) == 0);
  split_messages(&s);
  xchg_batch_decoder *dec = open_decoder(&s, NULL, 0, NULL);
  for (int64_t b = 0; b < 3 && dec; b++) {
    tu_bytes p = batch_payload(&s, b);
    tu_bytes stream = {0};
    tu_bytes_append(&stream, xchg_buf_data(s.stream), (size_t)s.starts[1]);
    tu_bytes_append(&stream, p.data, p.size);
    tu_bytes_append(&p, "\xff\xff\xff\xff\0\0\0\0", 8);
    tu_bytes_append(&stream, "\xff\xff\xff\xff\0\0\0\0", 8);
    const tu_bytes *forms[] = {&p, &stream};
    for (int f = 0; f < 3; f++) {
      const tu_bytes *form = forms[f == 2];
      size_t size = f == 0 ? form->size - 8 : form->size;
      xchg_source *src = tu_memory_source(form->data, size);
      struct ArrowArray a;
      xchg_error err;
      xchg_status st = xchg_batch_decoder_decode(dec, src, b, &a, &err);
      TU_CHECK(st == XCHG_OK, "batch %lld (form %d): %s", (long long)b, f, err.message);
      if (st == XCHG_OK) {
        TU_CHECK(a.length == rows[b] && a.n_children == CD_COLUMNS,
                 "batch %lld (form %d): %lld rows, %lld columns", (long long)b, f,
                 (long long)a.length, (long long)a.n_children);
        char msg[256];
        TU_CHECK(cd_check_batch(&a, ALL, CD_COLUMNS, 0, b, rows[b], msg, sizeof msg) == 0,
                 "batch %lld (form %d): %s", (long long)b, f, msg);
        a.release(&a);
      }
      xchg_source_free(src);
    }
    free(p.data);
    free(stream.data);
  }
  split_close(&s, dec);
  test_streams_of_no_batch();
}

/* ---- positional reads that count ------------------------------------------ */

typedef struct counted {
  const uint8_t *data;
  atomic_llong bytes; /* copied by read_at */
  int64_t fail_at;    /* a read covering this byte fails (-1: none) */
} counted;

static xchg_status counted_read_at(void *ctx, int64_t offset, void *dst, size_t n,
                                   xchg_error *err) {
  counted *c = ctx;
  if (c->fail_at >= 0 && offset <= c->fail_at && c->fail_at < offset + (int64_t)n)
    return xchg_errorf(err, XCHG_EIO, "read of byte %lld refused", (long long)c->fail_at);
  memcpy(dst, c->data + offset, n);
  atomic_fetch_add(&c->bytes, (long long)n);
  return XCHG_OK;
}

static xchg_source *counted_source(counted *c, const tu_bytes *p) {
  c->data = p->data;
  atomic_init(&c->bytes, 0);
  c->fail_at = -1;
  xchg_source *src;
  xchg_error err;
  TU_OK(xchg_source_from_read_at(p->size, counted_read_at, NULL, c, &src, &err), err);
  return src;
}

static void check_batch(const struct ArrowArray *a, const int64_t *cols, int64_t n_cols, int64_t b,
                        const char *what) {
  char msg[512];
  TU_CHECK(cd_check_batch(a, cols, n_cols, 0, b, ROWS[b], msg, sizeof msg) == 0,
           "%s, batch %lld: %s", what, (long long)b, msg);
}

/* ---- cases ------------------------------------------------------------------ */

static void test_batches(xchg_block_codec codec) {
  split s;
  split_stream(codec, &s);
  static const int64_t narrow[] = {1}, dict_only[] = {2};
  const int64_t *sets[] = {ALL, narrow, dict_only};
  const int64_t set_sizes[] = {CD_COLUMNS, 1, 1};
  for (int k = 0; k < 3; k++) {
    xchg_batch_decoder *dec = open_decoder(&s, sets[k], set_sizes[k], NULL);
    for (int64_t b = 0; dec && b < N_BATCHES; b++) {
      tu_bytes p = batch_payload(&s, b);
      xchg_source *mem = tu_memory_source(p.data, p.size);
      counted c;
      xchg_source *heap = counted_source(&c, &p);
      xchg_source *srcs[2] = {mem, heap};
      for (int i = 0; i < 2; i++) {
        struct ArrowArray a;
        xchg_error err;
        TU_OK(xchg_batch_decoder_decode(dec, srcs[i], 40 + b, &a, &err), err);
        if (!a.release) continue;
        check_batch(&a, sets[k], set_sizes[k], b, i ? "read_at" : "memory");
        /* Stored as they are, in memory: the values are the payload's own. */
        const uint8_t *values = a.children[0]->buffers[1];
        int inside = values >= p.data && values < p.data + p.size;
        if (codec == XCHG_BLOCK_NONE && sets[k][0] != 2)
          TU_CHECK(inside == !i, "batch %lld, %s: values %s the payload", (long long)b,
                   i ? "read_at" : "memory", inside ? "inside" : "outside");
        a.release(&a);
      }
      TU_CHECK(atomic_load(&c.bytes) <= (long long)p.size, "read %lld of %zu bytes",
               (long long)atomic_load(&c.bytes), p.size);
      xchg_source_free(mem);
      xchg_source_free(heap);
      free(p.data);
    }
    xchg_batch_decoder_free(dec);
  }
  xchg_buf_unref(s.stream);
}

/* Column k (int64, no nulls) alone: the body bytes read are its values,
 * 8 per row, and nothing else; with no column, none at all. */
static void test_copy_discipline(void) {
  split s;
  split_stream(XCHG_BLOCK_NONE, &s);
  static const int64_t k_only[] = {0};
  for (int none = 0; none < 2; none++) {
    xchg_batch_decoder *dec = open_decoder(&s, k_only, none ? 0 : 1, NULL);
    for (int64_t b = 0; dec && b < N_BATCHES; b++) {
      tu_bytes p = batch_payload(&s, b);
      counted c;
      xchg_source *src = counted_source(&c, &p);
      struct ArrowArray a;
      int64_t metadata = 0;
      xchg_error err;
      TU_OK(xchg_batch_decoder_decode_many(dec, &src, 1, b, &a, &metadata, &err), err);
      long long body = atomic_load(&c.bytes) - metadata;
      TU_CHECK(metadata > 0 && metadata < 2048, "metadata %lld bytes", (long long)metadata);
      TU_CHECK(body == (none ? 0 : 8 * ROWS[b]), "batch %lld: %lld body bytes read, %s",
               (long long)b, body, none ? "none selected" : "8 per row wanted");
      if (a.release) {
        TU_CHECK(a.length == ROWS[b] && a.n_children == (none ? 0 : 1), "rows %lld, children %lld",
                 (long long)a.length, (long long)a.n_children);
        if (!none) check_batch(&a, k_only, 1, b, "k only");
        a.release(&a);
      }
      xchg_source_free(src);
      free(p.data);
    }
    xchg_batch_decoder_free(dec);
  }
  xchg_buf_unref(s.stream);
}

/* A whole stream as one payload: its batches come out as one array equal,
 * row for row, to the batches decoded one by one. */
static void test_stream_payload(xchg_block_codec codec) {
  split s;
  xchg_batch_decoder *dec = split_and_open(codec, &s);
  if (!dec) return;
  xchg_source *src;
  struct ArrowArray whole;
  struct ArrowSchema schema;
  xchg_error err;
  TU_OK(xchg_source_from_buf(s.stream, &src, &err), err);
  TU_OK(xchg_batch_decoder_schema(dec, &schema, &err), err);
  TU_OK(xchg_batch_decoder_decode(dec, src, 0, &whole, &err), err);
  int64_t at = 0;
  for (int64_t b = 0; whole.release && b < N_BATCHES; b++) {
    tu_bytes p = batch_payload(&s, b);
    xchg_source *one = tu_memory_source(p.data, p.size);
    struct ArrowArray a;
    TU_OK(xchg_batch_decoder_decode(dec, one, b, &a, &err), err);
    char msg[512];
    TU_CHECK(
        !a.release || array_range_equal(&schema, &whole, at, &a, 0, ROWS[b], msg, sizeof msg) == 0,
        "stream rows of batch %lld: %s", (long long)b, msg);
    at += ROWS[b];
    if (a.release) a.release(&a);
    xchg_source_free(one);
    free(p.data);
  }
  TU_CHECK(whole.length == at, "stream payload has %lld rows, %lld written",
           (long long)whole.length, (long long)at);
  /* The stream's messages without its schema and end marker: the per-batch
   * form holding every batch, which comes out concatenated as well. */
  const uint8_t *data = xchg_buf_data(s.stream);
  xchg_source *messages =
      tu_memory_source(data + s.starts[1], (size_t)(s.starts[s.n] - s.starts[1]));
  struct ArrowArray joined;
  TU_OK(xchg_batch_decoder_decode(dec, messages, 0, &joined, &err), err);
  char msg[512];
  TU_CHECK(!joined.release || !whole.release ||
               (joined.length == at &&
                array_range_equal(&schema, &whole, 0, &joined, 0, at, msg, sizeof msg) == 0),
           "the batches' messages as one payload: %lld rows, %s", (long long)joined.length, msg);
  if (joined.release) joined.release(&joined);
  xchg_source_free(messages);
  if (whole.release) whole.release(&whole);
  /* Projected: the payload's schema (all columns) is still the decoder's. */
  static const int64_t narrow[] = {1};
  xchg_batch_decoder *projected = open_decoder(&s, narrow, 1, NULL);
  TU_OK(projected ? xchg_batch_decoder_decode(projected, src, 0, &whole, &err) : XCHG_EINVAL, err);
  if (whole.release) {
    TU_CHECK(whole.length == at && whole.n_children == 1,
             "projected stream: %lld rows, %lld columns", (long long)whole.length,
             (long long)whole.n_children);
    whole.release(&whole);
  }
  xchg_batch_decoder_free(projected);
  schema.release(&schema);
  xchg_source_free(src);
  split_close(&s, dec);
}

/* Many payloads at once on a pool: fewer than its threads, and more; with
 * a task size that runs them on the caller (the default: they are small)
 * and one that hands out every payload; sources read by copying among
 * them (decoded whole on the pool), or all in memory (planned on the
 * caller, finished on the pool). */
static void test_many(int64_t task_bytes, int all_memory) {
  split s;
  split_stream(XCHG_BLOCK_LZ4_FRAME, &s);
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(4, &pool, NULL) == XCHG_OK, "cannot create a pool");
  xchg_batch_decoder *dec = open_with(&s, NULL, 0, pool, task_bytes);
  enum { N = 24 };
  tu_bytes p[N];
  counted c[N];
  xchg_source *srcs[N];
  struct ArrowArray outs[N];
  for (int i = 0; i < N; i++) {
    p[i] = batch_payload(&s, i % N_BATCHES);
    srcs[i] = i % 2 && !all_memory ? counted_source(&c[i], &p[i])
                                   : tu_memory_source(p[i].data, p[i].size);
  }
  const int64_t counts[] = {2, N};
  for (int k = 0; dec && k < 2; k++) {
    xchg_error err;
    TU_OK(xchg_batch_decoder_decode_many(dec, srcs, counts[k], 0, outs, NULL, &err), err);
    for (int i = 0; i < counts[k]; i++) {
      TU_CHECK(outs[i].release != NULL, "many: payload %d of %lld not exported", i,
               (long long)counts[k]);
      if (!outs[i].release) continue;
      check_batch(&outs[i], ALL, CD_COLUMNS, i % N_BATCHES, "many");
      outs[i].release(&outs[i]);
    }
  }
  for (int i = 0; i < N; i++) {
    xchg_source_free(srcs[i]);
    free(p[i].data);
  }
  xchg_batch_decoder_free(dec);
  xchg_pool_free(pool);
  xchg_buf_unref(s.stream);
}

/* Many payloads through positional reads are read on the pool's threads,
 * not only on the caller's: the caller's first read waits until another
 * thread has read (for at most 60 s, a failure), which a decoder reading
 * every source on the calling thread would never let happen. */
typedef struct gated {
  counted c;
  pthread_t caller;
  atomic_int *others_read; /* reads made on other threads, all payloads */
  atomic_int *caller_waited;
} gated;

static xchg_status gated_read_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  gated *g = ctx;
  if (!pthread_equal(pthread_self(), g->caller)) {
    atomic_fetch_add(g->others_read, 1);
  } else if (atomic_exchange(g->caller_waited, 1) == 0) {
    for (int i = 0; i < 60000 && atomic_load(g->others_read) == 0; i++)
      nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  return counted_read_at(&g->c, offset, dst, n, err);
}

static void test_reads_on_pool(void) {
  split s;
  split_stream(XCHG_BLOCK_LZ4_FRAME, &s);
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(2, &pool, NULL) == XCHG_OK, "cannot create a pool");
  xchg_batch_decoder *dec = open_with(&s, NULL, 0, pool, 1); /* a payload per hand-off */
  enum { N = 8 };
  tu_bytes p[N];
  gated g[N];
  xchg_source *srcs[N];
  struct ArrowArray outs[N];
  atomic_int others = 0, waited = 0;
  xchg_error err;
  for (int i = 0; i < N; i++) {
    p[i] = batch_payload(&s, i % N_BATCHES);
    g[i].c.data = p[i].data;
    atomic_init(&g[i].c.bytes, 0);
    g[i].c.fail_at = -1;
    g[i].caller = pthread_self();
    g[i].others_read = &others;
    g[i].caller_waited = &waited;
    TU_OK(xchg_source_from_read_at(p[i].size, gated_read_at, NULL, &g[i], &srcs[i], &err), err);
  }
  if (dec) TU_OK(xchg_batch_decoder_decode_many(dec, srcs, N, 0, outs, NULL, &err), err);
  TU_CHECK(atomic_load(&others) > 0, "every payload was read on the calling thread");
  for (int i = 0; dec && i < N; i++) {
    if (!outs[i].release) continue;
    check_batch(&outs[i], ALL, CD_COLUMNS, i % N_BATCHES, "read on the pool");
    outs[i].release(&outs[i]);
  }
  for (int i = 0; i < N; i++) {
    xchg_source_free(srcs[i]);
    free(p[i].data);
  }
  xchg_batch_decoder_free(dec);
  xchg_pool_free(pool);
  xchg_buf_unref(s.stream);
}

/* ---- bad input ------------------------------------------------------------------ */

static int mentions(const char *message, const char *what) { return strstr(message, what) != NULL; }

/* A truncated payload among many in memory on a pool, first or later:
 * the call fails naming it, and nothing is exported.  With a task size of
 * one byte, the first payload is planned on the caller and the others are
 * decoded in runs on the pool meanwhile. */
static void test_many_failing(void) {
  split s;
  split_stream(XCHG_BLOCK_LZ4_FRAME, &s);
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(2, &pool, NULL) == XCHG_OK, "cannot create a pool");
  xchg_batch_decoder *dec = open_with(&s, NULL, 0, pool, 1);
  enum { N = 12 };
  tu_bytes p[N];
  for (int i = 0; i < N; i++) p[i] = batch_payload(&s, i % N_BATCHES);
  /* The last run's numbers pass INT64_MAX: they wrap (the sum overflowed). */
  static const int bad[] = {0, 7, N - 1, 7};
  static const int64_t first[] = {100, 100, 100, INT64_MAX - 1};
  for (int k = 0; dec && k < 4; k++) {
    xchg_source *srcs[N];
    struct ArrowArray outs[N];
    for (int i = 0; i < N; i++)
      srcs[i] = tu_memory_source(p[i].data, p[i].size - (i == bad[k] ? 16 : 0));
    xchg_error err;
    xchg_status st = xchg_batch_decoder_decode_many(dec, srcs, N, first[k], outs, NULL, &err);
    char want[40];
    snprintf(want, sizeof want, "batch %lld: ", (long long)(int64_t)((uint64_t)first[k] + bad[k]));
    TU_CHECK(st != XCHG_OK && mentions(err.message, want), "payload %d truncated: %s (%s)", bad[k],
             xchg_status_name(st), st != XCHG_OK ? err.message : "");
    int exported = 0;
    for (int i = 0; i < N; i++) {
      exported += outs[i].release != NULL;
      if (outs[i].release) outs[i].release(&outs[i]);
      xchg_source_free(srcs[i]);
    }
    TU_CHECK(exported == 0, "payload %d truncated: %d payloads exported", bad[k], exported);
  }
  for (int i = 0; i < N; i++) free(p[i].data);
  xchg_batch_decoder_free(dec);
  xchg_pool_free(pool);
  xchg_buf_unref(s.stream);
}

/* A payload whose compressed buffer is broken (found as it is
 * decompressed) before one cut short (found as it is planned): the first
 * is the error of decode_many, with a pool or without, whatever the task
 * size, as decoding them one by one says. */
static void test_first_bad_payload(void) {
  split s;
  split_stream(XCHG_BLOCK_LZ4_FRAME, &s);
  enum { N = 6 };
  tu_bytes p[N];
  for (int i = 0; i < N; i++) p[i] = batch_payload(&s, i % N_BATCHES);
  static const uint8_t magic[4] = {0x04, 0x22, 0x4d, 0x18};
  int broken = 0;
  for (size_t at = 0; at + 4 <= p[0].size && !broken; at++)
    if (memcmp(p[0].data + at, magic, 4) == 0) broken = (p[0].data[at] = 0, 1);
  TU_CHECK(broken, "no LZ4 frame in payload 0");
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(2, &pool, NULL) == XCHG_OK, "cannot create a pool");
  xchg_pool *pools[] = {NULL, pool, pool, pool};
  const int64_t task_bytes[] = {0, 0, 1, 4096};
  for (int k = 0; k < 4; k++) {
    xchg_batch_decoder *dec = open_with(&s, NULL, 0, pools[k], task_bytes[k]);
    xchg_source *srcs[N];
    struct ArrowArray outs[N];
    for (int i = 0; i < N; i++)
      srcs[i] = tu_memory_source(p[i].data, p[i].size - (i == 1 ? 40 : 0));
    xchg_error err;
    xchg_status st =
        dec ? xchg_batch_decoder_decode_many(dec, srcs, N, 10, outs, NULL, &err) : XCHG_EINVAL;
    TU_CHECK(
        st == XCHG_EFORMAT && mentions(err.message, "batch 10: ") && mentions(err.message, "LZ4"),
        "%s, task size %lld: %s (%s), not batch 10's broken frame",
        pools[k] ? "a pool of 2" : "no pool", (long long)task_bytes[k], xchg_status_name(st),
        st != XCHG_OK ? err.message : "");
    for (int i = 0; i < N; i++) {
      if (st == XCHG_OK) outs[i].release(&outs[i]);
      xchg_source_free(srcs[i]);
    }
    xchg_batch_decoder_free(dec);
  }
  for (int i = 0; i < N; i++) free(p[i].data);
  xchg_pool_free(pool);
  xchg_buf_unref(s.stream);
}

/* The error of decoding `part` as batch 9, in memory or by copying. */
static xchg_status decode_cut(xchg_batch_decoder *dec, tu_bytes *part, int copied,
                              xchg_error *err) {
  counted c;
  xchg_source *src = copied ? counted_source(&c, part) : tu_memory_source(part->data, part->size);
  struct ArrowArray a;
  xchg_status st = xchg_batch_decoder_decode(dec, src, 9, &a, err);
  TU_CHECK(st != XCHG_OK && !a.release, "cut at %zu (%s): decoded", part->size,
           copied ? "copied" : "memory");
  if (a.release) a.release(&a);
  xchg_source_free(src);
  return st;
}

/* Every cut of a payload fails (a cut at a message boundary too: the
 * record batch is the last message) and names the batch, in the same
 * words in memory (its messages decoded where they lie) and read by
 * copying (prefix, then metadata): a cut inside the prefix is said to be
 * one, a cut inside the metadata as a source that runs out says it. */
static void test_truncation(xchg_block_codec codec) {
  split s;
  xchg_batch_decoder *dec = split_and_open(codec, &s);
  tu_bytes p = batch_payload(&s, 1);
  uint32_t first_metadata = 0; /* the first message's, little-endian after the marker */
  for (int k = 0; k < 4 && p.size >= 8; k++) first_metadata |= (uint32_t)p.data[4 + k] << (8 * k);
  for (size_t cut = 0; dec && cut < p.size; cut++) {
    tu_bytes part = {malloc(cut ? cut : 1), cut};
    memcpy(part.data, p.data, part.size);
    xchg_error in_memory, copied;
    if (decode_cut(dec, &part, 0, &in_memory) != XCHG_OK &&
        decode_cut(dec, &part, 1, &copied) != XCHG_OK) {
      TU_CHECK(mentions(in_memory.message, "batch 9: "), "cut at %zu: %s", cut, in_memory.message);
      TU_CHECK(!strcmp(in_memory.message, copied.message),
               "cut at %zu: in memory '%s', copied '%s'", cut, in_memory.message, copied.message);
      if (cut > 0 && cut < 8)
        TU_CHECK(mentions(copied.message, "input ends inside the framing of message 0 at byte 0"),
                 "cut at %zu: %s", cut, copied.message);
      else if (cut >= 8 && cut < 8 + first_metadata)
        TU_CHECK(mentions(copied.message,
                          "message 0 at byte 0: metadata: unexpected end of data at "
                          "byte 8: needed"),
                 "cut at %zu: %s", cut, copied.message);
    }
    free(part.data);
  }
  free(p.data);
  split_close(&s, dec);
}

/* Damage inside a compressed body: the codec or validation refuses it,
 * naming the field and buffer. */
static void test_corrupt_body(void) {
  split s;
  xchg_batch_decoder *dec = split_and_open(XCHG_BLOCK_ZSTD, &s);
  tu_bytes p = batch_payload(&s, 0);
  size_t batch_end = p.size, body_start = batch_end - 64;
  int named = 0, tried = 0;
  for (size_t at = body_start; dec && at < batch_end; at += 3, tried++) {
    p.data[at] ^= 0x5a;
    xchg_source *src = tu_memory_source(p.data, p.size);
    struct ArrowArray a;
    xchg_error err;
    if (xchg_batch_decoder_decode(dec, src, 3, &a, &err) != XCHG_OK)
      named += mentions(err.message, "batch 3: ") && mentions(err.message, "field '") &&
               mentions(err.message, "buffer ");
    else
      a.release(&a);
    xchg_source_free(src);
    p.data[at] ^= 0x5a;
  }
  TU_CHECK(named > tried / 2, "%d of %d damaged bodies failed naming batch, field and buffer",
           named, tried);
  free(p.data);
  split_close(&s, dec);
}

/* Every byte of a payload (metadata and body) damaged in turn: decoding
 * fails with the batch named or succeeds, and never reads out of bounds
 * (ASan watches).  A success is checked as far as its array goes. */
static void test_damaged_bytes(xchg_block_codec codec) {
  split s;
  xchg_batch_decoder *dec = split_and_open(codec, &s);
  tu_bytes p = batch_payload(&s, 0);
  static const uint8_t flips[] = {0x01, 0x80, 0xff};
  int failed = 0, unnamed = 0, blank = 0;
  for (size_t at = 0; dec && at < p.size; at += 1 + (at > 2048) * 7) {
    for (int f = 0; f < 3; f++) {
      p.data[at] ^= flips[f];
      xchg_source *src = tu_memory_source(p.data, p.size);
      struct ArrowArray a;
      xchg_error err;
      if (xchg_batch_decoder_decode(dec, src, 2, &a, &err) == XCHG_OK) {
        TU_CHECK(a.n_children == CD_COLUMNS, "damaged byte %zu: %lld columns", at,
                 (long long)a.n_children);
        a.release(&a);
      } else {
        failed++;
        unnamed += !mentions(err.message, "batch 2: ");
        /* An error of the message, not of a field, names no field ("field ''"). */
        if (mentions(err.message, "field ''") && blank++ == 0)
          TU_CHECK(0, "damaged byte %zu: an empty field named: %s", at, err.message);
      }
      xchg_source_free(src);
      p.data[at] ^= flips[f];
    }
  }
  TU_CHECK(failed > 0 && unnamed == 0 && blank == 0,
           "%d damaged payloads failed, %d without the batch named, %d naming field ''", failed,
           unnamed, blank);
  free(p.data);
  split_close(&s, dec);
}

/* A read that fails inside the selected column's body names the buffer. */
static void test_failing_read(void) {
  split s;
  xchg_batch_decoder *dec = split_and_open(XCHG_BLOCK_NONE, &s);
  tu_bytes p = batch_payload(&s, 0);
  counted c;
  xchg_source *src = counted_source(&c, &p);
  c.fail_at = (int64_t)p.size - 16;
  struct ArrowArray a;
  xchg_error err;
  xchg_status st = dec ? xchg_batch_decoder_decode(dec, src, 12, &a, &err) : XCHG_OK;
  TU_CHECK(
      st == XCHG_EIO && mentions(err.message, "batch 12: ") && mentions(err.message, "buffer "),
      "failing read: %d %s", (int)st, err.message);
  xchg_source_free(src);
  free(p.data);
  split_close(&s, dec);
}

/* Where, in a payload's last message, the u32 count of a vector of 16-byte
 * structs is whose first struct starts with `first` (a field node's
 * length, a buffer's offset): at 4 mod 8, as flatbuffers align them. */
static size_t vector_count_at(const tu_bytes *p, uint32_t count, int64_t first) {
  for (size_t at = 4; at + 12 <= p->size; at += 8) {
    uint32_t n;
    int64_t v;
    memcpy(&n, p->data + at, 4);
    memcpy(&v, p->data + at + 4, 8);
    if (n == count && v == first) return at;
  }
  return 0;
}

/* A record batch whose field nodes or buffers stop before an unselected
 * last column is refused for the vector that is short, though the column
 * is never read. */
static void test_short_vectors_past_a_skipped_column(void) {
  split s;
  split_stream(XCHG_BLOCK_NONE, &s);
  static const int64_t first[] = {0};
  xchg_batch_decoder *dec = open_decoder(&s, first, 1, NULL);
  tu_bytes p = batch_payload(&s, 0);
  const char *wants[] = {"field nodes", "buffers"};
  for (int k = 0; dec && k < 2; k++) {
    /* 3 nodes, the first of ROWS[0] rows; 7 buffers (int64 2, utf8 3,
     * dictionary indices 2), the first at offset 0. */
    size_t at = k == 0 ? vector_count_at(&p, CD_COLUMNS, ROWS[0]) : vector_count_at(&p, 7, 0);
    TU_CHECK(at > 0, "no %s vector found in the payload", wants[k]);
    if (!at) continue;
    uint8_t *copy = malloc(p.size);
    memcpy(copy, p.data, p.size);
    uint32_t shorter = k == 0 ? CD_COLUMNS - 1 : 6;
    memcpy(copy + at, &shorter, 4);
    xchg_source *src = tu_memory_source(copy, p.size);
    struct ArrowArray a;
    xchg_error err;
    xchg_status st = xchg_batch_decoder_decode(dec, src, 2, &a, &err);
    TU_CHECK(st == XCHG_EFORMAT && mentions(err.message, wants[k]) && !a.release, "short %s: %d %s",
             wants[k], (int)st, err.message);
    if (a.release) a.release(&a);
    xchg_source_free(src);
    free(copy);
  }
  free(p.data);
  split_close(&s, dec);
}

/* Each column of a stream alone, the others stepped over by their
 * counted spans (ipc_schema_count_spans), against the same column decoded
 * with every other: nested, union (the V4 gold file's with its legacy
 * validity buffer), map, dictionary, view, list view and run-end columns
 * before and after it. */
static void check_columns_alone(xchg_buf *stream, const char *what) {
  split s;
  memset(&s, 0, sizeof s);
  s.stream = stream;
  split_messages(&s);
  xchg_batch_decoder *all = open_decoder(&s, NULL, 0, NULL);
  struct ArrowSchema schema = {0};
  xchg_error err;
  if (all) TU_OK(xchg_batch_decoder_schema(all, &schema, &err), err);
  int64_t batches = 0;
  for (int64_t i = 1; i < s.n; i++) batches += s.kinds[i] == XCHG_MESSAGE_RECORD_BATCH;
  TU_CHECK(batches > 0 && schema.release, "%s: %lld batches", what, (long long)batches);
  for (int64_t c = 0; schema.release && c < schema.n_children; c++) {
    xchg_batch_decoder *one = open_decoder(&s, &c, 1, NULL);
    for (int64_t b = 0; one && b < batches; b++) {
      tu_bytes p = batch_payload(&s, b);
      xchg_source *src = tu_memory_source(p.data, p.size);
      struct ArrowArray whole = {0}, alone = {0};
      char msg[512] = "";
      TU_OK(xchg_batch_decoder_decode(all, src, b, &whole, &err), err);
      TU_OK(xchg_batch_decoder_decode(one, src, b, &alone, &err), err);
      if (whole.release && alone.release)
        TU_CHECK(alone.n_children == 1 && array_equal(schema.children[c], whole.children[c],
                                                      alone.children[0], msg, sizeof msg) == 0,
                 "%s, column %lld (%s) alone, batch %lld: %s", what, (long long)c,
                 schema.children[c]->name, (long long)b, msg);
      if (whole.release) whole.release(&whole);
      if (alone.release) alone.release(&alone);
      xchg_source_free(src);
      free(p.data);
    }
    xchg_batch_decoder_free(one);
  }
  if (schema.release) schema.release(&schema);
  split_close(&s, all);
}

static void test_columns_alone(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  xchg_buf *stream = NULL;
  char msg[512];
  TU_CHECK(rt_write(schema, batch, 1, &opts, &stream, msg, sizeof msg) == 0, "%s", msg);
  if (stream) check_columns_alone(stream, "the sample");
  static const char *const gold[] = {
      "0.17.1/generated_union", "1.0.0-littleendian/generated_nested",
      "1.0.0-littleendian/generated_recursive_nested", "1.0.0-littleendian/generated_map",
      "1.0.0-littleendian/generated_nested_dictionary"};
  for (size_t i = 0; i < sizeof gold / sizeof gold[0]; i++) {
    char path[1024];
    size_t size = 0;
    tu_testdata_path(path, sizeof path, "arrow-gold/%s.stream", gold[i]);
    uint8_t *data = tu_read_file(path, &size);
    TU_CHECK(data != NULL, "cannot read %s", path);
    if (!data) continue;
    xchg_buf *buf = xchg_buf_alloc(size);
    memcpy(xchg_buf_mutable_data(buf), data, size);
    free(data);
    check_columns_alone(buf, gold[i]);
  }
}

static void test_wrong_payloads(void) {
  split s, other;
  split_stream(XCHG_BLOCK_NONE, &s);
  memset(&other, 0, sizeof other);
  TU_CHECK(cd_make_stream(0, ROWS, 1, 1, XCHG_BLOCK_NONE, &other.stream) == 0);
  xchg_batch_decoder *dec = open_decoder(&s, NULL, 0, NULL);
  xchg_error err;
  struct ArrowArray a;
  /* A stream of another schema. */
  xchg_source *src;
  TU_OK(xchg_source_from_buf(other.stream, &src, &err), err);
  xchg_status st = dec ? xchg_batch_decoder_decode(dec, src, 4, &a, &err) : XCHG_OK;
  TU_CHECK(
      st == XCHG_EFORMAT && mentions(err.message, "batch 4: ") && mentions(err.message, "schema"),
      "other schema: %d %s", (int)st, err.message);
  xchg_source_free(src);
  /* The dictionary alone, no batch. */
  const uint8_t *data = xchg_buf_data(s.stream);
  src = tu_memory_source(data + s.starts[1], (size_t)(s.starts[2] - s.starts[1]));
  st = dec ? xchg_batch_decoder_decode(dec, src, 5, &a, &err) : XCHG_OK;
  char want[256];
  snprintf(want, sizeof want,
           "batch 5: the payload of %lld bytes holds no record batch: 1 dictionary message from "
           "byte 0, then its end at byte %lld",
           (long long)(s.starts[2] - s.starts[1]), (long long)(s.starts[2] - s.starts[1]));
  TU_CHECK(st == XCHG_EFORMAT && !strcmp(err.message, want), "no batch: %d %s", (int)st,
           err.message);
  xchg_source_free(src);
  /* The marker alone, or after the dictionary: what the payload held
   * instead, and where. */
  tu_bytes none_read = {0};
  tu_bytes_append(&none_read, data + s.starts[1], (size_t)(s.starts[2] - s.starts[1]));
  tu_bytes_append(&none_read, "\xff\xff\xff\xff\0\0\0\0", 8);
  for (int k = 0; k < 2; k++) {
    size_t from = k ? none_read.size - 8 : 0;
    src = tu_memory_source(none_read.data + from, none_read.size - from);
    st = dec ? xchg_batch_decoder_decode(dec, src, 5, &a, &err) : XCHG_OK;
    if (k)
      snprintf(want, sizeof want,
               "batch 5: the payload of 8 bytes holds no record batch: the end-of-stream marker "
               "at byte 0");
    else
      snprintf(want, sizeof want,
               "batch 5: the payload of %zu bytes holds no record batch: 1 dictionary message "
               "from byte 0, then the end-of-stream marker at byte %zu",
               none_read.size, none_read.size - 8);
    TU_CHECK(st == XCHG_EFORMAT && !strcmp(err.message, want), "no batch (%d): %d %s", k, (int)st,
             err.message);
    xchg_source_free(src);
  }
  free(none_read.data);
  /* A stream cut at a message boundary: the marker is missing. */
  src = tu_memory_source(data, (size_t)s.starts[s.n]);
  st = dec ? xchg_batch_decoder_decode(dec, src, 6, &a, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EIO && mentions(err.message, "end-of-stream"), "no marker: %d %s", (int)st,
           err.message);
  xchg_source_free(src);
  /* An IPC file's beginning (its magic, padding, then the stream's
   * messages), in memory and read positionally: named as a file, not its
   * magic taken for a metadata length ('metadata length 1330795073 exceeds
   * max_metadata_bytes'). */
  xchg_batch_decoder *none = NULL;
  tu_bytes file = {0};
  tu_bytes_append(&file, "ARROW1\0\0", 8);
  tu_bytes_append(&file, data, xchg_buf_size(s.stream));
  counted c;
  for (int positional = 0; positional < 2; positional++) {
    src = positional ? counted_source(&c, &file) : tu_memory_source(file.data, file.size);
    st = dec ? xchg_batch_decoder_decode(dec, src, 7, &a, &err) : XCHG_OK;
    TU_CHECK(st == XCHG_EFORMAT && mentions(err.message, "batch 7: it is an Arrow IPC file"),
             "a file (%s): %d %s", positional ? "read_at" : "memory", (int)st, err.message);
    xchg_source_free(src);
  }
  /* ... and as the schema. */
  st = xchg_batch_decoder_open(file.data, file.size, NULL, 0, NULL, &none, &err);
  TU_CHECK(st == XCHG_EFORMAT && !none && mentions(err.message, "it is an Arrow IPC file"),
           "a file as the schema: %d %s", (int)st, err.message);
  free(file.data);
  /* Out-of-range columns. */
  static const int64_t bad[] = {1, CD_COLUMNS};
  st = xchg_batch_decoder_open(data, (size_t)s.starts[1], bad, 2, NULL, &none, &err);
  TU_CHECK(st == XCHG_EINVAL && !none && mentions(err.message, "column index 3"),
           "bad column: %d %s", (int)st, err.message);
  /* A schema that is not one. */
  st = xchg_batch_decoder_open(data + s.starts[1], 64, NULL, 0, NULL, &none, &err);
  TU_CHECK(st == XCHG_EFORMAT && !none, "dictionary as schema: %d %s", (int)st, err.message);
  xchg_batch_decoder_free(dec);
  xchg_buf_unref(s.stream);
  xchg_buf_unref(other.stream);
}

/* Opening a decoder on schema followed by 16 bytes fails, naming them. */
static void check_trailing_bytes(const tu_bytes *schema, const char *name) {
  tu_bytes trailed = {0};
  tu_bytes_append(&trailed, schema->data, schema->size);
  tu_bytes_append(&trailed, "garbage!garbage!", 16);
  char want[96];
  snprintf(want, sizeof want, "schema message: 16 trailing bytes, from byte %zu", schema->size);
  xchg_batch_decoder *dec = NULL;
  xchg_error err;
  xchg_status st = xchg_batch_decoder_open(trailed.data, trailed.size, NULL, 0, NULL, &dec, &err);
  TU_CHECK(st == XCHG_EFORMAT && !dec && mentions(err.message, want),
           "schema message with its %s and 16 bytes after it: %d %s", name, (int)st, err.message);
  xchg_batch_decoder_free(dec);
  free(trailed.data);
}

/* The schema message in each framing a stream may have: the continuation
 * marker and length, the pre-0.15 length alone (which the reader and
 * the payloads take too: Arrow Java's legacy IPC option writes it), and
 * the Message flatbuffer alone; each opens a decoder that decodes batch 0.
 * Bytes after a framed one (the next messages of its stream, garbage) are
 * an error naming them, not dropped unseen; after a flatbuffer alone they
 * cannot be told from it. */
static void test_schema_framings(void) {
  split s;
  split_stream(XCHG_BLOCK_NONE, &s);
  const uint8_t *data = xchg_buf_data(s.stream);
  uint32_t length;
  memcpy(&length, data + 4, 4);
  tu_bytes framings[3] = {{0}};
  tu_bytes_append(&framings[0], data, 8 + (size_t)length);
  tu_bytes_append(&framings[1], data + 4, 4 + (size_t)length);
  tu_bytes_append(&framings[2], data + 8, length);
  static const char *const names[] = {"continuation marker", "pre-0.15 length", "flatbuffer alone"};
  tu_bytes p = batch_payload(&s, 0);
  for (int f = 0; f < 3; f++) {
    xchg_batch_decoder *dec = NULL;
    xchg_error err;
    xchg_status st =
        xchg_batch_decoder_open(framings[f].data, framings[f].size, NULL, 0, NULL, &dec, &err);
    TU_CHECK(st == XCHG_OK, "schema message with its %s: %d %s", names[f], (int)st, err.message);
    if (f < 2) check_trailing_bytes(&framings[f], names[f]);
    xchg_source *src = tu_memory_source(p.data, p.size);
    struct ArrowArray a;
    if (dec && xchg_batch_decoder_decode(dec, src, 0, &a, &err) == XCHG_OK) {
      check_batch(&a, ALL, CD_COLUMNS, 0, names[f]);
      a.release(&a);
    } else if (dec) {
      TU_CHECK(0, "%s: decode: %s", names[f], err.message);
    }
    xchg_source_free(src);
    xchg_batch_decoder_free(dec);
    free(framings[f].data);
  }
  free(p.data);
  xchg_buf_unref(s.stream);
}

/* A NULL decoder or out is XCHG_EINVAL naming it, with every out
 * released-state, not a crash. */
static void test_null_arguments(void) {
  split s;
  split_stream(XCHG_BLOCK_NONE, &s);
  const uint8_t *data = xchg_buf_data(s.stream);
  xchg_source *src = tu_memory_source(data, xchg_buf_size(s.stream));
  xchg_error err;
  struct ArrowArray a, outs[1];
  struct ArrowSchema schema;
  memset(&a, 0xff, sizeof a);
  xchg_status st = xchg_batch_decoder_decode(NULL, src, 1, &a, &err);
  TU_CHECK(st == XCHG_EINVAL && !a.release &&
               !strcmp(err.message, "xchg_batch_decoder_decode: the decoder is NULL"),
           "decode(NULL decoder): %d %s", (int)st, err.message);
  memset(outs, 0xff, sizeof outs);
  st = xchg_batch_decoder_decode_many(NULL, &src, 1, 0, outs, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !outs[0].release &&
               !strcmp(err.message, "xchg_batch_decoder_decode_many: the decoder is NULL"),
           "decode_many(NULL decoder): %d %s", (int)st, err.message);
  memset(&schema, 0xff, sizeof schema);
  st = xchg_batch_decoder_schema(NULL, &schema, &err);
  TU_CHECK(st == XCHG_EINVAL && !schema.release &&
               !strcmp(err.message, "xchg_batch_decoder_schema: the decoder is NULL"),
           "schema(NULL decoder): %d %s", (int)st, err.message);
  st = xchg_batch_decoder_open(data, (size_t)s.starts[1], NULL, 0, NULL, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_batch_decoder_open: out is NULL"),
           "open(NULL out): %d %s", (int)st, err.message);
  xchg_batch_decoder *none = NULL;
  st = xchg_batch_decoder_open(NULL, 0, NULL, 0, NULL, &none, &err);
  TU_CHECK(st == XCHG_EINVAL && !none &&
               !strcmp(err.message, "xchg_batch_decoder_open: schema_message is NULL"),
           "open(NULL schema message): %d %s", (int)st, err.message);
  const int64_t first[] = {0};
  st = xchg_batch_decoder_open(data, (size_t)s.starts[1], first, -1, NULL, &none, &err);
  TU_CHECK(st == XCHG_EINVAL && !none &&
               !strcmp(err.message, "xchg_batch_decoder_open: n_columns is negative (-1)"),
           "open(n_columns -1): %d %s", (int)st, err.message);
  xchg_batch_decoder *dec = open_decoder(&s, NULL, 0, NULL);
  static const char *const named[3] = {"n is negative (-1)", "srcs is NULL", "outs is NULL"};
  xchg_error e[3];
  xchg_status many[3] = {
      xchg_batch_decoder_decode_many(dec, &src, -1, 0, outs, NULL, &e[0]),
      xchg_batch_decoder_decode_many(dec, NULL, 1, 0, outs, NULL, &e[1]),
      xchg_batch_decoder_decode_many(dec, &src, 1, 0, NULL, NULL, &e[2]),
  };
  for (int i = 0; i < 3 && dec; i++)
    TU_CHECK(many[i] == XCHG_EINVAL && strstr(e[i].message, named[i]), "decode_many with %s: %s",
             named[i], e[i].message);
  memset(outs, 0xff, sizeof outs); /* released-state after a NULL srcs too */
  TU_CHECK(xchg_batch_decoder_decode_many(dec, NULL, 1, 0, outs, NULL, &err) == XCHG_EINVAL &&
               !outs[0].release,
           "decode_many with srcs NULL left outs[0] set");
  st = dec ? xchg_batch_decoder_decode(dec, NULL, 3, &a, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "batch 3: the payload's source is NULL"),
           "decode(NULL source): %d %s", (int)st, err.message);
  xchg_source *pipe_like = tu_unseekable_source(data, xchg_buf_size(s.stream), 64);
  st = dec ? xchg_batch_decoder_decode(dec, pipe_like, 4, &a, &err) : XCHG_OK;
  TU_CHECK(
      st == XCHG_EINVAL && strstr(err.message, "batch 4: the payload's source is not seekable"),
      "decode(a source that is not seekable): %d %s", (int)st, err.message);
  xchg_source_free(pipe_like);
  st = dec ? xchg_batch_decoder_decode(dec, src, 1, NULL, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_batch_decoder_decode: out is NULL"),
           "decode(NULL out): %d %s", (int)st, err.message);
  st = dec ? xchg_batch_decoder_schema(dec, NULL, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_batch_decoder_schema: out is NULL"),
           "schema(NULL out): %d %s", (int)st, err.message);
  xchg_batch_decoder_free(dec);
  xchg_source_free(src);
  xchg_buf_unref(s.stream);
}

static const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};

static void batches(void) {
  for (int i = 0; i < 3; i++) test_batches(codecs[i]);
}

static void stream_payload(void) {
  for (int i = 0; i < 3; i++) test_stream_payload(codecs[i]);
}

static void truncation(void) {
  for (int i = 0; i < 3; i++) test_truncation(codecs[i]);
}

static void damaged_bytes(void) {
  for (int i = 0; i < 3; i++) test_damaged_bytes(codecs[i]);
}

static void many(void) {
  test_many(0, 0);
  test_many(1, 0);
  test_many(1, 1);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"batches", batches},
      {"stream_payload", stream_payload},
      {"truncation", truncation},
      {"damaged_bytes", damaged_bytes},
      {"copy_discipline", test_copy_discipline},
      {"many", many},
      {"many_failing", test_many_failing},
      {"first_bad_payload", test_first_bad_payload},
      {"reads_on_pool", test_reads_on_pool},
      {"corrupt_body", test_corrupt_body},
      {"failing_read", test_failing_read},
      {"wrong_payloads", test_wrong_payloads},
      {"short_vectors_past_a_skipped_column", test_short_vectors_past_a_skipped_column},
      {"columns_alone", test_columns_alone},
      {"null_arguments", test_null_arguments},
      {"schema_framings", test_schema_framings},
      {"empty_batches", test_empty_batches},
  };
  return TU_MAIN(argc, argv, "batch_decoder", cases);
}
