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

/* The wrapper of both constructors: `who` is the one called, `check_arg`
 * the name of its argument that gave is_cancelled.  inner is closed on
 * failure, as documented. */
static xchg_status wrap(const char *who, const char *check_arg, xchg_source *inner,
                        xchg_cancel_fn is_cancelled, void *ctx, xchg_source **out,
                        xchg_error *err) {
  xchg_status status = XCHG_OK;
  if (out == NULL)
    status = base_null_argument(who, "out", err);
  else
    *out = NULL;
  if (status == XCHG_OK && inner == NULL) status = base_null_argument(who, "inner", err);
  if (status == XCHG_OK && is_cancelled == NULL) status = base_null_argument(who, check_arg, err);
  cancel_state *st = status == XCHG_OK ? malloc(sizeof *st) : NULL;
  if (status == XCHG_OK && st == NULL) status = xchg_source_no_memory(err, who);
  if (status == XCHG_OK)
    status = xchg_source_create(&cancel_vtable, st, xchg_source_size(inner), NULL, who, out, err);
  if (status != XCHG_OK) {
    free(st);
    xchg_source_free(inner);
    return status;
  }
  st->inner = inner;
  st->is_cancelled = is_cancelled;
  st->ctx = ctx;
  (*out)->position = xchg_source_position(inner);
  return XCHG_OK;
}

xchg_status xchg_source_with_cancel(xchg_source *inner, xchg_cancel_fn is_cancelled, void *ctx,
                                    xchg_source **out, xchg_error *err) {
  return wrap("xchg_source_with_cancel", "is_cancelled", inner, is_cancelled, ctx, out, err);
}

static int flag_is_set(void *ctx) {
  return __atomic_load_n((const int *)ctx, __ATOMIC_ACQUIRE) != 0;
}

xchg_status xchg_source_with_cancel_flag(xchg_source *inner, const int *flag, xchg_source **out,
                                         xchg_error *err) {
  return wrap("xchg_source_with_cancel_flag", "flag", inner, flag ? flag_is_set : NULL,
              (void *)flag, out, err);
}
