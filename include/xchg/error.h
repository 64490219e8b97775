/** \file
 * xchg/error.h — the error model shared by every xchg module.
 *
 * Every fallible call returns an xchg_status and, when it fails, fills an
 * xchg_error with a message that names what was wrong and where: the message
 * index, the byte offset in the input, the field path and the buffer index
 * when they are known.  A NULL xchg_error* is accepted everywhere and means
 * "the caller only wants the status". */
#ifndef XCHG_ERROR_H
#define XCHG_ERROR_H

#include "xchg/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a call returns: XCHG_OK, or what kind of failure its error names. */
typedef enum xchg_status {
  XCHG_OK = 0,         /**< success */
  XCHG_EINVAL = 1,     /**< the caller passed an invalid argument */
  XCHG_ENOMEM = 2,     /**< an allocation failed */
  XCHG_EIO = 3,        /**< the byte source failed or ended early */
  XCHG_EFORMAT = 4,    /**< the input is malformed (bad bytes on the wire) */
  XCHG_ENOTSUP = 5,    /**< valid input using a feature xchg does not support */
  XCHG_ECANCELLED = 6, /**< the operation was cancelled by the caller */
  XCHG_ELIMIT = 7,     /**< the input exceeds a configured resource limit */
  /** Not a failure: nothing can be returned until more input is given
   * (xchg_shuffle_reader_next with incremental input).  Never sticky. */
  XCHG_EAGAIN = 8
} xchg_status;

/** The size of an error's message buffer, terminating NUL included. */
#define XCHG_ERROR_MESSAGE_SIZE 1024

/** Where a failing call says what went wrong and where. */
typedef struct xchg_error {
  char message[XCHG_ERROR_MESSAGE_SIZE]; /**< NUL-terminated, truncated if need be */
} xchg_error;

/** A short constant name for a status ("ok", "invalid argument", ...). */
XCHG_API const char *xchg_status_name(xchg_status status);

/** Formats a message into err (when err is not NULL) and returns status, so
 * that failures read as `return xchg_errorf(err, XCHG_EFORMAT, "...", ...);`.
 * The message is truncated, never overflowed. */
XCHG_API xchg_status xchg_errorf(xchg_error *err, xchg_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Prepends context ("message 3: ") to a message already in err.  When the
 * two do not fit in it, the message keeps at least its first
 * XCHG_ERROR_MESSAGE_SIZE / 2 bytes and the context is cut in its middle
 * ("..."), so that a long context (a deep path) never hides what went
 * wrong. */
XCHG_API void xchg_error_prefix(xchg_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
