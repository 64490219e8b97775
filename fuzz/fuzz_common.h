/* fuzz/fuzz_common.h — what every fuzz target shares.
 *
 * Each fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput.  It is linked two
 * ways: with libFuzzer (-fsanitize=fuzzer) for campaigns, and with
 * fuzz/regress_main.c, a plain main() that runs it over corpus directories,
 * as a ctest test.  A target returns 0 whatever the input; a bad input must
 * give an error, and fuzz_note_status checks that it comes with a message. */
#ifndef XCHG_FUZZ_COMMON_H
#define XCHG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/xchg.h"
#include "xchg/rows.h"
#include "xchg/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Errors returned so far, for the regression driver's summary line. */
extern int64_t fuzz_errors_returned;

/* Counts an error and aborts (a finding) when it has no message. */
void fuzz_note_status(xchg_status st, const xchg_error *err);

/* Aborts when live buffers are not back to `before`: an error path leaked. */
void fuzz_check_no_leak(int64_t before, const char *what);

/* The read options of the IPC targets: the defaults with the size caps
 * lowered (64 MiB a buffer, 128 MiB a batch or a dictionary), big enough
 * for any seed, so that a few bytes claiming gigabytes do not spend the
 * run in memset.  The default caps are tested in tests/test_limits.c. */
void fuzz_read_options(xchg_ipc_read_options *opts);

/* Decodes a whole stream-codec input from memory with the given options,
 * reading it in pieces of varying sizes, and closes it. */
void fuzz_stream_codec(const uint8_t *data, size_t size, xchg_stream_codec codec,
                       const xchg_istream_options *opts);

#endif
