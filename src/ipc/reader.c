/* reader.c — the IPC stream and file readers: framing, schema, dictionaries.
 *
 * Messages are read one at a time: a 0xFFFFFFFF continuation marker (absent
 * in the pre-0.15 framing), an int32 metadata length, the Message
 * flatbuffer, then the body.  A stream is a schema message followed by
 * dictionary and record batch messages; the file format wraps such a stream
 * between "ARROW1" magics and adds a footer that holds the schema and says
 * where every dictionary and record batch message starts (Arrow JS leaves
 * the schema message out of the stream: see check_body_schema).
 *
 * A message's body is attached only when it is decoded: a slice of the
 * input when it is in memory, buffer by buffer from a seekable file when
 * columns are deselected, read whole otherwise, or skipped unread. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/array_stream.h"
#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/readahead.h"
#include "ipc/reader_internal.h"
#include "ipc/schema.h"
#include "xchg/ipc.h"


typedef struct ipc_message {
  xchg_buf *metadata;
  fb_table header;
  int header_type;
  int version;
  int64_t index;
  int64_t offset;       /* of the framing */
  int64_t body_offset;
  int64_t body_length;
  ipc_body body;        /* attached when decoded */
} ipc_message;

/* A Block of the file footer: where one message starts. */
typedef struct file_block {
  int64_t offset;
  int32_t metadata_length;
  int64_t body_length;
} file_block;

struct xchg_ipc_reader {
  xchg_source *src;
  xchg_buf *memory;     /* the whole input, when it is in memory */
  xchg_read_options opts;
  xchg_ipc_format format;
  ipc_schema schema;
  int selective;        /* some column is not selected */
  ipc_dictionaries dicts;
  int64_t message_index;
  uint8_t peek[8];      /* bytes read to detect the format, not yet consumed */
  size_t peek_len, peek_pos;
  int finished;
  ipc_message held;     /* a message read but not yet processed */
  int has_held;
  char *held_metadata;  /* custom metadata shown by peek */
  ipc_readahead ahead;   /* batches planned, being decoded, or decoded */
  xchg_status deferred; /* an error to report once the batches before it are handed out */
  xchg_error deferred_error;
  /* file format */
  file_block *batch_blocks, *dict_blocks;
  int64_t n_batches, n_dict_blocks, next_batch;
  int64_t first_block_index; /* message index of the first block: 1 after a schema message, else 0 */
  int dicts_loaded;
  xchg_message_fn on_message;
  void *on_message_ctx;
  xchg_decompress_fn on_decompress;
  void *on_decompress_ctx;
  int64_t *column_bytes;  /* for on_message: per column, body bytes then decoded bytes */
};

void xchg_read_options_init(xchg_read_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->validation = XCHG_VALIDATE_FULL;
  opts->max_depth = 64;
  opts->max_fields = (int64_t)1 << 16;
  opts->max_buffer_bytes = (int64_t)1 << 31;
  opts->max_metadata_bytes = (int64_t)1 << 28;
  opts->max_batch_bytes = (int64_t)1 << 32;
  opts->max_dictionary_bytes = (int64_t)1 << 31;
  opts->readahead_bytes = (int64_t)8 << 20;
  opts->task_bytes = (int64_t)256 << 10;
}

/* ---- reading bytes -------------------------------------------------------- */

static int64_t position(const xchg_ipc_reader *r) {
  return (int64_t)xchg_source_position(r->src) - (int64_t)(r->peek_len - r->peek_pos);
}

static xchg_status read_exact(xchg_ipc_reader *r, void *dst, size_t n, size_t *got,
                              xchg_error *err) {
  size_t from_peek = r->peek_len - r->peek_pos;
  if (from_peek > n) from_peek = n;
  memcpy(dst, r->peek + r->peek_pos, from_peek);
  r->peek_pos += from_peek;
  size_t more = 0;
  xchg_status st = XCHG_OK;
  if (from_peek < n) st = xchg_source_read(r->src, (uint8_t *)dst + from_peek, n - from_peek, &more, err);
  *got = from_peek + more;
  return st;
}

/* The next n bytes as a buffer (zero-copy when the source is in memory). */
static xchg_status read_buffer(xchg_ipc_reader *r, size_t n, xchg_buf **out, xchg_error *err) {
  if (r->peek_pos == r->peek_len) return xchg_source_read_buf(r->src, n, out, err);
  int64_t start = position(r);
  xchg_buf *b = xchg_buf_alloc(n);
  if (!b) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", n);
  size_t got;
  xchg_status st = read_exact(r, xchg_buf_mutable_data(b), n, &got, err);
  if (st == XCHG_OK && got < n)
    st = xchg_errorf(err, XCHG_EIO, "input ends at byte %lld, %zu bytes short of a %zu-byte read "
                     "at byte %lld", (long long)(start + (int64_t)got), n - got, n, (long long)start);
  if (st != XCHG_OK) {
    xchg_buf_unref(b);
    return st;
  }
  *out = b;
  return XCHG_OK;
}

static int seekable(const xchg_ipc_reader *r) { return xchg_source_size(r->src) >= 0; }

static xchg_status seek(xchg_ipc_reader *r, int64_t offset, xchg_error *err) {
  r->peek_pos = r->peek_len;
  return xchg_source_seek(r->src, (uint64_t)offset, err);
}

/* Moves to byte `offset`, forward only when the input cannot seek. */
static xchg_status move_to(xchg_ipc_reader *r, int64_t offset, xchg_error *err) {
  int64_t here = position(r);
  if (here == offset) return XCHG_OK;
  if (seekable(r)) return seek(r, offset, err);
  while (r->peek_pos < r->peek_len && here < offset) {
    r->peek_pos++;
    here++;
  }
  return xchg_source_skip(r->src, (uint64_t)(offset - here), err);
}

/* ---- messages ------------------------------------------------------------- */

static void message_clear(ipc_message *m) {
  xchg_buf_unref(m->metadata);
  xchg_buf_unref(m->body.mem);
  memset(m, 0, sizeof *m);
}

static xchg_status read_word(xchg_ipc_reader *r, uint32_t *value, size_t *got, xchg_error *err) {
  uint8_t word[4];
  xchg_status st = read_exact(r, word, 4, got, err);
  *value = fb_load_u32(word);
  return st;
}

/* Reads the framing: sets *length, or *eos at an end-of-stream marker or
 * at a clean end of the input. */
