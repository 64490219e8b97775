/* tests/test_writer_dict.c — how the IPC writer tells a batch's dictionary
 * from the one it wrote before, for every value type.
 *
 * Each value type gets one "pool" array of 11 values built here, by hand,
 * as C Data Interface arrays, in the pattern  v0 v1 v2 v3 v0 v1 v2 v3 v0 v1
 * v3 (v1 null where the type has validity, with other garbage under each
 * null; v3 differs from v2 in one byte or one child value).  A batch's
 * dictionary is a slice of the pool, so the cases are:
 *
 *   equal        [v0 v1 v2]  then [v0 v1 v2] from other rows: nothing written
 *   extension    [v0 v1 v2]  then [v0 v1 v2 v3]:  a delta (stream and file)
 *   replacement  [v0 v1 v2]  then [v0 v1 v3]:     a replacement; the file
 *                                                 format refuses it (EINVAL)
 *   shrink       [v0 v1 v2]  then [v0 v1]:        a replacement
 *   longer       [v0 v1]     then [v1 v2 v3]:     a replacement
 *
 * Each is written as a stream, as a file and coalesced, then read back with
 * the xchg reader; every batch read must equal, value by value
 * (support/array_equal), the arrays given, and the reader's count of
 * dictionary and delta messages must be the one the case calls for.  The
 * same pools check the shared-dictionary test (two columns, one id),
 * nested dictionaries get their own cases (the inner dictionary replaced,
 * permuted or extended under the outer one), and `xchg convert` ($XCHG_CLI)
 * is run on streams holding a replacement that are spliced from two
 * writers' output, so that no comparison of the writer made them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/dictionary.h"
#include "ipc/writer_internal.h"
#include "support/array_equal.h"
#include "support/ipc_bodies.h"
#include "support/roundtrip.h"
#include "support/testutil.h"

#define MSG 2048
#define POOL 11

/* ---- building arrays ------------------------------------------------------- */

/* Everything built is allocated here and freed at the end. */
static void *owned[8192];
static int n_owned;

static void *grab(size_t size) {
  void *p = calloc(1, size ? size : 1);
  if (!p || n_owned == (int)(sizeof owned / sizeof *owned)) abort();
  return owned[n_owned++] = p;
}

static void free_all(void) {
  while (n_owned > 0) free(owned[--n_owned]);
}

static void no_release_schema(struct ArrowSchema *s) { (void)s; }
static void no_release_array(struct ArrowArray *a) { (void)a; }

typedef struct col {
  struct ArrowSchema *s;
  struct ArrowArray *a;
} col;

/* A column of `format` with buffers b[0..nb) and children k[0..nk). */
static col mk(const char *format, int64_t length, int64_t nulls, int nb, const void *const *b,
              int nk, const col *k) {
  col c = {grab(sizeof *c.s), grab(sizeof *c.a)};
  struct ArrowSchema **sk = grab(sizeof *sk * (size_t)(nk + 1));
  struct ArrowArray **ak = grab(sizeof *ak * (size_t)(nk + 1));
  const void **bufs = grab(sizeof *bufs * (size_t)(nb + 1));
  for (int i = 0; i < nk; i++) {
    sk[i] = k[i].s;
    ak[i] = k[i].a;
  }
  for (int i = 0; i < nb; i++) bufs[i] = b[i];
  *c.s = (struct ArrowSchema){
      format, "v", NULL, ARROW_FLAG_NULLABLE, nk, sk, NULL, no_release_schema, NULL};
  *c.a = (struct ArrowArray){length, nulls, 0, nb, nk, bufs, ak, NULL, no_release_array, NULL};
  return c;
}

/* The pool's pattern of value kinds, and which rows are null. */
static const int TOKEN[POOL] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 3};
#define POOL_NULLS 3

static const uint8_t *pool_validity(void) {
  uint8_t *bits = grab(2);
  for (int k = 0; k < POOL; k++)
    if (TOKEN[k] != 1) bits[k >> 3] |= (uint8_t)(1u << (k & 7));
  return bits;
}

static const char *const STR[4] = {"alpha", NULL, "a string longer than twelve",
                                   "a string longer than twelvE"};

/* The string of pool row k: its kind's, or garbage (varying by row) under a null. */
static const char *str_at(int k) {
  if (STR[TOKEN[k]]) return STR[TOKEN[k]];
  char *g = grab(16);
  snprintf(g, 16, "garbage%.*s", k % 4 + 1, "!!!!");
  return g;
}

static col ints(int64_t n, const int32_t *v, const uint8_t *valid, int64_t nulls) {
  int32_t *data = grab(sizeof *data * (size_t)n);
  memcpy(data, v, sizeof *data * (size_t)n);
  const void *b[2] = {valid, data};
  return mk("i", n, nulls, 2, b, 0, NULL);
}

/* Binary-like strings s[0..n) with 4- or 8-byte offsets. */
static col strings(const char *format, int64_t n, const char *const *s, const uint8_t *valid,
                   int64_t nulls) {
  int wide = !strcmp(format, "U") || !strcmp(format, "Z");
  uint8_t *offsets = grab((size_t)(n + 1) * 8);
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) total += strlen(s[i]);
  char *data = grab(total + 1), *p = data;
  for (int64_t i = 0; i <= n; i++) {
    int64_t at = p - data;
    if (wide)
      memcpy(offsets + 8 * i, &at, 8);
    else
      memcpy(offsets + 4 * i, &(int32_t){(int32_t)at}, 4);
    if (i < n) p += strlen(strcpy(p, s[i]));
  }
  const void *b[3] = {valid, offsets, data};
  return mk(format, n, nulls, 3, b, 0, NULL);
}

