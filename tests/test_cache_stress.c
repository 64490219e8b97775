/* test_cache_stress.c — the shared cache under load: many threads, hundreds
 * of keys, three caches (sharing with a small retention budget, sharing
 * without retention, sharing off), random column sets, random cancels,
 * injected decode failures, derived values, and consumers that keep what
 * they read past their holder's release and drop it in random order.  Every
 * value read is checked; at the end every buffer is gone.  Meant for
 * ThreadSanitizer and AddressSanitizer builds (ctest -L tsan). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cache_data.h"
#include "support/testutil.h"
#include "xchg/cache.h"

#define N_THREADS 8
#define N_KEYS 300
#define ITERATIONS 250
#define KEPT_MAX 16

/* A failure seen on a worker thread (the harness counts it atomically). */

typedef struct key_data {
  char name[16];
  cd_source src;
  int64_t n_parts;
  int64_t n_batches[2];
  int64_t rows[2][3];
  int64_t sum_k; /* of column k over every batch */
} key_data;

static key_data keys[N_KEYS];
static xchg_cache *caches[3];
/* Every worker starts on the same slow key of the shared cache at once, so
 * that some acquisitions wait for another's decode however the threads are
 * scheduled later (left to chance, a loaded ThreadSanitizer run saw none). */
static pthread_barrier_t start_together;

static uint64_t next_random(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void make_key(int i) {
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_NONE, XCHG_STREAM_LZ4_JAVA,
                                             XCHG_STREAM_ZSTD};
  key_data *k = &keys[i];
  uint64_t rng = (uint64_t)i * 7919;
  snprintf(k->name, sizeof k->name, "bc_%d", i);
  k->n_parts = 1 + (int64_t)(next_random(&rng) % 2);
  xchg_buf *parts[2];
  xchg_stream_codec codec = codecs[i % 3];
  for (int64_t p = 0; p < k->n_parts; p++) {
    k->n_batches[p] = 1 + (int64_t)(next_random(&rng) % 3);
    for (int64_t b = 0; b < k->n_batches[p]; b++) {
      k->rows[p][b] = (int64_t)(next_random(&rng) % 300);
      for (int64_t r = 0; r < k->rows[p][b]; r++) k->sum_k += cd_key(p, b, r);
    }
    xchg_buf *ipc;
    if (cd_make_stream(p, k->rows[p], k->n_batches[p], 0,
                       i % 5 == 0 ? XCHG_BLOCK_ZSTD : XCHG_BLOCK_NONE, &ipc) != 0)
      exit(1);
    parts[p] = cd_encode(ipc, codec);
    xchg_buf_unref(ipc);
  }
  cd_source_init(&k->src, parts, k->n_parts, codec);
  for (int64_t p = 0; p < k->n_parts; p++) xchg_buf_unref(parts[p]);
  atomic_store(&k->src.fail_permille, 80);
  atomic_store(&k->src.fail_after, 100);
  if (i < 16) atomic_store(&k->src.delay_us, 2000);
}

/* Which part and batch of the key the holder's batch i is. */
static void locate(const key_data *k, int64_t i, int64_t *part, int64_t *batch) {
  *part = 0;
  while (i >= k->n_batches[*part]) i -= k->n_batches[(*part)++];
  *batch = i;
}

typedef struct cancel_state {
  int64_t countdown; /* cancelled after this many checks; < 0 never */
} cancel_state;

static int is_cancelled(void *ctx) {
  cancel_state *c = ctx;
  return c->countdown >= 0 && c->countdown-- == 0;
}

typedef struct worker {
  pthread_t thread;
  uint64_t rng;
  struct ArrowArray kept[KEPT_MAX];
  int n_kept;
  int64_t ok, errors;
} worker;

static void drop_random_kept(worker *w) {
  int i = (int)(next_random(&w->rng) % (uint64_t)w->n_kept);
  w->kept[i].release(&w->kept[i]);
  w->kept[i] = w->kept[--w->n_kept];
}

static void keep(worker *w, struct ArrowArray *a) {
  if (w->n_kept == KEPT_MAX) drop_random_kept(w);
  w->kept[w->n_kept++] = *a;
}

