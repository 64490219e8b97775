// shuffle.mjs — the Apache Arrow JS side of tests/test_shuffle_arrowjs.c: shuffle blocks
// (small IPC streams) that apache-arrow writes, every type it writes, for the shuffle reader.
//
//   node shuffle.mjs OUTDIR
//
// Writes, for each case NAME below, blocks made with a seeded random generator: IPC streams
// of 0, 1, 7, 63, 64, 65, 1000... rows, some of several record batches (empty ones among
// them, some of bare Data whose buffers are left out), some sliced from longer batches (so
// apache-arrow writes offsets and bitmaps of its own), body compression none, LZ4_FRAME or
// ZSTD (codecs.mjs); columns all null, without nulls, null at odd rows or at random, nested
// nulls; dictionaries the same in every block or replaced, between blocks and inside one.
//   OUTDIR/NAME.ipc          the streams one after another
//   OUTDIR/NAME.comet        the same streams, each in a Comet block of codec NONE
//   OUTDIR/NAME.expect.json  the rows, as apache-arrow reads each stream back
// and prints "NAME COLUMNS ROWS BLOCKS DICTIONARIES" per case.
//
//   node shuffle.mjs --check LIST
//
// LIST holds lines "NAME FILE MIN_ROWS COLUMNS": FILE, Arrow IPC that xchg wrote from the
// blocks of NAME (beside LIST), must hold NAME's rows, value by value and bit for bit, of
// the columns COLUMNS ("-": all; else their indices), no empty batch, and every batch but
// the last at least MIN_ROWS rows.  Prints each difference; exits 1 if there is any.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";
import * as A from "apache-arrow";
import { BufferRegion } from "apache-arrow/ipc/metadata/message";
import { lz4FrameEncode, lz4FrameDecode, zstdEncode, zstdDecode } from "./codecs.mjs";

const { Type, DataType, Field, Schema, Struct, RecordBatch, Table, makeData, makeVector, makeBuilder } = A;

A.compressionRegistry.set(A.CompressionType.LZ4_FRAME, { encode: lz4FrameEncode, decode: lz4FrameDecode });
A.compressionRegistry.set(A.CompressionType.ZSTD, { encode: zstdEncode, decode: zstdDecode });

// apache-arrow 21.2.0 prefixes a compressed buffer with its compressed length, where Arrow's
// format (Message.fbs, BodyCompression) wants the uncompressed one, and its own reader
// ignores it: the same method, with the length the format asks for.
A.RecordBatchWriter.prototype._compressBodyBuffers = function (buffers) {
  const codec = A.compressionRegistry.get(this._compression.type);
  const out = [], regions = [];
  let at = 0;
  for (const buffer of buffers) {
    const raw = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    if (raw.length === 0) {
      out.push(new Uint8Array(0), new Uint8Array(0));
      regions.push(new BufferRegion(at, 0));
      continue;
    }
    const packed = codec.encode(raw);
    const shrinks = packed.length < raw.length;
    const prefix = new Uint8Array(8);
    new DataView(prefix.buffer).setBigInt64(0, BigInt(shrinks ? raw.length : -1), true);
    out.push(prefix, shrinks ? packed : new Uint8Array(raw));
    at = (at + 7) & ~7;
    regions.push(new BufferRegion(at, 8 + (shrinks ? packed : raw).length));
    at += 8 + (shrinks ? packed : raw).length;
  }
  return { byteLength: (at + 7) & ~7, bufferRegions: regions, buffers: out };
};

// ---- seeded random values
let seed = 20261206;
function rnd() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const rbytes = (n) => Uint8Array.from({ length: n }, () => ri(256));
const words = ["", "a", "ünï", "hello world, long enough for a view", "x".repeat(13), "🙂", "0123456789ab"];
const rstr = () => (rnd() < 0.6 ? pick(words) : Array.from({ length: ri(20) }, () => String.fromCharCode(97 + ri(26))).join(""));
const rbin = () => rbytes(pick([0, 1, 5, 12, 13, 40]));
const maybe = (f) => () => (rnd() < 0.2 ? null : f());
const rint = () => ri(2000) - 1000;

