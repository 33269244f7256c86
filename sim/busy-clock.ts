/**
 * How long something has been busy, as a running integral over simulated time: start() and stop()
 * bracket each busy interval (they may nest: busy while any is open), at(t) is the busy time up to t
 * (t at or after the last start/stop). The executor uses two, for memory-stream copies into and out of
 * HBM, to lengthen the kernels that ran beside them (sim-executor.ts).
 */
export class BusyClock {
  private open = 0;
  /**
   * the start of the open interval (SINCE) and the busy time before it (TOTAL): in an array of doubles,
   * not fields, which would start as small integers and become doubles in the first replay that
   * copies (a new map, which code compiled for an executor holding the old one's clocks would meet)
   */
  private readonly t = new Float64Array(2);

  start(now: number): void {
    if (this.open++ === 0) this.t[SINCE] = now;
  }

  stop(now: number): void {
    if (this.open === 0) throw new Error('BusyClock.stop() without a start()');
    if (--this.open === 0) this.t[TOTAL] += now - this.t[SINCE];
  }

  /** busy time from 0 to t */
  at(t: number): number {
    return this.open > 0 ? this.t[TOTAL] + (t - this.t[SINCE]) : this.t[TOTAL];
  }
}

const SINCE = 0;
const TOTAL = 1;
