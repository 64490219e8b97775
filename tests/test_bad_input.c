/* tests/test_bad_input.c — bad bytes give errors, never crashes or short
 * results.
 *
 *   - Every input under $XCHG_TESTDATA/arrow-fuzz (inputs that once crashed
 *     or misled Arrow C++'s reader) is read to the end: it decodes or gives
 *     an error with a message; under ASan + UBSan any memory error aborts.
 *     An error that names a message names the byte it starts at too.
 *   - Every gold .stream and .arrow_file cut at every byte offset gives an
 *     error: a truncated input is never taken for a whole one.  Past its
 *     first 8 bytes the error is XCHG_EIO, a file's as a stream's, as when
 *     they are read in order (a file cut short has no footer at its end,
 *     which was XCHG_EFORMAT "cut short, or its end is damaged"), and the
 *     same from a file descriptor as from memory (a few cuts).  Inputs up
 *     to 32 KiB are decoded in full at every cut.  In larger ones the
 *     batches wholly before the cut are skipped unread
 *     (xchg_ipc_reader_skip), and inside message bodies — where every cut
 *     takes the same path, "the body runs past the end" — one offset in 7
 *     is cut; every offset of framing and metadata still is.
 *   - A seeded sample of single-bit flips of every gold file: an error or a
 *     decode, never a crash.  Whether an accepted decode is right is not
 *     knowable in general (a flipped value bit is still a valid file), but
 *     it must be valid: every batch passes an independent check of the
 *     format's rules (tests/support/array_valid.c) and has every value
 *     read (under ASan, one outside its buffer aborts).
 *   - The same for the stream codecs (LZ4 frame, zstd, lz4-java,
 *     snappy-java, snappy framing, Comet blocks), each wrapping a gold
 *     stream: cut at every offset, read as the IPC stream inside, always an
 *     error (at the codec, or at the IPC layer when the cut falls between
 *     blocks of a format with no end marker; a cut in the codec's trailer,
 *     after the last data byte, when the reader finishes the codec's frame
 *     at the end-of-stream marker); and bit flips, where the
 *     decoded bytes must be a prefix of the original (nothing invented)
 *     where a checksum covers it, and for LZ4 frames, zstd and lz4-java,
 *     all of it or an error; a flipped input the IPC reader accepts (as
 *     snappy-java, with no checksum, lets through) passes the independent
 *     check of the batches too.
 * After each input the number of live buffers must be back where it was:
 * no error path leaks.  One summary line per sweep, then
 * "N passed, M failed". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/encoded.h"
#include "support/array_equal.h"
#include "support/sources.h"
#include "support/array_valid.h"
#include "support/ipc_bodies.h"
#include "support/testutil.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"
#include "xchg/testing.h"

/* Under AddressSanitizer, the bytes past a cut are poisoned so that any
 * read beyond the end the reader was given is reported — without copying
 * the prefix for every cut, which would make the sweep quadratic in
 * copies. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef struct outcome {
  int ok;             /* decoded to the end */
  xchg_status status; /* the error's, or XCHG_OK */
  int64_t batches;
  char message[XCHG_ERROR_MESSAGE_SIZE];
} outcome;

/* Reads every batch left in r, then closes it; the reader checks all it
 * can.  With skip_before >= 0, record batches that end before that offset
 * are skipped rather than decoded. */
