/* stream_snappy.c — the two snappy stream formats.
 *
 * snappy-java (SnappyOutputStream, Spark's "snappy" codec): a 16-byte
 * header, 0x82 "SNAPPY" 0 then big-endian version 1 and compatible version
 * 1, then chunks, each a big-endian int32 length and one raw snappy block.
 * Streams may follow one another: a header may appear where a chunk length
 * is expected (a length can never start with 0x82, it would be negative).
 * There is no end marker, so a stream cut exactly between chunks cannot be
 * told from a complete one.
 *
 * The snappy framing format (Comet's "SNAP" blocks): a stream identifier
 * chunk, then chunks of one type byte and a 24-bit little-endian length;
 * data chunks carry the masked CRC-32C of their uncompressed bytes, which is
 * verified. */
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "codec/stream_hash.h"
#include "codec/stream_registry.h"

#define JAVA_HEADER_SIZE 16
#define FRAMED_MAX_CHUNK 65536

static const uint8_t java_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
static const uint8_t framed_stream_id[10] = {0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y'};

typedef struct snappy_state {
  int in_stream;       /* snappy-java: header seen; framed: stream identifier seen */
  int64_t chunk_index; /* chunks so far */
} snappy_state;

static xchg_status snappy_create(void **state, xchg_error *err) {
  *state = calloc(1, sizeof(snappy_state));
  if (*state == NULL) return xchg_errorf(err, XCHG_ENOMEM, "snappy: no memory");
  return XCHG_OK;
}

static void snappy_destroy(void *state) { free(state); }

static void snappy_reset(void *state) { *(snappy_state *)state = (snappy_state){0}; }

/* Decompresses one raw snappy block into *out (stream_out_take). */
static xchg_status uncompress_block(xchg_istream *s, const char *what, int64_t chunk, uint64_t at,
                                    const uint8_t *data, size_t len, size_t max_len, uint8_t **out,
                                    size_t *out_len, xchg_error *err) {
  size_t ulen = 0;
  if (snappy_uncompressed_length((const char *)data, len, &ulen) != SNAPPY_OK)
    return xchg_errorf(err, XCHG_EFORMAT, "%s chunk %lld at byte %llu: corrupt snappy block header",
                       what, (long long)chunk, (unsigned long long)at);
  if (ulen > max_len)
    return xchg_errorf(err, max_len == s->opts.max_block_size ? XCHG_ELIMIT : XCHG_EFORMAT,
                       "%s chunk %lld at byte %llu: %zu decompressed bytes exceed the limit of %zu",
                       what, (long long)chunk, (unsigned long long)at, ulen, max_len);
  size_t room;
  xchg_status st = stream_out_take(s, ulen > 0 ? ulen : 1, out, &room, err);
  if (st != XCHG_OK) return st;
  /* SNAPPY_OK also means exactly ulen bytes were written: libsnappy fails a
   * block whose data decode to any length but its header's (which
   * snappy_uncompressed_length read above), and sets got to that length. */
  size_t got = ulen;
  if (snappy_uncompress((const char *)data, len, (char *)*out, &got) != SNAPPY_OK)
    return xchg_errorf(err, XCHG_EFORMAT, "%s chunk %lld at byte %llu: corrupt snappy data", what,
                       (long long)chunk, (unsigned long long)at);
  *out_len = ulen;
  return XCHG_OK;
}

/* ---- snappy-java ------------------------------------------------------- */

static xchg_status read_java_header(xchg_istream *s, xchg_error *err) {
  xchg_status st = stream_in_fill(s, JAVA_HEADER_SIZE, err);
  if (st != XCHG_OK) return st;
  unsigned long long at = (unsigned long long)stream_in_offset(s);
  if (stream_in_avail(s) < JAVA_HEADER_SIZE)
    return xchg_errorf(err, XCHG_EIO, "snappy-java stream header at byte %llu" CUT_SHORT_AT, at,
                       at + stream_in_avail(s));
  const uint8_t *h = stream_in_ptr(s);
  if (memcmp(h, java_magic, sizeof java_magic) != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "snappy-java: no stream header at byte %llu", at);
  uint32_t compatible = stream_be32(h + 12);
  if (compatible != 1)
    return xchg_errorf(err, XCHG_ENOTSUP,
                       "snappy-java stream at byte %llu needs format version %u (only 1 is known)",
                       at, compatible);
  stream_in_consume(s, JAVA_HEADER_SIZE);
  return XCHG_OK;
}

static xchg_status snappyjava_refill(xchg_istream *s, void *state, xchg_error *err) {
  snappy_state *ss = state;
  for (;;) {
    xchg_status st = stream_in_fill(s, 4, err);
    if (st != XCHG_OK) return st;
    size_t avail = stream_in_avail(s);
    if (avail == 0) return XCHG_OK; /* chunks have no end marker: a boundary is an end */
    if (!ss->in_stream || stream_in_ptr(s)[0] == java_magic[0]) {
      st = read_java_header(s, err);
      if (st != XCHG_OK) return st;
      ss->in_stream = 1;
      continue;
    }
    uint64_t at = stream_in_offset(s);
    if (avail < 4)
      return xchg_errorf(
          err, XCHG_EIO, "snappy-java chunk %lld at byte %llu" CUT_SHORT_AT ", inside its length",
          (long long)ss->chunk_index, (unsigned long long)at, (unsigned long long)(at + avail));
    uint32_t len = stream_be32(stream_in_ptr(s));
    if (len == 0 || len > INT32_MAX)
      return xchg_errorf(err, XCHG_EFORMAT, "snappy-java chunk %lld at byte %llu: bad length %u",
                         (long long)ss->chunk_index, (unsigned long long)at, len);
    if (len > snappy_max_compressed_length(s->opts.max_block_size))
      return xchg_errorf(err, XCHG_ELIMIT,
                         "snappy-java chunk %lld at byte %llu: %u compressed bytes exceed what a "
                         "%zu-byte block can take",
                         (long long)ss->chunk_index, (unsigned long long)at, len,
                         s->opts.max_block_size);
    st = stream_in_fill(s, 4 + (size_t)len, err);
    if (st != XCHG_OK) return st;
    if (stream_in_avail(s) < 4 + (size_t)len)
      return xchg_errorf(err, XCHG_EIO,
                         "snappy-java chunk %lld at byte %llu" CUT_SHORT_AT
                         ", %zu of the %u bytes its length announces",
                         (long long)ss->chunk_index, (unsigned long long)at,
                         (unsigned long long)(at + stream_in_avail(s)), stream_in_avail(s) - 4,
                         len);
    size_t ulen = 0;
    uint8_t *out;
    st = uncompress_block(s, "snappy-java", ss->chunk_index, at, stream_in_ptr(s) + 4, len,
                          s->opts.max_block_size, &out, &ulen, err);
    if (st != XCHG_OK) return st;
    stream_in_consume(s, 4 + (size_t)len);
    ss->chunk_index++;
    if (ulen == 0) continue;
    stream_set_window(s, out, ulen);
    return XCHG_OK;
  }
}

/* No finish: chunks are whole once decoded, and the stream has no end
 * marker to read. */
const stream_decoder_ops stream_snappyjava_decoder = {
    "snappy-java", snappy_create, snappy_destroy, snappy_reset, snappyjava_refill, NULL};

/* ---- the snappy framing format ----------------------------------------- */

static xchg_status check_crc(const snappy_state *ss, uint64_t at, const uint8_t *data, size_t n,
                             uint32_t expected, xchg_error *err) {
  uint32_t actual = stream_snappy_mask_crc(xchg_crc32c(data, n));
  if (actual == expected) return XCHG_OK;
  return xchg_errorf(err, XCHG_EFORMAT,
                     "snappy framed chunk %lld at byte %llu: checksum mismatch (chunk 0x%08x, "
                     "data 0x%08x)",
                     (long long)ss->chunk_index, (unsigned long long)at, expected, actual);
}

static xchg_status snappyframed_refill(xchg_istream *s, void *state, xchg_error *err) {
  snappy_state *ss = state;
  for (;;) {
    xchg_status st = stream_in_fill(s, 4, err);
    if (st != XCHG_OK) return st;
    size_t avail = stream_in_avail(s);
    if (avail == 0) return XCHG_OK;
    uint64_t at = stream_in_offset(s);
    long long chunk = (long long)ss->chunk_index;
    if (avail < 4)
      return xchg_errorf(err, XCHG_EIO,
                         "snappy framed chunk %lld at byte %llu" CUT_SHORT_AT ", inside its header",
                         chunk, (unsigned long long)at, (unsigned long long)(at + avail));
    const uint8_t *p = stream_in_ptr(s);
    unsigned type = p[0];
    size_t len = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16;
    st = stream_in_fill(s, 4 + len, err);
    if (st != XCHG_OK) return st;
    if (stream_in_avail(s) < 4 + len)
      return xchg_errorf(err, XCHG_EIO,
                         "snappy framed chunk %lld at byte %llu" CUT_SHORT_AT
                         ", %zu of the %zu bytes its header announces",
                         chunk, (unsigned long long)at,
                         (unsigned long long)(at + stream_in_avail(s)), stream_in_avail(s) - 4,
                         len);
    p = stream_in_ptr(s);
    if (!ss->in_stream && type != 0xff)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "snappy framed: byte %llu does not start with a stream identifier",
                         (unsigned long long)at);
    const uint8_t *window = NULL;
    size_t ulen = 0;
    if (type == 0xff) {
      if (len + 4 != sizeof framed_stream_id || memcmp(p, framed_stream_id, len + 4) != 0)
        return xchg_errorf(err, XCHG_EFORMAT, "snappy framed: bad stream identifier at byte %llu",
                           (unsigned long long)at);
      ss->in_stream = 1;
    } else if (type == 0x00 || type == 0x01) {
      if (len < 4)
        return xchg_errorf(err, XCHG_EFORMAT,
                           "snappy framed chunk %lld at byte %llu: %zu bytes, too short for a "
                           "checksum",
                           chunk, (unsigned long long)at, len);
      uint32_t crc = stream_le32(p + 4);
      if (type == 0x00) {
        uint8_t *out;
        st = uncompress_block(s, "snappy framed", ss->chunk_index, at, p + 8, len - 4,
                              FRAMED_MAX_CHUNK, &out, &ulen, err);
        if (st != XCHG_OK) return st;
        window = out;
      } else {
        ulen = len - 4;
        if (ulen > FRAMED_MAX_CHUNK)
          return xchg_errorf(err, XCHG_EFORMAT,
                             "snappy framed chunk %lld at byte %llu: %zu stored bytes exceed 65536",
                             chunk, (unsigned long long)at, ulen);
        window = p + 8; /* stored: handed out in place */
      }
      st = check_crc(ss, at, window, ulen, crc, err);
      if (st != XCHG_OK) return st;
    } else if (type < 0x80) {
      return xchg_errorf(err, XCHG_EFORMAT,
                         "snappy framed chunk %lld at byte %llu: reserved unskippable type 0x%02x",
                         chunk, (unsigned long long)at, type);
    } /* else: padding or a reserved skippable chunk */
    stream_in_consume(s, 4 + len);
    ss->chunk_index++;
    if (ulen > 0) {
      stream_set_window(s, window, ulen);
      return XCHG_OK;
    }
  }
}

