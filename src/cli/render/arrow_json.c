/* arrow_json.c — Arrow integration JSON: schema, batches, dictionaries. */
#include "cli/render/arrow_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render/values.h"

static void put_string(xs *s, const char *text) {
  xv_json_string(s, (const uint8_t *)text, (int64_t)strlen(text));
}

/* ---- schema ---------------------------------------------------------------- */

static const char *unit_name(ipc_unit unit) {
  switch (unit) {
    case IPC_UNIT_SECOND: return "SECOND";
    case IPC_UNIT_MILLI: return "MILLISECOND";
    case IPC_UNIT_MICRO: return "MICROSECOND";
    case IPC_UNIT_NANO: return "NANOSECOND";
    case IPC_UNIT_DAY: return "DAY";
  }
  return "?";
}

static void type_primitive(xs *s, const ipc_schema_view *t) {
  static const char *const interval_units[] = {"YEAR_MONTH", "DAY_TIME", "MONTH_DAY_NANO"};
  switch (t->kind) {
    case IPC_KIND_NULL: xs_puts(s, "{\"name\":\"null\"}"); return;
    case IPC_KIND_BOOL: xs_puts(s, "{\"name\":\"bool\"}"); return;
    case IPC_KIND_INT:
      xs_printf(s, "{\"name\":\"int\",\"isSigned\":%s,\"bitWidth\":%d}",
                t->is_signed ? "true" : "false", t->bit_width);
      return;
    case IPC_KIND_FLOAT:
      xs_printf(s, "{\"name\":\"floatingpoint\",\"precision\":\"%s\"}",
                t->bit_width == 16   ? "HALF"
                : t->bit_width == 32 ? "SINGLE"
                                     : "DOUBLE");
      return;
    case IPC_KIND_DECIMAL:
      xs_printf(s, "{\"name\":\"decimal\",\"precision\":%d,\"scale\":%d,\"bitWidth\":%d}",
                t->precision, t->scale, t->bit_width);
      return;
    case IPC_KIND_FIXED_BINARY:
      xs_printf(s, "{\"name\":\"fixedsizebinary\",\"byteWidth\":%lld}", (long long)t->width);
      return;
    case IPC_KIND_BINARY:
      xs_printf(s, "{\"name\":\"%s%s\"}", t->large ? "large" : "", t->utf8 ? "utf8" : "binary");
      return;
    case IPC_KIND_BINARY_VIEW:
      xs_printf(s, "{\"name\":\"%s\"}", t->utf8 ? "utf8view" : "binaryview");
      return;
    case IPC_KIND_DATE:
      xs_printf(s, "{\"name\":\"date\",\"unit\":\"%s\"}", unit_name(t->unit));
      return;
    case IPC_KIND_TIME:
      xs_printf(s, "{\"name\":\"time\",\"unit\":\"%s\",\"bitWidth\":%d}", unit_name(t->unit),
                t->bit_width);
      return;
    case IPC_KIND_TIMESTAMP:
      xs_printf(s, "{\"name\":\"timestamp\",\"unit\":\"%s\"", unit_name(t->unit));
      if (t->tz[0] != '\0') {
        xs_puts(s, ",\"timezone\":");
        put_string(s, t->tz);
      }
      xs_putc(s, '}');
      return;
    case IPC_KIND_DURATION:
      xs_printf(s, "{\"name\":\"duration\",\"unit\":\"%s\"}", unit_name(t->unit));
      return;
    case IPC_KIND_INTERVAL:
      xs_printf(s, "{\"name\":\"interval\",\"unit\":\"%s\"}", interval_units[t->interval]);
      return;
    default: return;
  }
}

