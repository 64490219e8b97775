/* cli.h — pieces shared by the commands of the `xchg` tool.
 *
 * Files of src/cli: a command's file is cmd_<command>.c (cmd_inspect_rows.c:
 * `inspect --rows`), its entry point declared below; cmd_writer.h holds
 * what the commands that write IPC share.  Plumbing that all commands use
 * has a plain name (input.c, input_blocks.c, output.c, progress.c, stdin.c), and
 * dispatch.c finds the command (command.h).  render/ is the rendering
 * library (xchg_cli_render: values, nested columns, types, CSV/JSON rows,
 * Arrow JSON, sizes), which includes nothing of src/cli outside render/.
 *
 * Exit codes: 0 success, 1 a runtime error (bad input, I/O), 2 a usage
 * error.  Runtime errors print as "xchg: <file>: <message>". */
#ifndef XCHG_CLI_CLI_H
#define XCHG_CLI_CLI_H

#include <stdbool.h>

#include "cli/options.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"
#include "xchg/xchg.h"

enum { XC_EXIT_OK = 0, XC_EXIT_ERROR = 1, XC_EXIT_USAGE = 2 };

/* Commands: argv[0] is the command name. */
int xc_cmd_inspect(int argc, char **argv);
int xc_cmd_cat(int argc, char **argv);
int xc_cmd_convert(int argc, char **argv);
int xc_cmd_gen(int argc, char **argv);

/* `xchg inspect --rows`: length-prefixed rows (Gluten's sort shuffle) in
 * path, decoded by codec (auto-detected, passed through when plain): the
 * row count, the distribution of row sizes and the first `head` rows. */
int xc_inspect_rows(const char *path, xchg_stream_codec codec, int64_t head);

/* The source of path: the file, memory-mapped, or for "-" standard input
 * from its first byte, the bytes xc_stdin_peek read ahead handed out
 * again first (stdin.c). */
xchg_status xc_open_source(const char *path, xchg_source **out, xchg_error *err);

/* A mapped input file cut short by another process while it is read
 * (SIGBUS): xc_catch_cut_inputs, once at start, makes that a message
 * naming the file (the path xc_note_mapped was given last, as errors
 * name it) and exit 1, the temporary output removed, rather than a
 * kill by "Bus error" (mapped.c). */
void xc_catch_cut_inputs(void);
void xc_note_mapped(const char *path);
/* The same stop when a write of mapped bytes failed with errnum EFAULT. */
void xc_stop_if_input_cut(int errnum);

/* Reads standard input ahead until its first `want` bytes are held (fewer
 * at its end) without handing them to anyone: *bytes and *len are all
 * that is held so far, valid until the next call or xc_open_source("-").
 * A pipe cannot seek back: this is how its framing is told. */
xchg_status xc_stdin_peek(size_t want, const uint8_t **bytes, size_t *len, xchg_error *err);

/* Copies what is left of standard input (the bytes read ahead included) to
 * a temporary file, mapped, that xc_open_source("-") then reads each time
 * it is called, in place: for a command that reads its input twice. */
xchg_status xc_stdin_spool(xchg_error *err);

/* A named FIFO (mkfifo's, a shell's <(...), /dev/stdin on a pipe) read in
 * place of standard input, as a command that reads its input once reads
 * "-": opened once, its first bytes looked at before its reader is chosen,
 * copied to a temporary file only where "-" would be (an IPC file with no
 * schema message), so that it reads as "-" reads a pipe, what follows an
 * IPC file included.  From then on xc_is_piped(path), not "-", names the
 * pipe that xc_open_source, xc_stdin_peek and xc_stdin_spool read.  Any
 * other path (a regular file, a device such as /dev/zero) is left alone;
 * path must outlive the process's reading.  Before anything is read. */
xchg_status xc_pipe_named(const char *path, xchg_error *err);

/* Whether path names the pipe read as standard input: "-", or the named
 * FIFO xc_pipe_named took in its place. */
bool xc_is_piped(const char *path);

/* Opens path ("-": standard input) as a decoded byte stream. */
xchg_status xc_open_istream(const char *path, xchg_stream_codec codec, xchg_istream **out,
                            xchg_error *err);

/* The size of the file at path, -1 for "-" or anything but a regular
 * file: the total of a progress line. */
int64_t xc_path_size(const char *path);

/* The end of a message (its offset in the IPC stream plus its size): a
 * progress line's 'done'. */
static inline int64_t xc_message_end(const xchg_message_info *info) {
  return info->offset + 8 + info->metadata_bytes + info->body_bytes;
}

