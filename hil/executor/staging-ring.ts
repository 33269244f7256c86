/**
 * HBM staging for prefetched and fetched copies: contiguous extents handed out in ring order from
 * the front of the arena and released after the attention that reads them. The placement is the
 * simulator's (sim/staging-ring.ts RingPlacement), so both place extents alike. Reusing freed space
 * inherits its last accesses (the copy into it waits for the attention that read it). A ring that
 * cannot place an extent throws RingFullError: lowering then starts over with a ring twice the size.
 */
import { RingPlacement, type RingSpan } from '../../sim/staging-ring.js';
import { type Access, Fences, noAccess } from './fences.js';

interface Extent extends RingSpan {
  acc: Access;
}

export class RingFullError extends Error {}

export class StagingRing {
  private readonly placement: RingPlacement<Extent>;

  constructor(readonly bytes: number) {
    this.placement = new RingPlacement<Extent>(bytes);
  }

  /** most bytes live at once */
  get peak(): number {
    return this.placement.peak;
  }

  alloc(n: number): { offset: number; acc: Access } {
    if (n > this.bytes) throw new RingFullError(`a staging extent of ${n} bytes exceeds the ring (${this.bytes})`);
    const ext = this.placement.place(n, (start, end, overwritten) => {
      const acc = noAccess();
      for (const e of overwritten) Fences.merge(acc, e.acc);
      return { start, end, live: true, acc };
    });
    if (!ext) throw new RingFullError(`staging ring of ${this.bytes} bytes is full`);
    return { offset: ext.start, acc: ext.acc };
  }

  release(offset: number): void {
    const e = this.placement.liveAt(offset);
    if (!e) throw new Error(`staging extent ${offset} released twice`);
    this.placement.release(e);
  }
}
