/* lz4_frames.c — see lz4_frames.h.  Written from lz4's frame format
 * specification (doc/lz4_Frame_format.md).
 *
 * liblz4's frame decoder (LZ4F) decodes straight into the caller's buffer
 * only while the room left there is at least the frame's maximum block size
 * (64 KiB to 4 MiB), and into its own buffer, copied out after, otherwise:
 * most Arrow body buffers are smaller than that, so nearly every one would
 * pay a copy and LZ4F's per-frame set-up.  Here the room is known exactly
 * (the declared uncompressed length), so each block is decoded by
 * LZ4_decompress_safe_usingDict straight into place, the frame's output so
 * far being the dictionary of linked blocks. */
#include "codec/lz4_frames.h"

#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "codec/stream_hash.h"
#include "codec/stream_window.h"

#define LZ4_FRAME_MAGIC 0x184D2204u
/* A linked block refers back at most this far into the frame's output. */
#define LZ4_WINDOW 65536u
/* The high bit of a block size: the block is stored uncompressed. */
#define LZ4_BLOCK_RAW 0x80000000u

/* FLG, the first byte of the frame descriptor. */
#define FLG_VERSION_SHIFT 6
#define FLG_INDEPENDENT 0x20u
#define FLG_BLOCK_CHECKSUM 0x10u
#define FLG_CONTENT_SIZE 0x08u
#define FLG_CONTENT_CHECKSUM 0x04u
#define FLG_RESERVED 0x02u
#define FLG_DICT_ID 0x01u
/* BD, the second: the maximum block size in bits 6-4, the rest reserved. */
#define BD_RESERVED 0x8Fu

typedef struct lz4_cursor {
  const uint8_t *src;
  size_t src_size, pos; /* pos: the next compressed byte to read */
  uint8_t *dst;
  size_t dst_size, out; /* out: the bytes written to dst so far */
  xchg_error *err;
} lz4_cursor;

typedef struct lz4_frame {
  uint8_t flg;
  size_t block_max;
  size_t header_at; /* compressed offset of the frame's magic number */
  size_t out_start; /* where in dst its output starts */
  uint64_t content_size;
} lz4_frame;

static xchg_status corrupt(const lz4_cursor *c, size_t at, const char *why) {
  return xchg_errorf(c->err, XCHG_EFORMAT, "corrupt LZ4 frame at compressed byte %zu: %s", at, why);
}

/* Checks that the next n compressed bytes, the field what, are there. */
static xchg_status need(const lz4_cursor *c, size_t n, const char *what) {
  if (c->src_size - c->pos >= n) return XCHG_OK;
  return xchg_errorf(c->err, XCHG_EFORMAT,
                     "LZ4 frame truncated after %zu of %zu compressed bytes: %s needs %zu", c->pos,
                     c->src_size, what, n);
}

static xchg_status too_long(const lz4_cursor *c, size_t block_at) {
  return xchg_errorf(c->err, XCHG_EFORMAT,
                     "LZ4 data decompresses to more than the declared %zu bytes (the block at "
                     "compressed byte %zu does not fit)",
                     c->dst_size, block_at);
}

/* Reads the frame descriptor and its checksum; c->pos is past the magic. */
static xchg_status read_descriptor(lz4_cursor *c, lz4_frame *f) {
  xchg_status st = need(c, 3, "the frame descriptor");
  if (st != XCHG_OK) return st;
  const uint8_t *d = c->src + c->pos;
  f->flg = d[0];
  if (f->flg >> FLG_VERSION_SHIFT != 1)
    return corrupt(c, c->pos, "the frame header's version is not 1");
  if ((f->flg & FLG_RESERVED) || (d[1] & BD_RESERVED))
    return corrupt(c, c->pos, "a reserved bit of the frame header is set (damaged header)");
  if (f->flg & FLG_DICT_ID)
    return corrupt(c, c->pos,
                   "the frame needs a dictionary (its dictionary ID flag is set), which Arrow "
                   "bodies never use");
  unsigned size_id = d[1] >> 4;
  if (size_id < 4) return corrupt(c, c->pos + 1, "the frame header's block size is invalid");
  f->block_max = (size_t)1 << (8 + 2 * size_id); /* 4: 64 KiB ... 7: 4 MiB */
  size_t descriptor = (f->flg & FLG_CONTENT_SIZE) ? 10 : 2;
  if ((st = need(c, descriptor + 1, "the frame descriptor")) != XCHG_OK) return st;
  if (f->flg & FLG_CONTENT_SIZE) f->content_size = stream_le64(d + 2);
  if (((xchg_xxh32(d, descriptor, 0) >> 8) & 0xFFu) != d[descriptor])
    return corrupt(c, c->pos + descriptor,
                   "the frame header's checksum does not match it (damaged header)");
  c->pos += descriptor + 1;
  return XCHG_OK;
}

/* Whether a block that did not decode into the room left would decode in
 * the room of a whole block: then the output is longer than declared,
 * rather than the block damaged.  Only ever on the way to an error. */
static xchg_status decodes_in_a_block(const uint8_t *block, size_t size, const lz4_frame *f,
                                      const char *dict, int dict_size, int *yes, xchg_error *err) {
  char *scratch = malloc(f->block_max);
  if (!scratch)
    return xchg_errorf(err, XCHG_ENOMEM, "cannot allocate %zu bytes to check an LZ4 block",
                       f->block_max);
  *yes = LZ4_decompress_safe_usingDict((const char *)block, scratch, (int)size, (int)f->block_max,
                                       dict, dict_size) >= 0;
  free(scratch);
  return XCHG_OK;
}