static outcome read_batches(xchg_ipc_reader *r, int64_t skip_before) {
  outcome o = {0, XCHG_OK, 0, ""};
  xchg_error err;
  for (;;) {
    struct ArrowArray a;
    xchg_batch_header h;
    int at_end = 0;
    if (skip_before >= 0) {
      if ((o.status = xchg_ipc_reader_peek(r, &h, &at_end, &err)) != XCHG_OK) {
        snprintf(o.message, sizeof o.message, "%s", err.message);
        break;
      }
      /* A batch's message is at most metadata + body + 8 bytes of framing
       * long; one that ends well before the cut was decoded whole by the
       * first read. */
      if (!at_end && h.offset + 8 + h.body_bytes + 65536 < skip_before) {
        if ((o.status = xchg_ipc_reader_skip(r, &err)) != XCHG_OK) {
          snprintf(o.message, sizeof o.message, "%s", err.message);
          break;
        }
        o.batches++;
        continue;
      }
    }
    if ((o.status = xchg_ipc_reader_next(r, &a, &err)) != XCHG_OK) {
      snprintf(o.message, sizeof o.message, "%s", err.message);
      break;
    }
    if (!a.release) {
      o.ok = 1;
      break;
    }
    o.batches++;
    a.release(&a);
  }
  xchg_ipc_reader_free(r);
  return o;
}

/* Reads everything from memory, skipping as read_batches does. */
static outcome read_until(const uint8_t *data, size_t size, int64_t skip_before) {
  outcome o = {0, XCHG_OK, 0, ""};
  xchg_ipc_reader *r;
  xchg_error err;
  if ((o.status = xchg_ipc_reader_open_memory(data, size, NULL, NULL, NULL, &r, &err)) != XCHG_OK) {
    snprintf(o.message, sizeof o.message, "%s", err.message);
    return o;
  }
  struct ArrowSchema s;
  if (xchg_ipc_reader_schema(r, &s, &err) == XCHG_OK) s.release(&s);
  return read_batches(r, skip_before);
}

static outcome read_all(const uint8_t *data, size_t size) { return read_until(data, size, -1); }

/* Whether an error names a message but no byte: "message 2, field 'f1':
 * ..." where "message 2 at byte 408, field 'f1': ..." says where it is. */
static int message_without_byte(const char *m) {
  for (const char *p = strstr(m, "message "); p; p = strstr(p + 1, "message ")) {
    char next = p[strlen("message ")];
    if (next >= '0' && next <= '9') /* not "message buffer 3", "message has" */
      return strstr(m, "byte ") == NULL;
  }
  return 0;
}

/* ---- the fuzz corpus ---------------------------------------------------------- */

static int64_t fuzz_inputs, fuzz_errors;

static void fuzz_file(const char *path, void *unused) {
  (void)unused;
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  int64_t live = xchg_buf_live_count();
  outcome o = read_all(data, size);
  fuzz_inputs++;
  fuzz_errors += !o.ok;
  TU_CHECK(o.ok || o.message[0] != '\0', "%s: an error without a message", path);
  TU_CHECK(!message_without_byte(o.message), "%s: the error does not say where: %s", path,
           o.message);
  TU_CHECK(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked", path,
           xchg_buf_live_count() - live);
  free(data);
}

/* ---- truncation ------------------------------------------------------------------ */

static int64_t cuts, cut_errors;

/* A file's magic and padding, a stream's first framing: an input cut
 * inside them may not be told from another format. */
#define IPC_HEAD 8

/* Where the message bodies of an input are, from the reader's own report. */
typedef struct body_map {
  tu_body items[4096];
  int64_t n;
} body_map;

/* Cut inside a body (not at its first or last 8 bytes)? */
static int inside_body(const body_map *m, int64_t cut) {
  for (int64_t i = 0; i < m->n; i++)
    if (cut > m->items[i].offset + 8 && cut < m->items[i].offset + m->items[i].length - 8) return 1;
  return 0;
}

