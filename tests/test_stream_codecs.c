/* test_stream_codecs.c — every stream codec, decoded from every kind of
 * source, against payloads that exist independently of xchg (an Arrow gold
 * file, bytes from a seeded generator), with the hashes checked against
 * their published test vectors and liblz4's own XXH32. */
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "xchg/stream.h"
#include "xchg/testing.h"
#include "support/encoded.h"
#include "support/sources.h"
#include "support/testutil.h"

/* Private functions under test: the hashes. */
uint32_t xchg_xxh32(const void *data, size_t n, uint32_t seed);
uint32_t xchg_crc32c(const void *data, size_t n);
const char *xchg_crc32c_select(int portable);

/* Mixed-compressibility bytes from a fixed seed: runs, text, noise. */
static tu_bytes make_payload(size_t n, uint32_t seed) {
  tu_bytes b = {malloc(n ? n : 1), n};
  uint32_t x = seed;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    size_t region = (i / 5000) % 3;
    b.data[i] = region == 0 ? (uint8_t)('a' + i % 26) : region == 1 ? (uint8_t)(x >> 24) : 7;
  }
  return b;
}

static tu_bytes encode(xchg_stream_codec codec, const xchg_stream_encode_options *o,
                       tu_bytes payload) {
  tu_bytes out = {0};
  TU_CHECK(tu_append_encoded(&out, codec, o, payload.data, payload.size), "encode %s",
           xchg_stream_codec_name(codec));
  return out;
}

/* A callback source that returns at most `step` bytes per call, so that
 * the stream's buffered path is exercised with awkward boundaries. */
typedef struct dribble {
  tu_bytes b;
  size_t pos, step;
  int fails; /* its bytes end in an error ("link down"), not in the end */
} dribble;

static xchg_status dribble_read(void *ctx, void *dst, size_t n, size_t *got, xchg_error *err) {
  dribble *d = ctx;
  size_t k = d->b.size - d->pos;
  if (k == 0 && d->fails) return xchg_errorf(err, XCHG_EIO, "link down");
  if (k > n) k = n;
  if (k > d->step) k = d->step;
  memcpy(dst, d->b.data + d->pos, k);
  d->pos += k;
  *got = k;
  return XCHG_OK;
}

static void dribble_close(void *ctx) { free(ctx); }

/* SRC_FAILING, a dribble that fails after its bytes, is not among the
 * SRC_KINDS every round trip is read from. */
enum source_kind { SRC_MEMORY, SRC_DRIBBLE, SRC_CHUNKS, SRC_KINDS, SRC_FAILING = SRC_KINDS };
static const char *const source_names[] = {"memory", "dribble", "chunks"};

static xchg_chunk chunk_list[64];

static xchg_source *make_source(enum source_kind kind, tu_bytes input) {
  if (kind == SRC_MEMORY) return tu_memory_source(input.data, input.size);
  xchg_source *src;
  xchg_error err;
  if (kind == SRC_DRIBBLE || kind == SRC_FAILING) {
    dribble *d = calloc(1, sizeof *d);
    d->b = input;
    d->step = 333;
    d->fails = kind == SRC_FAILING;
    TU_OK(xchg_source_from_callback(dribble_read, dribble_close, d, &src, &err), err);
    return src;
  }
  /* Uneven chunks, some empty. */
  size_t off = 0, count = 0;
  while (off < input.size && count < 63) {
    size_t len = (count * 7919 + 17) % 4099;
    if (len > input.size - off || count == 62) len = input.size - off;
    chunk_list[count].data = input.data + off;
    chunk_list[count].size = len;
    off += len;
    count++;
  }
  TU_OK(xchg_source_from_chunks(chunk_list, count, NULL, NULL, &src, &err), err);
  return src;
}

/* Decodes input entirely with reads of varied sizes; returns the status and
 * the output. */
static xchg_status decode_all(xchg_stream_codec codec, enum source_kind kind, tu_bytes input,
                              size_t window, tu_bytes *out, xchg_error *err) {
  xchg_istream_options o;
  xchg_istream_options_init(&o);
  o.window_size = window;
  o.read_size = 1000;
  xchg_istream *s = NULL;
  out->data = NULL;
  out->size = 0;
  xchg_status st = xchg_istream_open(make_source(kind, input), codec, &o, &s, err);
  if (st != XCHG_OK) return st;
  static const size_t sizes[] = {1, 7, 100, 4096, 65537, 3, 0, 12345};
  uint8_t *tmp = malloc(70000);
  for (size_t i = 0;; i++) {
    size_t n = sizes[i % (sizeof sizes / sizeof sizes[0])], got = 0;
    st = xchg_istream_read(s, tmp, n, &got, err);
    tu_bytes_append(out, tmp, got);
    if (st != XCHG_OK || (got < n)) break;
  }
  free(tmp);
  xchg_istream_free(s);
  return st;
}

/* decode_all with xchg_istream_next_into, cap bytes at a time, straight
 * into one buffer of `most` bytes (more is a failure); *largest is the most
 * one call gave. */
static xchg_status decode_into(xchg_stream_codec codec, enum source_kind kind, tu_bytes input,
                               size_t window, size_t cap, size_t most, tu_bytes *out,
                               size_t *largest, xchg_error *err) {
  xchg_istream_options o;
  xchg_istream_options_init(&o);
  o.window_size = window;
  o.read_size = 1000;
  xchg_istream *s = NULL;
  *out = (tu_bytes){malloc(most + 1), 0};
  *largest = 0;
  xchg_status st = xchg_istream_open(make_source(kind, input), codec, &o, &s, err);
  if (st != XCHG_OK) return st;
  for (;;) {
    size_t n = 0, room = most + 1 - out->size;
    st = xchg_istream_next_into(s, out->data + out->size, room < cap ? room : cap, &n, err);
    out->size += n;
    if (n > *largest) *largest = n;
    if (st != XCHG_OK || n == 0 || out->size > most) break;
  }
  xchg_istream_free(s);
  return st;
}

