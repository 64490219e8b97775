/* tests/test_limits.c — resource caps: a tiny hostile input cannot make the
 * library allocate gigabytes, and hitting a cap is a clear XCHG_ELIMIT.
 *
 * Each cap of xchg_ipc_read_options (max_depth, max_fields, max_buffer_bytes,
 * max_metadata_bytes, max_batch_bytes, max_dictionary_bytes), of
 * xchg_istream_options (max_block_size) and of the row reader (max_row_size)
 * is hit twice where that can be done: by a few-byte input that claims a
 * huge size, under the default caps, and by a real gold file read with the
 * cap lowered below what it needs (with the default cap the same file
 * decodes, so it is the cap that refused it).  The size caps are also set
 * exactly to what a file needs, which must pass, and one byte below, which
 * must not.  The message must name the cap or the size at fault.
 *
 * A compressed buffer's claim must also be one its compressed bytes can
 * produce (xchg_block_check_size): the bound is checked against the worst
 * case each codec really reaches, and implausible claims are refused
 * before anything is allocated.  The cache passes its read options on. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/encoded.h"
#include "support/cache_data.h"
#include "support/roundtrip.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/cache.h"
#include "xchg/rows.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

static int64_t inputs, errors;

/* Reads a whole IPC input; returns the first error (or XCHG_OK). */
static xchg_status read_ipc(const uint8_t *data, size_t size, const xchg_ipc_read_options *opts,
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
  xchg_ipc_reader_free(r);
  TU_CHECK(xchg_buf_live_count() == live, "%" PRId64 " buffers leaked",
           xchg_buf_live_count() - live);
  inputs++;
  errors += st != XCHG_OK;
  return st;
}

/* st must be `want` with a message containing each of the strings of
 * `names` (NULL-terminated). */
static void expect_error(const char *what, xchg_status st, const xchg_error *err, xchg_status want,
                         const char *const *names) {
  TU_CHECK(st == want, "%s: %s (\"%s\"), expected %s", what, xchg_status_name(st),
           st == XCHG_OK ? "" : err->message, xchg_status_name(want));
  for (int i = 0; st == want && names[i] != NULL; i++)
    TU_CHECK(strstr(err->message, names[i]) != NULL, "%s: the message \"%s\" does not name \"%s\"",
             what, err->message, names[i]);
}

/* st must be XCHG_ELIMIT with a message containing `names`. */
static void expect_limit(const char *what, xchg_status st, const xchg_error *err,
                         const char *names) {
  TU_CHECK(st == XCHG_ELIMIT, "%s: %s (\"%s\"), expected a limit error", what, xchg_status_name(st),
           st == XCHG_OK ? "" : err->message);
  if (st == XCHG_ELIMIT)
    TU_CHECK(strstr(err->message, names) != NULL, "%s: the message \"%s\" does not name \"%s\"",
             what, err->message, names);
}

/* ---- IPC caps, lowered under a gold file --------------------------------- */

typedef struct gold_case {
  const char *file;
  const char *cap_name; /* as the message must name it */
  void (*lower)(xchg_ipc_read_options *opts);
} gold_case;

static void lower_depth(xchg_ipc_read_options *o) { o->max_depth = 1; }
static void no_depth(xchg_ipc_read_options *o) { o->max_depth = 0; }
static void lower_fields(xchg_ipc_read_options *o) { o->max_fields = 3; }
static void lower_buffer(xchg_ipc_read_options *o) { o->max_buffer_bytes = 8; }
static void lower_metadata(xchg_ipc_read_options *o) { o->max_metadata_bytes = 64; }

/* The gold file gold_dir/name, or NULL (a failed check) when it cannot be
 * read. */
static uint8_t *load_gold(const char *gold_dir, const char *name, size_t *size) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", gold_dir, name);
  uint8_t *data = tu_read_file(path, size);
  TU_CHECK(data != NULL, "cannot read %s", path);
  return data;
}

static void lowered_caps(const char *gold_dir) {
  static const gold_case cases[] = {
      {"1.0.0-littleendian/generated_nested.stream", "max_depth", lower_depth},
      {"1.0.0-littleendian/generated_primitive.stream", "max_depth", no_depth},
      {"1.0.0-littleendian/generated_primitive.stream", "max_fields", lower_fields},
      {"2.0.0-compression/generated_lz4.stream", "max_buffer_bytes", lower_buffer},
      {"2.0.0-compression/generated_zstd.arrow_file", "max_buffer_bytes", lower_buffer},
      {"1.0.0-littleendian/generated_primitive.arrow_file", "max_metadata_bytes", lower_metadata},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t size;
    uint8_t *data = load_gold(gold_dir, cases[i].file, &size);
    if (data == NULL) continue;
    xchg_ipc_read_options opts;
    xchg_ipc_read_options_init(&opts);
    xchg_error err;
    xchg_status st = read_ipc(data, size, &opts, &err);
    TU_CHECK(st == XCHG_OK, "%s with the default caps: %s", cases[i].file, err.message);
    cases[i].lower(&opts);
    char what[512];
    snprintf(what, sizeof what, "%s with %s lowered", cases[i].file, cases[i].cap_name);
    expect_limit(what, read_ipc(data, size, &opts, &err), &err, cases[i].cap_name);
    /* A top-level field is named by its index, never as the empty path. */
    TU_CHECK(!strstr(err.message, "field ''"), "%s: \"%s\" names field ''", what, err.message);
    free(data);
  }
}

/* ---- IPC caps under the defaults, tiny hostile inputs -------------------- */

