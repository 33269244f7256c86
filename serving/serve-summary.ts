/**
 * What a serving run reports: `summary.json` (ServeSummary) and a flat row for results tables
 * (ServeRow). Ratios of prefix hits are over the input tokens of served requests (refused requests
 * were never looked up). Unbounded sizes are written as null.
 */
import { summarize } from '../sim/metrics/percentiles.js';
import type { Percentiles } from '../sim/metrics/summary.js';
import { REFUSAL_REASONS, type RefusalReason } from './request-record.js';
import type { ServingOptions } from './serving-config.js';
import type { ServingRunResult } from './serving-sim.js';
import { overloadOf, type ServeOverload } from './overload.js';

export interface ServeSummary {
  schema: 'kvtier-serve-summary/v1';
  status: 'ok';
  trace: string;
  trace_format: string;
  /** malformed trace lines skipped (only with --skip-malformed) */
  trace_skipped_lines: number;
  model: string;
  hardware: string;
  cache_policy: string;
  requests: number;
  served: number;
  refused: number;
  /** refused requests, all reasons; every request is either served or refused */
  backpressure_events: number;
  backpressure: Record<RefusalReason, number>;
  /** input tokens of served requests and the prefix-matched part of them */
  input_tokens: number;
  prefix_hit_tokens: number;
  prefix_hit_ratio: number;
  /** prefix_hit_ratio with an unbounded cache and every request served (the trace's maximum) */
  theoretical_prefix_hit_ratio: number;
  /** prefix-matched tokens found in each tier / input tokens (they sum to prefix_hit_ratio) */
  tier_hit_ratio: Record<string, number>;
  ttft_ms: Percentiles;
  /** every time between two consecutive output tokens of a request, pooled */
  tbt_ms: Percentiles;
  queue_ms: Percentiles;
  e2e_ms: Percentiles;
  /** first arrival (time 0) to the last completion or refusal */
  makespan_s: number;
  throughput: { requests_per_s: number; input_tokens_per_s: number; output_tokens_per_s: number };
  gpu_busy_fraction: number;
  iterations: number;
  /** share of all requests (refused ones count as misses) meeting each target and both */
  slo: { ttft_ms: number | null; tbt_ms: number | null; ttft_attainment: number; tbt_attainment: number; attainment: number };
  tiers: { name: string; capacity_tokens: number | null; peak_tokens: number; promoted_blocks: number; demoted_blocks: number }[];
  dropped_blocks: number;
  /** bytes per link direction "<link>:<from>-><to>" */
  bytes: Record<string, number>;
  bytes_total: number;
  peak_queued: number;
  peak_running: number;
  options: Record<keyof ServingOptions, number | null>;
  /** whether the run was overloaded (refusals, or queueing over half of TTFT p50), offered load vs capacity, what to change */
  overload: ServeOverload;
}

