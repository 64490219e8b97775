/* reader.c — the IPC stream and file readers: framing, schema, dictionaries.
 *
 * Messages are read one at a time: a 0xFFFFFFFF continuation marker (absent
 * in the pre-0.15 framing), an int32 metadata length, the Message
 * flatbuffer, then the body.  A stream is a schema message followed by
 * dictionary and record batch messages; the file format wraps such a stream
 * between "ARROW1" magics and adds a footer that holds the schema and says
 * where every dictionary and record batch message starts (Arrow JS leaves
 * the schema message out of the stream: see reader_check_body_schema).
 * This file reads messages and the stream format and serves the API; the
 * file format's footer and end are in reader_file.c.
 *
 * A message's body is attached only when it is decoded: a slice of the
 * input when it is in memory, buffer by buffer from a seekable file when
 * columns are deselected, read whole otherwise, or skipped unread. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "base/cpu.h"
#include "io/source_impl.h"
#include "ipc/array_stream.h"
#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "ipc/readahead.h"
#include "ipc/reader_internal.h"
#include "ipc/reader_state.h"
#include "ipc/schema.h"
#include "xchg/ipc.h"

void xchg_ipc_read_options_init(xchg_ipc_read_options *opts) {
  if (!opts) return; /* nothing to fill */
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

xchg_status ipc_read_options_check(const xchg_ipc_read_options *o, const char *who,
                                   xchg_error *err) {
  if (o->validation != XCHG_VALIDATE_FULL && o->validation != XCHG_VALIDATE_BOUNDS)
    return xchg_errorf(err, XCHG_EINVAL,
                       "%s: validation %d is neither XCHG_VALIDATE_FULL nor "
                       "XCHG_VALIDATE_BOUNDS",
                       who, (int)o->validation);
  /* A negative cap would pass every comparison the wrong way round and
   * surface as an odd error much later ("nests deeper than -1 levels"). */
  const struct {
    const char *name;
    int64_t value;
  } caps[] = {{"max_depth", o->max_depth},
              {"max_fields", o->max_fields},
              {"max_buffer_bytes", o->max_buffer_bytes},
              {"max_metadata_bytes", o->max_metadata_bytes},
              {"max_batch_bytes", o->max_batch_bytes},
              {"max_dictionary_bytes", o->max_dictionary_bytes},
              {"task_bytes", o->task_bytes}};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
    if (caps[i].value < 0)
      return xchg_errorf(err, XCHG_EINVAL, "%s: %s is negative (%lld)", who, caps[i].name,
                         (long long)caps[i].value);
  return XCHG_OK;
}

/* ---- reading bytes -------------------------------------------------------- */

int64_t reader_position(const xchg_ipc_reader *r) {
  return (int64_t)xchg_source_position(r->src) - (int64_t)(r->peek_len - r->peek_pos);
}

xchg_status reader_read_exact(xchg_ipc_reader *r, void *dst, size_t n, size_t *got,
                              xchg_error *err) {
  size_t from_peek = r->peek_len - r->peek_pos;
  if (from_peek > n) from_peek = n;
  memcpy(dst, r->peek + r->peek_pos, from_peek);
  r->peek_pos += from_peek;
  size_t more = 0;
  xchg_status st = XCHG_OK;
  if (from_peek < n)
    st = xchg_source_read(r->src, (uint8_t *)dst + from_peek, n - from_peek, &more, err);
  *got = from_peek + more;
  return st;
}

/* The next n bytes as a buffer (zero-copy when the source is in memory).
 * Bytes left over from detecting the format come first; the rest is read
 * with xchg_source_read_buf before the n bytes are allocated, so that a
 * length on the wire is held to what the input has (known size, memory
 * included) or grows its buffer as the bytes arrive (unknown size), as
 * any other read: a message in the pre-0.15 framing, whose metadata
 * starts inside those bytes, cannot make the reader allocate the 256 MiB
 * it claims from a few bytes of input. */
