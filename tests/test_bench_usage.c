/* tests/test_bench_usage.c — `xchg bench` ($XCHG_CLI) as a user meets it
 * before any figure:
 *
 *  - a value out of range (--rows 0, --runs 0, --tasks 0, --processes 0,
 *    --threads 0 of every benchmark that takes them, shuffle's --columns
 *    257 and --codec brotli), a value that is not
 *    a number, a missing value, an unknown option or a stray argument: exit
 *    2, nothing on standard output (no help), and on standard error
 *    exactly two lines, the first naming the option and the valid range,
 *    the second the hint "Try 'xchg bench NAME --help'.";
 *  - `bench cat` finds nodejs-polars whatever the working directory and
 *    wherever the executable is (a copy of xchg in a directory of its own,
 *    run from there), and prints every ratio; pointed at a folder without
 *    it (--polars, XCHG_POLARS_DIR) it exits 1 saying where it looked,
 *    and prints no figures;
 *  - `bench host --processes 1` prints no goal for its one process, and
 *    says why; P=2 still prints the goals;
 *  - `bench broadcast` with tasks on 1 thread (which never overlap): sharing
 *    on decodes once per task, the row is marked and a note under the
 *    table says why;
 *  - `bench decode` measures the validation floor beside every uncompressed
 *    read validated in full (not beside trusted or compressed ones), of the
 *    shape or of a FILE, and prints the validated read against it;
 *  - `bench decode FILE` of IPC streams one after another fails, naming
 *    where the bytes it would not read begin; `--payloads` of an IPC file
 *    fails saying that payloads are cut from an IPC stream;
 *  - a thread that cannot start (bench decode's pool, bench broadcast's
 *    and bench host's threads) ends the run with a line naming it, exit 1. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/cli_run.h"
#include "support/testutil.h"

static const char *cli;

static tu_cli_result run(const char *exe, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static tu_cli_result run(const char *exe, const char *fmt, ...) {
  char args[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  tu_cli_result r;
  if (!tu_cli_run(exe, args, &r)) {
    TU_CHECK(false, "cannot run %s %s", exe, args);
    r.out = strdup("");
    r.err = strdup("");
    r.exit_code = -2;
  }
  return r;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* ---- usage errors ------------------------------------------------------------------ */

typedef struct usage_case {
  const char *bench, *args, *first_line;
} usage_case;

