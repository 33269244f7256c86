/**
 * The sweep rows as the charts want them: only successful runs, one point per
 * (panel, policy, budget) with seeds averaged, panels named by whichever of trace / model /
 * hardware vary across the sweep, the oracle kept apart as the bound, and runs at a budget of 100%
 * or more (the whole KV in HBM, e.g. `full`) kept apart as references: they are drawn as rules,
 * not as points on a budget axis.
 */
import type { SweepRow } from '../sim/metrics/summary.js';
import { formatPercent } from './format-units.js';
import { seriesName, type SeriesInfo } from './chart-series.js';

/** One configuration point after averaging over seeds. */
export interface ConfigPoint {
  panel: string;
  policy: string;
  series: string;
  isOracle: boolean;
  /** budget >= 100%: the whole KV fits in HBM; a reference, not a point on the budget axis */
  isReference: boolean;
  budget: number;
  seeds: number;
  tbt_p50_ms: number;
  tbt_p99_ms: number;
  tokens_per_s: number;
  stall_ms: number;
  transfer_ms: number;
  masking_efficiency: number;
  recall_mean: number;
  /** the lowest over seeds */
  recall_min: number;
  bytes_total: number;
  bytes_h2d: number;
  bytes_d2h: number;
  /** mean over the seeds that measured it; NaN when none did */
  quant_error_mean: number;
  /** the rows behind this point, in input order */
  rows: SweepRow[];
}

export interface SweepChartData {
  oracle: string;
  series: SeriesInfo;
  /** panel names in display order; [''] when trace, model and hardware are the same everywhere */
  panels: string[];
  /** what the panel names are made of, e.g. ['trace', 'hardware'] */
  panelDims: PanelDim[];
  points: ConfigPoint[];
  /** true when some point averages more than one seed */
  averaged: boolean;
  /** the budgets below 100% that some policy ran, ascending: the ticks of every budget axis */
  budgets: number[];
}

export type PanelDim = 'trace' | 'model' | 'hardware';
const PANEL_DIMS: PanelDim[] = ['trace', 'model', 'hardware'];

export function panelDimsOf(rows: SweepRow[]): PanelDim[] {
  return PANEL_DIMS.filter((d) => new Set(rows.map((r) => r[d])).size > 1);
}

/** e.g. "llama-3-8b-2k-default · h100-pcie5": the trace without its .kvt extension, to keep facet headers short. */
export function panelOf(row: SweepRow, dims: PanelDim[]): string {
  return dims.map((d) => (d === 'trace' ? row[d].replace(/\.kvt$/, '') : row[d])).join(' · ');
}

export function sweepChartData(rows: SweepRow[], oracle: string): SweepChartData {
  const ok = rows.filter((r) => r.status === 'ok');
  const panelDims = panelDimsOf(ok);
  const groups = new Map<string, SweepRow[]>();
  for (const r of ok) {
    const key = JSON.stringify([panelOf(r, panelDims), r.policy, r.hbm_budget_fraction]);
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  const points = [...groups.values()].map((g) => aggregate(g, panelOf(g[0]!, panelDims), oracle));
  points.sort(
    (a, b) =>
      compareStrings(a.panel, b.panel) ||
      a.budget - b.budget ||
      Number(a.isOracle) - Number(b.isOracle) ||
      compareStrings(a.policy, b.policy),
  );
  // a policy that only ran as a reference (e.g. full at 100%) is no line on the charts
  const policies = [...new Set(points.filter((p) => !p.isOracle && !p.isReference).map((p) => p.policy))].sort(compareStrings);
  const panels = [...new Set(points.map((p) => p.panel))].sort(compareStrings);
  return {
    oracle,
    series: { policies, hasOracle: points.some((p) => p.isOracle && !p.isReference) },
    panels: panels.length ? panels : [''],
    panelDims,
    points,
    averaged: points.some((p) => p.seeds > 1),
    budgets: [...new Set(points.filter((p) => !p.isReference).map((p) => p.budget))].sort((a, b) => a - b),
  };
}

function aggregate(g: SweepRow[], panel: string, oracle: string): ConfigPoint {
  const mean = (f: (r: SweepRow) => number) => g.reduce((s, r) => s + f(r), 0) / g.length;
  const first = g[0]!;
  return {
    panel,
    policy: first.policy,
    series: seriesName(first.policy, oracle),
    isOracle: first.policy === oracle,
    isReference: isReferenceBudget(first.hbm_budget_fraction),
    budget: first.hbm_budget_fraction,
    seeds: g.length,
    tbt_p50_ms: mean((r) => r.tbt_p50_ms),
    tbt_p99_ms: mean((r) => r.tbt_p99_ms),
    tokens_per_s: mean((r) => r.tokens_per_s),
    stall_ms: mean((r) => r.stall_ms),
    transfer_ms: mean((r) => r.transfer_ms),
    masking_efficiency: mean((r) => r.masking_efficiency),
    recall_mean: mean((r) => r.recall_mean),
    recall_min: Math.min(...g.map((r) => r.recall_min)),
    bytes_total: mean((r) => r.bytes_total),
    bytes_h2d: mean((r) => r.bytes_h2d),
    bytes_d2h: mean((r) => r.bytes_d2h),
    quant_error_mean: meanDefined(g.map((r) => r.quant_error_mean)),
    rows: g,
  };
}

function meanDefined(v: (number | undefined)[]): number {
  const f = v.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return f.length ? f.reduce((a, b) => a + b, 0) / f.length : Number.NaN;
}

/** A budget that holds the whole FP16 KV. */
export function isReferenceBudget(fraction: number): boolean {
  return fraction >= 1;
}

/** Points drawn on budget axes: below 100%. */
export function onBudgetAxis(p: ConfigPoint): boolean {
  return !p.isReference;
}

/** Code-point order: the same on every machine, unlike localeCompare. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function budgetLabel(fraction: number): string {
  return formatPercent(fraction);
}
