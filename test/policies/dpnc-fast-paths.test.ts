/**
 * DPNC's shortcuts against the computations they skip, replayed side by side: the same actions, in
 * the same order, and the same report.
 */
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { dpnc } from '../../policies/dpnc.js';
import { firstBitsChanged } from '../../policies/dpnc-features.js';
import type { Policy, PolicyDefinition } from '../../policies/policy.js';
import { denseSteps, tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

function capturing() {
  const box: { policy?: Policy } = {};
  const def: PolicyDefinition<any> = { ...dpnc, create: (o, s) => (box.policy = dpnc.create(o, s)) };
  return { def, box };
}

/**
 * A trace whose key norms change between steps, old blocks among them, and tell the pages needed: a
 * few hot blocks (one of them swapped for another at some steps) get most of the mass and a high norm.
 * Rows carry either every norm (normFrom 0) or only those from the first one that changed, as a
 * captured trace does.
 */
function normTrace(seed: number, suffix: boolean) {
  const rng = seedrandom(`dpnc-norms-${seed}`);
  const h = { ...tinyHeader(64, 64, 2), encoding: 'topk' as const, topk: 3 };
  const hot = [[1, 5, 9], [2, 6, 12]];
  const before: number[][] = [[], []];
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n)).map((s) => {
    for (let l = 0; l < h.layers; l++) {
      const la = s.layers[l];
      const n = la.nBlocks;
      if (s.step > 0 && rng() < 0.5) hot[l][Math.floor(rng() * 3)] = Math.floor(rng() * n);
      const listed = [...new Set(hot[l])].sort((a, b) => a - b);
      const nl = Array.from({ length: n }, (_, b) => (listed.includes(b) ? 9 : 2 + (b % 2)));
      const m = listed.map(() => 0.5 + rng());
      const total = m.reduce((p, q) => p + q, 0) * 1.25;
      la.idx = Uint32Array.from(listed);
      la.mass = Float32Array.from(m, (x) => x / total);
      la.remainder = 0.2;
      let from = 0;
      if (suffix && s.step > 0) {
        from = n - 1;
        for (let b = 0; b < before[l].length; b++) if (nl[b] !== before[l][b]) from = Math.min(from, b);
      }
      before[l] = nl;
      la.normFrom = from;
      la.norms = Float32Array.from(nl.slice(from, n));
    }
    return s;
  });
  return { h, trace };
}

describe('dpnc compares the key norms from the view keyNormsFrom', () => {
  for (const [seed, suffix] of [[1, false], [2, true], [3, true], [4, true]] as [number, boolean][]) {
    it(`the same run as comparing every norm, seed ${seed}${suffix ? ', rows with the changed norms only' : ''}`, () => {
      const { h, trace } = normTrace(seed, suffix);
      const run = (hint: (v: { keyNormsFrom?: number; keyNorms: Float32Array }) => void) => {
        const { def, box } = capturing();
        const options = { hbm_age_steps: 2, tree_grace: 10, tree_delta: 0.01, tree_tau: 0.2, explore: 1 };
        const r = replayPolicy(def, 8, { fullHeader: h, trace, options, beforeDecide: (v) => hint(v as never) });
        const tree = (box.policy as unknown as { predictor: { structure(): unknown; seen: number; correct: number } }).predictor;
        return { log: r.log.map((a) => `${a.step}/${a.layer} ${a.what} ${a.args.join(',')} ${a.ok}`), report: box.policy!.report!(), tree: { splits: tree.structure(), seen: tree.seen, correct: tree.correct } };
      };
      const hints: number[] = [];
      const fast = run((v) => hints.push(v.keyNormsFrom ?? -1));
      // the reference: no hint, every norm compared
      const full = run((v) => {
        (v as { keyNormsFrom?: number }).keyNormsFrom = 0;
      });
      expect(fast.log).toEqual(full.log);
      expect(fast.report).toEqual(full.report);
      expect(fast.tree).toEqual(full.tree);
      // the hints skipped something, and the norms of old blocks changed under them
      if (suffix) expect(hints.filter((x) => x > 0).length).toBeGreaterThan(20);
      // a hint past the changed norms is not the same run (the norms reach the tree)
      const lying = run((v) => {
        (v as { keyNormsFrom?: number }).keyNormsFrom = v.keyNorms.length;
      });
      expect(lying).not.toEqual(full);
    });
  }

  it('firstBitsChanged from an index is the first change at or past it', () => {
    const rng = seedrandom('first-bits-from');
    const wrong: number[][] = [];
    for (let trial = 0; trial < 3000; trial++) {
      const len = 1 + Math.floor(rng() * 40);
      const offset = Math.floor(rng() * 2);
      const buf = new ArrayBuffer(4 * (len + 4));
      const now = new Float32Array(buf, 4 * offset, len);
      const kept = new Float32Array(len + 2);
      for (let b = 0; b < len + 2; b++) kept[b] = [0, -0, 1, 2.5, Number.NaN][Math.floor(rng() * 5)];
      now.set(kept.subarray(0, len));
      for (let k = Math.floor(rng() * 3); k > 0; k--) now[Math.floor(rng() * len)] = [0, -0, 3, 7][Math.floor(rng() * 4)];
      const nowBits = new Int32Array(buf, now.byteOffset, len);
      const keptBits = new Int32Array(kept.buffer);
      const words = now.byteOffset % 8 === 0 ? new Float64Array(buf, now.byteOffset, len >> 1) : null;
      const keptWords = new Float64Array(kept.buffer, 0, (len + 2) >> 1);
      // (every index below from equal, as the caller knows)
      const from = Math.floor(rng() * (len + 2));
      for (let b = 0; b < Math.min(from, len); b++) nowBits[b] = keptBits[b];
      let expected = -1;
      for (let b = from; b < len; b++) {
        if (nowBits[b] !== keptBits[b]) {
          expected = b;
          break;
        }
      }
      const got = firstBitsChanged(nowBits, keptBits, words, keptWords, from);
      if (got !== expected) wrong.push([trial, from, got, expected]);
    }
    expect(wrong).toEqual([]);
  });
});
