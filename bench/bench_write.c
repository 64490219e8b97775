/* bench_write.c — `xchg bench write`: the Arrow IPC writer's speed.
 *
 * Writes the `cache` shape of SHAPES.md (generated once, before timing)
 * as an IPC stream into memory with each body codec (none, LZ4_FRAME,
 * ZSTD), on one thread and with the buffers of each batch compressed on a
 * pool of all cores.  Each figure is the median of the runs (default 5)
 * after one warm-up, with min and max, in MB/s of input (the raw bytes of
 * the batches' buffers); beside it, measured in the same run, a memcpy of
 * the same buffers into one preallocated destination (the limit of any
 * writer that copies its input once), and the ratio of the two.  A second
 * baseline copies into freshly allocated memory, as a writer to memory
 * must: most of the gap between the writer and the first baseline is the
 * kernel providing new pages, which this one pays too. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/shapes.h"
#include "bench.h"
#include "cli/options.h"
#include "stats.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"

typedef struct input {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  int64_t n;
  int64_t raw_bytes;
} input;

typedef struct result {
  const char *codec;
  int threads;
  bench_timing t;
  double mb_s, memcpy_mb_s, fresh_mb_s;
  int64_t output_bytes;
} result;

/* Copies every buffer of every batch into dst (the memcpy baseline); the
 * sizes follow the cache shape's columns: c0 int64, c1 int32, c2 float64,
 * c3 utf8, c4 int64, c5 bool. */
static int64_t copy_all(const input *in, uint8_t *dst) {
  int64_t at = 0;
  for (int64_t b = 0; b < in->n; b++) {
    const struct ArrowArray *batch = &in->batches[b];
    for (int64_t c = 0; c < batch->n_children; c++) {
      const struct ArrowArray *col = batch->children[c];
      int64_t n = col->length;
      int64_t sizes[3] = {col->buffers[0] ? (n + 7) / 8 : 0, 0, 0};
      if (col->n_buffers == 3) {
        int32_t end;
        memcpy(&end, (const int32_t *)col->buffers[1] + n, 4);
        sizes[1] = 4 * (n + 1);
        sizes[2] = end;
      } else {
        static const int widths[] = {8, 4, 8, 0, 8, 0};
        sizes[1] = c == 5 ? (n + 7) / 8 : widths[c] * n;
      }
      for (int k = 0; k < col->n_buffers; k++) {
        if (!sizes[k]) continue;
        memcpy(dst + at, col->buffers[k], (size_t)sizes[k]);
        at += sizes[k];
      }
    }
  }
  return at;
}

