// The per-batch copy model of the calibration (hil/calibrate/fit-copy-batches.ts): batch times made
// from known per-copy, per-byte, per-group and per-change costs give those costs back (float64, to
// 1e-9), the profile takes them as the link's fields, gpu.copy_batch_us and copy_under_compute
// "gemv", and inputs that cannot be fitted say why. A stored H200 calibration refits to the numbers
// lab/notes/HIL-NOTES.md reports for it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { layoutBatches, layoutOptions, type LayoutBatch } from '../../hil/bench/layout-batches.js';
import { applyPerDirectionLayoutFits, calibrationWarnings, fitDirectionSwitch, fitLayout } from '../../hil/calibrate/calibrate.js';
import { applyCopyBatchFit, COPY_BATCH_OUTLIER, type CopyBatchFit, copyBatchPoints, type CopyBatchPoint, fitCopyBatches, fitLayoutCopyBatches, type LayoutBatchTimed, underComputeBatches } from '../../hil/calibrate/fit-copy-batches.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';

// Llama-3-8B, 16-token blocks: 64 KiB blocks, 512 blocks per layer (an 8k context)
const plan = layoutBatches(layoutOptions(64 * 1024, 512));

interface Costs {
  a_h2d: number;
  GBps_h2d: number;
  a_d2h: number;
  GBps_d2h: number;
  group: number;
  change: number;
}

/** a batch's time under the model, from its copies, bytes, groups and changes */
function timeOf(x: LayoutBatch, c: Costs): number {
  const s = x.split;
  return s.h2d.runs * c.a_h2d + s.h2d.bytes / (c.GBps_h2d * 1e3) + s.d2h.runs * c.a_d2h + s.d2h.bytes / (c.GBps_d2h * 1e3) + x.groups.length * c.group + x.switches * c.change;
}

const timed = (batches: LayoutBatch[], c: Costs): LayoutBatchTimed[] =>
  batches.map((x) => ({ direction: x.direction, label: x.label, split: x.split, switches: x.switches, groups: x.groups.length, us: timeOf(x, c) }));

function measurements(idle: Costs, busy: Costs, batches = plan.batches) {
  const of = (dir: string, c: Costs) => timed(batches.filter((x) => x.direction === dir), c);
  return {
    h2d_layout: of('h2d', busy),
    d2h_layout: of('d2h', busy),
    mixed_layout: of('mixed', busy),
    h2d_layout_idle: of('h2d', idle),
    d2h_layout_idle: of('d2h', idle),
    mixed_layout_idle: of('mixed', idle),
  };
}

const IDLE: Costs = { a_h2d: 2.5, GBps_h2d: 25, a_d2h: 2.25, GBps_d2h: 20, group: 5.25, change: 1.5 };
// under compute: dearer copies and changes, the same per-group cost (the fit holds it at the idle one)
const BUSY: Costs = { a_h2d: 3.25, GBps_h2d: 24, a_d2h: 10.05, GBps_d2h: 21, group: 5.25, change: 6.5 };

