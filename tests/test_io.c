/* test_io.c — byte sources: memory, mapped and read files, fds (pipes and
 * regular files), callbacks; zero-copy slices, truncation errors, skips. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/testutil.h"
#include "xchg/io.h"
#include "xchg/ipc.h"
#include "xchg/testing.h"

/* Deterministic, non-repeating bytes, so that a read from the wrong offset
 * never compares equal by accident. */
static uint8_t pattern_byte(size_t i) {
  uint32_t x = (uint32_t)i * 2654435761u;
  return (uint8_t)((x >> 24) ^ (x >> 13) ^ i);
}

static uint8_t *make_pattern(size_t n) {
  uint8_t *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) p[i] = pattern_byte(i);
  return p;
}

static int pattern_matches(const uint8_t *p, size_t offset, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != pattern_byte(offset + i)) return 0;
  return 1;
}

static char *write_temp_file(const uint8_t *data, size_t n) {
  const char *dir = getenv("TMPDIR");
  char *path = malloc(4096);
  snprintf(path, 4096, "%s/xchg_test_io_XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    exit(2);
  }
  if (n > 0 && write(fd, data, n) != (ssize_t)n) {
    perror("write");
    exit(2);
  }
  close(fd);
  return path;
}

/* The message of a truncation error must name the offset and the shortfall. */
static void check_truncation_message(const xchg_error *err, unsigned long long offset,
                                     unsigned long long missing) {
  char want_offset[64], want_missing[64];
  snprintf(want_offset, sizeof want_offset, "at byte %llu", offset);
  snprintf(want_missing, sizeof want_missing, "(%llu missing)", missing);
  int ok = strstr(err->message, want_offset) != NULL && strstr(err->message, want_missing) != NULL;
  if (!ok) fprintf(stderr, "  unexpected message: %s\n", err->message);
  TU_CHECK(ok);
}

/* The same checks for every random-access source over the pattern of size n. */
static void check_random_access(xchg_source *src, size_t n, int zero_copy) {
  xchg_error err = {{0}};
  TU_CHECK(xchg_source_size(src) == (int64_t)n);
  TU_CHECK(xchg_source_position(src) == 0);
  uint8_t head[100];
  size_t got = 0;
  TU_OK(xchg_source_read(src, head, sizeof head, &got, &err), err);
  TU_CHECK(got == sizeof head && pattern_matches(head, 0, got));
  TU_CHECK(xchg_source_position(src) == 100);

  TU_OK(xchg_source_skip(src, 1000, &err), err);
  TU_CHECK(xchg_source_position(src) == 1100);
  xchg_buf *b = NULL;
  TU_OK(xchg_source_read_buf(src, 5000, &b, &err), err);
  TU_CHECK(b != NULL && xchg_buf_size(b) == 5000 && pattern_matches(xchg_buf_data(b), 1100, 5000));
  TU_CHECK(xchg_source_position(src) == 6100);
  if (zero_copy) {
    xchg_buf *whole = xchg_source_memory(src);
    TU_CHECK(whole != NULL);
    if (whole != NULL && b != NULL) {
      TU_CHECK(xchg_buf_data(b) == xchg_buf_data(whole) + 1100); /* a slice, not a copy */
      xchg_buf_unref(whole);
    }
  } else {
    TU_CHECK(xchg_source_memory(src) == NULL);
    TU_CHECK(b != NULL && (uintptr_t)xchg_buf_data(b) % XCHG_ALIGNMENT == 0);
  }
  xchg_buf_unref(b);

  /* Backwards, then to the very end. */
  TU_OK(xchg_source_seek(src, 7, &err), err);
  TU_OK(xchg_source_read(src, head, 3, &got, &err), err);
  TU_CHECK(got == 3 && pattern_matches(head, 7, 3));
  TU_OK(xchg_source_seek(src, n - 10, &err), err);
  TU_OK(xchg_source_read(src, head, sizeof head, &got, &err), err);
  TU_CHECK(got == 10 && pattern_matches(head, n - 10, 10));
  TU_OK(xchg_source_read(src, head, sizeof head, &got, &err), err);
  TU_CHECK(got == 0);
  TU_CHECK(xchg_source_seek(src, (int64_t)n + 1, &err) == XCHG_EIO);
  /* Negative offsets and counts are refused, and the position stays. */
  TU_CHECK(xchg_source_seek(src, -1, &err) == XCHG_EINVAL &&
               strstr(err.message, "negative offset -1") && xchg_source_position(src) == (int64_t)n,
           "seek to -1: %s", err.message);
  TU_CHECK(xchg_source_skip(src, -3, &err) == XCHG_EINVAL &&
               strstr(err.message, "negative byte count -3") &&
               xchg_source_position(src) == (int64_t)n,
           "skip -3: %s", err.message);

  /* A read_buf running past the end fails, names offset and shortfall, and
   * allocates nothing that stays. */
  TU_OK(xchg_source_seek(src, n - 20, &err), err);
  int64_t bytes0 = tu_live_bytes();
  b = NULL;
  TU_CHECK(xchg_source_read_buf(src, 50, &b, &err) == XCHG_EIO);
  TU_CHECK(b == NULL);
  check_truncation_message(&err, n - 20, 30);
  TU_CHECK(tu_live_bytes() == bytes0);
  TU_CHECK(xchg_source_skip(src, 21, &err) == XCHG_EIO);
  check_truncation_message(&err, n - 20, 1);
  TU_CHECK(xchg_source_position(src) == (int64_t)n - 20);
  TU_OK(xchg_source_skip(src, 20, &err), err);
  TU_CHECK(xchg_source_position(src) == (int64_t)n);

  /* Allocation failures surface as ENOMEM, not as a crash or a short read. */
  TU_OK(xchg_source_seek(src, 0, &err), err);
  xchg_buf_fail_nth_alloc(1);
  TU_CHECK(xchg_source_read_buf(src, 64, &b, &err) == XCHG_ENOMEM);
  xchg_buf_fail_nth_alloc(0);
  TU_CHECK(xchg_source_position(src) == 0);
}

