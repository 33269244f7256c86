/** Reading a sweep directory back (results + per-step tables) and writing its report page. */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fromArrow } from 'arquero';
import { buildSweepReport } from '../reports/sweep-report.js';
import type { StepRow, SweepRow } from '../sim/metrics/summary.js';

export function readSweepRows(dir: string): SweepRow[] {
  const file = join(dir, 'results.json');
  if (!fs.existsSync(file)) throw new Error(`${dir}: no results.json (is this a sweep directory written by "kvtier sweep"?)`);
  const rows = JSON.parse(fs.readFileSync(file, 'utf8')) as SweepRow[];
  if (!Array.isArray(rows)) throw new Error(`${file}: expected a list of result rows`);
  return rows;
}

export function readStepRows(runDir: string): StepRow[] | undefined {
  const file = join(runDir, 'steps.arrow');
  if (!fs.existsSync(file)) return undefined;
  return fromArrow(fs.readFileSync(file)).objects() as StepRow[];
}

export async function writeSweepReport(dir: string, title: string, rows: SweepRow[], generatedBy: string): Promise<string> {
  return buildSweepReport({
    outDir: dir,
    title,
    rows: rows.map((r) => ({ ...r, hbm_budget_fraction: Number.isFinite(r.hbm_budget_fraction) ? r.hbm_budget_fraction : Number.NaN })),
    steps: (row) => (row.run_dir ? readStepRows(join(dir, row.run_dir)) : undefined),
    generatedBy,
  });
}
