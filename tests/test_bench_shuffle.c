/* test_bench_shuffle.c — `xchg bench shuffle --quick --json` as CI runs
 * it, over every framing and codec, blocks of 64 rows and of 100 (whose
 * bitmaps join at odd bit offsets): the command succeeds (its warm-ups
 * checked every value against the generator, and every coalesced batch row
 * by row against the per-block read), prints the documented fields for
 * every mode (coalesced, per_block, per_block_then_concat, split_limit,
 * memcpy_limit, handover_limit, codec_limit where something is compressed)
 * on 1 and 2 threads, and what it reports is what the data must give: the
 * blocks and batches the row counts make (split_limit on 2 threads: a
 * short batch more at most, where its parts meet), and, for every reading
 * mode, the checksum of its column as the generator sums it here.
 * Then a file written by `xchg gen shuffle` is benchmarked as a FILE: its
 * framing and codec are told from its bytes, and the checksum is the one
 * `xchg gen --sums` printed.  Comet blocks with a codec, and they only, are
 * held against codec_limit + memcpy_limit too, and wherever something is
 * compressed the codec's share of per_block_then_concat is printed.  A
 * FILE whose dictionaries change between blocks (which cuts batches) is
 * benchmarked too, and one with a block of no rows, one whose strings
 * have no value bytes, and one of blocks of two sizes (the header and the
 * JSON give both, not the first block's as every block's). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen/shape_shuffle.h"
#include "support/c_fixture.h"
#include "support/cli_run.h"
#include "support/testutil.h"
#include "xchg/xchg.h"

#define ROWS 16384 /* --quick */
#define TARGET 8192

static json_t *run_json(const char *cmd) {
  FILE *p = popen(cmd, "r");
  json_error_t jerr;
  /* Read to the end: stopping at the document's last brace closed the pipe
   * before the command wrote its last newline when a 4 KiB write ended
   * between the two, and the command died of SIGPIPE (exit 141). */
  json_t *doc = p ? json_loadf(p, 0, &jerr) : NULL;
  int status = p ? pclose(p) : -1;
  TU_CHECK(status == 0 && doc, "%s: exit status %d, JSON: %s", cmd, status, doc ? "ok" : jerr.text);
  return status == 0 ? doc : (json_decref(doc), NULL);
}

static xchg_status discard(void *ctx, const void *data, size_t n, int64_t block, int64_t blocks,
                           xchg_error *err) {
  (void)ctx, (void)data, (void)n, (void)block, (void)blocks, (void)err;
  return XCHG_OK;
}

/* The generator's sum of column c1 (its values do not depend on how the
 * rows are cut or framed). */
static uint64_t generated_c1(uint64_t seed, int64_t rows, int columns) {
  shape_shuffle_config c = {seed, rows, 1000, columns, SHAPE_SHUFFLE_IPC, SHAPE_SHUFFLE_NONE};
  shape_shuffle_sums sums;
  memset(&sums, 0, sizeof sums);
  xchg_error err;
  TU_CHECK(shape_shuffle_encode(&c, discard, NULL, &sums, &err) == XCHG_OK, "generating: %s",
           err.message);
  return sums.value[1];
}

/* Output batches of at least TARGET rows from blocks of block_rows. */
static int64_t batches_for(int64_t rows, int64_t block_rows) {
  int64_t per_batch = (TARGET + block_rows - 1) / block_rows * block_rows;
  return (rows + per_batch - 1) / per_batch;
}

static const char *str(json_t *r, const char *name) {
  const char *s = json_string_value(json_object_get(r, name));
  TU_CHECK(s != NULL, "field %s missing or not a string", name);
  return s ? s : "";
}

static json_int_t integer(json_t *r, const char *name) {
  json_t *v = json_object_get(r, name);
  TU_CHECK(json_is_integer(v), "field %s missing or not an integer", name);
  return json_integer_value(v);
}

static double number(json_t *r, const char *name) {
  json_t *v = json_object_get(r, name);
  TU_CHECK(json_is_number(v), "field %s missing or not a number", name);
  return json_number_value(v);
}

enum { COALESCED, PER_BLOCK, CONCAT, SPLIT, MEMCPY, HANDOVER, CODEC, MODES };
static const char *const modes[MODES] = {"coalesced",   "per_block",    "per_block_then_concat",
                                         "split_limit", "memcpy_limit", "handover_limit",
                                         "codec_limit"};

