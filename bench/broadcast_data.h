/* broadcast_data.h — what `xchg bench broadcast` (bench_broadcast.c) shares
 * with `xchg bench host` (bench_host.c): the broadcast shape written as an
 * IPC stream, a task's read of every value and a thread's CPU clock. */
#ifndef XCHG_BENCH_BROADCAST_DATA_H
#define XCHG_BENCH_BROADCAST_DATA_H

#include <stdint.h>

#include "gen/shapes.h"
#include "xchg/cache.h"

/* The `rows`-row broadcast shape (seed 42) as an IPC stream with bodies in
 * codec; adds its values to sums.  NULL (with a message) on failure. */
xchg_buf *broadcast_write_ipc(int64_t rows, xchg_block_codec codec, shape_sums *sums);

/* Reads every value of every column of every batch of h into sums. */
int broadcast_read_all(const xchg_cache_holder *h, shape_sums *sums, xchg_error *err);

/* CPU time of the calling thread (waiting costs none), in nanoseconds. */
int64_t bench_thread_cpu_ns(void);

#endif