/* An input read as a sequence of Arrow IPC streams: FILE or "-", decoded
 * by a stream codec when it has one.  Any input may hold several IPC
 * streams one after another, as Spark and Comet write them (Comet: one per
 * shuffle block) and as concatenated files are; they are decoded in one
 * pass, never materialised.  A plain file on disk is memory-mapped, so the
 * file format's footer is used, and it is read through once when opened
 * (framing and schemas only), so that what would fail part way fails
 * before a command shows anything.  Bytes after a stream's end that do not
 * begin another IPC stream are an error, not silently dropped. */
/* A command's own check of every IPC stream of an input, made once the
 * stream's schema is checked (one_schema); stream counts from 1.  An error
 * fails the input there: for a file on disk, which is read through first,
 * before the command shows anything. */
typedef struct xc_stream_check {
  xchg_status (*fn)(void *ctx, const xchg_ipc_reader *reader, int64_t stream, xchg_error *err);
  void *ctx;
} xc_stream_check;

/* IPC streams without their markers one after another in a codec's
 * decoded bytes (input_split.c). */
typedef struct xc_split xc_split;

typedef struct xc_input {
  const char *path;
  xchg_stream_codec codec; /* in use (after auto detection); NONE: plain IPC */
  xchg_source *plain;      /* plain IPC not yet handed to a reader */
  xchg_istream *stream;    /* the decoder, when there is a codec */
  xc_split *split;         /* allow_missing_eos, a codec but Comet: where IPC streams end */
  xchg_buf *memory;        /* plain IPC in memory (a mapped file), else NULL */
  int64_t streams;         /* IPC streams opened so far */
  uint64_t stream_start;   /* decoded byte offset where the last one began */
  uint64_t stream_end;     /* where it ended (UINT64_MAX: unknown, or nothing can follow) */
  bool ended_file;         /* the last one was in the IPC file format (it ended at its magic) */
  /* The current one is in the IPC file format, as its reader says, or,
   * when none could be opened, its first bytes (false when not seen);
   * first_file: the first one was.  Errors call each by what it is
   * ("IPC file 2 at byte ..."). */
  bool is_file, first_file;
  bool one_schema;              /* every IPC stream must have the first one's schema */
  struct ArrowSchema first;     /* with one_schema: the first IPC stream's schema, once opened */
  const xc_stream_check *check; /* NULL, or asked of every IPC stream */
  bool allow_missing_eos;       /* --allow-missing-eos: every reader's allow_missing_eos */
  int64_t skippable_frames;     /* > 0: the input is that many skippable frames alone */
  uint64_t skippable_bytes;     /* their size */
  /* A codec stated by --input-codec for an input whose first bytes are
   * another codec's framing (its name) or Arrow IPC ("Arrow IPC"), named
   * if the codec fails at once; else NULL. */
  const char *first_bytes;
  /* The last error was the decoder's, or the bytes' after an IPC stream,
   * read between IPC streams: not the reader's, whose offsets
   * xc_input_locate_error says are decoded. */
  bool decoder_failed;
} xc_input;

/* How an offset in a codec's decoded bytes is said: "at decoded byte N". */
#define XC_DECODED_BYTE "decoded byte "

/* The hint of an error that an IPC stream without its end-of-stream
 * marker causes. */
#define XC_MISSING_EOS_HINT \
  "--allow-missing-eos reads a stream whose writer left the optional marker out"

/* A walker of the IPC messages decoded by stream (which must outlive it),
 * for allow_missing_eos: xc_split_source is the source of the next IPC
 * stream, which ends at its marker, or where the next one's schema message
 * begins (held for the next source: xc_split_held bytes of it, read from
 * stream, are not yet handed out), or where the input ends. */
xchg_status xc_split_new(xchg_istream *stream, xc_split **out, xchg_error *err);
xchg_status xc_split_source(xc_split *s, int64_t max_metadata_bytes, xchg_source **out,
                            xchg_error *err);
size_t xc_split_held(const xc_split *s);
/* Where the xc_split_held bytes are: what a stream without its marker
 * ended at (a schema message, or bytes that are no message, said so). */
const uint8_t *xc_split_held_bytes(const xc_split *s);
void xc_split_free(xc_split *s);

/* Whether bytes begin an IPC stream or file (the input's first ones, or
 * those after an IPC stream's end): the continuation marker of a message,
 * or the IPC file format's magic. */
bool xc_begins_ipc(const uint8_t *p, size_t n);

/* Whether the n bytes at p begin with a message's continuation marker, as
 * far as there are bytes (fewer than 4 may be a marker cut short): bytes
 * after a message of a stream whose messages have it that do not are no
 * message of it, with allow_missing_eos what follows the stream. */
bool xc_begins_marker(const uint8_t *p, size_t n);

/* st, with " (HINT)" after err's message, HINT formatted from fmt: the
 * fix an error's own words cannot name (an option of the command). */
