/* tests/test_cli_output.c — what the `xchg` commands ($XCHG_CLI) do to the
 * files they write, and how they fail to write (issue 12, items 3 and 4).
 *
 *  - convert IN IN, convert IN LINK (a symbolic link to IN), and convert IN -
 *    with standard output appended to IN are refused; IN is byte-identical
 *    afterwards;
 *  - an existing OUT, and a link to an existing file, are refused without
 *    -f (the file byte-identical, nothing else created); convert -f through
 *    a link to another regular file replaces that file (the link stays a
 *    link); a link to nothing is refused and creates nothing;
 *  - a forced convert that fails after it began writing (a cut input) leaves
 *    the old OUT byte-identical, its mode kept, and no temporary file; one
 *    that succeeds keeps an existing OUT's mode and gives a new one 0666
 *    less the umask; a missing directory and a directory as OUT are clear
 *    errors; an OUT another process creates while convert writes is left
 *    as it is, and convert fails;
 *  - convert, gen, cat and inspect writing to a full device (a node of
 *    /dev/full's numbers made here when mknod is allowed, else /dev/full)
 *    exit 1 with exactly "xchg: write to ... failed: No space left on
 *    device" and the device is still a character device; gen --sums to a
 *    full standard output fails and leaves no OUT, and so do --help,
 *    --version and a benchmark's report;
 *  - cat reading a pipe and writing into a pipe whose reader is gone, with
 *    SIGPIPE ignored, stops at once with "Broken pipe": the test feeding it
 *    manages to write only a small part of the input before its own writes
 *    fail (counted, not timed); with SIGPIPE not ignored, it stops as soon,
 *    killed by SIGPIPE, and prints nothing;
 *  - gen --sums into a pipe whose reader is gone (SIGPIPE not ignored) is
 *    killed by SIGPIPE and leaves neither OUT nor its temporary file;
 *  - inspect of a cut input (2000 messages, then the cut) prints nothing to
 *    standard output;
 *  - gen killed by SIGTERM while writing removes its temporary file, and
 *    so does gen sent SIGTERM in a burst (40 tries);
 *    inspect - killed while it copies standard input leaves no file;
 *  - inspect - with a TMPDIR that does not exist names that directory, and
 *    so does a failed write of its copy of standard input (a file size
 *    limit standing for a full disk), with what the copy holds;
 *  - an input file truncated by another process while cat (a path, or
 *    standard input redirected from it) or convert reads it: exit 1 with
 *    the message naming it, convert's temporary file removed, where SIGBUS
 *    killed; a SIGBUS sent by kill still kills.
 * Runs as root in CI: permissions cannot make a directory unwritable, so
 * write failures come from /dev/full and cut inputs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/cache_data.h"
#include "support/testutil.h"

static char dir[] = "/tmp/xchg-out-XXXXXX";
static const char *cli;
static char gold_stream[4096];
static char stderr_path[4200]; /* where the CLI's standard error goes */

static const char enospc_stdout[] =
    "xchg: write to standard output failed: No space left on device\n";

/* The full device the test writes to: a node of its own (char 1,7 made
 * with mknod, so that a regression that unlinks its output removes the
 * test's node, not the system's /dev/full), else /dev/full itself. */
static char full_device[4200];

/* ---- running the CLI ----------------------------------------------------------- */

typedef struct cli_run {
  int exit_code; /* -1 when killed by a signal */
  int signal;    /* the signal that killed it, else 0 */
  tu_bytes err;  /* standard error */
} cli_run;

/* dir/name, in one of 32 buffers used in turn (a check needs only a few;
 * clear_dir, which uses one per file, keeps no pointer). */
static char *path_in_dir(const char *name) {
  static char paths[32][4200];
  static int next;
  char *p = paths[next++ % 32];
  snprintf(p, sizeof paths[0], "%s/%s", dir, name);
  return p;
}

/* Starts $XCHG_CLI args... (NULL-terminated) with standard input from
 * in_fd and standard output to out_fd (-1: /dev/null for either; CLOSED:
 * none, as `>&-` starts it) and
 * standard error into a file; with ignore_sigpipe, SIGPIPE is ignored in
 * the child, as a shell with `trap '' PIPE` would leave it. */
enum { CLOSED = -2 };

static pid_t start_cli(const char *const *args, int in_fd, int out_fd, bool ignore_sigpipe) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int null_fd = open("/dev/null", O_RDWR);
  int err_fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (null_fd < 0 || err_fd < 0) _exit(126);
  dup2(in_fd >= 0 ? in_fd : null_fd, STDIN_FILENO);
  if (out_fd == CLOSED)
    close(STDOUT_FILENO);
  else
    dup2(out_fd >= 0 ? out_fd : null_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  signal(SIGPIPE, ignore_sigpipe ? SIG_IGN : SIG_DFL);
  char *argv[32] = {(char *)cli};
  for (int i = 0; args[i] != NULL && i < 30; i++) argv[i + 1] = (char *)args[i];
  execv(cli, argv);
  _exit(127);
}

