/**
 * The host's time per copy as the executor issues a whole plan: a policy's run (by default KIVI at a 10%
 * budget, whose offloaded blocks are fetched back every step as thousands of small copies) on a
 * generated trace at a context of the caller's choice, simulated with its work recorded, lowered and
 * run by the executor itself (executor/run-plan.ts) on the backend. Per step the host's issue time
 * (hil-steps.csv's host_issue_us) and the lowered ops by kind; the time per copy is what is left of the
 * step's issue time after the step's other ops at the bench's per-op costs (issue-bench.ts), over its
 * copies. A short list issued in a row (issue-bench.ts) reads the host faster or slower than the
 * executor's own long loop does, by lease and by how long it has run (lab/notes/HIL-NOTES.md); this
 * bench times that loop. A plan that moves nothing, each step issued on an idle GPU (`settled`), times
 * the same loop's records, kernels and attention launches (launchPaceFromPlan).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTrace, type PresetName } from '../../traces/generator.js';
import type { NativeBackend } from '../addon-types.js';
import { blockBytes } from '../kv-format.js';
import { BlockData } from '../executor/block-data.js';
import { recordAndLower } from '../executor/hil-run.js';
import type { LoweredPlan, LowOp } from '../executor/lowered-plan.js';
import { runPlan } from '../executor/run-plan.js';
import { median } from '../timing/median.js';
import { loadModel } from '../../sim/models/load-model.js';

/** What a lowered op costs the host, by the issue bench's kinds (waits priced as records). */
export type PlanOpKind = 'copy' | 'record' | 'kernel' | 'convert' | 'attention' | 'other';

export function planOpKind(op: LowOp): PlanOpKind {
  switch (op.o) {
    case 'copy':
      return 'copy';
    case 'mark':
    case 'record':
    case 'wait':
      return 'record';
    case 'gemv':
    case 'rotate':
      return 'kernel';
    case 'quant':
    case 'dequant':
      return 'convert';
    case 'attn':
      return 'attention';
    default:
      return 'other';
  }
}

export interface PlanIssueStep {
  step: number;
  /** host time issuing the step's ops (us) */
  issue_us: number;
  /** the step's lowered ops by kind (conversions: absent in steps recorded when they counted as kernels) */
  ops: Record<Exclude<PlanOpKind, 'convert'>, number> & { convert?: number };
}

export interface PlanIssueOptions {
  /** model preset or file, as `kvtier run --model` takes it */
  model: string;
  /** hardware profile the plan is recorded on (preset or file) */
  hardware: string;
  contextTokens: number;
  /** decode steps (default 24) */
  steps?: number;
  /** default 'kivi' */
  policy?: string;
  /** default '10%' */
  budget?: string;
  blockTokens: number;
  groupSize: number;
  /** generator seed (default 'issue-bench') */
  seed?: string;
  /** generator preset (default 'broad') */
  preset?: PresetName;
  /** where the trace file and the file tier (if the plan uses it) go */
  dir?: string;
  /** worker threads packing the plan's initial blocks (default: the executor's choice) */
  packThreads?: number;
  /**
   * false: the plan runs with its compute kernels (attention, GEMVs, rotations) taken out, so that the GPU
   * only copies and converts and the host never waits on a full launch queue (default true: as lowered)
   */
  compute?: boolean;
  /**
   * true: the host waits for the compute stream before each step, so that every step's launches find
   * the GPU idle and the launch queue empty whatever the GPU's pace; the wait is left out of the step's
   * issue time and out of its ops (default false: the steps issued back to back)
   */
  settled?: boolean;
}

export interface PlanIssueResult {
  policy: string;
  budget: string;
  context_tokens: number;
  steps: PlanIssueStep[];
  /** when the plan's run started (ISO time; absent from results taken before it was kept) */
  at?: string;
  /** false where the plan ran without its compute kernels (PlanIssueOptions.compute); absent where it ran as lowered */
  compute?: false;
  /** true where each step was issued on an idle GPU (PlanIssueOptions.settled); absent otherwise */
  settled?: true;
}

