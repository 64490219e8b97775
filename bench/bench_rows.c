/* bench_rows.c — `xchg bench rows`: shape 3 of shared/bench/SHAPES.md.
 *
 * A sort-shuffle reader pulls length-prefixed rows (u32 LE length 100 and a
 * 100-byte payload) out of a compressed stream (LZ4 frames, then zstd
 * frames, of 64 KiB of rows each), two reads per row.  In one run, for each
 * codec, it times the same loop four ways:
 *   metrics_on     xchg_istream_read with metrics on (the clock read only
 *                  around refills);
 *   metrics_off    the same with metrics off;
 *   timer_per_read metrics off, and a clock read before and after every read
 *                  (four per row: the pattern a Gluten change found costing
 *                  8% of executor CPU);
 *   memcpy         a bare memcpy of the same bytes, row by row (the limit).
 * Besides, `decompress_only` walks the windows without reading rows, so that
 * the cost of the reads themselves (total minus decompression) shows;
 * `codec_limit` runs the bare library over the same frames (the limit for
 * decompress_only); `row_reader` reads the rows zero-copy with
 * xchg_row_reader_next.
 *
 * Each figure is the median of 5 runs after 1 warm-up, with min and max.
 * The rows are those of `xchg gen rows` (src/gen/shape_rows.h) from a fixed
 * seed; every timed loop checksums the rows it read, and the sum is checked
 * against the one computed from the generator's rows. */
#include <lz4frame.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gen/shape_rows.h"
#include "bench.h"
#include "cli/options.h"
#include "stats.h"
#include "xchg/rows.h"
#include "xchg/stream.h"

#define ROW_PAYLOAD SHAPE_ROWS_PAYLOAD
#define ROW_SIZE (4 + ROW_PAYLOAD)
#define CHUNK SHAPE_ROWS_CHUNK
#define ROWS_SEED 42
#define RUNS BENCH_RUNS

typedef struct rows_input {
  uint8_t *data; /* the compressed stream */
  size_t size, cap;
  uint64_t raw_size;
  uint64_t checksum; /* what every loop must find */
  int64_t rows;
} rows_input;

/* What each loop does with a row: loads its first and last 8 bytes, so
 * that no copy can be skipped and the checksum proves the bytes right. */
static inline uint64_t sum_bytes(const uint8_t *p, size_t n) {
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    memcpy(&a, p, 8);
    memcpy(&b, p + n - 8, 8);
  }
  return a ^ (b + n);
}

