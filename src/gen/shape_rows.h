/* shape_rows.h — shape `rows` of ../shared/bench/SHAPES.md as `xchg gen`
 * writes it, deterministic from a seed, with the sum a reader of the data
 * must find (shapes `cache` and `broadcast` are in gen/shapes.h).
 *
 * Like shapes.h, each row comes from its own random stream, so any part of
 * the stream can be made alone and the whole is the same however it is
 * cut.  The sum adds the payload bytes up as unsigned bytes. */
#ifndef XCHG_GEN_SHAPE_ROWS_H
#define XCHG_GEN_SHAPE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/stream.h"

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

/* The compressed row stream, as `xchg gen rows` writes it and `xchg bench
 * rows` reads it: every SHAPE_ROWS_CHUNK bytes of rows (a row may run on
 * into the next chunk) become one frame of codec at level (0: the codec's
 * default), without content checksums, as Gluten writes its frames;
 * XCHG_STREAM_NONE passes the rows as they are.  Each frame goes to write
 * in order, with the chunk's index and the number of chunks, so that a
 * caller can show progress. */
typedef xchg_status (*shape_rows_write_fn)(void *ctx, const void *data, size_t n, int64_t chunk,
                                           int64_t chunks, xchg_error *err);
xchg_status shape_rows_encode(uint64_t seed, int64_t rows, xchg_stream_codec codec, int level,
                              shape_rows_write_fn write, void *ctx, xchg_error *err);

#endif
