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
import { sortAscending } from './quickselect.js';
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
    // every step's needed blocks, as changes from the step before, streamed once through the
    // next-use index at the first decision (creating the policy reads nothing)
    function* needs() {
      const of = new StepNeeds(L, setup.header.kv_groups, Math.ceil(o.top_factor * K), o.pooled);
      for (const s of futureSteps!()) yield { nBlocks: s.layers[0].nBlocks, changes: of.changes(s) };
    }
    let index: NextUseIndex | null = null;
    const indexOf = () => (index ??= new NextUseIndex(L, M, needs()));
    // Belady order of a plan's candidates at step t: the needed blocks by (need after t, resident
    // first, block), then the resident blocks not needed by (next need, block). Bucket 0 (needed at
    // t + 1 too: most needed blocks) is kept as two lists in block order, the resident ones (resB0) and
    // the offloaded ones (offB0); the rest (needed blocks not needed at t + 1, resident blocks not
    // needed) are few and are sorted: ids (offloaded ? M : 0) + block in restItems with their buckets
    const resB0 = new Int32Array(M);
    const offB0 = new Int32Array(M);
    const restA = new Int32Array(M);
    const restB = new Int32Array(M);
    const restC = new Int32Array(M);
    const ids = new Int32Array(M);
    let count = new Int32Array(0);
    const restItems = new Int32Array(M);
    const restBucket = new Int32Array(M);
    /** the blocks to stage, in Belady order */
    const toStageList = new Int32Array(M);
    /** per block of the planned layer: its next use after t when needed at t and not at t + 1, else 0 */
    const nextOf = new Int32Array(M);
    const seenMark = new Uint8Array(M);
    // per layer: blocks that may be offloaded and needed at the layer's next plan besides the blocks
    // the step adds and the blocks created since (the blocks the last plan staged, the victims
    // demoted since), or -1 when they were not listed; checked against a count at each use
    const CANDIDATES = 256;
    const cand = new Int32Array(L * CANDIDATES);
    const candCount = new Int32Array(L).fill(-1);
    const plannedCreated = new Int32Array(L);
    const plannedStep = new Int32Array(L).fill(-1);
    /** the needed blocks left offloaded, ascending, as the layer's attention is asked for */
    const keepList = new Int32Array(CANDIDATES);
    /** a layer's needed blocks, ascending (when they are not all among its candidates) */
    const neededList = new Int32Array(M);
    /** blocks to demote or promote, in order, and (promoted) whether each was offloaded */
    const moveList = new Int32Array(M);
    const wasOff = new Uint8Array(M);
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
    // per layer: its resident blocks not needed at the layer's step (in no order, with each one's
    // place), kept by the events that change them: the index's advance, the blocks created, promoted
    // and demoted; with the count of resident blocks the events give, checked against the cache's
    const rnn = Array.from({ length: L }, () => new Int32Array(M));
    const rnnCount = new Int32Array(L);
    const rnnAt = new Int32Array(L * M).fill(-1);
    const resCount = new Int32Array(L);
    const rnnAdd = (l: number, b: number) => {
      if (rnnAt[l * M + b] >= 0) return;
      rnnAt[l * M + b] = rnnCount[l];
      rnn[l][rnnCount[l]++] = b;
    };
    const rnnRemove = (l: number, b: number) => {
      const at = rnnAt[l * M + b];
      if (at < 0) return;
      rnnAt[l * M + b] = -1;
      const last = rnn[l][--rnnCount[l]];
      if (last !== b) {
        rnn[l][at] = last;
        rnnAt[l * M + last] = at;
      }
    };
    const promote = (l: number, b: number): boolean => {
      addMaybe(l, b);
      if (!act!.promote(l, b)) return false;
      resCount[l]++;
      if (index!.usedNow[l * M + b] !== 1) rnnAdd(l, b);
      return true;
    };
    const demote = (l: number, b: number): boolean => {
      if (!act!.demote(l, b, o.offload_tier, 16)) return false;
      resCount[l]--;
      rnnRemove(l, b);
      return true;
    };
    /**
     * List layer l's resident blocks from its list (made exact on the way, else rebuilt from every
     * block): the needed ones in bucket 0 (not dropped at t + 1: nextOf 0) in resB0, the count
     * returned; the ones not needed in rnn, and the count of resident blocks, made right.
     */
    const residentPass = (cache: PolicyView['cache'], l: number): number => {
      addCreated(cache, l);
      const used = index!.usedNow;
      const base = l * M;
      const list = maybe[l];
      for (let i = 0; i < rnnCount[l]; i++) rnnAt[base + rnn[l][i]] = -1;
      rnnCount[l] = 0;
      let n = 0;
      let zres = 0;
      for (let i = 0; i < maybeCount[l]; i++) {
        const b = list[i];
        if (cache.tierOf(l, b) !== 0) {
          inMaybe[base + b] = 0;
          continue;
        }
        list[n++] = b;
        if (used[base + b] !== 1) rnnAdd(l, b);
        else if (nextOf[b] === 0) resB0[zres++] = b;
      }
      if (n !== cache.countIn(l, 0)) {
        // something else moved blocks into HBM: list them from every block
        for (let i = 0; i < rnnCount[l]; i++) rnnAt[base + rnn[l][i]] = -1;
        rnnCount[l] = 0;
        n = zres = 0;
        for (let b = 0; b < cache.created[l]; b++) {
          const on = cache.tierOf(l, b) === 0 ? 1 : 0;
          inMaybe[base + b] = on;
          if (!on) continue;
          list[n++] = b;
          if (used[base + b] !== 1) rnnAdd(l, b);
          else if (nextOf[b] === 0) resB0[zres++] = b;
        }
      }
      maybeCount[l] = n;
      resCount[l] = n;
      return zres;
    };
    const addCreated = (cache: PolicyView['cache'], l: number) => {
      const created = cache.created[l];
      for (let b = seen[l]; b < created; b++) addMaybe(l, b);
      seen[l] = created;
    };
    /** Make layer l's list exactly its resident blocks (in no order): add the blocks created since the last look, drop the non-resident ones. */
    const refreshMaybe = (cache: PolicyView['cache'], l: number): void => {
      addCreated(cache, l);
      const list = maybe[l];
      const base = l * M;
      let n = 0;
      for (let i = 0; i < maybeCount[l]; i++) {
        const b = list[i];
        if (cache.tierOf(l, b) === 0) list[n++] = b;
        else inMaybe[base + b] = 0;
      }
      if (n !== cache.countIn(l, 0)) {
        // something else moved blocks into HBM: list them from every block
        n = 0;
        for (let b = 0; b < cache.created[l]; b++) {
          const on = cache.tierOf(l, b) === 0 ? 1 : 0;
          inMaybe[base + b] = on;
          if (on) list[n++] = b;
        }
      }
      maybeCount[l] = n;
    };

    /** Make layer l's residency right for step t (blocks already created), staging needed leftovers. */
    const plan = (v: PolicyView, l: number, t: number, stage: boolean) => {
      const ix = indexOf();
      const cache = v.cache;
      const created = cache.created[l];
      ix.seek(t);
      if (ix.stepOf(l) !== t) throw new Error(`policy oracle: layer ${l} planned for step ${t} at step ${ix.stepOf(l)}`);
      if (cache.live(l) !== created) throw new Error(`policy oracle: layer ${l} has ${created - cache.live(l)} dropped blocks (the oracle drops none)`);
      const willCreate = ix.nBlocksNow > created ? 1 : 0;
      const R = ix.never - t;
      // used[base + b] === 1: b is needed in the row being planned (the index's marks of the layer's step)
      const used = ix.usedNow;
      const base = l * M;
      // the needed blocks already created (those not yet created lie at or above `created`)
      let needed = ix.usedCount[l];
      for (let b = created; b < ix.blockBound; b++) needed -= used[base + b];
      // the needed blocks that step t + 1 does not use, with their next use (every other needed
      // block's is t + 1)
      const nx = ix.changesOf(t + 1);
      const dFrom = nx ? nx.dropFrom[l] : 0;
      const dTo = nx ? nx.dropFrom[l + 1] : 0;
      for (let i = dFrom; i < dTo; i++) nextOf[nx!.dropped[i]] = nx!.slots[i];
      // the blocks created since the last plan: resident ones not needed join rnn
      addCreated(cache, l);
      const createdBefore = plannedCreated[l];
      for (let b = createdBefore; b < created; b++) {
        if (cache.tierOf(l, b) !== 0) continue;
        resCount[l]++;
        if (used[base + b] !== 1) rnnAdd(l, b);
      }
      plannedCreated[l] = created;
      // the resident blocks not needed: rnn, unless the cache counts other resident blocks than the
      // events gave (something else moved blocks), or the resident list has grown past twice the budget
      let passed = false;
      let zres = 0;
      if (resCount[l] !== cache.countIn(l, 0) || maybeCount[l] > 2 * K + 64) {
        zres = residentPass(cache, l);
        passed = true;
      }
      const nC = rnnCount[l];
      const list = rnn[l];
      for (let i = 0; i < nC; i++) restC[i] = list[i];
      // the needed blocks not needed at t + 1 (the dropped list is ascending), resident and offloaded;
      // every other needed block is in bucket 0 (every block of the layer is live: in HBM or offloaded)
      let nA = 0;
      let nB = 0;
      for (let i = dFrom; i < dTo; i++) {
        const b = nx!.dropped[i];
        if (b >= created) continue;
        if (cache.tierOf(l, b) === 0) restA[nA++] = b;
        else restB[nB++] = b;
      }
      if (!passed) zres = cache.countIn(l, 0) - nA - nC;
      const zoff = needed - zres - nA - nB;
      // the rest, fed in (class, block) order, then sorted stably by bucket into ids
      sortAscending(restC, 0, nC);
      let nr = 0;
      for (let i = 0; i < nA; i++) {
        restItems[nr] = restA[i];
        restBucket[nr++] = nextOf[restA[i]] - t - 1;
      }
      for (let i = 0; i < nB; i++) {
        restItems[nr] = M + restB[i];
        restBucket[nr++] = nextOf[restB[i]] - t - 1;
      }
      for (let i = 0; i < nC; i++) {
        restItems[nr] = restC[i];
        restBucket[nr++] = R + ix.nextUseOf(l, restC[i]) - t - 1;
      }
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
        for (let i = 0; i < nr; i++) ids[i] = restItems[i];
      } else {
        if (count.length < 2 * R + 1) count = new Int32Array(2 * ix.never + 1);
        count.fill(0, 0, 2 * R + 1);
        for (let i = 0; i < nr; i++) count[restBucket[i] + 1]++;
        for (let k = 1; k <= 2 * R; k++) count[k] += count[k - 1];
        for (let i = 0; i < nr; i++) ids[count[restBucket[i]]++] = restItems[i];
      }
      // Belady order: resB0, offB0, ids[0, nr); the first `slots` stay in (or come to) HBM
      const nc = zres + zoff + nr;
      const slots = Math.min(nc, Math.max(0, K - willCreate));
      const keptOff = Math.max(0, Math.min(zoff, slots - zres));
      const restIn = Math.max(0, slots - zres - zoff);
      // offB0 in block order: the first keptOff are promoted; the ones past them are staged, listed
      // unless a bulk transfer is certain (they are at least bulk_share of the offloaded blocks once
      // the demotions below are done, which at most add to them)
      let demoting = Math.max(0, zres - slots);
      for (let i = restIn; i < nr; i++) demoting += +(ids[i] < M);
      let offloaded = 0;
      for (let tier = 1; tier < cache.tierNames.length; tier++) offloaded += cache.countIn(l, tier);
      const past = zoff - keptOff;
      const unlisted = stage && past > 0 && past >= o.bulk_share * (offloaded + demoting) ? past : 0;
      const want = zoff - unlisted;
      let listed = 0;
      if (want > 0 && candCount[l] >= 0 && zoff <= CANDIDATES) {
        // from the blocks that may be there, checked one by one: all of them when as many as counted
        const at = l * CANDIDATES;
        const c = ix.changesOf(t)!;
        for (let i = 0; i < candCount[l]; i++) listed = offer(l, cand[at + i], listed, created, cache);
        for (let i = c.addFrom[l]; i < c.addFrom[l + 1]; i++) listed = offer(l, c.added[i], listed, created, cache);
        for (let b = createdBefore; b < created; b++) listed = offer(l, b, listed, created, cache);
        for (let i = 0; i < candCount[l]; i++) seenMark[cand[at + i]] = 0;
        for (let i = c.addFrom[l]; i < c.addFrom[l + 1]; i++) seenMark[c.added[i]] = 0;
        for (let b = createdBefore; b < created; b++) seenMark[b] = 0;
        if (listed === zoff) sortAscending(offB0, 0, listed);
        else listed = 0;
      }
      if (listed < want) {
        // from the needed blocks in order
        listed = 0;
        for (let b = 0; b < created && listed < want; b++) {
          if (used[base + b] === 1 && nextOf[b] === 0 && cache.tierOf(l, b) > 0) offB0[listed++] = b;
        }
        if (listed < want) throw new Error(`policy oracle: layer ${l} step ${t}: ${listed} offloaded needed blocks found, ${want} counted`);
      }
      if (zres > slots) {
        // resident bucket-0 blocks past the slots: listed (by a pass over the resident blocks) in block order
        if (!passed && residentPass(cache, l) !== zres) throw new Error(`policy oracle: layer ${l} step ${t}: resident blocks counted wrong`);
        sortAscending(resB0, 0, zres);
      }
      for (let i = dFrom; i < dTo; i++) nextOf[nx!.dropped[i]] = 0;
      // demoted, in Belady order: the resident blocks past the slots
      demoteList(l, resB0, slots, zres);
      let nm = 0;
      for (let i = restIn; i < nr; i++) if (ids[i] < M) moveList[nm++] = ids[i];
      demoteList(l, moveList, 0, nm);
      // promoted: the offloaded blocks within the slots (a needed one that cannot be is staged); staged:
      // the needed blocks past the slots left offloaded, in Belady order
      let toStage = promoteList(cache, l, offB0, keptOff, 0);
      nm = 0;
      for (let i = 0; i < restIn; i++) if (ids[i] >= M) moveList[nm++] = ids[i] - M;
      toStage = promoteList(cache, l, moveList, nm, toStage);
      for (let i = slots; i < zres; i++) {
        const b = resB0[i];
        if (cache.tierOf(l, b) !== 0 && used[base + b] === 1) toStageList[toStage++] = b;
      }
      for (let i = keptOff; i < listed; i++) toStageList[toStage++] = offB0[i];
      for (let i = restIn; i < nr; i++) {
        const id = ids[i];
        if (id >= M) toStageList[toStage++] = id - M;
        else if (cache.tierOf(l, id) !== 0 && used[base + id] === 1) toStageList[toStage++] = id;
      }
      // the blocks that may be offloaded and needed at the next plan: those staged (the offloaded
      // needed ones that stay so) when all are listed
      plannedStep[l] = t;
      if (unlisted > 0 || toStage > CANDIDATES) candCount[l] = -1;
      else {
        for (let i = 0, at = l * CANDIDATES; i < toStage; i++) cand[at + i] = toStageList[i];
        candCount[l] = toStage;
      }
      if (stage && toStage + unlisted > 0) {
        // one bulk transfer of everything offloaded beats many small ones (each pays the link latency)
        let offloadedNow = 0;
        for (let tier = 1; tier < cache.tierNames.length; tier++) offloadedNow += cache.countIn(l, tier);
        if (toStage + unlisted >= o.bulk_share * offloadedNow) {
          act!.prefetchOffloaded(l);
          bulkAt[l] = t;
        } else {
          if (unlisted > 0) throw new Error(`policy oracle: layer ${l} step ${t}: a bulk transfer was certain`);
          for (let i = 0; i < toStage; i++) act!.prefetch(l, toStageList[i]);
        }
      }
    };
    /** demote(l, list[i]) for i in [from, to), in that order (one call for each run the cache takes at once) */
    const demoteList = (l: number, list: Int32Array, from: number, to: number): void => {
      const a = act!;
      if (a.demoteBlocks === undefined) {
        for (let i = from; i < to; i++) demote(l, list[i]);
        return;
      }
      for (let i = from; i < to; ) {
        // (list[j] refused: passed over, as demote() would leave it)
        const j = a.demoteBlocks(l, list, i, to, o.offload_tier, 16);
        for (; i < j; i++) {
          resCount[l]--;
          rnnRemove(l, list[i]);
        }
        i = j + 1;
      }
    };
    /** keep(cache, l, list[i], ...) for i in [0, count), in that order; the new end of toStageList */
    const promoteList = (cache: PolicyView['cache'], l: number, list: Int32Array, count: number, toStage: number): number => {
      const a = act!;
      if (a.promoteBlocks === undefined) {
        for (let i = 0; i < count; i++) toStage = keep(cache, l, list[i], toStage);
        return toStage;
      }
      // the offloaded ones are those promote() is asked for (joining the resident list first, as
      // promote() has them); the resident ones are passed over
      for (let i = 0; i < count; i++) {
        const off = cache.tierOf(l, list[i]) !== 0 ? 1 : 0;
        wasOff[i] = off;
        if (off === 1) addMaybe(l, list[i]);
      }
      const used = index!.usedNow;
      for (let i = 0; i < count; ) {
        const j = a.promoteBlocks(l, list, i, count);
        for (; i < j; i++) {
          if (wasOff[i] === 0) continue;
          resCount[l]++;
          if (used[l * M + list[i]] !== 1) rnnAdd(l, list[i]);
        }
        if (j < count) {
          // refused: staged when needed
          if (used[l * M + list[j]] === 1) toStageList[toStage++] = list[j];
          i = j + 1;
        }
      }
      return toStage;
    };
    /** Promote layer l's block b when offloaded; when that fails and it is needed, stage it: toStageList from `toStage` on, the new end returned. */
    const keep = (cache: PolicyView['cache'], l: number, b: number, toStage: number): number => {
      if (cache.tierOf(l, b) === 0 || promote(l, b)) return toStage;
      if (index!.usedNow[l * M + b] === 1) toStageList[toStage++] = b;
      return toStage;
    };
    /** list b in offB0 when it is an offloaded block of layer l needed at t and t + 1 (marked: once) */
    const offer = (l: number, b: number, listed: number, created: number, cache: PolicyView['cache']): number => {
      if (b >= created || seenMark[b]) return listed;
      seenMark[b] = 1;
      if (index!.usedNow[l * M + b] === 1 && nextOf[b] === 0 && cache.tierOf(l, b) > 0) offB0[listed++] = b;
      return listed;
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
          if (victim >= 0 && demote(l, victim) && candCount[l] >= 0) {
            if (candCount[l] < CANDIDATES) cand[l * CANDIDATES + candCount[l]++] = victim;
            else candCount[l] = -1;
          }
        }
        // offloaded blocks not needed now are left out of attention
        if (bulkAt[l] !== t) {
          if (plannedStep[l] === t && candCount[l] >= 0) {
            // the layer's needed offloaded blocks are those its plan staged (listed) and the victim
            // demoted since when needed: only they need listing (resident blocks are not in scope)
            const at = l * CANDIDATES;
            const used = ix.usedNow;
            let k = 0;
            for (let i = 0; i < candCount[l]; i++) {
              const b = cand[at + i];
              if (used[l * M + b] === 1 && cache.tierOf(l, b) > 0) keepList[k++] = b;
            }
            sortAscending(keepList, 0, k);
            a.skipExceptListed(keepList, k, 'offloaded');
          } else {
            // every needed block (those not created yet would be passed over)
            const used = ix.usedNow;
            const created = cache.created[l];
            let k = 0;
            for (let b = 0; b < created; b++) if (used[l * M + b] === 1) neededList[k++] = b;
            a.skipExceptListed(neededList, k, 'offloaded');
          }
        }
        ix.advance(l, t);
        // resident blocks the layer's new step needs leave rnn, resident ones it drops join it
        const ch = ix.changesOf(t + 1);
        if (ch) {
          const base = l * M;
          for (let i = ch.addFrom[l]; i < ch.addFrom[l + 1]; i++) if (rnnAt[base + ch.added[i]] >= 0) rnnRemove(l, ch.added[i]);
          for (let i = ch.dropFrom[l]; i < ch.dropFrom[l + 1]; i++) if (cache.tierOf(l, ch.dropped[i]) === 0) rnnAdd(l, ch.dropped[i]);
        }
        // one layer ahead: the next layer of this step, or layer 0 of the next step
        if (L === 1) return;
        if (l + 1 < L) plan(v, l + 1, t, true);
        else if (t + 1 < ix.never) plan(v, 0, t + 1, true);
      },
      observe() {},
    };
  },
};
