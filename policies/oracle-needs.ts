/**
 * The oracle's needed blocks of one trace step, per layer. Block b is needed at (t, l) when it is
 * among the topK heaviest blocks of the layer's row (mass descending, ties to the lower block), or,
 * with `pooled`, among the step's layers x topK blocks of largest attention share (mass / row total)
 * pooled over the layers (ties to the lower layer, then the lower block). With several KV groups a
 * layer's weight of block b is the mean over the groups of its share of each group's mass,
 * (1/G)·Σ_g m_g[b] / Σ m_g: recall is the mean over groups of each group's attended share, so the
 * heaviest blocks by this weight give any number of attended blocks the highest recall.
 *
 * Both choices are partial selections (quickselect), not sorts; the scratch arrays are reused.
 * `of(s)` gives a step's needed lists; `changes(s)` gives how they changed from the step of the
 * previous changes() call, found (with top-k rows) from the blocks the two steps' rows list and the
 * cuts' runs alone.
 */
import type { LayerAttention, TraceStep } from '../traces/format.js';
import { denseMass } from './dense-mass.js';
import { selectBottomKKeyed, sortAscending } from './quickselect.js';
import type { UseChanges } from './next-use-index.js';
import { RepeatedSum } from './repeated-sum.js';

export class StepNeeds {
  private m = new Float64Array(0);
  private g1 = new Float64Array(0);
  /** per layer x block: 1 where needed */
  private mark = new Uint8Array(0);
  /** per layer x block: 1 where some group of the layer lists the block (top-k rows) */
  private listed = new Uint8Array(0);
  private ids = new Int32Array(0);
  private keys = new Float64Array(0);
  /** listed keys, sorted to find a cut: one row's, the step's pooled */
  private sorted = new Float64Array(0);
  private poolSorted = new Float64Array(0);
  /** pooled keys: -(attention share), l * n + b */
  private negShare = new Float64Array(0);
  /** per layer: the key its unlisted blocks share in the pooled order, and how many there are */
  private groupKey = new Float64Array(0);
  private groupCount = new Int32Array(0);
  /** the same for one row's own cut */
  private readonly rowKey = new Float64Array(1);
  private readonly rowCount = new Int32Array(1);
  private out = new Int32Array(0);

  constructor(
    readonly layers: number,
    readonly kvGroups: number,
    readonly topK: number,
    readonly pooled: boolean,
  ) {}

  /**
   * The needed blocks of step `s`: `lists[l]` ascending (views of one reused buffer, valid until the
   * next call).
   */
  of(s: TraceStep): Int32Array[] {
    const n = this.prepare(s);
    if (this.sortedTopK(s, n)) {
      this.cutSortedTopK(s, n);
      return this.listsSortedTopK(s, n);
    }
    this.markAll(s, n);
    return this.listsOfMarks(n);
  }

  /**
   * How step `s`'s needed sets differ from those of the step given to the previous changes() call
   * (from empty sets at the first call): per layer, the blocks added and dropped, each ascending
   * (views of reused buffers, valid until the next call). of() and changes() may be mixed; changes()
   * compares with its own previous step only.
   */
  changes(s: TraceStep): UseChanges {
    const n = this.prepare(s);
    const L = this.layers;
    this.growMembers(n, s);
    if (this.sortedTopK(s, n)) {
      this.cutSortedTopK(s, n);
      this.diffSorted(s, n);
    } else {
      this.markAll(s, n);
      this.diffMarks(n);
    }
    this.prevN = n;
    return { addFrom: this.addFrom.subarray(0, L + 1), added: this.added, dropFrom: this.dropFrom.subarray(0, L + 1), dropped: this.dropped };
  }