static cli_run finish_cli(pid_t pid) {
  cli_run r = {-1, 0, {0}};
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  tu_bytes raw = tu_read_bytes(stderr_path);
  tu_bytes_append(&r.err, raw.data != NULL ? raw.data : (uint8_t *)"",
                  raw.size); /* keeps a spare byte */
  r.err.data[r.err.size] = '\0';
  free(raw.data);
  return r;
}

static cli_run run_cli(const char *const *args, int out_fd) {
  return finish_cli(start_cli(args, -1, out_fd, false));
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static bool stderr_is(const cli_run *r, const char *want) {
  return strcmp((const char *)r->err.data, want) == 0;
}
static bool stderr_has(const cli_run *r, const char *want) {
  return strstr((const char *)r->err.data, want) != NULL;
}

/* ---- files --------------------------------------------------------------------- */

static bool same_bytes(const tu_bytes *a, const char *path) {
  tu_bytes b = tu_read_bytes(path);
  bool same = b.data != NULL && a->data != NULL && a->size == b.size &&
              memcmp(a->data, b.data, a->size) == 0;
  free(b.data);
  return same;
}

static void copy_file(const char *from, const char *to) {
  tu_bytes b = tu_read_bytes(from);
  TU_CHECK(b.data != NULL && tu_write_file(to, b.data, b.size) == 0,
           "%s: cannot copy the test input", to);
  free(b.data);
}

/* The names in the test directory, besides "stderr", joined by spaces in
 * sorted order ("" when none). */
static void list_dir(char *out, size_t size) {
  char names[64][256];
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL && n < 64)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "stderr"))
      snprintf(names[n++], sizeof names[0], "%s", e->d_name);
  if (d != NULL) closedir(d);
  qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  out[0] = '\0';
  for (int i = 0; i < n; i++)
    snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", names[i]);
}

static void clear_dir(void) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(path_in_dir(e->d_name));
  if (d != NULL) closedir(d);
}

static void check_dir_holds(const char *what, const char *want) {
  char got[4096];
  list_dir(got, sizeof got);
  TU_CHECK(strcmp(got, want) == 0, "%s: the directory holds \"%s\", not \"%s\"", what, got, want);
}

static bool is_char_device(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

static int mode_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* ---- convert onto its own input -------------------------------------------------- */

static void check_same_file(void) {
  clear_dir();
  char *in = path_in_dir("in.stream"), *link = path_in_dir("link");
  copy_file(gold_stream, in);
  tu_bytes before = tu_read_bytes(in);
  cli_run r = run_cli(ARGS("convert", in, in), -1);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "same file"), "convert IN IN: exit %d: %s",
           r.exit_code, r.err.data);
  TU_CHECK(same_bytes(&before, in), "convert IN IN changed IN");
  free(r.err.data);

  TU_CHECK(symlink("in.stream", link) == 0, "symlink: %s", strerror(errno));
  r = run_cli(ARGS("convert", in, link), -1);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "same file"), "convert IN LINK-TO-IN: exit %d: %s",
           r.exit_code, r.err.data);
  TU_CHECK(same_bytes(&before, in), "convert IN LINK-TO-IN changed IN");
  free(r.err.data);

  int append = open(in, O_WRONLY | O_APPEND);
  r = run_cli(ARGS("convert", in, "-"), append);
  close(append);
  TU_CHECK(
      r.exit_code == 1 && stderr_has(&r, "xchg: standard output: is the same file as the input"),
      "convert IN - >> IN: exit %d: %s", r.exit_code, r.err.data);
  TU_CHECK(same_bytes(&before, in), "convert IN - >> IN changed IN");
  free(r.err.data);
  free(before.data);
  check_dir_holds("convert onto IN", "in.stream link");
}

/* ---- symbolic links and modes ---------------------------------------------------- */

