/* test_bench_host.c — `xchg bench host --json` on a small broadcast: the
 * command succeeds (every task of every process matched its checksums),
 * prints the documented fields, and its figures follow the host store's
 * rules: off, one decode per process; on, one on the host; the inputs are
 * one copy per process; one decoded copy the same size either way.
 *
 * And the bench's processes end together (it forks one per executor):
 *  - a child killed (SIGKILL) mid-run ends the bench, exit 1, naming the
 *    child and the signal, with no host directory left in --dir, instead of
 *    the bench and the other children waiting for it for ever;
 *  - the bench killed (SIGKILL) takes its children with it, instead of
 *    leaving them to spin for ever, holding their segments;
 *  - the bench interrupted (SIGINT to it alone) while a segment is
 *    published dies of SIGINT, its children with it, and removes its host
 *    directory (segments on /dev/shm are memory). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/testutil.h"

static json_int_t field(json_t *r, const char *name) {
  json_t *v = json_object_get(r, name);
  TU_CHECK(json_is_integer(v), "field %s missing or not an integer", name);
  return json_integer_value(v);
}

static void quick_json(void) {
  const char *cli = tu_cli_path();
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' bench host --rows 20000 --processes 1,3 --tasks 4 --threads 2 "
           "--runs 1 --json",
           cli);
  FILE *p = popen(cmd, "r");
  json_error_t jerr;
  /* Read to the end: stopping at the document's last brace closed the pipe
   * before the command wrote its last newline when a 4 KiB write ended
   * between the two, and the command died of SIGPIPE (exit 141). */
  json_t *doc = p ? json_loadf(p, 0, &jerr) : NULL;
  int status = p ? pclose(p) : -1;
  TU_CHECK(status == 0 && doc, "%s: exit status %d, JSON: %s", cmd, status, doc ? "ok" : jerr.text);
  json_t *results = json_object_get(doc, "results");
  TU_CHECK(json_array_size(results) == 4, "%zu results, want 4", json_array_size(results));
  json_int_t decoded = -1, input_one = -1;
  size_t i;
  json_t *r;
  json_array_foreach(results, i, r) {
    const char *mode = json_string_value(json_object_get(r, "host_sharing"));
    json_int_t procs = field(r, "processes"), decodes = field(r, "decodes");
    int on = mode && strcmp(mode, "on") == 0;
    TU_CHECK(mode && (on || strcmp(mode, "off") == 0), "result %zu: host_sharing %s", i, mode);
    TU_CHECK(field(r, "threads") == 2 && field(r, "tasks") == 4, "result %zu: threads/tasks", i);
    TU_CHECK(json_is_number(json_object_get(r, "task_cpu_ms")) &&
                 json_is_number(json_object_get(r, "wall_ms")),
             "result %zu: task_cpu_ms / wall_ms missing", i);
    TU_CHECK(decodes == (on ? 1 : procs), "result %zu: %lld processes, host %s, %lld decodes", i,
             (long long)procs, mode, (long long)decodes);
    TU_CHECK(field(r, "pss_bytes") > 0, "result %zu: no PSS", i);
    if (decoded < 0)
      decoded = field(r, "decoded_bytes"), input_one = field(r, "input_bytes") / procs;
    TU_CHECK(field(r, "decoded_bytes") == decoded && decoded > 0,
             "result %zu: one decoded copy of %lld bytes, %lld before", i,
             (long long)field(r, "decoded_bytes"), (long long)decoded);
    TU_CHECK(field(r, "input_bytes") == input_one * procs, "result %zu: inputs not one per process",
             i);
    /* Per process: a decoding process always (every process, off); a
     * mapping one only when the store is on and another process decoded. */
    int mapping = on && procs > 1;
    json_t *acq = json_object_get(r, "decoding_process_acquire_ms");
    TU_CHECK(json_is_number(acq) && json_number_value(acq) > 0 &&
                 json_is_number(json_object_get(r, "decoding_process_beyond_read_ms")),
             "result %zu: no decoding process figures", i);
    json_t *m_acq = json_object_get(r, "mapping_process_acquire_ms");
    json_t *m_beyond = json_object_get(r, "mapping_process_beyond_read_ms");
    TU_CHECK(mapping
                 ? json_is_number(m_acq) && json_number_value(m_acq) > 0 && json_is_number(m_beyond)
                 : json_is_null(m_acq) && json_is_null(m_beyond),
             "result %zu: %lld processes, host %s: mapping process figures %s", i, (long long)procs,
             mode, mapping ? "missing" : "where no process mapped");
  }
  json_decref(doc);
}

