/* test_schema_view.c — the parsed view of ArrowSchema format strings
 * (src/ipc/schema_view.h): every format string of the Arrow C Data
 * Interface specification with each field it sets, malformed and
 * out-of-range ones refused with the string quoted, and the children each
 * type needs checked by ipc_schema_view_init. */
#include <stdio.h>
#include <string.h>

#include "ipc/schema_view.h"
#include "support/c_fixture.h"
#include "support/testutil.h"

/* What a format must parse to; fields not named stay as parsed of "n". */
typedef struct expected {
  const char *format;
  ipc_kind kind;
  int bit_width;
  bool is_signed, utf8, large, dense;
  ipc_unit unit;
  ipc_interval interval;
  int32_t precision, scale;
  int64_t width;
  const char *tz;
} expected;

static void check_parses(const expected *e) {
  ipc_schema_view v;
  xchg_error err;
  if (ipc_schema_view_parse(e->format, &v, &err) != XCHG_OK) {
    TU_CHECK(0, "\"%s\" refused: %s", e->format, err.message);
    return;
  }
  const char *tz = e->tz ? e->tz : "";
  TU_CHECK(
      v.kind == e->kind && v.bit_width == e->bit_width && v.is_signed == e->is_signed &&
          v.utf8 == e->utf8 && v.large == e->large && v.dense == e->dense && v.unit == e->unit &&
          v.interval == e->interval && v.precision == e->precision && v.scale == e->scale &&
          v.width == e->width && strcmp(v.tz, tz) == 0,
      "\"%s\": kind %d bits %d signed %d utf8 %d large %d dense %d unit %d interval %d decimal(%d, %d) "
      "width %lld tz \"%s\"",
      e->format, (int)v.kind, v.bit_width, v.is_signed, v.utf8, v.large, v.dense, (int)v.unit,
      (int)v.interval, v.precision, v.scale, (long long)v.width, v.tz);
}

