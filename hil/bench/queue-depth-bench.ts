/**
 * How many ops the host can have issued ahead of the GPU before an issue waits for it (the driver's
 * launch queue): GEMVs that each take longer on the GPU than the host takes to launch them, launched
 * back to back on the compute stream with the host's clock read after every launch. While the queue
 * has room a launch returns at once; once it is full, launch i returns when GEMV i - Q has ended, so
 * the host's clock after launch i reads about t_1 + (i - Q) g, with t_1 the clock after the first
 * launch (when the GPU starts on it) and g the GEMVs' period back to back (read off the clock over the
 * second half of the launches): Q = i - (t_i - t_1) / g, the median over that half. Measured on one
 * stream; the executor issues on two.
 */
import type { NativeBackend } from '../addon-types.js';
import { median } from '../timing/median.js';
import { timeOp } from '../timing/time-op.js';
import { GATE_COLS, GATE_ROWS } from './gate.js';

export interface QueueDepthTrial {
  /** the trial's estimate of the queue's depth in ops (NaN when the queue never filled) */
  ops: number;
  /** host us per launch over the first launches, while the queue had room */
  launch_us: number;
}

export interface QueueDepthResult {
  /** the median of the trials' estimates (NaN when no trial filled the queue) */
  ops: number;
  /** launches per trial */
  launches: number;
  /** one GEMV's GPU time (us) */
  gemv_us: number;
  trials: QueueDepthTrial[];
}

/**
 * The queue's depth from one trial's host clock after each launch (`at[i]`, us, launch i + 1) and one
 * launch's GPU time timed alone, `gemvUs`: over the second half of the launches, where the queue is
 * full and a launch returns as a GEMV ends, the clock's own period p (back to back, GEMVs can run a
 * little slower than one alone); the median over that half of (i + 1) - (at[i] - at[0]) / p. NaN when
 * the host was not held back over that half (its period under half of gemvUs: the launches did not
 * fill the queue).
 */
export function queueDepthFrom(at: ArrayLike<number>, gemvUs: number): QueueDepthTrial {
  const n = at.length;
  if (!(gemvUs > 0) || n < 8) return { ops: Number.NaN, launch_us: Number.NaN };
  const first = Math.min(32, Math.floor(n / 4));
  const launch_us = (at[first] - at[0]) / first;
  const half = Math.floor(n / 2);
  const period = (at[n - 1] - at[half]) / (n - 1 - half);
  if (!(period >= 0.5 * gemvUs)) return { ops: Number.NaN, launch_us };
  const q: number[] = [];
  for (let i = half; i < n; i++) q.push(i + 1 - (at[i] - at[0]) / period);
  return { ops: median(q), launch_us };
}

export interface QueueDepthOptions {
  /** GEMV launches per trial (default 8192: the estimate holds for a queue of fewer than half of them) */
  launches?: number;
  /** trials (default 2) */
  trials?: number;
  /** the host clock in ms (performance.now; tests script it) */
  now?: () => number;
}

export async function benchQueueDepth(b: NativeBackend, o: QueueDepthOptions = {}): Promise<QueueDepthResult> {
  const launches = o.launches ?? 8192;
  const trials = o.trials ?? 2;
  if (!(Number.isInteger(launches) && launches >= 8)) throw new Error(`queue depth bench: launches must be an integer >= 8 (got ${launches})`);
  if (!(Number.isInteger(trials) && trials >= 1)) throw new Error(`queue depth bench: trials must be an integer >= 1 (got ${trials})`);
  const now = o.now ?? (() => performance.now());
  const rows = GATE_ROWS;
  const cols = GATE_COLS;
  const regions: number[] = [];
  try {
    for (const bytes of [rows * cols * 2, cols * 4, rows * 4]) regions.push(b.alloc('device', bytes));
    const [w, x, y] = regions as [number, number, number];
    b.write(x, 0, new Float32Array(cols).fill(0.5));
    const gemv = { w, x, y, rows, cols };
    const gemvUs = (await timeOp(b, 'compute', 3, 1, () => b.gemv('compute', gemv))) * 1000;
    const out: QueueDepthTrial[] = [];
    const at = new Float64Array(launches);
    for (let t = 0; t < trials; t++) {
      await b.synchronize();
      for (let i = 0; i < launches; i++) {
        b.gemv('compute', gemv);
        at[i] = now() * 1000;
      }
      await b.synchronize();
      out.push(queueDepthFrom(at, gemvUs));
    }
    const ok = out.map((x) => x.ops).filter(Number.isFinite);
    return { ops: ok.length ? median(ok) : Number.NaN, launches, gemv_us: gemvUs, trials: out };
  } finally {
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    for (const r of regions) b.free(r);
  }
}
