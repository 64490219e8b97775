/* tests/test_endian.c — big-endian IPC, written by xchg, read by xchg.
 *
 * Arrow's gold files here are all little-endian, so the reader's
 * byte-swapping path is proved with the writer's big-endian mode: every gold
 * file is written big-endian (stream and file, uncompressed and zstd), read
 * back, and must equal both its .json.gz and the little-endian decode.  The
 * hand-built sample adds the types whose swapping has special rules (views,
 * list views, run ends, decimal32/64, month-day-nano, dense unions,
 * dictionary indices).  A byte-level check proves the output really is
 * big-endian: a known int64 appears in the body in big-endian byte order
 * and not in little-endian order.
 *
 * Fixed-size binary values are opaque bytes, never swapped: a reader that
 * swaps them (one that mistakes a 16-byte fixed-size binary buffer for
 * binary views) fails here on generated_extension's uuid column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/array_equal.h"
#include "support/arrow_json.h"
#include "support/roundtrip.h"
#include "support/testutil.h"

#define MSG 2048

static int check_be(const struct ArrowSchema *schema, const struct ArrowArray *batches, int64_t n,
                    arrow_json *doc, xchg_ipc_format format, xchg_block_codec codec, char *msg) {
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.big_endian = 1;
  o.format = format;
  o.codec = codec;
  xchg_buf *buf;
  if (rt_write(schema, batches, n, &o, &buf, msg, MSG) != 0) return -1;
  rt_data back = {0};
  int rc = rt_read_buf(buf, &back, msg, MSG);
  xchg_buf_unref(buf);
  if (rc == 0 && back.n != n)
    rc =
        snprintf(msg, MSG, "%lld batches back, %lld written", (long long)back.n, (long long)n) * 0 -
        1;
  if (rc == 0 && doc && arrow_json_compare_schema(doc, &back.schema, msg, MSG) != 0) rc = -1;
  for (int64_t i = 0; rc == 0 && i < back.n; i++) {
    if (doc && arrow_json_compare_batch(doc, i, &back.schema, &back.batches[i], msg, MSG) != 0)
      rc = -1;
    else if (array_equal(schema, &batches[i], &back.batches[i], msg, MSG) != 0)
      rc = -1;
  }
  rt_data_free(&back);
  return rc;
}

static const xchg_ipc_format formats[] = {XCHG_IPC_STREAM, XCHG_IPC_FILE};
static const xchg_block_codec codecs[] = {XCHG_BLOCK_NONE, XCHG_BLOCK_ZSTD};

static void check_gold(const char *json_path) {
  char msg[MSG], what[600];
  rt_gold_check g;
  if (rt_gold_check_begin(json_path, &g) != 0) return;
  for (int f = 0; f < 2; f++)
    for (int c = 0; c < 2; c++) {
      snprintf(what, sizeof what, "%s [big-endian %s, %s]", g.name, f ? "file" : "stream",
               xchg_block_codec_name(codecs[c]));
      TU_CHECK(
          check_be(&g.src.schema, g.src.batches, g.src.n, g.doc, formats[f], codecs[c], msg) == 0,
          "%s: %s", what, msg);
    }
  rt_gold_check_end(&g);
}

static int contains(const uint8_t *hay, size_t n, const uint8_t *needle, size_t k) {
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(hay + i, needle, k) == 0) return 1;
  return 0;
}

static void check_sample(void) {
  struct ArrowSchema *schema;
  struct ArrowArray *batch;
  rt_sample(&schema, &batch);
  char msg[MSG], what[256];
  static const int64_t cuts[3][2] = {{0, RT_SAMPLE_ROWS}, {1, 3}, {3, 3}};
  for (int f = 0; f < 2; f++)
    for (int c = 0; c < 2; c++)
      for (int s = 0; s < 3; s++) {
        struct ArrowArray slice = *batch;
        slice.offset = cuts[s][0];
        slice.length = cuts[s][1];
        snprintf(what, sizeof what, "sample [big-endian %s, %s, rows %lld+%lld]",
                 f ? "file" : "stream", xchg_block_codec_name(codecs[c]), (long long)slice.offset,
                 (long long)slice.length);
        TU_CHECK(check_be(schema, &slice, 1, NULL, formats[f], codecs[c], msg) == 0, "%s: %s", what,
                 msg);
      }
  /* The dec64 column's first value, -123456789012345, as stored. */
  const int64_t v = -123456789012345LL;
  uint8_t le[8], be[8];
  memcpy(le, &v, 8);
  for (int i = 0; i < 8; i++) be[i] = le[7 - i];
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  xchg_buf *out[2];
  for (int big = 0; big < 2; big++) {
    o.big_endian = big;
    if (rt_write(schema, batch, 1, &o, &out[big], msg, MSG) != 0) {
      TU_CHECK(0, "byte order: %s", msg);
      return;
    }
  }
  const uint8_t *lp = xchg_buf_data(out[0]), *bp = xchg_buf_data(out[1]);
  size_t ln = xchg_buf_size(out[0]), bn = xchg_buf_size(out[1]);
  TU_CHECK(contains(lp, ln, le, 8) && !contains(lp, ln, be, 8),
           "byte order: little-endian output lacks the little-endian value");
  TU_CHECK(contains(bp, bn, be, 8) && !contains(bp, bn, le, 8),
           "byte order: big-endian output does not hold the value big-endian");
  xchg_buf_unref(out[0]);
  xchg_buf_unref(out[1]);
}

static void gold_files(void) {
  char **paths;
  size_t n;
  if (rt_find_all_gold(&paths, &n) != 0) return;
  for (size_t i = 0; i < n; i++) check_gold(paths[i]);
  rt_free_paths(paths, n);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"gold_files", gold_files},
      {"sample", check_sample},
  };
  return TU_MAIN(argc, argv, "endian", cases);
}
