/* stream_lz4java.c — lz4-java's LZ4BlockOutputStream format, Spark's
 * default `spark.io.compression.codec`.
 *
 * Each block has a 21-byte header: "LZ4Block", a token (method 0x10 stored
 * or 0x20 LZ4, or'ed with a nibble L giving the block size 1 << (L + 10)),
 * then little-endian compressed length, decompressed length and checksum:
 * XXH32 of the decompressed bytes, seed 0x9747b28c, masked to 28 bits.  A
 * block with both lengths 0 ends a stream; Spark reads streams that follow
 * one another, so another stream may start after it. */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "codec/stream_hash.h"
#include "codec/stream_registry.h"

#define HEADER_SIZE 21
#define METHOD_RAW 0x10
#define METHOD_LZ4 0x20
#define LEVEL_BASE 10
#define XXH_SEED 0x9747b28cu
#define CHECK_MASK 0x0FFFFFFFu

typedef struct lz4java_state {
  int in_stream;       /* a stream has started and its end block is not yet seen */
  int64_t block_index; /* blocks so far, over all streams since the input (re)started */
} lz4java_state;

static xchg_status lz4java_create(void **state, xchg_error *err) {
  *state = calloc(1, sizeof(lz4java_state));
  if (*state == NULL) return xchg_errorf(err, XCHG_ENOMEM, "lz4-java: no memory");
  return XCHG_OK;
}

static void lz4java_destroy(void *state) { free(state); }

/* A new input: its blocks count from 0 in messages, as LZ4 and zstd
 * frames and snappy chunks do. */
static void lz4java_reset(void *state) { *(lz4java_state *)state = (lz4java_state){0}; }

/* Checks a header's fields against each other and the options. */
static xchg_status check_header(const xchg_istream *s, const lz4java_state *st, const uint8_t *h,
                                xchg_error *err) {
  unsigned long long at = (unsigned long long)stream_in_offset(s);
  long long block = (long long)st->block_index;
  if (memcmp(h, "LZ4Block", 8) != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "lz4-java block %lld at byte %llu: no \"LZ4Block\" magic",
                       block, at);
  unsigned method = h[8] & 0xF0u, level = h[8] & 0x0Fu;
  uint32_t clen = stream_le32(h + 9), dlen = stream_le32(h + 13);
  uint64_t max_block = (uint64_t)1 << (level + LEVEL_BASE);
  if (method != METHOD_RAW && method != METHOD_LZ4)
    return xchg_errorf(err, XCHG_EFORMAT, "lz4-java block %lld at byte %llu: unknown method 0x%02x",
                       block, at, method);
  if (dlen > max_block || clen > INT32_MAX)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "lz4-java block %lld at byte %llu: lengths %u/%u exceed the block size %llu "
                       "of level nibble %u",
                       block, at, clen, dlen, (unsigned long long)max_block, level);
  if ((clen == 0) != (dlen == 0) || (method == METHOD_RAW && clen != dlen) ||
      (method == METHOD_LZ4 && clen > (uint32_t)LZ4_COMPRESSBOUND(dlen)))
    return xchg_errorf(err, XCHG_EFORMAT,
                       "lz4-java block %lld at byte %llu: inconsistent lengths (compressed %u, "
                       "decompressed %u, method 0x%02x)",
                       block, at, clen, dlen, method);
  if (dlen > s->opts.max_block_size)
    return xchg_errorf(err, XCHG_ELIMIT,
                       "lz4-java block %lld at byte %llu: %u bytes exceed the %zu-byte block limit",
                       block, at, dlen, s->opts.max_block_size);
  if (dlen == 0 && stream_le32(h + 17) != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "lz4-java end block at byte %llu has a non-zero checksum",
                       at);
  return XCHG_OK;
}

/* The input ends `avail` bytes (fewer than a header) into the next block,
 * which a stream that is not cut short would have. */
static xchg_status header_cut_short(const xchg_istream *s, const lz4java_state *st, size_t avail,
                                    xchg_error *err) {
  unsigned long long at = (unsigned long long)stream_in_offset(s);
  if (avail == 0)
    return xchg_errorf(err, XCHG_EIO,
                       "the lz4-java stream" CUT_SHORT_AT
                       ", where block %lld or the end block would begin: no end block",
                       at, (long long)st->block_index);
  return xchg_errorf(err, XCHG_EIO,
                     "lz4-java block %lld at byte %llu" CUT_SHORT_AT ", inside its header",
                     (long long)st->block_index, at, at + avail);
}

/* Reads the next block: a data block becomes the window; an end block is
 * consumed and leaves the window empty, as does a clean end of the input
 * (which reads nothing). */