static void test_buf_source(void) {
  size_t n = 10000;
  xchg_buf *buf = xchg_buf_alloc(n);
  for (size_t i = 0; i < n; i++) xchg_buf_mutable_data(buf)[i] = pattern_byte(i);
  xchg_error err = {{0}};
  xchg_source *src = NULL;
  TU_OK(xchg_source_from_buf(buf, &src, &err), err);
  xchg_buf_unref(buf); /* the source holds its own reference */
  if (src == NULL) return;
  check_random_access(src, n, 1);
  xchg_source_free(src);
}

typedef struct release_count {
  int calls;
} release_count;

static void count_release(void *ctx, const void *data, size_t size) {
  (void)data;
  (void)size;
  ((release_count *)ctx)->calls++;
}

static void test_memory_source_release(void) {
  xchg_error err = {{0}};
  size_t n = 8000;
  uint8_t *data = make_pattern(n);
  release_count rc = {0};
  xchg_source *src = NULL;
  TU_OK(xchg_source_from_memory(data, n, count_release, &rc, &src, &err), err);
  if (src == NULL) return;
  check_random_access(src, n, 1);
  TU_OK(xchg_source_seek(src, 4000, &err), err);
  xchg_buf *slice = NULL;
  TU_OK(xchg_source_read_buf(src, 16, &slice, &err), err);
  TU_CHECK(slice != NULL && xchg_buf_data(slice) == data + 4000);
  xchg_source_free(src);
  TU_CHECK(rc.calls == 0); /* the slice still points into the memory */
  TU_CHECK(slice != NULL && pattern_matches(xchg_buf_data(slice), 4000, 16));
  xchg_buf_unref(slice);
  TU_CHECK(rc.calls == 1);
  free(data);
}

/* xchg_ipc_reader_open_memory: the memory stays the caller's when the open
 * fails (release does not run, as for xchg_source_from_memory), and release
 * runs once, after the last array, when it succeeds. */
