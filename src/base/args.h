/* args.h — the error of a call given a NULL argument, one wording for every
 * module: the caller's mistake, not a failure of the object called. */
#ifndef XCHG_BASE_ARGS_H
#define XCHG_BASE_ARGS_H

#include "xchg/error.h"

/* XCHG_EINVAL with "WHO: WHAT is NULL" ("xchg_ipc_reader_next: out is NULL"). */
xchg_status base_null_argument(const char *who, const char *what, xchg_error *err);

#endif
