/* input.c — opening inputs (plain or codec-wrapped IPC) and reporting errors
 * the same way everywhere. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

const char *xc_input_label(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

xchg_status xc_open_input(const char *path, xchg_ipc_reader **out, xchg_error *err) {
  if (strcmp(path, "-") != 0) return xchg_ipc_reader_open_file(path, NULL, out, err);
  xchg_source *src = xchg_source_from_fd(STDIN_FILENO, 0);
  if (src == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return xchg_ipc_reader_open(src, NULL, out, err); /* takes src, even on failure */
}

bool xc_parse_stream_codec(const char *name, xchg_stream_codec *out) {
  xchg_error err = {{0}};
  return xchg_stream_codec_from_name(name, out, &err) == XCHG_OK;
}

static xchg_status open_source(const char *path, xchg_source **out, xchg_error *err) {
  if (strcmp(path, "-") != 0) return xchg_source_open_file(path, XCHG_FILE_MMAP, out, err);
  *out = xchg_source_from_fd(STDIN_FILENO, 0);
  return *out != NULL ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

xchg_status xc_input_open(xc_input *in, const char *path, xchg_stream_codec codec, xchg_error *err) {
  memset(in, 0, sizeof *in);
  in->path = path;
  xchg_source *src;
  xchg_status st = open_source(path, &src, err);
  if (st != XCHG_OK) return st;
  if (codec == XCHG_STREAM_AUTO) {
    /* A mapped file is looked at before choosing, so that plain IPC goes to
     * the reader mapped, footer and all.  Standard input cannot be looked
     * at twice: there the decoder detects, passing plain IPC through. */
    xchg_buf *memory = xchg_source_memory(src);
    if (memory != NULL) {
      codec = xchg_stream_codec_detect(xchg_buf_data(memory), xchg_buf_size(memory));
      xchg_buf_unref(memory);
    }
  }
  if (codec == XCHG_STREAM_NONE) {
    in->plain = src;
    return XCHG_OK;
  }
  xchg_stream_options opts;
  xchg_stream_options_init(&opts);
  opts.metrics = 0;        /* byte counts are enough for inspect */
  opts.split_members = 1;  /* Comet: one IPC stream per block */
  if ((st = xchg_istream_open(src, codec, &opts, &in->stream, err)) != XCHG_OK) return st;
  in->codec = xchg_istream_codec(in->stream);
  return XCHG_OK;
}

/* Whether decoded bytes follow the IPC stream just read, in the same member. */
static xchg_status bytes_follow(xchg_istream *s, bool *more, xchg_error *err) {
  const void *ptr;
  size_t len = 0;
  xchg_status st = xchg_istream_next(s, &ptr, &len, err);
  if (st == XCHG_OK && len > 0) xchg_istream_unread(s, len);
  *more = st == XCHG_OK && len > 0;
  return st;
}

/* Moves past the IPC stream just read; *more is false at the end.  Plain
 * IPC is one stream.  After a stream in the IPC file format, what follows
 * in its member is the file's footer (read in order, a file ends with its
 * stream's end marker), so only a next Comet block can follow. */
static xchg_status advance(xc_input *in, bool *more, xchg_error *err) {
  *more = false;
  if (in->stream == NULL || in->codec == XCHG_STREAM_NONE) return XCHG_OK;
  xchg_status st = XCHG_OK;
  if (!in->last_was_file) st = bytes_follow(in->stream, more, err);
  if (st != XCHG_OK || *more) return st;
  int next_member = 0;
  st = xchg_istream_next_member(in->stream, &next_member, err);
  *more = st == XCHG_OK && next_member;
  return st;
}

xchg_status xc_input_next(xc_input *in, const xchg_read_options *opts, xchg_ipc_reader **out,
                          xchg_error *err) {
  *out = NULL;
  xchg_source *src = in->plain;
  in->plain = NULL;
  if (src == NULL) {
    bool more = in->streams == 0;
    xchg_status st = in->streams == 0 ? XCHG_OK : advance(in, &more, err);
    if (st != XCHG_OK || !more) return st;
    if ((src = xchg_istream_as_source(in->stream)) == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  in->stream_start = in->stream != NULL ? xchg_istream_position(in->stream) : 0;
  in->streams++;
  xchg_status st = xchg_ipc_reader_open(src, opts, out, err); /* takes src, even on failure */
  if (st != XCHG_OK) return st;
  in->last_was_file = xchg_ipc_reader_format(*out) == XCHG_IPC_FILE;
  return XCHG_OK;
}

int64_t xc_input_comet_field_count(const xc_input *in) {
  return in->stream != NULL ? xchg_istream_comet_field_count(in->stream) : -1;
}

void xc_input_locate_error(const xc_input *in, xchg_error *err) {
  if (in->streams > 1)
    xchg_error_prefix(err, "IPC stream %lld at decoded byte %llu: ", (long long)in->streams,
                      (unsigned long long)in->stream_start);
}

void xc_input_close(xc_input *in) {
  xchg_source_close(in->plain);
  xchg_istream_close(in->stream);
  memset(in, 0, sizeof *in);
}

int xc_runtime_error(const char *path, const char *message) {
  fflush(stdout); /* keep what was printed before the error ahead of it */
  fprintf(stderr, "xchg: %s: %s\n", xc_input_label(path), message);
  return XC_EXIT_ERROR;
}

int xc_usage_error(const char *command, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "xchg %s: ", command);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'xchg %s --help'.\n", command);
  return XC_EXIT_USAGE;
}

int xc_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }
