/* input.c — opening inputs (plain or codec-wrapped IPC) and reporting errors
 * the same way everywhere. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "codec/helpers.h"
#include "ipc/flatbuf.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "ipc/schema.h"

const char *xc_ipc_kind(bool file) { return file ? "file" : "stream"; }

const char *xc_input_label(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

int64_t xc_path_size(const char *path) {
  struct stat st;
  if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return (int64_t)st.st_size;
}

int64_t xc_input_done(const xc_input *in, int64_t message_end) {
  if (in->stream == NULL) return (int64_t)in->stream_start + message_end;
  xchg_istream_metrics m;
  xchg_istream_get_metrics(in->stream, &m);
  return m.compressed_bytes;
}

int xc_stream_codec_option(const char *command, const char *name, bool writing,
                           xchg_stream_codec *out) {
  static const char codecs[] = "lz4-java, snappy-java, zstd, lz4-frame, snappy-framed, comet";
  xchg_error err = {{0}};
  if (xchg_stream_codec_from_name(name, out, &err) == XCHG_OK) {
    if (!writing || *out != XCHG_STREAM_AUTO) return -1;
    return xc_usage_error(command, "codec 'auto' names no codec to write: give one (%s or none)",
                          codecs);
  }
  /* Spark's "lz4" and "snappy" are not the formats Comet names so. */
  if (strcmp(name, "lz4") == 0)
    return xc_usage_error(command,
                          "codec 'lz4' is ambiguous: choose lz4-java (Spark's lz4 codec) or "
                          "lz4-frame (the LZ4 frame format, as Comet writes it)");
  if (strcmp(name, "snappy") == 0)
    return xc_usage_error(command,
                          "codec 'snappy' is ambiguous: choose snappy-java (Spark's snappy "
                          "codec) or snappy-framed (Snappy's framing format)");
  return xc_usage_error(command, "unknown codec '%s' (%s%s)", name, codecs,
                        writing ? " or none" : ", none or auto");
}

void xc_deprecated_option(const char *command, const char *old, const char *now) {
  fprintf(stderr,
          "xchg %s: warning: %s is deprecated, use %s (%s will be removed in the next release)\n",
          command, old, now, old);
}

xchg_status xc_open_istream(const char *path, xchg_stream_codec codec, xchg_istream **out,
                            xchg_error *err) {
  xchg_source *src;
  xchg_status st = xc_open_source(path, &src, err);
  if (st != XCHG_OK) return st;
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.metrics = 0;                                      /* byte counts are enough */
  return xchg_istream_open(src, codec, &opts, out, err); /* takes src, even on failure */
}

static xchg_status check_in_memory(const xc_input *in, int64_t limit, xchg_error *err);

/* Metadata lengths looked at to tell a schema message from another: any
 * schema a tool makes fits. */
#define PEEKED_METADATA_MAX ((size_t)16 << 20)

/* Whether piped standard input begins with an IPC file whose first message
 * is not a schema (Arrow JS's file writer puts the schema in the footer
 * only). */
static xchg_status stdin_schemaless_file(bool *yes, xchg_error *err) {
  const uint8_t *p;
  size_t n;
  *yes = false;
  xchg_status st = xc_stdin_peek(IPC_FILE_HEAD + 8, &p, &n, err);
  if (st != XCHG_OK || n < IPC_FILE_HEAD + 8 || memcmp(p, IPC_MAGIC, IPC_MAGIC_SIZE) != 0)
    return st;
  size_t prefix = ipc_prefix_size(p + IPC_FILE_HEAD);
  int32_t length;
  xchg_error ignored;
  if (ipc_prefix_decode(p + IPC_FILE_HEAD, 0, IPC_FILE_HEAD, (int64_t)PEEKED_METADATA_MAX, &length,
                        &ignored) != XCHG_OK)
    return XCHG_OK;   /* negative or larger: the reader tells */
  *yes = length == 0; /* the end-of-stream marker: no schema message either */
  if (length == 0) return XCHG_OK;
  size_t want = IPC_FILE_HEAD + prefix + (size_t)length;
  if ((st = xc_stdin_peek(want, &p, &n, err)) != XCHG_OK || n < want) return st;
  fb_table message;
  uint8_t type = 0;
  *yes = fb_root(p + IPC_FILE_HEAD + prefix, (size_t)length, &message) > 0 &&
         fb_u8(&message, MSG_HEADER_TYPE, 0, &type) >= 0 && type != HEADER_SCHEMA;
  return XCHG_OK;
}

