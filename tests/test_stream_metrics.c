/* test_stream_metrics.c — the compressed input stream's behaviour as the
 * published Gluten change tested it (cached reads add no decompression
 * time; varied read sizes across compressed and decompressed chunk
 * boundaries; concatenated frames and repeated EOF; empty frames and
 * zero-length reads; truncated frames are I/O errors), plus the metrics, the
 * stream-as-source adapter, chunk-list sources and cancellation. */
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "xchg/stream.h"
#include "xchg/testing.h"
#include "support/sources.h"
#include "support/testutil.h"

/* Rows of text with varying content: compressible, but not trivially. */
static tu_bytes make_payload(size_t n) {
  tu_bytes b = {malloc(n + 64), 0};
  uint32_t x = 12345;
  while (b.size < n) {
    x = x * 1664525u + 1013904223u;
    int k = snprintf((char *)b.data + b.size, 64, "row %u value %u;", x >> 20, x & 0xFFFF);
    b.size += (size_t)k;
  }
  b.size = n;
  return b;
}

/* Gluten's writer: every 64 KiB of input becomes its own LZ4 frame. */
static tu_bytes lz4_frames(tu_bytes payload, size_t chunk) {
  tu_bytes out = {0};
  for (size_t off = 0; off < payload.size || off == 0; off += chunk) {
    size_t n = payload.size - off < chunk ? payload.size - off : chunk;
    size_t cap = LZ4F_compressFrameBound(n, NULL);
    uint8_t *f = malloc(cap);
    size_t fn = LZ4F_compressFrame(f, cap, n ? payload.data + off : NULL, n,
                                   NULL); /* data NULL when empty */
    tu_bytes_append(&out, f, fn);
    free(f);
    if (payload.size == 0) break;
  }
  return out;
}

/* A callback source reading at most `step` bytes a call, optionally
 * sleeping to simulate a slow network. */
typedef struct slow_src {
  tu_bytes b;
  size_t pos, step;
  long sleep_ns;
  int reads;
} slow_src;

static xchg_status slow_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  (void)err; /* never fails */
  slow_src *d = ctx;
  size_t k = d->b.size - d->pos;
  if (k > n) k = n;
  if (k > d->step) k = d->step;
  if (d->sleep_ns > 0) {
    struct timespec ts = {0, d->sleep_ns};
    nanosleep(&ts, NULL);
  }
  memcpy(dst, d->b.data + d->pos, k);
  d->pos += k;
  d->reads++;
  *got = k;
  return XCHG_OK;
}

static xchg_source *slow_source(slow_src *d) {
  xchg_source *src;
  xchg_error err;
  TU_OK(xchg_source_from_callback(slow_read, NULL, d, &src, &err), err);
  return src;
}

static xchg_istream *open_stream(xchg_source *src, xchg_stream_codec codec, size_t window,
                                 size_t read_size, int metrics) {
  xchg_istream_options o;
  xchg_istream_options_init(&o);
  o.window_size = window;
  o.read_size = read_size;
  o.metrics = metrics;
  xchg_istream *s = NULL;
  xchg_error err;
  xchg_status st = xchg_istream_open(src, codec, &o, &s, &err);
  TU_CHECK(st == XCHG_OK, "open: %s", err.message);
  return s;
}

