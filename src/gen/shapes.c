/* shapes.c — see shapes.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/shapes.h"

/* ---- random numbers: splitmix64, one stream per batch ------------------- */

static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t batch_stream(uint64_t seed, int64_t index) {
  uint64_t s = seed ^ ((uint64_t)index * 0xd1b54a32d192ed03ull);
  return next_random(&s);
}

/* ---- arrays that own malloc'd buffers -------------------------------------- */

typedef struct owned {
  void *buffers[3];
  struct ArrowArray *children[SHAPE_CACHE_COLUMNS];
  struct ArrowArray child_structs[SHAPE_CACHE_COLUMNS];
} owned;

static void release_owned(struct ArrowArray *a) {
  owned *o = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
  for (int i = 0; i < 3; i++) free(o->buffers[i]);
  free(o);
  a->release = NULL;
}

static void *must_alloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory generating data\n");
    exit(1);
  }
  return p;
}

/* A flat array of length rows with up to three buffers (NULL = absent). */
static void init_array(struct ArrowArray *a, int64_t rows, int64_t nulls, void *b0, void *b1,
                       void *b2, int n_buffers) {
  owned *o = must_alloc(sizeof *o);
  o->buffers[0] = b0, o->buffers[1] = b1, o->buffers[2] = b2;
  memset(a, 0, sizeof *a);
  a->length = rows;
  a->null_count = nulls;
  a->n_buffers = n_buffers;
  a->buffers = (const void **)o->buffers;
  a->private_data = o;
  a->release = release_owned;
}

/* ---- shape `cache` ------------------------------------------------------------ */

static void release_schema(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++) s->children[i]->release(s->children[i]);
  free(s->children);
  free(s->private_data);
  s->release = NULL;
}

static void release_leaf(struct ArrowSchema *s) { s->release = NULL; }

/* A struct schema of n nullable leaf columns. */
static void struct_schema(struct ArrowSchema *out, int n, const char *const *names,
                          const char *const *formats) {
  struct ArrowSchema *kids = must_alloc((size_t)n * sizeof *kids);
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = n;
  out->children = must_alloc((size_t)n * sizeof *out->children);
  for (int i = 0; i < n; i++) {
    kids[i] = (struct ArrowSchema){formats[i], names[i],     NULL, ARROW_FLAG_NULLABLE, 0, NULL,
                                   NULL,       release_leaf, NULL};
    out->children[i] = &kids[i];
  }
  out->private_data = kids;
  out->release = release_schema;
}

void shape_cache_schema(struct ArrowSchema *out) {
  static const char *const names[] = {"c0", "c1", "c2", "c3", "c4", "c5"};
  static const char *const formats[] = {"l", "i", "g", "u", "l", "b"};
  struct_schema(out, SHAPE_CACHE_COLUMNS, names, formats);
}

int64_t shape_cache_batches(int64_t rows) {
  return (rows + SHAPE_CACHE_BATCH_ROWS - 1) / SHAPE_CACHE_BATCH_ROWS;
}

static void set_bit(uint8_t *bits, int64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

static void cache_ints(struct ArrowArray *c0, struct ArrowArray *c1, struct ArrowArray *c4,
                       int64_t first, int64_t n, uint64_t *rng, shape_sums *sums) {
  int64_t *ids = must_alloc((size_t)n * 8), *any = must_alloc((size_t)n * 8);
  int32_t *small = must_alloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) {
    ids[i] = first + i;
    small[i] = (int32_t)(next_random(rng) % 1000);
    any[i] = (int64_t)next_random(rng);
    sums->value[0] += (uint64_t)ids[i];
    sums->value[1] += (uint64_t)small[i];
    sums->value[4] += (uint64_t)any[i];
  }
  init_array(c0, n, 0, NULL, ids, NULL, 2);
  init_array(c1, n, 0, NULL, small, NULL, 2);
  init_array(c4, n, 0, NULL, any, NULL, 2);
}

static void cache_doubles(struct ArrowArray *c2, int64_t n, uint64_t *rng, shape_sums *sums) {
  uint8_t *valid = must_alloc((size_t)(n + 7) / 8);
  double *values = must_alloc((size_t)n * 8);
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_random(rng);
    values[i] = (double)(r >> 11) / 9007199254740992.0;
    if (r % 20 == 0) { /* ~5% null */
      nulls++;
      continue;
    }
    set_bit(valid, i);
    uint64_t bits;
    memcpy(&bits, &values[i], 8);
    sums->value[2] += bits;
  }
  sums->nulls[2] += nulls;
  init_array(c2, n, nulls, valid, values, NULL, 2);
}

static void cache_strings(struct ArrowArray *c3, int64_t n, uint64_t *rng, shape_sums *sums) {
  int32_t *offsets = must_alloc((size_t)(n + 1) * 4);
  char *data = must_alloc((size_t)n * 11);
  int32_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    int len = sprintf(data + at, "item-%d", (int)(next_random(rng) % 100000));
    for (int k = 0; k < len; k++) sums->value[3] += (uint8_t)data[at + k];
    at += len;
    offsets[i + 1] = at;
  }
  init_array(c3, n, 0, NULL, offsets, data, 3);
}

