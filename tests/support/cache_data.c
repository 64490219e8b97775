/* cache_data.c — see cache_data.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/cache_data.h"
#include "support/testutil.h"
#include "xchg/testing.h"

static const char *const words[4] = {"red", "green", "blue", "gold"};

int64_t cd_key(int64_t part, int64_t batch, int64_t row) {
  return part * 100000000 + batch * 100000 + row;
}

const char *cd_word(int64_t i) { return words[i & 3]; }

static int is_null_s(int64_t k) { return k % 11 == 0; }

static int format_s(int64_t k, char *out) {
  return sprintf(out, "s%lld", (long long)((k * 7) % 1000003));
}

/* ---- building batches ------------------------------------------------------- */

typedef struct node {
  struct ArrowArray array;
  const void *buffers[3];
  struct ArrowArray *children[CD_COLUMNS];
  void *owned[3];
} node;

static void release_node(struct ArrowArray *a) {
  node *n = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) a->children[i]->release(a->children[i]);
  if (a->dictionary) a->dictionary->release(a->dictionary);
  for (int i = 0; i < 3; i++) free(n->owned[i]);
  a->release = NULL;
  free(n); /* a lives inside n */
}

static struct ArrowArray *new_node(int64_t length, int64_t n_buffers) {
  node *n = calloc(1, sizeof *n);
  n->array.length = length;
  n->array.n_buffers = n_buffers;
  n->array.buffers = n->buffers;
  n->array.children = n->children;
  n->array.private_data = n;
  n->array.release = release_node;
  return &n->array;
}

static void *own(struct ArrowArray *a, int i, size_t size) {
  node *n = a->private_data;
  n->owned[i] = calloc(1, size ? size : 1);
  n->buffers[i] = n->owned[i];
  return n->owned[i];
}

static struct ArrowArray *make_batch(int64_t part, int64_t b, int64_t rows, int zero_columns) {
  struct ArrowArray *root = new_node(rows, 1);
  if (zero_columns) return root;
  root->n_children = CD_COLUMNS;
  struct ArrowArray *k = root->children[0] = new_node(rows, 2);
  int64_t *kv = own(k, 1, (size_t)rows * 8);
  struct ArrowArray *s = root->children[1] = new_node(rows, 3);
  uint8_t *valid = own(s, 0, (size_t)(rows + 7) / 8);
  int32_t *offsets = own(s, 1, (size_t)(rows + 1) * 4);
  char *data = own(s, 2, (size_t)rows * 9);
  struct ArrowArray *d = root->children[2] = new_node(rows, 2);
  int32_t *idx = own(d, 1, (size_t)rows * 4);
  for (int64_t r = 0; r < rows; r++) {
    int64_t key = cd_key(part, b, r);
    kv[r] = key;
    idx[r] = (int32_t)(key % 4);
    offsets[r + 1] = offsets[r];
    if (is_null_s(key)) {
      s->null_count++;
      continue;
    }
    valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    offsets[r + 1] += format_s(key, data + offsets[r]);
  }
  struct ArrowArray *dict = d->dictionary = new_node(4, 3);
  int32_t *doff = own(dict, 1, 5 * 4);
  char *ddata = own(dict, 2, 32);
  for (int i = 0; i < 4; i++) {
    size_t n = strlen(words[i]);
    memcpy(ddata + doff[i], words[i], n);
    doff[i + 1] = doff[i] + (int32_t)n;
  }
  return root;
}

static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

int cd_make_stream(int64_t part, const int64_t *rows, int64_t n_batches, int zero_columns,
                   xchg_block_codec body, xchg_buf **out) {
  static struct ArrowSchema dict_s = {"u", "", NULL, 0, 0, NULL, NULL, release_schema, NULL};
  struct ArrowSchema cols[CD_COLUMNS] = {
      {"l", "k", NULL, 0, 0, NULL, NULL, release_schema, NULL},
      {"u", "s", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL},
      {"i", "d", NULL, 0, 0, NULL, &dict_s, release_schema, NULL}};
  struct ArrowSchema *children[CD_COLUMNS] = {&cols[0], &cols[1], &cols[2]};
  struct ArrowSchema root = {"+s",     "",   NULL,           0,   zero_columns ? 0 : CD_COLUMNS,
                             children, NULL, release_schema, NULL};
  xchg_ipc_write_options opts;
  xchg_ipc_write_options_init(&opts);
  opts.codec = body;
  xchg_ipc_writer *w;
  xchg_error err;
  if (xchg_ipc_writer_open_memory(&root, &opts, &w, &err) != XCHG_OK) {
    fprintf(stderr, "writer: %s\n", err.message);
    return -1;
  }
  int rc = 0;
  for (int64_t b = 0; b < n_batches && rc == 0; b++) {
    struct ArrowArray *batch = make_batch(part, b, rows[b], zero_columns);
    if (xchg_ipc_writer_write(w, batch, &err) != XCHG_OK) rc = -1;
    batch->release(batch);
  }
  if (rc == 0 && xchg_ipc_writer_finish(w, &err) != XCHG_OK) rc = -1;
  if (rc == 0 && !(*out = xchg_ipc_writer_take_memory(w))) rc = -1;
  if (rc != 0) fprintf(stderr, "writer: %s\n", err.message);
  xchg_ipc_writer_free(w);
  return rc;
}

