/** Reading a sweep directory back: its results and each run's per-step table. */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fromArrow } from 'arquero';
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
