/* error.c — status names and message formatting for xchg_error. */
#include "xchg/error.h"
#include "base/args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *xchg_status_name(xchg_status status) {
  switch (status) {
    case XCHG_OK: return "ok";
    case XCHG_EINVAL: return "invalid argument";
    case XCHG_ENOMEM: return "out of memory";
    case XCHG_EIO: return "i/o error";
    case XCHG_EFORMAT: return "malformed input";
    case XCHG_ENOTSUP: return "not supported";
    case XCHG_ECANCELLED: return "cancelled";
    case XCHG_ELIMIT: return "resource limit exceeded";
    case XCHG_EAGAIN: return "more input needed";
  }
  return "unknown status";
}

xchg_status xchg_errorf(xchg_error *err, xchg_status status, const char *fmt, ...) {
  if (err == NULL) return status;
  va_list ap;
  va_start(ap, fmt);
  /* vsnprintf truncates and always terminates when the size is non-zero. */
  int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  if (n < 0) err->message[0] = '\0';
  return status;
}

/* The bytes of a message that a prefix never takes from it, when the two
 * do not fit: the reason is what the message says, the prefix only where. */
#define KEPT_REASON (XCHG_ERROR_MESSAGE_SIZE / 2)

static const char elided[] = "...";

/* Writes prefix[0, plen) into room bytes at dst: whole when it fits, else
 * its head and its tail around "..." (a path's start and the block or
 * message nearest the fault). */
static void put_prefix(char *dst, size_t room, const char *prefix, size_t plen) {
  if (plen <= room) {
    memcpy(dst, prefix, plen);
    return;
  }
  size_t head = (room - (sizeof elided - 1)) / 2, tail = room - (sizeof elided - 1) - head;
  memcpy(dst, prefix, head);
  memcpy(dst + head, elided, sizeof elided - 1);
  memcpy(dst + room - tail, prefix + plen - tail, tail);
}

void xchg_error_prefix(xchg_error *err, const char *fmt, ...) {
  if (err == NULL) return;
  char prefix[XCHG_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  size_t plen = strlen(prefix); /* n may exceed what was kept */
  size_t cap = sizeof err->message - 1;
  size_t mlen = strnlen(err->message, cap);
  /* Room for the message: all of it beside the prefix when both fit, else
   * what the prefix leaves, never less than KEPT_REASON bytes of it. */
  size_t keep = plen + mlen <= cap ? mlen : cap - plen;
  if (plen + mlen > cap && (plen >= cap || keep < KEPT_REASON))
    keep = mlen < KEPT_REASON ? mlen : KEPT_REASON;
  size_t room = cap - keep < plen ? cap - keep : plen;
  memmove(err->message + room, err->message, keep);
  put_prefix(err->message, room, prefix, plen);
  err->message[room + keep] = '\0';
}

xchg_status base_null_argument(const char *who, const char *what, xchg_error *err) {
  return xchg_errorf(err, XCHG_EINVAL, "%s: %s is NULL", who, what);
}

xchg_status base_null_span(const char *who, const char *what, size_t size, xchg_error *err) {
  return xchg_errorf(err, XCHG_EINVAL, "%s: %s is NULL with a size of %zu bytes", who, what, size);
}
