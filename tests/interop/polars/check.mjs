// check.mjs — the nodejs-polars side of the xchg interop test (tests/test_polars.c).
//
//   node check.mjs OUTDIR FILE...
//
// Reads every FILE (Arrow IPC written by xchg; the file or stream format is
// told by the "ARROW1" magic) with nodejs-polars and prints, one JSON line
// per file, the sums of every column as tests/test_polars.c defines them:
// Int64/Int32 values and Float64 bit patterns added modulo 2^64, string
// bytes added up, Booleans counted when true, and nulls counted.  Sums are
// decimal strings, so that 64-bit values stay exact.
//
// Then writes the first FILE's data back out with polars, in both formats
// and with each of its codecs, as OUTDIR/polars_{file,stream}_{codec}.arrow,
// for xchg to read.
import fs from "node:fs";
import path from "node:path";
import pl from "nodejs-polars";

const MASK = (1n << 64n) - 1n;

function isFileFormat(buf) {
  return buf.length >= 6 && buf.subarray(0, 6).toString("latin1") === "ARROW1";
}

function columnSums(series) {
  const dtype = String(series.dtype).replace(/^DataType\((.*)\)$/, "$1");
  let sum = 0n;
  const nulls = series.nullCount();
  if (dtype.startsWith("Int64")) {
    // toTypedArray is exact for Int64 where get()/toArray() are not.
    for (const v of series.toTypedArray()) sum = (sum + BigInt.asUintN(64, v)) & MASK;
  } else if (dtype.startsWith("Int32")) {
    for (const v of series.toArray()) if (v !== null) sum = (sum + BigInt.asUintN(64, BigInt(v))) & MASK;
  } else if (dtype.startsWith("Float64")) {
    const view = new DataView(new ArrayBuffer(8));
    for (const v of series.toArray()) {
      if (v === null) continue;
      view.setFloat64(0, v, true);
      sum = (sum + view.getBigUint64(0, true)) & MASK;
    }
  } else if (dtype.startsWith("String") || dtype.startsWith("Utf8")) {
    for (const v of series.toArray()) {
      if (v === null) continue;
      for (const b of Buffer.from(v, "utf8")) sum += BigInt(b);
    }
  } else if (dtype.startsWith("Bool")) {
    for (const v of series.toArray()) if (v === true) sum += 1n;
  } else {
    throw new Error(`column ${series.name}: unexpected dtype ${dtype}`);
  }
  return { sum: sum.toString(), nulls };
}

const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) {
  console.error("usage: node check.mjs OUTDIR FILE...");
  process.exit(2);
}

let first = null;
for (const file of files) {
  const bytes = fs.readFileSync(file);
  // A string counts as a path only when it ends in .ipc: pass the bytes.
  const df = isFileFormat(bytes) ? pl.readIPC(bytes) : pl.readIPCStream(bytes);
  const columns = {};
  for (const name of df.columns) columns[name] = columnSums(df.getColumn(name));
  console.log(JSON.stringify({ file: path.basename(file), rows: df.height, columns }));
  if (first === null) first = df;
}

for (const codec of ["uncompressed", "lz4", "zstd"]) {
  fs.writeFileSync(path.join(outDir, `polars_file_${codec}.arrow`), first.writeIPC({ compression: codec }));
  fs.writeFileSync(path.join(outDir, `polars_stream_${codec}.arrow`), first.writeIPCStream({ compression: codec }));
}
