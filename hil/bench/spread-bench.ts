/**
 * Single-block copies against the spread of their host slots, for a link direction's spread_us. Per
 * trial `layers` layers, each `copies` copies of one FP16 block between its own device block and a host
 * slot (l x M + s) x slotBytes, as the executor's host tiers place block s of layer l, the slots s
 * drawn once per layer from 0 .. M - 1 (distinct, ascending): for each M of `slots`, in each direction,
 * beside the layer GEMV (each layer's copies start with its GEMVs on the compute stream) or with the GPU
 * otherwise idle. Everything of a trial is queued behind a gate (gate.ts). A point: the memory stream's
 * time per copy (the median over trials) and the doublings per copy the simulator counts for those
 * slots (sim/host-spread.ts spreadDoublings).
 */
import type { NativeBackend } from '../addon-types.js';
import { align } from '../executor/copy-runs.js';
import { blockBytes, type BlockGeometry } from '../kv-format.js';
import { median } from '../timing/median.js';
import { EventSet } from '../timing/event-set.js';
import { spreadDoublings } from '../../sim/host-spread.js';
import { ComputeGate } from './gate.js';

export interface SpreadPoint {
  condition: 'gemv' | 'idle';
  direction: 'h2d' | 'd2h';
  /** M: the host slots per layer the copies' slots were drawn from */
  slots: number;
  copies: number;
  /** spreadDoublings of each layer's slots, summed over the layers, per copy */
  doublings: number;
  /** memory-stream time per copy, the median over trials (us) */
  us: number;
  /** trials whose gate did not hold (left out) */
  dropped: number;
}

export interface SpreadBenchOptions {
  geometry: BlockGeometry;
  gemvRows: number;
  gemvCols: number;
  /** host slots per layer to draw from, ascending (default 48, 512, 2048) */
  slots?: number[];
  layers?: number;
  copies?: number;
  trials?: number;
  /** GEMVs per layer beside the copies (default 2: a layer's copies end inside them) */
  gemvsPerLayer?: number;
  /** seed of the slot draws */
  seed?: number;
}

export const SPREAD_SLOTS = [48, 512, 2048];

/** `n` distinct integers of 0 .. m - 1, ascending, from a 32-bit LCG seeded with `seed` */
export function drawSlots(n: number, m: number, seed: number): number[] {
  if (!(Number.isInteger(n) && Number.isInteger(m) && n >= 1 && n <= m)) throw new Error(`spread bench: cannot draw ${n} distinct slots of ${m}`);
  let s = seed >>> 0;
  const picked = new Set<number>();
  while (picked.size < n) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    picked.add(Math.floor((s / 2 ** 32) * m));
  }
  return [...picked].sort((x, y) => x - y);
}

