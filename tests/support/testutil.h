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

/* ---- checks: the one harness every test reports through ------------------
 *
 * Every check counts as passed or failed; a failure prints "FAIL ..." with
 * what went wrong, and main ends with `return tu_finish("NAME");`, which
 * prints "NAME: N passed, M failed" and turns the count into the exit
 * status.  The counters are atomic: checks may run on any thread. */

/* Checks so far. */
int tu_passed_count(void);
int tu_failed_count(void);

/* Counts one passed check. */
void tu_pass(void);

/* Counts one failure and prints "FAIL file:line: <message>". */
void tu_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Counts cond as a passed or a failed check; a failure prints the
 * printf-style message after the place of the check.  Evaluates cond once
 * and goes on. */
#define TU_CHECK(cond, ...)                                         \
  do {                                                              \
    if (cond) tu_pass();                                            \
    else tu_fail_at(__FILE__, __LINE__, __VA_ARGS__);               \
  } while (0)

/* TU_CHECK with the condition's own text as the message. */
#define TU_EXPECT(cond) TU_CHECK(cond, "check failed: %s", #cond)

/* Checks that call returned XCHG_OK; a failure prints the call and the
 * message in err (an xchg_error). */
#define TU_OK(call, err) TU_CHECK((call) == 0, "%s: %s", #call, (err).message)

/* Counts one failure and prints "FAIL <what>: <msg>": for tests whose
 * checks fill a message buffer and name the file or case. */
void tu_fail(const char *what, const char *msg);

/* One named case of a test that prints a line per case: rc 0 counts a pass
 * and prints "ok   <what>" (msg may then be NULL), anything else a failure
 * with msg. */
void tu_case(const char *what, int rc, const char *msg);

/* Closes a named group of checks begun when tu_failed_count() was
 * failed_before: prints "FAIL <name>: N failed checks" (those were counted
 * already), or "ok   <name>" and counts the group as one passed check (for
 * groups whose checks count only their failures, through tu_fail). */
void tu_section(const char *name, int failed_before);

/* Writes the printf-style message into msg (msgsz bytes) and returns -1
 * (it counts nothing), for check functions that say what went wrong
 * through a buffer:
 * `if (...) return tu_failf(msg, size, "batch %d: ...", b);`. */
int tu_failf(char *msg, size_t msgsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The end of main: prints "<name>: N passed, M failed" and returns the
 * exit status, 1 when a check failed or none ran at all (a test that
 * checked nothing proves nothing). */
int tu_finish(const char *name);

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

/* Data bytes of live xchg buffers (xchg_buf_metrics.live_bytes), what a
 * leak check compares: xchg_buf_allocated_bytes also counts the blocks the
 * recycler keeps after a release. */
int64_t tu_live_bytes(void);

/* The next value of the splitmix64 sequence from *state (Steele, Lea and
 * Flood's generator): fixed seeds give the same inputs on every run. */
uint64_t tu_splitmix64(uint64_t *state);

#endif
