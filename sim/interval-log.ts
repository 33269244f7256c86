/**
 * When the ops of one stream ran, as intervals in start order (a stream runs one op at a time, so
 * they do not overlap). An interval may be logged before it starts (its times known at enqueue) or
 * opened when it starts and closed when it ends. slowedEnd(t0, t1, rate) is when work that took
 * [t0, t1) at full pace ends if it goes at `rate` while logged intervals run (those logged by the time
 * it is asked: an op enqueued later that starts before that end is not counted). The executor logs the
 * compute stream's GEMVs, to price the memory-stream copies that ran beside them (sim-executor.ts).
 */
export class IntervalLog {
  private starts: number[] = [];
  private ends: number[] = [];
  /** per interval, the earliest it can end (its start plus its base time; for an open one, what it runs at least) */
  private least: number[] = [];
  /** intervals dropped so far (a handle is an index over all intervals ever logged) */
  private base = 0;

  /** an interval whose start and end are known */
  add(start: number, end: number): void {
    this.starts.push(start);
    this.ends.push(end);
    this.least.push(end);
  }

  /** an interval that starts now and runs at least until `atLeast`; close(handle, end) when it ends */
  open(start: number, atLeast = start): number {
    this.starts.push(start);
    this.ends.push(Number.NaN);
    this.least.push(atLeast);
    return this.base + this.starts.length - 1;
  }

  close(handle: number, end: number): void {
    this.ends[handle - this.base] = end;
  }

  /**
   * When work that takes t1 - t0 at full pace, started at t0, ends if it goes at `rate` (0 < rate <= 1)
   * while a logged interval runs and at full pace otherwise. Intervals logged ahead (their times known)
   * count past t1; an open one runs until the later of t1 and the least it runs (it has not ended by t1).
   */
  slowedEnd(t0: number, t1: number, rate: number): number {
    let work = t1 - t0;
    let i = this.starts.length;
    while (i > 0 && (Number.isNaN(this.ends[i - 1]) || this.ends[i - 1] > t0)) i--;
    let t = t0;
    for (; i < this.starts.length; i++) {
      const s = Math.max(this.starts[i], t);
      const e = Number.isNaN(this.ends[i]) ? Math.max(t1, this.least[i]) : this.ends[i];
      if (e <= s) continue;
      if (s - t >= work) break;
      work -= s - t;
      const inside = (e - s) * rate;
      if (inside >= work) return s + work / rate;
      work -= inside;
      t = e;
    }
    return t + work;
  }

  /** forget intervals that end at or before t (an open one is kept) */
  dropBefore(t: number): void {
    let k = 0;
    while (k < this.starts.length && !Number.isNaN(this.ends[k]) && this.ends[k] <= t) k++;
    if (k === 0) return;
    this.starts = this.starts.slice(k);
    this.ends = this.ends.slice(k);
    this.least = this.least.slice(k);
    this.base += k;
  }
}