static xchg_status read_block(xchg_istream *s, lz4java_state *st, xchg_error *err) {
  xchg_status status = stream_in_fill(s, HEADER_SIZE, err);
  if (status != XCHG_OK) return status;
  size_t avail = stream_in_avail(s);
  if (avail == 0 && !st->in_stream) return XCHG_OK; /* clean end */
  /* Missing end block: lz4-java's LZ4BlockInputStream fails the same way
   * ("Stream ended prematurely") by default; only with stopOnEmptyBlock
   * off, as Spark reads concatenated streams, does it take an input that
   * ends where a header should start (even inside one) for the end.  Spark
   * writes the end block when it closes a stream, so strict costs nothing
   * and catches a stream cut at a block boundary. */
  if (avail < HEADER_SIZE) return header_cut_short(s, st, avail, err);
  status = check_header(s, st, stream_in_ptr(s), err);
  if (status != XCHG_OK) return status;
  const uint8_t *h = stream_in_ptr(s);
  uint32_t clen = stream_le32(h + 9), dlen = stream_le32(h + 13), check = stream_le32(h + 17);
  unsigned method = h[8] & 0xF0u;
  if (dlen == 0) { /* the end block */
    stream_in_consume(s, HEADER_SIZE);
    st->in_stream = 0;
    return XCHG_OK;
  }
  st->in_stream = 1;
  uint64_t block_at = stream_in_offset(s);
  status = stream_in_fill(s, HEADER_SIZE + (size_t)clen, err);
  if (status != XCHG_OK) return status;
  if (stream_in_avail(s) < HEADER_SIZE + (size_t)clen)
    return xchg_errorf(err, XCHG_EIO,
                       "lz4-java block %lld at byte %llu" CUT_SHORT_AT
                       ", %zu of the %u compressed bytes its header announces",
                       (long long)st->block_index, (unsigned long long)block_at,
                       (unsigned long long)(block_at + stream_in_avail(s)),
                       stream_in_avail(s) - HEADER_SIZE, clen);
  const uint8_t *data = stream_in_ptr(s) + HEADER_SIZE;
  const uint8_t *window = data; /* a stored block is handed out in place */
  if (method == METHOD_LZ4) {
    status = stream_out_reserve(s, dlen, err);
    if (status != XCHG_OK) return status;
    int got = LZ4_decompress_safe((const char *)data, (char *)s->out, (int)clen, (int)dlen);
    if (got != (int)dlen)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "lz4-java block %lld at byte %llu: corrupt LZ4 data (%d of %u bytes "
                         "decoded)",
                         (long long)st->block_index, (unsigned long long)block_at, got, dlen);
    window = s->out;
  }
  uint32_t actual = xchg_xxh32(window, dlen, XXH_SEED) & CHECK_MASK;
  if (actual != check)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "lz4-java block %lld at byte %llu: checksum mismatch (header 0x%08x, "
                       "data 0x%08x)",
                       (long long)st->block_index, (unsigned long long)block_at, check, actual);
  stream_in_consume(s, HEADER_SIZE + (size_t)clen);
  st->block_index++;
  stream_set_window(s, window, dlen);
  return XCHG_OK;
}

static xchg_status lz4java_refill(xchg_istream *s, void *state, xchg_error *err) {
  lz4java_state *st = state;
  for (;;) {
    uint64_t at = stream_in_offset(s);
    xchg_status status = read_block(s, st, err);
    /* Past an end block, read on: another stream may follow. */
    if (status != XCHG_OK || s->win.end != s->win_start || stream_in_offset(s) == at) return status;
  }
}

/* Blocks are whole once decoded (and checksummed); what is left of a
 * stream after its last data block is its end block, read here.  A data
 * block in its place is data that follows: it becomes the window. */
static xchg_status lz4java_finish(xchg_istream *s, void *state, xchg_error *err) {
  lz4java_state *st = state;
  return st->in_stream ? read_block(s, st, err) : XCHG_OK;
}

const stream_decoder_ops stream_lz4java_decoder = {"lz4-java",    lz4java_create, lz4java_destroy,
                                                   lz4java_reset, lz4java_refill, lz4java_finish};

/* lz4-java's level nibble: the smallest L with block_size <= 1 << (L + 10). */
static unsigned level_of(size_t block_size) {
  unsigned level = 0;
  while (((size_t)1 << (level + LEVEL_BASE)) < block_size) level++;
  return level;
}

static void put_header(uint8_t *h, unsigned token, uint32_t clen, uint32_t dlen, uint32_t check) {
  memcpy(h, "LZ4Block", 8);
  h[8] = (uint8_t)token;
  stream_put_le32(h + 9, clen);
  stream_put_le32(h + 13, dlen);
  stream_put_le32(h + 17, check);
}

xchg_status stream_encode_lz4java(const xchg_stream_encode_options *o, const uint8_t *src, size_t n,
                                  stream_sink *sink, xchg_error *err) {
  size_t block_size = o->block_size ? o->block_size : 32 * 1024;
  if (block_size < 64 || block_size > ((size_t)1 << 25))
    return xchg_errorf(err, XCHG_EINVAL, "lz4-java encode: block size %zu outside [64, 32 MiB]",
                       block_size);
  unsigned level = level_of(block_size);
  for (size_t off = 0; off < n; off += block_size) {
    size_t len = n - off < block_size ? n - off : block_size;
    uint8_t *h = stream_sink_reserve(sink, HEADER_SIZE + (size_t)LZ4_compressBound((int)len));
    if (h == NULL) return xchg_errorf(err, XCHG_ENOMEM, "lz4-java encode: no memory");
    uint32_t check = xchg_xxh32(src + off, len, XXH_SEED) & CHECK_MASK;
    int clen = LZ4_compress_default((const char *)src + off, (char *)h + HEADER_SIZE, (int)len,
                                    LZ4_compressBound((int)len));
    if (clen <= 0 || (size_t)clen >= len) { /* incompressible: store it, as lz4-java does */
      memcpy(h + HEADER_SIZE, src + off, len);
      put_header(h, METHOD_RAW | level, (uint32_t)len, (uint32_t)len, check);
      sink->size += HEADER_SIZE + len;
    } else {
      put_header(h, METHOD_LZ4 | level, (uint32_t)clen, (uint32_t)len, check);
      sink->size += HEADER_SIZE + (size_t)clen;
    }
  }
  uint8_t *end = stream_sink_reserve(sink, HEADER_SIZE);
  if (end == NULL) return xchg_errorf(err, XCHG_ENOMEM, "lz4-java encode: no memory");
  put_header(end, METHOD_RAW | level, 0, 0, 0);
  sink->size += HEADER_SIZE;
  return XCHG_OK;
}
