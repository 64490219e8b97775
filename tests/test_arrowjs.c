/* tests/test_arrowjs.c — Arrow IPC files written by another implementation,
 * Apache Arrow JS (apache-arrow 21.2.0, tests/interop/arrowjs), whose file
 * writer puts the schema only in the footer: after the magic come the
 * dictionaries and record batches, with no schema message (issue 12).
 *
 *  1. write.mjs writes each case (several types with nulls, a dictionary,
 *     lists and structs over several batches, one batch, no batch, one empty
 *     batch, a batch between two empty ones whose buffers, offsets included,
 *     apache-arrow leaves out, an empty batch whose dictionary-encoded
 *     column has no dictionary batch) as an IPC file, as an IPC stream and as
 *     Arrow's integration JSON (RecordBatchJSONWriter), all three by
 *     apache-arrow;
 *  2. xchg reads each file seekable (mmap, read(2), memory) and in order (a
 *     callback source that cannot seek, the same inside an LZ4 frame), and
 *     its batches must equal the JSON (strict comparison,
 *     tests/support/arrow_json.c) and its own reading of the stream, batch
 *     by batch (array_equal); random access by read_batch too, messages
 *     numbered from 0, and a few values checked here directly; `xchg cat -`
 *     of the file through a pipe and from a redirected standard input
 *     prints what `xchg cat` of the stream does;
 *  3. read in order, such a file is held whole in memory: one byte over
 *     max_batch_bytes is an XCHG_ELIMIT error naming the cap;
 *     the file followed by the stream is read, both, from a file on disk,
 *     from a redirected standard input and through a pipe, by cat, convert
 *     and inspect alike; read in order by the library, or after another
 *     stream through a pipe, it is an error (the file is held whole to be
 *     read, and what follows it with it);
 *  4. `xchg bench decode` of each stream with rows succeeds, the empty
 *     batch (its offsets left out) held against the floors too; of one
 *     without a row it says there is nothing to time, exit 1;
 *  5. the reverse: `xchg convert` writes each JS file again in the file
 *     format, and apache-arrow reads it and finds the same table.
 *
 * Node and the npm package are required: without them the test FAILS,
 * saying to run scripts/setup.sh. */
#define _GNU_SOURCE /* memmem */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/array_equal.h"
#include "support/arrow_json.h"
#include "support/encoded.h"
#include "support/interop.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

#define MSG_SIZE 4096
#define MAX_BATCHES 16
#define CASES 7

static char dir[] = "/tmp/xchg-arrowjs-XXXXXX";

/* A case as write.mjs printed it. */
typedef struct js_case {
  char name[64];
  long long rows, batches;
  int has_json;
} js_case;

/* Everything one reading gave. */
typedef struct reading {
  xchg_ipc_format format;
  int64_t num_batches;
  struct ArrowSchema schema;
  struct ArrowArray batches[MAX_BATCHES];
  int64_t n;
} reading;

static void reading_free(reading *g) {
  if (g->schema.release) g->schema.release(&g->schema);
  for (int64_t i = 0; i < g->n; i++)
    if (g->batches[i].release) g->batches[i].release(&g->batches[i]);
  g->n = 0;
}

/* Reads every batch of src (taken over); 0, or -1 with msg. */
static int read_all(xchg_source *src, const xchg_ipc_read_options *opts, reading *g, char *msg) {
  memset(g, 0, sizeof *g);
  if (!src) return tu_errorf(msg, MSG_SIZE, "no source");
  xchg_ipc_reader *r;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open(src, opts, &r, &err);
  if (st != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "open: %s: %s", xchg_status_name(st), err.message);
  g->format = xchg_ipc_reader_format(r);
  g->num_batches = xchg_ipc_reader_num_batches(r);
  st = xchg_ipc_reader_schema(r, &g->schema, &err);
  while (st == XCHG_OK) {
    struct ArrowArray batch;
    st = xchg_ipc_reader_next(r, &batch, &err);
    if (st != XCHG_OK || !batch.release) break;
    if (g->n == MAX_BATCHES) {
      batch.release(&batch);
      xchg_ipc_reader_free(r);
      return tu_errorf(msg, MSG_SIZE, "more than %d batches", MAX_BATCHES);
    }
    g->batches[g->n++] = batch;
  }
  xchg_ipc_reader_free(r);
  return st == XCHG_OK ? 0
                       : tu_errorf(msg, MSG_SIZE, "batch %lld: %s: %s", (long long)g->n,
                                   xchg_status_name(st), err.message);
}

