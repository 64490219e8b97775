/* fbbuild.c — see fbbuild.h. */
#include <stdlib.h>
#include <string.h>

#include "ipc/fbbuild.h"

void fbb_init(fbb *b) {
  memset(b, 0, sizeof *b);
  b->max_align = 1;
}

void fbb_free(fbb *b) {
  free(b->buf);
  memset(b, 0, sizeof *b);
}

/* Makes room for n more bytes in front of the data. */
static int reserve(fbb *b, size_t n) {
  if (b->failed) return 0;
  if (b->cap - b->len >= n) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) {
    if (cap > SIZE_MAX / 2) {
      b->failed = 1;
      return 0;
    }
    cap *= 2;
  }
  uint8_t *buf = malloc(cap);
  if (!buf) {
    b->failed = 1;
    return 0;
  }
  if (b->len) memcpy(buf + cap - b->len, b->buf + b->cap - b->len, b->len);
  free(b->buf);
  b->buf = buf;
  b->cap = cap;
  return 1;
}

static uint8_t *front(fbb *b) { return b->buf + b->cap - b->len; }

static void push_bytes(fbb *b, const void *p, size_t n) {
  if (n == 0 || !reserve(b, n)) return;
  b->len += n;
  memcpy(front(b), p, n);
}

static void push_zeros(fbb *b, size_t n) {
  if (n == 0 || !reserve(b, n)) return;
  b->len += n;
  memset(front(b), 0, n);
}

static void push_le(fbb *b, uint64_t v, int size) {
  uint8_t bytes[8];
  for (int i = 0; i < size; i++) bytes[i] = (uint8_t)(v >> (8 * i));
  push_bytes(b, bytes, (size_t)size);
}

/* Pads so that an object of `size` bytes pushed next ends up aligned to
 * `align` (a power of two) in the finished buffer, whose total size is a
 * multiple of the largest alignment used. */
static void prep(fbb *b, size_t align, size_t size) {
  if (align > b->max_align) b->max_align = align;
  size_t pad = (align - ((b->len + size) & (align - 1))) & (align - 1);
  push_zeros(b, pad);
}

/* A uoffset stored at the position about to be pushed, pointing to ref. */
static void push_uoffset(fbb *b, fb_ref ref) {
  prep(b, 4, 4);
  push_le(b, (uint32_t)(b->len + 4 - ref), 4);
}

fb_ref fbb_string(fbb *b, const char *s, size_t n) {
  prep(b, 4, n + 1);
  push_zeros(b, 1);
  push_bytes(b, s, n);
  push_le(b, (uint32_t)n, 4);
  return (fb_ref)b->len;
}

fb_ref fbb_vector_bytes(fbb *b, const void *elems, size_t count, size_t elem_size, size_t align) {
  prep(b, 4, count * elem_size);
  prep(b, align, count * elem_size);
  push_bytes(b, elems, count * elem_size);
  push_le(b, (uint32_t)count, 4);
  return (fb_ref)b->len;
}

fb_ref fbb_vector_refs(fbb *b, const fb_ref *refs, size_t count) {
  prep(b, 4, count * 4);
  for (size_t i = count; i-- > 0;) push_uoffset(b, refs[i]);
  push_le(b, (uint32_t)count, 4);
  return (fb_ref)b->len;
}

void fbb_table_start(fbb *b) {
  b->in_table = 1;
  b->n_fields = 0;
}

static void add_field(fbb *b, int slot, int size, int is_ref, uint64_t value) {
  if (b->n_fields >= FBB_MAX_SLOTS || slot < 0 || slot >= FBB_MAX_SLOTS) {
    b->failed = 1; /* a programming error: more slots than any Arrow table has */
    return;
  }
  b->fields[b->n_fields++] = (fbb_field){slot, size, is_ref, value};
}

void fbb_add_scalar(fbb *b, int slot, int size, uint64_t value) {
  add_field(b, slot, size, 0, value);
}

void fbb_add_ref(fbb *b, int slot, fb_ref ref) { add_field(b, slot, 4, 1, ref); }

fb_ref fbb_table_end(fbb *b) {
  uint16_t field_pos[FBB_MAX_SLOTS] = {0}; /* distance from the end, per slot */
  size_t at[FBB_MAX_SLOTS] = {0};
  int n_slots = 0;
  size_t start = b->len;
  /* Largest fields first, so that each needs little or no padding. */
  for (int size = 8; size >= 1; size /= 2) {
    for (size_t i = 0; i < b->n_fields; i++) {
      const fbb_field *f = &b->fields[i];
      if (f->size != size) continue;
      if (f->is_ref) {
        push_uoffset(b, (fb_ref)f->value);
      } else {
        prep(b, (size_t)size, (size_t)size);
        push_le(b, f->value, size);
      }
      at[f->slot] = b->len;
      if (f->slot + 1 > n_slots) n_slots = f->slot + 1;
    }
  }
  prep(b, 4, 4);
  push_zeros(b, 4); /* the soffset to the vtable, filled in below */
  size_t table = b->len;
  for (int s = 0; s < n_slots; s++) field_pos[s] = at[s] ? (uint16_t)(table - at[s]) : 0;
  uint16_t vtable[2 + FBB_MAX_SLOTS];
  vtable[0] = (uint16_t)(4 + 2 * n_slots);
  vtable[1] = (uint16_t)(table - start);
  for (int s = 0; s < n_slots; s++) vtable[2 + s] = field_pos[s];
  for (int s = 1 + n_slots; s >= 0; s--) push_le(b, vtable[s], 2);
  b->in_table = 0;
  if (b->failed) return 0;
  /* The vtable sits just before the table: soffset = table - vtable > 0. */
  int32_t soffset = (int32_t)(b->len - table);
  uint8_t *p = b->buf + b->cap - table;
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)((uint32_t)soffset >> (8 * i));
  return (fb_ref)table;
}

const uint8_t *fbb_finish(fbb *b, fb_ref root, size_t *size) {
  prep(b, b->max_align < 8 ? 8 : b->max_align, 4);
  push_uoffset(b, root);
  if (b->failed) return NULL;
  *size = b->len;
  return front(b);
}
