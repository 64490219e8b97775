/* tests/test_footer_blocks.c — an Arrow IPC file whose footer does not list
 * its messages is an error, read by footer or in order.
 *
 * The footer's blocks say where each dictionary and record batch message
 * begins, and a reader with random access trusts them (Columnar.rst, "IPC
 * File Format").  A file is a stream between its magics, so a footer that
 * agrees with it lists each message once, in file order, at its offset and
 * with its lengths.  Gold files are edited in their footer only (a block
 * dropped, two swapped, one listed twice, lengths moved from the metadata
 * to the body, a dictionary dropped) and read three ways: from memory
 * (footer), through an unseekable source (in order: the footer is checked
 * at the end) and with `xchg cat` / `xchg inspect`, from the file and piped.
 * Every way is XCHG_EFORMAT (exit 1) naming the footer block and the bytes
 * that differ; before, the footer's batches and the stream's were both read
 * without an error, and differed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/cli_run.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/xchg.h"

/* ---- the footer of a gold file ------------------------------------------- */

static uint32_t load_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int64_t load_i64(const uint8_t *p) {
  return (int64_t)((uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32);
}

static void store_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void store_i64(uint8_t *p, int64_t v) {
  store_u32(p, (uint32_t)(uint64_t)v);
  store_u32(p + 4, (uint32_t)((uint64_t)v >> 32));
}

/* A Block struct of the footer: offset int64, metaDataLength int32 (and 4
 * bytes of padding), bodyLength int64. */
#define BLOCK_SIZE 24
enum { FOOTER_DICTIONARIES = 2, FOOTER_BATCHES = 3 };

typedef struct block {
  int64_t offset, metadata, body;
} block;

static block block_at(const uint8_t *p) {
  block b = {load_i64(p), (int32_t)load_u32(p + 8), load_i64(p + 16)};
  return b;
}

static int64_t block_end(block b) { return b.offset + b.metadata + b.body; }

/* The footer's list of blocks in field `slot` of the Footer table: where
 * its count is (NULL when the file has no such list). */
static uint8_t *block_list(uint8_t *file, size_t size, int slot) {
  uint8_t *footer = file + size - 10 - load_u32(file + size - 10);
  uint8_t *root = footer + load_u32(footer);
  uint8_t *vtable = root - (int32_t)load_u32(root);
  uint16_t vt_size = (uint16_t)(vtable[0] | vtable[1] << 8);
  if (4 + 2 * slot + 2 > vt_size) return NULL;
  uint16_t field = (uint16_t)(vtable[4 + 2 * slot] | vtable[5 + 2 * slot] << 8);
  if (field == 0) return NULL;
  return root + field + load_u32(root + field);
}

/* Where the end-of-stream marker begins: 8 bytes before the footer. */
static int64_t marker_at(const uint8_t *file, size_t size) {
  return (int64_t)(size - 10 - load_u32(file + size - 10) - 8);
}

/* ---- reading the three ways ------------------------------------------------ */

/* Reads every batch of src (taken over); the status, the message in err. */
static xchg_status read_all(xchg_source *src, int64_t *batches, xchg_error *err) {
  xchg_ipc_reader *r = NULL;
  *batches = 0;
  xchg_status st = src ? xchg_ipc_reader_open(src, NULL, &r, err) : XCHG_ENOMEM;
  while (st == XCHG_OK) {
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, err);
    if (st != XCHG_OK || a.release == NULL) break;
    a.release(&a);
    ++*batches;
  }
  xchg_ipc_reader_free(r);
  return st;
}

/* Read by footer (memory) and in order (an unseekable source), the file
 * must be XCHG_EFORMAT with the message each way names. */
