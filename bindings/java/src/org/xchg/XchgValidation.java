package org.xchg;

import java.lang.annotation.Native;

/**
 * How much of a payload's values a reader checks (the C enum
 * xchg_validation).  The bounds of every buffer are checked at either
 * level: a corrupt payload never makes xchg, or a consumer of what it
 * exports, read outside memory it owns.
 */
public enum XchgValidation {
  /**
   * Everything a consumer could trip on: offsets monotonic and in range,
   * null counts against validity bitmaps, dictionary indices, union type
   * ids, run ends.  The default: Arrow Java reads imported values without
   * checking them.
   */
  FULL(XchgValidation.FULL_ID),
  /**
   * Bounds only: for data the engine wrote itself (a cached relation),
   * where the O(n) checks of values cost and protect against nothing.  A
   * corrupt payload still fails with an {@link XchgException} or yields
   * wrong values inside the arrays' own memory; it cannot crash the JVM
   * through xchg's reads, but offsets left unchecked can lead a consumer
   * that trusts them astray.
   */
  BOUNDS(XchgValidation.BOUNDS_ID);

  /** The values of xchg_validation (checked against the C enum when the library is built). */
  @Native static final int FULL_ID = 0;

  @Native static final int BOUNDS_ID = 1;

  /** The value of the C enum. */
  final int id;

  XchgValidation(int id) {
    this.id = id;
  }
}
