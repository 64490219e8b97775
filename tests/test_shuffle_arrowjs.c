/* tests/test_shuffle_arrowjs.c — the shuffle reader (xchg/shuffle.h) on blocks
 * that another implementation wrote: Apache Arrow JS (apache-arrow 21.2.0,
 * tests/interop/arrowjs/shuffle.mjs), the producer and the judge.
 *
 *  1. shuffle.mjs writes, from a fixed seed, cases of 12 blocks each (IPC
 *     streams of 0, 1, 7, 63, 64, 65, 1000... rows; several record batches,
 *     empty ones and bare ones among them; batches sliced, so that
 *     apache-arrow writes the buffers of a slice; body compression none,
 *     LZ4_FRAME or ZSTD; every type apache-arrow writes, all-null and
 *     no-null columns, nested nulls, dictionaries kept or replaced), one
 *     after another and each in a Comet block, and the rows apache-arrow
 *     reads back from each stream;
 *  2. the shuffle reader reads each case in several ways (IPC and Comet
 *     framing; memory, and a callback source cut into odd chunks; target
 *     rows of 1, 3, 100 and 8192, a target of one byte (every block passed
 *     through), a target of bytes with a pool; a projection naming a
 *     column twice), and `xchg convert --batch-rows 3` reads the Comet
 *     blocks (of a case with columns); every batch is written as an IPC
 *     stream;
 *  3. shuffle.mjs reads every output with apache-arrow: the rows must be
 *     the blocks' rows, value by value and bit for bit, in order, no batch
 *     empty, every batch but the last of the target's rows at least.
 *
 * Node and the npm package are required: without them the test FAILS,
 * saying to run scripts/setup.sh. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/interop.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/pool.h"
#include "xchg/shuffle.h"
#include "xchg/writer.h"

#define CASES 9

static char dir[] = "/tmp/xchg-shufjs-XXXXXX";

/* A case as shuffle.mjs printed it. */
typedef struct js_case {
  char name[64];
  long long fields, rows, blocks;
  int dictionaries; /* a changed dictionary may cut a batch short */
} js_case;

/* One way of reading a case. */
typedef struct reading {
  const char *name;
  xchg_shuffle_framing framing;
  int callback;        /* a source read in odd chunks, not memory */
  int64_t rows, bytes; /* the targets (0: the default) */
  int project;         /* columns: the last, the first, the last again */
  int threads;         /* a pool of this many threads (0: none) */
} reading;

static const reading readings[] = {
    {"ipc-rows1", XCHG_SHUFFLE_FRAMING_IPC, 0, 1, 0, 0, 0},
    {"comet-rows3-chunks", XCHG_SHUFFLE_FRAMING_COMET, 1, 3, 0, 0, 0},
    {"ipc-rows100-chunks", XCHG_SHUFFLE_FRAMING_IPC, 1, 100, 0, 0, 0},
    {"comet-rows8192", XCHG_SHUFFLE_FRAMING_COMET, 0, 8192, 0, 0, 0},
    {"ipc-bytes1", XCHG_SHUFFLE_FRAMING_IPC, 0, 1 << 30, 1, 0, 0},
    {"comet-bytes3000-pool", XCHG_SHUFFLE_FRAMING_COMET, 0, 1 << 30, 3000, 0, 2},
    {"auto-rows64-columns", XCHG_SHUFFLE_FRAMING_AUTO, 1, 64, 0, 1, 0},
};

/* Reads path (a case's blocks) the way r says, writing every batch to out
 * as an IPC stream. */
static xchg_status read_blocks(const char *path, const js_case *c, const reading *r,
                               const char *out, xchg_error *err) {
  xchg_shuffle_reader_options opts;
  xchg_shuffle_reader_options_init(&opts);
  opts.framing = r->framing;
  if (r->rows) opts.target_rows = r->rows;
  if (r->bytes) opts.target_bytes = r->bytes;
  int64_t columns[3] = {c->fields - 1, 0, c->fields - 1};
  if (r->project) {
    opts.columns = columns;
    opts.n_columns = 3;
  }
  xchg_pool *pool = NULL;
  xchg_status st = r->threads ? xchg_pool_create(r->threads, &pool, err) : XCHG_OK;
  opts.read.pool = pool;
  size_t size = 0;
  uint8_t *data = tu_read_file(path, &size);
  xchg_shuffle_reader *reader = NULL;
  if (st == XCHG_OK && !data) st = xchg_errorf(err, XCHG_EIO, "%s: cannot read", path);
  if (st == XCHG_OK) st = xchg_shuffle_reader_open(&opts, &reader, err);
  xchg_source *src = NULL;
  if (st == XCHG_OK) {
    src = r->callback ? tu_unseekable_source(data, size, 7) : tu_memory_source(data, size);
    st = xchg_shuffle_reader_add_source(reader, src, err);
  }
  struct ArrowSchema schema = {0};
  if (st == XCHG_OK) st = xchg_shuffle_reader_schema(reader, &schema, err);
  int fd = st == XCHG_OK ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  if (st == XCHG_OK && fd < 0) st = xchg_errorf(err, XCHG_EIO, "%s: cannot create", out);
  xchg_ipc_writer *w = NULL;
  if (st == XCHG_OK) st = xchg_ipc_writer_open_fd(&schema, NULL, fd, &w, err);
  if (schema.release) schema.release(&schema);
  while (st == XCHG_OK) {
    struct ArrowArray batch;
    if ((st = xchg_shuffle_reader_next(reader, &batch, err)) != XCHG_OK || !batch.release) break;
    st = xchg_ipc_writer_write(w, &batch, err);
    batch.release(&batch);
  }
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, err);
  xchg_ipc_writer_free(w);
  if (fd >= 0) close(fd);
  xchg_shuffle_reader_free(reader);
  xchg_pool_free(pool);
  free(data);
  return st;
}

