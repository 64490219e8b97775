/* tests/test_json_keys.c — `xchg cat --format json` gives fields that share
 * a name distinct keys (README: "Fields that share a name"), read back
 * with jansson refusing duplicate keys (JSON_REJECT_DUPLICATES), so that a
 * collapsed or repeated key fails:
 *
 *  - Arrow's gold generated_duplicate_fieldnames (.stream and .arrow_file):
 *    two columns "ints" and a struct of two fields "" print as "ints",
 *    "ints_2", "struct" {"", "_2"}, each key holding its own column's value
 *    as the gold JSON has it;
 *  - a stream written here with columns a, a, a_2, "", "" and a struct s of
 *    fields x, x, x: keys a, a_3 (a_2 is a column's own name), a_2, "",
 *    "_2", s {x, x_2, x_3}, each with its own value; with --columns the
 *    keys follow the columns chosen, in their order;
 *  - the CSV header keeps the names as they are (CSV columns are
 *    positional; an empty name is "", as an empty string is). */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/c_fixture.h"
#include "support/cli_run.h"
#include "support/json_util.h"
#include "support/testutil.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"

static const char *cli;

/* The JSON Lines of `xchg args`, each parsed with duplicate keys refused;
 * NULL (and a failed check) when the command or a line fails. */
static json_t *json_rows(const char *args) {
  tu_cli_result r;
  if (!tu_cli_run(cli, args, &r)) {
    TU_CHECK(false, "cannot run xchg %s", args);
    return NULL;
  }
  json_t *rows = json_array();
  bool ok = r.exit_code == 0 && r.err[0] == '\0';
  TU_CHECK(ok, "xchg %s: exit %d: %.300s", args, r.exit_code, r.err);
  for (char *line = r.out; ok && *line;) {
    char *end = strchr(line, '\n');
    json_error_t jerr;
    json_t *row =
        end ? json_loadb(line, (size_t)(end - line), JSON_REJECT_DUPLICATES, &jerr) : NULL;
    TU_CHECK(row != NULL, "xchg %s: a line is not JSON with distinct keys: %s", args,
             end ? jerr.text : "no newline");
    if (row == NULL)
      ok = false;
    else
      json_array_append_new(rows, row);
    line = end ? end + 1 : line + strlen(line);
  }
  tu_cli_result_free(&r);
  if (!ok) json_decref(rows);
  return ok ? rows : NULL;
}

/* Whether obj's keys are exactly want[0..n), in this order. */
static bool keys_are(json_t *obj, const char *const *want, size_t n, char *got, size_t size) {
  size_t at = 0;
  got[0] = '\0';
  bool same = json_is_object(obj) && json_object_size(obj) == n;
  size_t k = 0;
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it), k++) {
    const char *key = json_object_iter_key(it);
    at += (size_t)snprintf(got + at, at < size ? size - at : 0, "%s\"%s\"", k ? "," : "", key);
    if (at >= size) at = size - 1;
    same = same && k < n && strcmp(key, want[k]) == 0;
  }
  return same;
}

/* ---- the gold file ---------------------------------------------------------------- */

/* DATA[0] of the gold column at path (column indices), or NULL when
 * VALIDITY[0] is 0 (JSON null). */
static json_t *gold_value(json_t *gold, const int *path, int depth) {
  json_t *col = json_array_get(
      json_object_get(json_array_get(json_object_get(gold, "batches"), 0), "columns"),
      (size_t)path[0]);
  for (int d = 1; d < depth; d++)
    col = json_array_get(json_object_get(col, "children"), (size_t)path[d]);
  if (json_integer_value(json_array_get(json_object_get(col, "VALIDITY"), 0)) == 0)
    return json_null();
  return json_array_get(json_object_get(col, "DATA"), 0);
}

