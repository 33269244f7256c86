/**
 * The staging ring of the HIL executor, as the simulator models it. Where extents go (RingPlacement)
 * is one implementation for both: the HIL executor's ring (hil/executor/staging-ring.ts) tags its
 * extents with stream accesses, this one with compute fences. Prefetched and fetched copies land in
 * HBM extents handed out in ring order; an extent is released once the attention that reads it is queued. A copy into ring
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
import { holeyObjectArray, objectArray } from '../common/array-kinds.js';

export type StagingFence = 'lazy' | 'eager';
export const STAGING_FENCES: readonly StagingFence[] = ['lazy', 'eager'];

/** the HIL's default ring: 3 layers of full-context FP16 KV, rounded up to 2 MiB */
export function defaultStagingRingBytes(maxBlocks: number, fp16BlockBytes: number): number {
  const slab = 1 << 21;
  return Math.ceil((3 * maxBlocks * fp16BlockBytes) / slab) * slab;
}

/** A ring extent, [start, end): live from its placement until the attention that reads it is queued. */
export interface RingSpan {
  start: number;
  end: number;
  live: boolean;
}

/** what makes a ring extent (RingPlacement.placeBy): from its bounds and the released extents it overwrites (valid during the call only) */
export interface ExtentMaker<E extends RingSpan> {
  make(start: number, end: number, overwritten: readonly E[]): E;
}

/**
 * Where extents go in the ring: in ring order from the head, back to 0 where an extent does not fit
 * before the end. An extent overwrites the released extents it overlaps (its user inherits what they
 * remember, e.g. the fence of the attention that read them) and may not overlap a live one. Extents
 * never overlap; the ones an extent overwrites are a contiguous range in ring order.
 *
 * The extents are kept in a circular buffer in ring order rotated at `origin`: first those ending after
 * it, then the others (each part by start). An extent placed at the origin overwrites extents at the
 * buffer's front and goes to its back, and its end becomes the origin: no extent is copied. Placing
 * elsewhere (wrapping to 0, or after the ring grew) first rotates the buffer to the new origin.
 */
export class RingPlacement<E extends RingSpan> {
  /** the extents: `count` of them from buf[front], circularly (the buffer's length is a power of two) */
  private buf: (E | undefined)[] = holeyObjectArray<E>(16);
  private front = 0;
  private count = 0;
  /** the position the buffer is rotated at (see the class comment), and a buffer to rotate into */
  private origin = 0;
  private spare: (E | undefined)[] = holeyObjectArray<E>(0);
  /** the extents a placement overwrites, handed to `make` (reused: valid during the call only) */
  private readonly over: E[] = objectArray();
  private head = 0;
  /** bytes of the live extents, and their most at once */
  liveBytes = 0;
  peak = 0;

  constructor(public bytes: number) {}

  /**
   * Places an extent of n bytes, made by `make` from its bounds and the released extents it overwrites
   * (they are dropped; the list is valid during the call only); null, with nothing changed, where n
   * exceeds the ring or a live extent is in the way.
   */
  place(n: number, make: (start: number, end: number, overwritten: readonly E[]) => E): E | null {
    const start = this.claim(n);
    return start < 0 ? null : this.put(make(start, start + n, this.over), start + n, n);
  }

  /**
   * place() with the extent made by `maker.make`: a method of one class for every ring, where a
   * function made per ring would be another call target to code compiled for an earlier ring
   */
  placeBy(n: number, maker: ExtentMaker<E>): E | null {
    const start = this.claim(n);
    return start < 0 ? null : this.put(maker.make(start, start + n, this.over), start + n, n);
  }

  /**
   * place()'s first part: the start of an extent of n bytes, with the extents it overwrites taken
   * out of the buffer into `over`; −1 (nothing changed) where n exceeds the ring or a live extent is
   * in the way
   */
  private claim(n: number): number {
    if (n > this.bytes) return -1;
    const start = this.head + n > this.bytes ? 0 : this.head;
    const end = start + n;
    if (start !== this.origin) this.rotate(start);
    const buf = this.buf;
    const mask = buf.length - 1;
    // the overwritten extents: from the front, those ending after start and starting before end
    let k = 0;
    for (; k < this.count; k++) {
      const e = buf[(this.front + k) & mask]!;
      if (!(e.end > start && e.start < end)) break;
      if (e.live) return -1;
    }
    const over = this.over;
    for (let i = 0; i < k; i++) {
      const at = (this.front + i) & mask;
      over.push(buf[at]!);
      buf[at] = undefined;
    }
    this.front = (this.front + k) & mask;
    this.count -= k;
    return start;
  }

