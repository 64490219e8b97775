/* tests/test_decode.c — selective, zero-copy and parallel decoding.
 *
 * Over every gold file (Apache Arrow's integration files, checked against
 * their JSON by tests/support/arrow_json.c):
 *   - projection: reading one column gives exactly that column of a full
 *     read (the projected column is put back into the full batch, which
 *     must still equal the JSON), with a schema of just that column; it is
 *     selected by name, or by index where columns share its name (which
 *     select then refuses);
 *   - unselected buffers are never decompressed (a decompression hook
 *     counts them) and dictionaries no selected column uses are never
 *     decoded (a corrupt dictionary does not disturb the other columns);
 *   - uncompressed data read from memory is not copied: every buffer lies
 *     inside the input;
 *   - reads on a thread pool, grouping consecutive batches, equal the JSON;
 *   - peek/skip: skipped batches are never decompressed, the others decode
 *     to the right JSON batch;
 *   - the pre-0.15 framing (no continuation marker) decodes to the same
 *     JSON; it also leaves every body 4 bytes off its 8-byte alignment,
 *     which the reader must repair by copying.
 * Prints "N passed, M failed"; exits 1 on any failure. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/format.h"
#include "ipc/message.h"
#include "support/arrow_json.h"
#include "support/c_fixture.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

#define MSG_SIZE 2048

/* The message into msg (MSG_SIZE bytes), then -1. */

/* A reader over a copy of the bytes in memory, with options. */
static xchg_ipc_reader *open_mem(const uint8_t *data, size_t size,
                                 const xchg_ipc_read_options *opts, char *msg) {
  xchg_ipc_reader *r;
  xchg_error err;
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, opts, &r, &err) != XCHG_OK) {
    tu_errorf(msg, MSG_SIZE, "open: %s", err.message);
    return NULL;
  }
  return r;
}

static void release_array(struct ArrowArray *a) {
  if (a->release) a->release(a);
}

/* Reads all batches; returns their count or -1. */
static int64_t read_all(xchg_ipc_reader *r, struct ArrowArray *out, int64_t max, char *msg) {
  int64_t n = 0;
  for (;;) {
    struct ArrowArray a;
    xchg_error err;
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK) {
      tu_errorf(msg, MSG_SIZE, "next: %s", err.message);
      for (int64_t i = 0; i < n; i++) release_array(&out[i]);
      return -1;
    }
    if (!a.release) return n;
    if (n == max) {
      release_array(&a);
      tu_errorf(msg, MSG_SIZE, "more than %" PRId64 " batches", max);
      for (int64_t i = 0; i < n; i++) release_array(&out[i]);
      return -1;
    }
    out[n++] = a;
  }
}

#define MAX_BATCHES 64

typedef struct gold {
  const char *path;
  uint8_t *data;
  size_t size;
  arrow_json *doc;
  int compressed;
} gold;

static void noop_release(struct ArrowArray *a) { (void)a; }

/* ---- projection ------------------------------------------------------------ */

/* Reads column c alone and checks it against the JSON by putting it in
 * place of the same column of a full read. */
static int check_projection(const gold *g, int64_t c, char *msg) {
  xchg_ipc_reader *full = open_mem(g->data, g->size, NULL, msg), *one = NULL;
  struct ArrowArray fb[MAX_BATCHES], pb[MAX_BATCHES];
  struct ArrowSchema fs = {0}, ps = {0};
  int64_t nf = -1, np = -1;
  int rc = -1;
  xchg_error err;
  if (!full || xchg_ipc_reader_schema(full, &fs, &err) != XCHG_OK) goto done;
  if (!(one = open_mem(g->data, g->size, NULL, msg))) goto done;
  /* By name, unless other columns have it: then the name is refused, and
   * the column is selected by its index. */
  const char *name = fs.children[c]->name;
  int shared = 0;
  for (int64_t i = 0; i < fs.n_children; i++)
    shared |= i != c && strcmp(fs.children[i]->name, name) == 0;
  xchg_status st = xchg_ipc_reader_select(one, &name, 1, &err);
  if (shared && st != XCHG_EINVAL) {
    tu_errorf(msg, MSG_SIZE, "select '%s', a name columns share: %s", name, xchg_status_name(st));
    goto done;
  }
  if (shared) st = xchg_ipc_reader_select_indices(one, &c, 1, &err);
  if (st != XCHG_OK) {
    tu_errorf(msg, MSG_SIZE, "select '%s' (column %" PRId64 "): %s", name, c, err.message);
    goto done;
  }
  if (xchg_ipc_reader_schema(one, &ps, &err) != XCHG_OK) goto done;
  if (ps.n_children != 1 || strcmp(ps.children[0]->format, fs.children[c]->format) != 0) {
    tu_errorf(msg, MSG_SIZE, "projected schema has %" PRId64 " columns (format %s)", ps.n_children,
              ps.n_children ? ps.children[0]->format : "-");
    goto done;
  }
  if ((nf = read_all(full, fb, MAX_BATCHES, msg)) < 0 ||
      (np = read_all(one, pb, MAX_BATCHES, msg)) < 0)
    goto done;
  if (nf != np) {
    tu_errorf(msg, MSG_SIZE, "%" PRId64 " batches projected, %" PRId64 " full", np, nf);
    goto done;
  }
  rc = 0;
  for (int64_t i = 0; i < nf && rc == 0; i++) {
    struct ArrowArray *kids[256];
    struct ArrowArray merged = fb[i];
    if (pb[i].n_children != 1 || fb[i].n_children > 256) {
      rc = tu_errorf(msg, MSG_SIZE, "batch %" PRId64 ": projected batch has %" PRId64 " columns", i,
                     pb[i].n_children);
      break;
    }
    memcpy(kids, fb[i].children, (size_t)fb[i].n_children * sizeof *kids);
    kids[c] = pb[i].children[0];
    merged.children = kids;
    merged.release = noop_release;
    if (arrow_json_compare_batch(g->doc, i, &fs, &merged, msg, MSG_SIZE) != 0) rc = -1;
  }
done:
  for (int64_t i = 0; i < nf; i++) release_array(&fb[i]);
  for (int64_t i = 0; i < np; i++) release_array(&pb[i]);
  if (fs.release) fs.release(&fs);
  if (ps.release) ps.release(&ps);
  xchg_ipc_reader_free(full);
  xchg_ipc_reader_free(one);
  return rc;
}

