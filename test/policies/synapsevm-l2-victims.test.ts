/**
 * SynapseVM's L2 -> L3 demotions when L2 overflows by more than one block: from the kept saliency
 * order (ColdOrder.coldestK) where the victims demote alike, else a scan and a bottom-k selection.
 * Replayed against the scan alone (coldestK answering -2, as for a layer whose order is not kept):
 * the same actions at every decision (in any order within it), the same step timings and the same
 * tiers and bits.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { ColdOrder } from '../../policies/synapse-cold-order.js';
import { synapseVm } from '../../policies/synapsevm.js';
import { replayPolicy, type LoggedAction } from './harness.js';

/** a replay of `layers` layers whose masses have a few spikes per step (promotions from L2 and L3), some blocks outliers */
function run(seed: number, layers: number) {
  const r = makeRng(seed).next;
  const masses = new Map<string, number[]>();
  const massOf = (s: number, l: number, n: number) => {
    const key = `${s}:${l}`;
    let m = masses.get(key);
    if (!m) {
      m = Array.from({ length: n }, () => r() * 0.2 + 0.01);
      for (let k = 0; k < 3; k++) m[Math.floor(r() * n)] += 2 + r() * 4;
      const sum = m.reduce((a, b) => a + b, 0);
      m = m.map((x) => x / sum);
      masses.set(key, m);
    }
    return m;
  };
  const outliers = new Set(Array.from({ length: 6 }, () => Math.floor(r() * 60)));
  return replayPolicy(synapseVm, 8, {
    prompt: 4 * 40,
    steps: 60,
    layers,
    massOf,
    normOf: (_l, b) => (outliers.has(b) ? 40 : 1 + ((b * 7) % 5) / 10),
    options: { l2_factor: 1, promote_blocks: 2, promote_ratio: 3, outlier_sigma: 2, recent_ratio: 0.25 },
  });
}

/** the actions per (step, layer), each decision's sorted */
function decisions(log: LoggedAction[]): string[] {
  const by = new Map<string, string[]>();
  for (const a of log) {
    const k = `${a.step}:${a.layer}`;
    if (!by.has(k)) by.set(k, []);
    by.get(k)!.push(`${a.what}(${a.args.join(',')})=${a.ok}`);
  }
  return [...by].map(([k, acts]) => `${k} ${acts.sort().join(' ')}`);
}

describe('synapsevm: L2 victims of an overflow by several blocks', () => {
  afterEach(() => vi.restoreAllMocks());

  it('the same demotions, timings, tiers and bits as the scan', () => {
    let fromOrder = 0;
    for (let seed = 1; seed <= 8; seed++) {
      const layers = 1 + (seed % 2);
      const spy = vi.spyOn(ColdOrder.prototype, 'coldestK');
      const fast = run(seed, layers);
      fromOrder += spy.mock.results.filter((x, i) => (x.value as number) > 1 && (spy.mock.calls[i][3] as number) > 1).length;
      spy.mockRestore();
      vi.spyOn(ColdOrder.prototype, 'coldestK').mockReturnValue(-2);
      const scan = run(seed, layers);
      vi.restoreAllMocks();
      expect(decisions(fast.log)).toEqual(decisions(scan.log));
      expect(fast.results).toEqual(scan.results);
      for (let l = 0; l < layers; l++) {
        expect(fast.tiers(l)).toEqual(scan.tiers(l));
        expect(fast.bits(l)).toEqual(scan.bits(l));
      }
    }
    // the order did answer overflows of several blocks
    expect(fromOrder).toBeGreaterThan(20);
  });
});
