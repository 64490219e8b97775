/* tests/support/roundtrip.h — helpers shared by the writer's tests:
 * finding the gold files, writing batches to memory with the IPC writer,
 * reading them back with the IPC reader, and a hand-built batch holding the
 * types the gold files lack (views, list views, run-end encoding, small
 * decimals, month-day-nano intervals, unions, dictionaries). */
#ifndef XCHG_TESTS_ROUNDTRIP_H
#define XCHG_TESTS_ROUNDTRIP_H

#include <stddef.h>
#include <stdint.h>

#include "support/arrow_json.h"
#include "xchg/writer.h"
#include "xchg/xchg.h"

/* Every generated_*.json.gz under dir, sorted; 0 or -1. */
int rt_find_gold(const char *dir, char ***paths, size_t *count);
void rt_free_paths(char **paths, size_t count);

/* rt_find_gold under tu_testdata_dir()/arrow-gold: 0; or -1 after a failed
 * check saying there are none. */
int rt_find_all_gold(char ***paths, size_t *count);

/* A schema and its batches, as read. */
typedef struct rt_data {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  int64_t n;
  /* what the reader saw: codecs of record batch messages, dictionary
   * batches and deltas, custom metadata of the last record batch */
  int64_t record_batches, dictionary_batches, delta_batches;
  int codec_mismatch; /* a record batch not compressed with `expect_codec` */
  xchg_block_codec expect_codec;
  int check_codec;
  char last_metadata[256];
  xchg_ipc_format format;
} rt_data;

/* Reads a whole IPC file (path) or buffer (keeps a reference on buf). */
int rt_read_file(const char *path, rt_data *out, char *msg, size_t msgsz);
int rt_read_buf(xchg_buf *buf, rt_data *out, char *msg, size_t msgsz);
void rt_data_free(rt_data *d);

/* The IPC stream beside a gold JSON file: generated_X.json.gz -> generated_X.stream. */
void rt_gold_stream_path(const char *json_path, char *out, size_t outsz);

/* A gold pair: the JSON at json_path and the batches of the stream beside
 * it.  Some Arrow writers put canonical map entry names in the stream where
 * the JSON has custom ones, so the document is told to accept them when
 * (and only when) the stream's schema differs from it.  0; or -1 with msg
 * set and nothing to free. */
int rt_load_gold(const char *json_path, arrow_json **doc, rt_data *src, char *msg, size_t msgsz);

/* One gold pair under check, for tests that check every gold file and
 * count it as one check (all its checks passed): the pair, its file name,
 * and the failure count when its checks began. */
typedef struct rt_gold_check {
  const char *name;
  arrow_json *doc;
  rt_data src;
  int failed_before;
} rt_gold_check;

/* Loads the pair at json_path (rt_load_gold): 0; or -1 after counting a
 * failure that names json_path, with nothing to end. */
int rt_gold_check_begin(const char *json_path, rt_gold_check *g);

/* Prints the pair's line (ok, or how many of its checks failed) and frees
 * it. */
void rt_gold_check_end(rt_gold_check *g);

/* Writes schema and batches with opts into a new buffer. */
int rt_write(const struct ArrowSchema *schema, const struct ArrowArray *batches, int64_t n,
             const xchg_ipc_write_options *opts, xchg_buf **out, char *msg, size_t msgsz);

/* The hand-built sample: one "+s" batch of RT_SAMPLE_ROWS rows.  The
 * structs are static and must not be released. */
#define RT_SAMPLE_ROWS 6
void rt_sample(struct ArrowSchema **schema, struct ArrowArray **batch);

#endif
