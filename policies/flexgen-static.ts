/**
 * FlexGen-like static placement (Sheng et al., "FlexGen: High-Throughput Generative Inference of
 * LLMs with a Single GPU", ICML 2023): a fixed percentage of the KV cache on each tier (FlexGen's
 * cg/cc/cd percents), decided by position and never revised; the next layer's offloaded cache is
 * loaded while the current layer computes; optional 4-bit group-wise compression (G = 64).
 *
 * Here: HBM takes (budget − 1) / (final blocks) of each layer's blocks (one slot stays free for the
 * block being written), DRAM takes dram_percent of the rest, NVMe the remainder; block b goes to the
 * tier furthest below its share after b blocks (a deterministic interleave, like FlexGen's fixed
 * split of each layer's cache). A new block is written in HBM and placed at the next decision.
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  dram_percent: number;
  disk_tier: string;
  compress: boolean;
}

export const flexgenStatic: PolicyDefinition<Options> = {
  name: 'flexgen-static',
  description:
    'FlexGen-like static placement: a fixed share of every layer\'s KV per tier (HBM = the budget, DRAM = dram_percent of the rest, NVMe the remainder) by position, never revised; next layer\'s offloaded KV loaded one layer ahead; optional 4-bit G64 compression.',
  source: 'Sheng et al., FlexGen: High-Throughput Generative Inference of Large Language Models with a Single GPU, ICML 2023',
  options: [
    { name: 'dram_percent', type: 'number', default: 100, min: 0, max: 100, description: 'share (%) of the KV outside HBM placed in DRAM; the rest goes to disk_tier' },
    { name: 'disk_tier', type: 'string', default: 'nvme', description: 'tier for the remainder' },
    { name: 'compress', type: 'boolean', default: false, description: 'store every block at 4 bits (group 64), as FlexGen\'s KV compression' },
  ],
  create(o, setup) {
    checkLowerTier('flexgen-static', 'disk_tier', o.disk_tier, setup.tiers);
    const L = setup.layers;
    const fH = Math.max(0, Math.min(1, (setup.budgetBlocks - 1) / setup.maxBlocks));
    const fD = (1 - fH) * (o.dram_percent / 100);
    const shares = [fH, fD, 1 - fH - fD];
    const names = [setup.tiers[0], 'dram', o.disk_tier];
    if (!setup.tiers.includes('dram')) throw new Error('policy flexgen-static: the machine has no dram tier');
    // the placement of block b (same for every layer): tier 0, 1 or 2 of `names`
    const place: number[] = [];
    const count = [0, 0, 0];
    for (let b = 0; b < setup.maxBlocks; b++) {
      let best = 0;
      let deficit = -Infinity;
      for (let t = 0; t < 3; t++) {
        const d = shares[t] * (b + 1) - count[t];
        if (shares[t] > 0 && d > deficit + 1e-12) {
          deficit = d;
          best = t;
        }
      }
      place.push(best);
      count[best]++;
    }
    const bits = o.compress ? 4 : 16;
    const placedUpTo = new Int32Array(L);
    return {
      name: 'flexgen-static',
      quant: { groupSize: 64, rotation: false },
      placement: place,
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        for (let b = placedUpTo[l]; b < cache.created[l]; b++) {
          if (cache.tierOf(l, b) < 0) continue;
          const t = place[b];
          if (t === 0 && cache.tierOf(l, b) === 0 && cache.bitsOf(l, b) > bits) act.demote(l, b, names[0], bits);
          else if (t > 0) act.demote(l, b, names[t], bits);
        }
        placedUpTo[l] = cache.created[l];
        if (v.step >= 0) act.prefetchOffloaded(l + 1 < L ? l + 1 : 0);
      },
      observe() {},
    };
  },
};
