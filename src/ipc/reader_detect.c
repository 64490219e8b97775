/* reader_detect.c — what the first bytes of a reader's input say: Arrow
 * IPC (a file, a marked stream, a pre-0.15 stream) or, most often when it
 * is not, which other format it is and what to do about it. */
#include <string.h>

#include "ipc/format.h"
#include "ipc/reader_state.h"

/* Reads the schema message that starts a stream into r's schema. */
static xchg_status read_schema_message(xchg_ipc_reader *r, xchg_error *err) {
  ipc_message m;
  int eos;
  xchg_status st = reader_read_message(r, &m, &eos, err);
  if (st != XCHG_OK) return st;
  /* The end of the input (allow_missing_eos), or a marker where the schema
   * belongs: an input that is a marker alone, or a stream's marker written
   * twice (the CLI reads on past the first as another IPC stream). */
  if (eos && reader_position(r) == m.offset)
    return xchg_errorf(err, XCHG_EIO, "the input ends before its schema message");
  if (eos)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "message 0 at byte %lld is an end-of-stream marker, not a schema",
                       (long long)m.offset);
  if (m.header_type != HEADER_SCHEMA) {
    int64_t at = m.offset;
    reader_message_clear(&m);
    return xchg_errorf(err, XCHG_EFORMAT, "message 0 at byte %lld is not a schema", (long long)at);
  }
  return reader_take_schema_message(r, &m, NULL, err);
}

#define NOT_ARROW "not an Arrow IPC stream or file: "

/* The magic numbers of what is most often handed to a reader instead of
 * Arrow IPC, and what to do about it. */
static const struct {
  const char *magic, *shown, *what;
  size_t size;
} other_formats[] = {
    {"PAR1", "PAR1", "a Parquet file", 4},
    {"\x1f\x8b", "1f 8b", "a gzip file: decompress it first, gzip -d", 2},
    {"BZh", "BZh", "a bzip2 file: decompress it first, bzip2 -d", 3},
    {"\xfd"
     "7zXZ\0",
     "fd 37 7a 58 5a 00", "an xz file: decompress it first, xz -d", 6},
    {"\x28\xb5\x2f\xfd", "28 b5 2f fd",
     "a zstd frame: read it through its stream codec (xchg/stream.h)", 4},
    {"\x04\x22\x4d\x18", "04 22 4d 18",
     "an LZ4 frame: read it through its stream codec (xchg/stream.h)", 4},
    /* what `lz4 -l` writes: no stream codec reads it, so say how to undo it */
    {"\x02\x21\x4c\x18", "02 21 4c 18",
     "an LZ4 legacy frame (lz4 -l), which xchg does not read: decompress it first, lz4 -d", 4},
    /* Spark's own stream codecs, what a shuffle or broadcast file holds */
    {"LZ4Block", "LZ4Block",
     "an lz4-java stream, Spark's LZ4 codec: read it through its stream codec (xchg/stream.h)", 8},
    {"\x82SNAPPY\0", "82 53 4e 41 50 50 59 00",
     "a snappy-java stream, Spark's Snappy codec: read it through its stream codec "
     "(xchg/stream.h)",
     8},
    /* the stream identifier chunk, whose 10 bytes are longer than the peek */
    {"\xff\x06\x00\x00sNaP", "ff 06 00 00 73 4e 61 50",
     "a framed Snappy stream: read it through its stream codec (xchg/stream.h)", 8},
};

/* Refuses the inputs that the first bytes show are not Arrow IPC. */
xchg_status reader_check_arrow_start(const xchg_ipc_reader *r, xchg_error *err) {
  if (r->peek_len == 0) return xchg_errorf(err, XCHG_EFORMAT, NOT_ARROW "the input is empty");
  for (size_t i = 0; i < sizeof other_formats / sizeof other_formats[0]; i++)
    if (r->peek_len >= other_formats[i].size &&
        memcmp(r->peek, other_formats[i].magic, other_formats[i].size) == 0)
      return xchg_errorf(err, XCHG_EFORMAT, NOT_ARROW "%s magic at byte 0 (%s)",
                         other_formats[i].shown, other_formats[i].what);
  return XCHG_OK;
}

/* A stream starts with the continuation marker, or (before Arrow 0.15)
 * directly with the schema message's metadata length.  Bytes that start
 * neither a file nor a marked stream pass for such a length, so when no
 * schema message can be read after them, the input is not said to be a
 * damaged stream, which it almost never is, but something else; a length
 * that is not even plausible (negative, or above max_metadata_bytes) is
 * not shown at all.  Failures that say nothing of the bytes (memory,
 * cancellation) stay as they are. */
xchg_status reader_open_stream_format(xchg_ipc_reader *r, xchg_error *err) {
  xchg_status st = read_schema_message(r, err);
  int marked = r->peek_len >= 4 && ipc_prefix_size(r->peek) == 8;
  if (st == XCHG_OK || st == XCHG_ENOMEM || st == XCHG_ECANCELLED || marked) return st;
  int32_t length = r->peek_len >= 4 ? (int32_t)fb_load_u32(r->peek) : -1;
  if (length <= 0 || length > r->opts.max_metadata_bytes)
    return xchg_errorf(err, XCHG_EFORMAT,
                       NOT_ARROW "no continuation marker or ARROW1 magic at byte 0");
  xchg_error_prefix(err, NOT_ARROW
                    "no continuation marker or ARROW1 magic at byte 0, nor a "
                    "pre-0.15 stream: ");
  return XCHG_EFORMAT;
}
