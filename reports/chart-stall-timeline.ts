/**
 * Chart (d): stall time of every decode step at the smallest HBM budget, one line per policy,
 * from the per-step rows; the oracle is the dashed black "oracle (bound)" entry of the legend
 * (a text label would sit on top of the other lines). Long runs are bucketed (the worst step of each bucket is kept, so
 * spikes stay visible).
 */
import type { TopLevelSpec } from 'vega-lite';
import type { StepRow, SweepRow } from '../sim/metrics/summary.js';
import { chartSpec, panelRow } from './chart-frame.js';
import { seriesEncodings } from './chart-series.js';
import { budgetLabel, type SweepChartData } from './sweep-chart-data.js';

/** Points per line above which steps are bucketed. */
export const MAX_TIMELINE_POINTS = 1000;

/** The timeline spec, or undefined when no run at the smallest budget has step rows. */
export function stallTimelineSpec(
  data: SweepChartData,
  steps: (row: SweepRow) => StepRow[] | undefined,
): TopLevelSpec | undefined {
  const values: object[] = [];
  const panelNames: string[] = [];
  const budgetsShown = new Set<number>();
  let bucket = 1;
  for (const panel of data.panels) {
    const inPanel = data.points.filter((p) => p.panel === panel);
    if (inPanel.length === 0) continue;
    const minBudget = Math.min(...inPanel.map((p) => p.budget));
    const name = data.panels.length > 1 ? `${panel} (budget ${budgetLabel(minBudget)})` : panel;
    for (const p of inPanel.filter((q) => q.budget === minBudget)) {
      // several seeds: show the first one that has step rows, not an average of timelines
      const rows = p.rows.map(steps).find((s) => s && s.length > 0);
      if (!rows) continue;
      const sorted = [...rows].sort((a, b) => a.step - b.step);
      const k = Math.ceil(sorted.length / MAX_TIMELINE_POINTS);
      bucket = Math.max(bucket, k);
      const line = bucketMax(sorted, k);
      const panelField = data.panels.length > 1 ? { panel: name } : {};
      for (const [step, stall] of line) values.push({ ...panelField, series: p.series, step, stall_ms: stall });
      if (!panelNames.includes(name)) panelNames.push(name);
      budgetsShown.add(minBudget);
    }
  }
  if (values.length === 0) return undefined;
  const x = { field: 'step', type: 'quantitative', title: 'decode step', scale: { zero: false, nice: false } };
  const y = {
    field: 'stall_ms',
    type: 'quantitative',
    title: bucket > 1 ? `stall per step (ms, worst of ${bucket})` : 'stall per step (ms)',
  };
  const layer: object[] = [
    { mark: { type: 'line', strokeWidth: 1.5 }, encoding: seriesEncodings(data.series) },
  ];
  const only = budgetsShown.size === 1 ? [...budgetsShown][0]! : undefined;
  return chartSpec({
    title: 'Stall per decode step at the smallest HBM budget',
    subtitle:
      (only !== undefined ? `HBM budget ${budgetLabel(only)}; ` : '') +
      'compute stream idle, waiting for memory' +
      (bucket > 1 ? `; steps in buckets of ${bucket}` : ''),
    values,
    encoding: { x, y },
    layer,
    row: panelRow(panelNames, data.panelDims.join(' · ') || null),
    width: panelNames.length > 1 ? 520 : 560,
    height: panelNames.length > 1 ? 150 : 240,
  });
}

/** [first step of bucket, largest stall in bucket] for buckets of k steps. */
function bucketMax(rows: StepRow[], k: number): [number, number][] {
  if (k <= 1) return rows.map((r) => [r.step, r.stall_ms]);
  const out: [number, number][] = [];
  for (let i = 0; i < rows.length; i += k) {
    let worst = -Infinity;
    for (let j = i; j < Math.min(rows.length, i + k); j++) worst = Math.max(worst, rows[j]!.stall_ms);
    out.push([rows[i]!.step, worst]);
  }
  return out;
}
