/* decode_internal.h — what the files of the decoder share: decode.c
 * (step 1, planning a batch, and the error reports), decode_jobs.c (step
 * 2, the decompression jobs) and decode_validate.c (step 3, validation). */
#ifndef XCHG_IPC_DECODE_INTERNAL_H
#define XCHG_IPC_DECODE_INTERNAL_H

#include "ipc/decode.h"
#include "ipc/swap.h"

struct ipc_job {
  ipc_buffer src; /* the compressed bytes, length prefix excluded */
  xchg_buf *dst;  /* the final buffer */
  xchg_block_codec codec;
  swap_rule swap;
  const ipc_decode_ctx *ctx;
  const ipc_field *field;
  int64_t buffer;
  int64_t message_index, message_offset; /* the ctx's, which may be gone when it fails */
  xchg_status status;
};

typedef struct ipc_decoder {
  const ipc_decode_ctx *ctx;
  xchg_error *err;
  const ipc_body *body;
  const uint8_t *base; /* the body's first byte when it is in memory, else NULL */
  int borrow;          /* buffers may borrow the body (take_buffer) */
  xchg_block_codec codec;
  fb_vector nodes, buffers, variadic;
  uint32_t next_node, next_buffer, next_variadic;
  ipc_jobs *jobs;
  int64_t planned_bytes;  /* decompressed bytes of the batch's buffers so far */
  const ipc_field *field; /* the field being decoded, named in errors, ... */
  int as_value;           /* ... its dictionary's values, not its indices, when set */
  ipc_arena arena;        /* the batch's arrays */
} ipc_decoder;

/* The bytes of one offset of a type with offsets. */
static inline int ipc_offset_width(ipc_type t) {
  return (t == IPC_LARGE_BINARY || t == IPC_LARGE_UTF8 || t == IPC_LARGE_LIST ||
          t == IPC_LARGE_LIST_VIEW)
             ? 8
             : 4;
}

/* How a decode error names a message: "message M at byte B", or
 * "message M" when offset is -1 (the caller names where it is). */
#define IPC_MESSAGE_NAME 64
const char *ipc_message_name(int64_t index, int64_t offset, char out[IPC_MESSAGE_NAME]);

/* Reports "message M at byte B, field 'f', array buffer K (role): <what>";
 * no buffer when array_buffer is -1. */
xchg_status ipc_decode_fail(const ipc_decoder *d, int64_t array_buffer, xchg_status st,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