  /** Scratch arrays sized for step `s`; its block count. */
  private prepare(s: TraceStep): number {
    const L = this.layers;
    const n = s.layers[0].nBlocks;
    if (this.m.length < n) {
      this.m = new Float64Array(n);
      this.g1 = new Float64Array(n);
    }
    if (this.mark.length < L * n) {
      // (room for 64 more blocks per layer: a context grows by one block every few steps)
      const cap = L * (n + 64);
      this.mark = new Uint8Array(cap);
      this.listed = new Uint8Array(cap);
      this.ids = new Int32Array(cap);
      this.keys = new Float64Array(cap);
      this.sorted = new Float64Array(cap);
      this.poolSorted = new Float64Array(cap);
      this.negShare = new Float64Array(cap);
      this.out = new Int32Array(cap);
      this.groupKey = new Float64Array(L);
      this.groupCount = new Int32Array(L);
    }
    return n;
  }

  /** Every block's mark (1: needed) of step `s`, by the cuts of each row and the pooled one. */
  private markAll(s: TraceStep, n: number): void {
    const L = this.layers;
    const G = this.kvGroups;
    const { m, g1, mark, listed, ids, keys, negShare } = this;
    const K = this.topK;
    mark.fill(0, 0, L * n);
    listed.fill(0, 0, L * n);
    // with every row in top-k form, the unlisted blocks of a layer share one mass: cuts are found
    // from the listed masses and that one value instead of selecting over every block
    let allListed = true;
    const rowSorted = this.sorted;
    const poolSorted = this.poolSorted;
    let pp = 0;
    for (let l = 0; l < L; l++) {
      const base = l * n;
      const nl = s.layers[l * G].nBlocks;
      if (nl !== n) throw new Error(`step ${s.step}: layer ${l} has ${nl} blocks, layer 0 has ${n}`);
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
      // the listed blocks (union over the groups), each once: their keys for the row's cut and, when
      // pooled, for the step's
      let topk = true;
      let p = 0;
      for (let g = 0; g < G && topk; g++) {
        const idx = s.layers[l * G + g].idx;
        if (idx === null) topk = false;
        else
          for (let i = 0; i < idx.length; i++) {
            const b = idx[i];
            if (listed[base + b] === 1) continue;
            listed[base + b] = 1;
            rowSorted[p++] = -m[b];
            if (this.pooled) poolSorted[pp++] = -(total > 0 ? m[b] / total : 0);
          }
      }
      if (!topk) allListed = false;
      // the layer's unlisted blocks (all with the same mass, m[first])
      const unlisted = topk ? n - p : 0;
      let first = -1;
      if (unlisted > 0) for (let b = 0; first < 0; b++) if (listed[base + b] === 0) first = b;
      if (!topk || unlisted === 0 || K >= n) {
        for (let b = 0; b < n; b++) {
          ids[b] = b;
          keys[b] = -m[b];
        }
        const k = selectBottomKKeyed(ids, keys, n, K);
        for (let i = 0; i < k; i++) mark[base + ids[i]] = 1;
      } else if (K > 0) {
        rowSorted.subarray(0, p).sort();
        this.rowKey[0] = -m[first];
        this.rowCount[0] = unlisted;
        const v = nthKey(rowSorted, p, this.rowKey, this.rowCount, 1, K);
        // key -m[b] below v: m[b] above -v (negation is exact)
        let ties = K - countBelow(rowSorted, p, this.rowKey, this.rowCount, 1, v);
        const c = -v;
        for (let b = 0; b < n; b++) {
          const x = m[b];
          if (x > c) mark[base + b] = 1;
          else if (x === c && ties > 0) {
            mark[base + b] = 1;
            ties--;
          }
        }
      }
      if (this.pooled) {
        for (let b = 0; b < n; b++) negShare[base + b] = -(total > 0 ? m[b] / total : 0);
        this.groupKey[l] = first >= 0 ? negShare[base + first] : 0;
        this.groupCount[l] = unlisted;
      }
    }
    if (this.pooled) {
      const count = L * n;
      const N = L * K;
      if (!allListed || N >= count) {
        for (let i = 0; i < count; i++) {
          ids[i] = i;
          keys[i] = negShare[i];
        }
        const k = selectBottomKKeyed(ids, keys, count, N);
        for (let i = 0; i < k; i++) mark[ids[i]] = 1;
      } else if (N > 0) {
        poolSorted.subarray(0, pp).sort();
        // the layers' groups in key order (ties: the lower layer)
        const gk = new Float64Array(L);
        const gc = new Int32Array(L);
        const order = Array.from({ length: L }, (_, l) => l).sort((a, b) => this.groupKey[a] - this.groupKey[b] || a - b);
        for (let j = 0; j < L; j++) {
          gk[j] = this.groupKey[order[j]];
          gc[j] = this.groupCount[order[j]];
        }
        const v = nthKey(poolSorted, pp, gk, gc, L, N);
        let ties = N - countBelow(poolSorted, pp, gk, gc, L, v);
        for (let i = 0; i < count; i++) {
          const x = negShare[i];
          if (x < v) mark[i] = 1;
          else if (x === v && ties > 0) {
            mark[i] = 1;
            ties--;
          }
        }
      }
    }
  }

