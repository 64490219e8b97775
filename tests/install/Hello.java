import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.xchg.StreamCodec;
import org.xchg.Xchg;
import org.xchg.XchgInputStream;

/**
 * Built against the installed xchg.jar alone and run with the installed
 * JNI library found on java.library.path (tests/install/java.sh): bytes
 * go through the native stream reader and back, and a bad stream's error
 * comes back as an exception naming its byte offset.
 */
public final class Hello {
  public static void main(String[] args) throws IOException {
    byte[] text = "hello from xchg".getBytes(StandardCharsets.UTF_8);
    try (XchgInputStream in = new XchgInputStream(chunks(text), StreamCodec.NONE)) {
      String version = Xchg.class.getPackage().getImplementationVersion();
      System.out.println(new String(in.readAllBytes(), StandardCharsets.UTF_8) + " " + version);
    }
    try (XchgInputStream in = new XchgInputStream(chunks(text), StreamCodec.LZ4_JAVA)) {
      in.readAllBytes();
      System.out.println("a bad lz4-java stream was read");
    } catch (IOException e) {
      System.out.println("refused: " + e.getMessage());
    }
    System.out.println("native bytes held: " + Xchg.allocatedBytes());
    System.out.println("native library: " + Xchg.version());
  }

  private static ByteBuffer[] chunks(byte[] bytes) {
    return new ByteBuffer[] {ByteBuffer.wrap(bytes)};
  }
}
