/**
 * Oracle — Belady's MIN over HBM residency with clairvoyant sparse attention. NOT deployable: it
 * reads the trace's future (definition.oracle = true) and is the bound every sweep compares against.
 *
 * Need. Block b is *needed* at (step t, layer l) when it is among the K' = ⌈top_factor · budget⌉
 * heaviest blocks of that row of the true attention, or among the step's L·K' blocks with the largest
 * attention share pooled over all L layers (`pooled`). Nothing is ever dropped: blocks outside HBM
 * stay in DRAM at FP16.
 *
 * Mechanism, per layer, one layer ahead (while the previous layer computes, as an offloading engine
 * would): the HBM-resident set after the step is the `budget` blocks whose next need lies soonest
 * (Belady's MIN: the resident block whose next use is furthest in the future is demoted; ties keep
 * what is already resident), the needed offloaded blocks that do not make it are staged (transient
 * copy) for this step, and offloaded blocks that are not needed are skipped from attention. When the
 * blocks to stage are at least bulk_share of the layer's offloaded blocks, the whole offloaded part is
 * staged in one transfer instead (each small copy pays the link latency) and attended.
 *
 * Exact sense of the bound. (a) At every (step, layer) the oracle attends a superset of the K'
 * heaviest blocks of the true attention, so its recall there is ≥ that of any policy attending at
 * most K' blocks in that layer at that step: H2O, StreamingLLM, SnapKV, Quest's sparse layers (its
 * first two layers are dense), InfiniGen (resident + prefetched ≤ budget), FIFO/LRU/LFU in drop mode.
 * (b) With `pooled`, it also attends the step's L·K' blocks of largest attention share pooled over
 * layers, so its recall averaged over layers at every step is ≥ that of any policy attending at most
 * L·K' blocks in total at that step, however it splits them over layers (PyramidKV). Both are checked
 * by a property test over generated traces. Policies that keep every block attended (offloading,
 * quantizing) have recall 1 and are measured against the oracle on TBT, stall and bytes instead; there
 * the oracle is a reference (Belady minimizes HBM misses of the needed set), not a proven lower bound.
 */
import { checkLowerTier } from './lower-tier.js';
import type { TraceHeader, TraceStep } from '../traces/format.js';
import { denseMass } from './dense-mass.js';
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  top_factor: number;
  pooled: boolean;
  bulk_share: number;
  offload_tier: string;
}

/** The needed blocks of every (step, layer), and per (layer, block) the ascending steps of need. */
export interface NeedTable {
  steps: number;
  layers: number;
  /** need[t * layers + l]: needed blocks of row (t, l), ascending */
  need: Int32Array[];
  /** uses[l][b]: steps at which block b of layer l is needed */
  uses: number[][][];
  nBlocks: Int32Array;
}

/**
 * Needed at (t, l): the topK heaviest blocks of the row, plus this layer's share of the step's pooled
 * top (layers x topK) blocks by attention share (mass / row total) when `pooled` is set. With several
 * KV groups a layer's weight of block b is the mean over the groups of its share of each group's
 * mass, (1/G)·Σ_g m_g[b] / Σ m_g: recall is the mean over groups of each group's attended share, so
 * the heaviest blocks by this weight give any number of attended blocks the highest recall.
 */
