/* writer_body.c — the body of a record or dictionary batch: laying out a
 * normalised array's field nodes and buffers in IPC order, byte-swapping
 * and compressing the buffers, and the RecordBatch table that describes
 * them (see writer_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "ipc/format.h"
#include "ipc/swap.h"
#include "ipc/writer_internal.h"

struct wr_out_buffer {
  const ipc_buffer *src; /* absent or empty: written empty */
  swap_rule swap;
  /* filled by prepare_buffer */
  xchg_buf *owned; /* swapped copy or compressed bytes */
  const uint8_t *data;
  int64_t size;
  uint8_t prefix[8];
  int has_prefix;
  xchg_status status;
  xchg_error error;
};

static void *grow(void *items, int64_t *cap, int64_t need, size_t elem, int *oom) {
  if (need <= *cap) return items;
  int64_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  void *p = realloc(items, (size_t)n * elem);
  if (!p) {
    *oom = 1;
    return items;
  }
  *cap = n;
  return p;
}

static void add_node(wr_batch_layout *l, int64_t length, int64_t nulls) {
  l->nodes = grow(l->nodes, &l->cap_nodes, l->n_nodes + 1, 16, &l->oom);
  if (l->oom) return;
  wr_put_le(l->nodes + 16 * l->n_nodes, (uint64_t)length, 8);
  wr_put_le(l->nodes + 16 * l->n_nodes + 8, (uint64_t)nulls, 8);
  l->n_nodes++;
}

static void add_buffer(wr_batch_layout *l, const ipc_buffer *src, swap_rule swap) {
  l->buffers = grow(l->buffers, &l->cap_buffers, l->n_buffers + 1, sizeof(wr_out_buffer), &l->oom);
  if (l->oom) return;
  memset(&l->buffers[l->n_buffers], 0, sizeof(wr_out_buffer));
  l->buffers[l->n_buffers].src = src;
  l->buffers[l->n_buffers].swap = swap;
  l->n_buffers++;
}

static void add_variadic(wr_batch_layout *l, int64_t count) {
  l->variadic = grow(l->variadic, &l->cap_variadic, l->n_variadic + 1, 8, &l->oom);
  if (!l->oom) l->variadic[l->n_variadic++] = count;
}

void wr_layout_free(wr_batch_layout *l) {
  for (int64_t i = 0; i < l->n_buffers; i++) xchg_buf_unref(l->buffers[i].owned);
  free(l->nodes);
  free(l->buffers);
  free(l->variadic);
  memset(l, 0, sizeof *l);
}

/* Lays out field f of a (a normalised array) in IPC order. */
void wr_lay_out(wr_batch_layout *l, const ipc_field *f, int as_value, const ipc_array *a) {
  int wide = f->type == IPC_LARGE_BINARY || f->type == IPC_LARGE_UTF8 ||
             f->type == IPC_LARGE_LIST || f->type == IPC_LARGE_LIST_VIEW;
  int ow = wide ? 8 : 4;
  add_node(l, a->length, a->null_count);
  if (f->dict_encoded && !as_value) {
    add_buffer(l, &a->buffers[0], NO_SWAP);
    add_buffer(l, &a->buffers[1], INT_SWAP(f->index_width));
    return;
  }
  switch (f->type) {
    case IPC_NULL: return;
    case IPC_BOOL:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      add_buffer(l, &a->buffers[1], NO_SWAP);
      return;
    case IPC_BINARY:
    case IPC_UTF8:
    case IPC_LARGE_BINARY:
    case IPC_LARGE_UTF8:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      add_buffer(l, &a->buffers[1], INT_SWAP(ow));
      add_buffer(l, &a->buffers[2], NO_SWAP);
      return;
    case IPC_BINARY_VIEW:
    case IPC_UTF8_VIEW:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      add_buffer(l, &a->buffers[1], VIEW_SWAP);
      for (int64_t i = 2; i < a->n_buffers - 1; i++) add_buffer(l, &a->buffers[i], NO_SWAP);
      add_variadic(l, a->n_buffers - 3);
      return;
    case IPC_LIST:
    case IPC_LARGE_LIST:
    case IPC_MAP:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      add_buffer(l, &a->buffers[1], INT_SWAP(ow));
      break;
    case IPC_LIST_VIEW:
    case IPC_LARGE_LIST_VIEW:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      add_buffer(l, &a->buffers[1], INT_SWAP(ow));
      add_buffer(l, &a->buffers[2], INT_SWAP(ow));
      break;
    case IPC_FIXED_SIZE_LIST:
    case IPC_STRUCT: add_buffer(l, &a->buffers[0], NO_SWAP); break;
    case IPC_UNION:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      if (f->union_dense) add_buffer(l, &a->buffers[1], INT_SWAP(4));
      break;
    case IPC_RUN_END_ENCODED: break;
    default:
      add_buffer(l, &a->buffers[0], NO_SWAP);
      add_buffer(l, &a->buffers[1], ((swap_rule){f->swap, f->width}));
      return;
  }
  for (int64_t i = 0; i < f->n_children; i++) wr_lay_out(l, &f->children[i], 0, a->children[i]);
}

