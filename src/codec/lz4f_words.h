/* lz4f_words.h — LZ4F's error codes in words.
 *
 * LZ4F_getErrorName gives an identifier ("ERROR_frameType_unknown"), not a
 * sentence; error messages say what it means instead. */
#ifndef XCHG_CODEC_LZ4F_WORDS_H
#define XCHG_CODEC_LZ4F_WORDS_H

#include <stddef.h>

/* What the LZ4F error code (LZ4F_isError(code)) means, as a phrase
 * ("not an LZ4 frame: its magic number is unknown"); codes without one give
 * LZ4F's own name. */
const char *codec_lz4f_error_words(size_t code);

#endif
