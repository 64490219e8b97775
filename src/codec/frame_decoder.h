/* frame_decoder.h — the stream decoder of a frame library (liblz4's frame
 * API, libzstd's streaming API; private to src/codec).  Both libraries
 * decode a run of concatenated frames step by step from whatever input is
 * at hand, skip skippable frames and verify checksums themselves; what is
 * left, and the same for both, is here: keeping count of the frames for
 * the error messages, telling a frame cut short from a clean end between
 * frames, filling the window, and finish(). */
#ifndef XCHG_CODEC_FRAME_DECODER_H
#define XCHG_CODEC_FRAME_DECODER_H

#include "codec/stream_window.h"

typedef struct frame_library {
  const char *name; /* "lz4": errors say "lz4 frame 3 (starting at byte ...)" */
  /* A decompression context, or NULL when none can be made. */
  void *(*create)(void);
  void (*destroy)(void *ctx);
  /* Forgets the frame in progress: the next byte starts a frame. */
  void (*reset)(void *ctx);
  /* Decodes what it can of src[0, *src_n) into dst[0, *dst_n), setting both
   * to the bytes it consumed and wrote.  Returns 0 at the end of a frame
   * (its trailer read and verified), else 1; -1 for bad input, with *why. */
  int (*decode)(void *ctx, uint8_t *dst, size_t *dst_n, const uint8_t *src, size_t *src_n,
                const char **why);
  /* Whether a window ends with the frame that ends in it (see
   * frame_decoder_refill): for liblz4, which would otherwise decode the
   * next frame's first block into a side buffer and copy it over in
   * pieces. */
  int window_ends_with_frame;
} frame_library;

/* The stream_decoder_ops of a frame library but for create, which is
 * frame_decoder_create with the library: the codec's own create. */
xchg_status frame_decoder_create(const frame_library *lib, void **state, xchg_error *err);
void frame_decoder_destroy(void *state);
void frame_decoder_reset(void *state);
xchg_status frame_decoder_refill(xchg_istream *s, void *state, xchg_error *err);
xchg_status frame_decoder_finish(xchg_istream *s, void *state, xchg_error *err);

#endif
