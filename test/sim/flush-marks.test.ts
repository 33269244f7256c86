/**
 * The flush marks (which blocks a flush has moved, and from where): a driver whose marks start again
 * after every flush or every few flushes hands its executor the same batches, with the same copy
 * counts, and times the same steps as one that never starts them again; decisions that move a block
 * twice (the rounds of move-order.ts) and spills are among them.
 */
import { describe, expect, it } from 'vitest';
import { HbmSlots } from '../../sim/hbm-slots.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import type { MoveBatch } from '../../sim/executor.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Policy, PolicyView } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** random demotions and promotions, some blocks moved twice or three times in one decision; HBM filled now and then */
function churn(seed: number): Policy {
  const rnd = lcg(seed);
  return {
    name: 'churn',
    observe: () => undefined,
    decide: (v: PolicyView, a: Actions) => {
      if (v.step < 0) return;
      const n = v.nBlocks;
      for (let k = 0; k < 6; k++) {
        const b = Math.floor(rnd() * n);
        const x = rnd();
        if (x < 0.4) a.demote(v.layer, b, rnd() < 0.7 ? 'dram' : 'nvme', rnd() < 0.8 ? 16 : 8);
        else if (x < 0.8) a.promote(v.layer, b, rnd() < 0.8 ? undefined : 16);
        else {
          a.demote(v.layer, b, 'dram', 16);
          a.promote(v.layer, b);
          if (rnd() < 0.5) a.demote(v.layer, b, 'dram', 16);
        }
      }
      // now and then HBM filled up, so that the next block spills
      if (rnd() < 0.5) for (let b = 0; b < n; b++) if (v.cache.tierOf(v.layer, b) > 0) a.promote(v.layer, b);
    },
  };
}

// blocks of 256 tokens (4 KiB at 16 bits): consecutive blocks in adjacent slots are one copy, so the
// copy counts depend on the order in which a flush's moves take and free slots
const BLOCK = 256;

function run(seed: number, flushBaseMax?: number) {
  const h = { ...tinyHeader(8 * BLOCK - 100, 600), block_size: BLOCK };
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  // HBM for 8 blocks a layer (the prompt's): a new block spills when the policy has filled it
  const cache = new KVCache(tinyModel, BLOCK, 2, maxBlocks, [
    { name: 'hbm', capacityBytes: 2 * 4096 * 8 },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 0 });
  const batches: MoveBatch[] = [];
  const move = ex.move.bind(ex);
  ex.move = (b: MoveBatch) => {
    batches.push({ ...b, blocks: [...b.blocks] });
    return move(b);
  };
  const driver = new ReplayDriver(h, cache, churn(seed), ex, 8);
  driver.hbmSlots = new HbmSlots(2, maxBlocks);
  if (flushBaseMax !== undefined) driver.flushBaseMax = flushBaseMax;
  const results: StepResult[] = [];
  driver.run(trace, (r) => results.push(r));
  cache.audit();
  return { batches, results, counters: driver.counters };
}

describe('flush marks', () => {
  it('starting the marks again leaves every batch, copy count and step the same', () => {
    for (const seed of [1, 2, 3]) {
      const ref = run(seed);
      // moves of one block more than once in a flush, and spills, are exercised
      const spills = ref.batches.filter((b) => b.reason === 'spill').length;
      const twice = ref.batches.some((b, k) => ref.batches.some((c, j) => j !== k && c.layer === b.layer && c.blocks.some((x) => b.blocks.includes(x))));
      expect(spills).toBeGreaterThan(0);
      // and some moves are one copy for several blocks
      expect(ref.batches.some((b) => b.fromTier !== b.toTier && b.reason !== 'spill' && b.runs < b.blocks.length)).toBe(true);
      expect(twice).toBe(true);
      for (const max of [4096, 3 * 4096]) {
        const r = run(seed, max);
        expect(r.batches).toEqual(ref.batches);
        expect(r.results).toEqual(ref.results);
        expect(r.counters).toEqual(ref.counters);
      }
    }
  });
});
