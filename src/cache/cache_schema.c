/* cache_schema.c — copies of a cached broadcast's schema for its holders.
 *
 * The cache keeps the schema exported by the first reader of a key and
 * hands each holder a deep copy of the columns it reads, so that no holder
 * depends on another's ArrowSchema. */
#include <stdlib.h>

#include "cache/cache_internal.h"
#include "ipc/schema.h"

/* Copies src with the children picked[0..n_picked) (all when picked is
 * NULL) into out. */
static xchg_status copy_node(const struct ArrowSchema *src, const int64_t *picked, int64_t n_picked,
                             struct ArrowSchema *out) {
  int64_t n = picked ? n_picked : src->n_children;
  size_t metadata_bytes = ipc_metadata_size(src->metadata);
  ipc_schema_node *p =
      ipc_schema_node_make(out, src->format, src->name, src->metadata, metadata_bytes, n);
  if (!p) return XCHG_ENOMEM;
  out->flags = src->flags;
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < n && st == XCHG_OK; i++) {
    out->n_children = i + 1;
    st = copy_node(src->children[picked ? picked[i] : i], NULL, 0, out->children[i]);
  }
  if (st == XCHG_OK && src->dictionary) {
    out->dictionary = &p->dictionary;
    st = copy_node(src->dictionary, NULL, 0, &p->dictionary);
  }
  if (st != XCHG_OK) out->release(out);
  return st;
}

xchg_status cache_schema_select(const struct ArrowSchema *root, const int64_t *columns,
                                int64_t n_columns, struct ArrowSchema *out, xchg_error *err) {
  if (copy_node(root, columns, n_columns, out) != XCHG_OK)
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory copying the broadcast's schema");
  return XCHG_OK;
}

xchg_status cache_schema_empty(struct ArrowSchema *out, xchg_error *err) {
  static const struct ArrowSchema empty = {"+s", "", NULL, 0, 0, NULL, NULL, NULL, NULL};
  return cache_schema_select(&empty, NULL, 0, out, err);
}
