/* tests/support/json_doc.c — see json_doc.h.
 *
 * The comparison walks both documents side by side and stops at the first
 * difference, which it describes in msg with the path to it. */
#include "support/json_doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/json_util.h"

/* The dictionary ids found while comparing the schemas, with the gold
 * field that uses each.  Ours must be the input's own ids, which are the
 * gold JSON's (fields that share a dictionary share its id) — except in
 * files whose writer numbered the IPC dictionaries its own way (see
 * ipc_ids_differ_from_json): there each of our ids must stand for one gold
 * id, consistently. */
typedef struct dict_use {
  json_int_t gold_id, our_id;
  json_t *field;
} dict_use;

typedef struct compare_ctx {
  char *msg;
  size_t msgsz;
  bool ids_renumbered;
  dict_use uses[256];
  int n_uses;
} compare_ctx;

static bool fail(compare_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(compare_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (c->msgsz > 0) vsnprintf(c->msg, c->msgsz, fmt, ap);
  va_end(ap);
  return false;
}

/* One value of a buffer: float_bits is 32 (or 16) when the values are
 * single or half precision floats, which compare at that precision. */
static bool same_value(json_t *g, json_t *o, int float_bits) {
  if (json_is_boolean(g) || json_is_boolean(o)) { /* the docs say 1/0, Arrow writes true/false */
    int gv = json_is_boolean(g)   ? json_is_true(g)
             : json_is_integer(g) ? (int)json_integer_value(g)
                                  : -1;
    int ov = json_is_boolean(o)   ? json_is_true(o)
             : json_is_integer(o) ? (int)json_integer_value(o)
                                  : -2;
    return gv == ov;
  }
  if (json_is_real(g) || json_is_real(o)) {
    if (!json_is_number(g) || !json_is_number(o)) return false;
    double gd = json_number_value(g), od = json_number_value(o);
    if (float_bits == 32 || float_bits == 16) return (float)gd == (float)od;
    return gd == od;
  }
  if (json_is_object(g)) {
    if (!json_is_object(o) || json_object_size(g) != json_object_size(o)) return false;
    const char *key;
    json_t *gv;
    json_object_foreach(g, key, gv) {
      if (!same_value(gv, json_object_get(o, key), 0)) return false;
    }
    return true;
  }
  if (json_is_array(g)) {
    if (!json_is_array(o) || json_array_size(g) != json_array_size(o)) return false;
    for (size_t i = 0; i < json_array_size(g); i++)
      if (!same_value(json_array_get(g, i), json_array_get(o, i), float_bits)) return false;
    return true;
  }
  char gt[128], ot[128];
  if (tu_json_integer_text(g, gt, sizeof gt) && tu_json_integer_text(o, ot, sizeof ot))
    return strcmp(gt, ot) == 0;
  return json_equal(g, o);
}

static json_t *metadata_or_empty(json_t *obj) {
  json_t *m = json_object_get(obj, "metadata");
  return json_is_array(m) ? m : NULL;
}

/* Metadata is a set of pairs: writers differ in the order they store them
 * (Arrow compares it in any order). */
static bool same_metadata(compare_ctx *c, json_t *g, json_t *o, const char *path) {
  json_t *gm = metadata_or_empty(g), *om = metadata_or_empty(o);
  size_t gn = gm ? json_array_size(gm) : 0, on = om ? json_array_size(om) : 0;
  if (gn != on) return fail(c, "%s: %zu metadata entries, expected %zu", path, on, gn);
  bool used[256] = {false};
  if (gn > 256) return fail(c, "%s: too much metadata", path);
  for (size_t i = 0; i < gn; i++) {
    size_t k = 0;
    while (k < on && (used[k] || !json_equal(json_array_get(gm, i), json_array_get(om, k)))) k++;
    if (k == on)
      return fail(c, "%s: metadata key \"%s\" missing or different", path,
                  tu_json_str(json_array_get(gm, i), "key"));
    used[k] = true;
  }
  return true;
}

/* Arrow does not compare the names of a map's entries, keys and values
 * (writers canonicalise them): names_free says how many levels below a
 * map still have free names. */
static int child_names_free(json_t *field, int names_free) {
  if (strcmp(tu_json_str(json_object_get(field, "type"), "name"), "map") == 0) return 2;
  return names_free > 0 ? names_free - 1 : 0;
}

/* Types: every key of either side must agree; a decimal's bitWidth
 * defaults to 128. */
static bool same_type(compare_ctx *c, json_t *g, json_t *o, const char *path) {
  if (!json_is_object(g) || !json_is_object(o)) return fail(c, "%s: type missing", path);
  const char *key;
  json_t *v;
  for (int side = 0; side < 2; side++) {
    json_t *a = side ? o : g, *b = side ? g : o;
    json_object_foreach(a, key, v) {
      json_t *w = json_object_get(b, key);
      if (w == NULL && strcmp(key, "bitWidth") == 0 &&
          strcmp(tu_json_str(g, "name"), "decimal") == 0 && json_integer_value(v) == 128)
        continue;
      if (w == NULL || !json_equal(v, w)) {
        char *gs = json_dumps(g, JSON_COMPACT), *os = json_dumps(o, JSON_COMPACT);
        fail(c, "%s: type %s, expected %s", path, os ? os : "?", gs ? gs : "?");
        free(gs);
        free(os);
        return false;
      }
    }
  }
  return true;
}

/* o (a field or a column, what says which) exists and, unless names are
 * free here, has g's name. */
static bool present_and_named(compare_ctx *c, json_t *g, json_t *o, int names_free,
                              const char *what, const char *path) {
  if (!json_is_object(o)) return fail(c, "%s: %s missing", path, what);
  if (!names_free && strcmp(tu_json_str(g, "name"), tu_json_str(o, "name")) != 0)
    return fail(c, "%s: %s named \"%s\"", path, what, tu_json_str(o, "name"));
  return true;
}

static bool same_field(compare_ctx *c, json_t *g, json_t *o, int names_free, const char *parent) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", parent, tu_json_str(g, "name"));
  if (!present_and_named(c, g, o, names_free, "field", path)) return false;
  if (!json_equal(json_object_get(g, "nullable"), json_object_get(o, "nullable")))
    return fail(c, "%s: nullable differs", path);
  if (!same_type(c, json_object_get(g, "type"), json_object_get(o, "type"), path)) return false;
  if (!same_metadata(c, g, o, path)) return false;
  json_t *gd = json_object_get(g, "dictionary"), *od = json_object_get(o, "dictionary");
  if ((gd == NULL) != (od == NULL)) return fail(c, "%s: dictionary encoding differs", path);
  if (gd != NULL) {
    if (!same_type(c, json_object_get(gd, "indexType"), json_object_get(od, "indexType"), path))
      return false;
    if (!json_equal(json_object_get(gd, "isOrdered"), json_object_get(od, "isOrdered")))
      return fail(c, "%s: isOrdered differs", path);
    json_int_t gold_id = json_integer_value(json_object_get(gd, "id"));
    json_int_t our_id = json_integer_value(json_object_get(od, "id"));
    if (!json_is_integer(json_object_get(od, "id")) || (!c->ids_renumbered && our_id != gold_id))
      return fail(c, "%s: dictionary id %" JSON_INTEGER_FORMAT ", expected %" JSON_INTEGER_FORMAT,
                  path, our_id, gold_id);
    for (int u = 0; u < c->n_uses; u++)
      if (c->uses[u].our_id == our_id && c->uses[u].gold_id != gold_id)
        return fail(c,
                    "%s: dictionary id %" JSON_INTEGER_FORMAT
                    " stands for gold dictionaries %" JSON_INTEGER_FORMAT
                    " and %" JSON_INTEGER_FORMAT,
                    path, our_id, c->uses[u].gold_id, gold_id);
    if (c->n_uses == 256) return fail(c, "too many dictionaries");
    c->uses[c->n_uses++] = (dict_use){gold_id, our_id, g};
  }
  json_t *gc = json_object_get(g, "children"), *oc = json_object_get(o, "children");
  if (json_array_size(gc) != json_array_size(oc)) return fail(c, "%s: children differ", path);
  for (size_t i = 0; i < json_array_size(gc); i++)
    if (!same_field(c, json_array_get(gc, i), json_array_get(oc, i),
                    child_names_free(g, names_free), path))
      return false;
  return true;
}

