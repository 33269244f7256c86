/** Chart (e): masking efficiency, 1 − stall / transfer time, against the HBM budget. */
import type { TopLevelSpec } from 'vega-lite';
import { budgetLinesSpec, withSeedNote } from './chart-budget-lines.js';
import type { SweepChartData } from './sweep-chart-data.js';

export function maskingVsBudgetSpec(data: SweepChartData): TopLevelSpec {
  return budgetLinesSpec(data, {
    title: 'Masking efficiency vs HBM budget',
    subtitle: withSeedNote(data, '1 − stall / transfer time: share of data movement hidden behind compute'),
    metrics: [{ name: 'masking efficiency', value: (p) => p.masking_efficiency }],
    yTitle: 'masking efficiency',
    yFormat: '.0%',
    yScale: 'linear',
  });
}