export function buildNeedTable(h: Pick<TraceHeader, 'layers' | 'kv_groups' | 'steps'>, steps: Iterable<TraceStep>, topK: number, pooled: boolean): NeedTable {
  const L = h.layers;
  const G = h.kv_groups;
  const need: Int32Array[] = [];
  const uses: number[][][] = Array.from({ length: L }, () => []);
  const nBlocks = new Int32Array(h.steps);
  let m = new Float64Array(0);
  let g1 = new Float64Array(0);
  for (const s of steps) {
    nBlocks[s.step] = s.layers[0].nBlocks;
    const sets: Set<number>[] = [];
    const all: [number, number, number][] = [];
    for (let l = 0; l < L; l++) {
      const n = s.layers[l * G].nBlocks;
      if (m.length < n) {
        m = new Float64Array(n);
        g1 = new Float64Array(n);
      }
      if (G === 1) denseMass(s.layers[l], m);
      else {
        m.fill(0, 0, n);
        for (let g = 0; g < G; g++) {
          denseMass(s.layers[l * G + g], g1);
          let t = 0;
          for (let b = 0; b < n; b++) t += g1[b];
          if (t > 0) for (let b = 0; b < n; b++) m[b] += g1[b] / t / G;
        }
      }
      let total = 0;
      for (let b = 0; b < n; b++) total += m[b];
      // the topK heaviest: sorting one row is fine here (precomputation, not a policy decision)
      const ord = Array.from({ length: n }, (_, b) => b).sort((a, b) => m[b] - m[a] || a - b);
      sets.push(new Set(ord.slice(0, topK)));
      if (pooled) for (let b = 0; b < n; b++) all.push([total > 0 ? m[b] / total : 0, l, b]);
    }
    if (pooled) {
      all.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
      for (let i = 0; i < Math.min(all.length, L * topK); i++) sets[all[i][1]].add(all[i][2]);
    }
    for (let l = 0; l < L; l++) {
      const set = [...sets[l]].sort((a, b) => a - b);
      need.push(Int32Array.from(set));
      const u = uses[l];
      for (const b of set) (u[b] ??= []).push(s.step);
    }
  }
  return { steps: h.steps, layers: L, need, uses, nBlocks };
}

