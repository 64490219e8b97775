/* testutil.h — the small helpers most tests would otherwise each write
 * again: printf-style checks that count failures, pass/fail tallies and
 * the closing summary line, whole-file reads and writes, a growable byte
 * string, a walk over a directory tree (the Arrow gold files) for names
 * with a given suffix, and a seeded random number generator.
 *
 * Each test is one process, so the failure count is a plain global. */
#ifndef XCHG_TESTS_TESTUTIL_H
#define XCHG_TESTS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* ---- failures ------------------------------------------------------------ */

/* Checks that failed so far (TU_CHECK and tu_fail add to it). */
extern int tu_failures;

/* Counts one failure and prints "FAIL file:line: <message>" to stderr. */
void tu_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* If cond is false, counts a failure and prints the printf-style message
 * after the place of the check.  Evaluates cond once and goes on. */
#define TU_CHECK(cond, ...)                                         \
  do {                                                              \
    if (!(cond)) tu_fail_at(__FILE__, __LINE__, __VA_ARGS__);       \
  } while (0)

/* Counts one failure and prints "FAIL <what>: <msg>" to stderr: for tests
 * whose checks fill a message buffer and name the file or case. */
void tu_fail(const char *what, const char *msg);

/* TU_CHECK with the condition's own text as the message. */
#define TU_EXPECT(cond) TU_CHECK(cond, "check failed: %s", #cond)

/* Writes the printf-style message into msg (msgsz bytes) and returns -1
 * (it counts nothing), for check functions that say what went wrong
 * through a buffer:
 * `if (...) return tu_failf(msg, size, "batch %d: ...", b);`. */
int tu_failf(char *msg, size_t msgsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The end of main: prints "N failure(s)" to stderr when there were any,
 * else "<name>: all passed" to stdout; returns the exit status (0 or 1). */
int tu_finish(const char *name);

/* The end of main for tests that print one line per case: prints "FAILED"
 * when there were failures, else all_passed; returns the exit status. */
int tu_verdict(const char *all_passed);

/* ---- pass/fail counters for tests that report "N passed, M failed" ------- */

typedef struct tu_tally {
  int passed, failed;
} tu_tally;

/* Counts a check in the tally *t; a failed one prints "FAIL file:line:
 * <message>" to stdout. */
#define TU_TALLY_CHECK(t, cond, ...)                                 \
  do {                                                              \
    if (cond) {                                                     \
      (t)->passed++;                                                \
    } else {                                                        \
      (t)->failed++;                                                \
      tu_tally_fail_at(__FILE__, __LINE__, __VA_ARGS__);            \
    }                                                               \
  } while (0)
void tu_tally_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prints "N passed, M failed" to stdout; returns the exit status (0 or 1). */
int tu_tally_report(const tu_tally *t);

/* ---- bytes and files ----------------------------------------------------- */

/* A growable byte string; {0} is empty.  data is malloc'd (free it). */
typedef struct tu_bytes {
  uint8_t *data;
  size_t size;
} tu_bytes;

/* Appends n bytes of p to b (always keeping one spare byte after them, so
 * that an empty string still has a buffer).  Aborts if memory runs out: a
 * test cannot go on without its input. */
void tu_bytes_append(tu_bytes *b, const void *p, size_t n);

/* The whole file at path in a malloc'd buffer of exactly *size bytes (one
 * for an empty file), so that AddressSanitizer reports a reader that goes
 * even one byte past the end.  NULL (and *size 0) if it cannot be opened
 * or read to the end. */
uint8_t *tu_read_file(const char *path, size_t *size);

/* The same, as a tu_bytes; {NULL, 0} when the file cannot be read. */
tu_bytes tu_read_bytes(const char *path);

/* Writes n bytes of p to path, replacing the file: 0, or -1 on any error. */
int tu_write_file(const char *path, const void *p, size_t n);

/* ---- directories --------------------------------------------------------- */

/* 1 if s ends with suffix. */
int tu_has_suffix(const char *s, const char *suffix);

/* Calls fn(path, ctx) for every file under dir, at any depth, whose name
 * ends with suffix (NULL: every file); names starting with '.' are
 * skipped.  Entries come in directory order, not sorted.  A missing dir
 * calls nothing. */
typedef void (*tu_file_fn)(const char *path, void *ctx);
void tu_walk(const char *dir, const char *suffix, tu_file_fn fn, void *ctx);

/* ---- commands ------------------------------------------------------------ */

/* Runs the printf-style command line through the shell: its exit status, or
 * -1 when it could not run or did not exit (a signal). */
int tu_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- random numbers ------------------------------------------------------ */

/* The next value of the splitmix64 sequence from *state (Steele, Lea and
 * Flood's generator): fixed seeds give the same inputs on every run. */
uint64_t tu_splitmix64(uint64_t *state);

#endif
