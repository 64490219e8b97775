/* tests/test_codec_trailer.c — an IPC stream read through a stream codec
 * must notice a cut or a corruption in the codec's trailer.
 *
 * The IPC reader stops at its end-of-stream marker; the bytes after the
 * last data byte — an LZ4 frame's end mark and content checksum, zstd's
 * last block end and checksum, lz4-java's end block — are read only
 * because the reader then finishes the codec's frame (xchg_source_finish).
 * For every codec wrapping an Apache Arrow gold stream:
 *
 *   - the whole input decodes, to the batches of the plain stream;
 *   - every cut in the last 40 bytes is an XCHG_EIO error (snappy-java
 *     and the snappy framing have no trailer: there the cut is in the data
 *     and the IPC layer finds it), and a cut in a trailer has a message
 *     naming the codec;
 *   - a corrupt checksum or end block is an XCHG_EFORMAT error;
 *   - the same through a cancellable source wrapped around the codec's;
 *   - finishing leaves what follows readable: two codec streams one after
 *     the other, and two IPC streams in one frame (the first reader finds
 *     data after its end of stream, which stays for the second), are read
 *     as two IPC streams over one xchg_istream; a cut in the trailer of the
 *     one frame is then the second reader's error.
 * Plus: xchg_source_finish on a source with no frames does nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/sources.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

#define TAIL_CUTS 40

typedef struct codec_case {
  xchg_stream_codec codec, comet_inner;
  const char *name_in_error; /* what an error in the trailer must mention */
  size_t trailer;            /* bytes after the last data byte */
} codec_case;

/* Trailer sizes: LZ4 frame end mark + content checksum; zstd content
 * checksum (the last block's header comes before its data); lz4-java's
 * 21-byte end block; none for the snappy formats. */
static const codec_case cases[] = {
    {XCHG_STREAM_LZ4_FRAME, XCHG_STREAM_NONE, "lz4 frame", 8},
    {XCHG_STREAM_ZSTD, XCHG_STREAM_NONE, "zstd", 4},
    {XCHG_STREAM_LZ4_JAVA, XCHG_STREAM_NONE, "lz4-java", 21},
    {XCHG_STREAM_SNAPPY_JAVA, XCHG_STREAM_NONE, "snappy-java", 0},
    {XCHG_STREAM_SNAPPY_FRAMED, XCHG_STREAM_NONE, "snappy framed", 0},
    {XCHG_STREAM_COMET, XCHG_STREAM_ZSTD, "comet block", 4},
    {XCHG_STREAM_COMET, XCHG_STREAM_LZ4_FRAME, "comet block", 8},
};

typedef struct result {
  xchg_status status;
  int64_t batches, rows;
  char message[XCHG_ERROR_MESSAGE_SIZE];
} result;

/* Reads every batch of the IPC stream at the current position of src
 * (taken over), counting batches and rows. */
static result read_ipc(xchg_source *src) {
  result res = {XCHG_OK, 0, 0, ""};
  xchg_error err;
  xchg_ipc_reader *r = NULL;
  res.status = xchg_ipc_reader_open(src, NULL, &r, &err);
  while (res.status == XCHG_OK) {
    struct ArrowArray a;
    res.status = xchg_ipc_reader_next(r, &a, &err);
    if (res.status != XCHG_OK || a.release == NULL) break;
    res.batches++;
    res.rows += a.length;
    a.release(&a);
  }
  if (res.status != XCHG_OK) snprintf(res.message, sizeof res.message, "%s", err.message);
  xchg_ipc_reader_free(r);
  return res;
}

static xchg_istream *open_stream(const uint8_t *data, size_t size, xchg_stream_codec codec) {
  xchg_istream *s = NULL;
  xchg_error err;
  xchg_source *src = tu_memory_source(data, size);
  if (xchg_istream_open(src, codec, NULL, &s, &err) != XCHG_OK) {
    TU_CHECK(0, "xchg_istream_open: %s", err.message);
    return NULL;
  }
  return s;
}

/* The IPC stream inside data[0, size), read through codec's source,
 * optionally wrapped in a cancellable source that is never cancelled. */
static result read_wrapped(const uint8_t *data, size_t size, xchg_stream_codec codec,
                           int with_cancel) {
  static const int never = 0;
  result res = {XCHG_EIO, 0, 0, "cannot open the stream"};
  xchg_istream *s = open_stream(data, size, codec);
  if (s == NULL) return res;
  xchg_source *src;
  xchg_error err;
  TU_OK(xchg_source_from_istream(s, &src, &err), err);
  if (src && with_cancel) TU_OK(xchg_source_with_cancel_flag(src, &never, &src, &err), err);
  return read_ipc(src);
}

