/** \file
 * xchg/ipc.h — reading the Arrow IPC stream and file formats.
 *
 * An xchg_ipc_reader decodes Arrow IPC from any xchg_source: the stream
 * format (a schema message, then dictionary and record batch messages, with
 * or without the pre-0.15 framing) or the file format ("ARROW1", a stream, a
 * footer with random access to every batch).  The format is detected from
 * the first bytes; input that starts as neither (text, random bytes, an
 * empty input, a Parquet file) is an XCHG_EFORMAT error beginning "not an
 * Arrow IPC stream or file: " that says what was seen.  Metadata versions
 * V4 and V5 are read (Arrow 0.8 on); others are XCHG_ENOTSUP, naming them.
 *
 * Most file writers repeat the footer's schema as the first message after
 * the magic (it must then equal the footer's); Apache Arrow JS's does not,
 * and such files are read too.  From a seekable input (memory, a file) the
 * schema is taken from the footer as always.  Read in order (a pipe, a
 * codec stream), the batches of such a file cannot be decoded before the
 * footer, at its end, gives their types: the reader then reads the whole
 * file into memory when it is opened, at most max_batch_bytes bytes (beyond
 * that, XCHG_ELIMIT naming the cap), and reads it from there as from
 * memory, footer first, with random access (num_batches, read_batch).
 *
 * A file ends at its closing magic, as a stream ends at its end-of-stream
 * marker: read in order, the reader reads up to the first place where the
 * footer, its length and the magic end and checks, and not a byte further.
 * From a seekable input, the footer is found from the end of the input;
 * when it does not describe the bytes before it (two files concatenated:
 * the last footer's offsets are from its own file's start) or the input
 * does not end as a file does (a file followed by a stream), the file is
 * the one that begins at byte 0, read with its own footer, found by
 * reading its messages in order.  Either way, bytes after the file are not
 * the reader's: xchg_ipc_reader_stream_end says where they begin, and a
 * tool can open a reader there (another IPC file or stream may follow).
 * A file without a schema message read in order is held whole with what
 * follows it, which would be lost: bytes after it are then an XCHG_EFORMAT
 * error.
 *
 * The footer's blocks must list the file's dictionary and record batch
 * messages, each once, in file order, at their offsets and with their
 * lengths (a file is a stream between its magics, its messages back to
 * back); a footer that does not is XCHG_EFORMAT naming the footer block and
 * the bytes that differ, however the file is read, so that the footer and
 * the stream never give different batches.  From a seekable input the
 * blocks are checked against one another when the reader is opened (each
 * list in file order, together covering the bytes from the schema message
 * to the end-of-stream marker), and each block's lengths against its
 * message when that message is read: random access reads only the footer
 * and the messages asked for.  Read in order, the messages read are
 * compared with the footer's blocks once the footer is reached, after the
 * last batch: the error then comes in place of the end.
 *
 * A dictionary need only come before a record batch that uses one of its
 * values: a dictionary-encoded column of no row, or of nulls only, may
 * come first (Apache Arrow JS writes an empty table so), and then has an
 * empty dictionary.
 *
 * Batches come out through the Arrow C Data Interface.  Buffers that were
 * not compressed and whose source is in memory (a buffer, an mmap) are not
 * copied: the arrays point into the input and keep it alive.  Compressed
 * buffers (LZ4_FRAME, ZSTD) are decompressed straight into their final
 * 64-byte-aligned buffers.  Big-endian input is byte-swapped to native.
 *
 * Everything read from the wire is checked before use; a bad input gives
 * XCHG_EFORMAT and a message naming the message index, byte offset, field
 * path and buffer index at fault.
 *
 * Arguments: a call on a reader that returns a status takes a NULL
 * reader, source or out argument as XCHG_EINVAL naming it (out, when
 * given, released-state); the reader's later calls are not affected.
 *
 * Threads: a reader is used by one thread at a time (its pool's threads
 * work for it inside the calls).  The ArrowArrays it hands out belong to
 * the caller: they may be released on any thread, in any order, before or
 * after the reader is freed.
 */
