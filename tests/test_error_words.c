/* tests/test_error_words.c — errors say what is wrong in words a user reads
 * once (issue 19, item 10), through the library and through `xchg`
 * ($XCHG_CLI):
 *
 *  - a missing file: "xchg: F: cannot open: <reason>", the name once;
 *  - an 8-byte file of the IPC file format, the magic and padding alone:
 *    cut short right after them, alike from the file and a pipe;
 *  - bytes appended after an IPC file: how many follow the closing magic
 *    and where it is, from the file and through a pipe; a file cut short:
 *    cut short, no bytes "follow";
 *    never "(truncated?)" for either; every cut inside the footer of
 *    each gold .arrow_file is XCHG_EIO "the file (N bytes) is cut short:"
 *    read by footer, "the file is cut short:" read in order (`xchg cat`
 *    of one, and `cat -` of it through a pipe, alike), never "(truncated?)";
 *  - a file that ends right after its ARROW1 magic and padding, read in
 *    order with allow_missing_eos: XCHG_EIO, the file is cut short there;
 *  - a file cut where its end-of-stream marker begins, with
 *    allow_missing_eos: cut short before that message, from memory and in
 *    order, as without the option, nothing "after the end-of-stream marker";
 *  - each gold .stream cut after its schema (every 61st byte and each of
 *    the last 8), from memory and in order: XCHG_EIO, never
 *    "(truncated?)", "the stream is cut short: " (a file read in order
 *    cut inside a message, "the file is cut short: "); cut where a message
 *    or the end-of-stream marker
 *    begins, "the stream is cut short: the input ends at byte N, before
 *    message K", and a file "the file (N bytes) is cut short: ..." by
 *    footer, "the file is cut short: ..." in order; `xchg cat` of a stream
 *    without its marker, from the file and through a pipe, alike, naming
 *    the option that reads it (--allow-missing-eos);
 *  - a batch decoder's stream payload cut before its end-of-stream marker
 *    (or inside it), or inside a message's framing, metadata or body, in
 *    memory and in two chunks: XCHG_EIO, "the stream is cut short: ...",
 *    as the reader says it, never "(truncated?)";
 *  - each stream codec (lz4-java, snappy-java, snappy framed, zstd, LZ4
 *    frames) cut inside its header, inside its data and (lz4-java) before
 *    its end block: its frame, block, chunk or header and where it starts
 *    "is cut short: the input ends at byte N", as the IPC reader says a
 *    cut, with what else the codec knows, never "truncated";
 *  - LZ4 frame errors in words, never LZ4F's identifiers (ERROR_...):
 *    bytes after the last frame of an lz4-frame input, a damaged block of
 *    an LZ4-compressed IPC body, a damaged frame header;
 *  - gzip (real zlib output, from a file and from standard input), bzip2,
 *    xz, zstd and LZ4 frames and Parquet handed to the IPC reader are named
 *    by their magic, as Parquet is; so is an LZ4 legacy frame (lz4 -l),
 *    which xchg does not read, by `cat` and by --input-codec lz4-frame;
 *  - an input of skippable frames alone (one, and two) is said to hold
 *    them, never "empty", by cat and inspect of the file (and cat of it
 *    with --input-codec none, no codec advised) and cat - of it through a
 *    pipe; an empty input is still "the input is empty";
 *  - a codec's stream of no content (LZ4 and zstd frames, lz4-java,
 *    snappy-java, snappy framed) is said to be that codec's stream that
 *    decodes to no bytes, never "empty", and one of CSV text to decode to
 *    bytes that are not IPC, by cat and inspect of the file and cat - of
 *    it through a pipe;
 *  - Comet blocks of 3 columns after one of 30: "3 columns in this block,
 *    30 in the first block", from the file and through a pipe;
 *  - Comet blocks cut short, in the shuffle reader (in a block's header,
 *    in its data) and block by block (at a frame's end, before the
 *    block's): "its header is cut short: ..." or "the block is cut short:
 *    the input ends at byte N, ..." with the hint "(or the block's length
 *    is wrong)", never "truncated";
 *  - a shuffle reader's IPC stream without its end-of-stream marker (the
 *    second of two plain ones, one in a Comet block): "the stream is cut
 *    short: the input ends at byte N, before message K, without the
 *    end-of-stream marker", the Comet block's with "(or the block's length
 *    is shorter than its stream)", never "(truncated?)";
 *  - `cat --columns '#9'` on three columns: the position is out of range,
 *    and the positions there are;
 *  - XCHG_THREADS that is no thread count (abc, -1, 4x, 99999, and a
 *    count with a blank or a sign before it) is refused with its range, by
 *    xchg_pool_parse_env and by every command; 0 and a count work;
 *  - an option's count with a blank around it or a sign (" 5", "5 ",
 *    "+5", "-0") is refused naming the option and the value, as
 *    XCHG_THREADS is, by every command and bench list; --level takes '-';
 *  - --level out of the codec's range is refused with that range by convert
 *    and gen, for lz4 as for zstd, and by the writer and
 *    xchg_block_compress; the ends of each range work;
 *  - "buffer K" says which numbering it is: "message buffer K" where the
 *    bytes are (a range outside the body), "array buffer K (role)" for a
 *    value (offsets going down, a validity bitmap with the wrong nulls),
 *    a dictionary's values by their own type, not as indices. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "support/cache_data.h"
#include "support/encoded.h"
#include "support/c_fixture.h"
#include "support/cli_run.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/codec.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"
#include "xchg/testing.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"

static const char *cli;
static char dir[] = "/tmp/xchg-error-words-XXXXXX";
static char gold_file[4200], gold_stream[4200];

/* `xchg args` (tu_cli_runf); the result must be freed. */
#define run(...) tu_cli_runf(cli, __VA_ARGS__)

static char *path_of(const char *name) {
  static char paths[8][4200];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, sizeof paths[0], "%s/%s", dir, name);
  return p;
}

static bool write_bytes(const char *path, const void *data, size_t n) {
  int rc = tu_write_file(path, data, n);
  TU_CHECK(rc == 0, "cannot write %s", path);
  return rc == 0;
}

/* `xchg args` must fail with exit code `code` and standard error holding
 * every phrase of want (NULL-terminated) and none of avoid. */
