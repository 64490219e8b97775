/* cat.c — `xchg cat FILE|- [--columns a,b] [--limit N] [--format F]`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/arrow_json.h"
#include "cli/cli.h"
#include "cli/node.h"
#include "cli/rows.h"

static const char cat_help[] =
    "usage: xchg cat FILE|- [--columns a,b,...] [--limit N] [--format csv|json|arrow-json]\n\n"
    "Prints the rows of an Arrow IPC file or stream ('-' reads standard input).\n\n"
    "  --columns a,b   only these top-level columns, in this order\n"
    "  --limit N       stop after N rows\n"
    "  --format F      csv (default): a header line, then one line per row, quoted\n"
    "                    as RFC 4180 says; a null is an empty field, an empty\n"
    "                    string is \"\"; nested values are JSON text\n"
    "                  json: JSON Lines, one object per row; nested values as\n"
    "                    JSON arrays and objects\n"
    "                  arrow-json: Arrow's integration-test JSON format (schema,\n"
    "                    batches and dictionaries, buffer by buffer); it holds one\n"
    "                    dictionary per id, so a stream that replaces a dictionary\n"
    "                    is an error there (deltas are fine)\n\n"
    "Values in csv and json: integers in full (64-bit too), decimals as exact\n"
    "decimal text with their scale (JSON strings), floats with the fewest digits\n"
    "that read back exactly (NaN/Infinity as strings in JSON), binary as\n"
    "UPPERCASE HEX, dates and timestamps as ISO-8601 (timestamps with a time\n"
    "zone are shown in UTC, with a Z), durations and intervals as ISO-8601\n"
    "durations (PT1.500S, P14M, P1M2DT0.000000003S); dictionary-encoded values\n"
    "as the dictionary value, unions as the selected child's value, run-end\n"
    "encoded values as the run's value, lists and list views as arrays, structs\n"
    "as objects, maps as arrays of {\"key\": k, \"value\": v}.\n";

typedef enum cat_format { CAT_CSV, CAT_JSON, CAT_ARROW_JSON } cat_format;

typedef struct cat_options {
  const char *path;
  const char *columns; /* comma-separated names, or NULL for all */
  int64_t limit;       /* -1: no limit */
  cat_format format;
} cat_options;

/* The selected top-level columns: indices into the batch struct. */
typedef struct selection {
  int64_t *index;
  int count;
} selection;

/* ---- options ------------------------------------------------------------------ */

static int parse_limit(const char *text, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0) return 0;
  *out = v;
  return 1;
}

static int parse_format(const char *text, cat_format *out) {
  if (strcmp(text, "csv") == 0) *out = CAT_CSV;
  else if (strcmp(text, "json") == 0) *out = CAT_JSON;
  else if (strcmp(text, "arrow-json") == 0) *out = CAT_ARROW_JSON;
  else return 0;
  return 1;
}

/* "--name value" or "--name=value"; returns the value or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name) {
  size_t len = strlen(name);
  if (strncmp(argv[*i], name, len) != 0) return NULL;
  if (argv[*i][len] == '=') return argv[*i] + len + 1;
  if (argv[*i][len] != '\0' || *i + 1 >= argc) return NULL;
  return argv[++*i];
}

/* Returns -1 when the options are fine, else the exit code. */
static int parse_options(int argc, char **argv, cat_options *o) {
  memset(o, 0, sizeof *o);
  o->limit = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (xc_is_help(a)) {
      fputs(cat_help, stdout);
      return XC_EXIT_OK;
    }
    if ((v = option_value(argc, argv, &i, "--columns")) != NULL) {
      o->columns = v;
    } else if ((v = option_value(argc, argv, &i, "--limit")) != NULL) {
      if (!parse_limit(v, &o->limit)) return xc_usage_error("cat", "--limit wants a count of rows, not '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "--format")) != NULL) {
      if (!parse_format(v, &o->format))
        return xc_usage_error("cat", "unknown format '%s' (csv, json or arrow-json)", v);
    } else if (a[0] == '-' && a[1] != '\0') {
      return xc_usage_error("cat", "unknown option or missing value: '%s'", a);
    } else if (o->path != NULL) {
      return xc_usage_error("cat", "one input at a time ('%s' and '%s')", o->path, a);
    } else {
      o->path = a;
    }
  }
  if (o->path == NULL) return xc_usage_error("cat", "missing FILE (or '-' for standard input)");
  return -1;
}

