package org.xchg;

import static org.xchg.TestSupport.check;
import static org.xchg.TestSupport.scenario;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/**
 * The Java examples of bindings/java/README.md (its {@code ```java}
 * blocks, read from the README itself) compile against the API as they
 * are written: each becomes the body of a method whose parameters are the
 * names an example takes from its surroundings (the allocator, the
 * broadcast's chunks, the payloads, the fetcher, ...), its "...what the
 * caller does..." placeholders empty blocks.  Arrow Java, which the
 * examples call, is not on this machine: the few of its classes they name
 * are declared here, with Arrow Java's signatures.  The README's path is
 * the system property xchg.readme (ctest sets it).
 */
public final class XchgReadmeTest {
  private XchgReadmeTest() {}

  /** What an example may take from its surroundings, as method parameters. */
  private static final String SURROUNDINGS =
      "BufferAllocator allocator, ByteBuffer[] chunks, int id, Task taskContext, Task context,"
          + " byte[] schemaMessage, byte[][] payloads, long[] addresses, Iterator<InputStream> fetcher";

  /** Arrow Java's classes the examples name, with Arrow Java's signatures. */
  private static final String[][] ARROW = {
    {"org/apache/arrow/memory/BufferAllocator", "package org.apache.arrow.memory;"
        + " public interface BufferAllocator extends AutoCloseable {}"},
    {"org/apache/arrow/c/ArrowArray", "package org.apache.arrow.c;"
        + " public class ArrowArray implements AutoCloseable {"
        + " public static ArrowArray allocateNew(org.apache.arrow.memory.BufferAllocator a) { return null; }"
        + " public long memoryAddress() { return 0; } public void release() {} public void close() {} }"},
    {"org/apache/arrow/c/ArrowSchema", "package org.apache.arrow.c;"
        + " public class ArrowSchema implements AutoCloseable {"
        + " public static ArrowSchema allocateNew(org.apache.arrow.memory.BufferAllocator a) { return null; }"
        + " public long memoryAddress() { return 0; } public void release() {} public void close() {} }"},
    {"org/apache/arrow/c/CDataDictionaryProvider", "package org.apache.arrow.c;"
        + " public class CDataDictionaryProvider {}"},
    {"org/apache/arrow/c/Data", "package org.apache.arrow.c;"
        + " public final class Data { public static org.apache.arrow.vector.VectorSchemaRoot importVectorSchemaRoot("
        + " org.apache.arrow.memory.BufferAllocator a, ArrowArray array, ArrowSchema schema,"
        + " CDataDictionaryProvider provider) { return null; } }"},
    {"org/apache/arrow/vector/VectorSchemaRoot", "package org.apache.arrow.vector;"
        + " public class VectorSchemaRoot implements AutoCloseable { public void close() {} }"},
  };

  /** A source file held in memory. */
  private static final class Source extends SimpleJavaFileObject {
    private final String text;

    Source(String path, String text) {
      super(URI.create("string:///" + path + ".java"), Kind.SOURCE);
      this.text = text;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return text;
    }
  }

  /** An example: its first line in the README and its code. */
  record Example(int line, String code) {}

  /** The README's ```java blocks. */
  static List<Example> examples(String readme) {
    List<Example> out = new ArrayList<>();
    String[] lines = readme.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      if (!lines[i].equals("```java")) continue;
      StringBuilder code = new StringBuilder();
      int first = i + 2; // 1-based, the line after the fence
      while (++i < lines.length && !lines[i].equals("```")) code.append(lines[i]).append('\n');
      out.add(new Example(first, code.toString()));
    }
    return out;
  }

  /** The example as a class: its code the body of a method taking its surroundings. */
  static String asClass(Example e, int n) {
    // "...probe...", "...import and use it...", a lone "...": what the caller does there.
    String body = Pattern.compile("\\.\\.\\.(?:[^\\n]*?\\.\\.\\.)?").matcher(e.code()).replaceAll("{}");
    return "package org.xchg;\n"
        + "import java.io.*; import java.nio.*; import java.util.*;\n"
        + "import org.apache.arrow.c.*; import org.apache.arrow.memory.*; import org.apache.arrow.vector.*;\n"
        + "class ReadmeExample" + n + " {\n"
        + "  interface Task { boolean isInterrupted(); }\n"
        + "  static void run(" + SURROUNDINGS + ") throws Exception {\n"
        + body
        + "  }\n}\n";
  }

  /** Compiles the examples with the Arrow classes; the errors, each naming its README line. */
  static List<String> compile(List<Example> examples) throws IOException {
    List<Source> sources = new ArrayList<>();
    for (String[] c : ARROW) sources.add(new Source(c[0], c[1]));
    for (int n = 0; n < examples.size(); n++)
      sources.add(new Source("org/xchg/ReadmeExample" + n, asClass(examples.get(n), n)));
    Path out = Files.createTempDirectory("xchg-readme");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    List<String> options = List.of("-d", out.toString(), "-cp", System.getProperty("java.class.path"));
    boolean ok = javac.getTask(null, null, diagnostics, options, null, sources).call();
    List<String> errors = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      if (d.getKind() != Diagnostic.Kind.ERROR) continue;
      errors.add(where(d, examples) + ": " + d.getMessage(null));
    }
    if (!ok && errors.isEmpty()) errors.add("javac failed without an error");
    deleteTree(out);
    return errors;
  }

  /** "README line L" for a diagnostic in an example, else its file. */
  private static String where(Diagnostic<? extends JavaFileObject> d, List<Example> examples) {
    if (d.getSource() == null) return "javac";
    Matcher m = Pattern.compile("ReadmeExample(\\d+)").matcher(d.getSource().getName());
    if (!m.find()) return d.getSource().getName();
    // The example's code starts on line 7 of its class (see asClass).
    return "README line " + (examples.get(Integer.parseInt(m.group(1))).line() + d.getLineNumber() - 7);
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
    }
  }

  public static void main(String[] args) throws Exception {
    String path = System.getProperty("xchg.readme");
    if (path == null) throw new IllegalStateException("xchg.readme is not set: run the tests through ctest");
    String readme = Files.readString(Path.of(path), StandardCharsets.UTF_8);
    scenario("the README's Java examples compile as written", () -> {
      List<Example> examples = examples(readme);
      check(examples.size() >= 3, "examples found: " + examples.size());
      for (String error : compile(examples)) check(false, error);
    });
    TestSupport.exit();
  }
}
