/** \file
 * xchg/cache.h — a shared decoded cache: a broadcast is decoded once per
 * process (once per machine with a host store), whatever its tasks do.
 *
 * Engines ship a join's build side ("broadcast") to every executor once, and
 * every task of the executor then reads it.  Decoding it per task repeats the
 * same decompression and decode many times over.  An xchg_cache decodes each
 * broadcast (named by a key) once, into buffers it owns, and hands every task
 * its own ArrowArrays whose buffers are references on that one copy.
 *
 *   xchg_cache *cache;                                     // one per process:
 *   st = xchg_cache_create(NULL, &cache, &err);
 *   ...in every task:
 *   xchg_cache_request req;
 *   xchg_cache_request_init(&req);
 *   req.cancel = task_cancelled;                           // asked while waiting
 *   req.cancel_ctx = task;
 *   xchg_cache_holder *h;
 *   st = xchg_cache_acquire(cache, "broadcast_7", &bytes, &req, &h, &err);
 *   for (int64_t i = 0; i < xchg_cache_holder_num_batches(h); i++) {
 *     struct ArrowArray batch;
 *     st = xchg_cache_holder_batch(h, i, &batch, &err);   // "+s", its own
 *     ...probe...
 *     batch.release(&batch);                              // any time, any order
 *   }
 *   xchg_cache_holder_release(h);
 *
 * Rules:
 *   - Single flight.  The first acquirer of a key decodes; acquirers arriving
 *     meanwhile wait for it, asking their cancel callback every
 *     `wait_check_ms` (default 100 ms).  A cancelled waiter returns
 *     XCHG_ECANCELLED at once and the decode goes on for the others.  A
 *     cancelled *decoder* stops decoding: that is a failed decode (below).
 *   - Lifetime.  An entry lives while anything references it: holders, and
 *     every ArrowArray (each node of it: children moved out count too) and
 *     ArrowArrayStream handed out.  These may outlive xchg_cache_holder_release of
 *     their holder.  With the last reference the entry is freed, unless
 *     retention keeps it; so without retention the cache never holds memory
 *     the tasks would not hold anyway.
 *   - Failure.  A failed decode (bad bytes, out of memory, the decoder
 *     cancelled) is never cached.  Its error goes to the acquirer that
 *     decoded; every acquirer waiting for it starts over, and the first one
 *     to do so decodes again for all the others ("one retries for all"): a
 *     transient failure costs one more decode, not one per waiter.  A lasting
 *     failure is thus met by each acquirer in turn, each with its own error.
 *   - Per-column lazy decode.  An acquirer names the columns it reads;
 *     only the columns nobody has decoded yet are decoded (through the IPC
 *     reader's projection over the same bytes), each once, single-flight.
 *     A later, wider acquirer adds only what is missing.
 *   - Dictionary-encoded columns are shared like any other (the dictionary
 *     is decoded once per IPC stream and referenced by every batch).
 *   - A broadcast may be several IPC streams ("parts", e.g. one per map
 *     output) with equal schemas: their batches follow one another.  Zero
 *     parts make an empty broadcast with no columns and no batches.
 *   - Sharing off (xchg_cache_options.sharing = 0): every acquirer decodes
 *     privately, with the same results and the same API.
 *
 * Host store (xchg_cache_options.host_dir): one decoded copy per machine.
 *   - Lookup.  acquire looks in the process's cache, then in the host
 *     store, and decodes only when neither has the key.  The process that
 *     decodes writes the broadcast once as a segment: uncompressed Arrow
 *     IPC, 64-byte aligned, one IPC stream per part (so parts with
 *     different dictionaries keep their own), every column whatever the
 *     acquirer asked for, under a temporary name, published by a rename
 *     that never replaces a file (renameat2's RENAME_NOREPLACE; by link,
 *     then unlinking the temporary, where the file system has no such
 *     rename): no process ever sees a partial segment, and a writer killed
 *     as it publishes leaves no temporary.  Every process (the decoder too) maps it read-only and
 *     hands out ArrowArrays pointing into the
 *     mapping, zero-copy; per-column lazy reads then cost no decode.
 *     A key must name the same broadcast in every process of the user on
 *     the host (as in one process): a process finding a segment uses it,
 *     whatever bytes it was given.
 *   - Single flight across processes.  A per-key lock (flock on a lock
 *     file) is held while decoding; processes arriving meanwhile wait for
 *     it, asking their cancel callback every wait_check_ms, then map what
 *     it published.  A decoder that dies (even kill -9) loses the lock with
 *     its descriptors; the next waiter decodes, and a dead writer's
 *     temporary is removed.  A decoder that fails on bad bytes publishes
 *     nothing and gets its error; the next waiter decodes again.
 *   - Lifetime.  A process whose cache references a segment (holders,
 *     arrays, retained entries) holds a shared lease on it (flock LOCK_SH),
 *     which the kernel drops when the process dies.  A segment is removed
 *     only when no process holds it and host retention (host_retain_bytes
 *     over all segments, host_retain_ms since its last release) says so.
 *     At retention 0 (host_retain_bytes 0, the default) the last release
 *     on the host removes it, whatever the interleaving with the others:
 *     a few non-blocking calls on its own file, on whatever thread drops
 *     the last array, and no directory scan.  Otherwise the directory is
 *     scanned when a process looks a key up in the host store (a miss of
 *     its own cache) or calls xchg_cache_trim, never in a release.  A
 *     holder that died frees its segments at the next such scan by anyone,
 *     which also removes what dead processes left (temporaries, lock
 *     files).  Removing a file never affects a process that has it mapped.
 *   - What is trusted.  The directory must be owned by this user and not
 *     writable by group or others (it is created 0700 when missing);
 *     segments are created 0600, and before mapping, a segment must be a
 *     regular file owned by this user, of mode 0600, whose size, magic,
 *     header checksum, key, and part bounds check out.  Parts are then
 *     read by the IPC reader with bounds checks on every message and
 *     buffer, and validated as the mapping cache's read options say, like
 *     any bytes: with XCHG_VALIDATE_FULL (the default) every process checks
 *     what a consumer could fault on in the columns it reads (offsets
 *     monotonic and within their data, dictionary indices, union type ids,
 *     view ranges, null counts against validity bitmaps), O(rows) over
 *     those buffers, never over the values' bytes.  So a damaged segment
 *     is an error, never a crash.  Damage that still decodes can change
 *     values unnoticed: a flipped byte of a value (an integer, a float, a
 *     string's bytes, a dictionary's values), offsets or indices changed
 *     into others that still check out, a flipped validity bit with the
 *     null count flipped to match, and a schema changed into another valid
 *     one.  The data bytes carry no checksum: they are trusted as this
 *     user's own data, and so are the user's own processes: truncating a
 *     mapped segment behind the store's back can fault its readers.
 *     Segments are in the host's byte order and never leave it.  Only
 *     files the store could have made (this user's, mode 0600) are ever
 *     removed or written: another file under a key's lock or temporary
 *     name is left alone, and that key falls back.
 *   - Never worse than without.  Any failure of the host store (no space,
 *     permissions, a refused or corrupt segment) makes the process decode
 *     privately, as without a host store: it is counted in host_fallbacks
 *     with its reason in xchg_cache_host_error, never an error of the
 *     acquire.  A write that fails for lack of room (or stops early, once
 *     an eighth of a part's bytes is read, when the rest of the part,
 *     projected, exceeds the free space; this needs the part's size:
 *     chunks, or an open_part source of known size) is remembered on the
 *     host for a minute with the room it needed: processes waiting for it
 *     and arriving later fall back at once, without writing, while the
 *     file system's free space (statvfs) is short of that room.
 *   - Accounting.  on_bytes reports the bytes an entry references, mapped
 *     or not; on_shared_bytes says which of them are in shared mappings.
 *
 * The bytes described by an xchg_broadcast must stay valid until the
 * acquirer's holder is released: the cache reads them again only to decode
 * columns that acquirer asks for.  It never keeps pointers into chunks:
 * decoded buffers are its own.  (A source from open_part that is an
 * xchg_buf in memory may be referenced zero-copy, which the buffer's
 * reference count makes safe.)
 *
 * Threads: every function may be called on any thread at the same time,
 * on the same cache; a holder belongs to the task that acquired it (one
 * thread at a time) until it is released.  Arrays and streams handed out
 * may be released on any thread, in any order, before or after the holder
 * and the cache.
 */
