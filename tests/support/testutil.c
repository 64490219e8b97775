/* testutil.c — see testutil.h. */
#include "support/testutil.h"

#include "xchg/buf.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int passed, failed;

/* The case running, for the failure lines: set by tu_main between cases,
 * so that a check on a thread the case started reads it safely. */
static const char *current_case;

/* The suite's name for the summary, once tu_main has begun. */
static const char *current_suite = "test";

int tu_failed_count(void) { return atomic_load(&failed); }

int tu_check_passed(void) {
  atomic_fetch_add(&passed, 1);
  return 1;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Counts a failure and prints its line, "FAIL [case: ][file:line: ]what";
 * what is already formatted. */
static int fail_line(const char *file, int line, const char *what) {
  atomic_fetch_add(&failed, 1);
  char where[512] = "";
  if (file) snprintf(where, sizeof where, "%s:%d: ", base_name(file), line);
  /* One call, so that lines from several threads do not interleave. */
  printf("FAIL %s%s%s%s\n", current_case ? current_case : "", current_case ? ": " : "", where,
         what);
  fflush(stdout);
  return 0;
}

int tu_check_failed(const char *file, int line, const char *cond, const char *fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* TU_CHECK puts a space before the message, so that no message is a
   * valid format too. */
  const char *text = msg[0] == ' ' ? msg + 1 : msg;
  return fail_line(file, line, text[0] != '\0' ? text : cond);
}

int tu_check_status(xchg_status st, const char *file, int line, const char *call,
                    const char *message) {
  if (st == XCHG_OK) return tu_check_passed();
  char msg[4096];
  snprintf(msg, sizeof msg, "%s: %s: %s", call, xchg_status_name(st), message);
  return fail_line(file, line, msg);
}

int tu_errorf(char *msg, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, size, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- named cases ---------------------------------------------------------- */

static int summary(const char *suite) {
  int p = atomic_load(&passed), f = atomic_load(&failed);
  if (p + f == 0) printf("FAIL %s: no check ran\n", suite);
  printf("%s: %d passed, %d failed\n", suite, p, f);
  fflush(stdout);
  return f > 0 || p + f == 0 ? 1 : 0;
}

static void usage(FILE *to, const char *suite) {
  fprintf(to,
          "usage: test_%s [--list] [--shard K/N] [CASE...]\n"
          "  runs every case, or the cases named (shell patterns allowed);\n"
          "  --shard K/N runs the K-th of every N of them, from 0 (ctest runs\n"
          "  a long test's shards side by side)\n"
          "  the test data comes from $XCHG_TESTDATA (ctest sets it)\n",
          suite);
}

/* Marks in selected[] the cases that pattern names: 0, or -1 if none. */
static int select_cases(const char *pattern, const tu_case *cases, size_t n, char *selected) {
  int found = -1;
  for (size_t i = 0; i < n; i++)
    if (fnmatch(pattern, cases[i].name, 0) == 0) {
      selected[i] = 1;
      found = 0;
    }
  return found;
}

/* "K/N" with 0 <= K < N: 0, or -1 if arg is not that. */
static int parse_shard(const char *arg, int *k, int *n) {
  char end;
  return sscanf(arg, "%d/%d%c", k, n, &end) == 2 && *n > 0 && *k >= 0 && *k < *n ? 0 : -1;
}

static void run_case(const tu_case *c) {
  int passed0 = atomic_load(&passed), failed0 = atomic_load(&failed);
  int64_t live0 = xchg_buf_live_count(), bytes0 = tu_live_bytes();
  current_case = c->name;
  c->run();
  int64_t live = xchg_buf_live_count(), bytes = tu_live_bytes();
  TU_CHECK(live == live0 && bytes == bytes0,
           "%lld xchg buffers (%lld bytes) alive after the case, %lld (%lld) before",
           (long long)live, (long long)bytes, (long long)live0, (long long)bytes0);
  current_case = NULL;
  int checks = atomic_load(&passed) - passed0, failures = atomic_load(&failed) - failed0;
  /* The leak check above always counts: a case with nothing else checked nothing. */
  if (checks + failures <= 1) {
    atomic_fetch_add(&failed, 1);
    printf("FAIL %s: no check ran\n", c->name);
  } else if (failures > 0) {
    printf("FAIL %s: %d of %d checks failed\n", c->name, failures, checks + failures);
  } else {
    printf("ok   %s (%d checks)\n", c->name, checks);
  }
  fflush(stdout);
}

int tu_main(int argc, char **argv, const char *suite, const tu_case *cases, size_t n_cases) {
  current_suite = suite;
  char *selected = calloc(n_cases ? n_cases : 1, 1);
  if (selected == NULL) return 1;
  int any = 0, unknown = 0, shard = 0, shards = 1;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--shard") == 0) {
      if (a + 1 == argc || parse_shard(argv[++a], &shard, &shards) != 0) {
        fprintf(stderr, "test_%s: --shard takes K/N, 0 <= K < N\n", suite);
        free(selected);
        return 2;
      }
      continue;
    }
    if (strcmp(argv[a], "--list") == 0) {
      for (size_t i = 0; i < n_cases; i++) printf("%s\n", cases[i].name);
      free(selected);
      return 0;
    }
    if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
      usage(stdout, suite);
      free(selected);
      return 0;
    }
    if (argv[a][0] == '-') {
      fprintf(stderr, "test_%s: unknown option %s\n", suite, argv[a]);
      usage(stderr, suite);
      free(selected);
      return 2;
    }
    any = 1;
    if (select_cases(argv[a], cases, n_cases, selected) != 0) {
      atomic_fetch_add(&failed, 1);
      printf("FAIL %s: no case named %s (--list lists them)\n", suite, argv[a]);
      unknown = 1;
    }
  }
  for (size_t i = 0, nth = 0; i < n_cases && !unknown; i++)
    if ((!any || selected[i]) && nth++ % (size_t)shards == (size_t)shard) run_case(&cases[i]);
  free(selected);
  return summary(suite);
}

