/* tests/test_roundtrip.c — the IPC writer, read back by the IPC reader.
 *
 *  1. Every gold file under $XCHG_TESTDATA/arrow-gold (Apache Arrow's
 *     integration files) is read, written with each codec (none, lz4, zstd)
 *     in both formats, read back and compared with its .json.gz (Arrow's own
 *     description of the data) and with the batches first read.  One more
 *     variant compresses on a 2-thread pool with 64-byte alignment and a
 *     50% minimum saving (so some buffers are stored raw behind -1).
 *  2. Slices: each gold batch written from a top-level slice and from
 *     arrays whose children carry their own offsets equals the same rows.
 *  3. A hand-built batch with the types the gold files lack (views, list
 *     views, run-end encoding, decimal32/64, month-day-nano, unions,
 *     dictionaries), whole and sliced, with every codec.
 *  4. Dictionaries: deltas and replacements in a stream, deltas in a file,
 *     replacement refused by the file format, shared ids.
 *  5. Coalescing: many small batches become few large ones with the same
 *     rows and correct null counts; differing dictionaries are kept apart.
 *  6. Message metadata reaches the reader; compressed output is smaller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/array_equal.h"
#include "support/arrow_json.h"
#include "support/roundtrip.h"
#include "support/testutil.h"

#define MSG 2048

static const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_LZ4_FRAME, XCHG_BLOCK_ZSTD};

/* Writes src's batches with opts, reads them back and compares with the
 * JSON (when doc) and with src. */
static int check_written(const rt_data *src, const arrow_json *doc,
                         const xchg_ipc_write_options *opts, char *msg) {
  xchg_buf *buf;
  if (rt_write(&src->schema, src->batches, src->n, opts, &buf, msg, MSG) != 0) return -1;
  rt_data back = {0};
  back.check_codec = 1;
  back.expect_codec = opts->codec;
  int rc = rt_read_buf(buf, &back, msg, MSG);
  xchg_buf_unref(buf);
  if (rc == 0 && back.format != opts->format)
    rc = snprintf(msg, MSG, "read back as the other format") * 0 - 1;
  if (rc == 0 && back.codec_mismatch)
    rc = snprintf(msg, MSG, "a record batch is not compressed with %s",
                  xchg_block_codec_name(opts->codec)) *
             0 -
         1;
  if (rc == 0 && back.n != src->n)
    rc = snprintf(msg, MSG, "%lld batches read back, %lld written", (long long)back.n,
                  (long long)src->n) *
             0 -
         1;
  if (rc == 0 && doc && arrow_json_compare_schema(doc, &back.schema, msg, MSG) != 0) rc = -1;
  for (int64_t i = 0; rc == 0 && i < back.n; i++) {
    if (doc && arrow_json_compare_batch(doc, i, &back.schema, &back.batches[i], msg, MSG) != 0)
      rc = -1;
    else if (array_equal(&src->schema, &src->batches[i], &back.batches[i], msg, MSG) != 0)
      rc = -1;
  }
  rt_data_free(&back);
  return rc;
}

static void describe(char *what, size_t n, const char *name, const xchg_ipc_write_options *o) {
  snprintf(what, n, "%s [%s, %s%s%s]", name, o->format == XCHG_IPC_FILE ? "file" : "stream",
           xchg_block_codec_name(o->codec), o->big_endian ? ", big-endian" : "",
           o->pool ? ", pool" : "");
}

/* A copy of batch whose children each start one row later (their own
 * offsets), so that the writer must apply offsets below the top level. */
