/* input.c — see input.h. */
#include "shuffle/input.h"

#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "codec/helpers.h"
#include "ipc/flatbuf.h"
#include "ipc/framing.h"
#include "ipc/message.h"

#define COMET_WINDOW ((size_t)64 << 10) /* the least room a block decompresses into */
#define CHUNK_BYTES ((size_t)1 << 20)   /* read at a time from a source not in memory */
/* A group is small, so that its arena is still in the cache when its
 * blocks are planned and placed: larger groups, fewer hand-offs to the
 * pool, measured slower on two threads (lz4, 5 x 64: 0.67x of one thread
 * at 256 KiB, 0.9x at 32 KiB). */
#define GROUP_BLOCKS 16
#define GROUP_BYTES ((size_t)32 << 10)
/* How far ahead of the block being framed its chunk is asked of memory
 * (shuffle_prefetch_ahead): two blocks of 5 columns x 64 rows.  Thread CPU
 * of one-thread reads, paired against none: 0.75-0.77x for 5 x 64
 * uncompressed (IPC and Comet), 0.89-0.93x for 50 x 64 and for LZ4, ZSTD
 * and Snappy Comet blocks, 0.98-0.99x for 512-row blocks. */
#define PREFETCH_AHEAD ((size_t)8 << 10)

static uint64_t le64(const uint8_t *p) { return fb_load_u64(p); }

static void free_malloced(void *ctx, const void *data, size_t size) {
  (void)ctx;
  (void)size;
  free((void *)data);
}

void shuffle_input_init(shuffle_input *in, const xchg_shuffle_reader_options *opts, int threads) {
  memset(in, 0, sizeof *in);
  in->opts = opts;
  in->threads = threads;
  in->units_limit = threads <= 1 ? 1 : (4 * threads < UNITS_AHEAD ? 4 * threads : UNITS_AHEAD);
  pthread_mutex_init(&in->lanes_lock, NULL);
}

xchg_status shuffle_input_add(shuffle_input *in, xchg_source *src, xchg_error *err) {
  if (in->n_sources == in->sources_cap) {
    int64_t cap = in->sources_cap ? 2 * in->sources_cap : 16;
    xchg_source **sources = realloc(in->sources, (size_t)cap * sizeof *sources);
    if (!sources) {
      xchg_source_free(src);
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    }
    in->sources = sources;
    in->sources_cap = cap;
  }
  in->sources[in->n_sources++] = src;
  return XCHG_OK;
}

/* ---- sources into chunks ----------------------------------------------------------- */

/* The chunk being read from a source that is not in memory. */
typedef struct filling {
  uint8_t *data;
  size_t size, cap;
  int end;        /* the source has no more bytes, or the rest cannot be whole blocks */
  size_t over_at; /* plain IPC: a block stating over_bytes, past max_batch_bytes, ends it */
  uint64_t over_bytes;
} filling;

/* Reads the source being read until f holds `size` bytes; f->end when it
 * ends first.  The memory grows as the bytes arrive, doubling: a length
 * on the wire makes the reader allocate about what the source really
 * holds, never what the length claims. */
static xchg_status fill_to(shuffle_input *in, filling *f, size_t size, xchg_error *err) {
  while (f->size < size && !f->end) {
    if (f->size == f->cap) {
      size_t cap = f->cap ? 2 * f->cap : 4096;
      uint8_t *more = realloc(f->data, cap);
      if (!more) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", cap);
      f->data = more;
      f->cap = cap;
    }
    size_t got = 0, n = (size < f->cap ? size : f->cap) - f->size;
    xchg_status st = xchg_source_read(in->reading, f->data + f->size, n, &got, err);
    f->size += got;
    in->reading_pos += (int64_t)got;
    if (st != XCHG_OK) return st;
    if (got < n) f->end = 1;
  }
  return XCHG_OK;
}

/* Whole Comet blocks, their headers telling where each ends; a block
 * larger than max_batch_bytes ends the source there. */
