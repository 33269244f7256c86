// Weight streaming as lowered: every streamed layer's projections wait for the copy of its weights
// into its slot, and every copy into a slot waits for the projections that last read that slot; the
// slots alternate, and copies run at most buffers - 1 layers ahead.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import type { LowOp } from '../../hil/executor/lowered-plan.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { simulate } from '../../sim/run.js';
import { makeHilFixture } from './hil-fixtures.js';

const fx = makeHilFixture(256, 5);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

function lowered(policy: string, buffers: number, residentLayers = 0, eagerFences = true) {
  let rec: PlanRecorder | undefined;
  const r = simulate({ trace: fx.trace, policy, policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 }, {
    executor: (resolved, cache) => (rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
  });
  return lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 256 << 10, groupSize: 64, eagerFences, weights: { tier: 'dram', buffers, residentLayers } });
}

/**
 * Per streamed projection: does it wait for a weight copy issued after its own (the memory stream's
 * ops covered by its waits reach past the next weight copy)?
 */
function overWaits(ops: LowOp[]): boolean[] {
  const recAt: Map<number, number>[] = [new Map(), new Map()];
  let covered = -1; // memory-stream ops up to this index are ordered before the compute stream's next op
  const copies: number[] = []; // op index of every weight copy, in issue order
  let gemvs = 0;
  const out: boolean[] = [];
  ops.forEach((op, i) => {
    if (op.o === 'record') recAt[op.s].set(op.fence, i);
    else if (op.o === 'wait' && op.s === 0) covered = Math.max(covered, recAt[1].get(op.fence)!);
    else if (op.o === 'copy' && op.src === 'weights') copies.push(i);
    else if (op.o === 'gemv' && op.slot !== undefined) {
      const later = copies[gemvs + 1]; // the copy after this projection's own (its own is the gemvs-th)
      out.push(later !== undefined && later < i && covered > later);
      gemvs++;
    }
  });
  return out;
}

/**
 * Walks the ops of the whole run in issue order with the fences' meaning: after `wait s on o fence f`,
 * stream s's later ops follow every op of stream o issued before `record o fence f`. Returns, per
 * streamed projection and per weight copy, whether the op it must follow is ordered before it.
 */
function orderings(ops: LowOp[], buffers: number): { slots: number[]; gemvAfterCopy: boolean[]; copyAfterGemv: boolean[]; ahead: number[] } {
  const recAt: [Map<number, number>, Map<number, number>] = [new Map(), new Map()];
  const covered = [-1, -1]; // per stream: ops of the other stream up to this index are ordered before its next op
  const lastCopy = new Array<number>(buffers).fill(-1);
  const lastGemv = new Array<number>(buffers).fill(-1);
  const out = { slots: [] as number[], gemvAfterCopy: [] as boolean[], copyAfterGemv: [] as boolean[], ahead: [] as number[] };
  let copies = 0;
  ops.forEach((op, i) => {
    if (op.o === 'record') recAt[op.s].set(op.fence, i);
    else if (op.o === 'wait') covered[op.s] = Math.max(covered[op.s], recAt[op.on].get(op.fence)!);
    else if (op.o === 'copy' && op.src === 'weights') {
      const k = op.dstOff === 0 ? 0 : 1;
      out.copyAfterGemv.push(lastGemv[k] < 0 || lastGemv[k] < covered[1]);
      lastCopy[k] = i;
      copies++;
    } else if (op.o === 'gemv' && op.slot !== undefined) {
      out.slots.push(op.slot);
      out.gemvAfterCopy.push(lastCopy[op.slot] >= 0 && lastCopy[op.slot] < covered[0]);
      lastGemv[op.slot] = i;
      out.ahead.push(copies - out.slots.length);
    }
  });
  return out;
}

describe('weight streaming, lowered', () => {
  it('double buffering: slots alternate, one copy ahead, each copy and projection ordered after what it needs', () => {
    for (const policy of ['full', 'lru-offload']) {
      const p = lowered(policy, 2);
      const o = orderings(p.steps.flatMap((s) => s.ops), 2);
      expect(o.slots).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0, 1]); // 5 steps x 2 layers
      expect(o.gemvAfterCopy.every(Boolean)).toBe(true);
      expect(o.copyAfterGemv.length).toBe(11);
      expect(o.copyAfterGemv.every(Boolean)).toBe(true);
      expect(o.ahead).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
      expect(p.weights).toMatchObject({ buffers: 2, resident: 0, layerBytes: 256 * 1024 * 2, hostLayers: 2 });
    }
  });

  it("a layer's projections wait for their own weight copy, not for the next layer's issued behind it", () => {
    for (const policy of ['full', 'lru-offload']) {
      const eager = overWaits(lowered(policy, 2).steps.flatMap((s) => s.ops));
      expect(eager.length).toBe(10);
      expect(eager.some(Boolean)).toBe(false);
    }
    // the fence recorded lazily, where the compute stream first needs it, lands behind the copy ahead
    const lazy = overWaits(lowered('full', 2, 0, false).steps.flatMap((s) => s.ops));
    expect(lazy.filter(Boolean).length).toBeGreaterThan(0);
  });

  it('one slot: no copy ahead; a resident layer 0 is never copied', () => {
    const one = orderings(lowered('full', 1).steps.flatMap((s) => s.ops), 1);
    expect(one.slots).toEqual(new Array(10).fill(0));
    expect(one.ahead).toEqual(new Array(10).fill(0));
    expect(one.gemvAfterCopy.every(Boolean) && one.copyAfterGemv.every(Boolean)).toBe(true);
    const res = lowered('full', 2, 1);
    const ops = res.steps.flatMap((s) => s.ops);
    expect(ops.filter((x) => x.o === 'gemv' && !x.lmHead && x.layer === 0).every((x) => x.o === 'gemv' && x.slot === undefined)).toBe(true);
    expect(ops.filter((x) => x.o === 'copy' && x.src === 'weights').length).toBe(5 + 1);
  });

  it('refuses a streaming tier that is not a host tier', () => {
    let rec: PlanRecorder | undefined;
    const r = simulate({ trace: fx.trace, policy: 'full', policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 }, {
      executor: (resolved, cache) => (rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
    });
    expect(() => lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, 16, { slabBytes: 256 << 10, groupSize: 64, weights: { tier: 'hbm', buffers: 2 } })).toThrow(/weight streaming from tier "hbm": not a host tier/);
  });
});
