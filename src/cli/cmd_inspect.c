/* cmd_inspect.c — `xchg inspect FILE|-`: what is in an Arrow IPC input. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/render/size.h"
#include "cli/render/strbuf.h"
#include "cli/render/types.h"
#include "cli/render/values.h"

static const char inspect_help[] =
    "usage: xchg inspect FILE|- [--messages] [--streams] [--json] [--input-codec C]\n"
    "                           [--allow-missing-eos]\n"
    "       xchg inspect --rows FILE|- [--head N] [--input-codec C]\n\n"
    "Shows what an Arrow IPC file or stream holds ('-' reads standard input):\n"
    "  - the stream codec around it, if any, and for each IPC stream inside:\n"
    "  - where it begins, when there is a codec or more than one IPC stream\n"
    "    (\"IPC stream 2 at byte 4096\", the first one too; \"at decoded\n"
    "    byte\" inside a codec);\n"
    "  - the format (IPC file or stream, detected from the first bytes);\n"
    "  - a summary: record batches, rows, dictionary batches, metadata and\n"
    "    body bytes;\n"
    "  - the schema: every field with its type, nullability, metadata and\n"
    "    extension type, and the schema's own metadata (a name that would read\n"
    "    ambiguously - empty, with a newline, a quote or a colon - as a JSON\n"
    "    string);\n"
    "  - per top-level column, the record batches' body bytes as on the wire\n"
    "    (buffer lengths, padding excluded), what they decode to and the ratio\n"
    "    of the two (decoded / wire; '?' when the body is compressed and the\n"
    "    IPC is read in order, inside a stream codec: its lengths come with the\n"
    "    body; standard input is copied to a temporary file first, and so is\n"
    "    a named FIFO, such as <(...), and shown as the file would be);\n"
    "  - with --messages, every message, the schema message (#0) included:\n"
    "    its kind, index, byte offset (from the start of its IPC stream, in\n"
    "    decoded bytes), rows, metadata and body bytes, body compression,\n"
    "    metadata version, dictionary id and delta flag, custom metadata;\n"
    "    in the order they are read: a file's (through its footer) as the\n"
    "    footer lists them, dictionaries first.\n"
    "  - for a file of blocks — Comet shuffle blocks, or several IPC streams one\n"
    "    after another (as `xchg gen shuffle --format ipc` writes them), plain or\n"
    "    in a stream codec, which then makes the same report — a last\n"
    "    line as the shuffle reader reads them: blocks, their codecs (Comet's, or\n"
    "    the streams' body compression), rows, wire bytes and the batches of 8192\n"
    "    rows they coalesce into (as `xchg convert` writes Comet blocks; it keeps\n"
    "    plain IPC streams' batches unless --batch-rows is given); the IPC streams\n"
    "    after the first, all of its schema, are then shown only with --streams.\n"
    "    IPC streams that the shuffle reader cannot read as one table (another\n"
    "    schema) are all shown, and the line says why.\n"
    "Sizes from 1 KiB up show as \"1.5 MiB (1572864 B)\" (--messages lines: in bytes).\n\n"
    "  --messages      list every message\n"
    "  --streams       a file of blocks: show every IPC stream, not the first only\n"
    "  --json          one JSON document instead of text (sizes in bytes):\n"
    "                    {\"file\", \"codec\" (null for plain IPC), \"streams\": [{\n"
    "                    \"offset\", \"format\" (\"stream\"|\"file\"), \"schema\": {\"fields\":\n"
    "                    [{\"name\", \"type\", \"nullable\", \"metadata\", \"extension\"}],\n"
    "                    \"metadata\"}, \"record_batches\", \"rows\", \"dictionary_batches\",\n"
    "                    \"metadata_bytes\", \"body_bytes\", \"dictionary_body_bytes\",\n"
    "                    \"columns\": [{\"name\", \"body_bytes\", \"decoded_bytes\" (null:\n"
    "                    unknown)}], \"messages\" (with --messages): [{\"index\",\n"
    "                    \"kind\", \"offset\", \"rows\", \"metadata_bytes\", \"body_bytes\",\n"
    "                    \"compression\", \"version\", \"dictionary_id\", \"delta\",\n"
    "                    \"custom_metadata\"}]}], \"totals\": {\"streams\", \"record_batches\",\n"
    "                    \"rows\", \"dictionary_batches\", \"metadata_bytes\",\n"
    "                    \"body_bytes\"}, \"codec_bytes\": {\"compressed\", \"decoded\"}\n"
    "                    (null for plain IPC), and for a file of blocks \"blocks\":\n"
    "                    {\"count\", \"rows\", \"wire_bytes\", \"batches\", \"batch_rows\",\n"
    "                    \"convert_batches\" (what convert writes without\n"
    "                    --batch-rows), \"codecs\": {codec: blocks}} (\"streams\" then lists the first\n"
    "                    only, unless --streams), or {\"error\"} when IPC streams are\n"
    "                    not one table}\n"
    "  --rows          the input is length-prefixed rows (a u32 little-endian\n"
    "                    length, then the row's bytes), as Gluten's sort shuffle\n"
    "                    writes them, usually in an --input-codec (lz4-frame, zstd):\n"
    "                    shows the row count, the distribution of row sizes\n"
    "                    and the first rows in hex\n"
    "  --head N        with --rows: how many rows to show (default 5)\n" XC_CODEC_HELP
        XC_MISSING_EOS_HELP "  --codec C       the old name of --input-codec (deprecated)\n";

static void print_metadata(xs *out, const char *metadata, const char *indent) {
  xc_meta_iter it;
  const char *key, *value;
  int32_t key_len, value_len;
  xc_meta_begin(&it, metadata);
  while (xc_meta_next(&it, &key, &key_len, &value, &value_len)) {
    xs_printf(out, "%s", indent);
    xv_json_string(out, (const uint8_t *)key, key_len);
    xs_puts(out, ": ");
    xv_json_string(out, (const uint8_t *)value, value_len);
    xs_putc(out, '\n');
  }
}

static bool has_metadata(const char *metadata) {
  xc_meta_iter it;
  xc_meta_begin(&it, metadata);
  return it.remaining > 0;
}

static void print_extension(xs *out, const struct ArrowSchema *field, const char *indent) {
  int32_t len;
  const char *name = xc_meta_find(field->metadata, "ARROW:extension:name", &len);
  if (name == NULL) return;
  xs_printf(out, "%sextension: %.*s\n", indent, (int)len, name);
}

/* Metadata and extension types of nested fields, named by their path. */
static void print_nested_details(xs *out, const struct ArrowSchema *field, xs *path) {
  size_t path_len = path->len;
  const struct ArrowSchema *values = field->dictionary ? field->dictionary : field;
  for (int64_t c = 0; c < values->n_children; c++) {
    const struct ArrowSchema *child = values->children[c];
    path->len = path_len;
    xs_putc(path, '.');
    xv_name(path, child->name, ".:");
    if (has_metadata(child->metadata)) {
      xs_printf(out, "      %s metadata:\n", xs_cstr(path));
      print_metadata(out, child->metadata, "        ");
    }
    int32_t len;
    const char *ext = xc_meta_find(child->metadata, "ARROW:extension:name", &len);
    if (ext != NULL) xs_printf(out, "      %s extension: %.*s\n", xs_cstr(path), (int)len, ext);
    print_nested_details(out, child, path);
  }
  path->len = path_len;
}

