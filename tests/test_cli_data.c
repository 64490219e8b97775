/* tests/test_cli_data.c — the `xchg` command ($XCHG_CLI) neither loses nor
 * invents data on inputs made of several IPC streams or files, and keeps
 * what it writes off the input and off a terminal (issue 19, items 1-5, 8):
 *
 *  1. `convert` of IPC streams one after another (two streams `cat`ed into
 *     one file, on standard input too; 64 Comet blocks) writes every batch
 *     of every stream, equal (array_equal) to the inputs' own batches in
 *     order; a schema change is an error naming the IPC stream, its byte
 *     offset and the column that differs, and leaves no OUT (nor anything on
 *     a standard output that is written to); `convert --batch-rows N` never
 *     ends its output with a batch of 0 rows (empty input batches after the
 *     last flush are dropped), and keeps the one of an input of no rows;
 *  2. two IPC files concatenated (`cat f1 f2 > f`, the same schema):
 *     `inspect`, `cat` and `convert` see both files' rows, from the file
 *     and through a pipe; the library reads the first file alone and says
 *     where it ends (xchg_ipc_reader_stream_end), with its own footer;
 *     bytes after the files that are not IPC are an error as plain as after
 *     a stream, before any output for a file on disk; a footer that is
 *     another file's names the column and what differs; `cat --format
 *     arrow-json` of IPC streams whose dictionary ids differ in a selected
 *     column names the column and both ids, before any output for a file
 *     on disk, while csv and json print the rows of both; an IPC file
 *     with no schema message (as Arrow JS writes it) followed by a stream,
 *     given as a named FIFO (/dev/stdin on a pipe), is read by `cat` and
 *     `convert` as `-` through a pipe is, and as the file is;
 *  3. `cat IN >> IN`, `cat - < IN >> IN` and `inspect IN >> IN` are
 *     refused and IN is left as it was;
 *  4. `--input-codec` names the input's stream codec in every command and
 *     is detected by default: `xchg gen broadcast - | xchg convert - OUT`
 *     works; `--compression` names the output's body compression; the old
 *     `--codec` still works with a warning on standard error;
 *  5. `inspect --rows` of a cut row stream prints nothing on standard
 *     output;
 *  8. `convert` and `gen` with standard output on a terminal (a pty) are
 *     refused, and write it with -f/--force. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/encoded.h"
#include "support/array_equal.h"
#include "support/cli_run.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/testing.h"
#include "xchg/xchg.h"

static const char *cli;
static char gold[4096];
static char tmp[] = "/tmp/test_cli_data_XXXXXX";

/* `xchg args` (tu_cli_runf); the result must be freed. */
#define run(...) tu_cli_runf(cli, __VA_ARGS__)

/* char var[] = tmp/name */
#define TMP_PATH(var, name) \
  char var[4200];           \
  snprintf(var, sizeof var, "%s/%s", tmp, name)

static const char *in_gold(const char *name) {
  static char paths[8][4200];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, sizeof paths[0], "%s/%s", gold, name);
  return p;
}

static void gen(const char *args) {
  tu_cli_result r = run("gen %s -f", args);
  TU_CHECK(r.exit_code == 0, "gen %s: exit %d: %s", args, r.exit_code, r.err);
  tu_cli_result_free(&r);
}

/* out = the files given (NULL-terminated), one after another, then tail. */
static size_t concatenate(const char *out, const void *tail, size_t tail_size, ...) {
  tu_bytes all = {0};
  va_list ap;
  va_start(ap, tail_size);
  for (const char *f; (f = va_arg(ap, const char *)) != NULL;) {
    tu_bytes b = tu_read_bytes(f);
    TU_CHECK(b.data != NULL, "cannot read %s", f);
    tu_bytes_append(&all, b.data, b.size);
    free(b.data);
  }
  va_end(ap);
  if (tail_size > 0) tu_bytes_append(&all, tail, tail_size);
  TU_CHECK(tu_write_file(out, all.data, all.size) == 0, "cannot write %s", out);
  free(all.data);
  return all.size;
}

/* ---- batches, read by the library ------------------------------------------ */

typedef struct batch_list {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  size_t n;
  int64_t rows;
  int64_t stream_end;
} batch_list;

static void batch_list_free(batch_list *l) {
  for (size_t i = 0; i < l->n; i++) l->batches[i].release(&l->batches[i]);
  free(l->batches);
  if (l->schema.release) l->schema.release(&l->schema);
  memset(l, 0, sizeof *l);
}

/* Every batch of the first IPC stream (or file) of path, memory-mapped. */
static batch_list read_batches(const char *path) {
  batch_list l = {0};
  xchg_ipc_reader *r;
  xchg_error err;
  if (xchg_ipc_reader_open_file(path, NULL, &r, &err) != XCHG_OK) {
    TU_CHECK(0, "%s: %s", path, err.message);
    return l;
  }
  xchg_status st = xchg_ipc_reader_schema(r, &l.schema, &err);
  for (struct ArrowArray a;
       st == XCHG_OK && (st = xchg_ipc_reader_next(r, &a, &err)) == XCHG_OK && a.release;) {
    l.batches = realloc(l.batches, (l.n + 1) * sizeof *l.batches);
    l.rows += a.length;
    l.batches[l.n++] = a;
  }
  TU_CHECK(st == XCHG_OK, "%s: %s", path, err.message);
  l.stream_end = xchg_ipc_reader_stream_end(r);
  xchg_ipc_reader_free(r);
  return l;
}

/* got holds the batches of the parts, in order, each equal to its own. */
static void expect_batches(const char *what, const batch_list *got, const batch_list *parts,
                           size_t n_parts) {
  size_t at = 0;
  bool same = true;
  char msg[512] = "";
  for (size_t p = 0; p < n_parts && same; p++)
    for (size_t i = 0; i < parts[p].n && same; i++, at++)
      same = at < got->n && array_equal(&parts[p].schema, &parts[p].batches[i], &got->batches[at],
                                        msg, sizeof msg) == 0;
  TU_CHECK(same && at == got->n, "%s: %zu batches, the parts have %zu: %s", what, got->n, at, msg);
}

/* ---- 1. convert of several IPC streams ---------------------------------------- */