/** The lowered ops that run on the compute stream's kernels: attention, GEMVs, rotations. */
const COMPUTE_OPS: ReadonlySet<LowOp['o']> = new Set(['attn', 'gemv', 'rotate']);

/** A lowered plan with every step's compute kernels taken out, everything else (copies, conversions, records, waits) as it was. */
export function withoutCompute(plan: LoweredPlan): LoweredPlan {
  return { ...plan, steps: plan.steps.map((s) => ({ ...s, ops: s.ops.filter((op) => !COMPUTE_OPS.has(op.o)) })) };
}

/** A lowered plan whose every step first has the host wait for the compute stream, its ops as they were after that. */
export function settledSteps(plan: LoweredPlan): LoweredPlan {
  return { ...plan, steps: plan.steps.map((s) => ({ ...s, ops: [{ o: 'hostWaitCompute' } as LowOp, ...s.ops] })) };
}

/** pinned host bytes the executor may take for distinct layer weights here (the GEMVs run over reused buffers; their issue cost does not depend on it) */
const BENCH_WEIGHT_BYTES = 1 << 30;

export async function benchPlanIssue(b: NativeBackend, o: PlanIssueOptions): Promise<PlanIssueResult> {
  const steps = o.steps ?? 24;
  if (!(Number.isInteger(steps) && steps >= 2)) throw new Error(`plan issue bench: steps must be an integer >= 2 (got ${steps})`);
  if (!(Number.isInteger(o.contextTokens) && o.contextTokens >= o.blockTokens)) throw new Error(`plan issue bench: contextTokens must be an integer >= the block size ${o.blockTokens} (got ${o.contextTokens})`);
  const policy = o.policy ?? 'kivi';
  const budget = o.budget ?? '10%';
  const dir = mkdtempSync(join(o.dir ?? tmpdir(), 'kvtier-plan-issue-'));
  try {
    const trace = join(dir, 'plan-issue.kvt');
    const m = loadModel(o.model);
    generateTrace(trace, { preset: o.preset ?? 'broad', model: m.name, layers: m.layers, prompt_tokens: o.contextTokens, steps, block_size: o.blockTokens, seed: o.seed ?? 'issue-bench' });
    const { sim, lowered: asLowered } = recordAndLower({ trace, policy, model: o.model, hardware: o.hardware, hbm_budget: budget, group_size: o.groupSize }, { backend: b.kind });
    const lowered = o.compute === false ? withoutCompute(asLowered) : asLowered;
    const issued = o.settled ? settledSteps(lowered) : lowered;
    const model = sim.resolved.model;
    const data = new BlockData(1, blockBytes(lowered.geometry, 'fp16') / 2);
    const at = new Date().toISOString();
    const run = await runPlan(b, issued, model, data, { nvmeDir: dir, directIo: false, ioThreads: 4, fileBatch: true, maxWeightBytes: BENCH_WEIGHT_BYTES, traceSteps: 0, verify: false, ...(o.packThreads !== undefined ? { packThreads: o.packThreads } : {}) });
    const out: PlanIssueStep[] = lowered.steps.map((s, i) => {
      const ops: Record<PlanOpKind, number> = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
      for (const op of s.ops) ops[planOpKind(op)]++;
      // (settled: the wait put in front of the step is neither one of its ops nor its issue time; every wait
      // for the compute stream in the step is taken out, a plan's own ones too, which come only in steps
      // with file requests: 'other' ops, which the costs from plans leave out)
      return { step: i, issue_us: run.steps[i].host_issue_us - (o.settled ? run.steps[i].host_wait_compute_us : 0), ops };
    });
    return { policy, budget, context_tokens: o.contextTokens, steps: out, at, ...(o.compute === false ? { compute: false as const } : {}), ...(o.settled ? { settled: true as const } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The host's time per copy from a plan's steps: per step, (issue time - its records, kernel, conversion
 * and attention launches at the given costs; conversions at the kernel cost where none is given, and
 * counted among the kernels in steps recorded before they had their own count) / its copies, over the
 * steps with copies and nothing the host waits on ('other': file requests, host conversions); the
 * median over those steps, the first left out, and their mean copies per step. NaN when no step
 * qualifies.
 */
export function copyCostFromPlan(steps: readonly PlanIssueStep[], cost: { record: number; kernel: number; attention: number; convert?: number }): { us: number; per_step: number[]; copies: number } {
  const used = steps.filter((s) => s.step > 0 && s.ops.copy > 0 && s.ops.other === 0);
  const convert = cost.convert !== undefined && Number.isFinite(cost.convert) ? cost.convert : cost.kernel;
  const per = used.map((s) => (s.issue_us - s.ops.record * cost.record - s.ops.kernel * cost.kernel - (s.ops.convert ?? 0) * convert - s.ops.attention * cost.attention) / s.ops.copy);
  const copies = used.length ? used.reduce((a, s) => a + s.ops.copy, 0) / used.length : Number.NaN;
  return { us: per.length ? median(per) : Number.NaN, per_step: per, copies };
}

/**
 * The host's time per block conversion launch from a plan's steps, as the executor's own loop issues
 * them (a plan that re-assigns precisions now and then, as SmartKV does when a block completes): each
 * step's issue time less its other ops at the given costs is its residual; the residual of a step
 * without conversions is what a step costs the host beyond its ops (its median over those steps, the
 * first left out, is the baseline); per step with conversions, (residual - baseline) / its
 * conversions, and the median over those steps. Steps with ops the host waits on ('other') are left
 * out. NaN when no step converts or none gives a baseline.
 */
export function convertCostFromPlan(
  steps: readonly PlanIssueStep[],
  cost: { copy: number; record: number; kernel: number; attention: number },
): { us: number; per_step: number[]; conversions: number; baseline_us: number } {
  const usable = steps.filter((s) => s.step > 0 && s.ops.other === 0 && s.ops.convert !== undefined);
  const residual = (s: PlanIssueStep) => s.issue_us - s.ops.copy * cost.copy - s.ops.record * cost.record - s.ops.kernel * cost.kernel - s.ops.attention * cost.attention;
  const plain = usable.filter((s) => s.ops.convert === 0);
  const converting = usable.filter((s) => (s.ops.convert ?? 0) > 0);
  const baseline = plain.length ? median(plain.map(residual)) : Number.NaN;
  const per = Number.isFinite(baseline) ? converting.map((s) => (residual(s) - baseline) / s.ops.convert!) : [];
  const conversions = converting.length ? converting.reduce((a, s) => a + s.ops.convert!, 0) / converting.length : Number.NaN;
  return { us: per.length ? median(per) : Number.NaN, per_step: per, conversions, baseline_us: baseline };
}

/**
 * The pace of the executor's own loop at issuing records, kernels and attention launches, against the
 * same ops issued in a row: per step of a plan that moves nothing (no copies, conversions or ops the
 * host waits on; the first step left out), its issue time over its ops at the given costs; the median
 * of those steps. NaN when no step qualifies or the ops cost nothing.
 */
export function launchPaceFromPlan(steps: readonly PlanIssueStep[], cost: { record: number; kernel: number; attention: number }): { factor: number; per_step: number[]; listed_us: number; issued_us: number } {
  const used = steps.filter((s) => s.step > 0 && s.ops.copy === 0 && (s.ops.convert ?? 0) === 0 && s.ops.other === 0);
  const listed = (s: PlanIssueStep) => s.ops.record * cost.record + s.ops.kernel * cost.kernel + s.ops.attention * cost.attention;
  const ok = used.filter((s) => listed(s) > 0);
  const per = ok.map((s) => s.issue_us / listed(s));
  return {
    factor: per.length ? median(per) : Number.NaN,
    per_step: per,
    listed_us: ok.length ? median(ok.map(listed)) : Number.NaN,
    issued_us: ok.length ? median(ok.map((s) => s.issue_us)) : Number.NaN,
  };
}
