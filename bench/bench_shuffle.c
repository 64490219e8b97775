/* bench_shuffle.c — `xchg bench shuffle`: shape 4 (`shuffle`) of SHAPES.md.
 *
 * A reduce task's input — many small blocks, each its own IPC stream, in
 * the ipc or the comet framing — generated in memory (gen/shape_shuffle.h)
 * or read from a file, is read into batches of --target-rows rows in
 * several ways, each timed from the first byte to the last batch released,
 * on one thread and on --threads:
 *
 *   per_block              the existing readers, one per block (an
 *                          xchg_ipc_reader over each IPC stream; for the
 *                          comet framing, over each block of one
 *                          xchg_istream): one batch per block;
 *   per_block_then_concat  the same, then the batches concatenated into
 *                          target-size ones, each column's buffers sized
 *                          once and every block's values copied in once
 *                          (offsets rebased, validity bits shifted): what
 *                          engines do after their shuffle read;
 *   memcpy_limit           each block's decoded buffers copied once, in
 *                          order, into target-size destinations: one write
 *                          per byte, the floor of any coalesced batch;
 *   handover_limit         the same copies into batch buffers the threads
 *                          recycle, each batch handed in order to the
 *                          calling thread, which reads its checksum column
 *                          and gives it back: the floor of a reader whose
 *                          batches one thread consumes (on T threads the
 *                          batches cross cores, and memcpy_limit's threads
 *                          each fill a destination of their own that
 *                          nobody reads);
 *   split_limit            the input cut at block boundaries into T parts of
 *                          about equal bytes, each read by an
 *                          xchg_shuffle_reader of its own (no pool) on a
 *                          thread of its own, which consumes its batches:
 *                          what a reader's T threads gain when they share
 *                          nothing, not a block, not a buffer, not the
 *                          consumer (on one thread: one such reader over
 *                          the whole input) — the host's own ceiling for
 *                          a speed-up, below the limits' (their copies and
 *                          codec calls share nothing either, and hand no
 *                          batch out);
 *   codec_limit            the bare decompressor (one reused context) over
 *                          the same compressed bytes into such destinations:
 *                          every compressed buffer of the ipc framing, the
 *                          whole block of the comet framing, verifying the
 *                          checksums the format carries (the snappy
 *                          framing's CRC-32C, with xchg's own);
 *   coalesced              xchg_shuffle_reader (xchg/shuffle.h): every
 *                          block decoded straight into its place in
 *                          target-size batches.
 *
 * On T threads the readers get a pool of T threads; the limits run the
 * destinations on T threads, each its own share.  Runs take turns (every
 * mode and thread count once, then again), so that a shared host slowing
 * down weighs on every figure alike.  The warm-up run of each mode touches
 * every value and checks the sums against the generator's (a file's against
 * the per-block read's); timed runs sum one column (c1, the second, if
 * there is one: random int64 in the shape) into the checksum they report. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "load.h"
#include "codec/stream_hash.h"
#include "gen/shape_shuffle.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "bench.h"
#include "handover.h"
#include "stats.h"
#include "touch.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"

#define COMET_HEADER 20
#define LZ4_BLOCK_ROOM ((size_t)64 << 10) /* the largest block of the generated LZ4 frames */
#define SEED 42                           /* of the generated shape */

/* ---- the input ----------------------------------------------------------------- */

/* Compressed bytes the readers decompressed, for codec_limit: a buffer of
 * IPC body compression, or a whole Comet block's stream. */
typedef struct piece {
  const uint8_t *src;
  size_t src_size, dst_size;
} piece;

/* The pieces decompressed for a batch the per-block warm-up kept. */
typedef struct kept_pieces {
  int64_t first, n;
} kept_pieces;

typedef struct input {
  const uint8_t *data;
  size_t size;
  shape_shuffle_framing framing;
  shape_shuffle_codec codec;
  int several_codecs; /* IPC blocks compressed with more than one (the codec limit takes one) */
  int generated;
  int cuts; /* a FILE with dictionary columns: a changed dictionary cuts a batch short */
  shape_shuffle_sums want; /* generated only */
  /* Rows of the blocks: block_rows is the shape's R (a file's: its most,
   * when every block but the last has them and the last no more, else its
   * blocks' mean), the others what the per-block read found. */
  int64_t block_rows, block_rows_min, block_rows_max;
  int uniform_blocks;
  struct ArrowSchema schema;
  int columns;
  int64_t n_blocks, rows;
  size_t *block_at; /* where each block starts (split_limit cuts there) */
  int64_t block_at_capacity;
  /* The per-block read's batches, in order (memcpy_limit copies their
   * buffers, the other modes' warm-ups compare theirs with them), and the
   * pieces decompressed for each. */
  struct ArrowArray *kept;
  kept_pieces *kept_pieces;
  int64_t n_kept, kept_capacity, pieces_of_kept_capacity;
  piece *pieces;
  int64_t n_pieces, pieces_capacity;
  /* Target-size destinations of the limits: the kept batches [group[g],
   * group[g+1]) fill destination g. */
  int64_t *group, n_groups;
} input;

static int fail(const char *what, const char *message) {
  fprintf(stderr, "xchg bench shuffle: %s: %s\n", what, message);
  return -1;
}

/* ---- what a run does with each batch ----------------------------------------------- */

/* Every reading mode hands its batches, in order, to a sink that takes each
 * one over. */
typedef int (*sink_fn)(void *ctx, struct ArrowArray *batch);

/* The last sink of every mode: the warm-up touches every column and
 * (compare) checks every value against the per-block read's batches, row by
 * row; timed runs sum the checksum column.  Counts the batches, and those
 * short of the target that are not the last. */
typedef struct consumer {
  const input *in;
  int check, compare;
  int64_t kept, kept_row; /* compare: the per-block batch and row the next row must equal */
  int mismatch;
  int64_t target_rows;
  touched columns[SHAPE_SHUFFLE_MAX_COLUMNS];
  int64_t rows, batches, short_batches;
  int last_was_short;
  uint64_t checksum;
} consumer;

static int64_t checksum_column(const struct ArrowSchema *s) { return s->n_children > 1 ? 1 : 0; }

static int offset_width(const char *format) {
  if (!strcmp(format, "u") || !strcmp(format, "z")) return 4;
  if (!strcmp(format, "U") || !strcmp(format, "Z")) return 8;
  return 0;
}

static int64_t load_offset(const struct ArrowArray *a, int width, int64_t i) {
  return width == 4 ? ((const int32_t *)a->buffers[1])[a->offset + i]
                    : ((const int64_t *)a->buffers[1])[a->offset + i];
}

