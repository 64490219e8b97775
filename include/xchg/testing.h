/** \file
 * xchg/testing.h — hooks for tests, benchmarks and tools such as `xchg gen`:
 * fault injection, counters that prove what was (not) decompressed, and
 * encoders for the stream formats the library reads.
 *
 * Not the reading API: an engine has no need of these, and they may change
 * in any release (CHANGES.md says when).  They are exported like the rest,
 * so that a test can link the shared library too.  Not included by
 * xchg/xchg.h. */
#ifndef XCHG_TESTING_H
#define XCHG_TESTING_H

#include "xchg/buf.h"
#include "xchg/codec.h"
#include "xchg/export.h"
#include "xchg/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Fault injection and counters --------------------------------------- */

/** Allocation-failure injection: when n > 0, the n-th buffer allocation
 * from now (1 = the next) fails; 0 disables.  Process-wide. */
XCHG_API void xchg_buf_fail_nth_alloc(int64_t n);

/** Number of xchg_block_decompress calls made so far in this process: lets
 * tests prove what was (not) decompressed. */
XCHG_API int64_t xchg_block_decompress_calls(void);
/** The bytes those calls produced. */
XCHG_API int64_t xchg_block_decompressed_bytes(void);

/* ---- Encoding the stream formats ---------------------------------------- */

/** How xchg_stream_encode encodes.  Fill it with
 * xchg_stream_encode_options_init, then set what differs. */
typedef struct xchg_stream_encode_options {
  int level; /**< compression level, 0 = the codec's default */
  /** lz4-java / snappy-java block size and LZ4 frame block size (64 KiB,
   * 256 KiB, 1 MiB or 4 MiB for frames).  Default 32 KiB, as Spark. */
  size_t block_size;
  int checksum; /**< LZ4 frame / zstd content checksum: non-zero = on (default 1) */
  /** XCHG_STREAM_COMET only: the codec inside the block (NONE, LZ4_FRAME,
   * ZSTD or SNAPPY_FRAMED) and the field count written in its header. */
  xchg_stream_codec comet_inner;
  int64_t comet_field_count; /**< written as the header's u64; negative is XCHG_EINVAL */
} xchg_stream_encode_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are). */
XCHG_API void xchg_stream_encode_options_init(xchg_stream_encode_options *opts);

/** Encodes src as one complete stream of codec (one Comet block for
 * XCHG_STREAM_COMET) into a new buffer; appending several outputs gives a
 * concatenated stream every decoder here accepts.  opts may be NULL; a NULL
 * out is XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_stream_encode(xchg_stream_codec codec,
                                                       const xchg_stream_encode_options *opts,
                                                       const void *src, size_t size, xchg_buf **out,
                                                       xchg_error *err);

#ifdef __cplusplus
}
#endif
#endif
