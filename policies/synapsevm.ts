/**
 * SynapseVM tiering (seed system; DESIGN.md "Formulas"): three tiers of KV, every block still attended.
 * - L1 = HBM, FP16: the anchors (blocks holding the first sink_tokens tokens, pinned: the anchor
 *   guard), a window of recent blocks, and the hottest blocks by saliency, up to the budget.
 * - L2 = host DRAM, INT4 (group 128, two values per byte — the run's group_size sets the scale
 *   overhead), at most l2_factor × budget blocks per layer.
 * - L3 = NVMe, INT2: everything colder.
 * Saliency is the H2O score (cumulative attention). Progressive demotion: when L1 overflows, the
 * lowest-saliency unguarded blocks go to L2; when L2 overflows, its lowest-saliency blocks go to L3.
 * Victims are the bottom-k by quickselect (linear time), not a sort. Outlier protection: a block whose
 * key norm exceeds mean + outlier_sigma·σ of its layer's live blocks is never quantized (it moves down
 * at FP16). Predictive prefetch, one layer ahead on the memory stream: the prefetch_blocks offloaded
 * blocks of the next layer with the highest saliency are promoted back to L1 (keeping the precision
 * they were stored at) when they outrank L1's coldest unguarded block, which takes their place; the
 * rest of the offloaded blocks are staged for the next layer's attention (overlapped with compute).
 *
 * Approximations: saliency is updated from the trace's head-averaged block masses (with several KV
 * groups, their mean: a block's tier and precision serve every group); the outlier guard reads the
 * block's key norm as the largest over the groups; "predicted" means ranked by cumulative attention
 * (attention-guided), as the seed system's H2O scorer does.
 */
import { checkLowerTier } from './lower-tier.js';
import { AttentionScore } from './attention-score.js';
import type { Actions, Observation, PolicyDefinition, PolicyView } from './policy.js';
import { selectBottomK } from './quickselect.js';

interface Options extends Record<string, unknown> {
  sink_tokens: number;
  recent_ratio: number;
  l2_tier: string;
  l2_bits: number;
  l2_factor: number;
  l3_tier: string;
  l3_bits: number;
  outlier_sigma: number;
  prefetch_blocks: number;
}

/** Blocks of a layer whose key norm exceeds mean + k·σ over its live blocks (1 = outlier). */
export function outlierMask(v: PolicyView, k: number, out: Uint8Array): Uint8Array {
  const l = v.layer;
  let n = 0;
  let sum = 0;
  let sq = 0;
  for (let b = 0; b < v.cache.created[l]; b++) {
    if (v.cache.tierOf(l, b) < 0) continue;
    const x = v.keyNorms[b];
    n++;
    sum += x;
    sq += x * x;
  }
  out.fill(0);
  if (n < 2) return out;
  const mean = sum / n;
  const sd = Math.sqrt(Math.max(0, sq / n - mean * mean));
  for (let b = 0; b < v.cache.created[l]; b++) if (v.cache.tierOf(l, b) >= 0 && v.keyNorms[b] > mean + k * sd) out[b] = 1;
  return out;
}

