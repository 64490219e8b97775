/* coalesce_internal.h — what the files of the coalescer share:
 * coalesce.c (the coalescer, reading a wire batch's buffers and layout),
 * coalesce_append.c (appending a field's span, type by type) and
 * coalesce_rebase.c (offsets moved onto the values before them). */
#ifndef XCHG_SHUFFLE_COALESCE_INTERNAL_H
#define XCHG_SHUFFLE_COALESCE_INTERNAL_H

#include <stddef.h>
#include <string.h>

#include "base/cpu.h"
#include "shuffle/coalesce.h"

#define OUT_BUFFERS 3

/* The memory of one output buffer. */
typedef struct out_buf {
  xchg_buf *buf;
  uint8_t *data; /* buf's bytes, or NULL without buf */
  size_t cap;
  size_t last; /* size at the last finish: the first reservation of the next batch */
} out_buf;

/* One field of the output batch: all that an append changes.  The fields
 * are one array of these, so that the mark taken before each append, and
 * an undo, are one copy of it; b (its buffers' memory, which an undo keeps)
 * is set once, and copying it back changes nothing. */
typedef struct out_node {
  int64_t length, null_count;
  int64_t validity;         /* b[0] holds a validity bitmap (made at the first null) */
  size_t size[OUT_BUFFERS]; /* the bytes of each buffer in use */
  out_buf *b;
} out_node;

/* How a field's span is appended, from its type, decided once. */
typedef enum append_kind {
  APPEND_FIXED, /* validity, fixed-width values (dictionary indices too) */
  APPEND_BITS,  /* validity, boolean bits */
  APPEND_BINARY,
  APPEND_LIST, /* list, large list, map */
  APPEND_LIST_VIEW,
  APPEND_VIEW, /* binary and utf8 views */
  APPEND_STRUCT,
  APPEND_FIXED_LIST,
  APPEND_NULL,
  APPEND_UNION,
  APPEND_RUN_ENDS
} append_kind;

typedef struct flat_field {
  const ipc_field *f;
  append_kind kind;
  int64_t width; /* bytes per value (fixed), per offset (binary, lists), values per list (fixed) */
  int64_t kids, n_kids; /* kids[kids .. kids + n_kids): flat indices of its children */
  int8_t child_of[128]; /* unions: the child of each type id, or -1 */
} flat_field;

/* Scratch memory for values read before they are placed: one block,
 * grown (between batches) to hold what the largest batch needed. */
typedef struct scratch_chunk {
  struct scratch_chunk *next;
  max_align_t data[];
} scratch_chunk;

typedef struct scratch {
  uint8_t *main;
  size_t cap, used, extra;
  scratch_chunk *chunks;
} scratch;

struct coalescer {
  const ipc_schema *schema;
  const xchg_ipc_read_options *opts;
  int64_t target_rows, target_bytes;
  flat_field *fields;
  int64_t n_fields;
  int64_t *kids;
  int64_t *top;                  /* flat index of each top-level column */
  int64_t *selected, n_selected; /* of the selected ones */
  int64_t *runs, n_runs;         /* adjacent selected columns: fields [runs[2i], runs[2i+1]) */
  int64_t *buf_at, *n_var;       /* per field, for the batch being appended */
  int64_t n_buffers;             /* buffers of the batch being appended */
  int has_views;                 /* the layout varies from batch to batch */
  int layout_version;            /* of the batch buf_at was laid out for, or -1 */
  out_node *out, *marks;         /* the output, and as it was before this append */
  out_buf *mem;                  /* OUT_BUFFERS a field: the out nodes' b */
  int64_t rows, bytes;           /* of the output so far; bytes as wire_batch.bytes counts them */
  scratch scratch;
  /* The batch being appended. */
  const wire_batch *b;
  int64_t decoded;     /* bytes its compressed buffers declared so far */
  int64_t hint;        /* first reservations: this many times what the batch needs */
  int overflow;        /* an offset would pass what it addresses */
  const ipc_field *at; /* named in errors */
  xchg_error *err;
};

