/** SynapseVM's outlier bound: mean + k·σ of the live blocks' key norms, the same with kept sums as summed from the first block. */
import { Buffer } from 'node:buffer';
import { describe, expect, it, vi } from 'vitest';
import type { PolicyView } from '../../policies/policy.js';
import { OutlierBound } from '../../policies/synapse-outlier-bound.js';
import { KVCache } from '../../sim/kv-cache.js';
import { tinyModel } from '../helpers/tiny.js';

const tiers = [{ name: 'hbm', capacityBytes: 1e9 }];
const view = (cache: KVCache, layer: number, keyNorms: Float32Array, keyNormsFrom?: number) => ({ layer, cache, keyNorms, keyNormsFrom }) as unknown as PolicyView;

/** the bound summed from the first block, as the definition reads */
function reference(cache: KVCache, l: number, norms: Float32Array, k: number): number {
  let n = 0;
  let sum = 0;
  let sq = 0;
  for (let b = 0; b < cache.created[l]; b++) {
    if (cache.tierOf(l, b) < 0) continue;
    n++;
    sum += norms[b];
    sq += norms[b] * norms[b];
  }
  if (n < 2) return Infinity;
  const mean = sum / n;
  return mean + k * Math.sqrt(Math.max(0, sq / n - mean * mean));
}

describe('synapse outlier bound', () => {
  it('is mean + k sigma of the live norms (hand-computed), Infinity below two live blocks', () => {
    const c = new KVCache(tinyModel, 4, 1, 16, tiers);
    const o = new OutlierBound(1, 16);
    const norms = new Float32Array([1, 2, 3, 4, 100]);
    c.create(0, 0, 16);
    expect(o.of(view(c, 0, norms), 2)).toBe(Infinity);
    for (let b = 1; b < 4; b++) c.create(0, 0, 16);
    // mean 2.5, variance 30/4 - 6.25 = 1.25
    expect(o.of(view(c, 0, norms), 2)).toBe(2.5 + 2 * Math.sqrt(1.25));
    // block 0 dropped: 2, 3, 4 (mean 3, variance 29/3 - 9)
    c.drop(0, 0);
    expect(o.of(view(c, 0, norms), 1)).toBe(3 + Math.sqrt(29 / 3 - 9));
  });

  it('equals the bound summed from the first block over growing layers, changed norms, drops and new arrays', () => {
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const M = 300;
    const c = new KVCache(tinyModel, 4, 2, M, tiers);
    const o = new OutlierBound(2, M);
    let norms = [new Float32Array(M), new Float32Array(M)];
    let continued = 0;
    for (let step = 0; step < 400; step++) {
      const l = step % 2;
      if (c.created[l] < M && rnd() < 0.6) c.create(l, 0, 16);
      const n = c.created[l];
      if (n === 0) continue;
      // the last block's norm changes at every step; now and then an earlier one, a fresh array, or (late) a drop
      norms[l][n - 1] = 1 + rnd() * 10;
      const r = rnd();
      if (r < 0.05) norms[l][Math.floor(rnd() * n)] = rnd() * 40;
      else if (r < 0.07 && step > 300) {
        const d = Math.floor(rnd() * n);
        if (c.tierOf(l, d) >= 0) c.drop(l, d);
      }
      else if (r < 0.09) norms = norms.map((a, i) => (i === l ? Float32Array.from(a) : a));
      const k = 1 + Math.floor(rnd() * 3);
      const before = (o as unknown as { upTo: Int32Array }).upTo[l];
      expect(o.of(view(c, l, norms[l]), k)).toBe(reference(c, l, norms[l], k));
      if (before > 1) continued++;
    }
    expect(continued).toBeGreaterThan(100);
  });

  it('with noted views, skips the byte compare only where keyNormsFrom says no kept norm changed: the same bound', () => {
    let seed = 17;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const M = 300;
    const c = new KVCache(tinyModel, 4, 2, M, tiers);
    const o = new OutlierBound(2, M, true);
    const norms = [new Float32Array(M), new Float32Array(M)];
    /** per layer: the first block whose norm changed since its previous decision (M: none) */
    const dirty = [0, 0];
    const compare = vi.spyOn(Buffer.prototype, 'compare');
    let decisions = 0;
    let earlier = 0;
    for (let step = 0; step < 600; step++) {
      const l = step % 2;
      if (c.created[l] < M && rnd() < 0.6) c.create(l, 0, 16);
      const n = c.created[l];
      if (n === 0) continue;
      // the last block's norm changes (as the replay writes the newest block's), now and then an earlier one
      norms[l][n - 1] = 1 + rnd() * 10;
      dirty[l] = Math.min(dirty[l], n - 1);
      if (rnd() < 0.08) {
        const b = Math.floor(rnd() * n);
        norms[l][b] = rnd() * 40;
        dirty[l] = Math.min(dirty[l], b);
        earlier++;
      }
      const v = view(c, l, norms[l], dirty[l]);
      dirty[l] = M;
      o.note(v);
      decisions++;
      // (not every decision asks for the bound)
      if (rnd() < 0.3) continue;
      const k = 1 + Math.floor(rnd() * 3);
      expect(o.of(v, k)).toBe(reference(c, l, norms[l], k));
    }
    // most calls continued without a compare
    expect(compare.mock.calls.length).toBeLessThan(decisions / 4);
    expect(earlier).toBeGreaterThan(20);
    compare.mockRestore();
  });
});
