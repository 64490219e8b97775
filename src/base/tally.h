/* tally.h — counters kept per thread and summed when read: for figures
 * every thread bumps on a hot path (buffers made, decompressions), where
 * one shared atomic would be a cache line every core fights over.
 *
 * A thread's slot lives in a per-thread struct of the caller's (its
 * buffer cache, its codec contexts) and is written by that thread alone: a
 * load and a store, no locked add.  The caller links the slot in when it
 * makes that struct and folds it out (tally_leave) in the pthread key
 * destructor that frees it; a reader sums the slots alive and what ended
 * threads (and threads without a slot, tally_add_shared) left. */
#ifndef XCHG_TALLY_H
#define XCHG_TALLY_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/lock.h"

/* Counters per tally: the most any user keeps. */
#define TALLY_COUNTERS 2

typedef struct tally_slot {
  _Atomic int64_t n[TALLY_COUNTERS];
  struct tally_slot *prev, *next; /* in the tally's live slots */
} tally_slot;

typedef struct tally {
  xchg_mutex lock;
  tally_slot *live XCHG_GUARDED_BY(lock);
  _Atomic int64_t left[TALLY_COUNTERS]; /* of ended threads and slotless adds */
} tally;

#define TALLY_INIT                           \
  {                                          \
    {PTHREAD_MUTEX_INITIALIZER}, NULL, { 0 } \
  }

/* Links a zeroed slot in, for the thread that owns it. */
static inline void tally_join(tally *t, tally_slot *s) {
  xchg_mutex_lock(&t->lock);
  s->prev = NULL;
  s->next = t->live;
  if (t->live) t->live->prev = s;
  t->live = s;
  xchg_mutex_unlock(&t->lock);
}

/* Folds the slot's counts into what ended threads left and unlinks it. */
static inline void tally_leave(tally *t, tally_slot *s) {
  xchg_mutex_lock(&t->lock);
  for (int i = 0; i < TALLY_COUNTERS; i++)
    atomic_fetch_add_explicit(&t->left[i], atomic_load_explicit(&s->n[i], memory_order_relaxed),
                              memory_order_relaxed);
  if (s->prev)
    s->prev->next = s->next;
  else
    t->live = s->next;
  if (s->next) s->next->prev = s->prev;
  xchg_mutex_unlock(&t->lock);
}

/* Adds d to counter i of the calling thread's own slot. */
static inline void tally_add(tally_slot *s, int i, int64_t d) {
  atomic_store_explicit(&s->n[i], atomic_load_explicit(&s->n[i], memory_order_relaxed) + d,
                        memory_order_relaxed);
}

/* Adds d to counter i for a thread that has no slot. */
static inline void tally_add_shared(tally *t, int i, int64_t d) {
  atomic_fetch_add_explicit(&t->left[i], d, memory_order_relaxed);
}

/* Counter i summed over every thread. */
static inline int64_t tally_sum(tally *t, int i) {
  xchg_mutex_lock(&t->lock);
  int64_t n = atomic_load_explicit(&t->left[i], memory_order_relaxed);
  for (const tally_slot *s = t->live; s; s = s->next)
    n += atomic_load_explicit(&s->n[i], memory_order_relaxed);
  xchg_mutex_unlock(&t->lock);
  return n;
}

#endif
