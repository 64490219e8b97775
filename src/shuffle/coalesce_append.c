/* coalesce_append.c — appending a span of a wire batch's field to the
 * output batch, type by type: validity and boolean bits shifted, offsets
 * rebased, views and union offsets moved, list and run-end children cut
 * to the range their parent uses (see coalesce.h). */
#include <string.h>

#include "ipc/dictionary.h"
#include "ipc/scan.h"
#include "ipc/format.h"
#include "shuffle/coalesce_internal.h"

/* ---- bits ------------------------------------------------------------------ */

static int bit_at(const uint8_t *bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

static void set_bit(uint8_t *bits, int64_t i, int v) {
  if (v)
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  else
    bits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* Bits [s, s+n) of src to bits [d, d+n) of dst; the bits of dst's bytes
 * past d+n may change. */
static void copy_bits(uint8_t *dst, int64_t d, const uint8_t *src, int64_t s, int64_t n) {
  for (; n > 0 && (d & 7); d++, s++, n--) set_bit(dst, d, bit_at(src, s));
  int64_t bytes = n >> 3;
  const uint8_t *p = src + (s >> 3);
  unsigned shift = (unsigned)(s & 7);
  if (shift == 0) {
    memcpy(dst + (d >> 3), p, (size_t)bytes);
  } else {
    uint8_t *q = dst + (d >> 3);
    for (int64_t i = 0; i < bytes; i++)
      q[i] = (uint8_t)((p[i] >> shift) | (p[i + 1] << (8 - shift)));
  }
  d += bytes * 8;
  s += bytes * 8;
  for (n -= bytes * 8; n > 0; d++, s++, n--) set_bit(dst, d, bit_at(src, s));
}

static void set_bits(uint8_t *dst, int64_t d, int64_t n) {
  for (; n > 0 && (d & 7); d++, n--) set_bit(dst, d, 1);
  memset(dst + (d >> 3), 0xff, (size_t)(n >> 3));
  for (d += n & ~(int64_t)7, n &= 7; n > 0; d++, n--) set_bit(dst, d, 1);
}

static int64_t count_set(const uint8_t *bits, int64_t s, int64_t n) {
  int64_t set = 0;
  for (; n > 0 && (s & 7); s++, n--) set += bit_at(bits, s);
  set += ipc_count_set_bits(bits + (s >> 3), n >> 3);
  for (s += n & ~(int64_t)7, n &= 7; n > 0; s++, n--) set += bit_at(bits, s);
  return set;
}

static int64_t bitmap_bytes(int64_t bits) { return (bits + 7) / 8; }

/* Room in buffer j of o, a bitmap, for `bits` bits: its new bytes come
 * zeroed, so that the bits past the last row are 0 (as the IPC format
 * wants a buffer's padding), not what the memory held before, which a
 * writer would otherwise copy into its output. */
static uint8_t *reserve_bitmap(coalescer *c, out_node *o, int j, int64_t bits) {
  size_t extra = (size_t)bitmap_bytes(bits) - o->size[j];
  uint8_t *dst = coalesce_reserve(c, o, j, extra);
  if (dst) memset(dst, 0, extra);
  return dst;
}

/* ---- appending a field's span ------------------------------------------------- */

/* append_validity when there are bits to write: the node has nulls, or
 * the output a bitmap already. */
static xchg_status write_validity(coalescer *c, out_node *o, int64_t k, int64_t node_length,
                                  int64_t node_nulls, int64_t off, int64_t n,
                                  const uint8_t **bits) {
  size_t bytes = (size_t)bitmap_bytes(o->length + n);
  if (node_nulls == 0) {
    if (!reserve_bitmap(c, o, 0, o->length + n)) return XCHG_ENOMEM;
    set_bits(o->b[0].data, o->length, n);
    o->size[0] = bytes;
    return XCHG_OK;
  }
  const uint8_t *src;
  xchg_status st = coalesce_values_of(c, k, bitmap_bytes(off + n), "validity", &src);
  if (st != XCHG_OK) return st;
  if (!o->validity) {
    o->size[0] = 0;
    if (!reserve_bitmap(c, o, 0, o->length + n)) return XCHG_ENOMEM;
    set_bits(o->b[0].data, 0, o->length);
    o->validity = 1;
  } else if (!reserve_bitmap(c, o, 0, o->length + n)) {
    return XCHG_ENOMEM;
  }
  copy_bits(o->b[0].data, o->length, src, off, n);
  o->size[0] = bytes;
  o->null_count += off == 0 && n == node_length ? node_nulls : n - count_set(src, off, n);
  if (bits) *bits = src;
  return XCHG_OK;
}

/* The validity of rows [off, off+n) from buffer k (read only when the
 * node has nulls); *bits (may be NULL) gets the source bitmap, NULL when
 * every row is valid.  Nothing to do, the common case, is decided here in
 * line. */
static inline xchg_status append_validity(coalescer *c, out_node *o, int64_t k, int64_t node_length,
                                          int64_t node_nulls, int64_t off, int64_t n,
                                          const uint8_t **bits) {
  if (bits) *bits = NULL;
  if (node_nulls == 0 && (!o->validity || n == 0)) return XCHG_OK;
  return write_validity(c, o, k, node_length, node_nulls, off, n, bits);
}

static int row_valid(const uint8_t *bits, int64_t i) { return !bits || bit_at(bits, i); }

static xchg_status append_fixed(coalescer *c, out_node *o, int64_t k, int64_t off, int64_t n,
                                int64_t width) {
  int64_t start, count;
  xchg_status st = coalesce_span_bytes(c, off, n, width, &start, &count);
  if (st != XCHG_OK) return st;
  uint8_t *dst = coalesce_reserve(c, o, 1, (size_t)count);
  if (!dst) return XCHG_ENOMEM;
  if ((st = coalesce_put_bytes(c, k, start, count, dst)) == XCHG_OK) o->size[1] += (size_t)count;
  return st;
}

static xchg_status append_bits(coalescer *c, out_node *o, int64_t k, int64_t off, int64_t n) {
  const uint8_t *src;
  xchg_status st = coalesce_values_of(c, k, bitmap_bytes(off + n), "values", &src);
  size_t bytes = (size_t)bitmap_bytes(o->length + n);
  if (st != XCHG_OK) return st;
  if (n == 0) return XCHG_OK;
  if (!reserve_bitmap(c, o, 1, o->length + n)) return XCHG_ENOMEM;
  copy_bits(o->b[1].data, o->length, src, off, n);
  o->size[1] = bytes;
  return XCHG_OK;
}

/* Offsets of rows [off, off+n) from buffer k, into the values of which
 * `limit` are there, rebased onto the `base` values the output has:
 * *first and *last are the source range they use. */
static xchg_status append_offsets(coalescer *c, out_node *o, int64_t k, int width, int64_t off,
                                  int64_t n, int64_t limit, int64_t base, int64_t *first,
                                  int64_t *last) {
  int64_t start, count, size;
  const uint8_t *src;
  /* No rows of an empty offsets buffer: an empty array's, which writers
   * may leave out (apache-arrow does, for a dense union's child that the
   * rows of a slice do not use), as xchg_ipc_reader takes it
   * (ipc/decode_validate.c, zero_offsets).  Nothing to append. */
  xchg_status st = n == 0 ? coalesce_decoded_size(c, k, &size) : XCHG_OK;
  if (st != XCHG_OK) return st;
  if (n == 0 && size == 0) {
    *first = *last = 0;
    return XCHG_OK;
  }
  st = coalesce_span_bytes(c, off, n + 1, width, &start, &count);
  if (st == XCHG_OK) st = coalesce_values_of(c, k, start + count, "offsets", &src);
  if (st != XCHG_OK) return st;
  *first = ipc_load_int(src, width, 1, off);
  *last = ipc_load_int(src, width, 1, off + n);
  if (*first < 0 || *last < *first || *last > limit)
    return coalesce_fail(c, k, XCHG_EFORMAT,
                         "offsets of rows [%lld, %lld] are %lld and %lld, outside [0, "
                         "%lld]",
                         (long long)off, (long long)(off + n), (long long)*first, (long long)*last,
                         (long long)limit);
  if (width == 4 && base + (*last - *first) > INT32_MAX)
    return coalesce_overflow(c, base + (*last - *first));
  size_t extra = (size_t)(n + (o->size[1] == 0)) * (size_t)width;
  uint8_t *dst = coalesce_reserve(c, o, 1, extra);
  if (!dst) return XCHG_ENOMEM;
  if (o->size[1] == 0) {
    ipc_store_offset(dst, width, 0, 0);
    dst += width;
  }
  coalesce_rebase(dst, src + (off + 1) * width, n, width, base - *first);
  o->size[1] += extra;
  return XCHG_OK;
}

static xchg_status append_binary(coalescer *c, out_node *o, int64_t k, int width, int64_t off,
                                 int64_t n) {
  int64_t data_size, first, last;
  xchg_status st = coalesce_decoded_size(c, k + 2, &data_size);
  if (st == XCHG_OK)
    st = append_offsets(c, o, k + 1, width, off, n, data_size, (int64_t)o->size[2], &first, &last);
  if (st != XCHG_OK) return st;
  uint8_t *dst = coalesce_reserve(c, o, 2, (size_t)(last - first));
  if (!dst) return XCHG_ENOMEM;
  if ((st = coalesce_put_bytes(c, k + 2, first, last - first, dst)) == XCHG_OK)
    o->size[2] += (size_t)(last - first);
  return st;
}

static xchg_status append_list(coalescer *c, int64_t fi, out_node *o, int64_t k, int width,
                               int64_t off, int64_t n) {
  int64_t child = coalesce_kid(c, fi, 0), child_length, child_nulls, first, last;
  coalesce_node_of(c->b, child, &child_length, &child_nulls);
  xchg_status st =
      append_offsets(c, o, k + 1, width, off, n, child_length, c->out[child].length, &first, &last);
  return st == XCHG_OK ? coalesce_append_field(c, child, first, last - first) : st;
}

/* List views point anywhere into their child: the child goes whole, and
 * the offsets move past the child rows before it. */
static xchg_status append_list_views(coalescer *c, int64_t fi, out_node *o, int64_t k, int width,
                                     const uint8_t *bits, int64_t off, int64_t n) {
  int64_t child = coalesce_kid(c, fi, 0), child_length, child_nulls, start, count;
  coalesce_node_of(c->b, child, &child_length, &child_nulls);
  int64_t base = c->out[child].length;
  if (width == 4 && base + child_length > INT32_MAX)
    return coalesce_overflow(c, base + child_length);
  const uint8_t *offsets, *sizes;
  xchg_status st = coalesce_span_bytes(c, off, n, width, &start, &count);
  if (st == XCHG_OK) st = coalesce_values_of(c, k + 1, start + count, "offsets", &offsets);
  if (st == XCHG_OK) st = coalesce_values_of(c, k + 2, start + count, "sizes", &sizes);
  if (st != XCHG_OK) return st;
  uint8_t *dst_offsets = coalesce_reserve(c, o, 1, (size_t)count);
  uint8_t *dst_sizes = dst_offsets ? coalesce_reserve(c, o, 2, (size_t)count) : NULL;
  if (!dst_sizes) return XCHG_ENOMEM;
  for (int64_t i = 0; i < n; i++) {
    int64_t at = ipc_load_int(offsets, width, 1, off + i),
            size = ipc_load_int(sizes, width, 1, off + i);
    if (!row_valid(bits, off + i)) at = size = 0;
    if (at < 0 || size < 0 || size > child_length - at)
      return coalesce_fail(c, k + 1, XCHG_EFORMAT,
                           "list view at row %lld (offset %lld, size %lld) exceeds "
                           "the %lld child values",
                           (long long)(off + i), (long long)at, (long long)size,
                           (long long)child_length);
    ipc_store_offset(dst_offsets, width, i, at + base);
    ipc_store_offset(dst_sizes, width, i, size);
  }
  o->size[1] += (size_t)count;
  o->size[2] += (size_t)count;
  return coalesce_append_field(c, child, 0, child_length);
}

/* Binary views: every data buffer of the batch is appended to the
 * output's one data buffer, and each view that points into one is moved
 * to where its bytes now are (a view under a null is zeroed). */
static xchg_status append_views(coalescer *c, int64_t fi, out_node *o, int64_t k,
                                const uint8_t *bits, int64_t off, int64_t n) {
  int64_t n_data = c->n_var[fi], start, count, total = 0;
  int64_t *bases = coalesce_scratch_alloc(&c->scratch, (size_t)(n_data + 1) * sizeof *bases);
  if (!bases) return coalesce_fail(c, -1, XCHG_ENOMEM, "out of memory");
  xchg_status st = XCHG_OK;
  for (int64_t j = 0; j < n_data && st == XCHG_OK; j++) {
    bases[j] = (int64_t)o->size[2] + total;
    int64_t size;
    st = coalesce_decoded_size(c, k + 2 + j, &size);
    total += size;
  }
  bases[n_data] = (int64_t)o->size[2] + total;
  if (st != XCHG_OK) return st;
  if (bases[n_data] > INT32_MAX) return coalesce_overflow(c, bases[n_data]);
  const uint8_t *views;
  if ((st = coalesce_span_bytes(c, off, n, 16, &start, &count)) != XCHG_OK ||
      (st = coalesce_values_of(c, k + 1, start + count, "views", &views)) != XCHG_OK)
    return st;
  uint8_t *data = coalesce_reserve(c, o, 2, (size_t)total);
  uint8_t *dst = data ? coalesce_reserve(c, o, 1, (size_t)count) : NULL;
  if (!dst) return XCHG_ENOMEM;
  for (int64_t j = 0; j < n_data && st == XCHG_OK; j++)
    st = coalesce_put_bytes(c, k + 2 + j, 0, bases[j + 1] - bases[j], data + (bases[j] - bases[0]));
  if (st != XCHG_OK) return st;
  for (int64_t i = 0; i < n; i++) {
    uint8_t *view = dst + 16 * i;
    memcpy(view, views + start + 16 * i, 16);
    int32_t len, buf, at;
    memcpy(&len, view, 4);
    memcpy(&buf, view + 8, 4);
    memcpy(&at, view + 12, 4);
    if (!row_valid(bits, off + i)) {
      memset(view, 0, 16);
      continue;
    }
    if (len >= 0 && len <= 12) continue;
    if (len < 0 || buf < 0 || buf >= n_data || at < 0 ||
        (int64_t)at + len > bases[buf + 1] - bases[buf])
      return coalesce_fail(c, k + 1, XCHG_EFORMAT,
                           "view at row %lld (length %d, buffer %d, offset %d) "
                           "points outside the %lld data buffers",
                           (long long)(off + i), len, buf, at, (long long)n_data);
    int32_t moved = (int32_t)(bases[buf] + at), zero = 0;
    memcpy(view + 8, &zero, 4);
    memcpy(view + 12, &moved, 4);
  }
  o->size[1] += (size_t)count;
  o->size[2] += (size_t)total;
  return XCHG_OK;
}

/* A dense union's children go whole; its offsets move past the rows
 * each child had before. */
static xchg_status append_dense_union(coalescer *c, int64_t fi, out_node *o, int64_t k,
                                      const uint8_t *ids, int64_t off, int64_t n) {
  const flat_field *ff = &c->fields[fi];
  int64_t base[128], length[128], nulls;
  for (int64_t i = 0; i < ff->n_kids; i++) {
    coalesce_node_of(c->b, coalesce_kid(c, fi, i), &length[i], &nulls);
    base[i] = c->out[coalesce_kid(c, fi, i)].length;
    if (base[i] + length[i] > INT32_MAX) return coalesce_overflow(c, base[i] + length[i]);
  }
  const uint8_t *offsets;
  xchg_status st = coalesce_values_of(c, k + 1, (off + n) * 4, "offsets", &offsets);
  if (st != XCHG_OK) return st;
  uint8_t *dst = coalesce_reserve(c, o, 1, (size_t)n * 4);
  if (!dst) return XCHG_ENOMEM;
  for (int64_t i = 0; i < n; i++) {
    int8_t id = (int8_t)ids[off + i];
    int child = id >= 0 ? ff->child_of[id] : -1;
    if (child < 0)
      return coalesce_fail(c, k, XCHG_EFORMAT, "type id %d at row %lld is not one of the union's",
                           id, (long long)(off + i));
    int64_t at = ipc_load_int(offsets, 4, 1, off + i);
    if (at < 0 || at >= length[child])
      return coalesce_fail(c, k + 1, XCHG_EFORMAT,
                           "dense union offset %lld at row %lld is outside child "
                           "%d's %lld rows",
                           (long long)at, (long long)(off + i), child, (long long)length[child]);
    ipc_store_offset(dst, 4, i, at + base[child]);
  }
  o->size[1] += (size_t)n * 4;
  for (int64_t i = 0; i < ff->n_kids && st == XCHG_OK; i++)
    st = coalesce_append_field(c, coalesce_kid(c, fi, i), 0, length[i]);
  return st;
}

static xchg_status append_union(coalescer *c, int64_t fi, out_node *o, int64_t k, int64_t nulls,
                                int64_t off, int64_t n) {
  const ipc_field *f = c->fields[fi].f;
  /* Before metadata V5, unions had a validity buffer, which is dropped. */
  int legacy = c->b->version < IPC_METADATA_V5;
  if (nulls != 0 && !legacy)
    return coalesce_fail(c, -1, XCHG_EFORMAT, "a union has null_count %lld", (long long)nulls);
  k += legacy;
  const uint8_t *ids;
  xchg_status st = coalesce_values_of(c, k, off + n, "type ids", &ids);
  uint8_t *dst = st == XCHG_OK ? coalesce_reserve(c, o, 0, (size_t)n) : NULL;
  if (st != XCHG_OK || !dst) return st != XCHG_OK ? st : XCHG_ENOMEM;
  memcpy(dst, ids + off, (size_t)n);
  o->size[0] += (size_t)n;
  if (f->union_dense) return append_dense_union(c, fi, o, k, ids, off, n);
  for (int64_t i = 0; i < c->fields[fi].n_kids && st == XCHG_OK; i++)
    st = coalesce_append_field(c, coalesce_kid(c, fi, i), off, n);
  return st;
}

/* Run-end encoded rows: the runs the span touches, their ends made
 * relative to the span, cut at its end and moved past the rows before. */
static xchg_status append_run_ends(coalescer *c, int64_t fi, out_node *o, int64_t off, int64_t n) {
  int64_t ends_field = coalesce_kid(c, fi, 0), runs, ends_nulls;
  coalesce_node_of(c->b, ends_field, &runs, &ends_nulls);
  int width = c->fields[ends_field].f->width;
  int64_t max = width == 2 ? INT16_MAX : width == 4 ? INT32_MAX : INT64_MAX;
  if (n == 0) return XCHG_OK;
  if (ends_nulls != 0)
    return coalesce_fail(c, -1, XCHG_EFORMAT, "run ends with %lld nulls", (long long)ends_nulls);
  if (o->length > max - n) return coalesce_overflow(c, o->length + n);
  const uint8_t *ends;
  int64_t k = c->buf_at[ends_field] + 1, start, count;
  xchg_status st = coalesce_span_bytes(c, 0, runs, width, &start, &count);
  if (st == XCHG_OK) st = coalesce_values_of(c, k, count, "run ends", &ends);
  if (st != XCHG_OK) return st;
  int64_t first = ipc_run_containing(ends, width, runs, off);
  int64_t last = ipc_run_containing(ends, width, runs, off + n - 1);
  if (last >= runs || last < first)
    return coalesce_fail(c, k, XCHG_EFORMAT, "run ends stop before row %lld", (long long)(off + n));
  out_node *oe = &c->out[ends_field];
  uint8_t *dst = coalesce_reserve(c, oe, 1, (size_t)((last - first + 1) * width));
  if (!dst) return XCHG_ENOMEM;
  for (int64_t r = first; r <= last; r++) {
    int64_t end = ipc_load_int(ends, width, 1, r);
    ipc_store_int(dst, width, r - first, (end < off + n ? end : off + n) - off + o->length);
  }
  oe->size[1] += (size_t)((last - first + 1) * width);
  oe->length += last - first + 1;
  return coalesce_append_field(c, coalesce_kid(c, fi, 1), first, last - first + 1);
}

/* The values of rows [off, off+n) after their validity (bits: the
 * source's, NULL when every row is valid). */
static xchg_status append_values(coalescer *c, int64_t fi, out_node *o, int64_t k,
                                 const uint8_t *bits, int64_t off, int64_t n) {
  const flat_field *ff = &c->fields[fi];
  int width = (int)ff->width;
  xchg_status st = XCHG_OK;
  switch (ff->kind) {
    case APPEND_FIXED: return append_fixed(c, o, k + 1, off, n, ff->width);
    case APPEND_BITS: return append_bits(c, o, k + 1, off, n);
    case APPEND_BINARY: return append_binary(c, o, k, width, off, n);
    case APPEND_LIST: return append_list(c, fi, o, k, width, off, n);
    case APPEND_LIST_VIEW: return append_list_views(c, fi, o, k, width, bits, off, n);
    case APPEND_VIEW: return append_views(c, fi, o, k, bits, off, n);
    case APPEND_STRUCT:
      for (int64_t i = 0; i < ff->n_kids && st == XCHG_OK; i++)
        st = coalesce_append_field(c, coalesce_kid(c, fi, i), off, n);
      return st;
    default: { /* APPEND_FIXED_LIST */
      int64_t start, count;
      st = coalesce_span_bytes(c, off, n, ff->width, &start, &count);
      return st == XCHG_OK ? coalesce_append_field(c, coalesce_kid(c, fi, 0), start, count) : st;
    }
  }
}

/* Appends rows [off, off+n) of field fi's node. */
xchg_status coalesce_append_field(coalescer *c, int64_t fi, int64_t off, int64_t n) {
  const flat_field *ff = &c->fields[fi];
  out_node *o = &c->out[fi];
  int64_t length, nulls, k = c->buf_at[fi];
  coalesce_node_of(c->b, fi, &length, &nulls);
  c->at = ff->f;
  if (off > length || n > length - off)
    return coalesce_fail(c, -1, XCHG_EFORMAT, "rows [%lld, +%lld) wanted of a field node of %lld",
                         (long long)off, (long long)n, (long long)length);
  xchg_status st;
  const uint8_t *bits;
  switch (ff->kind) {
    case APPEND_NULL:
      o->null_count += n;
      st = XCHG_OK;
      break;
    case APPEND_UNION: st = append_union(c, fi, o, k, nulls, off, n); break;
    case APPEND_RUN_ENDS: st = append_run_ends(c, fi, o, off, n); break;
    default:
      st = append_validity(c, o, k, length, nulls, off, n, &bits);
      if (st == XCHG_OK) st = append_values(c, fi, o, k, bits, off, n);
      break;
  }
  c->at = ff->f;
  if (st == XCHG_OK) o->length += n;
  return st;
}

/* A top-level column of values of fixed width or binary in an
 * uncompressed body (the common case of a shuffle block): its validity
 * and values appended without the general walk's steps (its node's
 * length is the batch's, checked by lay_out).  Other columns, and fixed
 * values their buffer does not hold, take coalesce_append_field (which
 * reports those). */
xchg_status coalesce_append_column_walk(coalescer *c, int64_t fi, int64_t n) {
  const flat_field *ff = &c->fields[fi];
  out_node *o = &c->out[fi];
  int64_t k = c->buf_at[fi], count = 0, offset = 0, len;
  if (c->b->codec != XCHG_BLOCK_NONE || (ff->kind != APPEND_FIXED && ff->kind != APPEND_BINARY))
    return coalesce_append_field(c, fi, 0, n);
  if (ff->kind == APPEND_FIXED) {
    coalesce_spec_of(c->b, k + 1, &offset, &len);
    if (__builtin_mul_overflow(n, ff->width, &count) || len < count)
      return coalesce_append_field(c, fi, 0, n);
  }
  c->at = ff->f;
  xchg_status st =
      append_validity(c, o, k, n, (int64_t)fb_load_u64(c->b->node_at + 16 * fi + 8), 0, n, NULL);
  if (st == XCHG_OK)
    st = ff->kind == APPEND_FIXED ? coalesce_copy_values(c, o, offset, count)
                                  : append_binary(c, o, k, (int)ff->width, 0, n);
  if (st == XCHG_OK) o->length += n;
  return st;
}
