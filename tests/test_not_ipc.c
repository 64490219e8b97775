/* tests/test_not_ipc.c — input that is not Arrow IPC at all, and IPC of a
 * metadata version the reader does not support, say so (issue 12, item 6).
 *
 *  - text, random bytes (many seeds and sizes), an empty input, a few bytes,
 *    and a Parquet file ("PAR1") are XCHG_EFORMAT errors that start "not an
 *    Arrow IPC stream or file: " and say what was seen, from memory and
 *    from an input that cannot seek alike;
 *  - bytes that could be a pre-0.15 stream's first length but are not
 *    followed by a schema message say both;
 *  - the file magic alone is a cut file (XCHG_EIO), even with
 *    allow_missing_eos, and so is the magic cut in its padding (6 or 7
 *    bytes, "ARROW1"), which said there was no ARROW1 magic at byte 0;
 *  - damaged real IPC keeps its own errors: a continuation marker and a
 *    huge length is the max_metadata_bytes limit, as before;
 *  - an Arrow gold stream and file whose schema message is patched to the
 *    metadata versions V3 and V6 are XCHG_ENOTSUP naming V4 and V5, the
 *    versions this reader supports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/xchg.h"

#define NOT_ARROW "not an Arrow IPC stream or file: "

/* Opens data from memory (seekable) and in order (unseekable): both must
 * fail with status and a message containing want (equal to it, when exact). */
static void expect_error(const uint8_t *data, size_t size, xchg_status status, const char *want,
                         int exact, const char *what) {
  for (int way = 0; way < 2; way++) {
    xchg_source *src =
        way == 0 ? tu_memory_source(data, size) : tu_unseekable_source(data, size, size);
    xchg_ipc_reader *r = NULL;
    xchg_error err;
    xchg_status st = xchg_ipc_reader_open(src, NULL, &r, &err);
    TU_CHECK(st == status &&
                 (exact ? strcmp(err.message, want) == 0 : strstr(err.message, want) != NULL),
             "%s (%s): %s: %s, expected %s: %s", what, way == 0 ? "memory" : "in order",
             xchg_status_name(st), st == XCHG_OK ? "opened" : err.message, xchg_status_name(status),
             want);
    xchg_ipc_reader_free(r);
  }
}

static void expect_open_error(const uint8_t *data, size_t size, xchg_status status,
                              const char *want, const char *what) {
  expect_error(data, size, status, want, 0, what);
}

#define NO_MARKER NOT_ARROW "no continuation marker or ARROW1 magic at byte 0"

static void test_text_and_short_inputs(void) {
  static const char text[] = "id,name\n1,alice\n2,bob\n";
  expect_error((const uint8_t *)text, sizeof text - 1, XCHG_EFORMAT, NO_MARKER, 1, "CSV text");
  expect_open_error((const uint8_t *)"", 0, XCHG_EFORMAT, NOT_ARROW "the input is empty",
                    "empty input");
  expect_open_error((const uint8_t *)"ab", 2, XCHG_EFORMAT, NOT_ARROW "no continuation marker",
                    "2 bytes");
  expect_open_error((const uint8_t *)"ARROW", 5, XCHG_EFORMAT, NOT_ARROW "no continuation marker",
                    "half a magic");
  static const uint8_t parquet[] = {'P', 'A', 'R', '1', 0x15, 0x04, 0x15, 0x80,
                                    0,   0,   0,   'P', 'A',  'R',  '1'};
  expect_open_error(parquet, sizeof parquet, XCHG_EFORMAT,
                    NOT_ARROW "PAR1 magic at byte 0 (a Parquet file)", "Parquet");
}

/* Random bytes of many sizes: never opened, always said not to be IPC. */
static void test_random_bytes(void) {
  uint64_t rng = 12;
  uint8_t data[4096];
  for (int i = 0; i < 300; i++) {
    size_t size = 1 + (size_t)(tu_splitmix64(&rng) % sizeof data);
    for (size_t k = 0; k < size; k++) data[k] = (uint8_t)tu_splitmix64(&rng);
    if (size >= 4 && memcmp(data, "\xff\xff\xff\xff", 4) == 0)
      continue; /* a marked stream: not this test */
    char what[64];
    snprintf(what, sizeof what, "random bytes %d (%zu bytes)", i, size);
    expect_open_error(data, size, XCHG_EFORMAT, NO_MARKER, what);
  }
}

/* A length that a pre-0.15 stream could start with, then no Message. */
static void test_plausible_legacy_length(void) {
  uint8_t data[64] = {40, 0, 0, 0};
  memset(data + 4, 0xAB, sizeof data - 4);
  expect_open_error(data, sizeof data, XCHG_EFORMAT,
                    NO_MARKER
                    ", nor a pre-0.15 stream: message 0 at byte 0: invalid Message flatbuffer",
                    "a plausible pre-0.15 length");
}