static void expect_both(const tu_bytes *file, const char *what, const char *by_footer,
                        const char *in_order) {
  xchg_error err = {{0}};
  int64_t n;
  xchg_status st = read_all(tu_memory_source(file->data, file->size), &n, &err);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, by_footer),
           "%s, by footer: status %d after %lld batches: \"%s\", expected \"%s\"", what, st,
           (long long)n, err.message, by_footer);
  st = read_all(tu_unseekable_source(file->data, file->size, 7), &n, &err);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, in_order),
           "%s, in order: status %d after %lld batches: \"%s\", expected \"%s\"", what, st,
           (long long)n, err.message, in_order);
}

typedef struct gold {
  tu_bytes file;
  uint8_t *batches; /* the record batch list's count */
  block b0, b1;     /* its first two blocks */
  int64_t marker;
} gold;

static int gold_open(gold *g, const char *name) {
  char path[2048];
  g->file = tu_read_bytes(tu_testdata_path(path, sizeof path, "arrow-gold/%s", name));
  if (!TU_CHECK(g->file.data != NULL, "cannot read %s", path)) return 0;
  g->batches = block_list(g->file.data, g->file.size, FOOTER_BATCHES);
  if (!TU_CHECK(g->batches && load_u32(g->batches) >= 2, "%s: fewer than 2 batches", name)) {
    free(g->file.data);
    return 0;
  }
  g->b0 = block_at(g->batches + 4);
  g->b1 = block_at(g->batches + 4 + BLOCK_SIZE);
  g->marker = marker_at(g->file.data, g->file.size);
  return 1;
}

static tu_bytes copy(const tu_bytes *b) {
  tu_bytes c = {0};
  tu_bytes_append(&c, b->data, b->size);
  return c;
}

/* The copy's record batch list, as in the gold file. */
static uint8_t *batches_of(tu_bytes *c, const gold *g) {
  return c->data + (g->batches - g->file.data);
}

/* ---- cases ------------------------------------------------------------------- */

#define PRIMITIVE "1.0.0-littleendian/generated_primitive.arrow_file"

/* The last record batch left out of the footer (2 batches: the second). */
static void batch_dropped(void) {
  gold g;
  if (!gold_open(&g, PRIMITIVE)) return;
  uint32_t n = load_u32(g.batches);
  tu_bytes c = copy(&g.file);
  store_u32(batches_of(&c, &g), n - 1);
  char by_footer[256], in_order[256];
  snprintf(by_footer, sizeof by_footer,
           "footer: record batch block %u ends at byte %lld, but the end-of-stream marker is at "
           "byte %lld",
           n - 2, (long long)block_end(block_at(g.batches + 4 + BLOCK_SIZE * (n - 2))),
           (long long)g.marker);
  snprintf(in_order, sizeof in_order,
           "footer: it lists %u record batch%s, but the file has %u: record batch %u at byte %lld "
           "is not listed",
           n - 1, n - 1 == 1 ? "" : "es", n, n - 1,
           (long long)block_at(g.batches + 4 + BLOCK_SIZE * (n - 1)).offset);
  expect_both(&c, "last batch block dropped", by_footer, in_order);
  free(c.data);
  free(g.file.data);
}

/* The first two record batch blocks swapped. */
static void batches_swapped(void) {
  gold g;
  if (!gold_open(&g, PRIMITIVE)) return;
  tu_bytes c = copy(&g.file);
  uint8_t *list = batches_of(&c, &g);
  memcpy(list + 4, g.batches + 4 + BLOCK_SIZE, BLOCK_SIZE);
  memcpy(list + 4 + BLOCK_SIZE, g.batches + 4, BLOCK_SIZE);
  char by_footer[256], in_order[256];
  snprintf(by_footer, sizeof by_footer,
           "footer: record batch block 1 at byte %lld is not after record batch block 0 at byte "
           "%lld",
           (long long)g.b0.offset, (long long)g.b1.offset);
  snprintf(in_order, sizeof in_order,
           "footer: record batch block 0 gives byte %lld (metadata %lld, body %lld bytes), but "
           "the file's record batch 0 is at byte %lld (metadata %lld, body %lld bytes)",
           (long long)g.b1.offset, (long long)g.b1.metadata, (long long)g.b1.body,
           (long long)g.b0.offset, (long long)g.b0.metadata, (long long)g.b0.body);
  expect_both(&c, "first two batch blocks swapped", by_footer, in_order);
  free(c.data);
  free(g.file.data);
}

