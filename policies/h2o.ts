/**
 * H2O, Heavy-Hitter Oracle (Zhang et al., NeurIPS 2023): each block's score is its cumulative
 * attention, score[j] += sum over the step's query of attention[j]. The budget is split between a
 * window of recent blocks and the heavy hitters with the highest scores (50/50 by default); the
 * first N tokens (sinks) score +infinity and are never evicted. Victims are the lowest-scored blocks
 * outside the window, chosen by linear-time bottom-k selection (quickselect), not a sort.
 *
 * Observations arrive sparse (top-k listed masses + an even share for every other attended block);
 * the even share is added to all blocks at once through a per-layer offset, so an update is O(k).
 *
 * Per head, as in the paper (score[h, j]), at the granularity of KV-head groups: with several groups
 * each group accumulates its own scores. A layer's block holds every group's KV, so the budget is
 * shared: the heavy hitters kept are the union of each group's top blocks, taken rank by rank (rank 1
 * of every group, then rank 2, ...) until the budget is full — the union of each group's top k for
 * the largest k that fits, then the next rank in group order. A block's key is its best (rank, group)
 * over the groups; the candidates with the worst keys are evicted. Sinks and the window as before.
 */
import type { Actions, GroupAttention, Observation, PolicyDefinition, PolicyView } from './policy.js';
import { bestGroupRank } from './group-rank.js';
import { selectBottomKKeyed } from './quickselect.js';

interface Options extends Record<string, unknown> {
  heavy_ratio: number;
  sink_tokens: number;
}