static int bit_at(const void *bits, int64_t i) {
  return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

static int valid_at(const struct ArrowArray *a, int64_t i) {
  return a->null_count == 0 || !a->buffers[0] || bit_at(a->buffers[0], a->offset + i);
}

/* Whether rows [i, i+n) of a equal rows [j, j+n) of b, of a flat column
 * (fixed-width, boolean, string). */
static int same_rows(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                     const struct ArrowArray *b, int64_t j, int64_t n) {
  int width = bench_fixed_width(s->format), ow = offset_width(s->format),
      is_bool = !strcmp(s->format, "b");
  for (int64_t r = 0; r < n; r++) {
    int va = valid_at(a, i + r);
    if (va != valid_at(b, j + r)) return 0;
    if (!va) continue;
    if (is_bool &&
        bit_at(a->buffers[1], a->offset + i + r) != bit_at(b->buffers[1], b->offset + j + r))
      return 0;
    if (width &&
        memcmp((const uint8_t *)a->buffers[1] + (a->offset + i + r) * width,
               (const uint8_t *)b->buffers[1] + (b->offset + j + r) * width, (size_t)width))
      return 0;
    if (ow) {
      int64_t a0 = load_offset(a, ow, i + r), a1 = load_offset(a, ow, i + r + 1);
      int64_t b0 = load_offset(b, ow, j + r), b1 = load_offset(b, ow, j + r + 1);
      /* no value bytes (all null or empty): the data buffers may be NULL */
      if (a1 - a0 != b1 - b0 ||
          (a1 > a0 && memcmp((const uint8_t *)a->buffers[2] + a0,
                             (const uint8_t *)b->buffers[2] + b0, (size_t)(a1 - a0))))
        return 0;
    }
  }
  return 1;
}

/* Compares the batch with the per-block batches, from the cursor on. */
static void compare_batch(consumer *c, const struct ArrowArray *batch) {
  const input *in = c->in;
  for (int64_t at = 0; at < batch->length && !c->mismatch;) {
    if (c->kept >= in->n_kept) {
      c->mismatch = 1;
      break;
    }
    const struct ArrowArray *want = &in->kept[c->kept];
    int64_t n = want->length - c->kept_row < batch->length - at ? want->length - c->kept_row
                                                                : batch->length - at;
    for (int64_t k = 0; k < in->schema.n_children && !c->mismatch; k++)
      if (!same_rows(in->schema.children[k], batch->children[k], at, want->children[k], c->kept_row,
                     n))
        c->mismatch = 1;
    at += n;
    if ((c->kept_row += n) == want->length) c->kept++, c->kept_row = 0;
  }
}

static int consume(void *ctx, struct ArrowArray *batch) {
  consumer *c = ctx;
  const struct ArrowSchema *s = &c->in->schema;
  if (batch->n_children != s->n_children) {
    batch->release(batch);
    return fail("a batch", "its number of columns is not the schema's");
  }
  if (c->compare) compare_batch(c, batch);
  if (c->check) {
    for (int64_t k = 0; k < s->n_children; k++)
      bench_touch_column(s->children[k], batch->children[k], &c->columns[k]);
  } else if (s->n_children > 0) {
    int64_t k = checksum_column(s);
    touched t = {0, 0, 0};
    bench_touch_column(s->children[k], batch->children[k], &t);
    c->checksum += t.sum;
  }
  c->short_batches += c->last_was_short;
  c->last_was_short = batch->length < c->target_rows;
  c->rows += batch->length;
  c->batches++;
  batch->release(batch);
  return 0;
}

/* ---- per_block: one reader per block ----------------------------------------------- */

/* The per-block warm-up: counts the blocks, keeps their batches and logs
 * what was decompressed for each (the comet framing's pieces, one per
 * block, were found from the block headers). */
typedef struct warm_up {
  input *in;
  consumer *check;
  int64_t block;        /* being read */
  int block_fresh;      /* no batch of it kept yet */
  int64_t pieces_taken; /* ipc framing: pieces logged before the batch being read */
  /* Rows of the block being read (in_block), and of those read: the last
   * one's apart, since a writer's last block may be shorter. */
  int in_block;
  int64_t rows_now, blocks_done, min_before_last, last_rows, max_rows;
} warm_up;

static void *grow(void *p, int64_t *capacity, int64_t need, size_t elem) {
  if (need <= *capacity) return p;
  int64_t cap = *capacity ? *capacity : 1024;
  while (cap < need) cap *= 2;
  void *q = realloc(p, (size_t)cap * elem);
  if (!q) {
    fprintf(stderr, "xchg bench shuffle: out of memory\n");
    exit(1);
  }
  *capacity = cap;
  return q;
}

static int keep_batch(void *ctx, struct ArrowArray *batch) {
  warm_up *w = ctx;
  const struct ArrowSchema *s = &w->in->schema;
  if (batch->n_children != s->n_children)
    return consume(w->check, batch); /* which says what is wrong */
  for (int64_t k = 0; k < s->n_children; k++)
    bench_touch_column(s->children[k], batch->children[k], &w->check->columns[k]);
  w->check->rows += batch->length;
  w->check->batches++;
  input *in = w->in;
  kept_pieces kp = {w->pieces_taken, in->n_pieces - w->pieces_taken};
  if (in->framing == SHAPE_SHUFFLE_COMET)
    kp = (kept_pieces){w->block, w->block_fresh && in->codec != SHAPE_SHUFFLE_NONE};
  w->pieces_taken = in->n_pieces;
  w->block_fresh = 0;
  w->rows_now += batch->length;
  in->kept = grow(in->kept, &in->kept_capacity, in->n_kept + 1, sizeof *in->kept);
  in->kept_pieces =
      grow(in->kept_pieces, &in->pieces_of_kept_capacity, in->n_kept + 1, sizeof *in->kept_pieces);
  in->kept_pieces[in->n_kept] = kp;
  in->kept[in->n_kept++] = *batch;
  return 0;
}

static void log_piece(void *ctx, xchg_block_codec codec, const void *src, size_t src_size,
                      size_t dst_size) {
  warm_up *w = ctx;
  input *in = w->in;
  shape_shuffle_codec c = codec == XCHG_BLOCK_ZSTD ? SHAPE_SHUFFLE_ZSTD : SHAPE_SHUFFLE_LZ4;
  in->several_codecs |= in->codec != SHAPE_SHUFFLE_NONE && in->codec != c;
  in->codec = c;
  in->pieces = grow(in->pieces, &in->pieces_capacity, in->n_pieces + 1, sizeof *in->pieces);
  in->pieces[in->n_pieces++] = (piece){src, src_size, dst_size};
}

/* Block b of the input starts at byte at. */
static void block_starts(input *in, int64_t b, size_t at) {
  in->block_at = grow(in->block_at, &in->block_at_capacity, b + 1, sizeof *in->block_at);
  in->block_at[b] = at;
}

/* Before block b, at byte `at` of the ipc framing (the comet framing's
 * were counted and placed from their headers, the ipc framing's are as
 * they are read). */
/* Counts the rows of the block just read. */
static void end_block(warm_up *w) {
  if (w->blocks_done == 1 || (w->blocks_done > 1 && w->last_rows < w->min_before_last))
    w->min_before_last = w->last_rows;
  w->last_rows = w->rows_now;
  if (w->rows_now > w->max_rows) w->max_rows = w->rows_now;
  w->blocks_done++;
  w->rows_now = 0;
  w->in_block = 0;
}

/* What the blocks' rows were, once all are read. */
static void note_block_rows(input *in, const warm_up *w) {
  int64_t n = w->blocks_done;
  in->block_rows_max = w->max_rows;
  in->block_rows_min =
      n > 1 && w->min_before_last < w->last_rows ? w->min_before_last : w->last_rows;
  in->uniform_blocks = n <= 1 || (w->min_before_last == w->max_rows && w->last_rows <= w->max_rows);
}

static int start_block(warm_up *w, int64_t b, size_t at) {
  input *in = w->in;
  if (w->in_block) end_block(w);
  w->in_block = 1;
  if (in->framing == SHAPE_SHUFFLE_IPC) {
    in->n_blocks = b + 1;
    block_starts(in, b, at);
  } else if (b >= in->n_blocks)
    return fail("per_block", "the comet stream has more blocks than their headers say");
  w->block = b;
  w->block_fresh = 1;
  return 0;
}

typedef struct reading {
  input *in;
  xchg_ipc_read_options opts;
  sink_fn sink;
  void *sink_ctx;
  warm_up *warm; /* the per-block warm-up, else NULL */
} reading;

/* Whether a and b have the same types, nested ones and dictionaries
 * included (names and metadata aside). */
static bool same_types(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (strcmp(a->format, b->format) != 0 || a->n_children != b->n_children ||
      !a->dictionary != !b->dictionary ||
      (a->dictionary && !same_types(a->dictionary, b->dictionary)))
    return false;
  for (int64_t k = 0; k < a->n_children; k++)
    if (!same_types(a->children[k], b->children[k])) return false;
  return true;
}

/* The warm-up reads every block with its own reader, and every mode then
 * reads its batches by the first block's schema: a block of other types
 * (its column count alike) is refused here, before anything reads it. */
static int check_block_schema(const input *in, xchg_ipc_reader *r, xchg_error *err) {
  struct ArrowSchema own;
  if (xchg_ipc_reader_schema(r, &own, err) != XCHG_OK) return -1;
  bool same = same_types(&own, &in->schema);
  own.release(&own);
  if (same) return 0;
  xchg_errorf(err, XCHG_EFORMAT, "its schema's types are not the first block's");
  return -1;
}

static int read_stream(reading *rd, xchg_ipc_reader *r, xchg_error *err) {
  if (rd->warm && check_block_schema(rd->in, r, err) != 0) return -1;
  if (rd->warm && rd->in->framing == SHAPE_SHUFFLE_IPC)
    xchg_ipc_reader_on_decompress(r, log_piece, rd->warm);
  for (;;) {
    struct ArrowArray batch;
    if (xchg_ipc_reader_next(r, &batch, err) != XCHG_OK) return -1;
    if (!batch.release) return 0;
    if (rd->sink(rd->sink_ctx, &batch) != 0) return -2;
  }
}

static int per_block_ipc(reading *rd) {
  input *in = rd->in;
  xchg_error err;
  size_t at = 0;
  for (int64_t b = 0; at < in->size; b++) {
    xchg_ipc_reader *r;
    if (rd->warm && start_block(rd->warm, b, at) != 0) return -1;
    if (xchg_ipc_reader_open_memory(in->data + at, in->size - at, NULL, NULL, &rd->opts, &r,
                                    &err) != XCHG_OK) {
      fprintf(stderr, "xchg bench shuffle: block %lld at byte %zu: %s\n", (long long)b, at,
              err.message);
      return -1;
    }
    int rc = read_stream(rd, r, &err);
    int64_t end = xchg_ipc_reader_stream_end(r);
    xchg_ipc_reader_free(r);
    if (rc == -2) return -1;
    if (rc != 0 || end <= 0) {
      fprintf(stderr, "xchg bench shuffle: block %lld at byte %zu: %s\n", (long long)b, at,
              rc != 0 ? err.message : "the IPC stream has no end");
      return -1;
    }
    at += (size_t)end;
  }
  return 0;
}

static int per_block_comet(reading *rd) {
  input *in = rd->in;
  xchg_istream_options so;
  xchg_istream_options_init(&so);
  so.split_members = 1;
  so.metrics = 0;
  xchg_source *src;
  xchg_istream *s;
  xchg_error err;
  if (xchg_source_from_memory(in->data, in->size, NULL, NULL, &src, &err) != XCHG_OK ||
      xchg_istream_open(src, XCHG_STREAM_COMET, &so, &s, &err) != XCHG_OK)
    return fail("per_block", err.message);
  int rc = 0, more = 1;
  int64_t b = 0;
  for (; more && rc == 0; b++) {
    xchg_source *member;
    xchg_ipc_reader *r;
    if (rd->warm && start_block(rd->warm, b, 0) != 0) {
      rc = -2;
      break;
    }
    if (xchg_source_from_istream_borrowed(s, &member, &err) != XCHG_OK ||
        xchg_ipc_reader_open(member, &rd->opts, &r, &err) != XCHG_OK) {
      rc = -1;
      break;
    }
    rc = read_stream(rd, r, &err);
    xchg_ipc_reader_free(r);
    if (rc == 0 && xchg_istream_next_member(s, &more, &err) != XCHG_OK) rc = -1;
  }
  b--;                              /* the block the loop ended in */
  if (rc == -1 && b < in->n_blocks) /* index_comet found where each begins */
    fprintf(stderr, "xchg bench shuffle: block %lld at byte %zu: %s\n", (long long)b,
            in->block_at[b], err.message);
  else if (rc == -1)
    fail("per_block", err.message);
  xchg_istream_free(s);
  return rc ? -1 : 0;
}

static int per_block(input *in, xchg_pool *pool, sink_fn sink, void *sink_ctx, warm_up *warm) {
  reading rd = {in, {0}, sink, sink_ctx, warm};
  xchg_ipc_read_options_init(&rd.opts);
  rd.opts.pool = pool;
  return in->framing == SHAPE_SHUFFLE_IPC ? per_block_ipc(&rd) : per_block_comet(&rd);
}

/* ---- per_block_then_concat ------------------------------------------------------------ */

/* A concatenated batch: its arrays and every buffer, freed together. */
typedef struct joined {
  struct ArrowArray *pointers[SHAPE_SHUFFLE_MAX_COLUMNS];
  struct ArrowArray children[SHAPE_SHUFFLE_MAX_COLUMNS];
  void *buffers[SHAPE_SHUFFLE_MAX_COLUMNS][3];
  const void *buffer_table[SHAPE_SHUFFLE_MAX_COLUMNS][3];
  const void *root_buffers[1];
} joined;

static void release_joined_child(struct ArrowArray *a) { a->release = NULL; }

static void release_joined(struct ArrowArray *a) {
  joined *j = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++)
    for (int k = 0; k < 3; k++) free(j->buffers[i][k]);
  free(j);
  a->release = NULL;
}

