/* tests/test_writer.c — the IPC writer's outputs, layout, options and errors.
 *
 *  - the same batches give the same bytes whether written to memory, a file
 *    descriptor, a callback, from an ArrowArrayStream, or with compression
 *    spread over a thread pool;
 *  - the layout on the wire, parsed here with the flatbuffer reader: every
 *    message's metadata and every buffer aligned as asked, empty buffers
 *    written with length 0, compressed buffers prefixed with their length or
 *    with -1 when stored raw (always, with min_space_saving 0.99; never,
 *    with -INFINITY);
 *  - coalescing by bytes;
 *  - errors: bad schemas and arrays, writing after finish, a failing sink
 *    (sticky), bad options; and allocation failures at every step of a
 *    write give XCHG_ENOMEM without crashing or leaking (ASan checks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/flatbuf.h"
#include "support/array_equal.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/testing.h"

#define MSG 2048

static int same_bytes(xchg_buf *a, const uint8_t *b, size_t n) {
  return xchg_buf_size(a) == n && memcmp(xchg_buf_data(a), b, n) == 0;
}

/* ---- sinks ------------------------------------------------------------------------ */

typedef struct collector {
  uint8_t *data;
  size_t len, cap;
  int calls, fail_at;
} collector;

static xchg_status collect(void *ctx, const void *data, size_t n, xchg_error *err) {
  collector *c = ctx;
  if (++c->calls == c->fail_at)
    return xchg_errorf(err, XCHG_EIO, "the sink refuses call %d", c->calls);
  if (c->len + n > c->cap) {
    size_t cap = (c->len + n) * 2;
    uint8_t *p = realloc(c->data, cap);
    if (!p) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    c->data = p;
    c->cap = cap;
  }
  memcpy(c->data + c->len, data, n);
  c->len += n;
  return XCHG_OK;
}

static xchg_status write_with(xchg_ipc_writer *w, const rt_data *src, xchg_error *err) {
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < src->n && st == XCHG_OK; i++)
    st = xchg_ipc_writer_write(w, &src->batches[i], err);
  return st == XCHG_OK ? xchg_ipc_writer_finish(w, err) : st;
}

static void check_sinks(const char *name, const rt_data *src) {
  char msg[MSG], what[256];
  xchg_error err;
  for (int fmt = 0; fmt < 2; fmt++) {
    xchg_ipc_write_options o;
    xchg_ipc_write_options_init(&o);
    o.format = fmt ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
    o.codec = XCHG_BLOCK_ZSTD;
    snprintf(what, sizeof what, "%s sinks (%s)", name, fmt ? "file" : "stream");
    xchg_buf *mem;
    if (rt_write(&src->schema, src->batches, src->n, &o, &mem, msg, MSG) != 0) {
      TU_CHECK(0, "%s: %s", what, msg);
      continue;
    }
    /* callback */
    collector c = {0};
    xchg_ipc_writer *w;
    if (xchg_ipc_writer_open(&src->schema, &o, collect, &c, &w, &err) != XCHG_OK ||
        write_with(w, src, &err) != XCHG_OK)
      TU_CHECK(0, "%s: %s", what, err.message);
    else
      TU_CHECK(same_bytes(mem, c.data, c.len), "%s: callback bytes differ from memory bytes", what);
    TU_CHECK(xchg_ipc_writer_bytes_written(w) == (int64_t)xchg_buf_size(mem),
             "%s: bytes_written is wrong", what);
    xchg_ipc_writer_free(w);
    free(c.data);
    /* file descriptor */
    FILE *tmp = tmpfile();
    if (!tmp) {
      TU_CHECK(0, "%s: tmpfile", what);
    } else {
      int fd = fileno(tmp);
      if (xchg_ipc_writer_open_fd(&src->schema, &o, fd, &w, &err) != XCHG_OK ||
          write_with(w, src, &err) != XCHG_OK) {
        TU_CHECK(0, "%s: %s", what, err.message);
      } else {
        size_t n = xchg_buf_size(mem);
        uint8_t *back = malloc(n + 1);
        ssize_t got = back ? pread(fd, back, n + 1, 0) : -1;
        TU_CHECK(got == (ssize_t)n && memcmp(back, xchg_buf_data(mem), n) == 0,
                 "%s: fd bytes differ from memory bytes", what);
        free(back);
      }
      xchg_ipc_writer_free(w);
      fclose(tmp);
    }
    /* a pool, with every buffer its own task */
    xchg_pool *pool = NULL;
    TU_CHECK(xchg_pool_create(3, &pool, NULL) == XCHG_OK, "cannot create a pool");
    xchg_ipc_write_options po = o;
    po.pool = pool;
    po.parallel_min_bytes = 1;
    xchg_buf *par;
    if (rt_write(&src->schema, src->batches, src->n, &po, &par, msg, MSG) != 0)
      TU_CHECK(0, "%s: %s", what, msg);
    else {
      TU_CHECK(same_bytes(par, xchg_buf_data(mem), xchg_buf_size(mem)),
               "%s: pool output differs from serial output", what);
      xchg_buf_unref(par);
    }
    xchg_pool_free(pool);
    xchg_buf_unref(mem);
  }
}

