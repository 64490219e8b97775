/* cache.c — the shared decoded cache: entries, single-flight decode,
 * waiting with cancellation, lifetime and retention.  See xchg/cache.h.
 *
 * One mutex per cache guards its table, its retained list, its metrics and
 * the state of every entry's slots (schema, layout, columns, derived
 * values).  Decoding and building run with the mutex released; what they
 * make is published under it, after which it never changes, so holders read
 * published columns without locking.  Every waiter sleeps on its entry's
 * condition variable, woken by each change of a slot and by its own timeout
 * to ask its cancel callback. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache_internal.h"
#include "codec/helpers.h"
#include "ipc/reader_internal.h"

#define N_BUCKETS 256

struct xchg_cache {
  xchg_cache_options opts;
  pthread_mutex_t lock;
  cache_entry *buckets[N_BUCKETS];
  cache_entry *lru_head, *lru_tail;   /* retained, oldest release first */
  xchg_cache_metrics metrics;         /* entries, retained, bytes_held: live */
  int destroyed;                      /* the owner is gone; free with the last entry */
  int host_wanted;                    /* a host_dir was given, with sharing */
  host_store *host;                   /* NULL when it could not be opened */
  xchg_status host_open_status;       /* why host is NULL, and host_open_error */
  xchg_error host_open_error;
  xchg_status host_status;            /* the last failure, for xchg_cache_host_error */
  xchg_error host_error;
};

void xchg_cache_options_init(xchg_cache_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->sharing = 1;
  opts->wait_check_ms = 100;
  xchg_ipc_read_options_init(&opts->read);
}

xchg_status xchg_cache_create(const xchg_cache_options *opts, xchg_cache **out, xchg_error *err) {
  *out = NULL;
  xchg_cache *c = calloc(1, sizeof *c);
  if (!c) return xchg_errorf(err, XCHG_ENOMEM, "out of memory creating a cache");
  if (opts) c->opts = *opts;
  else xchg_cache_options_init(&c->opts);
  if (c->opts.wait_check_ms <= 0) c->opts.wait_check_ms = 100;
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return xchg_errorf(err, XCHG_ENOMEM, "cannot create the cache's lock");
  }
  c->host_wanted = c->opts.sharing && c->opts.host_dir && c->opts.host_dir[0];
  if (c->host_wanted)
    c->host_open_status = host_store_open(c->opts.host_dir, c->opts.host_retain_bytes,
                                          c->opts.host_retain_ms, &c->host, &c->host_open_error);
  if (c->host_open_status != XCHG_OK) c->host = NULL; /* every entry falls back, with this reason */
  c->opts.host_dir = NULL; /* not the cache's to keep */
  *out = c;
  return XCHG_OK;
}

static uint64_t hash_key(const char *key) { return fnv1a(key, strlen(key), FNV1A_BASIS); }

static void account(xchg_cache *c, int64_t delta) {
  if (delta != 0 && c->opts.on_bytes) c->opts.on_bytes(c->opts.on_bytes_ctx, delta);
}

