// Event timing helpers for benchmarks: each trial brackets `repeat` enqueued ops with two
// events on one stream; the result is the median per-op time over trials.
import type { NativeBackend, StreamName } from '../addon-types.js';

/** Events made by `make()` and destroyed together by `destroyAll()`, once nothing queued uses them. */
export class EventSet {
  private readonly events: number[] = [];
  constructor(private readonly b: NativeBackend) {}
  readonly make = (): number => {
    const e = this.b.createEvent();
    this.events.push(e);
    return e;
  };
  destroyAll(): void {
    for (const e of this.events.splice(0)) this.b.destroyEvent(e);
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export async function timeOp(b: NativeBackend, stream: StreamName, trials: number, repeat: number, enqueue: () => void): Promise<number> {
  const e0 = b.createEvent();
  const e1 = b.createEvent();
  const per: number[] = [];
  try {
    enqueue(); // warm-up
    await b.synchronize();
    for (let t = 0; t < trials; t++) {
      b.record(stream, e0);
      enqueue();
      b.record(stream, e1);
      await b.synchronize();
      per.push(b.elapsedMs(e0, e1) / repeat);
    }
  } finally {
    b.destroyEvent(e0);
    b.destroyEvent(e1);
  }
  return median(per);
}
