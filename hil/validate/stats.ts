/**
 * The statistics of a validation grid: per-step relative errors of simulated against measured step
 * times, the hardware's own run-to-run spread, step-time distributions, and pooling over cells.
 * Quantiles interpolate linearly between order statistics (hil/compare/errors.ts).
 */
import { quantile } from '../compare/errors.js';

export interface MedianP95 {
  median: number;
  p95: number;
  /** values summarized */
  n: number;
}

export interface Distribution {
  mean: number;
  p50: number;
  p99: number;
}

export function medianP95(xs: readonly number[]): MedianP95 {
  return { median: quantile([...xs], 0.5), p95: quantile([...xs], 0.95), n: xs.length };
}

export function distribution(xs: readonly number[]): Distribution {
  if (xs.length === 0) return { mean: Number.NaN, p50: Number.NaN, p99: Number.NaN };
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, p50: quantile([...xs], 0.5), p99: quantile([...xs], 0.99) };
}

/** per step |sim - hw| / hw (hw floored at 1e-12) */
export function relErrors(sim: readonly number[], hw: readonly number[]): number[] {
  if (sim.length !== hw.length) throw new Error(`relErrors: ${sim.length} simulated steps against ${hw.length} measured`);
  return sim.map((s, i) => Math.abs(s - hw[i]) / Math.max(Math.abs(hw[i]), 1e-12));
}

/** per step, the median over the runs (runs[k][step]) */
export function stepMedians(runs: readonly (readonly number[])[]): number[] {
  if (runs.length === 0) return [];
  const n = runs[0].length;
  for (const r of runs) if (r.length !== n) throw new Error(`stepMedians: runs of ${runs.map((x) => x.length).join(', ')} steps`);
  return Array.from({ length: n }, (_, i) => quantile(runs.map((r) => r[i]), 0.5));
}

/**
 * The hardware's run-to-run spread: for every step and every pair of runs i < j,
 * |run_i - run_j| / ((run_i + run_j) / 2). Empty with fewer than two runs.
 */
export function pairSpreads(runs: readonly (readonly number[])[]): number[] {
  const out: number[] = [];
  if (runs.length < 2) return out;
  const n = runs[0].length;
  for (let s = 0; s < n; s++) {
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        out.push(pairSpread(runs[i][s], runs[j][s]));
      }
    }
  }
  return out;
}

/**
 * How close a step's hardware runs must be for the step to count as repeatable: every pair of runs
 * within this share of their mean (the pair spread of pairSpreads).
 */
export const REPEATABLE_SPREAD = 0.02;

/**
 * per step, whether the hardware repeated it: at least two runs, every pair within REPEATABLE_SPREAD
 * of its mean. A step slowed in one run by something outside the run (another tenant on the host link,
 * the disk) fails it; the simulator's error over the steps that pass is its error where the hardware
 * itself agrees.
 */
export function repeatableSteps(runs: readonly (readonly number[])[]): boolean[] {
  if (runs.length < 2) return runs.length ? runs[0].map(() => false) : [];
  const n = runs[0].length;
  return Array.from({ length: n }, (_, s) => {
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        if (!(pairSpread(runs[i][s], runs[j][s]) <= REPEATABLE_SPREAD)) return false;
      }
    }
    return true;
  });
}

/** two runs' times of one step: |a - b| over their mean */
function pairSpread(a: number, b: number): number {
  return Math.abs(a - b) / Math.max((a + b) / 2, 1e-12);
}

/** the targets a cell is held to, by what its policy moves */
export type PolicyPool = 'non-moving' | 'moving' | 'storage';

export interface Targets {
  /** per-step median and p95 |error| of policies that move no bytes */
  non_moving: { median: number; p95: number };
  /** the same for policies that move bytes between HBM and host memory */
  moving: { median: number; p95: number };
  /**
   * policies that move bytes to or from the storage (file) tier: the run's mean step time within
   * `mean` of the measured, and the simulated p50 and p99 step times each within the hardware's own
   * run-to-run spread (its p95 over steps and run pairs) of the measured
   */
  storage: { mean: number };
}

export const TARGETS: Targets = { non_moving: { median: 0.01, p95: 0.02 }, moving: { median: 0.03, p95: 0.08 }, storage: { mean: 0.05 } };

export interface CellJudgement {
  pass: boolean;
  /** each check with its value and limit, e.g. "median 0.52% <= 1.00%" */
  checks: { name: string; value: number; limit: number; pass: boolean }[];
}

/**
 * Pass or miss of one cell against its pool's targets. `error`: per-step errors against the
 * measured (per-step median of the runs); `sim`/`hw`: step-time distributions; `spread`: the
 * hardware's run-to-run spread (storage pool: needs at least two runs, else the distribution
 * checks miss with a NaN limit).
 */
export function judgeCell(pool: PolicyPool, error: MedianP95, sim: Distribution, hw: Distribution, spread: MedianP95, t: Targets = TARGETS): CellJudgement {
  const checks: CellJudgement['checks'] = [];
  const add = (name: string, value: number, limit: number) => checks.push({ name, value, limit, pass: value <= limit });
  if (pool === 'storage') {
    const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);
    add('mean step time', rel(sim.mean, hw.mean), t.storage.mean);
    add('p50 step time', rel(sim.p50, hw.p50), spread.p95);
    add('p99 step time', rel(sim.p99, hw.p99), spread.p95);
  } else {
    const lim = pool === 'moving' ? t.moving : t.non_moving;
    add('median |error|', error.median, lim.median);
    add('p95 |error|', error.p95, lim.p95);
  }
  return { pass: checks.every((c) => c.pass), checks };
}

/**
 * The share of a cell's measured steps the compute stream spent waiting on the host: per step after the
 * first `skip`, the runs' host gap over their latency (summed over runs), and the median over steps;
 * undefined without stored host gaps. A large share means the host did not keep the GPU fed for part of
 * the step. The gap is only the compute stream's time from one layer's last mark to the next layer's
 * first: the host's time issuing the ops between a layer's marks counts as that layer's compute or wait,
 * and a step set by the host's copies shows as the compute stream waiting on the memory stream, so a
 * share near 0 does not show that the GPU's streams set the step (the simulator sees the host only
 * through its host clock, where the profile has gpu.issue_*_us).
 */
export function hostWaitShare(c: { hw_ms?: readonly (readonly number[])[]; hw_host_gap_ms?: readonly (readonly number[])[] }, skip: number): number | undefined {
  const gap = c.hw_host_gap_ms;
  const ms = c.hw_ms;
  if (!gap?.length || !ms?.length || gap.length !== ms.length || gap.some((g, k) => g.length !== ms[k].length)) return undefined;
  const shares: number[] = [];
  for (let i = skip; i < ms[0].length; i++) {
    let g = 0;
    let t = 0;
    for (let k = 0; k < ms.length; k++) {
      g += gap[k][i];
      t += ms[k][i];
    }
    if (t > 0) shares.push(g / t);
  }
  return shares.length ? medianP95(shares).median : undefined;
}
