import { describe, expect, it } from 'vitest';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

// Tiny machine: PCIe 1 B/us both ways, alpha 10 us per copy; into HBM a copy's bytes beyond the first
// 100 move at 2 B/us (bulk_GBps 0.002).
function machine(o: { bulk?: boolean; dramReadGBps?: number } = {}) {
  const hw = tinyHardware();
  if (o.bulk !== false) Object.assign(hw.links[0].b_to_a, { bulk_GBps: 0.002, bulk_from_bytes: 100 });
  if (o.dramReadGBps !== undefined) hw.tiers[1].read_GBps = o.dramReadGBps;
  return new SimExecutor(validateProfile(hw, 'tiny'), tinyModel, { traceSteps: 100 });
}
const promote = (bytes: number, runs: number) => ({ layer: 1, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: Array.from({ length: runs }, (_, i) => i), bytesFrom: bytes, bytesTo: bytes, reason: 'promote' as const, runs });
const demote = { layer: 1, fromTier: 0, toTier: 1, fromBits: 16, toBits: 16, blocks: [4], bytesFrom: 300, bytesTo: 300, reason: 'demote' as const, runs: 1 };

describe("a large copy's pace (bulk_GBps beyond bulk_from_bytes)", () => {
  it("each copy's bytes beyond bulk_from_bytes move at bulk_GBps; the link counts every byte", () => {
    const ex = machine();
    ex.beginStep(0);
    ex.move(promote(300, 1)); // 10 + 100 / 1 + 200 / 2 = 210
    ex.move(promote(600, 2)); // 2 x (10 + 100 + 100) = 420
    ex.move(promote(128, 2)); // 64 a copy, under bulk_from_bytes: 2 x 10 + 128 = 148
    ex.move(demote); // out of HBM: no bulk pace that way, 10 + 300 = 310
    const bytes = ex.finish();
    expect(ex.memory.busyUs).toBeCloseTo(210 + 420 + 148 + 310, 9);
    expect(bytes['pcie:dram->hbm']).toBe(300 + 600 + 128);
    expect(bytes['pcie:hbm->dram']).toBe(300);
  });

  it('beside GEMVs the same work is priced at the under-compute pace', () => {
    // work of a 300 B copy: 100 + 200 / 2 = 200 B of capacity; idle 10 + 200 / 1 = 210 us; beside a GEMV
    // (alpha 25 us, 0.5 B/us) 25 + 200 / 0.5 = 425 us, the whole copy under a long GEMV
    const hw = tinyHardware();
    Object.assign(hw.links[0].b_to_a, { bulk_GBps: 0.002, bulk_from_bytes: 100, alpha_under_compute_us: 25, GBps_under_compute: 0.0005 });
    hw.gpu.copy_under_compute = 'gemv';
    const ex = new SimExecutor(validateProfile(hw, 'tiny'), tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    ex.compute.enqueueTimed('linear', 'kernel', 5000, []);
    ex.move(promote(300, 1));
    ex.finish();
    expect(ex.memory.busyUs).toBeCloseTo(425, 9);
  });

  it('without the fields, or where a tier port is slower than the bulk pace, copies move at GBps', () => {
    const plain = machine({ bulk: false });
    plain.beginStep(0);
    plain.move(promote(300, 1));
    plain.finish();
    expect(plain.memory.busyUs).toBe(310);
    // DRAM reads at 1 B/us, as the link does: the bulk pace of 2 B/us is out of the route's reach
    const narrow = machine({ dramReadGBps: 0.001 });
    narrow.beginStep(0);
    narrow.move(promote(300, 1));
    narrow.finish();
    expect(narrow.memory.busyUs).toBe(310);
  });

  it('the profile fields are validated and go together', () => {
    const hw = tinyHardware();
    const d = hw.links[0].b_to_a as unknown as Record<string, unknown>;
    d.bulk_GBps = 60;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/links\[0\]\.b_to_a: bulk_GBps and bulk_from_bytes go together \(got only bulk_GBps\)/);
    d.bulk_from_bytes = -1;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/links\[0\]\.b_to_a\.bulk_from_bytes must be an integer >= 0/);
    d.bulk_from_bytes = 1 << 20;
    d.bulk_GBps = 0;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/links\[0\]\.b_to_a\.bulk_GBps must be a number > 0/);
    d.bulk_GBps = 55;
    expect(validateProfile(hw, 'x.json').links[0].b_to_a).toMatchObject({ bulk_GBps: 55, bulk_from_bytes: 1 << 20 });
  });
});
