/* decode.h — turning one RecordBatch message (metadata + body) into arrays.
 *
 * The decoder walks the schema depth first, taking field nodes and buffers
 * from the message in the order the IPC format lays them out, checks every
 * offset and length against the body, decompresses compressed buffers
 * straight into their final aligned buffers, slices uncompressed ones out
 * of the body without copying, byte-swaps big-endian data, and validates
 * the result so that no consumer can be led out of bounds. */
#ifndef XCHG_IPC_DECODE_H
#define XCHG_IPC_DECODE_H

#include "ipc/array.h"
#include "ipc/flatbuf.h"
#include "ipc/schema.h"

/* Returns the current dictionary with the given id (a borrowed pointer),
 * or NULL when none has been read. */
typedef ipc_array *(*ipc_dict_lookup_fn)(void *ctx, int64_t id);

typedef struct ipc_decode_ctx {
  const xchg_read_options *opts;
  int big_endian;
  int metadata_version;   /* 0-based MetadataVersion: V4 = 3, V5 = 4 */
  int64_t message_index;  /* for error messages */
  int64_t body_offset;    /* byte offset of the body in the input */
  ipc_dict_lookup_fn lookup;
  void *lookup_ctx;
} ipc_decode_ctx;

/* Decodes the RecordBatch table `batch` whose body is `body` into a struct
 * array with one child per column.  With dictionary_values set, the columns
 * are decoded as the value types of their (dictionary-encoded) fields, as a
 * DictionaryBatch requires. */
xchg_status ipc_decode_batch(const ipc_decode_ctx *ctx, const fb_table *batch, xchg_buf *body,
                             const ipc_field *columns, int64_t n_columns, int dictionary_values,
                             ipc_array **out, xchg_error *err);

/* The body compression declared by a RecordBatch table. */
xchg_status ipc_batch_compression(const fb_table *batch, xchg_block_codec *out, xchg_error *err);

#endif
