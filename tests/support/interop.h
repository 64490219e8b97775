/* tests/support/interop.h — running the Node projects of tests/interop/
 * (another Arrow implementation on the other side of a test). */
#ifndef XCHG_TESTS_INTEROP_H
#define XCHG_TESTS_INTEROP_H

#include <stddef.h>

/* Runs cmd through the shell: its exit status, or -1 if it could not run
 * or was killed. */
int tu_run(const char *cmd);

/* tests/interop/<project> of this source tree (a static buffer). */
const char *tu_interop_dir(const char *project);

/* 0 when node runs and tests/interop/<project>/node_modules/<package> is
 * installed; else -1 and a message saying what is missing and how to get
 * it (scripts/setup.sh runs `npm ci` in every tests/interop/ project). */
int tu_interop_ready(const char *project, const char *package, char *msg, size_t msgsz);

#endif