static void test_cached_reads_add_no_time(void) {
  tu_bytes payload = make_payload(1 << 20), enc = lz4_frames(payload, 65536);
  xchg_istream *s =
      open_stream(tu_memory_source(enc.data, enc.size), XCHG_STREAM_LZ4_FRAME, 65536, 65536, 1);
  uint8_t buf[256];
  size_t got;
  xchg_error err;
  TU_CHECK(xchg_istream_read(s, buf, 1, &got, &err) == XCHG_OK && got == 1, "first read");
  xchg_istream_metrics m1, m2;
  xchg_istream_get_metrics(s, &m1);
  TU_CHECK(m1.refills == 1 && m1.wall_ns > 0 && m1.decompressed_bytes == 65536,
           "after one read: %lld refills, %lld ns, %lld bytes", (long long)m1.refills,
           (long long)m1.wall_ns, (long long)m1.decompressed_bytes);
  /* The rest of the window, in reads of 255: no refill, no time. */
  for (size_t pos = 1; pos + 255 <= 65536; pos += 255) {
    xchg_istream_read(s, buf, 255, &got, &err);
    TU_CHECK(memcmp(buf, payload.data + pos, 255) == 0, "cached bytes at %zu", pos);
  }
  xchg_istream_get_metrics(s, &m2);
  TU_CHECK(memcmp(&m1, &m2, sizeof m1) == 0,
           "cached reads changed the metrics: refills %lld -> %lld, wall %lld -> %lld ns",
           (long long)m1.refills, (long long)m2.refills, (long long)m1.wall_ns,
           (long long)m2.wall_ns);
  /* One more read crosses into the next window: now it costs a refill. */
  xchg_istream_read(s, buf, 255, &got, &err);
  xchg_istream_get_metrics(s, &m2);
  TU_CHECK(m2.refills == 2 && m2.wall_ns > m1.wall_ns, "crossing read: %lld refills",
           (long long)m2.refills);
  xchg_istream_free(s);
  free(payload.data);
  free(enc.data);
}

/* Varied read sizes with compressed reads and decompressed windows of
 * sizes that share no boundary with the frames or each other. */
static void test_varied_reads(xchg_stream_codec codec, int metrics) {
  tu_bytes payload = make_payload(700001), enc = {0};
  if (codec == XCHG_STREAM_LZ4_FRAME) {
    enc = lz4_frames(payload, 65536);
  } else {
    for (size_t off = 0; off < payload.size; off += 100000) { /* concatenated frames */
      size_t n = payload.size - off < 100000 ? payload.size - off : 100000;
      xchg_buf *b = NULL;
      TU_CHECK(xchg_stream_encode(codec, NULL, payload.data + off, n, &b, NULL) == XCHG_OK);
      tu_bytes_append(&enc, xchg_buf_data(b), xchg_buf_size(b));
      xchg_buf_unref(b);
    }
  }
  static const size_t windows[] = {3000, 65536, 1 << 20};
  static const size_t reads[] = {4000, 777, 1 << 16};
  for (int w = 0; w < 3; w++) {
    slow_src src = {enc, 0, 1234, 0, 0};
    xchg_istream *s = open_stream(slow_source(&src), codec, windows[w], reads[w], metrics);
    uint8_t *out = malloc(payload.size + 100000);
    size_t pos = 0;
    uint32_t x = 7;
    xchg_status st = XCHG_OK;
    xchg_error err;
    for (;;) {
      x = x * 1103515245u + 12345u;
      size_t n = (x >> 16) % 70000, got = 0;
      st = xchg_istream_read(s, out + pos, n, &got, &err);
      pos += got;
      if (st != XCHG_OK || got < n) break;
    }
    TU_CHECK(st == XCHG_OK, "%s window %zu: %s", xchg_stream_codec_name(codec), windows[w],
             err.message);
    TU_CHECK(pos == payload.size && memcmp(out, payload.data, pos) == 0,
             "%s window %zu: %zu bytes out, %zu expected, or content differs",
             xchg_stream_codec_name(codec), windows[w], pos, payload.size);
    /* Repeated EOF. */
    for (int i = 0; i < 3; i++) {
      size_t got = 1;
      TU_CHECK(xchg_istream_read(s, out, 10, &got, &err) == XCHG_OK && got == 0, "EOF read %d", i);
    }
    xchg_istream_metrics m;
    xchg_istream_get_metrics(s, &m);
    TU_CHECK(
        m.compressed_bytes == (int64_t)enc.size && m.decompressed_bytes == (int64_t)payload.size,
        "metrics bytes %lld/%lld, expected %zu/%zu", (long long)m.compressed_bytes,
        (long long)m.decompressed_bytes, enc.size, payload.size);
    TU_CHECK(m.blocking_ns <= m.wall_ns, "blocking %lld > wall %lld", (long long)m.blocking_ns,
             (long long)m.wall_ns);
    /* Frame codecs cut windows to size; block formats hand out whole blocks. */
    int framed = codec == XCHG_STREAM_LZ4_FRAME || codec == XCHG_STREAM_ZSTD;
    TU_CHECK(m.refills >= (int64_t)(payload.size / (framed ? windows[w] : 32768)),
             "only %lld refills", (long long)m.refills);
    TU_CHECK(metrics ? m.wall_ns > 0 : (m.wall_ns == 0 && m.blocking_ns == 0),
             "metrics %s: wall %lld ns", metrics ? "on" : "off", (long long)m.wall_ns);
    TU_CHECK(xchg_istream_position(s) == (int64_t)payload.size, "position");
    free(out);
    xchg_istream_free(s);
  }
  free(payload.data);
  free(enc.data);
}