/* Checks one result; marks seen[config][mode][threads - 1]. */
static void check_result(json_t *r, size_t i, uint64_t c1, int seen[14][MODES][2]) {
  const char *format = str(r, "format"), *codec = str(r, "codec"), *mode = str(r, "mode");
  json_int_t block_rows = integer(r, "block_rows"), blocks = integer(r, "blocks"),
             rows = integer(r, "rows");
  json_int_t threads = integer(r, "threads"), batches = integer(r, "batches_out"),
             columns = integer(r, "columns");
  double median = number(r, "median_ms"), lo = number(r, "min_ms"), hi = number(r, "max_ms");
  double per_block = number(r, "us_per_block");
  TU_CHECK(rows == ROWS && columns == 5 && (block_rows == 64 || block_rows == 100) &&
               blocks == (ROWS + block_rows - 1) / block_rows,
           "result %zu: %lld rows, %lld columns, %lld blocks of %lld", i, (long long)rows,
           (long long)columns, (long long)blocks, (long long)block_rows);
  TU_CHECK(lo > 0 && lo <= median && median <= hi && per_block > 0 &&
               per_block > 1000 * median / (double)blocks * 0.99 &&
               per_block < 1000 * median / (double)blocks * 1.01,
           "result %zu: median %g in [%g, %g], %g us per block of %lld", i, median, lo, hi,
           per_block, (long long)blocks);
  int m = -1;
  for (int k = 0; k < MODES; k++)
    if (!strcmp(mode, modes[k])) m = k;
  TU_CHECK(m >= 0 && (threads == 1 || threads == 2), "result %zu: mode '%s' on %lld threads", i,
           mode, (long long)threads);
  TU_CHECK(m != CODEC || strcmp(codec, "none") != 0,
           "result %zu: codec_limit of uncompressed input", i);
  json_int_t want = m == PER_BLOCK ? blocks : batches_for(rows, block_rows);
  json_int_t seams = m == SPLIT ? threads - 1 : 0; /* a part's last batch may be short */
  TU_CHECK(batches >= want && batches <= want + seams,
           "result %zu (%s): %lld batches out, want %lld (%lld more at most)", i, mode,
           (long long)batches, (long long)want, (long long)seams);
  json_t *sum = json_object_get(r, "checksum");
  if (m >= 0 && m <= SPLIT) {
    char expect[32];
    snprintf(expect, sizeof expect, "%llu", (unsigned long long)c1);
    TU_CHECK(!strcmp(str(r, "checksum_column"), "c1") && json_is_string(sum) &&
                 !strcmp(json_string_value(sum), expect),
             "result %zu (%s %s %s): checksum %s, the generator's c1 sums to %s", i, format, codec,
             mode, json_is_string(sum) ? json_string_value(sum) : "(none)", expect);
  } else {
    TU_CHECK(sum == NULL, "result %zu: a limit with a checksum", i);
  }
  static const char *const configs[] = {"ipc", "comet"};
  static const char *const codecs[] = {"none", "lz4", "zstd", "snappy"};
  int f = !strcmp(format, configs[1]), c = -1;
  for (int k = 0; k < 4; k++)
    if (!strcmp(codec, codecs[k])) c = k;
  TU_CHECK(c >= 0 && (f || strcmp(format, "ipc") == 0), "result %zu: format %s codec %s", i, format,
           codec);
  TU_CHECK(f || c != 3, "result %zu: snappy in the ipc framing", i);
  if (c >= 0 && (f || c != 3) && m >= 0 && (threads == 1 || threads == 2))
    seen[(f ? 6 : 0) + 2 * c + (block_rows == 100)][m][threads - 1]++;
}

static void sweep(const char *cli) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' bench shuffle --quick --runs 1 --threads 2 --json --format ipc,comet "
           "--codec none,lz4,zstd,snappy --columns 5 --block-rows 64,100",
           cli);
  json_t *doc = run_json(cmd);
  if (!doc) return;
  uint64_t c1 = generated_c1((uint64_t)integer(doc, "seed"), ROWS, 5);
  TU_CHECK(integer(doc, "target_rows") == TARGET && integer(doc, "cores") >= 1 &&
               strlen(str(doc, "machine")) > 0 && !strcmp(str(doc, "benchmark"), "shuffle"),
           "the document's header fields");
  int seen[14][MODES][2];
  memset(seen, 0, sizeof seen);
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(doc, "results"), i, r) check_result(r, i, c1, seen);
  /* ipc: none, lz4, zstd; comet: none, lz4, zstd, snappy; each at 64 and 100 rows. */
  for (int k = 0; k < 14; k++)
    for (int m = 0; m < MODES; m++)
      for (int t = 0; t < 2; t++) {
        int none = k == 0 || k == 1 || k == 6 || k == 7;
        int want = m == CODEC && none ? 0 : 1;
        TU_CHECK(seen[k][m][t] == want,
                 "configuration %d: %s on %d threads reported %d times, want %d", k, modes[m],
                 t + 1, seen[k][m][t], want);
      }
  json_decref(doc);
}

