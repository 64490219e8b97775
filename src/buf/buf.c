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
 * exported array never sees its memory reused.  The lists are last in,
 * first out: a scan that releases each batch before decoding the next gets
 * the block it just released, still in the CPU's cache, as a decoder that
 * reuses one scratch buffer would.  Each thread has its own lists (a
 * shelf), and a block goes back to the shelf of the thread that allocated
 * it, whichever thread frees it: a pool thread that builds batches another
 * thread consumes gets its own blocks back, warm in its own core's cache,
 * where one shared set of lists handed each thread the blocks the other
 * had just written, to be fetched from the other core (bench shuffle, 50
 * columns uncompressed on two threads: 1.05x one thread so, 1.24x with
 * shelves).  They hold at most RECYCLE_LIMIT bytes in all,
 * counted in xchg_buf_allocated_bytes (it is memory xchg holds) and given
 * back by xchg_buf_trim.  Under AddressSanitizer a recycled block's data is
 * poisoned until it is handed out again, so a use after release is still
 * caught. */
#include "xchg/buf.h"
#include "base/tally.h"
#include "buf/small.h"
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
  xchg_buf *root;          /* slices only */
  xchg_release_fn release; /* wrapped only */
  void *release_ctx;
  buf_kind kind;
  struct shelf *shelf; /* owned, recycled sizes: where the block goes back */
};

/* Owned data begins one alignment unit after the header. */
#define OWNED_HEADER_SIZE XCHG_ALIGNMENT
_Static_assert(sizeof(struct xchg_buf) <= OWNED_HEADER_SIZE, "header must fit before the data");

static atomic_int_fast64_t live_bytes;
/* Buffers made minus freed (counter 0), per thread's cache: xchg_buf_live_count. */
static tally live_count = TALLY_INIT;
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

/* ---- headers of slices and wrapped buffers ----------------------------------- */

/* A decoded batch makes and drops several slice headers; each thread keeps
 * up to HEADER_CACHE of the headers it freed, last in, first out, for its
 * next ones (malloc's per-thread cache holds fewer of a size, and costs
 * more per call).  The caches are linked from a global list (live_count's
 * slots), so that what a live thread keeps stays reachable (a leak checker
 * at exit sees it as such); the key's destructor frees a thread's when the
 * thread ends. */
#define HEADER_CACHE 64 /* a decodeMany group of 50 direct payloads: 50 wrapped */

/* The same for the small blocks of buf_small_alloc (small.h): per size
 * class (64 bytes to 4 KiB, doubling), up to SMALL_CACHE blocks, and
 * SMALL_CACHE_BYTES in all per thread: enough for the sources, arena
 * chunks and exports of a decodeMany group of 50 payloads, which are all
 * live at once. */
#define SMALL_MIN_SHIFT 6
#define SMALL_CLASSES 7
#define SMALL_CACHE 64
#define SMALL_CACHE_BYTES ((size_t)256 << 10)

typedef struct header_cache {
  /* Buffers made minus freed on this thread (count_live); first, so that
   * the tally's list points at the cache itself. */
  tally_slot live;
  int count;
  xchg_buf *items[HEADER_CACHE];
  int n_small[SMALL_CLASSES];
  size_t small_bytes; /* kept, in all classes */
  void *small[SMALL_CLASSES][SMALL_CACHE];
  struct shelf *shelf; /* the thread's recycled large blocks; NULL: none could be had */
} header_cache;

/* The thread's shelf of recycled large blocks (see below), kept with its
 * cache: taken with it, left when the thread ends. */
static struct shelf *take_shelf(void);
static void leave_shelf(struct shelf *sh);

static _Thread_local header_cache *headers;
static _Thread_local bool headers_refused; /* no cache for this thread: malloc it is */
static pthread_key_t headers_key;
static pthread_once_t headers_once = PTHREAD_ONCE_INIT;
static bool headers_key_ok;

