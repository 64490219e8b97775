/* decode_validate.c — step 3 of decoding (see decode.h): validating the
 * arrays of a planned batch so that no consumer can be led out of bounds. */
#include <string.h>

#include "ipc/decode_internal.h"
#include "ipc/scan.h"
#include "codec/helpers.h"

static int full(const ipc_decoder *d) { return d->ctx->opts->validation == XCHG_VALIDATE_FULL; }

static int64_t bitmap_bytes(int64_t length) { return length / 8 + (length % 8 != 0); }

static int valid_at(const ipc_array *a, int64_t i) {
  const uint8_t *bits = a->n_buffers ? ipc_array_data(a, 0) : NULL;
  return !bits || bitmap_get(bits, i);
}

static xchg_status need_size(ipc_decoder *d, const ipc_array *a, int64_t i, int64_t count,
                             int64_t width, const char *what) {
  if (width > 0 && count > INT64_MAX / width)
    return ipc_decode_fail(d, i, XCHG_EFORMAT, "%lld values of %lld bytes overflow",
                           (long long)count, (long long)width);
  if ((int64_t)ipc_array_size(a, i) < count * width)
    return ipc_decode_fail(d, i, XCHG_EFORMAT, "%s buffer has %zu bytes, %lld rows need %lld", what,
                           ipc_array_size(a, i), (long long)a->length, (long long)(count * width));
  return XCHG_OK;
}

/* Validity: present and large enough when there are nulls, and (in full
 * validation) holding exactly null_count zero bits. */
static xchg_status check_validity(ipc_decoder *d, const ipc_array *a) {
  if (a->null_count == 0) return XCHG_OK;
  if (!a->buffers[0].data)
    return ipc_decode_fail(d, 0, XCHG_EFORMAT, "null_count %lld but no validity buffer",
                           (long long)a->null_count);
  xchg_status st = need_size(d, a, 0, bitmap_bytes(a->length), 1, "validity");
  if (st != XCHG_OK || !full(d)) return st;
  const uint8_t *bits = ipc_array_data(a, 0);
  int64_t set = ipc_count_set_bits(bits, a->length / 8);
  for (int64_t i = a->length & ~(int64_t)7; i < a->length; i++) set += bitmap_get(bits, i);
  if (a->length - set != a->null_count)
    return ipc_decode_fail(d, 0, XCHG_EFORMAT,
                           "null_count is %lld but the validity bitmap has %lld nulls",
                           (long long)a->null_count, (long long)(a->length - set));
  return XCHG_OK;
}

/* A buffer of zeros standing in for the offsets of an empty array, which
 * writers may leave out but consumers may read one entry of. */
static xchg_status zero_offsets(ipc_decoder *d, ipc_array *a, int64_t i) {
  static const int64_t zeros[1];
  if (a->buffers[i].data || a->length != 0) return XCHG_OK;
  a->buffers[i] = (ipc_buffer){(const uint8_t *)zeros, sizeof zeros, NULL};
  (void)d;
  return XCHG_OK;
}

/* Offsets at buffer i: length+1 entries, within [0, limit], monotonic. */
static xchg_status check_offsets(ipc_decoder *d, ipc_array *a, int64_t i, int width, int64_t limit,
                                 const char *limit_name) {
  xchg_status st = zero_offsets(d, a, i);
  if (st == XCHG_OK) st = need_size(d, a, i, a->length + 1, width, "offsets");
  if (st != XCHG_OK) return st;
  const uint8_t *p = ipc_array_data(a, i);
  int64_t first = ipc_load_int(p, width, 1, 0), last = ipc_load_int(p, width, 1, a->length);
  if (first < 0)
    return ipc_decode_fail(d, i, XCHG_EFORMAT, "offset %lld at row 0 is negative",
                           (long long)first);
  if (last < first || last > limit)
    return ipc_decode_fail(d, i, XCHG_EFORMAT,
                           "offset %lld at row %lld, the last, is outside [%lld, %lld] "
                           "(the first offset, %s)",
                           (long long)last, (long long)a->length, (long long)first,
                           (long long)limit, limit_name);
  if (!full(d) || ipc_never_decreasing(p, width, a->length + 1)) return XCHG_OK;
  for (int64_t k = 0; k < a->length; k++)
    if (ipc_load_int(p, width, 1, k + 1) < ipc_load_int(p, width, 1, k))
      return ipc_decode_fail(d, i, XCHG_EFORMAT, "offset %lld at row %lld is below the one before",
                             (long long)ipc_load_int(p, width, 1, k + 1), (long long)k + 1);
  return XCHG_OK;
}

