/* cache_decode.c — decoding for the shared cache: opening a part's IPC
 * reader, the schema, decoding the claimed columns of every part, the
 * compaction of a partial decode, and publishing what was decoded. */
#include <stdlib.h>
#include <string.h>

#include "cache/broadcast_part.h"
#include "cache/cache_internal.h"
#include "ipc/reader_internal.h"

void cache_decoded_free(cache_decoded *d) {
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
int cache_is_segment(const cache_entry *e, const xchg_broadcast *b) {
  return e->segment && b == host_segment_broadcast(e->segment);
}

/* The first step of a first decode: the schema, from part 0 (whose reader
 * is kept in *first for the decode that follows). */
xchg_status cache_read_schema(const xchg_cache *c, const xchg_broadcast *b, xchg_cancel_fn cancel,
                              void *cancel_ctx, xchg_ipc_reader **first, struct ArrowSchema *schema,
                              xchg_error *err) {
  *first = NULL;
  if (b->n_parts == 0) return cache_schema_empty(schema, err);
  xchg_status st = broadcast_open_part(b, 0, &c->opts.read, cancel, cancel_ctx, first, NULL, err);
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
  for (int64_t i = 0; i < a->n_children; i++)
    bytes += array_bytes(a->children[i], seen, n_seen, cap);
  if (a->dictionary && add_unique(seen, n_seen, cap, a->dictionary))
    bytes += array_bytes(a->dictionary, seen, n_seen, cap);
  return bytes;
}

static xchg_status append_batch(cache_decoded *d, ipc_array *root, xchg_error *err) {
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
                               int64_t n_columns, int64_t all_columns, cache_decoded *d,
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
  if (st == XCHG_OK) st = broadcast_part_check_end(r, err);
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

static xchg_status compact_columns(cache_decoded *d, xchg_error *err) {
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
xchg_status cache_decode_columns(const xchg_cache *c, const cache_entry *e, const xchg_broadcast *b,
                                 xchg_ipc_reader *first, const int64_t *columns, int64_t n,
                                 xchg_cancel_fn cancel, void *cancel_ctx, cache_decoded *d,
                                 xchg_error *err) {
  memset(d, 0, sizeof *d);
  d->n_columns = n;
  d->columns = calloc((size_t)(n ? n : 1), sizeof *d->columns);
  d->bytes = calloc((size_t)(n ? n : 1), sizeof *d->bytes);
  xchg_status st =
      d->columns && d->bytes ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t p = 0; p < b->n_parts && st == XCHG_OK; p++) {
    xchg_ipc_reader *r = p == 0 ? first : NULL;
    first = NULL;
    if (!r && (st = broadcast_open_part(b, p, &c->opts.read, cancel, cancel_ctx, &r, NULL, err)) !=
                  XCHG_OK)
      break;
    struct ArrowSchema s;
    if ((st = xchg_ipc_reader_schema(r, &s, err)) == XCHG_OK) {
      int same = 0;
      st = ipc_arrow_schema_equal(&s, "here", &e->schema, "in the broadcast", IPC_METADATA_IGNORED,
                                  &same, err);
      if (st == XCHG_OK && !same) {
        xchg_error_prefix(err,
                          "part %lld: its schema differs from the broadcast's: ", (long long)p);
        st = XCHG_EINVAL;
      }
      s.release(&s);
    }
    if (st == XCHG_OK) st = decode_part(r, p, columns, n, e->n_columns, d, err);
    xchg_ipc_reader_free(r);
  }
  xchg_ipc_reader_free(first);
  if (st == XCHG_OK && n < e->n_columns && n > 0 && !cache_is_segment(e, b))
    st = compact_columns(d, err);
  for (int64_t k = 0; k < n && st == XCHG_OK; k++) {
    const void **seen = NULL;
    int64_t n_seen = 0, cap = 0;
    for (int64_t i = 0; i < d->n_batches; i++)
      d->bytes[k] += array_bytes(d->columns[k][i], &seen, &n_seen, &cap);
    free(seen);
  }
  if (st != XCHG_OK) cache_decoded_free(d);
  return st;
}

/* Publishes a successful decode: the layout, when it is the first
 * (else it must agree), and the columns.  Returns the bytes added. */
xchg_status cache_publish_locked(xchg_cache *c, cache_entry *e, const int64_t *columns,
                                 cache_decoded *d, int64_t *added, xchg_error *err)
    XCHG_REQUIRES(c->lock) {
  *added = 0;
  if (e->layout_state == SLOT_READY) {
    int same = e->n_batches == d->n_batches;
    for (int64_t i = 0; same && i < d->n_batches; i++) same = e->rows[i] == d->rows[i];
    if (!same)
      return xchg_errorf(err, XCHG_EINVAL,
                         "broadcast '%s': these bytes hold other batches "
                         "(%lld) than those it was first decoded from (%lld)",
                         e->key, (long long)d->n_batches, (long long)e->n_batches);
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
