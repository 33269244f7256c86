import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { wordChecksum } from '../../traces/checksum.js';
import { kthLargest } from '../../traces/kth-largest.js';
import { referenceChecksum } from './raw-kvt.js';

const cs = (words: number[]) => wordChecksum(new Int32Array(Uint32Array.from(words).buffer), 0, words.length);

describe('wordChecksum', () => {
  it('is sum w[i] (2i+1) mod 2^32 (hand-computed)', () => {
    expect(cs([])).toBe(0);
    expect(cs([1, 2, 3])).toBe(1 + 6 + 15);
    expect(cs([0xffffffff])).toBe(0xffffffff);
    expect(cs([0xffffffff, 1])).toBe(2); // 2^32 - 1 + 3
    expect(cs([0, 0, 0, 0, 0, 7])).toBe(77);
  });

  it('matches a BigInt reference over random words, every length 0..40 and any start', () => {
    const rng = seedrandom('checksum');
    for (let n = 0; n <= 40; n++) {
      const words = Uint32Array.from({ length: n + 3 }, () => rng.int32() >>> 0);
      const i32 = new Int32Array(words.buffer);
      for (const from of [0, 1, 3]) {
        const to = Math.min(words.length, from + n);
        const bytes = new Uint8Array(words.buffer, 4 * from, 4 * (to - from));
        expect(wordChecksum(i32, from, to)).toBe(referenceChecksum(bytes));
      }
    }
  });

  it('detects any change confined to one word', () => {
    const rng = seedrandom('one-word');
    const words = Uint32Array.from({ length: 37 }, () => rng.int32() >>> 0);
    const base = cs(Array.from(words));
    for (let i = 0; i < words.length; i++) {
      for (const bit of [0, 7, 31]) {
        const w = Array.from(words);
        w[i] = (w[i]! ^ (1 << bit)) >>> 0;
        expect(cs(w)).not.toBe(base);
      }
    }
  });
});

describe('kthLargest', () => {
  it('agrees with a sort over random arrays with duplicates, sorted and reversed input', () => {
    const rng = seedrandom('kth');
    for (const n of [1, 2, 3, 19, 99, 500]) {
      const inputs = [
        Array.from({ length: n }, () => Math.floor(rng() * 10)),
        Array.from({ length: n }, () => rng()),
        Array.from({ length: n }, (_, i) => i),
        Array.from({ length: n }, (_, i) => n - i),
      ];
      for (const xs of inputs) {
        const desc = [...xs].sort((a, b) => b - a);
        for (const k of new Set([1, 2, Math.ceil(n / 2), n].filter((k) => k <= n))) {
          expect(kthLargest(Float64Array.from(xs), n, k)).toBe(desc[k - 1]);
        }
      }
    }
  });

  it('rejects k outside [1, n]', () => {
    expect(() => kthLargest(new Float64Array(3), 3, 0)).toThrow(/k must be in \[1, 3\]/);
    expect(() => kthLargest(new Float64Array(3), 3, 4)).toThrow(/k must be in/);
  });
});
