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
 *              zstd) frame per 64 KiB chunk;
 *   shuffle    shuffle blocks, each its own IPC stream, concatenated, in
 *              the ipc or the comet framing (gen/shape_shuffle.h).
 *
 * With --sums the sums a reader must find are printed as JSON on stdout
 * (standard error when OUT is '-'); 64-bit sums are decimal strings, as
 * JSON numbers lose precision beyond 2^53 in many readers. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_writer.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "gen/shape_rows.h"
#include "gen/shape_shuffle.h"
#include "gen/shapes.h"
#include "xchg/stream.h"
#include "xchg/writer.h"
#include "xchg/testing.h"

static const char gen_help[] =
    "usage: xchg gen cache|broadcast|rows OUT [--compression none|lz4|zstd] [--level N]\n"
    "                [--rows N] [--seed S] [--outer none|lz4-java|...] [--file] [--sums] [-f]\n"
    "       xchg gen shuffle OUT [--format ipc|comet] [--compression none|lz4|zstd|snappy]\n"
    "                [--columns C] [--block-rows R] [--rows N] [--seed S] [--sums] [-f]\n\n"
    "Writes a benchmark shape of SHAPES.md to OUT ('-' for standard output):\n"
    "  cache      5,000,000 rows x 6 columns, Arrow IPC stream (--compression:\n"
    "             its body compression)\n"
    "  broadcast  1,000,000 rows of k, d_long, d_str, Arrow IPC stream; with\n"
    "             --compression none (default) wrapped in --outer (default\n"
    "             lz4-java)\n"
    "  rows       10,000,000 rows of 4-byte length + 100-byte payload, one\n"
    "             --compression frame (default lz4) per 64 KiB chunk\n"
    "  shuffle    262,144 rows in blocks of --block-rows R (default 64) rows, C\n"
    "             columns (--columns, default 5), each block its own IPC stream,\n"
    "             concatenated: --format ipc (default; body compressed by\n"
    "             --compression none, lz4 or zstd) or comet (Comet's native shuffle\n"
    "             blocks, the whole stream compressed by --compression none, lz4,\n"
    "             zstd or snappy)\n"
    "  --rows N   rows instead of the shape's count; 0 writes the schema and\n"
    "             no rows, which every command reads (shuffle: one block of 0\n"
    "             rows, not an empty file, which only --input-codec comet reads;\n"
    "             rows: an empty file, which inspect --rows reads)\n"
    "  --seed S   random seed (default 1); the same seed gives the same bytes\n"
    "  --level N  the body codec's level (cache, broadcast, rows; default the\n"
    "             shape's: zstd 1, lz4 its default)\n"
    "  --file     IPC file format instead of stream (cache, broadcast; not with\n"
    "             --outer comet, whose blocks each hold an IPC stream)\n"
    "  --sums     print the sums a reader must find, as JSON\n"
    "  -f, --force  replace an existing OUT, write to a terminal (both refused\n"
    "             otherwise)\n"
    "  --codec C  the old name of --compression (deprecated)\n"
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
  bool force;
  const char *codec_name;      /* as given, for shuffle's codecs */
  const char *format_name;     /* shuffle only */
  int64_t columns, block_rows; /* shuffle only; -1: not given */
} gen_args;

typedef xc_progress progress;

typedef void (*batch_fn)(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                         shape_sums *sums);

/* Writes an IPC shape to `sink` (or into *mem when mem is not NULL). */
static xchg_status write_ipc_shape(const gen_args *a, struct ArrowSchema *schema, int64_t batches,
                                   batch_fn make, xchg_write_fn sink, void *sink_ctx,
                                   xchg_buf **mem, shape_sums *sums, progress *prog,
                                   xchg_error *err) {
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.codec = a->codec;
  /* ZSTD at level 1 unless told, as SHAPES.md and `bench decode` write it
   * (the library's default, 0, is zstd's own 3) */
  opts.level = a->level_given || a->codec != XCHG_BLOCK_ZSTD ? a->level : 1;
  /* Every buffer compressed, incompressible ones too, as Arrow C++ writes
   * by default and as `bench decode` generates the shape: a narrow read of
   * a file written here then decompresses c4 as the benchmark's does, not
   * a raw buffer read in place. */
  opts.min_space_saving = -INFINITY;
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

static xchg_status gen_ipc(const gen_args *a, xc_output *out, shape_sums *sums, progress *prog,
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
    st = write_ipc_shape(a, &schema, batches, make, xc_output_write, out, NULL, sums, prog, err);
  } else {
    xchg_buf *ipc = NULL, *wrapped = NULL;
    st = write_ipc_shape(a, &schema, batches, make, NULL, NULL, &ipc, sums, prog, err);
    if (st == XCHG_OK) {
      xchg_stream_encode_options eo;
      xchg_stream_encode_options_init(&eo);
      eo.comet_field_count =
          schema.n_children; /* as Comet writes it (only a Comet block has one) */
      st = xchg_stream_encode(a->outer, &eo, xchg_buf_data(ipc), xchg_buf_size(ipc), &wrapped, err);
    }
    if (st == XCHG_OK)
      st = xc_output_write(out, xchg_buf_data(wrapped), xchg_buf_size(wrapped), err);
    xchg_buf_unref(ipc);
    xchg_buf_unref(wrapped);
  }
  schema.release(&schema);
  return st;
}