static bool same_schema(compare_ctx *c, json_t *g, json_t *o) {
  json_t *gf = json_object_get(g, "fields"), *of = json_object_get(o, "fields");
  if (!json_is_array(of)) return fail(c, "schema: no fields");
  if (json_array_size(gf) != json_array_size(of))
    return fail(c, "schema: %zu fields, expected %zu", json_array_size(of), json_array_size(gf));
  for (size_t i = 0; i < json_array_size(gf); i++)
    if (!same_field(c, json_array_get(gf, i), json_array_get(of, i), 0, "schema")) return false;
  return same_metadata(c, g, o, "schema");
}

static int float_bits_of(json_t *field, bool indices) {
  json_t *type = json_object_get(field, "type");
  if (indices || strcmp(tu_json_str(type, "name"), "floatingpoint") != 0) return 0;
  const char *p = tu_json_str(type, "precision");
  return strcmp(p, "DOUBLE") == 0 ? 64 : strcmp(p, "SINGLE") == 0 ? 32 : 16;
}

/* Buffers compared element by element; DATA and VIEWS only where valid. */
static bool same_buffer(compare_ctx *c, const char *key, json_t *g, json_t *o, json_t *validity,
                        int float_bits, const char *path) {
  if (!json_is_array(g) || !json_is_array(o)) return fail(c, "%s: %s missing", path, key);
  if (json_array_size(g) != json_array_size(o))
    return fail(c, "%s: %s has %zu entries, expected %zu", path, key, json_array_size(o),
                json_array_size(g));
  bool valid_only = strcmp(key, "DATA") == 0 || strcmp(key, "VIEWS") == 0;
  for (size_t i = 0; i < json_array_size(g); i++) {
    if (valid_only && validity && json_integer_value(json_array_get(validity, i)) == 0) continue;
    if (!same_value(json_array_get(g, i), json_array_get(o, i), float_bits)) {
      char *gs = json_dumps(json_array_get(g, i), JSON_ENCODE_ANY);
      char *os = json_dumps(json_array_get(o, i), JSON_ENCODE_ANY);
      fail(c, "%s: %s[%zu] is %.200s, expected %.200s", path, key, i, os ? os : "?", gs ? gs : "?");
      free(gs);
      free(os);
      return false;
    }
  }
  return true;
}