static void *alloc_buffer(size_t n) {
  void *p = NULL;
  return posix_memalign(&p, 64, n ? n : 1) == 0 ? p : NULL;
}

static void set_bits(uint8_t *dst, int64_t at, int64_t n) {
  for (; n > 0 && (at & 7); at++, n--) dst[at >> 3] |= (uint8_t)(1u << (at & 7));
  memset(dst + (at >> 3), 0xff, (size_t)(n >> 3));
  for (int64_t i = n & ~(int64_t)7; i < n; i++)
    dst[(at + i) >> 3] |= (uint8_t)(1u << ((at + i) & 7));
}

/* n bits of src from bit src_at into dst (zeroed) from bit dst_at: whole
 * bytes when both are byte-aligned, else eight bits at a time, shifted. */
static void copy_bits(uint8_t *dst, int64_t dst_at, const uint8_t *src, int64_t src_at, int64_t n) {
  int64_t i = 0;
  if (((dst_at | src_at) & 7) == 0) {
    memcpy(dst + (dst_at >> 3), src + (src_at >> 3), (size_t)(n >> 3));
    i = n & ~(int64_t)7;
  }
  for (; i < n; i += 8) {
    int64_t s = src_at + i, d = dst_at + i, take = n - i < 8 ? n - i : 8;
    unsigned v = src[s >> 3] >> (s & 7);
    if ((s & 7) + take > 8) v |= (unsigned)src[(s >> 3) + 1] << (8 - (s & 7));
    v &= (1u << take) - 1;
    dst[d >> 3] |= (uint8_t)(v << (d & 7));
    if ((d & 7) + take > 8) dst[(d >> 3) + 1] |= (uint8_t)(v >> (8 - (d & 7)));
  }
}

/* Whether the concatenation (and memcpy_limit) handle every column of s:
 * fixed-width, boolean and string/binary columns. */
static int flat_schema(const struct ArrowSchema *s) {
  for (int64_t k = 0; k < s->n_children; k++) {
    const char *f = s->children[k]->format;
    if (!bench_fixed_width(f) && strcmp(f, "b") != 0 && !offset_width(f)) return 0;
    if (s->children[k]->dictionary) return 0;
  }
  return 1;
}

/* Column k of the n batches, concatenated into out. */
static int concat_column(const struct ArrowSchema *s, const struct ArrowArray *parts, int64_t n,
                         int64_t k, int64_t rows, struct ArrowArray *out, void **bufs,
                         const void **table) {
  int width = bench_fixed_width(s->format), is_bool = !strcmp(s->format, "b"),
      ow = offset_width(s->format);
  int64_t nulls = 0, data_bytes = 0;
  for (int64_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[i].children[k];
    nulls += a->null_count;
    if (ow) data_bytes += load_offset(a, ow, a->length) - load_offset(a, ow, 0);
  }
  size_t bitmap = (size_t)(rows + 7) / 8;
  uint8_t *validity = nulls ? calloc(1, bitmap) : NULL;
  uint8_t *values =
      is_bool ? calloc(1, bitmap)
              : alloc_buffer(ow ? (size_t)(rows + 1) * (size_t)ow : (size_t)(rows * width));
  uint8_t *data = ow ? alloc_buffer((size_t)data_bytes) : NULL;
  bufs[0] = validity, bufs[1] = values, bufs[2] = data;
  if ((nulls && !validity) || !values || (ow && !data)) return -1;
  int64_t at = 0, data_at = 0;
  for (int64_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[i].children[k];
    if (validity && a->null_count && a->buffers[0])
      copy_bits(validity, at, a->buffers[0], a->offset, a->length);
    else if (validity)
      set_bits(validity, at, a->length);
    if (is_bool) {
      copy_bits(values, at, a->buffers[1], a->offset, a->length);
    } else if (ow == 4) {
      const int32_t *src = (const int32_t *)a->buffers[1] + a->offset;
      int32_t *dst = (int32_t *)values + at, base = (int32_t)data_at - src[0];
      for (int64_t r = 0; r < a->length; r++) dst[r] = src[r] + base;
    } else if (ow == 8) {
      const int64_t *src = (const int64_t *)a->buffers[1] + a->offset;
      int64_t *dst = (int64_t *)values + at, base = data_at - src[0];
      for (int64_t r = 0; r < a->length; r++) dst[r] = src[r] + base;
    } else {
      memcpy(values + at * width, (const uint8_t *)a->buffers[1] + a->offset * width,
             (size_t)(a->length * width));
    }
    if (ow) {
      int64_t first = load_offset(a, ow, 0), bytes = load_offset(a, ow, a->length) - first;
      if (bytes > 0) /* no value bytes (all null or empty): the data buffer may be NULL */
        memcpy(data + data_at, (const uint8_t *)a->buffers[2] + first, (size_t)bytes);
      data_at += bytes;
    }
    at += a->length;
  }
  if (ow == 4) ((int32_t *)values)[rows] = (int32_t)data_at;
  if (ow == 8) ((int64_t *)values)[rows] = data_at;
  for (int b = 0; b < 3; b++) table[b] = bufs[b];
  *out = (struct ArrowArray){rows,  nulls, 0,    ow ? 3 : 2,           0,
                             table, NULL,  NULL, release_joined_child, NULL};
  return 0;
}

/* Joins parts[0..n) (released here) into one batch. */
static int concat_batches(const struct ArrowSchema *s, struct ArrowArray *parts, int64_t n,
                          int64_t rows, struct ArrowArray *out) {
  joined *j = calloc(1, sizeof *j);
  int rc = j ? 0 : -1;
  if (j)
    *out = (struct ArrowArray){
        rows, 0, 0, 1, s->n_children, j->root_buffers, j->pointers, NULL, release_joined, j};
  for (int64_t k = 0; k < s->n_children && rc == 0; k++) {
    j->pointers[k] = &j->children[k];
    rc = concat_column(s->children[k], parts, n, k, rows, &j->children[k], j->buffers[k],
                       j->buffer_table[k]);
  }
  for (int64_t i = 0; i < n; i++) parts[i].release(&parts[i]);
  if (rc != 0 && j) release_joined(out);
  return rc == 0 ? 0 : fail("per_block_then_concat", "out of memory");
}

/* Holds the per-block batches until they reach the target, then joins them
 * and hands the result on. */
typedef struct concatenator {
  consumer *out;
  struct ArrowArray *pending;
  int64_t n, capacity, rows;
} concatenator;

static int flush_pending(concatenator *cc) {
  if (cc->n == 0) return 0;
  struct ArrowArray batch;
  int rc = concat_batches(&cc->out->in->schema, cc->pending, cc->n, cc->rows, &batch);
  cc->n = cc->rows = 0;
  return rc == 0 ? consume(cc->out, &batch) : rc;
}

static int add_pending(void *ctx, struct ArrowArray *batch) {
  concatenator *cc = ctx;
  if (batch->length == 0) { /* nothing to join, and its buffers may be NULL (an empty block) */
    batch->release(batch);
    return 0;
  }
  cc->pending = grow(cc->pending, &cc->capacity, cc->n + 1, sizeof *cc->pending);
  cc->pending[cc->n++] = *batch;
  cc->rows += batch->length;
  return cc->rows >= cc->out->target_rows ? flush_pending(cc) : 0;
}

static int per_block_then_concat(input *in, xchg_pool *pool, consumer *c) {
  concatenator cc = {c, NULL, 0, 0, 0};
  int rc = per_block(in, pool, add_pending, &cc, NULL);
  if (rc == 0) rc = flush_pending(&cc);
  for (int64_t i = 0; i < cc.n; i++) cc.pending[i].release(&cc.pending[i]);
  free(cc.pending);
  return rc;
}

/* ---- coalesced: xchg_shuffle_reader ----------------------------------------------------- */

/* The blocks in bytes [from, to) of the input read by one
 * xchg_shuffle_reader, its batches handed to c. */
static int coalesced_range(const input *in, size_t from, size_t to, xchg_pool *pool,
                           int64_t target_rows, consumer *c) {
  xchg_shuffle_reader_options o;
  xchg_shuffle_reader_options_init(&o);
  o.framing =
      in->framing == SHAPE_SHUFFLE_COMET ? XCHG_SHUFFLE_FRAMING_COMET : XCHG_SHUFFLE_FRAMING_IPC;
  o.target_rows = target_rows;
  o.read.pool = pool;
  xchg_shuffle_reader *r;
  xchg_source *src;
  xchg_error err;
  if (xchg_shuffle_reader_open(&o, &r, &err) != XCHG_OK) return fail("coalesced", err.message);
  int rc = 0;
  if (xchg_source_from_memory(in->data + from, to - from, NULL, NULL, &src, &err) != XCHG_OK ||
      xchg_shuffle_reader_add_source(r, src, &err) != XCHG_OK)
    rc = fail("coalesced", err.message);
  while (rc == 0) {
    struct ArrowArray batch;
    if (xchg_shuffle_reader_next(r, &batch, &err) != XCHG_OK) rc = fail("coalesced", err.message);
    if (rc != 0 || !batch.release) break;
    rc = consume(c, &batch);
  }
  xchg_shuffle_reader_free(r);
  return rc;
}

static int coalesced(const input *in, xchg_pool *pool, int64_t target_rows, consumer *c) {
  return coalesced_range(in, 0, in->size, pool, target_rows, c);
}

/* ---- knowing the input ---------------------------------------------------------------- */

static uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static uint32_t load_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int comet_tag(const uint8_t *tag, shape_shuffle_codec *codec) {
  static const char tags[4][5] = {"NONE", "LZ4_", "ZSTD", "SNAP"};
  for (int i = 0; i < 4; i++)
    if (memcmp(tag, tags[i], 4) == 0) return *codec = (shape_shuffle_codec)i, 0;
  return -1;
}

/* The comet framing's blocks, from their headers; their stream is each
 * one's piece for codec_limit (piece b is block b's, its size found by the
 * bare codec). */
