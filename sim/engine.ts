/**
 * The discrete-event core: a clock and an event heap ordered by (time, priority, sequence).
 * Lower priority numbers run first at equal times; equal (time, priority) run in scheduling order,
 * so a run is fully deterministic. Everything else (streams, links, tiers) is built on top.
 */
export type EventFn = () => void;

export class Engine {
  /** current simulated time in microseconds */
  now = 0;
  /** events executed so far */
  executed = 0;
  private times: Float64Array;
  private prios: Int32Array;
  private seqs: Float64Array;
  private fns: (EventFn | undefined)[];
  private size = 0;
  private seq = 0;

  constructor(initialCapacity = 1024) {
    this.times = new Float64Array(initialCapacity);
    this.prios = new Int32Array(initialCapacity);
    this.seqs = new Float64Array(initialCapacity);
    this.fns = new Array(initialCapacity);
  }

  get pending(): number {
    return this.size;
  }

  /** Schedule `fn` at absolute time `time` (must not be in the past). */
  at(time: number, fn: EventFn, priority = 0): void {
    if (!(time >= this.now)) {
      throw new RangeError(`Engine.at: time ${time} is before now (${this.now}) or not a number`);
    }
    if (this.size === this.times.length) this.grow();
    let i = this.size++;
    const seq = this.seq++;
    // sift up
    const { times, prios, seqs, fns } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent];
      if (pt < time || (pt === time && (prios[parent] < priority || (prios[parent] === priority && seqs[parent] < seq)))) break;
      times[i] = pt;
      prios[i] = prios[parent];
      seqs[i] = seqs[parent];
      fns[i] = fns[parent];
      i = parent;
    }
    times[i] = time;
    prios[i] = priority;
    seqs[i] = seq;
    fns[i] = fn;
  }

  /** Schedule `fn` after `delay` microseconds. */
  after(delay: number, fn: EventFn, priority = 0): void {
    this.at(this.now + delay, fn, priority);
  }

  /** Time of the next event, or Infinity. */
  peek(): number {
    return this.size > 0 ? this.times[0] : Infinity;
  }

  /** Execute the next event. Returns false when none is left. */
  step(): boolean {
    if (this.size === 0) return false;
    const { times, prios, seqs, fns } = this;
    const fn = fns[0]!;
    this.now = times[0];
    const last = --this.size;
    if (last > 0) {
      const t = times[last];
      const p = prios[last];
      const s = seqs[last];
      const f = fns[last];
      let i = 0;
      const half = last >> 1;
      while (i < half) {
        let c = 2 * i + 1;
        const r = c + 1;
        if (r < last && (times[r] < times[c] || (times[r] === times[c] && (prios[r] < prios[c] || (prios[r] === prios[c] && seqs[r] < seqs[c]))))) c = r;
        const ct = times[c];
        if (t < ct || (t === ct && (p < prios[c] || (p === prios[c] && s < seqs[c])))) break;
        times[i] = ct;
        prios[i] = prios[c];
        seqs[i] = seqs[c];
        fns[i] = fns[c];
        i = c;
      }
      times[i] = t;
      prios[i] = p;
      seqs[i] = s;
      fns[i] = f;
    }
    fns[last] = undefined;
    this.executed++;
    fn();
    return true;
  }

  /** Run until no event is left or the next one is after `until`. Returns events executed. */
  run(until = Infinity): number {
    const start = this.executed;
    while (this.size > 0 && this.times[0] <= until) this.step();
    if (until !== Infinity && until > this.now) this.now = until;
    return this.executed - start;
  }

  /** Run every event strictly before `time`, then move the clock to `time`. Returns events executed. */
  runBefore(time: number): number {
    const start = this.executed;
    while (this.size > 0 && this.times[0] < time) this.step();
    if (time > this.now) this.now = time;
    return this.executed - start;
  }

  private grow(): void {
    const n = this.times.length * 2;
    const t = new Float64Array(n);
    t.set(this.times);
    const p = new Int32Array(n);
    p.set(this.prios);
    const s = new Float64Array(n);
    s.set(this.seqs);
    this.times = t;
    this.prios = p;
    this.seqs = s;
    this.fns.length = n;
  }
}
