/** \file
 * xchg/xchg.h — everything: include this one header to use the library
 * (xchg/testing.h, for tests and tools, is apart).
 *
 * One naming rule for the whole API (the API reference says it in full):
 *   - A handle is `xchg_<noun>`; its functions are `xchg_<noun>_<verb>`
 *     (`xchg_ipc_reader_next`), a getter is named after what it returns
 *     (`xchg_buf_size`), `_get_` only where that name is a struct's
 *     (`xchg_cache_get_metrics` fills an `xchg_cache_metrics`).
 *   - Constructors return an xchg_status and end `..., <type> **out,
 *     xchg_error *err`: `_create` builds a standalone object from options
 *     (a cache, a pool); `_open` attaches a handle to data (a reader or
 *     writer over a source, a file, memory, a schema message); `_from_<x>`
 *     wraps an existing thing without reading it (the sources).  Given a
 *     handle, a constructor takes it over; the one that borrows says so
 *     (`xchg_source_from_istream_borrowed`).  The buffer functions
 *     (`xchg_buf_alloc`, ...) follow malloc and return NULL: the stated
 *     exception.
 *   - Destructors: `_free` for what the caller owns, `_unref` for a
 *     reference, `_release` for what `_acquire` gave; NULL is a no-op.
 *   - Options are `xchg_<noun>_options` with `xchg_<noun>_options_init`;
 *     a request of one call (`xchg_cache_request`) likewise has an `_init`;
 *     getters take const handles; every callback has a typedef `xchg_*_fn`.
 *   - Integers: size_t for a size in memory (a pointer's extent, a window,
 *     a block, a row, and the caps on them); int64_t for counts, rows,
 *     indices, positions in a byte sequence, and IPC data's byte totals
 *     and caps; int for flags and small settings (levels, threads). */
#ifndef XCHG_XCHG_H
#define XCHG_XCHG_H

#include "xchg/arrow_c.h"
#include "xchg/buf.h"
#include "xchg/cache.h"
#include "xchg/codec.h"
#include "xchg/error.h"
#include "xchg/io.h"
#include "xchg/ipc.h"
#include "xchg/pool.h"
#include "xchg/rows.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"
#include "xchg/version.h"
#include "xchg/writer.h"

#endif
