/* tests/test_codec_rules.c — the validation rules of the codecs that no
 * other test trips on its own: each case takes a valid encoding (made by
 * liblz4 or libzstd directly for block codecs, by xchg_stream_encode for
 * stream codecs), changes one value or the declared size, and checks the
 * error code and the phrase of the message that names the rule.
 *
 * Rule                                              -> case
 * LZ4 / zstd block: exactly the declared bytes      -> block_sizes
 * LZ4 block: the frame complete                     -> block_sizes
 * NONE block: a copy, of exactly the declared bytes  -> block_none
 * lz4-java: the "LZ4Block" magic                    -> lz4java_header
 * lz4-java: lengths within the level's block size   -> lz4java_header
 * lz4-java: LZ4 data decodes to the stated length   -> lz4java_header
 * snappy-java: the stream header's magic, version;
 *   a chunk length of 0, a chunk past the block cap;
 *   snappy data that decode (to their stated length) -> snappyjava_header
 * snappy framed: the stream identifier first and
 *   intact; a chunk long enough for its checksum; a
 *   stored chunk of at most 65536 bytes              -> snappyframed_chunks
 * Comet: a block length of at least 12               -> comet_header
 * The rest (checksums, truncation, trailers, caps, other header fields) is
 * tripped by tests/test_stream_codecs.c, test_codec_trailer.c and
 * test_limits.c; tests/mutants/validation.py (group "codecs") checks that
 * removing any one rule fails one of these tests.
 *
 * Prints "N passed, M failed"; exits 1 on any failure. */
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/testing.h"
#include "xchg/xchg.h"

#define PAYLOAD_SIZE 5000

/* Compressible bytes: LZ4 and snappy store them compressed. */
static const uint8_t *payload(void) {
  static uint8_t p[PAYLOAD_SIZE];
  for (size_t i = 0; i < sizeof p; i++) p[i] = (uint8_t)("columnar"[i % 8] + (i / 512) % 3);
  return p;
}

static void check_status(const char *what, xchg_status st, const xchg_error *err, xchg_status want,
                         const char *says) {
  TU_CHECK(st == want, "%s: %s (\"%s\"), expected %s", what, xchg_status_name(st),
           st == XCHG_OK ? "" : err->message, xchg_status_name(want));
  if (st == want && st != XCHG_OK)
    TU_CHECK(strstr(err->message, says) != NULL, "%s: \"%s\" does not say \"%s\"", what,
             err->message, says);
}

/* ---- block codecs ------------------------------------------------------------------ */

static void block_case(const char *what, xchg_block_codec codec, const void *frame, size_t size,
                       size_t dst_size, const char *says) {
  uint8_t *dst = malloc(dst_size);
  xchg_error err;
  xchg_status st = xchg_block_decompress(codec, frame, size, dst, dst_size, &err);
  check_status(what, st, &err, XCHG_EFORMAT, says);
  TU_CHECK(st != XCHG_OK, "%s: decoded", what);
  free(dst);
}

static void block_sizes(void) {
  size_t n = PAYLOAD_SIZE;
  size_t lz4_cap = LZ4F_compressFrameBound(n, NULL), zstd_cap = ZSTD_compressBound(n);
  uint8_t *lz4 = malloc(lz4_cap), *zstd = malloc(zstd_cap);
  size_t lz4_n = LZ4F_compressFrame(lz4, lz4_cap, payload(), n, NULL);
  size_t zstd_n = ZSTD_compress(zstd, zstd_cap, payload(), n, 3);
  TU_CHECK(!LZ4F_isError(lz4_n) && !ZSTD_isError(zstd_n), "cannot compress the payload");
  uint8_t *whole = malloc(n);
  xchg_error err;
  check_status("LZ4 frame as made",
               xchg_block_decompress(XCHG_BLOCK_LZ4_FRAME, lz4, lz4_n, whole, n, &err), &err,
               XCHG_OK, NULL);
  TU_CHECK(memcmp(whole, payload(), n) == 0, "LZ4 frame decodes to other bytes");
  block_case("LZ4 frame, one byte more declared", XCHG_BLOCK_LZ4_FRAME, lz4, lz4_n, n + 1,
             "decompressed to 5000 bytes, declared 5001");
  block_case("LZ4 frame, one byte less declared", XCHG_BLOCK_LZ4_FRAME, lz4, lz4_n, n - 1,
             "more than the declared 4999 bytes");
  block_case("LZ4 frame without its end mark", XCHG_BLOCK_LZ4_FRAME, lz4, lz4_n - 4, n,
             "truncated");
  block_case("zstd frame, one byte more declared", XCHG_BLOCK_ZSTD, zstd, zstd_n, n + 1,
             "decompressed to 5000 bytes, declared 5001");
  free(whole);
  free(lz4);
  free(zstd);
}

/* XCHG_BLOCK_NONE is a codec of the block API like the others (its level 0
 * is in xchg_block_codec_levels): compressing copies, decompressing copies
 * exactly the declared bytes. */