export const synapseVm: PolicyDefinition<Options> = {
  name: 'synapsevm',
  description:
    'SynapseVM tiering: L1 HBM FP16 (pinned anchors + recent window + hottest blocks), L2 DRAM INT4 (G128), L3 NVMe INT2; progressive demotion by H2O saliency (bottom-k by quickselect); ' +
    'outliers (key norm > mean + 3 sigma) never quantized; attention-guided prefetch of warm/cold blocks back to L1 one layer ahead; every block stays attended.',
  source: 'SynapseVM (seed system, kvtier DESIGN.md): H2O scorer (Zhang et al., NeurIPS 2023) with anchor guard and outlier protection; INT4 G128 as in FlexGen/KIVI group quantization',
  options: [
    { name: 'sink_tokens', type: 'integer', default: 4, min: 0, description: 'anchor guard: the first tokens are pinned in L1, never demoted or evicted' },
    { name: 'recent_ratio', type: 'number', default: 0.5, min: 0, max: 1, description: 'share of the L1 budget for the recent window (the rest holds the hottest blocks)' },
    { name: 'l2_tier', type: 'string', default: 'dram', description: 'tier of L2' },
    { name: 'l2_bits', type: 'integer', default: 4, min: 2, max: 16, description: 'precision in L2' },
    { name: 'l2_factor', type: 'number', default: 2, min: 0, description: 'L2 holds at most this many times the L1 budget, per layer; colder blocks go to L3' },
    { name: 'l3_tier', type: 'string', default: 'nvme', description: 'tier of L3' },
    { name: 'l3_bits', type: 'integer', default: 2, min: 2, max: 16, description: 'precision in L3' },
    { name: 'outlier_sigma', type: 'number', default: 3, min: 0, description: 'blocks with key norm > mean + this many sigma are never quantized' },
    { name: 'prefetch_blocks', type: 'integer', default: 2, min: 0, description: 'offloaded blocks promoted back to L1 per layer and step when they outrank L1' },
  ],
  create(o, setup) {
    for (const [opt, t] of [['l2_tier', o.l2_tier], ['l3_tier', o.l3_tier]] as const) {
      checkLowerTier('synapsevm', opt, t, setup.tiers);
    }
    for (const [opt, b] of [['l2_bits', o.l2_bits], ['l3_bits', o.l3_bits]] as const) {
      if (![16, 8, 4, 2].includes(b)) throw new Error(`policy synapsevm: option ${opt} must be 16, 8, 4 or 2 (got ${b})`);
    }
    const M = setup.maxBlocks;
    const L = setup.layers;
    const sinkBlocks = Math.ceil(o.sink_tokens / setup.blockSize);
    const score = new AttentionScore(L, M);
    const outliers = Array.from({ length: L }, () => new Uint8Array(M));
    const cand = new Int32Array(M);
    const pinnedUpTo = new Int32Array(L);
    return {
      name: 'synapsevm',
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        const tL2 = cache.tierIndex(o.l2_tier);
        const tL3 = cache.tierIndex(o.l3_tier);
        // anchor guard: pin the sink blocks once they exist
        for (let b = pinnedUpTo[l]; b < Math.min(sinkBlocks, cache.created[l]); b++) if (cache.tierOf(l, b) >= 0) act.pin(l, b);
        pinnedUpTo[l] = Math.min(sinkBlocks, cache.created[l]);
        const outlier = outlierMask(v, o.outlier_sigma, outliers[l]);
        const K = Math.max(v.budgetBlocks, sinkBlocks + 1);
        const recent = Math.max(1, Math.round(K * o.recent_ratio));
        const windowStart = v.nBlocks - recent;
        const key = (b: number) => score.get(l, b);
        const bitsFor = (b: number, bits: number) => (outlier[b] ? 16 : bits);
        // L1 -> L2: bottom-k saliency among unguarded L1 blocks
        const want = cache.countIn(l, 0) + (v.newBlock ? 1 : 0);
        if (want > K) {
          let n = 0;
          for (let b = 0; b < Math.min(windowStart, cache.created[l]); b++) if (cache.tierOf(l, b) === 0 && !cache.isPinned(l, b)) cand[n++] = b;
          const k = selectBottomK(cand, n, want - K, key);
          for (let i = 0; i < k; i++) act.demote(l, cand[i], o.l2_tier, bitsFor(cand[i], o.l2_bits));
        }
        // L2 -> L3: bottom-k saliency in L2
        const K2 = Math.floor(o.l2_factor * K);
        const inL2 = cache.countIn(l, tL2);
        if (inL2 > K2) {
          let n = 0;
          for (let b = 0; b < cache.created[l]; b++) if (cache.tierOf(l, b) === tL2) cand[n++] = b;
          const k = selectBottomK(cand, n, inL2 - K2, key);
          for (let i = 0; i < k; i++) {
            const b = cand[i];
            act.demote(l, b, o.l3_tier, Math.min(cache.bitsOf(l, b), bitsFor(b, o.l3_bits)));
          }
        }
        // predictive prefetch for the next layer, one layer ahead
        const nl = l + 1 < L ? l + 1 : 0;
        if (v.step >= 0 && !(nl === 0 && v.step + 1 >= setup.header.steps)) {
          if (o.prefetch_blocks > 0) promoteWarm(v, act, nl, { K, recent, pendingNew: nl === l && v.newBlock ? 1 : 0, count: o.prefetch_blocks, score, tL2, tL3, l2Tier: o.l2_tier, l2Bits: o.l2_bits, outlier: outliers[nl] });
          act.prefetchOffloaded(nl);
        }
      },
      observe(obs: Observation) {
        score.observe(obs);
      },
    };
  },
};

interface WarmArgs {
  K: number;
  /** 1 when layer nl is the deciding layer and its new block is about to be written */
  pendingNew: number;
  recent: number;
  count: number;
  score: AttentionScore;
  tL2: number;
  tL3: number;
  l2Tier: string;
  l2Bits: number;
  /** outliers of layer nl as of its last decision */
  outlier: Uint8Array;
}

/** Swap up to `count` offloaded blocks of layer nl that outrank L1's coldest unguarded blocks. */
function promoteWarm(v: PolicyView, act: Actions, nl: number, x: WarmArgs): void {
  const { K, recent, pendingNew, count, score, tL2, tL3, l2Tier, l2Bits, outlier } = x;
  const cache = v.cache;
  const created = cache.created[nl];
  const warm: number[] = [];
  const cold: number[] = [];
  for (let b = 0; b < created; b++) {
    const t = cache.tierOf(nl, b);
    if (t === tL2 || t === tL3) warm.push(b);
    else if (t === 0 && b < created - recent && !cache.isPinned(nl, b)) cold.push(b);
  }
  // the few best and worst: partial selection by repeated scans (count is small)
  const take = (arr: number[], best: boolean) => {
    let at = -1;
    for (let i = 0; i < arr.length; i++) {
      if (arr[i] < 0) continue;
      if (at < 0) at = i;
      else {
        const d = score.get(nl, arr[i]) - score.get(nl, arr[at]);
        if (best ? d > 0 : d < 0) at = i;
      }
    }
    if (at < 0) return -1;
    const b = arr[at];
    arr[at] = -1;
    return b;
  };
  for (let i = 0; i < count; i++) {
    const w = take(warm, true);
    if (w < 0) break;
    const room = cache.countIn(nl, 0) + pendingNew < K;
    if (!room) {
      const c = take(cold, false);
      if (c < 0 || score.get(nl, c) >= score.get(nl, w)) break;
      const bits = outlier[c] ? cache.bitsOf(nl, c) : Math.min(cache.bitsOf(nl, c), l2Bits);
      if (!act.demote(nl, c, l2Tier, bits)) break;
    } else if (score.get(nl, w) <= 0) break;
    act.promote(nl, w);
  }
}
