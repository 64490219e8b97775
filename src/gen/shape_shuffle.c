/* shape_shuffle.c — see shape_shuffle.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/shape_shuffle.h"
#include "xchg/testing.h"
#include "xchg/writer.h"

static const char *const framing_names[] = {"ipc", "comet"};
static const char *const codec_names[] = {"none", "lz4", "zstd", "snappy"};

const char *shape_shuffle_framing_name(shape_shuffle_framing f) { return framing_names[f]; }
const char *shape_shuffle_codec_name(shape_shuffle_codec c) { return codec_names[c]; }

int shape_shuffle_parse_framing(const char *name, shape_shuffle_framing *out) {
  for (int i = 0; i < 2; i++)
    if (!strcmp(name, framing_names[i])) return *out = (shape_shuffle_framing)i, 0;
  return -1;
}

int shape_shuffle_parse_codec(const char *name, shape_shuffle_codec *out) {
  for (int i = 0; i < 4; i++)
    if (!strcmp(name, codec_names[i])) return *out = (shape_shuffle_codec)i, 0;
  return -1;
}

int64_t shape_shuffle_blocks(const shape_shuffle_config *c) {
  /* No rows is one block of none, not an empty file: every reader takes a
   * block of 0 rows, and an empty file is no IPC stream to one that is not
   * told it holds Comet blocks. */
  if (c->rows == 0) return 1;
  return (c->rows + c->block_rows - 1) / c->block_rows;
}

/* ---- values: one splitmix64 draw per (seed, row, column) ------------------- */

static uint64_t draw(uint64_t seed, int64_t row, int column) {
  uint64_t z =
      seed ^ ((uint64_t)row * 0xd1b54a32d192ed03ull) ^ ((uint64_t)column * 0x8cb92ba72f3d8dd7ull);
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

enum { KEY, RANDOM, REAL, TEXT, SMALL, KINDS };

static const char *const kind_formats[KINDS] = {"l", "l", "g", "u", "i"};

/* ---- the schema ------------------------------------------------------------------ */

typedef struct schema_storage {
  struct ArrowSchema *pointers[SHAPE_SHUFFLE_MAX_COLUMNS];
  struct ArrowSchema children[SHAPE_SHUFFLE_MAX_COLUMNS];
  char names[SHAPE_SHUFFLE_MAX_COLUMNS][12];
} schema_storage;

static void release_child(struct ArrowSchema *s) { s->release = NULL; }

static void release_schema(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
  free(s->private_data);
  s->release = NULL;
}

static int make_schema(int columns, struct ArrowSchema *out) {
  schema_storage *st = calloc(1, sizeof *st);
  if (!st) return -1;
  for (int i = 0; i < columns; i++) {
    snprintf(st->names[i], sizeof st->names[i], "c%d", i);
    st->children[i] = (struct ArrowSchema){
        kind_formats[i % KINDS], st->names[i], NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL,
        release_child,           NULL};
    st->pointers[i] = &st->children[i];
  }
  *out = (struct ArrowSchema){"+s", "", NULL, 0, columns, st->pointers, NULL, release_schema, st};
  return 0;
}

/* ---- one block -------------------------------------------------------------------- */

/* A block's arrays: the struct and its children, and every data buffer
 * (up to three per column), freed together. */
typedef struct block_storage {
  struct ArrowArray *pointers[SHAPE_SHUFFLE_MAX_COLUMNS];
  struct ArrowArray children[SHAPE_SHUFFLE_MAX_COLUMNS];
  const void *buffers[SHAPE_SHUFFLE_MAX_COLUMNS][3];
  const void *root_buffers[1];
} block_storage;

static void release_child_array(struct ArrowArray *a) { a->release = NULL; }

static void release_block(struct ArrowArray *a) {
  block_storage *b = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++)
    for (int k = 0; k < 3; k++) free((void *)b->buffers[i][k]);
  free(b);
  a->release = NULL;
}

