/* writer_schema.c — ArrowSchema to ipc_field, and ipc_schema to Schema.fbs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/format.h"
#include "ipc/schema_view.h"
#include "ipc/writer_internal.h"

/* ---- metadata ------------------------------------------------------------ */

static int32_t load_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

size_t ipc_metadata_size(const char *metadata) {
  if (!metadata) return 0;
  int32_t n = load_i32(metadata);
  size_t size = 4;
  for (int32_t i = 0; i < 2 * n; i++) size += 4 + (size_t)load_i32(metadata + size);
  return size;
}

fb_ref wr_metadata_build(fbb *b, const char *metadata) {
  if (!metadata) return 0;
  int32_t n = load_i32(metadata);
  if (n <= 0) return 0;
  fb_ref *pairs = calloc((size_t)n, sizeof *pairs);
  if (!pairs) {
    b->failed = 1;
    return 0;
  }
  const char *p = metadata + 4;
  for (int32_t i = 0; i < n; i++) {
    int32_t klen = load_i32(p);
    fb_ref key = fbb_string(b, p + 4, (size_t)klen);
    p += 4 + klen;
    int32_t vlen = load_i32(p);
    fb_ref value = fbb_string(b, p + 4, (size_t)vlen);
    p += 4 + vlen;
    fbb_table_start(b);
    fbb_add_ref(b, 0, key);
    fbb_add_ref(b, 1, value);
    pairs[i] = fbb_table_end(b);
  }
  fb_ref v = fbb_vector_refs(b, pairs, (size_t)n);
  free(pairs);
  return v;
}

/* ---- ArrowSchema to ipc_field -------------------------------------------- */

static char *dup_string(const char *s) {
  size_t n = strlen(s);
  char *out = malloc(n + 1);
  if (out) memcpy(out, s, n + 1);
  return out;
}

/* The Schema.fbs type of a parsed format. */
static ipc_type wire_type(const ipc_schema_view *v) {
  switch (v->kind) {
    case IPC_KIND_NULL: return IPC_NULL;
    case IPC_KIND_BOOL: return IPC_BOOL;
    case IPC_KIND_INT: return IPC_INT;
    case IPC_KIND_FLOAT: return IPC_FLOAT;
    case IPC_KIND_DECIMAL: return IPC_DECIMAL;
    case IPC_KIND_FIXED_BINARY: return IPC_FIXED_SIZE_BINARY;
    case IPC_KIND_BINARY:
      return v->utf8 ? (v->large ? IPC_LARGE_UTF8 : IPC_UTF8)
                     : (v->large ? IPC_LARGE_BINARY : IPC_BINARY);
    case IPC_KIND_BINARY_VIEW: return v->utf8 ? IPC_UTF8_VIEW : IPC_BINARY_VIEW;
    case IPC_KIND_DATE: return IPC_DATE;
    case IPC_KIND_TIME: return IPC_TIME;
    case IPC_KIND_TIMESTAMP: return IPC_TIMESTAMP;
    case IPC_KIND_DURATION: return IPC_DURATION;
    case IPC_KIND_INTERVAL: return IPC_INTERVAL;
    case IPC_KIND_LIST: return v->large ? IPC_LARGE_LIST : IPC_LIST;
    case IPC_KIND_LIST_VIEW: return v->large ? IPC_LARGE_LIST_VIEW : IPC_LIST_VIEW;
    case IPC_KIND_FIXED_LIST: return IPC_FIXED_SIZE_LIST;
    case IPC_KIND_STRUCT: return IPC_STRUCT;
    case IPC_KIND_MAP: return IPC_MAP;
    case IPC_KIND_UNION: return IPC_UNION;
    case IPC_KIND_RUN_END: return IPC_RUN_END_ENCODED;
  }
  return IPC_NULL;
}

/* Bytes per value of a fixed-width type (ipc_field.width), else 0. */
static int value_bytes(const ipc_schema_view *v) {
  static const int interval_bytes[] = {4, 8, 16};
  switch (v->kind) {
    case IPC_KIND_INT:
    case IPC_KIND_FLOAT:
    case IPC_KIND_DECIMAL:
    case IPC_KIND_DATE:
    case IPC_KIND_TIME:
    case IPC_KIND_TIMESTAMP:
    case IPC_KIND_DURATION: return v->bit_width / 8;
    case IPC_KIND_INTERVAL: return interval_bytes[v->interval];
    case IPC_KIND_FIXED_BINARY: return (int)v->width;
    default: return 0;
  }
}

/* Sets type, width and swap rule from the value type's schema node, whose
 * children are already checked (ipc_schema_view_init) and imported. */
