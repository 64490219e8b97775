/* output.c — writing a command's output without destroying what was there
 * (see output.h). */
#include "cli/output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

/* "standard output" or 'PATH', for messages. */
static const char *quote(const char *path) { return strcmp(path, "-") == 0 ? "" : "'"; }
static const char *output_name(const char *path) {
  return strcmp(path, "-") == 0 ? "standard output" : path;
}

/* A reader gone from the pipe ends the command as it ends any tool whose
 * write fails so (cat, zstd -dc): killed by SIGPIPE, without a word, unless
 * SIGPIPE is ignored (then the failure is said, and the exit is 1).  A
 * write of a thread of ours (cat's write-behind, which blocks SIGPIPE, see
 * base/thread.h) got EPIPE where the same write on the main thread would
 * have killed it: the signal is raised again here, where it is not
 * blocked.  Callers have put their outputs away first (no temporary file
 * is left). */
static void die_of_sigpipe(int errnum) {
  struct sigaction now;
  if (errnum != EPIPE || sigaction(SIGPIPE, NULL, &now) != 0 || now.sa_handler != SIG_DFL) return;
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_UNBLOCK, &pipe_only, NULL);
  raise(SIGPIPE);
}

int xc_write_error(const char *path, int errnum) {
  die_of_sigpipe(errnum);
  fflush(stdout);
  fprintf(stderr, "xchg: write to %s%s%s failed: %s\n", quote(path), output_name(path), quote(path),
          strerror(errnum));
  return XC_EXIT_ERROR;
}

int xc_print_report(xs *out, xchg_status st, const char *path, xchg_error *err) {
  if (st == XCHG_OK && xs_failed(out)) st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  int rc = XC_EXIT_OK;
  if (st != XCHG_OK) {
    rc = xc_runtime_error(path, err->message);
  } else {
    out->sink = stdout;
    xs_flush(out);
    if (xs_write_error(out) != 0) rc = xc_write_error("-", xs_write_error(out));
  }
  xs_free(out);
  return rc;
}

int xc_output_error(const xc_output *o, const char *message) {
  if (o->write_errno != 0) return xc_write_error(o->path, o->write_errno);
  fflush(stdout);
  fprintf(stderr, "xchg: %s: %s\n", output_name(o->path), message);
  return XC_EXIT_ERROR;
}

static xchg_status write_failed(xc_output *o, int errnum, xchg_error *err) {
  xc_stop_if_input_cut(errnum); /* bytes of an input that lost them: the input's failure */
  if (o->write_errno == 0) o->write_errno = errnum;
  return xchg_errorf(err, XCHG_EIO, "write to %s%s%s failed: %s", quote(o->path),
                     output_name(o->path), quote(o->path), strerror(errnum));
}

/* ---- removing the temporary file when the process is killed ------------------ */

/* The handler may only read what is complete: the name is written, then
 * (after a fence) the flag set.
 *
 * The handler stays installed until it has removed the file (no
 * SA_RESETHAND): with the default action put back as the signal is taken,
 * a second signal sent right after the first (`timeout` sends one to the
 * command and one to its process group) could find the default action
 * before the handler's mask is in place, and the kernel kills at once,
 * leaving the temporary file behind.  The handler puts the default action
 * back itself, once the file is gone, while its mask holds every cleanup
 * signal: what is pending then kills when it returns. */
static char guarded_temp[4096];
static volatile sig_atomic_t temp_guarded;
/* SIGPIPE too: gen --sums prints to standard output before OUT is put in
 * place, and a reader gone from that pipe kills the command there. */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define N_CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction saved_actions[N_CLEANUP_SIGNALS];

void xc_remove_temp_output(void) {
  if (temp_guarded) unlink(guarded_temp);
}

static void remove_temp_and_die(int sig) {
  xc_remove_temp_output();
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig); /* blocked until the handler returns, then the default action kills */
}

static void cleanup_signal_set(sigset_t *set) {
  sigemptyset(set);
  for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) sigaddset(set, cleanup_signals[i]);
}

/* While those signals are blocked, creating or removing the temporary
 * file and (un)registering it happen as one step for a handler. */
static void block_cleanup_signals(sigset_t *old) {
  sigset_t set;
  cleanup_signal_set(&set);
  sigprocmask(SIG_BLOCK, &set, old);
}