static void print_schema(xs *out, const struct ArrowSchema *schema) {
  xs_printf(out, "schema: %lld field%s\n", (long long)schema->n_children,
            schema->n_children == 1 ? "" : "s");
  if (has_metadata(schema->metadata)) {
    xs_puts(out, "  metadata:\n");
    print_metadata(out, schema->metadata, "    ");
  }
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *field = schema->children[i];
    xs_printf(out, "  [%lld] ", (long long)i);
    xv_name(out, field->name, ":");
    xs_puts(out, ": ");
    xc_type_name(out, field);
    xs_puts(out, (field->flags & ARROW_FLAG_NULLABLE) ? ", nullable\n" : ", not null\n");
    print_extension(out, field, "      ");
    if (has_metadata(field->metadata)) {
      xs_puts(out, "      metadata:\n");
      print_metadata(out, field->metadata, "        ");
    }
    xs path;
    xs_init(&path, NULL);
    xv_name(&path, field->name, ".:");
    print_nested_details(out, field, &path);
    xs_free(&path);
  }
}

static const char *kind_name(xchg_message_kind kind) {
  switch (kind) {
    case XCHG_MESSAGE_SCHEMA: return "schema";
    case XCHG_MESSAGE_DICTIONARY: return "dictionary";
    case XCHG_MESSAGE_RECORD_BATCH: return "record batch";
  }
  return "unknown";
}

/* ---- counts ---------------------------------------------------------------- */

/* "1 row", "2 rows". */
static void count(xs *out, int64_t n, const char *one, const char *many) {
  xs_printf(out, "%lld %s", (long long)n, n == 1 ? one : many);
}

/* ---- gathering --------------------------------------------------------------- */

typedef struct inspect_opts {
  bool messages, json, streams;
  bool allow_missing_eos; /* --allow-missing-eos: xc_input_open's */
} inspect_opts;

typedef struct stream_stats {
  int64_t messages, batches, dictionaries, rows, body_bytes, metadata_bytes, dictionary_body_bytes;
  int64_t n_columns;
  int64_t *column_wire, *column_decoded; /* decoded -1: unknown */
  bool columns_unknown;                  /* a batch came without its column bytes */
  int codec; /* the body compression of its first record batch; -1: none yet */
} stream_stats;

typedef struct inspect_ctx {
  const inspect_opts *opt;
  stream_stats stats;
  xs held; /* the message list, printed after the summary */
  bool out_of_memory;
} inspect_ctx;

