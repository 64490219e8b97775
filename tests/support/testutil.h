/* testutil.h — the small helpers most tests would otherwise each write
 * again: the checks and the named cases every test reports through, where
 * the shared test data is, whole-file reads and writes, a growable byte
 * string, a walk over a directory tree (the Arrow gold files) for names
 * with a given suffix, and a seeded random number generator.
 *
 * One test idiom.  A test reports in two forms only:
 *
 *   TU_CHECK(cond[, "printf format", ...])   any condition
 *   TU_OK(call, err)                         a call that returns xchg_status
 *
 * Two, because a status call is most of what the tests check and its
 * failure should always say the same three things (the call, its status
 * name, its error message) without each test spelling them out; anything
 * else is a condition with a message written for it.  Both count one
 * check, print "FAIL case: file:line: message" when it fails, and are an
 * expression with the outcome (1 passed, 0 failed), so that a check
 * whose failure makes the next ones meaningless can stop them:
 * `if (!TU_OK(xchg_x_open(..., &x, &err), err)) return;`.  A helper that
 * finds a problem without counting it (support code, a comparison)
 * writes a message into a buffer and returns non-zero (tu_errorf), and
 * its caller checks that: `TU_CHECK(compare(a, b, msg, sizeof msg) == 0,
 * "%s: %s", what, msg)`.
 *
 * A test is a table of named cases run by tu_main, which prints one
 * "ok   NAME" or "FAIL NAME" line a case and the summary
 * "SUITE: N passed, M failed" (what ctest -V shows and the exit status
 * follows):
 *
 *   static const tu_case cases[] = {{"lazy_columns", test_lazy_columns}, ...};
 *   int main(int argc, char **argv) { return TU_MAIN(argc, argv, "cache", cases); }
 *
 * `test_cache lazy_columns` runs one case, `test_cache --list` lists them,
 * `test_cache --shard 1/2` every second case from the second (CMakeLists.txt
 * registers a long test as shards that ctest runs side by side).
 *
 * Each test is one process, so the counts are plain globals (atomic:
 * checks may run on any thread). */
#ifndef XCHG_TESTS_TESTUTIL_H
#define XCHG_TESTS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/error.h"

/* ---- checks ---------------------------------------------------------------- */

/* Counts cond as a passed or a failed check and evaluates to 1 or 0.  A
 * failure prints the printf-style message (a string literal first), or the
 * text of cond when there is none.  The message's arguments are evaluated
 * only on a failure. */
#define TU_CHECK(cond, ...) \
  ((cond) ? tu_check_passed() : tu_check_failed(__FILE__, __LINE__, #cond, " " __VA_ARGS__))

/* Checks that call returned XCHG_OK and evaluates to 1 or 0; a failure
 * prints the call, the status's name and the message in err (an
 * xchg_error, filled by the call). */
#define TU_OK(call, err) tu_check_status((call), __FILE__, __LINE__, #call, (err).message)

/* The functions behind the two macros: not called directly.
 * tu_check_failed's fmt is " " followed by the check's message. */
int tu_check_passed(void);
int tu_check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tu_check_status(xchg_status st, const char *file, int line, const char *call,
                    const char *message);

/* Writes the printf-style message into msg (size bytes) and returns -1,
 * counting nothing: for a helper that says what went wrong to a caller who
 * checks it, `if (...) return tu_errorf(msg, size, "batch %d: ...", b);`. */
int tu_errorf(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Failed checks so far (in every case): for a test that looks at its
 * own outcome (a self-check that needs the real checks to have passed). */
int tu_failed_count(void);

/* ---- named cases ------------------------------------------------------------ */

/* One case of a test: a name (what `test_x NAME` selects; letters, digits
 * and '_') and the function that runs its checks. */
typedef void (*tu_case_fn)(void);
typedef struct tu_case {
  const char *name;
  tu_case_fn run;
} tu_case;

/* The whole of a test's main after its setup: runs the cases argv selects
 * and returns the exit status.
 *   no argument    every case, in table order
 *   NAME...        the cases so named (shell patterns: 'cache_*'); a name
 *                  or pattern that selects no case is a failure
 *   --list         prints the names, runs nothing
 * Each case prints "ok   NAME (N checks)" or "FAIL NAME: ..."; a case that
 * checks nothing, or that leaves xchg buffers alive that were not alive
 * when it began, fails.  Then prints "SUITE: N passed, M failed" and
 * returns 1 if a check failed or none ran (a test that checked nothing
 * proves nothing), 2 on a usage error, else 0. */
int tu_main(int argc, char **argv, const char *suite, const tu_case *cases, size_t n_cases);

/* tu_main over a table declared as an array. */
#define TU_MAIN(argc, argv, suite, cases) \
  tu_main(argc, argv, suite, cases, sizeof(cases) / sizeof((cases)[0]))

/* ---- test data ---------------------------------------------------------------- */

/* The shared test data folder (arrow-gold/, arrow-fuzz/): $XCHG_TESTDATA,
 * else the one the build was configured with (-DXCHG_SHARED_DIR, its
 * testdata/).  When it is not there, the test fails at once: prints what
 * it looked for and how to point at it, the summary, and exits 1 (missing
 * data never skips a check). */
const char *tu_testdata_dir(void);

/* Writes tu_testdata_dir() + "/" + the printf-style relative path into out
 * (size bytes) and returns out: tu_testdata_path(p, sizeof p,
 * "arrow-gold/1.0.0-littleendian/%s.stream", name).  A path that does not
 * fit fails the test as above. */
const char *tu_testdata_path(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The xchg executable the CLI tests run: $XCHG_CLI, else the one this
 * build made.  When it is not there, the test fails at once as above. */
const char *tu_cli_path(void);

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

/* ---- buffers and random numbers ---------------------------------------- */

/* Data bytes of live xchg buffers (xchg_buf_metrics.live_bytes), what a
 * leak check compares: xchg_buf_allocated_bytes also counts the blocks the
 * recycler keeps after a release. */
int64_t tu_live_bytes(void);

/* The next value of the splitmix64 sequence from *state (Steele, Lea and
 * Flood's generator): fixed seeds give the same inputs on every run. */
uint64_t tu_splitmix64(uint64_t *state);

#endif
