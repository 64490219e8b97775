/* reader_file.c — the IPC file format: the footer (the schema, and where
 * every dictionary and record batch message starts), the checks of a file
 * read in order up to its closing magic, and files whose schema is only in
 * the footer (Arrow JS), which are read from the footer or held whole. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/format.h"
#include "ipc/reader_state.h"

/* ---- file format ------------------------------------------------------------ */

static xchg_status read_blocks(const fb_table *footer, int slot, file_block **out, int64_t *n,
                               int64_t file_size, xchg_error *err) {
  fb_vector v;
  int rc = fb_vector_field(footer, slot, 24, &v);
  if (rc < 0) return xchg_errorf(err, XCHG_EFORMAT, "footer: invalid block list");
  *n = rc ? v.count : 0;
  if (*n == 0) return XCHG_OK;
  if (!(*out = calloc((size_t)*n, sizeof(file_block))))
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < v.count; i++) {
    const uint8_t *p = fb_vector_elem(&v, i);
    file_block *b = &(*out)[i];
    b->offset = (int64_t)fb_load_u64(p);
    b->metadata_length = (int32_t)fb_load_u32(p + 8);
    b->body_length = (int64_t)fb_load_u64(p + 16);
    if (b->offset < 8 || b->metadata_length < 0 || b->body_length < 0 || b->offset > file_size ||
        b->metadata_length > file_size - b->offset ||
        b->body_length > file_size - b->offset - b->metadata_length)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "footer: block %u (offset %lld, metadata %d, body "
                         "%lld bytes) lies outside the %lld-byte file",
                         i, (long long)b->offset, b->metadata_length, (long long)b->body_length,
                         (long long)file_size);
  }
  return XCHG_OK;
}

/* The root table of the Footer flatbuffer at byte `at`, and its schema. */
static xchg_status parse_footer(const uint8_t *data, size_t size, int64_t at, fb_table *root,
                                fb_table *schema, xchg_error *err) {
  if (fb_root(data, size, root) < 0 || fb_table_field(root, FOOTER_SCHEMA, schema) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "footer at byte %lld: invalid Footer flatbuffer",
                       (long long)at);
  return XCHG_OK;
}

static xchg_status check_same_schema(const ipc_schema *footer, const ipc_schema *stream,
                                     xchg_error *err) {
  if (ipc_schema_equal(footer, "in the footer", stream, "in the stream", IPC_METADATA_IGNORED, err))
    return XCHG_OK;
  xchg_error_prefix(err, "footer schema and stream schema differ: ");
  return XCHG_EFORMAT;
}

/* How far back from the end of a file without its closing magic to look
 * for one that bytes were appended after. */
#define CLOSING_MAGIC_SCAN ((int64_t)1 << 20)

/* Where a closing ARROW1 magic begins in the last CLOSING_MAGIC_SCAN bytes
 * before `size`: one preceded by the length of a Footer flatbuffer that
 * fits after the leading magic; -1 when there is none (or reading fails). */
static int64_t find_closing_magic(xchg_ipc_reader *r, int64_t size) {
  int64_t from = size > CLOSING_MAGIC_SCAN ? size - CLOSING_MAGIC_SCAN : 0;
  xchg_buf *window = NULL;
  xchg_error ignored;
  if (reader_seek(r, from, &ignored) != XCHG_OK ||
      reader_read_buffer(r, (size_t)(size - from), &window, &ignored) != XCHG_OK)
    return -1;
  const uint8_t *p = xchg_buf_data(window);
  int64_t found = -1;
  /* Its first byte looked at first: a memcmp call at every byte (out of
   * line under clang's sanitizers) made cutting a file at every byte, as
   * test_bad_input does, take minutes. */
  for (int64_t at = size - from - IPC_MAGIC_SIZE - 1; at >= 4 && found < 0; at--) {
    if (p[at] != IPC_MAGIC[0] || memcmp(p + at, IPC_MAGIC, IPC_MAGIC_SIZE) != 0) continue;
    int32_t footer_len = (int32_t)fb_load_u32(p + at - 4);
    int64_t footer_at = at - 4 - (int64_t)footer_len;
    fb_table root, schema;
    if (footer_len > 0 && footer_at >= 0 && from + footer_at >= 8 &&
        parse_footer(p + footer_at, (size_t)footer_len, 0, &root, &schema, &ignored) == XCHG_OK)
      found = from + at;
  }
  xchg_buf_unref(window);
  return found;
}

/* A file whose last bytes are not the ARROW1 magic: bytes appended after
 * a whole file, or a file cut short (or damaged at its end). */
