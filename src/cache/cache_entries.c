/* cache_entries.c — the shared decoded cache's table of entries: creation,
 * lookup, references, retention (the LRU of released entries) and
 * eviction, freeing, the getters, and waiting for a change of an entry.
 * See cache_internal.h for the lock and xchg/cache.h for the API. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache_internal.h"
#include "codec/helpers.h"
#include "ipc/decode.h"

void xchg_cache_options_init(xchg_cache_options *opts) {
  if (!opts) return; /* nothing to fill */
  memset(opts, 0, sizeof *opts);
  opts->sharing = 1;
  opts->wait_check_ms = 100;
  xchg_ipc_read_options_init(&opts->read);
}

/* Refuses options no cache can follow, naming the first such one. */
static xchg_status check_options(const xchg_cache_options *o, xchg_error *err) {
  const char *bad = o->wait_check_ms <= 0      ? "wait_check_ms is not positive"
                    : o->retain_bytes < 0      ? "retain_bytes is negative"
                    : o->retain_ms < 0         ? "retain_ms is negative"
                    : o->host_retain_bytes < 0 ? "host_retain_bytes is negative"
                    : o->host_retain_ms < 0    ? "host_retain_ms is negative"
                                               : NULL;
  if (bad) return xchg_errorf(err, XCHG_EINVAL, "xchg_cache_create: %s", bad);
  return ipc_read_options_check(&o->read, "xchg_cache_create", err);
}

/* Times past this many milliseconds (146 years) count as this long, the
 * same as no limit (or no question asked): their nanoseconds are added to
 * clocks, which a longer time would overflow. */
#define CACHE_MAX_MS (INT64_MAX / 1000000 / 2)

static void clamp_ms(int64_t *ms) {
  if (*ms > CACHE_MAX_MS) *ms = CACHE_MAX_MS;
}

/* A host store that could not be opened: every entry falls back, with this
 * reason, which xchg_cache_host_error gives from now on, so that a caller
 * checking it after create learns of a misconfigured host_dir before the
 * first acquire. */
static void report_host_unopened(xchg_cache *c) {
  c->host = NULL;
  xchg_mutex_lock(&c->lock);
  c->host_status = c->host_open_status;
  c->host_error = c->host_open_error;
  xchg_mutex_unlock(&c->lock);
}

xchg_status xchg_cache_create(const xchg_cache_options *opts, xchg_cache **out, xchg_error *err) {
  if (!out) return xchg_errorf(err, XCHG_EINVAL, "xchg_cache_create: out is NULL");
  *out = NULL;
  xchg_cache_options defaults;
  xchg_cache_options_init(&defaults);
  xchg_status st = check_options(opts ? opts : &defaults, err);
  if (st != XCHG_OK) return st;
  xchg_cache *c = calloc(1, sizeof *c);
  if (!c) return xchg_errorf(err, XCHG_ENOMEM, "out of memory creating a cache");
  c->opts = opts ? *opts : defaults;
  clamp_ms(&c->opts.wait_check_ms);
  clamp_ms(&c->opts.retain_ms);
  clamp_ms(&c->opts.host_retain_ms);
  if (xchg_mutex_init(&c->lock) != 0) {
    free(c);
    return xchg_errorf(err, XCHG_ENOMEM, "cannot create the cache's lock");
  }
  c->host_wanted = c->opts.sharing && c->opts.host_dir && c->opts.host_dir[0];
  if (c->host_wanted)
    c->host_open_status = host_store_open(c->opts.host_dir, c->opts.host_retain_bytes,
                                          c->opts.host_retain_ms, &c->host, &c->host_open_error);
  if (c->host_open_status != XCHG_OK) report_host_unopened(c);
  c->opts.host_dir = NULL; /* not the cache's to keep */
  *out = c;
  return XCHG_OK;
}

static uint64_t hash_key(const char *key) { return fnv1a(key, strlen(key), FNV1A_BASIS); }

void cache_account(xchg_cache *c, int64_t delta) {
  if (delta != 0 && c->opts.on_bytes) c->opts.on_bytes(c->opts.on_bytes_ctx, delta);
}

/* After cache_account(c, delta): the part of delta in shared mappings. */
void cache_account_shared(xchg_cache *c, int64_t shared) {
  if (shared != 0 && c->opts.on_shared_bytes) c->opts.on_shared_bytes(c->opts.on_bytes_ctx, shared);
}

/* ---- entries ------------------------------------------------------------------ */

static cache_entry *entry_new(xchg_cache *c, const char *key) {
  cache_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  size_t n = strlen(key) + 1;
  e->key = malloc(n);
  pthread_condattr_t attr;
  int cond_ok = pthread_condattr_init(&attr) == 0;
  if (cond_ok) {
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    cond_ok = pthread_cond_init(&e->changed, &attr) == 0;
    pthread_condattr_destroy(&attr);
  }
  if (!e->key || !cond_ok) {
    if (cond_ok) pthread_cond_destroy(&e->changed);
    free(e->key);
    free(e);
    return NULL;
  }
  memcpy(e->key, key, n);
  e->hash = hash_key(key);
  e->cache = c;
  return e;
}

