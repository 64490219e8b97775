/* test_rows.c — the row reader over Gluten's sort-shuffle layout (u32 LE
 * length + payload, compressed as LZ4 frames of 64 KiB each, or zstd). */
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/rows.h"
#include "xchg/testing.h"
#include "support/sources.h"
#include "support/testutil.h"

#define NROWS 5000

static uint32_t row_length(size_t i) {
  static const uint32_t special[] = {0, 1, 3, 4, 100, 70000, 200000, 65535};
  if (i % 500 == 7) return special[(i / 500) % 8];
  return (uint32_t)((i * 2654435761u) >> 20) % 300;
}

static uint8_t row_byte(size_t row, size_t j) { return (uint8_t)(row * 31 + j * 7 + (j >> 8)); }

static tu_bytes serialize_rows(size_t n) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += 4 + row_length(i);
  tu_bytes out = {malloc(total + 1), total};
  uint8_t *p = out.data;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = row_length(i);
    p[0] = (uint8_t)len, p[1] = (uint8_t)(len >> 8), p[2] = (uint8_t)(len >> 16),
    p[3] = (uint8_t)(len >> 24);
    p += 4;
    for (uint32_t j = 0; j < len; j++) *p++ = row_byte(i, j);
  }
  return out;
}

static tu_bytes compress_rows(tu_bytes raw, xchg_stream_codec codec) {
  tu_bytes out = {0};
  for (size_t off = 0; off < raw.size; off += 65536) {
    size_t n = raw.size - off < 65536 ? raw.size - off : 65536;
    if (codec == XCHG_STREAM_LZ4_FRAME) { /* as Gluten does: liblz4 straight */
      size_t cap = LZ4F_compressFrameBound(n, NULL);
      uint8_t *f = malloc(cap);
      tu_bytes_append(&out, f, LZ4F_compressFrame(f, cap, raw.data + off, n, NULL));
      free(f);
    } else {
      xchg_buf *b = NULL;
      TU_CHECK(xchg_stream_encode(codec, NULL, raw.data + off, n, &b, NULL) == XCHG_OK);
      tu_bytes_append(&out, xchg_buf_data(b), xchg_buf_size(b));
      xchg_buf_unref(b);
    }
  }
  return out;
}

static xchg_row_reader *open_rows(tu_bytes enc, xchg_stream_codec codec, size_t window,
                                  size_t max_row) {
  xchg_istream_options o;
  xchg_istream_options_init(&o);
  o.window_size = window;
  xchg_istream *s = NULL;
  xchg_row_reader *r = NULL;
  xchg_error err;
  xchg_status st = xchg_istream_open(tu_memory_source(enc.data, enc.size), codec, &o, &s, &err);
  xchg_row_reader_options ro;
  xchg_row_reader_options_init(&ro);
  if (max_row) ro.max_row_size = max_row;
  if (st == XCHG_OK) st = xchg_row_reader_open(s, &ro, &r, &err);
  TU_CHECK(st == XCHG_OK, "open: %s", err.message);
  return r;
}

static int row_ok(size_t i, const uint8_t *row, size_t len) {
  if (row == NULL || len != row_length(i)) return 0;
  for (uint32_t j = 0; j < len; j++)
    if (row[j] != row_byte(i, j)) return 0;
  return 1;
}

static void test_next_row(xchg_stream_codec codec, size_t window) {
  tu_bytes raw = serialize_rows(NROWS), enc = compress_rows(raw, codec);
  xchg_row_reader *r = open_rows(enc, codec, window, 0);
  xchg_error err;
  size_t i = 0, bad = 0;
  for (;; i++) {
    const uint8_t *row;
    size_t len;
    xchg_status st = xchg_row_reader_next(r, &row, &len, &err);
    TU_CHECK(st == XCHG_OK, "row %zu: %s", i, err.message);
    if (st != XCHG_OK || row == NULL) break;
    if (i >= NROWS || !row_ok(i, row, len)) bad++;
  }
  TU_CHECK(i == NROWS && bad == 0, "%s window %zu: %zu rows, %zu wrong",
           xchg_stream_codec_name(codec), window, i, bad);
  /* Rows spanning windows were copied, the others not: at most one copy per window. */
  int64_t copied = xchg_row_reader_copied_rows(r);
  xchg_istream_metrics m;
  xchg_istream_get_metrics(xchg_row_reader_stream(r), &m);
  TU_CHECK(copied > 0 && copied <= m.refills && xchg_row_reader_rows(r) == NROWS,
           "%lld of %lld rows copied over %lld windows", (long long)copied,
           (long long)xchg_row_reader_rows(r), (long long)m.refills);
  const uint8_t *row = (const uint8_t *)1;
  size_t len;
  TU_CHECK(xchg_row_reader_next(r, &row, &len, &err) == XCHG_OK && row == NULL, "repeated end");
  xchg_row_reader_free(r);
  free(raw.data);
  free(enc.data);
}

