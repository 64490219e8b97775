/* tests/test_gold_entry_points.c — every Apache Arrow gold file through
 * every way into the library, compared with its JSON.
 *
 * For each generated_NAME of every version under arrow-gold, the data is
 * read by
 *   - the stream reader (.stream, from a memory map);
 *   - the file reader (.arrow_file, front to back, then by random access,
 *     last batch first);
 *   - the batch decoder (xchg_batch_decoder) with the stream cut per batch
 *     as an engine stores it (the dictionary messages before the batch,
 *     then its record batch message), one at a time from memory and
 *     through xchg_source_from_read_at, and all at once with decode_many
 *     on a pool; and with the whole stream as one payload, whose batches
 *     come out concatenated — with every column, each column alone and
 *     none;
 *   - the cache (xchg_cache_acquire), over the stream and the file cut in
 *     odd-sized memory chunks;
 *   - a host segment: one cache publishes it, another maps it.
 * Every batch is compared with the JSON (tests/support/arrow_json.c) where
 * it holds every column, and otherwise with the reader's batches, row
 * ranges and columns (tests/support/array_equal.c).  Run under ASan +
 * UBSan, with clang's UBSan in particular, which alone reports arithmetic
 * on NULL (an empty buffer is NULL: NULL + 0 is undefined in C).
 *
 * The seeds of fuzz/corpus/host_segment are segments the store wrote for
 * gold streams (the table below): each must still map, or the fuzz target
 * would spend its runs on segments refused at the header.  After a change
 * of the segment format, `test_gold_entry_points --write-host-seeds DIR`
 * writes them again.
 *
 * Usage: test_gold_entry_points [TESTDATA] | --write-host-seeds DIR
 * ($XCHG_FUZZ_CORPUS: the fuzz/corpus directory.) */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/array_equal.h"
#include "support/arrow_json.h"
#include "support/ipc_bodies.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/cache.h"
#include "xchg/xchg.h"

#define MSG_SIZE 2048
#define MAX_MESSAGES 4096

static xchg_pool *pool;

static void release_array(struct ArrowArray *a) {
  if (a->release) a->release(a);
}

static void release_schema(struct ArrowSchema *s) {
  if (s->release) s->release(s);
}

/* One gold case: its JSON, the reader's batches of the .stream, and the
 * stream cut into messages. */
typedef struct gold {
  rt_gold_check check; /* .doc, .src (the stream reader's schema and batches) */
  char stream_path[4096], file_path[4096];
  tu_bytes stream;
  tu_body messages[MAX_MESSAGES];
  int64_t n_messages;
  int64_t *batch_offsets; /* row of batch i in the concatenation; [n] = all rows */
} gold;

/* ---- the stream reader: rt_gold_check read the .stream ---------------------- */

static void check_stream_reader(gold *g) {
  char msg[MSG_SIZE] = "";
  const rt_data *d = &g->check.src;
  int rc = arrow_json_compare_schema(g->check.doc, &d->schema, msg, sizeof msg);
  if (rc == 0 && d->n != arrow_json_num_batches(g->check.doc))
    rc = tu_errorf(msg, sizeof msg, "%" PRId64 " batches, the JSON has %" PRId64, d->n,
                   arrow_json_num_batches(g->check.doc));
  for (int64_t i = 0; rc == 0 && i < d->n; i++)
    rc = arrow_json_compare_batch(g->check.doc, i, &d->schema, &d->batches[i], msg, sizeof msg);
  TU_CHECK(rc == 0, "%s: stream reader: %s", g->stream_path, msg);
  /* A stream has no random access: the error says what would have it. */
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  struct ArrowArray a = {0};
  xchg_status st = xchg_ipc_reader_open_file(g->stream_path, NULL, &r, &err);
  if (st == XCHG_OK) st = xchg_ipc_reader_read_batch(r, 0, &a, &err);
  TU_CHECK(st == XCHG_ENOTSUP && !a.release &&
               !strcmp(err.message, "random access needs the file format from a seekable input"),
           "%s: read_batch of a stream: %s: %s", g->stream_path, xchg_status_name(st),
           st == XCHG_OK ? "read" : err.message);
  release_array(&a);
  xchg_ipc_reader_free(r);
}