/* ---- checking --------------------------------------------------------------- */

static int fail(char *msg, size_t msgsz, const char *what, int64_t col, int64_t row) {
  snprintf(msg, msgsz, "%s (column %lld, row %lld)", what, (long long)col, (long long)row);
  return -1;
}

static int bit(const void *bits, int64_t i) {
  return bits == NULL || ((const uint8_t *)bits)[i >> 3] >> (i & 7) & 1;
}

static int check_column(const struct ArrowArray *c, int64_t col, int64_t part, int64_t batch,
                        int64_t rows, char *msg, size_t msgsz) {
  if (c->length != rows || c->offset != 0) return fail(msg, msgsz, "length", col, -1);
  for (int64_t r = 0; r < rows; r++) {
    int64_t key = cd_key(part, batch, r);
    if (col == 0) {
      if (((const int64_t *)c->buffers[1])[r] != key) return fail(msg, msgsz, "k", col, r);
    } else if (col == 1) {
      const int32_t *off = c->buffers[1];
      const char *data = c->buffers[2];
      if (bit(c->buffers[0], r) == is_null_s(key)) return fail(msg, msgsz, "s validity", col, r);
      char want[32];
      int n = is_null_s(key) ? 0 : format_s(key, want);
      if (off[r + 1] - off[r] != n || memcmp(data + off[r], want, (size_t)n) != 0)
        return fail(msg, msgsz, "s value", col, r);
    } else {
      const struct ArrowArray *dict = c->dictionary;
      if (!dict || dict->length != 4) return fail(msg, msgsz, "dictionary", col, r);
      int32_t i = ((const int32_t *)c->buffers[1])[r];
      const int32_t *off = dict->buffers[1];
      const char *data = dict->buffers[2];
      const char *want = cd_word(key % 4);
      if (i < 0 || i > 3 || (size_t)(off[i + 1] - off[i]) != strlen(want) ||
          memcmp(data + off[i], want, strlen(want)) != 0)
        return fail(msg, msgsz, "d value", col, r);
    }
  }
  return 0;
}

int cd_check_batch(const struct ArrowArray *a, const int64_t *cols, int64_t n_cols, int64_t part,
                   int64_t batch, int64_t rows, char *msg, size_t msgsz) {
  if (!a->release) return fail(msg, msgsz, "released batch", -1, -1);
  if (a->length != rows) return fail(msg, msgsz, "batch length", -1, -1);
  if (a->n_children != n_cols) return fail(msg, msgsz, "column count", -1, -1);
  for (int64_t j = 0; j < n_cols; j++)
    if (check_column(a->children[j], cols[j], part, batch, rows, msg, msgsz) != 0) return -1;
  return 0;
}

/* ---- the hooked source -------------------------------------------------------- */

typedef struct open_state {
  cd_source *s;
  xchg_buf *bytes;
  size_t pos;
  int failing;
} open_state;

static xchg_status hooked_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  open_state *o = ctx;
  cd_source *s = o->s;
  pthread_mutex_lock(&s->lock);
  if (s->gate_closed && o->pos >= (size_t)atomic_load(&s->gate_after)) {
    atomic_fetch_add(&s->blocked, 1);
    while (s->gate_closed) pthread_cond_wait(&s->gate, &s->lock);
    atomic_fetch_sub(&s->blocked, 1);
  }
  pthread_mutex_unlock(&s->lock);
  int delay = atomic_load(&s->delay_us);
  if (delay > 0) usleep((useconds_t)delay);
  if (o->failing && o->pos >= (size_t)atomic_load(&s->fail_after))
    return xchg_errorf(err, XCHG_EIO, "injected failure at byte %zu", o->pos);
  size_t left = xchg_buf_size(o->bytes) - o->pos;
  if (n > left) n = left;
  if (n > 4096) n = 4096; /* many small reads: many chances to block or fail */
  memcpy(dst, xchg_buf_data(o->bytes) + o->pos, n);
  o->pos += n;
  *got = n;
  return XCHG_OK;
}