static void truncate_file(const char *path, void *unused) {
  (void)unused;
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  int64_t live = xchg_buf_live_count();
  outcome whole = read_all(data, size);
  TU_CHECK(whole.ok, "%s: the whole file does not decode", path);
  int large = size > 32768;
  static body_map bodies;
  if (large) bodies.n = tu_map_bodies(data, size, bodies.items, 4096);
  for (size_t cut = 0; cut < size; cut++) {
    if (large && cut % 7 && inside_body(&bodies, (int64_t)cut)) continue;
    POISON(data + cut, size - cut);
    outcome o = read_until(data, cut, large ? (int64_t)cut : -1);
    UNPOISON(data + cut, size - cut);
    cuts++;
    cut_errors += !o.ok;
    TU_CHECK(!o.ok, "%s cut at byte %" PRId64 " decodes as a whole input", path, (int64_t)cut);
    TU_CHECK(o.ok || o.message[0] != '\0', "%s cut at byte %" PRId64 ": error without a message",
             path, (int64_t)cut);
    TU_CHECK(!message_without_byte(o.message), "%s cut at byte %" PRId64 ": no byte in: %s", path,
             (int64_t)cut, o.message);
    TU_CHECK(cut < IPC_HEAD || o.status == XCHG_EIO, "%s cut at byte %" PRId64 ": %s, not %s: %s",
             path, (int64_t)cut, xchg_status_name(o.status), xchg_status_name(XCHG_EIO), o.message);
  }
  TU_CHECK(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked while cutting", path,
           xchg_buf_live_count() - live);
  free(data);
}

/* The same cut read from a file descriptor (seekable, not in memory) is
 * the same error as from memory: a few cuts of each kind, from the end of
 * a file's footer to its first message's metadata. */
static void truncate_through_fd(const char *path) {
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  const size_t cuts_at[] = {size - 1, size - 12, size / 2, size / 3, 20};
  for (size_t i = 0; i < sizeof cuts_at / sizeof cuts_at[0]; i++) {
    char name[] = "/tmp/xchg-bad-input-XXXXXX";
    int fd = mkstemp(name);
    size_t cut = cuts_at[i];
    if (!TU_CHECK(fd >= 0 && write(fd, data, cut) == (ssize_t)cut, "cannot write %s", name)) break;
    unlink(name);
    outcome want = read_all(data, cut), got = {0, XCHG_EIO, 0, "cannot open"};
    xchg_source *src = NULL;
    xchg_ipc_reader *r = NULL;
    xchg_error err;
    if (lseek(fd, 0, SEEK_SET) == 0 && xchg_source_from_fd(fd, 1, &src, &err) == XCHG_OK)
      got.status = xchg_ipc_reader_open(src, NULL, &r, &err);
    else
      close(fd);
    if (r)
      got = read_batches(r, -1);
    else if (src)
      snprintf(got.message, sizeof got.message, "%s", err.message);
    TU_CHECK(
        got.status == XCHG_EIO && want.status == XCHG_EIO && strcmp(got.message, want.message) == 0,
        "%s cut at byte %zu: from an fd %s: %s; from memory %s: %s", path, cut,
        xchg_status_name(got.status), got.message, xchg_status_name(want.status), want.message);
  }
  free(data);
}

/* ---- bit flips ----------------------------------------------------------------------- */

static int64_t flips, flip_errors, flips_accepted;

/* An input the reader accepted (r reads it again) must hold arrays an
 * independent check finds valid (tests/support/array_valid.c), whose every
 * value can be read: comparing each batch with itself reads them all, and
 * under ASan a value outside its buffer aborts.  Closes r. */
static void check_accepted(xchg_ipc_reader *r, const char *what, uint64_t bit) {
  xchg_error err;
  struct ArrowSchema s = {0};
  char msg[XCHG_ERROR_MESSAGE_SIZE + 64] = "";
  xchg_status st = xchg_ipc_reader_schema(r, &s, &err);
  while (st == XCHG_OK && !msg[0]) {
    struct ArrowArray a;
    if ((st = xchg_ipc_reader_next(r, &a, &err)) != XCHG_OK || !a.release) break;
    if (array_valid(&s, &a, msg, sizeof msg) == 0) array_equal(&s, &a, &a, msg, sizeof msg);
    a.release(&a);
  }
  if (st != XCHG_OK) snprintf(msg, sizeof msg, "read again: %s", err.message);
  TU_CHECK(!msg[0], "%s with bit %" PRIu64 " flipped: accepted, but %s", what, bit, msg);
  if (s.release) s.release(&s);
  xchg_ipc_reader_free(r);
}

