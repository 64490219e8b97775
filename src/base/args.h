/* args.h — the error of a call given a NULL argument, one wording for every
 * module: the caller's mistake, not a failure of the object called. */
#ifndef XCHG_BASE_ARGS_H
#define XCHG_BASE_ARGS_H

#include <stddef.h>

#include "xchg/error.h"

/* XCHG_EINVAL with "WHO: WHAT is NULL" ("xchg_ipc_reader_next: out is NULL"). */
xchg_status base_null_argument(const char *who, const char *what, xchg_error *err);

/* XCHG_EINVAL with "WHO: WHAT is NULL with a size of SIZE bytes": bytes
 * given as a pointer and a size, NULL with a size above 0 (NULL with 0 is
 * an empty span, as an empty Arrow buffer may be). */
xchg_status base_null_span(const char *who, const char *what, size_t size, xchg_error *err);

#endif