static xchg_status no_closing_magic(xchg_ipc_reader *r, int64_t size, xchg_error *err) {
  int64_t magic = find_closing_magic(r, size);
  long long after = magic >= 0 ? (long long)(size - magic - IPC_MAGIC_SIZE) : 0;
  if (magic >= 0)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "%lld more byte%s after the closing ARROW1 magic at byte %lld "
                       "(nothing may follow a file)",
                       after, after > 1 ? "s" : "", (long long)magic);
  return xchg_errorf(err, XCHG_EFORMAT,
                     "the file (%lld bytes) begins with the ARROW1 magic but does not end "
                     "with it, and no footer closes it: it is cut short, or its end is damaged",
                     (long long)size);
}

/* The footer of a file that ends at byte `end`: the Footer flatbuffer
 * before its length and the closing magic, and its blocks, which must lie
 * inside [0, end). */
typedef struct file_footer {
  xchg_buf *bytes;
  fb_table root, schema;
  int64_t start; /* where the flatbuffer begins */
  file_block *dict_blocks, *batch_blocks;
  int64_t n_dict_blocks, n_batches;
} file_footer;

static void footer_free(file_footer *f) {
  xchg_buf_unref(f->bytes);
  free(f->dict_blocks);
  free(f->batch_blocks);
  memset(f, 0, sizeof *f);
}

static xchg_status footer_read(xchg_ipc_reader *r, int64_t end, file_footer *f, xchg_error *err) {
  memset(f, 0, sizeof *f);
  uint8_t tail[10];
  size_t got;
  xchg_status st = reader_seek(r, end - 10, err);
  if (st == XCHG_OK) st = reader_read_exact(r, tail, 10, &got, err);
  if (st != XCHG_OK) return st;
  int32_t footer_len = (int32_t)fb_load_u32(tail);
  if (got < IPC_FILE_TAIL || memcmp(tail + 4, IPC_MAGIC, IPC_MAGIC_SIZE) != 0)
    return no_closing_magic(r, end, err);
  if (footer_len <= 0 || footer_len > end - 18)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "footer length %d at byte %lld does not fit the %lld-byte file", footer_len,
                       (long long)(end - 10), (long long)end);
  f->start = end - 10 - footer_len;
  if ((st = reader_seek(r, f->start, err)) != XCHG_OK ||
      (st = reader_read_buffer(r, (size_t)footer_len, &f->bytes, err)) != XCHG_OK)
    return st;
  st = parse_footer(xchg_buf_data(f->bytes), xchg_buf_size(f->bytes), f->start, &f->root,
                    &f->schema, err);
  if (st == XCHG_OK)
    st = read_blocks(&f->root, FOOTER_DICTIONARIES, &f->dict_blocks, &f->n_dict_blocks, end, err);
  if (st == XCHG_OK)
    st = read_blocks(&f->root, FOOTER_BATCHES, &f->batch_blocks, &f->n_batches, end, err);
  if (st != XCHG_OK) footer_free(f);
  return st;
}

/* Makes f, the footer of the file that ends at byte end, the reader's:
 * its schema, its blocks (taken over). */
static xchg_status footer_use(xchg_ipc_reader *r, file_footer *f, int64_t end, xchg_error *err) {
  xchg_status st = reader_set_schema(r, &f->schema, "footer schema", err);
  r->dict_blocks = f->dict_blocks;
  r->batch_blocks = f->batch_blocks;
  r->n_dict_blocks = f->n_dict_blocks;
  r->n_batches = f->n_batches;
  r->file_end = end;
  f->dict_blocks = f->batch_blocks = NULL;
  footer_free(f);
  return st;
}

/* Whether the footer describes the bytes before it: the last message it
 * lists (with none, the schema message after the magic, if there is one)
 * is followed by the end-of-stream marker and then the footer itself, as
 * every writer lays a file out (see "the end of a file read in order"
 * below).  It does not when files were concatenated: the last one's footer
 * gives offsets from its own start, which lie in the first file.  Returns
 * where that marker begins, or -1. */
