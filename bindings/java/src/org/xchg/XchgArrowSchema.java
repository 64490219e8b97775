package org.xchg;

/**
 * A {@code struct ArrowSchema} of the Arrow C Data Interface in native
 * memory, for callers without Arrow Java: what {@link
 * Xchg#allocateArrowSchema} returns and the {@code exportSchema} methods fill.  Its {@link
 * #memoryAddress} matches Arrow Java's {@code
 * org.apache.arrow.c.ArrowSchema.memoryAddress()}, so that an engine passes
 * either's address to the methods taking a {@code long}.  {@link
 * #close} releases what it holds and frees it.
 */
public final class XchgArrowSchema extends CDataStruct {
  XchgArrowSchema() {
    super(SCHEMA);
  }
}
