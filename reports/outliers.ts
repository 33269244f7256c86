/**
 * Policies far slower than the others: at each (panel, budget), a policy whose median time between
 * tokens is more than `factor` times the median over the policies run there. One sentence per
 * policy (its worst point) says where its step time goes, from the run's own breakdown.
 */
import { formatBytes, formatPercent } from './format-units.js';
import { formatNumber } from './format-cell.js';

/** A run's own accounting (summary.json): totals over the run. */
export interface RunBreakdown {
  steps: number;
  /** kernel time on the compute stream */
  compute_ms: number;
  /** compute stream idle, waiting for memory */
  stall_ms: number;
  /** busy time of the memory streams */
  transfer_ms: number;
  /** bytes per link direction, key "<link>:<from>-><to>" */
  bytes: Record<string, number>;
}

export interface OutlierInput {
  panel: string;
  policy: string;
  budget: number;
  tbt_p50_ms: number;
  breakdown?: RunBreakdown;
}

export interface Outlier<P extends OutlierInput = OutlierInput> {
  point: P;
  /** median TBT p50 over the policies at the same panel and budget */
  median_ms: number;
  ratio: number;
}

export const OUTLIER_FACTOR = 3;

/** Every (point, ratio) above `factor` x the median of its (panel, budget) group, in input order. */
export function findOutliers<P extends OutlierInput>(points: P[], factor = OUTLIER_FACTOR): Outlier<P>[] {
  const groups = new Map<string, number[]>();
  const key = (p: P) => JSON.stringify([p.panel, p.budget]);
  for (const p of points) {
    if (!Number.isFinite(p.tbt_p50_ms)) continue;
    const g = groups.get(key(p));
    if (g) g.push(p.tbt_p50_ms);
    else groups.set(key(p), [p.tbt_p50_ms]);
  }
  const out: Outlier<P>[] = [];
  for (const p of points) {
    const g = groups.get(key(p));
    if (!g || g.length < 3) continue; // a median of two says nothing about "the others"
    const m = median(g);
    if (m > 0 && p.tbt_p50_ms > factor * m) out.push({ point: p, median_ms: m, ratio: p.tbt_p50_ms / m });
  }
  return out;
}

/** One outlier per policy: its largest ratio (ties: the first in input order), with how many other points were outliers too. */
export function worstPerPolicy<P extends OutlierInput>(outliers: Outlier<P>[]): { worst: Outlier<P>; others: number }[] {
  const by = new Map<string, Outlier<P>[]>();
  for (const o of outliers) {
    const g = by.get(o.point.policy);
    if (g) g.push(o);
    else by.set(o.point.policy, [o]);
  }
  return [...by.values()].map((g) => ({
    worst: g.reduce((a, b) => (b.ratio > a.ratio ? b : a)),
    others: g.length - 1,
  }));
}

/**
 * E.g. "**synapsevm** at 10% HBM (trace · hw): 274 ms per token, 49× the median policy (5.57 ms).
 * 98% of its step time is waiting for memory (compute 2%); it moved 9.5 GiB, 59% pcie dram→hbm and 41% nvme nvme→dram."
 */
export function outlierSentence(o: Outlier, others = 0, factor = OUTLIER_FACTOR): string {
  const p = o.point;
  const where = p.panel ? ` (${p.panel})` : '';
  let s =
    `**${p.policy}** at ${formatPercent(p.budget)} HBM${where}: ${formatNumber(p.tbt_p50_ms)} ms per token, ` +
    `${formatRatio(o.ratio)} the median policy (${formatNumber(o.median_ms)} ms)`;
  if (others > 0) s += `; more than ${factor}× at ${others} other point${others === 1 ? '' : 's'} too`;
  s += '.';
  const b = p.breakdown;
  if (!b || !(b.compute_ms + b.stall_ms > 0)) return `${s} The run's time breakdown is not available.`;
  const total = b.compute_ms + b.stall_ms;
  s += ` ${share(b.stall_ms / total)} of its step time is waiting for memory (compute ${share(b.compute_ms / total)})`;
  const links = Object.entries(b.bytes)
    .filter(([, v]) => v > 0)
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
  const moved = links.reduce((a, [, v]) => a + v, 0);
  if (moved > 0) {
    const top = links.slice(0, 2).map(([k, v]) => `${share(v / moved)} ${linkName(k)}`);
    s += `; the memory streams were busy ${formatNumber(b.transfer_ms / Math.max(1, b.steps))} ms per step, moving ${formatBytes(moved)} in all, ${top.join(' and ')}`;
  }
  return `${s}.`;
}

/** "nvme:nvme->dram" -> "nvme→dram over nvme"; other keys as they are. */
export function linkName(key: string): string {
  const m = /^([^:]+):(.+)->(.+)$/.exec(key);
  return m ? `${m[2]}→${m[3]} over ${m[1]}` : key;
}

function share(f: number): string {
  return formatPercent(Math.round(f * 100) / 100);
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

/** 48.93 -> "49×", 4 -> "4.0×" */
function formatRatio(r: number): string {
  return `${r >= 10 ? r.toFixed(0) : r.toFixed(1)}×`;
}
