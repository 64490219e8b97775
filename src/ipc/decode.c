/* decode.c — see decode.h: step 1, planning a batch, and the error
 * reports all three steps share.  Step 2 (the decompression jobs) is in
 * decode_jobs.c, step 3 (validation) in decode_validate.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/decode_internal.h"
#include "ipc/format.h"
#include "xchg/codec.h"

/* Errors name a buffer in one of two ways, and say which: "message
 * buffer K", the K-th of the RecordBatch message's buffer list (where the
 * bytes are, before anything is decoded), or "array buffer K (role)", the
 * K-th buffer of the field's array as the C Data Interface numbers them
 * (what the values are, once decoded). */

/* What buffer i of an array of field f holds (of its dictionary's values
 * when as_value). */
static const char *array_buffer_role(const ipc_field *f, int as_value, int64_t i) {
  if (f == NULL) return "?";
  if (f->dict_encoded && !as_value) return i == 0 ? "validity" : "indices";
  switch (f->type) {
    case IPC_UNION: return i == 0 ? "type ids" : "offsets";
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8: return i == 0 ? "validity" : i == 1 ? "offsets" : "data";
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW: return i == 0 ? "validity" : i == 1 ? "views" : "data";
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP: return i == 0 ? "validity" : "offsets";
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: return i == 0 ? "validity" : i == 1 ? "offsets" : "sizes";
    default: return i == 0 ? "validity" : "data";
  }
}

const char *ipc_message_name(int64_t index, int64_t offset, char out[IPC_MESSAGE_NAME]) {
  if (offset >= 0)
    snprintf(out, IPC_MESSAGE_NAME, "message %lld at byte %lld", (long long)index,
             (long long)offset);
  else
    snprintf(out, IPC_MESSAGE_NAME, "message %lld", (long long)index);
  return out;
}

/* "message M at byte B" of the batch being decoded. */
static const char *this_message(const ipc_decoder *d, char out[IPC_MESSAGE_NAME]) {
  return ipc_message_name(d->ctx->message_index, d->ctx->message_offset, out);
}

static xchg_status report(const ipc_decoder *d, const char *where, xchg_status st, const char *fmt,
                          va_list ap) {
  char what[640], message[IPC_MESSAGE_NAME];
  vsnprintf(what, sizeof what, fmt, ap);
  /* Before the first field (the RecordBatch table itself), no field is named. */
  if (!d->field) return xchg_errorf(d->err, st, "%s%s: %s", this_message(d, message), where, what);
  return xchg_errorf(d->err, st, "%s, field '%s'%s: %s", this_message(d, message), d->field->path,
                     where, what);
}

