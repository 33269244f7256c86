import { describe, expect, it } from 'vitest';
import { floatToHalf, halfToFloat } from '../../hil/half.js';

describe('FP16 bits', () => {
  it('every finite pattern converts to its value and back to the same bits (signed zero kept)', () => {
    for (let h = 0; h < 65536; h++) {
      const exp = (h >> 10) & 0x1f;
      const v = halfToFloat(h);
      if (exp === 31) {
        expect(h & 0x3ff ? Number.isNaN(v) : Math.abs(v) === Infinity).toBe(true);
        continue;
      }
      expect(floatToHalf(v)).toBe(h);
    }
  });

  it('hand-checked values', () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x0001)).toBe(2 ** -24);
    expect(halfToFloat(0x7bff)).toBe(65504);
    expect(Object.is(halfToFloat(0x8000), -0)).toBe(true);
  });
});