static void flip_file(const char *path, void *unused) {
  (void)unused;
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  uint64_t rng = 0x5eed ^ size;
  int64_t live = xchg_buf_live_count();
  uint8_t *copy = malloc(size);
  for (int i = 0; i < 300; i++) {
    memcpy(copy, data, size);
    /* Half the flips land in the first 512 bytes, where the metadata is. */
    uint64_t span = (i % 2 && size > 512) ? 512 : size;
    uint64_t bit = tu_splitmix64(&rng) % (span * 8);
    copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    outcome o = read_all(copy, size);
    flips++;
    flip_errors += !o.ok;
    TU_CHECK(!message_without_byte(o.message), "%s with bit %" PRIu64 " flipped: no byte in: %s",
             path, bit, o.message);
    xchg_ipc_reader *r;
    xchg_error err;
    if (o.ok) {
      flips_accepted++;
      if (xchg_ipc_reader_open_memory(copy, size, NULL, NULL, NULL, &r, &err) == XCHG_OK)
        check_accepted(r, path, bit);
      else
        TU_CHECK(0, "%s: an accepted flip of bit %" PRId64 " fails to open again", path,
                 (int64_t)bit);
    }
  }
  TU_CHECK(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked while flipping bits",
           path, xchg_buf_live_count() - live);
  free(copy);
  free(data);
}

/* ---- stream codecs --------------------------------------------------------------- */

static int64_t codec_cuts, codec_cut_errors, codec_trailer_cuts, codec_flips, codec_flip_errors,
    codec_flips_accepted;

/* A reader of the IPC stream wrapped in codec in data[0, size). */
static xchg_status open_wrapped(const uint8_t *data, size_t size, xchg_stream_codec codec,
                                xchg_ipc_reader **r, xchg_error *err) {
  xchg_istream *s = NULL;
  xchg_source *src = tu_memory_source(data, size);
  xchg_status st = xchg_istream_open(src, codec, NULL, &s, err);
  if (st == XCHG_OK) st = xchg_source_from_istream(s, &src, err);
  return st == XCHG_OK ? xchg_ipc_reader_open(src, NULL, r, err) : st;
}

/* Reads an IPC stream wrapped in codec from data[0, size). */
static outcome read_wrapped(const uint8_t *data, size_t size, xchg_stream_codec codec) {
  outcome o = {0, XCHG_OK, 0, ""};
  xchg_error err;
  xchg_ipc_reader *r;
  if ((o.status = open_wrapped(data, size, codec, &r, &err)) != XCHG_OK) {
    snprintf(o.message, sizeof o.message, "%s", err.message);
    return o;
  }
  return read_batches(r, -1);
}

/* Decodes data[0, size) with codec; returns 1 when it decodes to the end,
 * 0 on an error.  With must_match, the bytes decoded must be a prefix of
 * payload; *decoded is how many were. */
static int decode_prefix(const uint8_t *data, size_t size, xchg_stream_codec codec,
                         const uint8_t *payload, size_t payload_size, int must_match,
                         size_t *decoded, const char *what) {
  xchg_error err;
  xchg_istream *s = NULL;
  xchg_source *src = tu_memory_source(data, size);
  xchg_status st = xchg_istream_open(src, codec, NULL, &s, &err);
  *decoded = 0;
  while (st == XCHG_OK) {
    const void *p;
    size_t n = 0;
    st = xchg_istream_next(s, &p, &n, &err);
    if (st != XCHG_OK || n == 0) break;
    int prefix = *decoded + n <= payload_size && memcmp(p, payload + *decoded, n) == 0;
    if (must_match)
      TU_CHECK(prefix, "%s: bytes invented at decoded offset %" PRId64, what, (int64_t)*decoded);
    *decoded += n;
  }
  if (st != XCHG_OK) TU_CHECK(err.message[0] != '\0', "%s: error without a message", what);
  xchg_istream_free(s);
  return st == XCHG_OK;
}

