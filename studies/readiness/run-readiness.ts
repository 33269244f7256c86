/**
 * The readiness suite: for each seed policy, the checks its design claims (claims.ts), run in the
 * simulator on generated attention traces. One probe run per policy (request 0 of the tsunami, every
 * step's stream spans kept) feeds the stutter and precision checks; the tsunami replays every request
 * through the policy alone and admits them against one HBM (admission.ts); the needle check replays a
 * needle trace at half the KV. Same settings and seed => the same verdicts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTrace } from '../../traces/generator.js';
import { parseBudget } from '../../sim/budget.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { simulate, type RunResult } from '../../sim/run.js';
import { admitFifo, type AdmissionRequest } from './admission.js';
import { CHECKS, claimsOf, type CheckName, type PolicyClaims } from './claims.js';
import { NEEDLE_BUDGET, judgeNeedle } from './needle-check.js';
import { judgePrecision, measuredQuality } from './precision-check.js';
import { judgeStutter, strictMasking } from './stutter-check.js';
import { judgeTsunami } from './tsunami-check.js';
import type { CheckVerdict } from './verdict.js';

export interface ReadinessSettings {
  policies: string[];
  model: string;
  hardware: string;
  /** concurrent requests of the tsunami */
  requests: number;
  /** prompt tokens of every generated trace */
  context: number;
  /** decode steps of the tsunami's requests (and the probe run) */
  steps: number;
  /** decode steps of the needle trace */
  needle_steps: number;
  /** HBM budget of the tsunami and probe runs (share of the FP16 KV, or a size) */
  budget: string;
  seed: number;
}

export const DEFAULT_SETTINGS: Omit<ReadinessSettings, 'policies'> = {
  model: 'llama-3-8b',
  hardware: 'h100-pcie5',
  requests: 50,
  context: 32768,
  steps: 8,
  needle_steps: 64,
  budget: '25%',
  seed: 1,
};

export interface ReadinessResult {
  schema: 'kvtier-readiness/v1';
  settings: ReadinessSettings;
  claims: PolicyClaims[];
  verdicts: CheckVerdict[];
}

export interface Progress {
  start(total: number): void;
  tick(label: string): void;
  stop(): void;
}

/** The needle's active window for a needle trace of `steps` decode steps. */
export function needleWindow(steps: number): { from_step: number; steps: number } {
  return { from_step: Math.floor((steps * 3) / 8), steps: Math.max(2, Math.floor(steps / 4)) };
}

