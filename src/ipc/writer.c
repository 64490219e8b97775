/* writer.c — the IPC stream and file writers: framing, messages,
 * dictionaries, coalescing and the file footer.  The body of a batch (its
 * layout, byte swapping and compression) is built in writer_body.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/args.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/writer_internal.h"

#define STAGING_SIZE (64 * 1024)

static const uint8_t FILE_HEAD[IPC_FILE_HEAD] = {'A', 'R', 'R', 'O', 'W', '1', 0, 0};

typedef struct file_block {
  int64_t offset;
  int32_t metadata_length;
  int64_t body_length;
} file_block;

typedef struct block_list {
  file_block *items;
  int64_t count, cap;
} block_list;

/* The last dictionary written for an id (an owned copy), to tell an
 * unchanged dictionary from a delta or a replacement. */
typedef struct written_dict {
  int64_t id;
  ipc_array *values;
} written_dict;

/* A dictionary a batch uses. */
typedef struct used_dict {
  int64_t id;
  const ipc_field *field;
  ipc_array *values; /* borrowed from the batch */
} used_dict;

typedef struct used_dicts {
  used_dict *items;
  int64_t count, cap;
} used_dicts;

struct xchg_ipc_writer {
  xchg_ipc_write_options opts;
  ipc_schema schema;
  xchg_write_fn write_fn;
  void *write_ctx;
  int fd;
  /* memory output */
  int to_memory;
  uint8_t *mem;
  size_t mem_len, mem_cap;
  /* small writes are gathered here before reaching write_fn */
  uint8_t *staging;
  size_t staging_len;
  int64_t position;
  int finished;
  xchg_status failed; /* sticky: an output error leaves the stream unusable */
  char *message_metadata;
  written_dict *dicts;
  int64_t n_dicts;
  block_list dict_blocks, batch_blocks;
  int64_t batches, dictionaries;
  /* coalescing */
  ipc_array **pending;
  int64_t n_pending, cap_pending, pending_rows, pending_bytes;
};

void xchg_ipc_write_options_init(xchg_ipc_write_options *opts) {
  if (!opts) return; /* nothing to fill */
  memset(opts, 0, sizeof *opts);
  opts->format = XCHG_IPC_STREAM;
  opts->codec = XCHG_BLOCK_NONE;
  opts->alignment = 8;
  opts->parallel_min_bytes = 64 * 1024;
}

/* ---- output ----------------------------------------------------------------- */

/* Memory output grows with realloc, which moves large blocks by remapping
 * pages rather than copying them. */
static xchg_status mem_append(xchg_ipc_writer *w, const void *p, size_t n, xchg_error *err) {
  if (w->mem_len + n > w->mem_cap) {
    size_t want = w->mem_cap ? w->mem_cap : 64 * 1024;
    while (want < w->mem_len + n) want *= 2;
    uint8_t *grown = realloc(w->mem, want);
    if (!grown)
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory growing the output to %zu bytes", want);
    w->mem = grown;
    w->mem_cap = want;
  }
  if (n) memcpy(w->mem + w->mem_len, p, n);
  w->mem_len += n;
  return XCHG_OK;
}

static xchg_status flush_staging(xchg_ipc_writer *w, xchg_error *err) {
  if (w->staging_len == 0) return XCHG_OK;
  xchg_status st = w->write_fn(w->write_ctx, w->staging, w->staging_len, err);
  w->staging_len = 0;
  if (st != XCHG_OK) w->failed = st; /* bytes were lost: the output is unusable */
  return st;
}

static xchg_status out_write(xchg_ipc_writer *w, const void *p, size_t n, xchg_error *err) {
  if (w->failed != XCHG_OK)
    return xchg_errorf(err, w->failed, "the writer failed earlier and cannot continue");
  xchg_status st = XCHG_OK;
  if (w->to_memory) {
    st = mem_append(w, p, n, err);
  } else if (n >= STAGING_SIZE / 2) {
    st = flush_staging(w, err);
    if (st == XCHG_OK) st = w->write_fn(w->write_ctx, p, n, err);
  } else {
    if (w->staging_len + n > STAGING_SIZE) st = flush_staging(w, err);
    if (st == XCHG_OK) {
      memcpy(w->staging + w->staging_len, p, n);
      w->staging_len += n;
    }
  }
  if (st != XCHG_OK) {
    w->failed = st;
    xchg_error_prefix(err, "writing at byte %lld: ", (long long)w->position);
    return st;
  }
  w->position += (int64_t)n;
  return XCHG_OK;
}

