/**
 * StreamingLLM (Xiao et al., "Efficient Streaming Language Models with Attention Sinks", ICLR 2024):
 * keep the first S tokens (attention sinks) and a window of the most recent tokens; drop the rest.
 * Here at block granularity: the blocks holding the first S tokens plus the newest blocks, so that
 * live blocks never exceed the HBM budget.
 */
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  sink_tokens: number;
}

export const streamingLlm: PolicyDefinition<Options> = {
  name: 'streaming-llm',
  description: 'Attention sinks (first S tokens) + a sliding window of recent blocks filling the rest of the budget; evicted blocks are dropped.',
  source: 'Xiao et al., Efficient Streaming Language Models with Attention Sinks, ICLR 2024 (S = 4)',
  options: [{ name: 'sink_tokens', type: 'integer', default: 4, min: 0, description: 'tokens at the start that are never evicted' }],
  create(o, setup) {
    const sinkBlocks = Math.ceil(o.sink_tokens / setup.blockSize);
    // next block to evict per layer: eviction always takes the oldest non-sink block
    const next = new Int32Array(setup.layers).fill(sinkBlocks);
    return {
      name: 'streaming-llm',
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const created = v.cache.created[l];
        let live = v.cache.live(l);
        const want = v.newBlock ? live + 1 : live;
        const budget = Math.max(v.budgetBlocks, sinkBlocks + 1);
        let excess = want - budget;
        while (excess > 0 && next[l] < created) {
          const b = next[l]++;
          if (v.cache.tierOf(l, b) < 0) continue;
          if (act.evict(l, b)) {
            live--;
            excess--;
          }
        }
      },
      observe() {},
    };
  },
};