static int index_comet(input *in) {
  for (size_t at = 0; at < in->size;) {
    shape_shuffle_codec codec;
    uint64_t len = in->size - at >= COMET_HEADER ? load_le64(in->data + at) : 0;
    if (in->size - at < COMET_HEADER || len < COMET_HEADER - 8 || len > in->size - at - 8 ||
        comet_tag(in->data + at + 16, &codec) != 0) {
      fprintf(stderr, "xchg bench shuffle: block %lld at byte %zu: not a Comet block header\n",
              (long long)in->n_blocks, at);
      return -1;
    }
    if (in->n_blocks == 0) in->codec = codec;
    if (codec != in->codec) return fail("the input", "its Comet blocks use several codecs");
    block_starts(in, in->n_blocks, at);
    if (codec != SHAPE_SHUFFLE_NONE) {
      in->pieces = grow(in->pieces, &in->pieces_capacity, in->n_pieces + 1, sizeof *in->pieces);
      in->pieces[in->n_pieces++] =
          (piece){in->data + at + COMET_HEADER, (size_t)len + 8 - COMET_HEADER, 0};
    }
    in->n_blocks++;
    at += (size_t)len + 8;
  }
  return 0;
}

/* Kept batches [group[g], group[g+1]) fill destination g: as many as it
 * takes to reach target_rows. */
static int make_groups(input *in, int64_t target_rows) {
  in->group = malloc((size_t)(in->n_kept + 1) * sizeof *in->group);
  if (!in->group) return fail("the input", "out of memory");
  int64_t rows = 0;
  in->n_groups = 0;
  in->group[0] = 0;
  for (int64_t i = 0; i < in->n_kept; i++) {
    rows += in->kept[i].length;
    if (rows >= target_rows || i == in->n_kept - 1) {
      in->group[++in->n_groups] = i + 1;
      rows = 0;
    }
  }
  return 0;
}

static int check_sums(const input *in, const consumer *c, const consumer *reference,
                      const char *mode) {
  if (c->rows != in->rows)
    return fprintf(stderr, "xchg bench shuffle: %s read %lld rows, the input has %lld\n", mode,
                   (long long)c->rows, (long long)in->rows),
           -1;
  for (int64_t k = 0; k < in->schema.n_children; k++) {
    uint64_t want = in->generated ? in->want.value[k] : reference->columns[k].sum;
    int64_t nulls = in->generated ? in->want.nulls[k] : reference->columns[k].nulls;
    if (c->columns[k].sum != want || c->columns[k].nulls != nulls)
      return fprintf(
                 stderr,
                 "xchg bench shuffle: %s: column %s sums to %llu with %lld nulls, %s %llu with %lld\n",
                 mode, in->schema.children[k]->name, (unsigned long long)c->columns[k].sum,
                 (long long)c->columns[k].nulls, in->generated ? "generated" : "per_block read",
                 (unsigned long long)want, (long long)nulls),
             -1;
  }
  if (c->mismatch)
    return fprintf(stderr,
                   "xchg bench shuffle: %s: batch %lld is not what the per-block read gave\n", mode,
                   (long long)c->batches),
           -1;
  if (c->short_batches && in->generated && !in->cuts && strcmp(mode, "per_block") != 0)
    return fprintf(stderr,
                   "xchg bench shuffle: %s: %lld batches short of the target before the last\n",
                   mode, (long long)c->short_batches),
           -1;
  return 0;
}

/* ---- memcpy_limit and codec_limit ------------------------------------------------------- */

typedef struct copy {
  const uint8_t *src;
  size_t size;
  int summed; /* of the checksum column: handover_limit's consumer reads it */
} copy;

/* What memcpy_limit copies: every buffer of every kept batch, in order
 * (group g's are copies[copy_start[g], copy_start[g+1])), and the bytes of
 * the largest group. */
typedef struct limits {
  copy *copies;
  int64_t n_copies, copies_capacity;
  int64_t *copy_start;
  size_t memcpy_dst, codec_dst;
  size_t dst_size; /* of each dst: the larger of the two, and room for an LZ4 block more */
  int has_codec;
  LZ4F_dctx *lz4[BENCH_MAX_THREADS];
  ZSTD_DCtx *zstd[BENCH_MAX_THREADS];
  uint8_t *dst[BENCH_MAX_THREADS];
  bench_handover *handover; /* handover_limit's groups, in batch buffers of memcpy_dst bytes */
} limits;

/* Bytes [offset, offset + size) of a buffer: an absent one (NULL: the
 * reader gives a batch of no rows, or strings without value bytes, no
 * buffer) copies nothing, and no address is made from it. */
static void add_copy(limits *l, const void *buffer, int64_t offset, int64_t size, int summed) {
  if (!buffer || size <= 0) return;
  l->copies = grow(l->copies, &l->copies_capacity, l->n_copies + 1, sizeof *l->copies);
  l->copies[l->n_copies++] = (copy){(const uint8_t *)buffer + offset, (size_t)size, summed};
}

static void add_column_copies(limits *l, const struct ArrowSchema *s, const struct ArrowArray *a,
                              int summed) {
  if (a->length == 0) return; /* its offsets may be absent too */
  int64_t bits = (a->offset + a->length + 7) / 8 - a->offset / 8;
  if (a->null_count) add_copy(l, a->buffers[0], a->offset / 8, bits, summed);
  int width = bench_fixed_width(s->format), ow = offset_width(s->format);
  if (!strcmp(s->format, "b")) {
    add_copy(l, a->buffers[1], a->offset / 8, bits, summed);
  } else if (ow) {
    int64_t first = load_offset(a, ow, 0);
    add_copy(l, a->buffers[1], a->offset * ow, (a->length + 1) * ow, summed);
    add_copy(l, a->buffers[2], first, load_offset(a, ow, a->length) - first, summed);
  } else {
    add_copy(l, a->buffers[1], a->offset * width, a->length * width, summed);
  }
}

static size_t bare_size(const input *in, limits *l, const piece *p);
static void fill_handed_group(void *l, int k, int64_t g, uint8_t *dst);
static void read_group(void *ctx, int64_t g, const uint8_t *dst);

static int prepare_limits(input *in, limits *l, int threads) {
  memset(l, 0, sizeof *l);
  l->copy_start = malloc((size_t)(in->n_groups + 1) * sizeof *l->copy_start);
  if (!l->copy_start) return fail("the limits", "out of memory");
  for (int t = 0; t < threads; t++) {
    LZ4F_createDecompressionContext(&l->lz4[t], LZ4F_VERSION);
    l->zstd[t] = ZSTD_createDCtx();
  }
  for (int64_t g = 0; g < in->n_groups; g++) {
    l->copy_start[g] = l->n_copies;
    size_t codec_bytes = 0;
    for (int64_t j = in->group[g]; j < in->group[g + 1]; j++) {
      for (int64_t k = 0; k < in->schema.n_children; k++)
        add_column_copies(l, in->schema.children[k], in->kept[j].children[k],
                          k == checksum_column(&in->schema));
      const kept_pieces *kp = &in->kept_pieces[j];
      for (int64_t i = kp->first; i < kp->first + kp->n; i++) {
        piece *p = &in->pieces[i];
        if (in->framing == SHAPE_SHUFFLE_COMET && (p->dst_size = bare_size(in, l, p)) == 0)
          return fprintf(stderr, "xchg bench shuffle: block %lld: the bare %s codec fails on it\n",
                         (long long)i, shape_shuffle_codec_name(in->codec)),
                 -1;
        codec_bytes += p->dst_size;
      }
    }
    size_t copy_bytes = 0;
    for (int64_t i = l->copy_start[g]; i < l->n_copies; i++) copy_bytes += l->copies[i].size;
    if (copy_bytes > l->memcpy_dst) l->memcpy_dst = copy_bytes;
    if (codec_bytes > l->codec_dst) l->codec_dst = codec_bytes;
  }
  l->copy_start[in->n_groups] = l->n_copies;
  l->has_codec = in->n_pieces > 0;
  l->dst_size = (l->memcpy_dst > l->codec_dst ? l->memcpy_dst : l->codec_dst) + LZ4_BLOCK_ROOM;
  for (int t = 0; t < threads; t++)
    if (!(l->dst[t] = alloc_buffer(l->dst_size))) return fail("the limits", "out of memory");
  /* handover_limit fills as many groups ahead as the reader has batches
   * being built (two a thread), each in a buffer of its own */
  l->handover = bench_handover_new(in->n_groups, l->memcpy_dst, 2 * threads,
                                   (bench_handover_work){fill_handed_group, read_group, l});
  return l->handover ? 0 : fail("the limits", "out of memory");
}

static void free_limits(limits *l, int threads) {
  for (int t = 0; t < threads; t++) {
    LZ4F_freeDecompressionContext(l->lz4[t]);
    ZSTD_freeDCtx(l->zstd[t]);
    free(l->dst[t]);
  }
  bench_handover_free(l->handover);
  free(l->copies);
  free(l->copy_start);
}

/* The snappy framing format's chunks: the stream identifier, compressed
 * and uncompressed chunks, skippable ones.  Every data chunk's masked
 * CRC-32C of its bytes is verified: the format carries it in every chunk,
 * so a reader must check it, as the bare LZ4 and zstd decoders check the
 * checksums their frames carry (the generated ones carry none).  Returns
 * the bytes written, 0 on failure; with dst NULL only counts. */
static size_t snappy_framed(const uint8_t *p, size_t n, uint8_t *dst, size_t capacity) {
  size_t out = 0;
  while (n >= 4) {
    unsigned type = p[0];
    size_t len = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16;
    if (len > n - 4) return 0;
    const uint8_t *body = p + 8;
    size_t body_len = len - 4, produced = 0;
    if ((type == 0x00 || type == 0x01) && len < 4) return 0;
    if (type == 0x00 &&
        snappy_uncompressed_length((const char *)body, body_len, &produced) != SNAPPY_OK)
      return 0;
    if (type == 0x01) produced = body_len;
    if (dst && produced > capacity - out) return 0;
    if (dst && type == 0x00 &&
        snappy_uncompress((const char *)body, body_len, (char *)dst + out, &produced) != SNAPPY_OK)
      return 0;
    if (dst && type == 0x01) memcpy(dst + out, body, body_len);
    if (dst && type <= 0x01 &&
        stream_snappy_mask_crc(xchg_crc32c(dst + out, produced)) != load_le32(p + 4))
      return 0;
    out += type <= 0x01 ? produced : 0;
    p += 4 + len;
    n -= 4 + len;
  }
  return n == 0 ? out : 0;
}

