// A large copy's pace in the calibration (calibrate.ts applyBulkPace): the hbm link takes bulk_GBps
// per direction from one large copy's time, and bulk_from_bytes from the longest run of the layout
// batches its alpha and GBps were fitted to; the sources say both; the profile stays valid.
import { describe, expect, it } from 'vitest';
import { layoutBatches, layoutOptions } from '../../hil/bench/layout-batches.js';
import { applyBulkPace } from '../../hil/calibrate/calibrate.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';

// Llama-3-8B, 16-token blocks: 64 KiB blocks, 512 blocks per layer (an 8k context)
const plan = layoutBatches(layoutOptions(64 * 1024, 512));

describe("the calibration's large-copy pace", () => {
  it('bulk_GBps from one 256 MiB copy per direction, from the longest layout run (16 blocks = 1 MiB)', () => {
    const p = structuredClone(loadHardware('h100-pcie5'));
    const pcie = p.links.findIndex((l) => l.a === 'hbm' || l.b === 'hbm');
    // H2D 268,435,456 B in 4,880.64 us = 55.0 GB/s; D2H in 4,971.03 us = 54.0 GB/s
    applyBulkPace(p, pcie, { bytes: 256 << 20, h2d_us: 4880.64, d2h_us: 4971.03 }, plan.batches, 64 * 1024, 'measured by test');
    const L = p.links[pcie];
    const [toHbm, toHost] = L.a === 'hbm' ? (['b_to_a', 'a_to_b'] as const) : (['a_to_b', 'b_to_a'] as const);
    expect(Math.max(...plan.batches.flatMap((x) => Object.keys(x.lengths).map(Number)))).toBe(16);
    expect(L[toHbm]).toMatchObject({ bulk_GBps: 55, bulk_from_bytes: 16 * 65536 });
    expect(L[toHost]).toMatchObject({ bulk_GBps: 54, bulk_from_bytes: 16 * 65536 });
    expect(p.sources[`links[${pcie}].${toHbm}.bulk_GBps`]).toBe('measured by test: one pinned H2D copy of 268435456 bytes (two back to back a trial on the memory stream, median), 4880.64 us');
    expect(p.sources[`links[${pcie}].${toHost}.bulk_from_bytes`]).toMatch(/\(16 blocks of 65536 bytes\)$/);
    expect(validateProfile(JSON.parse(JSON.stringify(p)), 'x').links[pcie][toHbm].bulk_GBps).toBe(55);
  });

  it('no batches or no time: nothing written', () => {
    const p = structuredClone(loadHardware('h100-pcie5'));
    const pcie = p.links.findIndex((l) => l.a === 'hbm' || l.b === 'hbm');
    applyBulkPace(p, pcie, { bytes: 256 << 20, h2d_us: 4880.64, d2h_us: 4971.03 }, [], 65536, 'x');
    applyBulkPace(p, pcie, { bytes: 256 << 20, h2d_us: 0, d2h_us: Number.NaN }, plan.batches, 65536, 'x');
    expect(p.links[pcie].a_to_b.bulk_GBps).toBeUndefined();
    expect(p.links[pcie].b_to_a.bulk_GBps).toBeUndefined();
  });
});