/* Record batch block 1 pointing at batch 0, which is then listed twice. */
static void batch_twice(void) {
  gold g;
  if (!gold_open(&g, PRIMITIVE)) return;
  tu_bytes c = copy(&g.file);
  memcpy(batches_of(&c, &g) + 4 + BLOCK_SIZE, g.batches + 4, BLOCK_SIZE);
  char by_footer[256], in_order[256];
  snprintf(by_footer, sizeof by_footer,
           "footer: record batch block 1 at byte %lld is not after record batch block 0 at byte "
           "%lld",
           (long long)g.b0.offset, (long long)g.b0.offset);
  snprintf(in_order, sizeof in_order,
           "footer: record batch block 1 gives byte %lld (metadata %lld, body %lld bytes), but "
           "the file's record batch 1 is at byte %lld",
           (long long)g.b0.offset, (long long)g.b0.metadata, (long long)g.b0.body,
           (long long)g.b1.offset);
  expect_both(&c, "batch block 1 = block 0", by_footer, in_order);
  free(c.data);
  free(g.file.data);
}

/* Block 0 giving 8 bytes of its metadata to its body: the blocks still
 * cover the file, so it opens and batch 1 reads by footer, but batch 0
 * does not. */
static void lengths_moved(void) {
  gold g;
  if (!gold_open(&g, PRIMITIVE)) return;
  tu_bytes c = copy(&g.file);
  uint8_t *b0 = batches_of(&c, &g) + 4;
  store_u32(b0 + 8, (uint32_t)(g.b0.metadata - 8));
  store_i64(b0 + 16, g.b0.body + 8);
  char by_footer[256], in_order[256];
  snprintf(by_footer, sizeof by_footer,
           "footer: record batch block 0 at byte %lld gives metadata %lld and body %lld bytes, "
           "but the message there has metadata %lld and body %lld bytes",
           (long long)g.b0.offset, (long long)g.b0.metadata - 8, (long long)g.b0.body + 8,
           (long long)g.b0.metadata, (long long)g.b0.body);
  snprintf(in_order, sizeof in_order,
           "footer: record batch block 0 gives byte %lld (metadata %lld, body %lld bytes), but "
           "the file's record batch 0 is at byte %lld (metadata %lld, body %lld bytes)",
           (long long)g.b0.offset, (long long)g.b0.metadata - 8, (long long)g.b0.body + 8,
           (long long)g.b0.offset, (long long)g.b0.metadata, (long long)g.b0.body);
  expect_both(&c, "block 0's lengths moved", by_footer, in_order);

  /* Random access: the batch whose block is right reads. */
  xchg_error err = {{0}};
  xchg_ipc_reader *r = NULL;
  if (TU_OK(xchg_ipc_reader_open_memory(c.data, c.size, NULL, NULL, NULL, &r, &err), err)) {
    struct ArrowArray a;
    TU_CHECK(xchg_ipc_reader_num_batches(r) == load_u32(g.batches));
    if (TU_OK(xchg_ipc_reader_read_batch(r, 1, &a, &err), err)) a.release(&a);
    xchg_status st = xchg_ipc_reader_read_batch(r, 0, &a, &err);
    TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, by_footer), "read_batch 0: %d: %s", st,
             err.message);
    if (st == XCHG_OK) a.release(&a);
  }
  xchg_ipc_reader_free(r);
  free(c.data);
  free(g.file.data);
}

/* The last dictionary block left out of the footer of a file with
 * dictionaries. */
