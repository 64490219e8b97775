/* bench_decode.c — `xchg bench decode`: shape 1 (`cache`) of SHAPES.md.
 *
 * Reads an Arrow IPC stream from memory — the cache shape generated here
 * with each body codec, or a file the user brings — fully and narrowly
 * (one column), on one thread and on all cores, touching every selected
 * value.  Beside each figure it measures, in the same run, the codec limit:
 * the bare decompressor (one reused context, one thread) over exactly the
 * compressed buffers that read decompressed, or memcpy of the decoded bytes
 * for uncompressed data; and for uncompressed data, read zero-copy, the
 * zero-copy floor: the least any reader does per batch (see below).  A timed run reads the input from open to close
 * and only releases each batch: with a pool, decoding goes on in the
 * background while the caller works on a batch, so timing the calls alone
 * would undercount.  The warm-up run touches every selected value and
 * checks them against the generator's sums. */
#include <getopt.h>
#include <lz4frame.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "load.h"
#include "gen/shapes.h"
#include "bench.h"
#include "cli/options.h"
#include "handover.h"
#include "stats.h"
#include "touch.h"
#include "xchg/writer.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"

/* ---- one read ------------------------------------------------------------------ */

typedef struct compressed_buffer {
  xchg_block_codec codec;
  const void *src;
  size_t src_size, dst_size;
} compressed_buffer;

typedef struct buffer_list {
  compressed_buffer *items;
  int64_t count, capacity;
  int64_t src_bytes, dst_bytes;
  int64_t *batch_end; /* per batch: the items up to its end */
  int64_t batches, batch_capacity;
} buffer_list;

/* Marks the end of a batch's buffers (read without a pool, in order). */
static void end_batch(buffer_list *l) {
  if (l->batches == l->batch_capacity) {
    l->batch_capacity = l->batch_capacity ? 2 * l->batch_capacity : 1024;
    l->batch_end = realloc(l->batch_end, (size_t)l->batch_capacity * sizeof *l->batch_end);
  }
  l->batch_end[l->batches++] = l->count;
}

static void buffer_list_free(buffer_list *l) {
  free(l->items);
  free(l->batch_end);
}

static void collect(void *ctx, xchg_block_codec codec, const void *src, size_t src_size,
                    size_t dst_size) {
  buffer_list *l = ctx;
  if (l->count == l->capacity) {
    l->capacity = l->capacity ? 2 * l->capacity : 1024;
    l->items = realloc(l->items, (size_t)l->capacity * sizeof *l->items);
  }
  l->items[l->count++] = (compressed_buffer){codec, src, src_size, dst_size};
  l->src_bytes += (int64_t)src_size;
  l->dst_bytes += (int64_t)dst_size;
}

/* The columns a read counts and checks, each its own figures. */
#define MAX_COLUMNS 64

typedef struct read_result {
  int64_t decode_ns;
  int64_t batches, rows;
  touched columns[MAX_COLUMNS];
  int64_t n_columns;
  char column_names[MAX_COLUMNS][32];
} read_result;

/* The read options of a timed run: on pool, validated as `validation` says. */
static xchg_ipc_read_options read_options(xchg_pool *pool, xchg_validation validation) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = pool;
  opts.validation = validation;
  return opts;
}

/* Reads all of data with the given columns (NULL: all) on pool, in
 * r->decode_ns from open to close.  With list (the warm-up: no pool, the
 * hook is not locked), touches every value and records the compressed
 * buffers. */
static int read_once(const uint8_t *data, size_t size, char **columns, int n_columns,
                     xchg_pool *pool, xchg_validation validation, buffer_list *list,
                     read_result *r) {
  xchg_ipc_read_options opts = read_options(pool, validation);
  xchg_ipc_reader *reader;
  xchg_error err;
  memset(r, 0, sizeof *r);
  const int64_t start = bench_now_ns();
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, &reader, &err) != XCHG_OK ||
      (n_columns &&
       xchg_ipc_reader_select(reader, (const char *const *)columns, n_columns, &err) != XCHG_OK)) {
    fprintf(stderr, "xchg bench decode: %s\n", err.message);
    xchg_ipc_reader_free(reader); /* NULL when the open failed */
    return -1;
  }
  if (list) xchg_ipc_reader_on_decompress(reader, collect, list);
  struct ArrowSchema schema;
  if (xchg_ipc_reader_schema(reader, &schema, &err) != XCHG_OK) {
    fprintf(stderr, "xchg bench decode: %s\n", err.message);
    xchg_ipc_reader_free(reader);
    return -1;
  }
  if (schema.n_children > MAX_COLUMNS) { /* not counted, the figures would leave them out */
    fprintf(stderr,
            "xchg bench decode: %lld columns selected, it reads at most %d: choose some with "
            "--columns\n",
            (long long)schema.n_children, MAX_COLUMNS);
    schema.release(&schema);
    xchg_ipc_reader_free(reader);
    return -1;
  }
  r->n_columns = schema.n_children;
  for (int64_t c = 0; c < r->n_columns; c++)
    snprintf(r->column_names[c], 32, "%s", schema.children[c]->name);
  for (;;) {
    struct ArrowArray batch;
    xchg_status st = xchg_ipc_reader_next(reader, &batch, &err);
    if (st != XCHG_OK) {
      fprintf(stderr, "xchg bench decode: %s\n", err.message);
      schema.release(&schema);
      xchg_ipc_reader_free(reader);
      return -1;
    }
    if (!batch.release) break;
    for (int64_t c = 0; list && c < r->n_columns; c++)
      bench_touch_column(schema.children[c], batch.children[c], &r->columns[c]);
    if (list) end_batch(list);
    r->batches++;
    r->rows += batch.length;
    batch.release(&batch);
  }
  schema.release(&schema);
  /* The warm-up checks that the reader read all of data: IPC streams
   * concatenated after the first would go unread, and the figures be the
   * first one's alone. */
  int64_t end = list ? xchg_ipc_reader_stream_end(reader) : -1;
  xchg_ipc_reader_free(reader);
  if (end >= 0 && (uint64_t)end < size) {
    fprintf(stderr,
            "xchg bench decode: %llu bytes follow the end of the IPC stream or file at byte %lld: "
            "one is measured (`xchg convert` writes several as one)\n",
            (unsigned long long)(size - (uint64_t)end), (long long)end);
    return -1;
  }
  r->decode_ns = bench_now_ns() - start;
  return 0;
}

/* ---- the codec limit ------------------------------------------------------------ */

/* Timed runs per measurement, each after one warm-up run (--runs). */
static int timed_runs = BENCH_RUNS;

/* One thread's share of the codec limit: every parts-th buffer from `part`
 * (one reused context per codec), or its slice of the bytes to copy. */
