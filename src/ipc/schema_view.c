/* schema_view.c — parsing C Data Interface format strings (schema_view.h). */
#include "ipc/schema_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- format strings --------------------------------------------------------- */

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

static bool parse_unit(char c, ipc_unit *unit) {
  switch (c) {
    case 's': *unit = IPC_UNIT_SECOND; return true;
    case 'm': *unit = IPC_UNIT_MILLI; return true;
    case 'u': *unit = IPC_UNIT_MICRO; return true;
    case 'n': *unit = IPC_UNIT_NANO; return true;
  }
  return false;
}

/* "d:P,S" or "d:P,S,W" */
static bool parse_decimal(const char *p, ipc_schema_view *v) {
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
  v->kind = IPC_KIND_DECIMAL;
  v->precision = (int32_t)precision;
  v->scale = (int32_t)(negative ? -scale : scale);
  v->bit_width = (int)width;
  return true;
}

static bool type_id_repeated(const ipc_schema_view *v, long long id) {
  for (int i = 0; i < v->n_type_ids; i++)
    if (v->type_ids[i] == id) return true;
  return false;
}

/* "+ud:5,7" / "+us:" — the type ids of the children, in child order. */
static bool parse_union(const char *p, ipc_schema_view *v) {
  v->kind = IPC_KIND_UNION;
  v->n_type_ids = 0;
  if (*p == '\0') return true;
  for (;;) {
    long long id;
    if (v->n_type_ids == IPC_MAX_UNION_CHILDREN || !parse_bounded_int(&p, 0, 127, &id) ||
        type_id_repeated(v, id))
      return false;
    v->type_ids[v->n_type_ids++] = (int8_t)id;
    if (*p == '\0') return true;
    if (*p++ != ',') return false;
  }
}

static bool parse_fixed_width(const char *p, ipc_kind kind, ipc_schema_view *v) {
  long long width;
  if (!parse_bounded_int(&p, 0, INT32_MAX, &width) || *p != '\0') return false;
  v->kind = kind;
  v->width = width;
  return true;
}

static bool set_temporal(ipc_schema_view *v, ipc_kind kind, ipc_unit unit, int bit_width) {
  v->kind = kind;
  v->unit = unit;
  v->bit_width = bit_width;
  return true;
}

static bool parse_temporal(const char *f, ipc_schema_view *v) {
  ipc_unit unit;
  switch (f[1]) {
    case 'd':
      if (strcmp(f, "tdD") == 0) return set_temporal(v, IPC_KIND_DATE, IPC_UNIT_DAY, 32);
      if (strcmp(f, "tdm") == 0) return set_temporal(v, IPC_KIND_DATE, IPC_UNIT_MILLI, 64);
      return false;
    case 't':
      if (!parse_unit(f[2], &unit) || f[3] != '\0') return false;
      return set_temporal(v, IPC_KIND_TIME, unit, unit <= IPC_UNIT_MILLI ? 32 : 64);
    case 's':
      if (!parse_unit(f[2], &unit) || f[3] != ':') return false;
      v->tz = f + 4;
      return set_temporal(v, IPC_KIND_TIMESTAMP, unit, 64);
    case 'D':
      if (!parse_unit(f[2], &unit) || f[3] != '\0') return false;
      return set_temporal(v, IPC_KIND_DURATION, unit, 64);
    case 'i':
      v->kind = IPC_KIND_INTERVAL;
      if (strcmp(f, "tiM") == 0)
        v->interval = IPC_INTERVAL_YEAR_MONTH;
      else if (strcmp(f, "tiD") == 0)
        v->interval = IPC_INTERVAL_DAY_TIME;
      else if (strcmp(f, "tin") == 0)
        v->interval = IPC_INTERVAL_MONTH_DAY_NANO;
      else
        return false;
      return true;
  }
  return false;
}

static bool parse_nested(const char *f, ipc_schema_view *v) {
  if (strcmp(f, "+l") == 0 || strcmp(f, "+L") == 0) {
    v->kind = IPC_KIND_LIST;
    v->large = f[1] == 'L';
    return true;
  }
  if (strcmp(f, "+vl") == 0 || strcmp(f, "+vL") == 0) {
    v->kind = IPC_KIND_LIST_VIEW;
    v->large = f[2] == 'L';
    return true;
  }
  if (strncmp(f, "+w:", 3) == 0) return parse_fixed_width(f + 3, IPC_KIND_FIXED_LIST, v);
  if (strcmp(f, "+s") == 0)
    v->kind = IPC_KIND_STRUCT;
  else if (strcmp(f, "+m") == 0)
    v->kind = IPC_KIND_MAP;
  else if (strcmp(f, "+r") == 0)
    v->kind = IPC_KIND_RUN_END;
  else if (strncmp(f, "+ud:", 4) == 0 || strncmp(f, "+us:", 4) == 0) {
    v->dense = f[2] == 'd';
    return parse_union(f + 4, v);
  } else
    return false;
  return true;
}

