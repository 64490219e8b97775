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

/** The buffer's first byte (for a slice, the slice's); NULL for NULL. */
XCHG_API const uint8_t *xchg_buf_data(const xchg_buf *buf);
/** Writable pointer: only for a buffer the caller has just allocated and not
 * yet shared; NULL for NULL. */
XCHG_API uint8_t *xchg_buf_mutable_data(xchg_buf *buf);
/** The buffer's length in bytes (0 for NULL). */
XCHG_API size_t xchg_buf_size(const xchg_buf *buf);

/** Bytes xchg holds for buffers it allocated, process-wide: the data of
 * live buffers made by xchg_buf_alloc/calloc, plus the blocks of released
 * ones kept for reuse (see xchg_buf_trim).  Engines watch this to see
 * xchg's native memory, the part that grows with the data (decoded
 * batches, copied inputs); xchg_buf_get_metrics splits it.  Not counted:
 * the working memory of open objects, bounded by their options and freed
 * with them (an xchg_istream's window and input buffer, the codec contexts
 * allocated inside libzstd and liblz4), and each thread's cache of small
 * blocks and buffer headers (at most 256 KiB and 64 headers a thread, as
 * malloc keeps its own thread caches). */
XCHG_API int64_t xchg_buf_allocated_bytes(void);

/** The number of live xchg_buf objects of every kind, process-wide.  Tests
 * use it (and xchg_buf_metrics.live_bytes) to prove that nothing leaked. */
XCHG_API int64_t xchg_buf_live_count(void);

/** Process-wide figures of xchg's buffers, as xchg_buf_get_metrics reads
 * them (each figure read on its own: under concurrent use they may be a
 * moment apart). */
typedef struct xchg_buf_metrics {
  int64_t allocated_bytes; /**< live_bytes + recycled_bytes (xchg_buf_allocated_bytes) */
  int64_t live_bytes;      /**< data bytes of live buffers made by xchg_buf_alloc/calloc */
  int64_t live_buffers;    /**< live xchg_buf objects of every kind (xchg_buf_live_count) */
  /** Blocks of released buffers of 16 KiB to 4 MiB that xchg keeps, at most
   * recycle_limit_bytes of them, for the next buffers of about their size:
   * last in, first out per size class, so that a reader releasing each
   * batch before decoding the next reuses memory still in the CPU's cache.
   * A block is kept for the thread that allocated it, whichever thread
   * releases it (a pool thread gets back the blocks of the batches it
   * built); a thread that ends leaves its blocks to the next one. */
  int64_t recycled_bytes;
  int64_t recycled_blocks;     /**< how many blocks recycled_bytes is */
  int64_t recycle_limit_bytes; /**< the bound on recycled_bytes (64 MiB) */
  int64_t reused_blocks;       /**< allocations served by a kept block, since the start */
} xchg_buf_metrics;

/** Fills *out with the figures now (out NULL: a no-op). */
XCHG_API void xchg_buf_get_metrics(xchg_buf_metrics *out);

/** Gives the kept blocks back to the system until at most keep_bytes of
 * them remain (0: all), the largest first; returns the bytes given back.
 * Buffers in use are not affected.  For an engine between jobs, or before
 * it measures its memory. */
XCHG_API size_t xchg_buf_trim(size_t keep_bytes);

#ifdef __cplusplus
}
#endif
#endif
