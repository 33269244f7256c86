/**
 * The oracle's room for a step's new block when planning could not leave it (its demotions refused,
 * here because the offload tier is full): the resident block needed furthest in the future is asked
 * to go, the first in block order on a tie (Belady's MIN).
 */
import { describe, expect, it } from 'vitest';
import { oracle } from '../../policies/oracle.js';
import { replayPolicy } from './harness.js';

describe('oracle new-block fallback', () => {
  it('asks to demote the resident block needed furthest ahead (hand-computed, DRAM full)', () => {
    // 1 layer, 4-token blocks, budget K = 2, DRAM of 0 bytes: every demotion is refused.
    // prompt 8 tokens = blocks 0, 1; step 0 creates block 2, step 4 block 3.
    // need (top 2 by mass): step 0 {0, 2}; steps 1-3 {1, 2}; step 4 {2, 3}
    const massOf = (s: number, _l: number, n: number) => (s === 0 ? [0.5, 0.1, 0.4] : n === 3 ? [0.1, 0.6, 0.3] : [0.1, 0.2, 0.3, 0.4]);
    const r = replayPolicy(oracle, 2, { layers: 1, prompt: 8, steps: 5, dramBlocks: 0, massOf });
    const demotes = (step: number) => r.log.filter((a) => a.step === step && a.what === 'demote:dram:16').map((a) => [a.args[1], a.ok]);
    // prefill plans step 0: keep block 0 (needed at 0), demote block 1 (next needed at 1) -> refused
    expect(demotes(-1)).toEqual([[1, false]]);
    // step 0: the plan asks again; the fallback's victim: next needs 0 (block 0) and 1 (block 1) -> block 1
    expect(demotes(0)).toEqual([[1, false], [1, false]]);
    // steps 1-3 (no new block): block 2, now in NVMe, is needed at once, block 0 never again -> the plan
    // asks block 0 to go (refused) and no fallback runs
    for (const s of [1, 2, 3]) expect(demotes(s)).toEqual([[0, false]]);
    // step 4: the plan keeps block 2 (needed now) and asks both residents to go; the fallback's victim:
    // blocks 0 and 1 are never needed again (a tie) -> the first, block 0
    expect(demotes(4)).toEqual([[0, false], [1, false], [0, false]]);
    // the new blocks found HBM and DRAM full and went to NVMe
    expect(r.tiers(0)).toEqual([0, 0, 2, 2]);
    expect(r.driver.counters.refused.alloc).toBe(2);
  });
});
