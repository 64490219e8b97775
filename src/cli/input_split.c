/* input_split.c — IPC streams without their end-of-stream markers one
 * after another in a codec's decoded bytes, read with --allow-missing-eos:
 * each ends where the next one's schema message begins, as plain IPC in
 * memory ends there (up_to_next_schema in input.c).  A codec's bytes come
 * once, in pieces, and the IPC reader takes one stream and would read the
 * next one's schema message as its own: the source it reads walks the
 * messages' framing as it hands them out, and ends where a schema message
 * begins after the first message, keeping that message's prefix and
 * metadata for the next stream's source. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/source_impl.h"
#include "ipc/format.h"
#include "ipc/framing.h"
#include "ipc/message.h"

struct xc_split {
  xchg_source *inner;         /* borrowed over the input's decoder (its reads say where) */
  int64_t max_metadata_bytes; /* the reader's cap: the walk holds no more than it reads */
  uint8_t *held;              /* a message's prefix and metadata, read to tell what it is */
  size_t held_size, held_at, held_cap; /* handed out up to held_at */
  int64_t body_left;                   /* of the current message, after what is held */
  int64_t messages;                    /* whose framing the current IPC stream has seen */
  bool marked;  /* its messages begin with the continuation marker (not pre-0.15 IPC) */
  bool through; /* no framing to walk (an IPC file, bad or cut framing, after the marker):
                   the reader reads on and says what it finds */
  bool ended;   /* the next IPC stream's schema message, or bytes that are no message (not
                   IPC, an IPC file), are held: this one ends */
  bool other;   /* ended at bytes that are no message: the next source reads them through */
};

xchg_status xc_split_new(xchg_istream *stream, xc_split **out, xchg_error *err) {
  *out = calloc(1, sizeof **out);
  if (*out == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_status st = xchg_source_from_istream_borrowed(stream, &(*out)->inner, err);
  if (st != XCHG_OK) {
    free(*out);
    *out = NULL;
  }
  return st;
}

void xc_split_free(xc_split *s) {
  if (s == NULL) return;
  xchg_source_free(s->inner);
  free(s->held);
  free(s);
}

size_t xc_split_held(const xc_split *s) { return s != NULL ? s->held_size - s->held_at : 0; }

const uint8_t *xc_split_held_bytes(const xc_split *s) { return s->held + s->held_at; }

/* Reads n more bytes of the input after what is held; *all is false when
 * fewer are there (the reader then finds the cut, or the end, itself). */
static xchg_status hold_more(xc_split *s, size_t n, bool *all, xchg_error *err) {
  *all = false;
  if (s->held_size + n > s->held_cap) {
    size_t cap = s->held_size + n < 64 ? 64 : s->held_size + n;
    uint8_t *grown = realloc(s->held, cap);
    if (grown == NULL) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
    s->held = grown;
    s->held_cap = cap;
  }
  size_t got = 0;
  xchg_status st = xchg_source_read(s->inner, s->held + s->held_size, n, &got, err);
  s->held_size += got;
  *all = st == XCHG_OK && got == n;
  return st;
}

/* The next message's prefix and metadata, held: the stream ends there
 * when it is a schema message after the first message (s->ended), else
 * its body is passed after them.  After a message of a stream whose
 * messages have the marker, bytes without it are no message: the stream
 * ends there too, as up_to_next_schema ends it in memory, for the input
 * to say what follows (advance).  Other framing that is not a message's
 * (an IPC file's magic, the marker, a bad length or flatbuffer, the
 * input's end) is passed through, for the reader to say what it is. */
static xchg_status hold_message(xc_split *s, xchg_error *err) {
  s->held_size = s->held_at = 0;
  bool all;
  xchg_status st = hold_more(s, 4, &all, err);
  if (st == XCHG_OK && s->messages > 0 && s->marked && s->held_size > 0 &&
      !xc_begins_marker(s->held, s->held_size)) {
    s->ended = s->other = true;
    return XCHG_OK;
  }
  if (st != XCHG_OK || !all || ipc_is_file_start(s->held, s->held_size)) {
    s->through = true; /* a file is read in order to its footer */
    return st;
  }
  size_t prefix = ipc_prefix_size(s->held);
  if (prefix > 4 && ((st = hold_more(s, prefix - 4, &all, err)) != XCHG_OK || !all)) {
    s->through = true;
    return st;
  }
  int32_t length;
  if (ipc_prefix_decode(s->held, 0, 0, s->max_metadata_bytes, &length, NULL) != XCHG_OK ||
      length == 0 || (st = hold_more(s, (size_t)length, &all, err)) != XCHG_OK || !all) {
    s->through = true;
    return st;
  }
  fb_table header;
  int type, version;
  int64_t body;
  if (ipc_message_parse(s->held + prefix, (size_t)length, 0, 0, &header, &type, &version, &body,
                        NULL) != XCHG_OK ||
      body < 0) {
    s->through = true;
    return XCHG_OK;
  }
  s->ended = type == HEADER_SCHEMA && s->messages > 0;
  if (s->messages == 0 || s->ended) s->marked = prefix > 4; /* the first of its stream */
  s->messages++;
  s->body_left = body;
  return XCHG_OK;
}

static xchg_status split_read(xchg_source *src, void *dst, size_t n, size_t *got, xchg_error *err) {
  xc_split *s = src->impl;
  *got = 0;
  if (s->held_at == s->held_size && s->body_left == 0 && !s->through && !s->ended) {
    xchg_status st = hold_message(s, err);
    if (st != XCHG_OK) return st;
  }
  if (s->ended) return XCHG_OK; /* the end of this IPC stream */
  if (s->held_at < s->held_size) {
    size_t k = s->held_size - s->held_at < n ? s->held_size - s->held_at : n;
    memcpy(dst, s->held + s->held_at, k);
    s->held_at += k;
    *got = k;
    return XCHG_OK;
  }
  if (!s->through && (uint64_t)s->body_left < n) n = (size_t)s->body_left;
  xchg_status st = xchg_source_read(s->inner, dst, n, got, err);
  if (!s->through) s->body_left -= (int64_t)*got;
  return st;
}

/* A stream that ends at the next one's schema message ends inside the
 * codec's frame, whose end is not to be looked for yet. */
static xchg_status split_finish(xchg_source *src, xchg_error *err) {
  xc_split *s = src->impl;
  return s->ended || s->held_at < s->held_size ? XCHG_OK : xchg_source_finish(s->inner, err);
}

static const xchg_source_vtable split_source = {split_read, NULL, NULL, split_finish};

xchg_status xc_split_source(xc_split *s, int64_t max_metadata_bytes, xchg_source **out,
                            xchg_error *err) {
  /* A held schema message begins this stream: its body follows. */
  s->messages = s->ended && !s->other ? 1 : 0;
  s->through = s->other; /* an IPC file's magic, say: its reader reads it in order */
  s->ended = s->other = false;
  s->max_metadata_bytes = max_metadata_bytes;
  return xchg_source_create(&split_source, s, -1, NULL, "xc_split_source", out, err);
}