/* ---- byte swapping and compression (one buffer; may run on any thread) ------ */

static void prepare_buffer(const xchg_ipc_write_options *opts, wr_out_buffer *b) {
  b->data = b->src->data;
  b->size = (int64_t)b->src->size;
  if (b->size == 0) return; /* empty buffers are written empty */
  if (opts->big_endian && swap_needed(b->swap)) {
    if (!(b->owned = xchg_buf_alloc((size_t)b->size))) {
      b->status = xchg_errorf(&b->error, XCHG_ENOMEM, "out of memory byte-swapping a buffer");
      return;
    }
    memcpy(xchg_buf_mutable_data(b->owned), b->data, (size_t)b->size);
    swap_values(xchg_buf_mutable_data(b->owned), (size_t)b->size, b->swap, 0);
    b->data = xchg_buf_data(b->owned);
  }
  if (opts->codec == XCHG_BLOCK_NONE) return;
  b->has_prefix = 1;
  xchg_buf *packed;
  b->status =
      xchg_block_compress(opts->codec, opts->level, b->data, (size_t)b->size, &packed, &b->error);
  if (b->status != XCHG_OK) return;
  double limit = (double)b->size * (1.0 - opts->min_space_saving);
  if ((double)xchg_buf_size(packed) < limit) {
    wr_put_le(b->prefix, (uint64_t)b->size, 8);
    xchg_buf_unref(b->owned);
    b->owned = packed;
    b->data = xchg_buf_data(packed);
    b->size = (int64_t)xchg_buf_size(packed);
  } else {
    wr_put_le(b->prefix, UINT64_MAX, 8); /* -1: stored uncompressed */
    xchg_buf_unref(packed);
  }
}

typedef struct prepare_job {
  const xchg_ipc_write_options *opts;
  wr_out_buffer *buffers;
  int64_t *group_start; /* n_groups + 1 entries */
} prepare_job;

static void prepare_group(void *ctx, int64_t g) {
  prepare_job *job = ctx;
  for (int64_t i = job->group_start[g]; i < job->group_start[g + 1]; i++)
    prepare_buffer(job->opts, &job->buffers[i]);
}

/* Swaps and compresses every buffer, on the pool when there is one and the
 * work is worth it: consecutive buffers are grouped into tasks of at least
 * parallel_min_bytes. */