static void hooked_close(void *ctx) {
  open_state *o = ctx;
  xchg_buf_unref(o->bytes);
  free(o);
}

static xchg_status hooked_open(void *ctx, int64_t part, xchg_source **out, xchg_error *err) {
  cd_source *s = ctx;
  open_state *o = calloc(1, sizeof *o);
  if (!o) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  o->s = s;
  o->bytes = xchg_buf_ref(s->parts[part]);
  int nth = atomic_fetch_add(&s->opens, 1);
  uint64_t h = ((uint64_t)nth + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)s;
  int unlucky = (int)((h ^ (h >> 29)) % 1000) < atomic_load(&s->fail_permille);
  int left = atomic_load(&s->fail_opens);
  while (left > 0 && !atomic_compare_exchange_weak(&s->fail_opens, &left, left - 1)) {}
  o->failing = left > 0 || atomic_load(&s->fail_always) || unlucky;
  xchg_status st = xchg_source_from_callback(hooked_read, hooked_close, o, out, err);
  if (st != XCHG_OK) hooked_close(o);
  return st;
}

xchg_buf *cd_encode(xchg_buf *ipc, xchg_stream_codec codec) {
  if (codec == XCHG_STREAM_NONE) return xchg_buf_ref(ipc);
  xchg_buf *out = NULL;
  xchg_error err;
  if (xchg_stream_encode(codec, NULL, xchg_buf_data(ipc), xchg_buf_size(ipc), &out, &err) !=
      XCHG_OK)
    fprintf(stderr, "encode: %s\n", err.message);
  return out;
}

void cd_source_init(cd_source *s, xchg_buf *const *parts, int64_t n_parts,
                    xchg_stream_codec codec) {
  memset(s, 0, sizeof *s);
  for (int64_t i = 0; i < n_parts; i++) {
    s->parts[i] = xchg_buf_ref(parts[i]);
    s->descr[i].codec = codec;
  }
  s->n_parts = n_parts;
  s->codec = codec;
  atomic_store(&s->fail_after, 0);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->gate, NULL);
}

void cd_source_free(cd_source *s) {
  for (int64_t i = 0; i < s->n_parts; i++) xchg_buf_unref(s->parts[i]);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->gate);
}

void cd_source_close_gate(cd_source *s) {
  pthread_mutex_lock(&s->lock);
  s->gate_closed = 1;
  pthread_mutex_unlock(&s->lock);
}

void cd_source_open_gate(cd_source *s) {
  pthread_mutex_lock(&s->lock);
  s->gate_closed = 0;
  pthread_cond_broadcast(&s->gate);
  pthread_mutex_unlock(&s->lock);
}

int cd_source_wait_blocked(cd_source *s, int n) {
  for (int i = 0; i < 10000; i++) {
    if (atomic_load(&s->blocked) >= n) return 0;
    usleep(1000);
  }
  return -1;
}

xchg_broadcast cd_broadcast(cd_source *s) {
  xchg_broadcast b = {s->descr, s->n_parts, hooked_open, s};
  return b;
}

const xchg_cache_request *cd_request(xchg_cache_request *req, const int64_t *columns,
                                     int64_t n_columns, xchg_cancel_fn cancel, void *ctx) {
  xchg_cache_request_init(req);
  req->columns = columns;
  req->n_columns = n_columns;
  req->cancel = cancel;
  req->cancel_ctx = ctx;
  return req;
}

xchg_cache *cd_cache_create(const xchg_cache_options *o) {
  xchg_cache *c = NULL;
  TU_CHECK(xchg_cache_create(o, &c, NULL) == XCHG_OK, "cannot create a cache");
  return c;
}

xchg_cache_metrics cd_metrics(xchg_cache *c) {
  xchg_cache_metrics m;
  xchg_cache_get_metrics(c, &m);
  return m;
}

xchg_status cd_build_sum(void *ctx, const xchg_cache_holder *h, void **value, int64_t *bytes,
                         xchg_error *err) {
  (void)ctx;
  int64_t *sum = calloc(1, sizeof *sum);
  if (!sum) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t i = 0; i < xchg_cache_holder_num_batches(h); i++) {
    struct ArrowArray a;
    xchg_status st = xchg_cache_holder_batch(h, i, &a, err);
    if (st != XCHG_OK) {
      free(sum);
      return st;
    }
    for (int64_t r = 0; r < a.length; r++) *sum += ((const int64_t *)a.children[0]->buffers[1])[r];
    a.release(&a);
  }
  *value = sum;
  *bytes = sizeof *sum;
  return XCHG_OK;
}