/* Runs on the ending thread, which may still free headers afterwards (in
 * another key's destructor): those go to malloc. */
static void free_headers(void *cache) {
  header_cache *h = cache;
  headers = NULL;
  headers_refused = true;
  tally_leave(&live_count, &h->live);
  if (h->shelf) leave_shelf(h->shelf);
  while (h->count > 0) {
    xchg_buf *buf = h->items[--h->count];
    UNPOISON(buf, sizeof *buf);
    free(buf);
  }
  for (int c = 0; c < SMALL_CLASSES; c++) {
    while (h->n_small[c] > 0) {
      void *p = h->small[c][--h->n_small[c]];
      UNPOISON(p, (size_t)1 << (SMALL_MIN_SHIFT + c));
      free(p);
    }
  }
  free(h);
}

static void make_headers_key(void) {
  headers_key_ok = pthread_key_create(&headers_key, free_headers) == 0;
}

/* The thread's cache, made and registered (for its freeing when the thread
 * ends) on first use; NULL when that cannot be done. */
static header_cache *thread_headers(void) {
  if (headers || headers_refused) return headers;
  pthread_once(&headers_once, make_headers_key);
  header_cache *h = headers_key_ok ? calloc(1, sizeof *h) : NULL;
  if (!h || pthread_setspecific(headers_key, h) != 0) {
    free(h);
    headers_refused = true;
    return NULL;
  }
  tally_join(&live_count, &h->live);
  h->shelf = take_shelf();
  return headers = h;
}

/* Counts buffers made (+1) and freed (-1): on the thread's cache when it
 * has one (a plain store: no locked add on a line every thread shares),
 * else on live_count; xchg_buf_live_count sums them. */
static void count_live(int delta) {
  header_cache *h = thread_headers();
  if (h)
    tally_add(&h->live, 0, delta);
  else
    tally_add_shared(&live_count, 0, delta);
}

/* Fills in the header of a new buffer holding one reference; root and
 * release are for the caller to set where its kind has them. */
static xchg_buf *init_header(xchg_buf *buf, buf_kind kind, const void *data, size_t size) {
  *buf = (struct xchg_buf){.data = data, .size = size, .kind = kind};
  atomic_init(&buf->refs, 1);
  count_live(1);
  return buf;
}

static xchg_buf *new_header(buf_kind kind, const void *data, size_t size) {
  if (injected_failure()) return NULL;
  header_cache *h = thread_headers();
  xchg_buf *buf = h && h->count > 0 ? h->items[--h->count] : malloc(sizeof *buf);
  if (buf == NULL) return NULL;
  UNPOISON(buf, sizeof *buf);
  return init_header(buf, kind, data, size);
}

static void free_header(xchg_buf *buf) {
  header_cache *h = thread_headers();
  if (h && h->count < HEADER_CACHE) {
    POISON(buf, sizeof *buf); /* a use after the last unref is still caught */
    h->items[h->count++] = buf;
  } else {
    free(buf);
  }
}

/* The size class of a small block of `size` bytes, SMALL_CLASSES when it
 * is larger than the largest. */
static int small_class(size_t size) {
  int c = 0;
  while (c < SMALL_CLASSES && size > (size_t)1 << (SMALL_MIN_SHIFT + c)) c++;
  return c;
}

void *buf_small_alloc(size_t size, size_t *usable) {
  int c = small_class(size);
  size_t class_bytes = c < SMALL_CLASSES ? (size_t)1 << (SMALL_MIN_SHIFT + c) : size;
  if (usable) *usable = class_bytes;
  if (c == SMALL_CLASSES) return malloc(size);
  header_cache *h = thread_headers();
  void *p = NULL;
  if (h && h->n_small[c] > 0) {
    p = h->small[c][--h->n_small[c]];
    h->small_bytes -= class_bytes;
    UNPOISON(p, class_bytes);
  } else {
    p = malloc(class_bytes);
  }
  return p;
}