static int same(tu_bytes a, tu_bytes b) {
  return a.size == b.size && (a.size == 0 || memcmp(a.data, b.data, a.size) == 0);
}

static void test_hashes(void) {
  /* Published XXH32 vectors, and liblz4's XXH32 via a frame's content
   * checksum. */
  TU_CHECK(xchg_xxh32("", 0, 0) == 0x02CC5D05u, "xxh32('') = %08x", xchg_xxh32("", 0, 0));
  TU_CHECK(xchg_xxh32("abc", 3, 0) == 0x32D153FFu, "xxh32('abc') = %08x", xchg_xxh32("abc", 3, 0));
  tu_bytes p = make_payload(100003, 9);
  for (size_t n = 0; n < 100003; n = n * 3 + 1) {
    LZ4F_preferences_t prefs = {0};
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    size_t cap = LZ4F_compressFrameBound(n, &prefs);
    uint8_t *f = malloc(cap);
    size_t fn = LZ4F_compressFrame(f, cap, p.data, n, &prefs);
    uint32_t lz4_says = (uint32_t)f[fn - 4] | (uint32_t)f[fn - 3] << 8 | (uint32_t)f[fn - 2] << 16 |
                        (uint32_t)f[fn - 1] << 24;
    TU_CHECK(xchg_xxh32(p.data, n, 0) == lz4_says, "xxh32 of %zu bytes differs from liblz4's", n);
    free(f);
  }
  free(p.data);
}

/* CRC-32C a bit at a time, straight from its definition: the reference the
 * two fast ways are held to. */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
  }
  return ~c;
}

/* One way of computing CRC-32C: the published vectors (RFC 3720 B.4, and
 * the "123456789" check value), then every length up to past the
 * three-stream steps, at every alignment, against the bitwise reference. */
static void check_crc32c_way(const char *way) {
  uint8_t v[32];
  memset(v, 0, sizeof v);
  TU_CHECK(xchg_crc32c(v, 32) == 0x8A9136AAu, "%s: crc32c(32 zeros) = %08x", way,
           xchg_crc32c(v, 32));
  memset(v, 0xFF, sizeof v);
  TU_CHECK(xchg_crc32c(v, 32) == 0x62A8AB43u, "%s: crc32c(32 x ff) = %08x", way,
           xchg_crc32c(v, 32));
  for (int i = 0; i < 32; i++) v[i] = (uint8_t)i;
  TU_CHECK(xchg_crc32c(v, 32) == 0x46DD794Eu, "%s: crc32c(0..31) = %08x", way, xchg_crc32c(v, 32));
  for (int i = 0; i < 32; i++) v[i] = (uint8_t)(31 - i);
  TU_CHECK(xchg_crc32c(v, 32) == 0x113FDB5Cu, "%s: crc32c(31..0) = %08x", way, xchg_crc32c(v, 32));
  TU_CHECK(xchg_crc32c("123456789", 9) == 0xE3069283u, "%s: crc32c('123456789') = %08x", way,
           xchg_crc32c("123456789", 9));
  TU_CHECK(xchg_crc32c("", 0) == 0, "%s: crc32c('') = %08x", way, xchg_crc32c("", 0));
  tu_bytes p = make_payload(70000, 5);
  int bad = 0;
  for (size_t n = 0; n < 70000 - 8 && bad < 3; n = n < 800 ? n + 1 : n * 5 / 4 + 3)
    for (size_t at = 0; at < 8 && bad < 3; at++) {
      uint32_t want = crc32c_bitwise(p.data + at, n), got = xchg_crc32c(p.data + at, n);
      bad += !TU_CHECK(got == want, "%s: crc32c of %zu bytes at %zu = %08x, expected %08x", way, n,
                       at, got, want);
    }
  free(p.data);
}

static void test_crc32c(void) {
  check_crc32c_way(xchg_crc32c_select(1));
#if defined(__x86_64__)
  /* Every x86-64 host this runs on has SSE4.2: the instruction way must be
   * the one picked, or it would go untested. */
  TU_CHECK(strcmp(xchg_crc32c_select(0), "sse4.2") == 0, "crc32c: picked %s, not sse4.2",
           xchg_crc32c_select(0));
#endif
  check_crc32c_way(xchg_crc32c_select(0));
}

static const xchg_stream_codec all_codecs[] = {
    XCHG_STREAM_NONE,        XCHG_STREAM_LZ4_FRAME,     XCHG_STREAM_ZSTD, XCHG_STREAM_LZ4_JAVA,
    XCHG_STREAM_SNAPPY_JAVA, XCHG_STREAM_SNAPPY_FRAMED, XCHG_STREAM_COMET};
#define NCODECS (sizeof all_codecs / sizeof all_codecs[0])

/* The codecs a Comet block may hold. */
static const xchg_stream_codec comet_inner[] = {XCHG_STREAM_NONE, XCHG_STREAM_LZ4_FRAME,
                                                XCHG_STREAM_ZSTD, XCHG_STREAM_SNAPPY_FRAMED};

/* The cases of the tests that run every codec, Comet once per inner
 * codec: for (codec_case cc = {0}; next_codec_case(&cc);) ... */
typedef struct codec_case {
  xchg_stream_codec codec;
  int inner;                     /* Comet's inner codec, comet_inner[inner]; 0 for the others */
  xchg_stream_encode_options eo; /* the defaults, with that inner codec */
  size_t done;                   /* cases stepped through */
} codec_case;

