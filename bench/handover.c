/* handover.c — see handover.h. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "handover.h"
#include "stats.h"

struct bench_handover {
  int64_t batches;
  int ahead;
  bench_handover_work work;
  uint8_t *slab, **free_dst;
  int n_free;
  pthread_mutex_t lock;        /* of free_dst and n_free */
  uint8_t *_Atomic *filled;    /* per batch, its destination once filled */
  _Atomic int64_t next, taken; /* the next batch to claim; the batches given back */
  pthread_barrier_t go;
};

/* `ahead` destinations are enough: a batch is claimed only below taken +
 * ahead, and every batch below taken has been given back, so fewer than
 * ahead are out when one is claimed.  They are cut from one allocation at
 * strides that are not a multiple of a page, so that they do not share the
 * cache's sets as page-aligned blocks of megabytes would, and written once
 * so that no timed run pays for their pages. */
bench_handover *bench_handover_new(int64_t batches, size_t room, int ahead,
                                   bench_handover_work work) {
  bench_handover *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  pthread_mutex_init(&h->lock, NULL);
  h->batches = batches;
  h->ahead = ahead;
  h->work = work;
  size_t stride = ((room + 4095) & ~(size_t)4095) + 17 * 64;
  h->slab = malloc(stride * (size_t)ahead);
  h->free_dst = calloc((size_t)ahead, sizeof *h->free_dst);
  h->filled = calloc((size_t)(batches ? batches : 1), sizeof *h->filled);
  if (!h->slab || !h->free_dst || !h->filled) {
    bench_handover_free(h);
    return NULL;
  }
  memset(h->slab, 1, stride * (size_t)ahead);
  for (; h->n_free < ahead; h->n_free++)
    h->free_dst[h->n_free] = h->slab + stride * (size_t)h->n_free;
  return h;
}

void bench_handover_free(bench_handover *h) {
  if (!h) return;
  pthread_mutex_destroy(&h->lock);
  free(h->slab);
  free(h->free_dst);
  free((void *)h->filled);
  free(h);
}

/* Claims and fills the next batch, on thread k, when it is within ahead of
 * the one taken: 1 when it did, 0 when none may be filled now, -1 when
 * every batch is claimed. */
static int fill_next(bench_handover *h, int k) {
  int64_t g = atomic_load(&h->next);
  if (g >= h->batches) return -1;
  if (g >= atomic_load(&h->taken) + h->ahead || !atomic_compare_exchange_weak(&h->next, &g, g + 1))
    return 0;
  pthread_mutex_lock(&h->lock);
  uint8_t *dst = h->free_dst[--h->n_free];
  pthread_mutex_unlock(&h->lock);
  h->work.fill(h->work.ctx, k, g, dst);
  atomic_store_explicit(&h->filled[g], dst, memory_order_release);
  return 1;
}

typedef struct filler {
  bench_handover *h;
  int k;
} filler;

static void *fill_all(void *arg) {
  const filler *f = arg;
  pthread_barrier_wait(&f->h->go);
  for (int got; (got = fill_next(f->h, f->k)) >= 0;)
    if (got == 0) sched_yield();
  return NULL;
}

/* The caller's part for batch g: waits for it, filling others meanwhile,
 * takes it and gives its destination back. */
static void take_batch(bench_handover *h, int64_t g) {
  uint8_t *dst;
  while (!(dst = atomic_load_explicit(&h->filled[g], memory_order_acquire)))
    if (fill_next(h, 0) <= 0) sched_yield();
  if (h->work.take) h->work.take(h->work.ctx, g, dst);
  atomic_store(&h->filled[g], NULL);
  pthread_mutex_lock(&h->lock);
  h->free_dst[h->n_free++] = dst;
  pthread_mutex_unlock(&h->lock);
  atomic_store(&h->taken, g + 1);
}

int64_t bench_handover_once(bench_handover *h, int threads) {
  pthread_t ids[BENCH_MAX_THREADS];
  filler fillers[BENCH_MAX_THREADS];
  atomic_store(&h->next, 0);
  atomic_store(&h->taken, 0);
  pthread_barrier_init(&h->go, NULL, (unsigned)threads);
  for (int k = 1; k < threads; k++) {
    fillers[k] = (filler){h, k};
    bench_start_thread(&ids[k], fill_all, &fillers[k], k + 1, threads);
  }
  pthread_barrier_wait(&h->go);
  int64_t start = bench_now_ns();
  for (int64_t g = 0; g < h->batches; g++) take_batch(h, g);
  for (int k = 1; k < threads; k++) pthread_join(ids[k], NULL);
  int64_t ns = bench_now_ns() - start;
  pthread_barrier_destroy(&h->go);
  return ns;
}