static void from_file(const char *cli) {
  char path[] = "/tmp/xchg_bench_shuffle_XXXXXX", cmd[4096];
  int fd = mkstemp(path);
  TU_CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  snprintf(cmd, sizeof cmd,
           "'%s' gen shuffle %s -f --format comet --compression lz4 --rows 5000 --block-rows 77 "
           "--columns 7 --seed 9 --sums",
           cli, path);
  json_t *sums = run_json(cmd);
  snprintf(cmd, sizeof cmd, "'%s' bench shuffle %s --runs 1 --threads 1 --json", cli, path);
  json_t *doc = sums ? run_json(cmd) : NULL;
  const char *c1 = json_string_value(
      json_object_get(json_object_get(json_object_get(sums, "columns"), "c1"), "sum"));
  TU_CHECK(c1 != NULL && generated_c1(9, 5000, 7) == strtoull(c1, NULL, 10),
           "gen --sums: c1 sums to %s", c1);
  TU_CHECK(json_is_null(json_object_get(doc, "seed")),
           "FILE: a seed in the JSON, where its writer made the blocks");
  size_t i, n = 0;
  json_t *r;
  json_array_foreach(json_object_get(doc, "results"), i, r) {
    n++;
    TU_CHECK(!strcmp(str(r, "format"), "comet") && !strcmp(str(r, "codec"), "lz4") &&
                 integer(r, "columns") == 7 && integer(r, "blocks") == 65 &&
                 integer(r, "block_rows") == 77 && integer(r, "block_rows_min") == 72 &&
                 integer(r, "block_rows_max") == 77 && integer(r, "rows") == 5000,
             "FILE result %zu: what the file holds", i);
    json_t *sum = json_object_get(r, "checksum");
    if (sum)
      TU_CHECK(c1 && !strcmp(json_string_value(sum), c1),
               "FILE result %zu: checksum %s, gen --sums %s", i, json_string_value(sum), c1);
  }
  TU_CHECK(n == MODES, "FILE: %zu results, want the %d modes on one thread", n, MODES);
  json_decref(doc);
  json_decref(sums);
  remove(path);
}

/* A FILE of Comet blocks (the stored framing) of a gold stream with
 * dictionary columns, the last block's dictionary changed: that change
 * cuts a coalesced batch short before the last, as the shuffle reader
 * documents, which is no failure of the reader (exit 1 once). */