/* The stream path: reader -> ArrowArrayStream -> writer equals batch by batch. */
static void check_array_stream(const char *path, const rt_data *src) {
  char msg[MSG];
  xchg_error err;
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.codec = XCHG_BLOCK_LZ4_FRAME;
  xchg_buf *want, *got;
  if (rt_write(&src->schema, src->batches, src->n, &o, &want, msg, MSG) != 0) {
    TU_CHECK(0, "array stream: %s", msg);
    return;
  }
  xchg_ipc_reader *r;
  struct ArrowArrayStream stream;
  memset(&stream, 0xab, sizeof stream); /* a caller's stack: an error path releases what is set */
  TU_CHECK(xchg_ipc_reader_to_stream(NULL, &stream, &err) == XCHG_EINVAL &&
               strstr(err.message, "reader is NULL") && stream.release == NULL,
           "to_stream of no reader: %s, release %s", err.message,
           stream.release ? "left set" : "NULL");
  if (xchg_ipc_reader_open_file(path, NULL, &r, &err) != XCHG_OK ||
      xchg_ipc_reader_to_stream(r, &stream, &err) != XCHG_OK) {
    TU_CHECK(0, "array stream: %s", err.message);
  } else if (xchg_ipc_encode_stream(&stream, &o, &got, &err) != XCHG_OK) {
    TU_CHECK(0, "array stream: %s", err.message);
  } else {
    TU_CHECK(same_bytes(got, xchg_buf_data(want), xchg_buf_size(want)),
             "array stream: bytes differ from batch by batch");
    xchg_buf_unref(got);
  }
  xchg_buf_unref(want);
}

/* ---- the layout on the wire ---------------------------------------------------------- */

static int64_t load_i64(const uint8_t *p) { return (int64_t)fb_load_u64(p); }

/* Walks a stream's messages; checks alignment, empty buffers and prefixes.
 * Sets *raw / *compressed / *empty to the counts of such buffers. */