static xchg_status read_prefix(xchg_ipc_reader *r, int32_t *length, int *eos, xchg_error *err) {
  int64_t at = position(r);
  uint32_t value;
  size_t got;
  xchg_status st = read_word(r, &value, &got, err);
  if (st != XCHG_OK) return st;
  *eos = got == 0;
  if (got == 0 && !r->opts.allow_missing_eos)
    return xchg_errorf(err, XCHG_EIO, "input ends at byte %lld, before message %lld, without the "
                       "end-of-stream marker (truncated?)", (long long)at, (long long)r->message_index);
  if (got == 0) return XCHG_OK;
  if (got == 4 && value == IPC_CONTINUATION && (st = read_word(r, &value, &got, err)) != XCHG_OK) return st;
  if (got < 4)
    return xchg_errorf(err, XCHG_EIO, "input ends inside the framing of message %lld at byte %lld",
                       (long long)r->message_index, (long long)at);
  *length = (int32_t)value;
  *eos = value == 0;
  if (*length < 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: negative metadata length %d",
                       (long long)r->message_index, (long long)at, *length);
  if (*length > r->opts.max_metadata_bytes)
    return xchg_errorf(err, XCHG_ELIMIT, "message %lld at byte %lld: metadata length %d exceeds "
                       "max_metadata_bytes", (long long)r->message_index, (long long)at, *length);
  return XCHG_OK;
}

static xchg_status parse_message(xchg_ipc_reader *r, ipc_message *m, xchg_error *err) {
  fb_table msg;
  int16_t version;
  uint8_t header_type;
  if (fb_root(xchg_buf_data(m->metadata), xchg_buf_size(m->metadata), &msg) < 0 ||
      fb_i16(&msg, MSG_VERSION, 0, &version) < 0 || fb_u8(&msg, MSG_HEADER_TYPE, 0, &header_type) < 0 ||
      fb_i64(&msg, MSG_BODY_LENGTH, 0, &m->body_length) < 0 ||
      fb_table_field(&msg, MSG_HEADER, &m->header) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: invalid Message flatbuffer",
                       (long long)m->index, (long long)m->offset);
  m->version = version;
  m->header_type = header_type;
  if (version < IPC_METADATA_V4 || version > IPC_METADATA_V5)
    return xchg_errorf(err, XCHG_ENOTSUP, "message %lld at byte %lld: metadata version V%d is not "
                       "supported (this reader supports V%d to V%d)", (long long)m->index,
                       (long long)m->offset, version + 1, IPC_METADATA_V4 + 1,
                       IPC_METADATA_V5 + 1);
  if (header_type < HEADER_SCHEMA || header_type > HEADER_RECORD_BATCH)
    return xchg_errorf(err, header_type <= 5 ? XCHG_ENOTSUP : XCHG_EFORMAT,
                       "message %lld at byte %lld: header type %d (tensors are not supported)",
                       (long long)m->index, (long long)m->offset, header_type);
  int64_t size = xchg_source_size(r->src);
  if (m->body_length < 0 || (size >= 0 && m->body_length > size - m->body_offset))
    return xchg_errorf(err, m->body_length < 0 ? XCHG_EFORMAT : XCHG_EIO,
                       "message %lld at byte %lld: body of %lld bytes %s", (long long)m->index,
                       (long long)m->offset, (long long)m->body_length,
                       m->body_length < 0 ? "is negative" : "runs past the end of the input");
  return XCHG_OK;
}

/* Reads the framing and metadata of the message at the current position;
 * the body is left where it is. */
static xchg_status read_message(xchg_ipc_reader *r, ipc_message *m, int *eos, xchg_error *err) {
  int32_t length = 0;
  memset(m, 0, sizeof *m);
  m->index = r->message_index;
  m->offset = position(r);
  xchg_status st = read_prefix(r, &length, eos, err);
  if (st != XCHG_OK || *eos) return st;
  st = read_buffer(r, (size_t)length, &m->metadata, err);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "message %lld at byte %lld: metadata: ", (long long)m->index, (long long)m->offset);
    return st;
  }
  m->body_offset = position(r);
  st = parse_message(r, m, err);
  if (st != XCHG_OK) message_clear(m);
  return st;
}

