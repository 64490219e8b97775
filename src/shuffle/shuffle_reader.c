/* shuffle_reader.c — the reduce side of a shuffle (see xchg/shuffle.h).
 *
 * Three stages, each in input order:
 *   input    sources become chunks of whole blocks, and chunks units: a
 *            chunk of plain IPC streams, or a group of Comet blocks,
 *            decompressed by a task of its own (input.h);
 *   planning one thread at a time, in order: each block's IPC stream is
 *            walked message by message, in place (chunk or arena): schemas
 *            checked, dictionaries kept or replaced, and record batches
 *            assigned to the output batch being planned — a job — until it
 *            holds the target; a big uncompressed batch becomes a job of
 *            its own, decoded without a copy;
 *   placing  a job appends its record batches to its coalescer and
 *            validates the result (job.h).
 * Without a pool (or with one thread) nothing runs ahead: the calling
 * thread plans, a group decompresses when the planner gets to it, and a
 * record batch is placed as soon as it is planned, its bytes still in the
 * cache.  With a pool, the groups of the next units decompress on it, and
 * planning moves to it too once the schema is known: each job is planned
 * and then placed by one relay task, which hands the planner on to the
 * next relay before it places (relays, below), so that the threads take
 * turns planning and place side by side, each the job it walked.  Planning
 * comes back to the calling thread for what only it may do (read a source
 * not in memory, add input, ask the cancel check) and for a job half
 * planned; jobs it plans are placed on the pool, or as planned when small
 * (shuffle_close_job says why).  The state is in reader.h; schemas and
 * dictionaries are taken in reader_meta.c. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "codec/helpers.h"
#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "ipc/message.h"
#include "ipc/schema.h"
#include "shuffle/coalesce.h"
#include "shuffle/reader.h"

#define JOB_WORTH ((int64_t)1 << 20) /* bytes of a batch worth building on the pool */
/* The default read.readahead_bytes.  Coalesced batches are large (8,192
 * rows of 50 columns: 4 MB), and the caller plans each before a thread
 * builds it: with the IPC reader's 8 MiB, two were planned at a time and
 * the pool's thread waited for the planner.  Two threads, 6 rounds of 11
 * runs taking turns, time at 32 MiB over time at 8 MiB: 50 x 64
 * uncompressed, IPC 0.85-0.88 (three sets), Comet 0.85; 50 x 512 1.02,
 * LZ4 Comet 50 x 64 0.99, 5 x 64 1.00 (small batches are built as
 * planned).  A reduce task of Spark's fetches up to 48 MiB of blocks at a
 * time by default (spark.reducer.maxSizeInFlight). */
#define READAHEAD_BYTES ((int64_t)32 << 20)
/* What placing a record batch costs besides copying its bytes (its field
 * nodes and buffers walked, a copy per buffer), as bytes copied in the
 * same time: a 5-column record batch of 64 rows (3.5 KB) takes about as
 * long as 12 KB copied. */
#define BATCH_COST ((int64_t)8 << 10)
/* What decoding a buffer of a batch passed through costs (checked,
 * validated, exported; nothing copied), as bytes copied in the same time:
 * 8,192 rows of 5 columns (11 buffers) take about 4 us, of 50 columns 30 us. */
#define PASS_BUFFER_COST ((int64_t)16 << 10)
/* A byte decompressed into place costs as much as this many copied: LZ4
 * decodes about a sixth as fast as memcpy copies, zstd slower still
 * (bench shuffle's limits). */
#define DECOMPRESS_COST 4
/* A wait for a small batch on the pool longer, by a scheduler's time
 * slice, than the batch took to build: its thread did not run (a host
 * with more threads than cores).  Its building time is taken out: a
 * batch small in bytes may take milliseconds (a hundred tiny zstd
 * frames), and a wait for that is no stall.  For STALL_HOLD_NS after
 * one, small batches are built on the calling thread, by every reader
 * (the host is what is busy, and a reader of a few milliseconds would
 * meet one stall of its own before it learnt), then the pool is tried
 * again. */
#define STALL_NS ((int64_t)1000000)
#define STALL_HOLD_NS ((int64_t)100000000)

/* When a reader last waited so (monotonic_ns), 0 before any did. */
static _Atomic int64_t pool_stalled_at;

/* Whether a reader waited so within STALL_HOLD_NS. */
static int pool_stalled_lately(void) {
  int64_t at = atomic_load_explicit(&pool_stalled_at, memory_order_relaxed);
  return at != 0 && monotonic_ns() - at < STALL_HOLD_NS;
}
/* Bytes of blocks read between two questions to the cancel callback: a
 * question per block would cost more than a tiny block (a call into the
 * JVM, for the Java binding), and 64 KiB are read in well under a
 * millisecond. */
#define CANCEL_BYTES ((int64_t)64 << 10)

/* ---- errors ------------------------------------------------------------------- */

static xchg_status in_block(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  return shuffle_block_error(r->blk.index, r->blk.source, r->blk.offset, st, err);
}

/* ---- options ------------------------------------------------------------------ */

void xchg_shuffle_reader_options_init(xchg_shuffle_reader_options *opts) {
  if (!opts) return; /* nothing to fill */
  memset(opts, 0, sizeof *opts);
  opts->framing = XCHG_SHUFFLE_FRAMING_AUTO;
  opts->target_rows = 8192;
  opts->target_bytes = (int64_t)64 << 20;
  xchg_ipc_read_options_init(&opts->read);
  opts->read.readahead_bytes = READAHEAD_BYTES;
}