/* Steps to the next case; false after the last. */
static bool next_codec_case(codec_case *cc) {
  size_t k = cc->done++;
  for (size_t c = 0; c < NCODECS; c++) {
    size_t inners = all_codecs[c] == XCHG_STREAM_COMET ? 4 : 1;
    if (k < inners) {
      cc->codec = all_codecs[c];
      cc->inner = (int)k;
      xchg_stream_encode_options_init(&cc->eo);
      cc->eo.comet_inner = comet_inner[k];
      return true;
    }
    k -= inners;
  }
  return false;
}

static void test_round_trips(tu_bytes payload, const char *what) {
  static const size_t windows[] = {1, 1000, 65536};
  for (codec_case cc = {0}; next_codec_case(&cc);) {
    xchg_stream_codec codec = cc.codec;
    int inner = cc.inner;
    tu_bytes enc = encode(codec, &cc.eo, payload);
    /* Two streams back to back decode as the payload twice. */
    tu_bytes twice = {0}, expect2 = {0};
    tu_bytes_append(&twice, enc.data, enc.size);
    tu_bytes_append(&twice, enc.data, enc.size);
    tu_bytes_append(&expect2, payload.data, payload.size);
    tu_bytes_append(&expect2, payload.data, payload.size);
    if (codec != XCHG_STREAM_NONE) {
      xchg_stream_codec seen = xchg_stream_codec_detect(enc.data, enc.size < 20 ? enc.size : 20);
      TU_CHECK(seen == codec, "%s: detected as %s", xchg_stream_codec_name(codec),
               xchg_stream_codec_name(seen));
    }
    for (int k = 0; k < SRC_KINDS; k++) {
      for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        if (windows[w] == 1 && payload.size > 200000) continue; /* too slow to matter */
        tu_bytes out;
        xchg_error err = {{0}};
        xchg_status st = decode_all(codec, (enum source_kind)k, enc, windows[w], &out, &err);
        TU_CHECK(st == XCHG_OK && same(out, payload),
                 "%s %s/%d from %s, window %zu: %s (%zu of %zu bytes)", what,
                 xchg_stream_codec_name(codec), inner, source_names[k], windows[w],
                 st == XCHG_OK ? "output differs" : err.message, out.size, payload.size);
        free(out.data);
        st = decode_all(k == SRC_MEMORY ? XCHG_STREAM_AUTO : codec, (enum source_kind)k, twice,
                        windows[w], &out, &err);
        TU_CHECK(st == XCHG_OK && same(out, expect2), "%s %s/%d concatenated from %s: %s", what,
                 xchg_stream_codec_name(codec), inner, source_names[k],
                 st == XCHG_OK ? "output differs" : err.message);
        free(out.data);
      }
    }
    free(enc.data);
    free(twice.data);
    free(expect2.data);
  }
}

/* Skippable frames before, between and after LZ4 and zstd frames. */
static void test_skippable_frames(tu_bytes payload) {
  static const uint8_t skippable[] = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'};
  xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_FRAME, XCHG_STREAM_ZSTD};
  for (int c = 0; c < 2; c++) {
    tu_bytes enc = encode(codecs[c], NULL, payload), in = {0}, expect = {0};
    tu_bytes_append(&in, skippable, sizeof skippable);
    tu_bytes_append(&in, enc.data, enc.size);
    tu_bytes_append(&in, skippable, sizeof skippable);
    tu_bytes_append(&in, enc.data, enc.size);
    tu_bytes_append(&in, skippable, sizeof skippable);
    tu_bytes_append(&expect, payload.data, payload.size);
    tu_bytes_append(&expect, payload.data, payload.size);
    TU_CHECK(xchg_stream_codec_detect(in.data, in.size) == codecs[c],
             "detect past skippable frame");
    tu_bytes out;
    xchg_error err;
    xchg_status st = decode_all(codecs[c], SRC_DRIBBLE, in, 4096, &out, &err);
    TU_CHECK(st == XCHG_OK && same(out, expect), "%s with skippable frames: %s",
             xchg_stream_codec_name(codecs[c]), st == XCHG_OK ? "output differs" : err.message);
    free(out.data);
    free(enc.data);
    free(in.data);
    free(expect.data);
  }
}

/* payload encoded in 1 KiB blocks: many of them, for cuts to fall among. */
static tu_bytes encode_small_blocks(xchg_stream_codec codec, tu_bytes payload) {
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.block_size = 1024;
  return encode(codec, &eo, payload);
}

/* A stream cut at every byte offset: an error, or for formats without an
 * end marker a clean prefix at a chunk boundary; never a crash (ASan). */
static void test_cut_everywhere(void) {
  tu_bytes payload = make_payload(3000, 5);
  for (size_t c = 1; c < NCODECS; c++) {
    xchg_stream_codec codec = all_codecs[c];
    tu_bytes enc = encode_small_blocks(codec, payload);
    int has_end_marker = codec != XCHG_STREAM_SNAPPY_JAVA && codec != XCHG_STREAM_SNAPPY_FRAMED;
    int bad = 0;
    for (size_t cut = 1; cut < enc.size; cut++) {
      tu_bytes part = {malloc(cut), cut}, out;
      memcpy(part.data, enc.data, cut); /* own allocation: ASan sees any overread */
      xchg_error err;
      xchg_status st = decode_all(codec, cut % 2 ? SRC_MEMORY : SRC_DRIBBLE, part, 700, &out, &err);
      int ok_prefix =
          st == XCHG_OK && out.size < payload.size && memcmp(out.data, payload.data, out.size) == 0;
      if (has_end_marker ? st != XCHG_EIO : !(st != XCHG_OK || ok_prefix)) {
        TU_CHECK(bad++ >= 3, "%s cut at byte %zu of %zu: status %s (%s)",
                 xchg_stream_codec_name(codec), cut, enc.size, xchg_status_name(st),
                 st == XCHG_OK ? "no error" : err.message);
      }
      free(part.data);
      free(out.data);
    }
    TU_CHECK(bad == 0, "%s: %d cuts misbehaved", xchg_stream_codec_name(codec), bad);
    free(enc.data);
  }
  free(payload.data);
}