static void test_blocking_time(void) {
  tu_bytes payload = make_payload(200000), enc = lz4_frames(payload, 65536);
  slow_src src = {enc, 0, 4096, 2000000, 0}; /* 2 ms per read */
  xchg_istream *s = open_stream(slow_source(&src), XCHG_STREAM_LZ4_FRAME, 65536, 4096, 1);
  const void *p;
  size_t n, total = 0;
  xchg_error err;
  while (xchg_istream_next(s, &p, &n, &err) == XCHG_OK && n > 0) total += n;
  xchg_istream_metrics m;
  xchg_istream_get_metrics(s, &m);
  TU_CHECK(total == payload.size, "next() gave %zu bytes", total);
  TU_CHECK(m.blocking_ns >= (int64_t)src.reads * 2000000 && m.wall_ns >= m.blocking_ns,
           "%d slow reads, blocking %lld ns, wall %lld ns", src.reads, (long long)m.blocking_ns,
           (long long)m.wall_ns);
  xchg_istream_free(s);
  free(payload.data);
  free(enc.data);
}

static void test_truncated_frame(void) {
  tu_bytes payload = make_payload(100000), enc = lz4_frames(payload, 65536);
  xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_FRAME, XCHG_STREAM_ZSTD, XCHG_STREAM_LZ4_JAVA};
  for (int c = 0; c < 3; c++) {
    tu_bytes in = enc;
    xchg_buf *b = NULL;
    if (c > 0) {
      TU_CHECK(xchg_stream_encode(codecs[c], NULL, payload.data, payload.size, &b, NULL) ==
               XCHG_OK);
      in.data = (uint8_t *)xchg_buf_data(b);
      in.size = xchg_buf_size(b);
    }
    in.size = in.size * 2 / 3;
    xchg_istream *s = open_stream(tu_memory_source(in.data, in.size), codecs[c], 65536, 65536, 1);
    uint8_t *out = malloc(payload.size);
    size_t got = 0;
    xchg_error err = {{0}};
    xchg_status st = xchg_istream_read(s, out, payload.size, &got, &err);
    TU_CHECK(st == XCHG_EIO && strstr(err.message, " is cut short: the input ends at byte ") &&
                 got < payload.size,
             "%s cut: %s, '%s'", xchg_stream_codec_name(codecs[c]), xchg_status_name(st),
             err.message);
    /* The error sticks. */
    TU_CHECK(xchg_istream_read(s, out, 1, &got, &err) == st, "sticky error");
    free(out);
    xchg_istream_free(s);
    xchg_buf_unref(b);
  }
  free(payload.data);
  free(enc.data);
}

