/* swap.c — see swap.h. */
#include <string.h>

#include "ipc/swap.h"

static void swap_bytes(uint8_t *p, int width) {
  for (int i = 0, j = width - 1; i < j; i++, j--) {
    uint8_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

/* A view is 16 bytes: int32 length, then 12 inline bytes, or a 4-byte
 * prefix, int32 buffer index and int32 offset when longer than 12. */
static void swap_views(uint8_t *p, size_t size, int to_native) {
  for (size_t i = 0; i + 16 <= size; i += 16) {
    int32_t len;
    if (to_native) swap_bytes(p + i, 4);
    memcpy(&len, p + i, 4);
    if (!to_native) swap_bytes(p + i, 4);
    if (len > 12) {
      swap_bytes(p + i + 8, 4);
      swap_bytes(p + i + 12, 4);
    }
  }
}

void swap_values(uint8_t *p, size_t size, swap_rule rule, int to_native) {
  if (rule.kind == IPC_SWAP_VIEW) {
    swap_views(p, size, to_native);
    return;
  }
  for (size_t i = 0; i + (size_t)rule.width <= size; i += (size_t)rule.width) {
    if (rule.kind == IPC_SWAP_MDN) {
      swap_bytes(p + i, 4);
      swap_bytes(p + i + 4, 4);
      swap_bytes(p + i + 8, 8);
    } else if (rule.kind == IPC_SWAP_INT32S) {
      for (int k = 0; k < rule.width; k += 4) swap_bytes(p + i + k, 4);
    } else {
      swap_bytes(p + i, rule.width);
    }
  }
}