/* Appends a frame of the row stream to the input. */
static xchg_status append_frame(void *ctx, const void *data, size_t n, int64_t chunk,
                                int64_t chunks, xchg_error *err) {
  rows_input *in = ctx;
  if (in->size + n > in->cap) {
    size_t cap = (in->size + n) * 2;
    uint8_t *p = realloc(in->data, cap);
    if (p == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    in->data = p;
    in->cap = cap;
  }
  memcpy(in->data + in->size, data, n);
  in->size += n;
  return XCHG_OK;
}

/* The rows of shape `rows`, made and compressed by the generator `xchg gen
 * rows` uses, and the checksum every loop must find. */
static int generate(int64_t nrows, xchg_stream_codec codec, rows_input *in) {
  memset(in, 0, sizeof *in);
  xchg_error err;
  if (shape_rows_encode(ROWS_SEED, nrows, codec, 0, append_frame, in, &err) != XCHG_OK) {
    fprintf(stderr, "xchg bench rows: %s\n", err.message);
    return -1;
  }
  uint8_t row[ROW_SIZE];
  for (int64_t r = 0; r < nrows; r++) {
    shape_rows_fill(ROWS_SEED, nrows, (uint64_t)r * ROW_SIZE, row, ROW_SIZE);
    in->checksum += sum_bytes(row + 4, ROW_PAYLOAD) + ROW_PAYLOAD;
  }
  in->raw_size = shape_rows_bytes(nrows);
  in->rows = nrows;
  return 0;
}

static xchg_istream *open_input(const rows_input *in, xchg_stream_codec codec, int metrics) {
  xchg_istream_options o;
  xchg_istream_options_init(&o);
  o.metrics = metrics;
  xchg_istream *s = NULL;
  xchg_error err;
  xchg_source *src;
  xchg_status st = xchg_source_from_memory(in->data, in->size, NULL, NULL, &src, &err);
  if (st == XCHG_OK) st = xchg_istream_open(src, codec, &o, &s, &err);
  if (st != XCHG_OK) {
    fprintf(stderr, "xchg bench rows: %s\n", err.message);
    exit(1);
  }
  return s;
}

typedef enum loop_kind {
  LOOP_METRICS_ON,
  LOOP_METRICS_OFF,
  LOOP_TIMER_PER_READ,
  LOOP_MEMCPY,
  LOOP_DECOMPRESS_ONLY,
  LOOP_ROW_READER,
  LOOP_CODEC_LIMIT,
  LOOP_KINDS
} loop_kind;

static const char *const loop_names[] = {"metrics_on", "metrics_off",     "timer_per_read",
                                         "memcpy",     "decompress_only", "row_reader",
                                         "codec_limit"};

/* Two reads per row, as a shuffle reader does them; returns the checksum. */
static uint64_t read_rows(xchg_istream *s, int timer_per_read, int64_t *timed_ns) {
  uint8_t row[1 << 16];
  uint64_t sum = 0;
  size_t got;
  for (;;) {
    uint32_t len = 0;
    int64_t t0 = timer_per_read ? bench_now_ns() : 0;
    xchg_istream_read(s, &len, 4, &got, NULL);
    if (timer_per_read) *timed_ns += bench_now_ns() - t0;
    if (got < 4) break;
    if (len > sizeof row) return 0;
    t0 = timer_per_read ? bench_now_ns() : 0;
    xchg_istream_read(s, row, len, &got, NULL);
    if (timer_per_read) *timed_ns += bench_now_ns() - t0;
    sum += sum_bytes(row, got) + len;
  }
  return sum;
}

/* The limit: the same bytes memcpy'd row by row out of one hot 64 KiB
 * window (where a decompressed window would be). */
static uint64_t memcpy_rows(const uint8_t *window, int64_t rows) {
  uint8_t row[ROW_PAYLOAD];
  uint64_t sum = 0;
  size_t at = 0;
  for (int64_t i = 0; i < rows; i++) {
    uint32_t len;
    memcpy(&len, window + at, 4);
    memcpy(row, window + at + 4, len);
    sum += sum_bytes(row, len) + len;
    at += ROW_SIZE;
    if (at + ROW_SIZE > CHUNK) at = 0;
    __asm__ __volatile__("" : : "r"(row) : "memory"); /* keep the copy */
  }
  return sum;
}

/* The limit for decompress_only: the bare library decompressing the same
 * frames into one 64 KiB buffer, no stream around it.  Returns the bytes
 * produced. */
static uint64_t bare_codec(const rows_input *in, xchg_stream_codec codec) {
  static uint8_t out[CHUNK];
  uint64_t produced = 0;
  if (codec == XCHG_STREAM_LZ4_FRAME) {
    LZ4F_dctx *d = NULL;
    LZ4F_createDecompressionContext(&d, LZ4F_VERSION);
    for (size_t pos = 0; pos < in->size;) {
      size_t src_n = in->size - pos, dst_n = sizeof out;
      if (LZ4F_isError(LZ4F_decompress(d, out, &dst_n, in->data + pos, &src_n, NULL))) break;
      pos += src_n;
      produced += dst_n;
    }
    LZ4F_freeDecompressionContext(d);
  } else {
    ZSTD_DStream *d = ZSTD_createDStream();
    ZSTD_inBuffer src = {in->data, in->size, 0};
    while (src.pos < src.size) {
      ZSTD_outBuffer dst = {out, sizeof out, 0};
      if (ZSTD_isError(ZSTD_decompressStream(d, &dst, &src))) break;
      produced += dst.pos;
    }
    ZSTD_freeDStream(d);
  }
  return produced;
}

/* Runs one loop once; returns its time in ns, and its checksum in *sum. */
static int64_t run_loop(loop_kind kind, const rows_input *in, xchg_stream_codec codec,
                        const uint8_t *window, uint64_t *sum, int64_t *refills) {
  int64_t timed = 0, t0 = bench_now_ns();
  xchg_istream *s = NULL;
  switch (kind) {
    case LOOP_METRICS_ON:
    case LOOP_METRICS_OFF:
    case LOOP_TIMER_PER_READ:
      s = open_input(in, codec, kind == LOOP_METRICS_ON);
      *sum = read_rows(s, kind == LOOP_TIMER_PER_READ, &timed);
      break;
    case LOOP_MEMCPY: *sum = memcpy_rows(window, in->rows); break;
    case LOOP_DECOMPRESS_ONLY: {
      s = open_input(in, codec, 0);
      const void *p;
      size_t n;
      uint64_t bytes = 0;
      while (xchg_istream_next(s, &p, &n, NULL) == XCHG_OK && n > 0) bytes += n;
      *sum = bytes;
      break;
    }
    case LOOP_ROW_READER: {
      xchg_row_reader *r = NULL;
      if (xchg_row_reader_open(open_input(in, codec, 1), NULL, &r, NULL) != XCHG_OK) {
        *sum = UINT64_MAX; /* no generator sum: the warm-up check reports the failure */
        break;
      }
      const uint8_t *row;
      size_t len;
      uint64_t acc = 0;
      while (xchg_row_reader_next(r, &row, &len, NULL) == XCHG_OK && row != NULL)
        acc += sum_bytes(row, len) + len;
      *sum = acc;
      xchg_row_reader_free(r);
      break;
    }
    case LOOP_CODEC_LIMIT: *sum = bare_codec(in, codec); break;
    case LOOP_KINDS: break;
  }
  if (s != NULL) {
    xchg_istream_metrics m;
    xchg_istream_get_metrics(s, &m);
    *refills = m.refills;
  }
  xchg_istream_free(s);
  (void)timed;
  return bench_now_ns() - t0;
}

/* The cost of one clock read here, median of 5 batches of 100000. */
static double clock_cost_ns(void) {
  int64_t t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    int64_t t0 = bench_now_ns(), x = 0;
    for (int i = 0; i < 100000; i++) x += bench_now_ns();
    t[r] = bench_now_ns() - t0 + (x == 42);
  }
  return bench_summarize(t, RUNS).median_ms * 1e6 / 100000.0;
}

