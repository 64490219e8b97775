/* shapes_gen.c — see shapes_gen.h. */
#include <stdio.h>
#include <stdlib.h>
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

static void *must_alloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory generating data\n");
    exit(1);
  }
  return p;
}

/* ---- broadcast ------------------------------------------------------------------ */

/* A bijection of [0, n): a 4-round Feistel network on the smallest even
 * number of bits covering n, walked until the result falls below n. */
typedef struct permutation {
  uint64_t n, half_mask;
  int half_bits;
  uint64_t keys[4];
} permutation;

static permutation permutation_make(uint64_t seed, uint64_t n) {
  permutation p = {n, 0, 1, {0}};
  while (((uint64_t)1 << (2 * p.half_bits)) < n) p.half_bits++;
  p.half_mask = ((uint64_t)1 << p.half_bits) - 1;
  uint64_t s = seed ^ 0x5bd1e995u;
  for (int i = 0; i < 4; i++) p.keys[i] = splitmix(&s);
  return p;
}

static uint64_t permute(const permutation *p, uint64_t x) {
  do {
    uint64_t l = x >> p->half_bits, r = x & p->half_mask;
    for (int i = 0; i < 4; i++) {
      uint64_t s = r ^ p->keys[i];
      uint64_t f = splitmix(&s) & p->half_mask;
      uint64_t t = l ^ f;
      l = r;
      r = t;
    }
    x = (l << p->half_bits) | r;
  } while (x >= p->n);
  return x;
}

typedef struct owned {
  void *buffers[3];
  struct ArrowArray *children[3];
  struct ArrowArray child_structs[3];
} owned;

static void release_owned(struct ArrowArray *a) {
  owned *o = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
  for (int i = 0; i < 3; i++) free(o->buffers[i]);
  free(o);
  a->release = NULL;
}

static owned *init_array(struct ArrowArray *a, int64_t rows, void *b1, void *b2, int n_buffers) {
  owned *o = must_alloc(sizeof *o);
  o->buffers[1] = b1, o->buffers[2] = b2;
  memset(a, 0, sizeof *a);
  a->length = rows;
  a->n_buffers = n_buffers;
  a->buffers = (const void **)o->buffers;
  a->private_data = o;
  a->release = release_owned;
  return o;
}

static void release_schema(struct ArrowSchema *s) {
  free(s->private_data);
  free(s->children);
  s->release = NULL;
}

static void release_leaf(struct ArrowSchema *s) { s->release = NULL; }

void shape_broadcast_schema(struct ArrowSchema *out) {
  static const char *names[] = {"k", "d_long", "d_str"};
  static const char *formats[] = {"l", "l", "u"};
  struct ArrowSchema *kids = must_alloc(3 * sizeof *kids);
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = 3;
  out->children = must_alloc(3 * sizeof *out->children);
  for (int i = 0; i < 3; i++) {
    kids[i] = (struct ArrowSchema){formats[i], names[i], NULL, i == 0 ? 0 : ARROW_FLAG_NULLABLE, 0,
                                   NULL, NULL, release_leaf, NULL};
    out->children[i] = &kids[i];
  }
  out->private_data = kids;
  out->release = release_schema;
}

int64_t shape_broadcast_batches(int64_t rows) {
  return (rows + SHAPE_BROADCAST_BATCH_ROWS - 1) / SHAPE_BROADCAST_BATCH_ROWS;
}

void shape_broadcast_batch(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                           shape_sums *sums) {
  int64_t first = index * SHAPE_BROADCAST_BATCH_ROWS;
  int64_t n = rows - first < SHAPE_BROADCAST_BATCH_ROWS ? rows - first : SHAPE_BROADCAST_BATCH_ROWS;
  permutation perm = permutation_make(seed, (uint64_t)rows);
  uint64_t rng = stream_for(seed, 2, (uint64_t)index);
  int64_t *k = must_alloc((size_t)n * 8), *d = must_alloc((size_t)n * 8);
  int32_t *offsets = must_alloc((size_t)(n + 1) * 4);
  char *chars = must_alloc((size_t)n * 30);
  int32_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    k[i] = (int64_t)permute(&perm, (uint64_t)(first + i));
    d[i] = (int64_t)splitmix(&rng);
    uint64_t r = splitmix(&rng);
    int len = 10 + (int)(r % 21);
    for (int j = 0; j < len; j++) {
      if (j % 8 == 0) r = splitmix(&rng);
      chars[at + j] = (char)('a' + (r & 0xff) % 26);
      r >>= 8;
      sums->value[2] += (uint8_t)chars[at + j];
    }
    at += len;
    offsets[i + 1] = at;
    sums->value[0] += (uint64_t)k[i];
    sums->value[1] += (uint64_t)d[i];
  }
  owned *o = init_array(out, n, NULL, NULL, 1);
  out->n_children = 3;
  out->children = o->children;
  for (int c = 0; c < 3; c++) o->children[c] = &o->child_structs[c];
  init_array(&o->child_structs[0], n, k, NULL, 2);
  init_array(&o->child_structs[1], n, d, NULL, 2);
  init_array(&o->child_structs[2], n, offsets, chars, 3);
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
