/* touch.c — see touch.h. */
#include <stdlib.h>
#include <string.h>

#include "touch.h"

int bench_fixed_width(const char *format) {
  switch (format[0]) {
    case 'c':
    case 'C': return 1;
    case 's':
    case 'S':
    case 'e': return 2;
    case 'i':
    case 'I':
    case 'f': return 4;
    case 'l':
    case 'L':
    case 'g': return 8;
    case 't': /* dates, times, timestamps, durations, intervals */
      switch (format[1]) {
        case 'd': return format[2] == 'D' ? 4 : 8;
        case 't': return format[2] == 's' || format[2] == 'm' ? 4 : 8;
        case 'i': return format[2] == 'M' ? 4 : format[2] == 'D' ? 8 : 16;
        default: return 8;
      }
    case 'w': return format[1] == ':' ? atoi(format + 2) : 0; /* fixed-size binary */
    case 'd': { /* decimal "d:precision,scale[,bit width]" */
      const char *bits = strchr(format, ',') ? strchr(strchr(format, ',') + 1, ',') : NULL;
      return bits ? atoi(bits + 1) / 8 : 16;
    }
    default: return 0;
  }
}

static int valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->buffers[0];
  return !bits || (bits[(a->offset + i) >> 3] >> ((a->offset + i) & 7)) & 1;
}

/* The sum of n values of `width` bytes at p, each as its unsigned bits
 * (signed when `sign`); one loop per width, which the compiler vectorizes:
 * a memcpy of a run-time width per value cost 2 ns a value, which made the
 * shuffle benchmark's checksum of one column an eighth of a read's time. */
static uint64_t sum_fixed(const uint8_t *p, int64_t n, int width, int sign) {
  uint64_t sum = 0;
  for (int64_t i = 0; width == 1 && i < n; i++) sum += p[i];
  for (int64_t i = 0; width == 2 && i < n; i++) {
    uint16_t v;
    memcpy(&v, p + 2 * i, 2);
    sum += v;
  }
  for (int64_t i = 0; width == 4 && sign && i < n; i++) {
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    sum += (uint64_t)(int64_t)v;
  }
  for (int64_t i = 0; width == 4 && !sign && i < n; i++) {
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    sum += v;
  }
  for (int64_t i = 0; width == 8 && i < n; i++) {
    uint64_t v;
    memcpy(&v, p + 8 * i, 8);
    sum += v;
  }
  /* wider values (intervals of 16 bytes, decimals, fixed-size binary):
   * their bytes */
  if (width != 1 && width != 2 && width != 4 && width != 8)
    for (int64_t i = 0; i < n * width; i++) sum += p[i];
  return sum;
}

static void touch_fixed(const struct ArrowArray *a, int width, int is_float, touched *t) {
  if (a->length == 0) return; /* its buffers may be NULL */
  const uint8_t *p = (const uint8_t *)a->buffers[1] + a->offset * width;
  if (is_float && a->buffers[0]) {
    for (int64_t i = 0; i < a->length; i++)
      if (valid(a, i)) t->sum += sum_fixed(p + i * width, 1, width, 0);
  } else {
    t->sum += sum_fixed(p, a->length, width, width == 4 && !is_float);
  }
  t->bytes += a->length * width;
}

void bench_touch_column(const struct ArrowSchema *s, const struct ArrowArray *a, touched *t) {
  t->nulls += a->null_count;
  if (a->null_count) t->bytes += (a->length + 7) / 8;
  int width = bench_fixed_width(s->format);
  if (strcmp(s->format, "b") == 0) {
    const uint8_t *bits = a->buffers[1];
    for (int64_t i = 0; i < a->length; i++)
      t->sum += (bits[(a->offset + i) >> 3] >> ((a->offset + i) & 7)) & 1;
    t->bytes += (a->length + 7) / 8;
  } else if (strcmp(s->format, "u") == 0 || strcmp(s->format, "z") == 0) {
    const int32_t *offsets = a->buffers[1];
    const uint8_t *data = a->buffers[2];
    for (int32_t k = offsets[a->offset]; k < offsets[a->offset + a->length]; k++) t->sum += data[k];
    t->bytes += (a->length + 1) * 4 + offsets[a->offset + a->length] - offsets[a->offset];
  } else if (strcmp(s->format, "U") == 0 || strcmp(s->format, "Z") == 0) { /* 64-bit offsets */
    const int64_t *offsets = a->buffers[1];
    const uint8_t *data = a->buffers[2];
    for (int64_t k = offsets[a->offset]; k < offsets[a->offset + a->length]; k++) t->sum += data[k];
    t->bytes += (a->length + 1) * 8 + offsets[a->offset + a->length] - offsets[a->offset];
  } else if (width) {
    touch_fixed(a, width, s->format[0] == 'g' || s->format[0] == 'f' || s->format[0] == 'e', t);
  }
  for (int64_t i = 0; i < a->n_children && i < s->n_children; i++)
    bench_touch_column(s->children[i], a->children[i], t);
}