static xchg_status set_type(ipc_field *f, const struct ArrowSchema *value, const ipc_schema_view *v,
                            xchg_error *err) {
  f->type = wire_type(v);
  f->width = value_bytes(v);
  if (v->kind == IPC_KIND_FIXED_LIST) f->list_size = (int32_t)v->width;
  if (v->kind == IPC_KIND_UNION) {
    f->union_dense = v->dense;
    if (!(f->union_type_ids = calloc((size_t)f->n_children + 1, sizeof(int32_t))))
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < f->n_children; i++) f->union_type_ids[i] = v->type_ids[i];
  }
  if (!(f->format = dup_string(value->format)))
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  f->keys_sorted = f->type == IPC_MAP && (value->flags & ARROW_FLAG_MAP_KEYS_SORTED);
  if (f->type == IPC_INTERVAL)
    f->swap = f->width == 4 ? IPC_SWAP_WHOLE : f->width == 8 ? IPC_SWAP_INT32S : IPC_SWAP_MDN;
  else if (f->width > 1 && f->type != IPC_FIXED_SIZE_BINARY)
    f->swap = IPC_SWAP_WHOLE;
  return XCHG_OK;
}

static xchg_status import_field(const struct ArrowSchema *s, const char *parent_path, int depth,
                                ipc_field *f, xchg_error *err);