static void add_column_bytes(inspect_ctx *c, const xchg_message_info *info) {
  stream_stats *t = &c->stats;
  if (info->n_columns == 0 || (t->n_columns != 0 && t->n_columns != info->n_columns)) {
    t->columns_unknown = true;
    return;
  }
  if (t->column_wire == NULL) {
    t->column_wire = calloc((size_t)info->n_columns, sizeof *t->column_wire);
    t->column_decoded = calloc((size_t)info->n_columns, sizeof *t->column_decoded);
    t->n_columns = info->n_columns;
    if (t->column_wire == NULL || t->column_decoded == NULL) {
      c->out_of_memory = true;
      t->n_columns = 0;
      return;
    }
  }
  for (int64_t i = 0; i < info->n_columns; i++) {
    int64_t d = info->column_decoded_bytes[i];
    t->column_wire[i] += info->column_body_bytes[i];
    t->column_decoded[i] = t->column_decoded[i] < 0 || d < 0 ? -1 : t->column_decoded[i] + d;
  }
}

static void message_text(xs *out, const xchg_message_info *info) {
  xs_printf(out, "  #%lld %-13s offset %lld  ", (long long)info->index, kind_name(info->kind),
            (long long)info->offset);
  if (info->kind != XCHG_MESSAGE_SCHEMA) xs_printf(out, "rows %lld  ", (long long)info->rows);
  xs_printf(out, "metadata %lld B  body %lld B  ", (long long)info->metadata_bytes,
            (long long)info->body_bytes);
  if (info->kind != XCHG_MESSAGE_SCHEMA) /* no rows, no body to compress */
    xs_printf(out, "compression %s  ", xchg_block_codec_name(info->compression));
  xs_printf(out, "V%d", info->metadata_version);
  if (info->kind == XCHG_MESSAGE_DICTIONARY)
    xs_printf(out, "  dictionary id %lld%s", (long long)info->dictionary_id,
              info->is_delta ? " (delta)" : "");
  xs_putc(out, '\n');
  if (has_metadata(info->custom_metadata)) {
    xs_puts(out, "      custom metadata:\n");
    print_metadata(out, info->custom_metadata, "        ");
  }
}

static void json_metadata(xs *out, const char *metadata) {
  xc_meta_iter it;
  const char *key, *value;
  int32_t key_len, value_len;
  xc_meta_begin(&it, metadata);
  xs_putc(out, '{');
  for (bool first = true; xc_meta_next(&it, &key, &key_len, &value, &value_len); first = false) {
    if (!first) xs_puts(out, ", ");
    xv_json_string(out, (const uint8_t *)key, key_len);
    xs_puts(out, ": ");
    xv_json_string(out, (const uint8_t *)value, value_len);
  }
  xs_putc(out, '}');
}

static void json_text(xs *out, const char *text) {
  xv_json_string(out, (const uint8_t *)text, (int64_t)strlen(text));
}

static void message_json(xs *out, const xchg_message_info *info, bool first) {
  static const char *const kinds[] = {"", "schema", "dictionary", "record_batch"};
  xs_printf(
      out,
      "%s\n      {\"index\": %lld, \"kind\": \"%s\", \"offset\": %lld, \"rows\": %lld, "
      "\"metadata_bytes\": %lld, \"body_bytes\": %lld, \"compression\": \"%s\", \"version\": %d",
      first ? "" : ",", (long long)info->index, kinds[info->kind], (long long)info->offset,
      (long long)(info->kind == XCHG_MESSAGE_SCHEMA ? 0 : info->rows),
      (long long)info->metadata_bytes, (long long)info->body_bytes,
      xchg_block_codec_name(info->compression), info->metadata_version);
  if (info->kind == XCHG_MESSAGE_DICTIONARY)
    xs_printf(out, ", \"dictionary_id\": %lld, \"delta\": %s", (long long)info->dictionary_id,
              info->is_delta ? "true" : "false");
  xs_puts(out, ", \"custom_metadata\": ");
  json_metadata(out, info->custom_metadata);
  xs_putc(out, '}');
}

static void on_message(void *ctx, const xchg_message_info *info) {
  inspect_ctx *c = ctx;
  stream_stats *t = &c->stats;
  if (c->opt->messages && c->opt->json)
    message_json(&c->held, info, t->messages == 0);
  else if (c->opt->messages)
    message_text(&c->held, info);
  t->messages++;
  t->batches += info->kind == XCHG_MESSAGE_RECORD_BATCH;
  t->dictionaries += info->kind == XCHG_MESSAGE_DICTIONARY;
  t->rows += info->kind == XCHG_MESSAGE_RECORD_BATCH ? info->rows : 0;
  t->body_bytes += info->body_bytes;
  t->metadata_bytes += info->metadata_bytes;
  t->dictionary_body_bytes += info->kind == XCHG_MESSAGE_DICTIONARY ? info->body_bytes : 0;
  if (info->kind == XCHG_MESSAGE_RECORD_BATCH) add_column_bytes(c, info);
  if (info->kind == XCHG_MESSAGE_RECORD_BATCH && t->codec < 0) t->codec = (int)info->compression;
}