static col pool_strings(const char *format) {
  const char *s[POOL];
  for (int k = 0; k < POOL; k++) s[k] = str_at(k);
  return strings(format, POOL, s, pool_validity(), POOL_NULLS);
}

static col pool_utf8(void) { return pool_strings("u"); }
static col pool_large_utf8(void) { return pool_strings("U"); }
static col pool_binary(void) { return pool_strings("z"); }
static col pool_large_binary(void) { return pool_strings("Z"); }

static col pool_int32(void) {
  static const int32_t of[4] = {7, 0, 2, 9};
  int32_t v[POOL];
  for (int k = 0; k < POOL; k++) v[k] = TOKEN[k] == 1 ? 1000 + k : of[TOKEN[k]];
  return ints(POOL, v, pool_validity(), POOL_NULLS);
}

static col pool_bool(void) {
  uint8_t *bits = grab(2);
  for (int k = 0; k < POOL; k++) {
    int v = TOKEN[k] == 1 ? k & 1 : TOKEN[k] != 2;
    if (v) bits[k >> 3] |= (uint8_t)(1u << (k & 7));
  }
  const void *b[2] = {pool_validity(), bits};
  return mk("b", POOL, POOL_NULLS, 2, b, 0, NULL);
}

static col pool_fixed_binary(void) {
  static const char *const of[4] = {"abc", NULL, "xyz", "xyq"};
  char *data = grab(3 * POOL);
  for (int k = 0; k < POOL; k++) {
    char garbage[4] = {(char)('0' + k), '#', '#', 0};
    memcpy(data + 3 * k, of[TOKEN[k]] ? of[TOKEN[k]] : garbage, 3);
  }
  const void *b[2] = {pool_validity(), data};
  return mk("w:3", POOL, POOL_NULLS, 2, b, 0, NULL);
}

/* Views: long strings alternate between two data buffers, each at its own
 * offset, so that equal values are laid out differently. */
static col pool_views(const char *format) {
  uint8_t *views = grab(16 * POOL);
  char *data[2] = {grab(64 * POOL), grab(64 * POOL)};
  int64_t *sizes = grab(2 * 8);
  for (int k = 0; k < POOL; k++) {
    const char *s = str_at(k);
    int32_t len = (int32_t)strlen(s), buf = k % 2, off = (int32_t)sizes[buf];
    uint8_t *v = views + 16 * k;
    memcpy(v, &len, 4);
    if (len <= 12) {
      memcpy(v + 4, s, (size_t)len);
      continue;
    }
    memcpy(data[buf] + off, s, (size_t)len);
    sizes[buf] += len + 3;
    memcpy(v + 4, s, 4);
    memcpy(v + 8, &buf, 4);
    memcpy(v + 12, &off, 4);
  }
  const void *b[5] = {pool_validity(), views, data[0], data[1], sizes};
  return mk(format, POOL, POOL_NULLS, 5, b, 0, NULL);
}

static col pool_utf8_view(void) { return pool_views("vu"); }
static col pool_binary_view(void) { return pool_views("vz"); }

/* The int lists of the pool: v0 [7], v2 [2 2 2], v3 [2 2 9], garbage [k]
 * under a null. */
static int list_len(int k) { return TOKEN[k] == 0 || TOKEN[k] == 1 ? 1 : 3; }

static int32_t list_item(int k, int j) {
  if (TOKEN[k] == 1) return 100 + k;
  if (TOKEN[k] == 0) return 7;
  return TOKEN[k] == 3 && j == 2 ? 9 : 2;
}

/* n int lists ("+l", "+L" or "+vl"), list i holding lens[i] items, in order. */
static col int_lists(const char *format, int n, const int *lens, const int32_t *items,
                     const uint8_t *valid, int64_t nulls) {
  int wide = !strcmp(format, "+L"), view = !strcmp(format, "+vl");
  uint8_t *offsets = grab(8 * (size_t)(n + 1));
  int32_t *sizes = grab(4 * (size_t)n);
  int total = 0;
  for (int i = 0; i <= n; i++) {
    if (wide)
      memcpy(offsets + 8 * i, &(int64_t){total}, 8);
    else
      memcpy(offsets + 4 * i, &total, 4);
    if (i < n) total += sizes[i] = lens[i];
  }
  col child = ints(total, items, NULL, 0);
  const void *b[3] = {valid, offsets, sizes};
  return mk(format, n, nulls, view ? 3 : 2, b, 1, &child);
}

static col pool_lists(const char *format) {
  int32_t items[3 * POOL];
  int lens[POOL], n = 0;
  for (int k = 0; k < POOL; k++) {
    lens[k] = list_len(k);
    for (int j = 0; j < list_len(k); j++) items[n++] = list_item(k, j);
  }
  return int_lists(format, POOL, lens, items, pool_validity(), POOL_NULLS);
}

static col pool_list(void) { return pool_lists("+l"); }
static col pool_large_list(void) { return pool_lists("+L"); }

/* A list view whose rows lie in its child back to front. */
static col pool_list_view(void) {
  int32_t *offsets = grab(4 * POOL), *sizes = grab(4 * POOL), items[3 * POOL];
  int n = 0;
  for (int k = POOL - 1; k >= 0; k--) {
    offsets[k] = n;
    sizes[k] = list_len(k);
    for (int j = 0; j < list_len(k); j++) items[n++] = list_item(k, j);
  }
  col child = ints(n, items, NULL, 0);
  const void *b[3] = {pool_validity(), offsets, sizes};
  return mk("+vl", POOL, POOL_NULLS, 3, b, 1, &child);
}