/* A stream whose first message claims 2 GiB - 1 of metadata: refused
 * before anything that size is allocated or read. */
static void huge_metadata(void) {
  static const uint8_t stream[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  xchg_error err;
  expect_limit("8-byte stream claiming 2 GiB of metadata",
               read_ipc(stream, sizeof stream, NULL, &err), &err, "max_metadata_bytes");
}

/* A source that is not memory, which notes the most bytes xchg holds in
 * buffers whenever it is read. */
typedef struct watched_input {
  const uint8_t *data;
  size_t size, pos;
  int64_t most_live;
} watched_input;

static void note_live(watched_input *w) {
  int64_t live = tu_live_bytes();
  if (live > w->most_live) w->most_live = live;
}

static xchg_status watched_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  (void)err;
  watched_input *w = ctx;
  note_live(w);
  size_t k = n < w->size - w->pos ? n : w->size - w->pos;
  memcpy(dst, w->data + w->pos, k);
  w->pos += k;
  *got = k;
  return XCHG_OK;
}

static xchg_status watched_read_at(void *ctx, int64_t offset, void *dst, size_t n,
                                   xchg_error *err) {
  (void)err;
  watched_input *w = ctx;
  note_live(w);
  memcpy(dst, w->data + offset, n);
  return XCHG_OK;
}

/* A 12-byte stream in the pre-0.15 framing (no continuation marker) whose
 * first message claims 255 MiB of metadata, under max_metadata_bytes: from
 * a source of unknown size (a callback) and from one of known size
 * (read_at), the claim is an error naming the framing and the message (an
 * input that is no Arrow stream in either framing), and the reader does
 * not allocate it before the input shows it is there.  The bytes left
 * over from detecting the format once took a path that allocated the
 * claim first (a Comet block of 269 bytes, fuzz_comet, took 0.4 s). */
static void legacy_metadata_claim(void) {
  static const uint8_t stream[] = {0x00, 0x00, 0xf0, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t most = (int64_t)64 << 20; /* the claim is 255 MiB */
  for (int known_size = 0; known_size < 2; known_size++) {
    const char *what = known_size ? "read_at source" : "callback source";
    watched_input w = {stream, sizeof stream, 0, 0};
    int64_t before = tu_live_bytes();
    xchg_source *src = NULL;
    xchg_error err;
    xchg_status st = known_size ? xchg_source_from_read_at((int64_t)sizeof stream, watched_read_at,
                                                           NULL, &w, &src, &err)
                                : xchg_source_from_callback(watched_read, NULL, &w, &src, &err);
    TU_OK(st, err);
    xchg_ipc_reader *r = NULL;
    if (st == XCHG_OK) st = xchg_ipc_reader_open(src, NULL, &r, &err);
    xchg_ipc_reader_free(r);
    const char *names[] = {"pre-0.15", "message 0", "metadata", NULL};
    char title[128];
    snprintf(title, sizeof title, "%s: 12 bytes claiming 255 MiB of metadata", what);
    expect_error(title, st, &err, XCHG_EFORMAT, names);
    TU_CHECK(w.most_live - before < most,
             "%s: the source was read while xchg held %lld bytes for a 12-byte input", what,
             (long long)(w.most_live - before));
  }
}

typedef struct body_finder {
  int64_t body_start; /* of the first record batch with a body */
} body_finder;

static void find_body(void *ctx, const xchg_message_info *info) {
  body_finder *f = ctx;
  if (info->kind == XCHG_MESSAGE_RECORD_BATCH && info->body_bytes >= 8 && f->body_start < 0)
    f->body_start = info->offset + 8 + info->metadata_bytes;
}

/* The byte offset of the first compressed buffer (its length prefix) of
 * the first record batch with a body, or -1. */
static int64_t first_buffer_at(const uint8_t *data, size_t size) {
  body_finder f = {-1};
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.on_message = find_body;
  opts.on_message_ctx = &f;
  xchg_error err;
  TU_CHECK(read_ipc(data, size, &opts, &err) == XCHG_OK, "clean read: %s", err.message);
  return f.body_start > 0 && (size_t)f.body_start + 8 <= size ? f.body_start : -1;
}

/* A compressed buffer whose 8-byte length prefix claims 1 TiB: refused by
 * the default max_buffer_bytes before the allocation. */
static void huge_buffer(const char *gold_dir) {
  const char *path = "2.0.0-compression/generated_lz4.stream";
  size_t size;
  uint8_t *data = load_gold(gold_dir, path, &size);
  if (data == NULL) return;
  int64_t at = first_buffer_at(data, size);
  TU_CHECK(at >= 0, "%s: no record batch body found", path);
  if (at >= 0) {
    xchg_error err;
    uint64_t claim = (uint64_t)1 << 40;
    for (int k = 0; k < 8; k++) data[at + k] = (uint8_t)(claim >> (8 * k));
    expect_limit("compressed buffer claiming 1 TiB", read_ipc(data, size, NULL, &err), &err,
                 "max_buffer_bytes");
  }
  free(data);
}

/* ---- max_buffer_bytes and max_batch_bytes, exactly at what a file needs --- */

typedef struct tally {
  int64_t bytes; /* decompressed since the last reset */
  int64_t largest_buffer;
} tally;

static void count_decompressed(void *ctx, xchg_block_codec codec, const void *src, size_t src_size,
                               size_t dst_size) {
  tally *t = ctx;
  (void)codec;
  (void)src;
  (void)src_size;
  t->bytes += (int64_t)dst_size;
  if ((int64_t)dst_size > t->largest_buffer) t->largest_buffer = (int64_t)dst_size;
}

/* The decompressed bytes of the largest batch and of the largest buffer of
 * a file without dictionaries, batch by batch through random access; -1
 * when the file cannot be read. */
static int64_t measure_file(const uint8_t *data, size_t size, int64_t *largest_buffer) {
  xchg_error err;
  xchg_ipc_reader *r = NULL;
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, NULL, &r, &err) != XCHG_OK) return -1;
  tally t = {0, 0};
  xchg_ipc_reader_on_decompress(r, count_decompressed, &t);
  int64_t largest_batch = 0;
  for (int64_t i = 0; i < xchg_ipc_reader_num_batches(r); i++) {
    struct ArrowArray a;
    t.bytes = 0;
    if (xchg_ipc_reader_read_batch(r, i, &a, &err) != XCHG_OK) {
      xchg_ipc_reader_free(r);
      return -1;
    }
    a.release(&a);
    if (t.bytes > largest_batch) largest_batch = t.bytes;
  }
  xchg_ipc_reader_free(r);
  *largest_buffer = t.largest_buffer;
  return largest_batch;
}