// Which rows are valid: none null, all null, the odd rows null, every 7th, or at random.
function validity(n, mode = pick(["none", "none", "all", "odd", "seventh", "random", "random"])) {
  return Array.from({ length: n }, (_, i) =>
    mode === "none" ? true : mode === "all" ? false : mode === "odd" ? i % 2 === 0 : mode === "seventh" ? i % 7 !== 3 : rnd() > 0.3);
}
function bitmap(valid) {
  const bits = new Uint8Array(((valid.length + 63) >> 6) << 3);
  let nulls = 0;
  valid.forEach((v, i) => (v ? (bits[i >> 3] |= 1 << (i & 7)) : nulls++));
  return { nullCount: nulls, nullBitmap: nulls ? bits : undefined };
}

// Fixed-width values: random bytes, fixed up where the format restricts them.
function fixed(type, n, valid, fix) {
  const stride = makeData({ type, length: 0 }).stride;
  const values = new type.ArrayType(n * stride);
  new Uint8Array(values.buffer).set(rbytes(values.byteLength));
  if (fix) for (let i = 0; i < n; i++) fix(values, i, stride);
  return makeData({ type, length: n, ...bitmap(valid), data: values });
}
function built(type, n, valid, value, opts = {}) {
  const b = makeBuilder({ type, nullValues: [null], ...opts });
  for (let i = 0; i < n; i++) b.append(valid[i] ? value(i) : null);
  return b.finish().flush();
}
function decimal(bits, precision) {
  return (v, i, stride) => {
    let x = 0n;
    for (let d = ri(precision) + 1; d > 0; d--) x = x * 10n + BigInt(ri(10));
    let u = BigInt.asUintN(bits, rnd() < 0.5 ? -x : x);
    for (let w = 0; w < bits / 32; w++, u >>= 32n) v[i * stride + w] = Number(u & 0xffffffffn);
  };
}