#ifndef XCHG_CACHE_H
#define XCHG_CACHE_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"
#include "xchg/error.h"
#include "xchg/io.h"
#include "xchg/ipc.h"
#include "xchg/pool.h"
#include "xchg/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A cache of decoded broadcasts, shared by the tasks of a process. */
typedef struct xchg_cache xchg_cache;
/** One task's hold on a broadcast's entry, from xchg_cache_acquire to
 * xchg_cache_holder_release. */
typedef struct xchg_cache_holder xchg_cache_holder;

/** Accounting: delta bytes enter the cache (positive) or leave it
 * (negative); ctx is the caller's (xchg_cache_options.on_bytes_ctx). */
typedef void (*xchg_account_fn)(void *ctx, int64_t delta);

/** How a cache shares, retains, accounts and reads.  Fill it with
 * xchg_cache_options_init, then set what differs. */
typedef struct xchg_cache_options {
  /** Non-zero (default 1): acquirers of one key share one decoded copy.
   * 0: every acquirer decodes its own. */
  int sharing;
  /** How often a waiting acquirer asks its cancel callback, in
   * milliseconds (positive); default 100.  Here and in retain_ms and
   * host_retain_ms, a time over 146 years counts as 146 years. */
  int64_t wait_check_ms;
  /** Retention: keep entries nobody references, so that tasks that do not
   * overlap in time share too.  retain_bytes is a budget on the bytes of all
   * entries (held ones included): when it is exceeded, unreferenced entries
   * are freed least recently released first; a held entry is never freed.
   * retain_ms (0 = no limit) frees an unreferenced entry that many
   * milliseconds after its last release (checked on every acquire and
   * release, and by xchg_cache_trim).  retain_bytes 0 (default) retains
   * nothing; use INT64_MAX for an age limit alone. */
  int64_t retain_bytes;
  int64_t retain_ms; /**< see retain_bytes */
  /** Accounting: called with +bytes when decoded data (or a derived value)
   * enters the cache and -bytes when it is freed, so that an engine can
   * charge its memory manager.  Called with no cache lock held, from the
   * thread that decoded or dropped the last reference.  May be NULL. */
  xchg_account_fn on_bytes;
  void *on_bytes_ctx; /**< the ctx of on_bytes and on_shared_bytes */
  /** The reader's options for every decode: how decoded data is checked
   * (validation, default XCHG_VALIDATE_FULL), the pool decompression runs on
   * (pool, default NULL: the decoding thread), its resource caps
   * (max_buffer_bytes, max_batch_bytes, max_dictionary_bytes, ..., which an
   * engine may want lower for broadcasts than for its own files),
   * allow_missing_eos, readahead_bytes and task_bytes; on_message is not
   * called.  xchg_cache_options_init fills it with xchg_ipc_read_options_init's
   * defaults; it is copied at create. */
  xchg_ipc_read_options read;
  /** The host store (see "Host store" above): a directory shared by the
   * processes of this user on the machine, e.g. "/dev/shm/xchg-<user>";
   * NULL (default) for none.  Read at create (the string need not live on).
   * Ignored when sharing is 0. */
  const char *host_dir;
  /** Host-wide retention, over the segments of every process: a budget on
   * their bytes (held ones included; unheld ones are removed oldest
   * release first while it is exceeded) and an age limit since a
   * segment's last release (0 = none), applied by the scans of the
   * directory (see "Lifetime" above).  host_retain_bytes 0 (the default)
   * keeps nothing: the last release on the host removes the segment. */
  int64_t host_retain_bytes;
  int64_t host_retain_ms; /**< see host_retain_bytes */
  /** Accounting of the bytes among those reported to on_bytes that live in
   * a host segment's shared mapping (so they are one copy for the whole
   * host, not this process's own): called with the same sign and ctx
   * (on_bytes_ctx) right after on_bytes.  May be NULL. */
  xchg_account_fn on_shared_bytes;
} xchg_cache_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are). */
XCHG_API void xchg_cache_options_init(xchg_cache_options *opts);

