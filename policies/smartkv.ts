/**
 * SmartKV mixed precision (one of kvtier's seed systems): every block's precision comes from an EMA of
 * the attention it receives, kept per KV group (smartkv-importance.ts: importance ← decay ·
 * importance + (1 − decay) · mass, decay 0.9; a block's importance is the sum over its groups, or
 * their max); every realloc_every tokens (16) the live blocks of a layer are ranked by importance and
 * given bits from {8, 4, 3, 2} so that the layer's average stays within avg_bits (smartkv-allocate.ts:
 * all start at 2 bits, then, most important first, each takes the widest width the remaining budget
 * pays for). 3-bit blocks are real 3-bit blocks (8 codes in 3 bytes, hil/kv-format.ts). Nothing is
 * evicted; blocks that do not fit the HBM budget go to DRAM (lowest importance first) and are
 * streamed one layer ahead. The hardware-in-the-loop executor keeps this policy's HBM blocks in
 * per-bit buckets (definition.hbmLayout = 'buckets': one contiguous region per layer and width).
 *
 * What is not the design: precision is per block of the trace (block_size tokens; per token on a
 * block_size 1 trace: docs/seed-smartkv.md measured 0-39% lower attention-weighted quantization error
 * per token than per 16-token block at the same average bits on generated traces); precision only
 * goes down — a block already quantized is not re-expanded, since its FP16 values are gone; new
 * blocks stay FP16 until the next reallocation (at most realloc_every tokens, like a residual).
 * avg_bits = 0 derives the average from the HBM budget: the bits at which the final blocks, scales
 * and zeros included, fill it (within [2, 8]).
 * allocation = uniform gives every block uniform_bits (the INT8 baseline SmartKV is compared against).
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, Observation, Policy, PolicyDefinition, PolicySetup, PolicyView } from './policy.js';
import { bringBest, rankWidths, selectTop } from './smartkv-allocate.js';
import { GroupEma, type GroupImportance } from './smartkv-importance.js';

export { allocateBits } from './smartkv-allocate.js';

export interface SmartKvOptions extends Record<string, unknown> {
  allocation: string;
  avg_bits: number;
  decay: number;
  realloc_every: number;
  uniform_bits: number;
  group_importance: string;
  offload_tier: string;
}

const UNIFORM_BITS = [16, 8, 4, 3, 2];

export const smartKvOptions = (allocation: 'ema' | 'uniform') => [
  { name: 'allocation', type: 'string' as const, default: allocation, choices: ['ema', 'uniform'], description: 'ema: bits from attention importance; uniform: uniform_bits everywhere' },
  { name: 'avg_bits', type: 'number' as const, default: 0, min: 0, max: 8, description: 'average bits per value over a layer (0: derived from the HBM budget)' },
  { name: 'decay', type: 'number' as const, default: 0.9, min: 0, max: 1, description: 'EMA decay of attention importance' },
  { name: 'realloc_every', type: 'integer' as const, default: 16, min: 1, description: 'tokens between reallocations' },
  { name: 'uniform_bits', type: 'integer' as const, default: 8, min: 2, max: 16, description: 'bits of every block with allocation = uniform (16, 8, 4, 3 or 2)' },
  { name: 'group_importance', type: 'string' as const, default: 'sum', choices: ['sum', 'max'], description: "a block's importance over the KV groups: the sum of the group EMAs (sum) or the largest (max)" },
  { name: 'offload_tier', type: 'string' as const, default: 'dram', description: 'tier for blocks beyond the HBM budget' },
];

export function createSmartKv(name: string, o: SmartKvOptions, setup: PolicySetup): Policy {
  checkLowerTier(name, 'offload_tier', o.offload_tier, setup.tiers);
  if (o.allocation === 'uniform' && !UNIFORM_BITS.includes(o.uniform_bits)) throw new Error(`policy ${name}: option uniform_bits must be 16, 8, 4, 3 or 2 (got ${o.uniform_bits})`);
  return new SmartKvPolicy(name, o, setup);
}

/**
 * One smartkv (or uniform-int8) policy, a replay's. A class whose constructor assigns every field
 * (declared, not initialized as class fields) and whose options are held as numbers and strings: each
 * replay's policy then has the same hidden class with the same field types, and its methods one
 * compiled copy for every replay in a process.
 */