static xchg_status fill_comet(shuffle_input *in, filling *f, xchg_error *err) {
  xchg_status st = XCHG_OK;
  for (size_t at = 0; st == XCHG_OK && !f->end && at < CHUNK_BYTES;) {
    if ((st = fill_to(in, f, at + COMET_HEADER, err)) != XCHG_OK || f->end) break;
    uint64_t len = le64(f->data + at); /* a bad one: the group reading it says so */
    if (len > (uint64_t)in->opts->read.max_batch_bytes) {
      f->end = 1; /* not read, nor the rest of the source: its group names it (cut_group) */
      break;
    }
    st = fill_to(in, f, at + 8 + (size_t)len, err);
    at += 8 + (size_t)len;
  }
  return st;
}

/* Whole IPC streams, message by message, up to their end-of-stream
 * markers.  Framing that is not right ends the chunk: planning it says
 * what is wrong, and where.  So does a block (its stream so far) stating
 * more than max_batch_bytes, the most of a block read into memory: the
 * chunk ends after that message's metadata, and the source there. */
static xchg_status fill_ipc(shuffle_input *in, filling *f, xchg_error *err) {
  xchg_status st = XCHG_OK;
  size_t stream_at = 0; /* where the stream being read starts */
  for (size_t at = 0; st == XCHG_OK && !f->end;) {
    if ((st = fill_to(in, f, at + 4, err)) != XCHG_OK || f->end) break;
    size_t prefix = ipc_prefix_size(f->data + at);
    if ((st = fill_to(in, f, at + prefix, err)) != XCHG_OK || f->end) break;
    int32_t length;
    if (ipc_prefix_decode(f->data + at, 0, 0, in->opts->read.max_metadata_bytes, &length, NULL) !=
        XCHG_OK) {
      f->end = 1;
      break;
    }
    at += prefix;
    if (length == 0) { /* the end of a stream: the chunk may end here */
      stream_at = at;
      if (at >= CHUNK_BYTES) break;
      continue;
    }
    if ((st = fill_to(in, f, at + (size_t)length, err)) != XCHG_OK || f->end) break;
    fb_table header;
    int type, version;
    int64_t body;
    if (ipc_message_parse(f->data + at, (size_t)length, 0, 0, &header, &type, &version, &body,
                          NULL) != XCHG_OK ||
        body < 0) {
      f->end = 1;
      break;
    }
    at += (size_t)length;
    uint64_t stated = (uint64_t)body + (at - stream_at);
    if (stated > (uint64_t)in->opts->read.max_batch_bytes) {
      f->over_at = stream_at;
      f->over_bytes = stated;
      f->end = 1;
      break;
    }
    st = fill_to(in, f, at + (size_t)body, err);
    at += (size_t)body;
  }
  return st;
}

static void drop_chunk(shuffle_input *in) {
  xchg_buf_unref(in->chunk);
  in->chunk = NULL;
  in->data = NULL;
  in->size = in->pos = in->prefetched = 0;
}

static int comet_bytes(const shuffle_input *in, const uint8_t *p, size_t n) {
  if (in->opts->framing != XCHG_SHUFFLE_FRAMING_AUTO)
    return in->opts->framing == XCHG_SHUFFLE_FRAMING_COMET;
  return xchg_stream_codec_detect(p, n) == XCHG_STREAM_COMET;
}

static xchg_status set_chunk(shuffle_input *in, xchg_buf *chunk, int64_t source, int64_t base,
                             int comet, const filling *f) {
  in->chunk = chunk;
  in->data = xchg_buf_data(chunk);
  in->size = xchg_buf_size(chunk);
  in->pos = in->prefetched = 0;
  in->chunk_source = source;
  in->chunk_base = base;
  in->chunk_over_at = f ? f->over_at : 0;
  in->chunk_over_bytes = f ? f->over_bytes : 0;
  in->comet = comet;
  return XCHG_OK;
}