static xchg_status check_options(const xchg_shuffle_reader_options *o, xchg_error *err) {
  const char *bad = o->target_rows <= 0    ? "target_rows is not positive"
                    : o->target_bytes <= 0 ? "target_bytes is not positive"
                    : o->n_columns < 0     ? "n_columns is negative"
                    : o->framing < 0 || o->framing > XCHG_SHUFFLE_FRAMING_IPC ? "framing is unknown"
                    : o->schema_message == NULL && o->schema_message_size ? "schema_message is NULL"
                    : o->read.readahead_bytes <= 0 ? "read.readahead_bytes is not positive"
                                                   : NULL;
  if (bad) return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_open: %s", bad);
  return ipc_read_options_check(&o->read, "xchg_shuffle_reader_open", err);
}

/* ---- schemas ------------------------------------------------------------- */

xchg_status shuffle_schema_taken(xchg_shuffle_reader *r, xchg_error *err) {
  for (int64_t i = 0; r->seen && i < r->dicts.count; i++) r->seen[i].defined = 0;
  if (r->blk.field_count >= 0 && r->blk.field_count != r->schema.root.n_children)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "its header's field count is %lld, the schema has %lld "
                       "fields",
                       (long long)r->blk.field_count, (long long)r->schema.root.n_children);
  return XCHG_OK;
}

/* The block's first message when it is the schema message of the same
 * bytes as the first (the common case): *size its bytes, body included,
 * when they lie in the block. */
static int same_schema_message(const xchg_shuffle_reader *r, size_t *size) {
  const block *b = &r->blk;
  size_t avail = b->size - b->pos;
  const uint8_t *p = b->stream + b->pos;
  if (!r->schema_known || b->message != 0 || avail < 8) return 0;
  size_t prefix = ipc_prefix_size(p), whole = prefix + r->schema_size;
  if (fb_load_u32(p + prefix - 4) != r->schema_size || whole > avail ||
      (uint64_t)r->schema_body_length > avail - whole ||
      memcmp(p + prefix, r->schema_bytes, r->schema_size) != 0)
    return 0;
  *size = whole + (size_t)r->schema_body_length;
  return 1;
}

/* ---- blocks ---------------------------------------------------------------------- */

/* Whether the task is cancelled, asked before the first block and then
 * once CANCEL_BYTES of blocks were read since the last question; a yes is
 * kept in cancel_seen, so that the call fails at once, not after the
 * batches built ahead (produce). */
static int cancelled(xchg_shuffle_reader *r) {
  if (!r->opts.cancel) return 0;
  if (r->in_relay || atomic_load(&r->cancel_seen)) return atomic_load(&r->cancel_seen);
  if (r->asked_at >= 0 && r->pm.wire_bytes - r->asked_at < CANCEL_BYTES) return 0;
  r->asked_at = r->pm.wire_bytes;
  if (!r->opts.cancel(r->opts.cancel_ctx)) return 0;
  atomic_store(&r->cancel_seen, 1);
  return 1;
}

static xchg_status cancelled_error(const xchg_shuffle_reader *r, xchg_error *err) {
  return xchg_errorf(err, XCHG_ECANCELLED, "cancelled before block %lld", (long long)r->next_block);
}

/* Starts the next block, unless the task is cancelled; *state is
 * INPUT_READY when there is one. */
static xchg_status open_block(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  if (cancelled(r)) return cancelled_error(r, err);
  unit *u;
  xchg_status st;
  for (;;) {
    if ((st = shuffle_input_first_unit(&r->in, &u, state, err)) != XCHG_OK || !u) return st;
    if (u->comet ? r->unit_block < u->n_blocks : u->start < u->end) break;
    shuffle_input_pop_unit(&r->in);
    r->unit_block = 0;
  }
  block *b = &r->blk;
  *b = (block){.open = 1,
               .index = r->next_block++,
               .source = u->source,
               .field_count = -1,
               .memory = u->chunk,
               .in_chunk = 1,
               .ref = -1};
  r->pm.blocks++;
  const uint8_t *chunk = xchg_buf_data(u->chunk);
  if (!u->comet) {
    b->at = u->start;
    b->stream = chunk + u->start;
    b->size = u->end - u->start;
    b->offset = u->base + (int64_t)b->at;
    shuffle_prefetch_ahead(chunk, u->end, &u->prefetched, u->start);
    return XCHG_OK;
  }
  const group_block *g = &u->blocks[r->unit_block];
  b->at = g->offset;
  b->offset = u->base + (int64_t)g->offset;
  r->pm.wire_bytes += (int64_t)g->wire;
  if (r->unit_block == u->failed_at) {
    if (err) *err = u->error;
    return in_block(r, u->status, err);
  }
  b->stream = g->stream;
  b->size = g->size;
  b->field_count = g->field_count;
  b->in_chunk = g->in_chunk;
  if (!g->in_chunk) b->memory = u->arena_buf;
  return XCHG_OK;
}

/* Leaves the block at its end-of-stream marker, which must end it. */
static xchg_status close_block(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  unit *u = shuffle_input_unit(&r->in, 0);
  b->open = 0;
  if (!u->comet) {
    u->start += b->pos;
    r->pm.wire_bytes += (int64_t)b->pos;
    return XCHG_OK;
  }
  r->unit_block++;
  if (b->pos < b->size)
    return in_block(r,
                    xchg_errorf(err, XCHG_EFORMAT,
                                "%zu bytes follow its IPC stream's "
                                "end-of-stream marker",
                                b->size - b->pos),
                    err);
  return XCHG_OK;
}