/* Reads data with one cap set to `cap`, which must pass, then to cap - 1,
 * which must be refused naming the cap. */
static void cap_at_need(const char *file, const uint8_t *data, size_t size, const char *cap_name,
                        int64_t *field, xchg_ipc_read_options *opts, int64_t need) {
  char what[512];
  xchg_error err;
  *field = need;
  xchg_status st = read_ipc(data, size, opts, &err);
  TU_CHECK(st == XCHG_OK, "%s with %s = %lld, what it needs: %s", file, cap_name, (long long)need,
           st == XCHG_OK ? "" : err.message);
  *field = need - 1;
  snprintf(what, sizeof what, "%s with %s = %lld, one byte less than it needs", file, cap_name,
           (long long)need - 1);
  expect_limit(what, read_ipc(data, size, opts, &err), &err, cap_name);
}

static void caps_at_need(const char *gold_dir) {
  static const char *const files[] = {"2.0.0-compression/generated_lz4.arrow_file",
                                      "2.0.0-compression/generated_zstd.arrow_file"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    size_t size;
    uint8_t *data = load_gold(gold_dir, files[i], &size);
    if (data == NULL) continue;
    int64_t largest_buffer = 0, largest_batch = measure_file(data, size, &largest_buffer);
    TU_CHECK(
        largest_batch > largest_buffer && largest_buffer > 0,
        "%s: batches of %lld bytes, buffers of %lld: expected several compressed buffers a batch",
        files[i], (long long)largest_batch, (long long)largest_buffer);
    if (largest_batch > largest_buffer && largest_buffer > 0) {
      xchg_ipc_read_options opts;
      xchg_ipc_read_options_init(&opts);
      cap_at_need(files[i], data, size, "max_batch_bytes", &opts.max_batch_bytes, &opts,
                  largest_batch);
      xchg_ipc_read_options_init(&opts);
      cap_at_need(files[i], data, size, "max_buffer_bytes", &opts.max_buffer_bytes, &opts,
                  largest_buffer);
    }
    free(data);
  }
}

/* ---- implausible claims ------------------------------------------------------ */

/* Sets the length prefix at `at` to claim; returns the one it replaces. */
static uint64_t set_claim(uint8_t *data, int64_t at, uint64_t claim) {
  uint64_t old = 0;
  for (int k = 0; k < 8; k++) {
    old |= (uint64_t)data[at + k] << (8 * k);
    data[at + k] = (uint8_t)(claim >> (8 * k));
  }
  return old;
}

/* data (one chunk, not encoded) acquired once from a new cache with opts
 * (NULL: the defaults), then released with the cache: the status of the
 * acquire.  The cache's creation counts as a check. */
static xchg_status acquire_once(const uint8_t *data, size_t size, const xchg_cache_options *opts,
                                xchg_error *err) {
  xchg_cache *cache = cd_cache_create(opts);
  xchg_chunk chunk = {data, size};
  xchg_broadcast_part part = {&chunk, 1, XCHG_STREAM_NONE};
  xchg_broadcast b = {&part, 1, NULL, NULL};
  xchg_cache_holder *h = NULL;
  xchg_status st = xchg_cache_acquire(cache, "k", &b, NULL, &h, err);
  xchg_cache_holder_release(h);
  xchg_cache_free(cache);
  return st;
}

