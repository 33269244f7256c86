/** Chart (a): time between tokens, p50 and p99, against the HBM budget, per policy. */
import type { TopLevelSpec } from 'vega-lite';
import { budgetLinesSpec, withSeedNote } from './chart-budget-lines.js';
import type { SweepChartData } from './sweep-chart-data.js';

export function tbtVsBudgetSpec(data: SweepChartData): TopLevelSpec {
  return budgetLinesSpec(data, {
    title: 'Time between tokens vs HBM budget',
    subtitle: withSeedNote(data, 'lower is better'),
    metrics: [
      { name: 'TBT p50', value: (p) => p.tbt_p50_ms },
      { name: 'TBT p99', value: (p) => p.tbt_p99_ms },
    ],
    yTitle: 'time between tokens (ms)',
  });
}