/* ---- jobs ------------------------------------------------------------------------ */

static int64_t held_jobs(const xchg_shuffle_reader *r) {
  return atomic_load(&r->job_end) - atomic_load(&r->job_first);
}

/* Held job k (0: the first).  Unsigned: a mask, JOBS_AHEAD being a power
 * of two. */
static job *job_at(xchg_shuffle_reader *r, int64_t k) {
  return &r->jobs[(size_t)(atomic_load(&r->job_first) + k) % JOBS_AHEAD];
}

/* A new job after those held, planned next (by a relay, relay); its
 * fields are set before the caller can see it. */
static job *reserve_job(xchg_shuffle_reader *r, int relay) {
  int64_t end = atomic_load(&r->job_end);
  job *j = &r->jobs[(size_t)end % JOBS_AHEAD];
  j->opts = &r->opts;
  j->schema = &r->schema;
  j->reader = r;
  j->pass = 0;
  j->n_items = j->n_refs = j->n_out = j->taken = j->placed = 0;
  j->rows = j->bytes = j->cost = j->ns = j->inline_ns = j->decoded_bytes = 0;
  j->compressed = j->in_arenas = j->closed = j->finished = 0;
  j->relay = j->started = relay;
  atomic_store(&j->loop_ready, !relay);
  j->inline_placed = !relay && r->place_inline;
  j->status = XCHG_OK;
  r->open = j;
  r->blk.ref = -1;
  atomic_store(&r->job_end, end + 1);
  return j;
}

/* The job being planned, opened when there is none. */
static job *open_job(xchg_shuffle_reader *r) { return r->open ? r->open : reserve_job(r, 0); }

/* The block being planned, as one of the open job's. */
static xchg_status add_ref(xchg_shuffle_reader *r, job *j, xchg_error *err) {
  block *b = &r->blk;
  if (b->ref >= 0) return XCHG_OK;
  if (j->n_refs == j->cap_refs) {
    int64_t cap = j->cap_refs ? 2 * j->cap_refs : 64;
    block_ref *refs = realloc(j->refs, (size_t)cap * sizeof *refs);
    if (!refs) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    j->refs = refs;
    j->cap_refs = cap;
  }
  unit *u = shuffle_input_unit(&r->in, 0);
  xchg_buf *arena = b->in_chunk ? NULL : b->memory;
  /* the previous block's memory is held by the job: its address is not reused */
  const block_ref *prev = j->n_refs > 0 ? &j->refs[j->n_refs - 1] : NULL;
  j->refs[j->n_refs] =
      (block_ref){b->index,
                  b->source,
                  b->offset,
                  b->at,
                  u->comet,
                  !prev || prev->chunk != u->chunk ? xchg_buf_ref(u->chunk) : u->chunk,
                  !prev || prev->arena != arena ? xchg_buf_ref(arena) : arena};
  b->ref = j->n_refs++;
  return XCHG_OK;
}

/* The bytes of a batch worth building on the pool. */
static int64_t job_worth(const xchg_shuffle_reader *r) {
  return r->opts.read.readahead_bytes / 8 < JOB_WORTH ? r->opts.read.readahead_bytes / 8
                                                      : JOB_WORTH;
}

/* Whether a batch costs less to build than a wake-up of another thread
 * on a busy host: less than JOB_WORTH bytes (or an eighth of
 * readahead_bytes) copied, in the time its bytes are copied, its record
 * batches walked, decompressed into place (cost).  A batch passed through
 * copies nothing, and costs its buffers' checks.  With two threads, a
 * batch of fewer bytes only to copy is small however many record batches
 * hold them: built on the pool, 4,096 uncompressed blocks of 64 rows, 5
 * columns, took 1.05-1.23x the time they take built as planned (paired
 * runs), longer than on one thread; with more, building on the pool while
 * the caller plans is worth it.  Any batch is small while the pool
 * stalled lately. */
static int small_job(const xchg_shuffle_reader *r, const job *j) {
  int64_t worth = job_worth(r);
  if (pool_stalled_lately()) return j->pass || j->bytes < worth;
  if (j->pass) return j->cost < worth;
  return j->bytes < worth && (j->cost < worth || (r->threads == 2 && !j->compressed));
}

