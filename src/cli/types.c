/* types.c — parsing and rendering Arrow C Data Interface format strings. */
#include "cli/types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *xc_unit_short(xc_unit unit) {
  switch (unit) {
    case XC_SECOND: return "s";
    case XC_MILLI: return "ms";
    case XC_MICRO: return "us";
    case XC_NANO: return "ns";
    case XC_DAY: return "day";
  }
  return "?";
}

/* Reads a decimal integer in [min, max] at *p and moves *p past it. */
static bool parse_bounded_int(const char **p, long long min, long long max, long long *out) {
  if (**p < '0' || **p > '9') return false;
  char *end;
  errno = 0;
  long long v = strtoll(*p, &end, 10);
  if (errno != 0 || v < min || v > max) return false;
  *p = end;
  *out = v;
  return true;
}

static bool parse_unit(char c, xc_unit *unit) {
  switch (c) {
    case 's': *unit = XC_SECOND; return true;
    case 'm': *unit = XC_MILLI; return true;
    case 'u': *unit = XC_MICRO; return true;
    case 'n': *unit = XC_NANO; return true;
  }
  return false;
}

/* "d:P,S" or "d:P,S,W" */
static bool parse_decimal(const char *p, xc_type *t) {
  long long precision, scale, width = 128;
  if (!parse_bounded_int(&p, 1, 76, &precision) || *p++ != ',') return false;
  bool negative = *p == '-';
  if (negative) p++;
  if (!parse_bounded_int(&p, 0, 1000, &scale)) return false;
  if (*p == ',') {
    p++;
    if (!parse_bounded_int(&p, 32, 256, &width)) return false;
    if (width != 32 && width != 64 && width != 128 && width != 256) return false;
  }
  if (*p != '\0') return false;
  t->kind = XC_DECIMAL;
  t->precision = (int32_t)precision;
  t->scale = (int32_t)(negative ? -scale : scale);
  t->bit_width = (int)width;
  return true;
}

/* "+ud:5,7" / "+us:" — the type codes of the children, in child order. */
static bool parse_union(const char *p, xc_type *t) {
  t->kind = XC_UNION;
  t->n_type_ids = 0;
  if (*p == '\0') return true;
  for (;;) {
    long long id;
    if (t->n_type_ids == XC_MAX_UNION_CHILDREN || !parse_bounded_int(&p, 0, 127, &id)) return false;
    t->type_ids[t->n_type_ids++] = (int8_t)id;
    if (*p == '\0') return true;
    if (*p++ != ',') return false;
  }
}

static bool parse_fixed_width(const char *p, long long min, xc_kind kind, xc_type *t) {
  long long width;
  if (!parse_bounded_int(&p, min, INT32_MAX, &width) || *p != '\0') return false;
  t->kind = kind;
  t->width = width;
  return true;
}

static bool parse_temporal(const char *f, xc_type *t) {
  switch (f[1]) {
    case 'd':
      if (strcmp(f, "tdD") == 0) { t->kind = XC_DATE; t->unit = XC_DAY; t->bit_width = 32; return true; }
      if (strcmp(f, "tdm") == 0) { t->kind = XC_DATE; t->unit = XC_MILLI; t->bit_width = 64; return true; }
      return false;
    case 't':
      if (!parse_unit(f[2], &t->unit) || f[3] != '\0') return false;
      t->kind = XC_TIME;
      t->bit_width = t->unit <= XC_MILLI ? 32 : 64;
      return true;
    case 's':
      if (!parse_unit(f[2], &t->unit) || f[3] != ':') return false;
      t->kind = XC_TIMESTAMP;
      t->bit_width = 64;
      t->tz = f + 4;
      return true;
    case 'D':
      if (!parse_unit(f[2], &t->unit) || f[3] != '\0') return false;
      t->kind = XC_DURATION;
      t->bit_width = 64;
      return true;
    case 'i':
      t->kind = XC_INTERVAL;
      if (strcmp(f, "tiM") == 0) { t->interval = XC_YEAR_MONTH; return true; }
      if (strcmp(f, "tiD") == 0) { t->interval = XC_DAY_TIME; return true; }
      if (strcmp(f, "tin") == 0) { t->interval = XC_MONTH_DAY_NANO; return true; }
      return false;
  }
  return false;
}

