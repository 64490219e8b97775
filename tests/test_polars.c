/* tests/test_polars.c — interop with another Arrow implementation:
 * nodejs-polars 0.25.2 (Rust polars-arrow underneath).
 *
 *  1. `xchg gen` writes the cache shape (and the broadcast shape) with each
 *     body codec, in the stream and the file format, and prints the sums a
 *     reader must find;
 *  2. polars reads each file (tests/interop/polars/check.mjs) and its sums
 *     of every column must equal the generator's;
 *  3. polars writes the data back with each of its codecs, in its file
 *     format (Utf8View strings) and its stream format (LargeUtf8); xchg
 *     reads those files, checks they really are compressed as asked, and
 *     its own sums must equal the generator's;
 *  4. nested, dictionary-encoded and decimal data: Arrow gold files
 *     converted by `xchg convert` with each codec, in both formats, are
 *     read by polars and compared value by value with their .json.gz
 *     (check.mjs --gold).
 *
 * Fails when node or the npm package is not installed (a test that cannot
 * run is a failure): scripts/setup.sh installs both. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/column_sums.h"
#include "support/interop.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/xchg.h"

#define ROWS 20000

static char dir[] = "/tmp/xchg-polars-XXXXXX";

/* ---- xchg's side: reading polars' files ------------------------------------------- */

typedef struct codec_seen {
  int batches, wrong;
  xchg_block_codec want;
} codec_seen;

static void on_message(void *ctx, const xchg_message_info *info) {
  codec_seen *s = ctx;
  if (info->kind != XCHG_MESSAGE_RECORD_BATCH) return;
  s->batches++;
  if (info->compression != s->want) s->wrong++;
}

/* The sums of the IPC file at path, whose every record batch must be
 * compressed with want. */
static int xchg_sums(const char *path, xchg_block_codec want, tu_sums *out, char *msg, size_t n) {
  xchg_ipc_reader *r;
  xchg_error err;
  memset(out, 0, sizeof *out);
  if (xchg_ipc_reader_open_file(path, NULL, &r, &err) != XCHG_OK) {
    snprintf(msg, n, "open: %s", err.message);
    return -1;
  }
  codec_seen seen = {0, 0, want};
  xchg_ipc_reader_on_message(r, on_message, &seen);
  int rc = tu_sums_of_reader(r, out, NULL, NULL, msg, n);
  if (rc == 0 && (seen.batches == 0 || seen.wrong)) {
    snprintf(msg, n, "%d of %d record batches not compressed with %s", seen.wrong, seen.batches,
             xchg_block_codec_name(want));
    rc = -1;
  }
  xchg_ipc_reader_free(r);
  return rc;
}

/* ---- the test ------------------------------------------------------------------ */

static void cleanup(void) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  tu_run("%s", cmd);
}

