/** The charts of a sweep report, in page order, each a named Vega-Lite spec. */
import type { TopLevelSpec } from 'vega-lite';
import type { StepRow, SweepRow } from '../sim/metrics/summary.js';
import { bytesMovedSpec } from './chart-bytes-moved.js';
import { energyVsBudgetSpec, quantErrorVsBudgetSpec } from './chart-quant-error.js';
import { paretoSpec } from './chart-pareto.js';
import { maskingVsBudgetSpec } from './chart-masking-vs-budget.js';
import { recallVsBudgetSpec } from './chart-recall-vs-budget.js';
import { stallTimelineSpec } from './chart-stall-timeline.js';
import { tbtVsBudgetSpec } from './chart-tbt-vs-budget.js';
import { OUTLIER_FACTOR } from './outliers.js';
import { DEFAULT_TARGET, type QualityTarget } from './recommend.js';
import { sweepChartData } from './sweep-chart-data.js';

/** Every chart name this module can produce, so a rebuild can remove charts that no longer apply. */
export const SWEEP_CHART_NAMES = [
  'pareto',
  'tbt-vs-budget',
  'recall-vs-budget',
  'bytes-moved',
  'stall-timeline',
  'masking-vs-budget',
  'quant-error-vs-budget',
  'energy-vs-budget',
] as const;

export interface NamedChart {
  /** file base name under charts/ */
  name: (typeof SWEEP_CHART_NAMES)[number];
  heading: string;
  caption: string;
  spec: TopLevelSpec;
}

/** All charts that the rows support; none when no configuration succeeded. */
export function sweepCharts(
  rows: SweepRow[],
  opts: { oracle?: string; steps?: (row: SweepRow) => StepRow[] | undefined; target?: QualityTarget } = {},
): NamedChart[] {
  const data = sweepChartData(rows, opts.oracle ?? 'oracle');
  if (data.points.length === 0) return [];
  const bound = data.series.hasOracle
    ? ' The dashed black line is the oracle (Belady MIN with future knowledge): the best any policy can do that attends at most the HBM budget\'s worth of blocks per layer. Policies that offload and still attend every block reach recall 1 and pay in time and bytes instead.'
    : '';
  const target = opts.target ?? DEFAULT_TARGET;
  const reference = data.points.some((p) => p.isReference)
    ? ' The grey dotted rule is the reference run with the whole KV in HBM.'
    : '';
  const charts: NamedChart[] = [
    {
      name: 'pareto',
      heading: 'Speed against recall',
      caption:
        `Each point is one policy at one HBM budget (column) on one trace and hardware (row). The grey staircase is the Pareto front: ` +
        `for any time per token, the best recall some policy reached. Filled points meet the quality target; hollow ones miss it ` +
        `(low recall, or quantization error above ${target.quantErrorMax}). A policy more than ${OUTLIER_FACTOR}× slower than the median ` +
        `is explained below.${reference}`,
      spec: paretoSpec(data, target),
    },
    {
      name: 'tbt-vs-budget',
      heading: 'Time between tokens',
      caption: `Median and 99th-percentile time between tokens per policy as the HBM budget grows.${bound}${reference}`,
      spec: tbtVsBudgetSpec(data),
    },
    {
      name: 'recall-vs-budget',
      heading: 'Attention recall',
      caption: `Share of the true attention mass that fell on blocks the kernel attended: mean over steps, and the worst layer of any step.${bound}${reference}`,
      spec: recallVsBudgetSpec(data),
    },
    {
      name: 'bytes-moved',
      heading: 'Bytes moved',
      caption: `Bytes moved over each link direction during the run, per policy and HBM budget.${bound}`,
      spec: bytesMovedSpec(data),
    },
  ];
  const timeline = opts.steps ? stallTimelineSpec(data, opts.steps) : undefined;
  if (timeline) {
    charts.push({
      name: 'stall-timeline',
      heading: 'Stall per decode step',
      caption: `Time the compute stream waited for memory in each decode step, at the smallest HBM budget.${bound}`,
      spec: timeline,
    });
  }
  charts.push({
    name: 'masking-vs-budget',
    heading: 'Masking efficiency',
    caption: `1 − stall / transfer time: the share of data movement hidden behind compute (1 when nothing moved).${bound}`,
    spec: maskingVsBudgetSpec(data),
  });
  const has = (f: (r: SweepRow) => number | undefined) => rows.some((r) => r.status === 'ok' && Number.isFinite(f(r)));
  if (has((r) => r.quant_error_mean)) {
    charts.push({
      name: 'quant-error-vs-budget',
      heading: 'Quantization error',
      caption: `Attention-mass-weighted relative error of the attended blocks at their precision (error table in sim/quality/error-table.ts), mean over steps and the worst layer.${bound}`,
      spec: quantErrorVsBudgetSpec(data),
    });
  }
  if (has((r) => r.energy_j_per_token)) {
    charts.push({
      name: 'energy-vs-budget',
      heading: 'Energy per token',
      caption: `GPU busy and idle power over the run, host tiers' active and idle power, and link energy per byte (sim/quality/energy-model.ts; constants with their sources in sim/quality/energy-constants.json, GPU power measured on an H100).${bound}`,
      spec: energyVsBudgetSpec(data),
    });
  }
  return charts;
}
