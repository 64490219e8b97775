/* shapes_gen.h — shape `rows` of ../shared/bench/SHAPES.md as `xchg gen`
 * writes it, deterministic from a seed, with the sum a reader of the data
 * must find (shapes `cache` and `broadcast` are in shapes.h).
 *
 * Like shapes.h, each row comes from its own random stream, so any part of
 * the stream can be made alone and the whole is the same however it is
 * cut.  The sum adds the payload bytes up as unsigned bytes. */
#ifndef XCHG_BENCH_SHAPES_GEN_H
#define XCHG_BENCH_SHAPES_GEN_H

#include <stddef.h>
#include <stdint.h>

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
