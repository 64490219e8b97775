/* tests/test_alloc_fail.c — every allocation in a decode path may fail.
 *
 * For each decode operation (IPC stream and file, from memory and through
 * a copying source, with dictionaries and LZ4/ZSTD body compression; every
 * stream codec; a codec-wrapped IPC stream; the row reader), the n-th
 * allocation is made to fail, for n = 1, 2, ... until the operation runs to
 * the end without reaching an n-th allocation.  Each time:
 *
 *   - the operation returns XCHG_ENOMEM with a message (or, if it gets
 *     around the failure, decodes exactly what the clean run decoded);
 *   - after the error the object is still safe to use: one more call either
 *     fails again or goes on with exactly the data that was next;
 *   - once released, no xchg_buf is left alive, and LeakSanitizer (in an
 *     ASan build) finds no leaked malloc block after each sweep.
 *
 * Two sweeps per operation: "buf" fails the n-th xchg_buf allocation
 * through xchg_buf_fail_nth_alloc; "all" fails the n-th malloc, calloc,
 * realloc or posix_memalign made by the library, through the linker's
 * --wrap (see the fuzzing block of CMakeLists.txt), so that the reader's
 * own structs are covered too.  Allocations inside liblz4, libzstd and
 * libsnappy are not theirs to fail here.  One summary line per sweep.
 *
 * The IPC reads are also made on a pool of 2 threads created for each run,
 * with every decompression job handed to the pool: the n-th allocation may
 * then be a worker's (its codec contexts, made on its first job), counted
 * across threads, and must still give an error, no leak and no hang. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/array_equal.h"
#include "support/testutil.h"
#include "xchg/rows.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

/* ---- the failing allocator ------------------------------------------------ */

/* Counts allocations down while armed; the one that reaches zero fails.
 * Pool workers allocate too, so the count is atomic: exactly one
 * allocation, on whichever thread, takes it to zero. */
static _Atomic int64_t alloc_countdown;
static atomic_int alloc_failed;
static pthread_t main_thread;
static _Atomic int64_t failed_on_workers; /* injected failures off the main thread */

static int should_fail(void) {
  int64_t left = atomic_load_explicit(&alloc_countdown, memory_order_relaxed);
  while (left > 0) {
    if (atomic_compare_exchange_weak(&alloc_countdown, &left, left - 1)) {
      if (left != 1) return 0;
      atomic_store(&alloc_failed, 1);
      if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&failed_on_workers, 1);
      return 1;
    }
  }
  return 0;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return should_fail() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
  return should_fail() ? ENOMEM : __real_posix_memalign(p, align, n);
}

typedef enum mode { MODE_BUF, MODE_ALL } mode;

static void arm(mode m, int64_t n) {
  atomic_store(&alloc_failed, 0);
  if (m == MODE_ALL)
    atomic_store(&alloc_countdown, n);
  else
    xchg_buf_fail_nth_alloc(n);
}

/* Disarms; returns whether the armed failure happened.  xchg_buf's hook
 * cannot be asked, so it is probed: if the n-th allocation has not come
 * yet, one of the next n allocations fails. */
static int disarm(mode m, int64_t n) {
  if (m == MODE_ALL) {
    atomic_store(&alloc_countdown, 0);
    return atomic_load(&alloc_failed);
  }
  int fired = 1;
  for (int64_t i = 0; i < n && fired; i++) {
    xchg_buf *b = xchg_buf_alloc(1);
    if (b == NULL) fired = 0;
    xchg_buf_unref(b);
  }
  xchg_buf_fail_nth_alloc(0);
  return fired;
}

/* ---- the operations --------------------------------------------------------- */

/* An operation runs to the end (or its first error), checks what it
 * decoded against the clean run, probes the object after an error, and
 * releases everything.  `what` names the operation in failures. */