/* Decompresses piece p into dst (capacity bytes) with thread t's contexts;
 * returns the bytes written, 0 on failure. */
static size_t bare_decompress(const input *in, limits *l, int t, const piece *p, uint8_t *dst,
                              size_t capacity) {
  switch (in->codec) {
    case SHAPE_SHUFFLE_ZSTD: {
      size_t r = ZSTD_decompressDCtx(l->zstd[t], dst, capacity, p->src, p->src_size);
      return ZSTD_isError(r) ? 0 : r;
    }
    case SHAPE_SHUFFLE_SNAPPY: return snappy_framed(p->src, p->src_size, dst, capacity);
    default: {
      size_t out = 0, in_at = 0;
      for (;;) {
        size_t dst_len = capacity - out, src_len = p->src_size - in_at;
        size_t r = LZ4F_decompress(l->lz4[t], dst + out, &dst_len, p->src + in_at, &src_len, NULL);
        if (LZ4F_isError(r)) {
          LZ4F_resetDecompressionContext(l->lz4[t]);
          return 0;
        }
        out += dst_len;
        in_at += src_len;
        if (r == 0) return out;
        if (dst_len == 0 && src_len == 0) return 0;
      }
    }
  }
}

/* A Comet block's decompressed size: decompressed once, into a buffer
 * grown until it fits. */
static size_t bare_size(const input *in, limits *l, const piece *p) {
  if (in->codec == SHAPE_SHUFFLE_SNAPPY) return snappy_framed(p->src, p->src_size, NULL, 0);
  size_t capacity = 4 * p->src_size + 4096, got = 0;
  for (int tries = 0; tries < 12 && got == 0; tries++, capacity *= 4) {
    uint8_t *buf = malloc(capacity);
    if (!buf) return 0;
    got = bare_decompress(in, l, 0, p, buf, capacity);
    free(buf);
  }
  return got;
}

typedef struct limit_job {
  const input *in;
  limits *l;
  int codec; /* codec_limit, else memcpy_limit */
  int t, threads;
  int failed;
} limit_job;

/* Group g's copies into dst, in order. */
static void fill_group(const limits *l, int64_t g, uint8_t *dst) {
  size_t at = 0;
  for (int64_t i = l->copy_start[g]; i < l->copy_start[g + 1]; i++) {
    memcpy(dst + at, l->copies[i].src, l->copies[i].size);
    at += l->copies[i].size;
  }
}

static void run_limit_share(void *arg) {
  limit_job *j = arg;
  const input *in = j->in;
  limits *l = j->l;
  uint8_t *dst = l->dst[j->t];
  for (int64_t g = j->t; g < in->n_groups; g += j->threads) {
    size_t at = 0;
    if (!j->codec) {
      fill_group(l, g, dst);
    } else {
      for (int64_t k = in->group[g]; k < in->group[g + 1]; k++)
        for (int64_t i = in->kept_pieces[k].first;
             i < in->kept_pieces[k].first + in->kept_pieces[k].n; i++) {
          const piece *p = &in->pieces[i];
          /* All the room behind: LZ4F decodes a block in place only with
           * a whole block's room, else through its own buffer and a copy
           * (the reader's arena gives it that room). */
          if (bare_decompress(in, l, j->t, p, dst + at, l->dst_size - at) != p->dst_size)
            j->failed = 1;
          at += p->dst_size;
        }
    }
    __asm__ volatile("" : : "r"(dst) : "memory");
  }
}

/* One timing of a limit on `threads` threads (the caller's among them),
 * from the moment all have started. */
static int64_t limit_once(const input *in, limits *l, int codec, int threads, int *failed) {
  limit_job jobs[BENCH_MAX_THREADS];
  for (int t = 0; t < threads; t++) jobs[t] = (limit_job){in, l, codec, t, threads, 0};
  int64_t ns = bench_time_parts(threads, run_limit_share, jobs, sizeof jobs[0]);
  for (int t = 0; t < threads; t++) *failed |= jobs[t].failed;
  return ns;
}

/* ---- handover_limit --------------------------------------------------------------------------- */

/* Group g's copies into dst, on any thread (the copies need no context). */
static void fill_handed_group(void *l, int k, int64_t g, uint8_t *dst) {
  (void)k;
  fill_group(l, g, dst);
}

static volatile uint64_t handover_sink;

/* The consumer's read of group g: the checksum column's bytes, summed as
 * 64-bit words (the reading modes' consumer sums its values). */
static void read_group(void *ctx, int64_t g, const uint8_t *dst) {
  const limits *l = ctx;
  uint64_t sum = 0;
  size_t at = 0;
  for (int64_t i = l->copy_start[g]; i < l->copy_start[g + 1]; i++) {
    if (l->copies[i].summed)
      for (size_t k = 0; k + 8 <= l->copies[i].size; k += 8) {
        uint64_t word;
        memcpy(&word, dst + at + k, 8);
        sum += word;
      }
    at += l->copies[i].size;
  }
  handover_sink += sum;
}

/* ---- split_limit ------------------------------------------------------------------------------ */

/* A part of the input, the reader that reads it and its consumer. */
typedef struct split_part {
  const input *in;
  size_t from, to;
  int64_t target_rows;
  consumer c;
  int rc;
} split_part;

static void read_part(void *arg) {
  split_part *p = arg;
  p->rc = coalesced_range(p->in, p->from, p->to, NULL, p->target_rows, &p->c);
}

