// blocks.mjs — the Apache Arrow JS side of the dictionary blocks of
// tests/test_cli_shuffle.c: IPC streams, each a shuffle block, that Comet
// itself would not write but a reader must take as Arrow says.
//
//   node blocks.mjs OUTDIR
//
// Writes, with apache-arrow's stream writer, OUTDIR/NAME.stream for NAME in
// the order the blocks go (one line per name on standard output):
//   first  3 rows, dictionary ["red", "green"];
//   empty  a record batch of no rows (its dictionary sent all the same);
//   delta  2 rows on ["red", "green"], then a delta dictionary batch
//          (isDelta) adding ["blue", "amber"], then 3 rows using them;
//   again  the dictionary sent whole, then its delta, in one stream
//          (apache-arrow writes a dictionary of two chunks so), 3 rows.
// Every block's field "n" counts the rows from 1 over all blocks.
//
//   node blocks.mjs --other OUTDIR
//
// Writes OUTDIR/other.stream: 3 rows on a dictionary ["blue", "amber"],
// which neither equals nor extends the blocks' ["red", "green"]: after
// "empty", a writer that coalesces must write its rows apart (n 1 to 3).
//
//   node blocks.mjs --batches FILE
//
// Prints, one line per record batch of FILE (an IPC stream or file) as
// apache-arrow reads it, its rows as "colour/n", space-separated (an empty
// batch: an empty line).
//
//   node blocks.mjs --check-json FILE
//   node blocks.mjs --check-arrow-json FILE
//
// Reads FILE — `xchg cat --format json` (JSON Lines) or `--format
// arrow-json` (Arrow's integration JSON) of the blocks, all of them — and
// compares every value with what apache-arrow reads from the streams it
// wrote (and, for arrow-json, every batch's row count, empty ones too);
// exits 1 at the first difference.
import fs from "node:fs";
import path from "node:path";
import {
  Dictionary, Field, Int32, RecordBatch, Schema, Struct, Table, Utf8, makeData, makeVector,
  tableFromIPC, tableToIPC, vectorFromArray,
} from "apache-arrow";

const schema = new Schema([
  new Field("colour", new Dictionary(new Utf8(), new Int32(), 0), true),
  new Field("n", new Int32(), true),
]);

function batch(dictionary, indices, from) {
  const colour = makeData({
    type: schema.fields[0].type, length: indices.length, nullCount: 0,
    data: Int32Array.from(indices), dictionary,
  });
  const n = makeVector(Int32Array.from(indices, (_, k) => from + k)).data[0];
  return new RecordBatch(schema, makeData({
    type: new Struct(schema.fields), length: indices.length, nullCount: 0, children: [colour, n],
  }));
}

const base = vectorFromArray(["red", "green"], new Utf8());
const extended = base.concat(vectorFromArray(["blue", "amber"], new Utf8())); // two chunks
const blocks = {
  first: [batch(base, [0, 1, 0], 1)],
  empty: [batch(base, [], 4)],
  delta: [batch(base, [1, 0], 4), batch(extended, [2, 3, 0], 6)],
  again: [batch(extended, [3, 2, 1], 9)],
};

function fail(file, what) {
  console.error(`${file}: ${what}`);
  process.exit(1);
}

// The rows of every block, as apache-arrow reads its own streams back.
function expectedBatches(dir) {
  const batches = [];
  for (const name of Object.keys(blocks)) {
    const table = tableFromIPC(fs.readFileSync(path.join(dir, name + ".stream")));
    for (const b of table.batches)
      batches.push(Array.from({ length: b.numRows }, (_, i) => ({ colour: b.get(i).colour, n: b.get(i).n })));
  }
  return batches;
}

function checkJson(file, dir) {
  const want = expectedBatches(dir).flat();
  const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
  if (lines.length !== want.length) fail(file, `${lines.length} rows, expected ${want.length}`);
  lines.forEach((line, i) => {
    const got = JSON.parse(line);
    if (got.colour !== want[i].colour || got.n !== want[i].n)
      fail(file, `row ${i}: ${line}, expected ${JSON.stringify(want[i])}`);
  });
}

function checkArrowJson(file, dir) {
  const want = expectedBatches(dir);
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  const counts = doc.batches.map((b) => b.count);
  if (JSON.stringify(counts) !== JSON.stringify(want.map((b) => b.length)))
    fail(file, `batches of ${counts} rows, expected ${want.map((b) => b.length)}`);
  const id = doc.schema.fields[0].dictionary.id;
  const dictionary = doc.dictionaries.find((d) => d.id === id).data.columns[0].DATA;
  doc.batches.forEach((b, k) => {
    const [colour, n] = b.columns;
    want[k].forEach((row, i) => {
      if (dictionary[colour.DATA[i]] !== row.colour || n.DATA[i] !== row.n)
        fail(file, `batch ${k} row ${i}: ${dictionary[colour.DATA[i]]} ${n.DATA[i]}, expected ${JSON.stringify(row)}`);
    });
  });
}

function printBatches(file) {
  for (const b of tableFromIPC(fs.readFileSync(file)).batches)
    console.log(Array.from({ length: b.numRows }, (_, i) => `${b.get(i).colour}/${b.get(i).n}`).join(" "));
}

const [mode, file] = process.argv.slice(2);
if (mode === "--other") {
  const other = vectorFromArray(["blue", "amber"], new Utf8());
  fs.writeFileSync(path.join(file, "other.stream"), tableToIPC(new Table([batch(other, [0, 1, 0], 1)]), "stream"));
} else if (mode === "--batches") {
  printBatches(file);
} else if (mode === "--check-json") {
  checkJson(file, path.dirname(file));
} else if (mode === "--check-arrow-json") {
  checkArrowJson(file, path.dirname(file));
} else {
  for (const [name, batches] of Object.entries(blocks)) {
    fs.writeFileSync(path.join(mode, name + ".stream"), tableToIPC(new Table(batches), "stream"));
    console.log(name);
  }
}
