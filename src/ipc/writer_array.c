/* writer_array.c — normalising C Data Interface arrays for the IPC writer.
 *
 * The IPC format has no array offset: every buffer of a message starts at
 * row 0.  An input slice (ArrowArray.offset != 0, at any level) is turned
 * into buffers that start at its first row: bitmaps are shifted, offsets
 * rebased to 0, fixed-width values and indices sliced, and child arrays cut
 * to the rows the slice uses.  What needs no change is referenced, not
 * copied (unless a copy is asked for). */
#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/scan.h"
#include "ipc/writer_internal.h"

typedef struct norm {
  int copy;
  xchg_error *err;
} norm;

static xchg_status oom(norm *n) { return xchg_errorf(n->err, XCHG_ENOMEM, "out of memory"); }

/* A view of size bytes at p + at: borrowed, or a copy. Absent for size 0. */
static xchg_status take(norm *n, const uint8_t *base, int64_t at, int64_t size, ipc_buffer *out) {
  *out = (ipc_buffer){NULL, 0, NULL};
  if (size <= 0) return XCHG_OK;
  if (!base)
    return xchg_errorf(n->err, XCHG_EINVAL, "a buffer of %lld bytes is missing", (long long)size);
  const uint8_t *p = base + at;
  if (!n->copy) {
    *out = (ipc_buffer){p, (size_t)size, NULL}; /* the caller's batch outlives the write */
    return XCHG_OK;
  }
  xchg_buf *copy = xchg_buf_alloc((size_t)size);
  if (!copy) return oom(n);
  memcpy(xchg_buf_mutable_data(copy), p, (size_t)size);
  *out = (ipc_buffer){xchg_buf_data(copy), (size_t)size, copy};
  return XCHG_OK;
}

/* Bits [off, off+len) of src as a new bitmap starting at bit 0, the bits
 * after len cleared. */
static xchg_buf *shift_bits(const uint8_t *src, int64_t off, int64_t len) {
  size_t bytes = (size_t)((len + 7) / 8);
  xchg_buf *b = xchg_buf_calloc(bytes);
  if (!b) return NULL;
  uint8_t *dst = xchg_buf_mutable_data(b);
  int shift = (int)(off & 7);
  const uint8_t *s = src + (off >> 3);
  size_t src_bytes = (size_t)((off + len + 7) / 8 - (off >> 3));
  for (size_t j = 0; j < bytes; j++) {
    unsigned v = (unsigned)s[j] >> shift;
    if (shift && j + 1 < src_bytes) v |= (unsigned)s[j + 1] << (8 - shift);
    dst[j] = (uint8_t)v;
  }
  if (len & 7) dst[bytes - 1] &= (uint8_t)((1u << (len & 7)) - 1);
  return b;
}

static xchg_status take_bits(norm *n, const uint8_t *src, int64_t off, int64_t len,
                             ipc_buffer *out) {
  *out = (ipc_buffer){NULL, 0, NULL};
  if (len == 0) return XCHG_OK;
  if (!src)
    return xchg_errorf(n->err, XCHG_EINVAL, "a bitmap of %lld bits is missing", (long long)len);
  if ((off & 7) == 0 && !n->copy) return take(n, src, off / 8, (len + 7) / 8, out);
  xchg_buf *b = shift_bits(src, off, len);
  if (!b) return oom(n);
  *out = (ipc_buffer){xchg_buf_data(b), xchg_buf_size(b), b};
  return XCHG_OK;
}

static int64_t count_nulls(const uint8_t *bits, int64_t off, int64_t len) {
  int64_t set = 0, i = off, end = off + len;
  for (; i < end && (i & 7); i++) set += bitmap_get(bits, i);
  int64_t whole_bytes = (end - i) / 8;
  set += ipc_count_set_bits(bits + (i >> 3), whole_bytes);
  for (i += 8 * whole_bytes; i < end; i++) set += bitmap_get(bits, i);
  return len - set;
}

static const uint8_t *buffer(const struct ArrowArray *a, int64_t i) {
  return i < a->n_buffers ? (const uint8_t *)a->buffers[i] : NULL;
}

