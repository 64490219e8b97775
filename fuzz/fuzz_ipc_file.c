/* fuzz/fuzz_ipc_file.c — the IPC file format's footer and random access.
 *
 * Reads every batch the footer lists, last first (each read_batch seeks and
 * reads the dictionaries it needs), then the same input front to back. */
#include "fuzz_common.h"

static void open_reader(const uint8_t *data, size_t size, xchg_ipc_reader **r, xchg_status *st,
                        xchg_error *err) {
  xchg_ipc_read_options opts;
  fuzz_read_options(&opts);
  *st = xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, r, err);
}

static void random_access(const uint8_t *data, size_t size) {
  xchg_error err = {""};
  xchg_ipc_reader *r = NULL;
  xchg_status st;
  open_reader(data, size, &r, &st, &err);
  if (st == XCHG_OK) {
    int64_t n = xchg_ipc_reader_num_batches(r);
    /* Past the end is a caller error; it must be refused, not read. */
    struct ArrowArray a;
    xchg_error ignored;
    if (n >= 0 && xchg_ipc_reader_read_batch(r, n, &a, &ignored) == XCHG_OK) a.release(&a);
    for (int64_t i = n - 1; i >= 0 && st == XCHG_OK; i--) {
      st = xchg_ipc_reader_read_batch(r, i, &a, &err);
      if (st == XCHG_OK) a.release(&a);
    }
  }
  fuzz_note_status(st, &err);
  xchg_ipc_reader_free(r);
}

static void sequential(const uint8_t *data, size_t size) {
  xchg_error err = {""};
  xchg_ipc_reader *r = NULL;
  xchg_status st;
  open_reader(data, size, &r, &st, &err);
  while (st == XCHG_OK) {
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, &err);
    if (st != XCHG_OK || a.release == NULL) break;
    a.release(&a);
  }
  fuzz_note_status(st, &err);
  xchg_ipc_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = xchg_buf_live_count();
  random_access(data, size);
  fuzz_check_no_leak(live, "IPC file, random access");
  sequential(data, size);
  fuzz_check_no_leak(live, "IPC file, sequential");
  return 0;
}
