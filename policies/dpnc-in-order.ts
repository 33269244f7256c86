/**
 * Visiting a list of blocks in order of a key per block (ties: the lower block first) when the visit
 * usually stops after a few: the first few come from one pass that keeps the smallest (no copy, no
 * sort of the list); if more are wanted, the next ones are selected (quickselect) and sorted a
 * chunk at a time, each chunk twice the last. DPNC takes its victims, page-ins and demotions this way.
 */
import { selectBottomKKeyed } from './quickselect.js';

export class InOrder {
  /** a first chunk up to this size comes from the one-pass selection */
  static readonly TOP = 8;
  private readonly topKey = new Float64Array(InOrder.TOP);
  private readonly topId = new Int32Array(InOrder.TOP);
  /** per block: 1 while it is among the first chunk visited (reset after) */
  private readonly taken: Uint8Array;
  /** keys of the ids being selected, by position */
  private readonly keys: Float64Array;

  /** for blocks 0 .. maxBlocks − 1 and lists of at most maxBlocks */
  constructor(readonly maxBlocks: number) {
    this.taken = new Uint8Array(maxBlocks);
    this.keys = new Float64Array(maxBlocks);
  }

  /**
   * Call visit(ctx, b) for the blocks of ids[0 .. count) in order of (key[b], b), ascending, until it
   * returns false. `first`: how many visits are likely (the size of the first chunk). ids is reordered
   * (it stays a permutation of what it held); the blocks must be distinct. (The caller's state comes
   * as `ctx`, so that one function serves every caller instance: a call site here sees the same
   * targets from one instance to the next.)
   */
  visit<C>(ids: Int32Array, count: number, key: Float64Array, first: number, visit: (ctx: C, b: number) => boolean, ctx: C): void {
    const keys = this.keys;
    let from = 0;
    let chunk = Math.max(1, first);
    if (chunk <= InOrder.TOP && count > chunk) {
      // one pass keeps the chunk smallest, in order
      const topKey = this.topKey;
      const topId = this.topId;
      let m = 0;
      for (let j = 0; j < count; j++) {
        const b = ids[j];
        const kb = key[b];
        if (m === chunk && !(kb < topKey[m - 1] || (kb === topKey[m - 1] && b < topId[m - 1]))) continue;
        let y = m < chunk ? m++ : chunk - 1;
        for (; y > 0 && (topKey[y - 1] > kb || (topKey[y - 1] === kb && topId[y - 1] > b)); y--) {
          topKey[y] = topKey[y - 1];
          topId[y] = topId[y - 1];
        }
        topKey[y] = kb;
        topId[y] = b;
      }
      for (let j = 0; j < m; j++) if (!visit(ctx, topId[j])) return;
      // more wanted: the visited ones go to the front, the next chunk comes from the others
      const taken = this.taken;
      for (let j = 0; j < m; j++) taken[topId[j]] = 1;
      for (let j = 0; j < count; j++) {
        if (taken[ids[j]] === 0) continue;
        const b = ids[j];
        ids[j] = ids[from];
        ids[from++] = b;
      }
      for (let j = 0; j < m; j++) taken[topId[j]] = 0;
      chunk *= 2;
    }
    while (from < count) {
      const rest = ids.subarray(from, count);
      for (let j = 0; j < rest.length; j++) keys[j] = key[rest[j]];
      const take = selectBottomKKeyed(rest, keys, rest.length, chunk);
      if (take <= 32) {
        // a few: insertion sort of (key, block) in place (keys[j] is the key of rest[j])
        for (let x = 1; x < take; x++) {
          const kx = keys[x];
          const bx = rest[x];
          let y = x - 1;
          for (; y >= 0 && (keys[y] > kx || (keys[y] === kx && rest[y] > bx)); y--) {
            keys[y + 1] = keys[y];
            rest[y + 1] = rest[y];
          }
          keys[y + 1] = kx;
          rest[y + 1] = bx;
        }
        for (let j = 0; j < take; j++) if (!visit(ctx, rest[j])) return;
      } else {
        const next = Array.from(rest.subarray(0, take)).sort((a, c) => key[a] - key[c] || a - c);
        for (const b of next) if (!visit(ctx, b)) return;
      }
      from += take;
      chunk *= 2;
    }
  }
}