// The columns: name -> [type, make(n, valid, special)].
function columns() {
  const c = {};
  const flat = (name, type, fix) => (c[name] = [type, (n, v) => fixed(type, n, v, fix)]);
  const varlen = (name, type, value) => (c[name] = [type, (n, v) => built(type, n, v, value)]);
  for (const [name, type] of [["i8", new A.Int8()], ["i16", new A.Int16()], ["i32", new A.Int32()], ["i64", new A.Int64()],
    ["u8", new A.Uint8()], ["u16", new A.Uint16()], ["u32", new A.Uint32()], ["u64", new A.Uint64()],
    ["f16", new A.Float16()], ["f32", new A.Float32()], ["f64", new A.Float64()]]) flat(name, type);
  varlen("bool", new A.Bool(), () => rnd() < 0.5);
  c.null = [new A.Null(), (n) => makeData({ type: new A.Null(), length: n })];
  flat("date_d", new A.DateDay());
  flat("date_ms", new A.DateMillisecond(), (v, i) => (v[i] = BigInt(ri(40000) - 20000) * 86400000n));
  flat("time_s", new A.TimeSecond(), (v, i) => (v[i] = ri(86400)));
  flat("time_ms", new A.TimeMillisecond(), (v, i) => (v[i] = ri(86400000)));
  flat("time_us", new A.TimeMicrosecond(), (v, i) => (v[i] = BigInt(ri(86400000)) * 1000n + BigInt(ri(1000))));
  flat("time_ns", new A.TimeNanosecond(), (v, i) => (v[i] = BigInt(ri(86400000)) * 1000000n + BigInt(ri(1000000))));
  flat("ts_s", new A.TimestampSecond());
  flat("ts_ms", new A.TimestampMillisecond("UTC"));
  flat("ts_us", new A.TimestampMicrosecond("Europe/Paris"));
  flat("ts_ns", new A.TimestampNanosecond());
  flat("dur_s", new A.DurationSecond());
  flat("dur_ns", new A.DurationNanosecond());
  flat("iv_ym", new A.IntervalYearMonth());
  flat("iv_dt", new A.IntervalDayTime());
  flat("iv_mdn", new A.IntervalMonthDayNano());
  flat("dec128", new A.Decimal(5, 38, 128), decimal(128, 38));
  flat("dec256", new A.Decimal(10, 76, 256), decimal(256, 76));
  flat("fsb3", new A.FixedSizeBinary(3));
  varlen("utf8", new A.Utf8(), rstr);
  varlen("lutf8", new A.LargeUtf8(), rstr);
  varlen("bin", new A.Binary(), rbin);
  varlen("lbin", new A.LargeBinary(), rbin);
  varlen("utf8v", new A.Utf8View(), rstr);
  varlen("binv", new A.BinaryView(), rbin);
  const some = (value) => () => Array.from({ length: pick([0, 0, 1, 2, 3, 7]) }, value);
  const li32 = new A.List(new Field("item", new A.Int32(), true));
  varlen("list_i32", li32, some(maybe(rint)));
  varlen("list_utf8", new A.List(new Field("item", new A.Utf8(), true)), some(maybe(rstr)));
  varlen("llist_i64", new A.LargeList(new Field("item", new A.Int64(), true)), some(maybe(() => BigInt(ri(1e9)) * 1000003n)));
  varlen("fsl_i16", new A.FixedSizeList(3, new Field("item", new A.Int16(), true)), () => [0, 1, 2].map(maybe(rint)));
  varlen("fsl_utf8", new A.FixedSizeList(2, new Field("item", new A.Utf8(), true)), () => [0, 1].map(maybe(rstr)));
  const st = new Struct([new Field("a", new A.Int32(), true), new Field("b", new A.Utf8(), true),
    new Field("c", new Struct([new Field("d", new A.Bool(), true)]), true)]);
  const struct = () => ({ a: maybe(rint)(), b: maybe(rstr)(), c: maybe(() => ({ d: maybe(() => rnd() < 0.5)() }))() });
  varlen("struct", st, struct);
  varlen("list_struct", new A.List(new Field("item", st, true)), some(maybe(struct)));
  varlen("struct_list", new Struct([new Field("xs", li32, true), new Field("s", new A.Utf8(), true)]),
    () => ({ xs: maybe(some(maybe(rint)))(), s: maybe(rstr)() }));
  varlen("map", new A.Map_(new Field("entries", new Struct([new Field("key", new A.Utf8(), false), new Field("value", new A.Int32(), true)]), false)),
    () => new Map(Array.from({ length: pick([0, 1, 2, 4]) }, (_, j) => ["k" + j + rstr(), maybe(rint)()])));
  const kids = () => [new Field("i", new A.Int32(), true), new Field("s", new A.Utf8(), true)];
  // apache-arrow's union builder leaves a sparse union's children shorter than the union (up
  // to the last row of each), which Columnar.rst forbids: made by hand, children whole.
  const sparse = new A.SparseUnion([0, 1], kids());
  c.sunion = [sparse, (n) => makeData({ type: sparse, length: n, nullCount: 0, typeIds: Int8Array.from({ length: n }, () => ri(2)),
    children: [fixed(new A.Int32(), n, validity(n, "random")), built(new A.Utf8(), n, validity(n, "random"), rstr)] })];
  // special: a string at row 0 and numbers after it; sliced from row 1, apache-arrow writes
  // the string child empty, its offsets buffer left out.
  const dense = new A.DenseUnion([0, 1], kids());
  c.dunion = [dense, (n, _, special) => built(dense, n, new Array(n).fill(true),
    (i) => (special ? (i === 0 ? "first" : ri(100)) : rnd() < 0.5 ? ri(100) : rstr()),
    { valueToChildTypeId: (b, v) => (typeof v === "string" ? 1 : 0) })];
  return c;
}

