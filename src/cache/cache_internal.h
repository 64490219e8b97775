/* cache_internal.h — the parts of the shared decoded cache that its files
 * share: the cache, entries, their columns and derived values, holders,
 * and the export of batches whose every node keeps its entry alive.
 *
 * The files, one job each: cache_entries.c (the table, retention and
 * lifetime, waiting), cache_decode.c (reading parts, decoding, compaction,
 * publishing), cache_host.c (the host store step), cache_acquire.c
 * (xchg_cache_acquire and holders), cache_derived.c, cache_schema.c,
 * cache_export.c; below them broadcast_part.c (a part's IPC reader) and
 * the host store (host_store.c, host_segment.c), which calls nothing of
 * the cache.
 *
 * One mutex per cache guards its table, its retained list, its metrics and
 * the state of every entry's slots (schema, layout, columns, derived
 * values).  Decoding and building run with the mutex released; what they
 * make is published under it, after which it never changes, so holders read
 * published columns without locking.  Every waiter sleeps on its entry's
 * condition variable, woken by each change of a slot and by its own timeout
 * to ask its cancel callback. */
#ifndef XCHG_CACHE_INTERNAL_H
#define XCHG_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "base/lock.h"
#include "cache/host_store.h"
#include "ipc/array.h"
#include "xchg/cache.h"

/* What a column, the batch layout, the schema or a derived value is at:
 * nobody has it, one acquirer is making it (the others wait), or it is
 * there for good (immutable from then on, read without the lock). */
typedef enum slot_state { SLOT_ABSENT = 0, SLOT_MAKING, SLOT_READY } slot_state;

typedef struct cache_column {
  slot_state state;
  ipc_array **batches; /* one per batch, when READY */
  int64_t bytes;
} cache_column;

typedef struct cache_derived {
  char *name;
  slot_state state;
  void *value;
  xchg_destroy_fn destroy;
  int64_t bytes;
  struct cache_derived *next;
} cache_derived;

typedef struct cache_entry {
  xchg_cache *cache;
  char *key;
  uint64_t hash;
  int in_table; /* shared: findable by key */
  struct cache_entry *bucket_next;
  /* Retained entries (referenced by nobody) form a list, least recently
   * released first. */
  int retained;
  int64_t released_at_ns;
  struct cache_entry *lru_prev, *lru_next;
  int64_t refs;           /* holders, handed-out nodes, streams */
  pthread_cond_t changed; /* a slot changed state */
  slot_state schema_state;
  struct ArrowSchema schema; /* every column */
  int64_t n_columns;
  cache_column *columns;
  slot_state layout_state; /* how many batches, of how many rows */
  int64_t n_batches;
  int64_t *rows;
  int64_t total_rows;
  int64_t bytes; /* decoded data and derived values */
  cache_derived *derived;
  /* The host store step (one per entry): the segment read instead of the
   * broadcast's bytes, NULL when the host store failed (or is off). */
  slot_state host_state;
  host_segment *segment;
  int segment_refused;  /* reading it failed: the bytes are read instead */
  int64_t shared_bytes; /* of bytes, in the segment's mapping */
} cache_entry;

#define CACHE_BUCKETS 256

struct xchg_cache {
  xchg_cache_options opts;
  xchg_mutex lock;
  cache_entry *buckets[CACHE_BUCKETS] XCHG_GUARDED_BY(lock);
  cache_entry *lru_head XCHG_GUARDED_BY(lock); /* retained, oldest release first */
  cache_entry *lru_tail XCHG_GUARDED_BY(lock);
  xchg_cache_metrics metrics XCHG_GUARDED_BY(lock); /* entries, retained, bytes_held: live */
  int destroyed XCHG_GUARDED_BY(lock); /* the owner is gone; free with the last entry */
  int host_wanted;                     /* a host_dir was given, with sharing */
  host_store *host;                    /* NULL when it could not be opened */
  xchg_status host_open_status;        /* why host is NULL, and host_open_error */
  xchg_error host_open_error;
  /* The last failure, for xchg_cache_host_error. */
  xchg_status host_status XCHG_GUARDED_BY(lock);
  xchg_error host_error XCHG_GUARDED_BY(lock);
};

struct xchg_cache_holder {
  cache_entry *entry;
  int64_t *columns;
  int64_t n_columns;
};

/* Entry references, taken and dropped under the cache's lock (the entry is
 * freed or retained with the last one). */
void cache_entry_ref(cache_entry *e);
void cache_entry_unref(cache_entry *e);

/* ---- entries (cache_entries.c) ---- */

/* Reports decoded bytes (and, after it, the part of them in shared
 * mappings) to the owner's callbacks; unlocked. */
