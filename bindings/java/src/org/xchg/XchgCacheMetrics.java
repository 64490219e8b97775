package org.xchg;

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

  /** How many counters nMetrics fills, in the order of the fields. */
  static final int COUNT = 17;

  static XchgCacheMetrics of(long[] v) {
    return new XchgCacheMetrics(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10],
        v[11], v[12], v[13], v[14], v[15], v[16]);
  }
}