/* Reads every batch, so that every message is seen (and checked). */
static xchg_status read_all(xchg_ipc_reader *reader, xchg_error *err) {
  for (;;) {
    struct ArrowArray batch;
    xchg_status st = xchg_ipc_reader_next(reader, &batch, err);
    if (st != XCHG_OK) return st;
    if (batch.release == NULL) return XCHG_OK;
    batch.release(&batch);
  }
}

/* ---- text -------------------------------------------------------------------- */

static void print_format(xs *out, xchg_ipc_reader *reader) {
  int64_t footer_batches = xchg_ipc_reader_num_batches(reader);
  if (xchg_ipc_reader_format(reader) == XCHG_IPC_FILE && footer_batches >= 0) {
    xs_puts(out, "format: Arrow IPC file (");
    count(out, footer_batches, "record batch", "record batches");
    xs_puts(out, " in the footer)\n");
  } else if (xchg_ipc_reader_format(reader) ==
             XCHG_IPC_FILE) { /* a pipe or a codec: the footer is out of reach */
    xs_puts(out, "format: Arrow IPC file (read in order; its footer is checked at the end)\n");
  } else {
    xs_puts(out, "format: Arrow IPC stream\n");
  }
}

/* "2 record batches, 17 rows, 3 dictionary batches; metadata 1.3 KiB (1312 B), body 760 B" */
static void print_counts(xs *out, const stream_stats *t) {
  count(out, t->batches, "record batch", "record batches");
  xs_puts(out, ", ");
  count(out, t->rows, "row", "rows");
  xs_puts(out, ", ");
  count(out, t->dictionaries, "dictionary batch", "dictionary batches");
  xs_puts(out, "; metadata ");
  xc_human_size(out, t->metadata_bytes);
  xs_puts(out, ", body ");
  xc_human_size(out, t->body_bytes);
  xs_putc(out, '\n');
}

static void print_ratio(xs *out, int64_t wire, int64_t decoded) {
  if (decoded < 0)
    xs_puts(out, "  decoded ?  ratio ?");
  else {
    xs_puts(out, "  decoded ");
    xc_human_size(out, decoded);
    if (wire > 0) xs_printf(out, "  ratio %.2f", (double)decoded / (double)wire);
  }
  xs_putc(out, '\n');
}

static void print_columns(xs *out, const stream_stats *t, const struct ArrowSchema *schema) {
  /* No columns, no buffers: nothing to tell apart, nothing to list. */
  if (t->batches == 0 || schema->n_children == 0) return;
  if (t->columns_unknown || t->n_columns != schema->n_children) {
    xs_puts(
        out,
        "columns: (body bytes per column unknown: a batch's buffers could not be told apart)\n");
    return;
  }
  xs_puts(out, "columns (record batch buffers, padding excluded):\n");
  for (int64_t i = 0; i < t->n_columns; i++) {
    xs_printf(out, "  [%lld] ", (long long)i);
    xv_name(out, schema->children[i]->name, ":");
    xs_puts(out, ": body ");
    xc_human_size(out, t->column_wire[i]);
    print_ratio(out, t->column_wire[i], t->column_decoded[i]);
  }
  if (t->dictionaries > 0) {
    xs_puts(out, "  dictionaries: body ");
    xc_human_size(out, t->dictionary_body_bytes);
    xs_putc(out, '\n');
  }
}

/* The stream's header line goes to head ("IPC stream 2 at byte 4096"),
 * the rest to out (see add_first_stream). */
static void print_stream_text(xs *head, xs *out, const xc_input *in, xchg_ipc_reader *reader,
                              const struct ArrowSchema *schema, inspect_ctx *c, bool complete) {
  xs_printf(head, "IPC %s %lld at %sbyte %llu",
            xchg_ipc_reader_format(reader) == XCHG_IPC_FILE ? "file" : "stream",
            (long long)in->streams, in->codec != XCHG_STREAM_NONE ? "decoded " : "",
            (unsigned long long)in->stream_start);
  if (in->codec == XCHG_STREAM_COMET)
    xs_printf(head, " (Comet block, field count %lld)", (long long)xc_input_comet_field_count(in));
  xs_putc(head, '\n');
  print_format(out, reader);
  xs_puts(out, complete ? "summary: " : "summary (up to the error): ");
  print_counts(out, &c->stats);
  print_schema(out, schema);
  print_columns(out, &c->stats, schema);
  if (c->opt->messages) {
    xs_puts(out, "messages:\n");
    xs_append(out, c->held.data, c->held.len);
  }
}

/* ---- JSON -------------------------------------------------------------------- */

