/* tests/test_validation.c — every validation rule of the IPC reader has a
 * test that feeds it exactly one violation.
 *
 * Each case takes a valid input (an Apache Arrow gold stream, or one the
 * xchg writer made of tests/support/roundtrip.c's sample or of the few
 * arrays built here for the types neither has), checks that it reads in
 * both modes, finds one value of it — a value in a buffer of a chosen
 * field (through the arrays the reader exported, which point into the
 * input), a field node or a buffer entry in the RecordBatch metadata —
 * changes only that value, and reads the result with XCHG_VALIDATE_FULL
 * and XCHG_VALIDATE_BOUNDS.  A refusal must be XCHG_EFORMAT with a message
 * naming the field, the buffer and the row (or run) at fault; where a rule
 * is a full-validation one, bounds-only mode must accept the input, as
 * include/xchg/ipc.h documents.
 *
 * "Buffer k" is the index among the array's buffers (validity 0, ...) in
 * the checks of values and sizes, and the index in the message's buffer
 * list in the checks of the metadata (ranges, compressed lengths).
 *
 * Rule (src/ipc/decode*.c)                        -> function (types)                     modes
 * offsets: first >= 0; last <= data bytes / child
 *   rows; last >= first                           -> offsets_case (utf8, binary,         both
 * offsets never decrease                             large_utf8, large_binary, list,     full
 *                                                    large_list, map); at every row of
 *                                                    1600 -> offsets_every_row (utf8,
 *                                                    large_utf8: the vector loops and
 *                                                    their tails, each way of scan.c)
 * list views: offset >= 0, size >= 0, offset and
 *   offset + size within the child; null rows
 *   not checked                                   -> list_views_case (list_view,         full
 *                                                    large_list_view)
 * views: length >= 0, 0 <= buffer < data buffers
 *   (also past the C sizes buffer), offset >= 0,
 *   offset + length within the buffer; inline and
 *   null views not checked                        -> views_case (utf8_view, binary_view) full
 * union type ids declared (unknown, negative);
 *   dense offsets within the child                -> unions_case (sparse, dense; gold    full
 *                                                    and sample)
 * run ends present; last >= length                -> run_ends_case, child_lengths_all    both
 * run ends increase (the first > 0)               -> run_ends_case (int16, int32, int64) full
 * dictionary indices in [0, length); null rows
 *   not checked                                   -> indices_case (int8..int64,          full
 *                                                    uint8..uint64)
 * null_count == the bitmap's nulls                -> null_counts_under (every field with full
 *                                                    nulls of every input, dictionaries too);
 *                                                    in every byte of 200 ->
 *                                                    null_counts_every_byte (each way)
 * buffer sizes: validity, values (fixed width,
 *   bool), offsets, views, type ids, dense
 *   offsets, list-view offsets and sizes, indices -> short_buffer                        both
 * validity present when null_count > 0            -> buffer_sizes_all                    both
 * field node: null_count in [0, length]; column
 *   rows == batch length                          -> field_nodes_all                     both
 * children long enough: struct, fixed-size list,
 *   sparse union, run-end values >= run ends      -> short_child, child_lengths_all      both
 * union null_count 0 (V5); run-end null_count 0   -> child_lengths_all                   both
 * record batch length >= 0; buffer ranges inside
 *   the body (past it, negative offset, negative
 *   length); field nodes and buffers present; no
 *   buffer left over; variadic counts present and
 *   in [0, buffers]                               -> batch_layout_all, one_more_entry    both
 * compressed buffers: the 8-byte length present,
 *   not negative                                  -> compressed_all (LZ4 frame gold)     both
 * Rule (src/ipc/reader.c and message.c, message framing)
 * metadata length >= 0; metadata version known;
 *   header type known (tensors unsupported); body
 *   length >= 0 and inside the input              -> framing_all                         both
 * Not tested: one field node more than the schema uses (every writer puts
 * the nodes last in the flatbuffer, so one more never fits in one change)
 * and run ends with nulls (the writer cannot make them).
 * Covered elsewhere: the caps (max_buffer_bytes, max_batch_bytes,
 * max_metadata_bytes, max_depth, max_fields, max_dictionary_bytes) and a
 * compressed length its frame cannot produce (tests/test_limits.c); a body
 * or framing that runs past the input (every cut of
 * tests/test_bad_input.c); the codecs' rules (tests/test_codec_rules.c,
 * test_stream_codecs.c, test_codec_trailer.c).  tests/mutants/validation.py
 * removes each rule in turn and checks that this test fails.
 *
 * Prints "N passed, M failed"; exits 1 on any failure. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/flatbuf.h"
#include "ipc/scan.h"
#include "support/ipc_bodies.h"
#include "support/roundtrip.h"
#include "support/testutil.h"
#include "xchg/xchg.h"

#define MAX_MESSAGES 64

/* ---- inputs --------------------------------------------------------------------- */

/* A valid input, as read in full validation: the arrays point into bytes. */
typedef struct input {
  const char *name;
  xchg_buf *bytes;
  rt_data read;
  tu_body messages[MAX_MESSAGES];
  int64_t n_messages;
} input;

static int open_input(input *in, const char *name, xchg_buf *bytes) {
  char msg[512];
  memset(in, 0, sizeof *in);
  in->name = name;
  in->bytes = bytes;
  if (!bytes || rt_read_buf(bytes, &in->read, msg, sizeof msg) != 0) {
    TU_CHECK(0, "%s: the valid input does not read: %s", name, bytes ? msg : "no bytes");
    return -1;
  }
  in->n_messages =
      tu_map_bodies(xchg_buf_data(bytes), xchg_buf_size(bytes), in->messages, MAX_MESSAGES);
  return 0;
}

static void close_input(input *in) {
  rt_data_free(&in->read);
  xchg_buf_unref(in->bytes);
}

static xchg_buf *gold_bytes(const char *testdata, const char *name) {
  char path[1200];
  snprintf(path, sizeof path, "%s/arrow-gold/%s.stream", testdata, name);
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  if (!data) return NULL;
  xchg_buf *b = xchg_buf_alloc(size);
  memcpy(xchg_buf_mutable_data(b), data, size);
  free(data);
  return b;
}

static xchg_buf *written(const struct ArrowSchema *schema, const struct ArrowArray *batch) {
  char msg[512];
  xchg_buf *out;
  if (rt_write(schema, batch, 1, NULL, &out, msg, sizeof msg) != 0) {
    TU_CHECK(0, "write: %s", msg);
    return NULL;
  }
  return out;
}

/* The types neither the gold files nor the sample have: a large list view,
 * run ends of 16 and 64 bits, 64-bit dictionary indices (signed and not).
 * Four rows each. */
static void no_release_schema(struct ArrowSchema *s) { (void)s; }
static void no_release_array(struct ArrowArray *a) { (void)a; }

