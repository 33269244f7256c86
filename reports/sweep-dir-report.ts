/** The report page of an attention sweep directory: its rows, with each run's per-step table for the timelines. */
import { join } from 'node:path';
import type { SweepRow } from '../sim/metrics/summary.js';
import { readStepRows } from '../studies/sweep-results.js';
import { buildSweepReport } from './sweep-report.js';

export async function writeSweepReport(dir: string, title: string, rows: SweepRow[], generatedBy: string): Promise<string> {
  return buildSweepReport({
    outDir: dir,
    title,
    rows: rows.map((r) => ({ ...r, hbm_budget_fraction: Number.isFinite(r.hbm_budget_fraction) ? r.hbm_budget_fraction : Number.NaN })),
    steps: (row) => (row.run_dir ? readStepRows(join(dir, row.run_dir)) : undefined),
    generatedBy,
  });
}
