/** What a run reports: `summary.json` (RunSummary) and one row per decode step (StepRow). */
import type { EnergySummary } from '../quality/energy-model.js';
import type { NeedleSummary } from '../quality/quality-meter.js';

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

/** One decode step of one run (the per-step table, steps.arrow). */
export interface StepRow {
  step: number;
  context_tokens: number;
  /** wall time of the step on the compute stream, start of layer 0 to end of the last layer */
  latency_ms: number;
  /** kernel time on the compute stream */
  compute_ms: number;
  /** compute stream idle, waiting for memory operations */
  stall_ms: number;
  /** busy time of the memory streams during the step */
  transfer_ms: number;
  /** share of the step's true attention mass on blocks the kernel attended (mean over layers) */
  recall: number;
  /** lowest recall of any layer in this step */
  recall_min: number;
  /** bytes moved this step, summed over all link directions */
  bytes_moved: number;
  /** `bytes.<link>:<from>-><to>` per link direction, `occ.<tier>` occupancy in bytes at step end */
  [extra: string]: number;
}

export interface RunSummary {
  schema: 'kvtier-summary/v1';
  status: 'ok';
  trace: string;
  policy: string;
  model: string;
  hardware: string;
  /** KV budget in HBM: bytes and as a fraction of the FP16 KV at the trace's final context */
  hbm_budget_bytes: number;
  hbm_budget_fraction: number;
  steps: number;
  tbt_ms: Percentiles;
  tokens_per_s: number;
  compute_ms: number;
  stall_ms: number;
  transfer_ms: number;
  /** 1 - stall / transfer time (1 when nothing was transferred) */
  masking_efficiency: number;
  attention_recall: { mean: number; min: number; p1: number };
  /** bytes per link direction, key "<link>:<from>-><to>" */
  bytes: Record<string, number>;
  bytes_total: number;
  peak_occupancy_bytes: Record<string, number>;
  actions: Record<string, number>;
  refused_actions: Record<string, number>;
  /** mass-weighted relative quantization error of the attended blocks (sim/quality): mean over steps, worst layer */
  quant_error?: { mean: number; max: number };
  /** needle traces: whether and when the needle block was unavailable or degraded */
  needle?: NeedleSummary;
  /** energy (sim/quality/energy-model.ts): GPU busy/idle power, host tiers' active and idle power, link energy per byte */
  energy?: EnergySummary;
  /** numbers a policy reports about itself (e.g. its predictor's accuracy) */
  policy_report?: Record<string, number>;
  wall_s?: number;
}

/** One configuration of a sweep, flattened for tables and charts. */
export interface SweepRow {
  id: string;
  status: 'ok' | 'failed';
  error: string;
  trace: string;
  policy: string;
  model: string;
  hardware: string;
  hbm_budget_fraction: number;
  seed: number;
  tbt_p50_ms: number;
  tbt_p90_ms: number;
  tbt_p99_ms: number;
  tokens_per_s: number;
  stall_ms: number;
  transfer_ms: number;
  masking_efficiency: number;
  recall_mean: number;
  recall_min: number;
  bytes_total: number;
  bytes_h2d: number;
  bytes_d2h: number;
  /** mean mass-weighted relative quantization error (sim/quality) */
  quant_error_mean?: number;
  quant_error_max?: number;
  /** needle traces: steps of the active window with the needle unavailable in some retrieval layer */
  needle_unavailable_steps?: number;
  /** needle traces: 1 when the needle stayed attended at full precision through the active window */
  needle_retained?: number;
  /** energy per generated token (GPU, host tiers, links), joules */
  energy_j_per_token?: number;
  /** relative path of the run directory inside the sweep directory */
  run_dir: string;
}
