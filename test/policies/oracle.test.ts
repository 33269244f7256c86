import { describe, expect, it } from 'vitest';
import { oracle } from '../../policies/oracle.js';
import { StepNeeds } from '../../policies/oracle-needs.js';
import { NextUseIndex } from '../../policies/next-use-index.js';
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
    const needs = (hh: typeof h, p: string, k: number, pooled: boolean) => {
      const of = new StepNeeds(hh.layers, hh.kv_groups, k, pooled);
      return [...readSteps(p)].flatMap((s) => of.of(s).map((n) => [...n]));
    };
    expect(needs(h, path, 2, false)).toEqual([[1, 4], [2, 4], [0, 4]]);
    // two layers, K' = 1: layer 0 has two heavy blocks, layer 1 is flat; the pooled top 2 shares (0.5, 0.45) are both layer 0's
    const h2 = tinyHeader(8, 1, 2);
    const p2 = writeTrace(h2, denseSteps(h2, (_s, l) => (l === 0 ? [0.5, 0.45, 0.05] : [0.34, 0.33, 0.33])));
    expect(needs(h2, p2, 1, false)).toEqual([[0], [0]]);
    expect(needs(h2, p2, 1, true)).toEqual([[0, 1], [0]]);
    // ties: equal masses go to the lower block; K' beyond the row takes every block
    const p3 = writeTrace(h2, denseSteps(h2, () => [0.25, 0.5, 0.25]));
    expect(needs(h2, p3, 2, false)).toEqual([[0, 1], [0, 1]]);
    expect(needs(h2, p3, 5, false)).toEqual([[0, 1, 2], [0, 1, 2]]);
  });

  it('next-use index: each block\'s next use, streamed through the records of the changes', () => {
    // layer 0 uses [1, 4], [2, 4], [0, 4] at steps 0..2; layer 1 uses [0], [], [0]
    const uses = [
      [[1, 4], [0]],
      [[2, 4], []],
      [[0, 4], [0]],
    ];
    const ix = new NextUseIndex(2, 5, uses.map((u) => ({ nBlocks: 5, uses: u.map((x) => Int32Array.from(x)) })));
    expect(ix.never).toBe(3);
    const all = () => Array.from({ length: 10 }, (_, k) => ix.nextUseOf(Math.floor(k / 5), k % 5));
    // first uses: layer 0 blocks 0..4 at 2, 0, 1, never, 0; layer 1 block 0 at 0, the rest never
    expect(all()).toEqual([2, 0, 1, 3, 0, 0, 3, 3, 3, 3]);
    const r0 = ix.load(0);
    expect([...r0.blocks]).toEqual([1, 4, 0]);
    expect([...r0.next]).toEqual([3, 1, 2]);
    ix.advance(0, 0);
    expect(all().slice(0, 5)).toEqual([2, 3, 1, 3, 1]);
    expect(ix.stepOf(0)).toBe(1);
    expect(() => ix.advance(0, 0)).toThrow(/layer 0 is at step 1, asked to pass step 0/);
    ix.advance(1, 0);
    const r1 = ix.load(1);
    expect([...r1.blocks]).toEqual([2, 4]);
    expect([...r1.next]).toEqual([3, 2]);
    expect([...r1.from]).toEqual([0, 2, 2]);
    expect(() => ix.load(0)).toThrow(/only moves forward/);
    ix.advance(0, 1);
    ix.advance(1, 1);
    expect(all()).toEqual([2, 3, 3, 3, 2, 2, 3, 3, 3, 3]);
    expect([...ix.load(2).next]).toEqual([3, 3, 3]);
    expect(() => ix.load(3)).toThrow(/step 3 outside 0..2/);
    expect(() => new NextUseIndex(1, 2, [{ nBlocks: 2, uses: [Int32Array.from([2])] }])).toThrow(/step 0 layer 0: block 2 outside 0..1/);
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
