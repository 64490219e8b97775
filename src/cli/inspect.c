/* inspect.c — `xchg inspect FILE|-`: what is in an Arrow IPC input. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/strbuf.h"
#include "cli/types.h"
#include "cli/values.h"

static const char inspect_help[] =
    "usage: xchg inspect FILE|- [--codec C]\n\n"
    "Shows what an Arrow IPC file or stream holds ('-' reads standard input):\n"
    "  - the stream codec around it, if any, and for each IPC stream inside:\n"
    "  - the format (IPC file or stream, detected from the first bytes);\n"
    "  - the schema: every field with its type, nullability, metadata and\n"
    "    extension type, and the schema's own metadata;\n"
    "  - every message, the schema message (#0) included: its kind, index,\n"
    "    byte offset (from the start of its IPC stream, in decoded bytes),\n"
    "    rows, metadata and body bytes, body compression, dictionary id and\n"
    "    delta flag, custom metadata;\n"
    "  - totals.\n\n" XC_CODEC_HELP;

typedef struct inspect_totals {
  xs *out;
  int64_t messages, batches, dictionaries, rows, body_bytes, metadata_bytes;
} inspect_totals;

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
    xs_printf(path, ".%s", child->name ? child->name : "");
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
  xs_printf(out, "schema: %lld field%s\n", (long long)schema->n_children, schema->n_children == 1 ? "" : "s");
  if (has_metadata(schema->metadata)) {
    xs_puts(out, "  metadata:\n");
    print_metadata(out, schema->metadata, "    ");
  }
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *field = schema->children[i];
    xs_printf(out, "  [%lld] %s: ", (long long)i, field->name ? field->name : "");
    xc_type_name(out, field);
    xs_puts(out, (field->flags & ARROW_FLAG_NULLABLE) ? ", nullable\n" : ", not null\n");
    print_extension(out, field, "      ");
    if (has_metadata(field->metadata)) {
      xs_puts(out, "      metadata:\n");
      print_metadata(out, field->metadata, "        ");
    }
    xs path;
    xs_init(&path, NULL);
    xs_puts(&path, field->name ? field->name : "");
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

static void on_message(void *ctx, const xchg_message_info *info) {
  inspect_totals *t = ctx;
  xs *out = t->out;
  if (info->kind == XCHG_MESSAGE_SCHEMA) /* no rows, no body to compress */
    xs_printf(out, "  #%lld %-13s offset %lld  metadata %lld B  body %lld B  V%d", (long long)info->index,
              kind_name(info->kind), (long long)info->offset, (long long)info->metadata_bytes,
              (long long)info->body_bytes, info->metadata_version);
  else
    xs_printf(out, "  #%lld %-13s offset %lld  rows %lld  metadata %lld B  body %lld B  compression %s  V%d",
              (long long)info->index, kind_name(info->kind), (long long)info->offset, (long long)info->rows,
              (long long)info->metadata_bytes, (long long)info->body_bytes,
              xchg_block_codec_name(info->compression), info->metadata_version);
  if (info->kind == XCHG_MESSAGE_DICTIONARY)
    xs_printf(out, "  dictionary id %lld%s", (long long)info->dictionary_id, info->is_delta ? " (delta)" : "");
  xs_putc(out, '\n');
  if (has_metadata(info->custom_metadata)) {
    xs_puts(out, "      custom metadata:\n");
    print_metadata(out, info->custom_metadata, "        ");
  }
  t->messages++;
  t->batches += info->kind == XCHG_MESSAGE_RECORD_BATCH;
  t->dictionaries += info->kind == XCHG_MESSAGE_DICTIONARY;
  t->rows += info->kind == XCHG_MESSAGE_RECORD_BATCH ? info->rows : 0;
  t->body_bytes += info->body_bytes;
  t->metadata_bytes += info->metadata_bytes;
  xs_maybe_flush(out);
}

/* Reads every batch, so that every message is seen (and checked). */
static xchg_status read_all(xchg_ipc_reader *reader, xs *out, xchg_error *err) {
  for (;;) {
    struct ArrowArray batch;
    xchg_status st = xchg_ipc_reader_next(reader, &batch, err);
    if (st != XCHG_OK) return st;
    if (batch.release == NULL) return XCHG_OK;
    batch.release(&batch);
    xs_maybe_flush(out);
  }
}

static void print_format(xs *out, xchg_ipc_reader *reader) {
  int64_t footer_batches = xchg_ipc_reader_num_batches(reader);
  if (xchg_ipc_reader_format(reader) == XCHG_IPC_FILE && footer_batches >= 0)
    xs_printf(out, "format: Arrow IPC file (%lld record batches in the footer)\n", (long long)footer_batches);
  else if (xchg_ipc_reader_format(reader) == XCHG_IPC_FILE) /* a pipe or a codec: the footer is out of reach */
    xs_puts(out, "format: Arrow IPC file (read in order; its footer is checked at the end)\n");
  else
    xs_puts(out, "format: Arrow IPC stream\n");
}

static void print_totals(xs *out, const char *label, const inspect_totals *t) {
  xs_printf(out, "%s: %lld messages (%lld dictionary batches, %lld record batches), %lld rows, "
            "%lld metadata bytes, %lld body bytes\n",
            label, (long long)t->messages, (long long)t->dictionaries, (long long)t->batches,
            (long long)t->rows, (long long)t->metadata_bytes, (long long)t->body_bytes);
}