xchg_status shuffle_close_job(xchg_shuffle_reader *r, xchg_error *err) {
  job *j = r->open;
  xchg_status st = job_keep_dictionaries(j, &r->dicts, err);
  if (st != XCHG_OK) return st;
  j->closed = 1;
  j->planned = r->pm;
  j->planned.wait_ns = r->in.wait_ns;
  j->planned.decompress_ns = r->in.decompress_ns;
  r->open = NULL;
  r->closed_one = 1;
  atomic_fetch_add(&r->held_bytes, j->bytes);
  r->blk.ref = -1;
  int small = small_job(r, j);
  /* The next batch is placed as it is planned (as without a pool), its
   * blocks still in the cache, when this one was small.
   * With two threads, a batch of Comet blocks that the pool decompressed
   * is placed as planned too, whatever its size: the other thread
   * decompresses the next groups meanwhile, and the caller places each
   * group just after planning it, its arena still in the cache.  Placed on
   * the pool, the arenas of batches planned ahead were read cold, from the
   * other core, and decompressing into their recycled memory slowed as
   * much (bench shuffle, comet lz4 50 x 64, two threads: 35-49 ms so,
   * 25-32 ms placed as planned; one thread 32 ms).  With more threads, the
   * caller alone placing would cap what the others can decompress ahead,
   * so those batches are placed on the pool. */
  r->place_inline = r->threads <= 1 || (r->threads == 2 && j->in_arenas) || (!j->pass && small);
  /* Relays (below) took such batches more slowly (comet lz4 50 x 64, two
   * threads, paired runs: 22.3 ms against 18.7-21.0 ms), and small ones
   * no faster: on two threads Comet blocks the pool decompresses stay
   * with the caller. */
  r->relay_ok = !(r->threads == 2 && j->in_arenas);
  if (j->relay) return XCHG_OK; /* its relay places it */
  j->started = 1;
  /* A job that was not placed as planned and turns out small is built
   * here all the same, when it is handed out, rather than another thread
   * woken for it: the first of a reader (nothing was known when it
   * began), or a small batch passed through (bench shuffle, two threads:
   * 8,192-row blocks of 5 columns read 1.4x as fast so). */
  j->inline_placed |= small;
  pool_loop_start(j->inline_placed ? NULL : r->opts.read.pool, &j->loop, 1, job_run, j);
  return XCHG_OK;
}

/* Jobs closed and not yet handed out. */
static int64_t closed_jobs(const xchg_shuffle_reader *r) {
  return held_jobs(r) - (r->open != NULL);
}

/* Room to plan another job on the pool, within readahead_bytes. */
static int room_ahead(const xchg_shuffle_reader *r) {
  return closed_jobs(r) < r->jobs_limit &&
         atomic_load(&r->held_bytes) < r->opts.read.readahead_bytes;
}

/* Room to plan another job: without a pool, one at a time. */
static int has_room(const xchg_shuffle_reader *r) {
  return r->place_inline ? closed_jobs(r) == 0 : room_ahead(r);
}

/* ---- dictionaries ----------------------------------------------------------------- */

/* Every dictionary the selected columns use is defined by this block's
 * stream, as a stream read alone requires.  The caller names the message
 * (message_error). */
static xchg_status check_dictionaries_defined(const xchg_shuffle_reader *r, xchg_error *err) {
  for (int64_t i = 0; i < r->dicts.count; i++)
    if (r->dicts.items[i].used && !r->seen[i].defined)
      return xchg_errorf(err, XCHG_EFORMAT, "dictionary %lld is used before the block defines it",
                         (long long)r->dicts.items[i].id);
  return XCHG_OK;
}

/* ---- record batches -------------------------------------------------------------- */

/* A batch at least as large as the target, in memory uncompressed, with
 * nothing pending before it: decoded alone, pointing into the source. */
static int passes_through(const xchg_shuffle_reader *r, const wire_batch *w) {
  return r->blk.in_chunk && w->codec == XCHG_BLOCK_NONE && shuffle_open_rows(r) == 0 &&
         (w->rows >= r->opts.target_rows || w->body_length >= r->opts.target_bytes);
}

static xchg_status message_error(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  xchg_error_prefix(err, "message %lld at byte %zu: ", (long long)r->blk.message, r->blk.pos);
  return st;
}

static xchg_status take_batch(xchg_shuffle_reader *r, const ipc_message_view *m, xchg_error *err) {
  wire_batch w;
  block *b = &r->blk;
  xchg_status st = wire_batch_open(&m->header, m->version, b->stream + b->pos + m->body_offset,
                                   m->body_length, &w, err);
  /* A batch of no row adds nothing and uses no dictionary value, so its
   * dictionaries need not be defined (Columnar.rst; apache-arrow writes
   * an empty table's dictionary column so). */
  if (st == XCHG_OK && w.rows == 0) return XCHG_OK;
  if (st == XCHG_OK) st = check_dictionaries_defined(r, err);
  if (st == XCHG_OK && w.rows > INT64_MAX - r->pm.rows) /* hostile lengths: the sums would wrap */
    st = xchg_errorf(err, XCHG_EFORMAT,
                     "record batch length %lld after %lld rows passes 2^63 rows in all",
                     (long long)w.rows, (long long)r->pm.rows);
  if (st != XCHG_OK) return message_error(r, st, err);
  int pass = passes_through(r, &w);
  job *j = open_job(r);
  if (!j->co && (st = coalescer_create(&r->schema, &r->opts.read, r->opts.target_rows,
                                       r->opts.target_bytes, &j->co, err)) != XCHG_OK)
    return st;
  if ((st = add_ref(r, j, err)) != XCHG_OK) return st;
  placement *p;
  if ((st = job_new_placement(j, &p, err)) != XCHG_OK) return st;
  *p = (placement){w, b->ref, b->message, b->pos};
  j->rows += w.rows;
  int64_t bytes = w.bytes;
  j->bytes += bytes;
  j->cost += pass ? PASS_BUFFER_COST * (int64_t)w.buffers.count
                  : (w.codec == XCHG_BLOCK_NONE ? bytes : DECOMPRESS_COST * bytes) + BATCH_COST;
  j->compressed |= w.codec != XCHG_BLOCK_NONE || !b->in_chunk;
  j->in_arenas |= !b->in_chunk;
  r->pm.rows += w.rows;
  if (pass) {
    j->pass = 1;
    j->pass_message = *m;
    r->pm.passthrough_batches++;
    return shuffle_close_job(r, err);
  }
  /* Placed as planned, the batch's bytes are still in the cache (placing
   * a job's record batches only once all are planned measured slower). */
  if (j->inline_placed) {
    if ((st = job_place_next(j, err)) != XCHG_OK) return message_error(r, st, err);
    r->placed_inline = j;
  }
  return j->rows >= r->opts.target_rows || j->bytes >= r->opts.target_bytes
             ? shuffle_close_job(r, err)
             : XCHG_OK;
}

