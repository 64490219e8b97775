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
    "usage: xchg convert IN OUT [--codec none|lz4|zstd] [--level N] [--batch-rows N]\n"
    "                           [--file|--stream] [--align 8|64]\n\n"
    "Reads an Arrow IPC file or stream (IN, '-' for standard input) and writes it\n"
    "again to OUT ('-' for standard output):\n"
    "  --codec C       body compression of the output (default: none)\n"
    "  --level N       compression level (default: the codec's)\n"
    "  --batch-rows N  coalesce small batches into batches of about N rows\n"
    "                  (batches are merged, never split; dictionaries that\n"
    "                  differ are kept in separate batches)\n"
    "  --file          write the IPC file format\n"
    "  --stream        write the IPC stream format (default)\n"
    "  --align N       buffer alignment, 8 (default) or 64\n"
    "Progress is shown on standard error when it is a terminal.\n";

int xc_parse_codec(const char *name, xchg_block_codec *out) {
  if (!strcmp(name, "none")) *out = XCHG_BLOCK_NONE;
  else if (!strcmp(name, "lz4") || !strcmp(name, "lz4-frame")) *out = XCHG_BLOCK_LZ4_FRAME;
  else if (!strcmp(name, "zstd")) *out = XCHG_BLOCK_ZSTD;
  else return -1;
  return 0;
}

int xc_check_level(const char *command, xchg_block_codec codec, bool given, long long level) {
  if (!given) return -1;
  if (codec == XCHG_BLOCK_NONE)
    return xc_usage_error(command, "--level needs a compressing --codec (lz4 or zstd): the output is not "
                          "compressed");
  int min, max;
  xchg_block_codec_levels(codec, &min, &max);
  if (level >= min && level <= max) return -1;
  return xc_usage_error(command, "--level %lld is out of %s's range: %d to %d (0: the codec's default)", level,
                        xchg_block_codec_name(codec), min, max);
}

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static void show_progress(void *ctx, const xchg_message_info *info) {
  xc_progress_update(ctx, xc_message_end(info));
}

int xc_cmd_convert(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  xchg_write_options opts;
  xchg_write_options_init(&opts);
  const char *format_flag = NULL; /* --file or --stream, when given */
  bool level_given = false;
  long long level = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    long long v;
    if (xc_is_help(a)) {
      fputs(convert_help, stdout);
      return XC_EXIT_OK;
    } else if (!strcmp(a, "--file") || !strcmp(a, "--stream")) {
      if (format_flag != NULL && strcmp(format_flag, a) != 0)
        return xc_usage_error("convert", "%s and %s contradict each other: choose one", format_flag, a);
      format_flag = a;
      opts.format = !strcmp(a, "--file") ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
    } else if (!strcmp(a, "--codec") || !strcmp(a, "--level") || !strcmp(a, "--batch-rows") ||
               !strcmp(a, "--align")) {
      if (i + 1 >= argc) return xc_usage_error("convert", "%s needs a value", a);
      const char *val = argv[++i];
      if (!strcmp(a, "--codec")) {
        if (xc_parse_codec(val, &opts.codec) != 0)
          return xc_usage_error("convert", "unknown codec '%s' (none, lz4, zstd)", val);
      } else if (!strcmp(a, "--level")) {
        if (parse_int(val, INT_MIN, INT_MAX, &v) != 0)
          return xc_usage_error("convert", "--level must be an integer, not '%s'", val);
        level = v;
        level_given = true;
      } else if (!strcmp(a, "--batch-rows")) {
        if (parse_int(val, 1, INT64_MAX, &v) != 0)
          return xc_usage_error("convert", "--batch-rows must be an integer from 1 to %lld, not '%s'",
                                (long long)INT64_MAX, val);
        opts.coalesce_rows = v;
      } else {
        if (parse_int(val, 8, 64, &v) != 0 || (v != 8 && v != 64))
          return xc_usage_error("convert", "--align must be 8 or 64, not '%s'", val);
        opts.alignment = (int)v;
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      return xc_usage_error("convert", "unknown option '%s'", a);
    } else if (!in) {
      in = a;
    } else if (!out) {
      out = a;
    } else {
      return xc_usage_error("convert", "too many arguments");
    }
  }
  if (!in || !out) return xc_usage_error("convert", "needs IN and OUT");
  int usage = xc_check_level("convert", opts.codec, level_given, level);
  if (usage >= 0) return usage;
  opts.level = (int)level;
  xchg_error err;
  xchg_ipc_reader *r;
  xc_progress progress;
  xc_progress_init(&progress, "convert", "bytes", xc_path_size(in), !strcmp(out, "-"));
  xchg_read_options read_opts;
  xchg_read_options_init(&read_opts);
  read_opts.on_message = show_progress;
  read_opts.on_message_ctx = &progress;
  if (xc_open_input(in, &read_opts, &r, &err) != XCHG_OK) return xc_runtime_error(in, err.message);
  struct ArrowSchema schema;
  if (xchg_ipc_reader_schema(r, &schema, &err) != XCHG_OK) {
    xchg_ipc_reader_free(r);
    return xc_runtime_error(in, err.message);
  }
  xc_output o;
  if (xc_output_open(&o, out, in, &err) != XCHG_OK) {
    schema.release(&schema);
    xchg_ipc_reader_free(r);
    xc_output_discard(&o);
    return xc_output_error(&o, err.message);
  }
  xchg_ipc_writer *w;
  xchg_status st = xchg_ipc_writer_open(&schema, &opts, xc_output_write, &o, &w, &err);
  schema.release(&schema);
  int failed_input = 0;
  for (int64_t i = 0; st == XCHG_OK; i++) {
    struct ArrowArray batch;
    if ((st = xchg_ipc_reader_next(r, &batch, &err)) != XCHG_OK) {
      failed_input = 1;
      break;
    }
    if (!batch.release) break;
    st = xchg_ipc_writer_write(w, &batch, &err);
    batch.release(&batch);
  }
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_ipc_writer_free(w);
  xchg_ipc_reader_free(r);
  xc_progress_end(&progress);
  if (st == XCHG_OK) st = xc_output_commit(&o, &err);
  xc_output_discard(&o); /* after a failure: the old OUT stays as it was */
  if (st != XCHG_OK) return failed_input ? xc_runtime_error(in, err.message) : xc_output_error(&o, err.message);
  return XC_EXIT_OK;
}