static void check_links_and_modes(void) {
  clear_dir();
  char *in = path_in_dir("in.stream"), *plain = path_in_dir("plain"),
       *target = path_in_dir("target");
  char *link = path_in_dir("link"), *dangling = path_in_dir("dangling");
  copy_file(gold_stream, in);
  mode_t old_umask = umask(0);
  cli_run r = run_cli(ARGS("convert", in, plain, "--compression", "zstd"), -1);
  TU_CHECK(r.exit_code == 0, "convert to a new file: exit %d: %s", r.exit_code, r.err.data);
  TU_CHECK(mode_of(plain) == 0666, "a new OUT has mode %o under umask 0, not 0666", mode_of(plain));
  free(r.err.data);
  umask(old_umask);
  tu_bytes want = tu_read_bytes(plain);

  copy_file(gold_stream, target);
  chmod(target, 0640);
  TU_CHECK(symlink("target", link) == 0, "symlink: %s", strerror(errno));
  tu_bytes old_target = tu_read_bytes(target);
  const char *const *unforced[] = {ARGS("convert", in, target), ARGS("convert", in, link),
                                   ARGS("gen", "cache", link, "--rows", "10")};
  for (int i = 0; i < 3; i++) {
    r = run_cli(unforced[i], -1);
    TU_CHECK(r.exit_code == 1 && stderr_has(&r, "already exists: not replaced (use -f/--force"),
             "%s %s onto an existing file without -f: exit %d: %s", unforced[i][0], unforced[i][2],
             r.exit_code, r.err.data);
    TU_CHECK(same_bytes(&old_target, target), "%s without -f changed the existing file",
             unforced[i][0]);
    free(r.err.data);
  }
  free(old_target.data);
  r = run_cli(ARGS("convert", in, link, "-f", "--compression", "zstd"), -1);
  struct stat st;
  TU_CHECK(r.exit_code == 0, "convert through a link: exit %d: %s", r.exit_code, r.err.data);
  TU_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link OUT is no longer a link");
  TU_CHECK(same_bytes(&want, target), "the file the link points to was not replaced by the output");
  TU_CHECK(mode_of(target) == 0640, "the replaced file has mode %o, not its old 0640",
           mode_of(target));
  free(r.err.data);
  free(want.data);

  TU_CHECK(symlink("nowhere", dangling) == 0, "symlink: %s", strerror(errno));
  r = run_cli(ARGS("convert", in, dangling), -1);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "symbolic link"),
           "convert to a dangling link: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);

  r = run_cli(ARGS("convert", in, path_in_dir("nodir/out")), -1);
  TU_CHECK(
      r.exit_code == 1 && stderr_has(&r, "nodir") && stderr_has(&r, "No such file or directory"),
      "convert into a missing directory: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);
  r = run_cli(ARGS("convert", in, dir), -1);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "is a directory"),
           "convert into a directory: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);
  check_dir_holds("links and modes", "dangling in.stream link plain target");
}

/* ---- a failure after writing began ----------------------------------------------- */

static void check_failure_keeps_old_output(void) {
  clear_dir();
  char *big = path_in_dir("big.stream"), *cut = path_in_dir("cut.stream"),
       *out = path_in_dir("out");
  cli_run r = run_cli(ARGS("gen", "cache", big, "--rows", "30000"), -1);
  TU_CHECK(r.exit_code == 0, "gen cache: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);
  tu_bytes whole = tu_read_bytes(big);
  /* the schema and the first two batches whole, then a cut in the third */
  TU_CHECK(whole.data != NULL && tu_write_file(cut, whole.data, whole.size * 5 / 6) == 0,
           "cut input: write");
  free(whole.data);
  unlink(big);
  copy_file(gold_stream, out);
  chmod(out, 0604);
  tu_bytes before = tu_read_bytes(out);
  r = run_cli(ARGS("convert", cut, out, "--force"), -1);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "cut.stream"), "convert of a cut input: exit %d: %s",
           r.exit_code, r.err.data);
  TU_CHECK(same_bytes(&before, out), "a failed convert changed the old OUT");
  TU_CHECK(mode_of(out) == 0604, "a failed convert changed the mode of OUT to %o", mode_of(out));
  free(r.err.data);
  free(before.data);
  check_dir_holds("a failed convert", "cut.stream out");
}

/* ---- writing to a full device ----------------------------------------------------- */

/* A char device 1,7 of the test's own that can be opened, else /dev/full. */
static void choose_full_device(void) {
  snprintf(full_device, sizeof full_device, "%s.full", dir);
  int fd =
      mknod(full_device, S_IFCHR | 0666, makedev(1, 7)) == 0 ? open(full_device, O_WRONLY) : -1;
  if (fd >= 0) {
    close(fd);
    return;
  }
  unlink(full_device);
  snprintf(full_device, sizeof full_device, "/dev/full");
}

static void check_full_device(void) {
  clear_dir();
  char enospc_full[4400];
  snprintf(enospc_full, sizeof enospc_full, "xchg: write to '%s' failed: No space left on device\n",
           full_device);
  TU_CHECK(is_char_device(full_device), "%s is not a character device: the test cannot run",
           full_device);
  char *in = path_in_dir("in.stream"), *out = path_in_dir("out");
  copy_file(gold_stream, in);
  cli_run r = run_cli(ARGS("convert", in, full_device), -1);
  TU_CHECK(r.exit_code == 1 && stderr_is(&r, enospc_full), "convert IN %s: exit %d: %s",
           full_device, r.exit_code, r.err.data);
  free(r.err.data);
  r = run_cli(ARGS("gen", "cache", full_device, "--rows", "20000"), -1);
  TU_CHECK(r.exit_code == 1 && stderr_is(&r, enospc_full), "gen cache %s: exit %d: %s", full_device,
           r.exit_code, r.err.data);
  free(r.err.data);
  TU_CHECK(is_char_device(full_device), "%s is gone or no longer a character device", full_device);

  int full = open(full_device, O_WRONLY);
  TU_CHECK(full >= 0, "cannot open %s: %s", full_device, strerror(errno));
  const char *const *cases[] = {ARGS("convert", in, "-"), ARGS("cat", in),
                                ARGS("cat", in, "--format", "arrow-json"), ARGS("inspect", in)};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    r = run_cli(cases[i], full);
    TU_CHECK(r.exit_code == 1 && stderr_is(&r, enospc_stdout), "%s %s > full device: exit %d: %s",
             cases[i][0], cases[i][1], r.exit_code, r.err.data);
    free(r.err.data);
  }
  r = run_cli(ARGS("gen", "rows", out, "--rows", "100", "--sums"), full);
  TU_CHECK(r.exit_code == 1 && stderr_is(&r, enospc_stdout),
           "gen --sums > full device: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);
  /* what goes through stdio, unchecked as it is written: help texts (the
   * inspect one longer than stdio's buffer), --version, a benchmark's report */
  const char *const *printed[] = {ARGS("--help"), ARGS("--version"), ARGS("inspect", "--help"),
                                  ARGS("bench", "rows", "--help"),
                                  ARGS("bench", "rows", "--rows", "1000")};
  for (size_t i = 0; i < sizeof printed / sizeof printed[0]; i++) {
    r = run_cli(printed[i], full);
    TU_CHECK(r.exit_code == 1 && stderr_is(&r, enospc_stdout), "%s %s > full device: exit %d: %s",
             printed[i][0], printed[i][1] ? printed[i][1] : "", r.exit_code, r.err.data);
    free(r.err.data);
  }
  close(full);
  check_dir_holds("writing to /dev/full", "in.stream");
}

