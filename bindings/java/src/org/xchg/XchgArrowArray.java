package org.xchg;

/**
 * A {@code struct ArrowArray} of the Arrow C Data Interface in native
 * memory, for callers without Arrow Java: what {@link
 * Xchg#allocateArrowArray} returns and the decode methods and {@code exportBatch} fill.  Its {@link
 * #memoryAddress} matches Arrow Java's {@code
 * org.apache.arrow.c.ArrowArray.memoryAddress()}, so that an engine passes
 * either's address to the methods taking a {@code long}.  {@link
 * #close} releases what it holds and frees it.
 */
public final class XchgArrowArray extends CDataStruct {
  XchgArrowArray() {
    super(ARRAY);
  }
}
