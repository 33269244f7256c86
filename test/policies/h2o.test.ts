import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { h2o, scatterAdd } from '../../policies/h2o.js';
import { blocksFor, type TraceStep } from '../../traces/format.js';
import { tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

describe('H2O score scatter', () => {
  it('equals the plain loop bit for bit, with unique and with repeated indices', () => {
    const rng = seedrandom('scatter');
    for (let trial = 0; trial < 300; trial++) {
      const M = 5 + Math.floor(rng() * 200);
      const k = Math.floor(rng() * 40);
      const repeats = trial % 2 === 1;
      const idx = new Uint32Array(k);
      const mass = new Float32Array(k);
      const pool = Array.from({ length: M }, (_, i) => i);
      for (let i = 0; i < k; i++) {
        idx[i] = repeats ? Math.floor(rng() * Math.min(M, 6)) : pool.splice(Math.floor(rng() * pool.length), 1)[0]!;
        mass[i] = Math.fround(rng() / 7);
      }
      const base = Math.floor(rng() * 3) * M;
      const u = rng() / 1000;
      const a = Float64Array.from({ length: 3 * M }, () => rng());
      const b = a.slice();
      scatterAdd(a, base, idx, mass, u);
      for (let i = 0; i < k; i++) b[base + idx[i]!] += mass[i]! - u;
      expect([...a]).toEqual([...b]);
    }
  });
});

describe('H2O scores', () => {
  it('a block listed in the prefill observation before it exists does not accumulate (hand-computed victim)', () => {
    // block size 4, prompt 8 tokens (blocks 0, 1), budget 4 blocks: 1 sink block, a 2-block window.
    // Step 0 (9 tokens) lists blocks 0..2 with masses 0.2 / 0.3 / 0.5; the prefill sees that step while
    // block 2 does not exist yet. Steps 1..8 give 0.1 / 0.3 / 0.25 to blocks 0..2 (the rest evenly).
    // Step 8 (17 tokens, 5 blocks) must evict one of the out-of-window blocks 1 and 2:
    //   block 1: 0.3 (prefill) + 0.3 (step 0) + 7 x 0.3 = 2.7
    //   block 2: 0 (did not exist at prefill) + 0.5 + 7 x 0.25 = 2.25  -> block 2 goes
    // (counting the prefill's 0.5 for block 2 would give 2.75 and evict block 1 instead)
    const h = { ...tinyHeader(8, 9, 1), encoding: 'topk' as const };
    const trace: TraceStep[] = [];
    for (let s = 0; s < 9; s++) {
      const ctx = 8 + s + 1;
      const n = blocksFor(ctx, 4);
      const m = s === 0 ? [0.2, 0.3, 0.5] : [0.1, 0.3, 0.25, ...Array(n - 3).fill(0.35 / (n - 3))];
      trace.push({ step: s, contextTokens: ctx, layers: [{ nBlocks: n, idx: Uint32Array.from(m.keys()), mass: Float32Array.from(m), remainder: 0, normFrom: 0, norms: new Float32Array(n).fill(1) }] });
    }
    const r = replayPolicy(h2o, 4, { fullHeader: h, trace });
    expect(r.log.filter((a) => a.what === 'evict').map((a) => [a.step, a.args[1]])).toEqual([[8, 2]]);
  });
});
