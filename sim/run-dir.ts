/**
 * A run directory: config.json (the resolved configuration), steps.arrow and steps.csv (the
 * per-step table), summary.json, and trace.json (the compute and memory streams as a Chrome/Perfetto
 * trace of the first steps). Deterministic: no timestamps or wall-clock numbers inside.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
// the ES module build (see flechette-esm.d.ts): `kvtier run` loads it in a quarter of the time
import { columnFromArray, tableFromColumns, tableToIPC } from '@uwdata/flechette/dist/flechette.mjs';
import { chromeTrace } from './chrome-trace.js';
import type { StepRow } from './metrics/summary.js';
import { writeDirAtomically } from './output-dir.js';
import type { RunResult } from './run.js';

/** The per-step table as columns, in the order of a row's fields. */
export function stepsColumns(steps: StepRow[]): [string, number[]][] {
  const names = steps.length ? Object.keys(steps[0]) : [];
  return names.map((n) => [n, steps.map((s) => s[n])]);
}

/**
 * A column of numbers as a typed array of the type flechette would infer for it (int8, int16 or
 * int32 when all are integers in range, else float64), which it then takes without a second pass;
 * undefined when there are nulls or no values, left to flechette's own inference.
 */
function typedColumn(v: (number | null | undefined)[]): Int8Array | Int16Array | Int32Array | Float64Array | undefined {
  let min = Infinity;
  let max = -Infinity;
  let ints = true;
  for (const x of v) {
    if (x == null) return undefined;
    if (x < min) min = x;
    if (x > max) max = x;
    if (ints && !Number.isInteger(x)) ints = false;
  }
  if (!v.length) return undefined;
  if (!ints) return Float64Array.from(v as number[]);
  const m = Math.max(Math.abs(min) - 1, max);
  return m < 1 << 7 ? Int8Array.from(v as number[]) : m < 1 << 15 ? Int16Array.from(v as number[]) : m < 2 ** 31 ? Int32Array.from(v as number[]) : Float64Array.from(v as number[]);
}

/** The columns as an Arrow IPC file, with the column types flechette (and arquero's toArrowIPC) infer from the values. */
export function stepsArrow(cols: [string, number[]][]): Uint8Array {
  return tableToIPC(tableFromColumns(cols.map(([n, v]) => [n, columnFromArray(typedColumn(v) ?? v)])), { format: 'file' })!;
}

/** The columns as CSV: a header line, then one line per row, each line ended by a newline. */
export function stepsCsv(cols: [string, number[]][]): string {
  const rows = cols.length ? cols[0][1].length : 0;
  const lines = [cols.map(([n]) => n).join(',')];
  for (let i = 0; i < rows; i++) lines.push(cols.map(([, v]) => (v[i] == null ? '' : String(v[i]))).join(','));
  return lines.join('\n') + '\n';
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
  const cols = stepsColumns(r.steps);
  fs.writeFileSync(join(dir, 'config.json'), JSON.stringify(resolvedConfigJson(r), null, 2) + '\n');
  fs.writeFileSync(join(dir, 'steps.arrow'), stepsArrow(cols));
  fs.writeFileSync(join(dir, 'steps.csv'), stepsCsv(cols) + '\n');
  fs.writeFileSync(join(dir, 'trace.json'), chromeTrace(r.spans, { policy: r.summary.policy, trace: r.summary.trace }));
  fs.writeFileSync(join(dir, 'summary.json'), JSON.stringify(r.summary, null, 2) + '\n');
}

export function writeRunDir(out: string, r: RunResult, force = false): void {
  writeDirAtomically(out, force, (tmp) => writeRunFiles(tmp, r), [r.resolved.config.trace]);
}
