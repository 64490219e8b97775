/* schema.c — parsing Schema.fbs into ipc_fields and exporting ArrowSchema. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/c_data.h"
#include "ipc/format.h"
#include "ipc/schema.h"
#include "ipc/schema_view.h"

typedef struct parse_ctx {
  const xchg_ipc_read_options *opts;
  int64_t n_fields;
} parse_ctx;

/* A table with no fields, standing in for an absent type table so that
 * every parameter reads as its default. */
static const uint8_t empty_table_bytes[8] = {4, 0, 4, 0, 4, 0, 0, 0};
static const fb_table empty_table = {empty_table_bytes, 8, 4, 0, 4, 4};

static char *copy_string(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (out) {
    memcpy(out, s, n);
    out[n] = '\0';
  }
  return out;
}

static char *format_string(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format_string(const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  return (n < 0 || (size_t)n >= sizeof tmp) ? NULL : copy_string(tmp, (size_t)n);
}

static void put_i32(char *p, int32_t v) { memcpy(p, &v, 4); }

xchg_status ipc_metadata_parse(const fb_table *t, int slot, char **out, size_t *out_size,
                               const char *where, xchg_error *err) {
  fb_vector kvs;
  *out = NULL;
  *out_size = 0;
  int rc = fb_vector_field(t, slot, 4, &kvs);
  if (rc < 0) return xchg_errorf(err, XCHG_EFORMAT, "%s: invalid custom_metadata vector", where);
  if (rc == 0 || kvs.count == 0) return XCHG_OK;
  size_t total = 4;
  for (int pass = 0; pass < 2; pass++) {
    char *p = *out;
    if (pass == 1) {
      if (!(*out = p = malloc(total)))
        return xchg_errorf(err, XCHG_ENOMEM, "%s: out of memory for metadata", where);
      put_i32(p, (int32_t)kvs.count);
      p += 4;
    }
    for (uint32_t i = 0; i < kvs.count; i++) {
      fb_table kv;
      const char *s[2] = {"", ""};
      uint32_t n[2] = {0, 0};
      if (fb_vector_table(&kvs, i, &kv) < 0 || fb_string(&kv, 0, &s[0], &n[0]) < 0 ||
          fb_string(&kv, 1, &s[1], &n[1]) < 0) {
        free(*out);
        *out = NULL;
        return xchg_errorf(err, XCHG_EFORMAT, "%s: invalid custom_metadata entry %u", where, i);
      }
      for (int k = 0; k < 2; k++) {
        if (pass == 0) {
          total += 4 + (size_t)n[k];
        } else {
          put_i32(p, (int32_t)n[k]);
          memcpy(p + 4, s[k], n[k]);
          p += 4 + n[k];
        }
      }
    }
  }
  *out_size = total;
  return XCHG_OK;
}

static xchg_status bad_type(const ipc_field *f, xchg_error *err, const char *what) {
  return xchg_errorf(err, XCHG_EFORMAT, "field '%s': %s", f->path, what);
}

static const char *time_unit_letter(int16_t unit) {
  static const char *letters[] = {"s", "m", "u", "n"};
  return (unit >= 0 && unit <= 3) ? letters[unit] : NULL;
}

static xchg_status parse_int(ipc_field *f, const fb_table *t, xchg_error *err) {
  int32_t bits;
  uint8_t is_signed;
  if (fb_i32(t, 0, 0, &bits) < 0 || fb_u8(t, 1, 0, &is_signed) < 0)
    return bad_type(f, err, "invalid Int table");
  static const char *formats[2][4] = {{"C", "S", "I", "L"}, {"c", "s", "i", "l"}};
  int idx = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : bits == 64 ? 3 : -1;
  if (idx < 0) return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Int bitWidth %d", f->path, bits);
  f->format = copy_string(formats[is_signed != 0][idx], 1);
  f->width = bits / 8;
  return XCHG_OK;
}

static xchg_status parse_float(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t precision;
  if (fb_i16(t, 0, 0, &precision) < 0) return bad_type(f, err, "invalid FloatingPoint table");
  if (precision < 0 || precision > 2)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': FloatingPoint precision %d", f->path,
                       precision);
  f->format = copy_string(&"efg"[precision], 1);
  f->width = 2 << precision;
  return XCHG_OK;
}

