/** \file
 * xchg/writer.h — writing the Arrow IPC stream and file formats.
 *
 * An xchg_ipc_writer turns Arrow C Data Interface batches into Arrow IPC:
 * the stream format (schema, dictionary and record batch messages, an
 * end-of-stream marker) or the file format ("ARROW1", the same messages, a
 * footer listing them).  Metadata version V5, continuation-marker framing,
 * metadata and buffers 8-byte aligned (64 on request).
 *
 *   - Every type the reader supports, dictionary encoding included (nested
 *     dictionaries, shared ids), with field, schema and message metadata.
 *   - Sliced input (a non-zero ArrowArray.offset, at any level) is
 *     normalised: bitmaps shifted, offsets rebased to start at 0, child
 *     ranges cut to what the slice uses.
 *   - Body compression LZ4_FRAME or ZSTD: each buffer is compressed on its
 *     own; one that does not shrink by `min_space_saving` is stored raw
 *     behind the -1 length prefix; empty buffers are written empty.  With a
 *     pool, the buffers of a batch are compressed in parallel.
 *   - Dictionaries: written before the first batch that needs them.  A
 *     batch's dictionary is compared with the last one written for its id
 *     by logical value (nulls and values, not bytes: what lies under a
 *     null, where offsets start or views point, and the indices of a
 *     nested dictionary do not count, the values they pick do): equal
 *     values write nothing; values that start with all the old ones write a
 *     delta of the new ones (provided the dictionaries nested in them extend
 *     theirs too); anything else, fewer values included, writes a
 *     replacement in the stream format.  The file format cannot replace a
 *     dictionary: a batch whose values are the first ones of those written
 *     (fewer, the same) writes nothing, its indices meaning the same values
 *     in the written dictionary; any other is an XCHG_EINVAL error naming
 *     the field.
 *   - Coalescing (coalesce_rows / coalesce_bytes): small batches are held
 *     and concatenated into larger ones without changing their content.
 *     Dictionary-encoded input is NOT unified: batches are merged only while
 *     each of their dictionaries equals the pending batches' one or extends
 *     it (the pending indices stay valid in the newer dictionary); a batch
 *     with any other dictionary first flushes what is pending, so streams
 *     with different dictionaries are kept apart.
 *   - Big-endian output (for testing readers): Schema.endianness = Big and
 *     every multi-byte value of the body byte-swapped.
 *
 * Output goes to memory (an xchg_buf at the end), a file descriptor or a
 * callback.
 *
 * Arguments: a call on a writer that returns a status takes a NULL writer,
 * batch or stream as XCHG_EINVAL naming it.
 *
 * Threads: a writer is used by one thread at a time (its pool's threads
 * compress for it inside the calls); the arrays given to it are only read.
 */
#ifndef XCHG_WRITER_H
#define XCHG_WRITER_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"
#include "xchg/buf.h"
#include "xchg/codec.h"
#include "xchg/error.h"
#include "xchg/ipc.h"
#include "xchg/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How an xchg_ipc_writer writes.  Fill it with
 * xchg_ipc_write_options_init, then set what differs. */
typedef struct xchg_ipc_write_options {
  xchg_ipc_format format; /**< XCHG_IPC_STREAM (default) or XCHG_IPC_FILE */
  xchg_block_codec codec; /**< body compression; default XCHG_BLOCK_NONE */
  int level;              /**< codec level, 0 = the codec's default */
  /** A compressed buffer is kept only when it is smaller than
   * (1 - min_space_saving) x its raw size; otherwise the raw bytes are
   * stored behind the -1 prefix.  0 (default) keeps any shrinking; a
   * negative value keeps buffers that grew by up to its size (-0.01: by
   * 1%), and -INFINITY keeps every buffer compressed, as Arrow C++ writes
   * when its min_space_savings is unset.  Must be below 1. */
  double min_space_saving;
  int alignment;  /**< 8 (default) or 64 */
  int big_endian; /**< non-zero: write big-endian data */
  /** Pool for compressing a batch's buffers in parallel; NULL (default)
   * compresses on the calling thread.  Buffers are grouped into tasks of at
   * least parallel_min_bytes (default 64 KiB). */
  xchg_pool *pool;
  int64_t parallel_min_bytes; /**< see pool */
  /** Coalescing: 0 = off (default).  Pending batches are written once they
   * hold at least coalesce_rows rows or coalesce_bytes buffer bytes, and
   * at the end.  Pending batches of 0 rows in all are never written beside
   * rows: they are dropped when rows follow them (with a dictionary that
   * cuts the batch there too) or a batch was written before them; only an
   * input of no rows has an empty batch, one. */
  int64_t coalesce_rows;
  int64_t coalesce_bytes; /**< see coalesce_rows */
  /** Dictionary ids, one per dictionary-encoded field in the order of a
   * depth-first walk of the schema where a field's children (and the
   * fields inside its dictionary's value type) come before the field
   * itself.  Fields given the same id share one dictionary: their
   * dictionaries must be equal in every batch.  NULL (default) numbers
   * them 0, 1, 2, ... in that order.  Given, it holds exactly one id per
   * such field: fewer or more is XCHG_EINVAL (more were meant for another
   * schema or order). */
  const int64_t *dictionary_ids;
  int64_t n_dictionary_ids; /**< entries of dictionary_ids */
} xchg_ipc_write_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are).  The writer's open refuses options
 * out of their range with XCHG_EINVAL naming the option (a negative count
 * or size among them). */
