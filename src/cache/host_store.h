/* host_store.h — the cache's host store: one decoded copy of a broadcast per
 * machine, in a directory (typically on /dev/shm) that every process of the
 * user shares.  See xchg/cache.h ("Host store") for the guarantees.
 *
 * A segment is one file per key: a header naming the key and where each
 * part's IPC stream lies, then the parts as uncompressed, 64-byte aligned
 * Arrow IPC streams.  Files of a key (its name is a hash of the key):
 *   <hash>.seg   the published segment (complete: it appears by a rename
 *                that never replaces another, or a link where the file
 *                system has no such rename)
 *   <hash>.tmp   the segment being written, by the holder of the lock
 *   <hash>.lock  the key's lock: flock(LOCK_EX) while deciding to write
 *                and writing the segment.  Its holder unlinks it before
 *                letting go, unless its write failed for lack of room: the
 *                file then records the room the segment needs, for a while
 *                (see host_store_obtain).
 * A process holding a mapped segment holds flock(LOCK_SH) on it (its
 * lease).  A segment is unlinked only by a holder of LOCK_EX on it, who
 * checks first that the name still is that file: so never while leased,
 * and since publishing never replaces a file, without the key's lock.  The
 * last lease to go takes LOCK_EX in its place (the lock is granted only
 * when no other lease is left), so that at retention 0 the last release
 * removes the segment whatever the interleaving. */
#ifndef XCHG_HOST_STORE_H
#define XCHG_HOST_STORE_H

#include <stdint.h>

#include "xchg/cache.h"

typedef struct host_store host_store;
typedef struct host_segment host_segment;

/* Opens the store in dir (created 0700 when missing), after checking that
 * it is a directory owned by this user and writable by nobody else.
 * retain_bytes / retain_ms are the host-wide retention (see cache.h). */
xchg_status host_store_open(const char *dir, int64_t retain_bytes, int64_t retain_ms,
                            host_store **out, xchg_error *err);
/* Drops the opener's reference (mapped segments keep their own). */
void host_store_close(host_store *s);

/* What the store needs to write a segment: plain data, the broadcast's
 * own bytes and how to read them, which it decodes itself (through
 * broadcast_part.h, under the acquirer's cancel check).  Not callbacks
 * into the cache: the cache calls the store and never the other way
 * round, so that neither's locking or state depends on the other's (the
 * cache's lock is never taken from inside the store). */
typedef struct host_request {
  const char *key;
  const xchg_broadcast *bytes;
  const xchg_ipc_read_options *read;
  xchg_cancel_fn cancel;
  void *cancel_ctx;
  int64_t wait_check_ms;
} host_request;

/* What host_store_obtain did, for the cache's metrics. */
typedef struct host_outcome {
  int attempted;       /* this process decoded the broadcast's bytes (or tried to) */
  int decoded;         /* this process wrote and published the segment */
  int waited;          /* it waited for another process's lock on the key */
  xchg_status failure; /* the store's failure that *why describes, else XCHG_OK */
} host_outcome;

/* The segment of req->key: mapped when published, else decoded (from
 * req->bytes) by this process, published and mapped, waiting first for
 * another process that is decoding it.  First, the segments that
 * retention lets go are removed (host_store_evict).  A write that fails
 * for lack of room records in the key's lock file the room it needed (at
 * least): for HOST_FAILURE_MEMORY_MS, a process that finds the record
 * (waiting or arriving) and less free space than that on the store's file
 * system (statvfs) falls back at once, without writing.  A write stops
 * early for lack of room, too, once an eighth of a part's bytes (of a
 * known size) is read: when the rest of the part, projected from what
 * was written for what was read, exceeds the free space.  Returns:
 *   XCHG_OK, *out set: the mapped segment (the caller's reference);
 *   XCHG_OK, *out NULL: the store failed (space, permissions, a refused or
 *     corrupt segment...): *why says how, outcome->failure has its status,
 *     and the caller decodes privately;
 *   an error: the broadcast's own bytes failed to decode, or the acquirer
 *     was cancelled (err says which). */
xchg_status host_store_obtain(host_store *s, const host_request *req, host_segment **out,
                              host_outcome *outcome, xchg_error *why, xchg_error *err);

/* How long a failed write's record of the room it needed is heeded. */
#define HOST_FAILURE_MEMORY_MS 60000

/* Removes the segments that nobody holds and that retention lets go (a
 * scan of the directory), and what dead processes left: temporaries, lock
 * files nobody holds, records past HOST_FAILURE_MEMORY_MS.  Run by
 * host_store_obtain and xchg_cache_trim, never by a release. */
void host_store_evict(host_store *s);
/* Segments removed so far through s (and the mappings it made). */
int64_t host_store_evictions(host_store *s);

/* The segment's parts as a broadcast (IPC streams over the mapping, read
 * zero-copy), valid while the segment is. */
const xchg_broadcast *host_segment_broadcast(const host_segment *seg);
int64_t host_segment_size(const host_segment *seg);
/* Frees the segment; the mapping, and with it the lease, goes once no
 * array points into it any more (they hold references on it).  At
 * retention 0 the last lease to go on the host removes the segment (a
 * few non-blocking calls on its own file, no scan). */
void host_segment_free(host_segment *seg);

/* The segment in `bytes` (a mapping, or any buffer: the entry point of
 * fuzz/fuzz_host_segment.c), after checking its header: size, magic,
 * checksum, key and every part's bounds.  Takes a reference on bytes;
 * name is the file's, for messages.  The parts' IPC is checked as it is
 * read (by the cache's reader). */
xchg_status host_segment_open(xchg_buf *bytes, const char *key, const char *name,
                              host_segment **out, xchg_error *err);
/* Recomputes, in place, the header checksum of a segment's bytes whose
 * header sizes are in bounds (for tests and fuzzing, so that a changed
 * header reaches the checks behind the checksum).  Returns 0, or -1 when
 * the sizes are out of bounds (nothing changed). */
int host_segment_seal(uint8_t *bytes, size_t size);

/* ---- test hook -------------------------------------------------------------
 * Points of the store's protocols where a test stops a process to force an
 * interleaving with another one (tests/test_host_store.c).  Not an API:
 * NULL except in tests, which set it in their own processes. */
typedef enum host_hook_point {
  HOST_HOOK_SCAN,        /* a scan of the directory begins (file NULL) */
  HOST_HOOK_MAP,         /* the segment `file` is open, to be mapped, not yet leased */
  HOST_HOOK_REMOVE,      /* a scan has opened the segment `file` to remove it */
  HOST_HOOK_REMOVING,    /* LOCK_EX on `file` is granted: no process holds it */
  HOST_HOOK_REMOVE_HELD, /* removing `file` failed: another process holds it */
  HOST_HOOK_WRITE,       /* writing the segment `file` begins, the key's lock held */
  HOST_HOOK_PUBLISHED,   /* `file` is published, not yet mapped by its writer */
  HOST_HOOK_WRITE_FAILED /* writing `file` failed for lack of room and its record is
                             made; the key's lock is still held */
} host_hook_point;
extern void (*host_store_hook)(host_hook_point point, const char *file);

#endif
