// Event timing for benchmarks: each trial brackets `repeat` enqueued ops with two events on one
// stream; the result is the median per-op time over trials.
import type { NativeBackend, StreamName } from '../addon-types.js';
import { median } from './median.js';

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
