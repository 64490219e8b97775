/* shapes.h — the data of ../shared/bench/SHAPES.md, generated in memory.
 *
 * Every shape is deterministic from a seed and generated batch by batch
 * (each batch from its own random stream, so any batch can be made alone).
 * The generator also sums up what it made; a benchmark checks what it
 * decoded against those sums with its own code, so that a decoder bug
 * cannot hide behind a code path shared with the generator. */
#ifndef XCHG_GEN_SHAPES_H
#define XCHG_GEN_SHAPES_H

#include <stdint.h>

#include "xchg/arrow_c.h"

/* Shape `cache`: c0 int64 id, c1 int32 in [0,1000), c2 float64 in [0,1)
 * ~5% null, c3 utf8 "item-<k>" k in [0,100000), c4 int64 (any), c5 bool. */
#define SHAPE_CACHE_ROWS 5000000
#define SHAPE_CACHE_BATCH_ROWS 10000
#define SHAPE_CACHE_COLUMNS 6

/* Per-column sums of a shape's values: integers and float bit patterns
 * added with wrap-around, string bytes added up, nulls and trues counted. */
typedef struct shape_sums {
  uint64_t value[SHAPE_CACHE_COLUMNS];
  int64_t nulls[SHAPE_CACHE_COLUMNS];
} shape_sums;

void shape_cache_schema(struct ArrowSchema *out);
int64_t shape_cache_batches(int64_t rows);
/* Batch `index` of a `rows`-row cache shape; adds its values to sums. */
void shape_cache_batch(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                       shape_sums *sums);

/* Shape `broadcast`: a join's build side.  k int64 unique (a random
 * permutation of 0..rows-1), d_long int64 (any), d_str utf8 of 10-30
 * random lowercase letters.  Sums use columns 0, 1, 2 of shape_sums. */
#define SHAPE_BROADCAST_ROWS 1000000
#define SHAPE_BROADCAST_BATCH_ROWS 8192
#define SHAPE_BROADCAST_COLUMNS 3

void shape_broadcast_schema(struct ArrowSchema *out);
int64_t shape_broadcast_batches(int64_t rows);
/* Batch `index` of a `rows`-row broadcast shape; adds its values to sums. */
void shape_broadcast_batch(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                           shape_sums *sums);

#endif