/* Makes the body available for decoding; see the comment at the top. */
static xchg_status attach_body(xchg_ipc_reader *r, ipc_message *m, int whole, xchg_error *err) {
  ipc_body *b = &m->body;
  b->offset = m->body_offset;
  b->length = m->body_length;
  if (r->memory) {
    b->mem = xchg_buf_slice(r->memory, (size_t)m->body_offset, (size_t)m->body_length);
    return b->mem ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  if (!whole && r->selective && seekable(r)) {
    b->src = r->src;
    return XCHG_OK;
  }
  xchg_status st = move_to(r, m->body_offset, err);
  if (st == XCHG_OK) st = read_buffer(r, (size_t)m->body_length, &b->mem, err);
  if (st != XCHG_OK)
    xchg_error_prefix(err, "message %lld at byte %lld: body: ", (long long)m->index, (long long)m->offset);
  return st;
}

/* Leaves the input just after the message's body, read or not. */
static xchg_status pass_body(xchg_ipc_reader *r, const ipc_message *m, xchg_error *err) {
  return r->format == XCHG_IPC_FILE && r->n_batches >= 0
             ? XCHG_OK
             : move_to(r, m->body_offset + m->body_length, err);
}

static char *message_metadata(const ipc_message *m) {
  fb_table msg;
  char *metadata = NULL;
  size_t size;
  if (fb_root(xchg_buf_data(m->metadata), xchg_buf_size(m->metadata), &msg) > 0)
    ipc_metadata_parse(&msg, MSG_METADATA, &metadata, &size, "message", NULL);
  return metadata;
}

static ipc_decode_ctx decode_ctx(xchg_ipc_reader *r, const ipc_message *m);

/* Per-column body bytes of a record batch, for on_message (`xchg
 * inspect`).  A batch they cannot be told for is reported without them:
 * decoding it reports what is wrong. */
static void add_column_bytes(xchg_ipc_reader *r, const ipc_message *m, const fb_table *batch,
                             xchg_message_info *info) {
  int64_t n = r->schema.root.n_children;
  if (r->column_bytes == NULL && n > 0) r->column_bytes = malloc(2 * (size_t)n * sizeof *r->column_bytes);
  if (r->column_bytes == NULL) return;
  ipc_body body = {NULL, NULL, m->body_offset, m->body_length};
  if (r->memory) body.mem = xchg_buf_slice(r->memory, (size_t)m->body_offset, (size_t)m->body_length);
  ipc_decode_ctx ctx = decode_ctx(r, m);
  xchg_error ignored;
  if ((body.mem != NULL || !r->memory) &&
      ipc_column_bytes(&ctx, batch, &body, r->schema.root.children, n, r->column_bytes, r->column_bytes + n,
                       &ignored) == XCHG_OK) {
    info->n_columns = n;
    info->column_body_bytes = r->column_bytes;
    info->column_decoded_bytes = r->column_bytes + n;
  }
  xchg_buf_unref(body.mem);
}

static void report_message(xchg_ipc_reader *r, const ipc_message *m) {
  if (!r->on_message) return;
  static const xchg_message_kind kinds[] = {0, XCHG_MESSAGE_SCHEMA, XCHG_MESSAGE_DICTIONARY,
                                            XCHG_MESSAGE_RECORD_BATCH};
  xchg_message_info info = {kinds[m->header_type], m->index, m->offset,
                            (int64_t)xchg_buf_size(m->metadata), m->body_length, 0, XCHG_BLOCK_NONE,
                            -1, 0, m->version + 1, NULL, 0, NULL, NULL};
  fb_table data = m->header;
  if (m->header_type == HEADER_DICTIONARY) {
    uint8_t delta = 0;
    fb_i64(&m->header, DICTBATCH_ID, 0, &info.dictionary_id);
    fb_u8(&m->header, DICTBATCH_DELTA, 0, &delta);
    info.is_delta = delta;
    if (fb_table_field(&m->header, DICTBATCH_DATA, &data) <= 0) data = m->header;
  }
  if (m->header_type != HEADER_SCHEMA) {
    fb_i64(&data, 0, 0, &info.rows);
    ipc_batch_compression(&data, &info.compression, NULL);
  }
  if (m->header_type == HEADER_RECORD_BATCH) add_column_bytes(r, m, &data, &info);
  char *metadata = message_metadata(m);
  info.custom_metadata = metadata;
  r->on_message(r->on_message_ctx, &info);
  free(metadata);
}

static ipc_decode_ctx decode_ctx(xchg_ipc_reader *r, const ipc_message *m) {
  ipc_decode_ctx ctx = {&r->opts, r->schema.big_endian, m->version, m->index,
                        ipc_dictionaries_lookup, &r->dicts, r->on_decompress, r->on_decompress_ctx};
  return ctx;
}

/* ---- dictionaries --------------------------------------------------------- */

static xchg_status read_dictionary(xchg_ipc_reader *r, ipc_message *m, xchg_error *err) {
  int64_t id;
  uint8_t delta;
  fb_table data;
  if (fb_i64(&m->header, DICTBATCH_ID, 0, &id) < 0 || fb_u8(&m->header, DICTBATCH_DELTA, 0, &delta) < 0 ||
      fb_table_field(&m->header, DICTBATCH_DATA, &data) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: invalid DictionaryBatch",
                       (long long)m->index, (long long)m->offset);
  const ipc_field *field = ipc_dictionaries_field(&r->dicts, id);
  if (!field)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: dictionary id %lld is not "
                       "used by any field of the schema", (long long)m->index, (long long)m->offset,
                       (long long)id);
  if (!ipc_dictionaries_used(&r->dicts, id)) return XCHG_OK; /* no selected column needs it */
  if (!delta && r->format == XCHG_IPC_FILE && ipc_dictionaries_lookup(&r->dicts, id))
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: the file format does not "
                       "allow replacing dictionary %lld", (long long)m->index, (long long)m->offset,
                       (long long)id);
  xchg_status st = attach_body(r, m, 0, err);
  if (st != XCHG_OK) return st;
  ipc_decode_ctx ctx = decode_ctx(r, m);
  ipc_array *root;
  if ((st = ipc_decode_batch(&ctx, &data, &m->body, field, 1, 1, &root, err)) != XCHG_OK) return st;
  st = ipc_dictionaries_update(&r->dicts, id, root->children[0], delta != 0,
                               r->opts.max_dictionary_bytes, err);
  ipc_array_unref(root);
  if (st != XCHG_OK)
    xchg_error_prefix(err, "message %lld at byte %lld: ", (long long)m->index, (long long)m->offset);
  return st;
}

/* ---- the sequence of messages ------------------------------------------ */

static xchg_status read_block(xchg_ipc_reader *r, const file_block *b, int kind, ipc_message *m,
                              xchg_error *err) {
  int eos;
  xchg_status st = seek(r, b->offset, err);
  if (st == XCHG_OK) st = read_message(r, m, &eos, err);
  if (st != XCHG_OK) return st;
  if (eos || m->header_type != kind) {
    if (!eos) message_clear(m);
    return xchg_errorf(err, XCHG_EFORMAT, "footer block at byte %lld does not point to a %s message",
                       (long long)b->offset, kind == HEADER_DICTIONARY ? "dictionary" : "record batch");
  }
  return XCHG_OK;
}

static xchg_status load_file_dictionaries(xchg_ipc_reader *r, xchg_error *err) {
  for (int64_t i = 0; i < r->n_dict_blocks && !r->dicts_loaded; i++) {
    ipc_message m;
    r->message_index = r->first_block_index + i;
    xchg_status st = read_block(r, &r->dict_blocks[i], HEADER_DICTIONARY, &m, err);
    if (st == XCHG_OK) {
      report_message(r, &m);
      st = read_dictionary(r, &m, err);
    }
    message_clear(&m);
    if (st != XCHG_OK) return st;
  }
  r->dicts_loaded = 1;
  return XCHG_OK;
}

/* The next message from a stream (or an unseekable file). */
static xchg_status next_stream_message(xchg_ipc_reader *r, ipc_message *m, int *eos, xchg_error *err) {
  xchg_status st = read_message(r, m, eos, err);
  if (st != XCHG_OK || *eos) return st;
  r->message_index++;
  if (m->header_type == HEADER_SCHEMA) {
    int64_t at = m->offset;
    message_clear(m);
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: a second schema message",
                       (long long)r->message_index - 1, (long long)at);
  }
  return XCHG_OK;
}

static xchg_status check_file_end(xchg_ipc_reader *r, xchg_error *err);

/* At the end of a stream (read in order): a file's footer and closing magic
 * are read and checked, then a codec stream reads and verifies the rest of
 * its frame, the trailer after the last data byte, which nothing would read
 * otherwise, so that a cut there is an error.  Bytes after the frame stay
 * unread. */
static xchg_status finish_source(xchg_ipc_reader *r, xchg_error *err) {
  /* Only a file read in order gets here: from a seekable input the file
   * reader ends at its last footer block, without reading the stream's end. */
  xchg_status st = r->format == XCHG_IPC_FILE ? check_file_end(r, err) : XCHG_OK;
  if (st != XCHG_OK) return st;
  int64_t at = position(r);
  st = xchg_source_finish(r->src, err);
  if (st != XCHG_OK)
    xchg_error_prefix(err, "after the end of the IPC %s at byte %lld: ",
                      r->format == XCHG_IPC_FILE ? "file" : "stream", (long long)at);
  return st;
}

/* The next record batch message, reading the dictionaries before it.  The
 * message stays held until it is decoded or skipped. */
