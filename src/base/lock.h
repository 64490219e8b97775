/* lock.h — a mutex whose use clang's thread-safety analysis checks
 * (-Wthread-safety, on in every clang build): XCHG_CAPABILITY marks a lock
 * type, XCHG_GUARDED_BY a field only the lock's holder touches,
 * XCHG_REQUIRES a function called with the lock held (such functions also
 * end in _locked).  The lock state is then checked at compile time rather
 * than told in comments.  The macros are empty on other compilers. */
#ifndef XCHG_LOCK_H
#define XCHG_LOCK_H

#include <pthread.h>
#include <time.h>

#if defined(__clang__)
#define XCHG_TSA(x) __attribute__((x))
#else
#define XCHG_TSA(x)
#endif

#define XCHG_CAPABILITY(x) XCHG_TSA(capability(x))
/* Marks a field guarded by the lock of the same struct.  Not checked yet:
 * clang 14 (CI's) cannot name a member of the struct from an attribute in
 * C ("use of undeclared identifier"), so this expands to nothing; the
 * XCHG_REQUIRES of the functions that touch these fields are checked. */
#define XCHG_GUARDED_BY(x)
#define XCHG_REQUIRES(...) XCHG_TSA(requires_capability(__VA_ARGS__))
#define XCHG_ACQUIRE(...) XCHG_TSA(acquire_capability(__VA_ARGS__))
#define XCHG_RELEASE(...) XCHG_TSA(release_capability(__VA_ARGS__))
/* For the wrappers below alone: the analysis cannot see into pthreads. */
#define XCHG_NO_THREAD_SAFETY_ANALYSIS XCHG_TSA(no_thread_safety_analysis)

typedef struct XCHG_CAPABILITY("mutex") xchg_mutex {
  pthread_mutex_t m;
} xchg_mutex;

static inline int xchg_mutex_init(xchg_mutex *mu) { return pthread_mutex_init(&mu->m, NULL); }
static inline void xchg_mutex_destroy(xchg_mutex *mu) { pthread_mutex_destroy(&mu->m); }

static inline void xchg_mutex_lock(xchg_mutex *mu) XCHG_ACQUIRE(mu) XCHG_NO_THREAD_SAFETY_ANALYSIS {
  pthread_mutex_lock(&mu->m);
}

static inline void xchg_mutex_unlock(xchg_mutex *mu)
    XCHG_RELEASE(mu) XCHG_NO_THREAD_SAFETY_ANALYSIS {
  pthread_mutex_unlock(&mu->m);
}

/* pthread_cond_timedwait on cond with mu: held on entry and on return. */
static inline void xchg_mutex_timedwait(xchg_mutex *mu, pthread_cond_t *cond,
                                        const struct timespec *until) XCHG_REQUIRES(mu) {
  pthread_cond_timedwait(cond, &mu->m, until);
}

#endif
