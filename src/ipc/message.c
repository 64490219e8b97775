/* message.c — see message.h. */
#include "ipc/message.h"

#include "ipc/format.h"

xchg_status ipc_message_parse(const uint8_t *metadata, size_t size, int64_t index, int64_t offset,
                              fb_table *header, int *header_type, int *version,
                              int64_t *body_length, xchg_error *err) {
  fb_table msg;
  int16_t v;
  uint8_t type;
  if (fb_root(metadata, size, &msg) < 0 || fb_i16(&msg, MSG_VERSION, 0, &v) < 0 ||
      fb_u8(&msg, MSG_HEADER_TYPE, 0, &type) < 0 ||
      fb_i64(&msg, MSG_BODY_LENGTH, 0, body_length) < 0 ||
      fb_table_field(&msg, MSG_HEADER, header) <= 0)
    return xchg_errorf(err, XCHG_EFORMAT, "message %lld at byte %lld: invalid Message flatbuffer",
                       (long long)index, (long long)offset);
  *version = v;
  *header_type = type;
  if (v < IPC_METADATA_V4 || v > IPC_METADATA_V5)
    return xchg_errorf(err, XCHG_ENOTSUP,
                       "message %lld at byte %lld: metadata version V%d is not "
                       "supported (this reader supports V%d to V%d)",
                       (long long)index, (long long)offset, v + 1, IPC_METADATA_V4 + 1,
                       IPC_METADATA_V5 + 1);
  if (type < HEADER_SCHEMA || type > HEADER_RECORD_BATCH)
    return xchg_errorf(err, type <= 5 ? XCHG_ENOTSUP : XCHG_EFORMAT,
                       "message %lld at byte %lld: header type %d (tensors are not supported)",
                       (long long)index, (long long)offset, type);
  return XCHG_OK;
}