xchg_status reader_read_buffer(xchg_ipc_reader *r, size_t n, xchg_buf **out, xchg_error *err) {
  if (r->peek_pos == r->peek_len) return xchg_source_read_buf(r->src, n, out, err);
  const uint8_t *peeked = r->peek + r->peek_pos;
  size_t from_peek = r->peek_len - r->peek_pos;
  if (from_peek > n) from_peek = n;
  r->peek_pos += from_peek;
  xchg_buf *rest = NULL;
  if (from_peek < n) {
    xchg_status st = xchg_source_read_buf(r->src, n - from_peek, &rest, err);
    if (st != XCHG_OK) return st;
  }
  xchg_buf *b = xchg_buf_alloc(n);
  if (!b) {
    xchg_buf_unref(rest);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", n);
  }
  memcpy(xchg_buf_mutable_data(b), peeked, from_peek);
  if (rest) memcpy(xchg_buf_mutable_data(b) + from_peek, xchg_buf_data(rest), n - from_peek);
  xchg_buf_unref(rest);
  *out = b;
  return XCHG_OK;
}

int reader_seekable(const xchg_ipc_reader *r) { return xchg_source_size(r->src) >= 0; }

xchg_status reader_seek(xchg_ipc_reader *r, int64_t offset, xchg_error *err) {
  r->peek_pos = r->peek_len;
  return xchg_source_seek(r->src, (uint64_t)offset, err);
}

/* Moves to byte `offset`, forward only when the input cannot seek. */
static xchg_status move_to(xchg_ipc_reader *r, int64_t offset, xchg_error *err) {
  int64_t here = reader_position(r);
  if (here == offset) return XCHG_OK;
  if (reader_seekable(r)) return reader_seek(r, offset, err);
  while (r->peek_pos < r->peek_len && here < offset) {
    r->peek_pos++;
    here++;
  }
  return xchg_source_skip(r->src, (uint64_t)(offset - here), err);
}

/* What prefetch_next_message asks for: the framing and metadata of a
 * batch of a few columns. */
#define NEXT_MESSAGE_BYTES 512

/* ---- messages ------------------------------------------------------------- */

void reader_message_clear(ipc_message *m) {
  xchg_buf_unref(m->metadata);
  xchg_buf_unref(m->body.mem);
  memset(m, 0, sizeof *m);
}

/* The input ended before a message did, or where one would begin (err
 * says where): a known fact, not a guess, so the stream is cut short, and
 * so is a file read in order, whose footer follows its messages; a file
 * read by its footer says it is cut short itself, with its size
 * (file_cut_short in reader_file.c). */
static xchg_status input_cut_short(const xchg_ipc_reader *r, xchg_error *err) {
  if (r->format != XCHG_IPC_FILE)
    xchg_error_prefix(err, "the stream is cut short: ");
  else if (!reader_seekable(r))
    xchg_error_prefix(err, "the file is cut short: ");
  return XCHG_EIO;
}

/* st of a read of the input: XCHG_EIO because the input ended is a cut
 * (input_cut_short); a read that failed is not. */
static xchg_status read_cut_short(const xchg_ipc_reader *r, xchg_status st, xchg_error *err) {
  return st == XCHG_EIO && xchg_source_ran_out(r->src) ? input_cut_short(r, err) : st;
}

/* The input ends at byte `at`, where message r->message_index or the
 * end-of-stream marker would begin: a stream is whole only with its marker
 * (allow_missing_eos), so it is cut short there. */
static xchg_status ends_before_message(const xchg_ipc_reader *r, int64_t at, xchg_error *err) {
  if (r->format == XCHG_IPC_FILE && at == IPC_FILE_HEAD) /* "message 0" would mean nothing */
    xchg_errorf(err, XCHG_EIO,
                "the input ends at byte %lld, right after the ARROW1 magic and its padding, "
                "before the file's first message",
                (long long)at);
  else
    xchg_errorf(err, XCHG_EIO, IPC_ENDS_WITHOUT_MARKER, (long long)at, (long long)r->message_index);
  return input_cut_short(r, err);
}

/* Reads the prefix (framing.h): sets *length, or *eos at an end-of-stream
 * marker or at a clean end of the input. */
