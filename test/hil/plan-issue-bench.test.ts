// The host's issue time per copy from a whole plan run by the executor: each lowered op counted under
// the issue bench's kind, the time per copy left after a step's other ops, and the calibration taking
// it for gpu.issue_copy_us (the listed copies' cost kept in the source).
import { describe, expect, it } from 'vitest';
import type { IssuePoint } from '../../hil/bench/issue-bench.js';
import { benchPlanIssue, convertCostFromPlan, copyCostFromPlan, launchPaceFromPlan, planOpKind, settledSteps, withoutCompute, type PlanIssueResult, type PlanIssueStep } from '../../hil/bench/plan-issue-bench.js';
import { applyIssueCosts } from '../../hil/calibrate/calibrate.js';
import { CONVERT_PLAN, convertPlanSteps, issueCostsOf, LAUNCH_PLAN, pacedIssueCosts } from '../../hil/calibrate/measure.js';
import { recordAndLower } from '../../hil/executor/hil-run.js';
import type { LoweredPlan, LowOp } from '../../hil/executor/lowered-plan.js';
import { generateTrace } from '../../traces/generator.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const cuda = backendAvailability('cuda');

const step = (i: number, issue_us: number, ops: Partial<PlanIssueStep['ops']>): PlanIssueStep => ({ step: i, issue_us, ops: { copy: 0, record: 0, kernel: 0, attention: 0, other: 0, ...ops } });
const pt = (kind: IssuePoint['kind'], bytes: number, trials: number[], gated = false): IssuePoint => ({ kind, bytes, gated, ops: 256, us: trials[0], trials_us: trials });

