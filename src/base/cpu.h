/* cpu.h — code compiled for CPU features beyond the build's baseline.
 *
 * x86-64's baseline has no popcount, no CRC-32C instruction and no 256-bit
 * vectors, yet the loops that run over every value (validation's scans,
 * the coalescer's offset rebase, CRC-32C) are several times faster with
 * them.  Such a loop is compiled once more with CPU_TARGET (GCC and Clang
 * target attributes) and the copy to run is picked from the CPU's features
 * at run time with CPU_HAS, never with target_clones, whose ifunc resolver
 * runs before ThreadSanitizer is set up.  CPU_X86 is defined where such
 * copies exist; elsewhere CPU_HAS is 0 and only the portable code runs. */
#ifndef XCHG_BASE_CPU_H
#define XCHG_BASE_CPU_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CPU_X86 1
#define CPU_TARGET(features) __attribute__((target(features)))
#define CPU_HAS(feature) __builtin_cpu_supports(feature)
#else
#define CPU_TARGET(features)
#define CPU_HAS(feature) 0
#endif

/* The bytes of a cache line, as cpu_prefetch steps through memory. */
#define CPU_LINE 64

/* Asks memory for the lines of [p, p + n), to be read soon: started now,
 * their misses overlap one another and the work done meanwhile, rather
 * than each being waited for when its load comes.  The empty asm is an
 * effect the compiler must keep: a function that only prefetches it deems
 * free of effects, and drops its calls (gcc 12, -O2). */
static inline void cpu_prefetch(const void *p, size_t n) {
  uintptr_t line = (uintptr_t)p & ~(uintptr_t)(CPU_LINE - 1), end = (uintptr_t)p + n;
  for (; line < end; line += CPU_LINE) __builtin_prefetch((const void *)line, 0, 3);
  __asm__ volatile("");
}

#endif