/** A new cache (opts NULL for the defaults); XCHG_ENOMEM (and *out NULL)
 * when out of memory, XCHG_EINVAL when out is NULL or an option is out of
 * range (wait_check_ms not positive, a negative retain or host_retain
 * budget or age, an unknown read.validation), naming it.  A host store that cannot be opened is no error:
 * the cache decodes privately (xchg_cache_host_error says why). */
XCHG_API XCHG_NODISCARD xchg_status xchg_cache_create(const xchg_cache_options *opts,
                                                      xchg_cache **out, xchg_error *err);

/** Frees the cache and every entry it retains (NULL is a no-op).  Every
 * holder must have been released; arrays and streams handed out stay valid
 * (they keep their buffers). */
XCHG_API void xchg_cache_free(xchg_cache *cache);

/** One IPC stream of a broadcast: its encoded bytes, as memory chunks (a
 * JVM's heap chunks need not be joined), wrapped in a stream codec
 * (XCHG_STREAM_NONE for plain Arrow IPC; XCHG_STREAM_AUTO to detect).
 * One stream: bytes after its end-of-stream marker (a second stream
 * concatenated into the part, whose batches the reader would not see) are
 * XCHG_EFORMAT naming the part and the byte where they begin; give each
 * stream a part of its own. */
typedef struct xchg_broadcast_part {
  const xchg_chunk *chunks; /**< the part's bytes, in order */
  int64_t n_chunks;         /**< entries of chunks */
  xchg_stream_codec codec;  /**< the stream codec around the IPC stream */
} xchg_broadcast_part;

