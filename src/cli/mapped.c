/* mapped.c — an input file cut short while a command reads it (see cli.h).
 *
 * The commands map their input file (zero-copy).  When another process
 * truncates a mapped file (rewrites it in place, as `>` in a shell does),
 * touching a page past its new end raises SIGBUS, and the kernel killed the
 * command with "Bus error", its temporary output left behind.  The handler
 * here ends it as any other failed read ends: a message naming the file,
 * the temporary output removed (output.c), exit 1.  A write(2) of such
 * bytes (convert writes uncompressed buffers from the mapping) fails with
 * EFAULT instead, which the output's writes hand here: the input is at
 * fault, not the output.  Only a fault on a
 * mapping past the end of its file (BUS_ADRERR) once an input is mapped is
 * taken so; any other SIGBUS (one sent by kill, say) keeps the default
 * action. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"

/* The input as errors name it (xc_input_label).  The handler reads what is complete
 * only: the name is written, then (after a fence) the flag set. */
static char input_name[4200];
static volatile sig_atomic_t input_noted;

void xc_note_mapped(const char *path) {
  input_noted = 0;
  atomic_signal_fence(memory_order_seq_cst);
  snprintf(input_name, sizeof input_name, "%s", xc_input_label(path));
  atomic_signal_fence(memory_order_seq_cst);
  input_noted = 1;
}

static void say(const char *text) {
  size_t len = strlen(text);
  while (len > 0) {
    ssize_t n = write(STDERR_FILENO, text, len);
    if (n <= 0) return;
    text += n;
    len -= (size_t)n;
  }
}

static _Noreturn void stop_input_cut(void) {
  xc_remove_temp_output();
  say("xchg: ");
  say(input_name);
  say(": cut short by another process while it was read (its mapped bytes are gone)\n");
  _exit(XC_EXIT_ERROR);
}

void xc_stop_if_input_cut(int errnum) {
  if (errnum == EFAULT && input_noted) stop_input_cut();
}

static void on_sigbus(int sig, siginfo_t *info, void *context) {
  (void)context;
  if (info->si_code == BUS_ADRERR && input_noted) stop_input_cut();
  signal(sig, SIG_DFL); /* a fault comes again as the handler returns, and kills */
  raise(sig);           /* a signal sent does not: sent again, it kills once this returns */
}

void xc_catch_cut_inputs(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigfillset(&sa.sa_mask); /* the temporary file's removal is not interrupted */
  sigaction(SIGBUS, &sa, NULL);
}