static void dictionary_file(const char *cli) {
  char gold[4096], path[] = "/tmp/xchg_bench_shuffle_dict_XXXXXX", cmd[4200];
  tu_testdata_path(gold, sizeof gold, "arrow-gold/1.0.0-littleendian/generated_dictionary.stream");
  tu_bytes ipc = tu_read_bytes(gold);
  int fd = mkstemp(path);
  TU_CHECK(ipc.data != NULL && fd >= 0, "cannot read %s or make a file", gold);
  if (ipc.data == NULL || fd < 0) return;
  close(fd);
  uint8_t header[20];
  for (int k = 0; k < 8; k++) {
    header[k] = (uint8_t)((12 + (uint64_t)ipc.size) >> (8 * k));
    header[8 + k] = (uint8_t)((uint64_t)3 >> (8 * k)); /* the schema's 3 fields */
  }
  memcpy(header + 16, "NONE", 4);
  tu_bytes blocks = {0};
  for (int n = 0; n < 3; n++) {
    tu_bytes_append(&blocks, header, sizeof header);
    tu_bytes_append(&blocks, ipc.data, ipc.size);
  }
  static const char value[] = "be\xc2\xa3jdbi"; /* a value of dictionary 1 */
  uint8_t *last = blocks.data + blocks.size - ipc.size;
  uint8_t *hit = NULL;
  for (size_t i = 0; hit == NULL && i + sizeof value - 1 <= ipc.size; i++)
    if (memcmp(last + i, value, sizeof value - 1) == 0) hit = last + i;
  TU_CHECK(hit != NULL, "%s holds no \"%s\"", gold, value);
  if (hit != NULL) hit[0] ^= 0x20; /* its case */
  TU_CHECK(tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
  snprintf(cmd, sizeof cmd, "'%s' bench shuffle %s --runs 1 --threads 1 --json", cli, path);
  json_t *doc = run_json(cmd);
  json_t *first = json_array_get(json_object_get(doc, "results"), 0);
  TU_CHECK(first && integer(first, "blocks") == 3 && integer(first, "rows") == 51,
           "bench shuffle of dictionary blocks: not their 3 blocks of 51 rows");
  json_decref(doc);
  free(blocks.data);
  free(ipc.data);
  remove(path);
}

/* An IPC stream of one record batch, written by xchg's writer. */
static tu_bytes stream_of(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                          const char *what) {
  tu_bytes out = {0};
  xchg_ipc_writer *w = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_writer_open_memory(schema, NULL, &w, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_write(w, batch, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_buf *bytes = st == XCHG_OK ? xchg_ipc_writer_take_memory(w) : NULL;
  TU_CHECK(bytes != NULL, "an IPC stream of %s: %s", what,
           st == XCHG_OK ? "no bytes" : err.message);
  if (bytes != NULL) tu_bytes_append(&out, xchg_buf_data(bytes), xchg_buf_size(bytes));
  xchg_buf_unref(bytes);
  xchg_ipc_writer_free(w);
  return out;
}

/* An IPC stream of one record batch of no rows, of the schema of the
 * first IPC stream of ipc (the reader gives its empty buffers as NULL). */
static tu_bytes empty_block(const uint8_t *ipc, size_t size) {
  tu_bytes out = {0};
  xchg_ipc_reader *r = NULL;
  struct ArrowSchema schema = {0};
  struct ArrowArray batch = {0};
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open_memory(ipc, size, NULL, NULL, NULL, &r, &err);
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(r, &schema, &err);
  if (st == XCHG_OK) st = xchg_ipc_reader_next(r, &batch, &err);
  TU_CHECK(st == XCHG_OK, "the first batch of a generated stream: %s", err.message);
  struct ArrowArray none = batch;
  none.length = 0; /* a slice of no rows */
  if (st == XCHG_OK) out = stream_of(&schema, &none, "no rows");
  if (batch.release) batch.release(&batch);
  if (schema.release) schema.release(&schema);
  xchg_ipc_reader_free(r);
  return out;
}

/* An IPC stream of one utf8 column "s" of three empty strings: no value
 * bytes, so no data buffer at all (NULL), as a writer of all-null or
 * empty strings may leave it. */
static tu_bytes empty_strings_stream(void) {
  static const int32_t offsets[4] = {0, 0, 0, 0};
  const void *buffers[3] = {NULL, offsets, NULL}, *none[1] = {NULL};
  struct ArrowSchema s, top, *children[1] = {&s};
  struct ArrowArray a, batch, *arrays[1] = {&a};
  tu_fixture_schema(&s, "u", "s", 0, NULL);
  tu_fixture_schema(&top, "+s", "", 1, children);
  tu_fixture_array(&a, 3, 3, buffers, 0, NULL);
  tu_fixture_array(&batch, 3, 1, none, 1, arrays);
  return stream_of(&top, &batch, "empty strings");
}

/* What a FILE's blocks hold: how many, their rows in all, and the rows
 * of each (block_rows: R, or the mean where they differ). */
typedef struct block_counts {
  int64_t blocks, rows, block_rows, min, max;
} block_counts;

/* `bench shuffle` of a FILE of `blocks` (one thread, one run) runs every
 * mode and counts what `want` says. */
static void bench_blocks(const char *cli, const tu_bytes *blocks, block_counts want,
                         const char *what) {
  char path[] = "/tmp/xchg_bench_shuffle_blocks_XXXXXX", cmd[4200];
  int fd = mkstemp(path);
  TU_CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  close(fd);
  TU_CHECK(blocks->size > 0 && tu_write_file(path, blocks->data, blocks->size) == 0,
           "cannot write %s", path);
  snprintf(cmd, sizeof cmd, "'%s' bench shuffle %s --runs 1 --threads 1 --json", cli, path);
  json_t *doc = run_json(cmd);
  json_t *first = json_array_get(json_object_get(doc, "results"), 0);
  TU_CHECK(first && integer(first, "blocks") == want.blocks &&
               integer(first, "rows") == want.rows &&
               integer(first, "block_rows") == want.block_rows &&
               integer(first, "block_rows_min") == want.min &&
               integer(first, "block_rows_max") == want.max,
           "bench shuffle of %s: not their %lld blocks of %lld rows (block_rows %lld, %lld-%lld)",
           what, (long long)want.blocks, (long long)want.rows, (long long)want.block_rows,
           (long long)want.min, (long long)want.max);
  json_decref(doc);
  remove(path);
}

/* A FILE of IPC streams, the last of no rows (as polars writes an empty
 * partition): per_block_then_concat joins it without copying from its
 * NULL buffers (UndefinedBehaviorSanitizer: null pointer passed to
 * memcpy, exit 1, once). */
static void empty_block_file(const char *cli) {
  char path[] = "/tmp/xchg_bench_shuffle_empty_XXXXXX", cmd[4200];
  int fd = mkstemp(path);
  TU_CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  close(fd);
  snprintf(cmd, sizeof cmd,
           "'%s' gen shuffle %s -f --format ipc --rows 300 --block-rows 100 --columns 5", cli,
           path);
  TU_CHECK(tu_run("%s", cmd) == 0, "%s failed", cmd);
  size_t size = 0;
  uint8_t *ipc = tu_read_file(path, &size);
  remove(path);
  TU_CHECK(ipc != NULL, "cannot read %s", path);
  if (ipc == NULL) return;
  tu_bytes blocks = {0}, empty = empty_block(ipc, size);
  tu_bytes_append(&blocks, ipc, size);
  tu_bytes_append(&blocks, empty.data, empty.size);
  TU_CHECK(empty.size > 0, "no block of no rows");
  bench_blocks(cli, &blocks, (block_counts){4, 300, 100, 0, 100}, "blocks with an empty one");
  free(empty.data);
  free(blocks.data);
  free(ipc);
}

/* A FILE of blocks whose utf8 column has no value bytes: they are checked
 * and joined without reading their NULL data buffers (UndefinedBehavior-
 * Sanitizer: null pointer passed to memcmp in the warm-up's comparison,
 * and to memcpy in per_block_then_concat, exit 1, once). */
static void empty_strings_file(const char *cli) {
  tu_bytes block = empty_strings_stream(), blocks = {0};
  for (int i = 0; i < 3; i++) tu_bytes_append(&blocks, block.data, block.size);
  bench_blocks(cli, &blocks, (block_counts){3, 9, 3, 3, 3}, "blocks of empty strings");
  free(block.data);
  free(blocks.data);
}

/* A FILE of blocks of two sizes, 3 of 100 rows then 10 of 7 (two
 * generated files, one after the other): the header and the JSON say so,
 * where they once gave the first block's 100 rows as every block's. */
static void varying_blocks_file(const char *cli) {
  char path[] = "/tmp/xchg_bench_shuffle_sizes_XXXXXX", cmd[4200];
  int fd = mkstemp(path);
  TU_CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  close(fd);
  tu_bytes blocks = {0};
  static const int sizes[2][2] = {{300, 100}, {70, 7}}; /* rows, block rows */
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof cmd,
             "'%s' gen shuffle %s -f --format ipc --rows %d --block-rows %d --columns 5", cli, path,
             sizes[k][0], sizes[k][1]);
    TU_CHECK(tu_run("%s", cmd) == 0, "%s failed", cmd);
    size_t size = 0;
    uint8_t *part = tu_read_file(path, &size);
    TU_CHECK(part != NULL, "cannot read %s", path);
    if (part) tu_bytes_append(&blocks, part, size);
    free(part);
  }
  remove(path);
  bench_blocks(cli, &blocks, (block_counts){13, 370, 28, 7, 100}, "blocks of 100 and of 7 rows");
  char file[] = "/tmp/xchg_bench_shuffle_sizes_XXXXXX";
  fd = mkstemp(file);
  TU_CHECK(fd >= 0 && tu_write_file(file, blocks.data, blocks.size) == 0, "cannot write %s", file);
  if (fd >= 0) close(fd);
  snprintf(cmd, sizeof cmd,
           "'%s' bench shuffle %s --runs 1 --threads 1 | grep -c '13 blocks of 7 to 100 rows "
           "(mean 28) (370 rows'",
           cli, file);
  TU_CHECK(tu_run("%s >/dev/null", cmd) == 0, "%s: the header gives another block size", cmd);
  remove(file);
  free(blocks.data);
}

/* A FILE of 3 blocks of wide values: fixed-size binary of 3 bytes, a
 * month-day-nano interval (16 bytes) and a 128-bit decimal, 3 rows each.
 * Every mode sums the interval column (the checksum column) to the sum of
 * its bytes, 0 + 1 + ... + 143; the interval was read as 8 bytes (half
 * its values summed, modes apart), the decimal and binary not at all. */
static void wide_values_file(const char *cli) {
  uint8_t bin[3][9], interval[3][48], decimal[3][48];
  tu_bytes blocks = {0};
  for (int k = 0; k < 3; k++) {
    for (int j = 0; j < 9; j++) bin[k][j] = (uint8_t)(k * 9 + j);
    for (int j = 0; j < 48; j++) interval[k][j] = (uint8_t)(k * 48 + j);
    for (int j = 0; j < 48; j++) decimal[k][j] = (uint8_t)(k * 48 + j + 7);
    const void *b_bin[2] = {NULL, bin[k]}, *b_interval[2] = {NULL, interval[k]},
               *b_decimal[2] = {NULL, decimal[k]}, *none[1] = {NULL};
    struct ArrowSchema f[3], top, *fields[3] = {&f[0], &f[1], &f[2]};
    struct ArrowArray a[3], batch, *arrays[3] = {&a[0], &a[1], &a[2]};
    tu_fixture_schema(&f[0], "w:3", "bin", 0, NULL);
    tu_fixture_schema(&f[1], "tin", "interval", 0, NULL);
    tu_fixture_schema(&f[2], "d:10,2", "decimal", 0, NULL);
    tu_fixture_schema(&top, "+s", "", 3, fields);
    tu_fixture_array(&a[0], 3, 2, b_bin, 0, NULL);
    tu_fixture_array(&a[1], 3, 2, b_interval, 0, NULL);
    tu_fixture_array(&a[2], 3, 2, b_decimal, 0, NULL);
    tu_fixture_array(&batch, 3, 1, none, 3, arrays);
    tu_bytes one = stream_of(&top, &batch, "wide values");
    tu_bytes_append(&blocks, one.data, one.size);
    free(one.data);
  }
  char path[] = "/tmp/xchg_bench_shuffle_wide_XXXXXX", cmd[4200];
  int fd = mkstemp(path);
  TU_CHECK(fd >= 0 && tu_write_file(path, blocks.data, blocks.size) == 0, "cannot write %s", path);
  if (fd >= 0) close(fd);
  snprintf(cmd, sizeof cmd, "'%s' bench shuffle %s --runs 1 --threads 1 --json", cli, path);
  json_t *doc = run_json(cmd), *r;
  size_t i, n = 0;
  json_array_foreach(json_object_get(doc, "results"), i, r) {
    json_t *sum = json_object_get(r, "checksum");
    n += sum != NULL;
    TU_CHECK(!sum || !strcmp(json_string_value(sum), "10296"),
             "bench shuffle of wide values, %s: checksum %s, not the interval bytes' 10296",
             str(r, "mode"), json_string_value(sum));
  }
  TU_CHECK(n > 0, "%s: no result with a checksum", cmd);
  json_decref(doc);
  remove(path);
  free(blocks.data);
}

/* FILEs a user gives: a directory is refused by name (it crashed, its
 * size taken for bytes read); a later block of other types with as many
 * columns is refused naming the block (the warm-up read it by the first
 * block's schema and crashed); gold streams of intervals (4 and 16 bytes a
 * value, read as 8), decimals and fixed-size binary are read and checked
 * (the 4-byte intervals summed bytes past their buffers, and failed); a
 * FILE of no row is refused, there being nothing to time. */
static void files_from_elsewhere(const char *cli) {
  char dir[] = "/tmp/xchg_bench_dir_XXXXXX", gold[4096], mixed[4200];
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp")) return;
  tu_cli_result r = tu_cli_runf(cli, "bench shuffle '%s' --quick", dir);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "it is a directory, not a regular file"),
           "bench shuffle DIRECTORY: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  /* a FIFO no one writes to: refused at once (its open waited for ever;
   * `timeout` ends such a wait with 124) */
  char fifo[4200];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  TU_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
  int status = tu_run(
      "timeout 60 '%s' bench shuffle '%s' --quick 2>&1 | grep -q 'it is a pipe, "
      "a device or a socket'",
      cli, fifo);
  TU_CHECK(status == 0, "bench shuffle FIFO: not refused as a pipe (status %d)", status);
  remove(fifo);
  snprintf(mixed, sizeof mixed, "%s/mixed", dir);
  tu_testdata_path(gold, sizeof gold, "arrow-gold/1.0.0-littleendian/generated_null.stream");
  r = tu_cli_runf(cli,
                  "gen shuffle '%s' --rows 300 -f && cat '%s' >> '%s' && '%s' bench shuffle "
                  "'%s' --quick",
                  mixed, gold, mixed, cli, mixed);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "block 5 at byte") &&
               strstr(r.err, "its schema's types are not the first block's"),
           "bench shuffle of blocks of 5 int columns, then 5 null ones: exit %d: %s", r.exit_code,
           r.err);
  tu_cli_result_free(&r);
  /* the same in Comet blocks: a NONE block of the 5 null columns */
  r = tu_cli_runf(cli, "gen shuffle '%s' --format comet --compression none --rows 300 -f", mixed);
  tu_cli_result_free(&r);
  size_t n = 0;
  uint8_t *null_ipc = tu_read_file(gold, &n);
  tu_bytes comet = tu_read_bytes(mixed);
  uint64_t header[2] = {(uint64_t)n + 12, 5}; /* length of what follows, field count (LE host) */
  tu_bytes_append(&comet, (const uint8_t *)header, sizeof header);
  tu_bytes_append(&comet, (const uint8_t *)"NONE", 4);
  if (null_ipc) tu_bytes_append(&comet, null_ipc, n);
  TU_CHECK(null_ipc && tu_write_file(mixed, comet.data, comet.size) == 0, "cannot write %s", mixed);
  r = tu_cli_runf(cli, "bench shuffle '%s' --quick", mixed);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "block 5 at byte") &&
               strstr(r.err, "its schema's types are not the first block's"),
           "bench shuffle of Comet blocks of 5 int columns, then 5 null ones: exit %d: %s",
           r.exit_code, r.err);
  tu_cli_result_free(&r);
  free(null_ipc);
  free(comet.data);
  /* blocks of LZ4 bodies, then of ZSTD ones: refused by name (the codec
   * limit decompressed them all as ZSTD, and failed without saying why) */
  r = tu_cli_runf(cli,
                  "gen shuffle '%s' --compression lz4 --rows 300 -f && '%s' gen shuffle '%s.z' "
                  "--compression zstd --rows 300 -f && cat '%s.z' >> '%s' && rm '%s.z' && '%s' "
                  "bench shuffle '%s' --quick",
                  mixed, cli, mixed, mixed, mixed, mixed, cli, mixed);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "its blocks use several body codecs"),
           "bench shuffle of LZ4 blocks, then ZSTD ones: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  /* blocks of no row: nothing to time, said (it printed ratios of nothing) */
  r = tu_cli_runf(cli, "gen shuffle '%s' --rows 0 -f && '%s' bench shuffle '%s' --quick", mixed,
                  cli, mixed);
  TU_CHECK(
      r.exit_code == 1 && strstr(r.err, "holds no rows: nothing to time") && !strstr(r.out, "x "),
      "bench shuffle of no row: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  remove(mixed);
  rmdir(dir);
  /* large binary (64-bit offsets) is summed: its checksum column's bytes,
   * where it was not read at all (checksum 0) */
  tu_testdata_path(gold, sizeof gold,
                   "arrow-gold/1.0.0-littleendian/generated_primitive_large_offsets.stream");
  r = tu_cli_runf(cli, "bench shuffle '%s' --quick --json", gold);
  TU_CHECK(
      r.exit_code == 0 && strstr(r.out, "\"checksum\":\"") && !strstr(r.out, "\"checksum\":\"0\""),
      "bench shuffle of large binary: exit %d, a checksum of 0 or none: %.400s", r.exit_code,
      r.out);
  tu_cli_result_free(&r);
  static const char *const names[] = {"interval", "decimal", "decimal256", "primitive"};
  for (int i = 0; i < 4; i++) {
    tu_testdata_path(gold, sizeof gold, "arrow-gold/1.0.0-littleendian/generated_%s.stream",
                     names[i]);
    r = tu_cli_runf(cli, "bench shuffle '%s' --quick", gold);
    TU_CHECK(r.exit_code == 0, "bench shuffle %s: exit %d: %s", names[i], r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
}

static const char *cli;

static void run_sweep(void) { sweep(cli); }
static void run_empty_block_file(void) { empty_block_file(cli); }
static void run_empty_strings_file(void) { empty_strings_file(cli); }
static void run_varying_blocks_file(void) { varying_blocks_file(cli); }
static void run_dictionary_file(void) { dictionary_file(cli); }
static void run_from_file(void) { from_file(cli); }
static void run_files_from_elsewhere(void) { files_from_elsewhere(cli); }
static void run_wide_values_file(void) { wide_values_file(cli); }

static void usage_errors(void) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' bench shuffle --format ipc --compression snappy --quick >/dev/null 2>&1", cli);
  TU_CHECK(tu_run("%s", cmd) == 2, "%s: no configuration is a usage error", cmd);
  /* The shuffle shape's options are its own; the other shapes refuse them
   * and are generated as before without them. */
  snprintf(cmd, sizeof cmd, "'%s' gen cache - --rows 10 >/dev/null", cli);
  TU_CHECK(tu_run("%s", cmd) == 0, "%s", cmd);
  snprintf(cmd, sizeof cmd, "'%s' gen cache - --rows 10 --block-rows 5 >/dev/null 2>&1", cli);
  TU_CHECK(tu_run("%s", cmd) == 2, "%s: --block-rows is the shuffle shape's", cmd);
  snprintf(cmd, sizeof cmd, "'%s' gen shuffle - --rows 10 --level 3 >/dev/null 2>&1", cli);
  TU_CHECK(tu_run("%s", cmd) == 2, "%s: --level is not the shuffle shape's", cmd);
}

/* Lines of `bench shuffle OPTIONS` (5 columns, 64-row blocks, 2 threads,
 * --quick) that match the extended regular expression `pattern`. */
static int count_lines(const char *options, const char *pattern) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' bench shuffle %s --columns 5 --block-rows 64 --threads 2 --quick | grep -cE '%s'",
           cli, options, pattern);
  FILE *p = popen(cmd, "r");
  int lines = -1;
  if (p && fscanf(p, "%d", &lines) != 1) lines = -1;
  if (p) pclose(p);
  return lines;
}