static void test_reader_open_memory_release(void) {
  xchg_error err = {{0}};
  char path[4096];
  size_t n = 0;
  uint8_t *stream =
      tu_read_file(tu_testdata_path(path, sizeof path,
                                    "arrow-gold/1.0.0-littleendian/generated_primitive.stream"),
                   &n);
  if (!TU_CHECK(stream != NULL, "cannot read %s", path)) return;
  static const uint8_t text[] = "not arrow at all";
  xchg_ipc_read_options bad;
  xchg_ipc_read_options_init(&bad);
  bad.validation = (xchg_validation)7;
  release_count rc = {0};
  xchg_ipc_reader *r = NULL;
  TU_CHECK(xchg_ipc_reader_open_memory(text, sizeof text, count_release, &rc, NULL, &r, &err) ==
                   XCHG_EFORMAT &&
               r == NULL,
           "%s", err.message);
  TU_CHECK(rc.calls == 0, "a failed open (not IPC) ran release");
  TU_CHECK(
      xchg_ipc_reader_open_memory(stream, n, count_release, &rc, &bad, &r, &err) == XCHG_EINVAL &&
          r == NULL,
      "%s", err.message);
  TU_CHECK(rc.calls == 0, "a failed open (bad options) ran release");
  struct ArrowArray batch = {0};
  if (!TU_OK(xchg_ipc_reader_open_memory(stream, n, count_release, &rc, NULL, &r, &err), err))
    return;
  TU_OK(xchg_ipc_reader_next(r, &batch, &err), err);
  xchg_ipc_reader_free(r);
  TU_CHECK(rc.calls == 0 && batch.release != NULL, "release ran before the last array");
  if (batch.release) batch.release(&batch);
  TU_CHECK(rc.calls == 1, "release ran %d times", rc.calls);
  free(stream);
}

static void test_mmap_file(void) {
  xchg_error err = {{0}};
  size_t n = 300000;
  uint8_t *data = make_pattern(n);
  char *path = write_temp_file(data, n);
  xchg_source *src = NULL;
  TU_OK(xchg_source_open_file(path, XCHG_FILE_MMAP, &src, &err), err);
  if (src != NULL) {
    check_random_access(src, n, 1);
    /* A slice outlives the source (the mapping goes with the last user). */
    TU_OK(xchg_source_seek(src, 123456, &err), err);
    xchg_buf *slice = NULL;
    TU_OK(xchg_source_read_buf(src, 4096, &slice, &err), err);
    xchg_buf *whole = xchg_source_memory(src);
    TU_CHECK(whole != NULL && xchg_buf_size(whole) == n);
    TU_CHECK(slice != NULL && whole != NULL && xchg_buf_data(slice) >= xchg_buf_data(whole) &&
             xchg_buf_data(slice) + 4096 <= xchg_buf_data(whole) + n);
    xchg_buf_unref(whole);
    xchg_source_free(src);
    TU_CHECK(slice != NULL && pattern_matches(xchg_buf_data(slice), 123456, 4096));
    xchg_buf_unref(slice);
  }
  unlink(path);
  free(path);
  free(data);
}

static void test_read_file(void) {
  xchg_error err = {{0}};
  size_t n = 200001;
  uint8_t *data = make_pattern(n);
  char *path = write_temp_file(data, n);
  xchg_source *src = NULL;
  TU_OK(xchg_source_open_file(path, XCHG_FILE_READ, &src, &err), err);
  if (src != NULL) {
    check_random_access(src, n, 0);
    xchg_source_free(src);
  }
  unlink(path);
  free(path);
  free(data);
}

static void test_empty_file(void) {
  xchg_error err = {{0}};
  char *path = write_temp_file(NULL, 0);
  for (int mode = XCHG_FILE_MMAP; mode <= XCHG_FILE_READ; mode++) {
    xchg_source *src = NULL;
    TU_OK(xchg_source_open_file(path, (xchg_file_mode)mode, &src, &err), err);
    if (src == NULL) continue;
    TU_CHECK(xchg_source_size(src) == 0);
    xchg_buf *b = NULL;
    TU_OK(xchg_source_read_buf(src, 0, &b, &err), err);
    TU_CHECK(b != NULL && xchg_buf_size(b) == 0);
    xchg_buf_unref(b);
    b = NULL;
    TU_CHECK(xchg_source_read_buf(src, 1, &b, &err) == XCHG_EIO && b == NULL);
    check_truncation_message(&err, 0, 1);
    xchg_source_free(src);
  }
  unlink(path);
  free(path);
}

