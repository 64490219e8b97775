/* tests/test_pool.c — the thread pool: every index runs exactly once, loops
 * from many caller threads at once, pools of one thread run inline,
 * background loops (pool_internal.h) finish and cancel cleanly, workers
 * leave asynchronous signals to the application's threads, and destroy
 * waits for the workers.  Meant to run under ThreadSanitizer too
 * (`ctest -L tsan` in a -DXCHG_TSAN=ON build). */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pool_internal.h"
#include "support/testutil.h"
#include "xchg/pool.h"

typedef struct counts {
  _Atomic int *hits;
  _Atomic int64_t sum;
  pthread_t caller;
  _Atomic int off_caller; /* indices run on a thread other than the caller */
} counts;

static void hit(void *ctx, int64_t i) {
  counts *c = ctx;
  atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_add(&c->sum, i);
  if (!pthread_equal(pthread_self(), c->caller)) atomic_store(&c->off_caller, 1);
}

static int run_loop(xchg_pool *pool, int64_t n, int *off_caller) {
  counts c;
  c.hits = calloc((size_t)n + 1, sizeof(*c.hits));
  atomic_init(&c.sum, 0);
  atomic_init(&c.off_caller, 0);
  c.caller = pthread_self();
  xchg_pool_run(pool, n, hit, &c);
  int ok = atomic_load(&c.sum) == n * (n - 1) / 2;
  for (int64_t i = 0; i < n; i++) ok &= atomic_load(&c.hits[i]) == 1;
  if (off_caller) *off_caller = atomic_load(&c.off_caller);
  free(c.hits);
  return ok;
}

typedef struct caller_arg {
  xchg_pool *pool;
  int ok;
} caller_arg;

static void *caller_main(void *p) {
  caller_arg *a = p;
  a->ok = 1;
  for (int round = 0; round < 200; round++) a->ok &= run_loop(a->pool, 1 + round % 37, NULL);
  return NULL;
}

/* ---- background loops -------------------------------------------------------------- */

typedef struct slow_counts {
  _Atomic int hits[64];
  _Atomic int running;
  _Atomic int max_running_after_cancel; /* must stay 0 */
} slow_counts;

static void slow_hit(void *ctx, int64_t i) {
  slow_counts *c = ctx;
  atomic_fetch_add(&c->running, 1);
  struct timespec ts = {0, 200 * 1000}; /* 0.2 ms: workers get some */
  nanosleep(&ts, NULL);
  atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_sub(&c->running, 1);
}

static void check_background_loops(xchg_pool *pool, const char *name) {
  /* Three loops started, then finished in order: every index once. */
  static slow_counts c[3];
  pool_loop loops[3];
  memset(c, 0, sizeof c);
  for (int k = 0; k < 3; k++) pool_loop_start(pool, &loops[k], 64, slow_hit, &c[k]);
  int once = 1;
  for (int k = 0; k < 3; k++) {
    pool_loop_finish(pool, &loops[k]);
    for (int i = 0; i < 64; i++) once &= atomic_load(&c[k].hits[i]) == 1;
    once &= atomic_load(&c[k].running) == 0;
  }
  TU_CHECK(once, "%s: three background loops, each index once", name);

  /* Cancelled: no index runs twice or after cancel returns; those not
   * begun never run. */
  slow_counts *d = &c[0];
  memset(d, 0, sizeof *d);
  pool_loop_start(pool, &loops[0], 64, slow_hit, d);
  struct timespec ts = {0, 1000 * 1000};
  nanosleep(&ts, NULL);
  pool_loop_cancel(pool, &loops[0]);
  int ran = 0, twice = 0;
  for (int i = 0; i < 64; i++) {
    ran += atomic_load(&d->hits[i]);
    twice |= atomic_load(&d->hits[i]) > 1;
  }
  int running = atomic_load(&d->running);
  nanosleep(&ts, NULL);
  int later = 0;
  for (int i = 0; i < 64; i++) later += atomic_load(&d->hits[i]);
  TU_CHECK(!twice && running == 0 && later == ran && ran < 64, "%s: cancel (%d of 64 ran)", name,
           ran);
}

