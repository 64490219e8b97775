/* touch.h — what the benchmarks do with every value they decode: add it up,
 * so that nothing can be skipped, in the sums of src/gen's shapes
 * (integers and float bit patterns of non-null values added with
 * wrap-around, int32 sign-extended, string bytes as unsigned, booleans
 * counted when true, nulls counted). */
#ifndef XCHG_BENCH_TOUCH_H
#define XCHG_BENCH_TOUCH_H

#include <stdint.h>

#include "xchg/arrow_c.h"

typedef struct touched {
  uint64_t sum;
  int64_t nulls;
  int64_t bytes; /* decoded bytes */
} touched;

/* Bytes per value of a fixed-width format ("l", "i", "g", "tss:", ...); 0
 * for any other (booleans, strings, nested types). */
int bench_fixed_width(const char *format);

/* Adds every value of column a (of type s, children included) to t. */
void bench_touch_column(const struct ArrowSchema *s, const struct ArrowArray *a, touched *t);

#endif
