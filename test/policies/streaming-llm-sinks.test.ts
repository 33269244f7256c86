/**
 * StreamingLLM keeps the blocks holding the first sink_tokens tokens: ceil(sink_tokens / block size)
 * blocks, also when a block is larger than the sink.
 */
import { describe, expect, it } from 'vitest';
import { streamingLlm } from '../../policies/streaming-llm.js';
import { replayPolicy } from './harness.js';

const DROPPED = -2;

describe('StreamingLLM sink blocks', () => {
  it('4 sink tokens in 16-token blocks: block 0 is the sink and stays; the oldest other block goes', () => {
    // prompt 32 tokens = blocks 0, 1; budget 2 blocks. Step 0 (33 tokens) creates block 2: one over
    // the budget, block 1 goes (block 0 holds tokens 0..15, the sink). Step 16 (49 tokens) creates
    // block 3: block 2 goes. After step 19 (52 tokens): blocks 0 and 3 live.
    const r = replayPolicy(streamingLlm, 2, { prompt: 32, steps: 20, header: (h) => ({ ...h, block_size: 16 }) });
    expect(r.header.block_size).toBe(16);
    for (const l of [0, 1]) expect(r.tiers(l)).toEqual([0, DROPPED, DROPPED, 0]);
    expect(r.log.filter((a) => a.what === 'evict').map((a) => [a.step, a.layer, a.args[1]])).toEqual([
      [0, 0, 1],
      [0, 1, 1],
      [16, 0, 2],
      [16, 1, 2],
    ]);
    // uniform attention over 4 blocks, 2 of them attended: recall 1/2 at the last step
    expect([...r.results[19].recall]).toEqual([0.5, 0.5]);
  });

  it('20 sink tokens in 16-token blocks span two sink blocks', () => {
    // budget 3 blocks, prompt 48 tokens = blocks 0..2; blocks 0 and 1 hold tokens 0..31 (the sink reaches
    // token 19). Step 0 (49 tokens) creates block 3: block 2 goes, not block 1.
    const r = replayPolicy(streamingLlm, 3, { prompt: 48, steps: 1, options: { sink_tokens: 20 }, header: (h) => ({ ...h, block_size: 16 }) });
    for (const l of [0, 1]) expect(r.tiers(l)).toEqual([0, 0, DROPPED, 0]);
  });

  it('a budget below the sinks still keeps sinks + the newest block', () => {
    // 2 sink blocks, budget 1: the effective budget is sinks + 1 = 3 blocks
    const r = replayPolicy(streamingLlm, 1, { prompt: 48, steps: 1, options: { sink_tokens: 20 }, header: (h) => ({ ...h, block_size: 16 }) });
    for (const l of [0, 1]) expect(r.tiers(l).map((t) => t !== DROPPED)).toEqual([true, true, false, true]);
  });

  it('no sink tokens: the window alone, oldest block first', () => {
    const r = replayPolicy(streamingLlm, 2, { prompt: 32, steps: 1, options: { sink_tokens: 0 }, header: (h) => ({ ...h, block_size: 16 }) });
    for (const l of [0, 1]) expect(r.tiers(l)).toEqual([DROPPED, 0, 0]);
  });
});