/* ---- what gets decompressed ------------------------------------------------- */

typedef struct counter {
  int64_t calls, bytes;
} counter;

static void count_decompress(void *ctx, xchg_block_codec codec, const void *src, size_t src_size,
                             size_t dst_size) {
  (void)codec, (void)src, (void)src_size;
  counter *c = ctx;
  __atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&c->bytes, (int64_t)dst_size, __ATOMIC_RELAXED);
}

static int count_read(const gold *g, const int64_t *column, counter *c, char *msg) {
  xchg_ipc_reader *r = open_mem(g->data, g->size, NULL, msg);
  xchg_error err;
  struct ArrowArray b[MAX_BATCHES];
  if (!r) return -1;
  xchg_ipc_reader_on_decompress(r, count_decompress, c);
  if (column && xchg_ipc_reader_select_indices(r, column, 1, &err) != XCHG_OK) {
    xchg_ipc_reader_free(r);
    return tu_errorf(msg, MSG_SIZE, "select: %s", err.message);
  }
  int64_t n = read_all(r, b, MAX_BATCHES, msg);
  for (int64_t i = 0; i < n; i++) release_array(&b[i]);
  xchg_ipc_reader_free(r);
  return n < 0 ? -1 : 0;
}

/* The columns read one at a time decompress, all together, exactly what a
 * full read does: were anything outside a selection decompressed, the sum
 * would be larger. */
static int check_decompression_counts(const gold *g, int64_t n_columns, char *msg) {
  counter whole = {0, 0}, sum = {0, 0};
  int64_t calls_before = xchg_block_decompress_calls(),
          bytes_before = xchg_block_decompressed_bytes();
  if (count_read(g, NULL, &whole, msg) != 0) return -1;
  if (xchg_block_decompress_calls() - calls_before != whole.calls ||
      xchg_block_decompressed_bytes() - bytes_before != whole.bytes)
    return tu_errorf(msg, MSG_SIZE,
                     "the hook saw %" PRId64 " decompressions (%" PRId64
                     " bytes), the codec counted %" PRId64 " (%" PRId64 ")",
                     whole.calls, whole.bytes, xchg_block_decompress_calls() - calls_before,
                     xchg_block_decompressed_bytes() - bytes_before);
  if (whole.calls == 0) return tu_errorf(msg, MSG_SIZE, "a compressed file decompressed nothing");
  for (int64_t c = 0; c < n_columns; c++) {
    counter one = {0, 0};
    if (count_read(g, &c, &one, msg) != 0) return -1;
    if (one.calls > whole.calls)
      return tu_errorf(msg, MSG_SIZE,
                       "column %" PRId64 " alone made %" PRId64 " of the %" PRId64
                       " decompressions",
                       c, one.calls, whole.calls);
    sum.calls += one.calls;
    sum.bytes += one.bytes;
  }
  if (sum.calls != whole.calls || sum.bytes != whole.bytes)
    return tu_errorf(msg, MSG_SIZE,
                     "columns one by one: %" PRId64 " calls / %" PRId64 " bytes, together %" PRId64
                     " / %" PRId64,
                     sum.calls, sum.bytes, whole.calls, whole.bytes);
  return 0;
}

/* A dictionary that no selected column uses is not decoded: corrupting
 * its body breaks a full read but not a read of the other columns. */
typedef struct dict_spot {
  int64_t offset, metadata_bytes, body_bytes;
} dict_spot;

static void find_dictionary(void *ctx, const xchg_message_info *info) {
  dict_spot *s = ctx;
  if (info->kind == XCHG_MESSAGE_DICTIONARY && s->offset < 0) {
    s->offset = info->offset;
    s->metadata_bytes = info->metadata_bytes;
    s->body_bytes = info->body_bytes;
  }
}

