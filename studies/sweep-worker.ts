/** Runs one sweep configuration (in a piscina worker or inline) and returns its results row. */
import { join } from 'node:path';
import type { SweepRow } from '../sim/metrics/summary.js';
import { writeRunDir } from '../sim/run-dir.js';
import { simulate, type RunConfig } from '../sim/run.js';

export interface SweepTask {
  id: string;
  seed: number;
  config: RunConfig;
  /** absolute directory of the sweep; the run goes to runs/<id> inside it */
  sweepDir: string;
  budgetLabel: string | number;
}

export function runSweepTask(task: SweepTask): SweepRow {
  const runDir = `runs/${task.id}`;
  const base: SweepRow = {
    id: task.id,
    status: 'failed',
    error: '',
    trace: task.config.trace.split('/').pop() ?? task.config.trace,
    policy: task.config.policy,
    model: task.config.model ?? '',
    hardware: task.config.hardware.split('/').pop() ?? task.config.hardware,
    hbm_budget_fraction: Number.NaN,
    seed: task.seed,
    tbt_p50_ms: Number.NaN,
    tbt_p90_ms: Number.NaN,
    tbt_p99_ms: Number.NaN,
    tokens_per_s: Number.NaN,
    stall_ms: Number.NaN,
    transfer_ms: Number.NaN,
    masking_efficiency: Number.NaN,
    recall_mean: Number.NaN,
    recall_min: Number.NaN,
    bytes_total: Number.NaN,
    bytes_h2d: Number.NaN,
    bytes_d2h: Number.NaN,
    run_dir: '',
  };
  try {
    const r = simulate(task.config);
    writeRunDir(join(task.sweepDir, runDir), r, true);
    const s = r.summary;
    let h2d = 0;
    let d2h = 0;
    for (const [k, v] of Object.entries(s.bytes)) {
      if (k.endsWith('->hbm')) h2d += v;
      else if (k.includes(':hbm->')) d2h += v;
    }
    return {
      ...base,
      status: 'ok',
      model: s.model,
      hardware: s.hardware,
      hbm_budget_fraction: s.hbm_budget_fraction,
      tbt_p50_ms: s.tbt_ms.p50,
      tbt_p90_ms: s.tbt_ms.p90,
      tbt_p99_ms: s.tbt_ms.p99,
      tokens_per_s: s.tokens_per_s,
      stall_ms: s.stall_ms,
      transfer_ms: s.transfer_ms,
      masking_efficiency: s.masking_efficiency,
      recall_mean: s.attention_recall.mean,
      recall_min: s.attention_recall.min,
      bytes_total: s.bytes_total,
      bytes_h2d: h2d,
      bytes_d2h: d2h,
      quant_error_mean: s.quant_error?.mean ?? Number.NaN,
      quant_error_max: s.quant_error?.max ?? Number.NaN,
      energy_j_per_token: s.energy?.joules_per_token ?? Number.NaN,
      ...(s.needle ? { needle_unavailable_steps: s.needle.unavailable_active_steps, needle_retained: s.needle.retained ? 1 : 0 } : {}),
      run_dir: runDir,
    };
  } catch (e) {
    return { ...base, error: (e as Error).message };
  }
}

export default runSweepTask;
