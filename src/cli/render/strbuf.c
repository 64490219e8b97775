/* strbuf.c — growable output strings for the CLI writers. */
#include "cli/render/strbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"

/* Output is handed to stdio in chunks of about this size. */
#define XS_FLUSH_THRESHOLD (1u << 16)
/* ... and to the write-behind thread in chunks of this size: fewer hand-overs,
 * and a failed write is still seen within a few hundred KiB. */
#define XS_WRITE_BEHIND_CHUNK (1u << 18)

void xs_init(xs *s, FILE *sink) {
  memset(s, 0, sizeof *s);
  s->sink = sink;
}

static void writer_stop(xs *s);

void xs_free(xs *s) {
  writer_stop(s);
  free(s->data);
  s->data = NULL;
  s->len = s->cap = 0;
}

void xs_clear(xs *s) { s->len = 0; }

static bool xs_reserve(xs *s, size_t extra) {
  if (s->failed) return false;
  if (extra > SIZE_MAX / 2 - s->len) {
    s->failed = true;
    return false;
  }
  size_t need = s->len + extra + 1; /* room for the terminating NUL */
  if (need <= s->cap) return true;
  size_t cap = s->cap ? s->cap : 256;
  while (cap < need) cap *= 2;
  char *grown = realloc(s->data, cap);
  if (grown == NULL) {
    s->failed = true;
    return false;
  }
  s->data = grown;
  s->cap = cap;
  return true;
}

void xs_append_slow(xs *s, const void *bytes, size_t n) {
  if (n == 0 || !xs_reserve(s, n)) return;
  memcpy(s->data + s->len, bytes, n);
  s->len += n;
}

void xs_puts(xs *s, const char *text) { xs_append(s, text, strlen(text)); }

char *xs_room_slow(xs *s, size_t n) { return xs_reserve(s, n) ? s->data + s->len : NULL; }

void xs_printf(xs *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[128];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    s->failed = true;
    return;
  }
  if ((size_t)n < sizeof small) {
    xs_append(s, small, (size_t)n);
    return;
  }
  if (!xs_reserve(s, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  s->len += (size_t)n;
}

/* Writes n bytes to sink and flushes it: 0, or the errno of the failure. */
static int write_out(FILE *sink, const char *data, size_t n) {
  errno = 0;
  if (fwrite(data, 1, n, sink) != n || fflush(sink) != 0) return errno != 0 ? errno : EIO;
  return 0;
}

/* ---- write-behind: one chunk in flight, written by a thread of its own ---- */

struct xs_writer {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  char *busy; /* the chunk being written; NULL when the thread is idle */
  size_t busy_len, busy_cap;
  char *spare; /* the chunk written last, for the caller to fill again */
  size_t spare_cap;
  int write_errno; /* the first failure, as the thread saw it */
  bool stop;
};

static void *writer_main(void *arg) {
  xs *s = arg;
  xs_writer *w = s->writer;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->busy == NULL && !w->stop) pthread_cond_wait(&w->changed, &w->lock);
    if (w->busy == NULL) break;
    bool failed_before = w->write_errno != 0;
    pthread_mutex_unlock(&w->lock);
    int e =
        failed_before ? 0 : write_out(s->sink, w->busy, w->busy_len); /* nothing after a failure */
    pthread_mutex_lock(&w->lock);
    if (e != 0) w->write_errno = e;
    free(w->spare);
    w->spare = w->busy;
    w->spare_cap = w->busy_cap;
    w->busy = NULL;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

void xs_write_behind(xs *s) {
  if (s->sink == NULL || s->writer != NULL) return;
  xs_writer *w = calloc(1, sizeof *w);
  if (w == NULL) return;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  s->writer = w;
  if (base_thread_create(&w->thread, writer_main, s) != 0) {
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    free(w);
    s->writer = NULL; /* the writes stay in the caller */
  }
}

/* Waits until the thread is idle and takes over its failure, if any.
 * Returns with the lock held. */
static void writer_wait_locked(xs *s) {
  xs_writer *w = s->writer;
  pthread_mutex_lock(&w->lock);
  while (w->busy != NULL) pthread_cond_wait(&w->changed, &w->lock);
  if (w->write_errno != 0 && s->write_errno == 0) {
    s->write_errno = w->write_errno;
    s->failed = true;
  }
}

/* Hands the full buffer to the thread and takes the one it wrote last. */
static void writer_hand_over(xs *s) {
  xs_writer *w = s->writer;
  writer_wait_locked(s);
  if (s->write_errno == 0) {
    w->busy = s->data;
    w->busy_len = s->len;
    w->busy_cap = s->cap;
    s->data = w->spare;
    s->cap = w->spare ? w->spare_cap : 0;
    w->spare = NULL;
    pthread_cond_broadcast(&w->changed);
  }
  s->len = 0;
  pthread_mutex_unlock(&w->lock);
}

static void writer_stop(xs *s) {
  xs_writer *w = s->writer;
  if (w == NULL) return;
  pthread_mutex_lock(&w->lock);
  w->stop = true;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL); /* it finishes the chunk in flight first */
  free(w->spare);
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->lock);
  free(w);
  s->writer = NULL;
}

void xs_flush(xs *s) {
  if (s->sink == NULL || s->write_errno != 0) return;
  if (s->writer != NULL) {
    if (s->len > 0) writer_hand_over(s);
    writer_wait_locked(s);
    pthread_mutex_unlock(&s->writer->lock);
    return;
  }
  if (s->len == 0) return;
  int e = write_out(s->sink, s->data, s->len);
  if (e != 0) {
    s->write_errno = e;
    s->failed = true;
  }
  s->len = 0;
}

void xs_maybe_flush(xs *s) {
  if (s->len < (s->writer ? XS_WRITE_BEHIND_CHUNK : XS_FLUSH_THRESHOLD) || s->sink == NULL ||
      s->write_errno != 0)
    return;
  if (s->writer != NULL)
    writer_hand_over(s);
  else
    xs_flush(s);
}

bool xs_failed(const xs *s) { return s->failed; }

int xs_write_error(const xs *s) { return s->write_errno; }

const char *xs_cstr(xs *s) {
  if (!xs_reserve(s, 0)) return "";
  s->data[s->len] = '\0';
  return s->data;
}