static int check_unused_dictionary(const gold *g, char *msg) {
  dict_spot spot = {-1, 0, 0};
  xchg_ipc_reader *r = open_mem(g->data, g->size, NULL, msg);
  struct ArrowArray b[MAX_BATCHES];
  struct ArrowSchema s;
  xchg_error err;
  if (!r) return -1;
  xchg_ipc_reader_on_message(r, find_dictionary, &spot);
  int64_t n = read_all(r, b, MAX_BATCHES, msg);
  for (int64_t i = 0; i < n; i++) release_array(&b[i]);
  TU_OK(xchg_ipc_reader_schema(r, &s, &err), err);
  xchg_ipc_reader_free(r);
  if (n < 0 || spot.offset < 0) {
    s.release(&s);
    return n < 0 ? -1 : tu_errorf(msg, MSG_SIZE, "no dictionary message seen");
  }
  int64_t plain = -1;
  for (int64_t c = 0; c < s.n_children && plain < 0; c++)
    if (!s.children[c]->dictionary) plain = c;
  s.release(&s);
  if (plain < 0) return 0; /* every column is dictionary-encoded */
  uint8_t *bad = malloc(g->size);
  memcpy(bad, g->data, g->size);
  /* The framing is 8 bytes; then the metadata, then the body. */
  memset(bad + spot.offset + 8 + spot.metadata_bytes, 0x7f, (size_t)spot.body_bytes);
  int rc = 0;
  if ((r = open_mem(bad, g->size, NULL, msg)) != NULL) {
    n = read_all(r, b, MAX_BATCHES, msg);
    for (int64_t i = 0; i < n; i++) release_array(&b[i]);
    xchg_ipc_reader_free(r);
    if (n >= 0) rc = tu_errorf(msg, MSG_SIZE, "a corrupt dictionary went unnoticed by a full read");
  }
  if (rc == 0 && (r = open_mem(bad, g->size, NULL, msg)) != NULL) {
    if (xchg_ipc_reader_select_indices(r, &plain, 1, &err) != XCHG_OK)
      rc = tu_errorf(msg, MSG_SIZE, "select: %s", err.message);
    n = rc ? 0 : read_all(r, b, MAX_BATCHES, msg);
    for (int64_t i = 0; i < n; i++) release_array(&b[i]);
    if (n < 0) rc = -1;
    xchg_ipc_reader_free(r);
  }
  free(bad);
  return rc;
}

/* ---- zero copy -------------------------------------------------------------- */

/* Every buffer of a, recursively, lies inside [lo, hi) — except those
 * xchg must make itself: the sizes of binary views' data buffers and the
 * offsets of empty arrays that the writer left out. */
static int inside(const struct ArrowSchema *s, const struct ArrowArray *a, const uint8_t *lo,
                  const uint8_t *hi, int64_t *checked, char *msg) {
  int views = strcmp(s->format, "vz") == 0 || strcmp(s->format, "vu") == 0;
  for (int64_t i = 0; i < a->n_buffers; i++) {
    const uint8_t *p = a->buffers[i];
    if (!p || (views && !s->dictionary && i == a->n_buffers - 1)) continue;
    if (a->length == 0 && i == 1) continue;
    if (p < lo || p >= hi)
      return tu_errorf(msg, MSG_SIZE,
                       "field '%s' buffer %" PRId64 " was copied (at %p, input %p..%p)", s->name, i,
                       (const void *)p, (const void *)lo, (const void *)hi);
    ++*checked;
  }
  for (int64_t i = 0; i < a->n_children; i++)
    if (inside(s->children[i], a->children[i], lo, hi, checked, msg) != 0) return -1;
  if (a->dictionary && inside(s->dictionary, a->dictionary, lo, hi, checked, msg) != 0) return -1;
  return 0;
}

static int check_zero_copy(const gold *g, char *msg) {
  xchg_ipc_reader *r = open_mem(g->data, g->size, NULL, msg);
  struct ArrowArray b[MAX_BATCHES];
  struct ArrowSchema s;
  xchg_error err;
  if (!r) return -1;
  TU_OK(xchg_ipc_reader_schema(r, &s, &err), err);
  int64_t n = read_all(r, b, MAX_BATCHES, msg), checked = 0, rows = 0;
  xchg_ipc_reader_free(r); /* the arrays keep the input alive on their own */
  int rc = n < 0 ? -1 : 0;
  for (int64_t i = 0; i < n; i++) {
    if (rc == 0) rc = inside(&s, &b[i], g->data, g->data + g->size, &checked, msg);
    rows += b[i].length;
    release_array(&b[i]);
  }
  s.release(&s);
  if (rc == 0 && rows > 0 && checked == 0) rc = tu_errorf(msg, MSG_SIZE, "no buffer was checked");
  return rc;
}

/* ---- thread pool -------------------------------------------------------------- */

