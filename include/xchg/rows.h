/** \file
 * xchg/rows.h — length-prefixed rows pulled out of a compressed stream.
 *
 * Gluten's sort shuffle writes rows as a u32 little-endian length followed
 * by that many payload bytes, and compresses the sequence as LZ4 or zstd
 * frames.  An xchg_row_reader hands those rows out of an xchg_istream
 * without copying them: a row that lies inside one decompressed window is
 * returned as a pointer into that window; only a row that spans two windows
 * is assembled in a scratch buffer the reader reuses.
 *
 * Threads: a row reader is used by one thread at a time.
 */
#ifndef XCHG_ROWS_H
#define XCHG_ROWS_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/error.h"
#include "xchg/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A reader of length-prefixed rows over an xchg_istream. */
typedef struct xchg_row_reader xchg_row_reader;

/** Options of a row reader. */
typedef struct xchg_row_reader_options {
  /** A row longer than this many bytes is an XCHG_ELIMIT error (a hostile
   * length must not make the reader allocate gigabytes for a row that
   * spans windows).  Default 256 MiB; 0 means the default. */
  size_t max_row_size;
} xchg_row_reader_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are). */
XCHG_API void xchg_row_reader_options_init(xchg_row_reader_options *opts);

/** Opens a row reader on s, which it takes over (closed with the reader, or
 * at once if opening fails).  opts may be NULL for the defaults.  A NULL s
 * or out is XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_row_reader_open(xchg_istream *s,
                                                         const xchg_row_reader_options *opts,
                                                         xchg_row_reader **out, xchg_error *err);

/** The next row: *row points at its *len payload bytes and stays valid until
 * the next call on the reader.  At the end of the stream *row is NULL (an
 * empty row has a non-NULL *row and *len 0).  A stream that ends inside a
 * row is an XCHG_EIO error naming the row and byte offset.  A NULL
 * argument is XCHG_EINVAL naming it (here and in
 * xchg_row_reader_next_batch), the reader left as it was. */
XCHG_API XCHG_NODISCARD xchg_status xchg_row_reader_next(xchg_row_reader *r, const uint8_t **row,
                                                         size_t *len, xchg_error *err);

/** Up to max rows at once into rows[] and lens[]; *count = 0 at the end.
 * All the pointers stay valid until the next call on the reader.  A batch
 * ends early where taking one more row would need a new window while the
 * batch still points into the current one.  max < 1 is XCHG_EINVAL (a
 * count of 0 would read as the end). */
XCHG_API XCHG_NODISCARD xchg_status xchg_row_reader_next_batch(xchg_row_reader *r, int64_t max,
                                                               const uint8_t **rows, size_t *lens,
                                                               int64_t *count, xchg_error *err);

/** Rows returned so far (0 for NULL). */
XCHG_API int64_t xchg_row_reader_rows(const xchg_row_reader *r);
/** Of the rows returned so far, those that had to be copied (they spanned
 * windows; 0 for NULL). */
XCHG_API int64_t xchg_row_reader_copied_rows(const xchg_row_reader *r);

/** The underlying stream, e.g. for xchg_istream_get_metrics (NULL for
 * NULL). */
XCHG_API const xchg_istream *xchg_row_reader_stream(const xchg_row_reader *r);

/** Closes the reader and its stream (NULL is a no-op). */
XCHG_API void xchg_row_reader_free(xchg_row_reader *r);

#ifdef __cplusplus
}
#endif
#endif