typedef struct limit_share {
  const buffer_list *list;
  const uint8_t *data;
  int64_t copy_bytes;
  uint8_t *dst;
  size_t room; /* bytes at dst */
  int part, parts;
} limit_share;

/* One buffer into dst (room bytes there), with the thread's contexts. */
static void decompress_one(const compressed_buffer *b, uint8_t *dst, size_t room, LZ4F_dctx *lz4,
                           ZSTD_DCtx *zstd) {
  if (b->codec == XCHG_BLOCK_ZSTD) {
    ZSTD_decompressDCtx(zstd, dst, b->dst_size, b->src, b->src_size);
  } else {
    /* All the room: LZ4F decodes a block in place only with a maximum
     * block's room left, else through its own buffer and a copy, which
     * the reader (lz4_frames.c) does not pay. */
    size_t out = room, in = b->src_size;
    LZ4F_decompress(lz4, dst, &out, b->src, &in, NULL);
  }
}

static void bare_decompress(const limit_share *s) {
  LZ4F_dctx *lz4;
  LZ4F_createDecompressionContext(&lz4, LZ4F_VERSION);
  ZSTD_DCtx *zstd = ZSTD_createDCtx();
  for (int64_t i = s->part; i < s->list->count; i += s->parts)
    decompress_one(&s->list->items[i], s->dst, s->room, lz4, zstd);
  LZ4F_freeDecompressionContext(lz4);
  ZSTD_freeDCtx(zstd);
}

static void limit_work(void *arg) {
  const limit_share *s = arg;
  if (s->list->count) {
    bare_decompress(s);
    return;
  }
  int64_t from = s->copy_bytes * s->part / s->parts, to = s->copy_bytes * (s->part + 1) / s->parts;
  memcpy(s->dst, s->data + from, (size_t)(to - from));
  __asm__ volatile("" : : "r"(s->dst) : "memory");
}

/* One timing of the codec limit on `parts` threads: the bare codec over the
 * buffers (memcpy of copy_bytes when there are none), each thread into its
 * own part of dst (parts * dst_size bytes). */
static int64_t codec_limit_once(const buffer_list *l, const uint8_t *data, int64_t copy_bytes,
                                uint8_t *dst, size_t dst_size, int parts) {
  limit_share shares[BENCH_MAX_THREADS];
  for (int t = 0; t < parts; t++)
    shares[t] = (limit_share){l, data, copy_bytes, dst + (size_t)t * dst_size, dst_size, t, parts};
  return bench_time_parts(parts, limit_work, shares, sizeof shares[0]);
}

static size_t largest_output(const buffer_list *l, int64_t copy_bytes) {
  size_t max = (size_t)copy_bytes;
  for (int64_t i = 0; i < l->count; i++)
    if (l->items[i].dst_size > max) max = l->items[i].dst_size;
  /* Room behind the largest for LZ4F to decode its last block in place
   * (LZ4 frames' largest block size, 4 MiB). */
  if (l->count) max += (size_t)4 << 20;
  return max ? max : 1;
}

/* ---- the in-order limit ------------------------------------------------------------- */

/* The codec limit's threads each decompress into one buffer of their own,
 * for ever, which no reader that hands out batches can.  The in-order
 * limit is the bare codec doing what such a reader must and nothing more
 * (handover.h): whole batches decompressed at most HANDOVER_AHEAD beyond
 * the one taken, each handed in order to the caller, which gives it back. */
#define HANDOVER_AHEAD 8

/* The bare codec's side of the in-order limit: each thread's contexts. */
typedef struct in_order {
  const buffer_list *list;
  size_t room; /* bytes at each destination */
  int threads;
  LZ4F_dctx *lz4[BENCH_MAX_THREADS];
  ZSTD_DCtx *zstd[BENCH_MAX_THREADS];
  bench_handover *h;
} in_order;

/* The decoded bytes of the largest batch, with the room LZ4F wants behind
 * them (see largest_output). */
static size_t largest_batch(const buffer_list *l) {
  size_t max = 0;
  for (int64_t g = 0; g < l->batches; g++) {
    size_t bytes = 0;
    for (int64_t i = g ? l->batch_end[g - 1] : 0; i < l->batch_end[g]; i++)
      bytes += l->items[i].dst_size;
    if (bytes > max) max = bytes;
  }
  return max + ((size_t)4 << 20);
}

/* Batch g's buffers, one after the other, into dst with thread k's contexts. */
static void decompress_batch(void *ctx, int k, int64_t g, uint8_t *dst) {
  const in_order *o = ctx;
  size_t at = 0;
  for (int64_t i = g ? o->list->batch_end[g - 1] : 0; i < o->list->batch_end[g]; i++) {
    decompress_one(&o->list->items[i], dst + at, o->room - at, o->lz4[k], o->zstd[k]);
    at += o->list->items[i].dst_size;
  }
}

/* The in-order limit of list's batches on `threads` threads; -1 when out
 * of memory (in_order_free frees what was made). */
static int in_order_init(in_order *o, const buffer_list *list, int threads) {
  o->list = list;
  o->room = largest_batch(list);
  o->threads = threads;
  for (int k = 0; k < threads; k++) {
    LZ4F_createDecompressionContext(&o->lz4[k], LZ4F_VERSION);
    o->zstd[k] = ZSTD_createDCtx();
  }
  o->h = bench_handover_new(list->batches, o->room, HANDOVER_AHEAD,
                            (bench_handover_work){decompress_batch, NULL, o});
  return o->h ? 0 : -1;
}

static void in_order_free(in_order *o) {
  bench_handover_free(o->h);
  for (int k = 0; k < o->threads; k++) {
    LZ4F_freeDecompressionContext(o->lz4[k]);
    ZSTD_freeDCtx(o->zstd[k]);
  }
}

/* ---- the zero-copy floor ----------------------------------------------------------- */

/* What a zero-copy read of an uncompressed stream cannot do without, written
 * here apart from the library: walk each message's flatbuffers (the
 * Message, its RecordBatch, the field nodes and buffer specs of the
 * columns) and build the same ArrowArrays (a struct of the selected
 * columns, one allocation per batch) pointing into the input; nothing is
 * checked and nothing is counted.  A read's time over the floor's is what
 * its validation and bookkeeping cost.  Flat columns only (fixed-width,
 * boolean, strings), no dictionaries, no body compression. */
typedef struct floor_plan {
  int64_t n_fields; /* columns of the stream */
  int buffers[64];  /* IPC buffers of each column */
  int selected[64]; /* whether each column is read */
  int64_t n_selected;
} floor_plan;

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

/* The position of field `slot` of the flatbuffer table at `table`, 0 when
 * absent. */