/* ---- the steps ------------------------------------------------------------------- */

/* The end of the block's bytes before its end-of-stream marker: a cut, in
 * the words of the IPC reader (reader.c, ends_before_message), bytes
 * counted in the block's IPC stream.  A Comet block's length may be what
 * is wrong instead, and the hint says so. */
static xchg_status stream_cut(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  if (r->opts.read.allow_missing_eos) return close_block(r, err);
  return in_block(
      r,
      xchg_errorf(err, XCHG_EIO, "the stream is cut short: " IPC_ENDS_WITHOUT_MARKER "%s",
                  (long long)b->size, (long long)b->message,
                  shuffle_input_unit(&r->in, 0)->comet
                      ? " (or the block's length is shorter than its stream)"
                      : ""),
      err);
}

/* The block's next message: the 8-byte end-of-stream marker that ends
 * every block told at once, others decoded. */
static xchg_status next_message(const xchg_shuffle_reader *r, ipc_message_view *m,
                                xchg_error *err) {
  const block *b = &r->blk;
  const uint8_t *p = b->stream + b->pos;
  /* An IPC file's magic read as a metadata length would be a huge one: the
   * error says what the input is instead */
  if (b->message == 0 && ipc_is_file_start(p, b->size - b->pos))
    return ipc_file_given(
        "not an IPC stream: a shuffle reader reads IPC streams and Comet blocks "
        "(read a file with xchg_ipc_reader, or xchg convert it to a stream "
        "first)",
        err);
  if (b->size - b->pos >= 8 && fb_load_u64(p) == IPC_CONTINUATION) {
    *m = (ipc_message_view){.eos = 1, .size = 8};
    return XCHG_OK;
  }
  return ipc_message_view_decode(p, b->size - b->pos, b->message, (int64_t)b->pos,
                                 r->opts.read.max_metadata_bytes, m, err);
}

/* Takes one message of the block, or closes a job before it. */
static xchg_status step(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  if (b->pos == b->size) return stream_cut(r, err);
  size_t size;
  if (same_schema_message(r, &size)) {
    xchg_status st = shuffle_schema_taken(r, err);
    if (st != XCHG_OK) return in_block(r, st, err);
    b->pos += size;
    b->message++;
    return XCHG_OK;
  }
  ipc_message_view m;
  xchg_status st = next_message(r, &m, err);
  /* Its XCHG_EIO is a message longer than the block: said as the IPC
   * reader says a stream cut inside a message, unless the block was not
   * read further for stating more than max_batch_bytes. */
  const unit *u = shuffle_input_unit(&r->in, 0);
  if (st == XCHG_EIO && u->over_bytes > 0 && b->at == u->over_at)
    st = xchg_errorf(err, XCHG_ELIMIT,
                     "its IPC stream states %llu bytes up to message %lld's body, more than "
                     "max_batch_bytes (%lld), the most of a block read into memory",
                     (unsigned long long)u->over_bytes, (long long)b->message,
                     (long long)r->opts.read.max_batch_bytes);
  else if (st == XCHG_EIO)
    xchg_error_prefix(err, "the stream is cut short: ");
  if (st != XCHG_OK) return in_block(r, st, err);
  if (m.eos) {
    if (b->message == 0)
      return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "its IPC stream has no schema message"),
                      err);
    b->pos += (size_t)m.size;
    return close_block(r, err);
  }
  int comet = u->comet;
  if (b->message == 0 && m.header_type != HEADER_SCHEMA)
    return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "message 0 at byte 0 is not a schema"), err);
  if (m.header_type == HEADER_SCHEMA && b->message > 0 && !comet && r->opts.read.allow_missing_eos)
    return close_block(r, err); /* a stream without its marker, then the next block */
  int consumed = 1;
  switch (m.header_type) {
    case HEADER_SCHEMA: st = shuffle_take_schema(r, &m, err); break;
    case HEADER_DICTIONARY: st = shuffle_take_dictionary(r, &m, &consumed, err); break;
    default: st = take_batch(r, &m, err); break;
  }
  if (st != XCHG_OK) return in_block(r, st, err);
  if (consumed) {
    b->pos += (size_t)m.size;
    b->message++;
  }
  return XCHG_OK;
}

/* Plans until a job is closed, or the input runs out (*state INPUT_NEEDED
 * or INPUT_ENDED: at its end, the open job is closed too). */
static xchg_status plan_job(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  *state = INPUT_READY;
  r->closed_one = 0;
  while (!r->closed_one) {
    xchg_status st = XCHG_OK;
    if (!r->blk.open && ((st = open_block(r, state, err)) != XCHG_OK || *state != INPUT_READY)) {
      if (st == XCHG_OK && *state == INPUT_ENDED && shuffle_open_rows(r) > 0)
        st = shuffle_close_job(r, err);
      return st;
    }
    if ((st = step(r, err)) != XCHG_OK) return st;
  }
  return XCHG_OK;
}