static void guard_temp(const char *temp) {
  size_t len = strlen(temp);
  if (len >= sizeof guarded_temp) return; /* too long to keep: left to the failure paths */
  memcpy(guarded_temp, temp, len + 1);
  atomic_signal_fence(memory_order_seq_cst);
  temp_guarded = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = remove_temp_and_die;
  cleanup_signal_set(&sa.sa_mask); /* one handler at a time */
  for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
    sigaction(cleanup_signals[i], NULL, &saved_actions[i]);
    if (saved_actions[i].sa_handler != SIG_IGN)
      sigaction(cleanup_signals[i], &sa, NULL); /* nohup stays */
  }
}

static void unguard_temp(void) {
  if (!temp_guarded) return;
  for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
    sigaction(cleanup_signals[i], &saved_actions[i], NULL);
  temp_guarded = 0;
}

/* ---- opening ------------------------------------------------------------------- */

static bool same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The regular file the input is: its path, or standard input for "-"
 * (anything else, a terminal above all, may well be input and output at
 * once). */
static bool input_file(const char *input, struct stat *in) {
  if (input == NULL) return false;
  int got = strcmp(input, "-") == 0 ? fstat(STDIN_FILENO, in) : stat(input, in);
  return got == 0 && S_ISREG(in->st_mode);
}

/* OUT (links followed; standard output for "-") may not be the input. */
static xchg_status refuse_input(const char *path, const char *input, xchg_error *err) {
  struct stat in, out;
  if (!input_file(input, &in)) return XCHG_OK;
  int got = strcmp(path, "-") == 0 ? fstat(STDOUT_FILENO, &out) : stat(path, &out);
  if (got == 0 && same_file(&in, &out)) {
    if (strcmp(input, "-") == 0)
      return xchg_errorf(err, XCHG_EINVAL, "is the same file as standard input");
    return xchg_errorf(err, XCHG_EINVAL, "is the same file as the input '%s'", input);
  }
  return XCHG_OK;
}

int xc_refuse_stdout_input(const char *input) {
  xchg_error err;
  if (refuse_input("-", input, &err) == XCHG_OK) return -1;
  fprintf(stderr, "xchg: standard output: %s\n", err.message);
  return XC_EXIT_ERROR;
}

/* Creates ".NAME.xchg-XXXXXX" in target's directory with O_EXCL; mode
 * (-1: a new file's) is that of the file it replaces. */
