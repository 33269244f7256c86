import { describe, expect, it } from 'vitest';
import { defaultErrorTable, modelErrorTable, expectedNormalRange, modelRelError, OUTLIER_RANGE_FACTOR, TABLE_BITS, TABLE_GROUPS } from '../../sim/quality/error-table.js';

describe('quantization error table', () => {
  it('expected range of n normals matches Tippett\'s d2 constants', () => {
    expect(expectedNormalRange(2)).toBeCloseTo(2 / Math.sqrt(Math.PI), 4); // 1.1284
    expect(expectedNormalRange(10)).toBeCloseTo(3.078, 2);
    expect(expectedNormalRange(25)).toBeCloseTo(3.931, 2);
  });

  it('rel error = range / ((2^b - 1) sqrt 12), outliers widen the range without rotation', () => {
    const r128 = expectedNormalRange(128);
    expect(modelRelError(4, 128, true)).toBeCloseTo(r128 / (15 * Math.sqrt(12)), 12);
    expect(modelRelError(4, 128, false)).toBeCloseTo((OUTLIER_RANGE_FACTOR * r128) / (15 * Math.sqrt(12)), 12);
    expect(modelRelError(16, 128, false)).toBe(0);
  });

  it('is complete over (bits, group, rotation), monotone, and 0 at FP16', () => {
    const t = defaultErrorTable();
    expect(t.entries.length).toBe(TABLE_BITS.length * TABLE_GROUPS.length * 2);
    for (const g of TABLE_GROUPS) {
      for (const rot of [false, true]) {
        const e = TABLE_BITS.map((b) => t.relError(b, g, rot));
        for (let i = 1; i < e.length; i++) expect(e[i]).toBeGreaterThan(e[i - 1]); // fewer bits, more error
        expect(t.relError(16, g, rot)).toBe(0);
      }
    }
    expect(t.relError(2, 32, false)).toBeLessThan(t.relError(2, 128, false)); // smaller groups, smaller range
    expect(t.relError(2, 128, true)).toBeLessThan(t.relError(2, 128, false)); // rotation helps
    for (const e of t.entries) expect(e.source).toMatch(e.bits === 3 ? /^measured: hil\/quality.ts on the host backend/ : /^measured: perf\/hil-bench.ts quality section on NVIDIA H100/);
    expect(() => t.relError(4, 100, false)).toThrow(/no entry/);
  });

  it('measured entries replace the model\'s', () => {
    const t = defaultErrorTable().withMeasured([{ bits: 4, group: 128, rotation: true, rel_error: 0.05, source: 'hil' }]);
    expect(t.relError(4, 128, true)).toBe(0.05);
    expect(t.relError(4, 128, false)).toBe(defaultErrorTable().relError(4, 128, false));
  });
});

describe('measured entries (H100, sim/quality/measured-quality-h100.json)', () => {
  it('replace the model everywhere: 18 H100 entries (8/4/2 bits) and 6 host entries (3 bits)', async () => {
    const { measuredEntries } = await import('../../sim/quality/measured-table.js');
    const m = measuredEntries();
    expect(m.length).toBe(24);
    expect(m.filter((e) => e.bits === 3).length).toBe(6);
    const t = defaultErrorTable();
    for (const e of m) expect(t.relError(e.bits, e.group, e.rotation)).toBe(e.rel_error);
    // 3 bits sits between 4 and 2 at every (group, rotation)
    for (const g of [32, 64, 128]) {
      for (const rot of [false, true]) {
        expect(t.relError(3, g, rot)).toBeGreaterThan(t.relError(4, g, rot));
        expect(t.relError(3, g, rot)).toBeLessThan(t.relError(2, g, rot));
      }
    }
    expect(t.relError(3, 128, false)).toBeCloseTo(0.558, 3); // sim/quality/measured-quality-int3-host.json
  });

  it('the model agrees with the measurement within a factor of 2 without rotation', async () => {
    const { measuredEntries } = await import('../../sim/quality/measured-table.js');
    const model = modelErrorTable();
    for (const e of (await measuredEntries()).filter((x) => !x.rotation)) {
      const ratio = model.relError(e.bits, e.group, false) / e.rel_error;
      expect(ratio).toBeGreaterThan(0.5);
      expect(ratio).toBeLessThan(2);
    }
  });
});
