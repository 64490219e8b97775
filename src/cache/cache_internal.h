/* cache_internal.h — the parts of the shared decoded cache that its files
 * share: entries, their columns and derived values, holders, and the
 * export of batches whose every node keeps its entry alive. */
#ifndef XCHG_CACHE_INTERNAL_H
#define XCHG_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

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
  int in_table;                       /* shared: findable by key */
  struct cache_entry *bucket_next;
  /* Retained entries (referenced by nobody) form a list, least recently
   * released first. */
  int retained;
  int64_t released_at_ns;
  struct cache_entry *lru_prev, *lru_next;
  int64_t refs;                       /* holders, handed-out nodes, streams */
  pthread_cond_t changed;             /* a slot changed state */
  slot_state schema_state;
  struct ArrowSchema schema;          /* every column */
  int64_t n_columns;
  cache_column *columns;
  slot_state layout_state;            /* how many batches, of how many rows */
  int64_t n_batches;
  int64_t *rows;
  int64_t total_rows;
  int64_t bytes;                      /* decoded data and derived values */
  cache_derived *derived;
  /* The host store step (one per entry): the segment read instead of the
   * broadcast's bytes, NULL when the host store failed (or is off). */
  slot_state host_state;
  host_segment *segment;
  int segment_refused;                /* reading it failed: the bytes are read instead */
  int64_t shared_bytes;               /* of bytes, in the segment's mapping */
} cache_entry;

struct xchg_cache_holder {
  cache_entry *entry;
  int64_t *columns;
  int64_t n_columns;
};

/* Entry references, taken and dropped under the cache's lock (the entry is
 * freed or retained with the last one). */
void cache_entry_ref(cache_entry *e);
void cache_entry_unref(cache_entry *e);

/* Exports batch i of entry e with the given columns as a "+s" ArrowArray
 * whose every node holds a reference on e. */
xchg_status cache_export_batch(cache_entry *e, const int64_t *columns, int64_t n_columns,
                               int64_t i, struct ArrowArray *out, xchg_error *err);

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
