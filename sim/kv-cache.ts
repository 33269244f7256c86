/**
 * KV cache accounting: blocks of `blockSize` tokens per layer, each with a tier and a precision.
 * This class owns capacity: every placement change goes through it, and a change that would
 * overflow a tier is refused (returns false) — a policy can never corrupt the accounting.
 * Bytes of a block are reserved whole when it is created (paged allocation).
 */
import { kvBytes, type ModelSpec } from './models/model.js';
import { TierSpread } from './tier-spread.js';

export const NONE = -1;
export const DROPPED = -2;
/** host tiers' slot alignment, as the HIL executor lays out its pinned regions and files (one slot per block) */
export const HOST_SLOT_ALIGN = 4096;
/**
 * precisions a block can have, in bits (index into per-bits counters); 3 comes last so that the
 * indexes of 16 / 8 / 4 / 2 stay 0..3
 */
export const BITS = [16, 8, 4, 2, 3] as const;
export type Bits = (typeof BITS)[number];
/** the precisions from widest to narrowest, for messages */
export const BITS_DESCENDING: readonly Bits[] = [16, 8, 4, 3, 2];

const BITS_INDEX = [-1, -1, 3, 4, 2, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1, -1, 0];

/**
 * The windows of mixedWindowShare: MIXED_WINDOW_BLOCKS consecutive live blocks, one starting every
 * MIXED_WINDOW_STEP live blocks (the per-block attention kernel's four warps take four consecutive
 * 16-token chunks at a time; measured on the kernel alone, its slowdown from mixed precisions follows
 * the share of such 8-block windows that hold more than one precision, not the share of changing pairs).
 */
export const MIXED_WINDOW_BLOCKS = 8;
export const MIXED_WINDOW_STEP = 4;

/** true for a precision a block can have (BITS) */
export const isCacheBits = (bits: number): boolean => bits >= 0 && bits <= 16 && (BITS_INDEX[bits] ?? -1) >= 0;

export function bitsIndex(bits: number): number {
  const i = bits >= 0 && bits <= 16 ? BITS_INDEX[bits] : -1;
  if (i === undefined || i < 0) throw new Error(`unsupported precision ${bits} bits (valid: ${BITS_DESCENDING.join(', ')})`);
  return i;
}

export interface TierCapacity {
  name: string;
  capacityBytes: number;
}

export class KVCache {
  readonly layers: number;
  readonly maxBlocks: number;
  readonly tierNames: string[];
  readonly capacity: Float64Array;
  readonly used: Float64Array;
  readonly peak: Float64Array;
  /** tier index per (layer, block), or NONE / DROPPED */
  readonly tier: Int8Array;
  readonly bits: Uint8Array;
  readonly pinned: Uint8Array;
  /** per layer: pinned blocks */
  private readonly pinnedCount: Int32Array;
  /** blocks created so far per layer */
  readonly created: Int32Array;
  /** per layer x tier: live blocks; per layer x bits: live blocks; per layer x tier x bits */
  readonly tierCount: Int32Array;
  readonly bitsCount: Int32Array;
  /** per layer: live blocks in every tier (the sum of its tierCount row) */
  private readonly liveCount: Int32Array;
  readonly tierBitsCount: Int32Array;
  /** 1 where a block is live (created and not dropped), per (layer, block) */
  readonly liveMask: Uint8Array;
  /** 1 where a block is live in tier 0 (HBM), per (layer, block) */
  readonly hbmMask: Uint8Array;
  /**
   * per layer x tier: runs of the layer's blocks in the tier, where a run goes on from block b to
   * b + 1 when both are in the tier and b is at runBits (see runsIn)
   */
  private readonly runCount: Int32Array;
  /** per layer: changes of its blocks so far (creations, moves, drops; see changesOf) */
  private readonly editCount: Float64Array;
  /** per layer: mixedWindowShare as last computed, and changesOf when it was (NaN: not yet) */
  private readonly windowShare: Float64Array;
  private readonly windowShareAt: Float64Array;
  /** mixedWindowShare's scratch: the positions among the live blocks where the bits change */
  private changeAt: Int32Array | null = null;
  /** bytes of one full block per layer at each precision (index as BITS) */
  readonly blockBytes: number[];
  /** the host-slot spread per (layer, tier), kept up to date once asked for (spreadIn) */
  private spread: TierSpread | null = null;

