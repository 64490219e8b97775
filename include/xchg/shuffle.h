/** \file
 * xchg/shuffle.h — the reduce side of a shuffle: many small blocks in,
 * target-size batches out.
 *
 * A reduce task reads one block per mapper and spill, so its blocks are
 * often tiny (tens of rows) and there are thousands of them.  Reading each
 * with its own IPC reader parses a schema per block and hands the engine
 * one tiny batch per block, which it then copies again to coalesce.  An
 * xchg_shuffle_reader reads the schema once, checks every later block's
 * schema by its bytes, and decodes every block's buffers straight into
 * their place in the coalesced batch: one write per byte.
 *
 * Input: a sequence of byte sources (xchg/io.h: memory, chunk lists, file
 * descriptors, callbacks), read in the order they were added, each holding
 * any number of blocks one after another with nothing between them.  A
 * block is one of:
 *   - a Comet native shuffle block (XCHG_SHUFFLE_FRAMING_COMET): a u64le
 *     length of what follows it, a u64le field count, a 4-byte codec tag
 *     ("NONE", "LZ4_", "ZSTD", "SNAP") and a whole Arrow IPC stream
 *     compressed with that codec — decompressed once, a run of blocks
 *     into one arena, with codec contexts reused from block to block (a
 *     NONE block is read in place);
 *   - a plain Arrow IPC stream (XCHG_SHUFFLE_FRAMING_IPC): schema,
 *     dictionaries, any number of record batches, end-of-stream marker, as
 *     an IPC-stream shuffle writer writes them; body compression none,
 *     LZ4_FRAME or ZSTD, each compressed buffer decompressed straight into
 *     its place in the output.
 * XCHG_SHUFFLE_FRAMING_AUTO tells the two apart by the first bytes of each
 * source.
 *
 * Output: "+s" struct arrays (Arrow C Data Interface) of the selected
 * columns, in input order, each holding at least target_rows rows or
 * target_bytes bytes of its blocks' bodies (decoded), whichever comes
 * first; only the last batch is shorter (and a batch cut by a changed
 * dictionary, or where 32-bit offsets could not address more values).
 * Offsets are rebased, validity bits shifted into place, nested types (list, large list, map, struct, fixed-size list,
 * unions, run-end encoded, views) joined at every level.  Blocks without
 * rows produce nothing.  A block that is itself at least that large, whose
 * bytes are in memory uncompressed, passes through without a copy (its
 * arrays point into the source memory) when no rows are pending before it.
 *
 * Dictionary-encoded columns: a batch carries one dictionary per field.
 * A block whose dictionary messages are byte for byte those of the blocks
 * before it (Comet writes every block's dictionaries again) joins their
 * batch and shares their decoded dictionary, decoded once.  A block with a
 * different dictionary cuts the batch there: the pending rows go out as
 * a batch (shorter than the target when they must), and the new
 * dictionary starts the next one.  Indices are never remapped, so a value
 * is never read through the wrong dictionary.  A block's stream must define
 * the dictionaries its batches use, but for a batch of no row (which adds
 * nothing).
 *
 * Checks: the first block's schema (or the schema message given in the
 * options) is parsed once; every later block's schema message must have the
 * same bytes, or else describe the same columns (it is then parsed and
 * compared), or the read fails with XCHG_EFORMAT.  Everything read from
 * the wire is checked before use, as by xchg_ipc_reader (xchg/ipc.h),
 * under the same caps (xchg_ipc_read_options); a Comet block's field count
 * must be the schema's.  Every error names the block (its index from 0
 * over all sources, the source, and the byte offset of the block in its
 * source), e.g. "block 17 (source 0, byte 40960): message 1, field 'c3',
 * buffer 2: range [0, +900) lies outside the 512-byte body".  A truncated
 * input is an error, never a short result.  Batches already handed out
 * stay valid after any error; after an error every later call to
 * xchg_shuffle_reader_next returns it again.
 *
 * Input that arrives over time (a reduce task gets its fetched block
 * streams one by one): with the incremental option, sources may be added
 * at any time, before or between calls to xchg_shuffle_reader_next, until
 * xchg_shuffle_reader_end_input says there are no more.  Until then, when
 * the input so far holds no whole batch, xchg_shuffle_reader_next returns
 * XCHG_EAGAIN (not an error: add a source or end the input, and call
 * again); rows short of the target wait for more input or for the end.
 * A call never blocks on input, unless a callback source it reads does.
 * Without the option, the sources added before the first read are the
 * whole input.
 *
 * Memory: a source in memory (a buffer, an mmap) is read in place; any
 * other (chunks, an fd, a callback) is read about 1 MiB of whole blocks at
 * a time, never whole: a block is read into memory whole, so one larger
 * than read.max_batch_bytes is XCHG_ELIMIT, named in its turn, after the
 * batches of the blocks before it.  Blocks do not span sources.
 * The reader holds the memory of the blocks of the batches it builds, and
 * with a pool up to about read.readahead_bytes of input, and as much of
 * batches, ahead.
 * Big-endian blocks are XCHG_ENOTSUP.
 *
 * Parallel read-ahead: with read.pool (xchg/pool.h, more than one
 * thread), the groups of Comet blocks ahead decompress, and the batches
 * ahead are built (decompressed or copied into place, and validated), on
 * the pool while the caller reads the current one, within about
 * read.readahead_bytes of decoded batches; batches come out in input
 * order, and the output is the same with any number of threads (the
 * blocks of a batch are chosen by their row counts and stated sizes).
 * Once the schema is known, the planning of batches (reading the blocks'
 * messages, checking schemas, decoding dictionaries) moves to the pool
 * too: each batch is planned and then built by one task, which first
 * hands the planning of the next batch to another, so that the pool's
 * threads take turns planning and build side by side, each a batch whose
 * blocks it has just read.  Sources not in memory are read, and the
 * cancel check asked, on the calling thread only.  With a pool of two
 * threads, batches of Comet blocks with a codec are planned and built on
 * the calling thread while the other thread decompresses the groups
 * ahead: each block is copied into place while still in the cache of the
 * thread that read it.  Of the batches the calling thread plans, those
 * smaller than an eighth of read.readahead_bytes (1 MiB at most) made of
 * few record batches (with a pool of two threads, of any number that need
 * no decompressing), where a hand-off to another thread would cost more
 * than it saves, are built as they are planned, their blocks copied into
 * place as they are read — as everything is without a pool; so are small
 * batches for 100 ms after the pool kept a reader waiting for one over a
 * millisecond longer than it took to build (its thread did not run: a
 * host with more threads than cores).
 *
 * Threads: a reader is used by one thread at a time (its pool's threads
 * work for it inside and between the calls).  The ArrowArrays it hands out
 * belong to the caller: they may be released on any thread, in any order,
 * before or after the reader is freed.
 */
