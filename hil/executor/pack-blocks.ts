/**
 * Expected bytes of a list of blocks, packed back to back: the work a block-packing worker does, and
 * the same work on the calling thread when no worker pool is used.
 */
import { PRECISION_OF_BITS as PREC, blockBytes, type BlockGeometry } from '../kv-format.js';
import { BlockData } from './block-data.js';
import { expectedBlock } from './expected-block.js';

export interface PackTask {
  geometry: BlockGeometry;
  rotation: boolean;
  seed: number;
  /** FP16 values per block (BlockData's `halves`) */
  halves: number;
  /** (layer, block, bits) of each block, in order */
  items: Int32Array;
}

/** bytes of a block at `bits` in the geometry */
export function packedSize(g: BlockGeometry, bits: number): number {
  return blockBytes(g, PREC[bits]!);
}

let cached: BlockData | null = null;

/** the blocks' bytes, one after another in the items' order */
export function packBlocks(t: PackTask, data?: BlockData): Uint8Array {
  if (!data) {
    if (!cached || cached.seed !== t.seed || cached.halves !== t.halves) cached = new BlockData(t.seed, t.halves);
    data = cached;
  }
  const spec = { geometry: t.geometry, rotation: t.rotation };
  let total = 0;
  for (let i = 2; i < t.items.length; i += 3) total += packedSize(t.geometry, t.items[i]!);
  const out = new Uint8Array(total);
  // FP16 content without rotation is the block's values as they are: filled in place, four bytes at a time
  const words = new Uint32Array(out.buffer, 0, out.length >> 2);
  let at = 0;
  for (let i = 0; i < t.items.length; i += 3) {
    const bits = t.items[i + 2]!;
    if (bits === 16 && !t.rotation && at % 4 === 0) {
      data.fill(t.items[i]!, t.items[i + 1]!, words, at / 4);
      at += t.halves * 2;
      continue;
    }
    const bytes = expectedBlock(spec, data, t.items[i]!, t.items[i + 1]!, bits);
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}
