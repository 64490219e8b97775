/* tests/test_lz4_frames.c — the LZ4 frame decoder of the block codec
 * (src/codec/lz4_frames.c, the Arrow IPC body codec LZ4_FRAME) against
 * frames that liblz4 writes (lz4-java's: tests/java/), and every rule of
 * the frame format it checks:
 *
 *  - liblz4 frames with every option: maximum block sizes 64K to 4M,
 *    linked and independent blocks, block checksums, content checksum and
 *    content size each on and off, blocks of noise stored raw, and empty
 *    content, decoded into a buffer of exactly the content's size;
 *  - frames one after another and skippable frames between them;
 *  - each corruption an error naming its rule: magic, version, reserved
 *    bits, dictionary ID, block size ID, header checksum, a block over the
 *    maximum (stored, or decoding to more), block checksum, content
 *    checksum, content size, a damaged block, output longer or shorter
 *    than declared, no bytes at all, and the frame cut at every byte;
 *  - the decompression counters (xchg/testing.h) summing every thread's,
 *    also of threads that have exited. */
#include <lz4frame.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/stream_hash.h"
#include "support/testutil.h"
#include "xchg/codec.h"
#include "xchg/testing.h"

#define PAYLOAD_SIZE 600000

/* Runs of repeated text (compressible), a 10 000-byte stretch of noise
 * repeated further on (matches reaching back across block boundaries: linked
 * blocks need the blocks before them), and 300 000 bytes of noise at the end
 * (whole blocks that LZ4 cannot shrink, stored raw). */
static const uint8_t *payload(void) {
  static uint8_t p[PAYLOAD_SIZE];
  static int made;
  if (made) return p;
  uint32_t x = 2463534242u;
  for (size_t i = 0; i < sizeof p; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    if (i >= 300000)
      p[i] = (uint8_t)x;
    else if (i % 70000 < 10000)
      p[i] = i < 10000 ? (uint8_t)x : p[i % 70000];
    else
      p[i] = (uint8_t)("columnar"[i % 8] + (i / 4096) % 5);
  }
  made = 1;
  return p;
}

static tu_bytes lz4_frame(const void *src, size_t n, LZ4F_blockSizeID_t size, LZ4F_blockMode_t mode,
                          int block_sum, int content_sum, int content_size) {
  LZ4F_preferences_t prefs = {0};
  prefs.frameInfo.blockSizeID = size;
  prefs.frameInfo.blockMode = mode;
  prefs.frameInfo.blockChecksumFlag = block_sum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
  prefs.frameInfo.contentChecksumFlag =
      content_sum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  prefs.frameInfo.contentSize = content_size ? n : 0;
  size_t cap = LZ4F_compressFrameBound(n, &prefs);
  tu_bytes f = {malloc(cap), 0};
  size_t got = LZ4F_compressFrame(f.data, cap, src, n, &prefs);
  TU_CHECK(!LZ4F_isError(got), "LZ4F_compressFrame: %s", LZ4F_getErrorName(got));
  f.size = LZ4F_isError(got) ? 0 : got;
  return f;
}

/* The payload from its first compressible byte on. */
static const uint8_t *text(void) { return payload() + 10000; }

/* The default frame of the corruption cases: 64 KiB linked blocks, every
 * checksum and the content size, over the first n bytes of text(). */
static tu_bytes full_frame(size_t n) {
  return lz4_frame(text(), n, LZ4F_max64KB, LZ4F_blockLinked, 1, 1, 1);
}

/* Decodes into a buffer of exactly dst_size bytes (so that ASan sees any
 * byte written past it); the status, the output in *out when out. */
static xchg_status decode(const tu_bytes *f, size_t dst_size, uint8_t **out, xchg_error *err) {
  uint8_t *dst = malloc(dst_size ? dst_size : 1);
  xchg_status st =
      xchg_block_decompress(XCHG_BLOCK_LZ4_FRAME, f->data, f->size, dst, dst_size, err);
  if (out)
    *out = dst;
  else
    free(dst);
  return st;
}