  constructor(
    model: ModelSpec,
    readonly blockSize: number,
    layers: number,
    maxBlocks: number,
    tiers: TierCapacity[],
    readonly groupSize = 128,
    hostSlotAlign = 1,
  ) {
    this.layers = layers;
    this.maxBlocks = maxBlocks;
    this.tierNames = tiers.map((t) => t.name);
    if (tiers.length > 100) throw new Error('too many tiers');
    this.capacity = Float64Array.from(tiers.map((t) => t.capacityBytes));
    this.used = new Float64Array(tiers.length);
    this.peak = new Float64Array(tiers.length);
    const n = layers * maxBlocks;
    this.tier = new Int8Array(n).fill(NONE);
    this.bits = new Uint8Array(n);
    this.pinned = new Uint8Array(n);
    this.pinnedCount = new Int32Array(layers);
    this.created = new Int32Array(layers);
    this.tierCount = new Int32Array(layers * tiers.length);
    this.bitsCount = new Int32Array(layers * BITS.length);
    this.liveCount = new Int32Array(layers);
    this.tierBitsCount = new Int32Array(layers * tiers.length * BITS.length);
    this.liveMask = new Uint8Array(n);
    this.hbmMask = new Uint8Array(n);
    this.runCount = new Int32Array(layers * tiers.length);
    this.editCount = new Float64Array(layers);
    this.windowShare = new Float64Array(layers);
    this.windowShareAt = new Float64Array(layers).fill(Number.NaN);
    this.blockBytes = BITS.map((b) => kvBytes(model, blockSize, b, groupSize));
    this.runBits = this.bytesOf(16) % hostSlotAlign === 0 ? 16 : -1;
  }

  /**
   * The bits of a block that a run goes on past (runsIn): 16, where a 16-bit block fills its host
   * slot (host tiers keep block b of a layer at slot b, each slot's size rounded up to the
   * constructor's hostSlotAlign, so the next block's slot starts where it ends); -1 (none) where its
   * bytes leave a gap to the next slot. A replay passes HOST_SLOT_ALIGN, the HIL executor's layout.
   */
  readonly runBits: number;

  tierIndex(name: string): number {
    const i = this.tierNames.indexOf(name);
    if (i < 0) throw new Error(`unknown tier "${name}" (tiers: ${this.tierNames.join(', ')})`);
    return i;
  }

  bytesOf(bits: number): number {
    return this.blockBytes[bitsIndex(bits)];
  }

  free(tier: number): number {
    return this.capacity[tier] - this.used[tier];
  }

  tierOf(layer: number, block: number): number {
    return this.tier[layer * this.maxBlocks + block];
  }

  bitsOf(layer: number, block: number): number {
    return this.bits[layer * this.maxBlocks + block];
  }

  isPinned(layer: number, block: number): boolean {
    return this.pinned[layer * this.maxBlocks + block] === 1;
  }

  /** pinned blocks of a layer (0 lets a scan skip isPinned()) */
  pinnedIn(layer: number): number {
    return this.pinnedCount[layer];
  }

  /** live (not dropped) blocks of a layer in a tier */
  countIn(layer: number, tier: number): number {
    return this.tierCount[layer * this.tierNames.length + tier];
  }

  /** live blocks of a layer at a precision */
  countBits(layer: number, bits: number): number {
    return this.bitsCount[layer * BITS.length + bitsIndex(bits)];
  }

  /** bytes of a layer's live blocks in a tier (full-block reservations) */
  bytesIn(layer: number, tier: number): number {
    const base = (layer * this.tierNames.length + tier) * BITS.length;
    let bytes = 0;
    for (let k = 0; k < BITS.length; k++) bytes += this.tierBitsCount[base + k] * this.blockBytes[k];
    return bytes;
  }

  /** bytes of a layer's live quantized (< 16 bit) blocks in a tier */
  quantizedBytesIn(layer: number, tier: number): number {
    const base = (layer * this.tierNames.length + tier) * BITS.length;
    let bytes = 0;
    for (let k = 1; k < BITS.length; k++) bytes += this.tierBitsCount[base + k] * this.blockBytes[k];
    return bytes;
  }

  live(layer: number): number {
    return this.liveCount[layer];
  }

  /** changes of a layer's blocks so far: one per block created, moved (or requantized) and dropped */
  changesOf(layer: number): number {
    return this.editCount[layer];
  }

