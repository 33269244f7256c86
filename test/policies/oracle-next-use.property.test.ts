/**
 * Property: the next-use index (each step's changes recorded, next uses filled backward from the
 * changes only) gives every step's used blocks, their next uses and each layer's first uses exactly
 * as a plain scan over every later step does, over generated use lists: sets that mostly stay from
 * one step to the next (as the oracle's do), sets that change wholly, empty layers and empty steps.
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { NextUseIndex } from '../../policies/next-use-index.js';

/** a small deterministic generator (mulberry32, hil/rng.ts) */
const rng = (seed: number): (() => number) => makeRng(seed).next;

/** steps x layers of ascending block lists below M: each block of a set leaves with p, each other joins with q */
function uses(seed: number, steps: number, L: number, M: number, p: number, q: number): number[][][] {
  const r = rng(seed);
  const sets = Array.from({ length: L }, () => new Set<number>());
  const out: number[][][] = [];
  for (let t = 0; t < steps; t++) {
    out.push(
      sets.map((s) => {
        for (let b = 0; b < M; b++) {
          if (s.has(b) ? r() < p : r() < q) {
            if (s.has(b)) s.delete(b);
            else s.add(b);
          }
        }
        return [...s].sort((a, b) => a - b);
      }),
    );
  }
  return out;
}

/** next step after t at which layer l uses b, or the number of steps */
function nextAfter(u: number[][][], t: number, l: number, b: number): number {
  for (let s = t + 1; s < u.length; s++) if (u[s][l].includes(b)) return s;
  return u.length;
}

