#include <stdio.h>
#include <xchg/xchg.h>
int main(int argc, char **argv) {
  (void)argc; xchg_ipc_reader *r; xchg_error err; xchg_status st = xchg_ipc_reader_open_file(argv[1], NULL, &r, &err);
  printf("open_file(%s): %s '%s'\n", argv[1], xchg_status_name(st), st ? err.message : "");
  if (st) return 1;
  struct ArrowArray a; int64_t rows = 0; while (!(st = xchg_ipc_reader_next(r, &a, &err)) && a.release) { rows += a.length; a.release(&a); }
  printf("rows %lld st %d %s\n", (long long)rows, st, st ? err.message : ""); xchg_ipc_reader_free(r); return 0;
}
