/**
 * Chart (c): bytes moved per policy, one facet column per HBM budget, bars stacked by link
 * direction (host-to-device, device-to-host, and other links when there are any). The oracle is
 * a dashed black rule at its total bytes in each budget's panel. Columns exist only for budgets
 * below 100% that ran, and each column's x axis lists only the policies run at that budget; a
 * reference run (budget >= 100%, e.g. full) is named in the subtitle with its bytes.
 */
import type { TopLevelSpec } from 'vega-lite';
import { chartSpec, panelRow } from './chart-frame.js';
import { ORACLE_COLOR, ORACLE_DASH, ORACLE_LABEL } from './chart-series.js';
import { byteUnitFor, formatBytes } from './format-units.js';
import { budgetLabel, type SweepChartData } from './sweep-chart-data.js';
import { referenceLabel, withSeedNote } from './chart-budget-lines.js';

export const DIRECTION_COLORS: Record<string, string> = {
  'H2D (promote)': '#2a9d8f',
  'D2H (demote)': '#e76f51',
  'other links': '#a8a8a8',
};

export function bytesMovedSpec(data: SweepChartData): TopLevelSpec {
  const points = data.points.filter((p) => !p.isReference);
  const budgets = [...new Set(points.map((p) => p.budget))].sort((a, b) => a - b);
  const maxBytes = Math.max(1, ...points.map((p) => p.bytes_total));
  const { unit, divisor } = byteUnitFor(maxBytes);
  const scaled = (b: number) => b / divisor;
  const hasOther = points.some((p) => !p.isOracle && p.bytes_total - p.bytes_h2d - p.bytes_d2h > 1e-9 * maxBytes);
  const directions = Object.keys(DIRECTION_COLORS).filter((d) => hasOther || d !== 'other links');

  const values: object[] = [];
  for (const p of points) {
    const base = { ...(data.panels.length > 1 ? { panel: p.panel } : {}), budget: budgetLabel(p.budget) };
    if (p.isOracle) {
      values.push({ ...base, kind: 'bound', value: scaled(p.bytes_total), label: ORACLE_LABEL });
      continue;
    }
    const parts: [string, number][] = [
      ['H2D (promote)', p.bytes_h2d],
      ['D2H (demote)', p.bytes_d2h],
      ['other links', Math.max(0, p.bytes_total - p.bytes_h2d - p.bytes_d2h)],
    ];
    for (const [direction, bytes] of parts) {
      if (!directions.includes(direction)) continue;
      values.push({ ...base, kind: 'bar', policy: p.policy, direction, stack: directions.indexOf(direction), value: scaled(bytes) });
    }
  }

  const yTitle = `bytes moved (${unit})`;
  const layer: object[] = [
    {
      transform: [{ filter: "datum.kind === 'bar'" }],
      mark: { type: 'bar' },
      encoding: {
        x: { field: 'policy', type: 'nominal', sort: data.series.policies, title: null, axis: { labelAngle: -35 } },
        y: { field: 'value', type: 'quantitative', stack: 'zero', title: yTitle },
        color: {
          field: 'direction',
          type: 'nominal',
          title: 'direction',
          scale: { domain: directions, range: directions.map((d) => DIRECTION_COLORS[d]) },
        },
        order: { field: 'stack', type: 'quantitative' }, // H2D at the bottom
      },
    },
  ];
  if (data.series.hasOracle) {
    // a dash encoding (not a text mark) so that the bound gets its own legend entry: the panels
    // are too narrow for a label
    layer.push({
      transform: [{ filter: "datum.kind === 'bound'" }],
      mark: { type: 'rule', color: ORACLE_COLOR, strokeWidth: 2 },
      encoding: {
        y: { field: 'value', type: 'quantitative' },
        strokeDash: {
          field: 'label',
          type: 'nominal',
          title: null,
          scale: { domain: [ORACLE_LABEL], range: [ORACLE_DASH] },
          legend: { symbolType: 'stroke', symbolStrokeColor: ORACLE_COLOR },
        },
      },
    });
  }
  return chartSpec({
    title: 'Bytes moved per policy and HBM budget',
    subtitle: withSeedNote(data, 'all link directions over the run; lower is cheaper' + referenceNote(data)),
    values,
    layer,
    column: budgets.length > 0 ? { field: 'budget', sort: budgets.map(budgetLabel), title: 'HBM budget' } : undefined,
    row: panelRow(data.panels, data.panelDims.join(' · ') || null),
    width: { step: 26 },
    height: 200,
    rowHeader: 'left',
    // each budget's column lists only the policies that ran at it
    resolve: budgets.length > 1 ? { scale: { x: 'independent' } } : undefined,
  });
}

/** "; full · 100% HBM moves 0 B" for each distinct reference (same for every panel: named once). */
function referenceNote(data: SweepChartData): string {
  const notes = new Set<string>();
  for (const p of data.points) {
    if (p.isReference) notes.add(`${referenceLabel(p)} moves ${formatBytes(p.bytes_total)}${data.panels.length > 1 ? ` (${p.panel})` : ''}`);
  }
  if (notes.size === 0) return '';
  const same = new Set(data.points.filter((p) => p.isReference).map((p) => `${referenceLabel(p)} moves ${formatBytes(p.bytes_total)}`));
  return '; ' + (same.size === 1 ? [...same][0]! : [...notes].join(', '));
}