static void expect_cli(int code, const char *const *want, const char *const *avoid, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
static void expect_cli(int code, const char *const *want, const char *const *avoid, const char *fmt,
                       ...) {
  char args[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  tu_cli_result r = run("%s", args);
  TU_CHECK(r.exit_code == code, "xchg %s: exit %d, expected %d (%.300s)", args, r.exit_code, code,
           r.err);
  for (int i = 0; want && want[i]; i++)
    TU_CHECK(strstr(r.err, want[i]) != NULL, "xchg %s: standard error does not say \"%s\": %.500s",
             args, want[i], r.err);
  for (int i = 0; avoid && avoid[i]; i++)
    TU_CHECK(strstr(r.err, avoid[i]) == NULL, "xchg %s: standard error says \"%s\": %.500s", args,
             avoid[i], r.err);
  tu_cli_result_free(&r);
}

/* ---- files ------------------------------------------------------------------------ */

static void check_files(void) {
  char *missing = path_of("missing.arrow"), want[4400];
  tu_cli_result r = run("cat '%s'", missing);
  snprintf(want, sizeof want, "xchg: %s: cannot open: No such file or directory\n", missing);
  TU_CHECK(r.exit_code == 1 && strcmp(r.err, want) == 0, "a missing file: exit %d, %s", r.exit_code,
           r.err);
  tu_cli_result_free(&r);

  /* The magic and its padding alone: cut short right there, in the same
   * words from the file as through a pipe (it was "the file is 8 bytes
   * long: too short for the IPC file format" from the file). */
  char *eight = path_of("eight.arrow");
  static const char eight_cut[] =
      ": the file is cut short: the input ends at byte 8, right after the ARROW1 magic and its "
      "padding, before the file's first message\n";
  if (write_bytes(eight, "ARROW1\0\0", 8)) {
    expect_cli(1, (const char *const[]){eight_cut, NULL}, (const char *const[]){"a 8-byte", NULL},
               "inspect '%s'", eight);
    expect_cli(1, (const char *const[]){eight_cut, NULL}, NULL, "cat '%s'", eight);
    tu_cli_result piped = tu_cli_piped_runf(cli, eight, "cat -");
    TU_CHECK(piped.exit_code == 1 && strstr(piped.err, eight_cut),
             "cat - of ARROW1 and padding: %s", piped.err);
    tu_cli_result_free(&piped);
  }

  tu_bytes file = tu_read_bytes(gold_file);
  TU_CHECK(file.data != NULL && file.size > 5000, "cannot read %s", gold_file);
  if (file.data == NULL) return;
  char *appended = path_of("appended.arrow"), *cut = path_of("cut.arrow"), phrase[128];
  tu_bytes plus = {0};
  tu_bytes_append(&plus, file.data, file.size);
  tu_bytes_append(&plus, "garbage!garbage!", 16);
  snprintf(phrase, sizeof phrase,
           "the IPC file ends at byte %zu, after its closing ARROW1 magic, and ", file.size);
  if (write_bytes(appended, plus.data, plus.size)) {
    expect_cli(1,
               (const char *const[]){
                   phrase, "16 bytes follow that are not an Arrow IPC stream or file", NULL},
               (const char *const[]){"truncated?", NULL}, "cat '%s'", appended);
    expect_cli(1,
               (const char *const[]){phrase,
                                     "bytes follow that are not an Arrow IPC stream or file", NULL},
               (const char *const[]){"truncated?", NULL}, "cat - < '%s'", appended);
    /* Through a pipe too, how many: they are counted by reading them. */
    tu_cli_result piped = tu_cli_piped_runf(cli, appended, "cat -");
    TU_CHECK(piped.exit_code == 1 && strstr(piped.err, phrase) &&
                 strstr(piped.err, "16 bytes follow that are not an Arrow IPC stream or file"),
             "cat - of a file and 16 bytes more, piped: exit %d: %s", piped.exit_code, piped.err);
    tu_cli_result_free(&piped);
  }
  if (write_bytes(cut, file.data, 5000))
    expect_cli(1,
               (const char *const[]){
                   "the file (5000 bytes) is cut short: message 1 at byte 1944: body: ", NULL},
               (const char *const[]){"truncated?", "follow", NULL}, "cat '%s'", cut);
  free(plus.data);
  free(file.data);
}

/* ---- a file cut inside its footer -------------------------------------------------- */

/* Reads every batch of src (taken), the footer checked at the end when
 * read in order: the status, its message in err. */
static xchg_status read_through(xchg_source *src, xchg_error *err) {
  xchg_ipc_reader *r = NULL;
  xchg_status st = xchg_ipc_reader_open(src, NULL, &r, err);
  for (struct ArrowArray a; st == XCHG_OK;) {
    if ((st = xchg_ipc_reader_next(r, &a, err)) != XCHG_OK || a.release == NULL) break;
    a.release(&a);
  }
  xchg_ipc_reader_free(r);
  return st;
}

/* data cut to size, a cut inside the footer, read by footer (in memory)
 * and in order (a source that cannot seek): XCHG_EIO saying the file is
 * cut short, as a cut body is, and never "(truncated?)"; false when not. */
static bool expect_footer_cut(const char *path, const uint8_t *data, size_t size) {
  char want[64];
  snprintf(want, sizeof want, "the file (%zu bytes) is cut short: ", size);
  const char *const wants[2] = {want, "the file is cut short: "};
  for (int in_order = 0; in_order < 2; in_order++) {
    xchg_error err;
    xchg_source *src =
        in_order ? tu_unseekable_source(data, size, size) : tu_memory_source(data, size);
    xchg_status st = read_through(src, &err);
    if (!TU_CHECK(st == XCHG_EIO &&
                      strncmp(err.message, wants[in_order], strlen(wants[in_order])) == 0 &&
                      strstr(err.message, "truncated?") == NULL,
                  "%s cut to %zu bytes, inside its footer, read %s: %s: %s (want \"%s...\")", path,
                  size, in_order ? "in order" : "by footer", xchg_status_name(st),
                  st == XCHG_OK ? "read" : err.message, wants[in_order]))
      return false;
  }
  return true;
}

/* Every cut of a gold file inside its footer, from the footer's first
 * byte to the closing magic's last: the first failure alone is reported. */
static void check_footer_cuts_of(const char *path, void *ctx) {
  int *files = ctx;
  tu_bytes file = tu_read_bytes(path);
  uint32_t footer = 0; /* little-endian, as the gold files */
  if (file.data != NULL && file.size >= 18) memcpy(&footer, file.data + file.size - 10, 4);
  if (!TU_CHECK(file.data != NULL && footer > 0 && footer <= file.size - 18, "%s: footer length %u",
                path, footer)) {
    free(file.data);
    return;
  }
  for (size_t cut = file.size - 10 - footer; cut < file.size; cut++)
    if (!expect_footer_cut(path, file.data, cut)) break;
  free(file.data);
  ++*files;
}

static void check_footer_cuts(const char *root) {
  int files = 0;
  tu_walk(root, ".arrow_file", check_footer_cuts_of, &files);
  TU_CHECK(files >= 20, "%d gold .arrow_file files under %s", files, root);
  /* What `xchg cat` says of one, from the file and through a pipe. */
  tu_bytes file = tu_read_bytes(gold_file);
  char *cut = path_of("footer_cut.arrow"), want[96];
  if (file.data == NULL || file.size < 40 || !write_bytes(cut, file.data, file.size - 20)) {
    TU_CHECK(false, "cannot cut %s", gold_file);
    free(file.data);
    return;
  }
  snprintf(want, sizeof want, "the file (%zu bytes) is cut short: the input ends at byte ",
           file.size - 20);
  expect_cli(1, (const char *const[]){want, "inside the file footer", NULL},
             (const char *const[]){"truncated?", NULL}, "cat '%s'", cut);
  tu_cli_result r = tu_cli_piped_runf(cli, cut, "cat -");
  TU_CHECK(r.exit_code == 1 && strstr(r.err, ": the file is cut short: the input ends at byte ") &&
               strstr(r.err, "truncated?") == NULL,
           "cat - of a file cut inside its footer, piped: exit %d: %s", r.exit_code, r.err);
  tu_cli_result_free(&r);
  free(file.data);
}

/* ---- a file cut right after its magic ---------------------------------------------- */

/* The first 8 bytes of a gold file (ARROW1 and its padding), read in order
 * with allow_missing_eos, which takes the end for a marker: the file is cut
 * short there, XCHG_EIO, said without a guess. */
static void check_magic_cut(void) {
  tu_bytes file = tu_read_bytes(gold_file);
  if (!TU_CHECK(file.data != NULL && file.size > 8, "cannot read %s", gold_file)) {
    free(file.data);
    return;
  }
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.allow_missing_eos = 1;
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open(tu_unseekable_source(file.data, 8, 1), &opts, &r, &err);
  static const char want[] =
      "the file is cut short: the input ends at byte 8, right after the ARROW1 magic and its "
      "padding, before the file's first message";
  TU_CHECK(st == XCHG_EIO && strcmp(err.message, want) == 0,
           "%s cut to its magic, read in order with allow_missing_eos: %s: %s (want \"%s\")",
           gold_file, xchg_status_name(st), st == XCHG_OK ? "opened" : err.message, want);
  xchg_ipc_reader_free(r);
  free(file.data);
}

/* ---- a file cut where its marker begins, allow_missing_eos ------------------------- */

/* The gold file cut where its end-of-stream marker begins, read from
 * memory and in order with allow_missing_eos: a file is not whole without
 * its footer, so the option changes nothing, and the end is not taken for
 * a marker that the footer would follow ("after the end-of-stream
 * marker", as it said). */
static void check_eos_cut_allowed(void) {
  tu_bytes file = tu_read_bytes(gold_file);
  uint32_t footer = 0;
  if (file.data != NULL && file.size > 40) memcpy(&footer, file.data + file.size - 10, 4);
  if (!TU_CHECK(file.data != NULL && footer > 0 && footer < file.size - 40, "%s: footer %u",
                gold_file, footer)) {
    free(file.data);
    return;
  }
  size_t cut = file.size - 10 - footer - 8;
  char want[2][160];
  snprintf(want[0], sizeof want[0],
           "the file (%zu bytes) is cut short: the input ends at byte %zu, before message 3, "
           "without the end-of-stream marker",
           cut, cut);
  snprintf(want[1], sizeof want[1],
           "the file is cut short: the input ends at byte %zu, before message 3, without the "
           "end-of-stream marker",
           cut);
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.allow_missing_eos = 1;
  for (int in_order = 0; in_order < 2; in_order++) {
    xchg_source *src =
        in_order ? tu_unseekable_source(file.data, cut, cut) : tu_memory_source(file.data, cut);
    xchg_ipc_reader *r = NULL;
    xchg_error err;
    xchg_status st = xchg_ipc_reader_open(src, &opts, &r, &err);
    for (struct ArrowArray a; st == XCHG_OK;) {
      if ((st = xchg_ipc_reader_next(r, &a, &err)) != XCHG_OK || a.release == NULL) break;
      a.release(&a);
    }
    TU_CHECK(st == XCHG_EIO && strcmp(err.message, want[in_order]) == 0,
             "%s cut to %zu bytes, where its marker begins, read %s with allow_missing_eos: %s: "
             "%s (want \"%s\")",
             gold_file, cut, in_order ? "in order" : "from memory", xchg_status_name(st),
             st == XCHG_OK ? "read" : err.message, want[in_order]);
    xchg_ipc_reader_free(r);
  }
  free(file.data);
}

/* ---- a stream cut after its schema ----------------------------------------------- */

/* data cut to size, after the schema message, read from memory and in
 * order: XCHG_EIO, never "(truncated?)"; at a message boundary (eos_cut),
 * the input ends without the end-of-stream marker and the message begins
 * with `boundary` ("the stream is cut short: the input ends at byte N,
 * before message "), in order too.  False when not. */
static bool expect_cut(const char *path, const uint8_t *data, size_t size, const char *boundary,
                       const char *in_order_boundary) {
  for (int in_order = 0; in_order < 2; in_order++) {
    xchg_error err;
    xchg_source *src =
        in_order ? tu_unseekable_source(data, size, size) : tu_memory_source(data, size);
    xchg_status st = read_through(src, &err);
    const char *want = in_order ? in_order_boundary : boundary;
    if (!TU_CHECK(st == XCHG_EIO && strstr(err.message, "truncated?") == NULL &&
                      (want == NULL || strncmp(err.message, want, strlen(want)) == 0),
                  "%s cut to %zu bytes, read %s: %s: %s (want XCHG_EIO%s%s)", path, size,
                  in_order ? "in order" : "from memory", xchg_status_name(st),
                  st == XCHG_OK ? "read" : err.message, want ? ", " : "", want ? want : ""))
      return false;
  }
  return true;
}

/* Cuts of a gold stream after its schema message: every 61st byte, the
 * schema's end, and each of the last 8 bytes (the end-of-stream marker,
 * its absence at the first of them). */
static void check_stream_cuts_of(const char *path, void *ctx) {
  int *files = ctx;
  tu_bytes file = tu_read_bytes(path);
  uint32_t length = 0; /* after the continuation marker, little-endian */
  if (file.data != NULL && file.size >= 16) memcpy(&length, file.data + 4, 4);
  size_t schema_end = 8 + (size_t)length;
  if (!TU_CHECK(file.data != NULL && schema_end + 8 <= file.size &&
                    memcmp(file.data + file.size - 8, "\xff\xff\xff\xff\0\0\0\0", 8) == 0,
                "%s: schema of %u bytes, %zu in all, no end-of-stream marker at its end", path,
                length, file.size)) {
    free(file.data);
    return;
  }
  char boundary[96];
  for (size_t cut = schema_end; cut < file.size; cut++) {
    bool last8 = cut >= file.size - 8;
    if (!last8 && cut != schema_end && (cut - schema_end) % 61 != 0) continue;
    bool at_boundary = cut == schema_end || cut == file.size - 8;
    snprintf(boundary, sizeof boundary,
             "the stream is cut short: the input ends at byte %zu, before message ", cut);
    /* Inside a message, the input ran out: a cut too, said so. */
    const char *want = at_boundary ? boundary : "the stream is cut short: ";
    if (!expect_cut(path, file.data, cut, want, want)) break;
  }
  free(file.data);
  ++*files;
}

static void check_stream_cuts(const char *root) {
  int files = 0;
  tu_walk(root, ".stream", check_stream_cuts_of, &files);
  TU_CHECK(files >= 20, "%d gold .stream files under %s", files, root);
  /* A file cut where its end-of-stream marker begins: before message K. */
  tu_bytes file = tu_read_bytes(gold_file);
  uint32_t footer = 0;
  if (file.data != NULL && file.size > 40) memcpy(&footer, file.data + file.size - 10, 4);
  if (TU_CHECK(file.data != NULL && footer > 0 && footer < file.size - 40, "%s: footer %u",
               gold_file, footer)) {
    size_t cut = file.size - 10 - footer - 8;
    char by_footer[128], in_order[128];
    snprintf(by_footer, sizeof by_footer,
             "the file (%zu bytes) is cut short: the input ends at byte %zu, before message ", cut,
             cut);
    snprintf(in_order, sizeof in_order,
             "the file is cut short: the input ends at byte %zu, before message ", cut);
    expect_cut(gold_file, file.data, cut, by_footer, in_order);
    /* Cut inside message 2's metadata: read in order, the file is said to
     * be cut short as read by its footer, but for the size. */
    snprintf(by_footer, sizeof by_footer, "the file (11149 bytes) is cut short: message 2 at ");
    snprintf(in_order, sizeof in_order, "the file is cut short: message 2 at byte ");
    expect_cut(gold_file, file.data, 11149, by_footer, in_order);
  }
  free(file.data);
  /* What `xchg cat` says of a stream without its marker, from the file
   * and through a pipe. */
  tu_bytes stream = tu_read_bytes(gold_stream);
  char *cut = path_of("no_marker.stream"), want[256];
  if (stream.data == NULL || stream.size < 40 || !write_bytes(cut, stream.data, stream.size - 8)) {
    TU_CHECK(false, "cannot cut %s", gold_stream);
    free(stream.data);
    return;
  }
  snprintf(want, sizeof want,
           "the stream is cut short: the input ends at byte %zu, before message 3, without the "
           "end-of-stream marker (--allow-missing-eos reads a stream whose writer left the "
           "optional marker out)\n",
           stream.size - 8);
  expect_cli(1, (const char *const[]){want, NULL}, (const char *const[]){"truncated?", NULL},
             "cat '%s'", cut);
  tu_cli_result r = tu_cli_piped_runf(cli, cut, "cat -");
  TU_CHECK(r.exit_code == 1 && strstr(r.err, want) && strstr(r.err, "truncated?") == NULL,
           "cat - of a stream without its end-of-stream marker, piped: exit %d: %s", r.exit_code,
           r.err);
  tu_cli_result_free(&r);
  free(stream.data);
}

/* ---- a payload stream without its marker ------------------------------------------- */

/* The gold stream given to a batch decoder (its schema message the
 * decoder's) cut where a message or the marker begins, and in the marker:
 * XCHG_EIO, never "(truncated?)", the first said as the reader says it. */
static void check_payload_cuts(void) {
  tu_bytes stream = tu_read_bytes(gold_stream);
  uint32_t length = 0;
  if (stream.data != NULL && stream.size > 16) memcpy(&length, stream.data + 4, 4);
  size_t schema_end = 8 + (size_t)length;
  xchg_batch_decoder *dec = NULL;
  xchg_error err;
  if (!TU_CHECK(stream.data != NULL && schema_end + 8 < stream.size &&
                    xchg_batch_decoder_open(stream.data, schema_end, NULL, 0, NULL, &dec, &err) ==
                        XCHG_OK,
                "a decoder of %s's schema: %s", gold_stream,
                stream.data ? err.message : "cannot read")) {
    free(stream.data);
    return;
  }
  const size_t cuts[] = {schema_end,      stream.size - 8, stream.size - 7, stream.size - 4,
                         stream.size - 1, schema_end + 4,  schema_end + 20, stream.size - 9};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    char want[160] = "the stream is cut short: ";
    if (i < 2)
      snprintf(want, sizeof want,
               "the stream is cut short: the input ends at byte %zu, before message %d, without "
               "the end-of-stream marker",
               cuts[i], i == 0 ? 1 : 3);
    else if (i > 4) /* inside message 1's framing, its metadata, message 2's body */
      snprintf(want, sizeof want, "the stream is cut short: %smessage %d at byte ",
               i == 5 ? "input ends inside the framing of " : "", i == 7 ? 2 : 1);
    /* in memory, and in two chunks, which are read */
    const xchg_chunk halves[] = {{stream.data, cuts[i] / 2},
                                 {stream.data + cuts[i] / 2, cuts[i] - cuts[i] / 2}};
    for (int chunks = 0; chunks < 2; chunks++) {
      xchg_source *src = NULL;
      if (!chunks)
        src = tu_memory_source(stream.data, cuts[i]);
      else if (xchg_source_from_chunks(halves, 2, NULL, NULL, &src, &err) != XCHG_OK)
        TU_CHECK(false, "two chunks: %s", err.message);
      struct ArrowArray a = {0};
      xchg_status st = xchg_batch_decoder_decode(dec, src, 0, &a, &err);
      TU_CHECK(st == XCHG_EIO && strstr(err.message, "truncated?") == NULL &&
                   strstr(err.message, want) != NULL,
               "%s cut to %zu bytes, a decoder's payload%s: %s: %s (want XCHG_EIO, \"%s\")",
               gold_stream, cuts[i], chunks ? " in two chunks" : "", xchg_status_name(st),
               st == XCHG_OK ? "decoded" : err.message, want);
      if (a.release) a.release(&a);
      xchg_source_free(src);
    }
  }
  xchg_batch_decoder_free(dec);
  free(stream.data);
}

/* ---- stream codecs cut short ------------------------------------------------------- */

/* `xchg cat` of the gold stream in `codec`, cut to `cut` bytes: the
 * codec's piece `what` "is cut short: the input ends at byte <cut>" (then
 * `more`, when not NULL), in the IPC reader's words, never "truncated". */
static void expect_codec_cut(xchg_stream_codec codec, const tu_bytes *enc, size_t cut,
                             const char *what, const char *more) {
  char *path = path_of("cut.codec"), want[256];
  if (!write_bytes(path, enc->data, cut)) return;
  snprintf(want, sizeof want, "%s is cut short: the input ends at byte %zu", what, cut);
  expect_cli(1, (const char *const[]){want, more, NULL}, (const char *const[]){"truncated", NULL},
             "cat --input-codec %s '%s'", xchg_stream_codec_name(codec), path);
}

/* Each stream codec cut inside its header (3 bytes in), inside its data
 * (half-way) and, for lz4-java, right before its end block. */
static void check_codec_cuts(void) {
  static const struct {
    xchg_stream_codec codec;
    const char *header, *data, *data_more;
  } codecs[] = {
      {XCHG_STREAM_LZ4_JAVA, "lz4-java block 0 at byte 0", "lz4-java block 0 at byte 0",
       " compressed bytes its header announces"},
      {XCHG_STREAM_SNAPPY_JAVA, "snappy-java stream header at byte 0",
       "snappy-java chunk 0 at byte 16", " bytes its length announces"},
      {XCHG_STREAM_SNAPPY_FRAMED, "snappy framed chunk 0 at byte 0",
       "snappy framed chunk 1 at byte 10", " bytes its header announces"},
      {XCHG_STREAM_ZSTD, "zstd frame 0 (starting at byte 0)", "zstd frame 0 (starting at byte 0)",
       NULL},
      {XCHG_STREAM_LZ4_FRAME, "lz4 frame 0 (starting at byte 0)",
       "lz4 frame 0 (starting at byte 0)", NULL},
  };
  tu_bytes ipc = tu_read_bytes(gold_stream);
  for (size_t i = 0; ipc.data != NULL && i < sizeof codecs / sizeof codecs[0]; i++) {
    tu_bytes enc = {0};
    if (!tu_append_encoded(&enc, codecs[i].codec, NULL, ipc.data, ipc.size)) continue;
    expect_codec_cut(codecs[i].codec, &enc, 3, codecs[i].header, NULL);
    expect_codec_cut(codecs[i].codec, &enc, enc.size / 2, codecs[i].data, codecs[i].data_more);
    if (codecs[i].codec == XCHG_STREAM_LZ4_JAVA) /* 21 bytes: the end block's header alone */
      expect_codec_cut(codecs[i].codec, &enc, enc.size - 21, "the lz4-java stream",
                       "or the end block would begin: no end block");
    free(enc.data);
  }
  TU_CHECK(ipc.data != NULL, "cannot read %s", gold_stream);
  free(ipc.data);
}

/* ---- LZ4 frames -------------------------------------------------------------------- */

static void check_lz4_words(void) {
  static const char *const no_identifier[] = {"ERROR_", NULL};
  tu_bytes ipc = tu_read_bytes(gold_stream);
  if (ipc.data == NULL) {
    TU_CHECK(false, "cannot read %s", gold_stream);
    return;
  }
  tu_bytes after = {0};
  if (tu_append_encoded(&after, XCHG_STREAM_LZ4_FRAME, NULL, ipc.data, ipc.size)) {
    tu_bytes_append(&after, "garbagegarbage", 14);
    char *path = path_of("after.lz4");
    if (write_bytes(path, after.data, after.size))
      expect_cli(1, (const char *const[]){"not an LZ4 frame: its magic number is unknown", NULL},
                 no_identifier, "cat '%s'", path);
    /* A frame header whose block size field is damaged. */
    static const uint8_t header[] = {0x04, 0x22, 0x4d, 0x18, 0x64, 0x00, 0xa7, 'j', 'u', 'n', 'k'};
    path = path_of("header.lz4");
    if (write_bytes(path, header, sizeof header))
      expect_cli(1, (const char *const[]){"the frame header's block size is invalid", NULL},
                 no_identifier, "cat '%s'", path);
    free(after.data);
  }
  /* An IPC body block: a frame whose compressed block is damaged. */
  static const char text[] =
      "a body buffer, long enough to be compressed into a block of its own: "
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  xchg_buf *packed = NULL;
  xchg_error err;
  TU_CHECK(
      xchg_block_compress(XCHG_BLOCK_LZ4_FRAME, 0, text, sizeof text, &packed, &err) == XCHG_OK,
      "compress: %s", err.message);
  if (packed != NULL) {
    size_t n = xchg_buf_size(packed);
    uint8_t *damaged = malloc(n), out[sizeof text];
    memcpy(damaged, xchg_buf_data(packed), n);
    memset(damaged + 11, 0xff,
           n - 11 - 4); /* the block's bytes, past the frame header and block size */
    xchg_status st = xchg_block_decompress(XCHG_BLOCK_LZ4_FRAME, damaged, n, out, sizeof out, &err);
    TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, "corrupt LZ4 frame at compressed byte") &&
                 strstr(err.message, "ERROR_") == NULL,
             "a damaged LZ4 block: %s: %s", xchg_status_name(st),
             st == XCHG_OK ? "decoded" : err.message);
    free(damaged);
    xchg_buf_unref(packed);
  }
  free(ipc.data);
}

