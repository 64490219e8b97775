/* cache_schema.c — copies of a cached broadcast's schema for its holders.
 *
 * The cache keeps the schema exported by the first reader of a key and
 * hands each holder a deep copy of the columns it reads, so that no holder
 * depends on another's ArrowSchema. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_internal.h"

/* One allocation per copied node: the strings and the child tables. */
typedef struct schema_copy {
  char *format;
  char *name;
  char *metadata;
  struct ArrowSchema **children;
  struct ArrowSchema *kids;
  struct ArrowSchema dictionary;
} schema_copy;

static void release_copy(struct ArrowSchema *s) {
  schema_copy *p = s->private_data;
  for (int64_t i = 0; i < s->n_children; i++)
    if (p->kids[i].release) p->kids[i].release(&p->kids[i]);
  if (p->dictionary.release) p->dictionary.release(&p->dictionary);
  free(p->format);
  free(p->name);
  free(p->metadata);
  free(p->children);
  free(p->kids);
  free(p);
  s->release = NULL;
}

static char *copy_string(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *out = malloc(n);
  if (out) memcpy(out, s, n);
  return out;
}

/* Size of ArrowSchema.metadata: an int32 count, then (int32 length, bytes)
 * for every key and every value. */
static size_t metadata_size(const char *m) {
  int32_t n, len;
  size_t at = 4;
  memcpy(&n, m, 4);
  for (int32_t i = 0; i < 2 * n; i++) {
    memcpy(&len, m + at, 4);
    at += 4 + (size_t)len;
  }
  return at;
}

static char *copy_metadata(const char *m) {
  if (!m) return NULL;
  size_t n = metadata_size(m);
  char *out = malloc(n);
  if (out) memcpy(out, m, n);
  return out;
}

/* Copies src with the children picked[0..n_picked) (all when picked is
 * NULL) into out. */
static xchg_status copy_node(const struct ArrowSchema *src, const int64_t *picked,
                             int64_t n_picked, struct ArrowSchema *out) {
  memset(out, 0, sizeof *out);
  int64_t n = picked ? n_picked : src->n_children;
  schema_copy *p = calloc(1, sizeof *p);
  if (!p) return XCHG_ENOMEM;
  out->private_data = p;
  out->release = release_copy;
  out->flags = src->flags;
  p->format = copy_string(src->format);
  p->name = copy_string(src->name);
  p->metadata = copy_metadata(src->metadata);
  p->children = calloc((size_t)(n ? n : 1), sizeof *p->children);
  p->kids = calloc((size_t)(n ? n : 1), sizeof *p->kids);
  if (!p->format || (src->name && !p->name) || (src->metadata && !p->metadata) || !p->children ||
      !p->kids) {
    release_copy(out);
    return XCHG_ENOMEM;
  }
  out->format = p->format;
  out->name = p->name;
  out->metadata = p->metadata;
  out->children = p->children;
  out->n_children = n;
  for (int64_t i = 0; i < n; i++) {
    p->children[i] = &p->kids[i];
    if (copy_node(src->children[picked ? picked[i] : i], NULL, 0, &p->kids[i]) != XCHG_OK) {
      release_copy(out);
      return XCHG_ENOMEM;
    }
  }
  if (src->dictionary) {
    if (copy_node(src->dictionary, NULL, 0, &p->dictionary) != XCHG_OK) {
      release_copy(out);
      return XCHG_ENOMEM;
    }
    out->dictionary = &p->dictionary;
  }
  return XCHG_OK;
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

static int strings_equal(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int cache_schema_equal(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (!strings_equal(a->format, b->format) || !strings_equal(a->name, b->name) ||
      a->flags != b->flags || a->n_children != b->n_children || !a->dictionary != !b->dictionary)
    return 0;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!cache_schema_equal(a->children[i], b->children[i])) return 0;
  return !a->dictionary || cache_schema_equal(a->dictionary, b->dictionary);
}
