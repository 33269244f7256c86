import { describe, expect, it } from 'vitest';
import { percentile, summarize } from '../../sim/metrics/percentiles.js';
import { summarizeRun } from '../../sim/metrics/summarize-run.js';
import type { StepRow } from '../../sim/metrics/summary.js';
import type { NeedleSummary } from '../../sim/quality/quality-meter.js';

describe('percentile (linear interpolation between closest ranks, numpy default)', () => {
  it('interpolates at rank (n - 1) * q / 100', () => {
    const v = [10, 20, 30, 40, 50];
    // ranks 0..4: q 50 -> 2 (30); q 90 -> 3.6 (40 + 0.6 * 10); q 99 -> 3.96; q 25 -> 1 (20)
    expect(percentile(v, 0)).toBe(10);
    expect(percentile(v, 25)).toBe(20);
    expect(percentile(v, 50)).toBe(30);
    expect(percentile(v, 90)).toBeCloseTo(46, 12);
    expect(percentile(v, 99)).toBeCloseTo(49.6, 12);
    expect(percentile(v, 100)).toBe(50);
  });

  it('an even count takes the midpoint for the median; one value is every percentile; none is NaN', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    // rank 3 * 0.1 = 0.3: 1 + 0.3 * 1
    expect(percentile([1, 2, 3, 4], 10)).toBeCloseTo(1.3, 12);
    expect(percentile([7], 0)).toBe(7);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([7], 100)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('reads a typed array as it reads a plain one', () => {
    expect(percentile(Float64Array.from([0, 100]), 30)).toBeCloseTo(30, 12);
  });
});

describe('summarize', () => {
  it('sorts numerically before taking percentiles; mean and max of the values', () => {
    // sorted: 1, 2, 9, 10, 100 (a string sort would put 10 and 100 before 2)
    const s = summarize([10, 2, 100, 1, 9]);
    expect(s.p50).toBe(9);
    // rank 3.6: 10 + 0.6 * 90
    expect(s.p90).toBeCloseTo(64, 10);
    // rank 3.96: 10 + 0.96 * 90
    expect(s.p99).toBeCloseTo(96.4, 10);
    expect(s.mean).toBe(24.4);
    expect(s.max).toBe(100);
  });

  it('an empty input gives NaN everywhere', () => {
    const s = summarize([]);
    for (const k of ['p50', 'p90', 'p99', 'mean', 'max'] as const) expect(s[k]).toBeNaN();
  });
});

describe('summarizeRun', () => {
  const row = (step: number, latency_ms: number, stall_ms: number, transfer_ms: number, recall: number, recall_min: number): StepRow => ({
    step,
    context_tokens: 100 + step,
    latency_ms,
    compute_ms: latency_ms - stall_ms,
    stall_ms,
    transfer_ms,
    recall,
    recall_min,
    bytes_moved: 0,
  });
  const base = {
    trace: 't.kvt',
    policy: 'p',
    model: 'm',
    hardware: 'h',
    budgetBytes: 250,
    fullKvBytes: 1000,
    linkBytes: { 'pcie:hbm->dram': 64, 'pcie:dram->hbm': 192 },
    peak: { hbm: 250 },
    counters: { actions: { evict: 3 }, refused: { demote: 1 }, refusalExamples: {}, peakStagingBytes: 0 },
  };

  it('hand-computed: throughput, stall, masking, recall mean / min / p1, bytes, budget share', () => {
    const steps = [row(0, 2, 0.5, 1, 0.9, 0.8), row(1, 4, 0, 1, 0.7, 0.6), row(2, 6, 0.5, 2, 1, 0.95)];
    const s = summarizeRun({ ...base, steps });
    expect(s.schema).toBe('kvtier-summary/v1');
    expect(s.status).toBe('ok');
    expect([s.trace, s.policy, s.model, s.hardware]).toEqual(['t.kvt', 'p', 'm', 'h']);
    expect(s.hbm_budget_bytes).toBe(250);
    expect(s.steps).toBe(3);
    expect(s.hbm_budget_fraction).toBe(0.25);
    expect(s.tbt_ms).toEqual({ p50: 4, p90: expect.closeTo(5.6, 10), p99: expect.closeTo(5.96, 10), mean: 4, max: 6 });
    // 3 tokens in 12 ms
    expect(s.tokens_per_s).toBe(250);
    expect(s.compute_ms).toBe(11);
    expect(s.stall_ms).toBe(1);
    expect(s.transfer_ms).toBe(4);
    expect(s.masking_efficiency).toBe(0.75);
    expect(s.attention_recall.mean).toBeCloseTo(0.8666666666666667, 12);
    expect(s.attention_recall.min).toBe(0.6);
    // recalls sorted 0.7, 0.9, 1: rank 0.02 -> 0.7 + 0.02 * 0.2
    expect(s.attention_recall.p1).toBeCloseTo(0.704, 12);
    expect(s.bytes_total).toBe(256);
    expect(s.actions).toEqual({ evict: 3 });
    expect(s.refused_actions).toEqual({ demote: 1 });
    expect(s.peak_occupancy_bytes).toEqual({ hbm: 250 });
    expect('quant_error' in s).toBe(false);
  });

  it('nothing transferred masks everything; no steps gives NaN throughput', () => {
    expect(summarizeRun({ ...base, steps: [row(0, 2, 0, 0, 1, 1)] }).masking_efficiency).toBe(1);
    const empty = summarizeRun({ ...base, steps: [] });
    expect(empty.tokens_per_s).toBeNaN();
    expect(empty.attention_recall.mean).toBe(0);
    // steps that took no time give no throughput figure (not Infinity)
    expect(summarizeRun({ ...base, steps: [row(0, 0, 0, 0, 1, 1)] }).tokens_per_s).toBeNaN();
  });

  it('carries the quantization error and the needle when the run measured them', () => {
    const needle: NeedleSummary = {
      block: 3,
      layers: [1, 2],
      active_from_step: 5,
      active_steps: 10,
      unavailable_steps: 2,
      degraded_steps: 1,
      first_unavailable_step: 7,
      first_degraded_step: 6,
      unavailable_active_steps: 2,
      degraded_active_steps: 1,
      retained: false,
      available: false,
    };
    const s = summarizeRun({ ...base, steps: [row(0, 2, 0, 0, 1, 1)], quality: { quant_error: { mean: 0.01, max: 0.05 }, needle } });
    expect(s.quant_error).toEqual({ mean: 0.01, max: 0.05 });
    expect(s.needle).toEqual(needle);
    const noNeedle = summarizeRun({ ...base, steps: [row(0, 2, 0, 0, 1, 1)], quality: { quant_error: { mean: 0, max: 0 } } });
    expect(noNeedle.quant_error).toEqual({ mean: 0, max: 0 });
    expect('needle' in noNeedle).toBe(false);
  });
});