/* The first block that starts at byte `at` or after it (n_blocks if none). */
static int64_t block_from(const input *in, size_t at) {
  int64_t lo = 0, hi = in->n_blocks;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (in->block_at[mid] < at)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Cuts the input into at most `threads` parts of about equal bytes, each
 * starting where a block does; returns how many. */
static int cut_parts(const input *in, int threads, const consumer *c, split_part *parts) {
  int n = 0;
  for (int t = 0; t < threads; t++) {
    int64_t b = block_from(in, (size_t)((uint64_t)in->size * (uint64_t)t / (uint64_t)threads));
    size_t from = b < in->n_blocks ? in->block_at[b] : in->size;
    if (n > 0 && from <= parts[n - 1].from) continue; /* blocks larger than a part */
    parts[n++] = (split_part){in, from, in->size, c->target_rows, *c, 0};
  }
  for (int k = 0; k + 1 < n; k++) parts[k].to = parts[k + 1].from;
  return n;
}

/* Adds what part consumer q saw to c. */
static void merge_consumer(consumer *c, const consumer *q) {
  c->rows += q->rows;
  c->batches += q->batches;
  c->short_batches += q->short_batches;
  c->checksum += q->checksum;
  c->mismatch |= q->mismatch;
  for (int64_t k = 0; k < c->in->schema.n_children; k++) {
    c->columns[k].sum += q->columns[k].sum;
    c->columns[k].nulls += q->columns[k].nulls;
    c->columns[k].bytes += q->columns[k].bytes;
  }
}

/* One timing of split_limit on `threads` threads, the parts' consumers
 * merged into c; the caller reads the first part. */
static int64_t split_once(const input *in, int threads, consumer *c, int *failed) {
  split_part parts[BENCH_MAX_THREADS];
  int n = cut_parts(in, threads, c, parts);
  int64_t ns = bench_time_parts(n, read_part, parts, sizeof parts[0]);
  for (int k = 0; k < n; k++) {
    merge_consumer(c, &parts[k].c);
    *failed |= parts[k].rc != 0;
  }
  return ns;
}

/* ---- measuring ------------------------------------------------------------------------------ */

/* The reading modes first: they report a checksum. */
enum {
  COALESCED,
  PER_BLOCK,
  PER_BLOCK_THEN_CONCAT,
  SPLIT_LIMIT,
  MEMCPY_LIMIT,
  HANDOVER_LIMIT,
  CODEC_LIMIT,
  N_MODES
};
static const char *const mode_names[N_MODES] = {
    "coalesced",      "per_block",  "per_block_then_concat", "split_limit", "memcpy_limit",
    "handover_limit", "codec_limit"};

typedef struct settings {
  int64_t target_rows;
  int threads; /* the all-cores count */
  int runs;
  int json;
} settings;

typedef struct result {
  int mode, threads;
  bench_timing time;
  int64_t batches_out;
  uint64_t checksum; /* of the reading modes' timed runs */
  /* On T threads: the speed-up over one thread of each run over its own
   * one-thread run, and for coalesced that against its limit's. */
  bench_spread speedup, vs_limit, vs_handover, vs_split;
} result;

/* One run of a mode; 0 or -1.  check: the warm-up's run, which touches and
 * checks every value.  *batches gets the batches handed out. */
static int run_mode(input *in, limits *l, const settings *set, int mode, int threads,
                    xchg_pool *pool, int check, int64_t *ns, int64_t *batches, uint64_t *checksum) {
  consumer c = {
      .in = in,
      .check = check, /* split_limit's parts do not start at the first batch */
      .compare = check && mode != PER_BLOCK && mode != SPLIT_LIMIT && flat_schema(&in->schema),
      .target_rows = set->target_rows};
  int failed = 0, rc = 0;
  if (mode == MEMCPY_LIMIT || mode == CODEC_LIMIT) {
    *ns = limit_once(in, l, mode == CODEC_LIMIT, threads, &failed);
    *batches = in->n_groups;
    return failed ? fail(mode_names[mode], "the bare codec failed") : 0;
  }
  if (mode == HANDOVER_LIMIT) {
    *ns = bench_handover_once(l->handover, threads);
    *batches = in->n_groups;
    return 0;
  }
  if (mode == SPLIT_LIMIT) { /* timed from when its threads are there */
    *ns = split_once(in, threads, &c, &failed);
    rc = failed ? -1 : 0;
  } else {
    int64_t start = bench_now_ns();
    if (mode == COALESCED)
      rc = coalesced(in, pool, set->target_rows, &c);
    else if (mode == PER_BLOCK)
      rc = per_block(in, pool, consume, &c, NULL);
    else
      rc = per_block_then_concat(in, pool, &c);
    *ns = bench_now_ns() - start;
  }
  *batches = c.batches;
  *checksum = c.checksum;
  if (rc == 0 && check) rc = check_sums(in, &c, NULL, mode_names[mode]);
  if (rc == 0 && c.rows != in->rows)
    rc = fail(mode_names[mode], "a timed run read another number of rows");
  return rc;
}

/* Coalesced's speed-up on T threads over mode `limit`'s, run by run. */
static bench_spread speedup_over(int64_t ns[][2][BENCH_MAX_RUNS], int limit, int runs) {
  static double r[BENCH_MAX_RUNS];
  for (int i = 0; i < runs; i++)
    r[i] = ((double)ns[COALESCED][0][i] / (double)ns[COALESCED][1][i]) /
           ((double)ns[limit][0][i] / (double)ns[limit][1][i]);
  return bench_spread_of(r, runs);
}

/* Each mode's speed-up on T threads, run by run: a run on one thread and
 * the same mode's run on T follow each other, so that on a shared host
 * the two meet about the same load, where the medians of all runs may
 * not; and coalesced's over its limit's (codec_limit, or memcpy_limit
 * uncompressed, and then also handover_limit's), run by run too.  Before
 * ns is sorted. */
static void paired_speedups(int64_t ns[][2][BENCH_MAX_RUNS], const int *applies, int runs,
                            bench_spread *speedup, bench_spread *vs_limit,
                            bench_spread *vs_handover, bench_spread *vs_split) {
  static double r[BENCH_MAX_RUNS];
  for (int m = 0; m < N_MODES; m++) {
    if (!applies[m]) continue;
    for (int i = 0; i < runs; i++) r[i] = (double)ns[m][0][i] / (double)ns[m][1][i];
    speedup[m] = bench_spread_of(r, runs);
  }
  int limit = applies[CODEC_LIMIT] ? CODEC_LIMIT : MEMCPY_LIMIT;
  if (applies[limit]) *vs_limit = speedup_over(ns, limit, runs);
  if (limit == MEMCPY_LIMIT && applies[HANDOVER_LIMIT])
    *vs_handover = speedup_over(ns, HANDOVER_LIMIT, runs);
  *vs_split = speedup_over(ns, SPLIT_LIMIT, runs);
}

/* Every mode that applies, on 1 and set->threads threads, runs taking
 * turns; fills results, returns how many or -1. */
static int measure(input *in, const settings *set, xchg_pool *pool, result *results) {
  limits l;
  int counts[2] = {1, set->threads}, n_counts = set->threads > 1 ? 2 : 1, n = 0, rc = 0;
  if (prepare_limits(in, &l, set->threads) != 0) {
    free_limits(&l, set->threads);
    return -1;
  }
  int flat = flat_schema(&in->schema);
  int applies[N_MODES] = {1, 1, flat, 1, flat, flat, l.has_codec};
  static int64_t ns[N_MODES][2][BENCH_MAX_RUNS];
  int64_t batches[N_MODES][2];
  uint64_t checksum[N_MODES][2] = {{0}};
  for (int m = 0; m < N_MODES && rc == 0; m++) /* the warm-ups */
    for (int t = 0; t < n_counts && rc == 0 && applies[m]; t++)
      rc = run_mode(in, &l, set, m, counts[t], t ? pool : NULL, 1, &ns[m][t][0], &batches[m][t],
                    &checksum[m][t]);
  /* Each mode's thread counts run in turn, in the other order every other
   * run: the run right after another of the same mode finds its input
   * warm in the cache. */
  for (int run = 0; run < set->runs && rc == 0; run++)
    for (int m = 0; m < N_MODES && rc == 0; m++)
      for (int k = 0; k < n_counts && rc == 0 && applies[m]; k++) {
        int t = run % 2 ? n_counts - 1 - k : k;
        int64_t got;
        rc = run_mode(in, &l, set, m, counts[t], t ? pool : NULL, 0, &ns[m][t][run], &got,
                      &checksum[m][t]);
        if (rc == 0 && got != batches[m][t])
          rc = fail(mode_names[m], "a timed run handed out another number of batches");
      }
  bench_spread speedup[N_MODES] = {{0}}, vs_limit = {0}, vs_handover = {0}, vs_split = {0};
  if (rc == 0 && n_counts == 2)
    paired_speedups(ns, applies, set->runs, speedup, &vs_limit, &vs_handover, &vs_split);
  for (int m = 0; m < N_MODES && rc == 0; m++)
    for (int t = 0; t < n_counts && applies[m]; t++)
      results[n++] = (result){m,
                              counts[t],
                              bench_summarize(ns[m][t], set->runs),
                              batches[m][t],
                              checksum[m][t],
                              t ? speedup[m] : (bench_spread){0},
                              t && m == COALESCED ? vs_limit : (bench_spread){0},
                              t && m == COALESCED ? vs_handover : (bench_spread){0},
                              t && m == COALESCED ? vs_split : (bench_spread){0}};
  free_limits(&l, set->threads);
  return rc == 0 ? n : -1;
}

/* ---- preparing an input -------------------------------------------------------------------- */

/* Whether s or a child of it, at any depth, is dictionary-encoded. */
static int has_dictionary(const struct ArrowSchema *s) {
  if (s->dictionary != NULL) return 1;
  for (int64_t k = 0; k < s->n_children; k++)
    if (has_dictionary(s->children[k])) return 1;
  return 0;
}

/* The first block's schema: every mode's consumer reads the batches with it. */
static int read_schema(input *in) {
  xchg_error err;
  xchg_ipc_reader *r = NULL;
  xchg_istream *s = NULL;
  xchg_source *src = NULL;
  xchg_status st;
  if (in->framing == SHAPE_SHUFFLE_IPC) {
    st = xchg_ipc_reader_open_memory(in->data, in->size, NULL, NULL, NULL, &r, &err);
  } else {
    xchg_istream_options so;
    xchg_istream_options_init(&so);
    so.split_members = 1;
    st = xchg_source_from_memory(in->data, in->size, NULL, NULL, &src, &err);
    if (st == XCHG_OK) st = xchg_istream_open(src, XCHG_STREAM_COMET, &so, &s, &err);
    if (st == XCHG_OK) st = xchg_source_from_istream_borrowed(s, &src, &err);
    if (st == XCHG_OK) st = xchg_ipc_reader_open(src, NULL, &r, &err);
  }
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(r, &in->schema, &err);
  xchg_ipc_reader_free(r);
  xchg_istream_free(s);
  if (st != XCHG_OK) return fail("the first block", err.message);
  in->columns = (int)in->schema.n_children;
  in->cuts = has_dictionary(&in->schema);
  if (in->schema.n_children > SHAPE_SHUFFLE_MAX_COLUMNS)
    return fail("the input", "more than 256 columns");
  return 0;
}

/* Finds the blocks, keeps their batches and checks the per-block read
 * (one thread) against the generator. */
static int prepare_input(input *in, int64_t target_rows) {
  if (in->size == 0) return fail("the input", "is empty: no block");
  if (read_schema(in) != 0 || (in->framing == SHAPE_SHUFFLE_COMET && index_comet(in) != 0))
    return -1;
  consumer check = {.in = in, .check = 1, .target_rows = target_rows};
  warm_up w = {.in = in, .check = &check};
  if (per_block(in, NULL, keep_batch, &w, &w) != 0) return -1;
  if (w.in_block) end_block(&w);
  note_block_rows(in, &w);
  in->rows = check.rows;
  if (in->several_codecs)
    return fail("the input", "its blocks use several body codecs: the codec limit takes one");
  if (in->rows == 0) return fail("the input", "holds no rows: nothing to time");
  if (in->generated && check_sums(in, &check, NULL, "per_block") != 0) return -1;
  if (!in->generated) { /* the per-block read is what the other modes must find */
    for (int64_t k = 0; k < in->schema.n_children; k++) in->want.value[k] = check.columns[k].sum;
    for (int64_t k = 0; k < in->schema.n_children; k++) in->want.nulls[k] = check.columns[k].nulls;
    in->generated = 1; /* from here on, checked like generated data */
    in->block_rows = in->uniform_blocks || in->n_blocks == 0
                         ? in->block_rows_max
                         : (in->rows + in->n_blocks / 2) / in->n_blocks;
  }
  return make_groups(in, target_rows);
}

static void free_input(input *in) {
  for (int64_t i = 0; i < in->n_kept; i++) in->kept[i].release(&in->kept[i]);
  if (in->schema.release) in->schema.release(&in->schema);
  free(in->kept);
  free(in->kept_pieces);
  free(in->pieces);
  free(in->group);
  free(in->block_at);
}

/* ---- output ----------------------------------------------------------------------------------- */

static const result *find(const result *rs, int n, int mode, int threads) {
  for (int i = 0; i < n; i++)
    if (rs[i].mode == mode && rs[i].threads == threads) return &rs[i];
  return NULL;
}

static double us_per_block(const input *in, const result *r) {
  return in->n_blocks ? 1000 * r->time.median_ms / (double)in->n_blocks : 0;
}

static void print_table(const input *in, const settings *set, const result *rs, int n) {
  char sizes[96];
  if (in->uniform_blocks)
    snprintf(sizes, sizeof sizes, "%lld rows", (long long)in->block_rows);
  else /* a file's blocks, written by anything */
    snprintf(sizes, sizeof sizes, "%lld to %lld rows (mean %lld)", (long long)in->block_rows_min,
             (long long)in->block_rows_max, (long long)in->block_rows);
  printf(
      "\n%s %s: %d columns, %lld block%s of %s (%lld rows, %.1f MB), into batches of %lld "
      "rows\n",
      shape_shuffle_framing_name(in->framing), shape_shuffle_codec_name(in->codec), in->columns,
      (long long)in->n_blocks, in->n_blocks == 1 ? "" : "s", sizes, (long long)in->rows,
      (double)in->size / 1e6, (long long)set->target_rows);
  printf("  %-22s %7s %9s %-19s %9s %8s %10s %9s\n", "mode", "threads", "median_ms", "  min-max ms",
         "us/block", "batches", "vs memcpy", "vs codec");
  for (int i = 0; i < n; i++) {
    const result *r = &rs[i], *mem = find(rs, n, MEMCPY_LIMIT, r->threads),
                 *codec = find(rs, n, CODEC_LIMIT, r->threads);
    char vs_mem[16] = "-", vs_codec[16] = "-";
    if (mem) snprintf(vs_mem, sizeof vs_mem, "%.2fx", r->time.median_ms / mem->time.median_ms);
    if (codec)
      snprintf(vs_codec, sizeof vs_codec, "%.2fx", r->time.median_ms / codec->time.median_ms);
    printf("  %-22s %7d %9.3f %9.3f-%-9.3f %9.3f %8lld %10s %9s\n", mode_names[r->mode], r->threads,
           r->time.median_ms, r->time.min_ms, r->time.max_ms, us_per_block(in, r),
           (long long)r->batches_out, vs_mem, vs_codec);
  }
  for (int m = 0; m < N_MODES; m++)
    if (!find(rs, n, m, 1))
      printf("  (no %s: %s)\n", mode_names[m],
             m == CODEC_LIMIT ? "nothing is compressed"
                              : "a column type it does not join (nested or dictionary)");
  /* Per thread count, coalesced against the engines' path, and the floors
   * under it: where the codec takes most of both reads' time, the bare
   * codec's share of per_block_then_concat bounds what coalescing can save;
   * a Comet block's whole stream is compressed, so it is decompressed into
   * a window and its buffers are then copied into place (the way:
   * their places are known only once the stream is read), and its floor is
   * both limits, one after the other. */
  for (int t = 1; t <= set->threads; t += set->threads > 1 ? set->threads - 1 : 1) {
    const result *c = find(rs, n, COALESCED, t), *b = find(rs, n, PER_BLOCK_THEN_CONCAT, t),
                 *mem = find(rs, n, MEMCPY_LIMIT, t), *codec = find(rs, n, CODEC_LIMIT, t);
    const char *plural = t > 1 ? "s" : "";
    char bound[64] = "";
    if (b && codec)
      snprintf(bound, sizeof bound, " (codec_limit alone %.2fx it)",
               codec->time.median_ms / b->time.median_ms);
    if (c && b)
      printf("  %d thread%s: coalesced %.2fx per_block_then_concat%s\n", t, plural,
             c->time.median_ms / b->time.median_ms, bound);
    if (c && mem && codec && in->framing == SHAPE_SHUFFLE_COMET)
      printf(
          "  %d thread%s: coalesced %.2fx codec_limit + memcpy_limit (decompressed into a "
          "window, then copied into place)\n",
          t, plural, c->time.median_ms / (codec->time.median_ms + mem->time.median_ms));
  }
  for (int m = 0; m < N_MODES && set->threads > 1; m++) {
    const result *all = find(rs, n, m, set->threads);
    if (all)
      printf("  %-22s speed-up on %d threads: %.2fx (runs %.2f-%.2f)\n", mode_names[m],
             set->threads, all->speedup.median, all->speedup.min, all->speedup.max);
  }
  /* The yardstick: the coalesced read's speed-up against its limit's. */
  const int limit = find(rs, n, CODEC_LIMIT, 1) ? CODEC_LIMIT : MEMCPY_LIMIT;
  const result *cn = find(rs, n, COALESCED, set->threads);
  if (set->threads > 1 && cn && find(rs, n, limit, 1))
    printf("  coalesced speed-up / %s speed-up: %.2f (runs %.2f-%.2f)\n", mode_names[limit],
           cn->vs_limit.median, cn->vs_limit.min, cn->vs_limit.max);
  /* Against a floor whose batches are handed over, as a reader's are. */
  if (set->threads > 1 && cn && limit == MEMCPY_LIMIT && find(rs, n, HANDOVER_LIMIT, 1))
    printf("  coalesced speed-up / %s speed-up: %.2f (runs %.2f-%.2f)\n",
           mode_names[HANDOVER_LIMIT], cn->vs_handover.median, cn->vs_handover.min,
           cn->vs_handover.max);
  /* Against readers that share nothing: the host's own ceiling. */
  if (set->threads > 1 && cn)
    printf("  coalesced speed-up / %s speed-up: %.2f (runs %.2f-%.2f)\n", mode_names[SPLIT_LIMIT],
           cn->vs_split.median, cn->vs_split.min, cn->vs_split.max);
}

static void print_json_results(const input *in, const result *rs, int n, int *first) {
  for (int i = 0; i < n; i++) {
    const result *r = &rs[i];
    printf(
        "%s{\"format\":\"%s\",\"codec\":\"%s\",\"columns\":%d,\"block_rows\":%lld,"
        "\"block_rows_min\":%lld,\"block_rows_max\":%lld,\"blocks\":%lld,\"rows\":%lld,"
        "\"threads\":%d,\"mode\":\"%s\",\"median_ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f,\"us_per_block\":%.6f,"
        "\"batches_out\":%lld",
        *first ? "" : ",", shape_shuffle_framing_name(in->framing),
        shape_shuffle_codec_name(in->codec), in->columns, (long long)in->block_rows,
        (long long)in->block_rows_min, (long long)in->block_rows_max, (long long)in->n_blocks,
        (long long)in->rows, r->threads, mode_names[r->mode], r->time.median_ms, r->time.min_ms,
        r->time.max_ms, us_per_block(in, r), (long long)r->batches_out);
    if (r->mode < MEMCPY_LIMIT)
      printf(",\"checksum_column\":\"%s\",\"checksum\":\"%llu\"",
             in->schema.children[checksum_column(&in->schema)]->name,
             (unsigned long long)r->checksum);
    printf("}");
    *first = 0;
  }
}

/* ---- the command ------------------------------------------------------------------------------- */

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: xchg bench shuffle [FILE] [--format comet|ipc] [--compression none|lz4|zstd|snappy]\n"
      "                          [--columns C] [--block-rows R] [--rows N] [--target-rows N]\n"
      "                          [--threads T] [--runs K] [--quick] [--json]\n"
      "  Shape `shuffle` of SHAPES.md: 262,144 rows (--rows to change) in blocks of R rows,\n"
      "  C columns, each block its own IPC stream, generated in memory, read into batches of\n"
      "  --target-rows (default 8192) rows, on 1 thread and on T (default: all cores).  Without\n"
      "  options every configuration: both framings, codecs none/lz4/zstd (and snappy for\n"
      "  comet), C = 5 and 50, R = 64, 512 and 8192; each option takes a comma-separated\n"
      "  list and keeps only those.  With FILE (loaded into memory first): that file of\n"
      "  concatenated blocks, written by anything (--format if it cannot be told).\n"
      "  Each figure is the median of --runs K timed runs (default 5) after one warm-up, which\n"
      "  checks every column's sums (its values' bits or bytes, nested children's included;\n"
      "  of dictionary-encoded ones, the indices) against the generator's (a FILE's: against\n"
      "  the per_block read's), and the coalesced batches row by row against the per-block\n"
      "  ones (top-level values; of nested columns, their nulls).  --quick: 16,384 rows and\n"
      "  2 runs unless given, for tests.  --codec is the old\n"
      "  name of --compression (deprecated), as in xchg gen.\n"
      "modes:\n"
      "  coalesced              xchg_shuffle_reader: the schema once, every block decoded straight\n"
      "                           into its place in target-size batches\n"
      "  per_block              one xchg_ipc_reader per block (comet: per block of one\n"
      "                           xchg_istream): one batch per block\n"
      "  per_block_then_concat  the same, then concatenated into target-size batches (each\n"
      "                           column sized once, every value copied once): the engines' path\n"
      "  memcpy_limit           each block's decoded buffers copied once into target-size\n"
      "                           destinations: the floor of one write per byte\n"
      "  handover_limit         the same copies into batch buffers recycled among the threads,\n"
      "                           each batch handed in order to the calling thread, which reads\n"
      "                           its checksum column and gives it back: the floor of a reader\n"
      "                           whose batches one thread consumes\n"
      "  split_limit            the input cut at block boundaries into T parts of about equal\n"
      "                           bytes, each read by an xchg_shuffle_reader of its own (no pool)\n"
      "                           on a thread of its own that consumes its batches: what T\n"
      "                           threads gain when they share nothing (one thread: one reader)\n"
      "  codec_limit            the bare decompressor (contexts reused) over the same\n"
      "                           compressed bytes into such destinations, checksums the format\n"
      "                           carries verified (compressed input only)\n"
      "columns:\n"
      "  threads     1, or T: the readers get a pool of T threads, the limits share their\n"
      "                destinations among T threads\n"
      "  median_ms   one read of the whole input, first byte to last batch released\n"
      "  min-max ms  the fastest and slowest of the timed runs\n"
      "  us/block    median_ms per block, in microseconds\n"
      "  batches     batches handed out (the limits: destinations filled)\n"
      "  vs memcpy   median_ms / memcpy_limit's on as many threads; vs codec: / codec_limit's\n"
      "Then, per configuration, coalesced against per_block_then_concat (and, where something is\n"
      "compressed, codec_limit against it: the least any read of those blocks takes); for Comet\n"
      "blocks with a codec, coalesced against codec_limit + memcpy_limit (their stream\n"
      "decompressed into a window, then its buffers copied into place: their floor); each mode's\n"
      "speed-up on T threads, and coalesced's speed-up over its limit's (codec_limit, or\n"
      "memcpy_limit and handover_limit uncompressed) and over split_limit's: the median over\n"
      "the runs of each run's\n"
      "own, a run on one thread and the same mode's on T following each other, in the other\n"
      "order every other run (on a shared host the two meet about the same load), with the\n"
      "min-max.\n"
      "--json: {\"benchmark\",\"machine\",\"cores\",\"target_rows\",\"seed\",\"results\":[{\"format\",\"codec\",\n"
      "  \"columns\",\"block_rows\",\"block_rows_min\",\"block_rows_max\",\"blocks\",\"rows\",\"threads\",\"mode\",\n"
      "  \"median_ms\",\"min_ms\",\"max_ms\",\"us_per_block\",\"batches_out\"}]}: block_rows is R, or for a FILE\n"
      "  whose blocks differ (but for a shorter last one) their mean; the reading modes add \"checksum_column\" and \"checksum\": the\n"
      "  sum of that column (c1) over their last timed run, a decimal string, as `xchg gen --sums` gives it\n");
}

