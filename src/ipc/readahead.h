/* readahead.h — the reader's decode pipeline.
 *
 * The reader plans record batches on the calling thread: it reads their
 * messages, checks their layout and allocates their final buffers (see
 * decode.h).  Decompressing and validating planned batches then runs on a
 * pool while the caller plans the next batches and hands out earlier ones,
 * so that no thread waits for another at a batch or group boundary.
 *
 * Consecutive planned batches join the open *unit* until its work
 * (decompression and validation) reaches task_bytes or it holds a few
 * batches; the unit then starts as one pool loop over its jobs, split into
 * tasks, and the thread that finishes the unit's last task validates its
 * batches.  A unit with less than task_bytes of work runs on the caller.  Pool threads
 * take units up in the order they started, and the batches held here stay
 * within readahead_bytes of decompressed data.  Without a pool (or with a
 * pool of one thread) a unit is one batch, decoded when it is taken: nothing
 * is read ahead. */
#ifndef XCHG_IPC_READAHEAD_H
#define XCHG_IPC_READAHEAD_H

#include "base/pool_internal.h"
#include "ipc/decode.h"

#define READAHEAD_BATCHES 64 /* batches held at most */
#define READAHEAD_UNITS 16   /* units held at most */

typedef struct ipc_planned {
  ipc_array *array;
  ipc_decode_ctx ctx;
} ipc_planned;

typedef struct ipc_readahead ipc_readahead;

typedef struct ipc_unit {
  ipc_readahead *owner;
  int64_t first;   /* ring position of its first batch */
  int64_t batches; /* batches in it */
  int64_t taken;   /* of which handed out */
  int64_t bytes;   /* their decompressed bytes */
  int64_t work;    /* their validation work, in bytes' worth of decompression */
  ipc_jobs jobs;
  pool_loop loop;
  _Atomic int64_t tasks_left;
  int started, finished;
  /* Set by the thread that runs the last task. */
  xchg_status status;
  int64_t failed_message;
  xchg_error error;
} ipc_unit;

struct ipc_readahead {
  const xchg_ipc_read_options *opts;
  const ipc_field *root; /* the schema's root: its children are the columns */
  int threads;
  ipc_planned batches[READAHEAD_BATCHES];
  int64_t batch_head, batch_count;
  ipc_unit units[READAHEAD_UNITS]; /* the last one is open while not started */
  int64_t unit_head, unit_count;
  int64_t bytes;    /* decompressed bytes of the units held */
  int64_t job_mark; /* jobs in the open unit before the batch being planned */
  /* The message index and byte offset of the batch taken last (-1, -1
   * before any): messages are read ahead of the batches taken. */
  int64_t taken_message, taken_offset;
};

/* opts and root must outlive ra. */
void ipc_readahead_init(ipc_readahead *ra, const xchg_ipc_read_options *opts,
                        const ipc_field *root);

/* Whether another batch may be planned now. */
int ipc_readahead_has_room(const ipc_readahead *ra);

/* Where to plan the next batch, and the jobs to add its decompression to.
 * Follow with ipc_readahead_push once planned, or ipc_readahead_abandon,
 * which drops the slot's array, if any, and the jobs added since. */
ipc_planned *ipc_readahead_slot(ipc_readahead *ra, ipc_jobs **jobs);
void ipc_readahead_push(ipc_readahead *ra);
void ipc_readahead_abandon(ipc_readahead *ra);

/* Starts the open unit (at the end of the input, or before an error that
 * stops planning). */
void ipc_readahead_flush(ipc_readahead *ra);

/* Takes the oldest batch, decoded and validated (a reference), or *out =
 * NULL when none is held.  When decoding a batch failed, its error is
 * returned in place of that batch and every batch after it is dropped. */
xchg_status ipc_readahead_take(ipc_readahead *ra, ipc_array **out, xchg_error *err);

int64_t ipc_readahead_count(const ipc_readahead *ra);

/* Drops every batch held: work not begun is dropped, work under way is
 * waited for. */
void ipc_readahead_clear(ipc_readahead *ra);

#endif