void buf_small_free(void *p, size_t size) {
  int c = small_class(size);
  header_cache *h = p && c < SMALL_CLASSES ? thread_headers() : NULL;
  size_t class_bytes = (size_t)1 << (SMALL_MIN_SHIFT + c);
  if (h && h->n_small[c] < SMALL_CACHE && h->small_bytes + class_bytes <= SMALL_CACHE_BYTES) {
    POISON(p, class_bytes);
    h->small[c][h->n_small[c]++] = p;
    h->small_bytes += class_bytes;
  } else {
    free(p);
  }
}

/* ---- recycling large owned blocks -------------------------------------------- */

/* Data sizes from RECYCLE_MIN to RECYCLE_MAX come in classes of eight per
 * doubling (a block is at most 1/8 larger than asked for), each with a
 * list of free blocks of exactly its size. */
#define RECYCLE_MIN_SHIFT 14 /* 16 KiB */
#define RECYCLE_MAX_SHIFT 22 /* 4 MiB */
#define RECYCLE_STEPS 8
#define RECYCLE_CLASSES ((RECYCLE_MAX_SHIFT - RECYCLE_MIN_SHIFT) * RECYCLE_STEPS)
#define RECYCLE_LIMIT ((size_t)64 << 20)

typedef struct free_block {
  struct free_block *next;
} free_block;

/* A thread's lists of free blocks.  Shelves are never freed, as blocks
 * name theirs: a thread that ends leaves its shelf, blocks and all, for
 * the next thread to start (and xchg_buf_trim to empty). */
typedef struct shelf {
  xchg_mutex lock; /* the owner takes blocks, any thread gives them back */
  free_block *lists[RECYCLE_CLASSES] XCHG_GUARDED_BY(lock);
  struct shelf *next; /* in `shelves`, set once */
  bool in_use;        /* a thread has it (under shelves_lock) */
} shelf;

static xchg_mutex shelves_lock = {PTHREAD_MUTEX_INITIALIZER};
static shelf *shelves; /* every shelf made */
/* Blocks on the shelves; atomic, so that the metrics read them unlocked. */
static atomic_size_t recycled_bytes;
static atomic_int_fast64_t recycled_blocks;
static atomic_int_fast64_t reused_blocks;

/* The class of a data size, or -1 outside the recycled range. */
static int size_class(size_t padded) {
  if (padded < ((size_t)1 << RECYCLE_MIN_SHIFT) || padded > ((size_t)1 << RECYCLE_MAX_SHIFT))
    return -1;
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
  return ((size_t)1 << shift) +
         ((size_t)1 << shift) / RECYCLE_STEPS * (size_t)(c % RECYCLE_STEPS + 1);
}

/* A shelf for a starting thread: one a thread left, or a new one (NULL
 * when none can be made: its blocks are then malloc's). */
static shelf *take_shelf(void) {
  xchg_mutex_lock(&shelves_lock);
  shelf *sh = shelves;
  while (sh && sh->in_use) sh = sh->next;
  if (!sh && (sh = calloc(1, sizeof *sh)) != NULL) {
    if (xchg_mutex_init(&sh->lock) != 0) {
      free(sh);
      sh = NULL;
    } else {
      sh->next = shelves;
      shelves = sh;
    }
  }
  if (sh) sh->in_use = true;
  xchg_mutex_unlock(&shelves_lock);
  return sh;
}

static void leave_shelf(shelf *sh) {
  xchg_mutex_lock(&shelves_lock);
  sh->in_use = false;
  xchg_mutex_unlock(&shelves_lock);
}

/* Takes the head of class c's list off sh; sh's lock is held. */
static free_block *pop_locked(shelf *sh, int c) XCHG_REQUIRES(sh->lock) {
  free_block *b = sh->lists[c];
  if (b) {
    sh->lists[c] = b->next;
    atomic_fetch_sub_explicit(&recycled_bytes, class_size(c), memory_order_relaxed);
    atomic_fetch_sub_explicit(&recycled_blocks, 1, memory_order_relaxed);
  }
  return b;
}

