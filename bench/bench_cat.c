/* bench_cat.c — `xchg bench cat`: `xchg cat --format csv|json` of the cache
 * shape against nodejs-polars writing the same file as CSV.
 *
 * The input is the cache shape of SHAPES.md (default 1,000,000 rows) as an
 * uncompressed Arrow IPC stream, written once by `xchg gen` into a
 * temporary file (or FILE when given).  Each run times, one after the
 * other so that a busy host weighs on all alike: `xchg cat --format csv`
 * and `--format json` as processes of their own, end to end, writing to
 * /dev/null (or to temporary files with --to-file), then polars' readIPC +
 * writeCSV of the same bytes to the same kind of target
 * (tests/interop/polars/write_csv.mjs, which times polars' own work, not
 * node's start).  Medians of K runs after a warm-up, min-max, and each
 * ratio to polars.  nodejs-polars is looked for in --polars DIR, else
 * $XCHG_POLARS_DIR, else tests/interop/polars of the source tree xchg was
 * built from (a path compiled in, so that any working directory will do);
 * without it there is no baseline and the benchmark fails, saying where it
 * looked. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cli/options.h"
#include "stats.h"

extern char **environ;

enum { CAT_CSV, CAT_JSON, POLARS, N_CONTENDERS };

static const char *const contender_names[N_CONTENDERS] = {
    "xchg cat --format csv", "xchg cat --format json", "polars readIPC+writeCSV"};

typedef struct cat_bench {
  char exe[PATH_MAX];      /* this xchg */
  char input[PATH_MAX];    /* the cache shape's file */
  bool input_is_temporary; /* made here: removed at the end */
  char script[PATH_MAX];   /* write_csv.mjs beside nodejs-polars */
  char outputs[N_CONTENDERS][PATH_MAX];
} cat_bench;

/* Runs argv with standard output into out_path; returns the wall time in
 * ns, or -1 when it could not run or failed. */
/* How a contender run ended, when it failed. */
typedef struct run_failure {
  char why[128];
} run_failure;

/* The run's wall time in ns, or -1 with why it failed: could not start,
 * the exit status (127 from env: the program is not on PATH), or the
 * signal that killed it.  Its standard error is the terminal's. */
static int64_t run_timed(char *const *argv, const char *out_path, run_failure *f) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid;
  int64_t t0 = bench_now_ns();
  int rc = posix_spawn(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    snprintf(f->why, sizeof f->why, "could not start %s: %s", argv[0], strerror(rc));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(f->why, sizeof f->why, "waitpid: %s", strerror(errno));
      return -1;
    }
  int64_t t1 = bench_now_ns();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return t1 - t0;
  if (WIFSIGNALED(status))
    snprintf(f->why, sizeof f->why, "killed by signal %d", WTERMSIG(status));
  else if (WEXITSTATUS(status) == 127 && strcmp(argv[0], "/usr/bin/env") == 0)
    snprintf(f->why, sizeof f->why, "%s is not on PATH", argv[1]);
  else
    snprintf(f->why, sizeof f->why, "exit status %d", WEXITSTATUS(status));
  return -1;
}

static int64_t run_cat(const cat_bench *b, int contender, run_failure *f) {
  char *argv[] = {(char *)b->exe,
                  "cat",
                  (char *)b->input,
                  "--format",
                  contender == CAT_CSV ? "csv" : "json",
                  NULL};
  return run_timed(argv, b->outputs[contender], f);
}

/* polars' own time, as the script prints it (its output goes to the
 * target named on its command line; what it prints, to a report file). */