void cache_account(xchg_cache *c, int64_t delta);
void cache_account_shared(xchg_cache *c, int64_t shared);
/* Finds or creates the entry for key and references it. */
cache_entry *cache_entry_for_locked(xchg_cache *c, const char *key) XCHG_REQUIRES(c->lock);
/* Detaches retained entries past their age, then, while the cache is over
 * its byte budget, the least recently released ones (onto *freed). */
void cache_evict_locked(xchg_cache *c, int64_t now, cache_entry **freed) XCHG_REQUIRES(c->lock);
/* Frees detached entries (unlocked), and the cache with its last entry
 * once its owner has destroyed it. */
void cache_entries_free(xchg_cache *c, cache_entry *list);
/* Waits for a change of e, asking cancel every wait_check_ms;
 * returns non-zero when cancelled. */
int cache_wait_for_change_locked(xchg_cache *c, cache_entry *e, xchg_cancel_fn cancel,
                                 void *cancel_ctx, int64_t *next_check) XCHG_REQUIRES(c->lock);

/* ---- decoding (cache_decode.c) ---- */

/* What one decode made: the batch layout and, per decoded column, its
 * arrays and bytes. */
typedef struct cache_decoded {
  int64_t n_batches, capacity;
  int64_t *rows;
  int64_t n_columns;
  ipc_array ***columns;
  int64_t *bytes;
} cache_decoded;

void cache_decoded_free(cache_decoded *d);
/* Whether b is e's host segment (whose arrays may point into its mapping:
 * they are not compacted, and reading them is not a decode). */
int cache_is_segment(const cache_entry *e, const xchg_broadcast *b);
/* The schema, from part 0, whose reader is kept in *first. */
xchg_status cache_read_schema(const xchg_cache *c, const xchg_broadcast *b, xchg_cancel_fn cancel,
                              void *cancel_ctx, xchg_ipc_reader **first, struct ArrowSchema *schema,
                              xchg_error *err);
/* Decodes columns[0..n) (ascending, distinct) of every part into d
 * (unlocked); first is part 0's reader when already open (taken over). */
xchg_status cache_decode_columns(const xchg_cache *c, const cache_entry *e, const xchg_broadcast *b,
                                 xchg_ipc_reader *first, const int64_t *columns, int64_t n,
                                 xchg_cancel_fn cancel, void *cancel_ctx, cache_decoded *d,
                                 xchg_error *err);
/* Publishes a successful decode; *added is the bytes added. */
xchg_status cache_publish_locked(xchg_cache *c, cache_entry *e, const int64_t *columns,
                                 cache_decoded *d, int64_t *added, xchg_error *err)
    XCHG_REQUIRES(c->lock);

/* ---- the host store step (cache_host.c) ---- */

/* The entry's host step. */
xchg_status cache_host_step_locked(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                                   xchg_cancel_fn cancel, void *cancel_ctx, xchg_error *err)
    XCHG_REQUIRES(c->lock);
/* The bytes the entry decodes from: its segment, unless there is none or
 * reading it failed. */
const xchg_broadcast *cache_entry_source(const cache_entry *e, const xchg_broadcast *b);
/* After a failure reading from src: falls back from the segment
 * to the bytes when it can (returns 1). */
int cache_segment_failed_over_locked(xchg_cache *c, cache_entry *e, const xchg_broadcast *src,
                                     xchg_status st, const xchg_error *err) XCHG_REQUIRES(c->lock);

/* ---- acquire (cache_acquire.c) ---- */

/* A failed decode, counted. */
void cache_count_failure_locked(xchg_cache *c, xchg_status st) XCHG_REQUIRES(c->lock);

/* ---- export (cache_export.c) ---- */

/* Exports batch i of entry e with the given columns as a "+s" ArrowArray
 * whose every node holds a reference on e. */
xchg_status cache_export_batch(cache_entry *e, const int64_t *columns, int64_t n_columns, int64_t i,
                               struct ArrowArray *out, xchg_error *err);

/* A stream over every batch of e with the given columns; holds its own
 * reference on e. */
xchg_status cache_export_stream(cache_entry *e, const int64_t *columns, int64_t n_columns,
                                struct ArrowArrayStream *out, xchg_error *err);

/* Schemas (cache_schema.c): a deep copy of root with the children
 * columns[0..n) (every child when columns is NULL), an empty "+s", and
 * equality of format, name, flags and shape. */
xchg_status cache_schema_select(const struct ArrowSchema *root, const int64_t *columns,
                                int64_t n_columns, struct ArrowSchema *out, xchg_error *err);
xchg_status cache_schema_empty(struct ArrowSchema *out, xchg_error *err);

#endif
