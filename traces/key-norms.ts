/**
 * Generated key L2 norms. Each token's key norm is lognormal (norm_median, norm_sigma) and, with
 * probability norm_outlier_prob, multiplied by norm_outlier_scale (the "massive activation"
 * outliers above mean + 3 sigma that quantisers keep in full precision). A block's norm is the
 * largest of its tokens' norms so far, so it is deterministic per (seed, row, block, context).
 */
import type { GeneratorParams } from './generator-params.js';
import { NORMAL_TABLE_BITS, hash3, unitFrom } from './hash-noise.js';

const TABLE_SHIFT = 32 - NORMAL_TABLE_BITS;

export function tokenKeyNorm(p: GeneratorParams, normals: Float64Array, key: number, token: number): number {
  let v = p.norm_median * Math.exp(p.norm_sigma * normals[hash3(key, token, 0x2c1b3c6d) >>> TABLE_SHIFT]!);
  if (unitFrom(hash3(key, token, 0x297a2d39)) < p.norm_outlier_prob) v *= p.norm_outlier_scale;
  return v;
}

/** The norm of block b when the context holds ctx tokens. */
export function blockKeyNorm(p: GeneratorParams, normals: Float64Array, key: number, b: number, ctx: number): number {
  const bs = p.block_size;
  const end = Math.min(ctx, (b + 1) * bs);
  let m = 0;
  for (let t = b * bs; t < end; t++) m = Math.max(m, tokenKeyNorm(p, normals, key, t));
  return m;
}
