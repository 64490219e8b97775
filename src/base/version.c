/* version.c — the library's version at run time (see xchg/xchg.h): the
 * macros as this library was built with them. */
#include "xchg/version.h"

unsigned xchg_version_number(void) { return XCHG_VERSION_NUMBER; }

const char *xchg_version_string(void) { return XCHG_VERSION_STRING; }
