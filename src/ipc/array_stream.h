/* array_stream.h — the one ArrowArrayStream adaptor of xchg.  A producer of
 * batches (the IPC reader, a stream over a cache holder) gives its schema
 * and its batches through calls that return an xchg_status; the adaptor
 * turns them into the C Stream Interface: errno-style codes, the last
 * message for get_last_error, and the producer's release. */
#ifndef XCHG_IPC_ARRAY_STREAM_H
#define XCHG_IPC_ARRAY_STREAM_H

#include "xchg/arrow_c.h"
#include "xchg/error.h"

typedef struct ipc_stream_ops {
  xchg_status (*get_schema)(void *producer, struct ArrowSchema *out, xchg_error *err);
  /* The next batch; out->release NULL at the end. */
  xchg_status (*get_next)(void *producer, struct ArrowArray *out, xchg_error *err);
  void (*release)(void *producer);
} ipc_stream_ops;

/* Fills *out so that it takes the producer over (released with the
 * stream).  On failure (out of memory) the producer is released at once. */
xchg_status ipc_stream_export(const ipc_stream_ops *ops, void *producer,
                              struct ArrowArrayStream *out, xchg_error *err);

#endif
