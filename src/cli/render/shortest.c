/* shortest.c — Schubfach: the shortest decimal inside a float's rounding
 * interval, with 64x128-bit products against a table of powers of ten.
 *
 * A finite value is v = c * 2^q (c < 2^P, q >= Q_MIN for the format).  The
 * decimals that round back to v fill the interval R between the midpoints
 * to its neighbours: (c - 1/2) 2^q .. (c + 1/2) 2^q, or from (c - 1/4) 2^q
 * when c is the smallest significand of its binade (the gap below is half
 * as wide); the ends belong to R when c is even (ties go to even).  With
 * k = floor(log10(width of R)), R holds at most one multiple of 10^(k+1)
 * and at least one of 10^k.  The former, when present, is the shortest
 * decimal in R; otherwise the shortest are the multiples of 10^k in R,
 * one or both of s and s + 1 around v / 10^k, and the closer wins.
 *
 * The values 4 v / 10^k and the bounds are computed as g * (4 c 2^h), g a
 * 126-bit overestimate of 10^-k, rounded to odd: the low bit records
 * whether anything was cut off, which is all the comparisons with the
 * multiples of 4 below need to come out exactly as with real numbers (the
 * paper proves it for doubles; the narrower formats use the same products
 * with smaller c, and test_values checks every half and many floats). */
#include "cli/render/shortest.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;

/* ---- the table: 10^e = g * 2^r with 2^125 <= g < 2^126 (g rounded up) ---- */

#define POW10_MIN (-292) /* 10^-k for every k a double's exponent needs */
#define POW10_MAX 324
#define MASK63 ((UINT64_C(1) << 63) - 1)

typedef struct pow10_entry {
  uint64_t g1, g0; /* g = g1 * 2^63 + g0: floor(10^e / 2^r) + 1 */
  int floor_log2;  /* floor(log2(10^e)) = r + 125 */
} pow10_entry;

static pow10_entry pow10_table[POW10_MAX - POW10_MIN + 1];
static pthread_once_t pow10_once = PTHREAD_ONCE_INIT;

/* A non-negative integer in 32-bit limbs, least significant first; large
 * enough for 10^324 and for 2^1216, the numerator of the negative powers. */
#define BIG_LIMBS 40
#define BIG_NUMERATOR_LOG2 1216

typedef struct big {
  uint32_t limb[BIG_LIMBS];
  int n;
} big;

static void big_mul_small(big *b, uint32_t m) {
  uint64_t carry = 0;
  for (int i = 0; i < b->n; i++) {
    uint64_t cur = (uint64_t)b->limb[i] * m + carry;
    b->limb[i] = (uint32_t)cur;
    carry = cur >> 32;
  }
  if (carry) b->limb[b->n++] = (uint32_t)carry;
}

static void big_div_small(big *b, uint32_t d) {
  uint64_t rest = 0;
  for (int i = b->n - 1; i >= 0; i--) {
    uint64_t cur = (rest << 32) | b->limb[i];
    b->limb[i] = (uint32_t)(cur / d);
    rest = cur % d;
  }
  while (b->n > 1 && b->limb[b->n - 1] == 0) b->n--;
}

static int big_bit_length(const big *b) {
  uint64_t top = b->limb[b->n - 1];
  int bits = 0;
  while (top >> bits) bits++;
  return (b->n - 1) * 32 + bits;
}

/* The 32 bits of b starting at bit `at` (zeros past the end). */
static uint32_t big_word_at(const big *b, int at) {
  int w = at / 32, shift = at % 32;
  uint64_t lo = w < b->n ? b->limb[w] : 0, hi = w + 1 < b->n ? b->limb[w + 1] : 0;
  return (uint32_t)(((hi << 32) | lo) >> shift);
}

/* floor(b * 2^(126 - bit_length(b))): its top 126 bits. */
static u128 big_top126(const big *b) {
  int len = big_bit_length(b);
  if (len <= 126) {
    u128 v = 0;
    for (int i = b->n - 1; i >= 0; i--) v = (v << 32) | b->limb[i];
    return v << (126 - len);
  }
  u128 v = 0;
  for (int j = 3; j >= 0; j--) v = (v << 32) | big_word_at(b, len - 126 + 32 * j);
  return v & ((((u128)1) << 126) - 1);
}

/* b is 10^e exactly (e >= 0) or floor(2^BIG_NUMERATOR_LOG2 / 10^-e): the
 * top bits of a floor are the floor of the top bits, so both give g. */