static xchg_status take_validity(norm *n, const struct ArrowArray *a, int64_t off, int64_t len,
                                 ipc_array *r) {
  const uint8_t *bits = buffer(a, 0);
  r->null_count = 0;
  if (!bits || a->null_count == 0 || len == 0) return XCHG_OK;
  int whole = off == a->offset && len == a->length;
  r->null_count = (whole && a->null_count > 0) ? a->null_count : count_nulls(bits, off, len);
  if (r->null_count == 0) return XCHG_OK;
  return take_bits(n, bits, off, len, &r->buffers[0]);
}

/* Offsets of rows [off, off+len) rebased to 0 into r->buffers[1]; the range
 * of values they cover goes to *first, *count. */
static xchg_status take_offsets(norm *n, const ipc_field *f, const struct ArrowArray *a,
                                int64_t off, int64_t len, int width, ipc_array *r, int64_t *first,
                                int64_t *count) {
  const uint8_t *src = buffer(a, 1);
  *first = *count = 0;
  if (!src) {
    if (len != 0) return xchg_errorf(n->err, XCHG_EINVAL, "field '%s': no offsets buffer", f->path);
    return ipc_array_set_buf(r, 1, xchg_buf_calloc((size_t)width)) ? XCHG_OK : oom(n);
  }
  int64_t start = ipc_load_int(src, width, 1, off), end = ipc_load_int(src, width, 1, off + len);
  if (start < 0 || end < start)
    return xchg_errorf(n->err, XCHG_EINVAL, "field '%s': offsets run from %lld to %lld", f->path,
                       (long long)start, (long long)end);
  *first = start;
  *count = end - start;
  if (start == 0) return take(n, src, off * width, (len + 1) * width, &r->buffers[1]);
  xchg_buf *b = ipc_array_set_buf(r, 1, xchg_buf_alloc((size_t)((len + 1) * width)));
  if (!b) return oom(n);
  uint8_t *dst = xchg_buf_mutable_data(b);
  for (int64_t i = 0; i <= len; i++)
    ipc_store_offset(dst, width, i, ipc_load_int(src, width, 1, off + i) - start);
  return XCHG_OK;
}

static xchg_status norm_array(norm *n, const ipc_field *f, int as_value, const struct ArrowArray *a,
                              int64_t off, int64_t len, ipc_array **out);

static xchg_status norm_child(norm *n, const ipc_field *f, const struct ArrowArray *a, int64_t i,
                              int64_t start, int64_t len, ipc_array *r) {
  const struct ArrowArray *c = a->children[i];
  return norm_array(n, &f->children[i], 0, c, c->offset + start, len, &r->children[i]);
}

static xchg_status norm_whole_child(norm *n, const ipc_field *f, const struct ArrowArray *a,
                                    int64_t i, ipc_array *r) {
  return norm_child(n, f, a, i, 0, a->children[i]->length, r);
}

static xchg_status norm_views(norm *n, const struct ArrowArray *a, int64_t off, int64_t len,
                              ipc_array *r) {
  int64_t n_data = a->n_buffers - 3;
  const int64_t *sizes = (const int64_t *)buffer(a, a->n_buffers - 1);
  if (n_data > 0 && !sizes)
    return xchg_errorf(n->err, XCHG_EINVAL, "binary view array without its buffer sizes");
  xchg_status st = take(n, buffer(a, 1), off * 16, len * 16, &r->buffers[1]);
  for (int64_t i = 0; i < n_data && st == XCHG_OK; i++) {
    int64_t size;
    memcpy(&size, sizes + i, 8);
    st = take(n, buffer(a, 2 + i), 0, size, &r->buffers[2 + i]);
  }
  if (st != XCHG_OK) return st;
  xchg_buf *size_buf = ipc_array_set_buf(r, 2 + n_data, xchg_buf_alloc((size_t)n_data * 8));
  if (!size_buf) return oom(n);
  if (n_data) memcpy(xchg_buf_mutable_data(size_buf), sizes, (size_t)n_data * 8);
  return XCHG_OK;
}

/* Run-end encoded rows [off, off+len): the runs they touch, their ends
 * made relative to off and the last one cut at len. */
