/* load.h — the FILE a benchmark reads, loaded into memory whole before it
 * is timed. */
#ifndef XCHG_BENCH_LOAD_H
#define XCHG_BENCH_LOAD_H

#include <stddef.h>
#include <stdint.h>

/* path's bytes in a malloc'ed buffer (free it), *size set; NULL when path
 * is not a regular file that can be read whole, with why (a message of
 * why_size bytes at most) saying what it is or what failed. */
uint8_t *bench_load_file(const char *path, size_t *size, char *why, size_t why_size);

#endif
