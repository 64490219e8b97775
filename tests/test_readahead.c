/* tests/test_readahead.c — the reader's read-ahead pipeline (src/ipc/readahead.c).
 *
 * With a pool, batches are planned ahead, decoded in groups on any thread
 * and taken in order.  Whatever the pool size, read-ahead window and task
 * size, a reader must hand out what a reader without a pool does: every
 * batch, each value right, in order, each named by its own record batch
 * message (xchg_ipc_reader_batch_message), not the last one read ahead; and
 * on a bad stream, the same batches and then the same error, in place of
 * the same batch.  Also: closing with
 * work in flight, select refused once batches are read ahead, and readers
 * on several threads sharing one pool.  Meant to run under ThreadSanitizer
 * too (`ctest -L tsan`). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cache_data.h"
#include "support/ipc_bodies.h"
#include "support/testutil.h"
#include "xchg/ipc.h"

#define N_BATCHES 240
static int64_t rows[N_BATCHES];
static const int64_t all_columns[CD_COLUMNS] = {0, 1, 2};

/* What one read of a stream gave: the batches that checked out, then how
 * it ended. */
typedef struct outcome {
  int64_t batches;
  int bad_batch; /* a batch whose values were wrong */
  int misplaced; /* a batch that xchg_ipc_reader_batch_message placed wrong */
  xchg_status status;
  xchg_status again; /* next() after the end or error */
  char message[XCHG_ERROR_MESSAGE_SIZE];
} outcome;

typedef struct config {
  int threads; /* 0: no pool */
  int64_t readahead_bytes, task_bytes;
} config;

/* The record batch messages in the order on_message reports them (read
 * ahead of the batches handed out, with a pool). */
typedef struct batch_messages {
  int64_t index[N_BATCHES], offset[N_BATCHES], n;
} batch_messages;

static void note_batch(void *ctx, const xchg_message_info *info) {
  batch_messages *m = ctx;
  if (info->kind != XCHG_MESSAGE_RECORD_BATCH || m->n == N_BATCHES) return;
  m->index[m->n] = info->index;
  m->offset[m->n++] = info->offset;
}

/* xchg_ipc_reader_batch_message names batch k's message and byte,
 * whatever was read ahead of it. */
static int placed_right(const xchg_ipc_reader *r, const batch_messages *m, int64_t k) {
  int64_t offset, index = xchg_ipc_reader_batch_message(r, &offset);
  if (k < m->n && index == m->index[k] && offset == m->offset[k]) return 1;
  printf("  batch %lld: placed at message %lld, byte %lld; read as message %lld, byte %lld\n",
         (long long)k, (long long)index, (long long)offset,
         (long long)(k < m->n ? m->index[k] : -1), (long long)(k < m->n ? m->offset[k] : -1));
  return 0;
}

static outcome read_stream(const xchg_buf *data, xchg_pool *pool, const config *c) {
  outcome o = {0};
  batch_messages read = {0};
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = pool;
  opts.on_message = note_batch;
  opts.on_message_ctx = &read;
  if (c->readahead_bytes) opts.readahead_bytes = c->readahead_bytes;
  if (c->task_bytes) opts.task_bytes = c->task_bytes;
  xchg_ipc_reader *r;
  xchg_error err;
  o.status = xchg_ipc_reader_open_memory(xchg_buf_data(data), xchg_buf_size(data), NULL, NULL,
                                         &opts, &r, &err);
  if (o.status != XCHG_OK) {
    snprintf(o.message, sizeof o.message, "%s", err.message);
    return o;
  }
  int64_t before_offset, before = xchg_ipc_reader_batch_message(r, &before_offset);
  if (before != -1 || before_offset != -1) {
    printf("  before any batch: placed at message %lld, byte %lld\n", (long long)before,
           (long long)before_offset);
    o.misplaced = 1;
  }
  for (;;) {
    struct ArrowArray a;
    o.status = xchg_ipc_reader_next(r, &a, &err);
    if (o.status != XCHG_OK) {
      snprintf(o.message, sizeof o.message, "%s", err.message);
      break;
    }
    if (!a.release) break;
    if (!o.misplaced && !placed_right(r, &read, o.batches)) o.misplaced = 1;
    char msg[512];
    if (o.batches >= N_BATCHES || cd_check_batch(&a, all_columns, CD_COLUMNS, 0, o.batches,
                                                 rows[o.batches], msg, sizeof msg) != 0) {
      if (!o.bad_batch) printf("  batch %lld: %s\n", (long long)o.batches, msg);
      o.bad_batch = 1;
    }
    a.release(&a);
    o.batches++;
  }
  struct ArrowArray a;
  o.again = xchg_ipc_reader_next(r, &a, &err);
  if (o.again == XCHG_OK && a.release) {
    a.release(&a);
    o.again = -1;
  }
  xchg_ipc_reader_free(r);
  return o;
}

