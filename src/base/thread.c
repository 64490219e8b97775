/* thread.c — see thread.h. */
#include "base/thread.h"

#include <signal.h>

int base_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg) {
  sigset_t blocked, old;
  sigfillset(&blocked);
  static const int left_open[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGPROF};
  for (size_t i = 0; i < sizeof left_open / sizeof left_open[0]; i++)
    sigdelset(&blocked, left_open[i]);
  /* A new thread inherits its creator's mask: block, create, restore. */
  pthread_sigmask(SIG_BLOCK, &blocked, &old);
  int e = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return e;
}
