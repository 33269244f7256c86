/** Kernel time by roofline: launch overhead + max(bytes / achieved bandwidth, FLOPs / achieved peak). */
import type { GpuSpec } from './hardware/profile.js';

export function kernelTimeUs(gpu: GpuSpec, bytes: number, flops: number): number {
  const memory = bytes / (gpu.hbm_bandwidth_GBps * 1e3);
  const compute = flops / (gpu.fp16_TFLOPs * 1e6);
  return gpu.kernel_launch_us + Math.max(memory, compute);
}