static void expect_error(const char *what, const tu_bytes *f, size_t dst_size, const char *says) {
  xchg_error err = {{0}};
  xchg_status st = decode(f, dst_size, NULL, &err);
  TU_CHECK(st == XCHG_EFORMAT && strstr(err.message, says) != NULL,
           "%s: %s (\"%s\"), expected EFORMAT saying \"%s\"", what, xchg_status_name(st),
           st == XCHG_OK ? "" : err.message, says);
}

/* Offsets in a frame of full_frame: magic 0-3, FLG 4, BD 5, content size
 * 6-13, header checksum 14, the first block's size 15-18 and data from 19. */
#define AT_FLG 4
#define AT_BD 5
#define AT_CONTENT_SIZE 6
#define AT_FIRST_BLOCK 15

/* Sets the header checksum of f's frame to match its descriptor, as after a
 * header field was changed on purpose. */
static void fix_header_checksum(tu_bytes *f) {
  size_t n = 2 + ((f->data[AT_FLG] & 0x08) ? 8 : 0) + ((f->data[AT_FLG] & 0x01) ? 4 : 0);
  f->data[AT_FLG + n] = (uint8_t)(xchg_xxh32(f->data + AT_FLG, n, 0) >> 8);
}

static void put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- frames as liblz4 writes them ----------------------------------------------- */

static void every_option(void) {
  static const LZ4F_blockSizeID_t sizes[] = {LZ4F_max64KB, LZ4F_max256KB, LZ4F_max1MB, LZ4F_max4MB};
  int cases = 0;
  for (size_t s = 0; s < 4; s++)
    for (int linked = 0; linked < 2; linked++)
      for (int opts = 0; opts < 8; opts++)
        for (size_t n = 0; n <= PAYLOAD_SIZE; n += PAYLOAD_SIZE) {
          tu_bytes f =
              lz4_frame(payload(), n, sizes[s], linked ? LZ4F_blockLinked : LZ4F_blockIndependent,
                        opts & 1, opts & 2, opts & 4);
          xchg_error err = {{0}};
          uint8_t *out = NULL;
          xchg_status st = decode(&f, n, &out, &err);
          TU_CHECK(st == XCHG_OK && memcmp(out, payload(), n) == 0,
                   "block size %d, %s, options %d, %zu bytes: %s", (int)sizes[s],
                   linked ? "linked" : "independent", opts, n,
                   st == XCHG_OK ? "bytes differ" : err.message);
          cases += st == XCHG_OK;
          free(out);
          free(f.data);
        }
  TU_CHECK(cases == 4 * 2 * 8 * 2, "%d frames decoded", cases);
}

/* The payload's noise is stored raw (the high bit of the block size): the
 * every_option frames do hold such blocks. */
static void raw_blocks_present(void) {
  tu_bytes f = lz4_frame(payload(), PAYLOAD_SIZE, LZ4F_max64KB, LZ4F_blockIndependent, 0, 0, 0);
  int raw = 0;
  for (size_t at = 7; at + 4 <= f.size;) {
    uint32_t word = (uint32_t)f.data[at] | (uint32_t)f.data[at + 1] << 8 |
                    (uint32_t)f.data[at + 2] << 16 | (uint32_t)f.data[at + 3] << 24;
    if (word == 0) break;
    raw += (word >> 31) != 0;
    at += 4 + (word & 0x7FFFFFFFu);
  }
  TU_CHECK(raw >= 4, "only %d raw blocks", raw);
  free(f.data);
}

/* Two frames and skippable frames around them decode to the two contents
 * one after the other; a skippable frame cut short is an error. */