/* A source that fails after some bytes, in the same read as bytes before
 * the error (a short read from the callback, then the error): the stream
 * hands out what those bytes decode to, as much as input ending there
 * gives, then the source's error, never an end. */
static void test_source_fails_after_bytes(void) {
  tu_bytes payload = make_payload(30000, 9);
  for (size_t c = 0; c < NCODECS; c++) {
    xchg_stream_codec codec = all_codecs[c];
    tu_bytes enc = encode_small_blocks(codec, payload);
    for (size_t cut = 1; cut < enc.size; cut += 997) {
      tu_bytes part = {enc.data, cut}, ends, fails;
      xchg_error err;
      (void)decode_all(codec, SRC_MEMORY, part, 700, &ends, &err);
      xchg_status st = decode_all(codec, SRC_FAILING, part, 700, &fails, &err);
      const char *name = xchg_stream_codec_name(codec);
      TU_CHECK(st == XCHG_EIO && strstr(err.message, "link down") != NULL,
               "%s failing at byte %zu: status %s (%s), wanted the source's error", name, cut,
               xchg_status_name(st), st == XCHG_OK ? "no error" : err.message);
      TU_CHECK(
          fails.size == ends.size &&
              (ends.size == 0 || memcmp(fails.data, ends.data, ends.size) == 0),
          "%s failing at byte %zu: %zu bytes out before the error, %zu from input ending there",
          name, cut, fails.size, ends.size);
      free(ends.data);
      free(fails.data);
    }
    free(enc.data);
  }
  free(payload.data);
}

static void expect_error(const char *what, xchg_stream_codec codec, tu_bytes in, xchg_status want,
                         const char *must_contain) {
  tu_bytes out;
  xchg_error err = {{0}};
  xchg_status st = decode_all(codec, SRC_DRIBBLE, in, 65536, &out, &err);
  TU_CHECK(st == want && strstr(err.message, must_contain) != NULL,
           "%s: status %s, message '%s' (wanted %s containing '%s')", what, xchg_status_name(st),
           err.message, xchg_status_name(want), must_contain);
  free(out.data);
}

/* payload encoded with codec, its last byte (in a content checksum)
 * changed: refused as malformed, with a message containing must_contain. */
static void expect_last_byte_refused(const char *what, xchg_stream_codec codec,
                                     const xchg_stream_encode_options *o, tu_bytes payload,
                                     const char *must_contain) {
  tu_bytes enc = encode(codec, o, payload);
  enc.data[enc.size - 1] ^= 0x80;
  expect_error(what, codec, enc, XCHG_EFORMAT, must_contain);
  free(enc.data);
}

static void test_checksums(void) {
  tu_bytes payload = make_payload(100000, 3);
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);

  /* lz4-java: block 1's header checksum changed. */
  tu_bytes enc = encode(XCHG_STREAM_LZ4_JAVA, &eo, payload);
  size_t block1 = 21 + (enc.data[9] | enc.data[10] << 8 | enc.data[11] << 16);
  enc.data[block1 + 17] ^= 1;
  expect_error("lz4-java checksum", XCHG_STREAM_LZ4_JAVA, enc, XCHG_EFORMAT, "block 1 at byte");
  expect_error("lz4-java checksum", XCHG_STREAM_LZ4_JAVA, enc, XCHG_EFORMAT, "checksum mismatch");
  free(enc.data);

  /* LZ4 frame: content checksum, and a block checksum written by liblz4. */
  expect_last_byte_refused("lz4 frame content checksum", XCHG_STREAM_LZ4_FRAME, &eo, payload,
                           "hecksum");
  LZ4F_preferences_t prefs = {0};
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  size_t cap = LZ4F_compressFrameBound(payload.size, &prefs);
  enc.data = malloc(cap);
  enc.size = LZ4F_compressFrame(enc.data, cap, payload.data, payload.size, &prefs);
  enc.data[enc.size - 8] ^= 0x01; /* last block's checksum (before the end mark) */
  expect_error("lz4 frame block checksum", XCHG_STREAM_LZ4_FRAME, enc, XCHG_EFORMAT, "hecksum");
  free(enc.data);

  /* zstd content checksum. */
  expect_last_byte_refused("zstd checksum", XCHG_STREAM_ZSTD, &eo, payload, "checksum");

  /* snappy framing format: chunk 2's CRC (chunk 0 is the identifier). */
  enc = encode(XCHG_STREAM_SNAPPY_FRAMED, &eo, payload);
  size_t chunk1 = 10;
  size_t chunk2 =
      chunk1 + 4 +
      (enc.data[chunk1 + 1] | enc.data[chunk1 + 2] << 8 | (size_t)enc.data[chunk1 + 3] << 16);
  enc.data[chunk2 + 4] ^= 1;
  expect_error("snappy framed crc", XCHG_STREAM_SNAPPY_FRAMED, enc, XCHG_EFORMAT,
               "chunk 2 at byte");
  free(enc.data);
  free(payload.data);
}