/* ---- other formats ----------------------------------------------------------------- */

static void expect_not_ipc(const void *data, size_t size, const char *want, const char *what) {
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open_memory(data, size, NULL, NULL, NULL, &r, &err);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, want) != NULL, "%s: %s: %s, expected \"%s\"",
           what, xchg_status_name(st), st == XCHG_OK ? "opened" : err.message, want);
  xchg_ipc_reader_free(r);
}

/* What `lz4 -l` writes ("hello" in one legacy block), which no stream
 * codec reads: named by cat of it, from a file and a pipe, and by the
 * lz4-frame codec that refuses it, never as some unknown magic. */
static void check_lz4_legacy(void) {
  static const uint8_t legacy[] = {0x02, 0x21, 0x4c, 0x18, 6,   0,   0,
                                   0,    0x50, 'h',  'e',  'l', 'l', 'o'};
  char *path = path_of("hello.lz4");
  if (!write_bytes(path, legacy, sizeof legacy)) return;
  static const char *const words[] = {
      "an LZ4 legacy frame (lz4 -l), which xchg does not read: decompress it first, lz4 -d", NULL};
  static const char *const not_unknown[] = {"no continuation marker", "magic number is unknown",
                                            NULL};
  expect_cli(1, words, not_unknown, "cat '%s'", path);
  expect_cli(1, words, not_unknown, "inspect - < '%s'", path);
  expect_cli(1, words, not_unknown, "cat '%s' --input-codec lz4-frame", path);
}