typedef struct rows_out {
  xc_output *out;
  progress *prog;
} rows_out;

static xchg_status write_rows_frame(void *ctx, const void *data, size_t n, int64_t chunk,
                                    int64_t chunks, xchg_error *err) {
  rows_out *ro = ctx;
  ro->prog->total = chunks;
  xchg_status st = xc_output_write(ro->out, data, n, err);
  xc_progress_update(ro->prog, chunk + 1);
  return st;
}

static xchg_status gen_rows(const gen_args *a, xc_output *out, progress *prog, xchg_error *err) {
  xchg_stream_codec codec = a->codec == XCHG_BLOCK_ZSTD   ? XCHG_STREAM_ZSTD
                            : a->codec == XCHG_BLOCK_NONE ? XCHG_STREAM_NONE
                                                          : XCHG_STREAM_LZ4_FRAME;
  rows_out ro = {out, prog};
  return shape_rows_encode(a->seed, a->rows, codec, a->level, write_rows_frame, &ro, err);
}

typedef struct blocks_out {
  xc_output *out;
  progress *prog;
} blocks_out;

static xchg_status write_block(void *ctx, const void *data, size_t n, int64_t block, int64_t blocks,
                               xchg_error *err) {
  blocks_out *bo = ctx;
  bo->prog->total = blocks;
  xchg_status st = xc_output_write(bo->out, data, n, err);
  xc_progress_update(bo->prog, block + 1);
  return st;
}

static shape_shuffle_config shuffle_config(const gen_args *a) {
  shape_shuffle_config c = {a->seed,         a->rows,           a->block_rows,
                            (int)a->columns, SHAPE_SHUFFLE_IPC, SHAPE_SHUFFLE_NONE};
  if (a->format_name) shape_shuffle_parse_framing(a->format_name, &c.framing); /* checked before */
  if (a->codec_name) shape_shuffle_parse_codec(a->codec_name, &c.codec);
  return c;
}

static xchg_status gen_shuffle(const gen_args *a, xc_output *out, shape_shuffle_sums *sums,
                               progress *prog, xchg_error *err) {
  shape_shuffle_config c = shuffle_config(a);
  blocks_out bo = {out, prog};
  return shape_shuffle_encode(&c, write_block, &bo, sums, err);
}

static void print_shuffle_sums(const gen_args *a, const shape_shuffle_sums *sums, FILE *f) {
  shape_shuffle_config c = shuffle_config(a);
  fprintf(f,
          "{\"shape\": \"shuffle\", \"format\": \"%s\", \"codec\": \"%s\", \"rows\": %" PRId64
          ", \"block_rows\": %" PRId64 ", \"blocks\": %" PRId64 ", \"seed\": %" PRIu64
          ", \"columns\": {",
          shape_shuffle_framing_name(c.framing), shape_shuffle_codec_name(c.codec), c.rows,
          c.block_rows, shape_shuffle_blocks(&c), c.seed);
  for (int i = 0; i < c.columns; i++)
    fprintf(f, "%s\"c%d\": {\"sum\": \"%" PRIu64 "\", \"nulls\": %" PRId64 "}", i ? ", " : "", i,
            sums->value[i], sums->nulls[i]);
  fprintf(f, "}}\n");
}