static void json_schema(xs *out, const struct ArrowSchema *schema) {
  xs_puts(out, "{\"fields\": [");
  xs type;
  xs_init(&type, NULL);
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *f = schema->children[i];
    xs_puts(out, i ? ", {\"name\": " : "{\"name\": ");
    json_text(out, f->name ? f->name : "");
    xs_clear(&type);
    xc_type_name(&type, f);
    xs_puts(out, ", \"type\": ");
    json_text(out, xs_cstr(&type));
    xs_printf(out, ", \"nullable\": %s, \"metadata\": ",
              (f->flags & ARROW_FLAG_NULLABLE) ? "true" : "false");
    json_metadata(out, f->metadata);
    int32_t len;
    const char *ext = xc_meta_find(f->metadata, "ARROW:extension:name", &len);
    xs_puts(out, ", \"extension\": ");
    if (ext != NULL)
      xv_json_string(out, (const uint8_t *)ext, len);
    else
      xs_puts(out, "null");
    xs_putc(out, '}');
  }
  if (xs_failed(&type)) out->failed = true;
  xs_free(&type);
  xs_puts(out, "], \"metadata\": ");
  json_metadata(out, schema->metadata);
  xs_putc(out, '}');
}

/* Column i's "body_bytes" and "decoded_bytes": 0 without any record batch,
 * null where they are not known. */
static void json_column_bytes(xs *out, const stream_stats *t, bool known, int64_t i) {
  if (t->batches == 0) {
    xs_puts(out, ", \"body_bytes\": 0, \"decoded_bytes\": 0");
  } else if (!known) {
    xs_puts(out, ", \"body_bytes\": null, \"decoded_bytes\": null");
  } else {
    xs_printf(out, ", \"body_bytes\": %lld, \"decoded_bytes\": ", (long long)t->column_wire[i]);
    if (t->column_decoded[i] >= 0)
      xs_printf(out, "%lld", (long long)t->column_decoded[i]);
    else
      xs_puts(out, "null");
  }
}

static void json_columns(xs *out, const stream_stats *t, const struct ArrowSchema *schema) {
  xs_puts(out, ", \"columns\": [");
  bool known = !t->columns_unknown && t->n_columns == schema->n_children;
  for (int64_t i = 0; i < schema->n_children; i++) {
    xs_puts(out, i ? ", {\"name\": " : "{\"name\": ");
    json_text(out, schema->children[i]->name ? schema->children[i]->name : "");
    json_column_bytes(out, t, known, i);
    xs_putc(out, '}');
  }
  xs_putc(out, ']');
}

static void print_stream_json(xs *out, const xc_input *in, xchg_ipc_reader *reader,
                              const struct ArrowSchema *schema, inspect_ctx *c) {
  const stream_stats *t = &c->stats;
  xs_printf(out, "%s\n    {\"offset\": %llu, \"format\": \"%s\", \"schema\": ",
            in->streams > 1 ? "," : "", (unsigned long long)in->stream_start,
            xchg_ipc_reader_format(reader) == XCHG_IPC_FILE ? "file" : "stream");
  json_schema(out, schema);
  xs_printf(out,
            ", \"record_batches\": %lld, \"rows\": %lld, \"dictionary_batches\": %lld, "
            "\"metadata_bytes\": %lld, \"body_bytes\": %lld, \"dictionary_body_bytes\": %lld",
            (long long)t->batches, (long long)t->rows, (long long)t->dictionaries,
            (long long)t->metadata_bytes, (long long)t->body_bytes,
            (long long)t->dictionary_body_bytes);
  json_columns(out, t, schema);
  if (c->opt->messages) {
    xs_puts(out, ", \"messages\": [");
    xs_append(out, c->held.data, c->held.len);
    xs_puts(out, "]");
  }
  xs_putc(out, '}');
}

/* ---- streams ------------------------------------------------------------------ */

static void add_totals(stream_stats *sum, const stream_stats *t) {
  sum->messages += t->messages;
  sum->batches += t->batches;
  sum->dictionaries += t->dictionaries;
  sum->rows += t->rows;
  sum->body_bytes += t->body_bytes;
  sum->metadata_bytes += t->metadata_bytes;
  sum->dictionary_body_bytes += t->dictionary_body_bytes;
}

/* What inspect learns of the input's IPC streams as it reads them. */
typedef struct input_stats {
  stream_stats sum;
  int64_t by_codec[4]; /* IPC streams by the body compression of their first record batch */
  int64_t files;       /* those of them in the IPC file format */
} input_stats;

/* Reads the next IPC stream of the input, then shows it, summary first
 * (its header line in head, in text); *at_end when there is none.  A
 * stream that fails part way is shown as far as it was read, before the
 * error. */