/* The batches, against the stream's, the JSON's and the case's counts. */
static int check_reading(const js_case *c, const reading *g, const reading *stream,
                         const arrow_json *doc, char *msg) {
  if (g->format != XCHG_IPC_FILE) return tu_errorf(msg, MSG_SIZE, "read as a stream, not a file");
  if (g->n != c->batches || g->n != stream->n)
    return tu_errorf(msg, MSG_SIZE, "%lld batches, the stream has %lld, write.mjs wrote %lld",
                     (long long)g->n, (long long)stream->n, c->batches);
  long long rows = 0;
  for (int64_t i = 0; i < g->n; i++) {
    rows += g->batches[i].length;
    char why[MSG_SIZE];
    if (array_equal(&stream->schema, &stream->batches[i], &g->batches[i], why, sizeof why) != 0)
      return tu_errorf(msg, MSG_SIZE, "batch %lld differs from the stream's: %s", (long long)i,
                       why);
  }
  if (rows != c->rows)
    return tu_errorf(msg, MSG_SIZE, "%lld rows, write.mjs wrote %lld", rows, c->rows);
  if (!doc) return 0;
  if (arrow_json_compare_schema(doc, &g->schema, msg, MSG_SIZE) != 0) return -1;
  if (arrow_json_num_batches(doc) != g->n)
    return tu_errorf(msg, MSG_SIZE, "%lld batches, the JSON has %lld", (long long)g->n,
                     (long long)arrow_json_num_batches(doc));
  for (int64_t i = 0; i < g->n; i++)
    if (arrow_json_compare_batch(doc, i, &g->schema, &g->batches[i], msg, MSG_SIZE) != 0) return -1;
  return 0;
}

/* A few values of the primitives case, as write.mjs makes them: row i of
 * i32 is i * 37 - 1000, null when i % 7 == 3; row i of i64 is i *
 * 1234567890123 - 2^62, null when i % 11 == 5. */
static int check_primitive_values(const reading *g, char *msg) {
  const struct ArrowArray *i32 = g->batches[0].children[0], *i64 = g->batches[0].children[1];
  const uint8_t *valid = i32->buffers[0];
  const int32_t *ints = i32->buffers[1];
  const int64_t *longs = i64->buffers[1];
  int64_t o = i32->offset, p = i64->offset;
  if (ints[o + 4] != 4 * 37 - 1000 || ints[o + 299] != 299 * 37 - 1000 || !valid ||
      (valid[(o + 3) / 8] >> ((o + 3) % 8)) & 1)
    return tu_errorf(msg, MSG_SIZE, "i32: rows 4 and 299 are %d and %d, row 3 is %s", ints[o + 4],
                     ints[o + 299],
                     valid && !((valid[(o + 3) / 8] >> ((o + 3) % 8)) & 1) ? "null" : "not null");
  if (longs[p] != -((int64_t)1 << 62) ||
      longs[p + 7] != 7 * INT64_C(1234567890123) - ((int64_t)1 << 62))
    return tu_errorf(msg, MSG_SIZE, "i64: rows 0 and 7 are %" PRId64 " and %" PRId64, longs[p],
                     longs[p + 7]);
  return 0;
}

