/* reader_internal.h — what other layers of xchg (the shared cache) take
 * from a reader besides ArrowArrays: the decoded arrays themselves, which
 * can be exported any number of times, and the parsed schema. */
#ifndef XCHG_IPC_READER_INTERNAL_H
#define XCHG_IPC_READER_INTERNAL_H

#include "ipc/array.h"
#include "ipc/schema.h"
#include "xchg/ipc.h"

/* Once the reader reported the end of a stream: whether any byte follows
 * its end-of-stream marker in the input (one byte of it is read, the
 * input being the caller's to drop then), in *more. */
xchg_status ipc_reader_more_after_end(xchg_ipc_reader *r, int *more, xchg_error *err);

/* As xchg_ipc_reader_next, but hands over the decoded "+s" array (a new
 * reference; NULL at the end). */
xchg_status ipc_reader_next_array(xchg_ipc_reader *reader, ipc_array **out, xchg_error *err);

const ipc_schema *ipc_reader_schema(const xchg_ipc_reader *reader);

#endif
