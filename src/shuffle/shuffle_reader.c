/* shuffle_reader.c — the reduce side of a shuffle (see xchg/shuffle.h).
 *
 * The input is read a source at a time, whole, in memory (a source in
 * memory is read in place).  Each block's IPC stream is then walked
 * message by message, in place: in the source for plain IPC streams and
 * Comet's uncompressed blocks, in the decompressed window of the source's
 * Comet stream (xchg_istream, split at every block, its codec contexts
 * reused from block to block) otherwise, or, for a block whose stream
 * does not fit one window, in a window of the reader's own that it is
 * gathered in.  Every step either consumes one message or hands a batch
 * out (the message is then taken up again by the next call): a schema is
 * checked, a dictionary kept or replaced, a record batch appended to the
 * coalescer (coalesce.h) or, when big enough, decoded on its own without
 * a copy.
 *
 * The coalesced batch is validated as a whole.  Should that fail, its
 * blocks are read again one by one with an IPC reader, which names the
 * block, message, field and buffer at fault. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "ipc/schema.h"
#include "shuffle/coalesce.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"

#define COMET_HEADER 20
#define COMET_WINDOW ((size_t)1 << 20)

/* The block being read: its IPC stream and where the next message is. */
typedef struct block {
  int open;
  int64_t index, source, offset; /* block index, source, byte offset in the source */
  const uint8_t *stream;
  size_t size, pos;
  int persistent;      /* stream lies in the source's memory */
  int64_t message;     /* index of the next message */
  int64_t field_count; /* Comet: the header's, else -1 */
  int counted;         /* appended to the batch being built */
} block;

/* A block of the batch being built, to read it again alone. */
typedef struct block_ref {
  int64_t index, source, offset;
  int comet;
  xchg_buf *memory;
} block_ref;

/* What the reader has of a dictionary id: the bytes of the message that
 * set its values (a message with the same bytes changes nothing), and
 * whether the current block's stream has defined it. */
typedef struct dictionary_seen {
  uint8_t *bytes;
  size_t size;
  int defined;
} dictionary_seen;

struct xchg_shuffle_reader {
  xchg_shuffle_reader_options opts;
  int64_t *columns;
  /* Input. */
  xchg_source **sources;
  int64_t n_sources, sources_cap, next_source;
  int started;
  int64_t source;          /* index of the current one */
  xchg_buf *memory;        /* its bytes */
  const uint8_t *data;
  size_t size, pos;        /* pos: where its next block starts */
  int comet;
  xchg_istream *istream;   /* Comet: the source's blocks, decompressed */
  uint8_t *window;         /* a Comet block's stream gathered from several windows */
  size_t window_cap;
  block blk;
  int64_t next_block;
  /* Schema and dictionaries. */
  int have_schema;
  ipc_schema schema;
  uint8_t *schema_bytes;   /* the Message flatbuffer blocks' schemas are compared with */
  size_t schema_size;
  ipc_dictionaries dicts;
  dictionary_seen *seen;   /* per entry of dicts */
  /* Output. */
  coalescer *co;
  block_ref *refs;
  int64_t n_refs, refs_cap;
  int compressed;          /* the batch being built needed decompression */
  int64_t started_ns;      /* when its first rows were appended */
  ipc_array *ready;
  xchg_status failed;
  xchg_error failure;
  xchg_shuffle_reader_metrics m;
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t le64(const uint8_t *p) { return fb_load_u64(p); }

/* ---- errors ------------------------------------------------------------------- */

static xchg_status in_block(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  if (st != XCHG_OK)
    xchg_error_prefix(err, "block %lld (source %lld, byte %lld): ", (long long)r->blk.index,
                      (long long)r->blk.source, (long long)r->blk.offset);
  return st;
}

/* ---- options ------------------------------------------------------------------ */

void xchg_shuffle_reader_options_init(xchg_shuffle_reader_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->framing = XCHG_SHUFFLE_FRAMING_AUTO;
  opts->target_rows = 8192;
  opts->target_bytes = (int64_t)64 << 20;
  xchg_ipc_read_options_init(&opts->read);
}

static xchg_status check_options(const xchg_shuffle_reader_options *o, xchg_error *err) {
  const char *bad = o->target_rows <= 0                               ? "target_rows is not positive"
                    : o->target_bytes <= 0                            ? "target_bytes is not positive"
                    : o->n_columns < 0                                ? "n_columns is negative"
                    : o->framing < 0 || o->framing > XCHG_SHUFFLE_FRAMING_IPC ? "framing is unknown"
                    : o->schema_message == NULL && o->schema_message_size ? "schema_message is NULL"
                                                                          : NULL;
  return bad ? xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_open: %s", bad) : XCHG_OK;
}

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
  if (r->columns && (st = ipc_schema_select_indices(&r->schema, r->columns, r->opts.n_columns, err)) != XCHG_OK)
    return st;
  if ((st = ipc_schema_visit_dictionaries(&r->schema, 0, declare_dictionary, &r->dicts, err)) != XCHG_OK ||
      (st = ipc_dictionaries_mark_used(&r->dicts, &r->schema, err)) != XCHG_OK)
    return st;
  r->seen = calloc((size_t)r->dicts.count + 1, sizeof *r->seen);
  r->schema_bytes = malloc(size + 1);
  if (!r->seen || !r->schema_bytes) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(r->schema_bytes, bytes, size);
  r->schema_size = size;
  return coalescer_create(&r->schema, &r->opts.read, r->opts.target_rows, &r->co, err);
}