static int check_pool(const gold *g, xchg_pool *pool, int64_t readahead, char *msg) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = pool;
  opts.readahead_bytes = readahead;
  opts.task_bytes = 1; /* gold files are small: hand out every buffer */
  xchg_ipc_reader *r = open_mem(g->data, g->size, &opts, msg);
  struct ArrowSchema s;
  xchg_error err;
  if (!r) return -1;
  TU_OK(xchg_ipc_reader_schema(r, &s, &err), err);
  int64_t i = 0;
  int rc = 0;
  for (;; i++) {
    struct ArrowArray a;
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK) {
      rc = tu_errorf(msg, MSG_SIZE, "next: %s", err.message);
      break;
    }
    if (!a.release) break;
    rc = arrow_json_compare_batch(g->doc, i, &s, &a, msg, MSG_SIZE);
    a.release(&a);
    if (rc != 0) break;
  }
  if (rc == 0 && i != arrow_json_num_batches(g->doc))
    rc = tu_errorf(msg, MSG_SIZE, "%" PRId64 " batches, the JSON has %" PRId64, i,
                   arrow_json_num_batches(g->doc));
  s.release(&s);
  xchg_ipc_reader_free(r);
  return rc;
}

/* ---- peek and skip ---------------------------------------------------------------- */

static int check_peek_skip(const gold *g, char *msg) {
  xchg_ipc_reader *r = open_mem(g->data, g->size, NULL, msg);
  struct ArrowSchema s;
  xchg_error err;
  counter c = {0, 0};
  if (!r) return -1;
  TU_OK(xchg_ipc_reader_schema(r, &s, &err), err);
  xchg_ipc_reader_on_decompress(r, count_decompress, &c);
  int rc = 0;
  int64_t i = 0;
  for (;; i++) {
    xchg_batch_header h;
    int at_end;
    if (xchg_ipc_reader_peek(r, &h, &at_end, &err) != XCHG_OK) {
      rc = tu_errorf(msg, MSG_SIZE, "peek: %s", err.message);
      break;
    }
    if (at_end) break;
    int64_t calls = c.calls;
    if (i % 2 == 0) {
      if (xchg_ipc_reader_skip(r, &err) != XCHG_OK)
        rc = tu_errorf(msg, MSG_SIZE, "skip: %s", err.message);
      else if (c.calls != calls)
        rc = tu_errorf(msg, MSG_SIZE, "skipping batch %" PRId64 " decompressed something", i);
      if (rc) break;
      continue;
    }
    struct ArrowArray a;
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK || !a.release) {
      rc = tu_errorf(msg, MSG_SIZE, "next after peek: %s", err.message);
      break;
    }
    if (a.length != h.rows)
      rc = tu_errorf(msg, MSG_SIZE, "peek said %" PRId64 " rows, the batch has %" PRId64, h.rows,
                     a.length);
    if (rc == 0) rc = arrow_json_compare_batch(g->doc, i, &s, &a, msg, MSG_SIZE);
    a.release(&a);
    if (rc) break;
  }
  if (rc == 0 && i != arrow_json_num_batches(g->doc))
    rc = tu_errorf(msg, MSG_SIZE, "peeked %" PRId64 " batches, the JSON has %" PRId64, i,
                   arrow_json_num_batches(g->doc));
  s.release(&s);
  xchg_ipc_reader_free(r);
  return rc;
}

/* ---- legacy framing ------------------------------------------------------------------ */

typedef struct message_spans {
  int64_t offset[MAX_BATCHES * 4], bytes[MAX_BATCHES * 4];
  int n;
} message_spans;

static void record_message(void *ctx, const xchg_message_info *info) {
  message_spans *m = ctx;
  if (m->n == MAX_BATCHES * 4) return;
  m->offset[m->n] = info->offset;
  m->bytes[m->n++] = 8 + info->metadata_bytes + info->body_bytes;
}

/* Rewrites a stream with the pre-0.15 framing: every message (as the
 * reader reports it) loses its 0xFFFFFFFF marker, and so does the
 * end-of-stream marker. */
static uint8_t *to_legacy(const gold *g, size_t *out_size, char *msg) {
  message_spans spans = {.n = 0};
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.on_message = record_message;
  opts.on_message_ctx = &spans;
  xchg_ipc_reader *r = open_mem(g->data, g->size, &opts, msg);
  struct ArrowArray b[MAX_BATCHES];
  if (!r) return NULL;
  int64_t n = read_all(r, b, MAX_BATCHES, msg);
  for (int64_t i = 0; i < n; i++) release_array(&b[i]);
  xchg_ipc_reader_free(r);
  if (n < 0) return NULL;
  uint8_t *out = malloc(g->size);
  size_t at = 0;
  for (int i = 0; i < spans.n; i++) {
    memcpy(out + at, g->data + spans.offset[i] + 4, (size_t)spans.bytes[i] - 4);
    at += (size_t)spans.bytes[i] - 4;
  }
  memset(out + at, 0, 4); /* end of stream */
  *out_size = at + 4;
  return out;
}