static cache_entry *table_find_locked(xchg_cache *c, const char *key) XCHG_REQUIRES(c->lock) {
  uint64_t h = hash_key(key);
  for (cache_entry *e = c->buckets[h % CACHE_BUCKETS]; e; e = e->bucket_next)
    if (e->hash == h && strcmp(e->key, key) == 0) return e;
  return NULL;
}

static void table_insert_locked(xchg_cache *c, cache_entry *e) XCHG_REQUIRES(c->lock) {
  cache_entry **b = &c->buckets[e->hash % CACHE_BUCKETS];
  e->bucket_next = *b;
  *b = e;
  e->in_table = 1;
}

static void table_remove_locked(xchg_cache *c, cache_entry *e) XCHG_REQUIRES(c->lock) {
  for (cache_entry **p = &c->buckets[e->hash % CACHE_BUCKETS]; *p; p = &(*p)->bucket_next)
    if (*p == e) {
      *p = e->bucket_next;
      break;
    }
  e->in_table = 0;
}

static void lru_unlink_locked(xchg_cache *c, cache_entry *e) XCHG_REQUIRES(c->lock) {
  if (e->lru_prev)
    e->lru_prev->lru_next = e->lru_next;
  else
    c->lru_head = e->lru_next;
  if (e->lru_next)
    e->lru_next->lru_prev = e->lru_prev;
  else
    c->lru_tail = e->lru_prev;
  e->lru_prev = e->lru_next = NULL;
  e->retained = 0;
  c->metrics.retained--;
}

static void lru_append_locked(xchg_cache *c, cache_entry *e) XCHG_REQUIRES(c->lock) {
  e->lru_prev = c->lru_tail;
  e->lru_next = NULL;
  if (c->lru_tail)
    c->lru_tail->lru_next = e;
  else
    c->lru_head = e;
  c->lru_tail = e;
  e->retained = 1;
  c->metrics.retained++;
}

/* Takes e out of the cache; it is freed by entry_free after the
 * lock is released.  Detached entries are chained through lru_next. */
static void detach_locked(xchg_cache *c, cache_entry *e, cache_entry **freed)
    XCHG_REQUIRES(c->lock) {
  if (e->retained) lru_unlink_locked(c, e);
  if (e->in_table) table_remove_locked(c, e);
  c->metrics.bytes_held -= e->bytes;
  c->metrics.bytes_shared -= e->shared_bytes;
  e->lru_next = *freed;
  *freed = e;
}

/* Detaches retained entries past their age, then, while the cache is over
 * its byte budget, the least recently released ones. */
void cache_evict_locked(xchg_cache *c, int64_t now, cache_entry **freed) XCHG_REQUIRES(c->lock) {
  int64_t max_age = c->opts.retain_ms * 1000000;
  while (c->lru_head && max_age > 0 && now - c->lru_head->released_at_ns >= max_age) {
    c->metrics.evictions++;
    detach_locked(c, c->lru_head, freed);
  }
  while (c->lru_head && c->metrics.bytes_held > c->opts.retain_bytes) {
    c->metrics.evictions++;
    detach_locked(c, c->lru_head, freed);
  }
}

static void free_cache(xchg_cache *c) {
  host_store_close(c->host);
  xchg_mutex_destroy(&c->lock);
  free(c);
}

/* Frees detached entries (unlocked): their arrays, derived values and the
 * bytes they accounted for; and the cache with its last entry once its
 * owner has destroyed it. */
void cache_entries_free(xchg_cache *c, cache_entry *list) {
  while (list) {
    cache_entry *e = list;
    list = e->lru_next;
    for (int64_t k = 0; k < e->n_columns; k++) {
      if (e->columns[k].state == SLOT_READY)
        for (int64_t i = 0; i < e->n_batches; i++) ipc_array_unref(e->columns[k].batches[i]);
      free(e->columns[k].batches);
    }
    free(e->columns);
    for (cache_derived *d = e->derived, *next; d; d = next) {
      next = d->next;
      if (d->state == SLOT_READY && d->destroy) d->destroy(d->value);
      free(d->name);
      free(d);
    }
    if (e->schema.release) e->schema.release(&e->schema);
    host_segment_free(e->segment);
    cache_account(c, -e->bytes);
    cache_account_shared(c, -e->shared_bytes);
    free(e->rows);
    free(e->key);
    pthread_cond_destroy(&e->changed);
    free(e);
    xchg_mutex_lock(&c->lock);
    int last = --c->metrics.entries == 0 && c->destroyed;
    xchg_mutex_unlock(&c->lock);
    if (last) free_cache(c);
  }
}

