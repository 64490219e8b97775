/* message.h — the Message flatbuffer that opens every IPC message (private
 * to src/ipc): the stream and file reader and the batch decoder read it
 * alike. */
#ifndef XCHG_IPC_MESSAGE_H
#define XCHG_IPC_MESSAGE_H

#include <stdint.h>

#include "ipc/flatbuf.h"
#include "xchg/buf.h"
#include "xchg/error.h"

/* Parses the Message flatbuffer of `size` bytes at metadata into the header table (the
 * Schema, DictionaryBatch or RecordBatch), its type, the metadata version
 * and the body length as the message states it (the caller checks it
 * against its input), accepting versions V4 and V5 and the three header
 * types a stream holds (a Tensor is XCHG_ENOTSUP).  Errors name message
 * `index` and the byte `offset` of its framing. */
xchg_status ipc_message_parse(const uint8_t *metadata, size_t size, int64_t index, int64_t offset,
                              fb_table *header, int *header_type, int *version,
                              int64_t *body_length, xchg_error *err);

#endif
