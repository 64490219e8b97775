/* reader.c — the IPC stream and file readers: framing, schema, dictionaries.
 *
 * Messages are read one at a time from the source: a 0xFFFFFFFF
 * continuation marker (absent in the pre-0.15 framing), an int32 metadata
 * length, the Message flatbuffer, then the body.  A stream is a schema
 * message followed by dictionary and record batch messages; the file
 * format wraps such a stream between "ARROW1" magics and adds a footer
 * listing where every dictionary and record batch message starts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/schema.h"
#include "xchg/ipc.h"

/* Slots of Message, DictionaryBatch and Footer (Message.fbs, File.fbs). */
enum { MSG_VERSION, MSG_HEADER_TYPE, MSG_HEADER, MSG_BODY_LENGTH, MSG_METADATA };
enum { DICTBATCH_ID, DICTBATCH_DATA, DICTBATCH_DELTA };
enum { FOOTER_VERSION, FOOTER_SCHEMA, FOOTER_DICTIONARIES, FOOTER_BATCHES, FOOTER_METADATA };
enum { HEADER_SCHEMA = 1, HEADER_DICTIONARY = 2, HEADER_RECORD_BATCH = 3 };

/* MetadataVersion V4, the oldest this reader accepts (Arrow 0.8, 2017). */
#define OLDEST_METADATA_VERSION 3
#define NEWEST_METADATA_VERSION 4
static const char FILE_MAGIC[6] = {'A', 'R', 'R', 'O', 'W', '1'};

typedef struct ipc_message {
  xchg_buf *metadata;
  fb_table header;
  int header_type;
  int version;
  int64_t body_length;
  xchg_buf *body;
  int64_t offset;       /* of the framing */
  int64_t body_offset;
} ipc_message;

/* A Block of the file footer: where one message starts. */
typedef struct file_block {
  int64_t offset;
  int32_t metadata_length;
  int64_t body_length;
} file_block;

struct xchg_ipc_reader {
  xchg_source *src;
  xchg_read_options opts;
  xchg_ipc_format format;
  ipc_schema schema;
  int metadata_version;
  ipc_dictionaries dicts;
  int64_t message_index;
  uint8_t peek[8];      /* bytes read to detect the format, not yet consumed */
  size_t peek_len, peek_pos;
  int finished;
  /* file format */
  file_block *batch_blocks, *dict_blocks;
  int64_t n_batches, n_dict_blocks, next_batch;
  int dicts_loaded;
  xchg_message_fn on_message;
  void *on_message_ctx;
  xchg_error last_error;  /* for ArrowArrayStream.get_last_error */
};

void xchg_read_options_init(xchg_read_options *opts) {
  opts->validation = XCHG_VALIDATE_FULL;
  opts->max_depth = 64;
  opts->max_fields = (int64_t)1 << 16;
  opts->max_buffer_bytes = (int64_t)1 << 34;
  opts->max_metadata_bytes = (int64_t)1 << 28;
}

/* ---- reading bytes -------------------------------------------------------- */

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

static int64_t position(const xchg_ipc_reader *r) {
  return (int64_t)xchg_source_position(r->src) - (int64_t)(r->peek_len - r->peek_pos);
}

