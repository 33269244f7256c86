import { describe, expect, it } from 'vitest';
import { attentionKernelCurves } from '../../hil/calibrate/calibrate.js';

const k = (precision: string, context: number, us: number) => ({ kind: 'attention' as const, precision, context, bytes: 1, us, label: '' });

describe('attention kernel curves from the calibration measurements', () => {
  it('one ascending curve per kernel with at least two contexts, rounded to 0.01 us', () => {
    const curves = attentionKernelCurves([
      k('fp16', 8192, 16.234),
      k('fp16', 4096, 12.9),
      k('mixed', 4096, 15.5),
      k('mixed', 8192, 21.006),
      k('int8', 4096, 15.2), // one context only: left out
      { kind: 'gemv' as const, bytes: 10, us: 5, label: 'gemv' },
    ]);
    expect(curves).toEqual({
      fp16: [
        { tokens: 4096, us: 12.9 },
        { tokens: 8192, us: 16.23 },
      ],
      mixed: [
        { tokens: 4096, us: 15.5 },
        { tokens: 8192, us: 21.01 },
      ],
    });
  });

  it('nothing without FP16 or without a second kernel (a quick calibration)', () => {
    expect(attentionKernelCurves([k('fp16', 256, 5), k('fp16', 1024, 6)])).toBeUndefined();
    expect(attentionKernelCurves([k('int4', 256, 5), k('int4', 1024, 6), k('int8', 256, 5), k('int8', 1024, 6)])).toBeUndefined();
  });
});