static xchg_status fail_message_buffer(const ipc_decoder *d, int64_t index, xchg_status st,
                                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Reports "message M, field 'f', array buffer K (role): <what>"; no buffer
 * when array_buffer is -1. */
xchg_status ipc_decode_fail(const ipc_decoder *d, int64_t array_buffer, xchg_status st,
                            const char *fmt, ...) {
  char where[64] = "";
  if (array_buffer >= 0)
    snprintf(where, sizeof where, ", array buffer %lld (%s)", (long long)array_buffer,
             array_buffer_role(d->field, d->as_value, array_buffer));
  va_list ap;
  va_start(ap, fmt);
  st = report(d, where, st, fmt, ap);
  va_end(ap);
  return st;
}

/* Reports "message M, field 'f', message buffer K: <what>". */
static xchg_status fail_message_buffer(const ipc_decoder *d, int64_t index, xchg_status st,
                                       const char *fmt, ...) {
  char where[64];
  snprintf(where, sizeof where, ", message buffer %lld", (long long)index);
  va_list ap;
  va_start(ap, fmt);
  st = report(d, where, st, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- jobs ------------------------------------------------------------------ */

static xchg_status add_job(ipc_decoder *d, ipc_buffer src, xchg_buf *dst, swap_rule swap) {
  ipc_jobs *jobs = d->jobs;
  if (jobs->count == jobs->capacity) {
    int64_t cap = jobs->capacity ? jobs->capacity * 2 : 64;
    ipc_job *items = realloc(jobs->items, (size_t)cap * sizeof *items);
    if (!items) return fail_message_buffer(d, d->next_buffer - 1, XCHG_ENOMEM, "out of memory");
    jobs->items = items;
    jobs->capacity = cap;
  }
  jobs->items[jobs->count++] = (ipc_job){src,
                                         dst,
                                         d->codec,
                                         swap,
                                         d->ctx,
                                         d->field,
                                         d->next_buffer - 1,
                                         d->ctx->message_index,
                                         d->ctx->message_offset,
                                         XCHG_OK};
  jobs->bytes += (int64_t)xchg_buf_size(dst);
  return XCHG_OK;
}

/* ---- step 1: plan ------------------------------------------------------------ */

/* Bytes [offset, offset+len) of the body, as a view. */
static xchg_status fetch(ipc_decoder *d, int64_t index, int64_t offset, int64_t len,
                         ipc_buffer *out) {
  const ipc_body *body = d->body;
  if (body->mem) {
    *out = (ipc_buffer){d->base + offset, (size_t)len, xchg_buf_ref(body->mem)};
    return XCHG_OK;
  }
  xchg_buf *b;
  xchg_status st = xchg_source_seek(body->src, (uint64_t)(body->offset + offset), d->err);
  if (st == XCHG_OK) st = xchg_source_read_buf(body->src, (size_t)len, &b, d->err);
  if (st != XCHG_OK) {
    char message[IPC_MESSAGE_NAME];
    xchg_error_prefix(d->err, "%s, field '%s', message buffer %lld: ", this_message(d, message),
                      d->field ? d->field->path : "", (long long)index);
    return st;
  }
  *out = (ipc_buffer){xchg_buf_data(b), xchg_buf_size(b), b};
  return XCHG_OK;
}

/* Replaces the view with an aligned, private copy, byte-swapped when
 * needed. */
static xchg_status copy_buffer(ipc_decoder *d, int64_t index, ipc_buffer *b, swap_rule swap) {
  xchg_buf *copy = xchg_buf_alloc(b->size);
  if (!copy)
    return fail_message_buffer(d, index, XCHG_ENOMEM, "out of memory copying %zu bytes", b->size);
  memcpy(xchg_buf_mutable_data(copy), b->data, b->size);
  if (d->ctx->big_endian && swap_needed(swap))
    swap_values(xchg_buf_mutable_data(copy), b->size, swap, 1);
  xchg_buf_unref(b->owner);
  *b = (ipc_buffer){xchg_buf_data(copy), b->size, copy};
  return XCHG_OK;
}

/* Checks the uncompressed length a compressed buffer declares, before
 * anything that size is allocated: against the caps, and against what its
 * compressed bytes can produce at all.  `at` is the buffer's byte offset in
 * the input. */
static xchg_status check_declared(ipc_decoder *d, int64_t index, int64_t at,
                                  const ipc_buffer *frame, int64_t size) {
  const xchg_ipc_read_options *opts = d->ctx->opts;
  if (size > opts->max_buffer_bytes)
    return fail_message_buffer(d, index, XCHG_ELIMIT,
                               "uncompressed length %lld exceeds max_buffer_bytes %lld",
                               (long long)size, (long long)opts->max_buffer_bytes);
  xchg_status st = xchg_block_check_size(d->codec, frame->data, frame->size, (size_t)size, d->err);
  if (st != XCHG_OK) {
    char message[IPC_MESSAGE_NAME];
    xchg_error_prefix(
        d->err, "%s, field '%s', message buffer %lld: at byte %lld: ", this_message(d, message),
        d->field ? d->field->path : "", (long long)index, (long long)at);
    return st;
  }
  if (size > opts->max_batch_bytes - d->planned_bytes)
    return fail_message_buffer(d, index, XCHG_ELIMIT,
                               "uncompressed length %lld after %lld bytes of the batch's "
                               "other buffers exceeds max_batch_bytes %lld",
                               (long long)size, (long long)d->planned_bytes,
                               (long long)opts->max_batch_bytes);
  d->planned_bytes += size;
  return XCHG_OK;
}

/* `raw` holds a compressed buffer, found at byte `at` of the input: an
 * int64 uncompressed length, then the codec's frame (or, for length -1,
 * the bytes stored as they are).  Turns it into the final buffer, with a
 * job queued to fill it (*queued), or into a view of the stored bytes. */
static xchg_status plan_compressed(ipc_decoder *d, int64_t index, int64_t at, ipc_buffer *raw,
                                   swap_rule swap, int *queued) {
  if (raw->size < 8)
    return fail_message_buffer(d, index, XCHG_EFORMAT,
                               "compressed buffer of %zu bytes lacks its 8-byte length", raw->size);
  int64_t size = (int64_t)fb_load_u64(raw->data);
  raw->data += 8;
  raw->size -= 8;
  if (size == -1) return XCHG_OK;
  if (size < 0)
    return fail_message_buffer(d, index, XCHG_EFORMAT, "negative uncompressed length %lld",
                               (long long)size);
  xchg_status st = check_declared(d, index, at, raw, size);
  if (st != XCHG_OK) return st;
  xchg_buf *dst = xchg_buf_alloc((size_t)size);
  st = dst ? add_job(d, *raw, dst, swap)
           : fail_message_buffer(d, index, XCHG_ENOMEM, "out of memory for %lld bytes",
                                 (long long)size);
  if (st != XCHG_OK) {
    xchg_buf_unref(dst);
    return st;
  }
  /* The job took over raw's reference; the array gets one on dst. */
  *raw = (ipc_buffer){xchg_buf_data(dst), (size_t)size, xchg_buf_ref(dst)};
  *queued = 1;
  return XCHG_OK;
}

/* Checks the next buffer's range against the body and steps past it. */
static xchg_status next_range(ipc_decoder *d, int64_t *offset, int64_t *len) {
  int64_t index = d->next_buffer;
  if (d->next_buffer >= d->buffers.count)
    return fail_message_buffer(d, index, XCHG_EFORMAT, "the message has only %u buffers",
                               d->buffers.count);
  const uint8_t *spec = fb_vector_elem(&d->buffers, d->next_buffer++);
  *offset = (int64_t)fb_load_u64(spec);
  *len = (int64_t)fb_load_u64(spec + 8);
  if (*offset < 0 || *len < 0 || *offset > d->body->length || *len > d->body->length - *offset)
    return fail_message_buffer(d, index, XCHG_EFORMAT,
                               "range [%lld, +%lld) lies outside the %lld-byte body",
                               (long long)*offset, (long long)*len, (long long)d->body->length);
  return XCHG_OK;
}

/* Takes the next buffer of the message into buffer i of a: a zero-copy
 * view when it is stored as is (copied only when misaligned or
 * big-endian), or a buffer to be filled by a decompression job.  An empty
 * buffer stays absent. */
static xchg_status take_buffer(ipc_decoder *d, swap_rule swap, ipc_array *a, int64_t i) {
  ipc_buffer *out = &a->buffers[i];
  int64_t offset = 0, len = 0, index = d->next_buffer;
  xchg_status st = next_range(d, &offset, &len);
  if (st != XCHG_OK || len == 0) return st;
  const uint8_t *at = d->base ? d->base + offset : NULL;
  if (d->borrow && i < 64 && ((uintptr_t)at & 7) == 0 &&
      !(d->ctx->big_endian && swap_needed(swap))) {
    *out = (ipc_buffer){at, (size_t)len, d->body->mem};
    a->borrowed |= (uint64_t)1 << i;
    return XCHG_OK;
  }
  if ((st = fetch(d, index, offset, len, out)) != XCHG_OK) return st;
  int queued = 0;
  if (d->codec != XCHG_BLOCK_NONE &&
      (st = plan_compressed(d, index, d->body->offset + offset, out, swap, &queued)) != XCHG_OK)
    return st;
  if (queued) return XCHG_OK; /* the job fills, aligns and swaps it */
  int misaligned = ((uintptr_t)out->data & 7) != 0;
  if (misaligned || (d->ctx->big_endian && swap_needed(swap)))
    return copy_buffer(d, index, out, swap);
  return XCHG_OK;
}

/* The validity bitmap, buffer 0 of a: only worth taking when there are
 * nulls. */
static xchg_status take_validity(ipc_decoder *d, int64_t null_count, ipc_array *a) {
  if (null_count > 0) return take_buffer(d, NO_SWAP, a, 0);
  int64_t offset, len;
  return next_range(d, &offset, &len);
}

static xchg_status take_node(ipc_decoder *d, int64_t *length, int64_t *null_count) {
  if (d->next_node >= d->nodes.count)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "the message has only %u field nodes",
                           d->nodes.count);
  const uint8_t *node = fb_vector_elem(&d->nodes, d->next_node++);
  *length = (int64_t)fb_load_u64(node);
  *null_count = (int64_t)fb_load_u64(node + 8);
  /* null_count >= 0 and null_count <= length also make length >= 0. */
  if (*null_count < 0 || *null_count > *length)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "field node has length %lld and null_count %lld",
                           (long long)*length, (long long)*null_count);
  return XCHG_OK;
}

static xchg_status take_variadic_count(ipc_decoder *d, int64_t *n) {
  if (d->next_variadic >= d->variadic.count)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT,
                           "no variadicBufferCounts entry for this view field");
  *n = (int64_t)fb_load_u64(fb_vector_elem(&d->variadic, d->next_variadic++));
  if (*n < 0 || *n > (int64_t)d->buffers.count)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "variadic buffer count %lld", (long long)*n);
  return XCHG_OK;
}