/* No finish either: chunks are whole and checksummed once decoded, and
 * the framing format has no end marker. */
const stream_decoder_ops stream_snappyframed_decoder = {
    "snappy framed", snappy_create, snappy_destroy, snappy_reset, snappyframed_refill, NULL};

/* ---- encoders ---------------------------------------------------------- */

xchg_status stream_encode_snappyjava(const xchg_stream_encode_options *o, const uint8_t *src,
                                     size_t n, stream_sink *sink, xchg_error *err) {
  size_t block_size = o->block_size ? o->block_size : 32 * 1024;
  if (block_size > INT32_MAX / 2)
    return xchg_errorf(err, XCHG_EINVAL, "snappy-java encode: block size %zu too big", block_size);
  uint8_t *h = stream_sink_reserve(sink, JAVA_HEADER_SIZE);
  if (h == NULL) return xchg_errorf(err, XCHG_ENOMEM, "snappy-java encode: no memory");
  memcpy(h, java_magic, sizeof java_magic);
  stream_put_be32(h + 8, 1);
  stream_put_be32(h + 12, 1);
  sink->size += JAVA_HEADER_SIZE;
  for (size_t off = 0; off < n; off += block_size) {
    size_t len = n - off < block_size ? n - off : block_size;
    size_t clen = snappy_max_compressed_length(len);
    uint8_t *c = stream_sink_reserve(sink, 4 + clen);
    if (c == NULL) return xchg_errorf(err, XCHG_ENOMEM, "snappy-java encode: no memory");
    if (snappy_compress((const char *)src + off, len, (char *)c + 4, &clen) != SNAPPY_OK)
      return xchg_errorf(err, XCHG_EINVAL, "snappy-java encode: snappy_compress failed");
    stream_put_be32(c, (uint32_t)clen);
    sink->size += 4 + clen;
  }
  return XCHG_OK;
}

