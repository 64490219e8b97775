/** \file
 * xchg/buf.h — reference-counted byte buffers, the unit of sharing in xchg.
 *
 * An xchg_buf is an immutable-once-published span of bytes with an atomic
 * reference count.  Allocations made by xchg are 64-byte aligned.  A slice
 * shares the memory of its parent and holds a reference on it, so the
 * parent's memory lives as long as any slice does.  Buffers may also wrap
 * memory owned by someone else (a borrowed input, an mmap): the owner's
 * release callback runs when the last reference goes.
 *
 * Every Arrow array xchg hands out keeps references on the xchg_bufs its
 * data lives in; that is how zero-copy reads and shared decodes stay valid
 * for exactly as long as someone can see them.
 *
 * Threads: xchg_buf_ref, xchg_buf_unref and the accessors may be called on
 * any thread, at the same time; the last unref (on whichever thread) frees
 * the buffer or runs its owner's release callback.
 */
#ifndef XCHG_BUF_H
#define XCHG_BUF_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The alignment, in bytes, of every buffer xchg allocates. */
#define XCHG_ALIGNMENT 64

/** A reference-counted span of bytes. */
typedef struct xchg_buf xchg_buf;

/** Allocates size bytes, 64-byte aligned, uninitialised; refcount 1.
 * Returns NULL when out of memory. size 0 is allowed.  (The buffer
 * functions follow malloc, the one exception to the API's rule of a status
 * and an out argument: their only failure is out of memory, which NULL
 * says in full, and they sit on every decode's hot path.) */
XCHG_API xchg_buf *xchg_buf_alloc(size_t size);

/** Like xchg_buf_alloc, but the bytes are zeroed. */
XCHG_API xchg_buf *xchg_buf_calloc(size_t size);

/** Gives back memory owned elsewhere (data, size, as it was handed over)
 * once xchg holds nothing that points into it; ctx is the caller's.  It may
 * run on any thread: the one that releases the last array or buffer. */
typedef void (*xchg_release_fn)(void *ctx, const void *data, size_t size);

/** Wraps memory owned elsewhere.  release(release_ctx, data, size) runs once,
 * when the last reference goes; release may be NULL for static memory. */
XCHG_API xchg_buf *xchg_buf_wrap(const void *data, size_t size, xchg_release_fn release,
                                 void *release_ctx);

/** A view of bytes [offset, offset+size) of parent; holds a reference on the
 * parent (on its root, for a slice of a slice).  Returns NULL when the range
 * is out of bounds or memory runs out. */
XCHG_API xchg_buf *xchg_buf_slice(xchg_buf *parent, size_t offset, size_t size);

/** Adds a reference and returns buf (NULL passes through). */
XCHG_API xchg_buf *xchg_buf_ref(xchg_buf *buf);

/** Drops a reference; the memory goes with the last one.  NULL is a no-op. */
XCHG_API void xchg_buf_unref(xchg_buf *buf);

/** The buffer's first byte (for a slice, the slice's). */
XCHG_API const uint8_t *xchg_buf_data(const xchg_buf *buf);
/** Writable pointer: only for a buffer the caller has just allocated and not
 * yet shared. */
XCHG_API uint8_t *xchg_buf_mutable_data(xchg_buf *buf);
/** The buffer's length in bytes. */
XCHG_API size_t xchg_buf_size(const xchg_buf *buf);

/** Bytes currently held in buffers allocated by xchg_buf_alloc/calloc, and
 * the number of live xchg_buf objects, process-wide.  Tests use these to
 * prove that nothing leaked; engines to watch memory.  Not counted: the
 * blocks of released buffers of 16 KiB to 4 MiB, which xchg keeps (at most
 * 64 MiB of them) for the next buffers of about their size. */
XCHG_API int64_t xchg_buf_allocated_bytes(void);
/** The number of live xchg_buf objects, process-wide (see
 * xchg_buf_allocated_bytes). */
XCHG_API int64_t xchg_buf_live_count(void);

#ifdef __cplusplus
}
#endif
#endif