static void concatenated_and_skippable(void) {
  tu_bytes a = full_frame(100000);
  tu_bytes b = lz4_frame(text() + 100000, 5000, LZ4F_max256KB, LZ4F_blockIndependent, 0, 0, 0);
  static const uint8_t skip[] = {0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'};
  tu_bytes all = {0};
  tu_bytes_append(&all, skip, sizeof skip);
  tu_bytes_append(&all, a.data, a.size);
  tu_bytes_append(&all, skip, sizeof skip);
  tu_bytes_append(&all, b.data, b.size);
  tu_bytes_append(&all, skip, sizeof skip);
  xchg_error err = {{0}};
  uint8_t *out = NULL;
  xchg_status st = decode(&all, 105000, &out, &err);
  TU_CHECK(st == XCHG_OK && memcmp(out, text(), 105000) == 0, "two frames: %s",
           st == XCHG_OK ? "bytes differ" : err.message);
  free(out);
  all.size -= 1;
  expect_error("skippable frame cut short", &all, 105000, "needs 3");
  all.size -= 3;
  expect_error("skippable frame without its length", &all, 105000, "skippable frame's length");
  tu_bytes only = {(uint8_t *)skip, sizeof skip};
  st = decode(&only, 0, NULL, &err);
  TU_CHECK(st == XCHG_OK, "a skippable frame alone: %s", st == XCHG_OK ? "" : err.message);
  tu_bytes empty = {(uint8_t *)skip, 0};
  expect_error("no bytes at all", &empty, 0, "truncated after 0 of 0");
  free(all.data);
  free(a.data);
  free(b.data);
}

/* ---- corruptions ----------------------------------------------------------------- */

static void header_fields(void) {
  tu_bytes f = full_frame(1000);
  f.data[0] ^= 1;
  expect_error("bad magic", &f, 1000, "at compressed byte 0: not an LZ4 frame");
  f.data[0] ^= 1;
  f.data[AT_CONTENT_SIZE + 8] ^= 0x40;
  expect_error("bad header checksum", &f, 1000,
               "at compressed byte 14: the frame header's checksum");
  fix_header_checksum(&f);
  xchg_error err = {{0}};
  TU_CHECK(decode(&f, 1000, NULL, &err) == XCHG_OK, "fixed header: %s", err.message);

  static const struct {
    size_t at;
    uint8_t flip;
    const char *says;
  } fields[] = {
      {AT_FLG, 0xC0, "version is not 1"},     /* version 2 */
      {AT_FLG, 0x40, "version is not 1"},     /* version 0 */
      {AT_FLG, 0x02, "reserved bit"},         /* FLG bit 1 */
      {AT_BD, 0x80, "reserved bit"},          /* BD bit 7 */
      {AT_BD, 0x01, "reserved bit"},          /* BD bit 0 */
      {AT_BD, 0x70, "block size is invalid"}, /* size ID 4 becomes 3 */
      {AT_FLG, 0x01, "dictionary"},           /* a dictionary ID follows */
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    tu_bytes g = {0};
    tu_bytes_append(&g, f.data, AT_CONTENT_SIZE + 8);
    if (fields[i].flip == 0x01 && fields[i].at == AT_FLG)
      tu_bytes_append(&g, "\x01\x02\x03\x04", 4); /* the dictionary ID */
    tu_bytes_append(&g, f.data + AT_CONTENT_SIZE + 8, f.size - AT_CONTENT_SIZE - 8);
    g.data[fields[i].at] ^= fields[i].flip;
    fix_header_checksum(&g);
    char what[64];
    snprintf(what, sizeof what, "byte %zu ^ 0x%02x", fields[i].at, fields[i].flip);
    expect_error(what, &g, 1000, fields[i].says);
    free(g.data);
  }
  free(f.data);
}

static void checksums(void) {
  tu_bytes f = full_frame(1000);
  f.data[f.size - 1] ^= 1;
  expect_error("bad content checksum", &f, 1000, "the content checksum does not match");
  f.data[f.size - 1] ^= 1;
  f.data[f.size - 9] ^= 1; /* the last byte of the (only) block's checksum */
  expect_error("bad block checksum", &f, 1000, "at compressed byte 15: a block's checksum");
  f.data[f.size - 9] ^= 1;
  /* Without the block checksum, a damaged block is found by decoding it:
   * into the 1000 bytes left (less than a block), and into room for more
   * than a block. */
  f.data[AT_FLG] &= (uint8_t)~0x10;
  fix_header_checksum(&f);
  memmove(f.data + f.size - 12, f.data + f.size - 8, 8);
  f.size -= 4;
  xchg_error err = {{0}};
  TU_CHECK(decode(&f, 1000, NULL, &err) == XCHG_OK, "without block checksum: %s", err.message);
  memset(f.data + AT_FIRST_BLOCK + 4, 0xFF, 16);
  expect_error("damaged block", &f, 1000, "at compressed byte 15: a compressed block is damaged");
  expect_error("damaged block, room for more", &f, 200000, "a compressed block is damaged");
  free(f.data);
}

static void block_sizes(void) {
  /* A stored block of 65 537 bytes in a frame of 64 KiB blocks. */
  tu_bytes f = {0};
  tu_bytes_append(&f, "\x04\x22\x4d\x18\x60\x40", 6);
  uint8_t word[4];
  tu_bytes_append(&f, "", 1);
  fix_header_checksum(&f);
  put_le32(word, 0x80000000u | 65537u);
  tu_bytes_append(&f, word, 4);
  tu_bytes_append(&f, payload(), 65537);
  tu_bytes_append(&f, "\0\0\0\0", 4);
  expect_error("stored block over the maximum", &f, 65537,
               "at compressed byte 7: a block is larger than the frame header's block size");
  /* The same with 65 536 bytes is a valid frame; with one byte less room,
   * its output is longer than declared. */
  put_le32(f.data + 7, 0x80000000u | 65536u);
  memmove(f.data + 11 + 65536, f.data + 11 + 65537, 4);
  f.size -= 1;
  xchg_error err = {{0}};
  uint8_t *out = NULL;
  TU_CHECK(decode(&f, 65536, &out, &err) == XCHG_OK && memcmp(out, payload(), 65536) == 0,
           "stored block of 65536 bytes: %s", err.message);
  free(out);
  expect_error("stored block longer than declared", &f, 65535, "more than the declared 65535");
  free(f.data);

  /* A compressed block that decodes to 256 KiB in a frame whose header
   * (changed) says 64 KiB blocks. */
  static uint8_t zeros[262144];
  tu_bytes z = lz4_frame(zeros, sizeof zeros, LZ4F_max256KB, LZ4F_blockIndependent, 0, 0, 0);
  TU_CHECK(decode(&z, sizeof zeros, NULL, &err) == XCHG_OK, "zeros: %s", err.message);
  z.data[AT_BD] = 0x40;
  fix_header_checksum(&z);
  expect_error("compressed block over the maximum", &z, sizeof zeros,
               "a compressed block is damaged");
  free(z.data);
}

static void declared_lengths(void) {
  tu_bytes f = full_frame(150000);
  expect_error("content size one more", &f, 150001,
               "decompressed to 150000 bytes, declared 150001");
  expect_error("content size one less", &f, 149999, "more than the declared 149999");
  /* The content size field says one byte more or less than the frame holds. */
  for (int d = -1; d <= 1; d += 2) {
    f.data[AT_CONTENT_SIZE] = (uint8_t)(f.data[AT_CONTENT_SIZE] + d);
    fix_header_checksum(&f);
    expect_error("content size field off by one", &f, 150000,
                 "at compressed byte 0: the frame holds 150000 bytes, its header declares");
    f.data[AT_CONTENT_SIZE] = (uint8_t)(f.data[AT_CONTENT_SIZE] - d);
  }
  /* A content size field of 0 is "unknown" (liblz4 reads it so): the
   * frame decodes, and liblz4 agrees. */
  memset(f.data + AT_CONTENT_SIZE, 0, 8);
  fix_header_checksum(&f);
  uint8_t *out = NULL;
  xchg_error err = {{0}};
  TU_CHECK(decode(&f, 150000, &out, &err) == XCHG_OK && memcmp(out, text(), 150000) == 0,
           "content size field 0: %s", err.message);
  free(out);
  LZ4F_dctx *dctx;
  TU_CHECK(!LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)), "LZ4F context");
  uint8_t *ref = malloc(150000);
  size_t ref_n = 150000, in_n = f.size;
  size_t hint = LZ4F_decompress(dctx, ref, &ref_n, f.data, &in_n, NULL);
  TU_CHECK(hint == 0 && ref_n == 150000 && memcmp(ref, text(), 150000) == 0,
           "liblz4 reads a content size field of 0 as unknown too (hint %zu, %zu bytes)", hint,
           ref_n);
  LZ4F_freeDecompressionContext(dctx);
  free(ref);
  /* Without a content size: the declared length alone. */
  tu_bytes g = lz4_frame(text(), 150000, LZ4F_max64KB, LZ4F_blockLinked, 0, 0, 0);
  expect_error("no content size, one more", &g, 150001, "decompressed to 150000 bytes, declared");
  expect_error("no content size, one less", &g, 149999, "more than the declared 149999");
  /* A second frame after the declared length is full. */
  tu_bytes two = {0};
  tu_bytes_append(&two, g.data, g.size);
  tu_bytes_append(&two, g.data, g.size);
  expect_error("a frame past the end", &two, 150000, "more than the declared 150000");
  free(two.data);
  free(g.data);
  free(f.data);
}