function vectorOf(type, values) {
  const b = makeBuilder({ type, nullValues: [null] });
  values.forEach((x) => b.append(x));
  return b.finish().toVector();
}
function indices(type, dictionary, n, valid) {
  const idx = new type.indices.ArrayType(n);
  for (let i = 0; i < n; i++) idx[i] = typeof idx[0] === "bigint" ? BigInt(ri(dictionary.length)) : ri(dictionary.length);
  return makeData({ type, length: n, ...bitmap(valid), data: idx, dictionary });
}
const dictTypes = () => [
  ["dstr", new A.Dictionary(new A.Utf8(), new A.Int32(), 0)], ["dint", new A.Dictionary(new A.Int64(), new A.Int8(), 1)],
  ["du16", new A.Dictionary(new A.Utf8(), new A.Uint16(), 2)], ["dfloat", new A.Dictionary(new A.Float64(), new A.Int64(), 3)]];
const sharedDictionaries = () => [vectorOf(new A.Utf8(), ["red", "green", "", null, "blue", "ünï"]),
  vectorOf(new A.Int64(), [5n, -1n, 9007199254740993n, null]), vectorOf(new A.Utf8(), ["p", "q", "r"]),
  vectorOf(new A.Float64(), [0.5, -0, NaN, 1e300])];
const otherDictionaries = () => [vectorOf(new A.Utf8(), Array.from({ length: 1 + ri(6) }, maybe(rstr))),
  vectorOf(new A.Int64(), Array.from({ length: 1 + ri(5) }, () => BigInt(ri(1000)))), vectorOf(new A.Utf8(), ["p", "q", "r", "s"]),
  vectorOf(new A.Float64(), [1.5, 2.5])];

const rowCounts = [0, 1, 7, 63, 64, 65, 1000, 3, 17, 100, 129];

// The blocks of a case: IPC streams of the columns `names` (after an "id" column, unless
// noId), dictionary-encoded columns after them when dict is "same" or "replaced".
function blocks(names, nblocks, dict, noId) {
  const all = columns();
  const cols = names.map((n) => [n, ...all[n]]);
  const dicts = dict ? dictTypes() : [];
  const schema = new Schema([...(noId ? [] : [new Field("id", new A.Int32(), false)]),
    ...cols.map(([n, type]) => new Field(n, type, true)), ...dicts.map(([n, type]) => new Field(n, type, true))]);
  // apache-arrow writes a sliced view's buffer from twice the offset, and a sliced null
  // column's null_count as -1: those columns are never sliced
  const sliceable = !cols.some(([, t]) => DataType.isBinaryView(t) || DataType.isUtf8View(t) || DataType.isNull(t));
  let dictionaries = sharedDictionaries();
  let id = 0;
  const streams = [];
  for (let b = 0; b < nblocks; b++) {
    const nbatches = b === 0 ? 1 : rnd() < 0.3 ? 2 + ri(3) : rnd() < 0.05 ? 0 : 1;
    const batches = [];
    for (let j = 0; j < nbatches; j++) {
      const special = b === 0; // the first: 7 rows, sliced from 8 at row 1 where it may be
      const n = special ? 7 : rnd() < 0.15 ? 0 : pick(rowCounts);
      const extra = !sliceable ? 0 : special ? 1 : rnd() < 0.3 ? 1 + ri(9) : 0;
      const bare = n === 0 && rnd() < 0.5; // an empty batch of bare Data: no buffers at all
      const m = n + extra;
      const data = noId ? [] : [makeData({ type: new A.Int32(), length: m, nullCount: 0, data: Int32Array.from({ length: m }, (_, i) => id + i) })];
      id += m;
      for (const [, type, make] of cols)
        data.push(bare && !type.children?.length ? makeData({ type, length: 0 }) : make(m, validity(m), special));
      if (dict === "replaced" && b > 0 && rnd() < 0.4) dictionaries = otherDictionaries();
      dicts.forEach(([, type], q) => data.push(indices(type, dictionaries[q], m, validity(m))));
      let batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: m, nullCount: 0, children: data }));
      if (extra) {
        const at = special ? 1 : ri(extra + 1);
        batch = batch.slice(at, at + n);
      }
      batches.push(batch);
    }
    const codec = pick([null, null, A.CompressionType.LZ4_FRAME, A.CompressionType.ZSTD]);
    streams.push(A.tableToIPC(nbatches ? new Table(batches) : new Table(schema), "stream", codec));
  }
  return { schema, streams };
}

