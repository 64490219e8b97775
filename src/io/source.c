/* source.c — byte sources: memory, files (mapped or read), fds, callbacks.
 *
 * The generic functions here own the bookkeeping (position, size checks,
 * short-read loops, error messages); each kind of source implements only
 * the operations of xchg_source_vtable (see source_impl.h). */
#include "io/source_impl.h"

#include "buf/small.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads of unknown-size sources larger than this grow their buffer as bytes
 * arrive, so that a bogus length on the wire cannot make xchg allocate
 * memory the sender never actually sends. */
#define GROWING_READ_THRESHOLD ((size_t)16 << 20)
/* Scratch space for skipping on sources that cannot seek. */
#define SKIP_CHUNK 16384

xchg_status xchg_source_no_memory(xchg_error *err, const char *who) {
  return xchg_errorf(err, XCHG_ENOMEM, "%s: out of memory creating the source", who);
}

xchg_status xchg_source_create(const xchg_source_vtable *vtable, void *impl, int64_t size,
                               xchg_buf *memory, const char *who, xchg_source **out,
                               xchg_error *err) {
  xchg_source *src = buf_small_alloc(sizeof *src, NULL); /* one per payload of a cached relation */
  *out = src;
  if (src == NULL) return xchg_source_no_memory(err, who);
  src->vtable = vtable;
  src->impl = impl;
  src->position = 0;
  src->size = size;
  src->memory = memory;
  src->ran_out = 0;
  return XCHG_OK;
}

int xchg_source_ran_out(const xchg_source *src) { return src->ran_out; }

static xchg_status truncated(xchg_source *src, xchg_error *err, uint64_t offset, uint64_t wanted,
                             uint64_t available) {
  src->ran_out = 1;
  return xchg_errorf(err, XCHG_EIO,
                     "unexpected end of data at byte %" PRIu64 ": needed %" PRIu64
                     " bytes, only %" PRIu64 " available (%" PRIu64 " missing)",
                     offset, wanted, available, wanted - available);
}

/* Bytes left before the known end of src (0 when positioned past it). */
static uint64_t bytes_remaining(const xchg_source *src) {
  uint64_t size = (uint64_t)src->size;
  return src->position < size ? size - src->position : 0;
}

/* ---- memory: a buffer, a caller's memory, a mapped file ---------------- */

static xchg_status memory_read(xchg_source *src, void *dst, size_t n, size_t *got,
                               xchg_error *err) {
  size_t size = xchg_buf_size(src->memory);
  size_t avail = src->position < size ? size - (size_t)src->position : 0;
  size_t k = n < avail ? n : avail;
  if (k > 0) memcpy(dst, xchg_buf_data(src->memory) + src->position, k);
  *got = k;
  return XCHG_OK;
}

/* Moving in memory needs nothing beyond the position the caller updates. */
static xchg_status memory_seek(xchg_source *src, uint64_t offset, xchg_error *err) {
  return XCHG_OK;
}

static const xchg_source_vtable memory_vtable = {memory_read, memory_seek, NULL, NULL};

xchg_status xchg_source_from_buf(xchg_buf *buf, xchg_source **out, xchg_error *err) {
  static const char who[] = "xchg_source_from_buf";
  if (out == NULL) return base_null_argument(who, "out", err);
  *out = NULL;
  if (buf == NULL) return base_null_argument(who, "buf", err);
  xchg_status status = xchg_source_create(&memory_vtable, NULL, (int64_t)xchg_buf_size(buf),
                                          xchg_buf_ref(buf), who, out, err);
  if (status != XCHG_OK) xchg_buf_unref(buf); /* the reference just taken */
  return status;
}

xchg_status xchg_source_from_memory(const void *data, size_t size, xchg_release_fn release,
                                    void *release_ctx, xchg_source **out, xchg_error *err) {
  static const char who[] = "xchg_source_from_memory";
  if (out == NULL) return base_null_argument(who, "out", err);
  *out = NULL;
  if (data == NULL && size > 0) return base_null_span(who, "data", size, err);
  /* The source comes first: once the memory is wrapped, dropping the wrap
   * would run the caller's release, and a failure must leave the memory
   * with the caller. */
  xchg_source *src;
  xchg_status status =
      xchg_source_create(&memory_vtable, NULL, (int64_t)size, NULL, who, &src, err);
  if (status != XCHG_OK) return status;
  src->memory = xchg_buf_wrap(data, size, release, release_ctx);
  if (src->memory == NULL) {
    buf_small_free(src, sizeof *src);
    return xchg_source_no_memory(err, who);
  }
  *out = src;
  return XCHG_OK;
}

