/**
 * Property: a per-layer policy (one that decides from the layer's group mean and never reads
 * Observation.groups) makes exactly the same run on a G-group trace as on the 1-group trace of its
 * group means. The traces are generated with every mass a multiple of 2^-12 (and every uniform share
 * too), so the means, the recall sums and the shares are exact in float32 and float64 alike, and
 * "the same run" can be asserted bit for bit: the same actions, the same per-step recall and timing.
 * The 1-group trace is built here, independently of the driver: the union of the listed blocks,
 * ascending, each at the mean of (listed mass, else the group's uniform share), the remainder
 * spread as the mean uniform share; key norms the largest over the groups.
 */
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { getPolicy } from '../../policies/registry.js';
import { blocksFor, type LayerAttention, type TraceHeader, type TraceStep } from '../../traces/format.js';
import { tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from '../policies/harness.js';

const UNIT = 2 ** -12;
const UNITS = 2 ** 12;

/** `total` units split over `n` slots, heavy-tailed, every unit placed. */
function split(rng: () => number, total: number, n: number): number[] {
  const w = Array.from({ length: n }, () => 1 + Math.floor(rng() ** 4 * 1000));
  const W = w.reduce((a, b) => a + b, 0);
  const out = w.map((x) => Math.floor((total * x) / W));
  out[w.indexOf(Math.max(...w))]! += total - out.reduce((a, b) => a + b, 0);
  return out;
}

function groupRow(rng: () => number, n: number, encoding: 'dense' | 'topk', topk: number, normFrom: number): LayerAttention {
  const norms = Float32Array.from({ length: n - normFrom }, () => 1 + Math.floor(rng() * 24));
  if (encoding === 'dense') return { nBlocks: n, idx: null, mass: Float32Array.from(split(rng, UNITS, n), (u) => u * UNIT), remainder: 0, normFrom, norms };
  const k = 1 + Math.floor(rng() * Math.min(topk, n));
  const pool = Array.from({ length: n }, (_, b) => b);
  // any order: the reader does not require ascending indices
  const idx = Array.from({ length: k }, () => pool.splice(Math.floor(rng() * pool.length), 1)[0]!);
  const unlisted = n - k;
  const uUnits = unlisted > 0 ? Math.floor((rng() * UNITS) / 2 / unlisted) : 0;
  const listed = split(rng, UNITS - uUnits * unlisted, k);
  return { nBlocks: n, idx: Uint32Array.from(idx), mass: Float32Array.from(listed, (u) => u * UNIT), remainder: uUnits * unlisted * UNIT, normFrom, norms };
}

/** The 1-group row of a layer's group rows: the exact group mean. */
function meanRow(rows: LayerAttention[]): LayerAttention {
  const G = rows.length;
  const n = rows[0]!.nBlocks;
  const normFrom = rows[0]!.normFrom;
  const norms = Float32Array.from(rows[0]!.norms, (_, i) => Math.max(...rows.map((r) => r.norms[i]!)));
  const dense = rows.map((r) => {
    const u = r.idx === null || r.idx.length === n ? 0 : r.remainder / (n - r.idx.length);
    const d = new Array<number>(n).fill(u);
    r.mass.forEach((m, i) => (d[r.idx === null ? i : r.idx[i]!] = m));
    return d;
  });
  const mean = (b: number) => dense.reduce((s, d) => s + d[b]!, 0) / G;
  if (rows[0]!.idx === null) return { nBlocks: n, idx: null, mass: Float32Array.from({ length: n }, (_, b) => mean(b)), remainder: 0, normFrom, norms };
  const union = [...new Set(rows.flatMap((r) => Array.from(r.idx!)))].sort((a, b) => a - b);
  const uMean = rows.reduce((s, r) => s + (r.idx!.length === n ? 0 : r.remainder / (n - r.idx!.length)), 0) / G;
  return { nBlocks: n, idx: Uint32Array.from(union), mass: Float32Array.from(union, mean), remainder: union.length < n ? uMean * (n - union.length) : 0, normFrom, norms };
}

function traces(seed: string, G: number, encoding: 'dense' | 'topk') {
  const rng = seedrandom(seed);
  const base = tinyHeader(37, 28, 2);
  const hG: TraceHeader = { ...base, kv_groups: G, encoding, ...(encoding === 'topk' ? { topk: 5 } : {}) };
  const h1: TraceHeader = { ...hG, kv_groups: 1 };
  const grouped: TraceStep[] = [];
  const averaged: TraceStep[] = [];
  for (let s = 0; s < base.steps; s++) {
    const ctx = base.prompt_tokens + s + 1;
    const n = blocksFor(ctx, base.block_size);
    const rows: LayerAttention[] = [];
    const means: LayerAttention[] = [];
    for (let l = 0; l < base.layers; l++) {
      const group = Array.from({ length: G }, () => groupRow(rng, n, encoding, 5, s === 0 ? 0 : n - 1));
      rows.push(...group);
      means.push(meanRow(group));
    }
    grouped.push({ step: s, contextTokens: ctx, layers: rows });
    averaged.push({ step: s, contextTokens: ctx, layers: means });
  }
  return { hG, grouped, h1, averaged };
}

registerBuiltinPolicies();
// (smartkv is not one: it keeps an importance per KV group, policies/smartkv-importance.ts)
const POLICIES = ['streaming-llm', 'lru-offload', 'lru', 'fifo', 'synapsevm'];

describe('KV groups: a per-layer policy sees only the group mean', () => {
  for (const seed of ['a', 'b', 'c']) {
    for (const G of [2, 4]) {
      for (const encoding of ['dense', 'topk'] as const) {
        it(`seed ${seed}, ${G} groups, ${encoding}: the same run as on the group-averaged 1-group trace (${POLICIES.join(', ')})`, () => {
          const t = traces(`${seed}-${G}-${encoding}`, G, encoding);
          // the groups really differ (else the property says nothing)
          expect(Array.from(t.grouped[3]!.layers[0]!.mass)).not.toEqual(Array.from(t.grouped[3]!.layers[1]!.mass));
          for (const name of POLICIES) {
            const a = replayPolicy(getPolicy(name), 4, { fullHeader: t.hG, trace: t.grouped });
            const b = replayPolicy(getPolicy(name), 4, { fullHeader: t.h1, trace: t.averaged });
            expect(a.log, name).toEqual(b.log);
            expect(a.results, name).toEqual(b.results);
            expect(a.driver.counters, name).toEqual(b.driver.counters);
            // quantization error: per group then averaged equals the mean's up to rounding of the products
            a.qualities.forEach((q, i) => expect(q.quant_error, name).toBeCloseTo(b.qualities[i]!.quant_error, 12));
          }
        });
      }
    }
  }
});