describe('per-batch copy fit', () => {
  it('gives back known per-copy, per-byte, per-group and per-change costs, idle and under compute', () => {
    // 11 H2D, 7 D2H and 7 mixed batches (5 alternating, 2 ordered by direction)
    expect(['h2d', 'd2h', 'mixed'].map((d) => plan.batches.filter((x) => x.direction === d).length)).toEqual([11, 7, 7]);
    const f = fitLayoutCopyBatches(measurements(IDLE, BUSY));
    const rel = (got: number, want: number) => expect(Math.abs(got - want) / want).toBeLessThan(1e-9);
    for (const [x, c] of [[f.idle, IDLE], [f.under_compute, BUSY]] as const) {
      rel(x.h2d.alpha_us, c.a_h2d);
      rel(x.h2d.GBps, c.GBps_h2d);
      rel(x.h2d.us_per_byte, 1 / (c.GBps_h2d * 1e3));
      rel(x.d2h.alpha_us, c.a_d2h);
      rel(x.d2h.GBps, c.GBps_d2h);
      rel(x.group_us, c.group);
      rel(x.switch_us!, c.change);
      expect(x.points.length).toBe(plan.batches.length);
      expect(x.max_abs_residual).toBeLessThan(1e-9);
    }
    expect(f.idle.group_us_fixed).toBe(false);
    expect(f.under_compute.group_us_fixed).toBe(true);
    expect(f.under_compute.group_us).toBe(f.idle.group_us);
    // a point's fit and residual: the first H2D batch (runs of 1 block: 8 layers x 24 copies of 64 KiB)
    const p0 = f.idle.points[0];
    expect([p0.h2d.runs, p0.h2d.bytes, p0.d2h.runs, p0.groups, p0.switches]).toEqual([192, 192 * 65536, 0, 8, 0]);
    expect(p0.us).toBeCloseTo(192 * 2.5 + (192 * 65536) / 25000 + 8 * 5.25, 9); // 480 + 503.31648 + 42 = 1025.31648 us
    expect(p0.us).toBeCloseTo(1025.31648, 9);
    expect(Math.abs(p0.fit_us - p0.us)).toBeLessThan(1e-9);
  });

  it('fits over the quantized block sizes too: exact where copies are linear in bytes, and sees a departure below the FP16 block', () => {
    // Llama-3-8B's INT8 / INT4 / INT2 blocks as single-block batches beside the FP16 ones
    const withSmall = layoutBatches(layoutOptions(64 * 1024, 512, [33792, 17408, 9216]));
    expect(withSmall.batches.length).toBe(plan.batches.length + 7);
    const f = fitLayoutCopyBatches(measurements(IDLE, BUSY, withSmall.batches));
    expect(Math.abs(f.idle.h2d.alpha_us - IDLE.a_h2d) / IDLE.a_h2d).toBeLessThan(1e-9);
    expect(Math.abs(f.idle.d2h.GBps - IDLE.GBps_d2h) / IDLE.GBps_d2h).toBeLessThan(1e-9);
    expect(Math.abs(f.under_compute.d2h.alpha_us - BUSY.a_d2h) / BUSY.a_d2h).toBeLessThan(1e-9);
    // (all but the batch from adjacent host slots, which the fit leaves to the adjacent price)
    expect(f.idle.points.length).toBe(withSmall.batches.length - 1);
    expect(f.idle.points.some((p) => p.label.includes('adjacent'))).toBe(false);
    // a copy engine whose per-copy time falls faster than the line below 64 KiB (1.6x its slope there)
    const K = 64 * 1024;
    let kink = 1.6;
    // (or, with floor set, a copy of fewer bytes than 64 KiB takes as long as one of 64 KiB)
    let floor = false;
    const perCopy = (bytes: number, a: number, GBps: number) =>
      bytes >= K ? a + bytes / (GBps * 1e3) : floor ? a + K / (GBps * 1e3) : a + K / (GBps * 1e3) - (kink * (K - bytes)) / (GBps * 1e3);
    const kinked = (batches: LayoutBatch[]): LayoutBatchTimed[] =>
      batches.map((x) => {
        let us = x.groups.length * IDLE.group + x.switches * IDLE.change;
        x.groups.forEach((g, i) => {
          for (const c of g) us += x.groupDirections[i] === 'h2d' ? perCopy(c[2], IDLE.a_h2d, IDLE.GBps_h2d) : perCopy(c[2], IDLE.a_d2h, IDLE.GBps_d2h);
        });
        return { direction: x.direction, label: x.label, split: x.split, switches: x.switches, groups: x.groups.length, us };
      });
    const fitsOf = (b: LayoutBatch[]) => {
      const t = kinked(b);
      const of = (d: string) => t.filter((x) => x.direction === d);
      return fitLayoutCopyBatches({ h2d_layout: of('h2d'), d2h_layout: of('d2h'), mixed_layout: of('mixed'), h2d_layout_idle: of('h2d'), d2h_layout_idle: of('d2h'), mixed_layout_idle: of('mixed') });
    };
    const idleOnly = (b: LayoutBatch[]) => fitsOf(b).idle;
    const int2 = (x: CopyBatchFit) => (x.h2d.alpha_us + 9216 * x.h2d.us_per_byte) / perCopy(9216, IDLE.a_h2d, IDLE.GBps_h2d) - 1;
    // FP16 batches alone fit the line exactly (no residual) and price a 9 KiB copy 89% high
    const fp16 = idleOnly(plan.batches);
    expect(fp16.max_abs_residual).toBeLessThan(1e-9);
    expect(int2(fp16)).toBeCloseTo(0.891, 3);
    // with the single quantized blocks the residuals show the departure, and the 9 KiB copy is priced closer
    const both = idleOnly(withSmall.batches);
    expect(both.dropped).toBeUndefined();
    expect(both.max_abs_residual).toBeGreaterThan(0.05);
    expect(int2(both)).toBeLessThan(0.3);
    // a departure past the outlier limit (a floor under small copies, as D2H copies showed on an H100):
    // small batches, and only they, are left out, and the warnings name them as off the line (not as
    // disturbed)
    kink = 0;
    floor = true;
    const far = fitsOf(withSmall.batches);
    const dropped = ['d2h single 33792-byte blocks', 'd2h single 17408-byte blocks', 'd2h single 9216-byte blocks', 'h2d single 17408-byte blocks', 'h2d single 9216-byte blocks'];
    expect(far.idle.dropped!.map((p) => p.label).sort()).toEqual(dropped.sort());
    for (const p of far.idle.dropped!) expect(p.residual).toBeLessThan(-COPY_BATCH_OUTLIER); // dearer than the line
    const warn = calibrationWarnings({ attention_in_situ: [] }, { copy_batches: far }, 'cuda');
    const small = warn.filter((w) => w.startsWith('copy batches idle: single blocks at quantized sizes "') && w.endsWith('and the profile prices those copies on it'));
    expect(small.length).toBe(1);
    for (const label of dropped) expect(small[0]).toContain(`"${label}"`);
    expect(warn.some((w) => /left out of the fit, more than 20.0% off the others$/.test(w))).toBe(false);
  });

  it('prices copies from adjacent host slots by the adjacent batch against the spread one of its size, idle and under compute, and writes the idle price', () => {
    const withSmall = layoutBatches(layoutOptions(64 * 1024, 512, [33792, 17408, 9216]));
    const adj = withSmall.batches.find((x) => x.label === 'adjacent single 33792-byte blocks')!;
    // each adjacent copy (all but a group's first) 0.375 us less idle, 1.125 us less under compute
    const off = (t: LayoutBatchTimed[], d: number) => t.map((x) => (x.label === adj.label ? { ...x, us: x.us - d * (adj.runs - adj.groups.length) } : x));
    const m = measurements(IDLE, BUSY, withSmall.batches);
    const f = fitLayoutCopyBatches({ ...m, h2d_layout_idle: off(m.h2d_layout_idle, 0.375), h2d_layout: off(m.h2d_layout, 1.125) });
    expect(adj.runs - adj.groups.length).toBe(8 * 23);
    expect(f.adjacent!.bytes).toBe(33792);
    expect(f.adjacent!.idle_us).toBeCloseTo(0.375, 9);
    expect(f.adjacent!.under_compute_us).toBeCloseTo(1.125, 9);
    expect(f.adjacent!.batches.map((b) => [b.condition, b.spread.copies, b.adjacent.copies, b.adjacent.groups])).toEqual([
      ['idle', 192, 192, 8],
      ['under compute', 192, 192, 8],
    ]);
    // the fits themselves are those without the adjacent batch
    const without = fitLayoutCopyBatches(measurements(IDLE, BUSY, withSmall.batches.filter((x) => x !== adj)));
    expect(f.idle.h2d.alpha_us).toBeCloseTo(without.idle.h2d.alpha_us, 12);
    expect(f.under_compute.h2d.alpha_us).toBeCloseTo(without.under_compute.h2d.alpha_us, 12);
    expect(without.adjacent).toBeUndefined();
    const p = loadHardware('h100-pcie5');
    applyCopyBatchFit(p, f, 'test');
    expect(p.links[0].b_to_a!.adjacent_us).toBe(0.375);
    expect(p.links[0].a_to_b!.adjacent_us).toBeUndefined();
    // spread batch: 192 x 2.5 + 192 x 33792 / 25000 + 8 x 5.25 = 781.52 us; adjacent: 184 x 0.375 = 69 us less
    expect(p.sources['links[0].b_to_a.adjacent_us']).toContain('idle 712.52 against 781.52 us, 0.375 us less per adjacent copy');
    validateProfile(JSON.parse(JSON.stringify(p)), 'test');
    // a pool too small for 24 spread blocks a layer (48 blocks: 10 copies a group against the adjacent
    // batch's 24): the groups' cost is taken out of both, so the price comes back exactly
    const smallPool = layoutBatches(layoutOptions(64 * 1024, 48, [33792, 17408, 9216]));
    const adjSmall = smallPool.batches.find((x) => x.label === 'adjacent single 33792-byte blocks')!;
    const spreadSmall = smallPool.batches.find((x) => x.label === 'single 33792-byte blocks' && x.direction === 'h2d')!;
    expect([spreadSmall.runs, adjSmall.runs]).not.toEqual([adjSmall.runs, adjSmall.runs]);
    const ms = measurements(IDLE, BUSY, smallPool.batches);
    const offSmall = (t: LayoutBatchTimed[], d: number) => t.map((x) => (x.label === adjSmall.label ? { ...x, us: x.us - d * (adjSmall.runs - adjSmall.groups.length) } : x));
    const fs = fitLayoutCopyBatches({ ...ms, h2d_layout_idle: offSmall(ms.h2d_layout_idle, 0.375), h2d_layout: offSmall(ms.h2d_layout, 1.125) });
    expect(fs.adjacent!.idle_us).toBeCloseTo(0.375, 9);
    expect(fs.adjacent!.under_compute_us).toBeCloseTo(1.125, 9);
    // a price above the alpha is held at the alpha (an adjacent copy still pays for its bytes)
    const big = loadHardware('h100-pcie5');
    applyCopyBatchFit(big, fitLayoutCopyBatches({ ...m, h2d_layout_idle: off(m.h2d_layout_idle, 4) }), 'test');
    expect(big.links[0].b_to_a!.adjacent_us).toBe(2.5);
    expect(big.sources['links[0].b_to_a.adjacent_us']).toContain('(held at the alpha, 2.5 us)');
    // slower from adjacent slots: no price (clamped to 0)
    const q = loadHardware('h100-pcie5');
    applyCopyBatchFit(q, fitLayoutCopyBatches({ ...m, h2d_layout_idle: off(m.h2d_layout_idle, -0.2) }), 'test');
    expect(q.links[0].b_to_a!.adjacent_us).toBe(0);
    expect(q.sources['links[0].b_to_a.adjacent_us']).toContain('(negative: clamped to 0)');
  });

  it('writes the link, switch costs, gpu.copy_batch_us and copy_under_compute "gemv" into a profile that validates', () => {
    const p = structuredClone(loadHardware('h100-pcie5'));
    const f = fitLayoutCopyBatches(measurements(IDLE, BUSY));
    const li = applyCopyBatchFit(p, f, 'measured by test');
    const L = p.links[li];
    expect(L.a === 'hbm' || L.b === 'hbm').toBe(true);
    const [toHost, toHbm] = L.a === 'hbm' ? (['a_to_b', 'b_to_a'] as const) : (['b_to_a', 'a_to_b'] as const);
    expect(L[toHbm]).toEqual({ alpha_us: 2.5, GBps: 25, alpha_under_compute_us: 3.25, GBps_under_compute: BUSY.GBps_h2d, switch_us: 1.5, switch_under_compute_us: 6.5 });
    expect(L[toHost]).toEqual({ alpha_us: 2.25, GBps: 20, alpha_under_compute_us: 10.05, GBps_under_compute: BUSY.GBps_d2h, switch_us: 1.5, switch_under_compute_us: 6.5 });
    expect(p.gpu.copy_batch_us).toBe(5.25);
    expect(p.gpu.copy_under_compute).toBe('gemv');
    expect(p.sources[`links[${li}].${toHost}.GBps_under_compute`]).toBe("measured by test: the same under-compute fit's D2H beta");
    expect(p.sources['gpu.copy_batch_us']).toMatch(/^measured by test: the per-group term of the idle per-batch copy fit/);
    expect(p.sources[`links[${li}].${toHbm}.alpha_us`]).toMatch(/groups x per_group \+ direction changes x per_change over 25 batches, relative-error least squares \(rms residual 0\.0%, max 0\.0%\); its H2D alpha$/);
    expect(p.sources[`links[${li}].${toHost}.alpha_under_compute_us`]).toMatch(/\(per_group held at the idle fit's\).*its D2H alpha$/);
    expect(() => validateProfile(JSON.parse(JSON.stringify(p)), 'test')).not.toThrow();
  });

  it('leaves GBps_under_compute out where the under-compute beta is not positive, and says so', () => {
    const f = fitLayoutCopyBatches(measurements(IDLE, BUSY));
    f.under_compute.h2d = { ...f.under_compute.h2d, GBps: -3 };
    const p = structuredClone(loadHardware('h100-pcie5'));
    const li = applyCopyBatchFit(p, f, 'by');
    const [toHost, toHbm] = p.links[li].a === 'hbm' ? (['a_to_b', 'b_to_a'] as const) : (['b_to_a', 'a_to_b'] as const);
    expect(p.links[li][toHbm]!.GBps_under_compute).toBeUndefined();
    expect(p.links[li][toHost]!.GBps_under_compute).toBe(BUSY.GBps_d2h);
    expect(p.sources[`links[${li}].${toHbm}.alpha_under_compute_us`]).toMatch(/its beta, -3 GB\/s, is not positive: GBps_under_compute left out, the idle GBps used\)$/);
    expect(p.sources[`links[${li}].${toHbm}.GBps_under_compute`]).toBeUndefined();
  });

  it('holds a per-change cost that fits negative at 0 and refits the rest, so the profile prices its own batches as the fit does', () => {
    // times made with a per-change cost of -2: every mixed batch has 16 groups and 15 changes, so an
    // unconstrained fit recovers -2; held at 0, the per-group cost takes up the mixed batches' share
    const idle = { ...IDLE, change: -2 };
    const f = fitLayoutCopyBatches(measurements(idle, { ...BUSY, change: 0.3 }));
    expect(f.idle.switch_us).toBe(0);
    expect(f.idle.held_at_zero).toEqual(['direction changes']);
    expect(f.under_compute.held_at_zero).toBeUndefined();
    expect(f.under_compute.switch_us).toBeGreaterThan(0);
    // the unconstrained solution would give back the costs exactly; held at 0, the per-group cost falls
    // from 5.25 and every batch is priced by the terms written below (its fit_us)
    expect(f.idle.group_us).toBeLessThan(IDLE.group);
    expect(f.idle.group_us).toBeGreaterThan(0);
    expect(f.idle.max_abs_residual).toBeGreaterThan(1e-3);
    for (const x of f.idle.points) {
      const cost = x.h2d.runs * f.idle.h2d.alpha_us + x.h2d.bytes * f.idle.h2d.us_per_byte + x.d2h.runs * f.idle.d2h.alpha_us + x.d2h.bytes * f.idle.d2h.us_per_byte + x.groups * f.idle.group_us;
      expect(cost).toBeCloseTo(x.fit_us, 6);
    }
    const p = structuredClone(loadHardware('h100-pcie5'));
    const li = applyCopyBatchFit(p, f, 'by');
    expect(p.links[li].b_to_a!.switch_us).toBe(0);
    expect(p.gpu.copy_batch_us).toBe(Math.round(f.idle.group_us * 100) / 100);
    expect(p.sources[`links[${li}].b_to_a.alpha_us`]).toMatch(/with per change held at 0 \(fitted negative\)/);
  });

  it('the batches ordered by direction keep the per-group cost where some single-direction batches are timed slow', () => {
    // a lease's H2D batches of runs of 2-6 blocks timed 12% slow (as on an H200 calibration): the per-copy
    // terms take it up either way; without the ordered batches the per-group and per-change terms,
    // which the alternating batches give only together (16 groups, 15 changes each), take it up too
    const c: Costs = { a_h2d: 2.7, GBps_h2d: 55, a_d2h: 2.25, GBps_d2h: 54.5, group: 4.4, change: 1 };
    const pts = (ordered: boolean) =>
      copyBatchPoints(
        timed(plan.batches.filter((x) => ordered || x.switches !== 1), c).map((x) => (x.direction === 'h2d' && /^runs of [2346]$/.test(x.label) ? { ...x, us: x.us * 1.12 } : x)),
      );
    const withOrdered = fitCopyBatches(pts(true));
    const without = fitCopyBatches(pts(false));
    expect(Math.abs(withOrdered.group_us - c.group) / c.group).toBeLessThan(0.01);
    expect(withOrdered.held_at_zero).toBeUndefined();
    expect(Math.abs(without.group_us - c.group) / c.group).toBeGreaterThan(0.1);
  });

  it('holds a per-group cost that fits negative at 0 (the per-change cost refitted)', () => {
    const f = fitLayoutCopyBatches(measurements({ ...IDLE, group: -3, change: 6 }, BUSY));
    expect(f.idle.group_us).toBe(0);
    expect(f.idle.held_at_zero).toEqual(['groups']);
    expect(f.idle.switch_us).toBeGreaterThan(0);
    // under compute the per-group cost is the idle one: 0
    expect(f.under_compute.group_us).toBe(0);
  });

  it('leaves the per-change term out without batches that change direction', () => {
    const f = fitLayoutCopyBatches(measurements(IDLE, BUSY, plan.batches.filter((x) => x.direction !== 'mixed')));
    expect(f.idle.switch_us).toBeUndefined();
    expect(f.idle.group_us).toBeCloseTo(IDLE.group, 9);
    expect(f.idle.h2d.alpha_us).toBeCloseTo(IDLE.a_h2d, 9);
    const p = structuredClone(loadHardware('h100-pcie5'));
    const li = applyCopyBatchFit(p, f, 'by');
    expect(Object.keys(p.links[li].b_to_a!).sort()).toEqual(['GBps', 'GBps_under_compute', 'alpha_under_compute_us', 'alpha_us']);
  });

  it('counts groups from the plan (8 layers a batch, 16 groups when mixed) for measurements stored without them', () => {
    const [h, d, mx] = (['h2d', 'd2h', 'mixed'] as const).map((dir) => {
      const x = plan.batches.find((b) => b.direction === dir)!;
      return { direction: x.direction, label: x.label, split: x.split, switches: x.switches, us: 1 };
    });
    expect(copyBatchPoints([h, d, mx]).map((x) => x.groups)).toEqual([8, 8, 16]);
    expect(plan.batches.map((x) => x.groups.length)).toEqual(plan.batches.map((x) => (x.direction === 'mixed' ? 16 : 8)));
  });

  it('takes its under-compute terms from the batches beside the GEMV alone where they were measured, and keeps the attention + GEMV fit for comparison', () => {
    // beside attention + GEMV layers the copies' excess is diluted by the attention's share of the layer
    const LAYERS: Costs = { a_h2d: 3.0, GBps_h2d: 24.5, a_d2h: 8.0, GBps_d2h: 21.5, group: 5.25, change: 5.0 };
    const gemv = measurements(IDLE, BUSY);
    const m = { ...measurements(IDLE, LAYERS), h2d_layout_gemv: gemv.h2d_layout, d2h_layout_gemv: gemv.d2h_layout, mixed_layout_gemv: gemv.mixed_layout };
    expect(underComputeBatches(m)).toBe('gemv');
    const f = fitLayoutCopyBatches(m);
    const rel = (got: number, want: number) => expect(Math.abs(got - want) / want).toBeLessThan(1e-9);
    rel(f.under_compute.d2h.alpha_us, BUSY.a_d2h);
    rel(f.under_compute.h2d.GBps, BUSY.GBps_h2d);
    rel(f.under_compute.switch_us!, BUSY.change);
    rel(f.beside_layers!.d2h.alpha_us, LAYERS.a_d2h);
    rel(f.beside_layers!.h2d.alpha_us, LAYERS.a_h2d);
    const p = structuredClone(loadHardware('h100-pcie5'));
    const li = applyCopyBatchFit(p, f, 'measured by test');
    const toHost = p.links[li].a === 'hbm' ? 'a_to_b' : 'b_to_a';
    expect(p.links[li][toHost].alpha_under_compute_us).toBe(10.05);
    expect(p.sources[`links[${li}].${toHost}.alpha_under_compute_us`]).toMatch(/its D2H alpha; for comparison, the same batches beside attention \+ GEMV layers: alpha 8 us, 21\.5 GB\/s$/);
    // measurements without the GEMV-alone batches (stored before they existed): the attention + GEMV fit, no comparison
    const old = measurements(IDLE, LAYERS);
    expect(underComputeBatches(old)).toBe('attention + gemv');
    const g = fitLayoutCopyBatches(old);
    rel(g.under_compute.d2h.alpha_us, LAYERS.a_d2h);
    expect(g.beside_layers).toBeUndefined();
    // one direction missing beside the GEMV: not enough for the fit, so the attention + GEMV batches
    expect(underComputeBatches({ ...old, h2d_layout_gemv: gemv.h2d_layout, d2h_layout_gemv: [] })).toBe('attention + gemv');
    // attention + GEMV batches that cannot be fitted (a batch time that is not positive) leave the
    // comparison out, and the fit beside the GEMV stands
    const flat = { ...m, d2h_layout: m.d2h_layout.map((x, i) => ({ ...x, us: i === 0 ? 0 : x.us })) };
    expect(() => fitLayoutCopyBatches({ ...flat, h2d_layout_gemv: undefined, d2h_layout_gemv: undefined, mixed_layout_gemv: undefined })).toThrow(/under compute/);
    const h = fitLayoutCopyBatches(flat);
    rel(h.under_compute.d2h.alpha_us, BUSY.a_d2h);
    expect(h.beside_layers).toBeUndefined();
  });
});

describe('per-batch copy fit, a batch timed through a disturbance', () => {
  const pts = copyBatchPoints(timed(plan.batches, BUSY));
  const rel = (got: number, want: number) => expect(Math.abs(got - want) / want).toBeLessThan(1e-9);
  // (as seen on an H100 lease: a D2H batch beside GEMVs at 2.2x its fit, every other batch within 6%)
  const slow = pts.findIndex((p) => p.label === 'd2h singles + runs');

  it('is left out, and the costs of the others come back exactly', () => {
    expect(slow).toBeGreaterThan(0);
    const bad = pts.map((p, i) => (i === slow ? { ...p, us: p.us * 2.2 } : p));
    const f = fitCopyBatches(bad, BUSY.group);
    rel(f.h2d.alpha_us, BUSY.a_h2d);
    rel(f.h2d.GBps, BUSY.GBps_h2d);
    rel(f.d2h.alpha_us, BUSY.a_d2h);
    rel(f.d2h.GBps, BUSY.GBps_d2h);
    rel(f.switch_us!, BUSY.change);
    expect(f.points.length).toBe(pts.length - 1);
    expect(f.dropped!.map((p) => p.label)).toEqual(['d2h singles + runs']);
    // its residual against the final fit: 1 / 2.2 - 1
    expect(f.dropped![0].residual).toBeCloseTo(1 / 2.2 - 1, 9);
    expect(f.max_abs_residual).toBeLessThan(1e-9);
    // 19% slow, it stays in (within COPY_BATCH_OUTLIER of the others' fit) and pulls the D2H terms
    const all = fitCopyBatches(pts.map((p, i) => (i === slow ? { ...p, us: p.us * 1.19 } : p)), BUSY.group);
    expect(all.dropped).toBeUndefined();
    expect(Math.abs(all.d2h.GBps / BUSY.GBps_d2h - 1)).toBeGreaterThan(0.005);
  });

  it('a profile source names the batch left out', () => {
    const bad = pts.map((p, i) => (i === slow ? { ...p, us: p.us * 2.2 } : p));
    const idle = fitCopyBatches(copyBatchPoints(timed(plan.batches, IDLE)));
    const p = structuredClone(loadHardware('h100-pcie5'));
    const li = applyCopyBatchFit(p, { idle, under_compute: fitCopyBatches(bad, idle.group_us) }, 'test');
    const toHbm = p.links[li].a === p.tiers[0].name ? 'b_to_a' : 'a_to_b';
    expect(p.sources[`links[${li}].${toHbm}.alpha_under_compute_us`]).toMatch(/left out as more than 20\.0% off the fit of the others: "d2h singles \+ runs" [0-9.]+ us against [0-9.]+/);
    expect(p.sources[`links[${li}].${toHbm}.alpha_us`]).not.toMatch(/left out/);
  });

  it('leaves out at most a quarter of the batches', () => {
    // every other batch twice as slow: no consistent majority to keep
    const half = pts.map((p, i) => (i % 2 ? { ...p, us: p.us * 2 } : p));
    const f = fitCopyBatches(half, BUSY.group);
    expect(f.dropped!.length).toBeLessThanOrEqual(Math.floor(pts.length / 4));
    expect(f.points.length + f.dropped!.length).toBe(pts.length);
  });
});

describe('per-batch copy fit, inputs it cannot fit', () => {
  const pts = copyBatchPoints(timed(plan.batches, IDLE));
  it('too few batches for its terms', () => {
    expect(() => fitCopyBatches([...pts.slice(0, 2), pts[pts.length - 1]])).toThrow(/has 6 terms \(H2D copies, H2D bytes, D2H copies, D2H bytes, groups, direction changes\) and needs at least as many batches \(got 3\)/);
  });
  it('no batch in one direction', () => {
    const h2dOnly = pts.filter((x) => x.d2h.runs === 0);
    expect(() => fitCopyBatches(h2dOnly)).toThrow(/no batch has any D2H copies: its term cannot be fitted/);
  });
  it('terms the batches do not separate (every copy one block: copies and bytes in proportion)', () => {
    const single: CopyBatchPoint[] = [1, 2, 3, 4, 5, 6, 7].map((k) => ({ label: `b${k}`, h2d: { runs: 10 * k, bytes: 10 * k * 4096 }, d2h: { runs: 3 + k, bytes: (3 + k) * 4096 * (k % 3 + 1) }, groups: 8 + (k % 2) * 8, switches: (k % 2) * 15 + (k === 3 ? 1 : 0), us: 100 + k }));
    expect(() => fitCopyBatches(single)).toThrow(/do not separate the H2D bytes term from the others/);
  });
  it('a time that does not grow with the bytes', () => {
    const shrinking = pts.map((x) => ({ ...x, us: 1e6 / (x.h2d.bytes + x.d2h.bytes) }));
    expect(() => fitCopyBatches(shrinking)).toThrow(/non-positive time per (H2D|D2H) byte .*measurements too noisy/);
  });
  it('a batch time that is not a positive number, and a condition named in the error', () => {
    expect(() => fitCopyBatches([{ ...pts[0], us: 0 }, ...pts.slice(1)])).toThrow(/copy batch "h2d runs of 1": time 0 us is not a positive number/);
    const m = measurements(IDLE, BUSY);
    expect(() => fitLayoutCopyBatches({ ...m, d2h_layout: [], mixed_layout: [] })).toThrow(/^layout batches under compute: no batch has any D2H copies/);
  });
});

describe('per-batch copy fit of a stored H200 calibration (validate run 350590f, Llama-3-8B)', () => {
  it('refits to idle 2.64 / 2.24 us per H2D / D2H copy, 5.25 us per group, 0.13 per change', () => {
    const side = JSON.parse(readFileSync('lab/validate/run-350590f-h200-2026-11-26/profiles/llama-3-8b.fit.json', 'utf8'));
    const f = fitLayoutCopyBatches(side.measurements);
    const r2 = (x: number) => Math.round(x * 100) / 100;
    expect([r2(f.idle.h2d.alpha_us), r2(f.idle.d2h.alpha_us), r2(f.idle.group_us), r2(f.idle.switch_us!)]).toEqual([2.64, 2.24, 5.25, 0.13]);
    expect(f.idle.points.length).toBe(side.measurements.h2d_layout_idle.length + side.measurements.d2h_layout_idle.length + side.measurements.mixed_layout_idle.length);
  });
});

describe('the fallback when the per-batch fit fails: each direction\'s own layout fit', () => {
  it('sets alpha, beta and the median change costs, and neither gpu.copy_batch_us nor copy_under_compute', () => {
    // no per-group cost: each direction's copies x alpha + bytes / beta is exact, and every mixed batch
    // pays exactly its changes x the change cost beyond its copies
    const m = measurements({ ...IDLE, group: 0 }, { ...BUSY, group: 0 });
    const lp = (xs: LayoutBatchTimed[]) => xs.map((x) => ({ ...x, runs: x.split.h2d.runs + x.split.d2h.runs, bytes: x.split.h2d.bytes + x.split.d2h.bytes, lengths: {}, enqueue_us: 0, gate_us: 1, compute_cover: 0, compute_extra_us: 0, groups: x.groups! }));
    const layout = { h2d_layout: fitLayout(lp(m.h2d_layout)), d2h_layout: fitLayout(lp(m.d2h_layout)), h2d_layout_idle: fitLayout(lp(m.h2d_layout_idle)), d2h_layout_idle: fitLayout(lp(m.d2h_layout_idle)) };
    const iso = layout.h2d_layout_idle;
    const fits = { ...layout, direction_switch: fitDirectionSwitch(lp(m.mixed_layout), lp(m.mixed_layout_idle), layout), h2d: iso, d2h: iso, h2d_in_situ: iso, d2h_in_situ: iso };
    // a base profile that prices copies per batch (a calibrated one): the fallback drops that pricing
    const p = structuredClone(loadHardware('h100-pcie5'));
    p.gpu.copy_batch_us = 5.25;
    p.gpu.copy_under_compute = 'gemv';
    p.sources['gpu.copy_batch_us'] = 'x';
    p.sources['gpu.copy_under_compute'] = 'x';
    const li = p.links.findIndex((l) => l.a === 'hbm' || l.b === 'hbm');
    p.links[li].a_to_b.GBps_under_compute = 50;
    p.sources[`links[${li}].a_to_b.GBps_under_compute`] = 'x';
    applyPerDirectionLayoutFits(p, li, fits, 'by', { block_bytes: 65536, context_tokens: 8192 });
    expect(p.sources[`links[${li}].a_to_b.GBps_under_compute`]).toBeUndefined();
    const [toHost, toHbm] = p.links[li].a === 'hbm' ? (['a_to_b', 'b_to_a'] as const) : (['b_to_a', 'a_to_b'] as const);
    expect(p.links[li][toHbm]).toEqual({ alpha_us: 2.5, GBps: 25, alpha_under_compute_us: 3.25, switch_us: 1.5, switch_under_compute_us: 6.5 });
    expect(p.links[li][toHost]).toEqual({ alpha_us: 2.25, GBps: 20, alpha_under_compute_us: 10.05, switch_us: 1.5, switch_under_compute_us: 6.5 });
    expect(p.gpu.copy_batch_us).toBeUndefined();
    expect(p.gpu.copy_under_compute).toBeUndefined();
    expect(p.sources['gpu.copy_batch_us']).toBeUndefined();
    expect(p.sources['gpu.copy_under_compute']).toBeUndefined();
    expect(p.sources[`links[${li}].${toHbm}.alpha_us`]).toMatch(/^by: H2D pinned copies in the HIL executor's layout \(65536-byte blocks, .*time = copies x alpha \+ bytes \/ beta over 11 batches/);
  });
});
