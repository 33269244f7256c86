/**
 * The time plan of a validation grid on the hardware: an estimate per cell from the KV bytes the HIL
 * executor places before the first step, a fixed cost per run, and the decode steps — their
 * simulated time when the cell was simulated (the simulator's prediction of the hardware, the
 * transfers included), else a roofline of the weights and the KV in HBM. The coefficients are read
 * from HIL runs on an H100 (lab/data/hil/compare-log-h100-2026-11-22-v18.txt: Llama-3-8B at 8k, 64
 * steps, about 1 s per run) and are rough: the run records each cell's wall time, and the ETA and
 * the time limit scale the remaining estimate by the measured / estimated ratio so far.
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
  /**
   * one quick calibration per model, s: a fixed part, per GB of the layers' weights (the GEMVs and
   * the layer chains stream them) and per KiB of one layer's FP16 KV per token (the attention chains
   * up to 160k tokens read it)
   */
  calibrate_quick_s: number;
  calibrate_quick_s_per_weight_GB: number;
  calibrate_quick_s_per_kv_KiB: number;
  /** a full calibration over a quick one (its benches run 2-3x the trials and more points) */
  calibrate_full_factor: number;
}

/**
 * The quick calibration's three terms solved from the three models of the standing grid at commit
 * 60279c3 (lab/validate/run-60279c3-h100-seed41-2026-11-27: Llama-3-8B 133.8 s, Llama-2-7B 164.3 s,
 * the captured trace's 8-layer model 8.0 s); on earlier commits, without the averaged attention curve,
 * the 7-8B models took 56-118 s.
 */
export const H100_PLAN: PlanCoefficients = {
  run_s: 0.5,
  kv_s_per_GiB: 0.5,
  step_GBps: 2500,
  step_layer_us: 30,
  sim_s_per_layer_step: 0.0004,
  calibrate_quick_s: 6,
  calibrate_quick_s_per_weight_GB: 8.2,
  calibrate_quick_s_per_kv_KiB: 3.2,
  calibrate_full_factor: 2.5,
};

/** seconds for one model's calibration (quick or full) */
export function calibrationSeconds(m: ModelSpec, quick: boolean, c: PlanCoefficients = H100_PLAN): number {
  const weightsGB = (m.layers * m.weight_bytes_per_layer) / 1e9;
  const kvKiB = kvBytes(m, 1, 16) / 1024;
  const s = c.calibrate_quick_s + weightsGB * c.calibrate_quick_s_per_weight_GB + kvKiB * c.calibrate_quick_s_per_kv_KiB;
  return quick ? s : s * c.calibrate_full_factor;
}

/**
 * seconds for one cell: the simulation and `runs` HIL runs; `simulatedMs`: the simulated decode
 * steps' total (ms), used for the steps instead of the roofline when given
 */
export function cellSeconds(m: ModelSpec, contextTokens: number, steps: number, budgetFraction: number, runs: number, c: PlanCoefficients = H100_PLAN, simulatedMs?: number): number {
  const kv = m.layers * kvBytes(m, contextTokens + steps, 16);
  const weights = m.layers * m.weight_bytes_per_layer + m.other_weight_bytes;
  const stepS = (weights + kv * Math.min(1, budgetFraction)) / (c.step_GBps * 1e9) + (m.layers * c.step_layer_us) / 1e6;
  const decodeS = simulatedMs !== undefined ? simulatedMs / 1000 : steps * stepS;
  const run = c.run_s + (kv / 2 ** 30) * c.kv_s_per_GiB + decodeS;
  return steps * m.layers * c.sim_s_per_layer_step + runs * run;
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const m = Math.floor(s / 60);
  return m > 0 ? `${m} min ${Math.round(s - m * 60)} s` : `${s.toFixed(1)} s`;
}

/**
 * Measured / estimated wall time of the cells run so far, for scaling the estimates of the cells to
 * come: the median over the cells of the same policy label where there are some, else the median over
 * all cells (1 before any). A median, so that one policy whose host work the estimate misses by 20x
 * does not scale every other cell with it.
 */
export class WallRatios {
  private readonly all: number[] = [];
  private readonly byLabel = new Map<string, number[]>();

  add(label: string, wallS: number, estimateS: number): void {
    if (!(wallS > 0 && estimateS > 0)) return;
    const r = wallS / estimateS;
    this.all.push(r);
    const l = this.byLabel.get(label);
    if (l) l.push(r);
    else this.byLabel.set(label, [r]);
  }

  ratio(label: string): number {
    const own = this.byLabel.get(label);
    return median(own && own.length ? own : this.all);
  }
}

function median(xs: number[]): number {
  if (xs.length === 0) return 1;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