static bool parse_binary_view(const char *f, ipc_schema_view *v) {
  if (strcmp(f, "vz") != 0 && strcmp(f, "vu") != 0) return false;
  v->kind = IPC_KIND_BINARY_VIEW;
  v->utf8 = f[1] == 'u';
  return true;
}

/* One-character formats: the primitive types. */
static bool parse_primitive(const char *f, ipc_schema_view *v) {
  static const struct {
    char code;
    ipc_kind kind;
    int bits;
    bool is_signed;
  } table[] = {
      {'n', IPC_KIND_NULL, 0, false},    {'b', IPC_KIND_BOOL, 1, false},
      {'c', IPC_KIND_INT, 8, true},      {'C', IPC_KIND_INT, 8, false},
      {'s', IPC_KIND_INT, 16, true},     {'S', IPC_KIND_INT, 16, false},
      {'i', IPC_KIND_INT, 32, true},     {'I', IPC_KIND_INT, 32, false},
      {'l', IPC_KIND_INT, 64, true},     {'L', IPC_KIND_INT, 64, false},
      {'e', IPC_KIND_FLOAT, 16, false},  {'f', IPC_KIND_FLOAT, 32, false},
      {'g', IPC_KIND_FLOAT, 64, false},  {'z', IPC_KIND_BINARY, 32, false},
      {'Z', IPC_KIND_BINARY, 64, false}, {'u', IPC_KIND_BINARY, 32, false},
      {'U', IPC_KIND_BINARY, 64, false},
  };
  if (f[0] == '\0' || f[1] != '\0') return false;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].code != f[0]) continue;
    v->kind = table[i].kind;
    v->bit_width = table[i].bits;
    v->is_signed = table[i].is_signed;
    v->utf8 = f[0] == 'u' || f[0] == 'U';
    v->large = f[0] == 'Z' || f[0] == 'U';
    return true;
  }
  return false;
}

xchg_status ipc_schema_view_parse(const char *format, ipc_schema_view *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  out->tz = "";
  if (format == NULL) return xchg_errorf(err, XCHG_EINVAL, "no format string");
  bool ok;
  switch (format[0]) {
    case 'd': ok = format[1] == ':' && parse_decimal(format + 2, out); break;
    case 'w':
      ok = format[1] == ':' && parse_fixed_width(format + 2, IPC_KIND_FIXED_BINARY, out);
      break;
    case 't': ok = parse_temporal(format, out); break;
    case '+': ok = parse_nested(format, out); break;
    case 'v': ok = parse_binary_view(format, out); break;
    default: ok = parse_primitive(format, out); break;
  }
  if (!ok)
    return xchg_errorf(err, XCHG_EINVAL, "unknown or malformed format string \"%.64s\"", format);
  return XCHG_OK;
}

/* ---- the children a type needs ---------------------------------------------- */

/* How many children the type has: -1 for any number (a struct). */
static int64_t children_needed(const ipc_schema_view *v) {
  switch (v->kind) {
    case IPC_KIND_LIST:
    case IPC_KIND_LIST_VIEW:
    case IPC_KIND_FIXED_LIST:
    case IPC_KIND_MAP: return 1;
    case IPC_KIND_RUN_END: return 2;
    case IPC_KIND_STRUCT: return -1;
    case IPC_KIND_UNION: return v->n_type_ids;
    default: return 0;
  }
}

static bool is_map_entries(const struct ArrowSchema *entries) {
  return entries->format && strcmp(entries->format, "+s") == 0 && entries->n_children == 2 &&
         !entries->dictionary;
}

static bool is_run_ends(const struct ArrowSchema *ends) {
  ipc_schema_view v;
  return ipc_schema_view_parse(ends->format, &v, NULL) == XCHG_OK && !ends->dictionary &&
         v.kind == IPC_KIND_INT && v.is_signed && v.bit_width >= 16;
}