typedef struct encoded {
  uint8_t *data;
  size_t size, capacity;
} encoded;

static xchg_status append_block(void *ctx, const void *data, size_t n, int64_t index,
                                int64_t blocks, xchg_error *err) {
  encoded *e = ctx;
  (void)index, (void)blocks;
  if (e->size + n > e->capacity) {
    size_t cap = e->capacity ? e->capacity : 1 << 20;
    while (cap < e->size + n) cap *= 2;
    uint8_t *more = realloc(e->data, cap);
    if (!more) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    e->data = more;
    e->capacity = cap;
  }
  memcpy(e->data + e->size, data, n);
  e->size += n;
  return XCHG_OK;
}

/* Measures one input and prints it; 0 or -1. */
static int bench_input(input *in, const settings *set, xchg_pool *pool, int *first_json) {
  static result results[2 * N_MODES];
  int rc = prepare_input(in, set->target_rows), n = rc == 0 ? measure(in, set, pool, results) : -1;
  if (n >= 0 && set->json) print_json_results(in, results, n, first_json);
  if (n >= 0 && !set->json) print_table(in, set, results, n);
  fflush(stdout);
  free_input(in);
  return n >= 0 ? 0 : -1;
}

/* A comma-separated list of values, each parsed by parse (0 on success). */
typedef struct list {
  int n;
  int64_t v[8];
} list;

