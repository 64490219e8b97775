/* test_schema_equal.c — the one rule for "the same schema"
 * (ipc_schema_equal through ipc_arrow_schema_equal, src/ipc/schema.h):
 * every difference it knows is found, named by column or field path and
 * by what it is on each side, and the metadata counts only where the
 * caller says so. */
#include <string.h>

#include "ipc/schema.h"
#include "support/c_fixture.h"
#include "support/testutil.h"

/* A two-column schema: "a" int32, "s" struct<"x": utf8>, and "d" a
 * dictionary-encoded utf8 with int32 indices, which a case changes. */
typedef struct sample {
  struct ArrowSchema root, a, s, x, d, d_values;
  struct ArrowSchema *columns[3], *s_children[1];
} sample;

static void sample_init(sample *m) {
  tu_fixture_schema(&m->a, "i", "a", 0, NULL);
  tu_fixture_schema(&m->x, "u", "x", 0, NULL);
  m->s_children[0] = &m->x;
  tu_fixture_schema(&m->s, "+s", "s", 1, m->s_children);
  tu_fixture_schema(&m->d_values, "u", "", 0, NULL);
  tu_fixture_schema(&m->d, "i", "d", 0, NULL);
  m->d.dictionary = &m->d_values;
  m->columns[0] = &m->a;
  m->columns[1] = &m->s;
  m->columns[2] = &m->d;
  tu_fixture_schema(&m->root, "+s", "", 3, m->columns);
}

/* Compares a changed sample with an unchanged one; needles: what the
 * message must say (NULL: the two must be equal). */
static void check_difference(const char *what, const sample *changed, ipc_metadata_rule rule,
                             const char *needle1, const char *needle2) {
  sample same;
  sample_init(&same);
  xchg_error err = {""};
  int equal = -1;
  xchg_status st = ipc_arrow_schema_equal(&same.root, "in the first", &changed->root, "here", rule,
                                          &equal, &err);
  if (st != XCHG_OK) {
    TU_CHECK(0, "%s: status %d: %s", what, (int)st, err.message);
  } else if (needle1 == NULL) {
    TU_CHECK(equal == 1, "%s: found a difference: %s", what, err.message);
  } else {
    TU_CHECK(
        equal == 0 && strstr(err.message, needle1) && (!needle2 || strstr(err.message, needle2)),
        "%s: equal %d, \"%s\" (want \"%s\" and \"%s\")", what, equal, err.message, needle1,
        needle2 ? needle2 : "");
  }
}

/* Two key/value pairs in the ArrowSchema.metadata encoding. */
static const char one_pair[] =
    "\1\0\0\0"
    "\1\0\0\0"
    "k"
    "\1\0\0\0"
    "v";
static const char other_value[] =
    "\1\0\0\0"
    "\1\0\0\0"
    "k"
    "\1\0\0\0"
    "w";
static const char no_pairs[] = "\0\0\0\0";

static void check_differences(void) {
  sample m;
  sample_init(&m);
  check_difference("the same", &m, IPC_METADATA_COMPARED, NULL, NULL);

  m.root.n_children = 2;
  check_difference("a column fewer", &m, IPC_METADATA_IGNORED, "3 columns in the first, 2 here",
                   NULL);
  sample_init(&m);
  m.a.name = "b";
  check_difference("renamed", &m, IPC_METADATA_IGNORED,
                   "column 0 \"a\": named \"a\" in the first, \"b\" here", NULL);
  sample_init(&m);
  m.a.format = "l";
  check_difference("another type", &m, IPC_METADATA_IGNORED,
                   "column 0 \"a\": type int32 in the first, int64 here", NULL);
  sample_init(&m);
  m.a.flags = 0;
  check_difference("not null", &m, IPC_METADATA_IGNORED,
                   "column 0 \"a\": nullable in the first, not null here", NULL);
  sample_init(&m);
  m.x.format = "U";
  check_difference("a nested type", &m, IPC_METADATA_IGNORED,
                   "field \"s.x\" of column 1: type utf8 in the first,", "large_utf8 here");
  sample_init(&m);
  m.s.n_children = 0;
  check_difference("a child fewer", &m, IPC_METADATA_IGNORED,
                   "column 1 \"s\": 1 child field in the first, 0 here", NULL);
  sample_init(&m);
  m.d.dictionary = NULL;
  m.d.format = "u";
  check_difference("no dictionary", &m, IPC_METADATA_IGNORED,
                   "column 2 \"d\": dictionary-encoded in the first, "
                   "not dictionary-encoded here",
                   NULL);
  sample_init(&m);
  m.d.format = "C";
  check_difference("other indices", &m, IPC_METADATA_IGNORED,
                   "column 2 \"d\": dictionary indices int32 in the first, "
                   "uint8 here",
                   NULL);
  sample_init(&m);
  m.d.flags |= ARROW_FLAG_DICTIONARY_ORDERED;
  check_difference("ordered", &m, IPC_METADATA_IGNORED,
                   "dictionary unordered in the first, ordered here", NULL);
  sample_init(&m);
  m.d_values.format = "z";
  check_difference("other dictionary values", &m, IPC_METADATA_IGNORED,
                   "column 2 \"d\": type utf8 in the first, binary here", NULL);

  /* maps: sorted keys are part of the type */
  struct ArrowSchema key, value, entries, map, first_map, first_entries, *pair[2] = {&key, &value};
  struct ArrowSchema *entries_of[1] = {&entries}, *first_entries_of[1] = {&first_entries};
  tu_fixture_schema(&key, "u", "key", 0, NULL);
  key.flags = 0;
  tu_fixture_schema(&value, "i", "value", 0, NULL);
  tu_fixture_schema(&entries, "+s", "entries", 2, pair);
  entries.flags = 0;
  tu_fixture_schema(&first_entries, "+s", "entries", 2, pair);
  first_entries.flags = 0;
  tu_fixture_schema(&map, "+m", "m", 1, entries_of);
  tu_fixture_schema(&first_map, "+m", "m", 1, first_entries_of);
  map.flags |= ARROW_FLAG_MAP_KEYS_SORTED;
  struct ArrowSchema *one[1] = {&first_map}, *other[1] = {&map}, a_root, b_root;
  tu_fixture_schema(&a_root, "+s", "", 1, one);
  tu_fixture_schema(&b_root, "+s", "", 1, other);
  int equal = -1;
  xchg_error err = {""};
  TU_CHECK(ipc_arrow_schema_equal(&a_root, "in A", &b_root, "in B", IPC_METADATA_IGNORED, &equal,
                                  &err) == XCHG_OK &&
               equal == 0 &&
               strstr(err.message, "column 0 \"m\": map keys unsorted in A, sorted in B"),
           "sorted keys: equal %d: %s", equal, err.message);
}