describe('next-use index over generated use lists', () => {
  const cases = [
    { seed: 1, steps: 40, L: 3, M: 30, p: 0.05, q: 0.03 },
    { seed: 2, steps: 25, L: 2, M: 12, p: 0.5, q: 0.5 },
    { seed: 3, steps: 30, L: 4, M: 20, p: 0.9, q: 0.1 },
    { seed: 4, steps: 1, L: 2, M: 8, p: 0.3, q: 0.3 },
    { seed: 5, steps: 20, L: 1, M: 5, p: 0.2, q: 0.05 },
    // long runs of the set between changes (copied as a whole)
    { seed: 6, steps: 12, L: 2, M: 300, p: 0.01, q: 0.02 },
  ];
  // records in memory, in the spill file from the start, moved there part way
  for (const c of cases) for (const memoryBytes of [64 << 20, 0, 256]) {
    it(`seed ${c.seed}: ${c.steps} steps, ${c.L} layers, ${c.M} blocks, ${memoryBytes} bytes of records in memory`, () => {
      const u = uses(c.seed, c.steps, c.L, c.M, c.p, c.q);
      const ix = new NextUseIndex(c.L, c.M, u.map((ls, t) => ({ nBlocks: c.M - (t % 3), uses: ls.map((x) => Int32Array.from(x)) })), memoryBytes);
      expect(ix.never).toBe(c.steps);
      const first = (l: number, b: number) => (u[0][l].includes(b) ? 0 : nextAfter(u, 0, l, b));
      for (let l = 0; l < c.L; l++) for (let b = 0; b < c.M; b++) expect(ix.nextUseOf(l, b)).toBe(first(l, b));
      for (let t = 0; t < c.steps; t++) {
        const r = ix.load(t);
        expect(r.nBlocks).toBe(c.M - (t % 3));
        for (let l = 0; l < c.L; l++) {
          expect([...r.blocks.subarray(r.from[l], r.from[l + 1])]).toEqual(u[t][l]);
          expect([...r.next.subarray(r.from[l], r.from[l + 1])]).toEqual(u[t][l].map((b) => nextAfter(u, t, l, b)));
          // the changes step t made (from t - 1) and the ones step t + 1 makes, with the dropped blocks' next uses
          const now = ix.changesOf(t)!;
          const before = t > 0 ? u[t - 1][l] : [];
          expect([...now.added.subarray(now.addFrom[l], now.addFrom[l + 1])]).toEqual(u[t][l].filter((b) => !before.includes(b)));
          expect([...now.dropped.subarray(now.dropFrom[l], now.dropFrom[l + 1])]).toEqual(before.filter((b) => !u[t][l].includes(b)));
          const after = ix.changesOf(t + 1);
          if (t + 1 === c.steps) expect(after).toBeNull();
          else {
            const gone = u[t][l].filter((b) => !u[t + 1][l].includes(b));
            expect([...after!.dropped.subarray(after!.dropFrom[l], after!.dropFrom[l + 1])]).toEqual(gone);
            expect([...after!.slots.subarray(after!.dropFrom[l], after!.dropFrom[l + 1])]).toEqual(gone.map((b) => nextAfter(u, t, l, b)));
            expect([...after!.added.subarray(after!.addFrom[l], after!.addFrom[l + 1])]).toEqual(u[t + 1][l].filter((b) => !u[t][l].includes(b)));
          }
          ix.advance(l, t);
          // every block's first use at or after t + 1
          for (let b = 0; b < c.M; b++) {
            const want = t + 1 < c.steps && u[t + 1][l].includes(b) ? t + 1 : nextAfter(u, t, l, b);
            expect(ix.nextUseOf(l, b)).toBe(want);
            // the marks the oracle reads as "needed at the layer's step"
            expect(ix.usedNow[l * c.M + b]).toBe(t + 1 < c.steps && u[t + 1][l].includes(b) ? 1 : 0);
          }
        }
      }
    });
  }

  /** steps given as their changes from the step before (the first from empty sets) */
  function asChanges(u: number[][][], nBlocks: (t: number) => number) {
    return u.map((ls, t) => {
      const added: number[] = [];
      const dropped: number[] = [];
      const addFrom = [0];
      const dropFrom = [0];
      ls.forEach((set, l) => {
        const before = t > 0 ? u[t - 1][l] : [];
        added.push(...set.filter((b) => !before.includes(b)));
        dropped.push(...before.filter((b) => !set.includes(b)));
        addFrom.push(added.length);
        dropFrom.push(dropped.length);
      });
      const changes = { addFrom: Int32Array.from(addFrom), added: Int32Array.from(added), dropFrom: Int32Array.from(dropFrom), dropped: Int32Array.from(dropped) };
      return { nBlocks: nBlocks(t), changes };
    });
  }

  for (const c of cases) for (const memoryBytes of [64 << 20, 0]) {
    it(`seed ${c.seed}: built from changes and moved by seek, the same changes, next uses, marks and counts as from uses (${memoryBytes} bytes in memory)`, () => {
      const u = uses(c.seed, c.steps, c.L, c.M, c.p, c.q);
      const ix = new NextUseIndex(c.L, c.M, asChanges(u, (t) => c.M - (t % 3)), memoryBytes);
      const ref = new NextUseIndex(c.L, c.M, u.map((ls, t) => ({ nBlocks: c.M - (t % 3), uses: ls.map((x) => Int32Array.from(x)) })), memoryBytes);
      expect(ix.never).toBe(c.steps);
      expect(ix.blockBound).toBe(Math.max(0, ...u.flat(2).map((b) => b + 1)));
      const same = (a: ReturnType<NextUseIndex['changesOf']>, b: ReturnType<NextUseIndex['changesOf']>) => {
        if (b === null) return expect(a).toBeNull();
        for (const k of ['addFrom', 'added', 'dropFrom', 'dropped', 'slots'] as const) expect([...a![k]]).toEqual([...b[k]]);
      };
      for (let t = 0; t < c.steps; t++) {
        ix.seek(t);
        ref.load(t);
        expect(ix.nBlocksNow).toBe(c.M - (t % 3));
        same(ix.changesOf(t), ref.changesOf(t));
        same(ix.changesOf(t + 1), ref.changesOf(t + 1));
        for (let l = 0; l < c.L; l++) {
          expect(ix.usedCount[l]).toBe(u[t][l].length);
          ix.advance(l, t);
          ref.advance(l, t);
          for (let b = 0; b < c.M; b++) {
            expect(ix.nextUseOf(l, b)).toBe(ref.nextUseOf(l, b));
            expect(ix.usedNow[l * c.M + b]).toBe(ref.usedNow[l * c.M + b]);
          }
          expect(ix.usedCount[l]).toBe(t + 1 < c.steps ? u[t + 1][l].length : 0);
        }
      }
    });
  }

  it('seek passes steps without their lists: load() after it is refused; the forms are not mixed; changes are checked', () => {
    const u = uses(9, 6, 2, 10, 0.3, 0.3);
    const ix = new NextUseIndex(2, 10, asChanges(u, () => 10));
    ix.seek(2);
    expect(() => ix.load(3)).toThrow(/used lists asked after seek\(\) passed steps without them/);
    expect(() => ix.seek(1)).toThrow(/step 1 asked after step 2/);
    const [first, second] = asChanges(u, () => 10);
    expect(() => new NextUseIndex(2, 10, [first, { nBlocks: 10, uses: u[1].map((x) => Int32Array.from(x)) }])).toThrow(/step 1 is given as uses, the steps before it as changes/);
    const one = (added: number[], dropped: number[]) => ({ nBlocks: 4, changes: { addFrom: Int32Array.from([0, added.length]), added: Int32Array.from(added), dropFrom: Int32Array.from([0, dropped.length]), dropped: Int32Array.from(dropped) } });
    expect(() => new NextUseIndex(1, 4, [one([1, 0], [])])).toThrow(/step 0 layer 0: blocks not strictly ascending \(1 then 0\)/);
    expect(() => new NextUseIndex(1, 4, [one([4], [])])).toThrow(/step 0 layer 0: block 4 outside 0..3/);
    expect(() => new NextUseIndex(1, 4, [one([1], []), one([1], [])])).toThrow(/step 1 layer 0: block 1 added while used/);
    expect(() => new NextUseIndex(1, 4, [one([1], []), one([], [2])])).toThrow(/step 1 layer 0: block 2 dropped while not used/);
    expect(() => new NextUseIndex(1, 4, [one([1], []), one([1], [1])])).toThrow(/step 1 layer 0: block 1 added while used/);
    expect(() => new NextUseIndex(1, 4, [one([], [1])])).toThrow(/step 0 layer 0: block 1 dropped while not used/);
    expect(second.nBlocks).toBe(10);
  });

  it('a step may be skipped by load (its changes are still applied)', () => {
    const u = uses(7, 12, 2, 16, 0.2, 0.1);
    const ix = new NextUseIndex(2, 16, u.map((ls) => ({ nBlocks: 16, uses: ls.map((x) => Int32Array.from(x)) })));
    for (const t of [0, 3, 4, 9, 11]) {
      const r = ix.load(t);
      for (let l = 0; l < 2; l++) expect([...r.blocks.subarray(r.from[l], r.from[l + 1])]).toEqual(u[t][l]);
    }
  });

  it('gives the changes of the loaded step and the next one only', () => {
    const u = uses(8, 6, 1, 8, 0.3, 0.3);
    const ix = new NextUseIndex(1, 8, u.map((ls) => ({ nBlocks: 8, uses: ls.map((x) => Int32Array.from(x)) })));
    expect(() => ix.changesOf(0)).toThrow(/changes of step 0 asked with step none loaded/);
    ix.load(2);
    expect(ix.changesOf(2)!.step).toBe(2);
    expect(ix.changesOf(3)!.step).toBe(3);
    expect(() => ix.changesOf(1)).toThrow(/changes of step 1 asked with step 2 loaded \(the loaded step or the next one\)/);
    expect(() => ix.changesOf(4)).toThrow(/step 4/);
    // next uses are written when first read, before the next load
    const r = ix.load(3);
    ix.load(4);
    expect(() => r.next).toThrow(/next uses of step 3 asked after step 4 was loaded/);
  });

  it('rejects blocks out of order', () => {
    expect(() => new NextUseIndex(1, 4, [{ nBlocks: 4, uses: [Int32Array.from([1, 3])] }, { nBlocks: 4, uses: [Int32Array.from([2, 1])] }])).toThrow(
      /step 1 layer 0: blocks not strictly ascending \(2 then 1\)/,
    );
    expect(() => new NextUseIndex(1, 4, [{ nBlocks: 4, uses: [Int32Array.from([1, 1])] }])).toThrow(/step 0 layer 0: blocks not strictly ascending \(1 then 1\)/);
  });
});