/* The flatbuffer of the schema message given in the options. */
static xchg_status given_schema(xchg_shuffle_reader *r, xchg_error *err) {
  const uint8_t *p = r->opts.schema_message;
  size_t size = r->opts.schema_message_size;
  fb_table table;
  xchg_status st = ipc_schema_message_table(p, size, &table, err);
  if (st == XCHG_OK && size >= 8 && fb_load_u32(p) == IPC_CONTINUATION) {
    p += 8;
    size = fb_load_u32(p - 4);
  }
  if (st == XCHG_OK) st = set_schema(r, &table, p, size, err);
  if (st != XCHG_OK) xchg_error_prefix(err, "the options' schema message: ");
  return st;
}

/* A block's schema message: the first makes the schema; the others must
 * be byte for byte the same, or describe the same columns. */
static xchg_status take_schema(xchg_shuffle_reader *r, const ipc_message_view *m, xchg_error *err) {
  xchg_status st = XCHG_OK;
  if (r->blk.message != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %zu: a second schema message",
                       (long long)r->blk.message, r->blk.pos);
  if (!r->have_schema) {
    st = set_schema(r, &m->header, m->metadata, (size_t)m->metadata_size, err);
  } else if ((size_t)m->metadata_size != r->schema_size ||
             memcmp(m->metadata, r->schema_bytes, r->schema_size) != 0) {
    ipc_schema theirs;
    st = ipc_schema_parse(&m->header, &r->opts.read, &theirs, err);
    if (st == XCHG_OK && !ipc_schema_equal(&theirs, "this block", &r->schema, "the first block",
                                              IPC_METADATA_COMPARED, err))
      st = XCHG_EFORMAT;
    if (st != XCHG_OK) xchg_error_prefix(err, "its schema is not the first block's: ");
    ipc_schema_free(&theirs);
  }
  if (st == XCHG_OK && r->blk.field_count >= 0 && r->blk.field_count != r->schema.root.n_children)
    st = xchg_errorf(err, XCHG_EFORMAT, "its header's field count is %lld, the schema has %lld "
                     "fields", (long long)r->blk.field_count, (long long)r->schema.root.n_children);
  for (int64_t i = 0; r->seen && i < r->dicts.count; i++) r->seen[i].defined = 0;
  return st;
}

/* ---- sources --------------------------------------------------------------------- */

static void free_wrapped(void *ctx, const void *data, size_t size) { free((void *)data); }

