/* flatbuf.c — see flatbuf.h.  Offsets are checked with size arithmetic that
 * cannot overflow: every position is < size before anything is added. */
#include "ipc/flatbuf.h"

static int in_bounds(size_t size, size_t pos, size_t len) {
  return pos <= size && len <= size - pos;
}

static int table_at(const uint8_t *base, size_t size, size_t pos, fb_table *out) {
  if (!in_bounds(size, pos, 4)) return -1;
  int32_t soffset = (int32_t)fb_load_u32(base + pos);
  int64_t vt = (int64_t)pos - soffset;
  if (vt < 0 || !in_bounds(size, (size_t)vt, 4)) return -1;
  uint16_t vt_size = fb_load_u16(base + vt);
  uint16_t tbl_size = fb_load_u16(base + vt + 2);
  if (vt_size < 4 || (vt_size & 1) || !in_bounds(size, (size_t)vt, vt_size)) return -1;
  if (tbl_size < 4 || !in_bounds(size, pos, tbl_size)) return -1;
  out->base = base;
  out->size = size;
  out->pos = pos;
  out->vtable = (size_t)vt;
  out->vtable_size = vt_size;
  out->table_size = tbl_size;
  return 1;
}

int fb_root(const uint8_t *base, size_t size, fb_table *out) {
  if (size < 8) return -1;
  return table_at(base, size, fb_load_u32(base), out);
}

/* Offset of a field inside the table, 0 when absent, -1 when the field
 * would run past the end of the table. */
static int64_t field_offset(const fb_table *t, int slot, size_t width) {
  size_t entry = 4 + 2 * (size_t)slot;
  if (entry + 2 > t->vtable_size) return 0;
  uint16_t off = fb_load_u16(t->base + t->vtable + entry);
  if (off == 0) return 0;
  if ((size_t)off + width > t->table_size) return -1;
  return off;
}

#define FB_SCALAR(name, type, width, load)                      \
  int name(const fb_table *t, int slot, type dflt, type *out) { \
    int64_t off = field_offset(t, slot, width);                 \
    if (off < 0) return -1;                                     \
    *out = off ? (type)load(t->base + t->pos + off) : dflt;     \
    return off ? 1 : 0;                                         \
  }
static uint8_t load_u8(const uint8_t *p) { return *p; }
FB_SCALAR(fb_u8, uint8_t, 1, load_u8)
FB_SCALAR(fb_i16, int16_t, 2, fb_load_u16)
FB_SCALAR(fb_i32, int32_t, 4, fb_load_u32)
FB_SCALAR(fb_i64, int64_t, 8, fb_load_u64)

/* Follows the uoffset stored at absolute position pos. */
static int follow(const uint8_t *base, size_t size, size_t pos, size_t *target) {
  if (!in_bounds(size, pos, 4)) return -1;
  uint32_t rel = fb_load_u32(base + pos);
  if (rel > size - pos) return -1;
  *target = pos + rel;
  return 1;
}

static int field_target(const fb_table *t, int slot, size_t *target) {
  int64_t off = field_offset(t, slot, 4);
  if (off <= 0) return (int)off;
  return follow(t->base, t->size, t->pos + (size_t)off, target);
}

int fb_table_field(const fb_table *t, int slot, fb_table *out) {
  size_t target;
  int rc = field_target(t, slot, &target);
  if (rc <= 0) return rc;
  return table_at(t->base, t->size, target, out);
}

static int string_at(const uint8_t *base, size_t size, size_t pos, const char **out,
                     uint32_t *len) {
  if (!in_bounds(size, pos, 4)) return -1;
  uint32_t n = fb_load_u32(base + pos);
  if (!in_bounds(size, pos + 4, (size_t)n)) return -1;
  *out = (const char *)base + pos + 4;
  *len = n;
  return 1;
}

int fb_string(const fb_table *t, int slot, const char **out, uint32_t *len) {
  size_t target;
  int rc = field_target(t, slot, &target);
  if (rc <= 0) return rc;
  return string_at(t->base, t->size, target, out, len);
}

int fb_vector_field(const fb_table *t, int slot, uint32_t elem_size, fb_vector *out) {
  size_t target;
  int rc = field_target(t, slot, &target);
  if (rc <= 0) return rc;
  if (!in_bounds(t->size, target, 4)) return -1;
  uint32_t count = fb_load_u32(t->base + target);
  if ((uint64_t)count * elem_size > t->size - target - 4) return -1;
  out->base = t->base;
  out->size = t->size;
  out->pos = target + 4;
  out->count = count;
  out->elem_size = elem_size;
  return 1;
}

int fb_vector_table(const fb_vector *v, uint32_t i, fb_table *out) {
  size_t target;
  if (i >= v->count || follow(v->base, v->size, v->pos + (size_t)i * 4, &target) < 0) return -1;
  return table_at(v->base, v->size, target, out);
}

int fb_vector_string(const fb_vector *v, uint32_t i, const char **out, uint32_t *len) {
  size_t target;
  if (i >= v->count || follow(v->base, v->size, v->pos + (size_t)i * 4, &target) < 0) return -1;
  return string_at(v->base, v->size, target, out, len);
}
