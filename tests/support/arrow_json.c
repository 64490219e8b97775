/* tests/support/arrow_json.c — compares Arrow integration JSON with C Data
 * Interface structs.  See arrow_json.h for what is compared and why.
 *
 * The comparison walks the JSON field (its type tells how to read the
 * buffers), the JSON column data and the ArrowArray side by side.  A JSON
 * column covers `count` slots; slot i of it is slot (array.offset + start + i)
 * of the ArrowArray, where `start` is the shift a parent imposes on its child
 * (struct, fixed-size list and sparse union children share the parent's
 * offset; list children are addressed by the offsets instead). */
#include "support/arrow_json.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/json_util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "arrow_json.c reads multi-word values (decimals, ArrowSchema metadata) as little-endian"
#endif

struct arrow_json {
  json_t *root;
  json_t *fields;       /* schema.fields */
  json_t *metadata;     /* schema.metadata, may be NULL */
  json_t *batches;      /* record batches */
  json_t *dictionaries; /* dictionary batches, may be NULL */
  int canonical_map_names;
};

/* ------------------------------------------------------------------------ */
/* Messages and the path of the value being compared                        */

typedef struct cmp {
  const arrow_json *doc;
  char *msg;
  size_t msgsz;
  char where[48];  /* "schema", "batch 3" */
  char path[1024]; /* "struct_nullable.f1" */
  size_t path_len;
  int depth; /* dictionary nesting, to stop cycles in malformed JSON */
} cmp;

static void cmp_init(cmp *c, const arrow_json *doc, char *msg, size_t msgsz) {
  memset(c, 0, sizeof(*c));
  c->doc = doc;
  c->msg = msg;
  c->msgsz = msgsz;
  if (msg && msgsz) msg[0] = '\0';
}

/* Records a mismatch at slot `slot` (-1: the column as a whole) in the
 * message. */
static void note_mismatch(cmp *c, int64_t slot, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void note_mismatch(cmp *c, int64_t slot, const char *fmt, ...) {
  if (!c->msg || c->msgsz == 0) return;
  char index[32] = "";
  if (slot >= 0) snprintf(index, sizeof(index), "[%" PRId64 "]", slot);
  int n = snprintf(c->msg, c->msgsz, "%s, %s%s%s: ", c->where,
                   c->path_len ? "column " : "top level", c->path, index);
  if (n >= 0 && (size_t)n < c->msgsz) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg + n, c->msgsz - (size_t)n, fmt, ap);
    va_end(ap);
  }
}

/* note_mismatch, then -1, so that failures read `return fail(c, i, "...")`
 * (a branch that goes on after a mismatch calls note_mismatch alone).
 * A macro, so that the compiler sees the -1 wherever it is returned: a
 * getter that fails then visibly returns non-zero without setting its
 * output, and its callers' outputs are not taken for maybe uninitialized
 * (the variadic note_mismatch is never inlined). */
#define fail(c, slot, ...) (note_mismatch((c), (slot), __VA_ARGS__), -1)

/* Appends a component to the path; path_pop(c, mark) undoes it. */
static size_t path_push(cmp *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static size_t path_push(cmp *c, const char *fmt, ...) {
  size_t mark = c->path_len;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->path + mark, sizeof(c->path) - mark, fmt, ap);
  va_end(ap);
  c->path_len = strlen(c->path);
  return mark;
}

static void path_pop(cmp *c, size_t mark) {
  c->path_len = mark;
  c->path[mark] = '\0';
}

static size_t path_push_name(cmp *c, const char *name) {
  return c->path_len ? path_push(c, ".%s", name) : path_push(c, "%s", name);
}

/* Hex of up to 24 bytes, for messages. */
static const char *hex_preview(const uint8_t *p, size_t n, char out[64]) {
  size_t shown = n < 24 ? n : 24, i;
  for (i = 0; i < shown; i++) snprintf(out + 2 * i, 3, "%02X", p[i]);
  out[2 * i] = '\0';
  if (shown < n) strcat(out, "...");
  return out;
}

/* ------------------------------------------------------------------------ */
/* JSON access helpers: every key is looked up deliberately, and a key the   */
/* comparator does not know is an error.                                     */

static int check_keys(cmp *c, json_t *obj, const char *what, const char *const *allowed) {
  const char *key;
  json_t *value;
  json_object_foreach(obj, key, value) {
    (void)value;
    int known = 0;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(key, *a) == 0) known = 1;
    if (!known) return fail(c, -1, "%s has a key the comparator does not know: \"%s\"", what, key);
  }
  return 0;
}

/* A JSON integer, or a string holding one (64-bit values are strings). */
static int json_as_i64(json_t *v, int64_t *out) {
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    return 0;
  }
  if (!json_is_string(v)) return -1;
  const char *s = json_string_value(v);
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || end == s || *end) return -1;
  *out = x;
  return 0;
}

static int json_as_u64(json_t *v, uint64_t *out) {
  if (json_is_integer(v)) {
    if (json_integer_value(v) < 0) return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
  }
  if (!json_is_string(v)) return -1;
  const char *s = json_string_value(v);
  char *end;
  if (*s == '-') return -1;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || end == s || *end) return -1;
  *out = x;
  return 0;
}

static int get_int(cmp *c, json_t *obj, const char *key, const char *what, int64_t *out) {
  if (json_as_i64(json_object_get(obj, key), out) != 0)
    return fail(c, -1, "%s: \"%s\" is missing or not an integer", what, key);
  return 0;
}

static int get_bool(cmp *c, json_t *obj, const char *key, const char *what, int *out) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_boolean(v)) return fail(c, -1, "%s: \"%s\" is missing or not a boolean", what, key);
  *out = json_is_true(v);
  return 0;
}

static int get_string(cmp *c, json_t *obj, const char *key, const char *what, const char **out) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_string(v)) return fail(c, -1, "%s: \"%s\" is missing or not a string", what, key);
  *out = json_string_value(v);
  return 0;
}

/* An array member of exactly n elements. */
static int get_array(cmp *c, json_t *obj, const char *key, size_t n, json_t **out) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_array(v)) return fail(c, -1, "%s is missing or not an array", key);
  if (json_array_size(v) != n)
    return fail(c, -1, "%s has %zu entries, expected %zu", key, json_array_size(v), n);
  *out = v;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Types: the JSON type object, turned into what the comparator needs        */

typedef enum kind {
  K_NULL,
  K_FIXED,  /* validity + one buffer of fixed-width values (or bits) */
  K_BINARY, /* binary, utf8 and their large variants */
  K_VIEW,   /* binaryview, utf8view */
  K_LIST,   /* list, largelist */
  K_MAP,
  K_LIST_VIEW, /* listview, largelistview */
  K_FIXED_LIST,
  K_STRUCT,
  K_UNION,
  K_RUN_END
} kind;

typedef enum value_enc {
  V_BOOL,
  V_INT,
  V_HALF,
  V_FLOAT,
  V_DOUBLE,
  V_DECIMAL,
  V_DAY_TIME,
  V_MONTH_DAY_NANO,
  V_FIXED_BINARY
} value_enc;

typedef struct jtype {
  kind kind;
  const char *name;  /* JSON type name, for messages */
  value_enc enc;     /* K_FIXED only */
  int width;         /* bytes per value (K_FIXED except bool) */
  int is_signed;     /* V_INT */
  int large;         /* 64-bit offsets / sizes */
  int utf8;          /* strings rather than hex */
  int dense;         /* K_UNION */
  int keys_sorted;   /* K_MAP */
  int64_t list_size; /* K_FIXED_LIST */
  size_t n_type_ids;
  int type_ids[128];
  size_t n_children; /* expected number of child fields, or SIZE_MAX: any */
  char format[320];
  char alt_format[128]; /* another valid spelling of the same type, or "" */
} jtype;