static void implausible_claims(const char *gold_dir) {
  size_t size;
  for (int codec = 0; codec < 2; codec++) {
    const char *file = codec == 0 ? "generated_lz4.stream" : "generated_zstd.stream";
    char name[128];
    snprintf(name, sizeof name, "2.0.0-compression/%s", file);
    uint8_t *data = load_gold(gold_dir, name, &size);
    if (data == NULL) continue;
    int64_t at = first_buffer_at(data, size);
    uint64_t was = at > 0 ? set_claim(data, at, (uint64_t)1 << 30) : 0;
    TU_CHECK(at > 0 && was > 0 && was < 1 << 30, "%s: no compressed buffer found (length %llu)",
             file, (unsigned long long)was);
    if (at <= 0 || was == 0 || was >= 1 << 30) {
      free(data);
      continue;
    }
    char byte[64], what[256];
    snprintf(byte, sizeof byte, "at byte %lld", (long long)at);
    /* 1 GiB, under the default caps: refused as implausible, naming where. */
    const char *names[] = {"implausible", "1073741824", "message 1", "buffer ", byte, NULL};
    xchg_error err;
    snprintf(what, sizeof what, "%s claiming 1 GiB from a few bytes", file);
    expect_error(what, read_ipc(data, size, NULL, &err), &err, XCHG_EFORMAT, names);
    /* The cache refuses it too, under its default options. */
    snprintf(what, sizeof what, "%s claiming 1 GiB, through the cache", file);
    expect_error(what, acquire_once(data, size, NULL, &err), &err, XCHG_EFORMAT, names);
    /* 2^60 with the caps out of the way: refused before the allocation,
     * which could not succeed (XCHG_ENOMEM, or an ASan report). */
    xchg_ipc_read_options opts;
    xchg_ipc_read_options_init(&opts);
    opts.max_buffer_bytes = opts.max_batch_bytes = INT64_MAX;
    set_claim(data, at, (uint64_t)1 << 60);
    const char *names_huge[] = {"implausible", "1152921504606846976", NULL};
    snprintf(what, sizeof what, "%s claiming 2^60 bytes, no caps", file);
    expect_error(what, read_ipc(data, size, &opts, &err), &err, XCHG_EFORMAT, names_huge);
    /* zstd: Arrow's writers state the content size in the frame header,
     * and a claim one byte off it is refused. */
    if (codec == 1) {
      set_claim(data, at, was + 1);
      const char *names_zstd[] = {"zstd frame headers", byte, NULL};
      snprintf(what, sizeof what, "%s claiming one byte more than its zstd frame states", file);
      expect_error(what, read_ipc(data, size, NULL, &err), &err, XCHG_EFORMAT, names_zstd);
    }
    set_claim(data, at, was);
    TU_CHECK(read_ipc(data, size, NULL, &err) == XCHG_OK, "%s restored: %s", file, err.message);
    free(data);
  }
}

/* A zstd frame of n RLE blocks of 128 KiB each: 6 + 4n bytes for n x 128
 * KiB, the most zstd can expand. */
static size_t zstd_rle_frame(uint8_t *out, int n) {
  static const uint8_t header[] = {0x28, 0xb5, 0x2f, 0xfd, /* magic */
                                   0x00,                   /* no content size, no checksum */
                                   0x38};                  /* window 2^17 */
  memcpy(out, header, sizeof header);
  size_t at = sizeof header;
  for (int i = 0; i < n; i++) {
    uint32_t block = (131072u << 3) | (1u << 1) | (i == n - 1); /* size, RLE, last */
    out[at++] = (uint8_t)block;
    out[at++] = (uint8_t)(block >> 8);
    out[at++] = (uint8_t)(block >> 16);
    out[at++] = 'z';
  }
  return at;
}

/* The bound holds at each codec's worst case: real data at the highest
 * ratio each reaches passes, and one byte more than the bound fails. */
static void bounds_hold(void) {
  enum { RLE_BLOCKS = 64 };
  static uint8_t frame[6 + 4 * RLE_BLOCKS];
  size_t frame_size = zstd_rle_frame(frame, RLE_BLOCKS);
  size_t out_size = (size_t)RLE_BLOCKS << 17;
  uint8_t *out = malloc(out_size);
  xchg_error err;
  TU_CHECK(out != NULL && xchg_block_decompress(XCHG_BLOCK_ZSTD, frame, frame_size, out, out_size,
                                                &err) == XCHG_OK,
           "the RLE frame does not decompress to %zu bytes: %s", out_size,
           out ? err.message : "no memory");
  TU_CHECK(xchg_block_check_size(XCHG_BLOCK_ZSTD, frame, frame_size, out_size, &err) == XCHG_OK,
           "zstd RLE blocks (ratio %.0f) refused: %s", (double)out_size / frame_size, err.message);
  uint64_t most = xchg_block_max_decompressed_size(XCHG_BLOCK_ZSTD, frame_size);
  printf("bounds: zstd RLE blocks expand %.0fx, bound %.0fx\n", (double)out_size / frame_size,
         (double)most / frame_size);
  TU_CHECK(xchg_block_check_size(XCHG_BLOCK_ZSTD, frame, frame_size, (size_t)most + 1, &err) ==
               XCHG_EFORMAT,
           "zstd: one byte over the bound %llu accepted", (unsigned long long)most);
  free(out);

  /* Zeros, at the codecs' best ratio, with their real compressors. */
  size_t zeros_size = (size_t)64 << 20;
  uint8_t *zeros = calloc(1, zeros_size);
  TU_CHECK(zeros != NULL, "no memory for %zu zeros", zeros_size);
  for (int c = 0; zeros != NULL && c < 2; c++) {
    xchg_block_codec codec = c == 0 ? XCHG_BLOCK_LZ4_FRAME : XCHG_BLOCK_ZSTD;
    xchg_buf *z = NULL;
    TU_CHECK(xchg_block_compress(codec, 0, zeros, zeros_size, &z, &err) == XCHG_OK, "compress: %s",
             err.message);
    if (z == NULL) continue;
    size_t n = xchg_buf_size(z);
    TU_CHECK(xchg_block_check_size(codec, xchg_buf_data(z), n, zeros_size, &err) == XCHG_OK,
             "%s: 64 MiB of zeros in %zu bytes (ratio %.0f) refused: %s",
             xchg_block_codec_name(codec), n, (double)zeros_size / n, err.message);
    printf("bounds: %s compresses 64 MiB of zeros %.0fx, bound %.0fx\n",
           xchg_block_codec_name(codec), (double)zeros_size / n,
           (double)xchg_block_max_decompressed_size(codec, n) / n);
    /* zstd states the content size, which must match to the byte. */
    if (codec == XCHG_BLOCK_ZSTD)
      TU_CHECK(
          xchg_block_check_size(codec, xchg_buf_data(z), n, zeros_size - 1, &err) == XCHG_EFORMAT,
          "zstd: a claim one byte below the frame's content size accepted");
    xchg_buf_unref(z);
  }
  free(zeros);
}

