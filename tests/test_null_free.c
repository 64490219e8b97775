/* tests/test_null_free.c — every destructor of the API takes NULL as a
 * no-op, as the API reference promises (`_free`, `_release`, `_unref`):
 * one that dereferenced it would crash here. */
#include "support/testutil.h"
#include "xchg/xchg.h"

static void null_destructors(void) {
  int64_t bytes0 = xchg_buf_allocated_bytes(), live0 = xchg_buf_live_count();
  xchg_buf_unref(NULL);
  xchg_source_free(NULL);
  xchg_pool_free(NULL);
  xchg_istream_free(NULL);
  xchg_row_reader_free(NULL);
  xchg_ipc_reader_free(NULL);
  xchg_batch_decoder_free(NULL);
  xchg_ipc_writer_free(NULL);
  xchg_cache_holder_release(NULL);
  xchg_cache_free(NULL);
  TU_CHECK(xchg_buf_allocated_bytes() == bytes0 && xchg_buf_live_count() == live0,
           "NULL destructors changed the buffer counts");
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"null_destructors", null_destructors}};
  return TU_MAIN(argc, argv, "null_free", cases);
}
