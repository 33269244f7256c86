/** The report page of an attention sweep directory: its rows, with each run's per-step table for the timelines. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary, SweepRow } from '../sim/metrics/summary.js';
import type { RunBreakdown } from './outliers.js';
import { readStepRows } from '../studies/sweep-results.js';
import { buildSweepReport } from './sweep-report.js';

export async function writeSweepReport(dir: string, title: string, rows: SweepRow[], generatedBy: string): Promise<string> {
  return buildSweepReport({
    outDir: dir,
    title,
    rows: rows.map((r) => ({ ...r, hbm_budget_fraction: Number.isFinite(r.hbm_budget_fraction) ? r.hbm_budget_fraction : Number.NaN })),
    steps: (row) => (row.run_dir ? readStepRows(join(dir, row.run_dir)) : undefined),
    breakdown: (row) => (row.run_dir ? readBreakdown(join(dir, row.run_dir, 'summary.json')) : undefined),
    generatedBy,
  });
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
