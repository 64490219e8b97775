/* input.h — the shuffle reader's input (private to src/shuffle): sources
 * into chunks of whole blocks, chunks into units.
 *
 * A source in memory is one chunk, read in place; any other is read
 * CHUNK_BYTES of whole blocks at a time (a block is read into memory
 * whole, within read.max_batch_bytes).  A chunk of plain IPC streams is
 * one unit; a chunk of Comet blocks is cut into groups: stored blocks
 * (tag NONE) read in place, or a run of blocks (up to a count and a number
 * of compressed bytes) decompressed by one task into an arena of the
 * group's own, with an istream kept from group to group (its codec contexts
 * reused).  With a pool the tasks of the next groups run on it, within
 * read.readahead_bytes of input held; without one, a group decompresses
 * when it is asked for. */
#ifndef XCHG_SHUFFLE_INPUT_H
#define XCHG_SHUFFLE_INPUT_H

#include <pthread.h>
#include <stdint.h>

#include "base/pool_internal.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"

#define COMET_HEADER 20
#define UNITS_AHEAD 16 /* units held at most (chunks and groups) */
#define LANES 16       /* decompressing istreams kept for the next groups */

/* A Comet block of a group, once decompressed. */
typedef struct group_block {
  size_t offset;         /* in the chunk: where its header starts */
  size_t wire;           /* its bytes in the chunk */
  const uint8_t *stream; /* its IPC stream: in the chunk (stored) or in the arena */
  size_t arena_at;       /* where in the arena, when it is there */
  size_t size;
  int in_chunk;
  int64_t field_count;
} group_block;

typedef struct shuffle_input shuffle_input;

/* A chunk of plain IPC streams, or a group of Comet blocks of a chunk. */
typedef struct unit {
  shuffle_input *in;
  xchg_buf *chunk;
  int64_t source, base; /* the chunk's source and its offset there */
  int comet;
  size_t start, end; /* its bytes in the chunk (start moves on as its IPC blocks are read) */
  size_t prefetched; /* plain IPC: its bytes asked of memory ahead (shuffle_prefetch_ahead) */
  int64_t bytes;     /* end - start, at first */
  /* Plain IPC from a source not in memory: the block at the chunk's end
   * states over_bytes, more than max_batch_bytes, and was not read past
   * its first message's metadata: it begins at over_at (over_bytes 0:
   * no such block).  Its planning reports it, in its turn (step, shuffle_reader.c). */
  size_t over_at;
  uint64_t over_bytes;
  /* Comet */
  group_block *blocks;
  int64_t n_blocks, failed_at; /* failed_at: the block decompression failed in, or n_blocks */
  uint8_t *arena;              /* arena_buf's bytes, while the group decompresses */
  size_t arena_size, arena_cap;
  xchg_buf *arena_buf;
  xchg_status status;
  xchg_error error;
  int64_t ns;
  pool_loop loop;
  int started, finished;
} unit;

/* What the input has next. */
enum { INPUT_READY, INPUT_NEEDED, INPUT_ENDED };

struct shuffle_input {
  const xchg_shuffle_reader_options *opts;
  int threads;
  /* Sources, then chunks. */
  xchg_source **sources;
  int64_t n_sources, sources_cap, next_source;
  int ended;            /* no source comes after those added */
  int memory_only;      /* read no source that is not in memory: INPUT_NEEDED instead */
  xchg_source *reading; /* a source not in memory, being read chunk by chunk */
  int64_t reading_index;
  int64_t reading_pos; /* its bytes read so far */
  int reading_comet;
  xchg_buf *chunk; /* the chunk being cut into units */
  const uint8_t *data;
  size_t size, pos;
  size_t prefetched; /* the chunk's bytes asked of memory ahead of pos */
  int64_t chunk_source, chunk_base;
  size_t chunk_over_at; /* as unit.over_at and over_bytes, of the chunk */
  uint64_t chunk_over_bytes;
  int comet;
  /* Units. */
  unit units[UNITS_AHEAD];
  int64_t unit_head, unit_count, units_limit;
  int64_t unit_bytes; /* input bytes of the units held */
  /* Istreams that groups decompress with, kept with their codec contexts:
   * a group takes one (or opens one) and gives it back. */
  pthread_mutex_t lanes_lock;
  xchg_istream *lanes[LANES];
  int n_lanes;
  /* Metrics: time reading sources not in memory, and decompressing. */
  int64_t wait_ns, decompress_ns;
};

/* An input of opts (which must outlive it), its groups decompressing on
 * opts->read.pool when threads > 1. */
void shuffle_input_init(shuffle_input *in, const xchg_shuffle_reader_options *opts, int threads);

/* Appends src, which the input takes over (closed at once on failure). */
xchg_status shuffle_input_add(shuffle_input *in, xchg_source *src, xchg_error *err);

/* The first unit, decompressed (*out), with *state INPUT_READY; or none,
 * with *state INPUT_NEEDED (the sources added so far are all read) or
 * INPUT_ENDED (and ended is set).  A failure to read a source names it. */
xchg_status shuffle_input_first_unit(shuffle_input *in, unit **out, int *state, xchg_error *err);

/* Asks memory for data's bytes from *prefetched (at least pos) up to a
 * few KiB past pos, and moves *prefetched there.  Each Comet header, and
 * each IPC message's metadata, says where the next one is, so that
 * reading blocks one after another is a chain of dependent loads, a cold
 * line or more a block: asked ahead, the lines arrive together (the
 * blocks' bodies with them, for the reading that follows) rather than one
 * after another. */
void shuffle_prefetch_ahead(const uint8_t *data, size_t size, size_t *prefetched, size_t pos);

/* Unit k of those held (0: the first). */
unit *shuffle_input_unit(shuffle_input *in, int64_t k);

/* Drops the first unit (the memory it holds lives on in its references). */
void shuffle_input_pop_unit(shuffle_input *in);

/* Closes every source and drops every unit; tasks under way are waited for. */
void shuffle_input_free(shuffle_input *in);

#endif
