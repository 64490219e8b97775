/* concat.c — appending one array to another, for delta dictionaries.
 *
 * A delta dictionary batch appends values to a dictionary, of any value
 * type.  Concatenation works on row ranges (a list's child values are a
 * range of the child array), rebases offsets so the result starts at 0, and
 * shares rather than copies what it can (the data buffers of binary views). */
#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "ipc/dictionary.h"
#include "ipc/writer_internal.h" /* wr_prefix_equal */

typedef struct span {
  const ipc_array *array;
  int64_t offset, length;
} span;

static void set_bit(uint8_t *bits, int64_t i, int v) {
  if (v)
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  else
    bits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* A bitmap of both spans' bits from buffer index; absent bitmaps count as
 * all set.  Sets *zeros to the number of clear bits. */
static xchg_buf *concat_bits(span a, span b, int index, int64_t *zeros) {
  xchg_buf *out = xchg_buf_calloc((size_t)((a.length + b.length + 7) / 8));
  if (!out) return NULL;
  uint8_t *dst = xchg_buf_mutable_data(out);
  int64_t n = 0;
  *zeros = 0;
  for (int s = 0; s < 2; s++) {
    span sp = s ? b : a;
    const uint8_t *src = sp.array->n_buffers > index ? ipc_array_data(sp.array, index) : NULL;
    for (int64_t i = 0; i < sp.length; i++, n++) {
      int v = !src || bitmap_get(src, sp.offset + i);
      set_bit(dst, n, v);
      *zeros += !v;
    }
  }
  return out;
}

static xchg_buf *concat_bytes(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len) {
  xchg_buf *out = xchg_buf_alloc(a_len + b_len);
  if (!out) return NULL;
  if (a_len) memcpy(xchg_buf_mutable_data(out), a, a_len);
  if (b_len) memcpy(xchg_buf_mutable_data(out) + a_len, b, b_len);
  return out;
}

/* Bytes [at, at + n) of buffer index of a: NULL when n is 0, as the
 * buffer of an empty array is absent (NULL), and NULL + 0 is undefined. */
static const uint8_t *bytes_at(const ipc_array *a, int index, int64_t at, int64_t n) {
  return n > 0 ? ipc_array_data(a, index) + at : NULL;
}

static xchg_buf *concat_fixed(span a, span b, int index, int width) {
  return concat_bytes(
      bytes_at(a.array, index, a.offset * width, a.length * width), (size_t)(a.length * width),
      bytes_at(b.array, index, b.offset * width, b.length * width), (size_t)(b.length * width));
}

/* Offsets of both spans rebased to start at 0; returns the ranges of
 * values (child rows or data bytes) they cover in ranges[0..1]. */
static xchg_buf *concat_offsets(span a, span b, int width, int64_t ranges[2][2]) {
  xchg_buf *out = xchg_buf_alloc((size_t)((a.length + b.length + 1) * width));
  if (!out) return NULL;
  uint8_t *dst = xchg_buf_mutable_data(out);
  int64_t n = 0, base = 0;
  ipc_store_offset(dst, width, 0, 0);
  for (int s = 0; s < 2; s++) {
    span sp = s ? b : a;
    const uint8_t *src = ipc_array_data(sp.array, 1);
    int64_t first = ipc_load_int(src, width, 1, sp.offset);
    for (int64_t i = 1; i <= sp.length; i++)
      ipc_store_offset(dst, width, ++n, ipc_load_int(src, width, 1, sp.offset + i) - first + base);
    ranges[s][0] = first;
    ranges[s][1] = ipc_load_int(src, width, 1, sp.offset + sp.length) - first;
    base += ranges[s][1];
  }
  return out;
}

static xchg_status concat_span(const ipc_field *f, int as_value, span a, span b, ipc_array **out,
                               xchg_error *err);

/* The values (child rows or data bytes) that the offsets of span s cover. */
static int64_t offsets_range(span s, int width) {
  const uint8_t *p = ipc_array_data(s.array, 1);
  return ipc_load_int(p, width, 1, s.offset + s.length) - ipc_load_int(p, width, 1, s.offset);
}

/* Appended values are addressed past the ones before them: with 32-bit
 * offsets, `total` must stay addressable, or the stored offsets would wrap
 * and point outside the values. */
static xchg_status check_addressable(const ipc_field *f, int width, int64_t total,
                                     xchg_error *err) {
  if (width == 4 && total > INT32_MAX)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "field '%s': appending makes %lld values, past what "
                       "32-bit offsets address",
                       f->path, (long long)total);
  return XCHG_OK;
}

