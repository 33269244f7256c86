// A policy decides a step's moves only after the previous step's token exists: the lowered plan keeps
// every copy of step s behind the end of step s-1's compute (a memory-stream wait on a compute fence
// recorded at the step boundary), and the host waits for that compute before file requests of step s.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Fences, type FenceOp } from '../../hil/executor/fences.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import type { LowOp } from '../../hil/executor/lowered-plan.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { simulate } from '../../sim/run.js';
import { makeHilFixture } from './hil-fixtures.js';

describe('fences: a barrier orders one stream after everything issued on the other', () => {
  it('records the other stream\'s pending fence and waits on it; later accesses need a new fence', () => {
    const ops: FenceOp[] = [];
    const f = new Fences((op) => ops.push(op));
    const acc: [number, number] = [0, 0];
    f.after(0, acc); // compute touched a region: covered by compute fence 1
    f.barrier(1);
    expect(ops).toEqual([
      { o: 'record', s: 0, fence: 1 },
      { o: 'wait', s: 1, on: 0, fence: 1 },
    ]);
    // the barrier covered that access: the memory stream does not wait again
    f.before(1, acc);
    expect(ops.length).toBe(2);
    // a compute access after the barrier needs fence 2
    f.after(0, acc);
    f.before(1, acc);
    expect(ops.slice(2)).toEqual([
      { o: 'record', s: 0, fence: 2 },
      { o: 'wait', s: 1, on: 0, fence: 2 },
    ]);
  });
});

describe('lowered steps start behind the previous step\'s compute', () => {
  const fx = makeHilFixture(512, 6);
  afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

  const lowered = (policy: string, policy_options: Record<string, unknown> = {}) => {
    let rec: PlanRecorder | undefined;
    const r = simulate({ trace: fx.trace, policy, policy_options, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 }, {
      executor: (resolved, cache) => (rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
    });
    return lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 256 << 10, groupSize: 64 });
  };
  const firstMemoryOp = (ops: LowOp[]) => ops.findIndex((op) => (op.o === 'copy' && op.s === 1) || op.o === 'quant' || op.o === 'dequant');

  it('every step after the first opens with a compute fence the memory stream waits on, before any copy', () => {
    const p = lowered('lru-offload');
    expect(p.steps.length).toBe(6);
    for (const s of p.steps.slice(1)) {
      const rec = s.ops.findIndex((op) => op.o === 'record' && op.s === 0);
      const wait = s.ops.findIndex((op) => op.o === 'wait' && op.s === 1 && op.on === 0);
      expect(rec).toBe(0);
      expect(wait).toBe(1);
      // no compute work of this step before the barrier
      expect(s.ops.slice(0, 2).some((op) => op.o === 'attn' || op.o === 'gemv')).toBe(false);
      const m = firstMemoryOp(s.ops);
      if (m >= 0) expect(m).toBeGreaterThan(wait);
    }
    // the first step has no barrier: nothing of the run came before it
    expect(p.steps[0].ops[0]).not.toEqual({ o: 'record', s: 0, fence: expect.any(Number) });
  });

  it('steps with file requests first make the host wait for the compute stream', () => {
    const p = lowered('lru-offload', { offload_tier: 'nvme' });
    const withFiles = p.steps.slice(1).filter((s) => s.ops.some((op) => op.o === 'fileRead' || op.o === 'fileWrite'));
    expect(withFiles.length).toBeGreaterThan(0);
    for (const s of withFiles) expect(s.ops[0]).toEqual({ o: 'hostWaitCompute' });
    for (const s of p.steps.slice(1).filter((x) => !withFiles.includes(x))) expect(s.ops.some((op) => op.o === 'hostWaitCompute')).toBe(false);
  });
});
