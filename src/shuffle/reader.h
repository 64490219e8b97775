/* reader.h — the shuffle reader's state (private to src/shuffle), shared by
 * shuffle_reader.c, which plans blocks into jobs and hands batches out,
 * and reader_meta.c, which takes the blocks' schema and dictionary
 * messages. */
#ifndef XCHG_SHUFFLE_READER_H
#define XCHG_SHUFFLE_READER_H

#include <stdatomic.h>

#include "ipc/dictionary.h"
#include "ipc/framing.h"
#include "ipc/schema.h"
#include "shuffle/input.h"
#include "shuffle/job.h"
#include "xchg/shuffle.h"

#define JOBS_AHEAD 8 /* output batches being built at most */

/* The block being planned: its IPC stream and where the next message is. */
typedef struct block {
  int open;
  int64_t index, source, offset; /* block index, source, byte offset in the source */
  size_t at;                     /* in the chunk */
  const uint8_t *stream;
  size_t size, pos;
  xchg_buf *memory;    /* the buffer the stream lies in (chunk or arena) */
  int in_chunk;        /* the stream is the chunk's own bytes, not decompressed */
  int64_t message;     /* index of the next message */
  int64_t field_count; /* Comet: the header's, else -1 */
  int64_t ref;         /* its entry in the open job's refs, or -1 */
} block;

/* What the reader has of a dictionary id: the bytes of the message that
 * set its values (a message with the same bytes changes nothing), and
 * whether the current block's stream has defined it. */
typedef struct dictionary_seen {
  uint8_t *bytes;
  size_t size;
  int defined;
} dictionary_seen;

struct xchg_shuffle_reader {
  xchg_shuffle_reader_options opts;
  int64_t *columns;
  int threads;
  shuffle_input in;
  int64_t unit_block; /* the next block of the first unit (Comet) */
  block blk;
  int64_t next_block;
  /* Schema and dictionaries. */
  int have_schema;
  int schema_given; /* the schema is the options' schema message's, not block 0's */
  ipc_schema schema;
  uint8_t *schema_bytes; /* the Message flatbuffer blocks' schemas are compared with */
  size_t schema_size;
  /* Those bytes parse as a stream's schema message (with this body)
   * within max_metadata_bytes: a block's message of the same bytes is
   * taken without being decoded again. */
  int schema_known;
  int64_t schema_body_length;
  ipc_dictionaries dicts;
  dictionary_seen *seen; /* per entry of dicts */
  /* Output: the jobs held are those of indices job_first to job_end - 1,
   * in ring slots index % JOBS_AHEAD.  Only the planner's holder moves
   * job_end (reserving a job), only the caller job_first (handing one
   * out): with a relay running, the two are different threads. */
  job jobs[JOBS_AHEAD];
  _Atomic int64_t job_first, job_end;
  int64_t jobs_limit;
  _Atomic int64_t held_bytes; /* planned bytes of the jobs held */
  /* Planning: owned by whichever thread holds the planner (see relays in
   * shuffle_reader.c). */
  job *open;           /* the job being planned, NULL when none is */
  int closed_one;      /* a job was closed since plan_job began */
  int place_inline;    /* the next job is placed as planned, not on the pool */
  job *placed_inline;  /* the job a call of plan placed into, if any */
  int planned_end;     /* the input ended and every job is closed */
  int in_relay;        /* planning in a relay task, not on the calling thread */
  int relay_ok;        /* relays may plan the next job (shuffle_close_job says when not) */
  xchg_status stopped; /* planning failed: reported after the jobs before it */
  xchg_error stop_error;
  xchg_shuffle_reader_metrics pm; /* what planning counts: blocks, rows, wire bytes, ... */
  int64_t asked_at;               /* pm.wire_bytes when cancel was last asked, -1 before it was */
  /* Relays: planning handed from pool task to pool task (shuffle_reader.c). */
  _Atomic int planner_out; /* a relay task holds the planner */
  _Atomic int come_home;   /* the caller wants it back: no relay is launched */
  _Atomic int cancel_seen; /* the cancel check said so: the call fails, a relay stops */
  /* The caller's. */
  xchg_status failed; /* sticky */
  xchg_error failure;
  xchg_shuffle_reader_metrics m; /* handing out's: batches, decoded bytes, time placing */
  xchg_shuffle_reader_metrics planned_seen; /* planning's, as of the last job handed out */
};

/* ---- schemas and dictionaries (reader_meta.c) ---------------------------- */

/* The schema message given in the options, framed or not. */
xchg_status shuffle_given_schema(xchg_shuffle_reader *r, xchg_error *err);

/* A block's schema message: the first makes the schema; the others must
 * be byte for byte the same, or describe the same columns. */
xchg_status shuffle_take_schema(xchg_shuffle_reader *r, const ipc_message_view *m, xchg_error *err);

/* A dictionary message: the same bytes as the one in use change nothing;
 * other values first cut the batch (*consumed 0: the message is taken up
 * again once the batch is closed), then replace or extend the dictionary. */
xchg_status shuffle_take_dictionary(xchg_shuffle_reader *r, const ipc_message_view *m,
                                    int *consumed, xchg_error *err);

/* ---- planning (shuffle_reader.c) ---------------------------------------------- */

/* A block's schema message taken: its header's field count checked
 * (Comet), its dictionaries not yet defined. */
xchg_status shuffle_schema_taken(xchg_shuffle_reader *r, xchg_error *err);

/* Rows of the job being planned (0 when none is): asked for every record
 * batch, so inline. */
static inline int64_t shuffle_open_rows(const xchg_shuffle_reader *r) {
  return r->open ? r->open->rows : 0;
}

/* Closes the open job: it runs on the pool, or here without one. */
xchg_status shuffle_close_job(xchg_shuffle_reader *r, xchg_error *err);

#endif
