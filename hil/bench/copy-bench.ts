// Copy bandwidth between tiers: per direction, host memory kind and size; both directions
// at once; device-to-device (bytes read + written); lists of slabs issued three ways.
import type { NativeBackend } from '../addon-types.js';
import { median } from '../timing/median.js';
import { timeOp } from '../timing/time-op.js';

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

export type SlabMethod = 'one stream' | 'two streams' | 'batch';
export const SLAB_METHODS: SlabMethod[] = ['one stream', 'two streams', 'batch'];

export interface SlabRow {
  method: SlabMethod;
  direction: 'h2d' | 'd2h';
  slabBytes: number;
  slabs: number;
  /** all slabs, median over trials */
  us: number;
  GBps: number;
}

/**
 * A list of distinct pinned <-> device slabs issued three ways: back to back on the memory stream
 * (copyMany, one stream), alternating over the two memory streams (copyMany), and one batched call
 * (copyBatch: cudaMemcpyBatchAsync). Timed from an event on the memory stream (memory2 waits on it)
 * to one after both streams finished. After each case, sampled slabs are compared byte for byte.
 */
export async function benchSlabCopies(b: NativeBackend, o: { slabBytes: number; slabs: number; trials?: number }): Promise<SlabRow[]> {
  if (typeof b.copyMany !== 'function' || typeof b.copyBatch !== 'function') throw new Error('the loaded addon has no copyMany/copyBatch: rebuild it (node hil/build.mjs)');
  const total = o.slabBytes * o.slabs;
  const host = b.alloc('pinned', total);
  const dev = b.alloc('device', total);
  const [start, end2, end] = [b.createEvent(), b.createEvent(), b.createEvent()];
  const rows: SlabRow[] = [];
  try {
    const pattern = new Uint8Array(o.slabBytes).map((_, i) => (i * 2654435761) >>> 24);
    for (let i = 0; i < o.slabs; i++) {
      new DataView(pattern.buffer).setUint32(0, i);
      b.write(host, i * o.slabBytes, pattern);
    }
    const sample = [...new Set([0, o.slabs >> 1, o.slabs - 1])];
    for (const method of SLAB_METHODS) {
      for (const direction of ['h2d', 'd2h'] as const) {
        const [dst, src] = direction === 'h2d' ? [dev, host] : [host, dev];
        const list = new Float64Array(5 * o.slabs);
        for (let i = 0; i < o.slabs; i++) list.set([dst, i * o.slabBytes, src, i * o.slabBytes, o.slabBytes], 5 * i);
        const enqueue = () => {
          if (method === 'batch') b.copyBatch('memory', list);
          else b.copyMany(method === 'one stream' ? ['memory'] : ['memory', 'memory2'], list);
        };
        const per: number[] = [];
        for (let t = 0; t <= (o.trials ?? 7); t++) {
          if (t === 0) for (const s of sample) b.write(dst, s * o.slabBytes, new Uint8Array(o.slabBytes));
          b.record('memory', start);
          b.waitEvent('memory2', start);
          enqueue();
          b.record('memory2', end2);
          b.waitEvent('memory', end2);
          b.record('memory', end);
          await b.synchronize();
          if (t === 0) {
            for (const s of sample) {
              if (!Buffer.from(b.read(dst, s * o.slabBytes, o.slabBytes)).equals(Buffer.from(b.read(src, s * o.slabBytes, o.slabBytes)))) throw new Error(`slab copies (${method}, ${direction}): slab ${s} did not land`);
            }
          } else {
            per.push(b.elapsedMs(start, end));
          }
        }
        const ms = median(per);
        rows.push({ method, direction, slabBytes: o.slabBytes, slabs: o.slabs, us: ms * 1000, GBps: total / (ms * 1e6) });
      }
    }
  } finally {
    for (const e of [start, end2, end]) b.destroyEvent(e);
    b.free(host);
    b.free(dev);
  }
  return rows;
}

export interface SlabTarget {
  direction: 'h2d' | 'd2h';
  method: string;
  GBps: number;
  bestPinnedGBps: number;
  percent: number;
}

/** per direction: the 2 MiB rows (pinned, same slab repeated; and each slab method) against the best pinned bandwidth */
export function slabTargets(pinned: CopyRow[], slabs: SlabRow[]): SlabTarget[] {
  const out: SlabTarget[] = [];
  for (const direction of ['h2d', 'd2h'] as const) {
    const best = Math.max(...pinned.filter((r) => r.direction === direction && r.hostKind === 'pinned').map((r) => r.GBps));
    const rep = pinned.find((r) => r.direction === direction && r.hostKind === 'pinned' && r.bytes === 2 << 20);
    const rows: [string, number][] = [...(rep ? [['one stream, same slab repeated', rep.GBps] as [string, number]] : []), ...slabs.filter((r) => r.direction === direction).map((r): [string, number] => [r.method, r.GBps])];
    for (const [method, GBps] of rows) out.push({ direction, method, GBps, bestPinnedGBps: best, percent: (100 * GBps) / best });
  }
  return out;
}

/** The slab target line: 2 MiB slab copies >= 95% of the best pinned bandwidth. */
export function formatSlabTarget(t: SlabTarget): string {
  return `TARGET ${t.direction} 2 MiB slab (${t.method}) = ${t.percent.toFixed(1)}% of best pinned ${t.bestPinnedGBps.toFixed(1)} GB/s: ${t.GBps.toFixed(2)} GB/s (target >= 95%)`;
}
