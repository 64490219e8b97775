/* batch_decoder.c — payloads of a cached relation, decoded with a schema
 * known in advance (see xchg/ipc.h).
 *
 * Each payload is a short run of messages over a seekable source of known
 * size.  Its messages are read here (framing and Message flatbuffer), its
 * dictionaries and record batches decoded by decode.h's steps.  Three ways:
 *   - no pool: one payload after another, each from reading to export, so
 *     that what one frees serves the next;
 *   - sources read by copying (a JVM heap array), at least as many as the
 *     pool has threads: runs of payloads of about equal size decoded whole
 *     on the pool, reading included (each source read by one thread, its
 *     reads in order), so that the copies are made on every thread;
 *   - else (sources in memory, or few): every payload planned on the
 *     calling thread (planning reads no body of a payload in memory), then
 *     runs of payloads of about equal work finished on the pool, or each
 *     payload's jobs spread over it, or all on the caller when the work is
 *     not worth a hand-off. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "base/cpu.h"
#include "base/pool_internal.h"
#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "xchg/ipc.h"

/* The most buffers of the selected columns asked of memory ahead of a
 * payload's planning (see prefetch_selected). */
#define AHEAD_BUFFERS 8

struct xchg_batch_decoder {
  xchg_ipc_read_options opts;
  ipc_schema schema;
  int64_t n_dictionaries; /* dictionary ids the schema declares */
  /* The first buffers of the selected columns, as indices into a V5
   * RecordBatch's buffers: those whose place the schema alone tells. */
  uint32_t ahead[AHEAD_BUFFERS];
  int n_ahead;
};

/* Where the selected columns' buffers are in every record batch, as far
 * as the schema tells it (up to a view type, whose count is the
 * message's): the first AHEAD_BUFFERS of them. */
static void find_ahead_buffers(xchg_batch_decoder *dec) {
  uint32_t at = 0;
  for (int64_t i = 0; i < dec->schema.root.n_children && dec->n_ahead < AHEAD_BUFFERS; i++) {
    const ipc_field *f = &dec->schema.root.children[i];
    if (!f->span_nodes) return; /* a view type: the places after it vary */
    for (uint32_t k = 0; !f->skip && k < f->span_buffers && dec->n_ahead < AHEAD_BUFFERS; k++)
      dec->ahead[dec->n_ahead++] = at + k;
    at += f->span_buffers;
  }
}

/* A record batch planned from a payload; ctx must stay where it is while
 * the batch's jobs point to it. */
typedef struct planned {
  ipc_decode_ctx ctx;
  ipc_array *array;
  struct planned *next;
} planned;

/* What prefetch_payload asks for: the framing and metadata of a batch of
 * a few columns. */
#define PAYLOAD_HEAD_BYTES 512

/* A payload being decoded.  Everything before `error` is zeroed when it
 * starts (error is written only on failure: a kilobyte not to clear per
 * payload). */
typedef struct payload {
  const xchg_batch_decoder *dec;
  xchg_source *src;
  xchg_buf *memory; /* the whole payload when it is in memory */
  int64_t batch;    /* the number errors give it */
  int64_t message_index;
  int64_t metadata_bytes;
  int is_stream;               /* it began with a schema message */
  int64_t dictionaries_read;   /* dictionary messages read, ... */
  int64_t first_dictionary_at; /* ... the first one from this byte */
  ipc_dictionaries dicts;
  planned *first, *last;
  planned one; /* the first batch's room: most payloads hold one */
  ipc_jobs jobs;
  ipc_array *result;
  int ahead; /* prefetch_selected decoded the first message: first_view */
  xchg_status status;
  xchg_error error;
  ipc_message_view first_view; /* valid when ahead */
} payload;

static void payload_init(payload *p, const xchg_batch_decoder *dec, xchg_source *src,
                         int64_t batch) {
  memset(p, 0, offsetof(payload, error));
  p->dec = dec;
  p->src = src;
  p->batch = batch;
  p->status = XCHG_OK;
}

/* ---- the decoder ---------------------------------------------------------- */

static xchg_status declare_dictionary(void *ctx, const ipc_field *field, xchg_error *err) {
  return ipc_dictionaries_declare(ctx, field, err);
}

static xchg_status count_dictionary(void *ctx, const ipc_field *field, xchg_error *err) {
  (void)field;
  (void)err;
  ++*(int64_t *)ctx;
  return XCHG_OK;
}