static void check_gold(const char *root, const char *file) {
  char path[4096], args[4200], json_path[4096], msg[512], got[512];
  snprintf(path, sizeof path, "%s/1.0.0-littleendian/%s", root, file);
  snprintf(json_path, sizeof json_path,
           "%s/1.0.0-littleendian/generated_duplicate_fieldnames.json.gz", root);
  json_t *gold = tu_json_load(json_path, msg, sizeof msg);
  TU_CHECK(gold != NULL, "%s", msg);
  snprintf(args, sizeof args, "cat --format json '%s'", path);
  json_t *rows = json_rows(args);
  json_t *row = json_array_get(rows, 0);
  TU_CHECK(rows && json_array_size(rows) == 1, "%s: %zu rows, the gold file has 1", file,
           json_array_size(rows));
  static const char *const top[] = {"ints", "ints_2", "struct"}, *const inner[] = {"", "_2"};
  TU_CHECK(keys_are(row, top, 3, got, sizeof got),
           "%s: keys %s, expected \"ints\",\"ints_2\",\"struct\"", file, got);
  json_t *s = json_object_get(row, "struct");
  TU_CHECK(keys_are(s, inner, 2, got, sizeof got), "%s: struct keys %s, expected \"\",\"_2\"", file,
           got);
  static const int p0[] = {0}, p1[] = {1}, p20[] = {2, 0}, p21[] = {2, 1};
  json_t *values[][2] = {{json_object_get(row, "ints"), gold_value(gold, p0, 1)},
                         {json_object_get(row, "ints_2"), gold_value(gold, p1, 1)},
                         {json_object_get(s, ""), gold_value(gold, p20, 2)},
                         {json_object_get(s, "_2"), gold_value(gold, p21, 2)}};
  for (int k = 0; gold && row && k < 4; k++) {
    char *a = values[k][0] ? json_dumps(values[k][0], JSON_ENCODE_ANY) : NULL;
    char *b = values[k][1] ? json_dumps(values[k][1], JSON_ENCODE_ANY) : NULL;
    TU_CHECK(a && b && strcmp(a, b) == 0, "%s: value %d is %s, the gold JSON's %s", file, k,
             a ? a : "missing", b ? b : "missing");
    free(a);
    free(b);
  }
  json_decref(rows);
  json_decref(gold);
}

/* ---- names written here ------------------------------------------------------------- */

#define N_COLUMNS 6