/* Unions lost their validity bitmap in format version 1.0: older gold
 * files may carry one that the C Data Interface has no place for. */
static bool is_union(json_t *field) {
  return strcmp(tu_json_str(json_object_get(field, "type"), "name"), "union") == 0;
}

static bool same_column(compare_ctx *c, json_t *field, json_t *g, json_t *o, bool indices,
                        int names_free, const char *parent) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", parent, tu_json_str(field, "name"));
  if (!present_and_named(c, g, o, names_free, "column", path)) return false;
  if (!json_equal(json_object_get(g, "count"), json_object_get(o, "count")))
    return fail(c, "%s: count %" JSON_INTEGER_FORMAT ", expected %" JSON_INTEGER_FORMAT, path,
                json_integer_value(json_object_get(o, "count")),
                json_integer_value(json_object_get(g, "count")));
  json_t *validity = json_object_get(g, "VALIDITY");
  const char *key;
  json_t *v;
  for (int side = 0; side < 2; side++) {
    json_object_foreach(side ? o : g, key, v) {
      if (strcmp(key, "name") == 0 || strcmp(key, "count") == 0 || strcmp(key, "children") == 0)
        continue;
      if (side == 1 && json_object_get(g, key) != NULL) continue; /* compared already */
      if (strcmp(key, "VALIDITY") == 0 && is_union(field)) continue;
      if (side == 1) return fail(c, "%s: unexpected %s", path, key);
      if (!same_buffer(c, key, v, json_object_get(o, key), validity, float_bits_of(field, indices),
                       path))
        return false;
    }
  }
  json_t *gc = json_object_get(g, "children"), *oc = json_object_get(o, "children");
  json_t *fc = json_object_get(field, "children");
  if (indices || json_array_size(gc) == 0) {
    if (json_array_size(oc) != 0) return fail(c, "%s: unexpected children", path);
    return true;
  }
  if (json_array_size(gc) != json_array_size(oc) || json_array_size(gc) != json_array_size(fc))
    return fail(c, "%s: %zu children, expected %zu", path, json_array_size(oc),
                json_array_size(gc));
  for (size_t i = 0; i < json_array_size(gc); i++) {
    json_t *child_field = json_array_get(fc, i);
    bool child_indices = json_object_get(child_field, "dictionary") != NULL;
    if (!same_column(c, child_field, json_array_get(gc, i), json_array_get(oc, i), child_indices,
                     child_names_free(field, names_free), path))
      return false;
  }
  return true;
}