static void set_bit(uint8_t *bits, int64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* Fills column `column` for rows [first, first + n); -1 when out of memory. */
static int fill_column(uint64_t seed, int column, int64_t first, int64_t n, struct ArrowArray *a,
                       const void **buffers, shape_shuffle_sums *sums) {
  uint64_t sum = 0;
  int64_t nulls = 0;
  void *values = NULL, *validity = NULL, *data = NULL;
  int n_buffers = 2;
  switch (column % KINDS) {
    case KEY:
    case RANDOM: {
      int64_t *v = values = malloc((size_t)n * 8 + 1);
      for (int64_t i = 0; v && i < n; i++) {
        v[i] = column % KINDS == KEY ? first + i : (int64_t)draw(seed, first + i, column);
        sum += (uint64_t)v[i];
      }
      break;
    }
    case REAL: {
      double *v = values = malloc((size_t)n * 8 + 1);
      uint8_t *bits = validity = calloc(1, (size_t)(n + 7) / 8 + 1);
      for (int64_t i = 0; v && bits && i < n; i++) {
        uint64_t r = draw(seed, first + i, column);
        v[i] = (double)(r >> 11) / 9007199254740992.0;
        if (r % 20 == 0) { /* ~5% null */
          nulls++;
          continue;
        }
        set_bit(bits, i);
        uint64_t pattern;
        memcpy(&pattern, &v[i], 8);
        sum += pattern;
      }
      break;
    }
    case TEXT: {
      int32_t *offsets = values = malloc((size_t)(n + 1) * 4);
      char *chars = data = malloc((size_t)n * 11 + 1);
      n_buffers = 3;
      int32_t at = 0;
      for (int64_t i = 0; offsets && chars && i <= n; i++) {
        offsets[i] = at;
        if (i == n) break;
        int len = sprintf(chars + at, "item-%d", (int)(draw(seed, first + i, column) % 100000));
        for (int k = 0; k < len; k++) sum += (uint8_t)chars[at + k];
        at += len;
      }
      break;
    }
    default: {
      int32_t *v = values = malloc((size_t)n * 4 + 1);
      for (int64_t i = 0; v && i < n; i++) {
        v[i] = (int32_t)(draw(seed, first + i, column) % 1000);
        sum += (uint64_t)(int64_t)v[i];
      }
      break;
    }
  }
  buffers[0] = validity, buffers[1] = values, buffers[2] = data;
  if (!values || (column % KINDS == REAL && !validity) || (n_buffers == 3 && !data)) return -1;
  *a = (struct ArrowArray){n,       nulls, 0,    n_buffers,           0,
                           buffers, NULL,  NULL, release_child_array, NULL};
  if (sums) {
    sums->value[column] += sum;
    sums->nulls[column] += nulls;
  }
  return 0;
}

static int make_block(const shape_shuffle_config *c, int64_t index, struct ArrowArray *out,
                      shape_shuffle_sums *sums) {
  block_storage *b = calloc(1, sizeof *b);
  if (!b) return -1;
  int64_t first = index * c->block_rows;
  int64_t n = c->rows - first < c->block_rows ? c->rows - first : c->block_rows;
  *out = (struct ArrowArray){
      n, 0, 0, 1, c->columns, b->root_buffers, b->pointers, NULL, release_block, b};
  int rc = 0;
  for (int i = 0; i < c->columns; i++) {
    b->pointers[i] = &b->children[i];
    if (rc == 0) rc = fill_column(c->seed, i, first, n, &b->children[i], b->buffers[i], sums);
  }
  if (rc != 0) release_block(out);
  return rc;
}

/* ---- encoding ---------------------------------------------------------------------- */

static xchg_status check_config(const shape_shuffle_config *c, xchg_error *err) {
  if (c->columns < 1 || c->columns > SHAPE_SHUFFLE_MAX_COLUMNS)
    return xchg_errorf(err, XCHG_EINVAL, "%d columns: the shape has 1 to %d", c->columns,
                       SHAPE_SHUFFLE_MAX_COLUMNS);
  if (c->rows < 0 || c->block_rows < 1 || c->block_rows > INT32_MAX)
    return xchg_errorf(err, XCHG_EINVAL,
                       "%lld rows in blocks of %lld: needs rows >= 0 and block rows "
                       "in [1, 2^31)",
                       (long long)c->rows, (long long)c->block_rows);
  if (c->framing == SHAPE_SHUFFLE_IPC && c->codec == SHAPE_SHUFFLE_SNAPPY)
    return xchg_errorf(err, XCHG_EINVAL,
                       "the ipc framing has no snappy: Arrow IPC body compression "
                       "is LZ4_FRAME or ZSTD (snappy is for --format comet)");
  return XCHG_OK;
}

/* One block as its IPC stream. */
static xchg_status block_stream(const shape_shuffle_config *c, const struct ArrowSchema *schema,
                                const struct ArrowArray *batch, xchg_buf **out, xchg_error *err) {
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  if (c->framing == SHAPE_SHUFFLE_IPC)
    opts.codec = c->codec == SHAPE_SHUFFLE_LZ4    ? XCHG_BLOCK_LZ4_FRAME
                 : c->codec == SHAPE_SHUFFLE_ZSTD ? XCHG_BLOCK_ZSTD
                                                  : XCHG_BLOCK_NONE;
  if (opts.codec == XCHG_BLOCK_ZSTD) opts.level = 1;
  xchg_ipc_writer *w;
  xchg_status st = xchg_ipc_writer_open_memory(schema, &opts, &w, err);
  if (st != XCHG_OK) return st;
  st = xchg_ipc_writer_write(w, batch, err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, err);
  if (st == XCHG_OK && !(*out = xchg_ipc_writer_take_memory(w)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_ipc_writer_free(w);
  return st;
}

/* The stream wrapped in a Comet block. */
static xchg_status comet_block(const shape_shuffle_config *c, xchg_buf *stream, xchg_buf **out,
                               xchg_error *err) {
  static const xchg_stream_codec inner[] = {XCHG_STREAM_NONE, XCHG_STREAM_LZ4_FRAME,
                                            XCHG_STREAM_ZSTD, XCHG_STREAM_SNAPPY_FRAMED};
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.comet_inner = inner[c->codec];
  eo.comet_field_count = (uint64_t)c->columns;
  eo.checksum = 0;
  eo.block_size = 64 * 1024;
  if (c->codec == SHAPE_SHUFFLE_ZSTD) eo.level = 1;
  return xchg_stream_encode(XCHG_STREAM_COMET, &eo, xchg_buf_data(stream), xchg_buf_size(stream),
                            out, err);
}

xchg_status shape_shuffle_encode(const shape_shuffle_config *c, shape_shuffle_write_fn write,
                                 void *ctx, shape_shuffle_sums *sums, xchg_error *err) {
  xchg_status st = check_config(c, err);
  if (st != XCHG_OK) return st;
  struct ArrowSchema schema;
  if (make_schema(c->columns, &schema) != 0) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  int64_t blocks = shape_shuffle_blocks(c);
  for (int64_t i = 0; i < blocks && st == XCHG_OK; i++) {
    struct ArrowArray batch;
    if (make_block(c, i, &batch, sums) != 0) {
      st = xchg_errorf(err, XCHG_ENOMEM, "out of memory generating block %lld", (long long)i);
      break;
    }
    xchg_buf *stream = NULL, *framed = NULL;
    st = block_stream(c, &schema, &batch, &stream, err);
    batch.release(&batch);
    if (st == XCHG_OK && c->framing == SHAPE_SHUFFLE_COMET)
      st = comet_block(c, stream, &framed, err);
    xchg_buf *block = framed ? framed : stream;
    if (st == XCHG_OK) st = write(ctx, xchg_buf_data(block), xchg_buf_size(block), i, blocks, err);
    xchg_buf_unref(stream);
    xchg_buf_unref(framed);
  }
  schema.release(&schema);
  return st;
}