#ifndef XCHG_SHUFFLE_H
#define XCHG_SHUFFLE_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"
#include "xchg/error.h"
#include "xchg/io.h"
#include "xchg/ipc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the blocks of a source are framed. */
typedef enum xchg_shuffle_framing {
  /** Per source, from its first bytes: a Comet codec tag at bytes 16..19
   * means Comet blocks, anything else plain IPC streams. */
  XCHG_SHUFFLE_FRAMING_AUTO = 0,
  /** Comet native shuffle blocks (see the top of this header). */
  XCHG_SHUFFLE_FRAMING_COMET = 1,
  /** Arrow IPC streams, one after another. */
  XCHG_SHUFFLE_FRAMING_IPC = 2
} xchg_shuffle_framing;

/** Options of a shuffle reader; fill with xchg_shuffle_reader_options_init
 * and change what differs. */
typedef struct xchg_shuffle_reader_options {
  xchg_shuffle_framing framing; /**< default XCHG_SHUFFLE_FRAMING_AUTO */
  /** A batch goes out once it holds at least target_rows rows (default
   * 8192) or target_bytes bytes of buffers (default 64 MiB), whichever
   * comes first.  Each must be positive. */
  int64_t target_rows;
  int64_t target_bytes; /**< see target_rows */
  /** The schema, as the bytes of an IPC schema message (framing included
   * or not, and nothing after it, as xchg_batch_decoder_open takes it), or
   * NULL (default) to take it from the first block.  Copied by
   * xchg_shuffle_reader_open. */
  const void *schema_message;
  size_t schema_message_size; /**< bytes at schema_message */
  /** Top-level column indices to decode, in any order (batches hold each
   * selected column once, in schema order, however often it is named), or
   * NULL (default) for all; n_columns 0 with columns
   * non-NULL decodes none (batches then carry row counts only).  Copied by
   * xchg_shuffle_reader_open.  An index out of range is XCHG_EINVAL, from
   * open when the schema is given, else once the first block is read. */
  const int64_t *columns;
  int64_t n_columns; /**< how many indices columns holds */
  /** Validation level, caps and allow_missing_eos as for xchg_ipc_reader
   * (xchg/ipc.h), initialised by xchg_ipc_read_options_init.  read.pool and
   * read.readahead_bytes (default 32 MiB here, room for a few coalesced
   * batches ahead): see the top of this header; read.on_message and
   * read.task_bytes are not used here. */
  xchg_ipc_read_options read;
  /** Non-zero: sources may be added while reading, until
   * xchg_shuffle_reader_end_input (see the top of this header).  Default
   * 0: the sources added before the first read are the input. */
  int incremental;
  /** The task's cancellation check, asked with cancel_ctx on the calling
   * thread before the first block is read and then before a block once
   * 64 KiB of blocks were read since it was last asked, so inside a long
   * xchg_shuffle_reader_next too; while the pool plans batches ahead, once
   * a call instead.  Once it says non-zero, that call fails with
   * XCHG_ECANCELLED (the batches a pool built ahead are dropped), and so
   * does every later one.  NULL (default): never cancelled. */
  xchg_cancel_fn cancel;
  void *cancel_ctx; /**< the argument of cancel */
} xchg_shuffle_reader_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are). */
XCHG_API void xchg_shuffle_reader_options_init(xchg_shuffle_reader_options *opts);

