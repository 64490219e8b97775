/* stream_comet.c — Comet's native shuffle blocks, one after another.
 *
 * A block is a little-endian u64 length (of everything after it), a u64
 * field count, a 4-byte codec tag ("SNAP" snappy framing format, "LZ4_"
 * LZ4 frame, "ZSTD" zstd, "NONE" stored) and an Arrow IPC stream compressed
 * with that codec.  The decoder runs the tag's codec over exactly the
 * block's bytes (the input limit keeps it inside) and checks that it ends
 * where the block does. */
#include <stdlib.h>
#include <string.h>

#include "codec/helpers.h"
#include "codec/stream_registry.h"

#define BLOCK_HEADER_SIZE 20

typedef struct comet_state {
  const stream_decoder_ops *inner;
  void *inner_state;
  int in_block;
  uint64_t block_start, block_end;
  int64_t block_index;
} comet_state;

static xchg_status comet_create(void **state, xchg_error *err) {
  *state = calloc(1, sizeof(comet_state));
  if (*state == NULL) return xchg_errorf(err, XCHG_ENOMEM, "comet: no memory");
  return XCHG_OK;
}

static void comet_destroy(void *state) {
  comet_state *cs = state;
  if (cs == NULL) return;
  if (cs->inner != NULL) cs->inner->destroy(cs->inner_state);
  free(cs);
}

static void comet_reset(void *state) {
  comet_state *cs = state;
  cs->in_block = 0;
  cs->block_index = 0;
}

static const stream_decoder_ops *decoder_of_tag(const uint8_t *tag) {
  if (memcmp(tag, "SNAP", 4) == 0) return &stream_snappyframed_decoder;
  if (memcmp(tag, "LZ4_", 4) == 0) return &stream_lz4frame_decoder;
  if (memcmp(tag, "ZSTD", 4) == 0) return &stream_zstd_decoder;
  if (memcmp(tag, "NONE", 4) == 0) return &stream_none_decoder;
  return NULL;
}

/* Names the block an error is in, unless the caller does
 * (xchg_istream_origin). */
static xchg_status in_block(const xchg_istream *s, const comet_state *cs, uint64_t at,
                            xchg_status st, xchg_error *err) {
  if (!s->caller_names_blocks)
    xchg_error_prefix(err, "comet block %lld at byte %llu: ", (long long)cs->block_index,
                      (unsigned long long)at);
  return st;
}

/* Reads a block header and readies the inner decoder for its codec. */
static xchg_status start_block(xchg_istream *s, comet_state *cs, xchg_error *err) {
  xchg_status st = stream_in_fill(s, BLOCK_HEADER_SIZE, err);
  if (st != XCHG_OK) return st;
  size_t avail = stream_in_avail(s);
  uint64_t at = stream_in_offset(s);
  if (avail == 0) return XCHG_OK;
  if (avail < BLOCK_HEADER_SIZE)
    return in_block(s, cs, at,
                    xchg_errorf(err, XCHG_EIO, "its header" CUT_SHORT_AT ", %zu of its %d bytes",
                                (unsigned long long)(at + avail), avail, BLOCK_HEADER_SIZE),
                    err);
  const uint8_t *h = stream_in_ptr(s);
  uint64_t len = stream_le64(h);
  const stream_decoder_ops *inner = decoder_of_tag(h + 16);
  if (inner == NULL)
    return in_block(s, cs, at,
                    xchg_errorf(err, XCHG_EFORMAT, "unknown codec tag %02x %02x %02x %02x", h[16],
                                h[17], h[18], h[19]),
                    err);
  if (len < BLOCK_HEADER_SIZE - 8 || len > INT64_MAX)
    return in_block(
        s, cs, at, xchg_errorf(err, XCHG_EFORMAT, "bad length %llu", (unsigned long long)len), err);
  if (inner != cs->inner) {
    if (cs->inner != NULL) cs->inner->destroy(cs->inner_state);
    cs->inner = NULL;
    st = inner->create(&cs->inner_state, err);
    if (st != XCHG_OK) return st;
    cs->inner = inner;
  } else {
    inner->reset(cs->inner_state);
  }
  s->comet_field_count = stream_le64(h + 8) > INT64_MAX ? -1 : (int64_t)stream_le64(h + 8);
  stream_in_consume(s, BLOCK_HEADER_SIZE);
  cs->block_start = at;
  cs->block_end = at + 8 + len;
  cs->in_block = 1;
  return XCHG_OK;
}