static int write_once(const input *in, xchg_block_codec codec, xchg_pool *pool,
                      int64_t *out_bytes) {
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.codec = codec;
  o.level = codec == XCHG_BLOCK_ZSTD ? 1 : 0;
  o.pool = pool;
  xchg_ipc_writer *w;
  xchg_error err;
  xchg_status st = xchg_ipc_writer_open_memory(&in->schema, &o, &w, &err);
  for (int64_t i = 0; i < in->n && st == XCHG_OK; i++)
    st = xchg_ipc_writer_write(w, &in->batches[i], &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_buf *buf = st == XCHG_OK ? xchg_ipc_writer_take_memory(w) : NULL;
  if (st == XCHG_OK) xchg_ipc_writer_free(w);
  if (!buf) {
    fprintf(stderr, "xchg bench write: %s\n", st == XCHG_OK ? "out of memory" : err.message);
    return -1;
  }
  *out_bytes = (int64_t)xchg_buf_size(buf);
  xchg_buf_unref(buf);
  return 0;
}

/* memcpy into memory allocated (and freed) for the occasion. */
static void copy_fresh(const input *in) {
  uint8_t *dst = malloc((size_t)in->raw_bytes);
  if (!dst) return;
  copy_all(in, dst);
  free(dst);
}

/* Times `runs` writes after a warm-up, interleaved with memcpy runs so that
 * both see the same machine load. */
static int measure(const input *in, xchg_block_codec codec, xchg_pool *pool, int threads, int runs,
                   uint8_t *scratch, result *r) {
  int64_t *ns = calloc((size_t)runs, sizeof *ns), *copy_ns = calloc((size_t)runs, sizeof *copy_ns);
  int64_t *fresh_ns = calloc((size_t)runs, sizeof *fresh_ns);
  if (!ns || !copy_ns || !fresh_ns) {
    free(ns);
    free(copy_ns);
    free(fresh_ns);
    return -1;
  }
  int rc = write_once(in, codec, pool, &r->output_bytes);
  copy_all(in, scratch);
  for (int i = 0; i < runs && rc == 0; i++) {
    int64_t t0 = bench_now_ns();
    rc = write_once(in, codec, pool, &r->output_bytes);
    int64_t t1 = bench_now_ns();
    copy_all(in, scratch);
    int64_t t2 = bench_now_ns();
    copy_fresh(in);
    int64_t t3 = bench_now_ns();
    ns[i] = t1 - t0;
    copy_ns[i] = t2 - t1;
    fresh_ns[i] = t3 - t2;
  }
  if (rc == 0) {
    r->codec = xchg_block_codec_name(codec);
    r->threads = threads;
    r->t = bench_summarize(ns, runs);
    bench_timing c = bench_summarize(copy_ns, runs), f = bench_summarize(fresh_ns, runs);
    r->mb_s = (double)in->raw_bytes / 1e6 / (r->t.median_ms / 1e3);
    r->memcpy_mb_s = (double)in->raw_bytes / 1e6 / (c.median_ms / 1e3);
    r->fresh_mb_s = (double)in->raw_bytes / 1e6 / (f.median_ms / 1e3);
  }
  free(ns);
  free(copy_ns);
  free(fresh_ns);
  return rc;
}

static void print_json(const input *in, const result *rs, int n) {
  printf(
      "{\"benchmark\": \"write\", \"machine\": \"%s\", \"shape\": \"cache\", \"rows\": %lld, "
      "\"input_bytes\": %lld, \"results\": [",
      bench_machine(),
      (long long)(in->n ? (in->n - 1) * SHAPE_CACHE_BATCH_ROWS + in->batches[in->n - 1].length : 0),
      (long long)in->raw_bytes);
  for (int i = 0; i < n; i++)
    printf(
        "%s\n  {\"codec\": \"%s\", \"threads\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, "
        "\"max_ms\": %.3f, \"mb_per_s\": %.1f, \"memcpy_mb_per_s\": %.1f, \"ratio_vs_memcpy\": %.4f, "
        "\"memcpy_fresh_mb_per_s\": %.1f, \"ratio_vs_memcpy_fresh\": %.4f, \"output_bytes\": %lld}",
        i ? "," : "", rs[i].codec, rs[i].threads, rs[i].t.median_ms, rs[i].t.min_ms, rs[i].t.max_ms,
        rs[i].mb_s, rs[i].memcpy_mb_s, rs[i].mb_s / rs[i].memcpy_mb_s, rs[i].fresh_mb_s,
        rs[i].mb_s / rs[i].fresh_mb_s, (long long)rs[i].output_bytes);
  printf("\n]}\n");
}

int xchg_bench_write(int argc, char **argv) {
  int64_t rows = 1000000, v = 0;
  int runs = BENCH_RUNS, json = 0, opt;
  bool ok = true;
  static const struct option longs[] = {{"rows", 1, 0, 'r'},
                                        {"runs", 1, 0, 'k'},
                                        {"json", 0, 0, 'j'},
                                        {"help", 0, 0, 'h'},
                                        {0, 0, 0, 0}};
  xc_options_begin();
  while (ok && (opt = xc_getopt(argc, argv, ":h", longs)) != -1) {
    switch (opt) {
      case 'r':
        ok = xc_int_option("bench write", "--rows", optarg, 1, BENCH_MAX_ROWS, &rows);
        break;
      case 'k':
        ok = xc_int_option("bench write", "--runs", optarg, 1, BENCH_MAX_RUNS, &v), runs = (int)v;
        break;
      case 'j': json = 1; break;
      case 'h':
        printf(
            "usage: xchg bench write [--rows N] [--runs K] [--json]\n\n"
            "Writes the cache shape (default 1,000,000 rows) as an Arrow IPC stream into\n"
            "memory with each codec, on 1 thread and on all cores; MB/s of input, median\n"
            "of K runs (default 5) after a warm-up, with min-max and the ratio to memcpy.\n\n"
            "columns:\n"
            "  codec        body compression (none, lz4, zstd)\n"
            "  threads      1, or the buffers of each batch compressed on a pool\n"
            "  median ms    one write of the whole shape, median (min-max beside it)\n"
            "  MB/s         input bytes (the batches' raw buffers) / median\n"
            "  memcpy MB/s  a memcpy of the same buffers into one preallocated\n"
            "                 destination, in the same run: the limit of a writer that\n"
            "                 copies its input once\n"
            "  ratio        MB/s / memcpy MB/s (1.0: at that limit)\n"
            "  fresh MB/s   the same memcpy into freshly allocated memory, as a writer\n"
            "                 to memory must: it pays the kernel's new pages too\n"
            "  ratio        MB/s / fresh MB/s\n"
            "  output MB    the size of the IPC stream written\n");
        return 0;
      default: return xc_option_error("bench write", argv, longs, opt);
    }
  }
  if (!ok) return 2;
  if (optind < argc) return xc_usage_error("bench write", "unexpected argument '%s'", argv[optind]);
  input in = {0};
  shape_cache_schema(&in.schema);
  in.n = shape_cache_batches(rows);
  in.batches = calloc((size_t)in.n, sizeof *in.batches);
  shape_sums sums = {{0}, {0}};
  for (int64_t i = 0; i < in.n; i++) shape_cache_batch(1, rows, i, &in.batches[i], &sums);
  uint8_t *scratch = malloc((size_t)rows * 64 + 4096);
  if (!in.batches || !scratch) {
    fprintf(stderr, "xchg bench write: out of memory\n");
    return 1;
  }
  in.raw_bytes = copy_all(&in, scratch);
  int cores = bench_cores();
  xchg_pool *pool = NULL;
  if (cores > 1 && xchg_pool_create(cores, &pool, NULL) != XCHG_OK)
    pool = NULL; /* run on one thread */
  static const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};
  result rs[6];
  int n = 0, rc = 0;
  if (!json)
    printf(
        "machine: %s\nwriting the cache shape, %lld rows, %.1f MB of buffers, median of %d runs after 1 warm-up\n"
        "%-6s %7s %10s %21s %8s %12s %7s %11s %7s %10s\n",
        bench_machine(), (long long)rows, (double)in.raw_bytes / 1e6, runs, "codec", "threads",
        "median ms", "(min-max)", "MB/s", "memcpy MB/s", "ratio", "fresh MB/s", "ratio",
        "output MB");
  for (int c = 0; c < 3 && rc == 0; c++) {
    for (int t = 0; t < 2 && rc == 0; t++) {
      if (t == 1 && !pool) continue;
      rc = measure(&in, codecs[c], t ? pool : NULL, t ? cores : 1, runs, scratch, &rs[n]);
      if (rc == 0 && !json)
        printf("%-6s %7d %10.1f %10.1f-%-10.1f %8.0f %12.0f %7.3f %11.0f %7.3f %10.1f\n",
               rs[n].codec, rs[n].threads, rs[n].t.median_ms, rs[n].t.min_ms, rs[n].t.max_ms,
               rs[n].mb_s, rs[n].memcpy_mb_s, rs[n].mb_s / rs[n].memcpy_mb_s, rs[n].fresh_mb_s,
               rs[n].mb_s / rs[n].fresh_mb_s, (double)rs[n].output_bytes / 1e6);
      if (rc == 0) n++;
    }
  }
  if (rc == 0 && json) print_json(&in, rs, n);
  for (int64_t i = 0; i < in.n; i++) in.batches[i].release(&in.batches[i]);
  free(in.batches);
  free(scratch);
  in.schema.release(&in.schema);
  if (pool) xchg_pool_free(pool);
  return rc == 0 ? 0 : 1;
}
