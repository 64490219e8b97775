/* cache_derived.c — derived values: one per entry and name, built once
 * (single-flight, like a decode) and freed with the entry. */
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "cache/cache_internal.h"

/* ---- derived values --------------------------------------------------------- */

static cache_derived *derived_for_locked(cache_entry *e, const char *name) {
  for (cache_derived *d = e->derived; d; d = d->next)
    if (strcmp(d->name, name) == 0) return d;
  cache_derived *d = calloc(1, sizeof *d);
  size_t n = strlen(name) + 1;
  if (!d || !(d->name = malloc(n))) {
    free(d);
    return NULL;
  }
  memcpy(d->name, name, n);
  d->next = e->derived;
  e->derived = d;
  return d;
}

void xchg_cache_derive_request_init(xchg_cache_derive_request *req) { memset(req, 0, sizeof *req); }

xchg_status xchg_cache_holder_derive(xchg_cache_holder *h, const char *name,
                                     const xchg_cache_derive_request *req, void **value,
                                     xchg_error *err) {
  if (!value) return base_null_argument("xchg_cache_holder_derive", "value", err);
  *value = NULL;
  const char *missing = !h            ? "the holder"
                        : !name       ? "name"
                        : !req        ? "req"
                        : !req->build ? "req->build (the build function)"
                                      : NULL;
  if (missing) return base_null_argument("xchg_cache_holder_derive", missing, err);
  xchg_derive_fn build = req->build;
  void *build_ctx = req->build_ctx;
  xchg_destroy_fn destroy = req->destroy;
  xchg_cancel_fn cancel = req->cancel;
  void *cancel_ctx = req->cancel_ctx;
  cache_entry *e = h->entry;
  xchg_cache *c = e->cache;
  xchg_status st = XCHG_OK;
  int64_t next_check = 0;
  xchg_mutex_lock(&c->lock);
  cache_derived *d = derived_for_locked(e, name);
  if (!d) st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  while (st == XCHG_OK && d->state != SLOT_READY) {
    if (d->state == SLOT_MAKING) {
      if (cache_wait_for_change_locked(c, e, cancel, cancel_ctx, &next_check)) {
        c->metrics.cancellations++;
        st = xchg_errorf(err, XCHG_ECANCELLED, "derived '%s': cancelled while waiting", name);
      }
      continue;
    }
    d->state = SLOT_MAKING;
    c->metrics.derived_builds++;
    xchg_mutex_unlock(&c->lock);
    void *made = NULL;
    int64_t bytes = 0;
    st = build(build_ctx, h, &made, &bytes, err);
    xchg_mutex_lock(&c->lock);
    if (st == XCHG_OK) {
      d->value = made;
      d->destroy = destroy;
      d->bytes = bytes;
      d->state = SLOT_READY;
      e->bytes += bytes;
      c->metrics.bytes_held += bytes;
    } else {
      d->state = SLOT_ABSENT;
      if (st == XCHG_ECANCELLED) c->metrics.cancellations++;
    }
    pthread_cond_broadcast(&e->changed);
    if (st == XCHG_OK) {
      xchg_mutex_unlock(&c->lock);
      cache_account(c, bytes);
      xchg_mutex_lock(&c->lock);
    }
  }
  if (st == XCHG_OK) *value = d->value;
  xchg_mutex_unlock(&c->lock);
  return st;
}
