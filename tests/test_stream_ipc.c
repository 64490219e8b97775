/* test_stream_ipc.c — the IPC reader reading codec-wrapped Arrow IPC in one
 * pass: gold .stream files are wrapped in every stream codec (and split
 * over two concatenated codec streams), read through xchg_source_from_istream
 * and compared with the gold JSON, batch by batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/encoded.h"
#include "support/arrow_json.h"
#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/ipc.h"
#include "xchg/stream.h"
#include "xchg/testing.h"

/* codec's stream of p[0..n): for Comet, a block of 1 field, its IPC
 * stream in an LZ4 frame. */
static void append_encoded(tu_bytes *out, xchg_stream_codec codec, const uint8_t *p, size_t n) {
  if (codec == XCHG_STREAM_COMET)
    tu_append_comet_block(out, p, n, XCHG_STREAM_LZ4_FRAME, 1);
  else
    tu_append_encoded(out, codec, NULL, p, n);
}

/* Reads every batch from an open reader and compares it with the JSON. */
static void read_and_compare(const char *name, const char *how, xchg_ipc_reader *reader,
                             const arrow_json *doc) {
  xchg_error err = {{0}};
  xchg_status st;
  struct ArrowSchema schema;
  st = xchg_ipc_reader_schema(reader, &schema, &err);
  TU_CHECK(st == XCHG_OK, "%s %s: schema: %s", name, how, err.message);
  if (st != XCHG_OK) return;
  char msg[1024];
  TU_CHECK(arrow_json_compare_schema(doc, &schema, msg, sizeof msg) == 0, "%s %s: schema: %s", name,
           how, msg);
  int64_t i = 0;
  for (;; i++) {
    struct ArrowArray batch;
    st = xchg_ipc_reader_next(reader, &batch, &err);
    TU_CHECK(st == XCHG_OK, "%s %s: batch %lld: %s", name, how, (long long)i, err.message);
    if (st != XCHG_OK || batch.release == NULL) break;
    TU_CHECK(arrow_json_compare_batch(doc, i, &schema, &batch, msg, sizeof msg) == 0,
             "%s %s: batch %lld: %s", name, how, (long long)i, msg);
    batch.release(&batch);
  }
  TU_CHECK(i == arrow_json_num_batches(doc), "%s %s: %lld batches, the JSON has %lld", name, how,
           (long long)i, (long long)arrow_json_num_batches(doc));
  schema.release(&schema);
}

/* Reads a wrapped stream in one pass and compares it with the JSON. */
static void read_wrapped(const char *name, const char *how, tu_bytes wrapped,
                         const arrow_json *doc) {
  xchg_istream *s = NULL;
  xchg_ipc_reader *reader = NULL;
  xchg_error err = {{0}};
  xchg_status st = xchg_istream_open(tu_memory_source(wrapped.data, wrapped.size), XCHG_STREAM_AUTO,
                                     NULL, &s, &err);
  xchg_source *src;
  if (st == XCHG_OK) st = xchg_source_from_istream(s, &src, &err);
  if (st == XCHG_OK) st = xchg_ipc_reader_open(src, NULL, &reader, &err);
  TU_CHECK(st == XCHG_OK, "%s %s: open: %s", name, how, err.message);
  if (st != XCHG_OK) return;
  read_and_compare(name, how, reader, doc);
  xchg_ipc_reader_free(reader);
}

/* A shuffle partition as Comet writes it: blocks one after another, each
 * an IPC stream of its own (here: different gold files, inner codecs). */
