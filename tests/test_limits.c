/* tests/test_limits.c — resource caps: a tiny hostile input cannot make the
 * library allocate gigabytes, and hitting a cap is a clear XCHG_ELIMIT.
 *
 * Each cap of xchg_read_options (max_depth, max_fields, max_buffer_bytes,
 * max_metadata_bytes), of xchg_stream_options (max_block_size) and of the
 * row reader (max_row_size) is hit twice where that can be done: by a
 * few-byte input that claims a huge size, under the default caps, and by a
 * real gold file read with the cap lowered below what it needs (with the
 * default cap the same file decodes, so it is the cap that refused it).
 * The message must name the cap or the size at fault. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/rows.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"

static int passed, failed;

#define CHECK(cond, ...)                          \
  do {                                            \
    if (cond) {                                   \
      passed++;                                   \
    } else {                                      \
      failed++;                                   \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

static int64_t inputs, errors;

static uint8_t *read_whole(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* Reads a whole IPC input; returns the first error (or XCHG_OK). */
static xchg_status read_ipc(const uint8_t *data, size_t size, const xchg_read_options *opts,
                            xchg_error *err) {
  int64_t live = xchg_buf_live_count();
  xchg_ipc_reader *r = NULL;
  xchg_status st = xchg_ipc_reader_open_memory(data, size, NULL, NULL, opts, &r, err);
  while (st == XCHG_OK) {
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, err);
    if (st != XCHG_OK || a.release == NULL) break;
    a.release(&a);
  }
  xchg_ipc_reader_close(r);
  CHECK(xchg_buf_live_count() == live, "%" PRId64 " buffers leaked", xchg_buf_live_count() - live);
  inputs++;
  errors += st != XCHG_OK;
  return st;
}

/* st must be XCHG_ELIMIT with a message containing `names`. */
static void expect_limit(const char *what, xchg_status st, const xchg_error *err, const char *names) {
  CHECK(st == XCHG_ELIMIT, "%s: %s (\"%s\"), expected a limit error", what, xchg_status_name(st),
        st == XCHG_OK ? "" : err->message);
  if (st == XCHG_ELIMIT)
    CHECK(strstr(err->message, names) != NULL, "%s: the message \"%s\" does not name \"%s\"", what,
          err->message, names);
}

/* ---- IPC caps, lowered under a gold file --------------------------------- */

typedef struct gold_case {
  const char *file;
  const char *cap_name; /* as the message must name it */
  void (*lower)(xchg_read_options *opts);
} gold_case;

static void lower_depth(xchg_read_options *o) { o->max_depth = 1; }
static void lower_fields(xchg_read_options *o) { o->max_fields = 3; }
static void lower_buffer(xchg_read_options *o) { o->max_buffer_bytes = 8; }
static void lower_metadata(xchg_read_options *o) { o->max_metadata_bytes = 64; }

static void lowered_caps(const char *gold_dir) {
  static const gold_case cases[] = {
      {"1.0.0-littleendian/generated_nested.stream", "max_depth", lower_depth},
      {"1.0.0-littleendian/generated_primitive.stream", "max_fields", lower_fields},
      {"2.0.0-compression/generated_lz4.stream", "max_buffer_bytes", lower_buffer},
      {"2.0.0-compression/generated_zstd.arrow_file", "max_buffer_bytes", lower_buffer},
      {"1.0.0-littleendian/generated_primitive.arrow_file", "max_metadata_bytes", lower_metadata},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", gold_dir, cases[i].file);
    size_t size;
    uint8_t *data = read_whole(path, &size);
    CHECK(data != NULL, "cannot read %s", path);
    if (data == NULL) continue;
    xchg_read_options opts;
    xchg_read_options_init(&opts);
    xchg_error err;
    xchg_status st = read_ipc(data, size, &opts, &err);
    CHECK(st == XCHG_OK, "%s with the default caps: %s", cases[i].file, err.message);
    cases[i].lower(&opts);
    char what[512];
    snprintf(what, sizeof what, "%s with %s lowered", cases[i].file, cases[i].cap_name);
    expect_limit(what, read_ipc(data, size, &opts, &err), &err, cases[i].cap_name);
    free(data);
  }
}

/* ---- IPC caps under the defaults, tiny hostile inputs -------------------- */

/* A stream whose first message claims 2 GiB - 1 of metadata: refused
 * before anything that size is allocated or read. */
