/**
 * InfiniGen-style speculative prefetch (Lee et al., "InfiniGen: Efficient Generative Inference of
 * Large Language Models with Dynamic KV Cache Management", OSDI 2024): the KV cache lives in host
 * memory; before layer i runs, InfiniGen speculates layer i's important tokens (from layer i−1's
 * input × partial query weights × partial keys) and prefetches only those — tokens whose speculated
 * score is within α = 4 of the maximum (in logits, i.e. attention ≥ e^−α × the max) — so the
 * transfer overlaps layer i−1's compute; attention runs on them only.
 *
 * Here: HBM keeps the anchors and the most recent blocks (resident_ratio of the budget); older blocks
 * are offloaded to DRAM at FP16. One layer ahead, the next layer's offloaded blocks with predicted
 * mass ≥ e^−α × the row's predicted max are staged (at most budget − resident blocks, highest first);
 * at that layer the offloaded blocks not staged are skipped. Approximation: the trace has no hidden
 * states or partial weights, so the speculated score of a block is the attention it received the last
 * time it was attended in that layer (the previous step for attended blocks; skipped blocks keep their
 * last value) — a same-layer, previous-step predictor standing in for the cross-layer one, issued at
 * the same point (one layer ahead) so that its prefetch overlaps compute as InfiniGen's does.
 *
 * Per head, as InfiniGen speculates (each head's partial scores, its own threshold from its own
 * maximum), at the granularity of KV-head groups: a block is predicted important when any group's
 * last mass on it is within alpha of that group's maximum; above the prefetch area, the union of the
 * groups' top blocks taken rank by rank (group-rank.ts) is kept.
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, GroupAttention, Observation, PolicyDefinition, PolicyView } from './policy.js';
import { bestGroupRank } from './group-rank.js';
import { lastObserved } from './quest.js';
import { selectBottomK } from './quickselect.js';

interface Options extends Record<string, unknown> {
  alpha: number;
  resident_ratio: number;
  sink_tokens: number;
  offload_tier: string;
}

export const infiniGen: PolicyDefinition<Options> = {
  name: 'infinigen',
  description:
    'InfiniGen-style speculative prefetch: KV offloaded to DRAM except anchors + recent blocks; one layer ahead, the next layer\'s blocks predicted important in any KV-head group (mass >= e^-alpha x that group\'s max, alpha = 4; predictor: last observed attention of that layer) are prefetched; the rest are skipped.',
  source: 'Lee et al., InfiniGen: Efficient Generative Inference of LLMs with Dynamic KV Cache Management, OSDI 2024 (alpha = 4)',
  options: [
    { name: 'alpha', type: 'number', default: 4, min: 0, description: 'select blocks within alpha of the max speculated logit (mass >= e^-alpha x max)' },
    { name: 'resident_ratio', type: 'number', default: 0.5, min: 0, max: 1, description: 'share of the HBM budget for anchors + recent blocks; the rest is the prefetch area' },
    { name: 'sink_tokens', type: 'integer', default: 4, min: 0, description: 'first tokens kept resident' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier holding the KV cache (FP16)' },
  ],
  create(o, setup) {
    checkLowerTier('infinigen', 'offload_tier', o.offload_tier, setup.tiers);
    const M = setup.maxBlocks;
    const L = setup.layers;
    const G = setup.header.kv_groups;
    const sinkBlocks = Math.ceil(o.sink_tokens / setup.blockSize);
    // lasts[g][l*M + b]: group g's last observed mass on block b of layer l
    const lasts = Array.from({ length: G }, () => new Float64Array(L * M));
    const last = lasts[0];
    const groupMax = new Float64Array(G);
    const rank = G > 1 ? new Float64Array(M) : new Float64Array(0);
    const rankOf = G > 1 ? new Float64Array(M) : new Float64Array(0);
    // per layer: the blocks predicted important, predictedList[l][0, predictedCount[l])
    const predictedList = Array.from({ length: L }, () => new Int32Array(M));
    const predictedCount = new Int32Array(L);
    const stampOf = new Int32Array(L).fill(-2);
    const cand = new Int32Array(M);
    const ratio = Math.exp(-o.alpha);

    /** Predict layer nl's important offloaded blocks; stage them when `stage`. */
    const predict = (v: PolicyView, act: Actions, nl: number, step: number, stage: boolean, fetchMax: number) => {
      const cache = v.cache;
      const base = nl * M;
      let n = 0;
      let drop: number;
      if (G === 1) {
        // one pass: the row's max over live blocks, and (in block order) the offloaded blocks with some
        // mass within alpha of the max so far (a superset of those within alpha of the row's max,
        // which is at least the max so far; the first blocks, the anchors, usually hold it), then
        // those within alpha of the row's max
        let max = 0;
        let near = 0;
        let m = 0;
        const created = cache.created[nl];
        for (let b = 0; b < created; b++) {
          const x = last[base + b];
          if (x >= near && x > 0) {
            const t = cache.tierOf(nl, b);
            if (t < 0) continue;
            if (x > max) {
              max = x;
              near = ratio * max;
            }
            if (t > 0) cand[m++] = b;
          }
        }
        const floor = ratio * max;
        for (let i = 0; i < m; i++) if (last[base + cand[i]] >= floor) cand[n++] = cand[i];
        drop = Math.max(0, n - fetchMax);
        selectBottomK(cand, n, drop, (b) => last[base + b]);
      } else {
        groupMax.fill(0);
        for (let b = 0; b < cache.created[nl]; b++) {
          if (cache.tierOf(nl, b) < 0) continue;
          for (let g = 0; g < G; g++) if (lasts[g][base + b] > groupMax[g]) groupMax[g] = lasts[g][base + b];
        }
        for (let b = 0; b < cache.created[nl]; b++) {
          if (cache.tierOf(nl, b) <= 0) continue;
          for (let g = 0; g < G; g++) {
            const x = lasts[g][base + b];
            if (x >= ratio * groupMax[g] && x > 0) {
              cand[n++] = b;
              break;
            }
          }
        }
        drop = Math.max(0, n - fetchMax);
        if (drop > 0) {
          bestGroupRank(cand, n, G, (g, b) => lasts[g][base + b], rank);
          for (let i = 0; i < n; i++) rankOf[cand[i]] = -rank[i];
          selectBottomK(cand, n, drop, (b) => rankOf[b]);
        }
      }
      const list = predictedList[nl];
      for (let i = drop; i < n; i++) {
        list[i - drop] = cand[i];
        if (stage) act.prefetch(nl, cand[i]);
      }
      predictedCount[nl] = n - drop;
      stampOf[nl] = step;
    };

    // per layer: blocks sinkBlocks .. from[l] - 1 are all out of HBM (nothing here brings a block
    // back to HBM, so they stay out): the oldest resident non-anchor is searched from from[l]
    const from = new Int32Array(L).fill(sinkBlocks);
    /** anchors + the newest blocks stay resident: the oldest resident non-anchor goes to DRAM */
    const slide = (v: PolicyView, act: Actions, l: number, incoming: number, resident: number) => {
      const cache = v.cache;
      let excess = cache.countIn(l, 0) + incoming - resident;
      let out = true;
      for (let b = from[l]; excess > 0 && b < cache.created[l]; b++) {
        if (cache.tierOf(l, b) === 0 && act.demote(l, b, o.offload_tier, 16)) excess--;
        if (out && cache.tierOf(l, b) !== 0) from[l] = b + 1;
        else out = false;
      }
    };

    return {
      name: 'infinigen',
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        const K = Math.max(1, v.budgetBlocks);
        const resident = Math.max(sinkBlocks + 1, Math.round(K * o.resident_ratio));
        const fetchMax = Math.max(0, K - resident);
        if (v.step < 0) {
          slide(v, act, l, 0, resident);
          return;
        }
        // this layer: attend resident + predicted (staged one layer ahead); skip the other offloaded
        slide(v, act, l, v.newBlock ? 1 : 0, resident); // normally done one layer ahead already
        if (stampOf[l] !== v.step) predict(v, act, l, v.step, true, fetchMax);
        act.skipExceptListed(predictedList[l], predictedCount[l], 'offloaded');
        if (L === 1) return; // one layer: nothing to hide behind, prediction happens at the layer
        // one layer ahead: slide the next layer's window (its new block is known), then speculate it
        const nextStep = l + 1 < L ? v.step : v.step + 1;
        if (nextStep >= setup.header.steps) return;
        const nl = l + 1 < L ? l + 1 : 0;
        const nBlocksThen = Math.ceil((v.contextTokens + (nextStep - v.step)) / setup.blockSize);
        slide(v, act, nl, nBlocksThen > cache.created[nl] ? 1 : 0, resident);
        predict(v, act, nl, nextStep, true, fetchMax);
      },
      observe(obs: Observation) {
        // at a decode step, the attended blocks lie among the anchors, the blocks from from[l] on
        // (below it, all are out of HBM) and the layer's predicted list for this step
        const l = obs.layer;
        const head = Math.min(sinkBlocks, obs.nBlocks);
        const within = obs.step >= 0 && stampOf[l] === obs.step;
        for (let g = 0; g < G; g++) {
          if (!(within && lastObservedWithin(lasts[g], l * M, obs, obs.groups[g], head, Math.max(from[l], head), predictedList[l], predictedCount[l]))) {
            lastObserved(lasts[g], l * M, obs, obs.groups[g]);
          }
        }
      },
    };
  },
};