static const usage_case usage_cases[] = {
    {"decode", "--rows 0",
     "xchg bench decode: --rows must be an integer from 1 to 1000000000, not '0'"},
    {"decode", "--runs 0", "xchg bench decode: --runs must be an integer from 1 to 1000, not '0'"},
    {"decode", "--validation some",
     "xchg bench decode: --validation must be full or bounds, not 'some'"},
    {"decode", "--threads 0",
     "xchg bench decode: --threads must be an integer from 1 to 256, not '0'"},
    {"decode", "--rows 12x",
     "xchg bench decode: --rows must be an integer from 1 to 1000000000, not '12x'"},
    {"decode", "/dev/null --columns c4,,c1",
     "xchg bench decode: --columns takes 1 to 64 names, none of them empty"},
    {"decode", "/dev/null --columns ''",
     "xchg bench decode: --columns takes 1 to 64 names, none of them empty"},
    {"decode", "/dev/null --columns c4,",
     "xchg bench decode: --columns takes 1 to 64 names, none of them empty"},
    {"host", "--dir ''", "xchg bench host: --dir must name a directory, not ''"},
    {"host", "--processes 1,2,1", "xchg bench host: --processes lists 1 twice, in '1,2,1'"},
    {"broadcast", "--tasks 2,2", "xchg bench broadcast: --tasks lists 2 twice, in '2,2'"},
    {"shuffle", "--columns 5,5", "xchg bench shuffle: --columns lists '5' twice, in '5,5'"},
    {"shuffle", "--compression lz4,none,lz4",
     "xchg bench shuffle: --compression lists 'lz4' twice, in 'lz4,none,lz4'"},
    {"decode", "--group 5", "xchg bench decode: --group is --payloads': give both"},
    {"decode", "--columns c1",
     "xchg bench decode: --columns and --validation are a FILE's: the shape reads full, narrow "
     "(c4) and trusted"},
    {"decode", "/dev/null --rows 10",
     "xchg bench decode: --rows is the generated shape's: FILE is read whole"},
    {"shuffle", "/dev/null --compression zstd",
     "xchg bench shuffle: with FILE, --compression, --columns, --block-rows and --rows do not "
     "apply, and --format takes one value"},
    {"write", "--rows 0",
     "xchg bench write: --rows must be an integer from 1 to 1000000000, not '0'"},
    {"write", "--runs -1", "xchg bench write: --runs must be an integer from 1 to 1000, not '-1'"},
    {"cat", "--rows 0", "xchg bench cat: --rows must be an integer from 1 to 1000000000, not '0'"},
    {"cat", "--runs 0", "xchg bench cat: --runs must be an integer from 1 to 1000, not '0'"},
    {"rows", "--rows 0",
     "xchg bench rows: --rows must be an integer from 1 to 1000000000, not '0'"},
    {"broadcast", "--rows 0",
     "xchg bench broadcast: --rows must be an integer from 1 to 1000000000, not '0'"},
    {"broadcast", "--tasks 0",
     "xchg bench broadcast: --tasks takes up to 8 comma-separated integers from 1 to 100000, not '0'"},
    {"broadcast", "--tasks 4,,16",
     "xchg bench broadcast: --tasks takes up to 8 comma-separated integers from 1 to 100000, not '4,,16'"},
    {"broadcast", "--threads 0",
     "xchg bench broadcast: --threads takes up to 8 comma-separated integers from 1 to 256, not '0'"},
    {"host", "--processes 0",
     "xchg bench host: --processes takes up to 8 comma-separated integers from 1 to 64, not '0'"},
    {"host", "--processes 1,65",
     "xchg bench host: --processes takes up to 8 comma-separated integers from 1 to 64, not '1,65'"},
    {"host", "--tasks 0", "xchg bench host: --tasks must be an integer from 1 to 100000, not '0'"},
    {"host", "--threads 0", "xchg bench host: --threads must be an integer from 1 to 256, not '0'"},
    {"host", "--runs 0", "xchg bench host: --runs must be an integer from 1 to 64, not '0'"},
    {"host", "--rows 0",
     "xchg bench host: --rows must be an integer from 1 to 1000000000, not '0'"},
    {"host", "--bogus", "xchg bench host: unknown option '--bogus'"},
    {"host", "4", "xchg bench host: unexpected argument '4'"},
    {"decode", "--rows", "xchg bench decode: option '--rows' needs a value"},
    {"rows", "--rows", "xchg bench rows: option '--rows' needs a value"},
    {"broadcast", "--quick --tasks", "xchg bench broadcast: option '--tasks' needs a value"},
    {"cat", "a b", "xchg bench cat: one FILE at most, not 'b' too"},
    {"shuffle", "--rows 0",
     "xchg bench shuffle: --rows must be an integer from 1 to 2147483647, not '0'"},
    {"shuffle", "--threads 0",
     "xchg bench shuffle: --threads must be an integer from 1 to 256, not '0'"},
    {"shuffle", "--runs 1001",
     "xchg bench shuffle: --runs must be an integer from 1 to 1000, not '1001'"},
    {"shuffle", "--columns 5,257",
     "xchg bench shuffle: --columns takes up to 8 comma-separated values, each an integer from 1 "
     "to 256, not '5,257'"},
    {"shuffle", "--compression lz4,brotli",
     "xchg bench shuffle: --compression takes up to 8 comma-separated values, each none, lz4, zstd or "
     "snappy, not 'lz4,brotli'"},
    {"shuffle", "--columns 5,,50",
     "xchg bench shuffle: --columns takes up to 8 comma-separated values, each an integer from 1 "
     "to 256, not '5,,50'"},
    {"shuffle", "--compression lz4,",
     "xchg bench shuffle: --compression takes up to 8 comma-separated values, each none, lz4, "
     "zstd or snappy, not 'lz4,'"},
    /* --codec, the name gen and convert had for --compression too: still read, with a warning */
    {"shuffle", "--codec lz4,",
     "xchg bench shuffle: warning: --codec is deprecated, use --compression (--codec will be "
     "removed in the next release)\nxchg bench shuffle: --compression takes up to 8 "
     "comma-separated values, each none, lz4, zstd or snappy, not 'lz4,'"},
    {"shuffle", "--bogus", "xchg bench shuffle: unknown option '--bogus'"},
    {"shuffle", "--rows", "xchg bench shuffle: option '--rows' needs a value"},
    {"shuffle", "a b", "xchg bench shuffle: one FILE at most, not 'b' too"},
};

