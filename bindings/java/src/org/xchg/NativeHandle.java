package org.xchg;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * The handle of a native object that calls borrow and {@link #close} frees
 * once no call runs: a close during a call is refused, a call after close
 * fails, and neither can free the object under a running call.  Each call
 * brackets its use of the handle with {@link #enter} and {@link #leave}.
 */
final class NativeHandle {
  private final String owner; // the class named in the exceptions
  private volatile long handle; // 0 once closed
  private final AtomicInteger users = new AtomicInteger(); // the calls under way

  NativeHandle(String owner, long handle) {
    this.owner = owner;
    this.handle = handle;
  }

  /**
   * Counts a call in, then reads the handle: with close writing the handle
   * before reading the count, either the call sees 0 or close sees the call.
   *
   * @throws IllegalStateException after close
   */
  long enter() {
    users.incrementAndGet();
    long h = handle;
    if (h == 0) {
      users.decrementAndGet();
      throw new IllegalStateException(owner + " used after close");
    }
    return h;
  }

  /** Counts a call out: every {@link #enter} that returned is matched by one. */
  void leave() {
    users.decrementAndGet();
  }

  /**
   * Frees the object by free once no call runs.  A second close does
   * nothing.
   *
   * @throws IllegalStateException while a call runs
   */
  synchronized void close(LongConsumer free) {
    long h = handle;
    if (h == 0) return;
    handle = 0; // before users is read: a call entering now sees it (see enter)
    if (users.get() > 0) {
      handle = h;
      throw new IllegalStateException(owner + " closed during a call");
    }
    free.accept(h);
  }
}
