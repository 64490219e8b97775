/* bench_broadcast.c — `xchg bench broadcast`: shape 2 (`broadcast`) of
 * SHAPES.md, many tasks reading one broadcast through the shared cache.
 *
 * The build side is generated once and encoded as an engine ships it: an
 * uncompressed IPC stream in lz4-java 32 KiB blocks (Spark's default
 * stream codec), and an IPC stream with ZSTD bodies and no outer codec.
 * The bytes are handed to the cache as 1 MiB chunks, as a JVM holds them.
 * T worker threads run N tasks, each taking the next one as it finishes
 * (so tasks start in waves of T, as an executor schedules them); a task
 * acquires the broadcast, reads every batch of every column into a
 * checksum, checks it, and releases.  Reported per run: wall time, total
 * CPU of the tasks (each task's thread CPU clock, waiting costs none),
 * decodes performed and the peak resident memory of the process. */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "broadcast_data.h"
#include "gen/shapes.h"
#include "bench.h"
#include "cli/options.h"
#include "stats.h"
#include "xchg/cache.h"
#include "xchg/stream.h"
#include "xchg/writer.h"
#include "xchg/testing.h"

#define CHUNK_SIZE (1 << 20)

typedef enum sharing_mode { SHARING_OFF = 0, SHARING_ON, SHARING_RETAIN } sharing_mode;
static const char *const sharing_names[] = {"off", "on", "retain"};

/* One encoding of the broadcast, as chunks. */
typedef struct encoded {
  const char *name;
  xchg_buf *bytes;
  xchg_chunk *chunks;
  size_t n_chunks;
  xchg_broadcast_part part;
} encoded;

typedef struct result {
  const char *variant;
  int tasks, threads;
  sharing_mode sharing;
  double wall_ms, task_cpu_ms;
  int64_t decodes;
  int64_t peak_rss, base_rss;
} result;

/* ---- resident memory ------------------------------------------------------------- */

/* Peak RSS since the last reset, from /proc (VmHWM); the process-wide
 * maximum from getrusage when /proc cannot reset it. */
static int reset_peak_rss(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return -1;
  int ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static int64_t status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int64_t kb = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) kb = atoll(line + n);
  if (f) fclose(f);
  return kb;
}

static int64_t peak_rss_bytes(void) {
  int64_t kb = status_kb("VmHWM:");
  if (kb < 0) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    kb = ru.ru_maxrss;
  }
  return kb * 1024;
}

/* ---- tasks ------------------------------------------------------------------------- */

typedef struct run_state {
  xchg_cache *cache;
  const encoded *enc;
  int tasks;
  atomic_int next_task;
  atomic_int errors;
  atomic_llong cpu_ns;
  shape_sums want;
} run_state;

int64_t bench_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int broadcast_read_all(const xchg_cache_holder *h, shape_sums *sums, xchg_error *err) {
  for (int64_t i = 0; i < xchg_cache_holder_num_batches(h); i++) {
    struct ArrowArray b;
    if (xchg_cache_holder_batch(h, i, &b, err) != XCHG_OK) return -1;
    const int64_t *k = b.children[0]->buffers[1], *d = b.children[1]->buffers[1];
    const int32_t *offsets = b.children[2]->buffers[1];
    const uint8_t *chars = b.children[2]->buffers[2];
    for (int64_t r = 0; r < b.length; r++) {
      sums->value[0] += (uint64_t)k[r];
      sums->value[1] += (uint64_t)d[r];
    }
    for (int32_t c = offsets[0]; c < offsets[b.length]; c++) sums->value[2] += chars[c];
    b.release(&b);
  }
  return 0;
}

static void run_one_task(run_state *rs) {
  xchg_broadcast bytes = {&rs->enc->part, 1, NULL, NULL};
  xchg_cache_holder *h;
  xchg_error err;
  shape_sums got;
  memset(&got, 0, sizeof got);
  if (xchg_cache_acquire(rs->cache, "broadcast_0", &bytes, NULL, &h, &err) != XCHG_OK ||
      broadcast_read_all(h, &got, &err) != 0) {
    fprintf(stderr, "xchg bench broadcast: %s\n", err.message);
    atomic_fetch_add(&rs->errors, 1);
    return;
  }
  xchg_cache_holder_release(h);
  for (int c = 0; c < SHAPE_BROADCAST_COLUMNS; c++)
    if (got.value[c] != rs->want.value[c]) {
      fprintf(stderr, "xchg bench broadcast: column %d checksum differs\n", c);
      atomic_fetch_add(&rs->errors, 1);
    }
}

