/* tests/test_cli_shuffle.c — `xchg convert` of Comet shuffle blocks (as
 * `xchg gen shuffle --format comet` writes them) goes through the shuffle
 * reader (issue 21):
 *  - for every Comet codec (none, lz4, zstd, snappy), and for concatenated
 *    IPC streams, the converted output holds every value of the input:
 *    `cat` of it equals `cat` of the input (read block by block), and its
 *    row count is the input's;
 *  - Comet blocks are coalesced into batches of 8192 rows by default, of at
 *    least --batch-rows N rows when given (1, an odd number, more than the
 *    input), a block never split;
 *  - `inspect` of Comet blocks says how many, of which codec, their rows,
 *    wire bytes and the batches they coalesce into, in text and JSON;
 *  - blocks whose header has no field count are read block by block and
 *    coalesced by the writer, and inspect shows them (exit 0);
 *  - Comet blocks through a pipe (`cat FILE | xchg cat -`, `inspect -`,
 *    `convert - OUT`) go through the same reader as the file given by
 *    name: the same output, the same error text;
 *  - a truncated last block, a bad codec tag, an empty input and a schema
 *    change between blocks are errors (naming the block) that leave no OUT;
 *  - `cat` of a file of Comet blocks (every codec, dictionary-encoded
 *    columns too) goes through the shuffle reader and prints, byte for
 *    byte, what `cat` of the same blocks with their field counts zeroed
 *    (read block by block) does, in every format, with and without
 *    --columns and --limit, and so does `cat -` of them through a pipe;
 *    a bad block prints nothing, exit 1, the error naming the block as only
 *    the shuffle reader does;
 *  - blocks Apache Arrow JS wrote, with a record batch of no rows and delta
 *    dictionaries: `cat` prints what block by block reading does and what
 *    apache-arrow reads, value by value, in every format;
 *  - `convert` never writes a batch of 0 rows beside rows, where an empty
 *    batch's dictionary differs from the next batch's too (apache-arrow
 *    reads the batches back);
 *  - `cat --limit N` reads only the blocks of the first N rows: damaged
 *    blocks after them change nothing, a cut among them fails;
 *  - `inspect` of plain IPC streams one after another gets the blocks
 *    summary too, and shows the streams after the first only with
 *    --streams; its batches are convert's, dictionary cuts included;
 *  - `convert --file` of IPC streams whose dictionaries differ fails
 *    cleanly (the file format cannot replace one), leaking nothing, and
 *    names the record batch message that needs the replacement;
 *  - `inspect` of blocks given as a named FIFO (/dev/stdin on a pipe) says
 *    what `inspect` of the file does;
 *  - `gen shuffle --rows 0` writes one block of no rows (ipc and comet),
 *    which `cat`, `inspect` and `convert` read without --input-codec. */
#define _XOPEN_SOURCE 700
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/encoded.h"
#include "support/cli_run.h"
#include "support/interop.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/testing.h"

static const char *cli;
static char tmp[] = "/tmp/test_cli_shuffle_XXXXXX";

/* `xchg args`, or with input through a pipe: `cat input | xchg args`
 * (tu_cli_runf, tu_cli_piped_runf); the result must be freed. */
#define run(...) tu_cli_runf(cli, __VA_ARGS__)
#define piped(input, ...) tu_cli_piped_runf(cli, input, __VA_ARGS__)

/* char var[] = tmp/name */
#define TMP_PATH(var, name) \
  char var[4200];           \
  snprintf(var, sizeof var, "%s/%s", tmp, name)

static void must_run(const char *what, tu_cli_result r) {
  TU_CHECK(r.exit_code == 0, "%s: exit %d: %s", what, r.exit_code, r.err);
  tu_cli_result_free(&r);
}

/* The record batch count `inspect` gives for an IPC stream, -1 if none. */
static long long batches_of(const char *path, long long want_rows) {
  tu_cli_result r = run("inspect '%s'", path);
  long long batches = -1, rows = -1;
  const char *summary = strstr(r.out, "summary: ");
  const char *comma = summary != NULL ? strchr(summary, ',') : NULL;
  if (r.exit_code != 0 || comma == NULL ||
      sscanf(summary, "summary: %lld record batch", &batches) != 1 ||
      sscanf(comma, ", %lld rows", &rows) != 1)
    TU_CHECK(0, "inspect %s: exit %d: %s%s", path, r.exit_code, r.out, r.err);
  TU_CHECK(rows == want_rows, "%s: %lld rows, want %lld", path, rows, want_rows);
  tu_cli_result_free(&r);
  return batches;
}

/* `cat` of out prints what `cat` of in does, and out has rows rows in
 * want_batches batches (-1: any count). */
static void expect_same_rows(const char *in, const char *out, long long rows,
                             long long want_batches) {
  tu_cli_result a = run("cat '%s' --format json", in);
  tu_cli_result b = run("cat '%s' --format json", out);
  TU_CHECK(a.exit_code == 0 && b.exit_code == 0 && a.out_len > 0 && a.out_len == b.out_len &&
               memcmp(a.out, b.out, a.out_len) == 0,
           "cat of %s (%zu bytes) and of %s (%zu bytes) differ: %s%s", in, a.out_len, out,
           b.out_len, a.err, b.err);
  tu_cli_result_free(&a);
  tu_cli_result_free(&b);
  long long batches = batches_of(out, rows);
  TU_CHECK(want_batches < 0 || batches == want_batches, "%s: %lld batches, want %lld", out, batches,
           want_batches);
}

/* 10000 rows in blocks of 64: 157 blocks, the last of 16 rows. */
static void gen_shuffle(const char *path, const char *format, const char *codec, int columns) {
  char what[4400];
  snprintf(what, sizeof what, "gen shuffle %s %s %d", format, codec, columns);
  must_run(
      what,
      run("gen shuffle '%s' --format %s --compression %s --rows 10000 --block-rows 64 --columns %d -f",
          path, format, codec, columns));
}

static void check_codecs(void) {
  static const char *const codecs[] = {"none", "lz4", "zstd", "snappy"};
  TMP_PATH(in, "in.comet");
  TMP_PATH(out, "out.arrow");
  for (int i = 0; i < 4; i++) {
    gen_shuffle(in, "comet", codecs[i], 5);
    must_run("convert", run("convert '%s' '%s' -f", in, out));
    expect_same_rows(in, out, 10000, 2); /* 128 blocks make 8192 rows, then the rest */
    must_run("convert --input-codec comet",
             run("convert --input-codec comet - '%s' -f < '%s'", out, in));
    expect_same_rows(in, out, 10000, 2);
  }
  /* `gen --outer comet` writes the schema's field count in the header, as
   * Comet does; a block with 0 there (a writer that leaves it out) is read
   * block by block, and coalesced all the same. */
  TMP_PATH(bc, "broadcast.comet");
  must_run("gen broadcast --outer comet",
           run("gen broadcast '%s' --outer comet --rows 20000 -f", bc));
  tu_cli_result r = run("inspect '%s'", bc);
  TU_CHECK(strstr(r.out, "(Comet block, field count 3)") && strstr(r.out, "blocks: 1 Comet block"),
           "inspect of gen --outer comet: %s", r.out);
  tu_cli_result_free(&r);
  TMP_PATH(one, "one.comet"); /* one block of one row: counted in the singular */
  must_run("gen shuffle --rows 1", run("gen shuffle '%s' --format comet --rows 1 -f", one));
  r = run("inspect '%s'", one);
  TU_CHECK(strstr(r.out, "\nblocks: 1 Comet block (none), 1 row, ") != NULL,
           "inspect of one block of one row: %s", r.out);
  tu_cli_result_free(&r);
  size_t size;
  uint8_t *block = tu_read_file(bc, &size);
  TU_CHECK(block != NULL && size > 20, "cannot read %s", bc);
  if (block == NULL || size <= 20) return;
  memset(block + 8, 0, 8); /* the field count */
  TU_CHECK(tu_write_file(bc, block, size) == 0, "cannot write %s", bc);
  free(block);
  must_run("convert of blocks without a field count", run("convert '%s' '%s' -f", bc, out));
  expect_same_rows(bc, out, 20000, -1);
  /* inspect shows them too, from a file and through a pipe, its blocks
   * line saying why the shuffle reader did not read them (it failed). */
  for (int p = 0; p < 2; p++) {
    r = p ? piped(bc, "inspect -") : run("inspect '%s'", bc);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, "(Comet block, field count 0)") &&
                 strstr(r.out, "blocks: not read as shuffle blocks: ") &&
                 strstr(r.out, "states no field count"),
             "inspect%s of blocks without a field count: exit %d: %s%s", p ? " -" : "", r.exit_code,
             r.out, r.err);
    tu_cli_result_free(&r);
  }
  static const char *const body[] = {"none", "lz4", "zstd"};
  for (int i = 0; i < 3; i++) {
    gen_shuffle(in, "ipc", body[i], 5);
    must_run("convert of IPC streams", run("convert '%s' '%s' -f --batch-rows 8192", in, out));
    expect_same_rows(in, out, 10000, -1);
  }
}

