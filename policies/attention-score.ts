/**
 * Cumulative attention per block (the H2O score): score[j] += attention mass on j at every observed
 * step. Sparse observations (top-k + an even share for the rest) update in O(k) through a per-layer
 * offset that every block carries. Blocks never observed score -Infinity until they are.
 */
import type { Observation } from './policy.js';

export class AttentionScore {
  protected readonly score: Float64Array;
  protected readonly offset: Float64Array;
  protected readonly knownUpTo: Int32Array;

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

  /** block b's score less the layer's offset (get() = raw + offset once observed): a sparse observation changes only its listed and unattended blocks' raw scores */
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

  /**
   * Add one observation. `attendedList[0 .. nAttended)`, when given: every block obs.attended marks,
   * in ascending order (the unattended blocks are then the gaps between them, read without a look
   * at each block's mark; the same scores).
   */
  observe(obs: Observation, attendedList?: ArrayLike<number>, nAttended = 0): void {
    const l = obs.layer;
    const base = l * this.maxBlocks;
    for (let b = this.knownUpTo[l]; b < obs.nBlocks; b++) this.score[base + b] = -this.offset[l];
    if (obs.nBlocks > this.knownUpTo[l]) this.knownUpTo[l] = obs.nBlocks;
    const { idx, mass, uniform, attended } = obs;
    if (idx === null) {
      for (let b = 0; b < obs.nBlocks; b++) if (attended[b]) this.score[base + b] += mass[b];
      return;
    }
    // every attended unlisted block gets `uniform`: add it to all through the offset, then take it
    // back from the blocks that did not get it (listed ones get their own mass; unattended get none).
    // The unattended blocks go first, in one pass along the layer's scores, then the listed attended
    // ones, whose scores that pass has just read in: the two sets share no block, so the order
    // changes no score.
    this.offset[l] += uniform;
    const score = this.score;
    if (uniform > 0 && obs.attendedCount < obs.nBlocks) {
      if (attendedList === undefined) {
        for (let b = 0; b < obs.nBlocks; b++) if (!attended[b]) score[base + b] -= uniform;
      } else {
        let from = base;
        for (let a = 0; a <= nAttended; a++) {
          const to = base + (a < nAttended ? attendedList[a] : obs.nBlocks);
          for (let i = from; i < to; i++) score[i] -= uniform;
          from = to + 1;
        }
      }
    }
    for (let i = 0; i < idx.length; i++) if (attended[idx[i]]) score[base + idx[i]] += mass[i] - uniform;
  }
}
