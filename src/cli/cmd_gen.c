/* cmd_gen.c — `xchg gen SHAPE OUT`: writes the benchmark shapes of
 * shared/bench/SHAPES.md, deterministically from a seed.
 *
 *   cache      Arrow IPC stream, 6 columns in batches of 10,000 rows
 *              (bench/shapes.h), body compression as asked;
 *   broadcast  Arrow IPC stream of k, d_long, d_str in batches of 8,192
 *              rows (bench/shapes.h); uncompressed, it is wrapped as
 *              engines ship it, in Spark's lz4-java block stream (32 KiB
 *              blocks, xxhash32 checksums); with a body codec, not wrapped;
 *   rows       length-prefixed 100-byte rows, compressed as one LZ4 (or
 *              zstd) frame per 64 KiB chunk.
 *
 * With --sums the sums a reader must find are printed as JSON on stdout
 * (standard error when OUT is '-'); 64-bit sums are decimal strings, as
 * JSON numbers lose precision beyond 2^53 in many readers. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_writer.h"
#include "cli/progress.h"
#include "shapes.h"
#include "shapes_gen.h"
#include "xchg/stream.h"
#include "xchg/writer.h"

static const char gen_help[] =
    "usage: xchg gen cache|broadcast|rows OUT [--codec none|lz4|zstd] [--level N]\n"
    "                [--rows N] [--seed S] [--outer none|lz4-java|...] [--file] [--sums]\n\n"
    "Writes a benchmark shape of SHAPES.md to OUT ('-' for standard output):\n"
    "  cache      5,000,000 rows x 6 columns, Arrow IPC stream (--codec: body)\n"
    "  broadcast  1,000,000 rows of k, d_long, d_str, Arrow IPC stream; with\n"
    "             --codec none (default) wrapped in --outer (default lz4-java)\n"
    "  rows       10,000,000 rows of 4-byte length + 100-byte payload, one\n"
    "             --codec frame (default lz4) per 64 KiB chunk\n"
    "  --rows N   rows instead of the shape's count\n"
    "  --seed S   random seed (default 1); the same seed gives the same bytes\n"
    "  --file     IPC file format instead of stream (cache, broadcast)\n"
    "  --sums     print the sums a reader must find, as JSON\n"
    "Progress is shown on standard error when it is a terminal.\n";

typedef struct gen_args {
  const char *shape, *out;
  xchg_block_codec codec;
  int codec_given;
  int level;
  int64_t rows;
  uint64_t seed;
  xchg_stream_codec outer;
  int outer_given;
  int file_format;
  int level_given;
  int sums;
} gen_args;

typedef xc_progress progress;

typedef struct out_file {
  int fd;
  const char *path;
} out_file;

static xchg_status write_all(void *ctx, const void *data, size_t n, xchg_error *err) {
  out_file *o = ctx;
  const uint8_t *p = data;
  while (n > 0) {
    ssize_t k = write(o->fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return xchg_errorf(err, XCHG_EIO, "%s", strerror(errno));
    p += k;
    n -= (size_t)k;
  }
  return XCHG_OK;
}

typedef void (*batch_fn)(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                         shape_sums *sums);

/* Writes an IPC shape to `sink` (or into *mem when mem is not NULL). */
static xchg_status write_ipc_shape(const gen_args *a, struct ArrowSchema *schema, int64_t batches,
                                   batch_fn make, xchg_write_fn sink, void *sink_ctx,
                                   xchg_buf **mem, shape_sums *sums, progress *prog, xchg_error *err) {
  xchg_write_options opts;
  xchg_write_options_init(&opts);
  opts.codec = a->codec;
  opts.level = a->level;
  opts.format = a->file_format ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
  xchg_ipc_writer *w;
  xchg_status st = mem ? xchg_ipc_writer_open_memory(schema, &opts, &w, err)
                       : xchg_ipc_writer_open(schema, &opts, sink, sink_ctx, &w, err);
  if (st != XCHG_OK) return st;
  for (int64_t i = 0; i < batches && st == XCHG_OK; i++) {
    struct ArrowArray batch;
    make(a->seed, a->rows, i, &batch, sums);
    st = xchg_ipc_writer_write(w, &batch, err);
    batch.release(&batch);
    xc_progress_update(prog, i + 1);
  }
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, err);
  if (st == XCHG_OK && mem && !(*mem = xchg_ipc_writer_take_memory(w)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_ipc_writer_free(w);
  return st;
}

static xchg_status gen_ipc(const gen_args *a, out_file *out, shape_sums *sums, progress *prog,
                           xchg_error *err) {
  int broadcast = !strcmp(a->shape, "broadcast");
  struct ArrowSchema schema;
  int64_t batches;
  batch_fn make;
  if (broadcast) {
    shape_broadcast_schema(&schema);
    batches = shape_broadcast_batches(a->rows);
    make = shape_broadcast_batch;
  } else {
    shape_cache_schema(&schema);
    batches = shape_cache_batches(a->rows);
    make = shape_cache_batch;
  }
  prog->total = batches;
  xchg_status st;
  if (a->outer == XCHG_STREAM_NONE) {
    st = write_ipc_shape(a, &schema, batches, make, write_all, out, NULL, sums, prog, err);
  } else {
    xchg_buf *ipc = NULL, *wrapped = NULL;
    st = write_ipc_shape(a, &schema, batches, make, NULL, NULL, &ipc, sums, prog, err);
    if (st == XCHG_OK) {
      xchg_stream_encode_options eo;
      xchg_stream_encode_options_init(&eo);
      st = xchg_stream_encode(a->outer, &eo, xchg_buf_data(ipc), xchg_buf_size(ipc), &wrapped, err);
    }
    if (st == XCHG_OK) st = write_all(out, xchg_buf_data(wrapped), xchg_buf_size(wrapped), err);
    xchg_buf_unref(ipc);
    xchg_buf_unref(wrapped);
  }
  schema.release(&schema);
  return st;
}

static xchg_status gen_rows(const gen_args *a, out_file *out, progress *prog, xchg_error *err) {
  xchg_stream_codec codec = a->codec == XCHG_BLOCK_ZSTD ? XCHG_STREAM_ZSTD
                            : a->codec == XCHG_BLOCK_NONE ? XCHG_STREAM_NONE
                                                          : XCHG_STREAM_LZ4_FRAME;
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.level = a->level;
  uint64_t total = shape_rows_bytes(a->rows);
  uint8_t *chunk = malloc(SHAPE_ROWS_CHUNK);
  if (!chunk) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  prog->total = (int64_t)((total + SHAPE_ROWS_CHUNK - 1) / SHAPE_ROWS_CHUNK);
  xchg_status st = XCHG_OK;
  int64_t index = 0;
  for (uint64_t at = 0; at < total && st == XCHG_OK; at += SHAPE_ROWS_CHUNK, index++) {
    size_t n = total - at < SHAPE_ROWS_CHUNK ? (size_t)(total - at) : SHAPE_ROWS_CHUNK;
    shape_rows_fill(a->seed, a->rows, at, chunk, n);
    if (codec == XCHG_STREAM_NONE) {
      st = write_all(out, chunk, n, err);
    } else {
      xchg_buf *frame;
      st = xchg_stream_encode(codec, &eo, chunk, n, &frame, err);
      if (st == XCHG_OK) st = write_all(out, xchg_buf_data(frame), xchg_buf_size(frame), err);
      xchg_buf_unref(frame);
    }
    xc_progress_update(prog, index + 1);
  }
  free(chunk);
  return st;
}

static void print_sums(const gen_args *a, const shape_sums *sums, FILE *f) {
  fprintf(f, "{\"shape\": \"%s\", \"rows\": %" PRId64 ", \"seed\": %" PRIu64, a->shape, a->rows, a->seed);
  if (!strcmp(a->shape, "rows")) {
    fprintf(f, ", \"payload_byte_sum\": \"%" PRIu64 "\"}\n", shape_rows_payload_sum(a->seed, a->rows));
    return;
  }
  static const char *cache[] = {"c0", "c1", "c2", "c3", "c4", "c5"};
  static const char *broadcast[] = {"k", "d_long", "d_str"};
  int b = !strcmp(a->shape, "broadcast");
  int n = b ? 3 : SHAPE_CACHE_COLUMNS;
  fprintf(f, ", \"columns\": {");
  for (int i = 0; i < n; i++)
    fprintf(f, "%s\"%s\": {\"sum\": \"%" PRIu64 "\", \"nulls\": %" PRId64 "}", i ? ", " : "",
            b ? broadcast[i] : cache[i], sums->value[i], sums->nulls[i]);
  fprintf(f, "}}\n");
}

static int parse_args(int argc, char **argv, gen_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--file")) {
      a->file_format = 1;
    } else if (!strcmp(s, "--sums")) {
      a->sums = 1;
    } else if (!strcmp(s, "--codec") || !strcmp(s, "--level") || !strcmp(s, "--rows") ||
               !strcmp(s, "--seed") || !strcmp(s, "--outer")) {
      if (i + 1 >= argc) return xc_usage_error("gen", "%s needs a value", s);
      const char *v = argv[++i];
      char *end;
      errno = 0;
      if (!strcmp(s, "--codec")) {
        if (xc_parse_codec(v, &a->codec) != 0) return xc_usage_error("gen", "unknown codec '%s'", v);
        a->codec_given = 1;
      } else if (!strcmp(s, "--outer")) {
        xchg_error err;
        if (xchg_stream_codec_from_name(v, &a->outer, &err) != XCHG_OK || a->outer == XCHG_STREAM_AUTO)
          return xc_usage_error("gen", "unknown stream codec '%s'", v);
        a->outer_given = 1;
      } else if (!strcmp(s, "--seed")) {
        a->seed = strtoull(v, &end, 10);
        if (errno || end == v || *end) return xc_usage_error("gen", "bad seed '%s'", v);
      } else {
        long long n = strtoll(v, &end, 10);
        if (errno || end == v || *end || n < (s[2] == 'l' ? -131072 : 0) ||
            (s[2] == 'r' && n > ((int64_t)1 << 40)) || (s[2] == 'l' && n > 22))
          return xc_usage_error("gen", "bad value '%s' for %s", v, s);
        if (s[2] == 'l') {
          a->level = (int)n;
          a->level_given = 1;
        } else {
          a->rows = n;
        }
      }
    } else if (xc_is_help(s)) {
      fputs(gen_help, stdout);
      return -1;
    } else if (s[0] == '-' && s[1]) {
      return xc_usage_error("gen", "unknown option '%s'", s);
    } else if (!a->shape) {
      a->shape = s;
    } else if (!a->out) {
      a->out = s;
    } else {
      return xc_usage_error("gen", "too many arguments");
    }
  }
  return 0;
}