/* Whether piped standard input begins as IPC does (xc_begins_ipc). */
static xchg_status stdin_begins_ipc(bool *yes, xchg_error *err) {
  const uint8_t *p;
  size_t n;
  xchg_status st = xc_stdin_peek(IPC_MAGIC_SIZE, &p, &n, err);
  *yes = st == XCHG_OK && xc_begins_ipc(p, n);
  return st;
}

/* Read from a pipe, such a file is held whole by the reader, with what
 * follows it, which would then be lost: standard input is copied to a file
 * first (as inspect copies it), so that it is read as a file and what
 * follows it after it, the same as from the file.  So is plain IPC read
 * with allow_missing_eos: where a stream without its marker ends, before
 * the next one's schema message, only bytes in memory tell
 * (next_in_memory): the reader would take that message in. */
static xchg_status spool_plain_ipc(const char *path, xchg_stream_codec codec,
                                   bool allow_missing_eos, xchg_error *err) {
  bool yes = false;
  if (!xc_is_piped(path) || (codec != XCHG_STREAM_AUTO && codec != XCHG_STREAM_NONE))
    return XCHG_OK;
  xchg_status st = stdin_schemaless_file(&yes, err);
  if (st == XCHG_OK && !yes && allow_missing_eos) st = stdin_begins_ipc(&yes, err);
  return st == XCHG_OK && yes ? xc_stdin_spool(err) : st;
}

bool xc_begins_marker(const uint8_t *p, size_t n) {
  static const uint8_t continuation[4] = {0xFF, 0xFF, 0xFF, 0xFF}; /* IPC_CONTINUATION */
  return n > 0 && memcmp(p, continuation, n < 4 ? n : 4) == 0;
}

bool xc_begins_ipc(const uint8_t *p, size_t n) {
  return (n >= 4 && fb_load_u32(p) == IPC_CONTINUATION) || ipc_is_file_start(p, n);
}

/* The input's bytes as far as they can be seen before it is read: all of
 * a mapped file's (src; *memory holds them, to be let go), or the first
 * `peek` of piped standard input (src NULL: looked at before it is
 * opened, which hands them out again); none (*p NULL) otherwise. */
static xchg_status seen_bytes(const char *path, xchg_source *src, size_t peek, const uint8_t **p,
                              size_t *n, xchg_buf **memory, xchg_error *err) {
  *p = NULL;
  *n = 0;
  *memory = src != NULL ? xchg_source_memory(src) : NULL;
  if (*memory != NULL) {
    *p = xchg_buf_data(*memory);
    *n = xchg_buf_size(*memory);
    return XCHG_OK;
  }
  return src == NULL && xc_is_piped(path) ? xc_stdin_peek(peek, p, n, err) : XCHG_OK;
}

/* Bytes of piped standard input looked at for what they begin with: a
 * codec's magic or IPC's marker, all within them. */
#define FIRST_BYTES_PEEK 16

/* in->first_bytes, for a stated codec (not auto, not none): what the
 * input's first bytes are when not that codec's framing, from a mapped
 * file (src) or piped standard input (src NULL: looked at before it is
 * opened, as find_skippable_frames does), so that a file and the same
 * bytes through a pipe fail in the same words. */
static xchg_status find_first_bytes(xc_input *in, const char *path, xchg_source *src,
                                    xchg_stream_codec stated, xchg_error *err) {
  if (stated == XCHG_STREAM_AUTO || stated == XCHG_STREAM_NONE) return XCHG_OK;
  const uint8_t *p;
  size_t n;
  xchg_buf *memory;
  xchg_status st = seen_bytes(path, src, FIRST_BYTES_PEEK, &p, &n, &memory, err);
  if (st != XCHG_OK) return st;
  xchg_stream_codec seen = p != NULL ? xchg_stream_codec_detect(p, n) : stated;
  if (seen != XCHG_STREAM_NONE && seen != stated)
    in->first_bytes = xchg_stream_codec_name(seen);
  else if (seen == XCHG_STREAM_NONE && xc_begins_ipc(p, n))
    in->first_bytes = "Arrow IPC";
  xchg_buf_unref(memory);
  return XCHG_OK;
}