static void *worker(void *arg) {
  run_state *rs = arg;
  while (atomic_fetch_add(&rs->next_task, 1) < rs->tasks) {
    int64_t t0 = bench_thread_cpu_ns();
    run_one_task(rs);
    atomic_fetch_add(&rs->cpu_ns, bench_thread_cpu_ns() - t0);
  }
  return NULL;
}

static int run(const encoded *enc, const shape_sums *want, int tasks, int threads,
               sharing_mode sharing, result *out) {
  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.sharing = sharing != SHARING_OFF;
  o.retain_bytes = sharing == SHARING_RETAIN ? (int64_t)1 << 40 : 0;
  run_state rs;
  memset(&rs, 0, sizeof rs);
  if (xchg_cache_create(&o, &rs.cache, NULL) != XCHG_OK) return -1;
  rs.enc = enc;
  rs.tasks = tasks;
  rs.want = *want;
  pthread_t *th = calloc((size_t)threads, sizeof *th);
  if (!rs.cache || !th) return -1;
  out->base_rss = status_kb("VmRSS:") * 1024;
  int reset = reset_peak_rss();
  int64_t t0 = bench_now_ns();
  for (int i = 0; i < threads; i++) bench_start_thread(&th[i], worker, &rs, i + 1, threads);
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  out->wall_ms = (double)(bench_now_ns() - t0) / 1e6;
  out->peak_rss = reset == 0 ? peak_rss_bytes() : -1;
  xchg_cache_metrics m;
  xchg_cache_get_metrics(rs.cache, &m);
  xchg_cache_free(rs.cache);
  free(th);
  out->variant = enc->name;
  out->tasks = tasks;
  out->threads = threads;
  out->sharing = sharing;
  out->task_cpu_ms = (double)atomic_load(&rs.cpu_ns) / 1e6;
  out->decodes = m.decodes;
  return atomic_load(&rs.errors) ? -1 : 0;
}

/* ---- data ---------------------------------------------------------------------- */

xchg_buf *broadcast_write_ipc(int64_t rows, xchg_block_codec codec, shape_sums *sums) {
  struct ArrowSchema schema;
  shape_broadcast_schema(&schema);
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.codec = codec;
  xchg_ipc_writer *w;
  xchg_error err;
  xchg_buf *out = NULL;
  if (xchg_ipc_writer_open_memory(&schema, &opts, &w, &err) == XCHG_OK) {
    xchg_status st = XCHG_OK;
    for (int64_t i = 0; i < shape_broadcast_batches(rows) && st == XCHG_OK; i++) {
      struct ArrowArray batch;
      shape_broadcast_batch(42, rows, i, &batch, sums);
      st = xchg_ipc_writer_write(w, &batch, &err);
      batch.release(&batch);
    }
    if (st == XCHG_OK && xchg_ipc_writer_finish(w, &err) == XCHG_OK)
      out = xchg_ipc_writer_take_memory(w);
    xchg_ipc_writer_free(w);
  }
  if (!out) fprintf(stderr, "xchg bench broadcast: writing the data: %s\n", err.message);
  schema.release(&schema);
  return out;
}

static int make_encoded(encoded *e, const char *name, xchg_buf *bytes, xchg_stream_codec codec) {
  e->name = name;
  e->bytes = bytes;
  size_t size = xchg_buf_size(bytes);
  e->n_chunks = (size + CHUNK_SIZE - 1) / CHUNK_SIZE;
  e->chunks = calloc(e->n_chunks ? e->n_chunks : 1, sizeof *e->chunks);
  if (!e->chunks) return -1;
  for (size_t i = 0; i < e->n_chunks; i++) {
    size_t at = i * CHUNK_SIZE;
    e->chunks[i] =
        (xchg_chunk){xchg_buf_data(bytes) + at, size - at < CHUNK_SIZE ? size - at : CHUNK_SIZE};
  }
  e->part = (xchg_broadcast_part){e->chunks, e->n_chunks, codec};
  return 0;
}