  /** Create the next block of a layer in `tier` at `bits`. False (nothing changed) if it does not fit. */
  create(layer: number, tier: number, bits: number): boolean {
    const b = this.created[layer];
    if (b >= this.maxBlocks) throw new Error(`layer ${layer}: block ${b} beyond the trace's ${this.maxBlocks} blocks`);
    const bytes = this.bytesOf(bits);
    if (this.used[tier] + bytes > this.capacity[tier]) return false;
    const i = layer * this.maxBlocks + b;
    if (this.spread !== null) this.spread.change(layer, i, NONE, tier, b);
    this.tier[i] = tier;
    this.bits[i] = bits;
    this.created[layer] = b + 1;
    this.liveMask[i] = 1;
    this.hbmMask[i] = tier === 0 ? 1 : 0;
    this.add(layer, tier, bits, bytes, +1);
    this.runStart(layer, b, +1);
    this.editCount[layer]++;
    return true;
  }

  /**
   * Create the next `count` blocks of a layer in `tier` at `bits`, as `count` calls of create() would
   * (same counters, same float sums), with the counters updated once. False (nothing changed) unless
   * all of them fit.
   */
  createMany(layer: number, count: number, tier: number, bits: number): boolean {
    const b0 = this.created[layer];
    if (b0 + count > this.maxBlocks) throw new Error(`layer ${layer}: block ${b0 + count - 1} beyond the trace's ${this.maxBlocks} blocks`);
    const bytes = this.bytesOf(bits);
    let used = this.used[tier];
    for (let i = 0; i < count; i++) {
      used += bytes;
      if (used > this.capacity[tier]) return false;
    }
    if (count <= 0) return true;
    const i0 = layer * this.maxBlocks + b0;
    this.tier.fill(tier, i0, i0 + count);
    if (this.spread !== null) for (let j = 0; j < count; j++) this.spread.change(layer, i0 + j, NONE, tier, b0 + j);
    this.bits.fill(bits, i0, i0 + count);
    this.liveMask.fill(1, i0, i0 + count);
    this.hbmMask.fill(tier === 0 ? 1 : 0, i0, i0 + count);
    this.created[layer] = b0 + count;
    this.used[tier] = used;
    if (used > this.peak[tier]) this.peak[tier] = used;
    const k = bitsIndex(bits);
    this.tierCount[layer * this.tierNames.length + tier] += count;
    this.liveCount[layer] += count;
    this.bitsCount[layer * BITS.length + k] += count;
    this.tierBitsCount[(layer * this.tierNames.length + tier) * BITS.length + k] += count;
    for (let b = b0; b < b0 + count; b++) this.runStart(layer, b, +1);
    this.editCount[layer] += count;
    return true;
  }

  /** Move a live block to `tier` at `bits`. False (nothing changed) if the destination would overflow. */
  move(layer: number, block: number, tier: number, bits: number): boolean {
    const i = this.liveIndex(layer, block);
    return this.moveAt(i, layer, block, tier, bits, bitsIndex(bits));
  }

