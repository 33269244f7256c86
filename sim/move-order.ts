/** The order in which one decision's moves of a block are applied (the HIL executor's and the simulator's copy counts follow it). */
import type { MoveBatch } from './executor.js';
import { NONE } from './kv-cache.js';

/**
 * An order of one block's moves (indices into `batches`, each used once) in which every move starts
 * where the previous one left the block, starting at (tier, bits); a spill starts where the block
 * does not exist yet. Depth-first over the moves in order of appearance (a block has a handful of
 * moves per decision); null when there is none.
 */
export function blockPath(tier: number, bits: number, ks: readonly number[], batches: readonly MoveBatch[]): number[] | null {
  const used = new Uint8Array(ks.length);
  const path: number[] = [];
  const walk = (t: number, b: number): boolean => {
    if (path.length === ks.length) return true;
    for (let j = 0; j < ks.length; j++) {
      if (used[j]) continue;
      const m = batches[ks[j]];
      const fits = m.reason === 'spill' ? t === NONE : t === m.fromTier && b === m.fromBits;
      if (!fits) continue;
      used[j] = 1;
      path.push(ks[j]);
      if (walk(m.toTier, m.toBits)) return true;
      path.pop();
      used[j] = 0;
    }
    return false;
  };
  return walk(tier, bits) ? path : null;
}