static xchg_status decode_block(lz4_cursor *c, const lz4_frame *f, const uint8_t *block,
                                size_t size, size_t block_at) {
  size_t room = c->dst_size - c->out;
  size_t cap = room < f->block_max ? room : f->block_max;
  /* Linked blocks refer back into the frame's output before them: that
   * output, immediately before the block's in dst, is the dictionary. */
  size_t dict_start = c->out - f->out_start > LZ4_WINDOW ? c->out - LZ4_WINDOW : f->out_start;
  size_t dict_size = (f->flg & FLG_INDEPENDENT) ? 0 : c->out - dict_start;
  const char *dict = (const char *)c->dst + dict_start;
  int n = LZ4_decompress_safe_usingDict((const char *)block, (char *)c->dst + c->out, (int)size,
                                        (int)cap, dict, (int)dict_size);
  if (n >= 0) {
    c->out += (size_t)n;
    return XCHG_OK;
  }
  int longer = 0;
  if (cap < f->block_max) {
    xchg_status st = decodes_in_a_block(block, size, f, dict, (int)dict_size, &longer, c->err);
    if (st != XCHG_OK) return st;
  }
  if (longer) return too_long(c, block_at);
  return corrupt(c, block_at, "a compressed block is damaged: it does not decompress");
}

static xchg_status copy_block(lz4_cursor *c, const uint8_t *block, size_t size, size_t block_at) {
  if (size > c->dst_size - c->out) return too_long(c, block_at);
  memcpy(c->dst + c->out, block, size);
  c->out += size;
  return XCHG_OK;
}

/* Decodes the blocks of frame f up to and with its end mark. */
static xchg_status decode_blocks(lz4_cursor *c, const lz4_frame *f) {
  size_t checksum = (f->flg & FLG_BLOCK_CHECKSUM) ? 4 : 0;
  for (;;) {
    xchg_status st = need(c, 4, "a block size");
    if (st != XCHG_OK) return st;
    size_t block_at = c->pos;
    uint32_t word = stream_le32(c->src + c->pos);
    c->pos += 4;
    if (word == 0) return XCHG_OK; /* the end mark */
    size_t size = word & ~LZ4_BLOCK_RAW;
    if (size > f->block_max)
      return corrupt(c, block_at, "a block is larger than the frame header's block size");
    if ((st = need(c, size + checksum, "a block")) != XCHG_OK) return st;
    const uint8_t *block = c->src + c->pos;
    if (checksum && xchg_xxh32(block, size, 0) != stream_le32(block + size))
      return corrupt(c, block_at, "a block's checksum does not match its bytes (damaged data)");
    st = (word & LZ4_BLOCK_RAW) ? copy_block(c, block, size, block_at)
                                : decode_block(c, f, block, size, block_at);
    if (st != XCHG_OK) return st;
    c->pos += size + checksum;
  }
}

/* Decodes the frame whose magic number is at c->pos. */
static xchg_status decode_frame(lz4_cursor *c) {
  lz4_frame f = {.header_at = c->pos, .out_start = c->out};
  c->pos += 4;
  xchg_status st = read_descriptor(c, &f);
  if (st == XCHG_OK) st = decode_blocks(c, &f);
  if (st != XCHG_OK) return st;
  size_t produced = c->out - f.out_start;
  /* A stated 0 means "unknown", as liblz4 (the reference decoder) reads
   * it: a writer that sets the flag before it knows the size writes 0. */
  if ((f.flg & FLG_CONTENT_SIZE) && f.content_size != 0 && f.content_size != produced)
    return xchg_errorf(c->err, XCHG_EFORMAT,
                       "corrupt LZ4 frame at compressed byte %zu: the frame holds %zu bytes, its "
                       "header declares %llu",
                       f.header_at, produced, (unsigned long long)f.content_size);
  if (f.flg & FLG_CONTENT_CHECKSUM) {
    if ((st = need(c, 4, "the content checksum")) != XCHG_OK) return st;
    if (xchg_xxh32(c->dst + f.out_start, produced, 0) != stream_le32(c->src + c->pos))
      return corrupt(c, c->pos,
                     "the content checksum does not match the decompressed bytes (damaged data)");
    c->pos += 4;
  }
  return XCHG_OK;
}

xchg_status codec_lz4_frames_decode(const uint8_t *src, size_t src_size, uint8_t *dst,
                                    size_t dst_size, xchg_error *err) {
  lz4_cursor c = {.src = src, .src_size = src_size, .dst = dst, .dst_size = dst_size, .err = err};
  /* At least one frame, as LZ4F wants: no bytes at all are no LZ4 data. */
  if (src_size == 0) return need(&c, 4, "a frame's magic number");
  while (c.pos < src_size) {
    xchg_status st = need(&c, 4, "a frame's magic number");
    if (st != XCHG_OK) return st;
    uint32_t magic = stream_le32(src + c.pos);
    if (is_skippable_frame_magic(magic)) {
      c.pos += 4;
      if ((st = need(&c, 4, "a skippable frame's length")) != XCHG_OK) return st;
      uint32_t skip = stream_le32(src + c.pos);
      c.pos += 4;
      if ((st = need(&c, skip, "a skippable frame")) != XCHG_OK) return st;
      c.pos += skip;
    } else if (magic == LZ4_FRAME_MAGIC) {
      if ((st = decode_frame(&c)) != XCHG_OK) return st;
    } else {
      return corrupt(&c, c.pos, "not an LZ4 frame: its magic number is unknown");
    }
  }
  if (c.out != dst_size)
    return xchg_errorf(err, XCHG_EFORMAT, "LZ4 frame decompressed to %zu bytes, declared %zu",
                       c.out, dst_size);
  return XCHG_OK;
}