/* ---- output ----------------------------------------------------------------------- */

static void print_header(void) {
  printf("%-10s %5s %7s %-6s %10s %12s %7s %10s %10s\n", "variant", "tasks", "threads", "share",
         "wall ms", "task CPU ms", "decodes", "peak MB", "base MB");
}

/* Sharing on without retention decodes again whenever a task acquires
 * after the last holder released: tasks that do not overlap. */
static bool decoded_again(const result *r) { return r->sharing == SHARING_ON && r->decodes > 1; }

static void print_row(const result *r) {
  printf("%-10s %5d %7d %-6s %10.1f %12.1f %7lld %10.1f %10.1f%s\n", r->variant, r->tasks,
         r->threads, sharing_names[r->sharing], r->wall_ms, r->task_cpu_ms, (long long)r->decodes,
         (double)r->peak_rss / 1048576.0, (double)r->base_rss / 1048576.0,
         decoded_again(r) ? "  *" : "");
  fflush(stdout);
}

static void print_decoded_again_note(const result *rs, int n) {
  for (int i = 0; i < n; i++)
    if (decoded_again(&rs[i])) {
      printf(
          "* share on, decoded more than once: an entry lives while a task holds it (no retention),\n"
          "  so a task that acquires after the last holder released decodes again; on 1 thread\n"
          "  the tasks run one after another and each one decodes.  retain keeps the entry.\n");
      return;
    }
}

/* CPU(on) / CPU(off) per (variant, tasks, threads), beside 1.5 / N + the
 * share of a task's CPU spent reading (measured from the retained runs,
 * where every task but the first reads without decoding). */
static void print_ratios(const result *rs, int n, double read_ms) {
  printf("\nreading alone (a retained hit): %.1f ms of CPU per task\n", read_ms);
  printf("%-10s %5s %7s %12s %14s %12s\n", "variant", "tasks", "threads", "on/off", "retain/off",
         "target");
  for (int i = 0; i < n; i++) {
    if (rs[i].sharing != SHARING_OFF) continue;
    const result *on = NULL, *retain = NULL;
    for (int j = 0; j < n; j++)
      if (rs[j].variant == rs[i].variant && rs[j].tasks == rs[i].tasks &&
          rs[j].threads == rs[i].threads) {
        if (rs[j].sharing == SHARING_ON) on = &rs[j];
        if (rs[j].sharing == SHARING_RETAIN) retain = &rs[j];
      }
    double off = rs[i].task_cpu_ms;
    double target = 1.5 / rs[i].tasks + read_ms * rs[i].tasks / off;
    char on_text[32] = "-", retain_text[32] = "-"; /* a mode not run has no ratio */
    if (on) snprintf(on_text, sizeof on_text, "%.3f", on->task_cpu_ms / off);
    if (retain) snprintf(retain_text, sizeof retain_text, "%.3f", retain->task_cpu_ms / off);
    printf("%-10s %5d %7d %12s %14s %12.3f\n", rs[i].variant, rs[i].tasks, rs[i].threads, on_text,
           retain_text, target);
  }
}

static void print_json(const result *rs, int n, int64_t rows, double read_ms,
                       const int64_t *sizes) {
  printf(
      "{\"benchmark\":\"broadcast\",\"shape\":\"broadcast\",\"rows\":%lld,\"machine\":\"%s\","
      "\"bytes_lz4_java\":%lld,\"bytes_zstd_body\":%lld,\"read_cpu_ms_per_task\":%.3f,\"results\":[",
      (long long)rows, bench_machine(), (long long)sizes[0], (long long)sizes[1], read_ms);
  for (int i = 0; i < n; i++)
    printf(
        "%s{\"variant\":\"%s\",\"tasks\":%d,\"threads\":%d,\"sharing\":\"%s\",\"wall_ms\":%.3f,"
        "\"task_cpu_ms\":%.3f,\"decodes\":%lld,\"peak_rss_bytes\":%lld,\"base_rss_bytes\":%lld}",
        i ? "," : "", rs[i].variant, rs[i].tasks, rs[i].threads, sharing_names[rs[i].sharing],
        rs[i].wall_ms, rs[i].task_cpu_ms, (long long)rs[i].decodes, (long long)rs[i].peak_rss,
        (long long)rs[i].base_rss);
  printf("]}\n");
}

