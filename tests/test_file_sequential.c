/* tests/test_file_sequential.c — an Arrow IPC file read from an input that
 * cannot seek (a pipe, a callback, a codec stream) must notice a cut or
 * damage after its end-of-stream marker (issue 7).
 *
 * Read in order, a file is its embedded stream, then the footer, its int32
 * length and the closing "ARROW1" (Columnar.rst, "IPC File Format").  The
 * batches come from the stream, so those last bytes are checked only
 * because the reader reads them.  For every Apache Arrow gold .arrow_file:
 *
 *   - read through a callback source in odd chunk sizes, the whole file
 *     gives the batches the seekable reader gives (array_equal);
 *   - every cut from the end-of-stream marker to the last byte is an
 *     XCHG_EIO error;
 *   - a wrong footer length, damaged closing magic, padding between the
 *     marker and the footer (the layout has none), a footer that is not a
 *     flatbuffer, a footer whose schema is another file's, and a footer over
 *     max_metadata_bytes are errors (XCHG_EFORMAT, or XCHG_ELIMIT for the
 *     last);
 *   - bytes after the magic (a zero byte, the length and magic again, the
 *     whole file again) are not the file's: the reader ends at the magic
 *     (xchg_ipc_reader_stream_end) with every batch, and leaves them unread
 *     in the input, byte for byte, for whoever reads on;
 *   - wrapped in an LZ4 frame and in zstd (xchg_stream_encode), read through
 *     xchg_source_from_istream: the whole input decodes the same, and every
 *     cut in the last 100 compressed bytes is an error.
 * And `xchg cat` / `xchg inspect` on a file piped in work, and fail on a cut
 * one.  The end of the gold layout (footer right after the marker) is found
 * from the file's own last 10 bytes, as Arrow's seekable readers find it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/array_equal.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

#define CODEC_TAIL_CUTS 100

/* Inputs read, errors they gave, and errors of the status expected. */
static struct { long inputs, errors, expected_status; } totals;

/* ---- reading ------------------------------------------------------------- */

typedef struct batches {
  struct ArrowSchema schema;
  struct ArrowArray *arrays;
  size_t n;
  xchg_status status;
  char message[XCHG_ERROR_MESSAGE_SIZE];
} batches;

static void batches_free(batches *b) {
  if (b->schema.release) b->schema.release(&b->schema);
  for (size_t i = 0; b->arrays && i < b->n; i++) b->arrays[i].release(&b->arrays[i]);
  free(b->arrays);
  memset(b, 0, sizeof *b);
}

/* Reads every batch from src (taken over; NULL counts as out of memory). */
static batches read_all(xchg_source *src, const xchg_ipc_read_options *opts, int keep) {
  batches b;
  memset(&b, 0, sizeof b);
  xchg_error err = {{0}};
  xchg_ipc_reader *r = NULL;
  b.status = src ? xchg_ipc_reader_open(src, opts, &r, &err) : XCHG_ENOMEM;
  if (b.status == XCHG_OK && keep) b.status = xchg_ipc_reader_schema(r, &b.schema, &err);
  while (b.status == XCHG_OK) {
    struct ArrowArray a;
    b.status = xchg_ipc_reader_next(r, &a, &err);
    if (b.status != XCHG_OK || a.release == NULL) break;
    if (!keep) {
      a.release(&a);
      b.n++;
      continue;
    }
    struct ArrowArray *more = realloc(b.arrays, (b.n + 1) * sizeof *more);
    if (more == NULL) abort();
    b.arrays = more;
    b.arrays[b.n++] = a;
  }
  if (b.status != XCHG_OK) snprintf(b.message, sizeof b.message, "%s", err.message);
  xchg_ipc_reader_free(r);
  return b;
}

/* Reads an input that must fail with `expected`; what names it in a failure. */
static void expect_error(xchg_source *src, const xchg_ipc_read_options *opts, xchg_status expected,
                         const char *what) {
  batches b = read_all(src, opts, 0);
  totals.inputs++;
  totals.errors += b.status != XCHG_OK;
  totals.expected_status += b.status == expected;
  TU_CHECK(b.status == expected, "%s: status %d, expected %d (%zu batches): %s", what, b.status,
           expected, b.n, b.message);
  batches_free(&b);
}

