/* coalesce.h — record batches of many blocks appended straight into one
 * output batch (private to src/shuffle).
 *
 * A coalescer holds the output batch being built: per field of the schema
 * (depth first, as IPC lays out field nodes), its length, null count and
 * growable buffers.  Appending a record batch walks its field nodes and
 * buffers once, in place on the wire, and writes each selected buffer's
 * bytes into the tail of its output buffer: copied, or decompressed there
 * when the body is compressed and the whole buffer is wanted; offsets
 * rebased onto the values before them, validity and boolean bits shifted
 * to the output's bit position, view and union offsets moved past the
 * values before them, list and run-end children cut to the range their
 * parent uses.  Values that must be read before they are placed (offsets,
 * type ids, run ends, views, bitmaps) of a compressed body are
 * decompressed first into a scratch arena reused from batch to batch.
 *
 * Nothing is allocated per record batch once the output buffers have
 * grown to a batch's size: buffers keep the previous batch's sizes as
 * their first reservation.  Finishing hands the buffers to a "+s" array,
 * which is validated as the IPC reader validates its batches. */
#ifndef XCHG_SHUFFLE_COALESCE_H
#define XCHG_SHUFFLE_COALESCE_H

#include <stdint.h>

#include "ipc/array.h"
#include "ipc/decode.h"
#include "ipc/flatbuf.h"
#include "ipc/schema.h"
#include "xchg/codec.h"
#include "xchg/ipc.h"

/* A RecordBatch message as on the wire: its table read, its body in
 * memory (as long as the append that reads it). */
typedef struct wire_batch {
  int64_t rows;
  int version; /* 0-based MetadataVersion */
  xchg_block_codec codec;
  fb_vector nodes, buffers, variadic;
  const uint8_t *node_at, *buffer_at; /* the first FieldNode and Buffer (16 bytes each) */
  const uint8_t *body;
  int64_t body_length;
  int64_t bytes; /* what its buffers decode to, about (all its columns): its body, or for a
                    compressed body the lengths its buffers declare */
} wire_batch;

/* Reads the RecordBatch table `batch` of a message of metadata version
 * `version` whose body is body[0, body_length). */
xchg_status wire_batch_open(const fb_table *batch, int version, const uint8_t *body,
                            int64_t body_length, wire_batch *out, xchg_error *err);

typedef struct coalescer coalescer;

/* A coalescer of the selected columns of schema (which must outlive it),
 * checking what it reads with opts (which too), its first buffers sized
 * for about target_rows rows or target_bytes (as wire_batch.bytes counts
 * them), whichever the blocks reach first. */
xchg_status coalescer_create(const ipc_schema *schema, const xchg_ipc_read_options *opts,
                             int64_t target_rows, int64_t target_bytes, coalescer **out,
                             xchg_error *err);

/* Appends the rows of b.  When the output cannot take them (its 32-bit
 * offsets would pass what they address) nothing is appended and *fits is
 * 0: finish the batch and append b to the next one.  On an error the
 * output is left as it was before the call. */
xchg_status coalescer_append(coalescer *c, const wire_batch *b, int *fits, xchg_error *err);

/* Rows appended since the last finish, and the bytes their buffers take. */
int64_t coalescer_rows(const coalescer *c);
int64_t coalescer_bytes(const coalescer *c);

/* Hands the rows appended so far out as a "+s" array of the selected
 * columns (dictionary-encoded fields take their values from lookup),
 * validated; the coalescer starts over empty, failing or not. */
xchg_status coalescer_finish(coalescer *c, ipc_dict_lookup_fn lookup, void *lookup_ctx,
                             ipc_array **out, xchg_error *err);

void coalescer_free(coalescer *c);

#endif
