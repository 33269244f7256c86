/**
 * LRU offload: lossless tiering. HBM holds at most the budget's worth of blocks per layer; the
 * least recently used are demoted to host DRAM (FP16) and still attended — the executor streams
 * them in for each layer, ahead of time when `prefetch` is on (one layer ahead, as offloading
 * engines such as FlexGen do) or on demand. A block is "used" at a step when its attention mass is at
 * least `use_threshold` of that row's maximum; a used offloaded block is promoted back to HBM.
 */
import { checkLowerTier } from './lower-tier.js';
import { DenseList } from '../common/dense-list.js';
import type { CacheView } from './cache-view.js';
import type { Actions, Observation, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  use_threshold: number;
  offload_tier: string;
  prefetch: boolean;
}

export const lruOffload: PolicyDefinition<Options> = {
  name: 'lru-offload',
  description: 'Lossless: least recently used blocks (by attention use) are offloaded to DRAM and streamed back for attention; used blocks are promoted back to HBM.',
  source: 'classic LRU over attention use; layer-ahead streaming as in FlexGen (Sheng et al., ICML 2023)',
  options: [
    { name: 'use_threshold', type: 'number', default: 0.01, min: 0, max: 1, description: 'a block is used when its mass >= this share of the row maximum' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier that receives demoted blocks (e.g. dram, cxl, nvme)' },
    { name: 'prefetch', type: 'boolean', default: true, description: 'stage the next layer\'s offloaded blocks while this layer computes' },
  ],
  create(o, setup) {
    checkLowerTier('lru-offload', 'offload_tier', o.offload_tier, setup.tiers);
    const lists = Array.from({ length: setup.layers }, () => new DenseList(setup.maxBlocks));
    const wanted: number[][] = Array.from({ length: setup.layers }, () => []);
    const seen = new Int32Array(setup.layers);
    // observe's mark per listed block (cleared after use)
    const listed = new Uint8Array(setup.maxBlocks);
    return {
      name: 'lru-offload',
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const lru = lists[l];
        const cache = v.cache;
        const hbm = 0;
        // blocks created since the last look are the newest: most recently used
        for (let b = seen[l]; b < cache.created[l]; b++) if (cache.tierOf(l, b) === hbm) lru.touch(b);
        seen[l] = cache.created[l];
        const budget = Math.max(1, v.budgetBlocks);
        for (const b of wanted[l]) {
          if (cache.tierOf(l, b) <= 0) continue; // gone, or already resident
          if (cache.countIn(l, hbm) >= budget && !demoteOldest(lru, cache, act, l, o.offload_tier)) break;
          if (act.promote(l, b)) lru.touch(b);
        }
        wanted[l].length = 0;
        const want = v.newBlock ? budget - 1 : budget;
        while (cache.countIn(l, hbm) > want && demoteOldest(lru, cache, act, l, o.offload_tier));
        if (o.prefetch) act.prefetchOffloaded(l + 1 < v.layers ? l + 1 : 0);
      },
      observe(obs: Observation) {
        const l = obs.layer;
        const lru = lists[l];
        const { idx, mass, attended } = obs;
        let max = obs.uniform;
        for (let i = 0; i < mass.length; i++) if (mass[i] > max) max = mass[i];
        const thr = o.use_threshold * max;
        const want = wanted[l];
        if (idx === null) {
          for (let b = 0; b < obs.nBlocks; b++) if (mass[b] >= thr && mass[b] > 0) use(lru, want, attended, b);
        } else {
          for (let i = 0; i < idx.length; i++) if (mass[i] >= thr && mass[i] > 0) use(lru, want, attended, idx[i]);
          if (obs.uniform >= thr && obs.uniform > 0) {
            for (let i = 0; i < idx.length; i++) listed[idx[i]] = 1;
            for (let b = 0; b < obs.nBlocks; b++) if (!listed[b]) use(lru, want, attended, b);
            for (let i = 0; i < idx.length; i++) listed[idx[i]] = 0;
          }
        }
      },
    };
  },
};

/** Demote the least recently used unpinned block of layer l; false when there is none or the demotion is refused. */
function demoteOldest(lru: DenseList, cache: CacheView, act: Actions, l: number, tier: string): boolean {
  let victim = -1;
  for (let id = lru.oldest(); id >= 0; id = lru.newer(id)) {
    if (!cache.isPinned(l, id)) {
      victim = id;
      break;
    }
  }
  if (victim < 0) return false;
  lru.remove(victim);
  return act.demote(l, victim, tier, 16);
}

/** A use of block b: attended, it becomes the most recent (or is wanted back in HBM when not resident). */
function use(lru: DenseList, wanted: number[], attended: Uint8Array, b: number): void {
  if (!attended[b]) return;
  if (lru.has(b)) lru.touch(b);
  else wanted.push(b);
}