/* ---- the file reader ------------------------------------------------------- */

static void check_file_reader(gold *g) {
  struct stat st;
  if (stat(g->file_path, &st) != 0) return; /* some cases ship a stream only */
  char msg[MSG_SIZE] = "";
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  struct ArrowSchema schema = {0};
  int64_t n = arrow_json_num_batches(g->check.doc), seen = 0;
  int rc = xchg_ipc_reader_open_file(g->file_path, NULL, &r, &err) == XCHG_OK &&
                   xchg_ipc_reader_schema(r, &schema, &err) == XCHG_OK
               ? arrow_json_compare_schema(g->check.doc, &schema, msg, sizeof msg)
               : tu_errorf(msg, sizeof msg, "open: %s", err.message);
  for (; rc == 0; seen++) {
    struct ArrowArray a = {0};
    if (xchg_ipc_reader_next(r, &a, &err) != XCHG_OK) {
      rc = tu_errorf(msg, sizeof msg, "next: %s", err.message);
    } else if (!a.release) {
      break;
    } else {
      rc = seen < n ? arrow_json_compare_batch(g->check.doc, seen, &schema, &a, msg, sizeof msg)
                    : tu_errorf(msg, sizeof msg, "more batches than the JSON's %" PRId64, n);
      release_array(&a);
    }
  }
  if (rc == 0 && (seen != n || xchg_ipc_reader_num_batches(r) != n))
    rc = tu_errorf(msg, sizeof msg,
                   "%" PRId64 " batches read, %" PRId64 " in the footer, %" PRId64 " in the JSON",
                   seen, xchg_ipc_reader_num_batches(r), n);
  for (int64_t i = n - 1; rc == 0 && i >= 0; i--) {
    struct ArrowArray a = {0};
    rc = xchg_ipc_reader_read_batch(r, i, &a, &err) == XCHG_OK
             ? arrow_json_compare_batch(g->check.doc, i, &schema, &a, msg, sizeof msg)
             : tu_errorf(msg, sizeof msg, "read_batch(%" PRId64 "): %s", i, err.message);
    release_array(&a);
  }
  release_schema(&schema);
  xchg_ipc_reader_free(r);
  TU_CHECK(rc == 0, "%s: file reader: %s", g->file_path, msg);
}

/* ---- the batch decoder ------------------------------------------------------ */

static const uint8_t *stream_at(const gold *g, int64_t offset) { return g->stream.data + offset; }

/* Message i: from its framing (8 bytes before its metadata) to its body's end. */
static void append_message(tu_bytes *out, const gold *g, int64_t i) {
  const tu_body *m = &g->messages[i];
  int64_t start = m->metadata_offset - 8;
  tu_bytes_append(out, stream_at(g, start), (size_t)(m->offset + m->length - start));
}

/* The payload of batch b as an engine stores it. */
static tu_bytes batch_payload(const gold *g, int64_t b) {
  tu_bytes out = {0};
  for (int64_t i = 1, seen = 0; i < g->n_messages && seen <= b; i++) {
    int is_batch = g->messages[i].kind == XCHG_MESSAGE_RECORD_BATCH;
    if (!is_batch || seen == b) append_message(&out, g, i);
    seen += is_batch;
  }
  return out;
}

static xchg_status copy_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  const tu_bytes *p = ctx;
  memcpy(dst, p->data + offset, n);
  return XCHG_OK;
}

static xchg_source *source_of(const tu_bytes *p, int positional) {
  xchg_source *src = NULL;
  xchg_error err;
  xchg_status st = positional
                       ? xchg_source_from_read_at(p->size, copy_at, NULL, (void *)p, &src, &err)
                       : xchg_source_from_memory(p->data, p->size, NULL, NULL, &src, &err);
  TU_OK(st, err);
  return src;
}

