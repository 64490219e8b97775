/* decode.c — see decode.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/decode.h"
#include "codec/helpers.h"
#include "ipc/format.h"
#include "ipc/swap.h"
#include "xchg/codec.h"


struct ipc_job {
  ipc_buffer src;         /* the compressed bytes, length prefix excluded */
  xchg_buf *dst;          /* the final buffer */
  xchg_block_codec codec;
  swap_rule swap;
  const ipc_decode_ctx *ctx;
  const ipc_field *field;
  int64_t buffer;
  int64_t message_index;
  xchg_status status;
};

typedef struct decoder {
  const ipc_decode_ctx *ctx;
  xchg_error *err;
  const ipc_body *body;
  xchg_block_codec codec;
  fb_vector nodes, buffers, variadic;
  uint32_t next_node, next_buffer, next_variadic;
  ipc_jobs *jobs;
  int64_t planned_bytes;  /* decompressed bytes of the batch's buffers so far */
  const ipc_field *field; /* the field being decoded, named in errors */
  ipc_arena arena;        /* the batch's arrays */
} decoder;

/* Errors name a buffer in one of two ways, and say which: "message
 * buffer K", the K-th of the RecordBatch message's buffer list (where the
 * bytes are, before anything is decoded), or "array buffer K (role)", the
 * K-th buffer of the field's array as the C Data Interface numbers them
 * (what the values are, once decoded). */