/* ---- test data ------------------------------------------------------------ */

/* Ends the test on a problem with its setup, which no check can follow. */
static void give_up(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void give_up(const char *fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fail_line(NULL, 0, msg);
  summary(current_suite);
  exit(1);
}

const char *tu_testdata_dir(void) {
  const char *dir = getenv("XCHG_TESTDATA");
  const char *from = "$XCHG_TESTDATA";
  if (dir == NULL || dir[0] == '\0') {
    dir = XCHG_TESTDATA_DEFAULT;
    from = "the build's default (-DXCHG_SHARED_DIR)";
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    give_up(
        "no test data folder at %s (%s): set XCHG_TESTDATA to the testdata/ folder of the shared "
        "data (holding arrow-gold/ and arrow-fuzz/), or configure the build with "
        "-DXCHG_SHARED_DIR=<shared folder>",
        dir, from);
  return dir;
}

const char *tu_testdata_path(char *out, size_t size, const char *fmt, ...) {
  const char *dir = tu_testdata_dir();
  int n = snprintf(out, size, "%s/", dir);
  va_list ap;
  va_start(ap, fmt);
  int m = n < 0 || (size_t)n >= size ? -1 : vsnprintf(out + n, size - (size_t)n, fmt, ap);
  va_end(ap);
  if (m < 0 || (size_t)(n + m) >= size)
    give_up("a test data path under %s does not fit in %zu bytes", dir, size);
  return out;
}

const char *tu_cli_path(void) {
  const char *cli = getenv("XCHG_CLI");
  const char *from = "$XCHG_CLI";
  if (cli == NULL || cli[0] == '\0') {
    cli = XCHG_CLI_DEFAULT;
    from = "the xchg this build makes";
  }
  if (access(cli, X_OK) != 0)
    give_up(
        "no xchg executable at %s (%s): build the xchg target, or set XCHG_CLI to an xchg "
        "executable",
        cli, from);
  return cli;
}

/* ---- bytes and files -------------------------------------------------------- */

void tu_bytes_append(tu_bytes *b, const void *p, size_t n) {
  uint8_t *grown = realloc(b->data, b->size + n + 1);
  if (grown == NULL) {
    fprintf(stderr, "FAIL: out of memory growing a %zu-byte test buffer\n", b->size);
    abort();
  }
  b->data = grown;
  if (n > 0) memcpy(b->data + b->size, p, n);
  b->size += n;
}

uint8_t *tu_read_file(const char *path, size_t *size) {
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  uint8_t *data = NULL;
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) data = malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data == NULL) return NULL;
  *size = (size_t)n;
  return data;
}

tu_bytes tu_read_bytes(const char *path) {
  tu_bytes b;
  b.data = tu_read_file(path, &b.size);
  return b;
}

int tu_write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  size_t written = fwrite(p, 1, n, f);
  return fclose(f) == 0 && written == n ? 0 : -1;
}

int tu_has_suffix(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

void tu_walk(const char *dir, const char *suffix, tu_file_fn fn, void *ctx) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    /* stat, not d_type: some file systems leave d_type DT_UNKNOWN. */
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode))
      tu_walk(path, suffix, fn, ctx);
    else if (suffix == NULL || tu_has_suffix(e->d_name, suffix))
      fn(path, ctx);
  }
  closedir(d);
}

int64_t tu_live_bytes(void) {
  xchg_buf_metrics m;
  xchg_buf_get_metrics(&m);
  return m.live_bytes;
}

uint64_t tu_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int tu_run(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *cmd = n < 0 ? NULL : malloc((size_t)n + 1);
  if (cmd == NULL) return -1;
  va_start(ap, fmt);
  vsnprintf(cmd, (size_t)n + 1, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  free(cmd);
  return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}