static void type_json(xs *s, const xc_node *n) {
  const ipc_schema_view *t = &n->type;
  switch (t->kind) {
    case IPC_KIND_LIST: xs_printf(s, "{\"name\":\"%slist\"}", t->large ? "large" : ""); return;
    case IPC_KIND_LIST_VIEW:
      xs_printf(s, "{\"name\":\"%slistview\"}", t->large ? "large" : "");
      return;
    case IPC_KIND_FIXED_LIST:
      xs_printf(s, "{\"name\":\"fixedsizelist\",\"listSize\":%lld}", (long long)t->width);
      return;
    case IPC_KIND_STRUCT: xs_puts(s, "{\"name\":\"struct\"}"); return;
    case IPC_KIND_MAP:
      xs_printf(s, "{\"name\":\"map\",\"keysSorted\":%s}",
                (n->schema->flags & ARROW_FLAG_MAP_KEYS_SORTED) ? "true" : "false");
      return;
    case IPC_KIND_RUN_END: xs_puts(s, "{\"name\":\"runendencoded\"}"); return;
    case IPC_KIND_UNION:
      xs_printf(s, "{\"name\":\"union\",\"mode\":\"%s\",\"typeIds\":[",
                t->dense ? "DENSE" : "SPARSE");
      for (int k = 0; k < t->n_type_ids; k++) xs_printf(s, k ? ",%d" : "%d", t->type_ids[k]);
      xs_puts(s, "]}");
      return;
    default: type_primitive(s, t); return;
  }
}

static void metadata_json(xs *s, const char *metadata) {
  xc_meta_iter it;
  const char *key, *value;
  int32_t key_len, value_len;
  bool first = true;
  xc_meta_begin(&it, metadata);
  xs_putc(s, '[');
  while (xc_meta_next(&it, &key, &key_len, &value, &value_len)) {
    xs_puts(s, first ? "{\"key\":" : ",{\"key\":");
    xv_json_string(s, (const uint8_t *)key, key_len);
    xs_puts(s, ",\"value\":");
    xv_json_string(s, (const uint8_t *)value, value_len);
    xs_putc(s, '}');
    first = false;
  }
  xs_putc(s, ']');
}

static bool has_metadata(const char *metadata) {
  xc_meta_iter it;
  xc_meta_begin(&it, metadata);
  return it.remaining > 0;
}

/* A dictionary-encoded field shows its value type, and the index type
 * under "dictionary". */