static void *take_recycled(shelf *sh, int c) {
  xchg_mutex_lock(&sh->lock);
  free_block *b = pop_locked(sh, c);
  xchg_mutex_unlock(&sh->lock);
  if (b) {
    UNPOISON((uint8_t *)b + OWNED_HEADER_SIZE, class_size(c));
    atomic_fetch_add_explicit(&reused_blocks, 1, memory_order_relaxed);
  }
  return b;
}

/* A block of class c from a shelf no thread has, when the calling thread's
 * own (own) has none: the threads that start take the shelves ended ones
 * left in list order, not by what they hold, so a new pool thread could
 * get one of other sizes while the blocks it needs waited on another,
 * counted against RECYCLE_LIMIT all the while (bench.sh cached,
 * uncompressed full heap decodeMany on a new two-thread pool each read:
 * 126 of its 3,000 large buffers a read were fresh pages).  Taken under
 * shelves_lock, so that no thread takes the shelf meanwhile; it nests
 * outside a shelf's lock, as nowhere else takes them the other way. */
static void *take_left_behind(const shelf *own, int c) {
  void *block = NULL;
  xchg_mutex_lock(&shelves_lock);
  for (shelf *sh = shelves; sh && !block; sh = sh->next)
    if (sh != own && !sh->in_use) block = take_recycled(sh, c);
  xchg_mutex_unlock(&shelves_lock);
  return block;
}

/* Keeps the block of class c on sh for reuse; false when the shelves hold
 * their limit already. */
static bool recycle(shelf *sh, void *block, int c) {
  if (atomic_fetch_add_explicit(&recycled_bytes, class_size(c), memory_order_relaxed) +
          class_size(c) >
      RECYCLE_LIMIT) {
    atomic_fetch_sub_explicit(&recycled_bytes, class_size(c), memory_order_relaxed);
    return false;
  }
  free_block *b = block;
  POISON((uint8_t *)b + OWNED_HEADER_SIZE, class_size(c));
  xchg_mutex_lock(&sh->lock);
  b->next = sh->lists[c];
  sh->lists[c] = b;
  /* counted before the lock goes, so that a pop never counts it off first */
  atomic_fetch_add_explicit(&recycled_blocks, 1, memory_order_relaxed);
  xchg_mutex_unlock(&sh->lock);
  return true;
}

/* The largest blocks go first, from every shelf: fewest frees for the
 * bytes. */
size_t xchg_buf_trim(size_t keep_bytes) {
  free_block *doomed = NULL;
  size_t freed = 0;
  xchg_mutex_lock(&shelves_lock);
  shelf *all = shelves;
  xchg_mutex_unlock(&shelves_lock); /* shelves are only ever added, at the head */
  for (int c = RECYCLE_CLASSES - 1; c >= 0; c--) {
    for (shelf *sh = all; sh; sh = sh->next) {
      xchg_mutex_lock(&sh->lock);
      while (sh->lists[c] &&
             atomic_load_explicit(&recycled_bytes, memory_order_relaxed) > keep_bytes) {
        free_block *b = pop_locked(sh, c);
        UNPOISON((uint8_t *)b + OWNED_HEADER_SIZE, class_size(c));
        b->next = doomed;
        doomed = b;
        freed += class_size(c);
      }
      xchg_mutex_unlock(&sh->lock);
    }
  }
  while (doomed) { /* freed outside the locks: allocations need not wait for it */
    free_block *next = doomed->next;
    free(doomed);
    doomed = next;
  }
  return freed;
}

static void free_owned(xchg_buf *buf) {
  size_t padded = (buf->size + (XCHG_ALIGNMENT - 1)) & ~(size_t)(XCHG_ALIGNMENT - 1);
  int c = size_class(padded);
  if (c < 0 || !buf->shelf || !recycle(buf->shelf, buf, c)) free(buf);
}