/* Empty streams, empty frames, zero-length reads, repeated EOF. */
static void test_empty(void) {
  tu_bytes nothing = {0};
  for (size_t c = 0; c < NCODECS; c++) {
    tu_bytes enc = encode(all_codecs[c], NULL, nothing);
    tu_bytes three = {0}, out;
    for (int i = 0; i < 3; i++) tu_bytes_append(&three, enc.data, enc.size);
    xchg_error err;
    xchg_status st = decode_all(all_codecs[c], SRC_DRIBBLE, three, 4096, &out, &err);
    TU_CHECK(st == XCHG_OK && out.size == 0, "%s: three empty streams: %s",
             xchg_stream_codec_name(all_codecs[c]), st == XCHG_OK ? "bytes produced" : err.message);
    free(out.data);

    /* Zero-length reads, then reads past the end, keep returning 0. */
    xchg_istream *s = NULL;
    st = xchg_istream_open(make_source(SRC_MEMORY, three), all_codecs[c], NULL, &s, &err);
    TU_CHECK(st == XCHG_OK, "open: %s", err.message);
    if (st == XCHG_OK) {
      uint8_t b[4];
      size_t got = 99;
      TU_CHECK(xchg_istream_read(s, NULL, 0, &got, &err) == XCHG_OK && got == 0, "zero read");
      for (int i = 0; i < 3; i++) {
        got = 99;
        TU_CHECK(xchg_istream_read(s, b, 4, &got, &err) == XCHG_OK && got == 0, "read at EOF #%d",
                 i);
        const void *p;
        size_t n = 99;
        TU_CHECK(xchg_istream_next(s, &p, &n, &err) == XCHG_OK && n == 0, "next at EOF #%d", i);
      }
      xchg_istream_free(s);
    }
    free(enc.data);
    free(three.data);
  }
  /* An empty input is an empty stream for every codec. */
  for (size_t c = 0; c < NCODECS; c++) {
    tu_bytes out;
    xchg_error err;
    TU_CHECK(
        decode_all(all_codecs[c], SRC_MEMORY, nothing, 100, &out, &err) == XCHG_OK && out.size == 0,
        "%s: empty input", xchg_stream_codec_name(all_codecs[c]));
    free(out.data);
  }
}

/* The Comet header's field count is a u64: a negative one is refused. */
static void test_comet_field_count(void) {
  xchg_stream_encode_options o;
  xchg_stream_encode_options_init(&o);
  o.comet_inner = XCHG_STREAM_NONE;
  o.comet_field_count = -1;
  xchg_buf *b = NULL;
  xchg_error err;
  TU_CHECK(xchg_stream_encode(XCHG_STREAM_COMET, &o, "x", 1, &b, &err) == XCHG_EINVAL && !b &&
               strstr(err.message, "negative field count -1"),
           "comet field count -1: %s", b ? "encoded" : err.message);
  xchg_buf_unref(b);
}

static void test_names(void) {
  for (size_t c = 0; c <= XCHG_STREAM_AUTO; c++) {
    xchg_stream_codec back;
    TU_CHECK(xchg_stream_codec_from_name(xchg_stream_codec_name((xchg_stream_codec)c), &back,
                                         NULL) == XCHG_OK &&
                 back == (xchg_stream_codec)c,
             "name round trip of %zu", c);
  }
  xchg_stream_codec back;
  xchg_error err;
  TU_CHECK(xchg_stream_codec_from_name("gzip", &back, &err) == XCHG_EINVAL &&
               strstr(err.message, "gzip") != NULL,
           "unknown name");
  static const char ipc[] = "\xff\xff\xff\xff\x10\0\0\0";
  TU_CHECK(xchg_stream_codec_detect(ipc, 8) == XCHG_STREAM_NONE, "plain IPC detects as none");
}

/* A NULL out, stream, source, destination or result pointer is XCHG_EINVAL
 * naming it, not a crash; open takes the source over all the same (ASan
 * sees a leak else), and a stream given NULL pointers reads on as usual. */
static void test_null_arguments(void) {
  static const char bytes[] = "plain bytes";
  xchg_error err;
  xchg_source *src = tu_memory_source(bytes, sizeof bytes);
  xchg_status st = xchg_istream_open(src, XCHG_STREAM_NONE, NULL, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_open: out is NULL"),
           "open(NULL out): %d %s", (int)st, err.message);
  xchg_istream *none = NULL;
  st = xchg_istream_open(NULL, XCHG_STREAM_NONE, NULL, &none, &err);
  TU_CHECK(
      st == XCHG_EINVAL && none == NULL && !strcmp(err.message, "xchg_istream_open: src is NULL"),
      "open(NULL src): %d %s", (int)st, err.message);
  st = xchg_istream_reset(NULL, tu_memory_source(bytes, 1), NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_reset: the stream is NULL"),
           "reset(NULL): %d %s", (int)st, err.message);
  TU_CHECK(xchg_stream_codec_detect(NULL, 20) == XCHG_STREAM_NONE, "detect(NULL, 20)");
  const void *p;
  size_t len, n;
  int more;
  char dst[4];
  st = xchg_istream_next(NULL, &p, &len, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_next: the stream is NULL"),
           "next(NULL): %d %s", (int)st, err.message);
  st = xchg_istream_next_into(NULL, dst, sizeof dst, &n, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_next_into: the stream is NULL"),
           "next_into(NULL): %d %s", (int)st, err.message);
  st = xchg_istream_next_member(NULL, &more, &err);
  TU_CHECK(
      st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_next_member: the stream is NULL"),
      "next_member(NULL): %d %s", (int)st, err.message);
  /* The inline read and the exported one, each refusing what the other does. */
  st = xchg_istream_read(NULL, dst, sizeof dst, &n, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_read: the stream is NULL"),
           "read(NULL): %d %s", (int)st, err.message);
  st = xchg_istream_read_call(NULL, dst, sizeof dst, &n, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_read: the stream is NULL"),
           "read_call(NULL): %d %s", (int)st, err.message);
  xchg_istream *s = NULL;
  TU_OK(xchg_istream_open(tu_memory_source(bytes, sizeof bytes), XCHG_STREAM_NONE, NULL, &s, &err),
        err);
  if (!s) return;
  st = xchg_istream_next(s, NULL, &len, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_next: ptr is NULL"),
           "next(NULL ptr): %d %s", (int)st, err.message);
  st = xchg_istream_next_into(s, dst, sizeof dst, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_next_into: n is NULL"),
           "next_into(NULL n): %d %s", (int)st, err.message);
  st = xchg_istream_next_member(s, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_next_member: more is NULL"),
           "next_member(NULL more): %d %s", (int)st, err.message);
  st = xchg_istream_read(s, NULL, 3, &n, &err);
  TU_CHECK(st == XCHG_EINVAL &&
               !strcmp(err.message, "xchg_istream_read: dst is NULL with a size of 3 bytes"),
           "read(NULL dst): %d %s", (int)st, err.message);
  st = xchg_istream_read_call(s, dst, sizeof dst, NULL, &err);
  TU_CHECK(st == XCHG_EINVAL && !strcmp(err.message, "xchg_istream_read: got is NULL"),
           "read_call(NULL got): %d %s", (int)st, err.message);
  TU_OK(xchg_istream_read(s, NULL, 0, &n, &err), err); /* nothing to copy: no destination needed */
  TU_OK(xchg_istream_read(s, dst, 2, &n, &err), err);
  TU_CHECK(n == 2 && memcmp(dst, bytes, 2) == 0, "read after the NULL calls: %zu bytes", n);
  TU_OK(xchg_istream_next(s, &p, &len, &err), err);
  TU_CHECK(len == sizeof bytes - 2 && memcmp(p, bytes + 2, len) == 0,
           "next after the NULL calls: %zu bytes", len);
  xchg_istream_free(s);
}