/* Random access: batch i by read_batch equals the stream's batch i. */
static int check_random_access(const char *path, const reading *stream, char *msg) {
  xchg_ipc_reader *r;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open_file(path, NULL, &r, &err);
  if (st != XCHG_OK) return tu_errorf(msg, MSG_SIZE, "open: %s", err.message);
  int rc = 0;
  for (int64_t i = stream->n - 1; i >= 0 && rc == 0; i--) {
    struct ArrowArray batch;
    char why[MSG_SIZE];
    if ((st = xchg_ipc_reader_read_batch(r, i, &batch, &err)) != XCHG_OK)
      rc = tu_errorf(msg, MSG_SIZE, "read_batch %lld: %s", (long long)i, err.message);
    else if (array_equal(&stream->schema, &stream->batches[i], &batch, why, sizeof why) != 0)
      rc = tu_errorf(msg, MSG_SIZE, "read_batch %lld: %s", (long long)i, why);
    if (st == XCHG_OK) batch.release(&batch);
  }
  xchg_ipc_reader_free(r);
  return rc;
}

/* The messages the reader reports, in order. */
typedef struct message_log {
  int64_t n, first_offset, wrong_index;
} message_log;

static void log_message(void *ctx, const xchg_message_info *info) {
  message_log *log = ctx;
  if (log->n == 0) log->first_offset = info->offset;
  if (info->index != log->n && log->wrong_index < 0) log->wrong_index = log->n;
  log->n++;
}

/* With no schema message, the messages are numbered from the first one
 * after the magic, which is message 0 at byte 8. */
static int check_message_indices(const char *path, const js_case *c, char *msg) {
  message_log log = {0, -1, -1};
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.on_message = log_message;
  opts.on_message_ctx = &log;
  xchg_source *src = NULL;
  xchg_error err;
  if (xchg_source_open_file(path, XCHG_FILE_MMAP, &src, &err) != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "open: %s", err.message);
  reading g;
  int rc = read_all(src, &opts, &g, msg);
  reading_free(&g);
  if (rc != 0) return rc;
  if (log.wrong_index >= 0)
    return tu_errorf(msg, MSG_SIZE, "message %lld is not reported as index %lld",
                     (long long)log.wrong_index, (long long)log.wrong_index);
  if (log.n < c->batches || (c->batches > 0 && log.first_offset != 8))
    return tu_errorf(msg, MSG_SIZE, "%lld messages reported, the first at byte %lld",
                     (long long)log.n, (long long)log.first_offset);
  return 0;
}

/* Each way of reading the file; *what names the one that failed. */
static int check_file(const js_case *c, const char *path, const reading *stream,
                      const arrow_json *doc, const char **what, char *msg) {
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  xchg_buf *lz4 = NULL;
  xchg_error err;
  if (!data || xchg_stream_encode(XCHG_STREAM_LZ4_FRAME, NULL, data, size, &lz4, &err) != XCHG_OK) {
    free(data);
    *what = "reading it";
    return tu_errorf(msg, MSG_SIZE, "cannot read or encode %s", path);
  }
  int rc = 0;
  for (int way = 0; way < 5 && rc == 0; way++) {
    static const char *ways[] = {"mmap", "read(2)", "memory", "in order", "in order, LZ4 frame"};
    xchg_source *src = NULL;
    if (way < 2 && xchg_source_open_file(path, way == 0 ? XCHG_FILE_MMAP : XCHG_FILE_READ, &src,
                                         &err) != XCHG_OK)
      rc = tu_errorf(msg, MSG_SIZE, "open %s: %s", path, err.message);
    if (way == 2) src = tu_memory_source(data, size);
    if (way == 3) src = tu_unseekable_source(data, size, size);
    if (way == 4)
      src = tu_codec_source(xchg_buf_data(lz4), xchg_buf_size(lz4), XCHG_STREAM_LZ4_FRAME);
    if (rc != 0) break;
    reading g;
    *what = ways[way];
    rc = read_all(src, NULL, &g, msg);
    if (rc == 0) rc = check_reading(c, &g, stream, doc, msg);
    if (rc == 0 && way < 3 && g.num_batches != c->batches)
      rc = tu_errorf(msg, MSG_SIZE, "num_batches %lld, expected %lld", (long long)g.num_batches,
                     c->batches);
    if (rc == 0 && strcmp(c->name, "primitives") == 0) rc = check_primitive_values(&g, msg);
    reading_free(&g);
  }
  if (rc == 0) {
    *what = "read_batch";
    rc = check_random_access(path, stream, msg);
  }
  if (rc == 0) {
    *what = "on_message";
    rc = check_message_indices(path, c, msg);
  }
  xchg_buf_unref(lz4);
  free(data);
  return rc;
}