/* ---- main --------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: xchg bench broadcast [--rows N] [--tasks a,b,..] [--threads a,b,..] [--quick] [--json]\n"
      "  shape `broadcast` (SHAPES.md 2): N tasks on T threads acquire one broadcast through\n"
      "  the shared cache, read every value and release; sharing off / on / on with retention.\n"
      "  Defaults: 1,000,000 rows; tasks 32,128,200; threads 1, nproc and 8.\n"
      "  --quick: 100,000 rows, tasks 4,16, threads 1,4 (a smoke test).\n"
      "columns:\n"
      "  variant      the broadcast's encoding: lz4-java blocks or zstd bodies\n"
      "  tasks        tasks run; threads: worker threads running them\n"
      "  share        off: each task decodes its own copy; on: the shared cache\n"
      "                 decodes once for the tasks that overlap (a task arriving\n"
      "                 after the last holder released decodes again: marked *);\n"
      "                 retain: on, and the entry is kept after the last task\n"
      "                 releases it\n"
      "  wall ms      all tasks, first start to last finish\n"
      "  task CPU ms  the tasks' thread CPU time, added (waiting costs none)\n"
      "  decodes      how many times the broadcast was decoded\n"
      "  peak MB      peak resident memory during the run; base MB: before it\n"
      "Then per variant, tasks and threads: on/off and retain/off, the task CPU\n"
      "with sharing over that without ('-' when not run), beside the target\n"
      "1.5 / tasks + the share of a task's CPU spent reading.\n");
}

int xchg_bench_broadcast(int argc, char **argv) {
  static const struct option long_opts[] = {
      {"rows", 1, 0, 'r'},  {"tasks", 1, 0, 'n'}, {"threads", 1, 0, 't'},
      {"quick", 0, 0, 'q'}, {"json", 0, 0, 'j'},  {"help", 0, 0, 'h'},
      {0, 0, 0, 0}};
  int64_t rows = SHAPE_BROADCAST_ROWS;
  int tasks[8] = {32, 128, 200}, n_tasks = 3;
  int threads[8] = {1, bench_cores(), 8}, n_threads = 3;
  int json = 0, opt;
  bool ok = true;
  xc_options_begin();
  while (ok && (opt = xc_getopt(argc, argv, ":h", long_opts)) != -1) {
    switch (opt) {
      case 'r':
        ok = xc_int_option("bench broadcast", "--rows", optarg, 1, BENCH_MAX_ROWS, &rows);
        break;
      case 'n':
        n_tasks =
            xc_list_option("bench broadcast", "--tasks", optarg, 1, BENCH_MAX_TASKS, tasks, 8);
        ok = n_tasks > 0;
        break;
      case 't':
        n_threads = xc_list_option("bench broadcast", "--threads", optarg, 1, BENCH_MAX_THREADS,
                                   threads, 8);
        ok = n_threads > 0;
        break;
      case 'q':
        rows = 100000;
        tasks[0] = 4, tasks[1] = 16, n_tasks = 2;
        threads[0] = 1, threads[1] = 4, n_threads = 2;
        break;
      case 'j': json = 1; break;
      case 'h': usage(stdout); return 0;
      default: return xc_option_error("bench broadcast", argv, long_opts, opt);
    }
  }
  if (!ok) return 2;
  if (optind < argc)
    return xc_usage_error("bench broadcast", "unexpected argument '%s'", argv[optind]);
  /* Dedupe thread counts (nproc may be 1 or 8). */
  int m = 0;
  for (int i = 0; i < n_threads; i++) {
    int seen = 0;
    for (int j = 0; j < m; j++) seen |= threads[j] == threads[i];
    if (!seen) threads[m++] = threads[i];
  }
  n_threads = m;