/* ---- files --------------------------------------------------------------- */

typedef struct fd_state {
  int fd;
  int own_fd;
  off_t base; /* the fd's offset when the source was created: position 0 */
} fd_state;

static void unmap_file(void *ctx, const void *data, size_t size) { munmap((void *)data, size); }

/* Maps the whole of a regular file.  A mapping costs no copy and lets every
 * read_buf be a slice; a file truncated by another process while mapped
 * raises SIGBUS, which is the price of mmap and why XCHG_FILE_READ exists. */
static xchg_status map_file(int fd, const char *path, off_t file_size, xchg_buf **out,
                            xchg_error *err) {
  static const uint8_t empty[1];
  if (file_size == 0) {
    *out = xchg_buf_wrap(empty, 0, NULL, NULL); /* mmap refuses length 0 */
  } else {
    if ((uintmax_t)file_size > SIZE_MAX)
      return xchg_errorf(err, XCHG_ELIMIT, "%s: %jd bytes do not fit in the address space", path,
                         (intmax_t)file_size);
    size_t size = (size_t)file_size;
    void *addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED)
      return xchg_errorf(err, XCHG_EIO, "%s: cannot map %zu bytes: %s", path, size,
                         strerror(errno));
    *out = xchg_buf_wrap(addr, size, unmap_file, NULL);
    if (*out == NULL) munmap(addr, size);
  }
  if (*out == NULL) return xchg_errorf(err, XCHG_ENOMEM, "%s: out of memory", path);
  return XCHG_OK;
}

static xchg_status pread_read(xchg_source *src, void *dst, size_t n, size_t *got, xchg_error *err) {
  fd_state *st = src->impl;
  if (n > SSIZE_MAX) n = SSIZE_MAX;
  if (src->position > (uint64_t)INT64_MAX)
    return xchg_errorf(err, XCHG_EIO, "cannot read at byte %" PRIu64, src->position);
  ssize_t k;
  do { k = pread(st->fd, dst, n, (off_t)src->position); } while (k < 0 && errno == EINTR);
  if (k < 0)
    return xchg_errorf(err, XCHG_EIO, "read failed at byte %" PRIu64 ": %s", src->position,
                       strerror(errno));
  *got = (size_t)k;
  return XCHG_OK;
}

/* pread takes the offset on every call: nothing to move. */
static xchg_status pread_seek(xchg_source *src, uint64_t offset, xchg_error *err) {
  return XCHG_OK;
}

static void fd_close(xchg_source *src) {
  fd_state *st = src->impl;
  if (st->own_fd) close(st->fd);
  free(st);
}

static const xchg_source_vtable pread_vtable = {pread_read, pread_seek, fd_close, NULL};

static xchg_status open_pread_source(int fd, off_t file_size, xchg_source **out, xchg_error *err) {
  static const char who[] = "xchg_source_open_file";
  fd_state *st = malloc(sizeof *st);
  if (st == NULL) return xchg_source_no_memory(err, who);
  st->fd = fd;
  st->own_fd = 1;
  st->base = 0;
  xchg_status status =
      xchg_source_create(&pread_vtable, st, (int64_t)file_size, NULL, who, out, err);
  if (status != XCHG_OK) free(st);
  return status;
}