/* ---- a reader that went away ----------------------------------------------------- */

/* cat - | (reader closed): cat must stop at its first failed write.  The
 * input comes through a pipe from this process: had cat gone on decoding,
 * it would have read all of it; stopped, it reads a batch or so, and this
 * process's writes fail (EPIPE) once it is gone.  SIGPIPE ignored, cat
 * says why and exits 1; not ignored, it dies of SIGPIPE without a word, as
 * `cat` or `zstd -dc` do (and as inspect, whose writes are the main
 * thread's, always did), although its rows are written by a thread of its
 * own that blocks SIGPIPE. */
static void cat_into_closed_pipe(bool ignore_sigpipe) {
  clear_dir();
  char *big = path_in_dir("big.stream");
  cli_run r = run_cli(ARGS("gen", "cache", big, "--rows", "200000"), -1);
  TU_CHECK(r.exit_code == 0, "gen cache: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);
  tu_bytes input = tu_read_bytes(big);
  int in_pipe[2], out_pipe[2];
  if (input.data == NULL || pipe(in_pipe) != 0 || pipe(out_pipe) != 0 ||
      fcntl(in_pipe[1], F_SETFD, FD_CLOEXEC) != 0) { /* cat must see the end of its input */
    TU_CHECK(0, "broken pipe: cannot set up the input and the pipes");
    free(input.data);
    return;
  }
  close(out_pipe[0]); /* no reader: cat's first write fails */
  pid_t pid = start_cli(ARGS("cat", "-"), in_pipe[0], out_pipe[1], ignore_sigpipe);
  close(in_pipe[0]);
  close(out_pipe[1]);
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  size_t fed = 0;
  while (fed < input.size) {
    ssize_t k =
        write(in_pipe[1], input.data + fed, input.size - fed < 65536 ? input.size - fed : 65536);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    fed += (size_t)k;
  }
  close(in_pipe[1]);
  signal(SIGPIPE, old);
  r = finish_cli(pid);
  if (ignore_sigpipe)
    TU_CHECK(
        r.exit_code == 1 && stderr_is(&r, "xchg: write to standard output failed: Broken pipe\n"),
        "cat into a closed pipe: exit %d, signal %d: %s", r.exit_code, r.signal, r.err.data);
  else
    TU_CHECK(r.signal == SIGPIPE && r.err.size == 0,
             "cat into a closed pipe, SIGPIPE not ignored: exit %d, signal %d: %s", r.exit_code,
             r.signal, r.err.data);
  TU_CHECK(fed < input.size / 4,
           "cat into a closed pipe read %zu of %zu input bytes before stopping", fed, input.size);
  free(r.err.data);
  free(input.data);
}

static void check_broken_pipe(void) { cat_into_closed_pipe(true); }
static void check_broken_pipe_sigpipe(void) { cat_into_closed_pipe(false); }

/* gen OUT --sums | (reader gone), SIGPIPE not ignored: the sums are printed
 * before OUT is put in place, and the SIGPIPE that kills gen there must
 * not leave its temporary file (nor OUT) behind. */
static void check_sums_into_closed_pipe(void) {
  clear_dir();
  int out_pipe[2];
  if (!TU_CHECK(pipe(out_pipe) == 0, "pipe: %s", strerror(errno))) return;
  close(out_pipe[0]); /* no reader: gen's first write to standard output fails */
  pid_t pid = start_cli(ARGS("gen", "cache", path_in_dir("out"), "--rows", "1000", "--sums"), -1,
                        out_pipe[1], false);
  close(out_pipe[1]);
  cli_run r = finish_cli(pid);
  TU_CHECK(r.signal == SIGPIPE && r.err.size == 0,
           "gen --sums into a closed pipe: exit %d, signal %d: %s", r.exit_code, r.signal,
           r.err.data);
  free(r.err.data);
  check_dir_holds("gen --sums into a closed pipe", "");
}

/* ---- inspect prints nothing when it fails ------------------------------------------ */

/* 2000 batches of one row: far more lines than inspect holds before it
 * would flush them if it streamed, then a cut in the last message. */
static void check_inspect_failure_prints_nothing(void) {
  clear_dir();
  char *cut = path_in_dir("cut.stream"), *shown = path_in_dir("shown");
  int64_t rows[2000];
  for (int i = 0; i < 2000; i++) rows[i] = 1;
  xchg_buf *stream = NULL;
  TU_CHECK(cd_make_stream(0, rows, 2000, 0, XCHG_BLOCK_NONE, &stream) == 0 &&
               tu_write_file(cut, xchg_buf_data(stream), xchg_buf_size(stream) - 20) == 0,
           "cut input: cannot make it");
  xchg_buf_unref(stream);
  int out = open(shown, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  cli_run r = run_cli(ARGS("inspect", cut), out);
  close(out);
  size_t size = 0;
  uint8_t *printed = tu_read_file(shown, &size);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "cut.stream"), "inspect of a cut input: exit %d: %s",
           r.exit_code, r.err.data);
  TU_CHECK(printed != NULL && size == 0,
           "inspect of a cut input printed %zu bytes before its error", size);
  free(printed);
  free(r.err.data);
}