/** Counters of a shuffle reader, kept at no per-block cost: the clock is
 * read per output batch and per source that is not in memory, never per
 * block. */
typedef struct xchg_shuffle_reader_metrics {
  int64_t blocks;              /**< blocks read, empty ones included */
  int64_t rows;                /**< rows read (= rows handed out, at the end) */
  int64_t wire_bytes;          /**< bytes of the blocks as read from the sources */
  int64_t decoded_bytes;       /**< bytes of the buffers of the batches built */
  int64_t batches;             /**< batches handed out */
  int64_t passthrough_batches; /**< of which handed out without a copy */
  int64_t dictionary_cuts;     /**< batches cut short by a changed dictionary */
  /** Time decoding batches whose blocks needed decompression (Comet
   * codecs, IPC body compression): decompressing and placing. */
  int64_t decompress_ns;
  /** Time decoding batches of uncompressed blocks: copying into place. */
  int64_t copy_ns;
  /** Time waiting for input: reading sources that are not in memory. */
  int64_t wait_ns;
} xchg_shuffle_reader_metrics;

/** A shuffle reader: one reduce task's input, read in order (opaque). */
typedef struct xchg_shuffle_reader xchg_shuffle_reader;

/** Creates a reader with opts (NULL for the defaults), without input yet:
 * add its sources with xchg_shuffle_reader_add_source.  With a schema
 * message in opts, the schema is parsed (and columns checked) here; a bad
 * one is XCHG_EFORMAT, bad options (or a NULL out) XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_shuffle_reader_open(
    const xchg_shuffle_reader_options *opts, xchg_shuffle_reader **out, xchg_error *err);

/** Appends src to the input, which the reader takes over (closed with the
 * reader, or at once if adding fails).  Without the incremental option,
 * every source is added before the first xchg_shuffle_reader_next or
 * xchg_shuffle_reader_schema; with it, at any time until
 * xchg_shuffle_reader_end_input.  A source added after that is
 * XCHG_EINVAL.  An empty source holds no block and is allowed. */
