/* node.c — building checked column trees and reading their elements. */
#include "cli/render/node.h"

#include <stdlib.h>
#include <string.h>

#include "cli/render/keys.h"
#include "codec/helpers.h"

/* ---- shape of an exported array, by type --------------------------------- */

static int64_t expected_buffers(const ipc_schema_view *t, const struct ArrowArray *a) {
  switch (t->kind) {
    case IPC_KIND_NULL:
    case IPC_KIND_RUN_END: return 0;
    case IPC_KIND_STRUCT:
    case IPC_KIND_FIXED_LIST: return 1;
    case IPC_KIND_UNION: return t->dense ? 2 : 1;
    case IPC_KIND_BINARY:
    case IPC_KIND_LIST_VIEW: return 3;
    case IPC_KIND_BINARY_VIEW: return a->n_buffers >= 3 ? a->n_buffers : 3;
    default: return 2;
  }
}

/* Buffers the type reads for a non-empty array: all but the validity
 * bitmap (buffer 0 for types that have one). */
static int first_required_buffer(const ipc_schema_view *t) {
  return (t->kind == IPC_KIND_UNION) ? 0 : 1;
}

/* The data of variable-size binary may be absent when every value is
 * empty, and so may a view array's variadic buffers (none is referenced)
 * and the data of fixed_size_binary[0] (it has no bytes). */
static bool buffer_may_be_null(const ipc_schema_view *t, int64_t b) {
  return (t->kind == IPC_KIND_BINARY && b == 2) || (t->kind == IPC_KIND_BINARY_VIEW && b >= 2) ||
         (t->kind == IPC_KIND_FIXED_BINARY && t->width == 0);
}

/* O(1) checks that the children are long enough for what the parent
 * addresses; the reader validated offsets themselves. */
static xchg_status check_child_lengths(const xc_node *n, xchg_error *err) {
  const struct ArrowArray *a = n->array;
  const char *name = n->schema->name ? n->schema->name : "";
  int64_t end = a->offset + a->length;
  int64_t need = 0;
  switch (n->type.kind) {
    case IPC_KIND_STRUCT:
    case IPC_KIND_UNION:
      if (n->type.kind == IPC_KIND_UNION && n->type.dense) return XCHG_OK;
      for (int64_t c = 0; c < n->n_children; c++)
        if (n->children[c].array->length < end)
          return xchg_errorf(err, XCHG_EFORMAT,
                             "field \"%s\": child %lld is shorter than its parent", name,
                             (long long)c);
      return XCHG_OK;
    case IPC_KIND_FIXED_LIST:
      if (n->type.width > 0 && end > INT64_MAX / n->type.width)
        return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": fixed-size list too long", name);
      need = end * n->type.width;
      break;
    case IPC_KIND_LIST:
    case IPC_KIND_MAP:
      if (a->length == 0) return XCHG_OK;
      if (xc_offset(n, 0) < 0)
        return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": negative offset", name);
      need = xc_offset(n, a->length);
      break;
    default: return XCHG_OK;
  }
  if (n->children[0].array->length < need)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "field \"%s\": child has %lld elements, parent needs %lld", name,
                       (long long)n->children[0].array->length, (long long)need);
  return XCHG_OK;
}

static xchg_status check_array(const xc_node *n, xchg_error *err) {
  const struct ArrowArray *a = n->array;
  const char *name = n->schema->name ? n->schema->name : "";
  if (a->release == NULL)
    return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": released array", name);
  if (a->length < 0 || a->offset < 0 || a->offset > INT64_MAX - a->length)
    return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": bad length %lld / offset %lld", name,
                       (long long)a->length, (long long)a->offset);
  int64_t want = expected_buffers(&n->type, a);
  if (a->n_buffers != want || (want > 0 && a->buffers == NULL))
    return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": %lld buffers, type needs %lld", name,
                       (long long)a->n_buffers, (long long)want);
  if (a->length > 0)
    for (int64_t b = first_required_buffer(&n->type); b < want; b++)
      if (a->buffers[b] == NULL && !buffer_may_be_null(&n->type, b))
        return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": array buffer %lld is missing", name,
                           (long long)b);
  if (a->n_children != n->schema->n_children || (a->n_children > 0 && a->children == NULL))
    return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": array has %lld children, schema %lld",
                       name, (long long)a->n_children, (long long)n->schema->n_children);
  if ((a->dictionary == NULL) != (n->schema->dictionary == NULL))
    return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": dictionary missing in array or schema",
                       name);
  return XCHG_OK;
}

static xchg_status build_union_map(xc_node *n, xchg_error *err) {
  memset(n->child_of_type_id, -1, sizeof n->child_of_type_id);
  for (int i = 0; i < n->type.n_type_ids; i++) {
    int8_t id = n->type.type_ids[i];
    if (n->child_of_type_id[id] != -1)
      return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": union type id %d repeated",
                         n->schema->name ? n->schema->name : "", id);
    n->child_of_type_id[id] = (int8_t)i;
  }
  return XCHG_OK;
}