xchg_status xchg_batch_decoder_open(const void *schema_message, size_t size, const int64_t *columns,
                                    int64_t n_columns, const xchg_ipc_read_options *opts,
                                    xchg_batch_decoder **out, xchg_error *err) {
  if (!out) return xchg_errorf(err, XCHG_EINVAL, "xchg_batch_decoder_open: out is NULL");
  *out = NULL;
  if (!schema_message)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_batch_decoder_open: schema_message is NULL");
  if (n_columns < 0)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_batch_decoder_open: n_columns is negative (%lld)",
                       (long long)n_columns);
  xchg_batch_decoder *dec = calloc(1, sizeof *dec);
  if (!dec) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (opts)
    dec->opts = *opts;
  else
    xchg_ipc_read_options_init(&dec->opts);
  fb_table table;
  xchg_status st = ipc_read_options_check(&dec->opts, "xchg_batch_decoder_open", err);
  if (st == XCHG_OK) st = ipc_schema_message_table(schema_message, size, &table, NULL, NULL, err);
  if (st == XCHG_OK && (st = ipc_schema_parse(&table, &dec->opts, &dec->schema, err)) != XCHG_OK)
    xchg_error_prefix(err, "schema message: ");
  if (st == XCHG_OK && columns)
    st = ipc_schema_select_indices(&dec->schema, columns, n_columns, err);
  if (st == XCHG_OK) { /* once, not per payload */
    ipc_schema_count_spans(&dec->schema);
    find_ahead_buffers(dec);
  }
  if (st == XCHG_OK)
    st =
        ipc_schema_visit_dictionaries(&dec->schema, 0, count_dictionary, &dec->n_dictionaries, err);
  if (st != XCHG_OK) {
    xchg_batch_decoder_free(dec);
    return st;
  }
  *out = dec;
  return XCHG_OK;
}

xchg_status xchg_batch_decoder_schema(const xchg_batch_decoder *dec, struct ArrowSchema *out,
                                      xchg_error *err) {
  if (!dec || !out) {
    if (out) memset(out, 0, sizeof *out);
    return base_null_argument("xchg_batch_decoder_schema", !dec ? "the decoder" : "out", err);
  }
  return ipc_schema_export(&dec->schema, out, err);
}

void xchg_batch_decoder_free(xchg_batch_decoder *dec) {
  if (!dec) return;
  ipc_schema_free(&dec->schema);
  free(dec);
}

/* ---- reading a payload's messages ------------------------------------------ */

static int64_t position(const payload *p) { return (int64_t)xchg_source_position(p->src); }
static int64_t remaining(const payload *p) { return xchg_source_size(p->src) - position(p); }

/* st of a check that the payload holds a message's framing, metadata or
 * body (framing.h), which fails with XCHG_EIO only when the payload ends
 * first: a cut, said as the IPC reader says it (reader.c,
 * input_cut_short), which a source that fails to read is not. */
static xchg_status cut_short(const payload *p, xchg_status st, xchg_error *err) {
  if (st == XCHG_EIO)
    xchg_error_prefix(err,
                      p->is_stream ? "the stream is cut short: " : "the payload is cut short: ");
  return st;
}

static xchg_status read_word(payload *p, uint8_t word[4], int64_t at, xchg_error *err) {
  size_t got;
  xchg_status st = xchg_source_read(p->src, word, 4, &got, err);
  if (st == XCHG_OK && got < 4)
    st = cut_short(
        p,
        xchg_errorf(err, XCHG_EIO, "input ends inside the framing of message %lld at byte %lld",
                    (long long)p->message_index, (long long)at), /* as framing.c */
        err);
  p->metadata_bytes += (int64_t)got;
  return st;
}

/* How a payload's run of messages ended. */
enum { NOT_END, END_OF_DATA, END_MARKER };

/* Reads the prefix (framing.h): *length, or *end at an end-of-stream
 * marker or at the payload's end. */
static xchg_status read_prefix(payload *p, int32_t *length, int *end, xchg_error *err) {
  int64_t at = position(p);
  *end = remaining(p) == 0 ? END_OF_DATA : NOT_END;
  if (*end) return XCHG_OK;
  uint8_t prefix[8];
  xchg_status st = read_word(p, prefix, at, err);
  if (st == XCHG_OK && ipc_prefix_size(prefix) == 8) st = read_word(p, prefix + 4, at, err);
  if (st == XCHG_OK)
    st = ipc_prefix_decode(prefix, p->message_index, at, p->dec->opts.max_metadata_bytes, length,
                           err);
  if (st == XCHG_OK)
    st = cut_short(
        p, ipc_metadata_check(*length, remaining(p), p->message_index, at, position(p), err), err);
  if (st == XCHG_OK && *length == 0) *end = END_MARKER;
  return st;
}