/* The whole of a source that is not in memory, read into memory. */
static xchg_status load(xchg_shuffle_reader *r, xchg_source *src, xchg_buf **out, xchg_error *err) {
  int64_t t0 = now_ns(), known = xchg_source_size(src);
  size_t cap = known > 0 ? (size_t)known : 1 << 16, size = 0;
  uint8_t *data = malloc(cap);
  xchg_status st = data ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (size_t got = 1; st == XCHG_OK && got > 0;) {
    if (size == cap) {
      uint8_t *more = (int64_t)cap < r->opts.read.max_batch_bytes ? realloc(data, cap * 2) : NULL;
      if (!more) {
        st = (int64_t)cap < r->opts.read.max_batch_bytes
                 ? xchg_errorf(err, XCHG_ENOMEM, "out of memory")
                 : xchg_errorf(err, XCHG_ELIMIT, "the source holds more than max_batch_bytes "
                               "(%lld), the most read into memory", (long long)r->opts.read.max_batch_bytes);
        break;
      }
      data = more;
      cap *= 2;
    }
    st = xchg_source_read(src, data + size, cap - size, &got, err);
    size += got;
  }
  if (st == XCHG_OK && !(*out = xchg_buf_wrap(data, size, free_wrapped, NULL)))
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (st != XCHG_OK) free(data);
  r->m.wait_ns += now_ns() - t0;
  return st;
}

static void drop_source(xchg_shuffle_reader *r) {
  xchg_istream_free(r->istream);
  r->istream = NULL;
  xchg_buf_unref(r->memory);
  r->memory = NULL;
  r->data = NULL;
  r->size = r->pos = 0;
}

/* Is this a source of Comet blocks? */
static int comet_framed(const xchg_shuffle_reader *r) {
  if (r->opts.framing != XCHG_SHUFFLE_FRAMING_AUTO) return r->opts.framing == XCHG_SHUFFLE_FRAMING_COMET;
  return xchg_stream_codec_detect(r->data, r->size) == XCHG_STREAM_COMET;
}

/* Moves on to the next source with bytes in it; *more is 0 at the end. */
static xchg_status next_source(xchg_shuffle_reader *r, int *more, xchg_error *err) {
  drop_source(r);
  *more = 0;
  while (r->next_source < r->n_sources) {
    xchg_source *src = r->sources[r->next_source];
    r->sources[r->next_source] = NULL;
    r->source = r->next_source++;
    xchg_buf *memory = xchg_source_memory(src);
    xchg_status st = memory ? XCHG_OK : load(r, src, &memory, err);
    xchg_source_free(src);
    if (st != XCHG_OK) {
      xchg_error_prefix(err, "source %lld: ", (long long)r->source);
      return st;
    }
    r->memory = memory;
    r->data = xchg_buf_data(memory);
    r->size = xchg_buf_size(memory);
    if (r->size == 0) {
      drop_source(r);
      continue;
    }
    r->comet = comet_framed(r);
    *more = 1;
    return XCHG_OK;
  }
  return XCHG_OK;
}

/* ---- blocks ---------------------------------------------------------------------- */

static xchg_status open_comet_stream(xchg_shuffle_reader *r, xchg_error *err) {
  xchg_source *src;
  xchg_istream_options so;
  xchg_istream_options_init(&so);
  so.split_members = 1;
  so.metrics = 0;
  so.window_size = COMET_WINDOW;
  xchg_status st = xchg_source_from_buf(r->memory, &src, err);
  return st == XCHG_OK ? xchg_istream_open(src, XCHG_STREAM_COMET, &so, &r->istream, err) : st;
}

/* Appends n bytes to the gathering window. */
static xchg_status gather(xchg_shuffle_reader *r, size_t have, const void *p, size_t n, xchg_error *err) {
  if ((int64_t)(have + n) > r->opts.read.max_batch_bytes)
    return xchg_errorf(err, XCHG_ELIMIT, "its IPC stream decompresses to more than max_batch_bytes "
                       "(%lld)", (long long)r->opts.read.max_batch_bytes);
  if (have + n > r->window_cap) {
    size_t cap = r->window_cap ? r->window_cap : COMET_WINDOW;
    while (cap < have + n) cap *= 2;
    uint8_t *w = realloc(r->window, cap);
    if (!w) return xchg_errorf(err, XCHG_ENOMEM, "out of memory for %zu bytes", cap);
    r->window = w;
    r->window_cap = cap;
  }
  memcpy(r->window + have, p, n);
  return XCHG_OK;
}

/* The next Comet block's IPC stream: in place when one window holds it
 * whole, else gathered from the windows it comes in. */