static int check_child_offsets(const rt_data *src, const struct ArrowArray *batch, char *msg) {
  if (batch->length < 2) return 0;
  int64_t n = batch->n_children;
  struct ArrowArray *kids = calloc((size_t)n + 1, sizeof *kids);
  struct ArrowArray **kid_ptrs = calloc((size_t)n + 1, sizeof *kid_ptrs);
  int rc = -1;
  if (kids && kid_ptrs) {
    for (int64_t i = 0; i < n; i++) {
      kids[i] = *batch->children[i];
      kids[i].offset += batch->offset + 1;
      kids[i].length -= batch->offset + 1;
      kids[i].null_count = -1; /* unknown: the writer must count */
      kid_ptrs[i] = &kids[i];
    }
    struct ArrowArray shifted = *batch;
    shifted.children = kid_ptrs;
    shifted.offset = 0;
    shifted.length = batch->length - 1;
    struct ArrowArray expect = *batch;
    expect.offset = batch->offset + 1;
    expect.length = batch->length - 1;
    xchg_ipc_write_options o;
    xchg_ipc_write_options_init(&o);
    o.codec = XCHG_BLOCK_LZ4_FRAME;
    rt_data one = {.schema = src->schema, .batches = &shifted, .n = 1};
    xchg_buf *buf;
    rc = rt_write(&one.schema, &shifted, 1, &o, &buf, msg, MSG);
    if (rc == 0) {
      rt_data back = {0};
      rc = rt_read_buf(buf, &back, msg, MSG);
      if (rc == 0 && back.n != 1) rc = snprintf(msg, MSG, "no batch read back") * 0 - 1;
      if (rc == 0) rc = array_equal(&src->schema, &expect, &back.batches[0], msg, MSG);
      rt_data_free(&back);
      xchg_buf_unref(buf);
    }
  }
  free(kids);
  free(kid_ptrs);
  return rc;
}

static void check_slices(const char *name, const rt_data *src) {
  char msg[MSG], what[512];
  for (int64_t b = 0; b < src->n; b++) {
    const struct ArrowArray *batch = &src->batches[b];
    int64_t len = batch->length;
    int64_t cuts[3][2] = {
        {len > 0, len > 2 ? len - 2 : 0}, {len / 3, len / 2}, {len > 0 ? len - 1 : 0, len > 0}};
    for (int k = 0; k < 3; k++) {
      struct ArrowArray slice = *batch;
      slice.offset = cuts[k][0];
      slice.length = cuts[k][1];
      rt_data one = {.schema = src->schema, .batches = &slice, .n = 1};
      xchg_ipc_write_options o;
      xchg_ipc_write_options_init(&o);
      o.codec = codecs[k];
      snprintf(what, sizeof what, "%s batch %lld slice [%lld, +%lld)", name, (long long)b,
               (long long)slice.offset, (long long)slice.length);
      TU_CHECK(check_written(&one, NULL, &o, msg) == 0, "%s: %s", what, msg);
    }
    snprintf(what, sizeof what, "%s batch %lld with child offsets", name, (long long)b);
    TU_CHECK(check_child_offsets(src, batch, msg) == 0, "%s: %s", what, msg);
  }
}

static void check_gold_file(const char *json_path, xchg_pool *pool) {
  char msg[MSG], what[512];
  rt_gold_check g;
  if (rt_gold_check_begin(json_path, &g) != 0) return;
  for (int fmt = 0; fmt < 2; fmt++) {
    for (int c = 0; c < 3; c++) {
      xchg_ipc_write_options o;
      xchg_ipc_write_options_init(&o);
      o.format = fmt ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
      o.codec = codecs[c];
      describe(what, sizeof what, g.name, &o);
      TU_CHECK(check_written(&g.src, g.doc, &o, msg) == 0, "%s: %s", what, msg);
    }
  }
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.codec = XCHG_BLOCK_ZSTD;
  o.pool = pool;
  o.parallel_min_bytes = 1;
  o.alignment = 64;
  o.min_space_saving = 0.5;
  describe(what, sizeof what, g.name, &o);
  TU_CHECK(check_written(&g.src, g.doc, &o, msg) == 0, "%s: %s", what, msg);
  check_slices(g.name, &g.src);
  rt_gold_check_end(&g);
}

static void check_sample(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  char msg[MSG], what[512];
  for (int fmt = 0; fmt < 2; fmt++) {
    for (int c = 0; c < 3; c++) {
      for (int s = 0; s < 4; s++) {
        static const int64_t cuts[4][2] = {{0, RT_SAMPLE_ROWS}, {1, 3}, {2, 4}, {5, 1}};
        struct ArrowArray slice = *batch;
        slice.offset = cuts[s][0];
        slice.length = cuts[s][1];
        rt_data one = {.schema = *schema, .batches = &slice, .n = 1};
        xchg_ipc_write_options o;
        xchg_ipc_write_options_init(&o);
        o.format = fmt ? XCHG_IPC_FILE : XCHG_IPC_STREAM;
        o.codec = codecs[c];
        describe(what, sizeof what, "sample", &o);
        snprintf(what + strlen(what), sizeof what - strlen(what), " rows [%lld, +%lld)",
                 (long long)slice.offset, (long long)slice.length);
        TU_CHECK(check_written(&one, NULL, &o, msg) == 0, "%s: %s", what, msg);
      }
    }
  }
}