#ifndef XCHG_IPC_H
#define XCHG_IPC_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/arrow_c.h"
#include "xchg/buf.h"
#include "xchg/codec.h"
#include "xchg/error.h"
#include "xchg/io.h"
#include "xchg/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How much of the decoded data the reader checks (see XCHG_VALIDATE_FULL). */
typedef enum xchg_validation {
  /** Check everything a consumer could trip on: offsets monotonic and in
   * range, union type ids, run ends, view ranges, dictionary indices. */
  XCHG_VALIDATE_FULL = 0,
  /** Trusted engine-internal data: skip the O(n) checks of values.  The
   * reader itself still never reads out of bounds. */
  XCHG_VALIDATE_BOUNDS = 1
} xchg_validation;

/** The kinds of IPC message the reader reports. */
typedef enum xchg_message_kind {
  XCHG_MESSAGE_SCHEMA = 1,      /**< a Schema message */
  XCHG_MESSAGE_DICTIONARY = 2,  /**< a DictionaryBatch message */
  XCHG_MESSAGE_RECORD_BATCH = 3 /**< a RecordBatch message */
} xchg_message_kind;

/** What the reader saw of one message, for tools such as `xchg inspect`. */
typedef struct xchg_message_info {
  xchg_message_kind kind;       /**< what the message is */
  int64_t index;                /**< message index in the stream, from 0 */
  int64_t offset;               /**< byte offset of the message's framing */
  int64_t metadata_bytes;       /**< flatbuffer bytes, padding included */
  int64_t body_bytes;           /**< body bytes as on the wire */
  int64_t rows;                 /**< record batch / dictionary batch length */
  xchg_block_codec compression; /**< the body's compression */
  int64_t dictionary_id;        /**< dictionary batches only */
  int is_delta;                 /**< dictionary batches only */
  int metadata_version;         /**< 1..5 (V1..V5) */
  /** Custom metadata of the message, encoded as in ArrowSchema.metadata,
   * or NULL.  Valid during the callback only. */
  const char *custom_metadata;
  /** Record batches: per top-level column of the schema (selected or not),
   * its body bytes as on the wire (the buffer lengths of the metadata) and
   * what they decode to (the same uncompressed; for a compressed body, the
   * declared lengths, or -1 when the input is not in memory and the
   * lengths are not read before the body is).  n_columns is 0 when they
   * could not be told (a malformed batch, out of memory).  Valid during
   * the callback only. */
  int64_t n_columns;
  const int64_t *column_body_bytes;    /**< per column: body bytes on the wire */
  const int64_t *column_decoded_bytes; /**< per column: the bytes they decode to, or -1 */
} xchg_message_info;

/** Called for every message read (see xchg_ipc_reader_on_message). */
typedef void (*xchg_message_fn)(void *ctx, const xchg_message_info *info);

/** Reading options.  The max_* fields are resource caps: a small hostile
 * input must not make the reader allocate gigabytes, so sizes the wire
 * claims are checked before anything that size is allocated, and hitting a
 * cap is an XCHG_ELIMIT error whose message names the cap.  The defaults
 * suit any ordinary data; raise a cap for data known to need more.  A
 * compressed buffer's declared size must also be one its compressed bytes
 * can produce (see xchg_block_check_size), else XCHG_EFORMAT: with that, a
 * claim of n bytes costs the input at least n / 32768 bytes. */
