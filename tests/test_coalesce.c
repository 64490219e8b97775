/* tests/test_coalesce.c — the shuffle coalescer below the reader
 * (test_shuffle reads through it end to end):
 *  - the offset rebase, each copy of it (the portable loop; AVX2 where the
 *    CPU has it) against a plain sum worked out here, at every count of
 *    offsets up to a few vectors past the unrolled step, every byte
 *    alignment of source and destination, and deltas that wrap;
 *  - an append that fails after some columns went in leaves the output as
 *    it was (the undo), which the reader cannot show: it stops at the
 *    error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/array.h"
#include "ipc/framing.h"
#include "shuffle/coalesce_internal.h"
#include "support/c_fixture.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/ipc.h"

typedef void rebase_fn(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta);

enum { MAX_OFFSETS = 300, GUARD = 40, SPACE = 8 * MAX_OFFSETS + 2 * GUARD + 8 };

/* Offset i of a buffer of `width`-byte little-endian offsets. */
static uint64_t offset_at(const uint8_t *p, int width, int64_t i) {
  uint64_t v = 0;
  for (int b = width - 1; b >= 0; b--) v = v << 8 | p[width * i + b];
  return v;
}

/* One call of fn, its output checked offset by offset and the bytes
 * around it unchanged; returns 0, or -1 with msg set. */
static int check_one(rebase_fn *fn, int width, int64_t n, int src_shift, int dst_shift,
                     int64_t delta, uint64_t *seed, char *msg, size_t size) {
  uint8_t src[SPACE], dst[SPACE];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)tu_splitmix64(seed);
  memset(dst, 0xa5, sizeof dst);
  uint8_t *out = dst + GUARD + dst_shift;
  const uint8_t *in = src + GUARD + src_shift;
  fn(out, in, n, width, delta);
  uint64_t mask = width == 4 ? 0xffffffffu : ~(uint64_t)0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t want = (offset_at(in, width, i) + (uint64_t)delta) & mask;
    if (offset_at(out, width, i) != want)
      return tu_errorf(msg, size, "offset %lld of %lld: %llu, not %llu", (long long)i, (long long)n,
                       (unsigned long long)offset_at(out, width, i), (unsigned long long)want);
  }
  for (uint8_t *p = dst; p < dst + sizeof dst; p++)
    if ((p < out || p >= out + n * width) && *p != 0xa5)
      return tu_errorf(msg, size, "byte %lld of the destination, outside the %lld offsets, written",
                       (long long)(p - out), (long long)n);
  return 0;
}

static void check_copy(const char *name, rebase_fn *fn) {
  static const int64_t deltas[] = {0,         1,         -1,        7,         -123456,
                                   INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, (int64_t)1 << 32};
  uint64_t seed = 21;
  int failed = 0;
  for (int width = 4; width <= 8 && !failed; width += 4)
    for (int64_t n = 0; n <= MAX_OFFSETS && !failed; n++)
      for (int shift = 0; shift < 8 && !failed; shift++) {
        char msg[256];
        int64_t delta = deltas[(n + shift) % (int64_t)(sizeof deltas / sizeof *deltas)];
        failed = check_one(fn, width, n, shift, (shift * 3) % 8, delta, &seed, msg, sizeof msg);
        TU_CHECK(!failed, "%s, %d-byte offsets, %lld of them, source at +%d: %s", name, width,
                 (long long)n, shift, msg);
      }
}

static void rebase_portable(void) { check_copy("portable", coalesce_rebase_portable); }

static void rebase_avx2(void) {
#ifdef CPU_X86
  if (CPU_HAS("avx2")) {
    check_copy("avx2", coalesce_rebase_avx2);
    return;
  }
#endif
  printf("rebase_avx2: this CPU has no AVX2 copy to check\n");
}

static void rebase_picked(void) { check_copy("the copy picked", coalesce_rebase); }

/* ---- undo ---------------------------------------------------------------------- */

enum { ROWS = 40 };

/* A stream of one batch of ROWS rows: int32 `a` (row i is 3i), utf8 `s`
 * (row i is i % 4 letters from 'a' + i % 26). */
static xchg_buf *two_columns(char *msg, size_t size) {
  static int32_t values[ROWS], offsets[ROWS + 1];
  static char chars[4 * ROWS];
  for (int i = 0; i < ROWS; i++) {
    values[i] = 3 * i;
    offsets[i + 1] = offsets[i] + i % 4;
    for (int j = 0; j < i % 4; j++) chars[offsets[i] + j] = (char)('a' + i % 26);
  }
  struct ArrowSchema a, str, *cols[2] = {&a, &str}, root;
  struct ArrowArray a_a, str_a, *col_a[2] = {&a_a, &str_a}, root_a;
  tu_fixture_schema(&a, "i", "a", 0, NULL);
  tu_fixture_schema(&str, "u", "s", 0, NULL);
  tu_fixture_schema(&root, "+s", "", 2, cols);
  tu_fixture_array(&a_a, ROWS, 2, (const void *[]){NULL, values}, 0, NULL);
  tu_fixture_array(&str_a, ROWS, 3, (const void *[]){NULL, offsets, chars}, 0, NULL);
  tu_fixture_array(&root_a, ROWS, 1, (const void *[]){NULL}, 2, col_a);
  xchg_buf *stream = NULL;
  return rt_write(&root, &root_a, 1, NULL, &stream, msg, size) == 0 ? stream : NULL;
}