describe('the time per copy from a plan', () => {
  it('counts every lowered op under the kind the host pays for it', () => {
    const ops: [LowOp, string][] = [
      [{ o: 'copy', s: 1, src: 'dram', srcOff: 0, dst: 'arena', dstOff: 0, bytes: 8 }, 'copy'],
      [{ o: 'mark', s: 0, id: 0 }, 'record'],
      [{ o: 'record', s: 1, fence: 0 } as LowOp, 'record'],
      [{ o: 'wait', s: 1, on: 0, fence: 0 } as LowOp, 'record'],
      [{ o: 'gemv', layer: 0, lmHead: false }, 'kernel'],
      [{ o: 'quant', src: 'arena', srcOff: 0, dst: 'arena', dstOff: 0, bits: 4 }, 'convert'],
      [{ o: 'dequant', src: 'arena', srcOff: 0, dst: 'arena', dstOff: 0, bits: 2 }, 'convert'],
      [{ o: 'rotate', s: 0, what: 'q' }, 'kernel'],
      [{ o: 'attn', layer: 0, tableOff: 0, tokens: 16, uniform: 16 }, 'attention'],
      [{ o: 'fileRead', offset: 0, bytes: 8 }, 'other'],
      [{ o: 'fileWrite', offset: 0, bytes: 8 }, 'other'],
      [{ o: 'fileJoin' }, 'other'],
      [{ o: 'hostWaitCompute' }, 'other'],
      [{ o: 'hostConvert', src: 'dram', srcOff: 0, fromBits: 4, dst: 'dram', dstOff: 0, toBits: 2 }, 'other'],
    ];
    for (const [op, kind] of ops) expect([op.o, planOpKind(op)]).toEqual([op.o, kind]);
    // without compute: every step keeps its ops in order but attention, GEMVs and rotations
    const all = ops.map(([op]) => op);
    const plan = { layers: 1, steps: [{ ops: all }, { ops: [all[4], all[0], all[8], all[5]] }] } as unknown as LoweredPlan;
    const bare = withoutCompute(plan);
    expect(bare.steps.map((s) => s.ops.map((op) => op.o))).toEqual([
      ['copy', 'mark', 'record', 'wait', 'quant', 'dequant', 'fileRead', 'fileWrite', 'fileJoin', 'hostWaitCompute', 'hostConvert'],
      ['copy', 'quant'],
    ]);
    // the plan given is left as it was
    expect(plan.steps[0].ops).toHaveLength(ops.length);
    expect(bare.layers).toBe(1);
  });

  it('takes per step the issue time less the other ops over the copies, the median of the steps after the first', () => {
    const cost = { record: 0.5, kernel: 2, attention: 10 };
    const steps = [
      // the first step: left out
      step(0, 99999, { copy: 1000, record: 10 }),
      // (3400 - 100 * 0.5 - 10 * 2 - 5 * 10) / 1000 = 3.28
      step(1, 3400, { copy: 1000, record: 100, kernel: 10, attention: 5 }),
      // (6000 - 0) / 2000 = 3
      step(2, 6000, { copy: 2000 }),
      // a step whose host waited on a file request: left out
      step(3, 50000, { copy: 1000, other: 2 }),
      // no copies: left out
      step(4, 300, { record: 20 }),
      // (3600 - 20 * 0.5) / 1000 = 3.59
      step(5, 3600, { copy: 1000, record: 20 }),
      // (3100 - 2 * 10) / 1000 = 3.08
      step(6, 3100, { copy: 1000, attention: 2 }),
    ];
    const c = copyCostFromPlan(steps, cost);
    expect(c.per_step.map((x) => +x.toFixed(9))).toEqual([3.28, 3, 3.59, 3.08]);
    // median of 3, 3.08, 3.28, 3.59
    expect(c.us).toBeCloseTo(3.18, 12);
    // copies per step used: (1000 + 2000 + 1000 + 1000) / 4
    expect(c.copies).toBe(1250);
    expect(copyCostFromPlan([steps[0], steps[3], steps[4]], cost).us).toBeNaN();
  });

  it('prices conversion launches at their own cost, at the kernel cost where none is given or in steps that counted them as kernels', () => {
    const steps = [step(0, 1, { copy: 1 }), step(1, 3500, { copy: 1000, kernel: 10, convert: 20 }), step(2, 3100, { copy: 1000, kernel: 30 })];
    // (3500 - 10 * 2 - 20 * 12) / 1000 = 3.24; (3100 - 30 * 2) / 1000 = 3.04
    expect(copyCostFromPlan(steps, { record: 0.5, kernel: 2, convert: 12, attention: 10 }).per_step.map((x) => +x.toFixed(9))).toEqual([3.24, 3.04]);
    // (3500 - 30 * 2) / 1000 = 3.44, with conversions at the kernel cost (none given, or NaN: no trials)
    for (const convert of [undefined, Number.NaN]) expect(copyCostFromPlan(steps, { record: 0.5, kernel: 2, convert, attention: 10 }).per_step.map((x) => +x.toFixed(9))).toEqual([3.44, 3.04]);
  });

  it("sets gpu.issue_copy_us from the plan and keeps the listed copies' cost in the source", () => {
    const points = [pt('copy', 9216, [2.4, 2.5, 2.6]), pt('record', 0, [0.5, 0.5, 0.5]), pt('kernel', 0, [2, 2, 2]), pt('attention', 0, [10, 10, 10]), pt('record', 0, [9, 9, 9], true)];
    // the gated records are not the as-issued cost
    expect(issueCostsOf(points)).toEqual({ record: 0.5, kernel: 2, convert: Number.NaN, attention: 10 });
    const plan: PlanIssueResult = { policy: 'kivi', budget: '10%', context_tokens: 40960, steps: [step(0, 9e9, { copy: 1 }), step(1, 3400, { copy: 1000, record: 100, kernel: 10, attention: 5 }), step(2, 3100, { copy: 1000, attention: 2 })] };
    const p = loadHardware('h100-pcie5');
    applyIssueCosts(p, points, 'test', plan);
    // median of 3.28 and 3.08
    expect(p.gpu.issue_copy_us).toBe(3.18);
    expect(p.gpu.issue_record_us).toBe(0.5);
    expect(p.gpu.issue_attention_us).toBe(10);
    // (the steps used: 1 and 2, 1000 copies each)
    expect(p.sources['gpu.issue_copy_us']).toContain('kivi at 10% on a generated 40960-token trace, 3 steps, 1000 copies per step used');
    expect(p.sources['gpu.issue_copy_us']).toContain('the median of 2 steps (the first left out); 256 copies issued in a row read 2.5 us');
    // a plan without a usable step leaves the listed copies' cost
    const q = loadHardware('h100-pcie5');
    applyIssueCosts(q, points, 'test', { ...plan, steps: [plan.steps[0]] });
    expect(q.gpu.issue_copy_us).toBe(2.5);
    expect(q.sources['gpu.issue_copy_us']).toContain('issued in a row');
    expect(q.sources['gpu.issue_copy_us']).toContain("a whole plan (kivi at 10%, 1 steps) gave no copy cost (0 usable steps, median NaN us), so the listed copies' cost stands");
  });
});

