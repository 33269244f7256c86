import { describe, expect, it } from 'vitest';
import type { MoveBatch } from '../../sim/executor.js';
import { BusyClock } from '../../sim/busy-clock.js';
import { Engine } from '../../sim/engine.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { Stream, type TraceSpan } from '../../sim/stream.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';

// Tiny machine (test/helpers/tiny.ts): PCIe 1 B/us with alpha 10 us per copy; a layer is attention
// over 64 B (64 us) and projections over 1000 B (1000 us), 1064 us in all.
function machine(h2d?: number, d2h?: number) {
  const hw = tinyHardware();
  if (h2d !== undefined) hw.gpu.kernel_slowdown_under_h2d = h2d;
  if (d2h !== undefined) hw.gpu.kernel_slowdown_under_d2h = d2h;
  return new SimExecutor(validateProfile(hw, 'tiny.json'), tinyModel, { traceSteps: 100 });
}
const work = tinyLayerWork(0);
// 2 runs of 64 B: 2 x 10 + 128 = 148 us on the memory stream, from 0
const fetch: MoveBatch = { layer: 1, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [3, 7], bytesFrom: 128, bytesTo: 128, reason: 'promote', runs: 2 };
const evict: MoveBatch = { ...fetch, fromTier: 0, toTier: 1, reason: 'demote' };

function runStep(ex: SimExecutor, moves: MoveBatch[]) {
  ex.beginStep(0);
  for (const m of moves) ex.move(m);
  ex.layer({ ...work }, []);
  return ex.endStep();
}

describe('kernels slowed by copies through HBM (gpu.kernel_slowdown_under_h2d / _d2h)', () => {
  it('a kernel runs on for the fraction x the time it shared with an H2D copy', () => {
    // copy [0, 148]; attention [0, 64] shares 64 us: + 0.25 x 64 = 16, ends at 80; projections
    // [80, 1080] share 68 us: + 17, end at 1097 (the extra time itself is not lengthened again)
    const t = runStep(machine(0.25, 0.5), [fetch]);
    expect(t.latency_us).toBe(1097);
    expect(t.compute_us).toBe(1097);
    expect(t.transfer_us).toBe(148);
  });

  it('D2H copies use their own fraction', () => {
    // attention + 0.5 x 64 = 32, ends at 96; projections [96, 1096] share 52 us: + 26, end at 1122
    const t = runStep(machine(0.25, 0.5), [evict]);
    expect(t.latency_us).toBe(1122);
  });

  it('without the fields, or with copies that do not touch HBM, kernels keep their time', () => {
    expect(runStep(machine(), [fetch]).latency_us).toBe(1064);
    expect(runStep(machine(0, 0), [fetch, evict]).latency_us).toBe(1064);
    // nvme -> dram: file requests on the host I/O stream, 128 B at 0.5 B/us
    const t = runStep(machine(0.25, 0.5), [{ ...fetch, fromTier: 2, toTier: 1 }]);
    expect(t.latency_us).toBe(1064);
  });

  it('a kernel after the copies ended is not slowed; the trace shows the lengthened spans', () => {
    const ex = machine(0.25);
    ex.beginStep(0);
    ex.compute.enqueueTimed('wait', 'kernel', 200, []); // [0, 200]: shares the whole copy [0, 148]: + 37
    ex.move(fetch);
    ex.layer({ ...work }, []); // attention [237, 301], projections [301, 1301]: no copy
    const t = ex.endStep();
    expect(t.latency_us).toBe(1301);
    expect(ex.spans.filter((s) => s.stream === 'compute').map((s) => [s.name, s.start, s.end])).toEqual([
      ['wait', 0, 237],
      ['attention', 237, 301],
      ['linear', 301, 1301],
    ]);
  });

  it('copies keep their alpha_under_compute_us timing: the busy stretch still covers the kernels queued behind the running one', () => {
    // attention [0, 64] and projections [64, 1064] queued at 0, then 10 D2H runs of 64 B: every run
    // starts under compute and pays 30 us: 10 x 30 + 640 = 940 us, with or without (negligible) slowdown fields
    const end = (h2d?: number, d2h?: number) => {
      const hw = tinyHardware();
      hw.links[0].a_to_b.alpha_under_compute_us = 30;
      if (h2d !== undefined) hw.gpu.kernel_slowdown_under_h2d = h2d;
      if (d2h !== undefined) hw.gpu.kernel_slowdown_under_d2h = d2h;
      const ex = new SimExecutor(validateProfile(hw, 'tiny.json'), tinyModel, { traceSteps: 100 });
      ex.beginStep(0);
      ex.layer({ ...work }, []);
      let at = Number.NaN;
      ex.move({ ...evict, blocks: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], bytesFrom: 640, bytesTo: 640, runs: 10 }).then(() => (at = ex.engine.now));
      ex.endStep();
      ex.finish();
      return at;
    };
    expect(end()).toBe(940);
    expect(end(1e-9, 1e-9)).toBeCloseTo(940, 6);
    // with the kernels slowed by half the time they share with D2H copies, more runs start under them: still 940
    expect(end(0, 0.5)).toBeCloseTo(940, 6);
  });

  it('the profile fields are validated: fractions from 0 to 1', () => {
    const hw = tinyHardware();
    hw.gpu.kernel_slowdown_under_h2d = -0.1;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/gpu\.kernel_slowdown_under_h2d must be a fraction between 0 and 1.*got -0\.1/);
    hw.gpu.kernel_slowdown_under_h2d = 1.5;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/gpu\.kernel_slowdown_under_h2d must be a fraction between 0 and 1.*got 1\.5/);
    hw.gpu.kernel_slowdown_under_h2d = 0.07;
    (hw.gpu as unknown as Record<string, unknown>).kernel_slowdown_under_d2h = 'x';
    expect(() => validateProfile(hw, 'x.json')).toThrow(/gpu\.kernel_slowdown_under_d2h must be a fraction between 0 and 1.*got "x"/);
    hw.gpu.kernel_slowdown_under_d2h = 0;
    expect(validateProfile(hw, 'x.json').gpu.kernel_slowdown_under_h2d).toBe(0.07);
  });
});

describe('Stream.stretch', () => {
  it('lengthens timed ops by what the hook returns at their end, on the fast path and behind waits', () => {
    const e = new Engine();
    const s = new Stream(e, 'compute', 0);
    const spans: TraceSpan[] = [];
    s.onSpan = (x) => spans.push(x);
    const seen: [number, number][] = [];
    s.stretch = (start) => (end) => {
      seen.push([start, end]);
      return (end - start) / 4;
    };
    const a = s.enqueueTimed('a', 'kernel', 100, []);
    s.enqueueKernel('b', 'kernel', 40, [a]);
    e.run();
    expect(seen).toEqual([
      [0, 100],
      [125, 165],
    ]);
    expect(spans.map((x) => [x.name, x.start, x.end])).toEqual([
      ['a', 0, 125],
      ['b', 125, 175],
    ]);
    expect(s.busyUs).toBe(175);
    expect(s.stallUs).toBe(0);
  });
});

describe('BusyClock', () => {
  it('integrates busy time over nested intervals', () => {
    const c = new BusyClock();
    expect(c.at(5)).toBe(0);
    c.start(10);
    c.start(12); // nested: still one busy stretch
    expect(c.at(15)).toBe(5);
    c.stop(20);
    expect(c.at(25)).toBe(15);
    c.stop(30);
    expect(c.at(100)).toBe(20);
    c.start(110);
    c.stop(111);
    expect(c.at(200)).toBe(21);
    expect(() => c.stop(300)).toThrow(/without a start/);
  });
});