static size_t fb_field(const uint8_t *base, size_t table, int slot) {
  size_t vtable = table - (size_t)(int32_t)le32(base + table);
  uint16_t vt_size = (uint16_t)(base[vtable] | base[vtable + 1] << 8);
  if (4 + 2 * (size_t)slot >= vt_size) return 0;
  uint16_t off = (uint16_t)(base[vtable + 4 + 2 * slot] | base[vtable + 5 + 2 * slot] << 8);
  return off ? table + off : 0;
}

static size_t fb_follow(const uint8_t *base, size_t at) { return at + le32(base + at); }

/* Builds the columns' plan from the stream's schema; -1 when the floor does
 * not apply to them. */
static int floor_prepare(const uint8_t *data, size_t size, char **columns, int n_columns,
                         floor_plan *fp) {
  xchg_ipc_reader *reader;
  xchg_error err;
  struct ArrowSchema schema;
  memset(fp, 0, sizeof *fp);
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, NULL, &reader, &err) != XCHG_OK)
    return -1;
  int rc = xchg_ipc_reader_schema(reader, &schema, &err) == XCHG_OK ? 0 : -1;
  xchg_ipc_reader_free(reader);
  if (rc != 0) return -1;
  fp->n_fields = schema.n_children;
  for (int64_t k = 0; k < schema.n_children && rc == 0 && k < 64; k++) {
    const struct ArrowSchema *c = schema.children[k];
    int strings = !strcmp(c->format, "u") || !strcmp(c->format, "z");
    if ((!bench_fixed_width(c->format) && strcmp(c->format, "b") != 0 && !strings) || c->dictionary)
      rc = -1;
    fp->buffers[k] = strings ? 3 : 2;
    fp->selected[k] = n_columns == 0;
    for (int i = 0; i < n_columns; i++) fp->selected[k] |= !strcmp(columns[i], c->name);
    fp->n_selected += fp->selected[k];
  }
  if (schema.n_children > 64) rc = -1;
  schema.release(&schema);
  return rc;
}

static void release_floor(struct ArrowArray *a) {
  free(a->private_data);
  a->release = NULL;
}

static void release_floor_child(struct ArrowArray *a) { a->release = NULL; }

/* One batch: the RecordBatch table at `batch` of the metadata `meta`, its
 * body at `body`, as a struct of the selected columns; -1 when compressed. */
static int floor_batch(const floor_plan *fp, const uint8_t *meta, size_t batch, const uint8_t *body,
                       struct ArrowArray *out) {
  if (fb_field(meta, batch, 3)) return -1; /* body compression */
  size_t length_at = fb_field(meta, batch, 0),
         nodes = fb_follow(meta, fb_field(meta, batch, 1)) + 4;
  size_t specs = fb_follow(meta, fb_field(meta, batch, 2)) + 4;
  int64_t n = fp->n_selected;
  size_t bytes =
      (size_t)n * (sizeof(struct ArrowArray *) + sizeof(struct ArrowArray) + 3 * sizeof(void *)) +
      sizeof(void *);
  char *block = malloc(bytes);
  struct ArrowArray **kids = (struct ArrowArray **)block,
                    *structs = (struct ArrowArray *)(kids + n);
  const void **buffers = (const void **)(structs + n);
  *out = (struct ArrowArray){length_at ? (int64_t)le64(meta + length_at) : 0,
                             0,
                             0,
                             1,
                             n,
                             buffers,
                             kids,
                             NULL,
                             release_floor,
                             block};
  buffers[0] = NULL;
  buffers++;
  for (int64_t k = 0, j = 0; k < fp->n_fields; k++, nodes += 16) {
    if (!fp->selected[k]) {
      specs += 16 * (size_t)fp->buffers[k];
      continue;
    }
    int64_t rows = (int64_t)le64(meta + nodes), nulls = (int64_t)le64(meta + nodes + 8);
    for (int b = 0; b < fp->buffers[k]; b++, specs += 16)
      buffers[3 * j + b] = le64(meta + specs + 8) ? body + le64(meta + specs) : NULL;
    if (nulls == 0) buffers[3 * j] = NULL;
    kids[j] = &structs[j];
    structs[j] = (struct ArrowArray){
        rows, nulls, 0, fp->buffers[k], 0, &buffers[3 * j], NULL, NULL, release_floor_child, NULL};
    j++;
  }
  return 0;
}

/* Every byte of n at p read once, 8 at a time in four independent lanes:
 * as fast as the core streams memory, whatever is done with the bytes. */
static uint64_t read_bytes(const uint8_t *p, int64_t n) {
  uint64_t lane[4] = {0, 0, 0, 0}, word;
  int64_t k = 0;
  for (; k + 32 <= n; k += 32)
    for (int i = 0; i < 4; i++) {
      memcpy(&word, p + k + 8 * i, 8);
      lane[i] ^= word;
    }
  for (; k < n; k++) lane[0] ^= p[k];
  return lane[0] ^ lane[1] ^ lane[2] ^ lane[3];
}

/* What a full validation cannot leave unread of a batch the floor built:
 * every offset (each is compared to the one before) and the validity
 * bitmap of every column with nulls (its zero bits are counted against
 * null_count), each read once as fast as memory is read.  Returns a value
 * of what was read, so that the reads cannot be left out. */
static uint64_t validation_reads(const struct ArrowArray *batch) {
  uint64_t seen = 0;
  for (int64_t j = 0; j < batch->n_children; j++) {
    const struct ArrowArray *a = batch->children[j];
    if (a->length == 0) continue; /* its offsets may be left out */
    if (a->n_buffers == 3) seen ^= read_bytes(a->buffers[1], 4 * (a->length + 1));
    if (a->buffers[0]) seen ^= read_bytes(a->buffers[0], (a->length + 7) / 8);
  }
  return seen;
}

/* Where validation_reads' values go. */
static volatile uint64_t validation_sink;

/* One timing of the floor over the whole stream, with validation_reads of
 * every batch when `validation` (the validation floor); -1 when it does
 * not apply (compression, dictionaries, not the stream format). */
static int64_t floor_once(const uint8_t *data, size_t size, const floor_plan *fp, int validation,
                          int64_t *batches) {
  int64_t start = bench_now_ns();
  *batches = 0;
  for (size_t at = 0; at + 8 <= size;) {
    if (le32(data + at) != 0xFFFFFFFFu) return -1;
    size_t len = le32(data + at + 4);
    if (len == 0) return bench_now_ns() - start;
    const uint8_t *meta = data + at + 8;
    size_t message = le32(meta), header_type_at = fb_field(meta, message, 1);
    size_t body_length_at = fb_field(meta, message, 3);
    int type = header_type_at ? meta[header_type_at] : 0;
    int64_t body_length = body_length_at ? (int64_t)le64(meta + body_length_at) : 0;
    if (type == 2) return -1; /* a dictionary */
    if (type == 3) {
      struct ArrowArray batch;
      if (floor_batch(fp, meta, fb_follow(meta, fb_field(meta, message, 2)), meta + len, &batch) !=
          0)
        return -1;
      if (validation) validation_sink ^= validation_reads(&batch);
      batch.release(&batch);
      ++*batches;
    }
    at += 8 + len + (size_t)body_length;
  }
  return -1;
}