  /** The needed lists from every block's mark. */
  private listsOfMarks(n: number): Int32Array[] {
    const L = this.layers;
    const mark = this.mark;
    const lists: Int32Array[] = [];
    let o = 0;
    for (let l = 0; l < L; l++) {
      const from = o;
      for (let b = 0; b < n; b++) if (mark[l * n + b]) this.out[o++] = b;
      lists.push(this.out.subarray(from, o));
    }
    return lists;
  }

  /**
   * True when ofSortedTopK applies to step `s`: one KV group, every row in top-k form with its listed
   * blocks strictly ascending and at least one block unlisted, and 0 < topK < blocks.
   */
  private sortedTopK(s: TraceStep, n: number): boolean {
    if (this.kvGroups !== 1 || !(this.topK > 0 && this.topK < n)) return false;
    for (let l = 0; l < this.layers; l++) {
      const la = s.layers[l];
      const idx = la.idx;
      if (idx === null || la.nBlocks !== n || idx.length >= n) return false;
      for (let i = 0; i < idx.length; i++) if (idx[i] >= n || (i > 0 && idx[i] <= idx[i - 1])) return false;
    }
    return true;
  }

  /**
   * The cuts of step `s` where sortedTopK(s) holds (the same sets as markAll): a row's unlisted
   * blocks all carry its even remainder share, so each cut is found from the listed masses and that
   * one value, and only the listed blocks are visited: the unlisted ones taken (all of them when the
   * cut lies below their value, else those below the last block taken on a tie, ties going to the
   * lower blocks) are a prefix of them, counted by runs. Row totals are summed over every block in
   * block order, as markAll does. Layer l's needed set is then its unlisted blocks below scanTo[l]
   * and its listed blocks marked in `mark`.
   */
  private cutSortedTopK(s: TraceStep, n: number): void {
    const L = this.layers;
    const K = this.topK;
    const mark = this.mark;
    const rowSorted = this.sorted;
    const poolSorted = this.poolSorted;
    // per layer: the remainder share of an unlisted block, and the bound `scanTo` below which every
    // unlisted block is needed (none above it); `mark` holds the listed blocks' marks only
    if (this.uOf.length < L) {
      this.uOf = new Float64Array(L);
      this.scanTo = new Int32Array(L);
      this.poolFrom = new Int32Array(L);
    }
    const { uOf, scanTo, poolFrom } = this;
    const sum = this.repeatedSum;
    let pp = 0;
    for (let l = 0; l < L; l++) {
      const base = l * n;
      const { idx, mass } = s.layers[l] as LayerAttention & { idx: Uint32Array };
      const k = idx.length;
      const u = s.layers[l].remainder / (n - k);
      uOf[l] = u;
      // one pass over the listed blocks: the row total (summed over every block in block order, a run
      // of unlisted blocks at a time),
      // the listed blocks above and at u, and their marks cleared (only listed blocks' marks are
      // kept: the unlisted ones taken lie below scanTo, none above)
      let total = 0;
      let above = 0;
      let at = 0;
      let b = 0;
      for (let i = 0; i < k; i++) {
        const nb = idx[i];
        if (nb > b) total = sum.add(total, u, nb - b);
        const x = mass[i];
        total += x;
        b = nb + 1;
        mark[base + nb] = 0;
        if (x > u) above++;
        else if (x === u) at++;
      }
      if (n > b) total = sum.add(total, u, n - b);
      // the K-th smallest key -x: usually the unlisted blocks' -u (the listed ones above u fewer
      // than K, and K within those and the blocks at u); else a selection
      let v: number;
      let ties: number;
      if (above < K && K <= above + at + (n - k)) {
        v = -u;
        ties = K - above;
      } else {
        for (let i = 0; i < k; i++) rowSorted[i] = -mass[i];
        this.rowKey[0] = -u;
        this.rowCount[0] = n - k;
        v = this.weighted.nth(rowSorted, k, this.rowKey, this.rowCount, 1, K);
        ties = K - countBelowUnsorted(rowSorted, k, this.rowKey, this.rowCount, 1, v);
      }
      // key -x below v: x above -v (negation is exact)
      scanTo[l] = markCut(mark, base, n, idx, mass, u, -v, ties);
      if (this.pooled) {
        // (layer l's keys at poolFrom[l], in its listed blocks' order)
        poolFrom[l] = pp;
        for (let i = 0; i < k; i++) poolSorted[pp++] = -(total > 0 ? mass[i] / total : 0);
        this.groupKey[l] = -(total > 0 ? u / total : 0);
        this.groupCount[l] = n - k;
      }
    }
    if (this.pooled) {
      const N = L * K;
      const v = this.weighted.nthAmongGroups(poolSorted, pp, this.groupKey, this.groupCount, L, N);
      let ties = N - countBelowUnsorted(poolSorted, pp, this.groupKey, this.groupCount, L, v);
      // in (layer, block) order: keys below v, then ties while they last
      for (let l = 0; l < L; l++) {
        const base = l * n;
        const { idx } = s.layers[l] as LayerAttention & { idx: Uint32Array };
        ties = markPooled(mark, poolSorted, poolFrom[l], base, n, idx, this.groupKey[l], v, ties, scanTo, l);
      }
    }
  }

