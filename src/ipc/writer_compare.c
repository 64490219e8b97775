/* writer_compare.c — do two arrays hold the same values?
 *
 * The writer asks this of dictionaries: is a batch's dictionary the one
 * already written, an extension of it (a delta), or something else (a
 * replacement)?  Coalescing and shared dictionary ids ask the same.  The
 * answer is about logical values, as a reader would decode them: values
 * under nulls are not compared (but validity is), offsets may start
 * anywhere, views compare by the bytes they designate, dictionary-encoded
 * values by the values their indices pick, run-end encoded ones by logical
 * row and unions by the child value each row selects.  One comparison per
 * layout serves every caller; an array that does not hold what its layout
 * needs (a buffer too short, an index out of range) compares unequal. */
#include <string.h>

#include "codec/helpers.h"
#include "ipc/dictionary.h"
#include "ipc/writer_internal.h"

static int rows_equal(const ipc_field *f, int as_value, const ipc_array *a, int64_t ia,
                      const ipc_array *b, int64_t ib, int64_t n);

static int valid_at(const uint8_t *bits, int64_t i) { return !bits || bitmap_get(bits, i); }

/* Buffer i of a when it holds at least `need` bytes, else NULL. */
static const uint8_t *buffer_of(const ipc_array *a, int64_t i, int64_t need) {
  if (i >= a->n_buffers || (int64_t)ipc_array_size(a, i) < need) return NULL;
  return ipc_array_data(a, i);
}

/* Bytes [at_a, at_a+size) of buffer i of a equal bytes [at_b, ...) of b's. */
static int bytes_equal(const ipc_array *a, int64_t at_a, const ipc_array *b, int64_t at_b,
                       int64_t i, int64_t size) {
  if (size == 0) return 1;
  const uint8_t *pa = buffer_of(a, i, at_a + size), *pb = buffer_of(b, i, at_b + size);
  return pa && pb && at_a >= 0 && at_b >= 0 && memcmp(pa + at_a, pb + at_b, (size_t)size) == 0;
}

static int bits_equal(const uint8_t *a, int64_t ia, const uint8_t *b, int64_t ib, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (bitmap_get(a, ia + i) != bitmap_get(b, ib + i)) return 0;
  return 1;
}

static int offset_width(const ipc_field *f) {
  int wide = f->type == IPC_LARGE_BINARY || f->type == IPC_LARGE_UTF8 ||
             f->type == IPC_LARGE_LIST || f->type == IPC_LARGE_LIST_VIEW;
  return wide ? 8 : 4;
}

/* Rows of an offsets layout (binary, list) match when each pair spans as
 * many values; then the values spanned, from *from_a and *from_b, *count of
 * them, decide. */
static int spans_match(const ipc_array *a, int64_t ia, const ipc_array *b, int64_t ib, int64_t n,
                       int width, int64_t *from_a, int64_t *from_b, int64_t *count) {
  const uint8_t *oa = buffer_of(a, 1, (ia + n + 1) * width);
  const uint8_t *ob = buffer_of(b, 1, (ib + n + 1) * width);
  if (!oa || !ob) return 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t la = ipc_load_int(oa, width, 1, ia + i + 1) - ipc_load_int(oa, width, 1, ia + i);
    int64_t lb = ipc_load_int(ob, width, 1, ib + i + 1) - ipc_load_int(ob, width, 1, ib + i);
    if (la != lb || la < 0) return 0;
  }
  *from_a = ipc_load_int(oa, width, 1, ia);
  *from_b = ipc_load_int(ob, width, 1, ib);
  *count = ipc_load_int(oa, width, 1, ia + n) - *from_a;
  return *from_a >= 0 && *from_b >= 0;
}

static int child_rows_equal(const ipc_field *f, int64_t c, const ipc_array *a, int64_t ia,
                            const ipc_array *b, int64_t ib, int64_t n) {
  return rows_equal(&f->children[c], 0, a->children[c], ia, b->children[c], ib, n);
}

/* The bytes view i designates (inline or in a data buffer), or NULL. */
static const uint8_t *view_bytes(const ipc_array *a, int64_t i, int32_t *len) {
  const uint8_t *v = ipc_array_data(a, 1) + 16 * i;
  int32_t buf, off;
  memcpy(len, v, 4);
  if (*len <= 12) return *len >= 0 ? v + 4 : NULL;
  memcpy(&buf, v + 8, 4);
  memcpy(&off, v + 12, 4);
  if (buf < 0 || buf >= a->n_buffers - 3 || off < 0) return NULL;
  return buffer_of(a, 2 + buf, (int64_t)off + *len) ? ipc_array_data(a, 2 + buf) + off : NULL;
}

