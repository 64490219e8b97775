/* shuffle_reader.c — the reduce side of a shuffle (see xchg/shuffle.h).
 *
 * Three stages, each in input order:
 *   input    sources become chunks of whole blocks: a source in memory is
 *            one chunk, read in place; any other is read CHUNK_BYTES of
 *            whole blocks at a time.  Chunks become units: a chunk of plain
 *            IPC streams is one unit; a chunk of Comet blocks is cut into
 *            groups (GROUP_BLOCKS blocks or GROUP_BYTES compressed bytes),
 *            each decompressed by one task into an arena of its own (a
 *            stored block stays where it is), its codec contexts reused
 *            from block to block;
 *   planning the calling thread walks each block's IPC stream message by
 *            message, in place (chunk or arena): schemas are checked,
 *            dictionaries kept or replaced, and record batches assigned to
 *            the output batch being planned — a job — until it holds the
 *            target; a big uncompressed batch becomes a job of its own,
 *            decoded without a copy;
 *   placing  a job appends its record batches to its coalescer
 *            (coalesce.h) and validates the result.
 * With a pool, the groups of the next units decompress and the jobs place
 * on the pool while the caller plans the next ones and reads the earlier
 * ones, within readahead_bytes; a job takes its own reference on every
 * dictionary its batch uses and on the memory its record batches lie in,
 * so that the planner goes on while it runs.  Without one (or with one
 * thread) nothing runs ahead: a group decompresses when the planner gets
 * to it, and a record batch is placed as soon as it is planned.
 *
 * A coalesced batch that fails its validation has its blocks read again
 * one by one with an IPC reader, which names the block, message, field and
 * buffer at fault. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf/pool_internal.h"
#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "ipc/message.h"
#include "ipc/schema.h"
#include "shuffle/coalesce.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"

#define COMET_HEADER 20
#define COMET_WINDOW ((size_t)64 << 10) /* the decompressed pieces a group gathers */
#define CHUNK_BYTES ((size_t)1 << 20)   /* read at a time from a source not in memory */
#define GROUP_BLOCKS 32
#define GROUP_BYTES ((size_t)64 << 10)
#define UNITS_AHEAD 16 /* units held at most (chunks and groups) */
#define JOBS_AHEAD 8   /* output batches being built at most */
#define LANES 16       /* decompressing istreams kept for the next groups */

/* ---- state ----------------------------------------------------------------- */

/* A Comet block of a group, once decompressed. */
typedef struct group_block {
  size_t offset;       /* in the chunk: where its header starts */
  size_t wire;         /* its bytes in the chunk */
  const uint8_t *stream; /* its IPC stream: in the chunk (stored) or in the arena */
  size_t arena_at;     /* where in the arena, when it is there */
  size_t size;
  int in_chunk;
  int64_t field_count;
} group_block;

typedef struct xchg_shuffle_reader xchg_shuffle_reader;

/* A chunk of plain IPC streams, or a group of Comet blocks of a chunk. */
typedef struct unit {
  xchg_shuffle_reader *r;
  xchg_buf *chunk;
  int64_t source, base; /* the chunk's source and its offset there */
  int comet;
  size_t start, end;    /* its bytes in the chunk (start moves on as its IPC blocks are read) */
  int64_t bytes;        /* end - start, at first */
  /* Comet */
  group_block *blocks;
  int64_t n_blocks, failed_at; /* failed_at: the block decompression failed in, or n_blocks */
  uint8_t *arena;
  size_t arena_size, arena_cap;
  xchg_buf *arena_buf;
  xchg_status status;
  xchg_error error;
  int64_t ns;
  pool_loop loop;
  int started, finished;
} unit;

/* A block of a job, to read it again alone. */
typedef struct block_ref {
  int64_t index, source, offset; /* offset: in its source */
  size_t at;                     /* in its chunk */
  int comet;
  xchg_buf *chunk, *arena;       /* the memory the job reads (arena may be NULL) */
} block_ref;

/* A record batch of a job and where it is, for its errors. */
typedef struct placement {
  wire_batch w;
  int64_t ref;      /* its block: index into the job's refs */
  int64_t message;  /* index in the block's stream */
  size_t pos;       /* byte there */
} placement;

/* An output batch: planned, then placed (on the pool or inline). */
typedef struct job {
  xchg_shuffle_reader *r;
  coalescer *co;     /* the slot's, kept from job to job */
  int pass;          /* one batch decoded without a copy */
  ipc_message_view pass_message;
  placement *items;
  int64_t n_items, cap_items;
  block_ref *refs;
  int64_t n_refs, cap_refs;
  ipc_dictionaries dicts; /* the dictionaries in use when it was closed */
  int64_t rows, bytes;    /* planned: rows, decoded bytes (about) */
  int compressed;
  pool_loop loop;
  int started, finished;
  ipc_array **out;        /* its batches (two or more when offsets overflow) */
  int64_t n_out, cap_out, taken;
  int64_t placed;         /* items appended so far */
  xchg_status status;
  xchg_error error;
  int64_t ns, decoded_bytes;
} job;

/* The block being planned: its IPC stream and where the next message is. */
typedef struct block {
  int open;
  int64_t index, source, offset; /* block index, source, byte offset in the source */
  size_t at;                     /* in the chunk */
  const uint8_t *stream;
  size_t size, pos;
  xchg_buf *memory;              /* the buffer the stream lies in (chunk or arena) */
  int in_chunk;                  /* the stream is the chunk's own bytes, not decompressed */
  int64_t message;               /* index of the next message */
  int64_t field_count;           /* Comet: the header's, else -1 */
  int64_t ref;                   /* its entry in the open job's refs, or -1 */
} block;

/* What the reader has of a dictionary id: the bytes of the message that
 * set its values (a message with the same bytes changes nothing), and
 * whether the current block's stream has defined it. */
typedef struct dictionary_seen {
  uint8_t *bytes;
  size_t size;
  int defined;
} dictionary_seen;

/* What planning came to. */
enum { PLANNED, NEEDS_INPUT, INPUT_END };