/* Corrupt bytes, not just cut ones: flip each byte of a small stream.
 * Formats that checksum all their data must either fail or still decode
 * the payload exactly (a flip in a field that does not matter, such as
 * lz4-java's level nibble in some cases); the others must not crash or read
 * out of bounds (ASan watches). */
static void test_flipped_bytes(void) {
  tu_bytes payload = make_payload(2000, 11);
  for (size_t c = 1; c < NCODECS; c++) {
    xchg_stream_codec codec = all_codecs[c];
    /* Comet blocks here hold LZ4 frames with content checksums. */
    int checksummed = codec != XCHG_STREAM_SNAPPY_JAVA;
    xchg_stream_encode_options eo;
    xchg_stream_encode_options_init(&eo);
    eo.block_size = 512;
    tu_bytes enc = encode(codec, &eo, payload);
    int undetected = 0, errors = 0;
    for (size_t i = 0; i < enc.size; i++) {
      enc.data[i] ^= 0x5A;
      tu_bytes out;
      xchg_error err;
      xchg_status st = decode_all(codec, SRC_MEMORY, enc, 600, &out, &err);
      if (st != XCHG_OK)
        errors++;
      else if (!same(out, payload))
        undetected++;
      free(out.data);
      size_t largest;
      st = decode_into(codec, SRC_MEMORY, enc, 600, 1 << 16, payload.size, &out, &largest, &err);
      if (st == XCHG_OK && !same(out, payload)) undetected++;
      free(out.data);
      enc.data[i] ^= 0x5A;
    }
    TU_CHECK(!checksummed || undetected == 0, "%s: %d corrupted streams decoded to wrong bytes",
             xchg_stream_codec_name(codec), undetected);
    TU_CHECK(!checksummed || errors > (int)enc.size / 2, "%s: only %d of %zu flips detected",
             xchg_stream_codec_name(codec), errors, enc.size);
    free(enc.data);
  }
  free(payload.data);
}

static tu_bytes synthetic; /* make_payload(300001, 1) */

/* xchg_istream_next_into gives the bytes xchg_istream_read does, whatever
 * its room; with room for them, LZ4 frames and zstd decode straight into
 * it, more than a window at once. */
static void test_next_into(void) {
  static const size_t caps[] = {7, 1000, 65536, (size_t)1 << 20};
  const size_t window = 1000;
  for (codec_case cc = {0}; next_codec_case(&cc);) {
    xchg_stream_codec codec = cc.codec;
    int inner = cc.inner;
    xchg_stream_codec frames = codec == XCHG_STREAM_COMET ? comet_inner[inner] : codec;
    /* (A snappy window is a whole chunk either way: nothing to see.) */
    int direct = frames == XCHG_STREAM_LZ4_FRAME || frames == XCHG_STREAM_ZSTD;
    tu_bytes enc = encode(codec, &cc.eo, synthetic);
    for (int k = 0; k < SRC_KINDS; k++) {
      for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        if (caps[i] == 7 && k != SRC_MEMORY) continue; /* too slow to matter */
        tu_bytes out;
        size_t largest;
        xchg_error err = {{0}};
        xchg_status st = decode_into(codec, (enum source_kind)k, enc, window, caps[i],
                                     synthetic.size, &out, &largest, &err);
        TU_CHECK(st == XCHG_OK && same(out, synthetic),
                 "%s/%d from %s, next_into %zu at a time: %s (%zu of %zu bytes)",
                 xchg_stream_codec_name(codec), inner, source_names[k], caps[i],
                 st == XCHG_OK ? "output differs" : err.message, out.size, synthetic.size);
        TU_CHECK(largest <= caps[i], "%s/%d: %zu bytes given for room of %zu",
                 xchg_stream_codec_name(codec), inner, largest, caps[i]);
        TU_CHECK(!direct || caps[i] < 65536 || largest > window,
                 "%s/%d from %s: at most %zu bytes a call into room of %zu: not decoded in "
                 "place",
                 xchg_stream_codec_name(codec), inner, source_names[k], largest, caps[i]);
        free(out.data);
      }
    }
    free(enc.data);
  }
  xchg_istream *s = NULL;
  xchg_error err;
  uint8_t b[1];
  size_t n = 99;
  TU_OK(xchg_istream_open(tu_memory_source(synthetic.data, 10), XCHG_STREAM_NONE, NULL, &s, &err),
        err);
  TU_CHECK(xchg_istream_next_into(s, b, 0, &n, &err) == XCHG_EINVAL && n == 0 &&
               strstr(err.message, "cap 0"),
           "next_into with no room: %s", err.message);
  xchg_istream_free(s);
}