  /** The needed lists after cutSortedTopK. */
  private listsSortedTopK(s: TraceStep, n: number): Int32Array[] {
    const L = this.layers;
    const { mark, scanTo } = this;
    // every unlisted block below scanTo is needed (the cuts take them in runs from block 0), none
    // above: a layer's list is those runs and its marked listed blocks, merged in block order
    const lists: Int32Array[] = [];
    const out = this.out;
    let o = 0;
    for (let l = 0; l < L; l++) {
      const base = l * n;
      const from = o;
      const to = scanTo[l];
      const idx = s.layers[l].idx!;
      let b = 0;
      for (let i = 0; i < idx.length; i++) {
        const nb = idx[i];
        const end = nb < to ? nb : to;
        for (; b < end; b++) out[o++] = b;
        if (mark[base + nb]) out[o++] = nb;
        b = nb + 1;
      }
      for (; b < to; b++) out[o++] = b;
      lists.push(out.subarray(from, o));
    }
    return lists;
  }

  /** Room for step `s` (n blocks) in the needed sets of the last changes() call and the changes' buffers. */
  private growMembers(n: number, s: TraceStep): void {
    const L = this.layers;
    if (this.addFrom.length < L + 1) {
      this.addFrom = new Int32Array(L + 1);
      this.dropFrom = new Int32Array(L + 1);
      this.prevTo = new Int32Array(L);
      this.prevIdxFrom = new Int32Array(L + 1);
      this.curIdxFrom = new Int32Array(L + 1);
    }
    if (n > this.cap) {
      // (room for 64 more blocks per layer: a context grows by one block every few steps)
      const cap = n + 64;
      const member = new Uint8Array(L * cap);
      for (let l = 0; l < L; l++) member.set(this.member.subarray(l * this.cap, l * this.cap + this.cap), l * cap);
      this.member = member;
      this.cap = cap;
    }
    let listed = 0;
    for (let l = 0; l < L; l++) listed += s.layers[l].idx?.length ?? 0;
    // (changes: at most every listed block of the two steps and the runs between the cuts, or every block)
    const most = L * Math.max(n, this.prevN) + 2 * listed;
    if (this.added.length < most) {
      this.added = new Int32Array(Math.max(most, 2 * this.added.length));
      this.dropped = new Int32Array(this.added.length);
    }
    // (the previous step's listed blocks stay in prevIdx while this step's are written to curIdx)
    if (this.curIdx.length < listed) this.curIdx = new Int32Array(Math.max(listed, 2 * this.curIdx.length));
  }

