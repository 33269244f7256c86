import { describe, expect, it } from 'vitest';
import { judgeStutter, strictMasking, unionOf } from '../../studies/readiness/stutter-check.js';
import type { TraceSpan } from '../../sim/stream.js';

const span = (stream: string, cat: string, start: number, end: number): TraceSpan => ({ stream, cat, name: cat, start, end });

describe('strict masking', () => {
  it('merges intervals', () => {
    expect(unionOf([[5, 7], [0, 2], [1, 3], [7, 8], [9, 9]])).toEqual([[0, 3], [5, 8]]);
  });

  it('counts compute idle time under copies (hand case: 2 of 10 us exposed)', () => {
    // copies in flight 0..10 (two overlapping copies on two streams); compute busy 0..4 and 6..12
    const spans = [span('memory', 'copy', 0, 7), span('host-io', 'copy', 5, 10), span('compute', 'kernel', 0, 4), span('compute', 'kernel', 6, 12), span('memory', 'kernel', 4, 6)];
    const s = strictMasking(spans);
    expect(s).toEqual({ inFlightUs: 10, exposedUs: 2, masking: 0.8 });
  });

  it('is 1 without copies', () => {
    expect(strictMasking([span('compute', 'kernel', 0, 5)])).toEqual({ inFlightUs: 0, exposedUs: 0, masking: 1 });
  });
});

describe('stutter rule', () => {
  it('needs both readings above 95%', () => {
    const strict = (m: number) => ({ inFlightUs: 100, exposedUs: 100 * (1 - m), masking: m });
    expect(judgeStutter('p', 0.96, strict(0.96), 'm').pass).toBe(true);
    expect(judgeStutter('p', 0.96, strict(0.95), 'm').pass).toBe(false);
    const v = judgeStutter('p', 0.95, strict(0.99), 'm');
    expect(v.pass).toBe(false);
    expect(v.readings.map((r) => r.pass)).toEqual([false, true]);
  });
});
