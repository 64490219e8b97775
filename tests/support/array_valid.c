/* tests/support/array_valid.c — see array_valid.h. */
#include "support/array_valid.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk {
  char path[512];
  char *msg;
  size_t msgsz;
} walk;

static int bad(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(walk *w, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(w->msg, w->msgsz, "field '%s': %s", w->path, what);
  return -1;
}

/* Value i of an integer buffer of the given format ("c" .. "L"); an
 * unsigned 64-bit value past INT64_MAX comes back negative. */
static int64_t load_int(const void *buf, char format, int64_t i) {
  const uint8_t *p = buf;
  switch (format) {
    case 'c': return ((const int8_t *)p)[i];
    case 'C': return p[i];
    case 's': {
      int16_t v;
      memcpy(&v, p + 2 * i, 2);
      return v;
    }
    case 'S': {
      uint16_t v;
      memcpy(&v, p + 2 * i, 2);
      return v;
    }
    case 'i': {
      int32_t v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case 'I': {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p + 8 * i, 8);
      return v;
    }
  }
}

static int valid_at(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->buffers[0];
  return !bits || ((bits[i >> 3] >> (i & 7)) & 1);
}

static int check_validity(walk *w, const struct ArrowArray *a) {
  if (a->null_count == 0) return 0;
  if (a->n_buffers < 1 || !a->buffers[0]) {
    if (a->null_count > 0)
      return bad(w, "null_count %lld without a validity bitmap", (long long)a->null_count);
    return 0;
  }
  int64_t nulls = 0;
  for (int64_t i = a->offset; i < a->offset + a->length; i++) nulls += !valid_at(a, i);
  if (a->null_count > 0 && nulls != a->null_count)
    return bad(w, "null_count %lld, the bitmap has %lld nulls", (long long)a->null_count,
               (long long)nulls);
  return 0;
}

/* Offsets in buffer 1 (width 4 or 8): from 0 or more, never decreasing,
 * the last at most limit (-1: no limit known). */
static int check_offsets(walk *w, const struct ArrowArray *a, int width, int64_t limit) {
  char f = width == 4 ? 'i' : 'l';
  int64_t prev = load_int(a->buffers[1], f, a->offset);
  if (prev < 0) return bad(w, "offset %lld at row 0", (long long)prev);
  for (int64_t i = 1; i <= a->length; i++) {
    int64_t off = load_int(a->buffers[1], f, a->offset + i);
    if (off < prev)
      return bad(w, "offset %lld at row %lld below the one before", (long long)off, (long long)i);
    prev = off;
  }
  if (limit >= 0 && prev > limit)
    return bad(w, "last offset %lld past the child's %lld rows", (long long)prev, (long long)limit);
  return 0;
}

static int check_list_views(walk *w, const struct ArrowArray *a, int width) {
  char f = width == 4 ? 'i' : 'l';
  int64_t limit = a->children[0]->length;
  for (int64_t i = a->offset; i < a->offset + a->length; i++) {
    int64_t off = load_int(a->buffers[1], f, i), size = load_int(a->buffers[2], f, i);
    if (valid_at(a, i) && (off < 0 || size < 0 || off > limit || size > limit - off))
      return bad(w, "list view at row %lld (%lld, %lld) outside %lld child rows",
                 (long long)(i - a->offset), (long long)off, (long long)size, (long long)limit);
  }
  return 0;
}

static int check_views(walk *w, const struct ArrowArray *a) {
  int64_t n_data = a->n_buffers - 3;
  if (n_data < 0) return bad(w, "a view array with %lld buffers", (long long)a->n_buffers);
  const int64_t *sizes = a->buffers[a->n_buffers - 1];
  for (int64_t i = a->offset; i < a->offset + a->length; i++) {
    const uint8_t *v = (const uint8_t *)a->buffers[1] + 16 * i;
    int32_t len, buf, off;
    memcpy(&len, v, 4);
    memcpy(&buf, v + 8, 4);
    memcpy(&off, v + 12, 4);
    if (!valid_at(a, i) || (len >= 0 && len <= 12)) continue;
    if (len < 0 || buf < 0 || buf >= n_data || off < 0 || (int64_t)off + len > sizes[buf])
      return bad(w, "view at row %lld (length %d, buffer %d, offset %d) outside the data",
                 (long long)(i - a->offset), len, buf, off);
  }
  return 0;
}

/* The child of type id `id` in a union format ("+ud:1,5"), or -1. */
static int union_child(const char *format, int id) {
  const char *p = strchr(format, ':');
  for (int c = 0; p; c++, p = strchr(p + 1, ','))
    if (atoi(p + 1) == id) return c;
  return -1;
}

static int check_union(walk *w, const struct ArrowSchema *s, const struct ArrowArray *a) {
  int dense = s->format[2] == 'd';
  for (int64_t c = 0; !dense && c < a->n_children; c++)
    if (a->children[c]->length < a->offset + a->length)
      return bad(w, "sparse child %lld has %lld rows", (long long)c,
                 (long long)a->children[c]->length);
  for (int64_t i = a->offset; i < a->offset + a->length; i++) {
    int id = ((const int8_t *)a->buffers[0])[i], c = union_child(s->format, id);
    if (c < 0 || c >= a->n_children)
      return bad(w, "type id %d at row %lld", id, (long long)(i - a->offset));
    int64_t off = dense ? load_int(a->buffers[1], 'i', i) : 0;
    if (dense && (off < 0 || off >= a->children[c]->length))
      return bad(w, "dense offset %lld at row %lld", (long long)off, (long long)(i - a->offset));
  }
  return 0;
}

static int check_run_ends(walk *w, const struct ArrowSchema *s, const struct ArrowArray *a) {
  const struct ArrowArray *ends = a->children[0];
  char f = s->children[0]->format[0];
  if (ends->null_count != 0 || a->children[1]->length < ends->length)
    return bad(w, "%lld run ends, %lld nulls, %lld values", (long long)ends->length,
               (long long)ends->null_count, (long long)a->children[1]->length);
  int64_t prev = 0;
  for (int64_t k = ends->offset; k < ends->offset + ends->length; k++) {
    int64_t end = load_int(ends->buffers[1], f, k);
    if (end <= prev)
      return bad(w, "run end %lld at run %lld", (long long)end, (long long)(k - ends->offset));
    prev = end;
  }
  if (a->length > 0 && prev < a->offset + a->length)
    return bad(w, "run ends stop at %lld, before row %lld", (long long)prev,
               (long long)(a->offset + a->length));
  return 0;
}

static int check_indices(walk *w, const struct ArrowSchema *s, const struct ArrowArray *a) {
  for (int64_t i = a->offset; i < a->offset + a->length; i++) {
    int64_t idx = load_int(a->buffers[1], s->format[0], i);
    if (valid_at(a, i) && (idx < 0 || idx >= a->dictionary->length))
      return bad(w, "index %lld at row %lld outside %lld values", (long long)idx,
                 (long long)(i - a->offset), (long long)a->dictionary->length);
  }
  return 0;
}

static int check_children_length(walk *w, const struct ArrowArray *a, int64_t need) {
  for (int64_t c = 0; c < a->n_children; c++)
    if (a->children[c]->length < need)
      return bad(w, "child %lld has %lld rows, %lld needed", (long long)c,
                 (long long)a->children[c]->length, (long long)need);
  return 0;
}

/* The rules of the array's own layout (children and dictionary apart). */
static int check_layout(walk *w, const struct ArrowSchema *s, const struct ArrowArray *a) {
  const char *f = s->format;
  if (s->dictionary) return check_indices(w, s, a);
  if (!strcmp(f, "z") || !strcmp(f, "u")) return check_offsets(w, a, 4, -1);
  if (!strcmp(f, "Z") || !strcmp(f, "U")) return check_offsets(w, a, 8, -1);
  if (!strcmp(f, "+l") || !strcmp(f, "+m")) return check_offsets(w, a, 4, a->children[0]->length);
  if (!strcmp(f, "+L")) return check_offsets(w, a, 8, a->children[0]->length);
  if (!strcmp(f, "+vl")) return check_list_views(w, a, 4);
  if (!strcmp(f, "+vL")) return check_list_views(w, a, 8);
  if (!strcmp(f, "vz") || !strcmp(f, "vu")) return check_views(w, a);
  if (!strncmp(f, "+u", 2)) return check_union(w, s, a);
  if (!strcmp(f, "+r")) return check_run_ends(w, s, a);
  if (!strcmp(f, "+s")) return check_children_length(w, a, a->offset + a->length);
  if (!strncmp(f, "+w:", 3))
    return check_children_length(w, a, (a->offset + a->length) * atoi(f + 3));
  return 0;
}

static int check_node(walk *w, const struct ArrowSchema *s, const struct ArrowArray *a) {
  if (a->length < 0 || a->offset < 0 || a->null_count < -1 || a->null_count > a->length)
    return bad(w, "length %lld, offset %lld, null_count %lld", (long long)a->length,
               (long long)a->offset, (long long)a->null_count);
  if (a->n_children != s->n_children || !s->dictionary != !a->dictionary)
    return bad(w, "%lld children (the schema %lld), dictionary %s", (long long)a->n_children,
               (long long)s->n_children, a->dictionary ? "present" : "absent");
  const char *f = s->format;
  int has_validity = strcmp(f, "n") != 0 && strncmp(f, "+u", 2) != 0 && strcmp(f, "+r") != 0;
  if ((has_validity && check_validity(w, a) != 0) || check_layout(w, s, a) != 0) return -1;
  size_t mark = strlen(w->path);
  for (int64_t c = 0; c < s->n_children; c++) {
    snprintf(w->path + mark, sizeof w->path - mark, "%s%s", mark ? "." : "", s->children[c]->name);
    if (check_node(w, s->children[c], a->children[c]) != 0) return -1;
  }
  w->path[mark] = '\0';
  return s->dictionary ? check_node(w, s->dictionary, a->dictionary) : 0;
}

int array_valid(const struct ArrowSchema *schema, const struct ArrowArray *array, char *msg,
                size_t msgsz) {
  walk w = {"", msg, msgsz};
  return check_node(&w, schema, array);
}