typedef struct xchg_ipc_read_options {
  /** What is checked; default XCHG_VALIDATE_FULL.  Another value is
   * XCHG_EINVAL from every open that takes these options, and so is a
   * negative max_* cap or task_bytes. */
  xchg_validation validation;
  int64_t max_depth;  /**< nesting depth of fields; default 64 */
  int64_t max_fields; /**< fields in a schema, all levels; default 1<<16 */
  /** Decompressed size of one buffer; default 1<<31 (2 GiB), the most a
   * column with 32-bit offsets can address.  Only large types, or a
   * single batch of over 268M 8-byte values, need more. */
  int64_t max_buffer_bytes;
  int64_t max_metadata_bytes; /**< one message's flatbuffer; default 1<<28 */
  /** A stream must end with its end-of-stream marker, which every Arrow
   * writer writes when it closes: without it, a stream cut at a message
   * boundary would pass for a shorter whole one.  Set this to accept
   * streams whose writer stopped without the marker.  A file is never
   * whole without its footer after the marker: one that ends where a
   * message or the marker would begin is cut short, set or not. */
  int allow_missing_eos;
  /** Decompress and validate on this pool (see xchg/pool.h); NULL decodes
   * in the calling thread.  With a pool, xchg_ipc_reader_next reads ahead:
   * while the pool decodes the next batches, up to readahead_bytes of
   * decompressed data (default 8 MiB), the caller reads and plans the ones
   * after them, and takes each batch as soon as it is ready, so that no
   * thread waits at batch boundaries and small batches still keep every
   * thread busy.  A readahead_bytes of 0 or less makes the reader hold
   * one batch at a time (the shuffle reader refuses it, xchg/shuffle.h). */
  xchg_pool *pool;
  int64_t readahead_bytes; /**< see pool */
  /** The least work, in bytes decompressed (a value validated counts about
   * as one), worth handing to another thread (default 256 KiB): batches
   * are grouped up to this much, and a group with less runs in the
   * caller. */
  int64_t task_bytes;
  /** Called for every message read, the schema message included (as
   * xchg_ipc_reader_on_message, but from the first byte on). */
  xchg_message_fn on_message;
  void *on_message_ctx; /**< the ctx of on_message */
  /** Decompressed size of one record batch or dictionary batch: the sum of
   * its compressed buffers' declared sizes, checked buffer by buffer before
   * each is allocated.  Default 1<<32 (4 GiB): engines cut their batches
   * to a few MB (Spark, DataFusion, Velox: thousands of rows), and with a
   * pool the reader holds several batches at once.  It also caps the size
   * of a file without a schema message read in order, which is held whole
   * (see the top of this header). */
  int64_t max_batch_bytes;
  /** Decoded size of one dictionary (the sum of its buffers' sizes, nested
   * ones included) once delta batches are appended; a delta that would
   * pass it is refused before it is appended.  Default 1<<31 (2 GiB): a
   * dictionary lives for the whole stream, and one of strings with 32-bit
   * offsets cannot hold much more anyway. */
  int64_t max_dictionary_bytes;
} xchg_ipc_read_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are). */
XCHG_API void xchg_ipc_read_options_init(xchg_ipc_read_options *opts);

/** The two Arrow IPC formats. */
typedef enum xchg_ipc_format {
  XCHG_IPC_STREAM = 0, /**< the stream format: messages, then an end-of-stream marker */
  XCHG_IPC_FILE = 1    /**< the file format: "ARROW1", the messages, a footer */
} xchg_ipc_format;

/** A reader of one Arrow IPC stream or file over a source. */
typedef struct xchg_ipc_reader xchg_ipc_reader;

/** Opens a reader on src, which it takes over (closed with the reader, or at
 * once if opening fails).  Reads the schema (and, for the file format, the
 * footer). opts may be NULL for the defaults.  An input that ends early is
 * an XCHG_EIO error, as in xchg_ipc_reader_next: a file cut short, which
 * has no footer at its end, says where its input ends (inside which
 * message, or inside the footer), from memory as from a pipe. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_open(xchg_source *src,
                                                         const xchg_ipc_read_options *opts,
                                                         xchg_ipc_reader **out, xchg_error *err);

/** The same over a memory-mapped file (xchg_source_open_file). */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_open_file(const char *path,
                                                              const xchg_ipc_read_options *opts,
                                                              xchg_ipc_reader **out,
                                                              xchg_error *err);
/** The same over memory the caller owns (xchg_source_from_memory): release
 * runs when the last array pointing into it is released.  On failure it
 * does not run: the memory stays the caller's. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_open_memory(
    const void *data, size_t size, xchg_release_fn release, void *release_ctx,
    const xchg_ipc_read_options *opts, xchg_ipc_reader **out, xchg_error *err);

/** The format of the input, detected from its first bytes (XCHG_IPC_STREAM
 * for NULL). */
XCHG_API xchg_ipc_format xchg_ipc_reader_format(const xchg_ipc_reader *reader);

/** Calls fn for every message read from now on (NULL to stop); see also
 * xchg_ipc_read_options.on_message.  A NULL reader: a no-op. */
XCHG_API void xchg_ipc_reader_on_message(xchg_ipc_reader *reader, xchg_message_fn fn, void *ctx);