typedef struct op {
  char what[256];
  xchg_status (*run)(struct op *op, xchg_error *err);
  /* inputs */
  const uint8_t *data;
  size_t size;
  int via_callback;  /* IPC: read through a copying source */
  int random_access; /* IPC: read_batch(i), file format only */
  int pooled;        /* IPC: decompress on a pool of 2 threads, made per run */
  xchg_stream_codec codec;
  const uint8_t *payload; /* stream codecs: the decoded bytes expected */
  size_t payload_size;
  /* IPC: the clean run's schema and batches */
  struct ArrowSchema schema;
  struct ArrowArray batches[64];
  int64_t num_batches;
} op;

typedef struct cursor {
  const uint8_t *data;
  size_t size, pos;
} cursor;

static xchg_status read_cursor(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  cursor *c = ctx;
  size_t left = c->size - c->pos;
  *got = n < left ? n : left;
  memcpy(dst, c->data + c->pos, *got);
  c->pos += *got;
  return XCHG_OK;
}

/* Set once a worker thread has started a decompression job in this run. */
static atomic_int worker_started;

/* Before each job: the main thread waits (up to 100 ms) until a worker has
 * started one too, so that with jobs this small the workers still get
 * theirs rather than finding the caller done with all of them. */
static void share_jobs(void *ctx, xchg_block_codec codec, const void *src, size_t src_size,
                       size_t dst_size) {
  (void)ctx, (void)codec, (void)src, (void)src_size, (void)dst_size;
  if (!pthread_equal(pthread_self(), main_thread)) {
    atomic_store(&worker_started, 1);
    return;
  }
  struct timespec tick = {0, 100000};
  for (int i = 0; i < 1000 && !atomic_load(&worker_started); i++) nanosleep(&tick, NULL);
}

static xchg_status open_ipc(op *o, cursor *c, xchg_pool *pool, xchg_ipc_reader **r,
                            xchg_error *err) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = pool;
  opts.task_bytes = 1; /* with a pool, every job goes to it */
  xchg_status st;
  if (!o->via_callback) {
    st = xchg_ipc_reader_open_memory(o->data, o->size, NULL, NULL, &opts, r, err);
  } else {
    *c = (cursor){o->data, o->size, 0};
    xchg_source *src;
    st = xchg_source_from_callback(read_cursor, NULL, c, &src, err);
    if (st == XCHG_OK) st = xchg_ipc_reader_open(src, &opts, r, err);
  }
  atomic_store(&worker_started, 0);
  if (st == XCHG_OK && pool != NULL) xchg_ipc_reader_on_decompress(*r, share_jobs, NULL);
  return st;
}

static void compare_batch(op *o, int64_t i, struct ArrowArray *a, const char *when) {
  char msg[512] = "";
  TU_CHECK(i < o->num_batches, "%s: batch %" PRId64 " %s, the clean run had %" PRId64, o->what, i,
           when, o->num_batches);
  if (i < o->num_batches)
    TU_CHECK(array_equal(&o->schema, &o->batches[i], a, msg, sizeof msg) == 0,
             "%s: batch %" PRId64 " %s differs: %s", o->what, i, when, msg);
}

/* Reads batch i (by position or in sequence). */
static xchg_status ipc_batch(op *o, xchg_ipc_reader *r, int64_t i, struct ArrowArray *a,
                             xchg_error *err) {
  if (o->random_access) {
    if (i >= xchg_ipc_reader_num_batches(r)) {
      a->release = NULL;
      return XCHG_OK;
    }
    return xchg_ipc_reader_read_batch(r, i, a, err);
  }
  return xchg_ipc_reader_next(r, a, err);
}

/* After an error at batch i, the reader must still be safe: another try
 * fails again or gives exactly batch i. */
static void probe_after_error(op *o, xchg_ipc_reader *r, int64_t i) {
  struct ArrowArray a;
  xchg_error err;
  if (ipc_batch(o, r, i, &a, &err) != XCHG_OK) return;
  if (a.release == NULL) {
    TU_CHECK(i >= o->num_batches,
             "%s: after an error at batch %" PRId64 " the reader says it is done", o->what, i);
    return;
  }
  compare_batch(o, i, &a, "read again after an error");
  a.release(&a);
}

