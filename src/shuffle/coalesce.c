/* coalesce.c — see coalesce.h.
 *
 * Fields are numbered depth first, the order of a RecordBatch's field
 * nodes: field i's node is node i of every batch.  Its buffers start where
 * the fields before it end, which is fixed by the schema but for the
 * variadic buffers of views, so each batch is laid out once (lay_out)
 * before its fields are appended.  A field appends a span of its node's
 * rows: all of them at the top level, the range a parent's offsets use
 * below a list, the runs a run-end encoded span touches. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "shuffle/coalesce.h"

#define OUT_BUFFERS 3

typedef struct out_buf {
  xchg_buf *buf;
  size_t size, cap;
  size_t last; /* size at the last finish: the first reservation of the next batch */
} out_buf;

/* One field of the output batch. */
typedef struct out_node {
  int64_t length, null_count;
  int validity; /* b[0] holds a validity bitmap (made at the first null) */
  out_buf b[OUT_BUFFERS];
} out_node;

/* What an append changes, to undo it. */
typedef struct out_mark {
  int64_t length, null_count;
  int validity;
  size_t size[OUT_BUFFERS];
} out_mark;

typedef struct flat_field {
  const ipc_field *f;
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
  int64_t target_rows;
  flat_field *fields;
  int64_t n_fields;
  int64_t *kids;
  int64_t *top; /* flat index of each top-level column */
  int64_t *buf_at, *n_var; /* per field, for the batch being appended */
  out_node *out;
  out_mark *marks;
  int64_t rows;
  scratch scratch;
  /* The batch being appended. */
  const wire_batch *b;
  int64_t decoded;  /* bytes its compressed buffers declared so far */
  int64_t hint;     /* first reservations: this many times what the batch needs */
  int overflow;     /* an offset would pass what it addresses */
  const ipc_field *at; /* named in errors */
  xchg_error *err;
};

/* ---- errors ------------------------------------------------------------------ */