#define SCHEMA(fmt, name, n, kids, dict) \
  { fmt, name, NULL, ARROW_FLAG_NULLABLE, n, kids, dict, no_release_schema, NULL }
#define ARRAY(len, nulls, nb, bufs, n, kids, dict) \
  { len, nulls, 0, nb, n, (const void **)(bufs), kids, dict, no_release_array, NULL }

static xchg_buf *extra_bytes(void) {
  static const int32_t items[4] = {1, 2, 3, 4};
  static const int64_t llv_offsets[4] = {0, 1, 2, 0}, llv_sizes[4] = {1, 1, 2, 0};
  static const int16_t ends16[3] = {1, 3, 4};
  static const int64_t ends64[3] = {1, 3, 4};
  static const int32_t run_values[3] = {7, 8, 9};
  static const int64_t idx64[4] = {0, 2, 1, 2};
  static const uint64_t idxu64[4] = {2, 2, 0, 1};
  static const int32_t dict_offsets[4] = {0, 1, 3, 6};
  static const void *item_bufs[2] = {NULL, items}, *llv_bufs[3] = {NULL, llv_offsets, llv_sizes};
  static const void *e16_bufs[2] = {NULL, ends16}, *e64_bufs[2] = {NULL, ends64};
  static const void *rv_bufs[2] = {NULL, run_values}, *i64_bufs[2] = {NULL, idx64};
  static const void *u64_bufs[2] = {NULL, idxu64}, *dict_bufs[3] = {NULL, dict_offsets, "abbccc"};
  static const void *root_bufs[1] = {NULL};

  static struct ArrowSchema item_s = SCHEMA("i", "item", 0, NULL, NULL);
  static struct ArrowSchema *llv_kids[1] = {&item_s};
  static struct ArrowSchema e16_s = SCHEMA("s", "run_ends", 0, NULL, NULL),
                            v16_s = SCHEMA("i", "values", 0, NULL, NULL);
  static struct ArrowSchema e64_s = SCHEMA("l", "run_ends", 0, NULL, NULL),
                            v64_s = SCHEMA("i", "values", 0, NULL, NULL);
  static struct ArrowSchema *r16_kids[2] = {&e16_s, &v16_s}, *r64_kids[2] = {&e64_s, &v64_s};
  static struct ArrowSchema dict_s = SCHEMA("u", NULL, 0, NULL, NULL),
                            dict2_s = SCHEMA("u", NULL, 0, NULL, NULL);
  static struct ArrowSchema cols_s[5] = {
      SCHEMA("+vL", "large_list_view", 1, llv_kids, NULL), SCHEMA("+r", "ree16", 2, r16_kids, NULL),
      SCHEMA("+r", "ree64", 2, r64_kids, NULL), SCHEMA("l", "dict_int64", 0, NULL, &dict_s),
      SCHEMA("L", "dict_uint64", 0, NULL, &dict2_s)};
  static struct ArrowSchema *cols_ps[5] = {&cols_s[0], &cols_s[1], &cols_s[2], &cols_s[3],
                                           &cols_s[4]};
  static struct ArrowSchema root_s = SCHEMA("+s", "", 5, cols_ps, NULL);

  static struct ArrowArray item_a = ARRAY(4, 0, 2, item_bufs, 0, NULL, NULL);
  static struct ArrowArray *llv_kids_a[1] = {&item_a};
  static struct ArrowArray e16_a = ARRAY(3, 0, 2, e16_bufs, 0, NULL, NULL),
                           e64_a = ARRAY(3, 0, 2, e64_bufs, 0, NULL, NULL);
  static struct ArrowArray rv_a = ARRAY(3, 0, 2, rv_bufs, 0, NULL, NULL);
  static struct ArrowArray *r16_kids_a[2] = {&e16_a, &rv_a}, *r64_kids_a[2] = {&e64_a, &rv_a};
  static struct ArrowArray dict_a = ARRAY(3, 0, 3, dict_bufs, 0, NULL, NULL);
  static struct ArrowArray cols_a[5] = {
      ARRAY(4, 0, 3, llv_bufs, 1, llv_kids_a, NULL), ARRAY(4, 0, 0, NULL, 2, r16_kids_a, NULL),
      ARRAY(4, 0, 0, NULL, 2, r64_kids_a, NULL), ARRAY(4, 0, 2, i64_bufs, 0, NULL, &dict_a),
      ARRAY(4, 0, 2, u64_bufs, 0, NULL, &dict_a)};
  static struct ArrowArray *cols_pa[5] = {&cols_a[0], &cols_a[1], &cols_a[2], &cols_a[3],
                                          &cols_a[4]};
  static struct ArrowArray root_a = ARRAY(4, 0, 1, root_bufs, 5, cols_pa, NULL);
  return written(&root_s, &root_a);
}

/* Columns long enough for the vector loops over offsets and validity
 * bitmaps (src/ipc/scan.c: several steps, single vectors and a tail, in
 * each way; 200 bytes of bitmap): LONG_ROWS rows of utf8 and of
 * large_utf8, row r being r % 3 letters, and of int32 with every fifth
 * row null. */
#define LONG_ROWS 1600

static xchg_buf *long_bytes(void) {
  static int32_t offsets32[LONG_ROWS + 1], values[LONG_ROWS];
  static int64_t offsets64[LONG_ROWS + 1];
  static char letters[3 * LONG_ROWS];
  static uint8_t validity[(LONG_ROWS + 7) / 8];
  for (int64_t r = 0; r < LONG_ROWS; r++) {
    offsets32[r + 1] = offsets32[r] + (int32_t)(r % 3);
    offsets64[r + 1] = offsets32[r + 1];
    values[r] = (int32_t)r;
    if (r % 5 != 0) validity[r / 8] |= (uint8_t)(1 << (r % 8));
  }
  memset(letters, 'a', sizeof letters);
  static const void *bufs32[3] = {NULL, offsets32, letters},
                    *bufs64[3] = {NULL, offsets64, letters};
  static const void *int_bufs[2] = {validity, values}, *root_bufs[1] = {NULL};
  static struct ArrowSchema cols_s[3] = {SCHEMA("u", "utf8", 0, NULL, NULL),
                                         SCHEMA("U", "large_utf8", 0, NULL, NULL),
                                         SCHEMA("i", "int32_nullable", 0, NULL, NULL)};
  static struct ArrowSchema *cols_ps[3] = {&cols_s[0], &cols_s[1], &cols_s[2]};
  static struct ArrowSchema root_s = SCHEMA("+s", "", 3, cols_ps, NULL);
  static struct ArrowArray cols_a[3] = {
      ARRAY(LONG_ROWS, 0, 3, bufs32, 0, NULL, NULL), ARRAY(LONG_ROWS, 0, 3, bufs64, 0, NULL, NULL),
      ARRAY(LONG_ROWS, LONG_ROWS / 5, 2, int_bufs, 0, NULL, NULL)};
  static struct ArrowArray *cols_pa[3] = {&cols_a[0], &cols_a[1], &cols_a[2]};
  static struct ArrowArray root_a = ARRAY(LONG_ROWS, 0, 1, root_bufs, 3, cols_pa, NULL);
  return written(&root_s, &root_a);
}

