/** \file
 * xchg/version.h — which xchg this is: the version of the headers a
 * program was built with (macros) and of the library it runs with
 * (functions), so that a program can tell the two apart.
 *
 * Versions are major.minor.patch.  Until 1.0 an API may still change
 * between 0.x releases (CHANGES.md records every change); from 1.0 the
 * major number changes with the API, the minor with additions, the patch
 * with fixes. */
#ifndef XCHG_VERSION_H
#define XCHG_VERSION_H

#include "xchg/export.h"

/** The version of these headers: major, ... */
#define XCHG_VERSION_MAJOR 0
/** ... minor, ... */
#define XCHG_VERSION_MINOR 1
/** ... and patch. */
#define XCHG_VERSION_PATCH 0
/** The version as "major.minor.patch". */
#define XCHG_VERSION_STRING "0.1.0"
/** The version as one number, major * 10000 + minor * 100 + patch (0.1.0
 * is 100), which compares as versions do. */
#define XCHG_VERSION_NUMBER \
  (XCHG_VERSION_MAJOR * 10000 + XCHG_VERSION_MINOR * 100 + XCHG_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the library linked at run time, as XCHG_VERSION_NUMBER
 * gives it: a program built with one version's headers and run with
 * another's shared library (libxchg.so.0 serves every 0.x) can tell, and
 * refuse a library older than the calls it makes. */
XCHG_API unsigned xchg_version_number(void);

/** The same as "major.minor.patch" (static storage, never freed). */
XCHG_API const char *xchg_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
