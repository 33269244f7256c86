import { describe, expect, it } from 'vitest';
import { getCachePolicy } from '../../serving/cache-policy-registry.js';
import { overloadLines, overloadOf, type OverloadInput } from '../../serving/overload.js';
import type { RequestRecord } from '../../serving/request-record.js';
import { summarizeServing } from '../../serving/serve-summary.js';
import { DEFAULT_SERVING_OPTIONS, type ServingOptions } from '../../serving/serving-config.js';
import { simulateServing } from '../../serving/serving-sim.js';
import { requests, toyHardware, toyModel, toyTiers } from './helpers.js';

function rec(arrival_ms: number, status: 'served' | 'refused', reason: RequestRecord['reason'] = ''): RequestRecord {
  return {
    id: 0,
    line: 1,
    arrival_ms,
    status,
    reason,
    input_tokens: 900,
    output_tokens: 100,
    prefix_hit_tokens: 0,
    hit_tokens: [0],
    prefill_tokens: 900,
    queue_ms: 0,
    promote_ms: 0,
    ttft_ms: 0,
    tbt_mean_ms: 0,
    tbt_max_ms: 0,
    e2e_ms: 0,
    finish_ms: 0,
    slo_met: false,
  };
}

/** 4 requests of 1000 tokens over 3 s (offered 4000 / 3 = 1333.3 tokens/s); 3 served in 3 s of GPU time (1000 tokens/s) */
const base: OverloadInput = {
  records: [rec(0, 'served'), rec(1000, 'served'), rec(2000, 'refused', 'queue_timeout'), rec(3000, 'served')],
  busyMs: 3000,
  gpuBusyFraction: 0.95,
  timeScale: 1,
  maxRunning: 4,
  peakRunning: 2,
  queueP50Ms: 600,
  ttftP50Ms: 1000,
  prefixHitRatio: 0.1,
  theoreticalHitRatio: 0.5,
  hbmTokens: 5000,
};

