/* fuzz/fuzz_lz4java.c — the XCHG_STREAM_LZ4_JAVA stream decoder. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.max_block_size = (size_t)1 << 24; /* hostile sizes: tested in tests/test_limits.c */
  fuzz_stream_codec(data, size, XCHG_STREAM_LZ4_JAVA, &opts);
  /* A small window: every block is handed out over several refills. */
  opts.window_size = 1000;
  fuzz_stream_codec(data, size, XCHG_STREAM_LZ4_JAVA, &opts);
  return 0;
}
