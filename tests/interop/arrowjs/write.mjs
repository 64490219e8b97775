// write.mjs — the Apache Arrow JS side of tests/test_arrowjs.c.
//
//   node write.mjs OUTDIR
//
// Writes every case below three times, with apache-arrow's own writers:
//   OUTDIR/NAME.arrow   the IPC file format (RecordBatchFileWriter, through
//                       tableToIPC(table, "file")), which puts the schema only
//                       in the footer, not as a message after the magic;
//   OUTDIR/NAME.stream  the IPC stream format of the same table;
//   OUTDIR/NAME.json    Arrow's integration JSON of the same table
//                       (RecordBatchJSONWriter), the values to compare with.
// and prints one line per case: "NAME ROWS BATCHES json|nojson" (whether
// NAME.json was written).
//
//   node write.mjs --read FILE...
//
// Reads every FILE (Arrow IPC written by xchg) with apache-arrow and prints,
// per file, one JSON line {"file", "rows", "batches", "columns": {NAME:
// [values...]}} with every value as JSON (64-bit integers as decimal strings).
import fs from "node:fs";
import path from "node:path";
import {
  Bool, Dictionary, Float64, Int32, Int64, List, RecordBatchJSONWriter, Struct, Table, Utf8,
  Field, makeVector, tableFromArrays, tableFromIPC, tableToIPC, vectorFromArray,
} from "apache-arrow";

// Rows cut into batches of `per` rows: the file writer then writes one
// record batch block per slice (and the dictionaries once, before the first).
function inBatches(table, per) {
  const batches = [];
  for (let at = 0; at < table.numRows; at += per) batches.push(...table.slice(at, at + per).batches);
  return new Table(batches);
}

function primitives(n) {
  const ints = [], longs = [], doubles = [], strings = [], bools = [];
  for (let i = 0; i < n; i++) {
    ints.push(i % 7 === 3 ? null : i * 37 - 1000);
    longs.push(i % 11 === 5 ? null : BigInt(i) * 1234567890123n - (1n << 62n));
    doubles.push(i % 5 === 1 ? null : i / 8 - 3.25);
    strings.push(i % 6 === 2 ? null : "row " + i + (i % 3 ? " ünï" : ""));
    bools.push(i % 9 === 4 ? null : i % 2 === 0);
  }
  return tableFromArrays({
    i32: vectorFromArray(ints, new Int32()),
    i64: vectorFromArray(longs, new Int64()),
    f64: vectorFromArray(doubles, new Float64()),
    str: vectorFromArray(strings, new Utf8()),
    flag: vectorFromArray(bools, new Bool()),
  });
}

function nested(n) {
  const colours = ["red", "green", "blue", "amber"];
  const dict = [], lists = [], structs = [];
  for (let i = 0; i < n; i++) {
    dict.push(i % 8 === 7 ? null : colours[(i * 3) % colours.length]);
    lists.push(i % 10 === 9 ? null : Array.from({ length: i % 4 }, (_, k) => i * 10 + k));
    structs.push(i % 13 === 6 ? null : { a: i, b: "s" + (i % 5) });
  }
  return tableFromArrays({
    colour: vectorFromArray(dict, new Dictionary(new Utf8(), new Int32())),
    ints: vectorFromArray(lists, new List(new Field("item", new Int32(), true))),
    pair: vectorFromArray(structs, new Struct([new Field("a", new Int32(), true), new Field("b", new Utf8(), true)])),
  });
}

// Each case, and whether its integration JSON is written: apache-arrow's
// JSON writer fails on a record batch of zero rows (data.clone is not a
// function), so empty_batch is compared with its stream only.
const cases = {
  primitives: [() => inBatches(primitives(1000), 300), true],
  dictionaries: [() => inBatches(nested(500), 128), true],
  one_batch: [() => primitives(64), true],
  zero_batches: [() => new Table(primitives(0).schema), true],
  empty_batch: [() => primitives(0), false],
};

// The JSON writer leaves "batches" out when there are none.
async function integrationJson(table) {
  const doc = JSON.parse(await RecordBatchJSONWriter.writeAll(table).toString());
  doc.batches ??= [];
  return JSON.stringify(doc);
}

async function writeCases(outdir) {
  for (const [name, [make, withJson]] of Object.entries(cases)) {
    const table = make();
    fs.writeFileSync(path.join(outdir, name + ".arrow"), tableToIPC(table, "file"));
    fs.writeFileSync(path.join(outdir, name + ".stream"), tableToIPC(table, "stream"));
    if (withJson) fs.writeFileSync(path.join(outdir, name + ".json"), await integrationJson(table));
    console.log(`${name} ${table.numRows} ${table.batches.length} ${withJson ? "json" : "nojson"}`);
  }
}

function jsonValue(v) {
  if (typeof v === "bigint") return v.toString();
  if (v === null || typeof v !== "object") return v;
  if (typeof v.toArray === "function" && !(v instanceof Map)) return Array.from(v.toArray(), jsonValue);
  if (typeof v.toJSON === "function") return jsonValue(v.toJSON());
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonValue(x)]));
}

function readFiles(files) {
  for (const file of files) {
    const table = tableFromIPC(fs.readFileSync(file));
    const columns = {};
    for (const field of table.schema.fields) {
      const column = table.getChild(field.name);
      columns[field.name] = Array.from({ length: table.numRows }, (_, i) => jsonValue(column.get(i)));
    }
    console.log(JSON.stringify({ file: path.basename(file), rows: table.numRows, batches: table.batches.length, columns }));
  }
}

const args = process.argv.slice(2);
if (args[0] === "--read") readFiles(args.slice(1));
else if (args.length === 1) await writeCases(args[0]);
else {
  console.error("usage: node write.mjs OUTDIR | node write.mjs --read FILE...");
  process.exit(2);
}