/* The next chunk of the source being read; none at its end. */
static xchg_status read_chunk(shuffle_input *in, int *got, xchg_error *err) {
  int64_t t0 = monotonic_ns(), base = in->reading_pos;
  filling f = {0};
  xchg_status st = XCHG_OK;
  if (base == 0) { /* its first bytes tell its framing */
    st = fill_to(in, &f, COMET_HEADER, err);
    in->reading_comet = comet_bytes(in, f.data, f.size);
  }
  if (st == XCHG_OK && !f.end)
    st = in->reading_comet ? fill_comet(in, &f, err) : fill_ipc(in, &f, err);
  in->wait_ns += monotonic_ns() - t0;
  *got = 0;
  xchg_buf *chunk = NULL;
  if (st == XCHG_OK && f.size > 0 && !(chunk = xchg_buf_wrap(f.data, f.size, free_malloced, NULL)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st != XCHG_OK || !chunk) free(f.data);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "source %lld: ", (long long)in->reading_index);
    return st;
  }
  if (f.end || !chunk) {
    xchg_source_free(in->reading);
    in->reading = NULL;
  }
  if (!chunk) return XCHG_OK;
  *got = 1;
  return set_chunk(in, chunk, in->reading_index, base, in->reading_comet, &f);
}

static int in_memory(const xchg_source *src) {
  xchg_buf *memory = xchg_source_memory(src);
  xchg_buf_unref(memory); /* the source holds it */
  return memory != NULL;
}

/* Moves on to the next chunk with bytes in it: *state INPUT_READY when there
 * is one, else INPUT_NEEDED or INPUT_ENDED. */
static xchg_status next_chunk(shuffle_input *in, int *state, xchg_error *err) {
  drop_chunk(in);
  for (;;) {
    if (in->memory_only && (in->reading || (in->next_source < in->n_sources &&
                                            !in_memory(in->sources[in->next_source])))) {
      *state = INPUT_NEEDED;
      return XCHG_OK;
    }
    if (in->reading) {
      int got;
      xchg_status st = read_chunk(in, &got, err);
      if (st != XCHG_OK || got) {
        *state = INPUT_READY;
        return st;
      }
      continue;
    }
    if (in->next_source == in->n_sources) {
      *state = in->ended ? INPUT_ENDED : INPUT_NEEDED;
      return XCHG_OK;
    }
    int64_t index = in->next_source++;
    xchg_source *src = in->sources[index];
    in->sources[index] = NULL;
    xchg_buf *memory = xchg_source_memory(src);
    if (!memory) {
      in->reading = src;
      in->reading_index = index;
      in->reading_pos = 0;
      continue;
    }
    xchg_source_free(src);
    if (xchg_buf_size(memory) == 0) {
      xchg_buf_unref(memory);
      continue;
    }
    *state = INPUT_READY;
    return set_chunk(in, memory, index, 0,
                     comet_bytes(in, xchg_buf_data(memory), xchg_buf_size(memory)), NULL);
  }
}

/* ---- chunks into units -------------------------------------------------------------- */

/* Unsigned: a mask, UNITS_AHEAD being a power of two (asked several
 * times a block; head + k is never negative). */
unit *shuffle_input_unit(shuffle_input *in, int64_t k) {
  return &in->units[(size_t)(in->unit_head + k) % UNITS_AHEAD];
}

/* Room at the end of the group's arena for the block that starts at
 * block_at to decompress into: a window's worth at least, so that the
 * codec decodes whole blocks of its frame there rather than through a side
 * buffer, and one byte more than max_batch_bytes leaves the block, so
 * that a block over it shows.  The arena is an xchg_buf: its memory is
 * recycled from group to group (malloc'ed, a few hundred KiB at a time,
 * it was mapped and faulted in afresh for every group). */
static xchg_status arena_room(unit *u, size_t block_at, size_t *room, xchg_error *err) {
  size_t limit = (size_t)u->in->opts->read.max_batch_bytes, used = u->arena_size - block_at;
  if (used > limit)
    return xchg_errorf(err, XCHG_ELIMIT,
                       "its IPC stream decompresses to more than max_batch_bytes "
                       "(%lld)",
                       (long long)limit);
  if (u->arena_cap - u->arena_size < COMET_WINDOW) {
    size_t cap = u->arena_cap ? 2 * u->arena_cap : 4 * (u->end - u->start) + COMET_WINDOW;
    while (cap - u->arena_size < COMET_WINDOW) cap *= 2;
    xchg_buf *a = xchg_buf_alloc(cap);
    if (!a) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", cap);
    if (u->arena_size) memcpy(xchg_buf_mutable_data(a), u->arena, u->arena_size);
    xchg_buf_unref(u->arena_buf);
    u->arena_buf = a;
    u->arena = xchg_buf_mutable_data(a);
    u->arena_cap = cap;
  }
  *room = u->arena_cap - u->arena_size;
  if (*room > limit - used + 1) *room = limit - used + 1;
  return XCHG_OK;
}