export function checkSettings(s: ReadinessSettings): void {
  const int = (name: string, v: number, min: number) => {
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name.replace(/_/g, '-')} must be an integer >= ${min} (got ${v})`);
  };
  int('requests', s.requests, 1);
  int('context', s.context, 16);
  int('steps', s.steps, 1);
  int('needle_steps', s.needle_steps, 8);
  int('seed', s.seed, 0);
  for (const p of s.policies) claimsOf(p);
  try {
    parseBudget(s.budget, 1);
  } catch (e) {
    throw new Error(`--budget: ${(e as Error).message.replace(/^--hbm-budget: /, '')}`);
  }
  loadModel(s.model);
  loadHardware(s.hardware);
}

export function runReadiness(s: ReadinessSettings, progress?: Progress): ReadinessResult {
  checkSettings(s);
  const model = loadModel(s.model);
  const claims = s.policies.map(claimsOf);
  const wants = (c: CheckName) => claims.some((x) => x.claims.includes(c));
  const requestSeeds = Array.from({ length: s.requests }, (_, i) => s.seed + i);
  const tsunamiPolicies = claims.filter((c) => c.claims.includes('tsunami')).length;
  const needlePolicies = claims.filter((c) => c.claims.includes('needle')).length;
  const tracesNeeded = wants('tsunami') ? s.requests : 1;
  const total = tracesNeeded + (wants('needle') ? 1 : 0) + claims.length + tsunamiPolicies * (s.requests - 1) + needlePolicies;
  progress?.start(total);
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-readiness-'));
  try {
    const tracePath = (i: number) => join(dir, `request-${i}.kvt`);
    for (let i = 0; i < tracesNeeded; i++) {
      generateTrace(tracePath(i), { model: model.name, layers: model.layers, prompt_tokens: s.context, steps: s.steps, seed: requestSeeds[i] });
      progress?.tick(`trace ${i + 1}/${tracesNeeded}`);
    }
    const needleTrace = join(dir, 'needle.kvt');
    const nw = needleWindow(s.needle_steps);
    if (wants('needle')) {
      generateTrace(needleTrace, { preset: 'needle', model: model.name, layers: model.layers, prompt_tokens: s.context, steps: s.needle_steps, seed: s.seed, needle: nw });
      progress?.tick('needle trace');
    }
    const run = (c: PolicyClaims, trace: string, budget: string, traceSteps: number): RunResult =>
      simulate({ trace, policy: c.policy, policy_options: { ...c.options }, model: s.model, hardware: s.hardware, hbm_budget: budget, trace_steps: traceSteps });
    const verdicts: CheckVerdict[] = [];
    for (const c of claims) {
      const probe = run(c, tracePath(0), s.budget, s.steps);
      progress?.tick(`${c.policy} probe`);
      const opts = Object.keys(c.options).length ? ` with ${Object.entries(c.options).map(([k, v]) => `${k}=${v}`).join(', ')}` : '';
      const runDesc = `${c.policy}${opts} on ${s.hardware}, ${s.model}, generated trace (prompt ${s.context} tokens, ${s.steps} decode steps, seed ${s.seed}), HBM budget ${s.budget}`;
      for (const check of CHECKS) {
        if (!c.claims.includes(check)) continue;
        if (check === 'stutter') {
          verdicts.push(judgeStutter(c.policy, probe.summary.masking_efficiency, strictMasking(probe.spans), `One run: ${runDesc}; every step's compute and copy spans.`));
        } else if (check === 'precision') {
          verdicts.push(
            judgePrecision(c.policy, c.quantFormats, measuredQuality, probe.summary.quant_error?.mean ?? null, `The quantized formats the design stores, read from the measured error table; beside them the simulated mass-weighted quantization error of one run: ${runDesc}.`),
          );
        } else if (check === 'tsunami') {
          verdicts.push(tsunami(c, s, probe, (i) => {
            const r = run(c, tracePath(i), s.budget, 0);
            progress?.tick(`${c.policy} request ${i + 1}/${s.requests}`);
            return r;
          }));
        } else if (check === 'needle') {
          const r = run(c, needleTrace, NEEDLE_BUDGET, 0);
          progress?.tick(`${c.policy} needle`);
          verdicts.push(
            judgeNeedle(c.policy, { fromStep: nw.from_step, steps: nw.steps }, r.steps, `One run: ${c.policy}${opts} on ${s.hardware}, ${s.model}, needle trace (prompt ${s.context} tokens, ${s.needle_steps} decode steps, seed ${s.seed}, needle at half depth, ignored until step ${nw.from_step}, hot in the upper half of the layers for ${nw.steps} steps), HBM budget ${NEEDLE_BUDGET} of the KV.`),
          );
        }
      }
    }
    return { schema: 'kvtier-readiness/v1', settings: s, claims, verdicts };
  } finally {
    progress?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function tsunami(c: PolicyClaims, s: ReadinessSettings, probe: RunResult, runRequest: (i: number) => RunResult): CheckVerdict {
  const hbmTier = probe.resolved.hardware.tiers[0].name;
  const pool = probe.resolved.hbmFreeBytes;
  const reqs: AdmissionRequest[] = [];
  const reserve: number[] = [];
  for (let i = 0; i < s.requests; i++) {
    const r = i === 0 ? probe : runRequest(i);
    const bytes = Math.max(r.summary.peak_occupancy_bytes[hbmTier] ?? 0, r.summary.hbm_budget_bytes);
    reserve.push(bytes);
    reqs.push({ id: i, arrivalMs: 0, reserveBytes: bytes, serviceMs: r.steps.reduce((t, x) => t + x.latency_ms, 0) });
  }
  const result = admitFifo(reqs, pool);
  const method =
    `${s.requests} requests arrive at once, each a generated trace (prompt ${s.context} tokens, ${s.steps} decode steps, seeds ${s.seed}..${s.seed + s.requests - 1}) ` +
    `replayed through ${c.policy} alone at HBM budget ${s.budget} on ${s.hardware}. Each request holds HBM = max(its run's peak HBM occupancy, its KV budget) ` +
    `from admission to completion (its decode time in the run). Admission against one HBM pool (the profile's HBM less the resident weights and reserve, as a run sizes it) is ` +
    `strictly FIFO with backpressure, as the serving simulator admits: a request that does not fit waits; one that cannot fit alone is refused. ` +
    `Built at the attention level: the serving simulator (serving/) runs prefix caches, not attention policies; requests do not share compute here (each keeps its single-request decode time).`;
  const v = judgeTsunami(c.policy, s.requests, pool, result, method);
  v.details = {
    ...v.details,
    reserve_bytes_min: Math.min(...reserve),
    reserve_bytes_max: Math.max(...reserve),
    waits_ms: result.outcomes.map((o) => o.waitMs),
  };
  return v;
}