/* ---- reading a damaged input ------------------------------------------------------ */

/* Reads every batch of data with the given validation; the first error. */
static xchg_status read_with(const xchg_buf *data, xchg_validation mode, xchg_error *err) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.validation = mode;
  xchg_ipc_reader *r = NULL;
  int64_t live = xchg_buf_live_count();
  xchg_status st = xchg_ipc_reader_open_memory(xchg_buf_data(data), xchg_buf_size(data), NULL, NULL,
                                               &opts, &r, err);
  while (st == XCHG_OK) {
    struct ArrowArray a;
    st = xchg_ipc_reader_next(r, &a, err);
    if (st != XCHG_OK || !a.release) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(r);
  TU_CHECK(xchg_buf_live_count() == live, "%" PRId64 " buffers leaked",
           xchg_buf_live_count() - live);
  return st;
}

static const char *mode_name(xchg_validation mode) {
  return mode == XCHG_VALIDATE_FULL ? "full" : "bounds";
}

/* What one mode must do with a damaged input: want (XCHG_OK: accept it),
 * and a message holding every one of says (NULL-terminated). */
static void check_read(const char *what, const xchg_buf *data, xchg_validation mode,
                       xchg_status want, const char *const *says) {
  xchg_error err;
  xchg_status st = read_with(data, mode, &err);
  TU_CHECK(st == want, "%s (%s): %s (\"%s\"), expected %s", what, mode_name(mode),
           xchg_status_name(st), st == XCHG_OK ? "" : err.message, xchg_status_name(want));
  for (int i = 0; st == want && want != XCHG_OK && says[i]; i++)
    TU_CHECK(strstr(err.message, says[i]) != NULL, "%s (%s): \"%s\" does not say \"%s\"", what,
             mode_name(mode), err.message, says[i]);
}

/* ---- finding a value ------------------------------------------------------------------ */

/* One field of one record batch of an input: its arrays and its message. */
typedef struct target {
  const input *in;
  char path[256];
  const struct ArrowSchema *schema;
  const struct ArrowArray *array;
  const tu_body *message;
  fb_table batch;
  fb_vector nodes, buffers, variadic;
  int64_t node; /* index of the field's node in the message */
} target;

static int64_t fields_in(const struct ArrowSchema *s) {
  int64_t n = 1;
  for (int64_t i = 0; i < s->n_children; i++) n += fields_in(s->children[i]);
  return n;
}

/* Finds the child called name of t's field (of the batch's columns when
 * t->schema is NULL), counting the field nodes before it. */
static int descend(target *t, const struct ArrowSchema *parent_s, const struct ArrowArray *parent_a,
                   const char *name) {
  int64_t node = t->schema ? t->node + 1 : 0;
  for (int64_t i = 0; i < parent_s->n_children; i++) {
    if (strcmp(parent_s->children[i]->name, name) == 0) {
      t->schema = parent_s->children[i];
      t->array = parent_a->children[i];
      t->node = node;
      return 0;
    }
    node += fields_in(parent_s->children[i]);
  }
  return -1;
}

/* The metadata of record batch message `message`. */
static int open_batch(target *t, const tu_body *message) {
  const uint8_t *data = xchg_buf_data(t->in->bytes);
  fb_table root, header;
  t->message = message;
  if (fb_root(data + message->metadata_offset, (size_t)message->metadata_bytes, &root) != 1 ||
      fb_table_field(&root, 2, &header) != 1 || fb_vector_field(&header, 1, 16, &t->nodes) < 0 ||
      fb_vector_field(&header, 2, 16, &t->buffers) < 0 ||
      fb_vector_field(&header, 4, 8, &t->variadic) < 0)
    return -1;
  t->batch = header;
  return 0;
}

/* Walks t down path ("a.b"), from the batch's columns. */
static int walk(target *t, const struct ArrowSchema *s, const struct ArrowArray *a,
                const char *path) {
  t->schema = NULL;
  while (*path) {
    const char *dot = strchr(path, '.');
    int len = dot ? (int)(dot - path) : (int)strlen(path);
    char name[128];
    snprintf(name, sizeof name, "%.*s", len, path);
    if (descend(t, s, a, name) != 0) return -1;
    s = t->schema;
    a = t->array;
    path += len + (dot != NULL);
  }
  return 0;
}

/* Field `path` of the first record batch where it has at least min_rows
 * rows. */
static int find(target *t, const input *in, const char *path, int64_t min_rows) {
  memset(t, 0, sizeof *t);
  t->in = in;
  snprintf(t->path, sizeof t->path, "%s", path);
  for (int64_t b = 0, m = 0; b < in->read.n; b++, m++) {
    while (m < in->n_messages && in->messages[m].kind != XCHG_MESSAGE_RECORD_BATCH) m++;
    if (m < in->n_messages && walk(t, &in->read.schema, &in->read.batches[b], path) == 0 &&
        t->array->length >= min_rows && open_batch(t, &in->messages[m]) == 0)
      return 0;
  }
  TU_CHECK(0, "%s: no batch with field %s of %" PRId64 " rows", in->name, path, min_rows);
  return -1;
}

/* ---- damaging one value ------------------------------------------------------------- */

static const uint8_t *base_of(const target *t) { return xchg_buf_data(t->in->bytes); }

/* Whether buffer k of the target's array lies in the input (it was
 * neither decompressed nor copied). */
static int in_input(const target *t, int k) {
  const uint8_t *p = t->array->buffers[k];
  return p >= base_of(t) && p < base_of(t) + xchg_buf_size(t->in->bytes);
}

/* Byte offset in the input of buffer k of the target's array. */
static int64_t buffer_at(const target *t, int k) {
  return (const uint8_t *)t->array->buffers[k] - base_of(t);
}