struct xchg_shuffle_reader {
  xchg_shuffle_reader_options opts;
  int64_t *columns;
  int threads;
  /* Input: sources, then chunks. */
  xchg_source **sources;
  int64_t n_sources, sources_cap, next_source;
  int ended;               /* no source comes after those added */
  xchg_source *reading;    /* a source not in memory, being read chunk by chunk */
  int64_t reading_index;
  int64_t reading_pos;     /* its bytes read so far */
  int reading_comet;
  xchg_buf *chunk;         /* the chunk being cut into units */
  const uint8_t *data;
  size_t size, pos;
  int64_t chunk_source, chunk_base;
  int comet;
  /* Units. */
  unit units[UNITS_AHEAD];
  int64_t unit_head, unit_count, units_limit;
  int64_t unit_bytes;      /* input bytes of the units held */
  int64_t unit_block;      /* the next block of the first unit (Comet) */
  /* Istreams that groups decompress with, kept with their codec contexts:
   * a group takes one (or opens one) and gives it back. */
  pthread_mutex_t lanes_lock;
  xchg_istream *lanes[LANES];
  int n_lanes;
  block blk;
  int64_t next_block;
  /* Schema and dictionaries. */
  int have_schema;
  ipc_schema schema;
  uint8_t *schema_bytes;   /* the Message flatbuffer blocks' schemas are compared with */
  size_t schema_size;
  ipc_dictionaries dicts;
  dictionary_seen *seen;   /* per entry of dicts */
  /* Output. */
  job jobs[JOBS_AHEAD];    /* the last one is open while not started */
  int64_t job_head, job_count, jobs_limit;
  int64_t held_bytes;      /* planned bytes of the jobs held */
  int planned_end;         /* the input ended and every job is closed */
  xchg_status stopped;     /* planning failed: reported after the jobs before it */
  xchg_error stop_error;
  xchg_status failed;      /* sticky */
  xchg_error failure;
  xchg_shuffle_reader_metrics m;
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t le64(const uint8_t *p) { return fb_load_u64(p); }

static void free_malloced(void *ctx, const void *data, size_t size) {
  (void)ctx;
  (void)size;
  free((void *)data);
}

/* ---- errors ------------------------------------------------------------------- */

static xchg_status block_error(int64_t index, int64_t source, int64_t offset, xchg_status st,
                               xchg_error *err) {
  if (st != XCHG_OK)
    xchg_error_prefix(err, "block %lld (source %lld, byte %lld): ", (long long)index,
                      (long long)source, (long long)offset);
  return st;
}

static xchg_status in_block(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  return block_error(r->blk.index, r->blk.source, r->blk.offset, st, err);
}

/* ---- options ------------------------------------------------------------------ */

void xchg_shuffle_reader_options_init(xchg_shuffle_reader_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->framing = XCHG_SHUFFLE_FRAMING_AUTO;
  opts->target_rows = 8192;
  opts->target_bytes = (int64_t)64 << 20;
  xchg_read_options_init(&opts->read);
}

static xchg_status check_options(const xchg_shuffle_reader_options *o, xchg_error *err) {
  const char *bad = o->target_rows <= 0                               ? "target_rows is not positive"
                    : o->target_bytes <= 0                            ? "target_bytes is not positive"
                    : o->n_columns < 0                                ? "n_columns is negative"
                    : o->framing < 0 || o->framing > XCHG_SHUFFLE_FRAMING_IPC ? "framing is unknown"
                    : o->schema_message == NULL && o->schema_message_size ? "schema_message is NULL"
                    : o->read.readahead_bytes <= 0                    ? "read.readahead_bytes is not positive"
                                                                          : NULL;
  return bad ? xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_open: %s", bad) : XCHG_OK;
}

/* ---- the schema ------------------------------------------------------------- */

static xchg_status declare_dictionary(void *ctx, const ipc_field *field, xchg_error *err) {
  return ipc_dictionaries_declare(ctx, field, err);
}

/* Makes the Schema table r's schema, its columns selected. */
static xchg_status set_schema(xchg_shuffle_reader *r, const fb_table *table, const uint8_t *bytes,
                              size_t size, xchg_error *err) {
  xchg_status st = ipc_schema_parse(table, &r->opts.read, &r->schema, err);
  if (st != XCHG_OK) return st;
  r->have_schema = 1;
  if (r->schema.big_endian)
    return xchg_errorf(err, XCHG_ENOTSUP, "big-endian blocks are not read by the shuffle reader");
  if (r->columns && (st = ipc_schema_select_indices(&r->schema, r->columns, r->opts.n_columns, err)) != XCHG_OK)
    return st;
  if ((st = ipc_schema_visit_dictionaries(&r->schema, 0, declare_dictionary, &r->dicts, err)) != XCHG_OK ||
      (st = ipc_dictionaries_mark_used(&r->dicts, &r->schema, err)) != XCHG_OK)
    return st;
  r->seen = calloc((size_t)r->dicts.count + 1, sizeof *r->seen);
  r->schema_bytes = malloc(size + 1);
  if (!r->seen || !r->schema_bytes) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(r->schema_bytes, bytes, size);
  r->schema_size = size;
  return XCHG_OK;
}

/* The schema message given in the options, framed or not. */
static xchg_status given_schema(xchg_shuffle_reader *r, xchg_error *err) {
  const uint8_t *p = r->opts.schema_message;
  size_t size = r->opts.schema_message_size;
  fb_table table;
  xchg_status st = ipc_schema_message_table(p, size, &table, err);
  if (st == XCHG_OK && size >= 8 && ipc_prefix_size(p) == 8) {
    p += 8;
    size = fb_load_u32(p - 4);
  }
  if (st == XCHG_OK) st = set_schema(r, &table, p, size, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "the options' schema message: ");
  return st;
}

/* A block's schema message: the first makes the schema; the others must
 * be byte for byte the same, or describe the same columns. */
static xchg_status take_schema(xchg_shuffle_reader *r, const ipc_message_view *m, xchg_error *err) {
  xchg_status st = XCHG_OK;
  if (r->blk.message != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %zu: a second schema message",
                       (long long)r->blk.message, r->blk.pos);
  if (!r->have_schema) {
    st = set_schema(r, &m->header, m->metadata, (size_t)m->metadata_size, err);
  } else if ((size_t)m->metadata_size != r->schema_size ||
             memcmp(m->metadata, r->schema_bytes, r->schema_size) != 0) {
    ipc_schema theirs;
    st = ipc_schema_parse(&m->header, &r->opts.read, &theirs, err);
    if (st == XCHG_OK && !ipc_schema_equal(&theirs, &r->schema, err)) st = XCHG_EFORMAT;
    if (st != XCHG_OK) xchg_error_prefix(err, "its schema is not the first block's: ");
    ipc_schema_free(&theirs);
  }
  if (st == XCHG_OK && r->blk.field_count >= 0 && r->blk.field_count != r->schema.root.n_children)
    st = xchg_errorf(err, XCHG_EFORMAT, "its header's field count is %lld, the schema has %lld "
                     "fields", (long long)r->blk.field_count, (long long)r->schema.root.n_children);
  for (int64_t i = 0; r->seen && i < r->dicts.count; i++) r->seen[i].defined = 0;
  return st;
}

/* ---- sources into chunks ----------------------------------------------------------- */

/* The chunk being read from a source that is not in memory. */
typedef struct filling {
  uint8_t *data;
  size_t size, cap;
  int end; /* the source has no more bytes, or the rest cannot be whole blocks */
} filling;

/* Reads the source being read until f holds `size` bytes; f->end when it
 * ends first. */
static xchg_status fill_to(xchg_shuffle_reader *r, filling *f, size_t size, xchg_error *err) {
  if (size <= f->size) return XCHG_OK;
  if (size > f->cap) {
    size_t cap = f->cap ? f->cap : 4096;
    while (cap < size) cap *= 2;
    uint8_t *more = realloc(f->data, cap);
    if (!more) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", cap);
    f->data = more;
    f->cap = cap;
  }
  size_t got = 0, n = size - f->size;
  xchg_status st = xchg_source_read(r->reading, f->data + f->size, n, &got, err);
  f->size += got;
  r->reading_pos += (int64_t)got;
  if (st == XCHG_OK && got < n) f->end = 1;
  return st;
}

/* A block's stated size, which is read into memory whole. */
static xchg_status check_block_size(const xchg_shuffle_reader *r, uint64_t size, int64_t at,
                                    xchg_error *err) {
  if (size <= (uint64_t)r->opts.read.max_batch_bytes) return XCHG_OK;
  return xchg_errorf(err, XCHG_ELIMIT, "the block at byte %lld states %llu bytes, more than "
                     "max_batch_bytes (%lld), the most of a block read into memory",
                     (long long)at, (unsigned long long)size, (long long)r->opts.read.max_batch_bytes);
}

/* Whole Comet blocks, their headers telling where each ends. */
static xchg_status fill_comet(xchg_shuffle_reader *r, filling *f, int64_t base, xchg_error *err) {
  xchg_status st = XCHG_OK;
  for (size_t at = 0; st == XCHG_OK && !f->end && at < CHUNK_BYTES;) {
    if ((st = fill_to(r, f, at + COMET_HEADER, err)) != XCHG_OK || f->end) break;
    uint64_t len = le64(f->data + at);
    if (len < COMET_HEADER - 8) { /* bad: the group reading it says so */
      f->end = 1;
      break;
    }
    if ((st = check_block_size(r, len, base + (int64_t)at, err)) == XCHG_OK)
      st = fill_to(r, f, at + 8 + (size_t)len, err);
    at += 8 + (size_t)len;
  }
  return st;
}

/* Whole IPC streams, message by message, up to their end-of-stream
 * markers.  Framing that is not right ends the chunk: planning it says
 * what is wrong, and where. */
static xchg_status fill_ipc(xchg_shuffle_reader *r, filling *f, int64_t base, xchg_error *err) {
  xchg_status st = XCHG_OK;
  size_t stream_at = 0; /* where the stream being read starts */
  for (size_t at = 0; st == XCHG_OK && !f->end;) {
    if ((st = fill_to(r, f, at + 4, err)) != XCHG_OK || f->end) break;
    size_t prefix = ipc_prefix_size(f->data + at);
    if ((st = fill_to(r, f, at + prefix, err)) != XCHG_OK || f->end) break;
    int32_t length;
    if (ipc_prefix_decode(f->data + at, 0, 0, r->opts.read.max_metadata_bytes, &length, NULL) != XCHG_OK) {
      f->end = 1;
      break;
    }
    at += prefix;
    if (length == 0) { /* the end of a stream: the chunk may end here */
      stream_at = at;
      if (at >= CHUNK_BYTES) break;
      continue;
    }
    if ((st = fill_to(r, f, at + (size_t)length, err)) != XCHG_OK || f->end) break;
    fb_table header;
    int type, version;
    int64_t body;
    if (ipc_message_parse(f->data + at, (size_t)length, 0, 0, &header, &type, &version, &body, NULL) != XCHG_OK ||
        body < 0) {
      f->end = 1;
      break;
    }
    at += (size_t)length;
    if ((st = check_block_size(r, (uint64_t)body + (at - stream_at), base + (int64_t)stream_at, err)) == XCHG_OK)
      st = fill_to(r, f, at + (size_t)body, err);
    at += (size_t)body;
  }
  return st;
}

static void drop_chunk(xchg_shuffle_reader *r) {
  xchg_buf_unref(r->chunk);
  r->chunk = NULL;
  r->data = NULL;
  r->size = r->pos = 0;
}

static int comet_bytes(const xchg_shuffle_reader *r, const uint8_t *p, size_t n) {
  if (r->opts.framing != XCHG_SHUFFLE_FRAMING_AUTO) return r->opts.framing == XCHG_SHUFFLE_FRAMING_COMET;
  return xchg_stream_codec_detect(p, n) == XCHG_STREAM_COMET;
}

static xchg_status set_chunk(xchg_shuffle_reader *r, xchg_buf *chunk, int64_t source, int64_t base,
                             int comet) {
  r->chunk = chunk;
  r->data = xchg_buf_data(chunk);
  r->size = xchg_buf_size(chunk);
  r->pos = 0;
  r->chunk_source = source;
  r->chunk_base = base;
  r->comet = comet;
  return XCHG_OK;
}

/* The next chunk of the source being read; none at its end. */
static xchg_status read_chunk(xchg_shuffle_reader *r, int *got, xchg_error *err) {
  int64_t t0 = now_ns(), base = r->reading_pos;
  filling f = {0};
  xchg_status st = XCHG_OK;
  if (base == 0) { /* its first bytes tell its framing */
    st = fill_to(r, &f, COMET_HEADER, err);
    r->reading_comet = comet_bytes(r, f.data, f.size);
  }
  if (st == XCHG_OK && !f.end)
    st = r->reading_comet ? fill_comet(r, &f, base, err) : fill_ipc(r, &f, base, err);
  r->m.wait_ns += now_ns() - t0;
  *got = 0;
  xchg_buf *chunk = NULL;
  if (st == XCHG_OK && f.size > 0 && !(chunk = xchg_buf_wrap(f.data, f.size, free_malloced, NULL)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st != XCHG_OK || !chunk) free(f.data);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "source %lld: ", (long long)r->reading_index);
    return st;
  }
  if (f.end || !chunk) {
    xchg_source_free(r->reading);
    r->reading = NULL;
  }
  if (!chunk) return XCHG_OK;
  *got = 1;
  return set_chunk(r, chunk, r->reading_index, base, r->reading_comet);
}