static void put_framed_header(uint8_t *c, unsigned type, size_t len) {
  c[0] = (uint8_t)type;
  c[1] = (uint8_t)len;
  c[2] = (uint8_t)(len >> 8);
  c[3] = (uint8_t)(len >> 16);
}

xchg_status stream_encode_snappyframed(const xchg_stream_encode_options *o, const uint8_t *src,
                                       size_t n, stream_sink *sink, xchg_error *err) {
  xchg_status st = stream_sink_append(sink, framed_stream_id, sizeof framed_stream_id, err);
  if (st != XCHG_OK) return st;
  for (size_t off = 0; off < n; off += FRAMED_MAX_CHUNK) {
    size_t len = n - off < FRAMED_MAX_CHUNK ? n - off : FRAMED_MAX_CHUNK;
    size_t clen = snappy_max_compressed_length(len);
    uint8_t *c = stream_sink_reserve(sink, 8 + (clen > len ? clen : len));
    if (c == NULL) return xchg_errorf(err, XCHG_ENOMEM, "snappy framed encode: no memory");
    stream_put_le32(c + 4, stream_snappy_mask_crc(xchg_crc32c(src + off, len)));
    if (snappy_compress((const char *)src + off, len, (char *)c + 8, &clen) != SNAPPY_OK)
      return xchg_errorf(err, XCHG_EINVAL, "snappy framed encode: snappy_compress failed");
    if (clen < len - len / 8) {
      put_framed_header(c, 0x00, 4 + clen);
    } else { /* not worth it: store the bytes */
      memcpy(c + 8, src + off, len);
      clen = len;
      put_framed_header(c, 0x01, 4 + len);
    }
    sink->size += 8 + clen;
  }
  return XCHG_OK;
}