static int64_t load_signed(const uint8_t *p, int width) {
  switch (width) {
    case 1: return (int8_t)p[0];
    case 2: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

/* Value i (width bytes) of buffer k. */
static int64_t value_of(const target *t, int k, int width, int64_t i) {
  return load_signed(base_of(t) + buffer_at(t, k) + width * i, width);
}

/* Where the metadata's Buffer entry (offset, length) of message buffer j is. */
static int64_t entry_at(const target *t, int64_t j) {
  return fb_vector_elem(&t->buffers, (uint32_t)j) - base_of(t);
}

/* The message buffer that holds buffer k of the target's array. */
static int64_t message_buffer(const target *t, int k) {
  for (uint32_t j = 0; j < t->buffers.count; j++) {
    const uint8_t *e = fb_vector_elem(&t->buffers, j);
    if (t->message->offset + (int64_t)fb_load_u64(e) == buffer_at(t, k) && fb_load_u64(e + 8) > 0)
      return j;
  }
  TU_CHECK(0, "%s: no message buffer holds buffer %d of %s", t->in->name, k, t->path);
  return 0;
}

static int64_t buffer_length(const target *t, int k) {
  return (int64_t)fb_load_u64(base_of(t) + entry_at(t, message_buffer(t, k)) + 8);
}

/* Where the target's FieldNode (length, null_count) is. */
static int64_t node_at(const target *t) {
  return fb_vector_elem(&t->nodes, (uint32_t)t->node) - base_of(t);
}

/* Where scalar `slot` of table b (of the target's input) is. */
static int64_t slot_at(const target *t, const fb_table *b, int slot) {
  uint16_t at = fb_load_u16(b->base + b->vtable + 4 + 2 * slot);
  TU_CHECK(at != 0, "%s: slot %d is not stored", t->in->name, slot);
  return (int64_t)(b->pos + at) + (b->base - base_of(t));
}

/* What the reader must say about one violation. */
typedef struct fault {
  const char *rule; /* a phrase of the message */
  int buffer;       /* the array buffer it names ("array buffer K (role)"); -1: none
                        (a message buffer, "message buffer K:", is part of the rule) */
  const char *unit; /* "row" or "run", followed by `row`; NULL: none */
  int64_t row;
  int full_only;     /* a check of full validation: bounds-only mode accepts */
  const char *field; /* the field it names; NULL: the target's; "": none */
} fault;

/* A copy of the target's input with the `width` bytes at `at` set to
 * value (little-endian). */
static xchg_buf *damaged(const target *t, int64_t at, int width, int64_t value) {
  const xchg_buf *orig = t->in->bytes;
  xchg_buf *copy = xchg_buf_alloc(xchg_buf_size(orig));
  memcpy(xchg_buf_mutable_data(copy), xchg_buf_data(orig), xchg_buf_size(orig));
  for (int i = 0; i < width; i++)
    xchg_buf_mutable_data(copy)[at + i] = (uint8_t)((uint64_t)value >> (8 * i));
  return copy;
}

/* Damages one value (see damaged), reads the copy in both modes and
 * checks what each does. */
static void violate(const target *t, int64_t at, int width, int64_t value, fault f) {
  xchg_buf *copy = damaged(t, at, width, value);
  char what[512], field[300], buffer[32] = "", row[48] = "";
  snprintf(what, sizeof what, "%s %s: %" PRId64 " at byte %" PRId64 " (%s)", t->in->name, t->path,
           value, at, f.rule);
  /* An empty f.field: a fault of the message itself, which names no field. */
  if (!f.field || *f.field)
    snprintf(field, sizeof field, "field '%s'", f.field ? f.field : t->path);
  else
    field[0] = '\0';
  if (f.buffer >= 0) snprintf(buffer, sizeof buffer, "array buffer %d (", f.buffer);
  if (f.unit) snprintf(row, sizeof row, "%s %" PRId64, f.unit, f.row);
  const char *says[] = {f.rule, field, buffer, row, NULL};
  check_read(what, copy, XCHG_VALIDATE_FULL, XCHG_EFORMAT, says);
  check_read(what, copy, XCHG_VALIDATE_BOUNDS, f.full_only ? XCHG_OK : XCHG_EFORMAT, says);
  xchg_buf_unref(copy);
}

/* The same for a change that breaks no rule (a value the rules must
 * ignore): both modes accept it. */
static void harmless(const target *t, int64_t at, int width, int64_t value, const char *why) {
  xchg_buf *copy = damaged(t, at, width, value);
  char what[512];
  snprintf(what, sizeof what, "%s %s: %s", t->in->name, t->path, why);
  check_read(what, copy, XCHG_VALIDATE_FULL, XCHG_OK, NULL);
  check_read(what, copy, XCHG_VALIDATE_BOUNDS, XCHG_OK, NULL);
  xchg_buf_unref(copy);
}

static int is_valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->n_buffers ? a->buffers[0] : NULL;
  return !bits || ((bits[i >> 3] >> (i & 7)) & 1);
}

/* The first valid / null row at or after `from`; -1 if none. */
static int64_t row_where(const struct ArrowArray *a, int64_t from, int valid) {
  for (int64_t i = from; i < a->length; i++)
    if (is_valid(a, i) == valid) return i;
  return -1;
}

/* ---- the inputs ------------------------------------------------------------------- */

static const struct {
  const char *name, *gold; /* gold: the file under arrow-gold; NULL: made here */
} input_list[] = {
    {"primitive", "1.0.0-littleendian/generated_primitive"},
    {"large_offsets", "1.0.0-littleendian/generated_primitive_large_offsets"},
    {"nested", "1.0.0-littleendian/generated_nested"},
    {"nested_large", "1.0.0-littleendian/generated_nested_large_offsets"},
    {"map", "1.0.0-littleendian/generated_map"},
    {"union", "1.0.0-littleendian/generated_union"},
    {"dictionary", "1.0.0-littleendian/generated_dictionary"},
    {"dictionary_unsigned", "1.0.0-littleendian/generated_dictionary_unsigned"},
    {"lz4", "2.0.0-compression/generated_lz4"},
    {"sample", NULL},
    {"extra", NULL},
    {"long", NULL},
};
#define N_INPUTS (sizeof input_list / sizeof input_list[0])

static input inputs[N_INPUTS];

static const input *input_named(const char *name) {
  for (size_t i = 0; i < N_INPUTS; i++)
    if (strcmp(inputs[i].name, name) == 0) return &inputs[i];
  return NULL;
}

static int open_inputs(const char *testdata) {
  for (size_t i = 0; i < N_INPUTS; i++) {
    xchg_buf *bytes;
    if (input_list[i].gold) {
      bytes = gold_bytes(testdata, input_list[i].gold);
    } else if (strcmp(input_list[i].name, "sample") == 0) {
      struct ArrowSchema *schema;
      struct ArrowArray *batch;
      rt_sample(&schema, &batch);
      bytes = written(schema, batch);
    } else if (strcmp(input_list[i].name, "long") == 0) {
      bytes = long_bytes();
    } else {
      bytes = extra_bytes();
    }
    if (open_input(&inputs[i], input_list[i].name, bytes) != 0) return -1;
    check_read(input_list[i].name, bytes, XCHG_VALIDATE_FULL, XCHG_OK, NULL);
    check_read(input_list[i].name, bytes, XCHG_VALIDATE_BOUNDS, XCHG_OK, NULL);
  }
  return 0;
}

/* A field of a named input, for the cases below. */
typedef struct field_ref {
  const char *input, *path;
} field_ref;

static int find_ref(target *t, field_ref f, int64_t min_rows) {
  const input *in = input_named(f.input);
  return in ? find(t, in, f.path, min_rows) : -1;
}

/* Bytes of one value of a fixed-width or index format ("c" .. "L"). */
static int int_width(const char *format) {
  switch (format[0]) {
    case 'c':
    case 'C': return 1;
    case 's':
    case 'S': return 2;
    case 'i':
    case 'I': return 4;
    default: return 8;
  }
}

/* ---- offsets ---------------------------------------------------------------------- */

static void offsets_case(field_ref ref) {
  target t;
  if (find_ref(&t, ref, 3) != 0) return;
  const char *f = t.schema->format;
  int list = f[0] == '+', width = (f[0] == 'Z' || f[0] == 'U' || strcmp(f, "+L") == 0) ? 8 : 4;
  int64_t n = t.array->length, at = buffer_at(&t, 1);
  int64_t limit = list ? t.array->children[0]->length : buffer_length(&t, 2);
  violate(&t, at, width, -1, (fault){"is negative", 1, "row", 0, 0, NULL});
  violate(&t, at + width * n, width, limit + 1, (fault){"the last", 1, "row", n, 0, NULL});
  violate(&t, at, width, value_of(&t, 1, width, n) + 1, (fault){"the last", 1, "row", n, 0, NULL});
  int64_t r = 1;
  while (r < n - 1 && value_of(&t, 1, width, r - 1) <= 0) r++;
  TU_CHECK(value_of(&t, 1, width, r - 1) > 0, "%s: no offset to lower", t.path);
  violate(&t, at + width * r, width, value_of(&t, 1, width, r - 1) - 1,
          (fault){"below the one before", 1, "row", r, 1, NULL});
}

static void offsets_all(void) {
  static const field_ref fields[] = {{"primitive", "binary_nullable"},
                                     {"primitive", "utf8_nullable"},
                                     {"large_offsets", "largebinary_nullable"},
                                     {"large_offsets", "largeutf8_nullable"},
                                     {"nested", "list_nullable"},
                                     {"nested_large", "large_list_nullable"},
                                     {"map", "map_nullable"}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) offsets_case(fields[i]);
}

/* An offset below the one before at every row of a long column, so that
 * each lane and step of the vectorised check, and its tail, must see one. */
static void offsets_every_row(void) {
  static const char *const paths[] = {"utf8", "large_utf8"};
  for (int c = 0; c < 2; c++) {
    target t;
    if (find_ref(&t, (field_ref){"long", paths[c]}, LONG_ROWS) != 0) return;
    int width = c == 0 ? 4 : 8;
    for (int64_t r = 1; r < t.array->length; r++)
      violate(&t, buffer_at(&t, 1) + width * r, width, value_of(&t, 1, width, r - 1) - 1,
              (fault){"below the one before", 1, "row", r, 1, NULL});
  }
}

/* One more null in every byte of a long validity bitmap, so that each
 * word and step of the bit count, and its tail, must see it. */
static void null_counts_every_byte(void) {
  target t;
  if (find_ref(&t, (field_ref){"long", "int32_nullable"}, LONG_ROWS) != 0) return;
  for (int64_t b = 0; 8 * b < t.array->length; b++) {
    int64_t r = row_where(t.array, 8 * b, 1); /* a valid row of the byte: every fifth is null */
    int64_t at = buffer_at(&t, 0) + r / 8;
    uint8_t byte = xchg_buf_data(t.in->bytes)[at];
    violate(&t, at, 1, byte & ~(1 << (r % 8)), (fault){"null_count is", 0, NULL, 0, 1, NULL});
  }
}

/* Both of the above in each way of src/ipc/scan.c this CPU has
 * (tests/test_scan.c checks the ways themselves, and the pick). */
static void every_row_every_way(void) {
  static const char *const ways[] = {"portable", "avx2", "avx512"};
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
    if (strcmp(ipc_scan_select(ways[w]), ways[w]) != 0) continue; /* not on this CPU */
    offsets_every_row();
    null_counts_every_byte();
  }
  ipc_scan_select(NULL);
}