static xchg_status inspect_stream(xc_input *in, const inspect_opts *opt, xs *head, xs *out,
                                  input_stats *all, bool *at_end, xchg_error *err) {
  inspect_ctx c = {.opt = opt, .stats = {.codec = -1}};
  xs_init(&c.held, NULL);
  xchg_ipc_read_options ropts;
  xchg_ipc_read_options_init(&ropts);
  ropts.on_message = on_message;
  ropts.on_message_ctx = &c;
  xchg_ipc_reader *reader = NULL;
  xchg_status st = xc_input_next(in, &ropts, &reader, err);
  *at_end = st == XCHG_OK && reader == NULL;
  struct ArrowSchema schema = {0};
  if (reader != NULL) st = xchg_ipc_reader_schema(reader, &schema, err);
  if (schema.release != NULL) {
    xchg_status read = read_all(reader, err);
    if (opt->json)
      print_stream_json(out, in, reader, &schema, &c);
    else
      print_stream_text(head, out, in, reader, &schema, &c, read == XCHG_OK);
    schema.release(&schema);
    add_totals(&all->sum, &c.stats);
    all->by_codec[c.stats.codec < 0 ? XCHG_BLOCK_NONE : c.stats.codec]++;
    all->files += xchg_ipc_reader_format(reader) == XCHG_IPC_FILE;
    st = read;
  }
  if ((xs_failed(&c.held) || c.out_of_memory) && st == XCHG_OK)
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xs_free(&c.held);
  free(c.stats.column_wire);
  free(c.stats.column_decoded);
  xc_input_end_stream(in, reader);
  if (st != XCHG_OK) xc_input_locate_error(in, err);
  return st;
}

/* The sum over several IPC streams (and files), and what the codec took
 * in and gave out. */
static void print_input_totals(xs *out, const xc_input *in, const input_stats *all) {
  if (in->streams != 1) {
    int64_t streams = in->streams - all->files;
    xs_puts(out, "input: ");
    if (streams > 0 || all->files == 0) count(out, streams, "IPC stream", "IPC streams");
    if (streams > 0 && all->files > 0) xs_puts(out, " and ");
    if (all->files > 0) count(out, all->files, "IPC file", "IPC files");
    xs_puts(out, in->streams == 0 && in->codec == XCHG_STREAM_COMET
                     ? " (an empty Comet input: no batches)"
                     : "");
    xs_puts(out, ", ");
    print_counts(out, &all->sum);
  }
  if (in->stream != NULL && in->codec != XCHG_STREAM_NONE) xc_print_codec_bytes(out, in->stream);
}

static void print_input_totals_json(xs *out, const xc_input *in, const stream_stats *sum) {
  xs_printf(
      out,
      "\n  ],\n  \"totals\": {\"streams\": %lld, \"record_batches\": %lld, \"rows\": %lld, "
      "\"dictionary_batches\": %lld, \"metadata_bytes\": %lld, \"body_bytes\": %lld},\n  \"codec_bytes\": ",
      (long long)in->streams, (long long)sum->batches, (long long)sum->rows,
      (long long)sum->dictionaries, (long long)sum->metadata_bytes, (long long)sum->body_bytes);
  if (in->stream != NULL && in->codec != XCHG_STREAM_NONE) {
    xchg_istream_metrics m;
    xchg_istream_get_metrics(in->stream, &m);
    xs_printf(out, "{\"compressed\": %lld, \"decoded\": %lld}", (long long)m.compressed_bytes,
              (long long)m.decompressed_bytes);
  } else {
    xs_puts(out, "null");
  }
}

static const char *const block_codecs[4] = {"none", "lz4", "zstd", "snappy"};

/* "157 Comet blocks (lz4), 10000 rows, 101 KiB (103461 B) on the wire,
 * coalesced into 2 batches, target 8192 rows" (a batch holds whole
 * blocks up to at least the target; the last may be shorter). */
static void print_blocks(xs *out, const xc_blocks_summary *b, bool comet) {
  xs_puts(out, "blocks: ");
  count(out, b->blocks, comet ? "Comet block" : "IPC stream",
        comet ? "Comet blocks" : "IPC streams");
  const char *sep = " (";
  for (int c = 0; c < 4; c++) {
    if (b->by_codec[c] == 0) continue;
    xs_printf(out, "%s%s", sep, block_codecs[c]);
    if (b->by_codec[c] != b->blocks) xs_printf(out, " %lld", (long long)b->by_codec[c]);
    sep = ", ";
  }
  xs_printf(out, "%s, ", sep[0] == ',' ? ")" : "");
  count(out, b->rows, "row", "rows");
  xs_puts(out, ", ");
  xc_human_size(out, b->wire_bytes);
  /* convert coalesces Comet blocks so, but keeps plain IPC streams'
   * batches as they are: the line must not promise what it then does not do */
  xs_printf(out, " on the wire, %s %lld batch%s, target %d rows%s\n",
            comet ? "coalesced into" : "which a shuffle reader coalesces into",
            (long long)b->batches, b->batches == 1 ? "" : "es", XC_BLOCK_BATCH_ROWS,
            comet ? "" : " (convert keeps their batches unless --batch-rows is given)");
}

/* convert_batches: what `convert` writes without --batch-rows (the
 * coalesced batches of Comet blocks, the record batches of plain IPC
 * streams as they are), beside what a shuffle reader makes of them. */