static xchg_status run_ipc(op *o, xchg_error *err) {
  cursor c;
  xchg_ipc_reader *r = NULL;
  /* A new pool each run, so that its workers' first allocations (their
   * codec contexts) come under the injection every time. */
  xchg_pool *pool = NULL;
  if (o->pooled && xchg_pool_create(2, &pool, err) != XCHG_OK) return XCHG_ENOMEM;
  xchg_status st = open_ipc(o, &c, pool, &r, err);
  if (st != XCHG_OK) {
    xchg_pool_free(pool);
    return st;
  }
  struct ArrowSchema s;
  st = xchg_ipc_reader_schema(r, &s, err);
  if (st == XCHG_OK) s.release(&s);
  for (int64_t i = 0; st == XCHG_OK; i++) {
    struct ArrowArray a;
    st = ipc_batch(o, r, i, &a, err);
    if (st != XCHG_OK) {
      probe_after_error(o, r, i);
      break;
    }
    if (a.release == NULL) {
      TU_CHECK(i == o->num_batches, "%s: %" PRId64 " batches, the clean run had %" PRId64, o->what,
               i, o->num_batches);
      break;
    }
    compare_batch(o, i, &a, "read under injection");
    a.release(&a);
  }
  xchg_ipc_reader_free(r);
  xchg_pool_free(pool);
  return st;
}

/* The clean run, kept as the oracle. */
static int ipc_oracle(op *o) {
  cursor c;
  xchg_error err;
  xchg_ipc_reader *r = NULL;
  if (open_ipc(o, &c, NULL, &r, &err) != XCHG_OK ||
      xchg_ipc_reader_schema(r, &o->schema, &err) != XCHG_OK) {
    TU_CHECK(0, "%s: clean read: %s", o->what, err.message);
    xchg_ipc_reader_free(r);
    return -1;
  }
  o->num_batches = 0;
  for (;;) {
    struct ArrowArray *a = &o->batches[o->num_batches];
    if (o->num_batches == 64 || ipc_batch(o, r, o->num_batches, a, &err) != XCHG_OK) {
      TU_CHECK(0, "%s: clean read: %s", o->what,
               o->num_batches == 64 ? "too many batches" : err.message);
      xchg_ipc_reader_free(r);
      return -1;
    }
    if (a->release == NULL) break;
    o->num_batches++;
  }
  xchg_ipc_reader_free(r);
  return 0;
}

static void release_oracle(op *o) {
  for (int64_t i = 0; i < o->num_batches; i++) o->batches[i].release(&o->batches[i]);
  if (o->schema.release) o->schema.release(&o->schema);
}

/* A stream codec: the decoded bytes must be a prefix of the payload, and
 * all of it at the end. */
static xchg_status run_codec(op *o, xchg_error *err) {
  xchg_source *src;
  xchg_status st = xchg_source_from_memory(o->data, o->size, NULL, NULL, &src, err);
  if (st != XCHG_OK) return st;
  xchg_istream *s = NULL;
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.window_size = 4096;
  st = xchg_istream_open(src, o->codec, &opts, &s, err);
  if (st != XCHG_OK) return st;
  size_t at = 0;
  for (;;) {
    uint8_t chunk[3000];
    size_t got = 0;
    st = xchg_istream_read(s, chunk, sizeof chunk, &got, err);
    int same = at + got <= o->payload_size && memcmp(chunk, o->payload + at, got) == 0;
    TU_CHECK(same, "%s: bytes at %zu differ from the payload", o->what, at);
    at += got;
    if (st != XCHG_OK || got < sizeof chunk) break;
  }
  if (st == XCHG_OK)
    TU_CHECK(at == o->payload_size, "%s: %zu bytes decoded of %zu", o->what, at, o->payload_size);
  if (st != XCHG_OK) {
    /* The error sticks. */
    uint8_t byte;
    size_t got = 1;
    xchg_error again;
    TU_CHECK(xchg_istream_read(s, &byte, 1, &got, &again) == st, "%s: the error did not stick",
             o->what);
  }
  xchg_istream_free(s);
  return st;
}

