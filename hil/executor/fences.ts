/**
 * Cross-stream ordering for the lowered plan. Every region a stream touches remembers, per stream,
 * the fence that follows its last access there; a later access from the other stream records that
 * fence (once) and waits on it (once). Fences are numbered per stream in issue order, so waiting on
 * a later fence covers every earlier one.
 */
export type StreamIx = 0 | 1; // 0 = compute, 1 = memory
export const COMPUTE: StreamIx = 0;
export const MEMORY: StreamIx = 1;

/** fence numbers of the last access from the compute (0) and memory (1) streams; 0 = none */
export type Access = [number, number];
export const noAccess = (): Access => [0, 0];

export type FenceOp = { o: 'record'; s: StreamIx; fence: number } | { o: 'wait'; s: StreamIx; on: StreamIx; fence: number };

export class Fences {
  private readonly next: [number, number] = [1, 1];
  private readonly recorded: [number, number] = [0, 0];
  private readonly waited: [number, number] = [0, 0];
  /** highest fence number recorded per stream (events needed) */
  get counts(): [number, number] {
    return [this.recorded[0], this.recorded[1]];
  }

  constructor(private readonly emit: (op: FenceOp) => void) {}

  /** Stream s is about to touch a region last accessed as `acc`: order it after the other stream's access. */
  before(s: StreamIx, acc: Access): void {
    const o: StreamIx = s === 0 ? 1 : 0;
    const f = acc[o];
    if (f <= this.waited[s]) return;
    if (f > this.recorded[o]) {
      if (f !== this.next[o]) throw new Error(`fence bookkeeping: stream ${o} fence ${f} is not the pending one (${this.next[o]})`);
      this.emit({ o: 'record', s: o, fence: f });
      this.recorded[o] = f;
      this.next[o]++;
    }
    this.emit({ o: 'wait', s, on: o, fence: f });
    this.waited[s] = f;
  }

  /** Record stream s's pending fence here (if any access waits for it), instead of where the other stream first needs it. */
  recordNow(s: StreamIx): void {
    if (this.next[s] <= this.recorded[s]) return;
    this.emit({ o: 'record', s, fence: this.next[s] });
    this.recorded[s] = this.next[s];
    this.next[s]++;
  }

  /**
   * Stream s waits for everything issued so far on the other stream: a fence recorded there now, and
   * waited on here. Used at a step boundary: a policy decides a step's moves only once the previous
   * step's token exists, so no copy of that step may start before the previous step's compute ends.
   */
  barrier(s: StreamIx): void {
    const o: StreamIx = s === 0 ? 1 : 0;
    const f = this.next[o];
    this.emit({ o: 'record', s: o, fence: f });
    this.recorded[o] = f;
    this.next[o]++;
    this.emit({ o: 'wait', s, on: o, fence: f });
    this.waited[s] = f;
  }

  /** Stream s touched a region: its access is covered by s's next fence. */
  after(s: StreamIx, acc: Access): void {
    acc[s] = this.next[s];
  }

  /** merge an access record into another (a slot inheriting what its slab saw) */
  static merge(into: Access, from: Access): void {
    into[0] = Math.max(into[0], from[0]);
    into[1] = Math.max(into[1], from[1]);
  }
}
