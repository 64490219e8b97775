/* array.c — see array.h. */
#include <stdlib.h>
#include <string.h>

#include "ipc/array.h"
#include "ipc/c_data.h"

ipc_array *ipc_array_new(int64_t n_buffers, int64_t n_children) {
  size_t size = sizeof(ipc_array) + (size_t)n_buffers * sizeof(ipc_buffer) +
                (size_t)n_children * sizeof(ipc_array *);
  /* Not calloc, which glibc serves without its per-thread cache (a decode
   * makes a few of these per batch): the parts are cleared one by one. */
  ipc_array *a = malloc(size);
  if (!a) return NULL;
  *a = (ipc_array){.n_buffers = n_buffers, .n_children = n_children};
  atomic_init(&a->refs, 1);
  a->buffers = (ipc_buffer *)(a + 1);
  a->children = (ipc_array **)(a->buffers + n_buffers);
  memset(a->buffers, 0, size - sizeof *a);
  return a;
}

ipc_array *ipc_array_ref(ipc_array *a) {
  if (a) atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
  return a;
}

void ipc_array_unref(ipc_array *a) {
  if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1) return;
  for (int64_t i = 0; i < a->n_buffers; i++) xchg_buf_unref(a->buffers[i].owner);
  for (int64_t i = 0; i < a->n_children; i++) ipc_array_unref(a->children[i]);
  ipc_array_unref(a->dictionary);
  free(a);
}

xchg_buf *ipc_array_set_buf(ipc_array *a, int64_t i, xchg_buf *b) {
  xchg_buf_unref(a->buffers[i].owner);
  a->buffers[i] = (ipc_buffer){b ? xchg_buf_data(b) : NULL, b ? xchg_buf_size(b) : 0, b};
  return b;
}

void ipc_array_share_buffer(ipc_array *a, int64_t i, const ipc_buffer *from) {
  xchg_buf_unref(a->buffers[i].owner);
  a->buffers[i] = *from;
  xchg_buf_ref(from->owner);
}

/* Private data of an exported ArrowArray: one allocation holding the
 * buffer pointer table, the child pointer table and the child structs. */
typedef struct exported_array {
  ipc_array *array;
  struct ArrowArray dictionary;
} exported_array;

static void release_array(struct ArrowArray *out) {
  exported_array *p = out->private_data;
  IPC_RELEASE_CHILDREN_AND_DICTIONARY(out);
  ipc_array_unref(p->array);
  free(p);
  out->release = NULL;
}

xchg_status ipc_array_export(ipc_array *a, struct ArrowArray *out, xchg_error *err) {
  size_t size = sizeof(exported_array) + (size_t)a->n_buffers * sizeof(void *) +
                (size_t)a->n_children * (sizeof(struct ArrowArray *) + sizeof(struct ArrowArray));
  exported_array *p = malloc(size); /* not calloc: see ipc_array_new */
  memset(out, 0, sizeof *out);
  if (p) {
    *p = (exported_array){0};
    memset(p + 1, 0, size - sizeof *p);
  }
  if (!p) return xchg_errorf(err, XCHG_ENOMEM, "out of memory exporting an array");
  const void **buffers = (const void **)(p + 1);
  struct ArrowArray **children = (struct ArrowArray **)(buffers + a->n_buffers);
  struct ArrowArray *child_structs = (struct ArrowArray *)(children + a->n_children);
  for (int64_t i = 0; i < a->n_buffers; i++) buffers[i] = ipc_array_data(a, i);
  p->array = ipc_array_ref(a);
  out->length = a->length;
  out->null_count = a->null_count;
  out->n_buffers = a->n_buffers;
  out->buffers = buffers;
  out->children = children;
  out->private_data = p;
  out->release = release_array;
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < a->n_children && st == XCHG_OK; i++) {
    children[i] = &child_structs[i];
    out->n_children = i + 1;
    st = ipc_array_export(a->children[i], children[i], err);
  }
  if (st == XCHG_OK && a->dictionary) {
    out->dictionary = &p->dictionary;
    st = ipc_array_export(a->dictionary, out->dictionary, err);
  }
  if (st != XCHG_OK) release_array(out);
  return st;
}

static int64_t popcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555u);
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return (int64_t)((x * 0x0101010101010101u) >> 56);
}

int64_t ipc_count_set_bits(const uint8_t *bits, int64_t n_bytes) {
  int64_t set = 0, i = 0;
  for (; i + 8 <= n_bytes; i += 8) {
    uint64_t word;
    memcpy(&word, bits + i, 8);
    set += popcount64(word);
  }
  for (; i < n_bytes; i++) set += popcount64(bits[i]);
  return set;
}