static void test_open_errors(void) {
  xchg_error err = {{0}};
  xchg_source *src = (xchg_source *)&err; /* must be reset to NULL */
  const char *missing = "/nonexistent/xchg/definitely-missing.arrow";
  TU_CHECK(xchg_source_open_file(missing, XCHG_FILE_MMAP, &src, &err) == XCHG_EIO);
  TU_CHECK(src == NULL);
  TU_CHECK(strstr(err.message, missing) != NULL);
  TU_CHECK(xchg_source_open_file(NULL, XCHG_FILE_READ, &src, &err) == XCHG_EINVAL);
  TU_CHECK(xchg_source_open_file(missing, XCHG_FILE_READ, NULL, NULL) == XCHG_EINVAL);

  /* A directory opens for reading, but its reads fail: refused at once,
   * named (io.h: errors begin with the path), in either mode. */
  for (int mode = XCHG_FILE_MMAP; mode <= XCHG_FILE_READ; mode++) {
    src = (xchg_source *)&err;
    err.message[0] = 0;
    xchg_status st = xchg_source_open_file("/", (xchg_file_mode)mode, &src, &err);
    TU_CHECK(
        st == XCHG_EIO && src == NULL && strcmp(err.message, "/: cannot open: Is a directory") == 0,
        "a directory opened in mode %d: %s '%s'", mode, xchg_status_name(st), err.message);
    if (src != NULL && src != (xchg_source *)&err) xchg_source_free(src);
  }

  /* A character device is read as a stream, whatever the mode. */
  TU_OK(xchg_source_open_file("/dev/null", XCHG_FILE_MMAP, &src, &err), err);
  if (src != NULL) {
    TU_CHECK(xchg_source_size(src) == -1);
    TU_CHECK(xchg_source_memory(src) == NULL);
    uint8_t byte;
    size_t got = 1;
    TU_OK(xchg_source_read(src, &byte, 1, &got, &err), err);
    TU_CHECK(got == 0);
    xchg_source_free(src);
  }
}

/* The same bytes a real Arrow writer produced, through every file mode and
 * through stdio, must agree. */
static void test_gold_file_modes_agree(void) {
  char path[4096];
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  FILE *f = fopen(path, "rb");
  TU_CHECK(f != NULL);
  if (f == NULL) return;
  struct stat info;
  fstat(fileno(f), &info);
  size_t n = (size_t)info.st_size;
  uint8_t *expect = malloc(n);
  TU_CHECK(fread(expect, 1, n, f) == n);
  fclose(f);

  xchg_error err = {{0}};
  for (int mode = XCHG_FILE_MMAP; mode <= XCHG_FILE_READ; mode++) {
    xchg_source *src = NULL;
    TU_OK(xchg_source_open_file(path, (xchg_file_mode)mode, &src, &err), err);
    if (src == NULL) continue;
    TU_CHECK(xchg_source_size(src) == (int64_t)n);
    xchg_buf *all = NULL;
    TU_OK(xchg_source_read_buf(src, n, &all, &err), err);
    TU_CHECK(all != NULL && memcmp(xchg_buf_data(all), expect, n) == 0);
    xchg_buf_unref(all);
    xchg_source_free(src);
  }
  free(expect);
}

typedef struct pipe_writer {
  int fd;
  size_t n;
} pipe_writer;

/* Writes the pattern in uneven pieces so that the reader sees short reads. */
static void *write_pattern(void *arg) {
  pipe_writer *w = arg;
  size_t off = 0, piece = 1;
  while (off < w->n) {
    size_t k = w->n - off < piece ? w->n - off : piece;
    uint8_t tmp[8192];
    for (size_t i = 0; i < k; i++) tmp[i] = pattern_byte(off + i);
    ssize_t put = write(w->fd, tmp, k);
    if (put <= 0) break;
    off += (size_t)put;
    piece = piece * 3 % 8191 + 1;
  }
  close(w->fd);
  return NULL;
}