/* plan_job, timed: a job placed as planned (take_batch) spends its
 * decompressing and copying here, not in job_run, so that time is counted
 * in the job's (decompress_ns or copy_ns) per call, not per block.  A call
 * plans one job; what it waited for input, or spent decompressing Comet
 * blocks, is counted by the input and left out.  The time goes to the
 * job's inline_ns, which only this thread writes: once closed, the job may
 * be finishing on the pool, which writes its ns and placed. */
static xchg_status plan(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  int64_t t0 = monotonic_ns(), input0 = r->in.wait_ns + r->in.decompress_ns;
  r->placed_inline = NULL;
  xchg_status st = plan_job(r, state, err);
  if (r->placed_inline)
    r->placed_inline->inline_ns +=
        monotonic_ns() - t0 - (r->in.wait_ns + r->in.decompress_ns - input0);
  return st;
}

/* plan, its outcome kept: a failure is reported after the jobs before it. */
static xchg_status plan_step(xchg_shuffle_reader *r, int *state) {
  xchg_status st = plan(r, state, &r->stop_error);
  if (st != XCHG_OK)
    r->stopped = st;
  else if (*state == INPUT_ENDED)
    r->planned_end = 1;
  return st;
}

/* ---- relays ------------------------------------------------------------------------------ */

/* With a pool, once the schema is known and no job is half planned,
 * planning moves from pool task to pool task: a relay plans one job,
 * starts the next relay (which plans the next job meanwhile), then places
 * its own job, whose lines it has just walked.  The caller hands the
 * batches out, and helps with the relays while it waits.  Planned on the
 * calling thread and placed on another, each batch's lines crossed cores,
 * and the planner worked alone: two threads read 4,096 uncompressed IPC
 * blocks of 5 columns x 64 rows at 1.0x the speed of one; with relays at
 * 1.6x (bench shuffle, six paired runs: 0.70-0.73 ms against 1.14-1.17
 * ms on one thread), where the bare copies run 1.6-1.9x faster.  Blocks
 * of 50 columns gain little (1.2-1.4x either way): two relays placing at
 * once took 450-750 us a batch each, one alone 400 (planning 125 us of
 * it), where the bare copies slow down little; why is not known yet.
 * The planner (the block, the input, the dictionaries, r->open, job_end,
 * pm) belongs to one relay at a time, and comes home to the caller
 * (planner_out 0) when
 * a relay finds no room ahead, the input so far read, a source not in
 * memory next (the caller reads it: a source's callbacks run on the
 * calling thread, as without a pool), the planning failed, or the caller
 * asked for it (come_home: to add input, to free or fail the reader).  A
 * relay asks no cancel check (the caller asks it, once a batch). */
static void relay_run(void *ctx, int64_t task);

static int relay_may_start(const xchg_shuffle_reader *r) {
  return r->threads > 1 && r->relay_ok && r->have_schema && !r->open && r->stopped == XCHG_OK &&
         !r->planned_end && room_ahead(r) && !atomic_load(&r->come_home);
}

/* The planner's holder hands it to a new relay. */
static void launch_relay(xchg_shuffle_reader *r) {
  atomic_store(&r->planner_out, 1);
  job *j = reserve_job(r, 1);
  pool_loop_start(r->opts.read.pool, &j->loop, 1, relay_run, j);
  atomic_store(&j->loop_ready, 1);
}

static void relay_run(void *ctx, int64_t task) {
  (void)task;
  job *j = ctx;
  xchg_shuffle_reader *r = j->reader;
  int state;
  r->in_relay = r->in.memory_only = 1;
  plan_step(r, &state);
  r->in_relay = r->in.memory_only = 0;
  int closed = j->closed;
  if (closed && relay_may_start(r))
    launch_relay(r);
  else
    atomic_store(&r->planner_out, 0); /* from here on, r's planner is the caller's */
  if (closed) job_run(j, 0);
}

/* ---- handing batches out ----------------------------------------------------------- */

static void pop_job(xchg_shuffle_reader *r) {
  job *j = job_at(r, 0);
  atomic_fetch_sub(&r->held_bytes, j->closed ? j->bytes : 0);
  job_clear(j, r->opts.read.pool);
  atomic_fetch_add(&r->job_first, 1);
}

static void finish_job(xchg_shuffle_reader *r, job *j) {
  if (j->finished) return;
  int64_t t0 = monotonic_ns();
  job_await_loop(j);
  pool_loop_finish(r->opts.read.pool, &j->loop);
  if (!j->closed) { /* its relay brought the planner home first: the caller plans on */
    j->started = j->relay = 0;
    return;
  }
  if (!j->relay && !j->inline_placed && j->bytes < job_worth(r) &&
      monotonic_ns() - t0 - j->ns > STALL_NS)
    atomic_store_explicit(&pool_stalled_at, monotonic_ns(), memory_order_relaxed);
  j->finished = 1;
  r->planned_seen = j->planned;
  r->m.decoded_bytes += j->decoded_bytes;
  if (j->compressed)
    r->m.decompress_ns += j->ns + j->inline_ns;
  else
    r->m.copy_ns += j->ns + j->inline_ns;
}

/* Waits for the relay holding the planner, if one does, to give it back;
 * a job its relay left half planned is then the caller's to plan on. */