  /**
   * move() of live block i = layer * maxBlocks + block to `tier` at `bits`, whose BITS index is k
   * (for a caller that has checked the block and the precision).
   */
  moveAt(i: number, layer: number, block: number, tier: number, bits: number, k: number): boolean {
    const tiers = this.tier;
    const bitsAt = this.bits;
    const fromTier = tiers[i];
    const fromBits = bitsAt[i];
    const kFrom = BITS_INDEX[fromBits];
    const blockBytes = this.blockBytes;
    const oldBytes = blockBytes[kFrom];
    const newBytes = blockBytes[k];
    const used = this.used;
    const extra = fromTier === tier ? newBytes - oldBytes : newBytes;
    if (extra > 0 && used[tier] + extra > this.capacity[tier]) return false;
    // add(-1) at the old place, then add(+1) at the new one, without the counts that come back to where
    // they were (the live count; the per-precision counts at the same bits) and the peak check after
    // taking bytes away (used only fell); the byte sums are the same two steps
    const T = this.tierNames.length;
    const K = BITS.length;
    used[fromTier] -= oldBytes;
    const row = layer * T;
    if (fromTier !== tier) {
      this.tierCount[row + fromTier]--;
      this.tierCount[row + tier]++;
    }
    if (kFrom !== k) {
      this.bitsCount[layer * K + kFrom]--;
      this.bitsCount[layer * K + k]++;
    }
    this.tierBitsCount[(row + fromTier) * K + kFrom]--;
    this.tierBitsCount[(row + tier) * K + k]++;
    // the runs (runStart) that involve the block: whether it starts a run, and whether the next live
    // block does, before and after. Counted with 0/1 arithmetic rather than branches: the neighbours'
    // tiers vary from move to move, and mispredicted branches were most of a move's cost
    const runs = this.runCount;
    const prevTier = block > 0 ? tiers[i - 1] : NONE;
    const prevBits = block > 0 ? bitsAt[i - 1] : 0;
    const runBits = this.runBits;
    const prevJoins = +(prevBits === runBits);
    runs[row + fromTier] -= 1 - (+(prevTier === fromTier) & prevJoins);
    runs[row + tier] += 1 - (+(prevTier === tier) & prevJoins);
    const nextTier = block + 1 < this.created[layer] ? tiers[i + 1] : NONE;
    if (nextTier >= 0) runs[row + nextTier] += (+(nextTier === fromTier) & +(fromBits === runBits)) - (+(nextTier === tier) & +(bits === runBits));
    if (this.spread !== null) this.spread.change(layer, i, fromTier, tier, this.created[layer]);
    tiers[i] = tier;
    bitsAt[i] = bits;
    this.hbmMask[i] = tier === 0 ? 1 : 0;
    used[tier] += newBytes;
    if (used[tier] > this.peak[tier]) this.peak[tier] = used[tier];
    this.editCount[layer]++;
    return true;
  }

  /**
   * moveAt for blocks[j], j = from, from + 1, ... below count, of one layer, in that order, while each
   * is a live, unpinned block of the layer at (fromTier, fromBits) and fits `tier` at `bits` (BITS
   * index k; not the place it comes from): the same counters and byte sums as those calls (the
   * counts summed once for the run; the runs, precision changes and bytes block by block). Returns
   * the index of the first block not moved (count when every one was); that block is left as it is.
   */
  moveRun(layer: number, blocks: ArrayLike<number>, from: number, count: number, fromTier: number, fromBits: number, tier: number, bits: number, k: number): number {
    const tiers = this.tier;
    const bitsAt = this.bits;
    const pinned = this.pinned;
    const hbm = this.hbmMask;
    const used = this.used;
    const runs = this.runCount;
    const created = this.created[layer];
    const base = layer * this.maxBlocks;
    const kFrom = BITS_INDEX[fromBits];
    const oldBytes = this.blockBytes[kFrom];
    const newBytes = this.blockBytes[k];
    const extra = fromTier === tier ? newBytes - oldBytes : newBytes;
    const capacity = this.capacity[tier];
    const T = this.tierNames.length;
    const K = BITS.length;
    const row = layer * T;
    const runBits = this.runBits;
    const fromJoins = +(fromBits === runBits);
    const toJoins = +(bits === runBits);
    const inHbm = tier === 0 ? 1 : 0;
    const spread = this.spread;
    let j = from;
    for (; j < count; j++) {
      const b = blocks[j];
      if (!(b >= 0 && b < created && b === Math.floor(b))) break;
      const i = base + b;
      if (tiers[i] !== fromTier || bitsAt[i] !== fromBits || pinned[i] === 1) break;
      if (extra > 0 && used[tier] + extra > capacity) break;
      used[fromTier] -= oldBytes;
      // (runs as moveAt counts them, from the neighbours as they are now)
      const prevTier = b > 0 ? tiers[i - 1] : NONE;
      const prevBits = b > 0 ? bitsAt[i - 1] : 0;
      const prevJoins = +(prevBits === runBits);
      runs[row + fromTier] -= 1 - (+(prevTier === fromTier) & prevJoins);
      runs[row + tier] += 1 - (+(prevTier === tier) & prevJoins);
      const nextTier = b + 1 < created ? tiers[i + 1] : NONE;
      if (nextTier >= 0) runs[row + nextTier] += (+(nextTier === fromTier) & fromJoins) - (+(nextTier === tier) & toJoins);
      if (spread !== null) spread.change(layer, i, fromTier, tier, created);
      tiers[i] = tier;
      bitsAt[i] = bits;
      hbm[i] = inHbm;
      used[tier] += newBytes;
      if (used[tier] > this.peak[tier]) this.peak[tier] = used[tier];
    }
    const n = j - from;
    if (n > 0) {
      if (fromTier !== tier) {
        this.tierCount[row + fromTier] -= n;
        this.tierCount[row + tier] += n;
      }
      if (kFrom !== k) {
        this.bitsCount[layer * K + kFrom] -= n;
        this.bitsCount[layer * K + k] += n;
      }
      this.tierBitsCount[(row + fromTier) * K + kFrom] -= n;
      this.tierBitsCount[(row + tier) * K + k] += n;
      this.editCount[layer] += n;
    }
    return j;
  }

