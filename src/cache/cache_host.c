/* cache_host.c — the cache's host store step: the entry's segment, mapped
 * from the host store (or written there first), and the fallback to the
 * broadcast's own bytes when the store fails. */
#include "cache/cache_internal.h"

/* ---- the host store ------------------------------------------------------ */

/* A host-store failure: counted; the entry reads its own bytes. */
static void host_fell_back_locked(xchg_cache *c, xchg_status st, const xchg_error *why)
    XCHG_REQUIRES(c->lock) {
  c->metrics.host_fallbacks++;
  c->host_status = st;
  c->host_error = *why;
}

/* The bytes the entry decodes from: its segment, unless there is none or
 * reading it failed. */
const xchg_broadcast *cache_entry_source(const cache_entry *e, const xchg_broadcast *b) {
  return e->segment && !e->segment_refused ? host_segment_broadcast(e->segment) : b;
}

/* After a failure reading from src: when src was the segment and
 * the acquirer was not cancelled, falls back to the bytes (returns 1). */
int cache_segment_failed_over_locked(xchg_cache *c, cache_entry *e, const xchg_broadcast *src,
                                     xchg_status st, const xchg_error *err) XCHG_REQUIRES(c->lock) {
  if (!cache_is_segment(e, src) || st == XCHG_ECANCELLED) return 0;
  e->segment_refused = 1;
  xchg_error why = {{0}};
  if (err) why = *err;
  host_fell_back_locked(c, st, &why);
  return 1;
}

/* The entry's host step: maps the key's
 * segment, decoding and publishing it first when nobody on the host has.
 * Only the broadcast's own failures and cancellation are errors. */
xchg_status cache_host_step_locked(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                                   xchg_cancel_fn cancel, void *cancel_ctx, xchg_error *err)
    XCHG_REQUIRES(c->lock) {
  e->host_state = SLOT_MAKING;
  xchg_mutex_unlock(&c->lock);
  host_segment *seg = NULL;
  host_outcome out = {0, 0, 0, c->host_open_status};
  xchg_error why = c->host_open_error;
  xchg_status st = XCHG_OK;
  if (c->host) {
    host_request req = {e->key, b, &c->opts.read, cancel, cancel_ctx, c->opts.wait_check_ms};
    st = host_store_obtain(c->host, &req, &seg, &out, &why, err);
  }
  xchg_mutex_lock(&c->lock);
  c->metrics.host_decodes += out.decoded;
  c->metrics.decodes += out.decoded;
  c->metrics.host_waits += out.waited;
  if (st == XCHG_OK) {
    e->segment = seg;
    e->host_state = SLOT_READY;
    if (seg)
      c->metrics.host_maps++;
    else
      host_fell_back_locked(c, out.failure, &why);
  } else {
    e->host_state = SLOT_ABSENT;
    if (out.attempted)
      cache_count_failure_locked(c, st);
    else
      c->metrics.cancellations++;
  }
  pthread_cond_broadcast(&e->changed);
  return st;
}
