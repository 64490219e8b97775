/* tests/support/cache_data.h — broadcasts for the shared cache's tests:
 * IPC streams whose every value follows from where it is (part, batch,
 * row), so that a reader can check each value it gets without keeping a
 * copy; and a byte source whose decode a test can block, slow down or
 * break; creating a cache, reading its metrics, and the derived value
 * (a sum) the tests build from a holder. */
#ifndef XCHG_TESTS_CACHE_DATA_H
#define XCHG_TESTS_CACHE_DATA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "xchg/cache.h"
#include "xchg/writer.h"

/* Columns: 0 "k" int64 = cd_key(part, batch, row); 1 "s" utf8, null when
 * k % 11 == 0, else "s<k*7 % 1000003>"; 2 "d" dictionary<int32, utf8>
 * with the words of cd_word(k % 4). */
#define CD_COLUMNS 3
int64_t cd_key(int64_t part, int64_t batch, int64_t row);
const char *cd_word(int64_t i);

/* An IPC stream of part `part`: n_batches batches of rows[b] rows, with
 * the columns above, or none at all when zero_columns is set (batches of
 * rows only).  body: XCHG_BLOCK_NONE, _LZ4_FRAME or _ZSTD.  0 or -1. */
int cd_make_stream(int64_t part, const int64_t *rows, int64_t n_batches, int zero_columns,
                   xchg_block_codec body, xchg_buf **out);

/* Checks that batch (columns cols[0..n_cols) of the schema above) holds the
 * values of batch `batch` of part `part`.  0, or -1 with msg filled. */
int cd_check_batch(const struct ArrowArray *a, const int64_t *cols, int64_t n_cols, int64_t part,
                   int64_t batch, int64_t rows, char *msg, size_t msgsz);

/* Encoded bytes behind xchg_broadcast.open_part, with hooks.  Each part's
 * bytes are parts[i] (an IPC stream wrapped in `codec`). */
typedef struct cd_source {
  xchg_buf *parts[8];
  xchg_stream_codec codec;
  int64_t n_parts;
  xchg_broadcast_part descr[8];
  /* Hooks, set by the test. */
  int gate_closed;          /* reads block while set (under lock) ... */
  atomic_long gate_after;   /* ... once this many bytes were read */
  atomic_int delay_us;      /* sleep before every read */
  atomic_int fail_opens;    /* the next fail_opens opens fail their reads ... */
  atomic_long fail_after;   /* ... once this many bytes were read */
  atomic_int fail_always;   /* every open fails its reads at fail_after */
  atomic_int fail_permille; /* each open fails (at fail_after) with this chance */
  /* Observations. */
  atomic_int opens;   /* sources opened (one per part per decode) */
  atomic_int blocked; /* reads waiting at the gate now */
  pthread_mutex_t lock;
  pthread_cond_t gate;
} cd_source;

/* Takes references on the parts' buffers. */
void cd_source_init(cd_source *s, xchg_buf *const *parts, int64_t n_parts, xchg_stream_codec codec);
void cd_source_free(cd_source *s);
void cd_source_close_gate(cd_source *s);
void cd_source_open_gate(cd_source *s);
/* Waits until at least n reads are blocked at the gate (at most 10 s). */
int cd_source_wait_blocked(cd_source *s, int n);
/* The description of the source for xchg_cache_acquire. */
xchg_broadcast cd_broadcast(cd_source *s);

/* Fills *req (xchg_cache_request_init, then the arguments) and returns it:
 * columns[0..n_columns) (NULL: every column), cancelled by cancel(ctx). */
const xchg_cache_request *cd_request(xchg_cache_request *req, const int64_t *columns,
                                     int64_t n_columns, xchg_cancel_fn cancel, void *ctx);

/* A cache with options o (NULL: the defaults), created as one check that
 * fails when it cannot be: the cache, or NULL. */
xchg_cache *cd_cache_create(const xchg_cache_options *o);

/* The metrics of c now. */
xchg_cache_metrics cd_metrics(xchg_cache *c);

/* An xchg_derive_fn: the sum of column 0 (int64, no nulls) over every
 * batch of h, in a new malloc'd int64_t (free it) of 8 bytes; ctx unused.
 * The derived value the cache tests build. */
xchg_status cd_build_sum(void *ctx, const xchg_cache_holder *h, void **value, int64_t *bytes,
                         xchg_error *err);

/* Wraps IPC bytes in a stream codec (a new reference; NONE gives ipc). */
xchg_buf *cd_encode(xchg_buf *ipc, xchg_stream_codec codec);

#endif