xchg_status xc_error_hint(xchg_error *err, xchg_status st, const char *fmt, ...) {
  char hint[sizeof err->message], message[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(hint, sizeof hint, fmt, ap);
  va_end(ap);
  snprintf(message, sizeof message, "%s", err->message);
  return xchg_errorf(err, st, "%s (%s)", message, hint);
}

/* The stated codec failed on the first bytes, which find_first_bytes
 * recognised as something else: the fix is the option, which the codec's
 * own message cannot name. */
static xchg_status name_first_bytes(const xc_input *in, xchg_status st, xchg_error *err) {
  return xc_error_hint(
      err, st,
      "its first bytes are %s%s, not --input-codec %s: leave --input-codec out to detect it",
      in->first_bytes, strcmp(in->first_bytes, "Arrow IPC") != 0 ? "'s framing" : "",
      xchg_stream_codec_name(in->codec));
}

/* An input of skippable frames alone (find_skippable_frames), which no
 * codec decodes to anything: said so, not "empty" nor any codec's. */
static xchg_status skippable_only(const xc_input *in, xchg_error *err) {
  char frames[48] = "a skippable frame";
  if (in->skippable_frames > 1)
    snprintf(frames, sizeof frames, "%lld skippable frames", (long long)in->skippable_frames);
  return xchg_errorf(err, XCHG_EFORMAT,
                     "not an Arrow IPC stream or file: the input holds %s (%llu bytes, LZ4's and "
                     "zstd's frames that carry no data) and nothing else",
                     frames, (unsigned long long)in->skippable_bytes);
}

/* What a codec's first stream decodes to, refused by the reader as not
 * Arrow IPC: said of the decoded bytes, whose offsets the reader's words
 * give, naming the codec that was read (detected, most often); and not
 * "empty" when they are no bytes at all (an LZ4 or zstd frame of no
 * content, an lz4-java stream of its end block alone...), which the file
 * is not.  Only the reader's own words are rewritten: a codec that fails
 * keeps its error. */
static xchg_status name_decoded(const xc_input *in, xchg_status st, xchg_error *err) {
  static const char not_arrow[] = "not an Arrow IPC stream or file: ";
  xchg_stream_codec codec = xchg_istream_codec(in->stream);
  if (st != XCHG_EFORMAT || codec == XCHG_STREAM_NONE || codec == XCHG_STREAM_AUTO ||
      codec == XCHG_STREAM_COMET || strncmp(err->message, not_arrow, sizeof not_arrow - 1) != 0)
    return st;
  char rest[sizeof err->message];
  snprintf(rest, sizeof rest, "%s", err->message + sizeof not_arrow - 1);
  if (strcmp(rest, "the input is empty") == 0)
    return xchg_errorf(err, XCHG_EFORMAT, "%sthe input's %s stream decodes to no bytes at all",
                       not_arrow, xchg_stream_codec_name(codec));
  return xchg_errorf(err, XCHG_EFORMAT,
                     "the input's %s stream decodes to bytes that are not an Arrow IPC stream or "
                     "file: %s",
                     xchg_stream_codec_name(codec), rest);
}

/* Bytes in memory that begin as a stream codec's reach the plain reader
 * only when --input-codec none says so (auto would have chosen the codec):
 * if they are then refused, the fix is the option, which the reader's own
 * message cannot name, unless they are skippable frames alone, which
 * another codec would not read either. */
static xchg_status name_stated_codec(const xc_input *in, xchg_status st, xchg_error *err) {
  xchg_stream_codec seen =
      xchg_stream_codec_detect(xchg_buf_data(in->memory), xchg_buf_size(in->memory));
  if (st != XCHG_EFORMAT || seen == XCHG_STREAM_NONE) return st;
  if (in->skippable_frames > 0) return skippable_only(in, err);
  const char *name = xchg_stream_codec_name(seen);
  return xchg_errorf(err, st,
                     "not an Arrow IPC stream or file, as --input-codec none reads it: its first "
                     "bytes are %s's framing (leave --input-codec out to detect it, or give "
                     "--input-codec %s)",
                     name, name);
}

/* Skippable frames (is_skippable_frame_magic, a 4-byte length, that many
 * bytes) carry no data, and an input of them alone decodes to nothing: how
 * many make up the n bytes at p exactly, 0 when anything else is there too. */
static int64_t skippable_frames_only(const uint8_t *p, size_t n) {
  int64_t frames = 0;
  while (n >= 8 && is_skippable_frame_magic(fb_load_u32(p))) {
    uint64_t size = 8 + (uint64_t)fb_load_u32(p + 4);
    if (size > n) return 0;
    p += size;
    n -= (size_t)size;
    frames++;
  }
  return n == 0 ? frames : 0;
}

/* Bytes of standard input looked at for skippable frames alone. */
#define SKIPPABLE_PEEK 4096

/* in->skippable_frames and _bytes, from the whole input when it can be
 * seen: a mapped file (src), or piped standard input that is short (src
 * NULL: looked at before it is opened, which hands the bytes out). */
static xchg_status find_skippable_frames(xc_input *in, const char *path, xchg_source *src,
                                         xchg_error *err) {
  const uint8_t *p;
  size_t n;
  xchg_buf *memory;
  xchg_status st = seen_bytes(path, src, 8, &p, &n, &memory, err);
  bool piped = st == XCHG_OK && memory == NULL && p != NULL;
  /* Piped, read ahead further only after a skippable frame's magic, so
   * that a slow pipe of IPC is not waited for. */
  if (piped && n >= 4 && is_skippable_frame_magic(fb_load_u32(p)))
    st = xc_stdin_peek(SKIPPABLE_PEEK, &p, &n, err);
  if (st != XCHG_OK) return st;
  if (piped && n >= SKIPPABLE_PEEK) n = 0; /* more may follow: not seen whole */
  if (p != NULL && (in->skippable_frames = skippable_frames_only(p, n)) > 0)
    in->skippable_bytes = n;
  xchg_buf_unref(memory);
  return XCHG_OK;
}

xchg_status xc_input_open(xc_input *in, const char *path, xchg_stream_codec codec, bool one_schema,
                          const xc_stream_check *check, bool allow_missing_eos, int64_t limit,
                          xchg_error *err) {
  memset(in, 0, sizeof *in);
  in->path = path;
  in->one_schema = one_schema;
  in->check = check;
  in->allow_missing_eos = allow_missing_eos;
  xchg_source *src;
  xchg_status st = spool_plain_ipc(path, codec, allow_missing_eos, err);
  if (st == XCHG_OK) st = find_skippable_frames(in, path, NULL, err);
  if (st == XCHG_OK) st = find_first_bytes(in, path, NULL, codec, err);
  if (st == XCHG_OK) st = xc_open_source(path, &src, err);
  if (st == XCHG_OK) st = find_skippable_frames(in, path, src, err); /* mapped: never fails */
  if (st == XCHG_OK) st = find_first_bytes(in, path, src, codec, err);
  if (st != XCHG_OK) return st;
  if (codec == XCHG_STREAM_AUTO) {
    /* A mapped file is looked at before choosing, so that plain IPC goes to
     * the reader mapped, footer and all.  Standard input cannot be looked
     * at twice: there the decoder detects, passing plain IPC through. */
    xchg_buf *memory = xchg_source_memory(src);
    if (memory != NULL) {
      codec = xchg_stream_codec_detect(xchg_buf_data(memory), xchg_buf_size(memory));
      xchg_buf_unref(memory);
    }
  }
  if (codec == XCHG_STREAM_NONE) {
    in->plain = src;
    in->memory = xchg_source_memory(src); /* where IPC streams after the first are looked for */
    return in->memory != NULL ? name_stated_codec(in, check_in_memory(in, limit, err), err)
                              : XCHG_OK;
  }
  xchg_istream_options opts;
  xchg_istream_options_init(&opts);
  opts.metrics = 0;       /* byte counts are enough for inspect */
  opts.split_members = 1; /* Comet: one IPC stream per block */
  if ((st = xchg_istream_open(src, codec, &opts, &in->stream, err)) != XCHG_OK) return st;
  in->codec = xchg_istream_codec(in->stream);
  /* A Comet block holds one IPC stream, which ends where the block does. */
  if (allow_missing_eos && in->codec != XCHG_STREAM_COMET)
    st = xc_split_new(in->stream, &in->split, err);
  return st;
}

/* Where the decoded bytes not yet handed to a reader begin. */
static uint64_t decoded_position(const xc_input *in) {
  return (uint64_t)xchg_istream_position(in->stream) - xc_split_held(in->split);
}

/* Whether the n bytes at p, the first of what follows an IPC stream as far
 * as it has arrived (a pipe or a codec hands it out in pieces), may begin
 * another one: fewer bytes than a marker or the magic are judged by what
 * there is of them, so that a short tail that is not IPC is named as such,
 * and a marker or magic cut by a piece's end is not. */
static bool may_begin_ipc(const uint8_t *p, size_t n) {
  return xc_begins_marker(p, n) ||
         memcmp(p, IPC_MAGIC, n < IPC_MAGIC_SIZE ? n : IPC_MAGIC_SIZE) == 0;
}

/* count: how many bytes follow, -1 when unknown (too many to count). */
static xchg_status not_a_stream(const xc_input *in, const uint8_t *p, size_t n, int64_t count,
                                xchg_error *err) {
  char follow[64] = "bytes follow that are";
  if (count >= 0)
    snprintf(follow, sizeof follow, "%lld byte%s that %s", (long long)count,
             count == 1 ? " follows" : "s follow", count == 1 ? "is" : "are");
  /* The first four bytes, or as many as there are: no byte is made up. */
  char start[16] = ""; /* "xx xx xx xx" */
  for (size_t i = 0, len = 0; i < n && i < 4; i++)
    len += (size_t)snprintf(start + len, sizeof start - len, "%s%02x", i ? " " : "", p[i]);
  const char *shown = count >= 0 && count <= 4 ? count == 1 ? "it is" : "they are" : "they begin";
  return xchg_errorf(
      err, XCHG_EFORMAT,
      "the IPC %s ends at %sbyte %llu%s and %s not an Arrow IPC "
      "stream or file (%s %s)",
      in->ended_file ? "file" : "stream", in->codec != XCHG_STREAM_NONE ? "decoded " : "",
      (unsigned long long)in->stream_end, in->ended_file ? ", after its closing ARROW1 magic," : "",
      follow, shown, start);
}

/* The most bytes after an IPC stream counted from a pipe or a codec, to
 * say how many follow as a file in memory says it (not_a_stream): an
 * input that never ends is not waited for. */
#define FOLLOW_COUNT_MAX ((int64_t)64 << 20)

/* How many bytes are left in the member, read to count them: -1 when
 * more than FOLLOW_COUNT_MAX, or when reading them fails (the error at
 * hand is what follows the stream, not that). */
static int64_t count_rest(xc_input *in) {
  int64_t count = 0;
  xchg_error ignored;
  for (;;) {
    const void *ptr;
    size_t len = 0;
    if (xchg_istream_next(in->stream, &ptr, &len, &ignored) != XCHG_OK) return -1;
    if (len == 0) return count;
    if ((count += (int64_t)len) > FOLLOW_COUNT_MAX) return -1;
  }
}

/* Whether decoded bytes follow the IPC stream just read, in the same
 * member; they must begin another IPC stream. */
static xchg_status bytes_follow(xc_input *in, bool *more, xchg_error *err) {
  const void *ptr;
  size_t len = 0;
  xchg_status st = xchg_istream_next(in->stream, &ptr, &len, err);
  *more = st == XCHG_OK && len > 0;
  if (!*more) return st;
  xchg_istream_unread(in->stream, len);
  in->stream_end = xchg_istream_position(in->stream);
  if (in->streams == 0 || may_begin_ipc(ptr, len)) {
    in->is_file = ipc_is_file_start(ptr, len); /* the next one's, its reader may fail */
    return XCHG_OK;
  }
  uint8_t start[4]; /* what not_a_stream shows, kept before the bytes are read on */
  size_t shown = len < sizeof start ? len : sizeof start;
  memcpy(start, ptr, shown);
  return not_a_stream(in, start, shown, count_rest(in), err);
}

/* The n bytes at p, an IPC stream read with allow_missing_eos, up to the
 * next stream's schema message, where a stream that ends without its
 * marker stops (as the shuffle reader sees it): the reader, which takes
 * one stream, then ends there; or up to bytes that are no message at all.
 * All n when there is neither, at the marker, and where the framing is
 * bad or cut, for the reader to say so. */
static size_t up_to_next_schema(const uint8_t *p, size_t n, int64_t max_metadata_bytes) {
  if (ipc_is_file_start(p, n)) return n; /* a file ends at its footer */
  bool marked = xc_begins_marker(p, n);
  for (size_t at = 0; at < n;) {
    /* A stream whose messages have the marker ends before bytes that do
     * not begin with it: what follows it (not IPC, or an IPC file), which
     * next_in_memory then names, not a message of this stream. */
    if (at > 0 && marked && !xc_begins_marker(p + at, n - at)) return at;
    ipc_message_view m;
    if (ipc_message_view_decode(p + at, n - at, 0, (int64_t)at, max_metadata_bytes, &m, NULL) !=
            XCHG_OK ||
        m.eos)
      return n;
    if (at > 0 && m.header_type == HEADER_SCHEMA) return at;
    at += (size_t)m.size;
  }
  return n;
}

/* Plain IPC in memory: where the next IPC stream begins, if one does. */
static xchg_status next_in_memory(xc_input *in, const xchg_ipc_read_options *opts,
                                  xchg_source **src, xchg_error *err) {
  *src = NULL;
  size_t size = xchg_buf_size(in->memory);
  if (in->stream_end == UINT64_MAX || in->stream_end >= size) return XCHG_OK;
  const uint8_t *p = xchg_buf_data(in->memory) + in->stream_end;
  size_t n = size - (size_t)in->stream_end;
  if (in->streams > 0 && !xc_begins_ipc(p, n)) return not_a_stream(in, p, n, (int64_t)n, err);
  in->is_file = ipc_is_file_start(p, n);
  if (opts->allow_missing_eos) n = up_to_next_schema(p, n, opts->max_metadata_bytes);
  xchg_buf *rest = xchg_buf_slice(in->memory, (size_t)in->stream_end, n);
  xchg_status st = rest != NULL ? xchg_source_from_buf(rest, src, err)
                                : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_buf_unref(rest);
  return st;
}

/* Moves past the IPC stream just read (a file read in order ends at its
 * closing magic); *more is false at the end. */
static xchg_status advance(xc_input *in, bool *more, xchg_error *err) {
  *more = false;
  if (in->stream == NULL) return XCHG_OK;
  size_t held = xc_split_held(in->split);
  if (held > 0) { /* the next IPC stream's schema message ended this one, or what is no message */
    const uint8_t *p = xc_split_held_bytes(in->split);
    in->stream_end = decoded_position(in);
    *more = true;
    if (may_begin_ipc(p, held)) {
      in->is_file = ipc_is_file_start(p, held); /* the next one's, as bytes_follow says */
      return XCHG_OK;
    }
    uint8_t start[4]; /* what not_a_stream shows, kept before the bytes are read on */
    size_t shown = held < sizeof start ? held : sizeof start;
    memcpy(start, p, shown);
    int64_t rest = count_rest(in);
    return not_a_stream(in, start, shown, rest < 0 ? -1 : (int64_t)held + rest, err);
  }
  xchg_status st = bytes_follow(in, more, err);
  if (st != XCHG_OK || *more) return st;
  int next_member = 0;
  st = xchg_istream_next_member(in->stream, &next_member, err);
  *more = st == XCHG_OK && next_member;
  if (*more) in->is_file = false; /* a member's first bytes are seen by its reader only */
  return st;
}

/* The source of the next IPC stream, NULL at the end of the input. */
static xchg_status next_source(xc_input *in, const xchg_ipc_read_options *opts, xchg_source **src,
                               xchg_error *err) {
  if (in->memory != NULL && opts->allow_missing_eos) {
    xchg_source_free(in->plain); /* the same bytes, to be cut at the next stream */
    in->plain = NULL;
  }
  *src = in->plain;
  in->plain = NULL;
  if (*src != NULL) return XCHG_OK;
  if (in->memory != NULL) return next_in_memory(in, opts, src, err);
  bool more = in->streams == 0;
  xchg_status st = in->streams == 0 ? XCHG_OK : advance(in, &more, err);
  in->decoder_failed = st != XCHG_OK;
  /* A Comet partition with no rows is an empty file: zero IPC streams, as
   * Comet's own reader sees it. */
  if (st == XCHG_OK && more && in->streams == 0 && in->codec == XCHG_STREAM_COMET)
    st = bytes_follow(in, &more, err);
  if (st != XCHG_OK || !more) return st;
  if (in->split != NULL) return xc_split_source(in->split, opts->max_metadata_bytes, src, err);
  return xchg_source_from_istream_borrowed(in->stream, src, err);
}

/* one_schema: the first IPC stream's schema is kept, and every later one
 * must be the same, metadata too (ipc_schema_equal's rule). */
static xchg_status check_schema(xc_input *in, xchg_ipc_reader *reader, xchg_error *err) {
  struct ArrowSchema here;
  xchg_status st =
      xchg_ipc_reader_schema(reader, in->first.release == NULL ? &in->first : &here, err);
  if (st != XCHG_OK || in->streams == 1) return st;
  int same = 0;
  const char *first = xc_ipc_kind(in->first_file);
  char where[32];
  snprintf(where, sizeof where, "in the first IPC %s", first);
  st = ipc_arrow_schema_equal(&in->first, where, &here, "here", IPC_METADATA_COMPARED, &same, err);
  if (st == XCHG_OK && !same) {
    xchg_error_prefix(err, "its schema differs from the first IPC %s's: ", first);
    st = XCHG_EFORMAT;
  }
  here.release(&here);
  return st;
}

xchg_status xc_input_next(xc_input *in, const xchg_ipc_read_options *opts, xchg_ipc_reader **out,
                          xchg_error *err) {
  *out = NULL;
  xchg_ipc_read_options read;
  if (opts != NULL)
    read = *opts;
  else
    xchg_ipc_read_options_init(&read);
  read.allow_missing_eos = in->allow_missing_eos;
  xchg_source *src;
  xchg_status st = next_source(in, &read, &src, err);
  /* A Comet header is read before any stream: its failure is at the start */
  if (st != XCHG_OK && in->streams == 0 && in->first_bytes != NULL)
    return name_first_bytes(in, st, err);
  if (st != XCHG_OK || src == NULL) return st;
  in->stream_start = in->stream != NULL ? decoded_position(in) : in->stream_end;
  in->stream_end = UINT64_MAX;
  in->streams++;
  st = xchg_ipc_reader_open(src, &read, out, err); /* takes src, even on failure */
  if (st == XCHG_OK) in->is_file = xchg_ipc_reader_format(*out) == XCHG_IPC_FILE;
  if (in->streams == 1) in->first_file = in->is_file;
  /* Decoded, they are no bytes at all, which the reader calls an empty
   * input: what the input holds is said instead. */
  bool at_start = in->streams == 1 && in->stream != NULL && decoded_position(in) == 0;
  if (st == XCHG_EFORMAT && at_start && in->skippable_frames > 0) st = skippable_only(in, err);
  if (st != XCHG_OK && in->streams == 1 && in->stream != NULL && in->first_bytes == NULL &&
      in->skippable_frames == 0)
    st = name_decoded(in, st, err);
  if (st != XCHG_OK && at_start && in->first_bytes != NULL) st = name_first_bytes(in, st, err);
  if (st == XCHG_OK && in->one_schema) st = check_schema(in, *out, err);
  if (st == XCHG_OK && in->check != NULL)
    st = in->check->fn(in->check->ctx, *out, in->streams, err);
  if (st != XCHG_OK) {
    xchg_ipc_reader_free(*out);
    *out = NULL;
  }
  return st;
}

void xc_input_end_stream(xc_input *in, xchg_ipc_reader *reader) {
  int64_t end = reader != NULL ? xchg_ipc_reader_stream_end(reader) : -1;
  in->ended_file = reader != NULL && xchg_ipc_reader_format(reader) == XCHG_IPC_FILE;
  if (in->memory != NULL) in->stream_end = end >= 0 ? in->stream_start + (uint64_t)end : UINT64_MAX;
  xchg_ipc_reader_free(reader);
}

xchg_status xc_input_no_schema(const xc_input *in, const char *output, xchg_error *err) {
  return xchg_errorf(
      err, XCHG_EFORMAT, "holds no IPC stream, so no schema for %s%s", output,
      in->codec == XCHG_STREAM_COMET ? " (an empty Comet input: a partition without rows)" : "");
}

int64_t xc_input_comet_field_count(const xc_input *in) {
  return in->stream != NULL ? xchg_istream_comet_field_count(in->stream) : -1;
}

/* Where the codec's own words begin in an error of the IPC reader over
 * a codec, which name the compressed input's bytes: after the words of a
 * failed read, "reading at decoded byte N: " (stream_istream.c), or of a
 * frame's end checked after the stream's, "after the end of the IPC
 * stream at byte N: " (reader.c); NULL when they have no part in it. */
static const char *codec_words(const char *message) {
  const char *read = strstr(message, "reading at " XC_DECODED_BYTE);
  const char *finished = strstr(message, "after the end of the IPC ");
  if (finished != NULL) finished = strstr(finished, ": ");
  if (read == NULL || (finished != NULL && finished < read)) return finished;
  return read;
}

/* The IPC reader over a codec reads decoded bytes, and names them as it
 * names a file's, "at byte N": said to be decoded, so that they are not
 * looked for in the file.  The codec's words are left as they are. */
void xc_say_decoded(xchg_error *err) {
  static const char at[] = "at byte ";
  /* Each offset adds 8 bytes, and takes 9 or more: twice the room is enough. */
  char said[2 * sizeof err->message];
  const char *p = err->message, *codec = codec_words(p);
  size_t n = 0;
  for (const char *hit; (hit = strstr(p, at)) != NULL && (codec == NULL || hit < codec);
       p = hit + sizeof at - 1) {
    bool offset = hit[sizeof at - 1] >= '0' && hit[sizeof at - 1] <= '9';
    n += (size_t)snprintf(said + n, sizeof said - n, "%.*s%s", (int)(hit - p), p,
                          offset ? "at " XC_DECODED_BYTE : at);
  }
  if (p == err->message) return;
  snprintf(said + n, sizeof said - n, "%s", p);
  size_t kept = strlen(said) < sizeof err->message ? strlen(said) : sizeof err->message - 1;
  memcpy(err->message, said, kept); /* cut as xchg_errorf cuts a long message */
  err->message[kept] = '\0';
}

/* Whether err, which is not about a Comet input, says what a stream that
 * ends without its marker, followed by another stream, reads as, and does
 * not yet say the fix (an error found when a file is opened is located
 * again by a command that does not know it was). */
static bool another_stream_follows(const xc_input *in, const xchg_error *err) {
  return !in->allow_missing_eos && in->codec != XCHG_STREAM_COMET &&
         strstr(err->message, IPC_SECOND_SCHEMA) != NULL &&
         strstr(err->message, XC_MISSING_EOS_HINT) == NULL;
}

void xc_input_locate_error(const xc_input *in, xchg_error *err) {
  if (in->codec != XCHG_STREAM_NONE && in->codec != XCHG_STREAM_COMET && !in->decoder_failed)
    xc_say_decoded(err);
  if (another_stream_follows(in, err))
    (void)xc_error_hint(err, XCHG_EFORMAT, "%s", XC_MISSING_EOS_HINT);
  if (in->streams > 1)
    xchg_error_prefix(err, "IPC %s %lld at %sbyte %llu: ", xc_ipc_kind(in->is_file),
                      (long long)in->streams, in->codec != XCHG_STREAM_NONE ? "decoded " : "",
                      (unsigned long long)in->stream_start);
}

/* A plain input in memory is read through once before anything is shown:
 * every IPC stream's framing and schema (bodies left alone), so that an
 * input that a command would reject part way (bytes after the last IPC
 * stream that are not one, another schema, what the command's check
 * refuses, a cut message) is rejected before any output, with the same
 * error.  Only as far as the first `limit` rows (-1: all): what follows
 * them is never read, and a cut there does not matter, as `head`
 * expects of `cat --limit`. */
static xchg_status check_in_memory(const xc_input *in, int64_t limit, xchg_error *err) {
  xc_input probe = {.path = in->path,
                    .memory = xchg_buf_ref(in->memory),
                    .stream_end = 0,
                    .one_schema = in->one_schema,
                    .check = in->check,
                    .allow_missing_eos = in->allow_missing_eos};
  xchg_status st = XCHG_OK;
  int64_t rows = 0;
  for (bool enough = false; !enough;) {
    xchg_ipc_reader *reader;
    if ((st = xc_input_next(&probe, NULL, &reader, err)) != XCHG_OK || reader == NULL) break;
    st = xchg_ipc_reader_select_indices(reader, NULL, 0, err); /* no column: no body is read */
    for (int at_end = 0; st == XCHG_OK && !at_end && !(enough = limit >= 0 && rows >= limit);) {
      xchg_batch_header header;
      st = xchg_ipc_reader_peek(reader, &header, &at_end, err);
      if (st == XCHG_OK && !at_end) st = xchg_ipc_reader_skip(reader, err);
      rows += header.rows; /* 0 at the end or on an error */
    }
    xc_input_end_stream(&probe, reader);
    if (st != XCHG_OK) break;
  }
  if (st != XCHG_OK) xc_input_locate_error(&probe, err);
  xc_input_close(&probe);
  return st;
}

void xc_input_close(xc_input *in) {
  if (in->first.release != NULL) in->first.release(&in->first);
  xchg_source_free(in->plain);
  xc_split_free(in->split);
  xchg_istream_free(in->stream);
  xchg_buf_unref(in->memory);
  memset(in, 0, sizeof *in);
}

/* text on standard error, its control characters escaped (\n, \t, \r,
 * \xNN): an error may quote what the input holds (a field name, a
 * metadata value), and an untrusted file must neither split the line nor
 * send the terminal escape sequences. */
static void put_escaped(const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
    if (*p >= 0x20 && *p != 0x7f)
      fputc(*p, stderr);
    else if (*p == '\n')
      fputs("\\n", stderr);
    else if (*p == '\t')
      fputs("\\t", stderr);
    else if (*p == '\r')
      fputs("\\r", stderr);
    else
      fprintf(stderr, "\\x%02X", *p);
  }
}

