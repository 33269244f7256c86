/** The report page of an attention sweep directory: its rows, with each run's per-step table for the timelines. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary, SweepRow } from '../sim/metrics/summary.js';
import type { RunBreakdown } from './outliers.js';
import { DEFAULT_TARGET, type QualityTarget } from './recommend.js';
import { readStepRows } from '../studies/sweep-results.js';
import { buildSweepReport } from './sweep-report.js';

export async function writeSweepReport(dir: string, title: string, rows: SweepRow[], generatedBy: string): Promise<string> {
  return buildSweepReport({
    outDir: dir,
    title,
    rows: rows.map((r) => ({ ...r, hbm_budget_fraction: Number.isFinite(r.hbm_budget_fraction) ? r.hbm_budget_fraction : Number.NaN })),
    steps: (row) => (row.run_dir ? readStepRows(join(dir, row.run_dir)) : undefined),
    breakdown: (row) => (row.run_dir ? readBreakdown(join(dir, row.run_dir, 'summary.json')) : undefined),
    target: readQualityTarget(join(dir, 'sweep.json')),
    generatedBy,
  });
}

/** The sweep file's `quality_target` (kept in sweep.json's "spec"), over the defaults; the defaults when there is none. */
export function readQualityTarget(sweepJson: string): QualityTarget {
  if (!existsSync(sweepJson)) return DEFAULT_TARGET;
  const meta = JSON.parse(readFileSync(sweepJson, 'utf8')) as { spec?: { quality_target?: { recall_min?: number; quant_error_max?: number } } };
  const t = meta.spec?.quality_target;
  return {
    recallMin: t?.recall_min ?? DEFAULT_TARGET.recallMin,
    quantErrorMax: t?.quant_error_max ?? DEFAULT_TARGET.quantErrorMax,
  };
}

/** The time and bytes totals of a run's summary.json; undefined when the file is missing or is not a run summary. */
export function readBreakdown(path: string): RunBreakdown | undefined {
  if (!existsSync(path)) return undefined;
  const s = JSON.parse(readFileSync(path, 'utf8')) as Partial<RunSummary>;
  if (s.schema !== 'kvtier-summary/v1' || typeof s.steps !== 'number') return undefined;
  return {
    steps: s.steps,
    compute_ms: s.compute_ms ?? Number.NaN,
    stall_ms: s.stall_ms ?? Number.NaN,
    transfer_ms: s.transfer_ms ?? Number.NaN,
    bytes: s.bytes ?? {},
  };
}
