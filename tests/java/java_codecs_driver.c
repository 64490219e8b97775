/* java_codecs_driver.c — xchg against the real Java codecs Spark uses.
 *
 * Compiles tests/java/XchgJavaCodecs.java, then for Arrow gold IPC streams:
 *   1. Java writes two concatenated streams (lz4-java, snappy-java, zstd-jni,
 *      configured as Spark does, and snappy-java's snappy framing, Comet's
 *      SNAP) and xchg decodes them, bit for bit, its CRC-32C computed
 *      either way (the CPU's instruction, the portable tables);
 *   2. xchg encodes two concatenated streams and Java reads them back.
 * Registered by the Java block at the end of CMakeLists.txt, which sets
 * XCHG_JAVA, XCHG_JAVAC, XCHG_JAVA_CP (the three jars), XCHG_JAVA_SRC. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  run(cmd);
}

int main(int argc, char **argv) {
  static const tu_case cases[] = {{"both_ways", java_codecs}};
  return TU_MAIN(argc, argv, "java_codecs", cases);
}