/* The file magic and nothing after it is a cut file, however lenient the
 * options: even without the end-of-stream marker a file needs its footer. */
static void test_magic_alone(void) {
  static const uint8_t magic[] = {'A', 'R', 'R', 'O', 'W', '1', 0, 0};
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.allow_missing_eos = 1;
  for (int way = 0; way < 2; way++) {
    xchg_source *src = way == 0 ? tu_memory_source(magic, sizeof magic)
                                : tu_unseekable_source(magic, sizeof magic, 1);
    xchg_ipc_reader *r = NULL;
    xchg_error err;
    xchg_status st = xchg_ipc_reader_open(src, &opts, &r, &err);
    TU_CHECK(st == XCHG_EIO, "the file magic alone (%s): %s: %s", way == 0 ? "memory" : "in order",
             xchg_status_name(st), st == XCHG_OK ? "opened" : err.message);
    xchg_ipc_reader_free(r);
  }
  /* Cut in the padding after the magic: a cut file too, not an input
   * without the magic that it begins with. */
  for (size_t size = 6; size < 8; size++) {
    char want[128];
    snprintf(want, sizeof want,
             "the file is cut short: the input ends at byte %zu, inside the padding after the "
             "ARROW1 magic",
             size);
    expect_error(magic, size, XCHG_EIO, want, 1, "the file magic without its padding");
  }
}

/* An end-of-stream marker where the schema message belongs (a marker
 * alone, a stream's marker written twice and read on as the next stream)
 * says so, not that the input ends before its schema message, which it
 * does not; the end of the input there, with allow_missing_eos, does. */
static void test_marker_for_schema(void) {
  static const uint8_t marker[] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  static const char want[] = "message 0 at byte 0 is an end-of-stream marker, not a schema";
  expect_error(marker, sizeof marker, XCHG_EFORMAT, want, 1, "a marker alone");
  uint8_t twice[16];
  memcpy(twice, marker, 8);
  memcpy(twice + 8, marker, 8);
  expect_error(twice, sizeof twice, XCHG_EFORMAT, want, 1, "two markers");
}

/* With the continuation marker, the input is damaged IPC, and says so. */
static void test_damaged_ipc_keeps_its_error(void) {
  static const uint8_t data[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xFF, 0xFF, 0x7F, 1, 2, 3, 4};
  expect_open_error(data, sizeof data, XCHG_ELIMIT,
                    "message 0 at byte 0: metadata length 2147483632 "
                    "exceeds max_metadata_bytes",
                    "a marked stream with a huge length");
}

static uint32_t load32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The byte offset of the version field of the Message flatbuffer whose
 * framing (marker and length) starts at `at`, or 0 when it is absent. */
static size_t version_offset(const uint8_t *data, size_t size, size_t at) {
  if (at + 16 > size) return 0;
  size_t meta = at + 8;
  size_t table = meta + load32(data + meta);
  if (table + 4 > size) return 0;
  int32_t soffset = (int32_t)load32(data + table);
  size_t vtable = (size_t)((int64_t)table - soffset);
  if (vtable + 6 > size) return 0;
  size_t field = data[vtable + 4] | data[vtable + 5] << 8;
  return field ? table + field : 0;
}

/* The schema message (at `at`) patched to version V3 and V6, then read. */
static void check_versions(const char *path, size_t at) {
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  size_t field = data ? version_offset(data, size, at) : 0;
  TU_CHECK(field != 0, "%s: no version field in the schema message at byte %zu", path, at);
  if (field == 0) {
    free(data);
    return;
  }
  TU_CHECK(data[field] == 4 && data[field + 1] == 0,
           "%s: schema message of version %d, expected V5 (4)", path, data[field]);
  static const struct {
    uint8_t value;
    const char *want;
  } versions[] = {{2, "metadata version V3 is not supported (this reader supports V4 to V5)"},
                  {5, "metadata version V6 is not supported (this reader supports V4 to V5)"}};
  for (int i = 0; i < 2; i++) {
    data[field] = versions[i].value;
    char what[4200];
    snprintf(what, sizeof what, "%s as %s", path, versions[i].want);
    expect_open_error(data, size, XCHG_ENOTSUP, versions[i].want, what);
  }
  free(data);
}

static void test_unsupported_versions(void) {
  char path[4096];
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  check_versions(path, 0);
  tu_testdata_path(path, sizeof path,
                   "arrow-gold/1.0.0-littleendian/generated_primitive.arrow_file");
  check_versions(path, 8);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"text_and_short_inputs", test_text_and_short_inputs},
      {"random_bytes", test_random_bytes},
      {"plausible_legacy_length", test_plausible_legacy_length},
      {"damaged_ipc_keeps_its_error", test_damaged_ipc_keeps_its_error},
      {"magic_alone", test_magic_alone},
      {"marker_for_schema", test_marker_for_schema},
      {"unsupported_versions", test_unsupported_versions},
  };
  return TU_MAIN(argc, argv, "not_ipc", cases);
}