/* ---- killed while writing ----------------------------------------------------------- */

static bool temp_file_exists(void) {
  char names[4096];
  list_dir(names, sizeof names);
  return strstr(names, ".xchg-") != NULL;
}

static void check_killed_while_writing(void) {
  clear_dir();
  pid_t pid =
      start_cli(ARGS("gen", "cache", path_in_dir("out"), "--rows", "1000000000"), -1, -1, false);
  /* waits for the temporary file, a few seconds at most (a guard, not a measure) */
  for (int i = 0; i < 3000 && !temp_file_exists(); i++)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  TU_CHECK(temp_file_exists(), "gen did not create its temporary file beside OUT");
  kill(pid, SIGTERM);
  cli_run r = finish_cli(pid);
  TU_CHECK(r.signal == SIGTERM, "gen killed by SIGTERM: exit %d, signal %d", r.exit_code, r.signal);
  free(r.err.data);
  check_dir_holds("gen killed by SIGTERM", "");
}

/* Signals in a burst, as `timeout` sends them (one to the command, one to
 * its process group) and a scheduler may: a signal arriving just after the
 * first was taken must not kill the command before its handler has removed
 * the temporary file.  The window is a few instructions of the kernel's,
 * so the signals are sent in a loop until the command is gone, and the
 * whole is tried 40 times (with the handler reset as the first signal was
 * taken, about one try in six left the file on a 2-core host). */
static void check_killed_by_a_burst(void) {
  for (int attempt = 0; attempt < 40; attempt++) {
    clear_dir();
    pid_t pid =
        start_cli(ARGS("gen", "cache", path_in_dir("out"), "--rows", "1000000000"), -1, -1, false);
    for (int i = 0; i < 3000 && !temp_file_exists(); i++)
      nanosleep(&(struct timespec){0, 2000000}, NULL);
    if (!TU_CHECK(temp_file_exists(), "gen did not create its temporary file beside OUT")) {
      kill(pid, SIGKILL);
      free(finish_cli(pid).err.data);
      return;
    }
    int status;
    while (waitpid(pid, &status, WNOHANG) == 0) kill(pid, SIGTERM);
    bool by_term = WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
    char names[4096];
    list_dir(names, sizeof names);
    bool left = strstr(names, ".xchg-") != NULL;
    TU_CHECK(by_term && !left, "try %d: gen killed by a burst of SIGTERM: status %#x, left \"%s\"",
             attempt + 1, status, names);
    if (!by_term || left) return;
  }
}

/* Starts $XCHG_CLI args... reading a pipe, and writes the first half of in
 * into it; *feed is the write end, kept open (only this process has it:
 * the command sees the end of its input when it is closed), -1 on failure. */
static pid_t start_cli_half_fed(const char *const *args, const tu_bytes *in, int *feed) {
  int in_pipe[2];
  *feed = -1;
  if (in->data == NULL || pipe(in_pipe) != 0 || fcntl(in_pipe[1], F_SETFD, FD_CLOEXEC) != 0) {
    TU_CHECK(0, "input or pipe: %s", strerror(errno));
    return -1;
  }
  pid_t pid = start_cli(args, in_pipe[0], -1, false);
  close(in_pipe[0]);
  size_t half = in->size / 2;
  TU_CHECK(write(in_pipe[1], in->data, half) == (ssize_t)half, "write: %s", strerror(errno));
  *feed = in_pipe[1];
  return pid;
}

/* Two writers of one OUT: convert - OUT is given half its input, another
 * process creates OUT meanwhile, then convert gets the rest and finishes.
 * It must fail and leave the other's file as it is (no -f). */