static int check_layout(xchg_buf *buf, int align, int compressed_body, int64_t counts[3],
                        char *msg) {
  const uint8_t *p = xchg_buf_data(buf);
  size_t size = xchg_buf_size(buf), at = 0;
  memset(counts, 0, 3 * sizeof *counts);
  while (at + 8 <= size) {
    if (fb_load_u32(p + at) != 0xFFFFFFFFu)
      return snprintf(msg, MSG, "no continuation marker at byte %zu", at) * 0 - 1;
    uint32_t len = fb_load_u32(p + at + 4);
    if (len == 0)
      return at + 8 == size ? 0
                            : (snprintf(msg, MSG, "bytes after the end-of-stream marker") * 0 - 1);
    if ((8 + len) % (uint32_t)align != 0)
      return snprintf(msg, MSG, "metadata of %u bytes at %zu breaks %d-byte alignment", len, at,
                      align) *
                 0 -
             1;
    fb_table m, header;
    int64_t body_len;
    uint8_t type;
    if (fb_root(p + at + 8, len, &m) <= 0 || fb_u8(&m, 1, 0, &type) < 0 ||
        fb_i64(&m, 3, 0, &body_len) < 0)
      return snprintf(msg, MSG, "bad Message at %zu", at) * 0 - 1;
    const uint8_t *body = p + at + 8 + len;
    if (body_len % align != 0)
      return snprintf(msg, MSG, "body length %lld not aligned", (long long)body_len) * 0 - 1;
    if (type == 2 || type == 3) {
      fb_table batch = {0};
      if (fb_table_field(&m, 2, &header) <= 0) return snprintf(msg, MSG, "no header") * 0 - 1;
      if (type == 2) {
        if (fb_table_field(&header, 1, &batch) <= 0)
          return snprintf(msg, MSG, "no dictionary data") * 0 - 1;
      } else {
        batch = header;
      }
      fb_vector buffers;
      if (fb_vector_field(&batch, 2, 16, &buffers) <= 0)
        return snprintf(msg, MSG, "no buffers") * 0 - 1;
      for (uint32_t i = 0; i < buffers.count; i++) {
        const uint8_t *spec = fb_vector_elem(&buffers, i);
        int64_t off = load_i64(spec), blen = load_i64(spec + 8);
        if (off % align != 0)
          return snprintf(msg, MSG, "buffer %u at body offset %lld", i, (long long)off) * 0 - 1;
        if (off + blen > body_len) return snprintf(msg, MSG, "buffer %u past the body", i) * 0 - 1;
        if (blen == 0) {
          counts[2]++;
          continue;
        }
        if (!compressed_body) continue;
        if (blen < 8)
          return snprintf(msg, MSG, "compressed buffer %u of %lld bytes", i, (long long)blen) * 0 -
                 1;
        int64_t prefix = load_i64(body + off);
        if (prefix == -1)
          counts[0]++;
        else if (prefix > 0)
          counts[1]++;
        else
          return snprintf(msg, MSG, "buffer %u has length prefix %lld", i, (long long)prefix) * 0 -
                 1;
      }
    }
    at += 8 + len + (size_t)body_len;
  }
  return snprintf(msg, MSG, "no end-of-stream marker") * 0 - 1;
}

static void check_wire(const char *name, const rt_data *src, int has_empty) {
  char msg[MSG], what[256];
  /* Any shrinking kept; none kept; every buffer kept, as Arrow C++ writes. */
  static const double savings[3] = {0.0, 0.99, -INFINITY};
  for (int a = 0; a < 2; a++) {
    for (int s = 0; s < 3; s++) {
      xchg_ipc_write_options o;
      xchg_ipc_write_options_init(&o);
      o.alignment = a ? 64 : 8;
      o.codec = XCHG_BLOCK_LZ4_FRAME;
      o.min_space_saving = savings[s];
      snprintf(what, sizeof what, "%s layout (align %d, min saving %.2f)", name, o.alignment,
               savings[s]);
      xchg_buf *buf;
      if (rt_write(&src->schema, src->batches, src->n, &o, &buf, msg, MSG) != 0) {
        TU_CHECK(0, "%s: %s", what, msg);
        continue;
      }
      int64_t counts[3];
      if (check_layout(buf, o.alignment, 1, counts, msg) != 0)
        TU_CHECK(0, "%s: %s", what, msg);
      else if (s == 1 && counts[1] != 0)
        TU_CHECK(0, "%s: a buffer was kept compressed despite min_space_saving 0.99", what);
      else if (s == 0 && counts[1] == 0 && src->n > 0)
        TU_CHECK(0, "%s: no buffer was compressed", what);
      else if (s == 2 && counts[0] != 0)
        TU_CHECK(0, "%s: %lld buffers stored raw despite min_space_saving -inf", what,
                 (long long)counts[0]);
      else
        TU_CHECK(!has_empty || counts[2] != 0,
                 "%s: no empty buffer (columns without nulls have one)", what);
      rt_data back = {0};
      TU_CHECK(rt_read_buf(buf, &back, msg, MSG) == 0, "%s: %s", what, msg);
      for (int64_t i = 0; i < back.n; i++)
        TU_CHECK(array_equal(&src->schema, &src->batches[i], &back.batches[i], msg, MSG) == 0,
                 "%s: %s", what, msg);
      rt_data_free(&back);
      xchg_buf_unref(buf);
    }
  }
}

