/**
 * The recommendation of a sweep report: per panel (trace / hardware) and HBM budget, the fastest
 * policy (lowest median time between tokens) whose attention recall and quantization error meet a
 * quality target, or, when none does, the one that comes closest. The oracle (future knowledge)
 * and reference runs (budget >= 100%) are never recommended.
 */

export interface QualityTarget {
  /** lowest acceptable mean attention recall, e.g. 0.99 */
  recallMin: number;
  /** highest acceptable mean quantization error, e.g. 0.012 */
  quantErrorMax: number;
}

export const DEFAULT_TARGET: QualityTarget = { recallMin: 0.99, quantErrorMax: 0.012 };

/** One configuration as the recommendation sees it (seeds already averaged). */
export interface Candidate {
  panel: string;
  policy: string;
  budget: number;
  tbt_p50_ms: number;
  recall_mean: number;
  /** NaN or undefined when the run measured none: then only recall is checked */
  quant_error_mean?: number;
}

export interface Recommendation<C extends Candidate = Candidate> {
  panel: string;
  budget: number;
  /** the fastest candidate that meets the target; undefined when none does */
  pick?: C;
  /** when none meets it: the candidate with the smallest miss (see `targetMiss`) */
  closest?: C;
  /** the fastest candidate whatever its quality, when it is not `pick` */
  fastest?: C;
  /** how many candidates ran at this budget, and how many met the target */
  candidates: number;
  meeting: number;
}

/**
 * How far a candidate is from the target, as a multiple of what the target allows: the larger of
 * (1 − recall) / (1 − recallMin) and quantError / quantErrorMax. It meets the target iff this is <= 1.
 * A zero allowance gives 0 for a perfect value and Infinity otherwise.
 */
export function targetMiss(c: Candidate, t: QualityTarget): number {
  const ratio = (used: number, allowed: number) => {
    const u = Math.max(0, used);
    if (allowed > 0) return u / allowed;
    return u > 0 ? Infinity : 0;
  };
  const q = c.quant_error_mean;
  const recall = ratio(1 - c.recall_mean, 1 - t.recallMin);
  const quant = q === undefined || !Number.isFinite(q) ? 0 : ratio(q, t.quantErrorMax);
  return Math.max(recall, quant);
}

export function meetsTarget(c: Candidate, t: QualityTarget): boolean {
  return Number.isFinite(c.recall_mean) && targetMiss(c, t) <= 1 + 1e-12;
}

/**
 * One recommendation per (panel, budget) present in `candidates`, in panel order then budget order.
 * Ties in time go to the higher recall, then to the policy name, so the result does not depend on
 * input order.
 */
export function recommend<C extends Candidate>(candidates: C[], target: QualityTarget = DEFAULT_TARGET): Recommendation<C>[] {
  validateTarget(target);
  const groups = new Map<string, C[]>();
  for (const c of candidates) {
    if (!Number.isFinite(c.tbt_p50_ms) || !Number.isFinite(c.recall_mean)) continue;
    const key = JSON.stringify([c.panel, c.budget]);
    const g = groups.get(key);
    if (g) g.push(c);
    else groups.set(key, [c]);
  }
  const out: Recommendation<C>[] = [];
  for (const g of groups.values()) {
    const byTime = [...g].sort(
      (a, b) => a.tbt_p50_ms - b.tbt_p50_ms || b.recall_mean - a.recall_mean || cmp(a.policy, b.policy),
    );
    const meeting = byTime.filter((c) => meetsTarget(c, target));
    const pick = meeting[0];
    const fastest = byTime[0]!;
    const rec: Recommendation<C> = { panel: g[0]!.panel, budget: g[0]!.budget, candidates: g.length, meeting: meeting.length };
    if (pick) rec.pick = pick;
    else {
      rec.closest = [...byTime].sort((a, b) => targetMiss(a, target) - targetMiss(b, target) || b.recall_mean - a.recall_mean)[0]!;
    }
    if (fastest !== pick) rec.fastest = fastest;
    out.push(rec);
  }
  return out.sort((a, b) => cmp(a.panel, b.panel) || a.budget - b.budget);
}

function validateTarget(t: QualityTarget): void {
  if (!(t.recallMin >= 0 && t.recallMin <= 1)) {
    throw new Error(`quality target: recallMin must be a number in [0, 1], got ${String(t.recallMin)}`);
  }
  if (!(t.quantErrorMax >= 0)) {
    throw new Error(`quality target: quantErrorMax must be a number >= 0, got ${String(t.quantErrorMax)}`);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