/* Moves on to the next chunk with bytes in it: *state PLANNED when there
 * is one, else NEEDS_INPUT or INPUT_END. */
static xchg_status next_chunk(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  drop_chunk(r);
  for (;;) {
    if (r->reading) {
      int got;
      xchg_status st = read_chunk(r, &got, err);
      if (st != XCHG_OK || got) {
        *state = PLANNED;
        return st;
      }
      continue;
    }
    if (r->next_source == r->n_sources) {
      *state = r->ended ? INPUT_END : NEEDS_INPUT;
      return XCHG_OK;
    }
    int64_t index = r->next_source++;
    xchg_source *src = r->sources[index];
    r->sources[index] = NULL;
    xchg_buf *memory = xchg_source_memory(src);
    if (!memory) {
      r->reading = src;
      r->reading_index = index;
      r->reading_pos = 0;
      continue;
    }
    xchg_source_free(src);
    if (xchg_buf_size(memory) == 0) {
      xchg_buf_unref(memory);
      continue;
    }
    *state = PLANNED;
    return set_chunk(r, memory, index, 0, comet_bytes(r, xchg_buf_data(memory), xchg_buf_size(memory)));
  }
}

/* ---- chunks into units -------------------------------------------------------------- */

static unit *unit_at(xchg_shuffle_reader *r, int64_t k) {
  return &r->units[(r->unit_head + k) % UNITS_AHEAD];
}