/* After account(c, delta): the part of delta in shared mappings. */
static void account_shared(xchg_cache *c, int64_t shared) {
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

static cache_entry *table_find(xchg_cache *c, const char *key) {
  uint64_t h = hash_key(key);
  for (cache_entry *e = c->buckets[h % N_BUCKETS]; e; e = e->bucket_next)
    if (e->hash == h && strcmp(e->key, key) == 0) return e;
  return NULL;
}

static void table_insert(xchg_cache *c, cache_entry *e) {
  cache_entry **b = &c->buckets[e->hash % N_BUCKETS];
  e->bucket_next = *b;
  *b = e;
  e->in_table = 1;
}

static void table_remove(xchg_cache *c, cache_entry *e) {
  for (cache_entry **p = &c->buckets[e->hash % N_BUCKETS]; *p; p = &(*p)->bucket_next)
    if (*p == e) {
      *p = e->bucket_next;
      break;
    }
  e->in_table = 0;
}

static void lru_unlink(xchg_cache *c, cache_entry *e) {
  if (e->lru_prev) e->lru_prev->lru_next = e->lru_next;
  else c->lru_head = e->lru_next;
  if (e->lru_next) e->lru_next->lru_prev = e->lru_prev;
  else c->lru_tail = e->lru_prev;
  e->lru_prev = e->lru_next = NULL;
  e->retained = 0;
  c->metrics.retained--;
}

static void lru_append(xchg_cache *c, cache_entry *e) {
  e->lru_prev = c->lru_tail;
  e->lru_next = NULL;
  if (c->lru_tail) c->lru_tail->lru_next = e;
  else c->lru_head = e;
  c->lru_tail = e;
  e->retained = 1;
  c->metrics.retained++;
}

/* Takes e out of the cache (locked); it is freed by entry_free after the
 * lock is released.  Detached entries are chained through lru_next. */
static void detach(xchg_cache *c, cache_entry *e, cache_entry **freed) {
  if (e->retained) lru_unlink(c, e);
  if (e->in_table) table_remove(c, e);
  c->metrics.bytes_held -= e->bytes;
  c->metrics.bytes_shared -= e->shared_bytes;
  e->lru_next = *freed;
  *freed = e;
}

/* Detaches retained entries past their age, then, while the cache is over
 * its byte budget, the least recently released ones. */
static void evict_locked(xchg_cache *c, int64_t now, cache_entry **freed) {
  int64_t max_age = c->opts.retain_ms * 1000000;
  while (c->lru_head && max_age > 0 && now - c->lru_head->released_at_ns >= max_age) {
    c->metrics.evictions++;
    detach(c, c->lru_head, freed);
  }
  while (c->lru_head && c->metrics.bytes_held > c->opts.retain_bytes) {
    c->metrics.evictions++;
    detach(c, c->lru_head, freed);
  }
}

static void free_cache(xchg_cache *c) {
  host_store_close(c->host);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* Frees detached entries (unlocked): their arrays, derived values and the
 * bytes they accounted for; and the cache with its last entry once its
 * owner has destroyed it. */
static void entries_free(xchg_cache *c, cache_entry *list) {
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
    account(c, -e->bytes);
    account_shared(c, -e->shared_bytes);
    free(e->rows);
    free(e->key);
    pthread_cond_destroy(&e->changed);
    free(e);
    pthread_mutex_lock(&c->lock);
    int last = --c->metrics.entries == 0 && c->destroyed;
    pthread_mutex_unlock(&c->lock);
    if (last) free_cache(c);
  }
}

void cache_entry_ref(cache_entry *e) {
  pthread_mutex_lock(&e->cache->lock);
  e->refs++;
  pthread_mutex_unlock(&e->cache->lock);
}

/* An entry nobody references is kept when retention is on, sharing is on,
 * and it is whole enough to serve an acquirer (it has its batches). */
static int worth_retaining(const xchg_cache *c, const cache_entry *e) {
  return e->in_table && !c->destroyed && c->opts.retain_bytes > 0 &&
         e->layout_state == SLOT_READY;
}

void cache_entry_unref(cache_entry *e) {
  xchg_cache *c = e->cache;
  cache_entry *freed = NULL;
  pthread_mutex_lock(&c->lock);
  if (--e->refs == 0) {
    if (worth_retaining(c, e)) {
      e->released_at_ns = monotonic_ns();
      lru_append(c, e);
      evict_locked(c, e->released_at_ns, &freed);
    } else {
      detach(c, e, &freed);
    }
  }
  pthread_mutex_unlock(&c->lock);
  entries_free(c, freed);
}

void xchg_cache_free(xchg_cache *c) {
  if (!c) return;
  cache_entry *freed = NULL;
  pthread_mutex_lock(&c->lock);
  c->destroyed = 1;
  while (c->lru_head) detach(c, c->lru_head, &freed);
  int last = c->metrics.entries == 0;
  pthread_mutex_unlock(&c->lock);
  if (last) {
    free_cache(c);
    return;
  }
  entries_free(c, freed); /* frees c with the last of them */
}

void xchg_cache_trim(xchg_cache *c) {
  cache_entry *freed = NULL;
  pthread_mutex_lock(&c->lock);
  evict_locked(c, monotonic_ns(), &freed);
  pthread_mutex_unlock(&c->lock);
  entries_free(c, freed);
  if (c->host) host_store_evict(c->host);
}

/* The getters take a const cache: its lock is the one thing they change. */
static pthread_mutex_t *lock_of(const xchg_cache *c) { return (pthread_mutex_t *)&c->lock; }

xchg_status xchg_cache_host_error(const xchg_cache *c, xchg_error *out) {
  pthread_mutex_lock(lock_of(c));
  xchg_status st = c->host_status;
  if (out) *out = c->host_error;
  pthread_mutex_unlock(lock_of(c));
  return st;
}

void xchg_cache_get_metrics(const xchg_cache *c, xchg_cache_metrics *out) {
  pthread_mutex_lock(lock_of(c));
  *out = c->metrics;
  pthread_mutex_unlock(lock_of(c));
  if (c->host) out->host_evictions = host_store_evictions(c->host);
}

/* ---- waiting ---------------------------------------------------------------- */

/* Waits (locked) for a change of e, until *next_check at most; once that
 * time has come, asks cancel with the lock released and sets the next
 * one.  Changes of e do not put the check off.  Returns non-zero when
 * cancelled. */
static int wait_for_change(xchg_cache *c, cache_entry *e, xchg_cancel_fn cancel, void *cancel_ctx,
                           int64_t *next_check) {
  int64_t interval = c->opts.wait_check_ms * 1000000;
  if (*next_check == 0) *next_check = monotonic_ns() + interval;
  struct timespec ts = {(time_t)(*next_check / 1000000000), (long)(*next_check % 1000000000)};
  pthread_cond_timedwait(&e->changed, &c->lock, &ts);
  int64_t now = monotonic_ns();
  if (now < *next_check || !cancel) return 0;
  *next_check = now + interval;
  pthread_mutex_unlock(&c->lock);
  int cancelled = cancel(cancel_ctx);
  pthread_mutex_lock(&c->lock);
  return cancelled;
}

/* ---- decoding --------------------------------------------------------------- */

/* What one decode made: the batch layout and, per decoded column, its
 * arrays and bytes. */
typedef struct decoded {
  int64_t n_batches, capacity;
  int64_t *rows;
  int64_t n_columns;
  ipc_array ***columns;
  int64_t *bytes;
} decoded;

static void decoded_free(decoded *d) {
  for (int64_t k = 0; k < d->n_columns; k++) {
    if (d->columns[k])
      for (int64_t i = 0; i < d->n_batches; i++) ipc_array_unref(d->columns[k][i]);
    free(d->columns[k]);
  }
  free(d->columns);
  free(d->bytes);
  free(d->rows);
  memset(d, 0, sizeof *d);
}

/* Whether b is e's host segment (whose arrays may point into its mapping:
 * they are not compacted, and reading them is not a decode). */
static int is_segment(const cache_entry *e, const xchg_broadcast *b) {
  return e->segment && b == host_segment_broadcast(e->segment);
}

/* Opens the IPC reader of part i: its encoded bytes, under the decoder's
 * cancel check, through its stream codec.  Parts are validated as the
 * cache's read options say, a mapped segment's too: a consumer could
 * fault on its offsets or indices, which no checksum covers.  With raw,
 * *raw is the source of the encoded bytes (owned by the reader). */
static xchg_status open_part(const xchg_cache *c, const xchg_broadcast *b, int64_t i,
                             xchg_cancel_fn cancel, void *cancel_ctx, xchg_ipc_reader **out,
                             xchg_source **raw, xchg_error *err) {
  xchg_source *src = NULL;
  xchg_status st = b->open_part ? b->open_part(b->open_ctx, i, &src, err)
                                : xchg_source_from_chunks(b->parts[i].chunks, b->parts[i].n_chunks,
                                                          NULL, NULL, &src, err);
  if (raw) *raw = src;
  if (st == XCHG_OK && cancel) st = xchg_source_with_cancel(src, cancel, cancel_ctx, &src, err);
  if (st == XCHG_OK && b->parts[i].codec != XCHG_STREAM_NONE) {
    xchg_istream *is;
    st = xchg_istream_open(src, b->parts[i].codec, NULL, &is, err);
    if (st == XCHG_OK) st = xchg_source_from_istream(is, &src, err);
  }
  if (st == XCHG_OK) {
    xchg_ipc_read_options opts = c->opts.read;
    opts.on_message = NULL;
    opts.on_message_ctx = NULL;
    if ((st = xchg_ipc_reader_open(src, &opts, out, err)) == XCHG_OK) return XCHG_OK;
  }
  xchg_error_prefix(err, "part %lld: ", (long long)i);
  return st;
}

/* The first step of a first decode: the schema, from part 0 (whose reader
 * is kept in *first for the decode that follows). */
static xchg_status read_schema(const xchg_cache *c, const xchg_broadcast *b,
                               xchg_cancel_fn cancel, void *cancel_ctx, xchg_ipc_reader **first,
                               struct ArrowSchema *schema, xchg_error *err) {
  *first = NULL;
  if (b->n_parts == 0) return cache_schema_empty(schema, err);
  xchg_status st = open_part(c, b, 0, cancel, cancel_ctx, first, NULL, err);
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(*first, schema, err);
  if (st != XCHG_OK) {
    xchg_ipc_reader_free(*first);
    *first = NULL;
  }
  return st;
}

static int add_unique(const void ***seen, int64_t *n, int64_t *cap, const void *p) {
  for (int64_t i = 0; i < *n; i++)
    if ((*seen)[i] == p) return 0;
  if (*n == *cap) {
    int64_t grown = *cap ? 2 * *cap : 16;
    const void **s = realloc(*seen, (size_t)grown * sizeof *s);
    if (!s) return 0; /* only the byte count suffers */
    *seen = s;
    *cap = grown;
  }
  (*seen)[(*n)++] = p;
  return 1;
}

/* Bytes of the buffers of a, its children and (once per distinct
 * dictionary, as dictionaries are shared by batches) its dictionary. */
static int64_t array_bytes(const ipc_array *a, const void ***seen, int64_t *n_seen, int64_t *cap) {
  int64_t bytes = 0;
  for (int64_t i = 0; i < a->n_buffers; i++) bytes += (int64_t)ipc_array_size(a, i);
  for (int64_t i = 0; i < a->n_children; i++) bytes += array_bytes(a->children[i], seen, n_seen, cap);
  if (a->dictionary && add_unique(seen, n_seen, cap, a->dictionary))
    bytes += array_bytes(a->dictionary, seen, n_seen, cap);
  return bytes;
}

static xchg_status append_batch(decoded *d, ipc_array *root, xchg_error *err) {
  if (d->n_batches == d->capacity) {
    int64_t grown = d->capacity ? 2 * d->capacity : 64;
    int64_t *rows = realloc(d->rows, (size_t)grown * sizeof *rows);
    if (!rows) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    d->rows = rows;
    for (int64_t k = 0; k < d->n_columns; k++) {
      ipc_array **col = realloc(d->columns[k], (size_t)grown * sizeof *col);
      if (!col) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
      d->columns[k] = col;
    }
    d->capacity = grown;
  }
  d->rows[d->n_batches] = root->length;
  for (int64_t k = 0; k < d->n_columns; k++)
    d->columns[k][d->n_batches] = ipc_array_ref(root->children[k]);
  d->n_batches++;
  return XCHG_OK;
}

static xchg_status decode_part(xchg_ipc_reader *r, int64_t part, const int64_t *columns,
                               int64_t n_columns, int64_t all_columns, decoded *d,
                               xchg_error *err) {
  xchg_status st = XCHG_OK;
  if (n_columns < all_columns) st = xchg_ipc_reader_select_indices(r, columns, n_columns, err);
  while (st == XCHG_OK) {
    ipc_array *root;
    if ((st = ipc_reader_next_array(r, &root, err)) != XCHG_OK || !root) break;
    if (root->n_children != n_columns)
      st = xchg_errorf(err, XCHG_EFORMAT, "part %lld: a batch of %lld columns, %lld expected",
                       (long long)part, (long long)root->n_children, (long long)n_columns);
    else
      st = append_batch(d, root, err);
    ipc_array_unref(root);
  }
  if (st != XCHG_OK) xchg_error_prefix(err, "part %lld: ", (long long)part);
  return st;
}

/* A partial decode leaves each column's buffers as slices of whole message
 * bodies whenever the reader had to read bodies whole (a stream codec, an
 * unseekable source): keeping them would keep the columns nobody asked for.
 * So the columns of a partial decode are copied into buffers of their own;
 * dictionaries, shared by batches, once each (memo maps old to new). */
typedef struct dict_memo {
  const ipc_array **from;
  ipc_array **to;
  int64_t n, capacity;
} dict_memo;

static ipc_array *copy_array(const ipc_array *a, dict_memo *memo);

static ipc_array *copy_dictionary(const ipc_array *dict, dict_memo *memo) {
  for (int64_t i = 0; i < memo->n; i++)
    if (memo->from[i] == dict) return ipc_array_ref(memo->to[i]);
  if (memo->n == memo->capacity) {
    int64_t grown = memo->capacity ? 2 * memo->capacity : 8;
    const ipc_array **from = realloc(memo->from, (size_t)grown * sizeof *from);
    if (from) memo->from = from;
    ipc_array **to = from ? realloc(memo->to, (size_t)grown * sizeof *to) : NULL;
    if (!to) return NULL;
    memo->to = to;
    memo->capacity = grown;
  }
  ipc_array *copy = copy_array(dict, memo);
  if (!copy) return NULL;
  memo->from[memo->n] = dict;
  memo->to[memo->n++] = copy; /* borrowed: the first user holds the reference */
  return copy;
}

static ipc_array *copy_array(const ipc_array *a, dict_memo *memo) {
  ipc_array *c = ipc_array_new(a->n_buffers, a->n_children);
  if (!c) return NULL;
  c->length = a->length;
  c->null_count = a->null_count;
  for (int64_t i = 0; i < a->n_buffers; i++) {
    if (!a->buffers[i].data) continue;
    size_t size = a->buffers[i].size;
    xchg_buf *b = ipc_array_set_buf(c, i, xchg_buf_alloc(size));
    if (!b) goto fail;
    if (size) memcpy(xchg_buf_mutable_data(b), a->buffers[i].data, size);
  }
  for (int64_t i = 0; i < a->n_children; i++)
    if (!(c->children[i] = copy_array(a->children[i], memo))) goto fail;
  if (a->dictionary && !(c->dictionary = copy_dictionary(a->dictionary, memo))) goto fail;
  return c;
fail:
  ipc_array_unref(c);
  return NULL;
}

static xchg_status compact_columns(decoded *d, xchg_error *err) {
  for (int64_t k = 0; k < d->n_columns; k++) {
    dict_memo memo = {NULL, NULL, 0, 0};
    for (int64_t i = 0; i < d->n_batches; i++) {
      ipc_array *copy = copy_array(d->columns[k][i], &memo);
      if (!copy) {
        free(memo.from);
        free(memo.to);
        return xchg_errorf(err, XCHG_ENOMEM, "out of memory copying column %lld", (long long)k);
      }
      ipc_array_unref(d->columns[k][i]);
      d->columns[k][i] = copy;
    }
    free(memo.from);
    free(memo.to);
  }
  return XCHG_OK;
}

/* Decodes columns[0..n) (ascending, distinct) of every part into d; first
 * is part 0's reader when already open (taken over). */
static xchg_status decode_columns(const xchg_cache *c, const cache_entry *e,
                                  const xchg_broadcast *b, xchg_ipc_reader *first,
                                  const int64_t *columns, int64_t n, xchg_cancel_fn cancel,
                                  void *cancel_ctx, decoded *d, xchg_error *err) {
  memset(d, 0, sizeof *d);
  d->n_columns = n;
  d->columns = calloc((size_t)(n ? n : 1), sizeof *d->columns);
  d->bytes = calloc((size_t)(n ? n : 1), sizeof *d->bytes);
  xchg_status st = d->columns && d->bytes ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t p = 0; p < b->n_parts && st == XCHG_OK; p++) {
    xchg_ipc_reader *r = p == 0 ? first : NULL;
    first = NULL;
    if (!r && (st = open_part(c, b, p, cancel, cancel_ctx, &r, NULL, err)) != XCHG_OK)
      break;
    struct ArrowSchema s;
    if ((st = xchg_ipc_reader_schema(r, &s, err)) == XCHG_OK) {
      int same = 0;
      st = ipc_arrow_schema_equal(&s, "here", &e->schema, "in the broadcast", IPC_METADATA_IGNORED,
                                  &same, err);
      if (st == XCHG_OK && !same) {
        xchg_error_prefix(err, "part %lld: its schema differs from the broadcast's: ", (long long)p);
        st = XCHG_EINVAL;
      }
      s.release(&s);
    }
    if (st == XCHG_OK) st = decode_part(r, p, columns, n, e->n_columns, d, err);
    xchg_ipc_reader_free(r);
  }
  xchg_ipc_reader_free(first);
  if (st == XCHG_OK && n < e->n_columns && n > 0 && !is_segment(e, b))
    st = compact_columns(d, err);
  for (int64_t k = 0; k < n && st == XCHG_OK; k++) {
    const void **seen = NULL;
    int64_t n_seen = 0, cap = 0;
    for (int64_t i = 0; i < d->n_batches; i++) d->bytes[k] += array_bytes(d->columns[k][i], &seen, &n_seen, &cap);
    free(seen);
  }
  if (st != XCHG_OK) decoded_free(d);
  return st;
}