static xchg_status out_zeros(xchg_ipc_writer *w, size_t n, xchg_error *err) {
  static const uint8_t zeros[64];
  xchg_status st = XCHG_OK;
  while (n > 0 && st == XCHG_OK) {
    size_t k = n < sizeof zeros ? n : sizeof zeros;
    st = out_write(w, zeros, k, err);
    n -= k;
  }
  return st;
}

static xchg_status fd_write(void *ctx, const void *data, size_t n, xchg_error *err) {
  int fd = *(const int *)ctx;
  const uint8_t *p = data;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return xchg_errorf(err, XCHG_EIO, "write to fd %d failed: %s", fd, strerror(errno));
    p += k;
    n -= (size_t)k;
  }
  return XCHG_OK;
}

/* ---- messages ----------------------------------------------------------------- */

/* Writes a message: framing, the Message flatbuffer (header already added
 * to b as header_ref), padding, then the body pieces.  Fills *block. */
static xchg_status write_message(xchg_ipc_writer *w, fbb *b, int header_type, fb_ref header,
                                 const char *metadata, const wr_body_piece *pieces,
                                 int64_t n_pieces, int64_t body_length, file_block *block,
                                 xchg_error *err) {
  fb_ref meta = wr_metadata_build(b, metadata);
  fbb_table_start(b);
  fbb_add_scalar(b, MSG_VERSION, 2, IPC_METADATA_V5);
  fbb_add_scalar(b, MSG_HEADER_TYPE, 1, (uint64_t)header_type);
  fbb_add_ref(b, MSG_HEADER, header);
  fbb_add_scalar(b, MSG_BODY_LENGTH, 8, (uint64_t)body_length);
  if (meta) fbb_add_ref(b, MSG_METADATA, meta);
  fb_ref msg = fbb_table_end(b);
  size_t size;
  const uint8_t *flat = fbb_finish(b, msg, &size);
  if (!flat) return xchg_errorf(err, XCHG_ENOMEM, "out of memory building message metadata");
  int64_t align = w->opts.alignment;
  int64_t padded = wr_align_up(8 + (int64_t)size, align) - 8;
  if (padded > INT32_MAX)
    return xchg_errorf(err, XCHG_ELIMIT, "message metadata of %zu bytes", size);
  uint8_t prefix[8];
  wr_put_le(prefix, IPC_CONTINUATION, 4);
  wr_put_le(prefix + 4, (uint64_t)padded, 4);
  block->offset = w->position;
  block->metadata_length = (int32_t)(8 + padded);
  block->body_length = body_length;
  xchg_status st = out_write(w, prefix, 8, err);
  if (st == XCHG_OK) st = out_write(w, flat, size, err);
  if (st == XCHG_OK) st = out_zeros(w, (size_t)(padded - (int64_t)size), err);
  for (int64_t i = 0; i < n_pieces && st == XCHG_OK; i++) {
    int64_t len = pieces[i].size + (pieces[i].prefix ? 8 : 0);
    if (len == 0) continue;
    if (pieces[i].prefix) st = out_write(w, pieces[i].prefix, 8, err);
    if (st == XCHG_OK && pieces[i].size)
      st = out_write(w, pieces[i].data, (size_t)pieces[i].size, err);
    if (st == XCHG_OK) st = out_zeros(w, (size_t)(wr_align_up(len, align) - len), err);
  }
  return st;
}

