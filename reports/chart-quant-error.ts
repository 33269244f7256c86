/**
 * Chart: quantization error (mass-weighted relative error of the attended blocks, sim/quality) and
 * energy per token against the HBM budget, oracle dashed (in the sweep report's chart list).
 */
import type { TopLevelSpec } from 'vega-lite';
import type { SweepRow } from '../sim/metrics/summary.js';
import { budgetLinesSpec } from './chart-budget-lines.js';
import { sweepChartData, type ConfigPoint, type SweepChartData } from './sweep-chart-data.js';

const meanOf = (p: ConfigPoint, f: (r: SweepRow) => number | undefined) => {
  const v = p.rows.map(f).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN;
};

export function quantErrorVsBudgetSpec(data: SweepChartData): TopLevelSpec {
  return budgetLinesSpec(data, {
    title: 'Quantization error vs HBM budget',
    subtitle: 'attention-mass-weighted relative error of the attended blocks (H100-measured table, model for 3 bits: sim/quality/error-table.ts); lower is better',
    metrics: [
      { name: 'quant error, mean', value: (p) => meanOf(p, (r) => r.quant_error_mean) },
      { name: 'quant error, worst layer', value: (p) => meanOf(p, (r) => r.quant_error_max) },
    ],
    yTitle: 'relative error',
    yScale: 'linear',
  });
}

export function energyVsBudgetSpec(data: SweepChartData): TopLevelSpec {
  return budgetLinesSpec(data, {
    title: 'Energy per token vs HBM budget',
    subtitle: 'GPU busy/idle power + host tiers active/idle power + link energy per byte (sim/quality/energy-model.ts); lower is better',
    metrics: [{ name: 'energy per token', value: (p) => meanOf(p, (r) => r.energy_j_per_token) }],
    yTitle: 'joules per token',
  });
}