static void check_convert_streams(void) {
  TMP_PATH(a, "a.stream");
  TMP_PATH(b, "b.stream");
  TMP_PATH(ab, "ab.stream");
  char args[9000];
  snprintf(args, sizeof args, "cache '%s' --rows 25000 --seed 1", a);
  gen(args);
  snprintf(args, sizeof args, "cache '%s' --rows 15000 --seed 2", b);
  gen(args);
  concatenate(ab, NULL, 0, a, b, NULL);
  batch_list parts[2] = {read_batches(a), read_batches(b)};
  TU_CHECK(parts[0].rows == 25000 && parts[1].rows == 15000, "the parts: %lld and %lld rows",
           (long long)parts[0].rows, (long long)parts[1].rows);
  TMP_PATH(out, "ab.out");
  for (int piped = 0; piped < 2; piped++) {
    tu_cli_result r =
        piped ? run("convert - '%s' -f < '%s'", out, ab) : run("convert '%s' '%s' -f", ab, out);
    TU_CHECK(r.exit_code == 0 && r.err[0] == '\0', "convert of two IPC streams%s: exit %d: %s",
             piped ? " on stdin" : "", r.exit_code, r.err);
    batch_list got = read_batches(out);
    expect_batches(piped ? "convert - of two IPC streams" : "convert of two IPC streams", &got,
                   parts, 2);
    TU_CHECK(got.rows == 40000, "convert of two IPC streams%s: %lld rows, want 40000",
             piped ? " on stdin" : "", (long long)got.rows);
    batch_list_free(&got);
    tu_cli_result_free(&r);
  }

  /* 64 Comet blocks, one IPC stream each, as Comet's shuffle writes them. */
  tu_bytes blocks = {0};
  batch_list comet[64];
  for (int i = 0; i < 64; i++) {
    TMP_PATH(one, "block.stream");
    snprintf(args, sizeof args, "cache '%s' --rows %d --seed %d", one, 100 + 37 * i, 10 + i);
    gen(args);
    comet[i] = read_batches(one);
    tu_bytes ipc = tu_read_bytes(one);
    /* The header's field count, as Comet writes it: the shuffle reader
     * checks it against the schema's 6 columns. */
    TU_CHECK(tu_append_comet_block(&blocks, ipc.data, ipc.size, XCHG_STREAM_LZ4_FRAME, 6),
             "Comet block %d", i);
    free(ipc.data);
  }
  TMP_PATH(shuffle, "shuffle.comet");
  TU_CHECK(tu_write_file(shuffle, blocks.data, blocks.size) == 0, "cannot write %s", shuffle);
  free(blocks.data);
  /* --batch-rows 1: every block is a batch of its own (by default they are
   * coalesced into batches of 8192 rows: test_cli_shuffle). */
  tu_cli_result r = run("convert '%s' '%s' -f --batch-rows 1", shuffle, out);
  TU_CHECK(r.exit_code == 0 && r.err[0] == '\0', "convert of 64 Comet blocks: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
  batch_list got = read_batches(out);
  expect_batches("convert of 64 Comet blocks", &got, comet, 64);
  batch_list_free(&got);
  for (int i = 0; i < 64; i++) batch_list_free(&comet[i]);

  /* Another schema in the second IPC stream: refused, naming it, with no
   * OUT and nothing on standard output. */
  TMP_PATH(mixed, "mixed.stream");
  concatenate(mixed, NULL, 0, a, in_gold("1.0.0-littleendian/generated_primitive.stream"), NULL);
  size_t first = (size_t)parts[0].stream_end;
  char want[4600];
  snprintf(want, sizeof want,
           "xchg: %s: IPC stream 2 at byte %zu: its schema differs from the first IPC stream's: "
           "6 columns in the first IPC stream, 30 here\n",
           mixed, first);
  TMP_PATH(none, "none.arrow");
  unlink(none);
  r = run("convert '%s' '%s' -f", mixed, none);
  TU_CHECK(r.exit_code == 1 && strcmp(r.err, want) == 0 && access(none, F_OK) != 0,
           "convert of two schemas: exit %d, OUT %s, stderr:\n%s want:\n%s", r.exit_code,
           access(none, F_OK) == 0 ? "written" : "absent", r.err, want);
  tu_cli_result_free(&r);
  static const char *const to_stdout[] = {"convert '%s' -", "cat '%s'"};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, to_stdout[i], mixed);
    r = run("%s", args);
    TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, "its schema differs"),
             "%s of two schemas writes nothing: exit %d, %zu bytes: %s", args, r.exit_code,
             r.out_len, r.err);
    tu_cli_result_free(&r);
  }
  /* A nested difference is named by its path. */
  TMP_PATH(nested, "nested.stream");
  concatenate(nested, NULL, 0, in_gold("1.0.0-littleendian/generated_nested.stream"),
              in_gold("1.0.0-littleendian/generated_nested_large_offsets.stream"), NULL);
  r = run("cat '%s'", nested);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "IPC stream 2 at byte ") &&
               strstr(r.err, ": column 0 \"") && strstr(r.err, "in the first IPC stream, ") &&
               strstr(r.err, " here\n"),
           "a column of another type is named: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  batch_list_free(&parts[0]);
  batch_list_free(&parts[1]);
}

/* --batch-rows never ends the output with a batch of 0 rows: 37 rows in
 * batches of 17 and 20, then Arrow's three empty batches (the same schema,
 * another IPC stream), whether the last flush came at a multiple of N (1,
 * 20, 37) or not (5); an input of empty batches alone keeps one. */
