package org.xchg;

import java.lang.annotation.Native;

/** A snapshot of xchg_cache_metrics (see xchg/cache.h for each field). */
public record XchgCacheMetrics(
    long acquisitions,
    long hits,
    long waits,
    long decodes,
    long failedDecodes,
    long cancellations,
    long derivedBuilds,
    long entries,
    long retained,
    long bytesHeld,
    long evictions,
    long hostDecodes,
    long hostMaps,
    long hostWaits,
    long hostFallbacks,
    long hostEvictions,
    long bytesShared) {

  /** Where the native code puts each counter (xchg_cache_metrics's field of the same name). */
  @Native static final int ACQUISITIONS = 0;
  @Native static final int HITS = 1;
  @Native static final int WAITS = 2;
  @Native static final int DECODES = 3;
  @Native static final int FAILED_DECODES = 4;
  @Native static final int CANCELLATIONS = 5;
  @Native static final int DERIVED_BUILDS = 6;
  @Native static final int ENTRIES = 7;
  @Native static final int RETAINED = 8;
  @Native static final int BYTES_HELD = 9;
  @Native static final int EVICTIONS = 10;
  @Native static final int HOST_DECODES = 11;
  @Native static final int HOST_MAPS = 12;
  @Native static final int HOST_WAITS = 13;
  @Native static final int HOST_FALLBACKS = 14;
  @Native static final int HOST_EVICTIONS = 15;
  @Native static final int BYTES_SHARED = 16;
  @Native static final int COUNT = 17;

  static XchgCacheMetrics of(long[] v) {
    return new XchgCacheMetrics(v[ACQUISITIONS], v[HITS], v[WAITS], v[DECODES], v[FAILED_DECODES], v[CANCELLATIONS], v[DERIVED_BUILDS], v[ENTRIES], v[RETAINED], v[BYTES_HELD], v[EVICTIONS], v[HOST_DECODES], v[HOST_MAPS], v[HOST_WAITS], v[HOST_FALLBACKS], v[HOST_EVICTIONS], v[BYTES_SHARED]);
  }
}