static void bring_planner_home(xchg_shuffle_reader *r) {
  if (atomic_load(&r->planner_out)) {
    atomic_store(&r->come_home, 1);
    /* the last job held is the holder's, or its successor's once it started one */
    while (atomic_load(&r->planner_out)) finish_job(r, job_at(r, held_jobs(r) - 1));
    atomic_store(&r->come_home, 0);
  }
  if (r->open && r->open->relay) finish_job(r, r->open);
}

static xchg_status fail(xchg_shuffle_reader *r, xchg_status st, const xchg_error *e) {
  bring_planner_home(r);
  r->failed = st;
  if (e != &r->failure) r->failure = *e;
  while (held_jobs(r) > 0) pop_job(r);
  r->open = NULL;
  return st;
}

/* Asks the cancel check for the relays, which do not ask it (a JVM's may
 * be asked on its own threads only): once a call, while they plan. */
static void ask_for_relays(xchg_shuffle_reader *r) {
  if (r->opts.cancel && !atomic_load(&r->cancel_seen) && r->opts.cancel(r->opts.cancel_ctx))
    atomic_store(&r->cancel_seen, 1);
}

/* Planning failed (r->stopped): the record batches of the open job planned
 * before the failure are placed first, as one thread places each as it
 * plans it, so that a bad block before the one planning failed on is the
 * error, on any number of threads. */
static xchg_status fail_planning(xchg_shuffle_reader *r) {
  xchg_error e;
  xchg_status st = r->open && r->open->co ? job_place_rest(r->open, &e) : XCHG_OK;
  return st != XCHG_OK ? fail(r, st, &e) : fail(r, r->stopped, &r->stop_error);
}

/* The cancel check said yes: the call that asked it fails, whatever the
 * pool planned or built ahead (dropped), as it does on one thread. */
static xchg_status fail_cancelled(xchg_shuffle_reader *r) {
  bring_planner_home(r); /* a relay that plans sees cancel_seen, and stops */
  xchg_error e;
  return fail(r, cancelled_error(r, &e), &e);
}

/* The next batch: *out, or NULL at the end; XCHG_EAGAIN when more input
 * is needed first. */
static xchg_status produce(xchg_shuffle_reader *r, ipc_array **out) {
  *out = NULL;
  int asked = atomic_load(&r->planner_out);
  if (asked) ask_for_relays(r);
  for (;;) {
    if (atomic_load(&r->cancel_seen)) return fail_cancelled(r);
    job *j = held_jobs(r) > 0 ? job_at(r, 0) : NULL;
    if (j && j->finished) {
      if (j->taken < j->n_out) {
        *out = j->out[j->taken++];
        return XCHG_OK;
      }
      if (j->status != XCHG_OK) return fail(r, j->status, &j->error);
      pop_job(r);
      continue;
    }
    if (!atomic_load(&r->planner_out)) {
      bring_planner_home(r);
      if (relay_may_start(r)) {
        if (!asked) ask_for_relays(r);
        asked = 1;
        if (!atomic_load(&r->cancel_seen)) launch_relay(r);
        continue; /* cancelled: the call fails, above */
      }
      if (r->stopped == XCHG_OK && !r->planned_end && has_room(r)) {
        int state;
        if (plan_step(r, &state) != XCHG_OK || state != INPUT_NEEDED) continue;
        if (closed_jobs(r) == 0) return XCHG_EAGAIN; /* else hand out what is closed */
        j = job_at(r, 0);
      }
    }
    if (j && j->started) {
      finish_job(r, j);
      continue;
    }
    bring_planner_home(r); /* (home already: a relay holds a started job) */
    if (r->stopped != XCHG_OK) return fail_planning(r);
    return r->planned_end ? XCHG_OK : XCHG_EAGAIN;
  }
}

/* ---- public API ---------------------------------------------------------------- */

xchg_status xchg_shuffle_reader_open(const xchg_shuffle_reader_options *opts,
                                     xchg_shuffle_reader **out, xchg_error *err) {
  if (!out) return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_open: out is NULL");
  *out = NULL;
  xchg_shuffle_reader_options defaults;
  if (!opts) {
    xchg_shuffle_reader_options_init(&defaults);
    opts = &defaults;
  }
  xchg_status st = check_options(opts, err);
  if (st != XCHG_OK) return st;
  xchg_shuffle_reader *r = calloc(1, sizeof *r);
  if (!r) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  r->opts = *opts;
  r->opts.schema_message = NULL;
  r->asked_at = -1;

  r->threads = xchg_pool_threads(opts->read.pool);
  shuffle_input_init(&r->in, &r->opts, r->threads);
  r->place_inline = r->threads <= 1;
  r->relay_ok = 1;
  r->jobs_limit = 2 * r->threads < JOBS_AHEAD ? 2 * r->threads : JOBS_AHEAD - 1;
  if (opts->columns) {
    r->columns = malloc(((size_t)opts->n_columns + 1) * sizeof *r->columns);
    if (r->columns)
      memcpy(r->columns, opts->columns, (size_t)opts->n_columns * sizeof *r->columns);
    else
      st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  r->opts.columns = r->columns;
  if (st == XCHG_OK && opts->schema_message) {
    r->opts.schema_message = opts->schema_message;
    r->schema_given = 1;
    st = shuffle_given_schema(r, err);
    r->opts.schema_message = NULL;
  }
  if (st != XCHG_OK) {
    xchg_shuffle_reader_free(r);
    return st;
  }
  *out = r;
  return XCHG_OK;
}

xchg_status xchg_shuffle_reader_add_source(xchg_shuffle_reader *r, xchg_source *src,
                                           xchg_error *err) {
  if (r) bring_planner_home(r);
  if (!r || !src || r->in.ended) {
    xchg_source_free(src);
    return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_add_source: %s",
                       !r                    ? "the reader is NULL"
                       : !src                ? "the source is NULL"
                       : r->opts.incremental ? "the input was ended (xchg_shuffle_reader_end_input)"
                                             : "sources are added before the first read (or set "
                                               "the incremental option)");
  }
  return shuffle_input_add(&r->in, src, err);
}