/* ---- coalescing by bytes ---------------------------------------------------------------- */

static void check_coalesce_bytes(const rt_data *src) {
  char msg[MSG];
  int64_t n_small = 0;
  struct ArrowArray small[256];
  for (int64_t b = 0; b < src->n; b++)
    for (int64_t r = 0; r < src->batches[b].length && n_small < 256; r++) {
      small[n_small] = src->batches[b];
      small[n_small].offset = r;
      small[n_small++].length = 1;
    }
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.coalesce_bytes = 400;
  xchg_buf *buf;
  if (!TU_CHECK(rt_write(&src->schema, small, n_small, &o, &buf, msg, MSG) == 0,
                "coalesce_bytes: %s", msg))
    return;
  rt_data back = {0};
  if (TU_CHECK(rt_read_buf(buf, &back, msg, MSG) == 0, "coalesce_bytes: %s", msg)) {
    int64_t row = 0;
    for (int64_t i = 0; i < back.n; i++)
      for (int64_t k = 0; k < back.batches[i].length; k++, row++)
        if (row >= n_small || array_range_equal(&src->schema, &small[row], 0, &back.batches[i], k,
                                                1, msg, MSG) != 0) {
          TU_CHECK(0, "coalesce_bytes values: %s", row >= n_small ? "too many rows" : msg);
          i = back.n;
          break;
        }
    TU_CHECK(row == n_small && back.n >= 2 && back.n < n_small,
             "coalesce_bytes: %lld rows in %lld batches from %lld one-row batches", (long long)row,
             (long long)back.n, (long long)n_small);
  }
  rt_data_free(&back);
  xchg_buf_unref(buf);
}

/* ---- errors ------------------------------------------------------------------------- */

static void no_release(struct ArrowSchema *s) { (void)s; }

static void expect_error(const char *what, xchg_status st, xchg_status want, const xchg_error *err,
                         const char *needle) {
  if (st != want) {
    char msg[MSG];
    snprintf(msg, MSG, "status %s, want %s (%s)", xchg_status_name(st), xchg_status_name(want),
             st == XCHG_OK ? "" : err->message);
    TU_CHECK(0, "%s: %s", what, msg);
  } else if (needle && !strstr(err->message, needle)) {
    TU_CHECK(0, "%s: %s", what, err->message);
  }
}

/* The sample (run-end encoded columns and all) written twice, coalesced:
 * one batch holding both copies' rows. */
static void check_coalesced_sample(const struct ArrowSchema *schema,
                                   const struct ArrowArray *batch) {
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.coalesce_rows = 100;
  struct ArrowArray twice[2] = {*batch, *batch};
  xchg_buf *buf;
  rt_data d = {0};
  char msg[MSG];
  if (rt_write(schema, twice, 2, &o, &buf, msg, MSG) != 0 || rt_read_buf(buf, &d, msg, MSG) != 0) {
    TU_CHECK(0, "coalesced sample: %s", msg);
  } else if (d.n != 1 || d.batches[0].length != 2 * batch->length) {
    TU_CHECK(0, "coalesced sample: not one batch of both copies");
  } else {
    for (int64_t i = 0; i < 2; i++)
      TU_CHECK(array_range_equal(schema, batch, 0, &d.batches[0], i * batch->length, batch->length,
                                 msg, MSG) == 0,
               "coalesced sample: %s", msg);
  }
  rt_data_free(&d);
  xchg_buf_unref(buf);
}