/* A decoder of the stream's schema message, with columns[0..n) (NULL: all). */
static xchg_batch_decoder *open_decoder(const gold *g, const int64_t *columns, int64_t n,
                                        xchg_pool *on) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.pool = on;
  opts.task_bytes = 1;
  const tu_body *schema = &g->messages[0];
  xchg_batch_decoder *dec = NULL;
  xchg_error err;
  TU_CHECK(xchg_batch_decoder_open(g->stream.data, (size_t)(schema->offset + schema->length),
                                   columns, n, &opts, &dec, &err) == XCHG_OK,
           "%s: batch decoder: open: %s", g->stream_path, err.message);
  return dec;
}

/* Rows [at, +n) of `got` (decoded with columns[0..n_columns), NULL: all)
 * against the reader's batch b: the JSON when every column is there, and
 * the reader's columns in any case. */
static int compare_rows(const gold *g, const struct ArrowSchema *schema,
                        const struct ArrowArray *got, int64_t at, int64_t b, const int64_t *columns,
                        int64_t n_columns, char *msg) {
  const rt_data *d = &g->check.src;
  const struct ArrowArray *want = &d->batches[b];
  if (!columns && at == 0 && got->length == want->length &&
      arrow_json_compare_batch(g->check.doc, b, schema, got, msg, MSG_SIZE) != 0)
    return -1;
  if (got->n_children != (columns ? n_columns : d->schema.n_children))
    return tu_errorf(msg, MSG_SIZE, "%" PRId64 " columns", got->n_children);
  for (int64_t k = 0; k < got->n_children; k++) {
    int64_t c = columns ? columns[k] : k;
    if (array_range_equal(d->schema.children[c], got->children[k], at, want->children[c], 0,
                          want->length, msg, MSG_SIZE) != 0) {
      size_t used = strlen(msg);
      snprintf(msg + used, MSG_SIZE - used, " (column %" PRId64 ", batch %" PRId64 ")", c, b);
      return -1;
    }
  }
  return 0;
}

/* Checks one decoded payload holding batches [first, last). */
static int check_decoded(const gold *g, const xchg_batch_decoder *dec, const struct ArrowArray *got,
                         int64_t first, int64_t last, const int64_t *columns, int64_t n_columns,
                         char *msg) {
  struct ArrowSchema schema = {0};
  xchg_error err;
  if (xchg_batch_decoder_schema(dec, &schema, &err) != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "schema: %s", err.message);
  int64_t rows = g->batch_offsets[last] - g->batch_offsets[first];
  int rc = got->length == rows
               ? 0
               : tu_errorf(msg, MSG_SIZE, "%" PRId64 " rows, the batches have %" PRId64,
                           got->length, rows);
  for (int64_t b = first; rc == 0 && b < last; b++)
    rc = compare_rows(g, &schema, got, g->batch_offsets[b] - g->batch_offsets[first], b, columns,
                      n_columns, msg);
  release_schema(&schema);
  return rc;
}

/* Payloads [0, n) each holding batch i (per_batch) or all of them. */
static int decode_and_check(const gold *g, const xchg_batch_decoder *dec, const tu_bytes *payloads,
                            int64_t n, int per_batch, int positional, const int64_t *columns,
                            int64_t n_columns, char *msg) {
  int rc = 0;
  for (int64_t i = 0; rc == 0 && i < n; i++) {
    xchg_source *src = source_of(&payloads[i], positional);
    struct ArrowArray a = {0};
    xchg_error err;
    if (xchg_batch_decoder_decode(dec, src, i, &a, &err) != XCHG_OK)
      rc = tu_errorf(msg, MSG_SIZE, "decode: %s", err.message);
    else
      rc = check_decoded(g, dec, &a, per_batch ? i : 0, per_batch ? i + 1 : g->check.src.n, columns,
                         n_columns, msg);
    release_array(&a);
    xchg_source_free(src);
  }
  return rc;
}

