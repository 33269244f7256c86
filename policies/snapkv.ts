/**
 * SnapKV (Li et al., "SnapKV: LLM Knows What You are Looking for Before Generation", NeurIPS 2024):
 * once, at the end of prefill, the last w = 32 prompt queries vote on the prompt's KV, the votes are
 * pooled (kernel 5), and each layer keeps the top (cap − w) prompt positions plus the window; the
 * generated tokens are appended and kept. Evicted blocks are dropped.
 *
 * Block-level approximations (see snap-select.ts): the vote is the attention the driver shows at
 * prefill (the first decode step's attention — the trace has no prompt query rows); pooling is the
 * token-level avg-pool computed on blocks with the mass spread over each block's tokens; w = 32 tokens
 * is ⌈32 / block⌉ blocks. cap = budget − the blocks decoding will add (so the appended tokens fit, as
 * SnapKV's fixed prompt capacity implies); if the budget is too small for that, decoding evicts the
 * lowest-scored prompt block outside the window (a fallback SnapKV itself does not need).
 *
 * Per head, as in the paper (each head votes and keeps its own top positions), at the granularity of
 * KV-head groups: each group's vote is pooled on its own, and a layer keeps the union of the groups'
 * top prompt blocks, taken rank by rank (group-rank.ts), within the same per-layer capacity.
 */
import { bestGroupRank } from './group-rank.js';
import { denseGroupObservation, denseObservation } from './observed-mass.js';
import type { Actions, Observation, PolicyDefinition, PolicyView } from './policy.js';
import { decodeReserveBlocks, pooledBlockScores, snapVictimsGrouped } from './snap-select.js';

interface Options extends Record<string, unknown> {
  window_tokens: number;
  kernel: number;
}

export const snapKv: PolicyDefinition<Options> = {
  name: 'snapkv',
  description:
    'SnapKV: at the end of prefill the observation window (last 32 prompt tokens; here the attention shown at prefill) votes per KV-head group, votes are avg-pooled (kernel 5), each layer keeps the window + the top (cap - window) prompt blocks (the union of the groups\' top blocks); generated tokens are kept; the rest is dropped.',
  source: 'Li et al., SnapKV: LLM Knows What You are Looking for Before Generation, NeurIPS 2024 (w = 32, kernel 5)',
  options: [
    { name: 'window_tokens', type: 'integer', default: 32, min: 1, description: 'observation window (last prompt tokens), always kept' },
    { name: 'kernel', type: 'integer', default: 5, min: 1, description: 'avg-pooling kernel over tokens' },
  ],
  create(o, setup) {
    return snapCompressor('snapkv', o, setup, () => setup.budgetBlocks);
  },
};

/** The SnapKV mechanism with a per-layer total budget (PyramidKV passes its pyramid). */
export function snapCompressor(
  name: string,
  o: { window_tokens: number; kernel: number },
  setup: { layers: number; maxBlocks: number; blockSize: number; header: { prompt_tokens: number; steps: number; kv_groups: number } },
  layerBudget: (layer: number) => number,
) {
  const B = setup.blockSize;
  const windowBlocks = Math.ceil(o.window_tokens / B);
  const promptBlocks = Math.ceil(setup.header.prompt_tokens / B);
  const reserve = decodeReserveBlocks(setup.header.prompt_tokens, setup.header.steps, B);
  const G = setup.header.kv_groups;
  // scores[l][g]: group g's pooled vote in layer l
  const scores = Array.from({ length: setup.layers }, () => Array.from({ length: G }, () => new Float64Array(setup.maxBlocks)));
  const mass = new Float64Array(setup.maxBlocks);
  const cand = new Int32Array(setup.maxBlocks);
  const rank = new Float64Array(setup.maxBlocks);
  return {
    name,
    /** prompt capacity of a layer: its budget less the decode reserve, at least the window */
    promptCap: (l: number) => Math.max(Math.min(windowBlocks, promptBlocks), layerBudget(l) - reserve),
    decide(v: PolicyView, act: Actions) {
      const l = v.layer;
      if (v.step < 0) {
        const cap = Math.max(Math.min(windowBlocks, promptBlocks), layerBudget(l) - reserve);
        for (const b of snapVictimsGrouped(promptBlocks, windowBlocks, cap, scores[l])) act.evict(l, b);
        return;
      }
      // fallback: the budget cannot hold the appended tokens; drop the lowest-scored prompt block
      // (several groups: the one whose best rank over the groups is worst)
      const budget = Math.max(layerBudget(l), windowBlocks + 1);
      let excess = v.cache.live(l) + (v.newBlock ? 1 : 0) - budget;
      const score = G === 1 ? scores[l][0] : rank;
      if (excess > 0 && G > 1) {
        let n = 0;
        for (let b = 0; b < Math.max(0, promptBlocks - windowBlocks); b++) if (v.cache.tierOf(l, b) >= 0) cand[n++] = b;
        const r = bestGroupRank(cand, n, G, (g, b) => scores[l][g][b], new Float64Array(n));
        for (let i = 0; i < n; i++) rank[cand[i]] = -r[i];
      }
      while (excess > 0) {
        let worst = -1;
        for (let b = 0; b < Math.max(0, promptBlocks - windowBlocks); b++) {
          if (v.cache.tierOf(l, b) >= 0 && (worst < 0 || score[b] < score[worst])) worst = b;
        }
        if (worst < 0 || !act.evict(l, worst)) break;
        excess--;
      }
    },
    observe(obs: Observation) {
      if (obs.step >= 0) return;
      const n = Math.min(obs.nBlocks, promptBlocks);
      if (G === 1) {
        denseObservation(obs, mass);
        pooledBlockScores(mass, n, o.kernel, B, scores[obs.layer][0]);
        return;
      }
      for (let g = 0; g < G; g++) {
        denseGroupObservation(obs, obs.groups[g], mass);
        pooledBlockScores(mass, n, o.kernel, B, scores[obs.layer][g]);
      }
    },
  };
}