static void check_batch_rows(void) {
  TMP_PATH(in, "in.comet");
  TMP_PATH(out, "out.arrow");
  gen_shuffle(in, "comet", "lz4", 5);
  static const struct {
    long long rows, batches;
  } cases[] = {{1, 157}, {7, 157}, {65, 79}, {127, 79}, {128, 79}, {129, 53}, {20000, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    must_run("convert --batch-rows",
             run("convert '%s' '%s' -f --batch-rows %lld", in, out, cases[i].rows));
    expect_same_rows(in, out, 10000, cases[i].batches);
  }
}

/* The bytes of path, or NULL (checked: the caller frees them). */
static uint8_t *file_bytes(const char *path, size_t *size) {
  uint8_t *bytes = tu_read_file(path, size);
  TU_CHECK(bytes != NULL, "cannot read %s", path);
  return bytes;
}

/* Reading every block, the shuffle reader reads ahead on every core
 * (XCHG_THREADS): on one thread, on two (Comet blocks with a codec
 * decompressed on the pool and placed by the caller) and on three (the
 * threads taking turns planning), convert writes the same bytes and cat
 * prints the same rows.  Batches of 100 rows, many to plan ahead. */
static void check_threads(void) {
  static const struct {
    const char *format, *codec;
  } inputs[] = {{"comet", "none"}, {"comet", "lz4"}, {"comet", "zstd"}, {"ipc", "lz4"}};
  TMP_PATH(in, "threads.blocks");
  TMP_PATH(out, "threads.arrows");
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    gen_shuffle(in, inputs[i].format, inputs[i].codec, 12);
    uint8_t *first = NULL;
    size_t first_size = 0;
    tu_cli_result first_rows = {0};
    for (int threads = 1; threads <= 3; threads++) {
      char n[8];
      snprintf(n, sizeof n, "%d", threads);
      setenv("XCHG_THREADS", n, 1);
      must_run("convert", run("convert '%s' '%s' -f --batch-rows 100", in, out));
      tu_cli_result rows = run("cat '%s' --format json", in);
      unsetenv("XCHG_THREADS");
      size_t size;
      uint8_t *bytes = file_bytes(out, &size);
      TU_CHECK(rows.exit_code == 0 && rows.out_len > 0, "%s %s: cat on %d threads: exit %d: %s",
               inputs[i].format, inputs[i].codec, threads, rows.exit_code, rows.err);
      if (threads == 1) {
        first = bytes;
        first_size = size;
        first_rows = rows;
        continue;
      }
      TU_CHECK(bytes && first && size == first_size && memcmp(bytes, first, size) == 0,
               "%s %s: convert on %d threads wrote other bytes (%zu) than on one (%zu)",
               inputs[i].format, inputs[i].codec, threads, size, first_size);
      TU_CHECK(
          rows.out_len == first_rows.out_len && memcmp(rows.out, first_rows.out, rows.out_len) == 0,
          "%s %s: cat on %d threads printed other rows than on one", inputs[i].format,
          inputs[i].codec, threads);
      free(bytes);
      tu_cli_result_free(&rows);
    }
    free(first);
    tu_cli_result_free(&first_rows);
  }
}

/* inspect's output after the line or key that names its input: NULL
 * when it has none. */
static const char *after_name(const char *out, int json) {
  return json ? strstr(out, "\n  \"codec\"") : strchr(out, '\n');
}

/* Whether two runs' "xchg: <input>: message" errors say the same after
 * the input's name (a path, or <stdin>). */
static bool same_error(const char *a, const char *b) {
  const char *x = strstr(a, ": "), *y = strstr(b, ": ");
  x = x != NULL ? strstr(x + 2, ": ") : NULL;
  y = y != NULL ? strstr(y + 2, ": ") : NULL;
  return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/* convert of in (with the options extra) fails, its error saying needle,
 * and leaves no OUT; so does convert - of in through a pipe, with the same
 * error after the input's name, and convert of in to standard output
 * writes nothing. */
static void expect_refused(const char *what, const char *in, const char *extra,
                           const char *needle) {
  TMP_PATH(out, "refused.arrow");
  unlink(out);
  tu_cli_result r = run("convert '%s' '%s' %s", in, out, extra);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, needle) != NULL && access(out, F_OK) != 0,
           "%s: exit %d, OUT %s, stderr %s (want %s)", what, r.exit_code,
           access(out, F_OK) == 0 ? "written" : "absent", r.err, needle);
  tu_cli_result through = piped(in, "convert - '%s' %s", out, extra);
  TU_CHECK(through.exit_code == 1 && same_error(r.err, through.err) && access(out, F_OK) != 0,
           "%s through a pipe: exit %d, OUT %s, stderr %s (the file: %s)", what, through.exit_code,
           access(out, F_OK) == 0 ? "written" : "absent", through.err, r.err);
  tu_cli_result_free(&through);
  tu_cli_result_free(&r);
  r = run("convert '%s' - %s", in, extra);
  TU_CHECK(r.exit_code == 1 && r.out_len == 0, "%s to standard output: exit %d, %zu bytes written",
           what, r.exit_code, r.out_len);
  tu_cli_result_free(&r);
}

static void check_bad_blocks(void) {
  TMP_PATH(in, "in.comet");
  TMP_PATH(bad, "bad.comet");
  gen_shuffle(in, "comet", "lz4", 5);
  tu_bytes b = tu_read_bytes(in);
  TU_CHECK(b.data != NULL && b.size > 40, "cannot read %s", in);
  if (b.data == NULL || b.size <= 40) return;
  /* The last block cut short by 3 bytes. */
  TU_CHECK(tu_write_file(bad, b.data, b.size - 3) == 0, "cannot write %s", bad);
  expect_refused("a truncated last block", bad, "", "block 156 (source 0, byte ");
  /* The second block's codec tag (bytes 16..19 of its header) unknown. */
  uint64_t first = 0;
  for (int k = 7; k >= 0; k--) first = first << 8 | b.data[k];
  TU_CHECK(first + 8 + 20 < b.size, "the first block's length %llu", (unsigned long long)first);
  if (first + 8 + 20 < b.size) memcpy(b.data + 8 + first + 16, "XXXX", 4);
  TU_CHECK(tu_write_file(bad, b.data, b.size) == 0, "cannot write %s", bad);
  char want[64];
  snprintf(want, sizeof want, "block 1 (source 0, byte %llu)", (unsigned long long)(first + 8));
  expect_refused("a bad codec tag", bad, "--input-codec comet", want);
  free(b.data);
  /* Blocks of 5 columns, then blocks of 3. */
  TMP_PATH(three, "three.comet");
  gen_shuffle(three, "comet", "lz4", 3);
  tu_bytes mixed = tu_read_bytes(in), tail = tu_read_bytes(three);
  tu_bytes_append(&mixed, tail.data, tail.size);
  TU_CHECK(tu_write_file(bad, mixed.data, mixed.size) == 0, "cannot write %s", bad);
  free(mixed.data);
  free(tail.data);
  expect_refused("a schema change between blocks", bad, "", "block 157 (source 0, byte ");
  /* An empty input holds no block to convert. */
  TU_CHECK(tu_write_file(bad, "", 0) == 0, "cannot write %s", bad);
  expect_refused("an empty input", bad, "--input-codec comet", "holds no IPC stream");
  /* cat shows its rows, none, as csv and json; Arrow's integration JSON,
   * which needs a schema, is refused (it crashed, writing with none). */
  static const char *const formats[] = {"csv", "json", "arrow-json"};
  for (int f = 0; f < 3; f++) {
    tu_cli_result r = run("cat '%s' --input-codec comet --format %s", bad, formats[f]);
    int refused = f == 2;
    TU_CHECK(r.exit_code == refused && r.out_len == 0 &&
                 (!refused || strstr(r.err, "holds no IPC stream, so no schema") != NULL),
             "cat of an empty input as %s: exit %d, %zu bytes out, stderr %s", formats[f],
             r.exit_code, r.out_len, r.err);
    tu_cli_result_free(&r);
  }
}