xchg_status wr_prepare_buffers(const xchg_ipc_write_options *opts, wr_batch_layout *l,
                               xchg_error *err) {
  int parallel = opts->pool && xchg_pool_threads(opts->pool) > 1 &&
                 (opts->codec != XCHG_BLOCK_NONE || opts->big_endian);
  int64_t *starts = NULL, n_groups = 0;
  if (parallel && (starts = malloc((size_t)(l->n_buffers + 1) * sizeof *starts)) != NULL) {
    int64_t acc = 0;
    starts[0] = 0;
    for (int64_t i = 0; i < l->n_buffers; i++) {
      acc += (int64_t)l->buffers[i].src->size;
      if (acc >= opts->parallel_min_bytes || i == l->n_buffers - 1) {
        starts[++n_groups] = i + 1;
        acc = 0;
      }
    }
  }
  if (starts && n_groups > 1) {
    prepare_job job = {opts, l->buffers, starts};
    xchg_pool_run(opts->pool, n_groups, prepare_group, &job);
  } else {
    for (int64_t i = 0; i < l->n_buffers; i++) prepare_buffer(opts, &l->buffers[i]);
  }
  free(starts);
  for (int64_t i = 0; i < l->n_buffers; i++)
    if (l->buffers[i].status != XCHG_OK)
      return xchg_errorf(err, l->buffers[i].status, "message buffer %lld: %s", (long long)i,
                         l->buffers[i].error.message);
  return XCHG_OK;
}

/* Adds a RecordBatch table describing l (buffers prepared) to b; returns
 * the body pieces and length. */
fb_ref wr_record_batch_build(const xchg_ipc_write_options *opts, fbb *b, int64_t length,
                             wr_batch_layout *l, wr_body_piece *pieces, int64_t *body_length) {
  uint8_t *specs = malloc((size_t)(l->n_buffers ? l->n_buffers : 1) * 16);
  if (!specs) {
    b->failed = 1;
    return 0;
  }
  int64_t offset = 0;
  for (int64_t i = 0; i < l->n_buffers; i++) {
    wr_out_buffer *ob = &l->buffers[i];
    int64_t len = ob->size + (ob->has_prefix && ob->size > 0 ? 8 : 0);
    pieces[i] =
        (wr_body_piece){ob->has_prefix && ob->size > 0 ? ob->prefix : NULL, ob->data, ob->size};
    wr_put_le(specs + 16 * i, (uint64_t)offset, 8);
    wr_put_le(specs + 16 * i + 8, (uint64_t)len, 8);
    offset += wr_align_up(len, opts->alignment);
  }
  *body_length = offset;
  fb_ref nodes = fbb_vector_bytes(b, l->nodes, (size_t)l->n_nodes, 16, 8);
  fb_ref buffers = fbb_vector_bytes(b, specs, (size_t)l->n_buffers, 16, 8);
  free(specs);
  fb_ref variadic = 0;
  if (l->n_variadic > 0) {
    uint8_t *counts = malloc((size_t)l->n_variadic * 8);
    if (!counts) {
      b->failed = 1;
      return 0;
    }
    for (int64_t i = 0; i < l->n_variadic; i++)
      wr_put_le(counts + 8 * i, (uint64_t)l->variadic[i], 8);
    variadic = fbb_vector_bytes(b, counts, (size_t)l->n_variadic, 8, 8);
    free(counts);
  }
  fb_ref compression = 0;
  if (opts->codec != XCHG_BLOCK_NONE) {
    fbb_table_start(b);
    fbb_add_scalar(b, 0, 1, opts->codec == XCHG_BLOCK_LZ4_FRAME ? 0 : 1);
    compression = fbb_table_end(b);
  }
  fbb_table_start(b);
  fbb_add_scalar(b, BATCH_LENGTH, 8, (uint64_t)length);
  fbb_add_ref(b, BATCH_NODES, nodes);
  fbb_add_ref(b, BATCH_BUFFERS, buffers);
  if (compression) fbb_add_ref(b, BATCH_COMPRESSION, compression);
  if (variadic) fbb_add_ref(b, BATCH_VARIADIC_COUNTS, variadic);
  return fbb_table_end(b);
}