static void test_empty_frame(void) {
  tu_bytes nothing = {0}, enc = lz4_frames(nothing, 65536);
  tu_bytes payload = make_payload(1000), more = lz4_frames(payload, 65536);
  tu_bytes_append(&enc, more.data, more.size); /* empty frame, then one with data */
  xchg_istream *s =
      open_stream(tu_memory_source(enc.data, enc.size), XCHG_STREAM_LZ4_FRAME, 65536, 65536, 1);
  uint8_t out[2000];
  size_t got = 1;
  xchg_error err;
  TU_CHECK(xchg_istream_read(s, out, 0, &got, &err) == XCHG_OK && got == 0, "zero-length read");
  TU_CHECK(xchg_istream_read(s, out, sizeof out, &got, &err) == XCHG_OK && got == 1000 &&
               memcmp(out, payload.data, 1000) == 0,
           "data after an empty frame: %zu bytes", got);
  xchg_istream_free(s);
  free(enc.data);
  free(more.data);
  free(payload.data);
}

static void count_release(void *ctx, const void *data, size_t size) { ++*(int *)ctx; }

/* A plain ("none") stream over payload whose memory, once released (the
 * stream and its source closed), counts in *released. */
static xchg_istream *counted_stream(const tu_bytes *payload, int *released) {
  xchg_error err;
  xchg_source *src;
  TU_OK(xchg_source_from_memory(payload->data, payload->size, count_release, released, &src, &err),
        err);
  return open_stream(src, XCHG_STREAM_NONE, 4096, 4096, 0);
}

/* Refusals: the status, *out NULL, a message naming the function and the
 * cause; to_source takes s over even then, as_source never does. */
static void test_source_adapter_errors(void) {
  xchg_error err = {{0}};
  xchg_source *src = (xchg_source *)&err;
  xchg_status st = xchg_source_from_istream(NULL, &src, &err);
  TU_CHECK(st == XCHG_EINVAL && src == NULL &&
               strstr(err.message, "xchg_source_from_istream: s is NULL"),
           "to_source(NULL): %s %s", xchg_status_name(st), err.message);
  src = (xchg_source *)&err;
  st = xchg_source_from_istream_borrowed(NULL, &src, &err);
  TU_CHECK(st == XCHG_EINVAL && src == NULL &&
               strstr(err.message, "xchg_source_from_istream_borrowed: s is NULL"),
           "as_source(NULL): %s %s", xchg_status_name(st), err.message);

  tu_bytes payload = make_payload(1000);
  int released = 0;
  xchg_istream *s = counted_stream(&payload, &released);
  st = xchg_source_from_istream_borrowed(s, NULL, &err);
  TU_CHECK(
      st == XCHG_EINVAL && strstr(err.message, "xchg_source_from_istream_borrowed: out is NULL"),
      "as_source(s, NULL): %s %s", xchg_status_name(st), err.message);
  uint8_t first[10];
  size_t got = 0;
  TU_CHECK(released == 0 && xchg_istream_read(s, first, sizeof first, &got, &err) == XCHG_OK &&
               got == sizeof first && memcmp(first, payload.data, got) == 0,
           "a refused as_source did not leave s open and unread");
  st = xchg_source_from_istream(s, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && strstr(err.message, "xchg_source_from_istream: out is NULL"),
           "to_source(s, NULL): %s %s", xchg_status_name(st), err.message);
  TU_CHECK(released == 1, "a refused to_source left s open (released %d times)", released);
  free(payload.data);
}