/* An IPC stream wrapped in a stream codec, read in one pass. */
static xchg_status run_wrapped_ipc(op *o, xchg_error *err) {
  xchg_source *src, *inner;
  xchg_istream *s = NULL;
  xchg_status st = xchg_source_from_memory(o->data, o->size, NULL, NULL, &src, err);
  if (st == XCHG_OK) st = xchg_istream_open(src, o->codec, NULL, &s, err);
  if (st == XCHG_OK) st = xchg_source_from_istream(s, &inner, err);
  if (st != XCHG_OK) return st;
  xchg_ipc_reader *r = NULL;
  st = xchg_ipc_reader_open(inner, NULL, &r, err);
  for (int64_t i = 0; st == XCHG_OK; i++) {
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, err);
    if (st != XCHG_OK) break;
    if (a.release == NULL) {
      TU_CHECK(i == o->num_batches, "%s: %" PRId64 " batches of %" PRId64, o->what, i,
               o->num_batches);
      break;
    }
    compare_batch(o, i, &a, "read under injection");
    a.release(&a);
  }
  xchg_ipc_reader_free(r);
  return st;
}

/* Rows: each row i is i % 700 bytes of value (uint8_t)i. */
#define ROWS 300

static xchg_status run_rows(op *o, xchg_error *err) {
  xchg_source *src;
  xchg_status st = xchg_source_from_memory(o->data, o->size, NULL, NULL, &src, err);
  if (st != XCHG_OK) return st;
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.window_size = 512; /* most rows span windows: the scratch buffer grows */
  xchg_istream *s = NULL;
  xchg_row_reader *r = NULL;
  st = xchg_istream_open(src, o->codec, &opts, &s, err);
  if (st == XCHG_OK) st = xchg_row_reader_open(s, NULL, &r, err);
  for (uint32_t i = 0; st == XCHG_OK; i++) {
    const uint8_t *row;
    size_t len;
    st = xchg_row_reader_next(r, &row, &len, err);
    if (st != XCHG_OK) break;
    if (row == NULL) {
      TU_CHECK(i == ROWS, "%s: %u rows of %d", o->what, i, ROWS);
      break;
    }
    int same = len == i % 700;
    for (uint32_t k = 0; same && k < len; k++) same = row[k] == (uint8_t)i;
    TU_CHECK(same, "%s: row %u differs", o->what, i);
  }
  xchg_row_reader_free(r);
  return st;
}

/* ---- the sweep -------------------------------------------------------------------- */

/* A message says what failed: it is not empty, nor only the context
 * ("message 1, field 'f', buffer 2: ") put before a message that was lost. */
static int says_what(const char *message) {
  size_t n = strlen(message);
  return n > 0 && !(n >= 2 && strcmp(message + n - 2, ": ") == 0);
}

static void sweep(op *o, mode m) {
  int64_t live = xchg_buf_live_count(), bytes = tu_live_bytes();
  int64_t tried = 0, errors = 0, on_workers = atomic_load(&failed_on_workers);
  for (int64_t n = 1; n < 1000000; n++) {
    xchg_error err = {""};
    arm(m, n);
    xchg_status st = o->run(o, &err);
    int fired = disarm(m, n);
    tried++;
    TU_CHECK(xchg_buf_live_count() == live && tu_live_bytes() == bytes,
             "%s: allocation %" PRId64 " failing leaks %" PRId64 " buffers", o->what, n,
             xchg_buf_live_count() - live);
    if (!fired) {
      TU_CHECK(st == XCHG_OK, "%s: fails with no allocation failing: %s", o->what, err.message);
      break;
    }
    if (st != XCHG_OK) {
      errors++;
      TU_CHECK(st == XCHG_ENOMEM && says_what(err.message),
               "%s: allocation %" PRId64
               " failing gives %s (\"%s\"), not out of memory with a "
               "message saying what failed",
               o->what, n, xchg_status_name(st), err.message);
    }
  }
  TU_CHECK(LEAK_CHECK() == 0, "%s (%s): LeakSanitizer found leaks (above)", o->what,
           m == MODE_ALL ? "all" : "buf");
  printf("alloc failures (%s) %s: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0",
         m == MODE_ALL ? "all" : "buf", o->what, tried, errors);
  if (m == MODE_ALL && o->pooled)
    printf("; %" PRId64 " on a worker thread", atomic_load(&failed_on_workers) - on_workers);
  printf("\n");
}

