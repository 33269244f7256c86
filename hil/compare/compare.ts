/**
 * `kvtier hil compare`: the same trace and policies through the simulator (with a calibrated
 * profile) and through the hardware (HIL executor); per-step predicted vs measured latency, stall
 * and bytes, and per policy the median and p95 absolute relative error of per-step latency.
 * Writes <out>/sim-<label>/ and <out>/hil-<label>/ run directories, compare.json and compare.csv;
 * the report page (reports/hil-compare-report.ts) is rendered from compare.json.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { writeRunDir } from '../../sim/run-dir.js';
import { simulate, type RunConfig } from '../../sim/run.js';
import type { RunSummary } from '../../sim/metrics/summary.js';
import { hilRun, type HilOptions, writeHilRunDir } from '../executor/hil-run.js';
import { absRelErrors, quantile } from './errors.js';
import { openBackend } from '../backend.js';
import { applyFileReadFit, fileRequestCurve, fitFileReadBatches, readBatchForm } from '../calibrate/calibrate.js';
import { quantizedBlockBytes } from '../calibrate/measure.js';
import { measureFileBatches } from '../calibrate/file-batches.js';
import { DEFAULT_IO_THREADS } from '../executor/run-plan.js';
import { blockBytes } from '../kv-format.js';
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
  /**
   * default true: before the HIL run of a policy that reads from the NVMe tier (in its simulation),
   * re-measure the file-tier reads in the executor's pattern (calibrate/file-batches.ts: the HIL's I/O
   * threads, its file directory, the trace's blocks per layer) and simulate that policy with the
   * profile's nvme read link replaced by that fit (written to <out>/profile-<label>.json); after the
   * HIL run the same measurement again, reported only (the disk's drift). false: the profile as given.
   */
  fileRemeasure?: boolean;
  /** rounds of executor-pattern read batches per re-measurement (default 4: ~0.9 GB per round at Llama-3-8B, 8k) */
  fileRemeasureRounds?: number;
  /** re-measure with each batch copied to the device after it lands, as the executor does (file-batches.ts h2dCopies; default false) */
  fileRemeasureCopies?: boolean;
  /**
   * HIL runs per policy (default 1). With more than one, the measured per-step latency, stall and
   * compute are the medians over the runs (an interference burst in one run does not decide a
   * step), the errors against each run alone are reported beside them (`per_run_error`), and so is
   * the hardware's own repeatability (`repeat_spread`: per step, (max - min) / median over the runs).
   * The first run's directory is hil-<label>, the others hil-<label>-r<k>.
   */
  repeat?: number;
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
  /** with repeat > 1: the step's latency in each HIL run (hil_latency_ms is their median) */
  hil_latency_runs_ms?: number[];
}

/** a re-measurement of the file tier's read batches (executor pattern), fitted as requests x alpha + bytes / beta */
export interface FileReadMeasure {
  at: string;
  alpha_us: number;
  GBps: number;
  rms_residual: number;
  batches: number;
  /** wall time of the reads, and their overall rate */
  ms: number;
  overall_GBps: number;
  threads: number;
  direct: boolean;
  /** each batch copied to the device after it landed, as the executor does */
  h2d_copies: boolean;
}

export interface ComparePolicy {
  label: string;
  policy: string;
  options: Record<string, string>;
  /**
   * NVMe policies with fileRemeasure: the calibrated profile's read link, the re-measurement right
   * before the HIL run (used by the simulation of this policy) and right after it (reported only), and
   * the profile file the simulation used
   */
  file_read?: { profile: { alpha_us: number; GBps: number }; before: FileReadMeasure; after?: FileReadMeasure; sim_profile: string };
  latency_error: { median: number; p95: number; mean: number; steps: number };
  /** with repeat > 1: the simulation against each HIL run alone, pooled over the runs */
  per_run_error?: { median: number; p95: number; runs: number };
  /** with repeat > 1: per step, (max - min) / median of the measured latency over the runs */
  repeat_spread?: { median: number; p95: number; runs: number };
  sim: RunSummary;
  /** the first HIL run's summary */
  hil: RunSummary;
  /** every HIL run's warnings, once each */
  warnings: string[];
  /** how this policy was simulated or measured when that differs from the rest (e.g. a re-measured NVMe read link) */
  notes?: string[];
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
  /** HIL runs per policy (measured values are per-step medians over them when > 1) */
  repeat: number;
  targets: { median: number; p95: number };
  policies: ComparePolicy[];
}