static void check_created_meanwhile(void) {
  clear_dir();
  char *out = path_in_dir("out"), *input = path_in_dir("in.stream");
  /* big enough that convert writes (and so has its temporary file) before
   * it has read half of it */
  cli_run g = run_cli(ARGS("gen", "cache", input, "--rows", "100000"), -1);
  TU_CHECK(g.exit_code == 0, "gen cache: exit %d: %s", g.exit_code, g.err.data);
  free(g.err.data);
  tu_bytes in = tu_read_bytes(input);
  int feed;
  pid_t pid = start_cli_half_fed(ARGS("convert", "-", out), &in, &feed);
  if (feed < 0) {
    free(in.data);
    return;
  }
  size_t half = in.size / 2;
  /* waits for convert's temporary file, a few seconds at most (a guard, not a measure) */
  for (int i = 0; i < 3000 && !temp_file_exists(); i++)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  TU_CHECK(temp_file_exists(), "convert did not create its temporary file beside OUT");
  static const char theirs[] = "another process's file\n";
  TU_CHECK(tu_write_file(out, theirs, sizeof theirs - 1) == 0, "cannot write %s", out);
  TU_CHECK(write(feed, in.data + half, in.size - half) == (ssize_t)(in.size - half), "write: %s",
           strerror(errno));
  close(feed);
  cli_run r = finish_cli(pid);
  TU_CHECK(r.exit_code == 1 && stderr_has(&r, "was created by someone else while it was written"),
           "convert onto an OUT made meanwhile: exit %d: %s", r.exit_code, r.err.data);
  tu_bytes now = tu_read_bytes(out);
  TU_CHECK(now.size == sizeof theirs - 1 && memcmp(now.data, theirs, now.size) == 0,
           "convert replaced the OUT another process made while it wrote");
  free(now.data);
  free(r.err.data);
  free(in.data);
  check_dir_holds("convert onto an OUT made meanwhile", "in.stream out");
}

/* Empties the test directory, then writes `rows` rows of Comet blocks to
 * blocks.comet in it and returns their bytes (tu_read_bytes's). */
static tu_bytes fresh_comet_blocks(const char *rows) {
  clear_dir();
  char *blocks = path_in_dir("blocks.comet");
  cli_run r =
      run_cli(ARGS("gen", "shuffle", blocks, "--format", "comet", "--rows", rows, "-f"), -1);
  TU_CHECK(r.exit_code == 0, "gen shuffle: exit %d: %s", r.exit_code, r.err.data);
  free(r.err.data);
  return tu_read_bytes(blocks);
}

/* inspect - copies a pipe of blocks to a file of its own (it reads them
 * twice); killed while it copies, it leaves nothing in TMPDIR. */
static void check_killed_while_spooling(void) {
  tu_bytes comet = fresh_comet_blocks("20000");
  int feed;
  setenv("TMPDIR", dir, 1); /* the child's */
  /* the first half of the blocks, the write end kept open: inspect copies
   * them and waits for the rest */
  pid_t pid = start_cli_half_fed(ARGS("inspect", "-"), &comet, &feed);
  unsetenv("TMPDIR");
  if (feed < 0) {
    free(comet.data);
    return;
  }
  /* time to copy them (a guard, not a measure): a file of the copy's
   * would show up by then */
  char names[4096] = "";
  for (int i = 0; i < 100 && strstr(names, "xchg-stdin") == NULL; i++) {
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    list_dir(names, sizeof names);
  }
  kill(pid, SIGTERM);
  cli_run r = finish_cli(pid);
  close(feed);
  TU_CHECK(r.signal == SIGTERM, "inspect - killed by SIGTERM: exit %d, signal %d: %s", r.exit_code,
           r.signal, r.err.data);
  free(r.err.data);
  free(comet.data);
  check_dir_holds("inspect - killed while copying standard input", "blocks.comet");
}

/* inspect - of blocks copies the pipe to a file in TMPDIR; a TMPDIR that
 * does not exist is an error naming that directory and the variable, not
 * the name of a file mkstemp tried and nobody made. */
static void check_spool_dir_missing(void) {
  tu_bytes comet = fresh_comet_blocks("64");
  char *missing = path_in_dir("missing");
  int feed;
  setenv("TMPDIR", missing, 1); /* the child's */
  pid_t pid = start_cli_half_fed(ARGS("inspect", "-"), &comet, &feed);
  unsetenv("TMPDIR");
  if (feed >= 0) {
    size_t half = comet.size / 2;
    TU_CHECK(write(feed, comet.data + half, comet.size - half) == (ssize_t)(comet.size - half),
             "write: %s", strerror(errno));
    close(feed);
  }
  cli_run r = finish_cli(pid);
  char want[4400];
  snprintf(want, sizeof want,
           "xchg: <stdin>: cannot create a temporary file in '%s' (TMPDIR) to hold standard "
           "input: No such file or directory\n",
           missing);
  TU_CHECK(r.exit_code == 1 && stderr_is(&r, want), "inspect - with TMPDIR missing: exit %d: %s",
           r.exit_code, r.err.data);
  free(r.err.data);
  free(comet.data);
  check_dir_holds("inspect - with TMPDIR missing", "blocks.comet");
}

/* $XCHG_CLI args... reading in from a pipe, its files limited to limit
 * bytes (RLIMIT_FSIZE, SIGXFSZ ignored: a write past it fails with EFBIG,
 * as on a full disk), which the test's own writes are not. */