static col pool_fixed_list(void) {
  int32_t items[3 * POOL];
  for (int k = 0; k < POOL; k++)
    for (int j = 0; j < 3; j++) items[3 * k + j] = TOKEN[k] == 0 ? 7 : list_item(k, j);
  col child = ints(3 * POOL, items, NULL, 0);
  const void *b[1] = {pool_validity()};
  return mk("+w:3", POOL, POOL_NULLS, 1, b, 1, &child);
}

/* struct<i: int32, s: utf8>: v2 and v3 differ in s only. */
static col pool_struct(void) {
  static const int32_t of[4] = {7, 0, 2, 2};
  int32_t v[POOL];
  const char *s[POOL];
  for (int k = 0; k < POOL; k++) {
    v[k] = TOKEN[k] == 1 ? 500 + k : of[TOKEN[k]];
    s[k] = str_at(k);
  }
  col kids[2] = {ints(POOL, v, NULL, 0), strings("u", POOL, s, NULL, 0)};
  const void *b[1] = {pool_validity()};
  return mk("+s", POOL, POOL_NULLS, 1, b, 2, kids);
}

/* map<utf8, int32>: v0 {alpha: 7}, v2 {k: 2, l: 2}, v3 {k: 2, l: 9}. */
static col pool_map(void) {
  int32_t *offsets = grab(4 * (POOL + 1)), values[2 * POOL];
  const char *keys[2 * POOL];
  int n = 0;
  for (int k = 0; k < POOL; k++) {
    offsets[k] = n;
    int t = TOKEN[k];
    if (t == 0 || t == 1) {
      keys[n] = t ? "g" : "alpha";
      values[n++] = t ? 300 + k : 7;
      continue;
    }
    keys[n] = "k";
    values[n++] = 2;
    keys[n] = "l";
    values[n++] = t == 3 ? 9 : 2;
  }
  offsets[POOL] = n;
  col kv[2] = {strings("u", n, keys, NULL, 0), ints(n, values, NULL, 0)};
  kv[0].s->flags = 0;
  const void *none[1] = {NULL};
  col entries = mk("+s", n, 0, 1, none, 2, kv);
  entries.s->flags = 0;
  const void *b[2] = {pool_validity(), offsets};
  return mk("+m", POOL, POOL_NULLS, 2, b, 1, &entries);
}

/* Unions of int32 and utf8 (no validity): v0 the int 7, v1 "alpha", v2
 * and v3 the long strings. */
static int union_is_int(int k) { return TOKEN[k] == 0; }

static const char *union_str(int k) { return TOKEN[k] == 1 ? "alpha" : str_at(k); }

static col pool_sparse_union(void) {
  int8_t *types = grab(POOL);
  int32_t v[POOL];
  const char *s[POOL];
  for (int k = 0; k < POOL; k++) {
    types[k] = (int8_t)!union_is_int(k);
    v[k] = union_is_int(k) ? 7 : 600 + k; /* unselected rows: garbage */
    s[k] = union_is_int(k) ? "unselected" : union_str(k);
  }
  col kids[2] = {ints(POOL, v, NULL, 0), strings("u", POOL, s, NULL, 0)};
  const void *b[1] = {types};
  return mk("+us:0,1", POOL, 0, 1, b, 2, kids);
}

/* Dense, type ids 3 and 7, each child starting with a value no row uses. */
static col pool_dense_union(void) {
  int8_t *types = grab(POOL);
  int32_t *offsets = grab(4 * POOL), v[POOL + 1] = {-1};
  const char *s[POOL + 1] = {"unused"};
  int nv = 1, ns = 1;
  for (int k = 0; k < POOL; k++) {
    types[k] = union_is_int(k) ? 3 : 7;
    if (union_is_int(k)) {
      offsets[k] = nv;
      v[nv++] = 7;
    } else {
      offsets[k] = ns;
      s[ns++] = union_str(k);
    }
  }
  col kids[2] = {ints(nv, v, NULL, 0), strings("u", ns, s, NULL, 0)};
  const void *b[2] = {types, offsets};
  return mk("+ud:3,7", POOL, 0, 2, b, 2, kids);
}

/* Run-end encoded int32, one run per row: v0 7, v1 5, v2 2, v3 9 (no
 * validity at this level). */
static col pool_run_ends(void) {
  static const int32_t of[4] = {7, 5, 2, 9};
  int32_t ends[POOL], v[POOL];
  for (int k = 0; k < POOL; k++) {
    ends[k] = k + 1;
    v[k] = of[TOKEN[k]];
  }
  col kids[2] = {ints(POOL, ends, NULL, 0), ints(POOL, v, NULL, 0)};
  kids[0].s->flags = 0;
  return mk("+r", POOL, 0, 0, NULL, 2, kids);
}

/* An int8-indexed dictionary-encoded column of n rows over dict. */
static col dict_column(const col *dict, int64_t n, const int8_t *indices, const uint8_t *valid,
                       int64_t nulls) {
  int8_t *idx = grab((size_t)n);
  memcpy(idx, indices, (size_t)n);
  const void *b[2] = {valid, idx};
  col c = mk("c", n, nulls, 2, b, 0, NULL);
  c.s->dictionary = dict->s;
  c.a->dictionary = dict->a;
  return c;
}