static xchg_status add_block(block_list *list, const file_block *block, xchg_error *err) {
  if (list->count == list->cap) {
    int64_t cap = list->cap ? 2 * list->cap : 16;
    file_block *items = realloc(list->items, (size_t)cap * sizeof *items);
    if (!items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    list->items = items;
    list->cap = cap;
  }
  list->items[list->count++] = *block;
  return XCHG_OK;
}

/* Writes columns (fields[0..n) of the normalised struct `root`) as a record
 * batch, or as the dictionary batch `dict_id` when dict_id >= 0. */
static xchg_status write_batch_message(xchg_ipc_writer *w, const ipc_field *fields, int64_t n,
                                       int as_value, const ipc_array *const *columns,
                                       int64_t length, int64_t dict_id, int is_delta,
                                       xchg_error *err) {
  wr_batch_layout l = {0};
  for (int64_t i = 0; i < n; i++) wr_lay_out(&l, &fields[i], as_value, columns[i]);
  if (l.oom) {
    wr_layout_free(&l);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory laying out a batch");
  }
  xchg_status st = wr_prepare_buffers(&w->opts, &l, err);
  wr_body_piece *pieces = st == XCHG_OK ? calloc((size_t)l.n_buffers + 1, sizeof *pieces) : NULL;
  if (st == XCHG_OK && !pieces) st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st == XCHG_OK) {
    fbb b;
    fbb_init(&b);
    int64_t body_length = 0;
    fb_ref header = wr_record_batch_build(&w->opts, &b, length, &l, pieces, &body_length);
    int type = HEADER_RECORD_BATCH;
    if (dict_id >= 0) {
      fbb_table_start(&b);
      fbb_add_scalar(&b, DICTBATCH_ID, 8, (uint64_t)dict_id);
      fbb_add_ref(&b, DICTBATCH_DATA, header);
      if (is_delta) fbb_add_scalar(&b, DICTBATCH_DELTA, 1, 1);
      header = fbb_table_end(&b);
      type = HEADER_DICTIONARY;
    }
    file_block block;
    st = write_message(w, &b, type, header, dict_id >= 0 ? NULL : w->message_metadata, pieces,
                       l.n_buffers, body_length, &block, err);
    fbb_free(&b);
    if (st == XCHG_OK)
      st = add_block(dict_id >= 0 ? &w->dict_blocks : &w->batch_blocks, &block, err);
    if (st == XCHG_OK) *(dict_id >= 0 ? &w->dictionaries : &w->batches) += 1;
  }
  free(pieces);
  wr_layout_free(&l);
  return st;
}

/* ---- dictionaries --------------------------------------------------------- */

