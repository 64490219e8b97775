/* tests/support/sources.c — see sources.h. */
#include "support/sources.h"

#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"

typedef struct chunked {
  const uint8_t *data;
  size_t size, pos;
  uint64_t rng;
} chunked;

static xchg_status chunked_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  (void)err;
  static const size_t sizes[] = {1, 3, 7, 13, 61, 509, 4093};
  chunked *c = ctx;
  size_t chunk = sizes[tu_splitmix64(&c->rng) % (sizeof sizes / sizeof sizes[0])];
  size_t left = c->size - c->pos;
  *got = n < chunk ? n : chunk;
  if (*got > left) *got = left;
  if (*got) memcpy(dst, c->data + c->pos, *got);
  c->pos += *got;
  return XCHG_OK;
}

static void chunked_close(void *ctx) { free(ctx); }

xchg_source *tu_unseekable_source(const uint8_t *data, size_t size, uint64_t seed) {
  chunked *c = malloc(sizeof *c);
  if (c == NULL) return NULL;
  *c = (chunked){data, size, 0, seed};
  xchg_source *src;
  xchg_error err;
  if (xchg_source_from_callback(chunked_read, chunked_close, c, &src, &err) != XCHG_OK) free(c);
  return src;
}

xchg_source *tu_codec_source(const uint8_t *data, size_t size, xchg_stream_codec codec) {
  xchg_istream *s = NULL;
  xchg_error err;
  xchg_source *src;
  if (xchg_istream_open(tu_unseekable_source(data, size, size), codec, NULL, &s, &err) != XCHG_OK ||
      xchg_source_from_istream(s, &src, &err) != XCHG_OK)
    return NULL;
  return src;
}

xchg_source *tu_memory_source(const void *data, size_t size) {
  xchg_source *src;
  xchg_error err;
  xchg_status st = xchg_source_from_memory(data, size, NULL, NULL, &src, &err);
  TU_CHECK(st == XCHG_OK, "xchg_source_from_memory: %s", err.message);
  return src;
}