static void print_blocks_json(xs *out, const xc_blocks_summary *b, int64_t convert_batches) {
  xs_printf(out,
            ",\n  \"blocks\": {\"count\": %lld, \"rows\": %lld, \"wire_bytes\": %lld, "
            "\"batches\": %lld, \"batch_rows\": %d, \"convert_batches\": %lld, \"codecs\": {",
            (long long)b->blocks, (long long)b->rows, (long long)b->wire_bytes,
            (long long)b->batches, XC_BLOCK_BATCH_ROWS, (long long)convert_batches);
  for (int c = 0, n = 0; c < 4; c++)
    if (b->by_codec[c] > 0)
      xs_printf(out, "%s\"%s\": %lld", n++ ? ", " : "", block_codecs[c], (long long)b->by_codec[c]);
  xs_puts(out, "}}");
}

/* A file of blocks — Comet blocks, or several IPC streams, as a shuffle
 * writer writes them — is summed up as the shuffle reader reads it
 * (standard input too: see spool_blocks).  IPC streams in a stream codec
 * are so too: the same streams, compressed or not, make the same report
 * but for the codec's lines. */
static bool file_of_blocks(const xc_input *in, const input_stats *all) {
  if (in->codec == XCHG_STREAM_COMET) return in->streams > 0;
  return in->streams > 1 && all->files == 0;
}

/* The blocks as the shuffle reader reads them; *summed when it did.
 * Comet blocks it cannot read are an error; plain IPC streams that are not
 * one table (another schema, say), and Comet blocks that state no field
 * count, which inspect shows all the same, get a line saying why instead. */
static xchg_status inspect_blocks(xs *out, const char *path, const xc_input *in,
                                  const input_stats *all, const inspect_opts *opt, bool *summed,
                                  xchg_error *err) {
  *summed = false;
  if (!file_of_blocks(in, all)) return XCHG_OK;
  bool comet = in->codec == XCHG_STREAM_COMET;
  xc_blocks_summary b;
  xchg_error why;
  xchg_status st = xc_blocks_summarize(path, in->codec, in->allow_missing_eos, &b, &why);
  if (st != XCHG_OK && comet && !b.no_field_count) {
    *err = why;
    return st;
  }
  if (st != XCHG_OK) {
    if (opt->json) {
      xs_puts(out, ",\n  \"blocks\": {\"error\": ");
      json_text(out, why.message);
      xs_putc(out, '}');
    } else {
      xs_printf(out, "blocks: not read as shuffle blocks: %s\n", why.message);
    }
    return XCHG_OK;
  }
  if (!comet) memcpy(b.by_codec, all->by_codec, sizeof b.by_codec);
  if (opt->json)
    print_blocks_json(out, &b, comet ? b.batches : all->sum.batches);
  else
    print_blocks(out, &b, comet);
  *summed = true;
  return XCHG_OK;
}

/* The first IPC stream, after its header line, which only the input's
 * end tells to show, as the input is read stream by stream: a plain IPC
 * stream alone needs none; one of several is numbered as the others are. */
static void add_first_stream(xs *out, const xs *head, const xs *first, const xc_input *in) {
  if (head->len > 0 && (in->codec != XCHG_STREAM_NONE || in->streams > 1))
    xs_append(out, head->data, head->len);
  if (first->len > 0) xs_append(out, first->data, first->len);
  if (xs_failed(head) || xs_failed(first)) out->failed = true;
}

/* The IPC streams after the first of a file of blocks (thousands of tiny
 * ones, of one schema, as the shuffle reader checked) are shown only with
 * --streams. */
static void add_later_streams(xs *out, const xs *later, const xc_input *in, bool summed,
                              const inspect_opts *opt) {
  if (later->len == 0) {
    return;
  } else if (!summed || opt->streams) {
    xs_append(out, later->data, later->len);
  } else if (!opt->json && in->streams == 2) {
    xs_puts(out, "IPC stream 2, of the first one's schema: not shown (--streams shows it)\n");
  } else if (!opt->json) {
    xs_printf(out,
              "IPC streams 2 to %lld, of the first one's schema: not shown (--streams shows "
              "each)\n",
              (long long)in->streams);
  }
}

static void print_header(xs *out, const char *path, const xc_input *in, const inspect_opts *opt) {
  if (!opt->json) {
    xs_printf(out, "file: %s\n", xc_input_label(path));
    if (in->codec != XCHG_STREAM_NONE)
      xs_printf(out, "codec: %s\n", xchg_stream_codec_name(in->codec));
    return;
  }
  xs_puts(out, "{\n  \"file\": ");
  json_text(out, xc_input_label(path));
  xs_puts(out, ",\n  \"codec\": ");
  if (in->codec != XCHG_STREAM_NONE)
    json_text(out, xchg_stream_codec_name(in->codec));
  else
    xs_puts(out, "null");
  xs_puts(out, ",\n  \"streams\": [");
}

/* Standard input that may be a file of blocks (Comet blocks, or IPC
 * streams, plain or in a stream codec: any input) is read twice, as such
 * a file is: once per IPC stream, once by the shuffle reader.  A pipe
 * cannot be, so it is copied to a temporary file first, and inspect shows
 * and says of it what it would of the file; so is a named FIFO (<(...),
 * /dev/stdin). */
