/**
 * The staging ring of the HIL executor, as the simulator models it (hil/executor/staging-ring.ts,
 * fences.ts, lower-plan.ts toStaging). Prefetched and fetched copies land in HBM extents handed out
 * in ring order; an extent is released once the attention that reads it is queued. A copy into ring
 * space that an earlier attention read must wait for that attention: the memory stream waits on a
 * compute-stream fence. Measured on the H100 (lab/notes/HIL-NOTES.md, "Where the memory stream sits idle"):
 * for lru-offload these waits are the only ones the memory stream makes, and they cost it ~2 ms per step.
 *
 * 'lazy' fences (the HIL's `eagerFences: false`): every compute access is covered by the compute
 * stream's next fence, and that fence is recorded where the memory stream first needs it, i.e. behind
 * all compute work queued by then (in a layer pipeline: the previous layer's attention and projections,
 * not only the attention that read the extent). Once the memory stream has waited on a fence, later
 * accesses covered by it (or an earlier one) need no wait. 'eager' (the HIL's default, and
 * simulate()'s) records a fence right after each attention that read extents: the copy waits for that
 * attention only.
 * The other direction (compute waiting on memory-stream copies) is SimExecutorOptions.tailWaits.
 * Only ring reuse is modelled: the HIL's fences on HBM slab slots never made the memory stream wait in
 * the measured plans (perf/hil-plan-fences.mjs counts them), as the ring's fences already cover them.
 */
import type { Signal } from './signal.js';

export type StagingFence = 'lazy' | 'eager';
export const STAGING_FENCES: readonly StagingFence[] = ['lazy', 'eager'];

/** the HIL's default ring: 3 layers of full-context FP16 KV, rounded up to 2 MiB */
export function defaultStagingRingBytes(maxBlocks: number, fp16BlockBytes: number): number {
  const slab = 1 << 21;
  return Math.ceil((3 * maxBlocks * fp16BlockBytes) / slab) * slab;
}

export interface RingExtent {
  start: number;
  end: number;
  live: boolean;
  /** compute fence covering the attention that read it (0: none yet) */
  fence: number;
}

export class StagingRing {
  /** extents not yet overwritten, sorted by start */
  private readonly extents: RingExtent[] = [];
  private head = 0;
  /** compute fences: the next one to record, the last recorded, the last the memory stream waited on */
  private next = 1;
  private recorded = 0;
  private waited = 0;
  private readonly signals = new Map<number, Signal>();
  /** waits the memory stream made on compute, and times the ring had to grow */
  waits = 0;
  grown = 0;

  constructor(
    /** ring size; grows (doubles) where an extent does not fit beside the live ones (the HIL doubles its ring and lowers again) */
    public bytes: number,
    readonly fence: StagingFence,
    /** the compute stream's tail: fires when all compute work queued so far has finished */
    private readonly computeTail: () => Signal,
  ) {
    if (!(bytes > 0)) throw new Error(`staging ring: bytes must be > 0 (got ${bytes})`);
  }

  /** An extent for a copy of `bytes` (aligned to 256 as the HIL does), and the compute signal the copy must wait for (null: none). */
  alloc(bytes: number): { extent: RingExtent; wait: Signal | null } {
    const n = Math.ceil(bytes / 256) * 256;
    while (n > this.bytes) this.grow();
    for (;;) {
      const start = this.head + n > this.bytes ? 0 : this.head;
      const end = start + n;
      // extents are kept sorted by position (they never overlap): the ones this extent overwrites are a contiguous range
      const ext = this.extents;
      let lo = 0;
      let hi = ext.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ext[mid].end <= start) lo = mid + 1;
        else hi = mid;
      }
      let j = lo;
      let fence = 0;
      let full = false;
      for (; j < ext.length && ext[j].start < end; j++) {
        if (ext[j].live) full = true;
        else fence = Math.max(fence, ext[j].fence);
      }
      if (full) {
        this.grow();
        continue;
      }
      const extent: RingExtent = { start, end, live: true, fence: 0 };
      ext.splice(lo, j - lo, extent);
      this.head = end;
      return { extent, wait: this.before(fence) };
    }
  }

  /** The attention reading `extents` has been queued (`attention`: its completion): they are free for reuse after it. */
  release(extents: readonly RingExtent[], attention: Signal): void {
    if (extents.length === 0) return;
    for (const e of extents) {
      e.live = false;
      e.fence = this.next;
    }
    if (this.fence === 'eager') this.record(attention);
  }

  private record(s: Signal): void {
    this.signals.set(this.next, s);
    this.recorded = this.next++;
  }

  /** the memory stream is about to write ring space last read under compute fence f */
  private before(f: number): Signal | null {
    if (f <= this.waited) return null;
    if (f > this.recorded) this.record(this.computeTail());
    this.waited = f;
    this.waits++;
    const s = this.signals.get(f)!;
    for (const k of this.signals.keys()) if (k < f) this.signals.delete(k);
    return s;
  }

  private grow(): void {
    this.bytes *= 2;
    this.grown++;
  }
}