static void test_pipe_source(size_t n, size_t big_read) {
  xchg_error err = {{0}};
  int fds[2];
  TU_CHECK(pipe(fds) == 0);
  pipe_writer w = {fds[1], n};
  pthread_t thread;
  pthread_create(&thread, NULL, write_pattern, &w);

  xchg_source *src = NULL;
  TU_OK(xchg_source_from_fd(fds[0], 1, &src, &err), err);
  if (src != NULL) {
    TU_CHECK(xchg_source_size(src) == -1);
    TU_CHECK(xchg_source_memory(src) == NULL);
    uint8_t head[10];
    size_t got = 0;
    TU_OK(xchg_source_read(src, head, sizeof head, &got, &err), err);
    TU_CHECK(got == 10 && pattern_matches(head, 0, 10));
    TU_CHECK(xchg_source_seek(src, 0, &err) == XCHG_ENOTSUP);
    TU_OK(xchg_source_seek(src, 10, &err), err);    /* staying put is fine */
    TU_OK(xchg_source_skip(src, 40000, &err), err); /* read and discarded */
    TU_CHECK(xchg_source_position(src) == 40010);
    xchg_buf *b = NULL;
    TU_OK(xchg_source_read_buf(src, 70000, &b, &err), err);
    TU_CHECK(b != NULL && pattern_matches(xchg_buf_data(b), 40010, 70000));
    TU_CHECK(b != NULL && (uintptr_t)xchg_buf_data(b) % XCHG_ALIGNMENT == 0);
    xchg_buf_unref(b);
    size_t at = 110010;
    if (big_read > 0) {
      /* Large reads from a stream grow their buffer as bytes arrive. */
      b = NULL;
      TU_OK(xchg_source_read_buf(src, big_read, &b, &err), err);
      TU_CHECK(b != NULL && xchg_buf_size(b) == big_read &&
               pattern_matches(xchg_buf_data(b), at, big_read));
      xchg_buf_unref(b);
      at += big_read;
    }
    /* Ask for more than is left: the error names where and how much. */
    int64_t bytes0 = tu_live_bytes();
    size_t ask = n - at + (big_read ? big_read : 123);
    b = NULL;
    TU_CHECK(xchg_source_read_buf(src, ask, &b, &err) == XCHG_EIO && b == NULL);
    check_truncation_message(&err, at, ask - (n - at));
    TU_CHECK(tu_live_bytes() == bytes0);
    TU_CHECK(xchg_source_position(src) == (int64_t)n);
    xchg_source_free(src);
  }
  pthread_join(thread, NULL);
  TU_CHECK(fcntl(fds[0], F_GETFD) == -1 && errno == EBADF); /* own_fd closed it */
}

static void test_fd_regular_file(void) {
  xchg_error err = {{0}};
  size_t n = 50000;
  uint8_t *data = make_pattern(n);
  char *path = write_temp_file(data, n);
  int fd = open(path, O_RDONLY);
  TU_CHECK(fd >= 0);
  /* Position 0 of the source is wherever the fd stood. */
  TU_CHECK(lseek(fd, 1000, SEEK_SET) == 1000);
  xchg_source *src = NULL;
  TU_OK(xchg_source_from_fd(fd, 0, &src, &err), err);
  if (src != NULL) {
    TU_CHECK(xchg_source_size(src) == (int64_t)(n - 1000));
    uint8_t tmp[16];
    size_t got = 0;
    TU_OK(xchg_source_read(src, tmp, sizeof tmp, &got, &err), err);
    TU_CHECK(got == 16 && pattern_matches(tmp, 1000, 16));
    TU_OK(xchg_source_seek(src, 30000, &err), err);
    TU_OK(xchg_source_read(src, tmp, sizeof tmp, &got, &err), err);
    TU_CHECK(got == 16 && pattern_matches(tmp, 31000, 16));
    TU_OK(xchg_source_skip(src, 100, &err), err);
    TU_CHECK(xchg_source_position(src) == 30116);
    TU_OK(xchg_source_read(src, tmp, sizeof tmp, &got, &err), err);
    TU_CHECK(got == 16 && pattern_matches(tmp, 31116, 16));
    xchg_source_free(src);
  }
  TU_CHECK(fcntl(fd, F_GETFD) != -1); /* not owned: still open */
  close(fd);
  unlink(path);
  free(path);
  free(data);
}

typedef struct chunky {
  const uint8_t *data;
  size_t n, off, chunk;
  size_t fail_at;      /* fail when asked at or beyond this offset; 0 = never */
  size_t overshoot_at; /* claim too many bytes at this offset; 0 = never */
  int closed;
} chunky;

