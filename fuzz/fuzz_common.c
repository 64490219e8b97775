/* fuzz/fuzz_common.c — helpers shared by the fuzz targets. */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>

int64_t fuzz_errors_returned;

void fuzz_note_status(xchg_status st, const xchg_error *err) {
  if (st == XCHG_OK) return;
  fuzz_errors_returned++;
  if (err->message[0] == '\0') {
    fprintf(stderr, "finding: status %s without a message\n", xchg_status_name(st));
    abort();
  }
}

void fuzz_check_no_leak(int64_t before, const char *what) {
  int64_t now = xchg_buf_live_count();
  if (now != before) {
    fprintf(stderr, "finding: %s leaked %lld buffers\n", what, (long long)(now - before));
    abort();
  }
}

void fuzz_read_options(xchg_ipc_read_options *opts) {
  xchg_ipc_read_options_init(opts);
  opts->max_buffer_bytes = (int64_t)1 << 26;
  opts->max_batch_bytes = (int64_t)1 << 27;
  opts->max_dictionary_bytes = (int64_t)1 << 27;
}

/* Read sizes cycle through these so that reads straddle window and block
 * boundaries in every way: single bytes, odd sizes, and big copies. */
static const size_t read_sizes[] = {1, 7, 4096, 3, 65536 + 5};

/* A few bytes of zstd or LZ4 can legitimately stand for gigabytes (RLE
 * blocks); reading all of them would only slow the fuzzer down. */
#define MAX_DECODED ((uint64_t)4 << 20)

void fuzz_stream_codec(const uint8_t *data, size_t size, xchg_stream_codec codec,
                       const xchg_istream_options *opts) {
  int64_t live = xchg_buf_live_count();
  xchg_error err = {""};
  xchg_istream *s = NULL;
  xchg_source *src;
  if (xchg_source_from_memory(data, size, NULL, NULL, &src, &err) != XCHG_OK) return;
  xchg_status st = xchg_istream_open(src, codec, opts, &s, &err);
  static uint8_t scratch[65536 + 5];
  for (size_t i = 0; st == XCHG_OK && xchg_istream_position(s) < (int64_t)MAX_DECODED; i++) {
    size_t want = read_sizes[i % (sizeof read_sizes / sizeof read_sizes[0])], got = 0;
    st = xchg_istream_read(s, scratch, want, &got, &err);
    if (st == XCHG_OK && got < want) {
      /* The end: it must stay the end. */
      st = xchg_istream_read(s, scratch, 1, &got, &err);
      if (st == XCHG_OK && got != 0) {
        fprintf(stderr, "finding: bytes read after the end of the stream\n");
        abort();
      }
      break;
    }
  }
  fuzz_note_status(st, &err);
  xchg_istream_free(s);
  fuzz_check_no_leak(live, "stream codec");
}
