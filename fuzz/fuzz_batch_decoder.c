/* fuzz/fuzz_batch_decoder.c — the batch decoder of cached relations
 * (xchg_batch_decoder, xchg/ipc.h), fed a fuzzed IPC stream.
 *
 * The stream's first message is the decoder's schema message; the payloads
 * are the whole stream (a payload that is a stream: its batches come out
 * concatenated) and the stream cut per batch as an engine stores it (the
 * dictionary messages before the batch, then its record batch message; the
 * cut follows the messages the IPC reader reports, as far as it gets).
 * Each is decoded with every column, with column 0 alone and with none,
 * from memory and through xchg_source_from_read_at, one at a time and all
 * at once with decode_many on a pool.  A payload must decode the same way
 * from memory as through read_at: a difference of status or row count is
 * a finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define MAX_PAYLOADS 64

typedef struct payload {
  uint8_t *data; /* malloc'd, exactly size bytes, so that ASan sees a read past it */
  size_t size;
} payload;

/* ---- cutting the stream --------------------------------------------------------- */

typedef struct message_list {
  xchg_message_info info[MAX_PAYLOADS * 2];
  int64_t n;
} message_list;

static void record_message(void *ctx, const xchg_message_info *info) {
  message_list *l = ctx;
  if (l->n < (int64_t)(sizeof l->info / sizeof l->info[0])) l->info[l->n++] = *info;
}

/* The messages the IPC reader sees in data, in order. */
static void list_messages(const uint8_t *data, size_t size, message_list *l) {
  xchg_ipc_read_options opts;
  fuzz_read_options(&opts);
  opts.on_message = record_message;
  opts.on_message_ctx = l;
  l->n = 0;
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, &r, &err) != XCHG_OK) return;
  struct ArrowArray a;
  while (xchg_ipc_reader_next(r, &a, &err) == XCHG_OK && a.release) a.release(&a);
  xchg_ipc_reader_free(r);
}

/* Message i's bytes: its framing (8 bytes), metadata and body. */
static void message_extent(const message_list *l, int64_t i, size_t size, size_t *start,
                           size_t *len) {
  const xchg_message_info *m = &l->info[i];
  int64_t end = m->offset + 8 + m->metadata_bytes + m->body_bytes;
  *start = (size_t)m->offset;
  *len = end <= (int64_t)size ? (size_t)(end - m->offset) : size - *start;
}

static void append(payload *p, const uint8_t *bytes, size_t n) {
  uint8_t *grown = realloc(p->data, p->size + n ? p->size + n : 1);
  if (!grown) abort();
  memcpy(grown + p->size, bytes, n);
  p->data = grown;
  p->size += n;
}

/* The payload of each record batch: the dictionary messages before it,
 * then the batch.  Returns how many. */
static int64_t cut_per_batch(const uint8_t *data, size_t size, payload *out, int64_t max) {
  message_list *l = malloc(sizeof *l);
  if (!l) abort();
  list_messages(data, size, l);
  int64_t n = 0;
  for (int64_t i = 0; i < l->n && n < max; i++) {
    if (l->info[i].kind != XCHG_MESSAGE_RECORD_BATCH) continue;
    payload *p = &out[n++];
    *p = (payload){NULL, 0};
    for (int64_t k = 0; k <= i; k++) {
      if (k < i && l->info[k].kind != XCHG_MESSAGE_DICTIONARY) continue;
      size_t start, len;
      message_extent(l, k, size, &start, &len);
      append(p, data + start, len);
    }
  }
  free(l);
  return n;
}

/* The framed schema message at the start of data (or all of data when it
 * is not framed as one). */
static size_t schema_message_size(const uint8_t *data, size_t size) {
  uint32_t marker, length;
  if (size < 8) return size;
  memcpy(&marker, data, 4);
  memcpy(&length, data + 4, 4);
  if (marker != 0xFFFFFFFFu || length > size - 8) return size;
  return 8 + (size_t)length;
}

/* ---- sources -------------------------------------------------------------------- */

static xchg_status copy_at(void *ctx, int64_t offset, void *dst, size_t n, xchg_error *err) {
  const payload *p = ctx;
  if ((size_t)offset > p->size || n > p->size - (size_t)offset)
    abort(); /* the source checks its size */
  memcpy(dst, p->data + offset, n);
  return XCHG_OK;
}

