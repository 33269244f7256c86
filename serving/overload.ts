/**
 * Whether a serving run was overloaded, the numbers that show it, and what to change.
 *
 * Rule: a run is overloaded when it refused any request, or when queueing dominates TTFT: the
 * median queue wait of served requests is more than half (QUEUE_SHARE_OF_TTFT) of their median TTFT.
 *
 * Offered load = input + output tokens of every request (served or refused) / the arrival span
 * (first to last arrival, times --time-scale). Capacity = input + output tokens of served requests /
 * the seconds the GPU was busy: what the machine got through per busy second at this run's batch
 * sizes and prefix hits. load = offered / capacity; above 1 the queue grows whatever the admission
 * limits. Spreading arrivals by --time-scale × load brings the offered load down to capacity; the
 * advice names the scale for a load of TARGET_LOAD (0.8), where queues stay short.
 */
import type { RequestRecord } from './request-record.js';

export const QUEUE_SHARE_OF_TTFT = 0.5;
/** the load the suggested --time-scale aims at: queues stay short below capacity, not at it */
export const TARGET_LOAD = 0.8;
/** a GPU busy at least this share of the run is the bottleneck */
const GPU_BOUND_BUSY = 0.9;
/** the prefix cache is worth growing when it reaches less than this share of the unbounded ratio */
const CACHE_SHORT = 0.9;

export interface ServeOverload {
  overloaded: boolean;
  /** why the rule says so, one sentence each; empty when not overloaded */
  reasons: string[];
  offered_tokens_per_s: number | null;
  capacity_tokens_per_s: number | null;
  /** offered / capacity */
  load: number | null;
  /** --time-scale at which the offered load equals capacity (time_scale × load), when load > 1 */
  time_scale_for_capacity: number | null;
  /** what to change, one sentence each; empty when not overloaded */
  advice: string[];
}

export interface OverloadInput {
  records: readonly RequestRecord[];
  /** GPU-busy time of the run, ms */
  busyMs: number;
  gpuBusyFraction: number;
  timeScale: number;
  maxRunning: number;
  peakRunning: number;
  queueP50Ms: number;
  ttftP50Ms: number;
  prefixHitRatio: number;
  theoreticalHitRatio: number;
  /** tokens the HBM tier holds (running requests' KV and cached prefixes) */
  hbmTokens: number;
}

const n0 = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%`;
/** rounded up to 2 significant digits, so that the suggested scale is enough */
const ceil2 = (x: number) => {
  const p = 10 ** (Math.floor(Math.log10(x)) - 1);
  return Number((Math.ceil(x / p - 1e-9) * p).toPrecision(2));
};

export function overloadOf(o: OverloadInput): ServeOverload {
  const recs = o.records;
  let first = Infinity;
  let last = -Infinity;
  let offered = 0;
  let served = 0;
  const refusedBy = new Map<string, number>();
  for (const r of recs) {
    first = Math.min(first, r.arrival_ms);
    last = Math.max(last, r.arrival_ms);
    offered += r.input_tokens + r.output_tokens;
    if (r.status === 'served') served += r.input_tokens + r.output_tokens;
    else refusedBy.set(r.reason, (refusedBy.get(r.reason) ?? 0) + 1);
  }
  const spanS = recs.length > 1 ? ((last - first) * o.timeScale) / 1000 : 0;
  const offeredRate = spanS > 0 ? offered / spanS : null;
  const capacity = o.busyMs > 0 && served > 0 ? served / (o.busyMs / 1000) : null;
  const load = offeredRate !== null && capacity !== null ? offeredRate / capacity : null;
  const refused = [...refusedBy.values()].reduce((a, b) => a + b, 0);
  const queueShare = o.ttftP50Ms > 0 && Number.isFinite(o.queueP50Ms) ? o.queueP50Ms / o.ttftP50Ms : 0;
  const reasons: string[] = [];
  if (refused > 0) {
    reasons.push(`${n0(refused)} of ${n0(recs.length)} requests refused (${[...refusedBy.entries()].map(([k, v]) => `${k} ${n0(v)}`).join(', ')})`);
  }
  if (queueShare > QUEUE_SHARE_OF_TTFT) {
    reasons.push(`queueing is ${pct(queueShare)} of TTFT p50 (queue p50 ${n0(o.queueP50Ms)} ms of TTFT p50 ${n0(o.ttftP50Ms)} ms)`);
  }
  const timeScaleFor = load !== null && load > 1 ? ceil2(o.timeScale * load) : null;
  const advice: string[] = [];
  if (reasons.length > 0) {
    const tooBig = refusedBy.get('exceeds_hbm') ?? 0;
    if (tooBig > 0) {
      advice.push(`${n0(tooBig)} requests need more KV than HBM holds (${n0(o.hbmTokens)} tokens): a --hardware profile with more HBM or a smaller --model; no --time-scale serves them`);
    }
    if (load !== null && load > 1) {
      advice.push(
        `arrival rate: the trace offers ${load.toFixed(2)}x what this machine serves; --time-scale ${timeScaleFor} (now ${o.timeScale}) ` +
          `brings it to capacity, ${ceil2((o.timeScale * load) / TARGET_LOAD)} or more to ${TARGET_LOAD * 100}% of it (short queues); ` +
          `or keep the rate and use a faster --hardware profile (or a bigger machine)`,
      );
    } else if (load !== null) {
      advice.push(`the offered load is ${load.toFixed(2)}x capacity over the whole trace, so the waits come from bursts: a larger --time-scale (now ${o.timeScale}) or a faster --hardware profile shortens them`);
    }
    if (o.peakRunning < o.maxRunning) {
      advice.push(
        `at most ${n0(o.peakRunning)} requests ran at once (--max-running ${n0(o.maxRunning)}): admission waited for HBM room for their KV, ` +
          `so more HBM (a bigger GPU or machine profile) allows larger batches${o.gpuBusyFraction >= GPU_BOUND_BUSY ? ' and more tokens per busy second' : ''}`,
      );
    } else {
      advice.push(`--max-running ${n0(o.maxRunning)} was reached: a higher --max-running lets more requests share each iteration, if HBM holds their KV`);
    }
    if (o.theoreticalHitRatio > 0 && o.prefixHitRatio < CACHE_SHORT * o.theoreticalHitRatio) {
      advice.push(
        `prefix hits ${pct(o.prefixHitRatio)} of input tokens of ${pct(o.theoreticalHitRatio)} possible: more DRAM or lower-tier capacity for the prefix cache (--tier-tokens) means fewer tokens to prefill`,
      );
    }
  }
  return {
    overloaded: reasons.length > 0,
    reasons,
    offered_tokens_per_s: offeredRate,
    capacity_tokens_per_s: capacity,
    load,
    time_scale_for_capacity: timeScaleFor,
    advice,
  };
}

/** The lines `kvtier serve` prints for an overloaded run (none otherwise). */
export function overloadLines(v: ServeOverload): string[] {
  if (!v.overloaded) return [];
  const out = [`overloaded: ${v.reasons.join('; ')}`];
  if (v.offered_tokens_per_s !== null && v.capacity_tokens_per_s !== null && v.load !== null) {
    out.push(
      `  offered ${n0(v.offered_tokens_per_s)} tokens/s (input + output of every request over the arrival span) vs ` +
        `capacity ${n0(v.capacity_tokens_per_s)} tokens/s (served tokens per GPU-busy second): load ${v.load.toFixed(2)}`,
    );
  }
  for (const a of v.advice) out.push(`  - ${a}`);
  return out;
}
