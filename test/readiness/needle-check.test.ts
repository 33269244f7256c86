import { describe, expect, it } from 'vitest';
import type { StepRow } from '../../sim/metrics/summary.js';
import { judgeNeedle } from '../../studies/readiness/needle-check.js';
import { needleWindow } from '../../studies/readiness/run-readiness.js';

function row(step: number, unavailable: number, degraded: number, recall = 1): StepRow {
  return { step, context_tokens: 0, latency_ms: 0, compute_ms: 0, stall_ms: 0, transfer_ms: 0, recall, recall_min: recall, bytes_moved: 0, needle_unavailable: unavailable, needle_degraded: degraded, needle_bits_min: unavailable ? 0 : degraded ? 4 : 16 };
}

describe('needle rule', () => {
  const win = { fromStep: 2, steps: 3 };

  it('passes when the needle is degraded only at the first hot step (promoted the step after)', () => {
    const rows = [row(0, 0, 1), row(1, 0, 1), row(2, 0, 1, 0.5), row(3, 0, 0, 0.9), row(4, 0, 0, 1), row(5, 0, 1)];
    const v = judgeNeedle('p', win, rows, 'm');
    expect(v.pass).toBe(true);
    expect(v.readings.find((r) => r.name.startsWith('attention recall over the active steps (mean)'))!.value).toBeCloseTo((0.5 + 0.9 + 1) / 3, 12);
    expect(v.details!.needle_bits_min_per_active_step).toEqual([4, 16, 16]);
    expect(v.readings.find((r) => r.name.startsWith('active steps with the needle below FP16, the first'))).toMatchObject({ value: 1, pass: true });
  });

  it('fails when it is still below FP16 at the second hot step, or unavailable at any hot step', () => {
    expect(judgeNeedle('p', win, [row(2, 0, 1), row(3, 0, 1), row(4, 0, 0)], 'm').pass).toBe(false);
    const v = judgeNeedle('p', win, [row(2, 1, 0), row(3, 0, 0), row(4, 0, 0)], 'm');
    expect(v.pass).toBe(false);
    expect(v.readings[1]).toMatchObject({ value: 1, pass: false });
  });

  it('fails when the run does not cover the window', () => {
    expect(judgeNeedle('p', win, [row(2, 0, 0), row(3, 0, 0)], 'm').pass).toBe(false);
  });

  it('places the window at 3/8 of the steps for 1/4 of them', () => {
    expect(needleWindow(64)).toEqual({ from_step: 24, steps: 16 });
    expect(needleWindow(8)).toEqual({ from_step: 3, steps: 2 });
  });
});