xchg_status xc_error_hint(xchg_error *err, xchg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Opens path with codec (XCHG_STREAM_AUTO: detected from the magic bytes,
 * plain IPC when none matches).  one_schema: the input is one table (cat,
 * convert), so an IPC stream whose schema is not the first one's is an
 * error saying what differs.  check (NULL: none) must outlive in.
 * allow_missing_eos (--allow-missing-eos): an IPC stream may end without
 * its end-of-stream marker, where the input or a Comet block ends, or
 * where the next IPC stream's schema message begins (plain IPC is read
 * from memory then: piped standard input is copied to a temporary file
 * first; a codec's decoded bytes are walked message by message,
 * input_split.c).  Plain IPC in memory is read through once first, as
 * far as the first `limit` rows (-1: all), the rows the command wants
 * (check_in_memory). */
xchg_status xc_input_open(xc_input *in, const char *path, xchg_stream_codec codec, bool one_schema,
                          const xc_stream_check *check, bool allow_missing_eos, int64_t limit,
                          xchg_error *err);

/* Opens a reader on the next IPC stream of the input, once the previous
 * one is closed by xc_input_end_stream; *out is NULL at the end of the
 * input.  opts (NULL: the defaults) are the reader's but for
 * allow_missing_eos, which is the input's.  An empty Comet input holds no
 * IPC stream (a partition without rows), any other empty input is an
 * error. */
xchg_status xc_input_next(xc_input *in, const xchg_ipc_read_options *opts, xchg_ipc_reader **out,
                          xchg_error *err);

/* Closes the reader of the current IPC stream (NULL is fine), noting where
 * the stream ended so that the next one can be found. */
void xc_input_end_stream(xc_input *in, xchg_ipc_reader *reader);

/* How many bytes of the input have been read, for a progress line:
 * message_end is where the current IPC stream's last message reported
 * ends (plain input); codec input counts its compressed bytes. */
int64_t xc_input_done(const xc_input *in, int64_t message_end);

/* The error of an input of no IPC stream (an empty Comet input, which
 * xc_input_next reads as none) for an output that needs a schema, output
 * naming it: valid input, whose rows (none) csv and json show, but no
 * schema for what output must begin with.  Said alike by cat
 * --format arrow-json and convert. */
xchg_status xc_input_no_schema(const xc_input *in, const char *output, xchg_error *err);

/* Comet input: the field count in the header of the current block, else -1. */
int64_t xc_input_comet_field_count(const xc_input *in);

/* "file" or "stream": how an IPC stream in the file format (file) or
 * not is called in words that name it ("IPC file 2", "the first IPC
 * stream's"). */
const char *xc_ipc_kind(bool file);

/* Prefixes err with the IPC stream at fault when the input held several
 * ("IPC stream 2 at decoded byte 4096: ...", "IPC file 2 at byte 22298:
 * ..." for one in the file format).  Over a codec (Comet's
 * blocks aside, whose offsets the shuffle reader names alike), the
 * reader's offsets say they are decoded bytes too ("message 1 at decoded
 * byte 472"), the codec's own words left as they are. */
void xc_input_locate_error(const xc_input *in, xchg_error *err);

/* Rewrites err's offsets "at byte N" as "at decoded byte N", up to where
 * a codec's own words begin: the error of a reader of a codec's decoded
 * bytes, which names them as a file's. */
void xc_say_decoded(xchg_error *err);

void xc_input_close(xc_input *in);

/* The rows a Comet input's blocks are coalesced into when no --batch-rows
 * is given: Comet's blocks are tiny (tens of rows), and a reader wants
 * batches of about this many. */
#define XC_BLOCK_BATCH_ROWS 8192

/* How a command chooses the columns of the blocks it reads (cat's
 * --columns): choose gets the blocks' whole schema (the first block's) and
 * sets *columns to the top-level indices to decode (NULL: all), which must
 * stay valid until xc_input_open_blocks returns (the reader copies them). */
typedef struct xc_blocks_columns {
  xchg_status (*choose)(void *ctx, const struct ArrowSchema *whole, const int64_t **columns,
                        int64_t *n_columns, xchg_error *err);
  void *ctx;
} xc_blocks_columns;