/* struct<c: dictionary<int8, utf8>> over a fixed inner dictionary. */
static col pool_nested_dict(void) {
  const char *inner_values[3] = {STR[0], STR[2], STR[3]};
  col inner = strings("u", 3, inner_values, NULL, 0);
  int8_t idx[POOL];
  for (int k = 0; k < POOL; k++)
    idx[k] = (int8_t)(TOKEN[k] == 1 ? k % 3 : TOKEN[k] ? TOKEN[k] - 1 : 0);
  col c = dict_column(&inner, POOL, idx, NULL, 0);
  const void *b[1] = {pool_validity()};
  return mk("+s", POOL, POOL_NULLS, 1, b, 1, &c);
}

typedef struct value_type {
  const char *name;
  col (*pool)(void);
} value_type;

static const value_type TYPES[] = {
    {"int32", pool_int32},
    {"bool", pool_bool},
    {"utf8", pool_utf8},
    {"large_utf8", pool_large_utf8},
    {"binary", pool_binary},
    {"large_binary", pool_large_binary},
    {"utf8_view", pool_utf8_view},
    {"binary_view", pool_binary_view},
    {"fixed_binary", pool_fixed_binary},
    {"list", pool_list},
    {"large_list", pool_large_list},
    {"list_view", pool_list_view},
    {"fixed_list", pool_fixed_list},
    {"struct", pool_struct},
    {"map", pool_map},
    {"sparse_union", pool_sparse_union},
    {"dense_union", pool_dense_union},
    {"run_end", pool_run_ends},
    {"nested_dict", pool_nested_dict},
};
#define N_TYPES ((int)(sizeof TYPES / sizeof *TYPES))

/* Rows [off, off+len) of the pool, as another ArrowArray over its buffers. */
static col slice(col pool, int64_t off, int64_t len) {
  col c = {pool.s, grab(sizeof *c.a)};
  *c.a = *pool.a;
  c.a->offset = off;
  c.a->length = len;
  c.a->null_count = -1;
  return c;
}

/* A "+s" batch whose columns (named d0, d1, ...) are cols. */
static col batch_of(int n, col *cols) {
  static const char *const names[] = {"d0", "d1"};
  for (int i = 0; i < n; i++) cols[i].s->name = names[i];
  const void *b[1] = {NULL};
  col batch = mk("+s", cols[0].a->length, 0, 1, b, n, cols);
  batch.s->flags = 0;
  return batch;
}

/* A dictionary-encoded column over dict, its rows picking the dictionary's
 * values back to front, the middle row null. */