static void check_usage_errors(void) {
  for (size_t i = 0; i < sizeof usage_cases / sizeof usage_cases[0]; i++) {
    const usage_case *c = &usage_cases[i];
    tu_cli_result r = run(cli, "bench %s %s", c->bench, c->args);
    char want[512];
    snprintf(want, sizeof want, "%s\nTry 'xchg bench %s --help'.\n", c->first_line, c->bench);
    TU_CHECK(r.exit_code == 2, "bench %s %s: exit %d, expected 2", c->bench, c->args, r.exit_code);
    TU_CHECK(r.out[0] == '\0', "bench %s %s printed on standard output: %.200s", c->bench, c->args,
             r.out);
    TU_CHECK(strcmp(r.err, want) == 0,
             "bench %s %s: standard error (%d lines) is\n%.600s\nexpected\n%s", c->bench, c->args,
             count_lines(r.err), r.err, want);
    tu_cli_result_free(&r);
  }
}

/* ---- bench cat's baseline ---------------------------------------------------------- */

static void check_cat_finds_polars(const char *dir) {
  char exe[4200];
  snprintf(exe, sizeof exe, "%s/xchg", dir);
  TU_CHECK(tu_run("cp '%s' '%s'", cli, exe) == 0, "cannot copy %s to %s", cli, exe);
  /* From the copy's own directory: neither the working directory nor the
   * executable's place holds tests/interop/polars. */
  char cwd[4096];
  const char *cmd = "bench cat --rows 2000 --runs 1 --json";
  unsetenv("XCHG_POLARS_DIR");
  bool moved = getcwd(cwd, sizeof cwd) != NULL && chdir(dir) == 0;
  TU_CHECK(moved, "cannot change into %s", dir);
  tu_cli_result r = run(exe, "%s", cmd);
  TU_CHECK(moved && chdir(cwd) == 0, "cannot change back to %s", cwd);
  TU_CHECK(r.exit_code == 0, "%s, run from %s: exit %d: %.500s", cmd, dir, r.exit_code, r.err);
  json_error_t jerr;
  json_t *doc = json_loads(r.out, 0, &jerr);
  json_t *results = json_object_get(doc, "results");
  TU_CHECK(json_array_size(results) == 3,
           "%s: %zu results, expected xchg csv, xchg json and polars: %.300s", cmd,
           json_array_size(results), r.out);
  size_t i;
  json_t *res;
  json_array_foreach(results, i, res) {
    json_t *ratio = json_object_get(res, "ratio_vs_polars");
    TU_CHECK(json_is_real(ratio) && json_real_value(ratio) > 0,
             "%s: result %zu has no ratio to polars", cmd, i);
  }
  json_decref(doc);
  tu_cli_result_free(&r);

  /* A folder without it: exit 1, where it looked, no figures. */
  r = run(exe, "bench cat --rows 2000 --runs 1 --polars '%s'", dir);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "no baseline") && strstr(r.err, dir) &&
               strstr(r.err, "--polars") && r.out[0] == '\0',
           "bench cat --polars DIR without nodejs-polars: exit %d, stdout %.100s, stderr %.400s",
           r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  setenv("XCHG_POLARS_DIR", dir, 1);
  r = run(exe, "bench cat --rows 2000 --runs 1");
  unsetenv("XCHG_POLARS_DIR");
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "XCHG_POLARS_DIR") && strstr(r.err, dir) &&
               r.out[0] == '\0',
           "XCHG_POLARS_DIR without nodejs-polars: exit %d, stdout %.100s, stderr %.400s",
           r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);

  /* A baseline that runs and fails: its exit status, not a guess at PATH. */
  char fake[4300];
  snprintf(fake, sizeof fake, "%s/failing-polars", dir);
  TU_CHECK(tu_run("mkdir -p '%s/node_modules/nodejs-polars' && echo '{}' > "
                  "'%s/node_modules/nodejs-polars/package.json' && echo 'process.exit(3)' > "
                  "'%s/write_csv.mjs'",
                  fake, fake, fake) == 0,
           "cannot make %s", fake);
  r = run(exe, "bench cat --rows 2000 --runs 1 --polars '%s'", fake);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "polars readIPC+writeCSV failed: exit status 3") &&
               !strstr(r.err, "PATH"),
           "bench cat with a baseline that exits 3: exit %d, stderr %.400s", r.exit_code, r.err);
  tu_cli_result_free(&r);
}

