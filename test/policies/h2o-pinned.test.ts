/**
 * H2O with pinned blocks (pinned by whoever drives it, e.g. a wrapper policy): a pinned block is never
 * a victim, and among the others the lowest cumulative score goes — on the one-victim path and the
 * several-victims path alike.
 */
import { describe, expect, it } from 'vitest';
import { h2o } from '../../policies/h2o.js';
import type { PolicyDefinition } from '../../policies/policy.js';
import { replayPolicy } from './harness.js';

const DROPPED = -2;

/** H2O with `pinned` blocks of every layer pinned at prefill, before H2O decides. */
function h2oPinning(pinned: number[]): PolicyDefinition<any> {
  return {
    ...h2o,
    name: 'h2o-pinning',
    create(o, setup) {
      const inner = h2o.create(o, setup);
      return {
        name: 'h2o-pinning',
        decide(v, act) {
          if (v.step < 0) for (const b of pinned) act.pin(v.layer, b);
          inner.decide(v, act);
        },
        observe: (obs) => inner.observe(obs),
      };
    },
  };
}

// per-block attention (the prefill observes step 0's): block 1 heavy, block 2 the lightest
const MASS = [0.2, 0.4, 0.05, 0.1, 0.1, 0.1, 0.05];

describe('H2O with pinned blocks', () => {
  it('one victim: the lowest score among the unpinned candidates (hand-computed)', () => {
    // 1 layer, 4-token blocks, budget 6: 1 sink block, a 3-block window. Prompt 24 tokens = blocks 0..5;
    // step 0 (25 tokens) creates block 6, one over the budget. Window: blocks 4..6; candidates 1, 2, 3
    // with scores 0.4, 0.05 (pinned), 0.1 -> block 3 goes.
    const r = replayPolicy(h2oPinning([2]), 6, { layers: 1, prompt: 24, steps: 1, massOf: () => MASS });
    expect(r.cache.isPinned(0, 2)).toBe(true);
    expect(r.log.filter((a) => a.what === 'evict').map((a) => [a.step, a.args[1], a.ok])).toEqual([[0, 3, true]]);
    expect(r.tiers(0)).toEqual([0, 0, 0, DROPPED, 0, 0, 0]);
  });

  it('without the pin the same step evicts block 2, the lowest score', () => {
    const r = replayPolicy(h2oPinning([]), 6, { layers: 1, prompt: 24, steps: 1, massOf: () => MASS });
    expect(r.tiers(0)).toEqual([0, 0, DROPPED, 0, 0, 0, 0]);
  });

  it('several victims: the lowest scores among the unpinned candidates, at prefill and after', () => {
    // budget 4: 1 sink block, a 2-block window. Prompt 24 tokens = blocks 0..5: at prefill 2 over the
    // budget. Window: blocks 5, 6 (step 0's 7 blocks); candidates 1..4 with scores 0.4, 0.05 (pinned),
    // 0.1, 0.1 -> blocks 3 and 4 go. Step 0 creates block 6, one over: candidates 1 and 2 (pinned) -> 1.
    const r = replayPolicy(h2oPinning([2]), 4, { layers: 1, prompt: 24, steps: 1, massOf: () => MASS });
    const evicted = r.log.filter((a) => a.what === 'evict' && a.ok).map((a) => [a.step, a.args[1]]);
    expect(evicted.sort((x, y) => x[0] - y[0] || x[1] - y[1])).toEqual([[-1, 3], [-1, 4], [0, 1]]);
    expect(r.tiers(0).map((t) => t !== DROPPED)).toEqual([true, false, true, false, false, true, true]);
  });
});