int64_t ipc_field_buffer_count(const ipc_field *f, int as_value, int metadata_version) {
  if (f->dict_encoded && !as_value) return 2;
  switch (f->type) {
    case IPC_NULL:
    case IPC_RUN_END_ENCODED: return 0;
    case IPC_STRUCT:
    case IPC_FIXED_SIZE_LIST: return 1;
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: return 3;
    case IPC_UNION: return (f->union_dense ? 2 : 1) + (metadata_version < IPC_METADATA_V5);
    default: return 2;
  }
}

int64_t ipc_field_c_buffer_count(const ipc_field *f, int as_value, int64_t n_data) {
  int64_t n = ipc_field_buffer_count(f, as_value, IPC_METADATA_V5);
  int views = f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW;
  return views && (as_value || !f->dict_encoded) ? n + n_data + 1 : n;
}

/* Steps over an unselected field without reading any of its buffers. */
static xchg_status skip_field(ipc_decoder *d, const ipc_field *f, int as_value) {
  int64_t length = 0, nulls = 0, offset, len,
          n = ipc_field_buffer_count(f, as_value, d->ctx->metadata_version);
  d->field = f;
  d->as_value = as_value;
  xchg_status st = take_node(d, &length, &nulls);
  if (st == XCHG_OK && (f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW) &&
      !(f->dict_encoded && !as_value)) {
    st = take_variadic_count(d, &n);
    n += 2;
  }
  for (int64_t i = 0; i < n && st == XCHG_OK; i++) st = next_range(d, &offset, &len);
  int has_children = !(f->dict_encoded && !as_value);
  for (int64_t i = 0; has_children && i < f->n_children && st == XCHG_OK; i++)
    st = skip_field(d, &f->children[i], 0);
  return st;
}