static void check_other_formats(void) {
  tu_bytes ipc = tu_read_bytes(gold_stream);
  if (ipc.data == NULL) return;
  char *gz = path_of("primitive.stream.gz");
  gzFile g = gzopen(gz, "wb");
  TU_CHECK(
      g != NULL && gzwrite(g, ipc.data, (unsigned)ipc.size) == (int)ipc.size && gzclose(g) == Z_OK,
      "cannot write %s with zlib", gz);
  static const char *const gzip_words[] = {
      "not an Arrow IPC stream or file: 1f 8b magic at byte 0 (a gzip file", NULL};
  static const char *const not_short[] = {"bytes short", NULL};
  expect_cli(1, gzip_words, not_short, "cat '%s'", gz);
  expect_cli(1, gzip_words, not_short, "inspect - < '%s'", gz);
  tu_bytes gz_bytes = tu_read_bytes(gz);
  if (gz_bytes.data)
    expect_not_ipc(gz_bytes.data, gz_bytes.size, "(a gzip file: decompress it first", "gzip");
  free(gz_bytes.data);
  static const struct {
    const char *bytes;
    size_t size;
    const char *want;
  } magics[] = {
      {"BZh91AY&SY", 10, "BZh magic at byte 0 (a bzip2 file"},
      {"\xfd"
       "7zXZ\0\0\x04",
       8, "fd 37 7a 58 5a 00 magic at byte 0 (an xz file"},
      {"\x28\xb5\x2f\xfd\x20\x00", 6, "28 b5 2f fd magic at byte 0 (a zstd frame"},
      {"\x04\x22\x4d\x18\x64\x40", 6, "04 22 4d 18 magic at byte 0 (an LZ4 frame"},
      {"\x02\x21\x4c\x18\x06\x00", 6,
       "02 21 4c 18 magic at byte 0 (an LZ4 legacy frame (lz4 -l), which xchg does not read"},
      {"PAR1\x15\x00\x15", 7, "PAR1 magic at byte 0 (a Parquet file)"},
      {"LZ4Block\x26", 9, "LZ4Block magic at byte 0 (an lz4-java stream, Spark's LZ4 codec"},
      {"\x82SNAPPY\0\0\0\0\1", 12,
       "82 53 4e 41 50 50 59 00 magic at byte 0 (a snappy-java stream, Spark's Snappy codec"},
      {"\xff\x06\x00\x00sNaPpY", 10,
       "ff 06 00 00 73 4e 61 50 magic at byte 0 (a framed Snappy stream"},
  };
  for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++) {
    uint8_t bytes[64] = {0};
    memcpy(bytes, magics[i].bytes, magics[i].size);
    expect_not_ipc(bytes, sizeof bytes, magics[i].want, magics[i].want);
  }
  free(ipc.data);
  check_lz4_legacy();
}