static void expect_same(const batches *want, batches *got, const char *what) {
  totals.inputs++;
  totals.errors += got->status != XCHG_OK;
  if (got->status != XCHG_OK || got->n != want->n) {
    TU_CHECK(0, "%s: status %d, %zu batches (seekable: %zu): %s", what, got->status, got->n,
             want->n, got->message);
    return;
  }
  char msg[512];
  for (size_t i = 0; i < want->n; i++)
    if (array_equal(&want->schema, &want->arrays[i], &got->arrays[i], msg, sizeof msg) != 0) {
      TU_CHECK(0, "%s: batch %zu differs: %s", what, i, msg);
      return;
    }
}

/* ---- the gold file's layout ------------------------------------------------ */

static int32_t load_i32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

static void store_i32(uint8_t *p, int32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)((uint32_t)v >> (8 * i));
}

/* Where the end-of-stream marker starts: 8 bytes before the footer, which
 * the last 10 bytes locate.  0 when the file is not laid out so. */
static size_t eos_offset(const uint8_t *data, size_t size) {
  static const uint8_t eos[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  if (size < 26 || memcmp(data + size - 6, "ARROW1", 6) != 0) return 0;
  int32_t footer_len = load_i32(data + size - 10);
  if (footer_len <= 0 || (size_t)footer_len > size - 26) return 0;
  size_t marker = size - 10 - (size_t)footer_len - 8;
  return memcmp(data + marker, eos, 8) == 0 ? marker : 0;
}

/* ---- one gold file ------------------------------------------------------- */

typedef struct gold_ctx {
  const char *root;
  const char *other_footer_file; /* a file with another schema */
  int files;
} gold_ctx;

static const char *short_name(const char *path, const char *root) {
  size_t n = strlen(root);
  return strncmp(path, root, n) == 0 ? path + n + 1 : path;
}

/* A modified copy of data: bytes [at, at + cut) replaced by add[0, n). */
static tu_bytes spliced(const uint8_t *data, size_t size, size_t at, size_t cut, const void *add,
                        size_t n) {
  tu_bytes b = {0};
  tu_bytes_append(&b, data, at);
  tu_bytes_append(&b, add, n);
  tu_bytes_append(&b, data + at + cut, size - at - cut);
  return b;
}

static void expect_error_in(tu_bytes input, xchg_status expected, const char *name,
                            const char *what) {
  char label[600];
  snprintf(label, sizeof label, "%s: %s", name, what);
  expect_error(tu_unseekable_source(input.data, input.size, input.size), NULL, expected, label);
  free(input.data);
}

/* The file (size bytes of data) followed by tail[0, n), read in order
 * through a codec stream that passes it through: the reader ends at the
 * closing magic with the file's batches, and the stream still holds the
 * whole tail. */
static void expect_end_at_magic(const uint8_t *data, size_t size, const void *tail, size_t n,
                                const char *name, const char *what) {
  tu_bytes input = spliced(data, size, size, 0, tail, n);
  xchg_error err;
  xchg_istream *s = NULL;
  xchg_source *view = NULL;
  xchg_ipc_reader *r = NULL;
  xchg_source *src = tu_unseekable_source(input.data, input.size, 5);
  TU_CHECK(src != NULL && xchg_istream_open(src, XCHG_STREAM_NONE, NULL, &s, &err) == XCHG_OK &&
               xchg_source_from_istream_borrowed(s, &view, &err) == XCHG_OK &&
               xchg_ipc_reader_open(view, NULL, &r, &err) == XCHG_OK,
           "%s: %s: cannot open: %s", name, what, err.message);
  size_t count = 0;
  xchg_status st = XCHG_OK;
  for (struct ArrowArray a;
       r != NULL && (st = xchg_ipc_reader_next(r, &a, &err)) == XCHG_OK && a.release;) {
    a.release(&a);
    count++;
  }
  int64_t end = r != NULL ? xchg_ipc_reader_stream_end(r) : -1;
  xchg_ipc_reader_free(r);
  batches alone = read_all(tu_memory_source(data, size), NULL, 0);
  tu_bytes rest = {0};
  uint8_t buf[4096];
  size_t got = 0;
  while (s != NULL && xchg_istream_read_call(s, buf, sizeof buf, &got, &err) == XCHG_OK && got > 0)
    tu_bytes_append(&rest, buf, got);
  totals.inputs++;
  TU_CHECK(
      st == XCHG_OK && alone.status == XCHG_OK && count == alone.n && end == (int64_t)size &&
          rest.size == n && (n == 0 || memcmp(rest.data, tail, n) == 0),
      "%s: %s: status %d, %zu batches (want %zu), ends at %lld (want %zu), %zu of the %zu bytes after it "
      "left: %s",
      name, what, st, count, alone.n, (long long)end, size, rest.size, n,
      st == XCHG_OK ? "" : err.message);
  batches_free(&alone);
  xchg_istream_free(s);
  free(rest.data);
  free(input.data);
}

/* Damage after the marker, each input a whole one otherwise. */
static void check_damage(const uint8_t *data, size_t size, size_t marker, const char *name,
                         const char *other_footer_file) {
  size_t footer_start = marker + 8, length_at = size - 10;
  int32_t footer_len = (int32_t)(length_at - footer_start);
  uint8_t word[4];
  for (int delta = -1; delta <= 1; delta += 2) {
    store_i32(word, footer_len + delta);
    expect_error_in(spliced(data, size, length_at, 4, word, 4), XCHG_EFORMAT, name,
                    delta < 0 ? "footer length one short" : "footer length one over");
  }
  expect_error_in(spliced(data, size, size - 1, 1, "2", 1), XCHG_EFORMAT, name, "magic ARROW2");
  expect_end_at_magic(data, size, "", 1, name, "a zero byte after the magic");
  expect_end_at_magic(data, size, data + length_at, 10, name, "length and magic twice");
  expect_end_at_magic(data, size, data, size, name, "the file twice");
  static const uint8_t zeros[8] = {0};
  expect_error_in(spliced(data, size, footer_start, 0, zeros, 8), XCHG_EFORMAT, name,
                  "8 bytes of padding before the footer");
  store_i32(word, 0x7ffffff0);
  expect_error_in(spliced(data, size, footer_start, 4, word, 4), XCHG_EFORMAT, name,
                  "footer root offset out of range");

  /* The footer (with its length and magic) of another file. */
  tu_bytes other = tu_read_bytes(other_footer_file);
  size_t other_marker = eos_offset(other.data, other.size);
  if (other_marker == 0) {
    TU_CHECK(0, "the other file's footer: %s", other_footer_file);
  } else if (strcmp(strrchr(name, '/'), strrchr(other_footer_file, '/')) != 0) {
    size_t n = other.size - other_marker - 8;
    expect_error_in(
        spliced(data, size, footer_start, size - footer_start, other.data + other_marker + 8, n),
        XCHG_EFORMAT, name, "another file's footer");
  }
  free(other.data);

  /* The footer bound: a byte under the footer is too little, the footer
   * itself enough (unless the schema message alone is over it). */
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.max_metadata_bytes = footer_len - 1;
  char what[600];
  snprintf(what, sizeof what, "%s: max_metadata_bytes %d, one under the footer", name,
           footer_len - 1);
  batches b = read_all(tu_unseekable_source(data, size, 1), &opts, 0);
  totals.inputs++;
  totals.errors += b.status != XCHG_OK;
  totals.expected_status += b.status == XCHG_ELIMIT;
  TU_CHECK(b.status == XCHG_ELIMIT && strstr(b.message, "footer"), "%s: status %d: %s", what,
           b.status, b.message);
  batches_free(&b);
  opts.max_metadata_bytes = footer_len;
  b = read_all(tu_unseekable_source(data, size, 2), &opts, 0);
  totals.inputs++;
  TU_CHECK(b.status == XCHG_OK, "%s: max_metadata_bytes = footer length %d: status %d: %s", name,
           footer_len, b.status, b.message);
  batches_free(&b);
}

/* Every cut from the marker on: the cuts before the last 100 bytes read no
 * column (the bodies are still read, as the input cannot skip), to keep
 * the test fast under the sanitizers. */
static void check_cuts(const uint8_t *data, size_t size, size_t marker, const char *name) {
  static const int64_t none = 0;
  for (size_t cut = marker; cut < size; cut++) {
    xchg_error err = {{0}};
    xchg_ipc_reader *r = NULL;
    batches b = {.status =
                     xchg_ipc_reader_open(tu_unseekable_source(data, cut, cut), NULL, &r, &err)};
    if (b.status == XCHG_OK && cut + CODEC_TAIL_CUTS < size)
      b.status = xchg_ipc_reader_select_indices(r, &none, 0, &err);
    while (b.status == XCHG_OK) {
      struct ArrowArray a;
      b.status = xchg_ipc_reader_next(r, &a, &err);
      if (b.status != XCHG_OK || a.release == NULL) break;
      a.release(&a);
      b.n++;
    }
    xchg_ipc_reader_free(r);
    totals.inputs++;
    totals.errors += b.status != XCHG_OK;
    totals.expected_status += b.status == XCHG_EIO;
    TU_CHECK(b.status == XCHG_EIO, "%s cut at byte %zu of %zu (marker at %zu): status %d: %s", name,
             cut, size, marker, b.status, b.status == XCHG_OK ? "read as whole" : err.message);
  }
}

static void check_codec(const uint8_t *data, size_t size, const batches *want,
                        xchg_stream_codec codec, const char *name) {
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  xchg_buf *enc = NULL;
  xchg_error err;
  if (xchg_stream_encode(codec, &eo, data, size, &enc, &err) != XCHG_OK) {
    TU_CHECK(0, "xchg_stream_encode: %s", err.message);
    return;
  }
  size_t n = xchg_buf_size(enc);
  uint8_t *copy = malloc(n); /* exactly n bytes, so that reading past them shows */
  memcpy(copy, xchg_buf_data(enc), n);
  xchg_buf_unref(enc);
  char what[600];
  snprintf(what, sizeof what, "%s through %s", name, xchg_stream_codec_name(codec));
  batches got = read_all(tu_codec_source(copy, n, codec), NULL, 1);
  expect_same(want, &got, what);
  batches_free(&got);
  for (size_t cut = n > CODEC_TAIL_CUTS ? n - CODEC_TAIL_CUTS : 0; cut < n; cut++) {
    snprintf(what, sizeof what, "%s through %s cut at compressed byte %zu of %zu", name,
             xchg_stream_codec_name(codec), cut, n);
    expect_error(tu_codec_source(copy, cut, codec), NULL, XCHG_EIO, what);
  }
  free(copy);
}

static void check_gold_file(const char *path, void *ctx_) {
  gold_ctx *ctx = ctx_;
  const char *name = short_name(path, ctx->root);
  tu_bytes file = tu_read_bytes(path);
  size_t marker = eos_offset(file.data, file.size);
  if (marker == 0) {
    TU_CHECK(0, "%s: no end-of-stream marker right before the footer", name);
    free(file.data);
    return;
  }
  ctx->files++;
  batches want = read_all(tu_memory_source(file.data, file.size), NULL, 1);
  if (want.status != XCHG_OK) {
    TU_CHECK(0, "%s: %s", name, want.message);
  } else {
    char what[600];
    for (uint64_t seed = 1; seed <= 3; seed++) {
      snprintf(what, sizeof what, "%s read in order (chunk seed %llu)", name,
               (unsigned long long)seed);
      batches got = read_all(tu_unseekable_source(file.data, file.size, seed), NULL, 1);
      expect_same(&want, &got, what);
      batches_free(&got);
    }
    check_cuts(file.data, file.size, marker, name);
    check_damage(file.data, file.size, marker, name, ctx->other_footer_file);
    check_codec(file.data, file.size, &want, XCHG_STREAM_LZ4_FRAME, name);
    check_codec(file.data, file.size, &want, XCHG_STREAM_ZSTD, name);
  }
  batches_free(&want);
  free(file.data);
}

/* ---- the CLI on a piped file ------------------------------------------------ */

typedef struct cli_run {
  int exit_code;
  tu_bytes out;
} cli_run;

/* Runs a shell command line, keeping its standard output. */
static cli_run run(const char *cmd) {
  cli_run res = {-1, {0}};
  FILE *p = popen(cmd, "r");
  if (p == NULL) return res;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) tu_bytes_append(&res.out, buf, n);
  int status = pclose(p);
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return res;
}

