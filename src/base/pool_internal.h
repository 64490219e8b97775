/* pool_internal.h — loops that run in the background (private to xchg).
 *
 * xchg_pool_run blocks until its loop is done.  The IPC reader's read-ahead
 * instead starts a loop per group of batches and goes on planning the next
 * group while the pool works, then finishes the loops in the order it
 * started them.  A loop's storage belongs to its starter and must stay put
 * until pool_loop_finish returns. */
#ifndef XCHG_POOL_INTERNAL_H
#define XCHG_POOL_INTERNAL_H

#include <stdatomic.h>

#include "xchg/pool.h"

typedef struct pool_loop {
  xchg_task_fn fn;
  void *ctx;
  int64_t n;
  _Atomic int64_t next;     /* next index to claim */
  _Atomic int64_t finished; /* indices done */
  int workers;              /* threads other than the starter inside it, under the pool's lock */
  int published;            /* on the pool's list */
  struct pool_loop *link;
} pool_loop;

/* Publishes the loop fn(ctx, i), i in [0, n), to the pool's threads and
 * returns at once.  Loops are taken up in the order they were started.
 * With no pool, or a pool of one thread, nothing runs until finish. */
void pool_loop_start(xchg_pool *pool, pool_loop *loop, int64_t n, xchg_task_fn fn, void *ctx);

/* Runs the loop's unclaimed indices on the calling thread, then, while
 * other threads still work on it, helps with other started loops rather
 * than sit idle; returns once every index of this loop has finished. */
void pool_loop_finish(xchg_pool *pool, pool_loop *loop);

/* As pool_loop_finish, but the indices no thread has claimed yet are
 * dropped instead of run. */
void pool_loop_cancel(xchg_pool *pool, pool_loop *loop);

#endif
