import { describe, expect, it } from 'vitest';
import { getModel } from '../../sim/models/load-model.js';
import { MODEL_PRESET_FILES } from '../../sim/models/model-registry.js';
import { validateModelShape } from '../../sim/models/model-shape.js';
import { validateModel } from '../../sim/models/validate-model.js';

function problems(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (e) {
    return (e as { problems: readonly string[] }).problems;
  }
  return [];
}

describe('validateModel', () => {
  it('names missing and unknown fields and bad numbers', () => {
    const m = getModel('llama-3-8b') as unknown as Record<string, unknown>;
    delete m.layers;
    m.weight_bytes = 1;
    m.other_weight_bytes = -5;
    expect(problems(() => validateModel(m, 'm.json'))).toEqual([
      'weight_bytes is not a known field (fields: name, description, layers, hidden, q_heads, kv_heads, head_dim, ' +
        'attention, weight_bytes_per_layer, flops_per_token_per_layer, other_weight_bytes, sources, mla_latent_dim, mla_rope_dim)',
      'layers is missing',
      'other_weight_bytes must be a number >= 0 (got -5)',
    ]);
    expect(() => validateModel(m, 'm.json')).toThrowError('m.json: layers is missing');
  });

  it('checks heads against the attention kind and the MLA widths', () => {
    const mha = { ...getModel('llama-2-7b'), kv_heads: 8 };
    expect(problems(() => validateModel(mha, 'x'))).toEqual(['kv_heads must equal q_heads = 32 for attention "mha" (got 8)']);
    const mla = getModel('deepseek-v3') as unknown as Record<string, unknown>;
    delete mla.mla_rope_dim;
    expect(problems(() => validateModel(mla, 'x'))).toEqual(['mla_rope_dim is missing (attention is "mla")']);
    const gqa = { ...getModel('llama-3-8b'), attention: 'sparse', mla_latent_dim: 512 };
    expect(problems(() => validateModel(gqa, 'x'))).toEqual(['attention must be one of mha, gqa, mla (got "sparse")']);
  });
});

describe('validateModelShape', () => {
  const ds = () => structuredClone(MODEL_PRESET_FILES['deepseek-v3']) as Record<string, any>;

  it('accepts every preset file', () => {
    for (const [name, raw] of Object.entries(MODEL_PRESET_FILES)) expect(validateModelShape(raw, name)).toBe(raw);
  });

  it('checks MLA and MoE consistency', () => {
    const s = ds();
    s.head_dim = 128;
    s.moe.dense_layers = 61;
    s.moe.experts_per_token = 300;
    s.mlp.kind = 'swiglu';
    expect(problems(() => validateModelShape(s, 'ds.json'))).toEqual([
      'mlp.kind must be one of gated, plain (got "swiglu")',
      'head_dim must equal mla.qk_nope_head_dim + mla.qk_rope_head_dim = 192 (got 128)',
      'moe.dense_layers must be < layers = 61 (got 61)',
      'moe.experts_per_token must be <= moe.routed_experts = 256 (got 300)',
    ]);
    const noMla = ds();
    delete noMla.mla;
    expect(problems(() => validateModelShape(noMla, 'ds.json'))).toEqual(['mla is missing (attention is "mla")']);
  });
});
