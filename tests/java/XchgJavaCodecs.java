// XchgJavaCodecs — writes and reads streams with the Java codecs exactly as
// Spark configures them, for xchg's interoperability test
// (tests/java/java_codecs_driver.c runs it).
//
//   write CODEC COUNT IN OUT : OUT = COUNT streams of CODEC, each holding IN
//   read  CODEC IN OUT       : OUT = IN decoded (concatenated streams read on)
//   lz4frames IN DIR         : DIR/SIZE-FLAGS.lz4 = IN as one LZ4 frame by
//                              LZ4FrameOutputStream, for every maximum block
//                              size (64K, 256K, 1M, 4M) and every set of the
//                              flags b (block checksums), c (content checksum),
//                              s (content size); its blocks are independent
//                              (lz4-java writes no other)
//
// CODEC is lz4-java, snappy-java, zstd or snappy-framed.  The settings are
// Spark's (CompressionCodec.scala): lz4 with 32 KiB blocks, lz4-java's
// fastest compressor and an XXH32 checksum seeded 0x9747b28c; snappy with
// 32 KiB blocks; zstd level 1 behind a 32 KiB buffer.  snappy-framed is the
// snappy framing format (Comet's SNAP blocks), snappy-java's own framed
// streams with their defaults: 64 KiB chunks, each with its CRC-32C,
// verified when read.
import java.io.*;
import java.nio.file.*;

import com.github.luben.zstd.ZstdInputStream;
import com.github.luben.zstd.ZstdOutputStream;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.xxhash.XXHashFactory;
import org.xerial.snappy.SnappyFramedInputStream;
import org.xerial.snappy.SnappyFramedOutputStream;
import org.xerial.snappy.SnappyInputStream;
import org.xerial.snappy.SnappyOutputStream;

public class XchgJavaCodecs {
  static final int BLOCK_SIZE = 32 * 1024;
  static final int SPARK_LZ4_SEED = 0x9747b28c;

  static OutputStream compressor(String codec, OutputStream out) throws IOException {
    switch (codec) {
      case "lz4-java":
        return new LZ4BlockOutputStream(out, BLOCK_SIZE, LZ4Factory.fastestInstance().fastCompressor(),
            XXHashFactory.fastestInstance().newStreamingHash32(SPARK_LZ4_SEED).asChecksum(), false);
      case "snappy-java":
        return new SnappyOutputStream(out, BLOCK_SIZE);
      case "snappy-framed":
        return new SnappyFramedOutputStream(out);
      case "zstd":
        return new BufferedOutputStream(new ZstdOutputStream(out, 1), BLOCK_SIZE);
      default:
        throw new IllegalArgumentException("unknown codec " + codec);
    }
  }

  static InputStream decompressor(String codec, InputStream in) throws IOException {
    switch (codec) {
      case "lz4-java":
        // Spark reads concatenated streams: stopOnEmptyBlock = false.
        return new LZ4BlockInputStream(in, LZ4Factory.fastestInstance().fastDecompressor(),
            XXHashFactory.fastestInstance().newStreamingHash32(SPARK_LZ4_SEED).asChecksum(), false);
      case "snappy-java":
        return new SnappyInputStream(in);
      case "snappy-framed":
        return new SnappyFramedInputStream(in);
      case "zstd":
        return new BufferedInputStream(new ZstdInputStream(in), BLOCK_SIZE);
      default:
        throw new IllegalArgumentException("unknown codec " + codec);
    }
  }

  static void lz4Frames(byte[] payload, String dir) throws IOException {
    String[] sizes = {"64K", "256K", "1M", "4M"};
    LZ4FrameOutputStream.BLOCKSIZE[] blockSizes = {LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
        LZ4FrameOutputStream.BLOCKSIZE.SIZE_256KB, LZ4FrameOutputStream.BLOCKSIZE.SIZE_1MB,
        LZ4FrameOutputStream.BLOCKSIZE.SIZE_4MB};
    for (int s = 0; s < sizes.length; s++) {
      for (int f = 0; f < 8; f++) {
        java.util.List<LZ4FrameOutputStream.FLG.Bits> bits = new java.util.ArrayList<>();
        bits.add(LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE);
        String flags = "";
        if ((f & 1) != 0) { bits.add(LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM); flags += "b"; }
        if ((f & 2) != 0) { bits.add(LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM); flags += "c"; }
        if ((f & 4) != 0) { bits.add(LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE); flags += "s"; }
        Path out = Paths.get(dir, sizes[s] + "-" + flags + ".lz4");
        try (OutputStream c = new LZ4FrameOutputStream(Files.newOutputStream(out), blockSizes[s],
                 (f & 4) != 0 ? payload.length : -1L, LZ4Factory.fastestInstance().fastCompressor(),
                 XXHashFactory.fastestInstance().hash32(),
                 bits.toArray(new LZ4FrameOutputStream.FLG.Bits[0]))) {
          c.write(payload);
        }
      }
    }
  }

  public static void main(String[] args) throws IOException {
    if (args.length >= 3 && args[0].equals("lz4frames")) {
      lz4Frames(Files.readAllBytes(Paths.get(args[1])), args[2]);
      return;
    }
    if (args.length >= 5 && args[0].equals("write")) {
      byte[] payload = Files.readAllBytes(Paths.get(args[3]));
      int count = Integer.parseInt(args[2]);
      try (OutputStream file = new FileOutputStream(args[4])) {
        for (int i = 0; i < count; i++) {
          // Each stream closed on its own, its bytes appended: as Spark
          // concatenates serialized streams.
          ByteArrayOutputStream one = new ByteArrayOutputStream();
          try (OutputStream c = compressor(args[1], one)) {
            // Odd-sized writes, as a serializer would do them.
            for (int off = 0; off < payload.length; off += 1000) {
              c.write(payload, off, Math.min(1000, payload.length - off));
            }
          }
          one.writeTo(file);
        }
      }
    } else if (args.length >= 4 && args[0].equals("read")) {
      try (InputStream in = decompressor(args[1], new BufferedInputStream(new FileInputStream(args[2])));
           OutputStream out = new FileOutputStream(args[3])) {
        byte[] buf = new byte[7777];
        int n;
        while ((n = in.read(buf)) > 0) out.write(buf, 0, n);
      }
    } else {
      System.err.println("usage: write CODEC COUNT IN OUT | read CODEC IN OUT");
      System.exit(2);
    }
  }
}
