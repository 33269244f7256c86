/** Model presets: the transformer shape that decides KV bytes, weight bytes and FLOPs. */
export type AttentionKind = 'mha' | 'gqa' | 'mla';

export interface ModelSpec {
  name: string;
  description: string;
  layers: number;
  hidden: number;
  q_heads: number;
  kv_heads: number;
  head_dim: number;
  attention: AttentionKind;
  /** MLA only: compressed latent width and decoupled RoPE key width stored per token per layer */
  mla_latent_dim?: number;
  mla_rope_dim?: number;
  /** FP16/BF16 bytes of the weights of one transformer layer (attention + MLP; MoE: experts active per token) */
  weight_bytes_per_layer: number;
  /** FLOPs for one token through one layer's linear projections (2 x active params) */
  flops_per_token_per_layer: number;
  /** bytes of weights outside the layers (embeddings, LM head), FP16 */
  other_weight_bytes: number;
  sources: Record<string, string>;
}

export type Precision = 'fp16' | 'bf16' | 'int8' | 'int4' | 'int2';
export const PRECISION_BITS: Record<Precision, number> = { fp16: 16, bf16: 16, int8: 8, int4: 4, int2: 2 };

/** Values stored per token per layer for K and V together. */
export function kvElementsPerTokenLayer(m: ModelSpec): number {
  if (m.attention === 'mla') return (m.mla_latent_dim ?? 0) + (m.mla_rope_dim ?? 0);
  return 2 * m.kv_heads * m.head_dim;
}

/**
 * Bytes to store `tokens` tokens of one layer's KV at `bits` (16 = FP16, 8/4/2 = integer) with
 * asymmetric group quantization: each group of `groupSize` values carries an FP16 scale and an FP16
 * zero point (4 bytes). Packed integers: 8/bits values per byte.
 */
export function kvBytes(m: ModelSpec, tokens: number, bits: number, groupSize = 128): number {
  const elems = kvElementsPerTokenLayer(m) * tokens;
  if (bits === 0) return 0;
  if (bits >= 16) return elems * 2;
  const groups = Math.ceil(elems / groupSize);
  return Math.ceil((elems * bits) / 8) + groups * 4;
}
