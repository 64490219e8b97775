/* cmd_convert.c — `xchg convert IN OUT`: re-encodes any readable Arrow IPC
 * input (stream or file, any body compression, '-' for standard input) as
 * Arrow IPC with the chosen format, codec and batch size. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_writer.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "xchg/writer.h"

static const char convert_help[] =
    "usage: xchg convert IN OUT [--compression none|lz4|zstd] [--level N] [--batch-rows N]\n"
    "                           [--file|--stream] [--align 8|64] [--input-codec C] [-f]\n\n"
    "Reads Arrow IPC (IN, '-' for standard input: a file or stream, any body\n"
    "compression, in a stream codec or not) and writes it again to OUT ('-' for\n"
    "standard output).  An input holding several IPC streams one after another\n"
    "is written as one: they must have the same schema.  Comet shuffle blocks\n"
    "(--input-codec comet, or detected) are written as one IPC stream, their\n"
    "rows coalesced into batches of at least --batch-rows rows (default 8192;\n"
    "a block is never split): blocks that state their field count are read\n"
    "by the shuffle reader (a file through once before anything is written,\n"
    "standard input as it comes; OUT is left alone after an error either\n"
    "way); others block by block.  Standard input is read as `xchg cat -`\n"
    "reads it (see xchg cat --help).\n\n"
    "  --compression C the output's body compression: none (default), lz4\n"
    "                    (LZ4 frame) or zstd\n"
    "  --level N       compression level (default: the codec's)\n"
    "  --batch-rows N  coalesce small batches into batches of about N rows\n"
    "                  (default: batches as in the input; Comet blocks: 8192)\n"
    "                  (batches are merged, never split; dictionaries that\n"
    "                  differ are kept in separate batches)\n"
    "  --file          write the IPC file format\n"
    "  --stream        write the IPC stream format (default)\n"
    "  --align N       buffer alignment, 8 (default) or 64\n"
    "  -f, --force     replace an existing OUT, write to a terminal (both\n"
    "                    refused otherwise)\n" XC_CODEC_HELP
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
  if (codec == XCHG_BLOCK_NONE)
    return xc_usage_error(command,
                          "--level needs --compression lz4 or zstd: the output is not "
                          "compressed");
  int min, max;
  xchg_block_codec_levels(codec, &min, &max);
  if (level >= min && level <= max) return -1;
  return xc_usage_error(command,
                        "--level %lld is out of %s's range: %d to %d (0: the codec's default)",
                        level, xchg_block_codec_name(codec), min, max);
}

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

typedef struct convert_args {
  const char *in, *out;
  xchg_ipc_write_options write;
  xchg_stream_codec input_codec;
  bool force;
} convert_args;

typedef struct convert_progress {
  xc_progress line;
  const xc_input *in;
} convert_progress;

static void show_progress(void *ctx, const xchg_message_info *info) {
  convert_progress *p = ctx;
  xc_progress_update(&p->line, xc_input_done(p->in, xc_message_end(info)));
}

/* Returns -1 when the arguments are fine, else the exit code. */
static int parse_args(int argc, char **argv, convert_args *a) {
  memset(a, 0, sizeof *a);
  xchg_ipc_write_options_init(&a->write);
  a->input_codec = XCHG_STREAM_AUTO;
  const char *format_flag = NULL; /* --file or --stream, when given */
  bool level_given = false;
  long long level = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    long long v;
    if (xc_is_help(arg)) {
      fputs(convert_help, stdout);
      return XC_EXIT_OK;
    } else if (!strcmp(arg, "--file") || !strcmp(arg, "--stream")) {
      if (format_flag != NULL && strcmp(format_flag, arg) != 0)
        return xc_usage_error("convert", "%s and %s contradict each other: choose one", format_flag,
                              arg);
      format_flag = arg;
      a->write.format = !strcmp(arg, "--file") ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
    } else if (!strcmp(arg, "-f") || !strcmp(arg, "--force")) {
      a->force = true;
    } else if (!strcmp(arg, "--compression") || !strcmp(arg, "--codec") ||
               !strcmp(arg, "--level") || !strcmp(arg, "--batch-rows") || !strcmp(arg, "--align") ||
               !strcmp(arg, "--input-codec")) {
      if (i + 1 >= argc) return xc_usage_error("convert", "%s needs a value", arg);
      const char *val = argv[++i];
      if (!strcmp(arg, "--codec")) xc_deprecated_option("convert", "--codec", "--compression");
      if (!strcmp(arg, "--compression") || !strcmp(arg, "--codec")) {
        if (xc_parse_codec(val, &a->write.codec) != 0)
          return xc_usage_error("convert", "unknown compression '%s' (none, lz4, zstd)", val);
      } else if (!strcmp(arg, "--input-codec")) {
        int rc = xc_stream_codec_option("convert", val, &a->input_codec);
        if (rc >= 0) return rc;
      } else if (!strcmp(arg, "--level")) {
        if (parse_int(val, INT_MIN, INT_MAX, &v) != 0)
          return xc_usage_error("convert", "--level must be an integer, not '%s'", val);
        level = v;
        level_given = true;
      } else if (!strcmp(arg, "--batch-rows")) {
        if (parse_int(val, 1, INT64_MAX, &v) != 0)
          return xc_usage_error("convert",
                                "--batch-rows must be an integer from 1 to %lld, not '%s'",
                                (long long)INT64_MAX, val);
        a->write.coalesce_rows = v;
      } else {
        if (parse_int(val, 8, 64, &v) != 0 || (v != 8 && v != 64))
          return xc_usage_error("convert", "--align must be 8 or 64, not '%s'", val);
        a->write.alignment = (int)v;
      }
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return xc_usage_error("convert", "unknown option '%s'", arg);
    } else if (!a->in) {
      a->in = arg;
    } else if (!a->out) {
      a->out = arg;
    } else {
      return xc_usage_error("convert", "too many arguments");
    }
  }
  if (!a->in || !a->out) return xc_usage_error("convert", "needs IN and OUT");
  int usage = xc_check_level("convert", a->write.codec, level_given, level);
  if (usage >= 0) return usage;
  a->write.level = (int)level;
  return -1;
}