static void huge_metadata(void) {
  static const uint8_t stream[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  xchg_error err;
  expect_limit("8-byte stream claiming 2 GiB of metadata", read_ipc(stream, sizeof stream, NULL, &err),
               &err, "max_metadata_bytes");
}

typedef struct body_finder {
  int64_t body_start; /* of the first record batch with a body */
} body_finder;

static void find_body(void *ctx, const xchg_message_info *info) {
  body_finder *f = ctx;
  if (info->kind == XCHG_MESSAGE_RECORD_BATCH && info->body_bytes >= 8 && f->body_start < 0)
    f->body_start = info->offset + 8 + info->metadata_bytes;
}

/* A compressed buffer whose 8-byte length prefix claims 1 TiB: refused by
 * the default max_buffer_bytes before the allocation. */
static void huge_buffer(const char *gold_dir) {
  char path[2048];
  snprintf(path, sizeof path, "%s/2.0.0-compression/generated_lz4.stream", gold_dir);
  size_t size;
  uint8_t *data = read_whole(path, &size);
  CHECK(data != NULL, "cannot read %s", path);
  if (data == NULL) return;
  body_finder f = {-1};
  xchg_read_options opts;
  xchg_read_options_init(&opts);
  opts.on_message = find_body;
  opts.on_message_ctx = &f;
  xchg_error err;
  CHECK(read_ipc(data, size, &opts, &err) == XCHG_OK, "%s: %s", path, err.message);
  CHECK(f.body_start > 0 && (size_t)f.body_start + 8 <= size, "%s: no record batch body found", path);
  if (f.body_start > 0 && (size_t)f.body_start + 8 <= size) {
    uint64_t claim = (uint64_t)1 << 40;
    for (int k = 0; k < 8; k++) data[f.body_start + k] = (uint8_t)(claim >> (8 * k));
    expect_limit("compressed buffer claiming 1 TiB", read_ipc(data, size, NULL, &err), &err,
                 "max_buffer_bytes");
  }
  free(data);
}

/* ---- stream codec and row caps ------------------------------------------------ */

static xchg_status read_stream(const uint8_t *data, size_t size, xchg_stream_codec codec,
                               const xchg_stream_options *opts, xchg_error *err) {
  int64_t live = xchg_buf_live_count();
  xchg_source *src = xchg_source_from_memory(data, size, NULL, NULL);
  xchg_istream *s = NULL;
  xchg_status st = xchg_istream_open(src, codec, opts, &s, err);
  for (;;) {
    const void *p;
    size_t n = 0;
    if (st == XCHG_OK) st = xchg_istream_next(s, &p, &n, err);
    if (st != XCHG_OK || n == 0) break;
  }
  xchg_istream_close(s);
  CHECK(xchg_buf_live_count() == live, "%" PRId64 " buffers leaked", xchg_buf_live_count() - live);
  inputs++;
  errors += st != XCHG_OK;
  return st;
}

/* Blocks of 1 KiB read with max_block_size 512. */
static void block_caps(void) {
  /* The block formats; the snappy framing format's chunks are at most
   * 64 KiB by its spec, and LZ4 frames' blocks 4 MiB. */
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_JAVA, XCHG_STREAM_SNAPPY_JAVA};
  uint8_t payload[4096];
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i % 13);
  for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
    xchg_stream_encode_options eo;
    xchg_stream_encode_options_init(&eo);
    eo.block_size = 1024;
    xchg_buf *enc = NULL;
    xchg_error err;
    xchg_status st = xchg_stream_encode(codecs[c], &eo, payload, sizeof payload, &enc, &err);
    CHECK(st == XCHG_OK, "encode: %s", err.message);
    if (st != XCHG_OK) continue;
    xchg_stream_options opts;
    xchg_stream_options_init(&opts);
    st = read_stream(xchg_buf_data(enc), xchg_buf_size(enc), codecs[c], &opts, &err);
    CHECK(st == XCHG_OK, "%s with the default caps: %s", xchg_stream_codec_name(codecs[c]), err.message);
    opts.max_block_size = 512;
    char what[128];
    snprintf(what, sizeof what, "%s, 1 KiB blocks, max_block_size 512",
             xchg_stream_codec_name(codecs[c]));
    st = read_stream(xchg_buf_data(enc), xchg_buf_size(enc), codecs[c], &opts, &err);
    expect_limit(what, st, &err, "512");
    xchg_buf_unref(enc);
  }
}

static xchg_status read_rows(const uint8_t *data, size_t size, size_t max_row, xchg_error *err) {
  xchg_source *src = xchg_source_from_memory(data, size, NULL, NULL);
  xchg_istream *s = NULL;
  xchg_row_reader *r = NULL;
  xchg_status st = xchg_istream_open(src, XCHG_STREAM_NONE, NULL, &s, err);
  if (st == XCHG_OK) st = xchg_row_reader_open(s, max_row, &r, err);
  while (st == XCHG_OK) {
    const uint8_t *row;
    uint32_t len;
    st = xchg_row_reader_next(r, &row, &len, err);
    if (row == NULL) break;
  }
  xchg_row_reader_close(r);
  inputs++;
  errors += st != XCHG_OK;
  return st;
}

static void row_caps(void) {
  /* A row of 4 GiB - 1 bytes claimed by 8 bytes of input. */
  static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};
  xchg_error err;
  expect_limit("8 bytes claiming a 4 GiB row", read_rows(huge, sizeof huge, 0, &err), &err, "limit");
  /* Rows of 10 and 11 bytes under a 10-byte cap: the first passes. */
  uint8_t rows[4 + 10 + 4 + 11] = {10};
  rows[14] = 11;
  CHECK(read_rows(rows, 14, 10, &err) == XCHG_OK, "a 10-byte row under a 10-byte cap: %s", err.message);
  expect_limit("an 11-byte row under a 10-byte cap", read_rows(rows, sizeof rows, 10, &err), &err,
               "limit");
}

int main(int argc, char **argv) {
  const char *base = argc > 1 ? argv[1] : getenv("XCHG_TESTDATA");
  if (base == NULL) {
    fprintf(stderr, "usage: test_limits [TESTDATA_DIR] (or set XCHG_TESTDATA)\n");
    return 2;
  }
  char gold_dir[512];
  snprintf(gold_dir, sizeof gold_dir, "%s/arrow-gold", base);
  lowered_caps(gold_dir);
  huge_metadata();
  huge_buffer(gold_dir);
  block_caps();
  row_caps();
  printf("limits: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0\n", inputs, errors);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