static xchg_status hold_next_batch(xchg_ipc_reader *r, int *eos, xchg_error *err) {
  *eos = 0;
  if (r->has_held) return XCHG_OK;
  if (r->finished) {
    *eos = 1;
    return XCHG_OK;
  }
  ipc_message *m = &r->held;
  if (r->format == XCHG_IPC_FILE && r->n_batches >= 0) {
    xchg_status st = load_file_dictionaries(r, err);
    if (st != XCHG_OK) return st;
    if (r->next_batch >= r->n_batches) {
      r->finished = *eos = 1;
      return XCHG_OK;
    }
    r->message_index = r->first_block_index + r->n_dict_blocks + r->next_batch;
    if ((st = read_block(r, &r->batch_blocks[r->next_batch], HEADER_RECORD_BATCH, m, err)) != XCHG_OK)
      return st;
    r->next_batch++;
    report_message(r, m);
    r->has_held = 1;
    return XCHG_OK;
  }
  for (;;) {
    xchg_status st = next_stream_message(r, m, eos, err);
    if (st != XCHG_OK) return st;
    if (*eos) {
      r->finished = 1;
      return finish_source(r, err);
    }
    report_message(r, m);
    if (m->header_type == HEADER_RECORD_BATCH) {
      r->has_held = 1;
      return XCHG_OK;
    }
    st = read_dictionary(r, m, err);
    if (st == XCHG_OK) st = pass_body(r, m, err);
    message_clear(m);
    if (st != XCHG_OK) return st;
  }
}

static void drop_held(xchg_ipc_reader *r) {
  message_clear(&r->held);
  r->has_held = 0;
}

/* ---- record batches -------------------------------------------------------- */

/* Plans the held record batch into the read-ahead. */
static xchg_status plan_held(xchg_ipc_reader *r, xchg_error *err) {
  ipc_message *m = &r->held;
  ipc_jobs *jobs;
  ipc_planned *p = ipc_readahead_slot(&r->ahead, &jobs);
  p->ctx = decode_ctx(r, m);
  xchg_status st = attach_body(r, m, 0, err);
  if (st == XCHG_OK)
    st = ipc_decode_plan(&p->ctx, &m->header, &m->body, r->schema.root.children,
                         r->schema.root.n_children, 0, jobs, &p->array, err);
  if (st == XCHG_OK) st = pass_body(r, m, err);
  drop_held(r);
  if (st == XCHG_OK) {
    ipc_readahead_push(&r->ahead);
  } else {
    ipc_readahead_abandon(&r->ahead);
  }
  return st;
}

/* Plans batches while the read-ahead has room (one at a time without a
 * pool).  An error stops planning; it is reported once the batches before
 * it have been handed out. */
static void read_ahead(xchg_ipc_reader *r) {
  xchg_error *err = &r->deferred_error;
  while (r->deferred == XCHG_OK && ipc_readahead_has_room(&r->ahead)) {
    int eos;
    xchg_status st = hold_next_batch(r, &eos, err);
    if (st == XCHG_OK && eos) break;
    if (st == XCHG_OK) st = plan_held(r, err);
    r->deferred = st;
  }
  ipc_readahead_flush(&r->ahead);
}

/* ---- schema ------------------------------------------------------------- */

static xchg_status add_dictionary_field(void *ctx, const ipc_field *field, xchg_error *err) {
  return ipc_dictionaries_declare(ctx, field, err);
}

static xchg_status set_schema(xchg_ipc_reader *r, const fb_table *schema, const char *where,
                              xchg_error *err) {
  xchg_status st = ipc_schema_parse(schema, &r->opts, &r->schema, err);
  if (st == XCHG_OK)
    st = ipc_schema_visit_dictionaries(&r->schema, 0, add_dictionary_field, &r->dicts, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "%s: ", where);
  return st;
}

/* Takes the schema message *m (and clears it): into r's schema or (into
 * != NULL) elsewhere. */
static xchg_status take_schema_message(xchg_ipc_reader *r, ipc_message *m, ipc_schema *into,
                                       xchg_error *err) {
  char where[64];
  snprintf(where, sizeof where, "schema message at byte %lld", (long long)m->offset);
  report_message(r, m);
  xchg_status st;
  if (into) {
    st = ipc_schema_parse(&m->header, &r->opts, into, err);
    if (st != XCHG_OK) xchg_error_prefix(err, "%s: ", where);
  } else {
    st = set_schema(r, &m->header, where, err);
  }
  if (st == XCHG_OK) st = pass_body(r, m, err);
  r->message_index = 1;
  message_clear(m);
  return st;
}

/* Reads the schema message that starts a stream into r's schema. */
static xchg_status read_schema_message(xchg_ipc_reader *r, xchg_error *err) {
  ipc_message m;
  int eos;
  xchg_status st = read_message(r, &m, &eos, err);
  if (st != XCHG_OK) return st;
  if (eos) return xchg_errorf(err, XCHG_EIO, "the input ends before its schema message");
  if (m.header_type != HEADER_SCHEMA) {
    int64_t at = m.offset;
    message_clear(&m);
    return xchg_errorf(err, XCHG_EFORMAT, "message 0 at byte %lld is not a schema", (long long)at);
  }
  return take_schema_message(r, &m, NULL, err);
}

/* ---- file format ------------------------------------------------------------ */

static xchg_status read_blocks(const fb_table *footer, int slot, file_block **out, int64_t *n,
                               int64_t file_size, xchg_error *err) {
  fb_vector v;
  int rc = fb_vector_field(footer, slot, 24, &v);
  if (rc < 0) return xchg_errorf(err, XCHG_EFORMAT, "footer: invalid block list");
  *n = rc ? v.count : 0;
  if (*n == 0) return XCHG_OK;
  if (!(*out = calloc((size_t)*n, sizeof(file_block)))) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < v.count; i++) {
    const uint8_t *p = fb_vector_elem(&v, i);
    file_block *b = &(*out)[i];
    b->offset = (int64_t)fb_load_u64(p);
    b->metadata_length = (int32_t)fb_load_u32(p + 8);
    b->body_length = (int64_t)fb_load_u64(p + 16);
    if (b->offset < 8 || b->metadata_length < 0 || b->body_length < 0 || b->offset > file_size ||
        b->metadata_length > file_size - b->offset ||
        b->body_length > file_size - b->offset - b->metadata_length)
      return xchg_errorf(err, XCHG_EFORMAT, "footer: block %u (offset %lld, metadata %d, body "
                         "%lld bytes) lies outside the %lld-byte file", i, (long long)b->offset,
                         b->metadata_length, (long long)b->body_length, (long long)file_size);
  }
  return XCHG_OK;
}

/* The root table of the Footer flatbuffer at byte `at`, and its schema. */
static xchg_status parse_footer(const uint8_t *data, size_t size, int64_t at, fb_table *root,
                                fb_table *schema, xchg_error *err) {
  if (fb_root(data, size, root) < 0 || fb_table_field(root, FOOTER_SCHEMA, schema) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "footer at byte %lld: invalid Footer flatbuffer", (long long)at);
  return XCHG_OK;
}

static xchg_status check_same_schema(const ipc_schema *footer, const ipc_schema *stream,
                                     xchg_error *err) {
  if (ipc_schema_equal(footer, stream, err)) return XCHG_OK;
  xchg_error_prefix(err, "footer schema and stream schema differ: ");
  return XCHG_EFORMAT;
}