/* Gathers n decompressed bytes into the group's arena. */
static xchg_status gather(unit *u, const void *p, size_t n, xchg_error *err) {
  const xchg_read_options *o = &u->r->opts.read;
  if (u->arena_size + n > (size_t)o->max_batch_bytes)
    return xchg_errorf(err, XCHG_ELIMIT, "its IPC stream decompresses to more than max_batch_bytes "
                       "(%lld) with the blocks before it in its group", (long long)o->max_batch_bytes);
  if (u->arena_size + n > u->arena_cap) {
    size_t cap = u->arena_cap ? u->arena_cap : 4 * (u->end - u->start) + 4096;
    while (cap < u->arena_size + n) cap *= 2;
    uint8_t *a = realloc(u->arena, cap);
    if (!a) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", cap);
    u->arena = a;
    u->arena_cap = cap;
  }
  memcpy(u->arena + u->arena_size, p, n);
  u->arena_size += n;
  return XCHG_OK;
}

/* Block i of the group out of s: a stored block's one window in the
 * chunk stays there; anything else goes to the arena. */
static xchg_status decompress_block(unit *u, xchg_istream *s, int64_t i, xchg_error *err) {
  group_block *b = &u->blocks[i];
  const uint8_t *chunk = xchg_buf_data(u->chunk), *in_place = NULL;
  size_t chunk_size = xchg_buf_size(u->chunk), in_place_size = 0;
  b->arena_at = u->arena_size;
  xchg_status st = XCHG_OK;
  for (int first = 1;; first = 0) {
    const void *p;
    size_t n;
    if ((st = xchg_istream_next(s, &p, &n, err)) != XCHG_OK || n == 0) break;
    if (first) b->field_count = xchg_istream_comet_field_count(s);
    const uint8_t *q = p;
    if (first && q >= chunk && q + n <= chunk + chunk_size) {
      in_place = q;
      in_place_size = n;
      continue;
    }
    if (in_place && (st = gather(u, in_place, in_place_size, err)) != XCHG_OK) break;
    in_place = NULL;
    if ((st = gather(u, p, n, err)) != XCHG_OK) break;
  }
  b->in_chunk = in_place != NULL && st == XCHG_OK;
  b->stream = b->in_chunk ? in_place : NULL;
  b->size = b->in_chunk ? in_place_size : u->arena_size - b->arena_at;
  return st;
}

/* An istream over the chunk from byte `start`: a kept one, reset, or a new
 * one. */
static xchg_status take_lane(xchg_shuffle_reader *r, xchg_buf *chunk, size_t start,
                             xchg_istream **out, xchg_error *err) {
  xchg_source *src;
  xchg_status st = xchg_source_from_buf(chunk, &src, err);
  if (st == XCHG_OK && (st = xchg_source_seek(src, start, err)) != XCHG_OK) xchg_source_free(src);
  if (st != XCHG_OK) return st;
  pthread_mutex_lock(&r->lanes_lock);
  xchg_istream *s = r->n_lanes > 0 ? r->lanes[--r->n_lanes] : NULL;
  pthread_mutex_unlock(&r->lanes_lock);
  if (s) {
    *out = s;
    return xchg_istream_reset(s, src, err);
  }
  xchg_stream_options so;
  xchg_stream_options_init(&so);
  so.split_members = 1;
  so.metrics = 0;
  so.window_size = COMET_WINDOW;
  return xchg_istream_open(src, XCHG_STREAM_COMET, &so, out, err);
}

static void give_lane(xchg_shuffle_reader *r, xchg_istream *s) {
  if (!s) return;
  pthread_mutex_lock(&r->lanes_lock);
  if (r->n_lanes < LANES) {
    r->lanes[r->n_lanes++] = s;
    s = NULL;
  }
  pthread_mutex_unlock(&r->lanes_lock);
  xchg_istream_free(s);
}

/* The task of a group: its blocks decompressed, one istream for all. */
static void decompress_group(void *ctx, int64_t task) {
  (void)task;
  unit *u = ctx;
  int64_t t0 = now_ns();
  xchg_istream *s = NULL;
  xchg_status st = take_lane(u->r, u->chunk, u->start, &s, &u->error);
  int64_t i = 0;
  for (; st == XCHG_OK && i < u->n_blocks; i++) {
    int more = 1;
    if (i > 0) st = xchg_istream_next_member(s, &more, &u->error);
    if (st == XCHG_OK && !more)
      st = xchg_errorf(&u->error, XCHG_EIO, "the input ends before the block");
    if (st == XCHG_OK) st = decompress_block(u, s, i, &u->error);
    if (st != XCHG_OK) break;
  }
  give_lane(u->r, s);
  u->failed_at = st == XCHG_OK ? u->n_blocks : i;
  u->status = st;
  if (u->arena && !(u->arena_buf = xchg_buf_wrap(u->arena, u->arena_size, free_malloced, NULL))) {
    free(u->arena);
    if (st == XCHG_OK) {
      u->status = xchg_errorf(&u->error, XCHG_ENOMEM, "out of memory");
      u->failed_at = 0;
    }
  }
  u->arena = NULL;
  for (int64_t k = 0; k < u->failed_at; k++)
    if (!u->blocks[k].in_chunk) u->blocks[k].stream = u->arena_buf ? xchg_buf_data(u->arena_buf) + u->blocks[k].arena_at : NULL;
  u->ns = now_ns() - t0;
}

/* A stored Comet block (tag NONE) whose bytes are all there: its IPC
 * stream is read in place, without a task. */
static int stored_in_place(const uint8_t *h, size_t left) {
  if (left < COMET_HEADER || memcmp(h + 16, "NONE", 4) != 0) return 0;
  uint64_t len = le64(h);
  return len >= COMET_HEADER - 8 && len <= left - 8;
}

/* Cuts the next group of Comet blocks off the chunk: stored blocks read in
 * place, or blocks to decompress, up to GROUP_BLOCKS and GROUP_BYTES.  A
 * header that cannot be right ends the group: its block's decompression
 * says how. */
static xchg_status cut_group(xchg_shuffle_reader *r, unit *u, int *stored, xchg_error *err) {
  size_t pos = r->pos;
  *stored = 0;
  int64_t cap = 8;
  u->blocks = malloc((size_t)cap * sizeof *u->blocks);
  if (!u->blocks) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  *stored = stored_in_place(r->data + pos, r->size - pos);
  while (pos < r->size && u->n_blocks < GROUP_BLOCKS && pos - r->pos < GROUP_BYTES &&
         stored_in_place(r->data + pos, r->size - pos) == *stored) {
    if (u->n_blocks == cap) {
      group_block *more = realloc(u->blocks, (size_t)(cap *= 2) * sizeof *more);
      if (!more) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
      u->blocks = more;
    }
    size_t left = r->size - pos;
    uint64_t len = left >= 8 ? le64(r->data + pos) : UINT64_MAX;
    int whole = len < left - 8 + (left >= 8) && len >= COMET_HEADER - 8;
    size_t wire = whole ? (size_t)len + 8 : left;
    group_block *b = &u->blocks[u->n_blocks++];
    *b = (group_block){.offset = pos, .wire = wire, .field_count = -1};
    if (*stored) {
      uint64_t fields = le64(r->data + pos + 8);
      *b = (group_block){pos, wire, r->data + pos + COMET_HEADER, 0, wire - COMET_HEADER, 1,
                         fields > INT64_MAX ? -1 : (int64_t)fields};
    }
    pos += wire;
    if (!whole) break;
  }
  u->end = pos;
  r->pos = pos;
  u->failed_at = u->n_blocks;
  return XCHG_OK;
}