static xchg_status read_prefix(xchg_ipc_reader *r, int32_t *length, int *eos, xchg_error *err) {
  int64_t at = reader_position(r);
  uint8_t prefix[8];
  size_t got;
  xchg_status st = reader_read_exact(r, prefix, 4, &got, err);
  if (st != XCHG_OK) return st;
  *eos = got == 0;
  /* A file's footer follows its marker, so a file that ends here is cut
   * short whatever allow_missing_eos says: taken for a marker, the end
   * would be blamed on the footer "after the end-of-stream marker". */
  if (got == 0 && (!r->opts.allow_missing_eos || r->format == XCHG_IPC_FILE))
    return ends_before_message(r, at, err);
  if (got == 0) return XCHG_OK;
  if (got == 4 && ipc_prefix_size(prefix) == 8 &&
      (st = reader_read_exact(r, prefix + 4, 4, &got, err)) != XCHG_OK)
    return st;
  if (got < 4) {
    xchg_errorf(err, XCHG_EIO, "input ends inside the framing of message %lld at byte %lld",
                (long long)r->message_index, (long long)at);
    return input_cut_short(r, err);
  }
  st = ipc_prefix_decode(prefix, r->message_index, at, r->opts.max_metadata_bytes, length, err);
  *eos = st == XCHG_OK && *length == 0;
  return st;
}

/* Its XCHG_EIO is a message longer than the input of known size. */
static xchg_status parse_message(xchg_ipc_reader *r, ipc_message *m, xchg_error *err) {
  int64_t size = xchg_source_size(r->src);
  xchg_status st = ipc_message_decode(m, size >= 0 ? size - m->body_offset : -1, err);
  return st == XCHG_EIO ? input_cut_short(r, err) : st;
}

/* Asks memory for the next message's framing and the start of its
 * metadata while this one is decoded.  Where it starts only this one's
 * metadata says, so that reading small batches one after another is a
 * chain of cold loads, each waited for in turn. */
static void prefetch_next_message(const xchg_ipc_reader *r, const ipc_message *m) {
  if (!r->memory) return;
  const uint8_t *data = xchg_buf_data(r->memory);
  size_t size = xchg_buf_size(r->memory);
  if (m->body_offset < 0 || m->body_length < 0 || (uint64_t)m->body_offset > size ||
      (uint64_t)m->body_length > size - (size_t)m->body_offset)
    return;
  size_t at = (size_t)(m->body_offset + m->body_length);
  cpu_prefetch(data + at, size - at < NEXT_MESSAGE_BYTES ? size - at : NEXT_MESSAGE_BYTES);
}

/* Reads the framing and metadata of the message at the current position;
 * the body is left where it is. */
xchg_status reader_read_message(xchg_ipc_reader *r, ipc_message *m, int *eos, xchg_error *err) {
  int32_t length = 0;
  memset(m, 0, sizeof *m);
  m->index = r->message_index;
  m->offset = reader_position(r);
  xchg_status st = read_prefix(r, &length, eos, err);
  if (st != XCHG_OK || *eos) return st;
  st = reader_read_buffer(r, (size_t)length, &m->metadata, err);
  if (st != XCHG_OK) {
    xchg_error_prefix(err, "message %lld at byte %lld: metadata: ", (long long)m->index,
                      (long long)m->offset);
    return read_cut_short(r, st, err);
  }
  m->body_offset = reader_position(r);
  st = parse_message(r, m, err);
  if (st != XCHG_OK)
    reader_message_clear(m);
  else
    prefetch_next_message(r, m);
  return st;
}

/* st of reading or passing m's body, named: "message N at byte B: body:
 * ...", a cut said as one. */
static xchg_status body_error(const xchg_ipc_reader *r, const ipc_message *m, xchg_status st,
                              xchg_error *err) {
  xchg_error_prefix(err, "message %lld at byte %lld: body: ", (long long)m->index,
                    (long long)m->offset);
  return read_cut_short(r, st, err);
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
  if (!whole && r->selective && reader_seekable(r)) {
    b->src = r->src;
    return XCHG_OK;
  }
  xchg_status st = move_to(r, m->body_offset, err);
  if (st == XCHG_OK) st = reader_read_buffer(r, (size_t)m->body_length, &b->mem, err);
  return st == XCHG_OK ? XCHG_OK : body_error(r, m, st, err);
}