/* readahead_bytes -1: no read-ahead at all, one batch at a time (before,
 * a window of 0 or less planned nothing and the stream ended at once). */
static const config configs[] = {
    {2, 0, 0},  {2, 1, 1},       {2, 64 << 10, 1},  {2, 64 << 10, 16 << 10},
    {3, 0, 1},  {3, 1 << 20, 0}, {4, 256 << 10, 1}, {1, 0, 0},
    {2, -1, 0}, {3, -1, 1},
};
#define N_CONFIGS (sizeof configs / sizeof configs[0])

static void describe(const config *c, char *out, size_t n) {
  snprintf(out, n, "%d threads, readahead %lld, task %lld", c->threads,
           (long long)c->readahead_bytes, (long long)c->task_bytes);
}

/* Reads data without a pool, then with every configuration, and checks
 * that each read ended as the first did. */
static void check_same_outcome(const char *what, const xchg_buf *data, int64_t want_batches,
                               xchg_status want_status) {
  const config serial = {0, 0, 0};
  outcome base = read_stream(data, NULL, &serial);
  TU_CHECK(!base.bad_batch && !base.misplaced && base.batches == want_batches &&
               base.status == want_status,
           "%s without a pool: %lld batches (want %lld), status %d (want %d): %s", what,
           (long long)base.batches, (long long)want_batches, base.status, want_status,
           base.message);
  for (size_t i = 0; i < N_CONFIGS; i++) {
    char name[128];
    describe(&configs[i], name, sizeof name);
    xchg_pool *pool = NULL;
    TU_CHECK(xchg_pool_create(configs[i].threads, &pool, NULL) == XCHG_OK, "cannot create a pool");
    outcome o = read_stream(data, pool, &configs[i]);
    xchg_pool_free(pool);
    TU_CHECK(!o.bad_batch && !o.misplaced && o.batches == base.batches && o.status == base.status &&
                 strcmp(o.message, base.message) == 0 && o.again == base.again,
             "%s, %s: %lld batches, status %d '%s', then %d; without a pool %lld, %d '%s', then %d",
             what, name, (long long)o.batches, o.status, o.message, o.again,
             (long long)base.batches, base.status, base.message, base.again);
  }
}

/* ---- bad streams --------------------------------------------------------------- */

/* Where record batch `index` keeps its body; length 0 when there is no
 * such batch. */
static tu_body locate_body(const xchg_buf *data, int64_t index) {
  static tu_body bodies[2 * N_BATCHES + 8];
  int64_t n = tu_map_bodies(xchg_buf_data(data), xchg_buf_size(data), bodies, 2 * N_BATCHES + 8);
  for (int64_t i = 0, batch = 0; i < n; i++)
    if (bodies[i].kind == XCHG_MESSAGE_RECORD_BATCH && batch++ == index) return bodies[i];
  return (tu_body){.kind = XCHG_MESSAGE_RECORD_BATCH, .offset = -1};
}

static xchg_buf *copy_of(const xchg_buf *data, size_t size) {
  xchg_buf *out = xchg_buf_alloc(size);
  memcpy(xchg_buf_mutable_data(out), xchg_buf_data(data), size);
  return out;
}

/* Batch `index` with the first compressed frame of its body broken (its
 * magic number cleared): decompression fails on whatever thread runs it. */
static xchg_buf *break_frame(const xchg_buf *data, int64_t index, xchg_block_codec codec) {
  static const uint8_t lz4_magic[4] = {0x04, 0x22, 0x4d, 0x18},
                       zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
  const uint8_t *magic = codec == XCHG_BLOCK_ZSTD ? zstd_magic : lz4_magic;
  tu_body b = locate_body(data, index);
  if (b.offset < 0) return NULL;
  xchg_buf *out = copy_of(data, xchg_buf_size(data));
  uint8_t *body = xchg_buf_mutable_data(out) + b.offset;
  for (int64_t i = 0; i + 4 <= b.length; i++)
    if (memcmp(body + i, magic, 4) == 0) {
      body[i] = 0;
      return out;
    }
  xchg_buf_unref(out);
  return NULL;
}

/* Batch `index` with the null count of column "s" one more than its
 * validity bits count (its FieldNode, the second of three (rows, nulls)
 * pairs in the message's metadata): only full validation finds it, on
 * whatever thread validates the batch. */
static xchg_buf *miscount_nulls(const xchg_buf *data, int64_t index) {
  tu_body b = locate_body(data, index);
  if (b.offset < 0) return NULL;
  xchg_buf *out = copy_of(data, xchg_buf_size(data));
  uint8_t *m = xchg_buf_mutable_data(out) + b.metadata_offset;
  uint64_t n = (uint64_t)rows[index], node[6];
  for (int64_t i = 0; i + 48 <= b.metadata_bytes; i += 8) {
    memcpy(node, m + i, sizeof node); /* the test runs on little-endian hosts */
    if (node[0] != n || node[1] != 0 || node[2] != n || node[3] == 0 || node[3] >= n ||
        node[4] != n || node[5] != 0)
      continue;
    node[3]++;
    memcpy(m + i + 24, &node[3], 8);
    return out;
  }
  xchg_buf_unref(out);
  return NULL;
}

/* The stream cut in the middle of batch `index`'s body: the reader fails
 * while planning, on the calling thread. */
static xchg_buf *cut_in_body(const xchg_buf *data, int64_t index) {
  tu_body b = locate_body(data, index);
  if (b.offset < 0) return NULL;
  return copy_of(data, (size_t)(b.offset + b.length / 2));
}

/* ---- the calls around reading -------------------------------------------------------- */

/* Closing a reader while its pool still decodes what it read ahead. */
static void check_close_in_flight(const xchg_buf *data) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(3, &pool, NULL) == XCHG_OK, "cannot create a pool");
  int ok = 1;
  for (int64_t stop = 0; stop < 40 && ok; stop += 7) {
    xchg_ipc_read_options opts;
    xchg_ipc_read_options_init(&opts);
    opts.pool = pool;
    opts.task_bytes = 1;
    xchg_ipc_reader *r;
    xchg_error err;
    ok = xchg_ipc_reader_open_memory(xchg_buf_data(data), xchg_buf_size(data), NULL, NULL, &opts,
                                     &r, &err) == XCHG_OK;
    for (int64_t i = 0; ok && i < stop; i++) {
      struct ArrowArray a;
      ok = xchg_ipc_reader_next(r, &a, &err) == XCHG_OK && a.release;
      if (ok) a.release(&a);
    }
    if (ok) xchg_ipc_reader_free(r);
  }
  xchg_pool_free(pool);
  TU_CHECK(ok, "closing a reader with batches read ahead");
}

/* Select once a pool has read batches ahead: refused, and nothing lost. */
static void check_select_after_read_ahead(const xchg_buf *data) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(2, &pool, NULL) == XCHG_OK, "cannot create a pool");
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = pool;
  xchg_ipc_reader *r;
  xchg_error err;
  int ok = xchg_ipc_reader_open_memory(xchg_buf_data(data), xchg_buf_size(data), NULL, NULL, &opts,
                                       &r, &err) == XCHG_OK;
  struct ArrowArray a;
  ok = ok && xchg_ipc_reader_next(r, &a, &err) == XCHG_OK && a.release;
  if (ok) a.release(&a);
  const char *k = "k";
  xchg_status st = ok ? xchg_ipc_reader_select(r, &k, 1, &err) : XCHG_OK;
  TU_CHECK(st == XCHG_EINVAL && strstr(err.message, "read ahead"), "select after read-ahead: %d %s",
           st, err.message);
  int64_t n = 1;
  char msg[512] = "";
  while (ok && xchg_ipc_reader_next(r, &a, &err) == XCHG_OK && a.release) {
    ok = cd_check_batch(&a, all_columns, CD_COLUMNS, 0, n, rows[n], msg, sizeof msg) == 0;
    a.release(&a);
    n++;
  }
  TU_CHECK(ok && n == N_BATCHES, "every batch after the refused select: %lld %s", (long long)n,
           msg);
  xchg_ipc_reader_free(r);
  xchg_pool_free(pool);
}

typedef struct reader_thread {
  const xchg_buf *data;
  xchg_pool *pool;
  int ok;
} reader_thread;

static void *reader_main(void *p) {
  reader_thread *t = p;
  const config c = {3, 128 << 10, 1};
  t->ok = 1;
  for (int round = 0; round < 3; round++) {
    outcome o = read_stream(t->data, t->pool, &c);
    t->ok &= !o.bad_batch && o.status == XCHG_OK && o.batches == N_BATCHES;
  }
  return NULL;
}

/* Readers on four threads sharing a pool of three: their groups interleave
 * on the pool's list, and each thread helps the others' while it waits. */
static void check_shared_pool(const xchg_buf *data) {
  xchg_pool *pool = NULL;
  TU_CHECK(xchg_pool_create(3, &pool, NULL) == XCHG_OK, "cannot create a pool");
  pthread_t threads[4];
  reader_thread args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (reader_thread){data, pool, 0};
    pthread_create(&threads[i], NULL, reader_main, &args[i]);
  }
  int ok = 1;
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    ok &= args[i].ok;
  }
  xchg_pool_free(pool);
  TU_CHECK(ok, "four readers sharing one pool");
}

/* Whole, cut and (when compressed) broken streams of one codec: read
 * ahead as without a pool. */
static void same_outcomes(xchg_block_codec codec) {
  const char *name = xchg_block_codec_name(codec);
  xchg_buf *data;
  if (!TU_CHECK(cd_make_stream(0, rows, N_BATCHES, 0, codec, &data) == 0, "making the %s stream",
                name))
    return;
  char what[64];
  snprintf(what, sizeof what, "%s: whole", name);
  check_same_outcome(what, data, N_BATCHES, XCHG_OK);
  for (int64_t at = 0; at < N_BATCHES; at += 61) {
    xchg_buf *cut = cut_in_body(data, at + 1);
    snprintf(what, sizeof what, "%s: cut in batch %lld", name, (long long)at + 1);
    if (TU_CHECK(cut != NULL, "%s: no batch %lld", what, (long long)at + 1))
      check_same_outcome(what, cut, at + 1, XCHG_EIO);
    xchg_buf_unref(cut);
    if (codec == XCHG_BLOCK_NONE) continue;
    int64_t k = at + 5; /* rows[k] > 0 for these, so that the batch has frames */
    while (rows[k] == 0) k++;
    xchg_buf *broken = break_frame(data, k, codec);
    snprintf(what, sizeof what, "%s: frame broken in batch %lld", name, (long long)k);
    if (TU_CHECK(broken != NULL, "%s: no frame found", what))
      check_same_outcome(what, broken, k, XCHG_EFORMAT);
    /* ... and the batch before it wrong in a way only validation sees: a
     * reader must not hand it out because the next one failed to
     * decompress (batches read ahead together are validated together) */
    int64_t m = k - 1; /* with rows enough for nulls; the empty ones between are read too */
    while (m > at && rows[m] < 100) m--;
    xchg_buf *both = broken ? miscount_nulls(broken, m) : NULL;
    snprintf(what, sizeof what, "%s: nulls miscounted in batch %lld", name, (long long)m);
    if (TU_CHECK(both != NULL || !broken, "%s: no FieldNode found", what))
      check_same_outcome(what, both, m, XCHG_EFORMAT);
    xchg_buf_unref(both);
    xchg_buf_unref(broken);
  }
  xchg_buf_unref(data);
}

static void uncompressed(void) { same_outcomes(XCHG_BLOCK_NONE); }
static void lz4_frame(void) { same_outcomes(XCHG_BLOCK_LZ4_FRAME); }
static void zstd(void) { same_outcomes(XCHG_BLOCK_ZSTD); }

/* The cases on one LZ4 stream. */
static void on_lz4_stream(void (*check)(const xchg_buf *)) {
  xchg_buf *data;
  if (!TU_CHECK(cd_make_stream(0, rows, N_BATCHES, 0, XCHG_BLOCK_LZ4_FRAME, &data) == 0,
                "making the stream"))
    return;
  check(data);
  xchg_buf_unref(data);
}

static void close_in_flight(void) { on_lz4_stream(check_close_in_flight); }
static void select_after_read_ahead(void) { on_lz4_stream(check_select_after_read_ahead); }
static void shared_pool(void) { on_lz4_stream(check_shared_pool); }

int main(int argc, char **argv) {
  uint64_t seed = 42;
  for (int i = 0; i < N_BATCHES; i++) {
    uint64_t x = tu_splitmix64(&seed);
    /* Mostly small batches, some empty, a few large enough to be split. */
    rows[i] = x % 10 == 0   ? 0
              : x % 10 == 1 ? 8000 + (int64_t)(x >> 40) % 8000
                            : 1 + (int64_t)(x >> 40) % 2000;
  }
  static const tu_case cases[] = {
      {"uncompressed", uncompressed},
      {"lz4_frame", lz4_frame},
      {"zstd", zstd},
      {"close_in_flight", close_in_flight},
      {"select_after_read_ahead", select_after_read_ahead},
      {"shared_pool", shared_pool},
  };
  return TU_MAIN(argc, argv, "readahead", cases);
}