static xchg_status build_children(xc_node *n, xc_dict_ids *dict_ids, xchg_error *err) {
  const struct ArrowSchema *s = n->schema;
  if (s->n_children == 0) return XCHG_OK;
  if (s->children == NULL) return xchg_errorf(err, XCHG_EFORMAT, "schema children missing");
  n->children = calloc((size_t)s->n_children, sizeof *n->children);
  if (n->children == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  n->n_children = s->n_children;
  for (int64_t c = 0; c < s->n_children; c++) {
    const struct ArrowArray *child = n->array ? n->array->children[c] : NULL;
    if (n->array && child == NULL) return xchg_errorf(err, XCHG_EFORMAT, "array child missing");
    xchg_status st = xc_node_build(&n->children[c], s->children[c], child, dict_ids, err);
    if (st != XCHG_OK) return st;
  }
  if (n->type.kind != IPC_KIND_STRUCT) return XCHG_OK;
  const char **names = malloc((size_t)s->n_children * sizeof *names);
  if (names == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t c = 0; c < s->n_children; c++) names[c] = s->children[c]->name;
  xchg_status st = xc_unique_keys(names, s->n_children, &n->json_keys, err);
  free(names);
  return st;
}

int64_t xc_count_dictionaries(const struct ArrowSchema *schema) {
  int64_t n = 0;
  if (schema->dictionary != NULL) n += 1 + xc_count_dictionaries(schema->dictionary);
  for (int64_t c = 0; c < schema->n_children && schema->children != NULL; c++)
    if (schema->children[c] != NULL) n += xc_count_dictionaries(schema->children[c]);
  return n;
}

static xchg_status build_dictionary(xc_node *n, xc_dict_ids *dict_ids, xchg_error *err) {
  if (n->type.kind != IPC_KIND_INT)
    return xchg_errorf(err, XCHG_EFORMAT, "field \"%s\": dictionary indices are not integers",
                       n->schema->name ? n->schema->name : "");
  if (dict_ids->next >= dict_ids->count)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "field \"%s\": more dictionary-encoded fields than dictionary ids (%lld)",
                       n->schema->name ? n->schema->name : "", (long long)dict_ids->count);
  n->dict_id = dict_ids->ids[dict_ids->next++];
  n->dictionary = calloc(1, sizeof *n->dictionary);
  if (n->dictionary == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return xc_node_build(n->dictionary, n->schema->dictionary, n->array ? n->array->dictionary : NULL,
                       dict_ids, err);
}

xchg_status xc_node_build(xc_node *node, const struct ArrowSchema *schema,
                          const struct ArrowArray *array, xc_dict_ids *dict_ids, xchg_error *err) {
  memset(node, 0, sizeof *node);
  node->schema = schema;
  node->array = array;
  node->dict_id = -1;
  xchg_status st = ipc_schema_view_init(&node->type, schema, err);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "field \"%s\": ", schema->name ? schema->name : "");
    goto fail;
  }
  if (array != NULL && (st = check_array(node, err)) != XCHG_OK) goto fail;
  if (schema->dictionary != NULL && (st = build_dictionary(node, dict_ids, err)) != XCHG_OK)
    goto fail;
  if ((st = build_children(node, dict_ids, err)) != XCHG_OK) goto fail;
  if (node->type.kind == IPC_KIND_UNION && (st = build_union_map(node, err)) != XCHG_OK) goto fail;
  if (array != NULL && (st = check_child_lengths(node, err)) != XCHG_OK) goto fail;
  return XCHG_OK;
fail:
  xc_node_free(node);
  return st;
}

void xc_node_free(xc_node *node) {
  xc_keys_free(node->json_keys, node->n_children);
  node->json_keys = NULL;
  for (int64_t c = 0; c < node->n_children; c++) xc_node_free(&node->children[c]);
  free(node->children);
  node->children = NULL;
  node->n_children = 0;
  if (node->dictionary != NULL) {
    xc_node_free(node->dictionary);
    free(node->dictionary);
    node->dictionary = NULL;
  }
}

/* ---- element access ------------------------------------------------------ */

bool xc_is_valid(const xc_node *n, int64_t i) {
  if (n->type.kind == IPC_KIND_NULL) return false;
  if (n->type.kind == IPC_KIND_UNION || n->type.kind == IPC_KIND_RUN_END) return true;
  const uint8_t *bits = n->array->buffers[0];
  if (bits == NULL) return true;
  return bitmap_get(bits, n->array->offset + i);
}