/* The next n bytes as a buffer (zero-copy when the source is in memory). */
static xchg_status read_buffer(xchg_ipc_reader *r, size_t n, xchg_buf **out, xchg_error *err) {
  if (r->peek_pos == r->peek_len) return xchg_source_read_buf(r->src, n, out, err);
  xchg_buf *b = xchg_buf_alloc(n);
  if (!b) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", n);
  int64_t start = position(r);
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

static xchg_status seek(xchg_ipc_reader *r, int64_t offset, xchg_error *err) {
  r->peek_pos = r->peek_len;
  return xchg_source_seek(r->src, (uint64_t)offset, err);
}

/* ---- messages ------------------------------------------------------------- */

static void message_clear(ipc_message *m) {
  xchg_buf_unref(m->metadata);
  xchg_buf_unref(m->body);
  memset(m, 0, sizeof *m);
}

/* Reads the framing: sets *length, or *eos at an end-of-stream marker or
 * at a clean end of the input. */
static xchg_status read_prefix(xchg_ipc_reader *r, int32_t *length, int *eos, xchg_error *err) {
  uint8_t word[4];
  size_t got;
  int64_t at = position(r);
  xchg_status st = read_exact(r, word, 4, &got, err);
  if (st != XCHG_OK) return st;
  *eos = got == 0;
  if (got == 0) return XCHG_OK;
  if (got < 4)
    return xchg_errorf(err, XCHG_EIO, "input ends inside the framing of message %lld at byte %lld",
                       (long long)r->message_index, (long long)at);
  uint32_t value = fb_load_u32(word);
  if (value == 0xFFFFFFFFu) {
    if ((st = read_exact(r, word, 4, &got, err)) != XCHG_OK) return st;
    if (got < 4)
      return xchg_errorf(err, XCHG_EIO, "input ends inside the framing of message %lld at byte %lld",
                         (long long)r->message_index, (long long)at);
    value = fb_load_u32(word);
  }
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
  const uint8_t *meta = xchg_buf_data(m->metadata);
  if (fb_root(meta, xchg_buf_size(m->metadata), &msg) < 0 || fb_i16(&msg, MSG_VERSION, 0, &version) < 0 ||
      fb_u8(&msg, MSG_HEADER_TYPE, 0, &header_type) < 0 ||
      fb_i64(&msg, MSG_BODY_LENGTH, 0, &m->body_length) < 0 ||
      fb_table_field(&msg, MSG_HEADER, &m->header) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: invalid Message flatbuffer",
                       (long long)r->message_index, (long long)m->offset);
  m->version = version;
  m->header_type = header_type;
  if (version < OLDEST_METADATA_VERSION || version > NEWEST_METADATA_VERSION)
    return xchg_errorf(err, XCHG_ENOTSUP, "message %lld at byte %lld: metadata version V%d",
                       (long long)r->message_index, (long long)m->offset, version + 1);
  if (header_type < HEADER_SCHEMA || header_type > HEADER_RECORD_BATCH)
    return xchg_errorf(err, header_type <= 5 ? XCHG_ENOTSUP : XCHG_EFORMAT,
                       "message %lld at byte %lld: header type %d (tensors are not supported)",
                       (long long)r->message_index, (long long)m->offset, header_type);
  int64_t size = xchg_source_size(r->src);
  if (m->body_length < 0 || (size >= 0 && m->body_length > size - position(r)))
    return xchg_errorf(err, m->body_length < 0 ? XCHG_EFORMAT : XCHG_EIO,
                       "message %lld at byte %lld: body of %lld bytes %s",
                       (long long)r->message_index, (long long)m->offset, (long long)m->body_length,
                       m->body_length < 0 ? "is negative" : "runs past the end of the input");
  return XCHG_OK;
}

static void report_message(xchg_ipc_reader *r, const ipc_message *m, int64_t rows,
                           xchg_block_codec codec, int64_t dict_id, int is_delta) {
  if (!r->on_message) return;
  static const xchg_message_kind kinds[] = {0, XCHG_MESSAGE_SCHEMA, XCHG_MESSAGE_DICTIONARY,
                                            XCHG_MESSAGE_RECORD_BATCH};
  xchg_message_info info = {kinds[m->header_type], r->message_index, m->offset,
                            (int64_t)xchg_buf_size(m->metadata), m->body_length, rows, codec,
                            dict_id, is_delta, m->version + 1, NULL};
  fb_table msg;
  char *metadata = NULL;
  size_t metadata_size;
  if (fb_root(xchg_buf_data(m->metadata), xchg_buf_size(m->metadata), &msg) > 0 &&
      ipc_metadata_parse(&msg, MSG_METADATA, &metadata, &metadata_size, "message", NULL) == XCHG_OK)
    info.custom_metadata = metadata;
  r->on_message(r->on_message_ctx, &info);
  free(metadata);
}

/* Reads one message with its body; *eos at the end of the stream. */
static xchg_status read_message(xchg_ipc_reader *r, ipc_message *m, int *eos, xchg_error *err) {
  int32_t length;
  memset(m, 0, sizeof *m);
  m->offset = position(r);
  xchg_status st = read_prefix(r, &length, eos, err);
  if (st != XCHG_OK || *eos) return st;
  st = read_buffer(r, (size_t)length, &m->metadata, err);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "message %lld at byte %lld: metadata: ", (long long)r->message_index,
                      (long long)m->offset);
  } else if ((st = parse_message(r, m, err)) == XCHG_OK) {
    m->body_offset = position(r);
    st = read_buffer(r, (size_t)m->body_length, &m->body, err);
    if (st != XCHG_OK)
      xchg_error_prefix(err, "message %lld at byte %lld: body: ", (long long)r->message_index,
                        (long long)m->offset);
  }
  if (st != XCHG_OK) message_clear(m);
  return st;
}