static cli_run run_cli_fsize_limited(const char *const *args, const tu_bytes *in, rlim_t limit) {
  int in_pipe[2];
  /* whole in the pipe before the command starts: nothing waits on it */
  if (in->data == NULL || in->size > 60000 || pipe(in_pipe) != 0) {
    TU_CHECK(0, "input (%zu bytes) or pipe: %s", in->size, strerror(errno));
    return (cli_run){-1, 0, {0}};
  }
  TU_CHECK(write(in_pipe[1], in->data, in->size) == (ssize_t)in->size, "write: %s",
           strerror(errno));
  close(in_pipe[1]);
  struct rlimit old, limited;
  getrlimit(RLIMIT_FSIZE, &old);
  limited = (struct rlimit){limit, old.rlim_max};
  void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN); /* the child keeps SIG_IGN through exec */
  TU_CHECK(setrlimit(RLIMIT_FSIZE, &limited) == 0, "setrlimit: %s", strerror(errno));
  pid_t pid = start_cli(args, in_pipe[0], -1, false);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_xfsz);
  close(in_pipe[0]);
  return finish_cli(pid);
}

/* inspect - of blocks copies the pipe to a file in TMPDIR; a write to it
 * that fails (a full disk) names the directory and what the file holds,
 * not the name of the file, removed as soon as it was made. */
static void check_spool_write_fails(void) {
  tu_bytes comet = fresh_comet_blocks("640");
  setenv("TMPDIR", dir, 1); /* the child's */
  cli_run r = run_cli_fsize_limited(ARGS("inspect", "-"), &comet, 4096);
  unsetenv("TMPDIR");
  char want[4400];
  snprintf(want, sizeof want,
           "xchg: <stdin>: cannot write the temporary file in '%s' (TMPDIR) that holds standard "
           "input: File too large\n",
           dir);
  TU_CHECK(r.exit_code == 1 && stderr_is(&r, want),
           "inspect - with the copy's writes failing: exit %d: %s", r.exit_code,
           r.err.data != NULL ? (char *)r.err.data : "");
  free(r.err.data);
  free(comet.data);
  check_dir_holds("inspect - with the copy's writes failing", "blocks.comet");
}

/* gen OUT --sums started with standard output closed: the sums' write
 * fails as any write to a closed descriptor does (EBADF), said, exit 1, no
 * OUT; the descriptor's number is not OUT's temporary file (the sums went
 * into OUT, and gen exited 0, leaving a stream with 305 bytes after it). */
static void check_stdout_closed(void) {
  clear_dir();
  cli_run r = finish_cli(start_cli(
      ARGS("gen", "cache", path_in_dir("out"), "--rows", "1000", "--sums"), -1, CLOSED, false));
  TU_CHECK(r.exit_code == 1 &&
               stderr_is(&r, "xchg: write to standard output failed: Bad file descriptor\n"),
           "gen --sums with standard output closed: exit %d, signal %d: %s", r.exit_code, r.signal,
           r.err.data);
  free(r.err.data);
  check_dir_holds("gen --sums with standard output closed", "");
}

/* ---- an input cut short while it is read ------------------------------------------ */

/* What the command says of its input (as its errors name it: the path,
 * "<stdin>") cut short while it read it. */
static void cut_message(char *out, size_t size, const char *input) {
  snprintf(out, size,
           "xchg: %s: cut short by another process while it was read (its mapped bytes are "
           "gone)\n",
           input);
}

/* cat IN into a pipe the test reads: once its first lines are out (cat
 * then blocks on the full pipe, with most of IN not yet printed), another
 * process truncates IN.  The pages cat reads next are gone from its
 * mapping: not a kill by "Bus error" (SIGBUS, what the kernel does), but
 * a message naming IN and exit 1; the same through standard input
 * redirected from IN.  A SIGBUS sent (kill -BUS) instead of the truncation
 * is no cut input: it kills as it always does, without a word.  convert
 * IN - of uncompressed data writes buffers from the mapping, and the
 * write(2) of lost bytes fails (EFAULT): the same message, where it said
 * "write to standard output failed: Bad address". */
typedef enum { CUT_IN, CUT_STDIN, SEND_SIGBUS, CUT_CONVERTED } cut_how;