uint64_t xc_read_uint(const xc_node *n, int b, int64_t i, int bit_width) {
  const uint8_t *data = n->array->buffers[b];
  int64_t p = n->array->offset + i;
  switch (bit_width) {
    case 8: return data[p];
    case 16: {
      uint16_t v;
      memcpy(&v, data + 2 * p, 2);
      return v;
    }
    case 32: {
      uint32_t v;
      memcpy(&v, data + 4 * p, 4);
      return v;
    }
    default: {
      uint64_t v;
      memcpy(&v, data + 8 * p, 8);
      return v;
    }
  }
}

/* The same bits, sign-extended (the conversions wrap, as C11 lets gcc and
 * clang define). */
int64_t xc_read_int(const xc_node *n, int b, int64_t i, int bit_width) {
  uint64_t u = xc_read_uint(n, b, i, bit_width);
  switch (bit_width) {
    case 8: return (int8_t)u;
    case 16: return (int16_t)u;
    case 32: return (int32_t)u;
    default: return (int64_t)u;
  }
}

const uint8_t *xc_fixed(const xc_node *n, int b, int64_t i, int64_t byte_width) {
  const uint8_t *data = n->array->buffers[b];
  return data + (n->array->offset + i) * byte_width;
}

int64_t xc_offset(const xc_node *n, int64_t i) {
  /* An empty array may export no offsets buffer at all. */
  if (n->array->buffers[1] == NULL) return 0;
  return xc_read_int(n, 1, i, n->type.large ? 64 : 32);
}

int64_t xc_view_buffer_count(const xc_node *n) { return n->array->n_buffers - 3; }

int64_t xc_view_buffer_size(const xc_node *n, int64_t b) {
  const uint8_t *sizes = n->array->buffers[n->array->n_buffers - 1];
  int64_t size = 0;
  if (sizes != NULL) memcpy(&size, sizes + 8 * b, 8);
  return size < 0 ? 0 : size;
}

static const uint8_t *view_bytes(const xc_node *n, int64_t i, int64_t *size) {
  const uint8_t *view = xc_fixed(n, 1, i, 16);
  int32_t len, buffer_index, offset;
  memcpy(&len, view, 4);
  *size = len < 0 ? 0 : len;
  if (len <= 12) return view + 4;
  memcpy(&buffer_index, view + 8, 4);
  memcpy(&offset, view + 12, 4);
  bool inside = buffer_index >= 0 && buffer_index < xc_view_buffer_count(n) && offset >= 0 &&
                len <= xc_view_buffer_size(n, buffer_index) - offset &&
                n->array->buffers[2 + buffer_index] != NULL;
  if (!inside) { /* never follow a view outside its buffer */
    *size = 0;
    return (const uint8_t *)"";
  }
  return (const uint8_t *)n->array->buffers[2 + buffer_index] + offset;
}

const uint8_t *xc_binary(const xc_node *n, int64_t i, int64_t *size) {
  if (n->type.kind == IPC_KIND_BINARY_VIEW) return view_bytes(n, i, size);
  if (n->type.kind == IPC_KIND_FIXED_BINARY) {
    *size = n->type.width;
    return n->type.width == 0 ? (const uint8_t *)"" : xc_fixed(n, 1, i, n->type.width);
  }
  int64_t start = xc_offset(n, i), end = xc_offset(n, i + 1);
  const uint8_t *data = n->array->buffers[2];
  if (end <= start || data == NULL) {
    *size = 0;
    return (const uint8_t *)"";
  }
  *size = end - start;
  return data + start;
}

bool xc_union_child(const xc_node *n, int64_t i, const xc_node **child, int64_t *child_index) {
  int8_t type_id = (int8_t)xc_read_int(n, 0, i, 8);
  if (type_id < 0 || n->child_of_type_id[type_id] < 0) return false;
  *child = &n->children[n->child_of_type_id[type_id]];
  if (n->type.dense) {
    *child_index = xc_read_int(n, 1, i, 32);
    return *child_index >= 0 && *child_index < (*child)->array->length;
  }
  *child_index = n->array->offset + i;
  return true;
}

int64_t xc_run_index(const xc_node *n, int64_t i) {
  const xc_node *ends = &n->children[0];
  int64_t logical = n->array->offset + i;
  int64_t lo = 0, hi = ends->array->length; /* first run whose end > logical */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (xc_read_int(ends, 1, mid, ends->type.bit_width) > logical)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo >= ends->array->length || lo >= n->children[1].array->length) return -1;
  return lo;
}

int64_t xc_dict_index(const xc_node *n, int64_t i) {
  int64_t index;
  if (!n->type.is_signed && n->type.bit_width == 64) {
    uint64_t u = xc_read_uint(n, 1, i, 64);
    index = u > INT64_MAX ? -1 : (int64_t)u;
  } else if (n->type.is_signed) {
    index = xc_read_int(n, 1, i, n->type.bit_width);
  } else {
    index = (int64_t)xc_read_uint(n, 1, i, n->type.bit_width);
  }
  if (index < 0 || index >= n->dictionary->array->length) return -1;
  return index;
}