/* Starts units while there is room: every chunk of plain IPC streams,
 * every group of Comet blocks. */
static xchg_status fill_units(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  *state = PLANNED;
  while (r->unit_count < r->units_limit &&
         (r->unit_count == 0 || r->unit_bytes < r->opts.read.readahead_bytes)) {
    xchg_status st = XCHG_OK;
    if (r->pos >= r->size && ((st = next_chunk(r, state, err)) != XCHG_OK || *state != PLANNED))
      return st;
    unit *u = unit_at(r, r->unit_count);
    *u = (unit){.r = r, .chunk = xchg_buf_ref(r->chunk), .source = r->chunk_source,
                .base = r->chunk_base, .comet = r->comet, .start = r->pos, .end = r->size};
    r->unit_count++;
    if (!r->comet) {
      r->pos = r->size;
      r->unit_bytes += u->bytes = (int64_t)(u->end - u->start);
      continue;
    }
    int stored;
    if ((st = cut_group(r, u, &stored, err)) != XCHG_OK) return st;
    r->unit_bytes += u->bytes = (int64_t)(u->end - u->start);
    if (stored) continue;
    pool_loop_start(r->threads > 1 ? r->opts.read.pool : NULL, &u->loop, 1, decompress_group, u);
    u->started = 1;
  }
  return XCHG_OK;
}

static void unit_free(xchg_shuffle_reader *r, unit *u) {
  if (u->started && !u->finished) pool_loop_cancel(r->opts.read.pool, &u->loop);
  xchg_buf_unref(u->chunk);
  xchg_buf_unref(u->arena_buf);
  free(u->arena);
  free(u->blocks);
  memset(u, 0, sizeof *u);
}

static void pop_unit(xchg_shuffle_reader *r) {
  unit *u = unit_at(r, 0);
  r->unit_bytes -= u->bytes;
  unit_free(r, u);
  r->unit_head = (r->unit_head + 1) % UNITS_AHEAD;
  r->unit_count--;
  r->unit_block = 0;
}

/* The first unit, decompressed; *state NEEDS_INPUT or INPUT_END when there
 * is none. */
static xchg_status first_unit(xchg_shuffle_reader *r, unit **out, int *state, xchg_error *err) {
  *out = NULL;
  xchg_status st = fill_units(r, state, err);
  if (st != XCHG_OK || r->unit_count == 0) return st;
  *state = PLANNED;
  unit *u = *out = unit_at(r, 0);
  if (u->started && !u->finished) {
    pool_loop_finish(r->opts.read.pool, &u->loop);
    u->finished = 1;
    r->m.decompress_ns += u->ns;
  }
  return XCHG_OK;
}

/* ---- blocks ---------------------------------------------------------------------- */

/* Starts the next block; *state is PLANNED when there is one. */
static xchg_status open_block(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  unit *u;
  xchg_status st;
  for (;;) {
    if ((st = first_unit(r, &u, state, err)) != XCHG_OK || !u) return st;
    if (u->comet ? r->unit_block < u->n_blocks : u->start < u->end) break;
    pop_unit(r);
  }
  block *b = &r->blk;
  *b = (block){.open = 1, .index = r->next_block++, .source = u->source, .field_count = -1,
               .memory = u->chunk, .in_chunk = 1, .ref = -1};
  r->m.blocks++;
  const uint8_t *chunk = xchg_buf_data(u->chunk);
  if (!u->comet) {
    b->at = u->start;
    b->stream = chunk + u->start;
    b->size = u->end - u->start;
    b->offset = u->base + (int64_t)b->at;
    return XCHG_OK;
  }
  const group_block *g = &u->blocks[r->unit_block];
  b->at = g->offset;
  b->offset = u->base + (int64_t)g->offset;
  r->m.wire_bytes += (int64_t)g->wire;
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
  unit *u = unit_at(r, 0);
  b->open = 0;
  if (!u->comet) {
    u->start += b->pos;
    r->m.wire_bytes += (int64_t)b->pos;
    return XCHG_OK;
  }
  r->unit_block++;
  if (b->pos < b->size)
    return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "%zu bytes follow its IPC stream's "
                                   "end-of-stream marker", b->size - b->pos), err);
  return XCHG_OK;
}

/* ---- jobs ------------------------------------------------------------------------ */

static job *job_at(xchg_shuffle_reader *r, int64_t k) {
  return &r->jobs[(r->job_head + k) % JOBS_AHEAD];
}

/* The job being planned, opened when there is none. */
static job *open_job(xchg_shuffle_reader *r) {
  if (r->job_count > 0 && !job_at(r, r->job_count - 1)->started) return job_at(r, r->job_count - 1);
  job *j = job_at(r, r->job_count++);
  j->r = r;
  j->pass = 0;
  j->n_items = j->n_refs = j->n_out = j->taken = j->placed = 0;
  j->rows = j->bytes = j->ns = j->decoded_bytes = 0;
  j->compressed = j->started = j->finished = 0;
  j->status = XCHG_OK;
  r->blk.ref = -1;
  return j;
}

static int64_t open_rows(const xchg_shuffle_reader *r) {
  if (r->job_count == 0) return 0;
  const job *j = &r->jobs[(r->job_head + r->job_count - 1) % JOBS_AHEAD];
  return j->started ? 0 : j->rows;
}

static void forget_refs(job *j) {
  for (int64_t i = 0; i < j->n_refs; i++) {
    xchg_buf_unref(j->refs[i].chunk);
    xchg_buf_unref(j->refs[i].arena);
  }
  j->n_refs = 0;
}

/* Empties a job for its slot's next use (its coalescer and arrays kept). */
static void job_clear(xchg_shuffle_reader *r, job *j) {
  if (j->started && !j->finished) pool_loop_cancel(r->opts.read.pool, &j->loop);
  forget_refs(j);
  for (int64_t i = j->taken; i < j->n_out; i++) ipc_array_unref(j->out[i]);
  j->n_out = j->taken = 0;
  ipc_dictionaries_free(&j->dicts);
  j->n_items = 0;
  j->started = j->finished = 0;
}

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
  unit *u = unit_at(r, 0);
  j->refs[j->n_refs] = (block_ref){b->index, b->source, b->offset, b->at, u->comet,
                                   xchg_buf_ref(u->chunk), b->in_chunk ? NULL : xchg_buf_ref(b->memory)};
  b->ref = j->n_refs++;
  return XCHG_OK;
}

/* Takes the dictionaries in use for the job: the planner may replace
 * them while it runs. */
