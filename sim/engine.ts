/**
 * The discrete-event core: a clock and an event heap ordered by (time, priority, sequence).
 * Lower priority numbers run first at equal times; equal (time, priority) run in scheduling order,
 * so a run is fully deterministic. Everything else (streams, links, tiers) is built on top. The
 * heap is common/min-heap.ts, the same one the prefix-cache policies use.
 */
import { MinHeap } from '../common/min-heap.js';

export type EventFn = () => void;

/** An event as an object: its run() is called (no closure made per event for a caller that has the object already). */
export interface EventTask {
  run(): void;
}

type Event = EventFn | EventTask;

export class Engine {
  /** current simulated time in microseconds */
  now = 0;
  /** events executed so far */
  executed = 0;
  private readonly heap: MinHeap<Event>;
  private seq = 0;
  /** sequence number of the event running now (see at()) */
  current = -1;
  /** the running loop's limit (ahead()): it runs events at times below `limit`, or up to it when `limitClosed` */
  private limit = Infinity;
  private limitClosed = true;

  constructor(initialCapacity = 1024) {
    this.heap = new MinHeap<Event>(initialCapacity);
  }

  get pending(): number {
    return this.heap.size;
  }

  /**
   * Schedule `fn` (a function, or an object whose run() is called) at absolute time `time` (must
   * not be in the past). Returns the event's sequence number: `current` while it runs.
   */
  at(time: number, fn: EventFn | EventTask, priority = 0): number {
    if (!(time >= this.now)) {
      throw new RangeError(`Engine.at: time ${time} is before now (${this.now}) or not a number`);
    }
    if (!Number.isInteger(priority) || Math.abs(priority) > 0x7fffffff) {
      throw new RangeError(`Engine.at: priority ${priority}: expected a 32-bit integer`);
    }
    const seq = this.seq++;
    this.heap.push(time, priority, seq, fn);
    return seq;
  }

  /** Schedule `fn` after `delay` microseconds; its sequence number, as at(). */
  after(delay: number, fn: EventFn | EventTask, priority = 0): number {
    return this.at(this.now + delay, fn, priority);
  }

  /** Time of the next event, or Infinity. */
  peek(): number {
    return this.heap.size > 0 ? this.heap.topA() : Infinity;
  }

  /**
   * True when the event running now may move the clock on to `time` (advanceTo) and act there as an
   * event at `time` would: no pending event is at or before `time`, and the running loop (run, runBefore,
   * or step, whose caller steps on while nothing it waits for has happened) would run an event at `time`.
   */
  ahead(time: number): boolean {
    return (this.heap.size === 0 || this.heap.topA() > time) && (this.limitClosed ? time <= this.limit : time < this.limit);
  }

  /** Move the clock on to `time` within the running event (only where ahead(time) holds). */
  advanceTo(time: number): void {
    this.now = time;
  }

  /**
   * Execute the next event. Returns false when none is left. (An event may act at a later time too,
   * where ahead() allows it: the caller steps on until what it waits for has happened.)
   */
  step(): boolean {
    const heap = this.heap;
    if (heap.size === 0) return false;
    this.limit = Infinity;
    this.limitClosed = true;
    this.now = heap.topA();
    this.current = heap.topC();
    const fn = heap.pop()!;
    this.executed++;
    if (typeof fn === 'function') fn();
    else fn.run();
    return true;
  }

  /** Run until no event is left or the next one is after `until`. Returns events executed. */
  run(until = Infinity): number {
    const start = this.executed;
    const heap = this.heap;
    this.limit = until;
    this.limitClosed = true;
    // step() unrolled: the event loop is the simulator's hottest code
    while (heap.size > 0) {
      const t = heap.topA();
      if (!(t <= until)) break;
      this.now = t;
      this.current = heap.topC();
      const fn = heap.pop()!;
      this.executed++;
      if (typeof fn === 'function') fn();
      else fn.run();
    }
    if (until !== Infinity && until > this.now) this.now = until;
    return this.executed - start;
  }

  /** Run every event strictly before `time`, then move the clock to `time`. Returns events executed. */
  runBefore(time: number): number {
    const start = this.executed;
    const heap = this.heap;
    this.limit = time;
    this.limitClosed = false;
    while (heap.size > 0) {
      const t = heap.topA();
      if (!(t < time)) break;
      this.now = t;
      this.current = heap.topC();
      const fn = heap.pop()!;
      this.executed++;
      if (typeof fn === 'function') fn();
      else fn.run();
    }
    if (time > this.now) this.now = time;
    return this.executed - start;
  }
}