static ipc_decode_ctx decode_ctx(xchg_ipc_reader *r, const ipc_message *m) {
  ipc_decode_ctx ctx = {&r->opts, r->schema.big_endian, m->version, r->message_index,
                        m->body_offset, ipc_dictionaries_lookup, &r->dicts};
  return ctx;
}

/* ---- dictionaries --------------------------------------------------------- */

static xchg_status read_dictionary(xchg_ipc_reader *r, const ipc_message *m, xchg_error *err) {
  int64_t id;
  uint8_t delta;
  fb_table data;
  if (fb_i64(&m->header, DICTBATCH_ID, 0, &id) < 0 || fb_u8(&m->header, DICTBATCH_DELTA, 0, &delta) < 0 ||
      fb_table_field(&m->header, DICTBATCH_DATA, &data) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: invalid DictionaryBatch",
                       (long long)r->message_index, (long long)m->offset);
  const ipc_field *field = ipc_dictionaries_field(&r->dicts, id);
  if (!field)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: dictionary id %lld is not "
                       "used by any field of the schema", (long long)r->message_index,
                       (long long)m->offset, (long long)id);
  int64_t rows = 0;
  xchg_block_codec codec = XCHG_BLOCK_NONE;
  fb_i64(&data, 0, 0, &rows);
  ipc_batch_compression(&data, &codec, NULL);
  report_message(r, m, rows, codec, id, delta != 0);
  ipc_decode_ctx ctx = decode_ctx(r, m);
  ipc_array *root;
  xchg_status st = ipc_decode_batch(&ctx, &data, m->body, field, 1, 1, &root, err);
  if (st != XCHG_OK) return st;
  if (!delta && r->format == XCHG_IPC_FILE && ipc_dictionaries_lookup(&r->dicts, id)) {
    ipc_array_unref(root);
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: the file format does not "
                       "allow replacing dictionary %lld", (long long)r->message_index,
                       (long long)m->offset, (long long)id);
  }
  st = ipc_dictionaries_update(&r->dicts, id, root->children[0], delta != 0, err);
  ipc_array_unref(root);
  if (st != XCHG_OK)
    xchg_error_prefix(err, "message %lld at byte %lld: ", (long long)r->message_index,
                      (long long)m->offset);
  return st;
}

/* ---- record batches -------------------------------------------------------- */

static xchg_status decode_record_batch(xchg_ipc_reader *r, const ipc_message *m,
                                       struct ArrowArray *out, xchg_error *err) {
  int64_t rows = 0;
  xchg_block_codec codec = XCHG_BLOCK_NONE;
  fb_i64(&m->header, 0, 0, &rows);
  ipc_batch_compression(&m->header, &codec, NULL);
  report_message(r, m, rows, codec, -1, 0);
  ipc_decode_ctx ctx = decode_ctx(r, m);
  ipc_array *root;
  xchg_status st = ipc_decode_batch(&ctx, &m->header, m->body, r->schema.root.children,
                                    r->schema.root.n_children, 0, &root, err);
  if (st != XCHG_OK) return st;
  st = ipc_array_export(root, out, err);
  ipc_array_unref(root);
  return st;
}

/* Stream format: reads messages until a record batch or the end. */
static xchg_status next_in_stream(xchg_ipc_reader *r, struct ArrowArray *out, xchg_error *err) {
  while (!r->finished) {
    ipc_message m;
    int eos;
    xchg_status st = read_message(r, &m, &eos, err);
    if (st != XCHG_OK) return st;
    if (eos) {
      r->finished = 1;
      break;
    }
    if (m.header_type == HEADER_RECORD_BATCH)
      st = decode_record_batch(r, &m, out, err);
    else if (m.header_type == HEADER_DICTIONARY)
      st = read_dictionary(r, &m, err);
    else
      st = xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: a second schema message",
                       (long long)r->message_index, (long long)m.offset);
    r->message_index++;
    int is_batch = m.header_type == HEADER_RECORD_BATCH;
    message_clear(&m);
    if (st != XCHG_OK || is_batch) return st;
  }
  memset(out, 0, sizeof *out);
  return XCHG_OK;
}

