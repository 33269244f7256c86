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
import { NextUseIndex } from './next-use-index.js';
import { StepNeeds } from './oracle-needs.js';
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  top_factor: number;
  pooled: boolean;
  bulk_share: number;
  offload_tier: string;
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
    const L = setup.layers;
    const M = setup.maxBlocks;
    // every step's needed blocks, streamed once through the next-use index at the first decision
    // (creating the policy reads nothing)
    function* needs() {
      const of = new StepNeeds(L, setup.header.kv_groups, Math.ceil(o.top_factor * K), o.pooled);
      for (const s of futureSteps!()) yield { nBlocks: s.layers[0].nBlocks, uses: of.of(s) };
    }
    let index: NextUseIndex | null = null;
    const indexOf = () => (index ??= new NextUseIndex(L, M, needs()));
    // candidates: ids (offloaded ? M : 0) + block, sorted; bucket 0's offloaded ones, and the
    // offloaded ones of later buckets with their buckets, in feed order
    const offZero = new Int32Array(M);
    const offItems = new Int32Array(M);
    const offBucket = new Int32Array(M);
    const ids = new Int32Array(M);
    let count = new Int32Array(0);
    // the candidates outside bucket 0, in feed order, with their buckets
    const restItems = new Int32Array(M);
    const restBucket = new Int32Array(M);
    /** the acted-on candidates' ids in Belady order, then the blocks to stage */
    const acted = new Int32Array(M);
    // step at which a layer's offloaded blocks were all staged (then it attends all of them)
    const bulkAt = new Int32Array(L).fill(-1);
    let act: Actions | null = null;

    // per layer: a superset of its HBM-resident blocks (blocks enter HBM only when created or
    // promoted), in no order, pruned of the blocks found elsewhere at each refresh; checked against
    // the cache's count of resident blocks, and rebuilt from every block should they differ
    const maybe = Array.from({ length: L }, () => new Int32Array(M));
    const maybeCount = new Int32Array(L);
    const inMaybe = new Uint8Array(L * M);
    const seen = new Int32Array(L);
    const addMaybe = (l: number, b: number) => {
      if (inMaybe[l * M + b]) return;
      inMaybe[l * M + b] = 1;
      maybe[l][maybeCount[l]++] = b;
    };
    const promote = (l: number, b: number): boolean => {
      addMaybe(l, b);
      return act!.promote(l, b);
    };
    const addCreated = (cache: PolicyView['cache'], l: number) => {
      const created = cache.created[l];
      for (let b = seen[l]; b < created; b++) addMaybe(l, b);
      seen[l] = created;
    };
    /**
     * Make layer l's list exactly its resident blocks (in no order): add the blocks created since the
     * last look, drop the non-resident ones. With `used` (1 where needed), also put the resident
     * blocks not needed in restItems from `nr` on; returns the end.
     */
    const refreshMaybe = (cache: PolicyView['cache'], l: number, used: Uint8Array | null = null, nr = 0): number => {
      addCreated(cache, l);
      const created = cache.created[l];
      const list = maybe[l];
      const base = l * M;
      const nr0 = nr;
      let n = 0;
      for (let i = 0; i < maybeCount[l]; i++) {
        const b = list[i];
        if (cache.tierOf(l, b) === 0) {
          list[n++] = b;
          if (used) {
            restItems[nr] = b;
            nr += +(used[base + b] !== 1);
          }
        } else inMaybe[base + b] = 0;
      }
      if (n !== cache.countIn(l, 0)) {
        // something else moved blocks into HBM: list them from every block
        n = 0;
        nr = nr0;
        for (let b = 0; b < created; b++) {
          const on = cache.tierOf(l, b) === 0 ? 1 : 0;
          inMaybe[base + b] = on;
          if (on) {
            list[n++] = b;
            if (used) {
              restItems[nr] = b;
              nr += +(used[base + b] !== 1);
            }
          }
        }
      }
      maybeCount[l] = n;
      return nr;
    };

    /** Make layer l's residency right for step t (blocks already created), staging needed leftovers. */
    const plan = (v: PolicyView, l: number, t: number, stage: boolean) => {
      const ix = indexOf();
      const cache = v.cache;
      const created = cache.created[l];
      const r = ix.load(t);
      if (ix.stepOf(l) !== t) throw new Error(`policy oracle: layer ${l} planned for step ${t} at step ${ix.stepOf(l)}`);
      const willCreate = r.nBlocks > created ? 1 : 0;
      // Belady order: soonest need (this step counts), then the need after it, then what is resident,
      // then the block number (never = the number of steps, after every step). A needed block's
      // soonest need is t, every other candidate's is later, so the order is: the needed blocks by
      // (need after t, resident first, block), then the resident blocks not needed by (next need,
      // block). Both keys lie in t+1..never: one stable sort over 2 x (never - t) buckets, fed in
      // (class, block) order, gives it.
      const R = ix.never - t;
      const from = r.from[l];
      const to = r.from[l + 1];
      const blocks = r.blocks;
      const next = r.next;
      // used[base + b] === 1: b is needed in the row being planned (the index's marks of the layer's step)
      const used = ix.usedNow;
      const base = l * M;
      // fed in (class, block) order and split at once: bucket 0 (needed again at the next step: most
      // of them) goes to ids in feed order, resident before offloaded; only the rest is sorted below
      let z = 0;
      let zo = 0;
      let nr = 0;
      let no = 0;
      for (let i = from; i < to; i++) {
        const b = blocks[i];
        if (b >= created) continue;
        const tier = cache.tierOf(l, b);
        const k = next[i] - t - 1;
        if (k === 0) {
          // (written to both lists, kept in its tier's: no branch on the scattered tiers)
          ids[z] = b;
          z += +(tier === 0);
          offZero[zo] = M + b;
          zo += +(tier > 0);
        } else if (tier === 0) {
          restItems[nr] = b;
          restBucket[nr++] = k;
        } else if (tier > 0) {
          offItems[no] = M + b;
          offBucket[no++] = k;
        }
      }
      const residentNeeded = z + nr;
      for (let i = 0; i < zo; i++) ids[z + i] = offZero[i];
      z += zo;
      for (let i = 0; i < no; i++) {
        restItems[nr] = offItems[i];
        restBucket[nr++] = offBucket[i];
      }
      // (the resident blocks not needed, few: listed, put in block order, then fed). When every
      // resident block is needed there are none: the list only takes the blocks created since, and
      // is pruned once it has grown to twice the budget
      const nr0 = nr;
      if (cache.countIn(l, 0) !== residentNeeded || maybeCount[l] > 2 * K + 64) nr = refreshMaybe(cache, l, used, nr);
      else addCreated(cache, l);
      sortAscending(restItems, nr0, nr);
      for (let i = nr0; i < nr; i++) restBucket[i] = R + ix.nextUseOf(l, restItems[i]) - t - 1;
      const nc = z + nr;
      if (nr <= 32) {
        for (let i = 1; i < nr; i++) {
          const x = restItems[i];
          const k = restBucket[i];
          let j = i;
          while (j > 0 && restBucket[j - 1] > k) {
            restItems[j] = restItems[j - 1];
            restBucket[j] = restBucket[j - 1];
            j--;
          }
          restItems[j] = x;
          restBucket[j] = k;
        }
        for (let i = 0; i < nr; i++) ids[z + i] = restItems[i];
      } else {
        if (count.length < 2 * R + 1) count = new Int32Array(2 * ix.never + 1);
        count.fill(0, 0, 2 * R + 1);
        count[1] = z;
        for (let i = 0; i < nr; i++) count[restBucket[i] + 1]++;
        for (let k = 1; k <= 2 * R; k++) count[k] += count[k - 1];
        for (let i = 0; i < nr; i++) ids[count[restBucket[i]]++] = restItems[i];
      }
      const slots = Math.min(nc, Math.max(0, K - willCreate));
      // acted on, in Belady order: resident blocks that do not stay, and every offloaded candidate
      // (the offloaded blocks that stay come first: acted[0..kept))
      let na = 0;
      for (let i = 0; i < slots; i++) if (ids[i] >= M) acted[na++] = ids[i];
      const kept = na;
      for (let i = slots; i < nc; i++) acted[na++] = ids[i];
      for (let j = 0; j < na; j++) if (acted[j] < M) act!.demote(l, acted[j], o.offload_tier, 16);
      // to stage: the needed blocks left offloaded. An offloaded candidate (id >= M) is needed and
      // only its own promotion can bring it to HBM, so past the kept ones it is staged as it is
      let toStage = 0;
      for (let j = 0; j < na; j++) {
        const id = acted[j];
        if (id >= M && j >= kept) {
          acted[toStage++] = id - M;
          continue;
        }
        const b = id < M ? id : id - M;
        if (cache.tierOf(l, b) === 0) continue;
        if (j < kept && promote(l, b)) continue;
        if (used[base + b] === 1) acted[toStage++] = b;
      }
      if (stage && toStage > 0) {
        // one bulk transfer of everything offloaded beats many small ones (each pays the link latency)
        let offloaded = 0;
        for (let tier = 1; tier < cache.tierNames.length; tier++) offloaded += cache.countIn(l, tier);
        if (toStage >= o.bulk_share * offloaded) {
          act!.prefetchOffloaded(l);
          bulkAt[l] = t;
        } else for (let i = 0; i < toStage; i++) act!.prefetch(l, acted[i]);
      }
    };

    return {
      name: 'oracle',
      decide(v: PolicyView, a: Actions) {
        act = a;
        const ix = indexOf();
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
          // the resident block with the furthest next need, the lowest such block on a tie
          refreshMaybe(cache, l);
          const list = maybe[l];
          for (let i = 0; i < maybeCount[l]; i++) {
            const b = list[i];
            const nn = ix.nextUseOf(l, b);
            if (nn > far || (nn === far && b < victim)) {
              far = nn;
              victim = b;
            }
          }
          if (victim >= 0) a.demote(l, victim, o.offload_tier, 16);
        }
        // offloaded blocks not needed now are left out of attention
        const r = ix.load(t);
        if (bulkAt[l] !== t) a.skipExceptListed(r.blocks.subarray(r.from[l], r.from[l + 1]), r.from[l + 1] - r.from[l], 'offloaded');
        ix.advance(l, t);
        // one layer ahead: the next layer of this step, or layer 0 of the next step
        if (L === 1) return;
        if (l + 1 < L) plan(v, l + 1, t, true);
        else if (t + 1 < ix.never) plan(v, 0, t + 1, true);
      },
      observe() {},
    };
  },
};

/** a[from, to) in ascending order (insertion sort when few, as here they mostly are) */
function sortAscending(a: Int32Array, from: number, to: number): void {
  if (to - from > 32) {
    a.subarray(from, to).sort();
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const x = a[i];
    let j = i;
    while (j > from && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}