static xchg_status create_temp(xc_output *o, int mode, xchg_error *err) {
  const char *slash = strrchr(o->target, '/');
  int dir_len = slash ? (int)(slash - o->target + 1) : 0;
  const char *base = o->target + dir_len;
  size_t size = (size_t)dir_len + strlen(base) + 32;
  if ((o->temp = malloc(size)) == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint32_t seed = (uint32_t)now.tv_nsec ^ (uint32_t)getpid() * 2654435761u;
  for (int attempt = 0; attempt < 100; attempt++) {
    seed = seed * 1664525u + 1013904223u;
    /* a name of at most 200 + 14 bytes fits any file system's limit */
    snprintf(o->temp, size, "%.*s.%.200s.xchg-%06x", dir_len, o->target, base,
             (unsigned)(seed >> 8));
    sigset_t old;
    block_cleanup_signals(&old);
    o->fd = open(o->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd >= 0) guard_temp(o->temp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (o->fd >= 0) {
      /* failing to keep the mode (a file system without modes) is not worth failing the command */
      if (mode >= 0) (void)fchmod(o->fd, (mode_t)mode);
      return XCHG_OK;
    }
    if (errno != EEXIST) break;
  }
  int e = errno;
  free(o->temp);
  o->temp = NULL;
  int shown = dir_len > 1 ? dir_len - 1 : dir_len; /* "dir", not "dir/"; "/" stays */
  return xchg_errorf(err, XCHG_EIO, "cannot create a file in '%.*s': %s", shown ? shown : 1,
                     shown ? o->target : ".", strerror(e));
}

/* A regular file, existing (st) or not (st NULL): written beside it. */
static xchg_status open_regular(xc_output *o, const struct stat *st, xchg_error *err) {
  struct stat link;
  bool through_link = st != NULL && lstat(o->path, &link) == 0 && S_ISLNK(link.st_mode);
  o->target = through_link ? realpath(o->path, NULL) : strdup(o->path);
  if (o->target == NULL)
    return xchg_errorf(err, errno == ENOMEM ? XCHG_ENOMEM : XCHG_EIO, "%s", strerror(errno));
  return create_temp(o, st ? (int)(st->st_mode & 0777) : -1, err);
}

/* Binary data garbles a terminal (and is lost to the user), as zstd and
 * gzip say. */
static xchg_status refuse_terminal(const xc_output *o, bool force, xchg_error *err) {
  if (force || isatty(o->fd) != 1) return XCHG_OK;
  return xchg_errorf(err, XCHG_EINVAL,
                     "is a terminal: refusing to write binary data to it (redirect it "
                     "to a file or a pipe, or use -f/--force)");
}

xchg_status xc_output_open(xc_output *o, const char *path, const char *input, bool force,
                           xchg_error *err) {
  memset(o, 0, sizeof *o);
  o->path = path;
  o->replace = force;
  o->fd = -1;
  xchg_status s = refuse_input(path, input, err);
  if (s != XCHG_OK) return s;
  if (strcmp(path, "-") == 0) {
    o->fd = STDOUT_FILENO;
    return refuse_terminal(o, force, err);
  }
  struct stat st, link;
  if (stat(path, &st) == 0) {
    if (S_ISREG(st.st_mode)) {
      /* a file the command did not create is the user's: replaced only when
       * asked (-f), as zstd and gzip do */
      if (!force)
        return xchg_errorf(err, XCHG_EINVAL,
                           "already exists: not replaced (use -f/--force to replace it)");
      return open_regular(o, &st, err);
    }
    if (S_ISDIR(st.st_mode)) return xchg_errorf(err, XCHG_EINVAL, "is a directory");
    /* a device, a pipe: written in place, never created or truncated */
    if ((o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
      return xchg_errorf(err, XCHG_EIO, "%s", strerror(errno));
    return refuse_terminal(o, force, err);
  }
  if (errno != ENOENT) return xchg_errorf(err, XCHG_EIO, "%s", strerror(errno));
  if (lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
    return xchg_errorf(err, XCHG_EINVAL, "is a symbolic link to a file that does not exist");
  return open_regular(o, NULL, err);
}

/* ---- writing and finishing ----------------------------------------------------- */

xchg_status xc_output_write(void *ctx, const void *data, size_t n, xchg_error *err) {
  xc_output *o = ctx;
  const uint8_t *p = data;
  while (n > 0) {
    ssize_t k = write(o->fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return write_failed(o, k < 0 ? errno : EIO, err);
    p += k;
    n -= (size_t)k;
  }
  return XCHG_OK;
}

/* Closes a file the output opened (standard output stays open). */
static int close_output(xc_output *o) {
  int fd = o->fd;
  o->fd = -1;
  return fd >= 0 && fd != STDOUT_FILENO ? close(fd) : 0;
}

/* The temporary file renamed over OUT (forced). */
static xchg_status put_over(xc_output *o, xchg_error *err) {
  return rename(o->temp, o->target) == 0 ? XCHG_OK : write_failed(o, errno, err);
}

/* The temporary file given OUT's name only if nothing has it yet: another
 * command (a second xchg writing the same OUT) may have created it while
 * this one wrote, and that file is not this command's to replace.  A hard
 * link fails where the name exists, atomically; a file system without
 * hard links gets the rename. */
static xchg_status put_new(xc_output *o, xchg_error *err) {
  if (link(o->temp, o->target) == 0) {
    unlink(o->temp);
    return XCHG_OK;
  }
  if (errno == EEXIST)
    return xchg_errorf(err, XCHG_EINVAL,
                       "was created by someone else while it was written: not replaced "
                       "(use -f/--force to replace it)");
  return put_over(o, err);
}

xchg_status xc_output_commit(xc_output *o, xchg_error *err) {
  /* the data reaches the disk before the name does, so that a crash
   * leaves the old file or the new one, never an empty one */
  if (o->temp != NULL && fsync(o->fd) != 0) return write_failed(o, errno, err);
  if (close_output(o) != 0) return write_failed(o, errno, err);
  if (o->temp != NULL) {
    xchg_status st = o->replace ? put_over(o, err) : put_new(o, err);
    if (st != XCHG_OK) return st;
    unguard_temp();
    free(o->temp);
    o->temp = NULL;
  }
  return XCHG_OK;
}

void xc_output_discard(xc_output *o) {
  close_output(o);
  if (o->temp != NULL) {
    sigset_t old;
    block_cleanup_signals(&old);
    unlink(o->temp);
    unguard_temp();
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(o->temp);
    o->temp = NULL;
  }
  free(o->target);
  o->target = NULL;
}