/* Leaves the input just after the message's body, read or not. */
static xchg_status pass_body(xchg_ipc_reader *r, const ipc_message *m, xchg_error *err) {
  if (r->format == XCHG_IPC_FILE && r->n_batches >= 0) return XCHG_OK;
  xchg_status st = move_to(r, m->body_offset + m->body_length, err);
  return st == XCHG_OK ? XCHG_OK : body_error(r, m, st, err);
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
  if (r->column_bytes == NULL && n > 0)
    r->column_bytes = malloc(2 * (size_t)n * sizeof *r->column_bytes);
  if (r->column_bytes == NULL) return;
  ipc_body body = {NULL, NULL, m->body_offset, m->body_length, NULL};
  if (r->memory)
    body.mem = xchg_buf_slice(r->memory, (size_t)m->body_offset, (size_t)m->body_length);
  ipc_decode_ctx ctx = decode_ctx(r, m);
  xchg_error ignored;
  if ((body.mem != NULL || !r->memory) &&
      ipc_column_bytes(&ctx, batch, &body, r->schema.root.children, n, r->column_bytes,
                       r->column_bytes + n, &ignored) == XCHG_OK) {
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
  xchg_message_info info = {kinds[m->header_type],
                            m->index,
                            m->offset,
                            (int64_t)xchg_buf_size(m->metadata),
                            m->body_length,
                            0,
                            XCHG_BLOCK_NONE,
                            -1,
                            0,
                            m->version + 1,
                            NULL,
                            0,
                            NULL,
                            NULL};
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
  ipc_decode_ctx ctx = {&r->opts,
                        r->schema.big_endian,
                        m->version,
                        m->index,
                        m->offset,
                        ipc_dictionaries_lookup,
                        &r->dicts,
                        r->on_decompress,
                        r->on_decompress_ctx};
  return ctx;
}

/* ---- dictionaries --------------------------------------------------------- */

static xchg_status read_dictionary(xchg_ipc_reader *r, ipc_message *m, xchg_error *err) {
  ipc_dictionary_batch d;
  xchg_status st = ipc_dictionary_batch_read(&r->dicts, &m->header, m->index, m->offset, &d, err);
  if (st != XCHG_OK || !ipc_dictionaries_used(&r->dicts, d.id))
    return st; /* no selected column needs it */
  if (!d.delta && r->format == XCHG_IPC_FILE && ipc_dictionaries_lookup(&r->dicts, d.id))
    return xchg_errorf(err, XCHG_EFORMAT,
                       "message %lld at byte %lld: the file format does not "
                       "allow replacing dictionary %lld",
                       (long long)m->index, (long long)m->offset, (long long)d.id);
  if ((st = attach_body(r, m, 0, err)) != XCHG_OK) return st;
  ipc_decode_ctx ctx = decode_ctx(r, m);
  return ipc_dictionary_batch_apply(&r->dicts, &d, &ctx, &m->body, r->opts.max_dictionary_bytes,
                                    m->index, m->offset, err);
}

/* ---- the sequence of messages ------------------------------------------ */

/* Reads the message of footer block i (of the dictionaries or the record
 * batches: kind), which must be one of that kind whose lengths are the
 * block's. */
static xchg_status read_block(xchg_ipc_reader *r, const file_block *b, int64_t i, int kind,
                              ipc_message *m, xchg_error *err) {
  int eos;
  xchg_status st = reader_seek(r, b->offset, err);
  if (st == XCHG_OK) st = reader_read_message(r, m, &eos, err);
  if (st != XCHG_OK) return st;
  if (eos || m->header_type != kind) {
    if (!eos) reader_message_clear(m);
    const char *name = kind == HEADER_DICTIONARY ? "dictionary" : "record batch";
    return xchg_errorf(err, XCHG_EFORMAT, "footer: %s block %lld at byte %lld is not a %s message",
                       name, (long long)i, (long long)b->offset, name);
  }
  if ((st = reader_check_block(b, i, m, err)) != XCHG_OK) reader_message_clear(m);
  return st;
}

static xchg_status load_file_dictionaries(xchg_ipc_reader *r, xchg_error *err) {
  for (int64_t i = 0; i < r->n_dict_blocks && !r->dicts_loaded; i++) {
    ipc_message m;
    r->message_index = r->first_block_index + i;
    xchg_status st = read_block(r, &r->dict_blocks[i], i, HEADER_DICTIONARY, &m, err);
    if (st == XCHG_OK) {
      report_message(r, &m);
      st = read_dictionary(r, &m, err);
    }
    reader_message_clear(&m);
    if (st != XCHG_OK) return st;
  }
  r->dicts_loaded = 1;
  return XCHG_OK;
}

/* The next message from a stream (or an unseekable file). */
static xchg_status next_stream_message(xchg_ipc_reader *r, ipc_message *m, int *eos,
                                       xchg_error *err) {
  xchg_status st = reader_read_message(r, m, eos, err);
  if (st != XCHG_OK || *eos) return st;
  r->message_index++;
  if (m->header_type == HEADER_SCHEMA) {
    int64_t at = m->offset;
    reader_message_clear(m);
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: " IPC_SECOND_SCHEMA,
                       (long long)r->message_index - 1, (long long)at);
  }
  return XCHG_OK;
}

