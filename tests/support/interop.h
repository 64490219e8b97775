/* tests/support/interop.h — the Node projects of tests/interop/ (another
 * Arrow implementation on the other side of a test), run with tu_run. */
#ifndef XCHG_TESTS_INTEROP_H
#define XCHG_TESTS_INTEROP_H

#include <stddef.h>

/* tests/interop/<project> of this source tree (a static buffer). */
const char *tu_interop_dir(const char *project);

/* 0 when node runs and tests/interop/<project>/node_modules/<package> is
 * installed; else -1 and a message saying what is missing and how to get
 * it (scripts/setup.sh runs `npm ci` in every tests/interop/ project). */
int tu_interop_ready(const char *project, const char *package, char *msg, size_t msgsz);

#endif