static col dict_col(col dict) {
  int64_t n = dict.a->length + 2;
  int8_t idx[16];
  uint8_t *valid = grab(2);
  for (int64_t i = 0; i < n; i++) {
    idx[i] = (int8_t)(dict.a->length - 1 - i % dict.a->length);
    if (i != n / 2) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  return dict_column(&dict, n, idx, valid, 1);
}

/* A batch of one dict_col. */
static col dict_batch(col dict) {
  col c = dict_col(dict);
  return batch_of(1, &c);
}

/* ---- writing and reading back ---------------------------------------------- */

/* SHRINK: the second dictionary is a prefix of the first: a stream replaces
 * it, a file keeps the first (it cannot replace one, and the second
 * batch's indices mean the same values in it). */
typedef enum change { SAME, DELTA, REPLACE, SHRINK } change;

typedef struct write_mode {
  const char *name;
  xchg_ipc_format format;
  int64_t coalesce_rows;
} write_mode;

static const write_mode MODES[] = {{"stream", XCHG_IPC_STREAM, 0},
                                   {"file", XCHG_IPC_FILE, 0},
                                   {"coalesced", XCHG_IPC_STREAM, 1000}};

static xchg_status write_batches(const col *batches, int n, const xchg_ipc_write_options *opts,
                                 xchg_buf **out, xchg_error *err) {
  xchg_ipc_writer *w;
  *out = NULL;
  xchg_status st = xchg_ipc_writer_open_memory(batches[0].s, opts, &w, err);
  if (st != XCHG_OK) return st;
  for (int i = 0; i < n && st == XCHG_OK; i++) st = xchg_ipc_writer_write(w, batches[i].a, err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, err);
  if (st == XCHG_OK) *out = xchg_ipc_writer_take_memory(w);
  xchg_ipc_writer_free(w);
  return st;
}

/* The batches read from d, concatenated or not, hold exactly the rows of
 * the batches given, in order and value by value. */
static int check_rows(const col *given, int n, const rt_data *d, char *msg) {
  int64_t got = 0, row = 0;
  for (int i = 0; i < n; i++) {
    for (int64_t done = 0; done < given[i].a->length;) {
      if (got >= d->n)
        return tu_errorf(msg, MSG, "%lld batches read, rows of batch %d missing", (long long)d->n,
                         i);
      int64_t take = d->batches[got].length - row;
      if (take > given[i].a->length - done) take = given[i].a->length - done;
      if (array_range_equal(given[i].s, given[i].a, done, &d->batches[got], row, take, msg, MSG) !=
          0)
        return -1;
      done += take;
      row += take;
      if (row == d->batches[got].length) got++, row = 0;
    }
  }
  return got == d->n ? 0
                     : tu_errorf(msg, MSG, "%lld batches read, %lld expected", (long long)d->n,
                                 (long long)got);
}

typedef struct expect {
  int64_t dictionaries, deltas, batches;
} expect;

/* The dictionary ids of a schema: one per dictionary, nested ones too. */
static int64_t dictionary_ids(const struct ArrowSchema *s) {
  int64_t n = s->dictionary ? 1 + dictionary_ids(s->dictionary) : 0;
  for (int64_t i = 0; i < s->n_children; i++) n += dictionary_ids(s->children[i]);
  return n;
}

/* A written stream as one xchg_batch_decoder payload: its batches come out
 * as one array holding the rows given, or the decode fails with
 * XCHG_ENOTSUP when a dictionary was replaced between them (one array has
 * one dictionary); never with other values (before, a replacement no
 * shorter than the dictionary it replaced gave the first batches' rows
 * its values).  Without a replacement it must succeed. */
static void check_one_payload(const char *what, const col *batches, int n, xchg_buf *buf,
                              int replaced) {
  char msg[MSG] = "";
  tu_body schema;
  xchg_batch_decoder *dec = NULL;
  xchg_source *src = NULL;
  struct ArrowArray one = {0};
  xchg_error err;
  TU_CHECK(tu_map_bodies(xchg_buf_data(buf), xchg_buf_size(buf), &schema, 1) == 1, "%s: schema",
           what);
  TU_OK(xchg_batch_decoder_open(xchg_buf_data(buf), (size_t)(schema.offset + schema.length), NULL,
                                0, NULL, &dec, &err),
        err);
  TU_OK(xchg_source_from_buf(buf, &src, &err), err);
  xchg_status st = dec && src ? xchg_batch_decoder_decode(dec, src, 0, &one, &err) : XCHG_EINVAL;
  rt_data d = {.batches = &one, .n = 1};
  if (st == XCHG_OK)
    TU_CHECK(check_rows(batches, n, &d, msg) == 0, "%s, one payload: %s", what, msg);
  else
    TU_CHECK(replaced && st == XCHG_ENOTSUP && strstr(err.message, "replaced"),
             "%s, one payload: status %d '%s'%s", what, (int)st, err.message,
             replaced ? "" : " without a replaced dictionary");
  if (one.release) one.release(&one);
  xchg_source_free(src);
  xchg_batch_decoder_free(dec);
}

/* Writes the batches in mode, reads them back and checks rows and message
 * counts; or, when refused is set, checks that the writer fails with
 * XCHG_EINVAL naming `field`. */
static void check_written(const char *what, const col *batches, int n, const write_mode *mode,
                          const xchg_ipc_write_options *base, expect want, int refused,
                          const char *field) {
  char msg[MSG];
  xchg_ipc_write_options opts = *base;
  opts.format = mode->format;
  opts.coalesce_rows = mode->coalesce_rows;
  xchg_buf *buf;
  xchg_error err;
  xchg_status st = write_batches(batches, n, &opts, &buf, &err);
  if (refused) {
    TU_CHECK(st == XCHG_EINVAL && strstr(err.message, field),
             "%s (%s): status %d, '%s': expected "
             "EINVAL naming '%s'",
             what, mode->name, (int)st, st == XCHG_OK ? "" : err.message, field);
    xchg_buf_unref(buf);
    return;
  }
  if (st != XCHG_OK) {
    TU_CHECK(0, "%s (%s): write: %s", what, mode->name, err.message);
    return;
  }
  rt_data d = {0};
  TU_CHECK(rt_read_buf(buf, &d, msg, MSG) == 0 && check_rows(batches, n, &d, msg) == 0,
           "%s (%s): %s", what, mode->name, msg);
  if (mode->format == XCHG_IPC_STREAM && d.record_batches > 1)
    check_one_payload(what, batches, n, buf,
                      d.dictionary_batches - d.delta_batches > dictionary_ids(&d.schema));
  TU_CHECK(d.dictionary_batches == want.dictionaries && d.delta_batches == want.deltas,
           "%s (%s): %lld dictionary messages (%lld deltas), expected %lld (%lld)", what,
           mode->name, (long long)d.dictionary_batches, (long long)d.delta_batches,
           (long long)want.dictionaries, (long long)want.deltas);
  if (want.batches)
    TU_CHECK(d.record_batches == want.batches, "%s (%s): %lld record batches, expected %lld", what,
             mode->name, (long long)d.record_batches, (long long)want.batches);
  rt_data_free(&d);
  xchg_buf_unref(buf);
}

/* One dictionary change: the pool rows of the first and the second batch's
 * dictionary, and what it is. */
typedef struct dict_case {
  const char *name;
  int64_t off0, len0, off1, len1;
  change kind;
} dict_case;

static const dict_case CASES[] = {
    {"equal", 0, 3, 4, 3, SAME},
    {"extension", 0, 3, 4, 4, DELTA},
    {"replacement", 0, 3, 8, 3, REPLACE},
    {"shrink", 0, 3, 0, 2, SHRINK},
    {"longer replacement", 0, 2, 1, 3, REPLACE},
    {"extension of two", 0, 2, 4, 3, DELTA},
};
#define N_CASES ((int)(sizeof CASES / sizeof *CASES))

/* Dictionary messages of the value type's own dictionary plus the one
 * nested in nested_dict's values (written once, never changed).  Coalesced,
 * a batch whose dictionary extends the pending one joins it, and the merged
 * batch is written with the newer dictionary alone. */
static expect expected(const value_type *t, const dict_case *c, const write_mode *m) {
  int64_t nested = !strcmp(t->name, "nested_dict");
  change kind = c->kind != SHRINK ? c->kind : m->format == XCHG_IPC_FILE ? SAME : REPLACE;
  expect e = {1 + nested + (kind != SAME), kind == DELTA, 0};
  if (m->coalesce_rows && kind != REPLACE) e = (expect){1 + nested, 0, 1};
  if (m->coalesce_rows && kind == REPLACE) e.batches = 2;
  return e;
}

static void check_dictionary_changes(const value_type *t) {
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  for (int i = 0; i < N_CASES; i++) {
    const dict_case *c = &CASES[i];
    col pool = t->pool();
    col batches[2] = {dict_batch(slice(pool, c->off0, c->len0)),
                      dict_batch(slice(pool, c->off1, c->len1))};
    char what[256];
    snprintf(what, sizeof what, "%s, %s", t->name, c->name);
    for (int m = 0; m < 3; m++) {
      int refused = c->kind == REPLACE && MODES[m].format == XCHG_IPC_FILE;
      check_written(what, batches, 2, &MODES[m], &opts, expected(t, c, &MODES[m]), refused, "d0");
    }
  }
}

/* Two columns given one dictionary id: accepted when their dictionaries
 * hold equal values (laid out apart), refused naming the field otherwise.
 * nested_dict's columns share their inner dictionary's id too (ids go
 * inner first, column by column). */
static void check_shared(const value_type *t) {
  static const int64_t ids[4] = {0, 0}, nested_ids[4] = {1, 0, 1, 0};
  int nested = !strcmp(t->name, "nested_dict");
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.dictionary_ids = nested ? nested_ids : ids;
  opts.n_dictionary_ids = nested ? 4 : 2;
  for (int differ = 0; differ < 2; differ++) {
    col pool = t->pool();
    col cols[2] = {dict_col(slice(pool, 0, 3)), dict_col(slice(pool, differ ? 8 : 4, 3))};
    col batch = batch_of(2, cols);
    char what[256];
    snprintf(what, sizeof what, "%s, shared id, %s dictionaries", t->name,
             differ ? "different" : "equal");
    check_written(what, &batch, 1, &MODES[0], &opts, (expect){1 + nested, 0, 1}, differ, "d1");
  }
}

/* ---- nested dictionaries ------------------------------------------------------ */

/* A batch whose column is dictionary-encoded with values struct<c: dict<utf8>>:
 * outer row i is the struct whose c is inner_idx[i] over inner. */
static col nested_batch(int n_inner, const char *const *inner, int n_outer,
                        const int8_t *inner_idx) {
  col in = strings("u", n_inner, inner, NULL, 0);
  col c = dict_column(&in, n_outer, inner_idx, NULL, 0);
  const void *b[1] = {NULL};
  col outer = mk("+s", n_outer, 0, 1, b, 1, &c);
  int8_t rows[8];
  for (int i = 0; i < n_outer; i++) rows[i] = (int8_t)(n_outer - 1 - i);
  col column = dict_column(&outer, n_outer, rows, NULL, 0);
  return batch_of(1, &column);
}

typedef struct nested_case {
  const char *name;
  int n_inner1, n_outer1;
  const char *inner1[3];
  int8_t idx1[3];
  change inner_change, outer_change;
} nested_case;

/* The first batch is always inner [p q], outer [c=0, c=1] = [p, q]. */
static const nested_case NESTED[] = {
    /* same indices, other values: the outer values changed */
    {"inner replaced", 2, 2, {"r", "s"}, {0, 1}, REPLACE, REPLACE},
    /* other indices, the same values: the outer values did not change */
    {"inner permuted", 2, 2, {"q", "p"}, {1, 0}, REPLACE, SAME},
    {"both extended", 3, 3, {"p", "q", "r"}, {0, 1, 2}, DELTA, DELTA},
    /* the outer values extend the old ones, but a delta would be resolved
     * in the permuted inner dictionary */
    {"outer extended, inner permuted", 2, 3, {"q", "p"}, {1, 0, 0}, REPLACE, REPLACE},
};

static void check_nested(void) {
  static const char *const first_inner[2] = {"p", "q"};
  static const int8_t first_idx[2] = {0, 1};
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  for (size_t i = 0; i < sizeof NESTED / sizeof *NESTED; i++) {
    const nested_case *c = &NESTED[i];
    col batches[2] = {nested_batch(2, first_inner, 2, first_idx),
                      nested_batch(c->n_inner1, c->inner1, c->n_outer1, c->idx1)};
    expect e = {2 + (c->inner_change != SAME) + (c->outer_change != SAME),
                (c->inner_change == DELTA) + (c->outer_change == DELTA), 0};
    char what[256];
    snprintf(what, sizeof what, "nested dictionary, %s", c->name);
    for (int m = 0; m < 3; m++) {
      const write_mode *mode = &MODES[m];
      int replaced = c->inner_change == REPLACE || c->outer_change == REPLACE;
      expect em = e;
      if (mode->coalesce_rows) em = replaced ? (expect){e.dictionaries, 0, 2} : (expect){2, 0, 1};
      int refused = mode->format == XCHG_IPC_FILE && replaced;
      check_written(what, batches, 2, mode, &opts, em, refused, "d0");
    }
  }
}

/* Rows whose stored bytes agree but whose validity does not are different
 * values; rows whose garbage under nulls differs are not. */
static void check_validity_only(void) {
  static const int32_t v[3] = {7, 2, 2};
  static const uint8_t one_null = 0x5, none = 0x7;
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  col a = ints(3, v, &one_null, 1), b = ints(3, v, &none, 0);
  col batches[2] = {dict_batch(a), dict_batch(b)};
  check_written("int32, validity only", batches, 2, &MODES[0], &opts, (expect){2, 0, 0}, 0, "d0");
}

/* The same bytes or items cut into other values, [ab c] then [a bc], or
 * one value grown, [ab c] then [abc c]: replacements. */
typedef struct regroup {
  const char *name;
  const char *strings[2];
  int lens[2];
  int32_t items[4];
} regroup;

static void check_regrouped(void) {
  static const regroup first = {"", {"ab", "c"}, {2, 1}, {1, 2, 3}};
  static const regroup after[2] = {{"regrouped", {"a", "bc"}, {1, 2}, {1, 2, 3}},
                                   {"one value grown", {"abc", "c"}, {3, 1}, {1, 2, 3, 3}}};
  static const char *const list_formats[] = {"+l", "+vl"};
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  for (int r = 0; r < 2; r++) {
    char what[64];
    snprintf(what, sizeof what, "utf8, %s", after[r].name);
    col utf8[2] = {dict_batch(strings("u", 2, first.strings, NULL, 0)),
                   dict_batch(strings("u", 2, after[r].strings, NULL, 0))};
    check_written(what, utf8, 2, &MODES[0], &opts, (expect){2, 0, 0}, 0, "d0");
    for (int i = 0; i < 2; i++) {
      snprintf(what, sizeof what, "%s, %s", list_formats[i], after[r].name);
      col lists[2] = {
          dict_batch(int_lists(list_formats[i], 2, first.lens, first.items, NULL, 0)),
          dict_batch(int_lists(list_formats[i], 2, after[r].lens, after[r].items, NULL, 0))};
      check_written(what, lists, 2, &MODES[0], &opts, (expect){2, 0, 0}, 0, "d0");
    }
  }
}

/* ---- appending run-end encoded values ------------------------------------- */

/* A run-end encoded column of `rows` rows in one run of `value`, its run
 * ends of `ends_format` ("s" or "i"). */
static col one_run(const char *ends_format, int32_t rows, int32_t value) {
  int16_t *end16 = grab(2);
  *end16 = (int16_t)rows;
  col kids[2] = {ints(1, &rows, NULL, 0), ints(1, &value, NULL, 0)};
  if (ends_format[0] == 's') kids[0].a->buffers[1] = end16;
  kids[0].s->format = ends_format;
  kids[0].s->flags = 0;
  return mk("+r", rows, 0, 0, NULL, 2, kids);
}

/* Coalescing past what 16-bit run ends hold fails, naming why; below it
 * the rows come back. */
static void check_run_end_limits(void) {
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.coalesce_rows = 1 << 20;
  for (int past = 0; past < 2; past++) {
    int32_t rows = past ? 20000 : 10000;
    col c[2] = {one_run("s", rows, 1), one_run("s", rows, 2)};
    col batches[2] = {batch_of(1, &c[0]), batch_of(1, &c[1])};
    xchg_buf *buf;
    xchg_error err;
    xchg_status st = write_batches(batches, 2, &opts, &buf, &err);
    if (past) {
      TU_CHECK(st != XCHG_OK && strstr(err.message, "run ends hold"),
               "coalescing 2 x 20000 rows "
               "with 16-bit run ends: status %d",
               (int)st);
    } else {
      char msg[MSG];
      rt_data d = {0};
      TU_CHECK(st == XCHG_OK && rt_read_buf(buf, &d, msg, MSG) == 0 &&
                   check_rows(batches, 2, &d, msg) == 0,
               "coalescing 2 x 10000 rows: %s", st != XCHG_OK ? err.message : msg);
      TU_CHECK(d.n == 1, "coalescing 2 x 10000 rows: %lld batches", (long long)d.n);
      rt_data_free(&d);
    }
    xchg_buf_unref(buf);
  }
}

/* Appending an array whose run ends stop short of its length (as no
 * validated input has them) is an error, not a read past the ends. */
static void check_short_run_ends(void) {
  col column = one_run("i", 5, 1);
  col batch = batch_of(1, &column);
  ipc_schema schema;
  xchg_error err;
  if (ipc_schema_import(batch.s, NULL, 0, &schema, &err) != XCHG_OK) {
    TU_CHECK(0, "schema import: %s", err.message);
    return;
  }
  ipc_array *ree = ipc_array_new(0, 2);
  ipc_array *ends = ree->children[0] = ipc_array_new(2, 0),
            *values = ree->children[1] = ipc_array_new(2, 0);
  ree->length = 5;
  ends->length = values->length = 1;
  int32_t two = 2;
  memcpy(xchg_buf_mutable_data(ipc_array_set_buf(ends, 1, xchg_buf_alloc(4))), &two, 4);
  memcpy(xchg_buf_mutable_data(ipc_array_set_buf(values, 1, xchg_buf_alloc(4))), &two, 4);
  ipc_array *out = NULL;
  xchg_status st = ipc_array_concat(&schema.root.children[0], 0, ree, ree, &out, &err);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, "run ends stop before row 5") && !out,
           "appending short run ends: status %d", (int)st);
  ipc_array_unref(ree);
  ipc_schema_free(&schema);
}

