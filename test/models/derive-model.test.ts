import { describe, expect, it } from 'vitest';
import { deriveModel, layerParams, otherParams } from '../../sim/models/derive-model.js';
import { getModel } from '../../sim/models/load-model.js';
import { MODEL_PRESET_FILES } from '../../sim/models/model-registry.js';
import { validateModelShape, type ModelShape } from '../../sim/models/model-shape.js';

const shape = (name: string): ModelShape => validateModelShape(MODEL_PRESET_FILES[name], name);
/** all weights of a model in parameters: layers x average active per layer + embeddings */
const totalParams = (name: string): number => {
  const m = getModel(name);
  return (m.layers * m.weight_bytes_per_layer + m.other_weight_bytes) / 2;
};

describe('layer weights from published shapes', () => {
  it('Llama-3-8B: q,o 4096x4096, k,v 4096x1024, 3 MLP matrices 4096x14336, at 2 bytes', () => {
    const params = 4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336;
    expect(params).toBe(218_103_808);
    const m = getModel('llama-3-8b');
    expect(m.weight_bytes_per_layer).toBe(params * 2);
    expect(m.flops_per_token_per_layer).toBe(params * 2);
    expect(m.other_weight_bytes).toBe(2 * 128256 * 4096 * 2); // embeddings + untied LM head
    // 8.03B published (the remaining 266,240 are norm weights, not counted)
    expect(totalParams('llama-3-8b')).toBe(8_029_995_008);
  });

  it('Llama-2-7B: 4 attention matrices 4096x4096 and 3 MLP 4096x11008, 6.74B in all', () => {
    expect(layerParams(shape('llama-2-7b')).averageActive).toBe(4 * 4096 ** 2 + 3 * 4096 * 11008);
    expect(totalParams('llama-2-7b')).toBe(6_738_149_376);
  });

  it('Llama-3-70B totals 70.55B parameters', () => {
    expect(totalParams('llama-3-70b')).toBe(70_552_387_584);
  });

  it('OPT-30B: 12 h^2 per layer (4 h^2 attention + 2 x h x 4h MLP), tied embeddings + 2050 positions', () => {
    const h = 7168;
    expect(getModel('opt-30b').weight_bytes_per_layer).toBe(12 * h * h * 2);
    expect(otherParams(shape('opt-30b'))).toBe((50272 + 2050) * h);
    expect(totalParams('opt-30b') / 1e9).toBeCloseTo(29.97, 2);
  });

  it('DeepSeek-V3: MLA projections, 3 dense layers + 58 MoE layers averaged, ~37B active', () => {
    const p = layerParams(shape('deepseek-v3'));
    // q_a 7168x1536 + q_b 1536x128x192 + kv_a 7168x576 + kv_b 512x128x256 + o 16384x7168
    expect(p.attention).toBe(11_010_048 + 37_748_736 + 4_128_768 + 16_777_216 + 117_440_512);
    expect(p.denseMlp).toBe(3 * 7168 * 18432);
    // router 7168x256 + (8 routed + 1 shared) experts of 3 x 7168 x 2048
    expect(p.moeActive).toBe(7168 * 256 + 9 * 3 * 7168 * 2048);
    expect(p.averageActive).toBeCloseTo(p.attention + (3 * p.denseMlp + 58 * p.moeActive) / 61, 6);
    const m = getModel('deepseek-v3');
    expect(m.weight_bytes_per_layer).toBe(Math.round(p.averageActive) * 2);
    expect(m.mla_latent_dim).toBe(512);
    expect(m.mla_rope_dim).toBe(64);
    // DeepSeek-V3 report: 37B activated parameters per token
    expect(totalParams('deepseek-v3') / 1e9).toBeGreaterThan(37);
    expect(totalParams('deepseek-v3') / 1e9).toBeLessThan(38);
  });

  it('without q compression an MLA model projects q straight from hidden', () => {
    const s = structuredClone(shape('deepseek-v3'));
    s.mla!.q_lora_rank = 0;
    const withQ = layerParams(shape('deepseek-v3')).attention;
    const direct = layerParams(s).attention;
    expect(withQ - direct).toBe(7168 * 1536 + 1536 * 128 * 192 - 7168 * 128 * 192);
  });

  it('records how the derived numbers were computed in sources', () => {
    const m = deriveModel(shape('llama-3-8b'));
    expect(m.sources.weight_bytes_per_layer).toContain('218103808');
    expect(m.sources.shape).toContain('config.json');
  });
});