/* gen shuffle --rows 0 writes one block of no rows, in either framing, so
 * that cat, inspect and convert read it without --input-codec comet, as
 * they read gen cache --rows 0 (it wrote an empty file, which they took
 * for no IPC stream at all). */
static void check_gen_no_rows(void) {
  static const char *const formats[] = {"ipc", "comet"};
  TMP_PATH(in, "no_rows.blocks");
  TMP_PATH(out, "no_rows.arrow");
  for (int i = 0; i < 2; i++) {
    must_run("gen shuffle --rows 0", run("gen shuffle '%s' --format %s --compression lz4 "
                                         "--rows 0 -f",
                                         in, formats[i]));
    tu_cli_result r = run("cat '%s'", in);
    TU_CHECK(r.exit_code == 0 && strcmp(r.out, "c0,c1,c2,c3,c4\n") == 0,
             "cat of gen shuffle --format %s --rows 0: exit %d: %s%s", formats[i], r.exit_code,
             r.out, r.err);
    tu_cli_result_free(&r);
    r = piped(in, "cat -");
    TU_CHECK(r.exit_code == 0 && strcmp(r.out, "c0,c1,c2,c3,c4\n") == 0,
             "cat - of gen shuffle --format %s --rows 0: exit %d: %s%s", formats[i], r.exit_code,
             r.out, r.err);
    tu_cli_result_free(&r);
    batches_of(in, 0);
    must_run("convert of gen shuffle --rows 0", run("convert '%s' '%s' -f", in, out));
    batches_of(out, 0);
  }
}

/* path's blocks with the field count of their headers zeroed, which
 * `cat` reads block by block (an IPC reader per block), at zeroed. */
static void zero_field_counts(const char *path, const char *zeroed) {
  tu_bytes b = tu_read_bytes(path);
  TU_CHECK(b.data != NULL, "cannot read %s", path);
  for (size_t at = 0; b.data != NULL && b.size - at >= 20;) {
    uint64_t length = 0;
    for (int k = 7; k >= 0; k--) length = length << 8 | b.data[at + (size_t)k];
    memset(b.data + at + 8, 0, 8);
    if (length > b.size - at - 8) break;
    at += 8 + (size_t)length;
  }
  TU_CHECK(tu_write_file(zeroed, b.data, b.size) == 0, "cannot write %s", zeroed);
  free(b.data);
}

/* `cat - opts` of path through a pipe prints what `cat path opts` did
 * (named), byte for byte, and exits alike, with the same error. */
static void expect_piped_like(const char *path, const char *opts, const tu_cli_result *named) {
  tu_cli_result c = piped(path, "cat - %s", opts);
  TU_CHECK(c.exit_code == named->exit_code && c.out_len == named->out_len &&
               memcmp(named->out, c.out, named->out_len) == 0 &&
               (named->exit_code == 0 || same_error(named->err, c.err)),
           "cat - %s of %s through a pipe: exit %d, %zu bytes (the file: exit %d, %zu bytes): %s",
           opts, path, c.exit_code, c.out_len, named->exit_code, named->out_len, c.err);
  tu_cli_result_free(&c);
}

/* `cat FILE opts` (the shuffle reader) prints what `cat opts` of its
 * blocks with their field counts zeroed (block by block) does, byte for
 * byte, and so does `cat - opts` of FILE through a pipe; all exit with
 * want_exit, saying needle on standard error when not NULL. */
static void expect_cat(const char *path, const char *opts, int want_exit, const char *needle) {
  TMP_PATH(zeroed, "zeroed.comet");
  zero_field_counts(path, zeroed);
  tu_cli_result a = run("cat '%s' %s", path, opts);
  tu_cli_result b = run("cat '%s' %s", zeroed, opts);
  bool empty = strstr(opts, "--format json --limit 0") != NULL; /* JSON Lines of no row */
  TU_CHECK(a.exit_code == want_exit && b.exit_code == want_exit && (b.out_len == 0) == empty &&
               a.out_len == b.out_len && memcmp(a.out, b.out, a.out_len) == 0 &&
               (needle == NULL || (strstr(a.err, needle) && strstr(b.err, needle))),
           "cat %s %s: exit %d, %zu bytes; block by block: exit %d, %zu bytes: %s%s", path, opts,
           a.exit_code, a.out_len, b.exit_code, b.out_len, a.err, b.err);
  expect_piped_like(path, opts, &a);
  tu_cli_result_free(&a);
  tu_cli_result_free(&b);
}

/* `cat FILE opts` fails, saying needle, and `cat - opts` of FILE through
 * a pipe the same way (the shuffle reader's error either way). */
static void expect_cat_fails_alike(const char *path, const char *opts, const char *needle) {
  tu_cli_result a = run("cat '%s' %s", path, opts);
  TU_CHECK(a.exit_code == 1 && strstr(a.err, needle), "cat %s %s: exit %d: %s (want %s)", path,
           opts, a.exit_code, a.err, needle);
  expect_piped_like(path, opts, &a);
  tu_cli_result_free(&a);
}

static void expect_cat_same(const char *path, const char *opts) { expect_cat(path, opts, 0, NULL); }

static const char *const cat_formats[] = {"csv", "json", "arrow-json"};

static void check_cat(void) {
  static const char *const codecs[] = {"none", "lz4", "zstd", "snappy"};
  /* --limit 100: inside the first 8192-row batch; 8200: just past it. */
  static const char *const options[] = {"",
                                        "--columns c3,c0",
                                        "--limit 100",
                                        "--limit 8200",
                                        "--columns c4,c1,c4 --limit 777",
                                        "--limit 0"};
  TMP_PATH(in, "cat.comet");
  for (int i = 0; i < 4; i++) {
    gen_shuffle(in, "comet", codecs[i], 5);
    for (int f = 0; f < 3; f++)
      for (size_t o = 0; o < sizeof options / sizeof options[0]; o++) {
        char opts[128];
        snprintf(opts, sizeof opts, "--format %s %s", cat_formats[f], options[o]);
        expect_cat_same(in, opts);
      }
  }
  /* Blocks that each decompress to megabytes (50 columns of 4096 rows):
   * the shuffle reader's arena grows inside a block. */
  static const char *const packed[] = {"lz4", "zstd", "snappy"};
  for (int i = 0; i < 3; i++) {
    must_run("gen shuffle of large blocks",
             run("gen shuffle '%s' --format comet --compression %s --rows 10000 --block-rows 4096 "
                 "--columns 50 -f",
                 in, packed[i]));
    expect_cat_same(in, "--format csv");
  }
  /* An unknown column: the same error either way. */
  TMP_PATH(zeroed, "zeroed.comet");
  zero_field_counts(in, zeroed);
  tu_cli_result a = run("cat '%s' --columns nope", in);
  tu_cli_result b = run("cat '%s' --columns nope", zeroed);
  TU_CHECK(a.exit_code == 1 && a.out_len == 0 && strstr(a.err, "no column named \"nope\"") &&
               b.exit_code == 1 && strstr(b.err, "no column named \"nope\""),
           "cat --columns nope: exit %d: %s; block by block: exit %d: %s", a.exit_code, a.err,
           b.exit_code, b.err);
  expect_cat_fails_alike(in, "--columns nope", "no column named \"nope\"");
  tu_cli_result_free(&a);
  tu_cli_result_free(&b);
}

/* Where the bytes of text first occur in p[0..n), or NULL. */
static uint8_t *find_bytes(uint8_t *p, size_t n, const char *text) {
  size_t len = strlen(text);
  for (size_t at = 0; n >= len && at <= n - len; at++)
    if (memcmp(p + at, text, len) == 0) return p + at;
  return NULL;
}

/* Comet blocks (codec NONE) that each hold the IPC stream of the gold
 * file name, dictionary-encoded columns, as Comet writes a dictionary
 * column: every block sends its dictionaries again.  The shuffle reader's
 * batches carry no dictionary ids, which arrow-json shows: it must show
 * the stream's.  value: a dictionary value of the stream, changed in the
 * last block (NULL: none). */
