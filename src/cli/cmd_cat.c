/* cmd_cat.c — `xchg cat FILE|- [--columns a,b] [--limit N] [--format F]`. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render/arrow_json.h"
#include "cli/cli.h"
#include "cli/render/node.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/render/rows.h"
#include "cli/render/values.h"

static const char cat_help[] =
    "usage: xchg cat FILE|- [--columns a,b,...] [--limit N] [--format csv|json|arrow-json]\n"
    "                       [--input-codec C] [--allow-missing-eos]\n\n"
    "Prints the rows of an Arrow IPC file or stream ('-' reads standard input:\n"
    "redirected from a file, it is read as that file; piped, an IPC file whose\n"
    "schema is in its footer only, as Arrow JS writes it, is copied to a temporary\n"
    "file first, so that what follows it is read too).\n"
    "An input holding several IPC streams (see --input-codec) prints as one: they must\n"
    "have the same schema.  A file of Comet shuffle blocks (--input-codec comet, or\n"
    "detected) that state their field count is read by the shuffle reader, through\n"
    "once before anything is printed (with --limit N, the blocks of the first N rows\n"
    "only; no block after them is read for N up to 8192), so a cut block, a bad codec\n"
    "tag or another schema prints nothing (errors name the block and its byte\n"
    "offset); damaged values inside a block (offsets, compressed bytes) are found as\n"
    "its batch is decoded, after the batches before it are printed (--format\n"
    "arrow-json decodes every block in that first pass).  Blocks on standard input\n"
    "go through the shuffle reader too, with the same errors, read as they come: a\n"
    "bad block fails after the batches of 8192 rows before it are printed.  Blocks\n"
    "without a field count, and blocks on standard input with --format arrow-json,\n"
    "are read block by block.\n\n"
    "  --columns a,b   only these top-level columns, in this order; #N is the\n"
    "                    column at position N (from 0, as inspect lists them), for\n"
    "                    names that several columns share, or that hold a comma\n"
    "                    (a column named #N itself is taken by its name)\n"
    "  --limit N       stop after N rows (nothing after them is read: a stream cut\n"
    "                    or damaged past them prints them, exit 0)\n"
    "  --format F      csv (default): a header line, then one line per row, quoted\n"
    "                    as RFC 4180 says; a null is an empty field, an empty\n"
    "                    string is \"\"; nested values are JSON text; of one\n"
    "                    column, a null is \"\" too, as an empty line would be\n"
    "                    skipped by CSV readers (json tells them apart)\n"
    "                  json: JSON Lines, one object per row; nested values as\n"
    "                    JSON arrays and objects\n"
    "                  arrow-json: Arrow's integration-test JSON format (schema,\n"
    "                    batches and dictionaries, buffer by buffer); it holds one\n"
    "                    dictionary per id, so a stream that replaces a dictionary\n"
    "                    is an error there (deltas are fine)\n" XC_CODEC_HELP XC_MISSING_EOS_HELP
    "  --codec C       the old name of --input-codec (deprecated)\n\n"
    "Values in csv and json: integers in full (64-bit too), decimals as exact\n"
    "decimal text with their scale (JSON strings), floats with the fewest digits\n"
    "that read back exactly (NaN/Infinity as strings in JSON), binary as\n"
    "UPPERCASE HEX, dates and timestamps as ISO-8601 (timestamps with a time\n"
    "zone are shown in UTC, with a Z), durations and intervals as ISO-8601\n"
    "durations (PT1.500S, P14M, P1M2DT0.000000003S); dictionary-encoded values\n"
    "as the dictionary value, unions as the selected child's value, run-end\n"
    "encoded values as the run's value, lists and list views as arrays, structs\n"
    "as objects, maps as arrays of {\"key\": k, \"value\": v}.\n\n"
    "Progress is shown on standard error when it is a terminal.\n";

typedef enum cat_format { CAT_CSV, CAT_JSON, CAT_ARROW_JSON } cat_format;

typedef struct cat_options {
  const char *path;
  const char *columns; /* comma-separated names, or NULL for all */
  int64_t limit;       /* -1: no limit */
  cat_format format;
  xchg_stream_codec codec;
  bool allow_missing_eos;
} cat_options;

