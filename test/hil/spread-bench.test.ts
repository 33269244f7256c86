// Single-block copies against the spread of their host slots: the slot draws, the doublings each point
// carries (the simulator's count for the drawn slots), the slope fit per direction and the profile field
// it writes; the bench itself on the host backend.
import { describe, expect, it } from 'vitest';
import { benchSpread, drawSlots, fitSpread, SPREAD_SLOTS, type SpreadPoint } from '../../hil/bench/spread-bench.js';
import { applySpreadFit } from '../../hil/calibrate/calibrate.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { spreadDoublings } from '../../sim/host-spread.js';
import { backendAvailability } from './availability.js';

const host = backendAvailability('host');
const pt = (condition: SpreadPoint['condition'], direction: SpreadPoint['direction'], slots: number, doublings: number, us: number): SpreadPoint => ({ condition, direction, slots, copies: 25, doublings, us, dropped: 0 });

describe('spread of host slots: draws and fit', () => {
  it('draws distinct ascending slots below M, the same for the same seed', () => {
    const a = drawSlots(25, 48, 7);
    expect(a).toHaveLength(25);
    expect(new Set(a).size).toBe(25);
    expect(a.every((x, i) => x >= 0 && x < 48 && (i === 0 || x > a[i - 1]))).toBe(true);
    expect(drawSlots(25, 48, 7)).toEqual(a);
    expect(drawSlots(25, 48, 8)).not.toEqual(a);
    expect(drawSlots(4, 4, 1)).toEqual([0, 1, 2, 3]);
    expect(() => drawSlots(5, 4, 1)).toThrow(/cannot draw 5 distinct slots of 4/);
  });

  it('fits each direction\'s slope per condition from its fewest-doublings point, spread_us their mean', () => {
    // h2d beside the GEMV: +0.2 us at 2 doublings, +0.4 at 4 -> 0.1; idle: +0.3 at 2, +0.6 at 4 -> 0.15; mean 0.125
    // d2h: beside 0.0 and 0.0 -> 0; idle +0.1 at 1 doubling only (x = 1) -> 0.1; mean 0.05
    const f = fitSpread([
      pt('gemv', 'h2d', 48, 0, 6), pt('gemv', 'h2d', 512, 2, 6.2), pt('gemv', 'h2d', 2048, 4, 6.4),
      pt('idle', 'h2d', 48, 0.5, 4), pt('idle', 'h2d', 512, 2.5, 4.3), pt('idle', 'h2d', 2048, 4.5, 4.6),
      pt('gemv', 'd2h', 48, 0, 6.5), pt('gemv', 'd2h', 512, 3, 6.5),
      pt('idle', 'd2h', 48, 0, 3.7), pt('idle', 'd2h', 512, 1, 3.8),
    ]);
    expect(f.h2d.gemv_us).toBeCloseTo(0.1, 12);
    expect(f.h2d.idle_us).toBeCloseTo(0.15, 12);
    expect(f.h2d.us).toBeCloseTo(0.125, 12);
    expect(f.d2h.gemv_us).toBeCloseTo(0, 12);
    expect(f.d2h.us).toBeCloseTo(0.05, 12);
    // least squares over two further points: x = 1, 3 and y = 0.1, 0.5 -> (0.1 + 1.5) / 10 = 0.16
    const g = fitSpread([pt('gemv', 'h2d', 48, 0, 5), pt('gemv', 'h2d', 512, 1, 5.1), pt('gemv', 'h2d', 2048, 3, 5.5), pt('idle', 'h2d', 48, 0, 4), pt('idle', 'h2d', 512, 1, 4), pt('gemv', 'd2h', 48, 0, 1), pt('gemv', 'd2h', 512, 1, 0.5), pt('idle', 'd2h', 48, 0, 1), pt('idle', 'd2h', 512, 1, 0.8)]);
    expect(g.h2d.gemv_us).toBeCloseTo(0.16, 12);
    // a negative mean is clamped to 0
    expect(g.d2h.us).toBe(0);
  });

  it('refuses a direction or condition without two timed points of distinct doublings', () => {
    expect(() => fitSpread([pt('gemv', 'h2d', 48, 0, 6), pt('gemv', 'h2d', 512, 2, Number.NaN), pt('idle', 'h2d', 48, 0, 4), pt('idle', 'h2d', 512, 2, 4.2)])).toThrow(/h2d gemv has fewer than two timed points/);
  });

  it('writes spread_us into the hbm link\'s two directions with its source; the profile validates', () => {
    const p = loadHardware('h100-pcie5');
    const pts = [pt('gemv', 'h2d', 48, 0, 6), pt('gemv', 'h2d', 512, 2, 6.2)];
    applySpreadFit(p, { h2d: { gemv_us: 0.1, idle_us: 0.15, us: 0.12549 }, d2h: { gemv_us: 0, idle_us: -0.1, us: 0 } }, pts, 'measured here');
    const link = p.links.find((k) => k.a === 'hbm' || k.b === 'hbm')!;
    const [intoHbm, outOfHbm] = link.a === 'hbm' ? [link.b_to_a, link.a_to_b] : [link.a_to_b, link.b_to_a];
    expect(intoHbm.spread_us).toBe(0.125);
    expect(outOfHbm.spread_us).toBe(0);
    const key = Object.keys(p.sources).find((k) => k.endsWith('.spread_us') && p.sources[k].includes('beside GEMV 6.2 us at 2 doublings'));
    expect(key).toBeDefined();
    expect(validateProfile(p, 'x.json').links[p.links.indexOf(link)]).toEqual(link);
  });
});

describe.skipIf(!host.available)(`spread bench, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('times every condition, direction and span, each point carrying the doublings of its drawn slots', async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('host');
    try {
      const pts = await benchSpread(b, { geometry: { kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 }, gemvRows: 256, gemvCols: 128, trials: 1, layers: 3, copies: 5, slots: [8, 64], seed: 11 });
      expect(pts.map((x) => `${x.condition} ${x.direction} ${x.slots}`)).toEqual(['gemv d2h 8', 'gemv d2h 64', 'gemv h2d 8', 'gemv h2d 64', 'idle d2h 8', 'idle d2h 64', 'idle h2d 8', 'idle h2d 64']);
      for (const x of pts) {
        expect(x.copies).toBe(5);
        expect(x.us > 0 || x.dropped === 1).toBe(true);
      }
      // the doublings are the simulator's count over the slots the bench drew (the same draws for a span in every case)
      const d8 = pts.filter((x) => x.slots === 8).map((x) => x.doublings);
      const d64 = pts.filter((x) => x.slots === 64).map((x) => x.doublings);
      expect(new Set(d8).size).toBe(1);
      expect(new Set(d64).size).toBe(1);
      const expected = (m: number, k: number) => [0, 1, 2].reduce((a, l) => a + spreadDoublings(drawSlots(5, m, 11 + 7919 * l + 104729 * k)), 0) / 15;
      expect(d8[0]).toBeCloseTo(expected(8, 0), 12);
      expect(d64[0]).toBeCloseTo(expected(64, 1), 12);
      expect(d64[0]).toBeGreaterThan(d8[0]);
      expect(SPREAD_SLOTS).toEqual([48, 512, 2048]);
    } finally {
      b.close();
    }
  });
});