XCHG_API XCHG_NODISCARD xchg_status xchg_shuffle_reader_add_source(xchg_shuffle_reader *reader,
                                                                   xchg_source *src,
                                                                   xchg_error *err);

/** Says that no source follows those added: the input ends with them, and
 * rows waiting for the target go out as the last batch.  XCHG_EINVAL when
 * reader is NULL; calling it again changes nothing. */
XCHG_API XCHG_NODISCARD xchg_status xchg_shuffle_reader_end_input(xchg_shuffle_reader *reader,
                                                                  xchg_error *err);

/** Exports the schema of the batches (the selected columns, a fresh copy
 * each call).  When the options gave no schema message, the first block's
 * schema is read first (without the incremental option, no source may be
 * added afterwards); with no block in the whole input that is
 * XCHG_EFORMAT (xchg_shuffle_reader_next still ends the input without
 * error: a partition of no block is whole), and XCHG_EAGAIN while
 * incremental input holds none yet.
 * A NULL reader or out is XCHG_EINVAL (and not repeated by later calls). */
XCHG_API XCHG_NODISCARD xchg_status xchg_shuffle_reader_schema(xchg_shuffle_reader *reader,
                                                               struct ArrowSchema *out,
                                                               xchg_error *err);

/** The dictionary ids of the selected dictionary-encoded fields, as
 * xchg_ipc_reader_dictionary_ids lists them (xchg/ipc.h): those of the
 * schema the reader reads every block with (the first block's, or the
 * options' schema message's), which the batches' C Data arrays do not
 * carry.  A writer given them (xchg_ipc_write_options.dictionary_ids, in
 * its order) keeps the blocks' ids and their shared dictionaries.  Writes
 * up to capacity ids and returns how many there are: 0 before the schema
 * is read (xchg_shuffle_reader_schema, xchg_shuffle_reader_next) and for
 * a NULL reader. */
XCHG_API int64_t xchg_shuffle_reader_dictionary_ids(const xchg_shuffle_reader *reader, int64_t *ids,
                                                    int64_t capacity);

/** The next coalesced batch, a "+s" struct array of the selected columns.
 * At the end of the input, out->release is NULL and XCHG_OK is returned
 * (an input without any row gives no batch at all).  With the incremental
 * option, XCHG_EAGAIN (out released-state) when the input so far holds no
 * whole batch and it has not been ended.  On an error out is
 * released-state (release NULL), err names the block, and the same error
 * comes back from every later call.  A NULL reader or out is XCHG_EINVAL
 * (out, when given, released-state), which later calls do not repeat. */
XCHG_API XCHG_NODISCARD xchg_status xchg_shuffle_reader_next(xchg_shuffle_reader *reader,
                                                             struct ArrowArray *out,
                                                             xchg_error *err);

/** Copies the counters so far into *out (all 0 for a NULL reader; a NULL
 * out is a no-op). */
XCHG_API void xchg_shuffle_reader_get_metrics(const xchg_shuffle_reader *reader,
                                              xchg_shuffle_reader_metrics *out);

/** Frees the reader and closes its sources (NULL is a no-op); batches
 * handed out stay valid. */
XCHG_API void xchg_shuffle_reader_free(xchg_shuffle_reader *reader);

#ifdef __cplusplus
}
#endif
#endif
