/* input_blocks.c — Comet shuffle blocks read through the shuffle reader
 * (xchg/shuffle.h): the schema once, every block's rows coalesced into
 * batches of a target size, instead of one IPC reader per block; and what
 * inspect says of a file of blocks (Comet, or IPC streams). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* A Comet block's header: u64le length, u64le field count, codec tag. */
#define COMET_HEADER_BYTES 20

/* Whether p[0..size) begins Comet blocks (named so, or detected) whose
 * first block states its field count, as Comet writes it.  A field count
 * of 0 (xchg_stream_encode writes no count) would fail the shuffle
 * reader's check: those go block by block (xc_input_open), coalesced by
 * the writer; and so does Arrow IPC named Comet, whose first bytes as a
 * block's length would state gigabytes: read so, the error says what the
 * bytes are (xc_input_next). */
static bool begins_comet(const uint8_t *p, size_t size, xchg_stream_codec codec) {
  bool comet =
      size >= COMET_HEADER_BYTES && !xc_begins_ipc(p, size) &&
      (codec == XCHG_STREAM_COMET || xchg_stream_codec_detect(p, size) == XCHG_STREAM_COMET);
  uint64_t field_count = 0;
  for (int k = 15; comet && k >= 8; k--) field_count = field_count << 8 | p[k];
  return comet && field_count != 0;
}

static bool is_comet_file(xchg_source *src, xchg_stream_codec codec) {
  xchg_buf *memory = xchg_source_memory(src);
  if (memory == NULL) return false;
  bool comet = begins_comet(xchg_buf_data(memory), xchg_buf_size(memory), codec);
  xchg_buf_unref(memory);
  return comet;
}

/* Whether src, in memory, begins with a whole Comet block header whose
 * field count is 0 (as xchg_stream_encode writes it). */
static bool states_no_field_count(xchg_source *src) {
  xchg_buf *memory = xchg_source_memory(src);
  if (memory == NULL) return false;
  bool none = xchg_buf_size(memory) >= COMET_HEADER_BYTES &&
              !begins_comet(xchg_buf_data(memory), xchg_buf_size(memory), XCHG_STREAM_COMET);
  xchg_buf_unref(memory);
  return none;
}

/* No column: a reader that counts rows only (n_columns 0). */
static const int64_t no_columns[1] = {0};

/* Comet blocks, or IPC streams one after another; columns NULL: all of
 * them.  allow_missing_eos: --allow-missing-eos, a block's IPC stream may
 * end without its marker.  whole: the command reads every block, and the
 * reader decompresses and places the next batches on every core
 * (XCHG_THREADS) while the command writes the current one; a command that
 * wants the first rows only reads on its own thread, as read-ahead would
 * decode blocks past them. */
static xchg_status open_framed(xchg_source *src, xchg_shuffle_framing framing,
                               bool allow_missing_eos, bool whole, int64_t target_rows,
                               const int64_t *columns, int64_t n_columns, xchg_shuffle_reader **out,
                               xchg_error *err) {
  xchg_shuffle_reader_options opts;
  xchg_shuffle_reader_options_init(&opts);
  opts.framing = framing;
  opts.read.allow_missing_eos = allow_missing_eos;
  opts.read.pool = whole ? xchg_pool_default() : NULL;
  opts.target_rows = target_rows;
  opts.columns = columns;
  opts.n_columns = n_columns;
  xchg_status st = xchg_shuffle_reader_open(&opts, out, err);
  if (st != XCHG_OK) {
    xchg_source_free(src);
    return st;
  }
  if ((st = xchg_shuffle_reader_add_source(*out, src, err)) != XCHG_OK) { /* takes src */
    xchg_shuffle_reader_free(*out);
    *out = NULL;
  }
  return st;
}

static xchg_status open_reader(xchg_source *src, bool allow_missing_eos, bool whole,
                               int64_t target_rows, const int64_t *columns, int64_t n_columns,
                               xchg_shuffle_reader **out, xchg_error *err) {
  return open_framed(src, XCHG_SHUFFLE_FRAMING_COMET, allow_missing_eos, whole, target_rows,
                     columns, n_columns, out, err);
}

xchg_status xc_blocks_read_through(xchg_shuffle_reader *reader, int64_t limit, xchg_error *err) {
  xchg_status st = XCHG_OK;
  for (int64_t rows = 0; st == XCHG_OK && (limit < 0 || rows < limit);) {
    struct ArrowArray batch;
    if ((st = xchg_shuffle_reader_next(reader, &batch, err)) != XCHG_OK || batch.release == NULL)
      break;
    rows += batch.length;
    batch.release(&batch);
  }
  return st;
}

/* The target of a reader of the first `limit` rows (-1: all): no more
 * than them, so that no block past them is read for the first batch. */
static int64_t limited_target(int64_t target_rows, int64_t limit) {
  if (limit < 0 || limit >= target_rows) return target_rows;
  return limit > 0 ? limit : 1;
}

