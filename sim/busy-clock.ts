/**
 * How long something has been busy, as a running integral over simulated time: start() and stop()
 * bracket each busy interval (they may nest: busy while any is open), at(t) is the busy time up to t
 * (t at or after the last start/stop). The executor uses two, for memory-stream copies into and out of
 * HBM, to lengthen the kernels that ran beside them (sim-executor.ts).
 */
export class BusyClock {
  private open = 0;
  private since = 0;
  private total = 0;

  start(now: number): void {
    if (this.open++ === 0) this.since = now;
  }

  stop(now: number): void {
    if (this.open === 0) throw new Error('BusyClock.stop() without a start()');
    if (--this.open === 0) this.total += now - this.since;
  }

  /** busy time from 0 to t */
  at(t: number): number {
    return this.open > 0 ? this.total + (t - this.since) : this.total;
  }
}
