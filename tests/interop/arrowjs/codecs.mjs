// codecs.mjs — LZ4 frame and ZSTD for apache-arrow's IPC body compression, which ships no
// codec: a small greedy LZ4 compressor (several 64 KiB blocks, each stored raw when it does
// not shrink) and ZSTD frames of raw and RLE blocks only; their decoders read what these
// write (apache-arrow reads the blocks back with them).

function xxh32(bytes) {
  const P1 = 2654435761, P2 = 2246822519, P3 = 3266489917, P4 = 668265263, P5 = 374761393;
  const rotl = (x, r) => ((x << r) | (x >>> (32 - r))) >>> 0;
  let h = (P5 + bytes.length) >>> 0; // seed 0, fewer than 16 bytes
  let i = 0;
  for (; i + 4 <= bytes.length; i += 4) {
    const w = (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)) >>> 0;
    h = Math.imul(rotl((h + Math.imul(w, P3)) >>> 0, 17), P4) >>> 0;
  }
  for (; i < bytes.length; i++) h = Math.imul(rotl((h + Math.imul(bytes[i], P5)) >>> 0, 11), P1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), P2) >>> 0;
  h = Math.imul(h ^ (h >>> 13), P3) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

function lz4Block(src) {
  const out = [];
  const n = src.length;
  const seen = new Map();
  const length = (x) => { for (; x >= 255; x -= 255) out.push(255); out.push(x); };
  const sequence = (from, to, offset, match) => {
    const lit = to - from;
    out.push((Math.min(lit, 15) << 4) | (offset ? Math.min(match - 4, 15) : 0));
    if (lit >= 15) length(lit - 15);
    for (let k = from; k < to; k++) out.push(src[k]);
    if (!offset) return;
    out.push(offset & 255, offset >> 8);
    if (match - 4 >= 15) length(match - 4 - 15);
  };
  let anchor = 0;
  for (let i = 0; i + 12 <= n;) {
    const key = (src[i] | (src[i + 1] << 8) | (src[i + 2] << 16) | (src[i + 3] << 24)) >>> 0;
    const at = seen.get(key);
    seen.set(key, i);
    if (at === undefined || i - at > 65535) { i++; continue; }
    let len = 4;
    while (i + len < n - 5 && src[at + len] === src[i + len]) len++;
    sequence(anchor, i, i - at, len);
    i += len;
    anchor = i;
  }
  sequence(anchor, n, 0, 0);
  return Uint8Array.from(out);
}

export function lz4FrameEncode(data) {
  const parts = [Uint8Array.of(0x04, 0x22, 0x4d, 0x18)];
  const desc = Uint8Array.of(0x60, 0x40); // independent blocks, no checksums; 64 KiB blocks
  parts.push(desc, Uint8Array.of((xxh32(desc) >>> 8) & 0xff));
  for (let at = 0; at < data.length; at += 65536) {
    const raw = data.subarray(at, Math.min(data.length, at + 65536));
    const packed = lz4Block(raw);
    const stored = packed.length >= raw.length;
    const size = Buffer.alloc(4);
    size.writeUInt32LE((stored ? raw.length : packed.length) + (stored ? 0x80000000 : 0) >>> 0);
    parts.push(size, stored ? raw : packed);
  }
  parts.push(new Uint8Array(4));
  return new Uint8Array(Buffer.concat(parts));
}

function lz4BlockDecode(src, out) {
  for (let i = 0; i < src.length;) {
    const token = src[i++];
    let lit = token >> 4;
    if (lit === 15) for (let b = 255; b === 255;) lit += b = src[i++];
    for (let k = 0; k < lit; k++) out.push(src[i++]);
    if (i >= src.length) break;
    const offset = src[i] | (src[i + 1] << 8);
    i += 2;
    let match = (token & 15) + 4;
    if ((token & 15) === 15) for (let b = 255; b === 255;) match += b = src[i++];
    const from = out.length - offset;
    for (let k = 0; k < match; k++) out.push(out[from + k]);
  }
}

export function lz4FrameDecode(buf) {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.readUInt32LE(0) !== 0x184d2204) throw new Error("not an LZ4 frame");
  const flg = b[4];
  let i = 7 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
  const out = [];
  for (;;) {
    const size = b.readUInt32LE(i);
    i += 4;
    if (size === 0) break;
    const n = size & 0x7fffffff;
    const block = b.subarray(i, i + n);
    if (size & 0x80000000) for (const x of block) out.push(x);
    else lz4BlockDecode(block, out);
    i += n + (flg & 0x10 ? 4 : 0);
  }
  return Uint8Array.from(out);
}

export function zstdEncode(data) {
  const parts = [Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xe0)]; // single segment, 8-byte size
  const fcs = Buffer.alloc(8);
  fcs.writeBigUInt64LE(BigInt(data.length));
  parts.push(fcs);
  const blocks = [];
  for (let at = 0; at < data.length;) { // runs of 16 bytes or more as RLE blocks
    let run = 1;
    while (at + run < data.length && run < 131072 && data[at + run] === data[at]) run++;
    if (run >= 16) { blocks.push([1, run, Uint8Array.of(data[at])]); at += run; continue; }
    let end = at + run;
    while (end < data.length && end - at < 131072) {
      let r = 1;
      while (end + r < data.length && r < 16 && data[end + r] === data[end]) r++;
      if (r >= 16) break;
      end += r;
    }
    end = Math.min(end, at + 131072);
    blocks.push([0, end - at, data.subarray(at, end)]);
    at = end;
  }
  blocks.forEach(([type, size, body], k) => {
    const h = (size << 3) | (type << 1) | (k === blocks.length - 1 ? 1 : 0);
    parts.push(Uint8Array.of(h & 255, (h >> 8) & 255, (h >> 16) & 255), body);
  });
  return new Uint8Array(Buffer.concat(parts));
}

export function zstdDecode(buf) {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.readUInt32LE(0) !== 0xfd2fb528 || b[4] !== 0xe0) throw new Error("not a frame of zstdEncode");
  const out = [];
  for (let i = 13, last = 0; !last;) {
    const h = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
    i += 3;
    last = h & 1;
    const type = (h >> 1) & 3, size = h >> 3;
    if (type === 0) { for (let k = 0; k < size; k++) out.push(b[i + k]); i += size; }
    else if (type === 1) { for (let k = 0; k < size; k++) out.push(b[i]); i += 1; }
    else throw new Error("a compressed zstd block");
  }
  return Uint8Array.from(out);
}
