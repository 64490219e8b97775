/* framing.c — see framing.h. */
#include "ipc/framing.h"

#include <string.h>

#include "ipc/format.h"
#include "ipc/message.h"

size_t ipc_prefix_size(const uint8_t first[4]) {
  return fb_load_u32(first) == IPC_CONTINUATION ? 8 : 4;
}

xchg_status ipc_prefix_decode(const uint8_t *p, int64_t index, int64_t offset,
                              int64_t max_metadata_bytes, int32_t *metadata_length,
                              xchg_error *err) {
  int32_t length = (int32_t)fb_load_u32(p + ipc_prefix_size(p) - 4);
  *metadata_length = length;
  if (length < 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: negative metadata length %d",
                       (long long)index, (long long)offset, length);
  if (length > max_metadata_bytes)
    return xchg_errorf(err, XCHG_ELIMIT,
                       "message %lld at byte %lld: metadata length %d exceeds "
                       "max_metadata_bytes",
                       (long long)index, (long long)offset, length);
  return XCHG_OK;
}

/* A range of `needed` bytes of a message at byte `at` with `avail` there,
 * worded as a source that runs out words it (src/io/source.c), so that a
 * cut message reads the same in memory as read from a file or a pipe. */
static xchg_status cut_short(int64_t index, int64_t offset, const char *part, int64_t at,
                             int64_t needed, int64_t avail, xchg_error *err) {
  return xchg_errorf(err, XCHG_EIO,
                     "message %lld at byte %lld: %s: unexpected end of data at byte %lld: "
                     "needed %lld bytes, only %lld available (%lld missing)",
                     (long long)index, (long long)offset, part, (long long)at, (long long)needed,
                     (long long)avail, (long long)(needed - avail));
}

xchg_status ipc_metadata_check(int32_t length, int64_t avail, int64_t index, int64_t offset,
                               int64_t metadata_at, xchg_error *err) {
  return length <= avail ? XCHG_OK
                         : cut_short(index, offset, "metadata", metadata_at, length, avail, err);
}

xchg_status ipc_body_check(int64_t body_length, int64_t avail, int64_t index, int64_t offset,
                           int64_t body_at, xchg_error *err) {
  if (body_length < 0)
    return xchg_errorf(err, XCHG_EFORMAT,
                       "message %lld at byte %lld: body of %lld bytes is negative",
                       (long long)index, (long long)offset, (long long)body_length);
  if (avail >= 0 && body_length > avail)
    return cut_short(index, offset, "body", body_at, body_length, avail, err);
  return XCHG_OK;
}

xchg_status ipc_message_decode(ipc_message *m, int64_t avail, xchg_error *err) {
  xchg_status st =
      ipc_message_parse(xchg_buf_data(m->metadata), xchg_buf_size(m->metadata), m->index, m->offset,
                        &m->header, &m->header_type, &m->version, &m->body_length, err);
  return st == XCHG_OK
             ? ipc_body_check(m->body_length, avail, m->index, m->offset, m->body_offset, err)
             : st;
}

xchg_status ipc_message_view_decode(const uint8_t *p, size_t avail, int64_t index, int64_t offset,
                                    int64_t max_metadata_bytes, ipc_message_view *out,
                                    xchg_error *err) {
  *out = (ipc_message_view){0};
  size_t prefix = avail >= 4 ? ipc_prefix_size(p) : 4;
  if (avail < prefix)
    return xchg_errorf(err, XCHG_EIO, "input ends inside the framing of message %lld at byte %lld",
                       (long long)index, (long long)offset);
  int32_t length;
  xchg_status st = ipc_prefix_decode(p, index, offset, max_metadata_bytes, &length, err);
  if (st != XCHG_OK) return st;
  if (length == 0) {
    out->eos = 1;
    out->size = (int64_t)prefix;
    return XCHG_OK;
  }
  if ((st = ipc_metadata_check(length, (int64_t)(avail - prefix), index, offset,
                               offset + (int64_t)prefix, err)) != XCHG_OK)
    return st;
  out->metadata = p + prefix;
  out->metadata_size = length;
  out->body_offset = (int64_t)prefix + length;
  st = ipc_message_parse(out->metadata, (size_t)length, index, offset, &out->header,
                         &out->header_type, &out->version, &out->body_length, err);
  if (st == XCHG_OK)
    st = ipc_body_check(out->body_length, (int64_t)avail - out->body_offset, index, offset,
                        offset + out->body_offset, err);
  if (st != XCHG_OK) return st;
  out->size = out->body_offset + out->body_length;
  return XCHG_OK;
}