/* Damaged inputs tried, and errors they returned, for the summary line. */
static long inputs_tried, errors_returned;

static void count(const result *r) {
  inputs_tried++;
  errors_returned += r->status != XCHG_OK;
}

static xchg_buf *encode(const codec_case *c, const uint8_t *data, size_t size) {
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.comet_inner = c->comet_inner;
  eo.block_size = 1024; /* several blocks: the last one is not the first */
  xchg_buf *enc = NULL;
  xchg_error err;
  TU_CHECK(xchg_stream_encode(c->codec, &eo, data, size, &enc, &err) == XCHG_OK,
           "xchg_stream_encode: %s", err.message);
  return enc;
}

static const char *case_name(const codec_case *c) {
  static char name[64];
  if (c->codec == XCHG_STREAM_COMET)
    snprintf(name, sizeof name, "comet(%s)", xchg_stream_codec_name(c->comet_inner));
  else
    snprintf(name, sizeof name, "%s", xchg_stream_codec_name(c->codec));
  return name;
}

/* Cuts in the tail and corruptions of the trailer of one codec's stream. */
static void check_trailer(const codec_case *c, const uint8_t *ipc, size_t ipc_size,
                          const result *plain) {
  const char *name = case_name(c);
  xchg_buf *enc = encode(c, ipc, ipc_size);
  if (enc == NULL) return;
  size_t n = xchg_buf_size(enc);
  uint8_t *data = malloc(n);
  memcpy(data, xchg_buf_data(enc), n);
  xchg_buf_unref(enc);

  for (int with_cancel = 0; with_cancel <= 1; with_cancel++) {
    const char *how = with_cancel ? " (through a cancellable source)" : "";
    result whole = read_wrapped(data, n, c->codec, with_cancel);
    TU_CHECK(
        whole.status == XCHG_OK && whole.batches == plain->batches && whole.rows == plain->rows,
        "%s%s: the whole input gives %lld batches, %lld rows (plain: %lld, %lld): %s", name, how,
        (long long)whole.batches, (long long)whole.rows, (long long)plain->batches,
        (long long)plain->rows, whole.message);
    for (size_t cut = 1; cut <= TAIL_CUTS && cut < n; cut++) {
      /* A copy of exactly the bytes kept, so that AddressSanitizer sees
       * any read past the cut. */
      uint8_t *prefix = malloc(n - cut);
      memcpy(prefix, data, n - cut);
      result r = read_wrapped(prefix, n - cut, c->codec, with_cancel);
      free(prefix);
      count(&r);
      TU_CHECK(r.status == XCHG_EIO, "%s%s without its last %zu bytes (of %zu): status %d (%s)",
               name, how, cut, n, (int)r.status, r.status == XCHG_OK ? "decodes whole" : r.message);
      if (cut <= c->trailer)
        TU_CHECK(strstr(r.message, c->name_in_error) != NULL && strstr(r.message, "byte") != NULL,
                 "%s%s cut by %zu bytes: the message does not say where: %s", name, how, cut,
                 r.message);
    }
  }

  /* A corrupt last byte: the content checksum of an LZ4 frame or zstd
   * frame, the checksum field of lz4-java's end block (which must be 0). */
  if (c->trailer > 0) {
    data[n - 1] ^= 0x20;
    result r = read_wrapped(data, n, c->codec, 0);
    count(&r);
    TU_CHECK(r.status == XCHG_EFORMAT && strstr(r.message, c->name_in_error) != NULL,
             "%s with its last byte corrupt: status %d (%s)", name, (int)r.status,
             r.status == XCHG_OK ? "decodes whole" : r.message);
    data[n - 1] ^= 0x20;
  }
  free(data);
}

/* Reads IPC streams one after another over one xchg_istream, as the CLI
 * does; returns how many read to their end, the last status in *last. */
static int read_consecutive(const uint8_t *data, size_t size, xchg_stream_codec codec,
                            const result *plain, int expected, result *last) {
  xchg_istream *s = open_stream(data, size, codec);
  int good = 0;
  last->status = XCHG_EIO;
  if (s == NULL) return 0;
  for (int i = 0; i < expected; i++) {
    xchg_source *src;
    xchg_error err;
    TU_OK(xchg_source_from_istream_borrowed(s, &src, &err), err);
    *last = read_ipc(src);
    if (last->status != XCHG_OK) break;
    if (last->batches == plain->batches && last->rows == plain->rows) good++;
  }
  if (last->status == XCHG_OK) { /* and then nothing: the input is used up, verified */
    uint8_t byte;
    size_t got = 1;
    xchg_error err;
    xchg_status st = xchg_istream_read(s, &byte, 1, &got, &err);
    if (st != XCHG_OK) snprintf(last->message, sizeof last->message, "%s", err.message);
    last->status = st != XCHG_OK ? st : got != 0 ? XCHG_EFORMAT : XCHG_OK;
  }
  xchg_istream_free(s);
  return good;
}