static xchg_status concat_child(const ipc_field *f, ipc_array *out, int64_t i, span a, span b,
                                xchg_error *err) {
  return concat_span(&f->children[i], 0, a, b, &out->children[i], err);
}

static span child_span(const ipc_array *parent, int64_t i, int64_t offset, int64_t length) {
  return (span){parent->children[i], offset, length};
}

static span whole(const ipc_array *a) { return (span){a, 0, a->length}; }

static xchg_status concat_views(span a, span b, ipc_array *out, xchg_error *err) {
  int64_t na = a.array->n_buffers - 3, nb = b.array->n_buffers - 3;
  xchg_buf *view_buf = ipc_array_set_buf(out, 1, concat_fixed(a, b, 1, 16));
  if (!view_buf) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  uint8_t *views = xchg_buf_mutable_data(view_buf);
  for (int64_t i = a.length; i < a.length + b.length; i++) {
    int32_t len, buf;
    memcpy(&len, views + 16 * i, 4);
    memcpy(&buf, views + 16 * i + 8, 4);
    buf += (int32_t)na;
    if (len > 12) memcpy(views + 16 * i + 8, &buf, 4);
  }
  for (int64_t i = 0; i < na; i++) ipc_array_share_buffer(out, 2 + i, &a.array->buffers[2 + i]);
  for (int64_t i = 0; i < nb; i++)
    ipc_array_share_buffer(out, 2 + na + i, &b.array->buffers[2 + i]);
  xchg_buf *sizes =
      ipc_array_set_buf(out, 2 + na + nb,
                        concat_bytes(ipc_array_data(a.array, 2 + na), (size_t)na * 8,
                                     ipc_array_data(b.array, 2 + nb), (size_t)nb * 8));
  return sizes ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

static xchg_status concat_dense_union(const ipc_field *f, span a, span b, ipc_array *out,
                                      xchg_error *err) {
  for (int64_t c = 0; c < f->n_children; c++) {
    int64_t rows = a.array->children[c]->length + b.array->children[c]->length;
    xchg_status st = check_addressable(f, 4, rows, err);
    if (st != XCHG_OK) return st;
  }
  xchg_buf *offset_buf = ipc_array_set_buf(out, 1, concat_fixed(a, b, 1, 4));
  if (!offset_buf) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  uint8_t *offsets = xchg_buf_mutable_data(offset_buf);
  const int8_t *ids = (const int8_t *)ipc_array_data(out, 0);
  for (int64_t i = a.length; i < a.length + b.length; i++)
    for (int64_t c = 0; c < f->n_children; c++)
      if (f->union_type_ids[c] == ids[i])
        ipc_store_offset(offsets, 4, i,
                         ipc_load_int(offsets, 4, 1, i) + a.array->children[c]->length);
  for (int64_t c = 0; c < f->n_children; c++) {
    xchg_status st =
        concat_child(f, out, c, whole(a.array->children[c]), whole(b.array->children[c]), err);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

static xchg_status concat_list_views(const ipc_field *f, int width, span a, span b, ipc_array *out,
                                     xchg_error *err) {
  int64_t rows = a.array->children[0]->length + b.array->children[0]->length;
  xchg_status st = check_addressable(f, width, rows, err);
  if (st != XCHG_OK) return st;
  xchg_buf *offset_buf = ipc_array_set_buf(out, 1, concat_fixed(a, b, 1, width));
  if (!ipc_array_set_buf(out, 2, concat_fixed(a, b, 2, width)) || !offset_buf)
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  uint8_t *offsets = xchg_buf_mutable_data(offset_buf);
  int64_t shift = a.array->children[0]->length;
  for (int64_t i = a.length; i < a.length + b.length; i++)
    ipc_store_offset(offsets, width, i, ipc_load_int(offsets, width, 1, i) + shift);
  return concat_child(f, out, 0, whole(a.array->children[0]), whole(b.array->children[0]), err);
}

int64_t ipc_run_containing(const uint8_t *ends, int width, int64_t runs, int64_t row) {
  int64_t lo = 0, hi = runs;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (ipc_load_int(ends, width, 1, mid) > row)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The runs that rows [s.offset, +s.length) touch: from *first, *count of them. */
static xchg_status runs_of(const ipc_field *f, span s, int64_t *first, int64_t *count,
                           xchg_error *err) {
  const ipc_array *ends = s.array->children[0];
  int width = f->children[0].width;
  *first = *count = 0;
  if (s.length == 0) return XCHG_OK;
  const uint8_t *p = ipc_array_data(ends, 1);
  *first = ipc_run_containing(p, width, ends->length, s.offset);
  int64_t last = ipc_run_containing(p, width, ends->length, s.offset + s.length - 1);
  if (last >= ends->length)
    return xchg_errorf(err, XCHG_EFORMAT, "field '%s': run ends stop before row %lld", f->path,
                       (long long)(s.offset + s.length));
  *count = last - *first + 1;
  return XCHG_OK;
}

/* Run-end encoded rows: the runs each span touches, their ends made
 * relative to the span, cut at its end and moved past the rows before. */
static xchg_status concat_run_ends(const ipc_field *f, span a, span b, ipc_array *out,
                                   xchg_error *err) {
  int width = f->children[0].width;
  int64_t first[2], count[2], max = width == 2 ? INT16_MAX : width == 4 ? INT32_MAX : INT64_MAX;
  xchg_status st = runs_of(f, a, &first[0], &count[0], err);
  if (st == XCHG_OK) st = runs_of(f, b, &first[1], &count[1], err);
  if (st != XCHG_OK) return st;
  if (a.length > max - b.length)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "field '%s': appending makes %lld rows, past what its "
                       "run ends hold",
                       f->path, (long long)(a.length + b.length));
  ipc_array *ends = out->children[0] = ipc_array_new(2, 0);
  xchg_buf *buf =
      ends ? ipc_array_set_buf(ends, 1, xchg_buf_alloc((size_t)((count[0] + count[1]) * width)))
           : NULL;
  if (!buf) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  ends->length = count[0] + count[1];
  uint8_t *dst = xchg_buf_mutable_data(buf);
  int64_t n = 0, base = 0;
  for (int s = 0; s < 2; s++) {
    span sp = s ? b : a;
    const uint8_t *src = ipc_array_data(sp.array->children[0], 1);
    for (int64_t k = 0; k < count[s]; k++) {
      int64_t end = ipc_load_int(src, width, 1, first[s] + k);
      ipc_store_int(dst, width, n++,
                    (end < sp.offset + sp.length ? end : sp.offset + sp.length) - sp.offset + base);
    }
    base += sp.length;
  }
  return concat_child(f, out, 1, child_span(a.array, 1, first[0], count[0]),
                      child_span(b.array, 1, first[1], count[1]), err);
}

static xchg_status concat_value(const ipc_field *f, span a, span b, ipc_array *out,
                                xchg_error *err) {
  int64_t ranges[2][2];
  int large = f->type == IPC_LARGE_BINARY || f->type == IPC_LARGE_UTF8 ||
              f->type == IPC_LARGE_LIST || f->type == IPC_LARGE_LIST_VIEW;
  int width = large ? 8 : 4;
  xchg_status st;
  switch (f->type) {
    case IPC_NULL: return XCHG_OK;
    case IPC_BOOL: {
      int64_t zeros;
      ipc_array_set_buf(out, 1, concat_bits(a, b, 1, &zeros));
      break;
    }
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
      if ((st = check_addressable(f, width, offsets_range(a, width) + offsets_range(b, width),
                                  err)) != XCHG_OK)
        return st;
      if (!ipc_array_set_buf(out, 1, concat_offsets(a, b, width, ranges))) break;
      if (!ipc_array_set_buf(
              out, 2,
              concat_bytes(bytes_at(a.array, 2, ranges[0][0], ranges[0][1]), (size_t)ranges[0][1],
                           bytes_at(b.array, 2, ranges[1][0], ranges[1][1]), (size_t)ranges[1][1])))
        return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
      break;
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP:
      if ((st = check_addressable(f, width, offsets_range(a, width) + offsets_range(b, width),
                                  err)) != XCHG_OK)
        return st;
      if (!ipc_array_set_buf(out, 1, concat_offsets(a, b, width, ranges))) break;
      return concat_child(f, out, 0, child_span(a.array, 0, ranges[0][0], ranges[0][1]),
                          child_span(b.array, 0, ranges[1][0], ranges[1][1]), err);
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: return concat_list_views(f, width, a, b, out, err);
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW: return concat_views(a, b, out, err);
    case IPC_FIXED_SIZE_LIST:
      return concat_child(
          f, out, 0, child_span(a.array, 0, a.offset * f->list_size, a.length * f->list_size),
          child_span(b.array, 0, b.offset * f->list_size, b.length * f->list_size), err);
    case IPC_STRUCT:
      for (int64_t c = 0; c < f->n_children; c++) {
        st = concat_child(f, out, c, child_span(a.array, c, a.offset, a.length),
                          child_span(b.array, c, b.offset, b.length), err);
        if (st != XCHG_OK) return st;
      }
      return XCHG_OK;
    case IPC_UNION:
      if (!ipc_array_set_buf(out, 0, concat_fixed(a, b, 0, 1)))
        return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
      if (f->union_dense) return concat_dense_union(f, a, b, out, err);
      for (int64_t c = 0; c < f->n_children; c++) {
        st = concat_child(f, out, c, child_span(a.array, c, a.offset, a.length),
                          child_span(b.array, c, b.offset, b.length), err);
        if (st != XCHG_OK) return st;
      }
      return XCHG_OK;
    case IPC_RUN_END_ENCODED: return concat_run_ends(f, a, b, out, err);
    default: ipc_array_set_buf(out, 1, concat_fixed(a, b, 1, f->width)); break;
  }
  return out->buffers[1].data ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

static int64_t buffers_of(const ipc_field *f, int as_value, const ipc_array *a,
                          const ipc_array *b) {
  int views = f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW;
  if (views && !(f->dict_encoded && !as_value)) return a->n_buffers + b->n_buffers - 3;
  return a->n_buffers;
}

static xchg_status concat_span(const ipc_field *f, int as_value, span a, span b, ipc_array **out,
                               xchg_error *err) {
  int indices = f->dict_encoded && !as_value;
  ipc_array *r = *out =
      ipc_array_new(buffers_of(f, as_value, a.array, b.array), a.array->n_children);
  if (!r) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  r->length = a.length + b.length;
  /* Indices have validity whatever the type of their values. */
  int has_validity =
      indices || (f->type != IPC_NULL && f->type != IPC_UNION && f->type != IPC_RUN_END_ENCODED);
  if (f->type == IPC_NULL && !indices) r->null_count = r->length;
  if (has_validity && (a.array->null_count || b.array->null_count)) {
    if (!ipc_array_set_buf(r, 0, concat_bits(a, b, 0, &r->null_count)))
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  if (!indices) return concat_value(f, a, b, r, err);
  /* The result holds b's dictionary: a's indices must pick the same values
   * in it, as after a delta.  A replacement (the same length or longer
   * included) would give a's rows other values. */
  ipc_array *da = a.array->dictionary, *db = b.array->dictionary;
  if (da != db && (da->length > db->length || !wr_prefix_equal(f, 1, da, db, da->length)))
    return xchg_errorf(err, XCHG_ENOTSUP,
                       "field '%s': appending values whose dictionary was replaced, not "
                       "extended, in between: one array holds one dictionary",
                       f->path);
  r->dictionary = ipc_array_ref(db);
  return ipc_array_set_buf(r, 1, concat_fixed(a, b, 1, f->index_width))
             ? XCHG_OK
             : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

xchg_status ipc_array_concat(const ipc_field *field, int as_value, ipc_array *a, ipc_array *b,
                             ipc_array **out, xchg_error *err) {
  xchg_status st = concat_span(field, as_value, whole(a), whole(b), out, err);
  if (st != XCHG_OK) {
    ipc_array_unref(*out);
    *out = NULL;
  }
  return st;
}
