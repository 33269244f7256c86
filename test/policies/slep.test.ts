import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { slep } from '../../policies/slep.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';
import { resolveOptions } from '../../policies/registry.js';

function latencies(buffers: number, more: { layerBytes?: number; residentLayers?: number } = {}): number[] {
  const h = tinyHeader(8, 2);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const cache = new KVCache(tinyModel, 4, 2, 3, [
    { name: 'hbm', capacityBytes: 1e6 },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 10, weightStreaming: { tier: 'dram', buffers, ...more } });
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

  it('500 B (INT4-sized) layers, layer 0 resident: only layer 1 is copied; the linear kernels read 500 B (500 us)', () => {
    // step 0: attention 0 [0,192], linear 0 [192,692] (resident, no wait), attention 1 [692,884];
    // copies of layer 1 (step 0) [0,510] and (step 1) [510,1020]; linear 1 waits for the first: [884,1384]
    // step 1: the same kernels back to back (the copy it needs ended at 1020): 2 x (192 + 500)
    expect(latencies(2, { layerBytes: 500, residentLayers: 1 })).toEqual([1384, 1384]);
    // both layers streamed: step 0 waits for the first copy (linear 0 [510,1010], attention 1 [1010,1202],
    // linear 1 [1202,1702]); step 1's copies are ready in time
    expect(latencies(2, { layerBytes: 500 })).toEqual([1702, 1384]);
    expect(() => new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 0, weightStreaming: { tier: 'dram', buffers: 2, residentLayers: 3 } })).toThrow(
      /weight streaming: residentLayers must be an integer in 0\.\.2 \(got 3\)/,
    );
  });

  it('one buffer: each copy waits for the previous linear kernel', () => {
    // step 0: copy 0 [0,1010], linear 0 [1010,2010], copy 1 [2010,3020], linear 1 [3020,4020]
    // step 1: copy 2 [4020,5030]: attention 0 [4020,4212], linear 0 [5030,6030], copy 3 [6030,7040], linear 1 [7040,8040]
    expect(latencies(1)).toEqual([4020, 4020]);
  });

  it('asks the executor to stream weights (FP16 by default: the preset\'s bytes; INT4 with scale + zero per 128 weights)', () => {
    const setup = { tiers: ['hbm', 'dram'], layers: 2, model: tinyModel } as never;
    expect(slep.create(resolveOptions(slep, {}) as never, setup).weights).toEqual({ tier: 'dram', buffers: 2, layerBytes: 1000, otherBytes: 0, residentLayers: 0 });
    // 500 parameters: 250 B packed + ceil(500 / 128) = 4 groups x 4 B
    expect(slep.create(resolveOptions(slep, { weight_bits: 4, resident_layers: 1 }) as never, setup).weights).toEqual({ tier: 'dram', buffers: 2, layerBytes: 266, otherBytes: 0, residentLayers: 1 });
    expect(slep.create(resolveOptions(slep, {}) as never, setup).quant).toEqual({ rotation: false });
    expect(slep.create(resolveOptions(slep, { kv_precision: 'int4' }) as never, setup).quant).toEqual({ rotation: false });
    expect(slep.create(resolveOptions(slep, { kv_precision: 'rotatekv-4' }) as never, setup).quant).toEqual({ rotation: true });
  });

  it('RotateKV quantizes every complete block but the sink, with rotation; the block being written stays FP16 until the next one starts', () => {
    // 4-token blocks, prompt 16: step s has 17 + s tokens; block 4 holds tokens 16..19 (complete after step 3), block 5 starts at step 4
    const r = replayPolicy(slep, 10, { prompt: 16, steps: 5, layers: 1, options: { kv_precision: 'rotatekv-2' } });
    expect(r.acts('demote:hbm:2', -1)).toEqual(['0:1', '0:2', '0:3']);
    for (const s of [0, 1, 2, 3]) expect(r.acts('demote:hbm:2', s)).toEqual([]);
    expect(r.acts('demote:hbm:2', 4)).toEqual(['0:4']);
    expect(r.bits(0)).toEqual([16, 2, 2, 2, 2, 16]);
    // uniform attention over 5 blocks at step 0, 3 of them at 2 bits: 3/5 of the rotated 2-bit error (G = 128)
    expect(r.qualities[0].quant_error).toBeCloseTo(0.6 * defaultErrorTable().relError(2, 128, true), 12);
    // the same without rotation takes the unrotated entry
    const plain = replayPolicy(slep, 10, { prompt: 16, steps: 1, layers: 1, options: { kv_precision: 'int2' } });
    expect(plain.qualities[0].quant_error).toBeCloseTo(0.6 * defaultErrorTable().relError(2, 128, false), 12);
  });
});