/* The selected top-level columns: indices into the batch struct. */
typedef struct selection {
  int64_t *index;
  int count;
  int64_t *chosen; /* with --columns: the columns asked of the reader, ascending */
  int64_t n_chosen;
  int64_t *first_dict; /* per selected column: where its dictionary ids begin */
} selection;

/* ---- options ------------------------------------------------------------------ */

static int parse_format(const char *text, cat_format *out) {
  if (strcmp(text, "csv") == 0)
    *out = CAT_CSV;
  else if (strcmp(text, "json") == 0)
    *out = CAT_JSON;
  else if (strcmp(text, "arrow-json") == 0)
    *out = CAT_ARROW_JSON;
  else
    return 0;
  return 1;
}

/* Returns -1 when the options are fine, else the exit code. */
static int parse_options(int argc, char **argv, cat_options *o) {
  static const struct option longs[] = {
      {"columns", required_argument, NULL, 'c'}, {"limit", required_argument, NULL, 'l'},
      {"format", required_argument, NULL, 'F'},  {"input-codec", required_argument, NULL, 'i'},
      {"codec", required_argument, NULL, 'C'},   {"allow-missing-eos", no_argument, NULL, 'E'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->limit = -1;
  o->codec = XCHG_STREAM_AUTO;
  int opt, rc;
  xc_options_begin();
  while ((opt = xc_getopt(argc, argv, ":h", longs)) != -1) {
    switch (opt) {
      case 'c': o->columns = optarg; break;
      case 'l':
        if (!xc_int_option("cat", "--limit", optarg, 0, INT64_MAX, &o->limit)) return XC_EXIT_USAGE;
        break;
      case 'F':
        if (!parse_format(optarg, &o->format))
          return xc_usage_error("cat", "unknown format '%s' (csv, json or arrow-json)", optarg);
        break;
      case 'C': xc_deprecated_option("cat", "--codec", "--input-codec"); /* fall through */
      case 'i':
        if ((rc = xc_stream_codec_option("cat", optarg, false, &o->codec)) >= 0) return rc;
        break;
      case 'E': o->allow_missing_eos = true; break;
      case 'h': fputs(cat_help, stdout); return XC_EXIT_OK;
      default: return xc_option_error("cat", argv, longs, opt);
    }
  }
  return xc_one_input("cat", argc, argv, &o->path);
}

/* ---- column selection --------------------------------------------------------- */

static bool field_named(const struct ArrowSchema *schema, int64_t c, const char *name, size_t len) {
  const char *field = schema->children[c]->name ? schema->children[c]->name : "";
  return strlen(field) == len && memcmp(field, name, len) == 0;
}

/* "a, b, c": the names --columns can choose from (quoted where a name
 * would read ambiguously: "c,d", "", "a\nb"), as many as fit in room
 * bytes, then how many more there are: an error message holds
 * XCHG_ERROR_MESSAGE_SIZE bytes, and a list cut off there would end in half
 * a name, a column that is not. */
static void list_columns(const struct ArrowSchema *schema, size_t room, xs *out) {
  static const char more[] = ", ... and 9223372036854775807 more";
  xs name;
  xs_init(&name, NULL);
  size_t used = 0;
  for (int64_t c = 0; c < schema->n_children; c++) {
    xs_clear(&name);
    xv_name(&name, schema->children[c]->name, ",");
    size_t need = (c > 0 ? 2 : 0) + name.len;
    bool last = c == schema->n_children - 1;
    if (used + need + (last ? 0 : sizeof more) > room) {
      xs_printf(out, "%s... and %lld more", c > 0 ? ", " : "", (long long)(schema->n_children - c));
      break;
    }
    xs_printf(out, "%s%.*s", c > 0 ? ", " : "", (int)name.len, name.data ? name.data : "");
    used += need;
  }
  xs_free(&name);
}

/* Whether name[0..len) is "#N", a position as inspect numbers columns. */
static bool is_position(const char *name, size_t len) {
  if (len < 2 || name[0] != '#') return false;
  for (size_t i = 1; i < len; i++)
    if (name[i] < '0' || name[i] > '9') return false;
  return true;
}

/* The column at position "#N", or an error saying the positions there are. */
static xchg_status column_position(const struct ArrowSchema *schema, const char *name, size_t len,
                                   int64_t *out, xchg_error *err) {
  int64_t at = 0;
  for (size_t i = 1; i < len && at < schema->n_children; i++) at = at * 10 + (name[i] - '0');
  if (at < schema->n_children) {
    *out = at;
    return XCHG_OK;
  }
  long long n = (long long)schema->n_children;
  if (n == 0)
    return xchg_errorf(err, XCHG_EINVAL,
                       "column position %.*s is out of range: the input has no columns", (int)len,
                       name);
  if (n == 1)
    return xchg_errorf(err, XCHG_EINVAL,
                       "column position %.*s is out of range: the input has 1 column, #0", (int)len,
                       name);
  return xchg_errorf(
      err, XCHG_EINVAL,
      "column position %.*s is out of range: the input has %lld columns, #0 to #%lld", (int)len,
      name, n, n - 1);
}

/* The column named name[0..len), or at position #N when no field has that
 * name.  A name no field has, or two fields have, is an error: a silent
 * first match could print the wrong column. */
static xchg_status find_column(const struct ArrowSchema *schema, const char *name, size_t len,
                               int64_t *out, xchg_error *err) {
  *out = -1;
  for (int64_t c = 0; c < schema->n_children; c++) {
    if (!field_named(schema, c, name, len)) continue;
    if (*out >= 0)
      return xchg_errorf(err, XCHG_EINVAL,
                         "column name \"%.*s\" is ambiguous: fields %lld and %lld both "
                         "have it (choose one by position: #%lld or #%lld)",
                         (int)len, name, (long long)*out, (long long)c, (long long)*out,
                         (long long)c);
    *out = c;
  }
  if (*out >= 0) return XCHG_OK;
  if (is_position(name, len)) return column_position(schema, name, len, out, err);
  static const char format[] = "no column named \"%.*s\" (the columns are: %s)";
  size_t fixed = sizeof format + len, room = sizeof err->message;
  xs names;
  xs_init(&names, NULL);
  list_columns(schema, fixed < room ? room - fixed : 0, &names);
  xchg_status st = xchg_errorf(err, XCHG_EINVAL, format, (int)len, name,
                               xs_failed(&names) ? "?" : xs_cstr(&names));
  xs_free(&names);
  return st;
}

static xchg_status select_columns(const struct ArrowSchema *schema, const char *names,
                                  selection *sel, xchg_error *err) {
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
    xchg_status st = find_column(schema, p, len, &sel->index[sel->count], err);
    if (st != XCHG_OK) return st;
    sel->count++;
    if (p[len] == '\0') return XCHG_OK;
    p += len + 1;
  }
}

static int compare_indices(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* With --columns: the columns to ask of the reader (ascending, once each),
 * and the selection renumbered for the projected schema, which keeps
 * schema order: the rank of each index among those chosen. */
static xchg_status choose_columns(selection *sel, xchg_error *err) {
  sel->chosen = malloc((size_t)sel->count * sizeof *sel->chosen);
  if (sel->chosen == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  memcpy(sel->chosen, sel->index, (size_t)sel->count * sizeof *sel->chosen);
  qsort(sel->chosen, (size_t)sel->count, sizeof *sel->chosen, compare_indices);
  int64_t n = 0;
  for (int c = 0; c < sel->count; c++)
    if (n == 0 || sel->chosen[n - 1] != sel->chosen[c]) sel->chosen[n++] = sel->chosen[c];
  sel->n_chosen = n;
  for (int c = 0; c < sel->count; c++) {
    const int64_t *at =
        bsearch(&sel->index[c], sel->chosen, (size_t)n, sizeof *sel->chosen, compare_indices);
    sel->index[c] = at - sel->chosen;
  }
  return XCHG_OK;
}

/* Asks the reader for the chosen columns only, so that the others are never
 * decoded. */
static xchg_status project(xchg_ipc_reader *reader, const selection *sel, xchg_error *err) {
  if (sel->chosen == NULL) return XCHG_OK;
  return xchg_ipc_reader_select_indices(reader, sel->chosen, sel->n_chosen, err);
}

/* ---- dictionary ids ---------------------------------------------------------------- */

/* Where each selected column's dictionary ids begin among the n_ids ids
 * of the (projected) schema: the ids run in schema order, the selection
 * may not. */
static xchg_status locate_dictionaries(const struct ArrowSchema *schema, selection *sel,
                                       int64_t n_ids, xchg_error *err) {
  int64_t *begins = malloc((size_t)(schema->n_children + 1) * sizeof *begins);
  sel->first_dict = calloc((size_t)(sel->count > 0 ? sel->count : 1), sizeof *sel->first_dict);
  xchg_status st = XCHG_OK;
  if (begins == NULL || sel->first_dict == NULL) {
    st = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  } else {
    begins[0] = 0;
    for (int64_t k = 0; k < schema->n_children; k++)
      begins[k + 1] = begins[k] + xc_count_dictionaries(schema->children[k]);
    for (int c = 0; c < sel->count; c++) sel->first_dict[c] = begins[sel->index[c]];
    if (begins[schema->n_children] != n_ids)
      st = xchg_errorf(err, XCHG_EFORMAT,
                       "the schema has %lld dictionary-encoded fields but the reader "
                       "lists %lld dictionary ids",
                       (long long)begins[schema->n_children], (long long)n_ids);
  }
  free(begins);
  return st;
}

/* The reader's dictionary ids for the (projected) schema. */
static xchg_status read_dictionary_ids(xchg_ipc_reader *reader, const struct ArrowSchema *schema,
                                       selection *sel, int64_t **ids, int64_t *n_ids,
                                       xchg_error *err) {
  *n_ids = xchg_ipc_reader_dictionary_ids(reader, NULL, 0);
  *ids = malloc((size_t)(*n_ids > 0 ? *n_ids : 1) * sizeof **ids);
  if (*ids == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_ipc_reader_dictionary_ids(reader, *ids, *n_ids);
  return locate_dictionaries(schema, sel, *n_ids, err);
}

/* ---- the same dictionary ids in every IPC stream ------------------------------- */

/* Rows of several IPC streams print in arrow-json as one table with the
 * first stream's dictionary ids (it holds one dictionary per id), so a
 * later stream must use the same ids in the selected columns (csv and
 * json show values, whatever their ids: Arrow JS numbers dictionaries
 * across all the tables of a process, so two of its streams concatenated
 * differ there).  The input asks
 * this of every IPC stream (xc_stream_check), from a file on disk while
 * reading it through before any output, so that such a file prints
 * nothing rather than its first stream's rows and then an error. */
typedef struct ids_check {
  const char *columns;      /* --columns */
  struct ArrowSchema first; /* the first IPC stream's whole schema */
  bool first_file;          /* the first one is in the IPC file format: named so */
  int64_t *ids;             /* its dictionary ids, whole schema */
  int64_t n_ids;
  selection sel; /* the selected columns, indices of the whole schema */
} ids_check;

static void selection_free(selection *sel);

static void ids_check_free(ids_check *c) {
  if (c->first.release != NULL) c->first.release(&c->first);
  free(c->ids);
  selection_free(&c->sel);
  c->ids = NULL;
  c->n_ids = 0;
}

/* The reader's dictionary ids for its whole schema; NULL when out of memory. */
static int64_t *whole_ids(const xchg_ipc_reader *reader, int64_t *n) {
  *n = xchg_ipc_reader_dictionary_ids(reader, NULL, 0);
  int64_t *ids = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *ids);
  if (ids != NULL) xchg_ipc_reader_dictionary_ids(reader, ids, *n);
  return ids;
}

/* The first differing id of a selected column, named with the column. */
static xchg_status compare_ids(const ids_check *c, const int64_t *ids, int64_t n, xchg_error *err) {
  const char *first = xc_ipc_kind(c->first_file);
  if (n != c->n_ids)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "its dictionary ids differ from the first IPC %s's: %lld here, %lld "
                       "in the first IPC %s",
                       first, (long long)n, (long long)c->n_ids, first);
  for (int k = 0; k < c->sel.count; k++) {
    int64_t col = c->sel.index[k], begin = 0;
    for (int64_t j = 0; j < col; j++) begin += xc_count_dictionaries(c->first.children[j]);
    int64_t end = begin + xc_count_dictionaries(c->first.children[col]);
    for (int64_t i = begin; i < end; i++)
      if (ids[i] != c->ids[i])
        return xchg_errorf(err, XCHG_EFORMAT,
                           "its dictionary ids differ from the first IPC %s's: column %lld "
                           "\"%s\": dictionary id %lld here, %lld in the first IPC %s",
                           first, (long long)col,
                           c->first.children[col]->name ? c->first.children[col]->name : "",
                           (long long)ids[i], (long long)c->ids[i], first);
  }
  return XCHG_OK;
}

/* xc_stream_check: the first IPC stream sets the ids (again when the
 * input is read a second time), the others must have them. */
static xchg_status check_ids(void *ctx, const xchg_ipc_reader *reader, int64_t stream,
                             xchg_error *err) {
  ids_check *c = ctx;
  int64_t n;
  int64_t *ids = whole_ids(reader, &n);
  if (ids == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (stream > 1) {
    xchg_status s = compare_ids(c, ids, n, err);
    free(ids);
    return s;
  }
  ids_check_free(c);
  c->ids = ids;
  c->n_ids = n;
  c->first_file = xchg_ipc_reader_format(reader) == XCHG_IPC_FILE;
  xchg_status s = xchg_ipc_reader_schema(reader, &c->first, err);
  if (s == XCHG_OK && c->first.n_children > 0)
    s = select_columns(&c->first, c->columns, &c->sel, err);
  return s;
}

/* ---- trees for the selected columns -------------------------------------------- */

typedef struct column_set {
  xc_node *nodes;
  const xc_node **ptrs;
  int count;
} column_set;

static void column_set_free(column_set *cs) {
  for (int c = 0; c < cs->count; c++) xc_node_free(&cs->nodes[c]);
  free(cs->nodes);
  free(cs->ptrs);
  memset(cs, 0, sizeof *cs);
}

/* batch may be NULL (schema only).  Dictionary-encoded fields get the
 * reader's ids, the same for the schema and every batch. */
static xchg_status column_set_build(column_set *cs, const struct ArrowSchema *schema,
                                    const struct ArrowArray *batch, const selection *sel,
                                    const int64_t *dict_ids, int64_t n_dict_ids, xchg_error *err) {
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
    xc_dict_ids ids = {dict_ids, n_dict_ids, sel->first_dict[c]};
    xchg_status st = xc_node_build(&cs->nodes[c], schema->children[k], array, &ids, err);
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
  if (batch->n_children != schema->n_children ||
      (batch->n_children > 0 && batch->children == NULL) || batch->length < 0 ||
      batch->offset < 0 || batch->offset > INT64_MAX - batch->length)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "record batch does not match the schema (%lld columns, schema %lld)",
                       (long long)batch->n_children, (long long)schema->n_children);
  for (int64_t c = 0; c < batch->n_children; c++)
    if (batch->children[c] == NULL || batch->children[c]->length < batch->offset + batch->length)
      return xchg_errorf(err, XCHG_EFORMAT, "record batch column %lld is shorter than the batch",
                         (long long)c);
  return XCHG_OK;
}

/* ---- output -------------------------------------------------------------------- */

typedef struct cat_state {
  const cat_options *opt;
  struct ArrowSchema first;  /* the first IPC stream's whole schema */
  struct ArrowSchema schema; /* its selected columns */
  selection sel;
  int64_t *dict_ids; /* the reader's dictionary ids for schema */
  int64_t n_dict_ids;
  xs out;
  xc_rows_writer rows;
  xc_arrow_json json;
  int64_t remaining; /* rows still wanted; -1: all */
  int64_t *sent_ids; /* dictionary ids the input has sent, for arrow-json */
  int64_t n_sent_ids;
  bool out_of_memory;
  const xc_input *in;
  xc_progress progress;
} cat_state;

/* Moves the progress line on.  arrow-json: a dictionary message that is
 * not a delta, for an id sent before (by this IPC stream or an earlier
 * one), replaces that dictionary. */
static void on_message(void *ctx, const xchg_message_info *info) {
  cat_state *st = ctx;
  xc_progress_update(&st->progress, xc_input_done(st->in, xc_message_end(info)));
  if (info->kind != XCHG_MESSAGE_DICTIONARY || st->opt->format != CAT_ARROW_JSON) return;
  for (int64_t k = 0; k < st->n_sent_ids; k++) {
    if (st->sent_ids[k] != info->dictionary_id) continue;
    if (!info->is_delta) xc_arrow_json_note_replacement(&st->json, info->dictionary_id);
    return;
  }
  int64_t *grown = realloc(st->sent_ids, (size_t)(st->n_sent_ids + 1) * sizeof *grown);
  if (grown == NULL) {
    st->out_of_memory = true;
    return;
  }
  st->sent_ids = grown;
  st->sent_ids[st->n_sent_ids++] = info->dictionary_id;
}

static xchg_status begin_output(cat_state *st, xchg_error *err) {
  column_set header;
  xchg_status s =
      column_set_build(&header, &st->schema, NULL, &st->sel, st->dict_ids, st->n_dict_ids, err);
  if (s != XCHG_OK) return s;
  if (st->opt->format == CAT_ARROW_JSON)
    s = xc_arrow_json_begin(&st->json, &st->out, &st->schema, header.ptrs, header.count,
                            st->dict_ids, st->n_dict_ids, err);
  else if (st->opt->format == CAT_CSV)
    xc_rows_header(&st->out, XC_ROWS_CSV, header.ptrs, header.count);
  column_set_free(&header);
  return s;
}

/* The selection (--columns) from the input's whole schema. */
static xchg_status select_from(cat_state *st, const struct ArrowSchema *whole, xchg_error *err) {
  if (strcmp(whole->format, "+s") != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "schema is not a struct (format \"%s\")", whole->format);
  xchg_status s = select_columns(whole, st->opt->columns, &st->sel, err);
  if (s == XCHG_OK && st->opt->columns != NULL) s = choose_columns(&st->sel, err);
  return s;
}

/* The first IPC stream sets the schema, the selection and the output's
 * header. */
static xchg_status first_stream(cat_state *st, xchg_ipc_reader *reader, xchg_error *err) {
  xchg_status s = xchg_ipc_reader_schema(reader, &st->first, err);
  if (s == XCHG_OK) s = select_from(st, &st->first, err);
  if (s == XCHG_OK) s = project(reader, &st->sel, err);
  if (s == XCHG_OK) s = xchg_ipc_reader_schema(reader, &st->schema, err);
  if (s == XCHG_OK)
    s = read_dictionary_ids(reader, &st->schema, &st->sel, &st->dict_ids, &st->n_dict_ids, err);
  if (s == XCHG_OK) s = begin_output(st, err);
  return s;
}

/* A later IPC stream matches the first: the same schema and, for
 * arrow-json, dictionary ids (the input checks both, check_ids), so that
 * its rows join the same output. */
static xchg_status next_stream(cat_state *st, xchg_ipc_reader *reader, xchg_error *err) {
  return project(reader, &st->sel, err);
}

/* A failed write to standard output (or out of memory) ends the copy at
 * once: nothing more is decoded for a reader that is gone or a full disk. */
static xchg_status output_status(const cat_state *st, xchg_error *err) {
  int errnum = xs_write_error(&st->out);
  if (errnum != 0)
    return xchg_errorf(err, XCHG_EIO, "write to standard output failed: %s", strerror(errnum));
  return xs_failed(&st->out) ? xchg_errorf(err, XCHG_ENOMEM, "out of memory") : XCHG_OK;
}

static xchg_status write_batch(cat_state *st, const struct ArrowArray *batch, xchg_error *err) {
  xchg_status s = check_batch(&st->schema, batch, err);
  if (s != XCHG_OK) return s;
  column_set cols;
  if ((s = column_set_build(&cols, &st->schema, batch, &st->sel, st->dict_ids, st->n_dict_ids,
                            err)) != XCHG_OK)
    return s;
  int64_t rows = batch->length;
  if (st->remaining >= 0 && rows > st->remaining) rows = st->remaining;
  if (st->opt->format == CAT_ARROW_JSON) {
    s = xc_arrow_json_batch(&st->json, cols.ptrs, cols.count, batch->offset, rows, err);
  } else {
    xc_row_format f = st->opt->format == CAT_CSV ? XC_ROWS_CSV : XC_ROWS_JSON;
    int64_t bad = xc_rows_write(&st->rows, &st->out, f, cols.ptrs, cols.count, batch->offset, rows);
    if (bad >= 0)
      s = xchg_errorf(err, XCHG_EFORMAT, "row %lld of the batch refers outside its arrays",
                      (long long)bad);
  }
  if (st->remaining >= 0) st->remaining -= rows;
  column_set_free(&cols);
  xs_maybe_flush(&st->out);
  return s == XCHG_OK ? output_status(st, err) : s;
}

static xchg_status copy_rows(cat_state *st, xchg_ipc_reader *reader, xchg_error *err) {
  xchg_status s = XCHG_OK;
  while (s == XCHG_OK && st->remaining != 0) {
    struct ArrowArray batch;
    if ((s = xchg_ipc_reader_next(reader, &batch, err)) != XCHG_OK || batch.release == NULL) break;
    s = write_batch(st, &batch, err);
    batch.release(&batch);
  }
  return s;
}

/* The end of the output after the rows (s: how copying them went). */
static xchg_status end_output(cat_state *st, xchg_status s, xchg_error *err) {
  if (s == XCHG_OK && st->opt->format == CAT_ARROW_JSON) xc_arrow_json_end(&st->json);
  if (s == XCHG_OK && (xs_failed(&st->out) || xs_failed(&st->rows.scratch) || st->out_of_memory))
    s = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  return s;
}

/* Every IPC stream of the input in turn, until the rows wanted are out. */
static xchg_status copy_input(cat_state *st, xc_input *in, xchg_error *err) {
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.on_message = on_message;
  opts.on_message_ctx = st;
  xchg_status s = XCHG_OK;
  bool begun = false;
  while (s == XCHG_OK && (!begun || st->remaining != 0)) {
    xchg_ipc_reader *reader;
    if ((s = xc_input_next(in, &opts, &reader, err)) != XCHG_OK || reader == NULL) break;
    s = begun ? next_stream(st, reader, err) : first_stream(st, reader, err);
    begun = true;
    if (s == XCHG_OK) s = copy_rows(st, reader, err);
    xc_input_end_stream(in, reader);
  }
  /* An input of no IPC stream (an empty Comet partition) has no schema,
   * which Arrow's integration JSON cannot do without; csv and json show
   * its rows, none. */
  if (s == XCHG_OK && !begun && st->opt->format == CAT_ARROW_JSON)
    return xc_input_no_schema(in, "Arrow's integration JSON", err);
  if (s != XCHG_OK) xc_input_locate_error(in, err);
  return end_output(st, s, err);
}

/* ---- Comet blocks through the shuffle reader ------------------------------------ */

/* The columns the shuffle reader decodes: the selection's, chosen from
 * the blocks' whole schema. */
static xchg_status choose_block_columns(void *ctx, const struct ArrowSchema *whole,
                                        const int64_t **columns, int64_t *n_columns,
                                        xchg_error *err) {
  cat_state *st = ctx;
  xchg_status s = select_from(st, whole, err);
  *columns = st->sel.chosen; /* NULL without --columns: all */
  *n_columns = st->sel.n_chosen;
  return s;
}

/* The blocks' (projected) schema.  The shuffle reader's batches carry
 * their dictionaries in the C Data arrays, without the IPC stream's
 * dictionary ids: the trees get ids of their own, 0, 1, ... in the order
 * the IPC reader would list them, which csv and json never show. */
static xchg_status blocks_schema(cat_state *st, xchg_shuffle_reader *reader, xchg_error *err) {
  xchg_status s = xchg_shuffle_reader_schema(reader, &st->schema, err);
  if (s != XCHG_OK) return s;
  st->n_dict_ids = xc_count_dictionaries(&st->schema);
  st->dict_ids = malloc((size_t)(st->n_dict_ids > 0 ? st->n_dict_ids : 1) * sizeof *st->dict_ids);
  if (st->dict_ids == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  for (int64_t k = 0; k < st->n_dict_ids; k++) st->dict_ids[k] = k;
  return locate_dictionaries(&st->schema, &st->sel, st->n_dict_ids, err);
}

static void selection_free(selection *sel) {
  free(sel->index);
  free(sel->chosen);
  free(sel->first_dict);
  memset(sel, 0, sizeof *sel);
}

/* A file of Comet blocks (xc_input_open_blocks): *reader is the shuffle
 * reader of the selected columns, NULL for an input read block by block.
 * arrow-json shows the batches and dictionary messages as the blocks hold
 * them (a batch of no rows, a delta, the stream's dictionary ids), which
 * coalesced batches do not: the blocks are read through the shuffle reader
 * first, their columns decoded, so that a bad block prints nothing and is
 * named, then block by block (*reader NULL); standard input, which cannot
 * be read twice, block by block only. */
static xchg_status open_blocks(cat_state *st, xchg_shuffle_reader **reader, xchg_error *err) {
  const cat_options *o = st->opt;
  xc_blocks_columns chooser = {choose_block_columns, st};
  if (o->format == CAT_ARROW_JSON && xc_is_piped(o->path))
    return XCHG_OK; /* read once only: block by block */
  xchg_status s = xc_input_open_blocks(o->path, o->codec, o->allow_missing_eos, XC_BLOCK_BATCH_ROWS,
                                       o->limit, &chooser, reader, err);
  if (s != XCHG_OK || *reader == NULL) return s;
  if (o->format != CAT_ARROW_JSON) return blocks_schema(st, *reader, err);
  s = xc_blocks_read_through(*reader, o->limit, err);
  xchg_shuffle_reader_free(*reader);
  *reader = NULL;
  selection_free(&st->sel); /* first_stream chooses the columns again */
  return s;
}

/* The coalesced batches of the blocks, until the rows wanted are out;
 * errors name the block (xchg/shuffle.h).  The output begins with the
 * first batch: blocks read as they come (standard input) that fail in
 * it print nothing, as a file checked first does. */
static xchg_status copy_blocks(cat_state *st, xchg_shuffle_reader *reader, xchg_error *err) {
  xchg_status s = XCHG_OK;
  bool begun = false;
  while (s == XCHG_OK && st->remaining != 0) {
    struct ArrowArray batch;
    if ((s = xchg_shuffle_reader_next(reader, &batch, err)) != XCHG_OK || batch.release == NULL)
      break;
    if (!begun && (s = begin_output(st, err)) != XCHG_OK) {
      batch.release(&batch);
      break;
    }
    begun = true;
    xc_progress_blocks(&st->progress, reader);
    s = write_batch(st, &batch, err);
    batch.release(&batch);
  }
  if (s == XCHG_OK && !begun) s = begin_output(st, err);
  return end_output(st, s, err);
}

static void cat_state_free(cat_state *st) {
  xc_arrow_json_free(&st->json);
  free(st->sent_ids);
  free(st->dict_ids);
  xs_free(&st->out);
  xc_rows_writer_free(&st->rows);
  selection_free(&st->sel);
  if (st->first.release != NULL) st->first.release(&st->first);
  if (st->schema.release != NULL) st->schema.release(&st->schema);
}

static int cat(const cat_options *opt) {
  xchg_error err = {{0}};
  int refused = xc_refuse_stdout_input(opt->path);
  if (refused >= 0) return refused;
  xc_input in = {0};
  cat_state st = {.opt = opt, .remaining = opt->limit, .in = &in};
  xs_init(&st.out, stdout);
  xc_rows_writer_init(&st.rows, xchg_pool_default()); /* rows formatted on every core */
  xchg_shuffle_reader *blocks = NULL;
  ids_check ids = {.columns = opt->columns};
  xc_stream_check same_ids = {check_ids, &ids};
  /* a named FIFO is read as "-" reads a pipe, what follows a file too */
  xchg_status s = xc_pipe_named(opt->path, &err);
  if (s == XCHG_OK) s = open_blocks(&st, &blocks, &err);
  if (s == XCHG_OK && blocks == NULL)
    s = xc_input_open(&in, opt->path, opt->codec, true,
                      opt->format == CAT_ARROW_JSON ? &same_ids : NULL, opt->allow_missing_eos,
                      opt->limit, &err);
  if (s != XCHG_OK) {
    xchg_shuffle_reader_free(blocks);
    xc_input_close(&in);
    ids_check_free(&ids);
    cat_state_free(&st);
    return xc_runtime_error(opt->path, err.message);
  }
  xc_progress_init(&st.progress, "cat", "bytes", xc_path_size(opt->path), true);
  xs_write_behind(&st.out); /* writing overlaps formatting */
  s = blocks != NULL ? copy_blocks(&st, blocks, &err) : copy_input(&st, &in, &err);
  xc_progress_end(&st.progress);
  xs_flush(&st.out);
  int rc = XC_EXIT_OK;
  if (xs_write_error(&st.out) != 0)
    rc = xc_write_error("-", xs_write_error(&st.out));
  else if (s != XCHG_OK)
    rc = xc_runtime_error(opt->path, err.message);
  xchg_shuffle_reader_free(blocks);
  xc_input_close(&in);
  ids_check_free(&ids);
  cat_state_free(&st);
  return rc;
}

int xc_cmd_cat(int argc, char **argv) {
  cat_options opt;
  int rc = parse_options(argc, argv, &opt);
  return rc >= 0 ? rc : cat(&opt);
}
