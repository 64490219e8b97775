/* block.c — LZ4 frame and zstd block codecs with one context per thread.
 *
 * Creating a zstd context costs more than decompressing a small buffer,
 * and Arrow bodies are made of many small buffers; so each thread keeps its
 * contexts for its lifetime (freed by a pthread key destructor when the
 * thread exits).  LZ4 frames need none: lz4_frames.c decodes them.
 *
 * A declared decompressed size is a claim from the wire: before a reader
 * allocates that much, xchg_block_check_size holds it against what the
 * compressed bytes can produce at all (each format's largest expansion,
 * and zstd's stated content sizes). */
#include <lz4frame.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/args.h"
#include "base/tally.h"
#include "codec/lz4_frames.h"
#include "codec/lz4f_words.h"
#include "xchg/codec.h"
#include "xchg/testing.h"

/* A cache line: each thread's counters on their own, so that threads
 * decompressing side by side do not contend for one. */
#define CONTEXTS_ALIGN 64

typedef struct codec_contexts {
  ZSTD_DCtx *zstd_d;
  ZSTD_CCtx *zstd_c;
  /* This thread's decompressions (DECOMPRESS_CALLS, DECOMPRESSED_BYTES),
   * for xchg_block_decompress_calls and _bytes. */
  tally_slot counts;
} codec_contexts;

enum { DECOMPRESS_CALLS, DECOMPRESSED_BYTES };

static pthread_key_t contexts_key;
static pthread_once_t contexts_once = PTHREAD_ONCE_INIT;
static tally counts = TALLY_INIT;

static void free_contexts(void *p) {
  codec_contexts *c = p;
  tally_leave(&counts, &c->counts);
  ZSTD_freeDCtx(c->zstd_d);
  ZSTD_freeCCtx(c->zstd_c);
  free(c);
}

static void make_key(void) { pthread_key_create(&contexts_key, free_contexts); }

static codec_contexts *new_contexts(void) {
  size_t size = (sizeof(codec_contexts) + CONTEXTS_ALIGN - 1) / CONTEXTS_ALIGN * CONTEXTS_ALIGN;
  void *p;
  if (posix_memalign(&p, CONTEXTS_ALIGN, size) != 0) return NULL;
  codec_contexts *c = p;
  memset(c, 0, sizeof *c);
  if (pthread_setspecific(contexts_key, c) != 0) {
    free(c);
    return NULL;
  }
  tally_join(&counts, &c->counts);
  return c;
}

static codec_contexts *thread_contexts(void) {
  pthread_once(&contexts_once, make_key);
  codec_contexts *c = pthread_getspecific(contexts_key);
  return c ? c : new_contexts();
}

const char *xchg_block_codec_name(xchg_block_codec codec) {
  switch (codec) {
    case XCHG_BLOCK_NONE: return "none";
    case XCHG_BLOCK_LZ4_FRAME: return "lz4";
    case XCHG_BLOCK_ZSTD: return "zstd";
  }
  return "unknown";
}

static xchg_status zstd_decompress(codec_contexts *c, const void *src, size_t src_size, void *dst,
                                   size_t dst_size, xchg_error *err) {
  if (!c->zstd_d && !(c->zstd_d = ZSTD_createDCtx()))
    return xchg_errorf(err, XCHG_ENOMEM, "cannot create a zstd decompression context");
  size_t n = ZSTD_decompressDCtx(c->zstd_d, dst, dst_size, src, src_size);
  if (ZSTD_isError(n))
    return xchg_errorf(err, XCHG_EFORMAT, "corrupt zstd data (declared %zu bytes): %s", dst_size,
                       ZSTD_getErrorName(n));
  if (n != dst_size)
    return xchg_errorf(err, XCHG_EFORMAT, "zstd data decompressed to %zu bytes, declared %zu", n,
                       dst_size);
  return XCHG_OK;
}

