/* array_stream.c — see array_stream.h. */
#include "ipc/array_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct adaptor {
  const ipc_stream_ops *ops;
  void *producer;
  xchg_error last_error;
} adaptor;

/* The C Stream Interface speaks errno. */
static int errno_of(xchg_status st) {
  switch (st) {
    case XCHG_OK: return 0;
    case XCHG_ENOMEM: return ENOMEM;
    case XCHG_EINVAL: return EINVAL;
    case XCHG_ENOTSUP: return ENOTSUP;
    case XCHG_ECANCELLED: return ECANCELED;
    default: return EIO;
  }
}

/* A call on a released stream (its adaptor gone: private_data NULL) or
 * with a NULL out is the consumer's mistake: EINVAL, which
 * get_last_error explains, never a crash or a use after free. */
static const char released_message[] = "the ArrowArrayStream was released";

static int misused(adaptor *a, const char *call, const void *out) {
  if (!a) return EINVAL;
  if (out) return 0;
  xchg_errorf(&a->last_error, XCHG_EINVAL, "%s: out is NULL", call);
  return EINVAL;
}

static int get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  adaptor *a = s->private_data;
  int rc = misused(a, "get_schema", out);
  return rc ? rc : errno_of(a->ops->get_schema(a->producer, out, &a->last_error));
}

static int get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  adaptor *a = s->private_data;
  int rc = misused(a, "get_next", out);
  return rc ? rc : errno_of(a->ops->get_next(a->producer, out, &a->last_error));
}

static const char *get_last_error(struct ArrowArrayStream *s) {
  adaptor *a = s->private_data;
  if (!a) return released_message;
  return a->last_error.message[0] ? a->last_error.message : NULL;
}

static void release(struct ArrowArrayStream *s) {
  adaptor *a = s->private_data;
  if (!a) return; /* released already */
  a->ops->release(a->producer);
  free(a);
  s->private_data = NULL;
  s->release = NULL;
}

xchg_status ipc_stream_export(const ipc_stream_ops *ops, void *producer,
                              struct ArrowArrayStream *out, xchg_error *err) {
  memset(out, 0, sizeof *out);
  adaptor *a = calloc(1, sizeof *a);
  if (a == NULL) {
    ops->release(producer);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory making an ArrowArrayStream");
  }
  a->ops = ops;
  a->producer = producer;
  out->get_schema = get_schema;
  out->get_next = get_next;
  out->get_last_error = get_last_error;
  out->release = release;
  out->private_data = a;
  return XCHG_OK;
}