static void block_none(void) {
  size_t n = PAYLOAD_SIZE;
  int min = 1, max = 1;
  xchg_block_codec_levels(XCHG_BLOCK_NONE, &min, &max);
  TU_CHECK(min == 0 && max == 0, "none levels %d to %d", min, max);
  xchg_buf *packed = NULL;
  xchg_error err;
  if (!TU_OK(xchg_block_compress(XCHG_BLOCK_NONE, 0, payload(), n, &packed, &err), err)) return;
  TU_CHECK(xchg_buf_size(packed) == n && memcmp(xchg_buf_data(packed), payload(), n) == 0,
           "compressed with none: %zu bytes, not the payload", xchg_buf_size(packed));
  uint8_t *whole = malloc(n);
  check_status("none as made", xchg_block_decompress(XCHG_BLOCK_NONE, payload(), n, whole, n, &err),
               &err, XCHG_OK, NULL);
  TU_CHECK(memcmp(whole, payload(), n) == 0, "none decodes to other bytes");
  block_case("none, one byte more declared", XCHG_BLOCK_NONE, payload(), n, n + 1,
             "uncompressed data of 5000 bytes, declared 5001");
  block_case("none, one byte less declared", XCHG_BLOCK_NONE, payload(), n, n - 1,
             "uncompressed data of 5000 bytes, declared 4999");
  free(whole);
  xchg_buf_unref(packed);
}

/* ---- stream codecs ------------------------------------------------------------------- */

static tu_bytes encoded_bytes(xchg_stream_codec codec, const uint8_t *data, size_t size) {
  xchg_buf *b = NULL;
  xchg_error err;
  tu_bytes out = {0};
  if (xchg_stream_encode(codec, NULL, data, size, &b, &err) != XCHG_OK) {
    TU_CHECK(0, "encode %s: %s", xchg_stream_codec_name(codec), err.message);
    return out;
  }
  tu_bytes_append(&out, xchg_buf_data(b), xchg_buf_size(b));
  xchg_buf_unref(b);
  return out;
}

static tu_bytes encoded(xchg_stream_codec codec) {
  return encoded_bytes(codec, payload(), PAYLOAD_SIZE);
}

/* Decodes the whole stream, with blocks of at most max_block bytes (0:
 * the default); the first error. */
static xchg_status decode_capped(xchg_stream_codec codec, const tu_bytes *data, size_t max_block,
                                 xchg_error *err) {
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  if (max_block) opts.max_block_size = max_block;
  xchg_istream *s = NULL;
  xchg_status st =
      xchg_istream_open(tu_memory_source(data->data, data->size), codec, &opts, &s, err);
  for (size_t n = 1; st == XCHG_OK && n > 0;) {
    const void *p;
    st = xchg_istream_next(s, &p, &n, err);
  }
  xchg_istream_free(s);
  return st;
}

static xchg_status decode(xchg_stream_codec codec, const tu_bytes *data, xchg_error *err) {
  return decode_capped(codec, data, 0, err);
}

/* The stream with the n bytes at `at` set to `bytes` (one value of the
 * format) must fail as `want` says. */
static void stream_case(const char *what, xchg_stream_codec codec, const tu_bytes *valid, size_t at,
                        const void *bytes, size_t n, xchg_status want, const char *says) {
  tu_bytes copy = {0};
  tu_bytes_append(&copy, valid->data, valid->size);
  TU_CHECK(memcmp(copy.data + at, bytes, n) != 0, "%s: the bytes at %zu are so already", what, at);
  memcpy(copy.data + at, bytes, n);
  xchg_error err;
  check_status(what, decode(codec, &copy, &err), &err, want, says);
  free(copy.data);
}

static void lz4java_header(void) {
  tu_bytes s = encoded(XCHG_STREAM_LZ4_JAVA);
  if (!s.data) return;
  xchg_error err;
  check_status("lz4-java as made", decode(XCHG_STREAM_LZ4_JAVA, &s, &err), &err, XCHG_OK, NULL);
  /* The first block's header: magic, method | level, compressed length,
   * decompressed length, checksum. */
  TU_CHECK((s.data[8] & 0xF0) == 0x20, "lz4-java: the first block is not LZ4-compressed");
  uint8_t longer = (uint8_t)(s.data[13] + 1);
  stream_case("lz4-java, magic damaged", XCHG_STREAM_LZ4_JAVA, &s, 1, "X", 1, XCHG_EFORMAT,
              "magic");
  stream_case("lz4-java, level nibble 0 (1 KiB blocks)", XCHG_STREAM_LZ4_JAVA, &s, 8, "\x20", 1,
              XCHG_EFORMAT, "exceed the block size 1024");
  stream_case("lz4-java, one byte more stated", XCHG_STREAM_LZ4_JAVA, &s, 13, &longer, 1,
              XCHG_EFORMAT, "corrupt LZ4 data");
  free(s.data);
}

