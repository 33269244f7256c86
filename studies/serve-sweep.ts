/**
 * Runs one configuration of a serving sweep through `runServe`, in runs/<id>/ (summary.json,
 * requests.csv), a failure recorded with its error. The page is reports/serve-sweep-report.ts.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { requestsCsv } from '../serving/requests-csv.js';
import { runServe } from '../serving/run-serve.js';
import { serveRow, type ServeRow } from '../serving/serve-summary.js';
import { expandServeSweep, type ServeSweepConfig, type ServeSweepSpec } from './serve-sweep-spec.js';

export type ServeSweepRow = ServeRow & { id: string; status: 'ok' | 'failed'; error: string; time_scale: number; capacity: number | null; run_dir: string };

export function runServeConfig(spec: ServeSweepSpec, c: ServeSweepConfig, dir: string): ServeSweepRow {
  const base = { id: c.id, status: 'failed' as const, error: '', time_scale: c.time_scale, capacity: c.capacity, run_dir: '', trace: c.requests, cache_policy: c.cache, model: c.model, hardware: c.hardware };
  try {
    const r = runServe({
      requests: c.requests,
      model: c.model,
      hardware: c.hardware,
      cache: c.cache,
      capacityTokens: c.capacity ?? undefined,
      limit: spec.limit,
      options: { ...spec.options, timeScale: c.time_scale },
    });
    const runDir = join('runs', c.id);
    fs.mkdirSync(join(dir, runDir), { recursive: true });
    fs.writeFileSync(join(dir, runDir, 'summary.json'), JSON.stringify(r.summary, null, 2) + '\n');
    fs.writeFileSync(join(dir, runDir, 'requests.csv'), requestsCsv(r.records, r.summary.tiers.map((t) => t.name)));
    return { ...serveRow(r.summary), id: c.id, status: 'ok', error: '', time_scale: c.time_scale, capacity: c.capacity, run_dir: runDir };
  } catch (e) {
    return { ...base, error: (e as Error).message };
  }
}

export function serveConfigs(spec: ServeSweepSpec): ServeSweepConfig[] {
  return expandServeSweep(spec);
}