/* ---- list views ------------------------------------------------------------------------ */

static void list_views_case(field_ref ref) {
  target t;
  if (find_ref(&t, ref, 3) != 0) return;
  int width = strcmp(t.schema->format, "+vL") == 0 ? 8 : 4;
  int64_t limit = t.array->children[0]->length, r = row_where(t.array, 0, 1);
  int64_t offsets = buffer_at(&t, 1) + width * r, sizes = buffer_at(&t, 2) + width * r;
  fault f = {"list view at row", 1, "row", r, 1, NULL};
  violate(&t, offsets, width, -1, f);
  violate(&t, sizes, width, -1, f);
  violate(&t, offsets, width, limit + 1, f);
  violate(&t, sizes, width, limit - value_of(&t, 1, width, r) + 1, f);
  int64_t null_row = row_where(t.array, 0, 0);
  if (null_row >= 0)
    harmless(&t, buffer_at(&t, 1) + width * null_row, width, -1, "a null list view is not checked");
}

static void list_views_all(void) {
  list_views_case((field_ref){"sample", "list_view"});
  list_views_case((field_ref){"extra", "large_list_view"});
}

/* ---- views -------------------------------------------------------------------------------- */

static void views_case(field_ref ref) {
  target t;
  if (find_ref(&t, ref, 3) != 0) return;
  int64_t n_data = t.array->n_buffers - 3, views = buffer_at(&t, 1);
  /* The valid out-of-line view with the largest offset: a length of -1
   * then does not wrap offset + length past the buffer's size. */
  int64_t r = -1;
  for (int64_t k = 0; k < t.array->length; k++)
    if (is_valid(t.array, k) && value_of(&t, 1, 4, 4 * k) > 12 &&
        (r < 0 || value_of(&t, 1, 4, 4 * k + 3) > value_of(&t, 1, 4, 4 * r + 3)))
      r = k;
  if (r < 0) {
    /* All inline: a length past 12 makes row 0 point into data buffer 0,
     * which there is none of. */
    violate(&t, views, 4, 13, (fault){"view at row", 1, "row", 0, 1, NULL});
    return;
  }
  int64_t at = views + 16 * r, len = value_of(&t, 1, 4, 4 * r), buf = value_of(&t, 1, 4, 4 * r + 2);
  fault f = {"view at row", 1, "row", r, 1, NULL};
  violate(&t, at, 4, -1, f);
  violate(&t, at + 8, 4, -1, f);
  violate(&t, at + 8, 4, n_data, f);
  violate(&t, at + 8, 4, n_data + 1, f); /* past the sizes buffer the C Data Interface adds */
  violate(&t, at + 12, 4, -1, f);
  violate(&t, at + 12, 4, buffer_length(&t, 2 + (int)buf) - len + 1, f);
  int64_t null_row = row_where(t.array, 0, 0);
  if (null_row >= 0) harmless(&t, views + 16 * null_row, 4, -1, "a null view is not checked");
  int64_t inline_row = 0;
  while (inline_row < t.array->length && value_of(&t, 1, 4, 4 * inline_row) > 12) inline_row++;
  harmless(&t, views + 16 * inline_row + 8, 4, n_data + 5, "an inline view's bytes are data");
}

