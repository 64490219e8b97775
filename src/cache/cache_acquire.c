/* cache_acquire.c — xchg_cache_acquire, a loop over steps that each claim
 * and make one missing piece (the host segment, the schema, columns) or
 * wait for another thread making it; and the holders' getters. */
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "cache/cache_internal.h"
#include "codec/helpers.h"

static int compare_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Claims the absent slots among the holder's columns and the
 * layout; fills claimed[] (ascending, distinct).  Returns whether anything
 * was claimed; *ready whether everything the holder needs is there. */
static int claim_locked(cache_entry *e, const xchg_cache_holder *h, int64_t *claimed,
                        int64_t *n_claimed, int *layout_claimed, int *ready) {
  *n_claimed = 0;
  *ready = e->layout_state == SLOT_READY;
  for (int64_t k = 0; k < h->n_columns; k++) {
    cache_column *col = &e->columns[h->columns[k]];
    if (col->state == SLOT_ABSENT) {
      col->state = SLOT_MAKING;
      claimed[(*n_claimed)++] = h->columns[k];
    }
    if (col->state != SLOT_READY) *ready = 0;
  }
  *layout_claimed = e->layout_state == SLOT_ABSENT;
  if (*layout_claimed) e->layout_state = SLOT_MAKING;
  qsort(claimed, (size_t)*n_claimed, sizeof *claimed, compare_i64);
  return *n_claimed > 0 || *layout_claimed;
}

static void unclaim_locked(cache_entry *e, const int64_t *claimed, int64_t n_claimed,
                           int layout_claimed) {
  for (int64_t k = 0; k < n_claimed; k++)
    if (e->columns[claimed[k]].state == SLOT_MAKING) e->columns[claimed[k]].state = SLOT_ABSENT;
  if (layout_claimed && e->layout_state == SLOT_MAKING) e->layout_state = SLOT_ABSENT;
}

/* A list given as a count and an array: a negative count, or NULL items
 * with a count above 0, named ("acquire: req->columns is NULL with 3
 * columns"). */
static xchg_status check_list(const char *count_name, int64_t count, const void *items,
                              const char *items_name, const char *unit, xchg_error *err) {
  if (count < 0)
    return xchg_errorf(err, XCHG_EINVAL, "acquire: %s is negative (%lld)", count_name,
                       (long long)count);
  if (count > 0 && !items)
    return xchg_errorf(err, XCHG_EINVAL, "acquire: %s is NULL with %lld %s", items_name,
                       (long long)count, unit);
  return XCHG_OK;
}

/* The arguments of an acquire, each checked on its own so that the error
 * names the one at fault. */
static xchg_status check_arguments(const xchg_cache *c, const char *key, const xchg_broadcast *b,
                                   const xchg_cache_request *req, xchg_error *err) {
  if (!c) return base_null_argument("acquire", "the cache", err);
  if (!key) return base_null_argument("acquire", "key", err);
  if (!b) return base_null_argument("acquire", "bytes", err);
  xchg_status st = check_list("bytes->n_parts", b->n_parts, b->parts, "bytes->parts", "parts", err);
  return st == XCHG_OK ? check_list("req->n_columns", req->n_columns, req->columns, "req->columns",
                                    "columns", err)
                       : st;
}

/* Sets the holder's column list once the schema is known. */
static xchg_status resolve_columns_locked(const cache_entry *e, xchg_cache_holder *h,
                                          const int64_t *columns, xchg_error *err) {
  if (h->columns) return XCHG_OK;
  if (columns) {
    for (int64_t k = 0; k < h->n_columns; k++)
      if (columns[k] < 0 || columns[k] >= e->n_columns)
        return xchg_errorf(err, XCHG_EINVAL, "broadcast '%s': column %lld of %lld", e->key,
                           (long long)columns[k], (long long)e->n_columns);
  } else {
    h->n_columns = e->n_columns;
  }
  h->columns = malloc((size_t)(h->n_columns ? h->n_columns : 1) * sizeof *h->columns);
  if (!h->columns) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t k = 0; k < h->n_columns; k++) h->columns[k] = columns ? columns[k] : k;
  return XCHG_OK;
}
/* The schema step: reads it unlocked and
 * installs it, with the column slots. */