/* The field nodes and buffers of f and its descendants, counted from the
 * schema alone; false for a view type, whose buffer count is in the
 * message (variadicBufferCounts). */
static int layout_span(const ipc_decoder *d, const ipc_field *f, int as_value, int64_t *nodes,
                       int64_t *buffers) {
  int encoded = f->dict_encoded && !as_value;
  if (!encoded && (f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW)) return 0;
  *nodes += 1;
  *buffers += ipc_field_buffer_count(f, as_value, d->ctx->metadata_version);
  for (int64_t i = 0; !encoded && i < f->n_children; i++)
    if (!layout_span(d, &f->children[i], 0, nodes, buffers)) return 0;
  return 1;
}

/* Counts f's span (ipc_field.span_nodes) and its descendants'; false when
 * only the message can tell it (a view type below or at f). */
static int count_span(ipc_field *f) {
  int known = 1, encoded = f->dict_encoded != 0;
  uint32_t nodes = 1, buffers = (uint32_t)ipc_field_buffer_count(f, 0, IPC_METADATA_V5),
           unions = !encoded && f->type == IPC_UNION;
  for (int64_t i = 0; i < f->n_children; i++) {
    ipc_field *c = &f->children[i];
    known &= count_span(c);
    nodes += c->span_nodes;
    buffers += c->span_buffers;
    unions += c->span_unions;
  }
  if (!encoded && (f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW)) known = 0;
  if (encoded) nodes = 1, buffers = 2, unions = 0, known = 1; /* the indices alone */
  f->span_nodes = known ? nodes : 0;
  f->span_buffers = known ? buffers : 0;
  f->span_unions = known ? unions : 0;
  return known;
}

