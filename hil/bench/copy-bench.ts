// Copy bandwidth between tiers: per direction, host memory kind and size; both directions
// at once; device-to-device (bytes read + written).
import type { NativeBackend } from '../addon-types.js';
import { median, timeOp } from './timing.js';

export interface CopyRow {
  direction: 'h2d' | 'd2h' | 'd2d';
  hostKind: 'pinned' | 'pageable' | 'device';
  bytes: number;
  usPerCopy: number;
  GBps: number;
}

export interface CopyBenchOptions {
  sizes: number[];
  hostKinds: ('pinned' | 'pageable')[];
  trials?: number;
  bytesPerTrial?: number;
}

export async function benchCopies(b: NativeBackend, o: CopyBenchOptions): Promise<CopyRow[]> {
  const max = Math.max(...o.sizes);
  const trials = o.trials ?? 7;
  const perTrial = o.bytesPerTrial ?? 256 << 20;
  const dev = b.alloc('device', max);
  const rows: CopyRow[] = [];
  try {
    for (const hostKind of o.hostKinds) {
      const host = b.alloc(hostKind, max);
      b.write(host, 0, new Uint8Array(max).fill(7));
      try {
        for (const bytes of o.sizes) {
          const repeat = Math.max(1, Math.min(2000, Math.round(perTrial / bytes)));
          for (const direction of ['h2d', 'd2h'] as const) {
            const [dst, src] = direction === 'h2d' ? [dev, host] : [host, dev];
            const ms = await timeOp(b, 'memory', trials, repeat, () => b.copy('memory', dst, 0, src, 0, bytes, repeat));
            rows.push({ direction, hostKind, bytes, usPerCopy: ms * 1000, GBps: bytes / (ms * 1e6) });
          }
        }
      } finally {
        b.free(host);
      }
    }
  } finally {
    b.free(dev);
  }
  return rows;
}

/** Device-to-device copy; GBps counts bytes read plus bytes written. */
export async function benchDeviceCopy(b: NativeBackend, bytes: number, trials = 7): Promise<CopyRow> {
  const a = b.alloc('device', bytes);
  const c = b.alloc('device', bytes);
  try {
    const ms = await timeOp(b, 'memory', trials, 4, () => b.copy('memory', c, 0, a, 0, bytes, 4));
    return { direction: 'd2d', hostKind: 'device', bytes, usPerCopy: ms * 1000, GBps: (2 * bytes) / (ms * 1e6) };
  } finally {
    b.free(a);
    b.free(c);
  }
}

export interface BidirRow {
  bytes: number;
  h2dGBps: number;
  d2hGBps: number;
  totalGBps: number;
}

/** H2D on the memory stream and D2H on the compute stream at the same time (pinned). */
export async function benchBidirectional(b: NativeBackend, bytes: number, repeat = 32, trials = 5): Promise<BidirRow> {
  const hIn = b.alloc('pinned', bytes);
  const hOut = b.alloc('pinned', bytes);
  const dIn = b.alloc('device', bytes);
  const dOut = b.alloc('device', bytes);
  const [start, endA, endB] = [b.createEvent(), b.createEvent(), b.createEvent()];
  const rows: BidirRow[] = [];
  try {
    for (let t = 0; t < trials + 1; t++) {
      b.record('memory', start);
      b.waitEvent('compute', start);
      b.copy('memory', dIn, 0, hIn, 0, bytes, repeat);
      b.copy('compute', hOut, 0, dOut, 0, bytes, repeat);
      b.record('memory', endA);
      b.record('compute', endB);
      await b.synchronize();
      const a = b.elapsedMs(start, endA);
      const c = b.elapsedMs(start, endB);
      if (t > 0) rows.push({ bytes, h2dGBps: (bytes * repeat) / (a * 1e6), d2hGBps: (bytes * repeat) / (c * 1e6), totalGBps: (2 * bytes * repeat) / (Math.max(a, c) * 1e6) });
    }
  } finally {
    for (const e of [start, endA, endB]) b.destroyEvent(e);
    for (const r of [hIn, hOut, dIn, dOut]) b.free(r);
  }
  const pick = median(rows.map((r) => r.totalGBps));
  return rows.find((r) => r.totalGBps === pick) ?? rows[0]!;
}
