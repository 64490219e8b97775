/* handover.h — the hand-over of an in-order limit, which `bench decode`'s
 * in-order limit and `bench shuffle`'s handover_limit share.
 *
 * A limit's threads that each fill one destination of their own for ever
 * do less than a reader can: a reader hands its batches out in order to
 * one caller, and every batch it fills ahead needs a destination of its own
 * until the caller gives it back.  An in-order limit does what such a
 * reader must and nothing more: the other threads fill whole batches, at
 * most `ahead` of them counting from the one the caller waits for, into
 * destinations from a shared free list (last in, first out, as the library
 * recycles its buffers); the caller takes the batches in order, filling the
 * next itself while the one it wants is not there (as a pool's caller
 * helps), does what it does with each and gives its destination back.  What
 * fills a batch and what the caller does with it are the benchmark's. */
#ifndef XCHG_BENCH_HANDOVER_H
#define XCHG_BENCH_HANDOVER_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_handover_work {
  /* Fills batch g into dst, on thread k of the run: 0 is the caller's. */
  void (*fill)(void *ctx, int k, int64_t g, uint8_t *dst);
  /* What the caller does with batch g before it gives dst back; NULL: nothing. */
  void (*take)(void *ctx, int64_t g, const uint8_t *dst);
  void *ctx;
} bench_handover_work;

typedef struct bench_handover bench_handover;

/* The hand-over of `batches` batches of at most room bytes each, filled at
 * most `ahead` (>= 1) beyond the one taken; NULL when out of memory. */
bench_handover *bench_handover_new(int64_t batches, size_t room, int ahead,
                                   bench_handover_work work);
void bench_handover_free(bench_handover *h);

/* One timing of every batch handed over on `threads` threads (the
 * caller's among them), from the moment all have started. */
int64_t bench_handover_once(bench_handover *h, int threads);

#endif