/* ---- measurements ------------------------------------------------------------------ */

typedef struct measurement {
  const char *codec;
  const char *read; /* "full", "narrow" or the --columns list */
  int threads;
  bench_timing time, limit, floor;
  bench_timing handover; /* the in-order limit (has_handover) */
  int has_handover;
  double gbps;
  int64_t decoded_bytes, compressed_bytes /* on the wire */, batches;
  int decompressed; /* the limit is the bare codec's, not memcpy's */
  int has_floor, has_validation_floor;
  bench_timing validation_floor;
} measurement;

static int64_t decoded_bytes(const read_result *r) {
  int64_t n = 0;
  for (int64_t c = 0; c < r->n_columns; c++) n += r->columns[c].bytes;
  return n;
}

/* Checks the cache shape's decoded sums against the generator's. */
static int check_sums(const read_result *r, const shape_sums *want) {
  for (int64_t c = 0; c < r->n_columns; c++) {
    int k = r->column_names[c][1] - '0';
    if (k < 0 || k >= SHAPE_CACHE_COLUMNS) continue;
    if (r->columns[c].sum != want->value[k] || r->columns[c].nulls != want->nulls[k]) {
      fprintf(
          stderr,
          "xchg bench decode: column %s decoded to sum %llu (%lld nulls), generated %llu (%lld)\n",
          r->column_names[c], (unsigned long long)r->columns[c].sum, (long long)r->columns[c].nulls,
          (unsigned long long)want->value[k], (long long)want->nulls[k]);
      return -1;
    }
  }
  return 0;
}

/* ---- --payloads: one payload per batch, through xchg_batch_decoder ------------------ */

/* With --payloads, timed runs read the stream cut into its messages as a
 * cached relation stores them: the schema message once, then one payload
 * per record batch, decoded by xchg_batch_decoder_decode_many in groups
 * of --group (50) on the pool (what the JVM binding's
 * XchgBatchDecoder.decodeMany does; --group 1 as its decode does). */
static int payload_mode;
#define PAYLOAD_GROUP_MAX 1000
static int64_t payload_group = 50; /* --group: payloads per call (1: xchg_batch_decoder_decode) */

typedef struct payload_split {
  size_t schema_size;
  int64_t n, capacity;
  size_t *start, *size;
  int dictionaries; /* the stream has some: not supported here */
  int64_t columns[64];
  int64_t n_columns; /* -1: all */
} payload_split;

static void note_message(void *ctx, const xchg_message_info *m) {
  payload_split *s = ctx;
  size_t end = (size_t)(m->offset + 8 + m->metadata_bytes + m->body_bytes);
  if (m->kind == XCHG_MESSAGE_SCHEMA) s->schema_size = end;
  s->dictionaries |= m->kind == XCHG_MESSAGE_DICTIONARY;
  if (m->kind != XCHG_MESSAGE_RECORD_BATCH) return;
  if (s->n == s->capacity) {
    s->capacity = s->capacity ? 2 * s->capacity : 1024;
    s->start = realloc(s->start, (size_t)s->capacity * sizeof *s->start);
    s->size = realloc(s->size, (size_t)s->capacity * sizeof *s->size);
  }
  s->start[s->n] = (size_t)m->offset;
  s->size[s->n++] = end - (size_t)m->offset;
}

/* Cuts data into its payloads and finds the named columns' indices. */
static int split_payloads(const uint8_t *data, size_t size, char **columns, int n_columns,
                          payload_split *s) {
  memset(s, 0, sizeof *s);
  s->n_columns = n_columns ? n_columns : -1;
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.on_message = note_message;
  opts.on_message_ctx = s;
  xchg_ipc_reader *reader;
  xchg_error err;
  struct ArrowArray a;
  struct ArrowSchema schema;
  xchg_status st = xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, &reader, &err);
  if (st != XCHG_OK) return fprintf(stderr, "xchg bench decode: %s\n", err.message), -1;
  /* The payloads are cut from the stream format; a file's schema is after
   * its magic, or in its footer alone (Arrow JS), where none is cut. */
  if (xchg_ipc_reader_format(reader) == XCHG_IPC_FILE) {
    xchg_ipc_reader_free(reader);
    fprintf(stderr,
            "xchg bench decode: --payloads: the input is an IPC file, and payloads are cut "
            "from an IPC stream (`xchg convert FILE OUT` writes it as one)\n");
    return -1;
  }
  while ((st = xchg_ipc_reader_next(reader, &a, &err)) == XCHG_OK && a.release) a.release(&a);
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(reader, &schema, &err);
  xchg_ipc_reader_free(reader);
  if (st != XCHG_OK) return fprintf(stderr, "xchg bench decode: %s\n", err.message), -1;
  for (int c = 0; c < n_columns; c++) {
    s->columns[c] = -1;
    for (int64_t k = 0; k < schema.n_children; k++)
      if (!strcmp(schema.children[k]->name, columns[c])) s->columns[c] = k;
    if (s->columns[c] < 0)
      fprintf(stderr, "xchg bench decode: --payloads: no top-level column '%s'\n", columns[c]);
    if (s->columns[c] < 0) st = XCHG_EINVAL;
  }
  schema.release(&schema);
  if (s->dictionaries)
    fprintf(stderr, "xchg bench decode: --payloads: the stream has dictionaries\n");
  return st == XCHG_OK && !s->dictionaries ? 0 : -1;
}

static void payload_split_free(payload_split *s) {
  free(s->start);
  free(s->size);
}

/* A timed run of --payloads: every payload decoded, from open to close.
 * Not inlined, so that callgrind's --toggle-collect finds it by name. */