/* ---- bench host and broadcast explain themselves ------------------------------------- */

static const char *line_starting(const char *text, const char *prefix) {
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, prefix, strlen(prefix)) == 0) return p;
  return NULL;
}

static void check_host_one_process(void) {
  tu_cli_result r =
      run(cli, "bench host --processes 1,2 --rows 20000 --tasks 2 --threads 2 --runs 1");
  TU_CHECK(r.exit_code == 0, "bench host --processes 1,2: exit %d: %.300s", r.exit_code, r.err);
  const char *p1 = line_starting(r.out, "P=1:"), *p2 = line_starting(r.out, "P=2:");
  size_t p1_len = p1 ? strcspn(p1, "\n") : 0;
  char line[1024];
  snprintf(line, sizeof line, "%.*s", (int)p1_len, p1 ? p1 : "");
  TU_CHECK(p1 && strstr(line, "goal (") == NULL && strstr(line, "(goal") == NULL &&
               strstr(line, "no goal applies"),
           "bench host P=1 prints goals, or not why it has none: %s", line);
  TU_CHECK(p2 && strncmp(p2, "P=2: host decodes", 17) == 0 && strstr(p2, "(goal 1)"),
           "bench host P=2 lost its goals");
  tu_cli_result_free(&r);
}

static void check_broadcast_note(void) {
  tu_cli_result r = run(cli, "bench broadcast --rows 20000 --tasks 4 --threads 1");
  TU_CHECK(r.exit_code == 0, "bench broadcast: exit %d: %.300s", r.exit_code, r.err);
  int marked = 0;
  for (const char *p = r.out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    char variant[32], share[16];
    int tasks, threads;
    long long decodes;
    double wall, cpu, peak, base;
    char mark[4] = "";
    int n = sscanf(p, "%31s %d %d %15s %lf %lf %lld %lf %lf %3s", variant, &tasks, &threads, share,
                   &wall, &cpu, &decodes, &peak, &base, mark);
    if (n < 9 || strcmp(share, "on") != 0) continue;
    TU_CHECK(decodes == 4, "%s, 4 tasks on 1 thread, share on: %lld decodes, expected one per task",
             variant, decodes);
    TU_CHECK(n == 10 && strcmp(mark, "*") == 0, "%s share on decoded %lld times, unmarked", variant,
             decodes);
    marked += n == 10;
  }
  TU_CHECK(marked == 2, "%d share-on rows marked, expected 2 (lz4-java, zstd-body)", marked);
  TU_CHECK(
      strstr(r.out, "\n* share on, decoded more than once: an entry lives while a task holds it") !=
          NULL,
      "no note under the table explains the repeated decodes: %.2000s", r.out);
  tu_cli_result_free(&r);
}