static xchg_status open_comet_block(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  const void *p;
  size_t n;
  xchg_status st = r->istream ? XCHG_OK : open_comet_stream(r, err);
  if (st == XCHG_OK) st = xchg_istream_next(r->istream, &p, &n, err);
  if (st != XCHG_OK) return st;
  b->field_count = xchg_istream_comet_field_count(r->istream);
  b->stream = p;
  b->size = n;
  if (n > 0 && ipc_stream_extent(p, n, r->opts.read.max_metadata_bytes) == 0) {
    size_t have = 0;
    while (st == XCHG_OK && n > 0) {
      if ((st = gather(r, have, p, n, err)) != XCHG_OK) break;
      have += n;
      st = xchg_istream_next(r->istream, &p, &n, err);
    }
    b->stream = r->window;
    b->size = have;
  }
  const uint8_t *s = b->stream;
  b->persistent = b->size > 0 && s >= r->data && s + b->size <= r->data + r->size;
  return st;
}

/* Starts the next block; *more is 0 at the end of the input. */
static xchg_status open_block(xchg_shuffle_reader *r, int *more, xchg_error *err) {
  *more = 1;
  xchg_status st = XCHG_OK;
  if (r->pos >= r->size && (st = next_source(r, more, err)) != XCHG_OK) return st;
  if (!*more) return XCHG_OK;
  block *b = &r->blk;
  *b = (block){.open = 1, .index = r->next_block++, .source = r->source,
               .offset = (int64_t)r->pos, .field_count = -1};
  r->m.blocks++;
  if (!r->comet) {
    b->stream = r->data + r->pos;
    b->size = r->size - r->pos;
    b->persistent = 1;
    return XCHG_OK;
  }
  st = open_comet_block(r, err);
  /* The istream checked the header and the codec; where the next block
   * starts is the header's length past this one. */
  uint64_t len = r->size - r->pos >= 8 ? le64(r->data + r->pos) : 0;
  r->m.wire_bytes += (int64_t)(len < r->size - r->pos ? len + 8 : r->size - r->pos);
  return in_block(r, st, err);
}

/* Leaves the block at its end-of-stream marker, which must end it. */
static xchg_status close_block(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  b->open = 0;
  if (!r->comet) {
    r->pos += b->pos;
    r->m.wire_bytes += (int64_t)b->pos;
    return XCHG_OK;
  }
  const void *p;
  size_t n = 0;
  xchg_status st = b->stream == r->window ? XCHG_OK : xchg_istream_next(r->istream, &p, &n, err);
  if (st == XCHG_OK && (n > 0 || b->pos < b->size))
    st = xchg_errorf(err, XCHG_EFORMAT, "%zu bytes follow its IPC stream's end-of-stream marker",
                     n + (b->size - b->pos));
  int more = 0;
  if (st == XCHG_OK) st = xchg_istream_next_member(r->istream, &more, err);
  uint64_t len = r->size - r->pos >= 8 ? le64(r->data + r->pos) : UINT64_MAX;
  r->pos = more && len < r->size - r->pos - 8 ? r->pos + 8 + (size_t)len : r->size;
  return in_block(r, st, err);
}

/* ---- dictionaries ----------------------------------------------------------------- */

static int64_t dictionary_slot(const xchg_shuffle_reader *r, int64_t id) {
  for (int64_t i = 0; i < r->dicts.count; i++)
    if (r->dicts.items[i].id == id) return i;
  return -1;
}

static xchg_status emit(xchg_shuffle_reader *r, xchg_error *err);

/* The body of a message at `offset` of the block's stream, as a buffer
 * that outlives the stream: a slice of the source, else a copy. */
static xchg_buf *lasting_body(const xchg_shuffle_reader *r, size_t offset, int64_t length) {
  const uint8_t *p = r->blk.stream + offset;
  if (r->blk.persistent) return xchg_buf_slice(r->memory, (size_t)(p - r->data), (size_t)length);
  xchg_buf *copy = xchg_buf_alloc((size_t)length);
  if (copy && length) memcpy(xchg_buf_mutable_data(copy), p, (size_t)length);
  return copy;
}