static void snappyjava_header(void) {
  tu_bytes s = encoded(XCHG_STREAM_SNAPPY_JAVA);
  if (!s.data) return;
  xchg_error err;
  check_status("snappy-java as made", decode(XCHG_STREAM_SNAPPY_JAVA, &s, &err), &err, XCHG_OK,
               NULL);
  /* The header: 8 bytes of magic, version and compatible version
   * (big-endian); then each chunk's length (big-endian) and data. */
  stream_case("snappy-java, magic damaged", XCHG_STREAM_SNAPPY_JAVA, &s, 1, "X", 1, XCHG_EFORMAT,
              "no stream header");
  stream_case("snappy-java, compatible version 2", XCHG_STREAM_SNAPPY_JAVA, &s, 15, "\x02", 1,
              XCHG_ENOTSUP, "needs format version 2");
  stream_case("snappy-java, chunk length 0", XCHG_STREAM_SNAPPY_JAVA, &s, 16, "\0\0\0\0", 4,
              XCHG_EFORMAT, "bad length 0");
  /* A raw snappy block opens with its uncompressed length as a varint:
   * 5000 is 0x88 0x27.  Stating 5128 leaves the data short of it. */
  TU_CHECK(s.size > 22 && s.data[20] == 0x88 && s.data[21] == 0x27,
           "snappy-java: the first block does not state 5000 bytes");
  stream_case("snappy-java, 128 bytes more stated", XCHG_STREAM_SNAPPY_JAVA, &s, 21, "\x28", 1,
              XCHG_EFORMAT, "corrupt snappy data");
  /* A chunk longer than any 16-byte block compresses to is refused
   * before it is read. */
  check_status("snappy-java, 16-byte blocks", decode_capped(XCHG_STREAM_SNAPPY_JAVA, &s, 16, &err),
               &err, XCHG_ELIMIT, "compressed bytes exceed what a 16-byte block can take");
  free(s.data);
}

static void snappyframed_chunks(void) {
  tu_bytes s = encoded(XCHG_STREAM_SNAPPY_FRAMED);
  if (!s.data) return;
  xchg_error err;
  check_status("snappy framed as made", decode(XCHG_STREAM_SNAPPY_FRAMED, &s, &err), &err, XCHG_OK,
               NULL);
  /* The stream identifier chunk (type 0xff, length 6, "sNaPpY"), then the
   * data chunks: type, 3-byte length (checksum included), checksum, data. */
  stream_case("snappy framed, identifier made padding", XCHG_STREAM_SNAPPY_FRAMED, &s, 0, "\xfe", 1,
              XCHG_EFORMAT, "does not start with a stream identifier");
  stream_case("snappy framed, identifier damaged", XCHG_STREAM_SNAPPY_FRAMED, &s, 4, "X", 1,
              XCHG_EFORMAT, "bad stream identifier");
  stream_case("snappy framed, chunk of 3 bytes", XCHG_STREAM_SNAPPY_FRAMED, &s, 11, "\x03\0\0", 3,
              XCHG_EFORMAT, "too short for a checksum");
  free(s.data);
  /* Noise is stored as it is, in chunks of 65536 bytes. */
  size_t n = 3 * 65536;
  uint8_t *noise = malloc(n);
  uint64_t rng = 12;
  for (size_t i = 0; i < n; i++) noise[i] = (uint8_t)tu_splitmix64(&rng);
  s = encoded_bytes(XCHG_STREAM_SNAPPY_FRAMED, noise, n);
  free(noise);
  if (!s.data) return;
  TU_CHECK(s.data[10] == 0x01 && s.data[11] == 0x04,
           "snappy framed: the first chunk is not a stored 65536");
  stream_case("snappy framed, stored chunk of 65537", XCHG_STREAM_SNAPPY_FRAMED, &s, 11, "\x05", 1,
              XCHG_EFORMAT, "stored bytes exceed 65536");
  free(s.data);
}

static void comet_header(void) {
  tu_bytes s = encoded(XCHG_STREAM_COMET);
  if (!s.data) return;
  xchg_error err;
  check_status("comet as made", decode(XCHG_STREAM_COMET, &s, &err), &err, XCHG_OK, NULL);
  /* The block header: an 8-byte length of what follows it (field count
   * and codec tag included, so at least 12), the field count, the tag. */
  stream_case("comet, block length 11", XCHG_STREAM_COMET, &s, 0, "\x0b\0\0\0\0\0\0\0", 8,
              XCHG_EFORMAT, "bad length 11");
  free(s.data);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {
      {"block_sizes", block_sizes},
      {"block_none", block_none},
      {"lz4java_header", lz4java_header},
      {"snappyjava_header", snappyjava_header},
      {"snappyframed_chunks", snappyframed_chunks},
      {"comet_header", comet_header},
  };
  return TU_MAIN(argc, argv, "codec_rules", cases);
}
