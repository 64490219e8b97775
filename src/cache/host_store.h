/* host_store.h — the cache's host store: one decoded copy of a broadcast per
 * machine, in a directory (typically on /dev/shm) that every process of the
 * user shares.  See xchg/cache.h ("Host store") for the guarantees.
 *
 * A segment is one file per key: a header naming the key and where each
 * part's IPC stream lies, then the parts as uncompressed, 64-byte aligned
 * Arrow IPC streams.  Files of a key (its name is a hash of the key):
 *   <hash>.seg   the published segment (complete: it appears by rename)
 *   <hash>.tmp   the segment being written, by the holder of the lock
 *   <hash>.lock  the key's lock: flock(LOCK_EX) while decoding or evicting
 * A process holding a mapped segment holds flock(LOCK_SH) on it (its
 * lease); a segment is unlinked only under its key's lock and LOCK_EX on
 * the segment itself, so never while leased. */
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

/* What the store needs from the cache to write a segment: the IPC reader
 * of part i of the broadcast's own bytes (decoding them, under the
 * acquirer's cancel check). */
typedef xchg_status (*host_open_reader_fn)(void *ctx, int64_t part, xchg_ipc_reader **out,
                                           xchg_error *err);

typedef struct host_request {
  const char *key;
  int64_t n_parts;
  int validated; /* open_reader validates values in full (XCHG_VALIDATE_FULL) */
  host_open_reader_fn open_reader;
  void *open_ctx;
  xchg_cancel_fn cancel;
  void *cancel_ctx;
  int64_t wait_check_ms;
} host_request;

/* What host_store_obtain did, for the cache's metrics. */
typedef struct host_outcome {
  int attempted; /* this process decoded the broadcast's bytes (or tried to) */
  int decoded;  /* this process wrote and published the segment */
  int waited;   /* it waited for another process's lock on the key */
} host_outcome;

/* The segment of req->key: mapped when published, else decoded (from
 * req's parts) by this process, published and mapped, waiting first for
 * another process that is decoding it.  Returns:
 *   XCHG_OK, *out set: the mapped segment (the caller's reference);
 *   XCHG_OK, *out NULL: the store failed (space, permissions, a refused or
 *     corrupt segment...): *why says how, and the caller decodes privately;
 *   an error: the broadcast's own bytes failed to decode, or the acquirer
 *     was cancelled (err says which). */
xchg_status host_store_obtain(host_store *s, const host_request *req, host_segment **out,
                              host_outcome *outcome, xchg_error *why, xchg_error *err);

/* Removes the segments that nobody holds and that retention lets go. */
void host_store_evict(host_store *s);
/* Segments removed so far through s (and the mappings it made). */
int64_t host_store_evictions(host_store *s);

/* The segment's parts as a broadcast (IPC streams over the mapping, read
 * zero-copy), valid while the segment is. */
const xchg_broadcast *host_segment_broadcast(const host_segment *seg);
int64_t host_segment_size(const host_segment *seg);
/* Whether the segment's writer validated its values in full while decoding
 * them (recorded in its checksummed header): reading it then needs the
 * bounds checked only. */
int host_segment_validated(const host_segment *seg);
/* Recomputes the header checksum of a segment's bytes in memory: 0, or -1
 * (nothing changed) when they are too short for the header they declare.
 * For fuzz/fuzz_host_segment.c, whose mutations must get past the checksum
 * to reach the part table and the parts behind it. */
int host_segment_reseal(void *segment, size_t size);
/* Frees the segment; the mapping, and with it the lease, goes once no
 * array points into it any more (they hold references on it). */
void host_segment_free(host_segment *seg);

#endif
