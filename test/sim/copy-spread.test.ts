import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { SPREAD_FROM_BLOCKS, spreadDoublings } from '../../sim/host-spread.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

// Tiny machine: PCIe 1 B/us both ways, alpha 10 us per copy; spread_us 2 into HBM, 1 out of it.
function machine(spread = true) {
  const hw = tinyHardware();
  if (spread) {
    hw.links[0].b_to_a.spread_us = 2;
    hw.links[0].a_to_b.spread_us = 1;
  }
  return new SimExecutor(hw, tinyModel, { traceSteps: 100 });
}
const batch = (blocks: number[], toHbm: boolean) => ({
  layer: 1,
  fromTier: toHbm ? 1 : 0,
  toTier: toHbm ? 0 : 1,
  fromBits: 16,
  toBits: 16,
  blocks,
  bytesFrom: 64 * blocks.length,
  bytesTo: 64 * blocks.length,
  reason: (toHbm ? 'promote' : 'demote') as 'promote' | 'demote',
  runs: blocks.length,
});

describe('the spread of a batch\'s host slots', () => {
  it('counts doublings of the distance beyond SPREAD_FROM_BLOCKS, in the order listed', () => {
    expect(SPREAD_FROM_BLOCKS).toBe(3);
    expect(spreadDoublings([])).toBe(0);
    expect(spreadDoublings([5])).toBe(0);
    expect(spreadDoublings([0, 3, 4, 7])).toBe(0);
    expect(spreadDoublings([0, 6])).toBe(1);
    expect(spreadDoublings([6, 0])).toBe(1);
    expect(spreadDoublings([0, 12, 13, 37])).toBe(2 + 3);
    expect(spreadDoublings([48], 0)).toBe(4);
    expect(spreadDoublings([0, 9])).toBeCloseTo(Math.log2(3), 12);
  });

  it('a copy batch to or from HBM pays its direction\'s spread_us per doubling', () => {
    const ex = machine();
    ex.beginStep(0);
    // promote [0, 12, 13]: 3 x 10 + 192 + 2 doublings x 2 = 226
    ex.move(batch([0, 12, 13], true));
    // demote [24, 0]: 2 x 10 + 128 + 3 doublings x 1 = 151
    ex.move(batch([24, 0], false));
    ex.finish();
    expect(ex.memory.busyUs).toBe(226 + 151);
  });

  it('a stage that continues the previous one measures its first block from that stage\'s last', () => {
    const ex = machine();
    ex.beginStep(0);
    // [5]: 10 + 64 = 74; [29] continues it: 24 blocks from 5, 3 doublings x 2: 80; a move breaks the
    // chain: [53] after it pays nothing for its distance from 29
    ex.stage(batch([5], true));
    ex.stage(batch([29], true));
    ex.move(batch([1], false));
    ex.stage(batch([53], true));
    ex.finish();
    expect(ex.memory.busyUs).toBe(74 + 80 + 74 + 74);
  });

  it('a batch pays its spread once: a bulk stage or a gather after it pays none', () => {
    const ex = machine();
    ex.beginStep(0);
    // [0, 12, 13] into HBM: 226 as above; then a bulk stage of the layer (no blocks listed): 10 + 64 = 74
    ex.move(batch([0, 12, 13], true));
    ex.stage({ ...batch([], true), bytesFrom: 64, bytesTo: 64, runs: 1 });
    ex.finish();
    expect(ex.memory.busyUs).toBe(226 + 74);
    // copies gathered into one run: no spread (1 x 10 + 192)
    const hw = tinyHardware();
    hw.links[0].b_to_a.spread_us = 2;
    const gather = new SimExecutor(hw, tinyModel, { traceSteps: 100, copyMode: 'gather' });
    gather.beginStep(0);
    gather.move(batch([0, 12, 13], true));
    gather.finish();
    expect(gather.memory.busyUs).toBe(202);
  });

  it('without the field nothing is added; the field is validated', () => {
    const plain = machine(false);
    plain.beginStep(0);
    plain.move(batch([0, 12, 13], true));
    plain.move(batch([24, 0], false));
    plain.finish();
    expect(plain.memory.busyUs).toBe(222 + 148);
    const hw = tinyHardware();
    (hw.links[0].a_to_b as unknown as Record<string, unknown>).spread_us = -1;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/links\[0\]\.a_to_b\.spread_us/);
    (hw.links[0].a_to_b as unknown as Record<string, unknown>).spread_us = 0.5;
    expect(validateProfile(hw, 'x.json').links[0].a_to_b.spread_us).toBe(0.5);
  });
});
