/**
 * The engine behind the classic baselines (fifo, lru, lfu, arc): per layer, HBM holds at most the
 * budget's worth of blocks; a replacer (replacers.ts) names the victim. Two modes:
 * - drop: a victim is evicted for good (KV eviction; recall falls, nothing moves);
 * - offload: a victim is demoted to a lower tier at FP16 and stays attended (streamed back one layer
 *   ahead); an offloaded block that is used (mass >= use_threshold × the row max) is a miss and is
 *   promoted back at the layer's next decision, after the replacer makes room (lossless paging).
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, Observation, OptionSpec, PolicyDefinition, PolicySetup, PolicyView } from './policy.js';
import type { Replacer } from './replacers.js';

export interface ClassicOptions extends Record<string, unknown> {
  mode: string;
  use_threshold: number;
  offload_tier: string;
}

export function classicOptions(defaultMode: 'drop' | 'offload', modes: string[] = ['drop', 'offload']): OptionSpec[] {
  return [
    { name: 'mode', type: 'string', default: defaultMode, choices: modes, description: 'drop: victims are evicted; offload: victims go to offload_tier (FP16) and stay attended' },
    { name: 'use_threshold', type: 'number', default: 0.01, min: 0, max: 1, description: 'a block is used when its mass >= this share of the row maximum' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier receiving victims in offload mode' },
  ];
}

export function classicCache(name: string, o: ClassicOptions, setup: PolicySetup, make: () => Replacer) {
  const offload = o.mode === 'offload';
  if (offload) checkLowerTier(name, 'offload_tier', o.offload_tier, setup.tiers);
  const L = setup.layers;
  const reps = Array.from({ length: L }, make);
  const admitted = new Int32Array(L);
  const misses: number[][] = Array.from({ length: L }, () => []);
  // uses of blocks observed before the engine admitted them (the prefill observation)
  const early: number[][] = Array.from({ length: L }, () => []);
  // the cache as seen at the last decision (observe gets no view)
  let seen: PolicyView['cache'] | null = null;
  // observe's scratch: the used blocks and their masses, their order, and a mark per listed block
  const usedBlock = new Int32Array(setup.maxBlocks);
  const usedMass = new Float64Array(setup.maxBlocks);
  const order = new Int32Array(setup.maxBlocks);
  const listed = new Uint8Array(setup.maxBlocks);
  const lightestFirst = (x: number, y: number) => usedMass[x] - usedMass[y] || usedBlock[x] - usedBlock[y];
  return {
    name,
    decide(v: PolicyView, act: Actions) {
      const l = v.layer;
      const cache = v.cache;
      seen = cache;
      const rep = reps[l];
      const K = Math.max(1, v.budgetBlocks);
      // blocks created since the last look entered HBM in creation order
      for (let b = admitted[l]; b < cache.created[l]; b++) if (cache.tierOf(l, b) === 0) rep.admit(b);
      admitted[l] = cache.created[l];
      for (const b of early[l]) if (cache.tierOf(l, b) === 0) rep.hit(b);
      early[l].length = 0;
      const tier = offload ? o.offload_tier : null;
      for (const b of misses[l]) {
        if (cache.tierOf(l, b) <= 0) continue;
        rep.miss(b);
        if (cache.countIn(l, 0) >= K && !removeOne(rep, act, l, tier)) break;
        if (act.promote(l, b)) rep.admit(b);
      }
      misses[l].length = 0;
      const want = v.newBlock ? K - 1 : K;
      while (cache.countIn(l, 0) > want && removeOne(rep, act, l, tier));
      if (v.newBlock) {
        rep.admit(v.nBlocks - 1);
        admitted[l] = v.nBlocks;
      }
      if (offload && v.step >= 0) act.prefetchOffloaded(l + 1 < L ? l + 1 : 0);
    },
    observe(obs: Observation) {
      const l = obs.layer;
      const rep = reps[l];
      const { idx, mass, attended, uniform } = obs;
      let max = uniform;
      for (let i = 0; i < mass.length; i++) if (mass[i] > max) max = mass[i];
      const thr = o.use_threshold * max;
      // simultaneous uses are applied lightest first, so the heaviest ends most recent
      // (the uses are written inline: a closure per call costs more than the loops here)
      let k = 0;
      if (idx === null) {
        for (let b = 0; b < obs.nBlocks; b++) {
          if (mass[b] >= thr && mass[b] > 0 && attended[b]) {
            usedBlock[k] = b;
            usedMass[k++] = mass[b];
          }
        }
      } else {
        for (let i = 0; i < idx.length; i++) {
          if (mass[i] >= thr && mass[i] > 0 && attended[idx[i]]) {
            usedBlock[k] = idx[i];
            usedMass[k++] = mass[i];
          }
        }
        if (uniform >= thr && uniform > 0) {
          for (let i = 0; i < idx.length; i++) listed[idx[i]] = 1;
          for (let b = 0; b < obs.nBlocks; b++) {
            if (!listed[b] && attended[b]) {
              usedBlock[k] = b;
              usedMass[k++] = uniform;
            }
          }
          for (let i = 0; i < idx.length; i++) listed[idx[i]] = 0;
        }
      }
      const ord = order;
      if (k <= 64) {
        // insertion sort by (mass, block): few uses, no comparator calls
        for (let i = 0; i < k; i++) {
          const m = usedMass[i];
          const blk = usedBlock[i];
          let j = i;
          while (j > 0) {
            const p = ord[j - 1];
            if (usedMass[p] < m || (usedMass[p] === m && usedBlock[p] < blk)) break;
            ord[j] = p;
            j--;
          }
          ord[j] = i;
        }
      } else {
        for (let i = 0; i < k; i++) ord[i] = i;
        ord.subarray(0, k).sort(lightestFirst);
      }
      for (let i = 0; i < k; i++) {
        const b = usedBlock[ord[i]];
        if (b >= admitted[l]) early[l].push(b);
        else if (seen && seen.tierOf(l, b) > 0) misses[l].push(b);
        else rep.hit(b);
      }
    },
  };
}

/** The replacer's victim leaves HBM: demoted to `tier` at FP16, or evicted (tier null); false when there is none or the action is refused. */
function removeOne(rep: Replacer, act: Actions, l: number, tier: string | null): boolean {
  const victim = rep.victim();
  if (victim < 0) return false;
  rep.remove(victim);
  return tier !== null ? act.demote(l, victim, tier, 16) : act.evict(l, victim);
}

/** Define a classic policy from a replacer factory. */
export function classicDefinition(
  name: string,
  description: string,
  source: string,
  defaultMode: 'drop' | 'offload',
  make: (setup: PolicySetup) => () => Replacer,
  modes?: string[],
): PolicyDefinition<ClassicOptions> {
  return {
    name,
    description,
    source,
    options: classicOptions(defaultMode, modes),
    create(o, setup) {
      return classicCache(name, o, setup, make(setup));
    },
  };
}