/* What buffer i of an array of field f holds. */
static const char *array_buffer_role(const ipc_field *f, int64_t i) {
  if (f == NULL) return "?";
  if (f->dict_encoded) return i == 0 ? "validity" : "indices";
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

static xchg_status report(const decoder *d, const char *where, xchg_status st, const char *fmt, va_list ap) {
  char what[640];
  vsnprintf(what, sizeof what, fmt, ap);
  return xchg_errorf(d->err, st, "message %lld, field '%s'%s: %s", (long long)d->ctx->message_index,
                     d->field ? d->field->path : "", where, what);
}

static xchg_status fail(const decoder *d, int64_t array_buffer, xchg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static xchg_status fail_message_buffer(const decoder *d, int64_t index, xchg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reports "message M, field 'f', array buffer K (role): <what>"; no buffer
 * when array_buffer is -1. */
static xchg_status fail(const decoder *d, int64_t array_buffer, xchg_status st, const char *fmt, ...) {
  char where[64] = "";
  if (array_buffer >= 0)
    snprintf(where, sizeof where, ", array buffer %lld (%s)", (long long)array_buffer,
             array_buffer_role(d->field, array_buffer));
  va_list ap;
  va_start(ap, fmt);
  st = report(d, where, st, fmt, ap);
  va_end(ap);
  return st;
}

/* Reports "message M, field 'f', message buffer K: <what>". */
static xchg_status fail_message_buffer(const decoder *d, int64_t index, xchg_status st, const char *fmt, ...) {
  char where[64];
  snprintf(where, sizeof where, ", message buffer %lld", (long long)index);
  va_list ap;
  va_start(ap, fmt);
  st = report(d, where, st, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- jobs ------------------------------------------------------------------ */

static xchg_status add_job(decoder *d, ipc_buffer src, xchg_buf *dst, swap_rule swap) {
  ipc_jobs *jobs = d->jobs;
  if (jobs->count == jobs->capacity) {
    int64_t cap = jobs->capacity ? jobs->capacity * 2 : 64;
    ipc_job *items = realloc(jobs->items, (size_t)cap * sizeof *items);
    if (!items) return fail_message_buffer(d, d->next_buffer - 1, XCHG_ENOMEM, "out of memory");
    jobs->items = items;
    jobs->capacity = cap;
  }
  jobs->items[jobs->count++] = (ipc_job){src, dst, d->codec, swap, d->ctx, d->field,
                                          d->next_buffer - 1, d->ctx->message_index, XCHG_OK};
  jobs->bytes += (int64_t)xchg_buf_size(dst);
  return XCHG_OK;
}

static xchg_status run_job(ipc_job *j, xchg_error *err) {
  const ipc_decode_ctx *ctx = j->ctx;
  if (ctx->on_decompress)
    ctx->on_decompress(ctx->on_decompress_ctx, j->codec, j->src.data, j->src.size, xchg_buf_size(j->dst));
  xchg_status st = xchg_block_decompress(j->codec, j->src.data, j->src.size,
                                         xchg_buf_mutable_data(j->dst), xchg_buf_size(j->dst), err);
  if (st == XCHG_OK && ctx->big_endian && swap_needed(j->swap))
    swap_values(xchg_buf_mutable_data(j->dst), xchg_buf_size(j->dst), j->swap, 1);
  return st;
}

/* Task t's jobs; without a split (no memory for one), one task runs all. */
static void task_range(const ipc_jobs *jobs, int64_t t, int64_t *begin, int64_t *end) {
  *begin = jobs->starts ? jobs->starts[t] : 0;
  *end = jobs->starts ? jobs->starts[t + 1] : jobs->count;
}

int64_t ipc_jobs_split(ipc_jobs *jobs, int threads, int64_t task_bytes) {
  free(jobs->starts);
  jobs->starts = NULL;
  if (threads <= 1 || jobs->count <= 1 || jobs->bytes < 2 * task_bytes) return 1;
  if (!(jobs->starts = malloc((size_t)(jobs->count + 1) * sizeof *jobs->starts))) return 1;
  int64_t target = jobs->bytes / (4 * threads);
  if (target < task_bytes) target = task_bytes;
  int64_t n = 0, acc = 0;
  jobs->starts[0] = 0;
  for (int64_t i = 0; i < jobs->count; i++) {
    acc += (int64_t)xchg_buf_size(jobs->items[i].dst);
    if (acc >= target || i == jobs->count - 1) {
      jobs->starts[++n] = i + 1;
      acc = 0;
    }
  }
  return n;
}

void ipc_jobs_run_task(ipc_jobs *jobs, int64_t t) {
  int64_t begin, end;
  task_range(jobs, t, &begin, &end);
  for (int64_t i = begin; i < end; i++) jobs->items[i].status = run_job(&jobs->items[i], NULL);
}

xchg_status ipc_jobs_finish(ipc_jobs *jobs, int64_t *failed_message, xchg_error *err) {
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < jobs->count && st == XCHG_OK; i++) {
    ipc_job *j = &jobs->items[i];
    if (j->status == XCHG_OK) continue;
    /* Again, on this thread, for the message; a failure that does not come
     * back (memory was short on another thread) leaves the job done. */
    st = run_job(j, err);
    if (st == XCHG_OK) continue;
    if (failed_message) *failed_message = j->message_index;
    xchg_error_prefix(err, "message %lld, field '%s', message buffer %lld: ", (long long)j->message_index,
                      j->field->path, (long long)j->buffer);
  }
  ipc_jobs_free(jobs);
  return st;
}

static void run_task(void *jobs, int64_t t) { ipc_jobs_run_task(jobs, t); }

xchg_status ipc_jobs_run(ipc_jobs *jobs, xchg_pool *pool, int64_t task_bytes,
                         int64_t *failed_message, xchg_error *err) {
  xchg_pool_run(pool, ipc_jobs_split(jobs, xchg_pool_threads(pool), task_bytes), run_task, jobs);
  return ipc_jobs_finish(jobs, failed_message, err);
}

void ipc_jobs_truncate(ipc_jobs *jobs, int64_t count) {
  for (int64_t i = count; i < jobs->count; i++) {
    jobs->bytes -= (int64_t)xchg_buf_size(jobs->items[i].dst);
    xchg_buf_unref(jobs->items[i].src.owner);
    xchg_buf_unref(jobs->items[i].dst);
  }
  if (count < jobs->count) jobs->count = count;
}

void ipc_jobs_free(ipc_jobs *jobs) {
  ipc_jobs_truncate(jobs, 0);
  free(jobs->items);
  free(jobs->starts);
  memset(jobs, 0, sizeof *jobs);
}

/* ---- step 1: plan ------------------------------------------------------------ */

/* Bytes [offset, offset+len) of the body, as a view. */
static xchg_status fetch(decoder *d, int64_t index, int64_t offset, int64_t len, ipc_buffer *out) {
  const ipc_body *body = d->body;
  if (body->mem) {
    *out = (ipc_buffer){xchg_buf_data(body->mem) + offset, (size_t)len, xchg_buf_ref(body->mem)};
    return XCHG_OK;
  }
  xchg_buf *b;
  xchg_status st = xchg_source_seek(body->src, (uint64_t)(body->offset + offset), d->err);
  if (st == XCHG_OK) st = xchg_source_read_buf(body->src, (size_t)len, &b, d->err);
  if (st != XCHG_OK) {
    xchg_error_prefix(d->err, "message %lld, field '%s', message buffer %lld: ", (long long)d->ctx->message_index,
                      d->field ? d->field->path : "", (long long)index);
    return st;
  }
  *out = (ipc_buffer){xchg_buf_data(b), xchg_buf_size(b), b};
  return XCHG_OK;
}

/* Replaces the view with an aligned, private copy, byte-swapped when
 * needed. */
static xchg_status copy_buffer(decoder *d, int64_t index, ipc_buffer *b, swap_rule swap) {
  xchg_buf *copy = xchg_buf_alloc(b->size);
  if (!copy) return fail_message_buffer(d, index, XCHG_ENOMEM, "out of memory copying %zu bytes", b->size);
  memcpy(xchg_buf_mutable_data(copy), b->data, b->size);
  if (d->ctx->big_endian && swap_needed(swap)) swap_values(xchg_buf_mutable_data(copy), b->size, swap, 1);
  xchg_buf_unref(b->owner);
  *b = (ipc_buffer){xchg_buf_data(copy), b->size, copy};
  return XCHG_OK;
}

/* Checks the uncompressed length a compressed buffer declares, before
 * anything that size is allocated: against the caps, and against what its
 * compressed bytes can produce at all.  `at` is the buffer's byte offset in
 * the input. */
static xchg_status check_declared(decoder *d, int64_t index, int64_t at, const ipc_buffer *frame,
                                  int64_t size) {
  const xchg_ipc_read_options *opts = d->ctx->opts;
  if (size > opts->max_buffer_bytes)
    return fail_message_buffer(d, index, XCHG_ELIMIT, "uncompressed length %lld exceeds max_buffer_bytes %lld",
                (long long)size, (long long)opts->max_buffer_bytes);
  xchg_status st = xchg_block_check_size(d->codec, frame->data, frame->size, (size_t)size, d->err);
  if (st != XCHG_OK) {
    xchg_error_prefix(d->err, "message %lld, field '%s', message buffer %lld: at byte %lld: ",
                      (long long)d->ctx->message_index, d->field ? d->field->path : "",
                      (long long)index, (long long)at);
    return st;
  }
  if (size > opts->max_batch_bytes - d->planned_bytes)
    return fail_message_buffer(d, index, XCHG_ELIMIT, "uncompressed length %lld after %lld bytes of the batch's "
                "other buffers exceeds max_batch_bytes %lld", (long long)size,
                (long long)d->planned_bytes, (long long)opts->max_batch_bytes);
  d->planned_bytes += size;
  return XCHG_OK;
}

/* `raw` holds a compressed buffer, found at byte `at` of the input: an
 * int64 uncompressed length, then the codec's frame (or, for length -1,
 * the bytes stored as they are).  Turns it into the final buffer, with a
 * job queued to fill it (*queued), or into a view of the stored bytes. */
static xchg_status plan_compressed(decoder *d, int64_t index, int64_t at, ipc_buffer *raw,
                                   swap_rule swap, int *queued) {
  if (raw->size < 8)
    return fail_message_buffer(d, index, XCHG_EFORMAT, "compressed buffer of %zu bytes lacks its 8-byte length", raw->size);
  int64_t size = (int64_t)fb_load_u64(raw->data);
  raw->data += 8;
  raw->size -= 8;
  if (size == -1) return XCHG_OK;
  if (size < 0) return fail_message_buffer(d, index, XCHG_EFORMAT, "negative uncompressed length %lld", (long long)size);
  xchg_status st = check_declared(d, index, at, raw, size);
  if (st != XCHG_OK) return st;
  xchg_buf *dst = xchg_buf_alloc((size_t)size);
  st = dst ? add_job(d, *raw, dst, swap)
                       : fail_message_buffer(d, index, XCHG_ENOMEM, "out of memory for %lld bytes", (long long)size);
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
static xchg_status next_range(decoder *d, int64_t *offset, int64_t *len) {
  int64_t index = d->next_buffer;
  if (d->next_buffer >= d->buffers.count)
    return fail_message_buffer(d, index, XCHG_EFORMAT, "the message has only %u buffers", d->buffers.count);
  const uint8_t *spec = fb_vector_elem(&d->buffers, d->next_buffer++);
  *offset = (int64_t)fb_load_u64(spec);
  *len = (int64_t)fb_load_u64(spec + 8);
  if (*offset < 0 || *len < 0 || *offset > d->body->length || *len > d->body->length - *offset)
    return fail_message_buffer(d, index, XCHG_EFORMAT, "range [%lld, +%lld) lies outside the %lld-byte body",
                (long long)*offset, (long long)*len, (long long)d->body->length);
  return XCHG_OK;
}

/* Whether buffer i of an array may borrow the body: uncompressed, in
 * memory and kept by the batch's arena. */
static int borrows(const decoder *d, int64_t i) {
  return i < 64 && d->codec == XCHG_BLOCK_NONE && d->body->mem && d->arena.keep == d->body->mem;
}

/* Takes the next buffer of the message into buffer i of a: a zero-copy
 * view when it is stored as is (copied only when misaligned or
 * big-endian), or a buffer to be filled by a decompression job.  An empty
 * buffer stays absent. */
static xchg_status take_buffer(decoder *d, swap_rule swap, ipc_array *a, int64_t i) {
  ipc_buffer *out = &a->buffers[i];
  int64_t offset = 0, len = 0, index = d->next_buffer;
  xchg_status st = next_range(d, &offset, &len);
  if (st != XCHG_OK || len == 0) return st;
  const uint8_t *at = d->body->mem ? xchg_buf_data(d->body->mem) + offset : NULL;
  if (borrows(d, i) && ((uintptr_t)at & 7) == 0 && !(d->ctx->big_endian && swap_needed(swap))) {
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
  if (misaligned || (d->ctx->big_endian && swap_needed(swap))) return copy_buffer(d, index, out, swap);
  return XCHG_OK;
}

/* The validity bitmap, buffer 0 of a: only worth taking when there are
 * nulls. */
static xchg_status take_validity(decoder *d, int64_t null_count, ipc_array *a) {
  if (null_count > 0) return take_buffer(d, NO_SWAP, a, 0);
  int64_t offset, len;
  return next_range(d, &offset, &len);
}

static xchg_status take_node(decoder *d, int64_t *length, int64_t *null_count) {
  if (d->next_node >= d->nodes.count)
    return fail(d, -1, XCHG_EFORMAT, "the message has only %u field nodes", d->nodes.count);
  const uint8_t *node = fb_vector_elem(&d->nodes, d->next_node++);
  *length = (int64_t)fb_load_u64(node);
  *null_count = (int64_t)fb_load_u64(node + 8);
  /* null_count >= 0 and null_count <= length also make length >= 0. */
  if (*null_count < 0 || *null_count > *length)
    return fail(d, -1, XCHG_EFORMAT, "field node has length %lld and null_count %lld",
                (long long)*length, (long long)*null_count);
  return XCHG_OK;
}

static xchg_status take_variadic_count(decoder *d, int64_t *n) {
  if (d->next_variadic >= d->variadic.count)
    return fail(d, -1, XCHG_EFORMAT, "no variadicBufferCounts entry for this view field");
  *n = (int64_t)fb_load_u64(fb_vector_elem(&d->variadic, d->next_variadic++));
  if (*n < 0 || *n > (int64_t)d->buffers.count)
    return fail(d, -1, XCHG_EFORMAT, "variadic buffer count %lld", (long long)*n);
  return XCHG_OK;
}

static int offset_width(ipc_type t) {
  return (t == IPC_LARGE_BINARY || t == IPC_LARGE_UTF8 || t == IPC_LARGE_LIST ||
          t == IPC_LARGE_LIST_VIEW) ? 8 : 4;
}

int64_t ipc_field_buffer_count(const ipc_field *f, int as_value, int metadata_version) {
  if (f->dict_encoded && !as_value) return 2;
  switch (f->type) {
    case IPC_NULL: case IPC_RUN_END_ENCODED: return 0;
    case IPC_STRUCT: case IPC_FIXED_SIZE_LIST: return 1;
    case IPC_BINARY: case IPC_UTF8: case IPC_LARGE_BINARY: case IPC_LARGE_UTF8:
    case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW: return 3;
    case IPC_UNION: return (f->union_dense ? 2 : 1) + (metadata_version < IPC_METADATA_V5);
    default: return 2;
  }
}

/* Steps over an unselected field without reading any of its buffers. */
static xchg_status skip_field(decoder *d, const ipc_field *f, int as_value) {
  int64_t length = 0, nulls = 0, offset, len, n = ipc_field_buffer_count(f, as_value, d->ctx->metadata_version);
  d->field = f;
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
static int layout_span(const decoder *d, const ipc_field *f, int as_value, int64_t *nodes,
                       int64_t *buffers) {
  int encoded = f->dict_encoded && !as_value;
  if (!encoded && (f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW)) return 0;
  *nodes += 1;
  *buffers += ipc_field_buffer_count(f, as_value, d->ctx->metadata_version);
  for (int64_t i = 0; !encoded && i < f->n_children; i++)
    if (!layout_span(d, &f->children[i], 0, nodes, buffers)) return 0;
  return 1;
}

/* Steps over an unselected field of a batch being planned: its nodes and
 * buffers are never read, so they are only counted (skip_field checks
 * each; views need it for their counts).  A message with fewer than that
 * fails at the next field's node or buffer, or at the end, where
 * ipc_decode_plan holds the counts used against the message's. */
static xchg_status skip_unread(decoder *d, const ipc_field *f, int as_value) {
  int64_t nodes = 0, buffers = 0;
  if (!layout_span(d, f, as_value, &nodes, &buffers)) return skip_field(d, f, as_value);
  d->field = f;
  d->next_node += (uint32_t)nodes;
  d->next_buffer += (uint32_t)buffers;
  return XCHG_OK;
}

static xchg_status plan_field(decoder *d, const ipc_field *f, int as_value, ipc_array **out);

static int64_t selected_children(const ipc_field *f) {
  int64_t n = 0;
  for (int64_t i = 0; i < f->n_children; i++) n += !f->children[i].skip;
  return n;
}

/* Plans the children of f; unselected ones are skipped and leave no
 * array behind. */
static xchg_status plan_children(decoder *d, const ipc_field *f, ipc_array *a) {
  int64_t k = 0;
  for (int64_t i = 0; i < f->n_children; i++) {
    const ipc_field *c = &f->children[i];
    xchg_status st = c->skip ? skip_unread(d, c, 0) : plan_field(d, c, 0, &a->children[k++]);
    if (st != XCHG_OK) return st;
  }
  d->field = f;
  return XCHG_OK;
}

static xchg_status new_array(decoder *d, int64_t n_buffers, int64_t n_children, int64_t length,
                             int64_t null_count, ipc_array **out) {
  if (!(*out = ipc_arena_new_array(&d->arena, n_buffers, n_children))) return fail(d, -1, XCHG_ENOMEM, "out of memory");
  (*out)->length = length;
  (*out)->null_count = null_count;
  return XCHG_OK;
}

/* Binary views: IPC has validity, views, data...; the C Data Interface adds
 * a last buffer with the size of each data buffer. */
static xchg_status plan_views(decoder *d, ipc_array *a, int64_t n_data) {
  xchg_status st = take_buffer(d, VIEW_SWAP, a, 1);
  for (int64_t i = 0; i < n_data && st == XCHG_OK; i++) st = take_buffer(d, NO_SWAP, a, 2 + i);
  if (st != XCHG_OK) return st;
  xchg_buf *sizes = ipc_array_set_buf(a, 2 + n_data, xchg_buf_alloc((size_t)n_data * 8));
  if (!sizes) return fail(d, -1, XCHG_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n_data; i++) {
    int64_t size = (int64_t)ipc_array_size(a, 2 + i);
    memcpy(xchg_buf_mutable_data(sizes) + 8 * i, &size, 8);
  }
  return XCHG_OK;
}

static xchg_status plan_union(decoder *d, const ipc_field *f, int64_t length, int64_t nulls,
                              ipc_array **out) {
  /* Before metadata V5, unions had a validity buffer, which is dropped. */
  int legacy = d->ctx->metadata_version < 4;
  if (nulls != 0 && !legacy) return fail(d, -1, XCHG_EFORMAT, "a union has null_count %lld", (long long)nulls);
  xchg_status st = new_array(d, f->union_dense ? 2 : 1, f->n_children, length, 0, out);
  int64_t offset, len;
  if (st == XCHG_OK && legacy) st = next_range(d, &offset, &len);
  if (st == XCHG_OK) st = take_buffer(d, NO_SWAP, *out, 0);
  if (st == XCHG_OK && f->union_dense) st = take_buffer(d, INT_SWAP(4), *out, 1);
  return st == XCHG_OK ? plan_children(d, f, *out) : st;
}

static xchg_status plan_value(decoder *d, const ipc_field *f, int64_t length, int64_t nulls,
                              ipc_array **out) {
  int ow = offset_width(f->type);
  int64_t n_data;
  xchg_status st;
  switch (f->type) {
    case IPC_NULL:
      return new_array(d, 0, 0, length, length, out);
    case IPC_UNION:
      return plan_union(d, f, length, nulls, out);
    case IPC_RUN_END_ENCODED:
      st = new_array(d, 0, 2, length, nulls, out);
      return st == XCHG_OK ? plan_children(d, f, *out) : st;
    case IPC_BINARY_VIEW: case IPC_UTF8_VIEW:
      if ((st = take_variadic_count(d, &n_data)) != XCHG_OK ||
          (st = new_array(d, 3 + n_data, 0, length, nulls, out)) != XCHG_OK ||
          (st = take_validity(d, nulls, *out)) != XCHG_OK)
        return st;
      return plan_views(d, *out, n_data);
    default:
      break;
  }
  int64_t n = ipc_field_buffer_count(f, 1, d->ctx->metadata_version);
  int64_t n_children = f->type == IPC_STRUCT ? selected_children(f) : f->n_children;
  if ((st = new_array(d, n, n_children, length, nulls, out)) != XCHG_OK ||
      (st = take_validity(d, nulls, *out)) != XCHG_OK)
    return st;
  swap_rule rules[3] = {NO_SWAP, {f->swap, f->width}, INT_SWAP(ow)};
  switch (f->type) {
    case IPC_BOOL: rules[1] = NO_SWAP; break;
    case IPC_BINARY: case IPC_UTF8: case IPC_LARGE_BINARY: case IPC_LARGE_UTF8:
      rules[1] = INT_SWAP(ow);
      rules[2] = NO_SWAP;
      break;
    case IPC_LIST: case IPC_LARGE_LIST: case IPC_MAP: case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW:
      rules[1] = INT_SWAP(ow);
      break;
    default: break;
  }
  for (int64_t i = 1; i < n && st == XCHG_OK; i++) st = take_buffer(d, rules[i], *out, i);
  return st == XCHG_OK ? plan_children(d, f, *out) : st;
}

static xchg_status plan_field(decoder *d, const ipc_field *f, int as_value, ipc_array **out) {
  int64_t length = 0, nulls = 0;
  d->field = f;
  *out = NULL;
  xchg_status st = take_node(d, &length, &nulls);
  if (st != XCHG_OK) return st;
  if (!f->dict_encoded || as_value) return plan_value(d, f, length, nulls, out);
  if ((st = new_array(d, 2, 0, length, nulls, out)) != XCHG_OK ||
      (st = take_validity(d, nulls, *out)) != XCHG_OK ||
      (st = take_buffer(d, INT_SWAP(f->index_width), *out, 1)) != XCHG_OK)
    return st;
  ipc_array *dict = d->ctx->lookup(d->ctx->lookup_ctx, f->dict_id);
  if (!dict)
    return fail(d, -1, XCHG_EFORMAT, "dictionary %lld is used before it is defined", (long long)f->dict_id);
  (*out)->dictionary = ipc_array_ref(dict);
  return XCHG_OK;
}

xchg_status ipc_batch_compression(const fb_table *batch, xchg_block_codec *out, xchg_error *err) {
  fb_table comp;
  uint8_t codec = 0, method = 0;
  int rc = fb_table_field(batch, BATCH_COMPRESSION, &comp);
  *out = XCHG_BLOCK_NONE;
  if (rc < 0 || (rc > 0 && (fb_u8(&comp, 0, 0, &codec) < 0 || fb_u8(&comp, 1, 0, &method) < 0)))
    return xchg_errorf(err, XCHG_EFORMAT, "invalid BodyCompression table");
  if (rc == 0) return XCHG_OK;
  if (method != 0) return xchg_errorf(err, XCHG_ENOTSUP, "body compression method %d", method);
  if (codec > 1) return xchg_errorf(err, XCHG_ENOTSUP, "body compression codec %d", codec);
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

/* What buffer [offset, +len) of the body decodes to: itself, or for a
 * compressed body its declared length (-1 in the 8-byte prefix: stored as
 * is); -1 when that cannot be told (the body is not in memory, a bad
 * prefix: decoding reports those). */
static int64_t decoded_size(const decoder *d, int64_t offset, int64_t len) {
  if (d->codec == XCHG_BLOCK_NONE || len == 0) return len;
  if (d->body->mem == NULL || len < 8) return -1;
  int64_t declared = (int64_t)fb_load_u64(xchg_buf_data(d->body->mem) + offset);
  return declared == -1 ? len - 8 : declared < 0 ? -1 : declared;
}

xchg_status ipc_column_bytes(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                             const ipc_field *columns, int64_t n_columns, int64_t *wire, int64_t *decoded,
                             xchg_error *err) {
  decoder d = {.ctx = ctx, .err = err, .body = body};
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
        st = fail(&d, b, XCHG_EFORMAT, "the column's buffer lengths sum past INT64_MAX bytes");
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
  decoder d = {.ctx = ctx, .err = err, .body = body, .jobs = jobs};
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
      st = fail(&d, -1, XCHG_EFORMAT, "column has %lld rows, the batch %lld",
                (long long)root->children[k]->length, (long long)length);
    k++;
  }
  d.field = NULL;
  if (st == XCHG_OK && (d.next_node != d.nodes.count || d.next_buffer != d.buffers.count))
    st = fail(&d, -1, XCHG_EFORMAT, "the schema uses %u field nodes and %u buffers, the message "
              "has %u and %u", d.next_node, d.next_buffer, d.nodes.count, d.buffers.count);
  ipc_arena_end(&d.arena);
  if (st != XCHG_OK) {
    ipc_array_unref(root);
    return st;
  }
  *out = root;
  return XCHG_OK;
}

/* ---- step 3: validate ---------------------------------------------------------- */

static int full(const decoder *d) { return d->ctx->opts->validation == XCHG_VALIDATE_FULL; }

static int64_t bitmap_bytes(int64_t length) { return length / 8 + (length % 8 != 0); }

static int valid_at(const ipc_array *a, int64_t i) {
  const uint8_t *bits = a->n_buffers ? ipc_array_data(a, 0) : NULL;
  return !bits || bitmap_get(bits, i);
}

static xchg_status need_size(decoder *d, const ipc_array *a, int64_t i, int64_t count, int64_t width,
                             const char *what) {
  if (width > 0 && count > INT64_MAX / width)
    return fail(d, i, XCHG_EFORMAT, "%lld values of %lld bytes overflow", (long long)count, (long long)width);
  if ((int64_t)ipc_array_size(a, i) < count * width)
    return fail(d, i, XCHG_EFORMAT, "%s buffer has %zu bytes, %lld rows need %lld", what,
                ipc_array_size(a, i), (long long)a->length, (long long)(count * width));
  return XCHG_OK;
}

/* Validity: present and large enough when there are nulls, and (in full
 * validation) holding exactly null_count zero bits. */
static xchg_status check_validity(decoder *d, const ipc_array *a) {
  if (a->null_count == 0) return XCHG_OK;
  if (!a->buffers[0].data)
    return fail(d, 0, XCHG_EFORMAT, "null_count %lld but no validity buffer", (long long)a->null_count);
  xchg_status st = need_size(d, a, 0, bitmap_bytes(a->length), 1, "validity");
  if (st != XCHG_OK || !full(d)) return st;
  const uint8_t *bits = ipc_array_data(a, 0);
  int64_t set = ipc_count_set_bits(bits, a->length / 8);
  for (int64_t i = a->length & ~(int64_t)7; i < a->length; i++) set += bitmap_get(bits, i);
  if (a->length - set != a->null_count)
    return fail(d, 0, XCHG_EFORMAT, "null_count is %lld but the validity bitmap has %lld nulls",
                (long long)a->null_count, (long long)(a->length - set));
  return XCHG_OK;
}

/* A buffer of zeros standing in for the offsets of an empty array, which
 * writers may leave out but consumers may read one entry of. */
static xchg_status zero_offsets(decoder *d, ipc_array *a, int64_t i) {
  static const int64_t zeros[1];
  if (a->buffers[i].data || a->length != 0) return XCHG_OK;
  a->buffers[i] = (ipc_buffer){(const uint8_t *)zeros, sizeof zeros, NULL};
  (void)d;
  return XCHG_OK;
}

/* Whether n offsets of `width` bytes (4 or 8) never decrease.  One pass
 * with no early exit, which the compiler vectorises (eight offsets at a
 * time in the AVX2 copy): the row at fault is searched for only when there
 * is one. */
static inline __attribute__((always_inline)) int offsets_never_decrease(const uint8_t *p, int width, int64_t n) {
  int decreases = 0;
  if (width == 4) {
    for (int64_t k = 1; k < n; k++) {
      int32_t before, after;
      memcpy(&before, p + 4 * (k - 1), 4);
      memcpy(&after, p + 4 * k, 4);
      decreases |= after < before;
    }
  } else {
    for (int64_t k = 1; k < n; k++) {
      int64_t before, after;
      memcpy(&before, p + 8 * (k - 1), 8);
      memcpy(&after, p + 8 * k, 8);
      decreases |= after < before;
    }
  }
  return !decreases;
}

IPC_TARGET("avx2") static int never_decreasing_avx2(const uint8_t *p, int width, int64_t n) {
  return offsets_never_decrease(p, width, n);
}

static int never_decreasing(const uint8_t *p, int width, int64_t n) {
  return IPC_CPU_HAS("avx2") ? never_decreasing_avx2(p, width, n) : offsets_never_decrease(p, width, n);
}

/* Offsets at buffer i: length+1 entries, within [0, limit], monotonic. */
static xchg_status check_offsets(decoder *d, ipc_array *a, int64_t i, int width, int64_t limit,
                                 const char *limit_name) {
  xchg_status st = zero_offsets(d, a, i);
  if (st == XCHG_OK) st = need_size(d, a, i, a->length + 1, width, "offsets");
  if (st != XCHG_OK) return st;
  const uint8_t *p = ipc_array_data(a, i);
  int64_t first = ipc_load_int(p, width, 1, 0), last = ipc_load_int(p, width, 1, a->length);
  if (first < 0)
    return fail(d, i, XCHG_EFORMAT, "offset %lld at row 0 is negative", (long long)first);
  if (last < first || last > limit)
    return fail(d, i, XCHG_EFORMAT, "offset %lld at row %lld, the last, is outside [%lld, %lld] "
                "(the first offset, %s)", (long long)last, (long long)a->length, (long long)first,
                (long long)limit, limit_name);
  if (!full(d) || never_decreasing(p, width, a->length + 1)) return XCHG_OK;
  for (int64_t k = 0; k < a->length; k++)
    if (ipc_load_int(p, width, 1, k + 1) < ipc_load_int(p, width, 1, k))
      return fail(d, i, XCHG_EFORMAT, "offset %lld at row %lld is below the one before",
                  (long long)ipc_load_int(p, width, 1, k + 1), (long long)k + 1);
  return XCHG_OK;
}

static xchg_status check_list_views(decoder *d, const ipc_array *a, int width) {
  xchg_status st = need_size(d, a, 1, a->length, width, "offsets");
  if (st == XCHG_OK) st = need_size(d, a, 2, a->length, width, "sizes");
  if (st != XCHG_OK || !full(d)) return st;
  int64_t limit = a->children[0]->length;
  for (int64_t k = 0; k < a->length; k++) {
    int64_t off = ipc_load_int(ipc_array_data(a, 1), width, 1, k);
    int64_t size = ipc_load_int(ipc_array_data(a, 2), width, 1, k);
    /* size >= 0 and size <= limit - off also make off <= limit. */
    if (valid_at(a, k) && (off < 0 || size < 0 || size > limit - off))
      return fail(d, 1, XCHG_EFORMAT, "list view at row %lld (offset %lld, size %lld) exceeds "
                  "the %lld child values", (long long)k, (long long)off, (long long)size, (long long)limit);
  }
  return XCHG_OK;
}

static xchg_status check_views(decoder *d, const ipc_array *a) {
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
      return fail(d, 1, XCHG_EFORMAT, "view at row %lld (length %d, data buffer %d, offset %d) points "
                  "outside the %lld data buffers", (long long)k, len, buf, off, (long long)n_data);
  }
  return XCHG_OK;
}

static xchg_status check_union(decoder *d, const ipc_field *f, const ipc_array *a) {
  xchg_status st = need_size(d, a, 0, a->length, 1, "type ids");
  if (st == XCHG_OK && f->union_dense) st = need_size(d, a, 1, a->length, 4, "offsets");
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
      return fail(d, 0, XCHG_EFORMAT, "type id %d at row %lld is not one of the union's", id, (long long)k);
    if (!f->union_dense) continue;
    int64_t off = ipc_load_int(ipc_array_data(a, 1), 4, 1, k), child_len = a->children[child_of[id]]->length;
    if (off < 0 || off >= child_len)
      return fail(d, 1, XCHG_EFORMAT, "dense union offset %lld at row %lld is outside child %d's "
                  "%lld rows", (long long)off, (long long)k, child_of[id], (long long)child_len);
  }
  return XCHG_OK;
}

/* Failures in the run ends themselves name the run_ends child, buffer 1. */
static xchg_status check_run_ends(decoder *d, const ipc_field *f, const ipc_array *a) {
  const ipc_array *ends = a->children[0], *values = a->children[1];
  int width = f->children[0].width;
  if (a->null_count != 0)
    return fail(d, -1, XCHG_EFORMAT, "a run-end encoded array has null_count %lld", (long long)a->null_count);
  if (values->length < ends->length || ends->null_count != 0)
    return fail(d, -1, XCHG_EFORMAT, "%lld run ends (with %lld nulls) for %lld values",
                (long long)ends->length, (long long)ends->null_count, (long long)values->length);
  if (a->length == 0) return XCHG_OK;
  const uint8_t *p = ipc_array_data(ends, 1);
  if (ends->length == 0)
    return fail(d, -1, XCHG_EFORMAT, "no run ends for the array's %lld rows", (long long)a->length);
  d->field = &f->children[0];
  int64_t last = ipc_load_int(p, width, 1, ends->length - 1);
  if (last < a->length)
    return fail(d, 1, XCHG_EFORMAT, "run end %lld at run %lld, the last, stops before the array's "
                "%lld rows", (long long)last, (long long)ends->length - 1, (long long)a->length);
  for (int64_t k = 0, prev = 0; k < ends->length && full(d); k++) {
    int64_t end = ipc_load_int(p, width, 1, k);
    if (end <= prev)
      return fail(d, 1, XCHG_EFORMAT, "run end %lld at run %lld does not increase", (long long)end, (long long)k);
    prev = end;
  }
  d->field = f;
  return XCHG_OK;
}

static xchg_status check_indices(decoder *d, const ipc_field *f, const ipc_array *a) {
  xchg_status st = check_validity(d, a);
  if (st == XCHG_OK) st = need_size(d, a, 1, a->length, f->index_width, "indices");
  if (st != XCHG_OK || !full(d)) return st;
  int64_t dict_len = a->dictionary->length;
  const uint8_t *p = ipc_array_data(a, 1);
  for (int64_t k = 0; k < a->length; k++) {
    if (!valid_at(a, k)) continue;
    int64_t idx = ipc_load_int(p, f->index_width, f->index_signed, k);
    if (idx < 0 || idx >= dict_len)
      return fail(d, 1, XCHG_EFORMAT, "dictionary index %lld at row %lld is outside dictionary "
                  "%lld's %lld values", (long long)idx, (long long)k, (long long)f->dict_id, (long long)dict_len);
  }
  return XCHG_OK;
}

static xchg_status check_children_length(decoder *d, const ipc_array *a, int64_t need) {
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->length < need)
      return fail(d, -1, XCHG_EFORMAT, "child %lld has %lld rows, %lld needed", (long long)i,
                  (long long)a->children[i]->length, (long long)need);
  return XCHG_OK;
}

static xchg_status validate_field(decoder *d, const ipc_field *f, int as_value, ipc_array *a);

static xchg_status validate_children(decoder *d, const ipc_field *f, ipc_array *a) {
  for (int64_t i = 0, k = 0; i < f->n_children; i++) {
    if (f->children[i].skip) continue;
    xchg_status st = validate_field(d, &f->children[i], 0, a->children[k++]);
    if (st != XCHG_OK) return st;
  }
  d->field = f;
  return XCHG_OK;
}

static xchg_status validate_value(decoder *d, const ipc_field *f, ipc_array *a) {
  int ow = offset_width(f->type);
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
    case IPC_BINARY: case IPC_UTF8: case IPC_LARGE_BINARY: case IPC_LARGE_UTF8:
      return check_offsets(d, a, 1, ow, (int64_t)ipc_array_size(a, 2), "data bytes");
    case IPC_BINARY_VIEW: case IPC_UTF8_VIEW: return check_views(d, a);
    case IPC_LIST: case IPC_LARGE_LIST: case IPC_MAP:
      return check_offsets(d, a, 1, ow, a->children[0]->length, "child rows");
    case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW: return check_list_views(d, a, ow);
    case IPC_STRUCT: return check_children_length(d, a, a->length);
    case IPC_FIXED_SIZE_LIST:
      if (f->list_size > 0 && a->length > INT64_MAX / f->list_size)
        return fail(d, -1, XCHG_EFORMAT, "%lld lists of %d values overflow", (long long)a->length, f->list_size);
      return check_children_length(d, a, a->length * f->list_size);
    default: return need_size(d, a, 1, a->length, f->width, "values");
  }
}

static xchg_status validate_field(decoder *d, const ipc_field *f, int as_value, ipc_array *a) {
  d->field = f;
  if (f->dict_encoded && !as_value) return check_indices(d, f, a);
  return validate_value(d, f, a);
}

xchg_status ipc_decode_validate(const ipc_decode_ctx *ctx, const ipc_field *columns,
                                int64_t n_columns, int dictionary_values, ipc_array *root,
                                xchg_error *err) {
  decoder d = {.ctx = ctx, .err = err};
  for (int64_t i = 0, k = 0; i < n_columns; i++) {
    if (columns[i].skip && !dictionary_values) continue;
    xchg_status st = validate_field(&d, &columns[i], dictionary_values, root->children[k++]);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

xchg_status ipc_decode_batch(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                             const ipc_field *columns, int64_t n_columns, int dictionary_values,
                             ipc_array **out, xchg_error *err) {
  ipc_jobs jobs = {0};
  xchg_status st = ipc_decode_plan(ctx, batch, body, columns, n_columns, dictionary_values, &jobs, out, err);
  if (st != XCHG_OK) {
    ipc_jobs_free(&jobs);
    return st;
  }
  st = ipc_jobs_run(&jobs, NULL, 0, NULL, err);
  if (st == XCHG_OK) st = ipc_decode_validate(ctx, columns, n_columns, dictionary_values, *out, err);
  if (st != XCHG_OK) {
    ipc_array_unref(*out);
    *out = NULL;
  }
  return st;
}
