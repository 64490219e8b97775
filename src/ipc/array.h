/* array.h — decoded arrays: a tree of reference-counted buffers.
 *
 * The IPC decoder produces ipc_arrays; consumers see ArrowArrays.  Export
 * builds a fresh ArrowArray tree (structs and pointer tables only) whose
 * private data holds a reference on the ipc_array, so one decoded array can
 * be handed out any number of times (a dictionary to every batch that uses
 * it, a shared broadcast to every task) and each ArrowArray, children
 * included, can be released on its own and in any order.
 *
 * Small allocations are what a batch of a few thousand rows costs beyond
 * its bytes, so a batch's arrays come from one arena (ipc_arena: its nodes
 * share a few chunks, each freed with its last array) and an export is one
 * allocation for the whole ArrowArray tree (freed with its last node),
 * both kept by the thread that frees them for its next batch (buf/small.h). */
#ifndef XCHG_IPC_ARRAY_H
#define XCHG_IPC_ARRAY_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "xchg/arrow_c.h"
#include "xchg/buf.h"
#include "xchg/error.h"

/* One buffer of an array: a view of memory kept alive by `owner` (a body
 * read from the input, a decompressed buffer...).  Views rather than
 * slices, so that a zero-copy buffer costs no allocation. */
typedef struct ipc_buffer {
  const uint8_t *data; /* NULL when the buffer is absent */
  size_t size;
  xchg_buf *owner; /* a reference, or NULL for static memory */
} ipc_buffer;

struct ipc_arena_chunk;

typedef struct ipc_array {
  _Atomic int64_t refs;
  struct ipc_arena_chunk *chunk; /* the arena chunk it lives in, or NULL: malloc'd alone */
  /* Bit i: buffer i is borrowed, its owner kept alive by the chunk (which
   * holds one reference for all the zero-copy views of a batch's body)
   * rather than by a reference of its own.  Sharing such a buffer with
   * another array (ipc_array_share_buffer) takes a reference as usual. */
  uint64_t borrowed;
  int64_t length;
  int64_t null_count;
  int64_t n_buffers;
  ipc_buffer *buffers;
  int64_t n_children;
  struct ipc_array **children;  /* owned references */
  struct ipc_array *dictionary; /* owned reference, or NULL */
} ipc_array;

/* A zeroed array with room for n_buffers buffers and n_children children;
 * refcount 1.  NULL when out of memory. */
ipc_array *ipc_array_new(int64_t n_buffers, int64_t n_children);
ipc_array *ipc_array_ref(ipc_array *a);

/* Arrays allocated together: ipc_arena_new_array works as ipc_array_new,
 * carving arrays out of chunks of about `chunk_size` bytes (more for an
 * array that needs more), each chunk freed when the last array in it is;
 * ipc_arena_end lets go of the arena (the arrays live on).  Every chunk
 * holds a reference on `keep` (NULL: none), which the arrays' buffers may
 * then borrow.  An arena is used by one thread, and its arrays reach other
 * threads only after ipc_arena_end. */
typedef struct ipc_arena {
  struct ipc_arena_chunk *chunk;
  size_t chunk_size;
  xchg_buf *keep;
} ipc_arena;

void ipc_arena_init(ipc_arena *arena, size_t chunk_size, xchg_buf *keep);
ipc_array *ipc_arena_new_array(ipc_arena *arena, int64_t n_buffers, int64_t n_children);
void ipc_arena_end(ipc_arena *arena);
void ipc_array_unref(ipc_array *a);

/* Pointer to the data of buffer i, or NULL when it is absent. */
static inline const uint8_t *ipc_array_data(const ipc_array *a, int64_t i) {
  return a->buffers[i].data;
}
static inline size_t ipc_array_size(const ipc_array *a, int64_t i) { return a->buffers[i].size; }

/* Sets buffer i to the whole of b, taking over the caller's reference
 * (b may be NULL: the buffer is absent).  Returns b. */
xchg_buf *ipc_array_set_buf(ipc_array *a, int64_t i, xchg_buf *b);
/* Sets buffer i to a copy of another array's buffer (another reference). */
void ipc_array_share_buffer(ipc_array *a, int64_t i, const ipc_buffer *from);

/* Integer i of a buffer of `width`-byte integers (1, 2, 4 or 8; offsets,
 * run ends, dictionary indices).  An unsigned 64-bit value above
 * INT64_MAX comes back as -1. */
static inline int64_t ipc_load_int(const uint8_t *p, int width, int is_signed, int64_t i) {
  switch (width) {
    case 1: return is_signed ? (int64_t)(int8_t)p[i] : (int64_t)p[i];
    case 2: {
      uint16_t v;
      memcpy(&v, p + 2 * i, 2);
      return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
      uint64_t v;
      memcpy(&v, p + 8 * i, 8);
      return (!is_signed && v > INT64_MAX) ? -1 : (int64_t)v;
    }
  }
}

/* Stores offset i of a buffer of 4- or 8-byte offsets. */
static inline void ipc_store_offset(uint8_t *p, int width, int64_t i, int64_t v) {
  if (width == 4) {
    int32_t v32 = (int32_t)v;
    memcpy(p + 4 * i, &v32, 4);
  } else {
    memcpy(p + 8 * i, &v, 8);
  }
}

/* Stores integer i of a buffer of 2-, 4- or 8-byte integers (run ends). */
static inline void ipc_store_int(uint8_t *p, int width, int64_t i, int64_t v) {
  if (width == 2) {
    int16_t v16 = (int16_t)v;
    memcpy(p + 2 * i, &v16, 2);
  } else {
    ipc_store_offset(p, width, i, v);
  }
}

/* Exports a to out; out holds its own reference on a. */
xchg_status ipc_array_export(ipc_array *a, struct ArrowArray *out, xchg_error *err);

#endif
