import { describe, expect, it } from 'vitest';
import { readRequestTrace } from '../../traces/requests/read-request-trace.js';
import { bundledTracePath } from '../../traces/requests/bundled-traces.js';
import { join } from 'node:path';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { getCachePolicy } from '../../serving/cache-policy-registry.js';
import { theoreticalPrefixHitRatio } from '../../serving/prefix-replay.js';
import { summarizeServing } from '../../serving/serve-summary.js';
import { DEFAULT_SERVING_OPTIONS, type ServingOptions } from '../../serving/serving-config.js';
import { ServingSimulation, simulateServing } from '../../serving/serving-sim.js';
import { resolveServingTiers, type ServingTier } from '../../serving/serving-tiers.js';
import type { ServingRequest } from '../../traces/requests/request.js';
import { requests, toyHardware, toyModel, toyTiers } from './helpers.js';

const lru = getCachePolicy('lru');
const unlimited: ServingOptions = { ...DEFAULT_SERVING_OPTIONS, maxQueue: Infinity, maxQueueMs: Infinity };

function toyRun(reqs: ServingRequest[], tiers: ServingTier[], options: Partial<ServingOptions> = {}) {
  const setup = { model: toyModel, hardware: toyHardware, tiers, policy: lru, options: { ...unlimited, ...options } };
  const checks: string[] = [];
  const sim = new ServingSimulation(reqs, 4, setup, {
    onChange: (s) => {
      s.cache.checkInvariants();
      for (let t = 0; t < tiers.length; t++) if (s.cache.usedTokens(t) > tiers[t].capacityTokens) checks.push(`tier ${t} over capacity`);
    },
  });
  const run = sim.run();
  expect(checks).toEqual([]);
  return { run, sim, setup };
}

/** iteration time of the toy setup, us */
const iter = (kvRead: number, tokens: number) => 1000 + (kvRead + tokens) / 1000;

