package org.xchg;

import java.lang.annotation.Native;
import java.nio.charset.StandardCharsets;

/**
 * An xchg failure: the status of the native call and xchg's own message,
 * which names what was wrong and where (byte offset, field, buffer).  When
 * Java code called back by xchg failed (an InputStream being read, say),
 * its exception is the cause.
 */
public class XchgException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The values of the C enum xchg_status (checked against it when the library is built). */
  @Native static final int XCHG_OK = 0;

  @Native static final int XCHG_EINVAL = 1;
  @Native static final int XCHG_ENOMEM = 2;
  @Native static final int XCHG_EIO = 3;
  @Native static final int XCHG_EFORMAT = 4;
  @Native static final int XCHG_ENOTSUP = 5;
  @Native static final int XCHG_ECANCELLED = 6;
  @Native static final int XCHG_ELIMIT = 7;
  @Native static final int XCHG_EAGAIN = 8;

  /** The statuses of xchg_status, each with its C value. */
  public enum Status {
    OK(XCHG_OK),
    INVALID_ARGUMENT(XCHG_EINVAL),
    OUT_OF_MEMORY(XCHG_ENOMEM),
    IO(XCHG_EIO),
    FORMAT(XCHG_EFORMAT),
    NOT_SUPPORTED(XCHG_ENOTSUP),
    CANCELLED(XCHG_ECANCELLED),
    LIMIT(XCHG_ELIMIT),
    /**
     * More input is needed before anything can be returned: not a failure,
     * and never thrown by the readers here ({@code XchgShuffleReader.next}
     * returns {@code NEED_INPUT}); listed so that every C status maps to
     * its own value.
     */
    AGAIN(XCHG_EAGAIN);

    final int id;

    Status(int id) {
      this.id = id;
    }

    /** The status whose C value is id; IO for a value this version does not know. */
    static Status of(int id) {
      for (Status s : values()) if (s.id == id) return s;
      return IO;
    }
  }

  private final Status status;

  XchgException(int status, String message, Throwable cause) {
    super(message, cause);
    this.status = Status.of(status);
  }

  /**
   * Called from native code with an xchg_status value and the message's
   * UTF-8 bytes: a message may quote a field name of the input, which JNI's
   * modified UTF-8 would garble (a character outside the BMP) or misread (bytes
   * that are not UTF-8, shown here as U+FFFD).
   */
  XchgException(int status, byte[] message, Throwable cause) {
    this(status, new String(message, StandardCharsets.UTF_8), cause);
  }

  public Status status() {
    return status;
  }

  /** True when the operation stopped because its kill check said so. */
  public boolean isCancelled() {
    return status == Status.CANCELLED;
  }
}
