// PCIe copy calibration in the executor's layout: the batches copy what lower-plan.ts copies (host
// slot l*M+b, runs into consecutive staging-ring positions, slab slots to host slots, coalesced as
// the executor coalesces), carry the run/byte mix that makes alpha and beta identifiable, the fit
// recovers a known alpha/beta, and the benchmark lands its copies on the host backend.
import { describe, expect, it } from 'vitest';
import { openBackend } from '../../hil/backend.js';
import { benchLayoutCopies } from '../../hil/bench/layout-copy-bench.js';
import { fitDirectionSwitch, fitLayout } from '../../hil/calibrate/calibrate.js';
import { adjacentBytes, H2D_RUN_LENGTHS, isSmallLabel, type LayoutBatch, layoutBatches, layoutOptions, MIXED_GROUP_BLOCKS, ORDERED_GROUP_BLOCKS } from '../../hil/bench/layout-batches.js';
import type { LayoutPoint } from '../../hil/bench/layout-copy-bench.js';
import { coalesceCopies } from '../../hil/executor/copy-runs.js';
import { backendAvailability } from './availability.js';

const host = backendAvailability('host');
const KiB = 1024;
// Llama-3-8B, 16-token blocks: 8 kv heads x 16 tokens x 128 dims x (K, V) x 2 bytes = 64 KiB; 8k context = 512 blocks
const full = layoutBatches(layoutOptions(64 * KiB, 512));
const lengthsOf = (bs: LayoutBatch[]) => new Set(bs.flatMap((x) => Object.keys(x.lengths).map(Number)));

const point = (x: LayoutBatch, us: number): LayoutPoint => ({ direction: x.direction, label: x.label, runs: x.runs, bytes: x.bytes, split: x.split, switches: x.switches, groups: x.groups.length, lengths: x.lengths, us, enqueue_us: 0, gate_us: 1, compute_cover: 2, compute_extra_us: 0 });