/* ---- xchg convert --------------------------------------------------------------- */

static char dir[] = "/tmp/xchg-dict-XXXXXX";

/* The bytes after the schema message of an IPC stream, up to (without) its
 * end-of-stream marker. */
static int messages_after_schema(const xchg_buf *buf, int64_t *from, int64_t *to) {
  tu_body bodies[1];
  const uint8_t *p = xchg_buf_data(buf);
  int64_t size = (int64_t)xchg_buf_size(buf);
  if (tu_map_bodies(p, (size_t)size, bodies, 1) != 1 || size < 8) return -1;
  *from = bodies[0].offset + bodies[0].length;
  *to = size - 8;
  return memcmp(p + *to, "\xff\xff\xff\xff\0\0\0\0", 8) == 0 ? 0 : -1;
}

/* A stream of two batches whose second one replaces the first one's
 * dictionary: each written by a writer of its own, then spliced. */
static int spliced_stream(const col *batches, const char *path) {
  xchg_buf *part[2] = {NULL, NULL};
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  xchg_error err;
  int rc = -1;
  int64_t from[2], to[2];
  tu_bytes out = {0};
  if (write_batches(&batches[0], 1, &opts, &part[0], &err) == XCHG_OK &&
      write_batches(&batches[1], 1, &opts, &part[1], &err) == XCHG_OK &&
      messages_after_schema(part[0], &from[0], &to[0]) == 0 &&
      messages_after_schema(part[1], &from[1], &to[1]) == 0) {
    tu_bytes_append(&out, xchg_buf_data(part[0]), (size_t)to[0]);
    tu_bytes_append(&out, xchg_buf_data(part[1]) + from[1], (size_t)(to[1] - from[1]));
    tu_bytes_append(&out, xchg_buf_data(part[0]) + to[0], 8);
    rc = tu_write_file(path, out.data, out.size);
  }
  free(out.data);
  xchg_buf_unref(part[0]);
  xchg_buf_unref(part[1]);
  return rc;
}

