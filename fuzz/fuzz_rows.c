/* fuzz/fuzz_rows.c — the row reader over a detected stream codec.
 *
 * The codec is detected (XCHG_STREAM_AUTO), so plain rows and rows in LZ4
 * or zstd frames are all fuzzed.  Rows are taken one at a time and in
 * batches, alternately, with a small window so that rows span windows. */

#include "fuzz_common.h"

static void touch(const uint8_t *row, size_t len) {
  /* Reading every byte lets AddressSanitizer check the row really lies in
   * live memory. */
  volatile uint8_t sink = 0;
  for (uint32_t i = 0; i < len; i++) sink ^= row[i];
  (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = xchg_buf_live_count();
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.window_size = 512;
  xchg_error err = {""};
  xchg_source *src;
  if (xchg_source_from_memory(data, size, NULL, NULL, &src, &err) != XCHG_OK) return 0;
  xchg_istream *s = NULL;
  xchg_row_reader *r = NULL;
  xchg_status st = xchg_istream_open(src, XCHG_STREAM_AUTO, &opts, &s, &err);
  xchg_row_reader_options ro;
  xchg_row_reader_options_init(&ro);
  ro.max_row_size = (size_t)1 << 20;
  if (st == XCHG_OK) st = xchg_row_reader_open(s, &ro, &r, &err);
  for (int i = 0; st == XCHG_OK; i++) {
    if (i % 2 == 0) {
      const uint8_t *row;
      size_t len;
      st = xchg_row_reader_next(r, &row, &len, &err);
      if (st != XCHG_OK || row == NULL) break;
      touch(row, len);
    } else {
      const uint8_t *rows[8];
      size_t lens[8];
      int64_t count = 0;
      st = xchg_row_reader_next_batch(r, 8, rows, lens, &count, &err);
      if (st != XCHG_OK || count == 0) break;
      for (int64_t k = 0; k < count; k++) touch(rows[k], lens[k]);
    }
  }
  fuzz_note_status(st, &err);
  xchg_row_reader_free(r);
  fuzz_check_no_leak(live, "row reader");
  return 0;
}
