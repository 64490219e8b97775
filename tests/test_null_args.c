/* tests/test_null_args.c — the API takes NULL where its reference says so:
 * every destructor (`_free`, `_release`, `_unref`) and options initialiser
 * as a no-op, every getter of a handle with the value its declaration
 * gives for NULL, and setters and actions as no-ops; calls that return a
 * status take a NULL argument as XCHG_EINVAL naming it.  One that dereferenced NULL would crash here. */
#include <stdio.h>
#include <string.h>

#include "support/c_fixture.h"
#include "support/testutil.h"
#include "xchg/testing.h"
#include "xchg/xchg.h"

/* Options initialisers, which return nothing, take NULL as a no-op: a
 * caller that has no options struct passes NULL to the open calls. */
static void null_options(void) {
  xchg_ipc_read_options_init(NULL);
  xchg_ipc_write_options_init(NULL);
  xchg_istream_options_init(NULL);
  xchg_stream_encode_options_init(NULL);
  xchg_row_reader_options_init(NULL);
  xchg_shuffle_reader_options_init(NULL);
  xchg_cache_options_init(NULL);
  xchg_shuffle_reader_options o;
  memset(&o, 0, sizeof o);
  xchg_shuffle_reader_options_init(&o);
  TU_CHECK(o.target_rows == 8192, "an options struct is still filled");
}

static void null_destructors(void) {
  int64_t bytes0 = xchg_buf_allocated_bytes(), live0 = xchg_buf_live_count();
  xchg_buf_unref(NULL);
  xchg_source_free(NULL);
  xchg_pool_free(NULL);
  xchg_istream_free(NULL);
  xchg_row_reader_free(NULL);
  xchg_ipc_reader_free(NULL);
  xchg_batch_decoder_free(NULL);
  xchg_ipc_writer_free(NULL);
  xchg_cache_holder_release(NULL);
  xchg_cache_free(NULL);
  TU_CHECK(xchg_buf_allocated_bytes() == bytes0 && xchg_buf_live_count() == live0,
           "NULL destructors changed the buffer counts");
}

/* Metrics structs filled with a pattern, to see that NULL zeroes them. */
#define FILLED(type, name) \
  type name;               \
  memset(&name, 0x5a, sizeof name)

static int all_zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

static void null_handles(void) {
  TU_CHECK(xchg_buf_data(NULL) == NULL && xchg_buf_mutable_data(NULL) == NULL);
  TU_CHECK(xchg_buf_size(NULL) == 0);
  TU_CHECK(xchg_cache_holder_num_batches(NULL) == 0 && xchg_cache_holder_num_rows(NULL) == 0);
  TU_CHECK(xchg_source_position(NULL) == 0 && xchg_source_size(NULL) == -1);
  TU_CHECK(xchg_source_memory(NULL) == NULL);
  TU_CHECK(xchg_ipc_reader_format(NULL) == XCHG_IPC_STREAM);
  int64_t ids[2] = {7, 7};
  TU_CHECK(xchg_ipc_reader_dictionary_ids(NULL, ids, 2) == 0 && ids[0] == 7);
  TU_CHECK(xchg_shuffle_reader_dictionary_ids(NULL, ids, 2) == 0 && ids[0] == 7);
  TU_CHECK(xchg_ipc_reader_num_batches(NULL) == -1 && xchg_ipc_reader_stream_end(NULL) == -1);
  int64_t offset = 7;
  TU_CHECK(xchg_ipc_reader_batch_message(NULL, &offset) == -1 && offset == -1 &&
           xchg_ipc_reader_batch_message(NULL, NULL) == -1);
  TU_CHECK(xchg_pool_threads(NULL) == 1);
  TU_CHECK(xchg_row_reader_rows(NULL) == 0 && xchg_row_reader_copied_rows(NULL) == 0);
  TU_CHECK(xchg_row_reader_stream(NULL) == NULL);
  TU_CHECK(xchg_istream_codec(NULL) == XCHG_STREAM_AUTO);
  TU_CHECK(xchg_istream_comet_field_count(NULL) == -1 && xchg_istream_position(NULL) == 0);
  TU_CHECK(xchg_ipc_writer_bytes_written(NULL) == 0 && xchg_ipc_writer_batches_written(NULL) == 0 &&
           xchg_ipc_writer_dictionaries_written(NULL) == 0);
  TU_CHECK(xchg_ipc_writer_take_memory(NULL) == NULL);
  xchg_error host;
  memset(&host, 0x5a, sizeof host);
  TU_CHECK(xchg_cache_host_error(NULL, &host) == XCHG_OK && host.message[0] == '\0',
           "xchg_cache_host_error(NULL) is no failure");
  TU_CHECK(xchg_cache_host_error(NULL, NULL) == XCHG_OK);

  FILLED(xchg_istream_metrics, stream);
  xchg_istream_get_metrics(NULL, &stream);
  TU_CHECK(all_zero(&stream, sizeof stream), "xchg_istream_get_metrics(NULL) left values");
  FILLED(xchg_cache_metrics, cache);
  xchg_cache_get_metrics(NULL, &cache);
  TU_CHECK(all_zero(&cache, sizeof cache), "xchg_cache_get_metrics(NULL) left values");
  FILLED(xchg_shuffle_reader_metrics, shuffle);
  xchg_shuffle_reader_get_metrics(NULL, &shuffle);
  TU_CHECK(all_zero(&shuffle, sizeof shuffle), "xchg_shuffle_reader_get_metrics(NULL) left values");
  xchg_istream_get_metrics(NULL, NULL);
  xchg_cache_get_metrics(NULL, NULL);
  xchg_shuffle_reader_get_metrics(NULL, NULL);
  xchg_buf_get_metrics(NULL);

  int min = 5, max = 5;
  xchg_block_codec_levels(XCHG_BLOCK_ZSTD, NULL, &max);
  xchg_block_codec_levels(XCHG_BLOCK_ZSTD, &min, NULL);
  TU_CHECK(min < 0 && max == 22, "zstd levels %d to %d", min, max);

  /* setters and actions on a NULL handle: no-ops */
  xchg_ipc_reader_on_message(NULL, NULL, NULL);
  xchg_ipc_reader_on_decompress(NULL, NULL, NULL);
  xchg_istream_unread(NULL, 3);
  xchg_cache_trim(NULL);
}

