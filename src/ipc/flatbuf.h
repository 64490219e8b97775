/* flatbuf.h — a bounds-checked reader for the FlatBuffers that carry Arrow
 * IPC metadata (Message.fbs, Schema.fbs, File.fbs).
 *
 * Every offset is checked on access: a table, vector or string is only
 * handed out once it is known to lie inside the buffer.
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

/* Offsets are checked with size arithmetic that cannot overflow: every
 * position is < size before anything is added.  The accessors a decoded
 * batch calls a dozen times each (the Message and RecordBatch tables) are
 * inline: a call's overhead was a tenth of planning a small batch. */
static inline int fb_in_bounds(size_t size, size_t pos, size_t len) {
  return pos <= size && len <= size - pos;
}

/* The table at pos, its vtable checked to lie inside the buffer. */
static inline int fb_table_at(const uint8_t *base, size_t size, size_t pos, fb_table *out) {
  if (!fb_in_bounds(size, pos, 4)) return -1;
  int32_t soffset = (int32_t)fb_load_u32(base + pos);
  int64_t vt = (int64_t)pos - soffset;
  if (vt < 0 || !fb_in_bounds(size, (size_t)vt, 4)) return -1;
  uint16_t vt_size = fb_load_u16(base + vt);
  uint16_t tbl_size = fb_load_u16(base + vt + 2);
  if (vt_size < 4 || (vt_size & 1) || !fb_in_bounds(size, (size_t)vt, vt_size)) return -1;
  if (tbl_size < 4 || !fb_in_bounds(size, pos, tbl_size)) return -1;
  *out = (fb_table){base, size, pos, (size_t)vt, vt_size, tbl_size};
  return 1;
}

/* The root table of a flatbuffer of size bytes. */
static inline int fb_root(const uint8_t *base, size_t size, fb_table *out) {
  if (size < 8) return -1;
  return fb_table_at(base, size, fb_load_u32(base), out);
}

/* Offset of a field inside the table, 0 when absent, -1 when the field
 * would run past the end of the table. */
static inline int64_t fb_field_offset(const fb_table *t, int slot, size_t width) {
  size_t entry = 4 + 2 * (size_t)slot;
  if (entry + 2 > t->vtable_size) return 0;
  uint16_t off = fb_load_u16(t->base + t->vtable + entry);
  if (off == 0) return 0;
  if ((size_t)off + width > t->table_size) return -1;
  return off;
}

/* Scalar fields by vtable slot; absent fields give the default. */
#define FB_SCALAR(name, type, width, load)                                    \
  static inline int name(const fb_table *t, int slot, type dflt, type *out) { \
    int64_t off = fb_field_offset(t, slot, width);                            \
    if (off < 0) return -1;                                                   \
    *out = off ? (type)load(t->base + t->pos + off) : dflt;                   \
    return off ? 1 : 0;                                                       \
  }
static inline uint8_t fb_load_u8(const uint8_t *p) { return *p; }
FB_SCALAR(fb_u8, uint8_t, 1, fb_load_u8)
FB_SCALAR(fb_i16, int16_t, 2, fb_load_u16)
FB_SCALAR(fb_i32, int32_t, 4, fb_load_u32)
FB_SCALAR(fb_i64, int64_t, 8, fb_load_u64)
#undef FB_SCALAR

/* Follows the uoffset stored at absolute position pos. */
static inline int fb_follow(const uint8_t *base, size_t size, size_t pos, size_t *target) {
  if (!fb_in_bounds(size, pos, 4)) return -1;
  uint32_t rel = fb_load_u32(base + pos);
  if (rel > size - pos) return -1;
  *target = pos + rel;
  return 1;
}

/* Where the offset field in slot points: 1 and *target, 0 when absent. */
static inline int fb_field_target(const fb_table *t, int slot, size_t *target) {
  int64_t off = fb_field_offset(t, slot, 4);
  if (off <= 0) return (int)off;
  return fb_follow(t->base, t->size, t->pos + (size_t)off, target);
}

/* A sub-table; a vector whose elements are elem_size bytes (4 for vectors
 * of tables or strings). */
static inline int fb_table_field(const fb_table *t, int slot, fb_table *out) {
  size_t target;
  int rc = fb_field_target(t, slot, &target);
  if (rc <= 0) return rc;
  return fb_table_at(t->base, t->size, target, out);
}

static inline int fb_vector_field(const fb_table *t, int slot, uint32_t elem_size, fb_vector *out) {
  size_t target;
  int rc = fb_field_target(t, slot, &target);
  if (rc <= 0) return rc;
  if (!fb_in_bounds(t->size, target, 4)) return -1;
  uint32_t count = fb_load_u32(t->base + target);
  if ((uint64_t)count * elem_size > t->size - target - 4) return -1;
  *out = (fb_vector){t->base, t->size, target + 4, count, elem_size};
  return 1;
}

/* A string (not NUL-terminated in general; len excludes the terminator). */
int fb_string(const fb_table *t, int slot, const char **out, uint32_t *len);

/* Element i of a vector of tables / strings; address of element i of a
 * vector of structs or scalars (i < count, checked by the caller). */
int fb_vector_table(const fb_vector *v, uint32_t i, fb_table *out);
int fb_vector_string(const fb_vector *v, uint32_t i, const char **out, uint32_t *len);
static inline const uint8_t *fb_vector_elem(const fb_vector *v, uint32_t i) {
  return v->base + v->pos + (size_t)i * v->elem_size;
}

#endif