#ifdef __GLIBC__
  /* A fixed mmap threshold, so that freed decoded buffers leave the process
   * and the peak RSS of each run is its own. */
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
  shape_sums want, want_zstd;
  memset(&want, 0, sizeof want);
  memset(&want_zstd, 0, sizeof want_zstd);
  xchg_buf *ipc = broadcast_write_ipc(rows, XCHG_BLOCK_NONE, &want);
  xchg_buf *ipc_zstd = broadcast_write_ipc(rows, XCHG_BLOCK_ZSTD, &want_zstd);
  if (!ipc || !ipc_zstd) return 1;
  /* k is a permutation of 0..rows-1: its sum says so (an independent check
   * of the generator). */
  if (want.value[0] != (uint64_t)rows * (uint64_t)(rows - 1) / 2) {
    fprintf(stderr, "xchg bench broadcast: k is not a permutation\n");
    return 1;
  }
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.block_size = 32 * 1024;
  xchg_buf *lz4 = NULL;
  xchg_error err;
  if (xchg_stream_encode(XCHG_STREAM_LZ4_JAVA, &eo, xchg_buf_data(ipc), xchg_buf_size(ipc), &lz4,
                         &err) != XCHG_OK) {
    fprintf(stderr, "xchg bench broadcast: %s\n", err.message);
    return 1;
  }
  int64_t ipc_size = (int64_t)xchg_buf_size(ipc);
  xchg_buf_unref(ipc); /* only the bytes as shipped stay: less resident memory to see past */
  encoded enc[2];
  if (make_encoded(&enc[0], "lz4-java", lz4, XCHG_STREAM_LZ4_JAVA) != 0 ||
      make_encoded(&enc[1], "zstd-body", ipc_zstd, XCHG_STREAM_NONE) != 0)
    return 1;
  const shape_sums *wants[2] = {&want, &want_zstd};
  int64_t sizes[2] = {(int64_t)xchg_buf_size(lz4), (int64_t)xchg_buf_size(ipc_zstd)};
  if (!json) {
    printf("machine: %s\n", bench_machine());
    printf("shape broadcast: %lld rows, IPC %.1f MB; lz4-java %.1f MB; zstd bodies %.1f MB\n\n",
           (long long)rows, (double)ipc_size / 1e6, (double)sizes[0] / 1e6, (double)sizes[1] / 1e6);
    print_header();
  }
  int n_results = 2 * n_tasks * n_threads * 3, n = 0, rc = 0;
  result *rs = calloc((size_t)n_results, sizeof *rs);
  double read_ms = 0;
  for (int v = 0; v < 2 && rc == 0; v++)
    for (int ti = 0; ti < n_tasks && rc == 0; ti++)
      for (int th = 0; th < n_threads && rc == 0; th++)
        for (int s = SHARING_OFF; s <= SHARING_RETAIN && rc == 0; s++) {
          rc = run(&enc[v], wants[v], tasks[ti], threads[th], (sharing_mode)s, &rs[n]);
          if (rc == 0 && !json) print_row(&rs[n]);
          n++;
        }
  if (rc == 0) {
    /* Reading alone: one task on a held, decoded entry. */
    xchg_cache *c = NULL;
    xchg_broadcast b = {&enc[0].part, 1, NULL, NULL};
    xchg_cache_holder *held;
    if (xchg_cache_create(NULL, &c, &err) == XCHG_OK &&
        xchg_cache_acquire(c, "broadcast_0", &b, NULL, &held, &err) == XCHG_OK) {
      run_state rs1;
      memset(&rs1, 0, sizeof rs1);
      rs1.cache = c, rs1.enc = &enc[0], rs1.tasks = 5, rs1.want = want;
      worker(&rs1);
      read_ms = (double)atomic_load(&rs1.cpu_ns) / 5 / 1e6;
      xchg_cache_holder_release(held);
    }
    xchg_cache_free(c);
    if (json) {
      print_json(rs, n, rows, read_ms, sizes);
    } else {
      print_decoded_again_note(rs, n);
      print_ratios(rs, n, read_ms);
    }
  }
  free(rs);
  for (int v = 0; v < 2; v++) free(enc[v].chunks);
  xchg_buf_unref(ipc_zstd);
  xchg_buf_unref(lz4);
  return rc == 0 ? 0 : 1;
}