static void sweep_codec(const uint8_t *ipc, size_t ipc_size, xchg_stream_codec codec) {
  xchg_stream_encode_options eo;
  xchg_stream_encode_options_init(&eo);
  eo.block_size = 512; /* many blocks: cuts between blocks are tried too */
  eo.comet_inner = XCHG_STREAM_ZSTD;
  const char *name = xchg_stream_codec_name(codec);
  tu_bytes enc = {0};
  if (!tu_append_encoded(&enc, codec, &eo, ipc, ipc_size)) return;
  size_t size = enc.size;
  uint8_t *data = malloc(size); /* exactly size bytes: ASan sees any overread */
  memcpy(data, enc.data, size);
  free(enc.data);
  /* Checksums (LZ4 frame and zstd content checksums, lz4-java's per
   * block, the snappy framing's CRC-32C, the zstd frames in these Comet
   * blocks) catch a flipped bit in the data; snappy-java has none. */
  int checksummed = codec != XCHG_STREAM_SNAPPY_JAVA;
  int single_frame = codec == XCHG_STREAM_LZ4_FRAME || codec == XCHG_STREAM_ZSTD;
  /* Where nothing can be skipped either (the snappy framing and Comet
   * blocks have skippable chunks and lengths a flip can shorten), a flip
   * gives all the data or an error. */
  int whole_or_error = single_frame || codec == XCHG_STREAM_LZ4_JAVA;
  int64_t live = xchg_buf_live_count();
  TU_CHECK(read_wrapped(data, size, codec).ok, "%s: the whole input does not decode", name);
  for (size_t cut = 0; cut < size; cut++) {
    POISON(data + cut, size - cut);
    outcome o = read_wrapped(data, cut, codec);
    size_t decoded;
    int whole = decode_prefix(data, cut, codec, ipc, ipc_size, 1, &decoded, name);
    /* One frame: any cut but the empty input (no frames) is inside it.
     * (The block formats end wherever a block does; there the IPC layer
     * finds the cut.) */
    TU_CHECK(!single_frame || !whole || cut <= 0,
             "%s cut at byte %" PRId64 " decodes as a whole frame", name, (int64_t)cut);
    UNPOISON(data + cut, size - cut);
    codec_cuts++;
    codec_cut_errors += !o.ok;
    /* A cut in the codec's trailer (end mark, checksum, end block) leaves
     * every data byte there: the IPC reader notices it only because it
     * finishes the codec's frame at its end-of-stream marker.  Counted
     * apart, and must be 0 like any other cut decoding whole. */
    if (o.ok && decoded == ipc_size) {
      codec_trailer_cuts++;
      TU_CHECK(0, "%s cut at byte %" PRId64 ", in the codec's trailer, decodes as a whole input",
               name, (int64_t)cut);
    } else if (o.ok) {
      TU_CHECK(0, "%s cut at byte %" PRId64 " decodes as a whole input", name, (int64_t)cut);
    }
  }
  uint64_t rng = 0xf11b ^ size;
  uint8_t *copy = malloc(size);
  for (int i = 0; i < 400; i++) {
    memcpy(copy, data, size);
    uint64_t bit = tu_splitmix64(&rng) % (size * 8);
    copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    size_t decoded;
    int ok = decode_prefix(copy, size, codec, ipc, ipc_size, checksummed, &decoded, name);
    codec_flips++;
    codec_flip_errors += !ok;
    /* Bytes a codec without a checksum let through may still be read as
     * IPC: what the reader accepts must be valid. */
    xchg_ipc_reader *r;
    xchg_error err;
    if (ok && read_wrapped(copy, size, codec).ok &&
        open_wrapped(copy, size, codec, &r, &err) == XCHG_OK) {
      codec_flips_accepted++;
      check_accepted(r, name, bit);
    }
    if (ok && whole_or_error)
      TU_CHECK(decoded == ipc_size, "%s: bit %" PRId64 " flipped decodes short of the whole input",
               name, (int64_t)bit);
  }
  TU_CHECK(xchg_buf_live_count() == live, "%s: %" PRId64 " buffers leaked", name,
           xchg_buf_live_count() - live);
  free(copy);
  free(data);
}

