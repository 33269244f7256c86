import { describe, expect, it } from 'vitest';
import { attentionKernelCurves } from '../../hil/calibrate/calibrate.js';

const k = (precision: string, context: number, us: number) => ({ kind: 'attention' as const, precision, context, bytes: 1, us, label: '' });

describe('attention kernel curves from the calibration measurements', () => {
  it('one ascending curve per kernel with at least two contexts, rounded to 0.01 us', () => {
    const curves = attentionKernelCurves({ kernels: [
      k('fp16', 8192, 16.234),
      k('fp16', 4096, 12.9),
      k('mixed', 4096, 15.5),
      k('mixed', 8192, 21.006),
      k('int8', 4096, 15.2), // one context only: left out
      { kind: 'gemv' as const, bytes: 10, us: 5, label: 'gemv' },
    ] });
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

  it('from the kernels in situ where measured: FP16 from the FP16 chains at the contexts the others were chained at', () => {
    const chain = (tokens: number, us: number) => ({ tokens, bytes: 1, us, chain_us_per_layer: us + 148 });
    const curves = attentionKernelCurves({
      // alone (L2-warm) times: not used once chains of the other kernels exist
      kernels: [k('fp16', 256, 10), k('fp16', 8192, 16.9), k('int2', 256, 15), k('int2', 8192, 21.6)],
      attention_in_situ: [chain(256, 14.004), chain(768, 16.5), chain(8192, 27.1)],
      kernels_in_situ: [
        { precision: 'int2', ...chain(8192, 27.9) },
        { precision: 'int2', ...chain(256, 18.2) },
        { precision: 'mixed', ...chain(256, 18.0) },
      ],
    });
    expect(curves).toEqual({
      fp16: [
        { tokens: 256, us: 14 },
        { tokens: 8192, us: 27.1 },
      ],
      int2: [
        { tokens: 256, us: 18.2 },
        { tokens: 8192, us: 27.9 },
      ],
    });
  });

  it('FP16 in situ read off its chains between their contexts where the other kernels were chained elsewhere', () => {
    const chain = (tokens: number, us: number) => ({ tokens, bytes: 1, us, chain_us_per_layer: us + 148 });
    const curves = attentionKernelCurves({
      kernels: [],
      attention_in_situ: [chain(1024, 20), chain(4096, 26)],
      kernels_in_situ: [
        { precision: 'int8', ...chain(2048, 25) },
        { precision: 'int8', ...chain(4096, 28) },
      ],
    });
    // 2048 lies a third of the way from 1024 to 4096: 20 + 6 / 3
    expect(curves).toEqual({
      fp16: [
        { tokens: 2048, us: 22 },
        { tokens: 4096, us: 26 },
      ],
      int8: [
        { tokens: 2048, us: 25 },
        { tokens: 4096, us: 28 },
      ],
    });
  });

  it('nothing without FP16 or without a second kernel (a quick calibration)', () => {
    expect(attentionKernelCurves({ kernels: [k('fp16', 256, 5), k('fp16', 1024, 6)] })).toBeUndefined();
    expect(attentionKernelCurves({ kernels: [k('int4', 256, 5), k('int4', 1024, 6), k('int8', 256, 5), k('int8', 1024, 6)] })).toBeUndefined();
  });
});