/** First step > t at which (l, b) is needed, or Infinity. */
export function nextNeed(table: NeedTable, l: number, b: number, t: number): number {
  const u = table.uses[l][b];
  if (!u) return Infinity;
  let lo = 0;
  let hi = u.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (u[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo < u.length ? u[lo] : Infinity;
}

export const oracle: PolicyDefinition<Options> = {
  name: 'oracle',
  description:
    'ORACLE (reads the future; a bound, not deployable): Belady MIN over HBM residency — the resident block needed furthest in the future goes to DRAM — ' +
    'and clairvoyant sparse attention: attends every resident block plus the blocks needed at this step (the top top_factor x budget blocks of each layer by true mass, and the step\'s top blocks pooled over layers), staged one layer ahead; never drops.',
  source: "Belady, A study of replacement algorithms for a virtual-storage computer, IBM Systems Journal 1966 (MIN); oracle bound as in H2O's and Quest's ideal top-k baselines",
  oracle: true,
  options: [
    { name: 'top_factor', type: 'number', default: 1, min: 0, description: 'the top top_factor x budget blocks of each row are needed (the per-layer recall bound holds against policies attending at most that many per layer)' },
    { name: 'pooled', type: 'boolean', default: true, description: 'also need the step\'s top layers x top_factor x budget blocks pooled over layers (bounds the step\'s mean recall of policies with uneven layer budgets, e.g. PyramidKV)' },
    { name: 'bulk_share', type: 'number', default: 0.25, min: 0, max: 1, description: 'when the needed offloaded blocks of a layer are at least this share of its offloaded blocks, stage them all in one transfer (and attend them all)' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier holding the non-resident blocks (FP16)' },
  ],
  create(o, setup) {
    checkLowerTier('oracle', 'offload_tier', o.offload_tier, setup.tiers);
    const K = Math.max(1, setup.budgetBlocks);
    const futureSteps = setup.futureSteps;
    if (!futureSteps) throw new Error('policy oracle: needs the trace\'s future steps (setup.futureSteps), which the caller gives to oracle policies');
    // read ahead once, at the first decision (creating the policy reads nothing)
    let needTable: NeedTable | null = null;
    const tableOf = () => (needTable ??= buildNeedTable(setup.header, futureSteps(), Math.ceil(o.top_factor * K), o.pooled));
    const L = setup.layers;
    const needMark = new Uint8Array(setup.maxBlocks);
    // step at which a layer's offloaded blocks were all staged (then it attends all of them)
    const bulkAt = new Int32Array(L).fill(-1);
    let act: Actions | null = null;

    /** Make layer l's residency right for step t (blocks already created), staging needed leftovers. */
    const plan = (v: PolicyView, l: number, t: number, stage: boolean) => {
      const table = tableOf();
      const cache = v.cache;
      const created = cache.created[l];
      const willCreate = t < table.steps && table.nBlocks[t] > created ? 1 : 0;
      const need = t < table.steps ? table.need[t * L + l] : new Int32Array(0);
      for (const b of need) needMark[b] = 1;
      const cand: number[] = [];
      for (let b = 0; b < created; b++) {
        const tier = cache.tierOf(l, b);
        if (tier === 0 || (tier > 0 && needMark[b])) cand.push(b);
      }
      // Belady order: soonest need (this step counts), then the need after it, then what is resident
      const key = new Map<number, [number, number]>();
      for (const b of cand) key.set(b, [nextNeed(table, l, b, t - 1), nextNeed(table, l, b, t)]);
      const cmp = (x: number, y: number) => {
        const kx = key.get(x)!;
        const ky = key.get(y)!;
        return kx[0] - ky[0] || kx[1] - ky[1] || Number(cache.tierOf(l, x) !== 0) - Number(cache.tierOf(l, y) !== 0) || x - y;
      };
      cand.sort((x, y) => (cmp(x, y) < 0 ? -1 : cmp(x, y) > 0 ? 1 : 0));
      const slots = Math.max(0, K - willCreate);
      const keep = new Set(cand.slice(0, slots));
      for (const b of cand) if (cache.tierOf(l, b) === 0 && !keep.has(b)) act!.demote(l, b, o.offload_tier, 16);
      const toStage: number[] = [];
      for (const b of cand) {
        if (cache.tierOf(l, b) === 0) continue;
        if (keep.has(b) && act!.promote(l, b)) continue;
        if (needMark[b]) toStage.push(b);
      }
      if (stage && toStage.length > 0) {
        // one bulk transfer of everything offloaded beats many small ones (each pays the link latency)
        let offloaded = 0;
        for (let b = 0; b < created; b++) if (cache.tierOf(l, b) > 0) offloaded++;
        if (toStage.length >= o.bulk_share * offloaded) {
          act!.prefetchOffloaded(l);
          bulkAt[l] = t;
        } else for (const b of toStage) act!.prefetch(l, b);
      }
      for (const b of need) needMark[b] = 0;
    };

    return {
      name: 'oracle',
      decide(v: PolicyView, a: Actions) {
        act = a;
        const table = tableOf();
        const l = v.layer;
        if (v.step < 0) {
          plan(v, l, 0, false);
          return;
        }
        const t = v.step;
        const cache = v.cache;
        // with one layer there is no layer to hide behind: plan this layer now (on demand)
        if (L === 1) plan(v, l, t, true);
        // room for this step's new block, if planning could not leave it (furthest next need goes)
        if (v.newBlock && cache.countIn(l, 0) >= K) {
          let victim = -1;
          let far = -1;
          for (let b = 0; b < cache.created[l]; b++) {
            if (cache.tierOf(l, b) !== 0) continue;
            const nn = nextNeed(table, l, b, t - 1);
            if (nn > far) {
              far = nn;
              victim = b;
            }
          }
          if (victim >= 0) a.demote(l, victim, o.offload_tier, 16);
        }
        // offloaded blocks not needed now are left out of attention
        const need = table.need[t * L + l];
        for (const b of need) needMark[b] = 1;
        if (bulkAt[l] !== t) for (let b = 0; b < cache.created[l]; b++) if (cache.tierOf(l, b) > 0 && !needMark[b]) a.skip(b);
        for (const b of need) needMark[b] = 0;
        // one layer ahead: the next layer of this step, or layer 0 of the next step
        if (L === 1) return;
        if (l + 1 < L) plan(v, l + 1, t, true);
        else if (t + 1 < table.steps) plan(v, 0, t + 1, true);
      },
      observe() {},
    };
  },
};
