import { describe, expect, it } from 'vitest';
import { IntervalLog } from '../../sim/interval-log.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import type { CopyUnderCompute } from '../../sim/hardware/profile.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';

// Tiny machine: PCIe 1 B/us, alpha 10 us per copy, 25 us under compute; a layer's attention reads
// 64 B (64 us at 1 B/us of HBM), its projections 1000 B (1000 us).
function machine(mode: CopyUnderCompute | undefined, slowdownIn = 0) {
  const hw = tinyHardware();
  hw.links[0].b_to_a.alpha_under_compute_us = 25;
  hw.links[0].a_to_b.alpha_under_compute_us = 25;
  if (mode) hw.gpu.copy_under_compute = mode;
  if (slowdownIn) hw.gpu.kernel_slowdown_under_h2d = slowdownIn;
  return new SimExecutor(hw, tinyModel, { traceSteps: 100 });
}
// two single-block copies into HBM: 2 x 10 us + 128 B = 148 us at the idle price
const fetch2 = { layer: 1, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [3, 7], bytesFrom: 128, bytesTo: 128, reason: 'promote' as const, runs: 2 };
// at the idle pace a copy takes 10 + 64 = 74 us; one beside GEMVs owes 25 - 10 = 15 us more
const owed = (overlapUs: number) => Math.min(2, overlapUs / 74) * 15;

describe('IntervalLog', () => {
  it('keeps its intervals across closing and dropping: handles still name theirs after older ones are dropped', () => {
    const log = new IntervalLog();
    log.add(0, 10);
    log.add(20, 30);
    const h = log.open(40);
    // 20 us of work from 5 at half pace inside 0..10 and 20..30: 2.5 by 10, 10 more by 20, 5 more by 30, 2.5 after
    expect(log.slowedEnd(5, 25, 0.5)).toBe(32.5);
    expect(log.slowedEnd(10, 20, 0.5)).toBe(20); // 10..20 is free: done as 20..30 begins
    log.dropBefore(30); // drops 0..10 and 20..30; the handle still names the open one
    log.close(h, 45);
    // 10 us from 38: 2 by 40, 40..45 at half pace gives 2.5, 5.5 after
    expect(log.slowedEnd(38, 48, 0.5)).toBe(50.5);
    // what was dropped no longer slows anything
    expect(log.slowedEnd(0, 10, 0.5)).toBe(10);
    const h2 = log.open(50);
    log.close(h2, 60);
    expect(log.slowedEnd(48, 52, 0.5)).toBe(54); // 2 by 50, 2 more at half pace by 54
  });

  it('ends work slowed inside logged intervals: 100 us of work from 0 at half pace inside 20..40 and 130..', () => {
    const log = new IntervalLog();
    log.add(20, 40);
    log.add(130, 200);
    // 0..20 full (80 left), 20..40 half (70 left), 40..110 full: done before the second interval
    expect(log.slowedEnd(0, 100, 0.5)).toBe(110);
    // 150 us of work: 0..20, 20..40 (10 done), 40..130 (90): 30 left at half pace from 130
    expect(log.slowedEnd(0, 150, 0.5)).toBe(190);
    // started inside the first interval
    expect(log.slowedEnd(30, 50, 0.5)).toBe(55); // 30..40 gives 5, then 15 more at full pace
    expect(log.slowedEnd(50, 60, 0.5)).toBe(60); // no interval in reach
    // an open interval runs until the later of t1 and the least it runs
    const h = log.open(300, 400);
    expect(log.slowedEnd(290, 310, 0.25)).toBe(300 + 10 / 0.25);
    log.close(h, 305);
    expect(log.slowedEnd(290, 310, 0.25)).toBe(313.75); // 290..300 gives 10, 300..305 gives 1.25, 8.75 after
    const h2 = log.open(320);
    expect(log.slowedEnd(315, 330, 0.5)).toBe(335); // 315..320 gives 5, 320..330 (open, up to t1) gives 5, 5 after
    log.close(h2, 325);
  });
});

