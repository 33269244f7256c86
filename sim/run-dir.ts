/**
 * A run directory: config.json (the resolved configuration), steps.arrow and steps.csv (the
 * per-step table), summary.json, and trace.json (the compute and memory streams as a Chrome/Perfetto
 * trace of the first steps). Deterministic: no timestamps or wall-clock numbers inside.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { table, toArrowIPC, toCSV } from 'arquero';
import { chromeTrace } from './chrome-trace.js';
import type { StepRow } from './metrics/summary.js';
import { writeDirAtomically } from './output-dir.js';
import type { RunResult } from './run.js';

export function stepsTable(steps: StepRow[]) {
  const cols: Record<string, number[]> = {};
  const names = steps.length ? Object.keys(steps[0]) : [];
  for (const n of names) cols[n] = steps.map((s) => s[n]);
  return table(cols);
}

export function resolvedConfigJson(r: RunResult): unknown {
  const { resolved: x } = r;
  return {
    schema: 'kvtier-run-config/v1',
    trace: x.config.trace,
    trace_header: x.header,
    policy: x.config.policy,
    policy_options: x.policyOptions,
    model: x.model,
    hardware: x.hardware,
    hbm_budget: x.config.hbm_budget,
    hbm_budget_bytes: x.budgetBytes,
    hbm_budget_blocks_per_layer: x.budgetBlocks,
    full_kv_bytes: x.fullKvBytes,
    hbm_free_bytes: x.hbmFreeBytes,
    group_size: x.config.group_size ?? 128,
    trace_steps: x.config.trace_steps ?? 32,
    copy_mode: x.config.copy_mode ?? 'per-run',
  };
}

export function writeRunFiles(dir: string, r: RunResult): void {
  const t = stepsTable(r.steps);
  fs.writeFileSync(join(dir, 'config.json'), JSON.stringify(resolvedConfigJson(r), null, 2) + '\n');
  fs.writeFileSync(join(dir, 'steps.arrow'), toArrowIPC(t, { format: 'file' }) as Uint8Array);
  fs.writeFileSync(join(dir, 'steps.csv'), toCSV(t) + '\n');
  fs.writeFileSync(join(dir, 'trace.json'), chromeTrace(r.spans, { policy: r.summary.policy, trace: r.summary.trace }));
  fs.writeFileSync(join(dir, 'summary.json'), JSON.stringify(r.summary, null, 2) + '\n');
}

export function writeRunDir(out: string, r: RunResult, force = false): void {
  writeDirAtomically(out, force, (tmp) => writeRunFiles(tmp, r), [r.resolved.config.trace]);
}