static void views_all(void) {
  views_case((field_ref){"sample", "utf8_view"});
  views_case((field_ref){"sample", "binary_view"});
}

/* ---- unions ----------------------------------------------------------------------------------- */

/* The child index of type id `id` in a union format ("+ud:10,20"); -1
 * when the union does not declare it. */
static int union_child(const char *format, int64_t id) {
  const char *p = strchr(format, ':');
  for (int c = 0; p && *p; c++, p = strchr(p, ',')) {
    if (strtol(p + 1, NULL, 10) == id) return c;
    if (!*++p) break;
  }
  return -1;
}

static void unions_case(field_ref ref) {
  target t;
  if (find_ref(&t, ref, 2) != 0) return;
  int dense = t.schema->format[2] == 'd';
  int64_t r = 1, ids = buffer_at(&t, 0), undeclared = 0;
  while (union_child(t.schema->format, undeclared) >= 0) undeclared++;
  violate(&t, ids + r, 1, undeclared, (fault){"is not one of the union's", 0, "row", r, 1, NULL});
  violate(&t, ids + r, 1, -1, (fault){"is not one of the union's", 0, "row", r, 1, NULL});
  if (!dense) return;
  int child = union_child(t.schema->format, value_of(&t, 0, 1, r));
  int64_t offsets = buffer_at(&t, 1) + 4 * r;
  fault f = {"dense union offset", 1, "row", r, 1, NULL};
  violate(&t, offsets, 4, -1, f);
  violate(&t, offsets, 4, t.array->children[child]->length, f);
}

static void unions_all(void) {
  static const field_ref fields[] = {{"union", "sparse"},
                                     {"union", "dense"},
                                     {"sample", "sparse_union"},
                                     {"sample", "dense_union"}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) unions_case(fields[i]);
}

/* ---- run ends ------------------------------------------------------------------------------------ */

static void run_ends_case(const char *in_name, const char *ree) {
  target t, ends;
  char path[128];
  snprintf(path, sizeof path, "%s.run_ends", ree);
  if (find_ref(&t, (field_ref){in_name, ree}, 3) != 0 ||
      find_ref(&ends, (field_ref){in_name, path}, 2) != 0)
    return;
  int width = int_width(ends.schema->format);
  int64_t n = ends.array->length, at = buffer_at(&ends, 1);
  violate(&t, at + width * (n - 1), width, t.array->length - 1,
          (fault){"the last", 1, "run", n - 1, 0, path});
  violate(&t, at + width, width, value_of(&ends, 1, width, 0),
          (fault){"does not increase", 1, "run", 1, 1, path});
  violate(&t, at, width, 0, (fault){"does not increase", 1, "run", 0, 1, path});
}

static void run_ends_all(void) {
  run_ends_case("sample", "ree"); /* int32 */
  run_ends_case("extra", "ree16");
  run_ends_case("extra", "ree64");
}

/* ---- dictionary indices ----------------------------------------------------------------------------- */

static void indices_case(field_ref ref) {
  target t;
  if (find_ref(&t, ref, 3) != 0) return;
  int width = int_width(t.schema->format);
  int64_t r = row_where(t.array, 0, 1), at = buffer_at(&t, 1),
          dict_len = t.array->dictionary->length;
  fault f = {"dictionary index", 1, "row", r, 1, NULL};
  violate(&t, at + width * r, width, dict_len, f);
  violate(&t, at + width * r, width, -1, f); /* for unsigned indices: the largest value */
  int64_t null_row = row_where(t.array, 0, 0);
  if (null_row >= 0)
    harmless(&t, at + width * null_row, width, dict_len, "a null index is not checked");
}

static void indices_all(void) {
  static const field_ref fields[] = {
      {"dictionary", "dict0"},       {"dictionary", "dict2"},       {"dictionary", "dict1"},
      {"extra", "dict_int64"},       {"dictionary_unsigned", "f0"}, {"dictionary_unsigned", "f1"},
      {"dictionary_unsigned", "f2"}, {"extra", "dict_uint64"},      {"sample", "dict"}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) indices_case(fields[i]);
}

/* ---- null counts ---------------------------------------------------------------------------------------- */

static int64_t null_count_cases;

/* Clears the validity bit of one valid row of every field with nulls
 * under path (and of the dictionaries they use). */
static void null_counts_under(const input *in, const struct ArrowSchema *s,
                              const struct ArrowArray *a, const char *path) {
  const char *f = s->format;
  int no_bitmap = f[0] == 'n' || strncmp(f, "+u", 2) == 0 || strcmp(f, "+r") == 0;
  int64_t r = row_where(a, 0, 1);
  if (a->null_count > 0 && !no_bitmap && a->buffers[0] && r >= 0) {
    /* Only the buffer is used: no need to find the batch's message. */
    target t = {.in = in, .schema = s, .array = a};
    snprintf(t.path, sizeof t.path, "%s", path);
    if (!in_input(&t, 0)) return; /* decompressed */
    int64_t at = buffer_at(&t, 0) + r / 8;
    uint8_t byte = xchg_buf_data(in->bytes)[at];
    violate(&t, at, 1, byte & ~(1 << (r % 8)), (fault){"null_count is", 0, NULL, 0, 1, NULL});
    null_count_cases++;
  }
  if (a->dictionary) null_counts_under(in, s->dictionary, a->dictionary, path);
  for (int64_t i = 0; i < s->n_children; i++) {
    char child[256];
    snprintf(child, sizeof child, "%s.%s", path, s->children[i]->name);
    null_counts_under(in, s->children[i], a->children[i], child);
  }
}

static void null_counts_all(void) {
  for (size_t i = 0; i < N_INPUTS; i++) {
    const input *in = &inputs[i];
    for (int64_t b = 0; b < in->read.n; b++)
      for (int64_t c = 0; c < in->read.schema.n_children; c++)
        null_counts_under(in, in->read.schema.children[c], in->read.batches[b].children[c],
                          in->read.schema.children[c]->name);
  }
  TU_CHECK(null_count_cases >= 40, "only %" PRId64 " fields with nulls were damaged",
           null_count_cases);
}

/* ---- buffer sizes ------------------------------------------------------------------------------------------ */