describe('overload verdict', () => {
  it('an overloaded hand-made run: the rule, the numbers and the advice', () => {
    const v = overloadOf(base);
    expect(v.overloaded).toBe(true);
    expect(v.offered_tokens_per_s).toBeCloseTo(4000 / 3, 9);
    expect(v.capacity_tokens_per_s).toBe(1000);
    expect(v.load).toBeCloseTo(4 / 3, 12);
    // 1.333 rounded up to 2 digits; at 80% load: 1.667 -> 1.7
    expect(v.time_scale_for_capacity).toBe(1.4);
    expect(overloadLines(v)).toEqual([
      'overloaded: 1 of 4 requests refused (queue_timeout 1); queueing is 60% of TTFT p50 (queue p50 600 ms of TTFT p50 1,000 ms)',
      '  offered 1,333 tokens/s (input + output of every request over the arrival span) vs capacity 1,000 tokens/s (served tokens per GPU-busy second): load 1.33',
      '  - arrival rate: the trace offers 1.33x what this machine serves; --time-scale 1.4 (now 1) brings it to capacity, 1.7 or more to 80% of it (short queues); or keep the rate and use a faster --hardware profile (or a bigger machine)',
      '  - at most 2 requests ran at once (--max-running 4): admission waited for HBM room for their KV, so more HBM (a bigger GPU or machine profile) allows larger batches and more tokens per busy second',
      '  - prefix hits 10% of input tokens of 50% possible: more DRAM or lower-tier capacity for the prefix cache (--tier-tokens) means fewer tokens to prefill',
    ]);
  });

  it('the time scale is part of the arrival span', () => {
    const v = overloadOf({ ...base, timeScale: 2 });
    expect(v.offered_tokens_per_s).toBeCloseTo(4000 / 6, 9);
    expect(v.load).toBeCloseTo(2 / 3, 12);
    expect(v.time_scale_for_capacity).toBeNull();
    // still refused a request: overloaded, but the waits come from bursts
    expect(v.advice[0]).toBe('the offered load is 0.67x capacity over the whole trace, so the waits come from bursts: a larger --time-scale (now 2) or a faster --hardware profile shortens them');
  });

  it('queueing at exactly half of TTFT p50 without refusals is not overloaded; just above is', () => {
    const served = base.records.map((r) => ({ ...r, status: 'served' as const, reason: '' as const }));
    const half = overloadOf({ ...base, records: served, queueP50Ms: 500 });
    expect(half.overloaded).toBe(false);
    expect(half.reasons).toEqual([]);
    expect(half.advice).toEqual([]);
    expect(overloadLines(half)).toEqual([]);
    // the numbers are there either way: all 4000 tokens served in 3 s, offered over 3 s
    expect(half.load).toBeCloseTo(1, 12);
    const over = overloadOf({ ...base, records: served, queueP50Ms: 501 });
    expect(over.reasons).toEqual(['queueing is 50% of TTFT p50 (queue p50 501 ms of TTFT p50 1,000 ms)']);
  });

  it('names requests too large for HBM and the max-running limit', () => {
    const v = overloadOf({ ...base, records: [...base.records, rec(3000, 'refused', 'exceeds_hbm')], peakRunning: 4, prefixHitRatio: 0.5 });
    expect(v.reasons[0]).toBe('2 of 5 requests refused (queue_timeout 1, exceeds_hbm 1)');
    expect(v.advice[0]).toBe('1 requests need more KV than HBM holds (5,000 tokens): a --hardware profile with more HBM or a smaller --model; no --time-scale serves them');
    expect(v.advice).toContain('--max-running 4 was reached: a higher --max-running lets more requests share each iteration, if HBM holds their KV');
    expect(v.advice.some((a) => a.startsWith('prefix hits'))).toBe(false);
  });

  it('a simulated run that waits for HBM room: four 8-token requests, room for one at a time', () => {
    // toy iteration = 1000 us + 0.001 us per token: each prefill of 8 tokens takes 1000.008 us and is the only token
    const t = 1000.008;
    const reqs = requests([
      [0, 8, 1, [1, 2]],
      [0, 8, 1, [3, 4]],
      [0, 8, 1, [5, 6]],
      [1, 8, 1, [7, 8]],
    ]);
    const options: ServingOptions = { ...DEFAULT_SERVING_OPTIONS, maxQueue: Infinity, maxQueueMs: Infinity };
    const setup = { model: toyModel, hardware: toyHardware, tiers: toyTiers(12, 64), policy: getCachePolicy('lru'), options };
    const run = simulateServing(reqs, 4, setup);
    const s = summarizeServing(run, { trace: 't', traceFormat: 'mooncake', skippedLines: 0, model: 'toy', hardware: 'toy-hw', policy: 'lru', options, theoreticalHitRatio: 0 });
    // the last arrives at 1 ms: its TTFT is 4t - 1000 us
    expect(run.records.map((r) => r.ttft_ms)).toEqual([t, 2 * t, 3 * t, 4 * t - 1000].map((us) => expect.closeTo(us / 1000, 9)));
    // queue waits 0, t, 2t, 3t - 1000 us: p50 (t + 2t) / 2 = 1.5t; TTFT p50 (2t + 3t) / 2 = 2.5t; 60%
    const v = s.overload;
    expect(v.overloaded).toBe(true);
    expect(v.reasons).toEqual(['queueing is 60% of TTFT p50 (queue p50 2 ms of TTFT p50 3 ms)']);
    // 36 tokens offered over 1 ms of arrivals; 36 served in 4t of GPU time
    expect(v.offered_tokens_per_s).toBeCloseTo(36_000, 6);
    expect(v.capacity_tokens_per_s).toBeCloseTo(36 / ((4 * t) / 1e6), 6);
    expect(v.advice).toContain('at most 1 requests ran at once (--max-running 256): admission waited for HBM room for their KV, so more HBM (a bigger GPU or machine profile) allows larger batches and more tokens per busy second');
  });
});
