/* c_data.h — what the release callbacks of the ArrowSchema and ArrowArray
 * structs the ipc layer exports do alike (private to src/ipc). */
#ifndef XCHG_IPC_C_DATA_H
#define XCHG_IPC_C_DATA_H

#include <stdint.h>

/* Releases the children and the dictionary of s (a struct ArrowSchema * or
 * a struct ArrowArray * whose release callback is running), all but those
 * the consumer has moved out and so marked released.  A macro because the
 * two structs share these fields but not a type. */
#define IPC_RELEASE_CHILDREN_AND_DICTIONARY(s)                                                   \
  do {                                                                                           \
    for (int64_t child_ = 0; child_ < (s)->n_children; child_++)                                 \
      if ((s)->children[child_]->release) (s)->children[child_]->release((s)->children[child_]); \
    if ((s)->dictionary && (s)->dictionary->release) (s)->dictionary->release((s)->dictionary);  \
  } while (0)

#endif