/* Publishes a successful decode (locked): the layout, when it is the first
 * (else it must agree), and the columns.  Returns the bytes added. */
static xchg_status publish(xchg_cache *c, cache_entry *e, const int64_t *columns, decoded *d,
                           int64_t *added, xchg_error *err) {
  *added = 0;
  if (e->layout_state == SLOT_READY) {
    int same = e->n_batches == d->n_batches;
    for (int64_t i = 0; same && i < d->n_batches; i++) same = e->rows[i] == d->rows[i];
    if (!same)
      return xchg_errorf(err, XCHG_EINVAL, "broadcast '%s': these bytes hold other batches "
                         "(%lld) than those it was first decoded from (%lld)", e->key,
                         (long long)d->n_batches, (long long)e->n_batches);
  } else {
    e->n_batches = d->n_batches;
    e->rows = d->rows;
    d->rows = NULL;
    for (int64_t i = 0; i < e->n_batches; i++) e->total_rows += e->rows[i];
    e->layout_state = SLOT_READY;
  }
  for (int64_t k = 0; k < d->n_columns; k++) {
    cache_column *col = &e->columns[columns[k]];
    col->batches = d->columns[k];
    d->columns[k] = NULL;
    col->bytes = d->bytes[k];
    col->state = SLOT_READY;
    *added += col->bytes;
  }
  e->bytes += *added;
  c->metrics.bytes_held += *added;
  return XCHG_OK;
}