export interface ServeContext {
  trace: string;
  traceFormat: string;
  skippedLines: number;
  model: string;
  hardware: string;
  policy: string;
  options: ServingOptions;
  theoreticalHitRatio: number;
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

export function summarizeServing(run: ServingRunResult, ctx: ServeContext): ServeSummary {
  const recs = run.records;
  const served = recs.filter((r) => r.status === 'served');
  const backpressure = Object.fromEntries(REFUSAL_REASONS.map((k) => [k, 0])) as Record<RefusalReason, number>;
  for (const r of recs) if (r.status === 'refused') backpressure[r.reason as RefusalReason]++;
  let input = 0;
  let hit = 0;
  let output = 0;
  const perTier = new Float64Array(run.tierNames.length);
  let ttftOk = 0;
  let tbtOk = 0;
  let bothOk = 0;
  for (const r of served) {
    input += r.input_tokens;
    output += r.output_tokens;
    hit += r.prefix_hit_tokens;
    r.hit_tokens.forEach((h, t) => (perTier[t] += h));
    const a = r.ttft_ms <= ctx.options.ttftSloMs;
    const b = !(r.tbt_mean_ms > ctx.options.tbtSloMs);
    if (a) ttftOk++;
    if (b) tbtOk++;
    if (r.slo_met) bothOk++;
  }
  const n = recs.length;
  const spanS = run.endMs / 1000;
  const bytesTotal = Object.values(run.linkBytes).reduce((s, x) => s + x, 0);
  const o = ctx.options;
  const ttft = summarize(served.map((r) => r.ttft_ms));
  const queue = summarize(served.map((r) => r.queue_ms));
  const prefixHitRatio = input > 0 ? hit / input : 0;
  return {
    schema: 'kvtier-serve-summary/v1',
    status: 'ok',
    trace: ctx.trace,
    trace_format: ctx.traceFormat,
    trace_skipped_lines: ctx.skippedLines,
    model: ctx.model,
    hardware: ctx.hardware,
    cache_policy: ctx.policy,
    requests: n,
    served: served.length,
    refused: n - served.length,
    backpressure_events: n - served.length,
    backpressure,
    input_tokens: input,
    prefix_hit_tokens: hit,
    prefix_hit_ratio: prefixHitRatio,
    theoretical_prefix_hit_ratio: ctx.theoreticalHitRatio,
    tier_hit_ratio: Object.fromEntries(run.tierNames.map((name, t) => [name, input > 0 ? perTier[t] / input : 0])),
    ttft_ms: ttft,
    tbt_ms: summarize(run.tbtMs),
    queue_ms: queue,
    e2e_ms: summarize(served.map((r) => r.e2e_ms)),
    makespan_s: spanS,
    throughput: {
      requests_per_s: spanS > 0 ? served.length / spanS : 0,
      input_tokens_per_s: spanS > 0 ? input / spanS : 0,
      output_tokens_per_s: spanS > 0 ? output / spanS : 0,
    },
    gpu_busy_fraction: run.endMs > 0 ? run.busyMs / run.endMs : 0,
    iterations: run.iterations,
    slo: {
      ttft_ms: finiteOrNull(o.ttftSloMs),
      tbt_ms: finiteOrNull(o.tbtSloMs),
      ttft_attainment: n > 0 ? ttftOk / n : 0,
      tbt_attainment: n > 0 ? tbtOk / n : 0,
      attainment: n > 0 ? bothOk / n : 0,
    },
    tiers: run.tierNames.map((name, t) => ({
      name,
      capacity_tokens: finiteOrNull(run.capacityTokens[t]),
      peak_tokens: run.peakTokens[t],
      promoted_blocks: run.promotedBlocks[t],
      demoted_blocks: run.demotedBlocks[t],
    })),
    dropped_blocks: run.droppedBlocks,
    bytes: run.linkBytes,
    bytes_total: bytesTotal,
    peak_queued: run.peakQueued,
    peak_running: run.peakRunning,
    options: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, finiteOrNull(v)])) as Record<keyof ServingOptions, number | null>,
    overload: overloadOf({
      records: recs,
      busyMs: run.busyMs,
      gpuBusyFraction: run.endMs > 0 ? run.busyMs / run.endMs : 0,
      timeScale: o.timeScale,
      maxRunning: o.maxRunning,
      peakRunning: run.peakRunning,
      queueP50Ms: queue.p50,
      ttftP50Ms: ttft.p50,
      prefixHitRatio,
      theoreticalHitRatio: ctx.theoreticalHitRatio,
      hbmTokens: run.capacityTokens[0],
    }),
  };
}

/** One flat row per run, for results tables and sweeps (hit ratios per tier as hit_<tier>). */
export type ServeRow = Record<string, string | number | null>;

export function serveRow(s: ServeSummary): ServeRow {
  const row: ServeRow = {
    trace: s.trace,
    cache_policy: s.cache_policy,
    model: s.model,
    hardware: s.hardware,
    capacity_tokens: s.tiers.some((t) => t.capacity_tokens === null) ? null : s.tiers.reduce((a, t) => a + (t.capacity_tokens ?? 0), 0),
    requests: s.requests,
    served: s.served,
    refused: s.refused,
    backpressure_events: s.backpressure_events,
    prefix_hit_ratio: s.prefix_hit_ratio,
    theoretical_prefix_hit_ratio: s.theoretical_prefix_hit_ratio,
  };
  for (const [tier, v] of Object.entries(s.tier_hit_ratio)) row[`hit_${tier}`] = v;
  for (const q of ['p50', 'p90', 'p99'] as const) {
    row[`ttft_${q}_ms`] = finiteOrNull(s.ttft_ms[q]);
    row[`tbt_${q}_ms`] = finiteOrNull(s.tbt_ms[q]);
  }
  row.slo_attainment = s.slo.attainment;
  row.requests_per_s = s.throughput.requests_per_s;
  row.output_tokens_per_s = s.throughput.output_tokens_per_s;
  row.bytes_total = s.bytes_total;
  return row;
}