static void sweep_codecs(const char *gold_dir) {
  static const xchg_stream_codec codecs[] = {XCHG_STREAM_LZ4_FRAME,     XCHG_STREAM_ZSTD,
                                             XCHG_STREAM_LZ4_JAVA,      XCHG_STREAM_SNAPPY_JAVA,
                                             XCHG_STREAM_SNAPPY_FRAMED, XCHG_STREAM_COMET};
  char path[1200];
  snprintf(path, sizeof path, "%s/1.0.0-littleendian/generated_nested_dictionary.stream", gold_dir);
  size_t size;
  uint8_t *ipc = tu_read_file(path, &size);
  TU_CHECK(ipc != NULL, "cannot read %s", path);
  if (ipc == NULL) return;
  for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) sweep_codec(ipc, size, codecs[c]);
  free(ipc);
}

static char fuzz_dir[1024], gold_dir[1024];

static void fuzz_corpus(void) {
  tu_walk(fuzz_dir, NULL, fuzz_file, NULL);
  printf("fuzz corpus: %" PRId64 " inputs, %" PRId64 " errors returned, crashes = 0\n", fuzz_inputs,
         fuzz_errors);
  TU_CHECK(fuzz_inputs > 0, "no fuzz input under %s", fuzz_dir);
}

/* Every gold file of one kind (".stream" or ".arrow_file") cut at every
 * byte: two cases, so that ctest runs them side by side (the sweep is the
 * suite's longest). */
static void truncate_gold(const char *kind) {
  tu_walk(gold_dir, kind, truncate_file, NULL);
  printf("truncation of %s: %" PRId64 " cuts, %" PRId64 " errors returned, crashes = 0\n", kind,
         cuts, cut_errors);
  TU_CHECK(cuts > 0, "no %s gold file under %s", kind, gold_dir);
}

static void truncation_streams(void) { truncate_gold(".stream"); }
static void truncation_files(void) { truncate_gold(".arrow_file"); }

static void truncation_fd(void) {
  static const char *const kinds[] = {".arrow_file", ".stream"};
  for (int i = 0; i < 2; i++) {
    char path[1100];
    snprintf(path, sizeof path, "%s/1.0.0-littleendian/generated_primitive%s", gold_dir, kinds[i]);
    truncate_through_fd(path);
  }
}

/* A gold file cut inside its first record batch's body, read in order
 * (a source that cannot seek), the batch peeked and skipped: the skip
 * fails, XCHG_EIO naming the message's body, and the error sticks — next
 * returns it, with allow_missing_eos too (a cut inside a message is never
 * a shorter stream), and no stream end is reported.  A skip's failure
 * once went unrecorded: the next call read on past the cut and found a
 * clean end. */
static int64_t skip_cuts;