void ipc_schema_count_spans(ipc_schema *schema) {
  for (int64_t i = 0; i < schema->root.n_children; i++) count_span(&schema->root.children[i]);
}

/* Steps over an unselected field of a batch being planned: its nodes and
 * buffers are never read, so they are only counted (skip_field checks
 * each; views need it for their counts), by its span when the schema's
 * are counted.  A message with fewer than that fails at the next field's
 * node or buffer, or at the end, where ipc_decode_plan holds the counts
 * used against the message's. */
static xchg_status skip_unread(ipc_decoder *d, const ipc_field *f, int as_value) {
  int64_t nodes = 0, buffers = 0;
  if (f->span_nodes && !as_value) {
    nodes = f->span_nodes;
    buffers = f->span_buffers + (d->ctx->metadata_version < IPC_METADATA_V5 ? f->span_unions : 0);
  } else if (!layout_span(d, f, as_value, &nodes, &buffers)) {
    return skip_field(d, f, as_value);
  }
  d->field = f;
  d->as_value = as_value;
  d->next_node += (uint32_t)nodes;
  d->next_buffer += (uint32_t)buffers;
  return XCHG_OK;
}

static xchg_status plan_field(ipc_decoder *d, const ipc_field *f, int as_value, ipc_array **out);

static int64_t selected_children(const ipc_field *f) {
  int64_t n = 0;
  for (int64_t i = 0; i < f->n_children; i++) n += !f->children[i].skip;
  return n;
}

/* Plans the children of f; unselected ones are skipped and leave no
 * array behind. */
static xchg_status plan_children(ipc_decoder *d, const ipc_field *f, ipc_array *a) {
  int64_t k = 0;
  int as_value = d->as_value; /* f's, set by plan_field */
  for (int64_t i = 0; i < f->n_children; i++) {
    const ipc_field *c = &f->children[i];
    xchg_status st = c->skip ? skip_unread(d, c, 0) : plan_field(d, c, 0, &a->children[k++]);
    if (st != XCHG_OK) return st;
  }
  d->field = f;
  d->as_value = as_value;
  return XCHG_OK;
}

static xchg_status new_array(ipc_decoder *d, int64_t n_buffers, int64_t n_children, int64_t length,
                             int64_t null_count, ipc_array **out) {
  if (!(*out = ipc_arena_new_array(&d->arena, n_buffers, n_children)))
    return ipc_decode_fail(d, -1, XCHG_ENOMEM, "out of memory");
  (*out)->length = length;
  (*out)->null_count = null_count;
  return XCHG_OK;
}

/* Binary views: IPC has validity, views, data...; the C Data Interface adds
 * a last buffer with the size of each data buffer. */
static xchg_status plan_views(ipc_decoder *d, ipc_array *a, int64_t n_data) {
  xchg_status st = take_buffer(d, VIEW_SWAP, a, 1);
  for (int64_t i = 0; i < n_data && st == XCHG_OK; i++) st = take_buffer(d, NO_SWAP, a, 2 + i);
  if (st != XCHG_OK) return st;
  xchg_buf *sizes = ipc_array_set_buf(a, 2 + n_data, xchg_buf_alloc((size_t)n_data * 8));
  if (!sizes) return ipc_decode_fail(d, -1, XCHG_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n_data; i++) {
    int64_t size = (int64_t)ipc_array_size(a, 2 + i);
    memcpy(xchg_buf_mutable_data(sizes) + 8 * i, &size, 8);
  }
  return XCHG_OK;
}

