/* tests/support/json_util.h — reading JSON the way the tests need it: a
 * whole file (plain or gzip-compressed, as Arrow ships its gold JSON) into
 * a jansson document, and the two lookups every JSON check repeats (a
 * member string that may be missing, an integer that may be written as a
 * string, as the integration format writes 64-bit values). */
#ifndef XCHG_TESTS_JSON_UTIL_H
#define XCHG_TESTS_JSON_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The JSON document in the file at path, gunzipped if it is gzip (plain
 * files pass through unchanged); strings may hold NUL characters.  NULL
 * with a message naming the file (and the line of a syntax error) in msg
 * (msgsz bytes, may be 0). */
json_t *tu_json_load(const char *path, char *msg, size_t msgsz);

/* The string member key of obj, or "" when it is missing or not a string. */
const char *tu_json_str(json_t *obj, const char *key);

/* v as 64-bit integer text into buf (size bytes): integers and strings
 * (taken as they are); false, buf untouched, for any other value. */
bool tu_json_integer_text(json_t *v, char *buf, size_t size);

#endif
