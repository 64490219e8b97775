// json.mjs — the Apache Arrow JS side of tests/test_arrowjs_json.c: apache-arrow's own
// reader of Arrow's integration JSON (RecordBatchReader.from a parsed document) judges what
// `xchg cat --format arrow-json` wrote from the blocks of shuffle.mjs, and from a few more.
//
//   node json.mjs --write DIR
//
// Writes, as shuffle.mjs writes its cases, DIR/NAME.ipc (one IPC stream) and
// DIR/NAME.expect.json for the cases below, values shuffle.mjs's random ones are unlikely
// to hold: dictionaries inside a list and a struct, half floats of every class, 64-bit
// extremes; prints their names, one a line.
//
//   node json.mjs --check DIR NAME JSON [LIMIT]
//
// JSON, written by xchg from DIR/NAME.ipc (written by `node shuffle.mjs DIR` or by --write),
// must hold the rows of DIR/NAME.expect.json (the first LIMIT of them, when given), value by
// value and bit for bit, with the same fields.  Prints each difference (20 at most); exits 1
// if there is any, or if apache-arrow cannot read JSON.
import fs from "node:fs";
import path from "node:path";
import * as A from "apache-arrow";
import { canon, fieldsOf, rowsOf } from "./shuffle.mjs";

// xchg writes a MONTH_DAY_NANO interval's nanoseconds as a JSON number; apache-arrow reads a
// string or a number (BigInt of either), but JSON.parse would round a number past 2^53
// before it gets there: the digits are quoted first, the value unchanged.
function parse(text) {
  return JSON.parse(text.replace(/"nanoseconds":(-?\d+)/g, '"nanoseconds":"$1"'));
}

// How a column's values are compared, when not bit for bit: a float's bits, except that every
// NaN is one (the integration JSON writes NaN as a word, which has no payload to keep); not
// at all for decimal256, which apache-arrow 21.2.0's JSON reader reads as 128-bit decimals
// (Int128.convertArray), whatever the bitWidth: the gold files (generated_decimal256) and
// the comparator of tests/support/arrow_json.c hold those.
function comparison(type) {
  if (A.DataType.isDecimal(type) && type.bitWidth === 256) return null;
  if (!A.DataType.isFloat(type) || type.precision === A.Precision.HALF) return (v) => v;
  const read = type.precision === A.Precision.SINGLE ? "readFloatLE" : "readDoubleLE";
  return (v) => (v !== null && Number.isNaN(Buffer.from(v, "hex")[read](0)) ? "NaN" : v);
}
const rowValues = (row, compare) => JSON.stringify(row.map((v, q) => (compare[q] ? compare[q](v) : "not compared")));

function check(dir, name, file, limit) {
  const want = JSON.parse(fs.readFileSync(path.join(dir, name + ".expect.json"), "utf8"));
  let bad = 0;
  const fail = (what) => { if (bad++ < 20) console.log(`${file}: ${what}`); };
  let table;
  try {
    const reader = A.RecordBatchReader.from(parse(fs.readFileSync(file, "utf8")));
    const batches = [...reader];
    table = batches.length ? new A.Table(batches) : new A.Table(reader.schema);
  } catch (e) {
    fail(`apache-arrow cannot read it: ${e.stack}`);
    return false;
  }
  const fields = fieldsOf(table.schema);
  if (JSON.stringify(fields) !== JSON.stringify(want.fields))
    fail(`fields ${fields.join(", ")}; expected ${want.fields.join(", ")}`);
  const compare = table.schema.fields.map((f) => comparison(f.type));
  const rows = want.rows.slice(0, limit ?? want.rows.length).map((r) => rowValues(JSON.parse(r), compare));
  const got = table.batches.flatMap((b) =>
    Array.from({ length: b.numRows }, (_, i) => rowValues(b.data.children.map((d, q) => (compare[q] ? canon(d, i) : null)), compare)));
  if (got.length !== rows.length) fail(`${got.length} rows, expected ${rows.length}`);
  for (let i = 0; i < Math.min(got.length, rows.length); i++)
    if (got[i] !== rows[i]) fail(`row ${i} is ${got[i].slice(0, 600)}, expected ${rows[i].slice(0, 600)}`);
  console.log(`${file}: ${got.length} rows read by apache-arrow, ${bad} differences`);
  return bad === 0;
}

const vector = (type, values) => {
  const b = A.makeBuilder({ type, nullValues: [null] });
  values.forEach((v) => b.append(v));
  return b.finish().toVector();
};
// A MONTH_DAY_NANO interval as apache-arrow's builder takes it: four int32 words.
const interval = (months, days, ns) => {
  const u = BigInt.asUintN(64, ns);
  return Int32Array.of(months, days, Number(u & 0xffffffffn) | 0, Number(u >> 32n) | 0);
};
const extraCases = {
  nested_dictionaries: () => ({
    words: vector(new A.List(new A.Field("item", new A.Dictionary(new A.Utf8(), new A.Int16(), 7), true)),
      [["a", "b"], null, ["b", null, "c"], [], ["c"]]),
    pair: vector(new A.Struct([new A.Field("d", new A.Dictionary(new A.Int32(), new A.Int8(), 8), true)]),
      [{ d: 5 }, { d: null }, null, { d: -7 }, { d: 5 }]),
  }),
  extremes: () => ({
    // 1.5, NaN, -0, infinity, the smallest subnormal and the largest finite half float
    half: A.makeVector({ type: new A.Float16(), data: Uint16Array.of(0x3e00, 0x7e01, 0x8000, 0x7c00, 0x0001, 0x7bff) }),
    u64: vector(new A.Uint64(), [2n ** 64n - 1n, 0n, null, 2n ** 63n, 1n, 2n ** 53n + 1n]),
    i64: vector(new A.Int64(), [-(2n ** 63n), 2n ** 63n - 1n, null, -1n, 0n, 2n ** 53n + 1n]),
    dur_ms: vector(new A.DurationMillisecond(), [1n, null, -5n, 2n ** 62n, 0n, -1n]),
    dur_us: vector(new A.DurationMicrosecond(), [1n, 2n, null, -(2n ** 62n), 0n, 7n]),
    mdn: vector(new A.IntervalMonthDayNano(), [interval(1, 2, 2n ** 53n + 1n), null, interval(-1, 0, -(2n ** 63n)),
      interval(0, 0, 0n), interval(2 ** 31 - 1, -(2 ** 31), 2n ** 63n - 1n), interval(3, 4, -1n)]),
  }),
};

function write(dir) {
  for (const [name, make] of Object.entries(extraCases)) {
    const table = new A.Table(make());
    fs.writeFileSync(path.join(dir, name + ".ipc"), A.tableToIPC(table, "stream"));
    const expect = { fields: fieldsOf(table.schema), rows: table.batches.flatMap(rowsOf) };
    fs.writeFileSync(path.join(dir, name + ".expect.json"), JSON.stringify(expect));
    console.log(name);
  }
}

const [mode, dir, name, file, limit] = process.argv.slice(2);
if (mode === "--write" && dir) {
  write(dir);
} else if (mode === "--check" && file) {
  process.exit(check(dir, name, file, limit === undefined ? undefined : Number(limit)) ? 0 : 1);
} else {
  console.error("usage: node json.mjs --write DIR | node json.mjs --check DIR NAME JSON [LIMIT]");
  process.exit(2);
}