static void add_totals(inspect_totals *sum, const inspect_totals *t) {
  sum->messages += t->messages;
  sum->batches += t->batches;
  sum->dictionaries += t->dictionaries;
  sum->rows += t->rows;
  sum->body_bytes += t->body_bytes;
  sum->metadata_bytes += t->metadata_bytes;
}

/* Shows the next IPC stream of the input; *at_end when there is none.
 * The reader reports the schema message while it opens, before the schema
 * is printed: that line is held back until the "messages:" heading. */
static xchg_status inspect_stream(xc_input *in, xs *out, inspect_totals *sum, bool *at_end, xchg_error *err) {
  xs held;
  xs_init(&held, NULL);
  inspect_totals t = {.out = &held};
  xchg_read_options opts;
  xchg_read_options_init(&opts);
  opts.on_message = on_message;
  opts.on_message_ctx = &t;
  xchg_ipc_reader *reader = NULL;
  xchg_status st = xc_input_next(in, &opts, &reader, err);
  *at_end = st == XCHG_OK && reader == NULL;
  struct ArrowSchema schema = {0};
  if (reader != NULL) st = xchg_ipc_reader_schema(reader, &schema, err);
  if (st == XCHG_OK && reader != NULL) {
    if (in->codec != XCHG_STREAM_NONE) {
      xs_printf(out, "IPC stream %lld at decoded byte %llu", (long long)in->streams,
                (unsigned long long)in->stream_start);
      if (in->codec == XCHG_STREAM_COMET)
        xs_printf(out, " (Comet block, field count %lld)", (long long)xc_input_comet_field_count(in));
      xs_putc(out, '\n');
    }
    print_format(out, reader);
    print_schema(out, &schema);
    schema.release(&schema);
    xs_puts(out, "messages:\n");
    xs_append(out, held.data, held.len);
    t.out = out;
    st = read_all(reader, out, err);
    print_totals(out, "totals", &t);
    add_totals(sum, &t);
  }
  if (xs_failed(&held) && st == XCHG_OK) st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xs_free(&held);
  xc_input_end_stream(in, reader);
  if (st != XCHG_OK) xc_input_locate_error(in, err);
  return st;
}

/* What the codec took in and gave out, and the sum over several streams. */
static void print_input_totals(xs *out, const xc_input *in, const inspect_totals *sum) {
  if (in->streams > 1) {
    char label[64];
    snprintf(label, sizeof label, "input totals (%lld IPC streams)", (long long)in->streams);
    print_totals(out, label, sum);
  }
  if (in->stream != NULL && in->codec != XCHG_STREAM_NONE) {
    xchg_stream_metrics m;
    xchg_istream_metrics(in->stream, &m);
    xs_printf(out, "codec %s: %lld compressed bytes, %lld decoded bytes\n", xchg_stream_codec_name(in->codec),
              (long long)m.compressed_bytes, (long long)m.decompressed_bytes);
  }
}

static int inspect(const char *path, xchg_stream_codec codec) {
  xchg_error err = {{0}};
  xc_input in;
  if (xc_input_open(&in, path, codec, &err) != XCHG_OK) return xc_runtime_error(path, err.message);
  xs out;
  xs_init(&out, stdout);
  xs_printf(&out, "file: %s\n", xc_input_label(path));
  if (in.codec != XCHG_STREAM_NONE) xs_printf(&out, "codec: %s\n", xchg_stream_codec_name(in.codec));
  inspect_totals sum = {0};
  bool at_end = false;
  xchg_status st = XCHG_OK;
  while (st == XCHG_OK && !at_end) st = inspect_stream(&in, &out, &sum, &at_end, &err);
  if (st == XCHG_OK) print_input_totals(&out, &in, &sum);
  xs_flush(&out);
  int rc = XC_EXIT_OK;
  if (st != XCHG_OK)
    rc = xc_runtime_error(path, err.message);
  else if (xs_failed(&out) || fflush(stdout) != 0)
    rc = xc_runtime_error(path, "cannot write the output");
  xs_free(&out);
  xc_input_close(&in);
  return rc;
}

int xc_cmd_inspect(int argc, char **argv) {
  const char *path = NULL;
  xchg_stream_codec codec = XCHG_STREAM_AUTO;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (xc_is_help(a)) {
      fputs(inspect_help, stdout);
      return XC_EXIT_OK;
    }
    if (strncmp(a, "--codec", 7) == 0 && (a[7] == '=' || a[7] == '\0')) {
      const char *name = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
      if (name == NULL) return xc_usage_error("inspect", "--codec wants a codec name");
      int rc = xc_stream_codec_option("inspect", name, &codec);
      if (rc >= 0) return rc;
      continue;
    }
    if (a[0] == '-' && a[1] != '\0') return xc_usage_error("inspect", "unknown option '%s'", a);
    if (path != NULL) return xc_usage_error("inspect", "one input at a time ('%s' and '%s')", path, a);
    path = a;
  }
  if (path == NULL) return xc_usage_error("inspect", "missing FILE (or '-' for standard input)");
  return inspect(path, codec);
}