static void test_comet_members(void) {
  static const char *const names[] = {"generated_primitive", "generated_dictionary",
                                      "generated_nested"};
  static const xchg_stream_codec inner[] = {XCHG_STREAM_ZSTD, XCHG_STREAM_SNAPPY_FRAMED,
                                            XCHG_STREAM_NONE};
  arrow_json *docs[3] = {NULL, NULL, NULL};
  tu_bytes blocks = {0};
  char path[4096], msg[1024];
  for (int i = 0; i < 3; i++) {
    tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s.stream", names[i]);
    tu_bytes ipc = tu_read_bytes(path);
    tu_append_comet_block(&blocks, ipc.data, ipc.size, inner[i], 1000 + i);
    free(ipc.data);
    tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s.json.gz", names[i]);
    TU_CHECK(arrow_json_load(path, &docs[i], msg, sizeof msg) == 0, "%s: %s", path, msg);
  }
  xchg_istream_options o;
  xchg_istream_options_init(&o);
  o.split_members = 1;
  xchg_istream *s = NULL;
  xchg_error err = {{0}};
  xchg_status st =
      xchg_istream_open(tu_memory_source(blocks.data, blocks.size), XCHG_STREAM_AUTO, &o, &s, &err);
  TU_CHECK(st == XCHG_OK && xchg_istream_codec(s) == XCHG_STREAM_COMET, "open comet: %s",
           err.message);
  int members = 0, more = 1;
  while (st == XCHG_OK && more && members < 5) {
    xchg_ipc_reader *reader = NULL;
    xchg_source *src;
    st = xchg_source_from_istream_borrowed(s, &src, &err);
    if (st == XCHG_OK) st = xchg_ipc_reader_open(src, NULL, &reader, &err);
    TU_CHECK(st == XCHG_OK, "comet block %d: open: %s", members, err.message);
    if (st != XCHG_OK || members >= 3 || docs[members] == NULL) break;
    read_and_compare(names[members], "comet block", reader, docs[members]);
    xchg_ipc_reader_free(reader);
    TU_CHECK(xchg_istream_comet_field_count(s) == 1000 + members, "block %d field count %lld",
             members, (long long)xchg_istream_comet_field_count(s));
    members++;
    st = xchg_istream_next_member(s, &more, &err);
    TU_CHECK(st == XCHG_OK, "next member: %s", err.message);
  }
  TU_CHECK(members == 3 && !more, "%d comet blocks read", members);
  xchg_istream_free(s);
  for (int i = 0; i < 3; i++) arrow_json_free(docs[i]);
  free(blocks.data);
}

/* Gold streams in every codec, whole and cut in two codec streams. */
static void wrapped_gold_streams(void) {
  static const char *const names[] = {"generated_primitive", "generated_nested",
                                      "generated_dictionary", "generated_decimal"};
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_JAVA,      XCHG_STREAM_SNAPPY_JAVA,
                                             XCHG_STREAM_ZSTD,          XCHG_STREAM_LZ4_FRAME,
                                             XCHG_STREAM_SNAPPY_FRAMED, XCHG_STREAM_COMET};
  for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
    char path[4096], msg[1024];
    tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s.stream", names[n]);
    tu_bytes ipc = tu_read_bytes(path);
    TU_CHECK(ipc.size > 0, "cannot read %s", path);
    tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s.json.gz", names[n]);
    arrow_json *doc = NULL;
    if (arrow_json_load(path, &doc, msg, sizeof msg) != 0) {
      TU_CHECK(0, "%s: %s", path, msg);
      free(ipc.data);
      continue;
    }
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
      tu_bytes one = {0}, split = {0};
      append_encoded(&one, codecs[c], ipc.data, ipc.size);
      read_wrapped(names[n], xchg_stream_codec_name(codecs[c]), one, doc);
      /* The IPC stream cut at an odd offset into two codec streams. */
      if (codecs[c] != XCHG_STREAM_COMET) {
        size_t half = ipc.size / 2 + 3;
        append_encoded(&split, codecs[c], ipc.data, half);
        append_encoded(&split, codecs[c], ipc.data + half, ipc.size - half);
        char how[64];
        snprintf(how, sizeof how, "%s, two streams", xchg_stream_codec_name(codecs[c]));
        read_wrapped(names[n], how, split, doc);
      }
      free(one.data);
      free(split.data);
    }
    arrow_json_free(doc);
    free(ipc.data);
  }
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"wrapped_gold_streams", wrapped_gold_streams},
      {"comet_members", test_comet_members},
  };
  return TU_MAIN(argc, argv, "stream_ipc", cases);
}