static xchg_status spool_blocks(const char *path, xchg_error *err) {
  xchg_status st = xc_pipe_named(path, err); /* a named FIFO is read as "-" is */
  if (st != XCHG_OK || !xc_is_piped(path)) return st;
  return xc_stdin_spool(err);
}

static int inspect(const char *path, xchg_stream_codec codec, const inspect_opts *opt) {
  xchg_error err = {{0}};
  xc_input in = {0};
  if (spool_blocks(path, &err) != XCHG_OK ||
      xc_input_open(&in, path, codec, false, NULL, opt->allow_missing_eos, -1, &err) != XCHG_OK) {
    xc_input_close(&in);
    return xc_runtime_error(path, err.message);
  }
  /* Held until the whole input is read: a failure prints nothing but the
   * error.  The first stream and its header line apart, for
   * add_first_stream; the streams after it, for add_later_streams. */
  xs out, head, first, later, tail;
  xs_init(&out, NULL);
  xs_init(&head, NULL);
  xs_init(&first, NULL);
  xs_init(&later, NULL);
  xs_init(&tail, NULL);
  print_header(&out, path, &in, opt);
  input_stats all = {0};
  bool at_end = false;
  xchg_status st = XCHG_OK;
  while (st == XCHG_OK && !at_end) {
    bool first_one = in.streams == 0;
    st = inspect_stream(&in, opt, first_one ? &head : &later, first_one ? &first : &later, &all,
                        &at_end, &err);
  }
  bool summed = false;
  if (st == XCHG_OK && opt->json)
    print_input_totals_json(&tail, &in, &all.sum);
  else if (st == XCHG_OK)
    print_input_totals(&tail, &in, &all);
  if (st == XCHG_OK) st = inspect_blocks(&tail, path, &in, &all, opt, &summed, &err);
  if (st == XCHG_OK) {
    add_first_stream(&out, &head, &first, &in);
    add_later_streams(&out, &later, &in, summed, opt);
    if (tail.len > 0) xs_append(&out, tail.data, tail.len);
    if (xs_failed(&later) || xs_failed(&tail)) out.failed = true;
  }
  if (st == XCHG_OK && opt->json) xs_puts(&out, "\n}\n");
  xs_free(&head);
  xs_free(&first);
  xs_free(&later);
  xs_free(&tail);
  int rc = xc_print_report(&out, st, path, &err);
  xc_input_close(&in);
  return rc;
}

int xc_cmd_inspect(int argc, char **argv) {
  static const struct option longs[] = {{"input-codec", required_argument, NULL, 'i'},
                                        {"codec", required_argument, NULL, 'C'},
                                        {"head", required_argument, NULL, 'H'},
                                        {"messages", no_argument, NULL, 'm'},
                                        {"streams", no_argument, NULL, 's'},
                                        {"json", no_argument, NULL, 'j'},
                                        {"rows", no_argument, NULL, 'r'},
                                        {"allow-missing-eos", no_argument, NULL, 'E'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  xchg_stream_codec codec = XCHG_STREAM_AUTO;
  inspect_opts opt = {0};
  bool rows = false;
  int64_t head = -1;
  int o, rc;
  xc_options_begin();
  while ((o = xc_getopt(argc, argv, ":h", longs)) != -1) {
    switch (o) {
      case 'C': xc_deprecated_option("inspect", "--codec", "--input-codec"); /* fall through */
      case 'i':
        if ((rc = xc_stream_codec_option("inspect", optarg, false, &codec)) >= 0) return rc;
        break;
      case 'H':
        if (!xc_int_option("inspect", "--head", optarg, 0, INT64_MAX, &head)) return XC_EXIT_USAGE;
        break;
      case 'm': opt.messages = true; break;
      case 's': opt.streams = true; break;
      case 'j': opt.json = true; break;
      case 'r': rows = true; break;
      case 'E': opt.allow_missing_eos = true; break;
      case 'h': fputs(inspect_help, stdout); return XC_EXIT_OK;
      default: return xc_option_error("inspect", argv, longs, o);
    }
  }
  const char *path;
  if ((rc = xc_one_input("inspect", argc, argv, &path)) >= 0) return rc;
  int refused = xc_refuse_stdout_input(path);
  if (refused >= 0) return refused;
  if (rows && (opt.messages || opt.json))
    return xc_usage_error(
        "inspect", "--rows shows rows, not IPC messages: it takes neither --messages nor --json");
  if (rows && opt.streams) return xc_usage_error("inspect", "--streams goes without --rows");
  if (rows && opt.allow_missing_eos)
    return xc_usage_error(
        "inspect", "--allow-missing-eos goes without --rows: rows have no end-of-stream marker");
  if (!rows && head >= 0) return xc_usage_error("inspect", "--head goes with --rows");
  if (rows) return xc_inspect_rows(path, codec, head < 0 ? 5 : head);
  return inspect(path, codec, &opt);
}