/* ---- dictionaries ------------------------------------------------------------ */

static void release_nothing(struct ArrowArray *a) { (void)a; }
static void release_nothing_schema(struct ArrowSchema *s) { (void)s; }

typedef struct dict_batch {
  struct ArrowArray root, col, dict;
  struct ArrowArray *kids[1];
  const void *root_buffers[1], *col_buffers[2], *dict_buffers[3];
} dict_batch;

/* One column of int32 indices into the utf8 dictionary given as "a|bb|c". */
static void make_dict_batch(dict_batch *b, const int32_t *indices, int64_t n,
                            const int32_t *offsets, int64_t dict_n, const char *chars) {
  memset(b, 0, sizeof *b);
  b->dict_buffers[1] = offsets;
  b->dict_buffers[2] = chars;
  b->dict =
      (struct ArrowArray){dict_n, 0, 0, 3, 0, b->dict_buffers, NULL, NULL, release_nothing, NULL};
  b->col_buffers[1] = indices;
  b->col =
      (struct ArrowArray){n, 0, 0, 2, 0, b->col_buffers, NULL, &b->dict, release_nothing, NULL};
  b->kids[0] = &b->col;
  b->root =
      (struct ArrowArray){n, 0, 0, 1, 1, b->root_buffers, b->kids, NULL, release_nothing, NULL};
}

static void dict_schema(struct ArrowSchema *root, struct ArrowSchema *col,
                        struct ArrowSchema *value, struct ArrowSchema **kids) {
  *value = (struct ArrowSchema){"u", "", NULL, 0, 0, NULL, NULL, release_nothing_schema, NULL};
  *col = (struct ArrowSchema){
      "i", "colour", NULL, ARROW_FLAG_NULLABLE, 0, NULL, value, release_nothing_schema, NULL};
  kids[0] = col;
  *root = (struct ArrowSchema){"+s", "", NULL, 0, 1, kids, NULL, release_nothing_schema, NULL};
}