static xchg_status plan_union(ipc_decoder *d, const ipc_field *f, int64_t length, int64_t nulls,
                              ipc_array **out) {
  /* Before metadata V5, unions had a validity buffer, which is dropped. */
  int legacy = d->ctx->metadata_version < 4;
  if (nulls != 0 && !legacy)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "a union has null_count %lld", (long long)nulls);
  xchg_status st = new_array(d, f->union_dense ? 2 : 1, f->n_children, length, 0, out);
  int64_t offset, len;
  if (st == XCHG_OK && legacy) st = next_range(d, &offset, &len);
  if (st == XCHG_OK) st = take_buffer(d, NO_SWAP, *out, 0);
  if (st == XCHG_OK && f->union_dense) st = take_buffer(d, INT_SWAP(4), *out, 1);
  return st == XCHG_OK ? plan_children(d, f, *out) : st;
}

static xchg_status plan_value(ipc_decoder *d, const ipc_field *f, int64_t length, int64_t nulls,
                              ipc_array **out) {
  int ow = ipc_offset_width(f->type);
  int64_t n_data;
  xchg_status st;
  switch (f->type) {
    case IPC_NULL: return new_array(d, 0, 0, length, length, out);
    case IPC_UNION: return plan_union(d, f, length, nulls, out);
    case IPC_RUN_END_ENCODED:
      st = new_array(d, 0, 2, length, nulls, out);
      return st == XCHG_OK ? plan_children(d, f, *out) : st;
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW:
      if ((st = take_variadic_count(d, &n_data)) != XCHG_OK ||
          (st = new_array(d, 3 + n_data, 0, length, nulls, out)) != XCHG_OK ||
          (st = take_validity(d, nulls, *out)) != XCHG_OK)
        return st;
      return plan_views(d, *out, n_data);
    default: break;
  }
  int64_t n = ipc_field_buffer_count(f, 1, d->ctx->metadata_version);
  int64_t n_children = f->type == IPC_STRUCT ? selected_children(f) : f->n_children;
  if ((st = new_array(d, n, n_children, length, nulls, out)) != XCHG_OK ||
      (st = take_validity(d, nulls, *out)) != XCHG_OK)
    return st;
  swap_rule rules[3] = {NO_SWAP, {f->swap, f->width}, INT_SWAP(ow)};
  switch (f->type) {
    case IPC_BOOL: rules[1] = NO_SWAP; break;
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
      rules[1] = INT_SWAP(ow);
      rules[2] = NO_SWAP;
      break;
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP:
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW: rules[1] = INT_SWAP(ow); break;
    default: break;
  }
  for (int64_t i = 1; i < n && st == XCHG_OK; i++) st = take_buffer(d, rules[i], *out, i);
  return st == XCHG_OK ? plan_children(d, f, *out) : st;
}

ipc_array *ipc_empty_array(const ipc_field *f, int as_value) {
  static const uint64_t zero_offset = 0;  /* the one offset of no rows */
  int own = !f->dict_encoded || as_value; /* else the indices of a dictionary */
  ipc_array *a = ipc_array_new(ipc_field_c_buffer_count(f, as_value, 0), own ? f->n_children : 0);
  int ok = a != NULL;
  int offsets = f->type == IPC_BINARY || f->type == IPC_UTF8 || f->type == IPC_LARGE_BINARY ||
                f->type == IPC_LARGE_UTF8 || f->type == IPC_LIST || f->type == IPC_LARGE_LIST ||
                f->type == IPC_MAP;
  if (ok && own && offsets)
    a->buffers[1] =
        (ipc_buffer){(const uint8_t *)&zero_offset, (size_t)ipc_offset_width(f->type), NULL};
  for (int64_t i = 0; ok && own && i < f->n_children; i++)
    ok = (a->children[i] = ipc_empty_array(&f->children[i], 0)) != NULL;
  if (ok && !own) ok = (a->dictionary = ipc_empty_array(f, 1)) != NULL;
  if (ok) return a;
  ipc_array_unref(a);
  return NULL;
}

