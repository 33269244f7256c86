/**
 * Kernel times. The generic roofline: launch overhead + max(bytes / achieved bandwidth, FLOPs /
 * achieved peak). A profile may carry separate fits for the attention and linear (GEMV) kernels
 * (gpu.attention_*, gpu.linear_*: one roofline cannot fit both — decode attention is latency-bound
 * at short contexts and reads KV slower per byte than a GEMV streams weights); absent fields fall
 * back to the generic roofline.
 */
import { type AttentionKernel, type AttentionWaves, type GpuSpec } from './hardware/profile.js';
import { tailWaveUs } from './attention-waves.js';
import { BITS } from './kv-cache.js';

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
 * along the nearest segment (never below the shortest measured time's launch part), plus the tail
 * wave where gpu.attention_waves prices it for the layer's kernel (attention-waves.ts). Else the
 * attention roofline gpu.attention_launch_us / gpu.attention_GBps, else the generic one. `kernel` is the
 * kernel the executor dispatches for the layer's precisions: with gpu.attention_kernels measured, a
 * non-FP16 kernel adds its measured difference to the FP16 kernel at the same context. The per-block
 * table kernel ('mixed') is priced by its table's make-up where `blocksByBits` is given
 * (tableKernelUs), else by its 'mixed' curve, plus its slowdown from mixed precisions along the table
 * (mixedChangeUs) for `mixedShare` of its 8-block windows holding more than one precision, plus its
 * slowdown from quantized precisions beyond two in the table (mixedKindsUs).
 */
export function attentionTimeUs(gpu: GpuSpec, tokens: number, bytes: number, flops: number, kernel: AttentionKernel = 'fp16', mixedShare = 0, blocksByBits?: ArrayLike<number>): number {
  const c = gpu.attention_curve;
  if (c && c.length >= 2) {
    // (the curve holds the FP16 time without the tail wave where the profile prices that wave apart: a
    // kernel that follows the rule adds it, and its difference to FP16 as measured; another kernel takes
    // its difference to FP16 without FP16's tail wave)
    const w = gpu.attention_waves;
    const shares = w !== undefined && w.kernels.includes(kernel);
    const us = interpolate(c, tokens) + (shares ? tailWaveUs(tokens, w) : 0);
    const floor = Math.min(c[0].us, gpu.attention_launch_us ?? gpu.kernel_launch_us);
    const k = gpu.attention_kernels;
    const own = kernel !== 'fp16' ? k?.[kernel] : undefined;
    const fp16 = k?.fp16 && w && !shares ? fp16WithoutTail(k.fp16, w) : k?.fp16;
    let extra = own && fp16 ? interpolate(own, tokens) - interpolate(fp16, tokens) : 0;
    if (kernel === 'mixed' && k && fp16 && blocksByBits) {
      const table = tableKernelUs(k, tokens, blocksByBits);
      if (table !== undefined) extra = table - interpolate(fp16, tokens);
    }
    if (kernel === 'mixed' && mixedShare > 0 && k) extra += mixedChangeUs(k, tokens, mixedShare);
    if (kernel === 'mixed' && k && blocksByBits) extra += mixedKindsUs(k, tokens, blocksByBits);
    return Math.max(us + extra, floor);
  }
  const memory = bytes / ((gpu.attention_GBps ?? gpu.hbm_bandwidth_GBps) * 1e3);
  const compute = flops / (gpu.fp16_TFLOPs * 1e6);
  return (gpu.attention_launch_us ?? gpu.kernel_launch_us) + Math.max(memory, compute);
}

const withoutTail = new WeakMap<object, { w: AttentionWaves; out: { tokens: number; us: number }[] }>();
/** the FP16 kernel's measured points less its tail wave at each (made once per curve and rule) */
function fp16WithoutTail(fp16: { tokens: number; us: number }[], w: AttentionWaves): { tokens: number; us: number }[] {
  let e = withoutTail.get(fp16);
  if (!e || e.w !== w) {
    e = { w, out: fp16.map((x) => ({ tokens: x.tokens, us: x.us - tailWaveUs(x.tokens, w) })) };
    withoutTail.set(fp16, e);
  }
  return e.out;
}

/** the kernel curve a table block of each precision (kv-cache BITS order: 16, 8, 4, 2, 3) is priced by */
const TABLE_CURVE_OF_BITS = ['mixed', 'int8', 'mixed', 'int2', 'int2'] as const;

/**
 * The per-block table kernel over `blocksByBits` blocks per precision (kv-cache BITS order: 16, 8, 4, 2,
 * 3), without its change slowdown: each block's share of the table at the kernel's measured time for
 * tables of its kind. INT8 and INT2 blocks at the 'int8' and 'int2' curves (a table of one such precision
 * runs through this same table kernel; INT3 blocks, never measured, at INT2's); FP16 and INT4 blocks at
 * the 'mixed' curve (the calibration's table of FP16 and INT4 blocks: tables of only one of these run
 * tensor-core kernels of their own). Undefined without the curves the table's blocks need, or without
 * blocks.
 */
export function tableKernelUs(k: NonNullable<GpuSpec['attention_kernels']>, tokens: number, blocksByBits: ArrayLike<number>): number | undefined {
  let total = 0;
  let us = 0;
  for (let i = 0; i < TABLE_CURVE_OF_BITS.length; i++) {
    const n = blocksByBits[i] ?? 0;
    if (!(n > 0)) continue;
    const curve = k[TABLE_CURVE_OF_BITS[i]];
    if (!curve) return undefined;
    total += n;
    us += n * interpolate(curve, tokens);
  }
  return total > 0 ? us / total : undefined;
}

/**
 * The per-block table kernel's time beyond its make-up's (tableKernelUs) when `share` of its 8-block
 * windows hold more than one precision (KVCache.mixedWindowShare): that share of the 'mixed_interleaved'
 * curve's time (INT2 and INT8 in turn: every window mixed) over its make-up, the mean of the 'int8' and
 * 'int2' curves (or, without those, the 'mixed' curve). Timed alone on an H200 (lab notes), INT2 tables
 * with INT8 in runs of 1-16 blocks and SmartKV's own tables slow down by about that share of the
 * interleaved table's excess, whatever the share of consecutive pairs that change. 0 without the
 * 'mixed_interleaved' curve and a make-up, or where interleaving is not slower.
 */
export function mixedChangeUs(k: NonNullable<GpuSpec['attention_kernels']>, tokens: number, share: number): number {
  if (!k.mixed_interleaved) return 0;
  const byPrecision = k.int8 && k.int2;
  if (!byPrecision && !k.mixed) return 0;
  const int8 = byPrecision ? interpolate(k.int8!, tokens) : 0;
  const int2 = byPrecision ? interpolate(k.int2!, tokens) : 0;
  const base = byPrecision ? (int8 + int2) / 2 : interpolate(k.mixed!, tokens);
  const full = interpolate(k.mixed_interleaved, tokens) - base;
  if (!(full > 0)) return 0;
  return full * Math.min(1, Math.max(0, share));
}

/** the indices in kv-cache BITS order of the quantized precisions (every width below 16 bits) */
const QUANTIZED_BITS_AT = BITS.flatMap((b, i) => (b < 16 ? [i] : []));

/**
 * The per-block table kernel's time beyond its make-up and its changes for each quantized precision
 * (INT8, INT4, INT2, INT3) in the table beyond two, however few blocks it has: a table of INT8 and INT2
 * runs with one INT4 block or one INT3 block runs several microseconds longer than the same runs alone,
 * on the lent H200 at 8k and 32k tokens (lab/notes/HIL-NOTES.md). Per precision beyond two: half of
 * 'mixed_kinds' (the 'mixed_sparse' runs with an INT4 and an INT3 block) less 'mixed_sparse'; 0 without
 * both curves, with two quantized precisions or fewer, or where 'mixed_kinds' is not slower.
 */
export function mixedKindsUs(k: NonNullable<GpuSpec['attention_kernels']>, tokens: number, blocksByBits: ArrayLike<number>): number {
  if (!k.mixed_kinds || !k.mixed_sparse) return 0;
  let kinds = 0;
  for (const i of QUANTIZED_BITS_AT) if ((blocksByBits[i] ?? 0) > 0) kinds++;
  if (kinds <= 2) return 0;
  const per = (interpolate(k.mixed_kinds, tokens) - interpolate(k.mixed_sparse, tokens)) / 2;
  return per > 0 ? per * (kinds - 2) : 0;
}

/** piecewise-linear in tokens between the points (at least two, ascending), extended along the end segments */
export function interpolate(c: readonly { tokens: number; us: number }[], tokens: number): number {
  let i = 1;
  while (i < c.length - 1 && c[i].tokens < tokens) i++;
  const a = c[i - 1];
  const b = c[i];
  return a.us + ((b.us - a.us) * (tokens - a.tokens)) / (b.tokens - a.tokens);
}