static xchg_status read_footer(xchg_ipc_reader *r, int64_t size, xchg_error *err) {
  uint8_t tail[10];
  size_t got;
  xchg_status st = seek(r, size - 10, err);
  if (st == XCHG_OK) st = read_exact(r, tail, 10, &got, err);
  if (st != XCHG_OK) return st;
  int32_t footer_len = (int32_t)fb_load_u32(tail);
  if (got < IPC_FILE_TAIL || memcmp(tail + 4, IPC_MAGIC, IPC_MAGIC_SIZE) != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "file does not end with the ARROW1 magic (truncated?)");
  if (footer_len <= 0 || footer_len > size - 18)
    return xchg_errorf(err, XCHG_EFORMAT, "footer length %d at byte %lld does not fit the %lld-byte file",
                       footer_len, (long long)(size - 10), (long long)size);
  xchg_buf *footer;
  if ((st = seek(r, size - 10 - footer_len, err)) != XCHG_OK ||
      (st = read_buffer(r, (size_t)footer_len, &footer, err)) != XCHG_OK)
    return st;
  fb_table root, schema;
  st = parse_footer(xchg_buf_data(footer), xchg_buf_size(footer), size - 10 - footer_len, &root,
                    &schema, err);
  if (st == XCHG_OK) st = set_schema(r, &schema, "footer schema", err);
  if (st == XCHG_OK) st = read_blocks(&root, FOOTER_DICTIONARIES, &r->dict_blocks, &r->n_dict_blocks, size, err);
  if (st == XCHG_OK) st = read_blocks(&root, FOOTER_BATCHES, &r->batch_blocks, &r->n_batches, size, err);
  xchg_buf_unref(footer);
  return st;
}

/* Most writers repeat the footer's schema as a message after the magic,
 * and it must then agree with the footer's.  Arrow JS's file writer leaves
 * it out: the footer alone gives the schema, and the first message is a
 * dictionary, a record batch or the end-of-stream marker. */
static xchg_status check_body_schema(xchg_ipc_reader *r, xchg_error *err) {
  ipc_message m;
  int eos;
  xchg_status st = seek(r, 8, err);
  if (st == XCHG_OK) st = read_message(r, &m, &eos, err);
  if (st != XCHG_OK) return st;
  if (eos || m.header_type != HEADER_SCHEMA) {
    message_clear(&m);
    return XCHG_OK;
  }
  ipc_schema stream_schema;
  if ((st = take_schema_message(r, &m, &stream_schema, err)) != XCHG_OK) return st;
  st = check_same_schema(&r->schema, &stream_schema, err);
  ipc_schema_free(&stream_schema);
  return st;
}

static xchg_status open_file_in_memory(xchg_ipc_reader *r, ipc_message *first, xchg_error *err);

/* Not seekable: the stream inside is read in order, from its schema
 * message on; a file without one is read whole first (see below). */
static xchg_status open_file_in_order(xchg_ipc_reader *r, xchg_error *err) {
  ipc_message m;
  int eos;
  r->n_batches = -1;
  xchg_status st = read_message(r, &m, &eos, err);
  if (st != XCHG_OK) return st;
  if (!eos && m.header_type == HEADER_SCHEMA) return take_schema_message(r, &m, NULL, err);
  if (eos && position(r) == m.offset) /* allow_missing_eos took the end for a marker */
    return xchg_errorf(err, XCHG_EIO, "the input ends at byte %lld, right after the ARROW1 magic "
                       "(truncated?)", (long long)m.offset);
  return open_file_in_memory(r, &m, err);
}

static xchg_status open_file_format(xchg_ipc_reader *r, xchg_error *err) {
  int64_t size = xchg_source_size(r->src);
  if (size < 0) return open_file_in_order(r, err);
  if (size < 18)
    return xchg_errorf(err, XCHG_EIO, "a %lld-byte file is too short for the file format", (long long)size);
  xchg_status st = read_footer(r, size, err);
  if (st == XCHG_OK) st = check_body_schema(r, err);
  r->first_block_index = r->message_index;
  return st;
}

/* ---- the end of a file read in order ---------------------------------------
 *
 * Read in order, a file is its embedded stream up to the end-of-stream
 * marker; what follows is the Footer flatbuffer, its int32 length and the
 * closing "ARROW1" (Columnar.rst, "IPC File Format").  Those bytes carry
 * no data, but a cut or damage there means the input is not the whole
 * file, so they are read and checked like the rest.
 *
 * The layout puts nothing between the marker and the footer (no padding:
 * writers start the footer right after the marker, as every gold file
 * does), so the length must count every byte from the marker's end up to
 * the length itself.  Where the footer ends is said only by the length
 * that follows it, so the rest of the input is read to its end: nothing may
 * follow the closing magic.  That is also what the seekable reader, which
 * takes the last 10 bytes as length and magic, requires of a file. */


/* Reads the rest of the input after the *len bytes of *data (malloc'd to
 * exactly that size, or NULL), growing it, until *len exceeds limit (at most
 * limit + 1 bytes in all, limit < SIZE_MAX / 2) or the input ends.  The
 * caller frees *data, also after an error. */
static xchg_status read_rest(xchg_ipc_reader *r, size_t limit, uint8_t **data, size_t *len,
                             xchg_error *err) {
  size_t cap = *len, got = 0;
  xchg_status st = XCHG_OK;
  while (st == XCHG_OK && *len <= limit) {
    if (*len == cap) {
      size_t want = cap < 2048 ? 4096 : 2 * cap; /* no overflow: cap <= limit < SIZE_MAX / 2 */
      if (want > limit + 1) want = limit + 1;
      uint8_t *grown = realloc(*data, want);
      if (!grown) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", want);
      *data = grown;
      cap = want;
    }
    size_t asked = cap - *len;
    st = read_exact(r, *data + *len, asked, &got, err);
    *len += got;
    if (got < asked) break; /* the end of the input */
  }
  return st;
}

/* Whether rest[0, end) is a complete file end: a footer, the length
 * counting it, the magic. */
static int file_ends_at(const uint8_t *rest, size_t end) {
  return end >= IPC_FILE_TAIL && memcmp(rest + end - IPC_MAGIC_SIZE, IPC_MAGIC, IPC_MAGIC_SIZE) == 0 &&
         (int64_t)(int32_t)fb_load_u32(rest + end - IPC_FILE_TAIL) == (int64_t)(end - IPC_FILE_TAIL);
}

/* Checks the footer as the seekable reader would read it: a Footer
 * flatbuffer whose schema is the stream's and whose blocks lie inside the
 * file of file_size bytes. */
