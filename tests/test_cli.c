/* tests/test_cli.c — the `xchg` command-line tool, run as a user runs it.
 *
 * Runs $XCHG_CLI on Apache Arrow's gold files ($XCHG_TESTDATA/arrow-gold):
 *  - `cat --format arrow-json` on every .stream and .arrow_file, compared
 *    semantically with the sibling generated_*.json.gz written by Arrow:
 *    same schema, same batches, same dictionaries, every value (DATA only
 *    where VALIDITY is 1; floats compared at their own precision: see
 *    tests/support/json_doc.h);
 *  - `cat --format json`: one JSON object per row, with one key per field
 *    and no key twice at any depth (jansson's JSON_REJECT_DUPLICATES), as
 *    many rows as the gold JSON has;
 *  - `inspect`: succeeds, names every top-level field with its type, lists
 *    the messages from the schema message (#0) on and counts as many record
 *    batches as the gold JSON has;
 *  - `cat --format csv --limit 3` on generated_primitive.stream: a header and
 *    3 records whose integer and string cells equal the gold values; of one
 *    column, a null is `""`, never an empty line (which CSV readers skip);
 *  - an unknown column is an error (exit 1) that names it; usage errors
 *    exit 2; `--version` prints the version;
 *  - `cat --format arrow-json --columns ... --limit N` equals the gold JSON
 *    cut down to those columns and rows;
 *  - every fuzz input ($XCHG_TESTDATA/arrow-fuzz/) ends in a clean error or
 *    success, never a crash or a sanitizer report;
 *  - types the gold files lack (views, run-end encoding, list views, half
 *    floats, decimal32/64, month-day-nano intervals, ...) and dictionaries
 *    that grow (delta) or are replaced between batches, in streams written
 *    by xchg's own writer from arrays built here: the expected values follow
 *    from the arrays and the definitions of the formats.
 *  - stream codecs (`--input-codec`, and auto-detection from a file and from
 *    standard input): gold streams wrapped here with xchg_stream_encode in
 *    every codec, once and twice in a row (Comet: two blocks), compared
 *    with the gold JSON (batches twice over); inspect on such an input; a
 *    wrong codec, a cut input and Comet blocks of different schemas fail
 *    cleanly.
 * Dictionary ids must be the input's own, the gold JSON's (one file's
 * writer renumbered them: see ipc_ids_differ_from_json).
 * A self-check proves that the comparison can fail.  Prints one line per
 * check and "N passed, M failed"; exits 1 on any failure. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/c_fixture.h"
#include "support/cli_run.h"
#include "support/json_doc.h"
#include "support/json_util.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

#define MSG_SIZE 1024

static const char *cli;
/* ---- running the CLI ------------------------------------------------------ */

typedef tu_cli_result run_result;

static void run_result_free(run_result *r) { tu_cli_result_free(r); }

/* Runs `$XCHG_CLI args` through the shell; args are already quoted. */
static bool run_cli(const char *args, run_result *r) { return tu_cli_run(cli, args, r); }

/* ---- finding inputs ------------------------------------------------------------ */

typedef struct name_list {
  char **items;
  size_t n;
} name_list;

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What list_files collects, and where. */
typedef struct file_filter {
  const char *suffix1, *suffix2; /* suffix1 NULL: every file */
  name_list *out;
} file_filter;

static void add_if_wanted(const char *path, void *ctx) {
  file_filter *f = ctx;
  if (f->suffix1 && !tu_has_suffix(path, f->suffix1) &&
      !(f->suffix2 && tu_has_suffix(path, f->suffix2)))
    return;
  char **grown = realloc(f->out->items, (f->out->n + 1) * sizeof *grown);
  if (grown == NULL) return;
  f->out->items = grown;
  f->out->items[f->out->n++] = strdup(path);
}

/* Files under root ending with suffix1 or suffix2, sorted by path. */
static void list_files(const char *root, const char *suffix1, const char *suffix2, name_list *out) {
  file_filter filter = {suffix1, suffix2, out};
  tu_walk(root, NULL, add_if_wanted, &filter);
  if (out->n > 0) qsort(out->items, out->n, sizeof *out->items, compare_names);
}

static void name_list_free(name_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->items[i]);
  free(l->items);
}

/* generated_x.stream -> generated_x.json.gz */
static void gold_json_path(const char *ipc, char *out, size_t size) {
  snprintf(out, size, "%s", ipc);
  char *dot = strrchr(out, '.');
  if (dot) snprintf(dot, size - (size_t)(dot - out), ".json.gz");
}

/* The path from the gold root, for messages. */
static const char *short_name(const char *path) {
  const char *p = strstr(path, "arrow-gold/");
  return p ? p + strlen("arrow-gold/") : path;
}

/* ---- checks on one gold file ------------------------------------------------------ */

static void check_arrow_json(const char *ipc, json_t *gold) {
  char what[512], msg[MSG_SIZE] = "";
  snprintf(what, sizeof what, "cat --format arrow-json %s", short_name(ipc));
  char args[4200];
  snprintf(args, sizeof args, "cat --format arrow-json '%s'", ipc);
  run_result r;
  if (!run_cli(args, &r)) {
    TU_CHECK(false, "%s: cannot run the CLI", what);
    return;
  }
  if (r.exit_code != 0) {
    snprintf(msg, sizeof msg, "exit %d: %.400s", r.exit_code, r.err);
    TU_CHECK(false, "%s: %s", what, msg);
  } else {
    json_error_t jerr;
    json_t *ours = json_loadb(r.out, r.out_len, 0, &jerr);
    if (ours == NULL)
      snprintf(msg, sizeof msg, "output is not JSON: %s at line %d", jerr.text, jerr.line);
    TU_CHECK(ours != NULL && tu_json_doc_equal(gold, ours, ipc, msg, sizeof msg), "%s: %s", what,
             msg);
    json_decref(ours);
  }
  run_result_free(&r);
}

static size_t total_rows(json_t *gold) {
  size_t rows = 0, i;
  json_t *b;
  json_array_foreach(json_object_get(gold, "batches"), i, b) {
    rows += (size_t)json_integer_value(json_object_get(b, "count"));
  }
  return rows;
}

/* JSON Lines: every line an object with one key per field. */
static void check_json_lines(const char *ipc, json_t *gold) {
  char what[512], msg[MSG_SIZE] = "", args[4200];
  snprintf(what, sizeof what, "cat --format json %s", short_name(ipc));
  snprintf(args, sizeof args, "cat --format json '%s'", ipc);
  run_result r;
  if (!run_cli(args, &r)) {
    TU_CHECK(false, "%s: cannot run the CLI", what);
    return;
  }
  size_t fields = json_array_size(json_object_get(json_object_get(gold, "schema"), "fields"));
  size_t lines = 0;
  bool ok = r.exit_code == 0;
  if (!ok) snprintf(msg, sizeof msg, "exit %d: %.400s", r.exit_code, r.err);
  for (char *line = r.out; ok && *line; lines++) {
    char *end = strchr(line, '\n');
    if (end == NULL) {
      ok = false;
      snprintf(msg, sizeof msg, "line %zu has no newline", lines + 1);
      break;
    }
    json_error_t jerr;
    /* fields that share a name get distinct keys: none is lost */
    json_t *row = json_loadb(line, (size_t)(end - line), JSON_REJECT_DUPLICATES, &jerr);
    if (row == NULL || !json_is_object(row) || json_object_size(row) != fields) {
      ok = false;
      snprintf(msg, sizeof msg, "line %zu is not an object of the fields: %s", lines + 1,
               row ? "wrong keys" : jerr.text);
    }
    json_decref(row);
    line = end + 1;
  }
  if (ok && lines != total_rows(gold)) {
    ok = false;
    snprintf(msg, sizeof msg, "%zu lines, expected %zu rows", lines, total_rows(gold));
  }
  TU_CHECK(ok, "%s: %s", what, msg);
  run_result_free(&r);
}

/* The readable type name inspect should show for a primitive gold type,
 * or "" for types this check does not spell out. */
static void expected_type_name(json_t *type, char *out, size_t size) {
  const char *name = tu_json_str(type, "name");
  json_int_t bits = json_integer_value(json_object_get(type, "bitWidth"));
  const char *unit = tu_json_str(type, "unit");
  const char *units = strcmp(unit, "SECOND") == 0        ? "s"
                      : strcmp(unit, "MILLISECOND") == 0 ? "ms"
                      : strcmp(unit, "MICROSECOND") == 0 ? "us"
                                                         : "ns";
  out[0] = '\0';
  if (strcmp(name, "int") == 0)
    snprintf(out, size, "%sint%d", json_is_true(json_object_get(type, "isSigned")) ? "" : "u",
             (int)bits);
  else if (strcmp(name, "floatingpoint") == 0)
    snprintf(out, size, "float%s",
             strcmp(tu_json_str(type, "precision"), "DOUBLE") == 0   ? "64"
             : strcmp(tu_json_str(type, "precision"), "SINGLE") == 0 ? "32"
                                                                     : "16");
  else if (strcmp(name, "utf8") == 0 || strcmp(name, "binary") == 0 || strcmp(name, "bool") == 0 ||
           strcmp(name, "null") == 0)
    snprintf(out, size, "%s", name);
  else if (strcmp(name, "largeutf8") == 0 || strcmp(name, "largebinary") == 0)
    snprintf(out, size, "large_%s", name + 5);
  else if (strcmp(name, "fixedsizebinary") == 0)
    snprintf(out, size, "fixed_size_binary[%d]",
             (int)json_integer_value(json_object_get(type, "byteWidth")));
  else if (strcmp(name, "decimal") == 0)
    snprintf(out, size, "decimal%d(%d, %d)", bits ? (int)bits : 128,
             (int)json_integer_value(json_object_get(type, "precision")),
             (int)json_integer_value(json_object_get(type, "scale")));
  else if (strcmp(name, "timestamp") == 0 && json_object_get(type, "timezone"))
    snprintf(out, size, "timestamp[%s, tz=%s]", units, tu_json_str(type, "timezone"));
  else if (strcmp(name, "timestamp") == 0)
    snprintf(out, size, "timestamp[%s]", units);
  else if (strcmp(name, "duration") == 0)
    snprintf(out, size, "duration[%s]", units);
}