static void one_thread(void) {
  xchg_pool *one = NULL;
  TU_CHECK(xchg_pool_create(1, &one, NULL) == XCHG_OK, "cannot create a pool");
  int off = 1;
  TU_CHECK(one && xchg_pool_threads(one) == 1, "a pool of one thread");
  TU_CHECK(run_loop(one, 1000, &off) && !off, "a pool of one runs every index inline, once");
  xchg_pool_free(one);
}

/* More threads than XCHG_POOL_MAX_THREADS: XCHG_EINVAL naming the bound,
 * before a thread is started (INT_MAX started tens of thousands first). */
static void too_many_threads(void) {
  xchg_pool *p = NULL;
  xchg_error err;
  xchg_status st = xchg_pool_create(XCHG_POOL_MAX_THREADS + 1, &p, &err);
  TU_CHECK(st == XCHG_EINVAL && p == NULL && strstr(err.message, "more than XCHG_POOL_MAX_THREADS"),
           "a pool of %d threads: %s: %s", XCHG_POOL_MAX_THREADS + 1, xchg_status_name(st),
           st == XCHG_OK ? "" : err.message);
  if (st == XCHG_OK) xchg_pool_free(p);
}

typedef struct awaited {
  pthread_t caller;
  _Atomic int worker_ran;
  _Atomic int waits_left; /* 1 ms sleeps the caller may still take, over all its indices */
} awaited;

static void await_worker(void *ctx, int64_t i) {
  (void)i;
  awaited *a = ctx;
  if (!pthread_equal(pthread_self(), a->caller)) {
    atomic_store(&a->worker_ran, 1);
    return;
  }
  struct timespec ms = {0, 1000000};
  while (!atomic_load(&a->worker_ran) && atomic_fetch_sub(&a->waits_left, 1) > 0)
    nanosleep(&ms, NULL);
}

static void four_threads(void) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(4, &pool, NULL) == XCHG_OK, "cannot create a pool");
  TU_CHECK(pool && xchg_pool_threads(pool) == 4, "a pool of four threads");
  TU_CHECK(run_loop(pool, 0, NULL), "an empty loop");
  TU_CHECK(run_loop(pool, 1, NULL), "a loop of one");
  for (int i = 0; i < 50; i++)
    TU_CHECK(run_loop(pool, 10000, NULL), "loop %d: 10000 indices, each once", i);
  /* The caller's indices wait (10 s at most) until a worker has run one:
   * on a loaded host the caller could otherwise finish a short loop alone. */
  awaited a = {pthread_self(), 0, 10000};
  xchg_pool_run(pool, 64, await_worker, &a);
  TU_CHECK(atomic_load(&a.worker_ran), "workers took part in a loop");
  xchg_pool_free(pool);
}

/* A worker's mask, once a worker runs an index: asynchronous signals
 * blocked (a SIGTERM sent to the process goes to an application thread),
 * faults and SIGPROF not. */
typedef struct masks {
  awaited wait;
  _Atomic int checked, wrong;
} masks;

static void check_worker_mask(void *ctx, int64_t i) {
  masks *m = ctx;
  if (pthread_equal(pthread_self(), m->wait.caller)) {
    await_worker(&m->wait, i);
    return;
  }
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  static const int blocked[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGPIPE, SIGCHLD};
  static const int open[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGPROF};
  int wrong = 0;
  for (size_t k = 0; k < sizeof blocked / sizeof blocked[0]; k++)
    wrong += sigismember(&now, blocked[k]) != 1;
  for (size_t k = 0; k < sizeof open / sizeof open[0]; k++)
    wrong += sigismember(&now, open[k]) != 0;
  atomic_fetch_add(&m->wrong, wrong);
  atomic_fetch_add(&m->checked, 1);
  atomic_store(&m->wait.worker_ran, 1);
}

static void worker_signals(void) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(3, &pool, NULL) == XCHG_OK, "cannot create a pool");
  masks m = {{pthread_self(), 0, 10000}, 0, 0};
  xchg_pool_run(pool, 64, check_worker_mask, &m);
  TU_CHECK(atomic_load(&m.checked) > 0 && atomic_load(&m.wrong) == 0,
           "%d signals of %d workers' indices not as they should be (SIGINT, SIGTERM, ... "
           "blocked; SIGSEGV, SIGPROF, ... not)",
           atomic_load(&m.wrong), atomic_load(&m.checked));
  xchg_pool_free(pool);
}

static void callers_at_once(void) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(4, &pool, NULL) == XCHG_OK, "cannot create a pool");
  pthread_t t[6];
  caller_arg args[6];
  for (int i = 0; i < 6; i++) {
    args[i].pool = pool;
    pthread_create(&t[i], NULL, caller_main, &args[i]);
  }
  int all = 1;
  for (int i = 0; i < 6; i++) {
    pthread_join(t[i], NULL);
    all &= args[i].ok;
  }
  TU_CHECK(all, "six threads running loops on one pool at once");
  xchg_pool_free(pool);
}

static void background_loops(void) {
  xchg_pool *two = NULL;
  TU_CHECK(xchg_pool_create(2, &two, NULL) == XCHG_OK, "cannot create a pool");
  check_background_loops(two, "pool of two");
  xchg_pool_free(two);
  check_background_loops(NULL, "no pool");
}

/* A loop started from inside another loop's index, while that loop's
 * starter waits for it asleep: the starter runs it.  The only worker of a
 * pool of two is inside the outer index, which waits for the inner loop to
 * run, so that nothing else can (the shuffle reader's relays start each
 * other so).  A starter that noticed only loops finishing slept on: the
 * outer index gave up after its deadline. */
typedef struct nested {
  xchg_pool *pool;
  pool_loop inner;
  _Atomic int outer_running, inner_ran, gave_up;
} nested;

static void inner_index(void *ctx, int64_t i) {
  (void)i;
  atomic_store(&((nested *)ctx)->inner_ran, 1);
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void outer_index(void *ctx, int64_t i) {
  (void)i;
  nested *n = ctx;
  atomic_store(&n->outer_running, 1);
  struct timespec ts = {0, 50 * 1000 * 1000}; /* the starter is asleep by now */
  nanosleep(&ts, NULL);
  pool_loop_start(n->pool, &n->inner, 1, inner_index, n);
  for (int64_t deadline = now_ms() + 5000; !atomic_load(&n->inner_ran);) {
    if (now_ms() > deadline) {
      atomic_store(&n->gave_up, 1);
      break;
    }
    sched_yield();
  }
  pool_loop_finish(n->pool, &n->inner);
}

static void starter_helps_new_loops(void) {
  static nested n;
  TU_CHECK(xchg_pool_create(2, &n.pool, NULL) == XCHG_OK, "cannot create a pool");
  pool_loop outer;
  pool_loop_start(n.pool, &outer, 1, outer_index, &n);
  while (!atomic_load(&n.outer_running)) sched_yield(); /* the worker has it */
  pool_loop_finish(n.pool, &outer);
  TU_CHECK(atomic_load(&n.inner_ran) && !atomic_load(&n.gave_up),
           "a loop started while its starter waits asleep: run by the starter");
  xchg_pool_free(n.pool);
}

/* The process-wide pool lives as long as the process: freeing it is a
 * no-op (an embedder that frees whatever pool its options hold must not
 * pull it from under the others), and it runs loops after that. */
static void default_pool(void) {
  xchg_pool *pool = xchg_pool_default();
  TU_CHECK(pool == xchg_pool_default() && xchg_pool_threads(pool) >= 1, "the default pool");
  xchg_pool_free(pool);
  int off_caller;
  TU_CHECK(run_loop(xchg_pool_default(), 1000, &off_caller),
           "the default pool after xchg_pool_free of it");
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"one_thread", one_thread},         {"too_many_threads", too_many_threads},
      {"four_threads", four_threads},     {"callers_at_once", callers_at_once},
      {"worker_signals", worker_signals}, {"background_loops", background_loops},
      {"default_pool", default_pool},     {"starter_helps_new_loops", starter_helps_new_loops},
  };
  return TU_MAIN(argc, argv, "pool", cases);
}