static void check_errors(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  xchg_ipc_writer *w = NULL;
  xchg_error err;
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  /* bad schemas */
  struct ArrowSchema leaf = {"x", "weird", NULL, 0, 0, NULL, NULL, no_release, NULL},
                     *kids[1] = {&leaf};
  struct ArrowSchema root = {"+s", "", NULL, 0, 1, kids, NULL, no_release, NULL};
  expect_error("unknown format", xchg_ipc_writer_open_memory(&root, &o, &w, &err), XCHG_EINVAL,
               &err, "weird");
  expect_error("not a struct", xchg_ipc_writer_open_memory(&leaf, &o, &w, &err), XCHG_EINVAL, &err,
               NULL);
  leaf.format = "+l";
  expect_error("list without child", xchg_ipc_writer_open_memory(&root, &o, &w, &err), XCHG_EINVAL,
               &err, "children");
  o.alignment = 16;
  expect_error("alignment 16", xchg_ipc_writer_open_memory(schema, &o, &w, &err), XCHG_EINVAL, &err,
               "alignment");
  xchg_ipc_write_options_init(&o);
  expect_error("bad fd", xchg_ipc_writer_open_fd(schema, &o, -1, &w, &err), XCHG_EINVAL, &err,
               NULL);
  /* Options out of range; dictionary ids that do not match the sample's
   * one dictionary-encoded field (more would be meant for another schema). */
  static const int64_t ids[2] = {5, 6};
  const struct {
    const char *what, *says;
    int64_t coalesce_rows, coalesce_bytes, parallel_min_bytes, n_ids;
    const int64_t *ids;
  } bad_options[] = {
      {"negative coalesce_rows", "coalesce_rows is negative", -1, 0, 0, 0, NULL},
      {"negative coalesce_bytes", "coalesce_bytes is negative", 0, -1, 0, 0, NULL},
      {"negative parallel_min_bytes", "parallel_min_bytes is negative", 0, 0, -1, 0, NULL},
      {"negative n_dictionary_ids", "n_dictionary_ids is negative", 0, 0, 0, -1, ids},
      {"ids NULL, n_dictionary_ids 2", "dictionary_ids is NULL", 0, 0, 0, 2, NULL},
      {"no id for the dictionary field", "only 0 dictionary ids given", 0, 0, 0, 0, ids},
      {"two ids for one dictionary field", "2 dictionary ids given, the schema has 1", 0, 0, 0, 2,
       ids},
  };
  static const double bad_savings[2] = {1.0, NAN};
  for (int i = 0; i < 2; i++) {
    xchg_ipc_write_options_init(&o);
    o.codec = XCHG_BLOCK_LZ4_FRAME;
    o.min_space_saving = bad_savings[i];
    expect_error("min_space_saving 1 or NaN", xchg_ipc_writer_open_memory(schema, &o, &w, &err),
                 XCHG_EINVAL, &err, "must be below 1");
  }
  for (size_t i = 0; i < sizeof bad_options / sizeof *bad_options; i++) {
    xchg_ipc_write_options_init(&o);
    o.coalesce_rows = bad_options[i].coalesce_rows;
    o.coalesce_bytes = bad_options[i].coalesce_bytes;
    o.parallel_min_bytes = bad_options[i].parallel_min_bytes;
    o.dictionary_ids = bad_options[i].ids;
    o.n_dictionary_ids = bad_options[i].n_ids;
    expect_error(bad_options[i].what, xchg_ipc_writer_open_memory(schema, &o, &w, &err),
                 XCHG_EINVAL, &err, bad_options[i].says);
  }
  xchg_ipc_write_options_init(&o);
  o.dictionary_ids = ids;
  o.n_dictionary_ids = 1;
  expect_error("one id for the dictionary field", xchg_ipc_writer_open_memory(schema, &o, &w, &err),
               XCHG_OK, &err, NULL);
  xchg_ipc_writer_free(w);
  w = NULL;
  xchg_ipc_write_options_init(&o);
  /* bad arrays */
  if (xchg_ipc_writer_open_memory(schema, &o, &w, &err) != XCHG_OK) {
    TU_CHECK(0, "open: %s", err.message);
    return;
  }
  struct ArrowArray short_batch = *batch;
  short_batch.n_children--;
  expect_error("missing column", xchg_ipc_writer_write(w, &short_batch, &err), XCHG_EINVAL, &err,
               "children");
  struct ArrowArray past = *batch;
  past.offset = 4;
  expect_error("slice past the end", xchg_ipc_writer_write(w, &past, &err), XCHG_EINVAL, &err,
               "outside");
  struct ArrowArray released = *batch;
  released.release = NULL;
  expect_error("released batch", xchg_ipc_writer_write(w, &released, &err), XCHG_EINVAL, &err,
               NULL);
  expect_error("good batch", xchg_ipc_writer_write(w, batch, &err), XCHG_OK, &err, NULL);
  expect_error("finish", xchg_ipc_writer_finish(w, &err), XCHG_OK, &err, NULL);
  expect_error("write after finish", xchg_ipc_writer_write(w, batch, &err), XCHG_EINVAL, &err,
               "finished");
  xchg_ipc_writer_free(w);
  /* a failing sink: the error comes back and stays */
  collector c = {0};
  c.fail_at = 2; /* the schema reaches the sink at open; the batches at finish */
  xchg_status st = xchg_ipc_writer_open(schema, &o, collect, &c, &w, &err);
  for (int i = 0; i < 3 && st == XCHG_OK; i++) st = xchg_ipc_writer_write(w, batch, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  expect_error("failing sink", st, XCHG_EIO, &err, "refuses");
  if (w)
    expect_error("after a failing sink", xchg_ipc_writer_write(w, batch, &err), XCHG_EIO, &err,
                 NULL);
  xchg_ipc_writer_free(w);
  free(c.data);
  check_coalesced_sample(schema, batch);
}

/* Every xchg_buf allocation of a write, failed in turn. */
static void check_allocation_failures(const rt_data *src) {
  int64_t live = xchg_buf_live_count();
  int completed = 0;
  for (int64_t n = 1; n < 400 && !completed; n++) {
    xchg_ipc_write_options o;
    xchg_ipc_write_options_init(&o);
    o.codec = XCHG_BLOCK_LZ4_FRAME;
    o.big_endian = 1;
    o.coalesce_rows = 5;
    xchg_ipc_writer *w;
    xchg_error err;
    xchg_buf_fail_nth_alloc(n);
    xchg_status st = xchg_ipc_writer_open_memory(&src->schema, &o, &w, &err);
    if (st == XCHG_OK) {
      st = write_with(w, src, &err);
      xchg_buf *out = st == XCHG_OK ? xchg_ipc_writer_take_memory(w) : NULL;
      completed = out != NULL;
      xchg_buf_unref(out);
      xchg_ipc_writer_free(w);
    }
    xchg_buf_fail_nth_alloc(0);
    if (st != XCHG_OK && st != XCHG_ENOMEM) {
      TU_CHECK(0, "allocation failure: %s", err.message);
      break;
    }
  }
  TU_CHECK(completed, "allocation failure: the write never completed");
  TU_CHECK(xchg_buf_live_count() == live, "allocation failure: buffers leaked");
}

static char gold_path[4096];
static rt_data gold, sample;

static void sinks(void) {
  check_sinks("nested", &gold);
  check_sinks("sample", &sample);
}

static void array_stream(void) { check_array_stream(gold_path, &gold); }

static void wire(void) {
  check_wire("nested", &gold, 0);
  check_wire("sample", &sample, 1);
}

static void coalesce_bytes(void) { check_coalesce_bytes(&gold); }

static void allocation_failures(void) {
  check_allocation_failures(&gold);
  check_allocation_failures(&sample);
}

int main(int argc, char **argv) {
  char msg[MSG];
  tu_testdata_path(gold_path, sizeof gold_path,
                   "arrow-gold/1.0.0-littleendian/generated_nested.stream");
  if (!TU_CHECK(rt_read_file(gold_path, &gold, msg, MSG) == 0, "%s: %s", gold_path, msg)) return 1;
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  sample = (rt_data){.schema = *schema, .batches = batch, .n = 1};
  static const tu_case cases[] = {
      {"sinks", sinks},         {"array_stream", array_stream},
      {"wire", wire},           {"coalesce_bytes", coalesce_bytes},
      {"errors", check_errors}, {"allocation_failures", allocation_failures},
  };
  int rc = TU_MAIN(argc, argv, "writer", cases);
  rt_data_free(&gold);
  return rc;
}
