/* tests/support/json_util.c — see json_util.h. */
#include "support/json_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "support/testutil.h"

static json_t *load_error(char *msg, size_t msgsz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *load_error(char *msg, size_t msgsz, const char *fmt, ...) {
  if (msg != NULL && msgsz > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgsz, fmt, ap);
    va_end(ap);
  }
  return NULL;
}

/* The whole file, gunzipped; {NULL, 0} when it cannot be read to the end. */
static tu_bytes read_gz(const char *path) {
  tu_bytes text = {0};
  gzFile gz = gzopen(path, "rb");
  if (gz == NULL) return text;
  tu_bytes_append(&text, "", 0); /* an empty file is read, as an empty text */
  char buf[1 << 16];
  int got;
  while ((got = gzread(gz, buf, sizeof buf)) > 0) tu_bytes_append(&text, buf, (size_t)got);
  if (got < 0) {
    free(text.data);
    text = (tu_bytes){0};
  }
  gzclose(gz);
  return text;
}

json_t *tu_json_load(const char *path, char *msg, size_t msgsz) {
  tu_bytes text = read_gz(path);
  if (text.data == NULL)
    return load_error(msg, msgsz, "%s: cannot read (or gunzip) the file", path);
  json_error_t jerr;
  json_t *doc = json_loadb((const char *)text.data, text.size, JSON_ALLOW_NUL, &jerr);
  free(text.data);
  if (doc == NULL) return load_error(msg, msgsz, "%s: line %d: %s", path, jerr.line, jerr.text);
  return doc;
}

const char *tu_json_str(json_t *obj, const char *key) {
  const char *s = json_string_value(json_object_get(obj, key));
  return s ? s : "";
}

bool tu_json_integer_text(json_t *v, char *buf, size_t size) {
  if (json_is_integer(v)) {
    snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    return true;
  }
  if (json_is_string(v)) {
    snprintf(buf, size, "%s", json_string_value(v));
    return true;
  }
  return false;
}