describe("the executor's launch pace from a plan that moves nothing", () => {
  const cost = { record: 2, kernel: 8, attention: 16 };
  it('takes per step its issue time over its records, kernels and attention at the costs in a row, the median of the steps after the first', () => {
    const steps = [
      // the first step: left out
      step(0, 9999, { record: 34, kernel: 9, attention: 8 }),
      // listed 34 * 2 + 9 * 8 + 8 * 16 = 268: 335 / 268 = 1.25
      step(1, 335, { record: 34, kernel: 9, attention: 8 }),
      // 402 / 268 = 1.5
      step(2, 402, { record: 34, kernel: 9, attention: 8 }),
      // a step with copies, one with a conversion, one the host waited in: left out
      step(3, 900, { copy: 10, record: 34, kernel: 9, attention: 8 }),
      step(4, 900, { convert: 1, record: 34, kernel: 9, attention: 8 }),
      step(5, 900, { other: 1, record: 34, kernel: 9, attention: 8 }),
      // listed 10 * 2 + 2 * 8 = 36: 36 / 36 = 1
      step(6, 36, { record: 10, kernel: 2 }),
      // no ops at all: nothing to price, left out
      step(7, 50, {}),
    ];
    const lp = launchPaceFromPlan(steps, cost);
    expect(lp.per_step.map((x) => +x.toFixed(9))).toEqual([1.25, 1.5, 1]);
    expect(lp.factor).toBe(1.25);
    // medians of the steps used: listed 268, 268, 36; issued 335, 402, 36
    expect([lp.listed_us, lp.issued_us]).toEqual([268, 335]);
    const none = launchPaceFromPlan([steps[0], steps[3], steps[7]], cost);
    expect([none.factor, none.per_step, none.listed_us, none.issued_us]).toEqual([Number.NaN, [], Number.NaN, Number.NaN]);
  });

  it('puts a wait for the compute stream in front of every step, the plan given left as it was', () => {
    const plan = { layers: 1, steps: [{ ops: [{ o: 'mark', s: 0, id: 0 }, { o: 'gemv', layer: 0, lmHead: false }] }, { ops: [] }] } as unknown as LoweredPlan;
    const settled = settledSteps(plan);
    expect(settled.steps.map((s) => s.ops.map((op) => op.o))).toEqual([['hostWaitCompute', 'mark', 'gemv'], ['hostWaitCompute']]);
    expect(plan.steps[0].ops).toHaveLength(2);
    expect(settled.layers).toBe(1);
  });

  it('prices records, kernels, conversions and attention at the pace, and copies and conversions from their plans after them', () => {
    const points = [pt('copy', 9216, [2.4, 2.5, 2.6]), pt('record', 0, [0.5, 0.5, 0.5]), pt('kernel', 0, [2, 2, 2]), pt('convert', 0, [7, 7, 7]), pt('attention', 0, [10, 10, 10])];
    // a moving-nothing step lists 100 * 0.5 + 10 * 2 + 5 * 10 = 120 us; issued in 150 and 144: pace 1.25 and 1.2, their median 1.225
    const launch: PlanIssueResult = { ...LAUNCH_PLAN, context_tokens: 40960, settled: true, steps: [step(0, 9e9, { record: 100, kernel: 10, attention: 5 }), step(1, 150, { record: 100, kernel: 10, attention: 5 }), step(2, 144, { record: 100, kernel: 10, attention: 5 })] };
    const { launch: lp, ...paced } = pacedIssueCosts(points, launch);
    expect(paced).toEqual({ record: 0.5 * 1.225, kernel: 2 * 1.225, convert: 7 * 1.225, attention: 10 * 1.225, pace: 1.225 });
    // (the pace's readings, for the sources: the steps' median issue time and listed time)
    expect([lp!.factor, lp!.per_step, lp!.issued_us, lp!.listed_us]).toEqual([1.225, [1.25, 1.2], 147, 120]);
    // no plan, or one without a usable step: as in a row
    expect(pacedIssueCosts(points, undefined)).toEqual({ ...issueCostsOf(points), pace: Number.NaN });
    expect(pacedIssueCosts(points, { ...launch, steps: [launch.steps[0]] }).pace).toBeNaN();
    // copies: (3400 - 100 * 0.6125 - 10 * 2.45 - 5 * 12.25) / 1000 = 3.253 and (3100 - 2 * 12.25) / 1000 = 3.0755: 3.16425
    const plan: PlanIssueResult = { policy: 'kivi', budget: '10%', context_tokens: 40960, steps: [step(0, 9e9, { copy: 1 }), step(1, 3400, { copy: 1000, record: 100, kernel: 10, attention: 5 }), step(2, 3100, { copy: 1000, attention: 2 })] };
    // conversions, the other ops at the paced costs: the plain step's residual 600 - 100 * 3.16 - 10 * 2.45 - 2 * 12.25 = 235;
    // (13531 - 316 - 200 * 2.45 - 40 * 12.25 - 235) / 1000 = 12 and (22600 - 365 - 235) / 2000 = 11: 11.5 (at the costs in a
    // row, 2 and 10, the residual would be 244 and the first step 12.171: 11.59)
    const conv: PlanIssueResult = { ...CONVERT_PLAN, context_tokens: 40960, steps: [step(0, 9e9, { convert: 0 }), step(1, 600, { copy: 100, kernel: 10, attention: 2, convert: 0 }), step(2, 13531, { copy: 100, kernel: 200, attention: 40, convert: 1000 }), step(3, 22600, { copy: 100, kernel: 10, attention: 2, convert: 2000 })] };
    const p = loadHardware('h100-pcie5');
    applyIssueCosts(p, points, 'test', plan, conv, launch);
    expect([p.gpu.issue_record_us, p.gpu.issue_kernel_us, p.gpu.issue_attention_us]).toEqual([0.61, 2.45, 12.25]);
    expect(p.gpu.issue_copy_us).toBe(3.16);
    expect(p.gpu.issue_convert_us).toBe(11.5);
    expect(p.sources['gpu.issue_attention_us']).toContain('issued in a row as the executor issues them');
    // the conversion launches' source gives their cost in a row, not at the pace
    expect(p.sources['gpu.issue_convert_us']).toContain('; 256 launches issued in a row read 7 us');
    // a converting plan that gives no cost: the launches' cost in a row at the pace stands, r2(7 * 1.225)
    const f = loadHardware('h100-pcie5');
    applyIssueCosts(f, points, 'test', plan, { ...conv, steps: conv.steps.slice(0, 2) }, launch);
    expect(f.gpu.issue_convert_us).toBe(8.58);
    expect(f.sources['gpu.issue_convert_us']).toContain("so the launches' cost in a row at the launch pace stands");
    // a kind this calibration did not time in a row is not paced (the base profile's value, if any, is left as it was)
    const noKernels = points.filter((x) => x.kind !== 'kernel');
    const k = loadHardware('h100-pcie5');
    k.gpu.issue_kernel_us = 5;
    k.sources['gpu.issue_kernel_us'] = 'base';
    applyIssueCosts(k, noKernels, 'test', undefined, undefined, launch);
    expect([k.gpu.issue_kernel_us, k.sources['gpu.issue_kernel_us']]).toEqual([5, 'base']);
    // (without a kernel cost in a row the launch plan's steps cannot be priced: no pace, the records as in a row)
    expect(k.gpu.issue_record_us).toBe(0.5);
    expect(p.sources['gpu.issue_attention_us']).toContain("; times 1.225, the pace of the HIL executor's own loop over a plan that moves nothing (full at 100% on a generated 40960-token trace, 3 steps, each issued on an idle GPU): per step (147 us, median) its issue time over its records, kernels and attention launches at the costs in a row (120 us), the median of 2 steps (the first left out)");
    // a launch plan with no usable step: the costs in a row stand, and their sources say why
    const q = loadHardware('h100-pcie5');
    applyIssueCosts(q, points, 'test', plan, undefined, { ...launch, steps: [launch.steps[0]] });
    expect([q.gpu.issue_record_us, q.gpu.issue_kernel_us, q.gpu.issue_attention_us, q.gpu.issue_copy_us]).toEqual([0.5, 2, 10, 3.18]);
    expect(q.sources['gpu.issue_kernel_us']).toContain('gave no pace (0 usable steps), so the cost in a row stands');
  });
});

