/* test_cache.c — the shared decoded cache (include/xchg/cache.h), one
 * scenario per rule: single flight, waiting and cancelling, lifetime of
 * what is handed out, failures, sharing off, dictionaries, several parts,
 * degenerate broadcasts, per-column lazy decode, retention, accounting,
 * derived values.  Every value read is checked against the formula the
 * data was made from, and every scenario ends with xchg's allocation
 * counters back where they started. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/cache_data.h"
#include "support/testutil.h"
#include "xchg/cache.h"
#include "xchg/testing.h"

static const int64_t all_cols[CD_COLUMNS] = {0, 1, 2};

/* ---- data ------------------------------------------------------------------ */

/* Part p of the standard broadcast: 5 batches, one of them empty, big
 * enough (~300 KB) to take many reads. */
static const int64_t std_rows[5] = {4000, 0, 9000, 3000, 1};
#define STD_BATCHES 5

static xchg_buf *std_stream(int64_t part, xchg_block_codec body) {
  xchg_buf *b = NULL;
  if (cd_make_stream(part, std_rows, STD_BATCHES, 0, body, &b) != 0) {
    fprintf(stderr, "cannot make test data\n");
    exit(1);
  }
  return b;
}

/* A hooked source over one standard part in codec. */
static void std_source(cd_source *s, xchg_stream_codec codec) {
  xchg_buf *ipc = std_stream(0, XCHG_BLOCK_NONE);
  xchg_buf *enc = cd_encode(ipc, codec);
  cd_source_init(s, &enc, 1, codec);
  xchg_buf_unref(enc);
  xchg_buf_unref(ipc);
}

/* Checks every batch a holder gives against part 0's formula. */
static int check_holder(const xchg_cache_holder *h, const int64_t *cols, int64_t n_cols) {
  char msg[256];
  if (xchg_cache_holder_num_batches(h) != STD_BATCHES) return -1;
  for (int64_t i = 0; i < STD_BATCHES; i++) {
    struct ArrowArray a;
    xchg_error err;
    if (xchg_cache_holder_batch(h, i, &a, &err) != XCHG_OK) {
      fprintf(stderr, "batch %lld: %s\n", (long long)i, err.message);
      return -1;
    }
    int rc = cd_check_batch(&a, cols, n_cols, 0, i, std_rows[i], msg, sizeof msg);
    a.release(&a);
    if (rc != 0) {
      fprintf(stderr, "batch %lld: %s\n", (long long)i, msg);
      return -1;
    }
  }
  return 0;
}

/* ---- memory ----------------------------------------------------------------- */

static int64_t base_live, base_bytes;

static void mark_memory(void) {
  base_live = xchg_buf_live_count();
  base_bytes = tu_live_bytes();
}

static void check_memory(const char *scenario) {
  TU_CHECK(xchg_buf_live_count() == base_live && tu_live_bytes() == base_bytes,
           "%s: %lld buffers / %lld bytes live, %lld / %lld before", scenario,
           (long long)xchg_buf_live_count(), (long long)tu_live_bytes(), (long long)base_live,
           (long long)base_bytes);
}

static xchg_cache *new_cache(int sharing, int64_t retain_bytes, int64_t retain_ms) {
  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.sharing = sharing;
  o.wait_check_ms = 10;
  o.retain_bytes = retain_bytes;
  o.retain_ms = retain_ms;
  return cd_cache_create(&o);
}

/* ---- threads acquiring --------------------------------------------------------- */

typedef struct task {
  pthread_t thread;
  xchg_cache *cache;
  const char *key;
  xchg_broadcast bytes;
  const int64_t *cols;
  int64_t n_cols;
  atomic_int cancel;
  atomic_int cancel_checks;
  xchg_status status;
  int values_ok;
  xchg_error err;
  int64_t elapsed_ms;
} task;

static int task_cancelled(void *ctx) {
  atomic_fetch_add(&((task *)ctx)->cancel_checks, 1);
  return atomic_load(&((task *)ctx)->cancel);
}

static void *run_task(void *arg) {
  task *t = arg;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  xchg_cache_holder *h;
  xchg_cache_request req;
  t->status =
      xchg_cache_acquire(t->cache, t->key, &t->bytes,
                         cd_request(&req, t->cols, t->n_cols, task_cancelled, t), &h, &t->err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  t->elapsed_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  if (t->status == XCHG_OK) {
    t->values_ok =
        check_holder(h, t->cols ? t->cols : all_cols, t->cols ? t->n_cols : CD_COLUMNS) == 0;
    xchg_cache_holder_release(h);
  }
  return NULL;
}

static void start_task(task *t, xchg_cache *c, const char *key, xchg_broadcast b,
                       const int64_t *cols, int64_t n_cols) {
  memset(t, 0, sizeof *t);
  t->cache = c, t->key = key, t->bytes = b, t->cols = cols, t->n_cols = n_cols;
  pthread_create(&t->thread, NULL, run_task, t);
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Until each of the n tasks waits for another's decode (a waiter asks its
 * cancel check from the wait, the decoder only between reads, and these
 * tasks are not the decoder): timing alone is not enough on a loaded host. */
static void wait_until_waiting(task *t, int n) {
  for (int i = 0; i < n; i++) {
    int ms = 0;
    while (atomic_load(&t[i].cancel_checks) == 0 && ms++ < 10000) sleep_ms(1);
    TU_CHECK(atomic_load(&t[i].cancel_checks) > 0, "a waiter did not reach the wait in 10 s");
  }
}

/* ---- scenarios ---------------------------------------------------------------- */

/* Every stream codec and body compression, from memory chunks (no hooks):
 * values right, one decode, the second acquirer a hit, nothing left. */
static void test_codecs(void) {
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_NONE,        XCHG_STREAM_LZ4_JAVA,
                                             XCHG_STREAM_ZSTD,        XCHG_STREAM_LZ4_FRAME,
                                             XCHG_STREAM_SNAPPY_JAVA, XCHG_STREAM_AUTO};
  static const xchg_block_codec bodies[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_ZSTD, XCHG_BLOCK_LZ4_FRAME};
  for (size_t ci = 0; ci < sizeof codecs / sizeof *codecs; ci++)
    for (size_t bi = 0; bi < 3; bi++) {
      mark_memory();
      xchg_buf *ipc = std_stream(0, bodies[bi]);
      xchg_stream_codec enc_codec =
          codecs[ci] == XCHG_STREAM_AUTO ? XCHG_STREAM_LZ4_JAVA : codecs[ci];
      xchg_buf *enc = cd_encode(ipc, enc_codec);
      /* Cut into 1000-byte chunks, as a JVM would hand them over. */
      size_t size = xchg_buf_size(enc), n = (size + 999) / 1000;
      xchg_chunk *chunks = calloc(n ? n : 1, sizeof *chunks);
      for (size_t i = 0; i < n; i++)
        chunks[i] = (xchg_chunk){xchg_buf_data(enc) + i * 1000, i + 1 < n ? 1000 : size - i * 1000};
      xchg_broadcast_part part = {chunks, n, codecs[ci]};
      xchg_broadcast b = {&part, 1, NULL, NULL};
      xchg_cache *c = new_cache(1, 0, 0);
      xchg_cache_holder *h1 = NULL, *h2 = NULL;
      xchg_error err;
      xchg_status st = xchg_cache_acquire(c, "b", &b, NULL, &h1, &err);
      TU_CHECK(st == XCHG_OK, "codec %s body %d: %s", xchg_stream_codec_name(codecs[ci]), (int)bi,
               err.message);
      if (st == XCHG_OK) {
        st = xchg_cache_acquire(c, "b", &b, NULL, &h2, &err);
        TU_CHECK(st == XCHG_OK, "second acquire: %s", err.message);
        TU_CHECK(check_holder(h1, all_cols, CD_COLUMNS) == 0, "values, codec %d body %d", (int)ci,
                 (int)bi);
        xchg_cache_metrics m = cd_metrics(c);
        TU_CHECK(m.decodes == 1 && m.hits == 1 && m.acquisitions == 2, "decodes %lld hits %lld",
                 (long long)m.decodes, (long long)m.hits);
        TU_CHECK(m.bytes_held > 8 * 17001, "bytes held %lld", (long long)m.bytes_held);
        xchg_cache_holder_release(h1);
        xchg_cache_holder_release(h2);
        m = cd_metrics(c);
        TU_CHECK(m.entries == 0 && m.bytes_held == 0, "entries %lld bytes %lld after release",
                 (long long)m.entries, (long long)m.bytes_held);
      }
      xchg_cache_free(c);
      free(chunks);
      xchg_buf_unref(enc);
      xchg_buf_unref(ipc);
      check_memory("codecs");
    }
}

