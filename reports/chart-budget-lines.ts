/**
 * The shape shared by the "metric vs HBM budget" charts: one line with points per policy over the
 * budgets run (the axis has a tick at each budget and nowhere else), the oracle as a dashed black
 * bound, runs at 100% (e.g. full) as a grey dotted rule, each line named at its right end, one
 * facet column per metric (e.g. p50 and p99) and one row per panel (trace / model / hardware),
 * each with its own value axis, when there is more than one.
 */
import type { TopLevelSpec } from 'vega-lite';
import { chartSpec, wantsLog } from './chart-frame.js';
import { fromPixel, paddedDomain, spreadLabels, toPixel, withRightMargin, type ScaleKind } from './chart-axes.js';
import { REFERENCE_COLOR, REFERENCE_DASH, seriesColor, seriesEncodings } from './chart-series.js';
import { budgetLabel, type ConfigPoint, type SweepChartData } from './sweep-chart-data.js';

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
}

export const BUDGET_AXIS_TITLE = 'HBM budget (fraction of FP16 KV)';

/** Panel size and the strip on the right that holds the line names. */
export const PANEL_WIDTH = 330;
export const PANEL_HEIGHT = 190;
export const LABEL_STRIP_PX = 105;
/** vertical distance between two line names, pixels */
export const LABEL_GAP_PX = 12;

export function referenceLabel(p: ConfigPoint): string {
  return `${p.policy} · ${budgetLabel(p.budget)} HBM`;
}

/**
 * One chart; with several panels (trace / model / hardware), one row per panel, stacked, each with
 * its own value axis: a 0.1 ms trace and a 100 ms trace do not share one.
 */
export function budgetLinesSpec(data: SweepChartData, o: BudgetLinesOptions): TopLevelSpec {
  if (data.panels.length <= 1) return panelLines(data, o, data.panels);
  const rows = data.panels
    .filter((panel) => data.points.some((p) => p.panel === panel))
    .map((panel) => {
      const { $schema: _s, config: _c, title: _t, ...child } = panelLines(data, o, [panel]) as unknown as Record<string, unknown>;
      return { ...child, title: { text: panel.split(' · '), anchor: 'start', fontSize: 12, fontWeight: 'bold' } };
    });
  const first = panelLines(data, o, [data.panels[0]!]) as unknown as Record<string, unknown>;
  return { $schema: first['$schema'], title: first['title'], vconcat: rows, config: first['config'] } as unknown as TopLevelSpec;
}

function panelLines(data: SweepChartData, o: BudgetLinesOptions, panels: string[]): TopLevelSpec {
  const faceted = o.metrics.length > 1;
  const facetOf = (panel: string, metric: string) => ({
    ...(data.panels.length > 1 ? { panel } : {}),
    ...(o.metrics.length > 1 ? { metric } : {}),
  });
  const inPanels = data.points.filter((p) => panels.includes(p.panel));
  const onAxis = inPanels.filter((p) => !p.isReference);
  const refs = inPanels.filter((p) => p.isReference);

  const ys = inPanels.flatMap((p) => o.metrics.map((m) => m.value(p))).filter(Number.isFinite);
  const yScale = o.yScale ?? 'auto';
  const yKind: ScaleKind = typeof yScale === 'object' || yScale === 'linear' || !wantsLog(ys) ? 'linear' : 'log';
  const yDomain = typeof yScale === 'object' ? yScale.domain : paddedDomain(ys, yKind);
  const xKind: ScaleKind = wantsLog(data.budgets) ? 'log' : 'linear';
  const width = faceted ? PANEL_WIDTH : PANEL_WIDTH + 110;
  const height = faceted ? PANEL_HEIGHT : 260;
  const xDomain = withRightMargin(paddedDomain(data.budgets, xKind, 0.08), xKind, width, LABEL_STRIP_PX);

  const values: object[] = [];
  for (const m of o.metrics) {
    for (const panel of panels) {
      const facet = facetOf(panel, m.name);
      const here = onAxis.filter((p) => p.panel === panel && Number.isFinite(m.value(p)));
      for (const p of here) values.push({ ...facet, kind: 'point', series: p.series, budget: p.budget, value: m.value(p) });
      // one name per line, at its largest budget; one per reference, on its rule
      const labels: { text: string; color: string; value: number }[] = [];
      for (const series of [...new Set(here.map((p) => p.series))]) {
        const last = here.filter((p) => p.series === series).reduce((a, b) => (b.budget > a.budget ? b : a));
        labels.push({ text: series, color: seriesColor(data.series, series), value: m.value(last) });
      }
      for (const r of refs.filter((p) => p.panel === panel && Number.isFinite(m.value(p)))) {
        // the rule runs across the data, not through the strip of line names
        values.push({ ...facet, kind: 'reference', series: referenceLabel(r), value: m.value(r), budget: xDomain[0], budget_end: lastBudgetOf(data) });
        labels.push({ text: referenceLabel(r), color: REFERENCE_COLOR, value: m.value(r) });
      }
      if (here.length === 0) continue;
      const lastBudget = Math.max(...here.map((p) => p.budget));
      const at = spreadLabels(
        labels.map((l) => toPixel(l.value, yDomain, yKind, height)),
        LABEL_GAP_PX,
        height,
      );
      labels.forEach((l, i) =>
        values.push({ ...facet, kind: 'label', budget: lastBudget, value: fromPixel(at[i]!, yDomain, yKind, height), text: l.text, color: l.color }),
      );
    }
  }
  const x = {
    field: 'budget',
    type: 'quantitative',
    title: BUDGET_AXIS_TITLE,
    axis: { format: '.0%', values: data.budgets, grid: true },
    scale: { type: xKind, domain: xDomain, nice: false, ...(xKind === 'linear' ? { zero: false } : {}) },
  };
  const y = {
    field: 'value',
    type: 'quantitative',
    title: o.yTitle,
    ...(o.yFormat ? { axis: { format: o.yFormat } } : {}),
    scale: { type: yKind, domain: yDomain, nice: false, ...(yKind === 'linear' ? { zero: false } : {}) },
  };
  const enc = seriesEncodings(data.series);
  const kind = (k: string) => [{ filter: `datum.kind === '${k}'` }];
  const layer: object[] = [];
  if (refs.length > 0) {
    layer.push({
      transform: kind('reference'),
      mark: { type: 'rule', color: REFERENCE_COLOR, strokeDash: REFERENCE_DASH, strokeWidth: 1.5 },
      encoding: { x, x2: { field: 'budget_end' }, y },
    });
  }
  layer.push(
    { transform: kind('point'), mark: { type: 'line' }, encoding: { x, y, ...enc } },
    { transform: kind('point'), mark: { type: 'point', filled: true, size: 36, opacity: 1 }, encoding: { x, y, color: enc['color'] } },
    {
      transform: kind('label'),
      mark: { type: 'text', align: 'left', baseline: 'middle', dx: 8, fontSize: 11 },
      encoding: { x, y, text: { field: 'text' }, fill: { field: 'color', type: 'nominal', scale: null } },
    },
  );
  return chartSpec({
    title: o.title,
    subtitle: o.subtitle,
    values,
    layer,
    column: o.metrics.length > 1 ? { field: 'metric', sort: o.metrics.map((m) => m.name), title: null } : undefined,
    width,
    height,
  });
}

function lastBudgetOf(data: SweepChartData): number {
  return data.budgets[data.budgets.length - 1] ?? 1;
}

/** A subtitle, noting when points are means over several seeds. */
export function withSeedNote(data: SweepChartData, note: string): string {
  return data.averaged ? `${note}; mean over seeds` : note;
}
