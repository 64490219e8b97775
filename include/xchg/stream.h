/** \file
 * xchg/stream.h — stream codecs: compressed byte streams as engines ship them.
 *
 * Exchange bytes often arrive wrapped in a *stream* codec, one that
 * compresses a whole byte stream rather than one buffer: Spark's
 * `spark.io.compression.codec` streams (lz4-java's block stream,
 * snappy-java's stream, zstd), LZ4 frames, and Comet's native shuffle
 * blocks.  An xchg_istream decompresses any of them a window at a time from
 * an xchg_source:
 *
 *   - xchg_istream_read copies into the caller's buffer;
 *   - xchg_istream_next hands out the decompressed window itself (zero copy);
 *   - xchg_istream_next_into decodes into the caller's memory (no window);
 *   - xchg_source_from_istream turns the decompressed stream back into an
 *     xchg_source, so that the IPC reader reads a codec-wrapped IPC stream in
 *     one pass, without materialising the decompressed bytes.
 *
 * Metrics (refills, bytes, wall time of refills and the time spent blocked
 * on the source inside them) are kept per stream.  The clock is read only
 * around refills, never per read, so a read served from the current window
 * costs a bounds check and a memcpy, with or without metrics.
 *
 * Every length in the input is checked; checksums are verified when the
 * format carries them; input that ends in the middle of a frame or block is
 * an XCHG_EIO error and corrupt input an XCHG_EFORMAT error, each naming
 * the compressed byte offset (and block or frame index) at fault.
 *
 * Threads: an xchg_istream is used by one thread at a time; different
 * streams are independent.
 */
#ifndef XCHG_STREAM_H
#define XCHG_STREAM_H

#include "xchg/export.h"

#include <stddef.h>
#include <stdint.h>

#include "xchg/buf.h"
#include "xchg/error.h"
#include "xchg/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The stream codecs xchg reads (and, in xchg/testing.h, writes). */
typedef enum xchg_stream_codec {
  XCHG_STREAM_NONE = 0,          /**< bytes pass through unchanged */
  XCHG_STREAM_LZ4_FRAME = 1,     /**< LZ4 frames, concatenated, skippable frames skipped */
  XCHG_STREAM_ZSTD = 2,          /**< zstd frames, concatenated, skippable frames skipped */
  XCHG_STREAM_LZ4_JAVA = 3,      /**< lz4-java LZ4BlockOutputStream ("LZ4Block" blocks) */
  XCHG_STREAM_SNAPPY_JAVA = 4,   /**< snappy-java SnappyOutputStream (0x82 "SNAPPY" header) */
  XCHG_STREAM_SNAPPY_FRAMED = 5, /**< the snappy framing format (0xff 06 00 00 "sNaPpY") */
  XCHG_STREAM_COMET = 6,         /**< Comet native shuffle blocks, one after another */
  XCHG_STREAM_AUTO = 7           /**< decoding only: detect from the first bytes */
} xchg_stream_codec;

/** "none", "lz4-frame", "zstd", "lz4-java", "snappy-java", "snappy-framed",
 * "comet", "auto". */
XCHG_API const char *xchg_stream_codec_name(xchg_stream_codec codec);

/** Parses a name as printed by xchg_stream_codec_name.  Bare "lz4" and
 * "snappy" are refused on purpose: Spark's "lz4" is lz4-java while Comet's
 * is an LZ4 frame, and likewise for snappy.  XCHG_EINVAL names the unknown
 * name. */
XCHG_API XCHG_NODISCARD xchg_status xchg_stream_codec_from_name(const char *name,
                                                                xchg_stream_codec *out,
                                                                xchg_error *err);

/** Guesses the codec from the first bytes of a stream (20 bytes are enough
 * for every format; fewer may still decide).  Skippable LZ4/zstd frames at
 * the start are looked past when their bytes are given.  Returns
 * XCHG_STREAM_NONE when no codec magic matches, which includes plain Arrow
 * IPC (stream or file format), and for NULL bytes. */
XCHG_API xchg_stream_codec xchg_stream_codec_detect(const void *bytes, size_t size);

/* ---- Decoding ---------------------------------------------------------- */

/** How an xchg_istream reads and decompresses.  Fill it with
 * xchg_istream_options_init, then set what differs. */
typedef struct xchg_istream_options {
  /** Decompressed bytes produced per refill, at most (a format whose blocks
   * are bigger hands out one block per refill).  Default 64 KiB. */
  size_t window_size;
  /** Compressed bytes requested from the source per read.  Default 64 KiB.
   * Ignored when the source is in memory: it is then read in place. */
  size_t read_size;
  /** Non-zero to time refills (see xchg_istream_metrics); default 1.  When 0
   * the clock is never read; byte and refill counts are still kept, as they
   * cost nothing per read. */
  int metrics;
  /** Largest decompressed block accepted from a block format (lz4-java,
   * snappy-java); larger is XCHG_ELIMIT.  Default 256 MiB. */
  size_t max_block_size;
  /** XCHG_STREAM_COMET only: non-zero to end the stream at the end of every
   * block, so that each block's IPC stream can be read on its own (see
   * xchg_istream_next_member).  Default 0: the blocks' bytes run on. */
  int split_members;
} xchg_istream_options;

