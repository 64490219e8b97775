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
//   node write.mjs --check NAME FILE
//
// Reads FILE (Arrow IPC written by xchg from NAME.stream) with apache-arrow
// and compares its schema and every value with the table of case NAME;
// exits 1 at the first difference.
import fs from "node:fs";
import path from "node:path";
import {
  Bool, Dictionary, Float64, Int32, Int64, List, RecordBatch, RecordBatchJSONWriter, Struct, Table,
  Utf8, Field, makeData, tableFromArrays, tableFromIPC, tableToIPC, vectorFromArray,
} from "apache-arrow";

// Rows [from, from + n) of each column.  The batches of a case are made
// apart, not sliced from one table: apache-arrow's JSON writer writes a
// slice's offsets and list children as they are in the unsliced data.
function primitives(from, n) {
  const ints = [], longs = [], doubles = [], strings = [], bools = [];
  for (let i = from; i < from + n; i++) {
    ints.push(i % 7 === 3 ? null : i * 37 - 1000);
    longs.push(i % 11 === 5 ? null : BigInt(i) * 1234567890123n - (1n << 62n));
    doubles.push(i % 5 === 1 ? null : i / 8 - 3.25);
    strings.push(i % 6 === 2 ? null : "row " + i + (i % 3 ? " ünï" : ""));
    bools.push(i % 9 === 4 ? null : i % 2 === 0);
  }
  return {
    i32: vectorFromArray(ints, new Int32()),
    i64: vectorFromArray(longs, new Int64()),
    f64: vectorFromArray(doubles, new Float64()),
    str: vectorFromArray(strings, new Utf8()),
    flag: vectorFromArray(bools, new Bool()),
  };
}

// The dictionary-encoded column is sliced from one vector, so that every
// batch shares its dictionary and the file writer writes it once (the file
// format allows no replacement); its indices have no offsets to go wrong.
const colours = ["red", "green", "blue", "amber"];
const colourColumn = vectorFromArray(
  Array.from({ length: 500 }, (_, i) => (i % 8 === 7 ? null : colours[(i * 3) % colours.length])),
  new Dictionary(new Utf8(), new Int32()));

function nested(from, n) {
  const lists = [], structs = [];
  for (let i = from; i < from + n; i++) {
    lists.push(i % 10 === 9 ? null : Array.from({ length: i % 4 }, (_, k) => i * 10 + k));
    structs.push(i % 13 === 6 ? null : { a: i, b: "s" + (i % 5) });
  }
  return {
    colour: colourColumn.slice(from, from + n),
    ints: vectorFromArray(lists, new List(new Field("item", new Int32(), true))),
    pair: vectorFromArray(structs, new Struct([new Field("a", new Int32(), true), new Field("b", new Utf8(), true)])),
  };
}

// Batches of `per` rows out of `rows` (the last one shorter).
function inBatches(columns, rows, per) {
  const batches = [];
  for (let at = 0; at < rows; at += per) batches.push(...tableFromArrays(columns(at, Math.min(per, rows - at))).batches);
  return new Table(batches);
}

// An empty batch as apache-arrow makes one from bare Data (makeData of
// length 0): its body is empty, every buffer left out, offsets included.
function bareEmpty(schema) {
  const children = schema.fields.map((f) => makeData({ type: f.type, length: 0 }));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 0, nullCount: 0, children }));
}

function betweenBareEmpties() {
  const full = tableFromArrays(primitives(0, 40));
  return new Table([bareEmpty(full.schema), ...full.batches, bareEmpty(full.schema)]);
}

// An empty table with a dictionary-encoded column: apache-arrow writes its
// empty record batch and no dictionary batch, which Columnar.rst allows (a
// dictionary need only come before a batch that uses one of its values).
function emptyDictionary() {
  return tableFromArrays({
    colour: vectorFromArray([], new Dictionary(new Utf8(), new Int32())),
    ...primitives(0, 0),
  });
}