/* The JSON document `xchg cmd` prints (NULL when it failed or printed
 * none), its run checked to exit 0; *out keeps what it printed. */
static json_t *run_json(const char *cmd, tu_cli_result *out) {
  *out = run(cli, "%s", cmd);
  TU_CHECK(out->exit_code == 0, "%s: exit %d: %.300s", cmd, out->exit_code, out->err);
  json_error_t jerr;
  return json_loads(out->out, 0, &jerr);
}

static void check_decode_validation_floor(void) {
  const char *cmd = "bench decode --rows 30000 --runs 1 --threads 1 --json";
  tu_cli_result r;
  json_t *doc = run_json(cmd, &r), *res;
  size_t i, with = 0;
  json_array_foreach(json_object_get(doc, "results"), i, res) {
    const char *codec = json_string_value(json_object_get(res, "codec")),
               *read = json_string_value(json_object_get(res, "columns"));
    json_t *vfloor = json_object_get(res, "validation_floor_ms");
    int wanted = codec && read && !strcmp(codec, "none") && strcmp(read, "trusted") != 0;
    TU_CHECK(!vfloor == !wanted, "%s: %s %s: validation_floor_ms %s", cmd, codec, read,
             vfloor ? "given" : "missing");
    /* A time, not compared with the zero-copy floor's: one run each, on a
     * loaded host either may take the longer (a CI run saw 0.002 ms
     * against 0.012). */
    TU_CHECK(!vfloor || json_real_value(vfloor) > 0, "%s: %s %s: validation floor %.4f ms", cmd,
             codec, read, json_real_value(vfloor));
    with += vfloor != NULL;
  }
  TU_CHECK(with == 2,
           "%s: %zu results with a validation floor, expected none full and narrow: %.500s", cmd,
           with, r.out);
  json_decref(doc);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode --rows 30000 --runs 1 --threads 1");
  TU_CHECK(line_starting(r.out, "  none: the validation floor ") &&
               strstr(line_starting(r.out, "  none: the validation floor "), "; validated "),
           "bench decode prints no validated read against the validation floor: %.3000s", r.out);
  tu_cli_result_free(&r);
  char file[] = "/tmp/xchg-bench-vfloor-XXXXXX";
  int fd = mkstemp(file);
  if (!TU_CHECK(fd >= 0, "mkstemp: %s", strerror(errno))) return;
  close(fd);
  r = run(cli, "gen cache %s --rows 30000 -f", file);
  TU_CHECK(r.exit_code == 0, "gen cache: exit %d: %.300s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode %s --runs 1 --threads 1", file);
  TU_CHECK(r.exit_code == 0 && line_starting(r.out, "1 thread: the validation floor "),
           "bench decode FILE (exit %d) prints no validation floor under its table: %.2000s",
           r.exit_code, r.out);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode %s --runs 1 --threads 1 --validation bounds", file);
  TU_CHECK(r.exit_code == 0 && !strstr(r.out, "validation floor"),
           "bench decode FILE --validation bounds (exit %d) prints a validation floor: %.2000s",
           r.exit_code, r.out);
  tu_cli_result_free(&r);
  unlink(file);
}

/* On two threads, every read that decompresses is held against the
 * in-order limit too (the bare codec handing its batches to the caller in
 * order): in the JSON of those reads alone, and in the narrow targets. */