/* A dictionary message: the same bytes as the one in use change nothing;
 * other values first cut the batch (*consumed 0: the message is taken up
 * again once it is out), then replace or extend the dictionary. */
static xchg_status take_dictionary(xchg_shuffle_reader *r, const ipc_message_view *m,
                                   int *consumed, xchg_error *err) {
  block *b = &r->blk;
  ipc_dictionary_batch d;
  xchg_status st = ipc_dictionary_batch_read(&r->dicts, &m->header, b->message, (int64_t)b->pos, &d, err);
  int64_t slot = st == XCHG_OK ? dictionary_slot(r, d.id) : -1;
  if (st != XCHG_OK || !ipc_dictionaries_used(&r->dicts, d.id)) return st;
  dictionary_seen *seen = &r->seen[slot];
  const uint8_t *bytes = b->stream + b->pos;
  size_t size = (size_t)m->size;
  if (!d.delta && seen->bytes && seen->size == size && memcmp(seen->bytes, bytes, size) == 0) {
    seen->defined = 1;
    return XCHG_OK;
  }
  if (coalescer_rows(r->co) > 0) {
    *consumed = 0;
    r->m.dictionary_cuts++;
    return emit(r, err);
  }
  ipc_body body = {lasting_body(r, b->pos + (size_t)m->body_offset, m->body_length), NULL, 0, m->body_length};
  if (!body.mem) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  ipc_decode_ctx ctx = {&r->opts.read, 0, m->version, b->message, ipc_dictionaries_lookup, &r->dicts, NULL, NULL};
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

/* Every dictionary the selected columns use is defined by this block's
 * stream, as a stream read alone requires. */
static xchg_status check_dictionaries_defined(const xchg_shuffle_reader *r, xchg_error *err) {
  for (int64_t i = 0; i < r->dicts.count; i++)
    if (r->dicts.items[i].used && !r->seen[i].defined)
      return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %zu: dictionary %lld is used "
                         "before the block defines it", (long long)r->blk.message, r->blk.pos,
                         (long long)r->dicts.items[i].id);
  return XCHG_OK;
}

/* ---- record batches -------------------------------------------------------------- */

/* Remembers the block as one of the batch's, to read it again alone. */
static xchg_status count_block(xchg_shuffle_reader *r, xchg_error *err) {
  if (r->blk.counted) return XCHG_OK;
  if (r->n_refs == r->refs_cap) {
    int64_t cap = r->refs_cap ? 2 * r->refs_cap : 64;
    block_ref *refs = realloc(r->refs, (size_t)cap * sizeof *refs);
    if (!refs) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    r->refs = refs;
    r->refs_cap = cap;
  }
  r->refs[r->n_refs++] = (block_ref){r->blk.index, r->blk.source, r->blk.offset, r->comet,
                                     xchg_buf_ref(r->memory)};
  r->blk.counted = 1;
  return XCHG_OK;
}

static void forget_blocks(xchg_shuffle_reader *r) {
  for (int64_t i = 0; i < r->n_refs; i++) xchg_buf_unref(r->refs[i].memory);
  r->n_refs = 0;
  r->blk.counted = 0;
}

/* A batch at least as large as the target, in memory uncompressed, with
 * nothing pending before it: decoded alone, pointing into the source. */
static int passes_through(const xchg_shuffle_reader *r, const wire_batch *w) {
  return r->blk.persistent && w->codec == XCHG_BLOCK_NONE && coalescer_rows(r->co) == 0 &&
         (w->rows >= r->opts.target_rows || w->body_length >= r->opts.target_bytes);
}

static xchg_status pass_through(xchg_shuffle_reader *r, const ipc_message_view *m,
                                const wire_batch *w, xchg_error *err) {
  ipc_body body = {lasting_body(r, r->blk.pos + (size_t)m->body_offset, m->body_length), NULL, 0,
                   m->body_length};
  if (!body.mem) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  int64_t t0 = now_ns();
  ipc_decode_ctx ctx = {&r->opts.read, 0, m->version, r->blk.message, ipc_dictionaries_lookup,
                        &r->dicts, NULL, NULL};
  const ipc_field *root = &r->schema.root;
  xchg_status st = ipc_decode_batch(&ctx, &m->header, &body, root->children, root->n_children, 0,
                                    &r->ready, err);
  xchg_buf_unref(body.mem);
  r->m.copy_ns += now_ns() - t0;
  if (st != XCHG_OK) return st;
  r->m.rows += w->rows;
  r->m.decoded_bytes += w->body_length;
  r->m.passthrough_batches++;
  return XCHG_OK;
}

