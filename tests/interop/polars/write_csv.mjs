// write_csv.mjs — the baseline of `xchg bench cat`: nodejs-polars reading an
// Arrow IPC file and writing it out as CSV.
//
//   node write_csv.mjs IN OUT
//
// IN is the Arrow IPC file or stream format (told by the "ARROW1" magic).
// Prints the nanoseconds that reading the file, readIPC + writeCSV took (node's start and
// the loading of polars are not counted: the figure is polars' own work).
import fs from "node:fs";
import pl from "nodejs-polars";

const [input, output] = process.argv.slice(2);
const start = process.hrtime.bigint();
const bytes = fs.readFileSync(input);
const read = bytes.subarray(0, 6).toString("latin1") === "ARROW1" ? pl.readIPC : pl.readIPCStream;
read(bytes).writeCSV(output);
console.log(String(process.hrtime.bigint() - start));
