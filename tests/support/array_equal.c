/* tests/support/array_equal.c — see array_equal.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/array_equal.h"

typedef struct cmp {
  char *msg;
  size_t msgsz;
} cmp;

static int differ(cmp *c, const char *path, int64_t row, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int differ(cmp *c, const char *path, int64_t row, const char *fmt, ...) {
  if (c->msg && c->msgsz) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->msg, c->msgsz, "field '%s', row %lld: %s", path, (long long)row, what);
  }
  return -1;
}

static int bit(const void *bits, int64_t i) {
  return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

static int64_t load_int(const void *p, int width, int64_t i, int is_signed) {
  const uint8_t *b = (const uint8_t *)p + (size_t)i * (size_t)width;
  switch (width) {
    case 1: return is_signed ? (int8_t)b[0] : b[0];
    case 2: {
      int16_t v;
      uint16_t u;
      memcpy(&v, b, 2);
      memcpy(&u, b, 2);
      return is_signed ? v : u;
    }
    case 4: {
      int32_t v;
      uint32_t u;
      memcpy(&v, b, 4);
      memcpy(&u, b, 4);
      return is_signed ? v : (int64_t)u;
    }
    default: {
      int64_t v;
      memcpy(&v, b, 8);
      return v;
    }
  }
}

/* Bytes per value of a fixed-width format, 0 when not fixed width. */
static int fixed_width(const char *f) {
  if (f[0] && !f[1]) {
    const char *p = strchr("cCsSiIlLefg", f[0]);
    static const int widths[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
    return p ? widths[p - "cCsSiIlLefg"] : 0;
  }
  if (strncmp(f, "d:", 2) == 0) {
    int p, s, bits = 128;
    sscanf(f, "d:%d,%d,%d", &p, &s, &bits);
    return bits / 8;
  }
  if (strncmp(f, "w:", 2) == 0) return atoi(f + 2);
  if (!strcmp(f, "tdD") || !strcmp(f, "tts") || !strcmp(f, "ttm") || !strcmp(f, "tiM")) return 4;
  if (!strcmp(f, "tdm") || !strcmp(f, "ttu") || !strcmp(f, "ttn") || !strcmp(f, "tiD") ||
      !strncmp(f, "ts", 2) || !strncmp(f, "tD", 2))
    return 8;
  if (!strcmp(f, "tin")) return 16;
  return 0;
}

static int index_signed(const char *f) { return strchr("csil", f[0]) != NULL; }

static int is_null(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t p) {
  const char *f = s->format;
  if (!strcmp(f, "n")) return 1;
  if (!s->dictionary && (!strncmp(f, "+u", 2) || !strcmp(f, "+r"))) return 0;
  return a->n_buffers > 0 && a->buffers[0] && a->null_count != 0 && !bit(a->buffers[0], p);
}

/* The bytes of a binary-like value at physical row p. */
static const uint8_t *bytes_at(const char *f, const struct ArrowArray *a, int64_t p, int64_t *len) {
  if (f[0] == 'v') {
    const uint8_t *v = (const uint8_t *)a->buffers[1] + 16 * p;
    int32_t l, buf, off;
    memcpy(&l, v, 4);
    *len = l;
    if (l <= 12) return v + 4;
    memcpy(&buf, v + 8, 4);
    memcpy(&off, v + 12, 4);
    return (const uint8_t *)a->buffers[2 + buf] + off;
  }
  int w = (f[0] == 'Z' || f[0] == 'U') ? 8 : 4;
  int64_t start = load_int(a->buffers[1], w, p, 1), end = load_int(a->buffers[1], w, p + 1, 1);
  *len = end - start;
  /* The data of only empty strings may be NULL (NULL + 0 is undefined). */
  return *len > 0 ? (const uint8_t *)a->buffers[2] + start : (const uint8_t *)"";
}

static int eq(cmp *c, const struct ArrowSchema *s, const char *path, const struct ArrowArray *a,
              int64_t pa, const struct ArrowArray *b, int64_t pb, int64_t row);

static int child_path(char *out, size_t n, const char *path, const struct ArrowSchema *child) {
  return snprintf(out, n, "%s.%s", path, child->name ? child->name : "");
}

/* n consecutive child values, from physical rows ca and cb of the children. */
static int eq_children_run(cmp *c, const struct ArrowSchema *s, const char *path, int k,
                           const struct ArrowArray *a, int64_t ca, const struct ArrowArray *b,
                           int64_t cb, int64_t n, int64_t row) {
  char p[512];
  child_path(p, sizeof p, path, s->children[k]);
  const struct ArrowArray *x = a->children[k], *y = b->children[k];
  for (int64_t i = 0; i < n; i++)
    if (eq(c, s->children[k], p, x, x->offset + ca + i, y, y->offset + cb + i, row) != 0) return -1;
  return 0;
}

static int64_t run_index(const struct ArrowArray *a, const struct ArrowSchema *s, int64_t p) {
  const struct ArrowArray *ends = a->children[0];
  int w = fixed_width(s->children[0]->format);
  int64_t lo = 0, hi = ends->length;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (load_int(ends->buffers[1], w, ends->offset + mid, 1) > p)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static int eq_value(cmp *c, const struct ArrowSchema *s, const char *path,
                    const struct ArrowArray *a, int64_t pa, const struct ArrowArray *b, int64_t pb,
                    int64_t row) {
  const char *f = s->format;
  int w = fixed_width(f);
  if (w > 0) {
    if (memcmp((const uint8_t *)a->buffers[1] + pa * w, (const uint8_t *)b->buffers[1] + pb * w,
               (size_t)w) != 0)
      return differ(c, path, row, "%s values differ", f);
    return 0;
  }
  if (!strcmp(f, "b")) {
    if (bit(a->buffers[1], pa) != bit(b->buffers[1], pb))
      return differ(c, path, row, "booleans differ (%d vs %d)", bit(a->buffers[1], pa),
                    bit(b->buffers[1], pb));
    return 0;
  }
  if (!strcmp(f, "z") || !strcmp(f, "u") || !strcmp(f, "Z") || !strcmp(f, "U") ||
      !strcmp(f, "vz") || !strcmp(f, "vu")) {
    int64_t la, lb;
    const uint8_t *x = bytes_at(f, a, pa, &la), *y = bytes_at(f, b, pb, &lb);
    if (la != lb || (la > 0 && memcmp(x, y, (size_t)la) != 0))
      return differ(c, path, row, "'%.*s' vs '%.*s'", (int)(la > 40 ? 40 : la), (const char *)x,
                    (int)(lb > 40 ? 40 : lb), (const char *)y);
    return 0;
  }
  if (!strcmp(f, "+l") || !strcmp(f, "+L") || !strcmp(f, "+m")) {
    int ow = f[1] == 'L' ? 8 : 4;
    int64_t sa = load_int(a->buffers[1], ow, pa, 1),
            na = load_int(a->buffers[1], ow, pa + 1, 1) - sa;
    int64_t sb = load_int(b->buffers[1], ow, pb, 1),
            nb = load_int(b->buffers[1], ow, pb + 1, 1) - sb;
    if (na != nb)
      return differ(c, path, row, "lists of %lld and %lld values", (long long)na, (long long)nb);
    return eq_children_run(c, s, path, 0, a, sa, b, sb, na, row);
  }
  if (!strcmp(f, "+vl") || !strcmp(f, "+vL")) {
    int ow = f[2] == 'L' ? 8 : 4;
    int64_t sa = load_int(a->buffers[1], ow, pa, 1), na = load_int(a->buffers[2], ow, pa, 1);
    int64_t sb = load_int(b->buffers[1], ow, pb, 1), nb = load_int(b->buffers[2], ow, pb, 1);
    if (na != nb)
      return differ(c, path, row, "list views of %lld and %lld values", (long long)na,
                    (long long)nb);
    return eq_children_run(c, s, path, 0, a, sa, b, sb, na, row);
  }
  if (!strncmp(f, "+w:", 3)) {
    int64_t n = atoi(f + 3);
    return eq_children_run(c, s, path, 0, a, pa * n, b, pb * n, n, row);
  }
  if (!strcmp(f, "+s")) {
    for (int64_t k = 0; k < s->n_children; k++)
      if (eq_children_run(c, s, path, (int)k, a, pa, b, pb, 1, row) != 0) return -1;
    return 0;
  }
  if (!strncmp(f, "+u", 2)) {
    int8_t ta = ((const int8_t *)a->buffers[0])[pa], tb = ((const int8_t *)b->buffers[0])[pb];
    if (ta != tb) return differ(c, path, row, "union type ids %d and %d", ta, tb);
    int k = 0;
    const char *ids = f + 4;
    for (; k < s->n_children; k++) {
      if (atoi(ids) == ta) break;
      ids = strchr(ids, ',');
      if (!ids) return differ(c, path, row, "type id %d not in '%s'", ta, f);
      ids++;
    }
    if (k == s->n_children) return differ(c, path, row, "type id %d not in '%s'", ta, f);
    if (f[2] == 'd') {
      int64_t oa = load_int(a->buffers[1], 4, pa, 1), ob = load_int(b->buffers[1], 4, pb, 1);
      return eq_children_run(c, s, path, k, a, oa, b, ob, 1, row);
    }
    return eq_children_run(c, s, path, k, a, pa, b, pb, 1, row);
  }
  if (!strcmp(f, "+r")) {
    int64_t ra = run_index(a, s, pa), rb = run_index(b, s, pb);
    return eq_children_run(c, s, path, 1, a, ra, b, rb, 1, row);
  }
  if (!strcmp(f, "n")) return 0;
  return differ(c, path, row, "format '%s' is not known to the comparator", f);
}

static int eq(cmp *c, const struct ArrowSchema *s, const char *path, const struct ArrowArray *a,
              int64_t pa, const struct ArrowArray *b, int64_t pb, int64_t row) {
  int na = is_null(s, a, pa), nb = is_null(s, b, pb);
  if (na != nb) return differ(c, path, row, "null in %s only", na ? "the first" : "the second");
  if (na) return 0;
  if (s->dictionary) {
    int w = fixed_width(s->format), sg = index_signed(s->format);
    int64_t ia = load_int(a->buffers[1], w, pa, sg), ib = load_int(b->buffers[1], w, pb, sg);
    const struct ArrowArray *da = a->dictionary, *db = b->dictionary;
    if (ia < 0 || ib < 0 || ia >= da->length || ib >= db->length)
      return differ(c, path, row, "dictionary index %lld / %lld out of range", (long long)ia,
                    (long long)ib);
    return eq(c, s->dictionary, path, da, da->offset + ia, db, db->offset + ib, row);
  }
  return eq_value(c, s, path, a, pa, b, pb, row);
}

int array_range_equal(const struct ArrowSchema *schema, const struct ArrowArray *a, int64_t a_row,
                      const struct ArrowArray *b, int64_t b_row, int64_t n, char *msg,
                      size_t msgsz) {
  cmp c = {msg, msgsz};
  if (a_row + n > a->length || b_row + n > b->length)
    return differ(&c, schema->name ? schema->name : "", 0,
                  "range of %lld rows past the end (%lld, %lld)", (long long)n,
                  (long long)a->length, (long long)b->length);
  const char *name = schema->name ? schema->name : "";
  for (int64_t i = 0; i < n; i++)
    if (eq(&c, schema, name, a, a->offset + a_row + i, b, b->offset + b_row + i, a_row + i) != 0)
      return -1;
  return 0;
}

int array_equal(const struct ArrowSchema *schema, const struct ArrowArray *a,
                const struct ArrowArray *b, char *msg, size_t msgsz) {
  if (a->length != b->length) {
    cmp c = {msg, msgsz};
    return differ(&c, schema->name ? schema->name : "", 0, "lengths %lld and %lld",
                  (long long)a->length, (long long)b->length);
  }
  return array_range_equal(schema, a, 0, b, 0, a->length, msg, msgsz);
}

int64_t array_count_nulls(const struct ArrowArray *a, int64_t row, int64_t n) {
  if (a->n_buffers == 0 || !a->buffers[0]) return 0;
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; i++) nulls += !bit(a->buffers[0], a->offset + row + i);
  return nulls;
}