static xchg_source *source_of(const payload *p, int positional) {
  xchg_source *src = NULL;
  xchg_error err;
  xchg_status st = positional
                       ? xchg_source_from_read_at(p->size, copy_at, NULL, (void *)p, &src, &err)
                       : xchg_source_from_memory(p->data, p->size, NULL, NULL, &src, &err);
  if (st != XCHG_OK) abort(); /* nothing but memory can fail here */
  return src;
}

/* ---- decoding ------------------------------------------------------------------- */

static xchg_pool *shared_pool(void) {
  static xchg_pool *pool;
  if (!pool && xchg_pool_create(2, &pool, NULL) != XCHG_OK) pool = NULL;
  return pool;
}

/* Decodes p from one kind of source: its status, and *rows the row count. */
static xchg_status decode_one(const xchg_batch_decoder *dec, const payload *p, int positional,
                              int64_t *rows) {
  xchg_source *src = source_of(p, positional);
  xchg_error err = {""};
  struct ArrowArray a;
  xchg_status st = xchg_batch_decoder_decode(dec, src, 7, &a, &err);
  fuzz_note_status(st, &err);
  *rows = -1;
  if (st == XCHG_OK) {
    *rows = a.length;
    a.release(&a);
  }
  xchg_source_free(src);
  return st;
}

static void decode_both_ways(const xchg_batch_decoder *dec, const payload *p) {
  int64_t rows_mem, rows_at;
  xchg_status mem = decode_one(dec, p, 0, &rows_mem);
  xchg_status at = decode_one(dec, p, 1, &rows_at);
  if (mem != at || rows_mem != rows_at) {
    fprintf(stderr, "finding: from memory %s (%lld rows), through read_at %s (%lld rows)\n",
            xchg_status_name(mem), (long long)rows_mem, xchg_status_name(at), (long long)rows_at);
    abort();
  }
}

/* Every payload at once, half of them through read_at. */
static void decode_all(const xchg_batch_decoder *dec, const payload *ps, int64_t n) {
  xchg_source *srcs[MAX_PAYLOADS + 1];
  struct ArrowArray outs[MAX_PAYLOADS + 1];
  for (int64_t i = 0; i < n; i++) srcs[i] = source_of(&ps[i], i % 2);
  xchg_error err = {""};
  int64_t metadata_bytes;
  xchg_status st = xchg_batch_decoder_decode_many(dec, srcs, n, 0, outs, &metadata_bytes, &err);
  fuzz_note_status(st, &err);
  for (int64_t i = 0; i < n; i++) {
    if (st == XCHG_OK)
      outs[i].release(&outs[i]);
    else if (outs[i].release)
      abort(); /* on an error nothing is exported */
    xchg_source_free(srcs[i]);
  }
}

static void decode_with(const uint8_t *schema, size_t schema_size, const int64_t *columns,
                        int64_t n_columns, const payload *ps, int64_t n) {
  xchg_ipc_read_options opts;
  fuzz_read_options(&opts);
  opts.pool = shared_pool();
  opts.task_bytes = 1; /* every payload a task of its own */
  xchg_batch_decoder *dec = NULL;
  xchg_error err = {""};
  xchg_status st =
      xchg_batch_decoder_open(schema, schema_size, columns, n_columns, &opts, &dec, &err);
  fuzz_note_status(st, &err);
  if (st != XCHG_OK) return;
  struct ArrowSchema s;
  st = xchg_batch_decoder_schema(dec, &s, &err);
  fuzz_note_status(st, &err);
  if (st == XCHG_OK) s.release(&s);
  for (int64_t i = 0; i < n; i++) decode_both_ways(dec, &ps[i]);
  decode_all(dec, ps, n);
  xchg_batch_decoder_free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = xchg_buf_live_count();
  payload ps[MAX_PAYLOADS + 1];
  /* payload 0: the whole stream, in a copy of its own as the others */
  ps[0] = (payload){NULL, 0};
  append(&ps[0], data, size);
  int64_t n = 1 + cut_per_batch(data, size, ps + 1, MAX_PAYLOADS);
  size_t schema_size = schema_message_size(data, size);
  const int64_t first = 0;
  decode_with(data, schema_size, NULL, 0, ps, n);
  decode_with(data, schema_size, &first, 1, ps, n);
  decode_with(data, schema_size, &first, 0, ps, n);
  for (int64_t i = 0; i < n; i++) free(ps[i].data);
  fuzz_check_no_leak(live, "batch decoder");
  return 0;
}