xchg_status xchg_source_open_file(const char *path, xchg_file_mode mode, xchg_source **out,
                                  xchg_error *err) {
  if (out == NULL) return xchg_errorf(err, XCHG_EINVAL, "xchg_source_open_file: out is NULL");
  *out = NULL;
  if (path == NULL) return xchg_errorf(err, XCHG_EINVAL, "xchg_source_open_file: path is NULL");
  if (mode != XCHG_FILE_MMAP && mode != XCHG_FILE_READ)
    return xchg_errorf(err, XCHG_EINVAL, "%s: unknown file mode %d", path, (int)mode);

  int fd;
  do { fd = open(path, O_RDONLY | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
  if (fd < 0) return xchg_errorf(err, XCHG_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat info;
  if (fstat(fd, &info) != 0) {
    xchg_status status = xchg_errorf(err, XCHG_EIO, "%s: cannot stat: %s", path, strerror(errno));
    close(fd);
    return status;
  }

  /* open(2) takes a directory for reading, and its first read fails with
   * EISDIR, in a message that does not name it: refuse it here, by name. */
  if (S_ISDIR(info.st_mode)) {
    close(fd);
    return xchg_errorf(err, XCHG_EIO, "%s: cannot open: %s", path, strerror(EISDIR));
  }

  /* Pipes, FIFOs, /dev/stdin and devices can be neither mapped nor sized:
   * read them as a stream whatever the mode. */
  xchg_status status;
  if (!S_ISREG(info.st_mode) || mode == XCHG_FILE_READ) {
    status = S_ISREG(info.st_mode) ? open_pread_source(fd, info.st_size, out, err)
                                   : xchg_source_from_fd(fd, 1, out, err);
    if (status != XCHG_OK) {
      close(fd);
      xchg_error_prefix(err, "%s: ", path);
    }
    return status;
  }

  xchg_buf *mapped = NULL;
  status = map_file(fd, path, info.st_size, &mapped, err);
  close(fd); /* a mapping outlives its descriptor */
  if (status != XCHG_OK) return status;
  status = xchg_source_from_buf(mapped, out, err);
  xchg_buf_unref(mapped);
  if (status != XCHG_OK) xchg_error_prefix(err, "%s: ", path);
  return status;
}

/* ---- file descriptors read incrementally ------------------------------- */

/* Waits until a non-blocking fd has data, so callers need not care. */
static void wait_readable(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  while (poll(&p, 1, -1) < 0 && errno == EINTR) {}
}

static xchg_status fd_read(xchg_source *src, void *dst, size_t n, size_t *got, xchg_error *err) {
  fd_state *st = src->impl;
  if (n > SSIZE_MAX) n = SSIZE_MAX;
  for (;;) {
    ssize_t k = read(st->fd, dst, n);
    if (k >= 0) {
      *got = (size_t)k;
      return XCHG_OK;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_readable(st->fd);
    } else if (errno != EINTR) {
      return xchg_errorf(err, XCHG_EIO, "read failed at byte %" PRIu64 ": %s", src->position,
                         strerror(errno));
    }
  }
}

static xchg_status fd_seek(xchg_source *src, uint64_t offset, xchg_error *err) {
  fd_state *st = src->impl;
  if (offset > (uint64_t)(INT64_MAX - st->base) ||
      lseek(st->fd, st->base + (off_t)offset, SEEK_SET) < 0)
    return xchg_errorf(err, XCHG_EIO, "cannot seek to byte %" PRIu64 ": %s", offset,
                       strerror(errno));
  return XCHG_OK;
}

static const xchg_source_vtable fd_seekable_vtable = {fd_read, fd_seek, fd_close, NULL};
static const xchg_source_vtable fd_stream_vtable = {fd_read, NULL, fd_close, NULL};

xchg_status xchg_source_from_fd(int fd, int own_fd, xchg_source **out, xchg_error *err) {
  static const char who[] = "xchg_source_from_fd";
  if (out == NULL) return base_null_argument(who, "out", err);
  *out = NULL;
  if (fd < 0) return xchg_errorf(err, XCHG_EINVAL, "%s: fd %d is negative", who, fd);
  fd_state *st = malloc(sizeof *st);
  if (st == NULL) return xchg_source_no_memory(err, who);
  st->fd = fd;
  st->own_fd = own_fd != 0;
  st->base = lseek(fd, 0, SEEK_CUR);
  int seekable = st->base >= 0;
  if (!seekable) st->base = 0;
  /* Only a regular file has a size that means "bytes still to come". */
  int64_t size = -1;
  struct stat info;
  if (seekable && fstat(fd, &info) == 0 && S_ISREG(info.st_mode))
    size = info.st_size > st->base ? (int64_t)(info.st_size - st->base) : 0;
  xchg_status status = xchg_source_create(seekable ? &fd_seekable_vtable : &fd_stream_vtable, st,
                                          size, NULL, who, out, err);
  if (status != XCHG_OK) free(st);
  return status;
}

/* ---- user callbacks ------------------------------------------------------ */

typedef struct callback_state {
  xchg_read_fn read_fn;
  xchg_close_fn close_fn;
  void *ctx;
} callback_state;

static xchg_status callback_read(xchg_source *src, void *dst, size_t n, size_t *got,
                                 xchg_error *err) {
  callback_state *st = src->impl;
  *got = 0;
  xchg_status status = st->read_fn(st->ctx, dst, n, got, err);
  if (status != XCHG_OK) {
    xchg_error_prefix(err, "reading at byte %" PRIu64 ": ", src->position);
    return status;
  }
  if (*got > n)
    return xchg_errorf(err, XCHG_EIO,
                       "read callback returned %zu bytes at byte %" PRIu64 ", asked for %zu", *got,
                       src->position, n);
  return XCHG_OK;
}

static void callback_close(xchg_source *src) {
  callback_state *st = src->impl;
  if (st->close_fn != NULL) st->close_fn(st->ctx);
  free(st);
}

static const xchg_source_vtable callback_vtable = {callback_read, NULL, callback_close, NULL};

xchg_status xchg_source_from_callback(xchg_read_fn read_fn, xchg_close_fn close_fn, void *ctx,
                                      xchg_source **out, xchg_error *err) {
  static const char who[] = "xchg_source_from_callback";
  if (out == NULL) return base_null_argument(who, "out", err);
  *out = NULL;
  if (read_fn == NULL) return base_null_argument(who, "read_fn", err);
  callback_state *st = malloc(sizeof *st);
  if (st == NULL) return xchg_source_no_memory(err, who);
  st->read_fn = read_fn;
  st->close_fn = close_fn;
  st->ctx = ctx;
  xchg_status status = xchg_source_create(&callback_vtable, st, -1, NULL, who, out, err);
  if (status != XCHG_OK) free(st);
  return status;
}

/* ---- generic operations ------------------------------------------------- */

xchg_status xchg_source_read(xchg_source *src, void *dst, size_t n, size_t *got, xchg_error *err) {
  if (got != NULL) *got = 0;
  if (src == NULL || got == NULL || (dst == NULL && n > 0))
    return xchg_errorf(err, XCHG_EINVAL, "xchg_source_read: NULL argument");
  size_t total = 0;
  while (total < n) {
    size_t k = 0;
    xchg_status status = src->vtable->read(src, (uint8_t *)dst + total, n - total, &k, err);
    if (status != XCHG_OK) {
      *got = total;
      return status;
    }
    if (k == 0) break;
    total += k;
    src->position += k;
  }
  *got = total;
  return XCHG_OK;
}

/* Reads n bytes from a source of unknown size, letting the buffer grow as
 * the bytes actually arrive (see GROWING_READ_THRESHOLD). */
static xchg_status read_buf_growing(xchg_source *src, size_t n, xchg_buf **out, xchg_error *err) {
  uint64_t start = src->position;
  size_t filled = 0;
  size_t capacity = GROWING_READ_THRESHOLD;
  xchg_buf *buf = xchg_buf_alloc(capacity);
  for (;;) {
    if (buf == NULL)
      return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate %zu bytes at byte %" PRIu64, capacity,
                         start);
    size_t got = 0;
    xchg_status status =
        xchg_source_read(src, xchg_buf_mutable_data(buf) + filled, capacity - filled, &got, err);
    filled += got;
    if (status != XCHG_OK || filled < capacity) {
      xchg_buf_unref(buf);
      return status != XCHG_OK ? status : truncated(src, err, start, n, filled);
    }
    if (filled == n) break;
    capacity = capacity <= n / 2 ? capacity * 2 : n;
    xchg_buf *bigger = xchg_buf_alloc(capacity);
    if (bigger != NULL) memcpy(xchg_buf_mutable_data(bigger), xchg_buf_data(buf), filled);
    xchg_buf_unref(buf);
    buf = bigger;
  }
  *out = buf;
  return XCHG_OK;
}

xchg_status xchg_source_read_buf(xchg_source *src, size_t n, xchg_buf **out, xchg_error *err) {
  if (out != NULL) *out = NULL;
  if (src == NULL || out == NULL)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_source_read_buf: NULL argument");
  uint64_t start = src->position;
  if (src->size >= 0 && n > bytes_remaining(src))
    return truncated(src, err, start, n, bytes_remaining(src));

  if (src->memory != NULL) {
    *out = xchg_buf_slice(src->memory, (size_t)start, n);
    if (*out == NULL)
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory slicing %zu bytes at byte %" PRIu64, n,
                         start);
    src->position += n;
    return XCHG_OK;
  }
  if (src->size < 0 && n > GROWING_READ_THRESHOLD) return read_buf_growing(src, n, out, err);

  xchg_buf *buf = xchg_buf_alloc(n);
  if (buf == NULL)
    return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate %zu bytes at byte %" PRIu64, n, start);
  size_t got = 0;
  xchg_status status = xchg_source_read(src, xchg_buf_mutable_data(buf), n, &got, err);
  if (status == XCHG_OK && got < n) status = truncated(src, err, start, n, got);
  if (status != XCHG_OK) {
    xchg_buf_unref(buf);
    return status;
  }
  *out = buf;
  return XCHG_OK;
}

/* Skips by reading, for sources that cannot seek. */
static xchg_status skip_by_reading(xchg_source *src, uint64_t n, xchg_error *err) {
  uint8_t scratch[SKIP_CHUNK];
  uint64_t start = src->position;
  uint64_t left = n;
  while (left > 0) {
    size_t want = left < sizeof scratch ? (size_t)left : sizeof scratch;
    size_t got = 0;
    xchg_status status = xchg_source_read(src, scratch, want, &got, err);
    if (status != XCHG_OK) return status;
    if (got < want) return truncated(src, err, start, n, n - left + got);
    left -= got;
  }
  return XCHG_OK;
}

xchg_status xchg_source_skip(xchg_source *src, int64_t count, xchg_error *err) {
  if (src == NULL) return xchg_errorf(err, XCHG_EINVAL, "xchg_source_skip: NULL source");
  if (count < 0)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_source_skip: negative byte count %" PRId64, count);
  uint64_t n = (uint64_t)count;
  if (n == 0) return XCHG_OK;
  if (src->size >= 0 && n > bytes_remaining(src))
    return truncated(src, err, src->position, n, bytes_remaining(src));
  if (src->vtable->seek != NULL && n <= UINT64_MAX - src->position) {
    uint64_t target = src->position + n;
    xchg_status status = src->vtable->seek(src, target, err);
    if (status == XCHG_OK) src->position = target;
    if (status != XCHG_ENOTSUP) return status;
  }
  return skip_by_reading(src, n, err);
}

int64_t xchg_source_position(const xchg_source *src) {
  return src != NULL ? (int64_t)src->position : 0;
}

int64_t xchg_source_size(const xchg_source *src) { return src != NULL ? src->size : -1; }

xchg_status xchg_source_seek(xchg_source *src, int64_t to, xchg_error *err) {
  if (src == NULL) return xchg_errorf(err, XCHG_EINVAL, "xchg_source_seek: NULL source");
  if (to < 0)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_source_seek: negative offset %" PRId64, to);
  uint64_t offset = (uint64_t)to;
  if (offset == src->position) return XCHG_OK;
  if (src->vtable->seek == NULL)
    return xchg_errorf(err, XCHG_ENOTSUP,
                       "cannot seek from byte %" PRIu64 " to byte %" PRIu64
                       ": the source is a stream",
                       src->position, offset);
  if (src->size >= 0 && offset > (uint64_t)src->size)
    return xchg_errorf(err, XCHG_EIO,
                       "cannot seek to byte %" PRIu64 ": past the end of the data (%" PRId64
                       " bytes)",
                       offset, src->size);
  xchg_status status = src->vtable->seek(src, offset, err);
  if (status == XCHG_OK) src->position = offset;
  return status;
}

xchg_status xchg_source_finish(xchg_source *src, xchg_error *err) {
  if (src == NULL) return xchg_errorf(err, XCHG_EINVAL, "xchg_source_finish: NULL source");
  return src->vtable->finish != NULL ? src->vtable->finish(src, err) : XCHG_OK;
}

xchg_buf *xchg_source_memory(const xchg_source *src) {
  return src != NULL ? xchg_buf_ref(src->memory) : NULL;
}

void xchg_source_free(xchg_source *src) {
  if (src == NULL) return;
  if (src->vtable->close != NULL) src->vtable->close(src);
  xchg_buf_unref(src->memory);
  buf_small_free(src, sizeof *src);
}