/* Whether message says that an IPC stream ends where a message would
 * begin, without its end-of-stream marker (IPC_ENDS_WITHOUT_MARKER, which
 * the readers say of a stream "cut short", at a byte or, over a codec, a
 * decoded byte).  A file that ends so is cut
 * short ("the file is cut short"), with --allow-missing-eos too. */
static bool ends_without_marker(const char *message) {
  const char *cut = strstr(message, "the stream is cut short: the input ends at ");
  return cut != NULL && strstr(cut, IPC_WITHOUT_MARKER) != NULL;
}

int xc_runtime_error(const char *path, const char *message) {
  xc_progress_erase();
  fflush(stdout); /* keep what was printed before the error ahead of it */
  /* Errors of opening a file begin with its path already (io.h). */
  const char *label = xc_input_label(path);
  size_t n = strlen(label);
  bool named = strncmp(message, label, n) == 0 && strncmp(message + n, ": ", 2) == 0;
  fputs("xchg: ", stderr);
  if (!named) {
    put_escaped(label);
    fputs(": ", stderr);
  }
  put_escaped(message);
  /* The marker is optional in Arrow's format: a stream whose writer left
   * it out reads as one cut at a message boundary, unless asked for. */
  if (ends_without_marker(message)) fputs(" (" XC_MISSING_EOS_HINT ")", stderr);
  fputc('\n', stderr);
  return XC_EXIT_ERROR;
}

int xc_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }
