/** \file
 * xchg/pool.h — a small thread pool for parallel decode and compression.
 *
 * Work is submitted as a parallel loop: xchg_pool_run(pool, n, fn, ctx)
 * calls fn(ctx, i) for every i in [0, n) and returns when all calls have
 * finished.  The calling thread takes part, so a loop never waits for a
 * free worker, and any number of threads may run loops on one pool at the
 * same time.  Callers should make each index worth a hand-off (tens of
 * microseconds of work): group tiny items before submitting them.
 *
 * A pool of size 1 has no worker threads at all: loops run inline.
 *
 * A thread of the pool with nothing to do, or a caller waiting for the
 * last indices of its loop, spins for up to 50 microseconds (yielding the
 * core at each turn) before it sleeps: loops that follow each other
 * closely, as a reader's read-ahead starts them, then cost no sleep and
 * wake-up each.
 *
 * Signals: the workers start with every asynchronous signal blocked
 * (SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1, ...; not the faults nor
 * SIGPROF), so a signal sent to the process is handled by one of the
 * application's threads, under its own handlers and masks.
 *
 * Threads: every function may be called on any thread at the same time.
 */
#ifndef XCHG_POOL_H
#define XCHG_POOL_H

#include "xchg/export.h"

#include <stdint.h>

#include "xchg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A pool of worker threads that run parallel loops with their caller. */
typedef struct xchg_pool xchg_pool;

/** The most threads a pool may have (xchg_pool_create, XCHG_THREADS). */
#define XCHG_POOL_MAX_THREADS 4096

/** A pool of `threads` threads in all, the caller counted: threads - 1
 * workers are started.  threads <= 0 means the number of online cores.
 * XCHG_EINVAL for more than XCHG_POOL_MAX_THREADS, before any is started,
 * or a NULL out; XCHG_ENOMEM when memory or threads cannot be had (the
 * message says which); *out is then NULL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_pool_create(int threads, xchg_pool **out, xchg_error *err);

/** Waits for running loops to finish, then stops the workers and frees the
 * pool.  NULL and the pool xchg_pool_default returns are a no-op: that one
 * lives as long as the process. */
XCHG_API void xchg_pool_free(xchg_pool *pool);

/** The thread count the environment variable XCHG_THREADS asks for in
 * *threads, an integer from 0 to XCHG_POOL_MAX_THREADS; 0 (also when it is
 * unset or empty) means one thread per core, as for xchg_pool_create.
 * Anything else ("abc", "-1", "4x") is XCHG_EINVAL, *threads 0, with a
 * message that quotes the value and says the range.  A NULL threads is
 * XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_pool_parse_env(int *threads, xchg_error *err);

/** The process-wide pool, created on first use with the threads
 * XCHG_THREADS asks for, one per core when it is unset or invalid (see
 * xchg_pool_parse_env, for a program to refuse an invalid value).  Never
 * destroyed. */
XCHG_API xchg_pool *xchg_pool_default(void);

/** Threads in the pool, the caller counted. */
XCHG_API int xchg_pool_threads(const xchg_pool *pool);

/** One index of a parallel loop (see xchg_pool_run). */
typedef void (*xchg_task_fn)(void *ctx, int64_t index);

/** Runs fn(ctx, i) for i in [0, n) on the pool and the calling thread. */
XCHG_API void xchg_pool_run(xchg_pool *pool, int64_t n, xchg_task_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