static int read_path(const char *path, rt_data *d, char *msg) {
  size_t size;
  uint8_t *bytes = tu_read_file(path, &size);
  if (!bytes) return tu_errorf(msg, MSG, "cannot read %s", path);
  xchg_buf *buf = xchg_buf_alloc(size);
  if (!buf) abort();
  memcpy(xchg_buf_mutable_data(buf), bytes, size);
  free(bytes);
  int rc = rt_read_buf(buf, d, msg, MSG);
  xchg_buf_unref(buf);
  return rc;
}

/* `xchg convert` of a stream holding a replacement keeps both
 * dictionaries' values, coalesced or not; `--file` fails naming the field. */
static void check_convert(const value_type *t, const char *cli) {
  char in[256], out[256], err_path[256], msg[MSG];
  snprintf(in, sizeof in, "%s/%s.stream", dir, t->name);
  snprintf(out, sizeof out, "%s/%s.out", dir, t->name);
  snprintf(err_path, sizeof err_path, "%s/%s.err", dir, t->name);
  col pool = t->pool();
  col batches[2] = {dict_batch(slice(pool, 0, 3)), dict_batch(slice(pool, 8, 3))};
  if (spliced_stream(batches, in) != 0) {
    TU_CHECK(0, "%s: cannot build the spliced stream", t->name);
    return;
  }
  static const char *const options[] = {"", "--batch-rows 1000"};
  for (int i = 0; i < 2; i++) {
    rt_data d = {0};
    int rc = tu_run("'%s' convert '%s' '%s' %s", cli, in, out, options[i]);
    if (rc != 0) snprintf(msg, MSG, "exit status %d", rc);
    TU_CHECK(rc == 0 && read_path(out, &d, msg) == 0 && check_rows(batches, 2, &d, msg) == 0,
             "%s: convert %s: %s", t->name, options[i], msg);
    rt_data_free(&d);
    unlink(out);
  }
  int rc = tu_run("'%s' convert '%s' '%s' --file 2>'%s'", cli, in, out, err_path);
  tu_bytes err = tu_read_bytes(err_path);
  tu_bytes_append(&err, "", 1);
  TU_CHECK(rc == 1 && strstr((const char *)err.data, "'d0'"),
           "%s: convert --file of a replacement: "
           "exit %d, stderr '%s'",
           t->name, rc, (const char *)err.data);
  free(err.data);
  unlink(out);
  unlink(err_path);
  unlink(in);
}

