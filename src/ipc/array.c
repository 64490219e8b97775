/* array.c — see array.h. */
#include <stdlib.h>
#include <string.h>

#include "buf/small.h"
#include "ipc/array.h"
#include "ipc/c_data.h"

static size_t array_size(int64_t n_buffers, int64_t n_children) {
  return sizeof(ipc_array) + (size_t)n_buffers * sizeof(ipc_buffer) +
         (size_t)n_children * sizeof(ipc_array *);
}

/* Lays out a zeroed array in its memory. */
static ipc_array *init_array(void *memory, int64_t n_buffers, int64_t n_children,
                             struct ipc_arena_chunk *chunk) {
  ipc_array *a = memory;
  atomic_init(&a->refs, 1);
  a->chunk = chunk;
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = (ipc_buffer *)(a + 1);
  a->children = (ipc_array **)(a->buffers + n_buffers);
  return a;
}

ipc_array *ipc_array_new(int64_t n_buffers, int64_t n_children) {
  void *memory = calloc(1, array_size(n_buffers, n_children));
  return memory ? init_array(memory, n_buffers, n_children, NULL) : NULL;
}

/* ---- arenas ------------------------------------------------------------------ */

/* A chunk holds one count per array carved out of it, and one for the
 * arena while the arena can still carve. */
typedef struct ipc_arena_chunk {
  _Atomic int64_t live;
  xchg_buf *keep; /* a reference */
  size_t used, size;
  _Alignas(16) unsigned char data[];
} ipc_arena_chunk;

static void chunk_unref(ipc_arena_chunk *c) {
  if (!c || atomic_fetch_sub_explicit(&c->live, 1, memory_order_acq_rel) != 1) return;
  xchg_buf_unref(c->keep);
  buf_small_free(c, sizeof *c + c->size);
}

void ipc_arena_init(ipc_arena *arena, size_t chunk_size, xchg_buf *keep) {
  arena->chunk = NULL;
  arena->chunk_size = chunk_size;
  arena->keep = keep;
}

