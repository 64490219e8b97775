/* buf.c — reference-counted, 64-byte-aligned byte buffers.
 *
 * Three kinds of buffer share one small header:
 *   owned   — allocated here; the header sits in the first 64 bytes of one
 *             aligned allocation and the data starts right after it, so an
 *             owned buffer costs one allocation and its data stays aligned;
 *   wrapped — memory owned elsewhere, given back through a release callback;
 *   slice   — a view into an owned or wrapped buffer (its "root"), holding a
 *             reference on the root rather than on an intermediate slice so
 *             that chains of slices never form and freeing never recurses.
 *
 * Large owned blocks are recycled: a decode allocates the same few buffer
 * sizes batch after batch, and once a batch is released malloc gives its
 * blocks back to the system (they exceed its trim threshold together), so
 * that every batch paid for fresh pages again — the kernel zeroing and
 * mapping them cost a fifth of a heap read from the JVM.  A block goes back
 * to a free list of its size class only when its last reference goes, so an
 * exported array never sees its memory reused; the lists hold at most
 * RECYCLE_MAX_BYTES.  Under AddressSanitizer a recycled block's data is
 * poisoned until it is handed out again, so a use after release is still
 * caught. */
#include "xchg/buf.h"
#include "xchg/testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define XCHG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XCHG_ASAN 1
#endif
#endif
#ifdef XCHG_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef enum buf_kind { BUF_OWNED, BUF_WRAPPED, BUF_SLICE } buf_kind;

struct xchg_buf {
  atomic_int_fast64_t refs;
  const uint8_t *data;
  size_t size;
  xchg_buf *root; /* slices only */
  xchg_release_fn release; /* wrapped only */
  void *release_ctx;
  buf_kind kind;
};

/* Owned data begins one alignment unit after the header. */
#define OWNED_HEADER_SIZE XCHG_ALIGNMENT
_Static_assert(sizeof(struct xchg_buf) <= OWNED_HEADER_SIZE, "header must fit before the data");

static atomic_int_fast64_t allocated_bytes;
static atomic_int_fast64_t live_count;
static atomic_int_fast64_t fail_countdown;

void xchg_buf_fail_nth_alloc(int64_t n) { atomic_store(&fail_countdown, n > 0 ? n : 0); }

/* Counts one allocation attempt down; true when this is the one to fail. */
static bool injected_failure(void) {
  int_fast64_t left = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
  while (left > 0) {
    if (atomic_compare_exchange_weak(&fail_countdown, &left, left - 1)) return left == 1;
  }
  return false;
}

/* Fills in the header of a new buffer holding one reference; root and
 * release are for the caller to set where its kind has them. */
static xchg_buf *init_header(xchg_buf *buf, buf_kind kind, const void *data, size_t size) {
  *buf = (struct xchg_buf){.data = data, .size = size, .kind = kind};
  atomic_init(&buf->refs, 1);
  atomic_fetch_add_explicit(&live_count, 1, memory_order_relaxed);
  return buf;
}

static xchg_buf *new_header(buf_kind kind, const void *data, size_t size) {
  if (injected_failure()) return NULL;
  xchg_buf *buf = malloc(sizeof *buf);
  return buf == NULL ? NULL : init_header(buf, kind, data, size);
}

/* ---- recycling large owned blocks -------------------------------------------- */

/* Data sizes from RECYCLE_MIN to RECYCLE_MAX come in classes of eight per
 * doubling (a block is at most 1/8 larger than asked for), each with a
 * list of free blocks of exactly its size. */
#define RECYCLE_MIN_SHIFT 14 /* 16 KiB */
#define RECYCLE_MAX_SHIFT 22 /* 4 MiB */
#define RECYCLE_STEPS 8
#define RECYCLE_CLASSES ((RECYCLE_MAX_SHIFT - RECYCLE_MIN_SHIFT) * RECYCLE_STEPS)
#define RECYCLE_MAX_BYTES ((size_t)64 << 20)

typedef struct free_block {
  struct free_block *next;
} free_block;

static pthread_mutex_t recycle_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *recycled[RECYCLE_CLASSES];
static size_t recycled_bytes;

/* The class of a data size, or -1 outside the recycled range. */
static int size_class(size_t padded) {
  if (padded < ((size_t)1 << RECYCLE_MIN_SHIFT) || padded > ((size_t)1 << RECYCLE_MAX_SHIFT)) return -1;
  int shift = RECYCLE_MIN_SHIFT;
  while (((size_t)1 << (shift + 1)) < padded) shift++;
  size_t step = ((size_t)1 << shift) / RECYCLE_STEPS;
  int k = (int)((padded - ((size_t)1 << shift) + step - 1) / step); /* 0..RECYCLE_STEPS */
  int c = (shift - RECYCLE_MIN_SHIFT) * RECYCLE_STEPS + k - 1;
  return c < 0 ? 0 : c;
}

/* The data size of blocks of class c (the largest size in it). */
static size_t class_size(int c) {
  int shift = RECYCLE_MIN_SHIFT + c / RECYCLE_STEPS;
  return ((size_t)1 << shift) + ((size_t)1 << shift) / RECYCLE_STEPS * (size_t)(c % RECYCLE_STEPS + 1);
}