/* Reads s to its end. */
static xchg_status read_rest(xchg_istream *s, tu_bytes *out, xchg_error *err) {
  uint8_t tmp[4096];
  memset(out, 0, sizeof *out);
  for (;;) {
    size_t got = 0;
    xchg_status st = xchg_istream_read(s, tmp, sizeof tmp, &got, err);
    tu_bytes_append(out, tmp, got);
    if (st != XCHG_OK || got < sizeof tmp) return st;
  }
}

/* The error of Comet stream `e` cut in half, read by s reset onto it at
 * origin (NULL: none). */
static void cut_error(xchg_istream *s, tu_bytes e, const xchg_istream_origin *origin, char *out) {
  xchg_error err;
  tu_bytes rest;
  TU_OK(xchg_istream_reset(s, tu_memory_source(e.data, e.size / 2), origin, &err), err);
  xchg_status st = read_rest(s, &rest, &err);
  free(rest.data);
  TU_CHECK(st != XCHG_OK, "a Comet stream cut in half read without error");
  snprintf(out, XCHG_ERROR_MESSAGE_SIZE, "%s", st != XCHG_OK ? err.message : "");
}

/* A reset's origin: the block's byte offset counts from origin.byte, in
 * the block's name and the inner codec's words alike, and
 * caller_names_blocks leaves the name out, the rest of the message the
 * same. */
static void check_origin(xchg_istream *s, tu_bytes e, int inner) {
  char plain[XCHG_ERROR_MESSAGE_SIZE], moved[XCHG_ERROR_MESSAGE_SIZE],
      unnamed[XCHG_ERROR_MESSAGE_SIZE];
  cut_error(s, e, NULL, plain);
  cut_error(s, e, &(xchg_istream_origin){1000000, 0}, moved);
  cut_error(s, e, &(xchg_istream_origin){1000000, 1}, unnamed);
  static const char name[] = "comet block 0 at byte 1000000: ";
  TU_CHECK(strncmp(plain, "comet block 0 at byte 0: ", 25) == 0, "comet/%d: %s", inner, plain);
  TU_CHECK(
      strncmp(moved, name, sizeof name - 1) == 0 && strcmp(moved + sizeof name - 1, unnamed) == 0,
      "comet/%d at byte 1000000: %s; the caller naming the block: %s", inner, moved, unnamed);
  TU_CHECK(strstr(unnamed, "comet block") == NULL && strcmp(unnamed, plain + 25) != 0,
           "comet/%d: the caller naming the block at byte 1000000: %s", inner, unnamed);
}

/* After a reset the blocks of lz4-java count from 0 again in messages, as
 * LZ4 and zstd frames and snappy chunks do: e, its first block's magic
 * damaged, fails at block 0 of the new input, however many blocks s read
 * before. */
static void check_numbering_restarts(xchg_istream *s, tu_bytes e) {
  tu_bytes bad = {0};
  tu_bytes_append(&bad, e.data, e.size);
  bad.data[0] ^= 0xFF; /* "LZ4Block" no more */
  xchg_error err;
  tu_bytes rest;
  TU_OK(xchg_istream_reset(s, tu_memory_source(bad.data, bad.size), NULL, &err), err);
  xchg_status st = read_rest(s, &rest, &err);
  free(rest.data);
  static const char want[] = "lz4-java block 0 at byte 0: no \"LZ4Block\" magic";
  TU_CHECK(st == XCHG_EFORMAT && strcmp(err.message, want) == 0,
           "lz4-java after a reset onto a bad first block: %s (want %s)",
           st != XCHG_OK ? err.message : "no error", want);
  TU_OK(xchg_istream_reset(s, tu_memory_source(e.data, e.size), NULL, &err), err);
  free(bad.data); /* s reads it no more */
}

/* Whole frames, then bytes that are no frame: every byte the frames decode
 * to comes out first, then the error, on every window size and source,
 * whether the last frame ends inside a window or at its end (a frame
 * decoder that reads on into the next frame in the same window lost the
 * window's bytes with the error).  Reset onto the frames alone, the
 * stream then reads them whole: the error is forgotten. */
