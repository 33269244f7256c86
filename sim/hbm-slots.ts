/**
 * Where the HIL executor puts each HBM block, so that the copies of a move are counted as it issues
 * them. The executor gives every HBM block a slot in 2 MiB slabs, each slab holding slots of one block
 * size (hil/executor/slab-allocator.ts), and coalesces the copies of a move where both the host slot
 * and the HBM slot continue the previous copy (copy-runs.ts): consecutive 16-bit blocks promoted into,
 * or demoted from, adjacent slots are one copy. This class takes the same placement decisions in the
 * same order (initial placement layer by layer and block by block, then per step the moves in the
 * order they are issued, and at each layer the slots of dropped blocks freed and new blocks placed),
 * so its copy counts are the executor's; test/sim/hbm-slots.test.ts checks the placement against the
 * executor's allocator and the counts against a lowered plan.
 */

interface Slab {
  base: number;
  slotBytes: number;
  free: number[];
  used: number;
}

interface SizeClass {
  open: Set<Slab>;
  head: Slab | null;
}

export class HbmSlots {
  /** slot offset of block (l, b), -1 where it has none */
  readonly slot: Float64Array;
  /** slab by index (offset / slabBytes: slabs are laid end to end from 0) */
  private readonly slabAt: Slab[] = [];
  private readonly freeSlabs: Slab[] = [];
  /** per slot size: its slabs with free slots, and the first of them (insertion order), null when not known */
  private readonly sizes = new Map<number, SizeClass>();
  /** the size class asked for last (most moves are of one block size) */
  private lastBytes = -1;
  private lastClass: SizeClass | null = null;
  private end = 0;

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    readonly slabBytes = 2 << 20,
  ) {
    this.slot = new Float64Array(layers * maxBlocks).fill(-1);
  }

  alloc(slotBytes: number): number {
    if (slotBytes > this.slabBytes) throw new Error(`a block of ${slotBytes} bytes does not fit a ${this.slabBytes}-byte slab`);
    const size = this.sizeOf(slotBytes);
    const set = size.open;
    let slab = size.head ?? undefined;
    if (!slab && set.size > 0) {
      slab = set.values().next().value as Slab;
      size.head = slab;
    }
    if (!slab) {
      slab = this.freeSlabs.pop();
      if (slab) slab.slotBytes = slotBytes;
      else {
        slab = { base: this.end, slotBytes, free: [], used: 0 };
        this.slabAt.push(slab);
        this.end += this.slabBytes;
      }
      const n = Math.floor(this.slabBytes / slotBytes);
      slab.free = Array.from({ length: n }, (_, i) => slab!.base + (n - 1 - i) * slotBytes);
      set.add(slab);
      size.head = slab;
    }
    const offset = slab.free.pop()!;
    slab.used++;
    if (slab.free.length === 0) {
      set.delete(slab);
      size.head = null;
    }
    return offset;
  }

  /** the size class of a slot size, made when first asked for */
  private sizeOf(slotBytes: number): SizeClass {
    if (slotBytes === this.lastBytes) return this.lastClass!;
    let size = this.sizes.get(slotBytes);
    if (!size) this.sizes.set(slotBytes, (size = { open: new Set(), head: null }));
    this.lastBytes = slotBytes;
    this.lastClass = size;
    return size;
  }

  free(offset: number): void {
    const slab = this.slabAt[Math.floor(offset / this.slabBytes)];
    if (!slab || slab.used === 0) throw new Error(`HBM slot ${offset} is not allocated`);
    slab.free.push(offset);
    slab.used--;
    const size = this.sizeOf(slab.slotBytes);
    if (slab.used === 0) {
      size.open.delete(slab);
      if (size.head === slab) size.head = null;
      this.freeSlabs.push(slab);
    } else {
      size.open.add(slab);
    }
  }

  /** the blocks in HBM when decoding starts, layer by layer, block by block, at their sizes */
  placeInitial(created: ArrayLike<number>, tierOf: (l: number, b: number) => number, bytesOf: (l: number, b: number) => number): void {
    for (let l = 0; l < this.layers; l++) {
      for (let b = 0; b < created[l]; b++) if (tierOf(l, b) === 0) this.slot[l * this.maxBlocks + b] = this.alloc(bytesOf(l, b));
    }
  }

  /**
   * Copies of a move into HBM at the same bits: slots taken in the blocks' order; a copy continues the
   * previous one where the block number and the slot both follow it and the block is 16-bit (it fills
   * its host slot).
   */
  promote(l: number, blocks: readonly number[], bytes: number, bits: number): number {
    let copies = 0;
    let prevBlock = -2;
    let prevSlot = -2;
    for (const b of blocks) {
      const s = this.alloc(bytes);
      this.slot[l * this.maxBlocks + b] = s;
      if (!(bits === 16 && b === prevBlock + 1 && s === prevSlot + bytes)) copies++;
      prevBlock = b;
      prevSlot = s;
    }
    return copies;
  }

  /** Copies of a move out of HBM at the same bits (counted as promote counts them), then the slots freed. */
  demote(l: number, blocks: readonly number[], bytes: number, bits: number): number {
    let copies = 0;
    let prevBlock = -2;
    let prevSlot = -2;
    for (const b of blocks) {
      const s = this.slot[l * this.maxBlocks + b];
      if (!(bits === 16 && b === prevBlock + 1 && s === prevSlot + bytes)) copies++;
      prevBlock = b;
      prevSlot = s;
    }
    for (const b of blocks) this.release(l, b);
    return copies;
  }

  /** a move within HBM to other bits: per block a new slot, then the old one freed */
  requantize(l: number, blocks: readonly number[], bytes: number): void {
    for (const b of blocks) {
      const i = l * this.maxBlocks + b;
      const old = this.slot[i];
      this.slot[i] = this.alloc(bytes);
      if (old >= 0) this.free(old);
    }
  }

  /** a move out of HBM with other bits: the slots freed (its copies are one per block) */
  release(l: number, b: number): void {
    const i = l * this.maxBlocks + b;
    if (this.slot[i] >= 0) this.free(this.slot[i]);
    this.slot[i] = -1;
  }

  /** at a layer: the slots of its blocks dropped since its last layer freed, its new HBM blocks placed (both ascending) */
  layer(l: number, dropped: number[], created: number[], fp16Bytes: number): void {
    if (dropped.length > 1) dropped.sort((a, b) => a - b);
    for (const b of dropped) this.release(l, b);
    if (created.length > 1) created.sort((a, b) => a - b);
    for (const b of created) this.slot[l * this.maxBlocks + b] = this.alloc(fp16Bytes);
  }
}