static void dictionary_dropped(void) {
  char path[2048];
  tu_bytes file = tu_read_bytes(tu_testdata_path(
      path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_dictionary.arrow_file"));
  if (!TU_CHECK(file.data != NULL, "cannot read %s", path)) return;
  uint8_t *dicts = block_list(file.data, file.size, FOOTER_DICTIONARIES);
  uint32_t n = dicts ? load_u32(dicts) : 0;
  if (!TU_CHECK(n >= 2, "%s: %u dictionary blocks", path, n)) {
    free(file.data);
    return;
  }
  block last = block_at(dicts + 4 + BLOCK_SIZE * (n - 1));
  store_u32(dicts, n - 1);
  char by_footer[256], in_order[256];
  snprintf(by_footer, sizeof by_footer,
           "but the message before it ends at byte %lld (a message the footer does not list?)",
           (long long)last.offset);
  snprintf(in_order, sizeof in_order,
           "footer: it lists %u dictionaries, but the file has %u: dictionary %u at byte %lld is "
           "not listed",
           n - 1, n, n - 1, (long long)last.offset);
  expect_both(&file, "last dictionary block dropped", by_footer, in_order);
  free(file.data);
}

/* The gold files as they are read every way (the checks above are not
 * tripped by a file whose footer is right). */
static void gold_unchanged(void) {
  static const char *names[] = {PRIMITIVE, "1.0.0-littleendian/generated_dictionary.arrow_file",
                                "4.0.0-shareddict/generated_shared_dict.arrow_file",
                                "2.0.0-compression/generated_zstd.arrow_file"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[2048];
    tu_bytes file = tu_read_bytes(tu_testdata_path(path, sizeof path, "arrow-gold/%s", names[i]));
    if (!TU_CHECK(file.data != NULL, "cannot read %s", path)) continue;
    xchg_error err = {{0}};
    int64_t by_footer, in_order;
    TU_OK(read_all(tu_memory_source(file.data, file.size), &by_footer, &err), err);
    TU_OK(read_all(tu_unseekable_source(file.data, file.size, 3), &in_order, &err), err);
    TU_CHECK(by_footer == in_order && by_footer > 0, "%s: %lld batches by footer, %lld in order",
             names[i], (long long)by_footer, (long long)in_order);
    free(file.data);
  }
}

/* `xchg cat` of the file, piped, and `xchg inspect` piped: exit 1 and the
 * footer named, never rows and 0. */
static void cli(void) {
  gold g;
  if (!gold_open(&g, PRIMITIVE)) return;
  tu_bytes c = copy(&g.file);
  store_u32(batches_of(&c, &g), load_u32(g.batches) - 1);
  char path[] = "/tmp/xchg_footer_blocks_XXXXXX";
  int fd = mkstemp(path);
  if (TU_CHECK(fd >= 0, "mkstemp") && TU_CHECK(tu_write_file(path, c.data, c.size) == 0)) {
    static const char *const runs[][2] = {
        {"", "cat --format json '%s'"}, {"%s", "cat --format json -"}, {"%s", "inspect -"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
      char args[512];
      snprintf(args, sizeof args, runs[i][1], path);
      tu_cli_result res;
      int ran = runs[i][0][0] ? tu_cli_run_piped(tu_cli_path(), path, args, &res)
                              : tu_cli_run(tu_cli_path(), args, &res);
      if (!TU_CHECK(ran, "xchg %s did not run", args)) continue;
      TU_CHECK(res.exit_code == 1 && strstr(res.err, "footer: ") && strstr(res.err, "record batch"),
               "xchg %s%s of a footer without its last batch: exit %d: %s", args,
               runs[i][0][0] ? " (piped)" : "", res.exit_code, res.err);
      tu_cli_result_free(&res);
    }
  }
  if (fd >= 0) {
    close(fd);
    unlink(path);
  }
  free(c.data);
  free(g.file.data);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"batch_dropped", batch_dropped},
      {"batches_swapped", batches_swapped},
      {"batch_twice", batch_twice},
      {"lengths_moved", lengths_moved},
      {"dictionary_dropped", dictionary_dropped},
      {"gold_unchanged", gold_unchanged},
      {"cli", cli},
  };
  return TU_MAIN(argc, argv, "footer_blocks", cases);
}
