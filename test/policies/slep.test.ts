import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { slep } from '../../policies/slep.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

function latencies(buffers: number): number[] {
  const h = tinyHeader(8, 2);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const cache = new KVCache(tinyModel, 4, 2, 3, [
    { name: 'hbm', capacityBytes: 1e6 },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 10, weightStreaming: { tier: 'dram', buffers } });
  const driver = new ReplayDriver(h, cache, { name: 'none', decide: () => undefined, observe: () => undefined }, ex, 10);
  const out: StepResult[] = [];
  driver.run(trace, (r) => out.push(r));
  return out.map((r) => r.timing.latency_us);
}

describe('slep: weights streamed layer by layer (tiny machine: 1000 B of weights = 1010 us over PCIe)', () => {
  it('double buffering: the next layer\'s copy overlaps this layer; steady state has no stall', () => {
    // step 0: copies 0 [0,1010], 1 [1010,2020]; linear 0 [1010,2010]; attention 1 [2010,2202]; linear 1 [2202,3202]
    // step 1: copy 2 [2020,3030] and copy 3 [3202,4212] are ready in time: 2 x (192 + 1000)
    expect(latencies(2)).toEqual([3202, 2384]);
  });

  it('one buffer: each copy waits for the previous linear kernel', () => {
    // step 0: copy 0 [0,1010], linear 0 [1010,2010], copy 1 [2010,3020], linear 1 [3020,4020]
    // step 1: copy 2 [4020,5030]: attention 0 [4020,4212], linear 0 [5030,6030], copy 3 [6030,7040], linear 1 [7040,8040]
    expect(latencies(1)).toEqual([4020, 4020]);
  });

  it('asks the executor to stream weights, and RotateKV quantizes the KV with rotation (sink and newest block FP16)', () => {
    const r = replayPolicy(slep, 10, { prompt: 16, steps: 2, layers: 1, options: { kv_precision: 'rotatekv-2' } });
    expect(slep.create({ weights_tier: 'dram', buffers: 2, kv_precision: 'fp16', offload_tier: 'dram' }, { tiers: ['hbm', 'dram'], layers: 1 } as never).weights).toEqual({ tier: 'dram', buffers: 2 });
    expect(r.acts('demote:hbm:2', -1)).toEqual(['0:1', '0:2', '0:3']);
    expect(r.acts('demote:hbm:2', 1)).toEqual(['0:4']);
    expect(r.bits(0)).toEqual([16, 2, 2, 2, 2]);
    expect(r.qualities[0].quant_error).toBeCloseTo(0.6 * defaultErrorTable().relError(2, 128, true), 6);
  });
});