static int64_t footer_fits(xchg_ipc_reader *r, const file_footer *f) {
  int64_t last_end = IPC_FILE_HEAD;
  const file_block *lists[2] = {f->dict_blocks, f->batch_blocks};
  const int64_t counts[2] = {f->n_dict_blocks, f->n_batches};
  for (int l = 0; l < 2; l++)
    for (int64_t i = 0; i < counts[l]; i++) {
      int64_t end = lists[l][i].offset + lists[l][i].metadata_length + lists[l][i].body_length;
      if (end > last_end) last_end = end;
    }
  xchg_error ignored; /* any failure here only means "read it in order to see" */
  ipc_message m;
  int eos = 0;
  if (reader_seek(r, last_end, &ignored) != XCHG_OK ||
      reader_read_message(r, &m, &eos, &ignored) != XCHG_OK)
    return -1;
  if (!eos && last_end == IPC_FILE_HEAD &&
      m.header_type == HEADER_SCHEMA) { /* no blocks: past the schema */
    last_end = m.body_offset + m.body_length;
    reader_message_clear(&m);
    if (reader_seek(r, last_end, &ignored) != XCHG_OK ||
        reader_read_message(r, &m, &eos, &ignored) != XCHG_OK)
      return -1;
  }
  if (!eos) reader_message_clear(&m);
  return eos && reader_position(r) == f->start ? last_end : -1;
}

static xchg_status read_file_end(xchg_ipc_reader *r, const ipc_schema *stream, int64_t start,
                                 size_t limit, uint8_t **data, size_t *len, int *found,
                                 xchg_error *err);

/* The most bytes a file end (footer, length, magic) may take:
 * max_metadata_bytes bounds the footer, and its length is an int32. */
static size_t file_end_limit(const xchg_ipc_reader *r) {
  int64_t max = r->opts.max_metadata_bytes;
  return (size_t)(max > INT32_MAX ? INT32_MAX : max < 0 ? 0 : max) + IPC_FILE_TAIL;
}

static xchg_status check_file_tail(xchg_ipc_reader *r, const ipc_schema *stream,
                                   const uint8_t *rest, size_t size, int64_t start,
                                   xchg_error *err);

/* Reads the messages of the file in order from the magic, bodies skipped,
 * up to its end-of-stream marker, where *marker is left; the status of the
 * read that failed, if one did (XCHG_EIO when the input ends inside a
 * message or before the marker).  The messages are counted as they are
 * read, so that an error names the right one; the count is put back. */
static xchg_status skip_to_marker(xchg_ipc_reader *r, int64_t *marker, xchg_error *err) {
  int64_t first = r->message_index;
  xchg_status st = reader_seek(r, IPC_FILE_HEAD, err);
  for (int eos = 0; st == XCHG_OK && !eos;) {
    ipc_message m;
    *marker = reader_position(r);
    st = reader_read_message(r, &m, &eos, err);
    if (st != XCHG_OK || eos) break;
    int64_t next = m.body_offset + m.body_length;
    reader_message_clear(&m);
    r->message_index++;
    st = reader_seek(r, next, err);
  }
  r->message_index = first;
  return st;
}

/* Reads the file in order from the magic, message by message, bodies
 * skipped, up to its end-of-stream marker (at *eos_at) and the footer after
 * it: *end is where that footer's closing magic ends, or both are -1 when
 * the input ends first (or the messages cannot be read: the footer at the
 * end is then all there is to go by).  *in_order is what the reading found
 * wrong (XCHG_EIO: the input ends inside a message, before the marker or
 * inside the footer after it), its error in *why; XCHG_OK when nothing.
 * The footer found is checked against the schema message and the messages
 * when it is used (reader_open_file_format). */
static xchg_status find_end_in_order(xchg_ipc_reader *r, int64_t *end, int64_t *eos_at,
                                     xchg_status *in_order, xchg_error *why, xchg_error *err) {
  *end = *eos_at = -1;
  int64_t marker = IPC_FILE_HEAD;
  if ((*in_order = skip_to_marker(r, &marker, why)) != XCHG_OK) return XCHG_OK;
  int64_t start = reader_position(r);
  uint8_t *rest = NULL;
  size_t size = 0, limit = file_end_limit(r);
  int found = 0;
  xchg_status st = read_file_end(r, NULL, start, limit, &rest, &size, &found, err);
  if (st == XCHG_OK && found) {
    *end = start + (int64_t)size;
    *eos_at = marker;
  } else if (st == XCHG_OK && size <= limit) { /* the input ended after the marker */
    *in_order = check_file_tail(r, NULL, rest, size, start, why);
  }
  free(rest);
  return st == XCHG_ENOMEM || st == XCHG_ECANCELLED ? st : XCHG_OK;
}

/* The input ends before the file that begins at byte 0 does (*why says
 * where, as the stream reader says it): the file is cut short, whatever its
 * last bytes hold in place of a footer, and that is an XCHG_EIO error as
 * when the same bytes are read in order. */
static xchg_status file_cut_short(int64_t size, const xchg_error *why, xchg_error *err) {
  if (err == NULL) return XCHG_EIO;
  *err = *why;
  xchg_error_prefix(err, "the file (%lld bytes) is cut short: ", (long long)size);
  return XCHG_EIO;
}

