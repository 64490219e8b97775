/* small.h — small blocks that a thread frees and allocates again batch
 * after batch (a decoded batch's array nodes and its export, ipc/array.c),
 * kept per thread for reuse, last in, first out, as buf.c keeps buffer
 * headers: malloc's per-thread cache holds fewer of a size and costs more
 * per call.  Private to the library. */
#ifndef XCHG_BUF_SMALL_H
#define XCHG_BUF_SMALL_H

#include <stddef.h>

/* At least size bytes, aligned for any type (malloc's alignment), NULL
 * when out of memory; *usable (may be NULL) is how many the block has. */
void *buf_small_alloc(size_t size, size_t *usable);

/* Frees p (NULL: nothing) on any thread; size is what was asked for, or
 * anything up to what was usable. */
void buf_small_free(void *p, size_t size);

#endif
