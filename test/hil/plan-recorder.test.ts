// The plan recorder puts each block's moves of one flush in an order that starts where the block is
// and uses every move (the driver groups a decision's moves by kind, so their order is lost, and a
// block demoted, promoted and demoted again sits twice in one batch), and checks the result against
// the accounting at every layer.
import { describe, expect, it } from 'vitest';
import { blockPath, PlanRecorder } from '../../hil/executor/plan-recorder.js';
import type { LayerWork, MoveBatch } from '../../sim/executor.js';
import { KVCache } from '../../sim/kv-cache.js';
import { simulate } from '../../sim/run.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import type { Policy } from '../../policies/policy.js';
import { denseSteps, tinyHeader, tinyModel } from '../helpers/tiny.js';
import { makeHilFixture } from './hil-fixtures.js';

const batch = (reason: MoveBatch['reason'], from: [number, number], to: [number, number], blocks: number[]): MoveBatch => ({
  layer: 0, fromTier: from[0], fromBits: from[1], toTier: to[0], toBits: to[1], blocks, bytesFrom: 0, bytesTo: 0, reason, runs: blocks.length,
});

const work = (nBlocks: number): LayerWork => ({
  step: 0, layer: 0, tokens: nBlocks * 4, residentBytes: 0, quantizedBytes: 0, stagedBytes: 0, fetchBytes: [0, 0], fetchRuns: [0, 0],
  nBlocks, attendedMask: new Uint8Array(nBlocks).fill(1), attendedCount: nBlocks, kernel: 'fp16' as LayerWork['kernel'], mixedShare: 0,
});

function cacheWith(blocks: number): KVCache {
  const c = new KVCache(tinyModel, 4, 1, 8, [
    { name: 'hbm', capacityBytes: 1e6 },
    { name: 'dram', capacityBytes: 1e6 },
  ]);
  for (let b = 0; b < blocks; b++) c.create(0, 0, 16);
  return c;
}

describe('plan recorder: prefetches of single blocks', () => {
  const stage = (blocks: number[], fromTier = 1): MoveBatch => ({ ...batch('prefetch', [fromTier, 16], [0, 16], blocks) });

  it('one layer\'s single-block prefetches in a row become one stage; a move, another tier or a bulk stage starts a new one', () => {
    const cache = new KVCache(tinyModel, 4, 1, 8, [
      { name: 'hbm', capacityBytes: 1e6 },
      { name: 'dram', capacityBytes: 1e6 },
      { name: 'nvme', capacityBytes: 1e6 },
    ]);
    for (let b = 0; b < 6; b++) cache.create(0, 0, 16);
    for (const b of [1, 2, 3, 4]) cache.move(0, b, 1, 16);
    cache.move(0, 5, 2, 16);
    const rec = new PlanRecorder(cache);
    rec.beginStep(0, 24);
    rec.stage(stage([3]));
    rec.stage(stage([1]));
    rec.stage(stage([4]));
    rec.stage(stage([5], 2)); // another tier
    rec.stage(stage([2]));
    rec.stage(stage([], 1)); // bulk: every block in DRAM, apart
    rec.stage(stage([1]));
    rec.layer(work(6));
    const ops = rec.plan.steps[0].ops.filter((o) => o.kind === 'stage').map((o) => (o.kind === 'stage' ? `${o.fromTier}:[${o.blocks.join(' ')}]` : ''));
    expect(ops).toEqual(['1:[3 1 4]', '2:[5]', '1:[2]', '1:[1 2 3 4]', '1:[1]']);
  });
});