static xchg_status chunky_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  chunky *c = ctx;
  if (c->fail_at && c->off >= c->fail_at) return xchg_errorf(err, XCHG_EIO, "network went away");
  if (c->overshoot_at && c->off >= c->overshoot_at) {
    *got = n + 1;
    return XCHG_OK;
  }
  size_t k = c->n - c->off;
  if (k > n) k = n;
  if (k > c->chunk) k = c->chunk;
  memcpy(dst, c->data + c->off, k);
  c->off += k;
  *got = k;
  return XCHG_OK;
}

static void chunky_close(void *ctx) { ((chunky *)ctx)->closed++; }

static void test_callback_source(void) {
  xchg_error err = {{0}};
  size_t n = 5000;
  uint8_t *data = make_pattern(n);
  chunky c = {data, n, 0, 3, 0, 0, 0};
  xchg_source *src = NULL;
  TU_OK(xchg_source_from_callback(chunky_read, chunky_close, &c, &src, &err), err);
  if (src != NULL) {
    TU_CHECK(xchg_source_size(src) == -1);
    uint8_t tmp[100];
    size_t got = 0;
    TU_OK(xchg_source_read(src, tmp, sizeof tmp, &got, &err), err); /* 3 bytes at a time */
    TU_CHECK(got == 100 && pattern_matches(tmp, 0, 100));
    TU_OK(xchg_source_skip(src, 900, &err), err);
    xchg_buf *b = NULL;
    TU_OK(xchg_source_read_buf(src, 3000, &b, &err), err);
    TU_CHECK(b != NULL && pattern_matches(xchg_buf_data(b), 1000, 3000));
    xchg_buf_unref(b);
    TU_CHECK(xchg_source_seek(src, 0, &err) == XCHG_ENOTSUP);
    TU_CHECK(xchg_source_read_buf(src, 1001, &b, &err) == XCHG_EIO);
    check_truncation_message(&err, 4000, 1);
    TU_CHECK(c.closed == 0);
    xchg_source_free(src);
    TU_CHECK(c.closed == 1);
  }

  /* The callback's own error comes back with the position prefixed. */
  chunky bad = {data, n, 0, 1000, 2500, 0, 0};
  TU_OK(xchg_source_from_callback(chunky_read, NULL, &bad, &src, &err), err);
  if (src != NULL) {
    xchg_buf *b = NULL;
    TU_CHECK(xchg_source_read_buf(src, 4000, &b, &err) == XCHG_EIO && b == NULL);
    TU_CHECK(strstr(err.message, "at byte 3000") != NULL &&
             strstr(err.message, "network went away") != NULL);
    xchg_source_free(src);
  }

  /* A callback claiming more bytes than asked is caught. */
  chunky liar = {data, n, 0, 1000, 0, 1000, 0};
  TU_OK(xchg_source_from_callback(chunky_read, NULL, &liar, &src, &err), err);
  if (src != NULL) {
    uint8_t tmp[2000];
    size_t got = 0;
    TU_CHECK(xchg_source_read(src, tmp, sizeof tmp, &got, &err) == XCHG_EIO);
    TU_CHECK(got == 1000);
    xchg_source_free(src);
  }
  free(data);
}

/* ---- constructors that refuse --------------------------------------------
 *
 * Each refusal returns its status, leaves *out NULL (it starts as a
 * non-NULL sentinel) and says in the message which constructor refused and
 * why; what the constructor was given stays the caller's, except the
 * source that xchg_source_with_cancel takes over.  Allocation failures
 * inside malloc are tried in test_alloc_fail. */

#define EXPECT_REFUSED(call, want, who, cause)                                   \
  do {                                                                           \
    src = (xchg_source *)&err; /* a sentinel the constructor must overwrite */   \
    xchg_status s_ = (call);                                                     \
    TU_CHECK(s_ == (want) && src == NULL && strstr(err.message, who) != NULL &&  \
                 strstr(err.message, cause) != NULL,                             \
             "%s: %s \"%s\", *out %s", #call, xchg_status_name(s_), err.message, \
             src == NULL ? "NULL" : "set");                                      \
  } while (0)