/* Flags that would change nothing for this shape are usage errors, not
 * silently ignored. */
static int check_meaningful(const gen_args *a, int is_rows) {
  if (a->level_given && a->codec == XCHG_BLOCK_NONE)
    return xc_usage_error("gen", "--level needs a compressing --codec (lz4 or zstd): the output is not "
                          "compressed");
  if (is_rows && a->file_format)
    return xc_usage_error("gen", "--file is for the IPC shapes (cache, broadcast), not rows");
  if (is_rows && a->outer_given)
    return xc_usage_error("gen", "--outer is for the IPC shapes (cache, broadcast), not rows");
  return 0;
}

int xc_cmd_gen(int argc, char **argv) {
  gen_args a = {0};
  a.rows = -1;
  a.seed = 1;
  int rc = parse_args(argc, argv, &a);
  if (rc == -1) return XC_EXIT_OK;
  if (rc != 0) return rc;
  if (!a.shape || !a.out) return xc_usage_error("gen", "needs SHAPE and OUT");
  int is_rows = !strcmp(a.shape, "rows");
  if (!is_rows && strcmp(a.shape, "cache") != 0 && strcmp(a.shape, "broadcast") != 0)
    return xc_usage_error("gen", "unknown shape '%s' (cache, broadcast, rows)", a.shape);
  if (a.rows < 0)
    a.rows = is_rows ? SHAPE_ROWS_ROWS : !strcmp(a.shape, "cache") ? SHAPE_CACHE_ROWS : SHAPE_BROADCAST_ROWS;
  if (is_rows && !a.codec_given) a.codec = XCHG_BLOCK_LZ4_FRAME;
  if ((rc = check_meaningful(&a, is_rows)) != 0) return rc;
  if (!strcmp(a.shape, "broadcast") && !a.outer_given)
    a.outer = a.codec == XCHG_BLOCK_NONE ? XCHG_STREAM_LZ4_JAVA : XCHG_STREAM_NONE;
  if (!strcmp(a.shape, "cache") && !a.outer_given) a.outer = XCHG_STREAM_NONE;
  int to_stdout = !strcmp(a.out, "-");
  out_file out = {to_stdout ? STDOUT_FILENO : open(a.out, O_WRONLY | O_CREAT | O_TRUNC, 0644), a.out};
  if (out.fd < 0) return xc_runtime_error(a.out, strerror(errno));
  progress prog;
  xc_progress_init(&prog, a.shape, is_rows ? "chunks of 64 KiB" : "batches", -1, !strcmp(a.out, "-"));
  shape_sums sums;
  memset(&sums, 0, sizeof sums);
  xchg_error err;
  xchg_status st = is_rows ? gen_rows(&a, &out, &prog, &err) : gen_ipc(&a, &out, &sums, &prog, &err);
  xc_progress_end(&prog);
  if (!to_stdout && close(out.fd) != 0 && st == XCHG_OK) st = xchg_errorf(&err, XCHG_EIO, "%s", strerror(errno));
  if (st != XCHG_OK) {
    if (!to_stdout) unlink(a.out);
    return xc_runtime_error(a.out, err.message);
  }
  if (a.sums) print_sums(&a, &sums, to_stdout ? stderr : stdout);
  return XC_EXIT_OK;
}
