import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

// Tiny machine: PCIe 1 B/us both ways, alpha 10 us per copy; switch_us 7 into HBM, 3 out of it.
function machine(switches = true) {
  const hw = tinyHardware();
  if (switches) {
    hw.links[0].b_to_a.switch_us = 7;
    hw.links[0].a_to_b.switch_us = 3;
  }
  return new SimExecutor(hw, tinyModel, { traceSteps: 100 });
}
const promote = { layer: 1, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [3, 7], bytesFrom: 128, bytesTo: 128, reason: 'promote' as const, runs: 2 };
const demote = { layer: 1, fromTier: 0, toTier: 1, fromBits: 16, toBits: 16, blocks: [4], bytesFrom: 64, bytesTo: 64, reason: 'demote' as const, runs: 1 };

describe('copy direction changes on the memory stream', () => {
  it('a copy pays its direction\'s switch_us when the previous copy went the other way, and only then', () => {
    const ex = machine();
    ex.beginStep(0);
    // promote (first copy: no change) 2 x 10 + 128 = 148; promote again (same way) 148;
    // demote (change, out of HBM: +3) 10 + 64 + 3 = 77; demote 74; promote (change, into HBM: +7) 155
    for (const m of [promote, promote, demote, demote, promote]) ex.move(m);
    ex.finish();
    expect(ex.memory.busyUs).toBe(148 + 148 + 77 + 74 + 155);
  });

  it('the change is remembered across steps; without the field nothing is added', () => {
    const ex = machine();
    ex.beginStep(0);
    ex.move(demote);
    ex.endStep();
    ex.beginStep(1);
    ex.move(promote);
    ex.finish();
    expect(ex.memory.busyUs).toBe(74 + 155);
    const plain = machine(false);
    plain.beginStep(0);
    for (const m of [promote, demote, promote]) plain.move(m);
    plain.finish();
    expect(plain.memory.busyUs).toBe(148 + 74 + 148);
  });

  it('a change that starts while a kernel runs on the compute stream pays switch_under_compute_us', () => {
    const hw = tinyHardware();
    hw.links[0].a_to_b.switch_us = 3;
    hw.links[0].a_to_b.switch_under_compute_us = 20;
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100 });
    ex.beginStep(0);
    ex.compute.enqueueTimed('k', 'kernel', 1000, []);
    ex.move(promote); // 148, no change
    ex.move(demote); // starts at 148 under the kernel: 10 + 64 + 20
    ex.finish();
    expect(ex.memory.busyUs).toBe(148 + 94);
  });

  it('the profile field is validated', () => {
    const hw = tinyHardware();
    (hw.links[0].a_to_b as unknown as Record<string, unknown>).switch_us = -2;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/links\[0\]\.a_to_b\.switch_us/);
    (hw.links[0].a_to_b as unknown as Record<string, unknown>).switch_us = 4;
    expect(validateProfile(hw, 'x.json').links[0].a_to_b.switch_us).toBe(4);
  });
});
