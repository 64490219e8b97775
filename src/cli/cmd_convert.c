/* cmd_convert.c — `xchg convert IN OUT`: re-encodes any readable Arrow IPC
 * input (stream or file, any body compression, '-' for standard input) as
 * Arrow IPC with the chosen format, codec and batch size. */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_writer.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/render/node.h"
#include "xchg/writer.h"

static const char convert_help[] =
    "usage: xchg convert IN OUT [--compression none|lz4|zstd] [--level N] [--batch-rows N]\n"
    "                           [--file|--stream] [--align 8|64] [--input-codec C] [-f]\n"
    "                           [--allow-missing-eos]\n\n"
    "Reads Arrow IPC (IN, '-' for standard input: a file or stream, any body\n"
    "compression, in a stream codec or not) and writes it again to OUT ('-' for\n"
    "standard output).  An input holding several IPC streams one after another\n"
    "is written as one: they must have the same schema (the first one's\n"
    "dictionary ids are kept: fields that share a dictionary there must have\n"
    "the same one in every IPC stream).  Comet shuffle blocks\n"
    "(--input-codec comet, or detected) are written as one IPC stream, their\n"
    "dictionary ids kept, their rows coalesced into batches of at least\n"
    "--batch-rows rows (default 8192; a block is never split): blocks that\n"
    "state their field count are read by the shuffle reader (a file through\n"
    "once before anything is written, standard input as it comes; OUT is\n"
    "left alone after an error either way); others block by block.  Standard\n"
    "input is read as `xchg cat -` reads it (see xchg cat --help).\n\n"
    "  --compression C the output's body compression: none (default), lz4\n"
    "                    (LZ4 frame) or zstd; every buffer is compressed, as\n"
    "                    Arrow C++ writes them\n"
    "  --level N       compression level (default: the codec's)\n"
    "  --batch-rows N  coalesce small batches into batches of about N rows\n"
    "                  (default: batches as in the input; Comet blocks: 8192)\n"
    "                  (batches are merged, never split; dictionaries that\n"
    "                  differ are kept in separate batches)\n"
    "  --file          write the IPC file format\n"
    "  --stream        write the IPC stream format (default)\n"
    "  --align N       buffer alignment, 8 (default) or 64\n"
    "  -f, --force     replace an existing OUT, write to a terminal (both\n"
    "                    refused otherwise)\n" XC_CODEC_HELP XC_MISSING_EOS_HELP
    "  --codec C       the old name of --compression (deprecated)\n"
    "Progress is shown on standard error when it is a terminal.\n";

int xc_parse_codec(const char *name, xchg_block_codec *out) {
  if (!strcmp(name, "none"))
    *out = XCHG_BLOCK_NONE;
  else if (!strcmp(name, "lz4") || !strcmp(name, "lz4-frame"))
    *out = XCHG_BLOCK_LZ4_FRAME;
  else if (!strcmp(name, "zstd"))
    *out = XCHG_BLOCK_ZSTD;
  else
    return -1;
  return 0;
}

int xc_check_level(const char *command, xchg_block_codec codec, bool given, long long level) {
  if (!given) return -1;
  /* not "the output is not compressed": gen broadcast's is, by --outer,
   * whose level is its codec's own */
  if (codec == XCHG_BLOCK_NONE)
    return xc_usage_error(command,
                          "--level needs --compression lz4 or zstd, whose level it is: "
                          "--compression is none");
  int min, max;
  xchg_block_codec_levels(codec, &min, &max);
  if (level >= min && level <= max) return -1;
  return xc_usage_error(command,
                        "--level %lld is out of %s's range: %d to %d (0: the codec's default)",
                        level, xchg_block_codec_name(codec), min, max);
}

typedef struct convert_args {
  const char *in, *out;
  xchg_ipc_write_options write;
  xchg_stream_codec input_codec;
  bool force;
  bool allow_missing_eos;
} convert_args;