/* Every per-batch payload at once (every other one through read_at). */
static int decode_many_and_check(const gold *g, const xchg_batch_decoder *dec,
                                 const tu_bytes *payloads, int64_t n, char *msg) {
  xchg_source **srcs = calloc((size_t)n + 1, sizeof *srcs);
  struct ArrowArray *outs = calloc((size_t)n + 1, sizeof *outs);
  for (int64_t i = 0; i < n; i++) srcs[i] = source_of(&payloads[i], i % 2);
  xchg_error err;
  int rc = xchg_batch_decoder_decode_many(dec, srcs, n, 0, outs, NULL, &err) == XCHG_OK
               ? 0
               : tu_errorf(msg, MSG_SIZE, "decode_many: %s", err.message);
  for (int64_t i = 0; rc == 0 && i < n; i++)
    rc = check_decoded(g, dec, &outs[i], i, i + 1, NULL, 0, msg);
  for (int64_t i = 0; i < n; i++) {
    release_array(&outs[i]);
    xchg_source_free(srcs[i]);
  }
  free(srcs);
  free(outs);
  return rc;
}

/* With columns[0..n_columns) (NULL: all): the payloads per batch and the
 * whole stream, from memory and through read_at. */
static void check_decoder_with(gold *g, const tu_bytes *payloads, const int64_t *columns,
                               int64_t n_columns, const char *which) {
  xchg_batch_decoder *dec = open_decoder(g, columns, n_columns, NULL);
  if (!dec) return;
  char msg[MSG_SIZE] = "";
  const char *how = "";
  int64_t n = g->check.src.n;
  int rc = 0;
  for (int positional = 0; positional < 2 && rc == 0; positional++) {
    how = positional ? "per batch, through read_at" : "per batch, from memory";
    rc = decode_and_check(g, dec, payloads, n, 1, positional, columns, n_columns, msg);
    if (rc != 0) break;
    how = positional ? "whole stream, through read_at" : "whole stream, from memory";
    if (n > 0) {
      rc = decode_and_check(g, dec, &g->stream, 1, 0, positional, columns, n_columns, msg);
    } else {
      /* A stream of no batch (an empty part) is no rows of the columns. */
      xchg_source *src = source_of(&g->stream, positional);
      struct ArrowArray a = {0};
      xchg_error err;
      xchg_status st = xchg_batch_decoder_decode(dec, src, 0, &a, &err);
      int64_t want = columns ? n_columns : g->check.src.schema.n_children;
      if (st != XCHG_OK || a.length != 0 || a.n_children != want)
        rc = tu_errorf(msg, MSG_SIZE, "a stream of no batches: %s \"%s\", %lld rows, %lld columns",
                       xchg_status_name(st), st == XCHG_OK ? "" : err.message, (long long)a.length,
                       (long long)a.n_children);
      release_array(&a);
      xchg_source_free(src);
    }
  }
  TU_CHECK(rc == 0, "%s: batch decoder (%s; %s): %s", g->stream_path, which, how, msg);
  xchg_batch_decoder_free(dec);
}

static void check_batch_decoder(gold *g) {
  int64_t n = g->check.src.n;
  tu_bytes *payloads = calloc((size_t)n + 1, sizeof *payloads);
  for (int64_t b = 0; b < n; b++) payloads[b] = batch_payload(g, b);
  check_decoder_with(g, payloads, NULL, 0, "every column");
  static const int64_t none = 0;
  check_decoder_with(g, payloads, &none, 0, "no column");
  for (int64_t c = 0; c < g->check.src.schema.n_children; c++) {
    char which[64];
    snprintf(which, sizeof which, "column %" PRId64 " alone", c);
    check_decoder_with(g, payloads, &c, 1, which);
  }
  xchg_batch_decoder *dec = open_decoder(g, NULL, 0, pool);
  char msg[MSG_SIZE] = "";
  if (dec && n > 0)
    TU_CHECK(decode_many_and_check(g, dec, payloads, n, msg) == 0,
             "%s: batch decoder (decode_many on "
             "a pool): %s",
             g->stream_path, msg);
  xchg_batch_decoder_free(dec);
  for (int64_t b = 0; b < n; b++) free(payloads[b].data);
  free(payloads);
}