/* Seekable: the footer is found from the end of the input, as Arrow's
 * readers find it.  When it does not describe the bytes before it (files
 * concatenated), or the input does not end as a file does (a file followed
 * by an IPC stream), the file is the one that starts at byte 0 and ends at
 * the closing magic of its own footer, found by reading it in order; the
 * bytes after it are not the reader's (xchg_ipc_reader_stream_end).  Only
 * when no such end comes before the input's end does the last footer's
 * verdict stand: its error, or the footer itself (which then does not
 * describe the messages when their end was found: check_blocks says how).
 * *eos_at is where the file's end-of-stream marker begins, or -1 when it
 * is not known. */
static xchg_status read_footer(xchg_ipc_reader *r, int64_t size, int64_t *eos_at, xchg_error *err) {
  file_footer last; /* cleared by footer_read when it fails */
  xchg_status st = footer_read(r, size, &last, err);
  if (st == XCHG_OK && (*eos_at = footer_fits(r, &last)) >= 0)
    return footer_use(r, &last, size, err);
  if (st == XCHG_ENOMEM || st == XCHG_ECANCELLED) return st;
  int64_t end;
  xchg_status in_order = XCHG_OK;
  xchg_error why;
  xchg_status found = find_end_in_order(r, &end, eos_at, &in_order, &why, err);
  if (found != XCHG_OK || (end >= 0 && end < size)) footer_free(&last);
  if (found != XCHG_OK) return found;
  if (end >= 0 && end < size) {
    if ((st = footer_read(r, end, &last, err)) != XCHG_OK) return st;
    return footer_use(r, &last, end, err);
  }
  if (st != XCHG_OK && in_order == XCHG_EIO) return file_cut_short(size, &why, err);
  return st == XCHG_OK ? footer_use(r, &last, size, err) : st;
}

/* ---- the footer's blocks against the messages ------------------------------
 *
 * The footer lists where each dictionary and record batch message begins
 * (Block: offset, metadata length, body length), and a reader with random
 * access trusts it: batch i is the message at record batch block i.  A file
 * is a stream between its magics, its messages back to back, so a footer
 * that agrees with the messages lists each of them once, in file order, at
 * its offset, with its lengths.  One that does not would give other rows
 * read by footer than read in order; it is an error both ways.
 *
 * Read by footer, the blocks alone are checked when the file is opened
 * (each list in file order, both together covering the bytes from the
 * schema message to the end-of-stream marker, with no gap or overlap), and
 * each block's lengths against its message when the message is read
 * (reader_check_block): no message is read to check the others, so random
 * access stays a footer and the messages asked for.  Read in order, the
 * messages read are compared with the footer's blocks at the end. */

static const char *const kind_names[2][2] = {{"dictionary", "dictionaries"},
                                             {"record batch", "record batches"}};

static int64_t block_end(const file_block *b) {
  return b->offset + b->metadata_length + b->body_length;
}

/* Each list of blocks in file order, a message listed once. */
static xchg_status check_block_order(const file_block *b, int64_t n, int kind, xchg_error *err) {
  for (int64_t i = 1; i < n; i++)
    if (b[i].offset <= b[i - 1].offset)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "footer: %s block %lld at byte %lld is not after %s block %lld at byte "
                         "%lld (the footer lists the %s in file order, each once)",
                         kind_names[kind][0], (long long)i, (long long)b[i].offset,
                         kind_names[kind][0], (long long)(i - 1), (long long)b[i - 1].offset,
                         kind_names[kind][1]);
  return XCHG_OK;
}

/* The blocks of both lists, in file order, cover [first, eos_at) back to
 * back (eos_at -1: up to wherever they end). */
static xchg_status check_blocks(const xchg_ipc_reader *r, int64_t first, int64_t eos_at,
                                xchg_error *err) {
  const file_block *lists[2] = {r->dict_blocks, r->batch_blocks};
  const int64_t counts[2] = {r->n_dict_blocks, r->n_batches};
  xchg_status st = XCHG_OK;
  for (int k = 0; k < 2 && st == XCHG_OK; k++) st = check_block_order(lists[k], counts[k], k, err);
  int64_t at = first, next[2] = {0, 0};
  int last = -1; /* the kind of the block that ends at `at`, if any */
  while (st == XCHG_OK && (next[0] < counts[0] || next[1] < counts[1])) {
    int k = next[0] == counts[0] ||
            (next[1] < counts[1] && lists[1][next[1]].offset < lists[0][next[0]].offset);
    const file_block *b = &lists[k][next[k]];
    if (b->offset != at)
      return xchg_errorf(
          err, XCHG_EFORMAT,
          "footer: %s block %lld is at byte %lld, but the message before it "
          "ends at byte %lld (%s)",
          kind_names[k][0], (long long)next[k], (long long)b->offset, (long long)at,
          b->offset > at ? "a message the footer does not list?" : "two blocks overlap");
    at = block_end(b);
    last = k;
    next[k]++;
  }
  if (st != XCHG_OK || eos_at < 0 || at == eos_at) return st;
  char what[64] = "the schema message";
  if (last >= 0)
    snprintf(what, sizeof what, "%s block %lld", kind_names[last][0], (long long)next[last] - 1);
  return xchg_errorf(
      err, XCHG_EFORMAT,
      "footer: %s ends at byte %lld, but the end-of-stream marker is at byte "
      "%lld (%s)",
      what, (long long)at, (long long)eos_at,
      at < eos_at ? "the messages from there on are not listed" : "it runs past the marker");
}