static void cat_dictionary_blocks(const char *name, const char *value) {
  char gold[4096];
  tu_testdata_path(gold, sizeof gold, "arrow-gold/%s", name);
  tu_bytes ipc = tu_read_bytes(gold);
  TU_CHECK(ipc.data != NULL, "cannot read %s", gold);
  if (ipc.data == NULL) return;
  tu_cli_result r = run("inspect '%s'", gold);
  long long fields = 0; /* the schema's field count, for the block header */
  const char *line = strstr(r.out, "\nschema: ");
  TU_CHECK(
      r.exit_code == 0 && line && sscanf(line, "\nschema: %lld field", &fields) == 1 && fields > 0,
      "inspect of %s: exit %d: %s%s", gold, r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  uint8_t header[20];
  uint64_t length = 12 + (uint64_t)ipc.size;
  for (int k = 0; k < 8; k++) {
    header[k] = (uint8_t)(length >> (8 * k));
    header[8 + k] = (uint8_t)((uint64_t)fields >> (8 * k));
  }
  memcpy(header + 16, "NONE", 4);
  tu_bytes blocks = {0};
  for (int n = 0; n < 3; n++) {
    tu_bytes_append(&blocks, header, sizeof header);
    tu_bytes_append(&blocks, ipc.data, ipc.size);
  }
  TMP_PATH(path, "dict.comet");
  TU_CHECK(tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
  static const char *const options[] = {"", "--limit 3", "--columns '#1'"};
  for (int f = 0; f < 3; f++)
    for (size_t o = 0; o < sizeof options / sizeof options[0]; o++) {
      char opts[128];
      snprintf(opts, sizeof opts, "--format %s %s", cat_formats[f], options[o]);
      expect_cat_same(path, opts);
    }
  /* A dictionary value changed in the last block: csv and json show each
   * block's own dictionary; arrow-json, which holds one dictionary per id,
   * fails at that block as reading block by block does. */
  size_t last = 2 * (sizeof header + ipc.size);
  uint8_t *hit = value ? find_bytes(blocks.data + last, blocks.size - last, value) : NULL;
  TU_CHECK(value == NULL || hit != NULL, "%s holds no \"%s\"", name, value);
  if (hit != NULL) {
    hit[0] ^= 0x20; /* its case */
    TU_CHECK(tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
    expect_cat_same(path, "--format csv");
    expect_cat_same(path, "--format json");
    expect_cat(path, "--format arrow-json", 1, "batch 4 replaces the dictionary of");
    hit[0] ^= 0x20;
  }
  /* The second block's codec tag damaged: nothing printed, the block named. */
  memcpy(blocks.data + sizeof header + ipc.size + 16, "XXXX", 4);
  TU_CHECK(tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
  char want[64];
  snprintf(want, sizeof want, "block 1 (source 0, byte %zu): ", sizeof header + ipc.size);
  for (int f = 0; f < 3; f++) {
    r = run("cat '%s' --format %s", path, cat_formats[f]);
    TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, want) != NULL,
             "cat --format %s of a bad dictionary block: exit %d, %zu bytes out, stderr %s",
             cat_formats[f], r.exit_code, r.out_len, r.err);
    tu_cli_result_free(&r);
  }
  free(blocks.data);
  free(ipc.data);
}

/* generated_nested_dictionary: dictionaries inside dictionaries;
 * generated_shared_dict: two columns share one dictionary id, which
 * arrow-json shows, once. */
static void check_cat_dictionaries(void) {
  cat_dictionary_blocks("1.0.0-littleendian/generated_dictionary.stream", "be\xc2\xa3jdbi");
  cat_dictionary_blocks("1.0.0-littleendian/generated_nested_dictionary.stream", NULL);
  cat_dictionary_blocks("4.0.0-shareddict/generated_shared_dict.stream", NULL);
}

/* The IPC streams of `two` (whose dictionaries differ) written as one
 * stream, which replaces the dictionary: `convert --file` of it names the
 * record batch message that uses the other dictionary, and its byte
 * offset, as `inspect --messages` lists it. */
static void expect_replacement_named_on(const char *two, const char *threads) {
  TMP_PATH(one, "replaced.arrows");
  TMP_PATH(out, "replaced.arrow");
  must_run("convert of two streams into one", run("convert '%s' '%s' -f", two, one));
  setenv("XCHG_THREADS", threads, 1);
  tu_cli_result r = run("convert '%s' '%s' --file -f", one, out);
  unsetenv("XCHG_THREADS");
  long long index = -1, offset = -1;
  const char *at = strstr(r.err, ": message ");
  TU_CHECK(r.exit_code == 1 && at &&
               sscanf(at, ": message %lld at byte %lld", &index, &offset) == 2 &&
               strstr(r.err, "cannot replace dictionary") != NULL,
           "convert --file on %s thread(s) of a stream that replaces a dictionary: exit %d, stderr "
           "%s",
           threads, r.exit_code, r.err);
  tu_cli_result_free(&r);
  /* The batch named is the one the replacement is for: the first record
   * batch after the last dictionary message (inspect lists them all), not
   * one the reader read ahead on the pool (XCHG_THREADS), on any number
   * of threads. */
  r = run("inspect '%s' --messages", one);
  long long last_dictionary = -1;
  for (const char *p = r.out; (p = strstr(p, "\n  #")) != NULL; p++) {
    long long k;
    char kind[16];
    if (sscanf(p, "\n  #%lld %15s", &k, kind) == 2 && strcmp(kind, "dictionary") == 0)
      last_dictionary = k;
  }
  char line[96];
  snprintf(line, sizeof line, "  #%lld record batch  offset %lld ", index, offset);
  TU_CHECK(
      r.exit_code == 0 && index > 0 && index == last_dictionary + 1 && strstr(r.out, line) != NULL,
      "convert --file named message %lld at byte %lld, not the record batch after the "
      "replacing dictionary (message %lld): %s",
      index, offset, last_dictionary, r.out);
  tu_cli_result_free(&r);
}

/* On one thread and on two, where the reader reads ahead. */
static void expect_replacement_named(const char *two) {
  expect_replacement_named_on(two, "1");
  expect_replacement_named_on(two, "2");
}

/* Two IPC streams one after another whose dictionaries differ: the file
 * format cannot replace a dictionary, so `convert --file` fails, naming
 * the input, where the other dictionary is (it named OUT, with the input's
 * offsets), as IPC streams and as Comet blocks, and must free the input's
 * reader all the same (a leak once, reported by LeakSanitizer after the
 * clean error). */
static void check_convert_file_dictionaries(void) {
  char gold[4096];
  tu_testdata_path(gold, sizeof gold, "arrow-gold/1.0.0-littleendian/generated_dictionary.stream");
  tu_bytes ipc = tu_read_bytes(gold);
  TU_CHECK(ipc.data != NULL, "cannot read %s", gold);
  if (ipc.data == NULL) return;
  tu_bytes two = {0};
  tu_bytes_append(&two, ipc.data, ipc.size);
  tu_bytes_append(&two, ipc.data, ipc.size);
  uint8_t *hit = find_bytes(two.data + ipc.size, ipc.size, "be\xc2\xa3jdbi");
  TU_CHECK(hit != NULL, "%s holds no dictionary value to change", gold);
  if (hit != NULL) hit[0] ^= 0x20; /* its case: the second stream's dictionary differs */
  TMP_PATH(in, "two_dictionaries.arrows");
  TMP_PATH(out, "two_dictionaries.arrow");
  TU_CHECK(tu_write_file(in, two.data, two.size) == 0, "cannot write %s", in);
  unlink(out);
  tu_cli_result r = run("convert '%s' '%s' --file", in, out);
  char where[4400]; /* the error says where in the input the other dictionary is: named so */
  snprintf(where, sizeof where, "xchg: %s: IPC stream 2 at byte %zu: message ", in, ipc.size);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "cannot replace dictionary") != NULL &&
               strncmp(r.err, where, strlen(where)) == 0 && strstr(r.err, "Sanitizer") == NULL &&
               access(out, F_OK) != 0,
           "convert --file of streams with other dictionaries: exit %d, OUT %s, stderr %s",
           r.exit_code, access(out, F_OK) == 0 ? "written" : "absent", r.err);
  tu_cli_result_free(&r);
  expect_replacement_named(in);
  /* After 80 record batches, which the reader reads far ahead of the
   * writer: the batch named is still the one refused. */
  tu_bytes many = {0};
  for (int i = 0; i < 40; i++) tu_bytes_append(&many, ipc.data, ipc.size);
  tu_bytes_append(&many, two.data + ipc.size, ipc.size);
  TMP_PATH(after_many, "many_then_other_dictionaries.arrows");
  TU_CHECK(tu_write_file(after_many, many.data, many.size) == 0, "cannot write %s", after_many);
  free(many.data);
  expect_replacement_named(after_many);
  /* The same as Comet blocks, read by the shuffle reader: the input named. */
  tu_bytes blocks = {0};
  bool built = tu_append_comet_block(&blocks, two.data, ipc.size, XCHG_STREAM_NONE, 3) &&
               tu_append_comet_block(&blocks, two.data + ipc.size, ipc.size, XCHG_STREAM_NONE, 3);
  TMP_PATH(comet, "two_dictionaries.comet");
  TU_CHECK(built && tu_write_file(comet, blocks.data, blocks.size) == 0, "cannot write %s", comet);
  free(blocks.data);
  r = run("convert '%s' '%s' --file", comet, out);
  snprintf(where, sizeof where, "xchg: %s: ", comet);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "cannot replace dictionary") != NULL &&
               strncmp(r.err, where, strlen(where)) == 0 && access(out, F_OK) != 0,
           "convert --file of Comet blocks with other dictionaries: exit %d, OUT %s, stderr %s",
           r.exit_code, access(out, F_OK) == 0 ? "written" : "absent", r.err);
  tu_cli_result_free(&r);
  free(two.data);
  free(ipc.data);
}