describe('plan recorder: order of one flush\'s moves', () => {
  it('a block demoted, promoted and demoted again in one decision (listed twice in the demote batch) ends demoted, each move once', () => {
    // the case of lru-offload on the bundled 2k trace at 10%: layer 0 block 128 thrashed this way in step 1
    const cache = cacheWith(3);
    const rec = new PlanRecorder(cache);
    rec.beginStep(0, 12);
    // the decision: demote 1, demote 2, promote 1, demote 1 (the accounting ends with 1 and 2 in DRAM)
    cache.move(0, 1, 1, 16);
    cache.move(0, 2, 1, 16);
    cache.move(0, 1, 0, 16);
    cache.move(0, 1, 1, 16);
    // the driver's flush: one batch per (kind, tiers, bits), blocks in decision order
    rec.move(batch('demote', [0, 16], [1, 16], [1, 2, 1]));
    rec.move(batch('promote', [1, 16], [0, 16], [1]));
    rec.layer(work(3));
    const moves = rec.plan.steps[0].ops.filter((o) => o.kind === 'move').map((o) => (o.kind === 'move' ? `${o.reason} [${o.blocks.join(' ')}]` : ''));
    expect(moves).toEqual(['demote [1 2]', 'promote [1]', 'demote [1]']);
  });

  it('finds the order where taking the moves as they come runs into a dead end', () => {
    const batches = [batch('demote', [0, 16], [1, 4], [0]), batch('demote', [0, 16], [1, 16], [0]), batch('promote', [1, 16], [0, 16], [0])];
    // 0/16 -> 1/4 first leaves the other two stranded; the only full order is 1/16, back, then 1/4
    expect(blockPath(0, 16, [0, 1, 2], batches)).toEqual([1, 2, 0]);
    // from DRAM at 16 bits no order uses all three
    expect(blockPath(1, 16, [0, 1, 2], batches)).toBeNull();
    expect(blockPath(1, 16, [2, 1], batches)).toEqual([2, 1]);
    // a spill starts where the block does not exist yet
    expect(blockPath(-1, 0, [0], [batch('spill', [0, 16], [1, 16], [0])])).toEqual([0]);
  });

  it('names the block and its moves when no order fits, and catches a recorded place that differs from the accounting', () => {
    const cache = cacheWith(2);
    const rec = new PlanRecorder(cache);
    rec.beginStep(0, 8);
    rec.move(batch('promote', [1, 16], [0, 16], [0]));
    expect(() => rec.layer(work(2))).toThrow(/layer 0 block 0: it is in tier 0 at 16 bits and no order of its moves \(promote 1\/16b->0\/16b\) starts there/);
    const cache2 = cacheWith(2);
    const rec2 = new PlanRecorder(cache2);
    rec2.beginStep(0, 8);
    rec2.move(batch('demote', [0, 16], [1, 16], [1])); // the accounting never moved block 1
    expect(() => rec2.layer(work(2))).toThrow(/leave layer 0 block 1 in tier 1 at 16 bits, the accounting has it in tier 0 at 16 bits/);
  });

  it('records thrashing lru-offload runs with every layer\'s places matching the accounting, and lowers them', () => {
    const fx = makeHilFixture(512, 8);
    for (const budget of ['5%', '10%']) {
      let rec: PlanRecorder | undefined;
      const r = simulate({ trace: fx.trace, policy: 'lru-offload', policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: budget, group_size: 64 }, {
        executor: (resolved, cache) => (rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
      });
      expect(r.summary.actions.promote).toBeGreaterThan(0);
      const p = lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 256 << 10, groupSize: 64 });
      expect(p.steps.length).toBe(8);
    }
  });
});

describe('plan recorder behind the replay driver: a decision\'s moves and stages in the policy\'s order', () => {
  it('a block demoted and then prefetched in one decision is staged from where the move put it (no fetch left for the layer)', () => {
    // one layer, prompt 32 tokens = blocks 0..7 (4-token blocks), all in HBM after prefill
    const h = tinyHeader(32, 1, 1);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 9, [
      { name: 'hbm', capacityBytes: 1e6 },
      { name: 'dram', capacityBytes: 1e6 },
    ]);
    const policy: Policy = {
      name: 'scripted',
      decide(v, a) {
        if (v.step !== 0) return;
        a.demote(0, 3, 'dram', 16);
        a.demote(0, 5, 'dram', 16);
        a.prefetch(0, 3);
      },
      observe() {},
    };
    const rec = new PlanRecorder(cache);
    new ReplayDriver(h, cache, policy, rec, 20).run(trace, () => undefined);
    const ops = rec.plan.steps[0].ops.map((o) => (o.kind === 'layer' ? 'layer' : o.kind === 'move' ? `move ${o.fromTier}->${o.toTier} [${o.blocks.join(' ')}]` : `stage ${o.fromTier} [${o.blocks.join(' ')}]`));
    // the stage after the demotions: block 3 leaves HBM first, then its staged copy comes back; block 5,
    // not staged, is the layer's only block read from DRAM
    expect(ops).toEqual(['move 0->1 [3 5]', 'stage 1 [3]', 'layer']);
  });
});