static void cat_cut_while_read(cut_how how) {
  bool through_stdin = how == CUT_STDIN;
  clear_dir();
  char *in = path_in_dir("in.arrow");
  cli_run r = run_cli(ARGS("gen", "cache", in, "--rows", "200000", "--compression", "none"), -1);
  free(r.err.data);
  int out_pipe[2];
  int in_fd = through_stdin ? open(in, O_RDONLY) : -1;
  if (!TU_CHECK(r.exit_code == 0 && pipe(out_pipe) == 0 && (!through_stdin || in_fd >= 0),
                "cut while read: cannot set up the input and the pipe"))
    return;
  pid_t pid = start_cli(through_stdin          ? ARGS("cat", "-", "--format", "csv")
                        : how == CUT_CONVERTED ? ARGS("convert", in, "-")
                                               : ARGS("cat", in, "--format", "csv"),
                        in_fd, out_pipe[1], false);
  close(out_pipe[1]);
  if (in_fd >= 0) close(in_fd);
  char chunk[65536];
  /* convert: into its second batch, whose buffers it writes from the
   * mapping (the first it checks, touching its bytes, before writing) */
  size_t before = how == CUT_CONVERTED ? 100000 : 1;
  ssize_t first = 0;
  for (ssize_t k; (size_t)first < before && (k = read(out_pipe[0], chunk, sizeof chunk)) > 0;)
    first += k;
  TU_CHECK(first > 0 && (how == SEND_SIGBUS ? kill(pid, SIGBUS) : truncate(in, 4096)) == 0,
           "cut while read: no output, or truncate or kill failed");
  size_t printed = (size_t)(first > 0 ? first : 0);
  for (ssize_t k; (k = read(out_pipe[0], chunk, sizeof chunk)) != 0;)
    if (k > 0)
      printed += (size_t)k;
    else if (errno != EINTR)
      break;
  close(out_pipe[0]);
  r = finish_cli(pid);
  char want[4400];
  cut_message(want, sizeof want, through_stdin ? "<stdin>" : in);
  if (how == SEND_SIGBUS)
    TU_CHECK(r.signal == SIGBUS && r.err.size == 0, "cat sent SIGBUS: exit %d, signal %d: %s",
             r.exit_code, r.signal, r.err.data);
  else
    TU_CHECK(r.exit_code == 1 && stderr_is(&r, want),
             "cat %s cut while read: exit %d, signal %d, after %zu bytes: %s",
             through_stdin          ? "- < IN"
             : how == CUT_CONVERTED ? "(convert) IN"
                                    : "IN",
             r.exit_code, r.signal, printed, r.err.data);
  free(r.err.data);
}

static void check_cut_while_read(void) { cat_cut_while_read(CUT_IN); }
static void check_cut_while_read_stdin(void) { cat_cut_while_read(CUT_STDIN); }
static void check_sigbus_sent(void) { cat_cut_while_read(SEND_SIGBUS); }
static void check_cut_while_written(void) { cat_cut_while_read(CUT_CONVERTED); }

/* convert IN OUT, writing its temporary file slowly (ZSTD level 19), with
 * IN truncated by another process once that file exists: the message, exit
 * 1, and neither OUT nor the temporary file left (SIGBUS's default action
 * left the temporary file). */
static void check_cut_while_converting(void) {
  clear_dir();
  char *in = path_in_dir("in.arrow");
  cli_run r = run_cli(ARGS("gen", "cache", in, "--rows", "400000", "--compression", "none"), -1);
  free(r.err.data);
  if (!TU_CHECK(r.exit_code == 0, "cut while converting: gen failed")) return;
  pid_t pid = start_cli(
      ARGS("convert", in, path_in_dir("out.arrow"), "--compression", "zstd", "--level", "19"), -1,
      -1, false);
  /* waits for the temporary file, a few seconds at most (a guard, not a measure) */
  for (int i = 0; i < 3000 && !temp_file_exists(); i++)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  TU_CHECK(temp_file_exists() && truncate(in, 4096) == 0,
           "convert did not create its temporary file beside OUT, or truncate failed");
  r = finish_cli(pid);
  char want[4400];
  cut_message(want, sizeof want, in);
  TU_CHECK(r.exit_code == 1 && stderr_is(&r, want),
           "convert IN cut while read: exit %d, signal %d: %s", r.exit_code, r.signal, r.err.data);
  free(r.err.data);
  check_dir_holds("convert IN cut while read", "in.arrow");
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  tu_testdata_path(gold_stream, sizeof gold_stream,
                   "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  if (mkdtemp(dir) == NULL) {
    perror("test_cli_output: mkdtemp");
    return 1;
  }
  snprintf(stderr_path, sizeof stderr_path, "%s/stderr", dir);
  choose_full_device();
  static const tu_case cases[] = {
      {"same_file", check_same_file},
      {"links_and_modes", check_links_and_modes},
      {"failure_keeps_old_output", check_failure_keeps_old_output},
      {"full_device", check_full_device},
      {"broken_pipe", check_broken_pipe},
      {"broken_pipe_sigpipe", check_broken_pipe_sigpipe},
      {"sums_into_closed_pipe", check_sums_into_closed_pipe},
      {"inspect_failure_prints_nothing", check_inspect_failure_prints_nothing},
      {"killed_while_writing", check_killed_while_writing},
      {"killed_by_a_burst", check_killed_by_a_burst},
      {"killed_while_spooling", check_killed_while_spooling},
      {"created_meanwhile", check_created_meanwhile},
      {"spool_dir_missing", check_spool_dir_missing},
      {"spool_write_fails", check_spool_write_fails},
      {"stdout_closed", check_stdout_closed},
      {"cut_while_read", check_cut_while_read},
      {"cut_while_read_stdin", check_cut_while_read_stdin},
      {"sigbus_sent", check_sigbus_sent},
      {"cut_while_written", check_cut_while_written},
      {"cut_while_converting", check_cut_while_converting},
  };
  int rc = TU_MAIN(argc, argv, "cli_output", cases);
  clear_dir();
  rmdir(dir);
  if (strcmp(full_device, "/dev/full") != 0) unlink(full_device);
  return rc;
}
