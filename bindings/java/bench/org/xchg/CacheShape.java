package org.xchg;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Shape `cache` of shared/bench/SHAPES.md as a JVM engine caches it: `xchg
 * gen cache --sums` (a generator that shares no code with the reader, and
 * prints the sums each column must have) cut by IpcMessages into the
 * schema message and one payload per batch (its RecordBatch message).
 */
final class CacheShape {
  private CacheShape() {}

  static final int COLUMNS = 6;

  record Data(byte[] stream, byte[] schema, List<byte[]> payloads, long[] sums, long[] nulls, long rows) {}

  /** Runs `CLI gen cache --codec codec --rows rows --sums`; cli null means $XCHG_CLI. */
  static Data gen(String cli, String codec, long rows) throws IOException, InterruptedException {
    if (cli == null) cli = System.getenv("XCHG_CLI");
    if (cli == null || cli.isEmpty())
      throw new IllegalStateException("XCHG_CLI is not set: run the tests through ctest, or give --cli");
    Path out = Files.createTempFile("xchg-cache", ".arrows");
    try {
      Process p =
          new ProcessBuilder(cli, "gen", "cache", out.toString(), "-f", "--compression", codec, "--rows",
                  Long.toString(rows), "--sums")
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      String json;
      try (InputStream in = p.getInputStream()) {
        json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
      if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0)
        throw new IOException("xchg gen cache failed: " + json);
      long[] sums = new long[COLUMNS];
      long[] nulls = new long[COLUMNS];
      for (int i = 0; i < COLUMNS; i++) {
        Matcher m =
            Pattern.compile("\"c" + i + "\":\\s*\\{\"sum\":\\s*\"(\\d+)\",\\s*\"nulls\":\\s*(\\d+)")
                .matcher(json);
        if (!m.find()) throw new IOException("no sums for c" + i + " in " + json);
        sums[i] = Long.parseUnsignedLong(m.group(1));
        nulls[i] = Long.parseLong(m.group(2));
      }
      byte[] stream = Files.readAllBytes(out);
      byte[] schema = IpcMessages.bytes(stream, IpcMessages.split(stream).get(0));
      return new Data(stream, schema, IpcMessages.batchPayloads(stream), sums, nulls, rows);
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