/* Every batch of every IPC stream of the input into w; *failed_input says
 * whether a failure was the input's. */
static xchg_status copy_input(xc_input *in, xchg_ipc_reader *reader, xchg_ipc_writer *w,
                              const xchg_ipc_read_options *opts, bool *failed_input,
                              xchg_error *err) {
  xchg_status st = XCHG_OK;
  bool output_failed = false;
  while (st == XCHG_OK && reader != NULL) {
    struct ArrowArray batch;
    if ((st = xchg_ipc_reader_next(reader, &batch, err)) != XCHG_OK) break;
    if (batch.release != NULL) {
      st = xchg_ipc_writer_write(w, &batch, err);
      batch.release(&batch);
      output_failed = st != XCHG_OK; /* the reader is freed below all the same */
      continue;
    }
    xc_input_end_stream(in, reader);
    reader = NULL;
    st = xc_input_next(in, opts, &reader, err);
  }
  xc_input_end_stream(in, reader);
  if (st != XCHG_OK && !output_failed) *failed_input = true;
  /* an output that refuses what the input holds (not one that cannot be
   * written) says where in the input that is, as the input's errors do */
  if (st != XCHG_OK && (!output_failed || st != XCHG_EIO)) xc_input_locate_error(in, err);
  return st;
}

/* Comet blocks through the shuffle reader: their rows coalesced, one IPC
 * stream (or file) out; nothing is left at OUT after a failure. */
static int convert_blocks(const convert_args *a, xchg_shuffle_reader *reader) {
  xchg_error err;
  struct ArrowSchema schema;
  xchg_status st = xchg_shuffle_reader_schema(reader, &schema, &err);
  if (st != XCHG_OK) {
    xchg_shuffle_reader_free(reader);
    return xc_runtime_error(a->in, err.message);
  }
  xc_output o;
  if (xc_output_open(&o, a->out, a->in, a->force, &err) != XCHG_OK) {
    schema.release(&schema);
    xchg_shuffle_reader_free(reader);
    xc_output_discard(&o);
    return xc_output_error(&o, err.message);
  }
  xchg_ipc_writer *w;
  st = xchg_ipc_writer_open(&schema, &a->write, xc_output_write, &o, &w, &err);
  schema.release(&schema);
  bool failed_input = false;
  while (st == XCHG_OK) {
    struct ArrowArray batch;
    if ((st = xchg_shuffle_reader_next(reader, &batch, &err)) != XCHG_OK) {
      failed_input = true;
      break;
    }
    if (batch.release == NULL) break;
    st = xchg_ipc_writer_write(w, &batch, &err);
    batch.release(&batch);
  }
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_ipc_writer_free(w);
  xchg_shuffle_reader_free(reader);
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
  if (xc_input_open_blocks(a.in, a.input_codec, target, -1, NULL, &blocks, &err) != XCHG_OK)
    return xc_runtime_error(a.in, err.message);
  if (blocks != NULL) return convert_blocks(&a, blocks);
  xc_input in;
  convert_progress progress = {.in = &in};
  xc_progress_init(&progress.line, "convert", "bytes", xc_path_size(a.in), !strcmp(a.out, "-"));
  xchg_ipc_read_options read_opts;
  xchg_ipc_read_options_init(&read_opts);
  read_opts.on_message = show_progress;
  read_opts.on_message_ctx = &progress;
  xchg_ipc_reader *r = NULL;
  struct ArrowSchema schema = {0};
  xchg_status st = xc_input_open(&in, a.in, a.input_codec, true, &err);
  /* Comet blocks read one by one (no field count): coalesced by the writer. */
  if (in.codec == XCHG_STREAM_COMET && a.write.coalesce_rows == 0)
    a.write.coalesce_rows = XC_BLOCK_BATCH_ROWS;
  if (st == XCHG_OK) st = xc_input_next(&in, &read_opts, &r, &err);
  if (st == XCHG_OK && r == NULL)
    st = xchg_errorf(&err, XCHG_EFORMAT, "holds no IPC stream to convert");
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(r, &schema, &err);
  if (st != XCHG_OK) {
    xc_input_locate_error(&in, &err);
    xchg_ipc_reader_free(r);
    xc_input_close(&in);
    return xc_runtime_error(a.in, err.message);
  }
  xc_output o;
  if (xc_output_open(&o, a.out, a.in, a.force, &err) != XCHG_OK) {
    schema.release(&schema);
    xchg_ipc_reader_free(r);
    xc_input_close(&in);
    xc_output_discard(&o);
    return xc_output_error(&o, err.message);
  }
  xchg_ipc_writer *w;
  st = xchg_ipc_writer_open(&schema, &a.write, xc_output_write, &o, &w, &err);
  schema.release(&schema);
  bool failed_input = false;
  if (st == XCHG_OK)
    st = copy_input(&in, r, w, &read_opts, &failed_input, &err);
  else
    xchg_ipc_reader_free(r);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_ipc_writer_free(w);
  xc_input_close(&in);
  xc_progress_end(&progress.line);
  if (st == XCHG_OK) st = xc_output_commit(&o, &err);
  xc_output_discard(&o); /* after a failure: the old OUT stays as it was */
  if (st != XCHG_OK)
    return failed_input ? xc_runtime_error(a.in, err.message) : xc_output_error(&o, err.message);
  return XC_EXIT_OK;
}