static xchg_status use_dict(used_dicts *u, const ipc_field *f, ipc_array *values, xchg_error *err) {
  for (int64_t i = 0; i < u->count; i++) {
    if (u->items[i].id != f->dict_id) continue;
    if (u->items[i].values->length != values->length ||
        !wr_prefix_equal(f, 1, u->items[i].values, values, values->length))
      return xchg_errorf(err, XCHG_EINVAL,
                         "field '%s' shares dictionary id %lld with field '%s' "
                         "but its dictionary differs",
                         f->path, (long long)f->dict_id, u->items[i].field->path);
    return XCHG_OK;
  }
  if (u->count == u->cap) {
    int64_t cap = u->cap ? 2 * u->cap : 8;
    used_dict *items = realloc(u->items, (size_t)cap * sizeof *items);
    if (!items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    u->items = items;
    u->cap = cap;
  }
  u->items[u->count++] = (used_dict){f->dict_id, f, values};
  return XCHG_OK;
}

/* The dictionaries used by a normalised array, inner ones first. */
static xchg_status collect_dicts(const ipc_field *f, int as_value, ipc_array *a, used_dicts *u,
                                 xchg_error *err) {
  if (f->dict_encoded && !as_value) {
    xchg_status st = collect_dicts(f, 1, a->dictionary, u, err);
    return st == XCHG_OK ? use_dict(u, f, a->dictionary, err) : st;
  }
  for (int64_t i = 0; i < f->n_children; i++) {
    xchg_status st = collect_dicts(&f->children[i], 0, a->children[i], u, err);
    if (st != XCHG_OK) return st;
  }
  return XCHG_OK;
}

static xchg_status collect_batch_dicts(const xchg_ipc_writer *w, ipc_array *root, used_dicts *u,
                                       xchg_error *err) {
  return collect_dicts(&w->schema.root, 0, root, u, err);
}

/* Rows [off, off+len) of a normalised array, normalised again (a copy
 * when copy is set). */
static xchg_status renormalize(const ipc_field *f, int as_value, ipc_array *a, int64_t off,
                               int64_t len, int copy, ipc_array **out, xchg_error *err) {
  struct ArrowArray tmp;
  xchg_status st = ipc_array_export(a, &tmp, err);
  if (st != XCHG_OK) return st;
  st = wr_normalize(f, as_value, &tmp, off, len, copy, out, err);
  tmp.release(&tmp);
  return st;
}

static written_dict *find_written(xchg_ipc_writer *w, int64_t id) {
  for (int64_t i = 0; i < w->n_dicts; i++)
    if (w->dicts[i].id == id) return &w->dicts[i];
  return NULL;
}

/* How a dictionary compares with the one written before for its id.  Equal
 * values need nothing written even when a dictionary nested in them was
 * replaced since: a reader keeps the nested values the old ones were
 * decoded with.  A delta, though, is resolved in the newer nested
 * dictionaries, which must then extend the older ones. */
typedef enum dict_change { DICT_SAME, DICT_NEW, DICT_DELTA, DICT_REPLACE } dict_change;

static dict_change classify(const written_dict *old, const ipc_field *f, const ipc_array *values) {
  if (!old) return DICT_NEW;
  int64_t n = old->values->length;
  if (values->length < n || !wr_prefix_equal(f, 1, old->values, values, n)) return DICT_REPLACE;
  if (values->length == n) return DICT_SAME;
  return wr_nested_dictionaries_extend(f, 1, old->values, values) ? DICT_DELTA : DICT_REPLACE;
}

static xchg_status remember_dict(xchg_ipc_writer *w, written_dict *old, const used_dict *u,
                                 xchg_error *err) {
  ipc_array *copy;
  xchg_status st = renormalize(u->field, 1, u->values, 0, u->values->length, 1, &copy, err);
  if (st != XCHG_OK) return st;
  if (!old) {
    written_dict *items = realloc(w->dicts, (size_t)(w->n_dicts + 1) * sizeof *items);
    if (!items) {
      ipc_array_unref(copy);
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    }
    w->dicts = items;
    old = &w->dicts[w->n_dicts++];
    old->id = u->id;
    old->values = NULL;
  }
  ipc_array_unref(old->values);
  old->values = copy;
  return XCHG_OK;
}

static xchg_status write_dict(xchg_ipc_writer *w, const used_dict *u, xchg_error *err) {
  written_dict *old = find_written(w, u->id);
  dict_change change = classify(old, u->field, u->values);
  if (change == DICT_SAME) return XCHG_OK;
  xchg_status st;
  if (change == DICT_DELTA) {
    ipc_array *tail;
    int64_t from = old->values->length;
    st = renormalize(u->field, 1, u->values, from, u->values->length - from, 0, &tail, err);
    if (st != XCHG_OK) return st;
    const ipc_array *col = tail;
    st = write_batch_message(w, u->field, 1, 1, &col, tail->length, u->id, 1, err);
    ipc_array_unref(tail);
  } else {
    if (change == DICT_REPLACE && w->opts.format == XCHG_IPC_FILE) {
      /* A prefix of the dictionary written: the batch's indices are below
       * its length and mean the same values in the written one, which
       * stays (the file format cannot replace it). */
      if (u->values->length < old->values->length &&
          wr_prefix_equal(u->field, 1, old->values, u->values, u->values->length))
        return XCHG_OK;
      return xchg_errorf(err, XCHG_EINVAL,
                         "field '%s': the file format cannot replace dictionary "
                         "%lld (a batch has a dictionary that neither extends the one written nor "
                         "is a part of it)",
                         u->field->path, (long long)u->id);
    }
    const ipc_array *col = u->values;
    st = write_batch_message(w, u->field, 1, 1, &col, u->values->length, u->id, 0, err);
  }
  return st == XCHG_OK ? remember_dict(w, old, u, err) : st;
}

/* ---- batches --------------------------------------------------------------- */

static xchg_status write_normalized(xchg_ipc_writer *w, ipc_array *root, xchg_error *err) {
  used_dicts u = {0};
  xchg_status st = collect_batch_dicts(w, root, &u, err);
  for (int64_t i = 0; i < u.count && st == XCHG_OK; i++) st = write_dict(w, &u.items[i], err);
  free(u.items);
  if (st != XCHG_OK) return st;
  return write_batch_message(w, w->schema.root.children, w->schema.root.n_children, 0,
                             (const ipc_array *const *)root->children, root->length, -1, 0, err);
}

static xchg_status check_writable(const xchg_ipc_writer *w, const char *who, xchg_error *err) {
  if (!w) return base_null_argument(who, "the writer", err);
  if (w->finished) return xchg_errorf(err, XCHG_EINVAL, "the writer is finished");
  if (w->failed != XCHG_OK) return xchg_errorf(err, w->failed, "the writer failed earlier");
  return XCHG_OK;
}

static xchg_status normalize_batch(xchg_ipc_writer *w, const struct ArrowArray *batch, int copy,
                                   ipc_array **out, xchg_error *err) {
  *out = NULL;
  if (!batch || !batch->release)
    return xchg_errorf(err, XCHG_EINVAL, "the batch is NULL or released");
  if (batch->n_buffers > 0 && batch->buffers && batch->buffers[0] && batch->null_count != 0)
    return xchg_errorf(err, XCHG_EINVAL, "a record batch cannot have nulls at the top level");
  return wr_normalize(&w->schema.root, 0, batch, batch->offset, batch->length, copy, out, err);
}

static void drop_pending(xchg_ipc_writer *w) {
  for (int64_t i = 0; i < w->n_pending; i++) ipc_array_unref(w->pending[i]);
  w->n_pending = w->pending_rows = w->pending_bytes = 0;
}

/* Merges the pending batches (in order) into one and writes it; at_end:
 * the last flush, from finish. */
static xchg_status flush_pending(xchg_ipc_writer *w, int at_end, xchg_error *err) {
  /* Empty batches hold nothing: written, they would put a batch of 0 rows
   * before or after the rows (one whose dictionary the next batch's cannot
   * extend flushes them early).  Only at the end of an output with no
   * batch are they written, so that an input of no rows keeps its one
   * empty batch. */
  if (w->pending_rows == 0 && (w->batches > 0 || !at_end)) {
    drop_pending(w);
    return XCHG_OK;
  }
  xchg_status st = XCHG_OK;
  int64_t n = w->n_pending;
  /* Pairwise rounds: each byte is copied O(log n) times, not O(n). */
  while (n > 1 && st == XCHG_OK) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i += 2) {
      if (i + 1 == n) {
        w->pending[k++] = w->pending[i];
        continue;
      }
      ipc_array *merged = NULL;
      if (st == XCHG_OK)
        st = ipc_array_concat(&w->schema.root, 0, w->pending[i], w->pending[i + 1], &merged, err);
      ipc_array_unref(w->pending[i]);
      ipc_array_unref(w->pending[i + 1]);
      w->pending[k++] = merged;
    }
    n = k;
  }
  if (st == XCHG_OK && n == 1) st = write_normalized(w, w->pending[0], err);
  w->n_pending = n;
  drop_pending(w);
  return st;
}