/* ---- the cache passes its read options on ------------------------------------ */

static xchg_status read_cached(const uint8_t *data, size_t size, const xchg_cache_options *opts,
                               xchg_error *err) {
  int64_t live = xchg_buf_live_count();
  xchg_status st = acquire_once(data, size, opts, err);
  TU_CHECK(xchg_buf_live_count() == live, "%" PRId64 " buffers leaked",
           xchg_buf_live_count() - live);
  inputs++;
  errors += st != XCHG_OK;
  return st;
}

static void cache_caps(const char *gold_dir) {
  size_t size;
  uint8_t *data = load_gold(gold_dir, "2.0.0-compression/generated_lz4.stream", &size);
  if (data == NULL) return;
  xchg_cache_options opts;
  xchg_cache_options_init(&opts);
  xchg_error err;
  TU_CHECK(read_cached(data, size, &opts, &err) == XCHG_OK, "cache, default caps: %s", err.message);
  opts.read.max_buffer_bytes = 8;
  expect_limit("cache with read.max_buffer_bytes 8", read_cached(data, size, &opts, &err), &err,
               "max_buffer_bytes");
  xchg_cache_options_init(&opts);
  opts.read.max_batch_bytes = 8;
  expect_limit("cache with read.max_batch_bytes 8", read_cached(data, size, &opts, &err), &err,
               "max_batch_bytes");
  /* The cache's own fields still choose validation and the pool. */
  xchg_cache_options_init(&opts);
  TU_CHECK(xchg_pool_create(2, &opts.read.pool, NULL) == XCHG_OK, "cannot create a pool");
  opts.read.task_bytes = 1;
  TU_CHECK(read_cached(data, size, &opts, &err) == XCHG_OK, "cache on a pool: %s", err.message);
  xchg_pool_free(opts.read.pool);
  free(data);
}

/* ---- options no reader can follow ---------------------------------------------- */

/* A negative cap (or task_bytes), refused by every open that takes read
 * options, naming it and its value; 0 stays a cap (no_depth above). */
static void negative_caps(const uint8_t *data, size_t size) {
  static const char *const names[] = {
      "max_depth",       "max_fields",           "max_buffer_bytes", "max_metadata_bytes",
      "max_batch_bytes", "max_dictionary_bytes", "task_bytes"};
  for (int f = 0; f < 7; f++) {
    xchg_ipc_read_options read;
    xchg_ipc_read_options_init(&read);
    int64_t *field[] = {&read.max_depth,          &read.max_fields,      &read.max_buffer_bytes,
                        &read.max_metadata_bytes, &read.max_batch_bytes, &read.max_dictionary_bytes,
                        &read.task_bytes};
    *field[f] = -1;
    char phrase[64];
    snprintf(phrase, sizeof phrase, "%s is negative (-1)", names[f]);
    const char *const want[] = {phrase, NULL};
    xchg_error err;
    xchg_ipc_reader *r = NULL;
    expect_error(names[f], xchg_ipc_reader_open_memory(data, size, NULL, NULL, &read, &r, &err),
                 &err, XCHG_EINVAL, want);
    xchg_ipc_reader_free(r);
    xchg_batch_decoder *dec = NULL;
    expect_error(names[f], xchg_batch_decoder_open(data, size, NULL, 0, &read, &dec, &err), &err,
                 XCHG_EINVAL, want);
    xchg_batch_decoder_free(dec);
    xchg_shuffle_reader_options so;
    xchg_shuffle_reader_options_init(&so);
    so.read = read;
    xchg_shuffle_reader *sr = NULL;
    expect_error(names[f], xchg_shuffle_reader_open(&so, &sr, &err), &err, XCHG_EINVAL, want);
    xchg_shuffle_reader_free(sr);
  }
}

/* A validation level that is neither of the two, refused by every open
 * that takes read options; and the cache's negative budgets and ages and
 * its wait-check interval of 0, each named (they were taken as given, and
 * the interval set to 100 ms). */
