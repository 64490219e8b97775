/* fbbuild.h — a small FlatBuffer builder for the metadata the IPC writer
 * emits (Message.fbs, Schema.fbs, File.fbs).
 *
 * Written from the FlatBuffers binary format: a buffer starts with a
 * uoffset to its root table; a table starts with an soffset to its vtable
 * (table position minus vtable position) followed by its fields; a vtable
 * holds its own size, the table's size and one uint16 offset per field slot
 * (0 = absent); vectors are a uint32 count followed by the elements; strings
 * are vectors of bytes with a NUL after them; every uoffset points forward
 * (target = where the offset is stored + its value).
 *
 * Like the reference implementation, the buffer is built back to front, so
 * that everything a table refers to already exists (at a higher address)
 * when the table is written.  An fb_ref names an object by its distance from
 * the end of the buffer, which does not change as the buffer grows.
 *
 * Allocation failures are sticky: every call after one is a no-op and
 * fbb_finish reports the failure, so callers check once at the end. */
#ifndef XCHG_IPC_FBBUILD_H
#define XCHG_IPC_FBBUILD_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t fb_ref;

#define FBB_MAX_SLOTS 16

typedef struct fbb_field {
  int slot;
  int size;   /* 1, 2, 4 or 8 */
  int is_ref; /* the value is an fb_ref to turn into a uoffset */
  uint64_t value;
} fbb_field;

typedef struct fbb {
  uint8_t *buf; /* the data lives at buf + cap - len */
  size_t cap, len;
  size_t max_align;
  int failed;
  int in_table;
  size_t n_fields;
  fbb_field fields[FBB_MAX_SLOTS];
} fbb;

void fbb_init(fbb *b);
void fbb_free(fbb *b);

/* A string of n bytes (a NUL is added). */
fb_ref fbb_string(fbb *b, const char *s, size_t n);

/* A vector of count scalars or structs of elem_size bytes each, given as
 * little-endian bytes, aligned to align. */
fb_ref fbb_vector_bytes(fbb *b, const void *elems, size_t count, size_t elem_size, size_t align);

/* A vector of tables or strings. */
fb_ref fbb_vector_refs(fbb *b, const fb_ref *refs, size_t count);

/* Tables: start, add fields by slot (values equal to the schema's default
 * may be left out by the caller), end.  Tables do not nest: build what a
 * table refers to before starting it. */
void fbb_table_start(fbb *b);
void fbb_add_scalar(fbb *b, int slot, int size, uint64_t value);
void fbb_add_ref(fbb *b, int slot, fb_ref ref);
fb_ref fbb_table_end(fbb *b);

/* Writes the root offset; returns the finished flatbuffer (valid until
 * fbb_free) and its size, or NULL after an allocation failure. */
const uint8_t *fbb_finish(fbb *b, fb_ref root, size_t *size);

#endif