static void print_sums(const gen_args *a, const shape_sums *sums, FILE *f) {
  fprintf(f, "{\"shape\": \"%s\", \"rows\": %" PRId64 ", \"seed\": %" PRIu64, a->shape, a->rows,
          a->seed);
  if (!strcmp(a->shape, "rows")) {
    fprintf(f, ", \"payload_byte_sum\": \"%" PRIu64 "\"}\n",
            shape_rows_payload_sum(a->seed, a->rows));
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

/* 0, or the errno of a failed write to f (after flushing it). */
static int flush_errno(FILE *f) {
  errno = 0;
  if (fflush(f) == 0 && !ferror(f)) return 0;
  return errno != 0 ? errno : EIO;
}

/* --seed: a decimal integer from 0 to 2^64-1 (strtoull alone would take
 * "-1" as 2^64-1). */
static bool parse_seed(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (text[0] < '0' || text[0] > '9' || errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

/* 0 when the arguments are fine, -1 after printing the help, else the
 * usage error's exit code. */
static int parse_args(int argc, char **argv, gen_args *a) {
  static const struct option longs[] = {
      {"file", no_argument, NULL, 'F'},          {"sums", no_argument, NULL, 's'},
      {"force", no_argument, NULL, 'f'},         {"compression", required_argument, NULL, 'c'},
      {"codec", required_argument, NULL, 'C'},   {"level", required_argument, NULL, 'l'},
      {"rows", required_argument, NULL, 'r'},    {"seed", required_argument, NULL, 'S'},
      {"outer", required_argument, NULL, 'o'},   {"format", required_argument, NULL, 'm'},
      {"columns", required_argument, NULL, 'k'}, {"block-rows", required_argument, NULL, 'b'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  int opt, rc;
  int64_t v;
  xc_options_begin();
  while ((opt = xc_getopt(argc, argv, ":hf", longs)) != -1) {
    switch (opt) {
      case 'F': a->file_format = 1; break;
      case 's': a->sums = 1; break;
      case 'f': a->force = true; break;
      case 'C': xc_deprecated_option("gen", "--codec", "--compression"); /* fall through */
      case 'c':
        a->codec_name = optarg;
        a->codec_given = 1;
        break;
      case 'l':
        if (!xc_int_option("gen", "--level", optarg, INT_MIN, INT_MAX, &v)) return XC_EXIT_USAGE;
        a->level = (int)v;
        a->level_given = 1;
        break;
      case 'r':
        if (!xc_int_option("gen", "--rows", optarg, 0, (int64_t)1 << 40, &a->rows))
          return XC_EXIT_USAGE;
        break;
      case 'S':
        if (!parse_seed(optarg, &a->seed))
          return xc_usage_error("gen", "--seed must be an integer from 0 to %llu, not '%s'",
                                (unsigned long long)UINT64_MAX, optarg);
        break;
      case 'o':
        if ((rc = xc_stream_codec_option("gen", optarg, true, &a->outer)) >= 0) return rc;
        a->outer_given = 1;
        break;
      case 'm': a->format_name = optarg; break;
      case 'k':
        if (!xc_int_option("gen", "--columns", optarg, 1, SHAPE_SHUFFLE_MAX_COLUMNS, &a->columns))
          return XC_EXIT_USAGE;
        break;
      case 'b':
        if (!xc_int_option("gen", "--block-rows", optarg, 1, INT32_MAX, &a->block_rows))
          return XC_EXIT_USAGE;
        break;
      case 'h': fputs(gen_help, stdout); return -1;
      default: return xc_option_error("gen", argv, longs, opt);
    }
  }
  rc = xc_two_operands("gen", "SHAPE and OUT", argc, argv, &a->shape, &a->out);
  return rc >= 0 ? rc : 0;
}

/* --codec and --format: the shuffle shape's names, or a body codec. */
static int parse_codecs(gen_args *a, int is_shuffle) {
  shape_shuffle_framing framing;
  shape_shuffle_codec codec;
  if (a->format_name && shape_shuffle_parse_framing(a->format_name, &framing) != 0)
    return xc_usage_error("gen", "unknown --format '%s' (ipc, comet)", a->format_name);
  if (!a->codec_name) return 0;
  if (is_shuffle) {
    if (shape_shuffle_parse_codec(a->codec_name, &codec) != 0)
      return xc_usage_error("gen", "unknown compression '%s' (none, lz4, zstd, snappy)",
                            a->codec_name);
    if (codec == SHAPE_SHUFFLE_SNAPPY && (!a->format_name || framing != SHAPE_SHUFFLE_COMET))
      return xc_usage_error("gen",
                            "--compression snappy needs --format comet: Arrow IPC body compression "
                            "has no snappy");
    return 0;
  }
  if (xc_parse_codec(a->codec_name, &a->codec) != 0)
    return xc_usage_error("gen", "unknown compression '%s' (none, lz4, zstd)", a->codec_name);
  return 0;
}

/* Flags that would change nothing for this shape are usage errors, not
 * silently ignored. */
static int check_meaningful(const gen_args *a, int is_rows) {
  int is_shuffle = !strcmp(a->shape, "shuffle");
  if (!is_shuffle && (a->format_name || a->columns >= 0 || a->block_rows >= 0))
    return xc_usage_error("gen", "--format, --columns and --block-rows are for the shuffle shape");
  if (is_shuffle && (a->level_given || a->file_format || a->outer_given))
    return xc_usage_error("gen",
                          "--level, --file and --outer are not for the shuffle shape (its codecs "
                          "are at the shape's levels; every block is an IPC stream)");
  int usage = xc_check_level("gen", a->codec, a->level_given, a->level);
  if (usage >= 0) return usage;
  if (is_rows && a->file_format)
    return xc_usage_error("gen", "--file is for the IPC shapes (cache, broadcast), not rows");
  if (is_rows && a->outer_given)
    return xc_usage_error("gen", "--outer is for the IPC shapes (cache, broadcast), not rows");
  if (a->file_format && a->outer_given && a->outer == XCHG_STREAM_COMET)
    return xc_usage_error("gen",
                          "--outer comet wraps an IPC stream (a Comet block holds one), not "
                          "--file");
  return 0;
}

int xc_cmd_gen(int argc, char **argv) {
  gen_args a = {0};
  a.rows = a.columns = a.block_rows = -1;
  a.seed = 1;
  int rc = parse_args(argc, argv, &a);
  if (rc == -1) return XC_EXIT_OK;
  if (rc != 0) return rc;
  int is_rows = !strcmp(a.shape, "rows");
  int is_shuffle = !strcmp(a.shape, "shuffle");
  if (!is_rows && !is_shuffle && strcmp(a.shape, "cache") != 0 && strcmp(a.shape, "broadcast") != 0)
    return xc_usage_error("gen", "unknown shape '%s' (cache, broadcast, rows, shuffle)", a.shape);
  if ((rc = parse_codecs(&a, is_shuffle)) != 0) return rc;
  if (a.rows < 0)
    a.rows = is_rows                     ? SHAPE_ROWS_ROWS
             : is_shuffle                ? SHAPE_SHUFFLE_ROWS
             : !strcmp(a.shape, "cache") ? SHAPE_CACHE_ROWS
                                         : SHAPE_BROADCAST_ROWS;
  if (is_shuffle && a.columns < 0) a.columns = 5;
  if (is_shuffle && a.block_rows < 0) a.block_rows = 64;
  if (is_rows && !a.codec_given) a.codec = XCHG_BLOCK_LZ4_FRAME;
  if ((rc = check_meaningful(&a, is_rows)) != 0) return rc;
  if (!strcmp(a.shape, "broadcast") && !a.outer_given)
    a.outer = a.codec == XCHG_BLOCK_NONE ? XCHG_STREAM_LZ4_JAVA : XCHG_STREAM_NONE;
  if (!strcmp(a.shape, "cache") && !a.outer_given) a.outer = XCHG_STREAM_NONE;
  xchg_error err;
  xc_output out;
  if (xc_output_open(&out, a.out, NULL, a.force, &err) != XCHG_OK) {
    xc_output_discard(&out);
    return xc_output_error(&out, err.message);
  }
  progress prog;
  xc_progress_init(&prog, a.shape,
                   is_rows      ? "chunks of 64 KiB"
                   : is_shuffle ? "blocks"
                                : "batches",
                   -1, !strcmp(a.out, "-"));
  shape_sums sums;
  memset(&sums, 0, sizeof sums);
  shape_shuffle_sums shuffle_sums;
  memset(&shuffle_sums, 0, sizeof shuffle_sums);
  xchg_status st = is_rows      ? gen_rows(&a, &out, &prog, &err)
                   : is_shuffle ? gen_shuffle(&a, &out, &shuffle_sums, &prog, &err)
                                : gen_ipc(&a, &out, &sums, &prog, &err);
  xc_progress_end(&prog);
  /* --sums before OUT is put in place: failing to print them fails the command */
  int to_file = strcmp(a.out, "-") != 0, sums_errno = 0;
  if (st == XCHG_OK && a.sums) {
    if (is_shuffle)
      print_shuffle_sums(&a, &shuffle_sums, to_file ? stdout : stderr);
    else
      print_sums(&a, &sums, to_file ? stdout : stderr);
    if ((sums_errno = flush_errno(to_file ? stdout : stderr)) != 0) st = XCHG_EIO;
  }
  if (st == XCHG_OK) st = xc_output_commit(&out, &err);
  xc_output_discard(&out); /* after a failure: the old OUT stays as it was */
  if (sums_errno != 0)
    return to_file ? xc_write_error("-", sums_errno) : XC_EXIT_ERROR; /* stderr cannot say it */
  if (st != XCHG_OK) return xc_output_error(&out, err.message);
  return XC_EXIT_OK;
}