static void bad_options(const char *gold_dir) {
  size_t size;
  uint8_t *data = load_gold(gold_dir, "1.0.0-littleendian/generated_primitive.stream", &size);
  if (data == NULL) return;
  static const char *const validation[] = {"validation 5 is neither", NULL};
  xchg_ipc_read_options read;
  xchg_ipc_read_options_init(&read);
  read.validation = (xchg_validation)5;
  xchg_error err;
  xchg_ipc_reader *r = NULL;
  expect_error("IPC reader", xchg_ipc_reader_open_memory(data, size, NULL, NULL, &read, &r, &err),
               &err, XCHG_EINVAL, validation);
  xchg_ipc_reader_free(r);
  xchg_batch_decoder *dec = NULL;
  expect_error("batch decoder", xchg_batch_decoder_open(data, size, NULL, 0, &read, &dec, &err),
               &err, XCHG_EINVAL, validation);
  xchg_batch_decoder_free(dec);
  xchg_shuffle_reader_options so;
  xchg_shuffle_reader_options_init(&so);
  so.read = read;
  xchg_shuffle_reader *sr = NULL;
  expect_error("shuffle reader", xchg_shuffle_reader_open(&so, &sr, &err), &err, XCHG_EINVAL,
               validation);
  xchg_shuffle_reader_free(sr);
  xchg_cache_options co;
  xchg_cache_options_init(&co);
  co.read = read;
  xchg_cache *cache = NULL;
  expect_error("cache", xchg_cache_create(&co, &cache, &err), &err, XCHG_EINVAL, validation);
  xchg_cache_free(cache);
  static const char *const fields[] = {"wait_check_ms is not positive", "retain_bytes is negative",
                                       "retain_ms is negative", "host_retain_bytes is negative",
                                       "host_retain_ms is negative"};
  for (int f = 0; f < 5; f++) {
    xchg_cache_options_init(&co);
    int64_t *field[] = {&co.wait_check_ms, &co.retain_bytes, &co.retain_ms, &co.host_retain_bytes,
                        &co.host_retain_ms};
    *field[f] = f == 0 ? 0 : -1;
    const char *const names[] = {fields[f], NULL};
    cache = NULL;
    expect_error(fields[f], xchg_cache_create(&co, &cache, &err), &err, XCHG_EINVAL, names);
    xchg_cache_free(cache);
  }
  TU_CHECK(xchg_cache_create(NULL, &cache, &err) == XCHG_OK, "cache of the defaults: %s",
           err.message);
  xchg_cache_free(cache);
  negative_caps(data, size);
  free(data);
}

/* ---- max_dictionary_bytes ------------------------------------------------------ */

enum { DICT_FIRST = 4096, DICT_DELTA = 1024, DICT_ROWS = 8 };

static void release_static_schema(struct ArrowSchema *s) { (void)s; }
static void release_static_array(struct ArrowArray *a) { (void)a; }

/* A stream of one int32-indexed column over an int32 dictionary: a first
 * batch with DICT_FIRST values, a second whose dictionary extends it by
 * DICT_DELTA (the writer sends a delta), each dictionary batch ZSTD
 * compressed (values i / 16 shrink well). */
static xchg_buf *delta_stream(void) {
  static int32_t values[DICT_FIRST + DICT_DELTA], indices[DICT_ROWS];
  for (int i = 0; i < DICT_FIRST + DICT_DELTA; i++) values[i] = i / 16;
  for (int i = 0; i < DICT_ROWS; i++) indices[i] = i;
  static struct ArrowSchema value = {"i", "", NULL, 0, 0, NULL, NULL, release_static_schema, NULL};
  static struct ArrowSchema col = {
      "i", "c", NULL, ARROW_FLAG_NULLABLE, 0, NULL, &value, release_static_schema, NULL};
  static struct ArrowSchema *cols[1] = {&col};
  static struct ArrowSchema root = {"+s", "", NULL, 0, 1, cols, NULL, release_static_schema, NULL};
  static const void *dict_buffers[2] = {NULL, values}, *col_buffers[2] = {NULL, indices},
                    *root_buffers[1] = {NULL};
  static struct ArrowArray dicts[2], columns[2], *kids[2][1], batches[2];
  for (int b = 0; b < 2; b++) {
    dicts[b] = (struct ArrowArray){b ? DICT_FIRST + DICT_DELTA : DICT_FIRST,
                                   0,
                                   0,
                                   2,
                                   0,
                                   dict_buffers,
                                   NULL,
                                   NULL,
                                   release_static_array,
                                   NULL};
    columns[b] = (struct ArrowArray){
        DICT_ROWS, 0, 0, 2, 0, col_buffers, NULL, &dicts[b], release_static_array, NULL};
    kids[b][0] = &columns[b];
    batches[b] = (struct ArrowArray){
        DICT_ROWS, 0, 0, 1, 1, root_buffers, kids[b], NULL, release_static_array, NULL};
  }
  xchg_ipc_write_options wo;
  xchg_ipc_write_options_init(&wo);
  wo.codec = XCHG_BLOCK_ZSTD;
  xchg_buf *out = NULL;
  char msg[512];
  TU_CHECK(rt_write(&root, batches, 2, &wo, &out, msg, sizeof msg) == 0,
           "writing the delta stream: %s", msg);
  return out;
}

typedef struct dict_census {
  int64_t dictionaries, deltas;
} dict_census;

static void count_dictionaries(void *ctx, const xchg_message_info *info) {
  dict_census *c = ctx;
  if (info->kind != XCHG_MESSAGE_DICTIONARY) return;
  c->dictionaries++;
  c->deltas += info->is_delta != 0;
}

static void dictionary_caps(void) {
  xchg_buf *stream = delta_stream();
  if (stream == NULL) return;
  const uint8_t *data = xchg_buf_data(stream);
  size_t size = xchg_buf_size(stream);
  const int64_t first = 4 * DICT_FIRST, whole = 4 * (DICT_FIRST + DICT_DELTA);
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  dict_census census = {0, 0};
  opts.on_message = count_dictionaries;
  opts.on_message_ctx = &census;
  xchg_error err;
  TU_CHECK(read_ipc(data, size, &opts, &err) == XCHG_OK, "delta stream, default caps: %s",
           err.message);
  TU_CHECK(census.dictionaries == 2 && census.deltas == 1,
           "the writer sent %lld dictionary batches (%lld deltas), the test needs 2 (1)",
           (long long)census.dictionaries, (long long)census.deltas);
  /* Schema 0, dictionary 1, batch 2, delta 3, batch 4: the delta passes the
   * cap, the first dictionary alone does not. */
  cap_at_need("delta stream", data, size, "max_dictionary_bytes", &opts.max_dictionary_bytes, &opts,
              whole);
  const char *names_delta[] = {"max_dictionary_bytes", "dictionary 0", "message 3", NULL};
  opts.max_dictionary_bytes = whole - 1;
  expect_error("delta passing max_dictionary_bytes", read_ipc(data, size, &opts, &err), &err,
               XCHG_ELIMIT, names_delta);
  const char *names_first[] = {"max_dictionary_bytes", "dictionary 0", "message 1", NULL};
  opts.max_dictionary_bytes = first - 1;
  expect_error("first dictionary over max_dictionary_bytes", read_ipc(data, size, &opts, &err),
               &err, XCHG_ELIMIT, names_first);
  /* Dictionary batches count against max_batch_bytes too: the first is
   * the largest batch. */
  xchg_ipc_read_options_init(&opts);
  cap_at_need("delta stream", data, size, "max_batch_bytes", &opts.max_batch_bytes, &opts, first);
  xchg_buf_unref(stream);
}

