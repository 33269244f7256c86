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

/**
 * The moves of one flush in the order they are applied: each block's moves ordered by blockPath from
 * where the block starts (`start(i)`: tier and bits of block i = layer * M + b), the k-th moves of all
 * blocks forming round k, each round in the batches' order. Returns (batch index, its blocks moved in
 * that round) pairs. `noPath(i, ks)` gives the order of a block's moves when no walk uses them all.
 */
export function moveRounds(batches: readonly MoveBatch[], M: number, start: (i: number) => [number, number], noPath: (i: number, ks: number[]) => number[]): { k: number; blocks: number[] }[] {
  // per block (l * M + b): the batches it appears in, in order of appearance
  const occ = new Map<number, number[]>();
  batches.forEach((m, k) => {
    for (const x of m.blocks) {
      const i = m.layer * M + x;
      const list = occ.get(i);
      if (list) list.push(k);
      else occ.set(i, [k]);
    }
  });
  const order = new Map<number, number[]>();
  let rounds = 0;
  for (const [i, ks] of occ) {
    const [t, b] = start(i);
    const path = blockPath(t, b, ks, batches) ?? noPath(i, ks);
    order.set(i, path);
    rounds = Math.max(rounds, path.length);
  }
  const out: { k: number; blocks: number[] }[] = [];
  for (let r = 0; r < rounds; r++) {
    batches.forEach((m, k) => {
      const now: number[] = [];
      for (const x of m.blocks) if (order.get(m.layer * M + x)![r] === k && (now.length === 0 || !now.includes(x))) now.push(x);
      if (now.length) out.push({ k, blocks: now });
    });
  }
  return out;
}
