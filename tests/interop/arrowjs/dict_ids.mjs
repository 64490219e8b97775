// dict_ids.mjs — the Apache Arrow JS side of test_arrowjs.c's
// gold_dictionary_ids case.
//
//   node dict_ids.mjs FILE
//
// Reads FILE (an IPC stream or file) with apache-arrow and prints, on one
// line, "PATH:ID" for every dictionary-encoded field of its schema, depth
// first, a field before the fields of its dictionary's value type: the ids
// the input's writer gave them, which a re-encoding keeps (fields sharing
// a dictionary share its id).
//
//   node dict_ids.mjs --unshared
//
// Writes to standard output an IPC stream of the schema of Arrow's
// generated_shared_dict (utf8 columns col1 and col2, int16 indices) whose
// two fields have dictionaries of their own, with other values.
import fs from "node:fs";
import { DataType, Dictionary, Int16, Table, Utf8, tableFromIPC, tableToIPC, vectorFromArray }
  from "apache-arrow";

function walk(field, path, out) {
  const type = field.type;
  const here = path + "/" + field.name;
  if (DataType.isDictionary(type)) out.push(here + ":" + type.id);
  const value = DataType.isDictionary(type) ? type.dictionary : type;
  for (const child of value.children || []) walk(child, here, out);
  return out;
}

if (process.argv[2] === "--unshared") {
  const column = (values) => vectorFromArray(values, new Dictionary(new Utf8(), new Int16()));
  const table = new Table({ col1: column(["x", null]), col2: column(["y", "z"]) });
  fs.writeSync(1, tableToIPC(table, "stream"));
} else {
  const table = tableFromIPC(fs.readFileSync(process.argv[2]));
  console.log(table.schema.fields.reduce((out, f) => walk(f, "", out), []).join(" "));
}