describe('executor-layout copy batches', () => {
  const h2d = full.batches.filter((x) => x.direction === 'h2d');
  const d2h = full.batches.filter((x) => x.direction === 'd2h');

  it('H2D: runs of 1..16 blocks from adjacent host slots into consecutive staging-ring positions, several per layer', () => {
    expect([...lengthsOf(h2d)].sort((a, b) => a - b)).toEqual(H2D_RUN_LENGTHS);
    for (const r of H2D_RUN_LENGTHS) {
      const pure = h2d.find((x) => x.label === `runs of ${r}`)!;
      expect(Object.keys(pure.lengths)).toEqual([String(r)]);
      expect(pure.runs).toBeGreaterThanOrEqual(8 * 16); // 8 layers, >= 16 runs each
    }
    expect([...lengthsOf(h2d.filter((x) => x.label === 'mixed 1..16'))].sort((a, b) => a - b)).toEqual(H2D_RUN_LENGTHS);
    for (const x of h2d) {
      expect(x.groups.length).toBe(8);
      for (const g of x.groups) {
        expect(g.length).toBeGreaterThan(1);
        const layer = Math.floor(g[0][0] / full.slotBytes / 512);
        for (const [i, [src, dst, n]] of g.entries()) {
          expect(src % full.slotBytes).toBe(0); // a host slot
          expect(Math.floor(src / full.slotBytes / 512)).toBe(layer); // of this layer's slots l*M .. l*M+M-1
          expect(n % (64 * KiB)).toBe(0);
          expect(dst + n).toBeLessThanOrEqual(full.ringBytes);
          if (i > 0) {
            expect(dst).toBe(g[i - 1][1] + g[i - 1][2]); // ring positions follow each other
            expect(src).toBeGreaterThan(g[i - 1][0] + g[i - 1][2]); // a gap in the host slots ends a run
          }
        }
        expect(coalesceCopies(g)).toEqual(g); // nothing left to merge: one copy per run, as the executor issues
      }
      expect(x.runs).toBe(x.groups.flat().length);
      expect(x.bytes).toBe(x.groups.flat().reduce((a, c) => a + c[2], 0));
    }
  });

  it('D2H: single blocks (and runs) from HBM slab slots into their host slots', () => {
    const singles = d2h.find((x) => x.label === 'single blocks')!;
    expect(singles.lengths).toEqual({ 1: singles.runs });
    expect(singles.runs).toBe(8 * 24);
    expect([...lengthsOf(d2h)].sort((a, b) => a - b)).toEqual([1, 2, 4, 8, 16]);
    for (const x of d2h) {
      for (const [src, dst, n] of x.groups.flat()) {
        expect(src).toBeGreaterThanOrEqual(full.ringBytes); // slab slots sit after the staging ring
        expect(src + n).toBeLessThanOrEqual(full.arenaBytes);
        expect(dst % full.slotBytes).toBe(0);
        expect(dst + n).toBeLessThanOrEqual(full.hostBytes);
      }
    }
  });

  it('mixes bytes per copy so alpha and beta are both identifiable, per direction', () => {
    for (const dir of ['h2d', 'd2h']) {
      const ratios = new Set(full.batches.filter((x) => x.direction === dir).map((x) => Math.round(x.bytes / x.runs)));
      expect(ratios.size).toBeGreaterThanOrEqual(4);
      expect(Math.max(...ratios) / Math.min(...ratios)).toBeGreaterThanOrEqual(8);
    }
  });

  it('mixed: per layer a demotion of n single blocks, then a promotion of n other blocks into the slots freed, last in first out', () => {
    const mixed = full.batches.filter((x) => x.direction === 'mixed' && x.switches > 1);
    expect(mixed.map((x) => x.groups[0].length)).toEqual(MIXED_GROUP_BLOCKS);
    for (const x of mixed) {
      const n = x.groups[0].length;
      expect(x.groups.length).toBe(16);
      expect(x.groupDirections).toEqual(Array.from({ length: 16 }, (_, i) => (i % 2 ? 'h2d' : 'd2h')));
      expect(x.switches).toBe(15);
      expect(x.lengths).toEqual({ 1: 16 * n });
      expect(x.split).toEqual({ h2d: { runs: 8 * n, bytes: 8 * n * 64 * KiB }, d2h: { runs: 8 * n, bytes: 8 * n * 64 * KiB } });
      for (let i = 0; i < 16; i += 2) {
        const [out, back] = [x.groups[i], x.groups[i + 1]];
        // D2H: slab slots (after the ring) to host slots; H2D: other host slots into the same slots, reversed
        for (const [src, dst] of out) {
          expect(src).toBeGreaterThanOrEqual(full.ringBytes);
          expect(src + 64 * KiB).toBeLessThanOrEqual(full.arenaBytes);
          expect(dst % full.slotBytes).toBe(0);
        }
        expect(back.map((c) => c[1])).toEqual(out.map((c) => c[0]).reverse());
        const hostOut = new Set(out.map((c) => c[1]));
        for (const c of back) expect(hostOut.has(c[0])).toBe(false);
      }
    }
    for (const x of full.batches.filter((b) => b.direction !== 'mixed')) expect(x.switches).toBe(0);
  });

  it('ordered mixed: the same demotions and promotions, every demotion first (one direction change)', () => {
    const ordered = full.batches.filter((x) => x.direction === 'mixed' && x.switches === 1);
    expect(ordered.map((x) => x.groups[0].length)).toEqual(ORDERED_GROUP_BLOCKS);
    for (const x of ordered) {
      const n = x.groups[0].length;
      expect(x.label).toBe(`demotes, then promotes, ${n} single blocks each`);
      expect(x.groups.length).toBe(16);
      expect(x.groupDirections).toEqual([...Array(8).fill('d2h'), ...Array(8).fill('h2d')]);
      expect(x.lengths).toEqual({ 1: 16 * n });
      expect(x.split).toEqual({ h2d: { runs: 8 * n, bytes: 8 * n * 64 * KiB }, d2h: { runs: 8 * n, bytes: 8 * n * 64 * KiB } });
      // layer k's promotion (group 8 + k) fills the slab slots its demotion (group k) emptied, last in first out;
      // no slab slot is used by two layers' demotions
      const used = new Set<number>();
      for (let k = 0; k < 8; k++) {
        const [out, back] = [x.groups[k], x.groups[8 + k]];
        for (const [src, dst] of out) {
          expect(src).toBeGreaterThanOrEqual(full.ringBytes);
          expect(used.has(src)).toBe(false);
          used.add(src);
          expect(dst % full.slotBytes).toBe(0);
        }
        expect(back.map((c) => c[1])).toEqual(out.map((c) => c[0]).reverse());
      }
    }
  });

  it('the direction-change fit recovers a known cost per change from mixed batches (those whose groups alternate)', () => {
    const mixed = full.batches.filter((x) => x.direction === 'mixed');
    const fits = {
      h2d_layout: { alpha_us: 4.7, GBps: 54 },
      d2h_layout: { alpha_us: 4.3, GBps: 54.5 },
      h2d_layout_idle: { alpha_us: 2.9, GBps: 54.4 },
      d2h_layout_idle: { alpha_us: 2.4, GBps: 54.3 },
    } as unknown as Parameters<typeof fitDirectionSwitch>[2];
    const t = (f: { alpha_us: number; GBps: number }, s: { runs: number; bytes: number }) => s.runs * f.alpha_us + s.bytes / (f.GBps * 1e3);
    const under = mixed.map((x) => point(x, t(fits.h2d_layout, x.split.h2d) + t(fits.d2h_layout, x.split.d2h) + 15 * 9));
    const idle = mixed.map((x) => point(x, t(fits.h2d_layout_idle, x.split.h2d) + t(fits.d2h_layout_idle, x.split.d2h) + 15 * 11));
    const r = fitDirectionSwitch(under, idle, fits)!;
    // the batches ordered by direction (one change) are left out
    const alternating = under.filter((x) => x.switches === 15);
    expect(alternating.length).toBe(MIXED_GROUP_BLOCKS.length);
    expect(r.batches.map((b) => [b.condition, Math.round(b.us_per_switch * 1e6) / 1e6])).toEqual([...alternating.map(() => ['under compute', 9]), ...alternating.map(() => ['idle', 11])]);
    expect(r.us).toBeCloseTo(10, 9); // median of four 9s and four 11s
    expect(r.under_compute_us).toBeCloseTo(9, 9);
    expect(r.idle_us).toBeCloseTo(11, 9);
    expect(fitDirectionSwitch([], [], fits)).toBeUndefined();
  });

  it('single quantized blocks at each given size, both ways, after the FP16 batches (which stay as they were)', () => {
    // Llama-3-8B's INT8 / INT4 / INT2 blocks with 128-element groups; a repeat and the FP16 size are ignored
    const sizes = [33792, 17408, 9216];
    const p = layoutBatches(layoutOptions(64 * KiB, 512, [9216, 33792, 17408, 33792, 64 * KiB]));
    expect(p.batches.slice(0, full.batches.length)).toEqual(full.batches);
    expect([p.slotBytes, p.ringBytes, p.hostBytes]).toEqual([full.slotBytes, full.ringBytes, full.hostBytes]);
    const added = p.batches.slice(full.batches.length, -1);
    expect(added.map((x) => `${x.direction} ${x.label}`)).toEqual([...sizes.map((q) => `h2d single ${q}-byte blocks`), ...sizes.map((q) => `d2h single ${q}-byte blocks`)]);
    for (const [k, x] of added.entries()) {
      const q = sizes[k % 3];
      expect(x.groups.length).toBe(8);
      expect(x.runs).toBe(8 * 24);
      expect(x.bytes).toBe(8 * 24 * q);
      expect(x.lengths).toEqual({}); // no whole FP16 blocks
      expect(x.split[x.direction as 'h2d' | 'd2h']).toEqual({ runs: 8 * 24, bytes: 8 * 24 * q });
      for (const g of x.groups) {
        expect(coalesceCopies(g)).toEqual(g); // one copy per block: the slots are FP16-sized
        const hostSide = g.map((c) => (x.direction === 'h2d' ? c[0] : c[1]));
        const devSide = g.map((c) => (x.direction === 'h2d' ? c[1] : c[0]));
        const layer = Math.floor(hostSide[0] / p.slotBytes / 512);
        for (const [i, c] of g.entries()) {
          expect(c[2]).toBe(q);
          expect(hostSide[i] % p.slotBytes).toBe(0); // the block's own host slot
          expect(hostSide[i] + q).toBeLessThanOrEqual(p.hostBytes);
          expect(Math.floor(hostSide[i] / p.slotBytes / 512)).toBe(layer);
          if (x.direction === 'h2d') {
            expect(devSide[i]).toBe(devSide[0] + i * q); // packed at their size, as a fetch stages them
            expect(devSide[i] + q).toBeLessThanOrEqual(p.ringBytes);
          } else {
            expect(devSide[i]).toBeGreaterThanOrEqual(p.ringBytes); // slab slots of that size
            expect(devSide[i] + q).toBeLessThanOrEqual(p.arenaBytes);
          }
        }
        if (x.direction === 'd2h') {
          expect(new Set(devSide).size).toBe(g.length);
          // slab slots of q bytes: the closest two are q apart
          const sorted = [...devSide].sort((a, b) => a - b);
          expect(Math.min(...sorted.slice(1).map((o, i) => o - sorted[i]))).toBe(q);
        }
      }
    }
    expect(layoutBatches(layoutOptions(64 * KiB, 512, [])).batches).toEqual(full.batches);
    // last, the largest quantized size H2D again from adjacent host slots: every copy but a group's first
    // reads the slot right after the previous copy's, each its own copy, packed at its size in the ring
    const adj = p.batches[p.batches.length - 1];
    expect([adj.direction, adj.label, adj.runs, adj.bytes, adj.groups.length]).toEqual(['h2d', 'adjacent single 33792-byte blocks', 8 * 24, 8 * 24 * 33792, 8]);
    expect(adjacentBytes(adj.label)).toBe(33792);
    expect(adjacentBytes(`h2d ${adj.label}`)).toBe(33792);
    expect(adjacentBytes('single 33792-byte blocks')).toBeNaN();
    expect(isSmallLabel(adj.label)).toBe(false);
    for (const g of adj.groups) {
      expect(coalesceCopies(g)).toEqual(g);
      for (let i = 1; i < g.length; i++) {
        expect(g[i][0] - g[i - 1][0]).toBe(p.slotBytes);
        expect(g[i][1] - g[i - 1][1]).toBe(33792);
      }
    }
  });

  it('padded host slots (block not a multiple of 4 KiB) end every run, as in the executor', () => {
    const p = layoutBatches({ blockBytes: 6 * KiB, maxBlocks: 128, poolLayers: 2, layersPerBatch: 2, runsPerLayer: 6 });
    expect(p.slotBytes).toBe(8 * KiB);
    for (const x of p.batches.filter((b) => b.direction === 'h2d')) expect(Object.keys(x.lengths)).toEqual(['1']);
  });

  it('the per-copy fit recovers a known alpha and beta from the batches', () => {
    for (const dir of ['h2d', 'd2h'] as const) {
      const pts = full.batches.filter((x) => x.direction === dir).map((x, i) => ({ ...point(x, x.runs * 3.1 + x.bytes / 52.5e3), i }));
      const exact = fitLayout(pts);
      expect(exact.alpha_us).toBeCloseTo(3.1, 6);
      expect(exact.GBps).toBeCloseTo(52.5, 6);
      // +-3% alternating noise still lands near the truth
      const noisy = fitLayout(pts.map((p) => ({ ...p, us: p.us * (p.i % 2 ? 1.03 : 0.97) })));
      expect(Math.abs(noisy.alpha_us - 3.1) / 3.1).toBeLessThan(0.15);
      expect(Math.abs(noisy.GBps - 52.5) / 52.5).toBeLessThan(0.06);
    }
  });
});

