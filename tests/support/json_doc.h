/* tests/support/json_doc.h — two Arrow integration JSON documents compared
 * with each other: the gold JSON Arrow wrote for a file and the JSON
 * `xchg cat --format arrow-json` writes for the same file (or a gold
 * document cut or changed the way a test expects the output to be).
 *
 * The comparison is semantic, as Arrow's own integration tests compare:
 * same schema (names, nullability, types with every parameter, dictionary
 * encoding, metadata in any order; the names of a map's entries, keys and
 * values are free), same batches, same dictionaries, every value — DATA and
 * VIEWS only where VALIDITY is 1, floats at their own precision, integers
 * whether written as numbers or as strings, booleans as true/false or 1/0.
 * Anything in ours that the gold document lacks is a difference too.
 *
 * (tests/support/arrow_json.h compares the same gold JSON with the C Data
 * Interface structs a reader hands out instead.) */
#ifndef XCHG_TESTS_JSON_DOC_H
#define XCHG_TESTS_JSON_DOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* True when ours describes the same data as gold; false with the first
 * difference, and where it is, in msg (msgsz bytes).  Dictionary ids must
 * be the gold document's (fields that share a dictionary share its id),
 * unless ipc_path names the one gold input whose IPC writer numbered its
 * dictionaries its own way: there each of ours must stand for one gold id,
 * consistently.  ipc_path is the input ours was read from, or NULL. */
bool tu_json_doc_equal(json_t *gold, json_t *ours, const char *ipc_path, char *msg, size_t msgsz);

#endif