/** Fills opts with the defaults above (NULL: a no-op, as destructors are). */
XCHG_API void xchg_istream_options_init(xchg_istream_options *opts);

/** A stream's counters, since it was opened. */
typedef struct xchg_istream_metrics {
  int64_t refills;            /**< windows produced */
  int64_t compressed_bytes;   /**< bytes consumed from the source */
  int64_t decompressed_bytes; /**< bytes produced */
  int64_t wall_ns;            /**< time spent inside refills */
  int64_t blocking_ns;        /**< of which waiting for the source */
  /* decompression time proper is wall_ns - blocking_ns */
} xchg_istream_metrics;

/** A decompressing stream over a source. */
typedef struct xchg_istream xchg_istream;

/** Opens a decompressing stream over src, which it takes over (closed with
 * the stream, or at once if opening fails).  codec XCHG_STREAM_AUTO detects
 * the codec from the first bytes.  opts may be NULL for the defaults.  A
 * NULL src or out is XCHG_EINVAL. */
XCHG_API XCHG_NODISCARD xchg_status xchg_istream_open(xchg_source *src, xchg_stream_codec codec,
                                                      const xchg_istream_options *opts,
                                                      xchg_istream **out, xchg_error *err);

/** Where the source of a reset stream lies in its caller's input, so that
 * the stream's error messages say where as they are made (see
 * xchg_istream_reset). */
typedef struct xchg_istream_origin {
  /** Byte 0 of the source is this byte of the caller's input: every byte
   * offset in the stream's messages counts from here. */
  uint64_t byte;
  /** XCHG_STREAM_COMET: non-zero when the caller names the block an error
   * is in (it counts the members, with split_members): the message then
   * leaves the name out ("truncated: it ends at byte ...", not "comet block
   * 0 at byte 1131: truncated: ..."). */
  int caller_names_blocks;
} xchg_istream_origin;

/** Starts s over on src, which it takes over (closing its source before;
 * src is closed at once on failure), as if just opened on it with the same
 * codec and options, but keeping its buffers and codec contexts: the way
 * to decode many short streams without setting a decoder up for each.
 * origin says where src lies in the caller's input, for error messages
 * (NULL: at byte 0, blocks named by the stream).  Forgets any error s had.
 * XCHG_EINVAL when s or src is NULL (src is then closed). */
XCHG_API XCHG_NODISCARD xchg_status xchg_istream_reset(xchg_istream *s, xchg_source *src,
                                                       const xchg_istream_origin *origin,
                                                       xchg_error *err);

/** The codec in use (the detected one after XCHG_STREAM_AUTO; AUTO for a
 * NULL stream). */
XCHG_API xchg_stream_codec xchg_istream_codec(const xchg_istream *s);

/** Copies up to n decompressed bytes into dst; *got < n only at the end of
 * the stream, after which every read returns *got = 0 and XCHG_OK.  n = 0
 * is a valid no-op.  After an error the stream keeps returning it.  An
 * error of the source comes after what the bytes it read before the error
 * decode to, even when it failed in the read that gave them.  A NULL
 * stream or got, or a NULL dst with n > 0, is XCHG_EINVAL naming it, and
 * leaves the stream as it was.
 *
 * Inline, so that a read served from the current window compiles to a
 * bounds check and a memcpy (a constant-size one becomes a plain load).
 * xchg_istream_read_call is the same as an ordinary function, for bindings
 * that cannot use inline functions. */
static inline xchg_status xchg_istream_read(xchg_istream *s, void *dst, size_t n, size_t *got,
                                            xchg_error *err);
/** xchg_istream_read as an ordinary, exported function. */
XCHG_API XCHG_NODISCARD xchg_status xchg_istream_read_call(xchg_istream *s, void *dst, size_t n,
                                                           size_t *got, xchg_error *err);

/** Zero copy: hands out the rest of the current decompressed window
 * (refilling first when it is empty) and consumes it.  *len = 0 means the
 * end of the stream.  The bytes stay valid until the next call on s.
 * Here and in xchg_istream_next_into and xchg_istream_next_member, a NULL
 * stream or pointer argument is XCHG_EINVAL naming it. */
XCHG_API XCHG_NODISCARD xchg_status xchg_istream_next(xchg_istream *s, const void **ptr,
                                                      size_t *len, xchg_error *err);