static int views_equal(const ipc_array *a, int64_t ia, const ipc_array *b, int64_t ib, int64_t n) {
  if (!buffer_of(a, 1, (ia + n) * 16) || !buffer_of(b, 1, (ib + n) * 16)) return 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t la, lb;
    const uint8_t *pa = view_bytes(a, ia + i, &la), *pb = view_bytes(b, ib + i, &lb);
    if (!pa || !pb || la != lb || memcmp(pa, pb, (size_t)la) != 0) return 0;
  }
  return 1;
}

static int list_views_equal(const ipc_field *f, const ipc_array *a, int64_t ia, const ipc_array *b,
                            int64_t ib, int64_t n) {
  int w = offset_width(f);
  const uint8_t *oa = buffer_of(a, 1, (ia + n) * w), *sa = buffer_of(a, 2, (ia + n) * w);
  const uint8_t *ob = buffer_of(b, 1, (ib + n) * w), *sb = buffer_of(b, 2, (ib + n) * w);
  if (!oa || !sa || !ob || !sb) return 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t size = ipc_load_int(sa, w, 1, ia + i);
    if (size != ipc_load_int(sb, w, 1, ib + i) ||
        !child_rows_equal(f, 0, a, ipc_load_int(oa, w, 1, ia + i), b,
                          ipc_load_int(ob, w, 1, ib + i), size))
      return 0;
  }
  return 1;
}

static int64_t union_child(const ipc_field *f, int8_t type_id) {
  for (int64_t c = 0; c < f->n_children; c++)
    if (f->union_type_ids[c] == type_id) return c;
  return -1;
}

/* Each row names the same type id, and the child values it selects (at the
 * row itself when sparse, at its offset when dense) are equal. */
static int unions_equal(const ipc_field *f, const ipc_array *a, int64_t ia, const ipc_array *b,
                        int64_t ib, int64_t n) {
  const uint8_t *ta = buffer_of(a, 0, ia + n), *tb = buffer_of(b, 0, ib + n);
  const uint8_t *oa = f->union_dense ? buffer_of(a, 1, (ia + n) * 4) : NULL;
  const uint8_t *ob = f->union_dense ? buffer_of(b, 1, (ib + n) * 4) : NULL;
  if (!ta || !tb || (f->union_dense && (!oa || !ob))) return 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t c = union_child(f, (int8_t)ta[ia + i]);
    int64_t ra = f->union_dense ? ipc_load_int(oa, 4, 1, ia + i) : ia + i;
    int64_t rb = f->union_dense ? ipc_load_int(ob, 4, 1, ib + i) : ib + i;
    if (ta[ia + i] != tb[ib + i] || c < 0 || !child_rows_equal(f, c, a, ra, b, rb, 1)) return 0;
  }
  return 1;
}

/* Run-end encoded rows, walked in pieces over which neither side changes
 * run: runs need not line up, only the value of every row counts. */
static int runs_equal(const ipc_field *f, const ipc_array *a, int64_t ia, const ipc_array *b,
                      int64_t ib, int64_t n) {
  int w = f->children[0].width;
  const ipc_array *ra = a->children[0], *rb = b->children[0];
  const uint8_t *ea = buffer_of(ra, 1, ra->length * w), *eb = buffer_of(rb, 1, rb->length * w);
  if (!ea || !eb) return 0;
  int64_t run_a = ipc_run_containing(ea, w, ra->length, ia);
  int64_t run_b = ipc_run_containing(eb, w, rb->length, ib);
  for (int64_t done = 0; done < n;) {
    if (run_a >= ra->length || run_b >= rb->length ||
        !child_rows_equal(f, 1, a, run_a, b, run_b, 1))
      return 0;
    int64_t end_a = ipc_load_int(ea, w, 1, run_a) - ia, end_b = ipc_load_int(eb, w, 1, run_b) - ib;
    int64_t end = end_a < end_b ? end_a : end_b;
    if (end <= done) return 0; /* run ends that do not increase */
    done = end;
    run_a += end_a == done;
    run_b += end_b == done;
  }
  return 1;
}

/* Dictionary indices pick equal values from their dictionaries. */
static int indices_equal(const ipc_field *f, const ipc_array *a, int64_t ia, const ipc_array *b,
                         int64_t ib, int64_t n) {
  int w = f->index_width;
  const uint8_t *xa = buffer_of(a, 1, (ia + n) * w), *xb = buffer_of(b, 1, (ib + n) * w);
  if (!xa || !xb || !a->dictionary || !b->dictionary) return 0;
  for (int64_t i = 0; i < n; i++)
    if (!rows_equal(f, 1, a->dictionary, ipc_load_int(xa, w, f->index_signed, ia + i),
                    b->dictionary, ipc_load_int(xb, w, f->index_signed, ib + i), 1))
      return 0;
  return 1;
}

