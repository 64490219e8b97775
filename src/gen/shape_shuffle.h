/* shape_shuffle.h — shape `shuffle` of ../shared/bench/SHAPES.md: a reduce
 * task's input, many small shuffle blocks, each its own Arrow IPC stream
 * (schema, one record batch, end-of-stream), concatenated with nothing
 * between, as `xchg gen shuffle` writes it and `xchg bench shuffle` reads
 * it.
 *
 * Columns c0, c1, ... cycle over: int64 key (the row number: unique,
 * increasing), int64 random, float64 uniform in [0,1) ~5% null, utf8
 * "item-<k>" with k uniform in [0,100000), int32 uniform in [0,1000).
 * Every value comes from its own random stream (seed, row, column), so the
 * data is the same however it is cut into blocks: the sums do not depend
 * on the block size, only on seed, rows and columns.
 *
 * Two framings of a block:
 *   ipc    the IPC stream as it is, its body compressed by the codec (none,
 *          LZ4_FRAME, ZSTD level 1), as an IPC-stream shuffle writer does;
 *   comet  Comet's native shuffle block: u64le length (of what follows it),
 *          u64le field count, codec tag NONE/LZ4_/ZSTD/SNAP, then the whole
 *          uncompressed IPC stream compressed by that codec (LZ4 frame and
 *          zstd level 1 without content checksums, the snappy framing
 *          format), as Comet writes it. */
#ifndef XCHG_GEN_SHAPE_SHUFFLE_H
#define XCHG_GEN_SHAPE_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"
#include "xchg/error.h"

#define SHAPE_SHUFFLE_ROWS 262144
#define SHAPE_SHUFFLE_MAX_COLUMNS 256

typedef enum shape_shuffle_framing {
  SHAPE_SHUFFLE_IPC = 0,
  SHAPE_SHUFFLE_COMET = 1
} shape_shuffle_framing;

typedef enum shape_shuffle_codec {
  SHAPE_SHUFFLE_NONE = 0,
  SHAPE_SHUFFLE_LZ4 = 1,
  SHAPE_SHUFFLE_ZSTD = 2,
  SHAPE_SHUFFLE_SNAPPY = 3 /* comet framing only: IPC body compression has no snappy */
} shape_shuffle_codec;

/* "ipc", "comet"; "none", "lz4", "zstd", "snappy".  The parsers return -1
 * for an unknown name. */
const char *shape_shuffle_framing_name(shape_shuffle_framing f);
const char *shape_shuffle_codec_name(shape_shuffle_codec c);
int shape_shuffle_parse_framing(const char *name, shape_shuffle_framing *out);
int shape_shuffle_parse_codec(const char *name, shape_shuffle_codec *out);

typedef struct shape_shuffle_config {
  uint64_t seed;
  int64_t rows;       /* SHAPE_SHUFFLE_ROWS */
  int64_t block_rows; /* R: 64, 512, 8192; the last block may be shorter */
  int columns;        /* C: 5 or 50, at most SHAPE_SHUFFLE_MAX_COLUMNS */
  shape_shuffle_framing framing;
  shape_shuffle_codec codec;
} shape_shuffle_config;

/* What a reader of the shape must find: per column the values added with
 * wrap-around (int32 sign-extended, float64 bit patterns of the non-null
 * values, utf8 bytes as unsigned), and the nulls. */
typedef struct shape_shuffle_sums {
  uint64_t value[SHAPE_SHUFFLE_MAX_COLUMNS];
  int64_t nulls[SHAPE_SHUFFLE_MAX_COLUMNS];
} shape_shuffle_sums;

int64_t shape_shuffle_blocks(const shape_shuffle_config *c);

/* Every block in order, each handed to write with its index and the number
 * of blocks; sums (may be NULL) get the values generated.  XCHG_EINVAL for
 * a configuration out of range (snappy in the ipc framing, no columns...),
 * naming it; a failing write stops the encoding and its status is
 * returned. */
typedef xchg_status (*shape_shuffle_write_fn)(void *ctx, const void *data, size_t n, int64_t block,
                                              int64_t blocks, xchg_error *err);
xchg_status shape_shuffle_encode(const shape_shuffle_config *c, shape_shuffle_write_fn write,
                                 void *ctx, shape_shuffle_sums *sums, xchg_error *err);

#endif