static xchg_status check_footer(xchg_ipc_reader *r, const uint8_t *footer, size_t size, int64_t at,
                                int64_t file_size, xchg_error *err) {
  fb_table root, schema_table;
  xchg_status st = parse_footer(footer, size, at, &root, &schema_table, err);
  if (st != XCHG_OK) return st;
  ipc_schema footer_schema;
  if ((st = ipc_schema_parse(&schema_table, &r->opts, &footer_schema, err)) != XCHG_OK) {
    xchg_error_prefix(err, "footer schema at byte %lld: ", (long long)at);
    return st;
  }
  st = check_same_schema(&footer_schema, &r->schema, err);
  ipc_schema_free(&footer_schema);
  static const int block_lists[] = {FOOTER_DICTIONARIES, FOOTER_BATCHES};
  for (size_t i = 0; i < 2 && st == XCHG_OK; i++) {
    file_block *blocks = NULL;
    int64_t n;
    st = read_blocks(&root, block_lists[i], &blocks, &n, file_size, err);
    free(blocks);
  }
  return st;
}

/* Checks the size bytes after the marker, which ends at byte `start`.
 * When they do not end as a file does, the cause is told apart as well as
 * it can be: a length that agrees with a magic before the end means data
 * after the file; the magic where it should be, a wrong length; a length
 * that fits a valid footer, a damaged magic.  Anything else is a cut (a
 * cut footer fails to parse: flatbuffers are built from the end, so their
 * last bytes are the strings and tables that the first ones point to). */
static xchg_status check_file_tail(xchg_ipc_reader *r, const uint8_t *rest, size_t size,
                                   int64_t start, xchg_error *err) {
  long long end = (long long)start + (long long)size;
  size_t footer_size = size >= IPC_FILE_TAIL ? size - IPC_FILE_TAIL : 0;
  if (file_ends_at(rest, size)) return check_footer(r, rest, footer_size, start, end, err);
  for (size_t early = IPC_FILE_TAIL; early < size; early++)
    if (file_ends_at(rest, early))
      return xchg_errorf(err, XCHG_EFORMAT, "%zu more byte%s after the closing ARROW1 magic at "
                         "byte %lld (nothing may follow a file)", size - early, size - early > 1 ? "s" : "",
                         (long long)start + (long long)early - 6);
  int32_t length = size >= IPC_FILE_TAIL ? (int32_t)fb_load_u32(rest + footer_size) : 0;
  if (size >= IPC_FILE_TAIL && memcmp(rest + size - IPC_MAGIC_SIZE, IPC_MAGIC, IPC_MAGIC_SIZE) == 0)
    return xchg_errorf(err, XCHG_EFORMAT, "footer length %d at byte %lld does not fit: the footer "
                       "starts after the end-of-stream marker, at byte %lld, %zu bytes "
                       "before the length (damaged or truncated?)", length, end - IPC_FILE_TAIL,
                       (long long)start, footer_size);
  xchg_error ignored;
  if (size > IPC_FILE_TAIL && (int64_t)length == (int64_t)footer_size &&
      check_footer(r, rest, footer_size, start, end, &ignored) == XCHG_OK)
    return xchg_errorf(err, XCHG_EFORMAT, "the file ends at byte %lld without the ARROW1 magic "
                       "(bytes %lld to %lld are damaged)", end, end - 6, end - 1);
  return xchg_errorf(err, XCHG_EIO, "the input ends at byte %lld inside the file footer (from "
                     "byte %lld, after the end-of-stream marker): the footer length and the "
                     "closing ARROW1 magic are missing (truncated?)", end, (long long)start);
}

/* Reads and checks everything after the end-of-stream marker of a file
 * read in order (see above), bounded by max_metadata_bytes for the footer. */
static xchg_status check_file_end(xchg_ipc_reader *r, xchg_error *err) {
  int64_t start = position(r);
  int64_t max_footer = r->opts.max_metadata_bytes;
  if (max_footer > INT32_MAX) max_footer = INT32_MAX; /* the length is an int32 */
  if (max_footer < 0) max_footer = 0;
  size_t limit = (size_t)max_footer + IPC_FILE_TAIL;
  uint8_t *rest = NULL;
  size_t size = 0;
  xchg_status st = read_rest(r, limit, &rest, &size, err);
  if (st != XCHG_OK) {
    free(rest);
    xchg_error_prefix(err, "the file footer at byte %lld: ", (long long)start);
    return st;
  }
  if (size > limit)
    st = xchg_errorf(err, XCHG_ELIMIT, "more than %zu bytes follow the end-of-stream marker, from "
                     "byte %lld: the file footer would exceed max_metadata_bytes (%lld)", limit,
                     (long long)start, (long long)r->opts.max_metadata_bytes);
  if (st == XCHG_OK) st = check_file_tail(r, rest, size, start, err);
  free(rest);
  return st;
}

/* ---- a file without a schema message, read in order -----------------------
 *
 * Arrow JS's file writer puts the schema only in the footer (see
 * check_body_schema): the dictionaries and record batches after the magic
 * cannot be decoded before the footer, at the very end, gives their types.
 * Read in order, such a file is read whole into memory, as much as
 * max_batch_bytes allows (the cap on the data of one batch, whose default
 * suits a whole file of ordinary size), and then read as a file in memory. */

static void free_whole_file(void *data, const void *unused, size_t size) {
  (void)unused;
  (void)size;
  free(data);
}

static size_t whole_file_limit(const xchg_ipc_reader *r) {
  int64_t cap = r->opts.max_batch_bytes;
  if (cap < 0) return 0;
  return (uint64_t)cap > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)cap;
}

/* The bytes read so far, in a malloc'd buffer of *len bytes: the magic and
 * padding, then the framing and metadata of the first message (*first,
 * cleared), which are rebuilt as they were read: a length that counts the
 * metadata, after the continuation marker when there was one. */
static uint8_t *file_head(const xchg_ipc_reader *r, ipc_message *first, size_t *len) {
  size_t metadata = first->metadata ? xchg_buf_size(first->metadata) : 0;
  size_t framing = (size_t)(position(r) - first->offset) - metadata; /* 8, or 4 before 0.15 */
  uint8_t *head = malloc(8 + framing + metadata);
  if (head) {
    memcpy(head, r->peek, 8);
    memset(head + 8, 0xFF, framing - 4);
    for (int i = 0; i < 4; i++) head[8 + framing - 4 + (size_t)i] = (uint8_t)(metadata >> (8 * i));
    if (metadata) memcpy(head + 8 + framing, xchg_buf_data(first->metadata), metadata);
  }
  *len = 8 + framing + metadata;
  message_clear(first);
  return head;
}

/* Reads the file (whose first message, *first, is not a schema) to its
 * end and reads it from memory from then on. */
static xchg_status open_file_in_memory(xchg_ipc_reader *r, ipc_message *first, xchg_error *err) {
  size_t limit = whole_file_limit(r), len;
  uint8_t *data = file_head(r, first, &len);
  if (!data) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_status st = read_rest(r, limit, &data, &len, err);
  if (st == XCHG_OK && len > limit)
    st = xchg_errorf(err, XCHG_ELIMIT, "this IPC file has no schema message (its schema is in the "
                     "footer only), so read in order it is held whole in memory, and it is larger "
                     "than max_batch_bytes (%zu bytes): read it from a seekable input, or raise "
                     "max_batch_bytes", limit);
  if (st == XCHG_OK) st = xchg_source_finish(r->src, err);
  xchg_source *whole = st == XCHG_OK ? xchg_source_from_memory(data, len, free_whole_file, data) : NULL;
  if (st == XCHG_OK && !whole) st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st != XCHG_OK) {
    free(data);
    return st;
  }
  xchg_source_free(r->src);
  r->src = whole;
  r->memory = xchg_source_memory(whole);
  r->peek_len = r->peek_pos = 0;
  return open_file_format(r, err);
}

