/* reader_state.h — the IPC reader's state and the steps its two halves
 * share (private to src/ipc/reader*.c): reader.c reads messages, the stream
 * format and the API; reader_file.c the file format's footer, its end when
 * read in order, and files held whole. */
#ifndef XCHG_IPC_READER_STATE_H
#define XCHG_IPC_READER_STATE_H

#include <stdint.h>

#include "ipc/decode.h"
#include "ipc/dictionary.h"
#include "ipc/framing.h"
#include "ipc/readahead.h"
#include "ipc/schema.h"
#include "xchg/ipc.h"

/* A Block of the file footer: where one message starts. */
typedef struct file_block {
  int64_t offset;
  int32_t metadata_length;
  int64_t body_length;
} file_block;

struct xchg_ipc_reader {
  xchg_source *src;
  xchg_buf *memory; /* the whole input, when it is in memory */
  xchg_ipc_read_options opts;
  xchg_ipc_format format;
  ipc_schema schema;
  int selective; /* some column is not selected */
  ipc_dictionaries dicts;
  int64_t message_index;
  uint8_t peek[8]; /* bytes read to detect the format, not yet consumed */
  size_t peek_len, peek_pos;
  int finished;
  ipc_message held; /* a message read but not yet processed */
  int has_held;
  char *held_metadata;  /* custom metadata shown by peek */
  ipc_readahead ahead;  /* batches planned, being decoded, or decoded */
  xchg_status deferred; /* an error to report once the batches before it are handed out */
  xchg_error deferred_error;
  /* file format */
  file_block *batch_blocks, *dict_blocks;
  int64_t n_batches, n_dict_blocks, next_batch;
  int64_t
      first_block_index; /* message index of the first block: 1 after a schema message, else 0 */
  int64_t file_end;      /* where the file's closing magic ends, once known; else -1 */
  /* A file read in order: its dictionary [0] and record batch [1] messages
   * as read, which its footer, read last, must list (reader_check_file_end). */
  file_block *seen[2];
  int64_t n_seen[2], cap_seen[2];
  int dicts_loaded;
  xchg_message_fn on_message;
  void *on_message_ctx;
  xchg_decompress_fn on_decompress;
  void *on_decompress_ctx;
  int64_t *column_bytes; /* for on_message: per column, body bytes then decoded bytes */
};

/* Reading bytes and messages (reader.c). */
int64_t reader_position(const xchg_ipc_reader *r);
int reader_seekable(const xchg_ipc_reader *r);
xchg_status reader_seek(xchg_ipc_reader *r, int64_t offset, xchg_error *err);
xchg_status reader_read_exact(xchg_ipc_reader *r, void *dst, size_t n, size_t *got,
                              xchg_error *err);
xchg_status reader_read_buffer(xchg_ipc_reader *r, size_t n, xchg_buf **out, xchg_error *err);
void reader_message_clear(ipc_message *m);
xchg_status reader_read_message(xchg_ipc_reader *r, ipc_message *m, int *eos, xchg_error *err);
xchg_status reader_set_schema(xchg_ipc_reader *r, const fb_table *schema, const char *where,
                              xchg_error *err);
xchg_status reader_take_schema_message(xchg_ipc_reader *r, ipc_message *m, ipc_schema *into,
                                       xchg_error *err);

/* The file format (reader_file.c): opening one (its footer, or the whole
 * file when the schema is only in the footer), the schema of its body, and
 * its end when it is read in order. */
xchg_status reader_open_file_format(xchg_ipc_reader *r, xchg_error *err);
/* reader_detect.c: inputs that the first bytes show are not Arrow IPC
 * refused, naming what they are; a stream's schema message read. */
xchg_status reader_check_arrow_start(const xchg_ipc_reader *r, xchg_error *err);
xchg_status reader_open_stream_format(xchg_ipc_reader *r, xchg_error *err);
xchg_status reader_check_body_schema(xchg_ipc_reader *r, int64_t *first, xchg_error *err);
xchg_status reader_check_file_end(xchg_ipc_reader *r, xchg_error *err);
xchg_status reader_note_message(xchg_ipc_reader *r, const ipc_message *m, xchg_error *err);
xchg_status reader_check_block(const file_block *b, int64_t i, const ipc_message *m,
                               xchg_error *err);

#endif