static void *take_recycled(int c) {
  pthread_mutex_lock(&recycle_lock);
  free_block *b = recycled[c];
  if (b) {
    recycled[c] = b->next;
    recycled_bytes -= class_size(c);
  }
  pthread_mutex_unlock(&recycle_lock);
  if (b) UNPOISON((uint8_t *)b + OWNED_HEADER_SIZE, class_size(c));
  return b;
}

/* Keeps the block of class c for reuse; false when the lists are full. */
static bool recycle(void *block, int c) {
  free_block *b = block;
  pthread_mutex_lock(&recycle_lock);
  bool kept = recycled_bytes + class_size(c) <= RECYCLE_MAX_BYTES;
  if (kept) {
    POISON((uint8_t *)b + OWNED_HEADER_SIZE, class_size(c));
    b->next = recycled[c];
    recycled[c] = b;
    recycled_bytes += class_size(c);
  }
  pthread_mutex_unlock(&recycle_lock);
  return kept;
}

static void free_owned(xchg_buf *buf) {
  size_t padded = (buf->size + (XCHG_ALIGNMENT - 1)) & ~(size_t)(XCHG_ALIGNMENT - 1);
  int c = size_class(padded);
  if (c < 0 || !recycle(buf, c)) free(buf);
}

/* ---- allocating ------------------------------------------------------------- */

static xchg_buf *alloc_owned(size_t size, bool zero) {
  if (injected_failure()) return NULL;
  /* Round the data up to whole alignment units so that vectorised code may
   * touch the padding; the padding is zeroed so it never holds stale bytes. */
  size_t padded = (size + (XCHG_ALIGNMENT - 1)) & ~(size_t)(XCHG_ALIGNMENT - 1);
  if (padded < size || padded > SIZE_MAX - OWNED_HEADER_SIZE) return NULL;
  int c = size_class(padded);
  void *block = c >= 0 ? take_recycled(c) : NULL;
  if (!block && posix_memalign(&block, XCHG_ALIGNMENT, OWNED_HEADER_SIZE + (c >= 0 ? class_size(c) : padded)) != 0)
    return NULL;
  xchg_buf *buf = block;
  uint8_t *data = (uint8_t *)block + OWNED_HEADER_SIZE;
  if (zero) {
    memset(data, 0, padded);
  } else {
    memset(data + size, 0, padded - size);
  }
  atomic_fetch_add_explicit(&allocated_bytes, (int_fast64_t)size, memory_order_relaxed);
  return init_header(buf, BUF_OWNED, data, size);
}

xchg_buf *xchg_buf_alloc(size_t size) { return alloc_owned(size, false); }

xchg_buf *xchg_buf_calloc(size_t size) { return alloc_owned(size, true); }

xchg_buf *xchg_buf_wrap(const void *data, size_t size, xchg_release_fn release, void *release_ctx) {
  if (data == NULL && size > 0) return NULL;
  xchg_buf *buf = new_header(BUF_WRAPPED, data, size);
  if (buf == NULL) return NULL;
  buf->release = release;
  buf->release_ctx = release_ctx;
  return buf;
}

xchg_buf *xchg_buf_slice(xchg_buf *parent, size_t offset, size_t size) {
  if (parent == NULL || offset > parent->size || size > parent->size - offset) return NULL;
  xchg_buf *root = parent->kind == BUF_SLICE ? parent->root : parent;
  xchg_buf *buf = new_header(BUF_SLICE, parent->data + offset, size);
  if (buf == NULL) return NULL;
  buf->root = xchg_buf_ref(root);
  return buf;
}

xchg_buf *xchg_buf_ref(xchg_buf *buf) {
  if (buf != NULL) atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
  return buf;
}

void xchg_buf_unref(xchg_buf *buf) {
  if (buf == NULL) return;
  /* Release and acquire on the decrement, so that every write made through
   * other references happens before the memory goes (an acquire fence after
   * a release decrement would do, but ThreadSanitizer does not see fences:
   * a buffer whose last reference goes on another thread than the one
   * before passed for a race). */
  if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) != 1) return;
  atomic_fetch_sub_explicit(&live_count, 1, memory_order_relaxed);
  switch (buf->kind) {
    case BUF_OWNED:
      atomic_fetch_sub_explicit(&allocated_bytes, (int_fast64_t)buf->size, memory_order_relaxed);
      free_owned(buf);
      return;
    case BUF_WRAPPED:
      if (buf->release != NULL) buf->release(buf->release_ctx, buf->data, buf->size);
      free(buf);
      return;
    case BUF_SLICE: {
      xchg_buf *root = buf->root;
      free(buf);
      xchg_buf_unref(root); /* a root is never a slice: at most one level deep */
      return;
    }
  }
}

const uint8_t *xchg_buf_data(const xchg_buf *buf) { return buf->data; }

uint8_t *xchg_buf_mutable_data(xchg_buf *buf) { return (uint8_t *)buf->data; }

size_t xchg_buf_size(const xchg_buf *buf) { return buf->size; }

int64_t xchg_buf_allocated_bytes(void) {
  return (int64_t)atomic_load_explicit(&allocated_bytes, memory_order_relaxed);
}

int64_t xchg_buf_live_count(void) {
  return (int64_t)atomic_load_explicit(&live_count, memory_order_relaxed);
}
