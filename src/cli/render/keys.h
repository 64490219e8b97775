/* keys.h — distinct JSON keys for fields that share a name.
 *
 * Arrow allows a struct's fields, and a batch's columns, to share a name
 * (the gold file generated_duplicate_fieldnames has two columns "ints" and
 * a struct of two fields ""); a JSON object with a key twice is collapsed
 * by most parsers, silently losing a value.  So JSON rows name such fields
 * apart: a field keeps its name when no field before it has it; a later
 * one is named NAME_K with K the smallest number from 2 up that leaves the
 * key distinct from every field's own name and every key given before
 * ("ints", "ints_2"; "", "_2"). */
#ifndef XCHG_CLI_RENDER_KEYS_H
#define XCHG_CLI_RENDER_KEYS_H

#include <stdint.h>

#include "xchg/error.h"

/* The keys of n fields named names[0..n) (NULL reads as ""): *out is NULL
 * when the names are distinct already, else n strings freed by
 * xc_keys_free. */
xchg_status xc_unique_keys(const char *const *names, int64_t n, char ***out, xchg_error *err);

void xc_keys_free(char **keys, int64_t n);

#endif
