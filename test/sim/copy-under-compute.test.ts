import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';

// Tiny machine: PCIe 1 B/us, alpha 10 us per copy; with alpha_under_compute_us 25 a copy that starts
// while a kernel runs on the compute stream pays 25 us per copy instead.
function machine(underCompute?: number) {
  const hw = tinyHardware();
  if (underCompute !== undefined) hw.links[0].b_to_a.alpha_under_compute_us = underCompute;
  return new SimExecutor(hw, tinyModel, { traceSteps: 100 });
}
const work = (layer: number) => tinyLayerWork(layer);
const fetch2 = { layer: 1, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [3, 7], bytesFrom: 128, bytesTo: 128, reason: 'promote' as const, runs: 2 };

describe('copy alpha under compute', () => {
  it('a copy that starts while a kernel runs pays alpha_under_compute_us per run; one that starts on an idle GPU pays alpha_us', () => {
    // idle GPU: 2 runs x 10 us + 128 B at 1 B/us = 148 us
    const idle = machine(25);
    idle.beginStep(0);
    idle.move(fetch2);
    idle.finish();
    expect(idle.memory.busyUs).toBe(148);
    // layer 0's kernels run from 0 to 1064 us (64 B attention + 1000 B projections at 1 B/us):
    // the copy starts at 0 under compute: 2 x 25 + 128 = 178 us; layer 1 waits for it (none here)
    const busy = machine(25);
    busy.beginStep(0);
    busy.layer(work(0), []);
    busy.move(fetch2);
    const t = busy.endStep();
    expect(t.latency_us).toBe(1064);
    expect(t.transfer_us).toBe(178);
    // without the field, alpha_us applies either way
    const plain = machine();
    plain.beginStep(0);
    plain.layer(work(0), []);
    plain.move(fetch2);
    plain.finish();
    expect(plain.memory.busyUs).toBe(148);
  });

  it('runs that start after the kernels end pay alpha_us: a batch straddling the end is charged pro rata', () => {
    // a 100 us kernel, then 4 runs of 64 B: a run under compute takes 25 + 64 = 89 us, so 100 / 89 of
    // a run starts under compute; the other 4 - 100/89 runs pay 10 us
    const ex = machine(25);
    ex.beginStep(0);
    ex.compute.enqueueTimed('k', 'kernel', 100, []);
    ex.move({ ...fetch2, blocks: [1, 3, 5, 7], bytesFrom: 256, bytesTo: 256, runs: 4 });
    ex.finish();
    const under = 100 / 89;
    expect(ex.memory.busyUs).toBeCloseTo(under * 25 + (4 - under) * 10 + 256, 9);
  });

  it('a copy queued behind the kernels that starts after they end is an idle-GPU copy', () => {
    const ex = machine(25);
    ex.beginStep(0);
    const k = ex.compute.enqueueTimed('k', 'kernel', 50, []);
    const after = ex.memory.enqueue({ name: 'wait', cat: 'copy', waits: [k], run: (f) => f() });
    void after;
    ex.move(fetch2);
    ex.finish();
    // starts at 50 (after the wait op), compute idle from 50: 148 us
    expect(ex.memory.busyUs).toBe(148);
  });

  it('the profile field is validated', () => {
    const hw = tinyHardware();
    (hw.links[0].a_to_b as unknown as Record<string, unknown>).alpha_under_compute_us = -1;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/links\[0\]\.a_to_b\.alpha_under_compute_us/);
    (hw.links[0].a_to_b as unknown as Record<string, unknown>).alpha_under_compute_us = 3;
    expect(validateProfile(hw, 'x.json').links[0].a_to_b.alpha_under_compute_us).toBe(3);
  });
});
