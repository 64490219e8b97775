/* chunks.c — a source over a list of memory chunks (a JVM's heap chunks,
 * a network stack's buffers) that a stream may span without them being
 * joined first. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/source_impl.h"

typedef struct chunks_state {
  xchg_chunk *chunks;
  uint64_t *starts; /* starts[i]: source offset of chunk i; starts[count] = size */
  size_t count;
  size_t cursor; /* the chunk holding src->position (a hint, checked on use) */
  xchg_close_fn release;
  void *release_ctx;
} chunks_state;

/* Index of the chunk that holds offset (count when offset is the end). */
static size_t chunk_of(const chunks_state *st, uint64_t offset) {
  size_t i = st->cursor;
  if (i < st->count && st->starts[i] <= offset && offset < st->starts[i + 1]) return i;
  size_t lo = 0, hi = st->count; /* first chunk whose end is past offset */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (st->starts[mid + 1] <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static xchg_status chunks_read(xchg_source *src, void *dst, size_t n, size_t *got,
                               xchg_error *err) {
  chunks_state *st = src->impl;
  uint64_t pos = src->position;
  size_t i = chunk_of(st, pos), done = 0;
  while (done < n && i < st->count) {
    uint64_t in_chunk = pos - st->starts[i];
    size_t left = st->chunks[i].size - (size_t)in_chunk;
    size_t k = left < n - done ? left : n - done;
    memcpy((uint8_t *)dst + done, (const uint8_t *)st->chunks[i].data + in_chunk, k);
    done += k;
    pos += k;
    if (k == left) i++;
  }
  st->cursor = i;
  *got = done;
  return XCHG_OK;
}

static xchg_status chunks_seek(xchg_source *src, uint64_t offset, xchg_error *err) {
  chunks_state *st = src->impl;
  st->cursor = chunk_of(st, offset);
  return XCHG_OK;
}

static void chunks_close(xchg_source *src) {
  chunks_state *st = src->impl;
  if (st->release != NULL) st->release(st->release_ctx);
  free(st->chunks);
  free(st->starts);
  free(st);
}

static const xchg_source_vtable chunks_vtable = {chunks_read, chunks_seek, chunks_close, NULL};

/* Index of the first chunk of non-zero size with no data, or count. */
static size_t first_chunk_without_data(const xchg_chunk *chunks, size_t count) {
  size_t i = 0;
  while (i < count && (chunks[i].size == 0 || chunks[i].data != NULL)) i++;
  return i;
}

/* Index of the chunk whose size takes the total past INT64_MAX bytes (a
 * source's size is an int64_t, and a sum past UINT64_MAX would wrap into a
 * small, wrong size), or count. */
static size_t first_chunk_past_range(const xchg_chunk *chunks, size_t count) {
  uint64_t total = 0;
  for (size_t i = 0; i < count; i++) {
    if (chunks[i].size > (uint64_t)INT64_MAX - total) return i;
    total += chunks[i].size;
  }
  return count;
}

xchg_status xchg_source_from_chunks(const xchg_chunk *chunks, int64_t n_chunks,
                                    xchg_close_fn release, void *release_ctx, xchg_source **out,
                                    xchg_error *err) {
  static const char who[] = "xchg_source_from_chunks";
  if (out == NULL) return base_null_argument(who, "out", err);
  *out = NULL;
  if (n_chunks < 0)
    return xchg_errorf(err, XCHG_EINVAL, "%s: negative chunk count %lld", who, (long long)n_chunks);
  size_t count = (size_t)n_chunks;
  if (chunks == NULL && count > 0)
    return xchg_errorf(err, XCHG_EINVAL, "%s: chunks is NULL with a count of %zu", who, count);
  size_t bad = first_chunk_without_data(chunks, count);
  if (bad < count)
    return xchg_errorf(err, XCHG_EINVAL, "%s: chunk %zu of %zu has NULL data and %zu bytes", who,
                       bad, count, chunks[bad].size);
  if ((bad = first_chunk_past_range(chunks, count)) < count)
    return xchg_errorf(err, XCHG_EINVAL,
                       "%s: chunk %zu of %zu (%zu bytes) takes the total size "
                       "past INT64_MAX bytes",
                       who, bad, count, chunks[bad].size);
  chunks_state *st = calloc(1, sizeof *st);
  if (st == NULL) return xchg_source_no_memory(err, who);
  /* Empty chunks are dropped so that every chunk holds its start offset. */
  st->chunks = malloc((count ? count : 1) * sizeof *st->chunks);
  st->starts = malloc((count + 1) * sizeof *st->starts);
  xchg_status status;
  if (st->chunks == NULL || st->starts == NULL) {
    status = xchg_source_no_memory(err, who);
  } else {
    uint64_t size = 0;
    for (size_t i = 0; i < count; i++) {
      if (chunks[i].size == 0) continue;
      st->starts[st->count] = size;
      st->chunks[st->count++] = chunks[i];
      size += chunks[i].size;
    }
    st->starts[st->count] = size;
    st->release = release;
    st->release_ctx = release_ctx;
    status = xchg_source_create(&chunks_vtable, st, (int64_t)size, NULL, who, out, err);
    if (status == XCHG_OK) return XCHG_OK;
  }
  free(st->chunks);
  free(st->starts);
  free(st);
  return status;
}