describe('serving simulation, hand-computed timelines (toy model: iteration = 1000 us + 0.001 us per KV token)', () => {
  it('shares a prefix: the second request waits for the first to compute the shared block, then prefills only its own', () => {
    const reqs = requests([
      [0, 8, 2, [1, 2]],
      [0, 8, 1, [1, 3]],
    ]);
    const { run } = toyRun(reqs, toyTiers(64, 64));
    const [a, b] = run.records;
    // iteration 1: A prefills 8 tokens (B depends on block 1, not computed yet)
    const t1 = iter(0, 8);
    // iteration 2: A decodes (context 9, reads 8), B prefills its 4 own tokens after the 4 matched (reads 4)
    const t2 = t1 + iter(8 + 4, 1 + 4);
    expect(a).toMatchObject({ status: 'served', reason: '', queue_ms: 0, prefix_hit_tokens: 0, prefill_tokens: 8 });
    expect(a.ttft_ms).toBeCloseTo(t1 / 1000, 9);
    expect(a.tbt_mean_ms).toBeCloseTo((t2 - t1) / 1000, 9);
    expect(a.e2e_ms).toBeCloseTo(t2 / 1000, 9);
    expect(b).toMatchObject({ status: 'served', queue_ms: 0, prefix_hit_tokens: 4, hit_tokens: [4, 0], prefill_tokens: 4 });
    expect(b.ttft_ms).toBeCloseTo(t2 / 1000, 9);
    expect(b.tbt_mean_ms).toBeNaN();
    expect(run.iterations).toBe(2);
    expect([...run.tbtMs]).toHaveLength(1);
    const s = summarizeServing(run, { trace: 't', traceFormat: 'mooncake', skippedLines: 0, model: 'toy', hardware: 'toy-hw', policy: 'lru', options: unlimited, theoreticalHitRatio: theoreticalPrefixHitRatio(reqs, 4) });
    expect(s.prefix_hit_ratio).toBe(4 / 16);
    expect(s.theoretical_prefix_hit_ratio).toBe(4 / 16);
    expect(s.tier_hit_ratio).toEqual({ hbm: 4 / 16, dram: 0 });
    expect(s.backpressure_events).toBe(0);
  });

  it('queues for HBM, demotes to DRAM to admit, and promotes a DRAM hit over the link before prefill', () => {
    const reqs = requests([
      [0, 8, 4, [1, 2]], // A: 2 blocks + 4 output tokens = 12 of 16 HBM tokens
      [0, 8, 4, [3, 4]], // B: needs 12 too: waits for A
      [10, 8, 1, [1, 2]], // C at 10 ms: block 1 in HBM, block 2 in DRAM
    ]);
    const { run } = toyRun(reqs, toyTiers(16, 64));
    const [a, b, c] = run.records;
    const aDone = iter(0, 8) + iter(8, 1) + iter(9, 1) + iter(10, 1);
    expect(a.e2e_ms).toBeCloseTo(aDone / 1000, 9);
    // B is admitted when A finishes; A's block 2 (released first, so least recent) goes to DRAM
    expect(b.queue_ms).toBeCloseTo(aDone / 1000, 9);
    expect(b.e2e_ms).toBeCloseTo((2 * aDone) / 1000, 9);
    // C: 1 hits in HBM, 2 in DRAM; 2 comes up over pcie: 5 us + 16 bytes / 1 GB/s; then 1 token of prefill
    const promote = 5 + 16 / 1000;
    expect(c).toMatchObject({ status: 'served', queue_ms: 0, prefix_hit_tokens: 8, hit_tokens: [4, 4], prefill_tokens: 1 });
    expect(c.promote_ms).toBeCloseTo(promote / 1000, 12);
    expect(c.ttft_ms).toBeCloseTo((promote + iter(7, 1)) / 1000, 9);
    // demoted: block 2 (admitting B) and block 4 (admitting C); promoted: block 2
    expect(run.demotedBlocks).toEqual([2, 0]);
    expect(run.promotedBlocks).toEqual([0, 1]);
    expect(run.linkBytes).toEqual({ 'pcie:hbm->dram': 32, 'pcie:dram->hbm': 16 });
    expect(run.peakTokens[0]).toBe(16);
  });

  it('refuses with a reason: too large for HBM, queue full, waited too long', () => {
    const reqs = requests([
      [0, 8, 4, [1, 2]], // A runs until 4000.038 us
      [0, 20, 1, [3, 4, 5, 6, 7]], // 5 blocks + 1 = 21 > 16 tokens of HBM: never fits
      [0, 8, 4, [8, 9]], // waits (the queue holds 1)
      [0, 8, 4, [10, 11]], // queue full
      [5, 4, 1, [12]], // arrives at 5 ms: queue empty by then, fits
    ]);
    const { run } = toyRun(reqs, toyTiers(16, 64), { maxQueue: 1, maxQueueMs: 1.5 });
    expect(run.records.map((r) => [r.status, r.reason])).toEqual([
      ['served', ''],
      ['refused', 'exceeds_hbm'],
      ['refused', 'queue_timeout'],
      ['refused', 'queue_full'],
      ['served', ''],
    ]);
    expect(run.records[4].queue_ms).toBe(0);
    expect(run.peakQueued).toBe(1);
    const s = summarizeServing(run, { trace: 't', traceFormat: 'mooncake', skippedLines: 0, model: 'toy', hardware: 'toy-hw', policy: 'lru', options: unlimited, theoreticalHitRatio: 0 });
    expect(s.backpressure).toEqual({ queue_full: 1, queue_timeout: 1, exceeds_hbm: 1 });
    expect([s.served, s.refused, s.backpressure_events]).toEqual([2, 3, 3]);
    // SLO: 2 of 5 requests served, both fast enough for the defaults
    expect(s.slo.attainment).toBe(2 / 5);
  });

  it('holds max-running and the token budget: a small budget chunks a prefill over iterations', () => {
    const reqs = requests([[0, 10, 1, [1, 2, 3]]]);
    const { run } = toyRun(reqs, toyTiers(64, 0), { maxBatchTokens: 4 });
    // chunks of 4, 4, 2 tokens starting at 0, 4, 8 (each reads the KV before it)
    expect(run.iterations).toBe(3);
    expect(run.records[0].ttft_ms).toBeCloseTo((iter(0, 4) + iter(4, 4) + iter(8, 2)) / 1000, 9);
  });
});

