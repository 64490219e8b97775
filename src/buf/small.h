/* small.h — small blocks that a thread frees and allocates again batch
 * after batch (a decoded batch's array nodes and its export, ipc/array.c),
 * kept per thread for reuse, last in, first out, as buf.c keeps buffer
 * headers: malloc's per-thread cache holds fewer of a size and costs more
 * per call.  Private to the library. */
#ifndef XCHG_BUF_SMALL_H
#define XCHG_BUF_SMALL_H

#include <stddef.h>

/* At least size bytes, aligned for any type (malloc's alignment); NULL when
 * out of memory. */
void *buf_small_alloc(size_t size);

/* Frees p (NULL: nothing), allocated with the same size, on any thread. */
void buf_small_free(void *p, size_t size);

#endif