/* The same for out NULL: nothing to leave NULL. */
#define EXPECT_NO_OUT(call, who)                                         \
  do {                                                                   \
    xchg_status s_ = (call);                                             \
    TU_CHECK(s_ == XCHG_EINVAL && strstr(err.message, who) != NULL &&    \
                 strstr(err.message, "out is NULL") != NULL,             \
             "%s: %s \"%s\"", #call, xchg_status_name(s_), err.message); \
  } while (0)

static xchg_status never_read_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  return xchg_errorf(err, XCHG_EIO, "not to be read");
}

static void test_memory_constructor_errors(void) {
  xchg_error err = {{0}};
  xchg_source *src;
  static const uint8_t bytes[16];
  release_count rc = {0};
  xchg_buf *buf = xchg_buf_wrap(bytes, sizeof bytes, count_release, &rc);
  EXPECT_REFUSED(xchg_source_from_buf(NULL, &src, &err), XCHG_EINVAL, "xchg_source_from_buf",
                 "buf is NULL");
  EXPECT_NO_OUT(xchg_source_from_buf(buf, NULL, &err), "xchg_source_from_buf");
  xchg_buf_unref(buf);
  TU_CHECK(rc.calls == 1, "a refused xchg_source_from_buf kept a reference on buf");

  EXPECT_REFUSED(xchg_source_from_memory(NULL, 5, NULL, NULL, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_memory", "data is NULL with a size of 5 bytes");
  EXPECT_NO_OUT(xchg_source_from_memory(bytes, sizeof bytes, count_release, &rc, NULL, &err),
                "xchg_source_from_memory");
  xchg_buf_fail_nth_alloc(1); /* the xchg_buf wrapping the memory */
  EXPECT_REFUSED(xchg_source_from_memory(bytes, sizeof bytes, count_release, &rc, &src, &err),
                 XCHG_ENOMEM, "xchg_source_from_memory", "out of memory");
  xchg_buf_fail_nth_alloc(0);
  TU_CHECK(rc.calls == 1, "a refused xchg_source_from_memory ran release (%d calls)", rc.calls - 1);

  chunky c = {bytes, sizeof bytes, 0, 1, 0, 0, 0};
  EXPECT_REFUSED(xchg_source_from_callback(NULL, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_callback", "read_fn is NULL");
  EXPECT_NO_OUT(xchg_source_from_callback(chunky_read, chunky_close, &c, NULL, &err),
                "xchg_source_from_callback");

  xchg_chunk chunks[3] = {{bytes, 4}, {NULL, 7}, {bytes, 4}};
  EXPECT_REFUSED(xchg_source_from_chunks(NULL, 2, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_chunks", "chunks is NULL with a count of 2");
  EXPECT_REFUSED(xchg_source_from_chunks(chunks, -1, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_chunks", "negative chunk count -1");
  EXPECT_REFUSED(xchg_source_from_chunks(chunks, 3, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_chunks", "chunk 1 of 3 has NULL data and 7 bytes");
  EXPECT_NO_OUT(xchg_source_from_chunks(chunks, 1, chunky_close, &c, NULL, &err),
                "xchg_source_from_chunks");
  /* Sizes whose sum passes INT64_MAX (the first pair), or wraps past
   * UINT64_MAX into a few bytes (the second): the chunk named is the one
   * that takes the total out of range.  Nothing is read. */
  xchg_chunk huge[3] = {{bytes, 4}, {bytes, (size_t)INT64_MAX}, {bytes, 4}};
  EXPECT_REFUSED(xchg_source_from_chunks(huge, 3, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_chunks",
                 "chunk 1 of 3 (9223372036854775807 bytes) takes the "
                 "total size past INT64_MAX bytes");
  xchg_chunk wrapping[3] = {{bytes, SIZE_MAX - 1}, {bytes, 2}, {bytes, 4}};
  EXPECT_REFUSED(xchg_source_from_chunks(wrapping, 3, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_chunks", "chunk 0 of 3 (18446744073709551614 bytes)");
  xchg_chunk edge[2] = {{bytes, (size_t)INT64_MAX - 4}, {bytes, 4}};
  TU_OK(xchg_source_from_chunks(edge, 2, NULL, NULL, &src, &err), err);
  TU_CHECK(src && xchg_source_size(src) == INT64_MAX, "chunks of INT64_MAX bytes in all: size %lld",
           src ? (long long)xchg_source_size(src) : -1LL);
  xchg_source_free(src);

  EXPECT_REFUSED(xchg_source_from_read_at(16, NULL, chunky_close, &c, &src, &err), XCHG_EINVAL,
                 "xchg_source_from_read_at", "read_at is NULL");
  EXPECT_REFUSED(xchg_source_from_read_at(-1, never_read_at, chunky_close, &c, &src, &err),
                 XCHG_EINVAL, "xchg_source_from_read_at", "negative size -1");
  EXPECT_NO_OUT(xchg_source_from_read_at(16, never_read_at, chunky_close, &c, NULL, &err),
                "xchg_source_from_read_at");
  TU_CHECK(c.closed == 0, "a refused constructor ran its close callback (%d times)", c.closed);
}

static void test_fd_constructor_errors(void) {
  xchg_error err = {{0}};
  xchg_source *src;
  EXPECT_REFUSED(xchg_source_from_fd(-1, 1, &src, &err), XCHG_EINVAL, "xchg_source_from_fd",
                 "fd -1 is negative");
  int fds[2];
  TU_CHECK(pipe(fds) == 0);
  EXPECT_NO_OUT(xchg_source_from_fd(fds[0], 1, NULL, &err), "xchg_source_from_fd");
  TU_CHECK(fcntl(fds[0], F_GETFD) != -1, "a refused xchg_source_from_fd closed the fd it owns");
  close(fds[0]);
  close(fds[1]);
}

/* xchg_source_with_cancel takes inner over: a refusal closes it. */
static void test_cancel_constructor_errors(void) {
  xchg_error err = {{0}};
  xchg_source *src, *inner;
  static const uint8_t bytes[16];
  static const int flag = 0;
  chunky c = {bytes, sizeof bytes, 0, 1, 0, 0, 0};
  EXPECT_REFUSED(xchg_source_with_cancel(NULL, NULL, NULL, &src, &err), XCHG_EINVAL,
                 "xchg_source_with_cancel", "inner is NULL");
  TU_OK(xchg_source_from_callback(chunky_read, chunky_close, &c, &inner, &err), err);
  EXPECT_REFUSED(xchg_source_with_cancel(inner, NULL, NULL, &src, &err), XCHG_EINVAL,
                 "xchg_source_with_cancel", "is_cancelled is NULL");
  TU_CHECK(c.closed == 1, "a refused xchg_source_with_cancel left inner open");
  TU_OK(xchg_source_from_callback(chunky_read, chunky_close, &c, &inner, &err), err);
  EXPECT_REFUSED(xchg_source_with_cancel_flag(inner, NULL, &src, &err), XCHG_EINVAL,
                 "xchg_source_with_cancel_flag", "flag is NULL");
  TU_CHECK(c.closed == 2, "a refused xchg_source_with_cancel_flag left inner open");
  TU_OK(xchg_source_from_callback(chunky_read, chunky_close, &c, &inner, &err), err);
  EXPECT_NO_OUT(xchg_source_with_cancel_flag(inner, &flag, NULL, &err),
                "xchg_source_with_cancel_flag");
  TU_CHECK(c.closed == 3, "xchg_source_with_cancel_flag without out left inner open");
}

static void pipe_source(void) {
  test_pipe_source(300000, 0);
  test_pipe_source(110010 + (20u << 20) + 5000, 20u << 20); /* beyond the growth threshold */
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"buf_source", test_buf_source},
      {"memory_source_release", test_memory_source_release},
      {"reader_open_memory_release", test_reader_open_memory_release},
      {"mmap_file", test_mmap_file},
      {"read_file", test_read_file},
      {"empty_file", test_empty_file},
      {"open_errors", test_open_errors},
      {"gold_file_modes_agree", test_gold_file_modes_agree},
      {"pipe_source", pipe_source},
      {"fd_regular_file", test_fd_regular_file},
      {"callback_source", test_callback_source},
      {"memory_constructor_errors", test_memory_constructor_errors},
      {"fd_constructor_errors", test_fd_constructor_errors},
      {"cancel_constructor_errors", test_cancel_constructor_errors},
  };
  return TU_MAIN(argc, argv, "io", cases);
}