describe('overload: the memory tsunami', () => {
  const model = loadModel('llama-3-8b');
  const hardware = loadHardware('h100-pcie5');
  // 64 requests of 20k input + 1k output tokens at once; HBM holds 100k tokens: 4 run at a time
  const flood = requests(Array.from({ length: 64 }, (_, i) => [0, 20_000, 1000, Array.from({ length: 40 }, (_, j) => i * 100 + j)] as [number, number, number, number[]]));
  const tiers = resolveServingTiers(hardware, model, { tierTokens: { hbm: 100_000 } });

  function flooded(options: Partial<ServingOptions>) {
    const peaks: number[] = [];
    let changes = 0;
    const sim = new ServingSimulation(flood, 512, { model, hardware, tiers, policy: lru, options: { ...DEFAULT_SERVING_OPTIONS, ...options } }, {
      onChange: (s) => {
        changes++;
        s.cache.checkInvariants();
        peaks.push(s.cache.usedTokens(0));
        expect(s.running.length).toBeLessThanOrEqual(4);
      },
    });
    const run = sim.run();
    expect(Math.max(...peaks)).toBeLessThanOrEqual(100_000);
    expect(changes).toBe(2 * run.records.filter((r) => r.status === 'served').length);
    for (const r of run.records) {
      expect(['served', 'refused']).toContain(r.status);
      if (r.status === 'served') {
        expect(r.reason).toBe('');
        expect(Number.isFinite(r.ttft_ms) && Number.isFinite(r.e2e_ms)).toBe(true);
      } else expect(['queue_full', 'queue_timeout', 'exceeds_hbm']).toContain(r.reason);
    }
    return run;
  }

  it('with a queue of 16: 4 run, 16 wait and are served, 44 are refused at once', () => {
    const run = flooded({ maxQueue: 16, maxQueueMs: Infinity });
    const count = (status: string, reason = '') => run.records.filter((r) => r.status === status && r.reason === reason).length;
    expect(count('served')).toBe(20);
    expect(count('refused', 'queue_full')).toBe(44);
    expect(run.records.slice(0, 20).every((r) => r.status === 'served')).toBe(true);
    expect(run.peakRunning).toBe(4);
  });

  it('with a wait limit: whoever is not admitted in time is refused, nobody is lost', () => {
    const run = flooded({ maxQueue: Infinity, maxQueueMs: 20_000 });
    const served = run.records.filter((r) => r.status === 'served');
    const timedOut = run.records.filter((r) => r.reason === 'queue_timeout');
    expect(served.length + timedOut.length).toBe(64);
    expect(served.length).toBeGreaterThanOrEqual(4);
    expect(timedOut.length).toBeGreaterThan(0);
    for (const r of served) expect(r.queue_ms).toBeLessThanOrEqual(20_000);
    // admission is FIFO: the served ones are the first arrivals
    expect(run.records.slice(0, served.length).every((r) => r.status === 'served')).toBe(true);
  });

  it('is deterministic: the same inputs give identical records', () => {
    const a = flooded({ maxQueue: 16, maxQueueMs: 30_000 });
    const b = flooded({ maxQueue: 16, maxQueueMs: 30_000 });
    expect(JSON.stringify(a.records)).toBe(JSON.stringify(b.records));
    expect([...a.tbtMs]).toEqual([...b.tbtMs]);
  });
});

describe('real traces', () => {
  const model = loadModel('llama-3-8b');
  const hardware = loadHardware('h100-pcie5');

  it('with unbounded capacity and no backpressure reproduces the theoretical prefix ratio exactly (synthetic)', () => {
    const trace = readRequestTrace(bundledTracePath('synthetic'));
    const tiers = resolveServingTiers(hardware, model, { capacityTokens: Infinity });
    const run = simulateServing(trace.requests, 512, { model, hardware, tiers, policy: lru, options: unlimited });
    const s = summarizeServing(run, { trace: 'synthetic', traceFormat: 'mooncake', skippedLines: 0, model: model.name, hardware: hardware.name, policy: 'lru', options: unlimited, theoreticalHitRatio: theoreticalPrefixHitRatio(trace.requests, 512) });
    expect(s.served).toBe(3993);
    expect(s.prefix_hit_ratio).toBe(s.theoretical_prefix_hit_ratio);
    expect(s.dropped_blocks).toBe(0);
    const tierSum = Object.values(s.tier_hit_ratio).reduce((a, b) => a + b, 0);
    expect(tierSum).toBeCloseTo(s.prefix_hit_ratio, 12);
    expect(s.tier_hit_ratio.nvme).toBeGreaterThan(0);
  });

  it('keeps every tier within capacity on the conversation trace with small tiers (checked every 25 changes)', () => {
    const trace = readRequestTrace(bundledTracePath('conversation'));
    const reqs = trace.requests.slice(0, 1500);
    const tiers = resolveServingTiers(hardware, model, { tierTokens: { hbm: 300_000, dram: 200_000, cxl: 100_000, nvme: 1_000_000 } });
    let n = 0;
    const run = new ServingSimulation(reqs, 512, { model, hardware, tiers, policy: getCachePolicy('arc'), options: DEFAULT_SERVING_OPTIONS }, {
      onChange: (s) => {
        if (n++ % 25 === 0) s.cache.checkInvariants();
      },
    }).run();
    expect(run.records.every((r) => r.status === 'served' || r.status === 'refused')).toBe(true);
    run.peakTokens.forEach((p, t) => expect(p).toBeLessThanOrEqual(tiers[t].capacityTokens));
    expect(run.droppedBlocks).toBeGreaterThan(0);
  });

  it('replays the hand-made Azure sample: no prefix hashes, so no reuse; everyone served', () => {
    const trace = readRequestTrace(join(import.meta.dirname, '../../traces/requests/data/samples/azure-sample.csv'));
    const tiers = resolveServingTiers(hardware, model, {});
    const run = simulateServing(trace.requests, trace.block_tokens, { model, hardware, tiers, policy: lru, options: DEFAULT_SERVING_OPTIONS });
    expect(run.records.map((r) => r.status)).toEqual(Array(8).fill('served'));
    expect(run.records.every((r) => r.prefix_hit_tokens === 0 && r.prefill_tokens === r.input_tokens)).toBe(true);
  });
});
