/* writer_schema.c — ArrowSchema to ipc_field, and ipc_schema to Schema.fbs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/format.h"
#include "ipc/writer_internal.h"


/* ---- metadata ------------------------------------------------------------ */

static int32_t load_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

size_t wr_metadata_size(const char *metadata) {
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

static xchg_status bad_format(const ipc_field *f, const char *format, xchg_error *err) {
  return xchg_errorf(err, XCHG_EINVAL, "field '%s': unsupported format string '%s'", f->path,
                     format);
}

static int int_width(char c, int *is_signed) {
  const char *types = "cCsSiIlL";
  const char *p = c ? strchr(types, c) : NULL;
  if (!p) return 0;
  *is_signed = ((p - types) % 2) == 0;
  return 1 << ((p - types) / 2);
}

static xchg_status parse_union_ids(ipc_field *f, const char *ids, xchg_error *err) {
  f->union_type_ids = calloc((size_t)f->n_children + 1, sizeof(int32_t));
  if (!f->union_type_ids) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  const char *p = ids;
  for (int64_t i = 0; i < f->n_children; i++) {
    char *end;
    long id = strtol(p, &end, 10);
    if (end == p || id < 0 || id > 127 || (*end != ',' && *end != '\0'))
      return xchg_errorf(err, XCHG_EINVAL, "field '%s': bad union type ids '%s'", f->path, ids);
    f->union_type_ids[i] = (int32_t)id;
    p = *end ? end + 1 : end;
  }
  if (*p) return xchg_errorf(err, XCHG_EINVAL, "field '%s': more union type ids than children", f->path);
  return XCHG_OK;
}

/* Sets type, width and swap rule from a value type's format string. */
static xchg_status parse_format(ipc_field *f, const char *fmt, int64_t flags, xchg_error *err) {
  static const struct { const char *format; ipc_type type; int width; } simple[] = {
      {"n", IPC_NULL, 0}, {"b", IPC_BOOL, 0}, {"e", IPC_FLOAT, 2}, {"f", IPC_FLOAT, 4},
      {"g", IPC_FLOAT, 8}, {"z", IPC_BINARY, 0}, {"u", IPC_UTF8, 0}, {"Z", IPC_LARGE_BINARY, 0},
      {"U", IPC_LARGE_UTF8, 0}, {"vz", IPC_BINARY_VIEW, 0}, {"vu", IPC_UTF8_VIEW, 0},
      {"tdD", IPC_DATE, 4}, {"tdm", IPC_DATE, 8}, {"tts", IPC_TIME, 4}, {"ttm", IPC_TIME, 4},
      {"ttu", IPC_TIME, 8}, {"ttn", IPC_TIME, 8}, {"tDs", IPC_DURATION, 8},
      {"tDm", IPC_DURATION, 8}, {"tDu", IPC_DURATION, 8}, {"tDn", IPC_DURATION, 8},
      {"tiM", IPC_INTERVAL, 4}, {"tiD", IPC_INTERVAL, 8}, {"tin", IPC_INTERVAL, 16},
      {"+l", IPC_LIST, 0}, {"+L", IPC_LARGE_LIST, 0}, {"+vl", IPC_LIST_VIEW, 0},
      {"+vL", IPC_LARGE_LIST_VIEW, 0}, {"+s", IPC_STRUCT, 0}, {"+m", IPC_MAP, 0},
      {"+r", IPC_RUN_END_ENCODED, 0}};
  int is_signed;
  f->type = 0;
  if (fmt[0] && !fmt[1] && int_width(fmt[0], &is_signed)) {
    f->type = IPC_INT;
    f->width = int_width(fmt[0], &is_signed);
  }
  for (size_t i = 0; i < sizeof simple / sizeof simple[0] && !f->type; i++) {
    if (strcmp(fmt, simple[i].format) == 0) {
      f->type = simple[i].type;
      f->width = simple[i].width;
    }
  }
  if (!f->type) {
    int a, b, c = 128;
    if (strncmp(fmt, "d:", 2) == 0 && sscanf(fmt, "d:%d,%d,%d", &a, &b, &c) >= 2) {
      if (c != 32 && c != 64 && c != 128 && c != 256) return bad_format(f, fmt, err);
      f->type = IPC_DECIMAL;
      f->width = c / 8;
    } else if (strncmp(fmt, "ts", 2) == 0 && fmt[2] && strchr("smun", fmt[2]) && fmt[3] == ':') {
      f->type = IPC_TIMESTAMP;
      f->width = 8;
    } else if (sscanf(fmt, "w:%d", &a) == 1 && a >= 0) {
      f->type = IPC_FIXED_SIZE_BINARY;
      f->width = a;
    } else if (sscanf(fmt, "+w:%d", &a) == 1 && a >= 0) {
      f->type = IPC_FIXED_SIZE_LIST;
      f->list_size = a;
    } else if ((strncmp(fmt, "+ud:", 4) == 0 || strncmp(fmt, "+us:", 4) == 0)) {
      f->type = IPC_UNION;
      f->union_dense = fmt[2] == 'd';
      xchg_status st = parse_union_ids(f, fmt + 4, err);
      if (st != XCHG_OK) return st;
    } else {
      return bad_format(f, fmt, err);
    }
  }
  if (!(f->format = dup_string(fmt))) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  f->keys_sorted = f->type == IPC_MAP && (flags & ARROW_FLAG_MAP_KEYS_SORTED);
  if (f->type == IPC_INTERVAL)
    f->swap = f->width == 4 ? IPC_SWAP_WHOLE : f->width == 8 ? IPC_SWAP_INT32S : IPC_SWAP_MDN;
  else if (f->width > 1 && f->type != IPC_FIXED_SIZE_BINARY)
    f->swap = IPC_SWAP_WHOLE;
  int64_t want = -1;
  switch (f->type) {
    case IPC_LIST: case IPC_LARGE_LIST: case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW:
    case IPC_FIXED_SIZE_LIST: case IPC_MAP: want = 1; break;
    case IPC_RUN_END_ENCODED: want = 2; break;
    case IPC_STRUCT: case IPC_UNION: break;
    default: want = 0; break;
  }
  if (want >= 0 && f->n_children != want)
    return xchg_errorf(err, XCHG_EINVAL, "field '%s' (%s) has %lld children, needs %lld", f->path,
                       fmt, (long long)f->n_children, (long long)want);
  if (f->type == IPC_RUN_END_ENCODED &&
      (f->children[0].type != IPC_INT || f->children[0].dict_encoded || f->children[0].width < 2 ||
       !strchr("sil", f->children[0].format[0])))
    return xchg_errorf(err, XCHG_EINVAL, "field '%s': run ends must be int16, int32 or int64", f->path);
  if (f->type == IPC_MAP && (f->children[0].type != IPC_STRUCT || f->children[0].n_children != 2))
    return xchg_errorf(err, XCHG_EINVAL, "field '%s': a map's child must be a struct of two", f->path);
  return XCHG_OK;
}

static xchg_status import_field(const struct ArrowSchema *s, const char *parent_path, int depth,
                                ipc_field *f, xchg_error *err);

static xchg_status import_children(const struct ArrowSchema *s, int depth, ipc_field *f,
                                   xchg_error *err) {
  if (s->n_children < 0 || (s->n_children > 0 && !s->children))
    return xchg_errorf(err, XCHG_EINVAL, "field '%s': bad children", f->path);
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

static xchg_status import_field(const struct ArrowSchema *s, const char *parent_path, int depth,
                                ipc_field *f, xchg_error *err) {
  if (!s || !s->release || !s->format)
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
    f->metadata_size = wr_metadata_size(s->metadata);
    if (!(f->metadata = malloc(f->metadata_size))) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    memcpy(f->metadata, s->metadata, f->metadata_size);
  }
  const struct ArrowSchema *value = s;
  if (s->dictionary) {
    int is_signed;
    int width = s->format[0] && !s->format[1] ? int_width(s->format[0], &is_signed) : 0;
    if (!width)
      return xchg_errorf(err, XCHG_EINVAL, "field '%s': dictionary index format '%s' is not an "
                         "integer", f->path, s->format);
    if (s->dictionary->dictionary)
      return xchg_errorf(err, XCHG_EINVAL, "field '%s': a dictionary of dictionaries", f->path);
    f->dict_encoded = 1;
    f->index_width = width;
    f->index_signed = is_signed;
    f->dict_ordered = (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
    value = s->dictionary;
    if (!value->release || !value->format)
      return xchg_errorf(err, XCHG_EINVAL, "field '%s': released dictionary schema", f->path);
  }
  xchg_status st = import_children(value, depth, f, err);
  return st == XCHG_OK ? parse_format(f, value->format, value->flags, err) : st;
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

xchg_status wr_schema_import(const struct ArrowSchema *schema, const int64_t *ids, int64_t n_ids,
                             ipc_schema *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  if (!schema || !schema->release || !schema->format || strcmp(schema->format, "+s") != 0)
    return xchg_errorf(err, XCHG_EINVAL, "the schema must be a struct (\"+s\") of the columns");
  ipc_field *root = &out->root;
  root->type = IPC_STRUCT;
  xchg_status st = XCHG_OK;
  if (!(root->name = dup_string("")) || !(root->path = dup_string("")) ||
      !(root->format = dup_string("+s")))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st == XCHG_OK) st = import_children(schema, 0, root, err);
  if (st == XCHG_OK && schema->metadata) {
    out->metadata_size = wr_metadata_size(schema->metadata);
    if (!(out->metadata = malloc(out->metadata_size)))
      st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    else
      memcpy(out->metadata, schema->metadata, out->metadata_size);
  }
  id_state ids_state = {ids, n_ids, 0};
  if (st == XCHG_OK) st = number_dictionaries(root, &ids_state, err);
  if (st != XCHG_OK) ipc_schema_free(out);
  return st;
}

/* ---- ipc_schema to Schema.fbs -------------------------------------------- */

static int unit_of(char c) {
  switch (c) {
    case 's': return 0;
    case 'm': return 1;
    case 'u': return 2;
    default: return 3;
  }
}

/* Adds the type table of f; returns it. */
static fb_ref build_type(fbb *b, const ipc_field *f) {
  const char *fmt = f->format;
  fb_ref tz = 0, ids = 0;
  if (f->type == IPC_TIMESTAMP && fmt[4]) tz = fbb_string(b, fmt + 4, strlen(fmt + 4));
  if (f->type == IPC_UNION) {
    uint8_t bytes[4 * 128];
    for (int64_t i = 0; i < f->n_children; i++)
      for (int k = 0; k < 4; k++) bytes[4 * i + k] = (uint8_t)((uint32_t)f->union_type_ids[i] >> (8 * k));
    ids = fbb_vector_bytes(b, bytes, (size_t)f->n_children, 4, 4);
  }
  fbb_table_start(b);
  switch (f->type) {
    case IPC_INT: {
      int is_signed = 1;
      int_width(fmt[0], &is_signed);
      fbb_add_scalar(b, 0, 4, (uint32_t)(f->width * 8));
      fbb_add_scalar(b, 1, 1, (uint64_t)is_signed);
      break;
    }
    case IPC_FLOAT: fbb_add_scalar(b, 0, 2, fmt[0] == 'e' ? 0 : fmt[0] == 'f' ? 1 : 2); break;
    case IPC_DECIMAL: {
      int precision = 0, scale = 0;
      sscanf(fmt, "d:%d,%d", &precision, &scale);
      fbb_add_scalar(b, 0, 4, (uint32_t)precision);
      fbb_add_scalar(b, 1, 4, (uint32_t)scale);
      fbb_add_scalar(b, 2, 4, (uint32_t)(f->width * 8));
      break;
    }
    case IPC_DATE: fbb_add_scalar(b, 0, 2, fmt[2] == 'D' ? 0 : 1); break;
    case IPC_TIME:
      fbb_add_scalar(b, 0, 2, (uint64_t)unit_of(fmt[2]));
      fbb_add_scalar(b, 1, 4, (uint32_t)(f->width * 8));
      break;
    case IPC_TIMESTAMP:
      fbb_add_scalar(b, 0, 2, (uint64_t)unit_of(fmt[2]));
      if (tz) fbb_add_ref(b, 1, tz);
      break;
    case IPC_DURATION: fbb_add_scalar(b, 0, 2, (uint64_t)unit_of(fmt[2])); break;
    case IPC_INTERVAL: fbb_add_scalar(b, 0, 2, fmt[2] == 'M' ? 0 : fmt[2] == 'D' ? 1 : 2); break;
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