/* ---- deltas cannot wrap 32-bit offsets ----------------------------------------- */

enum { HALF = 1 << 30 };

/* The dictionary message `index` of a stream: where its metadata and body
 * are. */
typedef struct message_finder {
  int64_t index, offset, metadata_bytes, body_bytes;
} message_finder;

static void find_message(void *ctx, const xchg_message_info *info) {
  message_finder *f = ctx;
  if (info->index != f->index) return;
  f->offset = info->offset;
  f->metadata_bytes = info->metadata_bytes;
  f->body_bytes = info->body_bytes;
}

/* Replaces every `width`-byte little-endian `from` in [p, p + n) by `to`;
 * returns how many. */
static int replace_le(uint8_t *p, int64_t n, int width, uint64_t from, uint64_t to) {
  int count = 0;
  for (int64_t i = 0; i + width <= n; i++) {
    uint64_t v = 0;
    for (int k = 0; k < width; k++) v |= (uint64_t)p[i + k] << (8 * k);
    if (v != from) continue;
    for (int k = 0; k < width; k++) p[i + k] = (uint8_t)(to >> (8 * k));
    count++;
    i += width - 1;
  }
  return count;
}

/* A dictionary of list<null> values (free to hold, whatever their length)
 * whose delta, patched by one value, takes the concatenated child rows to
 * 2^31, past what int32 list offsets address: refused, where appending
 * would have stored wrapped, negative offsets. */
static void delta_offsets_wrap(void) {
  static struct ArrowSchema item = {
      "n", "item", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_static_schema, NULL};
  static struct ArrowSchema *items[1] = {&item};
  static struct ArrowSchema value = {"+l", "", NULL, 0, 1, items, NULL, release_static_schema,
                                     NULL};
  static struct ArrowSchema col = {
      "i", "c", NULL, ARROW_FLAG_NULLABLE, 0, NULL, &value, release_static_schema, NULL};
  static struct ArrowSchema *cols[1] = {&col};
  static struct ArrowSchema root = {"+s", "", NULL, 0, 1, cols, NULL, release_static_schema, NULL};
  /* Lists of 2^30 and 2^30 - 1 nulls: the second batch's dictionary extends the first. */
  static const int32_t offsets[3] = {0, HALF, 2 * (HALF - 1) + 1};
  static const int32_t indices[1] = {0};
  static const void *list_buffers[2] = {NULL, offsets}, *null_buffers[1] = {NULL},
                    *col_buffers[2] = {NULL, indices}, *root_buffers[1] = {NULL};
  static struct ArrowArray nulls[2], *null_kids[2][1], lists[2], columns[2], *kids[2][1],
      batches[2];
  for (int b = 0; b < 2; b++) {
    nulls[b] =
        (struct ArrowArray){offsets[b + 1], offsets[b + 1],       0,   0, 0, null_buffers, NULL,
                            NULL,           release_static_array, NULL};
    null_kids[b][0] = &nulls[b];
    lists[b] = (struct ArrowArray){
        b + 1, 0, 0, 2, 1, list_buffers, null_kids[b], NULL, release_static_array, NULL};
    columns[b] = (struct ArrowArray){
        1, 0, 0, 2, 0, col_buffers, NULL, &lists[b], release_static_array, NULL};
    kids[b][0] = &columns[b];
    batches[b] =
        (struct ArrowArray){1, 0, 0, 1, 1, root_buffers, kids[b], NULL, release_static_array, NULL};
  }
  xchg_buf *stream = NULL;
  char msg[512];
  TU_CHECK(rt_write(&root, batches, 2, NULL, &stream, msg, sizeof msg) == 0,
           "writing list<null> deltas: %s", msg);
  if (stream == NULL) return;
  size_t size = xchg_buf_size(stream);
  uint8_t *data = malloc(size);
  memcpy(data, xchg_buf_data(stream), size);
  xchg_buf_unref(stream);
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  message_finder f = {3, -1, 0, 0}; /* schema, dictionary, batch, delta */
  opts.on_message = find_message;
  opts.on_message_ctx = &f;
  xchg_error err;
  TU_CHECK(read_ipc(data, size, &opts, &err) == XCHG_OK, "list<null> deltas, as written: %s",
           err.message);
  TU_CHECK(f.offset > 0, "no message 3 in the list<null> delta stream");
  if (f.offset > 0) {
    /* The delta's list of 2^30 - 1 nulls becomes one of 2^30: its child's
     * field node and its last offset. */
    int in_nodes = replace_le(data + f.offset + 8, f.metadata_bytes, 8, HALF - 1, HALF);
    int in_body =
        replace_le(data + f.offset + 8 + f.metadata_bytes, f.body_bytes, 4, HALF - 1, HALF);
    TU_CHECK(in_nodes >= 1 && in_body == 1, "patching the delta: %d field node values, %d offsets",
             in_nodes, in_body);
    const char *names[] = {"32-bit offsets", "message 3", "dictionary 0", NULL};
    expect_error("a delta taking list<null> child rows to 2^31", read_ipc(data, size, NULL, &err),
                 &err, XCHG_EFORMAT, names);
  }
  free(data);
}