static xchg_status parse_decimal(ipc_field *f, const fb_table *t, xchg_error *err) {
  int32_t precision, scale, bits;
  if (fb_i32(t, 0, 0, &precision) < 0 || fb_i32(t, 1, 0, &scale) < 0 ||
      fb_i32(t, 2, 128, &bits) < 0)
    return bad_type(f, err, "invalid Decimal table");
  if (bits != 32 && bits != 64 && bits != 128 && bits != 256)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Decimal bitWidth %d", f->path, bits);
  if (precision <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Decimal precision %d", f->path, precision);
  f->format = bits == 128 ? format_string("d:%d,%d", precision, scale)
                          : format_string("d:%d,%d,%d", precision, scale, bits);
  f->width = bits / 8;
  return XCHG_OK;
}

static xchg_status parse_date(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t unit;
  if (fb_i16(t, 0, 1, &unit) < 0 || unit < 0 || unit > 1)
    return bad_type(f, err, "invalid Date unit");
  f->format = copy_string(unit == 0 ? "tdD" : "tdm", 3);
  f->width = unit == 0 ? 4 : 8;
  return XCHG_OK;
}

static xchg_status parse_time(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t unit;
  int32_t bits;
  if (fb_i16(t, 0, 1, &unit) < 0 || fb_i32(t, 1, 32, &bits) < 0 || !time_unit_letter(unit))
    return bad_type(f, err, "invalid Time table");
  if (bits != (unit <= 1 ? 32 : 64))
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Time bitWidth %d does not suit unit %d",
                       f->path, bits, unit);
  f->format = format_string("tt%s", time_unit_letter(unit));
  f->width = bits / 8;
  return XCHG_OK;
}

static xchg_status parse_timestamp(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t unit;
  const char *tz = "";
  uint32_t tz_len = 0;
  if (fb_i16(t, 0, 0, &unit) < 0 || !time_unit_letter(unit) || fb_string(t, 1, &tz, &tz_len) < 0)
    return bad_type(f, err, "invalid Timestamp table");
  if (tz_len > 200) return bad_type(f, err, "Timestamp timezone longer than 200 bytes");
  f->format = format_string("ts%s:%.*s", time_unit_letter(unit), (int)tz_len, tz);
  f->width = 8;
  return XCHG_OK;
}

static xchg_status parse_duration(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t unit;
  if (fb_i16(t, 0, 1, &unit) < 0 || !time_unit_letter(unit))
    return bad_type(f, err, "invalid Duration unit");
  f->format = format_string("tD%s", time_unit_letter(unit));
  f->width = 8;
  return XCHG_OK;
}

static xchg_status parse_interval(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t unit;
  if (fb_i16(t, 0, 0, &unit) < 0 || unit < 0 || unit > 2)
    return bad_type(f, err, "invalid Interval unit");
  static const char *formats[] = {"tiM", "tiD", "tin"};
  static const int widths[] = {4, 8, 16};
  f->format = copy_string(formats[unit], 3);
  f->width = widths[unit];
  f->swap = unit == 0 ? IPC_SWAP_WHOLE : unit == 1 ? IPC_SWAP_INT32S : IPC_SWAP_MDN;
  return XCHG_OK;
}

static xchg_status parse_fixed_size_binary(ipc_field *f, const fb_table *t, xchg_error *err) {
  int32_t width;
  if (fb_i32(t, 0, 0, &width) < 0 || width < 0)
    return bad_type(f, err, "invalid FixedSizeBinary byteWidth");
  f->format = format_string("w:%d", width);
  f->width = width;
  return XCHG_OK;
}

static xchg_status parse_fixed_size_list(ipc_field *f, const fb_table *t, xchg_error *err) {
  if (fb_i32(t, 0, 0, &f->list_size) < 0 || f->list_size < 0)
    return bad_type(f, err, "invalid FixedSizeList listSize");
  f->format = format_string("+w:%d", f->list_size);
  return XCHG_OK;
}

static xchg_status parse_map(ipc_field *f, const fb_table *t, xchg_error *err) {
  uint8_t sorted;
  if (fb_u8(t, 0, 0, &sorted) < 0) return bad_type(f, err, "invalid Map table");
  f->keys_sorted = sorted != 0;
  f->format = copy_string("+m", 2);
  return XCHG_OK;
}

static xchg_status parse_union(ipc_field *f, const fb_table *t, xchg_error *err) {
  int16_t mode;
  fb_vector ids;
  int rc;
  if (fb_i16(t, 0, 0, &mode) < 0 || mode < 0 || mode > 1 ||
      (rc = fb_vector_field(t, 1, 4, &ids)) < 0)
    return bad_type(f, err, "invalid Union table");
  if (rc > 0 && ids.count != (uint64_t)f->n_children)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Union has %u typeIds for %lld children",
                       f->path, ids.count, (long long)f->n_children);
  f->union_dense = mode == 1;
  f->union_type_ids = calloc((size_t)f->n_children + 1, sizeof(int32_t));
  if (!f->union_type_ids) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  char list[128 * 4 + 1] = "";
  size_t len = 0;
  for (int64_t i = 0; i < f->n_children; i++) {
    int32_t id = rc > 0 ? (int32_t)fb_load_u32(fb_vector_elem(&ids, (uint32_t)i)) : (int32_t)i;
    if (id < 0 || id > 127)
      return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Union type id %d outside 0..127", f->path,
                         id);
    for (int64_t j = 0; j < i; j++)
      if (f->union_type_ids[j] == id)
        return xchg_errorf(err, XCHG_EFORMAT, "field '%s': Union type id %d repeated", f->path, id);
    f->union_type_ids[i] = id;
    len += (size_t)snprintf(list + len, sizeof list - len, i ? ",%d" : "%d", id);
  }
  f->format = format_string("+u%c:%s", f->union_dense ? 'd' : 's', list);
  return XCHG_OK;
}

