// The benchmark's mixed table (hil/bench/attention-bench.ts mixedAtInt8Bits): FP16 sink and recent
// blocks, INT4 elsewhere, averaging uniform INT8's bits per element.
import { describe, expect, it } from 'vitest';
import { mixedAtInt8Bits } from '../../hil/bench/attention-bench.js';
import { bitsPerElement } from '../../hil/kv-format.js';

describe('mixed table at INT8 bits', () => {
  const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
  it('puts FP16 on the sink and the most recent blocks, INT4 between, at INT8 average bits', () => {
    const { share, precisionOf } = mixedAtInt8Bits(g);
    expect(share).toBeCloseTo((bitsPerElement(g, 'int8') - bitsPerElement(g, 'int4')) / (bitsPerElement(g, 'fp16') - bitsPerElement(g, 'int4')), 12);
    for (const n of [256, 2048, 8192]) {
      const t = Array.from({ length: n }, (_, i) => precisionOf(i, n));
      expect(t[0]).toBe('fp16');
      expect(t[n - 1]).toBe('fp16');
      expect(t[1]).toBe('int4');
      const fp16 = t.filter((p) => p === 'fp16').length;
      expect(fp16).toBe(Math.round(share * n));
      expect(t.every((p) => p === 'fp16' || p === 'int4')).toBe(true);
      // the recent FP16 blocks are one contiguous run at the end
      expect(t.lastIndexOf('int4')).toBe(n - fp16);
      const avg = t.reduce((a, p) => a + bitsPerElement(g, p), 0) / n;
      expect(Math.abs(avg - bitsPerElement(g, 'int8'))).toBeLessThan((bitsPerElement(g, 'fp16') - bitsPerElement(g, 'int4')) / n);
    }
  });
});
