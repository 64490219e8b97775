/* source_impl.h — how a kind of xchg_source is built (private to xchg).
 *
 * io.h's functions are generic: they track the position, loop over short
 * reads, check sizes and write error messages.  A kind of source supplies
 * only the few operations in xchg_source_vtable.  Modules other than src/io
 * (stream codecs, for instance, that decompress one source into another)
 * create their sources with xchg_source_create. */
#ifndef XCHG_SOURCE_IMPL_H
#define XCHG_SOURCE_IMPL_H

#include "base/args.h"
#include "xchg/io.h"

typedef struct xchg_source_vtable {
  /* Reads up to n bytes (n > 0) at src->position into dst.  May return fewer
   * than n at any time; *got == 0 means the end of the data.  Must not move
   * src->position: the caller does.  Required. */
  xchg_status (*read)(xchg_source *src, void *dst, size_t n, size_t *got, xchg_error *err);
  /* Moves the underlying cursor to the absolute offset; the caller has
   * checked it against a known size and updates src->position.  NULL, or an
   * XCHG_ENOTSUP result, when the source cannot seek. */
  xchg_status (*seek)(xchg_source *src, uint64_t offset, xchg_error *err);
  /* Frees src->impl and whatever it holds (may be NULL). */
  void (*close)(xchg_source *src);
  /* See xchg_source_finish: reads and verifies the rest of the current
   * frame of a kind that frames its data, without starting the next frame
   * and without moving src->position.  NULL for kinds with no frames. */
  xchg_status (*finish)(xchg_source *src, xchg_error *err);
} xchg_source_vtable;

struct xchg_source {
  const xchg_source_vtable *vtable;
  void *impl;        /* the kind's own state */
  uint64_t position; /* offset of the next read, from the start of the source */
  int64_t size;      /* total bytes, or -1 when unknown */
  xchg_buf *memory;  /* the whole content when it is in memory, else NULL */
  int ran_out;       /* a read or skip failed because the data ended */
};

/* Creates a source of the given kind for the public constructor `who`
 * (named in the error).  size is -1 when unknown; memory (may be NULL) is a
 * buffer holding all the bytes, whose reference the source takes over.
 * XCHG_ENOMEM when out of memory; the caller then still owns impl and
 * memory. */
XCHG_NODISCARD xchg_status xchg_source_create(const xchg_source_vtable *vtable, void *impl,
                                              int64_t size, xchg_buf *memory, const char *who,
                                              xchg_source **out, xchg_error *err);

/* Whether a read or skip of src failed because its data ended before the
 * bytes asked for, not because reading failed: a reader above then knows
 * its input is cut short, and says so. */
int xchg_source_ran_out(const xchg_source *src);

/* The error every constructor gives alike when no memory is left for the
 * source (XCHG_ENOMEM); a NULL argument is base_null_argument's. */
xchg_status xchg_source_no_memory(xchg_error *err, const char *who);

#endif