/* Every prefix of a frame — of a few bytes, and of three linked blocks
 * (of zeros, so that the frame is small) — is an error. */
static void truncated_everywhere(void) {
  static const uint8_t zeros[140000];
  tu_bytes frames[2] = {full_frame(300),
                        lz4_frame(zeros, sizeof zeros, LZ4F_max64KB, LZ4F_blockLinked, 1, 1, 1)};
  for (int i = 0; i < 2; i++) {
    size_t n = i ? sizeof zeros : 300;
    int refused = 0;
    for (size_t cut = 0; cut < frames[i].size; cut++) {
      tu_bytes p = {malloc(cut ? cut : 1), cut};
      memcpy(p.data, frames[i].data, cut);
      xchg_error err = {{0}};
      xchg_status st = decode(&p, n, NULL, &err);
      refused += st == XCHG_EFORMAT && strstr(err.message, "truncated after") != NULL;
      free(p.data);
    }
    TU_CHECK(refused == (int)frames[i].size, "%d of the %zu prefixes of a %zu-byte frame refused",
             refused, frames[i].size, n);
    free(frames[i].data);
  }
}

/* ---- counters ---------------------------------------------------------------------- */

static void *decode_in_a_thread(void *arg) {
  tu_bytes *f = arg;
  xchg_error err;
  for (int i = 0; i < 3; i++)
    if (decode(f, 1000, NULL, &err) != XCHG_OK) return f;
  return NULL;
}