/* ---- the cache and the host store ------------------------------------------ */

/* data cut into chunks of odd sizes (a JVM's heap chunks). */
static size_t cut_chunks(const tu_bytes *data, xchg_chunk *chunks, size_t max) {
  static const size_t sizes[] = {1, 7, 64, 13, 4096, 3, 509};
  size_t n = 0, at = 0;
  while (at < data->size && n < max - 1) {
    size_t k = sizes[n % (sizeof sizes / sizeof sizes[0])];
    if (k > data->size - at) k = data->size - at;
    chunks[n++] = (xchg_chunk){data->data + at, k};
    at += k;
  }
  if (at < data->size) chunks[n++] = (xchg_chunk){data->data + at, data->size - at};
  return n;
}

/* Every batch of h against the JSON. */
static int compare_holder(const gold *g, const xchg_cache_holder *h, int64_t parts, char *msg) {
  struct ArrowSchema schema = {0};
  xchg_error err;
  int64_t n = arrow_json_num_batches(g->check.doc);
  if (xchg_cache_holder_schema(h, &schema, &err) != XCHG_OK)
    return tu_errorf(msg, MSG_SIZE, "schema: %s", err.message);
  int rc = arrow_json_compare_schema(g->check.doc, &schema, msg, MSG_SIZE);
  if (rc == 0 && xchg_cache_holder_num_batches(h) != parts * n)
    rc = tu_errorf(msg, MSG_SIZE, "%" PRId64 " batches, the JSON has %" PRId64 " a part",
                   xchg_cache_holder_num_batches(h), n);
  for (int64_t i = 0; rc == 0 && i < parts * n; i++) {
    struct ArrowArray a = {0};
    rc = xchg_cache_holder_batch(h, i, &a, &err) == XCHG_OK
             ? arrow_json_compare_batch(g->check.doc, i % n, &schema, &a, msg, MSG_SIZE)
             : tu_errorf(msg, MSG_SIZE, "batch %" PRId64 ": %s", i, err.message);
    release_array(&a);
  }
  release_schema(&schema);
  return rc;
}

static xchg_cache_metrics metrics_of(xchg_cache *c) {
  xchg_cache_metrics m;
  xchg_cache_get_metrics(c, &m);
  return m;
}

static xchg_cache *new_cache(const char *host_dir, xchg_validation validation) {
  xchg_cache_options o;
  xchg_cache_options_init(&o);
  o.host_dir = host_dir;
  o.host_retain_bytes = INT64_MAX; /* the segment stays for the next cache */
  o.read.validation = validation;
  xchg_cache *c = NULL;
  xchg_error err;
  TU_OK(xchg_cache_create(&o, &c, &err), err);
  return c;
}

/* Acquires `key` from c over `parts` copies of data (in chunks) and
 * compares it with the JSON. */
static int acquire_and_compare(const gold *g, xchg_cache *c, const char *key, const tu_bytes *data,
                               int64_t parts, char *msg) {
  xchg_chunk *chunks = calloc(data->size + 1, sizeof *chunks);
  size_t n_chunks = cut_chunks(data, chunks, data->size + 1);
  xchg_broadcast_part part[4];
  for (int64_t i = 0; i < parts; i++)
    part[i] = (xchg_broadcast_part){chunks, n_chunks, XCHG_STREAM_NONE};
  xchg_broadcast b = {part, parts, NULL, NULL};
  xchg_cache_holder *h = NULL;
  xchg_error err;
  int rc = xchg_cache_acquire(c, key, &b, NULL, &h, &err) == XCHG_OK
               ? compare_holder(g, h, parts, msg)
               : tu_errorf(msg, MSG_SIZE, "acquire: %s", err.message);
  xchg_cache_holder_release(h);
  free(chunks);
  return rc;
}