static int64_t run_polars(const cat_bench *b, const char *report, run_failure *f) {
  char *argv[] = {"/usr/bin/env",
                  "node",
                  (char *)b->script,
                  (char *)b->input,
                  (char *)b->outputs[POLARS],
                  NULL};
  if (run_timed(argv, report, f) < 0) return -1;
  FILE *r = fopen(report, "r");
  long long ns = -1;
  if (r == NULL || fscanf(r, "%lld", &ns) != 1) {
    ns = -1;
    snprintf(f->why, sizeof f->why, "its script printed no time");
  }
  if (r) fclose(r);
  return ns;
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The script beside nodejs-polars, in --polars DIR, $XCHG_POLARS_DIR or
 * the source tree's tests/interop/polars; false, saying where it looked and
 * what to do, when it is not there. */
static bool find_polars(cat_bench *b, const char *dir) {
  const char *env = getenv("XCHG_POLARS_DIR");
  const char *where = dir   ? "given by --polars"
                      : env ? "given by XCHG_POLARS_DIR"
                            : "in the source tree this xchg was built from";
  if (dir == NULL) dir = env ? env : XCHG_SOURCE_DIR "/tests/interop/polars";
  char module[PATH_MAX + 64];
  snprintf(module, sizeof module, "%.4000s/node_modules/nodejs-polars/package.json", dir);
  snprintf(b->script, sizeof b->script, "%.4000s/write_csv.mjs", dir);
  if (is_file(module) && is_file(b->script)) return true;
  fprintf(
      stderr,
      "xchg bench cat: no baseline: write_csv.mjs and node_modules/nodejs-polars are not both in\n"
      "%s (%s); install nodejs-polars there with npm ci (scripts/setup.sh does),\n"
      "or name a folder that holds both with --polars DIR or XCHG_POLARS_DIR\n",
      dir, where);
  return false;
}

/* A temporary file of ours (mkstemp), its name into path. */
static bool temporary(char *path, const char *suffix) {
  snprintf(path, PATH_MAX, "/tmp/xchg_bench_cat_XXXXXX%s", suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0) return false;
  close(fd);
  return true;
}

static int make_input(cat_bench *b, long long rows) {
  if (!temporary(b->input, ".arrows")) return -1;
  b->input_is_temporary = true;
  char count[32];
  snprintf(count, sizeof count, "%lld", rows);
  char *argv[] = {b->exe,   "gen", "cache",         b->input, "-f",
                  "--rows", count, "--compression", "none",   NULL};
  run_failure f;
  if (run_timed(argv, "/dev/null", &f) >= 0) return 0;
  fprintf(stderr, "xchg bench cat: xchg gen cache failed: %s\n", f.why);
  return -1;
}

static void print_results(const cat_bench *b, const bench_timing *t, int runs, long long rows,
                          bool json) {
  struct stat st;
  long long bytes = stat(b->input, &st) == 0 ? (long long)st.st_size : -1;
  if (json) {
    printf(
        "{\"benchmark\": \"cat\", \"machine\": \"%s\", \"shape\": \"cache\", \"rows\": %lld, "
        "\"input_bytes\": %lld, \"runs\": %d, \"results\": [",
        bench_machine(), rows, bytes, runs);
    for (int c = 0; c < N_CONTENDERS; c++)
      printf(
          "%s\n  {\"what\": \"%s\", \"median_ms\": %.1f, \"min_ms\": %.1f, \"max_ms\": %.1f, "
          "\"ratio_vs_polars\": %.3f}",
          c ? "," : "", contender_names[c], t[c].median_ms, t[c].min_ms, t[c].max_ms,
          t[c].median_ms / t[POLARS].median_ms);
    printf("\n]}\n");
    return;
  }
  printf(
      "machine: %s\ncat of the cache shape, %lld rows (%.1f MB uncompressed IPC), to %s, median of %d runs "
      "after 1 warm-up\n",
      bench_machine(), rows, (double)bytes / 1e6,
      strcmp(b->outputs[0], "/dev/null") == 0 ? "/dev/null" : "files", runs);
  printf("%-26s %10s %21s %16s\n", "", "median ms", "(min-max)", "ratio to polars");
  for (int c = 0; c < N_CONTENDERS; c++)
    printf("%-26s %10.1f %10.1f-%-10.1f %16.3f\n", contender_names[c], t[c].median_ms, t[c].min_ms,
           t[c].max_ms, t[c].median_ms / t[POLARS].median_ms);
}

/* Warm-up, then `runs` rounds of every contender in turn. */
static int measure(const cat_bench *b, int runs, bench_timing *t) {
  int64_t *ns = calloc((size_t)runs * N_CONTENDERS, sizeof *ns);
  char report[PATH_MAX];
  if (ns == NULL || !temporary(report, ".txt")) {
    free(ns);
    return -1;
  }
  int rc = 0;
  for (int r = -1; r < runs && rc == 0; r++) {
    for (int c = 0; c < N_CONTENDERS && rc == 0; c++) {
      run_failure f;
      int64_t took = c == POLARS ? run_polars(b, report, &f) : run_cat(b, c, &f);
      if (took < 0) {
        fprintf(stderr, "xchg bench cat: %s failed: %s\n", contender_names[c], f.why);
        rc = -1;
      } else if (r >= 0) {
        ns[c * runs + r] = took;
      }
    }
  }
  for (int c = 0; c < N_CONTENDERS && rc == 0; c++) t[c] = bench_summarize(ns + c * runs, runs);
  remove(report);
  free(ns);
  return rc;
}

static int usage(void) {
  printf(
      "usage: xchg bench cat [FILE] [--rows N] [--runs K] [--to-file] [--polars DIR] [--json]\n\n"
      "Times `xchg cat --format csv` and `--format json` of the cache shape (default\n"
      "1,000,000 rows, uncompressed; or FILE), end to end, against nodejs-polars\n"
      "reading the same file and writing it as CSV; output to /dev/null, or to\n"
      "temporary files with --to-file.  Median of K runs (default 5) after a warm-up,\n"
      "min-max, and the ratio to polars, all run in turns.\n"
      "  --polars DIR  where write_csv.mjs and its node_modules are: DIR, else\n"
      "                  $XCHG_POLARS_DIR, else " XCHG_SOURCE_DIR
      "/tests/interop/polars\n"
      "                  (the source tree this xchg was built from); without\n"
      "                  nodejs-polars there is no baseline and the benchmark fails.\n");
  return 0;
}

int xchg_bench_cat(int argc, char **argv) {
  int64_t rows = 1000000, v = 0;
  int runs = BENCH_RUNS, opt;
  bool ok = true;
  bool json = false, to_file = false;
  const char *polars_dir = NULL;
  static const struct option longs[] = {
      {"rows", 1, 0, 'r'},   {"runs", 1, 0, 'k'}, {"json", 0, 0, 'j'}, {"to-file", 0, 0, 'f'},
      {"polars", 1, 0, 'p'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  xc_options_begin();
  while (ok && (opt = xc_getopt(argc, argv, ":h", longs)) != -1) {
    switch (opt) {
      case 'r': ok = xc_int_option("bench cat", "--rows", optarg, 1, BENCH_MAX_ROWS, &rows); break;
      case 'k':
        ok = xc_int_option("bench cat", "--runs", optarg, 1, BENCH_MAX_RUNS, &v), runs = (int)v;
        break;
      case 'j': json = true; break;
      case 'f': to_file = true; break;
      case 'p': polars_dir = optarg; break;
      case 'h': return usage();
      default: return xc_option_error("bench cat", argv, longs, opt);
    }
  }
  if (!ok) return 2;
  if (optind + 1 < argc)
    return xc_usage_error("bench cat", "one FILE at most, not '%s' too", argv[optind + 1]);
  cat_bench b;
  memset(&b, 0, sizeof b);
  ssize_t len = readlink("/proc/self/exe", b.exe, sizeof b.exe - 1);
  if (len <= 0) {
    fprintf(stderr, "xchg bench cat: cannot find the xchg executable\n");
    return 1;
  }
  if (!find_polars(&b, polars_dir)) return 1;
  int rc = 0;
  for (int c = 0; c < N_CONTENDERS && rc == 0; c++)
    if (!to_file)
      snprintf(b.outputs[c], PATH_MAX, "/dev/null");
    else if (!temporary(b.outputs[c], c == CAT_JSON ? ".jsonl" : ".csv"))
      rc = -1;
  if (rc == 0 && optind < argc)
    snprintf(b.input, sizeof b.input, "%s", argv[optind]);
  else if (rc == 0)
    rc = make_input(&b, rows);
  bench_timing t[N_CONTENDERS];
  if (rc == 0) rc = measure(&b, runs, t);
  if (rc == 0)
    print_results(&b, t, runs, optind < argc ? -1 : rows, json);
  else
    fprintf(stderr, "xchg bench cat: could not prepare or run the benchmark\n");
  for (int c = 0; c < N_CONTENDERS && to_file; c++)
    if (b.outputs[c][0]) remove(b.outputs[c]);
  if (b.input_is_temporary) remove(b.input);
  return rc == 0 ? 0 : 1;
}
