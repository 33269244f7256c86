/**
 * Kernel times. The generic roofline: launch overhead + max(bytes / achieved bandwidth, FLOPs /
 * achieved peak). A profile may carry separate fits for the attention and linear (GEMV) kernels
 * (gpu.attention_*, gpu.linear_*: one roofline cannot fit both — decode attention is latency-bound
 * at short contexts and reads KV slower per byte than a GEMV streams weights); absent fields fall
 * back to the generic roofline.
 */
import { type AttentionKernel, type GpuSpec, MIXED_SPARSE_CHANGE_SHARE } from './hardware/profile.js';

export function kernelTimeUs(gpu: GpuSpec, bytes: number, flops: number): number {
  const memory = bytes / (gpu.hbm_bandwidth_GBps * 1e3);
  const compute = flops / (gpu.fp16_TFLOPs * 1e6);
  return gpu.kernel_launch_us + Math.max(memory, compute);
}

/** Linear-layer (GEMV) kernel: gpu.linear_launch_us / gpu.linear_GBps where given. */
export function linearTimeUs(gpu: GpuSpec, bytes: number, flops: number): number {
  const memory = bytes / ((gpu.linear_GBps ?? gpu.hbm_bandwidth_GBps) * 1e3);
  const compute = flops / (gpu.fp16_TFLOPs * 1e6);
  return (gpu.linear_launch_us ?? gpu.kernel_launch_us) + Math.max(memory, compute);
}

/**
 * Decode attention over `tokens` tokens reading `bytes` of KV. With gpu.attention_curve (measured
 * time vs context): piecewise-linear in tokens between the measured points, extended past the ends
 * along the nearest segment (never below the shortest measured time's launch part). Else the
 * attention roofline gpu.attention_launch_us / gpu.attention_GBps, else the generic one. `kernel` is the
 * kernel the executor dispatches for the layer's precisions: with gpu.attention_kernels measured, a
 * non-FP16 kernel adds its measured difference to the FP16 kernel at the same context. The per-block
 * table kernel ('mixed') also adds its slowdown from precision changes along the table (mixedChangeUs),
 * for `changeShare` of the consecutive blocks at different precisions.
 */
export function attentionTimeUs(gpu: GpuSpec, tokens: number, bytes: number, flops: number, kernel: AttentionKernel = 'fp16', changeShare = 0): number {
  const c = gpu.attention_curve;
  if (c && c.length >= 2) {
    const us = interpolate(c, tokens);
    const floor = Math.min(c[0].us, gpu.attention_launch_us ?? gpu.kernel_launch_us);
    const k = gpu.attention_kernels;
    const own = kernel !== 'fp16' ? k?.[kernel] : undefined;
    const fp16 = k?.fp16;
    let extra = own && fp16 ? interpolate(own, tokens) - interpolate(fp16, tokens) : 0;
    if (kernel === 'mixed' && changeShare > 0 && k) extra += mixedChangeUs(k, tokens, changeShare);
    return Math.max(us + extra, floor);
  }
  const memory = bytes / ((gpu.attention_GBps ?? gpu.hbm_bandwidth_GBps) * 1e3);
  const compute = flops / (gpu.fp16_TFLOPs * 1e6);
  return (gpu.attention_launch_us ?? gpu.kernel_launch_us) + Math.max(memory, compute);
}

/**
 * The per-block table kernel's time beyond its 'mixed' curve when `share` of consecutive blocks change
 * precision: rises linearly with the share up to the 'mixed_interleaved' curve (every pair a change),
 * reached at the share s where the 'mixed_sparse' curve (share MIXED_SPARSE_CHANGE_SHARE) lies on that
 * line, s = MIXED_SPARSE_CHANGE_SHARE / ((sparse - mixed) / (interleaved - mixed)), at most 1; without
 * 'mixed_sparse', s = 1. Measured on an H200 the slowdown saturates at about 15% of pairs changing.
 * 0 without the 'mixed' and 'mixed_interleaved' curves, or where interleaving is not slower.
 */
export function mixedChangeUs(k: NonNullable<GpuSpec['attention_kernels']>, tokens: number, share: number): number {
  if (!k.mixed || !k.mixed_interleaved) return 0;
  const base = interpolate(k.mixed, tokens);
  const full = interpolate(k.mixed_interleaved, tokens) - base;
  if (!(full > 0)) return 0;
  let saturation = 1;
  if (k.mixed_sparse) {
    const reached = (interpolate(k.mixed_sparse, tokens) - base) / full;
    if (reached > 0) saturation = Math.min(1, MIXED_SPARSE_CHANGE_SHARE / Math.min(1, reached));
  }
  return full * Math.min(1, share / saturation);
}

/** piecewise-linear in tokens between the points (at least two, ascending), extended along the end segments */
export function interpolate(c: readonly { tokens: number; us: number }[], tokens: number): number {
  let i = 1;
  while (i < c.length - 1 && c[i].tokens < tokens) i++;
  const a = c[i - 1];
  const b = c[i];
  return a.us + ((b.us - a.us) * (tokens - a.tokens)) / (b.tokens - a.tokens);
}