static void check_inspect(const char *ipc, json_t *gold) {
  char what[512], msg[MSG_SIZE] = "", args[4200];
  snprintf(what, sizeof what, "inspect %s", short_name(ipc));
  snprintf(args, sizeof args, "inspect --messages '%s'", ipc);
  run_result r;
  if (!run_cli(args, &r)) {
    TU_CHECK(false, "%s: cannot run the CLI", what);
    return;
  }
  bool ok = r.exit_code == 0;
  if (!ok) snprintf(msg, sizeof msg, "exit %d: %.400s", r.exit_code, r.err);
  json_t *fields = json_object_get(json_object_get(gold, "schema"), "fields"), *f;
  size_t i;
  json_array_foreach(fields, i, f) {
    if (!ok) break;
    char type[256], line[1024];
    expected_type_name(json_object_get(f, "type"), type, sizeof type);
    if (json_object_get(f, "dictionary") && type[0])
      snprintf(line, sizeof line, "[%zu] %s: dictionary<values=%s, indices=", i,
               tu_json_str(f, "name"), type);
    else
      snprintf(line, sizeof line, "[%zu] %s: %s", i, tu_json_str(f, "name"), type);
    if (strstr(r.out, line) == NULL) {
      ok = false;
      snprintf(msg, sizeof msg, "no \"%.900s\" in the output", line);
    }
  }
  /* Every message, the schema message first, and each record batch once. */
  char batches[128];
  size_t n_batches = json_array_size(json_object_get(gold, "batches"));
  snprintf(batches, sizeof batches, "\nsummary: %zu record batch%s, ", n_batches,
           n_batches == 1 ? "" : "es");
  const char *listed = strstr(r.out, "\nmessages:\n");
  if (ok &&
      (listed == NULL || strncmp(listed + strlen("\nmessages:\n"), "  #0 schema ", 12) != 0)) {
    ok = false;
    snprintf(msg, sizeof msg, "the messages do not start with \"  #0 schema \"");
  } else if (ok && strstr(r.out, batches) == NULL) {
    ok = false;
    snprintf(msg, sizeof msg, "no \"%s\" in the summary", batches + 1);
  } else if (ok && strstr(r.out, "\nIPC ") != NULL) { /* one stream, no codec: not numbered */
    ok = false;
    snprintf(msg, sizeof msg, "a header line for its only IPC stream: %.300s", r.out);
  }
  TU_CHECK(ok, "%s: %s", what, msg);
  run_result_free(&r);
}

/* ---- --columns and --limit with arrow-json --------------------------------------- */

static void keep_first(json_t *col, const char *key, size_t n) {
  json_t *a = json_object_get(col, key);
  while (json_is_array(a) && json_array_size(a) > n) json_array_remove(a, json_array_size(a) - 1);
}

/* What the first n rows of a gold column look like: the buffers cut to n
 * entries, children cut to what those rows reach. */
static void truncate_column(json_t *col, json_t *field, size_t n) {
  json_t *type = json_object_get(field, "type");
  const char *name = tu_json_str(type, "name");
  bool dict = json_object_get(field, "dictionary") != NULL;
  bool dense = strcmp(tu_json_str(type, "mode"), "DENSE") == 0;
  bool own_offsets = strstr(name, "listview") != NULL || (strcmp(name, "union") == 0 && dense);
  json_int_t reach = -1; /* rows of the child(ren) reached; -1: all */
  json_object_set_new(col, "count", json_integer((json_int_t)n));
  const char *keys[] = {"VALIDITY", "DATA", "TYPE_ID", "VIEWS", "SIZE"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) keep_first(col, keys[k], n);
  keep_first(col, "OFFSET", own_offsets ? n : n + 1);
  if (dict) return;
  if (strcmp(name, "struct") == 0 || (strcmp(name, "union") == 0 && !dense)) {
    reach = (json_int_t)n;
  } else if (strcmp(name, "list") == 0 || strcmp(name, "largelist") == 0 ||
             strcmp(name, "map") == 0) {
    char text[64] = "0";
    tu_json_integer_text(json_array_get(json_object_get(col, "OFFSET"), n), text, sizeof text);
    reach = strtoll(text, NULL, 10);
  } else if (strcmp(name, "fixedsizelist") == 0) {
    reach = (json_int_t)n * json_integer_value(json_object_get(type, "listSize"));
  }
  json_t *children = json_object_get(col, "children"), *fields = json_object_get(field, "children");
  for (size_t c = 0; reach >= 0 && c < json_array_size(children); c++)
    truncate_column(json_array_get(children, c), json_array_get(fields, c), (size_t)reach);
}

/* By name, or "#N": at position N. */
static int field_index(json_t *fields, const char *name) {
  if (name[0] == '#') return atoi(name + 1);
  for (size_t i = 0; i < json_array_size(fields); i++)
    if (strcmp(tu_json_str(json_array_get(fields, i), "name"), name) == 0) return (int)i;
  return -1;
}

/* The gold document as `cat --columns names --limit limit` should see it. */
static json_t *gold_subset(json_t *gold, const char *const *names, int n_names, size_t limit) {
  json_t *out = json_deep_copy(gold);
  json_t *schema = json_object_get(out, "schema"), *fields = json_object_get(schema, "fields");
  json_t *new_fields = json_array(), *new_batches = json_array(), *b;
  int index[16];
  for (int k = 0; k < n_names && k < 16; k++) {
    index[k] = field_index(fields, names[k]);
    json_array_append(new_fields, json_array_get(fields, (size_t)index[k]));
  }
  size_t remaining = limit, i;
  json_array_foreach(json_object_get(out, "batches"), i, b) {
    if (remaining == 0) break;
    size_t count = (size_t)json_integer_value(json_object_get(b, "count"));
    size_t rows = count < remaining ? count : remaining;
    json_t *columns = json_object_get(b, "columns"), *new_columns = json_array();
    for (int k = 0; k < n_names; k++) {
      json_t *col = json_array_get(columns, (size_t)index[k]);
      truncate_column(col, json_array_get(fields, (size_t)index[k]), rows);
      json_array_append(new_columns, col);
    }
    json_t *batch = json_pack("{s:I,s:o}", "count", (json_int_t)rows, "columns", new_columns);
    json_array_append_new(new_batches, batch);
    remaining -= rows;
  }
  json_object_set_new(schema, "fields", new_fields);
  json_object_set_new(out, "batches", new_batches);
  return out;
}

static void check_subset(const char *gold_root, const char *file, const char *const *names,
                         int n_names, size_t limit) {
  char ipc[8192], json_path[8300], args[9000], what[9000], msg[MSG_SIZE] = "", list[512] = "";
  for (int k = 0; k < n_names; k++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? "," : "", names[k]);
  snprintf(ipc, sizeof ipc, "%s/%s", gold_root, file);
  gold_json_path(ipc, json_path, sizeof json_path);
  snprintf(what, sizeof what, "cat --format arrow-json --columns %s --limit %zu %s", list, limit,
           file);
  snprintf(args, sizeof args, "cat --format arrow-json --columns '%s' --limit %zu '%s'", list,
           limit, ipc);
  json_t *gold = tu_json_load(json_path, msg, sizeof msg);
  run_result r;
  if (gold == NULL || !run_cli(args, &r)) {
    TU_CHECK(false, "%s: %s", what, gold ? "cannot run the CLI" : msg);
    json_decref(gold);
    return;
  }
  json_t *want = gold_subset(gold, names, n_names, limit);
  json_error_t jerr;
  json_t *ours = r.exit_code == 0 ? json_loadb(r.out, r.out_len, 0, &jerr) : NULL;
  if (ours == NULL) snprintf(msg, sizeof msg, "exit %d: %.300s", r.exit_code, r.err);
  TU_CHECK(ours != NULL && tu_json_doc_equal(want, ours, ipc, msg, sizeof msg), "%s: %s", what,
           msg);
  json_decref(ours);
  json_decref(want);
  json_decref(gold);
  run_result_free(&r);
}

static void check_subsets(const char *gold_root) {
  const char *nested[] = {"struct_nullable", "list_nullable", "fixedsizelist_nullable"};
  check_subset(gold_root, "1.0.0-littleendian/generated_nested.stream", nested, 3, 9);
  const char *dicts[] = {"dict2", "dict0"};
  check_subset(gold_root, "1.0.0-littleendian/generated_dictionary.arrow_file", dicts, 2, 3);
  const char *nested_dicts[] = {"struct_dict", "list_dict"};
  check_subset(gold_root, "1.0.0-littleendian/generated_nested_dictionary.stream", nested_dicts, 2,
               12);
  const char *maps[] = {"map_nullable"};
  check_subset(gold_root, "1.0.0-littleendian/generated_map.stream", maps, 1, 4);
  const char *unions[] = {"#3", "#0"}; /* two columns are named dense, two sparse: by position */
  check_subset(gold_root, "1.0.0-littleendian/generated_union.stream", unions, 2, 5);
  const char *strings[] = {"utf8_nonnullable", "binary_nullable", "int64_nullable"};
  check_subset(gold_root, "1.0.0-littleendian/generated_primitive.arrow_file", strings, 3, 0);
  check_subset(gold_root, "1.0.0-littleendian/generated_primitive.arrow_file", strings, 3, 20);
}