static int batch_full(const xchg_shuffle_reader *r) {
  return coalescer_rows(r->co) >= r->opts.target_rows ||
         coalescer_bytes(r->co) >= r->opts.target_bytes;
}

static xchg_status message_error(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  xchg_error_prefix(err, "message %lld at byte %zu: ", (long long)r->blk.message, r->blk.pos);
  return st;
}

static xchg_status take_batch(xchg_shuffle_reader *r, const ipc_message_view *m, int *consumed,
                              xchg_error *err) {
  wire_batch w;
  xchg_status st = wire_batch_open(&m->header, m->version, r->blk.stream + r->blk.pos + m->body_offset,
                                   m->body_length, &w, err);
  if (st == XCHG_OK) st = check_dictionaries_defined(r, err);
  if (st != XCHG_OK) return message_error(r, st, err);
  if (w.rows == 0) return XCHG_OK;
  if (passes_through(r, &w)) return pass_through(r, m, &w, err);
  if (coalescer_rows(r->co) == 0) {
    r->started_ns = now_ns();
    r->compressed = 0;
  }
  int fits;
  if ((st = count_block(r, err)) != XCHG_OK || (st = coalescer_append(r->co, &w, &fits, err)) != XCHG_OK)
    return message_error(r, st, err);
  if (!fits) {
    *consumed = 0;
    return emit(r, err);
  }
  r->compressed |= w.codec != XCHG_BLOCK_NONE || r->blk.stream == r->window || !r->blk.persistent;
  r->m.rows += w.rows;
  return batch_full(r) ? emit(r, err) : XCHG_OK;
}

/* ---- the steps ------------------------------------------------------------------- */

/* The end of the block's bytes before its end-of-stream marker. */
static xchg_status stream_cut(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  if (r->opts.read.allow_missing_eos) return close_block(r, err);
  return in_block(r, xchg_errorf(err, XCHG_EIO, "its IPC stream ends at byte %zu, before message "
                                 "%lld, without the end-of-stream marker (truncated%s?)", b->size,
                                 (long long)b->message, r->comet ? ", or the block's length "
                                 "shorter than its stream" : ""), err);
}

/* Takes one message of the block, or hands a batch out before it. */
static xchg_status step(xchg_shuffle_reader *r, xchg_error *err) {
  block *b = &r->blk;
  if (b->pos == b->size) return stream_cut(r, err);
  ipc_message_view m;
  xchg_status st = ipc_message_view_decode(b->stream + b->pos, b->size - b->pos, b->message,
                                           (int64_t)b->pos, r->opts.read.max_metadata_bytes, &m, err);
  if (st != XCHG_OK) return in_block(r, st, err);
  if (m.eos) {
    if (b->message == 0)
      return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "its IPC stream has no schema message"), err);
    b->pos += (size_t)m.size;
    return close_block(r, err);
  }
  if (b->message == 0 && m.header_type != HEADER_SCHEMA)
    return in_block(r, xchg_errorf(err, XCHG_EFORMAT, "message 0 at byte 0 is not a schema"), err);
  if (m.header_type == HEADER_SCHEMA && b->message > 0 && !r->comet && r->opts.read.allow_missing_eos)
    return close_block(r, err); /* a stream without its marker, then the next block */
  int consumed = 1;
  switch (m.header_type) {
    case HEADER_SCHEMA: st = take_schema(r, &m, err); break;
    case HEADER_DICTIONARY: st = take_dictionary(r, &m, &consumed, err); break;
    default: st = take_batch(r, &m, &consumed, err); break;
  }
  if (st != XCHG_OK) return in_block(r, st, err);
  if (consumed) {
    b->pos += (size_t)m.size;
    b->message++;
  }
  return XCHG_OK;
}

/* ---- handing batches out ----------------------------------------------------------- */