XCHG_API void xchg_ipc_write_options_init(xchg_ipc_write_options *opts);

/** Where bytes go: write_fn must take all n bytes or return an error. */
typedef xchg_status (*xchg_write_fn)(void *ctx, const void *data, size_t n, xchg_error *err);

/** A writer of one Arrow IPC stream or file. */
typedef struct xchg_ipc_writer xchg_ipc_writer;

/** Opens a writer for batches of `schema`, a "+s" ArrowSchema whose
 * children are the columns and whose metadata is the schema's (the schema
 * is read, not taken over).  Writes the schema message at once.  opts may
 * be NULL for the defaults. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_open(const struct ArrowSchema *schema,
                                                         const xchg_ipc_write_options *opts,
                                                         xchg_write_fn write_fn, void *ctx,
                                                         xchg_ipc_writer **out, xchg_error *err);

/** The same, writing to fd (not closed by the writer). */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_open_fd(const struct ArrowSchema *schema,
                                                            const xchg_ipc_write_options *opts,
                                                            int fd, xchg_ipc_writer **out,
                                                            xchg_error *err);

/** The same, writing to a growable buffer in memory; take it with
 * xchg_ipc_writer_take_memory after xchg_ipc_writer_finish. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_open_memory(const struct ArrowSchema *schema,
                                                                const xchg_ipc_write_options *opts,
                                                                xchg_ipc_writer **out,
                                                                xchg_error *err);

/** Sets custom metadata (ArrowSchema.metadata encoding, copied; NULL to
 * clear) for the record batch messages written from now on. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_set_message_metadata(xchg_ipc_writer *w,
                                                                         const char *metadata,
                                                                         xchg_error *err);

/** Writes one batch: a "+s" ArrowArray of the schema's columns (with no
 * nulls at the top level), possibly sliced.  The batch is only read and
 * may be released as soon as the call returns, coalescing or not. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_write(xchg_ipc_writer *w,
                                                          const struct ArrowArray *batch,
                                                          xchg_error *err);

/** Writes every batch of stream (whose schema must equal the writer's
 * column types); releases each batch, not the stream. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_write_stream(xchg_ipc_writer *w,
                                                                 struct ArrowArrayStream *stream,
                                                                 xchg_error *err);

/** Writes what coalescing holds, then the end-of-stream marker (and for
 * the file format the footer).  No batch may be written afterwards. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_writer_finish(xchg_ipc_writer *w, xchg_error *err);

/** Bytes written so far (0 for NULL, as the two counts below). */
XCHG_API int64_t xchg_ipc_writer_bytes_written(const xchg_ipc_writer *w);
/** Record batch messages written so far. */
XCHG_API int64_t xchg_ipc_writer_batches_written(const xchg_ipc_writer *w);
/** Dictionary batch messages written so far. */
XCHG_API int64_t xchg_ipc_writer_dictionaries_written(const xchg_ipc_writer *w);

/** Memory writers: hands over what was written (a new reference; the
 * writer keeps nothing).  NULL for other writers, a NULL writer, or when out
 * of memory. */
XCHG_API xchg_buf *xchg_ipc_writer_take_memory(xchg_ipc_writer *w);

/** Frees the writer (without finishing it). NULL is a no-op. */
XCHG_API void xchg_ipc_writer_free(xchg_ipc_writer *w);

/** One call: writes schema and every batch of stream to memory (the stream
 * is released, on failure too).  The result is a new buffer in *out.  A
 * NULL stream or out is XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_encode_stream(struct ArrowArrayStream *stream,
                                                           const xchg_ipc_write_options *opts,
                                                           xchg_buf **out, xchg_error *err);

#ifdef __cplusplus
}
#endif
#endif