/* ---- stream codec and row caps ------------------------------------------------ */

static xchg_status read_stream(const uint8_t *data, size_t size, xchg_stream_codec codec,
                               const xchg_istream_options *opts, xchg_error *err) {
  int64_t live = xchg_buf_live_count();
  xchg_source *src = tu_memory_source(data, size);
  xchg_istream *s = NULL;
  xchg_status st = xchg_istream_open(src, codec, opts, &s, err);
  for (;;) {
    const void *p;
    size_t n = 0;
    if (st == XCHG_OK) st = xchg_istream_next(s, &p, &n, err);
    if (st != XCHG_OK || n == 0) break;
  }
  xchg_istream_free(s);
  TU_CHECK(xchg_buf_live_count() == live, "%" PRId64 " buffers leaked",
           xchg_buf_live_count() - live);
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
    tu_bytes enc = {0};
    if (!tu_append_encoded(&enc, codecs[c], &eo, payload, sizeof payload)) continue;
    xchg_istream_options opts;
    xchg_istream_options_init(&opts);
    xchg_error err;
    xchg_status st = read_stream(enc.data, enc.size, codecs[c], &opts, &err);
    TU_CHECK(st == XCHG_OK, "%s with the default caps: %s", xchg_stream_codec_name(codecs[c]),
             err.message);
    opts.max_block_size = 512;
    char what[128];
    snprintf(what, sizeof what, "%s, 1 KiB blocks, max_block_size 512",
             xchg_stream_codec_name(codecs[c]));
    st = read_stream(enc.data, enc.size, codecs[c], &opts, &err);
    expect_limit(what, st, &err, "512");
    free(enc.data);
  }
}

static xchg_status read_rows(const uint8_t *data, size_t size, size_t max_row, xchg_error *err) {
  xchg_source *src = tu_memory_source(data, size);
  xchg_istream *s = NULL;
  xchg_row_reader *r = NULL;
  xchg_status st = xchg_istream_open(src, XCHG_STREAM_NONE, NULL, &s, err);
  xchg_row_reader_options ro;
  xchg_row_reader_options_init(&ro);
  ro.max_row_size = max_row;
  if (st == XCHG_OK) st = xchg_row_reader_open(s, &ro, &r, err);
  while (st == XCHG_OK) {
    const uint8_t *row;
    size_t len;
    st = xchg_row_reader_next(r, &row, &len, err);
    if (row == NULL) break;
  }
  xchg_row_reader_free(r);
  inputs++;
  errors += st != XCHG_OK;
  return st;
}

static void row_caps(void) {
  /* A row of 4 GiB - 1 bytes claimed by 8 bytes of input. */
  static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};
  xchg_error err;
  expect_limit("8 bytes claiming a 4 GiB row", read_rows(huge, sizeof huge, 0, &err), &err,
               "limit");
  /* Rows of 10 and 11 bytes under a 10-byte cap: the first passes. */
  uint8_t rows[4 + 10 + 4 + 11] = {10};
  rows[14] = 11;
  TU_CHECK(read_rows(rows, 14, 10, &err) == XCHG_OK, "a 10-byte row under a 10-byte cap: %s",
           err.message);
  expect_limit("an 11-byte row under a 10-byte cap", read_rows(rows, sizeof rows, 10, &err), &err,
               "limit");
  TU_CHECK(strstr(err.message,
                  "row 1 at decompressed byte 14: length 11 exceeds the 10-byte row "
                  "limit (max_row_size)") != NULL,
           "the row over the cap is not named with where it begins: %s", err.message);
}

static char gold_dir[512];

static void run_lowered_caps(void) { lowered_caps(gold_dir); }
static void run_huge_buffer(void) { huge_buffer(gold_dir); }
static void run_caps_at_need(void) { caps_at_need(gold_dir); }
static void run_implausible_claims(void) { implausible_claims(gold_dir); }
static void run_cache_caps(void) { cache_caps(gold_dir); }
static void run_bad_options(void) { bad_options(gold_dir); }

int main(int argc, char **argv) {
  tu_testdata_path(gold_dir, sizeof gold_dir, "arrow-gold");
  static const tu_case cases[] = {
      {"lowered_caps", run_lowered_caps},
      {"huge_metadata", huge_metadata},
      {"legacy_metadata_claim", legacy_metadata_claim},
      {"huge_buffer", run_huge_buffer},
      {"caps_at_need", run_caps_at_need},
      {"implausible_claims", run_implausible_claims},
      {"bounds_hold", bounds_hold},
      {"cache_caps", run_cache_caps},
      {"bad_options", run_bad_options},
      {"dictionary_caps", dictionary_caps},
      {"delta_offsets_wrap", delta_offsets_wrap},
      {"block_caps", block_caps},
      {"row_caps", row_caps},
  };
  int rc = TU_MAIN(argc, argv, "limits", cases);
  printf("limits: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0\n", inputs, errors);
  return rc;
}