/* Acquirers arriving during a decode wait for it: one decode, one open. */
static void test_single_flight(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  xchg_cache *c = new_cache(1, 0, 0);
  cd_source_close_gate(&s);
  enum { N = 6 };
  task t[N];
  start_task(&t[0], c, "k", cd_broadcast(&s), NULL, 0);
  TU_CHECK(cd_source_wait_blocked(&s, 1) == 0, "the decode did not start");
  for (int i = 1; i < N; i++) start_task(&t[i], c, "k", cd_broadcast(&s), NULL, 0);
  wait_until_waiting(t + 1, N - 1);
  cd_source_open_gate(&s);
  for (int i = 0; i < N; i++) {
    pthread_join(t[i].thread, NULL);
    TU_CHECK(t[i].status == XCHG_OK && t[i].values_ok, "task %d: %s", i, t[i].err.message);
  }
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.decodes == 1 && atomic_load(&s.opens) == 1, "decodes %lld opens %d",
           (long long)m.decodes, atomic_load(&s.opens));
  TU_CHECK(m.waits == N - 1, "waits %lld", (long long)m.waits);
  TU_CHECK(m.entries == 0, "entries %lld", (long long)m.entries);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("single flight");
}

/* A cancelled waiter returns promptly while the decode goes on. */
static void test_cancel_waiter(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_ZSTD);
  xchg_cache *c = new_cache(1, 0, 0);
  cd_source_close_gate(&s);
  task decoder, waiter;
  start_task(&decoder, c, "k", cd_broadcast(&s), NULL, 0);
  TU_CHECK(cd_source_wait_blocked(&s, 1) == 0, "the decode did not start");
  start_task(&waiter, c, "k", cd_broadcast(&s), NULL, 0);
  sleep_ms(200);
  /* Asked every 10 ms: about 20 times, neither never nor busily. */
  int checks = atomic_load(&waiter.cancel_checks);
  TU_CHECK(checks >= 3 && checks <= 40, "cancel asked %d times in 200 ms at a 10 ms interval",
           checks);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  atomic_store(&waiter.cancel, 1);
  pthread_join(waiter.thread, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  int64_t ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  TU_CHECK(waiter.status == XCHG_ECANCELLED, "waiter: %s", xchg_status_name(waiter.status));
  TU_CHECK(ms < 1000, "the cancelled waiter took %lld ms (check interval 10 ms)", (long long)ms);
  TU_CHECK(atomic_load(&s.blocked) == 1, "the decode should still be blocked");
  cd_source_open_gate(&s);
  pthread_join(decoder.thread, NULL);
  TU_CHECK(decoder.status == XCHG_OK && decoder.values_ok, "decoder: %s", decoder.err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.cancellations == 1 && m.decodes == 1 && m.failed_decodes == 0,
           "cancellations %lld decodes %lld", (long long)m.cancellations, (long long)m.decodes);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("cancel waiter");
}

/* A cancelled decoder stops; a waiter decodes for the rest. */
static void test_cancel_decoder(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_NONE);
  xchg_cache *c = new_cache(1, 0, 0);
  cd_source_close_gate(&s);
  task decoder, w1, w2;
  start_task(&decoder, c, "k", cd_broadcast(&s), NULL, 0);
  TU_CHECK(cd_source_wait_blocked(&s, 1) == 0, "the decode did not start");
  start_task(&w1, c, "k", cd_broadcast(&s), NULL, 0);
  start_task(&w2, c, "k", cd_broadcast(&s), NULL, 0);
  wait_until_waiting(&w1, 1);
  wait_until_waiting(&w2, 1);
  atomic_store(&decoder.cancel, 1);
  cd_source_open_gate(&s);
  pthread_join(decoder.thread, NULL);
  pthread_join(w1.thread, NULL);
  pthread_join(w2.thread, NULL);
  TU_CHECK(decoder.status == XCHG_ECANCELLED, "decoder: %s", xchg_status_name(decoder.status));
  TU_CHECK(w1.status == XCHG_OK && w1.values_ok && w2.status == XCHG_OK && w2.values_ok,
           "waiters: %s / %s", w1.err.message, w2.err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.decodes == 2 && m.failed_decodes == 1 && atomic_load(&s.opens) == 2,
           "decodes %lld failed %lld opens %d (one retry for both waiters)", (long long)m.decodes,
           (long long)m.failed_decodes, atomic_load(&s.opens));
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("cancel decoder");
}

/* A failed decode is not cached: its waiters retry once for all; a lasting
 * failure reaches every acquirer; the next acquirer decodes afresh. */