/* inspect --rows of Arrow IPC (a stream, a file, IPC inside a stream codec,
 * through a pipe) says what its first bytes are and that --rows is the
 * fix; of length-prefixed rows cut inside a row, it does not. */
static void check_rows_of_ipc(void) {
  static const char *const words[] = {
      "row 0 at decompressed byte 0: length",
      "(its first bytes are Arrow IPC: leave --rows out to inspect it)", NULL};
  expect_cli(1, words, NULL, "inspect --rows '%s'", gold_stream);
  expect_cli(1, words, NULL, "inspect --rows '%s'", gold_file);
  expect_cli(1, words, NULL, "inspect --rows - < '%s'", gold_stream);
  char *wrapped = path_of("broadcast.lz4-frame");
  tu_cli_result g = run("gen broadcast '%s' --rows 100 --outer lz4-frame -f", wrapped);
  TU_CHECK(g.exit_code == 0, "gen --outer lz4-frame: %s", g.err);
  tu_cli_result_free(&g);
  expect_cli(1, words, NULL, "inspect --rows '%s'", wrapped);
  static const uint8_t cut_row[] = {5, 0, 0, 0, 'a', 'b'};
  char *rows = path_of("cut.rows");
  static const char *const not_ipc[] = {"Arrow IPC", NULL};
  if (write_bytes(rows, cut_row, sizeof cut_row))
    expect_cli(1, NULL, not_ipc, "inspect --rows '%s'", rows);
}

/* --input-codec none on a codec's stream: the option is what is wrong, and
 * the message says which codec would read it, from a file and from a pipe. */
static void check_stated_codec_none(void) {
  static const char *const outers[] = {"lz4-java", "snappy-java"};
  for (size_t i = 0; i < sizeof outers / sizeof outers[0]; i++) {
    char *path = path_of(outers[i]), phrase[256];
    tu_cli_result g = run("gen broadcast '%s' --rows 100 --outer %s -f", path, outers[i]);
    TU_CHECK(g.exit_code == 0, "gen --outer %s: %s", outers[i], g.err);
    tu_cli_result_free(&g);
    snprintf(phrase, sizeof phrase,
             "its first bytes are %s's framing (leave --input-codec out to detect it, or give "
             "--input-codec %s)",
             outers[i], outers[i]);
    const char *const want[] = {phrase, NULL};
    expect_cli(1, want, NULL, "cat '%s' --input-codec none", path);
    expect_cli(1, want, NULL, "inspect - --input-codec none < '%s'", path);
    expect_cli(0, NULL, NULL, "inspect '%s'", path); /* detected: the same bytes read */
  }
}

/* --input-codec naming another codec than the input's (or plain IPC):
 * the codec's error is kept, and the message says what the first bytes
 * are and that detection would read them, from a file and from a pipe. */
