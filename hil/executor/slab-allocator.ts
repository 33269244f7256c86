/**
 * The HBM arena's block allocator: fixed-size slabs (2 MiB by default), each holding slots of one
 * block size (one precision); a slab returns to the free list when its last slot is freed. Slots
 * remember their last access per stream (fences.ts), and a reused slab passes on what its slots saw.
 * The arena grows as slabs are needed: its size after lowering is the run's real peak. It also counts,
 * per (bucket, block size), the most slots held at once (`peaks`): what the per-bit buckets of
 * bucket-allocator.ts are sized to.
 */
import { type BucketPeak, bucketKey } from './bucket-allocator.js';
import { type Access, Fences, noAccess } from './fences.js';

interface Slab {
  base: number;
  slotBytes: number;
  free: number[];
  used: number;
  retired: Access;
}

export class SlabAllocator {
  private readonly slabs: Slab[] = [];
  private readonly freeSlabs: Slab[] = [];
  private readonly open = new Map<number, Set<Slab>>();
  private readonly slots = new Map<number, { slab: Slab; acc: Access; bucket: string }>();
  private readonly held = new Map<string, BucketPeak & { live: number }>();
  private end: number;

  constructor(
    readonly base: number,
    readonly slabBytes: number,
  ) {
    this.end = base;
  }

  /** bytes from `base` to the end of the last slab ever used */
  get extent(): number {
    return this.end - this.base;
  }

  /** per (bucket, block size): the most slots held at once so far */
  peaks(): BucketPeak[] {
    return [...this.held.values()].map((p) => ({ bucket: p.bucket, slotBytes: p.slotBytes, count: p.count }));
  }

  alloc(slotBytes: number, bucket = -1): { offset: number; acc: Access } {
    if (slotBytes > this.slabBytes) throw new Error(`a block of ${slotBytes} bytes does not fit a ${this.slabBytes}-byte slab`);
    let set = this.open.get(slotBytes);
    if (!set) this.open.set(slotBytes, (set = new Set()));
    let slab = set.values().next().value as Slab | undefined;
    if (!slab) {
      slab = this.freeSlabs.pop();
      if (slab) {
        slab.slotBytes = slotBytes;
      } else {
        slab = { base: this.end, slotBytes, free: [], used: 0, retired: noAccess() };
        this.slabs.push(slab);
        this.end += this.slabBytes;
      }
      const n = Math.floor(this.slabBytes / slotBytes);
      slab.free = Array.from({ length: n }, (_, i) => slab!.base + (n - 1 - i) * slotBytes);
      set.add(slab);
    }
    const offset = slab.free.pop()!;
    slab.used++;
    if (slab.free.length === 0) set.delete(slab);
    const acc: Access = [slab.retired[0], slab.retired[1]];
    const key = bucketKey(bucket, slotBytes);
    let h = this.held.get(key);
    if (!h) this.held.set(key, (h = { bucket, slotBytes, count: 0, live: 0 }));
    h.live++;
    if (h.live > h.count) h.count = h.live;
    this.slots.set(offset, { slab, acc, bucket: key });
    return { offset, acc };
  }

  access(offset: number): Access {
    const s = this.slots.get(offset);
    if (!s) throw new Error(`arena slot ${offset} is not allocated`);
    return s.acc;
  }

  free(offset: number): void {
    const s = this.slots.get(offset);
    if (!s) throw new Error(`arena slot ${offset} freed twice`);
    this.slots.delete(offset);
    this.held.get(s.bucket)!.live--;
    const slab = s.slab;
    Fences.merge(slab.retired, s.acc);
    slab.free.push(offset);
    slab.used--;
    const set = this.open.get(slab.slotBytes)!;
    if (slab.used === 0) {
      set.delete(slab);
      this.freeSlabs.push(slab);
    } else {
      set.add(slab);
    }
  }
}