/* Blocks in memory (a mapped file) are read through once, no column
 * decoded, before anything is written: a cut block, a bad codec tag or
 * another schema fails before any output, as for plain IPC (input.c).
 * Only the blocks of the first `limit` rows (-1: all): one batch of them,
 * which holds no column however many rows it has. */
static xchg_status check_blocks(xchg_buf *memory, bool allow_missing_eos, int64_t limit,
                                xchg_error *err) {
  xchg_source *src;
  xchg_shuffle_reader *probe;
  xchg_status st = xchg_source_from_buf(memory, &src, err);
  if (st == XCHG_OK)
    st = open_reader(src, allow_missing_eos, limit < 0,
                     limited_target(limit < 0 ? XC_BLOCK_BATCH_ROWS : INT64_MAX, limit), no_columns,
                     0, &probe, err);
  if (st != XCHG_OK) return st;
  struct ArrowSchema schema;
  if ((st = xchg_shuffle_reader_schema(probe, &schema, err)) == XCHG_OK) {
    schema.release(&schema);
    st = xc_blocks_read_through(probe, limit, err);
  }
  xchg_shuffle_reader_free(probe);
  return st;
}

/* The columns to decode, as chooser says from the blocks' whole schema
 * (the first block's, read by a reader of all columns that decodes none). */
static xchg_status choose_columns(xchg_buf *memory, bool allow_missing_eos,
                                  const xc_blocks_columns *chooser, const int64_t **columns,
                                  int64_t *n_columns, xchg_error *err) {
  xchg_source *src;
  xchg_shuffle_reader *whole;
  xchg_status st = xchg_source_from_buf(memory, &src, err);
  if (st == XCHG_OK)
    st = open_reader(src, allow_missing_eos, false, XC_BLOCK_BATCH_ROWS, NULL, 0, &whole, err);
  if (st != XCHG_OK) return st;
  struct ArrowSchema schema;
  if ((st = xchg_shuffle_reader_schema(whole, &schema, err)) == XCHG_OK) {
    st = chooser->choose(chooser->ctx, &schema, columns, n_columns, err);
    schema.release(&schema);
  }
  xchg_shuffle_reader_free(whole);
  return st;
}

/* Comet blocks on standard input (path: "-", or the named FIFO read in
 * its place), read as they come: nothing can be
 * checked before the first batch (a bad block fails after the batches
 * before it), and the columns are chosen from the first block, read ahead
 * whole (unless it is larger than a reader holds: the reader then says
 * so) and handed out again. */
