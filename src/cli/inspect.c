/* inspect.c — `xchg inspect FILE|-`: what is in an Arrow IPC input. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/strbuf.h"
#include "cli/types.h"
#include "cli/values.h"

static const char inspect_help[] =
    "usage: xchg inspect FILE|-\n\n"
    "Shows what an Arrow IPC file or stream holds ('-' reads standard input):\n"
    "  - the format (IPC file or stream, detected from the first bytes);\n"
    "  - the schema: every field with its type, nullability, metadata and\n"
    "    extension type, and the schema's own metadata;\n"
    "  - every message read after the schema: its kind, index, byte offset,\n"
    "    rows, metadata and body bytes, body compression, dictionary id and\n"
    "    delta flag, custom metadata;\n"
    "  - totals.\n";

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

static int inspect(const char *path) {
  xchg_error err = {{0}};
  xchg_ipc_reader *reader = NULL;
  if (xc_open_input(path, &reader, &err) != XCHG_OK) return xc_runtime_error(path, err.message);
  xs out;
  xs_init(&out, stdout);
  struct ArrowSchema schema;
  int rc = XC_EXIT_OK;
  if (xchg_ipc_reader_schema(reader, &schema, &err) != XCHG_OK) {
    xchg_ipc_reader_close(reader);
    return xc_runtime_error(path, err.message);
  }
  xs_printf(&out, "file: %s\n", xc_input_label(path));
  int64_t footer_batches = xchg_ipc_reader_num_batches(reader);
  if (xchg_ipc_reader_format(reader) == XCHG_IPC_FILE && footer_batches >= 0)
    xs_printf(&out, "format: Arrow IPC file (%lld record batches in the footer)\n", (long long)footer_batches);
  else if (xchg_ipc_reader_format(reader) == XCHG_IPC_FILE) /* a pipe: the footer is out of reach */
    xs_puts(&out, "format: Arrow IPC file (read in order, without its footer)\n");
  else
    xs_puts(&out, "format: Arrow IPC stream\n");
  print_schema(&out, &schema);
  schema.release(&schema);

  inspect_totals totals = {.out = &out};
  xs_puts(&out, "messages:\n");
  xchg_ipc_reader_on_message(reader, on_message, &totals);
  xchg_status st = read_all(reader, &out, &err);
  xchg_ipc_reader_on_message(reader, NULL, NULL);
  xs_printf(&out, "totals: %lld messages (%lld dictionary batches, %lld record batches), %lld rows, "
            "%lld metadata bytes, %lld body bytes\n",
            (long long)totals.messages, (long long)totals.dictionaries, (long long)totals.batches,
            (long long)totals.rows, (long long)totals.metadata_bytes, (long long)totals.body_bytes);
  xs_flush(&out);
  if (st != XCHG_OK)
    rc = xc_runtime_error(path, err.message);
  else if (xs_failed(&out) || fflush(stdout) != 0)
    rc = xc_runtime_error(path, "cannot write the output");
  xs_free(&out);
  xchg_ipc_reader_close(reader);
  return rc;
}

int xc_cmd_inspect(int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (xc_is_help(argv[i])) {
      fputs(inspect_help, stdout);
      return XC_EXIT_OK;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return xc_usage_error("inspect", "unknown option '%s'", argv[i]);
    if (path != NULL) return xc_usage_error("inspect", "one input at a time ('%s' and '%s')", path, argv[i]);
    path = argv[i];
  }
  if (path == NULL) return xc_usage_error("inspect", "missing FILE (or '-' for standard input)");
  return inspect(path);
}
