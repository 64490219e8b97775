/* java_codecs_driver.c — xchg against the real Java codecs Spark uses.
 *
 * Compiles tests/java/XchgJavaCodecs.java, then for Arrow gold IPC streams:
 *   1. Java writes two concatenated streams (lz4-java, snappy-java, zstd-jni,
 *      configured as Spark does, and snappy-java's snappy framing, Comet's
 *      SNAP) and xchg decodes them, bit for bit, its CRC-32C computed
 *      either way (the CPU's instruction, the portable tables);
 *   2. xchg encodes two concatenated streams and Java reads them back;
 *   3. lz4-java's LZ4FrameOutputStream writes a payload as one LZ4 frame with
 *      every block size and flag set it offers, and xchg's block codec (the
 *      Arrow IPC body codec LZ4_FRAME) decodes each to the payload.
 * Registered by the Java block at the end of CMakeLists.txt, which sets
 * XCHG_JAVA, XCHG_JAVAC, XCHG_JAVA_CP (the three jars), XCHG_JAVA_SRC. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/codec.h"
#include "xchg/stream.h"
#include "xchg/testing.h"
#include "support/sources.h"
#include "support/testutil.h"

/* Private function under test: how CRC-32C is computed (stream_hash.h). */
const char *xchg_crc32c_select(int portable);

static const char *env(const char *name) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') {
    fprintf(stderr, "FAIL: %s is not set\n", name);
    exit(1);
  }
  return v;
}

static int run(const char *cmd) {
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
  return rc;
}

/* The payload twice, as two concatenated streams decode. */
static tu_bytes twice(tu_bytes p) {
  tu_bytes t = {malloc(2 * p.size + 1), 2 * p.size};
  memcpy(t.data, p.data, p.size);
  memcpy(t.data + p.size, p.data, p.size);
  return t;
}

static xchg_status xchg_decode(tu_bytes in, xchg_stream_codec codec, tu_bytes *out,
                               xchg_error *err) {
  xchg_istream *s = NULL;
  out->data = NULL;
  out->size = 0;
  xchg_status st = xchg_istream_open(tu_memory_source(in.data, in.size), codec, NULL, &s, err);
  if (st != XCHG_OK) return st;
  const void *p;
  size_t n;
  while ((st = xchg_istream_next(s, &p, &n, err)) == XCHG_OK && n > 0) {
    out->data = realloc(out->data, out->size + n);
    memcpy(out->data + out->size, p, n);
    out->size += n;
  }
  xchg_istream_free(s);
  return st;
}

static int same(tu_bytes a, tu_bytes b) {
  return a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
}

/* 300 000 bytes over several 64 KiB blocks: runs of a few values (LZ4
 * compresses them) between stretches of noise (stored raw by lz4-java when
 * a whole block is noise: the last 70 000 bytes). */
#define FRAME_PAYLOAD 300000

static tu_bytes frame_payload(void) {
  tu_bytes p = {malloc(FRAME_PAYLOAD), FRAME_PAYLOAD};
  uint32_t x = 12345;
  for (size_t i = 0; i < p.size; i++) {
    x = x * 1103515245u + 12345u;
    int noise = i >= p.size - 70000 || (i / 3000) % 4 == 3;
    p.data[i] = noise ? (uint8_t)(x >> 24) : (uint8_t)("arrow"[i % 5] + (i / 997) % 7);
  }
  return p;
}

/* Step 3 (see the top), in dir, with XchgJavaCodecs compiled there. */
static void java_lz4_frames(const char *java, const char *cp, const char *dir) {
  char cmd[20480], path[4096];
  tu_bytes payload = frame_payload();
  snprintf(path, sizeof path, "%s/frame-payload", dir);
  TU_CHECK(tu_write_file(path, payload.data, payload.size) == 0, "write %s", path);
  snprintf(cmd, sizeof cmd, "'%s' -cp '%s:%s' XchgJavaCodecs lz4frames '%s' '%s'", java, dir, cp,
           path, dir);
  if (!TU_CHECK(run(cmd) == 0, "Java writing LZ4 frames: %s", cmd)) {
    free(payload.data);
    return;
  }
  static const char *const sizes[] = {"64K", "256K", "1M", "4M"};
  static const char *const flags[] = {"", "b", "c", "bc", "s", "bs", "cs", "bcs"};
  uint8_t *out = malloc(payload.size);
  int decoded = 0;
  for (size_t s = 0; s < 4; s++) {
    for (size_t f = 0; f < 8; f++) {
      snprintf(path, sizeof path, "%s/%s-%s.lz4", dir, sizes[s], flags[f]);
      tu_bytes frame = tu_read_bytes(path);
      xchg_error err = {{0}};
      memset(out, 0, payload.size);
      xchg_status st = xchg_block_decompress(XCHG_BLOCK_LZ4_FRAME, frame.data, frame.size, out,
                                             payload.size, &err);
      TU_CHECK(st == XCHG_OK && memcmp(out, payload.data, payload.size) == 0,
               "lz4-java frame %s-%s (%zu bytes): %s", sizes[s], flags[f], frame.size,
               st == XCHG_OK ? "bytes differ" : err.message);
      decoded += st == XCHG_OK;
      free(frame.data);
    }
  }
  TU_CHECK(decoded == 32, "%d of 32 lz4-java frames decoded", decoded);
  free(out);
  free(payload.data);
}