/** Selects the columns to decode; the others are never decompressed, never
 * copied and, when the input is a seekable file read without mmap, never
 * read.  Dictionaries that no selected column uses are skipped too.  A
 * path names a top-level column ("c4") or, through structs, a nested field
 * ("s.f1" gives the struct s with only its child f1); a path on into a
 * list, map, union or dictionary-encoded field ("l.item") selects that
 * whole field, each name past it a field there all the same.  The schema and the batches
 * read from then on hold the selected columns only, each once (however
 * often it is named), in schema order.
 * An unknown name, a name that two fields share (at its level: select
 * such columns by index), a negative n, paths NULL with n > 0 or a NULL
 * path is an XCHG_EINVAL error and leaves the selection as it was.  Select before the first xchg_ipc_reader_next, or between batches
 * on a reader without a pool: batches a pool has read ahead were decoded
 * with the old selection, so select then fails with XCHG_EINVAL rather
 * than drop them or hand them out with other columns. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_select(xchg_ipc_reader *reader,
                                                           const char *const *paths, int64_t n,
                                                           xchg_error *err);
/** The same, by top-level column index (one out of range, a negative n or
 * indices NULL with n > 0: XCHG_EINVAL). */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_select_indices(xchg_ipc_reader *reader,
                                                                   const int64_t *indices,
                                                                   int64_t n, xchg_error *err);

/** What is known of a record batch before its body is touched. */
typedef struct xchg_batch_header {
  int64_t message_index;        /**< the message's index in the stream, from 0 */
  int64_t offset;               /**< byte offset of the message */
  int64_t rows;                 /**< the batch's length */
  int64_t body_bytes;           /**< its body bytes as on the wire */
  xchg_block_codec compression; /**< its body's compression */
  /** The message's custom metadata (ArrowSchema.metadata encoding) or NULL;
   * valid until the next call on the reader. */
  const char *custom_metadata;
} xchg_batch_header;

/** Reads the header of the next record batch without decoding it (the
 * dictionaries before it are read as usual).  Then either
 * xchg_ipc_reader_next decodes it or xchg_ipc_reader_skip drops it without
 * reading its body — for pruning batches by their statistics.  At the end
 * of the input *at_end is set.  An error sticks, as next's do.  With a
 * pool, peek after next has read batches ahead is XCHG_EINVAL (they are
 * decoded already): prune with a reader without a pool, or with
 * read.readahead_bytes of 0 or less. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_peek(xchg_ipc_reader *reader,
                                                         xchg_batch_header *out, int *at_end,
                                                         xchg_error *err);
/** Drops the record batch xchg_ipc_reader_peek has read the header of,
 * without reading its body (seeking past it where the source can).  An
 * input that ends inside that body is XCHG_EIO naming the message, and it
 * sticks: every later call returns it (a cut is never a shorter stream). */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_skip(xchg_ipc_reader *reader, xchg_error *err);

/** Calls fn before every buffer decompression with the compressed bytes
 * and the decompressed size: for benchmarks (the bare codec's speed on
 * exactly these buffers) and tests (proving what is not decompressed).
 * fn may run on pool threads, concurrently. */
typedef void (*xchg_decompress_fn)(void *ctx, xchg_block_codec codec, const void *src,
                                   size_t src_size, size_t dst_size);
/** Calls fn(ctx, ...) before every buffer decompression from now on (NULL
 * to stop).  A NULL reader: a no-op. */
XCHG_API void xchg_ipc_reader_on_decompress(xchg_ipc_reader *reader, xchg_decompress_fn fn,
                                            void *ctx);

/** The dictionary ids of the selected dictionary-encoded fields, in the
 * order their ArrowSchemas appear in a depth-first walk of the exported
 * schema (a field, then its dictionary's value type, then its children).
 * Fields sharing a dictionary share an id.  Writes up to capacity ids and
 * returns how many there are (0 for a NULL reader). */
XCHG_API int64_t xchg_ipc_reader_dictionary_ids(const xchg_ipc_reader *reader, int64_t *ids,
                                                int64_t capacity);

/** Exports the schema (a fresh copy each call). */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_schema(const xchg_ipc_reader *reader,
                                                           struct ArrowSchema *out,
                                                           xchg_error *err);