static void skip_cut_file(const char *path, void *unused) {
  (void)unused;
  size_t size;
  uint8_t *data = tu_read_file(path, &size);
  tu_body bodies[64];
  int64_t n = data ? tu_map_bodies(data, size, bodies, 64) : 0, batch = -1;
  for (int64_t i = 0; i < n && batch < 0; i++)
    if (bodies[i].kind == XCHG_MESSAGE_RECORD_BATCH && bodies[i].length >= 16) batch = i;
  for (int eos = 0; batch >= 0 && eos < 2; eos++) {
    size_t cut = (size_t)(bodies[batch].offset + bodies[batch].length / 2);
    xchg_ipc_read_options o;
    xchg_ipc_read_options_init(&o);
    o.allow_missing_eos = eos;
    xchg_ipc_reader *r = NULL;
    xchg_error err;
    xchg_status st = xchg_ipc_reader_open(tu_unseekable_source(data, cut, 3), &o, &r, &err);
    xchg_batch_header h = {0};
    int at_end = 0;
    while (st == XCHG_OK && (st = xchg_ipc_reader_peek(r, &h, &at_end, &err)) == XCHG_OK &&
           !at_end && h.offset < bodies[batch].metadata_offset - 8) {
      struct ArrowArray a;
      if ((st = xchg_ipc_reader_next(r, &a, &err)) == XCHG_OK && a.release) a.release(&a);
    }
    char want[96];
    snprintf(want, sizeof want, "at byte %lld: body: ", (long long)h.offset);
    xchg_status skipped = st == XCHG_OK && !at_end ? xchg_ipc_reader_skip(r, &err) : st;
    char said[XCHG_ERROR_MESSAGE_SIZE];
    snprintf(said, sizeof said, "%s", err.message);
    struct ArrowArray a = {0};
    xchg_status next = r ? xchg_ipc_reader_next(r, &a, &err) : st;
    if (a.release) a.release(&a);
    TU_CHECK(skipped == XCHG_EIO && strstr(said, want) && next == XCHG_EIO &&
                 strcmp(err.message, said) == 0 && xchg_ipc_reader_stream_end(r) == -1,
             "%s cut at byte %zu (allow_missing_eos %d): skip %s '%s', then next %s '%s'", path,
             cut, eos, xchg_status_name(skipped), said, xchg_status_name(next), err.message);
    xchg_ipc_reader_free(r);
    skip_cuts++;
  }
  free(data);
}

static void skip_cut(void) {
  tu_walk(gold_dir, ".stream", skip_cut_file, NULL);
  tu_walk(gold_dir, ".arrow_file", skip_cut_file, NULL);
  printf("skip of a cut body: %" PRId64 " inputs\n", skip_cuts);
  TU_CHECK(skip_cuts > 0, "no gold file under %s", gold_dir);
}

static void bit_flips(void) {
  tu_walk(gold_dir, ".stream", flip_file, NULL);
  tu_walk(gold_dir, ".arrow_file", flip_file, NULL);
  printf("bit flips: %" PRId64 " inputs, %" PRId64 " errors returned, %" PRId64
         " accepted (each checked independently), crashes = 0\n",
         flips, flip_errors, flips_accepted);
  TU_CHECK(flips > 0, "no gold file under %s", gold_dir);
}

static void stream_codecs(void) {
  sweep_codecs(gold_dir);
  printf("stream codec truncation: %" PRId64 " cuts, %" PRId64 " errors returned, %" PRId64
         " cuts in a codec trailer not noticed, crashes = 0\n",
         codec_cuts, codec_cut_errors, codec_trailer_cuts);
  TU_CHECK(codec_cut_errors == codec_cuts, "stream codecs: %" PRId64 " cuts decode as whole inputs",
           codec_cuts - codec_cut_errors);
  printf("stream codec bit flips: %" PRId64 " inputs, %" PRId64 " errors returned, %" PRId64
         " accepted as IPC (each checked independently), crashes = 0\n",
         codec_flips, codec_flip_errors, codec_flips_accepted);
  TU_CHECK(codec_cuts > 0, "the stream codec sweep had no input");
}

int main(int argc, char **argv) {
  tu_testdata_path(fuzz_dir, sizeof fuzz_dir, "arrow-fuzz");
  tu_testdata_path(gold_dir, sizeof gold_dir, "arrow-gold");
  static const tu_case cases[] = {
      {"fuzz_corpus", fuzz_corpus},
      {"truncation_streams", truncation_streams},
      {"truncation_files", truncation_files},
      {"bit_flips", bit_flips},
      {"stream_codecs", stream_codecs},
      {"truncation_fd", truncation_fd},
      {"skip_cut", skip_cut},
  };
  return TU_MAIN(argc, argv, "bad_input", cases);
}