/* check(type) over every value type, each type's arrays freed after it. */
static void each_type(void (*check)(const value_type *)) {
  for (int i = 0; i < N_TYPES; i++) {
    check(&TYPES[i]);
    free_all();
  }
}

static void dictionary_changes(void) { each_type(check_dictionary_changes); }
static void shared(void) { each_type(check_shared); }

static void convert(void) {
  const char *cli = tu_cli_path();
  for (int i = 0; i < N_TYPES; i++) {
    check_convert(&TYPES[i], cli);
    free_all();
  }
}

/* The cases below keep their arrays until free_all. */
static void nested(void) {
  check_nested();
  free_all();
}

static void validity_only(void) {
  check_validity_only();
  free_all();
}

static void regrouped(void) {
  check_regrouped();
  free_all();
}

static void run_end_limits(void) {
  check_run_end_limits();
  free_all();
}

static void short_run_ends(void) {
  check_short_run_ends();
  free_all();
}

int main(int argc, char **argv) {
  if (mkdtemp(dir) == NULL) {
    perror("test_writer_dict: mkdtemp");
    return 1;
  }
  static const tu_case cases[] = {
      {"dictionary_changes", dictionary_changes},
      {"shared", shared},
      {"convert", convert},
      {"nested", nested},
      {"validity_only", validity_only},
      {"regrouped", regrouped},
      {"run_end_limits", run_end_limits},
      {"short_run_ends", short_run_ends},
  };
  int rc = TU_MAIN(argc, argv, "writer_dict", cases);
  rmdir(dir);
  return rc;
}