/* Non-zero when every dictionary of `next` equals or extends the one of
 * the same id in `prev`. */
static int dictionaries_compatible(xchg_ipc_writer *w, ipc_array *prev, ipc_array *next,
                                   xchg_error *err) {
  used_dicts a = {0}, b = {0};
  int ok = collect_batch_dicts(w, prev, &a, err) == XCHG_OK &&
           collect_batch_dicts(w, next, &b, err) == XCHG_OK;
  for (int64_t i = 0; ok && i < b.count; i++) {
    for (int64_t j = 0; j < a.count; j++) {
      if (a.items[j].id != b.items[i].id) continue;
      written_dict old = {a.items[j].id, a.items[j].values};
      dict_change c = classify(&old, b.items[i].field, b.items[i].values);
      ok = c == DICT_SAME || c == DICT_DELTA;
    }
  }
  free(a.items);
  free(b.items);
  return ok;
}

static xchg_status coalesce(xchg_ipc_writer *w, const struct ArrowArray *batch, xchg_error *err) {
  ipc_array *a;
  xchg_status st = normalize_batch(w, batch, 1, &a, err);
  if (st != XCHG_OK) return st;
  if (w->n_pending > 0 && !dictionaries_compatible(w, w->pending[w->n_pending - 1], a, err))
    st = flush_pending(w, 0, err);
  if (st == XCHG_OK && w->n_pending == w->cap_pending) {
    int64_t cap = w->cap_pending ? 2 * w->cap_pending : 16;
    ipc_array **items = realloc(w->pending, (size_t)cap * sizeof *items);
    if (!items)
      st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    else {
      w->pending = items;
      w->cap_pending = cap;
    }
  }
  if (st != XCHG_OK) {
    ipc_array_unref(a);
    return st;
  }
  w->pending[w->n_pending++] = a;
  w->pending_rows += a->length;
  w->pending_bytes += wr_array_bytes(a);
  /* empty batches wait for rows (or the end), whatever their bytes */
  if (w->pending_rows > 0 &&
      ((w->opts.coalesce_rows > 0 && w->pending_rows >= w->opts.coalesce_rows) ||
       (w->opts.coalesce_bytes > 0 && w->pending_bytes >= w->opts.coalesce_bytes)))
    st = flush_pending(w, 0, err);
  return st;
}