/* ---- the bench's processes end together ---------------------------------------------- */

static char store_dir[] = "/tmp/xchg-bench-host-test-XXXXXX"; /* --dir */
static char stderr_path[4200];

static void sleep_ms(long ms) {
  nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000}, NULL);
}

/* Starts a long `xchg bench host` (many runs of 2 processes, each run long
 * enough, about a second, for a child found to be still there when it is
 * killed) with its host directories in store_dir and its standard error in
 * stderr_path. */
static pid_t start_bench(void) {
  const char *cli = tu_cli_path();
  pid_t pid = fork();
  if (pid != 0) return pid;
  int out = open("/dev/null", O_WRONLY),
      err = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (out < 0 || err < 0) _exit(126);
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  signal(SIGINT, SIG_DFL);
  execl(cli, cli, "bench", "host", "--rows", "200000", "--processes", "2", "--tasks", "4",
        "--threads", "2", "--runs", "60", "--dir", store_dir, (char *)NULL);
  _exit(127);
}

/* The pids of the processes whose parent is pid (at most max); how many. */
static int children_of(pid_t pid, pid_t *out, int max) {
  int n = 0;
  DIR *d = opendir("/proc");
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL && n < max;) {
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* comm may hold spaces */
    char state;
    int ppid;
    if (close_paren != NULL && sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 &&
        ppid == (int)pid && state != 'Z')
      out[n++] = (pid_t)atoi(e->d_name);
  }
  if (d != NULL) closedir(d);
  return n;
}

/* Waits (a guard, not a measure: 20 s) for the bench's 2 children. */
static int wait_children(pid_t bench, pid_t kids[2]) {
  for (int i = 0; i < 2000; i++, sleep_ms(10))
    if (children_of(bench, kids, 2) == 2) return 2;
  return children_of(bench, kids, 2);
}

/* waitpid with a deadline: the status, or -1 when pid did not end by then. */
static int wait_for(pid_t pid, long ms) {
  int status;
  for (long waited = 0; waited <= ms; waited += 10, sleep_ms(10))
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
  return -1;
}

/* What store_dir holds: "" when empty. */
static void list_store(char *out, size_t size) {
  out[0] = '\0';
  DIR *d = opendir(store_dir);
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.')
      snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? " " : "", e->d_name);
  if (d != NULL) closedir(d);
}

/* Waits (ms at most) until this process, a subreaper, has no children
 * left: the bench's orphans included.  Whether none is left. */
static bool all_children_end(long ms) {
  for (long waited = 0; waited <= ms; waited += 10) {
    pid_t got;
    while ((got = waitpid(-1, NULL, WNOHANG)) > 0) {}
    if (got < 0 && errno == ECHILD) return true;
    sleep_ms(10);
  }
  return false;
}

/* Kills what a failed check left running, and empties store_dir. */
static void clean_up(pid_t bench, const pid_t *kids, int n) {
  if (bench > 0) kill(bench, SIGKILL);
  for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
  if (bench > 0) waitpid(bench, NULL, 0);
  for (int i = 0; i < n; i++) waitpid(kids[i], NULL, WNOHANG);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'/xchg-bench-host-*", store_dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot empty %s\n", store_dir);
}

static void child_killed(void) {
  pid_t bench = start_bench(), kids[2];
  int n = wait_children(bench, kids);
  if (!TU_CHECK(n == 2, "bench host: %d children, want 2", n)) return clean_up(bench, kids, n);
  kill(kids[0], SIGKILL); /* in its run's first second */
  int status = wait_for(bench, 20000);
  TU_CHECK(status >= 0, "bench host still runs 20 s after one of its processes was killed");
  TU_CHECK(status < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 1),
           "bench host after a child was killed: status %#x, want exit 1", status);
  tu_bytes err = tu_read_bytes(stderr_path);
  char want[100];
  snprintf(want, sizeof want, "(pid %d) was killed by signal %d", (int)kids[0], SIGKILL);
  TU_CHECK(err.data != NULL && memmem(err.data, err.size, want, strlen(want)) != NULL,
           "bench host's standard error does not say '%s': %.*s", want, (int)err.size,
           err.data ? (const char *)err.data : "");
  free(err.data);
  char left[4096];
  list_store(left, sizeof left);
  TU_CHECK(status < 0 || left[0] == '\0', "bench host left '%s' in %s", left, store_dir);
  clean_up(status < 0 ? bench : -1, kids, 2);
}