/* Read in order, the file is held whole: a cap of its size passes, one
 * byte less is XCHG_ELIMIT naming max_batch_bytes. */
static void check_whole_file_cap(const char *path) {
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  TU_CHECK(data != NULL, "cannot read %s", path);
  if (!data) return;
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.max_batch_bytes = (int64_t)size;
  reading g;
  char msg[MSG_SIZE];
  TU_CHECK(read_all(tu_unseekable_source(data, size, 3), &opts, &g, msg) == 0,
           "%s in order, max_batch_bytes = its size: %s", path, msg);
  reading_free(&g);
  opts.max_batch_bytes = (int64_t)size - 1;
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open(tu_unseekable_source(data, size, 3), &opts, &r, &err);
  TU_CHECK(st == XCHG_ELIMIT && strstr(err.message, "max_batch_bytes") &&
               strstr(err.message, "no schema message") &&
               strstr(err.message, "read it from a seekable input"),
           "%s in order, max_batch_bytes one byte short: %s: %s", path, xchg_status_name(st),
           st == XCHG_OK ? "opened" : err.message);
  xchg_ipc_reader_free(r);
  free(data);
}

/* `xchg cat -` of the file through a pipe and from a redirected (seekable)
 * standard input prints what `xchg cat` of the stream does. */
static void check_cli_pipe(const char *cli, const char *name) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s' cat %s.stream > %s.cat_stream && test -s %s.cat_stream && "
           "cat %s.arrow | '%s' cat - > %s.cat_pipe && cmp %s.cat_pipe %s.cat_stream && "
           "'%s' cat - < %s.arrow > %s.cat_stdin && cmp %s.cat_stdin %s.cat_stream",
           dir, cli, name, name, name, name, cli, name, name, name, cli, name, name, name, name);
  TU_CHECK(tu_run("%s", cmd) == 0,
           "%s: xchg cat - of the file differs from xchg cat of the stream: %s", name, cmd);
}

/* The file followed by the stream: `xchg cat` prints what it prints for
 * the stream twice, and so do `xchg cat -` from a redirected standard input
 * (a file: read as one) and through a pipe (copied to a file first, as
 * inspect copies it, since read in order the file is held whole with what
 * follows it); `xchg convert` writes the same and `xchg inspect` says the
 * same, every way.  The stream before the file, through a pipe: the file,
 * not the first IPC stream, is read by the reader in order and what follows
 * it would be lost: an error saying so (as the library's, below). */
static void check_cli_concatenated(const char *cli, const char *name) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cat %s.arrow %s.stream > %s.fs && cat %s.stream %s.stream > %s.ss && "
           "'%s' cat %s.fs > %s.cat_fs && '%s' cat %s.ss > %s.cat_ss && cmp %s.cat_fs %s.cat_ss",
           dir, name, name, name, name, name, name, cli, name, name, cli, name, name, name, name);
  TU_CHECK(tu_run("%s", cmd) == 0, "%s: the file and the stream concatenated: %s", name, cmd);
  static const char *const ways[][2] = {{"", "< %s.fs"}, {"cat %s.fs | ", ""}};
  for (int w = 0; w < 2; w++) {
    char before[256], after[256];
    snprintf(before, sizeof before, ways[w][0], name);
    snprintf(after, sizeof after, ways[w][1], name);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s'%s' cat - %s > %s.cat_fs_%d && cmp %s.cat_fs_%d %s.cat_ss && "
             "'%s' convert %s.fs %s.conv_fs -f && %s'%s' convert - %s.conv_fs_%d -f %s && "
             "cmp %s.conv_fs %s.conv_fs_%d && '%s' inspect --json %s.fs > %s.insp_fs && "
             "%s'%s' inspect --json - %s > %s.insp_fs_%d && "
             "grep -v '\"file\": ' %s.insp_fs > %s.insp_fs.x && "
             "grep -v '\"file\": ' %s.insp_fs_%d > %s.insp_fs_%d.x && "
             "cmp %s.insp_fs.x %s.insp_fs_%d.x",
             dir, before, cli, after, name, w, name, w, name, cli, name, name, before, cli, name, w,
             after, name, name, w, cli, name, name, before, cli, after, name, w, name, name, name,
             w, name, w, name, name, w);
    TU_CHECK(tu_run("%s", cmd) == 0, "%s: the file and the stream, %s: %s", name,
             w ? "piped" : "standard input redirected", cmd);
  }
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cat %s.stream %s.fs | '%s' cat - > /dev/null 2> %s.err_sfs; test $? = 1 && "
           "grep -q 'can be read only from a seekable input' %s.err_sfs",
           dir, name, name, cli, name, name);
  TU_CHECK(tu_run("%s", cmd) == 0, "%s: the stream, the file and the stream, piped: %s", name, cmd);
}

