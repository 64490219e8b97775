/* shapes_gen.h — shapes `broadcast` and `rows` of ../shared/bench/SHAPES.md,
 * generated deterministically from a seed, with the sums a reader of the
 * data must find (shape `cache` is in shapes.h).
 *
 * Like shapes.h, each batch (or 64 KiB chunk) comes from its own random
 * stream, so any part can be made alone and the whole is the same however
 * it is cut.  Sums: integers added with wrap-around, string and payload
 * bytes added up as unsigned bytes. */
#ifndef XCHG_BENCH_SHAPES_GEN_H
#define XCHG_BENCH_SHAPES_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "shapes.h"
#include "xchg/arrow_c.h"

/* Shape `broadcast`: k int64 unique (a permutation of 0..rows-1, by a
 * seeded Feistel bijection), d_long int64 random, d_str utf8 of 10 to 30
 * random lowercase letters.  Sums in value[0..2]. */
#define SHAPE_BROADCAST_ROWS 1000000
#define SHAPE_BROADCAST_BATCH_ROWS 8192

void shape_broadcast_schema(struct ArrowSchema *out);
int64_t shape_broadcast_batches(int64_t rows);
/* Batch `index` of a `rows`-row broadcast shape; adds its values to sums. */
void shape_broadcast_batch(uint64_t seed, int64_t rows, int64_t index, struct ArrowArray *out,
                           shape_sums *sums);

/* Shape `rows`: rows of a 4-byte little-endian length (100) and a 100-byte
 * payload of lowercase letters, cut into chunks of SHAPE_ROWS_CHUNK bytes
 * (the last may be shorter). */
#define SHAPE_ROWS_ROWS 10000000
#define SHAPE_ROWS_PAYLOAD 100
#define SHAPE_ROWS_CHUNK (64 * 1024)

/* Bytes of the uncompressed row stream. */
uint64_t shape_rows_bytes(int64_t rows);
/* Fills dst with bytes [offset, offset+n) of the row stream. */
void shape_rows_fill(uint64_t seed, int64_t rows, uint64_t offset, uint8_t *dst, size_t n);
/* Sum of every payload byte (the length prefixes excluded) of all rows. */
uint64_t shape_rows_payload_sum(uint64_t seed, int64_t rows);

#endif
