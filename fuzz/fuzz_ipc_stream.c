/* fuzz/fuzz_ipc_stream.c — the IPC reader, read front to back.
 *
 * The input is read twice: from memory (zero-copy slices of the input) and
 * through a callback source (every buffer copied out of the source, as from
 * a pipe), the second time with a column selection and every other batch
 * skipped by its header, so that the copy, selection and skip paths are
 * fuzzed too.  Format detection means a file-format input is read as well;
 * fuzz_ipc_file.c adds the footer's random access. */
#include <string.h>

#include "fuzz_common.h"

typedef struct piece_reader {
  const uint8_t *data;
  size_t size, pos;
} piece_reader;

static xchg_status read_piece(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  piece_reader *p = ctx;
  size_t left = p->size - p->pos;
  *got = n < left ? n : left;
  memcpy(dst, p->data + p->pos, *got);
  p->pos += *got;
  return XCHG_OK;
}

static xchg_status drain(xchg_ipc_reader *r, int skip_odd, xchg_error *err) {
  struct ArrowSchema schema;
  xchg_status st = xchg_ipc_reader_schema(r, &schema, err);
  if (st != XCHG_OK) return st;
  schema.release(&schema);
  int64_t ids[16];
  (void)xchg_ipc_reader_dictionary_ids(r, ids, 16);
  for (int64_t i = 0;; i++) {
    if (skip_odd && i % 2 == 1) {
      xchg_batch_header h;
      int at_end = 0;
      st = xchg_ipc_reader_peek(r, &h, &at_end, err);
      if (st != XCHG_OK || at_end) return st;
      st = xchg_ipc_reader_skip(r, err);
      if (st != XCHG_OK) return st;
      continue;
    }
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, err);
    if (st != XCHG_OK || a.release == NULL) return st;
    a.release(&a);
  }
}

static void from_memory(const uint8_t *data, size_t size) {
  xchg_ipc_read_options opts;
  fuzz_read_options(&opts);
  xchg_error err = {""};
  xchg_ipc_reader *r = NULL;
  xchg_status st = xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, &r, &err);
  if (st == XCHG_OK) st = drain(r, 0, &err);
  fuzz_note_status(st, &err);
  xchg_ipc_reader_free(r);
}

static void from_callback(const uint8_t *data, size_t size) {
  xchg_ipc_read_options opts;
  fuzz_read_options(&opts);
  opts.allow_missing_eos = 1;
  xchg_error err = {""};
  piece_reader p = {data, size, 0};
  xchg_source *src;
  if (xchg_source_from_callback(read_piece, NULL, &p, &src, &err) != XCHG_OK) return;
  xchg_ipc_reader *r = NULL;
  xchg_status st = xchg_ipc_reader_open(src, &opts, &r, &err);
  if (st == XCHG_OK) {
    int64_t first = 0;
    xchg_error ignored;
    /* Selecting column 0 of a schema without columns is a caller error,
     * which leaves every column selected. */
    if (xchg_ipc_reader_select_indices(r, &first, 1, &ignored) != XCHG_OK) {
      /* expected when the schema has no columns */
    }
    st = drain(r, 1, &err);
  }
  fuzz_note_status(st, &err);
  xchg_ipc_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = xchg_buf_live_count();
  from_memory(data, size);
  fuzz_check_no_leak(live, "IPC stream from memory");
  from_callback(data, size);
  fuzz_check_no_leak(live, "IPC stream from a callback");
  return 0;
}
