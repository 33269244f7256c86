/**
 * Per-bit buckets in the HBM arena: every (layer, block size) — in HBM a block size is one width —
 * owns one contiguous region of slots, sized to the most blocks it ever holds at once in the run
 * (the first lowering pass counts them: SlabAllocator.peaks). A block always sits in its bucket, so
 * a layer's blocks of one width are one run of the arena; a move to another width moves the block to
 * that width's bucket. Regions lie back to back in (layer, block size) order, each starting on a
 * 4 KiB boundary; a bucket hands out its lowest free slot first. Slots remember their last access
 * per stream (fences.ts), like the slab allocator's.
 */
import { type Access, noAccess } from './fences.js';

export interface BucketPeak {
  /** the layer (bucket key of the callers) */
  bucket: number;
  slotBytes: number;
  /** most slots held at once */
  count: number;
}

interface Region {
  base: number;
  slotBytes: number;
  count: number;
  /** free slot indexes, highest first (pop gives the lowest) */
  free: number[];
}

export const bucketKey = (bucket: number, slotBytes: number): string => `${bucket}:${slotBytes}`;

export class BucketAllocator {
  private readonly regions = new Map<string, Region>();
  private readonly acc = new Map<number, Access>();
  private readonly live = new Set<number>();
  private readonly end: number;

  constructor(
    readonly base: number,
    peaks: readonly BucketPeak[],
  ) {
    let at = base;
    const sorted = [...peaks].sort((a, b) => a.bucket - b.bucket || b.slotBytes - a.slotBytes);
    for (const p of sorted) {
      if (p.count <= 0) continue;
      at = Math.ceil(at / 4096) * 4096;
      this.regions.set(bucketKey(p.bucket, p.slotBytes), {
        base: at,
        slotBytes: p.slotBytes,
        count: p.count,
        free: Array.from({ length: p.count }, (_, i) => p.count - 1 - i),
      });
      at += p.count * p.slotBytes;
    }
    this.end = at;
  }

  /** bytes from `base` to the end of the last region */
  get extent(): number {
    return this.end - this.base;
  }

  /** the region of a bucket: [start, start + count * slotBytes) */
  region(bucket: number, slotBytes: number): { start: number; count: number } | undefined {
    const r = this.regions.get(bucketKey(bucket, slotBytes));
    return r && { start: r.base, count: r.count };
  }

  alloc(slotBytes: number, bucket: number): { offset: number; acc: Access } {
    const r = this.regions.get(bucketKey(bucket, slotBytes));
    if (!r) throw new Error(`no bucket for layer ${bucket} at ${slotBytes}-byte blocks (the first lowering pass saw none)`);
    const i = r.free.pop();
    if (i === undefined) throw new Error(`bucket of layer ${bucket} at ${slotBytes}-byte blocks is full (${r.count} slots: the first lowering pass saw at most that many)`);
    const offset = r.base + i * slotBytes;
    this.live.add(offset);
    let a = this.acc.get(offset);
    if (!a) this.acc.set(offset, (a = noAccess()));
    return { offset, acc: a };
  }

  access(offset: number): Access {
    if (!this.live.has(offset)) throw new Error(`arena slot ${offset} is not allocated`);
    return this.acc.get(offset)!;
  }

  free(offset: number): void {
    if (!this.live.delete(offset)) throw new Error(`arena slot ${offset} freed twice`);
    for (const r of this.regions.values()) {
      if (offset >= r.base && offset < r.base + r.count * r.slotBytes) {
        const i = (offset - r.base) / r.slotBytes;
        // keep the free list sorted high to low so that the lowest free slot comes next
        let at = r.free.length;
        while (at > 0 && r.free[at - 1]! < i) at--;
        r.free.splice(at, 0, i);
        return;
      }
    }
  }
}