static void test_failure(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  xchg_cache *c = new_cache(1, 0, 0);
  atomic_store(&s.fail_opens, 1);
  atomic_store(&s.fail_after, 20000);
  cd_source_close_gate(&s);
  enum { N = 4 };
  task t[N];
  start_task(&t[0], c, "k", cd_broadcast(&s), NULL, 0);
  TU_CHECK(cd_source_wait_blocked(&s, 1) == 0, "the decode did not start");
  for (int i = 1; i < N; i++) start_task(&t[i], c, "k", cd_broadcast(&s), NULL, 0);
  wait_until_waiting(t + 1, N - 1);
  cd_source_open_gate(&s);
  for (int i = 0; i < N; i++) pthread_join(t[i].thread, NULL);
  TU_CHECK(t[0].status == XCHG_EIO && strstr(t[0].err.message, "injected"), "decoder: %s",
           t[0].err.message);
  for (int i = 1; i < N; i++)
    TU_CHECK(t[i].status == XCHG_OK && t[i].values_ok, "waiter %d: %s", i, t[i].err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.decodes == 2 && m.failed_decodes == 1 && atomic_load(&s.opens) == 2,
           "decodes %lld failed %lld opens %d", (long long)m.decodes, (long long)m.failed_decodes,
           atomic_load(&s.opens));
  TU_CHECK(m.entries == 0, "entries %lld", (long long)m.entries);

  /* Lasting failure: every acquirer gets its error; nothing stays. */
  atomic_store(&s.fail_always, 1);
  atomic_store(&s.fail_after, 0);
  for (int i = 0; i < N; i++) start_task(&t[i], c, "k", cd_broadcast(&s), NULL, 0);
  for (int i = 0; i < N; i++) {
    pthread_join(t[i].thread, NULL);
    TU_CHECK(t[i].status == XCHG_EIO, "task %d: %s", i, xchg_status_name(t[i].status));
  }
  m = cd_metrics(c);
  TU_CHECK(m.failed_decodes == 1 + N && m.entries == 0 && m.bytes_held == 0,
           "failed %lld entries %lld", (long long)m.failed_decodes, (long long)m.entries);
  /* And the next acquirer, with working bytes, decodes. */
  atomic_store(&s.fail_always, 0);
  start_task(&t[0], c, "k", cd_broadcast(&s), NULL, 0);
  pthread_join(t[0].thread, NULL);
  TU_CHECK(t[0].status == XCHG_OK && t[0].values_ok, "after failures: %s", t[0].err.message);
  /* Corrupt bytes: an error, not a crash, and not cached. */
  xchg_buf *bad = xchg_buf_alloc(100);
  memset(xchg_buf_mutable_data(bad), 0xff, 100);
  xchg_chunk chunk = {xchg_buf_data(bad), 100};
  xchg_broadcast_part part = {&chunk, 1, XCHG_STREAM_NONE};
  xchg_broadcast b = {&part, 1, NULL, NULL};
  xchg_cache_holder *h;
  xchg_error err;
  TU_CHECK(xchg_cache_acquire(c, "bad", &b, NULL, &h, &err) != XCHG_OK, "corrupt bytes accepted");
  TU_CHECK(cd_metrics(c).entries == 0, "failed entry kept");
  xchg_buf_unref(bad);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("failure");
}

/* What a holder hands out is its consumer's: released at once, kept past
 * the holder's release, children moved out, streams stopped part way. */
static void test_lifetime(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h;
  xchg_error err;
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  struct ArrowArray kept[STD_BATCHES], moved_child;
  for (int i = 0; i < STD_BATCHES; i++)
    TU_CHECK(xchg_cache_holder_batch(h, i, &kept[i], &err) == XCHG_OK, "%s", err.message);
  struct ArrowArrayStream stream;
  TU_CHECK(xchg_cache_holder_stream(h, &stream, &err) == XCHG_OK, "stream");
  struct ArrowSchema schema;
  TU_CHECK(xchg_cache_holder_schema(h, &schema, &err) == XCHG_OK && schema.n_children == 3 &&
               strcmp(schema.children[2]->name, "d") == 0 && schema.children[2]->dictionary,
           "schema");
  schema.release(&schema);
  xchg_cache_holder_release(h);
  TU_CHECK(cd_metrics(c).entries == 1, "entry freed while its arrays live");
  /* A new acquirer finds it: the arrays handed out keep it. */
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(cd_metrics(c).decodes == 1, "decoded again while arrays were alive");
  xchg_cache_holder_release(h);
  /* Move the dictionary column out of batch 2, release the batch. */
  moved_child = *kept[2].children[2];
  kept[2].children[2]->release = NULL;
  kept[2].release(&kept[2]);
  char msg[256];
  for (int i = 0; i < STD_BATCHES; i++)
    if (i != 2)
      TU_CHECK(cd_check_batch(&kept[i], all_cols, 3, 0, i, std_rows[i], msg, sizeof msg) == 0,
               "kept %d: %s", i, msg);
  /* Release in a scrambled order. */
  kept[4].release(&kept[4]);
  kept[0].release(&kept[0]);
  kept[3].release(&kept[3]);
  kept[1].release(&kept[1]);
  /* The stream after its holder: read two batches, stop. */
  struct ArrowSchema ss;
  TU_CHECK(stream.get_schema(&stream, &ss) == 0 && ss.n_children == 3, "stream schema");
  ss.release(&ss);
  for (int i = 0; i < 2; i++) {
    struct ArrowArray a;
    TU_CHECK(stream.get_next(&stream, &a) == 0 && a.release, "stream batch %d", i);
    if (a.release) {
      TU_CHECK(cd_check_batch(&a, all_cols, 3, 0, i, std_rows[i], msg, sizeof msg) == 0,
               "stream %d: %s", i, msg);
      a.release(&a);
    }
  }
  stream.release(&stream);
  TU_CHECK(cd_metrics(c).entries == 1, "entry freed while a moved child lives");
  const int64_t col2 = 2;
  TU_CHECK(cd_check_batch(&(struct ArrowArray){.length = moved_child.length,
                                               .n_children = 1,
                                               .children = (struct ArrowArray *[]){&moved_child},
                                               .release = moved_child.release},
                          &col2, 1, 0, 2, std_rows[2], msg, sizeof msg) == 0,
           "moved child: %s", msg);
  moved_child.release(&moved_child);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.entries == 0 && m.bytes_held == 0 && m.decodes == 1,
           "entries %lld bytes %lld decodes %lld", (long long)m.entries, (long long)m.bytes_held,
           (long long)m.decodes);
  /* Gone now: the next acquirer decodes again. */
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(cd_metrics(c).decodes == 2, "not decoded again after the entry went");
  xchg_cache_holder_release(h);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("lifetime");
}

