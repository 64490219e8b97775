/* tests/support/ipc_bodies.c — see ipc_bodies.h. */
#include "support/ipc_bodies.h"

typedef struct body_list {
  tu_body *items;
  int64_t n, max;
} body_list;

static void record_body(void *ctx, const xchg_message_info *info) {
  body_list *l = ctx;
  if (l->n == l->max) return;
  /* The framing: continuation marker, metadata length, then the metadata. */
  l->items[l->n++] = (tu_body){info->kind, info->offset + 8 + info->metadata_bytes,
                               info->body_bytes, info->offset + 8, info->metadata_bytes};
}

int64_t tu_map_bodies(const uint8_t *data, size_t size, tu_body *out, int64_t max) {
  body_list l = {out, 0, max};
  xchg_ipc_read_options opts;
  xchg_ipc_read_options_init(&opts);
  opts.on_message = record_body;
  opts.on_message_ctx = &l;
  xchg_ipc_reader *r;
  xchg_error err;
  if (xchg_ipc_reader_open_memory(data, size, NULL, NULL, &opts, &r, &err) != XCHG_OK) return l.n;
  struct ArrowArray a;
  while (xchg_ipc_reader_next(r, &a, &err) == XCHG_OK && a.release) a.release(&a);
  xchg_ipc_reader_free(r);
  return l.n;
}