/** Reads the next record batch as a struct array ("+s") whose children are
 * the columns.  At the end, out->release is NULL and XCHG_OK is returned.
 * An input that ends early — inside a message, or without the
 * end-of-stream marker (see allow_missing_eos) — is an XCHG_EIO error. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_next(xchg_ipc_reader *reader,
                                                         struct ArrowArray *out, xchg_error *err);

/** The record batch message of the batch xchg_ipc_reader_next handed out
 * last: its index in the stream or file (the schema message is 0) is
 * returned and the byte offset of its prefix set in *offset (may be NULL),
 * as the reader's own errors name a message — for a caller to say where a
 * batch it cannot use lies.  With a pool the reader reads messages ahead
 * of the batches it hands out (on_message reports each as it is read), so
 * the last message read is not this one.  -1 (and *offset -1) before any
 * batch, and for a NULL reader. */
XCHG_API int64_t xchg_ipc_reader_batch_message(const xchg_ipc_reader *reader, int64_t *offset);

/** File format only: the number of record batches.  For a stream, a file
 * read in order that has a schema message, and a NULL reader, -1. */
XCHG_API int64_t xchg_ipc_reader_num_batches(const xchg_ipc_reader *reader);
/** File format only: random access to batch i of num_batches, as
 * xchg_ipc_reader_next gives it (dictionaries are read as the file
 * format's rules require).  XCHG_ENOTSUP where num_batches is -1,
 * XCHG_EINVAL for i out of range, XCHG_EFORMAT when the message at footer
 * block i is not a record batch with the block's lengths. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_read_batch(xchg_ipc_reader *reader, int64_t i,
                                                               struct ArrowArray *out,
                                                               xchg_error *err);

/** The byte offset just past the end-of-stream marker of a stream (the
 * input's size, for a stream that ends without one), or past the closing
 * magic of a file, once xchg_ipc_reader_next has reported the end; else (and
 * for a NULL reader) -1.
 * Bytes from there on are not the stream's: another IPC stream or file may
 * follow (a tool can open a reader there). */
XCHG_API int64_t xchg_ipc_reader_stream_end(const xchg_ipc_reader *reader);

/** Moves the reader into an ArrowArrayStream, which owns it from now on
 * (the reader must not be used or freed by the caller afterwards).  A NULL
 * reader or out is XCHG_EINVAL (and nothing is moved).  The stream's
 * get_schema and get_next return EINVAL for a NULL out, and once the
 * stream is released (get_last_error says which), as do the streams of
 * xchg_cache_holder_stream.  release sets out->release to NULL, as the C
 * Stream Interface requires, so a released stream is not released through
 * it again; a copy of the callback taken before, called again, does
 * nothing. */
XCHG_API XCHG_NODISCARD xchg_status xchg_ipc_reader_to_stream(xchg_ipc_reader *reader,
                                                              struct ArrowArrayStream *out,
                                                              xchg_error *err);

/** Frees the reader and closes its source (NULL is a no-op).  Arrays it
 * handed out stay valid. */
XCHG_API void xchg_ipc_reader_free(xchg_ipc_reader *reader);

/* ---- Batches decoded one payload at a time (src/ipc/batch_decoder.c) ----
 *
 * For a cached relation: an engine stores each batch as its own payload
 * and reads them back in any order, often a few columns only.  A decoder
 * is created once with the relation's schema (the bytes of an IPC schema
 * message, framing included or not, and nothing after it: with its
 * framing, bytes after the metadata length it gives are an XCHG_EFORMAT
 * error naming them), the columns to decode and the read
 * options, and then decodes any number of payloads, from any number of
 * threads one at a time per call (it keeps no state between calls).  A
 * payload is one of:
 *   - the form engines store per batch: the dictionary messages the batch
 *     needs, if any, then one encapsulated RecordBatch message (an
 *     end-of-stream marker after it is allowed, not needed);
 *   - a whole IPC stream (its schema message, which must describe the
 *     decoder's schema, dictionaries, any number of batches, the
 *     end-of-stream marker): one of no batch, as a writer leaves an empty
 *     part, decodes to no rows.
 * A payload of several batches (a stream's, or RecordBatch messages one
 * after another, dictionaries between them) comes out as one array, the
 * batches concatenated, which copies them; a dictionary replaced between
 * them (not extended by a delta) is XCHG_ENOTSUP, one array holding one
 * dictionary.
 * Decoding is the reader's (plan, decompress into the final buffers,
 * validate): uncompressed buffers of a payload in memory are not copied;
 * from a source that is not in memory (xchg_source_from_read_at), each
 * selected buffer's bytes are read once, straight into their final buffer
 * when stored as they are, else into the copy they are decompressed from;
 * unselected buffers are never read.  With no column selected, the row
 * count comes out without a byte of the body being read.
 *
 * Errors name the batch (`first_batch` + the payload's position, wrapping
 * past INT64_MAX), the message, and the field and buffer at fault, e.g.
 * "batch 7: message 0, field 'c4', buffer 2: range [0, +80000) lies
 * outside the 4096-byte body".  A payload whose schema message differs
 * from the decoder's is an XCHG_EFORMAT error saying how.  A batch of zero
 * rows decodes to an array of zero rows; a payload of no record batch and
 * no schema message (dictionaries alone, a marker alone) is an
 * XCHG_EFORMAT error saying what it held and at which bytes, e.g. "the
 * payload of 232 bytes holds no record batch: 1 dictionary message from
 * byte 0, then the end-of-stream marker at byte 224".  A NULL decoder or
 * out is XCHG_EINVAL
 * naming it (every out, when given, released-state). */