  /** Drop a live block (its KV is gone for good). */
  drop(layer: number, block: number): void {
    const i = this.liveIndex(layer, block);
    this.add(layer, this.tier[i], this.bits[i], this.bytesOf(this.bits[i]), -1);
    this.runStart(layer, block, -1);
    this.runStart(layer, block + 1, -1);
    if (this.spread !== null) this.spread.change(layer, i, this.tier[i], DROPPED, this.created[layer]);
    this.tier[i] = DROPPED;
    this.runStart(layer, block + 1, +1);
    this.pinnedCount[layer] -= this.pinned[i];
    this.pinned[i] = 0;
    this.liveMask[i] = 0;
    this.hbmMask[i] = 0;
    this.editCount[layer]++;
  }

  /**
   * The host-slot spread (host-spread.ts) of a layer's blocks in a tier, in block order: the doublings
   * of the distances between consecutive ones, as a bulk stage copies them. Counted in full the first
   * time a (layer, tier) is asked for, then kept up to date by every change (sim/tier-spread.ts).
   */
  spreadIn(layer: number, tier: number): number {
    this.spread ??= new TierSpread(this.tier, this.created, this.maxBlocks, this.tierNames.length, this.layers);
    return this.spread.spreadIn(layer, tier);
  }

  /** the pairs of consecutive blocks of a layer in a tier, in block order, that are adjacent blocks; kept up to date as spreadIn is */
  adjacentIn(layer: number, tier: number): number {
    this.spread ??= new TierSpread(this.tier, this.created, this.maxBlocks, this.tierNames.length, this.layers);
    return this.spread.adjacentIn(layer, tier);
  }

  /**
   * Runs of a layer's blocks in a tier: maximal sequences of consecutive blocks in the tier in which
   * every block but the last is at runBits (16-bit; a quantized block ends its run, and every block does
   * where a 16-bit block does not fill its host slot). Kept up to date by every change.
   */
  runsIn(layer: number, tier: number): number {
    return this.runCount[layer * this.tierNames.length + tier];
  }

  /**
   * The share (0..1) of a layer's windows of MIXED_WINDOW_BLOCKS consecutive live blocks, one starting
   * at every MIXED_WINDOW_STEP-th live block, that hold more than one precision. The live blocks of every
   * tier are taken in block order, dropped ones left out (the attention's block table where every live
   * block is attended). Windows start at 0, step, 2 step, ... while the start is more than one step
   * before the last block (at 0 alone with at most `step` live blocks) and end at the last block, so
   * every block is in one; fewer than two live blocks: 0. Recomputed only when the layer's blocks changed since (changesOf).
   */
  mixedWindowShare(layer: number): number {
    const at = this.editCount[layer];
    if (this.windowShareAt[layer] === at) return this.windowShare[layer];
    const M = this.maxBlocks;
    const base = layer * M;
    const end = base + this.created[layer];
    if (!this.changeAt) this.changeAt = new Int32Array(M);
    const changes = this.changeAt;
    let n = 0;
    let k = 0;
    let prev = -1;
    for (let i = base; i < end; i++) {
      if (this.liveMask[i] === 0) continue;
      const b = this.bits[i];
      if (n > 0 && b !== prev) changes[k++] = n;
      prev = b;
      n++;
    }
    let share = 0;
    if (n >= 2) {
      const W = MIXED_WINDOW_BLOCKS;
      const S = MIXED_WINDOW_STEP;
      let windows = 0;
      let mixed = 0;
      let c = 0;
      for (let s = 0; s === 0 || s + S < n; s += S) {
        windows++;
        // a change at position p (bits of p differ from p - 1) mixes the windows with s < p < s + W
        while (c < k && changes[c] <= s) c++;
        if (c < k && changes[c] < Math.min(s + W, n)) mixed++;
      }
      share = mixed / windows;
    }
    this.windowShare[layer] = share;
    this.windowShareAt[layer] = at;
    return share;
  }