static xchg_status check_list_views(ipc_decoder *d, const ipc_array *a, int width) {
  xchg_status st = need_size(d, a, 1, a->length, width, "offsets");
  if (st == XCHG_OK) st = need_size(d, a, 2, a->length, width, "sizes");
  if (st != XCHG_OK || !full(d)) return st;
  int64_t limit = a->children[0]->length;
  for (int64_t k = 0; k < a->length; k++) {
    int64_t off = ipc_load_int(ipc_array_data(a, 1), width, 1, k);
    int64_t size = ipc_load_int(ipc_array_data(a, 2), width, 1, k);
    /* size >= 0 and size <= limit - off also make off <= limit. */
    if (valid_at(a, k) && (off < 0 || size < 0 || size > limit - off))
      return ipc_decode_fail(d, 1, XCHG_EFORMAT,
                             "list view at row %lld (offset %lld, size %lld) exceeds "
                             "the %lld child values",
                             (long long)k, (long long)off, (long long)size, (long long)limit);
  }
  return XCHG_OK;
}

static xchg_status check_views(ipc_decoder *d, const ipc_array *a) {
  int64_t n_data = a->n_buffers - 3;
  xchg_status st = need_size(d, a, 1, a->length, 16, "views");
  if (st != XCHG_OK || !full(d)) return st;
  const uint8_t *views = ipc_array_data(a, 1);
  for (int64_t k = 0; k < a->length; k++) {
    int32_t len, buf, off;
    memcpy(&len, views + 16 * k, 4);
    memcpy(&buf, views + 16 * k + 8, 4);
    memcpy(&off, views + 16 * k + 12, 4);
    if (!valid_at(a, k) || (len >= 0 && len <= 12)) continue;
    if (len < 0 || buf < 0 || buf >= n_data || off < 0 ||
        (size_t)off + (size_t)len > ipc_array_size(a, 2 + buf))
      return ipc_decode_fail(d, 1, XCHG_EFORMAT,
                             "view at row %lld (length %d, data buffer %d, offset %d) points "
                             "outside the %lld data buffers",
                             (long long)k, len, buf, off, (long long)n_data);
  }
  return XCHG_OK;
}

static xchg_status check_union(ipc_decoder *d, const ipc_field *f, const ipc_array *a) {
  xchg_status st = need_size(d, a, 0, a->length, 1, "type ids");
  if (st == XCHG_OK && f->union_dense) st = need_size(d, a, 1, a->length, 4, "offsets");
  if (st != XCHG_OK) return st;
  for (int64_t c = 0; c < a->n_children && !f->union_dense; c++)
    if (a->children[c]->length < a->length)
      return ipc_decode_fail(d, -1, XCHG_EFORMAT,
                             "sparse union child %lld has %lld rows, the union %lld", (long long)c,
                             (long long)a->children[c]->length, (long long)a->length);
  if (!full(d)) return XCHG_OK;
  int8_t child_of[128];
  memset(child_of, -1, sizeof child_of);
  for (int64_t c = 0; c < f->n_children; c++) child_of[f->union_type_ids[c]] = (int8_t)c;
  const int8_t *ids = (const int8_t *)ipc_array_data(a, 0);
  for (int64_t k = 0; k < a->length; k++) {
    int8_t id = ids[k];
    if (id < 0 || child_of[id] < 0)
      return ipc_decode_fail(d, 0, XCHG_EFORMAT, "type id %d at row %lld is not one of the union's",
                             id, (long long)k);
    if (!f->union_dense) continue;
    int64_t off = ipc_load_int(ipc_array_data(a, 1), 4, 1, k),
            child_len = a->children[child_of[id]]->length;
    if (off < 0 || off >= child_len)
      return ipc_decode_fail(d, 1, XCHG_EFORMAT,
                             "dense union offset %lld at row %lld is outside child %d's "
                             "%lld rows",
                             (long long)off, (long long)k, child_of[id], (long long)child_len);
  }
  return XCHG_OK;
}

/* Failures in the run ends themselves name the run_ends child, buffer 1. */
static xchg_status check_run_ends(ipc_decoder *d, const ipc_field *f, const ipc_array *a) {
  const ipc_array *ends = a->children[0], *values = a->children[1];
  int width = f->children[0].width;
  if (a->null_count != 0)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "a run-end encoded array has null_count %lld",
                           (long long)a->null_count);
  if (values->length < ends->length || ends->null_count != 0)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "%lld run ends (with %lld nulls) for %lld values",
                           (long long)ends->length, (long long)ends->null_count,
                           (long long)values->length);
  if (a->length == 0) return XCHG_OK;
  const uint8_t *p = ipc_array_data(ends, 1);
  if (ends->length == 0)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "no run ends for the array's %lld rows",
                           (long long)a->length);
  int as_value = d->as_value; /* f's */
  d->field = &f->children[0];
  d->as_value = 0;
  int64_t last = ipc_load_int(p, width, 1, ends->length - 1);
  if (last < a->length)
    return ipc_decode_fail(d, 1, XCHG_EFORMAT,
                           "run end %lld at run %lld, the last, stops before the array's "
                           "%lld rows",
                           (long long)last, (long long)ends->length - 1, (long long)a->length);
  for (int64_t k = 0, prev = 0; k < ends->length && full(d); k++) {
    int64_t end = ipc_load_int(p, width, 1, k);
    if (end <= prev)
      return ipc_decode_fail(d, 1, XCHG_EFORMAT, "run end %lld at run %lld does not increase",
                             (long long)end, (long long)k);
    prev = end;
  }
  d->field = f;
  d->as_value = as_value;
  return XCHG_OK;
}

