/* cmd_writer.h — what the commands that write Arrow IPC share: `xchg
 * convert` (src/cli/cmd_convert.c, which defines these) and `xchg gen`
 * (src/cli/cmd_gen.c). */
#ifndef XCHG_CLI_CMD_WRITER_H
#define XCHG_CLI_CMD_WRITER_H

#include <stdbool.h>

#include "xchg/codec.h"

/* "none", "lz4" (or "lz4-frame"), "zstd"; 0, or -1 for an unknown name. */
int xc_parse_codec(const char *name, xchg_block_codec *out);

/* Checks --level (given or not) against the codec chosen: -1 when it
 * fits, else the usage error's exit code, the error saying the codec's
 * range (xchg_block_codec_levels). */
int xc_check_level(const char *command, xchg_block_codec codec, bool given, long long level);

#endif