/* Read in order by the library, the file followed by more bytes is held
 * whole with them, which would be lost: XCHG_EFORMAT saying where the file
 * ends and how many bytes follow. */
static void check_file_then_more(const char *name) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s.fs", dir, name);
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  if (!TU_CHECK(data != NULL, "cannot read %s", path)) return;
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open(tu_unseekable_source(data, size, 3), NULL, &r, &err);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, "bytes follow its end at byte") &&
               strstr(err.message, "can be read only from a seekable input"),
           "%s in order: %s: %s", path, xchg_status_name(st),
           st == XCHG_OK ? "opened" : err.message);
  xchg_ipc_reader_free(r);
  free(data);
}

/* `xchg bench decode` of the stream: every case with rows is read, timed
 * and held against its floors, the empty batch between two others (whose
 * offsets apache-arrow leaves out) too; a case of no row at all has
 * nothing to time, which it says, exit 1, rather than print figures of
 * nothing. */
static void check_cli_bench(const char *cli, const char *name) {
  static const char *const no_rows[] = {"zero_batches", "empty_batch", "empty_dictionary"};
  bool rowless = false;
  for (size_t i = 0; i < sizeof no_rows / sizeof no_rows[0]; i++)
    rowless |= strcmp(name, no_rows[i]) == 0;
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s' bench decode %s.stream --runs 1 --threads 1 > %s.bench 2> %s.err%s",
           dir, cli, name, name, name,
           rowless ? " ; test $? -eq 1 && grep -q 'holds no rows: nothing to time' " : "");
  if (rowless) snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%s.err", name);
  TU_CHECK(tu_run("%s", cmd) == 0, "%s: %s", name, cmd);
}

/* xchg writes the JS file again; apache-arrow finds the same table in it. */
static void check_reverse(const char *cli, const char *js, const char *name) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "'%s' convert '%s/%s.arrow' '%s/%s.xchg.arrow' --file && cd '%s' && "
           "node write.mjs --check '%s' '%s/%s.xchg.arrow'",
           cli, dir, name, dir, name, js, name, dir, name);
  TU_CHECK(tu_run("%s", cmd) == 0, "%s: apache-arrow does not read xchg's file back: %s", name,
           cmd);
}

static void check_case(const char *cli, const char *js, const js_case *c) {
  char path[4400], msg[MSG_SIZE];
  const char *what = "the stream";
  reading stream;
  arrow_json *doc = NULL;
  snprintf(path, sizeof path, "%s/%s.stream", dir, c->name);
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  int rc = read_all(data ? tu_memory_source(data, size) : NULL, NULL, &stream, msg);
  if (rc == 0 && c->has_json) {
    snprintf(path, sizeof path, "%s/%s.json", dir, c->name);
    what = "the JSON";
    rc = arrow_json_load(path, &doc, msg, MSG_SIZE);
  }
  snprintf(path, sizeof path, "%s/%s.arrow", dir, c->name);
  if (rc == 0) rc = check_file(c, path, &stream, doc, &what, msg);
  if (rc != 0) {
    TU_CHECK(0, "%s (%s): %s", c->name, what, msg);
  } else {
    printf("%s: %lld rows in %lld batches, equal to %s, every way\n", c->name, c->rows, c->batches,
           c->has_json ? "the JSON and the stream" : "the stream (no JSON: see write.mjs)");
  }
  arrow_json_free(doc);
  reading_free(&stream);
  free(data);
  check_cli_pipe(cli, c->name);
  check_cli_concatenated(cli, c->name);
  check_file_then_more(c->name);
  check_cli_bench(cli, c->name);
  check_reverse(cli, js, c->name);
}