/* The next message of a payload in memory, decoded where it lies
 * (framing.h: the same checks as read_prefix and ipc_message_decode); its
 * metadata is the payload's memory, so m->metadata stays NULL. */
static xchg_status view_message(payload *p, ipc_message *m, int *end, xchg_error *err) {
  *end = remaining(p) == 0 ? END_OF_DATA : NOT_END;
  if (*end) return XCHG_OK;
  ipc_message_view v;
  if (p->ahead && m->offset == 0) { /* decoded when its lines were asked for */
    v = p->first_view;
  } else {
    xchg_status st = cut_short(
        p,
        ipc_message_view_decode(xchg_buf_data(p->memory) + m->offset, (size_t)remaining(p),
                                m->index, m->offset, p->dec->opts.max_metadata_bytes, &v, err),
        err);
    if (st != XCHG_OK) return st;
  }
  p->metadata_bytes += v.eos ? v.size : v.body_offset;
  if (v.eos) {
    *end = END_MARKER;
    return xchg_source_seek(p->src, m->offset + v.size, err);
  }
  m->header = v.header;
  m->header_type = v.header_type;
  m->version = v.version;
  m->body_offset = m->offset + v.body_offset;
  m->body_length = v.body_length;
  return XCHG_OK; /* plan_payload seeks past the body */
}

/* Reads the next message's prefix and metadata; its body is left unread. */
static xchg_status read_message(payload *p, ipc_message *m, int *end, xchg_error *err) {
  int32_t length = 0;
  memset(m, 0, sizeof *m);
  m->index = p->message_index;
  m->offset = position(p);
  if (p->memory) return view_message(p, m, end, err);
  xchg_status st = read_prefix(p, &length, end, err);
  if (st != XCHG_OK || *end) return st;
  if ((st = xchg_source_read_buf(p->src, (size_t)length, &m->metadata, err)) != XCHG_OK) {
    xchg_error_prefix(err, "message %lld at byte %lld: metadata: ", (long long)p->message_index,
                      (long long)m->offset);
    return st;
  }
  p->metadata_bytes += length;
  m->body_offset = position(p);
  return cut_short(p, ipc_message_decode(m, remaining(p), err), err);
}

/* The body, in memory (within the payload's, which the arrays then keep)
 * or to be fetched buffer by buffer; borrowed from the payload. */
static ipc_body body_of(const payload *p, const ipc_message *m) {
  ipc_body body = {.mem = p->memory, .offset = m->body_offset, .length = m->body_length};
  if (p->memory)
    body.data = xchg_buf_data(p->memory) + m->body_offset;
  else
    body.src = p->src;
  return body;
}

static ipc_decode_ctx decode_ctx(payload *p, const ipc_message *m) {
  ipc_decode_ctx ctx = {&p->dec->opts, p->dec->schema.big_endian, m->version, p->message_index,
                        m->offset,     ipc_dictionaries_lookup,   &p->dicts,  NULL,
                        NULL};
  return ctx;
}

/* A payload that is a whole stream starts with the schema, which must be
 * the decoder's. */
static xchg_status check_schema(payload *p, const ipc_message *m, xchg_error *err) {
  if (p->message_index != 0)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "message %lld at byte %lld: a schema message after the "
                       "first",
                       (long long)p->message_index, (long long)m->offset);
  ipc_schema theirs;
  xchg_status st = ipc_schema_parse(&m->header, &p->dec->opts, &theirs, err);
  if (st == XCHG_OK && !ipc_schema_equal(&theirs, "in the payload", &p->dec->schema,
                                         "in the decoder's", IPC_METADATA_IGNORED, err))
    st = XCHG_EFORMAT;
  if (st != XCHG_OK)
    xchg_error_prefix(err, "message 0: the payload's schema is not the decoder's: ");
  ipc_schema_free(&theirs); /* parse frees what it made when it fails; free twice is harmless */
  p->is_stream = 1;
  return st;
}

static xchg_status read_dictionary(payload *p, const ipc_message *m, xchg_error *err) {
  if (p->dictionaries_read++ == 0) p->first_dictionary_at = m->offset;
  ipc_dictionary_batch d;
  xchg_status st =
      ipc_dictionary_batch_read(&p->dicts, &m->header, p->message_index, m->offset, &d, err);
  if (st != XCHG_OK || !ipc_dictionaries_used(&p->dicts, d.id))
    return st; /* no selected column needs it */
  ipc_body body = body_of(p, m);
  ipc_decode_ctx ctx = decode_ctx(p, m);
  return ipc_dictionary_batch_apply(&p->dicts, &d, &ctx, &body, p->dec->opts.max_dictionary_bytes,
                                    p->message_index, m->offset, err);
}