/** A decoder of payloads of one schema (see above). */
typedef struct xchg_batch_decoder xchg_batch_decoder;

/** columns: top-level column indices to decode, in any order (nested
 * children follow their parent; batches hold each selected column once,
 * in schema order), or NULL for all; n_columns 0 with columns non-NULL
 * decodes none.  An index out of range is an XCHG_EINVAL error.  opts may
 * be NULL (the defaults); its pool, if any, decodes xchg_batch_decoder_
 * decode_many's payloads in parallel. */
XCHG_API XCHG_NODISCARD xchg_status xchg_batch_decoder_open(
    const void *schema_message, size_t size, const int64_t *columns, int64_t n_columns,
    const xchg_ipc_read_options *opts, xchg_batch_decoder **out, xchg_error *err);

/** The schema of the decoded batches (the selected columns). */
XCHG_API XCHG_NODISCARD xchg_status xchg_batch_decoder_schema(const xchg_batch_decoder *dec,
                                                              struct ArrowSchema *out,
                                                              xchg_error *err);

/** Decodes the payload read from src (seekable, of known size: memory, a
 * mapped file, xchg_source_from_read_at; not closed here) into a struct
 * array ("+s") of the selected columns.  batch is the number errors give
 * the payload. */
XCHG_API XCHG_NODISCARD xchg_status xchg_batch_decoder_decode(const xchg_batch_decoder *dec,
                                                              xchg_source *src, int64_t batch,
                                                              struct ArrowArray *out,
                                                              xchg_error *err);

/** Decodes n payloads into outs[0..n) on the options' pool.  Sources read
 * by copying (not in memory), at least as many as the pool has threads:
 * runs of payloads (at least task_bytes of source each) are decoded whole
 * on the pool's threads and the caller's, reading included: each source is
 * read by one thread at a time, its reads in order, but not necessarily on
 * the calling thread, so a read callback must work on any thread (JNI's
 * attaches the thread to the VM).  That spreads copies over every thread.
 * Sources all in memory (a payload in memory costs no copy) are planned
 * on the calling thread, the first alone when its work says that the
 * call's is worth a run a thread or more: the others are then decoded
 * whole in runs on the pool (their metadata, read cold, too) while the
 * caller finishes it; else the decompression and validation are spread
 * over the pool by their work.  Without a pool, one payload after another
 * is decoded whole.  On an error, nothing is exported (every
 * outs[i].release is NULL) and err names the first payload that failed, as
 * batch first_batch + i.
 * *metadata_bytes (may be NULL) gets the bytes of framing and flatbuffers
 * read from the sources: what of the bytes read is not body, for callers
 * that count the bytes their source copied.  A NULL dec, a negative n, or
 * srcs or outs NULL with n > 0 is XCHG_EINVAL naming it. */
XCHG_API XCHG_NODISCARD xchg_status xchg_batch_decoder_decode_many(
    const xchg_batch_decoder *dec, xchg_source *const *srcs, int64_t n, int64_t first_batch,
    struct ArrowArray *outs, int64_t *metadata_bytes, xchg_error *err);

/** Frees the decoder (NULL is a no-op).  Arrays it decoded stay valid. */
XCHG_API void xchg_batch_decoder_free(xchg_batch_decoder *dec);

#ifdef __cplusplus
}
#endif
#endif