class SmartKvPolicy implements Policy {
  declare readonly name: string;
  declare readonly L: number;
  declare readonly M: number;
  declare readonly mode: GroupImportance;
  declare readonly ema: GroupEma;
  /** avg_bits; 0: the average whose blocks, scales and zeros included, fill the HBM budget (set at the first decision, from the cache's block sizes) */
  declare avg: number;
  declare readonly reallocEvery: number;
  declare readonly uniformBits: number;
  declare readonly offloadTier: string;
  declare readonly promptTokens: number;
  declare readonly budgetBlocks: number;
  declare readonly tierCount: number;
  declare readonly lastRealloc: Int32Array;
  /** allocation = uniform, per layer: every live block below this is at uniform_bits or narrower */
  declare readonly settled: Int32Array;
  declare readonly uniform: boolean;
  // scratch, reused by every decision
  declare readonly cand: Int32Array;
  declare readonly score: Float64Array;
  declare readonly widths: Uint8Array;
  /** selectTop's range ends (~log2 M of them expected; it records no more than fit) */
  declare readonly bounds: Int32Array;
  /** the order of the HBM overflow's sort: lower score first, ties to the lower block */
  declare readonly lowFirst: (a: number, b: number) => number;

  constructor(name: string, o: SmartKvOptions, setup: PolicySetup) {
    this.name = name;
    this.L = setup.layers;
    this.M = setup.maxBlocks;
    this.mode = o.group_importance === 'max' ? 'max' : 'sum';
    this.ema = new GroupEma(this.L, Math.max(1, setup.header.kv_groups), this.M, Number(o.decay));
    this.avg = Number(o.avg_bits);
    this.reallocEvery = Number(o.realloc_every);
    this.uniformBits = Number(o.uniform_bits);
    this.offloadTier = String(o.offload_tier);
    this.promptTokens = setup.header.prompt_tokens;
    this.budgetBlocks = setup.budgetBlocks;
    this.tierCount = setup.tiers.length;
    this.lastRealloc = new Int32Array(this.L).fill(-1e9);
    this.settled = new Int32Array(this.L);
    this.uniform = o.allocation === 'uniform';
    this.cand = new Int32Array(this.M);
    const score = new Float64Array(this.M);
    this.score = score;
    this.widths = new Uint8Array(this.M);
    this.bounds = new Int32Array(64);
    this.lowFirst = (a: number, b: number) => score[a] - score[b] || a - b;
  }

  /**
   * The average bits at which the layer's final blocks fill its HBM budget: a block of b bits takes
   * c·b + m bytes (codes, then scales and zeros), so M·(c·avg + m) = budget·bytes(16); within [2, 8].
   */
  budgetAverage(cache: PolicyView['cache']): number {
    const c = (cache.bytesOf(8) - cache.bytesOf(2)) / 6;
    const m = cache.bytesOf(2) - 2 * c;
    const a = ((this.budgetBlocks * cache.bytesOf(16)) / this.M - m) / c;
    return Math.min(8, Math.max(2, a));
  }

  reallocate(l: number, cache: PolicyView['cache'], act: Actions): void {
    if (this.uniform) {
      // every live block to uniform_bits: only blocks from the first one left wider can need it
      const settled = this.settled;
      const bits = this.uniformBits;
      let b = settled[l];
      settled[l] = cache.created[l];
      for (; b < cache.created[l]; b++) {
        if (cache.tierOf(l, b) < 0 || !(bits < cache.bitsOf(l, b))) continue;
        if (!act.demote(l, b, cache.tierNames[cache.tierOf(l, b)], bits)) settled[l] = Math.min(settled[l], b);
      }
      return;
    }
    const cand = this.cand;
    const score = this.score;
    const widths = this.widths;
    const created = cache.created[l];
    let n = 0;
    // every block live (nothing dropped): the candidates are 0, 1, ... in order
    if (cache.live(l) === created) for (; n < created; n++) cand[n] = n;
    else for (let b = 0; b < created; b++) if (cache.tierOf(l, b) >= 0) cand[n++] = b;
    this.ema.scoresInto(l, created, this.mode, score);
    if (!(this.avg > 0)) this.avg = this.budgetAverage(cache);
    const r = rankWidths(n, this.avg, widths);
    // the widest ranks as a set (they all take the same width), then the few after them in order
    let top = 0;
    while (top < r && widths[top] === widths[0]) top++;
    const bounds = this.bounds;
    const nb = selectTop(cand, n, top, score, bounds);
    for (let i = top; i < r; i++) {
      // the best of cand[i..n) lies at or before the least recorded end at or after i
      let end = n - 1;
      for (let q = 0; q < nb; q++) if (bounds[q] >= i) end = bounds[q];
      bringBest(cand, i, n, score, end);
    }
    // precision only goes down: the ranked widths, then 2 bits for every other block
    for (let i = 0; i < r; i++) {
      const b = cand[i];
      if (widths[i] < cache.bitsOf(l, b)) act.demote(l, b, cache.tierNames[cache.tierOf(l, b)], widths[i]);
    }
    for (let i = r; i < n; i++) {
      const b = cand[i];
      if (2 < cache.bitsOf(l, b)) act.demote(l, b, cache.tierNames[cache.tierOf(l, b)], 2);
    }
  }