static void test_as_source(void) {
  tu_bytes payload = make_payload(300000);
  xchg_buf *b = NULL;
  TU_CHECK(xchg_stream_encode(XCHG_STREAM_LZ4_JAVA, NULL, payload.data, payload.size, &b, NULL) ==
           XCHG_OK);
  xchg_error err;
  xchg_source *src;
  TU_OK(xchg_source_from_buf(b, &src, &err), err);
  xchg_istream *s = open_stream(src, XCHG_STREAM_AUTO, 65536, 65536, 1);
  xchg_buf_unref(b);
  TU_CHECK(xchg_istream_codec(s) == XCHG_STREAM_LZ4_JAVA, "auto-detected %s",
           xchg_stream_codec_name(xchg_istream_codec(s)));
  TU_OK(xchg_source_from_istream(s, &src, &err), err);
  xchg_buf *first = NULL;
  TU_CHECK(xchg_source_read_buf(src, 100000, &first, &err) == XCHG_OK &&
               memcmp(xchg_buf_data(first), payload.data, 100000) == 0,
           "read_buf through the adapter");
  xchg_buf_unref(first);
  uint8_t *rest = malloc(payload.size);
  size_t got = 0;
  TU_CHECK(xchg_source_read(src, rest, payload.size, &got, &err) == XCHG_OK &&
               got == payload.size - 100000 && memcmp(rest, payload.data + 100000, got) == 0,
           "rest through the adapter: %zu bytes", got);
  TU_CHECK(xchg_source_position(src) == (int64_t)payload.size, "adapter position");
  free(rest);
  xchg_source_free(src);
  free(payload.data);
}

static void test_chunks_and_cancel(void) {
  tu_bytes payload = make_payload(50000);
  xchg_chunk chunks[5] = {{payload.data, 10000},
                          {payload.data + 10000, 0},
                          {payload.data + 10000, 1},
                          {payload.data + 10001, 29999},
                          {payload.data + 40000, 10000}};
  xchg_source *src;
  xchg_error err;
  TU_OK(xchg_source_from_chunks(chunks, 5, NULL, NULL, &src, &err), err);
  TU_CHECK(xchg_source_size(src) == 50000, "chunks size");
  uint8_t buf[50000];
  size_t got;
  TU_CHECK(xchg_source_seek(src, 9999, &err) == XCHG_OK &&
               xchg_source_read(src, buf, 3, &got, &err) == XCHG_OK && got == 3 &&
               memcmp(buf, payload.data + 9999, 3) == 0,
           "read across chunks after a seek");
  TU_CHECK(xchg_source_seek(src, 0, &err) == XCHG_OK &&
               xchg_source_read(src, buf, sizeof buf, &got, &err) == XCHG_OK && got == 50000 &&
               memcmp(buf, payload.data, 50000) == 0,
           "whole read");
  /* Cancellation: set the flag after the first read. */
  int flag = 0;
  xchg_source *c;
  TU_OK(xchg_source_with_cancel_flag(src, &flag, &c, &err), err);
  TU_CHECK(xchg_source_seek(c, 0, &err) == XCHG_OK &&
               xchg_source_read(c, buf, 100, &got, &err) == XCHG_OK && got == 100,
           "read before cancel");
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  xchg_status st = xchg_source_read(c, buf, 100, &got, &err);
  TU_CHECK(st == XCHG_ECANCELLED && strstr(err.message, "cancel") != NULL, "cancelled read: %s",
           xchg_status_name(st));
  xchg_source_free(c);
  free(payload.data);
}

/* A long read from a cancellable source stops between two 64 KiB reads. */
static int cancel_after_two(void *ctx) { return ++*(int *)ctx > 2; }

static void test_cancel_mid_read(void) {
  tu_bytes payload = make_payload(1 << 20);
  slow_src d = {payload, 0, 1 << 20, 0, 0};
  int calls = 0;
  xchg_source *c;
  uint8_t *buf = malloc(payload.size);
  size_t got = 0;
  xchg_error err;
  TU_OK(xchg_source_with_cancel(slow_source(&d), cancel_after_two, &calls, &c, &err), err);
  xchg_status st = xchg_source_read(c, buf, payload.size, &got, &err);
  TU_CHECK(st == XCHG_ECANCELLED && got == 2 * 65536, "cancelled mid-read: %s after %zu bytes",
           xchg_status_name(st), got);
  xchg_source_free(c);
  free(buf);
  free(payload.data);
}

/* Files (mapped: read in place; read(2): buffered) and a pipe fed by a
 * thread in odd-sized writes. */
typedef struct pipe_feed {
  int fd;
  tu_bytes b;
} pipe_feed;

