/* host_segment.h — the format of a host store segment, shared by its
 * reading and validation (host_segment.c) and its writing (host_store.c).
 * See host_store.h for the files and the protocol. */
#ifndef XCHG_HOST_SEGMENT_H
#define XCHG_HOST_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#define SEGMENT_MAGIC "XCHGHS01"
#define HEADER_FIXED 64
#define PART_ALIGN 64

/* The header at offset 0 of a segment (host byte order: segments never
 * leave the host).  The key, then n_parts (offset, length) pairs follow;
 * header_bytes covers them, rounded up to PART_ALIGN. */
typedef struct segment_header {
  char magic[8];
  uint64_t size; /* of the whole file */
  uint64_t header_bytes;
  uint64_t key_len;
  uint64_t n_parts;
  uint64_t header_hash; /* FNV-1a of the header bytes, this field as 0 */
  uint64_t reserved[2]; /* 0 (flags of earlier versions, ignored) */
} segment_header;

_Static_assert(sizeof(segment_header) == HEADER_FIXED, "segment header layout");

/* n rounded up to PART_ALIGN. */
static inline size_t segment_round_up(size_t n) {
  return (n + PART_ALIGN - 1) / PART_ALIGN * PART_ALIGN;
}

/* FNV-1a of the header's first n bytes, its header_hash field as 0. */
uint64_t segment_header_hash(const uint8_t *header, size_t n);
/* The header bytes a segment of this key and part count needs. */
size_t segment_header_size(size_t key_len, uint64_t n_parts);

#endif
