/* decode_jobs.c — step 2 of decoding (see decode.h): running the
 * decompression jobs that planning a batch added, inline or on a pool. */
#include <stdlib.h>
#include <string.h>

#include "ipc/decode_internal.h"
#include "xchg/codec.h"

static xchg_status run_job(ipc_job *j, xchg_error *err) {
  const ipc_decode_ctx *ctx = j->ctx;
  if (ctx->on_decompress)
    ctx->on_decompress(ctx->on_decompress_ctx, j->codec, j->src.data, j->src.size,
                       xchg_buf_size(j->dst));
  xchg_status st = xchg_block_decompress(j->codec, j->src.data, j->src.size,
                                         xchg_buf_mutable_data(j->dst), xchg_buf_size(j->dst), err);
  if (st == XCHG_OK && ctx->big_endian && swap_needed(j->swap))
    swap_values(xchg_buf_mutable_data(j->dst), xchg_buf_size(j->dst), j->swap, 1);
  return st;
}

/* Task t's jobs; without a split (no memory for one), one task runs all. */
static void task_range(const ipc_jobs *jobs, int64_t t, int64_t *begin, int64_t *end) {
  *begin = jobs->starts ? jobs->starts[t] : 0;
  *end = jobs->starts ? jobs->starts[t + 1] : jobs->count;
}

int64_t ipc_jobs_split(ipc_jobs *jobs, int threads, int64_t task_bytes) {
  free(jobs->starts);
  jobs->starts = NULL;
  if (threads <= 1 || jobs->count <= 1 || jobs->bytes < 2 * task_bytes) return 1;
  if (!(jobs->starts = malloc((size_t)(jobs->count + 1) * sizeof *jobs->starts))) return 1;
  int64_t target = jobs->bytes / (4 * threads);
  if (target < task_bytes) target = task_bytes;
  int64_t n = 0, acc = 0;
  jobs->starts[0] = 0;
  for (int64_t i = 0; i < jobs->count; i++) {
    acc += (int64_t)xchg_buf_size(jobs->items[i].dst);
    if (acc >= target || i == jobs->count - 1) {
      jobs->starts[++n] = i + 1;
      acc = 0;
    }
  }
  return n;
}

void ipc_jobs_run_task(ipc_jobs *jobs, int64_t t) {
  int64_t begin, end;
  task_range(jobs, t, &begin, &end);
  for (int64_t i = begin; i < end; i++) jobs->items[i].status = run_job(&jobs->items[i], NULL);
}

xchg_status ipc_jobs_finish(ipc_jobs *jobs, int64_t *failed_message, xchg_error *err) {
  xchg_status st = XCHG_OK;
  for (int64_t i = 0; i < jobs->count && st == XCHG_OK; i++) {
    ipc_job *j = &jobs->items[i];
    if (j->status == XCHG_OK) continue;
    /* Again, on this thread, for the message; a failure that does not come
     * back (memory was short on another thread) leaves the job done. */
    st = run_job(j, err);
    if (st == XCHG_OK) continue;
    if (failed_message) *failed_message = j->message_index;
    char message[IPC_MESSAGE_NAME];
    xchg_error_prefix(err, "%s, field '%s', message buffer %lld: ",
                      ipc_message_name(j->message_index, j->message_offset, message),
                      j->field->path, (long long)j->buffer);
  }
  ipc_jobs_free(jobs);
  return st;
}

static void run_task(void *jobs, int64_t t) { ipc_jobs_run_task(jobs, t); }

xchg_status ipc_jobs_run(ipc_jobs *jobs, xchg_pool *pool, int64_t task_bytes,
                         int64_t *failed_message, xchg_error *err) {
  xchg_pool_run(pool, ipc_jobs_split(jobs, xchg_pool_threads(pool), task_bytes), run_task, jobs);
  return ipc_jobs_finish(jobs, failed_message, err);
}

void ipc_jobs_truncate(ipc_jobs *jobs, int64_t count) {
  for (int64_t i = count; i < jobs->count; i++) {
    jobs->bytes -= (int64_t)xchg_buf_size(jobs->items[i].dst);
    xchg_buf_unref(jobs->items[i].src.owner);
    xchg_buf_unref(jobs->items[i].dst);
  }
  if (count < jobs->count) jobs->count = count;
}

void ipc_jobs_free(ipc_jobs *jobs) {
  ipc_jobs_truncate(jobs, 0);
  free(jobs->items);
  free(jobs->starts);
  memset(jobs, 0, sizeof *jobs);
}