static void sweep_both(op *o) {
  sweep(o, MODE_BUF);
  sweep(o, MODE_ALL);
}

/* Gold files chosen for their decode paths: dictionaries (shared, nested,
 * unsigned), LZ4 and ZSTD body compression, nesting, unions, views of every
 * primitive. */
static const char *const gold_files[] = {
    "4.0.0-shareddict/generated_shared_dict", "1.0.0-littleendian/generated_nested_dictionary",
    "2.0.0-compression/generated_lz4",        "2.0.0-compression/generated_zstd",
    "1.0.0-littleendian/generated_nested",    "1.0.0-littleendian/generated_union",
    "1.0.0-littleendian/generated_primitive",
};

static void sweep_gold(const char *gold_dir, const char *name) {
  static const char *const suffixes[] = {".stream", ".arrow_file"};
  for (int f = 0; f < 2; f++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s%s", gold_dir, name, suffixes[f]);
    size_t size;
    uint8_t *data = tu_read_file(path, &size);
    TU_CHECK(data != NULL, "cannot read %s", path);
    if (data == NULL) continue;
    for (int variant = 0; variant < 3; variant++) {
      static op o;
      memset(&o, 0, sizeof o);
      o.run = run_ipc;
      o.data = data;
      o.size = size;
      /* The stream is also read through a copying source; the file by its
       * footer's random access; both on a pool. */
      o.via_callback = f == 0 && variant == 1;
      o.random_access = f == 1 && variant == 1;
      o.pooled = variant == 2;
      snprintf(o.what, sizeof o.what, "%s%s%s", name, suffixes[f],
               o.via_callback    ? " (copying source)"
               : o.random_access ? " (random access)"
               : o.pooled        ? " (pool of 2)"
                                 : "");
      if (ipc_oracle(&o) == 0) sweep_both(&o);
      release_oracle(&o);
    }
    free(data);
  }
}

static void sweep_codecs(const char *gold_dir) {
  char path[2048];
  snprintf(path, sizeof path, "%s/1.0.0-littleendian/generated_nested_dictionary.stream", gold_dir);
  size_t size;
  uint8_t *ipc = tu_read_file(path, &size);
  TU_CHECK(ipc != NULL, "cannot read %s", path);
  if (ipc == NULL) return;
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_FRAME,     XCHG_STREAM_ZSTD,
                                             XCHG_STREAM_LZ4_JAVA,      XCHG_STREAM_SNAPPY_JAVA,
                                             XCHG_STREAM_SNAPPY_FRAMED, XCHG_STREAM_COMET};
  for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
    xchg_stream_encode_options eo;
    xchg_stream_encode_options_init(&eo);
    eo.block_size = 1024; /* several blocks */
    eo.comet_inner = XCHG_STREAM_LZ4_FRAME;
    xchg_buf *enc = NULL;
    xchg_error err;
    xchg_status st = xchg_stream_encode(codecs[c], &eo, ipc, size, &enc, &err);
    TU_CHECK(st == XCHG_OK, "encode %s: %s", xchg_stream_codec_name(codecs[c]), err.message);
    if (st != XCHG_OK) continue;
    static op o;
    memset(&o, 0, sizeof o);
    o.run = run_codec;
    o.data = xchg_buf_data(enc);
    o.size = xchg_buf_size(enc);
    o.codec = codecs[c];
    o.payload = ipc;
    o.payload_size = size;
    snprintf(o.what, sizeof o.what, "%s stream", xchg_stream_codec_name(codecs[c]));
    sweep_both(&o);
    /* The same bytes read as the IPC stream they hold. */
    memset(&o.what, 0, sizeof o.what);
    o.run = run_wrapped_ipc;
    snprintf(o.what, sizeof o.what, "IPC stream inside %s", xchg_stream_codec_name(codecs[c]));
    o.data = ipc;
    o.size = size;
    if (ipc_oracle(&o) == 0) {
      o.data = xchg_buf_data(enc);
      o.size = xchg_buf_size(enc);
      sweep_both(&o);
    }
    release_oracle(&o);
    xchg_buf_unref(enc);
  }
  free(ipc);
}

static void sweep_rows(void) {
  size_t cap = ROWS * (4 + 700), size = 0;
  uint8_t *rows = malloc(cap);
  for (uint32_t i = 0; i < ROWS; i++) {
    uint32_t len = i % 700;
    for (int k = 0; k < 4; k++) rows[size++] = (uint8_t)(len >> (8 * k));
    memset(rows + size, (uint8_t)i, len);
    size += len;
  }
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.block_size = 64 << 10;
  xchg_buf *enc = NULL;
  xchg_error err;
  TU_CHECK(xchg_stream_encode(XCHG_STREAM_LZ4_FRAME, &eo, rows, size, &enc, &err) == XCHG_OK,
           "encode rows: %s", err.message);
  if (enc != NULL) {
    static op o;
    memset(&o, 0, sizeof o);
    o.run = run_rows;
    o.data = xchg_buf_data(enc);
    o.size = xchg_buf_size(enc);
    o.codec = XCHG_STREAM_LZ4_FRAME;
    snprintf(o.what, sizeof o.what, "rows in lz4-frame");
    sweep_both(&o);
  }
  xchg_buf_unref(enc);
  free(rows);
}

/* ---- the source constructors ------------------------------------------------
 *
 * Each constructor, with its n-th allocation failed for n = 1, 2, ... until
 * it succeeds: XCHG_ENOMEM, *out NULL, a message naming the constructor and
 * "out of memory", no leak, and what it was given treated as its header
 * says (release and close callbacks not run, an fd left open, a source or
 * stream taken over closed). */

static int ctor_closes; /* close and release callbacks run */
static const uint8_t ctor_bytes[64];

static void ctor_close(void *ctx) { ctor_closes++; }
static void ctor_release(void *ctx, const void *data, size_t size) { ctor_closes++; }
static xchg_status ctor_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  *got = 0;
  return XCHG_OK;
}
static xchg_status ctor_read_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  return XCHG_OK;
}
static const int ctor_flag;
static int ctor_never_cancelled(void *ctx) { return 0; }

/* Makes a source with the n-th allocation (of mode m) failing; *fired says
 * whether it did.  Anything the constructor is given is made before. */
typedef xchg_status (*ctor_fn)(mode m, int64_t n, int *fired, xchg_source **out, xchg_error *err);

#define ARMED(call)        \
  do {                     \
    arm(m, n);             \
    st = (call);           \
    *fired = disarm(m, n); \
  } while (0)

static xchg_status make_from_buf(mode m, int64_t n, int *fired, xchg_source **out,
                                 xchg_error *err) {
  xchg_buf *buf = xchg_buf_wrap(ctor_bytes, sizeof ctor_bytes, ctor_release, NULL);
  xchg_status st;
  ARMED(xchg_source_from_buf(buf, out, err));
  int released_early = ctor_closes; /* 0 while this reference is intact */
  xchg_buf_unref(buf);              /* releases buf unless the source holds it */
  ctor_closes = released_early;
  return st;
}

static xchg_status make_from_memory(mode m, int64_t n, int *fired, xchg_source **out,
                                    xchg_error *err) {
  xchg_status st;
  ARMED(xchg_source_from_memory(ctor_bytes, sizeof ctor_bytes, ctor_release, NULL, out, err));
  return st;
}

/* The fd, not closed by a failure, counts as closed if it was. */
static xchg_status make_from_fd(mode m, int64_t n, int *fired, xchg_source **out, xchg_error *err) {
  int fds[2];
  if (pipe(fds) != 0) return xchg_errorf(err, XCHG_EIO, "pipe: %s", strerror(errno));
  close(fds[1]);
  xchg_status st;
  ARMED(xchg_source_from_fd(fds[0], 1, out, err));
  if (st == XCHG_OK) return st;
  if (fcntl(fds[0], F_GETFD) == -1)
    ctor_closes++;
  else
    close(fds[0]);
  return st;
}

static xchg_status make_from_callback(mode m, int64_t n, int *fired, xchg_source **out,
                                      xchg_error *err) {
  xchg_status st;
  ARMED(xchg_source_from_callback(ctor_read, ctor_close, NULL, out, err));
  return st;
}

static xchg_status make_from_chunks(mode m, int64_t n, int *fired, xchg_source **out,
                                    xchg_error *err) {
  const xchg_chunk chunks[3] = {{ctor_bytes, 10}, {NULL, 0}, {ctor_bytes + 10, 54}};
  xchg_status st;
  ARMED(xchg_source_from_chunks(chunks, 3, ctor_close, NULL, out, err));
  return st;
}

static xchg_status make_from_read_at(mode m, int64_t n, int *fired, xchg_source **out,
                                     xchg_error *err) {
  xchg_status st;
  ARMED(xchg_source_from_read_at(sizeof ctor_bytes, ctor_read_at, ctor_close, NULL, out, err));
  return st;
}

/* The inner source of the wrappers: closing it counts. */
static xchg_source *ctor_inner(void) {
  xchg_source *inner = NULL;
  xchg_error err;
  TU_OK(xchg_source_from_callback(ctor_read, ctor_close, NULL, &inner, &err), err);
  return inner;
}

static xchg_status make_with_cancel(mode m, int64_t n, int *fired, xchg_source **out,
                                    xchg_error *err) {
  xchg_source *inner = ctor_inner();
  xchg_status st;
  ARMED(xchg_source_with_cancel(inner, ctor_never_cancelled, NULL, out, err));
  return st;
}

static xchg_status make_with_cancel_flag(mode m, int64_t n, int *fired, xchg_source **out,
                                         xchg_error *err) {
  xchg_source *inner = ctor_inner();
  xchg_status st;
  ARMED(xchg_source_with_cancel_flag(inner, &ctor_flag, out, err));
  return st;
}

static xchg_istream *ctor_stream(void) {
  xchg_istream *s = NULL;
  xchg_error err;
  TU_OK(xchg_istream_open(ctor_inner(), XCHG_STREAM_NONE, NULL, &s, &err), err);
  return s;
}

static xchg_status make_to_source(mode m, int64_t n, int *fired, xchg_source **out,
                                  xchg_error *err) {
  xchg_istream *s = ctor_stream();
  xchg_status st;
  ARMED(xchg_source_from_istream(s, out, err));
  return st;
}

/* s stays the caller's: freed here, after the source on success. */
static xchg_istream *borrowed_stream;

static xchg_status make_as_source(mode m, int64_t n, int *fired, xchg_source **out,
                                  xchg_error *err) {
  borrowed_stream = ctor_stream();
  xchg_status st;
  ARMED(xchg_source_from_istream_borrowed(borrowed_stream, out, err));
  if (st != XCHG_OK) {
    TU_CHECK(ctor_closes == 0, "xchg_source_from_istream_borrowed: a failure closed the stream");
    xchg_istream_free(borrowed_stream);
    ctor_closes = 0;
    borrowed_stream = NULL;
  }
  return st;
}

typedef struct ctor_case {
  const char *name;
  ctor_fn make;
  int closed_on_failure; /* the wrappers take inner over */
  int closed_after;      /* closed once the source (and a borrowed stream) are freed; the
                     * fd counts only when failing */
} ctor_case;