/* ---- CSV -------------------------------------------------------------------------- */

/* Splits RFC 4180 text into records of fields (quotes removed), at most
 * max_records; returns the number of records.  Fields are stored
 * NUL-separated in each record, and each record's field count in counts. */
typedef struct csv_record {
  char *fields[64];
  bool quoted[64];
  int n;
} csv_record;

static int parse_csv(char *text, csv_record *records, int max_records) {
  int n = 0;
  char *p = text;
  while (*p && n < max_records) {
    csv_record *rec = &records[n++];
    rec->n = 0;
    for (;;) {
      char *start = p, *w = p;
      bool quoted = *p == '"';
      if (quoted) {
        p++;
        for (;;) {
          if (*p == '\0') break;
          if (*p == '"' && p[1] == '"') {
            *w++ = '"';
            p += 2;
            continue;
          }
          if (*p == '"') {
            p++;
            break;
          }
          *w++ = *p++;
        }
      } else {
        while (*p && *p != ',' && *p != '\n') *w++ = *p++;
      }
      char sep = *p;
      if (rec->n < 64) {
        rec->fields[rec->n] = start;
        rec->quoted[rec->n++] = quoted;
      }
      *w = '\0';
      if (sep == ',') {
        p++;
        continue;
      }
      if (sep == '\n') p++;
      break;
    }
  }
  return n;
}

/* The header names the fields and the cells of integer and string columns
 * equal the gold values (empty for a null). */
static void check_csv(const char *gold_root) {
  const char *what = "cat --format csv --limit 3 1.0.0-littleendian/generated_primitive.stream";
  char ipc[8192], json_path[8300], args[8400], msg[MSG_SIZE] = "";
  snprintf(ipc, sizeof ipc, "%s/1.0.0-littleendian/generated_primitive.stream", gold_root);
  gold_json_path(ipc, json_path, sizeof json_path);
  json_t *gold = tu_json_load(json_path, msg, sizeof msg);
  snprintf(args, sizeof args, "cat --format csv --limit 3 '%s'", ipc);
  run_result r;
  if (gold == NULL || !run_cli(args, &r)) {
    TU_CHECK(false, "%s: %s", what, gold ? "cannot run the CLI" : msg);
    json_decref(gold);
    return;
  }
  csv_record records[8];
  int n = r.exit_code == 0 ? parse_csv(r.out, records, 8) : 0;
  json_t *fields = json_object_get(json_object_get(gold, "schema"), "fields");
  json_t *columns = json_object_get(json_array_get(json_object_get(gold, "batches"), 0), "columns");
  bool ok = n == 4;
  if (!ok)
    snprintf(msg, sizeof msg, "exit %d, %d records, expected a header and 3: %.300s", r.exit_code,
             n, r.err);
  for (int row = 0; ok && row < 4; row++) {
    if ((size_t)records[row].n != json_array_size(fields)) {
      ok = false;
      snprintf(msg, sizeof msg, "record %d has %d fields, expected %zu", row, records[row].n,
               json_array_size(fields));
      break;
    }
    for (size_t c = 0; ok && c < json_array_size(fields); c++) {
      json_t *field = json_array_get(fields, c), *col = json_array_get(columns, c);
      const char *type = tu_json_str(json_object_get(field, "type"), "name");
      const char *cell = records[row].fields[c];
      char want[4096] = "";
      if (row == 0) {
        snprintf(want, sizeof want, "%s", tu_json_str(field, "name"));
      } else if (strcmp(type, "int") != 0 && strcmp(type, "utf8") != 0) {
        continue;
      } else if (json_integer_value(json_array_get(json_object_get(col, "VALIDITY"), row - 1))) {
        json_t *v = json_array_get(json_object_get(col, "DATA"), row - 1);
        if (!tu_json_integer_text(v, want, sizeof want)) snprintf(want, sizeof want, "%s", "?");
        if (strcmp(type, "utf8") == 0 && want[0] == '\0' && !records[row].quoted[c]) {
          ok = false; /* an empty string must be quoted to differ from a null */
          snprintf(msg, sizeof msg, "record %d, %s: empty string not quoted", row,
                   tu_json_str(field, "name"));
        }
      }
      if (ok && strcmp(cell, want) != 0) {
        ok = false;
        snprintf(msg, sizeof msg, "record %d, column %s: \"%.100s\", expected \"%.100s\"", row,
                 tu_json_str(field, "name"), cell, want);
      }
    }
  }
  TU_CHECK(ok, "%s: %s", what, msg);
  run_result_free(&r);
  json_decref(gold);
}

/* The lines of text, split in place at each '\n' (at most max). */
static int split_lines(char *text, char **lines, int max) {
  int n = 0;
  for (char *p = text; *p && n < max; n++) {
    lines[n] = p;
    char *end = strchr(p, '\n');
    if (end == NULL) return n + 1;
    *end = '\0';
    p = end + 1;
  }
  return n;
}

/* One column (text and integers): a null is "", never an empty line,
 * which CSV readers skip; a value is as it is in two columns' output, and
 * every row has its line (the json output's rows, one to one). */
static void check_csv_one_column(const char *gold_root) {
  static const char *const columns[] = {"utf8_nullable", "int8_nullable"};
  char ipc[8192], args[8400];
  snprintf(ipc, sizeof ipc, "%s/1.0.0-littleendian/generated_primitive.stream", gold_root);
  for (int c = 0; c < 2; c++) {
    run_result csv, json;
    snprintf(args, sizeof args, "cat --columns %s '%s'", columns[c], ipc);
    if (!TU_CHECK(run_cli(args, &csv), "cat --columns %s: cannot run", columns[c])) continue;
    snprintf(args, sizeof args, "cat --columns %s --format json '%s'", columns[c], ipc);
    if (!TU_CHECK(run_cli(args, &json), "cat --columns %s --format json: cannot run", columns[c])) {
      run_result_free(&csv);
      continue;
    }
    char *csv_lines[64], *json_lines[64];
    int n_csv = split_lines(csv.out, csv_lines, 64), n_json = split_lines(json.out, json_lines, 64);
    int nulls = 0, bad = -1;
    for (int i = 0; i < n_json && i + 1 < n_csv && bad < 0; i++) {
      bool null = strstr(json_lines[i], ":null}") != NULL;
      nulls += null;
      if (null ? strcmp(csv_lines[i + 1], "\"\"") != 0 : csv_lines[i + 1][0] == '\0') bad = i;
    }
    TU_CHECK(csv.exit_code == 0 && n_json == 37 && n_csv == 38 && nulls > 0 && bad < 0,
             "cat --columns %s: exit %d, %d csv lines for %d rows (%d null), row %d: \"%s\" "
             "for %s",
             columns[c], csv.exit_code, n_csv, n_json, nulls, bad,
             bad >= 0 ? csv_lines[bad + 1] : "", bad >= 0 ? json_lines[bad] : "");
    run_result_free(&csv);
    run_result_free(&json);
  }
}

/* Arrow JS's tableToIPC (stream) of a table of 5 rows and no columns. */
static const unsigned char no_columns_stream[] = {
    0xff, 0xff, 0xff, 0xff, 0x38, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00,
    0x10, 0x00, 0x0e, 0x00, 0x07, 0x00, 0x08, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00, 0x04, 0x00,
    0x08, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0xff, 0x50, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x0a, 0x00, 0x0e, 0x00, 0x0c, 0x00, 0x07, 0x00, 0x08, 0x00, 0x0a, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x03, 0x10, 0x00, 0x00, 0x00, 0x04, 0x00, 0x0a, 0x00, 0x18, 0x00, 0x0c, 0x00,
    0x08, 0x00, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00};

/* No column: the header is an empty line, and so is each row (a row of no
 * fields, as Python's csv module writes one), never "", which is a row of
 * one empty field: a column that is not there. */
static void check_csv_no_columns(void) {
  char tmp[] = "/tmp/test_cli_nocols_XXXXXX", args[256];
  int fd = mkstemp(tmp);
  if (!TU_CHECK(fd >= 0, "no columns: cannot create a temporary file")) return;
  close(fd);
  run_result csv, json;
  snprintf(args, sizeof args, "cat --format json '%s'", tmp);
  if (TU_CHECK(tu_write_file(tmp, no_columns_stream, sizeof no_columns_stream) == 0,
               "no columns: cannot write %s", tmp) &&
      TU_CHECK(run_cli(args, &json), "cat --format json: cannot run")) {
    TU_CHECK(json.exit_code == 0 && strcmp(json.out, "{}\n{}\n{}\n{}\n{}\n") == 0,
             "cat --format json of 5 rows of no columns: 5 lines {}, got exit %d: \"%.200s\"",
             json.exit_code, json.out);
    run_result_free(&json);
    snprintf(args, sizeof args, "cat '%s'", tmp);
    if (TU_CHECK(run_cli(args, &csv), "cat: cannot run")) {
      TU_CHECK(csv.exit_code == 0 && strcmp(csv.out, "\n\n\n\n\n\n") == 0,
               "cat (csv) of 5 rows of no columns: an empty header and 5 empty lines, got exit "
               "%d: \"%.200s\"",
               csv.exit_code, csv.out);
      run_result_free(&csv);
    }
  }
  unlink(tmp);
}

/* inspect of no columns: nothing to say per column, not that a batch's
 * buffers could not be told apart (there are none); --json lists none. */
