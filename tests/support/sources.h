/* tests/support/sources.h — inputs that cannot seek, for tests of reading
 * in order: a callback source over memory that hands out odd-sized chunks,
 * and the same wrapped in a Spark/stream codec. */
#ifndef XCHG_TESTS_SOURCES_H
#define XCHG_TESTS_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "xchg/io.h"
#include "xchg/stream.h"

/* A source over data (not copied: it must outlive the source) whose size is
 * unknown and which cannot seek; each read returns at most one chunk of a
 * size drawn from {1, 3, 7, 13, 61, 509, 4093} by the seed, so that reads
 * end everywhere, not at message boundaries.  NULL if memory runs out. */
xchg_source *tu_unseekable_source(const uint8_t *data, size_t size, uint64_t seed);

/* data, already encoded with codec, decoded through xchg_istream_open over
 * tu_unseekable_source and handed out as a source
 * (xchg_source_from_istream).  NULL on any error. */
xchg_source *tu_codec_source(const uint8_t *data, size_t size, xchg_stream_codec codec);

/* xchg_source_from_memory(data, size, NULL, NULL) for the many tests that
 * need a plain source: a failure counts as a failed check and gives NULL
 * (which every function taking a source refuses). */
xchg_source *tu_memory_source(const void *data, size_t size);

#endif