__attribute__((noinline)) static int read_payloads(const uint8_t *data, const payload_split *s,
                                                   xchg_pool *pool, xchg_validation validation,
                                                   read_result *r) {
  xchg_ipc_read_options opts = read_options(pool, validation);
  xchg_batch_decoder *dec;
  xchg_error err;
  memset(r, 0, sizeof *r);
  const int64_t start = bench_now_ns();
  xchg_status st =
      xchg_batch_decoder_open(data, s->schema_size, s->n_columns < 0 ? NULL : s->columns,
                              s->n_columns < 0 ? 0 : s->n_columns, &opts, &dec, &err);
  for (int64_t first = 0; st == XCHG_OK && first < s->n; first += payload_group) {
    int64_t n = s->n - first < payload_group ? s->n - first : payload_group;
    xchg_source *srcs[PAYLOAD_GROUP_MAX];
    struct ArrowArray outs[PAYLOAD_GROUP_MAX];
    for (int64_t i = 0; i < n; i++)
      if (xchg_source_from_memory(data + s->start[first + i], s->size[first + i], NULL, NULL,
                                  &srcs[i], &err) != XCHG_OK)
        st = XCHG_ENOMEM; /* srcs[i] is NULL: freeing it below is a no-op */
    if (st == XCHG_OK) st = xchg_batch_decoder_decode_many(dec, srcs, n, first, outs, NULL, &err);
    for (int64_t i = 0; i < n; i++) {
      if (st == XCHG_OK) outs[i].release(&outs[i]);
      xchg_source_free(srcs[i]);
    }
    r->batches += st == XCHG_OK ? n : 0;
  }
  xchg_batch_decoder_free(dec); /* NULL when open failed */
  r->decode_ns = bench_now_ns() - start;
  if (st != XCHG_OK) fprintf(stderr, "xchg bench decode: --payloads: %s\n", err.message);
  return st == XCHG_OK ? 0 : -1;
}

/* Measures reads on each of the thread counts, and the codec limit on as
 * many threads.  The runs take turns (each count's limit and read, then
 * again) so that the machine slowing down for a while (a shared host)
 * weighs on every figure alike and the ratios between them hold. */
static int measure(const uint8_t *data, size_t size, const char *codec, const char *read,
                   char **columns, int n_columns, const int *threads, int n_threads,
                   xchg_validation validation, const shape_sums *want, measurement *m) {
  xchg_pool *pools[2] = {NULL, NULL};
  buffer_list list = {0};
  read_result r, timed;
  int64_t ns[2][BENCH_MAX_RUNS], limit_ns[2][BENCH_MAX_RUNS], floor_ns[BENCH_MAX_RUNS],
      validation_floor_ns[BENCH_MAX_RUNS], handover_ns[2][BENCH_MAX_RUNS]; /* per thread count */
  int rc = read_once(data, size, columns, n_columns, NULL, validation, &list,
                     &r); /* warm-up, and the buffers */
  if (rc == 0 && want) rc = check_sums(&r, want);
  if (rc == 0 && r.rows == 0) { /* its figures would time the schema alone, ratios of nothing */
    fprintf(stderr, "xchg bench decode: the input holds no rows: nothing to time\n");
    rc = -1;
  }
  if (rc != 0) {
    buffer_list_free(&list);
    return rc;
  }
  payload_split split = {0};
  if (payload_mode && split_payloads(data, size, columns, n_columns, &split) != 0) rc = -1;
  /* The floor, where it applies, once to warm up and to check it sees the
   * read's batches. */
  floor_plan fp;
  int64_t floor_batches = 0;
  int has_floor = !payload_mode && list.count == 0 &&
                  floor_prepare(data, size, columns, n_columns, &fp) == 0 &&
                  floor_once(data, size, &fp, 0, &floor_batches) >= 0 && floor_batches == r.batches;
  int has_validation_floor = has_floor && validation == XCHG_VALIDATE_FULL;
  int64_t copy_bytes = list.count ? 0 : decoded_bytes(&r);
  size_t dst_size = largest_output(&list, copy_bytes);
  uint8_t *limit_dst = malloc(dst_size * (size_t)threads[n_threads - 1]);
  /* The in-order limit, for decompressing reads on more than one thread. */
  in_order ho[2];
  int has_handover[2] = {0, 0};
  for (int t = 0; t < n_threads && rc == 0; t++) {
    xchg_error err;
    if (threads[t] > 1 && xchg_pool_create(threads[t], &pools[t], &err) != XCHG_OK) {
      fprintf(stderr, "xchg bench decode: %s\n", err.message);
      rc = -1;
      continue;
    }
    codec_limit_once(&list, data, copy_bytes, limit_dst, dst_size, threads[t]); /* its warm-up */
    has_handover[t] = threads[t] > 1 && list.count > 0 && !payload_mode;
    if (has_handover[t] && in_order_init(&ho[t], &list, threads[t]) != 0) {
      fprintf(stderr, "xchg bench decode: out of memory for the in-order limit\n");
      rc = -1;
    }
    if (has_handover[t] && rc == 0) bench_handover_once(ho[t].h, threads[t]); /* its warm-up */
  }
  for (int run = 0; run < timed_runs && rc == 0; run++) {
    for (int t = 0; t < n_threads && rc == 0; t++) {
      limit_ns[t][run] = codec_limit_once(&list, data, copy_bytes, limit_dst, dst_size, threads[t]);
      if (has_handover[t]) handover_ns[t][run] = bench_handover_once(ho[t].h, threads[t]);
      /* The floor runs before the read on every thread count, though it is
       * kept for one thread only: it walks every message, so the read
       * after it finds the metadata in cache; run before one read alone,
       * it made reads on more threads look slower than on one. */
      if (has_floor) {
        int64_t floor_run_ns = floor_once(data, size, &fp, 0, &floor_batches);
        if (t == 0) floor_ns[run] = floor_run_ns;
      }
      rc = payload_mode
               ? read_payloads(data, &split, pools[t], validation, &timed)
               : read_once(data, size, columns, n_columns, pools[t], validation, NULL, &timed);
      if (rc == 0 && timed.batches != r.batches) {
        fprintf(stderr, "xchg bench decode: %lld batches read, %lld in the warm-up\n",
                (long long)timed.batches, (long long)r.batches);
        rc = -1;
      }
      ns[t][run] = timed.decode_ns;
    }
    /* The validation floor finds the input as the read did: the limit has
     * streamed the decoded bytes (the offsets and bitmaps are out of the
     * cache), the floor has walked the metadata into it. */
    if (has_validation_floor && rc == 0) {
      codec_limit_once(&list, data, copy_bytes, limit_dst, dst_size, threads[0]);
      floor_once(data, size, &fp, 0, &floor_batches);
      validation_floor_ns[run] = floor_once(data, size, &fp, 1, &floor_batches);
    }
  }
  if (rc == 0) {
    /* Buffers stored raw never reach the codec: their bytes on the wire
     * are their decoded bytes. */
    int64_t wire = list.src_bytes + decoded_bytes(&r) - list.dst_bytes;
    for (int t = 0; t < n_threads; t++) {
      m[t] = (measurement){.codec = codec,
                           .read = read,
                           .threads = threads[t],
                           .time = bench_summarize(ns[t], timed_runs),
                           .limit = bench_summarize(limit_ns[t], timed_runs),
                           .decoded_bytes = decoded_bytes(&r),
                           .compressed_bytes = wire,
                           .batches = r.batches,
                           .decompressed = list.count > 0,
                           .has_floor = has_floor,
                           .has_validation_floor = has_validation_floor};
      if (has_floor) m[t].floor = bench_summarize(floor_ns, timed_runs);
      m[t].has_handover = has_handover[t];
      if (has_handover[t]) m[t].handover = bench_summarize(handover_ns[t], timed_runs);
      if (has_validation_floor)
        m[t].validation_floor = bench_summarize(validation_floor_ns, timed_runs);
      m[t].gbps = (double)m[t].decoded_bytes / (m[t].time.median_ms * 1e6);
    }
  }
  free(limit_dst);
  for (int t = 0; t < n_threads; t++)
    if (has_handover[t]) in_order_free(&ho[t]);
  buffer_list_free(&list);
  payload_split_free(&split);
  for (int t = 0; t < n_threads; t++) xchg_pool_free(pools[t]);
  return rc;
}

