// The simulator's count of host-slot spread (sim/host-spread.ts) for the copies the driver does not
// list block by block (a bulk stage's, a layer's fetches) equals what the lowered plan issues: the
// doublings of the distances between the host slots of each memory-stream batch's coalesced copies,
// and so does its count of adjacent copies: the copies whose host slot is the one right after the
// previous copy's last.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import type { LoweredPlan } from '../../hil/executor/lowered-plan.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import type { LayerWork, MoveBatch } from '../../sim/executor.js';
import { adjacentCopies, gapDoublings } from '../../sim/host-spread.js';
import { simulate } from '../../sim/run.js';
import { makeHilFixture } from './hil-fixtures.js';

/** a plan recorder that asks the driver for the spread counts, and sums them */
class SpreadRecorder extends PlanRecorder {
  readonly usesSpread = true;
  bulk = 0;
  bulkStages = 0;
  fetch = 0;
  /** adjacent copies the driver counted: bulk stages, listed stages, fetches */
  adjacent = { bulk: 0, listed: 0, fetch: 0 };
  /** the simulated executor's count for promotions into HBM at the same bits (adjacentCopies less the blocks a run joins) */
  promoteAdjacent = 0;
  promoteRuns = 0;
  override move(b: MoveBatch): number {
    if (b.toTier === 0 && b.reason === 'promote' && b.fromBits === b.toBits) {
      this.promoteAdjacent += Math.max(0, adjacentCopies(b.blocks) - (b.blocks.length - Math.max(1, b.runs)));
      this.promoteRuns += Math.max(1, b.runs);
    }
    return super.move(b);
  }
  override stage(b: MoveBatch): number {
    if (b.blocks.length === 0) {
      this.bulk += b.spread ?? 0;
      this.bulkStages++;
      this.adjacent.bulk += b.adjacent ?? 0;
    } else this.adjacent.listed += b.adjacent ?? 0;
    return super.stage(b);
  }
  override layer(w: LayerWork): void {
    for (const x of w.fetchSpread ?? []) this.fetch += x;
    for (const x of w.fetchAdjacent ?? []) this.adjacent.fetch += x;
    super.layer(w);
  }
}

/** per label prefix, the doublings between the host slots of each memory-stream batch's copies, in the order issued */
function issued(p: LoweredPlan, prefix: string): { doublings: number; batches: number; adjacent: number; copies: number } {
  let doublings = 0;
  let batches = 0;
  let adjacent = 0;
  let copies = 0;
  for (const s of p.steps) {
    const at = new Map<number, number>();
    s.ops.forEach((op, i) => op.o === 'mark' && at.set(op.id, i));
    for (const [m0, m1, label] of s.memSpans) {
      if (!label.startsWith(prefix)) continue;
      batches++;
      let prev = -1;
      for (const op of s.ops.slice(at.get(m0)! + 1, at.get(m1)!)) {
        if (op.o !== 'copy' || op.dst !== 'arena') continue;
        const first = Math.floor(op.srcOff / p.slotBytes);
        if (prev >= 0) doublings += gapDoublings(Math.abs(first - prev));
        if (prev >= 0 && first === prev + 1) adjacent++;
        copies++;
        prev = Math.floor((op.srcOff + op.bytes - 1) / p.slotBytes);
      }
    }
  }
  return { doublings, batches, adjacent, copies };
}

describe('the spread of bulk stages and fetches, against the lowered plan', () => {
  const fx = makeHilFixture(2048, 6);
  afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

  const run = (policy: string, policy_options: Record<string, unknown>, budget: string, slabBytes = 256 << 10) => {
    let rec: SpreadRecorder | undefined;
    const r = simulate({ trace: fx.trace, policy, policy_options, model: fx.model, hardware: 'h100-pcie5', hbm_budget: budget, group_size: 64 }, {
      executor: (resolved, cache) => (rec = new SpreadRecorder(cache, allLinkKeys(resolved.hardware))),
    });
    return { rec: rec!, plan: lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes, groupSize: 64 }) };
  };

  it('LRU offload\'s bulk stages: the same doublings the plan\'s prefetch batches issue', () => {
    const { rec, plan } = run('lru-offload', {}, '30%');
    const hil = issued(plan, 'prefetch ');
    expect(rec.bulkStages).toBeGreaterThan(0);
    expect(hil.batches).toBe(rec.bulkStages);
    expect(hil.doublings).toBeGreaterThan(10);
    expect(rec.bulk).toBeCloseTo(hil.doublings, 9);
  });

  it('a layer\'s fetches: the same doublings the plan\'s fetch batches issue', () => {
    for (const [policy, options, budget] of [
      ['lru-offload', { prefetch: false }, '30%'],
      ['lru-offload', {}, '15%'],
      ['arc', {}, '20%'],
      ['synapsevm', {}, '20%'],
      ['uniform-int8', {}, '20%'],
      ['smartkv', {}, '20%'],
      ['oracle', {}, '20%'],
    ] as const) {
      const { rec, plan } = run(policy, options, budget);
      const hil = issued(plan, 'fetch ');
      expect(hil.doublings, `${policy} ${budget}`).toBeGreaterThan(1);
      expect(rec.fetch, `${policy} ${budget}`).toBeCloseTo(hil.doublings, 9);
    }
  });

  it('adjacent copies: the driver counts those the plan issues from the slot right after the previous copy\'s', () => {
    // quantized blocks (each its own copy) staged in bulk (uniform INT8, SmartKV) and fetched (SynapseVM,
    // uniform INT8, SmartKV); listed stages are few here (test/sim/driver-spread.test.ts counts theirs)
    let any = { bulk: 0, fetch: 0 };
    let promoted = 0;
    for (const [policy, options, budget] of [
      ['uniform-int8', {}, '20%'],
      ['uniform-int8', {}, '40%'],
      ['lru-offload', {}, '30%'],
      ['synapsevm', {}, '20%'],
      ['smartkv', {}, '20%'],
      ['smartkv', {}, '10%'],
      ['arc', {}, '20%'],
      ['oracle', {}, '20%'],
    ] as const) {
      // (the HIL's 2 MiB slabs, as the simulator's HBM slots assume: its promotions join the same blocks)
      const { rec, plan } = run(policy, options, budget, 2 << 20);
      const what = `${policy} ${budget}`;
      expect(rec.adjacent.bulk + rec.adjacent.listed, what).toBe(issued(plan, 'prefetch ').adjacent);
      expect(rec.adjacent.fetch, what).toBe(issued(plan, 'fetch ').adjacent);
      // promotions into HBM slots: consecutive blocks whose slots touch are one copy
      const promote = issued(plan, 'promote ');
      expect(rec.promoteRuns, what).toBe(promote.copies);
      expect(rec.promoteAdjacent, what).toBe(promote.adjacent);
      promoted += rec.promoteAdjacent;
      any = { bulk: any.bulk + rec.adjacent.bulk, fetch: any.fetch + rec.adjacent.fetch };
    }
    // (each kind seen)
    expect(any.bulk).toBeGreaterThan(100);
    expect(any.fetch).toBeGreaterThan(500);
    expect(promoted).toBeGreaterThan(50);
  });
});
