/** \file
 * xchg/arrow_c.h — the Arrow C Data Interface and C Stream Interface.
 *
 * These are the ABI-stable structs defined by Apache Arrow
 * (docs/source/format/CDataInterface.rst); any Arrow implementation can take
 * them without a copy.  The guard macros are the ones Arrow specifies, so
 * this header can be included next to arrow/c/abi.h or nanoarrow.h. */
#ifndef XCHG_ARROW_C_H
#define XCHG_ARROW_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
/** Arrow's guard: the C Data Interface structs are defined. */
#define ARROW_C_DATA_INTERFACE

/** Arrow's flag: the dictionary's indices are ordered. */
#define ARROW_FLAG_DICTIONARY_ORDERED 1
/** Arrow's flag: the field is nullable. */
#define ARROW_FLAG_NULLABLE 2
/** Arrow's flag: a map's keys are sorted. */
#define ARROW_FLAG_MAP_KEYS_SORTED 4

/** A type: a field of a schema, or a whole schema as a struct ("+s"). */
struct ArrowSchema {
  const char *format;             /**< the type, in Arrow's format string */
  const char *name;               /**< the field's name, or NULL */
  const char *metadata;           /**< binary key-value metadata, or NULL */
  int64_t flags;                  /**< ARROW_FLAG_* */
  int64_t n_children;             /**< entries of children */
  struct ArrowSchema **children;  /**< the child types */
  struct ArrowSchema *dictionary; /**< the value type of a dictionary-encoded field, or NULL */
  void (*release)(struct ArrowSchema *); /**< frees it; NULL once released */
  void *private_data;                    /**< the producer's */
};

/** The data of an array, described by an ArrowSchema. */
struct ArrowArray {
  int64_t length;                /**< logical length */
  int64_t null_count;            /**< null values, or -1 when not computed */
  int64_t offset;                /**< logical offset into the buffers */
  int64_t n_buffers;             /**< entries of buffers */
  int64_t n_children;            /**< entries of children */
  const void **buffers;          /**< the buffers, as the type lays them out */
  struct ArrowArray **children;  /**< the child arrays */
  struct ArrowArray *dictionary; /**< the dictionary of a dictionary-encoded array, or NULL */
  void (*release)(struct ArrowArray *); /**< frees it; NULL once released */
  void *private_data;                   /**< the producer's */
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
/** Arrow's guard: the C Stream Interface struct is defined. */
#define ARROW_C_STREAM_INTERFACE

/** A stream of arrays of one type. */
struct ArrowArrayStream {
  /** The stream's type into *out; 0 or an errno value. */
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  /** The next array into *out (released at the end); 0 or an errno value. */
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  /** The message of the last error, valid until the next call, or NULL. */
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *); /**< frees it; NULL once released */
  void *private_data;                         /**< the producer's */
};

#endif /* ARROW_C_STREAM_INTERFACE */

#ifdef __cplusplus
}
#endif
#endif