xchg_status xchg_block_decompress(xchg_block_codec codec, const void *src, size_t src_size,
                                  void *dst, size_t dst_size, xchg_error *err) {
  static const char who[] = "xchg_block_decompress";
  if (src == NULL && src_size > 0) return base_null_span(who, "src", src_size, err);
  if (dst == NULL && dst_size > 0) return base_null_span(who, "dst", dst_size, err);
  codec_contexts *c = thread_contexts();
  if (!c) return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate codec contexts");
  tally_add(&c->counts, DECOMPRESS_CALLS, 1);
  xchg_status st;
  switch (codec) {
    case XCHG_BLOCK_LZ4_FRAME:
      st = codec_lz4_frames_decode(src, src_size, dst, dst_size, err);
      break;
    case XCHG_BLOCK_ZSTD: st = zstd_decompress(c, src, src_size, dst, dst_size, err); break;
    case XCHG_BLOCK_NONE:
      st = src_size == dst_size
               ? XCHG_OK
               : xchg_errorf(err, XCHG_EFORMAT, "uncompressed data of %zu bytes, declared %zu",
                             src_size, dst_size);
      if (st == XCHG_OK && dst_size > 0) memcpy(dst, src, dst_size);
      break;
    default: return xchg_errorf(err, XCHG_EINVAL, "no block codec %d", (int)codec);
  }
  if (st == XCHG_OK) tally_add(&c->counts, DECOMPRESSED_BYTES, (int64_t)dst_size);
  return st;
}

/* An LZ4 sequence is a token, literals and a 2-byte match offset; the
 * match is 4 + 15 bytes long plus 255 per extra length byte.  So a
 * sequence of n input bytes yields less than 255 n bytes, and the frame
 * around the blocks only adds input: no LZ4 frame expands more than 255x. */
#define LZ4_MAX_RATIO 255
/* A zstd block is a 3-byte header and at least one byte of content (an
 * RLE block: that byte repeated), and regenerates at most 128 KiB; frame
 * headers only add input: no zstd frame expands more than 128 KiB / 4. */
#define ZSTD_MAX_RATIO (ZSTD_BLOCKSIZE_MAX / 4)

size_t xchg_block_max_decompressed_size(xchg_block_codec codec, size_t src_size) {
  size_t ratio = codec == XCHG_BLOCK_LZ4_FRAME ? LZ4_MAX_RATIO
                 : codec == XCHG_BLOCK_ZSTD    ? ZSTD_MAX_RATIO
                                               : 1;
  return src_size > SIZE_MAX / ratio ? SIZE_MAX : src_size * ratio;
}

/* The content sizes the zstd frame headers of src state, summed; 0 when
 * some frame does not state its size (or cannot be parsed: decompression
 * will say why). */
static int zstd_stated_size(const uint8_t *src, size_t src_size, uint64_t *total) {
  *total = 0;
  for (size_t pos = 0; pos < src_size;) {
    size_t frame = ZSTD_findFrameCompressedSize(src + pos, src_size - pos);
    if (ZSTD_isError(frame) || frame == 0) return 0;
    unsigned long long content = ZSTD_getFrameContentSize(src + pos, frame);
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR ||
        content > UINT64_MAX - *total)
      return 0;
    *total += content;
    pos += frame;
  }
  return 1;
}

xchg_status xchg_block_check_size(xchg_block_codec codec, const void *src, size_t src_size,
                                  size_t dst_size, xchg_error *err) {
  if (src == NULL && src_size > 0)
    return base_null_span("xchg_block_check_size", "src", src_size, err);
  uint64_t most = xchg_block_max_decompressed_size(codec, src_size);
  if ((uint64_t)dst_size > most)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "declared uncompressed length %zu is implausible: %zu compressed bytes of "
                       "%s decompress to at most %llu bytes",
                       dst_size, src_size, xchg_block_codec_name(codec), (unsigned long long)most);
  uint64_t stated;
  if (codec == XCHG_BLOCK_ZSTD && zstd_stated_size(src, src_size, &stated) && stated != dst_size)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "declared uncompressed length %zu disagrees with the %llu bytes that the "
                       "zstd frame headers of its %zu compressed bytes state",
                       dst_size, (unsigned long long)stated, src_size);
  return XCHG_OK;
}

/* XCHG_BLOCK_NONE: the bytes as they are, in a buffer of their own. */
static xchg_status copy_block(const void *src, size_t src_size, xchg_buf **out, xchg_error *err) {
  xchg_buf *b = xchg_buf_alloc(src_size);
  if (!b) return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate %zu bytes", src_size);
  if (src_size > 0) memcpy(xchg_buf_mutable_data(b), src, src_size);
  *out = b;
  return XCHG_OK;
}