static xchg_status plan_field(ipc_decoder *d, const ipc_field *f, int as_value, ipc_array **out) {
  int64_t length = 0, nulls = 0;
  d->field = f;
  d->as_value = as_value;
  *out = NULL;
  xchg_status st = take_node(d, &length, &nulls);
  if (st != XCHG_OK) return st;
  if (!f->dict_encoded || as_value) return plan_value(d, f, length, nulls, out);
  if ((st = new_array(d, 2, 0, length, nulls, out)) != XCHG_OK ||
      (st = take_validity(d, nulls, *out)) != XCHG_OK ||
      (st = take_buffer(d, INT_SWAP(f->index_width), *out, 1)) != XCHG_OK)
    return st;
  ipc_array *dict = d->ctx->lookup(d->ctx->lookup_ctx, f->dict_id);
  /* A dictionary need only be defined before a batch uses one of its
   * values (Columnar.rst): a column of no row, or of nulls only, may come
   * first (Arrow JS writes an empty table's so); it gets an empty one. */
  if (!dict && length > nulls)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "dictionary %lld is used before it is defined",
                           (long long)f->dict_id);
  (*out)->dictionary = dict ? ipc_array_ref(dict) : ipc_empty_array(f, 1);
  return (*out)->dictionary ? XCHG_OK : ipc_decode_fail(d, -1, XCHG_ENOMEM, "out of memory");
}

xchg_status ipc_batch_compression(const fb_table *batch, xchg_block_codec *out, xchg_error *err) {
  fb_table comp;
  uint8_t codec = 0, method = 0;
  int rc = fb_table_field(batch, BATCH_COMPRESSION, &comp);
  *out = XCHG_BLOCK_NONE;
  if (rc < 0 || (rc > 0 && (fb_u8(&comp, 0, 0, &codec) < 0 || fb_u8(&comp, 1, 0, &method) < 0)))
    return xchg_errorf(err, XCHG_EFORMAT, "invalid BodyCompression table");
  if (rc == 0) return XCHG_OK;
  if (method != 0)
    return xchg_errorf(err, XCHG_ENOTSUP, "unknown body compression method %d (BUFFER, 0, is read)",
                       method);
  if (codec > 1)
    return xchg_errorf(err, XCHG_ENOTSUP,
                       "unknown body compression codec %d (LZ4_FRAME, 0, and ZSTD, 1, are read)",
                       codec);
  *out = codec == 0 ? XCHG_BLOCK_LZ4_FRAME : XCHG_BLOCK_ZSTD;
  return XCHG_OK;
}

static xchg_status open_batch(ipc_decoder *d, const fb_table *batch, int64_t *length) {
  int rc_nodes, rc_buffers, rc_variadic;
  if (fb_i64(batch, BATCH_LENGTH, 0, length) < 0 ||
      (rc_nodes = fb_vector_field(batch, BATCH_NODES, 16, &d->nodes)) < 0 ||
      (rc_buffers = fb_vector_field(batch, BATCH_BUFFERS, 16, &d->buffers)) < 0 ||
      (rc_variadic = fb_vector_field(batch, BATCH_VARIADIC_COUNTS, 8, &d->variadic)) < 0)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "invalid RecordBatch table");
  if (!rc_nodes) d->nodes.count = 0;
  if (!rc_buffers) d->buffers.count = 0;
  if (!rc_variadic) d->variadic.count = 0;
  if (*length < 0)
    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "record batch length %lld", (long long)*length);
  xchg_status st = ipc_batch_compression(batch, &d->codec, d->err);
  char message[IPC_MESSAGE_NAME];
  if (st != XCHG_OK) xchg_error_prefix(d->err, "%s: ", this_message(d, message));
  const ipc_body *body = d->body;
  d->base = !body->mem ? NULL : body->data ? body->data : xchg_buf_data(body->mem);
  /* An uncompressed body in memory, which the batch's arena keeps
   * (ipc_decode_plan): its buffers are views, not copies. */
  d->borrow = d->codec == XCHG_BLOCK_NONE && d->base;
  return st;
}

/* What buffer [offset, +len) of the body decodes to: itself, or for a
 * compressed body its declared length (-1 in the 8-byte prefix: stored as
 * is); -1 when that cannot be told (the body is not in memory, a bad
 * prefix: decoding reports those). */
static int64_t decoded_size(const ipc_decoder *d, int64_t offset, int64_t len) {
  if (d->codec == XCHG_BLOCK_NONE || len == 0) return len;
  if (d->body->mem == NULL || len < 8) return -1;
  int64_t declared = (int64_t)fb_load_u64(d->base + offset);
  return declared == -1 ? len - 8 : declared < 0 ? -1 : declared;
}