/* One flow: javac once, then every payload both ways in every codec. */
static void java_codecs(void) {
  const char *java = env("XCHG_JAVA"), *javac = env("XCHG_JAVAC"), *cp = env("XCHG_JAVA_CP");
  const char *src = env("XCHG_JAVA_SRC");
  char dir[] = "/tmp/xchg-java-XXXXXX";
  if (!TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return;
  char cmd[20480], path[4096], out_path[4096];
  snprintf(cmd, sizeof cmd, "'%s' -encoding UTF-8 -cp '%s' -d '%s' '%s'", javac, cp, dir, src);
  if (!TU_CHECK(run(cmd) == 0, "javac: %s", cmd)) return;

  static const char *const payloads[] = {"generated_primitive.stream",
                                         "generated_decimal256.stream",
                                         "generated_primitive_zerolength.stream"};
  static const struct {
    const char *name;
    xchg_stream_codec codec;
  } codecs[] = {{"lz4-java", XCHG_STREAM_LZ4_JAVA},
                {"snappy-java", XCHG_STREAM_SNAPPY_JAVA},
                {"zstd", XCHG_STREAM_ZSTD},
                {"snappy-framed", XCHG_STREAM_SNAPPY_FRAMED}};
  for (size_t p = 0; p < sizeof payloads / sizeof payloads[0]; p++) {
    tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s", payloads[p]);
    tu_bytes payload = tu_read_bytes(path);
    TU_CHECK(payload.size > 0, "cannot read %s", path);
    if (payload.size == 0) continue;
    tu_bytes expect = twice(payload);
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
      /* Java writes, xchg reads. */
      snprintf(out_path, sizeof out_path, "%s/java.%s", dir, codecs[c].name);
      snprintf(cmd, sizeof cmd, "'%s' -cp '%s:%s' XchgJavaCodecs write %s 2 '%s' '%s'", java, dir,
               cp, codecs[c].name, path, out_path);
      if (run(cmd) != 0) {
        TU_CHECK(0, "Java writing: %s", cmd);
        continue;
      }
      tu_bytes from_java = tu_read_bytes(out_path), decoded;
      TU_CHECK(xchg_stream_codec_detect(from_java.data, from_java.size) == codecs[c].codec,
               "%s: Java's %s stream not detected", payloads[p], codecs[c].name);
      xchg_error err = {{0}};
      xchg_status st = XCHG_OK;
      for (int portable = 0; portable < 2; portable++) {
        const char *way = xchg_crc32c_select(portable);
        st = xchg_decode(from_java, XCHG_STREAM_AUTO, &decoded, &err);
        TU_CHECK(st == XCHG_OK && same(decoded, expect), "%s: xchg decoding Java's %s (crc %s): %s",
                 payloads[p], codecs[c].name, way, st == XCHG_OK ? "bytes differ" : err.message);
        free(decoded.data);
      }
      xchg_crc32c_select(0);
      free(from_java.data);

      /* xchg writes, Java reads. */
      xchg_buf *enc = NULL;
      st = xchg_stream_encode(codecs[c].codec, NULL, payload.data, payload.size, &enc, &err);
      TU_CHECK(st == XCHG_OK, "encode: %s", err.message);
      if (st != XCHG_OK) continue;
      tu_bytes two = {0};
      tu_bytes one = {(uint8_t *)xchg_buf_data(enc), xchg_buf_size(enc)};
      two = twice(one);
      xchg_buf_unref(enc);
      snprintf(path, sizeof path, "%s/xchg.%s", dir, codecs[c].name);
      snprintf(out_path, sizeof out_path, "%s/back.%s", dir, codecs[c].name);
      TU_CHECK(tu_write_file(path, two.data, two.size) == 0, "write %s", path);
      free(two.data);
      snprintf(cmd, sizeof cmd, "'%s' -cp '%s:%s' XchgJavaCodecs read %s '%s' '%s'", java, dir, cp,
               codecs[c].name, path, out_path);
      if (run(cmd) != 0) {
        TU_CHECK(0, "Java could not read xchg's stream: %s", cmd);
      } else {
        tu_bytes back = tu_read_bytes(out_path);
        TU_CHECK(same(back, expect), "%s: Java read xchg's %s stream as %zu bytes, expected %zu",
                 payloads[p], codecs[c].name, back.size, expect.size);
        free(back.data);
      }
      tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s", payloads[p]);
    }
    free(payload.data);
    free(expect.data);
  }
  java_lz4_frames(java, cp, dir);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  run(cmd);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"both_ways", java_codecs}};
  return TU_MAIN(argc, argv, "java_codecs", cases);
}
