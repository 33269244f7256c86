/**
 * SmartKV's importance: an exponential moving average of the attention each block receives, kept per
 * (layer, KV group, block): imp ← decay · imp + (1 − decay) · mass at every observation of the layer
 * (a block not attended at a step receives 0 there). A block's importance is the sum over its groups
 * (`sum`, the default) or the largest of them (`max`).
 *
 * Why the sum by default: a block holds the KV of every group, and its bits serve them all; the
 * attention-weighted error a block's width causes, summed over the groups, is its error times the sum
 * of the groups' masses, so ranking by the summed EMA puts the bits where the summed (equivalently
 * the group-mean) error falls fastest — the run's quant_error. The max instead protects a block that
 * carries most of one group's attention (a retrieval head's needle) when the other groups ignore it:
 * it bounds each group's worst case. On a generated 8-group trace the sum gave 0.4-24% lower
 * quant_error than the max at 2.5-4 average bits (docs/seed-smartkv.md).
 */
import type { Observation } from './policy.js';

export type GroupImportance = 'max' | 'sum';

export class GroupEma {
  /** imp[(l * G + g) * M + b] */
  readonly imp: Float64Array;

  constructor(
    readonly layers: number,
    readonly groups: number,
    readonly maxBlocks: number,
    readonly decay: number,
  ) {
    this.imp = new Float64Array(layers * groups * maxBlocks);
  }

  /** one observation of a layer: every block of every group decays, attended ones gain their mass. O(G · nBlocks). */
  observe(obs: Observation): void {
    const d = this.decay;
    const w = 1 - d;
    const n = obs.nBlocks;
    const att = obs.attended;
    const G = this.groups;
    const M = this.maxBlocks;
    // every block attended (the usual case without skips): the products by att (by 1) are left out
    const all = obs.attendedCount === n;
    for (let g = 0; g < G; g++) {
      const row = G === 1 ? obs : obs.groups[g];
      const base = (obs.layer * G + g) * M;
      const imp = this.imp;
      const { idx, mass } = row;
      // (att is 0 or 1: x * att is x or +0, and adding +0 leaves a sum as it is, so no branch is needed)
      if (idx === null) {
        if (all) for (let b = 0; b < n; b++) imp[base + b] = d * imp[base + b] + w * mass[b];
        else for (let b = 0; b < n; b++) imp[base + b] = d * imp[base + b] + w * mass[b] * att[b];
        continue;
      }
      // sparse: every attended block gets the uniform share, listed ones their own mass instead
      const wu = w * row.uniform;
      if (all) for (let b = base, end = base + n; b < end; b++) imp[b] = d * imp[b] + wu;
      else for (let b = 0; b < n; b++) imp[base + b] = d * imp[base + b] + wu * att[b];
      for (let i = 0; i < idx.length; i++) {
        const b = idx[i];
        if (att[b]) imp[base + b] += w * mass[i] - wu;
      }
    }
  }

  /** importance of one block: the max or the sum over its groups */
  of(l: number, b: number, mode: GroupImportance): number {
    const G = this.groups;
    const M = this.maxBlocks;
    let base = l * G * M + b;
    let s = this.imp[base];
    for (let g = 1; g < G; g++) {
      base += M;
      const x = this.imp[base];
      s = mode === 'max' ? (x > s ? x : s) : s + x;
    }
    return s;
  }

  /** out[b] = of(l, b, mode) for b < n */
  scoresInto(l: number, n: number, mode: GroupImportance, out: Float64Array): void {
    const G = this.groups;
    const M = this.maxBlocks;
    const base = l * G * M;
    out.set(this.imp.subarray(base, base + n));
    for (let g = 1; g < G; g++) {
      const o = base + g * M;
      if (mode === 'max') {
        for (let b = 0; b < n; b++) if (this.imp[o + b] > out[b]) out[b] = this.imp[o + b];
      } else {
        for (let b = 0; b < n; b++) out[b] += this.imp[o + b];
      }
    }
  }
}
