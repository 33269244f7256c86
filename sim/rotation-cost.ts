/**
 * The work of a Walsh–Hadamard rotation (RotateKV, QuaRot) in one decode step of one layer: the
 * token's K and V written to the cache are rotated before they are quantized (and stored rotated),
 * and the query is rotated the same way so that q·k is unchanged. A fast Walsh–Hadamard transform
 * of a vector of d values is d·log2(d) additions (log2 rounded up when d is not a power of two);
 * it reads and writes the vector once in FP16. The rotation of V is undone on the attention output
 * by folding the inverse rotation into the output projection's weights offline (as QuaRot does), so
 * it costs nothing at run time. Timed as one kernel on the executor's roofline (roofline.ts).
 */
import type { GpuSpec } from './hardware/profile.js';
import { kvElementsPerTokenLayer, type ModelSpec } from './models/model.js';
import { kernelTimeUs } from './roofline.js';

export interface RotationWork {
  /** values rotated: the token's K and V (or MLA latent) plus the query heads */
  values: number;
  /** additions: values · log2(head_dim) */
  flops: number;
  /** bytes read and written in FP16: values · 2 · 2 */
  bytes: number;
}

export function rotationWork(m: ModelSpec): RotationWork {
  const values = kvElementsPerTokenLayer(m) + m.q_heads * m.head_dim;
  const flops = values * Math.ceil(Math.log2(m.head_dim));
  return { values, flops, bytes: values * 2 * 2 };
}

/** One layer's rotation kernel: launch + max(bytes / HBM bandwidth, additions / peak). */
export function rotationTimeUs(gpu: GpuSpec, m: ModelSpec): number {
  const w = rotationWork(m);
  return kernelTimeUs(gpu, w.bytes, w.flops);
}