static void check_convert_no_empty_tail(void) {
  TMP_PATH(in, "rows_then_empty.stream");
  TMP_PATH(out, "no_empty_tail.out");
  concatenate(in, NULL, 0, in_gold("1.0.0-littleendian/generated_primitive.stream"),
              in_gold("1.0.0-littleendian/generated_primitive_zerolength.stream"), NULL);
  static const int sizes[] = {1, 5, 20, 37, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    tu_cli_result r = run("convert '%s' '%s' -f --batch-rows %d", in, out, sizes[i]);
    TU_CHECK(r.exit_code == 0, "convert --batch-rows %d: exit %d: %s", sizes[i], r.exit_code,
             r.err);
    tu_cli_result_free(&r);
    batch_list got = read_batches(out);
    bool tail_empty = got.n > 0 && got.batches[got.n - 1].length == 0;
    TU_CHECK(got.rows == 37 && got.n > 0 && !tail_empty,
             "convert --batch-rows %d: %zu batches, %lld rows, the last %s", sizes[i], got.n,
             (long long)got.rows, tail_empty ? "empty" : "not empty");
    batch_list_free(&got);
  }
  tu_cli_result r = run("convert '%s' '%s' -f --batch-rows 5",
                        in_gold("1.0.0-littleendian/generated_primitive_zerolength.stream"), out);
  TU_CHECK(r.exit_code == 0, "convert of empty batches: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  batch_list got = read_batches(out);
  TU_CHECK(got.n == 1 && got.rows == 0, "convert of empty batches: %zu batches, %lld rows", got.n,
           (long long)got.rows);
  batch_list_free(&got);
}

/* ---- 2. concatenated IPC files ------------------------------------------------- */

static int count_lines(const char *text) {
  int n = 0;
  for (; *text; text++) n += *text == '\n';
  return n;
}

/* cat of path, IPC streams or files of two schemas, and of them in zstd
 * (written to zst) through a pipe: the error names the second as `second`
 * and the first as `first` ("the first IPC file's") and `in_first`. */
static void check_other_schema(const char *path, const char *zst, const char *second,
                               const char *first, const char *in_first) {
  tu_encode_file(path, XCHG_STREAM_ZSTD, zst);
  for (int zstd = 0; zstd < 2; zstd++) {
    tu_cli_result c = zstd ? tu_cli_piped_runf(cli, zst, "cat -") : run("cat '%s'", path);
    char head[64];
    snprintf(head, sizeof head, ": %s at %sbyte ", second, zstd ? "decoded " : "");
    TU_CHECK(c.exit_code == 1 && strstr(c.err, head) && strstr(c.err, first) &&
                 strstr(c.err, in_first) && strstr(c.err, "schema differs"),
             "cat of two schemas%s: exit %d, want '%s', '%s', '%s': %s",
             zstd ? " in zstd, piped" : "", c.exit_code, head, first, in_first, c.err);
    tu_cli_result_free(&c);
  }
}

static void check_concatenated_files(void) {
  TMP_PATH(f1, "f1.arrow");
  TMP_PATH(f2, "f2.arrow");
  TMP_PATH(f, "f.arrow");
  char args[9000];
  snprintf(args, sizeof args, "cache '%s' --rows 5050 --seed 3 --file", f1);
  gen(args);
  snprintf(args, sizeof args, "cache '%s' --rows 10000 --seed 4 --file", f2);
  gen(args);
  size_t size = concatenate(f, NULL, 0, f1, f2, NULL);
  batch_list parts[2] = {read_batches(f1), read_batches(f2)};
  size_t first = (size_t)parts[0].stream_end;
  TU_CHECK(parts[0].rows == 5050 && parts[1].rows == 10000 && parts[1].stream_end > 0 &&
               first + (size_t)parts[1].stream_end == size,
           "the files: %lld and %lld rows, ending at %lld and %lld", (long long)parts[0].rows,
           (long long)parts[1].rows, (long long)parts[0].stream_end,
           (long long)parts[1].stream_end);

  /* The library reads the first file, with its own footer, and says where it ends. */
  batch_list lib = read_batches(f);
  expect_batches("the library on two files", &lib, parts, 1);
  TU_CHECK(lib.stream_end == (int64_t)first, "the first file ends at %lld, want %zu",
           (long long)lib.stream_end, first);
  batch_list_free(&lib);
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  TU_CHECK(xchg_ipc_reader_open_file(f, NULL, &r, &err) == XCHG_OK &&
               xchg_ipc_reader_num_batches(r) == 1,
           "the first file's footer: %lld batches",
           r ? (long long)xchg_ipc_reader_num_batches(r) : -1);
  xchg_ipc_reader_free(r);

  for (int piped = 0; piped < 2; piped++) {
    const char *how = piped ? " (piped)" : "";
    tu_cli_result c = piped ? run("inspect --json - < '%s'", f) : run("inspect --json '%s'", f);
    TU_CHECK(
        c.exit_code == 0 &&
            strstr(c.out, "\"totals\": {\"streams\": 2, \"record_batches\": 2, \"rows\": 15050,"),
        "inspect of two files%s: exit %d: %s%s", how, c.exit_code, c.out, c.err);
    tu_cli_result_free(&c);
    /* Each said to be an IPC file, not a stream, in the text too. */
    c = piped ? run("inspect - < '%s'", f) : run("inspect '%s'", f);
    char second[64];
    snprintf(second, sizeof second, "\nIPC file 2 at byte %zu\n", first);
    TU_CHECK(c.exit_code == 0 && strstr(c.out, second) &&
                 strstr(c.out, "\ninput: 2 IPC files, 2 record batches, 15050 rows, "),
             "inspect of two files%s, text: exit %d: %s%s", how, c.exit_code, c.out, c.err);
    tu_cli_result_free(&c);
    c = piped ? run("cat - < '%s'", f) : run("cat '%s'", f);
    TU_CHECK(c.exit_code == 0 && count_lines(c.out) == 1 + 15050,
             "cat of two files%s: exit %d, %d lines: %s", how, c.exit_code, count_lines(c.out),
             c.err);
    tu_cli_result_free(&c);
    TMP_PATH(out, "f.out");
    c = piped ? run("convert - '%s' -f --file < '%s'", out, f)
              : run("convert '%s' '%s' -f --file", f, out);
    TU_CHECK(c.exit_code == 0, "convert of two files%s: exit %d: %s", how, c.exit_code, c.err);
    tu_cli_result_free(&c);
    batch_list got = read_batches(out);
    expect_batches(piped ? "convert - of two files" : "convert of two files", &got, parts, 2);
    batch_list_free(&got);
  }

  /* Bytes after them that are not IPC: as plain an error as after a
   * stream, and from a file before anything is printed; the second file
   * called an IPC file, not a stream. */
  static const char garbage[] = "garbage!";
  concatenate(f, garbage, 8, f1, f2, NULL);
  char want[4600];
  snprintf(
      want, sizeof want,
      "xchg: %s: IPC file 2 at byte %zu: the IPC file ends at byte %zu, after its closing "
      "ARROW1 magic, and 8 bytes follow that are not an Arrow IPC stream or file (they begin 67 61 72 62)\n",
      f, first, size);
  tu_cli_result c = run("cat '%s'", f);
  TU_CHECK(c.exit_code == 1 && c.out_len == 0 && strcmp(c.err, want) == 0,
           "cat of two files and garbage: exit %d, %zu bytes out, stderr:\n%swant:\n%s",
           c.exit_code, c.out_len, c.err, want);
  tu_cli_result_free(&c);
  /* Standard input redirected from the file is the file, said the same. */
  c = run("cat - < '%s'", f);
  TU_CHECK(c.exit_code == 1 && c.out_len == 0 && strncmp(c.err, "xchg: <stdin>: ", 15) == 0 &&
               strcmp(c.err + 15, want + strlen(f) + 8) == 0,
           "cat - < two files and garbage: exit %d, %zu bytes out, stderr:\n%swant (<stdin>):\n%s",
           c.exit_code, c.out_len, c.err, want);
  tu_cli_result_free(&c);
  /* Through a pipe, how many bytes follow is counted by reading them. */
  if (!TU_CHECK(tu_cli_run_piped(cli, f, "cat -", &c), "xchg cat - did not run")) return;
  TU_CHECK(c.exit_code == 1 && strstr(c.err, "IPC file 2 at byte ") &&
               strstr(c.err, "the IPC file ends at byte ") &&
               strstr(c.err,
                      " and 8 bytes follow that are not an Arrow IPC stream or file (they "
                      "begin 67 61 72 62)"),
           "cat - of two files and garbage, piped: exit %d: %s", c.exit_code, c.err);
  tu_cli_result_free(&c);
  concatenate(f, garbage, 8, f1, NULL);
  snprintf(want, sizeof want,
           "xchg: %s: the IPC file ends at byte %zu, after its closing ARROW1 magic, and 8 bytes "
           "follow that are not an Arrow IPC stream or file (they begin 67 61 72 62)\n",
           f, first);
  c = run("cat '%s'", f);
  TU_CHECK(c.exit_code == 1 && c.out_len == 0 && strcmp(c.err, want) == 0,
           "cat of a file and garbage: exit %d, %zu bytes out, stderr:\n%swant:\n%s", c.exit_code,
           c.out_len, c.err, want);
  tu_cli_result_free(&c);
  /* Fewer than four bytes after it: those shown, none made up. */
  for (size_t n = 1; n <= 2; n++) {
    concatenate(f, "AB", n, f1, NULL);
    snprintf(want, sizeof want,
             "xchg: %s: the IPC file ends at byte %zu, after its closing ARROW1 magic, and %s not "
             "an Arrow IPC stream or file (%s)\n",
             f, first, n == 1 ? "1 byte follows that is" : "2 bytes follow that are",
             n == 1 ? "it is 41" : "they are 41 42");
    c = run("cat '%s'", f);
    TU_CHECK(c.exit_code == 1 && strcmp(c.err, want) == 0,
             "cat of a file and %zu bytes: exit %d, stderr:\n%swant:\n%s", n, c.exit_code, c.err,
             want);
    tu_cli_result_free(&c);
  }

  /* What is not IPC from its first byte is named as such. */
  static const char parquet[] = "PAR1 and then some bytes of a Parquet file PAR1";
  TU_CHECK(tu_write_file(f, parquet, sizeof parquet - 1) == 0, "cannot write %s", f);
  c = run("cat '%s'", f);
  TU_CHECK(
      c.exit_code == 1 &&
          strstr(c.err, "not an Arrow IPC stream or file: PAR1 magic at byte 0 (a Parquet file)"),
      "cat of a Parquet file: exit %d: %s", c.exit_code, c.err);
  tu_cli_result_free(&c);

  /* A file then a stream, a stream then a file: every row. */
  TMP_PATH(s2, "s2.stream");
  snprintf(args, sizeof args, "cache '%s' --rows 777 --seed 5", s2);
  gen(args);
  for (int order = 0; order < 2; order++) {
    concatenate(f, NULL, 0, order ? s2 : f1, order ? f1 : s2, NULL);
    c = run("inspect --json - < '%s'", f);
    tu_cli_result d = run("inspect --json '%s'", f);
    const char *want_totals = "\"totals\": {\"streams\": 2, \"record_batches\": 2, \"rows\": 5827,";
    TU_CHECK(c.exit_code == 0 && d.exit_code == 0 && strstr(c.out, want_totals) &&
                 strstr(d.out, want_totals),
             "a %s then a %s: exit %d and %d: %s%s", order ? "stream" : "file",
             order ? "file" : "stream", c.exit_code, d.exit_code, c.err, d.err);
    tu_cli_result_free(&c);
    tu_cli_result_free(&d);
  }

  /* Files, and a file after a stream, of another schema than the first:
   * each called by what it is, the first one too, plain and in a codec
   * (zstd, through a pipe: read in order).  They were all IPC streams. */
  concatenate(f, NULL, 0, in_gold("1.0.0-littleendian/generated_primitive.arrow_file"),
              in_gold("1.0.0-littleendian/generated_nested.arrow_file"), NULL);
  TMP_PATH(fz, "f.arrow.zst");
  check_other_schema(f, fz, "IPC file 2", "the first IPC file's", "in the first IPC file, ");
  concatenate(f, NULL, 0, in_gold("1.0.0-littleendian/generated_primitive.stream"),
              in_gold("1.0.0-littleendian/generated_nested.arrow_file"), NULL);
  check_other_schema(f, fz, "IPC file 2", "the first IPC stream's", "in the first IPC stream, ");
  concatenate(f, NULL, 0, in_gold("1.0.0-littleendian/generated_primitive.arrow_file"),
              in_gold("1.0.0-littleendian/generated_nested.stream"), NULL);
  check_other_schema(f, fz, "IPC stream 2", "the first IPC file's", "in the first IPC file, ");

  /* Read in order, a file whose footer is another's: the message names the
   * column and what differs. */
  tu_bytes prim = tu_read_bytes(in_gold("1.0.0-littleendian/generated_primitive.arrow_file"));
  tu_bytes other = tu_read_bytes(in_gold("1.0.0-littleendian/generated_nested.arrow_file"));
  int32_t prim_footer = 0, other_footer = 0;
  memcpy(&prim_footer, prim.data + prim.size - 10, 4); /* little-endian host, as the gold files */
  memcpy(&other_footer, other.data + other.size - 10, 4);
  tu_bytes spliced = {0};
  tu_bytes_append(&spliced, prim.data, prim.size - 10 - (size_t)prim_footer);
  tu_bytes_append(&spliced, other.data + other.size - 10 - (size_t)other_footer,
                  (size_t)other_footer + 10);
  TU_CHECK(tu_write_file(f, spliced.data, spliced.size) == 0, "cannot write %s", f);
  for (int piped = 0; piped < 2; piped++) {
    c = piped ? run("cat - < '%s'", f) : run("cat '%s'", f);
    TU_CHECK(c.exit_code == 1 &&
                 strstr(c.err,
                        "footer schema and stream schema differ: 3 columns in the footer, 30 "
                        "in the stream"),
             "another file's footer%s: exit %d: %s", piped ? " (piped)" : "", c.exit_code, c.err);
    tu_cli_result_free(&c);
  }
  free(prim.data);
  free(other.data);
  free(spliced.data);
  batch_list_free(&parts[0]);
  batch_list_free(&parts[1]);
}

/* ---- 2b. IPC streams whose dictionary ids differ ----------------------------------- */

/* path = the gold dictionary stream written again with ids (dict0, dict1,
 * dict2) = ids. */
static void write_with_ids(const char *path, const int64_t ids[3]) {
  xchg_ipc_reader *r = NULL;
  struct ArrowArrayStream stream;
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.dictionary_ids = ids;
  o.n_dictionary_ids = 3;
  xchg_buf *bytes = NULL;
  xchg_error err;
  bool ok = xchg_ipc_reader_open_file(in_gold("1.0.0-littleendian/generated_dictionary.stream"),
                                      NULL, &r, &err) == XCHG_OK &&
            xchg_ipc_reader_to_stream(r, &stream, &err) == XCHG_OK &&
            xchg_ipc_encode_stream(&stream, &o, &bytes, &err) == XCHG_OK;
  TU_CHECK(ok && tu_write_file(path, xchg_buf_data(bytes), xchg_buf_size(bytes)) == 0,
           "writing %s: %s", path, ok ? "cannot write" : err.message);
  xchg_buf_unref(bytes);
}

/* out = file (an IPC file of `batches` record batches, at most one, no
 * dictionary) as Apache Arrow JS writes it, its schema in the footer only:
 * without its schema message, the footer's block offset moved back as
 * many bytes. */
static void drop_schema_message(const char *file, const char *out, int batches) {
  tu_bytes b = tu_read_bytes(file);
  uint32_t metadata = 0, footer = 0; /* little-endian host, as xchg writes */
  if (b.size > 40) {
    memcpy(&metadata, b.data + 12, 4);
    memcpy(&footer, b.data + b.size - 10, 4);
  }
  size_t schema = 8 + (size_t)metadata, footer_at = b.size - 10 - footer;
  uint64_t was = 8 + schema, now = 8; /* the record batch's offset */
  int found = 0;
  for (size_t at = footer_at; b.size > 40 && at + 8 <= b.size - 10; at++)
    if (memcmp(b.data + at, &was, 8) == 0) {
      memcpy(b.data + at, &now, 8);
      found++;
    }
  TU_CHECK(found == batches && schema < footer_at, "%s: the batch's offset %llu found %d times",
           file, (unsigned long long)was, found);
  tu_bytes o = {0};
  tu_bytes_append(&o, b.data, 8); /* the magic and its padding */
  tu_bytes_append(&o, b.data + 8 + schema, b.size - 8 - schema);
  TU_CHECK(tu_write_file(out, o.data, o.size) == 0, "cannot write %s", out);
  free(o.data);
  free(b.data);
}

/* An IPC file with no schema message followed by a stream, given as a
 * named FIFO (/dev/stdin on a pipe; a shell's <(...) alike): `cat` and
 * `convert` read it as they read `-` through a pipe (copied to a file
 * first, since read in order the file is held whole with what follows it)
 * and print and write what they do for the file on disk, where it was an
 * error ("what follows such a file can be read only from a seekable
 * input"). */
static void check_schemaless_fifo(void) {
  TMP_PATH(full, "full.arrow");
  TMP_PATH(bare, "bare.arrow");
  TMP_PATH(stream, "more.stream");
  TMP_PATH(both, "bare_more.arrow");
  TMP_PATH(want, "want.arrow");
  TMP_PATH(got, "got.arrow");
  char args[9000];
  snprintf(args, sizeof args, "cache '%s' --rows 40 --seed 5 --file", full);
  gen(args);
  snprintf(args, sizeof args, "cache '%s' --rows 30 --seed 6", stream);
  gen(args);
  drop_schema_message(full, bare, 1);
  concatenate(both, NULL, 0, bare, stream, NULL);
  tu_cli_result file = run("cat '%s'", both);
  TU_CHECK(file.exit_code == 0 && file.out_len > 0, "cat of the file: exit %d: %s", file.exit_code,
           file.err);
  static const char *const names[] = {"-", "/dev/stdin"};
  for (int n = 0; n < 2; n++) {
    tu_cli_result c = tu_cli_piped_runf(cli, both, "cat %s", names[n]);
    TU_CHECK(
        c.exit_code == 0 && c.out_len == file.out_len && memcmp(c.out, file.out, file.out_len) == 0,
        "cat %s of a file with no schema message and a stream, piped: exit %d, %zu bytes "
        "(the file: %zu): %s",
        names[n], c.exit_code, c.out_len, file.out_len, c.err);
    tu_cli_result_free(&c);
  }
  tu_cli_result_free(&file);
  tu_cli_result c = run("convert '%s' '%s' -f", both, want);
  tu_cli_result_free(&c);
  c = tu_cli_piped_runf(cli, both, "convert /dev/stdin '%s' -f", got);
  tu_bytes a = tu_read_bytes(want), b = tu_read_bytes(got);
  TU_CHECK(c.exit_code == 0 && a.data != NULL && b.data != NULL && a.size == b.size &&
               memcmp(a.data, b.data, a.size) == 0,
           "convert /dev/stdin of a file with no schema message and a stream, piped: exit %d, "
           "%zu bytes written (the file: %zu): %s",
           c.exit_code, b.size, a.size, c.err);
  free(a.data);
  free(b.data);
  tu_cli_result_free(&c);
}

/* An IPC file of no message at all (no record batch, its schema in the
 * footer only, as Arrow JS writes an empty table): inspect --messages
 * lists none, in text and JSON (it passed an empty message list as NULL
 * to memcpy, which UBSan stops). */
static void check_file_without_messages(void) {
  TMP_PATH(full, "empty.arrow");
  TMP_PATH(bare, "empty_bare.arrow");
  char args[9000];
  snprintf(args, sizeof args, "cache '%s' --rows 0 --file", full);
  gen(args);
  drop_schema_message(full, bare, 0);
  tu_cli_result text = run("inspect '%s' --messages", bare);
  tu_cli_result json = run("inspect '%s' --messages --json", bare);
  TU_CHECK(text.exit_code == 0 && strstr(text.out, "0 record batches") &&
               strstr(text.out, "messages:\n"),
           "inspect --messages of a file of no message: exit %d: %s%s", text.exit_code, text.out,
           text.err);
  TU_CHECK(json.exit_code == 0 && strstr(json.out, "\"messages\": []"),
           "inspect --messages --json of a file of no message: exit %d: %s%s", json.exit_code,
           json.out, json.err);
  tu_cli_result_free(&text);
  tu_cli_result_free(&json);
}

/* cat --format arrow-json prints several IPC streams as one with the first
 * one's dictionary ids: another id in a selected column is an error naming
 * the column and both ids, which for a file on disk (read through first)
 * comes before any row is printed, as a schema that differs does; columns
 * whose ids agree still print.  csv and json show values, not ids: they
 * print both streams' rows (Arrow JS numbers the dictionaries of every
 * table of a process apart, so two of its streams concatenated differ so). */
static void check_dictionary_ids(void) {
  TMP_PATH(a, "ids_a.stream");
  TMP_PATH(b, "ids_b.stream");
  TMP_PATH(ab, "ids_ab.stream");
  static const int64_t same[3] = {0, 1, 2}, other[3] = {0, 1, 9};
  write_with_ids(a, same);
  write_with_ids(b, other);
  size_t first = concatenate(ab, NULL, 0, a, NULL);
  concatenate(ab, NULL, 0, a, b, NULL);
  char want[4600];
  for (int redirected = 0; redirected < 2; redirected++) {
    const char *label = redirected ? "<stdin>" : ab;
    snprintf(want, sizeof want,
             "xchg: %s: IPC stream 2 at byte %zu: its dictionary ids differ from the first IPC "
             "stream's: column 2 \"dict2\": dictionary id 9 here, 2 in the first IPC stream\n",
             label, first);
    tu_cli_result c = redirected ? run("cat --format arrow-json - < '%s'", ab)
                                 : run("cat --format arrow-json '%s'", ab);
    TU_CHECK(c.exit_code == 1 && c.out_len == 0 && strcmp(c.err, want) == 0,
             "cat --format arrow-json of streams with other dictionary ids%s: exit %d, %zu bytes "
             "out, stderr:\n%swant:\n%s",
             redirected ? " (redirected)" : "", c.exit_code, c.out_len, c.err, want);
    tu_cli_result_free(&c);
  }
  /* Through a pipe the error comes when the second stream is reached. */
  snprintf(want, sizeof want,
           "xchg: <stdin>: IPC stream 2 at byte %zu: its dictionary ids differ from the first IPC "
           "stream's: column 2 \"dict2\": dictionary id 9 here, 2 in the first IPC stream\n",
           first);
  tu_cli_result c = tu_cli_piped_runf(cli, ab, "cat --format arrow-json -");
  TU_CHECK(c.exit_code == 1 && strcmp(c.err, want) == 0,
           "cat --format arrow-json - of them piped: exit %d: %s", c.exit_code, c.err);
  tu_cli_result_free(&c);
  /* The columns whose ids agree print, both streams' rows. */
  c = run("cat --format arrow-json --columns dict1,dict0 '%s'", ab);
  TU_CHECK(c.exit_code == 0 && strstr(c.out, "\"batches\""),
           "cat --format arrow-json --columns dict1,dict0 of them: exit %d: %s", c.exit_code,
           c.err);
  tu_cli_result_free(&c);
  /* csv and json: the values of both streams, the same as a's twice. */
  static const char *formats[] = {"csv", "json"};
  for (int f = 0; f < 2; f++) {
    tu_cli_result one = run("cat --format %s '%s'", formats[f], a);
    for (int piped = 0; piped < 2; piped++) {
      tu_cli_result both = piped ? tu_cli_piped_runf(cli, ab, "cat --format %s -", formats[f])
                                 : run("cat --format %s '%s'", formats[f], ab);
      /* csv: a's header and rows, then its rows again */
      const char *rows = f == 0 ? strchr(one.out, '\n') + 1 : one.out;
      bool same_twice =
          one.exit_code == 0 && both.exit_code == 0 && both.out_len == one.out_len + strlen(rows) &&
          strncmp(both.out, one.out, one.out_len) == 0 && strcmp(both.out + one.out_len, rows) == 0;
      TU_CHECK(same_twice,
               "cat --format %s of streams with other dictionary ids%s: exit %d, not a's rows "
               "twice: %s",
               formats[f], piped ? " (piped)" : "", both.exit_code, both.err);
      tu_cli_result_free(&both);
    }
    tu_cli_result_free(&one);
  }
}

/* ---- 3. standard output is the input ------------------------------------------- */

static void check_stdout_is_input(void) {
  TMP_PATH(in, "self.arrow");
  const char *gold_file = in_gold("1.0.0-littleendian/generated_primitive.arrow_file");
  tu_bytes want = tu_read_bytes(gold_file);
  tu_cli_result r0;
  static const char *const commands[] = {"cat '%s' >> '%s'", "cat - < '%s' >> '%s'",
                                         "inspect '%s' >> '%s'", "inspect --rows '%s' >> '%s'",
                                         "cat '%s' 1<> '%s'"};
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    TU_CHECK(tu_write_file(in, want.data, want.size) == 0, "cannot write %s", in);
    char args[9000];
    snprintf(args, sizeof args, commands[i], in, in);
    tu_cli_result r = run("%s", args);
    tu_bytes after = tu_read_bytes(in);
    TU_CHECK(r.exit_code == 1 && strstr(r.err, "xchg: standard output: is the same file as ") &&
                 after.size == want.size && memcmp(after.data, want.data, want.size) == 0,
             "%s: exit %d, the input %s: %s", args, r.exit_code,
             after.size == want.size ? "kept" : "changed", r.err);
    free(after.data);
    tu_cli_result_free(&r);
  }
  /* Input and output may be one file that is not a regular one. */
  r0 = run("inspect /dev/null > /dev/null");
  TU_CHECK(r0.exit_code == 1 && strstr(r0.err, "empty") && !strstr(r0.err, "same file"),
           "inspect /dev/null > /dev/null: exit %d: %s", r0.exit_code, r0.err);
  tu_cli_result_free(&r0);
  TMP_PATH(other, "other.csv");
  tu_cli_result r = run("cat '%s' > '%s'", in, other);
  TU_CHECK(r.exit_code == 0, "cat into another file: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  free(want.data);
}

/* ---- 4. one name for the input's codec, one for the output's compression ------- */

static void check_option_names(void) {
  TMP_PATH(out, "bc.stream");
  tu_cli_result r = run("gen broadcast - --rows 20000 | '%s' convert - '%s'", cli, out);
  TU_CHECK(r.exit_code == 0 && r.err[0] == '\0', "gen broadcast - | convert - OUT: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
  batch_list got = read_batches(out);
  TU_CHECK(got.rows == 20000, "convert of lz4-java input: %lld rows", (long long)got.rows);
  batch_list_free(&got);

  TMP_PATH(wrapped, "bc.lz4");
  char args[9000];
  snprintf(args, sizeof args, "broadcast '%s' --rows 3000", wrapped);
  gen(args);
  static const char *const named[] = {"convert '%s' '%s' -f --input-codec lz4-java",
                                      "convert '%s' '%s' -f --input-codec auto"};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, named[i], wrapped, out);
    r = run("%s", args);
    got = read_batches(out);
    TU_CHECK(r.exit_code == 0 && r.err[0] == '\0' && got.rows == 3000, "%s: exit %d, %lld rows: %s",
             args, r.exit_code, (long long)got.rows, r.err);
    batch_list_free(&got);
    tu_cli_result_free(&r);
  }
  r = run("convert '%s' '%s' -f --input-codec snappy-java", wrapped, out);
  TU_CHECK(r.exit_code == 1, "convert --input-codec of the wrong codec: exit %d: %s", r.exit_code,
           r.err);
  tu_cli_result_free(&r);
  r = run("convert '%s' '%s' -f --input-codec lz4", wrapped, out);
  TU_CHECK(r.exit_code == 2 && strstr(r.err, "lz4-java"),
           "convert --input-codec lz4 is ambiguous: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run("cat '%s' --input-codec lz4-java --limit 2", wrapped);
  TU_CHECK(r.exit_code == 0 && count_lines(r.out) == 3 && r.err[0] == '\0',
           "cat --input-codec: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run("inspect '%s' --input-codec=lz4-java", wrapped);
  TU_CHECK(r.exit_code == 0 && strstr(r.out, "\ncodec: lz4-java\n") && r.err[0] == '\0',
           "inspect --input-codec=: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);

  /* --compression, and the old --codec with a warning. */
  TMP_PATH(zstd, "z.stream");
  static const char *const spellings[] = {"--compression", "--codec"};
  for (int s = 0; s < 2; s++) {
    r = run("convert '%s' '%s' -f %s zstd --level 3", out, zstd, spellings[s]);
    char want_warning[200];
    snprintf(want_warning, sizeof want_warning,
             "xchg convert: warning: --codec is deprecated, use --compression");
    TU_CHECK(r.exit_code == 0 && (s == 0 ? r.err[0] == '\0' : strstr(r.err, want_warning) != NULL),
             "convert %s zstd: exit %d: %s", spellings[s], r.exit_code, r.err);
    tu_cli_result_free(&r);
    r = run("inspect --messages '%s'", zstd);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, "compression zstd"),
             "convert %s zstd compresses: %s", spellings[s], r.out);
    tu_cli_result_free(&r);
    r = run("gen cache '%s' -f --rows 100 %s lz4", zstd, spellings[s]);
    TU_CHECK(r.exit_code == 0 && (s == 0 ? r.err[0] == '\0'
                                         : strstr(r.err,
                                                  "xchg gen: warning: --codec is deprecated, "
                                                  "use --compression") != NULL),
             "gen %s lz4: exit %d: %s", spellings[s], r.exit_code, r.err);
    tu_cli_result_free(&r);
    r = run("inspect --messages '%s'", zstd);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, "compression lz4 "), "gen %s lz4 compresses: %s",
             spellings[s], r.out);
    tu_cli_result_free(&r);
  }
  static const char *const readers[] = {"cat '%s' --codec lz4-java --limit 1",
                                        "inspect '%s' --codec lz4-java"};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, readers[i], wrapped);
    r = run("%s", args);
    TU_CHECK(r.exit_code == 0 && strstr(r.err, "warning: --codec is deprecated, use --input-codec"),
             "%s: exit %d: %s", args, r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
}

