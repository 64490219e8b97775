/* stdin.c — standard input, looked at before it is read.
 *
 * A pipe cannot seek back, yet the framing of its bytes (Comet blocks,
 * plain IPC, a codec stream) must be told from its first bytes before the
 * reader that fits is chosen.  The bytes read ahead to tell are held here
 * and handed out again, first, by the source xc_open_source gives for "-":
 * whatever reads it sees standard input from its first byte, as it would
 * see a file.  Standard input is one per process, and so is what is held
 * of it.  A named FIFO can stand in its place (xc_pipe_named), read the
 * same way under its own name. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct stdin_ahead {
  xchg_source *fd; /* standard input, past the bytes held */
  uint8_t *held;   /* its first bytes, read ahead */
  size_t len;      /* bytes held */
  size_t given;    /* of which the source handed out */
  bool ended;      /* the input ended within them */
} stdin_ahead;

/* The pipe read here: standard input ("-"), or the named FIFO that
 * xc_pipe_named opened in its place, and the name that stands for it. */
static int piped_fd = STDIN_FILENO;
static const char *piped_name = "-";

/* What was read ahead and not yet handed to a source, else NULL. */
static stdin_ahead *ahead;

/* All of standard input, once xc_stdin_spool copied it to a file. */
static xchg_buf *spooled;

static xchg_status map_whole(int fd, const char *path, xchg_buf **out, xchg_error *err);

/* Standard input redirected from a regular file (`xchg cat - < f.arrow`)
 * is that file: mapped from its offset, as its path would be, it is read
 * as a file is, footer first, what follows a file included (read in order,
 * a file without a schema message is held whole, and what follows it lost).
 * Before anything is read of it; a pipe is left alone. */
