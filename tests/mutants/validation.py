#!/usr/bin/env python3
"""tests/mutants/validation.py — proves that tests/test_validation.c guards
every validation rule of src/ipc/decode.c: each mutant below removes one
check (one condition made false, or one size check skipped), the test is
rebuilt and run, and it must fail.  The source is restored after each
mutant, whatever happens.

    python3 tests/mutants/validation.py BUILD_DIR [TESTDATA]

Prints one line per mutant ("caught" / "SURVIVED") and exits 1 if any
survived (or an equivalent mutant, listed apart, was caught).  Not part of ctest: it rebuilds the library once per mutant."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "src/ipc/decode.c")

# Checks that other checks imply: removing one changes nothing a test
# could see, so these mutants must survive (and are reported apart).
EQUIVALENT = {
    # null_count >= 0 and null_count <= length already give length >= 0
    "field node length >= 0",
    # with size >= 0 checked, offset > limit makes size > limit - offset
    "list view offset <= child rows",
}

# (rule, text in decode.c, replacement)
MUTANTS = [
    ("field node length >= 0", "if (*length < 0 || *null_count < 0 ||", "if (*null_count < 0 ||"),
    ("field node null_count >= 0", "*length < 0 || *null_count < 0 || *null_count > *length", "*length < 0 || *null_count > *length"),
    ("field node null_count <= length", "|| *null_count > *length)", ")"),
    ("field nodes present", "if (d->next_node >= d->nodes.count)", "if (0)"),
    ("buffers present", "if (d->next_buffer >= d->buffers.count)", "if (0)"),
    ("buffer offset >= 0", "if (*offset < 0 || *len < 0 ||", "if (*len < 0 ||"),
    ("buffer length >= 0", "if (*offset < 0 || *len < 0 ||", "if (*offset < 0 ||"),
    ("buffer inside the body", "*len > d->body->length - *offset)", "0)"),
    ("variadic entry present", "if (d->next_variadic >= d->variadic.count)", "if (0)"),
    ("variadic count >= 0", "if (*n < 0 || *n > (int64_t)d->buffers.count)", "if (*n > (int64_t)d->buffers.count)"),
    ("variadic count <= buffers", "if (*n < 0 || *n > (int64_t)d->buffers.count)", "if (*n < 0)"),
    ("compressed length present", "if (raw->size < 8)", "if (0)"),
    ("compressed length >= 0", "if (size < 0) return fail", "if (0) return fail"),
    ("record batch length >= 0", 'if (*length < 0) return fail(d, -1, XCHG_EFORMAT, "record batch length', 'if (0) return fail(d, -1, XCHG_EFORMAT, "record batch length'),
    ("column rows == batch length", "root->children[k]->length != length && !dictionary_values", "0"),
    ("all nodes and buffers used", "(d.next_node != d.nodes.count || d.next_buffer != d.buffers.count)", "(d.next_node != d.nodes.count)"),
    ("union null_count 0", "if (nulls != 0 && !legacy)", "if (0)"),
    ("validity present", "if (!a->buffers[0].data)", "if (0)"),
    ("validity size", 'need_size(d, a, 0, bitmap_bytes(a->length), 1, "validity")', "XCHG_OK"),
    ("null_count == bitmap nulls", "if (a->length - set != a->null_count)", "if (0)"),
    ("offsets size", 'need_size(d, a, i, a->length + 1, width, "offsets")', "XCHG_OK"),
    ("first offset >= 0", "if (first < 0)\n", "if (0)\n"),
    ("last offset >= first", "if (last < first || last > limit)", "if (last > limit)"),
    ("last offset <= limit", "if (last < first || last > limit)", "if (last < first)"),
    ("offsets never decrease (search)", "if (ipc_load_int(p, width, 1, k + 1) < ipc_load_int(p, width, 1, k))", "if (0)"),
    ("offsets never decrease (32-bit pass)", "      decreases |= after < before;\n    }\n  } else {", "    }\n  } else {"),
    ("offsets never decrease (64-bit pass)", "      decreases |= after < before;\n    }\n  }\n  return", "    }\n  }\n  return"),
    ("list view offsets size", 'need_size(d, a, 1, a->length, width, "offsets")', "XCHG_OK"),
    ("list view sizes size", 'need_size(d, a, 2, a->length, width, "sizes")', "XCHG_OK"),
    ("list view offset >= 0", "(off < 0 || size < 0 || off > limit || size > limit - off)", "(size < 0 || off > limit || size > limit - off)"),
    ("list view size >= 0", "(off < 0 || size < 0 || off > limit || size > limit - off)", "(off < 0 || off > limit || size > limit - off)"),
    ("list view offset <= child rows", "(off < 0 || size < 0 || off > limit || size > limit - off)", "(off < 0 || size < 0 || size > limit - off)"),
    ("list view end <= child rows", "(off < 0 || size < 0 || off > limit || size > limit - off)", "(off < 0 || size < 0 || off > limit)"),
    ("list view null rows skipped", "if (valid_at(a, k) && (off < 0", "if ((off < 0"),
    ("views size", 'need_size(d, a, 1, a->length, 16, "views")', "XCHG_OK"),
    ("view length >= 0", "if (len < 0 || buf < 0 || buf >= n_data || off < 0 ||", "if (buf < 0 || buf >= n_data || off < 0 ||"),
    ("view buffer >= 0", "if (len < 0 || buf < 0 || buf >= n_data || off < 0 ||", "if (len < 0 || buf >= n_data || off < 0 ||"),
    ("view buffer < data buffers", "if (len < 0 || buf < 0 || buf >= n_data || off < 0 ||", "if (len < 0 || buf < 0 || off < 0 ||"),
    ("view offset >= 0", "if (len < 0 || buf < 0 || buf >= n_data || off < 0 ||", "if (len < 0 || buf < 0 || buf >= n_data ||"),
    ("view end inside its buffer", "(size_t)off + (size_t)len > ipc_array_size(a, 2 + buf))", "0)"),
    ("view null and inline rows skipped (null)", "if (!valid_at(a, k) || (len >= 0 && len <= 12)) continue;", "if (len >= 0 && len <= 12) continue;"),
    ("view null and inline rows skipped (inline)", "if (!valid_at(a, k) || (len >= 0 && len <= 12)) continue;", "if (!valid_at(a, k)) continue;"),
    ("union type ids size", 'need_size(d, a, 0, a->length, 1, "type ids")', "XCHG_OK"),
    ("dense union offsets size", 'need_size(d, a, 1, a->length, 4, "offsets")', "XCHG_OK"),
    ("sparse union children long enough", "if (a->children[c]->length < a->length)", "if (0)"),
    ("union type id >= 0", "if (id < 0 || child_of[id] < 0)", "if (child_of[id] < 0)"),
    ("union type id declared", "if (id < 0 || child_of[id] < 0)", "if (id < 0)"),
    ("dense union offset >= 0", "if (off < 0 || off >= child_len)", "if (off >= child_len)"),
    ("dense union offset < child rows", "if (off < 0 || off >= child_len)", "if (off < 0)"),
    ("run-end null_count 0", "if (a->null_count != 0)\n    return fail(d, -1, XCHG_EFORMAT, \"a run-end", "if (0)\n    return fail(d, -1, XCHG_EFORMAT, \"a run-end"),
    ("run-end values >= run ends", "if (values->length < ends->length || ends->null_count != 0)", "if (ends->null_count != 0)"),
    ("run ends present", "if (ends->length == 0)\n", "if (0)\n"),
    ("last run end >= length", "if (last < a->length)", "if (0)"),
    ("run ends increase", "if (end <= prev)", "if (0)"),
    ("indices size", 'need_size(d, a, 1, a->length, f->index_width, "indices")', "XCHG_OK"),
    ("dictionary index >= 0", "if (idx < 0 || idx >= dict_len)", "if (idx >= dict_len)"),
    ("dictionary index < length", "if (idx < 0 || idx >= dict_len)", "if (idx < 0)"),
    ("dictionary null rows skipped", "    if (!valid_at(a, k)) continue;\n    int64_t idx", "    int64_t idx"),
    ("bool values size", 'need_size(d, a, 1, bitmap_bytes(a->length), 1, "values")', "XCHG_OK"),
    ("fixed-width values size", 'need_size(d, a, 1, a->length, f->width, "values")', "XCHG_OK"),
    ("struct / fixed-size list children long enough", "if (a->children[i]->length < need)", "if (0)"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def main():
    build = os.path.abspath(sys.argv[1])
    only = sys.argv[3:]  # rule names: run just those
    testdata = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "../shared/testdata")
    original = open(SOURCE).read()
    survived = tried = 0
    try:
        for rule, text, replacement in MUTANTS:
            if only and rule not in only:
                continue
            tried += 1
            if original.count(text) != 1:
                print(f"MISSING {rule}: the text is in decode.c {original.count(text)} times")
                survived += 1
                continue
            with open(SOURCE, "w") as f:
                f.write(original.replace(text, replacement))
            built = run(["nice", "cmake", "--build", build, "-j2", "--target", "test_validation"])
            if built.returncode != 0:
                print(f"BUILD FAILED {rule}")
                survived += 1
                continue
            test = run([os.path.join(build, "test_validation"), testdata], timeout=600)
            caught = test.returncode != 0
            if rule in EQUIVALENT:
                survived += caught
                print(f"{'CAUGHT (equivalent?)' if caught else 'survived, as an equivalent mutant'}: {rule}", flush=True)
                continue
            survived += not caught
            print(f"{'caught' if caught else 'SURVIVED'}: {rule}", flush=True)
    finally:
        with open(SOURCE, "w") as f:
            f.write(original)
    print(f"{tried} mutants: {survived} not as expected")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