/* The message read at block b (block i of its kind) has the block's lengths. */
xchg_status reader_check_block(const file_block *b, int64_t i, const ipc_message *m,
                               xchg_error *err) {
  int64_t metadata = m->body_offset - m->offset;
  if (metadata == b->metadata_length && m->body_length == b->body_length) return XCHG_OK;
  return xchg_errorf(err, XCHG_EFORMAT,
                     "footer: %s block %lld at byte %lld gives metadata %d and body %lld bytes, "
                     "but the message there has metadata %lld and body %lld bytes",
                     kind_names[m->header_type == HEADER_RECORD_BATCH][0], (long long)i,
                     (long long)b->offset, b->metadata_length, (long long)b->body_length,
                     (long long)metadata, (long long)m->body_length);
}

/* Read in order: notes a dictionary or record batch message of the file,
 * which the footer must list (check_blocks_read). */
xchg_status reader_note_message(xchg_ipc_reader *r, const ipc_message *m, xchg_error *err) {
  if (m->header_type != HEADER_DICTIONARY && m->header_type != HEADER_RECORD_BATCH) return XCHG_OK;
  int k = m->header_type == HEADER_RECORD_BATCH;
  if (r->n_seen[k] == r->cap_seen[k]) {
    int64_t cap = r->cap_seen[k] ? 2 * r->cap_seen[k] : 16;
    file_block *grown = realloc(r->seen[k], (size_t)cap * sizeof *grown);
    if (!grown) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    r->seen[k] = grown;
    r->cap_seen[k] = cap;
  }
  file_block b = {m->offset, (int32_t)(m->body_offset - m->offset), m->body_length};
  r->seen[k][r->n_seen[k]++] = b;
  return XCHG_OK;
}

/* The footer's list of blocks of one kind is the messages of that kind read. */
static xchg_status check_blocks_read(const file_block *listed, int64_t n_listed,
                                     const file_block *read, int64_t n_read, int kind,
                                     xchg_error *err) {
  const char *one = kind_names[kind][0], *many = kind_names[kind][1];
  for (int64_t i = 0; i < n_listed && i < n_read; i++) {
    const file_block *b = &listed[i], *m = &read[i];
    if (b->offset != m->offset || b->metadata_length != m->metadata_length ||
        b->body_length != m->body_length)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "footer: %s block %lld gives byte %lld (metadata %d, body %lld bytes), "
                         "but the file's %s %lld is at byte %lld (metadata %d, body %lld bytes)",
                         one, (long long)i, (long long)b->offset, b->metadata_length,
                         (long long)b->body_length, one, (long long)i, (long long)m->offset,
                         m->metadata_length, (long long)m->body_length);
  }
  if (n_listed < n_read)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "footer: it lists %lld %s, but the file has %lld: %s %lld at byte %lld "
                       "is not listed",
                       (long long)n_listed, n_listed == 1 ? one : many, (long long)n_read, one,
                       (long long)n_listed, (long long)read[n_listed].offset);
  if (n_listed > n_read)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "footer: %s block %lld (byte %lld) is past the file's %lld %s", one,
                       (long long)n_read, (long long)listed[n_read].offset, (long long)n_read,
                       n_read == 1 ? one : many);
  return XCHG_OK;
}

/* Most writers repeat the footer's schema as a message after the magic,
 * and it must then agree with the footer's.  Arrow JS's file writer leaves
 * it out: the footer alone gives the schema, and the first message is a
 * dictionary, a record batch or the end-of-stream marker. */