/* Reads block `ref` alone with an IPC reader: its error, if it has one. */
static xchg_status read_alone(const xchg_shuffle_reader *r, const block_ref *ref, xchg_error *err) {
  xchg_source *src;
  const uint8_t *data = xchg_buf_data(ref->memory);
  size_t size = xchg_buf_size(ref->memory) - (size_t)ref->offset;
  if (ref->comet && size >= 8 && le64(data + ref->offset) < size - 8) size = (size_t)le64(data + ref->offset) + 8;
  xchg_status st = xchg_source_from_memory(data + ref->offset, size, NULL, NULL, &src, err);
  xchg_istream *s = NULL;
  if (st == XCHG_OK && ref->comet && (st = xchg_istream_open(src, XCHG_STREAM_COMET, NULL, &s, err)) == XCHG_OK)
    st = xchg_source_from_istream(s, &src, err);
  xchg_ipc_read_options opts = r->opts.read;
  opts.pool = NULL;
  xchg_ipc_reader *reader = NULL;
  if (st == XCHG_OK) st = xchg_ipc_reader_open(src, &opts, &reader, err);
  if (st == XCHG_OK && r->columns) st = xchg_ipc_reader_select_indices(reader, r->columns, r->opts.n_columns, err);
  for (struct ArrowArray a = {0}; st == XCHG_OK;) {
    st = xchg_ipc_reader_next(reader, &a, err);
    if (!a.release) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(reader);
  if (st != XCHG_OK)
    xchg_error_prefix(err, "block %lld (source %lld, byte %lld): ", (long long)ref->index,
                      (long long)ref->source, (long long)ref->offset);
  return st;
}

/* A coalesced batch failed its validation: which block has the fault? */
static xchg_status name_block(const xchg_shuffle_reader *r, xchg_status st, xchg_error *err) {
  xchg_error alone;
  for (int64_t i = 0; i < r->n_refs; i++) {
    xchg_status found = read_alone(r, &r->refs[i], &alone);
    if (found == XCHG_OK) continue;
    if (err) *err = alone;
    return found;
  }
  if (r->n_refs > 0)
    xchg_error_prefix(err, "the batch of blocks %lld to %lld: ", (long long)r->refs[0].index,
                      (long long)r->refs[r->n_refs - 1].index);
  return st;
}

/* Finishes the batch being built into r->ready. */
static xchg_status emit(xchg_shuffle_reader *r, xchg_error *err) {
  int64_t bytes = coalescer_bytes(r->co);
  xchg_status st = coalescer_finish(r->co, ipc_dictionaries_lookup, &r->dicts, &r->ready, err);
  if (st != XCHG_OK) st = name_block(r, st, err);
  forget_blocks(r);
  r->m.decoded_bytes += bytes;
  int64_t spent = now_ns() - r->started_ns;
  if (r->compressed) r->m.decompress_ns += spent;
  else r->m.copy_ns += spent;
  return st;
}

/* Reads until a batch is ready: *out, or NULL at the end. */
static xchg_status produce(xchg_shuffle_reader *r, ipc_array **out, xchg_error *err) {
  xchg_status st = XCHG_OK;
  r->started = 1;
  while (!r->ready && st == XCHG_OK) {
    int more = 1;
    if (!r->blk.open) st = open_block(r, &more, err);
    if (st != XCHG_OK) break;
    if (!more) {
      if (r->co && coalescer_rows(r->co) > 0) st = emit(r, err);
      break;
    }
    if (r->blk.open) st = step(r, err);
  }
  *out = r->ready;
  r->ready = NULL;
  return st;
}

/* ---- public API ---------------------------------------------------------------- */

xchg_status xchg_shuffle_reader_open(const xchg_shuffle_reader_options *opts,
                                     xchg_shuffle_reader **out, xchg_error *err) {
  *out = NULL;
  xchg_shuffle_reader_options defaults;
  if (!opts) {
    xchg_shuffle_reader_options_init(&defaults);
    opts = &defaults;
  }
  xchg_status st = check_options(opts, err);
  if (st != XCHG_OK) return st;
  xchg_shuffle_reader *r = calloc(1, sizeof *r);
  if (!r) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  r->opts = *opts;
  r->opts.read.pool = NULL; /* not used yet (xchg/shuffle.h) */
  r->opts.schema_message = NULL;
  r->source = -1;
  if (opts->columns) {
    r->columns = malloc(((size_t)opts->n_columns + 1) * sizeof *r->columns);
    if (r->columns) memcpy(r->columns, opts->columns, (size_t)opts->n_columns * sizeof *r->columns);
    else st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  r->opts.columns = r->columns;
  if (st == XCHG_OK && opts->schema_message) {
    r->opts.schema_message = opts->schema_message;
    st = given_schema(r, err);
    r->opts.schema_message = NULL;
  }
  if (st != XCHG_OK) {
    xchg_shuffle_reader_free(r);
    return st;
  }
  *out = r;
  return XCHG_OK;
}

xchg_status xchg_shuffle_reader_add_source(xchg_shuffle_reader *r, xchg_source *src,
                                           xchg_error *err) {
  if (!r || !src || r->started) {
    xchg_source_free(src);
    return xchg_errorf(err, XCHG_EINVAL, "xchg_shuffle_reader_add_source: %s",
                       !r ? "the reader is NULL" : !src ? "the source is NULL"
                          : "sources are added before the first read");
  }
  if (r->n_sources == r->sources_cap) {
    int64_t cap = r->sources_cap ? 2 * r->sources_cap : 16;
    xchg_source **sources = realloc(r->sources, (size_t)cap * sizeof *sources);
    if (!sources) {
      xchg_source_free(src);
      return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    }
    r->sources = sources;
    r->sources_cap = cap;
  }
  r->sources[r->n_sources++] = src;
  return XCHG_OK;
}

xchg_status xchg_shuffle_reader_schema(xchg_shuffle_reader *r, struct ArrowSchema *out,
                                       xchg_error *err) {
  memset(out, 0, sizeof *out);
  if (r->failed != XCHG_OK) {
    if (err) *err = r->failure;
    return r->failed;
  }
  r->started = 1;
  while (!r->have_schema && r->failed == XCHG_OK) {
    int more = 1;
    xchg_status st = r->blk.open ? XCHG_OK : open_block(r, &more, &r->failure);
    if (st == XCHG_OK && !more)
      st = xchg_errorf(&r->failure, XCHG_EFORMAT, "no schema: the input holds no block and the "
                       "options no schema message");
    if (st == XCHG_OK) st = step(r, &r->failure);
    r->failed = st;
  }
  if (r->failed != XCHG_OK) {
    if (err) *err = r->failure;
    return r->failed;
  }
  return ipc_schema_export(&r->schema, out, err);
}

xchg_status xchg_shuffle_reader_next(xchg_shuffle_reader *r, struct ArrowArray *out,
                                     xchg_error *err) {
  memset(out, 0, sizeof *out);
  if (r->failed != XCHG_OK) {
    if (err) *err = r->failure;
    return r->failed;
  }
  ipc_array *a;
  xchg_status st = produce(r, &a, &r->failure);
  if (st == XCHG_OK && a) st = ipc_array_export(a, out, &r->failure);
  ipc_array_unref(a);
  if (st != XCHG_OK) {
    r->failed = st;
    if (err) *err = r->failure;
    return st;
  }
  if (out->release) r->m.batches++;
  return XCHG_OK;
}

void xchg_shuffle_reader_get_metrics(const xchg_shuffle_reader *r, xchg_shuffle_reader_metrics *out) {
  *out = r->m;
}

void xchg_shuffle_reader_free(xchg_shuffle_reader *r) {
  if (!r) return;
  for (int64_t i = r->next_source; i < r->n_sources; i++) xchg_source_free(r->sources[i]);
  free(r->sources);
  drop_source(r);
  free(r->window);
  forget_blocks(r);
  free(r->refs);
  ipc_array_unref(r->ready);
  coalescer_free(r->co);
  for (int64_t i = 0; r->seen && i < r->dicts.count; i++) free(r->seen[i].bytes);
  free(r->seen);
  ipc_dictionaries_free(&r->dicts);
  ipc_schema_free(&r->schema);
  free(r->schema_bytes);
  free(r->columns);
  free(r);
}