static void parent_killed(void) {
  /* orphans come to this process, which can then tell when they end */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t bench = start_bench(), kids[2];
  int n = wait_children(bench, kids);
  if (!TU_CHECK(n == 2, "bench host: %d children, want 2", n)) return clean_up(bench, kids, n);
  kill(bench, SIGKILL);
  waitpid(bench, NULL, 0);
  bool ended = all_children_end(10000);
  TU_CHECK(ended, "bench host killed: its processes still run 10 s later");
  if (!ended) clean_up(-1, kids, children_of(getpid(), kids, 2));
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* Whether a host directory in store_dir holds a published segment. */
static bool segment_published(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "ls '%s'/xchg-bench-host-*/*.seg >/dev/null 2>&1", store_dir);
  return system(cmd) == 0;
}

static void interrupted(void) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t bench = start_bench(), kids[2];
  bool published = false;
  for (int i = 0; i < 3000 && !published; i++, sleep_ms(5)) published = segment_published();
  if (!TU_CHECK(published, "bench host published no segment in %s", store_dir))
    return clean_up(bench, kids, children_of(bench, kids, 2));
  kill(bench, SIGINT); /* to it alone: its children do not see it */
  int status = wait_for(bench, 20000);
  TU_CHECK(status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGINT,
           "bench host sent SIGINT: status %#x, want killed by SIGINT", status);
  if (status < 0) kill(bench, SIGKILL), waitpid(bench, NULL, 0);
  bool ended = all_children_end(10000);
  TU_CHECK(ended, "bench host interrupted: its processes still run 10 s later");
  char left[4096];
  list_store(left, sizeof left);
  TU_CHECK(left[0] == '\0', "bench host interrupted left '%s' in %s", left, store_dir);
  clean_up(-1, kids, ended ? 0 : children_of(getpid(), kids, 2));
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* A --dir where no host directory can be made (mistyped, or not a
 * directory): exit 1 at once, nothing on standard output, the directory
 * named on standard error (not mkdtemp's bare errno after the table's
 * header). */
static void unusable_dir(void) {
  const char *cli = tu_cli_path();
  char out[4200], err[4200];
  snprintf(out, sizeof out, "%s.out", store_dir);
  snprintf(err, sizeof err, "%s.err", store_dir);
  const char *dirs[] = {"/nonexistent-xchg-dir", "/dev/null"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    int status = tu_run(
        "'%s' bench host --dir %s --processes 1 --rows 1000 --tasks 1 "
        "--threads 1 --runs 1 >'%s' 2>'%s'",
        cli, dirs[i], out, err);
    size_t n_out = 0, n_err = 0;
    uint8_t *o = tu_read_file(out, &n_out), *e = tu_read_file(err, &n_err);
    TU_CHECK(status == 1, "--dir %s: exit status %d, want 1", dirs[i], status);
    TU_CHECK(o && n_out == 0, "--dir %s: %zu bytes on standard output", dirs[i], n_out);
    /* not NUL-terminated: tu_read_file's buffer ends at the file's end */
    TU_CHECK(e && memmem(e, n_err, dirs[i], strlen(dirs[i])) != NULL,
             "--dir %s: standard error does not name it: %.*s", dirs[i], (int)n_err,
             e ? (const char *)e : "");
    free(o);
    free(e);
  }
  unlink(out);
  unlink(err);
}

int main(int argc, char **argv) {
  if (mkdtemp(store_dir) == NULL) {
    perror("test_bench_host: mkdtemp");
    return 1;
  }
  snprintf(stderr_path, sizeof stderr_path, "%s.stderr", store_dir);
  static const tu_case cases[] = {{"quick_json", quick_json},
                                  {"unusable_dir", unusable_dir},
                                  {"child_killed", child_killed},
                                  {"parent_killed", parent_killed},
                                  {"interrupted", interrupted}};
  int rc = TU_MAIN(argc, argv, "bench_host", cases);
  rmdir(store_dir);
  unlink(stderr_path);
  return rc;
}
