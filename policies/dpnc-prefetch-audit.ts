/**
 * DPNC's prefetch scorecard, counted page by page (a meter: its counts feed Policy.report() only,
 * never a decision).
 *
 * At each page-in decision for step t the policy lists every live page of the layer that is not in
 * HBM, with the predictor's answer ("needed at t": yes/no), and then the pages it paged in for t, with
 * the trigger and the bytes moved. When the layer's attention at step t is observed, each listed page
 * is settled: it was *needed* when its mass at t is at least use_factor / nBlocks (use_factor times
 * the even share). The masses of pages the kernel did not attend are read from the observation's row,
 * which carries the trace's attention for every block (the truth the run's recall is computed from);
 * this is what makes recall countable, and it is the only place DPNC reads masses of unattended
 * pages. A paged-in page was *used* when it was attended and needed.
 *
 * Counts, over the listed (offloaded) pages:
 * - predictor accuracy: share of pages where the answer matched the need; majority accuracy: the
 *   share of the larger class on the same pages (what always answering that class would score);
 * - prefetch precision: used / paged in; recall: needed pages that were paged in / needed pages;
 * - bytes paged in, and bytes wasted (paged in, not used); per trigger: paged in and used.
 */
import type { Observation } from './policy.js';

export const TRIGGERS = ['tree', 'recent', 'important', 'explore'] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** Is a page with this mass needed in a row of nBlocks blocks? */
export function isNeeded(mass: number, nBlocks: number, useFactor: number): boolean {
  return mass > 0 && mass * nBlocks >= useFactor;
}

/** no listing pending */
const NONE = -0x7fffffff;

export class PrefetchAudit {
  /** per (layer, block): the step it was listed for (-1: none), the answer, the step it was paged in for */
  /** per (layer, block): the step it was listed for (-1: none) and the answer (1: yes); see beginListing */
  readonly listedFor: Int32Array;
  readonly answer: Uint8Array;
  private readonly inFor: Int32Array;
  private readonly triggerOf: Uint8Array;
  private readonly bytesOf: Float64Array;
  private truth: Float64Array;
  /**
   * per layer, the listing being filled (one decision's pages, all for one step): its step (NONE:
   * settled), pages, pages answered yes, one past its last block, and its paged-in blocks; a layer
   * where a listing began before the last one was settled is `mixed` and settles page by page
   */
  private readonly listStep: Int32Array;
  private readonly listCount: Int32Array;
  private readonly listYes: Int32Array;
  private readonly listEnd: Int32Array;
  private readonly mixed: Uint8Array;
  private readonly inList: Int32Array[];
  private readonly inCount: Int32Array;
  /** per layer, the step last settled together (its pages keep listedFor = that step) */
  private readonly lastTopK: Int32Array;