/* ---- output ------------------------------------------------------------------------ */

static void print_row(const measurement *m) {
  char floor_ms[16] = "-", vs_floor[16] = "-";
  if (m->has_floor) snprintf(floor_ms, sizeof floor_ms, "%.3f", m->floor.median_ms);
  if (m->has_floor)
    snprintf(vs_floor, sizeof vs_floor, "%.2fx", m->time.median_ms / m->floor.median_ms);
  printf("%-5s %-8s %7d %9.2f %9.2f-%-9.2f %7.2f %9.2f %7.2fx %9s %8s\n", m->codec, m->read,
         m->threads, m->time.median_ms, m->time.min_ms, m->time.max_ms, m->gbps, m->limit.median_ms,
         m->limit.median_ms > 0 ? m->time.median_ms / m->limit.median_ms : 0, floor_ms, vs_floor);
}

static void print_header(void) {
  printf("%-5s %-8s %7s %9s %-19s %7s %9s %8s %9s %8s\n", "codec", "read", "threads", "median_ms",
         "  min-max ms", "GB/s", "limit_ms", "ratio", "floor_ms", "vs floor");
}

/* Times in ms to the nanosecond: a narrow read of a few batches takes
 * less than a microsecond to validate, which "%.3f" printed as 0. */
static void print_json(const measurement *ms, int n, const char *source) {
  printf(
      "{\"benchmark\":\"decode\",\"source\":\"%s\",\"machine\":\"%s\",\"cores\":%d,\"results\":[",
      source, bench_machine(), bench_cores());
  for (int i = 0; i < n; i++) {
    const measurement *m = &ms[i];
    printf(
        "%s{\"codec\":\"%s\",\"columns\":\"%s\",\"threads\":%d,\"median_ms\":%.6f,\"min_ms\":%.6f,"
        "\"max_ms\":%.6f,\"gbps\":%.3f,\"limit_ms\":%.6f,\"decoded_bytes\":%lld,"
        "\"compressed_bytes\":%lld,\"batches\":%lld",
        i ? "," : "", m->codec, m->read, m->threads, m->time.median_ms, m->time.min_ms,
        m->time.max_ms, m->gbps, m->limit.median_ms, (long long)m->decoded_bytes,
        (long long)m->compressed_bytes, (long long)m->batches);
    if (m->has_floor) printf(",\"floor_ms\":%.6f", m->floor.median_ms);
    if (m->has_handover) printf(",\"in_order_limit_ms\":%.6f", m->handover.median_ms);
    if (m->has_validation_floor)
      printf(",\"validation_floor_ms\":%.6f", m->validation_floor.median_ms);
    printf("}");
  }
  printf("]}\n");
}

static const measurement *find(const measurement *ms, int n, const char *codec, const char *read,
                               int threads) {
  for (int i = 0; i < n; i++)
    if (strcmp(ms[i].codec, codec) == 0 && strcmp(ms[i].read, read) == 0 &&
        ms[i].threads == threads)
      return &ms[i];
  return NULL;
}

/* The validation floor of m, a read validated in full, and m against it. */
static void print_validation_floor(const char *prefix, const measurement *m) {
  if (!m->has_validation_floor || m->batches == 0) return;
  printf(
      "%sthe validation floor %.2f us per batch (%.2fx the zero-copy floor); validated %.2fx it\n",
      prefix, 1000 * m->validation_floor.median_ms / (double)m->batches,
      m->validation_floor.median_ms / m->floor.median_ms,
      m->time.median_ms / m->validation_floor.median_ms);
}

/* The targets of issue 4, each with the figure it is judged on. */
static void print_targets(const measurement *ms, int n, int cores) {
  printf("\ntargets:\n");
  const char *codecs[] = {"lz4", "zstd"};
  for (int c = 0; c < 2; c++) {
    const measurement *one = find(ms, n, codecs[c], "full", 1),
                      *all = find(ms, n, codecs[c], "full", cores);
    const measurement *narrow = find(ms, n, codecs[c], "narrow", 1);
    if (!one) continue;
    printf("  %-4s full, 1 thread: %.2fx the codec limit (target <= 1.10)\n", codecs[c],
           one->time.median_ms / one->limit.median_ms);
    if (all && cores > 1) {
      char whole[32], bare[32];
      printf(
          "  %-4s full, %d threads: %s than 1 thread (target: >= 1.80x faster); the bare codec: %s\n",
          codecs[c], cores,
          bench_speed_text(whole, sizeof whole, all->time.median_ms, one->time.median_ms),
          bench_speed_text(bare, sizeof bare, all->limit.median_ms, one->limit.median_ms));
    }
    if (narrow && one->compressed_bytes > 0) {
      double share = (double)narrow->compressed_bytes / (double)one->compressed_bytes;
      printf("  %-4s narrow: %.2f ms for %.1f%% of the compressed bytes; target <= %.2f ms\n",
             codecs[c], narrow->time.median_ms, 100 * share, 1.2 * share * one->time.median_ms);
    }
  }
  const measurement *none = find(ms, n, "none", "full", 1),
                    *trusted = find(ms, n, "none", "trusted", 1);
  if (none && trusted && none->batches) {
    printf(
        "  none: %.2f us per batch validated in full (offsets and null counts are O(rows)), %.2f us "
        "per batch trusted (%lld batches of %d columns; zero-copy)\n",
        1000 * none->time.median_ms / (double)none->batches,
        1000 * trusted->time.median_ms / (double)trusted->batches, (long long)none->batches,
        SHAPE_CACHE_COLUMNS);
    if (trusted->has_floor && none->has_floor) {
      /* measured beside each of the two reads: both held against the lower */
      double floor_ms = fmin(trusted->floor.median_ms, none->floor.median_ms);
      printf(
          "  none: the zero-copy floor %.2f us per batch; trusted %.2fx it (target, against Arrow C++ "
          "in its stead: <= 1.0x), validated %.2fx (<= 2.0x)\n",
          1000 * floor_ms / (double)trusted->batches, trusted->time.median_ms / floor_ms,
          none->time.median_ms / floor_ms);
    }
    print_validation_floor("  none: ", none);
  }
  for (int c = 0; c < 2; c++) {
    const measurement *one = find(ms, n, codecs[c], "narrow", 1),
                      *all = find(ms, n, codecs[c], "narrow", cores);
    if (one && one->decompressed)
      printf("  %-4s narrow: %.2fx the codec limit on 1 thread, %.2fx on %d (target <= 1.15)\n",
             codecs[c], one->time.median_ms / one->limit.median_ms,
             all ? all->time.median_ms / all->limit.median_ms : 0, cores);
    if (all && all->has_handover)
      printf(
          "  %-4s narrow, %d threads: %.2fx the in-order limit, which is %.2fx the codec limit\n",
          codecs[c], cores, all->time.median_ms / all->handover.median_ms,
          all->handover.median_ms / all->limit.median_ms);
  }
}