/** Opens the encoded bytes of part `part` of a broadcast as a source in
 * *out (see xchg_broadcast.open_part); ctx is xchg_broadcast.open_ctx. */
typedef xchg_status (*xchg_open_part_fn)(void *ctx, int64_t part, xchg_source **out,
                                         xchg_error *err);

/** The encoded bytes of a broadcast.  When open_part is set, it is called
 * to open the encoded bytes of part i as a source instead of reading
 * parts[i].chunks (parts[i].codec still applies): for bytes that are not in
 * memory, and for tests that block, slow down or break a decode. */
typedef struct xchg_broadcast {
  const xchg_broadcast_part *parts; /**< the parts, in order */
  int64_t n_parts;                  /**< how many; 0 is an empty broadcast */
  xchg_open_part_fn open_part;      /**< NULL: read parts[i].chunks */
  void *open_ctx;                   /**< the ctx of open_part */
} xchg_broadcast;

/** How a holder reads a broadcast: which columns, and how it gives up
 * waiting.  Fill it with xchg_cache_request_init, then set what differs. */
typedef struct xchg_cache_request {
  /** The top-level column indices the holder reads, in the order it sees
   * them (repeats allowed), n_columns of them; NULL (default) for every
   * column. */
  const int64_t *columns;
  int64_t n_columns; /**< entries of columns; 0 when columns is NULL */
  /** Asked with cancel_ctx while waiting (every wait_check_ms) and while
   * decoding: non-zero cancels.  NULL (default): never cancelled. */
  xchg_cancel_fn cancel;
  void *cancel_ctx; /**< the argument of cancel */
} xchg_cache_request;

