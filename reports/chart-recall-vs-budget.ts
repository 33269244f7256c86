/** Chart (b): attention recall (mean over steps, and the worst layer-step) against the HBM budget. */
import type { TopLevelSpec } from 'vega-lite';
import { budgetLinesSpec, withSeedNote } from './chart-budget-lines.js';
import type { SweepChartData } from './sweep-chart-data.js';

export function recallVsBudgetSpec(data: SweepChartData): TopLevelSpec {
  return budgetLinesSpec(data, {
    title: 'Attention recall vs HBM budget',
    subtitle: withSeedNote(data, 'share of true attention mass on attended blocks; higher is better'),
    metrics: [
      { name: 'recall, mean', value: (p) => p.recall_mean },
      { name: 'recall, min', value: (p) => p.recall_min },
    ],
    yTitle: 'attention recall',
    yFormat: '.0%',
    yScale: 'linear',
  });
}