typedef struct figure {
  double median, min, max; /* ns per row */
} figure;

/* What the memcpy loop must sum: it cycles over one window's rows. */
static uint64_t memcpy_expected(const uint8_t *window, int64_t rows) {
  uint64_t per_window = 0, rows_per_window = CHUNK / ROW_SIZE;
  for (uint64_t i = 0; i < rows_per_window; i++)
    per_window += sum_bytes(window + i * ROW_SIZE + 4, ROW_PAYLOAD) + ROW_PAYLOAD;
  uint64_t sum = per_window * ((uint64_t)rows / rows_per_window);
  for (uint64_t i = 0; i < (uint64_t)rows % rows_per_window; i++)
    sum += sum_bytes(window + i * ROW_SIZE + 4, ROW_PAYLOAD) + ROW_PAYLOAD;
  return sum;
}

/* Runs every loop RUNS times after a warm-up, the loops taking turns so
 * that the machine's ups and downs spread over all of them alike. */
static int measure_all(const rows_input *in, xchg_stream_codec codec, const uint8_t *window,
                       figure *out, int64_t *refills, double *paired) {
  int64_t t[LOOP_KINDS][RUNS];
  uint64_t expect[LOOP_KINDS];
  for (int k = 0; k < LOOP_KINDS; k++) expect[k] = in->checksum;
  expect[LOOP_DECOMPRESS_ONLY] = in->raw_size;
  expect[LOOP_CODEC_LIMIT] = in->raw_size;
  expect[LOOP_MEMCPY] = memcpy_expected(window, in->rows);
  for (int r = -1; r < RUNS; r++) { /* run -1 is the warm-up */
    for (int i = 0; i < LOOP_KINDS; i++) {
      /* Metrics on and off swap places every round, so that neither is
       * always the one that runs first after another loop. */
      int k = r % 2 != 0 && i <= LOOP_METRICS_OFF ? LOOP_METRICS_OFF - i : i;
      uint64_t sum = 0;
      int64_t ns = run_loop((loop_kind)k, in, codec, window, &sum, refills);
      if (sum != expect[k]) {
        fprintf(stderr, "xchg bench rows: %s read checksum %llu, the generator wrote %llu\n",
                loop_names[k], (unsigned long long)sum, (unsigned long long)expect[k]);
        return -1;
      }
      if (r >= 0) t[k][r] = ns;
    }
  }
  /* metrics on / off, run by run: the two loops ran back to back, so the
   * ratio of each pair sees the same machine and is steadier than the
   * ratio of the medians.  (In parts per million, to reuse the summary.) */
  int64_t ppm[RUNS];
  for (int r = 0; r < RUNS; r++)
    ppm[r] =
        t[LOOP_METRICS_ON][r] * 1000000 / (t[LOOP_METRICS_OFF][r] ? t[LOOP_METRICS_OFF][r] : 1);
  *paired = bench_summarize(ppm, RUNS).median_ms; /* ppm / 1e6 */
  for (int k = 0; k < LOOP_KINDS; k++) {
    bench_timing b = bench_summarize(t[k], RUNS);
    double per_row = 1e6 / (double)in->rows; /* ms per run -> ns per row */
    out[k].median = b.median_ms * per_row;
    out[k].min = b.min_ms * per_row;
    out[k].max = b.max_ms * per_row;
  }
  return 0;
}

