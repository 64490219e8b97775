/* read_at.c — a source of known size whose bytes are fetched on demand by
 * a positional callback (a JVM's GetByteArrayRegion, a pread).  Seeking and
 * skipping only move the position, so a reader that seeks from buffer to
 * buffer (a projected IPC read) fetches the bytes it reads and no others. */
#include <inttypes.h>
#include <stdlib.h>

#include "io/source_impl.h"

typedef struct read_at_state {
  xchg_read_at_fn read_at;
  xchg_close_fn close_fn;
  void *ctx;
} read_at_state;

static xchg_status read_at_read(xchg_source *src, void *dst, size_t n, size_t *got,
                                xchg_error *err) {
  read_at_state *st = src->impl;
  uint64_t left = (uint64_t)src->size - src->position;
  size_t take = left < n ? (size_t)left : n;
  *got = 0;
  if (take == 0) return XCHG_OK;
  xchg_status status = st->read_at(st->ctx, (int64_t)src->position, dst, take, err);
  if (status == XCHG_OK) *got = take;
  return status;
}

/* The position moves in xchg_source_seek, checked against the size. */
static xchg_status read_at_seek(xchg_source *src, uint64_t offset, xchg_error *err) {
  (void)src;
  (void)offset;
  (void)err;
  return XCHG_OK;
}

static void read_at_close(xchg_source *src) {
  read_at_state *st = src->impl;
  if (st->close_fn) st->close_fn(st->ctx);
  free(st);
}

static const xchg_source_vtable read_at_vtable = {read_at_read, read_at_seek, read_at_close, NULL};

xchg_status xchg_source_from_read_at(int64_t size, xchg_read_at_fn read_at, xchg_close_fn close_fn,
                                     void *ctx, xchg_source **out, xchg_error *err) {
  static const char who[] = "xchg_source_from_read_at";
  if (!out) return base_null_argument(who, "out", err);
  *out = NULL;
  if (!read_at) return base_null_argument(who, "read_at", err);
  if (size < 0) return xchg_errorf(err, XCHG_EINVAL, "%s: negative size %" PRId64, who, size);
  read_at_state *st = malloc(sizeof *st);
  if (!st) return xchg_source_no_memory(err, who);
  *st = (read_at_state){read_at, close_fn, ctx};
  xchg_status status = xchg_source_create(&read_at_vtable, st, size, NULL, who, out, err);
  if (status != XCHG_OK) free(st);
  return status;
}