// Each case, and whether its integration JSON is written: apache-arrow's
// JSON writer fails on a record batch of zero rows (data.clone is not a
// function), so empty_batch, bare_empty_batches and empty_dictionary are
// compared with their stream only.
const cases = {
  primitives: [() => inBatches(primitives, 1000, 300), true],
  dictionaries: [() => inBatches(nested, 500, 128), true],
  one_batch: [() => tableFromArrays(primitives(0, 64)), true],
  zero_batches: [() => new Table(tableFromArrays(primitives(0, 0)).schema), true],
  empty_batch: [() => tableFromArrays(primitives(0, 0)), false],
  bare_empty_batches: [betweenBareEmpties, false],
  empty_dictionary: [emptyDictionary, false],
};

// apache-arrow's JSON writer departs from the integration format
// (Integration.rst in apache/arrow) in ways undone here, so that the strict
// comparator of tests/support/arrow_json.c can read it: it names struct
// types "struct_", writes signed 64-bit integers as unsigned, lets VALIDITY,
// OFFSET and DATA run on into the buffers' padding past "count", adds
// "isDelta" to dictionary batches (false here: the comparator knows no such
// key), and leaves "batches" out when there are none.  Nothing else is
// changed.
function fixFields(fields, byDictionaryId) {
  for (const field of fields) {
    if (field.type.name === "struct_") field.type.name = "struct";
    if (field.dictionary) byDictionaryId.set(field.dictionary.id, { ...field, dictionary: undefined });
    fixFields(field.children, byDictionaryId);
  }
}

function fixColumn(column, field) {
  const n = column.count;
  const type = field.dictionary ? field.dictionary.indexType : field.type;
  if (column.VALIDITY) column.VALIDITY = column.VALIDITY.slice(0, n);
  if (column.OFFSET) column.OFFSET = column.OFFSET.slice(0, n + 1);
  if (column.DATA) column.DATA = column.DATA.slice(0, n);
  if (column.DATA && type.name === "int" && type.bitWidth === 64 && type.isSigned)
    column.DATA = column.DATA.map((v) => BigInt.asIntN(64, BigInt(v)).toString());
  (column.children ?? []).forEach((child, k) => fixColumn(child, field.children[k]));
}

async function integrationJson(table) {
  const doc = JSON.parse(await RecordBatchJSONWriter.writeAll(table).toString());
  const byDictionaryId = new Map();
  fixFields(doc.schema.fields, byDictionaryId);
  for (const dictionary of doc.dictionaries ?? []) {
    fixColumn(dictionary.data.columns[0], byDictionaryId.get(dictionary.id));
    if (dictionary.isDelta === false) delete dictionary.isDelta;
  }
  doc.batches ??= [];
  for (const batch of doc.batches) batch.columns.forEach((column, k) => fixColumn(column, doc.schema.fields[k]));
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

// Exits 1 with a message at the first value of FILE that differs from
// the case's table (compared as apache-arrow hands them out: get(i)).
function checkFile(name, file) {
  const want = cases[name][0]();
  const got = tableFromIPC(fs.readFileSync(file));
  const same = (a, b) => JSON.stringify(a, (_, v) => (typeof v === "bigint" ? v.toString() : v)) ===
    JSON.stringify(b, (_, v) => (typeof v === "bigint" ? v.toString() : v));
  const fail = (what) => {
    console.error(`${file}: ${what}`);
    process.exit(1);
  };
  if (got.numRows !== want.numRows) fail(`${got.numRows} rows, expected ${want.numRows}`);
  if (String(got.schema) !== String(want.schema)) fail(`schema ${got.schema}, expected ${want.schema}`);
  for (const field of want.schema.fields) {
    const a = want.getChild(field.name), b = got.getChild(field.name);
    for (let i = 0; i < want.numRows; i++)
      if (!same(a.get(i), b.get(i))) fail(`${field.name}[${i}]: ${same(b.get(i), null) ? "null" : b.get(i)}, expected ${a.get(i)}`);
  }
  console.log(`${name}: ${file} has the same ${got.numRows} rows`);
}

const args = process.argv.slice(2);
if (args[0] === "--check" && args.length === 3) checkFile(args[1], args[2]);
else if (args.length === 1) await writeCases(args[0]);
else {
  console.error("usage: node write.mjs OUTDIR | node write.mjs --check NAME FILE");
  process.exit(2);
}