static void read_holder(worker *w, const key_data *k, xchg_cache_holder *h, const int64_t *cols,
                        int64_t n_cols) {
  char msg[256];
  int64_t n = xchg_cache_holder_num_batches(h),
          want = k->n_batches[0] + (k->n_parts > 1 ? k->n_batches[1] : 0);
  TU_CHECK(n == want, "%s: %lld batches, %lld expected", k->name, (long long)n, (long long)want);
  for (int64_t i = 0; i < n && i < want; i++) {
    struct ArrowArray a;
    xchg_error err;
    if (xchg_cache_holder_batch(h, i, &a, &err) != XCHG_OK) {
      TU_CHECK(0, "%s: batch: %s", k->name, err.message);
      continue;
    }
    int64_t part, batch;
    locate(k, i, &part, &batch);
    TU_CHECK(
        cd_check_batch(&a, cols, n_cols, part, batch, k->rows[part][batch], msg, sizeof msg) == 0,
        "%s batch %lld: %s", k->name, (long long)i, msg);
    if (next_random(&w->rng) % 4 == 0 && a.n_children > 0) {
      /* Keep one column alone, moved out of its batch. */
      struct ArrowArray child = *a.children[0];
      a.children[0]->release = NULL;
      a.release(&a);
      keep(w, &child);
    } else if (next_random(&w->rng) % 3 == 0) {
      keep(w, &a);
    } else {
      a.release(&a);
    }
  }
}

static void *run_worker(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(&start_together);
  for (int it = 0; it < ITERATIONS; it++) {
    int together = it == 0; /* key 0, shared cache, every column, no cancel */
    /* Mostly a few hot keys, so that tasks overlap; now and then any. */
    uint64_t pick = next_random(&w->rng);
    key_data *k = &keys[together ? 0 : pick % 4 ? pick % 16 : pick % N_KEYS];
    xchg_cache *c = caches[together ? 0 : next_random(&w->rng) % 3];
    int64_t cols[CD_COLUMNS], n_cols = 0;
    int all = together || next_random(&w->rng) % 3 == 0;
    if (!all) {
      uint64_t mask = next_random(&w->rng);
      for (int64_t j = 0; j < CD_COLUMNS; j++)
        if (mask >> j & 1) cols[n_cols++] = j;
    }
    cancel_state cs = {
        !together && next_random(&w->rng) % 8 == 0 ? (int64_t)(next_random(&w->rng) % 4) : -1};
    xchg_broadcast b = cd_broadcast(&k->src);
    xchg_cache_holder *h;
    xchg_error err;
    xchg_cache_request req;
    xchg_status st = xchg_cache_acquire(
        c, k->name, &b, cd_request(&req, all ? NULL : cols, n_cols, is_cancelled, &cs), &h, &err);
    if (st != XCHG_OK) {
      TU_CHECK(st == XCHG_EIO || st == XCHG_ECANCELLED, "%s: unexpected %s: %s", k->name,
               xchg_status_name(st), err.message);
      w->errors++;
      continue;
    }
    w->ok++;
    if (all) {
      for (int64_t j = 0; j < CD_COLUMNS; j++) cols[j] = j;
      n_cols = CD_COLUMNS;
    }
    read_holder(w, k, h, cols, n_cols);
    if (n_cols > 0 && cols[0] == 0 && next_random(&w->rng) % 4 == 0) {
      void *v;
      cancel_state dcs = {next_random(&w->rng) % 4 == 0 ? 1 : -1};
      xchg_cache_derive_request dreq;
      xchg_cache_derive_request_init(&dreq);
      dreq.build = cd_build_sum;
      dreq.destroy = free;
      dreq.cancel = is_cancelled;
      dreq.cancel_ctx = &dcs;
      st = xchg_cache_holder_derive(h, "sum_k", &dreq, &v, &err);
      TU_CHECK(st != XCHG_OK || *(int64_t *)v == k->sum_k, "%s: derived sum", k->name);
      TU_CHECK(st == XCHG_OK || st == XCHG_ECANCELLED, "%s: derived: %s", k->name, err.message);
    }
    if (next_random(&w->rng) % 5 == 0) {
      /* A stream read part way after the holder is gone. */
      struct ArrowArrayStream s;
      TU_CHECK(xchg_cache_holder_stream(h, &s, &err) == XCHG_OK, "stream: %s", err.message);
      xchg_cache_holder_release(h);
      struct ArrowArray a;
      if (s.get_next(&s, &a) == 0 && a.release) keep(w, &a);
      s.release(&s);
    } else {
      xchg_cache_holder_release(h);
    }
    if (w->n_kept > 0 && next_random(&w->rng) % 2 == 0) drop_random_kept(w);
  }
  while (w->n_kept > 0) drop_random_kept(w);
  return NULL;
}