static xchg_status load_schema_locked(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                                      xchg_cancel_fn cancel, void *cancel_ctx,
                                      xchg_ipc_reader **first, xchg_error *err)
    XCHG_REQUIRES(c->lock) {
  struct ArrowSchema schema;
  e->schema_state = SLOT_MAKING;
  xchg_mutex_unlock(&c->lock);
  xchg_status st = cache_read_schema(c, b, cancel, cancel_ctx, first, &schema, err);
  cache_column *columns = NULL;
  if (st == XCHG_OK &&
      !(columns = calloc((size_t)(schema.n_children ? schema.n_children : 1), sizeof *columns))) {
    schema.release(&schema);
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  xchg_mutex_lock(&c->lock);
  if (st == XCHG_OK) {
    e->schema = schema;
    e->n_columns = schema.n_children;
    e->columns = columns;
    e->schema_state = SLOT_READY;
  } else {
    e->schema_state = SLOT_ABSENT;
  }
  pthread_cond_broadcast(&e->changed);
  return st;
}

void cache_count_failure_locked(xchg_cache *c, xchg_status st) XCHG_REQUIRES(c->lock) {
  c->metrics.decodes++;
  c->metrics.failed_decodes++;
  if (st == XCHG_ECANCELLED) c->metrics.cancellations++;
}

/* One decode of what the holder claimed. */
static xchg_status decode_claimed_locked(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                                         xchg_ipc_reader *first, const int64_t *claimed,
                                         int64_t n_claimed, int layout_claimed,
                                         xchg_cancel_fn cancel, void *cancel_ctx, int64_t *added,
                                         xchg_error *err) XCHG_REQUIRES(c->lock) {
  cache_decoded d;
  xchg_mutex_unlock(&c->lock);
  xchg_status st =
      cache_decode_columns(c, e, b, first, claimed, n_claimed, cancel, cancel_ctx, &d, err);
  xchg_mutex_lock(&c->lock);
  int from_segment = cache_is_segment(e, b);
  if (st == XCHG_OK) st = cache_publish_locked(c, e, claimed, &d, added, err);
  if (st == XCHG_OK && from_segment) {
    e->shared_bytes += *added;
    c->metrics.bytes_shared += *added;
  } else if (st == XCHG_OK) {
    c->metrics.decodes++;
  } else {
    unclaim_locked(e, claimed, n_claimed, layout_claimed);
    if (!from_segment) cache_count_failure_locked(c, st);
  }
  pthread_cond_broadcast(&e->changed);
  xchg_mutex_unlock(&c->lock);
  cache_decoded_free(&d); /* what publish did not take */
  xchg_mutex_lock(&c->lock);
  return st;
}

void xchg_cache_request_init(xchg_cache_request *req) { memset(req, 0, sizeof *req); }

/* One acquisition: what it was asked for, and what it holds meanwhile. */
typedef struct acquisition {
  cache_entry *entry;
  xchg_cache_holder *holder;
  const xchg_broadcast *bytes;
  const int64_t *columns; /* as requested: NULL for every column */
  xchg_cancel_fn cancel;
  void *cancel_ctx;
  int64_t *claimed;       /* room for the holder's columns, once it knows them */
  xchg_ipc_reader *first; /* part 0's reader, left by the schema step */
  int waited, decoded_any;
  int64_t added, shared_added;
} acquisition;

/* What a step leaves the loop to do. */
typedef enum acquire_next {
  ACQUIRE_DONE,  /* everything is there, or an error */
  ACQUIRE_RETRY, /* this thread changed something: look again */
  ACQUIRE_WAIT   /* another thread is at it: wait for a change */
} acquire_next;

/* Decodes what a.claimed names; a failure of
 * the host segment falls back to the bytes and is retried. */
static acquire_next decode_step_locked(xchg_cache *c, acquisition *a, const xchg_broadcast *src,
                                       xchg_cancel_fn cancel, int64_t n_claimed, int layout_claimed,
                                       xchg_status *st, xchg_error *err) XCHG_REQUIRES(c->lock) {
  int64_t step_added = 0;
  a->decoded_any = 1;
  *st = decode_claimed_locked(c, a->entry, src, a->first, a->claimed, n_claimed, layout_claimed,
                              cancel, a->cancel_ctx, &step_added, err);
  a->first = NULL;
  a->added += step_added;
  if (cache_is_segment(a->entry, src)) a->shared_added += step_added;
  if (*st != XCHG_OK && cache_segment_failed_over_locked(c, a->entry, src, *st, err)) *st = XCHG_OK;
  return *st == XCHG_OK ? ACQUIRE_RETRY : ACQUIRE_DONE;
}

/* One step of an acquisition: the host step,
 * the schema, then the claimed columns, each by whoever finds it absent. */
static acquire_next acquire_step_locked(xchg_cache *c, acquisition *a, xchg_status *st,
                                        xchg_error *err) XCHG_REQUIRES(c->lock) {
  cache_entry *e = a->entry;
  *st = XCHG_OK;
  if (c->host_wanted && e->host_state != SLOT_READY) {
    if (e->host_state == SLOT_MAKING) return ACQUIRE_WAIT; /* another thread of this process */
    *st = cache_host_step_locked(c, e, a->bytes, a->cancel, a->cancel_ctx, err);
    return *st == XCHG_OK ? ACQUIRE_RETRY : ACQUIRE_DONE;
  }
  const xchg_broadcast *src = cache_entry_source(e, a->bytes);
  /* A mapped segment is read in place, without blocking: nothing to
   * cancel, and a cancellable source would copy what it reads. */
  xchg_cancel_fn src_cancel = cache_is_segment(e, src) ? NULL : a->cancel;
  if (e->schema_state == SLOT_ABSENT &&
      (*st = load_schema_locked(c, e, src, src_cancel, a->cancel_ctx, &a->first, err)) != XCHG_OK) {
    if (cache_segment_failed_over_locked(c, e, src, *st, err)) {
      *st = XCHG_OK;
      return ACQUIRE_RETRY;
    }
    cache_count_failure_locked(c, *st);
    return ACQUIRE_DONE;
  }
  if (e->schema_state != SLOT_READY) return ACQUIRE_WAIT;
  if (!a->claimed) {
    xchg_cache_holder *h = a->holder;
    if ((*st = resolve_columns_locked(e, h, a->columns, err)) != XCHG_OK) return ACQUIRE_DONE;
    if (!(a->claimed = malloc((size_t)(h->n_columns ? h->n_columns : 1) * sizeof *a->claimed))) {
      *st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
      return ACQUIRE_DONE;
    }
  }
  int64_t n_claimed;
  int layout_claimed, ready;
  if (claim_locked(e, a->holder, a->claimed, &n_claimed, &layout_claimed, &ready))
    return decode_step_locked(c, a, src, src_cancel, n_claimed, layout_claimed, st, err);
  return ready ? ACQUIRE_DONE : ACQUIRE_WAIT;
}

/* Steps until the holder has everything,
 * waiting for other threads' changes, cancellable while it waits. */
static xchg_status acquire_steps_locked(xchg_cache *c, acquisition *a, xchg_error *err)
    XCHG_REQUIRES(c->lock) {
  int64_t next_check = 0;
  for (;;) {
    xchg_status st;
    acquire_next next = acquire_step_locked(c, a, &st, err);
    if (next == ACQUIRE_DONE) return st;
    if (next == ACQUIRE_RETRY) continue;
    a->waited = 1;
    if (cache_wait_for_change_locked(c, a->entry, a->cancel, a->cancel_ctx, &next_check)) {
      c->metrics.cancellations++;
      return xchg_errorf(err, XCHG_ECANCELLED,
                         "broadcast '%s': cancelled while waiting for its decode", a->entry->key);
    }
  }
}

xchg_status xchg_cache_acquire(xchg_cache *c, const char *key, const xchg_broadcast *b,
                               const xchg_cache_request *req, xchg_cache_holder **out,
                               xchg_error *err) {
  if (!out) return xchg_errorf(err, XCHG_EINVAL, "acquire: out is NULL");
  *out = NULL;
  xchg_cache_request defaults;
  if (!req) xchg_cache_request_init(&defaults);
  if (!req) req = &defaults;
  xchg_status st = check_arguments(c, key, b, req, err);
  if (st != XCHG_OK) return st;
  acquisition a = {NULL,        calloc(1, sizeof *a.holder),
                   b,           req->columns,
                   req->cancel, req->cancel_ctx,
                   NULL,        NULL,
                   0,           0,
                   0,           0};
  cache_entry *freed = NULL;
  xchg_mutex_lock(&c->lock);
  c->metrics.acquisitions++;
  cache_evict_locked(c, monotonic_ns(), &freed);
  if (!a.holder || !(a.entry = cache_entry_for_locked(c, key))) {
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  } else {
    a.holder->entry = a.entry;
    a.holder->n_columns = req->n_columns;
    st = acquire_steps_locked(c, &a, err);
  }
  if (st == XCHG_OK) {
    if (a.waited)
      c->metrics.waits++;
    else if (!a.decoded_any)
      c->metrics.hits++;
    cache_evict_locked(c, monotonic_ns(), &freed); /* what was decoded may exceed the budget */
  }
  xchg_mutex_unlock(&c->lock);
  xchg_ipc_reader_free(a.first);
  free(a.claimed);
  cache_account(c, a.added);
  cache_account_shared(c, a.shared_added);
  cache_entries_free(c, freed);
  if (st == XCHG_OK) {
    *out = a.holder;
    return XCHG_OK;
  }
  if (a.holder) {
    free(a.holder->columns);
    free(a.holder);
  }
  if (a.entry) cache_entry_unref(a.entry);
  return st;
}

void xchg_cache_holder_release(xchg_cache_holder *h) {
  if (!h) return;
  cache_entry_unref(h->entry);
  free(h->columns);
  free(h);
}

/* ---- holders ---------------------------------------------------------------- */

/* A NULL holder or out is the caller's mistake: XCHG_EINVAL naming it,
 * with out (when given) released-state. */
static xchg_status holder_null(const char *who, const xchg_cache_holder *h, void *out,
                               size_t out_size, xchg_error *err) {
  if (out) memset(out, 0, out_size);
  return base_null_argument(who, !h ? "the holder" : "out", err);
}

xchg_status xchg_cache_holder_schema(const xchg_cache_holder *h, struct ArrowSchema *out,
                                     xchg_error *err) {
  if (!h || !out) return holder_null("xchg_cache_holder_schema", h, out, sizeof *out, err);
  return cache_schema_select(&h->entry->schema, h->columns, h->n_columns, out, err);
}

int64_t xchg_cache_holder_num_batches(const xchg_cache_holder *h) {
  return h ? h->entry->n_batches : 0;
}
int64_t xchg_cache_holder_num_rows(const xchg_cache_holder *h) {
  return h ? h->entry->total_rows : 0;
}

xchg_status xchg_cache_holder_batch(const xchg_cache_holder *h, int64_t i, struct ArrowArray *out,
                                    xchg_error *err) {
  if (!h || !out) return holder_null("xchg_cache_holder_batch", h, out, sizeof *out, err);
  return cache_export_batch(h->entry, h->columns, h->n_columns, i, out, err);
}

xchg_status xchg_cache_holder_stream(const xchg_cache_holder *h, struct ArrowArrayStream *out,
                                     xchg_error *err) {
  if (!h || !out) return holder_null("xchg_cache_holder_stream", h, out, sizeof *out, err);
  return cache_export_stream(h->entry, h->columns, h->n_columns, out, err);
}