static int check_legacy(const gold *g, char *msg) {
  size_t size;
  uint8_t *legacy = to_legacy(g, &size, msg);
  if (!legacy) return -1;
  gold lg = *g;
  lg.data = legacy;
  lg.size = size;
  int rc = size < g->size ? check_pool(&lg, NULL, 0, msg)
                          : tu_errorf(msg, MSG_SIZE, "no marker was removed");
  free(legacy);
  return rc;
}

/* ---- driver ------------------------------------------------------------------------- */

static int check_select_errors(const gold *g, char *msg) {
  xchg_ipc_reader *r = open_mem(g->data, g->size, NULL, msg);
  xchg_error err;
  if (!r) return -1;
  const char *bad = "no_such_column";
  int64_t bad_index = 9999;
  int rc = 0;
  if (xchg_ipc_reader_select(r, &bad, 1, &err) != XCHG_EINVAL || !strstr(err.message, bad))
    rc = tu_errorf(msg, MSG_SIZE, "selecting an unknown column: \"%s\"", err.message);
  else if (xchg_ipc_reader_select_indices(r, &bad_index, 1, &err) != XCHG_EINVAL)
    rc = tu_errorf(msg, MSG_SIZE, "selecting column 9999 did not fail");
  xchg_ipc_reader_free(r);
  return rc;
}

static void check_file(const char *path, xchg_pool *pool) {
  char json_path[1024], msg[MSG_SIZE] = "";
  gold g = {path, NULL, 0, NULL, strstr(path, "compression") != NULL};
  snprintf(json_path, sizeof json_path, "%.*s.json.gz", (int)(strrchr(path, '.') - path), path);
  if (!(g.data = tu_read_file(path, &g.size)) ||
      arrow_json_load(json_path, &g.doc, msg, sizeof msg) != 0) {
    TU_CHECK(0, "load %s: %s", path, msg);
    free(g.data);
    return;
  }
  struct ArrowSchema s;
  xchg_ipc_reader *r = open_mem(g.data, g.size, NULL, msg);
  xchg_error err;
  int64_t n_columns = 0;
  if (r && xchg_ipc_reader_schema(r, &s, &err) == XCHG_OK) {
    n_columns = s.n_children;
    s.release(&s);
  }
  xchg_ipc_reader_free(r);
  for (int64_t c = 0; c < n_columns; c++) {
    msg[0] = '\0';
    TU_CHECK(check_projection(&g, c, msg) == 0, "projection %s: %s", path, msg);
  }
  if (g.compressed)
    TU_CHECK(check_decompression_counts(&g, n_columns, msg) == 0, "decompress-count %s: %s", path,
             msg);
  else
    TU_CHECK(check_zero_copy(&g, msg) == 0, "zero-copy %s: %s", path, msg);
  if (strstr(path, "dictionary") && !strstr(path, "nested"))
    TU_CHECK(check_unused_dictionary(&g, msg) == 0, "unused-dictionary %s: %s", path, msg);
  TU_CHECK(check_pool(&g, pool, (int64_t)8 << 20, msg) == 0, "pool %s: %s", path, msg);
  TU_CHECK(check_pool(&g, pool, 1, msg) == 0, "pool-small-readahead %s: %s", path, msg);
  TU_CHECK(check_peek_skip(&g, msg) == 0, "peek-skip %s: %s", path, msg);
  if (strstr(path, ".stream"))
    TU_CHECK(check_legacy(&g, msg) == 0, "legacy-framing %s: %s", path, msg);
  TU_CHECK(check_select_errors(&g, msg) == 0, "select-errors %s: %s", path, msg);
  arrow_json_free(g.doc);
  free(g.data);
}

/* tu_walk callback: the IPC files (stream or file format) among the gold files. */
static void check_if_ipc(const char *path, void *pool) {
  if (tu_has_suffix(path, ".stream") || tu_has_suffix(path, ".arrow_file")) check_file(path, pool);
}

/* Every gold file, each decoded on a pool of three threads. */
static void gold_files(void) {
  char dir[1024];
  tu_testdata_path(dir, sizeof dir, "arrow-gold");
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(3, &pool, NULL) == XCHG_OK, "cannot create a pool");
  tu_walk(dir, NULL, check_if_ipc, pool);
  xchg_pool_free(pool);
}

/* One call with a NULL or invalid argument: XCHG_EINVAL with exactly the
 * message `want`, else an error in msg. */
static int expect_einval(const char *call, xchg_status st, const xchg_error *err, const char *want,
                         char *msg) {
  if (st == XCHG_EINVAL && strcmp(err->message, want) == 0) return 0;
  return tu_errorf(msg, MSG_SIZE, "%s: %s: %s (wanted XCHG_EINVAL: %s)", call, xchg_status_name(st),
                   st == XCHG_OK ? "" : err->message, want);
}

/* A NULL reader, source or out, and a selection that is none (n < 0, a
 * NULL list or path), are XCHG_EINVAL naming them, not a crash and not the
 * reader's failure: the reader then reads every batch as usual. */