/* The formats of the specification's table, in its order. */
static void check_every_spec_format(void) {
  static const expected formats[] = {
      {.format = "n", .kind = IPC_KIND_NULL},
      {.format = "b", .kind = IPC_KIND_BOOL, .bit_width = 1},
      {.format = "c", .kind = IPC_KIND_INT, .bit_width = 8, .is_signed = true},
      {.format = "C", .kind = IPC_KIND_INT, .bit_width = 8, .is_signed = false},
      {.format = "s", .kind = IPC_KIND_INT, .bit_width = 16, .is_signed = true},
      {.format = "S", .kind = IPC_KIND_INT, .bit_width = 16, .is_signed = false},
      {.format = "i", .kind = IPC_KIND_INT, .bit_width = 32, .is_signed = true},
      {.format = "I", .kind = IPC_KIND_INT, .bit_width = 32, .is_signed = false},
      {.format = "l", .kind = IPC_KIND_INT, .bit_width = 64, .is_signed = true},
      {.format = "L", .kind = IPC_KIND_INT, .bit_width = 64, .is_signed = false},
      {.format = "e", .kind = IPC_KIND_FLOAT, .bit_width = 16},
      {.format = "f", .kind = IPC_KIND_FLOAT, .bit_width = 32},
      {.format = "g", .kind = IPC_KIND_FLOAT, .bit_width = 64},
      {.format = "z", .kind = IPC_KIND_BINARY, .bit_width = 32},
      {.format = "Z", .kind = IPC_KIND_BINARY, .bit_width = 64, .large = true},
      {.format = "vz", .kind = IPC_KIND_BINARY_VIEW},
      {.format = "u", .kind = IPC_KIND_BINARY, .bit_width = 32, .utf8 = true},
      {.format = "U", .kind = IPC_KIND_BINARY, .bit_width = 64, .utf8 = true, .large = true},
      {.format = "vu", .kind = IPC_KIND_BINARY_VIEW, .utf8 = true},
      {.format = "d:19,10",
       .kind = IPC_KIND_DECIMAL,
       .bit_width = 128,
       .precision = 19,
       .scale = 10},
      {.format = "d:9,2,32", .kind = IPC_KIND_DECIMAL, .bit_width = 32, .precision = 9, .scale = 2},
      {.format = "d:18,0,64", .kind = IPC_KIND_DECIMAL, .bit_width = 64, .precision = 18},
      {.format = "d:38,-3,128",
       .kind = IPC_KIND_DECIMAL,
       .bit_width = 128,
       .precision = 38,
       .scale = -3},
      {.format = "d:76,76,256",
       .kind = IPC_KIND_DECIMAL,
       .bit_width = 256,
       .precision = 76,
       .scale = 76},
      {.format = "d:1,0", .kind = IPC_KIND_DECIMAL, .bit_width = 128, .precision = 1},
      {.format = "w:42", .kind = IPC_KIND_FIXED_BINARY, .width = 42},
      {.format = "w:0", .kind = IPC_KIND_FIXED_BINARY},
      {.format = "w:2147483647", .kind = IPC_KIND_FIXED_BINARY, .width = 2147483647},
      {.format = "tdD", .kind = IPC_KIND_DATE, .bit_width = 32, .unit = IPC_UNIT_DAY},
      {.format = "tdm", .kind = IPC_KIND_DATE, .bit_width = 64, .unit = IPC_UNIT_MILLI},
      {.format = "tts", .kind = IPC_KIND_TIME, .bit_width = 32, .unit = IPC_UNIT_SECOND},
      {.format = "ttm", .kind = IPC_KIND_TIME, .bit_width = 32, .unit = IPC_UNIT_MILLI},
      {.format = "ttu", .kind = IPC_KIND_TIME, .bit_width = 64, .unit = IPC_UNIT_MICRO},
      {.format = "ttn", .kind = IPC_KIND_TIME, .bit_width = 64, .unit = IPC_UNIT_NANO},
      {.format = "tss:", .kind = IPC_KIND_TIMESTAMP, .bit_width = 64, .unit = IPC_UNIT_SECOND},
      {.format = "tsm:", .kind = IPC_KIND_TIMESTAMP, .bit_width = 64, .unit = IPC_UNIT_MILLI},
      {.format = "tsu:", .kind = IPC_KIND_TIMESTAMP, .bit_width = 64, .unit = IPC_UNIT_MICRO},
      {.format = "tsn:", .kind = IPC_KIND_TIMESTAMP, .bit_width = 64, .unit = IPC_UNIT_NANO},
      {.format = "tss:Europe/Paris",
       .kind = IPC_KIND_TIMESTAMP,
       .bit_width = 64,
       .unit = IPC_UNIT_SECOND,
       .tz = "Europe/Paris"},
      {.format = "tsu:+07:30",
       .kind = IPC_KIND_TIMESTAMP,
       .bit_width = 64,
       .unit = IPC_UNIT_MICRO,
       .tz = "+07:30"},
      {.format = "tsn:UTC",
       .kind = IPC_KIND_TIMESTAMP,
       .bit_width = 64,
       .unit = IPC_UNIT_NANO,
       .tz = "UTC"},
      {.format = "tDs", .kind = IPC_KIND_DURATION, .bit_width = 64, .unit = IPC_UNIT_SECOND},
      {.format = "tDm", .kind = IPC_KIND_DURATION, .bit_width = 64, .unit = IPC_UNIT_MILLI},
      {.format = "tDu", .kind = IPC_KIND_DURATION, .bit_width = 64, .unit = IPC_UNIT_MICRO},
      {.format = "tDn", .kind = IPC_KIND_DURATION, .bit_width = 64, .unit = IPC_UNIT_NANO},
      {.format = "tiM", .kind = IPC_KIND_INTERVAL, .interval = IPC_INTERVAL_YEAR_MONTH},
      {.format = "tiD", .kind = IPC_KIND_INTERVAL, .interval = IPC_INTERVAL_DAY_TIME},
      {.format = "tin", .kind = IPC_KIND_INTERVAL, .interval = IPC_INTERVAL_MONTH_DAY_NANO},
      {.format = "+l", .kind = IPC_KIND_LIST},
      {.format = "+L", .kind = IPC_KIND_LIST, .large = true},
      {.format = "+vl", .kind = IPC_KIND_LIST_VIEW},
      {.format = "+vL", .kind = IPC_KIND_LIST_VIEW, .large = true},
      {.format = "+w:123", .kind = IPC_KIND_FIXED_LIST, .width = 123},
      {.format = "+w:0", .kind = IPC_KIND_FIXED_LIST},
      {.format = "+s", .kind = IPC_KIND_STRUCT},
      {.format = "+m", .kind = IPC_KIND_MAP},
      {.format = "+ud:", .kind = IPC_KIND_UNION, .dense = true},
      {.format = "+us:", .kind = IPC_KIND_UNION},
      {.format = "+ud:0,1,2", .kind = IPC_KIND_UNION, .dense = true},
      {.format = "+us:5,127,0", .kind = IPC_KIND_UNION},
      {.format = "+r", .kind = IPC_KIND_RUN_END},
  };
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) check_parses(&formats[i]);
}

