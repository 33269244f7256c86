import { describe, expect, it } from 'vitest';
import { buildNeedTable, nextNeed, oracle } from '../../policies/oracle.js';
import { readSteps, replayPolicy, writeTrace } from './harness.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';

// one layer, prompt 16 tokens = blocks 0..3, block 4 written at step 0; budget 2 blocks
const rows = [
  [0.1, 0.5, 0.05, 0.05, 0.3],
  [0.05, 0.05, 0.5, 0.1, 0.3],
  [0.5, 0.05, 0.05, 0.1, 0.3],
];
const opts = { prompt: 16, steps: 3, layers: 1, massOf: (s: number) => rows[s], options: { top_factor: 1, pooled: false } };

describe('oracle (Belady MIN + clairvoyant sparse attention)', () => {
  it('needed sets: top K\' by true mass per layer, plus the pooled top over layers', () => {
    const h = tinyHeader(16, 3, 1);
    const path = writeTrace(h, denseSteps(h, (s) => rows[s]));
    const t = buildNeedTable(h, readSteps(path), 2, false);
    expect(t.need.map((n) => [...n])).toEqual([[1, 4], [2, 4], [0, 4]]);
    // two layers, K' = 1: layer 0 has two heavy blocks, layer 1 is flat; the pooled top 2 shares (0.5, 0.45) are both layer 0's
    const h2 = tinyHeader(8, 1, 2);
    const p2 = writeTrace(h2, denseSteps(h2, (_s, l) => (l === 0 ? [0.5, 0.45, 0.05] : [0.34, 0.33, 0.33])));
    expect(buildNeedTable(h2, readSteps(p2), 1, false).need.map((n) => [...n])).toEqual([[0], [0]]);
    expect(buildNeedTable(h2, readSteps(p2), 1, true).need.map((n) => [...n])).toEqual([[0, 1], [0]]);
    expect(nextNeed(t, 0, 4, 0)).toBe(1);
    expect(nextNeed(t, 0, 0, 0)).toBe(2);
    expect(nextNeed(t, 0, 3, -1)).toBe(Infinity);
  });

  it('keeps the blocks needed soonest resident, stages or promotes what is needed, skips the rest', () => {
    const r = replayPolicy(oracle, 2, opts);
    // prefill: one slot is left for block 4; block 1 (needed at step 0) stays, 0/2/3 go to DRAM
    expect(r.acts('demote:dram:16', -1)).toEqual(['0:0', '0:2', '0:3']);
    expect(r.acts('skip', 0)).toEqual(['0:0', '0:2', '0:3']);
    // step 1: block 1 is never needed again -> DRAM; block 2 (needed now) comes in
    expect(r.acts('demote:dram:16', 1)).toEqual(['0:1']);
    expect(r.acts('promote', 1)).toEqual(['0:2']);
    expect(r.acts('skip', 1)).toEqual(['0:0', '0:1', '0:3']);
    // step 2: 4 and 0 are both needed now and never after; 4 is resident so it stays, 2 leaves
    expect(r.acts('demote:dram:16', 2)).toEqual(['0:2']);
    expect(r.acts('promote', 2)).toEqual(['0:0']);
    expect(r.tiers(0)).toEqual([0, 1, 1, 1, 0]);
    expect(r.results.map((x) => x.recall[0])).toEqual([0.8, 0.8, 0.8].map((v) => expect.closeTo(v, 6)));
    expect(r.log.filter((a) => a.what === 'evict')).toEqual([]);
  });

  it('is marked as an oracle', () => {
    expect(oracle.oracle).toBe(true);
    expect(oracle.description).toMatch(/ORACLE/);
  });
});