xchg_status reader_check_body_schema(xchg_ipc_reader *r, int64_t *first, xchg_error *err) {
  ipc_message m;
  int eos;
  *first = IPC_FILE_HEAD; /* where the first message after the schema begins */
  xchg_status st = reader_seek(r, IPC_FILE_HEAD, err);
  if (st == XCHG_OK) st = reader_read_message(r, &m, &eos, err);
  if (st != XCHG_OK) return st;
  if (eos || m.header_type != HEADER_SCHEMA) {
    reader_message_clear(&m);
    return XCHG_OK;
  }
  *first = m.body_offset + m.body_length;
  ipc_schema stream_schema;
  if ((st = reader_take_schema_message(r, &m, &stream_schema, err)) != XCHG_OK) return st;
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
  xchg_status st = reader_read_message(r, &m, &eos, err);
  if (st != XCHG_OK) return st;
  if (!eos && m.header_type == HEADER_SCHEMA) return reader_take_schema_message(r, &m, NULL, err);
  return open_file_in_memory(r, &m, err);
}

/* A file of fewer bytes than its magic, a footer and the magic again: a
 * cut inside the messages is said as when the bytes are read in order
 * (from a pipe), as is a cut in the magic's padding (reader_detect.c). */
static xchg_status file_too_short(xchg_ipc_reader *r, int64_t size, xchg_error *err) {
  int64_t marker;
  xchg_error why;
  if (skip_to_marker(r, &marker, &why) == XCHG_EIO) {
    *err = why;
    xchg_error_prefix(err, "the file is cut short: ");
    return XCHG_EIO;
  }
  return xchg_errorf(err, XCHG_EIO,
                     "the file is %lld bytes long: too short for the IPC file format (its "
                     "magic, a footer and the magic again need at least 18)",
                     (long long)size);
}