  /**
   * The changes after cutSortedTopK: a block's need can change only where either step's row lists
   * it or between the two steps' scanTo (elsewhere it is unlisted on the same side of both); with
   * the previous step's needs not of that form, every block is compared.
   */
  private diffSorted(s: TraceStep, n: number): void {
    const L = this.layers;
    const { mark, scanTo, member, added, dropped, prevTo, prevIdx, prevIdxFrom, curIdx, curIdxFrom } = this;
    const cap = this.cap;
    const runsKept = this.prevSorted;
    const upTo = Math.max(n, this.prevN);
    let na = 0;
    let nd = 0;
    let pi = 0;
    for (let l = 0; l < L; l++) {
      const idx = s.layers[l].idx!;
      const k = idx.length;
      const base = l * n;
      const mb = l * cap;
      const to = scanTo[l];
      this.addFrom[l] = na;
      this.dropFrom[l] = nd;
      // the blocks the row lists carry LISTED in `member` until they are compared (their need: their
      // mark); every other block's need is whether it lies below scanTo
      for (let i = 0; i < k; i++) member[mb + idx[i]] |= LISTED;
      const a0 = na;
      const d0 = nd;
      if (runsKept) {
        for (let i = prevIdxFrom[l]; i < prevIdxFrom[l + 1]; i++) {
          const b = prevIdx[i];
          const was = member[mb + b];
          if (was >= LISTED) continue;
          const now = b < to ? 1 : 0;
          if (now !== was) {
            member[mb + b] = now;
            if (now === 1) added[na++] = b;
            else dropped[nd++] = b;
          }
        }
        const from = prevTo[l] < to ? prevTo[l] : to;
        const end = prevTo[l] < to ? to : prevTo[l];
        for (let b = from; b < end; b++) {
          const was = member[mb + b];
          if (was >= LISTED) continue;
          const now = b < to ? 1 : 0;
          if (now !== was) {
            member[mb + b] = now;
            if (now === 1) added[na++] = b;
            else dropped[nd++] = b;
          }
        }
        for (let i = 0; i < k; i++) {
          const b = idx[i];
          const now = mark[base + b];
          const was = member[mb + b] & 1;
          member[mb + b] = now;
          if (now !== was) {
            if (now === 1) added[na++] = b;
            else dropped[nd++] = b;
          }
        }
        sortAscending(added, a0, na);
        sortAscending(dropped, d0, nd);
      } else {
        for (let b = 0; b < upTo; b++) {
          const m = member[mb + b];
          const now = b >= n ? 0 : m >= LISTED ? mark[base + b] : b < to ? 1 : 0;
          const was = m & 1;
          if (m !== now) member[mb + b] = now;
          if (now !== was) {
            if (now === 1) added[na++] = b;
            else dropped[nd++] = b;
          }
        }
      }
      prevTo[l] = to;
      curIdxFrom[l] = pi;
      curIdx.set(idx, pi);
      pi += k;
    }
    curIdxFrom[L] = pi;
    this.prevIdx = curIdx;
    this.curIdx = prevIdx;
    this.prevIdxFrom = curIdxFrom;
    this.curIdxFrom = prevIdxFrom;
    this.addFrom[L] = na;
    this.dropFrom[L] = nd;
    this.prevSorted = true;
  }

