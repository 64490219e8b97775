package org.xchg;

/**
 * What a test needs to check a decoded column without Arrow Java: the sum
 * of its non-null values (integers added with wrap-around, as unsigned
 * 64-bit; booleans count their true values; strings and binaries add up
 * their bytes as unsigned bytes), its null count and its row count.
 */
record ColumnChecksum(long sum, long nulls, long rows) {}
