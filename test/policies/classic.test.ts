import { describe, expect, it } from 'vitest';
import { arc } from '../../policies/arc.js';
import { fifo } from '../../policies/fifo.js';
import { flexgenStatic } from '../../policies/flexgen-static.js';
import { lfu } from '../../policies/lfu.js';
import { lru } from '../../policies/lru.js';
import { ArcReplacer } from '../../policies/replacers.js';
import { replayPolicy } from './harness.js';

// one layer, prompt 12 = blocks 0..2; block 3 at step 0, block 4 at step 4, block 5 at step 8; budget 3.
// A use is mass >= 0.5 x the row max: block 0 at prefill and steps 0-3, block 3 at steps 4-8.
const massOf = (s: number, _l: number, n: number) =>
  n === 4 ? [0.7, 0.1, 0.1, 0.1] : n === 5 ? [0.1, 0.1, 0.1, 0.6, 0.1] : [0.1, 0.1, 0.1, 0.5, 0.1, 0.1];
const run = (def: typeof lru) => replayPolicy(def, 3, { prompt: 12, steps: 9, layers: 1, massOf, options: { use_threshold: 0.5 } });

describe('classic baselines (drop mode)', () => {
  it('FIFO evicts in admission order', () => {
    const r = run(fifo);
    expect([0, 4, 8].map((s) => r.acts('evict', s))).toEqual([['0:0'], ['0:1'], ['0:2']]);
  });

  it('LRU evicts the least recently used: block 0, used most often, goes when it stops being used', () => {
    const r = run(lru);
    expect([0, 4, 8].map((s) => r.acts('evict', s))).toEqual([['0:1'], ['0:2'], ['0:0']]);
    expect(r.tiers(0).map((t) => t >= 0)).toEqual([false, false, false, true, true, true]);
  });

  it('LFU evicts the least frequently used: block 0 (6 uses) stays, block 4 (no use) goes', () => {
    const r = run(lfu);
    expect([0, 4, 8].map((s) => r.acts('evict', s))).toEqual([['0:1'], ['0:2'], ['0:4']]);
    expect(r.tiers(0).map((t) => t >= 0)).toEqual([true, false, false, true, false, true]);
  });
});

describe('ARC', () => {
  it('adapts p on ghost hits (B1 grows it, B2 shrinks it)', () => {
    const a = new ArcReplacer(8, 2);
    a.admit(0);
    a.admit(1);
    a.hit(1); // T1 [0], T2 [1]
    expect(a.victim()).toBe(0);
    a.remove(0); // B1 [0]
    a.miss(0);
    expect(a.p).toBe(1);
    expect(a.victim()).toBe(1); // |T1| = 0: T2's LRU
    a.remove(1); // B2 [1]
    a.admit(0); // ghost -> T2
    expect(a.t2.toArray()).toEqual([0]);
    a.miss(1);
    expect(a.p).toBe(0);
  });

  it('pages blocks to DRAM and back on misses, losslessly', () => {
    // prompt 12 = blocks 0..2, block 3 at step 0; budget 2. Uses: block 0 (prefill, step 0), block 2 (step 1),
    // block 0 (step 2). Step 2: 2 is a B1 ghost hit (p 0 -> 1), T2's LRU (0) leaves; step 3: 0 is a B2 ghost
    // hit (p 1 -> 0), T1's LRU (3) leaves.
    const r0 = [0.7, 0.1, 0.1, 0.1];
    const rows = [r0, [0.1, 0.1, 0.7, 0.1], r0, r0];
    const r = replayPolicy(arc, 2, { prompt: 12, steps: 4, layers: 1, massOf: (s) => rows[s], options: { use_threshold: 0.5 } });
    expect([-1, 0, 1, 2, 3].map((s) => r.acts('demote:dram:16', s))).toEqual([['0:1'], ['0:2'], [], ['0:0'], ['0:3']]);
    expect([0, 1, 2, 3].map((s) => r.acts('promote', s))).toEqual([[], [], ['0:2'], ['0:0']]);
    expect(r.tiers(0)).toEqual([0, 1, 0, 1]);
    expect(r.results.every((x) => x.recall[0] === 1)).toBe(true);
  });
});

describe('flexgen-static', () => {
  it('places a fixed share of blocks per tier by position and never revises it', () => {
    // 10 blocks, budget 3 -> HBM (3 - 1) / 10 = 0.2, DRAM 50% of the rest = 0.4, NVMe 0.4
    const r = replayPolicy(flexgenStatic, 3, { prompt: 36, steps: 1, layers: 1, options: { dram_percent: 50 } });
    expect(r.tiers(0)).toEqual([1, 2, 0, 1, 2, 1, 2, 0, 1, 0]);
    expect(r.log.filter((a) => a.step >= 0 && a.what.startsWith('demote'))).toEqual([]);
    expect(r.results[0].recall[0]).toBe(1);
  });
});