static void check_dictionaries(void) {
  char msg[MSG];
  struct ArrowSchema root, col, value, *kids[1];
  dict_schema(&root, &col, &value, kids);
  static const int32_t idx1[3] = {0, 1, 0}, idx2[4] = {2, 1, 0, 2}, idx3[2] = {0, 0};
  static const int32_t off_ab[3] = {0, 1, 3}, off_abc[4] = {0, 1, 3, 6}, off_x[2] = {0, 1};
  dict_batch b[4];
  make_dict_batch(&b[0], idx1, 3, off_ab, 2, "abb");
  make_dict_batch(&b[1], idx2, 4, off_abc, 3, "abbccc"); /* extends: a delta */
  make_dict_batch(&b[2], idx2, 4, off_abc, 3, "abbccc"); /* unchanged: nothing */
  make_dict_batch(&b[3], idx3, 2, off_x, 1, "x");        /* differs: a replacement */
  struct ArrowArray batches[4] = {b[0].root, b[1].root, b[2].root, b[3].root};
  for (int c = 0; c < 3; c++) {
    xchg_ipc_write_options o;
    xchg_ipc_write_options_init(&o);
    o.codec = codecs[c];
    xchg_buf *buf;
    if (rt_write(&root, batches, 4, &o, &buf, msg, MSG) != 0) {
      TU_CHECK(0, "dictionary stream: %s", msg);
      continue;
    }
    rt_data back = {0};
    if (rt_read_buf(buf, &back, msg, MSG) != 0)
      TU_CHECK(0, "dictionary stream read: %s", msg);
    else if (back.n != 4 || back.dictionary_batches != 3 || back.delta_batches != 1) {
      snprintf(msg, MSG, "%lld batches, %lld dictionary batches (%lld deltas); want 4, 3 (1)",
               (long long)back.n, (long long)back.dictionary_batches,
               (long long)back.delta_batches);
      TU_CHECK(0, "dictionary stream messages: %s", msg);
    }
    for (int64_t i = 0; i < back.n && i < 4; i++)
      TU_CHECK(array_equal(&root, &batches[i], &back.batches[i], msg, MSG) == 0,
               "dictionary stream values: %s", msg);
    rt_data_free(&back);
    xchg_buf_unref(buf);
  }
  /* File format: the delta is fine, the replacement is refused. */
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.format = XCHG_IPC_FILE;
  xchg_buf *buf;
  if (rt_write(&root, batches, 3, &o, &buf, msg, MSG) != 0) {
    TU_CHECK(0, "dictionary delta in a file: %s", msg);
  } else {
    rt_data back = {0};
    TU_CHECK(rt_read_buf(buf, &back, msg, MSG) == 0, "dictionary delta in a file: read: %s", msg);
    for (int64_t i = 0; i < back.n; i++)
      TU_CHECK(array_equal(&root, &batches[i], &back.batches[i], msg, MSG) == 0,
               "dictionary file values: %s", msg);
    TU_CHECK(back.n == 3, "dictionary delta in a file: not 3 batches");
    rt_data_free(&back);
    xchg_buf_unref(buf);
  }
  if (rt_write(&root, batches, 4, &o, &buf, msg, MSG) == 0) {
    xchg_buf_unref(buf);
    TU_CHECK(0, "dictionary replacement in a file: was accepted");
  } else if (!strstr(msg, "cannot replace dictionary")) {
    TU_CHECK(0, "dictionary replacement in a file: wrong error: %s", msg);
  }
  /* Shared ids: two columns given one id write one dictionary; differing
   * dictionaries under one id are refused. */
  struct ArrowSchema col2 = col, *kids2[2] = {&col, &col2};
  col2.name = "colour2";
  struct ArrowSchema root2 = root;
  root2.n_children = 2;
  root2.children = kids2;
  dict_batch x, y;
  make_dict_batch(&x, idx1, 3, off_ab, 2, "abb");
  make_dict_batch(&y, idx1, 3, off_ab, 2, "abb");
  struct ArrowArray *cols[2] = {&x.col, &y.col};
  struct ArrowArray two = x.root;
  two.n_children = 2;
  two.children = cols;
  static const int64_t shared[2] = {5, 5};
  xchg_ipc_write_options_init(&o);
  o.dictionary_ids = shared;
  o.n_dictionary_ids = 2;
  if (rt_write(&root2, &two, 1, &o, &buf, msg, MSG) != 0) {
    TU_CHECK(0, "shared dictionary id: %s", msg);
  } else {
    rt_data back = {0};
    if (rt_read_buf(buf, &back, msg, MSG) != 0)
      TU_CHECK(0, "shared dictionary id: read: %s", msg);
    else if (back.dictionary_batches != 1)
      TU_CHECK(0, "shared dictionary id: not exactly one dictionary batch");
    else
      TU_CHECK(array_equal(&root2, &two, &back.batches[0], msg, MSG) == 0,
               "shared dictionary values: %s", msg);
    rt_data_free(&back);
    xchg_buf_unref(buf);
  }
  make_dict_batch(&y, idx1, 3, off_abc, 3, "abbccc");
  if (rt_write(&root2, &two, 1, &o, &buf, msg, MSG) == 0) {
    xchg_buf_unref(buf);
    TU_CHECK(0, "shared id with differing dictionaries: was accepted");
  }
}

/* ---- coalescing -------------------------------------------------------------- */

/* Writes src's rows as batches of `step` rows (slices), coalesced to
 * target rows; checks the number of output batches, every row and every
 * column's null count. */