int64_t ipc_stream_extent(const uint8_t *p, size_t avail, int64_t max_metadata_bytes) {
  for (size_t pos = 0; pos < avail;) {
    ipc_message_view m;
    if (ipc_message_view_decode(p + pos, avail - pos, 0, (int64_t)pos, max_metadata_bytes, &m,
                                NULL) != XCHG_OK)
      return 0;
    pos += (size_t)m.size;
    if (m.eos) return (int64_t)pos;
  }
  return 0;
}

int ipc_is_file_start(const uint8_t *p, size_t avail) {
  return avail >= IPC_MAGIC_SIZE && memcmp(p, IPC_MAGIC, IPC_MAGIC_SIZE) == 0;
}

xchg_status ipc_file_given(const char *instead, xchg_error *err) {
  return xchg_errorf(err, XCHG_EFORMAT, "it is an Arrow IPC file (ARROW1 magic at byte 0), %s",
                     instead);
}

/* The Schema table of the Message flatbuffer of `size` bytes at p; 0 when
 * they are no message, or no schema message (*type says which). */
static int schema_table(const uint8_t *p, size_t size, fb_table *out, uint8_t *type) {
  fb_table msg;
  *type = 0;
  return fb_root(p, size, &msg) > 0 && fb_u8(&msg, MSG_HEADER_TYPE, 0, type) >= 0 &&
         fb_table_field(&msg, MSG_HEADER, out) > 0;
}

/* A schema message whose framing says it ends at byte `end` of the `size`
 * bytes given: what follows is not its (a stream's next messages, say),
 * and would be dropped unseen. */
static xchg_status trailing_bytes(size_t end, size_t size, xchg_error *err) {
  return xchg_errorf(err, XCHG_EFORMAT,
                     "schema message: %zu trailing byte%s, from byte %zu (where its framing "
                     "ends it) to %zu: a schema message is given alone",
                     size - end, size - end == 1 ? "" : "s", end, size);
}

xchg_status ipc_schema_message_table(const uint8_t *p, size_t size, fb_table *out,
                                     const uint8_t **flatbuffer, size_t *flatbuffer_size,
                                     xchg_error *err) {
  if (size >= 8 && fb_load_u32(p) == IPC_CONTINUATION) {
    uint32_t length = fb_load_u32(p + 4);
    if (length > size - 8)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "schema message: metadata length %u exceeds its %zu "
                         "bytes",
                         length, size - 8);
    if (length < size - 8) return trailing_bytes(8 + (size_t)length, size, err);
    p += 8;
    size = length;
  }
  uint8_t type;
  int found = schema_table(p, size, out, &type);
  /* Not a flatbuffer alone: a pre-0.15 prefix (the length alone), as the
   * reader and the payloads take it, is tried second, so that a valid
   * flatbuffer is never taken for one. */
  uint32_t legacy = size >= 4 ? fb_load_u32(p) : 0;
  if (!found && legacy > 0 && legacy <= size - 4 && schema_table(p + 4, legacy, out, &type)) {
    if (legacy < size - 4) return trailing_bytes(4 + (size_t)legacy, size, err);
    found = 1;
    p += 4;
    size = legacy;
  }
  if (!found && ipc_is_file_start(p, size)) {
    xchg_status st = ipc_file_given("whose schema message begins at byte 8", err);
    xchg_error_prefix(err, "schema message: ");
    return st;
  }
  if (!found) return xchg_errorf(err, XCHG_EFORMAT, "schema message: invalid Message flatbuffer");
  if (type != HEADER_SCHEMA)
    return xchg_errorf(err, XCHG_EFORMAT, "schema message: header type %d is not a Schema", type);
  if (flatbuffer) *flatbuffer = p;
  if (flatbuffer_size) *flatbuffer_size = size;
  return XCHG_OK;
}
