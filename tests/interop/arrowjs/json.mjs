// json.mjs — the Apache Arrow JS side of tests/test_arrowjs_json.c: apache-arrow's own
// reader of Arrow's integration JSON (RecordBatchReader.from a parsed document) judges what
// `xchg cat --format arrow-json` wrote from the blocks of shuffle.mjs.
//
//   node json.mjs --check DIR NAME JSON [LIMIT]
//
// JSON, written by xchg from DIR/NAME.ipc (written by `node shuffle.mjs DIR`), must hold the
// rows of DIR/NAME.expect.json (the first LIMIT of them, when given), value by value and bit
// for bit, with the same fields.  Prints each difference (20 at most); exits 1 if there is
// any, or if apache-arrow cannot read JSON.
import fs from "node:fs";
import path from "node:path";
import * as A from "apache-arrow";
import { canon, fieldsOf } from "./shuffle.mjs";

// apache-arrow reads a MONTH_DAY_NANO interval's nanoseconds as a string or a number
// (BigInt of either), but JSON.parse would round a number past 2^53 before it gets there:
// the digits are quoted first, the value unchanged.
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

const [mode, dir, name, file, limit] = process.argv.slice(2);
if (mode !== "--check" || !file) {
  console.error("usage: node json.mjs --check DIR NAME JSON [LIMIT]");
  process.exit(2);
}
process.exit(check(dir, name, file, limit === undefined ? undefined : Number(limit)) ? 0 : 1);