/* Prints s as a JSON string (the CPU model could hold a quote). */
static void print_json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') putchar('\\');
    if ((unsigned char)*s >= 0x20) putchar(*s);
  }
  putchar('"');
}

static void print_json_figures(const char *key, const figure *f, int field) {
  printf("\"%s\": {", key);
  static const loop_kind order[] = {LOOP_METRICS_ON, LOOP_METRICS_OFF,     LOOP_TIMER_PER_READ,
                                    LOOP_MEMCPY,     LOOP_DECOMPRESS_ONLY, LOOP_ROW_READER,
                                    LOOP_CODEC_LIMIT};
  for (int i = 0; i < LOOP_KINDS; i++) {
    const figure *x = &f[order[i]];
    double v = field == 0 ? x->median : field == 1 ? x->min : x->max;
    printf("%s\"%s\": %.3f", i ? ", " : "", loop_names[order[i]], v);
  }
  printf("}");
}

/* What reading costs beyond decompressing (total − decompress_only), and
 * what metrics cost (on − off): differences of medians, so "within noise"
 * when the spread of the runs is as large. */
static void print_costs(const figure *f, int64_t refills, double clock_ns, int64_t nrows,
                        double paired) {
  const figure *d = &f[LOOP_DECOMPRESS_ONLY];
  char on[64], off[64], timer[64], metrics[64];
  static const loop_kind reads[] = {LOOP_METRICS_ON, LOOP_METRICS_OFF, LOOP_TIMER_PER_READ};
  char *texts[] = {on, off, timer};
  for (int i = 0; i < 3; i++) {
    const figure *x = &f[reads[i]];
    bench_cost_text(texts[i], sizeof on, x->median - d->median,
                    bench_noise(x->min, x->max, d->min, d->max), "ns/row");
  }
  printf(
      "  reads alone (total - decompress_only): metrics on %s, off %s, timer per read %s; memcpy %.2f ns/row\n",
      on, off, timer, f[LOOP_MEMCPY].median);
  printf("  metrics on/off, median of the run-by-run ratios: %.3f\n", paired);
  const figure *m_on = &f[LOOP_METRICS_ON], *m_off = &f[LOOP_METRICS_OFF];
  bench_cost_text(metrics, sizeof metrics, 100.0 * (m_on->median / m_off->median - 1.0),
                  100.0 * bench_noise(m_on->min, m_on->max, m_off->min, m_off->max) / m_off->median,
                  "%");
  double counted = 2.0 * (double)refills * clock_ns / (double)nrows;
  printf(
      "  metrics cost: measured %s (on/off %.3f); from counts: %lld refills x 2 clock reads x %.1f ns = "
      "%.3f ns/row = %.2f%%\n",
      metrics, m_on->median / m_off->median, (long long)refills, clock_ns, counted,
      100.0 * counted / m_off->median);
}