static void check_coalesce_gold(const char *name, const rt_data *src, int64_t step,
                                int64_t target) {
  char msg[MSG], what[600];
  snprintf(what, sizeof what, "coalescing %s (%lld-row slices into %lld)", name, (long long)step,
           (long long)target);
  int64_t total = 0, n_small = 0;
  for (int64_t b = 0; b < src->n; b++) total += src->batches[b].length;
  struct ArrowArray *small = calloc((size_t)(total / step + src->n + 1), sizeof *small);
  if (!small) return;
  for (int64_t b = 0; b < src->n; b++)
    for (int64_t r = 0; r < src->batches[b].length; r += step) {
      small[n_small] = src->batches[b];
      small[n_small].offset = r;
      small[n_small].length =
          r + step <= src->batches[b].length ? step : src->batches[b].length - r;
      n_small++;
    }
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.coalesce_rows = target;
  o.codec = XCHG_BLOCK_LZ4_FRAME;
  xchg_buf *buf;
  if (rt_write(&src->schema, small, n_small, &o, &buf, msg, MSG) != 0) {
    TU_CHECK(0, "%s: %s", what, msg);
    free(small);
    return;
  }
  rt_data back = {0};
  if (rt_read_buf(buf, &back, msg, MSG) != 0) {
    TU_CHECK(0, "%s: %s", what, msg);
  } else {
    /* Walk the output rows against the small batches. */
    int64_t in = 0, in_row = 0, out_rows = 0, max_rows = 0;
    for (int64_t ob = 0; ob < back.n; ob++) {
      const struct ArrowArray *out = &back.batches[ob];
      out_rows += out->length;
      if (out->length > max_rows) max_rows = out->length;
      for (int64_t c = 0; c < out->n_children; c++) {
        /* null count of the column = nulls of the input rows it holds */
        int64_t nulls = 0, i = in, r = in_row, left = out->length;
        while (left > 0 && i < n_small) {
          int64_t take = small[i].length - r < left ? small[i].length - r : left;
          const struct ArrowArray *col = small[i].children[c];
          const char *fmt = src->schema.children[c]->format;
          if (!strcmp(fmt, "n"))
            nulls += take;
          else if (strncmp(fmt, "+u", 2) != 0 && strcmp(fmt, "+r") != 0 && col->null_count != 0)
            nulls += array_count_nulls(col, small[i].offset + r, take);
          left -= take;
          r += take;
          if (r == small[i].length) i++, r = 0;
        }
        if (out->children[c]->null_count != nulls) {
          snprintf(msg, MSG, "batch %lld column %lld: null_count %lld, the input rows have %lld",
                   (long long)ob, (long long)c, (long long)out->children[c]->null_count,
                   (long long)nulls);
          TU_CHECK(0, "%s: %s", what, msg);
        }
      }
      for (int64_t row = 0; row < out->length;) {
        if (in >= n_small) {
          TU_CHECK(0, "%s: more rows out than in", what);
          break;
        }
        int64_t take = small[in].length - in_row;
        if (take > out->length - row) take = out->length - row;
        if (array_range_equal(&src->schema, &small[in], in_row, out, row, take, msg, MSG) != 0) {
          TU_CHECK(0, "%s: %s", what, msg);
          row = out->length;
          break;
        }
        row += take;
        in_row += take;
        if (in_row == small[in].length) in++, in_row = 0;
      }
    }
    if (out_rows != total) {
      snprintf(msg, MSG, "%lld rows out, %lld in", (long long)out_rows, (long long)total);
      TU_CHECK(0, "%s: %s", what, msg);
    }
    int64_t want = (total + target - 1) / target;
    if (total > 0 && (back.n > want + 1 || max_rows > target + step)) {
      snprintf(msg, MSG, "%lld batches (largest %lld rows) from %lld small ones", (long long)back.n,
               (long long)max_rows, (long long)n_small);
      TU_CHECK(0, "%s: %s", what, msg);
    }
  }
  rt_data_free(&back);
  xchg_buf_unref(buf);
  free(small);
}

static void check_coalesce_dictionaries(void) {
  char msg[MSG];
  struct ArrowSchema root, col, value, *kids[1];
  dict_schema(&root, &col, &value, kids);
  static const int32_t idx[3] = {1, 0, 1};
  static const int32_t off_ab[3] = {0, 1, 3}, off_abc[4] = {0, 1, 3, 6}, off_xy[3] = {0, 1, 2};
  dict_batch b[5];
  make_dict_batch(&b[0], idx, 3, off_ab, 2, "abb");
  make_dict_batch(&b[1], idx, 3, off_ab, 2, "abb");
  make_dict_batch(&b[2], idx, 3, off_abc, 3, "abbccc"); /* extends: merges */
  make_dict_batch(&b[3], idx, 3, off_xy, 2, "xy");      /* differs: kept apart */
  make_dict_batch(&b[4], idx, 3, off_xy, 2, "xy");
  struct ArrowArray batches[5] = {b[0].root, b[1].root, b[2].root, b[3].root, b[4].root};
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.coalesce_rows = 1000;
  xchg_buf *buf;
  if (rt_write(&root, batches, 5, &o, &buf, msg, MSG) != 0) {
    TU_CHECK(0, "coalescing dictionaries: %s", msg);
    return;
  }
  rt_data back = {0};
  if (rt_read_buf(buf, &back, msg, MSG) != 0) {
    TU_CHECK(0, "coalescing dictionaries: read: %s", msg);
  } else if (back.n != 2 || back.batches[0].length != 9 || back.batches[1].length != 6) {
    snprintf(msg, MSG, "%lld batches; want 2 of 9 and 6 rows", (long long)back.n);
    TU_CHECK(0, "coalescing dictionaries: %s", msg);
  } else {
    for (int i = 0; i < 5; i++)
      TU_CHECK(array_range_equal(&root, &batches[i], 0, &back.batches[i < 3 ? 0 : 1],
                                 3 * (i < 3 ? i : i - 3), 3, msg, MSG) == 0,
               "coalescing dictionaries: values: %s", msg);
  }
  rt_data_free(&back);
  xchg_buf_unref(buf);
}

