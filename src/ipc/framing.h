/* framing.h — the encapsulated message format of Columnar.rst, on bytes:
 * the one place that knows how a message is framed (private to src/ipc
 * and the layers above it).
 *
 * A message is a prefix — the 0xFFFFFFFF continuation marker and an int32
 * metadata length, or (before Arrow 0.15) the length alone — then that
 * many bytes of Message flatbuffer, padding included, then the body the
 * flatbuffer declares.  A prefix of length 0 is the end-of-stream marker.
 * As nanoarrow's ArrowIpcDecoderPeekHeader / DecodeHeader, the steps are
 * apart, so that a reader of a byte stream reads the prefix word by word
 * and a reader of memory decodes a whole message at once:
 *   ipc_prefix_size   how many bytes the prefix takes, from its first 4;
 *   ipc_prefix_decode the metadata length, checked against the caps;
 *   ipc_metadata_check the metadata against the bytes there are;
 *   ipc_message_decode the Message flatbuffer (message.h) of a message
 *                     read from a source, its body checked against the
 *                     bytes there are (ipc_body_check);
 *   ipc_message_view_decode all of it over bytes in memory;
 *   ipc_stream_extent where a whole stream in memory ends.
 * The stream and file reader (reader.c) and the batch decoder
 * (batch_decoder.c) read prefixes from their sources and decode them here;
 * the shuffle reader, and the batch decoder for a payload in memory,
 * decode whole messages in memory. */
#ifndef XCHG_IPC_FRAMING_H
#define XCHG_IPC_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/decode.h"
#include "ipc/flatbuf.h"
#include "xchg/buf.h"
#include "xchg/error.h"

/* The bytes of the prefix that starts with these 4: 8 after a continuation
 * marker, 4 for the pre-0.15 framing. */
size_t ipc_prefix_size(const uint8_t first[4]);

/* Decodes a prefix of ipc_prefix_size(p) bytes at p into *metadata_length
 * (0: the end-of-stream marker).  A negative length is XCHG_EFORMAT, one
 * above max_metadata_bytes XCHG_ELIMIT, each naming message `index` and
 * the byte `offset` of its prefix. */
xchg_status ipc_prefix_decode(const uint8_t *p, int64_t index, int64_t offset,
                              int64_t max_metadata_bytes, int32_t *metadata_length,
                              xchg_error *err);

/* Metadata of `length` bytes said to start at byte `metadata_at`, just
 * after the prefix, with `avail` bytes there: XCHG_EIO when they run past
 * them, worded as a source that runs out words it (as ipc_body_check). */
xchg_status ipc_metadata_check(int32_t length, int64_t avail, int64_t index, int64_t offset,
                               int64_t metadata_at, xchg_error *err);

/* A body length that a message states, with `avail` bytes after its
 * metadata, which end at byte `body_at` (avail -1: not known): negative is
 * XCHG_EFORMAT, past avail XCHG_EIO, worded as a source that runs out says
 * it, so that a cut body reads the same in a file as through a pipe. */
xchg_status ipc_body_check(int64_t body_length, int64_t avail, int64_t index, int64_t offset,
                           int64_t body_at, xchg_error *err);

/* A message read from a source: its metadata in a buffer of its own, where
 * its body is, and the body once a reader attaches it. */
typedef struct ipc_message {
  xchg_buf *metadata;
  fb_table header; /* Schema, DictionaryBatch or RecordBatch */
  int header_type;
  int version;
  int64_t index;
  int64_t offset; /* of the prefix */
  int64_t body_offset;
  int64_t body_length;
  ipc_body body; /* attached when decoded */
} ipc_message;

/* Parses m->metadata into m's header, header type, version and body
 * length, and checks the body against the `avail` bytes of the input after
 * the metadata (-1: not known).  Errors name m->index and m->offset. */
xchg_status ipc_message_decode(ipc_message *m, int64_t avail, xchg_error *err);

/* One message in memory. */
typedef struct ipc_message_view {
  int eos;                 /* the end-of-stream marker: nothing else is set */
  const uint8_t *metadata; /* the Message flatbuffer */
  int32_t metadata_size;
  fb_table header; /* Schema, DictionaryBatch or RecordBatch */
  int header_type;
  int version;
  int64_t body_offset; /* from the start of the message */
  int64_t body_length;
  int64_t size; /* prefix, metadata and body: where the next message starts */
} ipc_message_view;

/* Decodes the message that starts at p, with avail bytes there: its
 * prefix, its flatbuffer and where its body is.  A message cut by the end
 * of the bytes (prefix, metadata or body) is XCHG_EIO; errors name message
 * `index` and the byte `offset` of p. */
xchg_status ipc_message_view_decode(const uint8_t *p, size_t avail, int64_t index, int64_t offset,
                                    int64_t max_metadata_bytes, ipc_message_view *out,
                                    xchg_error *err);

/* The bytes of the IPC stream at p up to and including its end-of-stream
 * marker, when they all lie within avail; 0 when they do not, or when the
 * framing is bad (decoding the stream says how). */
int64_t ipc_stream_extent(const uint8_t *p, size_t avail, int64_t max_metadata_bytes);

/* How a stream that ends where a message would begin, without its
 * end-of-stream marker, is said, given the byte the input ends at and the
 * index of the message that would have begun there (long long each): the
 * IPC reader, the batch decoder and the shuffle reader say it alike, and
 * the CLI finds IPC_WITHOUT_MARKER in it to name --allow-missing-eos. */
#define IPC_WITHOUT_MARKER ", without the end-of-stream marker"
#define IPC_ENDS_WITHOUT_MARKER \
  "the input ends at byte %lld, before message %lld" IPC_WITHOUT_MARKER

/* How the IPC reader says that a stream holds a schema message after its
 * first message: as often as not the next stream's, after a stream whose
 * writer left its marker out, so the CLI finds it to name
 * --allow-missing-eos too. */
#define IPC_SECOND_SCHEMA "a second schema message"

/* Whether the avail bytes at p begin with an IPC file's ARROW1 magic: an
 * IPC file given where a stream or a message is read, whose magic read as
 * a metadata length would be a huge one. */
int ipc_is_file_start(const uint8_t *p, size_t avail);

/* XCHG_EFORMAT saying so: "it is an Arrow IPC file (ARROW1 magic at byte
 * 0), <instead>", instead telling what is read there and how. */
xchg_status ipc_file_given(const char *instead, xchg_error *err);

/* The Schema table of the bytes of a schema message, with its prefix (the
 * continuation marker and length, or the pre-0.15 length alone) or without
 * (the flatbuffer alone); *flatbuffer and *flatbuffer_size (each may be
 * NULL) get where its Message flatbuffer lies. */
xchg_status ipc_schema_message_table(const uint8_t *p, size_t size, fb_table *out,
                                     const uint8_t **flatbuffer, size_t *flatbuffer_size,
                                     xchg_error *err);

#endif