static const ctor_case ctor_cases[] = {
    {"xchg_source_from_buf", make_from_buf, 0, 1},
    {"xchg_source_from_memory", make_from_memory, 0, 1},
    {"xchg_source_from_fd", make_from_fd, 0, 0},
    {"xchg_source_from_callback", make_from_callback, 0, 1},
    {"xchg_source_from_chunks", make_from_chunks, 0, 1},
    {"xchg_source_from_read_at", make_from_read_at, 0, 1},
    {"xchg_source_with_cancel", make_with_cancel, 1, 1},
    {"xchg_source_with_cancel_flag", make_with_cancel_flag, 1, 1},
    {"xchg_source_from_istream", make_to_source, 1, 1},
    {"xchg_source_from_istream_borrowed", make_as_source, 0, 1},
};

static void sweep_constructor(const ctor_case *c, mode m) {
  int failures = 0;
  for (int64_t n = 1; n <= 50; n++) {
    ctor_closes = 0;
    xchg_source *src = (xchg_source *)&ctor_closes; /* a sentinel to be overwritten */
    xchg_error err = {""};
    int fired = 0;
    xchg_status st = c->make(m, n, &fired, &src, &err);
    if (!fired) {
      TU_CHECK(st == XCHG_OK && src != NULL && ctor_closes == 0, "%s: %s", c->name, err.message);
      xchg_source_free(st == XCHG_OK ? src : NULL);
      xchg_istream_free(borrowed_stream);
      borrowed_stream = NULL;
      TU_CHECK(ctor_closes == c->closed_after, "%s: freeing the source closed %d things", c->name,
               ctor_closes);
      TU_CHECK(LEAK_CHECK() == 0, "%s: leaked after a failure", c->name);
      printf("     %s, %s: %d allocations failed in turn\n", c->name, m == MODE_ALL ? "all" : "buf",
             failures);
      return;
    }
    failures++;
    TU_CHECK(st == XCHG_ENOMEM && src == NULL && strstr(err.message, c->name) != NULL &&
                 strstr(err.message, "out of memory") != NULL,
             "%s, allocation %lld failed: %s \"%s\", *out %s", c->name, (long long)n,
             xchg_status_name(st), err.message, src == NULL ? "NULL" : "set");
    TU_CHECK(ctor_closes == c->closed_on_failure, "%s, allocation %lld failed: %d closed", c->name,
             (long long)n, ctor_closes);
  }
  TU_CHECK(0, "%s: still failing after 50 allocations", c->name);
}

static void sweep_constructors(void) {
  for (size_t i = 0; i < sizeof ctor_cases / sizeof ctor_cases[0]; i++) {
    sweep_constructor(&ctor_cases[i], MODE_BUF);
    sweep_constructor(&ctor_cases[i], MODE_ALL);
  }
}

static char gold_dir[512];

/* The injection must reach the library's malloc: without --wrap this
 * test would only pretend.  The probe is a small owned buffer, which is
 * always allocated afresh (sources, headers and arena chunks may come
 * from the blocks a thread keeps, buf/small.h, and then cannot fail). */
static void malloc_wrapped(void) {
  arm(MODE_ALL, 1);
  xchg_buf *probe = xchg_buf_alloc(1);
  disarm(MODE_ALL, 1);
  TU_CHECK(probe == NULL,
           "the library's malloc is not wrapped: link with -Wl,--wrap=malloc (CMakeLists.txt)");
  xchg_buf_unref(probe);
}

static void gold(void) {
  for (size_t i = 0; i < sizeof gold_files / sizeof gold_files[0]; i++)
    sweep_gold(gold_dir, gold_files[i]);
  /* Else the pool sweeps never failed a worker's allocation. */
  TU_CHECK(atomic_load(&failed_on_workers) > 0, "no injected failure happened on a pool worker");
}

static void codecs(void) { sweep_codecs(gold_dir); }

int main(int argc, char **argv) {
  main_thread = pthread_self();
  tu_testdata_path(gold_dir, sizeof gold_dir, "arrow-gold");
  static const tu_case cases[] = {
      {"malloc_wrapped", malloc_wrapped},
      {"constructors", sweep_constructors},
      {"gold", gold},
      {"codecs", codecs},
      {"rows", sweep_rows},
  };
  return TU_MAIN(argc, argv, "alloc_fail", cases);
}
