/* readahead.c — see readahead.h. */
#include "ipc/readahead.h"

#include <string.h>

/* A unit closes at task_bytes of work or at this many batches, so that the
 * pool gets work early even when batches are tiny. */
#define UNIT_BATCHES 8

void ipc_readahead_init(ipc_readahead *ra, const xchg_ipc_read_options *opts,
                        const ipc_field *root) {
  memset(ra, 0, sizeof *ra);
  ra->opts = opts;
  ra->root = root;
  ra->threads = xchg_pool_threads(opts->pool);
  ra->taken_message = ra->taken_offset = -1;
}

static ipc_unit *unit_at(ipc_readahead *ra, int64_t k) {
  return &ra->units[(ra->unit_head + k) % READAHEAD_UNITS];
}

static ipc_planned *batch_at(ipc_readahead *ra, int64_t ring_position) {
  return &ra->batches[ring_position % READAHEAD_BATCHES];
}

/* The last unit, while batches may still join it. */
static ipc_unit *open_unit(ipc_readahead *ra) {
  if (ra->unit_count == 0) return NULL;
  ipc_unit *u = unit_at(ra, ra->unit_count - 1);
  return u->started ? NULL : u;
}

int ipc_readahead_has_room(const ipc_readahead *ra) {
  if (ra->threads <= 1) return ra->batch_count == 0;
  /* Nothing held: room for one batch, whatever readahead_bytes says (at 0
   * or below, none would ever be planned, and the stream would end at
   * once, without an error). */
  if (ra->batch_count >= READAHEAD_BATCHES ||
      (ra->batch_count > 0 && ra->bytes >= ra->opts->readahead_bytes))
    return 0;
  if (ra->unit_count < READAHEAD_UNITS) return 1;
  return !ra->units[(ra->unit_head + READAHEAD_UNITS - 1) % READAHEAD_UNITS]
              .started; /* the last one */
}

int64_t ipc_readahead_count(const ipc_readahead *ra) { return ra->batch_count; }

/* ---- running a unit ------------------------------------------------------ */

/* On the thread that ran the unit's last task: the outcome of its jobs,
 * then the validation of its batches — of every batch handed out before
 * a failed job's message too, which take returns as any other. */
static void complete_unit(ipc_unit *u) {
  ipc_readahead *ra = u->owner;
  u->status = ipc_jobs_finish(&u->jobs, &u->failed_message, &u->error);
  for (int64_t k = 0; k < u->batches; k++) {
    ipc_planned *p = batch_at(ra, u->first + k);
    if (u->status != XCHG_OK && p->ctx.message_index >= u->failed_message) break;
    xchg_status st = ipc_decode_validate(&p->ctx, ra->root->children, ra->root->n_children, 0,
                                         p->array, &u->error);
    if (st == XCHG_OK) continue;
    u->status = st;
    u->failed_message = p->ctx.message_index;
    break;
  }
}

static void run_unit_task(void *ctx, int64_t task) {
  ipc_unit *u = ctx;
  ipc_jobs_run_task(&u->jobs, task);
  if (atomic_fetch_sub(&u->tasks_left, 1) == 1) complete_unit(u);
}

/* A unit's work in bytes decompressed, about: full validation of a value
 * (its offsets, validity bit, ...) costs about what decompressing a byte
 * does; bounds checks alone cost nothing that grows with rows. */
static int64_t batch_work(const ipc_readahead *ra, const ipc_array *root) {
  if (ra->opts->validation != XCHG_VALIDATE_FULL) return 0;
  return root->length * root->n_children;
}

static void start_unit(ipc_readahead *ra, ipc_unit *u) {
  int64_t tasks = ipc_jobs_split(&u->jobs, ra->threads, ra->opts->task_bytes);
  atomic_init(&u->tasks_left, tasks);
  u->started = 1;
  /* Less work than a task's worth is done by the caller when it takes the
   * unit: waking a thread for it would cost more than it saves. */
  int worth_a_thread = u->jobs.bytes + u->work >= ra->opts->task_bytes;
  pool_loop_start(worth_a_thread ? ra->opts->pool : NULL, &u->loop, tasks, run_unit_task, u);
}

static void finish_unit(ipc_readahead *ra, ipc_unit *u) {
  if (!u->started) start_unit(ra, u);
  if (u->finished) return;
  pool_loop_finish(ra->opts->pool, &u->loop);
  u->finished = 1;
}