/* Bytes buffer k of a field must have (as the Arrow format defines them). */
static int64_t bytes_needed(const struct ArrowSchema *s, const struct ArrowArray *a, int k) {
  const char *f = s->format;
  int64_t n = a->length, bitmap = (n + 7) / 8;
  if (strncmp(f, "+u", 2) == 0) return k == 0 ? n : 4 * n;
  if (k == 0) return bitmap;
  if (s->dictionary) return int_width(f) * n;
  if (strcmp(f, "b") == 0) return bitmap;
  if (strcmp(f, "z") == 0 || strcmp(f, "u") == 0 || strcmp(f, "+l") == 0 || strcmp(f, "+m") == 0)
    return 4 * (n + 1);
  if (strcmp(f, "Z") == 0 || strcmp(f, "U") == 0 || strcmp(f, "+L") == 0) return 8 * (n + 1);
  if (strcmp(f, "+vl") == 0) return 4 * n;
  if (strcmp(f, "+vL") == 0) return 8 * n;
  if (f[0] == 'v') return 16 * n;
  if (f[0] == 'w') return strtol(f + 2, NULL, 10) * n;
  if (f[0] == 'f') return 4 * n;
  if (f[0] == 'g') return 8 * n;
  return int_width(f) * n;
}

/* Buffer k of the field, one byte short of what its rows need. */
static void short_buffer(field_ref ref, int k) {
  target t;
  if (find_ref(&t, ref, 3) != 0) return;
  int64_t need = bytes_needed(t.schema, t.array, k), entry = entry_at(&t, message_buffer(&t, k));
  char says[64];
  snprintf(says, sizeof says, "has %" PRId64 " bytes", need - 1);
  violate(&t, entry + 8, 8, need - 1, (fault){says, k, NULL, 0, 0, NULL});
}

