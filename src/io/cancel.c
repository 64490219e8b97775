/* cancel.c — a source that stops when its caller says so.
 *
 * The wrapper reads the inner source at most CANCEL_READ_MAX bytes at a
 * time and asks the cancellation callback before each of those reads, so a
 * long read from a slow fd can be interrupted between two of them.  A
 * cancelled read returns XCHG_ECANCELLED, distinct from every I/O error. */
#include <inttypes.h>
#include <stdlib.h>

#include "io/source_impl.h"

#define CANCEL_READ_MAX ((size_t)64 << 10)

typedef struct cancel_state {
  xchg_source *inner;
  xchg_cancel_fn is_cancelled;
  void *ctx;
} cancel_state;

static xchg_status cancel_read(xchg_source *src, void *dst, size_t n, size_t *got,
                               xchg_error *err) {
  cancel_state *st = src->impl;
  *got = 0;
  if (st->is_cancelled(st->ctx))
    return xchg_errorf(err, XCHG_ECANCELLED, "read cancelled at byte %" PRIu64, src->position);
  return xchg_source_read(st->inner, dst, n < CANCEL_READ_MAX ? n : CANCEL_READ_MAX, got, err);
}

static xchg_status cancel_seek(xchg_source *src, uint64_t offset, xchg_error *err) {
  cancel_state *st = src->impl;
  return xchg_source_seek(st->inner, offset, err);
}

static void cancel_close(xchg_source *src) {
  cancel_state *st = src->impl;
  xchg_source_free(st->inner);
  free(st);
}

/* Finishing reads (the rest of a codec frame): it is a read like any other. */
static xchg_status cancel_finish(xchg_source *src, xchg_error *err) {
  cancel_state *st = src->impl;
  if (st->is_cancelled(st->ctx))
    return xchg_errorf(err, XCHG_ECANCELLED, "read cancelled at byte %" PRIu64, src->position);
  return xchg_source_finish(st->inner, err);
}

static const xchg_source_vtable cancel_vtable = {cancel_read, cancel_seek, cancel_close,
                                                 cancel_finish};

xchg_source *xchg_source_with_cancel(xchg_source *inner, xchg_cancel_fn is_cancelled,
                                     void *ctx) {
  if (inner == NULL || is_cancelled == NULL) {
    xchg_source_free(inner);
    return NULL;
  }
  cancel_state *st = malloc(sizeof *st);
  xchg_source *src = st ? xchg_source_create(&cancel_vtable, st, xchg_source_size(inner), NULL) : NULL;
  if (src == NULL) {
    free(st);
    xchg_source_free(inner);
    return NULL;
  }
  st->inner = inner;
  st->is_cancelled = is_cancelled;
  st->ctx = ctx;
  src->position = xchg_source_position(inner);
  return src;
}

static int flag_is_set(void *ctx) { return __atomic_load_n((const int *)ctx, __ATOMIC_ACQUIRE) != 0; }

xchg_source *xchg_source_with_cancel_flag(xchg_source *inner, const int *flag) {
  if (flag == NULL) {
    xchg_source_free(inner);
    return NULL;
  }
  return xchg_source_with_cancel(inner, flag_is_set, (void *)flag);
}