static xchg_status map_if_regular(xchg_error *err) {
  struct stat st;
  if (spooled != NULL || ahead != NULL || fstat(piped_fd, &st) != 0 || !S_ISREG(st.st_mode))
    return XCHG_OK;
  off_t at = lseek(piped_fd, 0, SEEK_CUR);
  if (at < 0) return XCHG_OK; /* read as a pipe */
  xc_note_mapped("-");
  xchg_status status = map_whole(piped_fd, "<stdin>", &spooled, err);
  size_t size = status == XCHG_OK ? xchg_buf_size(spooled) : 0;
  if (status != XCHG_OK || at == 0) return status;
  xchg_buf *rest = xchg_buf_slice(spooled, (size_t)at < size ? (size_t)at : size,
                                  (size_t)at < size ? size - (size_t)at : 0);
  xchg_buf_unref(spooled);
  spooled = rest;
  return rest != NULL ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

xchg_status xc_stdin_peek(size_t want, const uint8_t **bytes, size_t *len, xchg_error *err) {
  xchg_status st = map_if_regular(err);
  if (st != XCHG_OK) return st;
  if (spooled != NULL) {
    *bytes = xchg_buf_data(spooled);
    *len = xchg_buf_size(spooled);
    return XCHG_OK;
  }
  if (ahead == NULL) {
    if ((ahead = calloc(1, sizeof *ahead)) == NULL)
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    if ((st = xchg_source_from_fd(piped_fd, 0, &ahead->fd, err)) != XCHG_OK) {
      free(ahead);
      ahead = NULL;
      return st;
    }
  }
  /* Grown as bytes come, doubling: a length read from a bad header costs
   * no more than twice the memory of what the input holds. */
  while (ahead->len < want && !ahead->ended) {
    size_t step = ahead->len > 64 * 1024 ? ahead->len : 64 * 1024;
    if (step > want - ahead->len) step = want - ahead->len;
    uint8_t *held = realloc(ahead->held, ahead->len + step);
    if (held == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    ahead->held = held;
    size_t got = 0; /* fewer than asked only at the end of the input */
    st = xchg_source_read(ahead->fd, held + ahead->len, step, &got, err);
    ahead->len += got;
    if (st != XCHG_OK) return st;
    ahead->ended = got < step;
  }
  *bytes = ahead->held;
  *len = ahead->len;
  return XCHG_OK;
}

static xchg_status read_ahead_first(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  stdin_ahead *a = ctx;
  if (a->given == a->len) return xchg_source_read(a->fd, dst, n, got, err);
  *got = n < a->len - a->given ? n : a->len - a->given;
  memcpy(dst, a->held + a->given, *got);
  a->given += *got;
  return XCHG_OK;
}

static void free_ahead(void *ctx) {
  stdin_ahead *a = ctx;
  xchg_source_free(a->fd);
  free(a->held);
  free(a);
}

/* Standard input from its first byte: the bytes read ahead, then the rest. */
static xchg_status open_stdin(xchg_source **out, xchg_error *err) {
  xchg_status st = map_if_regular(err);
  if (st != XCHG_OK) return st;
  if (spooled != NULL) return xchg_source_from_buf(spooled, out, err);
  if (ahead == NULL) return xchg_source_from_fd(piped_fd, 0, out, err);
  st = xchg_source_from_callback(read_ahead_first, free_ahead, ahead, out, err);
  if (st != XCHG_OK) return st; /* ahead stays held */
  ahead = NULL;                 /* the source's now */
  return XCHG_OK;
}

xchg_status xc_open_source(const char *path, xchg_source **out, xchg_error *err) {
  if (xc_is_piped(path)) return open_stdin(out, err);
  xc_note_mapped(path);
  return xchg_source_open_file(path, XCHG_FILE_MMAP, out, err);
}

/* Copies src to fd (about: what it is, for messages), to its end. */
static xchg_status copy_to(xchg_source *src, int fd, const char *about, xchg_error *err) {
  static uint8_t chunk[1 << 16];
  for (;;) {
    size_t got = 0;
    xchg_status st = xchg_source_read(src, chunk, sizeof chunk, &got, err);
    if (st != XCHG_OK || got == 0) return st;
    for (size_t done = 0; done < got;) {
      ssize_t n = write(fd, chunk + done, got - done);
      if (n < 0) return xchg_errorf(err, XCHG_EIO, "cannot write %s: %s", about, strerror(errno));
      done += (size_t)n;
    }
  }
}

static void unmap(void *ctx, const void *data, size_t size) {
  (void)ctx;
  munmap((void *)data, size);
}

/* The file fd holds, mapped into *out (an empty one as no bytes: mmap
 * refuses 0). */
static xchg_status map_whole(int fd, const char *path, xchg_buf **out, xchg_error *err) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return xchg_errorf(err, XCHG_EIO, "cannot read %s: %s", path, strerror(errno));
  size_t size = (size_t)st.st_size;
  void *addr = size > 0 ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  if (addr == MAP_FAILED)
    return xchg_errorf(err, XCHG_EIO, "cannot map %s: %s", path, strerror(errno));
  *out = size > 0 ? xchg_buf_wrap(addr, size, unmap, NULL) : xchg_buf_alloc(0);
  if (*out == NULL) {
    if (size > 0) munmap(addr, size);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  return XCHG_OK;
}

/* A file of its own in TMPDIR for a copy of what to hold, already
 * unlinked: nothing is left behind, whatever stops the command (a signal,
 * a full disk).  Its name is gone with it, so *about, for the messages of
 * what follows, names what the user can act on: the directory, where it
 * came from, and what the copy holds. */
static xchg_status create_spool_file(const char *what, char *about, size_t about_size, int *fd,
                                     xchg_error *err) {
  const char *tmpdir = getenv("TMPDIR");
  bool from_env = tmpdir != NULL && *tmpdir;
  const char *dir = from_env ? tmpdir : "/tmp";
  const char *source = from_env ? " (TMPDIR)" : "";
  char path[4096];
  int len = snprintf(path, sizeof path, "%s/xchg-stdin-XXXXXX", dir);
  /* mkstemp leaves a failed try's name in path, a file that does not
   * exist: the error names the directory, and where it came from */
  *fd = len > 0 && (size_t)len < sizeof path ? mkstemp(path) : (errno = ENAMETOOLONG, -1);
  if (*fd < 0)
    return xchg_errorf(err, XCHG_EIO, "cannot create a temporary file in '%.200s'%s to hold %s: %s",
                       dir, source, what, strerror(errno));
  unlink(path);
  snprintf(about, about_size, "the temporary file in '%.200s'%s that holds %s", dir, source, what);
  return XCHG_OK;
}

/* All of in (what, for messages) copied to a file of its own, mapped into
 * *out. */
static xchg_status spool(xchg_source *in, const char *what, xchg_buf **out, xchg_error *err) {
  char about[512];
  int fd;
  xchg_status st = create_spool_file(what, about, sizeof about, &fd, err);
  if (st != XCHG_OK) return st;
  st = copy_to(in, fd, about, err);
  if (st == XCHG_OK) st = map_whole(fd, about, out, err);
  close(fd); /* the mapping keeps its bytes */
  return st;
}

xchg_status xc_stdin_spool(xchg_error *err) {
  xchg_status regular = map_if_regular(err);
  if (regular != XCHG_OK || spooled != NULL) return regular;
  xchg_source *in = NULL;
  xchg_status st = open_stdin(&in, err);
  const char *what = piped_fd == STDIN_FILENO ? "standard input" : "its bytes";
  if (st == XCHG_OK) st = spool(in, what, &spooled, err);
  xchg_source_free(in);
  return st;
}

bool xc_is_piped(const char *path) { return strcmp(path, piped_name) == 0; }

xchg_status xc_pipe_named(const char *path, xchg_error *err) {
  struct stat st;
  /* a FIFO alone: a regular file is mapped as it is, a device (/dev/zero)
   * may never end, and what cannot be opened is left to xc_open_source to
   * say; once, before anything is read */
  if (strcmp(path, "-") == 0 || piped_fd != STDIN_FILENO || ahead != NULL || spooled != NULL ||
      stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
    return XCHG_OK;
  int fd;
  do { fd = open(path, O_RDONLY | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
  if (fd < 0) return xchg_errorf(err, XCHG_EIO, "%s: cannot open: %s", path, strerror(errno));
  piped_fd = fd; /* open to the end of the process, as standard input is */
  piped_name = path;
  return XCHG_OK;
}
