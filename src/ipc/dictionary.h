/* dictionary.h — the dictionaries a reader has seen, by id.
 *
 * Each dictionary id of the schema is declared with the field that defines
 * its value type (fields sharing an id must agree on it).  Dictionary
 * batches then set the values (replacement) or append to them (delta);
 * record batches take a reference on the values current at decode time, so
 * a later replacement never changes a batch already handed out. */
#ifndef XCHG_IPC_DICTIONARY_H
#define XCHG_IPC_DICTIONARY_H

#include "ipc/array.h"
#include "ipc/decode.h"
#include "ipc/flatbuf.h"
#include "ipc/schema.h"

typedef struct ipc_dictionary {
  int64_t id;
  const ipc_field *field;
  ipc_array *values; /* NULL until the first dictionary batch */
  int used;          /* a selected field needs it */
} ipc_dictionary;

typedef struct ipc_dictionaries {
  ipc_dictionary *items;
  int64_t count;
} ipc_dictionaries;

xchg_status ipc_dictionaries_declare(ipc_dictionaries *d, const ipc_field *field, xchg_error *err);
const ipc_field *ipc_dictionaries_field(const ipc_dictionaries *d, int64_t id);
/* The current values of dictionary id (borrowed), or NULL. Matches
 * ipc_dict_lookup_fn. */
ipc_array *ipc_dictionaries_lookup(void *d, int64_t id);
/* Replaces the values of id, or appends to them when delta is set.  A
 * dictionary whose buffers would then hold more than max_bytes in all is
 * refused (XCHG_ELIMIT) and left as it was. */
xchg_status ipc_dictionaries_update(ipc_dictionaries *d, int64_t id, ipc_array *values, int delta,
                                    int64_t max_bytes, xchg_error *err);
void ipc_dictionaries_free(ipc_dictionaries *d);
/* Marks the dictionaries that the schema's selected fields use. */
/* A DictionaryBatch message's header, checked: its id names a dictionary
 * of the schema (field is the field whose dictionary it is). */
typedef struct ipc_dictionary_batch {
  int64_t id;
  int delta;
  fb_table data;
  const ipc_field *field;
} ipc_dictionary_batch;

/* Reads the header of message `index` (at byte `offset`, for messages);
 * XCHG_EFORMAT naming both when it is invalid or no field has its id. */
xchg_status ipc_dictionary_batch_read(const ipc_dictionaries *d, const fb_table *header,
                                      int64_t index, int64_t offset, ipc_dictionary_batch *out,
                                      xchg_error *err);

/* Decodes the batch's body and makes it the dictionary of its id (or, for
 * a delta, appends it), within max_bytes; a failure to add it names
 * message `index` at byte `offset` (decoding errors name their own). */
xchg_status ipc_dictionary_batch_apply(ipc_dictionaries *d, const ipc_dictionary_batch *b,
                                       const ipc_decode_ctx *ctx, const ipc_body *body,
                                       int64_t max_bytes, int64_t index, int64_t offset,
                                       xchg_error *err);

xchg_status ipc_dictionaries_mark_used(ipc_dictionaries *d, const ipc_schema *schema,
                                       xchg_error *err);
int ipc_dictionaries_used(const ipc_dictionaries *d, int64_t id);

/* Concatenates two arrays of the type of field (as dictionary values, when
 * the field is dictionary-encoded) into a new array. */
xchg_status ipc_array_concat(const ipc_field *field, int as_value, ipc_array *a, ipc_array *b,
                             ipc_array **out, xchg_error *err);

/* The run of a run-end encoded array holding logical row `row`: the first
 * of its `runs` ends (`width`-byte integers) past row; runs when none is. */
int64_t ipc_run_containing(const uint8_t *ends, int width, int64_t runs, int64_t row);

#endif
