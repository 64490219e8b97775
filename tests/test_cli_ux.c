/* tests/test_cli_ux.c — what a data engineer expects of the `xchg` command
 * ($XCHG_CLI), on Apache Arrow's gold files and on inputs built here:
 *  - `cat --columns`: an unknown name lists the columns (too many to list:
 *    whole names, then how many more); a name two fields
 *    share is an error naming both positions, and #N picks by position;
 *    `--input-codec lz4` / `snappy` say which of the two formats to choose;
 *  - two IPC streams concatenated in one file (or on standard input) are
 *    both read; bytes after a stream that are not one are an error saying
 *    how many follow and where the stream ended;
 *  - names that would read ambiguously (a newline, a comma, a quote, an
 *    empty name) are JSON strings in inspect's lines and cat's lists, and
 *    an error quoting one has its control characters escaped;
 *  - `inspect`: a summary first with plurals and human sizes; body bytes
 *    per column and what they decode to, against the sizes the gold JSON
 *    and the columnar format imply; the message list only with
 *    --messages; --json parses and agrees with the gold JSON;
 *  - conflicting or meaningless flags of convert, gen and inspect --rows
 *    are usage errors;
 *    every command takes "--name=value", "--" and unique prefixes, and
 *    names the options an ambiguous prefix may be; options after the
 *    operands are read, POSIXLY_CORRECT set or not;
 *  - `bench rows --help` behaves like the other --helps, every bench
 *    --help explains its columns, and a cost inside the noise is never
 *    printed as a (negative) number;
 *  - progress shows on a terminal (a pty) and nowhere else (cat and
 *    convert of Comet blocks, through the shuffle reader, too);
 *  - an empty Comet input is zero batches; `inspect --rows` shows a
 *    length-prefixed row stream (count, size classes, rows in hex);
 *  - a message cut inside its body, metadata or framing fails in the same
 *    words from a file and from a pipe, through the IPC reader and through
 *    the shuffle reader (Comet blocks) alike: the stream is cut short;
 *  - a stream that ends without its end-of-stream marker is cut short,
 *    the error naming --allow-missing-eos, with which cat, inspect and
 *    convert read it, and two such streams one after another as two; a
 *    cut inside a message is still an error with it. */
#define _GNU_SOURCE /* pthread_setattr_default_np */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stats.h"
#include "support/c_fixture.h"
#include "support/cli_run.h"
#include "support/encoded.h"
#include "support/json_util.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

static const char *cli;
static char gold[4096];
static char tmp[] = "/tmp/test_cli_ux_XXXXXX";

/* `xchg args` (tu_cli_runf); the result must be freed. */
#define run(...) tu_cli_runf(cli, __VA_ARGS__)

static void gold_path(char *out, size_t size, const char *name) {
  TU_CHECK((size_t)snprintf(out, size, "%s/%s", gold, name) < size, "gold_path: %s", name);
}

static void tmp_path(char *out, size_t size, const char *name) {
  TU_CHECK((size_t)snprintf(out, size, "%s/%s", tmp, name) < size, "tmp_path: %s", name);
}

static json_t *load_gold_json(const char *name) {
  char path[4200];
  gold_path(path, sizeof path, name);
  char msg[4400];
  json_t *doc = tu_json_load(path, msg, sizeof msg);
  TU_CHECK(doc != NULL, "%s", msg);
  return doc;
}

static size_t gold_rows(json_t *doc) {
  size_t rows = 0, i;
  json_t *b;
  json_array_foreach(json_object_get(doc, "batches"), i, b) rows +=
      (size_t)json_integer_value(json_object_get(b, "count"));
  return rows;
}

static int count_lines(const char *text) {
  int n = 0;
  for (const char *p = text; *p; p++) n += *p == '\n';
  return n;
}

/* ---- --columns and --input-codec --------------------------------------------------- */

static void check_columns(void) {
  char path[4200];
  gold_path(path, sizeof path, "1.0.0-littleendian/generated_primitive.stream");
  tu_cli_result r = run("cat '%s' --columns no_such_column", path);
  json_t *doc = load_gold_json("1.0.0-littleendian/generated_primitive.json.gz");
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "no_such_column"), "unknown column: exit %d: %s",
           r.exit_code, r.err);
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(json_object_get(doc, "schema"), "fields"), i, f) {
    char name[300];
    snprintf(name, sizeof name, "%s%s",
             i ? ", " : "are: ", json_string_value(json_object_get(f, "name")));
    TU_CHECK(strstr(r.err, name) != NULL, "the unknown-column error does not list \"%s\": %s", name,
             r.err);
  }
  json_decref(doc);
  tu_cli_result_free(&r);

  /* 256 columns c0..c255 name more than an error message holds: the list
   * ends in whole names and how many more there are, not in half a name. */
  char wide[4200];
  tmp_path(wide, sizeof wide, "wide.ipc");
  r = run("gen shuffle '%s' --columns 256 --rows 64 -f", wide);
  TU_CHECK(r.exit_code == 0, "gen shuffle --columns 256: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run("cat '%s' --columns no_such_column", wide);
  const char *list = strstr(r.err, "(the columns are: c0, ");
  const char *tail = list ? strstr(list, ", ... and ") : NULL;
  const char *end = tail ? strstr(tail, " more)\n") : NULL; /* the error's end */
  int listed = 1, more = -1;
  for (const char *p = list; tail != NULL && (p = strstr(p + 1, ", c")) != NULL && p < tail;)
    listed++;
  TU_CHECK(r.exit_code == 1 && tail != NULL && sscanf(tail, ", ... and %d more)", &more) == 1 &&
               end != NULL && end[7] == '\0' && listed + more == 256,
           "the unknown-column error of 256 columns: %d listed, %d more: %s", listed, more, r.err);
  tu_cli_result_free(&r);

  /* generated_union has two columns named "dense" (1 and 3) and two "sparse". */
  gold_path(path, sizeof path, "1.0.0-littleendian/generated_union.stream");
  r = run("cat '%s' --columns sparse,dense", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "\"sparse\" is ambiguous: fields 0 and 2"),
           "a shared name must be an error naming both positions: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run("cat '%s' --columns '#3' --format json", path);
  doc = load_gold_json("1.0.0-littleendian/generated_union.json.gz");
  TU_CHECK(r.exit_code == 0 && count_lines(r.out) == (int)gold_rows(doc) &&
               strncmp(r.out, "{\"dense\":", 9) == 0,
           "--columns '#3': exit %d, %d lines (want %zu): %.200s%s", r.exit_code,
           count_lines(r.out), gold_rows(doc), r.out, r.err);
  json_decref(doc);
  tu_cli_result_free(&r);
}