static void *feed_pipe(void *arg) {
  pipe_feed *f = arg;
  for (size_t off = 0; off < f->b.size;) {
    size_t n = f->b.size - off < 5000 ? f->b.size - off : 5000;
    ssize_t k = write(f->fd, f->b.data + off, n);
    if (k <= 0) break;
    off += (size_t)k;
  }
  close(f->fd);
  return NULL;
}

static void check_decodes(xchg_source *src, tu_bytes payload, const char *what) {
  xchg_istream *s = open_stream(src, XCHG_STREAM_AUTO, 65536, 65536, 1);
  if (s == NULL) return;
  uint8_t *out = malloc(payload.size + 1);
  size_t got = 0;
  xchg_error err;
  xchg_status st = xchg_istream_read(s, out, payload.size + 1, &got, &err);
  TU_CHECK(st == XCHG_OK && got == payload.size && memcmp(out, payload.data, got) == 0,
           "%s: %s, %zu bytes", what, st == XCHG_OK ? "content" : err.message, got);
  free(out);
  xchg_istream_free(s);
}

static void test_files_and_pipes(void) {
  tu_bytes payload = make_payload(500000);
  xchg_buf *enc = NULL;
  TU_CHECK(xchg_stream_encode(XCHG_STREAM_SNAPPY_JAVA, NULL, payload.data, payload.size, &enc,
                              NULL) == XCHG_OK);
  char path[] = "/tmp/xchg-stream-test-XXXXXX";
  int fd = mkstemp(path);
  TU_CHECK(
      fd >= 0 && write(fd, xchg_buf_data(enc), xchg_buf_size(enc)) == (ssize_t)xchg_buf_size(enc),
      "temp file");
  close(fd);
  xchg_file_mode modes[] = {XCHG_FILE_MMAP, XCHG_FILE_READ};
  for (int m = 0; m < 2; m++) {
    xchg_source *src = NULL;
    xchg_error err;
    TU_CHECK(xchg_source_open_file(path, modes[m], &src, &err) == XCHG_OK, "open %s", path);
    if (src != NULL) check_decodes(src, payload, m == 0 ? "mapped file" : "read file");
  }
  unlink(path);
  int fds[2];
  TU_CHECK(pipe(fds) == 0, "pipe");
  pipe_feed feed = {fds[1], {(uint8_t *)xchg_buf_data(enc), xchg_buf_size(enc)}};
  pthread_t t;
  pthread_create(&t, NULL, feed_pipe, &feed);
  xchg_source *src;
  xchg_error err;
  TU_OK(xchg_source_from_fd(fds[0], 1, &src, &err), err);
  if (src == NULL) close(fds[0]); /* not taken over: closing it stops the feeder */
  check_decodes(src, payload, "pipe");
  pthread_join(t, NULL);
  xchg_buf_unref(enc);
  free(payload.data);
}

static void run_varied_reads(void) {
  test_varied_reads(XCHG_STREAM_LZ4_FRAME, 1);
  test_varied_reads(XCHG_STREAM_LZ4_FRAME, 0);
  test_varied_reads(XCHG_STREAM_ZSTD, 1);
  test_varied_reads(XCHG_STREAM_LZ4_JAVA, 1);
  test_varied_reads(XCHG_STREAM_SNAPPY_JAVA, 0);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"cached_reads_add_no_time", test_cached_reads_add_no_time},
      {"varied_reads", run_varied_reads},
      {"blocking_time", test_blocking_time},
      {"truncated_frame", test_truncated_frame},
      {"empty_frame", test_empty_frame},
      {"as_source", test_as_source},
      {"source_adapter_errors", test_source_adapter_errors},
      {"chunks_and_cancel", test_chunks_and_cancel},
      {"cancel_mid_read", test_cancel_mid_read},
      {"files_and_pipes", test_files_and_pipes},
  };
  return TU_MAIN(argc, argv, "stream_metrics", cases);
}
