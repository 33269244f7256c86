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
 */
import { denseObservation } from './observed-mass.js';
import type { Actions, Observation, PolicyDefinition, PolicyView } from './policy.js';
import { decodeReserveBlocks, pooledBlockScores, snapVictims } from './snap-select.js';

interface Options extends Record<string, unknown> {
  window_tokens: number;
  kernel: number;
}

export const snapKv: PolicyDefinition<Options> = {
  name: 'snapkv',
  description:
    'SnapKV: at the end of prefill the observation window (last 32 prompt tokens; here the attention shown at prefill) votes, votes are avg-pooled (kernel 5), each layer keeps the window + top (cap - window) prompt blocks; generated tokens are kept; the rest is dropped.',
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
  setup: { layers: number; maxBlocks: number; blockSize: number; header: { prompt_tokens: number; steps: number } },
  layerBudget: (layer: number) => number,
) {
  const B = setup.blockSize;
  const windowBlocks = Math.ceil(o.window_tokens / B);
  const promptBlocks = Math.ceil(setup.header.prompt_tokens / B);
  const reserve = decodeReserveBlocks(setup.header.prompt_tokens, setup.header.steps, B);
  const scores = Array.from({ length: setup.layers }, () => new Float64Array(setup.maxBlocks));
  const mass = new Float64Array(setup.maxBlocks);
  return {
    name,
    /** prompt capacity of a layer: its budget less the decode reserve, at least the window */
    promptCap: (l: number) => Math.max(Math.min(windowBlocks, promptBlocks), layerBudget(l) - reserve),
    decide(v: PolicyView, act: Actions) {
      const l = v.layer;
      const score = scores[l];
      if (v.step < 0) {
        const cap = Math.max(Math.min(windowBlocks, promptBlocks), layerBudget(l) - reserve);
        for (const b of snapVictims(promptBlocks, windowBlocks, cap, score)) act.evict(l, b);
        return;
      }
      // fallback: the budget cannot hold the appended tokens; drop the lowest-scored prompt block
      const budget = Math.max(layerBudget(l), windowBlocks + 1);
      let excess = v.cache.live(l) + (v.newBlock ? 1 : 0) - budget;
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
      denseObservation(obs, mass);
      pooledBlockScores(mass, Math.min(obs.nBlocks, promptBlocks), o.kernel, B, scores[obs.layer]);
    },
  };
}
