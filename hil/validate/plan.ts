/**
 * The time plan of a validation grid on the hardware: an estimate per cell from the model's weights,
 * the KV bytes the HIL executor places before the first step, and the decode steps, with
 * coefficients read from HIL runs on an H100 (lab/data/hil/compare-log-h100-2026-11-22-v18.txt:
 * Llama-3-8B at 8k, 64 steps, about 1 s per run). They are rough: the run records each cell's wall
 * time, and the ETA scales the remaining estimate by the measured / estimated ratio so far.
 */
import type { ModelSpec } from '../../sim/models/model.js';
import { kvBytes } from '../../sim/models/model.js';

export interface PlanCoefficients {
  /** fixed cost of one HIL run (allocations, weights, plan lowering), s */
  run_s: number;
  /** placing the initial KV bytes (host fill, pinned allocation, copies), s per GiB of full-context FP16 KV */
  kv_s_per_GiB: number;
  /** decode: bytes read per step (weights + KV in HBM) at this rate, GB/s, plus launch overheads per layer */
  step_GBps: number;
  step_layer_us: number;
  /** the simulation of one cell, s per step per layer */
  sim_s_per_layer_step: number;
  /** one calibration per model, s */
  calibrate_full_s: number;
  calibrate_quick_s: number;
}

export const H100_PLAN: PlanCoefficients = { run_s: 0.5, kv_s_per_GiB: 0.5, step_GBps: 2500, step_layer_us: 30, sim_s_per_layer_step: 0.0004, calibrate_full_s: 120, calibrate_quick_s: 25 };

/** seconds for one cell: the simulation and `runs` HIL runs */
export function cellSeconds(m: ModelSpec, contextTokens: number, steps: number, budgetFraction: number, runs: number, c: PlanCoefficients = H100_PLAN): number {
  const kv = m.layers * kvBytes(m, contextTokens + steps, 16);
  const weights = m.layers * m.weight_bytes_per_layer + m.other_weight_bytes;
  const stepS = (weights + kv * Math.min(1, budgetFraction)) / (c.step_GBps * 1e9) + (m.layers * c.step_layer_us) / 1e6;
  const run = c.run_s + (kv / 2 ** 30) * c.kv_s_per_GiB + steps * stepS;
  return steps * m.layers * c.sim_s_per_layer_step + runs * run;
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const m = Math.floor(s / 60);
  return m > 0 ? `${m} min ${Math.round(s - m * 60)} s` : `${s.toFixed(1)} s`;
}
