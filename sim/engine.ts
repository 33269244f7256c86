/**
 * The discrete-event core: a clock and an event heap ordered by (time, priority, sequence).
 * Lower priority numbers run first at equal times; equal (time, priority) run in scheduling order,
 * so a run is fully deterministic. Everything else (streams, links, tiers) is built on top. The
 * heap is common/min-heap.ts, the same one the prefix-cache policies use.
 */
import { MinHeap } from '../common/min-heap.js';

export type EventFn = () => void;

export class Engine {
  /** current simulated time in microseconds */
  now = 0;
  /** events executed so far */
  executed = 0;
  private readonly heap: MinHeap<EventFn>;
  private seq = 0;

  constructor(initialCapacity = 1024) {
    this.heap = new MinHeap<EventFn>(initialCapacity);
  }

  get pending(): number {
    return this.heap.size;
  }

  /** Schedule `fn` at absolute time `time` (must not be in the past). */
  at(time: number, fn: EventFn, priority = 0): void {
    if (!(time >= this.now)) {
      throw new RangeError(`Engine.at: time ${time} is before now (${this.now}) or not a number`);
    }
    if (!Number.isInteger(priority) || Math.abs(priority) > 0x7fffffff) {
      throw new RangeError(`Engine.at: priority ${priority}: expected a 32-bit integer`);
    }
    this.heap.push(time, priority, this.seq++, fn);
  }

  /** Schedule `fn` after `delay` microseconds. */
  after(delay: number, fn: EventFn, priority = 0): void {
    this.at(this.now + delay, fn, priority);
  }

  /** Time of the next event, or Infinity. */
  peek(): number {
    return this.heap.size > 0 ? this.heap.topA() : Infinity;
  }

  /** Execute the next event. Returns false when none is left. */
  step(): boolean {
    const heap = this.heap;
    if (heap.size === 0) return false;
    this.now = heap.topA();
    const fn = heap.pop()!;
    this.executed++;
    fn();
    return true;
  }

  /** Run until no event is left or the next one is after `until`. Returns events executed. */
  run(until = Infinity): number {
    const start = this.executed;
    const heap = this.heap;
    // step() unrolled: the event loop is the simulator's hottest code
    while (heap.size > 0) {
      const t = heap.topA();
      if (!(t <= until)) break;
      this.now = t;
      const fn = heap.pop()!;
      this.executed++;
      fn();
    }
    if (until !== Infinity && until > this.now) this.now = until;
    return this.executed - start;
  }

  /** Run every event strictly before `time`, then move the clock to `time`. Returns events executed. */
  runBefore(time: number): number {
    const start = this.executed;
    const heap = this.heap;
    while (heap.size > 0) {
      const t = heap.topA();
      if (!(t < time)) break;
      this.now = t;
      const fn = heap.pop()!;
      this.executed++;
      fn();
    }
    if (time > this.now) this.now = time;
    return this.executed - start;
  }
}
