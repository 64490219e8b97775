/* decode.h — turning RecordBatch messages (metadata + body) into arrays.
 *
 * Decoding runs in three steps so that the expensive one can run in
 * parallel, over one batch or several consecutive ones:
 *   1. plan: walk the schema depth first, taking field nodes and buffers
 *      from the message in IPC order, checking every offset and length
 *      against the body; uncompressed buffers become zero-copy slices of the
 *      body, compressed ones get their final aligned buffer and a job;
 *   2. run the jobs (decompress straight into place, byte-swap big-endian
 *      data), on a thread pool when there is one;
 *   3. validate the arrays so that no consumer can be led out of bounds.
 * Fields marked `skip` (not selected) are stepped over: their buffers are
 * never read, copied or decompressed. */
#ifndef XCHG_IPC_DECODE_H
#define XCHG_IPC_DECODE_H

#include "ipc/array.h"
#include "ipc/flatbuf.h"
#include "ipc/schema.h"
#include "xchg/io.h"
#include "xchg/pool.h"

/* Returns the current dictionary with the given id (a borrowed pointer),
 * or NULL when none has been read. */
typedef ipc_array *(*ipc_dict_lookup_fn)(void *ctx, int64_t id);

/* Where a message body is: in memory, or (when mem is NULL) at `offset` in
 * a seekable source, fetched a buffer at a time so that unselected
 * buffers are never read.  In memory, the body is mem's bytes, or with
 * `data` set the bytes from there of a larger mem (a whole payload: no
 * slice of it made per batch); either way mem is what arrays that point
 * into the body keep alive. */
typedef struct ipc_body {
  xchg_buf *mem;
  xchg_source *src;
  int64_t offset;
  int64_t length;
  const uint8_t *data; /* NULL: the body is all of mem */
} ipc_body;

typedef struct ipc_decode_ctx {
  const xchg_ipc_read_options *opts;
  int big_endian;
  int metadata_version;   /* 0-based MetadataVersion: V4 = 3, V5 = 4 */
  int64_t message_index;  /* for error messages */
  int64_t message_offset; /* its prefix's byte, for error messages; -1: told by the caller */
  ipc_dict_lookup_fn lookup;
  void *lookup_ctx;
  xchg_decompress_fn on_decompress;
  void *on_decompress_ctx;
} ipc_decode_ctx;

typedef struct ipc_job ipc_job;

/* Decompression jobs of one or more planned batches. */
typedef struct ipc_jobs {
  ipc_job *items;
  int64_t count, capacity;
  int64_t bytes;   /* decompressed bytes in all jobs */
  int64_t *starts; /* after ipc_jobs_split: task t runs jobs [starts[t], starts[t+1]) */
} ipc_jobs;

/* An array of no rows of f's type (its value type when as_value): every
 * buffer absent but the one offset of a type with offsets (static zeros),
 * every child empty (all of them: a dictionary holds its whole value type;
 * a dictionary-encoded field gets an empty dictionary); NULL when out of
 * memory. */
ipc_array *ipc_empty_array(const ipc_field *f, int as_value);

/* Step 1: plans the RecordBatch table `batch` into a struct array with one
 * child per selected column, adding its decompression jobs to jobs.  With
 * dictionary_values set, the columns are decoded as the value types of
 * their dictionary-encoded fields, as a DictionaryBatch requires. */
xchg_status ipc_decode_plan(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                            const ipc_field *columns, int64_t n_columns, int dictionary_values,
                            ipc_jobs *jobs, ipc_array **out, xchg_error *err);

/* Step 2: runs and clears the jobs; pool may be NULL (run inline).  Each
 * pool task gets at least task_bytes of output.  On failure,
 * *failed_message (may be NULL) is the index of the message whose buffer
 * failed. */
xchg_status ipc_jobs_run(ipc_jobs *jobs, xchg_pool *pool, int64_t task_bytes,
                         int64_t *failed_message, xchg_error *err);

/* Step 2 in pieces, for callers that schedule the work themselves:
 * ipc_jobs_split cuts the jobs into tasks of at least task_bytes (about
 * four per thread, so that uneven buffers still balance) and returns how
 * many; each task is then run once, on any thread, by ipc_jobs_run_task;
 * ipc_jobs_finish reports the first failure as ipc_jobs_run does. */
int64_t ipc_jobs_split(ipc_jobs *jobs, int threads, int64_t task_bytes);
void ipc_jobs_run_task(ipc_jobs *jobs, int64_t task);
xchg_status ipc_jobs_finish(ipc_jobs *jobs, int64_t *failed_message, xchg_error *err);

/* Drops the jobs added after the first `count` (those of a batch whose
 * planning failed). */
void ipc_jobs_truncate(ipc_jobs *jobs, int64_t count);
void ipc_jobs_free(ipc_jobs *jobs);

/* Step 3: validates a planned array whose jobs have run. */
xchg_status ipc_decode_validate(const ipc_decode_ctx *ctx, const ipc_field *columns,
                                int64_t n_columns, int dictionary_values, ipc_array *root,
                                xchg_error *err);

/* All three steps for one batch, inline. */
xchg_status ipc_decode_batch(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                             const ipc_field *columns, int64_t n_columns, int dictionary_values,
                             ipc_array **out, xchg_error *err);

/* Per top-level column of the RecordBatch table `batch`: its body bytes
 * on the wire (wire[i]) and what they decode to (decoded[i]: a compressed
 * buffer's declared length, -1 when body->mem is NULL).  Reads no body
 * bytes but the 8-byte length prefixes of compressed buffers. */
xchg_status ipc_column_bytes(const ipc_decode_ctx *ctx, const fb_table *batch, const ipc_body *body,
                             const ipc_field *columns, int64_t n_columns, int64_t *wire,
                             int64_t *decoded, xchg_error *err);

/* Number of IPC buffers of a field's own layout (children excluded), not
 * counting the variadic buffers of views: as dictionary indices unless
 * as_value; a union before metadata V5 (0-based metadata_version 4) has
 * a validity buffer too. */
int64_t ipc_field_buffer_count(const ipc_field *f, int as_value, int metadata_version);

/* Counts the spans of every field of the schema (ipc_field.span_nodes),
 * for decoders that plan many batches of one schema. */
void ipc_schema_count_spans(ipc_schema *schema);

/* Number of buffers of a field's C Data array (children excluded): IPC's,
 * as metadata V5 lays them out, and for a view type its n_data variadic
 * data buffers and the buffer of their sizes. */
int64_t ipc_field_c_buffer_count(const ipc_field *f, int as_value, int64_t n_data);

/* The body compression declared by a RecordBatch table. */
xchg_status ipc_batch_compression(const fb_table *batch, xchg_block_codec *out, xchg_error *err);

/* Refuses read options that no reader can follow, XCHG_EINVAL naming
 * `who` (the call given them): a validation level that is neither of
 * xchg_validation's, which would otherwise pass for one of them, and a
 * negative cap or task_bytes, named. */
xchg_status ipc_read_options_check(const xchg_ipc_read_options *o, const char *who,
                                   xchg_error *err);

#endif