/* Checks the number of children a type requires. */
static xchg_status check_children(const ipc_field *f, xchg_error *err) {
  int64_t want;
  switch (f->type) {
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_FIXED_SIZE_LIST:
    case IPC_MAP:
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: want = 1; break;
    case IPC_RUN_END_ENCODED: want = 2; break;
    case IPC_STRUCT:
    case IPC_UNION: return XCHG_OK;
    default: want = 0; break;
  }
  if (f->n_children != want)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s' (%s) has %lld children, needs %lld", f->path,
                       f->format, (long long)f->n_children, (long long)want);
  if (f->type == IPC_MAP) {
    const ipc_field *entries = &f->children[0];
    if (entries->type != IPC_STRUCT || entries->n_children != 2 || entries->dict_encoded)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "field '%s': a map's child must be a struct of key and value", f->path);
  }
  if (f->type == IPC_RUN_END_ENCODED) {
    const ipc_field *ends = &f->children[0];
    if (ends->type != IPC_INT || ends->dict_encoded || ends->width < 2 ||
        strchr("sil", ends->format[0]) == NULL)
      return xchg_errorf(err, XCHG_EFORMAT, "field '%s': run ends must be int16, int32 or int64",
                         f->path);
  }
  return XCHG_OK;
}

static const char *simple_format(ipc_type type) {
  switch (type) {
    case IPC_NULL: return "n";
    case IPC_BOOL: return "b";
    case IPC_BINARY: return "z";
    case IPC_UTF8: return "u";
    case IPC_LARGE_BINARY: return "Z";
    case IPC_LARGE_UTF8: return "U";
    case IPC_BINARY_VIEW: return "vz";
    case IPC_UTF8_VIEW: return "vu";
    case IPC_LIST: return "+l";
    case IPC_LARGE_LIST: return "+L";
    case IPC_LIST_VIEW: return "+vl";
    case IPC_LARGE_LIST_VIEW: return "+vL";
    case IPC_STRUCT: return "+s";
    case IPC_RUN_END_ENCODED: return "+r";
    default: return NULL;
  }
}

static xchg_status parse_type(ipc_field *f, const fb_table *t, xchg_error *err) {
  const char *simple = simple_format(f->type);
  if (simple) {
    f->format = copy_string(simple, strlen(simple));
  } else {
    xchg_status st;
    switch (f->type) {
      case IPC_INT: st = parse_int(f, t, err); break;
      case IPC_FLOAT: st = parse_float(f, t, err); break;
      case IPC_DECIMAL: st = parse_decimal(f, t, err); break;
      case IPC_DATE: st = parse_date(f, t, err); break;
      case IPC_TIME: st = parse_time(f, t, err); break;
      case IPC_TIMESTAMP: st = parse_timestamp(f, t, err); break;
      case IPC_DURATION: st = parse_duration(f, t, err); break;
      case IPC_INTERVAL: st = parse_interval(f, t, err); break;
      case IPC_FIXED_SIZE_BINARY: st = parse_fixed_size_binary(f, t, err); break;
      case IPC_FIXED_SIZE_LIST: st = parse_fixed_size_list(f, t, err); break;
      case IPC_MAP: st = parse_map(f, t, err); break;
      case IPC_UNION: st = parse_union(f, t, err); break;
      default:
        return xchg_errorf(err, XCHG_EFORMAT, "field '%s': unknown type %d", f->path, (int)f->type);
    }
    if (st != XCHG_OK) return st;
  }
  if (!f->format) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (f->swap == IPC_SWAP_NONE && f->width > 1 && f->type != IPC_FIXED_SIZE_BINARY)
    f->swap = IPC_SWAP_WHOLE;
  return check_children(f, err);
}