/* A constructor that fails leaves *out NULL, whichever argument it
 * refused (an out left as it was reads as a handle to free). */
static void failed_constructors(void) {
  xchg_error err;
  xchg_ipc_reader *r = (xchg_ipc_reader *)&err;
  TU_CHECK(xchg_ipc_reader_open(NULL, NULL, &r, &err) == XCHG_EINVAL && r == NULL,
           "xchg_ipc_reader_open of a NULL source: %s", err.message);
  xchg_ipc_writer *w = (xchg_ipc_writer *)&err;
  TU_CHECK(xchg_ipc_writer_open(NULL, NULL, NULL, NULL, &w, &err) == XCHG_EINVAL && w == NULL,
           "xchg_ipc_writer_open without a write function: %s", err.message);
  w = (xchg_ipc_writer *)&err;
  TU_CHECK(xchg_ipc_writer_open_fd(NULL, NULL, -1, &w, &err) == XCHG_EINVAL && w == NULL,
           "xchg_ipc_writer_open_fd of fd -1: %s", err.message);
  TU_CHECK(xchg_ipc_writer_open_memory(NULL, NULL, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "out is NULL"),
           "xchg_ipc_writer_open_memory with a NULL out: %s", err.message);
}

/* A writer's schema that is not one says what it is instead. */
static void writer_schemas(void) {
  struct ArrowSchema column, released;
  tu_fixture_schema(&column, "i", "c0", 0, NULL);
  tu_fixture_schema(&released, "+s", "", 0, NULL);
  released.release(&released);
  const struct {
    const struct ArrowSchema *schema;
    const char *message;
  } cases[] = {
      {NULL, "the schema is NULL"},
      {&released, "the schema is released"},
      {&column, "the schema's format is \"i\": it must be a struct (\"+s\") of the columns"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    xchg_error err = {""};
    xchg_ipc_writer *w = NULL;
    xchg_status st = xchg_ipc_writer_open_memory(cases[i].schema, NULL, &w, &err);
    TU_CHECK(st == XCHG_EINVAL && !w && !strcmp(err.message, cases[i].message),
             "writer schema case %zu: %d, %s, where %s was expected", i, (int)st, err.message,
             cases[i].message);
    xchg_ipc_writer_free(w);
  }
  column.release(&column);
}

static void rows_closed(void *ctx) { ++*(int *)ctx; }

static xchg_status no_rows(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  (void)ctx, (void)dst, (void)n, (void)err;
  *got = 0;
  return XCHG_OK;
}

/* Calls that return a status and fill an out argument take a NULL out as
 * XCHG_EINVAL naming it, as the sources and readers do; a handle given
 * over is closed, as on any failure. */
static void null_outs(void) {
  xchg_error err;
  TU_CHECK(xchg_pool_create(2, NULL, &err) == XCHG_EINVAL && strstr(err.message, "out is NULL"),
           "xchg_pool_create: %s", err.message);
  TU_CHECK(xchg_pool_parse_env(NULL, &err) == XCHG_EINVAL && strstr(err.message, "threads is NULL"),
           "xchg_pool_parse_env: %s", err.message);
  xchg_buf *buf = (xchg_buf *)&err;
  TU_CHECK(xchg_block_compress(XCHG_BLOCK_ZSTD, 0, "a", 1, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "out is NULL"),
           "xchg_block_compress: %s", err.message);
  TU_CHECK(
      xchg_block_compress(XCHG_BLOCK_ZSTD, 99, "a", 1, &buf, &err) == XCHG_EINVAL && buf == NULL,
      "xchg_block_compress at level 99 left *out");
  TU_CHECK(xchg_stream_encode(XCHG_STREAM_ZSTD, NULL, "a", 1, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "out is NULL"),
           "xchg_stream_encode: %s", err.message);
  xchg_stream_codec codec;
  TU_CHECK(xchg_stream_codec_from_name("zstd", NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "out is NULL"),
           "xchg_stream_codec_from_name: %s", err.message);
  TU_CHECK(xchg_stream_codec_from_name(NULL, &codec, &err) == XCHG_EINVAL &&
               strstr(err.message, "name is NULL"),
           "xchg_stream_codec_from_name: %s", err.message);
  TU_CHECK(xchg_ipc_encode_stream(NULL, NULL, &buf, &err) == XCHG_EINVAL &&
               strstr(err.message, "stream is NULL"),
           "xchg_ipc_encode_stream: %s", err.message);

  int closed = 0;
  xchg_source *src = NULL;
  xchg_istream *s = NULL;
  if (!TU_OK(xchg_source_from_callback(no_rows, rows_closed, &closed, &src, &err), err) ||
      !TU_OK(xchg_istream_open(src, XCHG_STREAM_NONE, NULL, &s, &err), err))
    return;
  TU_CHECK(xchg_row_reader_open(s, NULL, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "out is NULL"),
           "xchg_row_reader_open: %s", err.message);
  TU_CHECK(closed == 1, "xchg_row_reader_open with a NULL out did not close its stream");
  xchg_row_reader *r = (xchg_row_reader *)&err;
  TU_CHECK(xchg_row_reader_open(NULL, NULL, &r, &err) == XCHG_EINVAL && r == NULL,
           "xchg_row_reader_open of a NULL stream: %s", err.message);
}

/* The row reader's reads take a NULL argument as XCHG_EINVAL naming it,
 * as every other read does, and the reader reads on afterwards. */
static void row_reader_reads(void) {
  xchg_error err;
  xchg_source *src = NULL;
  xchg_istream *s = NULL;
  xchg_row_reader *r = NULL;
  int closed = 0;
  if (!TU_OK(xchg_source_from_callback(no_rows, rows_closed, &closed, &src, &err), err) ||
      !TU_OK(xchg_istream_open(src, XCHG_STREAM_NONE, NULL, &s, &err), err) ||
      !TU_OK(xchg_row_reader_open(s, NULL, &r, &err), err))
    return;
  const uint8_t *row, *rows[2];
  size_t len, lens[2];
  int64_t count;
  static const struct {
    const char *call, *named;
  } want[] = {{"next", "the reader"}, {"next", "row"},   {"next", "len"},   {"batch", "the reader"},
              {"batch", "rows"},      {"batch", "lens"}, {"batch", "count"}};
  xchg_error e[7];
  xchg_status got[7] = {
      xchg_row_reader_next(NULL, &row, &len, &e[0]),
      xchg_row_reader_next(r, NULL, &len, &e[1]),
      xchg_row_reader_next(r, &row, NULL, &e[2]),
      xchg_row_reader_next_batch(NULL, 2, rows, lens, &count, &e[3]),
      xchg_row_reader_next_batch(r, 2, NULL, lens, &count, &e[4]),
      xchg_row_reader_next_batch(r, 2, rows, NULL, &count, &e[5]),
      xchg_row_reader_next_batch(r, 2, rows, lens, NULL, &e[6]),
  };
  for (int i = 0; i < 7; i++) {
    char named[64];
    snprintf(named, sizeof named, "%s is NULL", want[i].named);
    TU_CHECK(got[i] == XCHG_EINVAL && strstr(e[i].message, named), "row reader %s with %s NULL: %s",
             want[i].call, want[i].named, e[i].message);
  }
  row = (const uint8_t *)&err;
  TU_CHECK(xchg_row_reader_next(r, &row, &len, &err) == XCHG_OK && row == NULL,
           "the row reader read on to its end after the NULL arguments");
  xchg_row_reader_free(r);
  TU_CHECK(closed == 1, "the row reader's stream was not closed with it");
}

/* The block codecs take bytes as a pointer and a size: NULL with a size
 * above 0 is XCHG_EINVAL naming the pointer, for every codec (zstd and
 * LZ4 would read or write through it); NULL with 0 is an empty buffer. */
static void null_spans(void) {
  static const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};
  for (int i = 0; i < 3; i++) {
    const char *name = xchg_block_codec_name(codecs[i]);
    xchg_error err;
    char dst[5];
    xchg_buf *buf = (xchg_buf *)&err;
    TU_CHECK(xchg_block_decompress(codecs[i], NULL, 5, dst, 5, &err) == XCHG_EINVAL &&
                 !strcmp(err.message, "xchg_block_decompress: src is NULL with a size of 5 bytes"),
             "%s: decompress of a NULL src: %s", name, err.message);
    TU_CHECK(xchg_block_decompress(codecs[i], "abcde", 5, NULL, 5, &err) == XCHG_EINVAL &&
                 !strcmp(err.message, "xchg_block_decompress: dst is NULL with a size of 5 bytes"),
             "%s: decompress into a NULL dst: %s", name, err.message);
    TU_CHECK(xchg_block_check_size(codecs[i], NULL, 20, 5, &err) == XCHG_EINVAL &&
                 !strcmp(err.message, "xchg_block_check_size: src is NULL with a size of 20 bytes"),
             "%s: check_size of a NULL src: %s", name, err.message);
    TU_CHECK(xchg_block_compress(codecs[i], 0, NULL, 5, &buf, &err) == XCHG_EINVAL && buf == NULL &&
                 !strcmp(err.message, "xchg_block_compress: src is NULL with a size of 5 bytes"),
             "%s: compress of a NULL src: %s", name, err.message);
    TU_OK(xchg_block_check_size(codecs[i], NULL, 0, 0, &err), err);
    if (TU_OK(xchg_block_compress(codecs[i], 0, NULL, 0, &buf, &err), err)) {
      TU_OK(xchg_block_decompress(codecs[i], xchg_buf_data(buf), xchg_buf_size(buf), NULL, 0, &err),
            err);
      xchg_buf_unref(buf);
    }
  }
  xchg_error err;
  TU_OK(xchg_block_decompress(XCHG_BLOCK_NONE, NULL, 0, NULL, 0, &err), err);
}

