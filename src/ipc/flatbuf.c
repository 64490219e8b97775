/* flatbuf.c — see flatbuf.h: the accessors of strings and of vectors'
 * elements (the others are inline there). */
#include "ipc/flatbuf.h"

static int string_at(const uint8_t *base, size_t size, size_t pos, const char **out,
                     uint32_t *len) {
  if (!fb_in_bounds(size, pos, 4)) return -1;
  uint32_t n = fb_load_u32(base + pos);
  if (!fb_in_bounds(size, pos + 4, (size_t)n)) return -1;
  *out = (const char *)base + pos + 4;
  *len = n;
  return 1;
}

int fb_string(const fb_table *t, int slot, const char **out, uint32_t *len) {
  size_t target;
  int rc = fb_field_target(t, slot, &target);
  if (rc <= 0) return rc;
  return string_at(t->base, t->size, target, out, len);
}

int fb_vector_table(const fb_vector *v, uint32_t i, fb_table *out) {
  size_t target;
  if (i >= v->count || fb_follow(v->base, v->size, v->pos + (size_t)i * 4, &target) < 0) return -1;
  return fb_table_at(v->base, v->size, target, out);
}

int fb_vector_string(const fb_vector *v, uint32_t i, const char **out, uint32_t *len) {
  size_t target;
  if (i >= v->count || fb_follow(v->base, v->size, v->pos + (size_t)i * 4, &target) < 0) return -1;
  return string_at(v->base, v->size, target, out, len);
}
