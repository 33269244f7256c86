/** A completion handle (like a CUDA event): work can wait on it; it fires once. */
import type { Engine, EventTask } from './engine.js';

/** what waits on a signal: a function, or an object whose run() is called */
export type Waiter = (() => void) | EventTask;

export class Signal {
  done = false;
  /** time it fired, in microseconds */
  at = Number.NaN;
  /** the first two waiters, and those after them (most signals have at most two: no array for them) */
  private waiter: Waiter | null = null;
  private waiter2: Waiter | null = null;
  private waiters: Waiter[] | null = null;
  /** a due signal (Signal.due): the time it fires at, and the engine that fires it once armed */
  dueAt = Number.NaN;
  private dueEngine: Engine | null = null;
  private duePriority = 0;
  /** a number its issuer may give it (the simulated executor numbers its memory-stream ops); 0: none */
  seq = 0;

  fire(now: number): void {
    if (this.done) throw new Error('Signal fired twice');
    this.done = true;
    this.at = now;
    this.dueEngine = null;
    const first = this.waiter;
    if (first === null) return;
    const second = this.waiter2;
    const w = this.waiters;
    this.waiter = null;
    this.waiter2 = null;
    this.waiters = null;
    if (typeof first === 'function') first();
    else first.run();
    if (second === null) return;
    if (typeof second === 'function') second();
    else second.run();
    if (w) {
      for (let i = 0; i < w.length; i++) {
        const fn = w[i];
        if (typeof fn === 'function') fn();
        else fn.run();
      }
    }
  }

  /** Whether it has fired, arming a due signal first as then() does (then() adds no second arming). */
  ready(): boolean {
    if (this.dueEngine) this.arm();
    return this.done;
  }

  /** Run `fn` (or its run()) when the signal fires (at once if it already has). */
  then(fn: Waiter): void {
    if (this.dueEngine) this.arm();
    if (this.done) {
      if (typeof fn === 'function') fn();
      else fn.run();
    } else if (this.waiter === null) this.waiter = fn;
    else if (this.waiter2 === null) this.waiter2 = fn;
    else (this.waiters ??= []).push(fn);
  }

  /**
   * A due signal knows when it fires (`at`, not before engine.now) but costs no engine event until
   * something waits on it: the first then() schedules its event (or fires it at once if its time
   * has come). Until then `done` stays false; settle() fires it once the engine has reached its time.
   */
  static due(engine: Engine, at: number, priority: number): Signal {
    const s = new Signal();
    s.dueAt = at;
    s.dueEngine = engine;
    s.duePriority = priority;
    return s;
  }

  /** Fire a due signal whose time the engine has reached (nothing otherwise). */
  settle(): void {
    if (this.dueEngine && this.dueEngine.now >= this.dueAt) this.arm();
  }

  private arm(): void {
    const e = this.dueEngine!;
    this.dueEngine = null;
    const at = this.dueAt;
    if (e.now >= at) this.fire(at);
    else e.at(at, () => this.fire(at), this.duePriority);
  }

  static fired(now = 0): Signal {
    const s = new Signal();
    s.fire(now);
    return s;
  }
}

/** Whether every signal in `signals` has fired (due signals are not armed). */
export function allDone(signals: readonly Signal[]): boolean {
  for (let i = 0; i < signals.length; i++) if (!signals[i].done) return false;
  return true;
}
