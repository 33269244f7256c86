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

/**
 * A slab: its free slots, the slots in use, and its place in its size class's list of slabs with
 * free slots. The free slots are a stack, set up as every slot with the lowest on top and pushed
 * to as slots are freed; it is kept as the freed offsets pushed (free[0, nStack)) over the slots not
 * handed out since the set-up (fresh..n - 1, the lowest on top), so that a set-up writes nothing.
 */
class Slab {
  slotBytes = 0;
  /** slots of the slab */
  n = 0;
  /** the lowest slot not handed out since the set-up */
  fresh = 0;
  /** offsets of the slots freed and not handed out again, the next one to hand out at nStack - 1 */
  free = new Float64Array(0);
  nStack = 0;
  used = 0;
  /** the size class whose open list it is on, null when on none (full, or unused) */
  open: SizeClass | null = null;
  prev: Slab | null = null;
  next: Slab | null = null;
  constructor(readonly index: number) {}
}

/**
 * The slabs of one slot size with free slots, in the order they last became open (a slab joins the
 * end when it is set up or one of its slots is freed while it was full; the next slot is taken from
 * the first): the order of the executor's Set of open slabs.
 */
class SizeClass {
  first: Slab | null = null;
  last: Slab | null = null;

  append(slab: Slab): void {
    slab.open = this;
    slab.prev = this.last;
    slab.next = null;
    if (this.last) this.last.next = slab;
    else this.first = slab;
    this.last = slab;
  }

  remove(slab: Slab): void {
    const { prev, next } = slab;
    if (prev) prev.next = next;
    else this.first = next;
    if (next) next.prev = prev;
    else this.last = prev;
    slab.open = null;
    slab.prev = slab.next = null;
  }
}

export class HbmSlots {
  /** slot offset of block (l, b), -1 where it has none */
  readonly slot: Float64Array;
  /** slab by index (offset / slabBytes: slabs are laid end to end from 0) */
  private readonly slabAt: Slab[] = [];
  private readonly freeSlabs: Slab[] = [];
  /** per slot size: its slabs with free slots */
  private readonly sizes = new Map<number, SizeClass>();
  /** the size class asked for last (most moves are of one block size) */
  private lastBytes = -1;
  private lastClass: SizeClass | null = null;

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
    let slab = size.first;
    if (!slab) slab = this.openSlab(size, slotBytes);
    const offset = slab.nStack > 0 ? slab.free[--slab.nStack] : slab.index * this.slabBytes + slab.fresh++ * slotBytes;
    if (++slab.used === slab.n) size.remove(slab);
    return offset;
  }

  /** an unused slab (the last one freed, else a new one at the end) set up with slots of `slotBytes`, put on its size's open list */
  private openSlab(size: SizeClass, slotBytes: number): Slab {
    let slab = this.freeSlabs.pop();
    if (!slab) {
      slab = new Slab(this.slabAt.length);
      this.slabAt.push(slab);
    }
    slab.slotBytes = slotBytes;
    slab.n = Math.floor(this.slabBytes / slotBytes);
    slab.fresh = 0;
    slab.nStack = 0;
    size.append(slab);
    return slab;
  }

  /** the size class of a slot size, made when first asked for */
  private sizeOf(slotBytes: number): SizeClass {
    if (slotBytes === this.lastBytes) return this.lastClass!;
    let size = this.sizes.get(slotBytes);
    if (!size) this.sizes.set(slotBytes, (size = new SizeClass()));
    this.lastBytes = slotBytes;
    this.lastClass = size;
    return size;
  }

  free(offset: number): void {
    const slab = this.slabAt[Math.floor(offset / this.slabBytes)];
    if (!slab || slab.used === 0) throw new Error(`HBM slot ${offset} is not allocated`);
    if (slab.nStack === slab.free.length) {
      const grown = new Float64Array(Math.max(16, Math.min(slab.n, 2 * slab.nStack)));
      grown.set(slab.free);
      slab.free = grown;
    }
    slab.free[slab.nStack++] = offset;
    slab.used--;
    if (slab.used === 0) {
      if (slab.open) slab.open.remove(slab);
      this.freeSlabs.push(slab);
    } else if (!slab.open) {
      this.sizeOf(slab.slotBytes).append(slab);
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
    // (each slot freed once counted: a block's count reads its own slot only, and a move's blocks differ)
    for (const b of blocks) {
      const i = l * this.maxBlocks + b;
      const s = this.slot[i];
      if (!(bits === 16 && b === prevBlock + 1 && s === prevSlot + bytes)) copies++;
      prevBlock = b;
      prevSlot = s;
      if (s >= 0) this.free(s);
      this.slot[i] = -1;
    }
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