static void stress(void) {
  int64_t live0 = xchg_buf_live_count(), bytes0 = tu_live_bytes();
  for (int i = 0; i < N_KEYS; i++) make_key(i);
  int64_t live_data = xchg_buf_live_count(), bytes_data = tu_live_bytes();
  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.wait_check_ms = 1;
  o.retain_bytes = 256 << 10;
  TU_CHECK(xchg_cache_create(&o, &caches[0], NULL) == XCHG_OK, "cannot create a cache");
  o.retain_bytes = 0;
  TU_CHECK(xchg_cache_create(&o, &caches[1], NULL) == XCHG_OK, "cannot create a cache");
  o.sharing = 0;
  TU_CHECK(xchg_cache_create(&o, &caches[2], NULL) == XCHG_OK, "cannot create a cache");
  worker w[N_THREADS];
  memset(w, 0, sizeof w);
  pthread_barrier_init(&start_together, NULL, N_THREADS);
  for (int i = 0; i < N_THREADS; i++) {
    w[i].rng = (uint64_t)i * 104729 + 1;
    pthread_create(&w[i].thread, NULL, run_worker, &w[i]);
  }
  int64_t ok = 0, errors = 0;
  for (int i = 0; i < N_THREADS; i++) {
    pthread_join(w[i].thread, NULL);
    ok += w[i].ok;
    errors += w[i].errors;
  }
  pthread_barrier_destroy(&start_together);
  xchg_cache_metrics m[3];
  for (int i = 0; i < 3; i++) xchg_cache_get_metrics(caches[i], &m[i]);
  printf(
      "acquired %lld, failed or cancelled %lld; shared cache: %lld decodes (%lld failed), %lld hits, "
      "%lld waits, %lld evictions\n",
      (long long)ok, (long long)errors, (long long)m[0].decodes, (long long)m[0].failed_decodes,
      (long long)m[0].hits, (long long)m[0].waits, (long long)m[0].evictions);
  TU_CHECK(m[1].entries == 0 && m[2].entries == 0 && m[1].bytes_held == 0,
           "entries left without retention: %lld / %lld", (long long)m[1].entries,
           (long long)m[2].entries);
  TU_CHECK(m[0].entries == m[0].retained, "held entries left: %lld of %lld",
           (long long)m[0].entries, (long long)m[0].retained);
  TU_CHECK(m[0].bytes_held <= 256 << 10, "over the retention budget: %lld",
           (long long)m[0].bytes_held);
  TU_CHECK(ok != 0 && errors != 0 && m[0].failed_decodes != 0 && m[0].hits != 0 && m[0].waits != 0,
           "the stress did not stress: ok %lld errors %lld", (long long)ok, (long long)errors);
  for (int i = 0; i < 3; i++) xchg_cache_free(caches[i]);
  TU_CHECK(xchg_buf_live_count() == live_data && tu_live_bytes() == bytes_data,
           "leak: %lld buffers / %lld bytes live, %lld / %lld expected",
           (long long)xchg_buf_live_count(), (long long)tu_live_bytes(), (long long)live_data,
           (long long)bytes_data);
  for (int i = 0; i < N_KEYS; i++) cd_source_free(&keys[i].src);
  TU_CHECK(xchg_buf_live_count() == live0 && tu_live_bytes() == bytes0, "test data leaked");
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"threads_at_random", stress}};
  return TU_MAIN(argc, argv, "cache_stress", cases);
}