static void buffer_sizes_all(void) {
  static const struct {
    field_ref field;
    int buffer;
  } cases[] = {{{"primitive", "int32_nullable"}, 0},
               {{"primitive", "int32_nullable"}, 1},
               {{"primitive", "bool_nullable"}, 1},
               {{"primitive", "int8_nullable"}, 1},
               {{"primitive", "uint16_nullable"}, 1},
               {{"primitive", "float64_nullable"}, 1},
               {{"primitive", "fixedsizebinary_19_nullable"}, 1},
               {{"primitive", "utf8_nullable"}, 1},
               {{"large_offsets", "largeutf8_nullable"}, 1},
               {{"nested", "list_nullable"}, 1},
               {{"nested_large", "large_list_nullable"}, 1},
               {{"map", "map_nullable"}, 1},
               {{"sample", "utf8_view"}, 1},
               {{"union", "sparse"}, 0},
               {{"union", "dense"}, 0},
               {{"union", "dense"}, 1},
               {{"sample", "list_view"}, 1},
               {{"sample", "list_view"}, 2},
               {{"extra", "large_list_view"}, 1},
               {{"extra", "large_list_view"}, 2},
               {{"dictionary", "dict0"}, 1},
               {{"extra", "dict_int64"}, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    short_buffer(cases[i].field, cases[i].buffer);
  target t;
  if (find_ref(&t, (field_ref){"primitive", "int32_nullable"}, 3) != 0) return;
  violate(&t, entry_at(&t, message_buffer(&t, 0)) + 8, 8, 0,
          (fault){"no validity buffer", 0, NULL, 0, 0, NULL});
}

/* ---- field nodes and child lengths ------------------------------------------------------------------------------ */

static void field_nodes_all(void) {
  target t;
  if (find_ref(&t, (field_ref){"primitive", "int32_nullable"}, 3) != 0) return;
  int64_t node = node_at(&t), n = t.array->length;
  violate(&t, node, 8, -1, (fault){"field node has length -1", -1, NULL, 0, 0, NULL});
  char says[64];
  snprintf(says, sizeof says, "field node has length %" PRId64 " and null_count -1", n);
  violate(&t, node + 8, 8, -1, (fault){says, -1, NULL, 0, 0, NULL});
  snprintf(says, sizeof says, "field node has length %" PRId64 " and null_count %" PRId64, n,
           n + 1);
  violate(&t, node + 8, 8, n + 1, (fault){says, -1, NULL, 0, 0, NULL});
  snprintf(says, sizeof says, "column has %" PRId64 " rows", n - 1);
  violate(&t, node, 8, n - 1, (fault){says, -1, NULL, 0, 0, NULL});
}

/* A child one row short of what its parent (path) needs; the child is one
 * whose last row is valid, so that it stays valid itself. */
static void short_child(field_ref parent, const char *child, int64_t need, const char *says) {
  target t;
  char path[256];
  snprintf(path, sizeof path, "%s.%s", parent.path, child);
  if (find_ref(&t, (field_ref){parent.input, path}, 2) != 0) return;
  TU_CHECK(is_valid(t.array, need - 1), "%s: the last row needed is null", path);
  violate(&t, node_at(&t), 8, need - 1, (fault){says, -1, NULL, 0, 0, parent.path});
}

static void child_lengths_all(void) {
  target t;
  if (find_ref(&t, (field_ref){"nested", "struct_nullable"}, 3) == 0)
    short_child((field_ref){"nested", "struct_nullable"},
                is_valid(t.array->children[0], t.array->length - 1) ? "f1" : "f2", t.array->length,
                "has");
  if (find_ref(&t, (field_ref){"sample", "fsl"}, 3) == 0)
    short_child((field_ref){"sample", "fsl"}, "item", t.array->children[0]->length, "child 0 has");
  if (find_ref(&t, (field_ref){"sample", "sparse_union"}, 3) == 0)
    short_child((field_ref){"sample", "sparse_union"}, "i", t.array->length,
                "sparse union child 0");
  if (find_ref(&t, (field_ref){"extra", "ree16.run_ends"}, 3) == 0)
    violate(&t, node_at(&t), 8, 0, (fault){"no run ends", -1, NULL, 0, 0, "ree16"});
  if (find_ref(&t, (field_ref){"extra", "ree16.values"}, 3) == 0)
    violate(&t, node_at(&t), 8, 2, (fault){"3 run ends", -1, NULL, 0, 0, "ree16"});
  if (find_ref(&t, (field_ref){"sample", "ree"}, 3) == 0)
    violate(&t, node_at(&t) + 8, 8, 1,
            (fault){"run-end encoded array has null_count 1", -1, NULL, 0, 0, NULL});
  if (find_ref(&t, (field_ref){"sample", "dense_union"}, 3) == 0)
    violate(&t, node_at(&t) + 8, 8, 1, (fault){"a union has null_count 1", -1, NULL, 0, 0, NULL});
}

/* ---- the batch's layout ------------------------------------------------------------------------------------------ */

/* Whether one more entry of v still lies inside its flatbuffer. */
static int one_more_fits(const fb_vector *v) {
  return v->pos + (size_t)(v->count + 1) * v->elem_size <= v->size;
}

/* One buffer entry more than the schema uses, noticed once the batch is
 * decoded; in the first message where the entry fits.  (Field nodes come
 * last in the flatbuffers of every writer here: one more never fits, so
 * that half of the check has no single-value test.) */
static void one_more_entry(void) {
  for (size_t i = 0; i < N_INPUTS; i++) {
    target t;
    if (find(&t, &inputs[i], inputs[i].read.schema.children[0]->name, 0) != 0) continue;
    if (!one_more_fits(&t.buffers)) continue;
    violate(&t, (int64_t)(t.buffers.pos - 4) + (t.buffers.base - base_of(&t)), 4,
            t.buffers.count + 1, (fault){"the schema uses", -1, NULL, 0, 0, ""});
    return;
  }
  TU_CHECK(0, "no message has room for one more buffer entry");
}

static void batch_layout_all(void) {
  target t;
  if (find_ref(&t, (field_ref){"primitive", "int32_nullable"}, 3) != 0) return;
  violate(&t, slot_at(&t, &t.batch, 0), 8, -1,
          (fault){"record batch length -1", -1, NULL, 0, 0, ""});
  /* A buffer's range: past the body, before it, of negative length. */
  int64_t j = message_buffer(&t, 1), entry = entry_at(&t, j);
  char outside_rule[64];
  snprintf(outside_rule, sizeof outside_rule, "message buffer %lld: range [", (long long)j);
  fault outside = {outside_rule, -1, NULL, 0, 0, NULL};
  violate(&t, entry, 8, t.message->length, outside);
  violate(&t, entry, 8, -8, outside);
  violate(&t, entry + 8, 8, -1, outside);
  /* One field node or buffer entry fewer than the schema uses: the last
   * column lacks it. */
  const char *last = "fixedsizebinary_120_nonnullable";
  int64_t nodes = (int64_t)(t.nodes.pos - 4) + (t.nodes.base - base_of(&t));
  int64_t buffers = (int64_t)(t.buffers.pos - 4) + (t.buffers.base - base_of(&t));
  violate(&t, nodes, 4, t.nodes.count - 1, (fault){"field nodes", -1, NULL, 0, 0, last});
  violate(&t, buffers, 4, t.buffers.count - 1, (fault){"buffers", -1, NULL, 0, 0, last});
  /* Variadic buffer counts of a view field: out of range, or missing. */
  if (find_ref(&t, (field_ref){"sample", "utf8_view"}, 3) != 0) return;
  int64_t count = fb_vector_elem(&t.variadic, 0) - base_of(&t);
  violate(&t, count, 8, t.buffers.count + 1,
          (fault){"variadic buffer count", -1, NULL, 0, 0, NULL});
  violate(&t, count, 8, -1, (fault){"variadic buffer count", -1, NULL, 0, 0, NULL});
  int64_t counts = (int64_t)(t.variadic.pos - 4) + (t.variadic.base - base_of(&t));
  violate(&t, counts, 4, 0, (fault){"no variadicBufferCounts entry", -1, NULL, 0, 0, NULL});
  one_more_entry();
}

/* ---- compressed buffers ----------------------------------------------------------------------------------------------- */

static void compressed_all(void) {
  target t;
  if (find_ref(&t, (field_ref){"lz4", "ints"}, 3) != 0) return;
  /* Message buffer 1: the values of the first column, behind their length. */
  int64_t entry = entry_at(&t, 1);
  int64_t at = t.message->offset + (int64_t)fb_load_u64(base_of(&t) + entry);
  violate(&t, at, 8, -2,
          (fault){"message buffer 1: negative uncompressed length -2", -1, NULL, 0, 0, NULL});
  violate(&t, entry + 8, 8, 4,
          (fault){"message buffer 1: compressed buffer of 4 bytes lacks its 8-byte length", -1,
                  NULL, 0, 0, NULL});
}

/* ---- message framing (src/ipc/reader.c) ------------------------------------------------------------------------ */

/* A damaged value the reader refuses before any field is decoded. */
static void framing_case(const target *t, int64_t at, int width, int64_t value, xchg_status want,
                         const char *says) {
  xchg_buf *copy = damaged(t, at, width, value);
  char what[256];
  snprintf(what, sizeof what, "%s: %" PRId64 " at byte %" PRId64 " (%s)", t->in->name, value, at,
           says);
  const char *list[] = {says, NULL};
  check_read(what, copy, XCHG_VALIDATE_FULL, want, list);
  check_read(what, copy, XCHG_VALIDATE_BOUNDS, want, list);
  xchg_buf_unref(copy);
}

static void framing_all(void) {
  target t;
  fb_table message;
  if (find_ref(&t, (field_ref){"primitive", "int32_nullable"}, 3) != 0 ||
      fb_root(base_of(&t) + t.message->metadata_offset, (size_t)t.message->metadata_bytes,
              &message) != 1)
    return;
  /* The framing: continuation marker, metadata length; then Message's
   * version, header type, header and body length. */
  framing_case(&t, t.message->metadata_offset - 4, 4, -8, XCHG_EFORMAT,
               "negative metadata length -8");
  framing_case(&t, slot_at(&t, &message, 0), 2, 99, XCHG_ENOTSUP, "metadata version V100");
  framing_case(&t, slot_at(&t, &message, 1), 1, 4, XCHG_ENOTSUP, "header type 4");
  framing_case(&t, slot_at(&t, &message, 1), 1, 6, XCHG_EFORMAT, "header type 6");
  framing_case(&t, slot_at(&t, &message, 3), 8, -1, XCHG_EFORMAT, "body of -1 bytes is negative");
  framing_case(&t, slot_at(&t, &message, 3), 8, (int64_t)xchg_buf_size(t.in->bytes), XCHG_EIO,
               "body: unexpected end of data at byte");
}

int main(int argc, char **argv) {
  /* The inputs every case damages, each read whole once here. */
  int ready = open_inputs(tu_testdata_dir()) == 0;
  static const tu_case cases[] = {
      {"offsets", offsets_all},
      {"every_row_every_way", every_row_every_way},
      {"list_views", list_views_all},
      {"views", views_all},
      {"unions", unions_all},
      {"run_ends", run_ends_all},
      {"indices", indices_all},
      {"null_counts", null_counts_all},
      {"buffer_sizes", buffer_sizes_all},
      {"field_nodes", field_nodes_all},
      {"child_lengths", child_lengths_all},
      {"batch_layout", batch_layout_all},
      {"compressed", compressed_all},
      {"framing", framing_all},
  };
  int rc = ready ? TU_MAIN(argc, argv, "validation", cases) : 1;
  for (size_t i = 0; i < N_INPUTS; i++)
    if (inputs[i].bytes) close_input(&inputs[i]);
  return rc;
}
