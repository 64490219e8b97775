/* pool.c — see xchg/pool.h and pool_internal.h.
 *
 * Every loop is published at the tail of the pool's list; workers and the
 * loop's starter claim indices with an atomic counter, so there is no
 * per-item queue node or lock.  The starter waits for the loop's last index
 * to finish, and for every worker to let go of it, then unlinks it.
 *
 * A thread about to sleep (a starter waiting for a loop's last indices, a
 * worker with nothing to claim) first spins for up to SPIN_NS, yielding
 * the core at each turn: those indices are most often microseconds from
 * done, and the next loop as near, while a sleep and its wake-up cost tens
 * of microseconds on a busy host, more than a small loop's whole work.
 * Yielding rather than pausing lets the thread it waits for run when the
 * two share a core (a host with more threads than cores); pausing there
 * made two-thread reads slower, not faster.  A waiting starter helps with
 * any loop started meanwhile: its spin ends when one is, and a start wakes
 * it from its sleep, as the workers are woken (loops that start one
 * another, as the shuffle reader's relays do, would otherwise wait for a
 * worker to be free). */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/args.h"
#include "base/pool_internal.h"
#include "base/thread.h"

typedef pool_loop job;

struct xchg_pool {
  int threads;
  pthread_t *workers;
  pthread_mutex_t lock;
  pthread_cond_t work; /* a job was published, or shutdown */
  pthread_cond_t done; /* some job finished its last index */
  job *jobs;           /* started loops not yet finished, oldest first */
  int shutdown;
  _Atomic int64_t started; /* loops published so far, for a spinning worker to see one */
};

/* How long a thread spins before it sleeps: about one small loop's work. */
#define SPIN_NS 50000

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Spins, without the lock, until *counter moves off `value` (until_moved)
 * or reaches it (!until_moved), or the pool's count of loops started moves
 * off `started` (-1: not watched), or SPIN_NS pass.  Only a hint: the
 * caller checks again under the lock. */
static void spin_on(const xchg_pool *p, int64_t started, const _Atomic int64_t *counter,
                    int64_t value, int until_moved) {
  int64_t deadline = 0;
  for (int i = 1;; i++) {
    int64_t v = atomic_load_explicit(counter, memory_order_acquire);
    if (until_moved ? v != value : v >= value) return;
    if (started >= 0 && atomic_load_explicit(&p->started, memory_order_relaxed) != started) return;
    sched_yield();
    if (i % 8 != 0) continue;
    int64_t t = now_ns();
    if (deadline == 0) deadline = t + SPIN_NS;
    if (t >= deadline) return;
  }
}

/* Claims and runs indices of j until none are left.  Returns non-zero when
 * this thread finished the job's last index. */
static int work_on(job *j) {
  int64_t i, done_here = 0;
  while ((i = atomic_fetch_add(&j->next, 1)) < j->n) {
    j->fn(j->ctx, i);
    done_here++;
  }
  return done_here && atomic_fetch_add(&j->finished, done_here) + done_here == j->n;
}

/* The oldest loop with indices left to claim, so that loops finish in
 * about the order their starters will ask for them. */
static job *claimable_job(xchg_pool *p) {
  for (job *j = p->jobs; j; j = j->link)
    if (atomic_load(&j->next) < j->n) return j;
  return NULL;
}

/* Works on j as a guest (any thread but its starter); called and returns
 * with the lock held. */
static void help_with(xchg_pool *p, job *j) {
  j->workers++; /* the starter must not free j while we may touch it */
  pthread_mutex_unlock(&p->lock);
  int last = work_on(j);
  pthread_mutex_lock(&p->lock);
  if (--j->workers == 0 || last) pthread_cond_broadcast(&p->done);
}

