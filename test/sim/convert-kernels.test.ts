import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { kernelTimeUs } from '../../sim/roofline.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { tinyHardware, tinyModel } from '../helpers/tiny.js';

// Tiny machine (PCIe 1 B/us, alpha 10 us per copy); one block's (de)quantization kernel 5 us on an
// idle GPU, 9 us while a kernel runs on the compute stream.
function machine(convert = true) {
  const hw = tinyHardware();
  if (convert) {
    hw.gpu.convert_kernel_us = 5;
    hw.gpu.convert_kernel_under_compute_us = 9;
  }
  return { hw, ex: new SimExecutor(hw, tinyModel, { traceSteps: 100 }) };
}
const requant = (fromBits: number, toBits: number, blocks: number[]) => ({ layer: 0, fromTier: 0, toTier: 0, fromBits, toBits, blocks, bytesFrom: 64 * blocks.length, bytesTo: 16 * blocks.length, reason: 'demote' as const, runs: blocks.length });

describe('block (de)quantization kernels on the memory stream', () => {
  it('one kernel per block and quantized end: FP16 -> INT one, INT -> INT two (through FP16), INT -> FP16 one', () => {
    const { ex } = machine();
    ex.beginStep(0);
    ex.move(requant(16, 4, [1, 2, 3])); // 3 kernels
    ex.move(requant(4, 2, [1, 2])); // 4 kernels
    // promote 2 INT4 blocks into HBM at FP16: 2 copies (2 x 10 us + 32 B) then 2 dequantize kernels
    ex.move({ layer: 0, fromTier: 1, toTier: 0, fromBits: 4, toBits: 16, blocks: [5, 6], bytesFrom: 32, bytesTo: 128, reason: 'promote', runs: 2 });
    ex.finish();
    expect(ex.memory.busyUs).toBe(3 * 5 + 4 * 5 + (20 + 32) + 2 * 5);
  });

  it('kernels that start while the compute stream runs pay convert_kernel_under_compute_us, pro rata over the batch', () => {
    const { ex } = machine();
    ex.beginStep(0);
    ex.compute.enqueueTimed('k', 'kernel', 20, []);
    ex.move(requant(16, 4, [1, 2, 3, 4]));
    ex.finish();
    // 20 us of compute: 20 / 9 kernels start under it, the rest idle
    const under = 20 / 9;
    expect(ex.memory.busyUs).toBeCloseTo(under * 9 + (4 - under) * 5, 9);
  });

  it('without the fields a batch is one kernel on the generic line', () => {
    const { hw, ex } = machine(false);
    ex.beginStep(0);
    ex.move(requant(16, 4, [1, 2, 3]));
    ex.finish();
    expect(ex.memory.busyUs).toBe(kernelTimeUs(hw.gpu, 3 * 64 + 3 * 16, 0));
  });

  it('the profile fields are validated', () => {
    const hw = tinyHardware();
    (hw.gpu as unknown as Record<string, unknown>).convert_kernel_us = -1;
    expect(() => validateProfile(hw, 'x.json')).toThrow(/gpu\.convert_kernel_us/);
    (hw.gpu as unknown as Record<string, unknown>).convert_kernel_us = 4.5;
    expect(validateProfile(hw, 'x.json').gpu.convert_kernel_us).toBe(4.5);
  });
});
