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

export class PrefetchAudit {
  /** per (layer, block): the step it was listed for (-1: none), the answer, the step it was paged in for */
  private readonly listedFor: Int32Array;
  private readonly answer: Uint8Array;
  private readonly inFor: Int32Array;
  private readonly triggerOf: Uint8Array;
  private readonly bytesOf: Float64Array;
  private truth: Float64Array;

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
  }

  /** Page b of layer l is offloaded at the decision for step t; the predictor answered `predicted`. */
  offloaded(l: number, b: number, t: number, predicted: boolean): void {
    const i = l * this.maxBlocks + b;
    this.listedFor[i] = t;
    this.answer[i] = predicted ? 1 : 0;
  }

  /** Page b of layer l (listed for t) was paged in for step t by `trigger`, moving `bytes`. */
  pagedInFor(l: number, b: number, t: number, trigger: Trigger, bytes: number): void {
    const i = l * this.maxBlocks + b;
    if (this.listedFor[i] !== t) throw new Error(`prefetch audit: layer ${l} block ${b} paged in for step ${t} but not listed as offloaded for it`);
    this.inFor[i] = t;
    this.triggerOf[i] = TRIGGERS.indexOf(trigger);
    this.bytesOf[i] = bytes;
  }

  /** Settle the pages listed for (obs.step, obs.layer). */
  settle(obs: Observation): void {
    const t = obs.step;
    const n = obs.nBlocks;
    const base = obs.layer * this.maxBlocks;
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
      this.inFor[i] = -1;
      const use = need && obs.attended[b] === 1;
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
