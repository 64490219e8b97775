/* format.h — the constants of the Arrow IPC format, spelled once: the
 * slots of its FlatBuffer tables (Message.fbs, Schema.fbs, File.fbs), the
 * MessageHeader union's types, the metadata versions, and the framing of
 * Columnar.rst ("Encapsulated message format", "IPC File Format").  The
 * reader, the writer, the batch decoder and the CLI all use these. */
#ifndef XCHG_IPC_FORMAT_H
#define XCHG_IPC_FORMAT_H

/* ---- framing ---------------------------------------------------------------- */

/* Before every message's metadata length (absent before Arrow 0.15). */
#define IPC_CONTINUATION 0xFFFFFFFFu
/* The file format opens with the magic padded to 8 bytes and closes with
 * the int32 footer length and the magic. */
#define IPC_MAGIC "ARROW1"
#define IPC_MAGIC_SIZE 6
#define IPC_FILE_HEAD 8
#define IPC_FILE_TAIL (4 + IPC_MAGIC_SIZE)

/* ---- MetadataVersion (V1 = 0) ---------------------------------------------------- */

/* V4 (Arrow 0.8, 2017) is the oldest the readers accept; V5 is written. */
enum { IPC_METADATA_V4 = 3, IPC_METADATA_V5 = 4 };

/* ---- MessageHeader union types ---------------------------------------------------- */

enum { HEADER_SCHEMA = 1, HEADER_DICTIONARY = 2, HEADER_RECORD_BATCH = 3 };

/* ---- table slots ------------------------------------------------------------------ */

enum { MSG_VERSION, MSG_HEADER_TYPE, MSG_HEADER, MSG_BODY_LENGTH, MSG_METADATA };
enum { BATCH_LENGTH, BATCH_NODES, BATCH_BUFFERS, BATCH_COMPRESSION, BATCH_VARIADIC_COUNTS };
enum { DICTBATCH_ID, DICTBATCH_DATA, DICTBATCH_DELTA };
enum { FOOTER_VERSION, FOOTER_SCHEMA, FOOTER_DICTIONARIES, FOOTER_BATCHES, FOOTER_METADATA };
enum { SCHEMA_ENDIANNESS, SCHEMA_FIELDS, SCHEMA_METADATA };
enum {
  FIELD_NAME,
  FIELD_NULLABLE,
  FIELD_TYPE_TYPE,
  FIELD_TYPE,
  FIELD_DICTIONARY,
  FIELD_CHILDREN,
  FIELD_METADATA
};
enum { DICT_ID, DICT_INDEX_TYPE, DICT_ORDERED, DICT_KIND };

#endif
