/* job.h — an output batch of the shuffle reader (private to src/shuffle):
 * the record batches the reader planned for it, then placed into one
 * coalescer (coalesce.h) and validated — a pool task, or run inline.  A
 * job holds references on the memory its record batches lie in and on the
 * dictionaries in use when it was closed, so that the reader plans on
 * while it runs.  A batch that fails its validation has its blocks read
 * again one by one with an IPC reader, which names the block, message,
 * field and buffer at fault. */
#ifndef XCHG_SHUFFLE_JOB_H
#define XCHG_SHUFFLE_JOB_H

#include <sched.h>
#include <stdatomic.h>

#include "base/pool_internal.h"
#include "ipc/dictionary.h"
#include "ipc/framing.h"
#include "shuffle/coalesce.h"
#include "xchg/shuffle.h"

/* A block of a job, to read it again alone. */
typedef struct block_ref {
  int64_t index, source, offset; /* offset: in its source */
  size_t at;                     /* in its chunk */
  int comet;
  /* The memory the job reads (arena may be NULL).  The job holds one
   * reference per run of blocks in the same chunk or arena, taken by the
   * run's first block (an atomic count per block cost a tiny block 3 %). */
  xchg_buf *chunk, *arena;
} block_ref;

/* A record batch of a job and where it is, for its errors. */
typedef struct placement {
  wire_batch w;
  int64_t ref;     /* its block: index into the job's refs */
  int64_t message; /* index in the block's stream */
  size_t pos;      /* byte there */
} placement;

/* An output batch: planned, then placed (on the pool or inline). */
typedef struct job {
  const xchg_shuffle_reader_options *opts; /* the reader's */
  const ipc_schema *schema;
  coalescer *co; /* the slot's, kept from job to job */
  int pass;      /* one batch decoded without a copy */
  ipc_message_view pass_message;
  placement *items;
  int64_t n_items, cap_items;
  block_ref *refs;
  int64_t n_refs, cap_refs;
  ipc_dictionaries dicts; /* the dictionaries in use when it was closed */
  int64_t rows, bytes;    /* planned: rows, decoded bytes (about) */
  int64_t cost;           /* of placing it, as bytes copied in the same time (about) */
  int compressed;
  int in_arenas;     /* some record batches lie in groups the pool decompressed */
  int inline_placed; /* placed as planned, on the planner's thread */
  pool_loop loop;
  /* closed: planned to its end (the planner's); started: its task is on
   * the pool or run (the same, but for a relay's, started first). */
  int closed, started, finished;
  int relay; /* its task is a relay: it plans the job, then places it */
  /* Set once its loop is started.  A relay's job is published (job_end)
   * before its loop starts, so that the relay, once running, reserves the
   * job after it: whoever finishes or cancels the job waits for this. */
  _Atomic int loop_ready;
  xchg_shuffle_reader *reader;
  xchg_shuffle_reader_metrics planned; /* what planning had counted when it was closed */
  ipc_array **out;                     /* its batches (two or more when offsets overflow) */
  int64_t n_out, cap_out, taken;
  int64_t placed; /* items appended so far */
  xchg_status status;
  xchg_error error;
  int64_t ns, decoded_bytes; /* ns: job_run's, on the pool or the caller */
  int64_t inline_ns;         /* placing as planned, on the planner's thread only */
} job;

/* Waits for the job's loop to be started, when a relay's launcher is
 * about to (a few instructions away). */
static inline void job_await_loop(job *j) {
  while (!atomic_load(&j->loop_ready)) sched_yield();
}

/* Prefixes err with "block B (source S, byte O): " when st fails. */
xchg_status shuffle_block_error(int64_t index, int64_t source, int64_t offset, xchg_status st,
                                xchg_error *err);

/* A new record batch of the job, *out to fill in (a placement is written
 * once, where it stays: copying one costs a tiny block's planning). */
xchg_status job_new_placement(job *j, placement **out, xchg_error *err);

/* Takes references on the values of the dictionaries d holds. */
xchg_status job_keep_dictionaries(job *j, const ipc_dictionaries *d, xchg_error *err);

/* Appends the job's next record batch; when the output's offsets cannot
 * take it, the batch so far goes out first. */
xchg_status job_place_next(job *j, xchg_error *err);

/* Appends the job's record batches not appended yet; an error names the
 * block and the message at fault. */
xchg_status job_place_rest(job *j, xchg_error *err);

/* The pool task (xchg_task_fn) of a job: its record batches placed, its
 * batch finished; the outcome in status and error. */
void job_run(void *ctx, int64_t task);

/* Empties a job for its slot's next use, its coalescer and arrays kept; a
 * task under way on pool is waited for. */
void job_clear(job *j, xchg_pool *pool);

#endif