const cases = {
  primitive: { names: ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool"] },
  temporal: { names: ["date_d", "date_ms", "time_s", "time_ms", "time_us", "time_ns", "ts_s", "ts_ms", "ts_us", "ts_ns",
    "dur_s", "dur_ns", "iv_ym", "iv_dt", "iv_mdn", "dec128", "dec256", "fsb3"] },
  binary: { names: ["utf8", "lutf8", "bin", "lbin"] },
  unsliced: { names: ["utf8v", "binv", "null"] },
  nested: { names: ["list_i32", "list_utf8", "llist_i64", "fsl_i16", "fsl_utf8", "struct", "list_struct", "struct_list", "map"] },
  unions: { names: ["sunion", "dunion"] },
  dict_same: { names: ["i32"], dict: "same" },
  dict_replaced: { names: ["utf8", "list_i32"], dict: "replaced" },
  no_columns: { names: [], noId: true },
};

// ---- canonical values: bit for bit, whatever the layout
const hex = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("hex");
const elements = (ta, start, count) => new Uint8Array(ta.buffer, ta.byteOffset + start * ta.BYTES_PER_ELEMENT, count * ta.BYTES_PER_ELEMENT);
function fromVector(vector, i) {
  for (const d of vector.data) {
    if (i < d.length) return canon(d, i);
    i -= d.length;
  }
  throw new Error("dictionary index out of range");
}
// Row i of data (apache-arrow slices its buffers, but for bitmaps: data.offset).
function canon(data, i) {
  const t = data.type;
  if (t.typeId === Type.Null) return null;
  if (DataType.isUnion(t)) {
    const id = data.typeIds[i];
    const kid = data.children[t.typeIdToChildIndex[id]];
    return { type: id, value: canon(kid, t.mode === A.UnionMode.Dense ? data.valueOffsets[i] : i) };
  }
  if (!data.getValid(i)) return null;
  const offsets = data.valueOffsets;
  switch (t.typeId) {
    case Type.Bool: return ((data.values[(data.offset + i) >> 3] >> ((data.offset + i) & 7)) & 1) === 1;
    case Type.Int: case Type.Float: case Type.Decimal: case Type.Date: case Type.Time: case Type.Timestamp:
    case Type.Interval: case Type.Duration: case Type.FixedSizeBinary:
      return hex(elements(data.values, i * data.stride, data.stride));
    case Type.Utf8: case Type.LargeUtf8: case Type.Binary: case Type.LargeBinary:
      return hex(data.values.subarray(Number(offsets[i]), Number(offsets[i + 1])));
    case Type.Utf8View: return hex(Buffer.from(makeVector(data).get(i), "utf8"));
    case Type.BinaryView: return hex(makeVector(data).get(i));
    case Type.List: case Type.LargeList: case Type.Map:
      return Array.from({ length: Number(offsets[i + 1]) - Number(offsets[i]) }, (_, j) => canon(data.children[0], Number(offsets[i]) + j));
    case Type.FixedSizeList: return Array.from({ length: t.listSize }, (_, j) => canon(data.children[0], i * t.listSize + j));
    case Type.Struct: return Object.fromEntries(t.children.map((f, q) => [f.name, canon(data.children[q], i)]));
    case Type.Dictionary: return fromVector(data.dictionary, Number(data.values[i]));
    default: throw new Error(`no canonical value for ${t}`);
  }
}
const rowsOf = (batch) => Array.from({ length: batch.numRows }, (_, i) => JSON.stringify(batch.data.children.map((d) => canon(d, i))));
const fieldsOf = (schema) => schema.fields.map((f) => `${f.name}: ${f.type}`);

function comet(ipc, fields) {
  const header = Buffer.alloc(20);
  header.writeBigUInt64LE(BigInt(ipc.length + 12), 0);
  header.writeBigUInt64LE(BigInt(fields), 8);
  header.write("NONE", 16, "latin1");
  return Buffer.concat([header, ipc]);
}

function write(dir) {
  for (const [name, c] of Object.entries(cases)) {
    const { schema, streams } = blocks(c.names, 12, c.dict, c.noId);
    fs.writeFileSync(path.join(dir, name + ".ipc"), Buffer.concat(streams));
    fs.writeFileSync(path.join(dir, name + ".comet"), Buffer.concat(streams.map((s) => comet(s, schema.fields.length))));
    const rows = streams.flatMap((s) => A.tableFromIPC(s).batches.flatMap(rowsOf));
    fs.writeFileSync(path.join(dir, name + ".expect.json"), JSON.stringify({ fields: fieldsOf(schema), rows }));
    console.log(name, schema.fields.length, rows.length, streams.length, c.dict ? 1 : 0);
  }
}

function check(list) {
  const dir = path.dirname(list);
  let bad = 0, checked = 0;
  const fail = (what) => { if (bad++ < 20) console.log(what); };
  for (const line of fs.readFileSync(list, "utf8").split("\n").filter((l) => l)) {
    const [name, file, minRows, cols] = line.split(" ");
    const want = JSON.parse(fs.readFileSync(path.join(dir, name + ".expect.json"), "utf8"));
    const keep = cols === "-" ? want.fields.map((_, q) => q) : [...new Set(cols.split(",").map(Number))].sort((a, b) => a - b);
    const fields = keep.map((q) => want.fields[q]);
    const rows = want.rows.map((r) => JSON.stringify(keep.map((q) => JSON.parse(r)[q])));
    let table;
    try {
      table = A.tableFromIPC(fs.readFileSync(file));
    } catch (e) {
      fail(`${file}: apache-arrow cannot read it: ${e.message}`);
      continue;
    }
    checked++;
    if (JSON.stringify(fieldsOf(table.schema)) !== JSON.stringify(fields))
      fail(`${file}: columns ${fieldsOf(table.schema).join(", ")}; expected ${fields.join(", ")}`);
    const sizes = table.batches.map((b) => b.numRows);
    if (sizes.some((s) => s === 0)) fail(`${file}: an empty batch among batches of ${sizes}`);
    if (sizes.slice(0, -1).some((s) => s < Number(minRows))) fail(`${file}: batches of ${sizes} rows, not all of ${minRows} at least`);
    const got = table.batches.flatMap(rowsOf);
    if (got.length !== rows.length) fail(`${file}: ${got.length} rows, expected ${rows.length}`);
    const at = got.findIndex((r, i) => r !== rows[i]);
    if (at >= 0 && at < rows.length) fail(`${file}: row ${at} is ${got[at].slice(0, 400)}, expected ${rows[at].slice(0, 400)}`);
  }
  console.log(`${checked} outputs checked, ${bad} differences`);
  return bad === 0 && checked > 0;
}

// json.mjs reads the same cases and their rows: run as a script only.
export { canon, fieldsOf, rowsOf };
if (import.meta.url === url.pathToFileURL(process.argv[1]).href) {
  const [mode, arg] = process.argv.slice(2);
  if (mode === "--check") process.exit(check(arg) ? 0 : 1);
  write(mode);
}