  /** place()'s second part: the made extent, of n bytes ending at `end`, goes in */
  private put(extent: E, end: number, n: number): E {
    const over = this.over;
    // (emptied by pops: setting an array's length is a slow runtime call)
    while (over.length !== 0) over.pop();
    if (this.count === this.buf.length) this.widen();
    this.buf[(this.front + this.count) & (this.buf.length - 1)] = extent;
    this.count++;
    this.origin = end;
    this.head = end;
    this.liveBytes += n;
    this.peak = Math.max(this.peak, this.liveBytes);
    return extent;
  }

  /** Rotates the buffer to origin `at`: the extents ending after it first (copied into the spare buffer, which it swaps with). */
  private rotate(at: number): void {
    const buf = this.buf;
    const mask = buf.length - 1;
    const n = this.count;
    const front = this.front;
    // the buffer is ring order rotated: ring order starts at its one descent in start
    let first = 0;
    for (let i = 1; i < n; i++) {
      if (buf[(front + i) & mask]!.start < buf[(front + i - 1) & mask]!.start) {
        first = i;
        break;
      }
    }
    let lo = 0;
    while (lo < n && buf[(front + ((first + lo) % n)) & mask]!.end <= at) lo++;
    const r = n === 0 ? 0 : (first + lo) % n;
    if (this.spare.length !== buf.length) this.spare = holeyObjectArray<E>(buf.length);
    const out = this.spare;
    for (let i = 0; i < n; i++) out[i] = buf[(front + ((r + i) % n)) & mask];
    for (let i = 0; i < n; i++) buf[(front + i) & mask] = undefined;
    this.spare = buf;
    this.buf = out;
    this.front = 0;
    this.origin = at;
  }

  /** Doubles the buffer (full), keeping the extents' order from index 0. */
  private widen(): void {
    const old = this.buf;
    const next = holeyObjectArray<E>(old.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.front + i) & (old.length - 1)];
    this.buf = next;
    this.front = 0;
  }

  /**
   * Grows the ring to `bytes` after an extent of n bytes was refused. Where it was refused at the
   * head (not for wrapping to 0 or for exceeding the ring), placing it there again would be refused
   * again: the head moves to the old end, so the extent goes into the added space.
   */
  grow(bytes: number, n: number): void {
    if (this.head + n <= this.bytes) this.head = this.bytes;
    this.bytes = bytes;
  }

  /** the live extent starting at `offset`, if any */
  liveAt(offset: number): E | undefined {
    const mask = this.buf.length - 1;
    for (let i = 0; i < this.count; i++) {
      const x = this.buf[(this.front + i) & mask]!;
      if (x.start === offset && x.live) return x;
    }
    return undefined;
  }

  release(e: E): void {
    if (!e.live) throw new Error(`staging extent ${e.start} released twice`);
    e.live = false;
    this.liveBytes -= e.end - e.start;
  }
}

export interface RingExtent extends RingSpan {
  /** compute fence covering the attention that read it (0: none yet) */
  fence: number;
}

export class StagingRing implements ExtentMaker<RingExtent> {
  private readonly placement: RingPlacement<RingExtent>;
  /** compute fences: the next one to record, the last recorded, the last the memory stream waited on */
  private next = 1;
  private recorded = 0;
  private waited = 0;
  /**
   * the recorded fences' signals still wanted (fences first..recorded): fence k at sigs[k - sigBase],
   * those below `first` dropped (null)
   */
  private sigs: (Signal | null)[] = objectArray();
  private sigBase = 1;
  private first = 1;
  /** waits the memory stream made on compute, and times the ring had to grow */
  waits = 0;
  grown = 0;

  constructor(
    /** ring size; grows (doubles) where an extent does not fit beside the live ones (the HIL doubles its ring and lowers again) */
    bytes: number,
    readonly fence: StagingFence,
    /** the compute stream's tail: fires when all compute work queued so far has finished */
    private readonly computeTail: () => Signal,
  ) {
    if (!(bytes > 0)) throw new Error(`staging ring: bytes must be > 0 (got ${bytes})`);
    this.placement = new RingPlacement<RingExtent>(bytes);
  }

