/**
 * Sustained pinned copies over the host link, both ways, right before a copy benchmark, so that the
 * benchmark starts on a link as busy as during a run's steps; the rate of the last round trip is
 * reported, which shows what the link ran at when the benchmark began. On one H100 lease the first
 * timed H2D copies of a fresh process ran at 46-51 GB/s and the later ones at 55 (PyTorch, 64 MiB
 * pinned copies), and that lease's calibration read H2D at 50 GB/s where its runs' copies went at 54;
 * on another lease the layout batches read the same with and without the warm-up (51-54 GB/s either
 * way, lab/notes/HIL-NOTES.md). The copies alternate H2D and D2H in CHUNK pieces until `ms` have
 * passed (checked after each round trip).
 */
import type { NativeBackend } from '../addon-types.js';

const CHUNK = 64 << 20;

export interface LinkWarmup {
  ms: number;
  rounds: number;
  /** the last round trip's rate per direction (GB/s): what the link ran at when the benchmark began */
  h2d_GBps: number;
  d2h_GBps: number;
}

export async function warmLink(b: NativeBackend, ms = 200): Promise<LinkWarmup> {
  if (!(ms >= 0 && Number.isFinite(ms))) throw new Error(`link warm-up: ms must be a number >= 0 (got ${ms})`);
  let host: number | undefined;
  let dev: number | undefined;
  const events: number[] = [];
  try {
    host = b.alloc('pinned', CHUNK);
    dev = b.alloc('device', CHUNK);
    for (let k = 0; k < 3; k++) events.push(b.createEvent());
    const [e0, e1, e2] = events;
    let rounds = 0;
    let h2d = 0;
    let d2h = 0;
    const t0 = performance.now();
    do {
      b.record('memory', e0);
      b.copy('memory', dev, 0, host, 0, CHUNK);
      b.record('memory', e1);
      b.copy('memory', host, 0, dev, 0, CHUNK);
      b.record('memory', e2);
      await b.synchronize();
      h2d = CHUNK / (b.elapsedMs(e0, e1) * 1e6);
      d2h = CHUNK / (b.elapsedMs(e1, e2) * 1e6);
      rounds++;
    } while (performance.now() - t0 < ms);
    return { ms: performance.now() - t0, rounds, h2d_GBps: h2d, d2h_GBps: d2h };
  } finally {
    // (copies may still be queued where a call failed: they end before the buffers go)
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    for (const e of events) b.destroyEvent(e);
    if (dev !== undefined) b.free(dev);
    if (host !== undefined) b.free(host);
  }
}
