package org.xchg;

import java.lang.annotation.Native;

/**
 * What the typed C Data Interface handles share: a struct in native memory
 * (zeroed when allocated), its address, its release and its freeing.
 * Thread-safe, but for one race the caller must rule out: {@link #close}
 * frees the struct's memory, so it must not run while another thread's
 * call fills or reads the struct (a decode into it, an import of it); a
 * struct closed before such a call starts throws IllegalStateException.
 */
abstract class CDataStruct implements AutoCloseable {
  static {
    Xchg.ensureLoaded();
  }

  /** The kinds of struct, as the native code tells them apart. */
  @Native static final int ARRAY = 0;

  @Native static final int SCHEMA = 1;

  @Native static final int STREAM = 2;

  private final int kind;
  // Read by native code (decodeMany over typed handles); 0 once closed.
  private volatile long address;

  CDataStruct(int kind) {
    this.kind = kind;
    this.address = nAllocate(kind);
  }

  /** The struct's address, as Arrow Java's {@code memoryAddress()} gives its own. */
  public long memoryAddress() {
    long a = address;
    if (a == 0) throw new IllegalStateException(getClass().getSimpleName() + " used after close");
    return a;
  }

  /**
   * Calls the release callback of what the struct holds, if anything,
   * keeping the struct for another use (as Arrow Java's {@code release()}).
   */
  public synchronized void release() {
    nRelease(kind, memoryAddress());
  }

  /** Releases what the struct holds and frees the struct.  A second close does nothing. */
  @Override
  public synchronized void close() {
    long a = address;
    if (a == 0) return;
    address = 0;
    nFree(kind, a);
  }

  private static native long nAllocate(int kind);

  private static native void nRelease(int kind, long address);

  private static native void nFree(int kind, long address);
}