/* Block i of the group out of s, decompressed straight into the arena
 * (its stream pointer is set once the arena no longer moves). */
static xchg_status decompress_block(unit *u, xchg_istream *s, int64_t i, xchg_error *err) {
  group_block *b = &u->blocks[i];
  b->arena_at = u->arena_size;
  xchg_status st = XCHG_OK;
  for (int first = 1;; first = 0) {
    size_t room = 0, n = 0;
    if ((st = arena_room(u, b->arena_at, &room, err)) != XCHG_OK) break;
    st = xchg_istream_next_into(s, u->arena + u->arena_size, room, &n, err);
    if (st != XCHG_OK || n == 0) break;
    if (first) b->field_count = xchg_istream_comet_field_count(s);
    u->arena_size += n;
  }
  b->size = u->arena_size - b->arena_at;
  return st;
}

/* An istream kept with its codec contexts, or a new one (over the chunk:
 * take_lane resets it at once). */
static xchg_status lane(shuffle_input *in, xchg_buf *chunk, xchg_istream **out, xchg_error *err) {
  pthread_mutex_lock(&in->lanes_lock);
  *out = in->n_lanes > 0 ? in->lanes[--in->n_lanes] : NULL;
  pthread_mutex_unlock(&in->lanes_lock);
  if (*out) return XCHG_OK;
  xchg_source *src;
  xchg_status st = xchg_source_from_buf(chunk, &src, err);
  if (st != XCHG_OK) return st;
  xchg_istream_options so;
  xchg_istream_options_init(&so);
  so.split_members = 1;
  so.metrics = 0;
  so.window_size = COMET_WINDOW;
  return xchg_istream_open(src, XCHG_STREAM_COMET, &so, out, err);
}

/* An istream over the unit's chunk from its first block, which counts
 * bytes as the source does (the chunk starts at u->base) and leaves the
 * block's name to shuffle_block_error, which counts blocks over every
 * source. */
static xchg_status take_lane(unit *u, xchg_istream **out, xchg_error *err) {
  xchg_source *src;
  xchg_status st = lane(u->in, u->chunk, out, err);
  if (st == XCHG_OK) st = xchg_source_from_buf(u->chunk, &src, err);
  if (st != XCHG_OK) return st;
  if ((st = xchg_source_seek(src, u->start, err)) != XCHG_OK) {
    xchg_source_free(src);
    return st;
  }
  xchg_istream_origin origin = {(uint64_t)u->base, 1};
  return xchg_istream_reset(*out, src, &origin, err);
}

static void give_lane(shuffle_input *in, xchg_istream *s) {
  if (!s) return;
  pthread_mutex_lock(&in->lanes_lock);
  if (in->n_lanes < LANES) {
    in->lanes[in->n_lanes++] = s;
    s = NULL;
  }
  pthread_mutex_unlock(&in->lanes_lock);
  xchg_istream_free(s);
}

/* The task of a group: its blocks decompressed, one istream for all. */
static void decompress_group(void *ctx, int64_t task) {
  (void)task;
  unit *u = ctx;
  int64_t t0 = monotonic_ns();
  xchg_istream *s = NULL;
  xchg_status st = take_lane(u, &s, &u->error);
  int64_t i = 0;
  for (; st == XCHG_OK && i < u->failed_at; i++) { /* failed_at: a header that overruns */
    int more = 1;
    if (i > 0) st = xchg_istream_next_member(s, &more, &u->error);
    if (st == XCHG_OK && !more)
      st = xchg_errorf(&u->error, XCHG_EIO, "the input ends before the block");
    if (st == XCHG_OK) st = decompress_block(u, s, i, &u->error);
    if (st != XCHG_OK) break;
  }
  give_lane(u->in, s);
  if (st != XCHG_OK) {
    u->failed_at = i;
    u->status = st;
  }
  u->arena = NULL;
  for (int64_t k = 0; k < u->failed_at; k++) /* a decompressed group: all in the arena */
    u->blocks[k].stream = u->arena_buf ? xchg_buf_data(u->arena_buf) + u->blocks[k].arena_at : NULL;
  u->ns = monotonic_ns() - t0;
}