  /** Adds `sign` to the run count of block b's tier when b starts a run there (nothing for a block not live). */
  private runStart(layer: number, b: number, sign: 1 | -1): void {
    if (b >= this.created[layer]) return;
    const i = layer * this.maxBlocks + b;
    const t = this.tier[i];
    if (t < 0) return;
    if (b > 0 && this.tier[i - 1] === t && this.bits[i - 1] === this.runBits) return;
    this.runCount[layer * this.tierNames.length + t] += sign;
  }

  setPinned(layer: number, block: number, on: boolean): void {
    const i = this.liveIndex(layer, block);
    const v = on ? 1 : 0;
    this.pinnedCount[layer] += v - this.pinned[i];
    this.pinned[i] = v;
  }

  /** Check every counter against a full recount; throws on any mismatch. For tests and debugging. */
  audit(): void {
    const used = new Float64Array(this.tierNames.length);
    const T = this.tierNames.length;
    for (let l = 0; l < this.layers; l++) {
      const tc = new Int32Array(T);
      const bc = new Int32Array(BITS.length);
      for (let b = 0; b < this.created[l]; b++) {
        const i = l * this.maxBlocks + b;
        const t = this.tier[i];
        if (t < 0) continue;
        tc[t]++;
        bc[bitsIndex(this.bits[i])]++;
        used[t] += this.bytesOf(this.bits[i]);
      }
      for (let t = 0; t < T; t++) if (tc[t] !== this.countIn(l, t)) throw new Error(`audit: layer ${l} tier ${t} count`);
      const runs = new Int32Array(T);
      for (let b = 0; b < this.created[l]; b++) {
        const i = l * this.maxBlocks + b;
        const t = this.tier[i];
        if (t >= 0 && !(b > 0 && this.tier[i - 1] === t && this.bits[i - 1] === this.runBits)) runs[t]++;
      }
      for (let t = 0; t < T; t++) if (runs[t] !== this.runsIn(l, t)) throw new Error(`audit: layer ${l} tier ${t} runs`);
      if (tc.reduce((a, b) => a + b, 0) !== this.live(l)) throw new Error(`audit: layer ${l} live count`);
      let pins = 0;
      for (let b = 0; b < this.created[l]; b++) pins += this.pinned[l * this.maxBlocks + b];
      if (pins !== this.pinnedIn(l)) throw new Error(`audit: layer ${l} pinned count`);
      for (let k = 0; k < BITS.length; k++) if (bc[k] !== this.bitsCount[l * BITS.length + k]) throw new Error(`audit: layer ${l} bits count`);
      for (let b = 0; b < this.created[l]; b++) {
        const i = l * this.maxBlocks + b;
        const t = this.tier[i];
        if (this.hbmMask[i] !== (t === 0 ? 1 : 0) || this.liveMask[i] !== (t >= 0 ? 1 : 0)) throw new Error(`audit: layer ${l} block ${b} live or HBM mark`);
      }
    }
    for (let t = 0; t < T; t++) {
      if (Math.abs(used[t] - this.used[t]) > 1e-6) throw new Error(`audit: tier ${this.tierNames[t]} used ${this.used[t]} != ${used[t]}`);
      if (this.used[t] > this.capacity[t] + 1e-6) throw new Error(`audit: tier ${this.tierNames[t]} over capacity`);
    }
  }

  private liveIndex(layer: number, block: number): number {
    if (!(block >= 0 && block < this.created[layer])) throw new Error(`layer ${layer}: block ${block} does not exist (created: ${this.created[layer]})`);
    const i = layer * this.maxBlocks + block;
    if (this.tier[i] < 0) throw new Error(`layer ${layer}: block ${block} was dropped`);
    return i;
  }

  private add(layer: number, tier: number, bits: number, bytes: number, sign: 1 | -1): void {
    this.used[tier] += sign * bytes;
    if (this.used[tier] > this.peak[tier]) this.peak[tier] = this.used[tier];
    this.tierCount[layer * this.tierNames.length + tier] += sign;
    this.liveCount[layer] += sign;
    const k = bitsIndex(bits);
    this.bitsCount[layer * BITS.length + k] += sign;
    this.tierBitsCount[(layer * this.tierNames.length + tier) * BITS.length + k] += sign;
  }
}
