/* writer_internal.h — the pieces of the IPC writer (src/ipc/writer*.c).
 *
 * The writer describes its columns with the reader's ipc_field (so that the
 * two agree on what a type is and how it is byte-swapped) but builds them
 * from an ArrowSchema.  Each batch is first normalised into an ipc_array
 * (offset 0, offsets rebased, bitmaps shifted), which the serializer then
 * lays out as IPC buffers; coalescing concatenates normalised arrays with
 * the reader's ipc_array_concat. */
#ifndef XCHG_IPC_WRITER_INTERNAL_H
#define XCHG_IPC_WRITER_INTERNAL_H

#include "ipc/array.h"
#include "ipc/fbbuild.h"
#include "ipc/schema.h"
#include "xchg/writer.h"

/* Adds a Schema table for schema to b. */
fb_ref wr_schema_build(fbb *b, const ipc_schema *schema);

/* Adds a vector of KeyValue tables for metadata in the ArrowSchema.metadata
 * encoding (returns 0 when metadata is NULL or has no entries). */
fb_ref wr_metadata_build(fbb *b, const char *metadata);

/* Normalises rows [off, off+len) of a (off counts a->offset in) as field f
 * (its dictionary indices, unless as_value) into a new ipc_array whose
 * buffers start at row 0.  With copy = 0, buffers that need no change point
 * into a's memory, which must outlive the result; with copy = 1 every byte
 * is copied.  Dictionaries are normalised whole and attached. */
xchg_status wr_normalize(const ipc_field *f, int as_value, const struct ArrowArray *a, int64_t off,
                         int64_t len, int copy, ipc_array **out, xchg_error *err);

/* Non-zero when the first n rows of a and b (as field f; its dictionary
 * values when as_value) hold the same logical values: the same rows null,
 * equal values in the others, dictionary-encoded values compared through
 * their dictionaries (src/ipc/writer_compare.c). */
int wr_prefix_equal(const ipc_field *f, int as_value, const ipc_array *a, const ipc_array *b,
                    int64_t n);

/* Non-zero when every dictionary nested in `now` (the dictionaries of
 * dictionary-encoded fields inside f, at any depth) holds the values of the
 * one at the same place in `old` as its first rows.  A delta of f's own
 * dictionary needs it: a reader appends the new values to the old ones and
 * resolves all of their indices in the newer nested dictionaries. */
int wr_nested_dictionaries_extend(const ipc_field *f, int as_value, const ipc_array *old,
                                  const ipc_array *now);

/* Bytes held by the buffers of a, children and dictionaries included. */
int64_t wr_array_bytes(const ipc_array *a);

/* ---- the body of a batch (src/ipc/writer_body.c) ---- */

static inline int64_t wr_align_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

/* Stores the low `size` bytes of v at p, little-endian. */
static inline void wr_put_le(uint8_t *p, uint64_t v, int size) {
  for (int i = 0; i < size; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* One piece of a message body, written padded to the alignment. */
typedef struct wr_body_piece {
  const uint8_t *prefix; /* 8 bytes or NULL */
  const uint8_t *data;
  int64_t size;
} wr_body_piece;

typedef struct wr_out_buffer wr_out_buffer;

/* The field nodes, buffers and variadic buffer counts of a batch. */
typedef struct wr_batch_layout {
  uint8_t *nodes; /* 16 bytes per FieldNode */
  int64_t n_nodes, cap_nodes;
  wr_out_buffer *buffers;
  int64_t n_buffers, cap_buffers;
  int64_t *variadic;
  int64_t n_variadic, cap_variadic;
  int oom;
} wr_batch_layout;

/* Lays out field f of a (a normalised array) in IPC order; on a failed
 * allocation l->oom is set. */
void wr_lay_out(wr_batch_layout *l, const ipc_field *f, int as_value, const ipc_array *a);

/* Frees what l holds and empties it. */
void wr_layout_free(wr_batch_layout *l);

/* Swaps (for big-endian output) and compresses every buffer of l, on
 * opts->pool when there is one and the work is worth it. */
xchg_status wr_prepare_buffers(const xchg_ipc_write_options *opts, wr_batch_layout *l,
                               xchg_error *err);

/* Adds a RecordBatch table describing l (buffers prepared) to b; returns
 * the body pieces (l->n_buffers of them) and length. */
fb_ref wr_record_batch_build(const xchg_ipc_write_options *opts, fbb *b, int64_t length,
                             wr_batch_layout *l, wr_body_piece *pieces, int64_t *body_length);

#endif
