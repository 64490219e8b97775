/* shapes_gen.c — see shapes_gen.h. */
#include <string.h>

#include "shapes_gen.h"

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