static int read_cases(const char *list, js_case *cases) {
  FILE *f = fopen(list, "r");
  int n = 0;
  while (f && n < CASES + 1 &&
         fscanf(f, "%63s %lld %lld %lld %d", cases[n].name, &cases[n].fields, &cases[n].rows,
                &cases[n].blocks, &cases[n].dictionaries) == 5)
    n++;
  if (f) fclose(f);
  return n;
}

/* Every case read every way, then every output judged by apache-arrow. */
static void apache_arrow_blocks(void) {
  char msg[4096], path[4400], out[4400], list[4400], cases_txt[4400];
  if (!TU_CHECK(tu_interop_ready("arrowjs", "apache-arrow", msg, sizeof msg) == 0,
                "apache-arrow interop: %s", msg))
    return;
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", dir)) return;
  const char *js = tu_interop_dir("arrowjs");
  snprintf(cases_txt, sizeof cases_txt, "%s/cases.txt", dir);
  js_case cases[CASES + 1];
  int n = tu_run("cd '%s' && node shuffle.mjs '%s' > '%s'", js, dir, cases_txt) == 0
              ? read_cases(cases_txt, cases)
              : -1;
  TU_CHECK(n == CASES, "node shuffle.mjs %s gave %d cases, expected %d", dir, n, CASES);
  snprintf(list, sizeof list, "%s/outputs.txt", dir);
  FILE *outputs = fopen(list, "w");
  if (!TU_CHECK(outputs != NULL, "cannot create %s", list)) return;
  for (int i = 0; i < n; i++) {
    const js_case *c = &cases[i];
    for (size_t k = 0; k < sizeof readings / sizeof readings[0]; k++) {
      const reading *r = &readings[k];
      if (r->project && c->fields == 0) continue;
      snprintf(path, sizeof path, "%s/%s.%s", dir, c->name,
               r->framing == XCHG_SHUFFLE_FRAMING_IPC ? "ipc" : "comet");
      snprintf(out, sizeof out, "%s/%s.%s.arrow", dir, c->name, r->name);
      xchg_error err;
      if (!TU_OK(read_blocks(path, c, r, out, &err), err)) continue;
      /* the batches' rows: the target's at least, but where a changed
       * dictionary cut them, or a target of bytes did */
      long long least = c->dictionaries || r->bytes ? 0 : r->rows;
      if (r->project)
        fprintf(outputs, "%s %s %lld %lld,0\n", c->name, out, least, c->fields - 1);
      else
        fprintf(outputs, "%s %s %lld -\n", c->name, out, least);
    }
    /* Comet blocks that state no field count go block by block, not
     * through the shuffle reader (src/cli/input_blocks.c): not those */
    if (c->fields == 0) continue;
    snprintf(out, sizeof out, "%s/%s.convert.arrow", dir, c->name);
    TU_CHECK(tu_run("'%s' convert '%s/%s.comet' '%s' --batch-rows 3", tu_cli_path(), dir, c->name,
                    out) == 0,
             "xchg convert %s/%s.comet --batch-rows 3", dir, c->name);
    fprintf(outputs, "%s %s %d -\n", c->name, out, c->dictionaries ? 0 : 3);
  }
  fclose(outputs);
  TU_CHECK(tu_run("cd '%s' && node shuffle.mjs --check '%s'", js, list) == 0,
           "apache-arrow finds outputs that differ from the blocks (above; files in %s)", dir);
  if (tu_failed_count() == 0) tu_run("rm -rf '%s'", dir);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"apache_arrow_blocks", apache_arrow_blocks}};
  return TU_MAIN(argc, argv, "shuffle_arrowjs", cases);
}
