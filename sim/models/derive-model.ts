import type { ModelSpec } from './model.js';
import type { ModelShape } from './model-shape.js';

/** Parameters of one layer's linear projections, active per token. */
export interface LayerParams {
  attention: number;
  /** MLP of a dense layer */
  denseMlp: number;
  /** MoE layer: router + the experts one token uses (routed top-k + shared); 0 without MoE */
  moeActive: number;
  /** active parameters per layer averaged over all layers (dense and MoE layers mixed) */
  averageActive: number;
}

const BYTES_FP16 = 2;

/**
 * Count the weights of one layer from the published shape. Only the linear projections count
 * (biases and norm weights are < 0.1% and left out).
 * - MHA/GQA: q and o are hidden x (q_heads·head_dim); k and v are hidden x (kv_heads·head_dim).
 * - MLA (DeepSeek): q_a hidden x q_lora, q_b q_lora x heads·(nope+rope) (or q hidden x heads·(nope+rope)
 *   when q_lora_rank is 0), kv_a hidden x (kv_lora + rope), kv_b kv_lora x heads·(nope + v),
 *   o heads·v x hidden.
 * - MLP: gated = 3 matrices hidden x intermediate, plain = 2.
 * - MoE: router hidden x routed_experts + (experts_per_token + shared_experts) experts.
 */
export function layerParams(s: ModelShape): LayerParams {
  let attention: number;
  if (s.attention === 'mla') {
    const m = s.mla!;
    const qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const q = m.q_lora_rank > 0 ? s.hidden * m.q_lora_rank + m.q_lora_rank * s.q_heads * qk : s.hidden * s.q_heads * qk;
    const kvA = s.hidden * (m.kv_lora_rank + m.qk_rope_head_dim);
    const kvB = m.kv_lora_rank * s.q_heads * (m.qk_nope_head_dim + m.v_head_dim);
    const o = s.q_heads * m.v_head_dim * s.hidden;
    attention = q + kvA + kvB + o;
  } else {
    const qo = 2 * s.hidden * s.q_heads * s.head_dim;
    const kv = 2 * s.hidden * s.kv_heads * s.head_dim;
    attention = qo + kv;
  }
  const matrices = s.mlp.kind === 'gated' ? 3 : 2;
  const denseMlp = matrices * s.hidden * s.mlp.intermediate;
  let moeActive = 0;
  let averageActive = attention + denseMlp;
  if (s.moe) {
    const e = s.moe;
    const expert = matrices * s.hidden * e.expert_intermediate;
    moeActive = s.hidden * e.routed_experts + (e.experts_per_token + e.shared_experts) * expert;
    const moeLayers = s.layers - e.dense_layers;
    averageActive = attention + (e.dense_layers * denseMlp + moeLayers * moeActive) / s.layers;
  }
  return { attention, denseMlp, moeActive, averageActive };
}

/** Parameters outside the layers: input embeddings, LM head (unless tied), learned positions. */
export function otherParams(s: ModelShape): number {
  return s.vocab * s.hidden * (s.tied_embeddings ? 1 : 2) + s.position_embeddings * s.hidden;
}

/** The simulator's ModelSpec from a published shape: FP16 bytes and 2·params FLOPs per token. */
export function deriveModel(s: ModelShape): ModelSpec {
  const p = layerParams(s);
  const perLayer = Math.round(p.averageActive);
  const how = s.moe
    ? `average over ${s.layers} layers (${s.moe.dense_layers} dense, ${s.layers - s.moe.dense_layers} MoE counting ` +
      `the router and the ${s.moe.experts_per_token} routed + ${s.moe.shared_experts} shared experts a token uses)`
    : 'per layer';
  const spec: ModelSpec = {
    name: s.name,
    description: s.description,
    layers: s.layers,
    hidden: s.hidden,
    q_heads: s.q_heads,
    kv_heads: s.kv_heads,
    head_dim: s.head_dim,
    attention: s.attention,
    weight_bytes_per_layer: perLayer * BYTES_FP16,
    flops_per_token_per_layer: 2 * perLayer,
    other_weight_bytes: otherParams(s) * BYTES_FP16,
    sources: {
      ...s.sources,
      weight_bytes_per_layer: `derived (sim/models/derive-model.ts): ${perLayer} linear-layer parameters ${how} x 2 bytes`,
      flops_per_token_per_layer: `derived: 2 FLOPs per active parameter (multiply + add) x ${perLayer}`,
      other_weight_bytes: `derived: (vocab x hidden x ${s.tied_embeddings ? '1 (tied)' : '2 (embeddings + LM head)'} + ${s.position_embeddings} position rows x hidden) x 2 bytes`,
    },
  };
  if (s.mla) {
    spec.mla_latent_dim = s.mla.kv_lora_rank;
    spec.mla_rope_dim = s.mla.qk_rope_head_dim;
  }
  return spec;
}