xchg_status xchg_shuffle_reader_end_input(xchg_shuffle_reader *r, xchg_error *err) {
  if (!r) return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_end_input: the reader is NULL");
  bring_planner_home(r);
  r->in.ended = 1;
  return XCHG_OK;
}

/* A call that reads: without the incremental option, the input is what
 * was added before it. */
static void start_reading(xchg_shuffle_reader *r) {
  if (!r->opts.incremental && !r->in.ended) r->in.ended = 1; /* (read by relays) */
}

/* A NULL reader or out is the caller's mistake, not a failure of the
 * reader: XCHG_EINVAL, which later calls do not repeat. */
static xchg_status null_argument(const char *who, const xchg_shuffle_reader *r, xchg_error *err) {
  return base_null_argument(who, r ? "out" : "the reader", err);
}

xchg_status xchg_shuffle_reader_schema(xchg_shuffle_reader *r, struct ArrowSchema *out,
                                       xchg_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!r || !out) return null_argument("xchg_shuffle_reader_schema", r, err);
  start_reading(r);
  bring_planner_home(r);
  while (!r->have_schema && r->failed == XCHG_OK) {
    int state = INPUT_READY;
    xchg_status st = r->blk.open ? XCHG_OK : open_block(r, &state, &r->failure);
    if (st == XCHG_OK && state == INPUT_NEEDED)
      return xchg_errorf(err, XCHG_EAGAIN, "no schema yet: the input so far holds no block");
    /* Not the reader's failure: its input, read to the end, is whole. */
    if (st == XCHG_OK && state == INPUT_ENDED)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "no schema: the input holds no block and the "
                         "options no schema message");
    if (st == XCHG_OK) st = step(r, &r->failure);
    if (st != XCHG_OK) fail(r, st, &r->failure);
  }
  if (r->failed != XCHG_OK) {
    if (err) *err = r->failure;
    return r->failed;
  }
  return ipc_schema_export(&r->schema, out, err);
}

int64_t xchg_shuffle_reader_dictionary_ids(const xchg_shuffle_reader *r, int64_t *ids,
                                           int64_t capacity) {
  return r && r->have_schema ? ipc_schema_dictionary_ids(&r->schema, ids, capacity) : 0;
}

xchg_status xchg_shuffle_reader_next(xchg_shuffle_reader *r, struct ArrowArray *out,
                                     xchg_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!r || !out) return null_argument("xchg_shuffle_reader_next", r, err);
  start_reading(r);
  if (r->failed != XCHG_OK) {
    if (err) *err = r->failure;
    return r->failed;
  }
  ipc_array *a;
  xchg_status st = produce(r, &a);
  if (st == XCHG_EAGAIN)
    return xchg_errorf(err, XCHG_EAGAIN,
                       "the reader needs more input: add a source, or end the "
                       "input");
  if (st == XCHG_OK && a) st = ipc_array_export(a, out, &r->failure);
  ipc_array_unref(a);
  if (st != XCHG_OK) {
    if (r->failed == XCHG_OK) fail(r, st, &r->failure);
    if (err) *err = r->failure;
    return st;
  }
  if (out->release) r->m.batches++;
  return XCHG_OK;
}

void xchg_shuffle_reader_get_metrics(const xchg_shuffle_reader *r,
                                     xchg_shuffle_reader_metrics *out) {
  if (!out) return;
  if (!r) { /* no reader: nothing read */
    memset(out, 0, sizeof *out);
    return;
  }
  *out = r->m;
  xchg_shuffle_reader_metrics live;
  const xchg_shuffle_reader_metrics *p = &r->planned_seen;
  if (!atomic_load(&r->planner_out)) { /* planning's counts as they are */
    live = r->pm;
    live.wait_ns = r->in.wait_ns;
    live.decompress_ns = r->in.decompress_ns;
    p = &live;
  }
  out->blocks = p->blocks;
  out->rows = p->rows;
  out->wire_bytes = p->wire_bytes;
  out->passthrough_batches = p->passthrough_batches;
  out->dictionary_cuts = p->dictionary_cuts;
  out->wait_ns = p->wait_ns;
  out->decompress_ns += p->decompress_ns;
}

void xchg_shuffle_reader_free(xchg_shuffle_reader *r) {
  if (!r) return;
  bring_planner_home(r);
  while (held_jobs(r) > 0) pop_job(r);
  for (int i = 0; i < JOBS_AHEAD; i++) {
    job *j = &r->jobs[i];
    coalescer_free(j->co);
    free(j->items);
    free(j->refs);
    free(j->out);
  }
  shuffle_input_free(&r->in);
  for (int64_t i = 0; r->seen && i < r->dicts.count; i++) free(r->seen[i].bytes);
  free(r->seen);
  ipc_dictionaries_free(&r->dicts);
  ipc_schema_free(&r->schema);
  free(r->schema_bytes);
  free(r->columns);
  free(r);
}