static void check_union_ids(const char *format, int n, const int8_t *ids) {
  ipc_schema_view v;
  xchg_error err;
  if (ipc_schema_view_parse(format, &v, &err) != XCHG_OK) {
    TU_CHECK(0, "\"%s\" refused: %s", format, err.message);
    return;
  }
  TU_CHECK(v.n_type_ids == n && memcmp(v.type_ids, ids, (size_t)n) == 0, "\"%s\": %d type ids",
           format, v.n_type_ids);
}

static void check_union_type_ids(void) {
  check_union_ids("+ud:", 0, (const int8_t[]){0});
  check_union_ids("+us:5,127,0", 3, (const int8_t[]){5, 127, 0});
  /* all 128 ids, the most a union has */
  char all[4 * 128 + 8] = "+ud:";
  int8_t ids[128];
  for (int i = 0; i < 128; i++) {
    ids[i] = (int8_t)(127 - i);
    snprintf(all + strlen(all), sizeof all - strlen(all), i ? ",%d" : "%d", 127 - i);
  }
  check_union_ids(all, 128, ids);
}

/* Refused: XCHG_EINVAL, the message quoting the format (its first 64
 * bytes when longer). */
static void check_refused(const char *format) {
  ipc_schema_view v;
  xchg_error err = {""};
  xchg_status st = ipc_schema_view_parse(format, &v, &err);
  char quoted[80];
  snprintf(quoted, sizeof quoted, strlen(format) > 64 ? "\"%.64s" : "\"%s\"", format);
  TU_CHECK(st == XCHG_EINVAL && strstr(err.message, quoted) != NULL,
           "\"%s\": status %d, message \"%s\"", format, (int)st, err.message);
}

static void check_malformed(void) {
  static const char *const bad[] = {
      "",
      "x",
      "A",
      "ii",
      "n ",
      "bb",
      "+",
      "+x",
      "+ll",
      "+S",
      "+ss",
      "+mm",
      "+rr",
      "v",
      "vx",
      "vzz",
      "+v",
      "+vx",
      "+vll",
      /* decimal: precision 1..76, scale -1000..1000, width 32, 64, 128 or 256, nothing after */
      "d",
      "d:",
      "d:19",
      "d:19,",
      "d:,2",
      "d:0,2",
      "d:77,2",
      "d:19,2,",
      "d:19,2,16",
      "d:19,2,512",
      "d:19,2,100",
      "d:19,2,128,",
      "d:19,2x",
      "d:19,1001",
      "d:19,-1001",
      "d:-5,2",
      "d:+5,2",
      "d: 5,2",
      "d:99999999999999999999,2",
      "d;19,2",
      /* fixed-size binary and list: 0..INT32_MAX, nothing after */
      "w",
      "w:",
      "w:-1",
      "w:+1",
      "w: 1",
      "w:1x",
      "w:2147483648",
      "w:1,2",
      "w;1",
      "+w",
      "+w:",
      "+w:-1",
      "+w:x",
      "+w:3 ",
      "+w:2147483648",
      /* temporal */
      "t",
      "td",
      "tdd",
      "tdDx",
      "tdM",
      "tt",
      "ttx",
      "ttsx",
      "ttd",
      "ts",
      "tss",
      "tsx:",
      "tsd:",
      "tD",
      "tDx",
      "tDsx",
      "tDd",
      "ti",
      "tim",
      "tiMx",
      "tx",
      "tdm:",
      /* unions: ids 0..127, each once, comma-separated, nothing after */
      "+u",
      "+ux:",
      "+ud",
      "+us",
      "+ud:,",
      "+ud:1,",
      "+ud:,1",
      "+ud:1,,2",
      "+ud:128",
      "+ud:-1",
      "+ud:1,1",
      "+us:0,5,0",
      "+ud:1 ",
      "+ud:a",
      "+ud:1;2",
      "+ud:+1",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) check_refused(bad[i]);
  /* 129 ids: one more than a union can have (and one repeated) */
  char many[4 * 130 + 8] = "+us:";
  for (int i = 0; i < 129; i++)
    snprintf(many + strlen(many), sizeof many - strlen(many), i ? ",%d" : "%d", i % 128);
  check_refused(many);
  ipc_schema_view v;
  xchg_error err = {""};
  TU_CHECK(ipc_schema_view_parse(NULL, &v, &err) == XCHG_EINVAL && strstr(err.message, "no format"),
           "NULL format: %s", err.message);
  /* A long format is quoted cut, never overflowing the message. */
  char huge[4096];
  memset(huge, 'q', sizeof huge - 1);
  huge[sizeof huge - 1] = '\0';
  TU_CHECK(ipc_schema_view_parse(huge, &v, &err) == XCHG_EINVAL && strstr(err.message, "qqqq") &&
               strlen(err.message) < 200,
           "a 4095-byte format: %s", err.message);
}