xchg_status xchg_ipc_writer_write(xchg_ipc_writer *w, const struct ArrowArray *batch,
                                  xchg_error *err) {
  xchg_status st = check_writable(w, "xchg_ipc_writer_write", err);
  if (st != XCHG_OK) return st;
  if (w->opts.coalesce_rows > 0 || w->opts.coalesce_bytes > 0) return coalesce(w, batch, err);
  ipc_array *root;
  st = normalize_batch(w, batch, 0, &root, err);
  if (st != XCHG_OK) return st;
  st = write_normalized(w, root, err);
  ipc_array_unref(root);
  return st;
}

xchg_status xchg_ipc_writer_write_stream(xchg_ipc_writer *w, struct ArrowArrayStream *stream,
                                         xchg_error *err) {
  if (!w || !stream)
    return base_null_argument("xchg_ipc_writer_write_stream", !w ? "the writer" : "stream", err);
  for (int64_t i = 0;; i++) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof batch);
    int rc = stream->get_next(stream, &batch);
    if (rc != 0) {
      const char *msg = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      return xchg_errorf(err, XCHG_EIO, "reading batch %lld of the input stream: %s", (long long)i,
                         msg ? msg : strerror(rc));
    }
    if (!batch.release) return XCHG_OK;
    xchg_status st = xchg_ipc_writer_write(w, &batch, err);
    batch.release(&batch);
    if (st != XCHG_OK) {
      xchg_error_prefix(err, "batch %lld: ", (long long)i);
      return st;
    }
  }
}

/* ---- opening and finishing --------------------------------------------------- */

static xchg_status write_schema_message(xchg_ipc_writer *w, xchg_error *err) {
  fbb b;
  fbb_init(&b);
  fb_ref schema = wr_schema_build(&b, &w->schema);
  file_block block;
  xchg_status st = write_message(w, &b, HEADER_SCHEMA, schema, NULL, NULL, 0, 0, &block, err);
  fbb_free(&b);
  return st;
}

static xchg_status open_writer(const struct ArrowSchema *schema, const xchg_ipc_write_options *opts,
                               xchg_ipc_writer *w, xchg_error *err) {
  if (opts)
    w->opts = *opts;
  else
    xchg_ipc_write_options_init(&w->opts);
  if (w->opts.alignment != 8 && w->opts.alignment != 64)
    return xchg_errorf(err, XCHG_EINVAL, "alignment %d: must be 8 or 64", w->opts.alignment);
  if (w->opts.codec != XCHG_BLOCK_NONE && w->opts.codec != XCHG_BLOCK_LZ4_FRAME &&
      w->opts.codec != XCHG_BLOCK_ZSTD)
    return xchg_errorf(err, XCHG_EINVAL, "unknown codec %d", (int)w->opts.codec);
  if (w->opts.format != XCHG_IPC_STREAM && w->opts.format != XCHG_IPC_FILE)
    return xchg_errorf(err, XCHG_EINVAL, "unknown format %d", (int)w->opts.format);
  int min_level, max_level;
  xchg_block_codec_levels(w->opts.codec, &min_level, &max_level);
  if (w->opts.codec != XCHG_BLOCK_NONE && (w->opts.level < min_level || w->opts.level > max_level))
    return xchg_errorf(err, XCHG_EINVAL, "level %d is out of %s's range, %d to %d", w->opts.level,
                       xchg_block_codec_name(w->opts.codec), min_level, max_level);
  if (!(w->opts.min_space_saving < 1.0)) /* NaN too */
    return xchg_errorf(err, XCHG_EINVAL, "min_space_saving %g: must be below 1",
                       w->opts.min_space_saving);
  const char *negative = w->opts.coalesce_rows < 0        ? "coalesce_rows"
                         : w->opts.coalesce_bytes < 0     ? "coalesce_bytes"
                         : w->opts.parallel_min_bytes < 0 ? "parallel_min_bytes"
                         : w->opts.n_dictionary_ids < 0   ? "n_dictionary_ids"
                                                          : NULL;
  if (negative) return xchg_errorf(err, XCHG_EINVAL, "%s is negative", negative);
  if (!w->opts.dictionary_ids && w->opts.n_dictionary_ids > 0)
    return xchg_errorf(err, XCHG_EINVAL, "dictionary_ids is NULL, n_dictionary_ids %lld",
                       (long long)w->opts.n_dictionary_ids);
  w->opts.dictionary_ids = NULL; /* used by import only; the caller's array need not outlive us */
  xchg_status st = ipc_schema_import(schema, opts ? opts->dictionary_ids : NULL,
                                     opts ? opts->n_dictionary_ids : 0, &w->schema, err);
  if (st != XCHG_OK) return st;
  w->schema.big_endian = w->opts.big_endian != 0;
  if (!w->to_memory && !(w->staging = malloc(STAGING_SIZE)))
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (w->opts.format == XCHG_IPC_FILE) st = out_write(w, FILE_HEAD, IPC_FILE_HEAD, err);
  if (st == XCHG_OK) st = write_schema_message(w, err);
  if (st == XCHG_OK && !w->to_memory) st = flush_staging(w, err);
  return st;
}

