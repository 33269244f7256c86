/**
 * The prefix-cache study: prefix hit ratio against cache capacity (10^4..10^8 tokens)
 * on request traces, for every cache policy and the Belady oracle, checked against the Mooncake
 * paper (FAST'25): Table 2's prefix cache ratios with unlimited cache, and Figure 9's statement that
 * a 3M-token cache reaches under half of the theoretical maximum while ~50M tokens nearly reaches it.
 *
 * Hit ratio: a request's matched prefix is the leading run of its blocks already cached, block
 * tokens each, capped at its input length; then all its blocks are inserted. Ratio = matched
 * tokens / input tokens over the trace. The replay is the cache alone (no timing). The page is
 * reports/serving-hit-curve.ts.
 */
import type { RequestTrace } from '../traces/requests/request.js';
import type { CachePolicyDefinition } from './cache-policy.js';
import { replayBelady } from './belady-replay.js';
import { matchedTokens } from './prefix-hits.js';
import { replayPrefixCache, unboundedMatchedBlocks } from './prefix-replay.js';

/** 10^4 .. 10^8 tokens, 1-2-3-5 per decade (3M and 50M are the paper's reference points). */
export const HIT_CURVE_CAPACITIES: readonly number[] = [
  1e4, 2e4, 3e4, 5e4, 1e5, 2e5, 3e5, 5e5, 1e6, 2e6, 3e6, 5e6, 1e7, 2e7, 3e7, 5e7, 1e8,
];

/** Mooncake (FAST'25) Table 2, prefix cache ratio with unlimited cache, and Figure 9's points. */
export const MOONCAKE_PAPER = {
  source: 'Mooncake: A KVCache-centric Disaggregated Architecture for LLM Serving (FAST\'25), Table 2 and Figure 9',
  unlimited_ratio: { conversation: 0.4, synthetic: 0.66 } as Record<string, number>,
  small_cache_tokens: 3e6,
  large_cache_tokens: 5e7,
};

export const ORACLE_POLICY = 'belady';

export interface CurveTraceInput {
  /** short name shown in the report ("conversation") */
  name: string;
  trace: RequestTrace;
}

export interface CurvePoint {
  trace: string;
  policy: string;
  capacity_tokens: number;
  prefix_hit_ratio: number;
  /** prefix_hit_ratio / the trace's theoretical ratio */
  of_theoretical: number;
}

export interface CurveTraceInfo {
  name: string;
  file: string;
  requests: number;
  input_tokens: number;
  block_tokens: number;
  theoretical_ratio: number;
  /** the same with other definitions: matched blocks / blocks, and without capping the last block */
  block_ratio: number;
  uncapped_ratio: number;
  /** unbounded-cache ratio per equal slice of the trace's duration (cold start to warm) */
  windows: { from_s: number; to_s: number; requests: number; input_tokens: number; hit_tokens: number; ratio: number }[];
}

export interface HitCurveStudy {
  capacities: number[];
  policies: string[];
  traces: CurveTraceInfo[];
  points: CurvePoint[];
  /** per trace: the online policy with the highest mean ratio over the capacities */
  best: Record<string, string>;
}

export function computeHitCurve(
  inputs: readonly CurveTraceInput[],
  policies: readonly CachePolicyDefinition[],
  capacities: readonly number[] = HIT_CURVE_CAPACITIES,
  opts: { oracle?: boolean; windows?: number; onProgress?: (done: number, total: number, label: string) => void } = {},
): HitCurveStudy {
  const withOracle = opts.oracle ?? true;
  const replays = inputs.length * (policies.length + (withOracle ? 1 : 0)) * capacities.length;
  let replayed = 0;
  const progress = (label: string) => opts.onProgress?.(++replayed, replays, label);
  const points: CurvePoint[] = [];
  const traces: CurveTraceInfo[] = [];
  const best: Record<string, string> = {};
  for (const { name, trace } of inputs) {
    const bt = trace.block_tokens;
    const info = traceInfo(name, trace, opts.windows ?? 6);
    traces.push(info);
    const theo = info.theoretical_ratio;
    const mean = new Map<string, number>();
    for (const p of policies) {
      let sum = 0;
      for (const cap of capacities) {
        const r = replayPrefixCache(trace.requests, [{ name: 'cache', capacityTokens: cap }], p, bt).prefix_hit_ratio;
        points.push({ trace: name, policy: p.name, capacity_tokens: cap, prefix_hit_ratio: r, of_theoretical: theo > 0 ? r / theo : 0 });
        sum += r;
        progress(`${name} ${p.name}`);
      }
      mean.set(p.name, sum / capacities.length);
    }
    best[name] = [...mean.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
    if (withOracle) {
      for (const cap of capacities) {
        const r = replayBelady(trace.requests, cap, bt).prefix_hit_ratio;
        points.push({ trace: name, policy: ORACLE_POLICY, capacity_tokens: cap, prefix_hit_ratio: r, of_theoretical: theo > 0 ? r / theo : 0 });
        progress(`${name} ${ORACLE_POLICY}`);
      }
    }
  }
  const names = policies.map((p) => p.name);
  return { capacities: [...capacities], policies: withOracle ? [...names, ORACLE_POLICY] : names, traces, points, best };
}

function traceInfo(name: string, trace: RequestTrace, windows: number): CurveTraceInfo {
  const reqs = trace.requests;
  const bt = trace.block_tokens;
  const k = unboundedMatchedBlocks(reqs);
  const end = reqs[reqs.length - 1].arrival_ms;
  const w = Array.from({ length: windows }, (_, i) => ({ from_s: (end * i) / windows / 1000, to_s: (end * (i + 1)) / windows / 1000, requests: 0, hit: 0, input: 0 }));
  let hit = 0;
  let input = 0;
  let blocks = 0;
  let hitBlocks = 0;
  let uncapped = 0;
  reqs.forEach((r, j) => {
    const i = end > 0 ? Math.min(windows - 1, Math.floor((r.arrival_ms / end) * windows)) : 0;
    const h = matchedTokens(k[j], r.input_tokens, bt);
    w[i].requests++;
    w[i].hit += h;
    w[i].input += r.input_tokens;
    hit += h;
    input += r.input_tokens;
    hitBlocks += k[j];
    blocks += r.hash_ids.length;
    uncapped += k[j] * bt;
  });
  return {
    name,
    file: trace.file,
    requests: reqs.length,
    input_tokens: input,
    block_tokens: trace.block_tokens,
    theoretical_ratio: input > 0 ? hit / input : 0,
    block_ratio: blocks > 0 ? hitBlocks / blocks : 0,
    uncapped_ratio: input > 0 ? uncapped / input : 0,
    windows: w.map((x) => ({ from_s: x.from_s, to_s: x.to_s, requests: x.requests, input_tokens: x.input, hit_tokens: x.hit, ratio: x.input > 0 ? x.hit / x.input : 0 })),
  };
}

/** Unbounded-cache ratio of the trace without its first window (the cache already warm). */
export function warmRatio(t: CurveTraceInfo): number {
  const warm = t.windows.slice(1);
  const input = warm.reduce((s, w) => s + w.input_tokens, 0);
  return input > 0 ? warm.reduce((s, w) => s + w.hit_tokens, 0) / input : 0;
}