/* Arrays outliving the cache itself. */
static void test_outlive_cache(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_NONE);
  xchg_cache *c = new_cache(1, 1 << 30, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h;
  xchg_error err;
  struct ArrowArray a;
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_batch(h, 2, &a, &err) == XCHG_OK, "%s", err.message);
  xchg_cache_holder_release(h);
  TU_CHECK(xchg_cache_acquire(c, "other", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  xchg_cache_holder_release(h); /* retained */
  xchg_cache_free(c);
  char msg[256];
  TU_CHECK(cd_check_batch(&a, all_cols, 3, 0, 2, std_rows[2], msg, sizeof msg) == 0, "%s", msg);
  a.release(&a);
  cd_source_free(&s);
  check_memory("outlive cache");
}

/* Each argument of an acquire that is wrong is XCHG_EINVAL naming that
 * argument, and no holder comes out. */
static void check_acquire_arguments(xchg_cache *c, const xchg_broadcast *good) {
  const int64_t columns[] = {0};
  xchg_broadcast negative = {good->parts, -1, NULL, NULL}, no_parts = {NULL, 2, NULL, NULL};
  xchg_cache_request negative_columns, no_columns;
  xchg_cache_request_init(&negative_columns);
  negative_columns.columns = columns;
  negative_columns.n_columns = -1;
  xchg_cache_request_init(&no_columns);
  no_columns.n_columns = 3;
  const struct {
    xchg_cache *cache;
    const char *key;
    const xchg_broadcast *bytes;
    const xchg_cache_request *req;
    const char *message;
  } cases[] = {
      {NULL, "k", good, NULL, "acquire: the cache is NULL"},
      {c, NULL, good, NULL, "acquire: key is NULL"},
      {c, "k", NULL, NULL, "acquire: bytes is NULL"},
      {c, "k", &negative, NULL, "acquire: bytes->n_parts is negative (-1)"},
      {c, "k", &no_parts, NULL, "acquire: bytes->parts is NULL with 2 parts"},
      {c, "k", good, &negative_columns, "acquire: req->n_columns is negative (-1)"},
      {c, "k", good, &no_columns, "acquire: req->columns is NULL with 3 columns"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    static int not_a_holder;
    xchg_cache_holder *h = (xchg_cache_holder *)&not_a_holder; /* must come back NULL */
    xchg_error err = {""};
    xchg_status st =
        xchg_cache_acquire(cases[i].cache, cases[i].key, cases[i].bytes, cases[i].req, &h, &err);
    TU_CHECK(st == XCHG_EINVAL && !h && !strcmp(err.message, cases[i].message),
             "acquire case %zu: %d, %s, where %s was expected", i, (int)st, err.message,
             cases[i].message);
  }
}

/* A NULL cache, out or holder is XCHG_EINVAL naming it, out (when given)
 * released-state, not a crash; the holder reads on as usual. */
static void test_null_arguments(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_NONE);
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h = NULL;
  xchg_error err;
  struct ArrowArray a;
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  xchg_status st = xchg_cache_create(NULL, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_cache_create: out is NULL"),
           "create(NULL out): %d %s", (int)st, err.message);
  st = xchg_cache_acquire(c, "k", &b, NULL, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "acquire: out is NULL"),
           "acquire(NULL out): %d %s", (int)st, err.message);
  check_acquire_arguments(c, &b);
  memset(&a, 0xff, sizeof a);
  st = xchg_cache_holder_batch(NULL, 0, &a, &err);
  TU_CHECK(st == XCHG_EINVAL && !a.release &&
               !strcmp(err.message, "xchg_cache_holder_batch: the holder is NULL"),
           "batch(NULL holder): %d %s", (int)st, err.message);
  memset(&schema, 0xff, sizeof schema);
  st = xchg_cache_holder_schema(NULL, &schema, &err);
  TU_CHECK(st == XCHG_EINVAL && !schema.release &&
               !strcmp(err.message, "xchg_cache_holder_schema: the holder is NULL"),
           "schema(NULL holder): %d %s", (int)st, err.message);
  memset(&stream, 0xff, sizeof stream);
  st = xchg_cache_holder_stream(NULL, &stream, &err);
  TU_CHECK(st == XCHG_EINVAL && !stream.release &&
               !strcmp(err.message, "xchg_cache_holder_stream: the holder is NULL"),
           "stream(NULL holder): %d %s", (int)st, err.message);
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  st = h ? xchg_cache_holder_batch(h, 0, NULL, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_cache_holder_batch: out is NULL"),
           "batch(NULL out): %d %s", (int)st, err.message);
  st = h ? xchg_cache_holder_schema(h, NULL, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_cache_holder_schema: out is NULL"),
           "schema(NULL out): %d %s", (int)st, err.message);
  st = h ? xchg_cache_holder_stream(h, NULL, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_cache_holder_stream: out is NULL"),
           "stream(NULL out): %d %s", (int)st, err.message);
  char msg[256];
  if (h && xchg_cache_holder_batch(h, 2, &a, &err) == XCHG_OK) {
    TU_CHECK(cd_check_batch(&a, all_cols, 3, 0, 2, std_rows[2], msg, sizeof msg) == 0, "%s", msg);
    a.release(&a);
  } else {
    TU_CHECK(0, "batch 2 after the NULL arguments: %s", err.message);
  }
  xchg_cache_holder_release(h);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("null arguments");
}