static int read_cases(js_case *cases) {
  char path[4400];
  snprintf(path, sizeof path, "%s/cases.txt", dir);
  FILE *f = fopen(path, "r");
  int n = 0;
  char json[16];
  while (f && n < CASES + 1 &&
         fscanf(f, "%63s %lld %lld %15s", cases[n].name, &cases[n].rows, &cases[n].batches, json) ==
             4) {
    cases[n].has_json = strcmp(json, "json") == 0;
    n++;
  }
  if (f) fclose(f);
  return n;
}

/* One flow: write.mjs writes every case at once, then each is read. */
static void apache_arrow_files(void) {
  const char *cli = tu_cli_path();
  char cmd[16384], msg[MSG_SIZE];
  if (!TU_CHECK(tu_interop_ready("arrowjs", "apache-arrow", msg, sizeof msg) == 0,
                "apache-arrow interop: %s", msg))
    return;
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", dir)) return;
  const char *js = tu_interop_dir("arrowjs");
  snprintf(cmd, sizeof cmd, "cd '%s' && node write.mjs '%s' > '%s/cases.txt'", js, dir, dir);
  js_case cases[CASES + 1];
  int n = tu_run("%s", cmd) == 0 ? read_cases(cases) : -1;
  TU_CHECK(n == CASES, "node write.mjs gave %d cases, expected %d: %s", n, CASES, cmd);
  for (int i = 0; i < n; i++) check_case(cli, js, &cases[i]);
  for (int i = 0; i < n; i++)
    if (strcmp(cases[i].name, "dictionaries") == 0) {
      char path[4400];
      snprintf(path, sizeof path, "%s/%s.arrow", dir, cases[i].name);
      check_whole_file_cap(path);
    }
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  tu_run("%s", cmd);
}

/* ---- dictionary ids kept by convert ---------------------------------------- */

/* What dict_ids.mjs prints of path into out (size bytes); 0, or -1 when
 * node failed. */
static char ids_dir[] = "/tmp/xchg-arrowjs-ids-XXXXXX";

static int js_dictionary_ids(const char *js, const char *path, char *out, size_t size) {
  char cmd[8800];
  snprintf(cmd, sizeof cmd, "cd '%s' && node dict_ids.mjs '%s'", js, path);
  FILE *p = popen(cmd, "r");
  out[0] = '\0';
  if (p == NULL) return -1;
  size_t n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  return pclose(p) == 0 ? 0 : -1;
}

/* The gold stream in, as two Comet blocks (codec NONE) of field count
 * fields (0: read block by block), into path. */