/* The length and null count of node i of wire batch b. */
static inline void coalesce_node_of(const wire_batch *b, int64_t i, int64_t *length,
                                    int64_t *nulls) {
  const uint8_t *node = b->node_at + 16 * i;
  *length = (int64_t)fb_load_u64(node);
  *nulls = (int64_t)fb_load_u64(node + 8);
}

/* Field fi's i-th child, as a flat index. */
static inline int64_t coalesce_kid(const coalescer *c, int64_t fi, int64_t i) {
  return c->kids[c->fields[fi].kids + i];
}

/* Reports "field 'f', buffer K: <what>" (no buffer when buffer is -1). */
xchg_status coalesce_fail(coalescer *c, int64_t buffer, xchg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reports that the output's 32-bit offsets cannot address `total` values. */
xchg_status coalesce_overflow(coalescer *c, int64_t total);

/* n bytes of the scratch arena, reset between batches; NULL when memory
 * runs out. */
void *coalesce_scratch_alloc(scratch *s, size_t n);

/* coalesce_reserve when buffer j of o has no room: grown (reallocated),
 * or NULL when memory runs out (reported). */
uint8_t *coalesce_grow(coalescer *c, out_node *o, int j, size_t extra);

/* Room for `extra` more bytes at the end of buffer j of o: where they go,
 * or NULL when memory runs out (reported).  Inline: every buffer of every
 * field of every block asks, and nearly always there is room. */
static inline uint8_t *coalesce_reserve(coalescer *c, out_node *o, int j, size_t extra) {
  out_buf *m = &o->b[j];
  if (m->data && extra <= m->cap - o->size[j]) return m->data + o->size[j];
  return coalesce_grow(c, o, j, extra);
}

/* Buffer k of the batch being appended: its range of the body. */
static inline void coalesce_spec_of(const wire_batch *b, int64_t k, int64_t *offset, int64_t *len) {
  const uint8_t *spec = b->buffer_at + 16 * k;
  *offset = (int64_t)fb_load_u64(spec);
  *len = (int64_t)fb_load_u64(spec + 8);
}

/* The three reads of a buffer below, in line for an uncompressed body
 * (every buffer of every field of every block reads so), out of line for
 * a compressed one. */
xchg_status coalesce_compressed_size(coalescer *c, int64_t k, int64_t *size);
xchg_status coalesce_put_compressed(coalescer *c, int64_t k, int64_t from, int64_t n, uint8_t *dst);
xchg_status coalesce_compressed_values(coalescer *c, int64_t k, int64_t need, const char *what,
                                       const uint8_t **p);
/* Report a buffer too short for what is read of it. */
xchg_status coalesce_short_buffer(coalescer *c, int64_t k, int64_t have, int64_t from, int64_t n);
xchg_status coalesce_short_values(coalescer *c, int64_t k, const char *what, int64_t have,
                                  int64_t need);

/* The size buffer k of the batch being appended decodes to. */
static inline xchg_status coalesce_decoded_size(coalescer *c, int64_t k, int64_t *size) {
  if (c->b->codec != XCHG_BLOCK_NONE) return coalesce_compressed_size(c, k, size);
  int64_t offset;
  coalesce_spec_of(c->b, k, &offset, size);
  return XCHG_OK;
}

/* Buffer k's decoded bytes [from, from + n) into dst. */
static inline xchg_status coalesce_put_bytes(coalescer *c, int64_t k, int64_t from, int64_t n,
                                             uint8_t *dst) {
  if (n == 0) return XCHG_OK;
  if (c->b->codec != XCHG_BLOCK_NONE) return coalesce_put_compressed(c, k, from, n, dst);
  int64_t offset, len;
  coalesce_spec_of(c->b, k, &offset, &len);
  if (from > len || n > len - from) return coalesce_short_buffer(c, k, len, from, n);
  memcpy(dst, c->b->body + offset + from, (size_t)n);
  return XCHG_OK;
}

/* Buffer k to read values from: at least `need` bytes of them (NULL
 * when it is empty). */
static inline xchg_status coalesce_values_of(coalescer *c, int64_t k, int64_t need,
                                             const char *what, const uint8_t **p) {
  if (c->b->codec != XCHG_BLOCK_NONE) return coalesce_compressed_values(c, k, need, what, p);
  int64_t offset, len;
  coalesce_spec_of(c->b, k, &offset, &len);
  *p = len ? c->b->body + offset : NULL;
  return len < need ? coalesce_short_values(c, k, what, len, need) : XCHG_OK;
}

/* Offsets dst[i] = src[i] + delta for n offsets of `width` bytes (4 or
 * 8), in unsigned arithmetic: offsets between the first and the last are
 * not checked before validation, and may be anything.  dst and src do not
 * overlap.  coalesce_rebase picks the copy for this CPU
 * (coalesce_rebase.c); tests call each. */
void coalesce_rebase(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta);
void coalesce_rebase_portable(uint8_t *dst, const uint8_t *src, int64_t n, int width,
                              int64_t delta);
#ifdef CPU_X86
void coalesce_rebase_avx2(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta);
#endif

/* Reports that values up to `end` of `width` bytes overflow a byte count. */
xchg_status coalesce_span_overflow(coalescer *c, int64_t end, int64_t width);

/* n values of `width` bytes from value `from` (from + n no more than a
 * node's length), in bytes, without overflowing. */
static inline xchg_status coalesce_span_bytes(coalescer *c, int64_t from, int64_t n, int64_t width,
                                              int64_t *start, int64_t *count) {
  int64_t end;
  if (__builtin_mul_overflow(from + n, width, &end)) {
    *start = *count = 0;
    return coalesce_span_overflow(c, from + n, width);
  }
  *start = from * width;
  *count = n * width;
  return XCHG_OK;
}

/* Appends rows [off, off+n) of field fi's node in the batch being
 * appended to its output node. */
xchg_status coalesce_append_field(coalescer *c, int64_t fi, int64_t off, int64_t n);

/* count bytes of fixed-width values at `offset` of the (uncompressed)
 * body, after the output's. */
static inline xchg_status coalesce_copy_values(coalescer *c, out_node *o, int64_t offset,
                                               int64_t count) {
  uint8_t *dst = coalesce_reserve(c, o, 1, (size_t)count);
  if (!dst) return XCHG_ENOMEM;
  memcpy(dst, c->b->body + offset, (size_t)count);
  o->size[1] += (size_t)count;
  return XCHG_OK;
}

/* coalesce_append_column but for its commonest case. */
xchg_status coalesce_append_column_walk(coalescer *c, int64_t fi, int64_t n);

/* Appends all n rows of top-level column fi (a node of n rows).  In line
 * for fixed-width values without nulls in an uncompressed body, which
 * most columns of most blocks are. */
static inline xchg_status coalesce_append_column(coalescer *c, int64_t fi, int64_t n) {
  const flat_field *ff = &c->fields[fi];
  out_node *o = &c->out[fi];
  int64_t count, offset, len;
  if (ff->kind != APPEND_FIXED || c->b->codec != XCHG_BLOCK_NONE || o->validity ||
      fb_load_u64(c->b->node_at + 16 * fi + 8) != 0 || __builtin_mul_overflow(n, ff->width, &count))
    return coalesce_append_column_walk(c, fi, n);
  coalesce_spec_of(c->b, c->buf_at[fi] + 1, &offset, &len);
  if (len < count) return coalesce_append_column_walk(c, fi, n);
  c->at = ff->f;
  xchg_status st = coalesce_copy_values(c, o, offset, count);
  if (st == XCHG_OK) o->length += n;
  return st;
}

#endif
