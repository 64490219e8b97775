/* tests/test_writer_cli.c — `xchg convert` and `xchg gen`, run as a user would
 * ($XCHG_CLI), their output read back with the library.
 *
 *  - convert: a gold file re-encoded with each codec, both formats and
 *    --batch-rows, equals its .json.gz; bad arguments exit 2, a missing
 *    input exits 1 and leaves no output behind;
 *  - gen: each shape decodes (broadcast through its lz4-java wrapper, rows
 *    through its LZ4 / zstd frames) to exactly the sums `--sums` reports,
 *    computed here with the test's own code; broadcast's k is a permutation;
 *    the same seed gives the same bytes and another seed other bytes. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/array_equal.h"
#include "support/arrow_json.h"
#include "support/column_sums.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/stream.h"

#define MSG 2048

static char dir[] = "/tmp/xchg-cli-XXXXXX";
static const char *cli;

/* Batch b of src equals its rows in the one batch of merged, from row. */
static int array_range_equal_guard(const rt_data *src, int64_t b, const rt_data *merged,
                                   int64_t row, char *msg) {
  return array_range_equal(&src->schema, &src->batches[b], 0, &merged->batches[0], row,
                           src->batches[b].length, msg, MSG);
}

/* ---- convert -------------------------------------------------------------------- */