static xchg_status lz4_compress(int level, const void *src, size_t src_size, xchg_buf **out,
                                xchg_error *err) {
  LZ4F_preferences_t prefs = {0};
  prefs.compressionLevel = level;
  prefs.frameInfo.contentSize = src_size;
  /* Independent blocks, as Arrow Java writes them: lz4-java's frame decoder
   * (the JVM engines' LZ4) refuses linked ones. */
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  size_t bound = LZ4F_compressFrameBound(src_size, &prefs);
  xchg_buf *b = xchg_buf_alloc(bound);
  if (!b) return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate %zu bytes for LZ4 output", bound);
  size_t n = LZ4F_compressFrame(xchg_buf_mutable_data(b), bound, src, src_size, &prefs);
  if (LZ4F_isError(n)) {
    xchg_buf_unref(b);
    return xchg_errorf(err, XCHG_EINVAL, "LZ4 compression failed: %s", codec_lz4f_error_words(n));
  }
  *out = xchg_buf_slice(b, 0, n);
  xchg_buf_unref(b);
  return *out ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

static xchg_status zstd_compress(codec_contexts *c, int level, const void *src, size_t src_size,
                                 xchg_buf **out, xchg_error *err) {
  if (!c->zstd_c && !(c->zstd_c = ZSTD_createCCtx()))
    return xchg_errorf(err, XCHG_ENOMEM, "cannot create a zstd compression context");
  size_t bound = ZSTD_compressBound(src_size);
  xchg_buf *b = xchg_buf_alloc(bound);
  if (!b) return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate %zu bytes for zstd output", bound);
  size_t n = ZSTD_compressCCtx(c->zstd_c, xchg_buf_mutable_data(b), bound, src, src_size,
                               level ? level : ZSTD_CLEVEL_DEFAULT);
  if (ZSTD_isError(n)) {
    xchg_buf_unref(b);
    return xchg_errorf(err, XCHG_EINVAL, "zstd compression failed: %s", ZSTD_getErrorName(n));
  }
  *out = xchg_buf_slice(b, 0, n);
  xchg_buf_unref(b);
  return *out ? XCHG_OK : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
}

/* LZ4F takes any int, but makes levels above LZ4HC_CLEVEL_MAX that one and
 * negative ones an "acceleration" of the fast compressor: only the levels
 * that differ are offered. */
#define LZ4_LEVEL_MAX 12

void xchg_block_codec_levels(xchg_block_codec codec, int *min, int *max) {
  if (min) *min = codec == XCHG_BLOCK_ZSTD ? ZSTD_minCLevel() : 0;
  if (max)
    *max = codec == XCHG_BLOCK_ZSTD        ? ZSTD_maxCLevel()
           : codec == XCHG_BLOCK_LZ4_FRAME ? LZ4_LEVEL_MAX
                                           : 0;
}

xchg_status xchg_block_compress(xchg_block_codec codec, int level, const void *src, size_t src_size,
                                xchg_buf **out, xchg_error *err) {
  static const char who[] = "xchg_block_compress";
  if (!out) return base_null_argument(who, "out", err);
  *out = NULL;
  if (src == NULL && src_size > 0) return base_null_span(who, "src", src_size, err);
  int min, max;
  xchg_block_codec_levels(codec, &min, &max);
  if (level < min || level > max)
    return xchg_errorf(err, XCHG_EINVAL, "compression level %d is out of %s's range, %d to %d",
                       level, xchg_block_codec_name(codec), min, max);
  codec_contexts *c = thread_contexts();
  if (!c) return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate codec contexts");
  switch (codec) {
    case XCHG_BLOCK_LZ4_FRAME: return lz4_compress(level, src, src_size, out, err);
    case XCHG_BLOCK_ZSTD: return zstd_compress(c, level, src, src_size, out, err);
    case XCHG_BLOCK_NONE: return copy_block(src, src_size, out, err);
    default: return xchg_errorf(err, XCHG_EINVAL, "no block codec %d", (int)codec);
  }
}

/* Counts of the moment: threads alive may be counting as they are read. */
int64_t xchg_block_decompress_calls(void) { return tally_sum(&counts, DECOMPRESS_CALLS); }
int64_t xchg_block_decompressed_bytes(void) { return tally_sum(&counts, DECOMPRESSED_BYTES); }