/* ---- schema ------------------------------------------------------------- */

static xchg_status add_dictionary_field(void *ctx, const ipc_field *field, xchg_error *err) {
  return ipc_dictionaries_declare(ctx, field, err);
}

static xchg_status set_schema(xchg_ipc_reader *r, const fb_table *schema, const char *where,
                              xchg_error *err) {
  xchg_status st = ipc_schema_parse(schema, &r->opts, &r->schema, err);
  if (st == XCHG_OK)
    st = ipc_schema_visit_dictionaries(&r->schema, add_dictionary_field, &r->dicts, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "%s: ", where);
  return st;
}

static xchg_status read_schema_message(xchg_ipc_reader *r, ipc_schema *into, xchg_error *err) {
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
  char where[64];
  snprintf(where, sizeof where, "schema message at byte %lld", (long long)m.offset);
  r->metadata_version = m.version;
  report_message(r, &m, 0, XCHG_BLOCK_NONE, -1, 0);
  if (into) {
    st = ipc_schema_parse(&m.header, &r->opts, into, err);
    if (st != XCHG_OK) xchg_error_prefix(err, "%s: ", where);
  } else {
    st = set_schema(r, &m.header, where, err);
  }
  r->message_index++;
  message_clear(&m);
  return st;
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

static xchg_status read_footer(xchg_ipc_reader *r, int64_t size, xchg_error *err) {
  uint8_t tail[10];
  size_t got;
  xchg_status st = seek(r, size - 10, err);
  if (st == XCHG_OK) st = read_exact(r, tail, 10, &got, err);
  if (st != XCHG_OK) return st;
  int32_t footer_len = (int32_t)fb_load_u32(tail);
  if (got < 10 || memcmp(tail + 4, FILE_MAGIC, 6) != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "file does not end with the ARROW1 magic (truncated?)");
  if (footer_len <= 0 || footer_len > size - 18)
    return xchg_errorf(err, XCHG_EFORMAT, "footer length %d at byte %lld does not fit the %lld-byte file",
                       footer_len, (long long)(size - 10), (long long)size);
  xchg_buf *footer;
  if ((st = seek(r, size - 10 - footer_len, err)) != XCHG_OK ||
      (st = read_buffer(r, (size_t)footer_len, &footer, err)) != XCHG_OK)
    return st;
  fb_table root, schema;
  if (fb_root(xchg_buf_data(footer), xchg_buf_size(footer), &root) < 0 ||
      fb_table_field(&root, FOOTER_SCHEMA, &schema) <= 0)
    st = xchg_errorf(err, XCHG_EFORMAT, "footer at byte %lld: invalid Footer flatbuffer",
                     (long long)(size - 10 - footer_len));
  if (st == XCHG_OK) st = set_schema(r, &schema, "footer schema", err);
  if (st == XCHG_OK) st = read_blocks(&root, FOOTER_DICTIONARIES, &r->dict_blocks, &r->n_dict_blocks, size, err);
  if (st == XCHG_OK) st = read_blocks(&root, FOOTER_BATCHES, &r->batch_blocks, &r->n_batches, size, err);
  xchg_buf_unref(footer);
  return st;
}

/* Reads the message a footer block points to, and checks it is of kind. */
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
    r->message_index = i + 1;
    xchg_status st = read_block(r, &r->dict_blocks[i], HEADER_DICTIONARY, &m, err);
    if (st == XCHG_OK) st = read_dictionary(r, &m, err);
    message_clear(&m);
    if (st != XCHG_OK) return st;
  }
  r->dicts_loaded = 1;
  return XCHG_OK;
}

static xchg_status open_file_format(xchg_ipc_reader *r, xchg_error *err) {
  int64_t size = xchg_source_size(r->src);
  if (size < 0) { /* not seekable: read the embedded stream */
    r->format = XCHG_IPC_FILE;
    r->n_batches = -1;
    return read_schema_message(r, NULL, err);
  }
  if (size < 18) return xchg_errorf(err, XCHG_EIO, "a %lld-byte file is too short for the file format", (long long)size);
  xchg_status st = read_footer(r, size, err);
  if (st != XCHG_OK) return st;
  ipc_schema stream_schema;
  if ((st = seek(r, 8, err)) != XCHG_OK || (st = read_schema_message(r, &stream_schema, err)) != XCHG_OK)
    return st;
  if (!ipc_schema_equal(&r->schema, &stream_schema, err)) {
    xchg_error_prefix(err, "footer schema and stream schema differ: ");
    st = XCHG_EFORMAT;
  }
  ipc_schema_free(&stream_schema);
  return st;
}

