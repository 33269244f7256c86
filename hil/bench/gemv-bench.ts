// GEMV with a layer's weight bytes (batch-1 decode, memory-bound): time and weight GB/s.
import type { NativeBackend } from '../addon-types.js';
import { randomHalves } from '../checks/kernel-checks.js';
import { makeRng } from '../rng.js';
import { timeOp } from '../timing/time-op.js';

export interface GemvRow {
  label: string;
  rows: number;
  cols: number;
  us: number;
  GBps: number;
}

export async function benchGemv(b: NativeBackend, label: string, rows: number, cols: number, trials = 10): Promise<GemvRow> {
  const rng = makeRng(rows ^ cols);
  const w = b.alloc('device', rows * cols * 2);
  const x = b.alloc('device', cols * 4);
  const y = b.alloc('device', rows * 4);
  try {
    // fill the weights in slices so the JS side never holds them all
    const slice = 1 << 22;
    for (let at = 0; at < rows * cols; at += slice) b.write(w, at * 2, randomHalves(rng, Math.min(slice, rows * cols - at), 0.02));
    b.write(x, 0, new Float32Array(cols).map(() => rng.normal()));
    const ms = await timeOp(b, 'compute', trials, 10, () => b.gemv('compute', { w, x, y, rows, cols }, 10));
    return { label, rows, cols, us: ms * 1000, GBps: (rows * cols * 2 + cols * 4 + rows * 4) / (ms * 1e6) };
  } finally {
    b.free(w);
    b.free(x);
    b.free(y);
  }
}
