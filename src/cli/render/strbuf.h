/* strbuf.h — a growable byte string, the output unit of every CLI writer.
 *
 * Writers append text to an xs; a string that has a FILE attached is
 * flushed to it whenever it grows past a threshold, so that writing a large
 * file never holds more than a little output in memory.  Out of memory is
 * sticky: appends become no-ops and xs_failed() reports it once at the end,
 * which keeps the many small append calls free of error plumbing.  A
 * failed write to the sink is sticky too, and keeps its errno: a writer
 * checks xs_write_error() after each flush point to stop at once.
 *
 * With xs_write_behind, a thread of its own writes each flushed chunk
 * while the caller formats the next one, so that the time a write takes
 * (into a file, a pipe) overlaps the work that produces the output. */
#ifndef XCHG_CLI_RENDER_STRBUF_H
#define XCHG_CLI_RENDER_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct xs_writer xs_writer;

typedef struct xs {
  char *data;
  size_t len;
  size_t cap;
  FILE *sink;        /* flushed into when large; NULL keeps everything */
  bool failed;       /* an allocation or a write failed */
  int write_errno;   /* the errno of the first failed write to the sink, else 0 */
  xs_writer *writer; /* the write-behind thread, when one runs */
} xs;

void xs_init(xs *s, FILE *sink);
/* Ends the write-behind thread, if any (after xs_flush, nothing is lost). */
void xs_free(xs *s);

/* From now on the sink is written by a thread of its own: xs_maybe_flush
 * hands the chunk over and goes on at once (waiting only while the chunk
 * before is still being written); a failed write shows in xs_failed() and
 * xs_write_error() at the next flush point.  The sink must not be used
 * otherwise until xs_free.  Without a thread (none could be started) the
 * writes stay in the caller, as before. */
void xs_write_behind(xs *s);
void xs_clear(xs *s);

/* The appends that do not fit (or follow a failure) go through here. */
void xs_append_slow(xs *s, const void *bytes, size_t n);

/* Appends stay inline while they fit: the writers make one per value. */
static inline void xs_append(xs *s, const void *bytes, size_t n) {
  if (n == 0) return; /* bytes may then be NULL, which memcpy may not be given */
  if (n < s->cap - s->len && !s->failed) { /* < keeps room for xs_cstr's NUL */
    memcpy(s->data + s->len, bytes, n);
    s->len += n;
    return;
  }
  xs_append_slow(s, bytes, n);
}

static inline void xs_putc(xs *s, char c) {
  if (s->cap - s->len > 1 && !s->failed) {
    s->data[s->len++] = c;
    return;
  }
  xs_append_slow(s, &c, 1);
}

void xs_puts(xs *s, const char *text);

/* Room for up to n bytes written in place at the returned pointer, then
 * counted with xs_commit; NULL after a failure. */
char *xs_room_slow(xs *s, size_t n);
static inline char *xs_room(xs *s, size_t n) {
  return n < s->cap - s->len && !s->failed ? s->data + s->len : xs_room_slow(s, n);
}
static inline void xs_commit(xs *s, size_t written) { s->len += written; }
void xs_printf(xs *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Writes everything to the sink (and flushes the FILE, so that a failure
 * shows at once) when the buffer is big; xs_flush always.  After a failed
 * write nothing more is written. */
void xs_maybe_flush(xs *s);
void xs_flush(xs *s);

/* True when an allocation or a write failed since xs_init. */
bool xs_failed(const xs *s);

/* The errno of the first failed write to the sink; 0 if none failed (an
 * allocation failure alone is not a write error). */
int xs_write_error(const xs *s);

/* A NUL-terminated view of the contents (empty string when nothing). */
const char *xs_cstr(xs *s);

#endif