static const char rows_help[] =
    "usage: xchg bench rows [--rows N] [--json]\n\n"
    "Shape 3 of SHAPES.md: a sort-shuffle reader pulls N (default 10,000,000)\n"
    "length-prefixed 100-byte rows out of LZ4 frames, then zstd frames, of 64 KiB\n"
    "of rows each, two reads per row.  Each figure is the median of 5 runs after\n"
    "1 warm-up, in ns per row, with [min-max]; the loops take turns, so that a\n"
    "busy host weighs on all of them alike.  The loops:\n"
    "  metrics_on        xchg_istream_read with metrics on (the clock is read\n"
    "                      only around refills)\n"
    "  metrics_off       the same with metrics off\n"
    "  timer_per_read    metrics off and a clock read around every read (four\n"
    "                      per row)\n"
    "  memcpy            a bare memcpy of the same bytes, row by row: the limit\n"
    "                      of reading\n"
    "  decompress_only   the windows decompressed, no rows read\n"
    "  row_reader        xchg_row_reader_next, zero-copy\n"
    "  codec_limit       the bare codec library over the same frames: the limit\n"
    "                      of decompress_only\n"
    "Then per codec: what the reads cost beyond decompressing (a loop's median\n"
    "minus decompress_only's), the metrics' cost measured (on against off) and\n"
    "estimated from counts (refills x 2 clock reads x the cost of one).  A cost\n"
    "no larger than the spread of the runs it comes from prints as \"within\n"
    "noise (+-spread)\": on a loaded host a difference of medians can even come\n"
    "out negative.\n"
    "  --rows N   rows instead of 10,000,000\n"
    "  --json     one JSON object (the same figures, no noise judgement)\n";

