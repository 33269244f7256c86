import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { requestAlphaUs, requestTimeUs } from '../../sim/request-time.js';
import type { MoveBatch } from '../../sim/executor.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

// request_us: 4 KiB requests 20000 us each, 12 KiB 40000 us; from 16 KiB on, alpha + bytes / GBps
const CURVE: [number, number][] = [
  [4096, 20000],
  [12288, 40000],
  [16384, 50000],
];

describe('file requests timed by size (request_us)', () => {
  it('interpolates between the points, holds the first below it', () => {
    expect(requestTimeUs(CURVE, 4096)).toBe(20000);
    expect(requestTimeUs(CURVE, 1024)).toBe(20000);
    expect(requestTimeUs(CURVE, 8192)).toBe(30000);
    expect(requestTimeUs(CURVE, 12288)).toBe(40000);
    expect(requestTimeUs(CURVE, 14336)).toBe(45000);
  });

  it('charges each request its time less its bytes at the flow rate, requests rounded up to 4 KiB', () => {
    // 2 requests of 6000 B: 8 KiB each -> 30000 us, of which 6000 B at 0.5 B/us = 12000 us is the flow's
    expect(requestAlphaUs(CURVE, 7, 0.5, 12000, 2)).toBe(2 * 18000);
    // bytes dominate: never a negative alpha
    expect(requestAlphaUs(CURVE, 7, 0.01, 12000, 2)).toBe(0);
    // at or above the last point: the direction's alpha per request
    expect(requestAlphaUs(CURVE, 7, 0.5, 2 * 16384, 2)).toBe(14);
    expect(requestAlphaUs(CURVE, 7, 0.5, 2 * 16000, 2)).toBe(14);
  });

  const read = (bytes: number, runs: number): MoveBatch => ({ layer: 1, fromTier: 2, toTier: 1, fromBits: 2, toBits: 2, blocks: Array.from({ length: runs }, (_, i) => 2 * i), bytesFrom: bytes, bytesTo: bytes, reason: 'promote', runs });
  /** when an NVMe -> DRAM move of `bytes` in `runs` requests ends on an idle tiny machine (NVMe 0.5 B/us, alpha 0) */
  function ends(curve: [number, number][] | undefined, bytes: number, runs: number, batchUs?: number): number {
    const hw = tinyHardware();
    if (curve) hw.links[1].b_to_a.request_us = curve;
    if (batchUs !== undefined) hw.links[1].b_to_a.batch_us = batchUs;
    const ex = new SimExecutor(validateProfile(hw, 'tiny.json'), tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    const done = ex.move(read(bytes, runs));
    ex.finish();
    return done.at;
  }

  it('a storage read of small requests takes their measured time; large ones and other profiles as before', () => {
    // 3 requests of 6000 B (8 KiB on the device): 3 x 30000 us
    expect(ends(CURVE, 18000, 3)).toBe(90000);
    // the same without request_us: the bytes at 0.5 B/us only (alpha 0)
    expect(ends(undefined, 18000, 3)).toBe(36000);
    // requests of the last point's size or more: alpha + bytes / GBps
    expect(ends(CURVE, 2 * 20000, 2)).toBe(80000);
    // the write direction has no request_us: DRAM -> NVMe as before
    const hw = tinyHardware();
    hw.links[1].b_to_a.request_us = CURVE;
    const ex = new SimExecutor(validateProfile(hw, 'tiny.json'), tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    const w = ex.move({ ...read(18000, 3), fromTier: 1, toTier: 2, reason: 'demote' });
    ex.finish();
    expect(w.at).toBe(36000);
  });

  it("a read batch pays the direction's batch_us once, whatever its requests", () => {
    // 3 requests of 6000 B timed by size (3 x 30000 us) plus one batch of 700 us
    expect(ends(CURVE, 18000, 3, 700)).toBe(90700);
    // one request alone: 30000 + 700
    expect(ends(CURVE, 6000, 1, 700)).toBe(30700);
    // without request_us: the bytes at 0.5 B/us plus the batch
    expect(ends(undefined, 18000, 3, 700)).toBe(36700);
    expect(ends(undefined, 18000, 3, 0)).toBe(36000);
    // the write direction has none: DRAM -> NVMe as before
    const hw = tinyHardware();
    hw.links[1].b_to_a.batch_us = 700;
    const ex = new SimExecutor(validateProfile(hw, 'tiny.json'), tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    const w = ex.move({ ...read(18000, 3), fromTier: 1, toTier: 2, reason: 'demote' });
    ex.finish();
    expect(w.at).toBe(36000);
    // a copy into HBM on a link with batch_us (on the memory stream, not a storage move): as before,
    // also where copies beside GEMVs keep their link alpha (copy_under_compute 'gemv')
    const into = (batchUs?: number) => {
      const h = tinyHardware();
      h.gpu.copy_under_compute = 'gemv';
      if (batchUs !== undefined) h.links[0].b_to_a.batch_us = batchUs;
      const e = new SimExecutor(validateProfile(h, 'tiny.json'), tinyModel, { traceSteps: 100 });
      e.beginStep(0);
      const d = e.move({ ...read(4000, 2), fromTier: 1, toTier: 0, reason: 'fetch' });
      e.finish();
      return d.at;
    };
    expect(into(700)).toBe(into());
    // NVMe -> HBM goes through DRAM: the storage hop of one link pays it, once
    const h = tinyHardware();
    h.links[1].b_to_a.batch_us = 700;
    const e = new SimExecutor(validateProfile(h, 'tiny.json'), tinyModel, { traceSteps: 100 });
    e.beginStep(0);
    const d = e.move({ ...read(18000, 3), toTier: 0, reason: 'fetch' });
    e.finish();
    const h0 = tinyHardware();
    const e0 = new SimExecutor(validateProfile(h0, 'tiny.json'), tinyModel, { traceSteps: 100 });
    e0.beginStep(0);
    const d0 = e0.move({ ...read(18000, 3), toTier: 0, reason: 'fetch' });
    e0.finish();
    expect(d.at - d0.at).toBe(700);
    // validated: a number >= 0
    for (const bad of [-1, 'x']) {
      const h = tinyHardware() as unknown as { links: { b_to_a: Record<string, unknown> }[] };
      h.links[1].b_to_a.batch_us = bad;
      expect(() => validateProfile(h, 'x.json'), JSON.stringify(bad)).toThrow(/links\[1\]\.b_to_a\.batch_us/);
    }
  });

  it('the profile field is validated, naming the field and the form', () => {
    for (const bad of [[], [[4096, 1], [4096, 2]], [[4096, -1]], [[4.5, 1]], 'x', [[4096]]]) {
      const hw = tinyHardware() as unknown as { links: { b_to_a: Record<string, unknown> }[] };
      hw.links[1].b_to_a.request_us = bad;
      expect(() => validateProfile(hw, 'x.json'), JSON.stringify(bad)).toThrow(/links\[1\]\.b_to_a\.request_us.*\[request bytes, us\] pairs ascending by bytes/);
    }
  });
});