/* A file of Comet shuffle blocks (codec XCHG_STREAM_COMET, or
 * XCHG_STREAM_AUTO and detected) whose first block states its field count:
 * *out is a shuffle reader over them, coalescing into batches of at least
 * target_rows rows.  A file on disk is read through once first (no column
 * decoded) so that a bad block fails before any output; standard input
 * ("-", told from its first bytes, xc_stdin_peek) cannot be read twice and
 * is read as it comes, a bad block failing after the batches before it.
 * With no limit the reader reads ahead on the default pool (every core,
 * XCHG_THREADS).  limit (-1: none) is the
 * rows the command wants: the blocks after the first `limit` rows are not
 * checked, and *out's batches hold at least min(target_rows, limit) rows,
 * so that for a limit up to target_rows no block after them is read (as
 * `head` expects of `cat --limit`; past it, the last batch may read up to
 * target_rows more rows' blocks).  chooser (NULL: every column)
 * picks the columns *out decodes, from the first block's schema.
 * allow_missing_eos: a block's IPC stream may end without its marker
 * (xc_input_open).  Any other input: *out is NULL, and xc_input_open reads it (from its first
 * byte, standard input too).  Errors of the blocks name the block and its
 * byte offset (xchg/shuffle.h), alike for a file and standard input. */
xchg_status xc_input_open_blocks(const char *path, xchg_stream_codec codec, bool allow_missing_eos,
                                 int64_t target_rows, int64_t limit,
                                 const xc_blocks_columns *chooser, xchg_shuffle_reader **out,
                                 xchg_error *err);

/* Reads reader's batches and drops them, until `limit` rows are read (-1:
 * the end): a check that its blocks decode, errors naming the block. */
xchg_status xc_blocks_read_through(xchg_shuffle_reader *reader, int64_t limit, xchg_error *err);

/* What `inspect` says of a file of blocks — Comet blocks (codec
 * XCHG_STREAM_COMET), or IPC streams one after another, plain (NONE) or
 * in the stream codec `codec` (read from its decoded bytes, a second pass
 * over the input) — read through the shuffle reader,
 * every column decoded (a changed dictionary cuts a batch, as in
 * `convert`): blocks, rows, wire bytes, the batches of XC_BLOCK_BATCH_ROWS
 * rows they coalesce into, and the blocks per codec:
 * Comet's tag (NONE, LZ4_, ZSTD, SNAP), counted here; for IPC streams the
 * body compression of their record batches (none, lz4, zstd), which the
 * caller counts as it reads them.  allow_missing_eos as for
 * xc_input_open_blocks. */
typedef struct xc_blocks_summary {
  int64_t blocks, rows, wire_bytes, batches;
  int64_t by_codec[4];
  bool no_field_count; /* Comet blocks that state none: not read, an error saying so */
} xc_blocks_summary;

xchg_status xc_blocks_summarize(const char *path, xchg_stream_codec codec, bool allow_missing_eos,
                                xc_blocks_summary *out, xchg_error *err);

/* Parses the name of a stream codec (--input-codec; gen's --outer, which
 * is `writing`: auto, which detects a codec when reading, names none to
 * write): -1 when it names one, else the usage error's exit code (an
 * ambiguous "lz4" or "snappy" says which to choose). */
int xc_stream_codec_option(const char *command, const char *name, bool writing,
                           xchg_stream_codec *out);

/* Warns on standard error that option old is now called now (it goes on
 * working for this release). */
void xc_deprecated_option(const char *command, const char *old, const char *now);

/* What --help says about --input-codec. */
#define XC_CODEC_HELP                                                                \
  "  --input-codec C the stream codec around the input's IPC data: lz4-java,\n"      \
  "                    snappy-java, zstd, lz4-frame, snappy-framed, comet (Comet\n"  \
  "                    shuffle blocks), none, or auto (the default: detected from\n" \
  "                    the first bytes, plain IPC when no codec's magic matches).\n" \
  "                    A codec stream may hold several IPC streams one after\n"      \
  "                    another: all of them are read.\n"

/* What --help says about --allow-missing-eos. */
#define XC_MISSING_EOS_HELP                                                          \
  "  --allow-missing-eos  read an IPC stream that ends without its end-of-stream\n"  \
  "                    marker, as Arrow's format allows (by default such a stream\n" \
  "                    is taken for one cut short, which it cannot be told from):\n" \
  "                    it ends where the input or its Comet block ends, or where\n"  \
  "                    the next IPC stream's schema message begins, in plain IPC\n"  \
  "                    or in a codec's decoded bytes (from a pipe, plain IPC is\n"   \
  "                    copied to a temporary file first, to look for it).  A\n"      \
  "                    stream cut inside a message is still an error, and so is\n"   \
  "                    an IPC file cut short: a file ends with its footer,\n"        \
  "                    whatever this option says.\n"

/* How errors name an input: the path, or "<stdin>" for "-". */
const char *xc_input_label(const char *path);

/* Prints "xchg: <file>: <message>" (the file once: a message that begins
 * with "<file>: " is printed as it is) and returns XC_EXIT_ERROR. */
int xc_runtime_error(const char *path, const char *message);

/* True when arg is "-h" or "--help". */
int xc_is_help(const char *arg);

#endif