  examples = 0;
  needed = 0;
  predicted = 0;
  truePositives = 0;
  correct = 0;
  pagedIn = 0;
  used = 0;
  neededPagedIn = 0;
  bytes = 0;
  bytesWasted = 0;
  readonly byTrigger: Record<Trigger, { pagedIn: number; used: number }> = {
    tree: { pagedIn: 0, used: 0 },
    recent: { pagedIn: 0, used: 0 },
    important: { pagedIn: 0, used: 0 },
    explore: { pagedIn: 0, used: 0 },
  };

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    readonly useFactor: number,
  ) {
    const n = layers * maxBlocks;
    this.listedFor = new Int32Array(n).fill(-1);
    this.answer = new Uint8Array(n);
    this.inFor = new Int32Array(n).fill(-1);
    this.triggerOf = new Uint8Array(n);
    this.bytesOf = new Float64Array(n);
    this.truth = new Float64Array(maxBlocks);
    this.listStep = new Int32Array(layers).fill(NONE);
    this.listCount = new Int32Array(layers);
    this.listYes = new Int32Array(layers);
    this.listEnd = new Int32Array(layers);
    this.mixed = new Uint8Array(layers);
    this.inList = Array.from({ length: layers }, () => new Int32Array(8));
    this.inCount = new Int32Array(layers);
    this.lastTopK = new Int32Array(layers).fill(NONE);
  }

  /** Page b of layer l is offloaded at the decision for step t; the predictor answered `predicted`. */
  offloaded(l: number, b: number, t: number, predicted: boolean): void {
    const i = l * this.maxBlocks + b;
    const yes = predicted ? 1 : 0;
    if (this.listStep[l] !== t) this.beginListing(l, t);
    if (this.listedFor[i] === t) {
      this.listYes[l] += yes - this.answer[i];
    } else {
      this.listCount[l]++;
      this.listYes[l] += yes;
      if (b + 1 > this.listEnd[l]) this.listEnd[l] = b + 1;
    }
    this.listedFor[i] = t;
    this.answer[i] = yes;
  }

  /**
   * Begin a listing of layer l's offloaded pages for step t that the caller writes itself: for each
   * page, once, listedFor[l * maxBlocks + b] = t and answer[...] = 1 or 0, then endListing() with the
   * counts (the same as offloaded() for each). False (nothing begun: call offloaded()) when layer l's
   * listing for t is open already.
   */
  beginListing(l: number, t: number): boolean {
    if (this.listStep[l] === t) return false;
    if (this.listStep[l] !== NONE) this.mixed[l] = 1;
    // a step listed again after it was settled together: its pages are no longer listed
    if (this.lastTopK[l] === t) {
      for (let j = l * this.maxBlocks; j < (l + 1) * this.maxBlocks; j++) if (this.listedFor[j] === t) this.listedFor[j] = -1;
      this.lastTopK[l] = NONE;
    }
    this.listStep[l] = t;
    this.listCount[l] = 0;
    this.listYes[l] = 0;
    this.listEnd[l] = 0;
    this.inCount[l] = 0;
    return true;
  }

  /** Whether layer l's listing for step t is open (begun, not settled): beginListing(l, t) would answer false. */
  isListing(l: number, t: number): boolean {
    return this.listStep[l] === t;
  }

  /**
   * Whether settle(obs) reads the listing of every block below obs.nBlocks (page by page) rather than
   * only that of the blocks in obs.idx and of the pages paged in (top-k, counted together). A caller
   * that writes listedFor / answer late, just before settle(), writes those.
   */
  readsEveryPage(obs: Observation): boolean {
    const l = obs.layer;
    if (this.mixed[l] !== 0) return true;
    if (this.listStep[l] !== obs.step) return false;
    const idx = obs.idx;
    if (idx === null || this.listEnd[l] > obs.nBlocks) return true;
    for (let k = 1; k < idx.length; k++) if (!(idx[k] > idx[k - 1])) return true;
    return idx.length > 0 && idx[idx.length - 1] >= obs.nBlocks;
  }

  /** End the listing beginListing(l, t) began: `count` pages written, `yes` of them answered yes, the last block end − 1. */
  endListing(l: number, count: number, yes: number, end: number): void {
    this.listCount[l] = count;
    this.listYes[l] = yes;
    this.listEnd[l] = end;
  }

  /** offloaded(l, blocks[j], t, answers[blocks[j]] === 1) for j = 0 .. count − 1, in that order */
  listOffloaded(l: number, t: number, blocks: Int32Array, answers: Uint8Array, count: number): void {
    if (count === 0) return;
    // the first call begins the listing for t when another one is open
    this.offloaded(l, blocks[0], t, answers[blocks[0]] === 1);
    const listedFor = this.listedFor;
    const answer = this.answer;
    const base = l * this.maxBlocks;
    let listed = this.listCount[l];
    let yes = this.listYes[l];
    let end = this.listEnd[l];
    for (let j = 1; j < count; j++) {
      const b = blocks[j];
      const i = base + b;
      const a = answers[b] === 1 ? 1 : 0;
      if (listedFor[i] === t) {
        yes += a - answer[i];
      } else {
        listed++;
        yes += a;
        if (b + 1 > end) end = b + 1;
      }
      listedFor[i] = t;
      answer[i] = a;
    }
    this.listCount[l] = listed;
    this.listYes[l] = yes;
    this.listEnd[l] = end;
  }

  /** Page b of layer l (listed for t) was paged in for step t by `trigger`, moving `bytes`. */
  pagedInFor(l: number, b: number, t: number, trigger: Trigger, bytes: number): void {
    const i = l * this.maxBlocks + b;
    if (this.listedFor[i] !== t || this.lastTopK[l] === t) throw new Error(`prefetch audit: layer ${l} block ${b} paged in for step ${t} but not listed as offloaded for it`);
    if (this.inFor[i] !== t && this.listStep[l] === t) {
      if (this.inCount[l] === this.inList[l].length) {
        const grown = new Int32Array(2 * this.inList[l].length);
        grown.set(this.inList[l]);
        this.inList[l] = grown;
      }
      this.inList[l][this.inCount[l]++] = b;
    }
    this.inFor[i] = t;
    this.triggerOf[i] = TRIGGERS.indexOf(trigger);
    this.bytesOf[i] = bytes;
  }

  /**
   * Settle the pages listed for (obs.step, obs.layer). With top-k attention, every listed page
   * outside the listed blocks has the same mass (`uniform`), so those pages are counted together;
   * the listed blocks and the paged-in pages one by one.
   */
  settle(obs: Observation): void {
    const l = obs.layer;
    const t = obs.step;
    if (this.mixed[l] === 0) {
      if (this.listStep[l] !== t) return;
      if (obs.idx !== null && this.listEnd[l] <= obs.nBlocks && this.settleTopK(obs)) return;
    }
    this.settleEach(obs);
    if (this.listStep[l] === t) this.listStep[l] = NONE;
  }

  /** settle() counting the pages outside obs.idx together; false (nothing counted) when idx is not strictly ascending */
  private settleTopK(obs: Observation): boolean {
    const idx = obs.idx!;
    const l = obs.layer;
    const t = obs.step;
    const n = obs.nBlocks;
    const base = l * this.maxBlocks;
    for (let k = 1; k < idx.length; k++) if (!(idx[k] > idx[k - 1])) return false;
    if (idx.length > 0 && idx[idx.length - 1] >= n) return false;
    // listed pages among the listed blocks, one by one
    let inIdx = 0;
    let yesInIdx = 0;
    let needed = 0;
    let yesNeeded = 0;
    let correct = 0;
    // (counted by adding 0 or 1: whether a listed block was listed for the step, said and needed
    // falls either way at random; `need` is isNeeded written without a branch)
    const listedFor = this.listedFor;
    const answer = this.answer;
    const mass = obs.mass;
    const useFactor = this.useFactor;
    for (let k = 0; k < idx.length; k++) {
      const i = base + idx[k];
      const m = mass[k];
      const c = +(listedFor[i] === t);
      const need = +(m > 0) & +(m * n >= useFactor);
      const said = +(answer[i] === 1);
      inIdx += c;
      yesInIdx += c & said;
      needed += c & need;
      yesNeeded += c & said & need;
      correct += c & +(said === need);
    }
    // the others, all of mass `uniform`
    const rest = this.listCount[l] - inIdx;
    const restYes = this.listYes[l] - yesInIdx;
    const needU = isNeeded(obs.uniform, n, this.useFactor);
    this.examples += this.listCount[l];
    this.predicted += this.listYes[l];
    this.needed += needed + (needU ? rest : 0);
    this.truePositives += yesNeeded + (needU ? restYes : 0);
    this.correct += correct + (needU ? restYes : rest - restYes);
    // the paged-in pages, in block order
    const list = this.inList[l];
    const m = this.inCount[l];
    list.subarray(0, m).sort();
    for (let j = 0; j < m; j++) {
      const b = list[j];
      const i = base + b;
      if (this.inFor[i] !== t || this.listedFor[i] !== t) continue;
      let mass = obs.uniform;
      for (let k = 0; k < idx.length; k++) {
        if (idx[k] === b) {
          mass = obs.mass[k];
          break;
        }
      }
      this.countPagedIn(i, isNeeded(mass, n, this.useFactor), obs.attended[b] === 1);
    }
    this.inCount[l] = 0;
    this.listStep[l] = NONE;
    this.lastTopK[l] = t;
    return true;
  }

  /** a page paged in for the step being settled, needed or not, attended or not */
  private countPagedIn(i: number, need: boolean, attended: boolean): void {
    this.inFor[i] = -1;
    const use = need && attended;
    const tr = this.byTrigger[TRIGGERS[this.triggerOf[i]]];
    this.pagedIn++;
    tr.pagedIn++;
    this.bytes += this.bytesOf[i];
    if (need) this.neededPagedIn++;
    if (use) {
      this.used++;
      tr.used++;
    } else this.bytesWasted += this.bytesOf[i];
  }

  /** settle() page by page */
  private settleEach(obs: Observation): void {
    const t = obs.step;
    const n = obs.nBlocks;
    const base = obs.layer * this.maxBlocks;
    this.inCount[obs.layer] = 0;
    let any = false;
    for (let b = 0; b < n && !any; b++) any = this.listedFor[base + b] === t;
    if (!any) return;
    const truth = this.rowMasses(obs);
    for (let b = 0; b < n; b++) {
      const i = base + b;
      if (this.listedFor[i] !== t) continue;
      this.listedFor[i] = -1;
      const need = isNeeded(truth[b], n, this.useFactor);
      const said = this.answer[i] === 1;
      this.examples++;
      if (need) this.needed++;
      if (said) this.predicted++;
      if (said && need) this.truePositives++;
      if (said === need) this.correct++;
      if (this.inFor[i] !== t) continue;
      this.countPagedIn(i, need, obs.attended[b] === 1);
    }
  }

  /** The row's mass on every block (dense), from the observation's layer-level fields. */
  private rowMasses(obs: Observation): Float64Array {
    if (this.truth.length < obs.nBlocks) this.truth = new Float64Array(obs.nBlocks);
    const out = this.truth;
    if (obs.idx === null) {
      for (let b = 0; b < obs.nBlocks; b++) out[b] = obs.mass[b];
    } else {
      out.fill(obs.uniform, 0, obs.nBlocks);
      for (let k = 0; k < obs.idx.length; k++) out[obs.idx[k]] = obs.mass[k];
    }
    return out;
  }

  report(): Record<string, number> {
    const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
    const out: Record<string, number> = {
      predictor_examples: this.examples,
      predictor_needed: this.needed,
      predictor_predicted: this.predicted,
      predictor_true_positives: this.truePositives,
      predictor_accuracy: ratio(this.correct, this.examples),
      predictor_majority_accuracy: ratio(Math.max(this.needed, this.examples - this.needed), this.examples),
      prefetches: this.pagedIn,
      prefetch_used: this.used,
      prefetch_precision: ratio(this.used, this.pagedIn),
      prefetch_recall: ratio(this.neededPagedIn, this.needed),
      prefetch_bytes: this.bytes,
      prefetch_bytes_wasted: this.bytesWasted,
    };
    for (const t of TRIGGERS) {
      out[`prefetches_${t}`] = this.byTrigger[t].pagedIn;
      out[`prefetch_used_${t}`] = this.byTrigger[t].used;
    }
    return out;
  }
}