static xchg_status norm_run_ends(norm *n, const ipc_field *f, const struct ArrowArray *a,
                                 int64_t off, int64_t len, ipc_array *r) {
  const struct ArrowArray *ends = a->children[0];
  int width = f->children[0].width;
  const uint8_t *p = buffer(ends, 1);
  int64_t runs = ends->length, r0 = 0, r1 = -1;
  if (len > 0) {
    if (!p) return xchg_errorf(n->err, XCHG_EINVAL, "field '%s': no run ends", f->path);
    p += ends->offset * width;
    r0 = ipc_run_containing(p, width, runs, off);
    for (r1 = r0; r1 < runs; r1++) {
      int64_t e = ipc_load_int(p, width, 1, r1);
      if (e >= off + len) break;
    }
    if (r1 >= runs)
      return xchg_errorf(n->err, XCHG_EINVAL, "field '%s': run ends stop before row %lld", f->path,
                         (long long)(off + len));
  }
  int64_t count = r1 - r0 + 1;
  ipc_array *e = r->children[0] = ipc_array_new(2, 0);
  if (!e) return oom(n);
  e->length = count;
  if (count > 0) {
    xchg_buf *end_buf = ipc_array_set_buf(e, 1, xchg_buf_alloc((size_t)(count * width)));
    if (!end_buf) return oom(n);
    uint8_t *dst = xchg_buf_mutable_data(end_buf);
    for (int64_t k = 0; k < count; k++) {
      int64_t v = ipc_load_int(p, width, 1, r0 + k);
      v = (v > off + len ? off + len : v) - off;
      if (width == 2) {
        int16_t v16 = (int16_t)v;
        memcpy(dst + 2 * k, &v16, 2);
      } else {
        ipc_store_offset(dst, width, k, v);
      }
    }
  }
  return norm_child(n, f, a, 1, r0, count, r);
}

/* The C Data buffers of a field's array; a view array states its own count. */
static int64_t buffers_for(const ipc_field *f, int as_value, const struct ArrowArray *a) {
  return ipc_field_c_buffer_count(f, as_value, a->n_buffers > 3 ? a->n_buffers - 3 : 0);
}

static xchg_status norm_value(norm *n, const ipc_field *f, const struct ArrowArray *a, int64_t off,
                              int64_t len, ipc_array *r) {
  int64_t first, count;
  int wide = f->type == IPC_LARGE_BINARY || f->type == IPC_LARGE_UTF8 ||
             f->type == IPC_LARGE_LIST || f->type == IPC_LARGE_LIST_VIEW;
  int ow = wide ? 8 : 4;
  xchg_status st;
  switch (f->type) {
    case IPC_NULL: r->null_count = len; return XCHG_OK;
    case IPC_BOOL:
      st = take_validity(n, a, off, len, r);
      return st == XCHG_OK ? take_bits(n, buffer(a, 1), off, len, &r->buffers[1]) : st;
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
      st = take_validity(n, a, off, len, r);
      if (st == XCHG_OK) st = take_offsets(n, f, a, off, len, ow, r, &first, &count);
      return st == XCHG_OK ? take(n, buffer(a, 2), first, count, &r->buffers[2]) : st;
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW:
      st = take_validity(n, a, off, len, r);
      return st == XCHG_OK ? norm_views(n, a, off, len, r) : st;
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP:
      st = take_validity(n, a, off, len, r);
      if (st == XCHG_OK) st = take_offsets(n, f, a, off, len, ow, r, &first, &count);
      return st == XCHG_OK ? norm_child(n, f, a, 0, first, count, r) : st;
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW:
      st = take_validity(n, a, off, len, r);
      if (st == XCHG_OK) st = take(n, buffer(a, 1), off * ow, len * ow, &r->buffers[1]);
      if (st == XCHG_OK) st = take(n, buffer(a, 2), off * ow, len * ow, &r->buffers[2]);
      return st == XCHG_OK ? norm_whole_child(n, f, a, 0, r) : st;
    case IPC_FIXED_SIZE_LIST:
      st = take_validity(n, a, off, len, r);
      return st == XCHG_OK ? norm_child(n, f, a, 0, off * f->list_size, len * f->list_size, r) : st;
    case IPC_STRUCT:
      st = take_validity(n, a, off, len, r);
      for (int64_t i = 0; i < f->n_children && st == XCHG_OK; i++)
        st = norm_child(n, f, a, i, off, len, r);
      return st;
    case IPC_UNION:
      st = take(n, buffer(a, 0), off, len, &r->buffers[0]);
      if (st == XCHG_OK && f->union_dense)
        st = take(n, buffer(a, 1), off * 4, len * 4, &r->buffers[1]);
      for (int64_t i = 0; i < f->n_children && st == XCHG_OK; i++)
        st = f->union_dense ? norm_whole_child(n, f, a, i, r) : norm_child(n, f, a, i, off, len, r);
      return st;
    case IPC_RUN_END_ENCODED: return norm_run_ends(n, f, a, off, len, r);
    default:
      st = take_validity(n, a, off, len, r);
      return st == XCHG_OK ? take(n, buffer(a, 1), off * f->width, len * f->width, &r->buffers[1])
                           : st;
  }
}