static void check_codec_names(void) {
  const char *commands[] = {"cat", "inspect"};
  for (int c = 0; c < 2; c++) {
    tu_cli_result r = run("%s - --input-codec lz4 </dev/null", commands[c]);
    TU_CHECK(r.exit_code == 2 && strstr(r.err, "lz4-java") && strstr(r.err, "lz4-frame") &&
                 strstr(r.err, "Spark"),
             "%s --input-codec lz4 must say to choose lz4-java (Spark) or lz4-frame: exit %d: %s",
             commands[c], r.exit_code, r.err);
    tu_cli_result_free(&r);
    r = run("%s - --input-codec snappy </dev/null", commands[c]);
    TU_CHECK(r.exit_code == 2 && strstr(r.err, "snappy-java") && strstr(r.err, "snappy-framed"),
             "%s --input-codec snappy: exit %d: %s", commands[c], r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
}

/* ---- concatenated IPC streams ----------------------------------------------------- */

static void write_concatenation(const char *out, const char *first, const char *second,
                                const void *tail, size_t tail_size, size_t *first_size) {
  char a[4200], b[4200];
  gold_path(a, sizeof a, first);
  gold_path(b, sizeof b, second);
  tu_bytes x = tu_read_bytes(a), y = tu_read_bytes(b), all = {0};
  tu_bytes_append(&all, x.data, x.size);
  tu_bytes_append(&all, y.data, y.size);
  if (tail_size > 0) tu_bytes_append(&all, tail, tail_size);
  TU_CHECK(x.size > 0 && y.size > 0 && tu_write_file(out, all.data, all.size) == 0,
           "cannot write %s", out);
  *first_size = x.size;
  free(x.data);
  free(y.data);
  free(all.data);
}

/* The library's side: where the reader says a stream ended. */
static void check_stream_end(const char *path, size_t first) {
  tu_bytes two = tu_read_bytes(path);
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  TU_CHECK(two.size == 2 * first && xchg_ipc_reader_open_memory(two.data, two.size, NULL, NULL,
                                                                NULL, &r, &err) == XCHG_OK,
           "cannot open %s", path);
  TU_CHECK(r == NULL || xchg_ipc_reader_stream_end(r) == -1, "stream_end before the end: %lld",
           (long long)xchg_ipc_reader_stream_end(r));
  struct ArrowArray batch = {0};
  while (r != NULL && xchg_ipc_reader_next(r, &batch, &err) == XCHG_OK && batch.release != NULL)
    batch.release(&batch);
  TU_CHECK(r == NULL || xchg_ipc_reader_stream_end(r) == (int64_t)first,
           "stream_end %lld, the first stream has %zu bytes",
           (long long)xchg_ipc_reader_stream_end(r), first);
  xchg_ipc_reader_free(r);
  free(two.data);
}

static void check_concatenated(void) {
  char path[4200];
  size_t first = 0;
  tmp_path(path, sizeof path, "two.stream");
  write_concatenation(path, "1.0.0-littleendian/generated_primitive.stream",
                      "1.0.0-littleendian/generated_primitive.stream", NULL, 0, &first);
  check_stream_end(path, first);
  json_t *doc = load_gold_json("1.0.0-littleendian/generated_primitive.json.gz");
  int want = 1 + 2 * (int)gold_rows(doc); /* the CSV header, then both streams' rows */
  tu_cli_result r = run("cat '%s'", path);
  TU_CHECK(r.exit_code == 0 && count_lines(r.out) == want,
           "cat of two streams in a file: exit %d, %d lines, want %d: %s", r.exit_code,
           count_lines(r.out), want, r.err);
  tu_cli_result_free(&r);
  r = run("cat - < '%s'", path);
  TU_CHECK(r.exit_code == 0 && count_lines(r.out) == want,
           "cat of two streams on stdin: exit %d, %d lines, want %d: %s", r.exit_code,
           count_lines(r.out), want, r.err);
  tu_cli_result_free(&r);
  /* Two IPC streams of one schema are a file of blocks: the first alone
   * is shown, and the blocks summary, unless --streams. */
  r = run("inspect --json '%s'", path);
  json_error_t jerr;
  json_t *got = json_loads(r.out, 0, &jerr);
  json_t *streams = json_object_get(got, "streams");
  json_t *blocks = json_object_get(got, "blocks");
  TU_CHECK(r.exit_code == 0 && json_array_size(streams) == 1 &&
               json_integer_value(json_object_get(blocks, "count")) == 2,
           "inspect --json of two streams: exit %d, %zu streams shown, %lld blocks: %s",
           r.exit_code, json_array_size(streams),
           (long long)json_integer_value(json_object_get(blocks, "count")), r.err);
  json_decref(got);
  tu_cli_result_free(&r);
  r = run("inspect --json --streams '%s'", path);
  got = json_loads(r.out, 0, &jerr);
  streams = json_object_get(got, "streams");
  TU_CHECK(
      r.exit_code == 0 && json_array_size(streams) == 2 &&
          json_integer_value(json_object_get(json_array_get(streams, 1), "offset")) ==
              (json_int_t)first,
      "inspect --json --streams of two streams: exit %d, %zu streams, the second at %lld (want "
      "%zu): %s",
      r.exit_code, json_array_size(streams),
      (long long)json_integer_value(json_object_get(json_array_get(streams, 1), "offset")), first,
      r.err);
  json_decref(got);
  json_decref(doc);
  tu_cli_result_free(&r);

  tmp_path(path, sizeof path, "mixed.stream");
  write_concatenation(path, "1.0.0-littleendian/generated_primitive.stream",
                      "1.0.0-littleendian/generated_nested.stream", NULL, 0, &first);
  r = run("cat '%s'", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "schema differs"),
           "cat of streams of two schemas: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);

  static const char garbage[] = "not IPC!"; /* 8 bytes */
  tmp_path(path, sizeof path, "tail.stream");
  write_concatenation(path, "1.0.0-littleendian/generated_primitive.stream",
                      "1.0.0-littleendian/generated_primitive.stream", garbage, 8, &first);
  char want_err[200];
  snprintf(want_err, sizeof want_err,
           "IPC stream 2 at byte %zu: the IPC stream ends at byte %zu and 8 bytes "
           "follow that are not an Arrow IPC stream",
           first, 2 * first);
  r = run("inspect '%s'", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, want_err),
           "bytes after the last stream: exit %d, want \"%s\": %s", r.exit_code, want_err, r.err);
  tu_cli_result_free(&r);
  r = run("cat - < '%s'", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "bytes follow that are not an Arrow IPC stream"),
           "bytes after the last stream on stdin: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);

  /* Fewer bytes than a continuation marker after the last stream, through a
   * pipe: named as bytes that follow, as from a file, how many too, not as
   * an IPC stream that has no marker. */
  tmp_path(path, sizeof path, "short_tail.stream");
  write_concatenation(path, "1.0.0-littleendian/generated_primitive.stream",
                      "1.0.0-littleendian/generated_primitive.stream", "XX", 2, &first);
  snprintf(want_err, sizeof want_err,
           "the IPC stream ends at byte %zu and 2 bytes follow that are not an Arrow IPC stream "
           "or file (they are 58 58)",
           2 * first);
  r = tu_cli_piped_runf(cli, path, "cat -");
  TU_CHECK(r.exit_code == 1 && strstr(r.err, want_err),
           "2 bytes after the last stream through a pipe: exit %d, want \"%s\": %s", r.exit_code,
           want_err, r.err);
  tu_cli_result_free(&r);
}

/* ---- inspect ------------------------------------------------------------------------ */

/* What a column of the gold JSON decodes to, by the columnar format: a
 * validity bitmap when there are nulls, then 8-byte values, or 32-bit
 * offsets and the string bytes (the two types of the compression files). */
static json_int_t decoded_bytes(json_t *doc, const char *column) {
  json_int_t sum = 0;
  size_t i, k;
  json_t *b, *c;
  json_array_foreach(json_object_get(doc, "batches"), i, b)
      json_array_foreach(json_object_get(b, "columns"), k, c) {
    if (strcmp(json_string_value(json_object_get(c, "name")), column) != 0) continue;
    json_int_t n = json_integer_value(json_object_get(c, "count")), valid = 0;
    size_t v;
    json_t *bit;
    json_array_foreach(json_object_get(c, "VALIDITY"), v, bit) valid += json_integer_value(bit);
    json_t *offsets = json_object_get(c, "OFFSET");
    sum += valid < n ? (n + 7) / 8 : 0;
    json_t *last = json_array_get(offsets, json_array_size(offsets) - 1); /* large types: strings */
    if (offsets != NULL)
      sum += 4 * (n + 1) +
             (json_is_string(last) ? atoll(json_string_value(last)) : json_integer_value(last));
    else
      sum += 8 * n;
  }
  return sum;
}

static json_t *inspect_json(const char *args_fmt, const char *path) {
  char args[4400];
  snprintf(args, sizeof args, args_fmt, path);
  tu_cli_result r = run("%s", args);
  json_error_t jerr;
  json_t *doc = r.exit_code == 0 ? json_loads(r.out, 0, &jerr) : NULL;
  TU_CHECK(doc != NULL, "%s: exit %d, not JSON: %.300s %s", args, r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  return doc;
}

/* inspect's text report with what only a codec adds left out: its lines
 * ("file: ", whose name differs, "codec: ", "codec zstd: ...") and the
 * word "decoded " of its offsets.  Freed by the caller. */
static char *without_codec(const char *report) {
  tu_bytes kept = {0};
  for (const char *line = report; *line != '\0';) {
    const char *end = strchr(line, '\n');
    size_t n = end != NULL ? (size_t)(end - line) + 1 : strlen(line);
    if (strncmp(line, "file: ", 6) != 0 && strncmp(line, "codec", 5) != 0)
      for (size_t i = 0; i < n; i++) {
        if (strncmp(line + i, "decoded byte", 12) == 0) i += 8; /* "decoded " */
        tu_bytes_append(&kept, line + i, 1);
      }
    line += n;
  }
  tu_bytes_append(&kept, "", 1);
  return (char *)kept.data;
}

/* The same IPC streams one after another, plain or in a stream codec
 * (zstd), make the same report: a file of blocks, the first stream shown,
 * the blocks line; the codec adds its own lines only.  The codec input
 * showed every stream and no blocks line. */
static void check_concatenated_codec(void) {
  char plain[4200], zst[4200];
  size_t first = 0;
  tmp_path(plain, sizeof plain, "codec_two.stream");
  tmp_path(zst, sizeof zst, "codec_two.stream.zst");
  write_concatenation(plain, "1.0.0-littleendian/generated_primitive.stream",
                      "1.0.0-littleendian/generated_primitive.stream", NULL, 0, &first);
  tu_encode_file(plain, XCHG_STREAM_ZSTD, zst);
  tu_cli_result p = run("inspect '%s'", plain), z = run("inspect '%s'", zst);
  tu_cli_result piped = tu_cli_piped_runf(cli, zst, "inspect -");
  char *pw = without_codec(p.out), *zw = without_codec(z.out), *sw = without_codec(piped.out);
  TU_CHECK(p.exit_code == 0 && z.exit_code == 0 && strstr(p.out, "\nblocks: 2 IPC streams") &&
               strcmp(pw, zw) == 0,
           "inspect of two streams, plain and in zstd: exit %d and %d, reports differ but for "
           "the codec:\n%s\n----\n%s%s%s",
           p.exit_code, z.exit_code, p.out, z.out, p.err, z.err);
  TU_CHECK(piped.exit_code == 0 && strcmp(pw, sw) == 0 && strstr(z.out, "codec: zstd\n") &&
               strstr(z.out, "\ncodec zstd: "),
           "inspect - of two streams in zstd through a pipe: exit %d:\n%s%s", piped.exit_code,
           piped.out, piped.err);
  free(pw);
  free(zw);
  free(sw);
  tu_cli_result_free(&p);
  tu_cli_result_free(&z);
  tu_cli_result_free(&piped);
  json_t *doc = inspect_json("inspect --json '%s'", zst),
         *streams = json_object_get(doc, "streams");
  json_t *blocks = json_object_get(doc, "blocks");
  TU_CHECK(
      json_array_size(streams) == 1 && json_integer_value(json_object_get(blocks, "count")) == 2 &&
          json_integer_value(json_object_get(blocks, "rows")) ==
              json_integer_value(json_object_get(json_object_get(doc, "totals"), "rows")),
      "inspect --json of two streams in zstd: %zu streams shown, %lld blocks",
      json_array_size(streams), (long long)json_integer_value(json_object_get(blocks, "count")));
  json_decref(doc);
  doc = inspect_json("inspect --json --streams '%s'", zst);
  TU_CHECK(json_array_size(json_object_get(doc, "streams")) == 2,
           "inspect --json --streams of two streams in zstd: %zu streams shown",
           json_array_size(json_object_get(doc, "streams")));
  json_decref(doc);
  /* Streams of two schemas, which the shuffle reader refuses: all shown,
   * and the blocks line says why, its offset said to be decoded. */
  write_concatenation(plain, "1.0.0-littleendian/generated_primitive.stream",
                      "1.0.0-littleendian/generated_nested.stream", NULL, 0, &first);
  tu_encode_file(plain, XCHG_STREAM_ZSTD, zst);
  char want[128];
  snprintf(want, sizeof want,
           "\nblocks: not read as shuffle blocks: block 1 (source 0, decoded byte %zu): ", first);
  p = run("inspect '%s'", zst);
  TU_CHECK(p.exit_code == 0 && strstr(p.out, want) && strstr(p.out, "\nIPC stream 2 at decoded "),
           "inspect of two schemas in zstd: exit %d, want \"%s\": %s%s", p.exit_code, want, p.out,
           p.err);
  tu_cli_result_free(&p);
}

static json_t *json_column(json_t *doc, int index) {
  return json_array_get(
      json_object_get(json_array_get(json_object_get(doc, "streams"), 0), "columns"),
      (size_t)index);
}

static void check_column_bytes(void) {
  /* no record batch: every column's bytes are 0, known (they were null) */
  char none[4200];
  gold_path(none, sizeof none, "1.0.0-littleendian/generated_primitive_no_batches.stream");
  json_t *empty = inspect_json("inspect --json '%s'", none);
  json_t *columns =
      json_object_get(json_array_get(json_object_get(empty, "streams"), 0), "columns");
  size_t n;
  json_t *each;
  json_array_foreach(columns, n, each) {
    json_t *body = json_object_get(each, "body_bytes"),
           *decoded = json_object_get(each, "decoded_bytes");
    TU_CHECK(json_is_integer(body) && json_integer_value(body) == 0 && json_is_integer(decoded) &&
                 json_integer_value(decoded) == 0,
             "inspect --json of no record batch: column %zu's bytes are not 0", n);
  }
  TU_CHECK(json_array_size(columns) > 0, "inspect --json of no record batch: no columns");
  json_decref(empty);
  static const char *const files[] = {"generated_lz4", "generated_zstd"};
  for (int f = 0; f < 2; f++) {
    char name[128], path[4200], plain[4200];
    snprintf(name, sizeof name, "2.0.0-compression/%s.json.gz", files[f]);
    json_t *want = load_gold_json(name);
    snprintf(name, sizeof name, "2.0.0-compression/%s.stream", files[f]);
    gold_path(path, sizeof path, name);
    json_t *got = inspect_json("inspect --json '%s'", path);
    tmp_path(plain, sizeof plain, "uncompressed.stream");
    tu_cli_result c = run("convert '%s' '%s' -f --compression none", path, plain);
    TU_CHECK(c.exit_code == 0, "convert --compression none: %s", c.err);
    tu_cli_result_free(&c);
    json_t *uncompressed = inspect_json("inspect --json '%s'", plain);
    json_t *stream = json_array_get(json_object_get(got, "streams"), 0);
    TU_CHECK(json_integer_value(json_object_get(stream, "rows")) == (json_int_t)gold_rows(want) &&
                 json_integer_value(json_object_get(stream, "record_batches")) ==
                     (json_int_t)json_array_size(json_object_get(want, "batches")),
             "%s: rows and batches differ from the gold JSON", files[f]);
    json_int_t wire_sum = 0, decoded_of_first = -1;
    for (int k = 0; k < 2; k++) {
      json_t *col = json_column(got, k);
      const char *column = json_string_value(json_object_get(col, "name"));
      json_int_t decoded = json_integer_value(json_object_get(col, "decoded_bytes"));
      json_int_t wire = json_integer_value(json_object_get(col, "body_bytes"));
      json_int_t plain_wire =
          json_integer_value(json_object_get(json_column(uncompressed, k), "body_bytes"));
      json_int_t expected = column ? decoded_bytes(want, column) : -1;
      TU_CHECK(
          decoded == expected && plain_wire == expected && wire > 0 && wire < decoded,
          "%s column %s: decoded %lld, uncompressed body %lld, the format says %lld; wire %lld",
          files[f], column ? column : "?", (long long)decoded, (long long)plain_wire,
          (long long)expected, (long long)wire);
      wire_sum += wire;
      if (k == 0) decoded_of_first = decoded;
    }
    TU_CHECK(wire_sum <= json_integer_value(json_object_get(stream, "body_bytes")),
             "%s: the columns' body bytes exceed the batches' bodies", files[f]);
    json_decref(uncompressed);
    json_decref(got);
    json_decref(want);
    /* Inside a stream codec the compressed lengths come with the bodies,
     * after the message: unknown, not invented.  Plain IPC on standard
     * input is copied to a file first: known, as of the file. */
    got = inspect_json("inspect --json - < '%s'", path);
    TU_CHECK(json_integer_value(json_object_get(json_column(got, 0), "decoded_bytes")) ==
                 decoded_of_first,
             "%s from stdin: decoded bytes %lld, the file's %lld", files[f],
             (long long)json_integer_value(json_object_get(json_column(got, 0), "decoded_bytes")),
             (long long)decoded_of_first);
    json_decref(got);
    tu_bytes ipc = tu_read_bytes(path), framed = {0};
    char lz4[4400];
    snprintf(lz4, sizeof lz4, "%s.lz4", path);
    TU_CHECK(ipc.data != NULL &&
                 tu_append_encoded(&framed, XCHG_STREAM_LZ4_FRAME, NULL, ipc.data, ipc.size) &&
                 tu_write_file(lz4, framed.data, framed.size) == 0,
             "cannot write %s", lz4);
    free(ipc.data);
    free(framed.data);
    got = inspect_json("inspect --json - < '%s'", lz4);
    TU_CHECK(json_is_null(json_object_get(json_column(got, 0), "decoded_bytes")) &&
                 json_integer_value(json_object_get(json_column(got, 0), "body_bytes")) > 0,
             "%s in an LZ4 frame from stdin: decoded bytes must be null, body bytes known",
             files[f]);
    json_decref(got);
    unlink(lz4);
  }
}

/* A stream of n int64 columns named names[], one row (7 in each). */
static void write_named_columns(const char *path, const char *const *names, int n) {
  static int64_t value = 7;
  static const void *child_buffers[2] = {NULL, &value};
  static const void *root_buffers[1] = {NULL};
  struct ArrowSchema x[8], schema, *fields[8];
  struct ArrowArray child[8], batch, *children[8];
  TU_CHECK(n <= 8, "write_named_columns: %d columns", n);
  for (int i = 0; i < n && i < 8; i++) {
    tu_fixture_schema(&x[i], "l", names[i], 0, NULL);
    tu_fixture_array(&child[i], 1, 2, child_buffers, 0, NULL);
    fields[i] = &x[i];
    children[i] = &child[i];
  }
  tu_fixture_schema(&schema, "+s", "", n, fields);
  schema.flags = 0;
  tu_fixture_array(&batch, 1, 1, root_buffers, n, children);
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  xchg_buf *out = NULL;
  char msg[512] = "cannot write the file";
  TU_CHECK(rt_write(&schema, &batch, 1, &opts, &out, msg, sizeof msg) == 0 &&
               tu_write_file(path, xchg_buf_data(out), xchg_buf_size(out)) == 0,
           "cannot write %s: %s", path, msg);
  xchg_buf_unref(out);
}

/* A stream of one int64 column "x" holding one row (7). */
static void write_one_row(const char *path) {
  static const char *const x[1] = {"x"};
  write_named_columns(path, x, 1);
}

/* --columns: a column named "#0" is taken by its name, not as position 0;
 * a name with a comma is reached by its position (--help says both). */
static void check_position_names(void) {
  static const char *const names[] = {"x", "a,b", "#0"};
  char path[4200];
  tmp_path(path, sizeof path, "position_names.stream");
  write_named_columns(path, names, 3);
  static const struct {
    const char *columns, *want;
  } cases[] = {{"#0", "{\"#0\":7}\n"}, {"#1", "{\"a,b\":7}\n"}};
  for (int i = 0; i < 2; i++) {
    tu_cli_result r = run("cat '%s' --columns '%s' --format json", path, cases[i].columns);
    TU_CHECK(r.exit_code == 0 && strcmp(r.out, cases[i].want) == 0,
             "--columns '%s' of x, \"a,b\", \"#0\": exit %d: %s%s", cases[i].columns, r.exit_code,
             r.out, r.err);
    tu_cli_result_free(&r);
  }
}

/* Names that would read ambiguously in inspect's lines ("[0] NAME: type")
 * and in cat's list of columns (", " between names) are shown as JSON
 * strings; plain names as they are. */
static void check_odd_names(void) {
  static const char *const names[] = {"a\nb", "c,d", "e\"f", "", " g", "h:i", "plain"};
  char path[4200];
  tmp_path(path, sizeof path, "odd_names.stream");
  write_named_columns(path, names, 7);
  tu_cli_result r = run("inspect '%s'", path);
  static const char *const lines[] = {"\n  [0] \"a\\nb\": int64",  "\n  [1] c,d: int64",
                                      "\n  [2] \"e\\\"f\": int64", "\n  [3] \"\": int64",
                                      "\n  [4] \" g\": int64",     "\n  [5] \"h:i\": int64",
                                      "\n  [6] plain: int64",      "\n  [0] \"a\\nb\": body "};
  for (int i = 0; i < 8; i++)
    TU_CHECK(r.exit_code == 0 && strstr(r.out, lines[i]) != NULL,
             "inspect of odd names: no line \"%s\": exit %d: %s", lines[i] + 1, r.exit_code, r.out);
  tu_cli_result_free(&r);
  r = run("cat '%s' --columns nope", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err,
                                      "(the columns are: \"a\\nb\", \"c,d\", \"e\\\"f\", "
                                      "\"\", \" g\", h:i, plain)"),
           "cat --columns nope of odd names: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  /* An error quoting a name (a second stream naming the column otherwise)
   * escapes its control characters: one line, no escape sequence. */
  static const char *const escape[1] = {"a\x1b[31mb\nc"}, *const plain[1] = {"plain"};
  char first[4200], second[4200], both[4200];
  tmp_path(first, sizeof first, "escape_a.stream");
  tmp_path(second, sizeof second, "escape_b.stream");
  tmp_path(both, sizeof both, "escape_ab.stream");
  write_named_columns(first, escape, 1);
  write_named_columns(second, plain, 1);
  tu_bytes x = tu_read_bytes(first), y = tu_read_bytes(second), all = {0};
  tu_bytes_append(&all, x.data, x.size);
  tu_bytes_append(&all, y.data, y.size);
  TU_CHECK(tu_write_file(both, all.data, all.size) == 0, "cannot write %s", both);
  free(x.data);
  free(y.data);
  free(all.data);
  r = run("cat '%s'", both);
  const char *nl = strchr(r.err, '\n');
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "column 0 \"a\\x1B[31mb\\nc\"") &&
               !strchr(r.err, '\x1b') && nl != NULL && nl[1] == '\0',
           "an error quoting a name with ESC and a newline: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
}

static void check_inspect_text(void) {
  char path[4200];
  tmp_path(path, sizeof path, "one.stream");
  write_one_row(path);
  tu_cli_result r = run("inspect '%s'", path);
  TU_CHECK(r.exit_code == 0 &&
               strstr(r.out, "\nsummary: 1 record batch, 1 row, 0 dictionary batches; ") &&
               strstr(r.out, "\nschema: 1 field\n"),
           "plurals: exit %d: %s%s", r.exit_code, r.out, r.err);
  TU_CHECK(strstr(r.out, "#0 schema") == NULL, "the message list shows without --messages: %s",
           r.out);
  tu_cli_result_free(&r);
  r = run("inspect --messages '%s'", path);
  TU_CHECK(r.exit_code == 0 && strstr(r.out, "\nmessages:\n  #0 schema ") &&
               strstr(r.out, "\n  #1 record batch "),
           "--messages lists the messages: %s", r.out);
  /* The summary comes before the schema's fields and the message list. */
  const char *summary = strstr(r.out, "\nsummary: "), *fields = strstr(r.out, "\n  [0] x: int64"),
             *messages = strstr(r.out, "\nmessages:");
  TU_CHECK(summary && fields && messages && summary < fields && fields < messages,
           "order of the sections: %s", r.out);
  tu_cli_result_free(&r);

  /* Human sizes beside the raw counts: generated_primitive's bodies pass 1 KiB. */
  gold_path(path, sizeof path, "1.0.0-littleendian/generated_primitive.stream");
  json_t *doc = inspect_json("inspect --json '%s'", path);
  json_int_t body =
      json_integer_value(json_object_get(json_object_get(doc, "totals"), "body_bytes"));
  char want[128];
  snprintf(want, sizeof want, ", body %.1f KiB (%lld B)\n", (double)body / 1024,
           (long long)body); /* 3 digits */
  r = run("inspect '%s'", path);
  TU_CHECK(body > 10240 && body < 102400 && strstr(r.out, want), "want \"%s\" in: %.600s", want,
           r.out);
  tu_cli_result_free(&r);
  json_decref(doc);
}

static void check_inspect_json_messages(void) {
  char path[4200];
  gold_path(path, sizeof path, "1.0.0-littleendian/generated_dictionary.stream");
  json_t *want = load_gold_json("1.0.0-littleendian/generated_dictionary.json.gz");
  json_t *doc = inspect_json("inspect --json --messages '%s'", path);
  json_t *stream = json_array_get(json_object_get(doc, "streams"), 0);
  json_t *messages = json_object_get(stream, "messages");
  size_t batches = json_array_size(json_object_get(want, "batches"));
  size_t dictionaries = json_array_size(json_object_get(want, "dictionaries"));
  TU_CHECK(json_array_size(messages) == 1 + batches + dictionaries &&
               strcmp(json_string_value(json_object_get(json_array_get(messages, 0), "kind")),
                      "schema") == 0 &&
               json_is_null(json_object_get(doc, "codec")) &&
               json_array_size(json_object_get(json_object_get(stream, "schema"), "fields")) ==
                   json_array_size(json_object_get(json_object_get(want, "schema"), "fields")),
           "inspect --json --messages: %zu messages (want %zu)", json_array_size(messages),
           1 + batches + dictionaries);
  json_t *no_messages = inspect_json("inspect --json '%s'", path);
  TU_CHECK(json_object_get(json_array_get(json_object_get(no_messages, "streams"), 0),
                           "messages") == NULL,
           "--json without --messages lists messages");
  json_decref(no_messages);
  json_decref(doc);
  json_decref(want);
}

/* ---- flags ------------------------------------------------------------------------- */

static void check_flag_conflicts(void) {
  char in[4200], out[4200];
  gold_path(in, sizeof in, "1.0.0-littleendian/generated_primitive.stream");
  tmp_path(out, sizeof out, "conflict.out");
  const char *refused[] = {"convert '%s' '%s' --file --stream", "convert '%s' '%s' --stream --file",
                           "convert '%s' '%s' --level 3",
                           "convert '%s' '%s' --compression none --level 3"};
  for (int i = 0; i < 4; i++) {
    char args[9000];
    snprintf(args, sizeof args, refused[i], in, out);
    tu_cli_result r = run("%s", args);
    TU_CHECK(r.exit_code == 2 && access(out, F_OK) != 0, "%s: exit %d (want 2, no output): %s",
             refused[i], r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  const char *gen_refused[] = {
      "gen rows '%s' --rows 10 --file", "gen rows '%s' --rows 10 --outer lz4-java",
      "gen cache '%s' --rows 10 --level 3", "gen rows '%s' --rows 10 --compression none --level 1",
      /* a Comet block holds an IPC stream: an IPC file in one read back nowhere */
      "gen broadcast '%s' --rows 9 --file --outer comet"};
  for (int i = 0; i < 5; i++) {
    char args[9000];
    snprintf(args, sizeof args, gen_refused[i], out);
    tu_cli_result r = run("%s", args);
    TU_CHECK(r.exit_code == 2 && access(out, F_OK) != 0, "%s: exit %d (want 2): %s", gen_refused[i],
             r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  tu_cli_result r = run("gen cache '%s' --rows 10 --compression zstd --level 3", out);
  TU_CHECK(r.exit_code == 0, "gen with a codec and a level: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  unlink(out);
  /* ZSTD's level unless told is the shape's, 1 (SHAPES.md; bench decode
   * writes it so), not zstd's own 3: the bytes of --level 1 */
  tu_bytes level[3];
  static const char *const levels[3] = {"", " --level 1", " --level 3"};
  for (int i = 0; i < 3; i++) {
    r = run("gen cache '%s' --rows 20000 --compression zstd -f%s", out, levels[i]);
    tu_cli_result_free(&r);
    level[i] = tu_read_bytes(out);
  }
  TU_CHECK(
      level[0].data && level[1].data && level[2].data && level[0].size == level[1].size &&
          !memcmp(level[0].data, level[1].data, level[0].size) &&
          (level[0].size != level[2].size || memcmp(level[0].data, level[2].data, level[0].size)),
      "gen cache --compression zstd: %zu bytes, %zu at --level 1, %zu at --level 3", level[0].size,
      level[1].size, level[2].size);
  for (int i = 0; i < 3; i++) free(level[i].data);
  unlink(out);
  /* broadcast's output is compressed by --outer (lz4-java by default),
   * which --level does not set: the error says what is not compressed */
  r = run("gen broadcast '%s' --rows 10 --level 3", out);
  TU_CHECK(r.exit_code == 2 && strstr(r.err, "--compression is none") != NULL &&
               strstr(r.err, "output is not compressed") == NULL,
           "gen broadcast --level without --compression: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  /* rows have no end-of-stream marker to do without */
  r = run("inspect --rows --allow-missing-eos '%s'", in);
  TU_CHECK(r.exit_code == 2 && strstr(r.err, "--allow-missing-eos goes without --rows") != NULL,
           "inspect --rows --allow-missing-eos: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
}

/* Every command reads its line the same way (getopt_long): "--name=value"
 * as "--name value", "--" ending the options so that an input named
 * "-x.arrows" can be read, a unique prefix of a long name, "-h"; an
 * ambiguous prefix names the options it may be, and a flag given a value
 * says it takes none.  Run in tmp, where the dash-named files are. */
static void check_option_forms(void) {
  char in[4200], dash[4200], cwd[4096];
  gold_path(in, sizeof in, "1.0.0-littleendian/generated_primitive.stream");
  tmp_path(dash, sizeof dash, "-dash.arrows");
  tu_run("cp '%s' '%s'", in, dash);
  TU_CHECK(getcwd(cwd, sizeof cwd) != NULL && chdir(tmp) == 0, "chdir %s", tmp);
  tu_cli_result want = run("cat '%s' --limit 3", in);
  static const char *const same_rows[] = {"cat --limit=3 -- -dash.arrows",
                                          "cat --lim 3 -- -dash.arrows",
                                          "cat --format=csv ./-dash.arrows --limit=3",
                                          "cat ./-dash.arrows --limit 3",
                                          "cat ./-dash.arrows --format csv -- --limit=3",
                                          "cat - --limit 3 < -dash.arrows"};
  /* The same with POSIXLY_CORRECT set, under which glibc's getopt stops at
   * the first operand ("one input at a time ('./-dash.arrows' and
   * '--limit')"): the options after it are read all the same. */
  for (int posix = 0; posix < 2; posix++)
    for (int i = 0; i < 6; i++) {
      if (posix) setenv("POSIXLY_CORRECT", "1", 1);
      tu_cli_result r = run("%s", same_rows[i]);
      unsetenv("POSIXLY_CORRECT");
      bool fails = i == 4; /* "--limit=3" after "--" is a second input */
      TU_CHECK(fails ? r.exit_code == 2 && strstr(r.err,
                                                  "one input at a time ('./-dash.arrows' "
                                                  "and '--limit=3')")
                     : r.exit_code == 0 && want.exit_code == 0 && strcmp(r.out, want.out) == 0,
               "%s%s: exit %d, not %s: %.300s", posix ? "POSIXLY_CORRECT=1 " : "", same_rows[i],
               r.exit_code, fails ? "a usage error" : "the rows of cat FILE --limit 3", r.err);
      tu_cli_result_free(&r);
    }
  tu_cli_result_free(&want);
  static const char *const fine[] = {
      "inspect --json -- -dash.arrows",
      "convert --batch-rows=2 --compression=zstd --level=3 --align=64 -- -dash.arrows -out.arrows",
      "gen rows --rows=10 --seed=7 -- -gen.rows",
      "convert ./-dash.arrows ./-posix.arrows --batch-rows=2 -f",
      "gen rows ./-gen.rows --rows 10 -f",
      "inspect ./-dash.arrows --json"};
  for (int i = 0; i < 6; i++) {
    if (i >= 3) setenv("POSIXLY_CORRECT", "1", 1); /* options after operands, as above */
    tu_cli_result r = run("%s", fine[i]);
    unsetenv("POSIXLY_CORRECT");
    TU_CHECK(r.exit_code == 0, "%s%s: exit %d: %.300s", i >= 3 ? "POSIXLY_CORRECT=1 " : "", fine[i],
             r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  tu_cli_result a = run("cat -- -dash.arrows"), b = run("cat -- -out.arrows");
  TU_CHECK(a.exit_code == 0 && b.exit_code == 0 && strcmp(a.out, b.out) == 0,
           "convert --batch-rows=2 -- -dash.arrows -out.arrows changed the rows: %.300s", b.err);
  tu_cli_result_free(&a);
  tu_cli_result_free(&b);
  static const struct {
    const char *args, *says;
  } refused[] = {{"cat --co x -- -dash.arrows", "'--co' is ambiguous: --columns or --codec"},
                 {"inspect --json=yes -- -dash.arrows", "'--json=yes' takes no value"},
                 {"convert -- -dash.arrows", "needs IN and OUT"},
                 {"gen rows a b", "too many arguments: SHAPE and OUT only, not 'b' too"},
                 {"gen cache x.arrows --outer lz4", "codec 'lz4' is ambiguous: choose lz4-java"},
                 {"gen cache x.arrows --outer auto", "codec 'auto' names no codec to write"},
                 {"gen cache x.arrows --outer brotli", "snappy-framed, comet or none)"},
                 {"cat --input-codec brotli x.arrows", "snappy-framed, comet, none or auto)"},
                 {"inspect -- -dash.arrows b", "one input at a time ('-dash.arrows' and 'b')"},
                 {"gen rows --rows=-1 x.rows", "--rows must be an integer from 0 to"},
                 {"gen rows --seed=-1 x.rows", "--seed must be an integer from 0 to"},
                 {"bench rows --rows=0", "--rows must be an integer from 1 to"},
                 {"inspect -dash.arrows", "unknown option '-d'"}};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    tu_cli_result r = run("%s", refused[i].args);
    TU_CHECK(r.exit_code == 2 && strstr(r.err, refused[i].says) != NULL,
             "%s: exit %d (want 2, saying \"%s\"): %s", refused[i].args, r.exit_code,
             refused[i].says, r.err);
    tu_cli_result_free(&r);
  }
  static const char *const helps[] = {"cat", "inspect",    "convert",
                                      "gen", "bench rows", "bench decode"};
  for (int i = 0; i < 6; i++) {
    tu_cli_result r = run("%s -h", helps[i]);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, "usage: xchg "), "%s -h: exit %d: %s", helps[i],
             r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  TU_CHECK(chdir(cwd) == 0, "chdir %s", cwd);
}

/* `xchg help COMMAND [SUBCOMMAND]` prints what `xchg COMMAND [SUBCOMMAND]
 * --help` prints (it printed the list of commands, whatever COMMAND was);
 * options after it are left out; an unknown command is a usage error. */
static void check_help_command(void) {
  static const char *const commands[] = {"cat", "inspect", "convert", "gen", "bench decode"};
  for (int i = 0; i < 5; i++) {
    tu_cli_result help = run("help %s", commands[i]), own = run("%s --help", commands[i]);
    TU_CHECK(help.exit_code == 0 && own.exit_code == 0 && strcmp(help.out, own.out) == 0,
             "help %s: exit %d, not what '%s --help' prints: %.200s", commands[i], help.exit_code,
             commands[i], help.out);
    tu_cli_result_free(&help);
    tu_cli_result_free(&own);
  }
  tu_cli_result r = run("help cat --columns");
  TU_CHECK(r.exit_code == 0 && strncmp(r.out, "usage: xchg cat ", 16) == 0,
           "help cat --columns: exit %d: %.200s", r.exit_code, r.out);
  tu_cli_result_free(&r);
  r = run("help nosuch");
  TU_CHECK(r.exit_code == 2 && strstr(r.err, "no help for 'nosuch': there is no such command"),
           "help nosuch: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
}

/* ---- bench ------------------------------------------------------------------------- */

static void check_bench_help(void) {
  static const struct {
    const char *name;
    const char *explains[3];
  } helps[] = {{"rows", {"decompress_only", "codec_limit", "within\nnoise"}},
               {"decode", {"limit_ms", "ratio", "GB/s"}},
               {"write", {"fresh MB/s", "memcpy MB/s", "ratio"}},
               {"broadcast", {"task CPU ms", "decodes", "retain/off"}}};
  for (int i = 0; i < 4; i++) {
    tu_cli_result r = run("bench %s --help", helps[i].name);
    TU_CHECK(r.exit_code == 0 && strstr(r.out, "usage: xchg bench ") && r.err[0] == '\0',
             "bench %s --help: exit %d, stderr %s", helps[i].name, r.exit_code, r.err);
    for (int k = 0; k < 3; k++)
      TU_CHECK(strstr(r.out, helps[i].explains[k]) != NULL,
               "bench %s --help does not explain \"%s\"", helps[i].name, helps[i].explains[k]);
    tu_cli_result_free(&r);
  }
  tu_cli_result r = run("bench rows --bogus");
  TU_CHECK(r.exit_code == 2 && strstr(r.err, "--bogus"), "bench rows --bogus: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
}

static void check_noise(void) {
  char buf[64];
  TU_CHECK(strcmp(bench_cost_text(buf, sizeof buf, -3.5, 1.0, "ns/row"),
                  "within noise (+-1.00 ns/row)") == 0,
           "a negative cost: \"%s\"", buf);
  TU_CHECK(strcmp(bench_cost_text(buf, sizeof buf, 0.5, 1.0, "ns/row"),
                  "within noise (+-1.00 ns/row)") == 0,
           "a cost inside the noise: \"%s\"", buf);
  TU_CHECK(strcmp(bench_cost_text(buf, sizeof buf, -0.5, 0.0, "%"), "within noise (+-0.00 %)") == 0,
           "a negative cost without spread: \"%s\"", buf);
  TU_CHECK(strcmp(bench_cost_text(buf, sizeof buf, 2.5, 1.0, "ns/row"), "2.50 ns/row") == 0,
           "a real cost: \"%s\"", buf);
  TU_CHECK(bench_noise(1, 3, 10, 14) == 3.0, "noise of [1,3] and [10,14]: %f",
           bench_noise(1, 3, 10, 14));
}

static void count_run(void *part) { (*(int *)part)++; }

/* bench_time_parts runs every part once; a thread it cannot start (here:
 * every new thread is given a stack larger than any address space) ends
 * the process saying which, rather than leaving the threads already
 * started at a barrier that never opens. */
static void check_time_parts(void) {
  int parts[3] = {0, 0, 0};
  TU_CHECK(bench_time_parts(3, count_run, parts, sizeof parts[0]) >= 0 && parts[0] == 1 &&
               parts[1] == 1 && parts[2] == 1,
           "parts run %d, %d, %d times", parts[0], parts[1], parts[2]);
  int err_pipe[2];
  if (!TU_CHECK(pipe(err_pipe) == 0, "pipe: %s", strerror(errno))) return;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(err_pipe[1], 2);
    pthread_attr_t huge;
    pthread_attr_init(&huge);
    pthread_attr_setstacksize(&huge, (size_t)1 << 50);
    pthread_setattr_default_np(&huge);
    alarm(60); /* a hang at the barrier is a failure, not a stuck suite */
    bench_time_parts(2, count_run, parts, sizeof parts[0]);
    _exit(0);
  }
  close(err_pipe[1]);
  char said[512] = "";
  ssize_t got = read(err_pipe[0], said, sizeof said - 1);
  said[got > 0 ? got : 0] = '\0';
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  TU_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
               strstr(said, "xchg bench: could not start thread 2 of 2"),
           "a thread that cannot start: status %d, stderr \"%s\"", status, said);
}

/* A speed-up and a slow-down against a baseline are each said as a ratio
 * above 1 with the word that fits (bench decode's threads target). */
static void check_speed_text(void) {
  char buf[32];
  TU_CHECK(strcmp(bench_speed_text(buf, sizeof buf, 50.0, 100.0), "2.00x faster") == 0,
           "half the time: \"%s\"", buf);
  TU_CHECK(strcmp(bench_speed_text(buf, sizeof buf, 110.0, 100.0), "1.10x slower") == 0,
           "10%% more time: \"%s\"", buf);
  TU_CHECK(strcmp(bench_speed_text(buf, sizeof buf, 100.0, 100.0), "1.00x faster") == 0,
           "the same time: \"%s\"", buf);
}

/* ---- progress ----------------------------------------------------------------------- */

/* Runs `xchg args...` with standard error on a new pty; returns what the
 * terminal received. */
static char *run_on_pty(char *const argv[], int *exit_code) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return NULL;
  const char *slave_name = ptsname(master);
  pid_t pid = fork();
  if (pid == 0) {
    int slave = open(slave_name, O_RDWR | O_NOCTTY);
    int null = open("/dev/null", O_RDWR);
    if (slave < 0 || null < 0) _exit(126);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(slave, STDERR_FILENO);
    close(master);
    execv(cli, argv);
    _exit(127);
  }
  tu_bytes seen = {0};
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
  return (char *)seen.data;
}

static void check_progress(void) {
  char in[4200], out[4200], blocks[4200];
  tmp_path(in, sizeof in, "big.stream");
  tmp_path(out, sizeof out, "big.arrow");
  tmp_path(blocks, sizeof blocks, "big.comet");
  tu_cli_result g = run("gen cache '%s' --rows 200000", in);
  TU_CHECK(g.exit_code == 0 && g.err[0] == '\0',
           "gen without a terminal prints nothing on stderr: exit %d: %s", g.exit_code, g.err);
  tu_cli_result_free(&g);
  g = run("gen shuffle '%s' --format comet --compression lz4 --rows 100000", blocks);
  TU_CHECK(g.exit_code == 0, "gen shuffle: exit %d: %s", g.exit_code, g.err);
  tu_cli_result_free(&g);
  char *convert[] = {(char *)cli, "convert", in, out, "-f", "--file", NULL};
  char *cat[] = {(char *)cli, "cat", in, "--limit", "1", NULL};
  char *cat_blocks[] = {(char *)cli, "cat", blocks, "--limit", "1", NULL}; /* the shuffle reader */
  char *convert_blocks[] = {(char *)cli, "convert", blocks, out, "-f", NULL};
  char *gen[] = {(char *)cli, "gen", "rows", out, "-f", "--rows", "100000", NULL};
  struct {
    const char *what, *label;
    char **argv;
  } cases[] = {{"convert", "\rconvert [", convert},
               {"gen rows", "\rrows [", gen},
               {"cat", "\rcat [", cat},
               {"cat of Comet blocks", "\rcat [", cat_blocks},
               {"convert of Comet blocks", "\rconvert [", convert_blocks}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = -1;
    char *seen = run_on_pty(cases[i].argv, &rc);
    TU_CHECK(
        seen != NULL && rc == 0 && strstr(seen, cases[i].label) && strstr(seen, "%") &&
            tu_has_suffix(seen, "\r\033[K"),
        "%s with stderr on a terminal: exit %d, want a progress line \"%s...\" erased at the end; got %.300s",
        cases[i].what, rc, cases[i].label + 1, seen ? seen : "(no pty)");
    free(seen);
  }
  tu_cli_result r = run("convert '%s' '%s' -f", in, out);
  TU_CHECK(r.exit_code == 0 && r.err[0] == '\0',
           "convert without a terminal prints nothing on stderr: %s", r.err);
  tu_cli_result_free(&r);
  unlink(in);
  unlink(out);
  unlink(blocks);
}

/* ---- Comet and row streams --------------------------------------------------------- */

static void check_empty_comet(void) {
  char path[4200];
  tmp_path(path, sizeof path, "empty.comet");
  TU_CHECK(tu_write_file(path, "", 0) == 0, "cannot write %s", path);
  tu_cli_result r = run("cat --input-codec comet '%s'", path);
  TU_CHECK(r.exit_code == 0 && r.out[0] == '\0', "cat of an empty Comet input: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run("cat --input-codec comet - </dev/null");
  TU_CHECK(r.exit_code == 0 && r.out[0] == '\0', "cat of an empty Comet stdin: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
  json_t *doc = inspect_json("inspect --json --input-codec comet '%s'", path);
  TU_CHECK(json_array_size(json_object_get(doc, "streams")) == 0 &&
               json_integer_value(
                   json_object_get(json_object_get(doc, "totals"), "record_batches")) == 0 &&
               json_object_get(json_object_get(doc, "totals"), "record_batches") != NULL,
           "inspect of an empty Comet input: no streams, 0 batches");
  json_decref(doc);
  /* What needs a schema refuses it in the same words, convert as cat
   * --format arrow-json, from a file and a pipe, OUT left alone. */
  char out[4200], args[4400];
  tmp_path(out, sizeof out, "empty_comet.arrows");
  static const char *const refused[][2] = {
      {"convert --input-codec comet %s '%s'", "the Arrow IPC output"},
      {"cat --input-codec comet --format arrow-json %s", "Arrow's integration JSON"}};
  for (int k = 0; k < 2; k++) {
    for (int piped = 0; piped < 2; piped++) {
      unlink(out);
      snprintf(args, sizeof args, refused[k][0], piped ? "- </dev/null" : path, out);
      r = run("%s", args);
      char want[256];
      snprintf(want, sizeof want,
               ": holds no IPC stream, so no schema for %s (an empty Comet input: a partition "
               "without rows)\n",
               refused[k][1]);
      size_t n = strlen(r.err), w = strlen(want);
      TU_CHECK(r.exit_code == 1 && r.out_len == 0 && n > w && !strcmp(r.err + n - w, want) &&
                   access(out, F_OK) != 0,
               "%s: exit %d, %zu bytes out, OUT %s: %s (want ...%s)", args, r.exit_code, r.out_len,
               access(out, F_OK) == 0 ? "written" : "absent", r.err, want);
      tu_cli_result_free(&r);
    }
  }
  r = run("cat '%s'",
          path); /* without --input-codec, nothing says it is Comet: empty IPC is an error */
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "empty"), "cat of an empty plain input: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
}

static void append_row(tu_bytes *b, uint32_t len, uint8_t fill) {
  uint8_t prefix[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                       (uint8_t)(len >> 24)};
  tu_bytes_append(b, prefix, 4);
  for (uint32_t i = 0; i < len; i++) tu_bytes_append(b, &fill, 1);
}

static void check_rows_view(void) {
  tu_bytes rows = {0};
  append_row(&rows, 5, 0xAB);
  append_row(&rows, 0, 0);
  append_row(&rows, 300, 0x01);
  append_row(&rows, 1, 0xFF);
  char plain[4200], framed[4200];
  tmp_path(plain, sizeof plain, "rows.bin");
  tmp_path(framed, sizeof framed, "rows.lz4");
  tu_bytes lz4 = {0};
  TU_CHECK(tu_write_file(plain, rows.data, rows.size) == 0 &&
               tu_append_encoded(&lz4, XCHG_STREAM_LZ4_FRAME, NULL, rows.data, rows.size) &&
               tu_write_file(framed, lz4.data, lz4.size) == 0,
           "cannot write the row streams");
  free(lz4.data);
  const char *want[] = {"\nrows: 4\n",
                        "min 0, max 300, mean 76.5\n",
                        "\n  0 B: 1\n",
                        "\n  1 B: 1\n",
                        "\n  4-7 B: 1\n",
                        "\n  256-511 B: 1\n",
                        "\n  #0  5 B  ABABABABAB\n",
                        "\n  #1  0 B  \n"};
  for (int f = 0; f < 2; f++) {
    tu_cli_result r = f == 0 ? run("inspect --rows --input-codec none --head 2 '%s'", plain)
                             : run("inspect --rows --head 2 '%s'", framed);
    TU_CHECK(r.exit_code == 0, "inspect --rows: exit %d: %s", r.exit_code, r.err);
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
      TU_CHECK(strstr(r.out, want[k]) != NULL, "inspect --rows (%s): no \"%s\" in:\n%s",
               f ? "lz4-frame" : "plain", want[k], r.out);
    TU_CHECK(strstr(r.out, "#2 ") == NULL, "--head 2 shows a third row: %s", r.out);
    TU_CHECK(f == 0 || strstr(r.out, "\ncodec: lz4-frame\n"), "inspect --rows names the codec: %s",
             r.out);
    tu_cli_result_free(&r);
  }
  /* A stream cut inside a row is an error, not a shorter stream. */
  TU_CHECK(tu_write_file(plain, rows.data, rows.size - 1) == 0, "cannot write");
  tu_cli_result r = run("inspect --rows --input-codec none '%s'", plain);
  TU_CHECK(r.exit_code == 1, "a cut row stream: exit %d: %s", r.exit_code, r.out);
  tu_cli_result_free(&r);
  free(rows.data);
}

/* ---- a cut message: the same error from a file and from a pipe ------------------- */

/* The error after "xchg: NAME: ", or "" when there is none. */
static const char *after_name(const char *err) {
  const char *colon = strstr(err, ": ");
  colon = colon ? strstr(colon + 2, ": ") : NULL;
  return colon ? colon + 2 : "";
}

/* cat, inspect and convert of the file `cut` (given flags, "" or
 * " --flag ..."), and of the same bytes through a pipe, each fail with
 * exit 1 and the error "xchg: NAME: " then where[c] (what names the IPC
 * stream for command c) then `want`. */
static void expect_cut_error_with(const char *flags, const char *cut, const char *const where[3],
                                  const char *want) {
  static const char *const commands[] = {"cat", "inspect", "convert"};
  for (int c = 0; c < 3; c++) {
    const char *out = c == 2 ? " - " : "";
    tu_cli_result file = run("%s%s '%s'%s", commands[c], flags, cut, out);
    char args[128], expected[1024];
    snprintf(args, sizeof args, "%s%s -%s", commands[c], flags, out);
    snprintf(expected, sizeof expected, "%s%s\n", where[c], want);
    tu_cli_result pipe;
    TU_CHECK(tu_cli_run_piped(cli, cut, args, &pipe), "cannot run %s", args);
    TU_CHECK(file.exit_code == 1 && !strcmp(after_name(file.err), expected),
             "%s FILE: exit %d: %s, expected %s", commands[c], file.exit_code, file.err, expected);
    TU_CHECK(pipe.exit_code == 1 && !strcmp(after_name(pipe.err), expected),
             "%s -: exit %d: %s, expected %s", commands[c], pipe.exit_code, pipe.err, expected);
    tu_cli_result_free(&file);
    tu_cli_result_free(&pipe);
  }
}

static void expect_cut_error(const char *cut, const char *const where[3], const char *want) {
  expect_cut_error_with("", cut, where, want);
}

/* generated_primitive.stream cut at byte `size`, written as `name`. */
static void cut_primitive(size_t size, const char *name, char *cut, size_t cut_size) {
  char path[4200];
  gold_path(path, sizeof path, "1.0.0-littleendian/generated_primitive.stream");
  tmp_path(cut, cut_size, name);
  tu_bytes b = tu_read_bytes(path);
  TU_CHECK(b.data != NULL && b.size > size, "cannot read %s", path);
  if (b.data && b.size > size)
    TU_CHECK(tu_write_file(cut, b.data, size) == 0, "cannot write %s", cut);
  free(b.data);
}

/* generated_primitive.stream cut at byte 4000, inside the body of message
 * 1 (bytes 3536 to 10544): a mapped file knows the size up front, a pipe
 * runs out while reading, and both name where the body starts, how much
 * it needs and how much there is, in the same words. */
static void check_cut_body(void) {
  char cut[4200];
  cut_primitive(4000, "cut.arrows", cut, sizeof cut);
  static const char *const plain[3] = {"", "", ""};
  expect_cut_error(cut, plain,
                   "the stream is cut short: message 1 at byte 1936: body: unexpected end of "
                   "data at byte 3536: "
                   "needed 7008 bytes, only 464 available (6544 missing)");
}

static uint64_t load_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

/* Two Comet blocks (codec NONE) of one gen shuffle block: the first
 * whole, the second with its IPC stream cut to `keep` bytes of message 1
 * (its framing and metadata: the schema message's size is in *schema_end,
 * message 1's metadata length in *metadata); written as `name`.  The
 * bytes that are left stay a valid block, so that the IPC reader inside
 * meets the cut. */
static bool comet_cut_in_message_1(const char *name, int64_t keep, char *path, size_t path_size,
                                   int64_t *block_bytes, int64_t *schema_end, int64_t *metadata) {
  char whole[4200];
  tmp_path(whole, sizeof whole, "one_block.comet");
  tmp_path(path, path_size, name);
  tu_cli_result g = run("gen shuffle '%s' --format comet --compression none --rows 64 -f", whole);
  TU_CHECK(g.exit_code == 0, "gen shuffle: exit %d: %s", g.exit_code, g.err);
  tu_cli_result_free(&g);
  tu_bytes b = tu_read_bytes(whole);
  enum { HEADER = 20 }; /* length (8), field count (8), codec (4) */
  bool ok = b.data && b.size > HEADER + 16 && load_le(b.data, 8) + 8 == b.size;
  TU_CHECK(ok, "%s: not one Comet block", whole);
  if (ok) {
    const uint8_t *ipc = b.data + HEADER;
    *block_bytes = (int64_t)b.size;
    *schema_end = 8 + (int64_t)load_le(ipc + 4, 4);
    *metadata = (int64_t)load_le(ipc + *schema_end + 4, 4);
    int64_t ipc_bytes = *schema_end + keep;
    uint8_t length[8];
    for (int k = 0; k < 8; k++)
      length[k] = (uint8_t)((uint64_t)(HEADER - 8 + ipc_bytes) >> (8 * k));
    tu_bytes out = {0};
    tu_bytes_append(&out, b.data, b.size);
    tu_bytes_append(&out, length, 8);
    tu_bytes_append(&out, b.data + 8, HEADER - 8 + (size_t)ipc_bytes);
    ok = tu_write_file(path, out.data, out.size) == 0;
    TU_CHECK(ok, "cannot write %s", path);
    free(out.data);
  }
  free(b.data);
  return ok;
}

/* A cut inside the metadata reads the same from a file as from a pipe,
 * and in the words of a cut body: of a plain IPC stream
 * (generated_primitive.stream cut at 3000, inside message 1's metadata,
 * bytes 1944 to 3536), and of Comet blocks, whose IPC is decoded in
 * memory by the shuffle reader (cat, convert) and read from a source by
 * inspect: all three say the same after naming the block or the stream,
 * for a cut in the metadata and a cut in the framing. */
static void check_cut_metadata(void) {
  char cut[4200];
  cut_primitive(3000, "cut_metadata.arrows", cut, sizeof cut);
  static const char *const plain[3] = {"", "", ""};
  expect_cut_error(cut, plain,
                   "the stream is cut short: message 1 at byte 1936: metadata: unexpected end "
                   "of data at byte 1944: "
                   "needed 1592 bytes, only 1056 available (536 missing)");
  int64_t block, schema_end, metadata;
  if (!comet_cut_in_message_1("cut_metadata.comet", 8 + 100, cut, sizeof cut, &block, &schema_end,
                              &metadata))
    return;
  char in_block[128], in_stream[128], want[512];
  snprintf(in_block, sizeof in_block, "block 1 (source 0, byte %lld): ", (long long)block);
  snprintf(in_stream, sizeof in_stream,
           "IPC stream 2 at decoded byte %lld: ", (long long)(block - 20));
  const char *const comet[3] = {in_block, in_stream, in_block};
  snprintf(want, sizeof want,
           "the stream is cut short: message 1 at byte %lld: metadata: unexpected end of data at "
           "byte %lld: needed %lld "
           "bytes, only 100 available (%lld missing)",
           (long long)schema_end, (long long)(schema_end + 8), (long long)metadata,
           (long long)(metadata - 100));
  expect_cut_error(cut, comet, want);
  if (!comet_cut_in_message_1("cut_framing.comet", 4, cut, sizeof cut, &block, &schema_end,
                              &metadata))
    return;
  snprintf(want, sizeof want,
           "the stream is cut short: input ends inside the framing of message 1 at byte %lld",
           (long long)schema_end);
  expect_cut_error(cut, comet, want);
}

/* ---- a stream without its end-of-stream marker ---------------------------------- */

/* generated_primitive.stream without its last 8 bytes, the marker, `copies`
 * times one after another, written as `name`: *each is one copy's size. */
static void write_without_marker(const char *name, int copies, char *path, size_t path_size,
                                 size_t *each) {
  char whole[4200];
  gold_path(whole, sizeof whole, "1.0.0-littleendian/generated_primitive.stream");
  tmp_path(path, path_size, name);
  tu_bytes b = tu_read_bytes(whole), all = {0};
  static const uint8_t marker[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  TU_CHECK(b.size > 8 && !memcmp(b.data + b.size - 8, marker, 8), "%s: no marker at its end",
           whole);
  *each = b.size > 8 ? b.size - 8 : 0;
  for (int k = 0; k < copies; k++) tu_bytes_append(&all, b.data, *each);
  TU_CHECK(tu_write_file(path, all.data, all.size) == 0, "cannot write %s", path);
  free(b.data);
  free(all.data);
}

/* cat of path, from the file and through a pipe, with flags: exit 0 and
 * `want` lines. */
static void expect_cat_lines(const char *path, const char *flags, int want, const char *what) {
  tu_cli_result file = run("cat%s '%s'", flags, path);
  tu_cli_result pipe = tu_cli_piped_runf(cli, path, "cat%s -", flags);
  TU_CHECK(file.exit_code == 0 && count_lines(file.out) == want,
           "cat%s of %s: exit %d, %d lines, want %d: %s", flags, what, file.exit_code,
           count_lines(file.out), want, file.err);
  TU_CHECK(pipe.exit_code == 0 && count_lines(pipe.out) == want,
           "cat%s - of %s: exit %d, %d lines, want %d: %s", flags, what, pipe.exit_code,
           count_lines(pipe.out), want, pipe.err);
  tu_cli_result_free(&file);
  tu_cli_result_free(&pipe);
}

/* The error of a stream without its marker, cut short where it ends at
 * `at` ("byte N", or "decoded byte N" in a codec's bytes) before message
 * 3, naming the flag that reads it. */
static void cut_short_hint(char *want, size_t size, const char *at, size_t each) {
  snprintf(want, size,
           "the stream is cut short: the input ends at %s %zu, before message 3, without the "
           "end-of-stream marker (--allow-missing-eos reads a stream whose writer left the "
           "optional marker out)",
           at, each);
}

/* Without --allow-missing-eos, a stream that ends where its marker would
 * begin is cut short, and the error names the flag, for cat, inspect and
 * convert, from a file and through a pipe. */
static void check_missing_eos_hint(void) {
  char path[4200], want[512];
  size_t each;
  write_without_marker("no_marker.stream", 1, path, sizeof path, &each);
  cut_short_hint(want, sizeof want, "byte", each);
  static const char *const plain[3] = {"", "", ""};
  expect_cut_error(path, plain, want);
}

/* With --allow-missing-eos such a stream is read to its end, alone and
 * as two IPC streams one after another (the second's schema message ends
 * the first, as the shuffle reader sees it), by cat (a file and a pipe),
 * convert and inspect; a stream cut inside a message is still cut short,
 * in the same words. */
static void check_missing_eos_read(void) {
  json_t *doc = load_gold_json("1.0.0-littleendian/generated_primitive.json.gz");
  int rows = (int)gold_rows(doc);
  json_decref(doc);
  char one[4200], two[4200], out[4200];
  size_t each;
  write_without_marker("no_marker_one.stream", 1, one, sizeof one, &each);
  write_without_marker("no_marker_two.stream", 2, two, sizeof two, &each);
  expect_cat_lines(one, " --allow-missing-eos", 1 + rows, "a stream without its marker");
  expect_cat_lines(two, " --allow-missing-eos", 1 + 2 * rows, "two streams without markers");

  tmp_path(out, sizeof out, "no_marker_two.converted");
  tu_cli_result r = run("convert --allow-missing-eos '%s' '%s' -f", two, out);
  TU_CHECK(r.exit_code == 0, "convert --allow-missing-eos: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  expect_cat_lines(out, "", 1 + 2 * rows, "what convert --allow-missing-eos wrote");

  r = run("inspect --json --streams --allow-missing-eos '%s'", two);
  json_error_t jerr;
  json_t *got = json_loads(r.out, 0, &jerr);
  json_t *streams = json_object_get(got, "streams");
  json_t *blocks = json_object_get(got, "blocks");
  json_int_t second = json_integer_value(json_object_get(json_array_get(streams, 1), "offset"));
  TU_CHECK(r.exit_code == 0 && json_array_size(streams) == 2 && second == (json_int_t)each &&
               json_integer_value(json_object_get(blocks, "count")) == 2,
           "inspect --allow-missing-eos of two streams without markers: exit %d, %zu streams, "
           "the second at %lld (want %zu), %lld blocks: %s",
           r.exit_code, json_array_size(streams), (long long)second, each,
           (long long)json_integer_value(json_object_get(blocks, "count")), r.err);
  json_decref(got);
  tu_cli_result_free(&r);

  char cut[4200];
  cut_primitive(4000, "cut_no_marker.arrows", cut, sizeof cut);
  static const char *const plain[3] = {"", "", ""};
  expect_cut_error_with(" --allow-missing-eos", cut, plain,
                        "the stream is cut short: message 1 at byte 1936: body: unexpected end "
                        "of data at byte 3536: needed 7008 bytes, only 464 available (6544 "
                        "missing)");
}

/* The codecs an IPC stream is wrapped in whole (Comet's blocks aside). */
static const xchg_stream_codec wrapping[] = {XCHG_STREAM_LZ4_JAVA, XCHG_STREAM_SNAPPY_JAVA,
                                             XCHG_STREAM_ZSTD, XCHG_STREAM_LZ4_FRAME,
                                             XCHG_STREAM_SNAPPY_FRAMED};

/* The bytes of plain (a file) encoded by codec, written as `name`. */
static bool write_encoded(const char *plain, xchg_stream_codec codec, const char *name, char *path,
                          size_t path_size) {
  tmp_path(path, path_size, name);
  return tu_encode_file(plain, codec, path);
}

/* Two streams without their markers, decoded from a codec, read as plain
 * ones are with --allow-missing-eos: the second's schema message ends the
 * first, detected or named by --input-codec, from a file and a pipe, by
 * cat, convert and inspect (which places the second where it begins in
 * the decoded bytes). */
static void check_missing_eos_codecs(void) {
  json_t *doc = load_gold_json("1.0.0-littleendian/generated_primitive.json.gz");
  int rows = (int)gold_rows(doc);
  json_decref(doc);
  char two[4200], path[4200], out[4200], name[64], flags[96];
  size_t each;
  write_without_marker("no_marker_two.stream", 2, two, sizeof two, &each);
  tmp_path(out, sizeof out, "no_marker_codec.converted");
  for (size_t c = 0; c < sizeof wrapping / sizeof wrapping[0]; c++) {
    const char *codec = xchg_stream_codec_name(wrapping[c]);
    snprintf(name, sizeof name, "no_marker_two.%s", codec);
    if (!write_encoded(two, wrapping[c], name, path, sizeof path)) continue;
    expect_cat_lines(path, " --allow-missing-eos", 1 + 2 * rows, name);
    snprintf(flags, sizeof flags, " --allow-missing-eos --input-codec %s", codec);
    expect_cat_lines(path, flags, 1 + 2 * rows, name);
    tu_cli_result r = run("convert --allow-missing-eos '%s' '%s' -f", path, out);
    TU_CHECK(r.exit_code == 0, "convert --allow-missing-eos of %s: exit %d: %s", name, r.exit_code,
             r.err);
    tu_cli_result_free(&r);
    expect_cat_lines(out, "", 1 + 2 * rows, "what convert --allow-missing-eos wrote");
    r = run("inspect --json --streams --allow-missing-eos '%s'", path);
    json_t *got = json_loads(r.out, 0, NULL);
    json_t *streams = json_object_get(got, "streams");
    json_int_t second = json_integer_value(json_object_get(json_array_get(streams, 1), "offset"));
    TU_CHECK(r.exit_code == 0 && json_array_size(streams) == 2 && second == (json_int_t)each,
             "inspect --allow-missing-eos of %s: exit %d, %zu streams, the second at %lld (want "
             "%zu): %s",
             name, r.exit_code, json_array_size(streams), (long long)second, each, r.err);
    json_decref(got);
    tu_cli_result_free(&r);
  }
}

/* `copies` streams without their markers (write_without_marker), then
 * tail[0..n), written as `name`. */
static void write_without_marker_then(const char *name, int copies, const void *tail, size_t n,
                                      char *path, size_t path_size, size_t *each) {
  write_without_marker(name, copies, path, path_size, each);
  tu_bytes b = tu_read_bytes(path);
  tu_bytes_append(&b, tail, n);
  TU_CHECK(tu_write_file(path, b.data, b.size) == 0, "cannot write %s", path);
  free(b.data);
}

/* With --allow-missing-eos, bytes after the last stream without its
 * marker that are no message (a text line) are said to follow it, where
 * it ends, as after a stream with its marker: plain and in each codec, one
 * stream or two, from a file and through a pipe.  They were read as a
 * message ("metadata length 1701670771 exceeds max_metadata_bytes").  A
 * message with the marker but a bad length keeps its error; an IPC file
 * after such a stream is read, as after one with its marker. */
static void check_missing_eos_tail(void) {
  static const char text[] = "some text line\n"; /* 15 bytes */
  static const char *const none[3] = {"", "", ""};
  char path[4200], coded[4200], name[64], want[512], where[96];
  size_t each;
  for (int copies = 1; copies <= 2; copies++) {
    snprintf(name, sizeof name, "no_marker_text%d.stream", copies);
    write_without_marker_then(name, copies, text, sizeof text - 1, path, sizeof path, &each);
    for (int c = -1; c < (int)(sizeof wrapping / sizeof wrapping[0]); c++) {
      const char *decoded = c < 0 ? "" : "decoded ";
      snprintf(name, sizeof name, "no_marker_text%d.%s", copies,
               c < 0 ? "plain" : xchg_stream_codec_name(wrapping[c]));
      if (c >= 0 && !write_encoded(path, wrapping[c], name, coded, sizeof coded)) continue;
      where[0] = '\0'; /* the stream at fault is named when there are two */
      if (copies == 2) snprintf(where, sizeof where, "IPC stream 2 at %sbyte %zu: ", decoded, each);
      const char *const two[3] = {where, where, where};
      snprintf(want, sizeof want,
               "the IPC stream ends at %sbyte %zu and 15 bytes follow that are not an Arrow IPC "
               "stream or file (they begin 73 6f 6d 65)",
               decoded, copies * each);
      expect_cut_error_with(" --allow-missing-eos", c < 0 ? path : coded, two, want);
    }
  }
  /* The marker, then a length no message has: a bad message, as before. */
  static const uint8_t bad[8] = {0xFF, 0xFF, 0xFF, 0xFF, 's', 'o', 'm', 'e'};
  write_without_marker_then("no_marker_bad.stream", 1, bad, 8, path, sizeof path, &each);
  snprintf(want, sizeof want,
           "message 3 at byte %zu: metadata length 1701670771 exceeds "
           "max_metadata_bytes",
           each);
  expect_cut_error_with(" --allow-missing-eos", path, none, want);
  /* An IPC file after it. */
  char file[4200];
  gold_path(file, sizeof file, "1.0.0-littleendian/generated_primitive.arrow_file");
  tu_bytes f = tu_read_bytes(file);
  write_without_marker_then("no_marker_file.stream", 1, f.data, f.size, path, sizeof path, &each);
  free(f.data);
  json_t *doc = load_gold_json("1.0.0-littleendian/generated_primitive.json.gz");
  int rows = (int)gold_rows(doc);
  json_decref(doc);
  expect_cat_lines(path, " --allow-missing-eos", 1 + 2 * rows, "a stream without marker, a file");
  if (write_encoded(path, XCHG_STREAM_ZSTD, "no_marker_file.zst", coded, sizeof coded))
    expect_cat_lines(coded, " --allow-missing-eos", 1 + 2 * rows,
                     "a stream without marker, a file, in zstd");
}

/* Without --allow-missing-eos, two streams without their markers fail at
 * the second one's schema message, and the error names the flag, for cat,
 * inspect and convert, plain and decoded from each codec, from a file and
 * through a pipe. */
static void check_missing_eos_second_schema(void) {
  char two[4200], path[4200], name[64], want[512];
  size_t each;
  write_without_marker("no_marker_two.stream", 2, two, sizeof two, &each);
  static const char *const plain[3] = {"", "", ""};
  static const char hint[] =
      "a second schema message (--allow-missing-eos reads a stream whose writer left the "
      "optional marker out)";
  snprintf(want, sizeof want, "message 3 at byte %zu: %s", each, hint);
  expect_cut_error(two, plain, want);
  snprintf(want, sizeof want, "message 3 at decoded byte %zu: %s", each, hint);
  for (size_t c = 0; c < sizeof wrapping / sizeof wrapping[0]; c++) {
    snprintf(name, sizeof name, "no_marker_two_hint.%s", xchg_stream_codec_name(wrapping[c]));
    if (write_encoded(two, wrapping[c], name, path, sizeof path))
      expect_cut_error(path, plain, want);
  }
}

/* Offsets that the IPC reader names in a codec's decoded bytes say so
 * ("at decoded byte N"), for cat, inspect and convert, from a file and
 * through a pipe; plain input's stay "at byte N". */
static void check_decoded_offsets(void) {
  static const char *const plain[3] = {"", "", ""};
  char text[4200], path[4200], cut[4200];
  tmp_path(text, sizeof text, "not_ipc.txt");
  static const char words[] = "hello, these bytes are not Arrow IPC\n";
  TU_CHECK(tu_write_file(text, words, sizeof words - 1) == 0, "cannot write %s", text);
  expect_cut_error(text, plain,
                   "not an Arrow IPC stream or file: no continuation marker or ARROW1 magic at "
                   "byte 0");
  if (write_encoded(text, XCHG_STREAM_ZSTD, "not_ipc.zst", path, sizeof path))
    expect_cut_error(path, plain,
                     "the input's zstd stream decodes to bytes that are not an Arrow IPC stream "
                     "or file: no continuation marker or ARROW1 magic at decoded byte 0");
  /* A stream without its marker: the hint is found in the decoded words. */
  char one[4200], want[512];
  size_t each;
  write_without_marker("no_marker_decoded.stream", 1, one, sizeof one, &each);
  cut_short_hint(want, sizeof want, "decoded byte", each);
  if (write_encoded(one, XCHG_STREAM_LZ4_JAVA, "no_marker_decoded.lz4-java", path, sizeof path))
    expect_cut_error(path, plain, want);
  cut_primitive(4000, "cut_decoded.arrows", cut, sizeof cut);
  for (size_t c = 0; c < sizeof wrapping / sizeof wrapping[0]; c++) {
    char name[64];
    snprintf(name, sizeof name, "cut_decoded.%s", xchg_stream_codec_name(wrapping[c]));
    if (write_encoded(cut, wrapping[c], name, path, sizeof path))
      expect_cut_error(path, plain,
                       "the stream is cut short: message 1 at decoded byte 1936: body: unexpected "
                       "end of data at decoded byte 3536: needed 7008 bytes, only 464 available "
                       "(6544 missing)");
  }
}

/* Comet blocks (codec NONE) whose IPC streams end without their marker
 * go through the shuffle reader (cat, convert) and block by block
 * (inspect): two blocks of gen shuffle's, each 8 bytes shorter. */
static void check_missing_eos_comet(void) {
  char whole[4200], path[4200];
  tmp_path(whole, sizeof whole, "marker_block.comet");
  tmp_path(path, sizeof path, "no_marker_blocks.comet");
  tu_cli_result r = run("gen shuffle '%s' --format comet --compression none --rows 64 -f", whole);
  TU_CHECK(r.exit_code == 0, "gen shuffle: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  tu_bytes b = tu_read_bytes(whole), two = {0};
  bool one_block = b.size > 28 && load_le(b.data, 8) + 8 == b.size;
  TU_CHECK(one_block, "%s: not one Comet block", whole);
  if (!one_block) {
    free(b.data);
    return;
  }
  uint8_t length[8];
  for (int k = 0; k < 8; k++) length[k] = (uint8_t)((b.size - 16) >> (8 * k));
  for (int copy = 0; copy < 2; copy++) {
    tu_bytes_append(&two, length, 8);
    tu_bytes_append(&two, b.data + 8, b.size - 16); /* all but the length and the marker */
  }
  TU_CHECK(tu_write_file(path, two.data, two.size) == 0, "cannot write %s", path);
  free(b.data);
  free(two.data);
  expect_cat_lines(path, " --allow-missing-eos", 1 + 128, "Comet blocks without markers");
  r = run("inspect --allow-missing-eos '%s'", path);
  TU_CHECK(r.exit_code == 0 && strstr(r.out, "blocks: 2 Comet blocks (none), 128 rows"),
           "inspect --allow-missing-eos of Comet blocks without markers: exit %d: %s%s",
           r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  r = run("cat '%s'", path);
  TU_CHECK(r.exit_code == 1 && strstr(r.err,
                                      "without the end-of-stream marker (or the block's "
                                      "length is shorter than its stream) "
                                      "(--allow-missing-eos reads a stream"),
           "cat of Comet blocks without markers: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  tu_testdata_path(gold, sizeof gold, "arrow-gold");
  if (mkdtemp(tmp) == NULL) {
    perror("test_cli_ux: mkdtemp");
    return 1;
  }
  static const tu_case cases[] = {
      {"columns", check_columns},
      {"codec_names", check_codec_names},
      {"concatenated", check_concatenated},
      {"concatenated_codec", check_concatenated_codec},
      {"column_bytes", check_column_bytes},
      {"inspect_text", check_inspect_text},
      {"odd_names", check_odd_names},
      {"position_names", check_position_names},
      {"inspect_json_messages", check_inspect_json_messages},
      {"flag_conflicts", check_flag_conflicts},
      {"option_forms", check_option_forms},
      {"help_command", check_help_command},
      {"bench_help", check_bench_help},
      {"noise", check_noise},
      {"speed_text", check_speed_text},
      {"time_parts", check_time_parts},
      {"progress", check_progress},
      {"empty_comet", check_empty_comet},
      {"rows_view", check_rows_view},
      {"cut_body", check_cut_body},
      {"cut_metadata", check_cut_metadata},
      {"missing_eos_hint", check_missing_eos_hint},
      {"missing_eos_read", check_missing_eos_read},
      {"missing_eos_comet", check_missing_eos_comet},
      {"missing_eos_codecs", check_missing_eos_codecs},
      {"missing_eos_tail", check_missing_eos_tail},
      {"missing_eos_second_schema", check_missing_eos_second_schema},
      {"decoded_offsets", check_decoded_offsets},
  };
  int rc = TU_MAIN(argc, argv, "cli_ux", cases);
  tu_run("rm -rf '%s'", tmp);
  return rc;
}