/* The stream's schema and its record batch, over bytes (the batch's body
 * among them). */
static int open_stream(const uint8_t *bytes, size_t size, const xchg_ipc_read_options *opts,
                       ipc_schema *schema, wire_batch *w, xchg_error *err) {
  ipc_message_view m;
  if (ipc_message_view_decode(bytes, size, 0, 0, opts->max_metadata_bytes, &m, err) != XCHG_OK ||
      ipc_schema_parse(&m.header, opts, schema, err) != XCHG_OK)
    return -1;
  size_t at = (size_t)m.size;
  if (ipc_message_view_decode(bytes + at, size - at, 1, (int64_t)at, opts->max_metadata_bytes, &m,
                              err) != XCHG_OK ||
      wire_batch_open(&m.header, m.version, bytes + at + (size_t)m.body_offset, m.body_length, w,
                      err) != XCHG_OK) {
    ipc_schema_free(schema);
    return -1;
  }
  return 0;
}

static ipc_array *no_dictionaries(void *ctx, int64_t id) { return NULL; }

/* The coalesced batch holds the good block twice, as if the bad one
 * between them had never been appended. */
static int check_twice(const ipc_array *r, char *msg, size_t size) {
  if (r->length != 2 * ROWS || r->n_children != 2)
    return tu_errorf(msg, size, "%lld rows, %lld columns", (long long)r->length,
                     (long long)r->n_children);
  const ipc_array *a = r->children[0], *s = r->children[1];
  if (a->length != 2 * ROWS || s->length != 2 * ROWS)
    return tu_errorf(msg, size, "columns of %lld and %lld rows", (long long)a->length,
                     (long long)s->length);
  const uint8_t *values = ipc_array_data(a, 1), *offsets = ipc_array_data(s, 1),
                *chars = ipc_array_data(s, 2);
  int32_t at = 0;
  for (int64_t i = 0; i < 2 * ROWS; i++) {
    int32_t v, start, end, row = (int32_t)(i % ROWS);
    memcpy(&v, values + 4 * i, 4);
    memcpy(&start, offsets + 4 * i, 4);
    memcpy(&end, offsets + 4 * (i + 1), 4);
    if (v != 3 * row || start != at || end != at + row % 4)
      return tu_errorf(msg, size, "row %lld: %d, offsets %d to %d", (long long)i, v, start, end);
    for (int32_t j = start; j < end; j++)
      if (chars[j] != 'a' + row % 26)
        return tu_errorf(msg, size, "row %lld: byte %d is '%c'", (long long)i, j, chars[j]);
    at = end;
  }
  return 0;
}

/* Appends a good block, then one whose utf8 column is bad (its last offset
 * past its data) after its int32 column (other values) went in, then the
 * good one again. */
static void undo_failed_append(void) {
  char msg[256] = "";
  xchg_buf *stream = two_columns(msg, sizeof msg);
  if (!TU_CHECK(stream != NULL, "%s", msg)) return;
  size_t size = xchg_buf_size(stream);
  uint8_t *bad = malloc(size);
  memcpy(bad, xchg_buf_data(stream), size);
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  ipc_schema schema, bad_schema;
  wire_batch good_w, bad_w;
  xchg_error err = {0};
  if (!TU_CHECK(open_stream(xchg_buf_data(stream), size, &opts, &schema, &good_w, &err) == 0, "%s",
                err.message) ||
      !TU_CHECK(open_stream(bad, size, &opts, &bad_schema, &bad_w, &err) == 0, "%s", err.message)) {
    free(bad);
    xchg_buf_unref(stream);
    return;
  }
  ipc_schema_free(&bad_schema);
  int64_t offset, len; /* buffer 1: a's values, which would show; buffer 3: s's offsets */
  coalesce_spec_of(&bad_w, 1, &offset, &len);
  memset((uint8_t *)bad_w.body + offset, 0xff, (size_t)len);
  coalesce_spec_of(&bad_w, 3, &offset, &len);
  int32_t past = 1 << 20;
  memcpy((uint8_t *)bad_w.body + offset + 4 * ROWS, &past, 4);
  coalescer *c;
  int fits;
  ipc_array *r = NULL;
  if (TU_OK(coalescer_create(&schema, &opts, 8192, (int64_t)64 << 20, &c, &err), err)) {
    TU_OK(coalescer_append(c, &good_w, &fits, &err), err);
    xchg_status st = coalescer_append(c, &bad_w, &fits, &err);
    TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, "field 's', buffer 3: offsets of rows"),
             "the bad block: %s (%s)", xchg_status_name(st), err.message);
    TU_CHECK(coalescer_rows(c) == ROWS, "%lld rows after it", (long long)coalescer_rows(c));
    TU_OK(coalescer_append(c, &good_w, &fits, &err), err);
    if (TU_OK(coalescer_finish(c, no_dictionaries, NULL, &r, &err), err))
      TU_CHECK(check_twice(r, msg, sizeof msg) == 0, "%s", msg);
    ipc_array_unref(r);
    coalescer_free(c);
  }
  ipc_schema_free(&schema);
  free(bad);
  xchg_buf_unref(stream);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"rebase_portable", rebase_portable},
      {"rebase_avx2", rebase_avx2},
      {"rebase_picked", rebase_picked},
      {"undo_failed_append", undo_failed_append},
  };
  return TU_MAIN(argc, argv, "coalesce", cases);
}