static xchg_status plan_batch(payload *p, const ipc_message *m, xchg_error *err) {
  planned *b = p->first ? calloc(1, sizeof *b) : &p->one;
  if (!b) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  b->ctx = decode_ctx(p, m);
  ipc_body body = body_of(p, m);
  const ipc_field *root = &p->dec->schema.root;
  xchg_status st = ipc_decode_plan(&b->ctx, &m->header, &body, root->children, root->n_children, 0,
                                   &p->jobs, &b->array, err);
  if (st != XCHG_OK) {
    if (b != &p->one) free(b);
    return st;
  }
  if (p->last)
    p->last->next = b;
  else
    p->first = b;
  p->last = b;
  return XCHG_OK;
}

static xchg_status read_one(payload *p, const ipc_message *m, xchg_error *err) {
  switch (m->header_type) {
    case HEADER_SCHEMA: return check_schema(p, m, err);
    case HEADER_DICTIONARY: return read_dictionary(p, m, err);
    default: return plan_batch(p, m, err);
  }
}

/* The error of a payload whose first message failed, st, unless the
 * payload is an Arrow IPC file, whose magic read as a metadata length is a
 * huge one: then the error says what it is (read again only then). */
static xchg_status error_or_file(payload *p, xchg_status st, xchg_error *err) {
  uint8_t magic[IPC_MAGIC_SIZE];
  size_t got = 0;
  xchg_error ignored;
  if (p->message_index != 0 || xchg_source_seek(p->src, 0, &ignored) != XCHG_OK ||
      xchg_source_read(p->src, magic, sizeof magic, &got, &ignored) != XCHG_OK)
    return st;
  p->metadata_bytes += (int64_t)got;
  if (!ipc_is_file_start(magic, got)) return st;
  return ipc_file_given(
      "not a payload: a payload is an IPC stream or a batch's messages (xchg "
      "convert a file to a stream)",
      err);
}

/* The error of a payload that ended (at byte end_at, at its marker or
 * not) before any record batch, with no schema message (a stream of no
 * batch is no rows): what it held instead, and where, e.g. "the payload
 * of 232 bytes holds no record batch: 1 dictionary message from byte 0,
 * then the end-of-stream marker at byte 224". */
static xchg_status no_batch(const payload *p, int marker, int64_t end_at, xchg_error *err) {
  int64_t size = xchg_source_size(p->src);
  if (size == 0)
    return xchg_errorf(err, XCHG_EFORMAT, "the payload of 0 bytes holds no record batch");
  char held[96] = "";
  if (p->dictionaries_read > 0)
    snprintf(held, sizeof held, "%lld dictionary message%s from byte %lld, then ",
             (long long)p->dictionaries_read, p->dictionaries_read == 1 ? "" : "s",
             (long long)p->first_dictionary_at);
  return xchg_errorf(err, XCHG_EFORMAT,
                     "the payload of %lld bytes holds no record batch: %s%s %lld", (long long)size,
                     held, marker ? "the end-of-stream marker at byte" : "its end at byte",
                     (long long)end_at);
}

/* Reads every message of the payload, planning its record batches. */
static xchg_status plan_payload(payload *p, xchg_error *err) {
  xchg_status st = XCHG_OK;
  if (p->dec->n_dictionaries > 0) {
    st = ipc_schema_visit_dictionaries(&p->dec->schema, 0, declare_dictionary, &p->dicts, err);
    if (st == XCHG_OK) st = ipc_dictionaries_mark_used(&p->dicts, &p->dec->schema, err);
  }
  int end = 0;
  int64_t end_at = 0;
  while (st == XCHG_OK) {
    ipc_message m;
    st = read_message(p, &m, &end, err);
    end_at = m.offset;
    if (st == XCHG_OK && !end) st = read_one(p, &m, err);
    if (st == XCHG_OK && !end)
      st = xchg_source_seek(p->src, (uint64_t)(m.body_offset + m.body_length), err);
    xchg_buf_unref(m.metadata);
    if (st != XCHG_OK || end) break;
    p->message_index++;
  }
  if (st != XCHG_OK) return error_or_file(p, st, err);
  /* A stream's end is its marker, without which a cut at a message
   * boundary would pass for a shorter stream: a known cut, worded as the
   * reader words it (reader.c, ends_before_message). */
  if (p->is_stream && end == END_OF_DATA && !p->dec->opts.allow_missing_eos)
    return cut_short(p,
                     xchg_errorf(err, XCHG_EIO, IPC_ENDS_WITHOUT_MARKER, (long long)position(p),
                                 (long long)p->message_index),
                     err);
  if (end == END_MARKER && remaining(p) > 0)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "%lld bytes follow the end-of-stream marker, from byte "
                       "%lld",
                       (long long)remaining(p), (long long)position(p));
  /* A whole stream of no batch is a relation's empty part: no rows
   * (finish_payload); anything else of no batch is not a payload. */
  if (!p->first && !p->is_stream) return no_batch(p, end == END_MARKER, end_at, err);
  return XCHG_OK;
}