static xchg_status keep_dictionaries(xchg_shuffle_reader *r, job *j, xchg_error *err) {
  j->dicts.count = 0;
  if (r->dicts.count == 0) return XCHG_OK;
  j->dicts.items = malloc((size_t)r->dicts.count * sizeof *j->dicts.items);
  if (!j->dicts.items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t i = 0; i < r->dicts.count; i++) {
    j->dicts.items[i] = r->dicts.items[i];
    ipc_array_ref(j->dicts.items[i].values);
  }
  j->dicts.count = r->dicts.count;
  return XCHG_OK;
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
static xchg_status read_alone(const xchg_shuffle_reader *r, const block_ref *ref, xchg_error *err) {
  xchg_source *src;
  const uint8_t *data = xchg_buf_data(ref->chunk);
  size_t size = xchg_buf_size(ref->chunk) - ref->at;
  if (ref->comet && size >= 8 && le64(data + ref->at) < size - 8) size = (size_t)le64(data + ref->at) + 8;
  xchg_status st = xchg_source_from_memory(data + ref->at, size, NULL, NULL, &src, err);
  xchg_istream *s = NULL;
  if (st == XCHG_OK && ref->comet && (st = xchg_istream_open(src, XCHG_STREAM_COMET, NULL, &s, err)) == XCHG_OK)
    st = xchg_istream_to_source(s, &src, err);
  xchg_read_options opts = r->opts.read;
  opts.pool = NULL;
  xchg_ipc_reader *reader = NULL;
  if (st == XCHG_OK) st = xchg_ipc_reader_open(src, &opts, &reader, err);
  if (st == XCHG_OK && r->columns) st = xchg_ipc_reader_select_indices(reader, r->columns, r->opts.n_columns, err);
  for (struct ArrowArray a = {0}; st == XCHG_OK;) {
    st = xchg_ipc_reader_next(reader, &a, err);
    if (!a.release) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(reader);
  return block_error(ref->index, ref->source, ref->offset, st, err);
}

/* A coalesced batch failed its validation: which block has the fault? */
static xchg_status name_block(const job *j, xchg_status st, xchg_error *err) {
  xchg_error alone;
  for (int64_t i = 0; i < j->n_refs; i++) {
    xchg_status found = read_alone(j->r, &j->refs[i], &alone);
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
static xchg_status placement_error(const job *j, const placement *p, xchg_status st, xchg_error *err) {
  const block_ref *ref = &j->refs[p->ref];
  xchg_error_prefix(err, "message %lld at byte %zu: ", (long long)p->message, p->pos);
  return block_error(ref->index, ref->source, ref->offset, st, err);
}

/* Appends the job's next record batch; when the output's offsets cannot
 * take it, the batch so far goes out first. */
static xchg_status place_next(job *j, xchg_error *err) {
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
  const xchg_shuffle_reader *r = j->r;
  const ipc_message_view *m = &j->pass_message;
  const block_ref *ref = &j->refs[0];
  const uint8_t *body = m->metadata + m->metadata_size; /* the body follows the metadata */
  ipc_body in = {xchg_buf_slice(ref->chunk, (size_t)(body - xchg_buf_data(ref->chunk)), (size_t)m->body_length),
                 NULL, 0, m->body_length};
  if (!in.mem) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  ipc_decode_ctx ctx = {&r->opts.read, 0, m->version, j->items[0].message, ipc_dictionaries_lookup,
                        (void *)&j->dicts, NULL, NULL};
  const ipc_field *root = &r->schema.root;
  ipc_array *a = NULL;
  xchg_status st = ipc_decode_batch(&ctx, &m->header, &in, root->children, root->n_children, 0, &a, err);
  xchg_buf_unref(in.mem);
  if (st != XCHG_OK) return placement_error(j, &j->items[0], st, err);
  j->decoded_bytes += m->body_length;
  return push_out(j, a, err);
}

/* The task of a job: its record batches placed, the batch finished. */
static void run_job(void *ctx, int64_t task) {
  (void)task;
  job *j = ctx;
  int64_t t0 = now_ns();
  xchg_status st = XCHG_OK;
  if (j->pass) {
    st = pass_batch(j, &j->error);
  } else {
    while (st == XCHG_OK && j->placed < j->n_items)
      if ((st = place_next(j, &j->error)) != XCHG_OK) st = placement_error(j, &j->items[j->placed], st, &j->error);
    if (st == XCHG_OK && coalescer_rows(j->co) > 0) st = finish_batch(j, &j->error);
  }
  j->status = st;
  j->ns += now_ns() - t0;
}

/* Closes the open job: it runs on the pool, or here without one. */
static xchg_status close_job(xchg_shuffle_reader *r, xchg_error *err) {
  job *j = job_at(r, r->job_count - 1);
  xchg_status st = keep_dictionaries(r, j, err);
  if (st != XCHG_OK) return st;
  j->started = 1;
  r->held_bytes += j->bytes;
  r->blk.ref = -1;
  pool_loop_start(r->threads > 1 ? r->opts.read.pool : NULL, &j->loop, 1, run_job, j);
  return XCHG_OK;
}

/* Jobs closed and not yet handed out. */
static int64_t closed_jobs(const xchg_shuffle_reader *r) {
  int open = r->job_count > 0 && !r->jobs[(r->job_head + r->job_count - 1) % JOBS_AHEAD].started;
  return r->job_count - open;
}

/* Room to plan another job: without a pool, one at a time. */
static int has_room(const xchg_shuffle_reader *r) {
  if (r->threads <= 1) return closed_jobs(r) == 0;
  return closed_jobs(r) < r->jobs_limit && r->held_bytes < r->opts.read.readahead_bytes;
}

/* ---- dictionaries ----------------------------------------------------------------- */

static int64_t dictionary_slot(const xchg_shuffle_reader *r, int64_t id) {
  for (int64_t i = 0; i < r->dicts.count; i++)
    if (r->dicts.items[i].id == id) return i;
  return -1;
}

/* The body of a message at `offset` of the block's stream, as a slice of
 * the memory the stream lies in. */
static xchg_buf *body_slice(const xchg_shuffle_reader *r, size_t offset, int64_t length) {
  const uint8_t *p = r->blk.stream + offset;
  return xchg_buf_slice(r->blk.memory, (size_t)(p - xchg_buf_data(r->blk.memory)), (size_t)length);
}

/* A dictionary message: the same bytes as the one in use change nothing;
 * other values first cut the batch (*consumed 0: the message is taken up
 * again once the batch is closed), then replace or extend the dictionary. */
static xchg_status take_dictionary(xchg_shuffle_reader *r, const ipc_message_view *m,
                                   int *consumed, xchg_error *err) {
  block *b = &r->blk;
  ipc_dictionary_batch d;
  xchg_status st = ipc_dictionary_batch_read(&r->dicts, &m->header, b->message, (int64_t)b->pos, &d, err);
  int64_t slot = st == XCHG_OK ? dictionary_slot(r, d.id) : -1;
  if (st != XCHG_OK || !ipc_dictionaries_used(&r->dicts, d.id)) return st;
  dictionary_seen *seen = &r->seen[slot];
  const uint8_t *bytes = b->stream + b->pos;
  size_t size = (size_t)m->size;
  if (!d.delta && seen->bytes && seen->size == size && memcmp(seen->bytes, bytes, size) == 0) {
    seen->defined = 1;
    return XCHG_OK;
  }
  if (open_rows(r) > 0) {
    *consumed = 0;
    r->m.dictionary_cuts++;
    return close_job(r, err);
  }
  ipc_body body = {body_slice(r, b->pos + (size_t)m->body_offset, m->body_length), NULL, 0, m->body_length};
  if (!body.mem) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  ipc_decode_ctx ctx = {&r->opts.read, 0, m->version, b->message, ipc_dictionaries_lookup, &r->dicts, NULL, NULL};
  st = ipc_dictionary_batch_apply(&r->dicts, &d, &ctx, &body, r->opts.read.max_dictionary_bytes,
                                  b->message, (int64_t)b->pos, err);
  xchg_buf_unref(body.mem);
  if (st != XCHG_OK) return st;
  uint8_t *keep = realloc(seen->bytes, size + 1);
  if (!keep) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(keep, bytes, size);
  *seen = (dictionary_seen){keep, size, 1};
  return XCHG_OK;
}

/* Every dictionary the selected columns use is defined by this block's
 * stream, as a stream read alone requires. */
static xchg_status check_dictionaries_defined(const xchg_shuffle_reader *r, xchg_error *err) {
  for (int64_t i = 0; i < r->dicts.count; i++)
    if (r->dicts.items[i].used && !r->seen[i].defined)
      return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %zu: dictionary %lld is used "
                         "before the block defines it", (long long)r->blk.message, r->blk.pos,
                         (long long)r->dicts.items[i].id);
  return XCHG_OK;
}

/* ---- record batches -------------------------------------------------------------- */

/* A batch at least as large as the target, in memory uncompressed, with
 * nothing pending before it: decoded alone, pointing into the source. */
static int passes_through(const xchg_shuffle_reader *r, const wire_batch *w) {
  return r->blk.in_chunk && w->codec == XCHG_BLOCK_NONE && open_rows(r) == 0 &&
         (w->rows >= r->opts.target_rows || w->body_length >= r->opts.target_bytes);
}

static xchg_status message_error(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  xchg_error_prefix(err, "message %lld at byte %zu: ", (long long)r->blk.message, r->blk.pos);
  return st;
}

static xchg_status add_placement(job *j, const placement *p, xchg_error *err) {
  if (j->n_items == j->cap_items) {
    int64_t cap = j->cap_items ? 2 * j->cap_items : 64;
    placement *items = realloc(j->items, (size_t)cap * sizeof *items);
    if (!items) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    j->items = items;
    j->cap_items = cap;
  }
  j->items[j->n_items++] = *p;
  return XCHG_OK;
}

static xchg_status take_batch(xchg_shuffle_reader *r, const ipc_message_view *m, xchg_error *err) {
  wire_batch w;
  block *b = &r->blk;
  xchg_status st = wire_batch_open(&m->header, m->version, b->stream + b->pos + m->body_offset,
                                   m->body_length, &w, err);
  if (st == XCHG_OK) st = check_dictionaries_defined(r, err);
  if (st != XCHG_OK) return message_error(r, st, err);
  if (w.rows == 0) return XCHG_OK;
  int pass = passes_through(r, &w);
  job *j = open_job(r);
  if (!j->co && (st = coalescer_create(&r->schema, &r->opts.read, r->opts.target_rows, &j->co, err)) != XCHG_OK)
    return st;
  if ((st = add_ref(r, j, err)) != XCHG_OK) return st;
  placement p = {w, b->ref, b->message, b->pos};
  if ((st = add_placement(j, &p, err)) != XCHG_OK) return st;
  j->rows += w.rows;
  j->bytes += wire_batch_bytes(&w);
  j->compressed |= w.codec != XCHG_BLOCK_NONE || !b->in_chunk;
  r->m.rows += w.rows;
  if (pass) {
    j->pass = 1;
    j->pass_message = *m;
    r->m.passthrough_batches++;
    return close_job(r, err);
  }
  /* Without a pool, the batch is placed now: its stream may be in a
   * window that the next block reuses. */
  if (r->threads <= 1 && (st = place_next(j, err)) != XCHG_OK) return message_error(r, st, err);
  return j->rows >= r->opts.target_rows || j->bytes >= r->opts.target_bytes ? close_job(r, err) : XCHG_OK;
}

/* ---- the steps ------------------------------------------------------------------- */

/* The end of the block's bytes before its end-of-stream marker. */
static xchg_status stream_cut(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  if (r->opts.read.allow_missing_eos) return close_block(r, err);
  return in_block(r, xchg_errorf(err, XCHG_EIO, "its IPC stream ends at byte %zu, before message "
                                 "%lld, without the end-of-stream marker (truncated%s?)", b->size,
                                 (long long)b->message, unit_at(r, 0)->comet ? ", or the block's length "
                                 "shorter than its stream" : ""), err);
}

/* Takes one message of the block, or closes a job before it. */
static xchg_status step(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  if (b->pos == b->size) return stream_cut(r, err);
  ipc_message_view m;
  xchg_status st = ipc_message_view_decode(b->stream + b->pos, b->size - b->pos, b->message,
                                           (int64_t)b->pos, r->opts.read.max_metadata_bytes, &m, err);
  if (st != XCHG_OK) return in_block(r, st, err);
  if (m.eos) {
    if (b->message == 0)
      return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "its IPC stream has no schema message"), err);
    b->pos += (size_t)m.size;
    return close_block(r, err);
  }
  int comet = unit_at(r, 0)->comet;
  if (b->message == 0 && m.header_type != HEADER_SCHEMA)
    return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "message 0 at byte 0 is not a schema"), err);
  if (m.header_type == HEADER_SCHEMA && b->message > 0 && !comet && r->opts.read.allow_missing_eos)
    return close_block(r, err); /* a stream without its marker, then the next block */
  int consumed = 1;
  switch (m.header_type) {
    case HEADER_SCHEMA: st = take_schema(r, &m, err); break;
    case HEADER_DICTIONARY: st = take_dictionary(r, &m, &consumed, err); break;
    default: st = take_batch(r, &m, err); break;
  }
  if (st != XCHG_OK) return in_block(r, st, err);
  if (consumed) {
    b->pos += (size_t)m.size;
    b->message++;
  }
  return XCHG_OK;
}

