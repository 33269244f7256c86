import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import type { MoveBatch } from '../../sim/executor.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

// Tiny machine: PCIe 1 B/us, alpha 10 us per copy; gpu.copy_batch_us 7 us per memory-stream batch.
function machine(batchUs?: number) {
  const hw = tinyHardware();
  if (batchUs !== undefined) hw.gpu.copy_batch_us = batchUs;
  return new SimExecutor(hw, tinyModel, { traceSteps: 100 });
}
const batch = (layer: number, blocks: number[], reason: MoveBatch['reason'], toTier = 0): MoveBatch => ({
  layer,
  fromTier: toTier === 0 ? 1 : 0,
  toTier,
  fromBits: 16,
  toBits: 16,
  blocks,
  bytesFrom: 64 * Math.max(1, blocks.length),
  bytesTo: 64 * Math.max(1, blocks.length),
  reason,
  runs: Math.max(1, blocks.length),
});
/** memory-stream busy time of the ops `issue` gives the executor, from an idle machine */
function busy(batchUs: number | undefined, issue: (ex: SimExecutor) => void): number {
  const ex = machine(batchUs);
  ex.beginStep(0);
  issue(ex);
  ex.finish();
  return ex.memory.busyUs;
}

describe('a fixed cost per copy batch (gpu.copy_batch_us)', () => {
  it('a batch into or out of HBM pays it once, whatever its copies', () => {
    // two single-block copies: 2 x (10 + 64) = 148 us; one batch of them: + 7
    expect(busy(undefined, (ex) => ex.move(batch(1, [3, 7], 'promote')))).toBe(148);
    expect(busy(7, (ex) => ex.move(batch(1, [3, 7], 'promote')))).toBe(155);
    // a demotion, then a promotion: two batches
    expect(busy(7, (ex) => (ex.move(batch(1, [3], 'demote', 1)), ex.move(batch(1, [4], 'promote'))))).toBe(2 * (74 + 7));
  });

  it('consecutive stages of listed blocks of one layer and tier are one batch, as the plan recorder merges them', () => {
    // three single-block stages of layer 1: one batch (3 x 74 + 7); then layer 2: another
    expect(busy(7, (ex) => [3, 5, 9].forEach((b) => ex.stage(batch(1, [b], 'prefetch'))))).toBe(3 * 74 + 7);
    expect(busy(7, (ex) => (ex.stage(batch(1, [3], 'prefetch')), ex.stage(batch(2, [3], 'prefetch'))))).toBe(2 * (74 + 7));
    // a move between two stages of one layer closes the first batch
    expect(busy(7, (ex) => (ex.stage(batch(1, [3], 'prefetch')), ex.move(batch(1, [8], 'demote', 1)), ex.stage(batch(1, [5], 'prefetch'))))).toBe(3 * (74 + 7));
    // a bulk stage (no blocks listed) is a batch of its own, and so is the stage after it
    expect(busy(7, (ex) => (ex.stage(batch(1, [], 'prefetch')), ex.stage(batch(1, [5], 'prefetch'))))).toBe(2 * (74 + 7));
    // a new step closes the batch
    const ex = machine(7);
    ex.beginStep(0);
    ex.stage(batch(1, [3], 'prefetch'));
    ex.endStep();
    ex.beginStep(1);
    ex.stage(batch(1, [5], 'prefetch'));
    ex.finish();
    expect(ex.memory.busyUs).toBe(2 * (74 + 7));
  });

  it('the profile field is validated', () => {
    const hw = tinyHardware();
    hw.gpu.copy_batch_us = -1;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/gpu\.copy_batch_us/);
    hw.gpu.copy_batch_us = 5.5;
    expect(validateProfile(hw, 'x.json').gpu.copy_batch_us).toBe(5.5);
  });
});
