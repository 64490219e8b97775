/* swap.h — byte-swapping Arrow buffers between big- and little-endian.
 *
 * The reader swaps big-endian input to native order; the writer swaps
 * native data to big-endian on request.  Both walk a buffer value by value
 * with the same rules (ipc_swap in schema.h); only binary views need to
 * know the direction, since their length decides whether the buffer index
 * and offset that follow are there to swap. */
#ifndef XCHG_IPC_SWAP_H
#define XCHG_IPC_SWAP_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/schema.h"

/* How the values of one buffer are swapped: the kind of value and its
 * width in bytes. */
typedef struct swap_rule {
  ipc_swap kind;
  int width;
} swap_rule;

#define NO_SWAP ((swap_rule){IPC_SWAP_NONE, 0})
#define INT_SWAP(w) ((swap_rule){IPC_SWAP_WHOLE, (w)})
#define VIEW_SWAP ((swap_rule){IPC_SWAP_VIEW, 16})

static inline int swap_needed(swap_rule rule) {
  return rule.kind == IPC_SWAP_VIEW || (rule.kind != IPC_SWAP_NONE && rule.width > 1);
}

/* Swaps every value of p[0, size) in place; to_native says which way
 * (big-endian to native, or native to big-endian). */
void swap_values(uint8_t *p, size_t size, swap_rule rule, int to_native);

#endif
