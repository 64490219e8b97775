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
//
//   node check.mjs --gold GOLD.json.gz FILE...
//
// Compares, value by value, every column of each FILE (an Arrow gold file
// converted by xchg) that polars can hand to JS exactly (int32, utf8,
// utf8 dictionaries, 128-bit decimals as text, lists, fixed-size lists and
// structs of those; a null struct row is not compared, as polars shows it
// as an object) with
// Arrow's own JSON description of the data; prints one line per FILE and
// exits 1 on the first difference.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
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

// ---- --gold: values against Arrow's integration JSON ----------------------------

// A decimal's unscaled integer (a string in the JSON) as polars prints it
// cast to a string: the point `scale` digits from the right.
function decimalText(unscaled, scale) {
  const neg = unscaled.startsWith("-");
  const digits = (neg ? unscaled.slice(1) : unscaled).padStart(scale + 1, "0");
  const text = scale > 0 ? digits.slice(0, -scale) + "." + digits.slice(-scale) : digits;
  return (neg ? "-" : "") + text;
}

function isDecimal128(field) {
  return field.type.name === "decimal" && (field.type.bitWidth ?? 128) === 128;
}

function goldValues(field, col, dicts) {
  const valid = (i) => !col.VALIDITY || col.VALIDITY[i] === 1;
  const out = [];
  if (field.dictionary) {
    const dict = dicts.get(field.dictionary.id);
    const values = goldValues({ ...field, dictionary: undefined }, dict, dicts);
    if (values === undefined) return undefined;
    for (let i = 0; i < col.count; i++) out.push(valid(i) ? values[col.DATA[i]] : null);
    return out;
  }
  const t = field.type.name;
  const child = (k) => goldValues(field.children[k], col.children[k], dicts);
  for (let i = 0; i < col.count; i++) {
    if (!valid(i)) { out.push(null); continue; }
    if (t === "int" && field.type.bitWidth === 32) out.push(col.DATA[i]);
    else if (t === "utf8") out.push(col.DATA[i]);
    else if (isDecimal128(field)) out.push(decimalText(col.DATA[i], field.type.scale));
    else if (t === "list") { const c = child(0); out.push(c.slice(col.OFFSET[i], col.OFFSET[i + 1])); }
    else if (t === "fixedsizelist") { const n = field.type.listSize, c = child(0); out.push(c.slice(i * n, i * n + n)); }
    else if (t === "struct") {
      const o = {};
      field.children.forEach((f, k) => { o[f.name] = child(k)[i]; });
      out.push(o);
    } else return undefined; // a type polars does not hand to JS exactly
  }
  return out;
}

function checkGold(goldPath, files) {
  const doc = JSON.parse(zlib.gunzipSync(fs.readFileSync(goldPath)).toString("utf8"));
  const fields = doc.schema.fields;
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    const df = isFileFormat(bytes) ? pl.readIPC(bytes) : pl.readIPCStream(bytes);
    let row = 0, checked = 0;
    for (const batch of doc.batches) {
      // The dictionaries as written (this gold file replaces none).
      const dicts = new Map((doc.dictionaries || []).map((d) => [d.id, d.data.columns[0]]));
      fields.forEach((field, k) => {
        const want = goldValues(field, batch.columns[k], dicts);
        if (want === undefined) return;
        // polars hands decimals to JS only as text
        const column = isDecimal128(field) ? df.getColumn(field.name).cast(pl.Utf8) : df.getColumn(field.name);
        const got = column.slice(row, batch.count).toArray();
        // polars hands a null struct row to JS as an object of its fields'
        // values: such rows are left out on both sides.
        if (field.type.name === "struct")
          for (let i = 0; i < want.length; i++) if (want[i] === null) got[i] = null;
        const w = JSON.stringify(want), g = JSON.stringify(got);
        if (w !== g) {
          console.error(`${path.basename(file)}: column ${field.name}, rows ${row}+${batch.count}:\n  want ${w.slice(0, 300)}\n  got  ${g.slice(0, 300)}`);
          process.exit(1);
        }
        checked++;
      });
      row += batch.count;
    }
    if (df.height !== row || checked === 0) {
      console.error(`${path.basename(file)}: ${df.height} rows (want ${row}), ${checked} columns checked`);
      process.exit(1);
    }
    console.log(JSON.stringify({ file: path.basename(file), rows: row, columns_checked: checked }));
  }
}

if (process.argv[2] === "--gold") {
  checkGold(process.argv[3], process.argv.slice(4));
  process.exit(0);
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