/** Fills req with the defaults above: every column, no cancellation. */
XCHG_API void xchg_cache_request_init(xchg_cache_request *req);

/** Acquires the broadcast `key` (a string of any length) of cache, decoding
 * what is missing from `bytes`, and waiting for what others are decoding:
 * the columns req names, cancelled as req says (req NULL: every column, no
 * cancellation).  On success *out is a holder to pass to
 * xchg_cache_holder_release.
 *
 * Errors: the decode's own (XCHG_EFORMAT, XCHG_EIO, ...) for the acquirer
 * that decoded; XCHG_ECANCELLED when cancelled; XCHG_EINVAL for a column
 * index out of range, or, when columns missing from the key's entry are
 * decoded from bytes, for bytes whose schema or batches disagree with what
 * the key was decoded from before, and for a NULL cache, key, bytes or
 * out, bytes->parts NULL with parts, or a column list that is not one
 * (negative n_columns, columns NULL with n_columns > 0), naming it.  The
 * key names the bytes: an acquire that finds every column it asks for
 * decoded reads none of its bytes (that is what the cache saves), so other
 * bytes under a key already decoded are not seen then. */
XCHG_API XCHG_NODISCARD xchg_status xchg_cache_acquire(xchg_cache *cache, const char *key,
                                                       const xchg_broadcast *bytes,
                                                       const xchg_cache_request *req,
                                                       xchg_cache_holder **out, xchg_error *err);

/** Drops the holder (NULL is a no-op).  Arrays and streams it handed out
 * stay valid. */
XCHG_API void xchg_cache_holder_release(xchg_cache_holder *holder);

/** The holder's schema: a "+s" whose children are its columns, in the order
 * asked for (a fresh copy each call).  Here and in xchg_cache_holder_batch
 * and xchg_cache_holder_stream, a NULL holder or out is XCHG_EINVAL (out,
 * when given, released-state). */
XCHG_API XCHG_NODISCARD xchg_status xchg_cache_holder_schema(const xchg_cache_holder *holder,
                                                             struct ArrowSchema *out,
                                                             xchg_error *err);

/** The number of batches of the broadcast, over all its parts (0 for NULL). */
XCHG_API int64_t xchg_cache_holder_num_batches(const xchg_cache_holder *holder);
/** The number of rows of the broadcast: the sum of its batches' lengths (0
 * for NULL). */
XCHG_API int64_t xchg_cache_holder_num_rows(const xchg_cache_holder *holder);

/** Batch i as a "+s" ArrowArray of the holder's columns: the caller's own
 * (release it whenever; it references the shared buffers, not the holder). */
XCHG_API XCHG_NODISCARD xchg_status xchg_cache_holder_batch(const xchg_cache_holder *holder,
                                                            int64_t i, struct ArrowArray *out,
                                                            xchg_error *err);

/** Every batch, in order, as an ArrowArrayStream of the caller's own (it may
 * be read after xchg_cache_holder_release, and dropped part way).  Its
 * get_schema and get_next return EINVAL for a NULL out and once it is
 * released (see xchg_ipc_reader_to_stream). */
XCHG_API XCHG_NODISCARD xchg_status xchg_cache_holder_stream(const xchg_cache_holder *holder,
                                                             struct ArrowArrayStream *out,
                                                             xchg_error *err);

/* ---- Derived objects ----------------------------------------------------- */

/** Builds a value from an entry (through holder), e.g. a join's hash table.
 * Sets *value and, optionally, *bytes (charged like decoded data). */
typedef xchg_status (*xchg_derive_fn)(void *ctx, const xchg_cache_holder *holder, void **value,
                                      int64_t *bytes, xchg_error *err);

/** Frees a value an xchg_derive_fn built. */
typedef void (*xchg_destroy_fn)(void *value);

/** How a derived value is built, and how a caller gives up waiting for
 * another's build.  Fill it with xchg_cache_derive_request_init, then set
 * build (required) and what else differs. */