/* One flow: xchg writes, polars reads and writes, xchg reads polars'. */
static void xchg_and_polars(void) {
  const char *cli = tu_cli_path();
  const char *src = tu_interop_dir("polars");
  char path[4300], cmd[16384], msg[2048], what_buf[256];
  if (!TU_CHECK(tu_interop_ready("polars", "nodejs-polars", msg, sizeof msg) == 0, "polars: %s",
                msg))
    return;
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return;
  /* 1. xchg writes. */
  static const char *files[] = {"xc_none.ipc", "xc_lz4.ipc",   "xc_zstd.ipc",
                                "xcf_lz4.ipc", "xcf_zstd.ipc", "xb_zstd.ipc"};
  static const char *args[] = {
      "cache --compression none",           "cache --compression lz4",
      "cache --compression zstd --level 3", "cache --compression lz4 --file",
      "cache --compression zstd --file",    "broadcast --compression zstd"};
  int nfiles = (int)(sizeof files / sizeof *files);
  tu_sums want[8];
  for (int i = 0; i < nfiles; i++) {
    snprintf(cmd, sizeof cmd, "'%s' gen %.*s '%s/%s' %s --rows %d --seed 7 --sums > '%s/%s.sums'",
             cli, (int)strcspn(args[i], " "), args[i], dir, files[i], strchr(args[i], ' ') + 1,
             ROWS, dir, files[i]);
    if (tu_run("%s", cmd) != 0) {
      TU_CHECK(0, "xchg gen: %s", cmd);
      cleanup();
      TU_CHECK(0, "the test could not start (see above)");
      return;
    }
    snprintf(path, sizeof path, "%s/%s.sums", dir, files[i]);
    if (tu_sums_load(path, &want[i]) != 0) {
      TU_CHECK(0, "reading the generator's sums: %s", path);
      cleanup();
      TU_CHECK(0, "the test could not start (see above)");
      return;
    }
  }
  /* 2. polars reads. */
  int at = snprintf(cmd, sizeof cmd, "cd '%s' && node check.mjs '%s'", src, dir);
  for (int i = 0; i < nfiles; i++)
    at += snprintf(cmd + at, sizeof cmd - (size_t)at, " '%s/%s'", dir, files[i]);
  snprintf(cmd + at, sizeof cmd - (size_t)at, " > '%s/polars.jsonl'", dir);
  if (tu_run("%s", cmd) != 0) {
    TU_CHECK(0, "node check.mjs: %s", cmd);
  } else {
    snprintf(path, sizeof path, "%s/polars.jsonl", dir);
    FILE *f = fopen(path, "r");
    char line[8192];
    int seen = 0;
    while (f && fgets(line, sizeof line, f)) {
      json_error_t jerr;
      json_t *doc = json_loads(line, 0, &jerr);
      const char *name = doc ? json_string_value(json_object_get(doc, "file")) : NULL;
      tu_sums got;
      int k = -1;
      for (int i = 0; name && i < nfiles; i++)
        if (!strcmp(name, files[i])) k = i;
      if (k < 0 || tu_sums_from_json(doc, &got) != 0) {
        TU_CHECK(0, "polars output: %s", line);
      } else {
        char why[512];
        snprintf(msg, sizeof msg, "polars reading xchg's %s", name);
        TU_CHECK(tu_sums_compare(&want[k], &got, why, sizeof why) == 0, "%s: %s", msg, why);
        seen++;
      }
      json_decref(doc);
    }
    if (f) fclose(f);
    TU_CHECK(seen == nfiles, "polars output: not one line per file");
    /* 3. xchg reads what polars wrote. */
    static const char *codecs[] = {"uncompressed", "lz4", "zstd"};
    static const xchg_block_codec ids[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};
    for (int fmt = 0; fmt < 2; fmt++)
      for (int c = 0; c < 3; c++) {
        char what[256];
        snprintf(path, sizeof path, "%s/polars_%s_%s.arrow", dir, fmt ? "stream" : "file",
                 codecs[c]);
        snprintf(what, sizeof what, "xchg reading polars' %s format, %s", fmt ? "stream" : "file",
                 codecs[c]);
        tu_sums got;
        if (xchg_sums(path, ids[c], &got, msg, sizeof msg) != 0)
          TU_CHECK(0, "%s: %s", what, msg);
        else
          TU_CHECK(tu_sums_compare(&want[0], &got, msg, sizeof msg) == 0, "%s: %s", what, msg);
      }
  }
  /* 4. nested and dictionary-encoded gold data, converted by xchg */
  const char *testdata = tu_testdata_dir();
  /* generated_decimal: random values, which do not compress, so that a
   * buffer stored raw (behind the -1 prefix, 8 bytes into its slot) made
   * polars panic on a 128-bit decimal not 16-byte aligned */
  static const char *gold[] = {"generated_nested", "generated_dictionary", "generated_decimal"};
  static const char *convert_opts[] = {"--compression none",       "--compression lz4",
                                       "--compression zstd",       "--compression none --file",
                                       "--compression lz4 --file", "--compression zstd --file"};
  for (int g = 0; g < 3; g++) {
    at = snprintf(cmd, sizeof cmd,
                  "cd '%s' && node check.mjs --gold '%s/arrow-gold/1.0.0-littleendian/%s.json.gz'",
                  src, testdata, gold[g]);
    int converted = 1;
    for (int c = 0; c < 6 && converted; c++) {
      snprintf(path, sizeof path, "%s/%s_%d.arrow", dir, gold[g], c);
      char convert[8192];
      snprintf(convert, sizeof convert,
               "'%s' convert '%s/arrow-gold/1.0.0-littleendian/%s.stream' '%s' %s", cli, testdata,
               gold[g], path, convert_opts[c]);
      if (tu_run("%s", convert) != 0) {
        TU_CHECK(0, "xchg convert: %s", convert);
        converted = 0;
      }
      at += snprintf(cmd + at, sizeof cmd - (size_t)at, " '%s'", path);
    }
    snprintf(what_buf, sizeof what_buf,
             "polars reading %s as converted by xchg (each codec, both formats)", gold[g]);
    if (converted)
      TU_CHECK(tu_run("%s", cmd) == 0, "%s: values differ from the JSON (see above)", what_buf);
  }
  cleanup();
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"xchg_and_polars", xchg_and_polars}};
  return TU_MAIN(argc, argv, "polars", cases);
}