/* Sharing off: every acquirer decodes its own copy, same values. */
static void test_sharing_off(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  xchg_cache *c = new_cache(0, 1 << 30, 0);
  enum { N = 4 };
  task t[N];
  for (int i = 0; i < N; i++) start_task(&t[i], c, "k", cd_broadcast(&s), NULL, 0);
  for (int i = 0; i < N; i++) {
    pthread_join(t[i].thread, NULL);
    TU_CHECK(t[i].status == XCHG_OK && t[i].values_ok, "task %d: %s", i, t[i].err.message);
  }
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.decodes == N && m.hits == 0 && m.waits == 0 && m.entries == 0,
           "decodes %lld hits %lld", (long long)m.decodes, (long long)m.hits);
  /* Two holders at once hold different buffers. */
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h1, *h2;
  xchg_error err;
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h1, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h2, &err) == XCHG_OK, "%s", err.message);
  struct ArrowArray a1, a2;
  TU_CHECK(xchg_cache_holder_batch(h1, 0, &a1, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_batch(h2, 0, &a2, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(a1.children[0]->buffers[1] != a2.children[0]->buffers[1], "sharing off shares");
  a1.release(&a1);
  a2.release(&a2);
  xchg_cache_holder_release(h1);
  xchg_cache_holder_release(h2);
  TU_CHECK(cd_metrics(c).entries == 0, "a private entry was retained");
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("sharing off");
}

/* Dictionary-encoded columns are shared: two holders see the same
 * dictionary and index buffers. */
static void test_dictionary_shared(void) {
  mark_memory();
  xchg_cache_request req;
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h1, *h2;
  xchg_error err;
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &h1, &err) == XCHG_OK, "%s", err.message);
  const int64_t d_only = 2;
  TU_CHECK(xchg_cache_acquire(c, "k", &b, cd_request(&req, &d_only, 1, NULL, NULL), &h2, &err) ==
               XCHG_OK,
           "%s", err.message);
  struct ArrowArray a1, a2, a3;
  TU_CHECK(xchg_cache_holder_batch(h1, 0, &a1, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_batch(h2, 0, &a2, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_batch(h2, 3, &a3, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(a2.n_children == 1 && a1.children[2]->buffers[1] == a2.children[0]->buffers[1],
           "indices not shared");
  TU_CHECK(a1.children[2]->dictionary->buffers[2] == a2.children[0]->dictionary->buffers[2],
           "dictionary not shared between holders");
  TU_CHECK(a2.children[0]->dictionary->buffers[2] == a3.children[0]->dictionary->buffers[2],
           "dictionary not shared between batches");
  char msg[256];
  TU_CHECK(cd_check_batch(&a3, &d_only, 1, 0, 3, std_rows[3], msg, sizeof msg) == 0, "%s", msg);
  TU_CHECK(cd_metrics(c).decodes == 1, "decodes %lld", (long long)cd_metrics(c).decodes);
  a1.release(&a1);
  a2.release(&a2);
  a3.release(&a3);
  xchg_cache_holder_release(h1);
  xchg_cache_holder_release(h2);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("dictionary");
}

/* Several IPC streams make one broadcast; a part with another schema is
 * refused; zero-column, zero-row and empty broadcasts. */
static void test_shapes(void) {
  mark_memory();
  xchg_cache_request req;
  const int64_t rows_a[2] = {10, 20}, rows_b[1] = {0}, rows_c[3] = {5, 0, 7};
  xchg_buf *parts[3];
  cd_make_stream(0, rows_a, 2, 0, XCHG_BLOCK_NONE, &parts[0]);
  cd_make_stream(1, rows_b, 1, 0, XCHG_BLOCK_ZSTD, &parts[1]);
  cd_make_stream(2, rows_c, 3, 0, XCHG_BLOCK_NONE, &parts[2]);
  cd_source s;
  cd_source_init(&s, parts, 3, XCHG_STREAM_LZ4_JAVA);
  for (int i = 0; i < 3; i++) {
    xchg_buf *enc = cd_encode(s.parts[i], XCHG_STREAM_LZ4_JAVA);
    xchg_buf_unref(s.parts[i]);
    s.parts[i] = enc;
  }
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *h;
  xchg_error err;
  TU_CHECK(xchg_cache_acquire(c, "multi", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  static const int64_t part_of[6] = {0, 0, 1, 2, 2, 2}, batch_of[6] = {0, 1, 0, 0, 1, 2};
  static const int64_t rows_of[6] = {10, 20, 0, 5, 0, 7};
  TU_CHECK(xchg_cache_holder_num_batches(h) == 6 && xchg_cache_holder_num_rows(h) == 42,
           "batches %lld", (long long)xchg_cache_holder_num_batches(h));
  char msg[256];
  for (int64_t i = 0; i < 6 && i < xchg_cache_holder_num_batches(h); i++) {
    struct ArrowArray a;
    TU_CHECK(xchg_cache_holder_batch(h, i, &a, &err) == XCHG_OK, "%s", err.message);
    TU_CHECK(
        cd_check_batch(&a, all_cols, 3, part_of[i], batch_of[i], rows_of[i], msg, sizeof msg) == 0,
        "multi batch %lld: %s", (long long)i, msg);
    a.release(&a);
  }
  xchg_cache_holder_release(h);
  for (int i = 0; i < 3; i++) xchg_buf_unref(parts[i]);

  /* A part whose schema differs (zero columns) is an error. */
  xchg_buf *zero = NULL;
  const int64_t zrows[3] = {5, 0, 9};
  cd_make_stream(0, zrows, 3, 1, XCHG_BLOCK_NONE, &zero);
  xchg_buf_unref(s.parts[1]);
  s.parts[1] = cd_encode(zero, XCHG_STREAM_LZ4_JAVA);
  TU_CHECK(xchg_cache_acquire(c, "mixed", &b, NULL, &h, &err) == XCHG_EINVAL, "mixed schemas: %s",
           err.message);
  cd_source_free(&s);

  /* Zero-column batches keep their row counts. */
  cd_source_init(&s, &zero, 1, XCHG_STREAM_NONE);
  b = cd_broadcast(&s);
  TU_CHECK(xchg_cache_acquire(c, "zero", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_num_batches(h) == 3 && xchg_cache_holder_num_rows(h) == 14,
           "zero-column layout");
  struct ArrowArray a;
  TU_CHECK(xchg_cache_holder_batch(h, 2, &a, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(a.length == 9 && a.n_children == 0, "zero-column batch: %lld rows", (long long)a.length);
  a.release(&a);
  xchg_cache_holder_release(h);
  cd_source_free(&s);
  xchg_buf_unref(zero);

  /* An IPC stream with no batches, and a broadcast of no streams. */
  xchg_buf *none = NULL;
  cd_make_stream(0, NULL, 0, 0, XCHG_BLOCK_NONE, &none);
  cd_source_init(&s, &none, 1, XCHG_STREAM_NONE);
  b = cd_broadcast(&s);
  TU_CHECK(xchg_cache_acquire(c, "empty", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_num_batches(h) == 0, "empty stream has batches");
  struct ArrowArrayStream st;
  TU_CHECK(xchg_cache_holder_stream(h, &st, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(st.get_next(&st, &a) == 0 && a.release == NULL, "empty stream yields a batch");
  st.release(&st);
  xchg_cache_holder_release(h);
  b.n_parts = 0;
  TU_CHECK(xchg_cache_acquire(c, "nothing", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  struct ArrowSchema sc;
  TU_CHECK(xchg_cache_holder_schema(h, &sc, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(
      xchg_cache_holder_num_batches(h) == 0 && sc.n_children == 0 && strcmp(sc.format, "+s") == 0,
      "no parts");
  sc.release(&sc);
  xchg_cache_holder_release(h);
  /* A column index out of range. */
  const int64_t bad_col = 7;
  b.n_parts = 1;
  TU_CHECK(xchg_cache_acquire(c, "empty", &b, cd_request(&req, &bad_col, 1, NULL, NULL), &h,
                              &err) == XCHG_EINVAL,
           "column 7");
  TU_CHECK(cd_metrics(c).entries == 0, "entries left: %lld", (long long)cd_metrics(c).entries);
  cd_source_free(&s);
  xchg_buf_unref(none);
  xchg_cache_free(c);
  check_memory("shapes");
}

/* Two copies of the IPC stream `one`, back to back. */
static xchg_buf *twice(const xchg_buf *one) {
  size_t n = xchg_buf_size(one);
  xchg_buf *two = xchg_buf_alloc(2 * n);
  if (!two) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  memcpy(xchg_buf_mutable_data(two), xchg_buf_data(one), n);
  memcpy(xchg_buf_mutable_data(two) + n, xchg_buf_data(one), n);
  return two;
}

/* A part is one IPC stream: a second one concatenated into it, plain or
 * inside the part's lz4-java stream, would be lost unseen (the reader
 * stops at the end-of-stream marker), so bytes after the marker are
 * XCHG_EFORMAT naming the part and where they begin, for the acquirer that
 * reads every column and one that reads one; nothing is cached.  The
 * same two streams as two parts are one broadcast of both. */
static void test_concatenated_part(void) {
  mark_memory();
  const int64_t rows[2] = {10, 20}, one_col = 1;
  xchg_buf *one = NULL;
  cd_make_stream(0, rows, 2, 0, XCHG_BLOCK_NONE, &one);
  xchg_buf *two = twice(one);
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_cache_request req;
  xchg_cache_holder *h = NULL;
  xchg_error err;
  char want[160];
  snprintf(want, sizeof want,
           "part 1: bytes follow its IPC stream's end-of-stream marker, from byte %zu (a second "
           "stream?)",
           xchg_buf_size(one));
  xchg_stream_codec codecs[2] = {XCHG_STREAM_NONE, XCHG_STREAM_LZ4_JAVA};
  for (int k = 0; k < 2; k++) {
    xchg_buf *parts[2] = {cd_encode(one, codecs[k]), cd_encode(two, codecs[k])};
    cd_source s;
    cd_source_init(&s, parts, 2, codecs[k]);
    xchg_broadcast b = cd_broadcast(&s);
    for (int narrow = 0; narrow < 2; narrow++) {
      xchg_status st = xchg_cache_acquire(
          c, "two in one", &b, narrow ? cd_request(&req, &one_col, 1, NULL, NULL) : NULL, &h, &err);
      TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, want),
               "codec %d, narrow %d: %d: %s, want %s", (int)codecs[k], narrow, (int)st, err.message,
               want);
      if (st == XCHG_OK) xchg_cache_holder_release(h);
    }
    TU_CHECK(cd_metrics(c).entries == 0, "entries left: %lld", (long long)cd_metrics(c).entries);
    cd_source_free(&s);
    for (int i = 0; i < 2; i++) xchg_buf_unref(parts[i]);
  }
  xchg_buf *parts[2] = {one, one};
  cd_source s;
  cd_source_init(&s, parts, 2, XCHG_STREAM_NONE);
  xchg_broadcast b = cd_broadcast(&s);
  TU_CHECK(xchg_cache_acquire(c, "two parts", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_num_batches(h) == 4 && xchg_cache_holder_num_rows(h) == 60,
           "two parts: %lld batches", (long long)xchg_cache_holder_num_batches(h));
  xchg_cache_holder_release(h);
  cd_source_free(&s);
  xchg_cache_free(c);
  xchg_buf_unref(two);
  xchg_buf_unref(one);
  check_memory("concatenated_part");
}

/* Per-column lazy decode: a narrow reader pays for its columns only, a
 * wider one adds what is missing, a column in flight is waited for. */
static void test_lazy_columns(void) {
  mark_memory();
  xchg_cache_request req;
  cd_source s;
  std_source(&s, XCHG_STREAM_NONE);
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_cache_holder *narrow, *wider, *all, *again;
  xchg_error err;
  const int64_t c0 = 0, c20[2] = {2, 0}, c2 = 2;
  TU_CHECK(xchg_cache_acquire(c, "k", &b, cd_request(&req, &c0, 1, NULL, NULL), &narrow, &err) ==
               XCHG_OK,
           "%s", err.message);
  int64_t k_bytes = cd_metrics(c).bytes_held;
  TU_CHECK(k_bytes >= 16001 * 8 && k_bytes < 16001 * 8 + 4096, "bytes of column k alone: %lld",
           (long long)k_bytes);
  TU_CHECK(
      xchg_cache_acquire(c, "k", &b, cd_request(&req, c20, 2, NULL, NULL), &wider, &err) == XCHG_OK,
      "%s", err.message);
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.decodes == 2 && m.bytes_held > k_bytes, "decodes %lld", (long long)m.decodes);
  struct ArrowArray a, w;
  TU_CHECK(xchg_cache_holder_batch(narrow, 0, &a, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_holder_batch(wider, 0, &w, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(w.n_children == 2 && a.children[0]->buffers[1] == w.children[1]->buffers[1],
           "column k decoded twice");
  a.release(&a);
  w.release(&w);
  TU_CHECK(check_holder(wider, c20, 2) == 0 && check_holder(narrow, &c0, 1) == 0, "lazy values");
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &all, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(
      xchg_cache_acquire(c, "k", &b, cd_request(&req, &c2, 1, NULL, NULL), &again, &err) == XCHG_OK,
      "%s", err.message);
  m = cd_metrics(c);
  TU_CHECK(m.decodes == 3 && m.hits == 1, "decodes %lld hits %lld", (long long)m.decodes,
           (long long)m.hits);
  TU_CHECK(check_holder(all, all_cols, 3) == 0, "all values");
  xchg_cache_holder_release(narrow);
  xchg_cache_holder_release(wider);
  xchg_cache_holder_release(all);
  xchg_cache_holder_release(again);

  /* Concurrent: A decodes k (blocked past the schema); B wants k and s:
   * decodes s itself meanwhile, then waits for k. */
  const int64_t c01[2] = {0, 1};
  atomic_store(&s.gate_after, 2000);
  cd_source_close_gate(&s);
  task ta, tb;
  start_task(&ta, c, "k2", cd_broadcast(&s), &c0, 1);
  TU_CHECK(cd_source_wait_blocked(&s, 1) == 0, "A did not start");
  start_task(&tb, c, "k2", cd_broadcast(&s), c01, 2);
  TU_CHECK(cd_source_wait_blocked(&s, 2) == 0, "B did not start decoding s while A decodes k");
  cd_source_open_gate(&s);
  pthread_join(ta.thread, NULL);
  pthread_join(tb.thread, NULL);
  TU_CHECK(ta.status == XCHG_OK && ta.values_ok && tb.status == XCHG_OK && tb.values_ok, "%s / %s",
           ta.err.message, tb.err.message);
  m = cd_metrics(c);
  /* Two decodes, not three: B decoded s only and took k from A. */
  TU_CHECK(m.decodes == 5 && m.failed_decodes == 0, "decodes %lld", (long long)m.decodes);
  xchg_cache_free(c);
  cd_source_free(&s);

  /* Through a stream codec the reader reads whole bodies; a narrow holder
   * must still keep only its column's bytes. */
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  c = new_cache(1, 0, 0);
  b = cd_broadcast(&s);
  int64_t before = tu_live_bytes();
  TU_CHECK(xchg_cache_acquire(c, "k", &b, cd_request(&req, &c2, 1, NULL, NULL), &narrow, &err) ==
               XCHG_OK,
           "%s", err.message);
  int64_t kept = tu_live_bytes() - before, held = cd_metrics(c).bytes_held;
  TU_CHECK(kept <= held + 4096 && held < 16001 * 4 + 4096 + 256,
           "narrow holder keeps %lld bytes, accounts %lld", (long long)kept, (long long)held);
  TU_CHECK(check_holder(narrow, &c2, 1) == 0, "narrow values through lz4-java");
  TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &all, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(check_holder(all, all_cols, 3) == 0 && cd_metrics(c).decodes == 2, "wide after narrow");
  xchg_cache_holder_release(narrow);
  xchg_cache_holder_release(all);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("lazy columns");
}

/* Retention: released entries stay for later acquirers within the budget,
 * least recently released go first, held ones never; age limit; the
 * accounting callback balances. */
static atomic_long accounted;
static atomic_long accounted_plus;
static void on_bytes(void *ctx, int64_t delta) {
  (void)ctx;
  atomic_fetch_add(&accounted, delta);
  if (delta > 0) atomic_fetch_add(&accounted_plus, delta);
}

static void test_retention(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  xchg_broadcast b = cd_broadcast(&s);
  xchg_error err;
  xchg_cache_holder *h, *held;
  /* Measure one entry. */
  xchg_cache *c = new_cache(1, 0, 0);
  TU_CHECK(xchg_cache_acquire(c, "x", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  int64_t one = cd_metrics(c).bytes_held;
  xchg_cache_holder_release(h);
  xchg_cache_free(c);

  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.retain_bytes = one * 5 / 2;
  o.on_bytes = on_bytes;
  TU_CHECK(xchg_cache_create(&o, &c, NULL) == XCHG_OK, "cannot create a cache");
  atomic_store(&accounted, 0);
  const char *keys[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) {
    TU_CHECK(xchg_cache_acquire(c, keys[i], &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
    xchg_cache_holder_release(h);
  }
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.entries == 2 && m.retained == 2 && m.evictions == 1 && m.bytes_held == 2 * one,
           "entries %lld retained %lld evictions %lld", (long long)m.entries, (long long)m.retained,
           (long long)m.evictions);
  TU_CHECK(atomic_load(&accounted) == m.bytes_held && atomic_load(&accounted_plus) == 3 * one,
           "accounted %ld, held %lld", atomic_load(&accounted), (long long)m.bytes_held);
  /* "a" (oldest) went; "b" and "c" are hits. */
  TU_CHECK(xchg_cache_acquire(c, "b", &b, NULL, &held, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_acquire(c, "c", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  m = cd_metrics(c);
  TU_CHECK(m.decodes == 3 && m.hits == 2, "decodes %lld hits %lld", (long long)m.decodes,
           (long long)m.hits);
  TU_CHECK(check_holder(held, all_cols, 3) == 0, "retained values");
  xchg_cache_holder_release(h);
  /* "a" again: decoded; over budget, "c" (unreferenced) goes, "b" (held) stays. */
  TU_CHECK(xchg_cache_acquire(c, "a", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  m = cd_metrics(c);
  TU_CHECK(m.decodes == 4 && m.entries == 2 && m.evictions == 2,
           "decodes %lld entries %lld evictions %lld", (long long)m.decodes, (long long)m.entries,
           (long long)m.evictions);
  /* A tiny budget never frees a held entry. */
  xchg_cache_holder_release(h);
  xchg_cache_holder_release(held);
  xchg_cache_free(c);
  o.retain_bytes = 1;
  TU_CHECK(xchg_cache_create(&o, &c, NULL) == XCHG_OK, "cannot create a cache");
  TU_CHECK(xchg_cache_acquire(c, "b", &b, NULL, &held, &err) == XCHG_OK, "%s", err.message);
  TU_CHECK(xchg_cache_acquire(c, "c", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  xchg_cache_holder_release(h);
  m = cd_metrics(c);
  TU_CHECK(m.entries == 1 && m.retained == 0, "entries %lld retained %lld", (long long)m.entries,
           (long long)m.retained);
  TU_CHECK(check_holder(held, all_cols, 3) == 0, "held entry values");
  xchg_cache_holder_release(held);
  TU_CHECK(cd_metrics(c).entries == 0, "over budget entry retained");
  xchg_cache_free(c);

  /* Age limit. */
  o.retain_bytes = INT64_MAX;
  o.retain_ms = 40;
  TU_CHECK(xchg_cache_create(&o, &c, NULL) == XCHG_OK, "cannot create a cache");
  TU_CHECK(xchg_cache_acquire(c, "a", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  xchg_cache_holder_release(h);
  TU_CHECK(xchg_cache_acquire(c, "a", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
  xchg_cache_holder_release(h);
  TU_CHECK(cd_metrics(c).decodes == 1 && cd_metrics(c).retained == 1, "within age: decodes %lld",
           (long long)cd_metrics(c).decodes);
  sleep_ms(80);
  xchg_cache_trim(c);
  m = cd_metrics(c);
  TU_CHECK(m.entries == 0 && m.evictions == 1, "aged entry kept: entries %lld",
           (long long)m.entries);
  xchg_cache_free(c);
  /* Ages past INT64_MAX nanoseconds are no limit: 18446744073710 ms (584
   * years) was 448,384 ns once multiplied (overflowed), INT64_MAX ms
   * undefined; the wait check's interval likewise. */
  static const int64_t eons[] = {18446744073710, INT64_MAX};
  for (int i = 0; i < 2; i++) {
    o.retain_ms = o.wait_check_ms = eons[i];
    TU_CHECK(xchg_cache_create(&o, &c, NULL) == XCHG_OK, "cannot create a cache");
    TU_CHECK(xchg_cache_acquire(c, "a", &b, NULL, &h, &err) == XCHG_OK, "%s", err.message);
    xchg_cache_holder_release(h);
    sleep_ms(5);
    xchg_cache_trim(c);
    m = cd_metrics(c);
    TU_CHECK(m.retained == 1 && m.evictions == 0, "retain_ms %lld: retained %lld, evictions %lld",
             (long long)eons[i], (long long)m.retained, (long long)m.evictions);
    xchg_cache_free(c);
  }
  TU_CHECK(atomic_load(&accounted) == 0, "accounting does not balance: %ld",
           atomic_load(&accounted));
  cd_source_free(&s);
  check_memory("retention");
}

/* Derived values: built once, shared, destroyed with the entry; a failed
 * build is retried by a waiter; a waiter can be cancelled. */
typedef struct derive_ctx {
  cd_source *gate_source; /* the build blocks on this source's gate */
  atomic_int builds;
  atomic_int fail_next;
  atomic_int destroyed;
} derive_ctx;

static derive_ctx dctx;

static void destroy_sum(void *value) {
  atomic_fetch_add(&dctx.destroyed, 1);
  free(value);
}

static xchg_status build_sum(void *ctx, const xchg_cache_holder *h, void **value, int64_t *bytes,
                             xchg_error *err) {
  derive_ctx *d = ctx;
  atomic_fetch_add(&d->builds, 1);
  cd_source *g = d->gate_source;
  pthread_mutex_lock(&g->lock);
  atomic_fetch_add(&g->blocked, 1);
  while (g->gate_closed) pthread_cond_wait(&g->gate, &g->lock);
  atomic_fetch_sub(&g->blocked, 1);
  pthread_mutex_unlock(&g->lock);
  if (atomic_exchange(&d->fail_next, 0))
    return xchg_errorf(err, XCHG_EIO, "injected build failure");
  return cd_build_sum(NULL, h, value, bytes, err);
}

typedef struct derive_task {
  pthread_t thread;
  xchg_cache_holder *h;
  atomic_int cancel;
  xchg_status status;
  int64_t value;
} derive_task;

static int derive_cancelled(void *ctx) { return atomic_load(&((derive_task *)ctx)->cancel); }

static void *run_derive(void *arg) {
  derive_task *t = arg;
  void *v;
  xchg_error err;
  xchg_cache_derive_request req;
  xchg_cache_derive_request_init(&req);
  req.build = build_sum;
  req.build_ctx = &dctx;
  req.destroy = destroy_sum;
  req.cancel = derive_cancelled;
  req.cancel_ctx = t;
  t->status = xchg_cache_holder_derive(t->h, "sum", &req, &v, &err);
  if (t->status == XCHG_OK) t->value = *(int64_t *)v;
  return NULL;
}

static void test_derived(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_NONE);
  memset(&dctx, 0, sizeof dctx);
  dctx.gate_source = &s;
  xchg_cache *c = new_cache(1, 0, 0);
  xchg_broadcast b = cd_broadcast(&s);
  int64_t want = 0;
  for (int64_t i = 0; i < STD_BATCHES; i++)
    for (int64_t r = 0; r < std_rows[i]; r++) want += cd_key(0, i, r);
  enum { N = 4 };
  derive_task t[N];
  xchg_error err;
  memset(t, 0, sizeof t);
  for (int i = 0; i < N; i++)
    TU_CHECK(xchg_cache_acquire(c, "k", &b, NULL, &t[i].h, &err) == XCHG_OK, "%s", err.message);
  /* A request without a build function builds nothing. */
  void *none = &none;
  xchg_cache_derive_request no_build;
  xchg_cache_derive_request_init(&no_build);
  TU_CHECK(
      xchg_cache_holder_derive(t[0].h, "sum", &no_build, &none, &err) == XCHG_EINVAL && !none &&
          !strcmp(err.message, "xchg_cache_holder_derive: req->build (the build function) is NULL"),
      "derive without build: %s", err.message);
  none = &none;
  TU_CHECK(xchg_cache_holder_derive(t[0].h, "sum", NULL, &none, &err) == XCHG_EINVAL && !none &&
               !strcmp(err.message, "xchg_cache_holder_derive: req is NULL"),
           "derive without a request: %s", err.message);
  TU_CHECK(xchg_cache_holder_derive(t[0].h, NULL, &no_build, &none, &err) == XCHG_EINVAL &&
               !strcmp(err.message, "xchg_cache_holder_derive: name is NULL"),
           "derive without a name: %s", err.message);
  TU_CHECK(xchg_cache_holder_derive(NULL, "sum", &no_build, &none, &err) == XCHG_EINVAL &&
               !strcmp(err.message, "xchg_cache_holder_derive: the holder is NULL"),
           "derive without a holder: %s", err.message);
  TU_CHECK(xchg_cache_holder_derive(t[0].h, "sum", &no_build, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "value is NULL"),
           "derive without a place for the value: %s", err.message);
  /* First build fails: the builder gets the error, a waiter builds again. */
  atomic_store(&dctx.fail_next, 1);
  cd_source_close_gate(&s);
  pthread_create(&t[0].thread, NULL, run_derive, &t[0]);
  TU_CHECK(cd_source_wait_blocked(&s, 1) == 0, "build did not start");
  for (int i = 1; i < N; i++) pthread_create(&t[i].thread, NULL, run_derive, &t[i]);
  sleep_ms(30);
  atomic_store(&t[3].cancel, 1); /* this waiter gives up */
  pthread_join(t[3].thread, NULL);
  TU_CHECK(t[3].status == XCHG_ECANCELLED, "cancelled waiter: %s", xchg_status_name(t[3].status));
  cd_source_open_gate(&s);
  for (int i = 0; i < 3; i++) pthread_join(t[i].thread, NULL);
  TU_CHECK(t[0].status == XCHG_EIO, "failed builder: %s", xchg_status_name(t[0].status));
  TU_CHECK(
      t[1].status == XCHG_OK && t[1].value == want && t[2].status == XCHG_OK && t[2].value == want,
      "waiters' values");
  TU_CHECK(atomic_load(&dctx.builds) == 2, "builds %d", atomic_load(&dctx.builds));
  /* Later: the value is there. */
  run_derive(&t[0]);
  TU_CHECK(t[0].status == XCHG_OK && t[0].value == want && atomic_load(&dctx.builds) == 2,
           "cached value");
  for (int i = 0; i < N - 1; i++) xchg_cache_holder_release(t[i].h);
  TU_CHECK(atomic_load(&dctx.destroyed) == 0, "destroyed while held");
  xchg_cache_holder_release(t[N - 1].h);
  TU_CHECK(atomic_load(&dctx.destroyed) == 1, "destructor ran %d times",
           atomic_load(&dctx.destroyed));
  xchg_cache_metrics m = cd_metrics(c);
  TU_CHECK(m.derived_builds == 2 && m.cancellations == 1, "derived builds %lld cancellations %lld",
           (long long)m.derived_builds, (long long)m.cancellations);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("derived");
}

/* A slow decode: waiters keep checking cancel at the interval and all get
 * the one decode. */
static void test_slow_decode(void) {
  mark_memory();
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  atomic_store(&s.delay_us, 2000); /* ~150 ms in all */
  xchg_cache *c = new_cache(1, 0, 0);
  enum { N = 3 };
  task t[N];
  for (int i = 0; i < N; i++) start_task(&t[i], c, "slow", cd_broadcast(&s), NULL, 0);
  for (int i = 0; i < N; i++) {
    pthread_join(t[i].thread, NULL);
    TU_CHECK(t[i].status == XCHG_OK && t[i].values_ok, "task %d: %s", i, t[i].err.message);
  }
  TU_CHECK(cd_metrics(c).decodes == 1 && cd_metrics(c).waits == N - 1, "decodes %lld waits %lld",
           (long long)cd_metrics(c).decodes, (long long)cd_metrics(c).waits);
  xchg_cache_free(c);
  cd_source_free(&s);
  check_memory("slow decode");
}

/* Buffer allocations failing at every point of a decode (full, and narrow
 * with its copy) and of a later wider decode: an error or right values,
 * never a leak, never a cached failure. */
static void test_alloc_failures(void) {
  xchg_cache_request req;
  cd_source s;
  std_source(&s, XCHG_STREAM_LZ4_JAVA);
  mark_memory(); /* with the source's bytes */
  xchg_broadcast b = cd_broadcast(&s);
  const int64_t c1 = 1;
  int errors = 0, successes = 0;
  for (int64_t n = 1; n < 400; n++) {
    xchg_cache *c = new_cache(1, 0, 0);
    xchg_cache_holder *narrow = NULL, *all = NULL;
    xchg_error err;
    xchg_buf_fail_nth_alloc(n);
    xchg_status st1 =
        xchg_cache_acquire(c, "k", &b, cd_request(&req, &c1, 1, NULL, NULL), &narrow, &err);
    xchg_status st2 = xchg_cache_acquire(c, "k", &b, NULL, &all, &err);
    xchg_buf_fail_nth_alloc(0);
    TU_CHECK(st1 == XCHG_OK || st1 == XCHG_ENOMEM || st1 == XCHG_EIO, "n %lld: %s", (long long)n,
             xchg_status_name(st1));
    TU_CHECK(st2 == XCHG_OK || st2 == XCHG_ENOMEM || st2 == XCHG_EIO, "n %lld: %s", (long long)n,
             xchg_status_name(st2));
    if (st1 == XCHG_OK)
      TU_CHECK(check_holder(narrow, &c1, 1) == 0, "n %lld: narrow values", (long long)n);
    if (st2 == XCHG_OK)
      TU_CHECK(check_holder(all, all_cols, 3) == 0, "n %lld: values", (long long)n);
    errors += (st1 != XCHG_OK) + (st2 != XCHG_OK);
    successes += (st1 == XCHG_OK) + (st2 == XCHG_OK);
    xchg_cache_holder_release(narrow);
    xchg_cache_holder_release(all);
    TU_CHECK(cd_metrics(c).entries == 0, "n %lld: entry left", (long long)n);
    xchg_cache_free(c);
    check_memory("allocation failures");
    if (st1 == XCHG_OK && st2 == XCHG_OK) break; /* past the last allocation */
  }
  TU_CHECK(errors > 10 && successes > 0, "allocation failures not reached: %d errors", errors);
  cd_source_free(&s);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"codecs", test_codecs},
      {"single_flight", test_single_flight},
      {"cancel_waiter", test_cancel_waiter},
      {"cancel_decoder", test_cancel_decoder},
      {"failure", test_failure},
      {"lifetime", test_lifetime},
      {"outlive_cache", test_outlive_cache},
      {"sharing_off", test_sharing_off},
      {"dictionary_shared", test_dictionary_shared},
      {"shapes", test_shapes},
      {"concatenated_part", test_concatenated_part},
      {"lazy_columns", test_lazy_columns},
      {"retention", test_retention},
      {"derived", test_derived},
      {"slow_decode", test_slow_decode},
      {"alloc_failures", test_alloc_failures},
      {"null_arguments", test_null_arguments},
  };
  return TU_MAIN(argc, argv, "cache", cases);
}