  /** The changes after markAll: every block compared. */
  private diffMarks(n: number): void {
    const L = this.layers;
    const { mark, member, added, dropped } = this;
    const cap = this.cap;
    const upTo = Math.max(n, this.prevN);
    let na = 0;
    let nd = 0;
    for (let l = 0; l < L; l++) {
      const base = l * n;
      const mb = l * cap;
      this.addFrom[l] = na;
      this.dropFrom[l] = nd;
      for (let b = 0; b < upTo; b++) {
        const now = b < n ? mark[base + b] : 0;
        if (now !== member[mb + b]) {
          member[mb + b] = now;
          if (now === 1) added[na++] = b;
          else dropped[nd++] = b;
        }
      }
    }
    this.addFrom[L] = na;
    this.dropFrom[L] = nd;
    this.prevSorted = false;
  }

  /** per layer x block (stride cap): 1 where the step of the last changes() call needs the block (LISTED set only during diffSorted) */
  private member = new Uint8Array(0);
  private cap = 0;
  /** the last changes() call's step: its block count, whether its needs were cut from listed rows (then its rows' listed blocks and scanTo) */
  private prevN = 0;
  private prevSorted = true;
  private prevTo = new Int32Array(0);
  private prevIdx = new Int32Array(0);
  private prevIdxFrom = new Int32Array(0);
  private curIdx = new Int32Array(0);
  private curIdxFrom = new Int32Array(0);
  private addFrom = new Int32Array(0);
  private dropFrom = new Int32Array(0);
  private added = new Int32Array(0);
  private dropped = new Int32Array(0);
  private uOf = new Float64Array(0);
  private scanTo = new Int32Array(0);
  private poolFrom = new Int32Array(0);
  private readonly weighted = new WeightedNth();
  /** the runs of a row's unlisted blocks added to its total (each block's share added in order) */
  private readonly repeatedSum = new RepeatedSum();
}

/** a bit of StepNeeds' member marks: the block is listed by the row being compared */
const LISTED = 2;

/**
 * The N-th smallest key (1-based) of a multiset: `sorted[0..p)` ascending, one each, and `gk[0..groups)`
 * ascending with gc[j] copies of gk[j]. N must not exceed the multiset's size.
 */
export function nthKey(sorted: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, N: number): number {
  let cum = 0;
  let i = 0;
  let j = 0;
  while (true) {
    let v: number;
    if (j >= groups || (i < p && sorted[i] <= gk[j])) {
      if (i >= p) throw new Error(`nthKey: ${N} beyond the multiset (${cum})`);
      v = sorted[i++];
      cum++;
    } else {
      v = gk[j];
      cum += gc[j++];
    }
    if (cum >= N) return v;
  }
}

/** How many keys of the same multiset as nthKey's are below `v`. */
export function countBelow(sorted: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, v: number): number {
  let below = 0;
  while (below < p && sorted[below] < v) below++;
  for (let j = 0; j < groups; j++) if (gk[j] < v) below += gc[j];
  return below;
}

/** countBelow for singles in any order and groups in any order. */
function countBelowUnsorted(singles: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, v: number): number {
  let below = 0;
  for (let i = 0; i < p; i++) if (singles[i] < v) below++;
  for (let j = 0; j < groups; j++) if (gk[j] < v) below += gc[j];
  return below;
}

/**
 * nthKey's value for singles and groups in any order: the N-th smallest key (1-based) of the
 * multiset, by quickselect over the keys weighted by their counts (three-way partitions around a
 * median-of-three pivot), in expected linear time instead of a sort. Scratch arrays are reused.
 */
export class WeightedNth {
  private v = new Float64Array(0);
  private w = new Float64Array(0);
  private inside = new Float64Array(0);
  private gKeys = new Float64Array(0);
  private gCounts = new Float64Array(0);
  private between = new Float64Array(0);
  private equal = new Float64Array(0);
  private readonly none = new Float64Array(0);
  private readonly noCounts = new Int32Array(0);