static void counters(void) {
  tu_bytes f = full_frame(1000);
  int64_t calls = xchg_block_decompress_calls(), bytes = xchg_block_decompressed_bytes();
  xchg_error err;
  TU_CHECK(decode(&f, 1000, NULL, &err) == XCHG_OK, "decode: %s", err.message);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, decode_in_a_thread, &f);
  for (int i = 0; i < 2; i++) {
    void *failed;
    pthread_join(t[i], &failed);
    TU_CHECK(failed == NULL, "thread %d failed to decode", i);
  }
  expect_error("a failed call", &f, 999, "more than the declared");
  TU_CHECK(xchg_block_decompress_calls() - calls == 8,
           "%lld calls counted, 8 made (2 threads of 3, exited, 2 here)",
           (long long)(xchg_block_decompress_calls() - calls));
  TU_CHECK(xchg_block_decompressed_bytes() - bytes == 7000, "%lld bytes counted, 7000 produced",
           (long long)(xchg_block_decompressed_bytes() - bytes));
  free(f.data);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"every_option", every_option},
                                  {"raw_blocks_present", raw_blocks_present},
                                  {"concatenated_and_skippable", concatenated_and_skippable},
                                  {"header_fields", header_fields},
                                  {"checksums", checksums},
                                  {"block_sizes", block_sizes},
                                  {"declared_lengths", declared_lengths},
                                  {"truncated_everywhere", truncated_everywhere},
                                  {"counters", counters}};
  return TU_MAIN(argc, argv, "lz4_frames", cases);
}