/* At the end of a stream (read in order): a file's footer and closing magic
 * are read and checked, then a codec stream reads and verifies the rest of
 * its frame, the trailer after the last data byte, which nothing would read
 * otherwise, so that a cut there is an error.  Bytes after the frame stay
 * unread. */
static xchg_status finish_source(xchg_ipc_reader *r, xchg_error *err) {
  /* Only a file read in order gets here: from a seekable input the file
   * reader ends at its last footer block, without reading the stream's end. */
  xchg_status st = r->format == XCHG_IPC_FILE ? reader_check_file_end(r, err) : XCHG_OK;
  if (st != XCHG_OK) return st;
  int64_t at = reader_position(r);
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
    if ((st = read_block(r, &r->batch_blocks[r->next_batch], r->next_batch, HEADER_RECORD_BATCH, m,
                         err)) != XCHG_OK)
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
    if (r->format == XCHG_IPC_FILE && (st = reader_note_message(r, m, err)) != XCHG_OK) {
      reader_message_clear(m);
      return st;
    }
    report_message(r, m);
    if (m->header_type == HEADER_RECORD_BATCH) {
      r->has_held = 1;
      return XCHG_OK;
    }
    st = read_dictionary(r, m, err);
    if (st == XCHG_OK) st = pass_body(r, m, err);
    reader_message_clear(m);
    if (st != XCHG_OK) return st;
  }
}

