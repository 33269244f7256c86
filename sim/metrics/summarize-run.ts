/** Per-run metrics from the per-step table: TBT percentiles, throughput, stall, masking, recall, bytes. */
import type { QualitySummary } from '../quality/quality-meter.js';
import type { DriverCounters } from '../replay-driver.js';
import { percentile, summarize } from './percentiles.js';
import type { RunSummary, StepRow } from './summary.js';

export interface SummaryInput {
  trace: string;
  policy: string;
  model: string;
  hardware: string;
  budgetBytes: number;
  fullKvBytes: number;
  steps: StepRow[];
  linkBytes: Record<string, number>;
  peak: Record<string, number>;
  counters: DriverCounters;
  /** quantization error and needle retention (sim/quality) */
  quality?: QualitySummary;
}

export function summarizeRun(x: SummaryInput): RunSummary {
  const lat = x.steps.map((s) => s.latency_ms);
  const sum = (f: (s: StepRow) => number) => x.steps.reduce((a, s) => a + f(s), 0);
  const totalMs = sum((s) => s.latency_ms);
  const stall = sum((s) => s.stall_ms);
  const transfer = sum((s) => s.transfer_ms);
  const recalls = Float64Array.from(x.steps.map((s) => s.recall)).sort();
  const bytesTotal = Object.values(x.linkBytes).reduce((a, b) => a + b, 0);
  return {
    schema: 'kvtier-summary/v1',
    status: 'ok',
    trace: x.trace,
    policy: x.policy,
    model: x.model,
    hardware: x.hardware,
    hbm_budget_bytes: x.budgetBytes,
    hbm_budget_fraction: x.budgetBytes / x.fullKvBytes,
    steps: x.steps.length,
    tbt_ms: summarize(lat),
    tokens_per_s: totalMs > 0 ? (x.steps.length * 1000) / totalMs : Number.NaN,
    compute_ms: sum((s) => s.compute_ms),
    stall_ms: stall,
    transfer_ms: transfer,
    masking_efficiency: transfer > 0 ? 1 - stall / transfer : 1,
    attention_recall: {
      mean: recalls.reduce((a, b) => a + b, 0) / Math.max(1, recalls.length),
      min: x.steps.reduce((m, s) => Math.min(m, s.recall_min), Infinity),
      p1: percentile(recalls, 1),
    },
    bytes: x.linkBytes,
    bytes_total: bytesTotal,
    peak_occupancy_bytes: x.peak,
    actions: x.counters.actions,
    refused_actions: x.counters.refused,
    ...(x.quality ? { quant_error: x.quality.quant_error } : {}),
    ...(x.quality?.needle ? { needle: x.quality.needle } : {}),
  };
}