/* ---- planning ------------------------------------------------------------ */

/* Every member but the error, which is written only on failure: zeroing
 * its kilobyte would cost more than the rest of a small batch's turn here
 * (on one thread a unit is one batch).  The loop is set when it starts. */
static void open_new_unit(ipc_readahead *ra, ipc_unit *u) {
  u->owner = ra;
  u->first = ra->batch_head + ra->batch_count;
  u->batches = u->taken = u->bytes = u->work = 0;
  memset(&u->jobs, 0, sizeof u->jobs);
  u->started = u->finished = 0;
  u->status = XCHG_OK;
  u->failed_message = -1;
}

ipc_planned *ipc_readahead_slot(ipc_readahead *ra, ipc_jobs **jobs) {
  ipc_unit *u = open_unit(ra);
  if (!u) {
    u = unit_at(ra, ra->unit_count++);
    open_new_unit(ra, u);
  }
  ra->job_mark = u->jobs.count;
  *jobs = &u->jobs;
  ipc_planned *p = batch_at(ra, ra->batch_head + ra->batch_count);
  p->array = NULL;
  return p;
}

void ipc_readahead_push(ipc_readahead *ra) {
  ipc_unit *u = open_unit(ra);
  u->batches++;
  ra->batch_count++;
  ra->bytes += u->jobs.bytes - u->bytes;
  u->bytes = u->jobs.bytes;
  u->work += batch_work(ra, batch_at(ra, ra->batch_head + ra->batch_count - 1)->array);
  if (ra->threads <= 1 || u->bytes + u->work >= ra->opts->task_bytes || u->batches >= UNIT_BATCHES)
    start_unit(ra, u);
}

void ipc_readahead_abandon(ipc_readahead *ra) {
  ipc_planned *p = batch_at(ra, ra->batch_head + ra->batch_count);
  ipc_array_unref(p->array); /* planned, then its body could not be passed */
  p->array = NULL;
  ipc_unit *u = open_unit(ra);
  ipc_jobs_truncate(&u->jobs, ra->job_mark);
  if (u->batches == 0) {
    ipc_jobs_free(&u->jobs);
    ra->unit_count--;
  }
}

void ipc_readahead_flush(ipc_readahead *ra) {
  ipc_unit *u = open_unit(ra);
  if (u) start_unit(ra, u);
}

/* ---- handing out ----------------------------------------------------------- */

static ipc_array *pop_batch(ipc_readahead *ra, ipc_unit *u) {
  ipc_planned *p = batch_at(ra, ra->batch_head);
  ipc_array *a = p->array;
  p->array = NULL;
  ra->taken_message = p->ctx.message_index;
  ra->taken_offset = p->ctx.message_offset;
  ra->batch_head = (ra->batch_head + 1) % READAHEAD_BATCHES;
  ra->batch_count--;
  if (++u->taken == u->batches) {
    ra->bytes -= u->bytes;
    ra->unit_head = (ra->unit_head + 1) % READAHEAD_UNITS;
    ra->unit_count--;
  }
  return a;
}

xchg_status ipc_readahead_take(ipc_readahead *ra, ipc_array **out, xchg_error *err) {
  *out = NULL;
  if (ra->batch_count == 0) return XCHG_OK;
  ipc_unit *u = unit_at(ra, 0);
  finish_unit(ra, u);
  const ipc_planned *p = batch_at(ra, ra->batch_head);
  if (u->status != XCHG_OK && p->ctx.message_index >= u->failed_message) {
    xchg_status st = u->status;
    if (err) *err = u->error;
    ipc_readahead_clear(ra);
    return st;
  }
  *out = pop_batch(ra, u);
  return XCHG_OK;
}

void ipc_readahead_clear(ipc_readahead *ra) {
  for (int64_t k = 0; k < ra->unit_count; k++) {
    ipc_unit *u = unit_at(ra, k);
    if (u->started && !u->finished) pool_loop_cancel(ra->opts->pool, &u->loop);
    ipc_jobs_free(&u->jobs);
  }
  for (int64_t k = 0; k < ra->batch_count; k++)
    ipc_array_unref(batch_at(ra, ra->batch_head + k)->array);
  ra->batch_head = ra->batch_count = 0;
  ra->unit_head = ra->unit_count = 0;
  ra->bytes = 0;
}