static xchg_status check_children(const ipc_schema_view *v, const struct ArrowSchema *schema,
                                  xchg_error *err) {
  int64_t n = schema->n_children, want = children_needed(v);
  if (n < 0 || (n > 0 && !schema->children))
    return xchg_errorf(err, XCHG_EINVAL, "type \"%.64s\": bad children (%lld, %s)", schema->format,
                       (long long)n, schema->children ? "given" : "NULL");
  if (want >= 0 && n != want)
    return xchg_errorf(err, XCHG_EINVAL, "type \"%.64s\" has %lld children, needs %lld",
                       schema->format, (long long)n, (long long)want);
  for (int64_t i = 0; i < n; i++)
    if (!schema->children[i])
      return xchg_errorf(err, XCHG_EINVAL, "type \"%.64s\": child %lld is NULL", schema->format,
                         (long long)i);
  if (v->kind == IPC_KIND_MAP && !is_map_entries(schema->children[0]))
    return xchg_errorf(err, XCHG_EINVAL, "a map's child must be a struct of key and value");
  if (v->kind == IPC_KIND_RUN_END && !is_run_ends(schema->children[0]))
    return xchg_errorf(err, XCHG_EINVAL, "run ends must be int16, int32 or int64");
  return XCHG_OK;
}

xchg_status ipc_schema_view_init(ipc_schema_view *out, const struct ArrowSchema *schema,
                                 xchg_error *err) {
  if (!schema) {
    memset(out, 0, sizeof *out);
    return xchg_errorf(err, XCHG_EINVAL, "no schema");
  }
  xchg_status st = ipc_schema_view_parse(schema->format, out, err);
  return st == XCHG_OK ? check_children(out, schema, err) : st;
}

/* ---- readable names ---------------------------------------------------------- */

const char *ipc_unit_name(ipc_unit unit) {
  switch (unit) {
    case IPC_UNIT_SECOND: return "s";
    case IPC_UNIT_MILLI: return "ms";
    case IPC_UNIT_MICRO: return "us";
    case IPC_UNIT_NANO: return "ns";
    case IPC_UNIT_DAY: return "day";
  }
  return "?";
}

/* The names of the types without parameters, by kind (NULL: it has some). */
static const char *plain_name(const ipc_schema_view *v) {
  static const char *const intervals[] = {"interval[year_month]", "interval[day_time]",
                                          "interval[month_day_nano]"};
  switch (v->kind) {
    case IPC_KIND_NULL: return "null";
    case IPC_KIND_BOOL: return "bool";
    case IPC_KIND_BINARY:
      return v->utf8 ? (v->large ? "large_utf8" : "utf8") : (v->large ? "large_binary" : "binary");
    case IPC_KIND_BINARY_VIEW: return v->utf8 ? "utf8_view" : "binary_view";
    case IPC_KIND_DATE: return v->unit == IPC_UNIT_DAY ? "date32[day]" : "date64[ms]";
    case IPC_KIND_INTERVAL: return intervals[v->interval];
    case IPC_KIND_LIST: return v->large ? "large_list" : "list";
    case IPC_KIND_LIST_VIEW: return v->large ? "large_list_view" : "list_view";
    case IPC_KIND_STRUCT: return "struct";
    case IPC_KIND_MAP: return "map";
    case IPC_KIND_UNION: return v->dense ? "dense_union" : "sparse_union";
    case IPC_KIND_RUN_END: return "run_end_encoded";
    default: return NULL;
  }
}

const char *ipc_schema_view_name(const ipc_schema_view *v, char *out, size_t size) {
  const char *plain = plain_name(v);
  const char *unit = ipc_unit_name(v->unit);
  switch (plain ? IPC_KIND_NULL : v->kind) {
    case IPC_KIND_INT: snprintf(out, size, "%sint%d", v->is_signed ? "" : "u", v->bit_width); break;
    case IPC_KIND_FLOAT: snprintf(out, size, "float%d", v->bit_width); break;
    case IPC_KIND_DECIMAL:
      snprintf(out, size, "decimal%d(%d, %d)", v->bit_width, v->precision, v->scale);
      break;
    case IPC_KIND_FIXED_BINARY:
      snprintf(out, size, "fixed_size_binary[%lld]", (long long)v->width);
      break;
    case IPC_KIND_TIME: snprintf(out, size, "time%d[%s]", v->bit_width, unit); break;
    case IPC_KIND_TIMESTAMP:
      if (v->tz[0] != '\0')
        snprintf(out, size, "timestamp[%s, tz=%s]", unit, v->tz);
      else
        snprintf(out, size, "timestamp[%s]", unit);
      break;
    case IPC_KIND_DURATION: snprintf(out, size, "duration[%s]", unit); break;
    case IPC_KIND_FIXED_LIST:
      snprintf(out, size, "fixed_size_list[%lld]", (long long)v->width);
      break;
    default: snprintf(out, size, "%s", plain); break;
  }
  return out;
}