/* ---- telling Arrow IPC from other input ------------------------------------ */

#define NOT_ARROW "not an Arrow IPC stream or file: "

/* Refuses the inputs that the first bytes show are not Arrow IPC. */
static xchg_status check_arrow_start(const xchg_ipc_reader *r, xchg_error *err) {
  if (r->peek_len == 0) return xchg_errorf(err, XCHG_EFORMAT, NOT_ARROW "the input is empty");
  if (r->peek_len >= 4 && memcmp(r->peek, "PAR1", 4) == 0)
    return xchg_errorf(err, XCHG_EFORMAT, NOT_ARROW "PAR1 magic at byte 0 (a Parquet file)");
  return XCHG_OK;
}

/* A stream starts with the continuation marker, or (before Arrow 0.15)
 * directly with the schema message's metadata length.  Bytes that start
 * neither a file nor a marked stream pass for such a length, so when no
 * schema message can be read after them, the input is not said to be a
 * damaged stream, which it almost never is, but something else; a length
 * that is not even plausible (negative, or above max_metadata_bytes) is
 * not shown at all.  Failures that say nothing of the bytes (memory,
 * cancellation) stay as they are. */
static xchg_status open_stream_format(xchg_ipc_reader *r, xchg_error *err) {
  xchg_status st = read_schema_message(r, err);
  int marked = r->peek_len >= 4 && fb_load_u32(r->peek) == IPC_CONTINUATION;
  if (st == XCHG_OK || st == XCHG_ENOMEM || st == XCHG_ECANCELLED || marked) return st;
  int32_t length = r->peek_len >= 4 ? (int32_t)fb_load_u32(r->peek) : -1;
  if (length <= 0 || length > r->opts.max_metadata_bytes)
    return xchg_errorf(err, XCHG_EFORMAT, NOT_ARROW "no continuation marker or ARROW1 magic at byte 0");
  xchg_error_prefix(err, NOT_ARROW "no continuation marker or ARROW1 magic at byte 0, nor a "
                    "pre-0.15 stream: ");
  return XCHG_EFORMAT;
}

/* ---- public API ------------------------------------------------------------ */