/* arg as a list into out: up to 8 comma-separated values, none empty
 * ("5,,50" and "5," are errors, as in every other list option), none
 * twice; false after the usage error, which names what each value may be
 * ("--codec takes up to 8 comma-separated values, each none, lz4, zstd or
 * snappy, not 'lz5'"), as the other benchmarks' do. */
static bool parse_list(const char *arg, const char *option, const char *each,
                       int (*parse)(const char *, int64_t *), list *out) {
  out->n = 0;
  for (const char *s = arg;;) {
    char item[64];
    size_t len = strcspn(s, ",");
    if (len == 0 || len >= sizeof item || out->n == 8) break;
    memcpy(item, s, len);
    item[len] = '\0';
    if (parse(item, &out->v[out->n++]) != 0) break;
    for (int k = 0; k < out->n - 1; k++)
      if (out->v[k] == out->v[out->n - 1]) { /* the same configuration run twice, as two */
        xc_usage_error("bench shuffle", "%s lists '%s' twice, in '%s'", option, item, arg);
        return false;
      }
    if (s[len] == '\0') return true;
    s += len + 1;
  }
  xc_usage_error("bench shuffle", "%s takes up to 8 comma-separated values, each %s, not '%s'",
                 option, each, arg);
  return false;
}

static int parse_framing(const char *s, int64_t *out) {
  shape_shuffle_framing f;
  return shape_shuffle_parse_framing(s, &f) == 0 ? (*out = f, 0) : -1;
}

static int parse_codec(const char *s, int64_t *out) {
  shape_shuffle_codec c;
  return shape_shuffle_parse_codec(s, &c) == 0 ? (*out = c, 0) : -1;
}

/* Digits alone, as every count option takes them (xc_int_option): no
 * blank nor sign, which strtoll would skip. */
static int parse_in_range(const char *s, int64_t max, int64_t *out) {
  if (!isdigit((unsigned char)*s)) return -1;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  return end != s && !*end && errno == 0 && v > 0 && v <= max ? (*out = v, 0) : -1;
}

static int parse_count(const char *s, int64_t *out) { return parse_in_range(s, INT32_MAX, out); }

static int parse_columns(const char *s, int64_t *out) {
  return parse_in_range(s, SHAPE_SHUFFLE_MAX_COLUMNS, out);
}

int xchg_bench_shuffle(int argc, char **argv) {
  static const struct option long_opts[] = {{"format", 1, 0, 'f'},
                                            {"compression", 1, 0, 'c'},
                                            {"codec", 1, 0, 'o'},
                                            {"columns", 1, 0, 'C'},
                                            {"block-rows", 1, 0, 'R'},
                                            {"rows", 1, 0, 'r'},
                                            {"target-rows", 1, 0, 'T'},
                                            {"threads", 1, 0, 't'},
                                            {"runs", 1, 0, 'k'},
                                            {"quick", 0, 0, 'q'},
                                            {"json", 0, 0, 'j'},
                                            {"help", 0, 0, 'h'},
                                            {0, 0, 0, 0}};
  list framings = {2, {SHAPE_SHUFFLE_IPC, SHAPE_SHUFFLE_COMET}};
  list codecs = {4,
                 {SHAPE_SHUFFLE_NONE, SHAPE_SHUFFLE_LZ4, SHAPE_SHUFFLE_ZSTD, SHAPE_SHUFFLE_SNAPPY}};
  list columns = {2, {5, 50}}, block_rows = {3, {64, 512, 8192}};
  settings set = {8192, bench_cores(), -1, 0};
  int64_t rows = -1, v;
  int opt, quick = 0, given_format = 0, given_shape = 0;
  bool ok = true;
  xc_options_begin();
  while (ok && (opt = xc_getopt(argc, argv, ":h", long_opts)) != -1) {
    switch (opt) {
      case 'f':
        ok = parse_list(optarg, "--format", "comet or ipc", parse_framing, &framings);
        given_format = 1;
        break;
      case 'o':
        xc_deprecated_option("bench shuffle", "--codec", "--compression"); /* fall through */
      case 'c':
        ok = parse_list(optarg, "--compression", "none, lz4, zstd or snappy", parse_codec, &codecs);
        given_shape = 1;
        break;
      case 'C':
        ok = parse_list(optarg, "--columns", "an integer from 1 to 256", parse_columns, &columns);
        given_shape = 1;
        break;
      case 'R':
        ok = parse_list(optarg, "--block-rows", "an integer from 1 to 2147483647", parse_count,
                        &block_rows);
        given_shape = 1;
        break;
      case 'r':
        ok = xc_int_option("bench shuffle", "--rows", optarg, 1, INT32_MAX, &rows), given_shape = 1;
        break;
      case 'T':
        ok =
            xc_int_option("bench shuffle", "--target-rows", optarg, 1, INT32_MAX, &set.target_rows);
        break;
      case 't':
        ok = xc_int_option("bench shuffle", "--threads", optarg, 1, BENCH_MAX_THREADS, &v);
        set.threads = (int)v;
        break;
      case 'k':
        ok = xc_int_option("bench shuffle", "--runs", optarg, 1, BENCH_MAX_RUNS, &v),
        set.runs = (int)v;
        break;
      case 'q': quick = 1; break;
      case 'j': set.json = 1; break;
      case 'h': usage(stdout); return 0;
      default: return xc_option_error("bench shuffle", argv, long_opts, opt);
    }
  }
  if (!ok) return 2;
  if (set.runs < 0) set.runs = quick ? 2 : BENCH_RUNS;
  if (rows < 0) rows = quick ? 16384 : SHAPE_SHUFFLE_ROWS;
  const char *file = optind < argc ? argv[optind] : NULL;
  if (optind + 1 < argc)
    return xc_usage_error("bench shuffle", "one FILE at most, not '%s' too", argv[optind + 1]);
  if (file && (given_shape || (framings.n > 1 && given_format)))
    return xc_usage_error(
        "bench shuffle",
        "with FILE, --compression, --columns, --block-rows and --rows do not apply, and --format "
        "takes one value");
  int configurations = 0;
  for (int f = 0; f < framings.n; f++)
    for (int c = 0; c < codecs.n; c++)
      configurations += framings.v[f] == SHAPE_SHUFFLE_COMET || codecs.v[c] != SHAPE_SHUFFLE_SNAPPY;
  if (!file && configurations == 0)
    return xc_usage_error("bench shuffle",
                          "snappy is for --format comet: IPC body compression has no snappy");
  xchg_pool *pool = NULL;
  if (set.threads > 1 && xchg_pool_create(set.threads, &pool, NULL) != XCHG_OK)
    return fprintf(stderr, "xchg bench shuffle: cannot create a pool of %d threads\n", set.threads),
           1;
  char seed[16];
  snprintf(seed, sizeof seed, "%d", SEED);
  if (!set.json)
    printf("machine: %s\n", bench_machine());
  else
    printf(
        "{\"benchmark\":\"shuffle\",\"machine\":\"%s\",\"cores\":%d,\"target_rows\":%lld,\"seed\":%s,\"results\":[",
        bench_machine(), bench_cores(), (long long)set.target_rows,
        file ? "null" : seed); /* a FILE's blocks were made by its writer */
  int rc = 0, first_json = 1;
  if (file) {
    input in = {0};
    char why[256];
    in.data = bench_load_file(file, &in.size, why, sizeof why);
    if (!in.data) rc = fail(file, why);
    /* A Comet block has a codec tag at bytes 16..19; an IPC stream begins
     * with its continuation marker or its metadata length. */
    shape_shuffle_codec tag;
    in.framing = given_format ? (shape_shuffle_framing)framings.v[0]
                 : in.size >= COMET_HEADER && comet_tag(in.data + 16, &tag) == 0
                     ? SHAPE_SHUFFLE_COMET
                     : SHAPE_SHUFFLE_IPC;
    if (rc == 0) rc = bench_input(&in, &set, pool, &first_json);
    free((void *)in.data);
  }
  for (int f = 0; f < framings.n && !file && rc == 0; f++)
    for (int c = 0; c < codecs.n && rc == 0; c++)
      for (int k = 0; k < columns.n && rc == 0; k++)
        for (int r = 0; r < block_rows.n && rc == 0; r++) {
          shape_shuffle_config cfg = {SEED,
                                      rows,
                                      block_rows.v[r],
                                      (int)columns.v[k],
                                      (shape_shuffle_framing)framings.v[f],
                                      (shape_shuffle_codec)codecs.v[c]};
          if (cfg.framing == SHAPE_SHUFFLE_IPC && cfg.codec == SHAPE_SHUFFLE_SNAPPY) continue;
          input in = {0};
          in.framing = cfg.framing;
          in.codec = cfg.codec;
          in.generated = 1;
          in.block_rows = cfg.block_rows;
          encoded e = {0};
          xchg_error err;
          if (shape_shuffle_encode(&cfg, append_block, &e, &in.want, &err) != XCHG_OK) {
            rc = fail("generating", err.message);
          } else {
            in.data = e.data;
            in.size = e.size;
            rc = bench_input(&in, &set, pool, &first_json);
          }
          free(e.data);
        }
  if (set.json && rc == 0) printf("]}\n");
  xchg_pool_free(pool);
  return rc == 0 ? 0 : 1;
}