static int64_t children_for(const ipc_field *f, int as_value) {
  return (f->dict_encoded && !as_value) ? 0 : f->n_children;
}

static xchg_status check_shape(norm *n, const ipc_field *f, int as_value,
                               const struct ArrowArray *a, int64_t off, int64_t len) {
  if (!a || (!a->buffers && a->n_buffers > 0) || (!a->children && a->n_children > 0))
    return xchg_errorf(n->err, XCHG_EINVAL, "field '%s': missing array", f->path);
  if (a->offset < 0 || a->length < 0 || off < 0 || len < 0 || off + len > a->offset + a->length)
    return xchg_errorf(n->err, XCHG_EINVAL,
                       "field '%s': rows [%lld, +%lld) lie outside the "
                       "array's [%lld, +%lld)",
                       f->path, (long long)off, (long long)len, (long long)a->offset,
                       (long long)a->length);
  int64_t want_buffers = buffers_for(f, as_value, a);
  if (a->n_buffers != want_buffers || a->n_children != children_for(f, as_value))
    return xchg_errorf(n->err, XCHG_EINVAL,
                       "field '%s' (%s): the array has %lld buffers and "
                       "%lld children, the type needs %lld and %lld",
                       f->path, f->format, (long long)a->n_buffers, (long long)a->n_children,
                       (long long)want_buffers, (long long)children_for(f, as_value));
  for (int64_t i = 0; i < a->n_children; i++)
    if (!a->children[i])
      return xchg_errorf(n->err, XCHG_EINVAL, "field '%s': child %lld missing", f->path,
                         (long long)i);
  if (f->dict_encoded && !as_value && !a->dictionary)
    return xchg_errorf(n->err, XCHG_EINVAL,
                       "field '%s': dictionary-encoded array without a "
                       "dictionary",
                       f->path);
  return XCHG_OK;
}

static xchg_status norm_array(norm *n, const ipc_field *f, int as_value, const struct ArrowArray *a,
                              int64_t off, int64_t len, ipc_array **out) {
  *out = NULL;
  xchg_status st = check_shape(n, f, as_value, a, off, len);
  if (st != XCHG_OK) return st;
  ipc_array *r = *out = ipc_array_new(buffers_for(f, as_value, a), children_for(f, as_value));
  if (!r) return oom(n);
  r->length = len;
  if (!(f->dict_encoded && !as_value)) return norm_value(n, f, a, off, len, r);
  st = take_validity(n, a, off, len, r);
  if (st == XCHG_OK)
    st = take(n, buffer(a, 1), off * f->index_width, len * f->index_width, &r->buffers[1]);
  const struct ArrowArray *d = a->dictionary;
  if (st == XCHG_OK) st = norm_array(n, f, 1, d, d->offset, d->length, &r->dictionary);
  return st;
}

xchg_status wr_normalize(const ipc_field *f, int as_value, const struct ArrowArray *a, int64_t off,
                         int64_t len, int copy, ipc_array **out, xchg_error *err) {
  norm n = {copy, err};
  xchg_status st = norm_array(&n, f, as_value, a, off, len, out);
  if (st != XCHG_OK) {
    ipc_array_unref(*out);
    *out = NULL;
  }
  return st;
}

int64_t wr_array_bytes(const ipc_array *a) {
  int64_t total = 0;
  for (int64_t i = 0; i < a->n_buffers; i++) total += (int64_t)ipc_array_size(a, i);
  for (int64_t i = 0; i < a->n_children; i++) total += wr_array_bytes(a->children[i]);
  if (a->dictionary) total += wr_array_bytes(a->dictionary);
  return total;
}