static void *worker_main(void *arg) {
  xchg_pool *p = arg;
  int spun = 0; /* since the last loop this worker took part in */
  pthread_mutex_lock(&p->lock);
  for (;;) {
    job *j = claimable_job(p);
    if (j) {
      help_with(p, j);
      spun = 0;
    } else if (p->shutdown) {
      break;
    } else if (!spun) {
      int64_t seen = atomic_load(&p->started);
      pthread_mutex_unlock(&p->lock);
      spin_on(p, -1, &p->started, seen, 1);
      pthread_mutex_lock(&p->lock);
      spun = 1;
    } else {
      pthread_cond_wait(&p->work, &p->lock);
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

static int online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

xchg_status xchg_pool_create(int threads, xchg_pool **out, xchg_error *err) {
  if (!out) return base_null_argument("xchg_pool_create", "out", err);
  *out = NULL;
  if (threads > XCHG_POOL_MAX_THREADS) /* tens of thousands were started before one failed */
    return xchg_errorf(err, XCHG_EINVAL,
                       "xchg_pool_create: %d threads, more than XCHG_POOL_MAX_THREADS (%d)",
                       threads, XCHG_POOL_MAX_THREADS);
  xchg_pool *p = calloc(1, sizeof *p);
  if (!p) return xchg_errorf(err, XCHG_ENOMEM, "out of memory creating a pool");
  p->threads = threads > 0 ? threads : online_cores();
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->started, 0);
  if (p->threads > 1 && !(p->workers = calloc((size_t)p->threads - 1, sizeof(pthread_t)))) {
    free(p);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory creating a pool of %d threads", threads);
  }
  for (int i = 0; i < p->threads - 1; i++) {
    int e = base_thread_create(&p->workers[i], worker_main, p);
    if (e != 0) {
      int wanted = p->threads;
      p->threads = i + 1; /* keep the workers that started, to join them */
      xchg_pool_free(p);
      return xchg_errorf(err, XCHG_ENOMEM, "cannot start pool thread %d of %d: %s", i + 2, wanted,
                         strerror(e));
    }
  }
  *out = p;
  return XCHG_OK;
}

/* Atomic: xchg_pool_free compares with it from any thread, which may run
 * while another one creates it (xchg_pool_default). */
static _Atomic(xchg_pool *) default_pool;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

void xchg_pool_free(xchg_pool *p) {
  /* The process-wide pool lives as long as the process: every user of
   * xchg_pool_default shares it. */
  if (!p || p == atomic_load_explicit(&default_pool, memory_order_acquire)) return;
  pthread_mutex_lock(&p->lock);
  p->shutdown = 1;
  atomic_fetch_add(&p->started, 1); /* wakes spinning workers too */
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->threads - 1; i++) pthread_join(p->workers[i], NULL);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  free(p->workers);
  free(p);
}

xchg_status xchg_pool_parse_env(int *threads, xchg_error *err) {
  if (!threads) return base_null_argument("xchg_pool_parse_env", "threads", err);
  *threads = 0;
  const char *env = getenv("XCHG_THREADS");
  if (env == NULL || *env == '\0') return XCHG_OK;
  char *end;
  errno = 0;
  long v = strtol(env, &end, 10);
  /* Digits alone: strtol would also take leading blanks and a sign. */
  if (!isdigit((unsigned char)*env) || *end != '\0' || errno != 0 || v > XCHG_POOL_MAX_THREADS)
    return xchg_errorf(err, XCHG_EINVAL,
                       "XCHG_THREADS must be an integer from 0 (one thread per core, as when "
                       "unset) to %d, not '%.64s'",
                       XCHG_POOL_MAX_THREADS, env);
  *threads = (int)v;
  return XCHG_OK;
}

static void create_default(void) {
  int threads;
  xchg_error ignored;
  if (xchg_pool_parse_env(&threads, &ignored) != XCHG_OK) threads = 0; /* one per core */
  xchg_pool *p = NULL;
  if (xchg_pool_create(threads, &p, NULL) != XCHG_OK) p = NULL;
  atomic_store_explicit(&default_pool, p, memory_order_release);
}

xchg_pool *xchg_pool_default(void) {
  pthread_once(&default_once, create_default);
  return atomic_load_explicit(&default_pool, memory_order_acquire);
}

int xchg_pool_threads(const xchg_pool *p) { return p ? p->threads : 1; }

static void unlink_job(xchg_pool *p, job *j) {
  for (job **at = &p->jobs; *at; at = &(*at)->link)
    if (*at == j) {
      *at = j->link;
      return;
    }
}

void pool_loop_start(xchg_pool *p, job *j, int64_t n, xchg_task_fn fn, void *ctx) {
  j->fn = fn;
  j->ctx = ctx;
  j->n = n > 0 ? n : 0;
  atomic_init(&j->next, 0);
  atomic_init(&j->finished, 0);
  j->workers = 0;
  j->link = NULL;
  j->published = p && p->threads > 1 && j->n > 0;
  if (!j->published) return;
  pthread_mutex_lock(&p->lock);
  job **tail = &p->jobs;
  while (*tail) tail = &(*tail)->link;
  *tail = j;
  atomic_fetch_add(&p->started, 1);
  pthread_cond_broadcast(&p->work);
  pthread_cond_broadcast(&p->done); /* a starter waiting for its loop helps with this one */
  pthread_mutex_unlock(&p->lock);
}

/* Waits for the other threads working on j to finish it, helping with other
 * loops meanwhile, then takes it off the list. */
static void wait_for_others(xchg_pool *p, job *j) {
  if (!j->published) return;
  int spun = 0; /* since this thread last helped */
  pthread_mutex_lock(&p->lock);
  while (atomic_load(&j->finished) < j->n || j->workers > 0) {
    job *other = claimable_job(p);
    if (other) {
      help_with(p, other);
      spun = 0;
    } else if (!spun) {
      int64_t seen = atomic_load(&p->started);
      pthread_mutex_unlock(&p->lock);
      spin_on(p, seen, &j->finished, j->n, 0); /* ... or a loop to help with comes */
      pthread_mutex_lock(&p->lock);
      spun = 1;
    } else {
      pthread_cond_wait(&p->done, &p->lock);
    }
  }
  unlink_job(p, j);
  pthread_mutex_unlock(&p->lock);
}

void pool_loop_finish(xchg_pool *p, job *j) {
  work_on(j);
  wait_for_others(p, j);
}

void pool_loop_cancel(xchg_pool *p, job *j) {
  int64_t claimed = atomic_exchange(&j->next, j->n);
  if (claimed < j->n) atomic_fetch_add(&j->finished, j->n - claimed);
  wait_for_others(p, j);
}

void xchg_pool_run(xchg_pool *p, int64_t n, xchg_task_fn fn, void *ctx) {
  if (n == 1) { /* not worth a hand-off: the caller would only wait */
    fn(ctx, 0);
    return;
  }
  job j;
  pool_loop_start(p, &j, n, fn, ctx);
  pool_loop_finish(p, &j);
}