static void test_garbage_after_frames(void) {
  static const size_t windows[] = {1, 1000, 20000, 65536};
  static const uint8_t garbage[16] = {0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB,
                                      0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB};
  tu_bytes payload = make_payload(20000, 5);
  for (codec_case cc = {0}; next_codec_case(&cc);) {
    if (cc.codec == XCHG_STREAM_NONE) continue; /* its bytes are all data */
    tu_bytes enc = encode(cc.codec, &cc.eo, payload);
    tu_bytes_append(&enc, garbage, sizeof garbage);
    for (int kind = SRC_MEMORY; kind <= SRC_DRIBBLE; kind++)
      for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        tu_bytes out;
        xchg_error err;
        xchg_status st = decode_all(cc.codec, (enum source_kind)kind, enc, windows[w], &out, &err);
        TU_CHECK(st != XCHG_OK && same(out, payload),
                 "%s (inner %d), %s source, window %zu: status %s, %zu of %zu bytes out before "
                 "the garbage's error",
                 xchg_stream_codec_name(cc.codec), cc.inner, source_names[kind], windows[w],
                 xchg_status_name(st), out.size, payload.size);
        free(out.data);
      }
    xchg_istream_options o;
    xchg_istream_options_init(&o);
    o.window_size = 65536;
    xchg_istream *s = NULL;
    xchg_error err;
    tu_bytes out;
    TU_OK(xchg_istream_open(tu_memory_source(enc.data, enc.size), cc.codec, &o, &s, &err), err);
    xchg_status st = read_rest(s, &out, &err);
    free(out.data);
    out = (tu_bytes){0};
    TU_CHECK(st != XCHG_OK, "%s (inner %d): the garbage read without error",
             xchg_stream_codec_name(cc.codec), cc.inner);
    TU_OK(xchg_istream_reset(s, tu_memory_source(enc.data, enc.size - sizeof garbage), NULL, &err),
          err);
    st = read_rest(s, &out, &err);
    TU_CHECK(st == XCHG_OK && same(out, payload),
             "%s (inner %d): after the garbage's error and a "
             "reset onto the frames alone: %s",
             xchg_stream_codec_name(cc.codec), cc.inner,
             st == XCHG_OK ? "output differs" : err.message);
    free(out.data);
    xchg_istream_free(s);
    free(enc.data);
  }
  free(payload.data);
}

/* One istream, reset from stream to stream: after a cut stream (an error),
 * from a dribbling source, then from memory, each read as if opened anew. */
static void test_reset(tu_bytes a, tu_bytes b) {
  for (codec_case cc = {0}; next_codec_case(&cc);) {
    xchg_stream_codec codec = cc.codec;
    int inner = cc.inner;
    tu_bytes ea = encode(codec, &cc.eo, a), eb = encode(codec, &cc.eo, b);
    xchg_istream *s = NULL;
    xchg_error err;
    tu_bytes out;
    TU_OK(xchg_istream_open(tu_memory_source(ea.data, ea.size / 2), codec, NULL, &s, &err), err);
    xchg_status st = read_rest(s, &out, &err);
    free(out.data);
    TU_CHECK(codec == XCHG_STREAM_NONE || st != XCHG_OK,
             "%s/%d: a stream cut in half read without error", xchg_stream_codec_name(codec),
             inner);
    TU_OK(xchg_istream_reset(s, make_source(SRC_DRIBBLE, ea), NULL, &err), err);
    st = read_rest(s, &out, &err);
    TU_CHECK(st == XCHG_OK && same(out, a), "%s/%d after reset, from a dribbling source: %s",
             xchg_stream_codec_name(codec), inner, st == XCHG_OK ? "output differs" : err.message);
    free(out.data);
    TU_OK(xchg_istream_reset(s, tu_memory_source(eb.data, eb.size), NULL, &err), err);
    st = read_rest(s, &out, &err);
    TU_CHECK(st == XCHG_OK && same(out, b), "%s/%d after reset, from memory: %s",
             xchg_stream_codec_name(codec), inner, st == XCHG_OK ? "output differs" : err.message);
    TU_CHECK(xchg_istream_position(s) == (int64_t)b.size,
             "%s/%d: position %llu after reset, not %zu", xchg_stream_codec_name(codec), inner,
             (unsigned long long)xchg_istream_position(s), b.size);
    free(out.data);
    if (codec == XCHG_STREAM_COMET) check_origin(s, ea, inner);
    if (codec == XCHG_STREAM_LZ4_JAVA) check_numbering_restarts(s, eb);
    TU_CHECK(xchg_istream_reset(s, NULL, NULL, &err) == XCHG_EINVAL, "reset without a source");
    TU_CHECK(xchg_istream_reset(NULL, tu_memory_source(eb.data, 1), NULL, &err) == XCHG_EINVAL,
             "reset of no stream"); /* the source is closed: ASan would see a leak */
    xchg_istream_free(s);
    free(ea.data);
    free(eb.data);
  }
}

static void synthetic_round_trips(void) { test_round_trips(synthetic, "synthetic"); }

static void gold_round_trips(void) {
  char path[4096];
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  tu_bytes gold = tu_read_bytes(path);
  if (TU_CHECK(gold.size > 0, "cannot read %s", path)) test_round_trips(gold, "gold");
  free(gold.data);
}

static void skippable_frames(void) { test_skippable_frames(synthetic); }

static void reset(void) {
  char path[4096];
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/generated_primitive.stream");
  tu_bytes gold = tu_read_bytes(path);
  if (TU_CHECK(gold.size > 0, "cannot read %s", path)) test_reset(synthetic, gold);
  free(gold.data);
}

int main(int argc, char **argv) {
  synthetic = make_payload(300001, 1);
  static const tu_case cases[] = {
      {"hashes", test_hashes},
      {"crc32c", test_crc32c},
      {"names", test_names},
      {"comet_field_count", test_comet_field_count},
      {"synthetic_round_trips", synthetic_round_trips},
      {"gold_round_trips", gold_round_trips},
      {"skippable_frames", skippable_frames},
      {"reset", reset},
      {"empty", test_empty},
      {"checksums", test_checksums},
      {"cut_everywhere", test_cut_everywhere},
      {"source_fails_after_bytes", test_source_fails_after_bytes},
      {"garbage_after_frames", test_garbage_after_frames},
      {"flipped_bytes", test_flipped_bytes},
      {"next_into", test_next_into},
      {"null_arguments", test_null_arguments},
  };
  int rc = TU_MAIN(argc, argv, "stream_codecs", cases);
  free(synthetic.data);
  return rc;
}
