/* error.c — status names and message formatting for xchg_error. */
#include "xchg/error.h"

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

void xchg_error_prefix(xchg_error *err, const char *fmt, ...) {
  if (err == NULL) return;
  char prefix[XCHG_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  size_t plen = strlen(prefix); /* n may exceed what was kept */
  size_t cap = sizeof err->message;
  if (plen >= cap - 1) {
    memcpy(err->message, prefix, cap - 1);
    err->message[cap - 1] = '\0';
    return;
  }
  /* Keep as much of the old message as fits after the prefix. */
  size_t mlen = strnlen(err->message, cap - 1);
  if (mlen > cap - 1 - plen) mlen = cap - 1 - plen;
  memmove(err->message + plen, err->message, mlen);
  memcpy(err->message, prefix, plen);
  err->message[plen + mlen] = '\0';
}

xchg_status base_null_argument(const char *who, const char *what, xchg_error *err) {
  return xchg_errorf(err, XCHG_EINVAL, "%s: %s is NULL", who, what);
}