/* A stored Comet block (tag NONE) whose bytes are all there: its IPC
 * stream is read in place, without a task. */
static int stored_in_place(const uint8_t *h, size_t left) {
  if (left < COMET_HEADER || memcmp(h + 16, "NONE", 4) != 0) return 0;
  uint64_t len = le64(h);
  return len >= COMET_HEADER - 8 && len <= left - 8;
}

void shuffle_prefetch_ahead(const uint8_t *data, size_t size, size_t *prefetched, size_t pos) {
  size_t to = size - pos > PREFETCH_AHEAD ? pos + PREFETCH_AHEAD : size;
  if (*prefetched < pos) *prefetched = pos;
  if (*prefetched >= to) return;
  cpu_prefetch(data + *prefetched, to - *prefetched);
  /* up to the end of the last line asked, so that the next call asks none twice */
  uintptr_t end = ((uintptr_t)(data + to) + CPU_LINE - 1) & ~(uintptr_t)(CPU_LINE - 1);
  *prefetched = (size_t)(end - (uintptr_t)data);
}

/* A block whose header states `len` bytes where only `follow` follow its
 * length field, the input ending at chunk byte `end`: the source is cut
 * short (or the length is wrong); one that states more than
 * max_batch_bytes was not read (fill_comet), and says so whatever
 * followed. */
static xchg_status overrun_error(const shuffle_input *in, uint64_t len, size_t follow, size_t end,
                                 xchg_error *err) {
  if (len > (uint64_t)in->opts->read.max_batch_bytes)
    return xchg_errorf(err, XCHG_ELIMIT,
                       "its header states %llu bytes, more than max_batch_bytes (%lld), the "
                       "most of a block read into memory",
                       (unsigned long long)len, (long long)in->opts->read.max_batch_bytes);
  return xchg_errorf(err, XCHG_EIO,
                     "the block" CUT_SHORT_AT
                     ", %zu bytes after its length, which states %llu (or the block's length "
                     "is wrong)",
                     (unsigned long long)in->chunk_base + end, follow, (unsigned long long)len);
}

/* Cuts the next group of Comet blocks off the chunk: stored blocks read in
 * place, or blocks to decompress, up to a count and a size (a quarter of
 * readahead_bytes at most, so that several groups run ahead).  A
 * header that cannot be right ends the group: its block's decompression
 * says how. */
static xchg_status cut_group(shuffle_input *in, unit *u, int *stored, xchg_error *err) {
  size_t pos = in->pos;
  *stored = 0;
  int64_t cap = 8;
  u->blocks = malloc((size_t)cap * sizeof *u->blocks);
  if (!u->blocks) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  *stored = stored_in_place(in->data + pos, in->size - pos);
  uint64_t overrun = 0; /* a header's length that passes the input's end */
  size_t most_bytes = GROUP_BYTES;
  if ((int64_t)most_bytes > in->opts->read.readahead_bytes / 4)
    most_bytes = (size_t)(in->opts->read.readahead_bytes / 4) + 1; /* a block at least */
  while (pos < in->size && u->n_blocks < GROUP_BLOCKS && pos - in->pos < most_bytes &&
         stored_in_place(in->data + pos, in->size - pos) == *stored) {
    if (u->n_blocks == cap) {
      group_block *more = realloc(u->blocks, (size_t)(cap *= 2) * sizeof *more);
      if (!more) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
      u->blocks = more;
    }
    shuffle_prefetch_ahead(in->data, in->size, &in->prefetched, pos);
    size_t left = in->size - pos;
    uint64_t len = left >= 8 ? le64(in->data + pos) : UINT64_MAX;
    int whole = len < left - 8 + (left >= 8) && len >= COMET_HEADER - 8;
    if (left >= COMET_HEADER && len >= COMET_HEADER - 8 && len > left - 8) overrun = len;
    size_t wire = whole ? (size_t)len + 8 : left;
    group_block *b = &u->blocks[u->n_blocks++];
    *b = (group_block){.offset = pos, .wire = wire, .field_count = -1};
    if (*stored) {
      uint64_t fields = le64(in->data + pos + 8);
      *b = (group_block){pos,
                         wire,
                         in->data + pos + COMET_HEADER,
                         0,
                         wire - COMET_HEADER,
                         1,
                         fields > INT64_MAX ? -1 : (int64_t)fields};
    }
    pos += wire;
    if (!whole) break;
  }
  u->end = pos;
  in->pos = pos;
  u->failed_at = u->n_blocks;
  if (overrun) { /* the group's last block: failed before anything reads it */
    u->failed_at = u->n_blocks - 1;
    u->status =
        overrun_error(in, overrun, pos - u->blocks[u->failed_at].offset - 8, pos, &u->error);
  }
  return XCHG_OK;
}

