/**
 * SmartKV mixed precision (one of kvtier's seed systems): every block's precision comes from an EMA of
 * the attention it receives (importance ← decay · importance + (1 − decay) · mass, decay 0.9); every
 * realloc_every tokens (16) the blocks are ranked by importance and given bits from {8, 4, 3, 2} so
 * that the layer's average stays within avg_bits: all start at 2 bits, then, most important first,
 * each takes the highest width the remaining budget pays for. Blocks are stored in buckets per bit
 * width (the cache's per-precision accounting). Nothing is evicted; blocks that do not fit the HBM
 * budget go to DRAM (lowest importance first) and are streamed one layer ahead.
 *
 * Approximations: allocation per 16-token block, not per token; 3-bit blocks are stored in 4-bit slots
 * (the cache's precisions are 16/8/4/2) while the quality measures use 3 bits (QuantScheme.bitsOf);
 * precision only goes down — a block already quantized is not re-expanded, since its FP16 values are
 * gone; new blocks stay FP16 until the next reallocation (at most realloc_every tokens, like a residual).
 * avg_bits = 0 derives the average from the HBM budget (16 × budget / final blocks, within [2, 8]).
 * allocation = uniform gives every block uniform_bits (the INT8 baseline SmartKV is compared against).
 * With several KV-head groups the importance is the groups' mean attention (Observation's layer view):
 * a block's precision serves every group, and the attention-weighted error it keeps low, summed over
 * the groups, is linear in each group's mass, so the mean ranks blocks exactly as that sum does.
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, Observation, PolicyDefinition, PolicySetup, PolicyView } from './policy.js';
import { forEachMass } from './policy.js';

export interface SmartKvOptions extends Record<string, unknown> {
  allocation: string;
  avg_bits: number;
  decay: number;
  realloc_every: number;
  uniform_bits: number;
  offload_tier: string;
}

const WIDTHS = [8, 4, 3, 2];

/** Bits per block (ranked by importance, most important first) for an average of avg bits. */
export function allocateBits(order: number[], avg: number): Map<number, number> {
  const out = new Map<number, number>();
  let extra = (avg - 2) * order.length;
  for (const b of order) {
    let bits = 2;
    for (const w of WIDTHS) {
      if (w - 2 <= extra + 1e-9) {
        bits = w;
        break;
      }
    }
    extra -= bits - 2;
    out.set(b, bits);
  }
  return out;
}

export const smartKvOptions = (allocation: 'ema' | 'uniform') => [
  { name: 'allocation', type: 'string' as const, default: allocation, choices: ['ema', 'uniform'], description: 'ema: bits from attention importance; uniform: uniform_bits everywhere' },
  { name: 'avg_bits', type: 'number' as const, default: 0, min: 0, max: 8, description: 'average bits per value over a layer (0: derived from the HBM budget)' },
  { name: 'decay', type: 'number' as const, default: 0.9, min: 0, max: 1, description: 'EMA decay of attention importance' },
  { name: 'realloc_every', type: 'integer' as const, default: 16, min: 1, description: 'tokens between reallocations' },
  { name: 'uniform_bits', type: 'integer' as const, default: 8, min: 2, max: 16, description: 'bits of every block with allocation = uniform' },
  { name: 'offload_tier', type: 'string' as const, default: 'dram', description: 'tier for blocks beyond the HBM budget' },
];

export function createSmartKv(name: string, o: SmartKvOptions, setup: PolicySetup) {
  checkLowerTier(name, 'offload_tier', o.offload_tier, setup.tiers);
  if (o.allocation === 'uniform' && ![16, 8, 4, 2].includes(o.uniform_bits)) throw new Error(`policy ${name}: option uniform_bits must be 16, 8, 4 or 2 (got ${o.uniform_bits})`);
  const L = setup.layers;
  const M = setup.maxBlocks;
  const imp = new Float64Array(L * M);
  // effective bits per block (3 where a 4-bit slot holds 3-bit values)
  const eff = new Uint8Array(L * M).fill(16);
  const avg = o.avg_bits > 0 ? o.avg_bits : Math.min(8, Math.max(2, (16 * setup.budgetBlocks) / M));
  const lastRealloc = new Int32Array(L).fill(-1e9);
  const cand = new Int32Array(M);
  return {
    name,
    quant: { bitsOf: (l: number, b: number, stored: number) => Math.min(stored, eff[l * M + b]) },
    decide(v: PolicyView, act: Actions) {
      const l = v.layer;
      const cache = v.cache;
      const base = l * M;
      const ctx = v.step < 0 ? setup.header.prompt_tokens : v.contextTokens;
      if (ctx - lastRealloc[l] >= o.realloc_every || v.step < 0) {
        lastRealloc[l] = ctx;
        const live: number[] = [];
        for (let b = 0; b < cache.created[l]; b++) if (cache.tierOf(l, b) >= 0) live.push(b);
        const bits =
          o.allocation === 'uniform'
            ? new Map(live.map((b) => [b, o.uniform_bits]))
            : allocateBits(live.slice().sort((a, b) => imp[base + b] - imp[base + a] || a - b), avg);
        for (const b of live) {
          const want = bits.get(b)!;
          if (want >= eff[base + b]) continue; // precision only goes down
          const stored = want === 3 ? 4 : want;
          const t = cache.tierOf(l, b);
          if (stored < cache.bitsOf(l, b) ? act.demote(l, b, cache.tierNames[t], stored) : true) eff[base + b] = want;
        }
      }
      // the layer's HBM budget in bytes: lowest-importance blocks go to DRAM
      const limit = Math.max(1, v.budgetBlocks) * cache.bytesOf(16);
      const incoming = v.newBlock ? cache.bytesOf(16) : 0;
      if (cache.bytesIn(l, 0) + incoming > limit) {
        let n = 0;
        for (let b = 0; b < cache.created[l]; b++) if (cache.tierOf(l, b) === 0) cand[n++] = b;
        const order = Array.from(cand.subarray(0, n)).sort((a, b) => imp[base + a] - imp[base + b] || a - b);
        for (const b of order) {
          if (cache.bytesIn(l, 0) + incoming <= limit) break;
          act.demote(l, b, o.offload_tier, cache.bitsOf(l, b));
        }
      }
      if (v.step >= 0 && setup.tiers.length > 1) act.prefetchOffloaded(l + 1 < L ? l + 1 : 0);
    },
    observe(obs: Observation) {
      const base = obs.layer * M;
      for (let b = 0; b < obs.nBlocks; b++) imp[base + b] *= o.decay;
      forEachMass(obs, (b, m) => {
        imp[base + b] += (1 - o.decay) * m;
      });
    },
  };
}

export const smartKv: PolicyDefinition<SmartKvOptions> = {
  name: 'smartkv',
  description:
    'SmartKV mixed precision: per-block bits from {8, 4, 3, 2} by an EMA of attention importance (decay 0.9), reallocated every 16 tokens within an average-bits budget; buckets per bit width; nothing evicted, overflow to DRAM streamed. Stand-in: precision is per block, not per token; 3-bit values occupy 4-bit slots; importance is the mean over KV groups.',
  source: 'SmartKV (seed system: per-token mixed precision in per-bit buckets); EMA importance as in H2O-style scoring; compared against uniform INT8 (policy uniform-int8)',
  options: smartKvOptions('ema'),
  create: (o, setup) => createSmartKv('smartkv', o, setup),
};
