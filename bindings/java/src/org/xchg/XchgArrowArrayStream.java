package org.xchg;

/**
 * A {@code struct ArrowArrayStream} of the Arrow C Data Interface in native
 * memory, for callers without Arrow Java: what {@link
 * Xchg#allocateArrowArrayStream} returns and {@code exportStream} fills.  Its {@link
 * #memoryAddress} matches Arrow Java's {@code
 * org.apache.arrow.c.ArrowArrayStream.memoryAddress()}, so that an engine passes
 * either's address to the methods taking a {@code long}.  {@link
 * #close} releases what it holds and frees it.
 */
public final class XchgArrowArrayStream extends CDataStruct {
  XchgArrowArrayStream() {
    super(STREAM);
  }
}