/* Comet blocks with a codec, and they only, are also held against their
 * floor, both limits one after the other; wherever something is
 * compressed, the bare codec's share of per_block_then_concat is given
 * beside coalesced's; on every thread count. */
static void floors(void) {
  static const char window[] = "^  [12] threads?: coalesced [0-9.]+x codec_limit \\+ memcpy_limit ";
  static const char codec_share[] =
      "^  [12] threads?: coalesced [0-9.]+x per_block_then_concat \\(codec_limit alone [0-9.]+x";
  static const struct {
    const char *options;
    int window, codec_share;
  } cases[] = {{"--format comet --codec lz4", 2, 2},
               {"--format comet --codec none", 0, 0},
               {"--format ipc --codec zstd", 0, 2},
               {"--format ipc --codec none", 0, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int w = count_lines(cases[i].options, window), c = count_lines(cases[i].options, codec_share);
    TU_CHECK(w == cases[i].window,
             "bench shuffle %s: %d lines against the window floor, expected %d", cases[i].options,
             w, cases[i].window);
    TU_CHECK(c == cases[i].codec_share,
             "bench shuffle %s: %d lines with the codec's share, expected %d", cases[i].options, c,
             cases[i].codec_share);
  }
}

/* Every speed-up on 2 threads, and coalesced's over its limit's, is the
 * median of the runs' own with their min-max around it: a line for each
 * mode that applies (ipc lz4: all seven; ipc none: all but codec_limit), and
 * the yardsticks (ipc lz4: codec_limit and split_limit; ipc none:
 * memcpy_limit, handover_limit and split_limit). */
static void speedup_lines(const char *options, int want_modes, int want_yardsticks) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' bench shuffle %s --columns 5 --block-rows 64 --threads 2 --quick --runs 3", cli,
           options);
  FILE *p = popen(cmd, "r");
  char line[512];
  int modes_seen = 0, yardsticks = 0, bad = 0;
  while (p && fgets(line, sizeof line, p)) {
    double median, lo, hi;
    char mode[64];
    int threads;
    if (sscanf(line, " %63s speed-up on %d threads: %lfx (runs %lf-%lf)", mode, &threads, &median,
               &lo, &hi) == 5)
      modes_seen++;
    else if (sscanf(line, " coalesced speed-up / %63s speed-up: %lf (runs %lf-%lf)", mode, &median,
                    &lo, &hi) == 4)
      yardsticks++;
    else
      continue;
    if (!(lo > 0 && lo <= median && median <= hi)) {
      bad++;
      fprintf(stderr, "not a median within its min-max: %s", line);
    }
  }
  if (p) pclose(p);
  TU_CHECK(modes_seen == want_modes && yardsticks == want_yardsticks && bad == 0,
           "bench shuffle %s: %d speed-up lines of modes (want %d), %d of coalesced against a "
           "limit (want %d), %d out of their min-max",
           options, modes_seen, want_modes, yardsticks, want_yardsticks, bad);
}

static void paired_speedups(void) {
  speedup_lines("--format ipc --codec lz4", 7, 2);
  speedup_lines("--format ipc --codec none", 6, 3);
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  static const tu_case cases[] = {
      {"sweep", run_sweep},
      {"from_file", run_from_file},
      {"files_from_elsewhere", run_files_from_elsewhere},
      {"wide_values_file", run_wide_values_file},
      {"usage_errors", usage_errors},
      {"floors", floors},
      {"paired_speedups", paired_speedups},
      {"dictionary_file", run_dictionary_file},
      {"empty_block_file", run_empty_block_file},
      {"empty_strings_file", run_empty_strings_file},
      {"varying_blocks_file", run_varying_blocks_file},
  };
  return TU_MAIN(argc, argv, "bench_shuffle", cases);
}
