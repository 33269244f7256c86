/**
 * The shape shared by the "metric vs HBM budget" charts: one line with points per policy over
 * budget fractions, the oracle as a dashed black bound, one facet column per metric (e.g. p50 and
 * p99) and one facet row per panel (trace / model / hardware) when there is more than one.
 */
import type { TopLevelSpec } from 'vega-lite';
import { chartSpec, panelRow, wantsLog } from './chart-frame.js';
import { ORACLE_LABEL, oracleLabelLayer, seriesEncodings } from './chart-series.js';
import type { ConfigPoint, SweepChartData } from './sweep-chart-data.js';

export interface BudgetMetric {
  /** facet header, e.g. "p99" */
  name: string;
  value: (p: ConfigPoint) => number;
}

export interface BudgetLinesOptions {
  title: string;
  subtitle?: string;
  metrics: BudgetMetric[];
  yTitle: string;
  /** d3 format of y labels, e.g. ".0%" */
  yFormat?: string;
  /** 'auto' (default): log when values span more than 20x; a fixed domain disables that */
  yScale?: 'auto' | 'linear' | { domain: [number, number] };
  /** where the oracle's label sits: below a lower bound (latency), above an upper one (recall) */
  oracleLabel: 'above' | 'below';
}

/** A log scale that ends at the data (a "nice" log domain can add a decade on each side). */
const LOG_SCALE = { type: 'log', nice: false, padding: 12 };

export const BUDGET_AXIS_TITLE = 'HBM budget (fraction of FP16 KV)';

export function budgetLinesSpec(data: SweepChartData, o: BudgetLinesOptions): TopLevelSpec {
  const values: object[] = [];
  for (const m of o.metrics) {
    // the oracle's label goes on its largest-budget point in each panel
    const labelAt = new Map<string, number>();
    for (const p of data.points) {
      if (p.isOracle) labelAt.set(p.panel, Math.max(labelAt.get(p.panel) ?? -Infinity, p.budget));
    }
    for (const p of data.points) {
      const v = m.value(p);
      if (!Number.isFinite(v)) continue;
      values.push({
        ...(data.panels.length > 1 ? { panel: p.panel } : {}),
        ...(o.metrics.length > 1 ? { metric: m.name } : {}),
        series: p.series,
        budget: p.budget,
        value: v,
        label: p.isOracle && labelAt.get(p.panel) === p.budget ? ORACLE_LABEL : null,
      });
    }
  }
  const ys = values.map((v) => (v as { value: number }).value);
  const budgets = data.points.map((p) => p.budget);
  const yScale = o.yScale ?? 'auto';
  const x = {
    field: 'budget',
    type: 'quantitative',
    title: BUDGET_AXIS_TITLE,
    axis: { format: '.0%' },
    scale: wantsLog(budgets) ? LOG_SCALE : { zero: false },
  };
  const y = {
    field: 'value',
    type: 'quantitative',
    title: o.yTitle,
    ...(o.yFormat ? { axis: { format: o.yFormat } } : {}),
    scale:
      typeof yScale === 'object'
        ? { domain: yScale.domain }
        : yScale === 'auto' && wantsLog(ys)
          ? LOG_SCALE
          : { zero: false },
  };
  const enc = seriesEncodings(data.series);
  const layer: object[] = [
    { mark: { type: 'line' }, encoding: enc },
    { mark: { type: 'point', filled: true, size: 36, opacity: 1 }, encoding: { color: enc['color'] } },
  ];
  if (data.series.hasOracle) layer.push(oracleLabelLayer(o.oracleLabel));
  return chartSpec({
    title: o.title,
    subtitle: o.subtitle,
    values,
    encoding: { x, y },
    layer,
    column: o.metrics.length > 1 ? { field: 'metric', sort: o.metrics.map((m) => m.name), title: null } : undefined,
    row: panelRow(data.panels, data.panelDims.join(' · ') || null),
  });
}

/** A subtitle, noting when points are means over several seeds. */
export function withSeedNote(data: SweepChartData, note: string): string {
  return data.averaged ? `${note}; mean over seeds` : note;
}
