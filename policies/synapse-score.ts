/**
 * SynapseVM's saliency: the H2O score (cumulative attention per block) as AttentionScore keeps it
 * (attention-score.ts: the same arrays, the same additions in the same order, so the same floats),
 * with one more entry point for the observations SynapseVM sees at almost every layer and step: a
 * listed (sparse) observation that attended every block. observeAttendedAll() adds such an
 * observation in one pass over its listed blocks, and in that pass also finds what SynapseVM's other
 * parts would each read the listed blocks again for: whether a raw score may have fallen (the cold
 * orders' test), whether the listed blocks strictly ascend and lie below nBlocks, and whether every
 * listed mass is finite (the forecast's listed form).
 */
import type { Observation } from './policy.js';

/** observeAttendedAll's answer, bit by bit */
/** a raw score may have fallen (a listed mass below the uniform share, a uniform share below 0, or a value that is not a number) */
export const LISTED_FELL = 1;
/** the listed blocks strictly ascend */
export const LISTED_ASCENDING = 2;
/** every listed block is below nBlocks */
export const LISTED_BELOW = 4;
/** every listed mass is finite */
export const LISTED_FINITE = 8;

export class SynapseScore {
  private readonly score: Float64Array;
  private readonly offset: Float64Array;
  private readonly knownUpTo: Int32Array;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
  ) {
    this.score = new Float64Array(layers * maxBlocks);
    this.offset = new Float64Array(layers);
    this.knownUpTo = new Int32Array(layers);
  }

  /** cumulative attention of block b in layer l (0 for a block not yet observed) */
  get(l: number, b: number): number {
    return b < this.knownUpTo[l] ? this.score[l * this.maxBlocks + b] + this.offset[l] : 0;
  }

  /** block b's score less the layer's offset (get() = raw + offset once observed) */
  raw(l: number, b: number): number {
    return this.score[l * this.maxBlocks + b];
  }

  /** the offset every observed block of layer l carries */
  offsetOf(l: number): number {
    return this.offset[l];
  }

  /** blocks of layer l observed so far (get() is 0 from here on) */
  known(l: number): number {
    return this.knownUpTo[l];
  }

  /** Add one observation (AttentionScore.observe without an attended list). */
  observe(obs: Observation): void {
    const l = obs.layer;
    const base = l * this.maxBlocks;
    this.know(l, base, obs.nBlocks);
    const { idx, mass, uniform, attended } = obs;
    if (idx === null) {
      for (let b = 0; b < obs.nBlocks; b++) if (attended[b]) this.score[base + b] += mass[b];
      return;
    }
    // every attended unlisted block gets `uniform`: add it to all through the offset, then take it
    // back from the blocks that did not get it (listed ones get their own mass; unattended get none)
    this.offset[l] += uniform;
    for (let i = 0; i < idx.length; i++) if (attended[idx[i]]) this.score[base + idx[i]] += mass[i] - uniform;
    if (!(uniform > 0 && obs.attendedCount < obs.nBlocks)) return;
    for (let b = 0; b < obs.nBlocks; b++) if (!attended[b]) this.score[base + b] -= uniform;
  }

  /**
   * observe() for a listed observation (obs.idx not null) that attended every one of its blocks
   * (obs.attendedCount === obs.nBlocks, so obs.attended is 1 for every block below nBlocks): the
   * same scores. Returns the LISTED_* bits that hold for it.
   */
  observeAttendedAll(obs: Observation): number {
    const l = obs.layer;
    const base = l * this.maxBlocks;
    const n = obs.nBlocks;
    this.know(l, base, n);
    const { mass, uniform, attended } = obs;
    const idx = obs.idx!;
    this.offset[l] += uniform;
    const score = this.score;
    let fell = !(uniform >= 0);
    let ascending = true;
    let below = true;
    let finite = true;
    let last = -1;
    for (let i = 0; i < idx.length; i++) {
      const b = idx[i];
      const m = mass[i];
      // (a block below nBlocks is attended; one at or above it only where the mask says so)
      if (b < n || attended[b]) {
        const d = m - uniform;
        score[base + b] += d;
        if (!(d >= 0)) fell = true;
      }
      if (b >= n) below = false;
      if (!(b > last)) ascending = false;
      if (!Number.isFinite(m)) finite = false;
      last = b;
    }
    return (fell ? LISTED_FELL : 0) | (ascending ? LISTED_ASCENDING : 0) | (below ? LISTED_BELOW : 0) | (finite ? LISTED_FINITE : 0);
  }

  /** blocks from knownUpTo to n become known with score 0 (raw −offset) */
  private know(l: number, base: number, n: number): void {
    for (let b = this.knownUpTo[l]; b < n; b++) this.score[base + b] = -this.offset[l];
    if (n > this.knownUpTo[l]) this.knownUpTo[l] = n;
  }
}