static void null_arguments(void) {
  char path[1024], msg[MSG_SIZE] = "";
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  struct ArrowArray a;
  struct ArrowSchema s;
  xchg_batch_header h;
  int at_end, rc = 0;
  const char *no_path[] = {"bool_nullable", NULL};
  int64_t index = 0;
  rc = expect_einval("open(NULL source)", xchg_ipc_reader_open(NULL, NULL, &r, &err), &err,
                     "xchg_ipc_reader_open: the source is NULL", msg);
  if (rc == 0)
    rc = expect_einval("open_file(NULL out)", xchg_ipc_reader_open_file(path, NULL, NULL, &err),
                       &err, "xchg_ipc_reader_open_file: out is NULL", msg);
  if (rc == 0)
    rc = expect_einval("next(NULL)", xchg_ipc_reader_next(NULL, &a, &err), &err,
                       "xchg_ipc_reader_next: the reader is NULL", msg);
  if (rc == 0)
    rc = expect_einval("schema(NULL)", xchg_ipc_reader_schema(NULL, &s, &err), &err,
                       "xchg_ipc_reader_schema: the reader is NULL", msg);
  if (rc == 0)
    rc = expect_einval("peek(NULL)", xchg_ipc_reader_peek(NULL, &h, &at_end, &err), &err,
                       "xchg_ipc_reader_peek: the reader is NULL", msg);
  if (rc == 0)
    rc = expect_einval("skip(NULL)", xchg_ipc_reader_skip(NULL, &err), &err,
                       "xchg_ipc_reader_skip: the reader is NULL", msg);
  if (rc == 0)
    rc = expect_einval("read_batch(NULL)", xchg_ipc_reader_read_batch(NULL, 0, &a, &err), &err,
                       "xchg_ipc_reader_read_batch: the reader is NULL", msg);
  if (rc == 0)
    rc = expect_einval("select(NULL)", xchg_ipc_reader_select(NULL, no_path, 1, &err), &err,
                       "xchg_ipc_reader_select: the reader is NULL", msg);
  if (rc == 0 && xchg_ipc_reader_open_file(path, NULL, &r, &err) != XCHG_OK)
    rc = tu_errorf(msg, MSG_SIZE, "open: %s", err.message);
  if (rc == 0)
    rc = expect_einval("next(NULL out)", xchg_ipc_reader_next(r, NULL, &err), &err,
                       "xchg_ipc_reader_next: out is NULL", msg);
  if (rc == 0)
    rc = expect_einval("schema(NULL out)", xchg_ipc_reader_schema(r, NULL, &err), &err,
                       "xchg_ipc_reader_schema: out is NULL", msg);
  if (rc == 0)
    rc = expect_einval("peek(NULL at_end)", xchg_ipc_reader_peek(r, &h, NULL, &err), &err,
                       "xchg_ipc_reader_peek: at_end is NULL", msg);
  if (rc == 0)
    rc = expect_einval("select(n -1)", xchg_ipc_reader_select(r, no_path, -1, &err), &err,
                       "xchg_ipc_reader_select: n is negative (-1)", msg);
  if (rc == 0)
    rc = expect_einval("select(NULL path)", xchg_ipc_reader_select(r, no_path, 2, &err), &err,
                       "xchg_ipc_reader_select: path 1 is NULL", msg);
  if (rc == 0)
    rc = expect_einval("select_indices(NULL, 1)", xchg_ipc_reader_select_indices(r, NULL, 1, &err),
                       &err, "xchg_ipc_reader_select_indices: 1 columns at NULL", msg);
  if (rc == 0)
    rc = expect_einval("select_indices(n -1)", xchg_ipc_reader_select_indices(r, &index, -1, &err),
                       &err, "xchg_ipc_reader_select_indices: n is negative (-1)", msg);
  /* None of these changed the selection nor failed the reader. */
  int64_t batches = 0, columns = -1;
  for (; rc == 0; batches++) {
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK)
      rc = tu_errorf(msg, MSG_SIZE, "next after the invalid calls: %s", err.message);
    if (rc != 0 || !a.release) break;
    columns = a.n_children;
    a.release(&a);
  }
  if (rc == 0 && (batches == 0 || columns <= 1))
    rc = tu_errorf(msg, MSG_SIZE,
                   "after the invalid calls: %" PRId64 " batches of %" PRId64 " columns", batches,
                   columns);
  xchg_ipc_reader_free(r);
  TU_CHECK(rc == 0, "NULL arguments: %s", msg);
}

/* The ArrowArrayStream of a reader: a NULL out, and any call once it is
 * released, is EINVAL with get_last_error saying why, not a crash or a
 * use after free; the stream reads on after a NULL out. */