static xchg_status comet_refill(xchg_istream *s, void *state, xchg_error *err) {
  comet_state *cs = state;
  for (;;) {
    if (!cs->in_block) {
      xchg_status st = start_block(s, cs, err);
      if (st != XCHG_OK || !cs->in_block) return st;
    }
    s->in_limit = cs->block_end;
    xchg_status st = cs->inner->refill(s, cs->inner_state, err);
    s->in_limit = UINT64_MAX;
    if (st != XCHG_OK) return in_block(s, cs, cs->block_start, st, err);
    if (s->win.end != s->win_start) return XCHG_OK;
    if (stream_in_offset(s) != cs->block_end)
      return in_block(
          s, cs, cs->block_start,
          xchg_errorf(err, XCHG_EIO,
                      "the block" CUT_SHORT_AT
                      ", before its end at byte %llu (or the block's length is wrong)",
                      (unsigned long long)stream_in_offset(s), (unsigned long long)cs->block_end),
          err);
    cs->in_block = 0;
    cs->block_index++;
    if (s->opts.split_members) { /* end here: xchg_istream_next_member goes on */
      s->member_end = 1;
      return XCHG_OK;
    }
  }
}

/* Finishes the inner codec's frame, within the block.  Whatever the block
 * holds after that frame is checked when the block is left, as ever. */
static xchg_status comet_finish(xchg_istream *s, void *state, xchg_error *err) {
  comet_state *cs = state;
  if (!cs->in_block || cs->inner->finish == NULL) return XCHG_OK;
  s->in_limit = cs->block_end;
  xchg_status st = cs->inner->finish(s, cs->inner_state, err);
  s->in_limit = UINT64_MAX;
  return st == XCHG_OK ? st : in_block(s, cs, cs->block_start, st, err);
}

const stream_decoder_ops stream_comet_decoder = {"comet",     comet_create, comet_destroy,
                                                 comet_reset, comet_refill, comet_finish};

xchg_status stream_encode_comet(const xchg_stream_encode_options *o, const uint8_t *src, size_t n,
                                stream_sink *sink, xchg_error *err) {
  const char *tag;
  switch (o->comet_inner) {
    case XCHG_STREAM_NONE: tag = "NONE"; break;
    case XCHG_STREAM_LZ4_FRAME: tag = "LZ4_"; break;
    case XCHG_STREAM_ZSTD: tag = "ZSTD"; break;
    case XCHG_STREAM_SNAPPY_FRAMED: tag = "SNAP"; break;
    default:
      return xchg_errorf(err, XCHG_EINVAL, "comet encode: codec %s cannot go in a Comet block",
                         xchg_stream_codec_name(o->comet_inner));
  }
  if (o->comet_field_count < 0)
    return xchg_errorf(err, XCHG_EINVAL, "comet encode: negative field count %lld",
                       (long long)o->comet_field_count);
  size_t start = sink->size;
  uint8_t *h = stream_sink_reserve(sink, BLOCK_HEADER_SIZE);
  if (h == NULL) return xchg_errorf(err, XCHG_ENOMEM, "comet encode: no memory");
  stream_put_le64(h + 8, (uint64_t)o->comet_field_count);
  memcpy(h + 16, tag, 4);
  sink->size += BLOCK_HEADER_SIZE;
  xchg_status st = stream_encode_frame(o->comet_inner, o, src, n, sink, err);
  if (st != XCHG_OK) return st;
  /* The length counts everything after itself, as Comet writes it. */
  stream_put_le64(sink->data + start, (uint64_t)(sink->size - start - 8));
  return XCHG_OK;
}