  /**
   * nth() for many singles and a few groups: the groups sorted, each single counted in the gap
   * between two group keys it falls in (or on a group key) by a look at the three lowest group keys
   * (counting those below it), then a binary search, the gaps and groups
   * walked in order; only when the N-th key lies strictly inside a gap is it selected among that
   * gap's singles.
   */
  nthAmongGroups(singles: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, N: number): number {
    if (this.between.length < groups + 1) {
      this.gKeys = new Float64Array(groups);
      this.gCounts = new Float64Array(groups);
      this.between = new Float64Array(groups + 1);
      this.equal = new Float64Array(groups);
    }
    const { gKeys, gCounts, between, equal } = this;
    // the groups by key (insertion sort)
    for (let j = 0; j < groups; j++) {
      const k = gk[j];
      const c = gc[j];
      let i = j;
      while (i > 0 && gKeys[i - 1] > k) {
        gKeys[i] = gKeys[i - 1];
        gCounts[i] = gCounts[i - 1];
        i--;
      }
      gKeys[i] = k;
      gCounts[i] = c;
    }
    between.fill(0, 0, groups + 1);
    equal.fill(0, 0, groups);
    const low = groups < 3 ? groups : 3;
    // (a missing key stands above every single)
    const g0 = groups > 0 ? gKeys[0] : Infinity;
    const g1 = groups > 1 ? gKeys[1] : Infinity;
    const g2 = groups > 2 ? gKeys[2] : Infinity;
    for (let i = 0; i < p; i++) {
      const x = singles[i];
      // the first group key not below x: among the lowest three first, counted without branches
      // (most singles lie below the third group key, spread over the gaps below it), then by a
      // binary search
      let lo = +(g0 < x) + +(g1 < x) + +(g2 < x);
      if (lo === low) {
        let hi = groups;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (gKeys[mid] < x) lo = mid + 1;
          else hi = mid;
        }
      }
      if (lo < groups && gKeys[lo] === x) equal[lo]++;
      else between[lo]++;
    }
    let cum = 0;
    for (let j = 0; ; j++) {
      if (cum + between[j] >= N) {
        // strictly inside the gap below group key j (above every key when j = groups)
        if (this.inside.length < between[j]) this.inside = new Float64Array(Math.max(between[j], 2 * this.inside.length));
        const inside = this.inside;
        const low = j > 0 ? gKeys[j - 1] : -Infinity;
        let m = 0;
        for (let i = 0; i < p; i++) {
          const x = singles[i];
          if (x > low && (j === groups || x < gKeys[j])) inside[m++] = x;
        }
        return this.nth(inside, m, this.none, this.noCounts, 0, N - cum);
      }
      cum += between[j];
      if (j === groups) break;
      cum += equal[j] + gCounts[j];
      if (cum >= N) return gKeys[j];
    }
    throw new Error(`nthKey: ${N} beyond the multiset (${cum})`);
  }

  nth(singles: Float64Array, p: number, gk: Float64Array, gc: Int32Array, groups: number, N: number): number {
    const count = p + groups;
    if (this.v.length < count) {
      this.v = new Float64Array(Math.max(count, 2 * this.v.length));
      this.w = new Float64Array(this.v.length);
    }
    const { v, w } = this;
    for (let i = 0; i < p; i++) {
      v[i] = singles[i];
      w[i] = 1;
    }
    for (let j = 0; j < groups; j++) {
      v[p + j] = gk[j];
      w[p + j] = gc[j];
    }
    let lo = 0;
    let hi = count;
    let need = N;
    while (lo < hi) {
      const a = v[lo];
      const b = v[(lo + hi) >>> 1];
      const c = v[hi - 1];
      const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
      // [lo, lt) below the pivot, [lt, i) equal, [gt, hi) above
      let lt = lo;
      let i = lo;
      let gt = hi;
      let below = 0;
      let equal = 0;
      while (i < gt) {
        const x = v[i];
        if (x < pivot) {
          below += w[i];
          swap(v, w, lt++, i++);
        } else if (x > pivot) swap(v, w, i, --gt);
        else equal += w[i++];
      }
      if (need <= below) hi = lt;
      else if (need <= below + equal) return pivot;
      else {
        need -= below + equal;
        lo = gt;
      }
    }
    throw new Error(`nthKey: ${N} beyond the multiset`);
  }
}