static xchg_status open_common(const struct ArrowSchema *schema, const xchg_ipc_write_options *opts,
                               xchg_write_fn fn, void *ctx, int to_memory, int fd,
                               xchg_ipc_writer **out, xchg_error *err) {
  if (!out) return base_null_argument("xchg_ipc_writer_open", "out", err);
  *out = NULL;
  xchg_ipc_writer *w = calloc(1, sizeof *w);
  if (!w) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  w->write_fn = fn;
  w->write_ctx = ctx;
  w->to_memory = to_memory;
  w->fd = fd;
  if (fn == fd_write) w->write_ctx = &w->fd;
  xchg_status st = open_writer(schema, opts, w, err);
  if (st != XCHG_OK) {
    xchg_ipc_writer_free(w);
    return st;
  }
  *out = w;
  return XCHG_OK;
}

xchg_status xchg_ipc_writer_open(const struct ArrowSchema *schema,
                                 const xchg_ipc_write_options *opts, xchg_write_fn write_fn,
                                 void *ctx, xchg_ipc_writer **out, xchg_error *err) {
  if (out) *out = NULL;
  if (!write_fn) return xchg_errorf(err, XCHG_EINVAL, "no write function");
  return open_common(schema, opts, write_fn, ctx, 0, -1, out, err);
}

xchg_status xchg_ipc_writer_open_fd(const struct ArrowSchema *schema,
                                    const xchg_ipc_write_options *opts, int fd,
                                    xchg_ipc_writer **out, xchg_error *err) {
  if (out) *out = NULL;
  if (fd < 0) return xchg_errorf(err, XCHG_EINVAL, "bad file descriptor %d", fd);
  return open_common(schema, opts, fd_write, NULL, 0, fd, out, err);
}

xchg_status xchg_ipc_writer_open_memory(const struct ArrowSchema *schema,
                                        const xchg_ipc_write_options *opts, xchg_ipc_writer **out,
                                        xchg_error *err) {
  return open_common(schema, opts, NULL, NULL, 1, -1, out, err);
}

xchg_status xchg_ipc_writer_set_message_metadata(xchg_ipc_writer *w, const char *metadata,
                                                 xchg_error *err) {
  if (!w) return base_null_argument("xchg_ipc_writer_set_message_metadata", "the writer", err);
  char *copy = NULL;
  if (metadata) {
    size_t n = ipc_metadata_size(metadata);
    if (!(copy = malloc(n))) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    memcpy(copy, metadata, n);
  }
  free(w->message_metadata);
  w->message_metadata = copy;
  return XCHG_OK;
}

static fb_ref build_blocks(fbb *b, const block_list *list) {
  uint8_t *bytes = malloc((size_t)(list->count ? list->count : 1) * 24);
  if (!bytes) {
    b->failed = 1;
    return 0;
  }
  for (int64_t i = 0; i < list->count; i++) {
    uint8_t *p = bytes + 24 * i;
    wr_put_le(p, (uint64_t)list->items[i].offset, 8);
    wr_put_le(p + 8, (uint64_t)(uint32_t)list->items[i].metadata_length, 4);
    wr_put_le(p + 12, 0, 4);
    wr_put_le(p + 16, (uint64_t)list->items[i].body_length, 8);
  }
  fb_ref v = fbb_vector_bytes(b, bytes, (size_t)list->count, 24, 8);
  free(bytes);
  return v;
}