typedef struct convert_progress {
  xc_progress line;
  const xc_input *in;
} convert_progress;

static void show_progress(void *ctx, const xchg_message_info *info) {
  convert_progress *p = ctx;
  xc_progress_update(&p->line, xc_input_done(p->in, xc_message_end(info)));
}

/* --file and --stream: the one chosen, or a usage error when both are. */
static int output_format(convert_args *a, const char **flag, const char *given) {
  if (*flag != NULL && strcmp(*flag, given) != 0)
    return xc_usage_error("convert", "%s and %s contradict each other: choose one", *flag, given);
  *flag = given;
  a->write.format = !strcmp(given, "--file") ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
  return -1;
}

/* Returns -1 when the arguments are fine, else the exit code. */
static int parse_args(int argc, char **argv, convert_args *a) {
  static const struct option longs[] = {{"file", no_argument, NULL, 'F'},
                                        {"stream", no_argument, NULL, 'S'},
                                        {"force", no_argument, NULL, 'f'},
                                        {"compression", required_argument, NULL, 'c'},
                                        {"codec", required_argument, NULL, 'C'},
                                        {"level", required_argument, NULL, 'l'},
                                        {"batch-rows", required_argument, NULL, 'b'},
                                        {"align", required_argument, NULL, 'a'},
                                        {"input-codec", required_argument, NULL, 'i'},
                                        {"allow-missing-eos", no_argument, NULL, 'E'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  xchg_ipc_write_options_init(&a->write);
  /* Every buffer compressed, incompressible ones too, as Arrow C++ writes
   * them: a buffer stored raw lies 8 bytes into its slot, behind its -1
   * prefix, which polars reads in place and cannot cast to 128-bit values
   * (it panics on a decimal column of random values). */
  a->write.min_space_saving = -INFINITY;
  a->input_codec = XCHG_STREAM_AUTO;
  const char *format_flag = NULL; /* --file or --stream, when given */
  bool level_given = false;
  int64_t level = 0;
  int opt, rc = -1;
  xc_options_begin();
  while (rc < 0 && (opt = xc_getopt(argc, argv, ":hf", longs)) != -1) {
    switch (opt) {
      case 'F': rc = output_format(a, &format_flag, "--file"); break;
      case 'S': rc = output_format(a, &format_flag, "--stream"); break;
      case 'f': a->force = true; break;
      case 'E': a->allow_missing_eos = true; break;
      case 'C': xc_deprecated_option("convert", "--codec", "--compression"); /* fall through */
      case 'c':
        if (xc_parse_codec(optarg, &a->write.codec) != 0)
          rc = xc_usage_error("convert", "unknown compression '%s' (none, lz4, zstd)", optarg);
        break;
      case 'i': rc = xc_stream_codec_option("convert", optarg, false, &a->input_codec); break;
      case 'l':
        if (!xc_int_option("convert", "--level", optarg, INT_MIN, INT_MAX, &level))
          return XC_EXIT_USAGE;
        level_given = true;
        break;
      case 'b':
        if (!xc_int_option("convert", "--batch-rows", optarg, 1, INT64_MAX,
                           &a->write.coalesce_rows))
          return XC_EXIT_USAGE;
        break;
      case 'a':
        if (strcmp(optarg, "8") != 0 && strcmp(optarg, "64") != 0)
          return xc_usage_error("convert", "--align must be 8 or 64, not '%s'", optarg);
        a->write.alignment = atoi(optarg);
        break;
      case 'h': fputs(convert_help, stdout); return XC_EXIT_OK;
      default: return xc_option_error("convert", argv, longs, opt);
    }
  }
  if (rc >= 0) return rc;
  if ((rc = xc_two_operands("convert", "IN and OUT", argc, argv, &a->in, &a->out)) >= 0) return rc;
  int usage = xc_check_level("convert", a->write.codec, level_given, level);
  if (usage >= 0) return usage;
  a->write.level = (int)level;
  return -1;
}

/* The reader lists dictionary ids with a field before the fields inside
 * it, the writer takes them with those fields first (see xchg/ipc.h and
 * xchg/writer.h): pre[*next...] in the one order, out[*n...] in the other,
 * for node s and what it holds. */
static void reorder_ids(const struct ArrowSchema *s, const int64_t *pre, int64_t *next,
                        int64_t *out, int64_t *n) {
  int64_t own = s->dictionary != NULL ? pre[(*next)++] : -1;
  const struct ArrowSchema *value = s->dictionary != NULL ? s->dictionary : s;
  for (int64_t c = 0; c < value->n_children; c++)
    reorder_ids(value->children[c], pre, next, out, n);
  if (s->dictionary != NULL) out[(*n)++] = own;
}

/* The reader of the input: one of IPC, one of Comet blocks. */
typedef struct id_reader {
  const xchg_ipc_reader *ipc;
  const xchg_shuffle_reader *blocks;
} id_reader;

static int64_t list_ids(id_reader r, int64_t *ids, int64_t capacity) {
  return r.ipc != NULL ? xchg_ipc_reader_dictionary_ids(r.ipc, ids, capacity)
                       : xchg_shuffle_reader_dictionary_ids(r.blocks, ids, capacity);
}

/* The input's dictionary ids (the first IPC stream's, or the blocks'), in
 * the writer's order, into a->write: fields that share a dictionary in
 * the input (Arrow's generated_shared_dict) still share one, written once,
 * and every id stays what it was (without them the writer numbers 0, 1,
 * 2... and writes a shared dictionary once per field).  The writer checks
 * that fields of one id get equal dictionaries in every batch, later IPC
 * streams' too.  *ids is the caller's to free once the writer is open. */
static xchg_status keep_dictionary_ids(id_reader r, const struct ArrowSchema *schema,
                                       convert_args *a, int64_t **ids, xchg_error *err) {
  int64_t n = list_ids(r, NULL, 0);
  *ids = NULL;
  if (n == 0 || n != xc_count_dictionaries(schema)) return XCHG_OK; /* default numbering */
  int64_t *pre = malloc((size_t)n * sizeof *pre);
  *ids = malloc((size_t)n * sizeof **ids);
  if (pre == NULL || *ids == NULL) {
    free(pre);
    free(*ids);
    *ids = NULL;
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  list_ids(r, pre, n);
  int64_t next = 0, written = 0;
  reorder_ids(schema, pre, &next, *ids, &written);
  free(pre);
  a->write.dictionary_ids = *ids;
  a->write.n_dictionary_ids = written;
  return XCHG_OK;
}

/* Whether a failure of the writer (st) concerns the input: one that
 * cannot be written (XCHG_EIO) is the output's; the writer refusing what
 * the input holds (a dictionary the file format cannot replace) is said
 * of the input, where what is refused is, and where the error places it. */
static bool refused_input(xchg_status st) { return st != XCHG_OK && st != XCHG_EIO; }

/* Finishes w: the batches it still held (--batch-rows) are written now,
 * and its refusal of one is the input's failure, as while copying. */
static xchg_status finish_writing(xchg_ipc_writer *w, bool *failed_input, xchg_error *err) {
  xchg_status st = xchg_ipc_writer_finish(w, err);
  *failed_input = refused_input(st);
  return st;
}

/* Every batch of every IPC stream of the input into w; *failed_input says
 * whether a failure was the input's (refused_input too).  batches_kept:
 * the writer writes each batch as it comes (it does not coalesce them), so
 * that a batch it refuses is the one just handed to it. */
static xchg_status copy_input(xc_input *in, xchg_ipc_reader *reader, xchg_ipc_writer *w,
                              const xchg_ipc_read_options *opts, bool batches_kept,
                              bool *failed_input, xchg_error *err) {
  xchg_status st = XCHG_OK;
  bool output_failed = false;
  int64_t refused_offset = -1, refused = -1; /* the refused batch's message */
  while (st == XCHG_OK && reader != NULL) {
    struct ArrowArray batch;
    if ((st = xchg_ipc_reader_next(reader, &batch, err)) != XCHG_OK) break;
    if (batch.release != NULL) {
      st = xchg_ipc_writer_write(w, &batch, err);
      batch.release(&batch);
      output_failed = st != XCHG_OK; /* the reader is freed below all the same */
      if (output_failed) refused = xchg_ipc_reader_batch_message(reader, &refused_offset);
      continue;
    }
    xc_input_end_stream(in, reader);
    reader = NULL;
    st = xc_input_next(in, opts, &reader, err);
  }
  xc_input_end_stream(in, reader);
  if (st != XCHG_OK && (!output_failed || refused_input(st))) *failed_input = true;
  /* an output that refuses what the input holds (not one that cannot be
   * written) says where in the input that is, as the input's errors do:
   * the batch's message, in its IPC stream */
  if (st != XCHG_OK && output_failed && st != XCHG_EIO && batches_kept)
    xchg_error_prefix(err, "message %lld at byte %lld: ", (long long)refused,
                      (long long)refused_offset);
  if (st != XCHG_OK && (!output_failed || st != XCHG_EIO)) xc_input_locate_error(in, err);
  return st;
}

/* Every coalesced batch of the blocks into w, the progress line moved on
 * by their bytes; *failed_input says whether a failure was the input's
 * (refused_input too). */
static xchg_status copy_blocks(xchg_shuffle_reader *reader, xchg_ipc_writer *w,
                               xc_progress *progress, bool *failed_input, xchg_error *err) {
  for (;;) {
    struct ArrowArray batch;
    xchg_status st = xchg_shuffle_reader_next(reader, &batch, err);
    if (st != XCHG_OK) *failed_input = true;
    if (st != XCHG_OK || batch.release == NULL) return st;
    xc_progress_blocks(progress, reader);
    st = xchg_ipc_writer_write(w, &batch, err);
    batch.release(&batch);
    if (st != XCHG_OK) {
      *failed_input = refused_input(st);
      return st;
    }
  }
}

/* Comet blocks through the shuffle reader: their rows coalesced, one IPC
 * stream (or file) out; nothing is left at OUT after a failure. */
static int convert_blocks(convert_args *a, xchg_shuffle_reader *reader) {
  xchg_error err;
  struct ArrowSchema schema = {0};
  int64_t *dict_ids = NULL;
  xchg_status st = xchg_shuffle_reader_schema(reader, &schema, &err);
  if (st == XCHG_OK)
    st = keep_dictionary_ids((id_reader){.blocks = reader}, &schema, a, &dict_ids, &err);
  if (st != XCHG_OK) {
    if (schema.release != NULL) schema.release(&schema);
    xchg_shuffle_reader_free(reader);
    return xc_runtime_error(a->in, err.message);
  }
  xc_output o;
  if (xc_output_open(&o, a->out, a->in, a->force, &err) != XCHG_OK) {
    free(dict_ids);
    schema.release(&schema);
    xchg_shuffle_reader_free(reader);
    xc_output_discard(&o);
    return xc_output_error(&o, err.message);
  }
  xchg_ipc_writer *w;
  st = xchg_ipc_writer_open(&schema, &a->write, xc_output_write, &o, &w, &err);
  free(dict_ids); /* the writer keeps its own copy */
  schema.release(&schema);
  xc_progress progress;
  xc_progress_init(&progress, "convert", "bytes", xc_path_size(a->in), !strcmp(a->out, "-"));
  bool failed_input = false;
  if (st == XCHG_OK) st = copy_blocks(reader, w, &progress, &failed_input, &err);
  if (st == XCHG_OK) st = finish_writing(w, &failed_input, &err);
  xchg_ipc_writer_free(w);
  xchg_shuffle_reader_free(reader);
  xc_progress_end(&progress);
  if (st == XCHG_OK) st = xc_output_commit(&o, &err);
  xc_output_discard(&o);
  if (st != XCHG_OK)
    return failed_input ? xc_runtime_error(a->in, err.message) : xc_output_error(&o, err.message);
  return XC_EXIT_OK;
}

int xc_cmd_convert(int argc, char **argv) {
  convert_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  xchg_error err;
  xchg_shuffle_reader *blocks;
  int64_t target = a.write.coalesce_rows > 0 ? a.write.coalesce_rows : XC_BLOCK_BATCH_ROWS;
  if (xc_pipe_named(a.in, &err) != XCHG_OK || /* read as "-" reads a pipe */
      xc_input_open_blocks(a.in, a.input_codec, a.allow_missing_eos, target, -1, NULL, &blocks,
                           &err) != XCHG_OK)
    return xc_runtime_error(a.in, err.message);
  if (blocks != NULL) return convert_blocks(&a, blocks);
  xc_input in;
  convert_progress progress = {.in = &in};
  xc_progress_init(&progress.line, "convert", "bytes", xc_path_size(a.in), !strcmp(a.out, "-"));
  xchg_ipc_read_options read_opts;
  xchg_ipc_read_options_init(&read_opts);
  read_opts.on_message = show_progress;
  read_opts.on_message_ctx = &progress;
  read_opts.pool = xchg_pool_default(); /* decompressed on every core, XCHG_THREADS */
  xchg_ipc_reader *r = NULL;
  struct ArrowSchema schema = {0};
  xchg_status st =
      xc_input_open(&in, a.in, a.input_codec, true, NULL, a.allow_missing_eos, -1, &err);
  /* Comet blocks read one by one (no field count): coalesced by the writer. */
  if (in.codec == XCHG_STREAM_COMET && a.write.coalesce_rows == 0)
    a.write.coalesce_rows = XC_BLOCK_BATCH_ROWS;
  bool batches_kept = a.write.coalesce_rows == 0;
  if (st == XCHG_OK) st = xc_input_next(&in, &read_opts, &r, &err);
  /* An empty Comet input is no rows, as cat shows it, but the IPC written
   * begins with a schema, which it has none of. */
  if (st == XCHG_OK && r == NULL) st = xc_input_no_schema(&in, "the Arrow IPC output", &err);
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(r, &schema, &err);
  int64_t *dict_ids = NULL;
  if (st == XCHG_OK) st = keep_dictionary_ids((id_reader){.ipc = r}, &schema, &a, &dict_ids, &err);
  if (st != XCHG_OK) {
    xc_input_locate_error(&in, &err);
    xchg_ipc_reader_free(r);
    xc_input_close(&in);
    return xc_runtime_error(a.in, err.message);
  }
  xc_output o;
  if (xc_output_open(&o, a.out, a.in, a.force, &err) != XCHG_OK) {
    free(dict_ids);
    schema.release(&schema);
    xchg_ipc_reader_free(r);
    xc_input_close(&in);
    xc_output_discard(&o);
    return xc_output_error(&o, err.message);
  }
  xchg_ipc_writer *w;
  st = xchg_ipc_writer_open(&schema, &a.write, xc_output_write, &o, &w, &err);
  free(dict_ids); /* the writer keeps its own copy */
  schema.release(&schema);
  bool failed_input = false;
  if (st == XCHG_OK)
    st = copy_input(&in, r, w, &read_opts, batches_kept, &failed_input, &err);
  else
    xchg_ipc_reader_free(r);
  if (st == XCHG_OK) st = finish_writing(w, &failed_input, &err);
  xchg_ipc_writer_free(w);
  xc_input_close(&in);
  xc_progress_end(&progress.line);
  if (st == XCHG_OK) st = xc_output_commit(&o, &err);
  xc_output_discard(&o); /* after a failure: the old OUT stays as it was */
  if (st != XCHG_OK)
    return failed_input ? xc_runtime_error(a.in, err.message) : xc_output_error(&o, err.message);
  return XC_EXIT_OK;
}