/* Starts units while there is room: every chunk of plain IPC streams,
 * every group of Comet blocks. */
static xchg_status fill_units(shuffle_input *in, int *state, xchg_error *err) {
  *state = INPUT_READY;
  while (in->unit_count < in->units_limit &&
         (in->unit_count == 0 || in->unit_bytes < in->opts->read.readahead_bytes)) {
    xchg_status st = XCHG_OK;
    if (in->pos >= in->size &&
        ((st = next_chunk(in, state, err)) != XCHG_OK || *state != INPUT_READY))
      return st;
    unit *u = shuffle_input_unit(in, in->unit_count);
    *u = (unit){.in = in,
                .chunk = xchg_buf_ref(in->chunk),
                .source = in->chunk_source,
                .base = in->chunk_base,
                .comet = in->comet,
                .start = in->pos,
                .end = in->size,
                .over_at = in->chunk_over_at,
                .over_bytes = in->chunk_over_bytes};
    in->unit_count++;
    if (!in->comet) {
      in->pos = in->size;
      in->unit_bytes += u->bytes = (int64_t)(u->end - u->start);
      continue;
    }
    int stored;
    if ((st = cut_group(in, u, &stored, err)) != XCHG_OK) return st;
    in->unit_bytes += u->bytes = (int64_t)(u->end - u->start);
    if (stored) continue;
    pool_loop_start(in->threads > 1 ? in->opts->read.pool : NULL, &u->loop, 1, decompress_group, u);
    u->started = 1;
  }
  return XCHG_OK;
}

static void unit_free(shuffle_input *in, unit *u) {
  if (u->started && !u->finished) pool_loop_cancel(in->opts->read.pool, &u->loop);
  xchg_buf_unref(u->chunk);
  xchg_buf_unref(u->arena_buf);
  free(u->blocks);
  memset(u, 0, sizeof *u);
}

void shuffle_input_pop_unit(shuffle_input *in) {
  unit *u = shuffle_input_unit(in, 0);
  in->unit_bytes -= u->bytes;
  unit_free(in, u);
  in->unit_head = (in->unit_head + 1) % UNITS_AHEAD;
  in->unit_count--;
}

/* The first unit, decompressed; *state INPUT_NEEDED or INPUT_ENDED when there
 * is none. */
xchg_status shuffle_input_first_unit(shuffle_input *in, unit **out, int *state, xchg_error *err) {
  *out = NULL;
  xchg_status st = fill_units(in, state, err);
  if (st != XCHG_OK || in->unit_count == 0) return st;
  *state = INPUT_READY;
  unit *u = *out = shuffle_input_unit(in, 0);
  if (u->started && !u->finished) {
    pool_loop_finish(in->opts->read.pool, &u->loop);
    u->finished = 1;
    in->decompress_ns += u->ns;
  }
  return XCHG_OK;
}

void shuffle_input_free(shuffle_input *in) {
  while (in->unit_count > 0) shuffle_input_pop_unit(in);
  for (int i = 0; i < in->n_lanes; i++) xchg_istream_free(in->lanes[i]);
  pthread_mutex_destroy(&in->lanes_lock);
  for (int64_t i = in->next_source; i < in->n_sources; i++) xchg_source_free(in->sources[i]);
  free(in->sources);
  xchg_source_free(in->reading);
  drop_chunk(in);
}