/* The values of rows that are all valid (or whose layout has no validity). */
static int values_equal(const ipc_field *f, int as_value, const ipc_array *a, int64_t ia,
                        const ipc_array *b, int64_t ib, int64_t n) {
  int64_t from_a, from_b, count;
  if (f->dict_encoded && !as_value) return indices_equal(f, a, ia, b, ib, n);
  switch (f->type) {
    case IPC_NULL: return 1;
    case IPC_BOOL: {
      const uint8_t *pa = buffer_of(a, 1, (ia + n + 7) / 8),
                    *pb = buffer_of(b, 1, (ib + n + 7) / 8);
      return pa && pb && bits_equal(pa, ia, pb, ib, n);
    }
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
      return spans_match(a, ia, b, ib, n, offset_width(f), &from_a, &from_b, &count) &&
             bytes_equal(a, from_a, b, from_b, 2, count);
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW: return views_equal(a, ia, b, ib, n);
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP:
      return spans_match(a, ia, b, ib, n, offset_width(f), &from_a, &from_b, &count) &&
             child_rows_equal(f, 0, a, from_a, b, from_b, count);
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: return list_views_equal(f, a, ia, b, ib, n);
    case IPC_FIXED_SIZE_LIST:
      return child_rows_equal(f, 0, a, ia * f->list_size, b, ib * f->list_size, n * f->list_size);
    case IPC_STRUCT:
      for (int64_t c = 0; c < f->n_children; c++)
        if (!child_rows_equal(f, c, a, ia, b, ib, n)) return 0;
      return 1;
    case IPC_UNION: return unions_equal(f, a, ia, b, ib, n);
    case IPC_RUN_END_ENCODED: return runs_equal(f, a, ia, b, ib, n);
    default: return bytes_equal(a, ia * f->width, b, ib * f->width, 1, n * f->width);
  }
}

static int has_validity(const ipc_field *f, int as_value) {
  if (f->dict_encoded && !as_value) return 1;
  return f->type != IPC_NULL && f->type != IPC_UNION && f->type != IPC_RUN_END_ENCODED;
}

/* The children the layout reads are all there. */
static int has_children(const ipc_field *f, int as_value, const ipc_array *a) {
  int64_t want = (f->dict_encoded && !as_value) ? 0 : f->n_children;
  if (a->n_children < want) return 0;
  for (int64_t c = 0; c < want; c++)
    if (!a->children[c]) return 0;
  return 1;
}

/* Rows [ia, ia+n) of a and [ib, ib+n) of b: the same rows are null, and
 * each run of valid rows holds equal values. */
static int rows_equal(const ipc_field *f, int as_value, const ipc_array *a, int64_t ia,
                      const ipc_array *b, int64_t ib, int64_t n) {
  if (n < 0 || ia < 0 || ib < 0 || ia + n > a->length || ib + n > b->length) return 0;
  if (n == 0) return 1;
  if (!has_children(f, as_value, a) || !has_children(f, as_value, b)) return 0;
  if (!has_validity(f, as_value)) return values_equal(f, as_value, a, ia, b, ib, n);
  const uint8_t *va = a->null_count ? buffer_of(a, 0, (ia + n + 7) / 8) : NULL;
  const uint8_t *vb = b->null_count ? buffer_of(b, 0, (ib + n + 7) / 8) : NULL;
  if ((a->null_count && !va) || (b->null_count && !vb)) return 0;
  if (!va && !vb) return values_equal(f, as_value, a, ia, b, ib, n);
  for (int64_t i = 0; i < n;) {
    if (valid_at(va, ia + i) != valid_at(vb, ib + i)) return 0;
    int64_t end = i;
    while (end < n && valid_at(va, ia + end) && valid_at(vb, ib + end)) end++;
    if (end > i && !values_equal(f, as_value, a, ia + i, b, ib + i, end - i)) return 0;
    i = end > i ? end : i + 1;
  }
  return 1;
}

int wr_prefix_equal(const ipc_field *f, int as_value, const ipc_array *a, const ipc_array *b,
                    int64_t n) {
  return rows_equal(f, as_value, a, 0, b, 0, n);
}

int wr_nested_dictionaries_extend(const ipc_field *f, int as_value, const ipc_array *old,
                                  const ipc_array *now) {
  if (f->dict_encoded && !as_value) {
    const ipc_array *d0 = old->dictionary, *d1 = now->dictionary;
    return d0 && d1 && wr_prefix_equal(f, 1, d0, d1, d0->length) &&
           wr_nested_dictionaries_extend(f, 1, d0, d1);
  }
  for (int64_t c = 0; c < f->n_children && c < old->n_children && c < now->n_children; c++)
    if (!wr_nested_dictionaries_extend(&f->children[c], 0, old->children[c], now->children[c]))
      return 0;
  return 1;
}