static int time_unit(cmp *c, json_t *type, const char *what, char *unit) {
  const char *u;
  if (get_string(c, type, "unit", what, &u) != 0) return -1;
  if (strcmp(u, "SECOND") == 0)
    *unit = 's';
  else if (strcmp(u, "MILLISECOND") == 0)
    *unit = 'm';
  else if (strcmp(u, "MICROSECOND") == 0)
    *unit = 'u';
  else if (strcmp(u, "NANOSECOND") == 0)
    *unit = 'n';
  else
    return fail(c, -1, "%s: unknown unit \"%s\"", what, u);
  return 0;
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void set_fixed(jtype *t, value_enc enc, int width, const char *format) {
  t->kind = K_FIXED;
  t->enc = enc;
  t->width = width;
  snprintf(t->format, sizeof(t->format), "%s", format);
}

static int parse_int_type(cmp *c, json_t *type, jtype *t) {
  int64_t bits;
  int is_signed;
  if (check_keys(c, type, "int type", KEYS("name", "bitWidth", "isSigned")) != 0 ||
      get_int(c, type, "bitWidth", "int type", &bits) != 0 ||
      get_bool(c, type, "isSigned", "int type", &is_signed) != 0)
    return -1;
  static const char signed_formats[] = "csil", unsigned_formats[] = "CSIL";
  int index = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : bits == 64 ? 3 : -1;
  if (index < 0) return fail(c, -1, "int type: bitWidth %" PRId64 " is not 8/16/32/64", bits);
  char format[2] = {is_signed ? signed_formats[index] : unsigned_formats[index], '\0'};
  set_fixed(t, V_INT, (int)(bits / 8), format);
  t->is_signed = is_signed;
  return 0;
}

static int parse_decimal_type(cmp *c, json_t *type, jtype *t) {
  int64_t precision, scale, bits = 128;
  if (check_keys(c, type, "decimal type", KEYS("name", "precision", "scale", "bitWidth")) != 0 ||
      get_int(c, type, "precision", "decimal type", &precision) != 0 ||
      get_int(c, type, "scale", "decimal type", &scale) != 0)
    return -1;
  if (json_object_get(type, "bitWidth") && get_int(c, type, "bitWidth", "decimal type", &bits) != 0)
    return -1;
  if (bits != 32 && bits != 64 && bits != 128 && bits != 256)
    return fail(c, -1, "decimal type: bitWidth %" PRId64 " is not 32/64/128/256", bits);
  char format[96];
  if (bits == 128) {
    /* "d:p,s" is the canonical spelling; "d:p,s,128" is equally valid. */
    snprintf(format, sizeof(format), "d:%" PRId64 ",%" PRId64, precision, scale);
    snprintf(t->alt_format, sizeof(t->alt_format), "%s,128", format);
  } else {
    snprintf(format, sizeof(format), "d:%" PRId64 ",%" PRId64 ",%" PRId64, precision, scale, bits);
  }
  set_fixed(t, V_DECIMAL, (int)(bits / 8), format);
  return 0;
}

static int parse_temporal_type(cmp *c, json_t *type, const char *name, jtype *t) {
  char unit, format[300];
  if (strcmp(name, "date") == 0) {
    const char *u;
    if (check_keys(c, type, "date type", KEYS("name", "unit")) != 0 ||
        get_string(c, type, "unit", "date type", &u) != 0)
      return -1;
    if (strcmp(u, "DAY") == 0)
      set_fixed(t, V_INT, 4, "tdD");
    else if (strcmp(u, "MILLISECOND") == 0)
      set_fixed(t, V_INT, 8, "tdm");
    else
      return fail(c, -1, "date type: unknown unit \"%s\"", u);
  } else if (strcmp(name, "time") == 0) {
    int64_t bits;
    if (check_keys(c, type, "time type", KEYS("name", "unit", "bitWidth")) != 0 ||
        time_unit(c, type, "time type", &unit) != 0 ||
        get_int(c, type, "bitWidth", "time type", &bits) != 0)
      return -1;
    int expected_bits = (unit == 's' || unit == 'm') ? 32 : 64;
    if (bits != expected_bits)
      return fail(c, -1, "time type: bitWidth %" PRId64 " does not fit unit '%c'", bits, unit);
    snprintf(format, sizeof(format), "tt%c", unit);
    set_fixed(t, V_INT, expected_bits / 8, format);
  } else if (strcmp(name, "timestamp") == 0) {
    const char *tz = "";
    if (check_keys(c, type, "timestamp type", KEYS("name", "unit", "timezone")) != 0 ||
        time_unit(c, type, "timestamp type", &unit) != 0)
      return -1;
    if (json_object_get(type, "timezone") &&
        get_string(c, type, "timezone", "timestamp type", &tz) != 0)
      return -1;
    if ((size_t)snprintf(format, sizeof(format), "ts%c:%s", unit, tz) >= sizeof(format))
      return fail(c, -1, "timestamp type: timezone too long");
    set_fixed(t, V_INT, 8, format);
  } else if (strcmp(name, "duration") == 0) {
    if (check_keys(c, type, "duration type", KEYS("name", "unit")) != 0 ||
        time_unit(c, type, "duration type", &unit) != 0)
      return -1;
    snprintf(format, sizeof(format), "tD%c", unit);
    set_fixed(t, V_INT, 8, format);
  } else { /* interval */
    const char *u;
    if (check_keys(c, type, "interval type", KEYS("name", "unit")) != 0 ||
        get_string(c, type, "unit", "interval type", &u) != 0)
      return -1;
    if (strcmp(u, "YEAR_MONTH") == 0)
      set_fixed(t, V_INT, 4, "tiM");
    else if (strcmp(u, "DAY_TIME") == 0)
      set_fixed(t, V_DAY_TIME, 8, "tiD");
    else if (strcmp(u, "MONTH_DAY_NANO") == 0)
      set_fixed(t, V_MONTH_DAY_NANO, 16, "tin");
    else
      return fail(c, -1, "interval type: unknown unit \"%s\"", u);
  }
  t->is_signed = 1;
  return 0;
}

static int parse_union_type(cmp *c, json_t *type, jtype *t) {
  const char *mode;
  json_t *ids = json_object_get(type, "typeIds");
  if (check_keys(c, type, "union type", KEYS("name", "mode", "typeIds")) != 0 ||
      get_string(c, type, "mode", "union type", &mode) != 0)
    return -1;
  if (strcmp(mode, "SPARSE") == 0)
    t->dense = 0;
  else if (strcmp(mode, "DENSE") == 0)
    t->dense = 1;
  else
    return fail(c, -1, "union type: unknown mode \"%s\"", mode);
  if (!json_is_array(ids) || json_array_size(ids) > 128)
    return fail(c, -1, "union type: typeIds is missing or not an array of at most 128");
  t->kind = K_UNION;
  t->n_type_ids = json_array_size(ids);
  t->n_children = t->n_type_ids;
  size_t len = (size_t)snprintf(t->format, sizeof(t->format), "+u%c:", t->dense ? 'd' : 's');
  for (size_t i = 0; i < t->n_type_ids; i++) {
    int64_t id;
    if (json_as_i64(json_array_get(ids, i), &id) != 0 || id < 0 || id > 127)
      return fail(c, -1, "union type: typeIds[%zu] is not an integer in [0, 127]", i);
    t->type_ids[i] = (int)id;
    len +=
        (size_t)snprintf(t->format + len, sizeof(t->format) - len, "%s%d", i ? "," : "", (int)id);
  }
  return 0;
}

/* A type with no parameters: name, format, kind, expected child count. */
static int parse_simple_type(cmp *c, json_t *type, const char *name, jtype *t) {
  static const struct {
    const char *name, *format;
    kind kind;
    int large, utf8;
    size_t n_children;
  } simple[] = {
      {"null", "n", K_NULL, 0, 0, 0},
      {"binary", "z", K_BINARY, 0, 0, 0},
      {"largebinary", "Z", K_BINARY, 1, 0, 0},
      {"utf8", "u", K_BINARY, 0, 1, 0},
      {"largeutf8", "U", K_BINARY, 1, 1, 0},
      {"binaryview", "vz", K_VIEW, 0, 0, 0},
      {"utf8view", "vu", K_VIEW, 0, 1, 0},
      {"list", "+l", K_LIST, 0, 0, 1},
      {"largelist", "+L", K_LIST, 1, 0, 1},
      {"listview", "+vl", K_LIST_VIEW, 0, 0, 1},
      {"largelistview", "+vL", K_LIST_VIEW, 1, 0, 1},
      {"struct", "+s", K_STRUCT, 0, 0, SIZE_MAX},
      {"runendencoded", "+r", K_RUN_END, 0, 0, 2},
  };
  for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
    if (strcmp(name, simple[i].name) != 0) continue;
    if (check_keys(c, type, name, KEYS("name")) != 0) return -1;
    t->kind = simple[i].kind;
    t->large = simple[i].large;
    t->utf8 = simple[i].utf8;
    t->n_children = simple[i].n_children;
    snprintf(t->format, sizeof(t->format), "%s", simple[i].format);
    return 0;
  }
  return fail(c, -1, "type \"%s\" is not known to the comparator", name);
}

