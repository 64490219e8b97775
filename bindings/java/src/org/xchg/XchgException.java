package org.xchg;

/**
 * An xchg failure: the status of the native call and xchg's own message,
 * which names what was wrong and where (byte offset, field, buffer).  When
 * Java code called back by xchg failed (an InputStream being read, say),
 * its exception is the cause.
 */
public class XchgException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The values of the C enum xchg_status, in order. */
  public enum Status {
    OK,
    INVALID_ARGUMENT,
    OUT_OF_MEMORY,
    IO,
    FORMAT,
    NOT_SUPPORTED,
    CANCELLED,
    LIMIT
  }

  private final Status status;

  /** Called from native code with an xchg_status value. */
  XchgException(int status, String message, Throwable cause) {
    super(message, cause);
    Status[] all = Status.values();
    this.status = status >= 0 && status < all.length ? all[status] : Status.IO;
  }

  public Status status() {
    return status;
  }

  /** True when the operation stopped because its kill check said so. */
  public boolean isCancelled() {
    return status == Status.CANCELLED;
  }
}
