/** The text summary of a validation run: the tiers' devices, the pools, per policy, and the notes. */
import { REPEATABLE_SPREAD } from './stats.js';
import type { PoolSummary, ValidateResult } from './validate.js';

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(2)}%` : '-');

export function formatPool(p: PoolSummary): string {
  const r = p.error_repeatable;
  const rep = r ? `  repeated steps: median ${pct(r.median).padStart(7)} p95 ${pct(r.p95).padStart(7)} (${r.n} of ${p.error.n})` : '';
  return `${p.name.padEnd(36)} cells ${String(p.cells).padStart(4)} (pass ${String(p.passed).padStart(4)})  |err| median ${pct(p.error.median).padStart(7)} p95 ${pct(p.error.p95).padStart(7)}  each run: median ${pct(p.error_each_run.median).padStart(7)} p95 ${pct(p.error_each_run.p95).padStart(7)}  runs differ: median ${pct(p.spread.median).padStart(7)} p95 ${pct(p.spread.p95).padStart(7)}${rep}`;
}

export function formatValidate(r: ValidateResult): string {
  const lines: string[] = [];
  lines.push(`hardware: ${r.device} (${r.backend} backend), ${r.runs} runs per cell, first ${r.skip_steps} step(s) left out`);
  for (const t of r.tiers) lines.push(`  tier ${t.tier} (${t.kind}): ${t.device}`);
  for (const p of r.profiles) lines.push(`  profile for ${p.model}: ${p.file} (${p.note})`);
  const ok = r.cells.filter((c) => c.status === 'ok');
  lines.push(`cells: ${ok.length} run, ${r.cells.filter((c) => c.status === 'skipped').length} skipped, ${r.cells.filter((c) => c.status === 'error').length} failed, ${r.cells.filter((c) => c.status === 'not-run').length} not run; ${ok.filter((c) => c.judgement?.pass).length} of ${ok.length} pass their targets`);
  lines.push('pools (per-step |sim - measured| / measured):');
  for (const p of r.pools) lines.push(`  ${formatPool(p)}`);
  lines.push('per policy:');
  for (const p of r.per_policy) lines.push(`  ${formatPool({ ...p, name: `${p.name} [${p.pool}]` })}`);
  lines.push(`targets: moving data median <= ${pct(r.targets.moving.median)}, p95 <= ${pct(r.targets.moving.p95)}; moving none <= ${pct(r.targets.non_moving.median)} / ${pct(r.targets.non_moving.p95)}; storage: mean within ${pct(r.targets.storage.mean)}, p50 and p99 within the runs' spread (p95)`);
  if (r.pools.some((p) => p.error_repeatable)) lines.push(`repeated steps: the steps whose hardware runs are within ${pct(REPEATABLE_SPREAD)} of each other (the error where the hardware agrees with itself; the cells are judged on every step)`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  lines.push(`wall ${r.wall_s.toFixed(1)} s (plan ${r.plan_s.toFixed(0)} s)`);
  return lines.join('\n');
}