xchg_status reader_open_file_format(xchg_ipc_reader *r, xchg_error *err) {
  int64_t size = xchg_source_size(r->src);
  if (size < 0) return open_file_in_order(r, err);
  if (size < 18) return file_too_short(r, size, err);
  int64_t eos_at = -1, first;
  xchg_status st = read_footer(r, size, &eos_at, err);
  if (st == XCHG_OK) st = reader_check_body_schema(r, &first, err);
  if (st == XCHG_OK) st = check_blocks(r, first, eos_at, err);
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
 * that follows it, so the input is read up to the first place where the
 * magic ends after a length that counts the bytes before it and a footer
 * that checks, and not a byte further: what follows is not the file's, as
 * bytes after a stream's end-of-stream marker are not the stream's (another
 * IPC file or stream may follow, when files were concatenated), and stays
 * unread for whoever reads on (xchg_ipc_reader_stream_end says where). */

/* How many bytes can be read after the len bytes of data without passing a
 * place where the closing magic could end ("ARROW1" overlaps itself
 * nowhere, so after a partial match of k bytes the next end is 6 - k bytes
 * on; the shortest file end is a length and a magic). */
static size_t bytes_to_next_end(const uint8_t *data, size_t len) {
  if (len < IPC_FILE_TAIL) return IPC_FILE_TAIL - len;
  for (size_t k = IPC_MAGIC_SIZE - 1; k > 0; k--)
    if (memcmp(data + len - k, IPC_MAGIC, k) == 0) return IPC_MAGIC_SIZE - k;
  return IPC_MAGIC_SIZE;
}

/* Whether rest[0, end) is a complete file end: a footer, the length
 * counting it, the magic. */
static int file_ends_at(const uint8_t *rest, size_t end) {
  return end >= IPC_FILE_TAIL &&
         memcmp(rest + end - IPC_MAGIC_SIZE, IPC_MAGIC, IPC_MAGIC_SIZE) == 0 &&
         (int64_t)(int32_t)fb_load_u32(rest + end - IPC_FILE_TAIL) ==
             (int64_t)(end - IPC_FILE_TAIL);
}

static xchg_status check_footer(xchg_ipc_reader *r, const ipc_schema *stream, const uint8_t *bytes,
                                size_t size, int64_t at, int64_t file_size, xchg_error *err);

/* Reads what follows the end-of-stream marker, which ends at byte start,
 * into *data (malloc'd, *len bytes; the caller frees it, also after an
 * error) up to the end of the file (*found) or of the input, or until more
 * than limit bytes (limit < SIZE_MAX / 2) are read. */
static xchg_status read_file_end(xchg_ipc_reader *r, const ipc_schema *stream, int64_t start,
                                 size_t limit, uint8_t **data, size_t *len, int *found,
                                 xchg_error *err) {
  size_t cap = 0;
  *found = 0;
  while (*len <= limit) {
    size_t want = bytes_to_next_end(*data, *len), got;
    if (*len + want > cap) {
      size_t grown_cap =
          cap < 2048 ? 4096 : 2 * cap; /* no overflow: cap <= limit + 6 < SIZE_MAX / 2 */
      uint8_t *grown = realloc(*data, grown_cap);
      if (!grown) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", grown_cap);
      *data = grown;
      cap = grown_cap;
    }
    xchg_status st = reader_read_exact(r, *data + *len, want, &got, err);
    *len += got;
    if (st != XCHG_OK || got < want) return st; /* an error, or the end of the input */
    xchg_error ignored; /* a footer that fails is told apart at the end of the input */
    if (*len <= limit && file_ends_at(*data, *len) &&
        check_footer(r, stream, *data, *len - IPC_FILE_TAIL, start, start + (int64_t)*len,
                     &ignored) == XCHG_OK) {
      *found = 1;
      return XCHG_OK;
    }
  }
  return XCHG_OK;
}

/* Checks the footer as the seekable reader would read it: a Footer
 * flatbuffer whose schema is the stream's (when there is a stream schema
 * to compare) and whose blocks lie inside the file of file_size bytes. */
static xchg_status check_footer(xchg_ipc_reader *r, const ipc_schema *stream, const uint8_t *bytes,
                                size_t size, int64_t at, int64_t file_size, xchg_error *err) {
  fb_table root, schema_table;
  xchg_status st = parse_footer(bytes, size, at, &root, &schema_table, err);
  if (st != XCHG_OK) return st;
  ipc_schema footer_schema;
  if ((st = ipc_schema_parse(&schema_table, &r->opts, &footer_schema, err)) != XCHG_OK) {
    xchg_error_prefix(err, "footer schema at byte %lld: ", (long long)at);
    return st;
  }
  if (stream != NULL) st = check_same_schema(&footer_schema, stream, err);
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

/* The input ended after the marker, which ends at byte `start`, without a
 * file end (see read_file_end): the cause is told apart as well as it can
 * be.  The magic where it should be means a wrong length; a length that
 * fits a footer that checks, a damaged magic; a footer that fails to check
 * is its own error.  Anything else is a cut (a cut footer fails to parse:
 * flatbuffers are built from the end, so their last bytes are the strings
 * and tables that the first ones point to).  The footer's schema is
 * compared with stream, the schema message's, when there is one to compare
 * (NULL: not read). */
static xchg_status check_file_tail(xchg_ipc_reader *r, const ipc_schema *stream,
                                   const uint8_t *rest, size_t size, int64_t start,
                                   xchg_error *err) {
  long long end = (long long)start + (long long)size;
  size_t footer_size = size >= IPC_FILE_TAIL ? size - IPC_FILE_TAIL : 0;
  if (file_ends_at(rest, size)) return check_footer(r, stream, rest, footer_size, start, end, err);
  int32_t length = size >= IPC_FILE_TAIL ? (int32_t)fb_load_u32(rest + footer_size) : 0;
  /* Both causes are possible here, and the bytes cannot tell them apart:
   * the closing magic is in place, but the length before it does not count
   * the bytes from the marker to it, so either the length is damaged or
   * bytes of the footer are missing before it (lost from the middle, or a
   * cut where the bytes happen to read ARROW1).  Hence the question. */
  if (size >= IPC_FILE_TAIL && memcmp(rest + size - IPC_MAGIC_SIZE, IPC_MAGIC, IPC_MAGIC_SIZE) == 0)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "footer length %d at byte %lld does not fit: the footer "
                       "starts after the end-of-stream marker, at byte %lld, %zu bytes "
                       "before the length (damaged or truncated?)",
                       length, end - IPC_FILE_TAIL, (long long)start, footer_size);
  xchg_error ignored;
  if (size > IPC_FILE_TAIL && (int64_t)length == (int64_t)footer_size &&
      check_footer(r, stream, rest, footer_size, start, end, &ignored) == XCHG_OK)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "the file ends at byte %lld without the ARROW1 magic "
                       "(bytes %lld to %lld are damaged)",
                       end, end - 6, end - 1);
  /* A known fact, not a guess: both readers say the file is cut short
   * before it (file_cut_short, reader_check_file_end). */
  return xchg_errorf(err, XCHG_EIO,
                     "the input ends at byte %lld inside the file footer (from "
                     "byte %lld, after the end-of-stream marker), before the footer's length and "
                     "the closing ARROW1 magic",
                     end, (long long)start);
}

/* The blocks of the footer (at byte `at`, checked) of a file read in order
 * are the messages read (see "the footer's blocks against the messages"). */