static void set_entry(int e, const big *b) {
  u128 g = big_top126(b) + 1;
  pow10_entry *p = &pow10_table[e - POW10_MIN];
  p->g1 = (uint64_t)(g >> 63);
  p->g0 = (uint64_t)g & MASK63;
  p->floor_log2 = big_bit_length(b) - 1 - (e < 0 ? BIG_NUMERATOR_LOG2 : 0);
}

static void build_pow10_table(void) {
  big b = {{1}, 1};
  for (int e = 0; e <= POW10_MAX; e++) {
    set_entry(e, &b);
    big_mul_small(&b, 10);
  }
  memset(&b, 0, sizeof b);
  b.n = BIG_NUMERATOR_LOG2 / 32 + 1;
  b.limb[BIG_NUMERATOR_LOG2 / 32] = UINT32_C(1) << (BIG_NUMERATOR_LOG2 % 32);
  for (int e = -1; e >= POW10_MIN; e--) {
    big_div_small(&b, 10);
    set_entry(e, &b);
  }
}

/* ---- Schubfach ---------------------------------------------------------- */

/* floor(q log10(2)), floor(log10(3/4 2^q)): exact for |q| <= 1100. */
static int floor_log10_pow2(int q) { return (int)(((int64_t)q * 661971961083LL) >> 41); }
static int floor_log10_three_quarters_pow2(int q) {
  return (int)(((int64_t)q * 661971961083LL - 274743187321LL) >> 41);
}

/* g * cp / 2^127, rounded to odd. */
static uint64_t round_to_odd(const pow10_entry *g, uint64_t cp) {
  uint64_t x1 = (uint64_t)(((u128)g->g0 * cp) >> 64);
  u128 y = (u128)g->g1 * cp;
  uint64_t z = ((uint64_t)y >> 1) + x1;
  uint64_t high = (uint64_t)(y >> 64) + (z >> 63);
  return high | (((z & MASK63) + MASK63) >> 63);
}

typedef struct decimal {
  uint64_t digits; /* the value is digits * 10^exponent */
  int exponent;
} decimal;

/* The shortest, closest decimal in the rounding interval of c * 2^q;
 * narrow_below: the gap to the next value down is half the gap up. */
static decimal schubfach(uint64_t c, int q, bool narrow_below) {
  uint64_t cb = c << 2, cbr = cb + 2, cbl = narrow_below ? cb - 1 : cb - 2;
  int k = narrow_below ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);
  const pow10_entry *g = &pow10_table[-k - POW10_MIN];
  int h = q + g->floor_log2 + 2; /* 1..4: 4 c 2^h times g lands at 2^127 (4 v / 10^k) */
  uint64_t vb = round_to_odd(g, cb << h), vbl = round_to_odd(g, cbl << h),
           vbr = round_to_odd(g, cbr << h);
  uint64_t open = c & 1; /* odd c: the interval's ends round away from v */
  uint64_t s = vb >> 2;
  uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10;
  bool sp10_in = vbl + open <= sp10 << 2, tp10_in = (tp10 << 2) + open <= vbr;
  if (sp10_in != tp10_in) return (decimal){sp10_in ? sp10 : tp10, k};
  uint64_t t = s + 1;
  bool s_in = vbl + open <= s << 2, t_in = (t << 2) + open <= vbr;
  if (s_in != t_in) return (decimal){s_in ? s : t, k};
  int64_t above_midpoint = (int64_t)(vb - ((s + t) << 1));
  bool take_s = above_midpoint < 0 || (above_midpoint == 0 && (s & 1) == 0);
  return (decimal){take_s ? s : t, k};
}

/* ---- formats --------------------------------------------------------------- */

typedef struct binary {
  uint64_t c;
  int q;
  bool narrow_below;
} binary;

/* v = c * 2^q with c of at most `precision` bits and q >= q_min, from the
 * bits of the double holding v (v finite, not zero). */
static binary decompose(uint64_t bits, int precision, int q_min) {
  int biased = (int)(bits >> 52) & 0x7ff;
  uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
  int q = -1074;
  if (biased != 0) {
    m |= UINT64_C(1) << 52;
    q = biased - 1075;
  }
  int narrower = 53 - precision;
  m >>= narrower;
  q += narrower;
  if (q < q_min) {
    m >>= q_min - q;
    q = q_min;
  }
  return (binary){m, q, m == (UINT64_C(1) << (precision - 1)) && q > q_min};
}