/* ---- public API ------------------------------------------------------------ */

xchg_status xchg_ipc_reader_open(xchg_source *src, const xchg_read_options *opts,
                                 xchg_ipc_reader **out, xchg_error *err) {
  *out = NULL;
  xchg_ipc_reader *r = calloc(1, sizeof *r);
  if (!r) {
    xchg_source_close(src);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  r->src = src;
  if (opts) r->opts = *opts; else xchg_read_options_init(&r->opts);
  size_t got;
  xchg_status st = xchg_source_read(src, r->peek, 8, &got, err);
  r->peek_len = got;
  if (st == XCHG_OK && got == 0) st = xchg_errorf(err, XCHG_EIO, "the input is empty");
  if (st == XCHG_OK) {
    if (got == 8 && memcmp(r->peek, FILE_MAGIC, 6) == 0) {
      r->peek_pos = 8;
      r->format = XCHG_IPC_FILE;
      st = open_file_format(r, err);
    } else {
      r->format = XCHG_IPC_STREAM;
      r->n_batches = -1;
      st = read_schema_message(r, NULL, err);
    }
  }
  if (st != XCHG_OK) {
    xchg_ipc_reader_close(r);
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
                                        void (*release)(void *ctx, const void *data, size_t size),
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
  r->message_index = 1 + r->n_dict_blocks + i;
  st = read_block(r, &r->batch_blocks[i], HEADER_RECORD_BATCH, &m, err);
  if (st == XCHG_OK) st = decode_record_batch(r, &m, out, err);
  message_clear(&m);
  return st;
}

xchg_status xchg_ipc_reader_next(xchg_ipc_reader *r, struct ArrowArray *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  if (r->format == XCHG_IPC_STREAM || r->n_batches < 0) return next_in_stream(r, out, err);
  if (r->next_batch >= r->n_batches) return XCHG_OK;
  xchg_status st = xchg_ipc_reader_read_batch(r, r->next_batch, out, err);
  if (st == XCHG_OK) r->next_batch++;
  return st;
}

int64_t xchg_ipc_reader_num_batches(const xchg_ipc_reader *r) { return r->n_batches; }

void xchg_ipc_reader_close(xchg_ipc_reader *r) {
  if (!r) return;
  xchg_source_close(r->src);
  ipc_schema_free(&r->schema);
  ipc_dictionaries_free(&r->dicts);
  free(r->batch_blocks);
  free(r->dict_blocks);
  free(r);
}

/* ---- ArrowArrayStream --------------------------------------------------- */

static int stream_errno(xchg_status st) {
  switch (st) {
    case XCHG_OK: return 0;
    case XCHG_ENOMEM: return ENOMEM;
    case XCHG_EINVAL: return EINVAL;
    case XCHG_ENOTSUP: return ENOTSUP;
    case XCHG_ECANCELLED: return ECANCELED;
    default: return EIO;
  }
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  xchg_ipc_reader *r = s->private_data;
  return stream_errno(xchg_ipc_reader_schema(r, out, &r->last_error));
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  xchg_ipc_reader *r = s->private_data;
  return stream_errno(xchg_ipc_reader_next(r, out, &r->last_error));
}

static const char *stream_last_error(struct ArrowArrayStream *s) {
  xchg_ipc_reader *r = s->private_data;
  return r->last_error.message[0] ? r->last_error.message : NULL;
}

static void stream_release(struct ArrowArrayStream *s) {
  xchg_ipc_reader_close(s->private_data);
  s->release = NULL;
}

xchg_status xchg_ipc_reader_to_stream(xchg_ipc_reader *r, struct ArrowArrayStream *out,
                                      xchg_error *err) {
  (void)err;
  r->last_error.message[0] = '\0';
  out->get_schema = stream_get_schema;
  out->get_next = stream_get_next;
  out->get_last_error = stream_last_error;
  out->release = stream_release;
  out->private_data = r;
  return XCHG_OK;
}