export async function compare(o: CompareOptions): Promise<CompareResult> {
  const log = o.log ?? (() => {});
  const repeat = o.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 20) throw new Error(`compare: repeat (--repeat) must be an integer from 1 to 20 (got ${repeat})`);
  fs.mkdirSync(o.out, { recursive: true });
  const skip = o.skipSteps ?? 1;
  const result: CompareResult = { schema: 'kvtier-hil-compare/v1', trace: o.trace, hardware: o.hardware, hbm_budget: o.hbmBudget, device: '', backend: '', skip_steps: skip, repeat, targets: { median: 0.03, p95: 0.08 }, policies: [] };
  for (const p of o.policies) {
    const config: RunConfig = { trace: o.trace, policy: p.name, policy_options: p.options, model: o.model, hardware: o.hardware, hbm_budget: o.hbmBudget, group_size: o.groupSize };
    log(`${p.label}: simulating`);
    let sim = simulate(config);
    // reads from the NVMe tier (bytes on a link direction out of the profile's nvme-kind tier)
    const nvmeTier = sim.resolved.hardware.tiers.find((t) => t.kind === 'nvme')?.name;
    const usesNvme = nvmeTier !== undefined && Object.entries(sim.summary.bytes).some(([k, v]) => v > 0 && k.includes(`:${nvmeTier}->`));
    let fileRead: ComparePolicy['file_read'];
    const remeasure = usesNvme && (o.fileRemeasure ?? true);
    const measure = async () => {
      const m = sim.resolved.model;
      const g = { kvHeads: m.kv_heads, blockTokens: sim.resolved.header.block_size, headDim: m.head_dim, groupSize: o.groupSize ?? 128 };
      const ctx = Math.max(...sim.steps.map((x) => x.context_tokens));
      const b = openBackend(o.hil.backend);
      try {
        const r = await measureFileBatches(b, { dir: o.hil.nvmeDir ?? tmpdir(), threads: o.hil.ioThreads ?? DEFAULT_IO_THREADS, blockBytes: blockBytes(g, 'fp16'), blocksPerLayer: Math.ceil(ctx / g.blockTokens) + 4, layers: m.layers, rounds: o.fileRemeasureRounds ?? 4, h2dCopies: o.fileRemeasureCopies ?? false, direct: o.hil.directIo ?? true, requestBytes: quantizedBlockBytes(g) });
        const fit = fitFileReadBatches(r.points);
        const requestUs = fileRequestCurve(r.points, fit, blockBytes(g, 'fp16'));
        const x: FileReadMeasure = { at: r.at, alpha_us: fit.alpha_us, GBps: fit.GBps, rms_residual: fit.rms_residual, batches: r.points.length, ms: r.ms, overall_GBps: r.GBps, threads: r.threads, direct: r.direct, h2d_copies: r.h2d_copies };
        return { x, fit, requestUs };
      } finally {
        b.close();
      }
    };
    if (remeasure) {
      log(`${p.label}: re-measuring file-tier reads (executor pattern) right before the run`);
      const { x, fit, requestUs } = await measure();
      const hwp = structuredClone(loadHardware(o.hardware));
      const nv = hwp.tiers.find((t) => t.kind === 'nvme')!;
      const link = hwp.links.find((l) => l.a === nv.name || l.b === nv.name)!;
      const rd = link.b === nv.name ? link.b_to_a : link.a_to_b;
      const before = { alpha_us: rd.alpha_us, GBps: rd.GBps };
      applyFileReadFit(hwp, fit, `re-measured by kvtier hil compare right before the HIL run of ${p.label} (${x.at})`, `file-tier reads (${x.direct ? 'O_DIRECT' : 'buffered'}, ${x.threads} I/O threads) in the HIL executor's pattern (calibrate/file-batches.ts${x.h2d_copies ? ', each batch then copied to the device' : ''}), ${(x.ms / 1000).toFixed(1)} s of reads at ${x.overall_GBps.toFixed(3)} GB/s overall`, readBatchForm(fit), requestUs);
      const simProfile = join(o.out, `profile-${p.label}.json`);
      fs.writeFileSync(simProfile, JSON.stringify(hwp, null, 2) + '\n');
      log(`${p.label}: file reads ${x.GBps.toFixed(3)} GB/s, alpha ${x.alpha_us.toFixed(2)} us per request (profile: ${before.GBps} GB/s, ${before.alpha_us} us); simulating with it`);
      sim = simulate({ ...config, hardware: simProfile });
      fileRead = { profile: before, before: x, sim_profile: simProfile };
    }
    writeRunDir(join(o.out, `sim-${p.label}`), sim, true);
    log(`${p.label}: running on the ${o.hil.backend} backend`);
    const t0 = performance.now();
    const runs: Awaited<ReturnType<typeof hilRun>>[] = [];
    for (let k = 0; k < repeat; k++) {
      if (repeat > 1) log(`${p.label}: HIL run ${k + 1} of ${repeat}`);
      const one = await hilRun(config, o.hil);
      writeHilRunDir(join(o.out, k === 0 ? `hil-${p.label}` : `hil-${p.label}-r${k + 1}`), one, true);
      runs.push(one);
    }
    const hw = runs[0];
    for (const [k, r] of runs.entries()) {
      const same = r.result.steps.length === sim.steps.length && r.result.steps.every((x, i) => x.step === sim.steps[i].step);
      if (!same) throw new Error(`compare ${p.label}: HIL run ${k + 1} has steps ${r.result.steps.map((x) => x.step).join(',')} but the simulation has ${sim.steps.map((x) => x.step).join(',')}`);
    }
    result.device = hw.hil.device;
    result.backend = hw.hil.backend;
    const notes: string[] = [];
    if (fileRead) {
      log(`${p.label}: re-measuring file-tier reads right after the run (reported only)`);
      fileRead.after = (await measure()).x;
      const f = (x: FileReadMeasure) => `${x.GBps.toFixed(3)} GB/s + ${x.alpha_us.toFixed(2)} us per request`;
      notes.push(
        `simulated with the NVMe read link re-measured right before the ${repeat > 1 ? `first of ${repeat} HIL runs` : 'HIL run'} (${f(fileRead.before)}, executor-pattern read batches, ${fileRead.before.threads} I/O threads; the calibrated profile had ${fileRead.profile.GBps} GB/s + ${fileRead.profile.alpha_us} us); ` +
          `the same measurement right after the ${repeat > 1 ? 'last run' : 'run'}: ${f(fileRead.after)} (not used)`,
      );
    }
    const med = (i: number, f: (x: { latency_ms: number; stall_ms: number; compute_ms: number }) => number) => quantile(runs.map((r) => f(r.result.steps[i])), 0.5);
    const steps: CompareStep[] = sim.steps.map((s, i) => {
      const h = hw.result.steps[i];
      const lat = med(i, (x) => x.latency_ms);
      return {
        step: s.step,
        context_tokens: s.context_tokens,
        sim_latency_ms: s.latency_ms,
        hil_latency_ms: lat,
        sim_stall_ms: s.stall_ms,
        hil_stall_ms: med(i, (x) => x.stall_ms),
        sim_compute_ms: s.compute_ms,
        hil_compute_ms: med(i, (x) => x.compute_ms),
        sim_bytes: s.bytes_moved,
        hil_bytes: h.bytes_moved,
        latency_rel_error: Math.abs(s.latency_ms - lat) / Math.max(lat, 1e-12),
        ...(repeat > 1 ? { hil_latency_runs_ms: runs.map((r) => r.result.steps[i].latency_ms) } : {}),
      };
    });
    const first = Math.min(skip, Math.max(0, steps.length - 1));
    const used = steps.slice(first);
    const errs = absRelErrors(used.map((s) => s.sim_latency_ms), used.map((s) => s.hil_latency_ms));
    const err = { median: quantile(errs, 0.5), p95: quantile(errs, 0.95), mean: errs.reduce((a, b) => a + b, 0) / errs.length, steps: errs.length };
    let repeatStats: Pick<ComparePolicy, 'per_run_error' | 'repeat_spread'> = {};
    if (repeat > 1) {
      const perRun = runs.flatMap((r) => absRelErrors(used.map((s) => s.sim_latency_ms), r.result.steps.slice(first).map((x) => x.latency_ms)));
      const spread = used.map((s) => (Math.max(...s.hil_latency_runs_ms!) - Math.min(...s.hil_latency_runs_ms!)) / Math.max(s.hil_latency_ms, 1e-12));
      repeatStats = {
        per_run_error: { median: quantile(perRun, 0.5), p95: quantile(perRun, 0.95), runs: repeat },
        repeat_spread: { median: quantile(spread, 0.5), p95: quantile(spread, 0.95), runs: repeat },
      };
      const pc = (x: number) => `${(x * 100).toFixed(2)}%`;
      notes.push(
        `measured = per-step median of ${repeat} HIL runs; against each run alone the error is median ${pc(repeatStats.per_run_error!.median)}, p95 ${pc(repeatStats.per_run_error!.p95)}; ` +
          `the runs themselves differ per step by (max - min) / median ${pc(repeatStats.repeat_spread!.median)} (median), ${pc(repeatStats.repeat_spread!.p95)} (p95)`,
      );
    }
    log(`${p.label}: TBT p50 sim ${sim.summary.tbt_ms.p50.toFixed(3)} ms, hil ${hw.result.summary.tbt_ms.p50.toFixed(3)} ms; latency error median ${(err.median * 100).toFixed(2)}%, p95 ${(err.p95 * 100).toFixed(2)}% (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const warnings = [...new Set(runs.flatMap((r) => r.hil.warnings))];
    for (const w of warnings) log(`${p.label}: warning: ${w}`);
    result.policies.push({ label: p.label, policy: p.name, options: p.options, latency_error: err, ...repeatStats, sim: sim.summary, hil: hw.result.summary, warnings, ...(notes.length ? { notes } : {}), steps, ...(fileRead ? { file_read: fileRead } : {}) });
  }
  fs.writeFileSync(join(o.out, 'compare.json'), JSON.stringify(result, null, 1) + '\n');
  const cols = ['policy', 'step', 'context_tokens', 'sim_latency_ms', 'hil_latency_ms', 'sim_stall_ms', 'hil_stall_ms', 'sim_compute_ms', 'hil_compute_ms', 'sim_bytes', 'hil_bytes', 'latency_rel_error'] as const;
  const lines = [cols.join(',')];
  for (const p of result.policies) for (const s of p.steps) lines.push(cols.map((c) => (c === 'policy' ? p.label : String(s[c]))).join(','));
  fs.writeFileSync(join(o.out, 'compare.csv'), lines.join('\n') + '\n');
  return result;
}

/**
 * Per-step latency errors pooled over every policy, the first skip_steps steps left out: against the
 * measured value (`all`) and, with repeat > 1, against each HIL run alone (`eachRun`, empty otherwise).
 */
export function pooledErrors(r: CompareResult): { all: number[]; eachRun: number[] } {
  const used = r.policies.flatMap((p) => p.steps.filter((s) => s.step >= r.skip_steps));
  return {
    all: used.map((s) => s.latency_rel_error),
    eachRun: used.flatMap((s) => (s.hil_latency_runs_ms ?? []).map((h) => Math.abs(s.sim_latency_ms - h) / Math.max(h, 1e-12))),
  };
}

export function formatCompare(r: CompareResult): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const rows = r.policies.map(
    (p) =>
      `  ${p.label.padEnd(28)} median ${pct(p.latency_error.median).padStart(8)}  p95 ${pct(p.latency_error.p95).padStart(8)}  TBT p50 sim ${p.sim.tbt_ms.p50.toFixed(3)} / hil ${p.hil.tbt_ms.p50.toFixed(3)} ms` +
      (p.per_run_error && p.repeat_spread ? `  | each run: median ${pct(p.per_run_error.median)} p95 ${pct(p.per_run_error.p95)}; runs differ: median ${pct(p.repeat_spread.median)} p95 ${pct(p.repeat_spread.p95)}` : ''),
  );
  const { all, eachRun: each } = pooledErrors(r);
  rows.push(`  ${'all policies'.padEnd(28)} median ${pct(quantile(all, 0.5)).padStart(8)}  p95 ${pct(quantile(all, 0.95)).padStart(8)}  (targets: median <= 3%, p95 <= 8%)${(r.repeat ?? 1) > 1 ? `; measured = per-step median of ${r.repeat} runs` : ''}`);
  if ((r.repeat ?? 1) > 1) {
    rows.push(`  ${'all policies, each run alone'.padEnd(28)} median ${pct(quantile(each, 0.5)).padStart(8)}  p95 ${pct(quantile(each, 0.95)).padStart(8)}`);
  }
  return rows.join('\n');
}
