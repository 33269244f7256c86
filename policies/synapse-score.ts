/**
 * SynapseVM's saliency: the H2O score (cumulative attention per block), AttentionScore
 * (attention-score.ts) with one more entry point for the observations SynapseVM sees at almost every layer and step: a
 * listed (sparse) observation that attended every block. observeAttendedAll() adds such an
 * observation in one pass over its listed blocks, and in that pass also finds what SynapseVM's other
 * parts would each read the listed blocks again for: whether a raw score may have fallen (the cold
 * orders' test), whether the listed blocks strictly ascend and lie below nBlocks, and whether every
 * listed mass is finite (the forecast's listed form).
 */
import { AttentionScore } from './attention-score.js';
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

export class SynapseScore extends AttentionScore {
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
