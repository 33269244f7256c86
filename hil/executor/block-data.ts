/**
 * Deterministic KV bytes per block: FP16 values from a seeded pool, XOR-stamped per (layer, block)
 * so every block differs. Bit 14 is clear in every half (|x| < 2), so no value is Inf or NaN.
 * content(seed, l, b) is what a block holds at 16 bits; lower precisions are its quantization.
 */
import { makeRng } from '../rng.js';

const POOL_WORDS = 1 << 20; // 4 MiB

export class BlockData {
  private readonly pool = new Uint32Array(POOL_WORDS);

  constructor(
    readonly seed: number,
    /** FP16 values per block (K and V) */
    readonly halves: number,
  ) {
    if (halves % 2 !== 0) throw new Error('block values must be even');
    const rng = makeRng(seed);
    for (let i = 0; i < POOL_WORDS; i++) this.pool[i] = ((rng.next() * 4294967296) >>> 0) & 0xbfffbfff;
  }

  /** Writes block (l, b)'s FP16 values into `out` (halves/2 words) at word offset `at`. */
  fill(layer: number, block: number, out: Uint32Array, at = 0): void {
    const h = mix(this.seed, layer, block);
    const start = h % POOL_WORDS;
    const stamp = mix(h, block, layer) & 0xbfffbfff;
    const words = this.halves / 2;
    const pool = this.pool;
    let p = start;
    for (let i = 0; i < words; i++) {
      out[at + i] = pool[p] ^ stamp;
      if (++p === POOL_WORDS) p = 0;
    }
  }

  block(layer: number, block: number): Uint16Array {
    const w = new Uint32Array(this.halves / 2);
    this.fill(layer, block, w);
    return new Uint16Array(w.buffer);
  }
}

function mix(a: number, b: number, c: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35) ^ Math.imul(c + 0x27d4eb2f, 0x165667b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}