void cache_entry_ref(cache_entry *e) {
  xchg_mutex_lock(&e->cache->lock);
  e->refs++;
  xchg_mutex_unlock(&e->cache->lock);
}

/* An entry nobody references is kept when retention is on, sharing is on,
 * and it is whole enough to serve an acquirer (it has its batches). */
static int worth_retaining_locked(const xchg_cache *c, const cache_entry *e)
    XCHG_REQUIRES(c->lock) {
  return e->in_table && !c->destroyed && c->opts.retain_bytes > 0 && e->layout_state == SLOT_READY;
}

void cache_entry_unref(cache_entry *e) {
  xchg_cache *c = e->cache;
  cache_entry *freed = NULL;
  xchg_mutex_lock(&c->lock);
  if (--e->refs == 0) {
    if (worth_retaining_locked(c, e)) {
      e->released_at_ns = monotonic_ns();
      lru_append_locked(c, e);
      cache_evict_locked(c, e->released_at_ns, &freed);
    } else {
      detach_locked(c, e, &freed);
    }
  }
  xchg_mutex_unlock(&c->lock);
  cache_entries_free(c, freed);
}

void xchg_cache_free(xchg_cache *c) {
  if (!c) return;
  cache_entry *freed = NULL;
  xchg_mutex_lock(&c->lock);
  c->destroyed = 1;
  while (c->lru_head) detach_locked(c, c->lru_head, &freed);
  int last = c->metrics.entries == 0;
  xchg_mutex_unlock(&c->lock);
  if (last) {
    free_cache(c);
    return;
  }
  cache_entries_free(c, freed); /* frees c with the last of them */
}

void xchg_cache_trim(xchg_cache *c) {
  if (!c) return;
  cache_entry *freed = NULL;
  xchg_mutex_lock(&c->lock);
  cache_evict_locked(c, monotonic_ns(), &freed);
  xchg_mutex_unlock(&c->lock);
  cache_entries_free(c, freed);
  if (c->host) host_store_evict(c->host);
}

/* The getters take a const cache: its lock is the one thing they change. */
static xchg_cache *lockable(const xchg_cache *c) { return (xchg_cache *)c; }

xchg_status xchg_cache_host_error(const xchg_cache *cache, xchg_error *out) {
  if (!cache) { /* no cache: no host store, no failure */
    if (out) out->message[0] = '\0';
    return XCHG_OK;
  }
  xchg_cache *c = lockable(cache);
  xchg_mutex_lock(&c->lock);
  xchg_status st = c->host_status;
  if (out) *out = c->host_error;
  xchg_mutex_unlock(&c->lock);
  return st;
}

void xchg_cache_get_metrics(const xchg_cache *cache, xchg_cache_metrics *out) {
  if (!out) return;
  if (!cache) { /* no cache: nothing cached */
    memset(out, 0, sizeof *out);
    return;
  }
  xchg_cache *c = lockable(cache);
  xchg_mutex_lock(&c->lock);
  *out = c->metrics;
  xchg_mutex_unlock(&c->lock);
  if (c->host) out->host_evictions = host_store_evictions(c->host);
}

/* ---- waiting ---------------------------------------------------------------- */

/* Waits for a change of e, until *next_check at most; once that
 * time has come, asks cancel with the lock released and sets the next
 * one.  Changes of e do not put the check off.  Returns non-zero when
 * cancelled. */
int cache_wait_for_change_locked(xchg_cache *c, cache_entry *e, xchg_cancel_fn cancel,
                                 void *cancel_ctx, int64_t *next_check) XCHG_REQUIRES(c->lock) {
  int64_t interval = c->opts.wait_check_ms * 1000000;
  if (*next_check == 0) *next_check = monotonic_ns() + interval;
  struct timespec ts = {(time_t)(*next_check / 1000000000), (long)(*next_check % 1000000000)};
  xchg_mutex_timedwait(&c->lock, &e->changed, &ts);
  int64_t now = monotonic_ns();
  if (now < *next_check || !cancel) return 0;
  *next_check = now + interval;
  xchg_mutex_unlock(&c->lock);
  int cancelled = cancel(cancel_ctx);
  xchg_mutex_lock(&c->lock);
  return cancelled;
}

/* Finds or creates the entry for key and references it. */
cache_entry *cache_entry_for_locked(xchg_cache *c, const char *key) XCHG_REQUIRES(c->lock) {
  cache_entry *e = c->opts.sharing ? table_find_locked(c, key) : NULL;
  if (!e) {
    if (!(e = entry_new(c, key))) return NULL;
    c->metrics.entries++;
    if (c->opts.sharing) table_insert_locked(c, e);
  }
  if (e->retained) lru_unlink_locked(c, e);
  e->refs++;
  return e;
}