function swap(v: Float64Array, w: Float64Array, i: number, j: number): void {
  const t = v[i];
  v[i] = v[j];
  v[j] = t;
  const u = w[i];
  w[i] = w[j];
  w[j] = u;
}

/**
 * One row's cut over block values x (listed: mass[i] at idx[i], ascending; every other block: u): mark
 * the listed blocks with x > c, and take the first `ties` blocks (block order) with x === c. Returns
 * the bound below which every unlisted block is taken (n when all are; none above it): unlisted
 * blocks are not marked, only counted, a run of them between two listed blocks at a time.
 */
function markCut(mark: Uint8Array, base: number, n: number, idx: Uint32Array, mass: Float32Array, u: number, c: number, ties: number): number {
  const k = idx.length;
  if (u > c) {
    // every unlisted block is above the cut; ties can only be listed
    for (let i = 0; i < k; i++) {
      const x = mass[i];
      if (x > c) mark[base + idx[i]] = 1;
      else if (x === c && ties > 0) {
        mark[base + idx[i]] = 1;
        ties--;
      }
    }
    return n;
  }
  let i = 0;
  let to = 0;
  if (u === c && ties > 0) {
    // blocks in order while ties last: a run of unlisted ones takes as many ties as it has blocks
    let b = 0;
    while (ties > 0 && b < n) {
      const nb = i < k ? idx[i] : n;
      if (nb - b >= ties) {
        b += ties;
        ties = 0;
        break;
      }
      ties -= nb - b;
      b = nb;
      if (i < k) {
        const x = mass[i++];
        if (x > c) mark[base + nb] = 1;
        else if (x === c) {
          mark[base + nb] = 1;
          ties--;
        }
        b = nb + 1;
      }
    }
    to = b;
  }
  // the rest: only listed blocks can be above the cut (or tie with it while ties last)
  for (; i < k; i++) {
    const x = mass[i];
    if (x > c) mark[base + idx[i]] = 1;
    else if (x === c && ties > 0) {
      mark[base + idx[i]] = 1;
      ties--;
    }
  }
  return to;
}

/**
 * One layer's part of the pooled cut over keys x (listed: keys[at + i] for block idx[i]; every other block:
 * gkey): mark the listed blocks with x < v, and take blocks with x === v while `ties` last (block
 * order). Raises scanTo[l] to the bound below which every unlisted block is taken (they are counted,
 * not marked); returns the ties left.
 */
function markPooled(mark: Uint8Array, keys: Float64Array, at: number, base: number, n: number, idx: Uint32Array, gkey: number, v: number, ties: number, scanTo: Int32Array, l: number): number {
  const k = idx.length;
  let i = 0;
  if (gkey < v) {
    // every unlisted block is below the cut; ties can only be listed
    for (; i < k; i++) {
      const x = keys[at + i];
      if (x < v) mark[base + idx[i]] = 1;
      else if (x === v && ties > 0) {
        mark[base + idx[i]] = 1;
        ties--;
      }
    }
    scanTo[l] = n;
    return ties;
  }
  if (gkey === v && ties > 0) {
    // blocks in order while ties last: a run of unlisted ones takes as many ties as it has blocks
    let b = 0;
    while (ties > 0 && b < n) {
      const nb = i < k ? idx[i] : n;
      if (nb - b >= ties) {
        b += ties;
        ties = 0;
        break;
      }
      ties -= nb - b;
      b = nb;
      if (i < k) {
        const x = keys[at + i];
        i++;
        if (x < v) mark[base + nb] = 1;
        else if (x === v) {
          mark[base + nb] = 1;
          ties--;
        }
        b = nb + 1;
      }
    }
    if (b > scanTo[l]) scanTo[l] = b;
  }
  // the rest: only listed blocks can be below the cut (or tie with it while ties last)
  for (; i < k; i++) {
    const x = keys[at + i];
    if (x < v) mark[base + idx[i]] = 1;
    else if (x === v && ties > 0) {
      mark[base + idx[i]] = 1;
      ties--;
    }
  }
  return ties;
}
