/**
 * `kvtier hil compare`: the same trace and policies through the simulator (with a calibrated
 * profile) and through the hardware (HIL executor); per-step predicted vs measured latency, stall
 * and bytes, and per policy the median and p95 absolute relative error of per-step latency.
 * Writes <out>/sim-<label>/ and <out>/hil-<label>/ run directories, compare.json and compare.csv;
 * the report page (reports/hil-compare-report.ts) is rendered from compare.json.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { writeRunDir } from '../../sim/run-dir.js';
import { simulate, type RunConfig } from '../../sim/run.js';
import type { RunSummary } from '../../sim/metrics/summary.js';
import { hilRun, type HilOptions, writeHilRunDir } from '../executor/hil-run.js';
import { absRelErrors, quantile } from './errors.js';
import type { PolicySpec } from './policy-list.js';

export interface CompareOptions {
  trace: string;
  policies: PolicySpec[];
  hbmBudget: string;
  hardware: string;
  model?: string;
  groupSize?: number;
  out: string;
  hil: HilOptions;
  /** steps dropped from the error statistics (warm-up); default 1 */
  skipSteps?: number;
  log?: (s: string) => void;
}

export interface CompareStep {
  step: number;
  context_tokens: number;
  sim_latency_ms: number;
  hil_latency_ms: number;
  sim_stall_ms: number;
  hil_stall_ms: number;
  sim_compute_ms: number;
  hil_compute_ms: number;
  sim_bytes: number;
  hil_bytes: number;
  latency_rel_error: number;
}

export interface ComparePolicy {
  label: string;
  policy: string;
  options: Record<string, string>;
  latency_error: { median: number; p95: number; mean: number; steps: number };
  sim: RunSummary;
  hil: RunSummary;
  warnings: string[];
  steps: CompareStep[];
}

export interface CompareResult {
  schema: 'kvtier-hil-compare/v1';
  trace: string;
  hardware: string;
  hbm_budget: string;
  device: string;
  backend: string;
  skip_steps: number;
  targets: { median: number; p95: number };
  policies: ComparePolicy[];
}

export async function compare(o: CompareOptions): Promise<CompareResult> {
  const log = o.log ?? (() => {});
  fs.mkdirSync(o.out, { recursive: true });
  const skip = o.skipSteps ?? 1;
  const result: CompareResult = { schema: 'kvtier-hil-compare/v1', trace: o.trace, hardware: o.hardware, hbm_budget: o.hbmBudget, device: '', backend: '', skip_steps: skip, targets: { median: 0.03, p95: 0.08 }, policies: [] };
  for (const p of o.policies) {
    const config: RunConfig = { trace: o.trace, policy: p.name, policy_options: p.options, model: o.model, hardware: o.hardware, hbm_budget: o.hbmBudget, group_size: o.groupSize };
    log(`${p.label}: simulating`);
    const sim = simulate(config);
    writeRunDir(join(o.out, `sim-${p.label}`), sim, true);
    log(`${p.label}: running on the ${o.hil.backend} backend`);
    const t0 = performance.now();
    const hw = await hilRun(config, o.hil);
    writeHilRunDir(join(o.out, `hil-${p.label}`), hw, true);
    result.device = hw.hil.device;
    result.backend = hw.hil.backend;
    const steps: CompareStep[] = sim.steps.map((s, i) => {
      const h = hw.result.steps[i];
      return {
        step: s.step,
        context_tokens: s.context_tokens,
        sim_latency_ms: s.latency_ms,
        hil_latency_ms: h.latency_ms,
        sim_stall_ms: s.stall_ms,
        hil_stall_ms: h.stall_ms,
        sim_compute_ms: s.compute_ms,
        hil_compute_ms: h.compute_ms,
        sim_bytes: s.bytes_moved,
        hil_bytes: h.bytes_moved,
        latency_rel_error: Math.abs(s.latency_ms - h.latency_ms) / Math.max(h.latency_ms, 1e-12),
      };
    });
    const used = steps.slice(Math.min(skip, Math.max(0, steps.length - 1)));
    const errs = absRelErrors(used.map((s) => s.sim_latency_ms), used.map((s) => s.hil_latency_ms));
    const err = { median: quantile(errs, 0.5), p95: quantile(errs, 0.95), mean: errs.reduce((a, b) => a + b, 0) / errs.length, steps: errs.length };
    log(`${p.label}: TBT p50 sim ${sim.summary.tbt_ms.p50.toFixed(3)} ms, hil ${hw.result.summary.tbt_ms.p50.toFixed(3)} ms; latency error median ${(err.median * 100).toFixed(2)}%, p95 ${(err.p95 * 100).toFixed(2)}% (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    for (const w of hw.hil.warnings) log(`${p.label}: warning: ${w}`);
    result.policies.push({ label: p.label, policy: p.name, options: p.options, latency_error: err, sim: sim.summary, hil: hw.result.summary, warnings: hw.hil.warnings, steps });
  }
  fs.writeFileSync(join(o.out, 'compare.json'), JSON.stringify(result, null, 1) + '\n');
  const cols = ['policy', 'step', 'context_tokens', 'sim_latency_ms', 'hil_latency_ms', 'sim_stall_ms', 'hil_stall_ms', 'sim_compute_ms', 'hil_compute_ms', 'sim_bytes', 'hil_bytes', 'latency_rel_error'] as const;
  const lines = [cols.join(',')];
  for (const p of result.policies) for (const s of p.steps) lines.push(cols.map((c) => (c === 'policy' ? p.label : String(s[c]))).join(','));
  fs.writeFileSync(join(o.out, 'compare.csv'), lines.join('\n') + '\n');
  return result;
}

export function formatCompare(r: CompareResult): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const rows = r.policies.map((p) => `  ${p.label.padEnd(28)} median ${pct(p.latency_error.median).padStart(8)}  p95 ${pct(p.latency_error.p95).padStart(8)}  TBT p50 sim ${p.sim.tbt_ms.p50.toFixed(3)} / hil ${p.hil.tbt_ms.p50.toFixed(3)} ms`);
  const all = r.policies.flatMap((p) => p.steps.slice(r.skip_steps).map((s) => s.latency_rel_error));
  rows.push(`  ${'all policies'.padEnd(28)} median ${pct(quantile(all, 0.5)).padStart(8)}  p95 ${pct(quantile(all, 0.95)).padStart(8)}  (targets: median <= 3%, p95 <= 8%)`);
  return rows.join('\n');
}