static xchg_status parse_dictionary(ipc_field *f, const fb_table *field, xchg_error *err) {
  fb_table dict, index;
  int rc = fb_table_field(field, FIELD_DICTIONARY, &dict);
  if (rc < 0) return bad_type(f, err, "invalid DictionaryEncoding table");
  if (rc == 0) return XCHG_OK;
  uint8_t ordered;
  int16_t kind;
  int32_t bits = 32;
  uint8_t is_signed = 1;
  if (fb_i64(&dict, DICT_ID, 0, &f->dict_id) < 0 || fb_u8(&dict, DICT_ORDERED, 0, &ordered) < 0 ||
      fb_i16(&dict, DICT_KIND, 0, &kind) < 0 ||
      (rc = fb_table_field(&dict, DICT_INDEX_TYPE, &index)) < 0 ||
      (rc > 0 && (fb_i32(&index, 0, 0, &bits) < 0 || fb_u8(&index, 1, 0, &is_signed) < 0)))
    return bad_type(f, err, "invalid DictionaryEncoding table");
  if (kind != 0) return bad_type(f, err, "unsupported dictionaryKind");
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': dictionary index bitWidth %d", f->path,
                       bits);
  f->dict_encoded = 1;
  f->dict_ordered = ordered != 0;
  f->index_width = bits / 8;
  f->index_signed = is_signed != 0;
  return XCHG_OK;
}

static xchg_status parse_field(const fb_table *t, const char *parent_path, int64_t index, int depth,
                               parse_ctx *ctx, ipc_field *f, xchg_error *err);

