/* lz4f_words.c — see lz4f_words.h.  Keyed by LZ4F's names rather than its
 * enum, whose members differ between liblz4 versions. */
#include "codec/lz4f_words.h"

#include <lz4frame.h>
#include <string.h>

static const struct {
  const char *name, *words;
} lz4f_words[] = {
    {"ERROR_maxBlockSize_invalid", "the frame header's block size is invalid"},
    {"ERROR_blockMode_invalid", "the frame header's block mode is invalid"},
    {"ERROR_contentChecksumFlag_invalid", "the frame header's content checksum flag is invalid"},
    {"ERROR_compressionLevel_invalid", "the compression level is out of range"},
    {"ERROR_headerVersion_wrong", "the frame header's version is not 1"},
    {"ERROR_blockChecksum_invalid", "a block's checksum does not match its bytes (damaged data)"},
    {"ERROR_reservedFlag_set", "a reserved bit of the frame header is set (damaged header)"},
    {"ERROR_allocation_failed", "out of memory"},
    {"ERROR_srcSize_tooLarge", "the input is too large"},
    {"ERROR_dstMaxSize_tooSmall", "the output does not fit the room given"},
    {"ERROR_frameHeader_incomplete", "the frame header is cut short"},
    {"ERROR_frameType_unknown", "not an LZ4 frame: its magic number is unknown"},
    {"ERROR_frameSize_wrong", "the frame holds another number of bytes than its header declares"},
    {"ERROR_decompressionFailed", "a compressed block is damaged: it does not decompress"},
    {"ERROR_headerChecksum_invalid",
     "the frame header's checksum does not match it (damaged header)"},
    {"ERROR_contentChecksum_invalid",
     "the content checksum does not match the decompressed bytes (damaged data)"},
};

const char *codec_lz4f_error_words(size_t code) {
  const char *name = LZ4F_getErrorName(code);
  for (size_t i = 0; i < sizeof lz4f_words / sizeof lz4f_words[0]; i++)
    if (strcmp(name, lz4f_words[i].name) == 0) return lz4f_words[i].words;
  return name;
}
