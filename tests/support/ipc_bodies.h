/* tests/support/ipc_bodies.h — where the messages of an IPC input keep
 * their bodies, as the reader itself reports them (on_message), for tests
 * that cut or damage an input inside a chosen body. */
#ifndef XCHG_TESTS_IPC_BODIES_H
#define XCHG_TESTS_IPC_BODIES_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/ipc.h"

typedef struct tu_body {
  xchg_message_kind kind;
  int64_t offset; /* of the body's first byte */
  int64_t length;
  int64_t metadata_offset; /* of the Message flatbuffer's first byte */
  int64_t metadata_bytes;
} tu_body;

/* Reads data from memory, without a pool, as far as it can, recording the
 * bodies of the first `max` messages (the schema's included) in order.
 * Returns how many were recorded. */
int64_t tu_map_bodies(const uint8_t *data, size_t size, tu_body *out, int64_t max);

#endif
