/**
 * The spread of a copy batch's host slots: the copy engine pays more per single-block copy the further
 * apart consecutive copies' host slots are (perf/device/host-span.mjs). Host slots are laid out by
 * block number (block b of layer l at slot l * M + b), so the distance is counted in blocks.
 */

/**
 * Host-slot distance (blocks) between consecutive copies of a batch that a link's spread_us starts
 * from: the calibration's layout batches place their single-block copies 2-4 slots apart
 * (hil/bench/layout-batches.ts), so their fitted alpha already holds that distance's cost.
 */
export const SPREAD_FROM_BLOCKS = 3;

/** doublings of one host-slot distance `d` (blocks, d >= 0) beyond SPREAD_FROM_BLOCKS: 0 up to it */
export function gapDoublings(d: number): number {
  return d > SPREAD_FROM_BLOCKS ? Math.log2(d / SPREAD_FROM_BLOCKS) : 0;
}

/**
 * Doublings of the host-slot distance beyond SPREAD_FROM_BLOCKS, summed over a batch's blocks in the
 * order listed: for each block, gapDoublings(|b - previous|); the first block's previous is `from`
 * (the last block of the stage this batch continues; -1: none).
 */
export function spreadDoublings(blocks: readonly number[], from = -1): number {
  let sum = 0;
  let prev = from;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    if (prev >= 0) sum += gapDoublings(b > prev ? b - prev : prev - b);
    prev = b;
  }
  return sum;
}

/**
 * Copies of a batch whose host slot directly follows the previous copy's, where each listed block is its
 * own copy (as a move into HBM slots copies them): the blocks one past the block before them.
 */
export function adjacentCopies(blocks: readonly number[]): number {
  let n = 0;
  for (let i = 1; i < blocks.length; i++) if (blocks[i] - blocks[i - 1] === 1) n++;
  return n;
}
