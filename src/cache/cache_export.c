/* cache_export.c — handing out a cached broadcast's batches.
 *
 * ipc_array_export already gives an ArrowArray tree whose nodes can be
 * released in any order, each holding references on the shared buffers.
 * Here every node is also made to hold a reference on its cache entry, so
 * that the entry (and what it accounts for) lives exactly as long as
 * something a consumer holds points into it, even a child moved out of its
 * parent. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_internal.h"
#include "ipc/array_stream.h"

/* Stands in for a node's own release and private data. */
typedef struct node_guard {
  void (*release)(struct ArrowArray *);
  void *private_data;
  cache_entry *entry;
} node_guard;

static void release_guarded(struct ArrowArray *a) {
  node_guard *g = a->private_data;
  cache_entry *e = g->entry;
  a->release = g->release;
  a->private_data = g->private_data;
  free(g);
  a->release(a);
  cache_entry_unref(e);
}

/* Guards a and every node under it; on failure (out of memory) the nodes
 * already guarded stay guarded, which releasing a undoes correctly. */
static xchg_status guard_tree(cache_entry *e, struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_children; i++)
    if (guard_tree(e, a->children[i]) != XCHG_OK) return XCHG_ENOMEM;
  if (a->dictionary && guard_tree(e, a->dictionary) != XCHG_OK) return XCHG_ENOMEM;
  node_guard *g = malloc(sizeof *g);
  if (!g) return XCHG_ENOMEM;
  g->release = a->release;
  g->private_data = a->private_data;
  g->entry = e;
  cache_entry_ref(e);
  a->release = release_guarded;
  a->private_data = g;
  return XCHG_OK;
}

xchg_status cache_export_batch(cache_entry *e, const int64_t *columns, int64_t n_columns, int64_t i,
                               struct ArrowArray *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  if (i < 0 || i >= e->n_batches)
    return xchg_errorf(err, XCHG_EINVAL, "batch %lld of a broadcast of %lld batches", (long long)i,
                       (long long)e->n_batches);
  ipc_array *root = ipc_array_new(1, n_columns);
  if (!root)
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory exporting batch %lld", (long long)i);
  root->length = e->rows[i];
  for (int64_t k = 0; k < n_columns; k++)
    root->children[k] = ipc_array_ref(e->columns[columns[k]].batches[i]);
  xchg_status st = ipc_array_export(root, out, err);
  ipc_array_unref(root);
  if (st != XCHG_OK) return st;
  if (guard_tree(e, out) != XCHG_OK) {
    out->release(out);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory exporting batch %lld", (long long)i);
  }
  return XCHG_OK;
}

/* ---- streams --------------------------------------------------------------- */

typedef struct cache_stream {
  cache_entry *entry;
  int64_t *columns;
  int64_t n_columns;
  int64_t next;
} cache_stream;

static xchg_status cache_stream_schema(void *producer, struct ArrowSchema *out, xchg_error *err) {
  cache_stream *p = producer;
  return cache_schema_select(&p->entry->schema, p->columns, p->n_columns, out, err);
}

static xchg_status cache_stream_next(void *producer, struct ArrowArray *out, xchg_error *err) {
  cache_stream *p = producer;
  if (p->next >= p->entry->n_batches) {
    memset(out, 0, sizeof *out);
    return XCHG_OK;
  }
  xchg_status st = cache_export_batch(p->entry, p->columns, p->n_columns, p->next, out, err);
  if (st == XCHG_OK) p->next++;
  return st;
}

static void cache_stream_free(void *producer) {
  cache_stream *p = producer;
  cache_entry_unref(p->entry);
  free(p->columns);
  free(p);
}

static const ipc_stream_ops cache_stream_ops = {cache_stream_schema, cache_stream_next,
                                                cache_stream_free};

xchg_status cache_export_stream(cache_entry *e, const int64_t *columns, int64_t n_columns,
                                struct ArrowArrayStream *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  cache_stream *p = calloc(1, sizeof *p);
  if (p) p->columns = malloc((size_t)(n_columns ? n_columns : 1) * sizeof *columns);
  if (!p || !p->columns) {
    free(p);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory opening a stream over a broadcast");
  }
  if (n_columns) memcpy(p->columns, columns, (size_t)n_columns * sizeof *columns);
  p->n_columns = n_columns;
  p->entry = e;
  cache_entry_ref(e);
  return ipc_stream_export(&cache_stream_ops, p, out, err);
}