export async function benchSpread(b: NativeBackend, o: SpreadBenchOptions): Promise<SpreadPoint[]> {
  const slots = o.slots ?? SPREAD_SLOTS;
  const layers = o.layers ?? 8;
  const copies = o.copies ?? 25;
  const trials = o.trials ?? 5;
  const reps = o.gemvsPerLayer ?? 2;
  const B = blockBytes(o.geometry, 'fp16');
  const slotBytes = align(B, 4096);
  const maxM = Math.max(...slots);
  const owned: number[] = [];
  const alloc = (kind: 'device' | 'pinned', bytes: number) => {
    const r = b.alloc(kind, Math.max(4096, bytes));
    owned.push(r);
    return r;
  };
  const events = new EventSet(b);
  const gate = await ComputeGate.open(b);
  try {
    const host = alloc('pinned', layers * maxM * slotBytes);
    const dev = alloc('device', layers * copies * B);
    const gemv = { w: alloc('device', o.gemvRows * o.gemvCols * 2), x: alloc('device', o.gemvCols * 4), y: alloc('device', o.gemvRows * 4), rows: o.gemvRows, cols: o.gemvCols };
    b.write(gemv.x, 0, new Float32Array(o.gemvCols).map((_, i) => Math.cos(i)));
    const start = Array.from({ length: layers }, events.make);
    const c0 = Array.from({ length: layers }, events.make);
    const c1 = Array.from({ length: layers }, events.make);
    const drawn = new Map(slots.map((m, k) => [m, Array.from({ length: layers }, (_, l) => drawSlots(copies, m, (o.seed ?? 321) + 7919 * l + 104729 * k))]));
    const cases = (['gemv', 'idle'] as const).flatMap((condition) => (['d2h', 'h2d'] as const).flatMap((direction) => slots.map((m) => ({ condition, direction, m }))));
    const times = cases.map((): number[] => []);
    const dropped = cases.map(() => 0);
    for (let t = 0; t <= trials; t++) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[k];
        const at = drawn.get(c.m)!;
        await b.synchronize();
        gate.hold(`${c.condition} ${c.direction} ${c.m}`);
        b.waitEvent('memory', gate.start);
        for (let l = 0; l < layers; l++) {
          if (c.condition === 'gemv') {
            b.record('compute', start[l]);
            b.gemv('compute', gemv, reps);
            b.waitEvent('memory', start[l]);
          }
          b.record('memory', c0[l]);
          for (let i = 0; i < copies; i++) {
            const h = (l * c.m + at[l][i]) * slotBytes;
            const d = (l * copies + i) * B;
            if (c.direction === 'd2h') b.copy('memory', host, h, dev, d, B);
            else b.copy('memory', dev, d, host, h, B);
          }
          b.record('memory', c1[l]);
        }
        const r = await gate.release();
        // (the first round sizes the gate)
        if (t === 0) continue;
        if (!r.held) {
          dropped[k]++;
          continue;
        }
        let us = 0;
        for (let l = 0; l < layers; l++) us += b.elapsedMs(c0[l], c1[l]) * 1000;
        times[k].push(us / (layers * copies));
      }
    }
    return cases.map((c, k) => ({
      condition: c.condition,
      direction: c.direction,
      slots: c.m,
      copies,
      doublings: drawn.get(c.m)!.reduce((a, s) => a + spreadDoublings(s), 0) / (layers * copies),
      us: times[k].length ? median(times[k]) : Number.NaN,
      dropped: dropped[k],
    }));
  } finally {
    await b.synchronize();
    gate.free();
    events.destroyAll();
    for (const r of owned) b.free(r);
  }
}

export interface SpreadFit {
  /** least-squares slope of the time per copy against the doublings per copy, from the fewest doublings' point (us per doubling) */
  gemv_us: number;
  idle_us: number;
  /** the mean of the two, clamped to 0: the direction's spread_us */
  us: number;
}

/**
 * Per direction, the slope of the time per copy against the doublings per copy over the points of each
 * condition (each taken relative to its condition's point of fewest doublings), and spread_us as the
 * mean of the two conditions' slopes: a copy of a grid's cells runs beside the layers' GEMVs for part
 * of its time. Throws where a direction or condition has fewer than two points with distinct doublings
 * and finite times.
 */
export function fitSpread(points: readonly SpreadPoint[]): { h2d: SpreadFit; d2h: SpreadFit } {
  const slope = (direction: 'h2d' | 'd2h', condition: 'gemv' | 'idle'): number => {
    const ps = points.filter((p) => p.direction === direction && p.condition === condition && Number.isFinite(p.us)).sort((x, y) => x.doublings - y.doublings);
    if (ps.length < 2 || !(ps[ps.length - 1].doublings > ps[0].doublings)) throw new Error(`spread fit: ${direction} ${condition} has fewer than two timed points with distinct doublings`);
    let xy = 0;
    let xx = 0;
    for (const p of ps.slice(1)) {
      const x = p.doublings - ps[0].doublings;
      xy += x * (p.us - ps[0].us);
      xx += x * x;
    }
    return xy / xx;
  };
  const fit = (d: 'h2d' | 'd2h'): SpreadFit => {
    const gemv_us = slope(d, 'gemv');
    const idle_us = slope(d, 'idle');
    return { gemv_us, idle_us, us: Math.max(0, (gemv_us + idle_us) / 2) };
  };
  return { h2d: fit('h2d'), d2h: fit('d2h') };
}