/* The result of a stream of no batch: no rows of the selected columns. */
static xchg_status no_rows(payload *p, xchg_error *err) {
  const ipc_field *root = &p->dec->schema.root;
  int64_t n = 0;
  for (int64_t i = 0; i < root->n_children; i++) n += !root->children[i].skip;
  ipc_array *r = p->result = ipc_array_new(1, n);
  for (int64_t i = 0, k = 0; r && i < root->n_children; i++)
    if (!root->children[i].skip && !(r->children[k++] = ipc_empty_array(&root->children[i], 0))) {
      ipc_array_unref(r);
      r = p->result = NULL;
    }
  return r ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

/* ---- decompressing, validating, exporting ------------------------------------ */

/* The batches of a stream payload as one array: each selected column
 * concatenated (nested fields are never deselected here). */
static xchg_status concat_batches(const ipc_field *root, ipc_array *a, ipc_array *b,
                                  ipc_array **out, xchg_error *err) {
  ipc_array *r = *out = ipc_array_new(1, a->n_children);
  if (!r) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  r->length = a->length + b->length;
  xchg_status st = XCHG_OK;
  for (int64_t i = 0, k = 0; i < root->n_children && st == XCHG_OK; i++) {
    if (root->children[i].skip) continue;
    st = ipc_array_concat(&root->children[i], 0, a->children[k], b->children[k], &r->children[k],
                          err);
    k++;
  }
  if (st != XCHG_OK) {
    ipc_array_unref(r);
    *out = NULL;
  }
  return st;
}

/* Runs the payload's jobs (on pool, when given), validates its batches and
 * joins them into p->result. */
static xchg_status finish_payload(payload *p, xchg_pool *pool, xchg_error *err) {
  const ipc_field *root = &p->dec->schema.root;
  if (!p->first) return no_rows(p, err);
  xchg_status st = p->jobs.count > 0
                       ? ipc_jobs_run(&p->jobs, pool, p->dec->opts.task_bytes, NULL, err)
                       : XCHG_OK; /* nothing compressed was selected */
  for (planned *b = p->first; b && st == XCHG_OK; b = b->next)
    st = ipc_decode_validate(&b->ctx, root->children, root->n_children, 0, b->array, err);
  for (planned *b = p->first; b && st == XCHG_OK; b = b->next) {
    if (!p->result) { /* the first batch's array moves to the result */
      p->result = b->array;
      b->array = NULL;
      continue;
    }
    ipc_array *joined;
    st = concat_batches(root, p->result, b->array, &joined, err);
    ipc_array_unref(p->result);
    p->result = joined;
  }
  return st;
}

/* Payloads [starts[t], starts[t+1]) are task t. */
typedef struct payload_groups {
  const xchg_batch_decoder *dec;
  payload *ps;
  int64_t *starts;
  xchg_source *const *srcs;
  struct ArrowArray *outs;
} payload_groups;

/* Cuts the n payloads into runs of about equal source size, at least
 * task_bytes each and about four per thread; returns how many.  (What a
 * payload costs is not known before it is read: its size stands for it.) */
static int64_t group_by_size(xchg_source *const *srcs, int64_t n, int threads, int64_t task_bytes,
                             int64_t *starts) {
  int64_t total = 0, groups = 0, acc = 0;
  for (int64_t i = 0; i < n; i++) total += srcs[i] ? xchg_source_size(srcs[i]) : 0;
  int64_t target = total / (4 * threads);
  if (target < task_bytes) target = task_bytes;
  starts[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    acc += srcs[i] ? xchg_source_size(srcs[i]) : 0;
    if (acc >= target || i == n - 1) {
      starts[++groups] = i + 1;
      acc = 0;
    }
  }
  return groups;
}

/* A planned payload's work in bytes' worth of decompression: its
 * decompressed bytes, and a byte per value validated (a row of each
 * selected column). */
static int64_t payload_work(const payload *p) {
  int64_t rows = 0;
  for (const planned *b = p->first; b; b = b->next) rows += b->array->length;
  return p->jobs.bytes + rows * (p->first ? p->first->array->n_children : 0);
}

/* Cuts planned payloads into runs of about equal work, at least task_bytes
 * each and about four per thread; returns how many. */
static int64_t group_by_work(const payload *ps, int64_t n, int threads, int64_t task_bytes,
                             int64_t total, int64_t *starts) {
  int64_t target = total / (4 * threads), groups = 0, acc = 0;
  if (target < task_bytes) target = task_bytes;
  starts[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    acc += payload_work(&ps[i]);
    if (acc >= target || i == n - 1) {
      starts[++groups] = i + 1;
      acc = 0;
    }
  }
  return groups;
}

static void payload_free(payload *p);
static xchg_status start_payload(payload *p, xchg_source *src);
static xchg_status export_payload(payload *p, struct ArrowArray *out);

/* Asks memory for the framing and metadata of payload p, in memory, while
 * the one before it is decoded: the payloads of a relation lie apart, and
 * the first line of each is a cold miss, waited for when it is read. */
static void prefetch_payload(payload *p, xchg_source *src) {
  if (!src || p->memory || !(p->memory = xchg_source_memory(src))) return;
  size_t size = xchg_buf_size(p->memory);
  cpu_prefetch(xchg_buf_data(p->memory), size < PAYLOAD_HEAD_BYTES ? size : PAYLOAD_HEAD_BYTES);
}

/* Asks memory for the first lines of the selected columns' buffers of
 * payload p, a RecordBatch message in memory whose metadata
 * prefetch_payload asked for one payload before: the second cold miss of
 * a narrow read of a compressed body is the 8-byte length that begins
 * each buffer, in the middle of the payload, which planning reads.  The
 * first message, decoded here to find them, is kept for planning
 * (first_view): decoded twice, it cost a hot narrow read 3-4 %. */
static void prefetch_selected(payload *p, xchg_source *src) {
  if (!p->memory) prefetch_payload(p, src);
  if (!p->memory || p->dec->n_ahead == 0) return;
  const uint8_t *data = xchg_buf_data(p->memory);
  const ipc_message_view *v = &p->first_view;
  xchg_error ignored;
  xchg_block_codec codec;
  fb_vector buffers;
  p->ahead =
      ipc_message_view_decode(data, xchg_buf_size(p->memory), 0, 0, p->dec->opts.max_metadata_bytes,
                              &p->first_view, &ignored) == XCHG_OK;
  if (!p->ahead || v->eos || v->header_type != HEADER_RECORD_BATCH ||
      v->version < IPC_METADATA_V5 ||
      ipc_batch_compression(&v->header, &codec, &ignored) != XCHG_OK || codec == XCHG_BLOCK_NONE ||
      fb_vector_field(&v->header, BATCH_BUFFERS, 16, &buffers) <= 0)
    return;
  for (int k = 0; k < p->dec->n_ahead && p->dec->ahead[k] < buffers.count; k++) {
    uint64_t offset = fb_load_u64(fb_vector_elem(&buffers, p->dec->ahead[k]));
    if (offset < (uint64_t)v->body_length) cpu_prefetch(data + v->body_offset + offset, 1);
  }
}

/* Decodes a run of payloads on one thread, from reading to export; the
 * first failure ends the run (a later payload's error would not be the
 * one reported). */
static void decode_group(void *ctx, int64_t t) {
  payload_groups *g = ctx;
  for (int64_t i = g->starts[t]; i < g->starts[t + 1]; i++) {
    payload *p = &g->ps[i];
    if (i + 2 < g->starts[t + 1]) prefetch_payload(&g->ps[i + 2], g->srcs[i + 2]);
    if (i + 1 < g->starts[t + 1]) prefetch_selected(&g->ps[i + 1], g->srcs[i + 1]);
    p->status = start_payload(p, g->srcs[i]);
    if (p->status == XCHG_OK) p->status = finish_payload(p, NULL, &p->error);
    if (p->status == XCHG_OK) p->status = export_payload(p, &g->outs[i]);
    if (p->status != XCHG_OK) return;
  }
}

/* Decompresses, validates and exports a run of planned payloads. */
static void finish_group(void *ctx, int64_t t) {
  payload_groups *g = ctx;
  for (int64_t i = g->starts[t]; i < g->starts[t + 1]; i++) {
    payload *p = &g->ps[i];
    if (p->status == XCHG_OK) p->status = finish_payload(p, NULL, &p->error);
    if (p->status == XCHG_OK) p->status = export_payload(p, &g->outs[i]);
  }
}

static void payload_free(payload *p) {
  for (planned *b = p->first, *next; b; b = next) {
    next = b->next;
    ipc_array_unref(b->array);
    if (b != &p->one) free(b);
  }
  ipc_jobs_free(&p->jobs);
  ipc_dictionaries_free(&p->dicts);
  ipc_array_unref(p->result);
  xchg_buf_unref(p->memory);
}

/* p was set up by payload_init (xchg_batch_decoder_decode_many does so for
 * every payload before any starts): only its source is new. */
static xchg_status start_payload(payload *p, xchg_source *src) {
  p->src = src;
  if (!src) return xchg_errorf(&p->error, XCHG_EINVAL, "the payload's source is NULL");
  if (xchg_source_size(src) < 0)
    return xchg_errorf(&p->error, XCHG_EINVAL,
                       "the payload's source is not seekable (a pipe, a socket, a callback): "
                       "a payload is read where its buffers are");
  if (!p->memory) p->memory = xchg_source_memory(src);
  xchg_status st = xchg_source_seek(src, 0, &p->error);
  return st == XCHG_OK ? plan_payload(p, &p->error) : st;
}

static xchg_status export_payload(payload *p, struct ArrowArray *out) {
  xchg_status st = ipc_array_export(p->result, out, &p->error);
  ipc_array_unref(p->result); /* the export holds what it needs */
  p->result = NULL;
  return st;
}

/* Decodes payloads 1 to n whole, in runs on the pool's threads, while the
 * caller finishes payload 0, planned already, and then joins them. */
static void decode_runs_after_first(payload *ps, int64_t n, const xchg_batch_decoder *dec,
                                    xchg_source *const *srcs, int64_t *starts,
                                    struct ArrowArray *outs) {
  int64_t groups = group_by_size(srcs + 1, n - 1, xchg_pool_threads(dec->opts.pool),
                                 dec->opts.task_bytes, starts);
  for (int64_t k = 0; k <= groups; k++) starts[k]++;
  payload_groups g = {dec, ps, starts, srcs, outs};
  pool_loop loop;
  pool_loop_start(dec->opts.pool, &loop, groups, decode_group, &g);
  xchg_status st = ps[0].status = finish_payload(&ps[0], NULL, &ps[0].error);
  if (st == XCHG_OK) ps[0].status = export_payload(&ps[0], &outs[0]);
  pool_loop_finish(dec->opts.pool, &loop);
}

/* Plans every payload on the calling thread, then finishes them: on the
 * caller when all of it is not worth a hand-off, in runs of payloads of
 * about equal work on the pool when there are enough to keep its threads
 * busy, else each payload's jobs spread over the pool (few large ones).
 * But when the first payload's work says that the call's is worth a run a
 * thread or more, the others are decoded whole in runs on the pool, their
 * planning too: planning reads each payload's metadata, cold, and one
 * thread planning 50 payloads of 6 columns while the other waited made
 * full reads of them 1.2x as long (two threads, groups of 50, paired:
 * 0.80-0.83x for uncompressed payloads so, 0.98x for LZ4, where the
 * decompression was on the pool already).  A narrow read of payloads
 * stored as they are has next to nothing to finish, and planned on the
 * caller it stays: handed off in runs it took 1.2-1.6x as long. */
static void decode_on_caller(payload *ps, int64_t n, const xchg_batch_decoder *dec,
                             xchg_source *const *srcs, int64_t *starts, struct ArrowArray *outs) {
  int threads = xchg_pool_threads(dec->opts.pool);
  int64_t total = 0, groups = 0, worth = 2 * dec->opts.task_bytes * threads;
  int64_t failed = -1; /* the payload whose planning failed */
  for (int64_t i = 0; i < n && failed < 0; i++) {
    if (i + 2 < n) prefetch_payload(&ps[i + 2], srcs[i + 2]);
    if (i + 1 < n) prefetch_selected(&ps[i + 1], srcs[i + 1]);
    if ((ps[i].status = start_payload(&ps[i], srcs[i])) != XCHG_OK) failed = i;
    total += payload_work(&ps[i]);
    if (i == 0 && failed < 0 && starts && n > threads && total >= worth / n) {
      decode_runs_after_first(ps, n, dec, srcs, starts, outs);
      return;
    }
  }
  /* The payloads planned before a failed one finish first, as they do one
   * by one: the first bad payload is the error, with a pool or without. */
  for (int64_t i = 0; i < failed; i++)
    if ((ps[i].status = finish_payload(&ps[i], NULL, &ps[i].error)) != XCHG_OK) break;
  if (failed >= 0) return;
  xchg_status st = XCHG_OK;
  if (starts && total >= 2 * dec->opts.task_bytes)
    groups = group_by_work(ps, n, threads, dec->opts.task_bytes, total, starts);
  payload_groups g = {dec, ps, starts, srcs, outs};
  if (groups >= threads) {
    xchg_pool_run(dec->opts.pool, groups, finish_group, &g);
    return;
  }
  xchg_pool *spread = groups > 0 ? dec->opts.pool : NULL;
  for (int64_t i = 0; i < n && st == XCHG_OK; i++)
    st = ps[i].status = finish_payload(&ps[i], spread, &ps[i].error);
  for (int64_t i = 0; i < n && st == XCHG_OK; i++)
    st = ps[i].status = export_payload(&ps[i], &outs[i]);
}

/* Whether any of the sources is read by copying (not in memory). */
static int any_copied(xchg_source *const *srcs, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    xchg_buf *memory = srcs[i] ? xchg_source_memory(srcs[i]) : NULL;
    if (!memory) return 1;
    xchg_buf_unref(memory);
  }
  return 0;
}

