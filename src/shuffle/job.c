/* job.c — see job.h. */
#include "shuffle/job.h"

#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "xchg/stream.h"

xchg_status shuffle_block_error(int64_t index, int64_t source, int64_t offset, xchg_status st,
                                xchg_error *err) {
  if (st != XCHG_OK)
    xchg_error_prefix(err, "block %lld (source %lld, byte %lld): ", (long long)index,
                      (long long)source, (long long)offset);
  return st;
}

xchg_status job_new_placement(job *j, placement **out, xchg_error *err) {
  if (j->n_items == j->cap_items) {
    int64_t cap = j->cap_items ? 2 * j->cap_items : 64;
    placement *items = realloc(j->items, (size_t)cap * sizeof *items);
    if (!items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    j->items = items;
    j->cap_items = cap;
  }
  *out = &j->items[j->n_items++];
  return XCHG_OK;
}

/* Takes the dictionaries in use for the job: the planner may replace
 * them while it runs. */
xchg_status job_keep_dictionaries(job *j, const ipc_dictionaries *d, xchg_error *err) {
  j->dicts.count = 0;
  if (d->count == 0) return XCHG_OK;
  j->dicts.items = malloc((size_t)d->count * sizeof *j->dicts.items);
  if (!j->dicts.items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t i = 0; i < d->count; i++) {
    j->dicts.items[i] = d->items[i];
    ipc_array_ref(j->dicts.items[i].values);
  }
  j->dicts.count = d->count;
  return XCHG_OK;
}

static void forget_refs(job *j) {
  for (int64_t i = 0; i < j->n_refs; i++) {
    const block_ref *ref = &j->refs[i], *prev = i > 0 ? ref - 1 : NULL;
    if (!prev || prev->chunk != ref->chunk) xchg_buf_unref(ref->chunk);
    if (!prev || prev->arena != ref->arena) xchg_buf_unref(ref->arena);
  }
  j->n_refs = 0;
}

/* Empties a job for its slot's next use (its coalescer and arrays kept). */
void job_clear(job *j, xchg_pool *pool) {
  if (j->started && !j->finished) {
    job_await_loop(j);
    pool_loop_cancel(pool, &j->loop);
  }
  forget_refs(j);
  for (int64_t i = j->taken; i < j->n_out; i++) ipc_array_unref(j->out[i]);
  j->n_out = j->taken = 0;
  ipc_dictionaries_free(&j->dicts);
  j->n_items = 0;
  j->closed = j->started = j->finished = j->relay = 0;
}

static xchg_status push_out(job *j, ipc_array *a, xchg_error *err) {
  if (j->n_out == j->cap_out) {
    int64_t cap = j->cap_out ? 2 * j->cap_out : 2;
    ipc_array **out = realloc(j->out, (size_t)cap * sizeof *out);
    if (!out) {
      ipc_array_unref(a);
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    }
    j->out = out;
    j->cap_out = cap;
  }
  j->out[j->n_out++] = a;
  return XCHG_OK;
}

/* Reads block `ref` alone with an IPC reader: its error, if it has one. */
static xchg_status read_alone(const job *j, const block_ref *ref, xchg_error *err) {
  xchg_source *src;
  const uint8_t *data = xchg_buf_data(ref->chunk);
  size_t size = xchg_buf_size(ref->chunk) - ref->at;
  if (ref->comet && size >= 8 && fb_load_u64(data + ref->at) < size - 8)
    size = (size_t)fb_load_u64(data + ref->at) + 8;
  xchg_status st = xchg_source_from_memory(data + ref->at, size, NULL, NULL, &src, err);
  xchg_istream *s = NULL;
  if (st == XCHG_OK && ref->comet &&
      (st = xchg_istream_open(src, XCHG_STREAM_COMET, NULL, &s, err)) == XCHG_OK)
    st = xchg_source_from_istream(s, &src, err);
  xchg_ipc_read_options opts = j->opts->read;
  opts.pool = NULL;
  xchg_ipc_reader *reader = NULL;
  if (st == XCHG_OK) st = xchg_ipc_reader_open(src, &opts, &reader, err);
  if (st == XCHG_OK && j->opts->columns)
    st = xchg_ipc_reader_select_indices(reader, j->opts->columns, j->opts->n_columns, err);
  for (struct ArrowArray a = {0}; st == XCHG_OK;) {
    st = xchg_ipc_reader_next(reader, &a, err);
    if (!a.release) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(reader);
  return shuffle_block_error(ref->index, ref->source, ref->offset, st, err);
}

/* A coalesced batch failed its validation: which block has the fault? */
static xchg_status name_block(const job *j, xchg_status st, xchg_error *err) {
  xchg_error alone;
  for (int64_t i = 0; i < j->n_refs; i++) {
    xchg_status found = read_alone(j, &j->refs[i], &alone);
    if (found == XCHG_OK) continue;
    if (err) *err = alone;
    return found;
  }
  if (j->n_refs > 0)
    xchg_error_prefix(err, "the batch of blocks %lld to %lld: ", (long long)j->refs[0].index,
                      (long long)j->refs[j->n_refs - 1].index);
  return st;
}

static xchg_status finish_batch(job *j, xchg_error *err) {
  ipc_array *a;
  j->decoded_bytes += coalescer_bytes(j->co);
  xchg_status st = coalescer_finish(j->co, ipc_dictionaries_lookup, &j->dicts, &a, err);
  if (st != XCHG_OK) return name_block(j, st, err);
  return push_out(j, a, err);
}

/* An error of record batch p, named as the planner names its own. */
static xchg_status placement_error(const job *j, const placement *p, xchg_status st,
                                   xchg_error *err) {
  const block_ref *ref = &j->refs[p->ref];
  xchg_error_prefix(err, "message %lld at byte %zu: ", (long long)p->message, p->pos);
  return shuffle_block_error(ref->index, ref->source, ref->offset, st, err);
}

/* Appends the job's next record batch; when the output's offsets cannot
 * take it, the batch so far goes out first. */
xchg_status job_place_next(job *j, xchg_error *err) {
  const placement *p = &j->items[j->placed];
  int fits;
  xchg_status st = coalescer_append(j->co, &p->w, &fits, err);
  if (st == XCHG_OK && !fits && (st = finish_batch(j, err)) == XCHG_OK)
    st = coalescer_append(j->co, &p->w, &fits, err);
  if (st == XCHG_OK) j->placed++;
  return st;
}

/* A pass-through job: its one record batch decoded alone, its arrays
 * pointing into the chunk. */
static xchg_status pass_batch(job *j, xchg_error *err) {
  const ipc_message_view *m = &j->pass_message;
  const block_ref *ref = &j->refs[0];
  const uint8_t *body = m->metadata + m->metadata_size; /* the body follows the metadata */
  ipc_body in = {xchg_buf_slice(ref->chunk, (size_t)(body - xchg_buf_data(ref->chunk)),
                                (size_t)m->body_length),
                 NULL, 0, m->body_length, NULL};
  if (!in.mem) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  /* placement_error names the message and its byte */
  ipc_decode_ctx ctx = {&j->opts->read,      0,    m->version,
                        j->items[0].message, -1,   ipc_dictionaries_lookup,
                        (void *)&j->dicts,   NULL, NULL};
  const ipc_field *root = &j->schema->root;
  ipc_array *a = NULL;
  xchg_status st =
      ipc_decode_batch(&ctx, &m->header, &in, root->children, root->n_children, 0, &a, err);
  xchg_buf_unref(in.mem);
  if (st != XCHG_OK) return placement_error(j, &j->items[0], st, err);
  j->decoded_bytes += m->body_length;
  return push_out(j, a, err);
}

xchg_status job_place_rest(job *j, xchg_error *err) {
  xchg_status st = XCHG_OK;
  while (st == XCHG_OK && j->placed < j->n_items)
    if ((st = job_place_next(j, err)) != XCHG_OK)
      st = placement_error(j, &j->items[j->placed], st, err);
  return st;
}

/* The task of a job: its record batches placed, the batch finished. */
void job_run(void *ctx, int64_t task) {
  (void)task;
  job *j = ctx;
  int64_t t0 = monotonic_ns();
  xchg_status st = XCHG_OK;
  if (j->pass) {
    st = pass_batch(j, &j->error);
  } else {
    st = job_place_rest(j, &j->error);
    if (st == XCHG_OK && coalescer_rows(j->co) > 0) st = finish_batch(j, &j->error);
  }
  j->status = st;
  j->ns += monotonic_ns() - t0;
}
