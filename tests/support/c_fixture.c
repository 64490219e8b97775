/* tests/support/c_fixture.c — see c_fixture.h. */
#include "support/c_fixture.h"

#include <string.h>

static void release_schema(struct ArrowSchema *schema) { schema->release = NULL; }
static void release_array(struct ArrowArray *array) { array->release = NULL; }

void tu_fixture_schema(struct ArrowSchema *s, const char *format, const char *name,
                       int64_t n_children, struct ArrowSchema **children) {
  *s = (struct ArrowSchema){.format = format,
                            .name = name,
                            .flags = ARROW_FLAG_NULLABLE,
                            .n_children = n_children,
                            .children = children,
                            .release = release_schema};
}

void tu_fixture_array(struct ArrowArray *a, int64_t length, int64_t n_buffers, const void **buffers,
                      int64_t n_children, struct ArrowArray **children) {
  *a = (struct ArrowArray){.length = length,
                           .n_buffers = n_buffers,
                           .buffers = buffers,
                           .n_children = n_children,
                           .children = children,
                           .release = release_array};
}

void tu_fixture_view(uint8_t view[16], const char *text, int32_t buffer, int32_t offset) {
  int32_t len = (int32_t)strlen(text);
  memset(view, 0, 16);
  memcpy(view, &len, 4);
  if (len <= 12) {
    memcpy(view + 4, text, (size_t)len);
    return;
  }
  memcpy(view + 4, text, 4);
  memcpy(view + 8, &buffer, 4);
  memcpy(view + 12, &offset, 4);
}