static void check_inspect_no_columns(void) {
  char tmp[] = "/tmp/test_cli_nocols_XXXXXX", args[256];
  int fd = mkstemp(tmp);
  if (!TU_CHECK(fd >= 0, "no columns: cannot create a temporary file")) return;
  close(fd);
  run_result r;
  snprintf(args, sizeof args, "inspect '%s'", tmp);
  if (TU_CHECK(tu_write_file(tmp, no_columns_stream, sizeof no_columns_stream) == 0,
               "no columns: cannot write %s", tmp) &&
      TU_CHECK(run_cli(args, &r), "inspect: cannot run")) {
    TU_CHECK(r.exit_code == 0 && strstr(r.out, "schema: 0 fields\n") && strstr(r.out, "5 rows") &&
                 !strstr(r.out, "columns"),
             "inspect of 5 rows of no columns: no columns line, got exit %d: \"%.400s\"",
             r.exit_code, r.out);
    run_result_free(&r);
  }
  unlink(tmp);
}

/* ---- errors ------------------------------------------------------------------------ */

static void check_errors(const char *gold_root) {
  char ipc[8192], args[8400], msg[MSG_SIZE];
  snprintf(ipc, sizeof ipc, "%s/1.0.0-littleendian/generated_primitive.arrow_file", gold_root);
  run_result r;

  snprintf(args, sizeof args, "cat --columns int8_nullable,no_such_column '%s'", ipc);
  if (run_cli(args, &r)) {
    snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
    TU_CHECK(
        r.exit_code == 1 && strstr(r.err, "no_such_column") && strncmp(r.err, "xchg: ", 6) == 0,
        "unknown column: exit 1 naming it: %s", msg);
    run_result_free(&r);
  }
  snprintf(args, sizeof args,
           "cat --columns utf8_nullable,int8_nullable --format json --limit 1 '%s'", ipc);
  if (run_cli(args, &r)) {
    snprintf(msg, sizeof msg, "exit %d, output: %.300s", r.exit_code, r.out);
    TU_CHECK(r.exit_code == 0 && strncmp(r.out, "{\"utf8_nullable\":", 17) == 0 &&
                 strstr(r.out, ",\"int8_nullable\":") &&
                 strchr(r.out, '\n') == r.out + r.out_len - 1,
             "--columns picks and orders columns, --limit 1 one row: %s", msg);
    run_result_free(&r);
  }
  const char *usage[] = {"cat", "cat --limit x FILE", "cat --format xml FILE", "inspect a b",
                         "frobnicate"};
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
    char what[256];
    snprintf(what, sizeof what, "usage error exits 2: xchg %s", usage[i]);
    if (run_cli(usage[i], &r)) {
      snprintf(msg, sizeof msg, "exit %d", r.exit_code);
      TU_CHECK(r.exit_code == 2 && r.err[0] != '\0', "%s: %s", what, msg);
      run_result_free(&r);
    }
  }
  snprintf(args, sizeof args, "cat '%s/no/such/file.arrow'", gold_root);
  if (run_cli(args, &r)) {
    snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
    TU_CHECK(r.exit_code == 1 && strstr(r.err, "no/such/file.arrow: "),
             "missing file: xchg: <file>: <error>: %s", msg);
    run_result_free(&r);
  }
  if (run_cli("--version", &r)) {
    TU_CHECK(r.exit_code == 0 && strstr(r.out, XCHG_VERSION_STRING), "--version: %s", r.out);
    run_result_free(&r);
  }
  snprintf(args, sizeof args, "cat --format csv --limit 2 - < '%s'", ipc);
  if (run_cli(args, &r)) {
    snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
    TU_CHECK(r.exit_code == 0 && strncmp(r.out, "bool_nullable,", 14) == 0,
             "'-' reads standard input: %s", msg);
    run_result_free(&r);
  }
}

/* Fuzz inputs crashed Arrow's own reader once: each must end in success or
 * in a clean "xchg: <file>: ..." error, never a crash or sanitizer report. */
static void check_fuzz(const char *fuzz_root) {
  name_list files = {0};
  list_files(fuzz_root, NULL, NULL, &files);
  TU_CHECK(files.n != 0, "fuzz inputs: none found");
  const char *commands[] = {"cat --format json", "cat --format arrow-json", "inspect"};
  for (size_t i = 0; i < files.n; i++) {
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
      char args[4300], what[4400], msg[MSG_SIZE];
      snprintf(args, sizeof args, "%s '%s' >/dev/null", commands[k], files.items[i]);
      snprintf(what, sizeof what, "%s %s", commands[k], strrchr(files.items[i], '/') + 1);
      run_result r;
      if (!run_cli(args, &r)) continue;
      snprintf(msg, sizeof msg, "exit %d, stderr: %.400s", r.exit_code, r.err);
      bool clean = r.exit_code == 0 ||
                   (r.exit_code == 1 && strncmp(r.err, "xchg: ", 6) == 0 &&
                    strstr(r.err, "Sanitizer") == NULL && strstr(r.err, "runtime error") == NULL);
      TU_CHECK(clean, "%s: %s", what, msg);
      run_result_free(&r);
    }
  }
  name_list_free(&files);
}

/* ---- types the gold files lack, written with xchg's IPC writer ---------------------- */

#define N_TYPED 13
static const char *const typed_names[N_TYPED] = {"half", "dec32",  "dec64", "mdn",    "sv",
                                                 "ree",  "lv",     "ts",    "date64", "dur",
                                                 "bv",   "time32", "dict"};
/* The rows as JSON, from the definitions of the types and ISO-8601. */
static const char *const typed_rows[3][N_TYPED] = {
    {"1.5", "\"123.45\"", "\"1234.567\"", "\"P1M2DT0.000000003S\"", "\"short\"", "\"x\"", "[30]",
     "\"1969-12-31T23:59:59.999999999\"", "\"1970-01-02\"", "\"-PT1.500S\"", "\"00FF\"",
     "\"00:00:00\"", "\"b\""},
    {"-2", "\"-0.05\"", "\"-0.001\"", "\"P-1M0DT-1.500000000S\"", "\"a string longer than twelve\"",
     "\"x\"", "[10,20]", "\"1970-01-01T00:00:00.000000000\"", "\"1969-12-31\"", "\"PT0.000S\"",
     "\"\"", "\"23:59:59\"", "null"},
    {"\"Infinity\"", "\"0.00\"", "\"1.000\"", "\"P0M0DT0.000000000S\"", "\"\"", "\"y\"", "[]",
     "\"1970-01-02T00:00:00.000000000\"", "\"1970-01-01\"", "\"PT60.000S\"", "null", "\"01:00:00\"",
     "\"a\""},
};

