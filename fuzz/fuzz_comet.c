/* fuzz/fuzz_comet.c — Comet shuffle blocks, as an engine reads them.
 *
 * First as one byte stream; then split into members, one IPC reader per
 * block over xchg_source_from_istream_borrowed, the way Comet's shuffle blocks are
 * consumed, so that the block framing and the IPC reader on top of it are
 * fuzzed together. */
#include "fuzz_common.h"

static xchg_status read_member_ipc(xchg_istream *s, xchg_error *err) {
  xchg_source *src;
  if (xchg_source_from_istream_borrowed(s, &src, err) != XCHG_OK) return XCHG_ENOMEM;
  xchg_ipc_read_options opts;
  fuzz_read_options(&opts);
  xchg_ipc_reader *r = NULL;
  xchg_status st = xchg_ipc_reader_open(src, &opts, &r, err);
  while (st == XCHG_OK) {
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, err);
    if (st != XCHG_OK || a.release == NULL) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(r);
  return st;
}

static void split_members(const uint8_t *data, size_t size) {
  int64_t live = xchg_buf_live_count();
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.split_members = 1;
  xchg_error err = {""};
  xchg_istream *s = NULL;
  xchg_source *src;
  if (xchg_source_from_memory(data, size, NULL, NULL, &src, &err) != XCHG_OK) return;
  xchg_status st = xchg_istream_open(src, XCHG_STREAM_COMET, &opts, &s, &err);
  int more = 1;
  while (st == XCHG_OK && more) {
    (void)xchg_istream_comet_field_count(s);
    /* An IPC error in one block is that block's; the framing goes on. */
    xchg_error ipc_err = {""};
    fuzz_note_status(read_member_ipc(s, &ipc_err), &ipc_err);
    st = xchg_istream_next_member(s, &more, &err);
  }
  fuzz_note_status(st, &err);
  xchg_istream_free(s);
  fuzz_check_no_leak(live, "Comet blocks");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  fuzz_stream_codec(data, size, XCHG_STREAM_COMET, &opts);
  split_members(data, size);
  return 0;
}
