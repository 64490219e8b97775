/* hello.c — the smallest program built against an installed xchg, to prove
 * that the headers, the libraries and xchg.pc work together. */
#include <stdio.h>
#include <string.h>

#include <xchg/xchg.h>

int main(void) {
  xchg_buf *buf = xchg_buf_alloc(100);
  if (buf == NULL || xchg_buf_size(buf) != 100 || xchg_buf_allocated_bytes() != 100) {
    fprintf(stderr, "hello: xchg_buf_alloc misbehaved\n");
    return 1;
  }
  xchg_buf_unref(buf);
  if (xchg_buf_live_count() != 0 || strcmp(xchg_status_name(XCHG_OK), "ok") != 0) {
    fprintf(stderr, "hello: unexpected library state\n");
    return 1;
  }
  /* The library it runs with is the one its headers describe. */
  if (xchg_version_number() != XCHG_VERSION_NUMBER ||
      strcmp(xchg_version_string(), XCHG_VERSION_STRING) != 0) {
    fprintf(stderr, "hello: built with xchg %s, runs with %s\n", XCHG_VERSION_STRING,
            xchg_version_string());
    return 1;
  }
  printf("hello from xchg %s: %s\n", xchg_version_string(), xchg_status_name(XCHG_EFORMAT));
  return 0;
}