static int parse_type(cmp *c, json_t *type, jtype *t) {
  memset(t, 0, sizeof(*t));
  const char *name;
  if (!json_is_object(type)) return fail(c, -1, "field \"type\" is missing or not an object");
  if (get_string(c, type, "name", "type", &name) != 0) return -1;
  t->name = name;
  t->n_children = 0;
  if (strcmp(name, "int") == 0) return parse_int_type(c, type, t);
  if (strcmp(name, "decimal") == 0) return parse_decimal_type(c, type, t);
  if (strcmp(name, "date") == 0 || strcmp(name, "time") == 0 || strcmp(name, "timestamp") == 0 ||
      strcmp(name, "duration") == 0 || strcmp(name, "interval") == 0)
    return parse_temporal_type(c, type, name, t);
  if (strcmp(name, "union") == 0) return parse_union_type(c, type, t);
  if (strcmp(name, "bool") == 0) {
    if (check_keys(c, type, "bool type", KEYS("name")) != 0) return -1;
    set_fixed(t, V_BOOL, 0, "b");
    return 0;
  }
  if (strcmp(name, "floatingpoint") == 0) {
    const char *p;
    if (check_keys(c, type, "floatingpoint type", KEYS("name", "precision")) != 0 ||
        get_string(c, type, "precision", "floatingpoint type", &p) != 0)
      return -1;
    if (strcmp(p, "HALF") == 0)
      set_fixed(t, V_HALF, 2, "e");
    else if (strcmp(p, "SINGLE") == 0)
      set_fixed(t, V_FLOAT, 4, "f");
    else if (strcmp(p, "DOUBLE") == 0)
      set_fixed(t, V_DOUBLE, 8, "g");
    else
      return fail(c, -1, "floatingpoint type: unknown precision \"%s\"", p);
    return 0;
  }
  if (strcmp(name, "fixedsizebinary") == 0) {
    int64_t width;
    if (check_keys(c, type, "fixedsizebinary type", KEYS("name", "byteWidth")) != 0 ||
        get_int(c, type, "byteWidth", "fixedsizebinary type", &width) != 0)
      return -1;
    if (width < 0 || width > INT32_MAX) return fail(c, -1, "fixedsizebinary: bad byteWidth");
    char format[32];
    snprintf(format, sizeof(format), "w:%" PRId64, width);
    set_fixed(t, V_FIXED_BINARY, (int)width, format);
    return 0;
  }
  if (strcmp(name, "fixedsizelist") == 0) {
    if (check_keys(c, type, "fixedsizelist type", KEYS("name", "listSize")) != 0 ||
        get_int(c, type, "listSize", "fixedsizelist type", &t->list_size) != 0)
      return -1;
    if (t->list_size < 0 || t->list_size > INT32_MAX)
      return fail(c, -1, "fixedsizelist: bad listSize");
    t->kind = K_FIXED_LIST;
    t->n_children = 1;
    snprintf(t->format, sizeof(t->format), "+w:%" PRId64, t->list_size);
    return 0;
  }
  if (strcmp(name, "map") == 0) {
    if (check_keys(c, type, "map type", KEYS("name", "keysSorted")) != 0 ||
        get_bool(c, type, "keysSorted", "map type", &t->keys_sorted) != 0)
      return -1;
    t->kind = K_MAP;
    t->n_children = 1;
    snprintf(t->format, sizeof(t->format), "+m");
    return 0;
  }
  return parse_simple_type(c, type, name, t);
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */

typedef struct field_view {
  const char *name;
  int nullable;
  json_t *type;
  json_t *children;   /* JSON array of child fields */
  json_t *dictionary; /* the "dictionary" object, or NULL */
  json_t *metadata;   /* may be NULL or json null */
} field_view;

static int field_view_init(cmp *c, json_t *field, field_view *fv) {
  if (!json_is_object(field)) return fail(c, -1, "a field is not a JSON object");
  if (check_keys(c, field, "field",
                 KEYS("name", "nullable", "type", "children", "dictionary", "metadata")) != 0 ||
      get_string(c, field, "name", "field", &fv->name) != 0 ||
      get_bool(c, field, "nullable", "field", &fv->nullable) != 0)
    return -1;
  fv->type = json_object_get(field, "type");
  fv->children = json_object_get(field, "children");
  fv->dictionary = json_object_get(field, "dictionary");
  fv->metadata = json_object_get(field, "metadata");
  if (fv->children && !json_is_array(fv->children))
    return fail(c, -1, "field \"%s\": children is not an array", fv->name);
  if (fv->dictionary && json_is_null(fv->dictionary)) fv->dictionary = NULL;
  return 0;
}

static size_t field_n_children(const field_view *fv) {
  return fv->children ? json_array_size(fv->children) : 0;
}

/* Parses the field's (value) type and checks its number of children. */
static int parse_field_type(cmp *c, const field_view *fv, jtype *t) {
  if (parse_type(c, fv->type, t) != 0) return -1;
  size_t n = field_n_children(fv);
  if (t->n_children != SIZE_MAX && n != t->n_children)
    return fail(c, -1, "type %s has %zu children in the JSON, expected %zu", t->name, n,
                t->n_children);
  return 0;
}

typedef struct dictionary_info {
  int64_t id;
  int ordered;
  jtype index; /* an int type */
} dictionary_info;

static int parse_dictionary(cmp *c, json_t *dict, dictionary_info *d) {
  if (!json_is_object(dict)) return fail(c, -1, "\"dictionary\" is not an object");
  if (check_keys(c, dict, "dictionary", KEYS("id", "indexType", "isOrdered")) != 0 ||
      get_int(c, dict, "id", "dictionary", &d->id) != 0 ||
      get_bool(c, dict, "isOrdered", "dictionary", &d->ordered) != 0 ||
      parse_type(c, json_object_get(dict, "indexType"), &d->index) != 0)
    return -1;
  if (d->index.kind != K_FIXED || d->index.enc != V_INT)
    return fail(c, -1, "dictionary indexType is %s, not an int", d->index.name);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Schema                                                                    */

static int32_t read_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

/* One key or value of ArrowSchema.metadata. */
typedef struct meta_str {
  const char *p;
  int32_t len;
} meta_str;

static int meta_equals(meta_str m, json_t *js) {
  return m.len >= 0 && (size_t)m.len == json_string_length(js) &&
         memcmp(m.p, json_string_value(js), (size_t)m.len) == 0;
}

/* ArrowSchema.metadata: int32 count, then per pair int32 length + key bytes,
 * int32 length + value bytes.  NULL means no metadata, like an empty list.
 * The pairs are compared as a multiset: Arrow's own metadata equality does
 * not depend on the order, and writers do reorder them (Arrow C++ puts
 * ARROW:extension:metadata before ARROW:extension:name in the IPC file of
 * generated_extension while its JSON lists them the other way round). */
static int compare_metadata(cmp *c, json_t *jmeta, const char *meta, const char *what) {
  size_t expected = 0;
  if (jmeta && !json_is_null(jmeta)) {
    if (!json_is_array(jmeta)) return fail(c, -1, "%s metadata is not a list", what);
    expected = json_array_size(jmeta);
  }
  int32_t found = meta ? read_i32(meta) : 0;
  if (found < 0 || (size_t)found != expected)
    return fail(c, -1, "%s metadata: expected %zu pairs, found %" PRId32, what, expected, found);
  if (expected == 0) return 0;
  meta_str(*pairs)[2] = calloc(expected, sizeof(*pairs));
  char *used = calloc(expected, 1);
  int rc = 0;
  if (!pairs || !used) {
    rc = fail(c, -1, "out of memory");
    goto done;
  }
  const char *p = meta + 4;
  for (size_t i = 0; i < expected; i++) {
    for (int part = 0; part < 2; part++) {
      pairs[i][part].len = read_i32(p);
      pairs[i][part].p = p + 4;
      if (pairs[i][part].len < 0) {
        rc = fail(c, -1, "%s metadata pair %zu: negative length", what, i);
        goto done;
      }
      p += 4 + pairs[i][part].len;
    }
  }
  for (size_t i = 0; i < expected && rc == 0; i++) {
    json_t *pair = json_array_get(jmeta, i), *key, *value;
    if (!json_is_object(pair) || !json_is_string(key = json_object_get(pair, "key")) ||
        !json_is_string(value = json_object_get(pair, "value"))) {
      rc = fail(c, -1, "%s metadata pair %zu is not {\"key\": string, \"value\": string}", what, i);
      break;
    }
    if ((rc = check_keys(c, pair, "metadata pair", KEYS("key", "value"))) != 0) break;
    size_t k = 0;
    while (k < expected &&
           (used[k] || !meta_equals(pairs[k][0], key) || !meta_equals(pairs[k][1], value)))
      k++;
    if (k == expected) {
      rc = fail(c, -1, "%s metadata: pair \"%s\" = \"%s\" is missing", what, json_string_value(key),
                json_string_value(value));
      break;
    }
    used[k] = 1;
  }
done:
  free(pairs);
  free(used);
  return rc;
}

/* alt_name: a name the ArrowSchema may carry instead of the JSON's (NULL:
 * none); child_alts: the same for the field's children (NULL: none). */
static int compare_field_schema(cmp *c, json_t *jfield, const struct ArrowSchema *s,
                                const char *alt_name, const char *const *child_alts);

static int check_format(cmp *c, const jtype *t, const char *format, const char *what) {
  if (!format) return fail(c, -1, "%s format is NULL, expected \"%s\"", what, t->format);
  if (strcmp(format, t->format) != 0 && !(t->alt_format[0] && strcmp(format, t->alt_format) == 0))
    return fail(c, -1, "%s format: expected \"%s\" (JSON type %s), found \"%s\"", what, t->format,
                t->name, format);
  return 0;
}

/* Entry i of a NULL-terminated list, or NULL past its end. */
static const char *alt_at(const char *const *alts, size_t i) {
  for (size_t k = 0; alts && alts[k]; k++)
    if (k == i) return alts[k];
  return NULL;
}

/* The (value) type of a field: format, map flag, children. */
static int compare_type_schema(cmp *c, const field_view *fv, const struct ArrowSchema *s,
                               const char *const *child_alts) {
  jtype t;
  if (parse_field_type(c, fv, &t) != 0 || check_format(c, &t, s->format, "type") != 0) return -1;
  int sorted = (s->flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0;
  if (t.kind == K_MAP && sorted != t.keys_sorted)
    return fail(c, -1, "map keysSorted: expected %d, found flag %d", t.keys_sorted, sorted);
  if (t.kind != K_MAP && sorted) return fail(c, -1, "MAP_KEYS_SORTED flag set on a non-map");
  size_t n = field_n_children(fv);
  if (s->n_children < 0 || (size_t)s->n_children != n)
    return fail(c, -1, "expected %zu children, found %" PRId64, n, s->n_children);
  if (n && !s->children) return fail(c, -1, "children pointer is NULL");
  /* A map's entries may carry Arrow's canonical names when the caller
   * allows it (see arrow_json_accept_canonical_map_names). */
  int canonical_map = t.kind == K_MAP && c->doc->canonical_map_names;
  for (size_t i = 0; i < n; i++)
    if (compare_field_schema(c, json_array_get(fv->children, i), s->children[i],
                             canonical_map ? "entries" : alt_at(child_alts, i),
                             canonical_map ? KEYS("key", "value") : NULL) != 0)
      return -1;
  return 0;
}

static int compare_field_schema(cmp *c, json_t *jfield, const struct ArrowSchema *s,
                                const char *alt_name, const char *const *child_alts) {
  field_view fv;
  if (field_view_init(c, jfield, &fv) != 0) return -1;
  size_t mark = path_push_name(c, fv.name);
  int rc = -1;
  if (!s) {
    note_mismatch(c, -1, "ArrowSchema is NULL");
    goto done;
  }
  const char *name = s->name ? s->name : "";
  if (strcmp(name, fv.name) != 0 && !(alt_name && strcmp(name, alt_name) == 0)) {
    note_mismatch(c, -1, "field name: expected \"%s\", found \"%s\"", fv.name, name);
    goto done;
  }
  if (s->flags & ~(int64_t)(ARROW_FLAG_DICTIONARY_ORDERED | ARROW_FLAG_NULLABLE |
                            ARROW_FLAG_MAP_KEYS_SORTED)) {
    note_mismatch(c, -1, "unknown flags 0x%" PRIx64, (uint64_t)s->flags);
    goto done;
  }
  int nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  if (nullable != fv.nullable) {
    note_mismatch(c, -1, "nullable: expected %d, found %d", fv.nullable, nullable);
    goto done;
  }
  if (compare_metadata(c, fv.metadata, s->metadata, "field") != 0) goto done;
  int ordered = (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
  if (fv.dictionary) {
    dictionary_info d;
    if (parse_dictionary(c, fv.dictionary, &d) != 0 ||
        check_format(c, &d.index, s->format, "dictionary index") != 0)
      goto done;
    if (ordered != d.ordered) {
      note_mismatch(c, -1, "dictionary isOrdered: expected %d, found flag %d", d.ordered, ordered);
      goto done;
    }
    if (s->n_children != 0 || !s->dictionary) {
      note_mismatch(c, -1,
                    "dictionary-encoded field: expected 0 children and a dictionary, found %" PRId64
                    " children and %s dictionary",
                    s->n_children, s->dictionary ? "a" : "no");
      goto done;
    }
    size_t dmark = path_push(c, "{dictionary %" PRId64 "}", d.id);
    rc = compare_type_schema(c, &fv, s->dictionary, child_alts);
    if (rc == 0 && s->dictionary->dictionary)
      rc = fail(c, -1, "the dictionary's value type has a dictionary itself");
    path_pop(c, dmark);
    goto done;
  }
  if (ordered) {
    note_mismatch(c, -1, "DICTIONARY_ORDERED flag set on a field that is not dictionary-encoded");
    goto done;
  }
  if (s->dictionary) {
    note_mismatch(c, -1, "has a dictionary, but the JSON field is not dictionary-encoded");
    goto done;
  }
  rc = compare_type_schema(c, &fv, s, child_alts);
done:
  path_pop(c, mark);
  return rc;
}

int arrow_json_compare_schema(const arrow_json *doc, const struct ArrowSchema *schema, char *msg,
                              size_t msgsz) {
  cmp c;
  cmp_init(&c, doc, msg, msgsz);
  snprintf(c.where, sizeof(c.where), "schema");
  if (!schema || !schema->release) return fail(&c, -1, "schema is NULL or released");
  if (!schema->format || strcmp(schema->format, "+s") != 0)
    return fail(&c, -1, "top-level format: expected \"+s\", found \"%s\"",
                schema->format ? schema->format : "(null)");
  if (compare_metadata(&c, doc->metadata, schema->metadata, "schema") != 0) return -1;
  size_t n = json_array_size(doc->fields);
  if (schema->n_children < 0 || (size_t)schema->n_children != n)
    return fail(&c, -1, "expected %zu fields, found %" PRId64, n, schema->n_children);
  if (schema->dictionary) return fail(&c, -1, "top-level schema has a dictionary");
  for (size_t i = 0; i < n; i++)
    if (compare_field_schema(&c, json_array_get(doc->fields, i), schema->children[i], NULL, NULL) !=
        0)
      return -1;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */

static int get_bit(const void *bits, int64_t i) {
  return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

static int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

/* Index of the first byte where hex (2*n digits, any case) and data differ,
 * -1 when equal, -2 when hex is not 2*n hex digits. */
static int64_t hex_mismatch(const char *hex, size_t hexlen, const uint8_t *data, size_t n) {
  if (hexlen != 2 * n) return -2;
  for (size_t i = 0; i < n; i++) {
    int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return -2;
    if ((hi << 4 | lo) != data[i]) return (int64_t)i;
  }
  return -1;
}

/* Two's complement little-endian integer of width bytes, as a decimal
 * string (out: at least 82 bytes). */
static void decimal_to_string(const uint8_t *p, int width, char *out) {
  uint32_t limb[8];
  int n = width / 4, negative;
  memcpy(limb, p, (size_t)width);
  negative = (limb[n - 1] >> 31) & 1;
  if (negative) { /* negate: invert and add one */
    uint64_t carry = 1;
    for (int i = 0; i < n; i++) {
      uint64_t x = (uint64_t)(uint32_t)~limb[i] + carry;
      limb[i] = (uint32_t)x;
      carry = x >> 32;
    }
  }
  char digits[96];
  int nd = 0, nonzero;
  do { /* divide by 10^9, nine digits per step, least significant first */
    uint64_t rem = 0;
    nonzero = 0;
    for (int i = n - 1; i >= 0; i--) {
      uint64_t cur = (rem << 32) | limb[i];
      limb[i] = (uint32_t)(cur / 1000000000u);
      rem = cur % 1000000000u;
      nonzero |= limb[i] != 0;
    }
    for (int k = 0; k < 9; k++, rem /= 10) digits[nd++] = (char)('0' + rem % 10);
  } while (nonzero);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  int len = 0;
  if (negative) out[len++] = '-';
  while (nd > 0) out[len++] = digits[--nd];
  out[len] = '\0';
}

/* The canonical spelling of a JSON decimal integer (a string or a number):
 * no '+', no leading zeros, no "-0".  Returns -1 if it is not an integer. */
static int canonical_decimal(json_t *v, char *out, size_t outsz) {
  char buf[128];
  const char *s;
  if (json_is_integer(v)) {
    snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    s = buf;
  } else if (json_is_string(v)) {
    s = json_string_value(v);
  } else {
    return -1;
  }
  int negative = *s == '-';
  if (*s == '-' || *s == '+') s++;
  if (!*s) return -1;
  for (const char *q = s; *q; q++)
    if (*q < '0' || *q > '9') return -1;
  while (s[0] == '0' && s[1]) s++;
  if (strcmp(s, "0") == 0) negative = 0;
  if ((size_t)snprintf(out, outsz, "%s%s", negative ? "-" : "", s) >= outsz) return -1;
  return 0;
}

/* A native-endian integer of 1, 2, 4 or 8 bytes, sign- or zero-extended
 * (8-byte unsigned values come back as their bit pattern). */
static int64_t read_int(const uint8_t *p, int width, int is_signed) {
  uint64_t bits = 0;
  memcpy(&bits, p, (size_t)width); /* little-endian: low bytes first */
  if (width < 8 && is_signed && (bits >> (8 * width - 1)) & 1) bits |= ~(uint64_t)0 << (8 * width);
  return (int64_t)bits;
}

static int compare_int_value(cmp *c, int64_t slot, const char *what, json_t *jv, const uint8_t *p,
                             int width, int is_signed) {
  if (!is_signed && width == 8) {
    uint64_t want, found;
    memcpy(&found, p, 8);
    if (json_as_u64(jv, &want) != 0) return fail(c, slot, "%s: JSON value is not a uint64", what);
    if (want != found)
      return fail(c, slot, "%s: expected %" PRIu64 ", found %" PRIu64, what, want, found);
    return 0;
  }
  int64_t want, found = read_int(p, width, is_signed);
  if (json_as_i64(jv, &want) != 0) return fail(c, slot, "%s: JSON value is not an integer", what);
  if (want != found)
    return fail(c, slot, "%s: expected %" PRId64 ", found %" PRId64, what, want, found);
  return 0;
}

/* A JSON object value ({"days":..., "milliseconds":...}) against the
 * consecutive little fields of one interval value. */
static int compare_interval_value(cmp *c, int64_t slot, json_t *jv, const uint8_t *p,
                                  const char *const *keys, const int *widths) {
  if (!json_is_object(jv)) return fail(c, slot, "DATA: JSON interval value is not an object");
  if (check_keys(c, jv, "interval value", keys) != 0) return -1;
  for (int k = 0; keys[k]; k++) {
    json_t *part = json_object_get(jv, keys[k]);
    char what[64];
    snprintf(what, sizeof(what), "DATA.%s", keys[k]);
    if (!part) return fail(c, slot, "DATA: interval value has no \"%s\"", keys[k]);
    if (compare_int_value(c, slot, what, part, p, widths[k], 1) != 0) return -1;
    p += widths[k];
  }
  return 0;
}

static int compare_fixed_value(cmp *c, int64_t slot, const jtype *t, json_t *jv, const uint8_t *p) {
  switch (t->enc) {
    case V_INT: return compare_int_value(c, slot, "DATA", jv, p, t->width, t->is_signed);
    case V_HALF: /* the bits, an integer: what Arrow JS writes and reads, not the value */
      return compare_int_value(c, slot, "DATA", jv, p, 2, 0);
    case V_FLOAT: {
      float found, want;
      memcpy(&found, p, 4);
      if (!json_is_number(jv)) return fail(c, slot, "DATA: JSON value is not a number");
      want = (float)json_number_value(jv);
      if (memcmp(&want, &found, 4) != 0)
        return fail(c, slot, "DATA: expected %.9g, found %.9g", want, found);
      return 0;
    }
    case V_DOUBLE: {
      double found, want;
      memcpy(&found, p, 8);
      if (!json_is_number(jv)) return fail(c, slot, "DATA: JSON value is not a number");
      want = json_number_value(jv);
      if (memcmp(&want, &found, 8) != 0)
        return fail(c, slot, "DATA: expected %.17g, found %.17g", want, found);
      return 0;
    }
    case V_DECIMAL: {
      char want[128], found[96];
      if (canonical_decimal(jv, want, sizeof(want)) != 0)
        return fail(c, slot, "DATA: JSON value is not a decimal integer");
      decimal_to_string(p, t->width, found);
      if (strcmp(want, found) != 0)
        return fail(c, slot, "DATA: expected %s, found %s", want, found);
      return 0;
    }
    case V_DAY_TIME:
      return compare_interval_value(c, slot, jv, p, KEYS("days", "milliseconds"),
                                    (const int[]){4, 4});
    case V_MONTH_DAY_NANO:
      return compare_interval_value(c, slot, jv, p, KEYS("months", "days", "nanoseconds"),
                                    (const int[]){4, 4, 8});
    case V_FIXED_BINARY: {
      char preview[64];
      if (!json_is_string(jv)) return fail(c, slot, "DATA: JSON value is not a hex string");
      int64_t at = hex_mismatch(json_string_value(jv), json_string_length(jv), p, (size_t)t->width);
      if (at == -2) return fail(c, slot, "DATA: JSON value is not %d bytes of hex", t->width);
      if (at >= 0)
        return fail(c, slot, "DATA: byte %" PRId64 " differs: expected %.64s, found %s", at,
                    json_string_value(jv), hex_preview(p, (size_t)t->width, preview));
      return 0;
    }
    case V_BOOL: break;
  }
  return fail(c, slot, "internal: unexpected value encoding");
}

/* ------------------------------------------------------------------------ */
/* Columns                                                                   */

enum {
  KEY_VALIDITY = 1,
  KEY_DATA = 2,
  KEY_OFFSET = 4,
  KEY_TYPE_ID = 8,
  KEY_SIZE = 16,
  KEY_VIEWS = 32,
  KEY_VARIADIC = 64,
  KEY_CHILDREN = 128
};

static const struct {
  const char *name;
  unsigned bit;
} column_keys[] = {
    {"VALIDITY", KEY_VALIDITY},
    {"DATA", KEY_DATA},
    {"OFFSET", KEY_OFFSET},
    {"TYPE_ID", KEY_TYPE_ID},
    {"SIZE", KEY_SIZE},
    {"VIEWS", KEY_VIEWS},
    {"VARIADIC_DATA_BUFFERS", KEY_VARIADIC},
    {"children", KEY_CHILDREN},
};

/* Every key of the JSON column must be one this type uses. */
static int check_column_keys(cmp *c, json_t *jcol, const char *type_name, unsigned used) {
  const char *key;
  json_t *value;
  json_object_foreach(jcol, key, value) {
    (void)value;
    if (strcmp(key, "name") == 0 || strcmp(key, "count") == 0) continue;
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof(column_keys) / sizeof(column_keys[0]); i++)
      if (strcmp(key, column_keys[i].name) == 0) bit = column_keys[i].bit;
    if (!(bit & used))
      return fail(c, -1, "JSON key \"%s\" is not known to the comparator for type %s", key,
                  type_name);
  }
  return 0;
}

/* What a column must look like as an ArrowArray. */
static int check_layout(cmp *c, const struct ArrowArray *a, int64_t n_buffers, int64_t n_children) {
  if (a->n_buffers != n_buffers)
    return fail(c, -1, "expected %" PRId64 " buffers, found %" PRId64, n_buffers, a->n_buffers);
  if (n_buffers && !a->buffers) return fail(c, -1, "buffers pointer is NULL");
  if (a->n_children != n_children)
    return fail(c, -1, "expected %" PRId64 " children, found %" PRId64, n_children, a->n_children);
  if (n_children && !a->children) return fail(c, -1, "children pointer is NULL");
  for (int64_t i = 0; i < n_children; i++)
    if (!a->children[i]) return fail(c, -1, "child %" PRId64 " is NULL", i);
  return 0;
}

/* A buffer that slots will be read from must exist (a NULL buffer is only
 * allowed when nothing is read from it). */
static int need_buffer(cmp *c, const struct ArrowArray *a, int index, const char *what) {
  if (!a->buffers[index])
    return fail(c, -1, "buffer %d (%s) is NULL but holds values", index, what);
  return 0;
}

/* The whole ArrowArray, not a window of it, is described by the column. */
static int whole(const struct ArrowArray *a, int64_t start, int64_t count) {
  return start == 0 && a->offset == 0 && a->length == count;
}

static int compare_validity(cmp *c, json_t *jcol, const struct ArrowArray *a, int64_t start,
                            int64_t count) {
  json_t *jv;
  if (get_array(c, jcol, "VALIDITY", (size_t)count, &jv) != 0) return -1;
  const void *bits = a->buffers[0];
  int64_t nulls = 0;
  for (int64_t i = 0; i < count; i++) {
    json_t *e = json_array_get(jv, (size_t)i);
    int64_t want;
    if (json_as_i64(e, &want) != 0 || (want != 0 && want != 1))
      return fail(c, i, "VALIDITY: JSON entry is not 0 or 1");
    int found = bits ? get_bit(bits, a->offset + start + i) : 1;
    if (found != want)
      return fail(c, i, "VALIDITY: expected %s, found %s%s", want ? "valid" : "null",
                  found ? "valid" : "null", bits ? "" : " (no validity buffer)");
    nulls += !want;
  }
  if (whole(a, start, count) && a->null_count != nulls)
    return fail(c, -1, "null_count: expected %" PRId64 ", found %" PRId64, nulls, a->null_count);
  return 0;
}

static int slot_valid(json_t *jcol, int64_t i) {
  return json_integer_value(json_array_get(json_object_get(jcol, "VALIDITY"), (size_t)i)) != 0;
}

/* Integer entries (offsets, sizes, type ids) compared for every slot, null
 * or not: they shape the data even under a null. */
static int compare_int_entries(cmp *c, const char *key, json_t *jarr, const void *buf, int width,
                               int64_t first, int64_t n) {
  if (n == 0) return 0; /* buf may be NULL (NULL + 0 is undefined) */
  const uint8_t *p = (const uint8_t *)buf + first * width;
  for (int64_t i = 0; i < n; i++)
    if (compare_int_value(c, i, key, json_array_get(jarr, (size_t)i), p + i * width, width, 1) != 0)
      return -1;
  return 0;
}

/* OFFSET with count+1 entries.  A zero-length array may carry no offsets
 * at all (a NULL buffer), which the C Data Interface allows for empty
 * buffers; the JSON then holds [0] or []. */
static int compare_offsets(cmp *c, json_t *jcol, const struct ArrowArray *a, int index, int large,
                           int64_t start, int64_t count) {
  json_t *jo = json_object_get(jcol, "OFFSET");
  if (!json_is_array(jo)) return fail(c, -1, "OFFSET is missing or not an array");
  if (count == 0 && json_array_size(jo) == 0) return 0;
  if (get_array(c, jcol, "OFFSET", (size_t)count + 1, &jo) != 0) return -1;
  if (!a->buffers[index]) {
    int64_t only;
    if (count == 0 && json_as_i64(json_array_get(jo, 0), &only) == 0 && only == 0) return 0;
    return need_buffer(c, a, index, "offsets");
  }
  return compare_int_entries(c, "OFFSET", jo, a->buffers[index], large ? 8 : 4, a->offset + start,
                             count + 1);
}

static int64_t read_offset(const struct ArrowArray *a, int index, int large, int64_t i) {
  return read_int((const uint8_t *)a->buffers[index] + i * (large ? 8 : 4), large ? 8 : 4, 1);
}

static int compare_column(cmp *c, const field_view *fv, json_t *jcol, const struct ArrowArray *a,
                          int64_t start, int exact, int check_name);

/* The children of a nested column, each shifted by child_start. */
static int compare_children(cmp *c, const field_view *fv, json_t *jcol, const struct ArrowArray *a,
                            int64_t child_start, int exact) {
  size_t n = field_n_children(fv);
  json_t *jchildren;
  if (get_array(c, jcol, "children", n, &jchildren) != 0) return -1;
  for (size_t i = 0; i < n; i++) {
    field_view child;
    if (field_view_init(c, json_array_get(fv->children, i), &child) != 0 ||
        compare_column(c, &child, json_array_get(jchildren, i), a->children[i], child_start, exact,
                       1) != 0)
      return -1;
  }
  return 0;
}

static int compare_fixed_column(cmp *c, const jtype *t, json_t *jcol, const struct ArrowArray *a,
                                int64_t start, int64_t count) {
  json_t *jd;
  if (check_layout(c, a, 2, 0) != 0 || compare_validity(c, jcol, a, start, count) != 0 ||
      get_array(c, jcol, "DATA", (size_t)count, &jd) != 0)
    return -1;
  if (count > 0 && need_buffer(c, a, 1, "values") != 0) return -1;
  for (int64_t i = 0; i < count; i++) {
    if (!slot_valid(jcol, i)) continue;
    json_t *jv = json_array_get(jd, (size_t)i);
    int64_t at = a->offset + start + i;
    if (t->enc == V_BOOL) {
      int want;
      if (json_is_boolean(jv))
        want = json_is_true(jv);
      else if (json_is_integer(jv) && (json_integer_value(jv) & ~1) == 0)
        want = (int)json_integer_value(jv);
      else
        return fail(c, i, "DATA: JSON value is not a boolean");
      int found = get_bit(a->buffers[1], at);
      if (want != found)
        return fail(c, i, "DATA: expected %s, found %s", want ? "true" : "false",
                    found ? "true" : "false");
      continue;
    }
    if (compare_fixed_value(c, i, t, jv, (const uint8_t *)a->buffers[1] + at * t->width) != 0)
      return -1;
  }
  return 0;
}

/* A valid slot's bytes: a JSON string (utf8) or hex (binary). */
static int compare_bytes(cmp *c, int64_t slot, const char *what, int utf8, json_t *jv,
                         const uint8_t *p, int64_t len) {
  char preview[64];
  if (!json_is_string(jv)) return fail(c, slot, "%s: JSON value is not a string", what);
  const char *s = json_string_value(jv);
  size_t slen = json_string_length(jv);
  if (utf8) {
    if ((int64_t)slen != len || (len && memcmp(s, p, (size_t)len) != 0))
      return fail(c, slot, "%s: expected \"%.64s\" (%zu bytes), found \"%.*s\" (%" PRId64 " bytes)",
                  what, s, slen, (int)(len < 64 ? len : 64), (const char *)p, len);
    return 0;
  }
  int64_t at = hex_mismatch(s, slen, p, (size_t)len);
  if (at != -1)
    return fail(c, slot, "%s: expected %.64s (%zu bytes), found %s (%" PRId64 " bytes)", what, s,
                slen / 2, hex_preview(p, (size_t)len, preview), len);
  return 0;
}

static int compare_binary_column(cmp *c, const jtype *t, json_t *jcol, const struct ArrowArray *a,
                                 int64_t start, int64_t count) {
  json_t *jd;
  if (check_layout(c, a, 3, 0) != 0 || compare_validity(c, jcol, a, start, count) != 0 ||
      compare_offsets(c, jcol, a, 1, t->large, start, count) != 0 ||
      get_array(c, jcol, "DATA", (size_t)count, &jd) != 0)
    return -1;
  for (int64_t i = 0; i < count; i++) {
    if (!slot_valid(jcol, i)) continue;
    int64_t at = a->offset + start + i;
    int64_t begin = read_offset(a, 1, t->large, at), end = read_offset(a, 1, t->large, at + 1);
    if (end < begin) return fail(c, i, "OFFSET: end %" PRId64 " < start %" PRId64, end, begin);
    if (end > begin && need_buffer(c, a, 2, "data") != 0) return -1;
    const uint8_t *p = end > begin ? (const uint8_t *)a->buffers[2] + begin : (const uint8_t *)"";
    if (compare_bytes(c, i, "DATA", t->utf8, json_array_get(jd, (size_t)i), p, end - begin) != 0)
      return -1;
  }
  return 0;
}

/* Binary/utf8 views: buffers are validity, views, the variadic data
 * buffers, then an int64 array with the variadic buffers' sizes. */
static int compare_view_column(cmp *c, const jtype *t, json_t *jcol, const struct ArrowArray *a,
                               int64_t start, int64_t count) {
  json_t *jviews, *jbufs = json_object_get(jcol, "VARIADIC_DATA_BUFFERS");
  if (!json_is_array(jbufs)) return fail(c, -1, "VARIADIC_DATA_BUFFERS is missing or not an array");
  int64_t nv = (int64_t)json_array_size(jbufs);
  if (check_layout(c, a, 3 + nv, 0) != 0 || compare_validity(c, jcol, a, start, count) != 0 ||
      get_array(c, jcol, "VIEWS", (size_t)count, &jviews) != 0)
    return -1;
  if (nv > 0 && need_buffer(c, a, (int)(2 + nv), "variadic buffer sizes") != 0) return -1;
  const int64_t *sizes = a->buffers[2 + nv];
  for (int64_t j = 0; j < nv; j++) {
    json_t *jb = json_array_get(jbufs, (size_t)j);
    char what[64];
    snprintf(what, sizeof(what), "VARIADIC_DATA_BUFFERS[%" PRId64 "]", j);
    if (!json_is_string(jb)) return fail(c, -1, "%s is not a hex string", what);
    if (sizes[j] != (int64_t)json_string_length(jb) / 2)
      return fail(c, -1, "%s: size expected %zu, found %" PRId64, what, json_string_length(jb) / 2,
                  sizes[j]);
    if (sizes[j] && need_buffer(c, a, (int)(2 + j), "variadic data") != 0) return -1;
    if (compare_bytes(c, -1, what, 0, jb, sizes[j] ? a->buffers[2 + j] : (const void *)"",
                      sizes[j]) != 0)
      return -1;
  }
  if (count > 0 && need_buffer(c, a, 1, "views") != 0) return -1;
  for (int64_t i = 0; i < count; i++) {
    if (!slot_valid(jcol, i)) continue;
    const uint8_t *view = (const uint8_t *)a->buffers[1] + (a->offset + start + i) * 16;
    json_t *jv = json_array_get(jviews, (size_t)i);
    int64_t size;
    if (!json_is_object(jv)) return fail(c, i, "VIEWS: JSON view is not an object");
    if (check_keys(c, jv, "view", KEYS("SIZE", "INLINED", "PREFIX_HEX", "BUFFER_INDEX", "OFFSET")))
      return -1;
    if (get_int(c, jv, "SIZE", "view", &size) != 0 ||
        compare_int_value(c, i, "VIEWS.SIZE", json_object_get(jv, "SIZE"), view, 4, 1) != 0)
      return -1;
    if (size <= 12) {
      if (compare_bytes(c, i, "VIEWS.INLINED", t->utf8, json_object_get(jv, "INLINED"), view + 4,
                        size) != 0)
        return -1;
      continue;
    }
    if (compare_bytes(c, i, "VIEWS.PREFIX_HEX", 0, json_object_get(jv, "PREFIX_HEX"), view + 4,
                      4) ||
        compare_int_value(c, i, "VIEWS.BUFFER_INDEX", json_object_get(jv, "BUFFER_INDEX"), view + 8,
                          4, 1) ||
        compare_int_value(c, i, "VIEWS.OFFSET", json_object_get(jv, "OFFSET"), view + 12, 4, 1))
      return -1;
  }
  return 0;
}

static int compare_list_column(cmp *c, const jtype *t, const field_view *fv, json_t *jcol,
                               const struct ArrowArray *a, int64_t start, int64_t count) {
  if (check_layout(c, a, 2, 1) != 0 || compare_validity(c, jcol, a, start, count) != 0 ||
      compare_offsets(c, jcol, a, 1, t->large, start, count) != 0)
    return -1;
  return compare_children(c, fv, jcol, a, 0, 1);
}

static int compare_list_view_column(cmp *c, const jtype *t, const field_view *fv, json_t *jcol,
                                    const struct ArrowArray *a, int64_t start, int64_t count) {
  json_t *jo, *js;
  int width = t->large ? 8 : 4;
  if (check_layout(c, a, 3, 1) != 0 || compare_validity(c, jcol, a, start, count) != 0 ||
      get_array(c, jcol, "OFFSET", (size_t)count, &jo) != 0 ||
      get_array(c, jcol, "SIZE", (size_t)count, &js) != 0)
    return -1;
  if (count > 0 && (need_buffer(c, a, 1, "offsets") || need_buffer(c, a, 2, "sizes"))) return -1;
  if (compare_int_entries(c, "OFFSET", jo, a->buffers[1], width, a->offset + start, count) != 0 ||
      compare_int_entries(c, "SIZE", js, a->buffers[2], width, a->offset + start, count) != 0)
    return -1;
  return compare_children(c, fv, jcol, a, 0, 1);
}

static int compare_fixed_list_column(cmp *c, const jtype *t, const field_view *fv, json_t *jcol,
                                     const struct ArrowArray *a, int64_t start, int64_t count,
                                     int exact) {
  if (check_layout(c, a, 1, 1) != 0 || compare_validity(c, jcol, a, start, count) != 0) return -1;
  json_t *jchildren = json_object_get(jcol, "children");
  int64_t child_count;
  if (json_is_array(jchildren) && json_array_size(jchildren) == 1 &&
      json_as_i64(json_object_get(json_array_get(jchildren, 0), "count"), &child_count) == 0 &&
      child_count != count * t->list_size)
    return fail(c, -1, "JSON child count %" PRId64 " is not count %" PRId64 " * listSize %" PRId64,
                child_count, count, t->list_size);
  int64_t child_start = (a->offset + start) * t->list_size;
  return compare_children(c, fv, jcol, a, child_start, exact && child_start == 0);
}

static int compare_struct_column(cmp *c, const field_view *fv, json_t *jcol,
                                 const struct ArrowArray *a, int64_t start, int64_t count,
                                 int exact) {
  if (check_layout(c, a, 1, (int64_t)field_n_children(fv)) != 0 ||
      compare_validity(c, jcol, a, start, count) != 0)
    return -1;
  int64_t child_start = a->offset + start;
  return compare_children(c, fv, jcol, a, child_start, exact && child_start == 0);
}

/* Unions have no validity bitmap in the C Data Interface.  Files written
 * before Arrow 1.0 still carry a VALIDITY in their JSON; it must say that
 * every slot is valid, since a null there cannot be represented. */
static int compare_union_column(cmp *c, const jtype *t, const field_view *fv, json_t *jcol,
                                const struct ArrowArray *a, int64_t start, int64_t count,
                                int exact) {
  json_t *jids, *jv = json_object_get(jcol, "VALIDITY");
  if (check_layout(c, a, t->dense ? 2 : 1, (int64_t)t->n_type_ids) != 0) return -1;
  if (jv) {
    if (get_array(c, jcol, "VALIDITY", (size_t)count, &jv) != 0) return -1;
    for (int64_t i = 0; i < count; i++)
      if (json_integer_value(json_array_get(jv, (size_t)i)) != 1)
        return fail(c, i, "VALIDITY: a null union slot (pre-1.0 layout) cannot be represented");
  }
  if (a->null_count != 0)
    return fail(c, -1, "null_count of a union: expected 0, found %" PRId64, a->null_count);
  if (get_array(c, jcol, "TYPE_ID", (size_t)count, &jids) != 0) return -1;
  if (count > 0 && need_buffer(c, a, 0, "type ids") != 0) return -1;
  const int8_t *ids = a->buffers[0];
  for (int64_t i = 0; i < count; i++) {
    int64_t want;
    int8_t found = ids[a->offset + start + i];
    if (json_as_i64(json_array_get(jids, (size_t)i), &want) != 0)
      return fail(c, i, "TYPE_ID: JSON entry is not an integer");
    if (want != found)
      return fail(c, i, "TYPE_ID: expected %" PRId64 ", found %d", want, (int)found);
    int known = 0;
    for (size_t k = 0; k < t->n_type_ids; k++) known |= t->type_ids[k] == found;
    if (!known) return fail(c, i, "TYPE_ID %d is not among the union's typeIds", (int)found);
  }
  if (t->dense) {
    json_t *jo;
    if (get_array(c, jcol, "OFFSET", (size_t)count, &jo) != 0) return -1;
    if (count > 0 && need_buffer(c, a, 1, "offsets") != 0) return -1;
    if (compare_int_entries(c, "OFFSET", jo, a->buffers[1], 4, a->offset + start, count) != 0)
      return -1;
    return compare_children(c, fv, jcol, a, 0, 1);
  }
  int64_t child_start = a->offset + start;
  return compare_children(c, fv, jcol, a, child_start, exact && child_start == 0);
}

static int compare_run_end_column(cmp *c, const field_view *fv, json_t *jcol,
                                  const struct ArrowArray *a) {
  if (check_layout(c, a, 0, 2) != 0) return -1;
  if (a->null_count != 0)
    return fail(c, -1, "null_count of run-end encoded: expected 0, found %" PRId64, a->null_count);
  /* The parent's offset is a logical position in the runs; the children
   * (run ends, values) are whole, unshifted arrays. */
  return compare_children(c, fv, jcol, a, 0, 1);
}

static json_t *find_dictionary(const arrow_json *doc, int64_t id) {
  size_t i;
  json_t *d;
  json_array_foreach(doc->dictionaries, i, d) {
    int64_t did;
    if (json_as_i64(json_object_get(d, "id"), &did) == 0 && did == id) return d;
  }
  return NULL;
}

/* A dictionary-encoded column: VALIDITY and DATA hold the indices; the
 * ArrowArray's dictionary must equal the JSON dictionary batch. */
static int compare_dictionary_column(cmp *c, const field_view *fv, json_t *jcol,
                                     const struct ArrowArray *a, int64_t start, int64_t count) {
  dictionary_info d;
  json_t *jd;
  if (parse_dictionary(c, fv->dictionary, &d) != 0 ||
      check_column_keys(c, jcol, "dictionary indices", KEY_VALIDITY | KEY_DATA) != 0 ||
      check_layout(c, a, 2, 0) != 0 || compare_validity(c, jcol, a, start, count) != 0 ||
      get_array(c, jcol, "DATA", (size_t)count, &jd) != 0)
    return -1;
  if (count > 0 && need_buffer(c, a, 1, "indices") != 0) return -1;
  for (int64_t i = 0; i < count; i++) {
    if (!slot_valid(jcol, i)) continue;
    const uint8_t *p = (const uint8_t *)a->buffers[1] + (a->offset + start + i) * d.index.width;
    if (compare_int_value(c, i, "DATA (index)", json_array_get(jd, (size_t)i), p, d.index.width,
                          d.index.is_signed) != 0)
      return -1;
  }
  if (!a->dictionary) return fail(c, -1, "dictionary-encoded column has no dictionary");
  json_t *batch = find_dictionary(c->doc, d.id), *data, *columns;
  int64_t dcount, ccount;
  size_t mark = path_push(c, "{dictionary %" PRId64 "}", d.id);
  int rc = -1;
  if (!batch) {
    note_mismatch(c, -1, "the JSON has no dictionary with this id");
  } else if (c->depth >= 32) {
    note_mismatch(c, -1, "dictionaries nested too deep (a cycle in the JSON?)");
  } else if (check_keys(c, batch, "dictionary batch", KEYS("id", "data")) == 0 &&
             json_is_object(data = json_object_get(batch, "data")) &&
             check_keys(c, data, "dictionary data", KEYS("count", "columns")) == 0 &&
             get_int(c, data, "count", "dictionary data", &dcount) == 0 &&
             get_array(c, data, "columns", 1, &columns) == 0) {
    field_view values = *fv;
    values.dictionary = NULL;
    json_t *dcol = json_array_get(columns, 0);
    if (json_as_i64(json_object_get(dcol, "count"), &ccount) != 0 || ccount != dcount) {
      note_mismatch(c, -1, "dictionary batch count %" PRId64 " differs from its column's count",
                    dcount);
    } else {
      c->depth++;
      rc = compare_column(c, &values, dcol, a->dictionary, 0, 1, 0);
      c->depth--;
    }
  } else if (batch && !json_is_object(json_object_get(batch, "data"))) {
    note_mismatch(c, -1, "dictionary batch \"data\" is not an object");
  }
  path_pop(c, mark);
  return rc;
}

static int compare_column_of_type(cmp *c, const field_view *fv, json_t *jcol,
                                  const struct ArrowArray *a, int64_t start, int64_t count,
                                  int exact) {
  jtype t;
  if (parse_field_type(c, fv, &t) != 0) return -1;
  if (a->dictionary)
    return fail(c, -1, "has a dictionary, but the JSON field is not dictionary-encoded");
  switch (t.kind) {
    case K_NULL:
      if (check_column_keys(c, jcol, t.name, 0) != 0 || check_layout(c, a, 0, 0) != 0) return -1;
      if (whole(a, start, count) && a->null_count != count)
        return fail(c, -1, "null_count of a null column: expected %" PRId64 ", found %" PRId64,
                    count, a->null_count);
      return 0;
    case K_FIXED:
      return check_column_keys(c, jcol, t.name, KEY_VALIDITY | KEY_DATA) ||
             compare_fixed_column(c, &t, jcol, a, start, count);
    case K_BINARY:
      return check_column_keys(c, jcol, t.name, KEY_VALIDITY | KEY_OFFSET | KEY_DATA) ||
             compare_binary_column(c, &t, jcol, a, start, count);
    case K_VIEW:
      return check_column_keys(c, jcol, t.name, KEY_VALIDITY | KEY_VIEWS | KEY_VARIADIC) ||
             compare_view_column(c, &t, jcol, a, start, count);
    case K_LIST:
    case K_MAP:
      return check_column_keys(c, jcol, t.name, KEY_VALIDITY | KEY_OFFSET | KEY_CHILDREN) ||
             compare_list_column(c, &t, fv, jcol, a, start, count);
    case K_LIST_VIEW:
      return check_column_keys(c, jcol, t.name,
                               KEY_VALIDITY | KEY_OFFSET | KEY_SIZE | KEY_CHILDREN) ||
             compare_list_view_column(c, &t, fv, jcol, a, start, count);
    case K_FIXED_LIST:
      return check_column_keys(c, jcol, t.name, KEY_VALIDITY | KEY_CHILDREN) ||
             compare_fixed_list_column(c, &t, fv, jcol, a, start, count, exact);
    case K_STRUCT:
      return check_column_keys(c, jcol, t.name, KEY_VALIDITY | KEY_CHILDREN) ||
             compare_struct_column(c, fv, jcol, a, start, count, exact);
    case K_UNION:
      return check_column_keys(
                 c, jcol, t.name,
                 KEY_VALIDITY | KEY_TYPE_ID | KEY_CHILDREN | (t.dense ? KEY_OFFSET : 0)) ||
             compare_union_column(c, &t, fv, jcol, a, start, count, exact);
    case K_RUN_END:
      return check_column_keys(c, jcol, t.name, KEY_CHILDREN) ||
             compare_run_end_column(c, fv, jcol, a);
  }
  return fail(c, -1, "internal: unexpected kind");
}

/* Column jcol (slots 0..count) against slots [a->offset + start, ...) of a.
 * exact: a must hold exactly these slots, no more. */
static int compare_column(cmp *c, const field_view *fv, json_t *jcol, const struct ArrowArray *a,
                          int64_t start, int exact, int check_name) {
  /* A dictionary's values (check_name == 0) are named by the path already
   * ("col{dictionary 3}"); their JSON column name ("DICT3") means nothing. */
  size_t mark = check_name ? path_push_name(c, fv->name) : c->path_len;
  int64_t count;
  const char *jname;
  int rc = -1;
  if (!json_is_object(jcol)) {
    note_mismatch(c, -1, "JSON column data is not an object");
  } else if (get_int(c, jcol, "count", "column", &count) != 0 ||
             get_string(c, jcol, "name", "column", &jname) != 0) {
    /* reported */
  } else if (check_name && strcmp(jname, fv->name) != 0) {
    note_mismatch(c, -1, "JSON column is named \"%s\", its field \"%s\"", jname, fv->name);
  } else if (!a) {
    note_mismatch(c, -1, "ArrowArray is NULL");
  } else if (count < 0 || a->length < 0 || a->offset < 0 || start < 0) {
    note_mismatch(c, -1, "negative count, length or offset");
  } else if (exact ? a->length != start + count : a->length < start + count) {
    note_mismatch(c, -1, "length: expected %s%" PRId64 ", found %" PRId64, exact ? "" : "at least ",
                  start + count, a->length);
  } else if (fv->dictionary) {
    rc = compare_dictionary_column(c, fv, jcol, a, start, count);
  } else {
    rc = compare_column_of_type(c, fv, jcol, a, start, count, exact);
  }
  path_pop(c, mark);
  return rc;
}

int arrow_json_compare_batch(const arrow_json *doc, int64_t i, const struct ArrowSchema *schema,
                             const struct ArrowArray *batch, char *msg, size_t msgsz) {
  cmp c;
  cmp_init(&c, doc, msg, msgsz);
  snprintf(c.where, sizeof(c.where), "batch %" PRId64, i);
  if (i < 0 || i >= arrow_json_num_batches(doc))
    return fail(&c, -1, "the JSON has %" PRId64 " batches", arrow_json_num_batches(doc));
  json_t *jb = json_array_get(doc->batches, (size_t)i), *columns;
  int64_t count;
  size_t n = json_array_size(doc->fields);
  if (!json_is_object(jb) || check_keys(&c, jb, "record batch", KEYS("count", "columns")) != 0 ||
      get_int(&c, jb, "count", "record batch", &count) != 0 ||
      get_array(&c, jb, "columns", n, &columns) != 0)
    return -1;
  if (!batch || !batch->release) return fail(&c, -1, "batch is NULL or released");
  if (batch->length != count)
    return fail(&c, -1, "batch length: expected %" PRId64 ", found %" PRId64, count, batch->length);
  if (batch->offset < 0) return fail(&c, -1, "negative offset");
  if (check_layout(&c, batch, 1, (int64_t)n) != 0) return -1;
  if (batch->null_count != 0 && batch->null_count != -1)
    return fail(&c, -1, "a record batch has null_count %" PRId64, batch->null_count);
  for (int64_t r = 0; batch->buffers[0] && r < count; r++)
    if (!get_bit(batch->buffers[0], batch->offset + r))
      return fail(&c, r, "a record batch row is null");
  if (batch->dictionary) return fail(&c, -1, "a record batch has a dictionary");
  if (schema && (schema->n_children != (int64_t)n || (n && !schema->children)))
    return fail(&c, -1, "the schema has %" PRId64 " fields, the JSON %zu", schema->n_children, n);
  for (size_t j = 0; j < n; j++) {
    field_view fv;
    if (field_view_init(&c, json_array_get(doc->fields, j), &fv) != 0) return -1;
    const char *sname = schema && schema->children[j]->name ? schema->children[j]->name : "";
    if (schema && strcmp(sname, fv.name) != 0)
      return fail(&c, -1, "schema field %zu is \"%s\", the JSON's \"%s\"", j, sname, fv.name);
    if (compare_column(&c, &fv, json_array_get(columns, j), batch->children[j], batch->offset,
                       batch->offset == 0, 1) != 0)
      return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */

static int load_error(char *msg, size_t msgsz, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int load_error(char *msg, size_t msgsz, const char *fmt, ...) {
  if (msg && msgsz) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgsz, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int arrow_json_load(const char *path, arrow_json **out, char *msg, size_t msgsz) {
  *out = NULL;
  json_t *root = tu_json_load(path, msg, msgsz);
  if (!root) return -1;
  json_t *schema = json_object_get(root, "schema");
  arrow_json *doc = calloc(1, sizeof(*doc));
  if (!doc) {
    json_decref(root);
    return load_error(msg, msgsz, "out of memory");
  }
  doc->root = root;
  doc->fields = json_object_get(schema, "fields");
  doc->metadata = json_object_get(schema, "metadata");
  doc->batches = json_object_get(root, "batches");
  doc->dictionaries = json_object_get(root, "dictionaries");
  cmp c;
  cmp_init(&c, doc, msg, msgsz);
  snprintf(c.where, sizeof(c.where), "%s", "JSON");
  if (!json_is_object(root) || !json_is_array(doc->fields) || !json_is_array(doc->batches) ||
      (doc->dictionaries && !json_is_array(doc->dictionaries))) {
    arrow_json_free(doc);
    return load_error(msg, msgsz, "%s: not an integration JSON (schema.fields, batches)", path);
  }
  if (check_keys(&c, root, path, KEYS("schema", "batches", "dictionaries")) != 0 ||
      check_keys(&c, schema, "schema", KEYS("fields", "metadata")) != 0) {
    arrow_json_free(doc);
    return -1;
  }
  *out = doc;
  return 0;
}

void arrow_json_free(arrow_json *doc) {
  if (!doc) return;
  json_decref(doc->root);
  free(doc);
}

void arrow_json_accept_canonical_map_names(arrow_json *doc, int accept) {
  doc->canonical_map_names = accept;
}

int64_t arrow_json_num_batches(const arrow_json *doc) {
  return (int64_t)json_array_size(doc->batches);
}