static bool parse_nested(const char *f, xc_type *t) {
  if (strcmp(f, "+l") == 0 || strcmp(f, "+L") == 0) {
    t->kind = XC_LIST;
    t->large = f[1] == 'L';
    return true;
  }
  if (strcmp(f, "+vl") == 0 || strcmp(f, "+vL") == 0) {
    t->kind = XC_LIST_VIEW;
    t->large = f[2] == 'L';
    return true;
  }
  if (strncmp(f, "+w:", 3) == 0) return parse_fixed_width(f + 3, 0, XC_FIXED_LIST, t);
  if (strcmp(f, "+s") == 0) { t->kind = XC_STRUCT; return true; }
  if (strcmp(f, "+m") == 0) { t->kind = XC_MAP; return true; }
  if (strcmp(f, "+r") == 0) { t->kind = XC_RUN_END; return true; }
  if (strncmp(f, "+ud:", 4) == 0 || strncmp(f, "+us:", 4) == 0) {
    t->dense = f[2] == 'd';
    return parse_union(f + 4, t);
  }
  return false;
}

/* One-character formats: the primitive types. */
static bool parse_primitive(const char *f, xc_type *t) {
  static const struct {
    char code;
    xc_kind kind;
    int bits;
    bool is_signed;
  } table[] = {
      {'n', XC_NULL, 0, false},   {'b', XC_BOOL, 1, false},   {'c', XC_INT, 8, true},
      {'C', XC_INT, 8, false},    {'s', XC_INT, 16, true},    {'S', XC_INT, 16, false},
      {'i', XC_INT, 32, true},    {'I', XC_INT, 32, false},   {'l', XC_INT, 64, true},
      {'L', XC_INT, 64, false},   {'e', XC_FLOAT, 16, true},  {'f', XC_FLOAT, 32, true},
      {'g', XC_FLOAT, 64, true},  {'z', XC_BINARY, 32, false}, {'Z', XC_BINARY, 64, false},
      {'u', XC_BINARY, 32, false}, {'U', XC_BINARY, 64, false},
  };
  if (f[0] == '\0' || f[1] != '\0') return false;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].code != f[0]) continue;
    t->kind = table[i].kind;
    t->bit_width = table[i].bits;
    t->is_signed = table[i].is_signed;
    t->utf8 = f[0] == 'u' || f[0] == 'U';
    t->large = f[0] == 'Z' || f[0] == 'U';
    return true;
  }
  return false;
}

xchg_status xc_parse_format(const char *format, xc_type *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  out->tz = "";
  bool ok = false;
  if (format == NULL) return xchg_errorf(err, XCHG_EFORMAT, "schema has no format string");
  switch (format[0]) {
    case 'd': ok = format[1] == ':' && parse_decimal(format + 2, out); break;
    case 'w': ok = format[1] == ':' && parse_fixed_width(format + 2, 0, XC_FIXED_BINARY, out); break;
    case 't': ok = parse_temporal(format, out); break;
    case '+': ok = parse_nested(format, out); break;
    case 'v':
      ok = (strcmp(format, "vz") == 0 || strcmp(format, "vu") == 0);
      out->kind = XC_BINARY_VIEW;
      out->utf8 = format[1] == 'u';
      break;
    default: ok = parse_primitive(format, out); break;
  }
  if (!ok) return xchg_errorf(err, XCHG_EFORMAT, "unknown type format \"%.64s\"", format);
  return XCHG_OK;
}

/* ---- readable type names ---------------------------------------------- */

static void name_children(xs *out, const struct ArrowSchema *schema, const xc_type *t);

static void name_field(xs *out, const struct ArrowSchema *child) {
  xs_puts(out, child->name ? child->name : "");
  xs_puts(out, ": ");
  xc_type_name(out, child);
  if (!(child->flags & ARROW_FLAG_NULLABLE)) xs_puts(out, " not null");
}

static void name_primitive(xs *out, const xc_type *t) {
  switch (t->kind) {
    case XC_NULL: xs_puts(out, "null"); return;
    case XC_BOOL: xs_puts(out, "bool"); return;
    case XC_INT: xs_printf(out, "%sint%d", t->is_signed ? "" : "u", t->bit_width); return;
    case XC_FLOAT: xs_printf(out, "float%d", t->bit_width); return;
    case XC_DECIMAL: xs_printf(out, "decimal%d(%d, %d)", t->bit_width, t->precision, t->scale); return;
    case XC_FIXED_BINARY: xs_printf(out, "fixed_size_binary[%lld]", (long long)t->width); return;
    case XC_BINARY: xs_printf(out, "%s%s", t->large ? "large_" : "", t->utf8 ? "utf8" : "binary"); return;
    case XC_BINARY_VIEW: xs_puts(out, t->utf8 ? "utf8_view" : "binary_view"); return;
    case XC_DATE: xs_puts(out, t->unit == XC_DAY ? "date32[day]" : "date64[ms]"); return;
    case XC_TIME: xs_printf(out, "time%d[%s]", t->bit_width, xc_unit_short(t->unit)); return;
    case XC_TIMESTAMP:
      if (t->tz[0] != '\0')
        xs_printf(out, "timestamp[%s, tz=%s]", xc_unit_short(t->unit), t->tz);
      else
        xs_printf(out, "timestamp[%s]", xc_unit_short(t->unit));
      return;
    case XC_DURATION: xs_printf(out, "duration[%s]", xc_unit_short(t->unit)); return;
    case XC_INTERVAL: {
      static const char *const names[] = {"interval[year_month]", "interval[day_time]",
                                          "interval[month_day_nano]"};
      xs_puts(out, names[t->interval]);
      return;
    }
    default: return;
  }
}