ipc_array *ipc_arena_new_array(ipc_arena *arena, int64_t n_buffers, int64_t n_children) {
  size_t size = (array_size(n_buffers, n_children) + 15) & ~(size_t)15;
  ipc_arena_chunk *c = arena->chunk;
  if (!c || c->size - c->used < size) {
    size_t capacity = size > arena->chunk_size ? size : arena->chunk_size, usable;
    ipc_arena_chunk *fresh = buf_small_alloc(sizeof *fresh + capacity, &usable);
    if (!fresh) return NULL;
    atomic_init(&fresh->live, 1);
    fresh->keep = xchg_buf_ref(arena->keep);
    fresh->used = 0;
    fresh->size = usable - sizeof *fresh; /* all the block has */
    chunk_unref(c);
    arena->chunk = c = fresh;
  }
  void *memory = c->data + c->used;
  c->used += size;
  memset(memory, 0, size);
  /* No locked add: until ipc_arena_end only this thread holds the chunk's
   * arrays (array.h), so the count is not changed concurrently. */
  atomic_store_explicit(&c->live, atomic_load_explicit(&c->live, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  return init_array(memory, n_buffers, n_children, c);
}

void ipc_arena_end(ipc_arena *arena) {
  chunk_unref(arena->chunk);
  arena->chunk = NULL;
}

ipc_array *ipc_array_ref(ipc_array *a) {
  if (a) atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
  return a;
}

static int is_borrowed(const ipc_array *a, int64_t i) { return i < 64 && (a->borrowed >> i & 1); }

/* Lets go of buffer i, before it is replaced. */
static void drop_buffer(ipc_array *a, int64_t i) {
  if (!is_borrowed(a, i)) xchg_buf_unref(a->buffers[i].owner);
  if (i < 64) a->borrowed &= ~((uint64_t)1 << i);
}

void ipc_array_unref(ipc_array *a) {
  if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1) return;
  for (int64_t i = 0; i < a->n_buffers; i++)
    if (!is_borrowed(a, i)) xchg_buf_unref(a->buffers[i].owner);
  for (int64_t i = 0; i < a->n_children; i++) ipc_array_unref(a->children[i]);
  ipc_array_unref(a->dictionary);
  if (a->chunk)
    chunk_unref(a->chunk);
  else
    free(a);
}

xchg_buf *ipc_array_set_buf(ipc_array *a, int64_t i, xchg_buf *b) {
  drop_buffer(a, i);
  a->buffers[i] = (ipc_buffer){b ? xchg_buf_data(b) : NULL, b ? xchg_buf_size(b) : 0, b};
  return b;
}

void ipc_array_share_buffer(ipc_array *a, int64_t i, const ipc_buffer *from) {
  drop_buffer(a, i);
  a->buffers[i] = *from;
  xchg_buf_ref(from->owner);
}

/* ---- export -------------------------------------------------------------------- */

/* An export is one allocation: a count of the nodes not yet released, then
 * one record per ArrowArray of the tree (children and dictionaries
 * included), each with its own reference on its ipc_array, so that a child
 * a consumer moves out keeps only its own buffers alive. */
typedef struct export_block {
  _Atomic int64_t live;
  size_t size; /* of the allocation */
} export_block;

typedef struct exported_node {
  export_block *block;
  ipc_array *array;
} exported_node;

/* A node's record: the node, its dictionary's struct if it has one, its
 * buffer pointers, its children's pointers and structs, rounded up to keep
 * the next one aligned (small, so that a batch of a few columns is one
 * small allocation, which malloc serves fastest). */
static size_t node_size(const ipc_array *a) {
  size_t size = sizeof(exported_node) + (a->dictionary ? sizeof(struct ArrowArray) : 0) +
                (size_t)a->n_buffers * sizeof(void *) +
                (size_t)a->n_children * (sizeof(struct ArrowArray *) + sizeof(struct ArrowArray));
  return (size + 15) & ~(size_t)15;
}

/* The records of a's tree, and how many nodes it has. */
static size_t tree_size(const ipc_array *a, int64_t *nodes) {
  size_t size = node_size(a);
  ++*nodes;
  for (int64_t i = 0; i < a->n_children; i++) size += tree_size(a->children[i], nodes);
  if (a->dictionary) size += tree_size(a->dictionary, nodes);
  return size;
}

static void release_node(struct ArrowArray *out) {
  exported_node *node = out->private_data;
  IPC_RELEASE_CHILDREN_AND_DICTIONARY(out);
  ipc_array_unref(node->array);
  export_block *block = node->block;
  out->release = NULL;
  if (atomic_fetch_sub_explicit(&block->live, 1, memory_order_acq_rel) == 1)
    buf_small_free(block, block->size);
}

/* Fills out for a from the records at *at onwards, moving *at past them. */
static void export_node(export_block *block, ipc_array *a, struct ArrowArray *out,
                        unsigned char **at) {
  exported_node *node = (exported_node *)*at;
  *at += node_size(a);
  struct ArrowArray *dictionary = (struct ArrowArray *)(node + 1);
  const void **buffers = (const void **)(dictionary + (a->dictionary ? 1 : 0));
  struct ArrowArray **children = (struct ArrowArray **)(buffers + a->n_buffers);
  struct ArrowArray *child_structs = (struct ArrowArray *)(children + a->n_children);
  node->block = block;
  node->array = ipc_array_ref(a);
  for (int64_t i = 0; i < a->n_buffers; i++) buffers[i] = ipc_array_data(a, i);
  *out = (struct ArrowArray){a->length, a->null_count, 0,    a->n_buffers, a->n_children,
                             buffers,   children,      NULL, release_node, node};
  for (int64_t i = 0; i < a->n_children; i++) {
    children[i] = &child_structs[i];
    export_node(block, a->children[i], children[i], at);
  }
  if (a->dictionary) {
    out->dictionary = dictionary;
    export_node(block, a->dictionary, dictionary, at);
  }
}

xchg_status ipc_array_export(ipc_array *a, struct ArrowArray *out, xchg_error *err) {
  int64_t nodes = 0;
  size_t size = sizeof(export_block) + 16 + tree_size(a, &nodes);
  export_block *block = buf_small_alloc(size, NULL);
  memset(out, 0, sizeof *out);
  if (!block) return xchg_errorf(err, XCHG_ENOMEM, "out of memory exporting an array");
  atomic_init(&block->live, nodes);
  block->size = size;
  unsigned char *at = (unsigned char *)block + ((sizeof(export_block) + 15) & ~(size_t)15);
  export_node(block, a, out, &at);
  return XCHG_OK;
}