static void check_decode_in_order_limit(void) {
  const char *cmd = "bench decode --rows 30000 --runs 1 --threads 2 --json";
  tu_cli_result r;
  json_t *doc = run_json(cmd, &r), *res;
  size_t i, with = 0;
  json_array_foreach(json_object_get(doc, "results"), i, res) {
    const char *codec = json_string_value(json_object_get(res, "codec"));
    json_int_t threads = json_integer_value(json_object_get(res, "threads"));
    json_t *limit = json_object_get(res, "in_order_limit_ms");
    int wanted = codec && strcmp(codec, "none") != 0 && threads == 2;
    TU_CHECK(!limit == !wanted, "%s: %s on %lld threads: in_order_limit_ms %s", cmd, codec,
             (long long)threads, limit ? "given" : "missing");
    TU_CHECK(!limit || json_real_value(limit) > 0, "%s: in-order limit %.4f ms", cmd,
             json_real_value(limit));
    with += limit != NULL;
  }
  TU_CHECK(with == 4,
           "%s: %zu results with an in-order limit, expected lz4 and zstd, full and "
           "narrow: %.500s",
           cmd, with, r.out);
  json_decref(doc);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode --rows 30000 --runs 1 --threads 2");
  const char *line = line_starting(r.out, "  lz4  narrow, 2 threads: ");
  TU_CHECK(r.exit_code == 0 && line && strstr(line, "x the in-order limit, which is ") &&
               line_starting(r.out, "  zstd narrow, 2 threads: "),
           "bench decode --threads 2 (exit %d) holds no narrow read against the in-order limit: "
           "%.3000s",
           r.exit_code, r.out);
  tu_cli_result_free(&r);
}

/* `bench decode FILE` of two IPC streams one after another: one is
 * measured, so the bytes of the second are an error naming where they
 * begin, not figures of the first stream alone (exit 0 once). */
