/* thread.h — starting the library's own threads (the pool's workers, the
 * CLI's write-behind thread).
 *
 * They start with every asynchronous signal blocked.  A signal sent to the
 * process (SIGINT from a terminal, SIGTERM from `timeout` or a scheduler)
 * then goes to one of the application's threads, where its handlers and
 * its signal masks apply, never to a worker of ours: a thread that blocks
 * SIGTERM around a critical step (xchg convert creating its temporary
 * file and its handler that removes it) is not undone by a worker taking
 * the default action.  Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) stay
 * unblocked, as the kernel delivers them to the faulting thread anyway,
 * and so does SIGPROF, which profilers send to whichever thread runs. */
#ifndef XCHG_BASE_THREAD_H
#define XCHG_BASE_THREAD_H

#include <pthread.h>

/* pthread_create (default attributes) of fn(arg) with the signals above
 * blocked in the new thread; 0 or pthread_create's error number. */
int base_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
