/**
 * Fast, seeded, counter-based noise for the generator: a 32-bit integer hash of (key, a, b) and a
 * fixed table of standard normal values it indexes. Per-(row, block, step) noise costs a few integer
 * operations and no state, so generation is fast and the same inputs always give the same value.
 */
import seedrandom from 'seedrandom';

/** murmur3's 32-bit finaliser: a bijection on u32 with good avalanche. */
export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A u32 hash of (key, a, b) for integers a, b. */
export function hash3(key: number, a: number, b: number): number {
  return mix32((mix32(key ^ Math.imul(a, 0x9e3779b1)) + Math.imul(b, 0x7feb352d)) | 0);
}

/** Uniform in [0, 1) from a u32 hash. */
export function unitFrom(h: number): number {
  return h / 4294967296;
}

export const NORMAL_TABLE_BITS = 12;

let normalTable: Float64Array | null = null;

/**
 * 4096 standard normal values (Box-Muller from a fixed seed, then standardised to mean 0 and
 * standard deviation 1 exactly). Index with the top NORMAL_TABLE_BITS bits of a hash.
 */
export function standardNormals(): Float64Array {
  if (normalTable !== null) return normalTable;
  const n = 1 << NORMAL_TABLE_BITS;
  const t = new Float64Array(n);
  const rng = seedrandom('kvtier/normal-table/v1');
  for (let i = 0; i < n; i += 2) {
    const u1 = 1 - rng.double();
    const u2 = rng.double();
    const r = Math.sqrt(-2 * Math.log(u1));
    t[i] = r * Math.cos(2 * Math.PI * u2);
    t[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  let mean = 0;
  for (let i = 0; i < n; i++) mean += t[i]!;
  mean /= n;
  let sq = 0;
  for (let i = 0; i < n; i++) sq += (t[i]! - mean) ** 2;
  const sd = Math.sqrt(sq / n);
  for (let i = 0; i < n; i++) t[i] = (t[i]! - mean) / sd;
  normalTable = t;
  return t;
}