static void stream_misuse(void) {
  char path[1024], msg[MSG_SIZE] = "";
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  struct ArrowArrayStream s = {0};
  struct ArrowArray a;
  int rc = xchg_ipc_reader_open_file(path, NULL, &r, &err) == XCHG_OK &&
                   xchg_ipc_reader_to_stream(r, &s, &err) == XCHG_OK
               ? 0
               : tu_errorf(msg, MSG_SIZE, "open: %s", err.message);
  const char *last;
  if (rc == 0 && (s.get_next(&s, NULL) != EINVAL || !(last = s.get_last_error(&s)) ||
                  strcmp(last, "get_next: out is NULL") != 0))
    rc = tu_errorf(msg, MSG_SIZE, "get_next(NULL)");
  if (rc == 0 && (s.get_schema(&s, NULL) != EINVAL || !(last = s.get_last_error(&s)) ||
                  strcmp(last, "get_schema: out is NULL") != 0))
    rc = tu_errorf(msg, MSG_SIZE, "get_schema(NULL)");
  int64_t batches = 0;
  while (rc == 0) {
    if (s.get_next(&s, &a) != 0)
      rc = tu_errorf(msg, MSG_SIZE, "get_next: %s", s.get_last_error(&s));
    if (rc != 0 || !a.release) break;
    batches++;
    a.release(&a);
  }
  if (rc == 0 && batches == 0) rc = tu_errorf(msg, MSG_SIZE, "no batch after get_next(NULL)");
  void (*release)(struct ArrowArrayStream *) = s.release;
  if (release) release(&s);
  if (rc == 0 && (s.release || s.get_next(&s, &a) != EINVAL || !(last = s.get_last_error(&s)) ||
                  strcmp(last, "the ArrowArrayStream was released") != 0))
    rc = tu_errorf(msg, MSG_SIZE, "get_next after release");
  if (release) release(&s); /* a second release does nothing */
  TU_CHECK(rc == 0, "stream misuse: %s", msg);
}

/* ---- an unknown body compression codec ------------------------------------------- */

/* A stream of one int64 column, one row, its body compressed with ZSTD. */
static xchg_buf *zstd_stream(void) {
  static int64_t value = 7;
  static const void *child_buffers[2] = {NULL, &value};
  static const void *root_buffers[1] = {NULL};
  struct ArrowSchema x, schema, *fields[1] = {&x};
  struct ArrowArray child, batch, *children[1] = {&child};
  tu_fixture_schema(&x, "l", "x", 0, NULL);
  tu_fixture_schema(&schema, "+s", "", 1, fields);
  tu_fixture_array(&child, 1, 2, child_buffers, 0, NULL);
  tu_fixture_array(&batch, 1, 1, root_buffers, 1, children);
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.codec = XCHG_BLOCK_ZSTD;
  xchg_buf *out;
  char msg[MSG_SIZE];
  TU_CHECK(rt_write(&schema, &batch, 1, &opts, &out, msg, sizeof msg) == 0,
           "cannot write a ZSTD stream: %s", msg);
  return out;
}

/* Where the record batch's BodyCompression codec byte is in the stream
 * (its second message), or -1. */
static int64_t codec_byte(const uint8_t *stream, size_t size) {
  uint32_t schema_len = fb_load_u32(stream + 4);
  size_t at = 8 + schema_len; /* the schema message has no body */
  if (at + 8 > size) return -1;
  uint32_t len = fb_load_u32(stream + at + 4);
  const uint8_t *meta = stream + at + 8;
  fb_table header, comp;
  int type, version;
  int64_t body;
  xchg_error err;
  if (at + 8 + len > size ||
      ipc_message_parse(meta, len, 1, (int64_t)at, &header, &type, &version, &body, &err) !=
          XCHG_OK ||
      fb_table_field(&header, BATCH_COMPRESSION, &comp) <= 0)
    return -1;
  int64_t off = fb_field_offset(&comp, 0, 1);
  return off > 0 ? (int64_t)(comp.base + comp.pos + (size_t)off - stream) : -1;
}

/* A codec the format does not define (2: LZ4_FRAME is 0, ZSTD 1) is
 * XCHG_ENOTSUP saying it is unknown and which two are read; the byte is
 * checked to be ZSTD's first, so that the patch is the right one. */
static void unknown_compression(void) {
  xchg_buf *b = zstd_stream();
  if (b == NULL) return;
  size_t size = xchg_buf_size(b);
  uint8_t *bytes = malloc(size);
  TU_CHECK(bytes != NULL, "out of memory");
  if (bytes == NULL) return;
  memcpy(bytes, xchg_buf_data(b), size);
  xchg_buf_unref(b);
  int64_t at = codec_byte(bytes, size);
  TU_CHECK(at >= 0 && bytes[at] == 1, "no ZSTD codec byte found in the record batch");
  if (at >= 0) {
    bytes[at] = 2;
    char msg[MSG_SIZE];
    xchg_ipc_reader *r = open_mem(bytes, size, NULL, msg);
    TU_CHECK(r != NULL, "%s", msg);
    struct ArrowArray a;
    xchg_error err;
    xchg_status st = r ? xchg_ipc_reader_next(r, &a, &err) : XCHG_EINVAL;
    TU_CHECK(st == XCHG_ENOTSUP && strstr(err.message, "unknown body compression codec 2") &&
                 strstr(err.message, "LZ4_FRAME") && strstr(err.message, "ZSTD"),
             "a record batch of body compression codec 2: status %d: %s", (int)st, err.message);
    if (st == XCHG_OK) release_array(&a);
    xchg_ipc_reader_free(r);
  }
  free(bytes);
}

