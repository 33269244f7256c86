/**
 * The trade-off chart: median time between tokens (x, log when wide) against attention recall (y),
 * one panel per trace / hardware (rows) and HBM budget (columns). Each panel draws the Pareto front
 * of its online policies (no other policy there is both faster and more accurate) as a staircase,
 * the quality target as a horizontal rule, and a reference run (e.g. full at 100%) as a vertical
 * rule. Points that meet the quality target are filled, the others hollow; the oracle is shown but
 * is never on the front (it knows the future).
 */
import type { TopLevelSpec } from 'vega-lite';
import { chartSpec, wantsLog } from './chart-frame.js';
import { fractionOf, paddedDomain, placePointLabels, valueAt, withRightMargin, type ScaleKind } from './chart-axes.js';
import { REFERENCE_COLOR, REFERENCE_DASH, seriesEncodings } from './chart-series.js';
import { referenceLabel } from './chart-budget-lines.js';
import { paretoFront } from './pareto.js';
import { meetsTarget, type QualityTarget } from './recommend.js';
import { budgetLabel, type SweepChartData } from './sweep-chart-data.js';

export const PARETO_PANEL_WIDTH = 250;
export const PARETO_PANEL_HEIGHT = 170;

/**
 * One chart; with several panels (trace / model / hardware), one row of budget panels per panel,
 * stacked, each with its own axes: a 0.1 ms trace and a 100 ms trace do not share a time axis.
 */
export function paretoSpec(data: SweepChartData, target: QualityTarget): TopLevelSpec {
  const title = 'Time between tokens against recall, per HBM budget';
  const subtitle = [
    'grey staircase: the Pareto front (no policy is both faster and more accurate than a point on it)',
    `filled points meet the target (recall ≥ ${formatTarget(target.recallMin)}, quant error ≤ ${target.quantErrorMax}); hollow ones miss it`,
  ];
  if (data.panels.length <= 1) return panelSpec(data, data.panels, target, title, subtitle);
  const rows = data.panels
    .filter((panel) => data.points.some((p) => p.panel === panel && !p.isReference))
    .map((panel, i) => {
      const spec = panelSpec(data, [panel], target, title) as unknown as Record<string, any>;
      const { $schema: _s, config: _c, title: _t, ...child } = spec;
      if (i > 0) child['facet'].column.title = null; // "HBM budget" once, above the first row
      return { ...child, title: { text: panel.split(' · '), anchor: 'start', fontSize: 12, fontWeight: 'bold' } };
    });
  const first = panelSpec(data, [data.panels[0]!], target, title, subtitle) as unknown as Record<string, unknown>;
  return { $schema: first['$schema'], title: { text: title, subtitle }, vconcat: rows, config: first['config'] } as unknown as TopLevelSpec;
}