/* ---- readable names ------------------------------------------------------- */

static void check_names(void) {
  static const char *const pairs[][2] = {
      {"n", "null"},
      {"b", "bool"},
      {"c", "int8"},
      {"L", "uint64"},
      {"e", "float16"},
      {"g", "float64"},
      {"z", "binary"},
      {"Z", "large_binary"},
      {"u", "utf8"},
      {"U", "large_utf8"},
      {"vz", "binary_view"},
      {"vu", "utf8_view"},
      {"d:38,2", "decimal128(38, 2)"},
      {"d:9,-2,32", "decimal32(9, -2)"},
      {"w:16", "fixed_size_binary[16]"},
      {"tdD", "date32[day]"},
      {"tdm", "date64[ms]"},
      {"tts", "time32[s]"},
      {"ttn", "time64[ns]"},
      {"tsu:", "timestamp[us]"},
      {"tsm:Europe/Paris", "timestamp[ms, tz=Europe/Paris]"},
      {"tDu", "duration[us]"},
      {"tiM", "interval[year_month]"},
      {"tiD", "interval[day_time]"},
      {"tin", "interval[month_day_nano]"},
      {"+l", "list"},
      {"+L", "large_list"},
      {"+vl", "list_view"},
      {"+vL", "large_list_view"},
      {"+w:3", "fixed_size_list[3]"},
      {"+s", "struct"},
      {"+m", "map"},
      {"+ud:0", "dense_union"},
      {"+us:", "sparse_union"},
      {"+r", "run_end_encoded"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    ipc_schema_view v;
    char name[64] = "";
    TU_CHECK(ipc_schema_view_parse(pairs[i][0], &v, NULL) == XCHG_OK &&
                 strcmp(ipc_schema_view_name(&v, name, sizeof name), pairs[i][1]) == 0,
             "\"%s\" named \"%s\", want \"%s\"", pairs[i][0], name, pairs[i][1]);
  }
  /* a small buffer cuts the name, terminated */
  ipc_schema_view v;
  char small[6];
  ipc_schema_view_parse("tsu:UTC", &v, NULL);
  TU_CHECK(strcmp(ipc_schema_view_name(&v, small, sizeof small), "times") == 0, "cut name: \"%s\"",
           small);
}

/* ---- ipc_schema_view_init: the children each type needs ------------------- */

static void expect_init(const char *what, const struct ArrowSchema *s, const char *needle) {
  ipc_schema_view v;
  xchg_error err = {""};
  xchg_status st = ipc_schema_view_init(&v, s, &err);
  if (needle == NULL)
    TU_CHECK(st == XCHG_OK, "%s: %s", what, err.message);
  else
    TU_CHECK(st == XCHG_EINVAL && strstr(err.message, needle),
             "%s: status %d, \"%s\" (want \"%s\")", what, (int)st, err.message, needle);
}

static void check_children(void) {
  struct ArrowSchema i32, i16, i8, u32, utf8, key, value, entries, three[3], node;
  struct ArrowSchema *kids[3], *pair[2] = {&key, &value};
  tu_fixture_schema(&i32, "i", "item", 0, NULL);
  tu_fixture_schema(&i16, "s", "run_ends", 0, NULL);
  tu_fixture_schema(&i8, "c", "run_ends", 0, NULL);
  tu_fixture_schema(&u32, "I", "run_ends", 0, NULL);
  tu_fixture_schema(&utf8, "u", "values", 0, NULL);
  tu_fixture_schema(&key, "u", "key", 0, NULL);
  tu_fixture_schema(&value, "i", "value", 0, NULL);
  tu_fixture_schema(&entries, "+s", "entries", 2, pair);
  for (int i = 0; i < 3; i++) {
    tu_fixture_schema(&three[i], "i", "f", 0, NULL);
    kids[i] = &three[i];
  }
  static const char *const one_child[] = {"+l", "+L", "+vl", "+vL", "+w:3"};
  for (size_t i = 0; i < sizeof one_child / sizeof one_child[0]; i++) {
    tu_fixture_schema(&node, one_child[i], "list", 1, kids);
    expect_init(one_child[i], &node, NULL);
    tu_fixture_schema(&node, one_child[i], "list", 0, NULL);
    expect_init(one_child[i], &node, "has 0 children, needs 1");
    tu_fixture_schema(&node, one_child[i], "list", 2, kids);
    expect_init(one_child[i], &node, "has 2 children, needs 1");
  }
  tu_fixture_schema(&node, "i", "leaf", 1, kids);
  expect_init("int with a child", &node, "has 1 children, needs 0");
  tu_fixture_schema(&node, "+s", "s", 3, kids);
  expect_init("struct of three", &node, NULL);
  tu_fixture_schema(&node, "+s", "s", 0, NULL);
  expect_init("struct of none", &node, NULL);
  node.n_children = -1;
  expect_init("negative children", &node, "bad children");
  node.n_children = 2;
  node.children = NULL;
  expect_init("children NULL", &node, "bad children");
  struct ArrowSchema *with_null[2] = {&i32, NULL};
  tu_fixture_schema(&node, "+s", "s", 2, with_null);
  expect_init("a NULL child", &node, "child 1 is NULL");
  expect_init("no schema", NULL, "no schema");
  tu_fixture_schema(&node, "weird", "w", 0, NULL);
  expect_init("unknown format", &node, "\"weird\"");

  /* unions: one child per type id */
  tu_fixture_schema(&node, "+ud:3,1,2", "u", 3, kids);
  expect_init("dense union of three", &node, NULL);
  tu_fixture_schema(&node, "+us:3,1", "u", 3, kids);
  expect_init("two ids, three children", &node, "has 3 children, needs 2");
  tu_fixture_schema(&node, "+us:", "u", 0, NULL);
  expect_init("empty union", &node, NULL);

  /* maps: one child, a struct of key and value without a dictionary */
  struct ArrowSchema *map_kid[1] = {&entries};
  tu_fixture_schema(&node, "+m", "m", 1, map_kid);
  expect_init("map", &node, NULL);
  entries.n_children = 1;
  expect_init("map entries of one", &node, "a map's child must be a struct of key and value");
  entries.n_children = 2;
  entries.format = "+l";
  expect_init("map entries a list", &node, "a map's child");
  entries.format = "+s";
  entries.dictionary = &utf8;
  expect_init("map entries dictionary-encoded", &node, "a map's child");
  entries.dictionary = NULL;

  /* run-end encoded: run ends int16, int32 or int64, then the values */
  struct ArrowSchema *ree[2] = {&i32, &utf8};
  tu_fixture_schema(&node, "+r", "r", 2, ree);
  expect_init("run ends int32", &node, NULL);
  ree[0] = &i16;
  expect_init("run ends int16", &node, NULL);
  ree[0] = &i8;
  expect_init("run ends int8", &node, "run ends must be int16, int32 or int64");
  ree[0] = &u32;
  expect_init("run ends uint32", &node, "run ends must be");
  ree[0] = &utf8;
  expect_init("run ends utf8", &node, "run ends must be");
  ree[0] = &i32;
  i32.dictionary = &utf8;
  expect_init("run ends dictionary-encoded", &node, "run ends must be");
  i32.dictionary = NULL;
  tu_fixture_schema(&node, "+r", "r", 1, ree);
  expect_init("run-end with one child", &node, "has 1 children, needs 2");
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"every_spec_format", check_every_spec_format},
      {"union_type_ids", check_union_type_ids},
      {"malformed", check_malformed},
      {"children", check_children},
      {"names", check_names},
  };
  return TU_MAIN(argc, argv, "schema_view", cases);
}