typedef struct xchg_cache_derive_request {
  xchg_derive_fn build;    /**< builds the value; required */
  void *build_ctx;         /**< the ctx of build */
  xchg_destroy_fn destroy; /**< frees the value with the entry; NULL: nothing to free */
  /** Asked with cancel_ctx while waiting for another caller's build:
   * non-zero cancels.  NULL (default): never cancelled. */
  xchg_cancel_fn cancel;
  void *cancel_ctx; /**< the argument of cancel */
} xchg_cache_derive_request;

/** Fills req with the defaults above (build NULL, to be set). */
XCHG_API void xchg_cache_derive_request_init(xchg_cache_derive_request *req);

/** The value named `name` attached to the holder's entry, built by
 * req->build(req->build_ctx, holder, ...) by the first caller and shared by
 * every other holder of the entry (whatever its columns: names are the
 * caller's to choose so that equal names mean equal values).  Single flight
 * with the rules of xchg_cache_acquire: callers arriving during the build
 * wait (asking req->cancel); a failed build is not kept and the first
 * waiter builds again.  req->destroy(value) runs when the entry is freed.
 * *value stays valid while the holder is held.  XCHG_EINVAL when holder,
 * name, req, req->build or value is NULL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_cache_holder_derive(xchg_cache_holder *holder,
                                                             const char *name,
                                                             const xchg_cache_derive_request *req,
                                                             void **value, xchg_error *err);

/* ---- Retention and metrics ------------------------------------------------ */

/** Frees retained entries past retain_ms now, and removes the host
 * segments that host retention lets go (NULL: a no-op). */
XCHG_API void xchg_cache_trim(xchg_cache *cache);

/** A cache's counters, since it was created (entries, retained and
 * bytes_held: now). */
typedef struct xchg_cache_metrics {
  int64_t acquisitions;   /**< successful or not */
  int64_t hits;           /**< acquisitions that found everything decoded */
  int64_t waits;          /**< acquisitions that waited for another's decode and got it
                             (a cancelled waiter counts in cancellations) */
  int64_t decodes;        /**< decodes started (one per column set decoded) */
  int64_t failed_decodes; /**< of which failed (the decoder cancelled included) */
  int64_t cancellations;  /**< acquisitions and derivations that were cancelled */
  int64_t derived_builds; /**< derived values built (failed builds included) */
  int64_t entries;        /**< entries alive now, held or retained */
  int64_t retained;       /**< of which nobody references */
  int64_t bytes_held;     /**< bytes of the entries alive now */
  int64_t evictions;      /**< retained entries freed by budget or age */
  /** The host store (all 0 without one). */
  int64_t host_decodes;   /**< segments this process decoded and published (each is
                             counted in decodes as well) */
  int64_t host_maps;      /**< entries that mapped a segment (its own included; one
                               refused as it is read is a host_fallback too) */
  int64_t host_waits;     /**< host steps that waited for another process's decode */
  int64_t host_fallbacks; /**< host-store failures that made this process decode
                             privately instead (see xchg_cache_host_error) */
  int64_t host_evictions; /**< segments this process removed by host retention */
  int64_t bytes_shared;   /**< of bytes_held, those in host segments' mappings */
} xchg_cache_metrics;

/** Copies the cache's counters so far into *out (all 0 for a NULL cache;
 * out NULL: a no-op). */
XCHG_API void xchg_cache_get_metrics(const xchg_cache *cache, xchg_cache_metrics *out);

/** The host store's last failure (the reason of the last host_fallbacks
 * count, or, from xchg_cache_create on, why the host store could not be
 * opened): returns its status, with its message in *out (out may be NULL);
 * XCHG_OK, with an empty message, when there was none (and for a NULL
 * cache).  Such a failure was never the acquire's: the cache decoded
 * privately instead. */
XCHG_API xchg_status xchg_cache_host_error(const xchg_cache *cache, xchg_error *out);

#ifdef __cplusplus
}
#endif
#endif