  decide(v: PolicyView, act: Actions): void {
    const l = v.layer;
    const cache = v.cache;
    const ctx = v.step < 0 ? this.promptTokens : v.contextTokens;
    if (ctx - this.lastRealloc[l] >= this.reallocEvery || v.step < 0) {
      this.lastRealloc[l] = ctx;
      this.reallocate(l, cache, act);
    }
    // the layer's HBM budget in bytes: lowest-importance blocks go to DRAM
    const limit = Math.max(1, v.budgetBlocks) * cache.bytesOf(16);
    const incoming = v.newBlock ? cache.bytesOf(16) : 0;
    if (cache.bytesIn(l, 0) + incoming > limit) this.overflow(l, cache, act, limit, incoming);
    if (v.step >= 0 && this.tierCount > 1) act.prefetchOffloaded(l + 1 < this.L ? l + 1 : 0);
  }

  /** the layer's HBM blocks beyond its budget (with the incoming block) to the offload tier, lowest importance first */
  overflow(l: number, cache: PolicyView['cache'], act: Actions, limit: number, incoming: number): void {
    const cand = this.cand;
    const score = this.score;
    let n = 0;
    for (let b = 0; b < cache.created[l]; b++) if (cache.tierOf(l, b) === 0) cand[n++] = b;
    this.ema.scoresOf(l, cand, n, this.mode, score);
    // few blocks to move (the usual case: one new block): lowest first by scans; many: one sort
    const many = cache.bytesIn(l, 0) + incoming - limit > 8 * cache.bytesOf(16);
    if (many) cand.subarray(0, n).sort(this.lowFirst);
    for (let i = 0; i < n && cache.bytesIn(l, 0) + incoming > limit; i++) {
      if (!many) {
        let at = i;
        for (let j = i + 1; j < n; j++) if (score[cand[j]] < score[cand[at]] || (score[cand[j]] === score[cand[at]] && cand[j] < cand[at])) at = j;
        const t = cand[i];
        cand[i] = cand[at];
        cand[at] = t;
      }
      // allocation = uniform reads the importance of HBM blocks only, and an offloaded block never returns
      if (act.demote(l, cand[i], this.offloadTier, cache.bitsOf(l, cand[i])) && this.uniform) this.ema.retire(l, cand[i]);
    }
  }

  observe(obs: Observation): void {
    this.ema.observe(obs);
  }
}

export const smartKv: PolicyDefinition<SmartKvOptions> = {
  name: 'smartkv',
  description:
    'SmartKV mixed precision: bits from {8, 4, 3, 2} (real 3-bit blocks) by an EMA of attention importance kept per KV group (a block ranks by the sum over its groups, or by the max; decay 0.9), reallocated every 16 tokens within an average-bits budget; HBM blocks in per-bit buckets (one contiguous region per layer and width on the HIL executor); nothing evicted, overflow to DRAM streamed. Not the design: precision is per trace block (per token only on a block_size 1 trace, where docs/seed-smartkv.md measured 0-39% lower attention-weighted quantization error than per 16-token block at the same average bits), and it only ever goes down.',
  source: 'SmartKV (seed system: per-token mixed precision in per-bit buckets); EMA importance as in H2O-style scoring; compared against uniform INT8 (policy uniform-int8)',
  hbmLayout: 'buckets',
  options: smartKvOptions('ema'),
  create: (o, setup) => createSmartKv('smartkv', o, setup),
};