/* ---- text ------------------------------------------------------------------ */

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Exactly 8 digits of v < 10^8, leading zeros included. */
static void put_8_digits(char *out, uint32_t v) {
  uint32_t high = v / 10000, low = v % 10000;
  memcpy(out, digit_pairs + 2 * (high / 100), 2);
  memcpy(out + 2, digit_pairs + 2 * (high % 100), 2);
  memcpy(out + 4, digit_pairs + 2 * (low / 100), 2);
  memcpy(out + 6, digit_pairs + 2 * (low % 100), 2);
}

/* The digits of v < 10^8, no leading zeros; returns how many. */
static size_t put_small(char *out, uint32_t v) {
  size_t n = 1 + (v >= 10) + (v >= 100) + (v >= 1000) + (v >= 10000) + (v >= 100000) +
             (v >= 1000000) + (v >= 10000000);
  size_t at = n;
  while (v >= 100) { /* two digits at a time, from the right */
    at -= 2;
    memcpy(out + at, digit_pairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10)
    memcpy(out, digit_pairs + 2 * v, 2);
  else
    out[0] = (char)('0' + v);
  return n;
}

/* In pieces of 8 digits, so that the divisions are 32-bit ones. */
size_t xv_put_u64(char *out, uint64_t d) {
  const uint64_t e8 = 100000000;
  if (d < e8) return put_small(out, (uint32_t)d);
  if (d < e8 * e8) {
    size_t n = put_small(out, (uint32_t)(d / e8));
    put_8_digits(out + n, (uint32_t)(d % e8));
    return n + 8;
  }
  size_t n = put_small(out, (uint32_t)(d / (e8 * e8)));
  put_8_digits(out + n, (uint32_t)(d / e8 % e8));
  put_8_digits(out + n + 8, (uint32_t)(d % e8));
  return n + 16;
}

/* n digits (no trailing zeros) times 10^exponent, with X the exponent of
 * the first digit: plain notation for XV_PLAIN_MIN <= X < XV_PLAIN_END
 * ("250", "0.0001", "1234.5"), else exponent notation as printf's %e
 * writes it, at least two exponent digits ("1e+16", "1.5e-05"). */
static size_t format_decimal(char *out, decimal d) {
  char digits[20];
  int n = (int)xv_put_u64(digits, d.digits);
  int x = d.exponent + n - 1;
  char *p = out;
  if (x >= XV_PLAIN_MIN && x < XV_PLAIN_END) {
    if (x < 0) { /* 0.000ddd */
      memcpy(p, "0.000", (size_t)(1 - x));
      p += 1 - x;
      memcpy(p, digits, (size_t)n);
      return (size_t)(p + n - out);
    }
    int whole = x + 1; /* digits before the point, trailing zeros included */
    memcpy(p, digits, (size_t)(whole < n ? whole : n));
    p += whole < n ? whole : n;
    for (int k = n; k < whole; k++) *p++ = '0';
    if (n > whole) {
      *p++ = '.';
      memcpy(p, digits + whole, (size_t)(n - whole));
      p += n - whole;
    }
    return (size_t)(p - out);
  }
  *p++ = digits[0];
  if (n > 1) {
    *p++ = '.';
    memcpy(p, digits + 1, (size_t)n - 1);
    p += n - 1;
  }
  *p++ = 'e';
  *p++ = x < 0 ? '-' : '+';
  int magnitude = x < 0 ? -x : x;
  if (magnitude >= 100) *p++ = (char)('0' + magnitude / 100);
  memcpy(p, digit_pairs + 2 * (magnitude % 100), 2);
  return (size_t)(p + 2 - out);
}

size_t xv_shortest(char *out, double v, int bits) {
  uint64_t raw;
  memcpy(&raw, &v, sizeof raw);
  size_t sign = raw >> 63;
  if (sign) out[0] = '-';
  raw &= ~(UINT64_C(1) << 63);
  if (raw == 0) {
    out[sign] = '0';
    return sign + 1;
  }
  pthread_once(&pow10_once, build_pow10_table);
  binary b = bits == 16   ? decompose(raw, 11, -24)
             : bits == 32 ? decompose(raw, 24, -149)
                          : decompose(raw, 53, -1074);
  decimal d = schubfach(b.c, b.q, b.narrow_below);
  while (d.digits % 10 == 0) {
    d.digits /= 10;
    d.exponent++;
  }
  return sign + format_decimal(out + sign, d);
}