/** Like xchg_istream_next, but the bytes go to the caller's memory: up to
 * cap bytes of the current window at dst, *n of them; *n = 0 means the end
 * of the stream (or, with split_members, of the member).  When the window
 * is empty the codec decodes straight into dst where it can (LZ4 frame,
 * zstd, snappy chunks that fit), so that each byte is written once; what
 * does not fit stays for the next call.  cap = 0 is XCHG_EINVAL.  The bytes
 * at dst are not the stream's: xchg_istream_unread cannot give them back. */
XCHG_API XCHG_NODISCARD xchg_status xchg_istream_next_into(xchg_istream *s, void *dst, size_t cap,
                                                           size_t *n, xchg_error *err);

/** Gives back the last `n` bytes handed out by xchg_istream_next (n at most
 * what that call returned, with no call in between): they are read again.
 * NULL: a no-op. */
XCHG_API void xchg_istream_unread(xchg_istream *s, size_t n);

/** With split_members: moves on to the next member (Comet block), skipping
 * what is left unread of the current one.  *more is 1 when there is one
 * (reads go on with its bytes), 0 at the end of the input.  Without
 * split_members the whole input is one member. */
XCHG_API XCHG_NODISCARD xchg_status xchg_istream_next_member(xchg_istream *s, int *more,
                                                             xchg_error *err);

/** XCHG_STREAM_COMET: the field count written in the header of the current
 * (or last) block; -1 before the first block, for other codecs and for a
 * NULL stream. */
XCHG_API int64_t xchg_istream_comet_field_count(const xchg_istream *s);

/** Decompressed bytes handed out so far (0 for NULL). */
XCHG_API int64_t xchg_istream_position(const xchg_istream *s);

/** Copies the metrics so far into *out (all 0 for a NULL stream; out NULL:
 * a no-op). */
XCHG_API void xchg_istream_get_metrics(const xchg_istream *s, xchg_istream_metrics *out);

/** Closes the stream and its source, and frees it (NULL is a no-op). */
XCHG_API void xchg_istream_free(xchg_istream *s);

/** Wraps s as an xchg_source of the decompressed bytes, which takes s over
 * (closed with the source, or at once if wrapping fails).  XCHG_EINVAL when
 * s or out is NULL, XCHG_ENOMEM when out of memory.  xchg_source_finish on it (the IPC reader calls it at
 * its end-of-stream marker) reads and verifies the rest of the current
 * frame — LZ4 frame end mark and checksum, zstd frame end and checksum,
 * lz4-java end block, within the current Comet block — unless decoded data
 * still follows in it; the next frame is left unread. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_istream(xchg_istream *s, xchg_source **out,
                                                             xchg_error *err);

/** The same without taking s over: closing the source leaves s open (it
 * must outlive the source), and so does a failure.  This is how one IPC
 * reader per Comet block is opened over one split_members stream. */
XCHG_API XCHG_NODISCARD xchg_status xchg_source_from_istream_borrowed(xchg_istream *s,
                                                                      xchg_source **out,
                                                                      xchg_error *err);

/** \cond INTERNAL
 * Implementation details of the inline xchg_istream_read; not API.  Every
 * xchg_istream starts with its current window [pos, end).  The copy is the
 * compiler's builtin, so that the header includes no <string.h> (nor
 * declares memcpy) for its users. */
#if defined(__GNUC__) || defined(__clang__)
#define xchg_istream_copy_ __builtin_memcpy
#else
#include <string.h>
#define xchg_istream_copy_ memcpy
#endif
/* A C++ program may build with -Wold-style-cast -Werror: it gets C++ casts. */
#ifdef __cplusplus
#define xchg_istream_cast_(T, v) static_cast<T>(v)
#else
#define xchg_istream_cast_(T, v) ((T)(v))
#endif
typedef struct xchg_istream_window_ {
  const uint8_t *pos;
  const uint8_t *end;
} xchg_istream_window_;

static inline xchg_status xchg_istream_read(xchg_istream *s, void *dst, size_t n, size_t *got,
                                            xchg_error *err) {
  void *start = s;
  xchg_istream_window_ *w = xchg_istream_cast_(xchg_istream_window_ *, start);
  /** n - 1 < have is n <= have for n > 0; n = 0 takes the call, which
   * copies nothing.  NULL arguments take it too, which refuses them (where
   * they are locals' addresses, the compiler drops their tests; tested as
   * truth values, as a C++ build with -Wzero-as-null-pointer-constant
   * refuses NULL). */
  if (s && dst && got && n - 1 < xchg_istream_cast_(size_t, w->end - w->pos)) {
    xchg_istream_copy_(dst, w->pos, n);
    w->pos += n;
    *got = n;
    return XCHG_OK;
  }
  return xchg_istream_read_call(s, dst, n, got, err);
}
/** \endcond */

#ifdef __cplusplus
}
#endif
#endif