/**
 * lastObserved for a top-k row when every attended block is below `head`, at or above `tail`, or
 * among blocks[0..count) (distinct): the uniform share is written by passes over those only (listed
 * blocks in [head, tail) counted, the others are in the ranges). Returns false, having written only
 * what lastObserved also writes, when the row is dense or some attended block lies elsewhere (then
 * call lastObserved).
 */
export function lastObservedWithin(last: Float64Array, base: number, obs: Observation, ga: GroupAttention, head: number, tail: number, blocks: Int32Array, count: number): boolean {
  const { idx, mass, uniform } = ga;
  if (idx === null) return false;
  const { attended, nBlocks } = obs;
  let seen = 0;
  for (let b = 0; b < head; b++) {
    if (attended[b]) {
      last[base + b] = uniform;
      seen++;
    }
  }
  for (let b = tail; b < nBlocks; b++) {
    if (attended[b]) {
      last[base + b] = uniform;
      seen++;
    }
  }
  for (let i = 0; i < count; i++) {
    const b = blocks[i];
    if (b >= head && b < tail && b < nBlocks && attended[b]) {
      last[base + b] = uniform;
      seen++;
    }
  }
  if (seen !== obs.attendedCount) return false;
  for (let i = 0; i < idx.length; i++) if (attended[idx[i]]) last[base + idx[i]] = mass[i];
  return true;
}