/* Appends the apache-arrow streams names[0..n) (blocks.mjs writes each as
 * NAME.stream in tmp) to out: as Comet blocks of field count `fields`
 * compressed with inner, or as they are for fields -1. */
static void append_streams(tu_bytes *out, const char *const *names, int n, xchg_stream_codec inner,
                           int64_t fields) {
  for (int k = 0; k < n; k++) {
    TMP_PATH(stream, names[k]);
    strcat(stream, ".stream");
    tu_bytes ipc = tu_read_bytes(stream);
    TU_CHECK(ipc.data != NULL, "cannot read %s", stream);
    if (ipc.data != NULL && fields < 0) tu_bytes_append(out, ipc.data, ipc.size);
    if (ipc.data != NULL && fields >= 0)
      tu_append_comet_block(out, ipc.data, ipc.size, inner, fields);
    free(ipc.data);
  }
}

/* Blocks that Apache Arrow JS wrote (tests/interop/arrowjs/blocks.mjs): a
 * record batch of no rows, and dictionary batches that are deltas
 * (isDelta), between two record batches of a block and after a whole
 * dictionary.  `cat` of their file prints, in every format, byte for byte
 * what reading them block by block does; the json and arrow-json say what
 * apache-arrow reads from its streams, value by value (and arrow-json
 * every batch, the empty one too); `convert` keeps every value. */
static void check_cat_arrowjs_blocks(void) {
  char msg[1024];
  if (!TU_CHECK(tu_interop_ready("arrowjs", "apache-arrow", msg, sizeof msg) == 0,
                "apache-arrow interop: %s", msg))
    return;
  const char *js = tu_interop_dir("arrowjs");
  TMP_PATH(list, "js-blocks.txt");
  TU_CHECK(tu_run("cd '%s' && node blocks.mjs '%s' > '%s'", js, tmp, list) == 0,
           "node blocks.mjs %s", tmp);
  char names[8][64];
  const char *name_of[8];
  int n = 0;
  FILE *f = fopen(list, "r");
  for (; f && n < 8 && fscanf(f, "%63s", names[n]) == 1; n++) name_of[n] = names[n];
  if (f) fclose(f);
  TU_CHECK(n == 4, "blocks.mjs wrote %d blocks, not 4", n);
  static const xchg_stream_codec inner[] = {XCHG_STREAM_NONE, XCHG_STREAM_LZ4_FRAME};
  for (int c = 0; c < 2; c++) {
    tu_bytes blocks = {0};
    append_streams(&blocks, name_of, n, inner[c], 2);
    TMP_PATH(path, "js.comet");
    TU_CHECK(tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
    free(blocks.data);
    static const char *const options[] = {"", "--limit 4", "--limit 6", "--columns n,colour",
                                          "--limit 0"};
    for (int g = 0; g < 3; g++)
      for (size_t o = 0; o < sizeof options / sizeof options[0]; o++) {
        char opts[128];
        snprintf(opts, sizeof opts, "--format %s %s", cat_formats[g], options[o]);
        expect_cat_same(path, opts);
      }
    static const char *const checked[] = {"json", "arrow-json"};
    for (int g = 0; g < 2; g++) {
      TMP_PATH(out, "js.out"); /* beside the streams: blocks.mjs reads them again */
      TU_CHECK(tu_run("'%s' cat '%s' --format %s > '%s' && cd '%s' && node blocks.mjs --check-%s "
                      "'%s'",
                      cli, path, checked[g], out, js, checked[g], out) == 0,
               "%s: cat --format %s is not what apache-arrow reads", path, checked[g]);
    }
    TMP_PATH(converted, "js.arrow");
    must_run("convert of the apache-arrow blocks", run("convert '%s' '%s' -f", path, converted));
    /* inspect's batches are convert's: the dictionaries that change cut them */
    tu_cli_result r = run("inspect '%s'", path);
    const char *line = strstr(r.out, " on the wire, coalesced into ");
    long long batches = -1;
    TU_CHECK(r.exit_code == 0 && line &&
                 sscanf(line, " on the wire, coalesced into %lld", &batches) == 1,
             "inspect of the apache-arrow blocks: exit %d: %s%s", r.exit_code, r.out, r.err);
    tu_cli_result_free(&r);
    expect_same_rows(path, converted, 11, batches);
    TU_CHECK(batches > 1, "the apache-arrow blocks coalesce into %lld batches", batches);
  }
}

/* The IPC streams (or Comet blocks of field count `fields`, 0: read block
 * by block; -1: plain IPC) of the apache-arrow streams names[0..n) one
 * after another, converted with `opts`: apache-arrow finds in OUT the
 * batches `want` lists (blocks.mjs --batches). */
static void expect_converted_batches(const char *const *names, int n, int64_t fields,
                                     const char *opts, const char *want) {
  tu_bytes in = {0};
  append_streams(&in, names, n, XCHG_STREAM_NONE, fields);
  TMP_PATH(path, "empty-other.in");
  TMP_PATH(out, "empty-other.arrow");
  TMP_PATH(list, "empty-other.txt");
  TU_CHECK(tu_write_file(path, in.data, in.size) == 0, "cannot write %s", path);
  free(in.data);
  must_run("convert", run("convert '%s' '%s' -f %s", path, out, opts));
  int rc = tu_run("cd '%s' && node blocks.mjs --batches '%s' > '%s'", tu_interop_dir("arrowjs"),
                  out, list);
  size_t size = 0;
  char *got = (char *)tu_read_file(list, &size);
  TU_CHECK(rc == 0 && got != NULL && size == strlen(want) && memcmp(got, want, size) == 0,
           "convert %s of %s%s (field count %lld): apache-arrow reads the batches\n%.*s, not\n%s",
           opts, names[0], n > 1 ? " and more" : "", (long long)fields, (int)size, got ? got : "",
           want);
  free(got);
}

/* A record batch of no rows whose dictionary the next batch's neither
 * equals nor extends (apache-arrow's blocks "empty" and "other"), written
 * by convert's coalescing (--batch-rows, or Comet blocks read block by
 * block): the rows come out alone, without a batch of 0 rows before them
 * (which the dictionary change flushed once) or after them; an input of no
 * rows keeps one empty batch (writer.h; apache-arrow reads an IPC stream
 * of no batch as one empty batch too, so this says only that there are
 * not two). */
static void check_convert_no_empty_batch(void) {
  char msg[1024];
  if (!TU_CHECK(tu_interop_ready("arrowjs", "apache-arrow", msg, sizeof msg) == 0,
                "apache-arrow interop: %s", msg))
    return;
  const char *js = tu_interop_dir("arrowjs");
  TU_CHECK(tu_run("cd '%s' && node blocks.mjs '%s' >/dev/null && node blocks.mjs --other '%s'", js,
                  tmp, tmp) == 0,
           "node blocks.mjs %s", tmp);
  static const char *const empty_other[] = {"empty", "other"}, *const other_empty[] = {"other",
                                                                                       "empty"};
  static const char *const empty_empty[] = {"empty", "empty"};
  static const char *const rows = "blue/1 amber/2 blue/3\n";
  static const char *const batch_rows[] = {"--batch-rows 1", "--batch-rows 3", "--batch-rows 100"};
  for (size_t b = 0; b < sizeof batch_rows / sizeof batch_rows[0]; b++) {
    expect_converted_batches(empty_other, 2, -1, batch_rows[b], rows);
    expect_converted_batches(other_empty, 2, -1, batch_rows[b], rows);
    expect_converted_batches(empty_other, 2, 0, batch_rows[b], rows);
    expect_converted_batches(empty_other, 2, 2, batch_rows[b], rows);
    expect_converted_batches(empty_empty, 2, -1, batch_rows[b], "\n");
  }
  expect_converted_batches(empty_other, 2, 0, "", rows);
  expect_converted_batches(other_empty, 2, 0, "", rows);
  expect_converted_batches(empty_empty, 2, 0, "", "\n");
}

/* `cat --limit N` of a file of Comet blocks reads the blocks of the first
 * N rows only, as `head` expects: blocks after them damaged (a bad codec
 * tag, then the file cut inside a block), the first N rows print all the
 * same, exit 0, as of the whole file; a file cut inside the blocks of the
 * first N rows fails, printing nothing, the block named. */
static void check_cat_limit(void) {
  TMP_PATH(in, "limit.comet");
  TMP_PATH(bad, "limit-bad.comet");
  gen_shuffle(in, "comet", "lz4", 5); /* blocks of 64 rows */
  tu_bytes b = tu_read_bytes(in);
  TU_CHECK(b.data != NULL && b.size > 40, "cannot read %s", in);
  if (b.data == NULL || b.size <= 40) return;
  size_t starts[158];
  int n = 0;
  for (size_t at = 0; at + 20 <= b.size && n < 158; n++) {
    starts[n] = at;
    uint64_t length = 0;
    for (int k = 7; k >= 0; k--) length = length << 8 | b.data[at + (size_t)k];
    at += 8 + (size_t)length;
  }
  TU_CHECK(n == 157, "%d blocks, not 157", n);
  if (n != 157) {
    free(b.data);
    return;
  }
  memcpy(b.data + starts[3] + 16, "XXXX", 4); /* block 3, rows 192..255 */
  TU_CHECK(tu_write_file(bad, b.data, starts[9] + 30) == 0, "cannot write %s", bad);
  static const char *const limits[] = {"--limit 0", "--limit 1", "--limit 100", "--limit 192"};
  for (int f = 0; f < 3; f++)
    for (int l = 0; l < 4; l++) {
      tu_cli_result whole = run("cat '%s' --format %s %s", in, cat_formats[f], limits[l]);
      tu_cli_result cut = run("cat '%s' --format %s %s", bad, cat_formats[f], limits[l]);
      TU_CHECK(whole.exit_code == 0 && cut.exit_code == 0 && cut.out_len == whole.out_len &&
                   memcmp(cut.out, whole.out, cut.out_len) == 0,
               "cat --format %s %s of blocks damaged after the limit: exit %d, %zu bytes (the "
               "whole file: exit %d, %zu bytes): %s",
               cat_formats[f], limits[l], cut.exit_code, cut.out_len, whole.exit_code,
               whole.out_len, cut.err);
      tu_cli_result_free(&whole);
      tu_cli_result_free(&cut);
    }
  char want[64];
  snprintf(want, sizeof want, "block 3 (source 0, byte %zu): ", starts[3]);
  for (int f = 0; f < 3; f++) {
    tu_cli_result r = run("cat '%s' --format %s --limit 193", bad, cat_formats[f]);
    TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, want),
             "cat --format %s --limit 193 of a bad block 3: exit %d, %zu bytes, %s (want %s)",
             cat_formats[f], r.exit_code, r.out_len, r.err, want);
    tu_cli_result_free(&r);
  }
  memcpy(b.data + starts[3] + 16, "LZ4_", 4);
  TU_CHECK(tu_write_file(bad, b.data, starts[3] + 30) == 0, "cannot write %s", bad);
  for (int f = 0; f < 3; f++) {
    tu_cli_result r = run("cat '%s' --format %s --limit 1000", bad, cat_formats[f]);
    TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, want) &&
                 strstr(r.err, "the block is cut short: the input ends at byte "),
             "cat --format %s --limit 1000 of a file cut in block 3: exit %d, %zu bytes, %s",
             cat_formats[f], r.exit_code, r.out_len, r.err);
    tu_cli_result_free(&r);
  }
  free(b.data);
}