function panelSpec(data: SweepChartData, panels: string[], target: QualityTarget, title: string, subtitle?: string[]): TopLevelSpec {
  const inPanels = data.points.filter((p) => panels.includes(p.panel));
  const onAxis = inPanels.filter((p) => !p.isReference && Number.isFinite(p.tbt_p50_ms) && Number.isFinite(p.recall_mean));
  const refs = inPanels.filter((p) => p.isReference && Number.isFinite(p.tbt_p50_ms));
  const panelField = (panel: string) => ({ panel });
  const xs = [...onAxis, ...refs].map((p) => p.tbt_p50_ms);
  const xKind: ScaleKind = wantsLog(xs, 8) ? 'log' : 'linear';
  const xDomain = withRightMargin(paddedDomain(xs, xKind, 0.05), xKind, PARETO_PANEL_WIDTH, 20);
  const yDomain = paddedDomain([...onAxis.map((p) => p.recall_mean), target.recallMin, 1], 'linear', 0.08);

  // the target's name sits at the right end, just below its rule (the text layer's align, dx and dy)
  const targetText = `target ${formatTarget(target.recallMin)}`;
  const targetY = (1 - fractionOf(target.recallMin, yDomain, 'linear')) * PARETO_PANEL_HEIGHT;
  const targetLabelBox: [number, number, number, number] = [
    PARETO_PANEL_WIDTH - 3 - textWidth(targetText),
    targetY + 3,
    PARETO_PANEL_WIDTH - 3,
    targetY + 14,
  ];
  const values: object[] = [];
  const budgets = data.budgets;
  for (const panel of panels) {
    for (const b of budgets) {
      const here = onAxis.filter((p) => p.panel === panel && p.budget === b);
      if (here.length === 0) continue;
      const facet = { ...panelField(panel), budget: budgetLabel(b) };
      const online = here.filter((p) => !p.isOracle);
      const front = new Set(paretoFront(online.map((p) => ({ x: p.tbt_p50_ms, y: p.recall_mean }))).map((i) => online[i]!));
      // labels placed so that none covers another or a point; front points choose first
      const order = [...here].sort((a, c) => Number(front.has(c)) - Number(front.has(a)));
      const placed = placePointLabels(
        order.map((p) => ({
          px: fractionOf(p.tbt_p50_ms, xDomain, xKind) * PARETO_PANEL_WIDTH,
          py: (1 - fractionOf(p.recall_mean, yDomain, 'linear')) * PARETO_PANEL_HEIGHT,
          width: textWidth(p.series),
        })),
        PARETO_PANEL_WIDTH,
        PARETO_PANEL_HEIGHT,
        [targetLabelBox],
      );
      order.forEach((p, i) => {
        const at = placed[i]!;
        values.push({
          ...facet,
          kind: 'point',
          series: p.series,
          tbt: p.tbt_p50_ms,
          recall: p.recall_mean,
          meets: meetsTarget(p, target),
          front: front.has(p),
        });
        values.push({
          ...facet,
          kind: 'label',
          series: p.series,
          tbt: valueAt(at.x / PARETO_PANEL_WIDTH, xDomain, xKind),
          recall: valueAt(1 - at.y / PARETO_PANEL_HEIGHT, yDomain, 'linear'),
          side: at.align,
          text: p.series,
        });
      });
      for (const p of [...front].sort((a, c) => a.tbt_p50_ms - c.tbt_p50_ms)) {
        values.push({ ...facet, kind: 'front', tbt: p.tbt_p50_ms, recall: p.recall_mean });
      }
      for (const r of refs.filter((q) => q.panel === panel)) {
        values.push({ ...facet, kind: 'reference', tbt: r.tbt_p50_ms, recall: yDomain[0], text: referenceLabel(r) });
      }
      values.push({ ...facet, kind: 'target', recall: target.recallMin, tbt: xDomain[1], text: targetText });
    }
  }
  const x = {
    field: 'tbt',
    type: 'quantitative',
    title: 'TBT p50 (ms)',
    scale: { type: xKind, domain: xDomain, nice: false, ...(xKind === 'linear' ? { zero: false } : {}) },
    ...(xKind === 'log' ? { axis: { tickCount: 4, format: '~g' } } : {}),
  };
  const y = { field: 'recall', type: 'quantitative', title: 'attention recall', axis: { format: '.0%' }, scale: { domain: yDomain, nice: false, zero: false } };
  const kind = (k: string, extra = '') => [{ filter: `datum.kind === '${k}'${extra}` }];
  const color = seriesEncodings(data.series)['color'];
  const layer: object[] = [
    {
      transform: kind('target'),
      mark: { type: 'rule', color: '#2b8a3e', strokeDash: [4, 3], strokeWidth: 1 },
      encoding: { y },
    },
    {
      transform: kind('target'),
      mark: { type: 'text', align: 'right', baseline: 'top', dx: -3, dy: 3, fontSize: 10, color: '#2b8a3e' },
      encoding: { x, y, text: { field: 'text' } },
    },
    {
      transform: kind('front'),
      mark: { type: 'line', interpolate: 'step-after', color: '#888888', strokeWidth: 1.5 },
      encoding: { x, y, order: { field: 'tbt', type: 'quantitative' } },
    },
    {
      transform: kind('point'),
      mark: { type: 'point', size: 48, strokeWidth: 2, opacity: 1 },
      encoding: { x, y, color, fill: { condition: { test: 'datum.meets', field: 'series', type: 'nominal', scale: (color as { scale: object }).scale }, value: 'white' } },
    },
  ];
  if (refs.length > 0) {
    layer.unshift(
      { transform: kind('reference'), mark: { type: 'rule', color: REFERENCE_COLOR, strokeDash: REFERENCE_DASH, strokeWidth: 1.5 }, encoding: { x } },
      {
        transform: kind('reference'),
        mark: { type: 'text', align: 'left', baseline: 'bottom', angle: 270, dx: 2, dy: -3, fontSize: 10, color: REFERENCE_COLOR },
        encoding: { x, y, text: { field: 'text' } },
      },
    );
  }
  for (const side of ['left', 'right'] as const) {
    layer.push({
      transform: kind('label', ` && datum.side === '${side}'`),
      mark: { type: 'text', align: side, baseline: 'middle', fontSize: 10 },
      encoding: { x, y, text: { field: 'text' }, color },
    });
  }
  const shown = budgets.filter((b) => onAxis.some((p) => p.budget === b)).map(budgetLabel);
  return chartSpec({
    title,
    subtitle,
    values,
    layer,
    column: { field: 'budget', sort: shown, title: 'HBM budget' },
    width: PARETO_PANEL_WIDTH,
    height: PARETO_PANEL_HEIGHT,
  });
}

/** Width of a 10 px sans-serif label, estimated (no font metrics at spec time). */
function textWidth(s: string): number {
  return 6.2 * s.length + 2;
}

function formatTarget(r: number): string {
  return `${Math.round(r * 10000) / 100}%`;
}