static void test_batches(void) {
  tu_bytes raw = serialize_rows(NROWS), enc = compress_rows(raw, XCHG_STREAM_LZ4_FRAME);
  xchg_row_reader *r = open_rows(enc, XCHG_STREAM_LZ4_FRAME, 65536, 0);
  const uint8_t *rows[100];
  size_t lens[100];
  size_t i = 0, bad = 0, batches = 0;
  int64_t count = -1;
  xchg_error err;
  TU_CHECK(xchg_row_reader_next_batch(r, -1, rows, lens, &count, &err) == XCHG_EINVAL &&
               count == 0 && strstr(err.message, "batch of -1 rows"),
           "a batch of -1 rows: %s", err.message);
  /* 0 rows would be *count 0, the end, before the first row. */
  TU_CHECK(xchg_row_reader_next_batch(r, 0, rows, lens, &count, &err) == XCHG_EINVAL &&
               count == 0 && strstr(err.message, "batch of 0 rows"),
           "a batch of 0 rows: %s", err.message);
  while (xchg_row_reader_next_batch(r, 100, rows, lens, &count, &err) == XCHG_OK && count > 0) {
    /* Check the whole batch only now: every pointer must still be valid. */
    for (int64_t k = 0; k < count; k++, i++)
      if (i >= NROWS || !row_ok(i, rows[k], lens[k])) bad++;
    batches++;
  }
  TU_CHECK(i == NROWS && bad == 0, "batches: %zu rows, %zu wrong", i, bad);
  TU_CHECK(batches >= NROWS / 100 && batches < NROWS / 10, "%zu batches", batches);
  xchg_row_reader_free(r);
  free(raw.data);
  free(enc.data);
}

static void test_errors(void) {
  tu_bytes raw = serialize_rows(300), nothing = {0};
  /* Cut inside a row, uncompressed (codec none) so the cut is exact. */
  for (size_t cut = 1; cut < 4000; cut += 37) {
    tu_bytes part = {raw.data, cut};
    xchg_row_reader *r = open_rows(part, XCHG_STREAM_NONE, 100, 0);
    const uint8_t *row;
    size_t len;
    xchg_error err = {{0}};
    xchg_status st;
    size_t n = 0;
    while ((st = xchg_row_reader_next(r, &row, &len, &err)) == XCHG_OK && row != NULL) n++;
    /* Where is the row boundary at or before the cut? */
    size_t off = 0, whole = 0;
    while (off + 4 + row_length(whole) <= cut) off += 4 + row_length(whole++);
    if (off == cut)
      TU_CHECK(st == XCHG_OK && n == whole, "cut at a row boundary %zu: %s", cut, err.message);
    else
      TU_CHECK(st == XCHG_EIO && n == whole && strstr(err.message, "row") != NULL,
               "cut at %zu: %s after %zu rows: %s", cut, xchg_status_name(st), n, err.message);
    xchg_row_reader_free(r);
  }
  /* A row over the limit. */
  xchg_row_reader *r = open_rows(raw, XCHG_STREAM_NONE, 65536, 200);
  const uint8_t *row;
  size_t len;
  xchg_error err;
  xchg_status st;
  while ((st = xchg_row_reader_next(r, &row, &len, &err)) == XCHG_OK && row != NULL) {}
  TU_CHECK(st == XCHG_ELIMIT, "row over the limit: %s", xchg_status_name(st));
  xchg_row_reader_free(r);
  /* Nothing at all. */
  r = open_rows(nothing, XCHG_STREAM_LZ4_FRAME, 65536, 0);
  TU_CHECK(xchg_row_reader_next(r, &row, &len, &err) == XCHG_OK && row == NULL, "empty stream");
  xchg_row_reader_free(r);
  free(raw.data);
}

static void run_next_row(void) {
  test_next_row(XCHG_STREAM_LZ4_FRAME, 65536);
  test_next_row(XCHG_STREAM_LZ4_FRAME, 1000);
  test_next_row(XCHG_STREAM_ZSTD, 4096);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"next_row", run_next_row},
      {"batches", test_batches},
      {"errors", test_errors},
  };
  return TU_MAIN(argc, argv, "rows", cases);
}