static void name_children(xs *out, const struct ArrowSchema *schema, const xc_type *t) {
  xs_putc(out, '<');
  for (int64_t i = 0; i < schema->n_children; i++) {
    if (i > 0) xs_puts(out, ", ");
    name_field(out, schema->children[i]);
    if (t->kind == XC_UNION && i < t->n_type_ids) xs_printf(out, "=%d", t->type_ids[i]);
  }
  xs_putc(out, '>');
}

static const char *nested_name(const xc_type *t) {
  switch (t->kind) {
    case XC_LIST: return t->large ? "large_list" : "list";
    case XC_LIST_VIEW: return t->large ? "large_list_view" : "list_view";
    case XC_FIXED_LIST: return "fixed_size_list";
    case XC_STRUCT: return "struct";
    case XC_MAP: return "map";
    case XC_UNION: return t->dense ? "dense_union" : "sparse_union";
    case XC_RUN_END: return "run_end_encoded";
    default: return NULL;
  }
}

/* A map's children are one "entries" struct; show it as map<key, value>. */
static void name_map(xs *out, const struct ArrowSchema *schema) {
  const struct ArrowSchema *entries = schema->n_children == 1 ? schema->children[0] : NULL;
  if (entries == NULL || entries->n_children != 2) {
    xs_puts(out, "map<?>");
    return;
  }
  xs_puts(out, "map<");
  xc_type_name(out, entries->children[0]);
  xs_puts(out, ", ");
  xc_type_name(out, entries->children[1]);
  if (!(entries->children[1]->flags & ARROW_FLAG_NULLABLE)) xs_puts(out, " not null");
  xs_puts(out, (schema->flags & ARROW_FLAG_MAP_KEYS_SORTED) ? ", keys_sorted>" : ">");
}

static void name_value_type(xs *out, const struct ArrowSchema *schema) {
  xc_type t;
  if (xc_parse_format(schema->format, &t, NULL) != XCHG_OK) {
    xs_printf(out, "unknown(\"%s\")", schema->format ? schema->format : "");
    return;
  }
  const char *nested = nested_name(&t);
  if (nested == NULL) {
    name_primitive(out, &t);
  } else if (t.kind == XC_MAP) {
    name_map(out, schema);
  } else {
    xs_puts(out, nested);
    name_children(out, schema, &t);
    if (t.kind == XC_FIXED_LIST) xs_printf(out, "[%lld]", (long long)t.width);
  }
}

void xc_type_name(xs *out, const struct ArrowSchema *schema) {
  if (schema->dictionary == NULL) {
    name_value_type(out, schema);
    return;
  }
  xs_puts(out, "dictionary<values=");
  xc_type_name(out, schema->dictionary);
  xs_puts(out, ", indices=");
  name_value_type(out, schema);
  if (schema->flags & ARROW_FLAG_DICTIONARY_ORDERED) xs_puts(out, ", ordered");
  xs_putc(out, '>');
}

/* ---- metadata ---------------------------------------------------------- */

static int32_t read_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

void xc_meta_begin(xc_meta_iter *it, const char *metadata) {
  it->next = metadata;
  it->remaining = metadata ? read_i32(metadata) : 0;
  if (it->remaining < 0) it->remaining = 0;
  if (metadata) it->next += 4;
}

bool xc_meta_next(xc_meta_iter *it, const char **key, int32_t *key_len, const char **value,
                  int32_t *value_len) {
  if (it->remaining <= 0) return false;
  *key_len = read_i32(it->next);
  if (*key_len < 0) return false;
  *key = it->next + 4;
  it->next = *key + *key_len;
  *value_len = read_i32(it->next);
  if (*value_len < 0) return false;
  *value = it->next + 4;
  it->next = *value + *value_len;
  it->remaining--;
  return true;
}

const char *xc_meta_find(const char *metadata, const char *key, int32_t *len) {
  xc_meta_iter it;
  const char *k, *v;
  int32_t klen, vlen;
  size_t want = strlen(key);
  xc_meta_begin(&it, metadata);
  while (xc_meta_next(&it, &k, &klen, &v, &vlen)) {
    if ((size_t)klen == want && memcmp(k, key, want) == 0) {
      *len = vlen;
      return v;
    }
  }
  return NULL;
}