static void field_json(xs *s, const xc_node *n) {
  const xc_node *values = n->dictionary ? n->dictionary : n;
  xs_puts(s, "{\"name\":");
  put_string(s, n->schema->name ? n->schema->name : "");
  xs_printf(
      s, ",\"nullable\":%s,\"type\":", (n->schema->flags & ARROW_FLAG_NULLABLE) ? "true" : "false");
  type_json(s, values);
  xs_puts(s, ",\"children\":[");
  for (int64_t c = 0; c < values->n_children; c++) {
    if (c > 0) xs_putc(s, ',');
    field_json(s, &values->children[c]);
  }
  xs_putc(s, ']');
  if (n->dictionary != NULL) {
    xs_printf(s, ",\"dictionary\":{\"id\":%lld,\"indexType\":", (long long)n->dict_id);
    type_json(s, n);
    xs_printf(s, ",\"isOrdered\":%s}",
              (n->schema->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? "true" : "false");
  }
  if (has_metadata(n->schema->metadata)) {
    xs_puts(s, ",\"metadata\":");
    metadata_json(s, n->schema->metadata);
  }
  xs_putc(s, '}');
}

/* ---- column data --------------------------------------------------------------- */

/* One element of DATA, encoded as the integration format wants it. */
static void data_element(xs *s, const xc_node *n, int64_t i) {
  const ipc_schema_view *t = &n->type;
  switch (t->kind) {
    case IPC_KIND_INT:
    case IPC_KIND_DATE:
    case IPC_KIND_TIME:
    case IPC_KIND_TIMESTAMP:
    case IPC_KIND_DURATION: {
      bool quoted = t->bit_width == 64; /* beyond what a double holds exactly */
      if (quoted) xs_putc(s, '"');
      if (t->kind == IPC_KIND_INT && !t->is_signed)
        xv_u64(s, xc_read_uint(n, 1, i, t->bit_width));
      else
        xv_i64(s, xc_read_int(n, 1, i, t->bit_width));
      if (quoted) xs_putc(s, '"');
      return;
    }
    case IPC_KIND_FLOAT:
      if (t->bit_width == 16) { /* the bits as an integer, as Arrow's readers take half floats */
        xv_u64(s, xc_read_uint(n, 1, i, 16));
        return;
      }
      xv_scalar(s, n, i, true);
      return;
    case IPC_KIND_DECIMAL:
      xs_putc(s, '"');
      xv_decimal(s, xc_fixed(n, 1, i, t->bit_width / 8), t->bit_width / 8, 0);
      xs_putc(s, '"');
      return;
    case IPC_KIND_INTERVAL: {
      int32_t a, b;
      int64_t c;
      if (t->interval == IPC_INTERVAL_YEAR_MONTH) {
        xv_i64(s, xc_read_int(n, 1, i, 32));
        return;
      }
      const uint8_t *p = xc_fixed(n, 1, i, t->interval == IPC_INTERVAL_DAY_TIME ? 8 : 16);
      memcpy(&a, p, 4);
      memcpy(&b, p + 4, 4);
      if (t->interval == IPC_INTERVAL_DAY_TIME) {
        xs_printf(s, "{\"days\":%d,\"milliseconds\":%d}", a, b);
        return;
      }
      memcpy(&c, p + 8, 8);
      xs_printf(s, "{\"months\":%d,\"days\":%d,\"nanoseconds\":%lld}", a, b, (long long)c);
      return;
    }
    default: xv_scalar(s, n, i, true); return; /* bool, float, binary, utf8 */
  }
}

static void validity_json(xs *s, const xc_node *n, int64_t start, int64_t count) {
  xs_puts(s, ",\"VALIDITY\":[");
  for (int64_t k = 0; k < count; k++)
    xs_puts(s, k == 0 ? (xc_is_valid(n, start) ? "1" : "0")
                      : (xc_is_valid(n, start + k) ? ",1" : ",0"));
  xs_putc(s, ']');
}

static void data_json(xs *s, const xc_node *n, int64_t start, int64_t count) {
  xs_puts(s, ",\"DATA\":[");
  for (int64_t k = 0; k < count; k++) {
    if (k > 0) xs_putc(s, ',');
    data_element(s, n, start + k);
    xs_maybe_flush(s);
  }
  xs_putc(s, ']');
}

/* OFFSET entries start..start+count (count+1 of them), or count of them
 * for list views, where each element has its own offset. */
static void offsets_json(xs *s, const char *key, const xc_node *n, int b, int64_t start,
                         int64_t count) {
  xs_printf(s, ",\"%s\":[", key);
  for (int64_t k = 0; k < count; k++) {
    if (k > 0) xs_putc(s, ',');
    int64_t v =
        b == 1 ? xc_offset(n, start + k) : xc_read_int(n, b, start + k, n->type.large ? 64 : 32);
    xs_printf(s, n->type.large ? "\"%lld\"" : "%lld", (long long)v);
  }
  xs_putc(s, ']');
}

static void type_ids_json(xs *s, const xc_node *n, int64_t start, int64_t count) {
  xs_puts(s, ",\"TYPE_ID\":[");
  for (int64_t k = 0; k < count; k++)
    xs_printf(s, k ? ",%d" : "%d", (int)xc_read_int(n, 0, start + k, 8));
  xs_putc(s, ']');
}

static void view_json(xs *s, const xc_node *n, int64_t i) {
  int64_t size;
  const uint8_t *bytes = xc_binary(n, i, &size);
  if (!xc_is_valid(n, i) || size <= 12) { /* a null's view may be garbage: show it empty */
    if (!xc_is_valid(n, i)) size = 0;
    xs_printf(s, "{\"SIZE\":%lld,\"INLINED\":", (long long)size);
    if (n->type.utf8) {
      xv_json_string(s, bytes, size);
    } else {
      xs_putc(s, '"');
      xv_hex(s, bytes, size);
      xs_putc(s, '"');
    }
    xs_putc(s, '}');
    return;
  }
  const uint8_t *view = xc_fixed(n, 1, i, 16);
  int32_t buffer_index, offset;
  memcpy(&buffer_index, view + 8, 4);
  memcpy(&offset, view + 12, 4);
  xs_printf(s, "{\"SIZE\":%lld,\"PREFIX_HEX\":\"", (long long)size);
  xv_hex(s, view + 4, 4);
  xs_printf(s, "\",\"BUFFER_INDEX\":%d,\"OFFSET\":%d}", buffer_index, offset);
}

static void views_json(xs *s, const xc_node *n, int64_t start, int64_t count) {
  xs_puts(s, ",\"VIEWS\":[");
  for (int64_t k = 0; k < count; k++) {
    if (k > 0) xs_putc(s, ',');
    view_json(s, n, start + k);
  }
  xs_puts(s, "],\"VARIADIC_DATA_BUFFERS\":[");
  for (int64_t b = 0; b < xc_view_buffer_count(n); b++) {
    const uint8_t *data = n->array->buffers[2 + b];
    xs_puts(s, b ? ",\"" : "\"");
    if (data != NULL) xv_hex(s, data, xc_view_buffer_size(n, b));
    xs_putc(s, '"');
    xs_maybe_flush(s);
  }
  xs_putc(s, ']');
}

static void column_json(xs *s, const xc_node *n, const char *name, int64_t start, int64_t count);

static void children_json(xs *s, const xc_node *n, int64_t start, int64_t count) {
  int64_t first = 0, length = -1; /* child range; -1: the whole child */
  switch (n->type.kind) {
    case IPC_KIND_STRUCT:
    case IPC_KIND_UNION:
      if (n->type.kind == IPC_KIND_STRUCT || !n->type.dense) {
        first = n->array->offset + start;
        length = count;
      }
      break;
    case IPC_KIND_LIST:
    case IPC_KIND_MAP: length = xc_offset(n, start + count); break; /* offsets index the child */
    case IPC_KIND_FIXED_LIST:
      first = (n->array->offset + start) * n->type.width;
      length = count * n->type.width;
      break;
    default: break;
  }
  xs_puts(s, ",\"children\":[");
  for (int64_t c = 0; c < n->n_children; c++) {
    const xc_node *child = &n->children[c];
    if (c > 0) xs_putc(s, ',');
    int64_t n_rows = length < 0 ? child->array->length : length;
    if (first > child->array->length - n_rows) /* offsets the reader should have rejected */
      n_rows = first < child->array->length ? child->array->length - first : 0;
    column_json(s, child, NULL, first, n_rows);
  }
  xs_putc(s, ']');
}

static void buffers_json(xs *s, const xc_node *n, int64_t start, int64_t count) {
  switch (n->type.kind) {
    case IPC_KIND_NULL:
    case IPC_KIND_RUN_END: return;
    case IPC_KIND_UNION:
      type_ids_json(s, n, start, count);
      if (n->type.dense) offsets_json(s, "OFFSET", n, 1, start, count);
      return;
    case IPC_KIND_STRUCT:
    case IPC_KIND_FIXED_LIST: validity_json(s, n, start, count); return;
    case IPC_KIND_LIST:
    case IPC_KIND_MAP:
      validity_json(s, n, start, count);
      offsets_json(s, "OFFSET", n, 1, start, count + 1);
      return;
    case IPC_KIND_LIST_VIEW:
      validity_json(s, n, start, count);
      offsets_json(s, "OFFSET", n, 1, start, count);
      offsets_json(s, "SIZE", n, 2, start, count);
      return;
    case IPC_KIND_BINARY:
      validity_json(s, n, start, count);
      offsets_json(s, "OFFSET", n, 1, start, count + 1);
      data_json(s, n, start, count);
      return;
    case IPC_KIND_BINARY_VIEW:
      validity_json(s, n, start, count);
      views_json(s, n, start, count);
      return;
    default:
      validity_json(s, n, start, count);
      data_json(s, n, start, count);
      return;
  }
}

/* Elements start..start+count of n (logical indices); name overrides the
 * field name (dictionary batches). */
static void column_json(xs *s, const xc_node *n, const char *name, int64_t start, int64_t count) {
  xs_puts(s, "{\"name\":");
  put_string(s, name ? name : n->schema->name ? n->schema->name : "");
  xs_printf(s, ",\"count\":%lld", (long long)count);
  if (n->dictionary != NULL) { /* the indices */
    validity_json(s, n, start, count);
    data_json(s, n, start, count);
  } else {
    buffers_json(s, n, start, count);
    if (n->n_children > 0) children_json(s, n, start, count);
  }
  xs_putc(s, '}');
  xs_maybe_flush(s);
}

/* ---- dictionaries ------------------------------------------------------------------ */

/* Where the dictionary with this id is kept, or -1.  A schema has few
 * dictionaries: a linear search is enough. */
static int64_t dictionary_slot(const xc_arrow_json *w, int64_t id) {
  for (int64_t d = 0; d < w->n_dictionaries; d++)
    if (w->ids[d] == id) return d;
  return -1;
}

/* Renders the dictionaries a batch uses.  When a dictionary message
 * replaced one since the last batch and the dictionary changed, the earlier
 * batches' indices point into a dictionary the document could no longer
 * hold: returns the node at fault. */
static const xc_node *remember_dictionaries(xc_arrow_json *w, const xc_node *n) {
  int64_t slot = n->dictionary != NULL ? dictionary_slot(w, n->dict_id) : -1;
  if (slot >= 0) {
    xs *d = &w->dictionaries[slot], *fresh = &w->scratch;
    const xc_node *values = n->dictionary;
    char name[32];
    snprintf(name, sizeof name, "DICT%lld", (long long)n->dict_id);
    xs_clear(fresh);
    xs_printf(fresh, "{\"id\":%lld,\"data\":{\"count\":%lld,\"columns\":[", (long long)n->dict_id,
              (long long)values->array->length);
    column_json(fresh, values, name, 0, values->array->length);
    xs_puts(fresh, "]}}");
    bool changed =
        !w->seen[slot] || d->len != fresh->len || memcmp(d->data, fresh->data, d->len) != 0;
    if (changed && w->seen[slot] && w->replaced[slot]) return n;
    xs keep = *d; /* the fresh rendering becomes the dictionary, the old one scratch */
    *d = *fresh;
    *fresh = keep;
    w->seen[slot] = true;
    const xc_node *fault = remember_dictionaries(w, values);
    if (fault != NULL) return fault;
  }
  for (int64_t c = 0; c < n->n_children; c++) {
    const xc_node *fault = remember_dictionaries(w, &n->children[c]);
    if (fault != NULL) return fault;
  }
  return NULL;
}

void xc_arrow_json_note_replacement(xc_arrow_json *w, int64_t id) {
  int64_t slot = dictionary_slot(w, id);
  if (slot >= 0) w->replaced[slot] = true; /* else no column shown uses it */
}

/* ---- the document -------------------------------------------------------------------- */

xchg_status xc_arrow_json_begin(xc_arrow_json *w, xs *out, const struct ArrowSchema *root,
                                const xc_node *const *fields, int n_fields, const int64_t *dict_ids,
                                int64_t n_dict_ids, xchg_error *err) {
  memset(w, 0, sizeof *w);
  w->out = out;
  xs_init(&w->scratch, NULL);
  if (n_dict_ids > 0) {
    w->ids = calloc((size_t)n_dict_ids, sizeof *w->ids);
    w->dictionaries = calloc((size_t)n_dict_ids, sizeof *w->dictionaries);
    w->seen = calloc((size_t)n_dict_ids, sizeof *w->seen);
    w->replaced = calloc((size_t)n_dict_ids, sizeof *w->replaced);
    if (w->ids == NULL || w->dictionaries == NULL || w->seen == NULL || w->replaced == NULL) {
      xc_arrow_json_free(w);
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    }
    for (int64_t k = 0; k < n_dict_ids; k++) /* one slot per distinct id, in schema order */
      if (dictionary_slot(w, dict_ids[k]) < 0) {
        xs_init(&w->dictionaries[w->n_dictionaries], NULL);
        w->ids[w->n_dictionaries++] = dict_ids[k];
      }
  }
  xs_puts(out, "{\"schema\":{\"fields\":[");
  for (int f = 0; f < n_fields; f++) {
    xs_puts(out, f ? ",\n" : "\n");
    field_json(out, fields[f]);
  }
  xs_putc(out, ']');
  if (has_metadata(root->metadata)) {
    xs_puts(out, ",\"metadata\":");
    metadata_json(out, root->metadata);
  }
  xs_puts(out, "},\n\"batches\":[");
  return XCHG_OK;
}

xchg_status xc_arrow_json_batch(xc_arrow_json *w, const xc_node *const *columns, int n_columns,
                                int64_t start, int64_t count, xchg_error *err) {
  xs *out = w->out;
  xs_puts(out, w->n_batches++ ? ",\n{\"count\":" : "\n{\"count\":");
  xs_printf(out, "%lld,\"columns\":[", (long long)count);
  for (int c = 0; c < n_columns; c++) {
    if (c > 0) xs_puts(out, ",\n");
    column_json(out, columns[c], NULL, start, count);
    const xc_node *fault = remember_dictionaries(w, columns[c]);
    if (fault != NULL)
      return xchg_errorf(
          err, XCHG_ENOTSUP,
          "batch %lld replaces the dictionary of \"%s\": Arrow's integration JSON holds "
          "one dictionary per id (--format json shows every batch's values)",
          (long long)w->n_batches - 1, fault->schema->name ? fault->schema->name : "");
  }
  for (int64_t d = 0; d < w->n_dictionaries; d++) w->replaced[d] = false;
  xs_puts(out, "]}");
  for (int64_t d = 0; d < w->n_dictionaries; d++)
    if (xs_failed(&w->dictionaries[d])) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (xs_failed(&w->scratch)) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return XCHG_OK;
}

void xc_arrow_json_end(xc_arrow_json *w) {
  xs *out = w->out;
  xs_puts(out, "]");
  if (w->n_dictionaries > 0) {
    bool first = true;
    xs_puts(out, ",\n\"dictionaries\":[");
    for (int64_t d = 0; d < w->n_dictionaries; d++) {
      if (!w->seen[d]) continue;
      xs_puts(out, first ? "\n" : ",\n");
      xs_append(out, w->dictionaries[d].data, w->dictionaries[d].len);
      xs_maybe_flush(out);
      first = false;
    }
    xs_puts(out, "]");
  }
  xs_puts(out, "}\n");
}

void xc_arrow_json_free(xc_arrow_json *w) {
  xs_free(&w->scratch);
  for (int64_t d = 0; d < w->n_dictionaries; d++) xs_free(&w->dictionaries[d]);
  free(w->ids);
  free(w->dictionaries);
  free(w->seen);
  free(w->replaced);
  w->ids = NULL;
  w->dictionaries = NULL;
  w->seen = NULL;
  w->replaced = NULL;
  w->n_dictionaries = 0;
}
