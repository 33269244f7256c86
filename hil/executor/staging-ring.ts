/**
 * HBM staging for prefetched and fetched copies: contiguous extents handed out in ring order from
 * the front of the arena and released after the attention that reads them. Reusing freed space
 * inherits its last accesses (the copy into it waits for the attention that read it).
 */
import { type Access, Fences, noAccess } from './fences.js';

interface Extent {
  start: number;
  end: number;
  live: boolean;
  acc: Access;
}

export class RingFullError extends Error {}

export class StagingRing {
  private extents: Extent[] = [];
  private head = 0;
  peak = 0;
  private liveBytes = 0;

  constructor(readonly bytes: number) {}

  alloc(n: number): { offset: number; acc: Access } {
    if (n > this.bytes) throw new RingFullError(`a staging extent of ${n} bytes exceeds the ring (${this.bytes})`);
    let start = this.head;
    if (start + n > this.bytes) start = 0;
    const acc = noAccess();
    const keep: Extent[] = [];
    for (const e of this.extents) {
      if (e.start < start + n && start < e.end) {
        if (e.live) throw new RingFullError(`staging ring of ${this.bytes} bytes is full`);
        Fences.merge(acc, e.acc);
      } else {
        keep.push(e);
      }
    }
    const ext: Extent = { start, end: start + n, live: true, acc };
    keep.push(ext);
    this.extents = keep;
    this.head = start + n;
    this.liveBytes += n;
    this.peak = Math.max(this.peak, this.liveBytes);
    return { offset: start, acc };
  }

  release(offset: number): void {
    const e = this.extents.find((x) => x.start === offset && x.live);
    if (!e) throw new Error(`staging extent ${offset} released twice`);
    e.live = false;
    this.liveBytes -= e.end - e.start;
  }
}