describe('the time per conversion launch from a plan', () => {
  const cost = { copy: 3, record: 0.5, kernel: 2, attention: 10 };
  it("takes per converting step its residual beyond the plain steps' over its launches, the median of those steps", () => {
    const steps = [
      // the first step: left out, converting or not
      step(0, 99999, { copy: 10, convert: 500 }),
      // plain steps' residuals: 1000 - 100 * 3 - 200 * 0.5 - 64 * 2 - 32 * 10 = 152; 1010 - ... = 162; 990 - ... = 142: baseline 152
      step(1, 1000, { copy: 100, record: 200, kernel: 64, attention: 32, convert: 0 }),
      step(2, 1010, { copy: 100, record: 200, kernel: 64, attention: 32, convert: 0 }),
      step(3, 990, { copy: 100, record: 200, kernel: 64, attention: 32, convert: 0 }),
      // (9000 - 100 * 3 - 300 * 0.5 - 64 * 2 - 32 * 10 - 152) / 1000 = 7.95
      step(4, 9000, { copy: 100, record: 300, kernel: 64, attention: 32, convert: 1000 }),
      // a converting step whose host waited on a file request: left out
      step(5, 90000, { copy: 100, record: 300, kernel: 64, attention: 32, convert: 1000, other: 1 }),
      // (11000 - 0 - 152) / 1200 = 9.04
      step(6, 11000, { convert: 1200 }),
      // (5000 - 50 * 3 - 152) / 500 = 9.396
      step(7, 5000, { copy: 50, convert: 500 }),
      // recorded before conversions had their own count: neither plain nor converting
      step(8, 500, {}),
    ];
    const c = convertCostFromPlan(steps, cost);
    expect(c.baseline_us).toBe(152);
    expect(c.per_step.map((x) => +x.toFixed(9))).toEqual([7.95, 9.04, 9.396]);
    expect(c.us).toBeCloseTo(9.04, 12);
    // launches per converting step used: (1000 + 1200 + 500) / 3
    expect(c.conversions).toBe(900);
    // no plain step: no baseline, no cost; no converting step: no cost
    expect(convertCostFromPlan([steps[0], steps[4], steps[6]], cost).us).toBeNaN();
    const none = convertCostFromPlan(steps.slice(0, 4), cost);
    expect([none.us, none.per_step, none.baseline_us]).toEqual([Number.NaN, [], 152]);
  });

  it('sets gpu.issue_convert_us from a converting plan, copies at their plan cost, and keeps the listed launches in the source', () => {
    const points = [pt('copy', 9216, [2.4, 2.5, 2.6]), pt('record', 0, [0.5, 0.5, 0.5]), pt('kernel', 0, [2, 2, 2]), pt('convert', 0, [7, 7, 7]), pt('attention', 0, [10, 10, 10])];
    // copies: (3400 - 100 * 0.5 - 10 * 2 - 5 * 10) / 1000 = 3.28 and (3100 - 2 * 10) / 1000 = 3.08: 3.18
    const plan: PlanIssueResult = { policy: 'kivi', budget: '10%', context_tokens: 40960, steps: [step(0, 9e9, { copy: 1 }), step(1, 3400, { copy: 1000, record: 100, kernel: 10, attention: 5 }), step(2, 3100, { copy: 1000, attention: 2 })] };
    // the plain step's residual: 600 - 100 * 3.18 - 10 * 2 - 2 * 10 = 242; the converting steps' 12242 and 22242
    const conv: PlanIssueResult = {
      policy: CONVERT_PLAN.policy,
      budget: CONVERT_PLAN.budget,
      context_tokens: 40960,
      steps: [step(0, 9e9, { convert: 0 }), step(1, 600, { copy: 100, kernel: 10, attention: 2, convert: 0 }), step(2, 12600, { copy: 100, kernel: 10, attention: 2, convert: 1000 }), step(3, 22600, { copy: 100, kernel: 10, attention: 2, convert: 2000 })],
    };
    const p = loadHardware('h100-pcie5');
    applyIssueCosts(p, points, 'test', plan, conv);
    expect(p.gpu.issue_copy_us).toBe(3.18);
    // (12600 - 600) / 1000 = 12 and (22600 - 600) / 2000 = 11: 11.5
    expect(p.gpu.issue_convert_us).toBe(11.5);
    expect(p.sources['gpu.issue_convert_us']).toContain('smartkv at 40% on a generated 40960-token trace, 4 steps');
    expect(p.sources['gpu.issue_convert_us']).toContain('1500 launches on average');
    expect(p.sources['gpu.issue_convert_us']).toContain('the median of 2 steps (12, 11 us); 256 launches issued in a row read 7 us');
    expect(p.sources['gpu.issue_convert_us']).not.toContain('compute kernels taken out');
    // a plan run without its compute kernels: the same arithmetic, and the source says how it ran
    const bare = loadHardware('h100-pcie5');
    applyIssueCosts(bare, points, 'test', plan, { ...conv, compute: false });
    expect(bare.gpu.issue_convert_us).toBe(11.5);
    expect(bare.sources['gpu.issue_convert_us']).toContain('smartkv at 40% on a generated 40960-token trace, 4 steps, its compute kernels taken out so that no launch waited for room in the launch queue)');
    // no converting step: the launches' cost in a row stands, and its source says why
    const q = loadHardware('h100-pcie5');
    applyIssueCosts(q, points, 'test', plan, { ...conv, steps: conv.steps.slice(0, 2) });
    expect(q.gpu.issue_convert_us).toBe(7);
    expect(q.sources['gpu.issue_convert_us']).toContain("issued in a row");
    expect(q.sources['gpu.issue_convert_us']).toContain("gave no conversion cost (0 converting steps, median NaN us), so the launches' cost in a row stands");
    // without a converting plan: as listed
    const r = loadHardware('h100-pcie5');
    applyIssueCosts(r, points, 'test', plan);
    expect(r.gpu.issue_convert_us).toBe(7);
  });

  it("the calibration's converting plan converts in HBM in at least two steps after the first, and in no other", () => {
    // SmartKV re-assigns precisions when a block completes: whatever the context's place in its block
    for (const prompt of [256, 263, 271]) {
      const fx = makeHilFixture(prompt, convertPlanSteps(16), 16);
      try {
        const { lowered } = recordAndLower({ trace: fx.trace, policy: CONVERT_PLAN.policy, model: fx.model, hardware: 'h100-pcie5', hbm_budget: CONVERT_PLAN.budget, group_size: 64 }, { backend: 'host' });
        const converting = lowered.steps.flatMap((s, i) => (i > 0 && s.ops.some((op) => op.o === 'quant' || op.o === 'dequant') ? [i] : []));
        // nothing the host waits on (a host conversion, a file request): every converting step counts
        expect(lowered.steps.flatMap((s) => s.ops.filter((op) => planOpKind(op) === 'other').map((op) => op.o)), `prompt ${prompt}`).toEqual([]);
        expect(converting.length, `prompt ${prompt}`).toBeGreaterThanOrEqual(2);
        // one step a block: 16 apart
        for (let i = 1; i < converting.length; i++) expect(converting[i] - converting[i - 1], `prompt ${prompt}`).toBe(16);
      } finally {
        rmSync(fx.dir, { recursive: true, force: true });
      }
    }
  });
});