  get bytes(): number {
    return this.placement.bytes;
  }

  /** An extent for a copy of `bytes` (aligned to 256 as the HIL does), and the compute signal the copy must wait for (null: none). */
  alloc(bytes: number): { extent: RingExtent; wait: Signal | null } {
    const extent = this.place(bytes);
    return { extent, wait: this.placedWait };
  }

  /**
   * alloc() without its result object: the extent; the compute signal the copy must wait for is
   * placedWait until the next call. (An extent object is the extent of a later placement once it has
   * been released and overwritten: hold it only until its release.)
   */
  place(bytes: number): RingExtent {
    const n = Math.ceil(bytes / 256) * 256;
    this.madeFence = 0;
    let extent: RingExtent | null;
    while (!(extent = this.placement.placeBy(n, this))) this.grow(n);
    this.placedWait = this.before(this.madeFence);
    return extent;
  }
  /** the wait of the extent place() returned last (null: none) */
  placedWait: Signal | null = null;

  /** the latest fence of the extents the last placed extent overwrote (set by make) */
  private madeFence = 0;
  /**
   * extents dropped from the ring (released and overwritten: nothing holds them), for later
   * placements to take (reuseExtents, on by default: off, a placement that overwrites none makes a
   * new object)
   */
  private readonly dropped: RingExtent[] = objectArray();
  reuseExtents = true;

  /** RingPlacement's extent maker (placeBy); only placeBy calls it (it moves the ring's fence) */
  make(start: number, end: number, overwritten: readonly RingExtent[]): RingExtent {
    for (let i = 0; i < overwritten.length; i++) this.madeFence = Math.max(this.madeFence, overwritten[i].fence);
    let e: RingExtent;
    if (overwritten.length !== 0) {
      // an overwritten extent is the new one; the others it overwrote wait for later placements
      e = overwritten[0];
      if (this.reuseExtents) for (let i = 1; i < overwritten.length; i++) this.dropped.push(overwritten[i]);
    } else if (this.dropped.length !== 0) e = this.dropped.pop()!;
    else return { start, end, live: true, fence: 0 };
    e.start = start;
    e.end = end;
    e.live = true;
    e.fence = 0;
    return e;
  }

  /** The attention reading `extents` has been queued (`attention`: its completion): they are free for reuse after it. */
  release(extents: readonly RingExtent[], attention: Signal): void {
    if (extents.length === 0) return;
    for (let i = 0; i < extents.length; i++) {
      const e = extents[i];
      this.placement.release(e);
      e.fence = this.next;
    }
    if (this.fence === 'eager') this.record(attention);
    else this.unrecorded = true;
  }

  /**
   * The memory stream has waited for all compute issued so far (the HIL's fence at a step's start): no
   * later copy waits on a fence from before. ('lazy': the released extents' fence is recorded first.)
   */
  barrier(): void {
    if (this.unrecorded) this.record(this.computeTail());
    this.waited = Math.max(this.waited, this.recorded);
    this.dropBelow(this.waited);
  }

  /** forget the signals of fences below f (f at most recorded + 1) */
  private dropBelow(f: number): void {
    const sigs = this.sigs;
    for (let k = this.first; k < f; k++) sigs[k - this.sigBase] = null;
    if (f > this.first) this.first = f;
    // (the dropped front is cut off once it is most of the list)
    const cut = this.first - this.sigBase;
    if (cut >= 256 && 2 * cut >= sigs.length) {
      sigs.copyWithin(0, cut);
      for (let i = 0; i < cut; i++) sigs.pop();
      this.sigBase = this.first;
    }
  }

  /** ('lazy') extents were released under the next fence, which is not recorded yet */
  private unrecorded = false;

  private record(s: Signal): void {
    this.unrecorded = false;
    // (fences are recorded in order: fence `next` goes at the end)
    this.sigs.push(s);
    this.recorded = this.next++;
  }

  /** the memory stream is about to write ring space last read under compute fence f */
  private before(f: number): Signal | null {
    if (f <= this.waited) return null;
    if (f > this.recorded) this.record(this.computeTail());
    this.waited = f;
    this.waits++;
    const s = this.sigs[f - this.sigBase]!;
    this.dropBelow(f);
    return s;
  }

  private grow(n: number): void {
    this.placement.grow(this.placement.bytes * 2, n);
    this.grown++;
  }
}