/* Finishing a frame must leave what follows readable. */
static void check_what_follows(const codec_case *c, const uint8_t *ipc, size_t ipc_size,
                               const result *plain) {
  const char *name = case_name(c);
  /* Two codec streams, one after the other. */
  xchg_buf *one = encode(c, ipc, ipc_size);
  if (one == NULL) return;
  tu_bytes two = {0};
  tu_bytes_append(&two, xchg_buf_data(one), xchg_buf_size(one));
  tu_bytes_append(&two, xchg_buf_data(one), xchg_buf_size(one));
  xchg_buf_unref(one);
  result last;
  int good = read_consecutive(two.data, two.size, c->codec, plain, 2, &last);
  TU_CHECK(good == 2 && last.status == XCHG_OK,
           "%s: of two streams one after the other, %d read whole (%s)", name, good, last.message);
  free(two.data);

  /* Two IPC streams in one codec stream (one frame for LZ4 frames and
   * zstd): the first reader's end of stream is followed by decoded data. */
  tu_bytes ipc2 = {0};
  tu_bytes_append(&ipc2, ipc, ipc_size);
  tu_bytes_append(&ipc2, ipc, ipc_size);
  xchg_buf *both = encode(c, ipc2.data, ipc2.size);
  free(ipc2.data);
  if (both == NULL) return;
  size_t n = xchg_buf_size(both);
  good = read_consecutive(xchg_buf_data(both), n, c->codec, plain, 2, &last);
  TU_CHECK(good == 2 && last.status == XCHG_OK,
           "%s: of two IPC streams in one codec stream, %d read whole (%s)", name, good,
           last.message);
  if (c->trailer > 0) {
    /* Cut in its trailer: the first IPC stream is whole, the second not. */
    uint8_t *cut = malloc(n - 1);
    memcpy(cut, xchg_buf_data(both), n - 1);
    good = read_consecutive(cut, n - 1, c->codec, plain, 2, &last);
    TU_CHECK(good == 1 && last.status == XCHG_EIO,
             "%s: two IPC streams in one codec stream cut by a byte: %d read whole, status %d (%s)",
             name, good, (int)last.status, last.message);
    free(cut);
  }
  xchg_buf_unref(both);
}

static void check_plain_source(const uint8_t *ipc, size_t ipc_size) {
  xchg_error err;
  xchg_source *src = tu_memory_source(ipc, ipc_size);
  uint8_t head[8];
  size_t got = 0;
  TU_CHECK(xchg_source_read(src, head, sizeof head, &got, &err) == XCHG_OK && got == sizeof head);
  TU_CHECK(xchg_source_finish(src, &err) == XCHG_OK);
  TU_CHECK(xchg_source_position(src) == sizeof head);
  xchg_source_free(src);
  TU_CHECK(xchg_source_finish(NULL, &err) == XCHG_EINVAL);
}

/* Every codec case on one gold stream; the first also through a plain source. */
static void check_gold(const char *name, int plain_source) {
  char path[1200];
  tu_testdata_path(path, sizeof path, "arrow-gold/1.0.0-littleendian/%s", name);
  size_t size = 0;
  uint8_t *ipc = tu_read_file(path, &size);
  if (!TU_CHECK(ipc != NULL, "%s: cannot read it", path)) return;
  result plain = read_ipc(tu_memory_source(ipc, size));
  TU_CHECK(plain.status == XCHG_OK && plain.batches > 0, "%s: %s", path, plain.message);
  if (plain_source) check_plain_source(ipc, size);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_trailer(&cases[i], ipc, size, &plain);
    check_what_follows(&cases[i], ipc, size, &plain);
  }
  free(ipc);
  printf("codec trailer, %s: %ld damaged inputs so far, %ld errors returned, crashes = 0\n", name,
         inputs_tried, errors_returned);
}

static void nested(void) { check_gold("generated_nested.stream", 1); }
static void dictionary(void) { check_gold("generated_dictionary.stream", 0); }
static void primitive(void) { check_gold("generated_primitive.stream", 0); }

int main(int argc, char **argv) {
  static const tu_case table[] = {
      {"nested", nested},
      {"dictionary", dictionary},
      {"primitive", primitive},
  };
  return TU_MAIN(argc, argv, "codec_trailer", table);
}
