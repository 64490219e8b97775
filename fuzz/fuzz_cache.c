/* fuzz/fuzz_cache.c — the shared decode cache fed by a fuzzed broadcast.
 *
 * The input is one broadcast part, given to the cache two ways: as three
 * memory chunks (a JVM's heap chunks) with its codec detected, and through
 * open_part as a callback source that hands out a few bytes per read.  On
 * the first key, a narrow acquirer (column 0) is followed by a wide one
 * (every column), so that the lazy per-column decode adds the missing
 * columns to an entry already held.  Everything handed out is read and
 * released; with the cache destroyed, no buffer may be left.  The cache
 * decodes under the fuzz targets' lowered caps (fuzz_read_options). */
#include <string.h>

#include "fuzz_common.h"
#include "xchg/cache.h"

typedef struct trickle {
  const uint8_t *data;
  size_t size, pos;
} trickle;

static xchg_status read_trickle(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  trickle *t = ctx;
  size_t left = t->size - t->pos, step = n < 13 ? n : 13;
  *got = step < left ? step : left;
  memcpy(dst, t->data + t->pos, *got);
  t->pos += *got;
  return XCHG_OK;
}

static xchg_status open_trickle(void *ctx, int64_t part, xchg_source **out, xchg_error *err) {
  trickle *t = ctx;
  t->pos = 0;
  return xchg_source_from_callback(read_trickle, NULL, t, out, err);
}

/* Acquires key with the given columns and reads every batch. */
static void acquire_and_read(xchg_cache *cache, const char *key, const xchg_broadcast *b,
                             const int64_t *columns, int64_t n_columns, xchg_cache_holder **keep) {
  xchg_error err = {""};
  xchg_cache_holder *h = NULL;
  xchg_cache_request req;
  xchg_cache_request_init(&req);
  req.columns = columns;
  req.n_columns = n_columns;
  xchg_status st = xchg_cache_acquire(cache, key, b, &req, &h, &err);
  if (st == XCHG_OK) {
    struct ArrowSchema schema;
    st = xchg_cache_holder_schema(h, &schema, &err);
    if (st == XCHG_OK) schema.release(&schema);
    (void)xchg_cache_holder_num_rows(h);
    for (int64_t i = 0; st == XCHG_OK && i < xchg_cache_holder_num_batches(h); i++) {
      struct ArrowArray a;
      st = xchg_cache_holder_batch(h, i, &a, &err);
      if (st == XCHG_OK) a.release(&a);
    }
  }
  fuzz_note_status(st, &err);
  if (keep != NULL && st == XCHG_OK)
    *keep = h;
  else
    xchg_cache_holder_release(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = xchg_buf_live_count();
  xchg_cache_options opts;
  xchg_cache_options_init(&opts);
  fuzz_read_options(&opts.read);
  xchg_cache *cache;
  if (xchg_cache_create(&opts, &cache, NULL) != XCHG_OK) return 0;

  size_t third = size / 3;
  xchg_chunk chunks[3] = {
      {data, third}, {data + third, third}, {data + 2 * third, size - 2 * third}};
  xchg_broadcast_part part = {chunks, 3, XCHG_STREAM_AUTO};
  xchg_broadcast in_chunks = {&part, 1, NULL, NULL};
  const int64_t first_column = 0;
  xchg_cache_holder *narrow = NULL;
  acquire_and_read(cache, "chunks", &in_chunks, &first_column, 1, &narrow);
  acquire_and_read(cache, "chunks", &in_chunks, NULL, 0, NULL);
  xchg_cache_holder_release(narrow);

  trickle t = {data, size, 0};
  xchg_broadcast_part plain = {NULL, 0, XCHG_STREAM_AUTO};
  xchg_broadcast trickled = {&plain, 1, open_trickle, &t};
  acquire_and_read(cache, "trickle", &trickled, NULL, 0, NULL);

  xchg_cache_free(cache);
  fuzz_check_no_leak(live, "cache");
  return 0;
}
