#!/usr/bin/env python3
"""tests/mutants/validation.py — proves that the tests guard every
validation rule: of the reader (src/ipc/decode.c, src/ipc/decode_validate.c,
its loops over every value in src/ipc/scan.c, and the message framing of src/ipc/framing.c,
group "reader", guarded by tests/test_validation.c and test_scan.c) and of the stream codecs (src/codec/, group
"codecs", guarded by tests/test_lz4_frames.c, test_stream_codecs.c, test_codec_trailer.c,
test_limits.c and test_codec_rules.c).  Each mutant below removes one check
(one condition made false, or one size check skipped), the group's tests
are rebuilt and run, and one of them must fail.  The source is restored
after each mutant, whatever happens.

    python3 tests/mutants/validation.py BUILD_DIR [TESTDATA [reader|codecs [RULE...]]]

Prints one line per mutant ("caught" / "SURVIVED") and exits 1 if any
survived.  A check that other checks imply has no mutant here: it is not
in the source either (a comment at the implying check says so).  Not part of ctest: it rebuilds the library once per mutant."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (rule, text in src/ipc/decode.c, replacement)
READER = [
    ("field node null_count >= 0", "if (*null_count < 0 || *null_count > *length)", "if (*null_count > *length)"),
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
    ("compressed length >= 0", "  if (size < 0)\n    return fail_message_buffer", "  if (0)\n    return fail_message_buffer"),
    ("record batch length >= 0", 'if (*length < 0)\n    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "record batch length',
     'if (0)\n    return ipc_decode_fail(d, -1, XCHG_EFORMAT, "record batch length'),
    ("column rows == batch length", "root->children[k]->length != length && !dictionary_values", "0"),
    ("all nodes and buffers used", "(d.next_node != d.nodes.count || d.next_buffer != d.buffers.count)", "(d.next_node != d.nodes.count)"),
    ("union null_count 0", "if (nulls != 0 && !legacy)", "if (0)"),
]

# (rule, text in src/ipc/decode_validate.c, replacement)
VALIDATE = [
    ("validity present", "if (!a->buffers[0].data)", "if (0)"),
    ("validity size", 'need_size(d, a, 0, bitmap_bytes(a->length), 1, "validity")', "XCHG_OK"),
    ("null_count == bitmap nulls", "if (a->length - set != a->null_count)", "if (0)"),
    ("offsets size", 'need_size(d, a, i, a->length + 1, width, "offsets")', "XCHG_OK"),
    ("first offset >= 0", "if (first < 0)\n", "if (0)\n"),
    ("last offset >= first", "if (last < first || last > limit)", "if (last > limit)"),
    ("last offset <= limit", "if (last < first || last > limit)", "if (last < first)"),
    ("offsets never decrease (search)", "if (ipc_load_int(p, width, 1, k + 1) < ipc_load_int(p, width, 1, k))", "if (0)"),
    ("offsets never decrease (the pass)", "ipc_never_decreasing(p, width, a->length + 1)", "1"),
    ("list view offsets size", 'need_size(d, a, 1, a->length, width, "offsets")', "XCHG_OK"),
    ("list view sizes size", 'need_size(d, a, 2, a->length, width, "sizes")', "XCHG_OK"),
    ("list view offset >= 0", "(off < 0 || size < 0 || size > limit - off)", "(size < 0 || size > limit - off)"),
    ("list view size >= 0", "(off < 0 || size < 0 || size > limit - off)", "(off < 0 || size > limit - off)"),
    ("list view end <= child rows", "(off < 0 || size < 0 || size > limit - off)", "(off < 0 || size < 0)"),
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
    ("run-end null_count 0", "if (a->null_count != 0)\n    return ipc_decode_fail(d, -1, XCHG_EFORMAT, \"a run-end", "if (0)\n    return ipc_decode_fail(d, -1, XCHG_EFORMAT, \"a run-end"),
    ("run-end values >= run ends", "if (values->length < ends->length || ends->null_count != 0)", "if (ends->null_count != 0)"),
    ("run ends present", "if (ends->length == 0)\n", "if (0)\n"),
    ("last run end >= length", "if (last < a->length)", "if (0)"),
    ("run ends increase", "if (end <= prev)", "if (end <= prev && 0)"),  # prev stays used (-Werror)
    ("indices size", 'need_size(d, a, 1, a->length, f->index_width, "indices")', "XCHG_OK"),
    ("dictionary index >= 0", "if (idx < 0 || idx >= dict_len)", "if (idx >= dict_len)"),
    ("dictionary index < length", "if (idx < 0 || idx >= dict_len)", "if (idx < 0)"),
    ("dictionary null rows skipped", "    if (!valid_at(a, k)) continue;\n    int64_t idx", "    int64_t idx"),
    ("bool values size", 'need_size(d, a, 1, bitmap_bytes(a->length), 1, "values")', "XCHG_OK"),
    ("fixed-width values size", 'need_size(d, a, 1, a->length, f->width, "values")', "XCHG_OK"),
    ("struct / fixed-size list children long enough", "if (a->children[i]->length < need)", "if (0)"),
]

# (rule, text in src/ipc/scan.c, replacement): the loops behind "offsets
# never decrease" and "null_count == bitmap nulls", in each way (a way the
# CPU lacks cannot be tested: its mutants survive there)
SCAN = [
    ("order, portable 32-bit", "      decreases |= after < before;\n    }\n  } else {", "    }\n  } else {"),
    ("order, portable 64-bit", "      decreases |= after < before;\n    }\n  }\n  return", "    }\n  }\n  return"),
    ("order, avx2 32-bit compare", "_mm256_cmpgt_epi32(before, after)", "_mm256_setzero_si256()"),
    ("order, avx2 64-bit compare", "_mm256_cmpgt_epi64(before, after)", "_mm256_setzero_si256()"),
    ("order, avx2 every vector of a step", "for (int v = 0; v < 8; v++)", "for (int v = 0; v < 7; v++)"),
    ("order, avx2 single vectors", "    decreases =\n        _mm256_or_si256(decreases,", "    (void)decreases;\n    (void)_mm256_or_si256(decreases,"),
    ("order, avx2 the sum tested", "return _mm256_testz_si256(decreases, decreases) &&", "return"),
    ("order, avx2 the tail", "return _mm256_testz_si256(decreases, decreases) &&\n         never_decreasing(p + width * (k - 1), width, n - (k - 1));",
     "return _mm256_testz_si256(decreases, decreases);"),
    ("order, avx512 32-bit compare", "_mm512_mask_cmple_epi32_mask(ok, before, after)", "ok"),
    ("order, avx512 equal neighbours in order", "_mm512_mask_cmple_epi32_mask(ok, before, after)", "_mm512_mask_cmplt_epi32_mask(ok, before, after)"),
    ("order, avx512 64-bit compare", "_mm512_kand(ok, (__mmask16)_mm512_cmple_epi64_mask(before, after))", "ok"),
    ("order, avx512 32-bit one before", "_mm512_alignr_epi32(cur, prev, 15)", "_mm512_alignr_epi32(cur, prev, 14)"),
    ("order, avx512 64-bit one before", "_mm512_alignr_epi64(cur, prev, 7)", "_mm512_alignr_epi64(cur, prev, 6)"),
    ("order, avx512 steps joined", "    prev = c3;\n", "    prev = c0;\n"),
    ("order, avx512 every mask of a step", "(ok0 & ok1 & ok2 & ok3) == all", "(ok0 & ok1 & ok2) == all"),
    ("order, avx512 single vectors", "    ok0 = lanes_in_order(ok0, one_before(c, prev, width), c, width);", "    (void)ok0;"),
    ("order, avx512 short ones", "  if (n < lanes) return never_decreasing(p, width, n);", "  if (n < lanes) return 1;"),
    ("order, avx512 the tail", "(ok0 & ok1 & ok2 & ok3) == all &&\n         never_decreasing(p + width * (k - 1), width, n - (k - 1));",
     "(ok0 & ok1 & ok2 & ok3) == all;"),
    ("bits, portable step", "    s3 += __builtin_popcountll(w3);\n", ""),
    ("bits, portable words", "    set += __builtin_popcountll(word);\n", ""),
    ("bits, portable bytes", "for (; i < n_bytes; i++) set += __builtin_popcount(bits[i]);", ""),
    ("bits, avx2 high half bytes", "_mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low))", "_mm256_setzero_si256()"),
    ("bits, avx2 second vector of a pair", "s1 = _mm256_add_epi8(s1, bits_per_byte(", "s1 = _mm256_add_epi8(s0, bits_per_byte("),
    ("bits, avx2 per-byte sums folded in time", "int64_t chunk = pairs < 15 ? pairs : 15;", "int64_t chunk = pairs < 40 ? pairs : 40;"),
    ("bits, avx2 the tail", "lanes[3] + count_set_bits(p, n_bytes - (p - bits));", "lanes[3];"),
    ("bits, avx512 second vector of a step", "s1 = _mm512_add_epi64(s1, _mm512_popcnt_epi64(", "s1 = _mm512_add_epi64(s0, _mm512_popcnt_epi64("),
    ("bits, avx512 single vector", "    i += 64;\n  }", "  }"),
    ("bits, avx512 the tail", "_mm512_add_epi64(s0, s1)) + count_set_bits(bits + i, n_bytes - i);", "_mm512_add_epi64(s0, s1));"),
    ("the fastest way picked", 'return CPU_HAS("avx512f") &&', 'return 0 && CPU_HAS("avx512f") &&'),
]

# (rule, text, replacement) per file of src/codec/
CODECS = {
    "src/codec/block.c": [
        ("zstd block: decodes to the declared length", "if (n != dst_size)", "if (0)"),
        ("declared length plausible", "if ((uint64_t)dst_size > most)", "if (0)"),
        ("zstd declared length as the frame states", "zstd_stated_size(src, src_size, &stated) && stated != dst_size",
         "zstd_stated_size(src, src_size, &stated) && 0"),  # the helper stays used (-Werror)
    ],
    "src/codec/lz4_frames.c": [
        ("LZ4 block: decodes to the declared length", "if (c.out != dst_size)", "if (0)"),
        ("LZ4 block: some bytes", "if (src_size == 0) return need", "if (0) return need"),
        ("LZ4 block: the frame magic", "} else if (magic == LZ4_FRAME_MAGIC) {", "} else if (1) {"),
        ("LZ4 block: magic present", 'xchg_status st = need(&c, 4, "a frame\'s magic number");\n    if (st != XCHG_OK) return st;',
         'xchg_status st = XCHG_OK;'),
        ("LZ4 block: skippable length present", 'if ((st = need(&c, 4, "a skippable frame\'s length")) != XCHG_OK) return st;', ""),
        ("LZ4 block: skippable frame complete", 'if ((st = need(&c, skip, "a skippable frame")) != XCHG_OK) return st;', ""),
        ("LZ4 block: descriptor present", 'xchg_status st = need(c, 3, "the frame descriptor");\n  if (st != XCHG_OK) return st;',
         "xchg_status st = XCHG_OK;"),
        ("LZ4 block: whole descriptor present", 'if ((st = need(c, descriptor + 1, "the frame descriptor")) != XCHG_OK) return st;', ""),
        ("LZ4 block: version 1", "if (f->flg >> FLG_VERSION_SHIFT != 1)", "if (0)"),
        ("LZ4 block: FLG reserved bit", "if ((f->flg & FLG_RESERVED) || (d[1] & BD_RESERVED))", "if ((d[1] & BD_RESERVED))"),
        ("LZ4 block: BD reserved bits", "if ((f->flg & FLG_RESERVED) || (d[1] & BD_RESERVED))", "if ((f->flg & FLG_RESERVED))"),
        ("LZ4 block: no dictionary", "if (f->flg & FLG_DICT_ID)", "if (0)"),
        ("LZ4 block: block size ID", "if (size_id < 4)", "if (0)"),
        ("LZ4 block: header checksum", "if (((xchg_xxh32(d, descriptor, 0) >> 8) & 0xFFu) != d[descriptor])", "if (0)"),
        ("LZ4 block: block size present", 'xchg_status st = need(c, 4, "a block size");\n    if (st != XCHG_OK) return st;',
         "xchg_status st = XCHG_OK;"),
        ("LZ4 block: block within the maximum", "if (size > f->block_max)", "if (0)"),
        ("LZ4 block: block complete", 'if ((st = need(c, size + checksum, "a block")) != XCHG_OK) return st;', ""),
        ("LZ4 block: block checksum", "if (checksum && xchg_xxh32(block, size, 0) != stream_le32(block + size))", "if (0)"),
        ("LZ4 block: stored block fits", "if (size > c->dst_size - c->out) return too_long", "if (0) return too_long"),
        ("LZ4 block: longer output told from damage", "if (cap < f->block_max) {", "if (0) {"),
        ("LZ4 block: content size", "if ((f.flg & FLG_CONTENT_SIZE) && f.content_size != 0 && f.content_size != produced)", "if (0)"),
        ("LZ4 block: content checksum present", 'if ((st = need(c, 4, "the content checksum")) != XCHG_OK) return st;', ""),
        ("LZ4 block: content checksum", "if (xchg_xxh32(c->dst + f.out_start, produced, 0) != stream_le32(c->src + c->pos))", "if (0)"),
    ],
    "src/codec/stream_lz4java.c": [
        ("lz4-java magic", 'if (memcmp(h, "LZ4Block", 8) != 0)', "if (0)"),
        ("lz4-java method", "if (method != METHOD_RAW && method != METHOD_LZ4)", "if (0)"),
        ("lz4-java lengths within the level's block size", "if (dlen > max_block || clen > INT32_MAX)", "if (0)"),
        ("lz4-java lengths consistent", "if ((clen == 0) != (dlen == 0) || (method == METHOD_RAW && clen != dlen) ||\n      (method == METHOD_LZ4 && clen > (uint32_t)LZ4_COMPRESSBOUND(dlen)))", "if (0)"),
        ("lz4-java block cap", "if (dlen > s->opts.max_block_size)", "if (0)"),
        ("lz4-java end block checksum 0", "if (dlen == 0 && stream_le32(h + 17) != 0)", "if (0)"),
        ("lz4-java end block present", "if (avail < HEADER_SIZE)\n", "if (0)\n"),
        ("lz4-java block complete", "if (stream_in_avail(s) < HEADER_SIZE + (size_t)clen)", "if (0)"),
        ("lz4-java LZ4 data decodes to its length", "if (got != (int)dlen)", "if (0)"),
        ("lz4-java checksum", "if (actual != check)", "if (0)"),
    ],
    "src/codec/stream_snappy.c": [
        ("snappy block header", "if (snappy_uncompressed_length((const char *)data, len, &ulen) != SNAPPY_OK)", "if (0)"),
        ("snappy block length cap", "if (ulen > max_len)", "if (0)"),
        ("snappy data", "(char *)*out, &got) != SNAPPY_OK)", "(char *)*out, &got) != SNAPPY_OK && 0)"),
        ("snappy-java header complete", "if (stream_in_avail(s) < JAVA_HEADER_SIZE)", "if (0)"),
        ("snappy-java magic", "if (memcmp(h, java_magic, sizeof java_magic) != 0)", "if (0)"),
        ("snappy-java version", "if (compatible != 1)", "if (0)"),
        ("snappy-java chunk length", "if (len == 0 || len > INT32_MAX)", "if (0)"),
        ("snappy-java chunk cap", "if (len > snappy_max_compressed_length(s->opts.max_block_size))", "if (0)"),
        ("snappy-java chunk complete", "if (stream_in_avail(s) < 4 + (size_t)len)", "if (0)"),
        ("snappy framed chunk complete", "if (stream_in_avail(s) < 4 + len)", "if (0)"),
        ("snappy framed stream identifier first", "if (!ss->in_stream && type != 0xff)", "if (0)"),
        ("snappy framed stream identifier", "if (len + 4 != sizeof framed_stream_id || memcmp(p, framed_stream_id, len + 4) != 0)", "if (0)"),
        ("snappy framed chunk holds a checksum", "      if (len < 4)\n", "      if (0)\n"),
        ("snappy framed stored chunk <= 65536", "if (ulen > FRAMED_MAX_CHUNK)", "if (0)"),
        ("snappy framed checksum", "if (actual == expected) return XCHG_OK;", "return XCHG_OK;"),
        ("snappy framed reserved unskippable types", "} else if (type < 0x80) {", "} else if (0) {"),
    ],
    "src/codec/stream_comet.c": [
        ("comet header complete", "if (avail < BLOCK_HEADER_SIZE)", "if (0)"),
        ("comet codec tag", "if (inner == NULL)\n    return", "if (0)\n    return"),
        ("comet block length", "if (len < BLOCK_HEADER_SIZE - 8 || len > INT64_MAX)", "if (0)"),
        ("comet block complete", "if (stream_in_offset(s) != cs->block_end)", "if (0)"),
    ],
    "src/codec/frame_decoder.c": [
        ("lz4 frame / zstd frame complete", "} else if (src_n == 0 && *dst_n == 0) {", "} else if (0) {"),
    ],
}

# (rule, text, replacement): the message framing (src/ipc/framing.c) and the
# Message flatbuffer (src/ipc/message.c)
FRAMING = [
    ("metadata length >= 0", "  if (length < 0)\n    return xchg_errorf(err, XCHG_EFORMAT, \"message %lld at byte %lld: negative",
     "  if (0)\n    return xchg_errorf(err, XCHG_EFORMAT, \"message %lld at byte %lld: negative"),
    ("body length >= 0", "if (body_length < 0 || (avail >= 0", "if ((avail >= 0"),
    ("body inside the input", "if (body_length < 0 || (avail >= 0 && body_length > avail))",
     "if (body_length < 0 || (avail >= 0 && 0))"),
]

MESSAGE = [
    ("metadata version known", "if (v < IPC_METADATA_V4 || v > IPC_METADATA_V5)", "if (0)"),
    ("header type known", "if (type < HEADER_SCHEMA || type > HEADER_RECORD_BATCH)", "if (0)"),
]

GROUPS = {
    "reader": ({"src/ipc/decode.c": READER, "src/ipc/decode_validate.c": VALIDATE,
                "src/ipc/scan.c": SCAN, "src/ipc/framing.c": FRAMING, "src/ipc/message.c": MESSAGE},
               ["test_validation", "test_scan"]),
    "codecs": (CODECS, ["test_lz4_frames", "test_stream_codecs", "test_codec_trailer", "test_limits", "test_codec_rules"]),
}


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def try_mutant(build, tests, testdata, path, original, rule, text, replacement):
    """Returns True when some test fails with the mutant in place (path
    None: no mutant)."""
    if path is None:  # no mutant: the tests as they are
        pass
    elif original.count(text) != 1:
        print(f"MISSING {rule}: the text is in {path} {original.count(text)} times")
        return None
    else:
        with open(path, "w") as f:
            f.write(original.replace(text, replacement))
    built = run(["nice", "cmake", "--build", build, "-j2", "--target"] + tests)
    if built.returncode != 0:
        print(f"BUILD FAILED {rule}")
        return None
    env = dict(os.environ, XCHG_TESTDATA=testdata)
    for t in tests:
        try:
            # The test data through the environment: a test's arguments
            # are the names of its cases (tests/support/testutil.h).
            if run([os.path.join(build, t)], timeout=180, env=env).returncode != 0:
                return True
        except subprocess.TimeoutExpired:  # a check whose removal makes a decoder spin
            print(f"  ({t} did not end in 180 s)")
            return True
    return False


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        print("rules of group reader:", ", ".join(r for m in GROUPS["reader"][0].values() for r, _, _ in m))
        print("rules of group codecs:", ", ".join(r for m in GROUPS["codecs"][0].values() for r, _, _ in m))
        return 0 if len(sys.argv) >= 2 else 2
    build = os.path.abspath(sys.argv[1])
    testdata = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "../shared/testdata")
    group = sys.argv[3] if len(sys.argv) > 3 else "reader"
    only = sys.argv[4:]  # rule names: run just those
    files, tests = GROUPS[group]
    tests = [t for t in tests if os.path.exists(os.path.join(ROOT, "tests", t + ".c"))]
    # Unchanged, every test must pass: else each mutant would look caught.
    if try_mutant(build, tests, testdata, None, None, "none", None, None) is not False:
        print("the tests fail (or do not build) without a mutant: nothing to learn")
        return 1
    bad = tried = 0
    for name, mutants in files.items():
        path = os.path.join(ROOT, name)
        original = open(path).read()
        try:
            for rule, text, replacement in mutants:
                if only and rule not in only:
                    continue
                tried += 1
                caught = try_mutant(build, tests, testdata, path, original, rule, text, replacement)
                bad += caught is not True
                print(f"{'caught' if caught else 'SURVIVED'}: {rule}", flush=True)
        finally:
            with open(path, "w") as f:
                f.write(original)
    # Leave the build as the source is, not as the last mutant made it.
    run(["nice", "cmake", "--build", build, "-j2", "--target"] + tests)
    print(f"{tried} mutants: {bad} not as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