/* ---- acquire -------------------------------------------------------------- */

static int compare_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Claims (locked) the absent slots among the holder's columns and the
 * layout; fills claimed[] (ascending, distinct).  Returns whether anything
 * was claimed; *ready whether everything the holder needs is there. */
static int claim(cache_entry *e, const xchg_cache_holder *h, int64_t *claimed, int64_t *n_claimed,
                 int *layout_claimed, int *ready) {
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

static void unclaim(cache_entry *e, const int64_t *claimed, int64_t n_claimed, int layout_claimed) {
  for (int64_t k = 0; k < n_claimed; k++)
    if (e->columns[claimed[k]].state == SLOT_MAKING) e->columns[claimed[k]].state = SLOT_ABSENT;
  if (layout_claimed && e->layout_state == SLOT_MAKING) e->layout_state = SLOT_ABSENT;
}

static xchg_status check_broadcast(const xchg_broadcast *b, const int64_t *columns,
                                   int64_t n_columns, xchg_error *err) {
  if (!b || b->n_parts < 0 || (b->n_parts > 0 && !b->parts) || n_columns < 0 ||
      (n_columns > 0 && !columns))
    return xchg_errorf(err, XCHG_EINVAL, "acquire: invalid broadcast description or column list");
  return XCHG_OK;
}

/* Sets the holder's column list once the schema is known (locked). */
static xchg_status resolve_columns(const cache_entry *e, xchg_cache_holder *h,
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

/* Finds or creates the entry for key (locked) and references it. */
static cache_entry *entry_for(xchg_cache *c, const char *key) {
  cache_entry *e = c->opts.sharing ? table_find(c, key) : NULL;
  if (!e) {
    if (!(e = entry_new(c, key))) return NULL;
    c->metrics.entries++;
    if (c->opts.sharing) table_insert(c, e);
  }
  if (e->retained) lru_unlink(c, e);
  e->refs++;
  return e;
}

/* The schema step (locked on entry and exit): reads it unlocked and
 * installs it, with the column slots. */
static xchg_status load_schema(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                               xchg_cancel_fn cancel, void *cancel_ctx, xchg_ipc_reader **first,
                               xchg_error *err) {
  struct ArrowSchema schema;
  e->schema_state = SLOT_MAKING;
  pthread_mutex_unlock(&c->lock);
  xchg_status st = read_schema(c, b, cancel, cancel_ctx, first, &schema, err);
  cache_column *columns = NULL;
  if (st == XCHG_OK && !(columns = calloc((size_t)(schema.n_children ? schema.n_children : 1),
                                          sizeof *columns))) {
    schema.release(&schema);
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&c->lock);
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

static void count_failure(xchg_cache *c, xchg_status st) {
  c->metrics.decodes++;
  c->metrics.failed_decodes++;
  if (st == XCHG_ECANCELLED) c->metrics.cancellations++;
}

/* One decode of what the holder claimed (locked on entry and exit). */
static xchg_status decode_claimed(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                                  xchg_ipc_reader *first, const int64_t *claimed,
                                  int64_t n_claimed, int layout_claimed, xchg_cancel_fn cancel,
                                  void *cancel_ctx, int64_t *added, xchg_error *err) {
  decoded d;
  pthread_mutex_unlock(&c->lock);
  xchg_status st =
      decode_columns(c, e, b, first, claimed, n_claimed, cancel, cancel_ctx, &d, err);
  pthread_mutex_lock(&c->lock);
  int from_segment = is_segment(e, b);
  if (st == XCHG_OK) st = publish(c, e, claimed, &d, added, err);
  if (st == XCHG_OK && from_segment) {
    e->shared_bytes += *added;
    c->metrics.bytes_shared += *added;
  } else if (st == XCHG_OK) {
    c->metrics.decodes++;
  } else {
    unclaim(e, claimed, n_claimed, layout_claimed);
    if (!from_segment) count_failure(c, st);
  }
  pthread_cond_broadcast(&e->changed);
  pthread_mutex_unlock(&c->lock);
  decoded_free(&d); /* what publish did not take */
  pthread_mutex_lock(&c->lock);
  return st;
}

/* ---- the host store ------------------------------------------------------ */

typedef struct part_opener {
  const xchg_cache *cache;
  const xchg_broadcast *bytes;
  xchg_cancel_fn cancel;
  void *cancel_ctx;
  xchg_source *raw; /* the encoded bytes of the part open last */
} part_opener;

static xchg_status open_part_for_host(void *ctx, int64_t part, xchg_ipc_reader **out,
                                      xchg_error *err) {
  part_opener *o = ctx;
  return open_part(o->cache, o->bytes, part, o->cancel, o->cancel_ctx, out, &o->raw, err);
}

static void part_read_for_host(void *ctx, int64_t *read, int64_t *size) {
  const part_opener *o = ctx;
  *read = (int64_t)xchg_source_position(o->raw);
  *size = xchg_source_size(o->raw);
}

/* A host-store failure (locked): counted; the entry reads its own bytes. */
static void host_fell_back(xchg_cache *c, xchg_status st, const xchg_error *why) {
  c->metrics.host_fallbacks++;
  c->host_status = st;
  c->host_error = *why;
}

/* The bytes the entry decodes from: its segment, unless there is none or
 * reading it failed. */
static const xchg_broadcast *entry_source(const cache_entry *e, const xchg_broadcast *b) {
  return e->segment && !e->segment_refused ? host_segment_broadcast(e->segment) : b;
}

/* After a failure reading from src (locked): when src was the segment and
 * the acquirer was not cancelled, falls back to the bytes (returns 1). */
static int segment_failed_over(xchg_cache *c, cache_entry *e, const xchg_broadcast *src,
                               xchg_status st, const xchg_error *err) {
  if (!is_segment(e, src) || st == XCHG_ECANCELLED) return 0;
  e->segment_refused = 1;
  xchg_error why = {{0}};
  if (err) why = *err;
  host_fell_back(c, st, &why);
  return 1;
}

/* The entry's host step (locked on entry and exit): maps the key's
 * segment, decoding and publishing it first when nobody on the host has.
 * Only the broadcast's own failures and cancellation are errors. */
static xchg_status host_step(xchg_cache *c, cache_entry *e, const xchg_broadcast *b,
                             xchg_cancel_fn cancel, void *cancel_ctx, xchg_error *err) {
  e->host_state = SLOT_MAKING;
  pthread_mutex_unlock(&c->lock);
  host_segment *seg = NULL;
  host_outcome out = {0, 0, 0, c->host_open_status};
  xchg_error why = c->host_open_error;
  xchg_status st = XCHG_OK;
  if (c->host) {
    part_opener opener = {c, b, cancel, cancel_ctx, NULL};
    host_request req = {e->key, b->n_parts, open_part_for_host, part_read_for_host, &opener,
                        cancel, cancel_ctx, c->opts.wait_check_ms};
    st = host_store_obtain(c->host, &req, &seg, &out, &why, err);
  }
  pthread_mutex_lock(&c->lock);
  c->metrics.host_decodes += out.decoded;
  c->metrics.decodes += out.decoded;
  c->metrics.host_waits += out.waited;
  if (st == XCHG_OK) {
    e->segment = seg;
    e->host_state = SLOT_READY;
    if (seg) c->metrics.host_maps++;
    else host_fell_back(c, out.failure, &why);
  } else {
    e->host_state = SLOT_ABSENT;
    if (out.attempted) count_failure(c, st);
    else c->metrics.cancellations++;
  }
  pthread_cond_broadcast(&e->changed);
  return st;
}

void xchg_cache_request_init(xchg_cache_request *req) { memset(req, 0, sizeof *req); }

xchg_status xchg_cache_acquire(xchg_cache *c, const char *key, const xchg_broadcast *b,
                               const xchg_cache_request *req, xchg_cache_holder **out,
                               xchg_error *err) {
  *out = NULL;
  xchg_cache_request defaults;
  if (!req) xchg_cache_request_init(&defaults);
  if (!req) req = &defaults;
  const int64_t *columns = req->columns;
  int64_t n_columns = req->n_columns;
  xchg_cancel_fn cancel = req->cancel;
  void *cancel_ctx = req->cancel_ctx;
  xchg_status st = check_broadcast(b, columns, n_columns, err);
  if (!c || !key) st = xchg_errorf(err, XCHG_EINVAL, "acquire: no cache or no key");
  if (st != XCHG_OK) return st;
  xchg_cache_holder *h = calloc(1, sizeof *h);
  int64_t *claimed = NULL;
  cache_entry *freed = NULL, *e = NULL;
  xchg_ipc_reader *first = NULL;
  int waited = 0, decoded_any = 0;
  int64_t added = 0, shared_added = 0, next_check = 0;
  pthread_mutex_lock(&c->lock);
  c->metrics.acquisitions++;
  evict_locked(c, monotonic_ns(), &freed);
  if (!h || !(e = entry_for(c, key))) {
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    goto done;
  }
  h->entry = e;
  h->n_columns = n_columns;
  for (;;) {
    if (c->host_wanted && e->host_state != SLOT_READY) {
      if (e->host_state == SLOT_ABSENT) {
        if ((st = host_step(c, e, b, cancel, cancel_ctx, err)) != XCHG_OK) goto done;
        continue;
      }
      goto wait; /* another thread of this process is at it */
    }
    const xchg_broadcast *src = entry_source(e, b);
    /* A mapped segment is read in place, without blocking: nothing to
     * cancel, and a cancellable source would copy what it reads. */
    xchg_cancel_fn src_cancel = is_segment(e, src) ? NULL : cancel;
    if (e->schema_state == SLOT_ABSENT) {
      if ((st = load_schema(c, e, src, src_cancel, cancel_ctx, &first, err)) != XCHG_OK) {
        if (segment_failed_over(c, e, src, st, err)) continue;
        count_failure(c, st);
        goto done;
      }
    }
    if (e->schema_state == SLOT_READY) {
      if (!h->columns) {
        if ((st = resolve_columns(e, h, columns, err)) != XCHG_OK) goto done;
        if (!(claimed = malloc((size_t)(h->n_columns ? h->n_columns : 1) * sizeof *claimed))) {
          st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
          goto done;
        }
      }
      int64_t n_claimed, step_added = 0;
      int layout_claimed, ready;
      if (claim(e, h, claimed, &n_claimed, &layout_claimed, &ready)) {
        decoded_any = 1;
        st = decode_claimed(c, e, src, first, claimed, n_claimed, layout_claimed, src_cancel,
                            cancel_ctx, &step_added, err);
        first = NULL;
        added += step_added;
        if (is_segment(e, src)) shared_added += step_added;
        if (st != XCHG_OK && segment_failed_over(c, e, src, st, err)) continue;
        if (st != XCHG_OK) goto done;
        continue;
      }
      if (ready) break;
    }
  wait:
    waited = 1;
    if (wait_for_change(c, e, cancel, cancel_ctx, &next_check)) {
      c->metrics.cancellations++;
      st = xchg_errorf(err, XCHG_ECANCELLED, "broadcast '%s': cancelled while waiting for its decode", key);
      goto done;
    }
  }
  if (waited) c->metrics.waits++;
  else if (!decoded_any) c->metrics.hits++;
  evict_locked(c, monotonic_ns(), &freed); /* what was decoded may exceed the budget */
done:
  pthread_mutex_unlock(&c->lock);
  xchg_ipc_reader_free(first);
  free(claimed);
  account(c, added);
  account_shared(c, shared_added);
  entries_free(c, freed);
  if (st == XCHG_OK) {
    *out = h;
    return XCHG_OK;
  }
  if (h) {
    free(h->columns);
    free(h);
  }
  if (e) cache_entry_unref(e);
  return st;
}

void xchg_cache_holder_release(xchg_cache_holder *h) {
  if (!h) return;
  cache_entry_unref(h->entry);
  free(h->columns);
  free(h);
}

/* ---- holders ---------------------------------------------------------------- */

xchg_status xchg_cache_holder_schema(const xchg_cache_holder *h, struct ArrowSchema *out,
                                     xchg_error *err) {
  return cache_schema_select(&h->entry->schema, h->columns, h->n_columns, out, err);
}

int64_t xchg_cache_holder_num_batches(const xchg_cache_holder *h) { return h->entry->n_batches; }
int64_t xchg_cache_holder_num_rows(const xchg_cache_holder *h) { return h->entry->total_rows; }

xchg_status xchg_cache_holder_batch(const xchg_cache_holder *h, int64_t i, struct ArrowArray *out,
                                    xchg_error *err) {
  return cache_export_batch(h->entry, h->columns, h->n_columns, i, out, err);
}

xchg_status xchg_cache_holder_stream(const xchg_cache_holder *h, struct ArrowArrayStream *out,
                                     xchg_error *err) {
  return cache_export_stream(h->entry, h->columns, h->n_columns, out, err);
}

/* ---- derived values --------------------------------------------------------- */

static cache_derived *derived_for(cache_entry *e, const char *name) {
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

void xchg_cache_derive_request_init(xchg_cache_derive_request *req) {
  memset(req, 0, sizeof *req);
}

xchg_status xchg_cache_holder_derive(xchg_cache_holder *h, const char *name,
                                     const xchg_cache_derive_request *req, void **value,
                                     xchg_error *err) {
  *value = NULL;
  if (!h || !name || !req || !req->build)
    return xchg_errorf(err, XCHG_EINVAL, "derive: no holder, name, request or build function");
  xchg_derive_fn build = req->build;
  void *build_ctx = req->build_ctx;
  xchg_destroy_fn destroy = req->destroy;
  xchg_cancel_fn cancel = req->cancel;
  void *cancel_ctx = req->cancel_ctx;
  cache_entry *e = h->entry;
  xchg_cache *c = e->cache;
  xchg_status st = XCHG_OK;
  int64_t next_check = 0;
  pthread_mutex_lock(&c->lock);
  cache_derived *d = derived_for(e, name);
  if (!d) st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  while (st == XCHG_OK && d->state != SLOT_READY) {
    if (d->state == SLOT_MAKING) {
      if (wait_for_change(c, e, cancel, cancel_ctx, &next_check)) {
        c->metrics.cancellations++;
        st = xchg_errorf(err, XCHG_ECANCELLED, "derived '%s': cancelled while waiting", name);
      }
      continue;
    }
    d->state = SLOT_MAKING;
    c->metrics.derived_builds++;
    pthread_mutex_unlock(&c->lock);
    void *made = NULL;
    int64_t bytes = 0;
    st = build(build_ctx, h, &made, &bytes, err);
    pthread_mutex_lock(&c->lock);
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
      pthread_mutex_unlock(&c->lock);
      account(c, bytes);
      pthread_mutex_lock(&c->lock);
    }
  }
  if (st == XCHG_OK) *value = d->value;
  pthread_mutex_unlock(&c->lock);
  return st;
}
