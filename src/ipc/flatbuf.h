/* flatbuf.h — a bounds-checked reader for the FlatBuffers that carry Arrow
 * IPC metadata (Message.fbs, Schema.fbs, File.fbs).
 *
 * Arrow metadata is tiny next to the data it describes, so this reader
 * favours checking every offset on access over speed: a table, vector or
 * string is only handed out once it is known to lie inside the buffer.
 * Accessors return -1 for malformed input, 0 for an absent field and 1 for
 * a present one; the caller turns -1 into an error naming the field. */
#ifndef XCHG_IPC_FLATBUF_H
#define XCHG_IPC_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct fb_table {
  const uint8_t *base; /* the whole flatbuffer */
  size_t size;
  size_t pos;    /* offset of the table */
  size_t vtable; /* offset of its vtable */
  uint16_t vtable_size;
  uint16_t table_size;
} fb_table;

typedef struct fb_vector {
  const uint8_t *base;
  size_t size;
  size_t pos; /* offset of the first element */
  uint32_t count;
  uint32_t elem_size;
} fb_vector;

static inline uint16_t fb_load_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t fb_load_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t fb_load_u64(const uint8_t *p) {
  return (uint64_t)fb_load_u32(p) | ((uint64_t)fb_load_u32(p + 4) << 32);
}

/* The root table of a flatbuffer of size bytes. */
int fb_root(const uint8_t *base, size_t size, fb_table *out);

/* Scalar fields by vtable slot; absent fields give the default. */
int fb_u8(const fb_table *t, int slot, uint8_t dflt, uint8_t *out);
int fb_i16(const fb_table *t, int slot, int16_t dflt, int16_t *out);
int fb_i32(const fb_table *t, int slot, int32_t dflt, int32_t *out);
int fb_i64(const fb_table *t, int slot, int64_t dflt, int64_t *out);

/* A sub-table, a string (not NUL-terminated in general; len excludes the
 * terminator) and a vector whose elements are elem_size bytes (4 for
 * vectors of tables or strings). */
int fb_table_field(const fb_table *t, int slot, fb_table *out);
int fb_string(const fb_table *t, int slot, const char **out, uint32_t *len);
int fb_vector_field(const fb_table *t, int slot, uint32_t elem_size, fb_vector *out);

/* Element i of a vector of tables / strings; address of element i of a
 * vector of structs or scalars (i < count, checked by the caller). */
int fb_vector_table(const fb_vector *v, uint32_t i, fb_table *out);
int fb_vector_string(const fb_vector *v, uint32_t i, const char **out, uint32_t *len);
static inline const uint8_t *fb_vector_elem(const fb_vector *v, uint32_t i) {
  return v->base + v->pos + (size_t)i * v->elem_size;
}

#endif