static xchg_status check_footer_blocks(xchg_ipc_reader *r, const uint8_t *bytes, size_t size,
                                       int64_t at, int64_t file_size, xchg_error *err) {
  fb_table root, schema;
  xchg_status st = parse_footer(bytes, size, at, &root, &schema, err);
  static const int block_lists[] = {FOOTER_DICTIONARIES, FOOTER_BATCHES};
  for (int k = 0; k < 2 && st == XCHG_OK; k++) {
    file_block *blocks = NULL;
    int64_t n;
    st = read_blocks(&root, block_lists[k], &blocks, &n, file_size, err);
    if (st == XCHG_OK) st = check_blocks_read(blocks, n, r->seen[k], r->n_seen[k], k, err);
    free(blocks);
  }
  return st;
}

/* Reads and checks everything after the end-of-stream marker of a file
 * read in order, up to the file's end (see above), bounded by
 * max_metadata_bytes for the footer. */
xchg_status reader_check_file_end(xchg_ipc_reader *r, xchg_error *err) {
  int64_t start = reader_position(r);
  size_t limit = file_end_limit(r);
  uint8_t *rest = NULL;
  size_t size = 0;
  int found = 0;
  xchg_status st = read_file_end(r, &r->schema, start, limit, &rest, &size, &found, err);
  if (st != XCHG_OK) {
    free(rest);
    xchg_error_prefix(err, "the file footer at byte %lld: ", (long long)start);
    return st;
  }
  if (!found && size > limit)
    st = xchg_errorf(err, XCHG_ELIMIT,
                     "more than %zu bytes follow the end-of-stream marker, from "
                     "byte %lld, without the end of a file: the file footer would exceed "
                     "max_metadata_bytes (%lld)",
                     limit, (long long)start, (long long)r->opts.max_metadata_bytes);
  else if (!found) {
    st = check_file_tail(r, &r->schema, rest, size, start, err);
    /* A cut, said as the seekable reader says it (file_cut_short), but
     * for the size, which a reader in order does not know. */
    if (st == XCHG_EIO) xchg_error_prefix(err, "the file is cut short: ");
  } else {
    st = check_footer_blocks(r, rest, size - IPC_FILE_TAIL, start, start + (int64_t)size, err);
  }
  if (st == XCHG_OK) r->file_end = start + (int64_t)size;
  free(rest);
  return st;
}

/* ---- a file without a schema message, read in order -----------------------
 *
 * Arrow JS's file writer puts the schema only in the footer (see
 * reader_check_body_schema): the dictionaries and record batches after the magic
 * cannot be decoded before the footer, at the very end, gives their types.
 * Read in order, such a file is read whole into memory, as much as
 * max_batch_bytes allows (the cap on the data of one batch, whose default
 * suits a whole file of ordinary size), and then read as a file in memory. */

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
    st = reader_read_exact(r, *data + *len, asked, &got, err);
    *len += got;
    if (got < asked) break; /* the end of the input */
  }
  return st;
}

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
  size_t framing =
      (size_t)(reader_position(r) - first->offset) - metadata; /* 8, or 4 before 0.15 */
  uint8_t *head = malloc(8 + framing + metadata);
  if (head) {
    memcpy(head, r->peek, 8);
    memset(head + 8, 0xFF, framing - 4);
    for (int i = 0; i < 4; i++) head[8 + framing - 4 + (size_t)i] = (uint8_t)(metadata >> (8 * i));
    if (metadata) memcpy(head + 8 + framing, xchg_buf_data(first->metadata), metadata);
  }
  *len = 8 + framing + metadata;
  reader_message_clear(first);
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
    st = xchg_errorf(err, XCHG_ELIMIT,
                     "this IPC file has no schema message (its schema is in the "
                     "footer only), so read in order it is held whole in memory, and it is larger "
                     "than max_batch_bytes (%zu bytes): read it from a seekable input, or raise "
                     "max_batch_bytes",
                     limit);
  if (st == XCHG_OK) st = xchg_source_finish(r->src, err);
  xchg_source *whole = NULL;
  if (st == XCHG_OK) st = xchg_source_from_memory(data, len, free_whole_file, data, &whole, err);
  if (st != XCHG_OK) {
    free(data);
    return st;
  }
  xchg_source_free(r->src);
  r->src = whole;
  r->memory = xchg_source_memory(whole);
  r->peek_len = r->peek_pos = 0;
  st = reader_open_file_format(r, err);
  /* What followed the file was read with it and would be lost to the caller. */
  if (st == XCHG_OK && r->file_end < (int64_t)len)
    st = xchg_errorf(
        err, XCHG_EFORMAT,
        "this IPC file has no schema message (its schema is in the "
        "footer only), so read in order it is read whole, and %lld bytes follow its end "
        "at byte %lld: what follows such a file can be read only from a seekable input",
        (long long)len - (long long)r->file_end, (long long)r->file_end);
  return st;
}
