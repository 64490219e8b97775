/* shape_rows.c — see shape_rows.h. */
#include <stdlib.h>
#include <string.h>

#include "gen/shape_rows.h"
#include "xchg/testing.h"

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A random stream of its own for part `index` (batch, row) of a shape. */
static uint64_t stream_for(uint64_t seed, uint64_t salt, uint64_t index) {
  uint64_t s = seed ^ (salt * 0x9e3779b97f4a7c15ull) ^ (index * 0xd1b54a32d192ed03ull);
  return splitmix(&s);
}

/* ---- rows ----------------------------------------------------------------------- */

#define ROW_BYTES (4 + SHAPE_ROWS_PAYLOAD)

uint64_t shape_rows_bytes(int64_t rows) { return (uint64_t)rows * ROW_BYTES; }

static void make_row(uint64_t seed, int64_t row, uint8_t out[ROW_BYTES]) {
  uint32_t len = SHAPE_ROWS_PAYLOAD;
  for (int i = 0; i < 4; i++) out[i] = (uint8_t)(len >> (8 * i));
  uint64_t rng = stream_for(seed, 3, (uint64_t)row), r = 0;
  for (int j = 0; j < SHAPE_ROWS_PAYLOAD; j++) {
    if (j % 8 == 0) r = splitmix(&rng);
    out[4 + j] = (uint8_t)('a' + (r & 0xff) % 26);
    r >>= 8;
  }
}

void shape_rows_fill(uint64_t seed, int64_t rows, uint64_t offset, uint8_t *dst, size_t n) {
  uint8_t row[ROW_BYTES];
  uint64_t end = offset + n, total = shape_rows_bytes(rows);
  if (end > total) end = total;
  while (offset < end) {
    int64_t r = (int64_t)(offset / ROW_BYTES);
    size_t within = (size_t)(offset % ROW_BYTES);
    size_t take = ROW_BYTES - within;
    if (take > end - offset) take = (size_t)(end - offset);
    make_row(seed, r, row);
    memcpy(dst, row + within, take);
    dst += take;
    offset += take;
  }
}

uint64_t shape_rows_payload_sum(uint64_t seed, int64_t rows) {
  uint8_t row[ROW_BYTES];
  uint64_t sum = 0;
  for (int64_t r = 0; r < rows; r++) {
    make_row(seed, r, row);
    for (int j = 4; j < ROW_BYTES; j++) sum += row[j];
  }
  return sum;
}

xchg_status shape_rows_encode(uint64_t seed, int64_t rows, xchg_stream_codec codec, int level,
                              shape_rows_write_fn write, void *ctx, xchg_error *err) {
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.level = level;
  eo.checksum = 0;
  uint64_t total = shape_rows_bytes(rows);
  int64_t chunks = (int64_t)((total + SHAPE_ROWS_CHUNK - 1) / SHAPE_ROWS_CHUNK);
  uint8_t *chunk = malloc(SHAPE_ROWS_CHUNK);
  if (!chunk) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_status st = XCHG_OK;
  for (int64_t index = 0; index < chunks && st == XCHG_OK; index++) {
    uint64_t at = (uint64_t)index * SHAPE_ROWS_CHUNK;
    size_t n = total - at < SHAPE_ROWS_CHUNK ? (size_t)(total - at) : SHAPE_ROWS_CHUNK;
    shape_rows_fill(seed, rows, at, chunk, n);
    if (codec == XCHG_STREAM_NONE) {
      st = write(ctx, chunk, n, index, chunks, err);
      continue;
    }
    xchg_buf *frame = NULL;
    st = xchg_stream_encode(codec, &eo, chunk, n, &frame, err);
    if (st == XCHG_OK)
      st = write(ctx, xchg_buf_data(frame), xchg_buf_size(frame), index, chunks, err);
    xchg_buf_unref(frame);
  }
  free(chunk);
  return st;
}
