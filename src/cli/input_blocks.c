/* input_blocks.c — Comet shuffle blocks read through the shuffle reader
 * (xchg/shuffle.h): the schema once, every block's rows coalesced into
 * batches of a target size, instead of one IPC reader per block. */
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* A Comet input: named so, or a mapped file whose first bytes say so.
 * Standard input cannot be looked at twice, so there only the name counts. */
static bool is_comet(xchg_source *src, xchg_stream_codec codec) {
  if (codec != XCHG_STREAM_AUTO) return codec == XCHG_STREAM_COMET;
  xchg_buf *memory = xchg_source_memory(src);
  if (memory == NULL) return false;
  bool comet = xchg_buf_size(memory) > 0 &&
               xchg_stream_codec_detect(xchg_buf_data(memory), xchg_buf_size(memory)) == XCHG_STREAM_COMET;
  xchg_buf_unref(memory);
  return comet;
}

xchg_status xc_input_open_blocks(const char *path, xchg_stream_codec codec, int64_t target_rows,
                                 xchg_shuffle_reader **out, xchg_error *err) {
  *out = NULL;
  if (codec != XCHG_STREAM_AUTO && codec != XCHG_STREAM_COMET) return XCHG_OK;
  xchg_source *src;
  xchg_status st = strcmp(path, "-") != 0 ? xchg_source_open_file(path, XCHG_FILE_MMAP, &src, err)
                                          : xchg_source_from_fd(STDIN_FILENO, 0, &src, err);
  if (st != XCHG_OK) return st;
  if (!is_comet(src, codec)) {
    xchg_source_free(src);
    return XCHG_OK;
  }
  xchg_shuffle_reader_options opts;
  xchg_shuffle_reader_options_init(&opts);
  opts.framing = XCHG_SHUFFLE_FRAMING_COMET;
  opts.target_rows = target_rows;
  xchg_shuffle_reader *reader;
  if ((st = xchg_shuffle_reader_open(&opts, &reader, err)) != XCHG_OK) {
    xchg_source_free(src);
    return st;
  }
  if ((st = xchg_shuffle_reader_add_source(reader, src, err)) != XCHG_OK) { /* takes src */
    xchg_shuffle_reader_free(reader);
    return st;
  }
  *out = reader;
  return XCHG_OK;
}
