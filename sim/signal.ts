/** A completion handle (like a CUDA event): work can wait on it; it fires once. */
export class Signal {
  done = false;
  /** time it fired, in microseconds */
  at = Number.NaN;
  private waiters: (() => void)[] | null = null;

  fire(now: number): void {
    if (this.done) throw new Error('Signal fired twice');
    this.done = true;
    this.at = now;
    const w = this.waiters;
    this.waiters = null;
    if (w) for (const fn of w) fn();
  }

  /** Run `fn` when the signal fires (at once if it already has). */
  then(fn: () => void): void {
    if (this.done) fn();
    else (this.waiters ??= []).push(fn);
  }

  static fired(now = 0): Signal {
    const s = new Signal();
    s.fire(now);
    return s;
  }
}

/** Call `fn` once every signal in `signals` has fired. */
export function whenAll(signals: readonly Signal[], fn: () => void): void {
  let left = 0;
  for (const s of signals) if (!s.done) left++;
  if (left === 0) {
    fn();
    return;
  }
  const one = () => {
    if (--left === 0) fn();
  };
  for (const s of signals) if (!s.done) s.then(one);
}