xchg_status xchg_batch_decoder_decode_many(const xchg_batch_decoder *dec, xchg_source *const *srcs,
                                           int64_t n, int64_t first_batch, struct ArrowArray *outs,
                                           int64_t *metadata_bytes, xchg_error *err) {
  if (metadata_bytes) *metadata_bytes = 0;
  if (!dec) { /* every out released-state, as on any error */
    for (int64_t i = 0; outs && i < n; i++) memset(&outs[i], 0, sizeof outs[i]);
    return base_null_argument("xchg_batch_decoder_decode_many", "the decoder", err);
  }
  if (n < 0)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_batch_decoder_decode_many: n is negative (%lld)",
                       (long long)n);
  for (int64_t i = 0; outs && i < n; i++) memset(&outs[i], 0, sizeof outs[i]);
  if (n > 0 && (!srcs || !outs))
    return base_null_argument("xchg_batch_decoder_decode_many", !srcs ? "srcs" : "outs", err);
  if (n == 0) return XCHG_OK;
  payload one, *ps = n == 1 ? &one : malloc((size_t)n * sizeof *ps);
  int threads = xchg_pool_threads(dec->opts.pool);
  int64_t *starts = threads > 1 && n > 1 ? malloc(sizeof *starts * ((size_t)n + 1)) : NULL;
  if (!ps || (threads > 1 && n > 1 && !starts)) {
    if (ps != &one) free(ps);
    free(starts);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %lld payloads", (long long)n);
  }
  /* Until a payload is tried, it is not a failure.  Its number wraps past
   * INT64_MAX (it only names the payload; the sum overflowed, undefined). */
  for (int64_t i = 0; i < n; i++)
    payload_init(&ps[i], dec, NULL, (int64_t)((uint64_t)first_batch + (uint64_t)i));
  if (threads <= 1) { /* one payload after another, each from reading to export */
    int64_t all[2] = {0, n};
    payload_groups g = {dec, ps, all, srcs, outs};
    decode_group(&g, 0);
  } else if (n >= threads && any_copied(srcs, n)) { /* the copies on every thread */
    payload_groups g = {dec, ps, starts, srcs, outs};
    xchg_pool_run(dec->opts.pool, group_by_size(srcs, n, threads, dec->opts.task_bytes, starts),
                  decode_group, &g);
  } else {
    decode_on_caller(ps, n, dec, srcs, starts, outs);
  }
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < n; i++) {
    if (metadata_bytes) *metadata_bytes += ps[i].metadata_bytes;
    if (st != XCHG_OK || ps[i].status == XCHG_OK) continue;
    st = ps[i].status;
    if (err) *err = ps[i].error;
    xchg_error_prefix(err, "batch %lld: ", (long long)ps[i].batch);
  }
  for (int64_t i = 0; i < n; i++) {
    if (st != XCHG_OK && outs[i].release) outs[i].release(&outs[i]);
    payload_free(&ps[i]);
  }
  if (ps != &one) free(ps);
  free(starts);
  return st;
}

xchg_status xchg_batch_decoder_decode(const xchg_batch_decoder *dec, xchg_source *src,
                                      int64_t batch, struct ArrowArray *out, xchg_error *err) {
  if (!dec || !out) {
    if (out) memset(out, 0, sizeof *out);
    return base_null_argument("xchg_batch_decoder_decode", !dec ? "the decoder" : "out", err);
  }
  return xchg_batch_decoder_decode_many(dec, &src, 1, batch, out, NULL, err);
}