static void check_stated_codec_other(void) {
  static const struct {
    const char *outer, *stated, *seen;
  } cases[] = {{"lz4-java", "snappy-java", "lz4-java's framing"},
               {"zstd", "lz4-frame", "zstd's framing"},
               {"none", "zstd", "Arrow IPC"},
               {"none", "comet", "Arrow IPC"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = path_of(cases[i].outer), phrase[256];
    tu_cli_result g = run("gen broadcast '%s' --rows 100 --outer %s -f", path, cases[i].outer);
    TU_CHECK(g.exit_code == 0, "gen --outer %s: %s", cases[i].outer, g.err);
    tu_cli_result_free(&g);
    snprintf(phrase, sizeof phrase,
             "(its first bytes are %s, not --input-codec %s: leave --input-codec out to detect it)",
             cases[i].seen, cases[i].stated);
    const char *const want[] = {phrase, NULL};
    expect_cli(1, want, NULL, "cat '%s' --input-codec %s", path, cases[i].stated);
    expect_cli(1, want, NULL, "convert - /dev/null --input-codec %s < '%s'", cases[i].stated, path);
    tu_cli_result r = tu_cli_piped_runf(cli, path, "inspect - --input-codec %s", cases[i].stated);
    TU_CHECK(r.exit_code == 1 && strstr(r.err, phrase) != NULL,
             "inspect - --input-codec %s of %s through a pipe: exit %d: %.500s", cases[i].stated,
             cases[i].outer, r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
}

/* ---- skippable frames alone ------------------------------------------------------- */

/* An input of skippable frames (LZ4's and zstd's, no data) and nothing
 * else is not said to be empty, but to hold them: cat and inspect of the
 * file, cat - of it through a pipe; an empty input still is empty. */
static void check_skippable_only(void) {
  static const struct {
    const uint8_t *bytes;
    size_t size;
    const char *want;
  } inputs[] = {
      {(const uint8_t *)"\x50\x2a\x4d\x18\0\0\0\0", 8,
       "not an Arrow IPC stream or file: the input holds a skippable frame (8 bytes, LZ4's and "
       "zstd's frames that carry no data) and nothing else\n"},
      {(const uint8_t *)"\x50\x2a\x4d\x18\0\0\0\0\x5f\x2a\x4d\x18\3\0\0\0abc", 19,
       "not an Arrow IPC stream or file: the input holds 2 skippable frames (19 bytes, LZ4's and "
       "zstd's frames that carry no data) and nothing else\n"},
  };
  static const char *const not_empty[] = {"empty", NULL};
  char *path = path_of("skippable.lz4");
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    if (!write_bytes(path, inputs[i].bytes, inputs[i].size)) return;
    const char *const want[] = {inputs[i].want, NULL};
    expect_cli(1, want, not_empty, "cat '%s'", path);
    expect_cli(1, want, not_empty, "inspect '%s'", path);
    /* Stated plain, they were said to be lz4-frame's, which reads nothing. */
    expect_cli(1, want, (const char *const[]){"empty", "lz4-frame", NULL},
               "cat '%s' --input-codec none", path);
    tu_cli_result r = tu_cli_piped_runf(cli, path, "cat -");
    TU_CHECK(r.exit_code == 1 && strstr(r.err, inputs[i].want) && !strstr(r.err, "empty"),
             "cat - of %zu bytes of skippable frames, piped: exit %d: %s", inputs[i].size,
             r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  path = path_of("nothing");
  if (write_bytes(path, "", 0)) {
    tu_cli_result r = tu_cli_piped_runf(cli, path, "cat -");
    TU_CHECK(
        r.exit_code == 1 && strstr(r.err, "not an Arrow IPC stream or file: the input is empty"),
        "cat - of nothing, piped: exit %d: %s", r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
}

/* content in each stream codec, through cat, inspect and cat - (below). */
static void check_codec_holding(const char *content, size_t size) {
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_FRAME, XCHG_STREAM_ZSTD,
                                             XCHG_STREAM_LZ4_JAVA, XCHG_STREAM_SNAPPY_JAVA,
                                             XCHG_STREAM_SNAPPY_FRAMED};
  static const char *const not_empty[] = {"empty", NULL};
  char *path = path_of("nothing.codec");
  for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
    xchg_buf *encoded = NULL;
    xchg_error err;
    TU_OK(xchg_stream_encode(codecs[i], NULL, content, size, &encoded, &err), err);
    if (encoded == NULL || !write_bytes(path, xchg_buf_data(encoded), xchg_buf_size(encoded))) {
      xchg_buf_unref(encoded);
      continue;
    }
    char want[200];
    if (size == 0)
      snprintf(want, sizeof want,
               "not an Arrow IPC stream or file: the input's %s stream decodes to no bytes at "
               "all\n",
               xchg_stream_codec_name(codecs[i]));
    else
      snprintf(want, sizeof want,
               ": the input's %s stream decodes to bytes that are not an Arrow IPC stream or "
               "file: no continuation marker or ARROW1 magic at decoded byte 0\n",
               xchg_stream_codec_name(codecs[i]));
    expect_cli(1, (const char *const[]){want, NULL}, not_empty, "cat '%s'", path);
    expect_cli(1, (const char *const[]){want, NULL}, not_empty, "inspect '%s'", path);
    tu_cli_result r = tu_cli_piped_runf(cli, path, "cat -");
    TU_CHECK(r.exit_code == 1 && strstr(r.err, want) && !strstr(r.err, "empty"),
             "cat - of %s of %zu bytes, piped: exit %d: %s", xchg_stream_codec_name(codecs[i]),
             size, r.exit_code, r.err);
    tu_cli_result_free(&r);
    xchg_buf_unref(encoded);
  }
}

/* A codec's stream of no content (what xchg_stream_encode writes of no
 * bytes: an LZ4 frame or zstd frame of none, lz4-java's end block alone,
 * snappy-java's header alone, snappy's stream identifier alone) is not
 * said to be an empty input, which the file is not, but what it is; a
 * codec's stream of CSV text is said to decode to bytes that are not IPC,
 * the codec named, so that "at byte 0" is read as of the decoded bytes:
 * cat and inspect of the file, cat - of it through a pipe. */
static void check_codec_of_nothing(void) {
  static const char text[] = "id,name\n1,alice\n";
  for (int with_text = 0; with_text < 2; with_text++)
    check_codec_holding(with_text ? text : "", with_text ? sizeof text - 1 : 0);
}

/* ---- Comet blocks of other schemas ------------------------------------------------- */

/* A block of 3 columns after one of 30 (two gen shuffle outputs, one after
 * the other): a sentence saying where each count is, by cat of the file
 * and through a pipe; it read "3 columns this block, 30 the first block". */
static void check_block_columns(void) {
  char *wide = path_of("wide.comet"), *narrow = path_of("narrow.comet"), *both = path_of("both");
  for (int i = 0; i < 2; i++) {
    tu_cli_result g = run("gen shuffle '%s' --format comet --columns %d --rows 64 -f",
                          i ? narrow : wide, i ? 3 : 30);
    TU_CHECK(g.exit_code == 0, "gen shuffle: exit %d: %s", g.exit_code, g.err);
    tu_cli_result_free(&g);
  }
  tu_bytes first = tu_read_bytes(wide), second = tu_read_bytes(narrow);
  if (TU_CHECK(first.data && second.data, "cannot read the blocks")) {
    tu_bytes_append(&first, second.data, second.size);
    static const char want[] =
        "its schema is not the first block's: 3 columns in this block, 30 in the first block\n";
    if (write_bytes(both, first.data, first.size))
      expect_cli(1, (const char *const[]){want, NULL}, NULL, "cat '%s'", both);
    tu_cli_result r = tu_cli_piped_runf(cli, both, "cat -");
    TU_CHECK(r.exit_code == 1 && strstr(r.err, want), "cat - of blocks of 30, then 3 columns: %s",
             r.err);
    tu_cli_result_free(&r);
  }
  free(first.data);
  free(second.data);
}

/* `xchg cat` of Comet blocks `blocks` cut to `cut` bytes: XCHG_EIO in
 * the words of a cut, `want`, never "truncated". */
static void expect_blocks_cut(const tu_bytes *blocks, size_t cut, const char *want) {
  char *path = path_of("cut.comet");
  if (write_bytes(path, blocks->data, cut))
    expect_cli(1, (const char *const[]){want, NULL}, (const char *const[]){"truncated", NULL},
               "cat '%s'", path);
}

/* Comet blocks cut short: two blocks that state their field count (read
 * by the shuffle reader) cut inside the second one's header and inside
 * its data; one that states none (read block by block) whose length
 * passes the input's end by 5 bytes, where its frame ends. */
static void check_comet_cuts(void) {
  tu_bytes ipc = tu_read_bytes(gold_stream), two = {0}, one = {0};
  if (!TU_CHECK(ipc.data != NULL, "cannot read %s", gold_stream) ||
      !tu_append_comet_block(&two, ipc.data, ipc.size, XCHG_STREAM_LZ4_FRAME, 30) ||
      !tu_append_comet_block(&two, ipc.data, ipc.size, XCHG_STREAM_LZ4_FRAME, 30) ||
      !tu_append_comet_block(&one, ipc.data, ipc.size, XCHG_STREAM_LZ4_FRAME, 0)) {
    free(ipc.data);
    free(two.data);
    return;
  }
  size_t second = two.size / 2, len = one.size - 8;
  char want[256];
  snprintf(want, sizeof want,
           "its header is cut short: the input ends at byte %zu, 10 of its 20 bytes", second + 10);
  expect_blocks_cut(&two, second + 10, want);
  snprintf(want, sizeof want,
           "the block is cut short: the input ends at byte %zu, 92 bytes after its length, which "
           "states %zu (or the block's length is wrong)",
           second + 100, len);
  expect_blocks_cut(&two, second + 100, want);
  for (int k = 0; k < 8; k++) one.data[k] = (uint8_t)((len + 5) >> (8 * k));
  snprintf(want, sizeof want,
           "comet block 0 at byte 0: the block is cut short: the input ends at byte %zu, before "
           "its end at byte %zu (or the block's length is wrong)",
           one.size, one.size + 5);
  expect_blocks_cut(&one, one.size, want);
  free(ipc.data);
  free(two.data);
  free(one.data);
}

/* The error of a shuffle reader over `data` (plain IPC streams or Comet
 * blocks) read to its end, into err; its status. */
static xchg_status shuffle_read_error(const tu_bytes *data, xchg_error *err) {
  xchg_shuffle_reader *r = NULL;
  xchg_status st = xchg_shuffle_reader_open(NULL, &r, err);
  if (st == XCHG_OK)
    st = xchg_shuffle_reader_add_source(r, tu_memory_source(data->data, data->size), err);
  if (st == XCHG_OK) st = xchg_shuffle_reader_end_input(r, err);
  for (struct ArrowArray a = {.release = NULL}; st == XCHG_OK;) {
    st = xchg_shuffle_reader_next(r, &a, err);
    if (a.release == NULL) break;
    a.release(&a);
  }
  xchg_shuffle_reader_free(r);
  return st;
}

/* A shuffle reader's IPC stream without its end-of-stream marker, the
 * second of two plain ones and in a Comet block: XCHG_EIO, "the stream is
 * cut short: the input ends at byte N, before message K, without the
 * end-of-stream marker" as the IPC reader says it, the Comet block's with
 * the hint that its length may be wrong instead; never "(truncated?)". */
static void check_shuffle_cuts(void) {
  tu_bytes ipc = tu_read_bytes(gold_stream), plain = {0}, comet = {0};
  if (!TU_CHECK(ipc.data != NULL, "cannot read %s", gold_stream) ||
      !tu_append_comet_block(&comet, ipc.data, ipc.size - 8, XCHG_STREAM_LZ4_FRAME, 30)) {
    free(ipc.data);
    return;
  }
  tu_bytes_append(&plain, ipc.data, ipc.size);
  tu_bytes_append(&plain, ipc.data, ipc.size - 8);
  char want[256];
  int n = snprintf(want, sizeof want,
                   "the stream is cut short: the input ends at byte %zu, before message 3, "
                   "without the end-of-stream marker",
                   ipc.size - 8);
  for (int k = 0; k < 2; k++) {
    if (k == 1)
      snprintf(want + n, sizeof want - (size_t)n, "%s",
               " (or the block's length is shorter than its stream)");
    xchg_error err = {{0}};
    xchg_status st = shuffle_read_error(k ? &comet : &plain, &err);
    TU_CHECK(st == XCHG_EIO && strstr(err.message, want) && !strstr(err.message, "truncated"),
             "a shuffle reader's %s without its end-of-stream marker: %s: %s (want \"%s\")",
             k ? "Comet block" : "second IPC stream", xchg_status_name(st), err.message, want);
  }
  free(ipc.data);
  free(plain.data);
  free(comet.data);
}

/* ---- options ----------------------------------------------------------------------- */

static void check_column_position(const char *gold_root) {
  char path[4200];
  snprintf(path, sizeof path, "%s/1.0.0-littleendian/generated_duplicate_fieldnames.stream",
           gold_root);
  expect_cli(1,
             (const char *const[]){
                 "column position #9 is out of range: the input has 3 columns, #0 to #2", NULL},
             (const char *const[]){"no column named", NULL}, "cat '%s' --columns '#1,#9'", path);
  tu_cli_result r = run("cat '%s' --columns '#2' --format json", path);
  TU_CHECK(r.exit_code == 0 && strncmp(r.out, "{\"struct\":", 10) == 0,
           "--columns '#2': exit %d: %.200s", r.exit_code, r.out);
  tu_cli_result_free(&r);
}

/* A count given to an option is digits alone, as XCHG_THREADS is: a blank
 * before or after it, or a sign ("+5", and "-0" where no count is
 * negative), is refused naming the option and the value, by every command;
 * --level, which may be negative, takes a '-' alone; the bench lists too.
 * Each bench line ends with an unknown option, so that nothing runs if
 * the value were taken. */
static void check_count_options(void) {
  static const char *const bad[] = {" 5", "5 ", "\t5", "+5", "-0", " +5"};
  static const struct {
    const char *args, *option; /* args: %s the value, %%s the output */
  } takes[] = {{"cat '%%s' --limit '%s'", "--limit"},
               {"inspect --rows '%%s' --head '%s'", "--head"},
               {"convert '%%s' '%%s' -f --batch-rows '%s'", "--batch-rows"},
               {"gen rows '%%s' -f --rows '%s'", "--rows"},
               {"gen shuffle '%%s' -f --rows 64 --columns '%s'", "--columns"},
               {"gen cache '%%s' -f --rows 8 --compression zstd --level '%s'", "--level"}};
  char *out = path_of("count.out");
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    for (size_t k = 0; k < sizeof takes / sizeof takes[0]; k++) {
      if (strcmp(takes[k].option, "--level") == 0 && strcmp(bad[i], "-0") == 0) continue;
      char fmt[256], args[8400], want[160];
      snprintf(fmt, sizeof fmt, takes[k].args, bad[i]);
      if (k == 1)
        snprintf(args, sizeof args, fmt, gold_stream);
      else if (k == 2)
        snprintf(args, sizeof args, fmt, gold_stream, out);
      else
        snprintf(args, sizeof args, fmt, k == 0 ? gold_stream : out);
      snprintf(want, sizeof want, "%s must be an integer from ", takes[k].option);
      char value[16];
      snprintf(value, sizeof value, ", not '%s'\n", bad[i]);
      expect_cli(2, (const char *const[]){want, value, NULL}, NULL, "%s", args);
    }
  static const char *const lists[][2] = {
      {"bench shuffle --columns ' 3' --bogus", "--columns takes up to 8"},
      {"bench shuffle --block-rows '64,+8' --bogus", "--block-rows takes up to 8"},
      {"bench broadcast --tasks '1, 2' --bogus", "--tasks takes up to 8"}};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
    expect_cli(2, (const char *const[]){lists[i][1], NULL}, (const char *const[]){"--bogus", NULL},
               "%s", lists[i][0]);
}

static void check_threads_env(void) {
  static const char *const bad[] = {"abc", "-1", "4x", "99999", " 2x", " 2", "+2", "-0"};
  char want[160];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("XCHG_THREADS", bad[i], 1);
    int threads = -7;
    xchg_error err;
    xchg_status st = xchg_pool_parse_env(&threads, &err);
    snprintf(want, sizeof want,
             "XCHG_THREADS must be an integer from 0 (one thread per core, as when unset) to %d, "
             "not '%s'",
             XCHG_POOL_MAX_THREADS, bad[i]);
    TU_CHECK(st == XCHG_EINVAL && threads == 0 && strcmp(err.message, want) == 0,
             "XCHG_THREADS=%s: %s, %d threads: %s", bad[i], xchg_status_name(st), threads,
             st ? err.message : "");
    char line[200];
    snprintf(line, sizeof line, "xchg: %s\n", want);
    tu_cli_result r = run("cat '%s' --limit 1", gold_stream);
    TU_CHECK(r.exit_code == 2 && strcmp(r.err, line) == 0 && r.out[0] == '\0',
             "XCHG_THREADS='%s' xchg cat: exit %d: %s", bad[i], r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  static const struct {
    const char *value;
    int threads;
  } good[] = {{"", 0}, {"0", 0}, {"1", 1}, {"3", 3}, {"4096", 4096}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    setenv("XCHG_THREADS", good[i].value, 1);
    int threads = -7;
    xchg_error err;
    xchg_status st = xchg_pool_parse_env(&threads, &err);
    TU_CHECK(st == XCHG_OK && threads == good[i].threads, "XCHG_THREADS='%s': %s, %d threads",
             good[i].value, xchg_status_name(st), threads);
    if (good[i].threads > 64) continue; /* not thousands of threads for one cat */
    tu_cli_result r = run("cat '%s' --limit 1", gold_stream);
    TU_CHECK(r.exit_code == 0, "XCHG_THREADS='%s' xchg cat: exit %d: %s", good[i].value,
             r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  unsetenv("XCHG_THREADS");
  int threads = -7;
  xchg_error err;
  TU_CHECK(xchg_pool_parse_env(&threads, &err) == XCHG_OK && threads == 0,
           "XCHG_THREADS unset: %d threads", threads);
}

static void check_levels(void) {
  char *out = path_of("level.arrow");
  static const struct {
    const char *command, *codec, *level, *range;
  } out_of_range[] = {
      {"convert", "lz4", "13", "--level 13 is out of lz4's range: 0 to 12"},
      {"convert", "lz4", "-1", "--level -1 is out of lz4's range: 0 to 12"},
      {"convert", "zstd", "23", "--level 23 is out of zstd's range: -131072 to 22"},
      {"gen", "lz4", "13", "--level 13 is out of lz4's range: 0 to 12"},
      {"gen", "zstd", "-131073", "--level -131073 is out of zstd's range: -131072 to 22"},
  };
  for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; i++) {
    bool convert = strcmp(out_of_range[i].command, "convert") == 0;
    expect_cli(2, (const char *const[]){out_of_range[i].range, NULL}, NULL,
               "%s '%s' '%s'%s --compression %s --level %s", out_of_range[i].command,
               convert ? gold_stream : "cache", out, convert ? "" : " --rows 10",
               out_of_range[i].codec, out_of_range[i].level);
  }
  /* The ends of each range are levels. */
  static const char *const fine[][2] = {
      {"lz4", "12"}, {"lz4", "0"}, {"zstd", "22"}, {"zstd", "-5"}};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    tu_cli_result r = run("convert '%s' '%s' -f --compression %s --level %s", gold_stream, out,
                          fine[i][0], fine[i][1]);
    TU_CHECK(r.exit_code == 0, "convert --compression %s --level %s: exit %d: %s", fine[i][0],
             fine[i][1], r.exit_code, r.err);
    tu_cli_result_free(&r);
  }
  int min, max;
  xchg_block_codec_levels(XCHG_BLOCK_LZ4_FRAME, &min, &max);
  TU_CHECK(min == 0 && max == 12, "lz4 levels %d to %d", min, max);
  xchg_block_codec_levels(XCHG_BLOCK_ZSTD, &min, &max);
  TU_CHECK(min < 0 && max == 22, "zstd levels %d to %d", min, max);
  xchg_buf *packed = NULL;
  xchg_error err;
  xchg_status st = xchg_block_compress(XCHG_BLOCK_LZ4_FRAME, 13, "abc", 3, &packed, &err);
  TU_CHECK(st == XCHG_EINVAL &&
               strstr(err.message, "compression level 13 is out of lz4's range, 0 to 12"),
           "xchg_block_compress(lz4, 13): %s: %s", xchg_status_name(st),
           st ? err.message : "compressed");
  xchg_buf_unref(packed);
  struct ArrowSchema field, root, *fields[1] = {&field};
  tu_fixture_schema(&field, "i", "x", 0, NULL);
  tu_fixture_schema(&root, "+s", "", 1, fields);
  root.flags = 0;
  xchg_ipc_write_options o;
  xchg_ipc_write_options_init(&o);
  o.codec = XCHG_BLOCK_ZSTD;
  o.level = 23;
  xchg_ipc_writer *w = NULL;
  st = xchg_ipc_writer_open_memory(&root, &o, &w, &err);
  TU_CHECK(st == XCHG_EINVAL && strstr(err.message, "level 23 is out of zstd's range"),
           "writer at zstd level 23: %s: %s", xchg_status_name(st), st ? err.message : "opened");
  xchg_ipc_writer_free(w);
}

/* ---- which buffer -------------------------------------------------------------------- */

/* A stream of one nullable utf8 column "s": rows "abc", "def", "ghi", null
 * (offsets 0 3 6 9 9). */
static xchg_buf *utf8_stream(void) {
  static const uint8_t validity[1] = {0x07};
  static const int32_t offsets[5] = {0, 3, 6, 9, 9};
  struct ArrowSchema field, root, *fields[1] = {&field};
  tu_fixture_schema(&field, "u", "s", 0, NULL);
  tu_fixture_schema(&root, "+s", "", 1, fields);
  root.flags = 0;
  struct ArrowArray column, batch, *columns[1] = {&column};
  tu_fixture_array(&column, 4, 3, (const void *[]){validity, offsets, "abcdefghi"}, 0, NULL);
  column.null_count = 1;
  tu_fixture_array(&batch, 4, 1, (const void *[]){NULL}, 1, columns);
  xchg_ipc_writer *w = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_writer_open_memory(&root, NULL, &w, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_write(w, &batch, &err);
  if (st == XCHG_OK) st = xchg_ipc_writer_finish(w, &err);
  xchg_buf *out = st == XCHG_OK ? xchg_ipc_writer_take_memory(w) : NULL;
  TU_CHECK(out != NULL, "writing the utf8 stream: %s", err.message);
  xchg_ipc_writer_free(w);
  return out;
}

/* Reads every batch of data; the error message, or "" when it reads. */
static void read_error(const uint8_t *data, size_t size, char *msg, size_t msgsz) {
  xchg_ipc_reader *r = NULL;
  xchg_error err;
  xchg_status st = xchg_ipc_reader_open_memory(data, size, NULL, NULL, NULL, &r, &err);
  struct ArrowArray batch;
  while (st == XCHG_OK && (st = xchg_ipc_reader_next(r, &batch, &err)) == XCHG_OK && batch.release)
    batch.release(&batch);
  snprintf(msg, msgsz, "%s", st == XCHG_OK ? "" : err.message);
  xchg_ipc_reader_free(r);
}

static uint8_t *find_bytes(uint8_t *data, size_t size, const void *pattern, size_t n) {
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp(data + i, pattern, n) == 0) return data + i;
  return NULL;
}

/* A dictionary's values are named as what they are, not as the indices
 * of the field that uses them: the offsets of a dictionary of strings
 * going down are "array buffer 1 (offsets)" of field 'd'. */
static void check_dictionary_buffer_role(void) {
  static const int64_t rows[1] = {8};
  xchg_buf *stream = NULL;
  TU_CHECK(cd_make_stream(0, rows, 1, 0, XCHG_BLOCK_NONE, &stream) == 0, "cannot make the stream");
  if (stream == NULL) return;
  size_t size = xchg_buf_size(stream);
  uint8_t *copy = malloc(size);
  memcpy(copy, xchg_buf_data(stream), size);
  int32_t offsets[5] = {0};
  for (int i = 0; i < 4; i++) offsets[i + 1] = offsets[i] + (int32_t)strlen(cd_word(i));
  uint8_t *at = find_bytes(copy, size, offsets, sizeof offsets);
  TU_CHECK(at != NULL, "the dictionary's offsets are not in the stream");
  if (at != NULL) {
    int32_t zero = 0;
    memcpy(at + 8, &zero, 4);
    char msg[1024];
    read_error(copy, size, msg, sizeof msg);
    TU_CHECK(
        strstr(msg,
               "field 'd', array buffer 1 (offsets): offset 0 at row 2 is below the one before"),
        "%s", msg[0] ? msg : "a decreasing offset was read");
  }
  free(copy);
  xchg_buf_unref(stream);
}

static void check_buffer_numbering(void) {
  xchg_buf *stream = utf8_stream();
  if (stream == NULL) return;
  size_t size = xchg_buf_size(stream);
  uint8_t *copy = malloc(size);
  char msg[1024];
  static const int32_t offsets[5] = {0, 3, 6, 9, 9};
  /* An offset below the one before: a value, in the array's offsets. */
  memcpy(copy, xchg_buf_data(stream), size);
  uint8_t *at = find_bytes(copy, size, offsets, sizeof offsets);
  TU_CHECK(at != NULL, "the offsets are not in the stream");
  if (at != NULL) {
    int32_t one = 1;
    memcpy(at + 8, &one, 4);
    read_error(copy, size, msg, sizeof msg);
    TU_CHECK(
        strstr(msg,
               "field 's', array buffer 1 (offsets): offset 1 at row 2 is below the one before"),
        "%s", msg[0] ? msg : "a decreasing offset was read");
  }
  /* The validity bitmap with a null more than null_count says. */
  memcpy(copy, xchg_buf_data(stream), size);
  at = at ? copy + (at - copy) : NULL;
  uint8_t *bits = at ? find_bytes(copy, (size_t)(at - copy), "\x07\0\0\0\0\0\0\0", 8) : NULL;
  TU_CHECK(bits != NULL, "the validity bitmap is not in the stream");
  if (bits != NULL) {
    bits[0] = 0x03;
    read_error(copy, size, msg, sizeof msg);
    TU_CHECK(
        strstr(
            msg,
            "field 's', array buffer 0 (validity): null_count is 1 but the validity bitmap has 2 nulls"),
        "%s", msg[0] ? msg : "a wrong bitmap was read");
  }
  /* The data buffer's range in the message, past the body: where the
   * bytes are, message buffer 2. */
  memcpy(copy, xchg_buf_data(stream), size);
  uint8_t *text = find_bytes(copy, size, "abcdefghi", 9);
  int64_t data_offset = -1;
  for (uint8_t *p = copy; text && p + 16 <= copy + size; p += 8) {
    int64_t offset, length;
    memcpy(&offset, p, 8);
    memcpy(&length, p + 8, 8);
    if (length == 9 && offset > 0 && offset < 4096) {
      data_offset = offset;
      int64_t past = 1 << 20;
      memcpy(p, &past, 8);
      break;
    }
  }
  TU_CHECK(data_offset > 0, "the data buffer's entry is not in the message");
  if (data_offset > 0) {
    read_error(copy, size, msg, sizeof msg);
    TU_CHECK(strstr(msg, "field 's', message buffer 2: range [1048576, +9) lies outside the"), "%s",
             msg[0] ? msg : "a buffer past the body was read");
  }
  free(copy);
  xchg_buf_unref(stream);
  check_dictionary_buffer_role();
}

static char gold_root[4096];

static void column_position(void) { check_column_position(gold_root); }
static void footer_cuts(void) { check_footer_cuts(gold_root); }
static void stream_cuts(void) { check_stream_cuts(gold_root); }

int main(int argc, char **argv) {
  cli = tu_cli_path();
  unsetenv("XCHG_THREADS");
  tu_testdata_path(gold_root, sizeof gold_root, "arrow-gold");
  snprintf(gold_file, sizeof gold_file, "%s/1.0.0-littleendian/generated_primitive.arrow_file",
           gold_root);
  snprintf(gold_stream, sizeof gold_stream, "%s/1.0.0-littleendian/generated_primitive.stream",
           gold_root);
  if (mkdtemp(dir) == NULL) {
    perror("test_error_words: mkdtemp");
    return 1;
  }
  static const tu_case cases[] = {
      {"files", check_files},
      {"footer_cuts", footer_cuts},
      {"magic_cut", check_magic_cut},
      {"eos_cut_allowed", check_eos_cut_allowed},
      {"stream_cuts", stream_cuts},
      {"payload_cuts", check_payload_cuts},
      {"codec_cuts", check_codec_cuts},
      {"lz4_words", check_lz4_words},
      {"other_formats", check_other_formats},
      {"rows_of_ipc", check_rows_of_ipc},
      {"stated_codec_none", check_stated_codec_none},
      {"stated_codec_other", check_stated_codec_other},
      {"skippable_only", check_skippable_only},
      {"codec_of_nothing", check_codec_of_nothing},
      {"block_columns", check_block_columns},
      {"comet_cuts", check_comet_cuts},
      {"shuffle_cuts", check_shuffle_cuts},
      {"column_position", column_position},
      {"threads_env", check_threads_env},
      {"count_options", check_count_options},
      {"levels", check_levels},
      {"buffer_numbering", check_buffer_numbering},
  };
  int rc = TU_MAIN(argc, argv, "error_words", cases);
  tu_run("rm -rf '%s'", dir);
  return rc;
}
