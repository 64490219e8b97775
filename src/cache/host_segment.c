/* host_segment.c — a host store segment in memory: the checks of its
 * header (size, magic, checksum, key, every part's bounds) and its parts
 * as a broadcast over the bytes.  The entry point of
 * fuzz/fuzz_host_segment.c; see host_segment.h for the format. */
#include "cache/host_segment.h"

#include <stdlib.h>
#include <string.h>

#include "cache/host_store.h"
#include "codec/helpers.h"

struct host_segment {
  xchg_buf *map; /* the whole file; its release unmaps and drops the lease */
  int64_t *offsets, *lengths;
  xchg_broadcast_part *parts;
  xchg_broadcast broadcast;
};

uint64_t segment_header_hash(const uint8_t *header, size_t n) {
  segment_header h;
  memcpy(&h, header, sizeof h);
  h.header_hash = 0;
  uint64_t v = fnv1a(&h, sizeof h, FNV1A_BASIS);
  return fnv1a(header + sizeof h, n - sizeof h, v);
}

size_t segment_header_size(size_t key_len, uint64_t n_parts) {
  return segment_round_up(sizeof(segment_header) + segment_round_up(key_len) +
                          (size_t)n_parts * 16);
}

/* Whether the sizes of header h fit a file of `size` bytes. */
static int header_in_bounds(const segment_header *h, size_t size) {
  return h->size == size && h->key_len <= size && h->n_parts <= size / 16 &&
         h->header_bytes == segment_header_size((size_t)h->key_len, h->n_parts) &&
         h->header_bytes <= size;
}

int host_segment_seal(uint8_t *bytes, size_t size) {
  segment_header h;
  if (size < sizeof h) return -1;
  memcpy(&h, bytes, sizeof h);
  if (!header_in_bounds(&h, size)) return -1;
  h.header_hash = segment_header_hash(bytes, (size_t)h.header_bytes);
  memcpy(bytes, &h, sizeof h);
  return 0;
}

/* Checks the header of the segment `name` in map[0, size) and fills seg's
 * part table. */
static xchg_status parse_header(const uint8_t *map, size_t size, const char *key, const char *name,
                                host_segment *seg, xchg_error *err) {
  segment_header h;
  if (size < sizeof h)
    return xchg_errorf(err, XCHG_EFORMAT, "host segment %s: %zu bytes, too short for a header",
                       name, size);
  memcpy(&h, map, sizeof h);
  size_t key_len = strlen(key);
  if (memcmp(h.magic, SEGMENT_MAGIC, 8) != 0)
    return xchg_errorf(err, XCHG_EFORMAT, "host segment %s: bad magic", name);
  if (!header_in_bounds(&h, size))
    return xchg_errorf(err, XCHG_EFORMAT,
                       "host segment %s: header sizes out of bounds "
                       "(file %zu bytes, header says %llu)",
                       name, size, (unsigned long long)h.size);
  if (segment_header_hash(map, (size_t)h.header_bytes) != h.header_hash)
    return xchg_errorf(err, XCHG_EFORMAT, "host segment %s: header checksum mismatch", name);
  const uint8_t *stored_key = map + sizeof h;
  if (h.key_len != key_len || memcmp(stored_key, key, key_len) != 0)
    return xchg_errorf(err, XCHG_EINVAL,
                       "host segment %s: holds another key (a hash "
                       "collision)",
                       name);
  int64_t n = (int64_t)h.n_parts;
  seg->offsets = calloc((size_t)(n ? n : 1), sizeof *seg->offsets);
  seg->lengths = calloc((size_t)(n ? n : 1), sizeof *seg->lengths);
  seg->parts = calloc((size_t)(n ? n : 1), sizeof *seg->parts);
  if (!seg->offsets || !seg->lengths || !seg->parts)
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  const uint8_t *table = stored_key + segment_round_up(key_len);
  for (int64_t i = 0; i < n; i++) {
    uint64_t off, len;
    memcpy(&off, table + 16 * i, 8);
    memcpy(&len, table + 16 * i + 8, 8);
    if (off % PART_ALIGN != 0 || off < h.header_bytes || off > size || len > size - off)
      return xchg_errorf(err, XCHG_EFORMAT,
                         "host segment %s: part %lld at [%llu, +%llu) out "
                         "of the file's %zu bytes",
                         name, (long long)i, (unsigned long long)off, (unsigned long long)len,
                         size);
    seg->offsets[i] = (int64_t)off;
    seg->lengths[i] = (int64_t)len;
  }
  seg->broadcast.n_parts = n;
  return XCHG_OK;
}

static xchg_status open_part_of_segment(void *ctx, int64_t part, xchg_source **out,
                                        xchg_error *err) {
  host_segment *seg = ctx;
  xchg_buf *slice =
      xchg_buf_slice(seg->map, (size_t)seg->offsets[part], (size_t)seg->lengths[part]);
  xchg_status st = slice ? xchg_source_from_buf(slice, out, err)
                         : xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  xchg_buf_unref(slice);
  return st;
}

void host_segment_free(host_segment *seg) {
  if (!seg) return;
  xchg_buf_unref(seg->map);
  free(seg->offsets);
  free(seg->lengths);
  free(seg->parts);
  free(seg);
}

xchg_status host_segment_open(xchg_buf *bytes, const char *key, const char *name,
                              host_segment **out, xchg_error *err) {
  *out = NULL;
  host_segment *seg = calloc(1, sizeof *seg);
  if (!seg) return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  seg->map = xchg_buf_ref(bytes);
  xchg_status rc = parse_header(xchg_buf_data(bytes), xchg_buf_size(bytes), key, name, seg, err);
  if (rc != XCHG_OK) {
    host_segment_free(seg);
    return rc;
  }
  seg->broadcast.parts = seg->parts;
  seg->broadcast.open_part = open_part_of_segment;
  seg->broadcast.open_ctx = seg;
  *out = seg;
  return XCHG_OK;
}

const xchg_broadcast *host_segment_broadcast(const host_segment *seg) { return &seg->broadcast; }
int64_t host_segment_size(const host_segment *seg) { return (int64_t)xchg_buf_size(seg->map); }
