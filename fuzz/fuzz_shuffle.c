/* fuzz/fuzz_shuffle.c — a reduce task's shuffle blocks (xchg/shuffle.h).
 *
 * The input is a run of blocks, Comet-framed or plain IPC streams (the
 * framing detected), read by one shuffle reader into small target batches
 * (1 to 7 rows, from the input's size), so that every block boundary is
 * also a coalescing step; in memory when the size is even, through a
 * callback source read in odd pieces when odd; read ahead on a pool of two
 * threads for every other size.  Every batch is released after the reader
 * is freed, as an engine may. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "xchg/shuffle.h"

typedef struct pieces {
  const uint8_t *data;
  size_t size, pos;
} pieces;

static xchg_status read_pieces(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  (void)err;
  pieces *p = ctx;
  size_t take = 1 + (p->pos * 7 + 3) % 61;
  if (take > n) take = n;
  if (take > p->size - p->pos) take = p->size - p->pos;
  if (take) memcpy(dst, p->data + p->pos, take);
  p->pos += take;
  *got = take;
  return XCHG_OK;
}

static xchg_pool *pool; /* made once, for every input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!pool && xchg_pool_create(2, &pool, NULL) != XCHG_OK) abort();
  int64_t live = xchg_buf_live_count();
  xchg_shuffle_reader_options opts;
  xchg_shuffle_reader_options_init(&opts);
  fuzz_read_options(&opts.read);
  opts.target_rows = 1 + (int64_t)(size % 7);
  if (size / 2 % 2) {
    opts.read.pool = pool;
    opts.read.readahead_bytes = 1 << 12;
  }
  xchg_error err = {""};
  xchg_shuffle_reader *r;
  if (xchg_shuffle_reader_open(&opts, &r, &err) != XCHG_OK) abort();
  pieces p = {data, size, 0};
  xchg_source *src;
  xchg_status st = size % 2 ? xchg_source_from_callback(read_pieces, NULL, &p, &src, &err)
                            : xchg_source_from_memory(data, size, NULL, NULL, &src, &err);
  if (st == XCHG_OK) st = xchg_shuffle_reader_add_source(r, src, &err);
  struct ArrowArray batches[64];
  int n = 0;
  while (st == XCHG_OK) {
    struct ArrowArray a;
    st = xchg_shuffle_reader_next(r, &a, &err);
    if (st != XCHG_OK || !a.release) break;
    if (n < 64)
      batches[n++] = a;
    else
      a.release(&a);
  }
  fuzz_note_status(st, &err);
  xchg_shuffle_reader_free(r);
  for (int i = 0; i < n; i++) batches[i].release(&batches[i]);
  fuzz_check_no_leak(live, "shuffle blocks");
  return 0;
}
