// tests/interop/floats/check.mjs — checks the float texts `xchg cat` prints
// against JavaScript (test_values runs it; plain Node.js, no packages).
//
//   node check.mjs CASES
//
// CASES holds one line per value: "WIDTH HEX TEXT", WIDTH 16, 32 or 64,
// HEX the value's bits, TEXT what xchg printed.  For each value this
// script finds the expected text on its own:
//
//  - the digits: the shortest decimal that rounds back to the value at its
//    width (to nearest, ties to even), the closest of them to it, ties to
//    an even last digit, found by exact BigInt arithmetic over the p-digit
//    decimals next to the value (Number.prototype.toPrecision gives the
//    nearest one, exactly), p = 1, 2, ...  For doubles they must also be
//    the digits of V8's String(x), the shortest round trip of ECMA-262.
//  - the notation, as the README states it: plain for 1e-4 <= |v| < 1e16
//    ("100", "0.0001", "123456790"), else the exponent with a sign and at
//    least two digits ("1e+16", "1.5e-05"); "-0" keeps its sign; NaN,
//    Infinity and -Infinity by name.
//
// Prints "checked N" and exits 0 when every line matches; else prints the
// first mismatches and exits 1.
import { readFileSync } from 'node:fs';

const FORMATS = {
  16: { exponentBits: 5, precision: 11, minExponent: -24 },
  32: { exponentBits: 8, precision: 24, minExponent: -149 },
  64: { exponentBits: 11, precision: 53, minExponent: -1074 },
};

// The value of bits at a width: { special } or { negative, m, e } with
// |v| = m * 2^e exactly, m < 2^precision, e >= minExponent.
function decode(width, bits) {
  const f = FORMATS[width];
  const mantissaBits = BigInt(f.precision - 1);
  const negative = (bits >> BigInt(width - 1)) & 1n;
  const biased = Number((bits >> mantissaBits) & ((1n << BigInt(f.exponentBits)) - 1n));
  let m = bits & ((1n << mantissaBits) - 1n);
  const maxBiased = (1 << f.exponentBits) - 1;
  if (biased === maxBiased) return { special: m !== 0n ? 'NaN' : negative ? '-Infinity' : 'Infinity' };
  let e = f.minExponent;
  if (biased !== 0) {
    m |= 1n << mantissaBits;
    e = f.minExponent + biased - 1;
  }
  return { negative: negative === 1n, m, e, format: f };
}

// Exact rationals [numerator, denominator], denominator > 0.
const pow = (b, k) => b ** BigInt(k);
const binary = (m, e) => (e >= 0 ? [m * pow(2n, e), 1n] : [m, pow(2n, -e)]);
const decimal = (d, x) => (x >= 0 ? [d * pow(10n, x), 1n] : [d, pow(10n, -x)]);
const compare = (a, b) => {
  const l = a[0] * b[1], r = b[0] * a[1];
  return l < r ? -1 : l > r ? 1 : 0;
};
const distance = (a, b) => {
  const n = a[0] * b[1] - b[0] * a[1];
  return [n < 0n ? -n : n, a[1] * b[1]];
};

// Whether decimal c rounds back to m * 2^e: inside the interval between
// the midpoints to the neighbours, its ends included when m is even.
function roundsBack(c, v) {
  const { m, e, format } = v;
  const bottomOfBinade = m === 1n << BigInt(format.precision - 1) && e > format.minExponent;
  const low = bottomOfBinade ? binary(4n * m - 1n, e - 2) : binary(2n * m - 1n, e - 1);
  const high = binary(2n * m + 1n, e - 1);
  const even = m % 2n === 0n;
  const lo = compare(c, low), hi = compare(c, high);
  return even ? lo >= 0 && hi <= 0 : lo > 0 && hi < 0;
}

// The p-digit decimal nearest to the (exact) double x: [digits, exponent].
function nearest(x, p) {
  const [mantissa, exponent] = x.toPrecision(p).split('e');
  const digits = mantissa.replace('.', '');
  const point = mantissa.indexOf('.');
  const before = point < 0 ? mantissa.length : point;
  return [BigInt(digits), Number(exponent ?? 0) - (digits.length - before)];
}

// The shortest, closest digits of |v|: [digits without trailing zeros, exponent].
function shortest(v) {
  const exact = binary(v.m, v.e);
  const x = Number(v.m) * 2 ** v.e; // exact: at most 53 bits
  for (let p = 1; p <= 17; p++) {
    const [d, k] = nearest(x, p);
    let best = null;
    for (const c of [d - 1n, d, d + 1n]) {
      if (c <= 0n || !roundsBack(decimal(c, k), v)) continue;
      if (best === null) {
        best = c;
        continue;
      }
      const order = compare(distance(decimal(c, k), exact), distance(decimal(best, k), exact));
      if (order < 0 || (order === 0 && c % 2n === 0n)) best = c;
    }
    if (best !== null) {
      let digits = best, exponent = k;
      while (digits % 10n === 0n) {
        digits /= 10n;
        exponent++;
      }
      return [digits.toString(), exponent];
    }
  }
  throw new Error(`no decimal of 17 digits or fewer rounds back to ${x}`);
}

// The README's notation of digits * 10^exponent.
function notation(digits, exponent) {
  const n = digits.length;
  const x = exponent + n - 1; // the exponent of the first digit
  if (x >= -4 && x < 16) {
    if (x < 0) return '0.' + '0'.repeat(-x - 1) + digits;
    if (x + 1 >= n) return digits + '0'.repeat(x + 1 - n);
    return digits.slice(0, x + 1) + '.' + digits.slice(x + 1);
  }
  const mantissa = n > 1 ? digits[0] + '.' + digits.slice(1) : digits;
  const magnitude = String(Math.abs(x)).padStart(2, '0');
  return `${mantissa}e${x < 0 ? '-' : '+'}${magnitude}`;
}

// The digits and exponent of V8's String(x) for a positive double.
function v8Digits(x) {
  const [mantissa, exponent] = String(x).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  let digits = (whole + fraction).replace(/^0+/, '');
  let e = Number(exponent ?? 0) - fraction.length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    e++;
  }
  return [digits, e];
}

function expected(width, bits) {
  const v = decode(width, bits);
  if (v.special) return v.special;
  const sign = v.negative ? '-' : '';
  if (v.m === 0n) return sign + '0';
  const [digits, exponent] = shortest(v);
  if (width === 64) {
    const [d8, e8] = v8Digits(Number(v.m) * 2 ** v.e);
    if (d8 !== digits || e8 !== exponent)
      throw new Error(`String(x) gives ${d8}e${e8}, the search ${digits}e${exponent} (bits ${bits.toString(16)})`);
  }
  return sign + notation(digits, exponent);
}

const lines = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.length > 0);
let checked = 0, wrong = 0;
for (const line of lines) {
  const [width, hex, text] = line.split(' ');
  const want = expected(Number(width), BigInt('0x' + hex));
  checked++;
  if (text === want) continue;
  if (wrong++ < 20) console.error(`float${width} bits ${hex}: xchg printed ${text}, expected ${want}`);
}
console.log(`checked ${checked}`);
if (wrong > 0) console.error(`${wrong} of ${checked} texts differ`);
process.exit(wrong > 0 || checked === 0 ? 1 : 0);