xchg_status xchg_ipc_reader_open(xchg_source *src, const xchg_read_options *opts,
                                 xchg_ipc_reader **out, xchg_error *err) {
  *out = NULL;
  xchg_ipc_reader *r = calloc(1, sizeof *r);
  if (!r) {
    xchg_source_free(src);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  r->src = src;
  r->memory = xchg_source_memory(src);
  if (opts) r->opts = *opts; else xchg_read_options_init(&r->opts);
  ipc_readahead_init(&r->ahead, &r->opts, &r->schema.root);
  r->on_message = r->opts.on_message;
  r->on_message_ctx = r->opts.on_message_ctx;
  size_t got;
  xchg_status st = xchg_source_read(src, r->peek, 8, &got, err);
  r->peek_len = got;
  if (st == XCHG_OK) st = check_arrow_start(r, err);
  if (st == XCHG_OK) {
    if (got == IPC_FILE_HEAD && memcmp(r->peek, IPC_MAGIC, IPC_MAGIC_SIZE) == 0) {
      r->peek_pos = 8;
      r->format = XCHG_IPC_FILE;
      st = open_file_format(r, err);
    } else {
      r->format = XCHG_IPC_STREAM;
      r->n_batches = -1;
      st = open_stream_format(r, err);
    }
  }
  if (st != XCHG_OK) {
    xchg_ipc_reader_free(r);
    return st;
  }
  *out = r;
  return XCHG_OK;
}

xchg_status xchg_ipc_reader_open_file(const char *path, const xchg_read_options *opts,
                                      xchg_ipc_reader **out, xchg_error *err) {
  xchg_source *src;
  *out = NULL;
  xchg_status st = xchg_source_open_file(path, XCHG_FILE_MMAP, &src, err);
  return st == XCHG_OK ? xchg_ipc_reader_open(src, opts, out, err) : st;
}

xchg_status xchg_ipc_reader_open_memory(const void *data, size_t size,
                                        xchg_release_fn release,
                                        void *release_ctx, const xchg_read_options *opts,
                                        xchg_ipc_reader **out, xchg_error *err) {
  xchg_source *src = xchg_source_from_memory(data, size, release, release_ctx);
  *out = NULL;
  if (!src) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return xchg_ipc_reader_open(src, opts, out, err);
}

xchg_ipc_format xchg_ipc_reader_format(const xchg_ipc_reader *r) { return r->format; }

void xchg_ipc_reader_on_message(xchg_ipc_reader *r, xchg_message_fn fn, void *ctx) {
  r->on_message = fn;
  r->on_message_ctx = ctx;
}

void xchg_ipc_reader_on_decompress(xchg_ipc_reader *r, xchg_decompress_fn fn, void *ctx) {
  r->on_decompress = fn;
  r->on_decompress_ctx = ctx;
}

static xchg_status after_select(xchg_ipc_reader *r, xchg_error *err) {
  r->selective = 0;
  for (int64_t i = 0; i < r->schema.root.n_children; i++)
    if (r->schema.root.children[i].skip) r->selective = 1;
  return ipc_dictionaries_mark_used(&r->dicts, &r->schema, err);
}

static void forget_read_ahead(xchg_ipc_reader *r) { ipc_readahead_clear(&r->ahead); }

/* Batches read ahead were decoded with the selection of their time: a new
 * one would either drop them or hand them out with the wrong columns. */
static xchg_status check_nothing_read_ahead(const xchg_ipc_reader *r, xchg_error *err) {
  if (ipc_readahead_count(&r->ahead) == 0) return XCHG_OK;
  return xchg_errorf(err, XCHG_EINVAL, "select after batches were read ahead (select before reading, "
                     "or read without a pool)");
}

xchg_status xchg_ipc_reader_select(xchg_ipc_reader *r, const char *const *paths, int64_t n,
                                   xchg_error *err) {
  xchg_status st = check_nothing_read_ahead(r, err);
  if (st == XCHG_OK) st = ipc_schema_select_paths(&r->schema, paths, n, err);
  return st == XCHG_OK ? after_select(r, err) : st;
}

xchg_status xchg_ipc_reader_select_indices(xchg_ipc_reader *r, const int64_t *indices, int64_t n,
                                           xchg_error *err) {
  xchg_status st = check_nothing_read_ahead(r, err);
  if (st == XCHG_OK) st = ipc_schema_select_indices(&r->schema, indices, n, err);
  return st == XCHG_OK ? after_select(r, err) : st;
}

xchg_status xchg_ipc_reader_schema(xchg_ipc_reader *r, struct ArrowSchema *out, xchg_error *err) {
  return ipc_schema_export(&r->schema, out, err);
}

xchg_status xchg_ipc_reader_read_batch(xchg_ipc_reader *r, int64_t i, struct ArrowArray *out,
                                       xchg_error *err) {
  memset(out, 0, sizeof *out);
  if (r->n_batches < 0)
    return xchg_errorf(err, XCHG_ENOTSUP, "random access needs the file format from a seekable input");
  if (i < 0 || i >= r->n_batches)
    return xchg_errorf(err, XCHG_EINVAL, "batch %lld of %lld", (long long)i, (long long)r->n_batches);
  xchg_status st = load_file_dictionaries(r, err);
  if (st != XCHG_OK) return st;
  ipc_message m;
  r->message_index = r->first_block_index + r->n_dict_blocks + i;
  if ((st = read_block(r, &r->batch_blocks[i], HEADER_RECORD_BATCH, &m, err)) != XCHG_OK) return st;
  report_message(r, &m);
  ipc_decode_ctx ctx = decode_ctx(r, &m);
  ipc_array *root = NULL;
  st = attach_body(r, &m, 0, err);
  if (st == XCHG_OK)
    st = ipc_decode_batch(&ctx, &m.header, &m.body, r->schema.root.children, r->schema.root.n_children,
                          0, &root, err);
  if (st == XCHG_OK) st = ipc_array_export(root, out, err);
  ipc_array_unref(root);
  message_clear(&m);
  return st;
}

xchg_status ipc_reader_next_array(xchg_ipc_reader *r, ipc_array **out, xchg_error *err) {
  *out = NULL;
  read_ahead(r);
  xchg_status st = ipc_readahead_take(&r->ahead, out, &r->deferred_error);
  if (st != XCHG_OK) r->deferred = st; /* it came before any planning error */
  if (*out) return XCHG_OK;
  st = r->deferred;
  if (st != XCHG_OK && err) *err = r->deferred_error;
  return st;
}

xchg_status xchg_ipc_reader_next(xchg_ipc_reader *r, struct ArrowArray *out, xchg_error *err) {
  ipc_array *a;
  memset(out, 0, sizeof *out);
  xchg_status st = ipc_reader_next_array(r, &a, err);
  if (st != XCHG_OK || !a) return st;
  st = ipc_array_export(a, out, &r->deferred_error);
  ipc_array_unref(a);
  if (st != XCHG_OK) {
    /* The batch is lost: the reader must not go on as if it had not been. */
    r->deferred = st;
    forget_read_ahead(r);
    if (err) *err = r->deferred_error;
  }
  return st;
}

const ipc_schema *ipc_reader_schema(const xchg_ipc_reader *r) { return &r->schema; }

static void collect_ids(const ipc_field *f, int64_t *ids, int64_t capacity, int64_t *n) {
  if (f->dict_encoded) {
    if (*n < capacity) ids[*n] = f->dict_id;
    ++*n;
  }
  for (int64_t i = 0; i < f->n_children; i++)
    if (!f->children[i].skip) collect_ids(&f->children[i], ids, capacity, n);
}

int64_t xchg_ipc_reader_dictionary_ids(const xchg_ipc_reader *r, int64_t *ids, int64_t capacity) {
  int64_t n = 0;
  for (int64_t i = 0; i < r->schema.root.n_children; i++)
    if (!r->schema.root.children[i].skip) collect_ids(&r->schema.root.children[i], ids, capacity, &n);
  return n;
}

xchg_status xchg_ipc_reader_peek(xchg_ipc_reader *r, xchg_batch_header *out, int *at_end,
                                 xchg_error *err) {
  memset(out, 0, sizeof *out);
  *at_end = 0;
  if (ipc_readahead_count(&r->ahead) > 0)
    return xchg_errorf(err, XCHG_EINVAL, "peek after batches were read ahead (use peek without a pool)");
  xchg_status st = r->deferred != XCHG_OK ? r->deferred : hold_next_batch(r, at_end, &r->deferred_error);
  if (st != XCHG_OK) {
    r->deferred = st; /* as with next: an error sticks */
    if (err) *err = r->deferred_error;
    return st;
  }
  if (*at_end) return XCHG_OK;
  const ipc_message *m = &r->held;
  free(r->held_metadata);
  r->held_metadata = message_metadata(m);
  out->message_index = m->index;
  out->offset = m->offset;
  out->body_bytes = m->body_length;
  out->custom_metadata = r->held_metadata;
  fb_i64(&m->header, 0, 0, &out->rows);
  ipc_batch_compression(&m->header, &out->compression, NULL);
  return XCHG_OK;
}

xchg_status xchg_ipc_reader_skip(xchg_ipc_reader *r, xchg_error *err) {
  if (!r->has_held) return xchg_errorf(err, XCHG_EINVAL, "skip without a peeked batch");
  xchg_status st = pass_body(r, &r->held, err);
  drop_held(r);
  return st;
}

int64_t xchg_ipc_reader_num_batches(const xchg_ipc_reader *r) { return r->n_batches; }

int64_t xchg_ipc_reader_stream_end(const xchg_ipc_reader *r) {
  return r->finished && r->format == XCHG_IPC_STREAM ? position(r) : -1;
}

void xchg_ipc_reader_free(xchg_ipc_reader *r) {
  if (!r) return;
  forget_read_ahead(r);
  drop_held(r);
  free(r->held_metadata);
  free(r->column_bytes);
  xchg_buf_unref(r->memory);
  xchg_source_free(r->src);
  ipc_schema_free(&r->schema);
  ipc_dictionaries_free(&r->dicts);
  free(r->batch_blocks);
  free(r->dict_blocks);
  free(r);
}

/* ---- ArrowArrayStream --------------------------------------------------- */

static xchg_status reader_schema(void *r, struct ArrowSchema *out, xchg_error *err) {
  return xchg_ipc_reader_schema(r, out, err);
}

static xchg_status reader_next(void *r, struct ArrowArray *out, xchg_error *err) {
  return xchg_ipc_reader_next(r, out, err);
}

static void reader_free(void *r) { xchg_ipc_reader_free(r); }

static const ipc_stream_ops reader_stream = {reader_schema, reader_next, reader_free};

xchg_status xchg_ipc_reader_to_stream(xchg_ipc_reader *r, struct ArrowArrayStream *out,
                                      xchg_error *err) {
  if (r == NULL || out == NULL)
    return xchg_errorf(err, XCHG_EINVAL, "xchg_ipc_reader_to_stream: the %s is NULL",
                       r == NULL ? "reader" : "stream to fill");
  return ipc_stream_export(&reader_stream, r, out, err);
}