/* Plans until a job is closed, or the input runs out (*state NEEDS_INPUT
 * or INPUT_END: at its end, the open job is closed too). */
static xchg_status plan(xchg_shuffle_reader *r, int *state, xchg_error *err) {
  int64_t closed = closed_jobs(r);
  *state = PLANNED;
  while (closed_jobs(r) == closed) {
    xchg_status st = XCHG_OK;
    if (!r->blk.open && ((st = open_block(r, state, err)) != XCHG_OK || *state != PLANNED)) {
      if (st == XCHG_OK && *state == INPUT_END && open_rows(r) > 0) st = close_job(r, err);
      return st;
    }
    if ((st = step(r, err)) != XCHG_OK) return st;
  }
  return XCHG_OK;
}

/* ---- handing batches out ----------------------------------------------------------- */

static void pop_job(xchg_shuffle_reader *r) {
  job *j = job_at(r, 0);
  r->held_bytes -= j->bytes;
  job_clear(r, j);
  r->job_head = (r->job_head + 1) % JOBS_AHEAD;
  r->job_count--;
}

static void finish_job(xchg_shuffle_reader *r, job *j) {
  if (j->finished) return;
  pool_loop_finish(r->opts.read.pool, &j->loop);
  j->finished = 1;
  r->m.decoded_bytes += j->decoded_bytes;
  if (j->compressed) r->m.decompress_ns += j->ns;
  else r->m.copy_ns += j->ns;
}