xchg_status ipc_column_bytes(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                             const ipc_field *columns, int64_t n_columns, int64_t *wire,
                             int64_t *decoded, xchg_error *err) {
  ipc_decoder d = {.ctx = ctx, .err = err, .body = body};
  int64_t length;
  xchg_status st = open_batch(&d, batch, &length);
  for (int64_t i = 0; i < n_columns && st == XCHG_OK; i++) {
    uint32_t first = d.next_buffer;
    st = skip_field(&d, &columns[i], 0); /* checks every range it steps over */
    wire[i] = decoded[i] = 0;
    for (uint32_t b = first; b < d.next_buffer && st == XCHG_OK; b++) {
      const uint8_t *spec = fb_vector_elem(&d.buffers, b);
      int64_t offset = (int64_t)fb_load_u64(spec), len = (int64_t)fb_load_u64(spec + 8);
      int64_t size = decoded_size(&d, offset, len);
      /* Ranges may overlap and declared lengths are claims: their sums
       * can pass INT64_MAX only in a damaged batch. */
      if (len > INT64_MAX - wire[i] || (decoded[i] >= 0 && size > INT64_MAX - decoded[i])) {
        d.field = &columns[i];
        st = ipc_decode_fail(&d, b, XCHG_EFORMAT,
                             "the column's buffer lengths sum past INT64_MAX bytes");
        break;
      }
      wire[i] += len;
      decoded[i] = decoded[i] < 0 || size < 0 ? -1 : decoded[i] + size;
    }
  }
  return st;
}

xchg_status ipc_decode_plan(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                            const ipc_field *columns, int64_t n_columns, int dictionary_values,
                            ipc_jobs *jobs, ipc_array **out, xchg_error *err) {
  ipc_decoder d = {.ctx = ctx, .err = err, .body = body, .jobs = jobs};
  int64_t length, n_selected = 0;
  *out = NULL;
  xchg_status st = open_batch(&d, batch, &length);
  if (st != XCHG_OK) return st;
  for (int64_t i = 0; i < n_columns; i++) n_selected += dictionary_values || !columns[i].skip;
  /* About what a batch of flat columns takes: one chunk. */
  ipc_arena_init(&d.arena, 256 + (size_t)n_selected * 128, body->mem);
  ipc_array *root = ipc_arena_new_array(&d.arena, 1, n_selected);
  if (!root) {
    ipc_arena_end(&d.arena);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  root->length = length;
  for (int64_t i = 0, k = 0; i < n_columns && st == XCHG_OK; i++) {
    if (columns[i].skip && !dictionary_values) {
      st = skip_unread(&d, &columns[i], dictionary_values);
      continue;
    }
    st = plan_field(&d, &columns[i], dictionary_values, &root->children[k]);
    if (st == XCHG_OK && root->children[k]->length != length && !dictionary_values)
      st = ipc_decode_fail(&d, -1, XCHG_EFORMAT, "column has %lld rows, the batch %lld",
                           (long long)root->children[k]->length, (long long)length);
    k++;
  }
  d.field = NULL;
  if (st == XCHG_OK && (d.next_node != d.nodes.count || d.next_buffer != d.buffers.count))
    st = ipc_decode_fail(&d, -1, XCHG_EFORMAT,
                         "the schema uses %u field nodes and %u buffers, the message "
                         "has %u and %u",
                         d.next_node, d.next_buffer, d.nodes.count, d.buffers.count);
  ipc_arena_end(&d.arena);
  if (st != XCHG_OK) {
    ipc_array_unref(root);
    return st;
  }
  *out = root;
  return XCHG_OK;
}

xchg_status ipc_decode_batch(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                             const ipc_field *columns, int64_t n_columns, int dictionary_values,
                             ipc_array **out, xchg_error *err) {
  ipc_jobs jobs = {0};
  xchg_status st =
      ipc_decode_plan(ctx, batch, body, columns, n_columns, dictionary_values, &jobs, out, err);
  if (st != XCHG_OK) {
    ipc_jobs_free(&jobs);
    return st;
  }
  st = ipc_jobs_run(&jobs, NULL, 0, NULL, err);
  if (st == XCHG_OK)
    st = ipc_decode_validate(ctx, columns, n_columns, dictionary_values, *out, err);
  if (st != XCHG_OK) {
    ipc_array_unref(*out);
    *out = NULL;
  }
  return st;
}
