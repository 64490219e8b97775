/* strbuf.c — growable output strings for the CLI writers. */
#include "cli/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Output is handed to stdio in chunks of about this size. */
#define XS_FLUSH_THRESHOLD (1u << 16)

void xs_init(xs *s, FILE *sink) {
  memset(s, 0, sizeof *s);
  s->sink = sink;
}

void xs_free(xs *s) {
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

void xs_flush(xs *s) {
  if (s->sink == NULL || s->len == 0 || s->write_errno != 0) return;
  errno = 0;
  if (fwrite(s->data, 1, s->len, s->sink) != s->len || fflush(s->sink) != 0) {
    s->write_errno = errno != 0 ? errno : EIO;
    s->failed = true;
  }
  s->len = 0;
}

void xs_maybe_flush(xs *s) {
  if (s->len >= XS_FLUSH_THRESHOLD) xs_flush(s);
}

bool xs_failed(const xs *s) { return s->failed; }

int xs_write_error(const xs *s) { return s->write_errno; }

const char *xs_cstr(xs *s) {
  if (!xs_reserve(s, 0)) return "";
  s->data[s->len] = '\0';
  return s->data;
}