static xchg_status check_indices(ipc_decoder *d, const ipc_field *f, const ipc_array *a) {
  xchg_status st = check_validity(d, a);
  if (st == XCHG_OK) st = need_size(d, a, 1, a->length, f->index_width, "indices");
  if (st != XCHG_OK || !full(d)) return st;
  int64_t dict_len = a->dictionary->length;
  const uint8_t *p = ipc_array_data(a, 1);
  for (int64_t k = 0; k < a->length; k++) {
    if (!valid_at(a, k)) continue;
    int64_t idx = ipc_load_int(p, f->index_width, f->index_signed, k);
    if (idx < 0 || idx >= dict_len)
      return ipc_decode_fail(d, 1, XCHG_EFORMAT,
                             "dictionary index %lld at row %lld is outside dictionary "
                             "%lld's %lld values",
                             (long long)idx, (long long)k, (long long)f->dict_id,
                             (long long)dict_len);
  }
  return XCHG_OK;
}

static xchg_status check_children_length(ipc_decoder *d, const ipc_array *a, int64_t need) {
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->length < need)
      return ipc_decode_fail(d, -1, XCHG_EFORMAT, "child %lld has %lld rows, %lld needed",
                             (long long)i, (long long)a->children[i]->length, (long long)need);
  return XCHG_OK;
}

static xchg_status validate_field(ipc_decoder *d, const ipc_field *f, int as_value, ipc_array *a);

static xchg_status validate_children(ipc_decoder *d, const ipc_field *f, ipc_array *a) {
  int as_value = d->as_value; /* f's, set by validate_field */
  for (int64_t i = 0, k = 0; i < f->n_children; i++) {
    if (f->children[i].skip) continue;
    xchg_status st = validate_field(d, &f->children[i], 0, a->children[k++]);
    if (st != XCHG_OK) return st;
  }
  d->field = f;
  d->as_value = as_value;
  return XCHG_OK;
}

static xchg_status validate_value(ipc_decoder *d, const ipc_field *f, ipc_array *a) {
  int ow = ipc_offset_width(f->type);
  xchg_status st = validate_children(d, f, a);
  if (st != XCHG_OK) return st;
  switch (f->type) {
    case IPC_NULL: return XCHG_OK;
    case IPC_UNION: return check_union(d, f, a);
    case IPC_RUN_END_ENCODED: return check_run_ends(d, f, a);
    default: break;
  }
  if ((st = check_validity(d, a)) != XCHG_OK) return st;
  switch (f->type) {
    case IPC_BOOL: return need_size(d, a, 1, bitmap_bytes(a->length), 1, "values");
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
      return check_offsets(d, a, 1, ow, (int64_t)ipc_array_size(a, 2), "data bytes");
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW: return check_views(d, a);
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP: return check_offsets(d, a, 1, ow, a->children[0]->length, "child rows");
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: return check_list_views(d, a, ow);
    case IPC_STRUCT: return check_children_length(d, a, a->length);
    case IPC_FIXED_SIZE_LIST:
      if (f->list_size > 0 && a->length > INT64_MAX / f->list_size)
        return ipc_decode_fail(d, -1, XCHG_EFORMAT, "%lld lists of %d values overflow",
                               (long long)a->length, f->list_size);
      return check_children_length(d, a, a->length * f->list_size);
    default: return need_size(d, a, 1, a->length, f->width, "values");
  }
}

static xchg_status validate_field(ipc_decoder *d, const ipc_field *f, int as_value, ipc_array *a) {
  d->field = f;
  d->as_value = as_value;
  if (f->dict_encoded && !as_value) return check_indices(d, f, a);
  return validate_value(d, f, a);
}

xchg_status ipc_decode_validate(const ipc_decode_ctx *ctx, const ipc_field *columns,
                                int64_t n_columns, int dictionary_values, ipc_array *root,
                                xchg_error *err) {
  ipc_decoder d = {.ctx = ctx, .err = err};
  for (int64_t i = 0, k = 0; i < n_columns; i++) {
    if (columns[i].skip && !dictionary_values) continue;
    xchg_status st = validate_field(&d, &columns[i], dictionary_values, root->children[k++]);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}