/* `cat --limit N` of plain IPC reads as far as the first N rows only,
 * as of Comet blocks: a file of IPC streams (blocks of 64 rows) cut in
 * its tenth stream, and one IPC stream of 10,000-row batches cut in its
 * third batch, print their first N rows as the whole files do, exit 0;
 * a limit whose rows reach the cut fails before any output. */
static void check_cat_limit_ipc(void) {
  TMP_PATH(blocks, "limit.ipc");
  TMP_PATH(table, "limit.arrows");
  TMP_PATH(cut, "limit-cut.arrows");
  gen_shuffle(blocks, "ipc", "lz4", 5);
  must_run("gen cache", run("gen cache '%s' --rows 30000 --compression zstd -f", table));
  const char *const inputs[] = {blocks, table};
  const double cut_at[] = {9.5 / 157, 2.5 / 3}; /* of the file's bytes */
  const char *const fits[] = {"--limit 0", "--limit 1", "--limit 100", "--limit 576"};
  const char *const reaches[] = {"--limit 700", "--limit 25000"};
  for (int i = 0; i < 2; i++) {
    tu_bytes b = tu_read_bytes(inputs[i]);
    TU_CHECK(b.data != NULL && b.size > 1000, "cannot read %s", inputs[i]);
    if (b.data == NULL || b.size <= 1000) return;
    TU_CHECK(tu_write_file(cut, b.data, (size_t)((double)b.size * cut_at[i])) == 0,
             "cannot write %s", cut);
    free(b.data);
    for (int f = 0; f < 3; f++) {
      for (int l = 0; l < 4; l++) {
        tu_cli_result whole = run("cat '%s' --format %s %s", inputs[i], cat_formats[f], fits[l]);
        tu_cli_result part = run("cat '%s' --format %s %s", cut, cat_formats[f], fits[l]);
        TU_CHECK(whole.exit_code == 0 && part.exit_code == 0 && part.out_len == whole.out_len &&
                     memcmp(part.out, whole.out, part.out_len) == 0,
                 "cat --format %s %s of %s cut after the limit: exit %d, %zu bytes (whole: "
                 "exit %d, %zu bytes): %s",
                 cat_formats[f], fits[l], inputs[i], part.exit_code, part.out_len, whole.exit_code,
                 whole.out_len, part.err);
        tu_cli_result_free(&whole);
        tu_cli_result_free(&part);
      }
      tu_cli_result r = run("cat '%s' --format %s %s", cut, cat_formats[f], reaches[i]);
      TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, "is cut short"),
               "cat --format %s %s of %s cut inside those rows: exit %d, %zu bytes, %s",
               cat_formats[f], reaches[i], inputs[i], r.exit_code, r.out_len, r.err);
      tu_cli_result_free(&r);
    }
  }
}

/* A damaged block: nothing printed, exit 1, the error naming the block and
 * its byte offset as the shuffle reader does ("block N (source 0, byte
 * B): ..."), which reading block by block does not. */