static void check_decode_concatenated(void) {
  char file[] = "/tmp/xchg-bench-concat-XXXXXX";
  int fd = mkstemp(file);
  if (!TU_CHECK(fd >= 0, "mkstemp: %s", strerror(errno))) return;
  close(fd);
  tu_cli_result r = run(cli, "gen cache %s --rows 3000 -f", file);
  TU_CHECK(r.exit_code == 0, "gen cache: exit %d: %.300s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  long long size = 0;
  FILE *f = fopen(file, "rb");
  if (f != NULL && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (f != NULL) fclose(f);
  TU_CHECK(tu_run("cat '%s' '%s' > '%s.2'", file, file, file) == 0, "cannot concatenate %s", file);
  char want[128];
  snprintf(want, sizeof want, "%lld bytes follow the end of the IPC stream or file at byte %lld",
           size, size);
  r = run(cli, "bench decode %s.2 --runs 1 --threads 1", file);
  TU_CHECK(size > 0 && r.exit_code == 1 && strstr(r.err, want) && !strstr(r.out, "median_ms"),
           "bench decode of two IPC streams: exit %d, stdout %.500s, stderr %.500s (want %s)",
           r.exit_code, r.out, r.err, want);
  tu_cli_result_free(&r);
  /* Comet blocks are no IPC stream: the error says what reads them */
  r = run(cli, "gen shuffle %s --format comet --compression lz4 --rows 300 -f", file);
  TU_CHECK(r.exit_code == 0, "gen shuffle: exit %d: %.300s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode %s --runs 1 --threads 1", file);
  TU_CHECK(
      r.exit_code == 1 && strstr(r.err, "is a comet stream, not Arrow IPC: `xchg bench shuffle"),
      "bench decode of Comet blocks: exit %d, stderr %.500s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  /* 65 columns: more than it counts, said, where the 65th was left out of
   * every figure */
  r = run(cli, "gen shuffle %s --columns 65 --rows 64 -f", file);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode %s --runs 1 --threads 1", file);
  TU_CHECK(r.exit_code == 1 && strstr(r.err, "65 columns selected, it reads at most 64"),
           "bench decode of 65 columns: exit %d, stderr %.500s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  tu_run("rm -f '%s' '%s.2'", file, file);
}

/* --payloads cuts an IPC stream into payloads: of an IPC file (gen --file)
 * it says so, rather than reading the file's magic as the schema message. */
static void check_decode_payloads_of_file(void) {
  char file[] = "/tmp/xchg-bench-payloads-XXXXXX";
  int fd = mkstemp(file);
  if (!TU_CHECK(fd >= 0, "mkstemp: %s", strerror(errno))) return;
  close(fd);
  tu_cli_result r = run(cli, "gen cache %s --rows 3000 --file -f", file);
  TU_CHECK(r.exit_code == 0, "gen cache --file: exit %d: %.300s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run(cli, "bench decode %s --payloads --runs 1 --threads 1", file);
  TU_CHECK(r.exit_code == 1 &&
               strstr(r.err,
                      "--payloads: the input is an IPC file, and payloads are cut from an "
                      "IPC stream") &&
               !strstr(r.out, "median_ms"),
           "bench decode --payloads of an IPC file: exit %d, stdout %.500s, stderr %.500s",
           r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  tu_run("rm -f '%s'", file);
}

/* A pool that cannot be made (here: the stack size limit is more than any
 * thread's stack can have) is an error naming the thread, not a silent
 * exit 1 (or, before that, a hang in the limit's threads). */
static void check_pool_fails(void) {
  char file[] = "/tmp/xchg-bench-threads-XXXXXX";
  int fd = mkstemp(file);
  if (!TU_CHECK(fd >= 0, "mkstemp: %s", strerror(errno))) return;
  close(fd);
  tu_cli_result r = run(cli, "gen cache %s --rows 3000 -f", file);
  TU_CHECK(r.exit_code == 0, "gen cache: exit %d: %.300s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  r = run("/bin/sh",
          "-c 'ulimit -s 4000000000 && exec \"$0\" \"$@\"' '%s' bench decode %s --runs 1 "
          "--threads 2",
          cli, file);
  TU_CHECK(r.exit_code == 1 &&
               strstr(r.err, "xchg bench decode: cannot start pool thread 2 of 2") &&
               !strstr(r.out, "median_ms"),
           "bench decode whose pool cannot start: exit %d, stdout %.300s, stderr %.500s",
           r.exit_code, r.out, r.err);
  tu_cli_result_free(&r);
  tu_run("rm -f '%s'", file);
}

/* Threads of bench broadcast and bench host that cannot start (the same
 * stack size limit) end the run saying which, exit 1: unchecked, broadcast
 * printed figures of tasks that never ran (0 decodes) and exited 0, and
 * host's process crashed joining a thread that was never made. */
static void check_threads_fail(void) {
  static const char *const benches[] = {
      "broadcast --rows 1000 --tasks 2 --threads 2",
      "host --processes 1 --rows 1000 --tasks 2 --threads 2 --runs 1"};
  for (int i = 0; i < 2; i++) {
    tu_cli_result r =
        run("/bin/sh", "-c 'ulimit -s 4000000000 && exec \"$0\" \"$@\"' '%s' bench %s", cli,
            benches[i]);
    TU_CHECK(r.exit_code == 1 && strstr(r.err, "xchg bench: could not start thread 1 of 2") &&
                 !strstr(r.err, "signal"),
             "bench %s whose threads cannot start: exit %d, stderr %.500s", benches[i], r.exit_code,
             r.err);
    tu_cli_result_free(&r);
  }
}

static void cat_finds_polars(void) {
  char dir[] = "/tmp/xchg-bench-usage-XXXXXX";
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return;
  check_cat_finds_polars(dir);
  tu_run("rm -rf '%s'", dir);
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  static const tu_case cases[] = {
      {"usage_errors", check_usage_errors},
      {"cat_finds_polars", cat_finds_polars},
      {"host_one_process", check_host_one_process},
      {"broadcast_note", check_broadcast_note},
      {"decode_validation_floor", check_decode_validation_floor},
      {"decode_in_order_limit", check_decode_in_order_limit},
      {"decode_concatenated", check_decode_concatenated},
      {"decode_payloads_of_file", check_decode_payloads_of_file},
      {"pool_fails", check_pool_fails},
      {"threads_fail", check_threads_fail},
  };
  return TU_MAIN(argc, argv, "bench_usage", cases);
}