static void drop_held(xchg_ipc_reader *r) {
  reader_message_clear(&r->held);
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

xchg_status reader_set_schema(xchg_ipc_reader *r, const fb_table *schema, const char *where,
                              xchg_error *err) {
  xchg_status st = ipc_schema_parse(schema, &r->opts, &r->schema, err);
  if (st == XCHG_OK)
    st = ipc_schema_visit_dictionaries(&r->schema, 0, add_dictionary_field, &r->dicts, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "%s: ", where);
  return st;
}

/* Takes the schema message *m (and clears it): into r's schema or (into
 * != NULL) elsewhere. */
xchg_status reader_take_schema_message(xchg_ipc_reader *r, ipc_message *m, ipc_schema *into,
                                       xchg_error *err) {
  char where[64];
  snprintf(where, sizeof where, "schema message at byte %lld", (long long)m->offset);
  report_message(r, m);
  xchg_status st;
  if (into) {
    st = ipc_schema_parse(&m->header, &r->opts, into, err);
    if (st != XCHG_OK) xchg_error_prefix(err, "%s: ", where);
  } else {
    st = reader_set_schema(r, &m->header, where, err);
  }
  if (st == XCHG_OK) st = pass_body(r, m, err);
  r->message_index = 1;
  reader_message_clear(m);
  return st;
}

/* ---- public API ------------------------------------------------------------ */

xchg_status xchg_ipc_reader_open(xchg_source *src, const xchg_ipc_read_options *opts,
                                 xchg_ipc_reader **out, xchg_error *err) {
  if (out) *out = NULL;
  if (!src || !out) {
    xchg_source_free(src); /* taken over, as on any failure */
    return base_null_argument("xchg_ipc_reader_open", !src ? "the source" : "out", err);
  }
  xchg_ipc_read_options defaults;
  if (!opts) xchg_ipc_read_options_init(&defaults);
  xchg_status st = ipc_read_options_check(opts ? opts : &defaults, "xchg_ipc_reader_open", err);
  xchg_ipc_reader *r = st == XCHG_OK ? calloc(1, sizeof *r) : NULL;
  if (!r) {
    xchg_source_free(src);
    return st != XCHG_OK ? st : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  r->src = src;
  r->memory = xchg_source_memory(src);
  r->file_end = -1;
  r->opts = opts ? *opts : defaults;
  ipc_readahead_init(&r->ahead, &r->opts, &r->schema.root);
  r->on_message = r->opts.on_message;
  r->on_message_ctx = r->opts.on_message_ctx;
  size_t got;
  st = xchg_source_read(src, r->peek, 8, &got, err);
  r->peek_len = got;
  if (st == XCHG_OK) st = reader_check_arrow_start(r, err);
  if (st == XCHG_OK) {
    if (got >= IPC_MAGIC_SIZE && got < IPC_FILE_HEAD &&
        memcmp(r->peek, IPC_MAGIC, IPC_MAGIC_SIZE) == 0) {
      /* The file magic, cut in its padding: a cut file, as the magic alone
       * is, not bytes without a magic. */
      st = xchg_errorf(err, XCHG_EIO,
                       "the file is cut short: the input ends at byte %zu, inside the padding "
                       "after the ARROW1 magic",
                       got);
    } else if (got == IPC_FILE_HEAD && memcmp(r->peek, IPC_MAGIC, IPC_MAGIC_SIZE) == 0) {
      r->peek_pos = 8;
      r->format = XCHG_IPC_FILE;
      st = reader_open_file_format(r, err);
    } else {
      r->format = XCHG_IPC_STREAM;
      r->n_batches = -1;
      st = reader_open_stream_format(r, err);
    }
  }
  if (st != XCHG_OK) {
    xchg_ipc_reader_free(r);
    return st;
  }
  *out = r;
  return XCHG_OK;
}

xchg_status xchg_ipc_reader_open_file(const char *path, const xchg_ipc_read_options *opts,
                                      xchg_ipc_reader **out, xchg_error *err) {
  xchg_source *src;
  if (!out) return base_null_argument("xchg_ipc_reader_open_file", "out", err);
  *out = NULL;
  xchg_status st = xchg_source_open_file(path, XCHG_FILE_MMAP, &src, err);
  return st == XCHG_OK ? xchg_ipc_reader_open(src, opts, out, err) : st;
}

/* The caller's release of xchg_ipc_reader_open_memory, run only once the
 * reader opened: a failed open closes its source, and the memory then stays
 * the caller's, as after any failed constructor. */
typedef struct memory_owner {
  xchg_release_fn release;
  void *ctx;
  int opened;
} memory_owner;

static void release_owned_memory(void *ctx, const void *data, size_t size) {
  memory_owner *owner = ctx;
  if (owner->opened) owner->release(owner->ctx, data, size);
  free(owner);
}

xchg_status xchg_ipc_reader_open_memory(const void *data, size_t size, xchg_release_fn release,
                                        void *release_ctx, const xchg_ipc_read_options *opts,
                                        xchg_ipc_reader **out, xchg_error *err) {
  xchg_source *src;
  if (!out) return base_null_argument("xchg_ipc_reader_open_memory", "out", err);
  *out = NULL;
  memory_owner *owner = release ? malloc(sizeof *owner) : NULL;
  if (release && !owner) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (owner) *owner = (memory_owner){release, release_ctx, 0};
  xchg_status st =
      xchg_source_from_memory(data, size, owner ? release_owned_memory : NULL, owner, &src, err);
  if (st != XCHG_OK) {
    free(owner);
    return st;
  }
  /* On failure the source is gone, and owner with it. */
  st = xchg_ipc_reader_open(src, opts, out, err);
  if (st == XCHG_OK && owner) owner->opened = 1;
  return st;
}

xchg_ipc_format xchg_ipc_reader_format(const xchg_ipc_reader *r) {
  return r ? r->format : XCHG_IPC_STREAM;
}

void xchg_ipc_reader_on_message(xchg_ipc_reader *r, xchg_message_fn fn, void *ctx) {
  if (!r) return;
  r->on_message = fn;
  r->on_message_ctx = ctx;
}

void xchg_ipc_reader_on_decompress(xchg_ipc_reader *r, xchg_decompress_fn fn, void *ctx) {
  if (!r) return;
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
  return xchg_errorf(err, XCHG_EINVAL,
                     "select after batches were read ahead (select before reading, "
                     "or read without a pool)");
}

/* A selection is n entries at list: a negative n, or a NULL list of
 * entries, selects nothing the caller meant (before, n < 0 was taken as
 * no column at all). */
static xchg_status check_selection(const char *who, const xchg_ipc_reader *r, const void *list,
                                   int64_t n, xchg_error *err) {
  if (!r) return base_null_argument(who, "the reader", err);
  if (n < 0) return xchg_errorf(err, XCHG_EINVAL, "%s: n is negative (%lld)", who, (long long)n);
  if (n > 0 && !list)
    return xchg_errorf(err, XCHG_EINVAL, "%s: %lld columns at NULL", who, (long long)n);
  return XCHG_OK;
}

xchg_status xchg_ipc_reader_select(xchg_ipc_reader *r, const char *const *paths, int64_t n,
                                   xchg_error *err) {
  xchg_status st = check_selection("xchg_ipc_reader_select", r, paths, n, err);
  for (int64_t i = 0; st == XCHG_OK && i < n; i++)
    if (!paths[i])
      st = xchg_errorf(err, XCHG_EINVAL, "xchg_ipc_reader_select: path %lld is NULL", (long long)i);
  if (st == XCHG_OK) st = check_nothing_read_ahead(r, err);
  if (st == XCHG_OK) st = ipc_schema_select_paths(&r->schema, paths, n, err);
  return st == XCHG_OK ? after_select(r, err) : st;
}

xchg_status xchg_ipc_reader_select_indices(xchg_ipc_reader *r, const int64_t *indices, int64_t n,
                                           xchg_error *err) {
  xchg_status st = check_selection("xchg_ipc_reader_select_indices", r, indices, n, err);
  if (st == XCHG_OK) st = check_nothing_read_ahead(r, err);
  if (st == XCHG_OK) st = ipc_schema_select_indices(&r->schema, indices, n, err);
  return st == XCHG_OK ? after_select(r, err) : st;
}

xchg_status xchg_ipc_reader_schema(const xchg_ipc_reader *r, struct ArrowSchema *out,
                                   xchg_error *err) {
  if (!r || !out) {
    if (out) memset(out, 0, sizeof *out);
    return base_null_argument("xchg_ipc_reader_schema", !r ? "the reader" : "out", err);
  }
  return ipc_schema_export(&r->schema, out, err);
}

xchg_status xchg_ipc_reader_read_batch(xchg_ipc_reader *r, int64_t i, struct ArrowArray *out,
                                       xchg_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!r || !out)
    return base_null_argument("xchg_ipc_reader_read_batch", !r ? "the reader" : "out", err);
  if (r->n_batches < 0)
    return xchg_errorf(err, XCHG_ENOTSUP,
                       "random access needs the file format from a seekable input");
  if (i < 0 || i >= r->n_batches)
    return xchg_errorf(err, XCHG_EINVAL, "batch %lld of %lld", (long long)i,
                       (long long)r->n_batches);
  xchg_status st = load_file_dictionaries(r, err);
  if (st != XCHG_OK) return st;
  ipc_message m;
  r->message_index = r->first_block_index + r->n_dict_blocks + i;
  if ((st = read_block(r, &r->batch_blocks[i], i, HEADER_RECORD_BATCH, &m, err)) != XCHG_OK)
    return st;
  report_message(r, &m);
  ipc_decode_ctx ctx = decode_ctx(r, &m);
  ipc_array *root = NULL;
  st = attach_body(r, &m, 0, err);
  if (st == XCHG_OK)
    st = ipc_decode_batch(&ctx, &m.header, &m.body, r->schema.root.children,
                          r->schema.root.n_children, 0, &root, err);
  if (st == XCHG_OK) st = ipc_array_export(root, out, err);
  ipc_array_unref(root);
  reader_message_clear(&m);
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
  if (out) memset(out, 0, sizeof *out);
  if (!r || !out) return base_null_argument("xchg_ipc_reader_next", !r ? "the reader" : "out", err);
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

int64_t xchg_ipc_reader_batch_message(const xchg_ipc_reader *r, int64_t *offset) {
  if (offset) *offset = r ? r->ahead.taken_offset : -1;
  return r ? r->ahead.taken_message : -1;
}

const ipc_schema *ipc_reader_schema(const xchg_ipc_reader *r) { return &r->schema; }

int64_t xchg_ipc_reader_dictionary_ids(const xchg_ipc_reader *r, int64_t *ids, int64_t capacity) {
  return r ? ipc_schema_dictionary_ids(&r->schema, ids, capacity) : 0;
}

xchg_status xchg_ipc_reader_peek(xchg_ipc_reader *r, xchg_batch_header *out, int *at_end,
                                 xchg_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (at_end) *at_end = 0;
  if (!r || !out || !at_end)
    return base_null_argument("xchg_ipc_reader_peek",
                              !r     ? "the reader"
                              : !out ? "out"
                                     : "at_end",
                              err);
  if (ipc_readahead_count(&r->ahead) > 0)
    return xchg_errorf(err, XCHG_EINVAL,
                       "peek after batches were read ahead (use peek without a pool)");
  xchg_status st =
      r->deferred != XCHG_OK ? r->deferred : hold_next_batch(r, at_end, &r->deferred_error);
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
  if (!r) return base_null_argument("xchg_ipc_reader_skip", "the reader", err);
  xchg_status st = r->deferred;
  if (st == XCHG_OK && !r->has_held)
    return xchg_errorf(err, XCHG_EINVAL, "skip without a peeked batch");
  if (st == XCHG_OK) {
    st = r->deferred = pass_body(r, &r->held, &r->deferred_error); /* as with next: it sticks */
    drop_held(r);
  }
  if (st != XCHG_OK && err) *err = r->deferred_error;
  return st;
}

int64_t xchg_ipc_reader_num_batches(const xchg_ipc_reader *r) { return r ? r->n_batches : -1; }

int64_t xchg_ipc_reader_stream_end(const xchg_ipc_reader *r) {
  if (!r || !r->finished) return -1;
  return r->format == XCHG_IPC_STREAM ? reader_position(r) : r->file_end;
}

xchg_status ipc_reader_more_after_end(xchg_ipc_reader *r, int *more, xchg_error *err) {
  uint8_t byte;
  size_t got = r->peek_len - r->peek_pos; /* read to detect the format, not yet the stream's */
  xchg_status st = got ? XCHG_OK : xchg_source_read(r->src, &byte, 1, &got, err);
  *more = got > 0;
  return st;
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
  free(r->seen[0]);
  free(r->seen[1]);
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
  if (r == NULL || out == NULL) {
    if (out != NULL) out->release = NULL; /* released-state, as every out on a NULL argument */
    return xchg_errorf(err, XCHG_EINVAL, "xchg_ipc_reader_to_stream: the %s is NULL",
                       r == NULL ? "reader" : "stream to fill");
  }
  return ipc_stream_export(&reader_stream, r, out, err);
}