int xchg_bench_rows(int argc, char **argv) {
  static const struct option longs[] = {{"rows", required_argument, NULL, 'r'},
                                        {"json", no_argument, NULL, 'j'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  int64_t nrows = 10000000;
  int json = 0, opt;
  xc_options_begin();
  while ((opt = xc_getopt(argc, argv, ":h", longs)) != -1) {
    switch (opt) {
      case 'r':
        if (!xc_int_option("bench rows", "--rows", optarg, 1, BENCH_MAX_ROWS, &nrows)) return 2;
        break;
      case 'j': json = 1; break;
      case 'h': fputs(rows_help, stdout); return 0;
      default: return xc_option_error("bench rows", argv, longs, opt);
    }
  }
  if (optind < argc) return xc_usage_error("bench rows", "unexpected argument '%s'", argv[optind]);

  static const xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_FRAME, XCHG_STREAM_ZSTD};
  figure figs[2][LOOP_KINDS];
  int64_t refills[2] = {0, 0};
  double paired[2] = {1, 1};
  double clock_ns = clock_cost_ns();
  size_t compressed[2];
  uint64_t raw_size = 0;
  for (int c = 0; c < 2; c++) {
    rows_input in;
    if (generate(nrows, codecs[c], &in) != 0) {
      fprintf(stderr, "xchg bench rows: cannot generate the input\n");
      return 1;
    }
    compressed[c] = in.size;
    raw_size = in.raw_size;
    /* The memcpy loop copies out of the first window of the same rows. */
    uint8_t *window = malloc(CHUNK);
    xchg_istream *s = open_input(&in, codecs[c], 0);
    size_t got = 0;
    xchg_istream_read(s, window, CHUNK, &got, NULL);
    xchg_istream_free(s);
    if (measure_all(&in, codecs[c], window, figs[c], &refills[c], &paired[c]) != 0) return 1;
    free(window);
    free(in.data);
  }

  if (json) {
    printf(
        "{\"bench\": \"rows\", \"rows\": %lld, \"row_bytes\": %d, \"nproc\": %d, "
        "\"machine\": ",
        (long long)nrows, ROW_SIZE, bench_cores());
    print_json_string(bench_machine());
    printf(
        ", \"runs\": %d, \"warmups\": 1, \"codec\": \"lz4-frame\", \"raw_bytes\": %llu, "
        "\"compressed_bytes\": %zu, ",
        RUNS, (unsigned long long)raw_size, compressed[0]);
    print_json_figures("ns_per_row", figs[0], 0);
    printf(", ");
    print_json_figures("ns_per_row_min", figs[0], 1);
    printf(", ");
    print_json_figures("ns_per_row_max", figs[0], 2);
    printf(
        ", \"read_ns_per_row\": {\"metrics_on\": %.3f, \"metrics_off\": %.3f, "
        "\"timer_per_read\": %.3f}",
        figs[0][LOOP_METRICS_ON].median - figs[0][LOOP_DECOMPRESS_ONLY].median,
        figs[0][LOOP_METRICS_OFF].median - figs[0][LOOP_DECOMPRESS_ONLY].median,
        figs[0][LOOP_TIMER_PER_READ].median - figs[0][LOOP_DECOMPRESS_ONLY].median);
    /* Metrics read the clock twice per refill (a memory source never
     * blocks): their cost per row, from counts rather than noisy timings. */
    printf(", \"metrics_on_off_paired\": %.4f", paired[0]);
    printf(
        ", \"clock_read_ns\": %.2f, \"refills\": %lld, \"metrics_clock_reads_per_row\": %.5f, "
        "\"metrics_cost_estimate_pct\": %.3f",
        clock_ns, (long long)refills[0], 2.0 * (double)refills[0] / (double)nrows,
        100.0 * 2.0 * (double)refills[0] * clock_ns / (double)nrows /
            figs[0][LOOP_METRICS_OFF].median);
    printf(", \"zstd\": {\"compressed_bytes\": %zu, \"metrics_on_off_paired\": %.4f, ",
           compressed[1], paired[1]);
    print_json_figures("ns_per_row", figs[1], 0);
    printf(", ");
    print_json_figures("ns_per_row_min", figs[1], 1);
    printf(", ");
    print_json_figures("ns_per_row_max", figs[1], 2);
    printf("}}\n");
    return 0;
  }
  printf("xchg bench rows — %lld rows of %d bytes (%.1f MB), two reads per row\n", (long long)nrows,
         ROW_SIZE, (double)raw_size / 1e6);
  printf("machine: %s (nproc %d); median of %d runs after 1 warm-up [min–max]\n\n", bench_machine(),
         bench_cores(), RUNS);
  for (int c = 0; c < 2; c++) {
    const figure *f = figs[c];
    printf("%s frames, 64 KiB each (%.1f MB compressed):\n", xchg_stream_codec_name(codecs[c]),
           (double)compressed[c] / 1e6);
    for (int k = 0; k < LOOP_KINDS; k++)
      printf("  %-16s %8.2f ns/row  [%.2f–%.2f]\n", loop_names[k], f[k].median, f[k].min, f[k].max);
    print_costs(f, refills[c], clock_ns, nrows, paired[c]);
    printf("  timer per read costs %.2fx metrics on (4 clock reads per row)\n\n",
           f[LOOP_TIMER_PER_READ].median / f[LOOP_METRICS_ON].median);
  }
  return 0;
}
