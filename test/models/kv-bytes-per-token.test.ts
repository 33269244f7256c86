import { describe, expect, it } from 'vitest';
import { kvBytesPerToken } from '../../sim/models/kv-bytes-per-token.js';
import { getModel } from '../../sim/models/load-model.js';
import { kvBytes } from '../../sim/models/model.js';

describe('kvBytesPerToken', () => {
  it('Llama-2-7B FP16: 2 x 32 layers x 32 heads x 128 x 2 bytes = 0.5 MiB', () => {
    expect(kvBytesPerToken(getModel('llama-2-7b'), 16)).toBe(2 * 32 * 32 * 128 * 2);
    expect(kvBytesPerToken(getModel('llama-2-7b'), 16)).toBe(524_288);
  });

  it('GQA models store only their KV heads: Llama-3-8B 128 KiB, Llama-3-70B 320 KiB per token', () => {
    expect(kvBytesPerToken(getModel('llama-3-8b'), 16)).toBe(2 * 32 * 8 * 128 * 2);
    expect(kvBytesPerToken(getModel('llama-3-70b'), 16)).toBe(2 * 80 * 8 * 128 * 2);
  });

  it('DeepSeek-V3 MLA stores 512 + 64 values per layer: 576 x 2 bytes x 61 layers', () => {
    expect(kvBytesPerToken(getModel('deepseek-v3'), 16)).toBe(70_272);
  });

  it('adds 4 bytes of scale and zero point per group when quantized', () => {
    const m = getModel('llama-2-7b');
    // 8192 values per layer: INT4 = 4096 B + 64 groups x 4 B
    expect(kvBytesPerToken(m, 4, 128)).toBe(32 * (4096 + 64 * 4));
    // INT8, groups of 64: 8192 B + 128 x 4 B
    expect(kvBytesPerToken(m, 8, 64)).toBe(32 * (8192 + 128 * 4));
    // DeepSeek-V3 INT2: 576 values = 144 B + ceil(576/128) = 5 groups
    expect(kvBytesPerToken(getModel('deepseek-v3'), 2)).toBe(61 * (144 + 5 * 4));
    expect(kvBytesPerToken(m, 0)).toBe(0);
  });

  it('is one token of kvBytes per layer, times the layers', () => {
    const m = getModel('mistral-7b');
    expect(kvBytesPerToken(m, 4, 32)).toBe(m.layers * kvBytes(m, 1, 4, 32));
  });
});
