import { FieldChecks, describe } from '../hardware/field-checks.js';
import { ValidationError } from '../hardware/validation-error.js';
import type { AttentionKind } from './model.js';

/**
 * The published shape of a model (what its config.json says), from which derive-model.ts computes
 * the ModelSpec numbers. This is the format of the files in sim/models/presets/.
 */
export interface ModelShape {
  name: string;
  description: string;
  layers: number;
  hidden: number;
  q_heads: number;
  kv_heads: number;
  /** per-head width of q.k (MLA: qk_nope_head_dim + qk_rope_head_dim) */
  head_dim: number;
  attention: AttentionKind;
  /** MLA only (DeepSeek-V2/V3); q_lora_rank 0 means queries are not compressed */
  mla?: {
    q_lora_rank: number;
    kv_lora_rank: number;
    qk_nope_head_dim: number;
    qk_rope_head_dim: number;
    v_head_dim: number;
  };
  /** the dense MLP: "gated" = 3 matrices (SwiGLU: gate, up, down), "plain" = 2 (up, down) */
  mlp: { kind: 'gated' | 'plain'; intermediate: number };
  /** mixture of experts: layers after the first `dense_layers` replace the MLP by experts (same kind) */
  moe?: {
    dense_layers: number;
    routed_experts: number;
    experts_per_token: number;
    shared_experts: number;
    expert_intermediate: number;
  };
  vocab: number;
  /** true when the LM head shares the input embedding matrix */
  tied_embeddings: boolean;
  /** rows of a learned position-embedding table (0 for RoPE models) */
  position_embeddings: number;
  sources: Record<string, string>;
}

const REQUIRED = [
  'name', 'description', 'layers', 'hidden', 'q_heads', 'kv_heads', 'head_dim', 'attention', 'mlp',
  'vocab', 'tied_embeddings', 'position_embeddings', 'sources',
] as const;
const MLA_FIELDS = ['q_lora_rank', 'kv_lora_rank', 'qk_nope_head_dim', 'qk_rope_head_dim', 'v_head_dim'] as const;
const MOE_FIELDS = ['dense_layers', 'routed_experts', 'experts_per_token', 'shared_experts', 'expert_intermediate'] as const;
export const ATTENTION_KINDS: readonly AttentionKind[] = ['mha', 'gqa', 'mla'];

export function validateModelShape(value: unknown, source: string): ModelShape {
  const checks = new FieldChecks();
  const top = checks.object(value, '', REQUIRED, ['mla', 'moe']);
  if (top) {
    checks.string(top, 'name', '');
    checks.string(top, 'description', '', true);
    const layers = checks.integer(top, 'layers', '');
    for (const k of ['hidden', 'q_heads', 'kv_heads', 'head_dim', 'vocab'] as const) checks.integer(top, k, '');
    checks.integer(top, 'position_embeddings', '', 0);
    checks.boolean(top, 'tied_embeddings', '');
    const attention = checks.oneOf(top, 'attention', '', ATTENTION_KINDS);
    checkHeads(top, attention, checks);

    const mlp = 'mlp' in top ? checks.object(top.mlp, 'mlp', ['kind', 'intermediate']) : undefined;
    if (mlp) {
      checks.oneOf(mlp, 'kind', 'mlp', ['gated', 'plain'] as const);
      checks.integer(mlp, 'intermediate', 'mlp');
    }
    if (attention === 'mla' && !('mla' in top)) checks.add('mla is missing (attention is "mla")');
    if (attention !== undefined && attention !== 'mla' && 'mla' in top) {
      checks.add(`mla is only for attention "mla" (attention is "${attention}")`);
    }
    const mla = 'mla' in top ? checks.object(top.mla, 'mla', MLA_FIELDS) : undefined;
    if (mla) {
      checks.integer(mla, 'q_lora_rank', 'mla', 0);
      for (const k of MLA_FIELDS.slice(1)) checks.integer(mla, k, 'mla');
      const sum = (mla.qk_nope_head_dim as number) + (mla.qk_rope_head_dim as number);
      if (Number.isInteger(sum) && typeof top.head_dim === 'number' && top.head_dim !== sum) {
        checks.add(`head_dim must equal mla.qk_nope_head_dim + mla.qk_rope_head_dim = ${sum} (got ${describe(top.head_dim)})`);
      }
    }
    const moe = 'moe' in top ? checks.object(top.moe, 'moe', MOE_FIELDS) : undefined;
    if (moe) {
      const dense = checks.integer(moe, 'dense_layers', 'moe', 0);
      const routed = checks.integer(moe, 'routed_experts', 'moe');
      const perToken = checks.integer(moe, 'experts_per_token', 'moe');
      checks.integer(moe, 'shared_experts', 'moe', 0);
      checks.integer(moe, 'expert_intermediate', 'moe');
      if (dense !== undefined && layers !== undefined && dense >= layers) {
        checks.add(`moe.dense_layers must be < layers = ${layers} (got ${dense})`);
      }
      if (routed !== undefined && perToken !== undefined && perToken > routed) {
        checks.add(`moe.experts_per_token must be <= moe.routed_experts = ${routed} (got ${perToken})`);
      }
    }
    checks.stringMap(top, 'sources', '');
  }
  if (checks.problems.length > 0) throw new ValidationError(source, checks.problems);
  return value as ModelShape;
}

/** mha: kv_heads = q_heads; gqa: kv_heads divides q_heads; mla: kv_heads = q_heads (decompressed). */
export function checkHeads(top: Record<string, unknown>, attention: AttentionKind | undefined, checks: FieldChecks): void {
  const q = top.q_heads;
  const kv = top.kv_heads;
  if (typeof q !== 'number' || typeof kv !== 'number' || attention === undefined) return;
  if ((attention === 'mha' || attention === 'mla') && kv !== q) {
    checks.add(`kv_heads must equal q_heads = ${q} for attention "${attention}" (got ${kv})`);
  }
  if (attention === 'gqa' && (kv >= q || q % kv !== 0)) {
    checks.add(`kv_heads must divide q_heads = ${q} and be smaller for attention "gqa" (got ${kv})`);
  }
}