/* ---- column selection --------------------------------------------------------- */

static int64_t find_column(const struct ArrowSchema *schema, const char *name, size_t len) {
  for (int64_t c = 0; c < schema->n_children; c++) {
    const char *field = schema->children[c]->name ? schema->children[c]->name : "";
    if (strlen(field) == len && memcmp(field, name, len) == 0) return c;
  }
  return -1;
}

static xchg_status select_columns(const struct ArrowSchema *schema, const char *names, selection *sel,
                                  xchg_error *err) {
  int64_t max = names ? 1 : schema->n_children;
  for (const char *p = names; p && *p; p++) max += *p == ',';
  sel->index = calloc((size_t)(max > 0 ? max : 1), sizeof *sel->index);
  sel->count = 0;
  if (sel->index == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (names == NULL) {
    for (int64_t c = 0; c < schema->n_children; c++) sel->index[sel->count++] = c;
    return XCHG_OK;
  }
  const char *p = names;
  for (;;) {
    size_t len = strcspn(p, ",");
    int64_t c = find_column(schema, p, len);
    if (c < 0) return xchg_errorf(err, XCHG_EINVAL, "no column named \"%.*s\"", (int)len, p);
    sel->index[sel->count++] = c;
    if (p[len] == '\0') return XCHG_OK;
    p += len + 1;
  }
}

static int compare_indices(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Asks the reader for the selected columns only, so that the others are
 * never decoded, and renumbers the selection for the projected schema
 * (which keeps schema order: the rank of each index among those chosen). */
static xchg_status project(xchg_ipc_reader *reader, struct ArrowSchema *schema, selection *sel,
                           xchg_error *err) {
  int64_t *chosen = malloc((size_t)sel->count * sizeof *chosen);
  if (chosen == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(chosen, sel->index, (size_t)sel->count * sizeof *chosen);
  qsort(chosen, (size_t)sel->count, sizeof *chosen, compare_indices);
  int64_t n = 0;
  for (int c = 0; c < sel->count; c++)
    if (n == 0 || chosen[n - 1] != chosen[c]) chosen[n++] = chosen[c];
  xchg_status s = xchg_ipc_reader_select_indices(reader, chosen, n, err);
  for (int c = 0; s == XCHG_OK && c < sel->count; c++) {
    const int64_t *at = bsearch(&sel->index[c], chosen, (size_t)n, sizeof *chosen, compare_indices);
    sel->index[c] = at - chosen;
  }
  free(chosen);
  if (s != XCHG_OK) return s;
  schema->release(schema);
  return xchg_ipc_reader_schema(reader, schema, err); /* leaves release NULL on failure */
}

/* ---- trees for the selected columns -------------------------------------------- */

typedef struct column_set {
  xc_node *nodes;
  const xc_node **ptrs;
  int count;
  int64_t n_dictionaries;
} column_set;

static void column_set_free(column_set *cs) {
  for (int c = 0; c < cs->count; c++) xc_node_free(&cs->nodes[c]);
  free(cs->nodes);
  free(cs->ptrs);
  memset(cs, 0, sizeof *cs);
}

/* batch may be NULL (schema only).  Dictionary ids are numbered over the
 * selected columns in order, the same way for the schema and every batch. */
static xchg_status column_set_build(column_set *cs, const struct ArrowSchema *schema,
                                    const struct ArrowArray *batch, const selection *sel, xchg_error *err) {
  memset(cs, 0, sizeof *cs);
  cs->nodes = calloc((size_t)sel->count + 1, sizeof *cs->nodes);
  cs->ptrs = calloc((size_t)sel->count + 1, sizeof *cs->ptrs);
  if (cs->nodes == NULL || cs->ptrs == NULL) {
    column_set_free(cs);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  for (int c = 0; c < sel->count; c++) {
    int64_t k = sel->index[c];
    const struct ArrowArray *array = batch ? batch->children[k] : NULL;
    xchg_status st = xc_node_build(&cs->nodes[c], schema->children[k], array, &cs->n_dictionaries, err);
    if (st != XCHG_OK) {
      column_set_free(cs);
      return st;
    }
    cs->ptrs[c] = &cs->nodes[c];
    cs->count = c + 1;
  }
  return XCHG_OK;
}

/* The batch must be a struct array shaped like the schema. */
static xchg_status check_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                               xchg_error *err) {
  if (batch->n_children != schema->n_children || (batch->n_children > 0 && batch->children == NULL) ||
      batch->length < 0 || batch->offset < 0 || batch->offset > INT64_MAX - batch->length)
    return xchg_errorf(err, XCHG_EFORMAT, "record batch does not match the schema (%lld columns, schema %lld)",
                       (long long)batch->n_children, (long long)schema->n_children);
  for (int64_t c = 0; c < batch->n_children; c++)
    if (batch->children[c] == NULL || batch->children[c]->length < batch->offset + batch->length)
      return xchg_errorf(err, XCHG_EFORMAT, "record batch column %lld is shorter than the batch", (long long)c);
  return XCHG_OK;
}

/* ---- output -------------------------------------------------------------------- */

typedef struct cat_state {
  const cat_options *opt;
  const struct ArrowSchema *schema;
  const selection *sel;
  xs out, scratch;
  xc_arrow_json json;
  int64_t remaining; /* rows still wanted; -1: all */
  int64_t *dict_ids; /* dictionary ids the input has sent, for arrow-json */
  int64_t n_dict_ids;
  bool out_of_memory;
} cat_state;

/* arrow-json: a dictionary message that is not a delta, for an id sent
 * before, replaces that dictionary. */
static void on_message(void *ctx, const xchg_message_info *info) {
  cat_state *st = ctx;
  if (info->kind != XCHG_MESSAGE_DICTIONARY) return;
  for (int64_t k = 0; k < st->n_dict_ids; k++) {
    if (st->dict_ids[k] != info->dictionary_id) continue;
    if (!info->is_delta) xc_arrow_json_note_replacement(&st->json);
    return;
  }
  int64_t *grown = realloc(st->dict_ids, (size_t)(st->n_dict_ids + 1) * sizeof *grown);
  if (grown == NULL) {
    st->out_of_memory = true;
    return;
  }
  st->dict_ids = grown;
  st->dict_ids[st->n_dict_ids++] = info->dictionary_id;
}

static xchg_status begin_output(cat_state *st, xchg_error *err) {
  column_set header;
  xchg_status s = column_set_build(&header, st->schema, NULL, st->sel, err);
  if (s != XCHG_OK) return s;
  if (st->opt->format == CAT_ARROW_JSON)
    s = xc_arrow_json_begin(&st->json, &st->out, st->schema, header.ptrs, header.count, header.n_dictionaries, err);
  else if (st->opt->format == CAT_CSV)
    xc_rows_header(&st->out, XC_ROWS_CSV, header.ptrs, header.count);
  column_set_free(&header);
  return s;
}

static xchg_status write_batch(cat_state *st, const struct ArrowArray *batch, xchg_error *err) {
  xchg_status s = check_batch(st->schema, batch, err);
  if (s != XCHG_OK) return s;
  column_set cols;
  if ((s = column_set_build(&cols, st->schema, batch, st->sel, err)) != XCHG_OK) return s;
  int64_t rows = batch->length;
  if (st->remaining >= 0 && rows > st->remaining) rows = st->remaining;
  if (st->opt->format == CAT_ARROW_JSON) {
    s = xc_arrow_json_batch(&st->json, cols.ptrs, cols.count, batch->offset, rows, err);
  } else {
    xc_row_format f = st->opt->format == CAT_CSV ? XC_ROWS_CSV : XC_ROWS_JSON;
    for (int64_t r = 0; r < rows && s == XCHG_OK; r++) {
      if (!xc_rows_write(&st->out, &st->scratch, f, cols.ptrs, cols.count, batch->offset + r))
        s = xchg_errorf(err, XCHG_EFORMAT, "row %lld of the batch refers outside its arrays", (long long)r);
      xs_maybe_flush(&st->out);
    }
  }
  if (st->remaining >= 0) st->remaining -= rows;
  column_set_free(&cols);
  xs_maybe_flush(&st->out);
  return s;
}

static xchg_status copy_rows(cat_state *st, xchg_ipc_reader *reader, xchg_error *err) {
  xchg_status s = begin_output(st, err);
  if (st->opt->format == CAT_ARROW_JSON) xchg_ipc_reader_on_message(reader, on_message, st);
  while (s == XCHG_OK && st->remaining != 0) {
    struct ArrowArray batch;
    if ((s = xchg_ipc_reader_next(reader, &batch, err)) != XCHG_OK || batch.release == NULL) break;
    s = write_batch(st, &batch, err);
    batch.release(&batch);
  }
  if (s == XCHG_OK && st->opt->format == CAT_ARROW_JSON) xc_arrow_json_end(&st->json);
  xchg_ipc_reader_on_message(reader, NULL, NULL);
  if (s == XCHG_OK && (xs_failed(&st->out) || xs_failed(&st->scratch) || st->out_of_memory))
    s = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return s;
}

static int cat(const cat_options *opt) {
  xchg_error err = {{0}};
  xchg_ipc_reader *reader = NULL;
  if (xc_open_input(opt->path, &reader, &err) != XCHG_OK) return xc_runtime_error(opt->path, err.message);
  struct ArrowSchema schema;
  if (xchg_ipc_reader_schema(reader, &schema, &err) != XCHG_OK) {
    xchg_ipc_reader_close(reader);
    return xc_runtime_error(opt->path, err.message);
  }
  selection sel = {0};
  cat_state st = {.opt = opt, .schema = &schema, .sel = &sel, .remaining = opt->limit};
  xs_init(&st.out, stdout);
  xs_init(&st.scratch, NULL);
  xchg_status s = strcmp(schema.format, "+s") == 0 ? XCHG_OK
                  : xchg_errorf(&err, XCHG_EFORMAT, "schema is not a struct (format \"%s\")", schema.format);
  if (s == XCHG_OK) s = select_columns(&schema, opt->columns, &sel, &err);
  if (s == XCHG_OK && opt->columns != NULL) s = project(reader, &schema, &sel, &err);
  if (s == XCHG_OK) s = copy_rows(&st, reader, &err);
  xs_flush(&st.out);
  int rc = XC_EXIT_OK;
  if (s != XCHG_OK)
    rc = xc_runtime_error(opt->path, err.message);
  else if (xs_failed(&st.out) || fflush(stdout) != 0)
    rc = xc_runtime_error(opt->path, "cannot write the output");
  xc_arrow_json_free(&st.json);
  free(st.dict_ids);
  xs_free(&st.out);
  xs_free(&st.scratch);
  free(sel.index);
  if (schema.release != NULL) schema.release(&schema);
  xchg_ipc_reader_close(reader);
  return rc;
}

int xc_cmd_cat(int argc, char **argv) {
  cat_options opt;
  int rc = parse_options(argc, argv, &opt);
  return rc >= 0 ? rc : cat(&opt);
}