/* ---- metadata and compression -------------------------------------------------- */

static void check_message_metadata_and_size(const rt_data *src) {
  char msg[MSG];
  xchg_ipc_writer *w;
  xchg_error err;
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  if (xchg_ipc_writer_open_memory(&src->schema, &o, &w, &err) != XCHG_OK) {
    TU_CHECK(0, "message metadata: %s", err.message);
    return;
  }
  static const char meta[] =
      "\1\0\0\0"
      "\4\0\0\0"
      "note"
      "\5\0\0\0"
      "hello";
  xchg_status st = xchg_ipc_writer_set_message_metadata(w, meta, &err);
  for (int64_t i = 0; i < src->n && st == XCHG_OK; i++)
    st = xchg_ipc_writer_write(w, &src->batches[i], &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_buf *buf = st == XCHG_OK ? xchg_ipc_writer_take_memory(w) : NULL;
  xchg_ipc_writer_free(w);
  if (!buf) {
    TU_CHECK(0, "message metadata: %s", err.message);
    return;
  }
  rt_data back = {0};
  if (rt_read_buf(buf, &back, msg, MSG) != 0)
    TU_CHECK(0, "message metadata: read: %s", msg);
  else
    TU_CHECK(strcmp(back.last_metadata, "note=hello") == 0, "message metadata: %s",
             back.last_metadata);
  rt_data_free(&back);
  xchg_buf *packed;
  o.codec = XCHG_BLOCK_ZSTD;
  if (rt_write(&src->schema, src->batches, src->n, &o, &packed, msg, MSG) != 0) {
    TU_CHECK(0, "zstd size: %s", msg);
  } else {
    if (xchg_buf_size(packed) >= xchg_buf_size(buf)) {
      snprintf(msg, MSG, "zstd output %zu bytes, uncompressed %zu", xchg_buf_size(packed),
               xchg_buf_size(buf));
      TU_CHECK(0, "compression shrinks compressible data: %s", msg);
    }
    xchg_buf_unref(packed);
  }
  xchg_buf_unref(buf);
}

static char **paths;
static size_t n_paths;

static void gold_files(void) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(2, &pool, NULL) == XCHG_OK, "cannot create a pool");
  for (size_t i = 0; i < n_paths; i++) check_gold_file(paths[i], pool);
  xchg_pool_free(pool);
}

/* Coalescing on real data: primitives with nulls, nested, dictionaries. */
static void coalesce_gold(void) {
  static const char *coalesce_cases[] = {"generated_primitive.json.gz", "generated_nested.json.gz",
                                         "generated_union.json.gz", "generated_dictionary.json.gz"};
  for (size_t k = 0; k < sizeof coalesce_cases / sizeof *coalesce_cases; k++) {
    for (size_t i = 0; i < n_paths; i++) {
      if (!strstr(paths[i], "1.0.0-littleendian") || !strstr(paths[i], coalesce_cases[k])) continue;
      char ipc[4096], msg[MSG];
      rt_gold_stream_path(paths[i], ipc, sizeof ipc);
      rt_data src = {0};
      if (!TU_CHECK(rt_read_file(ipc, &src, msg, MSG) == 0, "%s: %s", ipc, msg)) continue;
      check_coalesce_gold(coalesce_cases[k], &src, 1, 7);
      check_coalesce_gold(coalesce_cases[k], &src, 3, 1000);
      if (k == 0) check_message_metadata_and_size(&src);
      rt_data_free(&src);
    }
  }
}

int main(int argc, char **argv) {
  if (rt_find_all_gold(&paths, &n_paths) != 0) return 1;
  static const tu_case cases[] = {
      {"gold_files", gold_files},
      {"sample", check_sample},
      {"dictionaries", check_dictionaries},
      {"coalesce_gold", coalesce_gold},
      {"coalesce_dictionaries", check_coalesce_dictionaries},
  };
  int rc = TU_MAIN(argc, argv, "roundtrip", cases);
  rt_free_paths(paths, n_paths);
  return rc;
}