static void write_comet_blocks(const char *in, int64_t fields, const char *path) {
  tu_bytes ipc = tu_read_bytes(in), blocks = {0};
  TU_CHECK(ipc.data != NULL, "cannot read %s", in);
  for (int k = 0; k < 2 && ipc.data != NULL; k++)
    tu_append_comet_block(&blocks, ipc.data, ipc.size, XCHG_STREAM_NONE, fields);
  TU_CHECK(tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
  free(blocks.data);
  free(ipc.data);
}

/* `xchg convert` of Arrow's gold files with dictionaries, as a stream and
 * as a file, and of Comet blocks that hold them (through the shuffle
 * reader, from a file and a pipe, and block by block): apache-arrow finds
 * every dictionary-encoded field with the id the input gave it, so fields
 * that share a dictionary (generated_shared_dict) still share one, written
 * once, and nested dictionaries keep theirs (the reader lists a field's id
 * before those inside it, the writer takes them after).  An input whose
 * later IPC stream gives such fields different dictionaries is an error
 * naming them, and leaves no OUT. */
static void gold_dictionary_ids(void) {
  const char *cli = tu_cli_path();
  char msg[MSG_SIZE], in[4096], out[4400], want[4096], got[4096], blocks[4400];
  if (!TU_CHECK(tu_interop_ready("arrowjs", "apache-arrow", msg, sizeof msg) == 0,
                "apache-arrow interop: %s", msg))
    return;
  if (!TU_CHECK(mkdtemp(ids_dir) != NULL, "mkdtemp: %s", ids_dir)) return;
  const char *js = tu_interop_dir("arrowjs");
  static const struct {
    const char *name;
    int64_t fields;
  } gold[] = {{"1.0.0-littleendian/generated_dictionary", 3},
              {"1.0.0-littleendian/generated_nested_dictionary", 2},
              {"1.0.0-littleendian/generated_dictionary_unsigned", 3},
              {"4.0.0-shareddict/generated_shared_dict", 2}};
  /* convert's input: the stream, or Comet blocks given by name or piped */
  static const char *const inputs[] = {"'%s'", "'%s.comet'", "- < '%s.comet'", "'%s.comet0'"};
  static const char *const formats[] = {"--stream", "--file"};
  for (size_t g = 0; g < sizeof gold / sizeof gold[0]; g++) {
    tu_testdata_path(in, sizeof in, "arrow-gold/%s.stream", gold[g].name);
    snprintf(blocks, sizeof blocks, "%s/%zu", ids_dir, g);
    char comet[4500];
    snprintf(comet, sizeof comet, "%s.comet", blocks);
    write_comet_blocks(in, gold[g].fields, comet);
    strcat(comet, "0");
    write_comet_blocks(in, 0, comet);
    TU_CHECK(js_dictionary_ids(js, in, want, sizeof want) == 0 && want[0] != '\n',
             "%s: apache-arrow found no dictionary ids", gold[g].name);
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
      for (size_t f = 0; f < 2; f++) {
        char input[4600];
        snprintf(input, sizeof input, inputs[i], i == 0 ? in : blocks);
        snprintf(out, sizeof out, "%s/%zu_%zu_%zu.arrow", ids_dir, g, i, f);
        int rc = tu_run("'%s' convert %s '%s' %s", cli, input, out, formats[f]);
        TU_CHECK(rc == 0, "convert %s %s: exit status %d", input, formats[f], rc);
        TU_CHECK(js_dictionary_ids(js, out, got, sizeof got) == 0 && strcmp(want, got) == 0,
                 "convert %s %s: dictionary ids %s, the input's %s", input, formats[f], got, want);
      }
  }
  /* The shared dictionary, then a stream of the same schema whose two
   * fields have dictionaries of their own. */
  char mixed[4400], err[4400];
  snprintf(mixed, sizeof mixed, "%s/mixed.stream", ids_dir);
  snprintf(out, sizeof out, "%s/mixed.arrow", ids_dir);
  snprintf(err, sizeof err, "%s/mixed.err", ids_dir);
  tu_testdata_path(in, sizeof in, "arrow-gold/4.0.0-shareddict/generated_shared_dict.stream");
  int made = tu_run("cd '%s' && node dict_ids.mjs --unshared > '%s.2' && cat '%s' '%s.2' > '%s'",
                    js, mixed, in, mixed, mixed);
  if (TU_CHECK(made == 0, "cannot make %s", mixed)) {
    int rc = tu_run("'%s' convert '%s' '%s' 2>'%s'", cli, mixed, out, err);
    size_t n = 0;
    uint8_t *e = tu_read_file(err, &n);
    const char *words = "field 'col2' shares dictionary id 0 with field 'col1'";
    TU_CHECK(rc == 1 && e && memmem(e, n, words, strlen(words)) != NULL,
             "convert of a stream sharing a dictionary, then one not: exit status %d, %.*s", rc,
             (int)n, e ? (const char *)e : "");
    TU_CHECK(tu_run("test -e '%s'", out) != 0, "a failed convert left %s", out);
    free(e);
  }
  tu_run("rm -rf '%s'", ids_dir);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"apache_arrow_files", apache_arrow_files},
                                  {"gold_dictionary_ids", gold_dictionary_ids}};
  return TU_MAIN(argc, argv, "arrowjs", cases);
}
