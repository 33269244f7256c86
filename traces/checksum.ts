/**
 * The .kvt checksum: an odd-weighted sum of 32-bit words, modulo 2^32,
 *   c = sum_i w[i] * (2i + 1)  mod 2^32,   i = 0 .. n-1 counted from the start of the checksummed range.
 * Any change confined to one word is always detected (an odd weight is invertible mod 2^32), and it
 * vectorises in numpy (see FORMAT.md), which a sequential hash such as FNV-1a does not.
 *
 * Takes an Int32Array view (same bits as the u32 words; V8 keeps int32 loads unboxed) and sums in
 * four independent lanes, which is ~3x faster than a single dependent chain.
 */
// the lanes are combined in an Int32Array, whose stores wrap to 32 bits: a plain sum of int32 locals
// can leave the int32 range, and V8 then deoptimized this function again and again ("overflow",
// "lost precision"); inside the loop every add is truncated with | 0 and stays int32
const lanes = new Int32Array(1);

export function wordChecksum(words: Int32Array, from: number, to: number): number {
  return wordChecksumI32(words, from, to) >>> 0;
}

/** The same checksum as an int32 (its bits), for comparing against an Int32Array word without a uint32 in between. */
export function wordChecksumI32(words: Int32Array, from: number, to: number): number {
  let c0 = 0;
  let c1 = 0;
  let c2 = 0;
  let c3 = 0;
  let m = 1;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    c0 = (c0 + Math.imul(words[i]!, m)) | 0;
    c1 = (c1 + Math.imul(words[i + 1]!, (m + 2) | 0)) | 0;
    c2 = (c2 + Math.imul(words[i + 2]!, (m + 4) | 0)) | 0;
    c3 = (c3 + Math.imul(words[i + 3]!, (m + 6) | 0)) | 0;
    m = (m + 8) | 0;
  }
  const a = lanes;
  a[0] = c0;
  a[0] += c1;
  a[0] += c2;
  a[0] += c3;
  let c = a[0]!;
  for (; i < to; i++) {
    c = (c + Math.imul(words[i]!, m)) | 0;
    m = (m + 2) | 0;
  }
  return c;
}