/* A writer's status calls take a NULL writer, batch or stream as
 * XCHG_EINVAL, with or without coalescing; the writer goes on. */
static void writer_arguments(void) {
  xchg_error err;
  TU_CHECK(xchg_ipc_writer_write(NULL, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "the writer is NULL"),
           "xchg_ipc_writer_write: %s", err.message);
  TU_CHECK(xchg_ipc_writer_write_stream(NULL, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "the writer is NULL"),
           "xchg_ipc_writer_write_stream: %s", err.message);
  TU_CHECK(xchg_ipc_writer_finish(NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "the writer is NULL"),
           "xchg_ipc_writer_finish: %s", err.message);
  TU_CHECK(xchg_ipc_writer_set_message_metadata(NULL, NULL, &err) == XCHG_EINVAL &&
               strstr(err.message, "the writer is NULL"),
           "xchg_ipc_writer_set_message_metadata: %s", err.message);
  struct ArrowSchema root;
  tu_fixture_schema(&root, "+s", "", 0, NULL);
  for (int coalesce = 0; coalesce < 2; coalesce++) {
    xchg_ipc_write_options o;
    xchg_ipc_write_options_init(&o);
    o.coalesce_rows = coalesce ? 100 : 0;
    xchg_ipc_writer *w = NULL;
    if (!TU_OK(xchg_ipc_writer_open_memory(&root, &o, &w, &err), err)) return;
    TU_CHECK(xchg_ipc_writer_write(w, NULL, &err) == XCHG_EINVAL, "write of a NULL batch");
    TU_CHECK(xchg_ipc_writer_write_stream(w, NULL, &err) == XCHG_EINVAL &&
                 strstr(err.message, "stream is NULL"),
             "xchg_ipc_writer_write_stream of a NULL stream: %s", err.message);
    TU_OK(xchg_ipc_writer_finish(w, &err), err);
    xchg_ipc_writer_free(w);
  }
  root.release(&root);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"null_destructors", null_destructors},
                                  {"null_options", null_options},
                                  {"null_handles", null_handles},
                                  {"failed_constructors", failed_constructors},
                                  {"null_outs", null_outs},
                                  {"row_reader_reads", row_reader_reads},
                                  {"null_spans", null_spans},
                                  {"writer_arguments", writer_arguments},
                                  {"writer_schemas", writer_schemas}};
  return TU_MAIN(argc, argv, "null_args", cases);
}
