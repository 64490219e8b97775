/* size.h — byte counts for people, as inspect and the progress line show them. */
#ifndef XCHG_CLI_RENDER_SIZE_H
#define XCHG_CLI_RENDER_SIZE_H

#include <stdint.h>

#include "cli/render/strbuf.h"
#include "xchg/stream.h"

/* A byte count for people: "760 B", from 1 KiB up "1.50 MiB (1572864 B)". */
void xc_human_size(xs *out, int64_t bytes);

/* "codec lz4-java: 1.17 KiB (1201 B) compressed, 2.08 KiB (2128 B) decoded". */
void xc_print_codec_bytes(xs *out, const xchg_istream *s);

#endif