static xchg_status fail(coalescer *c, int64_t buffer, xchg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "field 'f', buffer K: <what>". */
static xchg_status fail(coalescer *c, int64_t buffer, xchg_status st, const char *fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char where[64] = "";
  if (buffer >= 0) snprintf(where, sizeof where, ", buffer %lld", (long long)buffer);
  return xchg_errorf(c->err, st, "field '%s'%s: %s", c->at ? c->at->path : "", where, what);
}

/* The output's 32-bit offsets cannot address what this batch would add. */
static xchg_status overflow(coalescer *c, int64_t total) {
  c->overflow = 1;
  return fail(c, -1, XCHG_ELIMIT, "%lld values are more than 32-bit offsets address", (long long)total);
}

/* ---- scratch ------------------------------------------------------------------ */

static void *scratch_alloc(scratch *s, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (s->cap - s->used >= n) {
    void *p = s->main + s->used;
    s->used += n;
    return p;
  }
  scratch_chunk *ch = malloc(sizeof *ch + n);
  if (!ch) return NULL;
  ch->next = s->chunks;
  s->chunks = ch;
  s->extra += n;
  return ch->data;
}

/* Forgets what was allocated; a batch that needed more than the main
 * block grows it, so that the next one needs no chunk. */
static void scratch_reset(scratch *s) {
  s->used = 0;
  if (!s->chunks) return;
  for (scratch_chunk *ch = s->chunks, *next; ch; ch = next) {
    next = ch->next;
    free(ch);
  }
  s->chunks = NULL;
  size_t want = s->cap + s->extra;
  s->extra = 0;
  free(s->main);
  s->main = malloc(want);
  s->cap = s->main ? want : 0;
}

static void scratch_free(scratch *s) {
  scratch_reset(s);
  free(s->main);
}

/* ---- bits ------------------------------------------------------------------ */

static int bit_at(const uint8_t *bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

static void set_bit(uint8_t *bits, int64_t i, int v) {
  if (v) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  else bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Bits [s, s+n) of src to bits [d, d+n) of dst; the bits of dst's bytes
 * past d+n may change. */
static void copy_bits(uint8_t *dst, int64_t d, const uint8_t *src, int64_t s, int64_t n) {
  for (; n > 0 && (d & 7); d++, s++, n--) set_bit(dst, d, bit_at(src, s));
  int64_t bytes = n >> 3;
  const uint8_t *p = src + (s >> 3);
  unsigned shift = (unsigned)(s & 7);
  if (shift == 0) {
    memcpy(dst + (d >> 3), p, (size_t)bytes);
  } else {
    uint8_t *q = dst + (d >> 3);
    for (int64_t i = 0; i < bytes; i++) q[i] = (uint8_t)((p[i] >> shift) | (p[i + 1] << (8 - shift)));
  }
  d += bytes * 8;
  s += bytes * 8;
  for (n -= bytes * 8; n > 0; d++, s++, n--) set_bit(dst, d, bit_at(src, s));
}

static void set_bits(uint8_t *dst, int64_t d, int64_t n) {
  for (; n > 0 && (d & 7); d++, n--) set_bit(dst, d, 1);
  memset(dst + (d >> 3), 0xff, (size_t)(n >> 3));
  for (d += n & ~(int64_t)7, n &= 7; n > 0; d++, n--) set_bit(dst, d, 1);
}

static int64_t count_set(const uint8_t *bits, int64_t s, int64_t n) {
  int64_t set = 0;
  for (; n > 0 && (s & 7); s++, n--) set += bit_at(bits, s);
  set += ipc_count_set_bits(bits + (s >> 3), n >> 3);
  for (s += n & ~(int64_t)7, n &= 7; n > 0; s++, n--) set += bit_at(bits, s);
  return set;
}

static int64_t bitmap_bytes(int64_t bits) { return (bits + 7) / 8; }

/* ---- output buffers ----------------------------------------------------------- */

/* Room for `extra` more bytes at the end of o: where they go, or NULL
 * when memory runs out (reported). */
static uint8_t *reserve(coalescer *c, out_buf *o, size_t extra) {
  static uint8_t nowhere; /* the tail of no buffer, for nothing */
  size_t need = o->size + extra;
  if (need <= o->cap) return o->buf ? xchg_buf_mutable_data(o->buf) + o->size : &nowhere;
  size_t cap = o->cap ? o->cap * 2 : extra * (size_t)c->hint;
  if (!o->cap && cap < o->last + o->last / 4) cap = o->last + o->last / 4;
  if (cap < need) cap = need;
  xchg_buf *b = xchg_buf_alloc(cap);
  if (!b) {
    fail(c, -1, XCHG_ENOMEM, "out of memory for %zu bytes", cap);
    return NULL;
  }
  if (o->size) memcpy(xchg_buf_mutable_data(b), xchg_buf_data(o->buf), o->size);
  xchg_buf_unref(o->buf);
  o->buf = b;
  o->cap = cap;
  return xchg_buf_mutable_data(b) + o->size;
}

/* ---- the batch's buffers --------------------------------------------------------- */

static void spec_of(const wire_batch *b, int64_t k, int64_t *offset, int64_t *len) {
  const uint8_t *spec = fb_vector_elem(&b->buffers, (uint32_t)k);
  *offset = (int64_t)fb_load_u64(spec);
  *len = (int64_t)fb_load_u64(spec + 8);
}

/* Puts "field 'f', buffer k: " before the message a call below made. */
static xchg_status prefixed(coalescer *c, int64_t k, xchg_status st) {
  if (!c->err) return st;
  char why[XCHG_ERROR_MESSAGE_SIZE];
  memcpy(why, c->err->message, sizeof why);
  why[sizeof why - 1] = '\0';
  return fail(c, k, st, "%s", why);
}

/* A compressed buffer's declared size, checked before anything that
 * size is written: against the caps and what its bytes can produce. */
static xchg_status check_declared(coalescer *c, int64_t k, const uint8_t *frame, int64_t frame_size,
                                  int64_t size) {
  const xchg_ipc_read_options *opts = c->opts;
  if (size < 0) return fail(c, k, XCHG_EFORMAT, "negative uncompressed length %lld", (long long)size);
  if (size > opts->max_buffer_bytes)
    return fail(c, k, XCHG_ELIMIT, "uncompressed length %lld exceeds max_buffer_bytes %lld",
                (long long)size, (long long)opts->max_buffer_bytes);
  if (size > opts->max_batch_bytes - c->decoded)
    return fail(c, k, XCHG_ELIMIT, "uncompressed length %lld after %lld bytes of the batch's "
                "other buffers exceeds max_batch_bytes %lld", (long long)size,
                (long long)c->decoded, (long long)opts->max_batch_bytes);
  xchg_status st = xchg_block_check_size(c->b->codec, frame, (size_t)frame_size, (size_t)size, c->err);
  if (st != XCHG_OK) return prefixed(c, k, st);
  c->decoded += size;
  return XCHG_OK;
}

/* Buffer k as stored: *frame its bytes after the length prefix, *declared
 * the size they decompress to, or -1 when they are stored as they are. */
static xchg_status stored(coalescer *c, int64_t k, const uint8_t **frame, int64_t *frame_size,
                          int64_t *declared) {
  int64_t offset, len;
  spec_of(c->b, k, &offset, &len);
  *frame = c->b->body + offset;
  *frame_size = len;
  *declared = -1;
  if (c->b->codec == XCHG_BLOCK_NONE || len == 0) return XCHG_OK;
  if (len < 8)
    return fail(c, k, XCHG_EFORMAT, "compressed buffer of %lld bytes lacks its 8-byte length", (long long)len);
  *declared = (int64_t)fb_load_u64(*frame);
  *frame += 8;
  *frame_size -= 8;
  return XCHG_OK;
}

/* The size buffer k decodes to. */
static xchg_status decoded_size(coalescer *c, int64_t k, int64_t *size) {
  const uint8_t *frame;
  int64_t frame_size, declared;
  xchg_status st = stored(c, k, &frame, &frame_size, &declared);
  *size = declared == -1 ? frame_size : declared;
  return st;
}

static xchg_status decompress(coalescer *c, int64_t k, const uint8_t *frame, int64_t frame_size,
                              int64_t size, uint8_t *dst) {
  xchg_status st = check_declared(c, k, frame, frame_size, size);
  if (st != XCHG_OK) return st;
  st = xchg_block_decompress(c->b->codec, frame, (size_t)frame_size, dst, (size_t)size, c->err);
  return st == XCHG_OK ? XCHG_OK : prefixed(c, k, st);
}

/* The decoded bytes of buffer k, to read: in place, or decompressed into
 * scratch.  An empty buffer gives *p NULL and *n 0. */
static xchg_status buffer_bytes(coalescer *c, int64_t k, const uint8_t **p, int64_t *n) {
  const uint8_t *frame;
  int64_t frame_size, declared;
  xchg_status st = stored(c, k, &frame, &frame_size, &declared);
  *p = frame_size ? frame : NULL;
  *n = frame_size;
  if (st != XCHG_OK || declared == -1) return st;
  uint8_t *dst = scratch_alloc(&c->scratch, (size_t)declared);
  if (!dst && declared > 0) return fail(c, k, XCHG_ENOMEM, "out of memory for %lld bytes", (long long)declared);
  if ((st = decompress(c, k, frame, frame_size, declared, dst)) != XCHG_OK) return st;
  *p = dst;
  *n = declared;
  return XCHG_OK;
}

/* Buffer k's decoded bytes [from, from + n) into dst: a compressed buffer
 * wanted whole is decompressed straight there. */
static xchg_status put_bytes(coalescer *c, int64_t k, int64_t from, int64_t n, uint8_t *dst) {
  if (n == 0) return XCHG_OK;
  const uint8_t *frame;
  int64_t frame_size, declared;
  xchg_status st = stored(c, k, &frame, &frame_size, &declared);
  if (st != XCHG_OK) return st;
  if (declared != -1 && from == 0 && declared == n) return decompress(c, k, frame, frame_size, n, dst);
  const uint8_t *p;
  int64_t have;
  if (declared != -1 && (st = buffer_bytes(c, k, &p, &have)) != XCHG_OK) return st;
  if (declared == -1) {
    p = frame;
    have = frame_size;
  }
  if (from > have || n > have - from)
    return fail(c, k, XCHG_EFORMAT, "buffer has %lld bytes, [%lld, +%lld) needed", (long long)have,
                (long long)from, (long long)n);
  memcpy(dst, p + from, (size_t)n);
  return XCHG_OK;
}

/* Buffer k to read values from: at least `need` bytes of them. */
static xchg_status values_of(coalescer *c, int64_t k, int64_t need, const char *what,
                             const uint8_t **p) {
  int64_t have;
  xchg_status st = buffer_bytes(c, k, p, &have);
  if (st == XCHG_OK && have < need)
    st = fail(c, k, XCHG_EFORMAT, "%s buffer has %lld bytes, %lld needed", what, (long long)have,
              (long long)need);
  return st;
}

/* n values of `width` bytes from value `from`, in bytes, without
 * overflowing. */
static xchg_status span_bytes(coalescer *c, int64_t from, int64_t n, int64_t width, int64_t *start,
                              int64_t *count) {
  *start = *count = 0;
  if (width > 0 && from + n > INT64_MAX / width)
    return fail(c, -1, XCHG_EFORMAT, "%lld values of %lld bytes overflow", (long long)(from + n),
                (long long)width);
  *start = from * width;
  *count = n * width;
  return XCHG_OK;
}

/* ---- appending a field's span ------------------------------------------------- */

static void node_of(const wire_batch *b, int64_t i, int64_t *length, int64_t *nulls) {
  const uint8_t *node = fb_vector_elem(&b->nodes, (uint32_t)i);
  *length = (int64_t)fb_load_u64(node);
  *nulls = (int64_t)fb_load_u64(node + 8);
}

static xchg_status append_field(coalescer *c, int64_t fi, int64_t off, int64_t n);

/* The validity of rows [off, off+n) from buffer k (read only when the
 * node has nulls); *bits (may be NULL) gets the source bitmap, NULL when
 * every row is valid. */
static xchg_status append_validity(coalescer *c, out_node *o, int64_t k, int64_t node_length,
                                   int64_t node_nulls, int64_t off, int64_t n, const uint8_t **bits) {
  if (bits) *bits = NULL;
  out_buf *ob = &o->b[0];
  size_t bytes = (size_t)bitmap_bytes(o->length + n);
  if (node_nulls == 0) {
    if (!o->validity || n == 0) return XCHG_OK;
    uint8_t *dst = reserve(c, ob, bytes - ob->size);
    if (!dst) return XCHG_ENOMEM;
    set_bits(xchg_buf_mutable_data(ob->buf), o->length, n);
    ob->size = bytes;
    return XCHG_OK;
  }
  const uint8_t *src;
  xchg_status st = values_of(c, k, bitmap_bytes(off + n), "validity", &src);
  if (st != XCHG_OK) return st;
  if (!o->validity) {
    ob->size = 0;
    if (!reserve(c, ob, bytes)) return XCHG_ENOMEM;
    set_bits(xchg_buf_mutable_data(ob->buf), 0, o->length);
    o->validity = 1;
  } else if (!reserve(c, ob, bytes - ob->size)) {
    return XCHG_ENOMEM;
  }
  copy_bits(xchg_buf_mutable_data(ob->buf), o->length, src, off, n);
  ob->size = bytes;
  o->null_count += off == 0 && n == node_length ? node_nulls : n - count_set(src, off, n);
  if (bits) *bits = src;
  return XCHG_OK;
}

static int row_valid(const uint8_t *bits, int64_t i) { return !bits || bit_at(bits, i); }

static xchg_status append_fixed(coalescer *c, out_buf *ob, int64_t k, int64_t off, int64_t n,
                                int64_t width) {
  int64_t start, count;
  xchg_status st = span_bytes(c, off, n, width, &start, &count);
  if (st != XCHG_OK) return st;
  uint8_t *dst = reserve(c, ob, (size_t)count);
  if (!dst) return XCHG_ENOMEM;
  if ((st = put_bytes(c, k, start, count, dst)) == XCHG_OK) ob->size += (size_t)count;
  return st;
}

static xchg_status append_bits(coalescer *c, out_node *o, int64_t k, int64_t off, int64_t n) {
  const uint8_t *src;
  xchg_status st = values_of(c, k, bitmap_bytes(off + n), "values", &src);
  out_buf *ob = &o->b[1];
  size_t bytes = (size_t)bitmap_bytes(o->length + n);
  if (st != XCHG_OK) return st;
  if (n == 0) return XCHG_OK;
  if (!reserve(c, ob, bytes - ob->size)) return XCHG_ENOMEM;
  copy_bits(xchg_buf_mutable_data(ob->buf), o->length, src, off, n);
  ob->size = bytes;
  return XCHG_OK;
}

/* Offsets dst[i] = src[i] + delta for n offsets of `width` bytes, in
 * unsigned arithmetic: offsets between the first and the last are not
 * checked before validation, and may be anything. */
static void rebase(uint8_t *dst, const uint8_t *src, int64_t n, int width, int64_t delta) {
  if (width == 4) {
    for (int64_t i = 0; i < n; i++) {
      uint32_t v;
      memcpy(&v, src + 4 * i, 4);
      v += (uint32_t)delta;
      memcpy(dst + 4 * i, &v, 4);
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      uint64_t v;
      memcpy(&v, src + 8 * i, 8);
      v += (uint64_t)delta;
      memcpy(dst + 8 * i, &v, 8);
    }
  }
}

/* Offsets of rows [off, off+n) from buffer k, into the values of which
 * `limit` are there, rebased onto the `base` values the output has:
 * *first and *last are the source range they use. */
static xchg_status append_offsets(coalescer *c, out_buf *ob, int64_t k, int width, int64_t off,
                                  int64_t n, int64_t limit, int64_t base, int64_t *first,
                                  int64_t *last) {
  int64_t start, count;
  const uint8_t *src;
  xchg_status st = span_bytes(c, off, n + 1, width, &start, &count);
  if (st == XCHG_OK) st = values_of(c, k, start + count, "offsets", &src);
  if (st != XCHG_OK) return st;
  *first = ipc_load_int(src, width, 1, off);
  *last = ipc_load_int(src, width, 1, off + n);
  if (*first < 0 || *last < *first || *last > limit)
    return fail(c, k, XCHG_EFORMAT, "offsets of rows [%lld, %lld] are %lld and %lld, outside [0, "
                "%lld]", (long long)off, (long long)(off + n), (long long)*first, (long long)*last,
                (long long)limit);
  if (width == 4 && base + (*last - *first) > INT32_MAX) return overflow(c, base + (*last - *first));
  size_t extra = (size_t)(n + (ob->size == 0)) * (size_t)width;
  uint8_t *dst = reserve(c, ob, extra);
  if (!dst) return XCHG_ENOMEM;
  if (ob->size == 0) {
    ipc_store_offset(dst, width, 0, 0);
    dst += width;
  }
  rebase(dst, src + (off + 1) * width, n, width, base - *first);
  ob->size += extra;
  return XCHG_OK;
}

static int offset_width(ipc_type t) {
  return (t == IPC_LARGE_BINARY || t == IPC_LARGE_UTF8 || t == IPC_LARGE_LIST ||
          t == IPC_LARGE_LIST_VIEW) ? 8 : 4;
}

static int64_t kid(const coalescer *c, int64_t fi, int64_t i) { return c->kids[c->fields[fi].kids + i]; }

static xchg_status append_binary(coalescer *c, out_node *o, int64_t k, int width, int64_t off,
                                 int64_t n) {
  int64_t data_size, first, last;
  xchg_status st = decoded_size(c, k + 2, &data_size);
  if (st == XCHG_OK)
    st = append_offsets(c, &o->b[1], k + 1, width, off, n, data_size, (int64_t)o->b[2].size, &first, &last);
  if (st != XCHG_OK) return st;
  uint8_t *dst = reserve(c, &o->b[2], (size_t)(last - first));
  if (!dst) return XCHG_ENOMEM;
  if ((st = put_bytes(c, k + 2, first, last - first, dst)) == XCHG_OK) o->b[2].size += (size_t)(last - first);
  return st;
}

static xchg_status append_list(coalescer *c, int64_t fi, out_node *o, int64_t k, int width,
                               int64_t off, int64_t n) {
  int64_t child = kid(c, fi, 0), child_length, child_nulls, first, last;
  node_of(c->b, child, &child_length, &child_nulls);
  xchg_status st = append_offsets(c, &o->b[1], k + 1, width, off, n, child_length,
                                  c->out[child].length, &first, &last);
  return st == XCHG_OK ? append_field(c, child, first, last - first) : st;
}

/* List views point anywhere into their child: the child goes whole, and
 * the offsets move past the child rows before it. */
static xchg_status append_list_views(coalescer *c, int64_t fi, out_node *o, int64_t k, int width,
                                     const uint8_t *bits, int64_t off, int64_t n) {
  int64_t child = kid(c, fi, 0), child_length, child_nulls, start, count;
  node_of(c->b, child, &child_length, &child_nulls);
  int64_t base = c->out[child].length;
  if (width == 4 && base + child_length > INT32_MAX) return overflow(c, base + child_length);
  const uint8_t *offsets, *sizes;
  xchg_status st = span_bytes(c, off, n, width, &start, &count);
  if (st == XCHG_OK) st = values_of(c, k + 1, start + count, "offsets", &offsets);
  if (st == XCHG_OK) st = values_of(c, k + 2, start + count, "sizes", &sizes);
  if (st != XCHG_OK) return st;
  uint8_t *dst_offsets = reserve(c, &o->b[1], (size_t)count);
  uint8_t *dst_sizes = dst_offsets ? reserve(c, &o->b[2], (size_t)count) : NULL;
  if (!dst_sizes) return XCHG_ENOMEM;
  for (int64_t i = 0; i < n; i++) {
    int64_t at = ipc_load_int(offsets, width, 1, off + i), size = ipc_load_int(sizes, width, 1, off + i);
    if (!row_valid(bits, off + i)) at = size = 0;
    if (at < 0 || size < 0 || size > child_length - at)
      return fail(c, k + 1, XCHG_EFORMAT, "list view at row %lld (offset %lld, size %lld) exceeds "
                  "the %lld child values", (long long)(off + i), (long long)at, (long long)size,
                  (long long)child_length);
    ipc_store_offset(dst_offsets, width, i, at + base);
    ipc_store_offset(dst_sizes, width, i, size);
  }
  o->b[1].size += (size_t)count;
  o->b[2].size += (size_t)count;
  return append_field(c, child, 0, child_length);
}

/* Binary views: every data buffer of the batch is appended to the
 * output's one data buffer, and each view that points into one is moved
 * to where its bytes now are (a view under a null is zeroed). */
static xchg_status append_views(coalescer *c, int64_t fi, out_node *o, int64_t k,
                                const uint8_t *bits, int64_t off, int64_t n) {
  int64_t n_data = c->n_var[fi], start, count, total = 0;
  int64_t *bases = scratch_alloc(&c->scratch, (size_t)(n_data + 1) * sizeof *bases);
  if (!bases) return fail(c, -1, XCHG_ENOMEM, "out of memory");
  xchg_status st = XCHG_OK;
  for (int64_t j = 0; j < n_data && st == XCHG_OK; j++) {
    bases[j] = (int64_t)o->b[2].size + total;
    int64_t size;
    st = decoded_size(c, k + 2 + j, &size);
    total += size;
  }
  bases[n_data] = (int64_t)o->b[2].size + total;
  if (st != XCHG_OK) return st;
  if (bases[n_data] > INT32_MAX) return overflow(c, bases[n_data]);
  const uint8_t *views;
  if ((st = span_bytes(c, off, n, 16, &start, &count)) != XCHG_OK ||
      (st = values_of(c, k + 1, start + count, "views", &views)) != XCHG_OK)
    return st;
  uint8_t *data = reserve(c, &o->b[2], (size_t)total);
  uint8_t *dst = data ? reserve(c, &o->b[1], (size_t)count) : NULL;
  if (!dst) return XCHG_ENOMEM;
  for (int64_t j = 0; j < n_data && st == XCHG_OK; j++)
    st = put_bytes(c, k + 2 + j, 0, bases[j + 1] - bases[j], data + (bases[j] - bases[0]));
  if (st != XCHG_OK) return st;
  for (int64_t i = 0; i < n; i++) {
    uint8_t *view = dst + 16 * i;
    memcpy(view, views + start + 16 * i, 16);
    int32_t len, buf, at;
    memcpy(&len, view, 4);
    memcpy(&buf, view + 8, 4);
    memcpy(&at, view + 12, 4);
    if (!row_valid(bits, off + i)) {
      memset(view, 0, 16);
      continue;
    }
    if (len >= 0 && len <= 12) continue;
    if (len < 0 || buf < 0 || buf >= n_data || at < 0 || (int64_t)at + len > bases[buf + 1] - bases[buf])
      return fail(c, k + 1, XCHG_EFORMAT, "view at row %lld (length %d, buffer %d, offset %d) "
                  "points outside the %lld data buffers", (long long)(off + i), len, buf, at,
                  (long long)n_data);
    int32_t moved = (int32_t)(bases[buf] + at), zero = 0;
    memcpy(view + 8, &zero, 4);
    memcpy(view + 12, &moved, 4);
  }
  o->b[1].size += (size_t)count;
  o->b[2].size += (size_t)total;
  return XCHG_OK;
}

/* A dense union's children go whole; its offsets move past the rows
 * each child had before. */
static xchg_status append_dense_union(coalescer *c, int64_t fi, out_node *o, int64_t k,
                                      const uint8_t *ids, int64_t off, int64_t n) {
  const flat_field *ff = &c->fields[fi];
  int64_t base[128], length[128], nulls;
  for (int64_t i = 0; i < ff->n_kids; i++) {
    node_of(c->b, kid(c, fi, i), &length[i], &nulls);
    base[i] = c->out[kid(c, fi, i)].length;
    if (base[i] + length[i] > INT32_MAX) return overflow(c, base[i] + length[i]);
  }
  const uint8_t *offsets;
  xchg_status st = values_of(c, k + 1, (off + n) * 4, "offsets", &offsets);
  if (st != XCHG_OK) return st;
  uint8_t *dst = reserve(c, &o->b[1], (size_t)n * 4);
  if (!dst) return XCHG_ENOMEM;
  for (int64_t i = 0; i < n; i++) {
    int8_t id = (int8_t)ids[off + i];
    int child = id >= 0 ? ff->child_of[id] : -1;
    if (child < 0)
      return fail(c, k, XCHG_EFORMAT, "type id %d at row %lld is not one of the union's", id,
                  (long long)(off + i));
    int64_t at = ipc_load_int(offsets, 4, 1, off + i);
    if (at < 0 || at >= length[child])
      return fail(c, k + 1, XCHG_EFORMAT, "dense union offset %lld at row %lld is outside child "
                  "%d's %lld rows", (long long)at, (long long)(off + i), child, (long long)length[child]);
    ipc_store_offset(dst, 4, i, at + base[child]);
  }
  o->b[1].size += (size_t)n * 4;
  for (int64_t i = 0; i < ff->n_kids && st == XCHG_OK; i++) st = append_field(c, kid(c, fi, i), 0, length[i]);
  return st;
}

static xchg_status append_union(coalescer *c, int64_t fi, out_node *o, int64_t k, int64_t nulls,
                                int64_t off, int64_t n) {
  const ipc_field *f = c->fields[fi].f;
  /* Before metadata V5, unions had a validity buffer, which is dropped. */
  int legacy = c->b->version < IPC_METADATA_V5;
  if (nulls != 0 && !legacy)
    return fail(c, -1, XCHG_EFORMAT, "a union has null_count %lld", (long long)nulls);
  k += legacy;
  const uint8_t *ids;
  xchg_status st = values_of(c, k, off + n, "type ids", &ids);
  uint8_t *dst = st == XCHG_OK ? reserve(c, &o->b[0], (size_t)n) : NULL;
  if (st != XCHG_OK || !dst) return st != XCHG_OK ? st : XCHG_ENOMEM;
  memcpy(dst, ids + off, (size_t)n);
  o->b[0].size += (size_t)n;
  if (f->union_dense) return append_dense_union(c, fi, o, k, ids, off, n);
  for (int64_t i = 0; i < c->fields[fi].n_kids && st == XCHG_OK; i++) st = append_field(c, kid(c, fi, i), off, n);
  return st;
}

/* Run-end encoded rows: the runs the span touches, their ends made
 * relative to the span, cut at its end and moved past the rows before. */
static xchg_status append_run_ends(coalescer *c, int64_t fi, out_node *o, int64_t off, int64_t n) {
  int64_t ends_field = kid(c, fi, 0), runs, ends_nulls;
  node_of(c->b, ends_field, &runs, &ends_nulls);
  int width = c->fields[ends_field].f->width;
  int64_t max = width == 2 ? INT16_MAX : width == 4 ? INT32_MAX : INT64_MAX;
  if (n == 0) return XCHG_OK;
  if (ends_nulls != 0) return fail(c, -1, XCHG_EFORMAT, "run ends with %lld nulls", (long long)ends_nulls);
  if (o->length > max - n) return overflow(c, o->length + n);
  const uint8_t *ends;
  int64_t k = c->buf_at[ends_field] + 1, start, count;
  xchg_status st = span_bytes(c, 0, runs, width, &start, &count);
  if (st == XCHG_OK) st = values_of(c, k, count, "run ends", &ends);
  if (st != XCHG_OK) return st;
  int64_t first = ipc_run_containing(ends, width, runs, off);
  int64_t last = ipc_run_containing(ends, width, runs, off + n - 1);
  if (last >= runs || last < first)
    return fail(c, k, XCHG_EFORMAT, "run ends stop before row %lld", (long long)(off + n));
  out_node *oe = &c->out[ends_field];
  uint8_t *dst = reserve(c, &oe->b[1], (size_t)((last - first + 1) * width));
  if (!dst) return XCHG_ENOMEM;
  for (int64_t r = first; r <= last; r++) {
    int64_t end = ipc_load_int(ends, width, 1, r);
    ipc_store_int(dst, width, r - first, (end < off + n ? end : off + n) - off + o->length);
  }
  oe->b[1].size += (size_t)((last - first + 1) * width);
  oe->length += last - first + 1;
  return append_field(c, kid(c, fi, 1), first, last - first + 1);
}

static xchg_status append_value(coalescer *c, int64_t fi, out_node *o, int64_t k, int64_t length,
                                int64_t nulls, int64_t off, int64_t n) {
  const ipc_field *f = c->fields[fi].f;
  const uint8_t *bits = NULL;
  xchg_status st = XCHG_OK;
  switch (f->type) {
    case IPC_NULL: o->null_count += n; return XCHG_OK;
    case IPC_UNION: return append_union(c, fi, o, k, nulls, off, n);
    case IPC_RUN_END_ENCODED: return append_run_ends(c, fi, o, off, n);
    default: st = append_validity(c, o, k, length, nulls, off, n, &bits); break;
  }
  if (st != XCHG_OK) return st;
  int width = offset_width(f->type);
  switch (f->type) {
    case IPC_BOOL: return append_bits(c, o, k + 1, off, n);
    case IPC_BINARY: case IPC_UTF8: case IPC_LARGE_BINARY: case IPC_LARGE_UTF8:
      return append_binary(c, o, k, width, off, n);
    case IPC_LIST: case IPC_LARGE_LIST: case IPC_MAP: return append_list(c, fi, o, k, width, off, n);
    case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW:
      return append_list_views(c, fi, o, k, width, bits, off, n);
    case IPC_BINARY_VIEW: case IPC_UTF8_VIEW: return append_views(c, fi, o, k, bits, off, n);
    case IPC_STRUCT:
      for (int64_t i = 0; i < c->fields[fi].n_kids && st == XCHG_OK; i++) st = append_field(c, kid(c, fi, i), off, n);
      return st;
    case IPC_FIXED_SIZE_LIST: {
      int64_t start, count;
      st = span_bytes(c, off, n, f->list_size, &start, &count);
      return st == XCHG_OK ? append_field(c, kid(c, fi, 0), start, count) : st;
    }
    default: return append_fixed(c, &o->b[1], k + 1, off, n, f->width);
  }
}

/* Appends rows [off, off+n) of field fi's node. */
static xchg_status append_field(coalescer *c, int64_t fi, int64_t off, int64_t n) {
  const ipc_field *f = c->fields[fi].f;
  out_node *o = &c->out[fi];
  int64_t length, nulls, k = c->buf_at[fi];
  node_of(c->b, fi, &length, &nulls);
  c->at = f;
  if (off > length || n > length - off)
    return fail(c, -1, XCHG_EFORMAT, "rows [%lld, +%lld) wanted of a field node of %lld", (long long)off,
                (long long)n, (long long)length);
  xchg_status st;
  if (f->dict_encoded) {
    st = append_validity(c, o, k, length, nulls, off, n, NULL);
    if (st == XCHG_OK) st = append_fixed(c, &o->b[1], k + 1, off, n, f->index_width);
  } else {
    st = append_value(c, fi, o, k, length, nulls, off, n);
  }
  c->at = f;
  if (st == XCHG_OK) o->length += n;
  return st;
}

/* ---- the batch's layout ------------------------------------------------------- */

static int is_view(const ipc_field *f) {
  return !f->dict_encoded && (f->type == IPC_BINARY_VIEW || f->type == IPC_UTF8_VIEW);
}

/* Where each field's buffers start in b, and every node and buffer range
 * checked against the schema and the body. */
static xchg_status lay_out(coalescer *c, const wire_batch *b) {
  c->at = NULL;
  if (b->nodes.count != (uint32_t)c->n_fields)
    return fail(c, -1, XCHG_EFORMAT, "the schema has %lld field nodes, the message %u",
                (long long)c->n_fields, b->nodes.count);
  int64_t k = 0;
  uint32_t v = 0;
  for (int64_t fi = 0; fi < c->n_fields; fi++) {
    const ipc_field *f = c->fields[fi].f;
    int64_t length, nulls;
    node_of(b, fi, &length, &nulls);
    c->at = f;
    /* null_count >= 0 and null_count <= length also make length >= 0. */
    if (nulls < 0 || nulls > length)
      return fail(c, -1, XCHG_EFORMAT, "field node has length %lld and null_count %lld",
                  (long long)length, (long long)nulls);
    c->buf_at[fi] = k;
    k += ipc_field_buffer_count(f, 0, b->version);
    if (is_view(f)) {
      if (v >= b->variadic.count)
        return fail(c, -1, XCHG_EFORMAT, "no variadicBufferCounts entry for this view field");
      c->n_var[fi] = (int64_t)fb_load_u64(fb_vector_elem(&b->variadic, v++));
      if (c->n_var[fi] < 0 || c->n_var[fi] > (int64_t)b->buffers.count)
        return fail(c, -1, XCHG_EFORMAT, "variadic buffer count %lld", (long long)c->n_var[fi]);
      k += c->n_var[fi];
    }
  }
  c->at = NULL;
  if (k != (int64_t)b->buffers.count)
    return fail(c, -1, XCHG_EFORMAT, "the schema uses %lld buffers, the message has %u",
                (long long)k, b->buffers.count);
  for (int64_t i = 0; i < c->schema->root.n_children; i++) {
    int64_t length, nulls;
    node_of(b, c->top[i], &length, &nulls);
    c->at = c->fields[c->top[i]].f;
    if (length != b->rows)
      return fail(c, -1, XCHG_EFORMAT, "column has %lld rows, the batch %lld", (long long)length,
                  (long long)b->rows);
  }
  c->at = NULL;
  for (int64_t i = 0; i < k; i++) {
    int64_t offset, len;
    spec_of(b, i, &offset, &len);
    if (offset < 0 || len < 0 || offset > b->body_length || len > b->body_length - offset)
      return fail(c, i, XCHG_EFORMAT, "range [%lld, +%lld) lies outside the %lld-byte body",
                  (long long)offset, (long long)len, (long long)b->body_length);
  }
  return XCHG_OK;
}

xchg_status wire_batch_open(const fb_table *batch, int version, const uint8_t *body,
                            int64_t body_length, wire_batch *out, xchg_error *err) {
  int rc_nodes, rc_buffers, rc_variadic;
  *out = (wire_batch){.version = version, .body = body, .body_length = body_length};
  if (fb_i64(batch, BATCH_LENGTH, 0, &out->rows) < 0 ||
      (rc_nodes = fb_vector_field(batch, BATCH_NODES, 16, &out->nodes)) < 0 ||
      (rc_buffers = fb_vector_field(batch, BATCH_BUFFERS, 16, &out->buffers)) < 0 ||
      (rc_variadic = fb_vector_field(batch, BATCH_VARIADIC_COUNTS, 8, &out->variadic)) < 0)
    return xchg_errorf(err, XCHG_EFORMAT, "invalid RecordBatch table");
  if (!rc_nodes) out->nodes.count = 0;
  if (!rc_buffers) out->buffers.count = 0;
  if (!rc_variadic) out->variadic.count = 0;
  if (out->rows < 0) return xchg_errorf(err, XCHG_EFORMAT, "record batch length %lld", (long long)out->rows);
  return ipc_batch_compression(batch, &out->codec, err);
}

int64_t wire_batch_bytes(const wire_batch *b) {
  if (b->codec == XCHG_BLOCK_NONE) return b->body_length;
  int64_t bytes = 0;
  for (uint32_t k = 0; k < b->buffers.count; k++) {
    int64_t offset, len;
    spec_of(b, k, &offset, &len);
    int inside = offset >= 0 && len >= 8 && offset <= b->body_length - len;
    int64_t declared = inside ? (int64_t)fb_load_u64(b->body + offset) : len;
    bytes += declared >= 0 && declared <= b->body_length * 1024 ? declared : len; /* checked when placed */
  }
  return bytes;
}

/* ---- the coalescer ----------------------------------------------------------- */

static int64_t count_fields(const ipc_field *f) {
  int64_t n = 1;
  for (int64_t i = 0; !f->dict_encoded && i < f->n_children; i++) n += count_fields(&f->children[i]);
  return n;
}

/* Numbers f and its subtree from *next, depth first; returns f's index. */
static int64_t flatten(coalescer *c, const ipc_field *f, int64_t *next, int64_t *next_kid) {
  int64_t fi = (*next)++;
  flat_field *ff = &c->fields[fi];
  ff->f = f;
  ff->n_kids = f->dict_encoded ? 0 : f->n_children;
  ff->kids = *next_kid;
  *next_kid += ff->n_kids;
  memset(ff->child_of, -1, sizeof ff->child_of);
  for (int64_t i = 0; i < ff->n_kids; i++) {
    if (f->type == IPC_UNION && f->union_type_ids[i] >= 0 && f->union_type_ids[i] < 128)
      ff->child_of[f->union_type_ids[i]] = (int8_t)i;
    c->kids[ff->kids + i] = flatten(c, &f->children[i], next, next_kid);
  }
  return fi;
}

xchg_status coalescer_create(const ipc_schema *schema, const xchg_ipc_read_options *opts,
                             int64_t target_rows, coalescer **out, xchg_error *err) {
  *out = NULL;
  coalescer *c = calloc(1, sizeof *c);
  int64_t n = 0, columns = schema->root.n_children;
  for (int64_t i = 0; i < columns; i++) n += count_fields(&schema->root.children[i]);
  if (c) {
    c->fields = calloc((size_t)n + 1, sizeof *c->fields);
    c->kids = calloc((size_t)n + 1, sizeof *c->kids);
    c->top = calloc((size_t)columns + 1, sizeof *c->top);
    c->buf_at = calloc((size_t)n + 1, sizeof *c->buf_at);
    c->n_var = calloc((size_t)n + 1, sizeof *c->n_var);
    c->out = calloc((size_t)n + 1, sizeof *c->out);
    c->marks = calloc((size_t)n + 1, sizeof *c->marks);
  }
  if (!c || !c->fields || !c->kids || !c->top || !c->buf_at || !c->n_var || !c->out || !c->marks) {
    coalescer_free(c);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory for a coalescer of %lld fields", (long long)n);
  }
  c->schema = schema;
  c->opts = opts;
  c->target_rows = target_rows;
  c->n_fields = n;
  int64_t next = 0, next_kid = 0;
  for (int64_t i = 0; i < columns; i++) c->top[i] = flatten(c, &schema->root.children[i], &next, &next_kid);
  *out = c;
  return XCHG_OK;
}

static void mark(coalescer *c) {
  for (int64_t i = 0; i < c->n_fields; i++) {
    const out_node *o = &c->out[i];
    c->marks[i] = (out_mark){o->length, o->null_count, o->validity, {o->b[0].size, o->b[1].size, o->b[2].size}};
  }
}

static void undo(coalescer *c) {
  for (int64_t i = 0; i < c->n_fields; i++) {
    out_node *o = &c->out[i];
    const out_mark *m = &c->marks[i];
    o->length = m->length;
    o->null_count = m->null_count;
    o->validity = m->validity;
    for (int j = 0; j < OUT_BUFFERS; j++) o->b[j].size = m->size[j];
  }
}

xchg_status coalescer_append(coalescer *c, const wire_batch *b, int *fits, xchg_error *err) {
  *fits = 1;
  c->b = b;
  c->err = err;
  c->decoded = 0;
  c->overflow = 0;
  scratch_reset(&c->scratch);
  xchg_status st = lay_out(c, b);
  if (st != XCHG_OK || b->rows == 0) return st;
  int64_t left = c->target_rows - c->rows;
  c->hint = left > b->rows ? (left + b->rows - 1) / b->rows : 1;
  mark(c);
  for (int64_t i = 0; i < c->schema->root.n_children && st == XCHG_OK; i++)
    if (!c->schema->root.children[i].skip) st = append_field(c, c->top[i], 0, b->rows);
  if (st != XCHG_OK) {
    undo(c);
    if (c->overflow && c->rows > 0) {
      *fits = 0;
      return XCHG_OK;
    }
    return st;
  }
  c->rows += b->rows;
  return XCHG_OK;
}

int64_t coalescer_rows(const coalescer *c) { return c->rows; }

int64_t coalescer_bytes(const coalescer *c) {
  int64_t bytes = 0;
  for (int64_t i = 0; i < c->n_fields; i++)
    for (int j = 0; j < OUT_BUFFERS; j++) bytes += (int64_t)c->out[i].b[j].size;
  return bytes;
}

/* Moves output buffer j of o into buffer i of a (absent when empty). */
static void take(out_node *o, int j, ipc_array *a, int64_t i) {
  out_buf *ob = &o->b[j];
  ob->last = ob->size;
  if (ob->size == 0) return;
  a->buffers[i] = (ipc_buffer){xchg_buf_data(ob->buf), ob->size, ob->buf};
  *ob = (out_buf){.last = ob->last};
}

static int64_t array_buffers(const ipc_field *f) {
  if (f->dict_encoded) return 2;
  switch (f->type) {
    case IPC_NULL: case IPC_RUN_END_ENCODED: return 0;
    case IPC_STRUCT: case IPC_FIXED_SIZE_LIST: return 1;
    case IPC_UNION: return f->union_dense ? 2 : 1;
    case IPC_BINARY: case IPC_UTF8: case IPC_LARGE_BINARY: case IPC_LARGE_UTF8:
    case IPC_LIST_VIEW: case IPC_LARGE_LIST_VIEW: return 3;
    case IPC_BINARY_VIEW: case IPC_UTF8_VIEW: return 4; /* validity, views, data, sizes */
    default: return 2;
  }
}

static xchg_status build(coalescer *c, int64_t fi, ipc_dict_lookup_fn lookup, void *lookup_ctx,
                         ipc_array **out, xchg_error *err) {
  const flat_field *ff = &c->fields[fi];
  const ipc_field *f = ff->f;
  out_node *o = &c->out[fi];
  ipc_array *a = *out = ipc_array_new(array_buffers(f), ff->n_kids);
  if (!a) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  a->length = o->length;
  a->null_count = o->null_count;
  int has_validity = f->dict_encoded || (f->type != IPC_NULL && f->type != IPC_UNION &&
                                         f->type != IPC_RUN_END_ENCODED);
  if (has_validity && o->validity) take(o, 0, a, 0);
  if (!has_validity) take(o, 0, a, 0); /* union type ids */
  for (int64_t i = 1; i < a->n_buffers && i < OUT_BUFFERS; i++) take(o, (int)i, a, i);
  if (is_view(f)) {
    int64_t size = (int64_t)a->buffers[2].size;
    xchg_buf *sizes = ipc_array_set_buf(a, 3, xchg_buf_alloc(8));
    if (!sizes) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    memcpy(xchg_buf_mutable_data(sizes), &size, 8);
  }
  o->length = o->null_count = 0;
  o->validity = 0;
  o->b[0].size = 0; /* an unused validity buffer stays for the next batch */
  if (f->dict_encoded) {
    ipc_array *dict = lookup(lookup_ctx, f->dict_id);
    if (!dict)
      return xchg_errorf(err, XCHG_EFORMAT, "field '%s': dictionary %lld is used before it is "
                         "defined", f->path, (long long)f->dict_id);
    a->dictionary = ipc_array_ref(dict);
  }
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < ff->n_kids && st == XCHG_OK; i++)
    st = build(c, kid(c, fi, i), lookup, lookup_ctx, &a->children[i], err);
  return st;
}

/* Clears what a failed build left in the output. */
static void clear_output(coalescer *c) {
  for (int64_t i = 0; i < c->n_fields; i++) {
    out_node *o = &c->out[i];
    o->length = o->null_count = 0;
    o->validity = 0;
    for (int j = 0; j < OUT_BUFFERS; j++) o->b[j].size = 0;
  }
  c->rows = 0;
}

xchg_status coalescer_finish(coalescer *c, ipc_dict_lookup_fn lookup, void *lookup_ctx,
                             ipc_array **out, xchg_error *err) {
  const ipc_field *root = &c->schema->root;
  int64_t selected = 0;
  for (int64_t i = 0; i < root->n_children; i++) selected += !root->children[i].skip;
  ipc_array *r = *out = ipc_array_new(1, selected);
  xchg_status st = r ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (r) r->length = c->rows;
  for (int64_t i = 0, k = 0; i < root->n_children && st == XCHG_OK; i++)
    if (!root->children[i].skip) st = build(c, c->top[i], lookup, lookup_ctx, &r->children[k++], err);
  clear_output(c);
  if (st == XCHG_OK) {
    ipc_decode_ctx ctx = {c->opts, 0, IPC_METADATA_V5, 0, lookup, lookup_ctx, NULL, NULL};
    st = ipc_decode_validate(&ctx, root->children, root->n_children, 0, r, err);
  }
  if (st != XCHG_OK) {
    ipc_array_unref(r);
    *out = NULL;
  }
  return st;
}

void coalescer_free(coalescer *c) {
  if (!c) return;
  for (int64_t i = 0; c->out && i < c->n_fields; i++)
    for (int j = 0; j < OUT_BUFFERS; j++) xchg_buf_unref(c->out[i].b[j].buf);
  scratch_free(&c->scratch);
  free(c->fields);
  free(c->kids);
  free(c->top);
  free(c->buf_at);
  free(c->n_var);
  free(c->out);
  free(c->marks);
  free(c);
}