/* The children of s, whose view (ipc_schema_view_init) has checked them. */
static xchg_status import_children(const struct ArrowSchema *s, int depth, ipc_field *f,
                                   xchg_error *err) {
  if (s->n_children == 0) return XCHG_OK;
  if (!(f->children = calloc((size_t)s->n_children, sizeof(ipc_field))))
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  f->n_children = s->n_children;
  for (int64_t i = 0; i < s->n_children; i++) {
    xchg_status st = import_field(s->children[i], f->path, depth + 1, &f->children[i], err);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

/* The dictionary encoding of s (with indices of format s->format) into f;
 * *value becomes the schema of its values. */
static xchg_status import_dictionary(const struct ArrowSchema *s, ipc_field *f,
                                     const struct ArrowSchema **value, xchg_error *err) {
  ipc_schema_view index;
  if (ipc_schema_view_parse(s->format, &index, NULL) != XCHG_OK || index.kind != IPC_KIND_INT)
    return xchg_errorf(err, XCHG_EINVAL,
                       "field '%s': dictionary index format '%s' is not an "
                       "integer",
                       f->path, s->format);
  if (s->dictionary->dictionary)
    return xchg_errorf(err, XCHG_EINVAL, "field '%s': a dictionary of dictionaries", f->path);
  f->dict_encoded = 1;
  f->index_width = index.bit_width / 8;
  f->index_signed = index.is_signed;
  f->dict_ordered = (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
  *value = s->dictionary;
  if (!(*value)->release || !(*value)->format)
    return xchg_errorf(err, XCHG_EINVAL, "field '%s': released dictionary schema", f->path);
  return XCHG_OK;
}

static xchg_status import_field(const struct ArrowSchema *s, const char *parent_path, int depth,
                                ipc_field *f, xchg_error *err) {
  if (!s->release || !s->format)
    return xchg_errorf(err, XCHG_EINVAL, "field under '%s': released or without a format",
                       parent_path);
  if (depth > 64)
    return xchg_errorf(err, XCHG_ELIMIT, "field '%s': nesting deeper than 64 levels", parent_path);
  const char *name = s->name ? s->name : "";
  f->name = dup_string(name);
  size_t plen = strlen(parent_path) + strlen(name) + 2;
  if ((f->path = malloc(plen)) != NULL)
    snprintf(f->path, plen, "%s%s%s", parent_path, *parent_path ? "." : "", name);
  if (!f->name || !f->path) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  f->nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  if (s->metadata) {
    f->metadata_size = ipc_metadata_size(s->metadata);
    if (!(f->metadata = malloc(f->metadata_size)))
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    memcpy(f->metadata, s->metadata, f->metadata_size);
  }
  const struct ArrowSchema *value = s;
  xchg_status st = s->dictionary ? import_dictionary(s, f, &value, err) : XCHG_OK;
  ipc_schema_view v;
  if (st == XCHG_OK && (st = ipc_schema_view_init(&v, value, err)) != XCHG_OK)
    xchg_error_prefix(err, "field '%s': ", f->path);
  if (st == XCHG_OK) st = import_children(value, depth, f, err);
  return st == XCHG_OK ? set_type(f, value, &v, err) : st;
}

typedef struct id_state {
  const int64_t *ids;
  int64_t n_ids, next;
} id_state;

/* Numbers dictionaries in post order: children (value type children for a
 * dictionary field) first, then the field itself. */
static xchg_status number_dictionaries(ipc_field *f, id_state *s, xchg_error *err) {
  for (int64_t i = 0; i < f->n_children; i++) {
    xchg_status st = number_dictionaries(&f->children[i], s, err);
    if (st != XCHG_OK) return st;
  }
  if (!f->dict_encoded) return XCHG_OK;
  if (s->ids && s->next >= s->n_ids)
    return xchg_errorf(err, XCHG_EINVAL, "field '%s': only %lld dictionary ids given", f->path,
                       (long long)s->n_ids);
  f->dict_id = s->ids ? s->ids[s->next] : s->next;
  s->next++;
  return XCHG_OK;
}

/* The schema of a batch: a live struct whose children are the columns;
 * what is wrong with it is said as it is. */
static xchg_status check_root(const struct ArrowSchema *schema, xchg_error *err) {
  if (!schema) return xchg_errorf(err, XCHG_EINVAL, "the schema is NULL");
  if (!schema->release) return xchg_errorf(err, XCHG_EINVAL, "the schema is released");
  if (!schema->format || strcmp(schema->format, "+s") != 0)
    return xchg_errorf(err, XCHG_EINVAL,
                       "the schema's format is \"%.64s\": it must be a struct (\"+s\") of the "
                       "columns",
                       schema->format ? schema->format : "(NULL)");
  return XCHG_OK;
}

xchg_status ipc_schema_import(const struct ArrowSchema *schema, const int64_t *ids, int64_t n_ids,
                              ipc_schema *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  xchg_status checked = check_root(schema, err);
  if (checked != XCHG_OK) return checked;
  ipc_field *root = &out->root;
  root->type = IPC_STRUCT;
  xchg_status st = XCHG_OK;
  if (!(root->name = dup_string("")) || !(root->path = dup_string("")) ||
      !(root->format = dup_string("+s")))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  ipc_schema_view v;
  if (st == XCHG_OK) st = ipc_schema_view_init(&v, schema, err);
  if (st == XCHG_OK) st = import_children(schema, 0, root, err);
  if (st == XCHG_OK && schema->metadata) {
    out->metadata_size = ipc_metadata_size(schema->metadata);
    if (!(out->metadata = malloc(out->metadata_size)))
      st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    else
      memcpy(out->metadata, schema->metadata, out->metadata_size);
  }
  id_state ids_state = {ids, n_ids, 0};
  if (st == XCHG_OK) st = number_dictionaries(root, &ids_state, err);
  /* More ids than fields: they were meant for another order or schema, so
   * the ones taken may be the wrong ones. */
  if (st == XCHG_OK && ids && ids_state.next < n_ids)
    st = xchg_errorf(err, XCHG_EINVAL,
                     "%lld dictionary ids given, the schema has %lld dictionary-encoded fields",
                     (long long)n_ids, (long long)ids_state.next);
  if (st != XCHG_OK) ipc_schema_free(out);
  return st;
}

/* ---- ipc_schema to Schema.fbs -------------------------------------------- */

/* Adds the type table of f; returns it.  f->format was parsed when the
 * schema was imported: its view is read again here rather than kept in
 * every ipc_field. */
static fb_ref build_type(fbb *b, const ipc_field *f) {
  ipc_schema_view v;
  ipc_schema_view_parse(f->format, &v, NULL);
  fb_ref tz = 0, ids = 0;
  if (f->type == IPC_TIMESTAMP && v.tz[0]) tz = fbb_string(b, v.tz, strlen(v.tz));
  if (f->type == IPC_UNION) {
    uint8_t bytes[4 * 128];
    for (int64_t i = 0; i < f->n_children; i++)
      for (int k = 0; k < 4; k++)
        bytes[4 * i + k] = (uint8_t)((uint32_t)f->union_type_ids[i] >> (8 * k));
    ids = fbb_vector_bytes(b, bytes, (size_t)f->n_children, 4, 4);
  }
  fbb_table_start(b);
  switch (f->type) {
    case IPC_INT:
      fbb_add_scalar(b, 0, 4, (uint32_t)v.bit_width);
      fbb_add_scalar(b, 1, 1, (uint64_t)v.is_signed);
      break;
    case IPC_FLOAT:
      fbb_add_scalar(b, 0, 2, v.bit_width == 16 ? 0 : v.bit_width == 32 ? 1 : 2);
      break;
    case IPC_DECIMAL:
      fbb_add_scalar(b, 0, 4, (uint32_t)v.precision);
      fbb_add_scalar(b, 1, 4, (uint32_t)v.scale);
      fbb_add_scalar(b, 2, 4, (uint32_t)v.bit_width);
      break;
    case IPC_DATE: fbb_add_scalar(b, 0, 2, v.unit == IPC_UNIT_DAY ? 0 : 1); break;
    case IPC_TIME:
      fbb_add_scalar(b, 0, 2, (uint64_t)v.unit);
      fbb_add_scalar(b, 1, 4, (uint32_t)v.bit_width);
      break;
    case IPC_TIMESTAMP:
      fbb_add_scalar(b, 0, 2, (uint64_t)v.unit);
      if (tz) fbb_add_ref(b, 1, tz);
      break;
    case IPC_DURATION: fbb_add_scalar(b, 0, 2, (uint64_t)v.unit); break;
    case IPC_INTERVAL: fbb_add_scalar(b, 0, 2, (uint64_t)v.interval); break;
    case IPC_FIXED_SIZE_BINARY: fbb_add_scalar(b, 0, 4, (uint32_t)f->width); break;
    case IPC_FIXED_SIZE_LIST: fbb_add_scalar(b, 0, 4, (uint32_t)f->list_size); break;
    case IPC_MAP: fbb_add_scalar(b, 0, 1, (uint64_t)f->keys_sorted); break;
    case IPC_UNION:
      fbb_add_scalar(b, 0, 2, (uint64_t)f->union_dense);
      fbb_add_ref(b, 1, ids);
      break;
    default: break; /* types without parameters: an empty table */
  }
  return fbb_table_end(b);
}

static fb_ref build_field(fbb *b, const ipc_field *f) {
  fb_ref children = 0;
  if (f->n_children > 0) {
    fb_ref *refs = calloc((size_t)f->n_children, sizeof *refs);
    if (!refs) {
      b->failed = 1;
      return 0;
    }
    for (int64_t i = 0; i < f->n_children; i++) refs[i] = build_field(b, &f->children[i]);
    children = fbb_vector_refs(b, refs, (size_t)f->n_children);
    free(refs);
  } else {
    children = fbb_vector_refs(b, NULL, 0);
  }
  fb_ref name = fbb_string(b, f->name, strlen(f->name));
  fb_ref metadata = wr_metadata_build(b, f->metadata);
  fb_ref type = build_type(b, f);
  fb_ref dict = 0;
  if (f->dict_encoded) {
    fbb_table_start(b);
    fbb_add_scalar(b, 0, 4, (uint32_t)(f->index_width * 8));
    fbb_add_scalar(b, 1, 1, (uint64_t)f->index_signed);
    fb_ref index = fbb_table_end(b);
    fbb_table_start(b);
    fbb_add_scalar(b, DICT_ID, 8, (uint64_t)f->dict_id);
    fbb_add_ref(b, DICT_INDEX_TYPE, index);
    if (f->dict_ordered) fbb_add_scalar(b, DICT_ORDERED, 1, 1);
    dict = fbb_table_end(b);
  }
  fbb_table_start(b);
  fbb_add_ref(b, FIELD_NAME, name);
  fbb_add_scalar(b, FIELD_NULLABLE, 1, (uint64_t)f->nullable);
  fbb_add_scalar(b, FIELD_TYPE_TYPE, 1, (uint64_t)f->type);
  fbb_add_ref(b, FIELD_TYPE, type);
  if (dict) fbb_add_ref(b, FIELD_DICTIONARY, dict);
  fbb_add_ref(b, FIELD_CHILDREN, children);
  if (metadata) fbb_add_ref(b, FIELD_METADATA, metadata);
  return fbb_table_end(b);
}

fb_ref wr_schema_build(fbb *b, const ipc_schema *schema) {
  const ipc_field *root = &schema->root;
  fb_ref *refs = calloc((size_t)root->n_children + 1, sizeof *refs);
  if (!refs) {
    b->failed = 1;
    return 0;
  }
  for (int64_t i = 0; i < root->n_children; i++) refs[i] = build_field(b, &root->children[i]);
  fb_ref fields = fbb_vector_refs(b, refs, (size_t)root->n_children);
  free(refs);
  fb_ref metadata = wr_metadata_build(b, schema->metadata);
  fbb_table_start(b);
  if (schema->big_endian) fbb_add_scalar(b, SCHEMA_ENDIANNESS, 2, 1);
  fbb_add_ref(b, SCHEMA_FIELDS, fields);
  if (metadata) fbb_add_ref(b, SCHEMA_METADATA, metadata);
  return fbb_table_end(b);
}
