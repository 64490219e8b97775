/* decode.c — see decode.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/decode.h"
#include "xchg/codec.h"

/* Slots of RecordBatch and BodyCompression (Message.fbs). */
enum { BATCH_LENGTH, BATCH_NODES, BATCH_BUFFERS, BATCH_COMPRESSION, BATCH_VARIADIC_COUNTS };

typedef struct decoder {
  const ipc_decode_ctx *ctx;
  xchg_error *err;
  xchg_buf *body;
  xchg_block_codec codec;
  fb_vector nodes, buffers, variadic;
  uint32_t next_node, next_buffer, next_variadic;
  const ipc_field *field; /* the field being decoded, named in errors */
} decoder;

/* How the values of one buffer are byte-swapped from big-endian. */
typedef struct swap_rule {
  ipc_swap kind;
  int width;
} swap_rule;

#define NO_SWAP ((swap_rule){IPC_SWAP_NONE, 0})
#define INT_SWAP(w) ((swap_rule){IPC_SWAP_WHOLE, (w)})
#define VIEW_SWAP ((swap_rule){IPC_SWAP_NONE, 16})

static xchg_status fail(const decoder *d, int64_t buffer, xchg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reports "message M (body at byte B), field 'f', buffer K: <what>". */
static xchg_status fail(const decoder *d, int64_t buffer, xchg_status st, const char *fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char where[64] = "";
  if (buffer >= 0) snprintf(where, sizeof where, ", buffer %lld", (long long)buffer);
  return xchg_errorf(d->err, st, "message %lld (body at byte %lld), field '%s'%s: %s",
                     (long long)d->ctx->message_index, (long long)d->ctx->body_offset,
                     d->field ? d->field->path : "", where, what);
}

/* ---- buffers ------------------------------------------------------------ */

static void swap_bytes(uint8_t *p, int width) {
  for (int i = 0, j = width - 1; i < j; i++, j--) {
    uint8_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

static void swap_values(uint8_t *p, size_t size, swap_rule rule) {
  if (rule.width == 16 && rule.kind == IPC_SWAP_NONE) { /* binary views */
    for (size_t i = 0; i + 16 <= size; i += 16) {
      swap_bytes(p + i, 4);
      int32_t len;
      memcpy(&len, p + i, 4);
      if (len > 12) {
        swap_bytes(p + i + 8, 4);
        swap_bytes(p + i + 12, 4);
      }
    }
    return;
  }
  int step = rule.kind == IPC_SWAP_WHOLE ? rule.width : 4;
  for (size_t i = 0; i + (size_t)rule.width <= size; i += (size_t)rule.width) {
    if (rule.kind == IPC_SWAP_MDN) {
      swap_bytes(p + i, 4);
      swap_bytes(p + i + 4, 4);
      swap_bytes(p + i + 8, 8);
    } else {
      for (int k = 0; k < rule.width; k += step) swap_bytes(p + i + k, step);
    }
  }
}

static int needs_swap(swap_rule rule) { return rule.kind != IPC_SWAP_NONE || rule.width == 16; }

/* A private, aligned copy of src (for misaligned or byte-swapped data). */
static xchg_status copy_buffer(decoder *d, int64_t index, const xchg_buf *src, xchg_buf **out) {
  xchg_buf *b = xchg_buf_alloc(xchg_buf_size(src));
  if (!b) return fail(d, index, XCHG_ENOMEM, "out of memory copying %zu bytes", xchg_buf_size(src));
  memcpy(xchg_buf_mutable_data(b), xchg_buf_data(src), xchg_buf_size(src));
  *out = b;
  return XCHG_OK;
}

static xchg_status decompress_buffer(decoder *d, int64_t index, const uint8_t *src, int64_t len,
                                     xchg_buf **out, int *fresh) {
  if (len < 8)
    return fail(d, index, XCHG_EFORMAT, "compressed buffer of %lld bytes lacks its 8-byte length",
                (long long)len);
  int64_t size = (int64_t)fb_load_u64(src);
  if (size == -1) return XCHG_OK; /* stored uncompressed after the prefix */
  if (size < 0)
    return fail(d, index, XCHG_EFORMAT, "negative uncompressed length %lld", (long long)size);
  if (size > d->ctx->opts->max_buffer_bytes)
    return fail(d, index, XCHG_ELIMIT, "uncompressed length %lld exceeds max_buffer_bytes %lld",
                (long long)size, (long long)d->ctx->opts->max_buffer_bytes);
  xchg_buf *b = xchg_buf_alloc((size_t)size);
  if (!b) return fail(d, index, XCHG_ENOMEM, "out of memory for %lld bytes", (long long)size);
  xchg_error codec_err;
  if (xchg_block_decompress(d->codec, src + 8, (size_t)len - 8, xchg_buf_mutable_data(b),
                            (size_t)size, &codec_err) != XCHG_OK) {
    xchg_buf_unref(b);
    return fail(d, index, XCHG_EFORMAT, "%s", codec_err.message);
  }
  *out = b;
  *fresh = 1;
  return XCHG_OK;
}

/* Takes the next buffer of the message: checks it lies in the body,
 * decompresses it, makes it 8-byte aligned and native-endian.  An empty
 * buffer comes out as NULL. */
static xchg_status take_buffer(decoder *d, swap_rule swap, xchg_buf **out) {
  *out = NULL;
  int64_t index = d->next_buffer;
  if (d->next_buffer >= d->buffers.count)
    return fail(d, index, XCHG_EFORMAT, "the message has only %u buffers", d->buffers.count);
  const uint8_t *spec = fb_vector_elem(&d->buffers, d->next_buffer++);
  int64_t offset = (int64_t)fb_load_u64(spec), len = (int64_t)fb_load_u64(spec + 8);
  int64_t body_size = (int64_t)xchg_buf_size(d->body);
  if (offset < 0 || len < 0 || offset > body_size || len > body_size - offset)
    return fail(d, index, XCHG_EFORMAT, "range [%lld, +%lld) lies outside the %lld-byte body",
                (long long)offset, (long long)len, (long long)body_size);
  if (len == 0) return XCHG_OK;
  const uint8_t *src = xchg_buf_data(d->body) + offset;
  int fresh = 0;
  xchg_buf *b = NULL;
  if (d->codec != XCHG_BLOCK_NONE) {
    xchg_status st = decompress_buffer(d, index, src, len, &b, &fresh);
    if (st != XCHG_OK) return st;
    if (!b) {
      offset += 8;
      len -= 8;
    }
  }
  if (!b && !(b = xchg_buf_slice(d->body, (size_t)offset, (size_t)len)))
    return fail(d, index, XCHG_ENOMEM, "out of memory");
  int misaligned = ((uintptr_t)xchg_buf_data(b) & 7) != 0;
  int do_swap = d->ctx->big_endian && needs_swap(swap);
  if (!fresh && (misaligned || do_swap)) {
    xchg_buf *copy;
    xchg_status st = copy_buffer(d, index, b, &copy);
    xchg_buf_unref(b);
    if (st != XCHG_OK) return st;
    b = copy;
  }
  if (do_swap) swap_values(xchg_buf_mutable_data(b), xchg_buf_size(b), swap);
  *out = b;
  return XCHG_OK;
}

/* A buffer of zeros standing in for the offsets of an empty array, which
 * writers may leave out but consumers may read one entry of. */
static xchg_buf *zero_offsets(void) {
  static const int64_t zeros[1];
  return xchg_buf_wrap(zeros, sizeof zeros, NULL, NULL);
}

static xchg_status need_size(decoder *d, ipc_array *a, int64_t i, int64_t bytes, const char *what) {
  if ((int64_t)ipc_array_size(a, i) < bytes)
    return fail(d, -1, XCHG_EFORMAT, "%s buffer has %zu bytes, %lld rows need %lld", what,
                ipc_array_size(a, i), (long long)a->length, (long long)bytes);
  return XCHG_OK;
}

static int64_t bitmap_bytes(int64_t length) { return length / 8 + (length % 8 != 0); }

/* ---- validation ----------------------------------------------------------- */

static int valid_at(const ipc_array *a, int64_t i) {
  const uint8_t *bits = ipc_array_data(a, 0);
  return !bits || a->null_count == 0 || ((bits[i >> 3] >> (i & 7)) & 1);
}

static int64_t load_offset(const uint8_t *p, int width, int64_t i) {
  if (width == 4) {
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  int64_t v;
  memcpy(&v, p + 8 * i, 8);
  return v;
}

static int64_t load_index(const uint8_t *p, int width, int is_signed, int64_t i) {
  switch (width) {
    case 1: return is_signed ? (int64_t)(int8_t)p[i] : (int64_t)p[i];
    case 2: {
      uint16_t v;
      memcpy(&v, p + 2 * i, 2);
      return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
      uint64_t v;
      memcpy(&v, p + 8 * i, 8);
      return (!is_signed && v > INT64_MAX) ? -1 : (int64_t)v;
    }
  }
}

static int full(const decoder *d) { return d->ctx->opts->validation == XCHG_VALIDATE_FULL; }

/* Validity buffer: present and large enough when there are nulls, and (in
 * full validation) holding exactly null_count zero bits. */
static xchg_status check_validity(decoder *d, ipc_array *a) {
  if (a->null_count == 0) {
    xchg_buf_unref(a->buffers[0]);
    a->buffers[0] = NULL; /* no nulls: consumers need not look */
    return XCHG_OK;
  }
  if (!a->buffers[0])
    return fail(d, -1, XCHG_EFORMAT, "null_count %lld but no validity buffer",
                (long long)a->null_count);
  xchg_status st = need_size(d, a, 0, bitmap_bytes(a->length), "validity");
  if (st != XCHG_OK || !full(d)) return st;
  int64_t set = 0;
  const uint8_t *bits = ipc_array_data(a, 0);
  for (int64_t i = 0; i < a->length / 8; i++) set += __builtin_popcount(bits[i]);
  for (int64_t i = a->length & ~(int64_t)7; i < a->length; i++) set += (bits[i >> 3] >> (i & 7)) & 1;
  if (a->length - set != a->null_count)
    return fail(d, -1, XCHG_EFORMAT, "null_count is %lld but the validity bitmap has %lld nulls",
                (long long)a->null_count, (long long)(a->length - set));
  return XCHG_OK;
}

/* Offsets at buffer i: length+1 entries, within [0, limit], monotonic. */
static xchg_status check_offsets(decoder *d, ipc_array *a, int64_t i, int width, int64_t limit,
                                 const char *limit_name) {
  if (!a->buffers[i] && a->length == 0 && !(a->buffers[i] = zero_offsets()))
    return fail(d, i, XCHG_ENOMEM, "out of memory");
  xchg_status st = need_size(d, a, i, (a->length + 1) * width, "offsets");
  if (st != XCHG_OK) return st;
  const uint8_t *p = ipc_array_data(a, i);
  int64_t first = load_offset(p, width, 0), last = load_offset(p, width, a->length);
  if (first < 0 || last < first || last > limit)
    return fail(d, i, XCHG_EFORMAT, "offsets run from %lld to %lld, outside [0, %lld] (%s)",
                (long long)first, (long long)last, (long long)limit, limit_name);
  if (!full(d)) return XCHG_OK;
  for (int64_t k = 0; k < a->length; k++)
    if (load_offset(p, width, k + 1) < load_offset(p, width, k))
      return fail(d, i, XCHG_EFORMAT, "offset %lld at row %lld is below the one before",
                  (long long)load_offset(p, width, k + 1), (long long)k + 1);
  return XCHG_OK;
}

static xchg_status check_list_views(decoder *d, ipc_array *a, int width) {
  xchg_status st = need_size(d, a, 1, a->length * width, "offsets");
  if (st == XCHG_OK) st = need_size(d, a, 2, a->length * width, "sizes");
  if (st != XCHG_OK || !full(d)) return st;
  int64_t limit = a->children[0]->length;
  for (int64_t k = 0; k < a->length; k++) {
    int64_t off = load_offset(ipc_array_data(a, 1), width, k);
    int64_t size = load_offset(ipc_array_data(a, 2), width, k);
    if (valid_at(a, k) && (off < 0 || size < 0 || off > limit || size > limit - off))
      return fail(d, -1, XCHG_EFORMAT, "list view at row %lld (offset %lld, size %lld) exceeds "
                  "the %lld child values", (long long)k, (long long)off, (long long)size,
                  (long long)limit);
  }
  return XCHG_OK;
}

static xchg_status check_views(decoder *d, ipc_array *a, int64_t n_variadic) {
  xchg_status st = need_size(d, a, 1, a->length * 16, "views");
  if (st != XCHG_OK || !full(d)) return st;
  const uint8_t *views = ipc_array_data(a, 1);
  for (int64_t k = 0; k < a->length; k++) {
    int32_t len, buf, off;
    memcpy(&len, views + 16 * k, 4);
    memcpy(&buf, views + 16 * k + 8, 4);
    memcpy(&off, views + 16 * k + 12, 4);
    if (!valid_at(a, k) || (len >= 0 && len <= 12)) continue;
    if (len < 0 || buf < 0 || buf >= n_variadic || off < 0 ||
        (size_t)off + (size_t)len > ipc_array_size(a, 2 + buf))
      return fail(d, -1, XCHG_EFORMAT, "view at row %lld (length %d, buffer %d, offset %d) points "
                  "outside the %lld data buffers", (long long)k, len, buf, off, (long long)n_variadic);
  }
  return XCHG_OK;
}

static xchg_status check_union(decoder *d, const ipc_field *f, ipc_array *a) {
  xchg_status st = need_size(d, a, 0, a->length, "type ids");
  if (st == XCHG_OK && f->union_dense) st = need_size(d, a, 1, a->length * 4, "offsets");
  if (st != XCHG_OK) return st;
  for (int64_t c = 0; c < a->n_children && !f->union_dense; c++)
    if (a->children[c]->length < a->length)
      return fail(d, -1, XCHG_EFORMAT, "sparse union child %lld has %lld rows, the union %lld",
                  (long long)c, (long long)a->children[c]->length, (long long)a->length);
  if (!full(d)) return XCHG_OK;
  int8_t child_of[128];
  memset(child_of, -1, sizeof child_of);
  for (int64_t c = 0; c < f->n_children; c++) child_of[f->union_type_ids[c]] = (int8_t)c;
  const int8_t *ids = (const int8_t *)ipc_array_data(a, 0);
  for (int64_t k = 0; k < a->length; k++) {
    int8_t id = ids[k];
    if (id < 0 || child_of[id] < 0)
      return fail(d, 0, XCHG_EFORMAT, "type id %d at row %lld is not one of the union's",
                  id, (long long)k);
    if (f->union_dense) {
      int64_t off = load_offset(ipc_array_data(a, 1), 4, k);
      if (off < 0 || off >= a->children[child_of[id]]->length)
        return fail(d, 1, XCHG_EFORMAT, "dense union offset %lld at row %lld is outside child "
                    "%d's %lld rows", (long long)off, (long long)k, child_of[id],
                    (long long)a->children[child_of[id]]->length);
    }
  }
  return XCHG_OK;
}

static xchg_status check_run_ends(decoder *d, ipc_array *a, int width) {
  const ipc_array *ends = a->children[0], *values = a->children[1];
  if (a->null_count != 0)
    return fail(d, -1, XCHG_EFORMAT, "a run-end encoded array has null_count %lld",
                (long long)a->null_count);
  if (values->length < ends->length || ends->null_count != 0)
    return fail(d, -1, XCHG_EFORMAT, "%lld run ends (with %lld nulls) for %lld values",
                (long long)ends->length, (long long)ends->null_count, (long long)values->length);
  if (a->length == 0) return XCHG_OK;
  const uint8_t *p = ipc_array_data(ends, 1);
  if (ends->length == 0 || load_index(p, width, 1, ends->length - 1) < a->length)
    return fail(d, -1, XCHG_EFORMAT, "run ends stop before the array's %lld rows",
                (long long)a->length);
  if (!full(d)) return XCHG_OK;
  int64_t prev = 0;
  for (int64_t k = 0; k < ends->length; k++) {
    int64_t end = load_index(p, width, 1, k);
    if (end <= prev)
      return fail(d, -1, XCHG_EFORMAT, "run end %lld at run %lld does not increase",
                  (long long)end, (long long)k);
    prev = end;
  }
  return XCHG_OK;
}

static xchg_status check_indices(decoder *d, const ipc_field *f, ipc_array *a) {
  int64_t dict_len = a->dictionary->length;
  const uint8_t *p = ipc_array_data(a, 1);
  for (int64_t k = 0; k < a->length && full(d); k++) {
    if (!valid_at(a, k)) continue;
    int64_t idx = load_index(p, f->index_width, f->index_signed, k);
    if (idx < 0 || idx >= dict_len)
      return fail(d, 1, XCHG_EFORMAT, "dictionary index %lld at row %lld is outside dictionary "
                  "%lld's %lld values", (long long)idx, (long long)k, (long long)f->dict_id,
                  (long long)dict_len);
  }
  return XCHG_OK;
}

/* ---- fields --------------------------------------------------------------- */

static xchg_status decode_field(decoder *d, const ipc_field *f, int as_value, ipc_array **out);

static xchg_status take_node(decoder *d, int64_t *length, int64_t *null_count) {
  if (d->next_node >= d->nodes.count)
    return fail(d, -1, XCHG_EFORMAT, "the message has only %u field nodes", d->nodes.count);
  const uint8_t *node = fb_vector_elem(&d->nodes, d->next_node++);
  *length = (int64_t)fb_load_u64(node);
  *null_count = (int64_t)fb_load_u64(node + 8);
  if (*length < 0 || *null_count < 0 || *null_count > *length)
    return fail(d, -1, XCHG_EFORMAT, "field node has length %lld and null_count %lld",
                (long long)*length, (long long)*null_count);
  return XCHG_OK;
}

static xchg_status take_buffers(decoder *d, ipc_array *a, int64_t first, int64_t n,
                                const swap_rule *rules) {
  for (int64_t i = 0; i < n; i++) {
    xchg_status st = take_buffer(d, rules[i], &a->buffers[first + i]);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

static xchg_status decode_children(decoder *d, const ipc_field *f, ipc_array *a) {
  for (int64_t i = 0; i < f->n_children; i++) {
    xchg_status st = decode_field(d, &f->children[i], 0, &a->children[i]);
    if (st != XCHG_OK) return st;
  }
  d->field = f;
  return XCHG_OK;
}

static int offset_width(ipc_type t) {
  return (t == IPC_LARGE_BINARY || t == IPC_LARGE_UTF8 || t == IPC_LARGE_LIST ||
          t == IPC_LARGE_LIST_VIEW) ? 8 : 4;
}

static xchg_status take_variadic_count(decoder *d, int64_t *n) {
  if (d->next_variadic >= d->variadic.count)
    return fail(d, -1, XCHG_EFORMAT, "no variadicBufferCounts entry for this view field");
  *n = (int64_t)fb_load_u64(fb_vector_elem(&d->variadic, d->next_variadic++));
  if (*n < 0 || *n > (int64_t)d->buffers.count)
    return fail(d, -1, XCHG_EFORMAT, "variadic buffer count %lld", (long long)*n);
  return XCHG_OK;
}

/* Binary views: IPC has validity, views, data...; the C Data Interface adds
 * a last buffer with the size of each data buffer. */
static xchg_status decode_views(decoder *d, ipc_array **out, int64_t length) {
  int64_t n_data;
  xchg_status st = take_variadic_count(d, &n_data);
  if (st != XCHG_OK) return st;
  ipc_array *a = *out = ipc_array_new(3 + n_data, 0);
  if (!a) return fail(d, -1, XCHG_ENOMEM, "out of memory");
  a->length = length;
  st = take_buffers(d, a, 0, 2, (swap_rule[]){NO_SWAP, VIEW_SWAP});
  for (int64_t i = 0; i < n_data && st == XCHG_OK; i++) st = take_buffer(d, NO_SWAP, &a->buffers[2 + i]);
  if (st != XCHG_OK) return st;
  xchg_buf *sizes = a->buffers[2 + n_data] = xchg_buf_alloc((size_t)n_data * 8);
  if (!sizes) return fail(d, -1, XCHG_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n_data; i++) {
    int64_t size = (int64_t)ipc_array_size(a, 2 + i);
    memcpy(xchg_buf_mutable_data(sizes) + 8 * i, &size, 8);
  }
  return XCHG_OK;
}

/* Allocates the array for a field once its layout is known. */
static xchg_status new_array(decoder *d, int64_t n_buffers, int64_t n_children, int64_t length,
                             int64_t null_count, ipc_array **out) {
  if (!(*out = ipc_array_new(n_buffers, n_children))) return fail(d, -1, XCHG_ENOMEM, "out of memory");
  (*out)->length = length;
  (*out)->null_count = null_count;
  return XCHG_OK;
}

static xchg_status check_children_length(decoder *d, ipc_array *a, int64_t need) {
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->length < need)
      return fail(d, -1, XCHG_EFORMAT, "child %lld has %lld rows, %lld needed", (long long)i,
                  (long long)a->children[i]->length, (long long)need);
  return XCHG_OK;
}

static xchg_status decode_dictionary_indices(decoder *d, const ipc_field *f, int64_t length,
                                             int64_t nulls, ipc_array **out) {
  xchg_status st = new_array(d, 2, 0, length, nulls, out);
  ipc_array *a = *out;
  if (st == XCHG_OK) st = take_buffers(d, a, 0, 2, (swap_rule[]){NO_SWAP, INT_SWAP(f->index_width)});
  if (st == XCHG_OK) st = check_validity(d, a);
  if (st == XCHG_OK) st = need_size(d, a, 1, length * f->index_width, "indices");
  if (st != XCHG_OK) return st;
  ipc_array *dict = d->ctx->lookup(d->ctx->lookup_ctx, f->dict_id);
  if (!dict)
    return fail(d, -1, XCHG_EFORMAT, "dictionary %lld is used before it is defined",
                (long long)f->dict_id);
  a->dictionary = ipc_array_ref(dict);
  return check_indices(d, f, a);
}

static xchg_status decode_value(decoder *d, const ipc_field *f, int64_t length, int64_t nulls,
                                ipc_array **out) {
  ipc_array *a;
  xchg_status st;
  int ow = offset_width(f->type);
  switch (f->type) {
    case IPC_NULL:
      return new_array(d, 0, 0, length, length, out);
    case IPC_BOOL:
      if ((st = new_array(d, 2, 0, length, nulls, out)) != XCHG_OK) return st;
      a = *out;
      st = take_buffers(d, a, 0, 2, (swap_rule[]){NO_SWAP, NO_SWAP});
      if (st == XCHG_OK) st = check_validity(d, a);
      return st == XCHG_OK ? need_size(d, a, 1, bitmap_bytes(length), "values") : st;
    case IPC_BINARY: case IPC_UTF8: case IPC_LARGE_BINARY: case IPC_LARGE_UTF8:
      if ((st = new_array(d, 3, 0, length, nulls, out)) != XCHG_OK) return st;
      a = *out;
      st = take_buffers(d, a, 0, 3, (swap_rule[]){NO_SWAP, INT_SWAP(ow), NO_SWAP});
      if (st == XCHG_OK) st = check_validity(d, a);
      return st == XCHG_OK ? check_offsets(d, a, 1, ow, (int64_t)ipc_array_size(a, 2), "data bytes") : st;
    case IPC_BINARY_VIEW: case IPC_UTF8_VIEW:
      st = decode_views(d, out, length);
      a = *out;
      if (a) a->null_count = nulls;
      if (st == XCHG_OK) st = check_validity(d, a);
      return st == XCHG_OK ? check_views(d, a, a->n_buffers - 3) : st;
    case IPC_LIST: case IPC_LARGE_LIST: case IPC_MAP:
      if ((st = new_array(d, 2, 1, length, nulls, out)) != XCHG_OK) return st;
      a = *out;
      st = take_buffers(d, a, 0, 2, (swap_rule[]){NO_SWAP, INT_SWAP(ow)});
      if (st == XCHG_OK) st = decode_children(d, f, a);
      if (st == XCHG_OK) st = check_validity(d, a);
      return st == XCHG_OK ? check_offsets(d, a, 1, ow, a->children[0]->length, "child rows") : st;
    case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW:
      if ((st = new_array(d, 3, 1, length, nulls, out)) != XCHG_OK) return st;
      a = *out;
      st = take_buffers(d, a, 0, 3, (swap_rule[]){NO_SWAP, INT_SWAP(ow), INT_SWAP(ow)});
      if (st == XCHG_OK) st = decode_children(d, f, a);
      if (st == XCHG_OK) st = check_validity(d, a);
      return st == XCHG_OK ? check_list_views(d, a, ow) : st;
    case IPC_FIXED_SIZE_LIST: case IPC_STRUCT:
      if ((st = new_array(d, 1, f->n_children, length, nulls, out)) != XCHG_OK) return st;
      a = *out;
      st = take_buffers(d, a, 0, 1, (swap_rule[]){NO_SWAP});
      if (st == XCHG_OK) st = decode_children(d, f, a);
      if (st == XCHG_OK) st = check_validity(d, a);
      if (st != XCHG_OK) return st;
      if (f->type == IPC_STRUCT) return check_children_length(d, a, length);
      if (f->list_size > 0 && length > INT64_MAX / f->list_size)
        return fail(d, -1, XCHG_EFORMAT, "%lld lists of %d values overflow", (long long)length, f->list_size);
      return check_children_length(d, a, length * f->list_size);
    case IPC_UNION: {
      int64_t n = f->union_dense ? 2 : 1;
      /* Before metadata V5, unions had a validity buffer, which is dropped. */
      int legacy = d->ctx->metadata_version < 4;
      if ((st = new_array(d, n, f->n_children, length, 0, out)) != XCHG_OK) return st;
      a = *out;
      xchg_buf *legacy_validity = NULL;
      st = legacy ? take_buffer(d, NO_SWAP, &legacy_validity) : XCHG_OK;
      xchg_buf_unref(legacy_validity);
      if (st == XCHG_OK) st = take_buffers(d, a, 0, n, (swap_rule[]){NO_SWAP, INT_SWAP(4)});
      if (st == XCHG_OK) st = decode_children(d, f, a);
      if (st == XCHG_OK && nulls != 0 && !legacy)
        st = fail(d, -1, XCHG_EFORMAT, "a union has null_count %lld", (long long)nulls);
      return st == XCHG_OK ? check_union(d, f, a) : st;
    }
    case IPC_RUN_END_ENCODED:
      if ((st = new_array(d, 0, 2, length, nulls, out)) != XCHG_OK) return st;
      st = decode_children(d, f, *out);
      return st == XCHG_OK ? check_run_ends(d, *out, f->children[0].width) : st;
    default:
      if ((st = new_array(d, 2, 0, length, nulls, out)) != XCHG_OK) return st;
      a = *out;
      st = take_buffers(d, a, 0, 2, (swap_rule[]){NO_SWAP, {f->swap, f->width}});
      if (st == XCHG_OK) st = check_validity(d, a);
      if (st == XCHG_OK && f->width > 0 && length > INT64_MAX / f->width)
        return fail(d, -1, XCHG_EFORMAT, "%lld values of %d bytes overflow", (long long)length, f->width);
      return st == XCHG_OK ? need_size(d, a, 1, length * f->width, "values") : st;
  }
}

static xchg_status decode_field(decoder *d, const ipc_field *f, int as_value, ipc_array **out) {
  int64_t length, nulls;
  d->field = f;
  *out = NULL;
  xchg_status st = take_node(d, &length, &nulls);
  if (st != XCHG_OK) return st;
  if (f->dict_encoded && !as_value) return decode_dictionary_indices(d, f, length, nulls, out);
  return decode_value(d, f, length, nulls, out);
}

/* ---- batches -------------------------------------------------------------- */

xchg_status ipc_batch_compression(const fb_table *batch, xchg_block_codec *out, xchg_error *err) {
  fb_table comp;
  int8_t codec = 0, method = 0;
  int rc = fb_table_field(batch, BATCH_COMPRESSION, &comp);
  *out = XCHG_BLOCK_NONE;
  if (rc < 0 || (rc > 0 && (fb_u8(&comp, 0, 0, (uint8_t *)&codec) < 0 ||
                            fb_u8(&comp, 1, 0, (uint8_t *)&method) < 0)))
    return xchg_errorf(err, XCHG_EFORMAT, "invalid BodyCompression table");
  if (rc == 0) return XCHG_OK;
  if (method != 0) return xchg_errorf(err, XCHG_ENOTSUP, "body compression method %d", method);
  if (codec != 0 && codec != 1) return xchg_errorf(err, XCHG_ENOTSUP, "body compression codec %d", codec);
  *out = codec == 0 ? XCHG_BLOCK_LZ4_FRAME : XCHG_BLOCK_ZSTD;
  return XCHG_OK;
}

static xchg_status open_batch(decoder *d, const fb_table *batch, int64_t *length) {
  int rc_nodes, rc_buffers, rc_variadic;
  if (fb_i64(batch, BATCH_LENGTH, 0, length) < 0 ||
      (rc_nodes = fb_vector_field(batch, BATCH_NODES, 16, &d->nodes)) < 0 ||
      (rc_buffers = fb_vector_field(batch, BATCH_BUFFERS, 16, &d->buffers)) < 0 ||
      (rc_variadic = fb_vector_field(batch, BATCH_VARIADIC_COUNTS, 8, &d->variadic)) < 0)
    return fail(d, -1, XCHG_EFORMAT, "invalid RecordBatch table");
  if (!rc_nodes) d->nodes.count = 0;
  if (!rc_buffers) d->buffers.count = 0;
  if (!rc_variadic) d->variadic.count = 0;
  if (*length < 0) return fail(d, -1, XCHG_EFORMAT, "record batch length %lld", (long long)*length);
  xchg_status st = ipc_batch_compression(batch, &d->codec, d->err);
  if (st != XCHG_OK) xchg_error_prefix(d->err, "message %lld: ", (long long)d->ctx->message_index);
  return st;
}

xchg_status ipc_decode_batch(const ipc_decode_ctx *ctx, const fb_table *batch, xchg_buf *body,
                             const ipc_field *columns, int64_t n_columns, int dictionary_values,
                             ipc_array **out, xchg_error *err) {
  decoder d = {.ctx = ctx, .err = err, .body = body};
  int64_t length;
  *out = NULL;
  xchg_status st = open_batch(&d, batch, &length);
  if (st != XCHG_OK) return st;
  ipc_array *root = ipc_array_new(1, n_columns);
  if (!root) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  root->length = length;
  for (int64_t i = 0; i < n_columns && st == XCHG_OK; i++) {
    st = decode_field(&d, &columns[i], dictionary_values, &root->children[i]);
    if (st == XCHG_OK && root->children[i]->length != length && !dictionary_values)
      st = fail(&d, -1, XCHG_EFORMAT, "column has %lld rows, the batch %lld",
                (long long)root->children[i]->length, (long long)length);
  }
  d.field = NULL;
  if (st == XCHG_OK && (d.next_node != d.nodes.count || d.next_buffer != d.buffers.count))
    st = fail(&d, -1, XCHG_EFORMAT, "the schema uses %u field nodes and %u buffers, the message "
              "has %u and %u", d.next_node, d.next_buffer, d.nodes.count, d.buffers.count);
  if (st != XCHG_OK) {
    ipc_array_unref(root);
    return st;
  }
  *out = root;
  return XCHG_OK;
}