static xchg_status write_footer(xchg_ipc_writer *w, xchg_error *err) {
  fbb b;
  fbb_init(&b);
  fb_ref schema = wr_schema_build(&b, &w->schema);
  fb_ref dicts = build_blocks(&b, &w->dict_blocks);
  fb_ref batches = build_blocks(&b, &w->batch_blocks);
  fbb_table_start(&b);
  fbb_add_scalar(&b, FOOTER_VERSION, 2, IPC_METADATA_V5);
  fbb_add_ref(&b, FOOTER_SCHEMA, schema);
  fbb_add_ref(&b, FOOTER_DICTIONARIES, dicts);
  fbb_add_ref(&b, FOOTER_BATCHES, batches);
  fb_ref footer = fbb_table_end(&b);
  size_t size;
  const uint8_t *flat = fbb_finish(&b, footer, &size);
  xchg_status st =
      flat ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory building the footer");
  uint8_t tail[10];
  wr_put_le(tail, (uint64_t)size, 4);
  memcpy(tail + 4, IPC_MAGIC, IPC_MAGIC_SIZE);
  if (st == XCHG_OK) st = out_write(w, flat, size, err);
  if (st == XCHG_OK) st = out_write(w, tail, 10, err);
  fbb_free(&b);
  return st;
}

xchg_status xchg_ipc_writer_finish(xchg_ipc_writer *w, xchg_error *err) {
  xchg_status st = check_writable(w, "xchg_ipc_writer_finish", err);
  if (st == XCHG_OK && w->n_pending > 0) st = flush_pending(w, 1, err);
  if (st != XCHG_OK) return st;
  static const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  st = out_write(w, eos, 8, err);
  if (st == XCHG_OK && w->opts.format == XCHG_IPC_FILE) st = write_footer(w, err);
  if (st == XCHG_OK && !w->to_memory) st = flush_staging(w, err);
  if (st == XCHG_OK) w->finished = 1;
  return st;
}

int64_t xchg_ipc_writer_bytes_written(const xchg_ipc_writer *w) { return w ? w->position : 0; }
int64_t xchg_ipc_writer_batches_written(const xchg_ipc_writer *w) { return w ? w->batches : 0; }
int64_t xchg_ipc_writer_dictionaries_written(const xchg_ipc_writer *w) {
  return w ? w->dictionaries : 0;
}

static void free_memory(void *ctx, const void *data, size_t size) {
  (void)ctx;
  (void)size;
  free((void *)data);
}

xchg_buf *xchg_ipc_writer_take_memory(xchg_ipc_writer *w) {
  if (!w || !w->to_memory) return NULL;
  /* Trim the slack: realloc shrinks in place. */
  uint8_t *data = w->mem_len ? realloc(w->mem, w->mem_len) : NULL;
  if (!data) data = w->mem_len ? w->mem : malloc(1);
  if (!data) return NULL;
  xchg_buf *out = xchg_buf_wrap(data, w->mem_len, free_memory, NULL);
  if (!out) {
    w->mem = data;
    w->mem_cap = w->mem_len ? w->mem_len : 1;
    return NULL;
  }
  if (!w->mem_len) free(w->mem);
  w->mem = NULL;
  w->mem_len = w->mem_cap = 0;
  return out;
}

void xchg_ipc_writer_free(xchg_ipc_writer *w) {
  if (!w) return;
  for (int64_t i = 0; i < w->n_pending; i++) ipc_array_unref(w->pending[i]);
  free(w->pending);
  for (int64_t i = 0; i < w->n_dicts; i++) ipc_array_unref(w->dicts[i].values);
  free(w->dicts);
  free(w->dict_blocks.items);
  free(w->batch_blocks.items);
  free(w->message_metadata);
  free(w->staging);
  free(w->mem);
  ipc_schema_free(&w->schema);
  free(w);
}

xchg_status xchg_ipc_encode_stream(struct ArrowArrayStream *stream,
                                   const xchg_ipc_write_options *opts, xchg_buf **out,
                                   xchg_error *err) {
  if (!stream || !out) {
    if (stream && stream->release) stream->release(stream); /* released, as on any failure */
    return base_null_argument("xchg_ipc_encode_stream", !stream ? "stream" : "out", err);
  }
  *out = NULL;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int rc = stream->get_schema(stream, &schema);
  xchg_status st = XCHG_OK;
  if (rc != 0) {
    const char *msg = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    st = xchg_errorf(err, XCHG_EIO, "reading the stream's schema: %s", msg ? msg : strerror(rc));
  }
  xchg_ipc_writer *w = NULL;
  if (st == XCHG_OK) st = xchg_ipc_writer_open_memory(&schema, opts, &w, err);
  if (schema.release) schema.release(&schema);
  if (st == XCHG_OK) st = xchg_ipc_writer_write_stream(w, stream, err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, err);
  if (st == XCHG_OK && !(*out = xchg_ipc_writer_take_memory(w)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_ipc_writer_free(w);
  stream->release(stream);
  return st;
}