describe("copies beside GEMVs (gpu.copy_under_compute 'gemv')", () => {
  it('a batch that starts with a layer pays the under-compute price only for the copies beside its projections', () => {
    // attention 0..64, projections 64..1064; the batch runs 0..148 at the idle price, 84 us of it
    // beside the projections: 84 / 74 copies owe 15 us each, paid at its end
    const ex = machine('gemv');
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    ex.move(fetch2);
    const t = ex.endStep();
    expect(t.transfer_us).toBeCloseTo(148 + owed(84), 9);
    expect(t.latency_us).toBe(1064);
    // priced at its start (the default), both copies start within the known busy stretch: 2 x 25 + 128
    const start = machine(undefined);
    start.beginStep(0);
    start.layer(tinyLayerWork(0), []);
    start.move(fetch2);
    expect(start.endStep().transfer_us).toBe(178);
  });

  it('copies beside an attention kernel alone pay the idle price', () => {
    const ex = machine('gemv');
    ex.beginStep(0);
    ex.compute.enqueueTimed('attention', 'kernel', 500, []);
    ex.move(fetch2);
    ex.finish();
    expect(ex.memory.busyUs).toBe(148);
    const start = machine('start');
    start.beginStep(0);
    start.compute.enqueueTimed('attention', 'kernel', 500, []);
    start.move(fetch2);
    start.finish();
    expect(start.memory.busyUs).toBe(178);
  });

  it('a GEMV that starts after the batch (it waited on another stream) is counted from its start', () => {
    // the projections wait for a 50 us op on the host stream: they run 50..1050, beside 98 us of the batch
    const run = (mode: CopyUnderCompute) => {
      const ex = machine(mode);
      ex.beginStep(0);
      const gate = ex.host.enqueueTimed('gate', 'kernel', 50, []);
      ex.compute.enqueueTimed('linear', 'kernel', 1000, [gate]);
      ex.move(fetch2);
      ex.finish();
      return ex.memory.busyUs;
    };
    expect(run('gemv')).toBeCloseTo(148 + owed(98), 9);
    expect(run('start')).toBe(148); // not known to run when the batch starts
  });

  it('with kernel slowdowns (GEMVs on the event path) a GEMV still running when the batch ends counts on to its planned end', () => {
    // the attention shares 0..64 with the copy into HBM and runs on 0.5 x 64 = 32 us: 0..96; the
    // projections start at 96, beside 148 - 96 = 52 us of the batch
    const ex = machine('gemv', 0.5);
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    ex.move(fetch2);
    ex.finish();
    expect(ex.memory.busyUs).toBeCloseTo(148 + owed(52), 9);
  });

  it('a long batch with a GEMV inside it pays for the copies that fit in the GEMV at the under-compute pace', () => {
    // eight copies (592 us idle) from 0; projections 100..300 (a 100 us gate on the host stream, then a
    // 200 us linear): the work from 100 goes at 74 / 89 of the idle pace until 300, where 200 x 74 / 89
    // us of it are done; the rest at the idle pace: the end is 592 + 200 x (1 - 74 / 89) = 592 + 200 x 15 / 89
    const fetch8 = { ...fetch2, blocks: [1, 2, 3, 4, 5, 6, 7, 8], bytesFrom: 512, bytesTo: 512, runs: 8 };
    const ex = machine('gemv');
    ex.beginStep(0);
    const gate = ex.host.enqueueTimed('gate', 'kernel', 100, []);
    ex.compute.enqueueTimed('linear', 'kernel', 200, [gate]);
    ex.move(fetch8);
    ex.finish();
    expect(ex.memory.busyUs).toBeCloseTo(592 + (200 * 15) / 89, 9);
    // the GEMV's 200 us hold 200 / 89 copies, each 15 us dearer (not 200 / 74, counted at the idle pace)
    expect(ex.memory.busyUs - 592).toBeCloseTo((200 / 89) * 15, 9);
  });

  it("copies beside GEMVs move their bytes at the link's GBps_under_compute", () => {
    // 0.5 B/us beside GEMVs: a 64 B copy there takes 25 + 128 = 153 us against 74 idle; two copies wholly
    // beside a long GEMV take 2 x 153
    const hw = tinyHardware();
    hw.links[0].b_to_a.alpha_under_compute_us = 25;
    hw.links[0].b_to_a.GBps_under_compute = hw.links[0].b_to_a.GBps / 2;
    hw.gpu.copy_under_compute = 'gemv';
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    ex.compute.enqueueTimed('linear', 'kernel', 5000, []);
    ex.move(fetch2);
    ex.finish();
    expect(ex.memory.busyUs).toBeCloseTo(2 * 153, 9);
    const bad = tinyHardware();
    bad.links[0].b_to_a.GBps_under_compute = 0;
    expect(() => validateProfile(bad, 'x.json')).toThrow(/GBps_under_compute/);
  });

  it('a GEMV on the event path counts until its planned end at least, not past it: a tiny slowdown changes almost nothing', () => {
    // eight copies (592 us idle) beside a 600 us GEMV from 0: the work goes at 74 / 89 until 600, then idle
    const fetch8 = { ...fetch2, blocks: [1, 2, 3, 4, 5, 6, 7, 8], bytesFrom: 512, bytesTo: 512, runs: 8 };
    const run = (slow: number) => {
      const ex = machine('gemv', slow);
      ex.beginStep(0);
      ex.compute.enqueueTimed('linear', 'kernel', 600, []);
      ex.move(fetch8);
      ex.finish();
      return ex.memory.busyUs;
    };
    expect(run(0)).toBeCloseTo(600 + (592 - (600 * 74) / 89), 9);
    expect(Math.abs(run(1e-6) - run(0))).toBeLessThan(0.01);
  });

  it('the owed copies are at most the batch: a batch wholly beside GEMVs pays what a started one would', () => {
    const ex = machine('gemv');
    ex.beginStep(0);
    ex.compute.enqueueTimed('linear', 'kernel', 5000, []);
    ex.move(fetch2);
    ex.finish();
    expect(ex.memory.busyUs).toBe(148 + 2 * 15);
  });

  it('the profile field is validated', () => {
    const hw = tinyHardware();
    (hw.gpu as unknown as Record<string, unknown>).copy_under_compute = 'linear';
    expect(() => validateProfile(hw, 'x.json')).toThrow(/gpu\.copy_under_compute must be one of start, gemv \(got "linear"\)/);
    hw.gpu.copy_under_compute = 'gemv';
    expect(validateProfile(hw, 'x.json').gpu.copy_under_compute).toBe('gemv');
  });
});