static bool write_fixture(const char *path) {
  static const char *const names[N_COLUMNS] = {"a", "a", "a_2", "", "", "s"};
  static const int32_t data[5][1] = {{10}, {11}, {12}, {13}, {14}};
  static const int32_t x[3][1] = {{20}, {21}, {22}};
  struct ArrowSchema fields[N_COLUMNS], kids[3], root, *field_ptrs[N_COLUMNS], *kid_ptrs[3];
  struct ArrowArray cols[N_COLUMNS], kid_arrays[3], batch, *col_ptrs[N_COLUMNS], *kid_array_ptrs[3];
  const void *buffers[8][2], *no_buffer[1] = {NULL};
  for (int k = 0; k < 3; k++) {
    tu_fixture_schema(&kids[k], "i", "x", 0, NULL);
    kid_ptrs[k] = &kids[k];
    buffers[5 + k][0] = NULL;
    buffers[5 + k][1] = x[k];
    tu_fixture_array(&kid_arrays[k], 1, 2, buffers[5 + k], 0, NULL);
    kid_array_ptrs[k] = &kid_arrays[k];
  }
  for (int c = 0; c < N_COLUMNS; c++) {
    bool is_struct = c == 5;
    tu_fixture_schema(&fields[c], is_struct ? "+s" : "i", names[c], is_struct ? 3 : 0,
                      is_struct ? kid_ptrs : NULL);
    field_ptrs[c] = &fields[c];
    if (is_struct) {
      tu_fixture_array(&cols[c], 1, 1, no_buffer, 3, kid_array_ptrs);
    } else {
      buffers[c][0] = NULL;
      buffers[c][1] = data[c];
      tu_fixture_array(&cols[c], 1, 2, buffers[c], 0, NULL);
    }
    col_ptrs[c] = &cols[c];
  }
  tu_fixture_schema(&root, "+s", "", N_COLUMNS, field_ptrs);
  root.flags = 0;
  tu_fixture_array(&batch, 1, 1, no_buffer, N_COLUMNS, col_ptrs);
  FILE *f = fopen(path, "wb");
  TU_CHECK(f != NULL, "cannot create %s", path);
  if (f == NULL) return false;
  xchg_error err = {{0}};
  xchg_ipc_writer *w = NULL;
  xchg_status st = xchg_ipc_writer_open_fd(&root, NULL, fileno(f), &w, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_write(w, &batch, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_ipc_writer_free(w);
  fclose(f);
  TU_CHECK(st == XCHG_OK, "writing the fixture: %s", err.message);
  return st == XCHG_OK;
}

static void check_value(json_t *obj, const char *key, long long want, const char *what) {
  json_t *v = json_object_get(obj, key);
  TU_CHECK(json_is_integer(v) && json_integer_value(v) == want,
           "%s: key \"%s\" holds %lld, expected %lld", what, key,
           v ? (long long)json_integer_value(v) : -1, want);
}

static void check_fixture(const char *dir) {
  char path[4200], args[4400], got[512];
  snprintf(path, sizeof path, "%s/names.arrows", dir);
  if (!write_fixture(path)) return;

  snprintf(args, sizeof args, "cat --format json '%s'", path);
  json_t *rows = json_rows(args);
  json_t *row = json_array_get(rows, 0);
  static const char *const top[] = {"a", "a_3", "a_2", "", "_2", "s"}, *const inner[] = {"x", "x_2",
                                                                                         "x_3"};
  TU_CHECK(keys_are(row, top, N_COLUMNS, got, sizeof got),
           "keys %s, expected a, a_3, a_2, \"\", _2, s", got);
  static const char *const value_keys[] = {"a", "a_3", "a_2", "", "_2"};
  for (int c = 0; row && c < 5; c++) check_value(row, value_keys[c], 10 + c, "all columns");
  json_t *s = json_object_get(row, "s");
  TU_CHECK(keys_are(s, inner, 3, got, sizeof got), "struct keys %s, expected x, x_2, x_3", got);
  for (int k = 0; s && k < 3; k++) check_value(s, inner[k], 20 + k, "struct s");
  json_decref(rows);

  /* The keys follow the columns chosen: #1 comes first and keeps "a". */
  snprintf(args, sizeof args, "cat --format json '%s' --columns '#1,#0,#4'", path);
  rows = json_rows(args);
  row = json_array_get(rows, 0);
  static const char *const chosen[] = {"a", "a_2", ""};
  TU_CHECK(keys_are(row, chosen, 3, got, sizeof got),
           "--columns '#1,#0,#4': keys %s, expected a, a_2, \"\"", got);
  check_value(row, "a", 11, "--columns '#1,#0,#4'");
  check_value(row, "a_2", 10, "--columns '#1,#0,#4'");
  check_value(row, "", 14, "--columns '#1,#0,#4'");
  json_decref(rows);

  tu_cli_result r;
  snprintf(args, sizeof args, "cat '%s' --format csv", path);
  bool ran = tu_cli_run(cli, args, &r);
  TU_CHECK(ran && r.exit_code == 0 && strncmp(r.out, "a,a,a_2,\"\",\"\",s\n", 16) == 0,
           "the CSV header is not the names as they are: %.100s", ran ? r.out : "");
  if (ran) tu_cli_result_free(&r);
}

static void gold_files(void) {
  char root[4096];
  tu_testdata_path(root, sizeof root, "arrow-gold");
  check_gold(root, "generated_duplicate_fieldnames.stream");
  check_gold(root, "generated_duplicate_fieldnames.arrow_file");
}

static void fixture(void) {
  char dir[] = "/tmp/xchg-json-keys-XXXXXX";
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return;
  check_fixture(dir);
  tu_run("rm -rf '%s'", dir);
}

int main(int argc, char **argv) {
  cli = tu_cli_path();
  static const tu_case cases[] = {
      {"gold_files", gold_files},
      {"fixture", fixture},
  };
  return TU_MAIN(argc, argv, "json_keys", cases);
}