/* ---- gen compresses every buffer ------------------------------------------------ */

static void count_decompressions(void *ctx, xchg_block_codec codec, const void *src,
                                 size_t src_size, size_t dst_size) {
  (void)codec, (void)src, (void)src_size, (void)dst_size;
  ++*(int *)ctx;
}

/* `gen cache --compression lz4` compresses c4's random values too, as
 * Arrow C++ and `bench decode`'s own input do: read alone, each batch's c4
 * is decompressed, not a raw buffer read in place. */
static void check_gen_compresses_all(void) {
  TMP_PATH(path, "all.lz4.stream");
  tu_cli_result r = run("gen cache '%s' -f --rows 25000 --compression lz4", path);
  TU_CHECK(r.exit_code == 0, "gen cache --compression lz4: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  xchg_ipc_reader *reader = NULL;
  xchg_error err;
  int decompressions = 0, batches = 0;
  const char *c4 = "c4";
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = NULL; /* the count is not atomic */
  xchg_status st = xchg_ipc_reader_open_file(path, &opts, &reader, &err);
  if (st == XCHG_OK) st = xchg_ipc_reader_select(reader, &c4, 1, &err);
  xchg_ipc_reader_on_decompress(reader, count_decompressions, &decompressions);
  for (struct ArrowArray a; st == XCHG_OK; batches++) {
    if ((st = xchg_ipc_reader_next(reader, &a, &err)) != XCHG_OK || !a.release) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(reader);
  TU_CHECK(st == XCHG_OK && batches == 3 && decompressions == 3,
           "c4 of 3 batches: %d decompressions (%s)", decompressions,
           st == XCHG_OK ? "read" : err.message);
}

/* ---- 5. inspect --rows holds its report ---------------------------------------- */

static void check_rows_report(void) {
  tu_bytes rows = {0};
  for (int i = 0; i < 50; i++) {
    uint8_t row[12] = {8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    tu_bytes_append(&rows, row, sizeof row);
  }
  TMP_PATH(path, "cut.rows");
  TU_CHECK(tu_write_file(path, rows.data, rows.size - 3) == 0, "cannot write %s", path);
  tu_cli_result r = run("inspect --rows '%s'", path);
  TU_CHECK(r.exit_code == 1 && r.out_len == 0 && strstr(r.err, "row 49"),
           "inspect --rows of a cut stream: exit %d, stdout %zu bytes: %s%s", r.exit_code,
           r.out_len, r.out, r.err);
  tu_cli_result_free(&r);
  TU_CHECK(tu_write_file(path, rows.data, rows.size) == 0, "cannot write %s", path);
  r = run("inspect --rows '%s'", path);
  TU_CHECK(r.exit_code == 0 && strstr(r.out, "rows: 50\n"),
           "inspect --rows of the whole stream: exit %d: %s%s", r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  /* plain rows said to be ZSTD: the error, exit 1, and nothing left open
   * (the stream was leaked when its first read failed: LeakSanitizer's
   * exit under the sanitizers) */
  r = run("inspect --rows --input-codec zstd '%s'", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "zstd") && !strstr(r.err, "LeakSanitizer"),
           "inspect --rows --input-codec zstd of plain rows: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  free(rows.data);
}

/* ---- 8. binary to a terminal ----------------------------------------------------- */

static bool contains(const tu_bytes *b, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; b->data != NULL && i + n <= b->size; i++)
    if (memcmp(b->data + i, needle, n) == 0) return true;
  return false;
}

/* Runs `xchg args...` with standard output and standard error on a new pty;
 * returns what the terminal received. */
static tu_bytes run_on_pty(char *const argv[], int *exit_code) {
  tu_bytes seen = {0};
  *exit_code = -1;
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
    TU_CHECK(0, "posix_openpt: %s", strerror(errno));
    return seen;
  }
  const char *slave_name = ptsname(master);
  pid_t pid = fork();
  if (pid == 0) {
    int slave = open(slave_name, O_RDWR | O_NOCTTY);
    int null = open("/dev/null", O_RDWR);
    if (slave < 0 || null < 0) _exit(126);
    dup2(null, STDIN_FILENO);
    dup2(slave, STDOUT_FILENO);
    dup2(slave, STDERR_FILENO);
    close(master);
    execv(cli, argv);
    _exit(127);
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n > 0)
      tu_bytes_append(&seen, buf, (size_t)n);
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break; /* EIO once the child has closed the pty */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  tu_bytes_append(&seen, "", 1);
  seen.size--;
  return seen;
}

static void check_terminal(void) {
  TMP_PATH(in, "tty.stream");
  char args[9000];
  snprintf(args, sizeof args, "cache '%s' --rows 100", in);
  gen(args);
  static const char refusal[] =
      "xchg: standard output: is a terminal: refusing to write binary data to it "
      "(redirect it to a file or a pipe, or use -f/--force)";
  char *convert[] = {(char *)cli, "convert", in, "-", NULL};
  char *gen_cache[] = {(char *)cli, "gen", "cache", "-", "--rows", "100", NULL};
  char *gen_rows[] = {(char *)cli, "gen", "rows", "-", "--rows", "100", NULL};
  char *forced[] = {(char *)cli, "convert", in, "-", "-f", NULL};
  char *forced_gen[] = {(char *)cli, "gen", "cache", "-", "--rows", "100", "--force", NULL};
  char **refused[] = {convert, gen_cache, gen_rows};
  for (int i = 0; i < 3; i++) {
    int rc;
    tu_bytes seen = run_on_pty(refused[i], &rc);
    TU_CHECK(rc == 1 && seen.data != NULL && strstr((char *)seen.data, refusal) &&
                 !contains(&seen, "ARROW") && seen.size < sizeof refusal + 8,
             "%s %s to a terminal: exit %d, %zu bytes: %.300s", refused[i][1], refused[i][2], rc,
             seen.size, seen.data ? (char *)seen.data : "");
    free(seen.data);
  }
  char **allowed[] = {forced, forced_gen};
  for (int i = 0; i < 2; i++) {
    int rc;
    tu_bytes seen = run_on_pty(allowed[i], &rc);
    TU_CHECK(rc == 0 && seen.size > 1000 && !contains(&seen, "refusing"),
             "%s with --force to a terminal: exit %d, %zu bytes", allowed[i][1], rc, seen.size);
    free(seen.data);
  }
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  tu_testdata_path(gold, sizeof gold, "arrow-gold");
  if (mkdtemp(tmp) == NULL) {
    perror("test_cli_data: mkdtemp");
    return 1;
  }
  static const tu_case cases[] = {
      {"convert_streams", check_convert_streams},
      {"concatenated_files", check_concatenated_files},
      {"stdout_is_input", check_stdout_is_input},
      {"option_names", check_option_names},
      {"rows_report", check_rows_report},
      {"terminal", check_terminal},
      {"dictionary_ids", check_dictionary_ids},
      {"schemaless_fifo", check_schemaless_fifo},
      {"file_without_messages", check_file_without_messages},
      {"convert_no_empty_tail", check_convert_no_empty_tail},
      {"gen_compresses_all", check_gen_compresses_all},
  };
  int rc = TU_MAIN(argc, argv, "cli_data", cases);
  tu_run("rm -rf '%s'", tmp);
  return rc;
}