/* ---- the command ---------------------------------------------------------------------- */

static xchg_buf *generate_cache(int64_t rows, xchg_block_codec codec, shape_sums *sums) {
  struct ArrowSchema schema;
  shape_cache_schema(&schema);
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.codec = codec;
  opts.level = 1;
  /* Every buffer compressed, incompressible ones too (c2, c4), as Arrow C++
   * writes the shape by default: the goals were set on its files, and a
   * narrow read of c4 stored raw would be zero-copy, not a decompression. */
  opts.min_space_saving = -INFINITY;
  opts.pool = xchg_pool_default();
  xchg_ipc_writer *w;
  xchg_error err;
  xchg_buf *out = NULL;
  memset(sums, 0, sizeof *sums);
  if (xchg_ipc_writer_open_memory(&schema, &opts, &w, &err) == XCHG_OK) {
    xchg_status st = XCHG_OK;
    for (int64_t b = 0; b < shape_cache_batches(rows) && st == XCHG_OK; b++) {
      struct ArrowArray batch;
      shape_cache_batch(42, rows, b, &batch, sums);
      st = xchg_ipc_writer_write(w, &batch, &err);
      batch.release(&batch);
    }
    if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
    if (st == XCHG_OK) out = xchg_ipc_writer_take_memory(w);
    xchg_ipc_writer_free(w);
  }
  if (!out) fprintf(stderr, "xchg bench decode: generating: %s\n", err.message);
  schema.release(&schema);
  return out;
}

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: xchg bench decode [FILE] [--rows N] [--columns a,b] [--threads N] [--runs K] [--json]\n"
      "                         [--payloads [--group N]] [--validation full|bounds]\n"
      "  Without FILE: shape `cache` of SHAPES.md (5,000,000 rows; --rows to change), codecs\n"
      "  none/lz4/zstd (every buffer compressed, as Arrow C++ writes it), full and narrow (c4)\n"
      "  reads, 1 thread and all cores, each beside the bare codec's time over the same\n"
      "  buffers (\"trusted\": validation of bounds only).  With FILE (loaded into memory first): that\n"
      "  file, all columns or --columns, on 1 thread and on --threads (default: all cores).\n"
      "  Each figure is the median of --runs K timed runs (default 5) after one warm-up.\n"
      "  --payloads: timed runs decode the stream cut into one payload per record batch with\n"
      "  xchg_batch_decoder (schema given once; top-level --columns only; no dictionaries), N\n"
      "  payloads per call (default 50; 1: one xchg_batch_decoder_decode per payload, as a\n"
      "  JVM task's decode: `valgrind --tool=callgrind --toggle-collect=read_payloads` over\n"
      "  `--threads 1 --runs K` counts the instructions of K x payloads).\n"
      "  --validation: how FILE is validated (default full, XCHG_VALIDATE_FULL; bounds:\n"
      "  XCHG_VALIDATE_BOUNDS), so that the two can be timed or counted apart.\n"
      "columns:\n"
      "  codec       body compression of the input (none, lz4, zstd)\n"
      "  read        full: every column; narrow: c4 alone (the others are never\n"
      "                decompressed); trusted: full with XCHG_VALIDATE_BOUNDS\n"
      "  threads     1, or a pool of that many threads\n"
      "  median_ms   one read of the whole input, open to close, median\n"
      "  min-max ms  the fastest and slowest of the timed runs\n"
      "  GB/s        decoded bytes / median_ms\n"
      "  limit_ms    the codec limit, measured in the same run on as many threads:\n"
      "                the bare decompressor over exactly the buffers the read\n"
      "                decompressed, or memcpy of the decoded bytes when\n"
      "                uncompressed\n"
      "  ratio       median_ms / limit_ms: 1.00x is the limit itself (below 1 when\n"
      "                the read skips work the limit does, e.g. zero-copy)\n"
      "  floor_ms    uncompressed input read zero-copy: the zero-copy floor, measured in the\n"
      "                same run on one thread: the messages' flatbuffers walked and the same\n"
      "                ArrowArrays built, pointing into the input, by code of the benchmark's\n"
      "                own, with no validation and no reference counts (flat columns only)\n"
      "  vs floor    median_ms / floor_ms: what validation and bookkeeping cost\n"
      "The validation floor (uncompressed input read with full validation; under the table\n"
      "of a FILE, in the targets, in the JSON): the zero-copy floor plus one read, as fast\n"
      "as memory reads, of every byte a full validation cannot leave unread (every offset,\n"
      "every validity bitmap of a column with nulls), measured as the read finds them: after\n"
      "the limit has streamed the decoded bytes out of the cache and the floor has walked\n"
      "the metadata into it.\n"
      "The in-order limit (reads that decompress, on more than one thread; in the targets\n"
      "and the JSON): the bare codec on as many threads decompressing whole batches, at\n"
      "most 8 ahead, into destinations the calling thread gives back, each handed to it in\n"
      "order, as a reader's batches are; the codec limit's threads each write one buffer\n"
      "of their own for ever, which no reader that hands out batches can.\n"
      "Then the targets of SHAPES.md, each beside the measured figure.\n");
}

/* --columns' names into out (at most MAX_COLUMNS), cut at the commas of
 * list; -1 after a usage error for an empty name or too many. */
static int split_columns(char *list, char **out) {
  int n = 0;
  for (char *name = list;; n++) {
    char *comma = strchr(name, ',');
    if (comma) *comma = '\0';
    if (*name == '\0' || n == MAX_COLUMNS) {
      xc_usage_error("bench decode", "--columns takes 1 to %d names, none of them empty",
                     MAX_COLUMNS);
      return -1;
    }
    out[n] = name;
    if (!comma) return n + 1;
    name = comma + 1;
  }
}