static void check_cache(gold *g) {
  char msg[MSG_SIZE] = "";
  xchg_cache *c = new_cache(NULL, XCHG_VALIDATE_FULL);
  if (!c) return;
  TU_CHECK(acquire_and_compare(g, c, "stream", &g->stream, 1, msg) == 0, "%s: cache: %s",
           g->stream_path, msg);
  tu_bytes file = tu_read_bytes(g->file_path);
  if (file.data)
    TU_CHECK(acquire_and_compare(g, c, "file", &file, 1, msg) == 0, "%s: cache: %s", g->file_path,
             msg);
  free(file.data);
  xchg_cache_free(c);
}

static void make_store_dir(char *out, size_t n) {
  struct stat st;
  snprintf(out, n, "%s/xchg-gold-XXXXXX", stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(out)) {
    perror("mkdtemp");
    exit(1);
  }
}

static void remove_store_dir(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* The path of the store's one segment (empty when there is none). */
static void find_segment(const char *dir, char *out, size_t n) {
  DIR *d = opendir(dir);
  out[0] = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (tu_has_suffix(e->d_name, ".seg")) snprintf(out, n, "%s/%s", dir, e->d_name);
  if (d) closedir(d);
}

/* Publishes key from `parts` copies of the stream in dir (a cache
 * validating as `validation` says), then maps it from another cache and
 * compares it with the JSON.  0, or -1 with msg. */
static int publish_and_map(const gold *g, const char *dir, const char *key, int64_t parts,
                           xchg_validation validation, char *msg) {
  xchg_cache *writer = new_cache(dir, validation), *mapper = new_cache(dir, XCHG_VALIDATE_FULL);
  int rc = writer && mapper ? acquire_and_compare(g, writer, key, &g->stream, parts, msg) : -1;
  if (rc == 0 && metrics_of(writer).host_decodes != 1)
    rc = tu_errorf(msg, MSG_SIZE, "the first cache did not publish a segment");
  if (rc == 0) rc = acquire_and_compare(g, mapper, key, &g->stream, parts, msg);
  if (rc == 0 && (metrics_of(mapper).host_maps != 1 || metrics_of(mapper).decodes != 0))
    rc = tu_errorf(msg, MSG_SIZE, "the second cache did not map the segment");
  xchg_cache_free(writer);
  xchg_cache_free(mapper);
  return rc;
}

static void check_host_segment(gold *g) {
  char dir[256], msg[MSG_SIZE] = "";
  make_store_dir(dir, sizeof dir);
  TU_CHECK(publish_and_map(g, dir, "gold", 2, XCHG_VALIDATE_FULL, msg) == 0, "%s: host segment: %s",
           g->stream_path, msg);
  remove_store_dir(dir);
}

/* ---- one gold case ------------------------------------------------------------ */

static int gold_open(const char *json_path, gold *g) {
  memset(g, 0, sizeof *g);
  if (rt_gold_check_begin(json_path, &g->check) != 0) return -1;
  size_t base = strlen(json_path) - strlen(".json.gz");
  snprintf(g->stream_path, sizeof g->stream_path, "%.*s.stream", (int)base, json_path);
  snprintf(g->file_path, sizeof g->file_path, "%.*s.arrow_file", (int)base, json_path);
  g->stream = tu_read_bytes(g->stream_path);
  g->n_messages = tu_map_bodies(g->stream.data, g->stream.size, g->messages, MAX_MESSAGES);
  int64_t n = g->check.src.n, batches = 0;
  g->batch_offsets = calloc((size_t)n + 1, sizeof *g->batch_offsets);
  for (int64_t b = 0; b < n; b++)
    g->batch_offsets[b + 1] = g->batch_offsets[b] + g->check.src.batches[b].length;
  for (int64_t i = 0; i < g->n_messages; i++)
    batches += g->messages[i].kind == XCHG_MESSAGE_RECORD_BATCH;
  TU_CHECK(g->stream.data && g->n_messages > 0 && g->messages[0].kind == XCHG_MESSAGE_SCHEMA &&
               batches == n,
           "%s: %" PRId64 " messages, %" PRId64 " of them record batches, for %" PRId64 " batches",
           g->stream_path, g->n_messages, batches, n);
  return batches == n && g->n_messages > 0 ? 0 : -1;
}

static void gold_close(gold *g) {
  rt_gold_check_end(&g->check);
  free(g->stream.data);
  free(g->batch_offsets);
}

static void check_gold(const char *json_path) {
  gold *g = malloc(sizeof *g);
  int64_t live = xchg_buf_live_count();
  if (gold_open(json_path, g) == 0) {
    check_stream_reader(g);
    check_file_reader(g);
    check_batch_decoder(g);
    check_cache(g);
    check_host_segment(g);
  }
  gold_close(g);
  TU_CHECK(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers left alive", json_path,
           xchg_buf_live_count() - live);
  free(g);
}

/* ---- the seeds of fuzz/corpus/host_segment ------------------------------------ */

typedef struct host_seed {
  const char *version, *name;
  int64_t parts;
  xchg_validation validation;
} host_seed;

static const host_seed host_seeds[] = {
    {"1.0.0-littleendian", "generated_null", 1, XCHG_VALIDATE_FULL},
    {"1.0.0-littleendian", "generated_nested", 2, XCHG_VALIDATE_FULL},
    {"1.0.0-littleendian", "generated_nested", 1, XCHG_VALIDATE_BOUNDS},
    {"1.0.0-littleendian", "generated_dictionary", 1, XCHG_VALIDATE_FULL},
    {"1.0.0-littleendian", "generated_nested_dictionary", 2, XCHG_VALIDATE_BOUNDS},
    {"1.0.0-littleendian", "generated_union", 1, XCHG_VALIDATE_FULL},
    {"1.0.0-littleendian", "generated_map", 1, XCHG_VALIDATE_BOUNDS},
    {"1.0.0-littleendian", "generated_primitive_zerolength", 1, XCHG_VALIDATE_FULL},
    {"1.0.0-littleendian", "generated_interval", 1, XCHG_VALIDATE_FULL},
    {"1.0.0-littleendian", "generated_primitive_large_offsets", 1, XCHG_VALIDATE_BOUNDS},
    {"2.0.0-compression", "generated_lz4", 3, XCHG_VALIDATE_FULL},
    {"4.0.0-shareddict", "generated_shared_dict", 1, XCHG_VALIDATE_BOUNDS},
};
#define N_HOST_SEEDS (sizeof host_seeds / sizeof host_seeds[0])

/* "gold-<version>-<name>-<parts>-part[s]-<validated|bounds>" */
static void seed_name(const host_seed *s, char *out, size_t n) {
  snprintf(out, n, "gold-%s-%s-%" PRId64 "-part%s-%s", s->version, s->name, s->parts,
           s->parts > 1 ? "s" : "", s->validation == XCHG_VALIDATE_FULL ? "validated" : "bounds");
}

static void seed_json(const char *testdata, const host_seed *s, char *out, size_t n) {
  snprintf(out, n, "%s/arrow-gold/%s/%s.json.gz", testdata, s->version, s->name);
}

/* Publishes the seed's segment (key "fuzz", the fuzz target's) in a new
 * store dir[256] and sets seg[4096] to its path.  0 or -1. */
static int publish_seed(gold *g, const host_seed *s, char *dir, char *seg) {
  char msg[MSG_SIZE] = "";
  make_store_dir(dir, 256);
  xchg_cache *c = new_cache(dir, s->validation);
  int rc = c ? acquire_and_compare(g, c, "fuzz", &g->stream, s->parts, msg) : -1;
  xchg_cache_free(c);
  find_segment(dir, seg, 4096);
  TU_CHECK(rc == 0 && seg[0], "%s: publishing the seed: %s", g->stream_path, msg);
  return rc == 0 && seg[0] ? 0 : -1;
}

/* The committed seed must map, under key "fuzz", as the gold data. */
static void check_host_seed(const char *testdata, const char *corpus, const host_seed *s) {
  char json[4096], name[256], dir[256], seg[4096], path[4096], msg[MSG_SIZE] = "";
  seed_json(testdata, s, json, sizeof json);
  seed_name(s, name, sizeof name);
  snprintf(path, sizeof path, "%s/host_segment/%s", corpus, name);
  gold *g = malloc(sizeof *g);
  if (gold_open(json, g) == 0 && publish_seed(g, s, dir, seg) == 0) {
    tu_bytes seed = tu_read_bytes(path);
    int copied = seed.data && tu_write_file(seg, seed.data, seed.size) == 0;
    TU_CHECK(copied, "cannot copy %s", path);
    xchg_cache *c = copied ? new_cache(dir, XCHG_VALIDATE_FULL) : NULL;
    int rc = c ? acquire_and_compare(g, c, "fuzz", &g->stream, s->parts, msg) : -1;
    if (c)
      TU_CHECK(rc == 0 && metrics_of(c).host_maps == 1 && metrics_of(c).host_fallbacks == 0,
               "fuzz/corpus/host_segment/%s no longer maps (%s): after a change of the segment "
               "format, write the seeds again with `test_gold_entry_points --write-host-seeds "
               "fuzz/corpus/host_segment`",
               name, rc == 0 ? "refused" : msg);
    xchg_cache_free(c);
    free(seed.data);
    remove_store_dir(dir);
  }
  gold_close(g);
  free(g);
}

static int write_host_seeds(const char *testdata, const char *out_dir) {
  for (size_t i = 0; i < N_HOST_SEEDS; i++) {
    char json[4096], name[256], dir[256], seg[4096], path[4096];
    seed_json(testdata, &host_seeds[i], json, sizeof json);
    seed_name(&host_seeds[i], name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    gold *g = malloc(sizeof *g);
    if (gold_open(json, g) == 0 && publish_seed(g, &host_seeds[i], dir, seg) == 0) {
      tu_bytes bytes = tu_read_bytes(seg);
      TU_CHECK(bytes.data && tu_write_file(path, bytes.data, bytes.size) == 0, "cannot write %s",
               path);
      printf("wrote %s (%zu bytes)\n", path, bytes.size);
      free(bytes.data);
      remove_store_dir(dir);
    }
    gold_close(g);
    free(g);
  }
  return tu_failed_count() == 0 ? 0 : 1;
}

static void gold_files(void) {
  char **jsons;
  size_t n;
  if (rt_find_all_gold(&jsons, &n) != 0) return;
  for (size_t i = 0; i < n; i++) check_gold(jsons[i]);
  rt_free_paths(jsons, n);
}

/* The host segment seeds of fuzz/corpus still map. */
static void host_seeds_map(void) {
  const char *corpus = getenv("XCHG_FUZZ_CORPUS");
  if (!TU_CHECK(corpus != NULL, "XCHG_FUZZ_CORPUS (the fuzz/corpus directory) is not set")) return;
  for (size_t i = 0; i < N_HOST_SEEDS; i++)
    check_host_seed(tu_testdata_dir(), corpus, &host_seeds[i]);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write-host-seeds") == 0)
    return write_host_seeds(tu_testdata_dir(), argv[2]);
  xchg_error err;
  if (!TU_OK(xchg_pool_create(3, &pool, &err), err)) return 1;
  static const tu_case cases[] = {
      {"gold_files", gold_files},
      {"host_seeds", host_seeds_map},
  };
  int rc = TU_MAIN(argc, argv, "gold_entry_points", cases);
  xchg_pool_free(pool);
  return rc;
}