describe.skipIf(!host.available)(`executor-layout copy benchmark, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('times every batch under compute and lands its copies byte for byte', async () => {
    const g = { kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 };
    // with single blocks of two smaller sizes (the quantized blocks' copies land as they are, too)
    const plan = layoutBatches(layoutOptions(8 * KiB, 64, [4352, 2304]));
    expect(plan.batches.filter((x) => x.label.startsWith('single') && x.label.endsWith('-byte blocks')).length).toBe(4);
    const b = openBackend('host');
    try {
      const r = await benchLayoutCopies(b, { plan, geometry: g, qHeads: 4, contextTokens: 256, gemvRows: 256, gemvCols: 256, trials: 1 });
      expect(r.points.map((p) => [p.direction, p.label, p.runs, p.bytes, p.lengths])).toEqual(plan.batches.map((x) => [x.direction, x.label, x.runs, x.bytes, x.lengths]));
      for (const p of r.points) expect(p.us).toBeGreaterThan(0);
      expect(r.verified_copies).toBe(plan.batches.reduce((a, x) => a + x.groups[x.groups.length - 1].length, 0));
    } finally {
      b.close();
    }
  });

  it('runs the layers as the GEMV alone with attention: false, and attention before each GEMV otherwise', async () => {
    const g = { kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 };
    const plan = layoutBatches(layoutOptions(8 * KiB, 64));
    const b = openBackend('host');
    const calls = { attention: 0, gemv: 0 };
    const counted = new Proxy(b, {
      get(t, k) {
        const v = Reflect.get(t, k);
        if (k === 'attention' || k === 'gemv') return (...a: unknown[]) => (calls[k]++, (v as (...x: unknown[]) => unknown).apply(t, a));
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
    try {
      for (const attention of [false, true]) {
        calls.attention = calls.gemv = 0;
        const r = await benchLayoutCopies(counted, { plan, geometry: g, qHeads: 4, contextTokens: 256, gemvRows: 256, gemvCols: 256, trials: 1, attention });
        expect(r.points.length).toBe(plan.batches.length);
        expect(calls.gemv).toBeGreaterThan(0);
        // every layer is one GEMV (plus the gates' and the GEMV timing's own), with one attention each when asked
        if (attention) expect(calls.attention).toBeGreaterThan(0);
        else expect(calls.attention).toBe(0);
      }
    } finally {
      b.close();
    }
  });
});