int xchg_bench_decode(int argc, char **argv) {
  static const struct option long_opts[] = {{"rows", 1, 0, 'r'},       {"columns", 1, 0, 'c'},
                                            {"threads", 1, 0, 't'},    {"runs", 1, 0, 'k'},
                                            {"json", 0, 0, 'j'},       {"help", 0, 0, 'h'},
                                            {"payloads", 0, 0, 'p'},   {"group", 1, 0, 'g'},
                                            {"validation", 1, 0, 'v'}, {0, 0, 0, 0}};
  int64_t rows = SHAPE_CACHE_ROWS, v = 0;
  int threads = bench_cores(), json = 0, opt, n_columns = 0, rows_given = 0, group_given = 0,
      validation_given = 0;
  xchg_validation validation = XCHG_VALIDATE_FULL;
  char *columns[MAX_COLUMNS], *column_arg = NULL;
  bool ok = true;
  xc_options_begin();
  while (ok && (opt = xc_getopt(argc, argv, ":h", long_opts)) != -1) {
    switch (opt) {
      case 'r':
        ok = xc_int_option("bench decode", "--rows", optarg, 1, BENCH_MAX_ROWS, &rows);
        rows_given = 1;
        break;
      case 'c': column_arg = optarg; break;
      case 't':
        ok = xc_int_option("bench decode", "--threads", optarg, 1, BENCH_MAX_THREADS, &v),
        threads = (int)v;
        break;
      case 'k':
        ok = xc_int_option("bench decode", "--runs", optarg, 1, BENCH_MAX_RUNS, &v),
        timed_runs = (int)v;
        break;
      case 'j': json = 1; break;
      case 'p': payload_mode = 1; break;
      case 'g':
        ok = xc_int_option("bench decode", "--group", optarg, 1, PAYLOAD_GROUP_MAX, &payload_group);
        group_given = 1;
        break;
      case 'v':
        if (strcmp(optarg, "full") != 0 && strcmp(optarg, "bounds") != 0)
          return xc_usage_error("bench decode", "--validation must be full or bounds, not '%s'",
                                optarg);
        validation = strcmp(optarg, "full") == 0 ? XCHG_VALIDATE_FULL : XCHG_VALIDATE_BOUNDS;
        validation_given = 1;
        break;
      case 'h': usage(stdout); return 0;
      default: return xc_option_error("bench decode", argv, long_opts, opt);
    }
  }
  if (!ok) return 2;
  if (optind + 1 < argc)
    return xc_usage_error("bench decode", "one FILE at most, not '%s' too", argv[optind + 1]);
  if (rows_given && optind < argc)
    return xc_usage_error("bench decode", "--rows is the generated shape's: FILE is read whole");
  if (group_given && !payload_mode)
    return xc_usage_error("bench decode", "--group is --payloads': give both");
  if ((column_arg || validation_given) && optind == argc) /* the shape has its own reads */
    return xc_usage_error("bench decode",
                          "--columns and --validation are a FILE's: the shape reads full, narrow "
                          "(c4) and trusted");
  if (column_arg && (n_columns = split_columns(column_arg, columns)) < 0) return 2;
  measurement ms[20];
  int n = 0, rc = 0;
  if (!json) printf("machine: %s\n", bench_machine());
  if (optind < argc) { /* a user's file */
    size_t size;
    char why[256];
    uint8_t *data = bench_load_file(argv[optind], &size, why, sizeof why);
    if (!data) {
      fprintf(stderr, "xchg bench decode: %s: %s\n", argv[optind], why);
      return 1;
    }
    /* Comet blocks or a compressed stream are not IPC: say what reads them
     * (the IPC reader's error would only say what the bytes are not) */
    xchg_stream_codec outer = xchg_stream_codec_detect(data, size);
    if (outer != XCHG_STREAM_NONE) {
      fprintf(stderr,
              "xchg bench decode: %s is a %s stream, not Arrow IPC: `xchg bench shuffle FILE` "
              "reads Comet blocks, and `xchg convert FILE OUT` writes it as one IPC stream\n",
              argv[optind], xchg_stream_codec_name(outer));
      free(data);
      return 1;
    }
    /* a read with bounds checks only says so, as the shape's "trusted" row */
    const char *read = validation == XCHG_VALIDATE_BOUNDS ? "trusted"
                       : column_arg                       ? "selected"
                                                          : "full";
    int counts[2] = {1, threads}, n_counts = threads > 1 ? 2 : 1;
    rc = measure(data, size, "file", read, columns, n_columns, counts, n_counts, validation, NULL,
                 ms);
    n = n_counts;
    if (rc == 0 && json) print_json(ms, n, argv[optind]);
    if (rc == 0 && !json) {
      print_header();
      for (int i = 0; i < n; i++) print_row(&ms[i]);
      print_validation_floor("1 thread: ", &ms[0]);
    }
    free(data);
    return rc ? 1 : 0;
  }
  static char c4[] = "c4";
  char *narrow[] = {c4};
  const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};
  if (!json) {
    printf("shape cache: %lld rows in batches of %d\n", (long long)rows, SHAPE_CACHE_BATCH_ROWS);
    print_header();
  }
  for (int c = 0; c < 3 && rc == 0; c++) {
    shape_sums sums;
    xchg_buf *data = generate_cache(rows, codecs[c], &sums);
    if (!data) return 1;
    const char *name = xchg_block_codec_name(codecs[c]);
    int counts[2] = {1, threads}, n_counts = threads > 1 ? 2 : 1;
    for (int read = 0; read < 2 && rc == 0; read++) {
      rc = measure(xchg_buf_data(data), xchg_buf_size(data), name, read ? "narrow" : "full",
                   read ? narrow : NULL, read ? 1 : 0, counts, n_counts, XCHG_VALIDATE_FULL, &sums,
                   &ms[n]);
      for (int t = 0; t < n_counts && rc == 0; t++, n++)
        if (!json) print_row(&ms[n]);
    }
    /* Zero-copy reads of trusted data: no O(rows) check is left, so the
     * time is bookkeeping per batch and column. */
    if (rc == 0 && codecs[c] == XCHG_BLOCK_NONE) {
      const int one[1] = {1};
      rc = measure(xchg_buf_data(data), xchg_buf_size(data), name, "trusted", NULL, 0, one, 1,
                   XCHG_VALIDATE_BOUNDS, &sums, &ms[n]);
      if (rc == 0 && !json) print_row(&ms[n]);
      n++;
    }
    xchg_buf_unref(data);
  }
  if (rc != 0) return 1;
  if (json)
    print_json(ms, n, "cache");
  else
    print_targets(ms, n, threads);
  return 0;
}