static void check_cat_bad_block(void) {
  TMP_PATH(in, "cat.comet");
  TMP_PATH(bad, "cat-bad.comet");
  gen_shuffle(in, "comet", "zstd", 5);
  tu_bytes b = tu_read_bytes(in);
  TU_CHECK(b.data != NULL && b.size > 40, "cannot read %s", in);
  if (b.data == NULL || b.size <= 40) return;
  uint64_t first = 0;
  for (int k = 7; k >= 0; k--) first = first << 8 | b.data[k];
  TU_CHECK(first + 8 + 20 < b.size, "the first block's length %llu", (unsigned long long)first);
  if (first + 8 + 20 < b.size) memcpy(b.data + 8 + first + 16, "XXXX", 4); /* block 1's tag */
  TU_CHECK(tu_write_file(bad, b.data, b.size) == 0, "cannot write %s", bad);
  free(b.data);
  char want[64];
  snprintf(want, sizeof want, "block 1 (source 0, byte %llu): ", (unsigned long long)(first + 8));
  for (int f = 0; f < 3; f++) {
    tu_cli_result r = run("cat '%s' --format %s", bad, cat_formats[f]);
    TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, want) != NULL,
             "cat --format %s of a bad block: exit %d, %zu bytes out, stderr %s (want %s)",
             cat_formats[f], r.exit_code, r.out_len, r.err, want);
    tu_cli_result_free(&r);
    r = run("cat --format %s --limit 65 --columns c2 '%s'", cat_formats[f], bad);
    TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, want) != NULL,
             "cat --limit 65 of a bad block 1: exit %d, %zu bytes out, stderr %s (want %s)",
             r.exit_code, r.out_len, r.err, want);
    tu_cli_result_free(&r);
  }
  /* Through a pipe, nothing checked first, the same: the output begins
   * with the first batch, which holds the bad block. */
  for (int f = 0; f < 2; f++)
    expect_cat_fails_alike(bad, f ? "--format json" : "--format csv", want);
  /* The rows come from the shuffle reader too, not only the check before:
   * a block whose framing is sound but whose body is not (the second half
   * of block 1 of NONE blocks overwritten, offsets among it) passes the
   * check, which decodes no column, and fails as the shuffle reader
   * decodes it. */
  gen_shuffle(in, "comet", "none", 5);
  b = tu_read_bytes(in);
  TU_CHECK(b.data != NULL && b.size > 40, "cannot read %s", in);
  if (b.data == NULL || b.size <= 40) return;
  first = 0;
  for (int k = 7; k >= 0; k--) first = first << 8 | b.data[k];
  uint64_t start = 8 + first, length = 0; /* block 1 */
  for (int k = 7; k >= 0 && start + 8 < b.size; k--) length = length << 8 | b.data[start + k];
  TU_CHECK(start + 8 + length < b.size && length > 64, "block 1: %llu bytes at %llu",
           (unsigned long long)length, (unsigned long long)start);
  if (start + 8 + length < b.size && length > 64)
    memset(b.data + start + 8 + length / 2, 0xFF, length / 2 - 8); /* up to the end-of-stream */
  TU_CHECK(tu_write_file(bad, b.data, b.size) == 0, "cannot write %s", bad);
  free(b.data);
  snprintf(want, sizeof want, "block 1 (source 0, byte %llu): ", (unsigned long long)start);
  for (int f = 0; f < 3; f++) {
    tu_cli_result r = run("cat '%s' --format %s", bad, cat_formats[f]);
    TU_CHECK(r.exit_code == 1 && strstr(r.err, want) != NULL,
             "cat --format %s of a bad body: exit %d, stderr %s (want %s)", cat_formats[f],
             r.exit_code, r.err, want);
    tu_cli_result_free(&r);
  }
  /* Through a pipe, the same: the bad block is in the first batch. */
  for (int f = 0; f < 2; f++)
    expect_cat_fails_alike(bad, f ? "--format json" : "--format csv", want);
  /* Block by block (field counts zeroed) the first block prints before the
   * second fails, and the error does not take the shuffle reader's form. */
  TMP_PATH(zeroed, "cat-bad-zeroed.comet");
  zero_field_counts(bad, zeroed);
  tu_cli_result r = run("cat '%s'", zeroed);
  TU_CHECK(r.exit_code == 1 && r.out_len > 0 && strstr(r.err, "(source 0, byte ") == NULL,
           "cat of a bad block read block by block: exit %d, %zu bytes out, stderr %s", r.exit_code,
           r.out_len, r.err);
  tu_cli_result_free(&r);
}

/* Where block `index` of the Comet blocks b begins. */
static size_t block_start(const tu_bytes *b, int index) {
  size_t at = 0;
  for (int n = 0; n < index && b->size - at >= 8; n++) {
    uint64_t length = 0;
    for (int k = 7; k >= 0; k--) length = length << 8 | b->data[at + (size_t)k];
    at += 8 + (size_t)(length < b->size - at - 8 ? length : b->size - at - 8);
  }
  return at;
}

/* Comet blocks through a pipe go through the shuffle reader as the file
 * does: `cat -` and `convert -` of a bad block past the first batch (block
 * 140, rows 8960..9023) fail with the file's error, word for word, naming
 * the block and its byte offset; `cat -`, which cannot read a pipe through
 * first, prints the first batch of 8192 rows before it, as the good file
 * begins; `inspect -` says what `inspect FILE` does, good or bad, of IPC
 * streams too, and `cat -` of IPC streams prints what `cat FILE` does. */
static void check_pipe(void) {
  TMP_PATH(in, "pipe.comet");
  TMP_PATH(bad, "pipe-bad.comet");
  gen_shuffle(in, "comet", "lz4", 5);
  tu_bytes b = tu_read_bytes(in);
  size_t at = block_start(&b, 140);
  TU_CHECK(b.data != NULL && at + 20 < b.size, "cannot read %s", in);
  if (b.data == NULL || at + 20 >= b.size) return;
  memcpy(b.data + at + 16, "XXXX", 4);
  TU_CHECK(tu_write_file(bad, b.data, b.size) == 0, "cannot write %s", bad);
  free(b.data);
  char want[64];
  snprintf(want, sizeof want, "block 140 (source 0, byte %zu): unknown codec tag", at);
  tu_cli_result named = run("cat '%s'", bad), through = piped(bad, "cat -");
  tu_cli_result good = run("cat '%s' --limit 8192", in);
  TU_CHECK(named.exit_code == 1 && named.out_len == 0 && strstr(named.err, want) &&
               through.exit_code == 1 && same_error(named.err, through.err) &&
               through.out_len == good.out_len && memcmp(through.out, good.out, good.out_len) == 0,
           "cat of a bad block 140: exit %d, %s; through a pipe: exit %d, %zu bytes (want %zu), %s",
           named.exit_code, named.err, through.exit_code, through.out_len, good.out_len,
           through.err);
  tu_cli_result_free(&named);
  tu_cli_result_free(&through);
  tu_cli_result_free(&good);
  expect_refused("a bad block 140", bad, "", want);
  static const char *const inputs[] = {"pipe.comet", "pipe-bad.comet", "in.ipc"};
  TMP_PATH(ipc, "in.ipc");
  gen_shuffle(ipc, "ipc", "zstd", 5);
  /* IPC streams one after another: an IPC reader per stream either way. */
  tu_cli_result streams = run("cat '%s' --format json", ipc);
  TU_CHECK(streams.exit_code == 0 && streams.out_len > 0, "cat of IPC streams: exit %d: %s",
           streams.exit_code, streams.err);
  expect_piped_like(ipc, "--format json", &streams);
  tu_cli_result_free(&streams);
  for (int i = 0; i < 3; i++)
    for (int json = 0; json < 2; json++) {
      TMP_PATH(path, inputs[i]);
      tu_cli_result a = run("inspect %s '%s'", json ? "--json" : "", path);
      tu_cli_result c = piped(path, "inspect %s -", json ? "--json" : "");
      /* The same but the file's name. */
      const char *x = after_name(a.out, json), *y = after_name(c.out, json);
      TU_CHECK(
          a.exit_code == (i == 1) && c.exit_code == a.exit_code &&
              (i == 1 ? same_error(a.err, c.err) && strstr(a.err, "comet block 140")
                      : x != NULL && y != NULL && strcmp(x, y) == 0 &&
                            strstr(x, json ? "\"blocks\": {\"count\": 157" : "\nblocks: 157 ")),
          "inspect%s - of %s through a pipe: exit %d (the file: exit %d): %.3000s%s",
          json ? " --json" : "", inputs[i], c.exit_code, a.exit_code, c.out, c.err);
      tu_cli_result_free(&a);
      tu_cli_result_free(&c);
    }
  /* inspect reads an IPC stream per block (the decoder's view of each):
   * the read that fails is placed in the decoded bytes, where block 140's
   * IPC stream begins, not at 0 of a view made for it. */
  tu_cli_result r = run("inspect '%s'", bad);
  const char *at_stream = strstr(r.err, "IPC stream 141 at decoded byte ");
  unsigned long long begins = 0, read_at = 1;
  TU_CHECK(at_stream &&
               sscanf(at_stream,
                      "IPC stream 141 at decoded byte %llu: reading at decoded byte %llu:", &begins,
                      &read_at) == 2 &&
               begins > 0 && read_at == begins,
           "inspect of a bad block 140: %s", r.err);
  tu_cli_result_free(&r);
}

static void check_inspect(void) {
  static const char *const codecs[] = {"none", "lz4", "zstd", "snappy"};
  TMP_PATH(in, "in.comet");
  for (int i = 0; i < 4; i++) {
    gen_shuffle(in, "comet", codecs[i], 5);
    long long size = 0;
    tu_bytes b = tu_read_bytes(in);
    size = (long long)b.size;
    free(b.data);
    char want[256];
    snprintf(want, sizeof want, "\nblocks: 157 Comet blocks (%s), 10000 rows, ", codecs[i]);
    char coalesced[] = " on the wire, coalesced into 2 batches, target 8192 rows\n";
    tu_cli_result r = run("inspect '%s'", in);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, want) && strstr(r.out, coalesced),
             "inspect of %s blocks: exit %d: %s%s", codecs[i], r.exit_code, r.out, r.err);
    tu_cli_result_free(&r);
    snprintf(want, sizeof want,
             "\"blocks\": {\"count\": 157, \"rows\": 10000, \"wire_bytes\": %lld, \"batches\": 2, "
             "\"batch_rows\": 8192, \"convert_batches\": 2, \"codecs\": {\"%s\": 157}}\n}\n",
             size, codecs[i]);
    r = run("inspect --json '%s'", in);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, want),
             "inspect --json of %s blocks: exit %d: %s%s (want %s)", codecs[i], r.exit_code, r.out,
             r.err, want);
    tu_cli_result_free(&r);
  }
}