static void check_cli(const char *cli, const char *gold_root) {
  static const char *files[] = {"1.0.0-littleendian/generated_primitive.arrow_file",
                                "1.0.0-littleendian/generated_dictionary.arrow_file",
                                "2.0.0-compression/generated_zstd.arrow_file"};
  char cmd[8192];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", gold_root, files[i]);
    snprintf(cmd, sizeof cmd, "'%s' cat --format arrow-json '%s' 2>/dev/null", cli, path);
    cli_run direct = run(cmd);
    snprintf(cmd, sizeof cmd, "cat '%s' | '%s' cat --format arrow-json - 2>/dev/null", path, cli);
    cli_run piped = run(cmd);
    TU_CHECK(direct.exit_code == 0 && piped.exit_code == 0 && direct.out.size > 0 &&
                 piped.out.size == direct.out.size &&
                 memcmp(piped.out.data, direct.out.data, direct.out.size) == 0,
             "xchg cat of piped %s: exit %d (file: exit %d), %zu bytes of output (file: %zu)",
             files[i], piped.exit_code, direct.exit_code, piped.out.size, direct.out.size);
    free(direct.out.data);
    free(piped.out.data);

    snprintf(cmd, sizeof cmd, "cat '%s' | '%s' inspect - 2>&1", path, cli);
    cli_run inspect = run(cmd);
    TU_CHECK(inspect.exit_code == 0, "xchg inspect of piped %s: exit %d: %.*s", files[i],
             inspect.exit_code, (int)(inspect.out.size > 400 ? 400 : inspect.out.size),
             inspect.out.data ? (const char *)inspect.out.data : "");
    free(inspect.out.data);

    /* Cut in the footer, in the closing magic: an error, not a short result. */
    tu_bytes file = tu_read_bytes(path);
    size_t marker = eos_offset(file.data, file.size);
    size_t cuts[] = {marker + 8 + 1, file.size - 3};
    for (size_t k = 0; k < 2; k++) {
      for (int command = 0; command < 2; command++) {
        snprintf(cmd, sizeof cmd, "head -c %zu '%s' | '%s' %s - 2>&1 >/dev/null", cuts[k], path,
                 cli, command ? "inspect" : "cat --format json");
        cli_run cut = run(cmd);
        int named = cut.exit_code == 1 && cut.out.data && strstr((char *)cut.out.data, "footer");
        TU_CHECK(named, "%s of %s cut at byte %zu, piped: exit %d: %.*s",
                 command ? "inspect" : "cat", files[i], cuts[k], cut.exit_code,
                 (int)(cut.out.size > 400 ? 400 : cut.out.size),
                 cut.out.data ? (const char *)cut.out.data : "");
        totals.inputs++;
        totals.errors += cut.exit_code == 1;
        totals.expected_status += named;
        free(cut.out.data);
      }
    }
    free(file.data);
  }
}

static char root[2048];

/* Every gold file read in order, against the file read seekable. */
static void gold_files(void) {
  char other[2300];
  snprintf(other, sizeof other, "%s/1.0.0-littleendian/generated_nested.arrow_file", root);
  gold_ctx ctx = {root, other, 0};
  tu_walk(root, ".arrow_file", check_gold_file, &ctx);
  TU_CHECK(ctx.files >= 20, "only %d gold .arrow_file files under %s", ctx.files, root);
  printf(
      "file_sequential: %d gold files, %ld inputs tried, %ld errors returned (%ld as expected), "
      "crashes = 0\n",
      ctx.files, totals.inputs, totals.errors, totals.expected_status);
}

static void cli(void) { check_cli(tu_cli_path(), root); }

int main(int argc, char **argv) {
  tu_testdata_path(root, sizeof root, "arrow-gold");
  static const tu_case cases[] = {
      {"gold_files", gold_files},
      {"cli", cli},
  };
  return TU_MAIN(argc, argv, "file_sequential", cases);
}