/* Types of one name but other formats are told by their formats. */
static void check_union_ids(void) {
  struct ArrowSchema child, a_union, b_union, a_root, b_root, *kid[1] = {&child};
  struct ArrowSchema *a_col[1] = {&a_union}, *b_col[1] = {&b_union};
  tu_fixture_schema(&child, "i", "c", 0, NULL);
  tu_fixture_schema(&a_union, "+us:1", "u", 1, kid);
  tu_fixture_schema(&b_union, "+us:2", "u", 1, kid);
  tu_fixture_schema(&a_root, "+s", "", 1, a_col);
  tu_fixture_schema(&b_root, "+s", "", 1, b_col);
  int equal = -1;
  xchg_error err = {""};
  TU_CHECK(
      ipc_arrow_schema_equal(&a_root, "in A", &b_root, "in B", IPC_METADATA_IGNORED, &equal,
                             &err) == XCHG_OK &&
          equal == 0 &&
          strstr(err.message,
                 "column 0 \"u\": type \"+us:1\" in A, \"+us:2\" in B (C Data Interface formats)"),
      "union type ids: equal %d: %s", equal, err.message);
}

static void check_metadata_rule(void) {
  sample m;
  sample_init(&m);
  m.x.metadata = one_pair;
  check_difference("field metadata, ignored", &m, IPC_METADATA_IGNORED, NULL, NULL);
  check_difference("field metadata, compared", &m, IPC_METADATA_COMPARED,
                   "field \"s.x\" of column 1: its metadata differs", NULL);
  m.x.metadata = no_pairs;
  check_difference("no pairs is no metadata", &m, IPC_METADATA_COMPARED, NULL, NULL);
  sample_init(&m);
  m.root.metadata = one_pair;
  check_difference("schema metadata, ignored", &m, IPC_METADATA_IGNORED, NULL, NULL);
  check_difference("schema metadata, compared", &m, IPC_METADATA_COMPARED,
                   "the schema's metadata differs", NULL);

  /* the same pairs alike, another value not */
  sample a, b;
  sample_init(&a);
  sample_init(&b);
  a.a.metadata = one_pair;
  b.a.metadata = one_pair;
  int equal = -1;
  xchg_error err = {""};
  TU_CHECK(ipc_arrow_schema_equal(&a.root, "in A", &b.root, "in B", IPC_METADATA_COMPARED, &equal,
                                  &err) == XCHG_OK &&
               equal == 1,
           "the same metadata: equal %d: %s", equal, err.message);
  b.a.metadata = other_value;
  TU_CHECK(ipc_arrow_schema_equal(&a.root, "in A", &b.root, "in B", IPC_METADATA_COMPARED, &equal,
                                  &err) == XCHG_OK &&
               equal == 0 && strstr(err.message, "column 0 \"a\": its metadata differs"),
           "another value: equal %d: %s", equal, err.message);
}

/* A schema the comparison cannot read is an error, not a verdict. */
static void check_unreadable(void) {
  sample a, b;
  sample_init(&a);
  sample_init(&b);
  b.a.format = "weird";
  int equal = -1;
  xchg_error err = {""};
  TU_CHECK(ipc_arrow_schema_equal(&a.root, "in A", &b.root, "in B", IPC_METADATA_IGNORED, &equal,
                                  &err) == XCHG_EINVAL &&
               equal == -1 && strstr(err.message, "weird"),
           "unreadable: equal %d: %s", equal, err.message);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"differences", check_differences},
      {"union_ids", check_union_ids},
      {"metadata_rule", check_metadata_rule},
      {"unreadable", check_unreadable},
  };
  return TU_MAIN(argc, argv, "schema_equal", cases);
}