describe.skipIf(!host.available)(`plan issue bench, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it("runs the lowered plan through the executor and counts each step's ops as lowered", async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('host');
    const dir = mkdtempSync(join(tmpdir(), 'kvtier-plan-issue-test-'));
    try {
      const t0 = Date.now();
      const r = await benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 512, steps: 3, blockTokens: 16, groupSize: 128, seed: 's', packThreads: 0 });
      const t1 = Date.now();
      expect([r.policy, r.budget, r.context_tokens, r.steps.length]).toEqual(['kivi', '10%', 512, 3]);
      // when its run started: an ISO time within the call
      expect(new Date(r.at!).toISOString()).toBe(r.at);
      expect(Date.parse(r.at!)).toBeGreaterThanOrEqual(t0);
      expect(Date.parse(r.at!)).toBeLessThanOrEqual(t1);
      // (packThreads 0: the initial blocks packed on this thread, as the executor does where it has no spare CPUs)
      // the same plan, lowered here: its ops by kind, step by step
      const trace = join(dir, 't.kvt');
      generateTrace(trace, { preset: 'broad', model: 'llama-3-8b', layers: 32, prompt_tokens: 512, steps: 3, block_size: 16, seed: 's' });
      const { lowered } = recordAndLower({ trace, policy: 'kivi', model: 'llama-3-8b', hardware: 'h100-pcie5', hbm_budget: '10%', group_size: 128 }, { backend: 'host' });
      const want = lowered.steps.map((s) => {
        const n = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
        for (const op of s.ops) n[op.o === 'copy' ? 'copy' : op.o === 'attn' ? 'attention' : op.o === 'gemv' || op.o === 'rotate' ? 'kernel' : op.o === 'quant' || op.o === 'dequant' ? 'convert' : op.o === 'mark' || op.o === 'record' || op.o === 'wait' ? 'record' : 'other']++;
        return n;
      });
      expect(r.steps.map((s) => s.ops)).toEqual(want);
      // the offloaded blocks come back every step: hundreds of copies, every layer's attention and GEMV
      for (const s of r.steps) {
        expect(s.ops.copy).toBeGreaterThan(500);
        expect(s.ops.attention).toBe(32);
        expect(s.issue_us).toBeGreaterThan(0);
      }
      expect(r.compute).toBeUndefined();
      // without compute: the same plan's copies, records and conversions, no attention or GEMV
      const bare = await benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 512, steps: 3, blockTokens: 16, groupSize: 128, seed: 's', packThreads: 0, compute: false });
      expect(bare.compute).toBe(false);
      expect(bare.steps.map((s) => s.ops)).toEqual(want.map((n) => ({ ...n, kernel: 0, attention: 0 })));
      for (const s of bare.steps) expect(s.issue_us).toBeGreaterThan(0);
      // settled: the host's wait for the compute stream in front of each step is not in the step's issue time (a
      // backend whose waits take 80 ms: every step issued in far less)
      const slow = new Proxy(b, {
        get(t, k) {
          if (k === 'synchronize') return async (s: Parameters<typeof b.synchronize>[0]) => {
            await new Promise((r) => setTimeout(r, 80));
            return t.synchronize(s);
          };
          const x = (t as unknown as Record<string | symbol, unknown>)[k];
          return typeof x === 'function' ? x.bind(t) : x;
        },
      });
      const waited = await benchPlanIssue(slow, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 512, steps: 3, blockTokens: 16, groupSize: 128, seed: 's', packThreads: 0, ...LAUNCH_PLAN, settled: true });
      for (const s of waited.steps) expect(s.issue_us).toBeLessThan(40_000);
      // settled, the plan that moves nothing: its ops as lowered (the wait in front of each step neither counted nor timed)
      const idle = await benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 512, steps: 3, blockTokens: 16, groupSize: 128, seed: 's', packThreads: 0, ...LAUNCH_PLAN, settled: true });
      expect([idle.policy, idle.budget, idle.settled]).toEqual(['full', '100%', true]);
      const full = recordAndLower({ trace, ...{ policy: 'full', hbm_budget: '100%' }, model: 'llama-3-8b', hardware: 'h100-pcie5', group_size: 128 }, { backend: 'host' }).lowered;
      const count = (ops: readonly LowOp[]) => {
        const n = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
        for (const op of ops) n[planOpKind(op)]++;
        return n;
      };
      expect(idle.steps.map((s) => s.ops)).toEqual(full.steps.map((s) => count(s.ops)));
      // after the first step: every layer's attention and GEMV (and the LM head's), its marks and fences, nothing moved
      for (const s of idle.steps.slice(1)) expect(s.ops).toEqual({ copy: 0, record: 130, kernel: 33, convert: 0, attention: 32, other: 0 });
      for (const s of idle.steps) expect(s.issue_us).toBeGreaterThan(0);
      expect(launchPaceFromPlan(idle.steps, { record: 1, kernel: 1, attention: 1 }).per_step).toHaveLength(2);
      await expect(benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 512, steps: 1, blockTokens: 16, groupSize: 128 })).rejects.toThrow('plan issue bench: steps must be an integer >= 2 (got 1)');
      await expect(benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 8, steps: 2, blockTokens: 16, groupSize: 128 })).rejects.toThrow('plan issue bench: contextTokens must be an integer >= the block size 16 (got 8)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      b.close();
    }
  });
});

describe.skipIf(!cuda.available)(`plan issue bench, cuda backend${cuda.available ? '' : ` (skipped: ${cuda.reason})`}`, () => {
  it('times a plan of thousands of copies per step at a few us per copy', async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('cuda');
    try {
      const r = await benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 8192, steps: 6, blockTokens: 16, groupSize: 128, packThreads: 0 });
      const c = copyCostFromPlan(r.steps, { record: 0.6, kernel: 2.3, attention: 5 });
      for (const s of r.steps) expect(s.ops.copy).toBeGreaterThan(3000);
      expect(c.per_step).toHaveLength(5);
      // an H100 host issues a copy in 2-4 us (lab/notes/HIL-NOTES.md); far outside that, the step was not issued as timed
      expect(c.us).toBeGreaterThan(1);
      expect(c.us).toBeLessThan(10);
    } finally {
      b.close();
    }
  });

  it("times a plan that moves nothing, each step on an idle GPU, at a pace within a factor of two of its ops issued in a row", async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const { benchIssue } = await import('../../hil/bench/issue-bench.js');
    const { loadModel } = await import('../../sim/models/load-model.js');
    const b = openBackend('cuda');
    try {
      // Llama-3-8B's step at this context runs longer on the GPU than on the host: issued back to back, the
      // launch queue would fill and the host's time per step follow the GPU's
      const r = await benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 8192, steps: 8, blockTokens: 16, groupSize: 128, packThreads: 0, ...LAUNCH_PLAN, settled: true });
      const listed = issueCostsOf(await benchIssue(b, loadModel('llama-3-8b'), { blockTokens: 16, groupSize: 128, copyBytes: [4096], trials: 3 }));
      const lp = launchPaceFromPlan(r.steps, listed);
      expect(lp.per_step).toHaveLength(7);
      expect(lp.factor).toBeGreaterThan(0.5);
      expect(lp.factor).toBeLessThan(2);
    } finally {
      b.close();
    }
  });

  it("times the converting plan's conversion launches, its compute taken out, at a few us to tens of us each", async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('cuda');
    try {
      const r = await benchPlanIssue(b, { model: 'llama-3-8b', hardware: 'h100-pcie5', contextTokens: 8192, steps: convertPlanSteps(16), ...CONVERT_PLAN, blockTokens: 16, groupSize: 128, packThreads: 0, compute: false });
      expect(r.steps.every((s) => s.ops.attention === 0 && s.ops.kernel === 0)).toBe(true);
      const c = convertCostFromPlan(r.steps, { copy: 3, record: 0.6, kernel: 2.3, attention: 5 });
      // a block completes every 16 steps; each such step converts hundreds of blocks
      expect(c.per_step.length).toBeGreaterThanOrEqual(2);
      expect(c.conversions).toBeGreaterThan(100);
      // launches issued in a row cost the host 7-8 us on the H200 machines; far outside a few to tens of us, the step was not issued as timed
      expect(c.us).toBeGreaterThan(2);
      expect(c.us).toBeLessThan(60);
    } finally {
      b.close();
    }
  });
});