static xchg_status parse_children(const fb_vector *kids, const char *path, int depth,
                                  parse_ctx *ctx, ipc_field *f, xchg_error *err) {
  f->n_children = kids->count;
  if (kids->count == 0) return XCHG_OK;
  if (!(f->children = calloc(kids->count, sizeof(ipc_field))))
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %u fields", kids->count);
  for (uint32_t i = 0; i < kids->count; i++) {
    fb_table kid;
    if (fb_vector_table(kids, i, &kid) < 0)
      return *path ? xchg_errorf(err, XCHG_EFORMAT, "field '%s': invalid child %u", path, i)
                   : xchg_errorf(err, XCHG_EFORMAT, "invalid field %u", i); /* of the schema */
    xchg_status st = parse_field(&kid, path, i, depth + 1, ctx, &f->children[i], err);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

static xchg_status parse_field(const fb_table *t, const char *parent_path, int64_t index, int depth,
                               parse_ctx *ctx, ipc_field *f, xchg_error *err) {
  const char *name = "";
  uint32_t name_len = 0;
  uint8_t nullable, type_type;
  fb_table type;
  fb_vector kids;
  int has_type, has_kids;
  if (++ctx->n_fields > ctx->opts->max_fields)
    return xchg_errorf(err, XCHG_ELIMIT, "schema has more than %lld fields (max_fields)",
                       (long long)ctx->opts->max_fields);
  /* Named by its parent's path, or (a top-level field, its parent the
   * schema) by its index, as the name is not parsed yet. */
  if (depth > ctx->opts->max_depth)
    return *parent_path ? xchg_errorf(err, XCHG_ELIMIT,
                                      "field '%s' nests deeper than %lld levels (max_depth)",
                                      parent_path, (long long)ctx->opts->max_depth)
                        : xchg_errorf(err, XCHG_ELIMIT,
                                      "field %lld nests deeper than %lld levels (max_depth)",
                                      (long long)index, (long long)ctx->opts->max_depth);
  if (fb_string(t, FIELD_NAME, &name, &name_len) < 0)
    return *parent_path
               ? xchg_errorf(err, XCHG_EFORMAT, "field %lld of '%s': invalid name",
                             (long long)index, parent_path)
               : xchg_errorf(err, XCHG_EFORMAT, "field %lld: invalid name", (long long)index);
  f->name = copy_string(name, name_len);
  f->path = *parent_path ? format_string("%s.%.*s", parent_path, (int)name_len, name)
                         : copy_string(name, name_len);
  if (!f->name || !f->path) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (fb_u8(t, FIELD_NULLABLE, 0, &nullable) < 0 || fb_u8(t, FIELD_TYPE_TYPE, 0, &type_type) < 0 ||
      (has_type = fb_table_field(t, FIELD_TYPE, &type)) < 0 ||
      (has_kids = fb_vector_field(t, FIELD_CHILDREN, 4, &kids)) < 0)
    return bad_type(f, err, "invalid Field table");
  f->nullable = nullable != 0;
  f->type = (ipc_type)type_type;
  if (type_type < IPC_NULL || type_type > IPC_LARGE_LIST_VIEW)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': unknown type %d", f->path, type_type);
  xchg_status st =
      ipc_metadata_parse(t, FIELD_METADATA, &f->metadata, &f->metadata_size, f->path, err);
  if (st == XCHG_OK && has_kids) st = parse_children(&kids, f->path, depth, ctx, f, err);
  if (st == XCHG_OK) st = parse_type(f, has_type ? &type : &empty_table, err);
  if (st == XCHG_OK) st = parse_dictionary(f, t, err);
  return st;
}

static void field_free(ipc_field *f) {
  for (int64_t i = 0; i < f->n_children && f->children; i++) field_free(&f->children[i]);
  free(f->children);
  free(f->name);
  free(f->path);
  free(f->format);
  free(f->metadata);
  free(f->union_type_ids);
}

void ipc_schema_free(ipc_schema *schema) {
  field_free(&schema->root);
  free(schema->metadata);
  memset(schema, 0, sizeof *schema);
}

xchg_status ipc_schema_parse(const fb_table *t, const xchg_ipc_read_options *opts, ipc_schema *out,
                             xchg_error *err) {
  memset(out, 0, sizeof *out);
  parse_ctx ctx = {opts, 0};
  int16_t endianness;
  fb_vector fields;
  int has_fields;
  if (fb_i16(t, SCHEMA_ENDIANNESS, 0, &endianness) < 0 || endianness < 0 || endianness > 1 ||
      (has_fields = fb_vector_field(t, SCHEMA_FIELDS, 4, &fields)) < 0)
    return xchg_errorf(err, XCHG_EFORMAT, "invalid Schema table");
  out->big_endian = endianness == 1;
  out->root.type = IPC_STRUCT;
  xchg_status st = XCHG_OK;
  if (!(out->root.name = copy_string("", 0)) || !(out->root.path = copy_string("", 0)) ||
      !(out->root.format = copy_string("+s", 2)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st == XCHG_OK && has_fields) st = parse_children(&fields, "", 0, &ctx, &out->root, err);
  if (st == XCHG_OK)
    st = ipc_metadata_parse(t, SCHEMA_METADATA, &out->metadata, &out->metadata_size, "schema", err);
  if (st != XCHG_OK) ipc_schema_free(out);
  return st;
}

/* ---- ArrowSchema export ---------------------------------------------- */

static void release_node(struct ArrowSchema *s) {
  ipc_schema_node *p = s->private_data;
  IPC_RELEASE_CHILDREN_AND_DICTIONARY(s);
  free(p->format);
  free(p->name);
  free(p->metadata);
  free(p->children);
  free(p->child_structs);
  free(p);
  s->release = NULL;
}

static char *copy_metadata(const char *m, size_t n) {
  if (!m) return NULL;
  char *out = malloc(n);
  if (out) memcpy(out, m, n);
  return out;
}

ipc_schema_node *ipc_schema_node_make(struct ArrowSchema *out, const char *format, const char *name,
                                      const char *metadata, size_t metadata_size,
                                      int64_t n_children) {
  memset(out, 0, sizeof *out);
  ipc_schema_node *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  out->private_data = p;
  out->release = release_node;
  p->format = copy_string(format, strlen(format));
  p->name = name ? copy_string(name, strlen(name)) : NULL;
  p->metadata = copy_metadata(metadata, metadata_size);
  if (n_children > 0) {
    p->children = calloc((size_t)n_children, sizeof *p->children);
    p->child_structs = calloc((size_t)n_children, sizeof *p->child_structs);
  }
  if (!p->format || (name && !p->name) || (metadata && !p->metadata) ||
      (n_children > 0 && (!p->children || !p->child_structs))) {
    release_node(out);
    return NULL;
  }
  for (int64_t i = 0; i < n_children; i++) p->children[i] = &p->child_structs[i];
  out->format = p->format;
  out->name = p->name;
  out->metadata = p->metadata;
  out->children = p->children;
  return p;
}

/* Exports one node: either the value type of f, or (as_index) the
 * dictionary indices with the value type as its dictionary. */
static xchg_status export_node(const ipc_field *f, int as_index, struct ArrowSchema *out,
                               xchg_error *err);

static xchg_status export_children(const ipc_field *f, struct ArrowSchema *out, xchg_error *err) {
  for (int64_t i = 0, k = 0; i < f->n_children; i++) {
    if (f->children[i].skip) continue;
    out->n_children = k + 1;
    xchg_status st =
        export_node(&f->children[i], f->children[i].dict_encoded, out->children[k++], err);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

static const char *index_format(const ipc_field *f) {
  static const char *formats[2][4] = {{"C", "S", "I", "L"}, {"c", "s", "i", "l"}};
  int idx = f->index_width == 1 ? 0 : f->index_width == 2 ? 1 : f->index_width == 4 ? 2 : 3;
  return formats[f->index_signed][idx];
}

static xchg_status export_node(const ipc_field *f, int as_index, struct ArrowSchema *out,
                               xchg_error *err) {
  /* A dictionary's values carry no metadata: the field's stays with its
   * indices; and only the values have children. */
  int values_of_dictionary = !as_index && f->dict_encoded;
  ipc_schema_node *p = ipc_schema_node_make(out, as_index ? index_format(f) : f->format, f->name,
                                            values_of_dictionary ? NULL : f->metadata,
                                            f->metadata_size, as_index ? 0 : f->n_children);
  if (!p) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (as_index) {
    out->flags = (f->nullable ? ARROW_FLAG_NULLABLE : 0) |
                 (f->dict_ordered ? ARROW_FLAG_DICTIONARY_ORDERED : 0);
    out->dictionary = &p->dictionary;
    return export_node(f, 0, &p->dictionary, err);
  }
  out->flags = (f->keys_sorted ? ARROW_FLAG_MAP_KEYS_SORTED : 0) |
               (f->nullable || values_of_dictionary ? ARROW_FLAG_NULLABLE : 0);
  return export_children(f, out, err);
}

xchg_status ipc_field_export(const ipc_field *field, struct ArrowSchema *out, xchg_error *err) {
  xchg_status st = export_node(field, field->dict_encoded, out, err);
  if (st != XCHG_OK && out->release) out->release(out);
  return st;
}

xchg_status ipc_schema_export(const ipc_schema *schema, struct ArrowSchema *out, xchg_error *err) {
  xchg_status st = ipc_field_export(&schema->root, out, err);
  if (st != XCHG_OK || !schema->metadata) return st;
  ipc_schema_node *p = out->private_data;
  if (!(p->metadata = copy_metadata(schema->metadata, schema->metadata_size))) {
    out->release(out);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  out->metadata = p->metadata;
  return XCHG_OK;
}

/* ---- comparison and traversal ---------------------------------------- */

/* "column 2 \"c2\"" for a top-level field, "field \"c2.a.b\" of column 2"
 * below it; the root (column -1) is the schema itself. */
static void field_label(const ipc_field *f, int64_t column, int top_level, char *out, size_t size) {
  if (column < 0)
    snprintf(out, size, "the schema");
  else if (top_level)
    snprintf(out, size, "column %lld \"%s\"", (long long)column, f->name);
  else
    snprintf(out, size, "field \"%s\" of column %lld", f->path, (long long)column);
}

static const char *yes_no(int v, const char *yes, const char *no) { return v ? yes : no; }

/* The number of key/value pairs of metadata in the ArrowSchema.metadata
 * encoding (NULL has none). */
static int32_t metadata_pairs(const char *metadata, size_t size) {
  int32_t n = 0;
  if (metadata && size >= 4) memcpy(&n, metadata, 4);
  return n;
}

/* The same pairs in the same order; no metadata and none at all alike. */
static int metadata_equal(const char *a, size_t a_size, const char *b, size_t b_size) {
  if (metadata_pairs(a, a_size) == 0 || metadata_pairs(b, b_size) == 0)
    return metadata_pairs(a, a_size) == metadata_pairs(b, b_size);
  return a_size == b_size && memcmp(a, b, a_size) == 0;
}

typedef struct comparison {
  const char *a_where, *b_where; /* "in the footer", "here" */
  ipc_metadata_rule metadata;
  xchg_error *err;
} comparison;

/* "type int64 in A, utf8 in B"; the C Data Interface formats where the
 * names are alike (unions of other type ids) or one is unknown. */
static void type_difference(const char *a, const char *b, const char *label, const comparison *c) {
  ipc_schema_view va, vb;
  char na[256], nb[256];
  if (ipc_schema_view_parse(a, &va, NULL) == XCHG_OK &&
      ipc_schema_view_parse(b, &vb, NULL) == XCHG_OK &&
      strcmp(ipc_schema_view_name(&va, na, sizeof na), ipc_schema_view_name(&vb, nb, sizeof nb)) !=
          0)
    xchg_errorf(c->err, XCHG_EFORMAT, "%s: type %s %s, %s %s", label, na, c->a_where, nb,
                c->b_where);
  else
    xchg_errorf(c->err, XCHG_EFORMAT, "%s: type \"%s\" %s, \"%s\" %s (C Data Interface formats)",
                label, a, c->a_where, b, c->b_where);
}

/* What of one field (not of its children) differs between a and b, said in
 * c->err after label; 0 when something does. */
static int node_equal(const ipc_field *a, const ipc_field *b, const char *label,
                      const comparison *c) {
  const char *an = c->a_where, *bn = c->b_where;
  xchg_error *err = c->err;
  if (strcmp(a->name, b->name) != 0)
    xchg_errorf(err, XCHG_EFORMAT, "%s: named \"%s\" %s, \"%s\" %s", label, a->name, an, b->name,
                bn);
  else if (strcmp(a->format, b->format) != 0)
    type_difference(a->format, b->format, label, c);
  else if (a->nullable != b->nullable)
    xchg_errorf(err, XCHG_EFORMAT, "%s: %s %s, %s %s", label,
                yes_no(a->nullable, "nullable", "not null"), an,
                yes_no(b->nullable, "nullable", "not null"), bn);
  else if (a->dict_encoded != b->dict_encoded)
    xchg_errorf(err, XCHG_EFORMAT, "%s: %s %s, %s %s", label,
                yes_no(a->dict_encoded, "dictionary-encoded", "not dictionary-encoded"), an,
                yes_no(b->dict_encoded, "dictionary-encoded", "not dictionary-encoded"), bn);
  else if (a->dict_encoded &&
           (a->index_width != b->index_width || a->index_signed != b->index_signed))
    xchg_errorf(err, XCHG_EFORMAT, "%s: dictionary indices %sint%d %s, %sint%d %s", label,
                a->index_signed ? "" : "u", 8 * a->index_width, an, b->index_signed ? "" : "u",
                8 * b->index_width, bn);
  else if (a->dict_encoded && a->dict_ordered != b->dict_ordered)
    xchg_errorf(err, XCHG_EFORMAT, "%s: dictionary %s %s, %s %s", label,
                yes_no(a->dict_ordered, "ordered", "unordered"), an,
                yes_no(b->dict_ordered, "ordered", "unordered"), bn);
  else if (a->keys_sorted != b->keys_sorted)
    xchg_errorf(err, XCHG_EFORMAT, "%s: map keys %s %s, %s %s", label,
                yes_no(a->keys_sorted, "sorted", "unsorted"), an,
                yes_no(b->keys_sorted, "sorted", "unsorted"), bn);
  else if (a->n_children != b->n_children)
    xchg_errorf(err, XCHG_EFORMAT, "%s: %lld child field%s %s, %lld %s", label,
                (long long)a->n_children, a->n_children == 1 ? "" : "s", an,
                (long long)b->n_children, bn);
  else if (c->metadata == IPC_METADATA_COMPARED &&
           !metadata_equal(a->metadata, a->metadata_size, b->metadata, b->metadata_size))
    xchg_errorf(err, XCHG_EFORMAT, "%s: its metadata differs", label);
  else
    return 1;
  return 0;
}

/* Describes the first difference between a and b in c->err; 0 when there
 * is one.  Dictionary ids come last: where the fields below differ, an id
 * numbered after them differs too, and they are the difference to name. */
static int field_equal(const ipc_field *a, const ipc_field *b, int64_t column, int top_level,
                       const comparison *c) {
  char label[600];
  field_label(a, column, top_level, label, sizeof label);
  if (!node_equal(a, b, label, c)) return 0;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!field_equal(&a->children[i], &b->children[i], column < 0 ? i : column, column < 0, c))
      return 0;
  if (a->dict_encoded && a->dict_id != b->dict_id) {
    xchg_errorf(c->err, XCHG_EFORMAT, "%s: dictionary id %lld %s, %lld %s", label,
                (long long)a->dict_id, c->a_where, (long long)b->dict_id, c->b_where);
    return 0;
  }
  return 1;
}

int ipc_schema_equal(const ipc_schema *a, const char *a_where, const ipc_schema *b,
                     const char *b_where, ipc_metadata_rule metadata, xchg_error *err) {
  comparison c = {a_where, b_where, metadata, err};
  if (a->big_endian != b->big_endian) {
    xchg_errorf(err, XCHG_EFORMAT, "%s-endian %s, %s-endian %s", a->big_endian ? "big" : "little",
                a_where, b->big_endian ? "big" : "little", b_where);
    return 0;
  }
  if (a->root.n_children != b->root.n_children) {
    xchg_errorf(err, XCHG_EFORMAT, "%lld column%s %s, %lld %s", (long long)a->root.n_children,
                a->root.n_children == 1 ? "" : "s", a_where, (long long)b->root.n_children,
                b_where);
    return 0;
  }
  if (metadata == IPC_METADATA_COMPARED &&
      !metadata_equal(a->metadata, a->metadata_size, b->metadata, b->metadata_size)) {
    xchg_errorf(err, XCHG_EFORMAT, "the schema's metadata differs");
    return 0;
  }
  return field_equal(&a->root, &b->root, -1, 0, &c);
}

xchg_status ipc_arrow_schema_equal(const struct ArrowSchema *a, const char *a_where,
                                   const struct ArrowSchema *b, const char *b_where,
                                   ipc_metadata_rule metadata, int *equal, xchg_error *err) {
  ipc_schema sa, sb;
  xchg_status st = ipc_schema_import(a, NULL, 0, &sa, err);
  if (st != XCHG_OK) return st;
  if ((st = ipc_schema_import(b, NULL, 0, &sb, err)) == XCHG_OK) {
    *equal = ipc_schema_equal(&sa, a_where, &sb, b_where, metadata, err);
    ipc_schema_free(&sb);
  }
  ipc_schema_free(&sa);
  return st;
}

static xchg_status visit(const ipc_field *f, int selected_only, ipc_field_visit_fn fn, void *ctx,
                         xchg_error *err) {
  for (int64_t i = 0; i < f->n_children; i++) {
    if (selected_only && f->children[i].skip) continue;
    xchg_status st = visit(&f->children[i], selected_only, fn, ctx, err);
    if (st != XCHG_OK) return st;
  }
  return f->dict_encoded ? fn(ctx, f, err) : XCHG_OK;
}

xchg_status ipc_schema_visit_dictionaries(const ipc_schema *schema, int selected_only,
                                          ipc_field_visit_fn fn, void *ctx, xchg_error *err) {
  return visit(&schema->root, selected_only, fn, ctx, err);
}

static void collect_ids(const ipc_field *f, int64_t *ids, int64_t capacity, int64_t *n) {
  if (f->dict_encoded) {
    if (*n < capacity) ids[*n] = f->dict_id;
    ++*n;
  }
  for (int64_t i = 0; i < f->n_children; i++)
    if (!f->children[i].skip) collect_ids(&f->children[i], ids, capacity, n);
}

int64_t ipc_schema_dictionary_ids(const ipc_schema *schema, int64_t *ids, int64_t capacity) {
  int64_t n = 0;
  for (int64_t i = 0; i < schema->root.n_children; i++)
    if (!schema->root.children[i].skip) collect_ids(&schema->root.children[i], ids, capacity, &n);
  return n;
}

/* ---- selection ---------------------------------------------------------- */

static void set_skip(ipc_field *f, int skip) {
  f->skip = skip;
  for (int64_t i = 0; i < f->n_children; i++) set_skip(&f->children[i], skip);
}

static void skip_all_columns(ipc_schema *schema) {
  for (int64_t i = 0; i < schema->root.n_children; i++) set_skip(&schema->root.children[i], 1);
}

/* The child of f named name[0..len), or NULL; *other is a second child of
 * that name, when there is one. */
static ipc_field *child_named(ipc_field *f, const char *name, size_t len, ipc_field **other) {
  ipc_field *found = NULL;
  *other = NULL;
  for (int64_t i = 0; i < f->n_children && !*other; i++)
    if (strlen(f->children[i].name) == len && memcmp(f->children[i].name, name, len) == 0) {
      if (found)
        *other = &f->children[i];
      else
        found = &f->children[i];
    }
  return found;
}

/* Follows a dotted path; with apply set, selects what it names.  Only a
 * struct can be decoded in part: past anything else (a list, a map, a
 * union, a dictionary-encoded field) the field is selected whole, and the
 * rest of the path must still name fields under it (a misspelt name is an
 * error, not the whole column). */
static xchg_status select_path(ipc_schema *schema, const char *path, int apply, xchg_error *err) {
  ipc_field *node = &schema->root, *whole = NULL;
  const char *part = path;
  for (;;) {
    const char *dot = strchr(part, '.');
    size_t len = dot ? (size_t)(dot - part) : strlen(part);
    ipc_field *other;
    ipc_field *child = child_named(node, part, len, &other);
    const char *where = node == &schema->root ? "the schema" : node->path;
    if (!child)
      return xchg_errorf(err, XCHG_EINVAL, "no field '%.*s' in %s (selecting '%s')", (int)len, part,
                         where, path);
    /* A silent first match could give the wrong column. */
    if (other)
      return xchg_errorf(err, XCHG_EINVAL,
                         "field name '%.*s' is ambiguous in %s: fields %lld and %lld both have it "
                         "(selecting '%s'; select columns by index instead)",
                         (int)len, part, where, (long long)(child - node->children),
                         (long long)(other - node->children), path);
    if (apply && !whole) child->skip = 0;
    node = child;
    if (!dot) break;
    if (!whole && (node->type != IPC_STRUCT || node->dict_encoded)) whole = node;
    part = dot + 1;
  }
  if (apply) set_skip(whole ? whole : node, 0); /* the field named last comes whole */
  return XCHG_OK;
}

xchg_status ipc_schema_select_paths(ipc_schema *schema, const char *const *paths, int64_t n,
                                    xchg_error *err) {
  for (int64_t i = 0; i < n; i++) {
    xchg_status st = select_path(schema, paths[i], 0, err);
    if (st != XCHG_OK) return st;
  }
  skip_all_columns(schema);
  for (int64_t i = 0; i < n; i++) select_path(schema, paths[i], 1, err);
  return XCHG_OK;
}

xchg_status ipc_schema_select_indices(ipc_schema *schema, const int64_t *indices, int64_t n,
                                      xchg_error *err) {
  for (int64_t i = 0; i < n; i++)
    if (indices[i] < 0 || indices[i] >= schema->root.n_children)
      return xchg_errorf(err, XCHG_EINVAL, "column index %lld: the schema has %lld columns",
                         (long long)indices[i], (long long)schema->root.n_children);
  skip_all_columns(schema);
  for (int64_t i = 0; i < n; i++) set_skip(&schema->root.children[indices[i]], 0);
  return XCHG_OK;
}