static bool same_batches(compare_ctx *c, json_t *gold, json_t *ours) {
  json_t *gb = json_object_get(gold, "batches"), *ob = json_object_get(ours, "batches");
  json_t *fields = json_object_get(json_object_get(gold, "schema"), "fields");
  if (!json_is_array(ob)) return fail(c, "no batches");
  if (json_array_size(gb) != json_array_size(ob))
    return fail(c, "%zu batches, expected %zu", json_array_size(ob), json_array_size(gb));
  for (size_t b = 0; b < json_array_size(gb); b++) {
    json_t *g = json_array_get(gb, b), *o = json_array_get(ob, b);
    char path[64];
    snprintf(path, sizeof path, "batch %zu", b);
    if (!json_equal(json_object_get(g, "count"), json_object_get(o, "count")))
      return fail(c, "%s: count differs", path);
    json_t *gc = json_object_get(g, "columns"), *oc = json_object_get(o, "columns");
    if (json_array_size(gc) != json_array_size(oc) ||
        json_array_size(gc) != json_array_size(fields))
      return fail(c, "%s: %zu columns, expected %zu", path, json_array_size(oc),
                  json_array_size(gc));
    for (size_t i = 0; i < json_array_size(gc); i++) {
      json_t *field = json_array_get(fields, i);
      bool indices = json_object_get(field, "dictionary") != NULL;
      if (!same_column(c, field, json_array_get(gc, i), json_array_get(oc, i), indices, 0, path))
        return false;
    }
  }
  return true;
}

static json_t *find_dictionary(json_t *doc, json_int_t id) {
  json_t *dicts = json_object_get(doc, "dictionaries"), *d;
  size_t i;
  json_array_foreach(dicts, i, d) {
    if (json_integer_value(json_object_get(d, "id")) == id) return d;
  }
  return NULL;
}

/* Our dictionaries: each id once, and each used by a field of the schema. */
static bool dictionaries_distinct_and_used(compare_ctx *c, json_t *ours) {
  json_t *dicts = json_object_get(ours, "dictionaries"), *d;
  size_t i;
  json_array_foreach(dicts, i, d) {
    json_int_t id = json_integer_value(json_object_get(d, "id"));
    for (size_t k = 0; k < i; k++)
      if (json_integer_value(json_object_get(json_array_get(dicts, k), "id")) == id)
        return fail(c, "dictionary %" JSON_INTEGER_FORMAT " written twice", id);
    bool used = false;
    for (int u = 0; u < c->n_uses && !used; u++) used = c->uses[u].our_id == id;
    if (!used) return fail(c, "dictionary %" JSON_INTEGER_FORMAT " is used by no field", id);
  }
  return true;
}

/* Each dictionary-encoded field's dictionary, gold against ours. */
static bool same_dictionaries(compare_ctx *c, json_t *gold, json_t *ours) {
  if (!dictionaries_distinct_and_used(c, ours)) return false;
  for (int p = 0; p < c->n_uses; p++) {
    json_t *g = find_dictionary(gold, c->uses[p].gold_id),
           *o = find_dictionary(ours, c->uses[p].our_id);
    char path[512];
    snprintf(path, sizeof path, "dictionary %" JSON_INTEGER_FORMAT, c->uses[p].our_id);
    if (g == NULL) continue; /* declared but never sent: nothing to compare */
    if (o == NULL) return fail(c, "%s: missing", path);
    json_t *gd = json_object_get(g, "data"), *od = json_object_get(o, "data");
    if (!json_equal(json_object_get(gd, "count"), json_object_get(od, "count")))
      return fail(c, "%s: count differs", path);
    json_t *gc = json_array_get(json_object_get(gd, "columns"), 0);
    json_t *oc = json_array_get(json_object_get(od, "columns"), 0);
    /* a dictionary's column name means nothing */
    if (!same_column(c, c->uses[p].field, gc, oc, false, 1, path)) return false;
  }
  return true;
}

/* Arrow 1.0.0 wrote generated_nested_dictionary's IPC files with five
 * dictionary batches, ids 0 to 4, one per dictionary-encoded field, where
 * the JSON shares its id 0 among the three string fields (same values):
 * the IPC ids cannot equal the JSON's there. */
static bool ipc_ids_differ_from_json(const char *ipc_path) {
  return strstr(ipc_path, "1.0.0-littleendian/generated_nested_dictionary.") != NULL;
}

bool tu_json_doc_equal(json_t *gold, json_t *ours, const char *ipc_path, char *msg, size_t msgsz) {
  compare_ctx *c = calloc(1, sizeof *c);
  if (c == NULL) {
    if (msgsz > 0) snprintf(msg, msgsz, "out of memory");
    return false;
  }
  c->msg = msg;
  c->msgsz = msgsz;
  c->ids_renumbered = ipc_path != NULL && ipc_ids_differ_from_json(ipc_path);
  bool ok = same_schema(c, json_object_get(gold, "schema"), json_object_get(ours, "schema")) &&
            same_batches(c, gold, ours) && same_dictionaries(c, gold, ours);
  free(c);
  return ok;
}
