/* reader_meta.c — the shuffle reader's schema and dictionaries (see
 * reader.h): the first schema made the reader's, every block's compared
 * with it, dictionary messages kept, replaced or extended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/decode.h"
#include "ipc/format.h"
#include "ipc/message.h"
#include "shuffle/reader.h"

/* ---- the schema ------------------------------------------------------------- */

static xchg_status declare_dictionary(void *ctx, const ipc_field *field, xchg_error *err) {
  return ipc_dictionaries_declare(ctx, field, err);
}

/* Makes the Schema table r's schema, its columns selected. */
static xchg_status set_schema(xchg_shuffle_reader *r, const fb_table *table, const uint8_t *bytes,
                              size_t size, xchg_error *err) {
  xchg_status st = ipc_schema_parse(table, &r->opts.read, &r->schema, err);
  if (st != XCHG_OK) return st;
  r->have_schema = 1;
  if (r->schema.big_endian)
    return xchg_errorf(err, XCHG_ENOTSUP, "big-endian blocks are not read by the shuffle reader");
  if (r->columns &&
      (st = ipc_schema_select_indices(&r->schema, r->columns, r->opts.n_columns, err)) != XCHG_OK)
    return st;
  if ((st = ipc_schema_visit_dictionaries(&r->schema, 0, declare_dictionary, &r->dicts, err)) !=
          XCHG_OK ||
      (st = ipc_dictionaries_mark_used(&r->dicts, &r->schema, err)) != XCHG_OK)
    return st;
  r->seen = calloc((size_t)r->dicts.count + 1, sizeof *r->seen);
  r->schema_bytes = malloc(size + 1);
  if (!r->seen || !r->schema_bytes) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(r->schema_bytes, bytes, size);
  r->schema_size = size;
  fb_table header;
  int type, version;
  r->schema_known = (int64_t)size <= r->opts.read.max_metadata_bytes &&
                    ipc_message_parse(bytes, size, 0, 0, &header, &type, &version,
                                      &r->schema_body_length, NULL) == XCHG_OK &&
                    type == HEADER_SCHEMA && r->schema_body_length >= 0;
  return XCHG_OK;
}

xchg_status shuffle_given_schema(xchg_shuffle_reader *r, xchg_error *err) {
  const uint8_t *p = r->opts.schema_message;
  size_t size = r->opts.schema_message_size;
  fb_table table;
  xchg_status st = ipc_schema_message_table(p, size, &table, &p, &size, err);
  if (st != XCHG_OK) { /* its errors begin "schema message: " */
    xchg_error_prefix(err, "the options' ");
    return st;
  }
  st = set_schema(r, &table, p, size, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "the options' schema message: ");
  return st;
}

xchg_status shuffle_take_schema(xchg_shuffle_reader *r, const ipc_message_view *m,
                                xchg_error *err) {
  xchg_status st = XCHG_OK;
  if (r->blk.message != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %zu: a second schema message",
                       (long long)r->blk.message, r->blk.pos);
  if (!r->have_schema) {
    st = set_schema(r, &m->header, m->metadata, (size_t)m->metadata_size, err);
  } else if ((size_t)m->metadata_size != r->schema_size ||
             memcmp(m->metadata, r->schema_bytes, r->schema_size) != 0) {
    /* The schema compared with is the options' when they gave one: block
     * 0 is then compared too, and is not "the first block" of the two. */
    const char *ours = r->schema_given ? "the options' schema" : "the first block";
    char in_ours[32]; /* "3 columns in this block, 30 in the first block" */
    snprintf(in_ours, sizeof in_ours, "in %s", ours);
    ipc_schema theirs;
    st = ipc_schema_parse(&m->header, &r->opts.read, &theirs, err);
    if (st == XCHG_OK && !ipc_schema_equal(&theirs, "in this block", &r->schema, in_ours,
                                           IPC_METADATA_COMPARED, err))
      st = XCHG_EFORMAT;
    if (st != XCHG_OK) xchg_error_prefix(err, "its schema is not %s's: ", ours);
    ipc_schema_free(&theirs);
  }
  return st == XCHG_OK ? shuffle_schema_taken(r, err) : st;
}

/* ---- dictionaries ----------------------------------------------------------------- */

static int64_t dictionary_slot(const xchg_shuffle_reader *r, int64_t id) {
  for (int64_t i = 0; i < r->dicts.count; i++)
    if (r->dicts.items[i].id == id) return i;
  return -1;
}

/* The body of a message at `offset` of the block's stream, as a slice of
 * the memory the stream lies in. */
static xchg_buf *body_slice(const xchg_shuffle_reader *r, size_t offset, int64_t length) {
  const uint8_t *p = r->blk.stream + offset;
  return xchg_buf_slice(r->blk.memory, (size_t)(p - xchg_buf_data(r->blk.memory)), (size_t)length);
}

xchg_status shuffle_take_dictionary(xchg_shuffle_reader *r, const ipc_message_view *m,
                                    int *consumed, xchg_error *err) {
  block *b = &r->blk;
  ipc_dictionary_batch d;
  xchg_status st =
      ipc_dictionary_batch_read(&r->dicts, &m->header, b->message, (int64_t)b->pos, &d, err);
  int64_t slot = st == XCHG_OK ? dictionary_slot(r, d.id) : -1;
  if (st != XCHG_OK || !ipc_dictionaries_used(&r->dicts, d.id)) return st;
  dictionary_seen *seen = &r->seen[slot];
  const uint8_t *bytes = b->stream + b->pos;
  size_t size = (size_t)m->size;
  if (!d.delta && seen->bytes && seen->size == size && memcmp(seen->bytes, bytes, size) == 0) {
    seen->defined = 1;
    return XCHG_OK;
  }
  if (shuffle_open_rows(r) > 0) {
    *consumed = 0;
    r->pm.dictionary_cuts++;
    return shuffle_close_job(r, err);
  }
  ipc_body body = {body_slice(r, b->pos + (size_t)m->body_offset, m->body_length), NULL, 0,
                   m->body_length, NULL};
  if (!body.mem) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  ipc_decode_ctx ctx = {&r->opts.read,           0,         m->version, b->message, -1,
                        ipc_dictionaries_lookup, &r->dicts, NULL,       NULL};
  st = ipc_dictionary_batch_apply(&r->dicts, &d, &ctx, &body, r->opts.read.max_dictionary_bytes,
                                  b->message, (int64_t)b->pos, err);
  xchg_buf_unref(body.mem);
  if (st != XCHG_OK) return st;
  uint8_t *keep = realloc(seen->bytes, size + 1);
  if (!keep) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(keep, bytes, size);
  *seen = (dictionary_seen){keep, size, 1};
  return XCHG_OK;
}