/* How often text occurs in s. */
static int occurrences(const char *s, const char *text) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, text)) != NULL; p += strlen(text)) n++;
  return n;
}

/* `inspect` of plain IPC streams one after another (a shuffle writer's
 * file of IPC blocks) sums them up as the shuffle reader reads them, as it
 * does Comet blocks: count, body compression, rows, wire bytes, batches;
 * the streams after the first are shown only with --streams, in text and
 * JSON; the first one's header line is there either way ("IPC stream 1
 * at byte 0"), as the others' are.  Streams of two schemas are all shown,
 * the blocks line saying why they are not one table. */
static void check_inspect_ipc_streams(void) {
  static const char *const codecs[] = {"none", "lz4", "zstd"};
  TMP_PATH(in, "in.ipc");
  for (int i = 0; i < 3; i++) {
    gen_shuffle(in, "ipc", codecs[i], 5);
    tu_bytes b = tu_read_bytes(in);
    long long size = (long long)b.size;
    free(b.data);
    char want[256];
    snprintf(want, sizeof want, "\nblocks: 157 IPC streams (%s), 10000 rows, ", codecs[i]);
    tu_cli_result r = run("inspect '%s'", in);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, want) &&
                 strstr(r.out,
                        " on the wire, which a shuffle reader coalesces into 2 batches, "
                        "target 8192 rows (convert keeps their batches unless "
                        "--batch-rows is given)\n") &&
                 occurrences(r.out, "\nschema: ") == 1 &&
                 strstr(r.out, "\nIPC stream 1 at byte 0\nformat: Arrow IPC stream\n") &&
                 strstr(r.out, "\nIPC streams 2 to 157, of the first one's schema: not shown") &&
                 !strstr(r.out, "IPC stream 2 at byte"),
             "inspect of %s IPC streams: exit %d: %.2000s%s", codecs[i], r.exit_code, r.out, r.err);
    tu_cli_result_free(&r);
    /* and convert does what the line says: the 157 streams' batches kept */
    TMP_PATH(kept, "kept.arrows");
    must_run("convert of IPC streams", run("convert '%s' '%s' -f", in, kept));
    expect_same_rows(in, kept, 10000, 157);
    r = run("inspect --streams '%s'", in);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, want) && occurrences(r.out, "\nschema: ") == 157 &&
                 strstr(r.out, "\nIPC stream 1 at byte 0\nformat: Arrow IPC stream\n") &&
                 strstr(r.out, "\nIPC stream 2 at byte ") &&
                 strstr(r.out, "\nIPC stream 157 at byte "),
             "inspect --streams of %s IPC streams: exit %d, %d schemas: %s", codecs[i], r.exit_code,
             occurrences(r.out, "\nschema: "), r.err);
    tu_cli_result_free(&r);
    snprintf(want, sizeof want,
             "\"blocks\": {\"count\": 157, \"rows\": 10000, \"wire_bytes\": %lld, \"batches\": 2, "
             "\"batch_rows\": 8192, \"convert_batches\": 157, \"codecs\": {\"%s\": 157}}\n}\n",
             size, codecs[i]);
    for (int all = 0; all < 2; all++) {
      r = run("inspect --json %s '%s'", all ? "--streams" : "", in);
      TU_CHECK(r.exit_code == 0 && strstr(r.out, want) &&
                   occurrences(r.out, "\"format\": \"stream\"") == (all ? 157 : 1),
               "inspect --json%s of %s IPC streams: exit %d, %d streams: %.3000s%s (want %s)",
               all ? " --streams" : "", codecs[i], r.exit_code,
               occurrences(r.out, "\"format\": \"stream\""), r.out, r.err, want);
      tu_cli_result_free(&r);
    }
  }
  tu_cli_result usage = run("inspect --rows --streams '%s'", in);
  TU_CHECK(usage.exit_code == 2 && strstr(usage.err, "--streams goes without --rows"),
           "inspect --rows --streams: exit %d: %s", usage.exit_code, usage.err);
  tu_cli_result_free(&usage);
  /* Then streams of 3 columns: not one table. */
  TMP_PATH(three, "three.ipc");
  gen_shuffle(three, "ipc", "none", 3);
  tu_bytes mixed = tu_read_bytes(in), tail = tu_read_bytes(three);
  size_t at = mixed.size;
  tu_bytes_append(&mixed, tail.data, tail.size);
  TMP_PATH(bad, "mixed.ipc");
  TU_CHECK(tu_write_file(bad, mixed.data, mixed.size) == 0, "cannot write %s", bad);
  free(mixed.data);
  free(tail.data);
  char want[128];
  snprintf(want, sizeof want,
           "\nblocks: not read as shuffle blocks: block 157 (source 0, byte %zu): ", at);
  tu_cli_result r = run("inspect '%s'", bad);
  TU_CHECK(r.exit_code == 0 && strstr(r.out, want) && occurrences(r.out, "\nschema: ") == 314,
           "inspect of IPC streams of two schemas: exit %d, %d schemas: %s (want %s)", r.exit_code,
           occurrences(r.out, "\nschema: "), r.err, want);
  tu_cli_result_free(&r);
  r = run("inspect --json '%s'", bad);
  TU_CHECK(r.exit_code == 0 &&
               strstr(r.out, "\"blocks\": {\"error\": \"block 157 (source 0, byte ") &&
               occurrences(r.out, "\"format\": \"stream\"") == 314,
           "inspect --json of IPC streams of two schemas: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
}

/* inspect of a named FIFO (/dev/stdin on a pipe here; a shell's <(...),
 * mkfifo's) reads it twice as it reads a file of blocks, once per IPC
 * stream and once by the shuffle reader: it is copied first, as `inspect -`
 * copies a pipe, and says what inspect of the file does, not "0 Comet
 * blocks, 0 rows" (the second read finding the pipe drained) nor waiting
 * for a second writer (a FIFO opened again). */
static void check_named_fifo(void) {
  static const char *const inputs[] = {"fifo.comet", "fifo.ipc"};
  TMP_PATH(comet, "fifo.comet");
  TMP_PATH(ipc, "fifo.ipc");
  gen_shuffle(comet, "comet", "lz4", 3);
  gen_shuffle(ipc, "ipc", "zstd", 3);
  for (int i = 0; i < 2; i++)
    for (int json = 0; json < 2; json++) {
      TMP_PATH(path, inputs[i]);
      tu_cli_result a = run("inspect %s '%s'", json ? "--json" : "", path);
      tu_cli_result c = piped(path, "inspect %s /dev/stdin", json ? "--json" : "");
      /* The same but the file's name. */
      const char *x = after_name(a.out, json), *y = after_name(c.out, json);
      TU_CHECK(a.exit_code == 0 && c.exit_code == 0 && x != NULL && y != NULL &&
                   strcmp(x, y) == 0 &&
                   strstr(x, json ? "\"blocks\": {\"count\": 157" : "\nblocks: 157 "),
               "inspect%s /dev/stdin of %s through a pipe: exit %d: %.3000s%s",
               json ? " --json" : "", inputs[i], c.exit_code, c.out, c.err);
      tu_cli_result_free(&a);
      tu_cli_result_free(&c);
    }
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  if (mkdtemp(tmp) == NULL) {
    perror("test_cli_shuffle: mkdtemp");
    return 1;
  }
  static const tu_case cases[] = {
      {"codecs", check_codecs},
      {"batch_rows", check_batch_rows},
      {"threads", check_threads},
      {"inspect", check_inspect},
      {"inspect_ipc_streams", check_inspect_ipc_streams},
      {"bad_blocks", check_bad_blocks},
      {"cat", check_cat},
      {"cat_dictionaries", check_cat_dictionaries},
      {"convert_file_dictionaries", check_convert_file_dictionaries},
      {"cat_bad_block", check_cat_bad_block},
      {"cat_arrowjs_blocks", check_cat_arrowjs_blocks},
      {"convert_no_empty_batch", check_convert_no_empty_batch},
      {"cat_limit", check_cat_limit},
      {"cat_limit_ipc", check_cat_limit_ipc},
      {"pipe", check_pipe},
      {"named_fifo", check_named_fifo},
      {"gen_no_rows", check_gen_no_rows},
  };
  int rc = TU_MAIN(argc, argv, "cli_shuffle", cases);
  tu_run("rm -rf '%s'", tmp);
  return rc;
}
