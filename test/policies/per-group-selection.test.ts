/**
 * Policies defined per head (SnapKV, Quest, InfiniGen; H2O in test/sim/kv-groups.test.ts) select per
 * KV-head group and keep the union of the groups' top blocks, rank by rank, under the layer's budget.
 * One layer, two groups that disagree, 4-token blocks, prompt 24 tokens (blocks 0..5); decode steps
 * 0 and 1 have 7 blocks (block 6 is created at step 0):
 *            block:  0     1     2     3     4     5     6
 *   group 0        0.05  0.40  0.35  0.00  0.05  0.05  0.10
 *   group 1        0.05  0.00  0.35  0.40  0.05  0.05  0.10
 *   mean           0.05  0.20  0.35  0.20  0.05  0.05  0.10
 * Ranked per group (ties to the higher block): group 0: 1, 2, 5, 4, 0, 3; group 1: 3, 2, 5, 4, 0, 1.
 * Best (rank, group): 1 → (1, g0), 3 → (1, g1), 2 → (2, g0), 5 → (3, g0), 4 → (4, g0), 0 → (5, g0).
 * A selection of two keeps 1 and 3; on the mean it would keep 2 first.
 */
import { describe, expect, it } from 'vitest';
import { bestGroupRank } from '../../policies/group-rank.js';
import { infiniGen } from '../../policies/infinigen.js';
import { quest } from '../../policies/quest.js';
import { snapKv } from '../../policies/snapkv.js';
import { blocksFor, type TraceHeader, type TraceStep } from '../../traces/format.js';
import { tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

const g0 = [0.05, 0.4, 0.35, 0.0, 0.05, 0.05, 0.1];
const g1 = [0.05, 0.0, 0.35, 0.4, 0.05, 0.05, 0.1];
const h: TraceHeader = { ...tinyHeader(24, 2, 1), kv_groups: 2 };
const trace: TraceStep[] = [0, 1].map((s) => {
  const ctx = 25 + s;
  const n = blocksFor(ctx, 4);
  const row = (m: number[]) => ({ nBlocks: n, idx: null, mass: Float32Array.from(m), remainder: 0, normFrom: 0, norms: new Float32Array(n).fill(1) });
  return { step: s, contextTokens: ctx, layers: [row(g0), row(g1)] };
});
const blocks = (r: ReturnType<typeof replayPolicy>, what: string, step: number) => r.acts(what, step).map((x) => Number(x.split(':')[1]));

describe('selection across KV groups', () => {
  it('bestGroupRank gives each block its best (rank, group) key', () => {
    const cand = [0, 1, 2, 3, 4, 5];
    const out = bestGroupRank(cand, 6, 2, (g, b) => (g === 0 ? g0 : g1)[b]!, new Float64Array(6));
    // key = rank * 2 + group (rank from 0)
    expect(Array.from(out)).toEqual([8, 0, 2, 1, 6, 4]);
  });

  it('bestGroupRank equals the definition over generated candidates (ties, -0 and 0, infinities, any order)', () => {
    // the definition: per group, the candidates sorted by score descending, ties to the higher block
    const reference = (cand: number[], G: number, score: (g: number, b: number) => number) => {
      const out = cand.map(() => Infinity);
      for (let g = 0; g < G; g++) {
        const ord = cand.map((_, i) => i).sort((x, y) => score(g, cand[y]) - score(g, cand[x]) || cand[y] - cand[x]);
        ord.forEach((i, r) => (out[i] = Math.min(out[i], r * G + g)));
      }
      return out;
    };
    let x = 7;
    const rnd = (k: number) => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % k);
    // (1 + 2^-21 and 1 + 2^-22 share their upper 32 bits, their lower words on either side of 2^31)
    const palette = [0, -0, 1, 0.5, 0.5 + 1e-12, -3, Infinity, -Infinity, 1e-9, 2, 1 + 2 ** -21, 1 + 2 ** -22, -1 - 2 ** -21, -1 - 2 ** -22];
    for (let t = 0; t < 300; t++) {
      const n = 1 + rnd(t < 250 ? 40 : 700);
      const G = 1 + rnd(4);
      const blocks = new Set<number>();
      while (blocks.size < n) blocks.add(rnd(3 * n + 5));
      const cand = [...blocks]; // in draw order, not sorted
      // few distinct scores (many ties) in some trials, continuous ones in others
      const few = rnd(2) === 0;
      const table = Array.from({ length: G }, () => new Map(cand.map((b) => [b, few ? palette[rnd(palette.length)] : rnd(1000) / 7 - 50])));
      const score = (g: number, b: number) => table[g].get(b)!;
      const got = bestGroupRank(Int32Array.from(cand), n, G, score, new Float64Array(n));
      expect(Array.from(got)).toEqual(reference(cand, G, score));
    }
  });

  it('SnapKV keeps the window and the union of the groups\' top prompt blocks (1 and 3), dropping 0, 2, 4', () => {
    // window 4 tokens = block 5; kernel 1 (no pooling); budget 4, one block reserved for decoding:
    // the prompt keeps 3 blocks, the window and two voted ones
    const r = replayPolicy(snapKv, 4, { fullHeader: h, trace, options: { window_tokens: 4, kernel: 1 } });
    expect(blocks(r, 'evict', -1)).toEqual([0, 2, 4]);
    // recall: each group loses 0.05 + 0.35 + 0.05 (block 2 and the two light ones)
    expect(r.results.map((x) => +x.recall[0]!.toFixed(6))).toEqual([0.55, 0.55]);
  });

  it('Quest attends the newest page and the union of the groups\' top pages (1 and 3) at K = 3', () => {
    const r = replayPolicy(quest, 3, { fullHeader: h, trace, options: { dense_layers: 0 } });
    expect(blocks(r, 'skip', 0)).toEqual([0, 2, 4, 5]);
    // each group attends 0.40 + 0.10
    expect(+r.results[0]!.recall[0]!.toFixed(6)).toBe(0.5);
  });

  it('InfiniGen prefetches the union of the groups\' top predicted blocks (1 and 3) into a 2-block area', () => {
    // budget 4: anchors + recent = 2 blocks (0 and the newest), prefetch area 2; every offloaded block
    // is within alpha of a group's maximum, so the area takes the best ranks: 1 and 3
    const r = replayPolicy(infiniGen, 4, { fullHeader: h, trace });
    expect(blocks(r, 'prefetch', 0)).toEqual([1, 3]);
    expect(blocks(r, 'skip', 0)).toEqual([2, 4, 5]);
  });
});
