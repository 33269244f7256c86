/**
 * The host-slot spread (host-spread.ts) of every block of a layer in a tier, in block order, as a
 * bulk stage of that tier copies them: kept up to date as blocks enter and leave the tier, for the
 * (layer, tier) pairs asked for once, so that a layer's bulk stage each step costs the blocks that
 * moved, not a pass over the layer. A change whose nearest neighbours in the tier lie further than
 * SCAN_LIMIT blocks away drops the pair, which the next ask counts again in full. Kept beside it: the
 * number of consecutive pairs of the tier's blocks that are adjacent blocks (distance 1).
 */
import { gapDoublings as gap } from './host-spread.js';

/** blocks scanned for a moved block's nearest neighbour in its tier before the pair is counted again in full */
const SCAN_LIMIT = 512;

export class TierSpread {
  /** per layer x tier: the spread of the tier's blocks (valid where `kept` is 1) */
  private readonly sums: Float64Array;
  /** per layer x tier: pairs of consecutive blocks in the tier at distance 1 (valid where `kept` is 1) */
  private readonly adjacent: Int32Array;
  private readonly kept: Uint8Array;

  constructor(
    private readonly tiers: Int8Array,
    private readonly created: Int32Array,
    private readonly maxBlocks: number,
    private readonly T: number,
    layers: number,
  ) {
    this.sums = new Float64Array(layers * T);
    this.adjacent = new Int32Array(layers * T);
    this.kept = new Uint8Array(layers * T);
  }

  /** the spread of the layer's blocks in `tier`, in block order */
  spreadIn(layer: number, tier: number): number {
    const k = layer * this.T + tier;
    if (this.kept[k] === 0) this.count(layer, tier);
    return this.sums[k];
  }

  /** the pairs of consecutive blocks of the layer in `tier` that are adjacent (distance 1), in block order */
  adjacentIn(layer: number, tier: number): number {
    const k = layer * this.T + tier;
    if (this.kept[k] === 0) this.count(layer, tier);
    return this.adjacent[k];
  }

  /** both counts of a (layer, tier) in full, kept from now on */
  private count(layer: number, tier: number): void {
    const k = layer * this.T + tier;
    const tiers = this.tiers;
    let spread = 0;
    let adjacent = 0;
    let prev = -1;
    for (let i = layer * this.maxBlocks, end = i + this.created[layer]; i < end; i++) {
      if (tiers[i] !== tier) continue;
      if (prev >= 0) {
        spread += gap(i - prev);
        if (i - prev === 1) adjacent++;
      }
      prev = i;
    }
    this.sums[k] = spread;
    this.adjacent[k] = adjacent;
    this.kept[k] = 1;
  }

  /**
   * Block index i of `layer` goes from tier `from` to tier `to` (either may be negative: not created,
   * dropped), before or after the cache writes its new tier (its neighbours are looked for on either
   * side of it). Block indices from layer * maxBlocks + `end` on are left out (`end`: the layer's
   * blocks created before this one, for a creation).
   */
  change(layer: number, i: number, from: number, to: number, end: number): void {
    if (from === to) return;
    const row = layer * this.T;
    if (from >= 0 && this.kept[row + from] === 1) this.update(row + from, i, from, layer, end, -1);
    if (to >= 0 && this.kept[row + to] === 1) this.update(row + to, i, to, layer, end, +1);
  }

  /** block index i leaves (sign -1) or joins (+1) `tier`: the gaps to its nearest neighbours in the tier replace (or give way to) the gap between them */
  private update(k: number, i: number, tier: number, layer: number, end: number, sign: number): void {
    const tiers = this.tiers;
    const base = layer * this.maxBlocks;
    const last = base + end;
    let p = i - 1;
    const pStop = Math.max(base, i - SCAN_LIMIT);
    while (p >= pStop && tiers[p] !== tier) p--;
    let s = i + 1;
    const sStop = Math.min(last, i + SCAN_LIMIT + 1);
    while (s < sStop && tiers[s] !== tier) s++;
    // a neighbour not found within the limit, where blocks remain beyond it: count the pair again when asked
    if ((p < pStop && pStop > base) || (s >= sStop && sStop < last)) {
      this.kept[k] = 0;
      return;
    }
    const hasP = p >= pStop;
    const hasS = s < sStop;
    const own = (hasP ? gap(i - p) : 0) + (hasS ? gap(s - i) : 0) - (hasP && hasS ? gap(s - p) : 0);
    this.sums[k] += sign * own;
    // (p and s lie on either side of i, never adjacent to each other)
    const ownAdjacent = (hasP && i - p === 1 ? 1 : 0) + (hasS && s - i === 1 ? 1 : 0);
    this.adjacent[k] += sign * ownAdjacent;
  }
}