export const h2o: PolicyDefinition<Options> = {
  name: 'h2o',
  description:
    'Heavy-hitter oracle: cumulative attention scores per KV-head group, recent window + heavy hitters (budget split heavy_ratio; the kept heavy hitters are the union of each group\'s top blocks), sinks pinned; evicted blocks are dropped.',
  source: 'Zhang et al., H2O: Heavy-Hitter Oracle for Efficient Generative Inference of LLMs, NeurIPS 2023',
  options: [
    { name: 'heavy_ratio', type: 'number', default: 0.5, min: 0, max: 1, description: 'share of the budget for heavy hitters (the rest is the recent window)' },
    { name: 'sink_tokens', type: 'integer', default: 4, min: 0, description: 'first tokens forced to +infinity score (never evicted)' },
  ],
  create(o, setup) {
    const M = setup.maxBlocks;
    const G = setup.header.kv_groups;
    const sinkBlocks = Math.ceil(o.sink_tokens / setup.blockSize);
    // scores[g][l*M + j] + offsets[g][l] is block j's cumulative attention in group g
    const scores = Array.from({ length: G }, () => new Float64Array(setup.layers * M));
    const offsets = Array.from({ length: G }, () => new Float64Array(setup.layers));
    const score = scores[0];
    const offset = offsets[0];
    // several groups: per candidate its best (rank, group) key
    const best = G > 1 ? new Float64Array(M) : new Float64Array(0);
    // blocks below knownUpTo[l] have a score (blocks are created in order)
    const knownUpTo = new Int32Array(setup.layers);
    const cand = new Int32Array(M);
    const candKey = new Float64Array(M);
    // per layer, ascending: the live blocks in [sinks, scanned[l]) — every block that has left the
    // recent window and was not evicted; a decision walks this list (about the budget), not every block
    const list = new Int32Array(setup.layers * M);
    const listLen = new Int32Array(setup.layers);
    const scanned = new Int32Array(setup.layers).fill(sinkBlocks);
    const policy = {
      name: 'h2o',
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const live = v.cache.live(l);
        const want = v.newBlock ? live + 1 : live;
        const budget = Math.max(v.budgetBlocks, sinkBlocks + 1);
        const excess = want - budget;
        if (excess <= 0) return;
        const recent = Math.max(1, Math.round(budget * (1 - o.heavy_ratio)));
        const windowStart = v.nBlocks - recent;
        const c = v.cache;
        const upTo = Math.min(windowStart, c.created[l]);
        const base = l * M;
        // blocks that left the window join the list (ascending: above every listed block)
        let len = listLen[l];
        for (let b = scanned[l]; b < upTo; b++) if (c.tierOf(l, b) >= 0) list[base + len++] = b;
        listLen[l] = len;
        if (upTo > scanned[l]) scanned[l] = upTo;
        const known = knownUpTo[l];
        const fresh = -offset[l];
        if (G > 1) {
          evictByGroupRank(l, len, excess, act, c);
          return;
        }
        // (no closures here: a captured variable would cost a context allocation on every call)
        if (excess === 1) {
          // one victim: the first lowest score in ascending block order
          let at = -1;
          let bestKey = 0;
          if (c.pinnedIn(l) === 0 && len > 0) {
            at = 0;
            bestKey = list[base] < known ? score[base + list[base]] : fresh;
            for (let i = 1; i < len; i++) {
              const b = list[base + i];
              const kb = b < known ? score[base + b] : fresh;
              if (kb < bestKey) {
                at = i;
                bestKey = kb;
              }
            }
          } else {
            for (let i = 0; i < len; i++) {
              const b = list[base + i];
              if (c.isPinned(l, b)) continue;
              const kb = b < known ? score[base + b] : fresh;
              if (at < 0 || kb < bestKey) {
                at = i;
                bestKey = kb;
              }
            }
          }
          if (at >= 0 && act.evict(l, list[base + at])) {
            list.copyWithin(base + at, base + at + 1, base + len);
            listLen[l] = len - 1;
          }
          return;
        }
        // candidates: the listed (live, out-of-window) blocks that are not pinned, ascending, with their scores
        let n = 0;
        for (let i = 0; i < len; i++) {
          const b = list[base + i];
          if (c.isPinned(l, b)) continue;
          cand[n] = b;
          candKey[n++] = b < known ? score[base + b] : fresh;
        }
        const k = Math.min(excess, n);
        if (k === 1) {
          let at = 0;
          for (let i = 1; i < n; i++) if (candKey[i] < candKey[at]) at = i;
          act.evict(l, cand[at]);
        } else if (k > 1) {
          selectBottomKKeyed(cand, candKey, n, k);
          for (let i = 0; i < k; i++) act.evict(l, cand[i]);
        }
        // drop the evicted blocks from the list
        let m = 0;
        for (let i = 0; i < len; i++) if (c.tierOf(l, list[base + i]) >= 0) list[base + m++] = list[base + i];
        listLen[l] = m;
      },
      observe(obs: Observation) {
        const l = obs.layer;
        const from = knownUpTo[l];
        if (obs.nBlocks > from) knownUpTo[l] = obs.nBlocks;
        if (G === 1) observeGroup(score, offset, obs, obs, from);
        else for (let g = 0; g < G; g++) observeGroup(scores[g], offsets[g], obs, obs.groups[g], from);
      },
    };

    /** Add one group's attention to its scores (`from`: the first block not seen before). */
    function observeGroup(score: Float64Array, offset: Float64Array, obs: Observation, ga: GroupAttention, from: number): void {
      const l = obs.layer;
      const base = l * M;
      // blocks seen for the first time start at -offset so that they accumulate from now on
      for (let b = from; b < obs.nBlocks; b++) score[base + b] = -offset[l];
      if (ga.idx === null) {
        // dense: only live blocks can be attended — the sinks, the listed out-of-window blocks and
        // every block from scanned[l] on (the list holds every live block between the sinks and scanned[l])
        const { mass } = ga;
        const { attended } = obs;
        const n = obs.nBlocks;
        const sinkEnd = Math.min(sinkBlocks, n);
        for (let b = 0; b < sinkEnd; b++) if (attended[b]) score[base + b] += mass[b];
        for (let i = 0, len = listLen[l]; i < len; i++) {
          const b = list[base + i];
          if (b < n && attended[b]) score[base + b] += mass[b];
        }
        for (let b = Math.max(scanned[l], sinkEnd); b < n; b++) if (attended[b]) score[base + b] += mass[b];
        return;
      }
      offset[l] += ga.uniform;
      const { idx, mass, uniform } = ga;
      const { attended } = obs;
      if (obs.step < 0) {
        // the prefill observation (the first decode step's attention) may list the block that step
        // creates, which does not exist yet: it must not accumulate
        for (let i = 0, k = idx.length; i < k; i++) score[base + idx[i]] += (mass[i] - uniform) * attended[idx[i]];
        return;
      }
      // in decode steps H2O attends every live block (it never skips or offloads), so a listed block that
      // was not attended is an evicted one; its score is never read again (evicted blocks leave the list
      // for good), so the update need not look at `attended`
      scatterAdd(score, base, idx, mass, uniform);
    }

    /**
     * Several groups: evict the `excess` unpinned listed blocks whose best (rank, group) over the
     * groups is worst, i.e. keep the union of the groups' top blocks taken rank by rank.
     */
    function evictByGroupRank(l: number, len: number, excess: number, act: Actions, c: PolicyView['cache']): void {
      const base = l * M;
      let n = 0;
      for (let i = 0; i < len; i++) {
        const b = list[base + i];
        if (c.isPinned(l, b)) continue;
        cand[n] = b;
        best[n++] = Infinity;
      }
      const k = Math.min(excess, n);
      if (k <= 0) return;
      const known = knownUpTo[l];
      bestGroupRank(cand, n, G, (g, b) => (b < known ? scores[g][base + b] : -offsets[g][l]), best);
      for (let i = 0; i < n; i++) candKey[i] = -best[i];
      selectBottomKKeyed(cand, candKey, n, k);
      for (let i = 0; i < k; i++) act.evict(l, cand[i]);
      let m = 0;
      for (let i = 0; i < len; i++) if (c.tierOf(l, list[base + i]) >= 0) list[base + m++] = list[base + i];
      listLen[l] = m;
    }

    return policy;
  },
};

/**
 * score[base + idx[i]] += mass[i] - u for every i, in groups of four: the four loads are issued before
 * the four stores, which the CPU overlaps better than a load-add-store chain (~30% faster here). The
 * trace format makes the indices of a layer unique; a group with a repeated index is done one by one,
 * so the result is exactly the plain loop's.
 */
export function scatterAdd(score: Float64Array, base: number, idx: Uint32Array, mass: Float32Array, u: number): void {
  const k = idx.length;
  let i = 0;
  for (; i + 3 < k; i += 4) {
    const j0 = base + idx[i];
    const j1 = base + idx[i + 1];
    const j2 = base + idx[i + 2];
    const j3 = base + idx[i + 3];
    if (j0 === j1 || j0 === j2 || j0 === j3 || j1 === j2 || j1 === j3 || j2 === j3) {
      for (let q = i; q < i + 4; q++) score[base + idx[q]] += mass[q] - u;
      continue;
    }
    const s0 = score[j0];
    const s1 = score[j1];
    const s2 = score[j2];
    const s3 = score[j3];
    score[j0] = s0 + (mass[i] - u);
    score[j1] = s1 + (mass[i + 1] - u);
    score[j2] = s2 + (mass[i + 2] - u);
    score[j3] = s3 + (mass[i + 3] - u);
  }
  for (; i < k; i++) score[base + idx[i]] += mass[i] - u;
}