static xchg_status open_stdin_blocks(const char *path, xchg_stream_codec codec,
                                     bool allow_missing_eos, int64_t target_rows, int64_t limit,
                                     const xc_blocks_columns *chooser, xchg_shuffle_reader **out,
                                     xchg_error *err) {
  const uint8_t *p;
  size_t n;
  xchg_status st = xc_stdin_peek(COMET_HEADER_BYTES, &p, &n, err);
  if (st != XCHG_OK || !begins_comet(p, n, codec)) return st;
  uint64_t length = 0;
  for (int k = 7; k >= 0; k--) length = length << 8 | p[k];
  xchg_ipc_read_options caps;
  xchg_ipc_read_options_init(&caps);
  const int64_t *columns = NULL;
  int64_t n_columns = 0;
  if (chooser != NULL && length <= (uint64_t)caps.max_batch_bytes) {
    if ((st = xc_stdin_peek(8 + (size_t)length, &p, &n, err)) != XCHG_OK) return st;
    xchg_buf *first = xchg_buf_wrap(p, n, NULL, NULL);
    if (first == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    st = choose_columns(first, allow_missing_eos, chooser, &columns, &n_columns, err);
    xchg_buf_unref(first);
    if (st != XCHG_OK) return st;
  }
  xchg_source *src;
  if ((st = xc_open_source(path, &src, err)) != XCHG_OK) return st;
  return open_reader(src, allow_missing_eos, limit < 0, limited_target(target_rows, limit), columns,
                     n_columns, out, err);
}

xchg_status xc_input_open_blocks(const char *path, xchg_stream_codec codec, bool allow_missing_eos,
                                 int64_t target_rows, int64_t limit,
                                 const xc_blocks_columns *chooser, xchg_shuffle_reader **out,
                                 xchg_error *err) {
  *out = NULL;
  if (codec != XCHG_STREAM_AUTO && codec != XCHG_STREAM_COMET) return XCHG_OK;
  if (xc_is_piped(path))
    return open_stdin_blocks(path, codec, allow_missing_eos, target_rows, limit, chooser, out, err);
  xchg_source *src;
  xchg_status st = xc_open_source(path, &src, err);
  if (st != XCHG_OK) return st;
  if (!is_comet_file(src, codec)) {
    xchg_source_free(src);
    return XCHG_OK;
  }
  xchg_buf *memory = xchg_source_memory(src); /* not NULL: is_comet_file looked at it */
  const int64_t *columns = NULL;
  int64_t n_columns = 0;
  st = check_blocks(memory, allow_missing_eos, limit, err);
  if (st == XCHG_OK && chooser != NULL)
    st = choose_columns(memory, allow_missing_eos, chooser, &columns, &n_columns, err);
  xchg_buf_unref(memory);
  if (st != XCHG_OK) {
    xchg_source_free(src);
    return st;
  }
  return open_reader(src, allow_missing_eos, limit < 0, limited_target(target_rows, limit), columns,
                     n_columns, out, err);
}

/* Counts each block's codec tag (bytes 16..19 of its header), walking the
 * length prefixes of blocks the shuffle reader has read whole. */
static void count_codecs(const uint8_t *p, size_t size, xc_blocks_summary *s) {
  static const char tags[4][5] = {"NONE", "LZ4_", "ZSTD", "SNAP"};
  for (size_t at = 0; size - at >= 20;) {
    uint64_t length = 0;
    for (int k = 7; k >= 0; k--) length = length << 8 | p[at + (size_t)k];
    for (int c = 0; c < 4; c++)
      if (memcmp(p + at + 16, tags[c], 4) == 0) s->by_codec[c]++;
    if (length > size - at - 8) break;
    at += 8 + (size_t)length;
  }
}

/* The bytes the shuffle reader reads: the file's, or what its stream
 * codec (not Comet, whose blocks the reader decodes itself) decodes it to,
 * so that IPC streams in a codec are summed up as plain ones are. */
static xchg_status open_blocks_source(const char *path, xchg_stream_codec codec, xchg_source **src,
                                      xchg_error *err) {
  if (codec == XCHG_STREAM_NONE || codec == XCHG_STREAM_COMET)
    return xc_open_source(path, src, err);
  xchg_istream *stream;
  xchg_status st = xc_open_istream(path, codec, &stream, err);
  return st == XCHG_OK ? xchg_source_from_istream(stream, src, err) : st; /* takes stream */
}

/* The shuffle reader names a block's offset in its source "(source 0,
 * byte N)", and the IPC reader's words inside "at byte N": of a codec's
 * decoded bytes, both are said to be decoded, so that they are not looked
 * for in the file (xc_input_locate_error says the IPC streams' so). */
static void say_blocks_decoded(xchg_error *err) {
  static const char at[] = ", byte ";
  const char *source = strstr(err->message, "(source ");
  const char *hit = source != NULL ? strstr(source, at) : NULL;
  if (hit != NULL) {
    char said[sizeof err->message];
    snprintf(said, sizeof said, "%.*s, " XC_DECODED_BYTE "%s", (int)(hit - err->message),
             err->message, hit + sizeof at - 1);
    snprintf(err->message, sizeof err->message, "%s", said);
  }
  xc_say_decoded(err);
}

xchg_status xc_blocks_summarize(const char *path, xchg_stream_codec codec, bool allow_missing_eos,
                                xc_blocks_summary *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  bool comet = codec == XCHG_STREAM_COMET;
  xchg_source *src;
  xchg_status st = open_blocks_source(path, codec, &src, err);
  if (st != XCHG_OK) return st;
  /* Blocks without a field count fail the shuffle reader's check, yet cat
   * and convert read them block by block: not the input's fault. */
  if (comet && states_no_field_count(src)) {
    xchg_source_free(src);
    out->no_field_count = true;
    return xchg_errorf(err, XCHG_EFORMAT,
                       "its first block's header states no field count (0): read block by "
                       "block, as cat and convert read it");
  }
  xchg_buf *memory = xchg_source_memory(src);
  xchg_shuffle_reader *reader;
  xchg_shuffle_framing framing = comet ? XCHG_SHUFFLE_FRAMING_COMET : XCHG_SHUFFLE_FRAMING_IPC;
  if ((st = open_framed(src, framing, allow_missing_eos, true, XC_BLOCK_BATCH_ROWS, NULL, 0,
                        &reader, err)) != XCHG_OK) {
    xchg_buf_unref(memory);
    return st;
  }
  st = xc_blocks_read_through(reader, -1, err);
  if (st != XCHG_OK && codec != XCHG_STREAM_NONE && !comet) say_blocks_decoded(err);
  xchg_shuffle_reader_metrics m;
  xchg_shuffle_reader_get_metrics(reader, &m);
  xchg_shuffle_reader_free(reader);
  out->blocks = m.blocks;
  out->rows = m.rows;
  out->wire_bytes = m.wire_bytes;
  out->batches = m.batches;
  if (st == XCHG_OK && memory != NULL && comet)
    count_codecs(xchg_buf_data(memory), xchg_buf_size(memory), out);
  xchg_buf_unref(memory);
  return st;
}