/* ---- allocating ------------------------------------------------------------- */

static xchg_buf *alloc_owned(size_t size, bool zero) {
  if (injected_failure()) return NULL;
  /* Round the data up to whole alignment units so that vectorised code may
   * touch the padding; the padding is zeroed so it never holds stale bytes. */
  size_t padded = (size + (XCHG_ALIGNMENT - 1)) & ~(size_t)(XCHG_ALIGNMENT - 1);
  if (padded < size || padded > SIZE_MAX - OWNED_HEADER_SIZE) return NULL;
  int c = size_class(padded);
  header_cache *h = c >= 0 ? thread_headers() : NULL;
  shelf *sh = h ? h->shelf : NULL;
  void *block = sh ? take_recycled(sh, c) : NULL;
  if (!block && sh) block = take_left_behind(sh, c);
  if (!block && posix_memalign(&block, XCHG_ALIGNMENT,
                               OWNED_HEADER_SIZE + (c >= 0 ? class_size(c) : padded)) != 0)
    return NULL;
  xchg_buf *buf = block;
  uint8_t *data = (uint8_t *)block + OWNED_HEADER_SIZE;
  if (zero) {
    memset(data, 0, padded);
  } else {
    memset(data + size, 0, padded - size);
  }
  atomic_fetch_add_explicit(&live_bytes, (int_fast64_t)size, memory_order_relaxed);
  init_header(buf, BUF_OWNED, data, size);
  buf->shelf = sh;
  return buf;
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
  /* An empty wrapped buffer may have no data (NULL + 0 is undefined). */
  xchg_buf *buf = new_header(BUF_SLICE, parent->data ? parent->data + offset : NULL, size);
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
  count_live(-1);
  switch (buf->kind) {
    case BUF_OWNED:
      atomic_fetch_sub_explicit(&live_bytes, (int_fast64_t)buf->size, memory_order_relaxed);
      free_owned(buf);
      return;
    case BUF_WRAPPED:
      if (buf->release != NULL) buf->release(buf->release_ctx, buf->data, buf->size);
      free_header(buf);
      return;
    case BUF_SLICE: {
      xchg_buf *root = buf->root;
      free_header(buf);
      xchg_buf_unref(root); /* a root is never a slice: at most one level deep */
      return;
    }
  }
}

const uint8_t *xchg_buf_data(const xchg_buf *buf) { return buf ? buf->data : NULL; }

uint8_t *xchg_buf_mutable_data(xchg_buf *buf) { return buf ? (uint8_t *)buf->data : NULL; }

size_t xchg_buf_size(const xchg_buf *buf) { return buf ? buf->size : 0; }

int64_t xchg_buf_allocated_bytes(void) {
  return (int64_t)atomic_load_explicit(&live_bytes, memory_order_relaxed) +
         (int64_t)atomic_load_explicit(&recycled_bytes, memory_order_relaxed);
}

int64_t xchg_buf_live_count(void) { return tally_sum(&live_count, 0); }

void xchg_buf_get_metrics(xchg_buf_metrics *out) {
  if (!out) return;
  out->live_bytes = (int64_t)atomic_load_explicit(&live_bytes, memory_order_relaxed);
  out->live_buffers = xchg_buf_live_count();
  out->recycled_bytes = (int64_t)atomic_load_explicit(&recycled_bytes, memory_order_relaxed);
  out->recycled_blocks = (int64_t)atomic_load_explicit(&recycled_blocks, memory_order_relaxed);
  out->recycle_limit_bytes = (int64_t)RECYCLE_LIMIT;
  out->reused_blocks = (int64_t)atomic_load_explicit(&reused_blocks, memory_order_relaxed);
  out->allocated_bytes = out->live_bytes + out->recycled_bytes;
}