static void check_convert(void) {
  char json[4096], in[4096], out[4200], msg[MSG], what[256];
  tu_testdata_path(json, sizeof json, "arrow-gold/1.0.0-littleendian/generated_dictionary.json.gz");
  tu_testdata_path(in, sizeof in, "arrow-gold/1.0.0-littleendian/generated_dictionary.arrow_file");
  arrow_json *doc;
  if (arrow_json_load(json, &doc, msg, MSG) != 0) {
    TU_CHECK(0, "convert: %s", msg);
    return;
  }
  static const char *opts[] = {"--compression none", "--compression lz4 --file",
                               "--compression zstd --level 5",
                               "--compression zstd --file --align 64"};
  for (int i = 0; i < 4; i++) {
    snprintf(out, sizeof out, "%s/converted_%d", dir, i);
    snprintf(what, sizeof what, "xchg convert %s", opts[i]);
    if (tu_run("'%s' convert '%s' '%s' %s", cli, in, out, opts[i]) != 0) {
      TU_CHECK(0, "%s: exit status", what);
      continue;
    }
    rt_data back = {0};
    if (rt_read_file(out, &back, msg, MSG) != 0 ||
        arrow_json_compare_schema(doc, &back.schema, msg, MSG) != 0) {
      TU_CHECK(0, "%s: %s", what, msg);
    } else if (back.n != arrow_json_num_batches(doc)) {
      TU_CHECK(0, "%s: batch count", what);
    } else {
      for (int64_t b = 0; b < back.n; b++)
        TU_CHECK(arrow_json_compare_batch(doc, b, &back.schema, &back.batches[b], msg, MSG) == 0,
                 "%s: %s", what, msg);
    }
    TU_CHECK((back.format == XCHG_IPC_FILE) == (strstr(opts[i], "--file") != NULL),
             "%s: wrong format", what);
    rt_data_free(&back);
  }
  arrow_json_free(doc);
  /* --batch-rows merges the two batches of a gold file into one */
  tu_testdata_path(in, sizeof in, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  snprintf(out, sizeof out, "%s/merged", dir);
  rt_data src = {0}, back = {0};
  if (tu_run("'%s' convert '%s' '%s' --batch-rows 1000000", cli, in, out) != 0)
    TU_CHECK(0, "convert --batch-rows: exit status");
  else if (rt_read_file(in, &src, msg, MSG) != 0 || rt_read_file(out, &back, msg, MSG) != 0)
    TU_CHECK(0, "convert --batch-rows: %s", msg);
  else if (back.n != 1 || src.n < 2)
    TU_CHECK(0, "convert --batch-rows: not one batch");
  else {
    int64_t row = 0;
    for (int64_t b = 0; b < src.n; b++) {
      TU_CHECK(array_range_equal_guard(&src, b, &back, row, msg) == 0, "convert --batch-rows: %s",
               msg);
      row += src.batches[b].length;
    }
  }
  rt_data_free(&src);
  rt_data_free(&back);
  /* errors */
  TU_CHECK(tu_run("'%s' convert '%s' '%s/x' --compression snappy 2>/dev/null", cli, in, dir) == 2,
           "convert --compression snappy: exit status not 2");
  snprintf(out, sizeof out, "%s/never", dir);
  struct stat st;
  if (tu_run("'%s' convert '%s/missing' '%s' 2>/dev/null", cli, dir, out) != 1)
    TU_CHECK(0, "convert of a missing file: exit status not 1");
  else
    TU_CHECK(stat(out, &st) != 0, "convert of a missing file: left an output file");
}

/* ---- gen ------------------------------------------------------------------------ */

/* Broadcast's k must be a permutation of 0..n-1: seen[v] counts each v. */
typedef struct permutation {
  uint8_t *seen;
  int64_t n;
} permutation;

static int check_k(void *ctx, const struct ArrowArray *b, char *msg, size_t msgsz) {
  permutation *p = ctx;
  const int64_t *k = b->children[0]->buffers[1];
  for (int64_t i = 0; i < b->length; i++) {
    int64_t v = k[b->children[0]->offset + i];
    if (v < 0 || v >= p->n || p->seen[v]++)
      return tu_errorf(msg, msgsz, "k = %lld is repeated or out of range", (long long)v);
  }
  return 0;
}

/* Sums of every column of an IPC input read from src (taken over); k
 * checked as a permutation when k is not NULL. */
static int ipc_sums(xchg_source *src, tu_sums *got, permutation *k, char *msg) {
  xchg_ipc_reader *r;
  xchg_error err;
  memset(got, 0, sizeof *got);
  if (xchg_ipc_reader_open(src, NULL, &r, &err) != XCHG_OK)
    return tu_errorf(msg, MSG, "%s", err.message);
  int rc = tu_sums_of_reader(r, got, k ? check_k : NULL, k, msg, MSG);
  xchg_ipc_reader_free(r);
  return rc;
}

static void compare(const char *what, const tu_sums *want, const tu_sums *got) {
  char msg[MSG];
  TU_CHECK(tu_sums_compare(want, got, msg, sizeof msg) == 0, "%s: %s", what, msg);
}

static void check_gen(void) {
  char path[4200], msg[MSG];
  tu_sums want, got;
  /* cache, zstd body */
  snprintf(path, sizeof path, "%s/cache.ipc", dir);
  if (tu_run("'%s' gen cache '%s' --rows 25000 --compression zstd --seed 3 --sums > '%s.sums'", cli,
             path, path) != 0 ||
      tu_run("'%s' gen cache '%s.again' --rows 25000 --compression zstd --seed 3", cli, path) !=
          0 ||
      tu_run("'%s' gen cache '%s.other' --rows 25000 --compression zstd --seed 4", cli, path) !=
          0) {
    TU_CHECK(0, "gen cache: exit status");
  } else {
    char sums[4300];
    snprintf(sums, sizeof sums, "%s.sums", path);
    xchg_source *src = NULL;
    xchg_error err;
    if (tu_sums_load(sums, &want) != 0)
      TU_CHECK(0, "gen cache: no sums");
    else if (xchg_source_open_file(path, XCHG_FILE_MMAP, &src, &err) != XCHG_OK)
      TU_CHECK(0, "gen cache: %s", err.message);
    else if (ipc_sums(src, &got, NULL, msg) != 0)
      TU_CHECK(0, "gen cache: %s", msg);
    else if (got.rows != 25000)
      TU_CHECK(0, "gen cache: row count");
    else
      compare("gen cache", &want, &got);
    TU_CHECK(tu_run("cmp -s '%s' '%s.again'", path, path) == 0,
             "gen cache: the same seed gave other bytes");
    TU_CHECK(tu_run("cmp -s '%s' '%s.other'", path, path) != 0,
             "gen cache: another seed gave the same bytes");
  }
  /* broadcast, wrapped in lz4-java */
  snprintf(path, sizeof path, "%s/broadcast.bin", dir);
  if (tu_run("'%s' gen broadcast '%s' --rows 20000 --sums > '%s.sums'", cli, path, path) != 0) {
    TU_CHECK(0, "gen broadcast: exit status");
  } else {
    char sums[4300];
    snprintf(sums, sizeof sums, "%s.sums", path);
    xchg_source *src = NULL;
    xchg_istream *s = NULL;
    xchg_error err;
    uint8_t *seen = calloc(20000, 1);
    if (tu_sums_load(sums, &want) != 0 || !seen)
      TU_CHECK(0, "gen broadcast: no sums");
    else if (xchg_source_open_file(path, XCHG_FILE_MMAP, &src, &err) != XCHG_OK ||
             xchg_istream_open(src, XCHG_STREAM_AUTO, NULL, &s, &err) != XCHG_OK)
      TU_CHECK(0, "gen broadcast: %s", err.message);
    else if (xchg_istream_codec(s) != XCHG_STREAM_LZ4_JAVA)
      TU_CHECK(0, "gen broadcast: not wrapped in lz4-java");
    else if (xchg_source_from_istream(s, &src, &err) != XCHG_OK)
      TU_CHECK(0, "gen broadcast: %s", err.message);
    else if (ipc_sums(src, &got, &(permutation){seen, 20000}, msg) != 0)
      TU_CHECK(0, "gen broadcast: %s", msg);
    else if (got.rows != 20000)
      TU_CHECK(0, "gen broadcast: row count");
    else
      compare("gen broadcast", &want, &got);
    free(seen);
  }
  /* rows, as LZ4 frames and zstd frames */
  for (int z = 0; z < 2; z++) {
    snprintf(path, sizeof path, "%s/rows.%s", dir, z ? "zst" : "lz4");
    if (tu_run("'%s' gen rows '%s' --rows 3000 --compression %s --sums > '%s.sums'", cli, path,
               z ? "zstd" : "lz4", path) != 0) {
      TU_CHECK(0, "gen rows: exit status");
      continue;
    }
    char sums[4300];
    snprintf(sums, sizeof sums, "%s.sums", path);
    xchg_source *src = NULL;
    xchg_istream *s = NULL;
    xchg_error err;
    if (tu_sums_load(sums, &want) != 0 ||
        xchg_source_open_file(path, XCHG_FILE_MMAP, &src, &err) != XCHG_OK ||
        xchg_istream_open(src, z ? XCHG_STREAM_ZSTD : XCHG_STREAM_LZ4_FRAME, NULL, &s, &err) !=
            XCHG_OK) {
      TU_CHECK(0, "gen rows: open");
      continue;
    }
    uint64_t sum = 0;
    int64_t n = 0;
    for (;;) {
      uint8_t row[104];
      size_t got_n;
      if (xchg_istream_read(s, row, sizeof row, &got_n, &err) != XCHG_OK) {
        TU_CHECK(0, "gen rows: %s", err.message);
        break;
      }
      if (got_n == 0) break;
      uint32_t len = (uint32_t)row[0] | (uint32_t)row[1] << 8 | (uint32_t)row[2] << 16 |
                     (uint32_t)row[3] << 24;
      if (got_n != sizeof row || len != 100) {
        TU_CHECK(0, "gen rows: a row is not 4 + 100 bytes");
        break;
      }
      for (int k = 4; k < 104; k++) sum += row[k];
      n++;
    }
    xchg_istream_free(s);
    TU_CHECK(n == 3000 && sum == want.payload, "gen rows: rows or payload sum differ from --sums");
  }
  TU_CHECK(tu_run("'%s' gen nosuchshape '%s/x' 2>/dev/null", cli, dir) == 2,
           "gen nosuchshape: exit status not 2");
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  if (mkdtemp(dir) == NULL) {
    perror("test_writer_cli: mkdtemp");
    return 1;
  }
  static const tu_case cases[] = {
      {"convert", check_convert},
      {"gen", check_gen},
  };
  int rc = TU_MAIN(argc, argv, "writer_cli", cases);
  tu_run("rm -rf '%s'", dir);
  return rc;
}