/* Writes a 3-row stream with one column per type of typed_names. */
static bool write_typed_fixture(const char *path, char *msg) {
  static const uint16_t half[3] = {0x3E00, 0xC000, 0x7C00};
  static const int32_t dec32[3] = {12345, -5, 0};
  static const int64_t dec64[3] = {1234567, -1, 1000};
  static const struct {
    int32_t months, days;
    int64_t nanos;
  } mdn[3] = {{1, 2, 3}, {-1, 0, -1500000000}, {0, 0, 0}};
  static const char long_text[] = "a string longer than twelve";
  static const int64_t sv_sizes[1] = {sizeof long_text - 1};
  static const int32_t run_ends[2] = {2, 3}, xy_offsets[3] = {0, 1, 2};
  static const int32_t lv_offsets[3] = {2, 0, 0}, lv_sizes[3] = {1, 2, 0},
                       lv_items[3] = {10, 20, 30};
  static const int64_t ts[3] = {-1, 0, 86400000000000LL}, date64[3] = {86400000, -86400000, 0};
  static const int64_t dur[3] = {-1500, 0, 60000};
  static const int32_t time32[3] = {0, 86399, 3600};
  static const uint8_t bv_validity[1] = {0x3}, dict_validity[1] = {0x5};
  static const int8_t dict_indices[3] = {1, 0, 0};
  static const int32_t ab_offsets[3] = {0, 1, 2};
  uint8_t sv_views[48], bv_views[48];
  tu_fixture_view(sv_views, "short", 0, 0);
  tu_fixture_view(sv_views + 16, long_text, 0, 0);
  tu_fixture_view(sv_views + 32, "", 0, 0);
  memset(bv_views, 0, sizeof bv_views);
  int32_t two = 2;
  memcpy(bv_views, &two, 4);
  bv_views[5] = 0xFF;

  struct ArrowSchema fields[N_TYPED], ree_kids[2], lv_kid, dict_values, root;
  struct ArrowSchema *field_ptrs[N_TYPED], *ree_kid_ptrs[2] = {&ree_kids[0], &ree_kids[1]},
                                           *lv_kid_ptr = &lv_kid;
  const char *formats[N_TYPED] = {"e",    "d:9,2,32", "d:18,3,64", "tin", "vu",  "+r", "+vl",
                                  "tsn:", "tdm",      "tDm",       "vz",  "tts", "c"};
  for (int i = 0; i < N_TYPED; i++) {
    tu_fixture_schema(&fields[i], formats[i], typed_names[i], 0, NULL);
    field_ptrs[i] = &fields[i];
  }
  tu_fixture_schema(&ree_kids[0], "i", "run_ends", 0, NULL);
  ree_kids[0].flags = 0;
  tu_fixture_schema(&ree_kids[1], "u", "values", 0, NULL);
  tu_fixture_schema(&fields[5], "+r", "ree", 2, ree_kid_ptrs);
  tu_fixture_schema(&lv_kid, "i", "item", 0, NULL);
  tu_fixture_schema(&fields[6], "+vl", "lv", 1, &lv_kid_ptr);
  tu_fixture_schema(&dict_values, "u", "", 0, NULL);
  fields[12].dictionary = &dict_values;
  tu_fixture_schema(&root, "+s", "", N_TYPED, field_ptrs);
  root.flags = 0;

  const void *b_half[] = {NULL, half}, *b_dec32[] = {NULL, dec32}, *b_dec64[] = {NULL, dec64},
             *b_mdn[] = {NULL, mdn};
  const void *b_sv[] = {NULL, sv_views, long_text, sv_sizes}, *b_ends[] = {NULL, run_ends};
  const void *b_xy[] = {NULL, xy_offsets, "xy"}, *b_lv[] = {NULL, lv_offsets, lv_sizes},
             *b_items[] = {NULL, lv_items};
  const void *b_ts[] = {NULL, ts}, *b_date64[] = {NULL, date64}, *b_dur[] = {NULL, dur};
  static const int64_t no_sizes[1] = {0}; /* no variadic buffers: an empty sizes list */
  const void *b_bv[] = {bv_validity, bv_views, no_sizes}, *b_time32[] = {NULL, time32};
  const void *b_dict[] = {dict_validity, dict_indices}, *b_ab[] = {NULL, ab_offsets, "ab"},
             *b_root[] = {NULL};
  struct ArrowArray cols[N_TYPED], ree_arrays[2], lv_items_array, dict_array, batch;
  struct ArrowArray *col_ptrs[N_TYPED], *ree_ptrs[2] = {&ree_arrays[0], &ree_arrays[1]},
                                        *lv_ptr = &lv_items_array;
  const void **buffers[N_TYPED] = {b_half, b_dec32,  b_dec64, b_mdn, b_sv,     NULL,  b_lv,
                                   b_ts,   b_date64, b_dur,   b_bv,  b_time32, b_dict};
  for (int i = 0; i < N_TYPED; i++) {
    tu_fixture_array(&cols[i], 3, 2, buffers[i], 0, NULL);
    col_ptrs[i] = &cols[i];
  }
  cols[4].n_buffers = 4;
  cols[10].n_buffers = 3;
  cols[10].null_count = 1;
  cols[12].null_count = 1;
  tu_fixture_array(&ree_arrays[0], 2, 2, b_ends, 0, NULL);
  tu_fixture_array(&ree_arrays[1], 2, 3, b_xy, 0, NULL);
  tu_fixture_array(&cols[5], 3, 0, NULL, 2, ree_ptrs);
  tu_fixture_array(&lv_items_array, 3, 2, b_items, 0, NULL);
  tu_fixture_array(&cols[6], 3, 3, b_lv, 1, &lv_ptr);
  tu_fixture_array(&dict_array, 2, 3, b_ab, 0, NULL);
  cols[12].dictionary = &dict_array;
  tu_fixture_array(&batch, 3, 1, b_root, N_TYPED, col_ptrs);

  FILE *f = fopen(path, "wb");
  if (f == NULL) return snprintf(msg, MSG_SIZE, "cannot create %s", path), false;
  xchg_error err = {{0}};
  xchg_ipc_writer *w = NULL;
  xchg_status st = xchg_ipc_writer_open_fd(&root, NULL, fileno(f), &w, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_write(w, &batch, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_ipc_writer_free(w);
  fclose(f);
  if (st != XCHG_OK) snprintf(msg, MSG_SIZE, "writing the fixture: %.900s", err.message);
  return st == XCHG_OK;
}

static bool json_value_is(json_t *value, const char *expected_json) {
  json_t *want = json_loads(expected_json, JSON_DECODE_ANY, NULL);
  bool same = want != NULL && value != NULL && json_equal(want, value);
  json_decref(want);
  return same;
}

static void check_typed_json_lines(const char *path) {
  const char *what =
      "cat --format json: views, run-end, list view, half, decimal32/64, intervals, temporal";
  char args[4300], msg[MSG_SIZE] = "";
  snprintf(args, sizeof args, "cat --format json '%s'", path);
  run_result r;
  if (!run_cli(args, &r)) {
    TU_CHECK(false, "%s: cannot run the CLI", what);
    return;
  }
  bool ok = r.exit_code == 0;
  if (!ok) snprintf(msg, sizeof msg, "exit %d: %.300s", r.exit_code, r.err);
  char *line = r.out;
  for (int row = 0; ok && row < 3; row++) {
    char *end = strchr(line, '\n');
    json_t *obj = end ? json_loadb(line, (size_t)(end - line), 0, NULL) : NULL;
    for (int c = 0; ok && c < N_TYPED; c++) {
      json_t *v = json_object_get(obj, typed_names[c]);
      if (!json_value_is(v, typed_rows[row][c])) {
        char *got = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
        snprintf(msg, sizeof msg, "row %d, %s: %s, expected %s", row, typed_names[c],
                 got ? got : "(missing)", typed_rows[row][c]);
        free(got);
        ok = false;
      }
    }
    json_decref(obj);
    line = end ? end + 1 : line;
  }
  TU_CHECK(ok, "%s: %s", what, msg);
  run_result_free(&r);
}

/* Checks parts of the integration JSON that follow from the fixture. */
static void check_typed_arrow_json(const char *path) {
  const char *what =
      "cat --format arrow-json: views, run-end, list view, half, decimal32/64, intervals";
  char args[4300], msg[MSG_SIZE] = "";
  snprintf(args, sizeof args, "cat --format arrow-json '%s'", path);
  run_result r;
  if (!run_cli(args, &r)) {
    TU_CHECK(false, "%s: cannot run the CLI", what);
    return;
  }
  json_t *doc = r.exit_code == 0 ? json_loadb(r.out, r.out_len, 0, NULL) : NULL;
  json_t *fields = json_object_get(json_object_get(doc, "schema"), "fields");
  json_t *cols = json_object_get(json_array_get(json_object_get(doc, "batches"), 0), "columns");
  static const struct {
    int column;
    const char *path[3];
    const char *json;
  } expect[] = {
      {0, {"type"}, "{\"name\":\"floatingpoint\",\"precision\":\"HALF\"}"},
      {1, {"type"}, "{\"name\":\"decimal\",\"precision\":9,\"scale\":2,\"bitWidth\":32}"},
      {3, {"type"}, "{\"name\":\"interval\",\"unit\":\"MONTH_DAY_NANO\"}"},
      {4, {"type"}, "{\"name\":\"utf8view\"}"},
      {5, {"type"}, "{\"name\":\"runendencoded\"}"},
      {6, {"type"}, "{\"name\":\"listview\"}"},
      {12, {"dictionary", "indexType"}, "{\"name\":\"int\",\"isSigned\":true,\"bitWidth\":8}"},
      {-1 - 1, {"DATA"}, "[\"12345\",\"-5\",\"0\"]"},
      {-1 - 3,
       {"DATA"},
       "[{\"months\":1,\"days\":2,\"nanoseconds\":3},{\"months\":-1,\"days\":0,"
       "\"nanoseconds\":-1500000000},{\"months\":0,\"days\":0,\"nanoseconds\":0}]"},
      {-1 - 4,
       {"VIEWS"},
       "[{\"SIZE\":5,\"INLINED\":\"short\"},{\"SIZE\":27,\"PREFIX_HEX\":\"61207374\","
       "\"BUFFER_INDEX\":0,\"OFFSET\":0},{\"SIZE\":0,\"INLINED\":\"\"}]"},
      {-1 - 4,
       {"VARIADIC_DATA_BUFFERS"},
       "[\"6120737472696E67206C6F6E676572207468616E207477656C7665\"]"},
      {-1 - 6, {"OFFSET"}, "[2,0,0]"},
      {-1 - 6, {"SIZE"}, "[1,2,0]"},
      {-1 - 10, {"VALIDITY"}, "[1,1,0]"},
      {-1 - 12, {"DATA"}, "[1,0,0]"},
  };
  bool ok = doc != NULL;
  if (!ok) snprintf(msg, sizeof msg, "exit %d: %.300s", r.exit_code, r.err);
  for (size_t k = 0; ok && k < sizeof expect / sizeof expect[0]; k++) {
    int column = expect[k].column;
    json_t *v = column >= 0 ? json_array_get(fields, (size_t)column)
                            : json_array_get(cols, (size_t)(-1 - column));
    for (int p = 0; p < 3 && expect[k].path[p]; p++) v = json_object_get(v, expect[k].path[p]);
    if (!json_value_is(v, expect[k].json)) {
      char *got = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
      snprintf(msg, sizeof msg, "%s %s: %.300s, expected %.300s",
               typed_names[column >= 0 ? column : -1 - column], expect[k].path[0],
               got ? got : "(missing)", expect[k].json);
      free(got);
      ok = false;
    }
  }
  json_t *ree = json_object_get(json_array_get(cols, 5), "children");
  if (ok && !json_value_is(json_object_get(json_array_get(ree, 0), "DATA"), "[2,3]")) {
    ok = false;
    snprintf(msg, sizeof msg, "ree run_ends DATA is not [2,3]");
  }
  TU_CHECK(ok, "%s: %s", what, msg);
  json_decref(doc);
  run_result_free(&r);
}

static bool write_in_child(const char *path, const char *const second_dict[2], bool typed,
                           const char *what);

static void check_typed(void) {
  char path[] = "/tmp/test_cli_typed_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    TU_CHECK(false, "typed fixture: cannot create a temporary file");
    return;
  }
  close(fd);
  if (write_in_child(path, NULL, true, "typed fixture written by xchg_ipc_writer")) {
    check_typed_json_lines(path);
    check_typed_arrow_json(path);
  }
  unlink(path);
}

/* ---- dictionaries that change between batches ----------------------------------------- */

/* Two batches of a dictionary<utf8, int8> column "d": first the dictionary
 * ["a", "b"] with indices [1, 0], then second[0] (as one string of
 * one-letter values) with indices [2, 0] or, for a one-value dictionary,
 * [0]; with second[1], a column "e" beside it, of its own dictionary
 * (another id) done the same way with second[1], as long as "d". */
static bool write_dict_fixture(const char *path, const char *const second[2], char *msg) {
  static const int8_t first_indices[2] = {1, 0}, second_indices[2] = {2, 0}, only_index[2] = {0, 0};
  int n_cols = second[1] ? 2 : 1;
  int32_t first_offsets[3] = {0, 1, 2}, second_offsets[2][8];
  struct ArrowSchema fields[2], values[2], root, *field_ptrs[2] = {&fields[0], &fields[1]};
  struct ArrowArray dict1[2], dict2[2], col1[2], col2[2], batch1, batch2;
  struct ArrowArray *col1_ptrs[2] = {&col1[0], &col1[1]}, *col2_ptrs[2] = {&col2[0], &col2[1]};
  const void *b_dict1[] = {NULL, first_offsets, "ab"}, *b_idx1[] = {NULL, first_indices};
  const void *b_dict2[2][3], *b_idx2[2][2];
  const void *b_root[] = {NULL};
  int32_t n2 = (int32_t)strlen(second[0]);
  for (int c = 0; c < n_cols; c++) {
    int32_t n = (int32_t)strlen(second[c]);
    for (int32_t k = 0; k <= n && k < 8; k++) second_offsets[c][k] = k;
    tu_fixture_schema(&values[c], "u", "", 0, NULL);
    tu_fixture_schema(&fields[c], "c", c == 0 ? "d" : "e", 0, NULL);
    fields[c].dictionary = &values[c];
    b_dict2[c][0] = NULL;
    b_dict2[c][1] = second_offsets[c];
    b_dict2[c][2] = second[c];
    b_idx2[c][0] = NULL;
    b_idx2[c][1] = n == 1 ? only_index : second_indices;
    tu_fixture_array(&dict1[c], 2, 3, b_dict1, 0, NULL);
    tu_fixture_array(&dict2[c], n, 3, b_dict2[c], 0, NULL);
    tu_fixture_array(&col1[c], 2, 2, b_idx1, 0, NULL);
    col1[c].dictionary = &dict1[c];
    tu_fixture_array(&col2[c], n2 == 1 ? 1 : 2, 2, b_idx2[c], 0, NULL);
    col2[c].dictionary = &dict2[c];
  }
  tu_fixture_schema(&root, "+s", "", n_cols, field_ptrs);
  tu_fixture_array(&batch1, 2, 1, b_root, n_cols, col1_ptrs);
  tu_fixture_array(&batch2, col2[0].length, 1, b_root, n_cols, col2_ptrs);
  FILE *f = fopen(path, "wb");
  if (f == NULL) return snprintf(msg, MSG_SIZE, "cannot create %s", path), false;
  xchg_error err = {{0}};
  xchg_ipc_writer *w = NULL;
  xchg_status st = xchg_ipc_writer_open_fd(&root, NULL, fileno(f), &w, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_write(w, &batch1, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_write(w, &batch2, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_ipc_writer_free(w);
  fclose(f);
  if (st != XCHG_OK) snprintf(msg, MSG_SIZE, "writing the fixture: %.900s", err.message);
  return st == XCHG_OK;
}

/* Runs write in a child (a crash there fails one check, not the test). */
static bool write_in_child(const char *path, const char *const second_dict[2], bool typed,
                           const char *what) {
  char msg[MSG_SIZE] = "";
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    bool ok = typed ? write_typed_fixture(path, msg) : write_dict_fixture(path, second_dict, msg);
    if (!ok) fprintf(stderr, "%s\n", msg);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    snprintf(msg, sizeof msg, "xchg_ipc_writer failed or crashed (status %d), see above", status);
    TU_CHECK(false, "%s: %s", what, msg);
    return false;
  }
  return true;
}

static void check_dictionary_changes(void) {
  char path[] = "/tmp/test_cli_dict_XXXXXX", args[4300], msg[MSG_SIZE];
  int fd = mkstemp(path);
  if (fd < 0) {
    TU_CHECK(false, "dictionary fixtures: cannot create a temporary file");
    return;
  }
  close(fd);
  run_result r;
  /* A delta: ["a", "b"] grows to ["a", "b", "c"]; one dictionary says it all. */
  if (write_in_child(path, (const char *[2]){"abc", NULL}, false, "delta dictionary fixture")) {
    snprintf(args, sizeof args, "cat --format json '%s'", path);
    if (run_cli(args, &r)) {
      TU_CHECK(
          r.exit_code == 0 &&
              strcmp(r.out, "{\"d\":\"b\"}\n{\"d\":\"a\"}\n{\"d\":\"c\"}\n{\"d\":\"a\"}\n") == 0,
          "cat --format json: a delta dictionary: %s", r.out);
      run_result_free(&r);
    }
    snprintf(args, sizeof args, "cat --format arrow-json '%s'", path);
    if (run_cli(args, &r)) {
      json_t *doc = r.exit_code == 0 ? json_loadb(r.out, r.out_len, 0, NULL) : NULL;
      json_t *dict = json_array_get(json_object_get(doc, "dictionaries"), 0);
      json_t *values = json_object_get(
          json_array_get(json_object_get(json_object_get(dict, "data"), "columns"), 0), "DATA");
      json_t *second = json_array_get(json_object_get(doc, "batches"), 1);
      json_t *indices =
          json_object_get(json_array_get(json_object_get(second, "columns"), 0), "DATA");
      snprintf(msg, sizeof msg, "exit %d: %.300s%.300s", r.exit_code, r.err, r.out);
      TU_CHECK(json_value_is(values, "[\"a\",\"b\",\"c\"]") && json_value_is(indices, "[2,0]") &&
                   json_array_size(json_object_get(doc, "dictionaries")) == 1,
               "cat --format arrow-json: a delta dictionary, written once, complete: %s", msg);
      json_decref(doc);
      run_result_free(&r);
    }
  }
  /* A replacement: ["a", "b"] then ["c"]: integration JSON cannot say it. */
  if (write_in_child(path, (const char *[2]){"c", NULL}, false, "replaced dictionary fixture")) {
    snprintf(args, sizeof args, "cat --format json '%s'", path);
    if (run_cli(args, &r)) {
      TU_CHECK(
          r.exit_code == 0 && strcmp(r.out, "{\"d\":\"b\"}\n{\"d\":\"a\"}\n{\"d\":\"c\"}\n") == 0,
          "cat --format json: a replaced dictionary: %s", r.out);
      run_result_free(&r);
    }
    snprintf(args, sizeof args, "cat --format arrow-json '%s'", path);
    if (run_cli(args, &r)) {
      snprintf(msg, sizeof msg, "exit %d: %.300s", r.exit_code, r.err);
      TU_CHECK(r.exit_code == 1 && strstr(r.err, "replaces the dictionary of \"d\""),
               "cat --format arrow-json: a replaced dictionary is an error, not wrong values: %s",
               msg);
      run_result_free(&r);
    }
    /* The file format cannot hold it either: the input's failure, whether
     * the batch is refused as it is handed over or when the batches held
     * for --batch-rows are written at the end (that named OUT). */
    for (int held = 0; held < 2; held++) {
      char want[4400];
      snprintf(args, sizeof args, "convert '%s' '%s.out' --file -f%s", path, path,
               held ? " --batch-rows 100" : "");
      snprintf(want, sizeof want, "xchg: %s: ", path);
      if (!run_cli(args, &r)) continue;
      snprintf(msg, sizeof msg, "exit %d: %.300s", r.exit_code, r.err);
      TU_CHECK(r.exit_code == 1 && strncmp(r.err, want, strlen(want)) == 0 &&
                   strstr(r.err, "field 'd': the file format cannot replace dictionary"),
               "convert --file%s of a replaced dictionary names the input: %s",
               held ? " --batch-rows 100" : "", msg);
      run_result_free(&r);
    }
  }
  /* In one batch, "d" grows by a delta and "e" is replaced: the error
   * names "e" (it named "d", any change counting once any dictionary was
   * replaced); with "e" alone selected too, and "d" alone prints. */
  if (write_in_child(path, (const char *[2]){"abc", "c"}, false, "delta and replacement fixture")) {
    static const char *const selections[3] = {"", "--columns e", "--columns d"};
    for (int k = 0; k < 3; k++) {
      snprintf(args, sizeof args, "cat --format arrow-json %s '%s'", selections[k], path);
      if (!run_cli(args, &r)) continue;
      snprintf(msg, sizeof msg, "exit %d: %.300s", r.exit_code, r.err);
      TU_CHECK(k == 2 ? r.exit_code == 0
                      : r.exit_code == 1 && strstr(r.err, "replaces the dictionary of \"e\""),
               "cat --format arrow-json %s: a delta to \"d\" beside a replaced \"e\": %s",
               selections[k], msg);
      run_result_free(&r);
    }
  }
  unlink(path);
}

/* ---- stream codecs around the IPC data ------------------------------------------------ */

/* Appends `copies` streams of codec (Comet blocks), each wrapping all of ipc,
 * to the file at path (truncated first). */
static bool write_wrapped(const char *path, xchg_stream_codec codec, const tu_bytes *ipc,
                          int copies, char *msg) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return snprintf(msg, MSG_SIZE, "cannot write %s", path), false;
  bool ok = true;
  for (int k = 0; k < copies && ok; k++) {
    xchg_buf *wrapped = NULL;
    xchg_error err = {{0}};
    ok = xchg_stream_encode(codec, NULL, ipc->data, ipc->size, &wrapped, &err) == XCHG_OK;
    if (!ok)
      snprintf(msg, MSG_SIZE, "xchg_stream_encode %s: %.900s", xchg_stream_codec_name(codec),
               err.message);
    if (ok &&
        fwrite(xchg_buf_data(wrapped), 1, xchg_buf_size(wrapped), f) != xchg_buf_size(wrapped)) {
      ok = false;
      snprintf(msg, MSG_SIZE, "cannot write %s", path);
    }
    xchg_buf_unref(wrapped);
  }
  return fclose(f) == 0 && ok;
}

/* The gold document of `copies` IPC streams read one after another: the
 * same schema and dictionaries, the batches `copies` times over. */
static json_t *gold_repeated(json_t *gold, int copies) {
  json_t *out = json_deep_copy(gold), *batches = json_object_get(out, "batches");
  size_t n = json_array_size(batches);
  for (int k = 1; k < copies; k++)
    for (size_t i = 0; i < n; i++)
      json_array_append_new(batches, json_deep_copy(json_array_get(batches, i)));
  return out;
}

/* Runs `xchg args` and compares its arrow-json output with want, the
 * document of the gold file ipc_path. */
static void check_arrow_json_run(const char *what, const char *args, json_t *want,
                                 const char *ipc_path) {
  char msg[MSG_SIZE] = "";
  run_result r;
  if (!run_cli(args, &r)) {
    TU_CHECK(false, "%s: cannot run the CLI", what);
    return;
  }
  json_error_t jerr;
  json_t *ours = r.exit_code == 0 ? json_loadb(r.out, r.out_len, 0, &jerr) : NULL;
  if (ours == NULL) snprintf(msg, sizeof msg, "exit %d: %.400s", r.exit_code, r.err);
  TU_CHECK(ours != NULL && tu_json_doc_equal(want, ours, ipc_path, msg, sizeof msg), "%s: %s", what,
           msg);
  json_decref(ours);
  run_result_free(&r);
}

static const xchg_stream_codec wrapping_codecs[] = {
    XCHG_STREAM_LZ4_JAVA,  XCHG_STREAM_SNAPPY_JAVA,   XCHG_STREAM_ZSTD,
    XCHG_STREAM_LZ4_FRAME, XCHG_STREAM_SNAPPY_FRAMED, XCHG_STREAM_COMET};

/* One gold stream wrapped in every codec, once and (as Spark and Comet
 * write them) twice in a row: `cat --input-codec C` and `--input-codec auto` (from a
 * file and from standard input) must give the gold document. */
static void check_codecs_on(const char *gold_root, const char *file, const char *tmp) {
  char ipc_path[8192], json_path[8300], msg[MSG_SIZE] = "";
  snprintf(ipc_path, sizeof ipc_path, "%s/%s", gold_root, file);
  gold_json_path(ipc_path, json_path, sizeof json_path);
  json_t *gold = tu_json_load(json_path, msg, sizeof msg);
  tu_bytes ipc = tu_read_bytes(ipc_path);
  if (gold == NULL || ipc.data == NULL) {
    TU_CHECK(false, "%s: %s", file, gold ? "cannot read the gold stream" : msg);
    json_decref(gold);
    free(ipc.data);
    return;
  }
  for (size_t c = 0; c < sizeof wrapping_codecs / sizeof wrapping_codecs[0]; c++) {
    const char *name = xchg_stream_codec_name(wrapping_codecs[c]);
    for (int copies = 1; copies <= 2; copies++) {
      char what[9000], args[9000];
      if (!write_wrapped(tmp, wrapping_codecs[c], &ipc, copies, msg)) {
        TU_CHECK(false, "%s: %s", file, msg);
        continue;
      }
      json_t *want = gold_repeated(gold, copies);
      const char *how[] = {name, "auto"};
      for (int h = 0; h < 2; h++) {
        snprintf(what, sizeof what,
                 "cat --format arrow-json --input-codec %s: %s in %d %s stream%s", how[h], file,
                 copies, name, copies > 1 ? "s" : "");
        snprintf(args, sizeof args, "cat --format arrow-json --input-codec %s '%s'", how[h], tmp);
        check_arrow_json_run(what, args, want, ipc_path);
      }
      snprintf(what, sizeof what, "cat --format arrow-json - (auto): %s in %d %s stream%s on stdin",
               file, copies, name, copies > 1 ? "s" : "");
      snprintf(args, sizeof args, "cat --format arrow-json - < '%s'", tmp);
      check_arrow_json_run(what, args, want, ipc_path);
      json_decref(want);
    }
  }
  char what[9000], args[9000];
  snprintf(what, sizeof what, "cat --format arrow-json --input-codec none: %s", file);
  snprintf(args, sizeof args, "cat --format arrow-json --input-codec none '%s'", ipc_path);
  check_arrow_json_run(what, args, gold, ipc_path);
  free(ipc.data);
  json_decref(gold);
}

/* inspect on a wrapped input names the codec and, with --streams (IPC
 * streams of one schema are a file of blocks, in a codec as in plain IPC),
 * shows every IPC stream, each from its schema message (#0) on. */
static void check_codec_inspect(const tu_bytes *ipc, json_t *gold, const char *tmp) {
  char msg[MSG_SIZE] = "", args[4300], want[256];
  run_result r;
  if (!write_wrapped(tmp, XCHG_STREAM_LZ4_JAVA, ipc, 2, msg)) {
    TU_CHECK(false, "inspect on lz4-java: %s", msg);
    return;
  }
  snprintf(args, sizeof args, "inspect --messages --streams '%s'", tmp);
  if (!run_cli(args, &r)) return;
  size_t batches = json_array_size(json_object_get(gold, "batches"));
  snprintf(want, sizeof want, "\ninput: 2 IPC streams, %zu record batches, ", 2 * batches);
  const char *first_schema = strstr(r.out, "\n  #0 schema ");
  bool ok = r.exit_code == 0 && strstr(r.out, "\ncodec: lz4-java\n") &&
            strstr(r.out, "\nIPC stream 2 at decoded byte ") && first_schema &&
            strstr(first_schema + 1, "\n  #0 schema ") && strstr(r.out, want);
  snprintf(msg, sizeof msg, "exit %d, wanted \"%s\"; output: %.600s", r.exit_code, want, r.out);
  TU_CHECK(ok, "inspect: an lz4-java input of 2 IPC streams, each from message #0: %s", msg);
  run_result_free(&r);
}

/* Wrong codecs, mixed schemas and cut input end in clean errors. */
static void check_codec_errors(const char *gold_root, const tu_bytes *ipc, const char *tmp) {
  char msg[MSG_SIZE] = "", args[9000];
  run_result r;
  if (write_wrapped(tmp, XCHG_STREAM_LZ4_JAVA, ipc, 1, msg)) {
    snprintf(args, sizeof args, "cat --input-codec zstd '%s'", tmp);
    if (run_cli(args, &r)) {
      snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
      TU_CHECK(r.exit_code == 1 && strncmp(r.err, "xchg: ", 6) == 0,
               "--input-codec zstd on lz4-java input: exit 1: %s", msg);
      run_result_free(&r);
    }
    tu_bytes wrapped = tu_read_bytes(tmp);
    if (wrapped.data != NULL) {
      FILE *f = fopen(tmp, "wb");
      if (f != NULL) {
        fwrite(wrapped.data, 1, wrapped.size / 2, f);
        fclose(f);
      }
      snprintf(args, sizeof args, "cat --format arrow-json '%s'", tmp);
      if (run_cli(args, &r)) {
        snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
        TU_CHECK(r.exit_code == 1 && strstr(r.err, " is cut short: the input ends at byte "),
                 "an lz4-java input cut in half: exit 1, cut short: %s", msg);
        run_result_free(&r);
      }
      free(wrapped.data);
    }
  }
  /* Comet blocks of two different schemas cannot print as one table. */
  char other_path[8192];
  snprintf(other_path, sizeof other_path, "%s/1.0.0-littleendian/generated_primitive.stream",
           gold_root);
  tu_bytes other = tu_read_bytes(other_path);
  if (other.data != NULL && write_wrapped(tmp, XCHG_STREAM_COMET, ipc, 1, msg)) {
    xchg_buf *block = NULL;
    xchg_error err = {{0}};
    FILE *f = fopen(tmp, "ab");
    if (f != NULL && xchg_stream_encode(XCHG_STREAM_COMET, NULL, other.data, other.size, &block,
                                        &err) == XCHG_OK)
      fwrite(xchg_buf_data(block), 1, xchg_buf_size(block), f);
    if (f != NULL) fclose(f);
    xchg_buf_unref(block);
    snprintf(args, sizeof args, "cat --format json '%s'", tmp);
    if (run_cli(args, &r)) {
      snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
      TU_CHECK(
          r.exit_code == 1 && strstr(r.err, "IPC stream 2 ") && strstr(r.err, "schema differs"),
          "Comet blocks with different schemas: exit 1 naming the second: %s", msg);
      run_result_free(&r);
    }
  }
  free(other.data);
  if (run_cli("cat --input-codec lz4 x", &r)) {
    snprintf(msg, sizeof msg, "exit %d, stderr: %.300s", r.exit_code, r.err);
    TU_CHECK(r.exit_code == 2 && strstr(r.err, "'lz4'"),
             "--input-codec lz4 (ambiguous) is a usage error: %s", msg);
    run_result_free(&r);
  }
}

static void check_codecs(const char *gold_root) {
  char tmp[] = "/tmp/test_cli_codec_XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) {
    TU_CHECK(false, "codec fixtures: cannot create a temporary file");
    return;
  }
  close(fd);
  const char *files[] = {"1.0.0-littleendian/generated_primitive.stream",
                         "1.0.0-littleendian/generated_nested_dictionary.stream",
                         "2.0.0-compression/generated_lz4.stream",
                         "4.0.0-shareddict/generated_shared_dict.stream"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    check_codecs_on(gold_root, files[i], tmp);

  char ipc_path[8192], json_path[8300], msg[MSG_SIZE] = "";
  snprintf(ipc_path, sizeof ipc_path, "%s/1.0.0-littleendian/generated_dictionary.stream",
           gold_root);
  gold_json_path(ipc_path, json_path, sizeof json_path);
  json_t *gold = tu_json_load(json_path, msg, sizeof msg);
  tu_bytes ipc = tu_read_bytes(ipc_path);
  if (gold != NULL && ipc.data != NULL) {
    check_codec_inspect(&ipc, gold, tmp);
    check_codec_errors(gold_root, &ipc, tmp);
  } else {
    TU_CHECK(false, "generated_dictionary.stream: %s", gold ? "cannot read it" : msg);
  }
  free(ipc.data);
  json_decref(gold);
  unlink(tmp);
}

/* The gold JSON at gold_root/name, for the check `what`; NULL after
 * reporting that check as failed. */
static json_t *load_gold_for(const char *gold_root, const char *name, const char *what) {
  char path[8192], msg[MSG_SIZE];
  snprintf(path, sizeof path, "%s/%s", gold_root, name);
  json_t *gold = tu_json_load(path, msg, sizeof msg);
  TU_CHECK(gold != NULL, "%s: %s", what, msg);
  return gold;
}

/* Dictionary ids are compared strictly: renumbering them consistently, or
 * splitting a shared dictionary into two equal ones, is caught. */
static void self_check_dictionary_ids(const char *gold_root) {
  char msg[MSG_SIZE] = "";
  json_t *gold = load_gold_for(gold_root, "4.0.0-shareddict/generated_shared_dict.json.gz",
                               "self-check: dictionary ids");
  if (gold == NULL) return;
  json_t *fields = json_object_get(json_object_get(gold, "schema"), "fields");
  json_t *dicts = json_object_get(gold, "dictionaries");
  json_int_t shared = json_integer_value(
      json_object_get(json_object_get(json_array_get(fields, 0), "dictionary"), "id"));
  TU_CHECK(
      json_array_size(fields) == 2 && json_array_size(dicts) == 1 &&
          shared == json_integer_value(json_object_get(
                        json_object_get(json_array_get(fields, 1), "dictionary"), "id")),
      "self-check: shared_dict's two fields share one dictionary in the gold JSON: they do not");

  json_t *renumbered = json_deep_copy(gold); /* every id + 7, schema and dictionaries alike */
  json_t *f, *d;
  size_t i;
  json_array_foreach(json_object_get(json_object_get(renumbered, "schema"), "fields"), i, f) {
    json_t *enc = json_object_get(f, "dictionary");
    json_object_set_new(enc, "id",
                        json_integer(json_integer_value(json_object_get(enc, "id")) + 7));
  }
  json_array_foreach(json_object_get(renumbered, "dictionaries"), i, d) {
    json_object_set_new(d, "id", json_integer(json_integer_value(json_object_get(d, "id")) + 7));
  }
  TU_CHECK(!tu_json_doc_equal(gold, renumbered, NULL, msg, sizeof msg),
           "self-check: consistently renumbered dictionary ids are caught: not caught");
  json_decref(renumbered);

  json_t *split =
      json_deep_copy(gold); /* col2 gets a copy of the shared dictionary, id shared + 1 */
  json_t *second = json_object_get(
      json_array_get(json_object_get(json_object_get(split, "schema"), "fields"), 1), "dictionary");
  json_object_set_new(second, "id", json_integer(shared + 1));
  json_t *copy = json_deep_copy(json_array_get(json_object_get(split, "dictionaries"), 0));
  json_object_set_new(copy, "id", json_integer(shared + 1));
  json_array_append_new(json_object_get(split, "dictionaries"), copy);
  TU_CHECK(!tu_json_doc_equal(gold, split, NULL, msg, sizeof msg),
           "self-check: a shared dictionary split in two is caught: not caught");
  json_decref(split);

  json_t *twice = json_deep_copy(gold); /* the shared dictionary written twice */
  json_array_append_new(json_object_get(twice, "dictionaries"),
                        json_deep_copy(json_array_get(json_object_get(twice, "dictionaries"), 0)));
  TU_CHECK(!tu_json_doc_equal(gold, twice, NULL, msg, sizeof msg),
           "self-check: a dictionary written twice is caught: not caught");
  json_decref(twice);
  json_decref(gold);
}

/* The comparison must catch a changed value, count and field name. */
static void self_check(const char *gold_root) {
  char msg[MSG_SIZE] = "";
  json_t *gold =
      load_gold_for(gold_root, "1.0.0-littleendian/generated_nested.json.gz", "self-check");
  if (gold == NULL) return;
  json_t *changed = json_deep_copy(gold);
  TU_CHECK(tu_json_doc_equal(gold, changed, NULL, msg, sizeof msg),
           "self-check: a document equals itself: %s", msg);
  json_t *col = json_array_get(
      json_object_get(json_array_get(json_object_get(changed, "batches"), 0), "columns"), 2);
  json_t *f1 = json_array_get(json_object_get(col, "children"), 0);
  json_t *validity = json_object_get(f1, "VALIDITY"), *data = json_object_get(f1, "DATA");
  size_t i = 0;
  while (i < json_array_size(validity) && json_integer_value(json_array_get(validity, i)) == 0) i++;
  json_array_set_new(data, i, json_integer(json_integer_value(json_array_get(data, i)) + 1));
  TU_CHECK(!tu_json_doc_equal(gold, changed, NULL, msg, sizeof msg),
           "self-check: a changed valid value is caught: not caught");
  json_decref(changed);
  changed = json_deep_copy(gold);
  json_object_set_new(json_array_get(json_object_get(changed, "batches"), 1), "count",
                      json_integer(3));
  TU_CHECK(!tu_json_doc_equal(gold, changed, NULL, msg, sizeof msg),
           "self-check: a changed count is caught: not caught");
  json_decref(changed);
  changed = json_deep_copy(gold);
  json_object_set_new(
      json_array_get(json_object_get(json_object_get(changed, "schema"), "fields"), 0), "name",
      json_string("renamed"));
  TU_CHECK(!tu_json_doc_equal(gold, changed, NULL, msg, sizeof msg),
           "self-check: a renamed field is caught: not caught");
  json_decref(changed);
  json_decref(gold);
  self_check_dictionary_ids(gold_root);
}

/* Sanitizer reports must not pass for the clean error exit code 1. */
static void sanitizers_exit_loudly(void) {
  const char *vars[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS"};
  for (size_t i = 0; i < 2; i++) {
    const char *old = getenv(vars[i]);
    char value[2048];
    snprintf(value, sizeof value, "%s%sexitcode=86", old ? old : "", old && *old ? ":" : "");
    setenv(vars[i], value, 1);
  }
}

static char gold_root[4096], fuzz_root[4096];

static void self_checks(void) { self_check(gold_root); }

/* Every gold file as JSON, JSON lines and inspect output. */
static void gold_files(void) {
  name_list files = {0};
  list_files(gold_root, ".stream", ".arrow_file", &files);
  TU_CHECK(files.n != 0, "gold files: none found under %s", gold_root);
  for (size_t i = 0; i < files.n; i++) {
    char json_path[4200], msg[MSG_SIZE] = "";
    gold_json_path(files.items[i], json_path, sizeof json_path);
    json_t *gold = tu_json_load(json_path, msg, sizeof msg);
    if (!TU_CHECK(gold != NULL, "%s: %s", short_name(files.items[i]), msg)) continue;
    check_arrow_json(files.items[i], gold);
    check_json_lines(files.items[i], gold);
    check_inspect(files.items[i], gold);
    json_decref(gold);
  }
  name_list_free(&files);
}

static void subsets(void) { check_subsets(gold_root); }
static void csv(void) { check_csv(gold_root); }
static void csv_one_column(void) { check_csv_one_column(gold_root); }
static void csv_no_columns(void) { check_csv_no_columns(); }
static void inspect_no_columns(void) { check_inspect_no_columns(); }
static void errors(void) { check_errors(gold_root); }
static void fuzz(void) { check_fuzz(fuzz_root); }
static void codecs(void) { check_codecs(gold_root); }

int main(int argc, char **argv) {
  cli = tu_cli_path();
  sanitizers_exit_loudly();
  tu_testdata_path(gold_root, sizeof gold_root, "arrow-gold");
  tu_testdata_path(fuzz_root, sizeof fuzz_root, "arrow-fuzz");
  static const tu_case cases[] = {
      {"self_check", self_checks},
      {"gold_files", gold_files},
      {"subsets", subsets},
      {"csv", csv},
      {"errors", errors},
      {"fuzz", fuzz},
      {"typed", check_typed},
      {"dictionary_changes", check_dictionary_changes},
      {"codecs", codecs},
      {"csv_one_column", csv_one_column},
      {"csv_no_columns", csv_no_columns},
      {"inspect_no_columns", inspect_no_columns},
  };
  return TU_MAIN(argc, argv, "cli", cases);
}