static void cache_bools(struct ArrowArray *c5, int64_t n, uint64_t *rng, shape_sums *sums) {
  uint8_t *bits = must_alloc((size_t)(n + 7) / 8);
  for (int64_t i = 0; i < n; i++)
    if (next_random(rng) & 1) {
      set_bit(bits, i);
      sums->value[5]++;
    }
  init_array(c5, n, 0, NULL, bits, NULL, 2);
}

/* Batch `index` of a shape cut into batches of batch_rows rows: its rows
 * [first, first + n), its random stream, and the struct array of n rows
 * whose children (o->children) the caller fills. */
typedef struct batch_start {
  int64_t first, n;
  uint64_t rng;
  owned *o;
} batch_start;

static batch_start struct_batch(uint64_t seed, int64_t rows, int64_t index, int64_t batch_rows,
                                int n_children, struct ArrowArray *out) {
  batch_start b = {.first = index * batch_rows, .rng = batch_stream(seed, index)};
  b.n = rows - b.first < batch_rows ? rows - b.first : batch_rows;
  init_array(out, b.n, 0, NULL, NULL, NULL, 1);
  b.o = out->private_data;
  for (int i = 0; i < n_children; i++) b.o->children[i] = &b.o->child_structs[i];
  out->n_children = n_children;
  out->children = b.o->children;
  return b;
}

void shape_cache_batch(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                       shape_sums *sums) {
  batch_start b = struct_batch(seed, rows, index, SHAPE_CACHE_BATCH_ROWS, SHAPE_CACHE_COLUMNS, out);
  struct ArrowArray **c = b.o->children;
  cache_ints(c[0], c[1], c[4], b.first, b.n, &b.rng, sums);
  cache_doubles(c[2], b.n, &b.rng, sums);
  cache_strings(c[3], b.n, &b.rng, sums);
  cache_bools(c[5], b.n, &b.rng, sums);
}

/* ---- shape `broadcast` --------------------------------------------------------- */

void shape_broadcast_schema(struct ArrowSchema *out) {
  static const char *const names[] = {"k", "d_long", "d_str"};
  static const char *const formats[] = {"l", "l", "u"};
  struct_schema(out, SHAPE_BROADCAST_COLUMNS, names, formats);
}

int64_t shape_broadcast_batches(int64_t rows) {
  return (rows + SHAPE_BROADCAST_BATCH_ROWS - 1) / SHAPE_BROADCAST_BATCH_ROWS;
}

/* A pseudo-random permutation of [0, n) computable at any index: a
 * four-round Feistel network over the smallest even power of two >= n,
 * walking the cycle until the value falls inside [0, n). */
static uint64_t permute(uint64_t seed, uint64_t i, uint64_t n) {
  int half = 1;
  while ((1ull << (2 * half)) < n) half++;
  uint64_t mask = (1ull << half) - 1;
  do {
    uint64_t l = i >> half, r = i & mask;
    for (uint64_t round = 0; round < 4; round++) {
      uint64_t s = seed ^ (r * 0x9e3779b97f4a7c15ull) ^ round;
      uint64_t f = next_random(&s) & mask;
      uint64_t t = r;
      r = l ^ f;
      l = t;
    }
    i = (l << half) | r;
  } while (i >= n);
  return i;
}

void shape_broadcast_batch(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                           shape_sums *sums) {
  batch_start b =
      struct_batch(seed, rows, index, SHAPE_BROADCAST_BATCH_ROWS, SHAPE_BROADCAST_COLUMNS, out);
  int64_t first = b.first, n = b.n;
  uint64_t rng = b.rng;
  owned *o = b.o;
  int64_t *k = must_alloc((size_t)n * 8), *d = must_alloc((size_t)n * 8);
  int32_t *offsets = must_alloc((size_t)(n + 1) * 4);
  char *chars = must_alloc((size_t)n * 30);
  int32_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    k[i] = (int64_t)permute(seed, (uint64_t)(first + i), (uint64_t)rows);
    d[i] = (int64_t)next_random(&rng);
    int len = 10 + (int)(next_random(&rng) % 21);
    for (int c = 0; c < len; c++) {
      chars[at + c] = (char)('a' + next_random(&rng) % 26);
      sums->value[2] += (uint8_t)chars[at + c];
    }
    at += len;
    offsets[i + 1] = at;
    sums->value[0] += (uint64_t)k[i];
    sums->value[1] += (uint64_t)d[i];
  }
  init_array(o->children[0], n, 0, NULL, k, NULL, 2);
  init_array(o->children[1], n, 0, NULL, d, NULL, 2);
  init_array(o->children[2], n, 0, NULL, offsets, chars, 3);
}