/* A name two columns share (Arrow's gold duplicate_fieldnames: "ints" is an
 * int8 and an int32 column) selects neither: a silent first match could
 * give the wrong column.  The selection stays as it was; an index picks
 * either. */
static void ambiguous_name(void) {
  char path[4096], msg[MSG_SIZE] = "";
  size_t size = 0;
  uint8_t *data = tu_read_file(
      tu_testdata_path(path, sizeof path,
                       "arrow-gold/1.0.0-littleendian/generated_duplicate_fieldnames.stream"),
      &size);
  xchg_ipc_reader *r = data ? open_mem(data, size, NULL, msg) : NULL;
  if (!TU_CHECK(r != NULL, "%s: %s", path, data ? msg : "cannot read")) {
    free(data);
    return;
  }
  const char *ints = "ints";
  int64_t second = 1;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_select(r, &ints, 1, &err);
  TU_CHECK(st == XCHG_EINVAL && strstr(err.message,
                                       "field name 'ints' is ambiguous in the "
                                       "schema: fields 0 and 1 both have it"),
           "selecting 'ints': %s: %s", xchg_status_name(st), st ? err.message : "selected");
  struct ArrowSchema schema = {0};
  TU_OK(xchg_ipc_reader_schema(r, &schema, &err), err);
  TU_CHECK(schema.n_children == 3, "the failed select left %" PRId64 " columns", schema.n_children);
  if (schema.release) schema.release(&schema);
  TU_OK(xchg_ipc_reader_select_indices(r, &second, 1, &err), err);
  TU_OK(xchg_ipc_reader_schema(r, &schema, &err), err);
  TU_CHECK(schema.n_children == 1 && strcmp(schema.children[0]->format, "i") == 0,
           "column 1 selected by index is not the int32 'ints'");
  if (schema.release) schema.release(&schema);
  xchg_ipc_reader_free(r);
  free(data);
}

/* A path goes on past a field that is selected whole (a list, anything
 * but a struct) only through names of fields under it: a misspelt name
 * there, a name under a column without children, an empty name are
 * XCHG_EINVAL naming it, not the whole column (they once were); the names
 * that are there select the field whole; a struct's child alone. */
static void paths_past_whole_fields(void) {
  static const struct {
    const char *file, *path;
    const char *error;  /* what the message names, or NULL: selected */
    const char *format; /* the selected column's, and its first child's */
    int64_t children;
  } cases[] = {
      {"generated_nested", "list_nullable.bogus", "no field 'bogus' in list_nullable", NULL, 0},
      {"generated_nested", "list_nullable.item.x", "no field 'x' in list_nullable.item", NULL, 0},
      {"generated_nested", "struct_nullable.f2.bogus", "no field 'bogus' in struct_nullable.f2",
       NULL, 0},
      {"generated_primitive", "int8_nullable.no_such_child",
       "no field 'no_such_child' in int8_nullable", NULL, 0},
      {"generated_primitive", "int8_nullable.", "no field '' in int8_nullable", NULL, 0},
      {"generated_nested", "list_nullable.item", NULL, "+l", 1},
      {"generated_nested", "struct_nullable.f2", NULL, "+s", 1},
      {"generated_nested", "struct_nullable", NULL, "+s", 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[4096], msg[MSG_SIZE] = "";
    size_t size = 0;
    uint8_t *data =
        tu_read_file(tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s.stream",
                                      cases[i].file),
                     &size);
    xchg_ipc_reader *r = data ? open_mem(data, size, NULL, msg) : NULL;
    if (!TU_CHECK(r != NULL, "%s: %s", path, data ? msg : "cannot read")) {
      free(data);
      continue;
    }
    xchg_error err;
    xchg_status st = xchg_ipc_reader_select(r, &cases[i].path, 1, &err);
    struct ArrowSchema schema = {0};
    if (cases[i].error) {
      TU_CHECK(st == XCHG_EINVAL && strstr(err.message, cases[i].error), "selecting '%s': %s: %s",
               cases[i].path, xchg_status_name(st), st ? err.message : "selected");
    } else if (TU_OK(st, err) && TU_OK(xchg_ipc_reader_schema(r, &schema, &err), err)) {
      TU_CHECK(schema.n_children == 1 && strcmp(schema.children[0]->format, cases[i].format) == 0 &&
                   schema.children[0]->n_children == cases[i].children,
               "selecting '%s': %" PRId64 " columns, the first '%s' of %" PRId64 " children",
               cases[i].path, schema.n_children,
               schema.n_children ? schema.children[0]->format : "-",
               schema.n_children ? schema.children[0]->n_children : 0);
      schema.release(&schema);
    }
    xchg_ipc_reader_free(r);
    free(data);
  }
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"gold_files", gold_files},
                                  {"ambiguous_name", ambiguous_name},
                                  {"paths_past_whole_fields", paths_past_whole_fields},
                                  {"null_arguments", null_arguments},
                                  {"stream_misuse", stream_misuse},
                                  {"unknown_compression", unknown_compression}};
  return TU_MAIN(argc, argv, "decode", cases);
}