static xchg_status fail(xchg_shuffle_reader *r, xchg_status st, const xchg_error *e) {
  r->failed = st;
  if (e != &r->failure) r->failure = *e;
  while (r->job_count > 0) pop_job(r);
  return st;
}

/* The next batch: *out, or NULL at the end; XCHG_EAGAIN when more input
 * is needed first. */
static xchg_status produce(xchg_shuffle_reader *r, ipc_array **out) {
  *out = NULL;
  for (;;) {
    job *j = r->job_count > 0 ? job_at(r, 0) : NULL;
    if (j && j->finished) {
      if (j->taken < j->n_out) {
        *out = j->out[j->taken++];
        return XCHG_OK;
      }
      if (j->status != XCHG_OK) return fail(r, j->status, &j->error);
      pop_job(r);
      continue;
    }
    if (r->stopped == XCHG_OK && !r->planned_end && has_room(r)) {
      int state;
      xchg_status st = plan(r, &state, &r->stop_error);
      if (st != XCHG_OK) r->stopped = st;
      else if (state == INPUT_END) r->planned_end = 1;
      if (st != XCHG_OK || state != NEEDS_INPUT) continue;
      if (closed_jobs(r) == 0) return XCHG_EAGAIN; /* else hand out what is closed */
      j = job_at(r, 0);
    }
    if (j && j->started) {
      finish_job(r, j);
      continue;
    }
    if (r->stopped != XCHG_OK) return fail(r, r->stopped, &r->stop_error);
    return r->planned_end ? XCHG_OK : XCHG_EAGAIN;
  }
}

/* ---- public API ---------------------------------------------------------------- */

xchg_status xchg_shuffle_reader_open(const xchg_shuffle_reader_options *opts,
                                     xchg_shuffle_reader **out, xchg_error *err) {
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
  pthread_mutex_init(&r->lanes_lock, NULL);
  r->threads = xchg_pool_threads(opts->read.pool);
  r->units_limit = r->threads <= 1 ? 1 : (4 * r->threads < UNITS_AHEAD ? 4 * r->threads : UNITS_AHEAD);
  r->jobs_limit = 2 * r->threads < JOBS_AHEAD ? 2 * r->threads : JOBS_AHEAD - 1;
  if (opts->columns) {
    r->columns = malloc(((size_t)opts->n_columns + 1) * sizeof *r->columns);
    if (r->columns) memcpy(r->columns, opts->columns, (size_t)opts->n_columns * sizeof *r->columns);
    else st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  r->opts.columns = r->columns;
  if (st == XCHG_OK && opts->schema_message) {
    r->opts.schema_message = opts->schema_message;
    st = given_schema(r, err);
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
  if (!r || !src || r->ended) {
    xchg_source_free(src);
    return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_add_source: %s",
                       !r ? "the reader is NULL" : !src ? "the source is NULL"
                       : r->opts.incremental ? "the input was ended (xchg_shuffle_reader_end_input)"
                                             : "sources are added before the first read (or set "
                                               "the incremental option)");
  }
  if (r->n_sources == r->sources_cap) {
    int64_t cap = r->sources_cap ? 2 * r->sources_cap : 16;
    xchg_source **sources = realloc(r->sources, (size_t)cap * sizeof *sources);
    if (!sources) {
      xchg_source_free(src);
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    }
    r->sources = sources;
    r->sources_cap = cap;
  }
  r->sources[r->n_sources++] = src;
  return XCHG_OK;
}

xchg_status xchg_shuffle_reader_end_input(xchg_shuffle_reader *r, xchg_error *err) {
  if (!r) return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_end_input: the reader is NULL");
  r->ended = 1;
  return XCHG_OK;
}

/* A call that reads: without the incremental option, the input is what
 * was added before it. */
static void start_reading(xchg_shuffle_reader *r) {
  if (!r->opts.incremental) r->ended = 1;
}

xchg_status xchg_shuffle_reader_schema(xchg_shuffle_reader *r, struct ArrowSchema *out,
                                       xchg_error *err) {
  memset(out, 0, sizeof *out);
  start_reading(r);
  while (!r->have_schema && r->failed == XCHG_OK) {
    int state = PLANNED;
    xchg_status st = r->blk.open ? XCHG_OK : open_block(r, &state, &r->failure);
    if (st == XCHG_OK && state == NEEDS_INPUT)
      return xchg_errorf(err, XCHG_EAGAIN, "no schema yet: the input so far holds no block");
    if (st == XCHG_OK && state == INPUT_END)
      st = xchg_errorf(&r->failure, XCHG_EFORMAT, "no schema: the input holds no block and the "
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

xchg_status xchg_shuffle_reader_next(xchg_shuffle_reader *r, struct ArrowArray *out,
                                     xchg_error *err) {
  memset(out, 0, sizeof *out);
  start_reading(r);
  if (r->failed != XCHG_OK) {
    if (err) *err = r->failure;
    return r->failed;
  }
  ipc_array *a;
  xchg_status st = produce(r, &a);
  if (st == XCHG_EAGAIN)
    return xchg_errorf(err, XCHG_EAGAIN, "the reader needs more input: add a source, or end the "
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

void xchg_shuffle_reader_get_metrics(const xchg_shuffle_reader *r, xchg_shuffle_reader_metrics *out) {
  *out = r->m;
}

void xchg_shuffle_reader_free(xchg_shuffle_reader *r) {
  if (!r) return;
  while (r->job_count > 0) pop_job(r);
  for (int i = 0; i < JOBS_AHEAD; i++) {
    job *j = &r->jobs[i];
    coalescer_free(j->co);
    free(j->items);
    free(j->refs);
    free(j->out);
  }
  while (r->unit_count > 0) pop_unit(r);
  for (int i = 0; i < r->n_lanes; i++) xchg_istream_free(r->lanes[i]);
  pthread_mutex_destroy(&r->lanes_lock);
  for (int64_t i = r->next_source; i < r->n_sources; i++) xchg_source_free(r->sources[i]);
  free(r->sources);
  xchg_source_free(r->reading);
  drop_chunk(r);
  for (int64_t i = 0; r->seen && i < r->dicts.count; i++) free(r->seen[i].bytes);
  free(r->seen);
  ipc_dictionaries_free(&r->dicts);
  ipc_schema_free(&r->schema);
  free(r->schema_bytes);
  free(r->columns);
  free(r);
}
