// The split attention kernel's tail wave (sim/attention-waves.ts): the split rule's counts worked out by
// hand for a 32-KV-head model on 264 slots, the steps they make in the price, and the profile field.
import { describe, expect, it } from 'vitest';
import { splitOf, tailChunks, tailWaveUs } from '../../sim/attention-waves.js';
import type { AttentionWaves, HardwareProfile } from '../../sim/hardware/profile.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { attentionTimeUs, interpolate } from '../../sim/roofline.js';

// Llama-2-7B's FP16 kernel on a 132-SM GPU at 2 resident blocks per SM: a block per KV head (32) and split, 4 warps per head
const L2: AttentionWaves = { slots: 264, blocks_per_split: 32, warps_per_head: 4, chunk_tokens: 16, us_per_chunk: 1.5, kernels: ['fp16', 'int8'] };
// Llama-3-8B's: 8 KV heads
const L3: AttentionWaves = { ...L2, blocks_per_split: 8 };

describe('the split rule', () => {
  it('asks for ceil(264 / 32) = 9 splits, trimmed to the fewest that keep the most chunks per warp', () => {
    // 192 chunks: 9 splits -> ceil(192 / 36) = 6 per warp -> ceil(192 / 24) = 8 splits (256 blocks: one wave)
    expect(splitOf(192, L2)).toEqual({ splits: 8, chunksPerWarp: 6 });
    // 193: 6 per warp -> ceil(193 / 24) = 9 splits (288 blocks: 24 in a second wave)
    expect(splitOf(193, L2)).toEqual({ splits: 9, chunksPerWarp: 6 });
    expect(splitOf(216, L2)).toEqual({ splits: 9, chunksPerWarp: 6 });
    // 217: ceil(217 / 36) = 7 per warp -> ceil(217 / 28) = 8 splits again, until 8 x 28 = 224
    expect(splitOf(217, L2)).toEqual({ splits: 8, chunksPerWarp: 7 });
    expect(splitOf(224, L2)).toEqual({ splits: 8, chunksPerWarp: 7 });
    expect(splitOf(225, L2)).toEqual({ splits: 9, chunksPerWarp: 7 });
    // short contexts: at most chunks / 8 splits (two chunks per warp at least)
    expect(splitOf(52, L2)).toEqual({ splits: 5, chunksPerWarp: 3 });
    expect(splitOf(7, L2)).toEqual({ splits: 1, chunksPerWarp: 2 });
  });

  it('gives a tail wave of chunks per warp where the splits ask for more blocks than the slots', () => {
    const at = (blocks: number) => tailChunks(blocks * 16, L2);
    expect([192, 193, 216, 217, 224, 225].map(at)).toEqual([0, 6, 6, 0, 0, 7]);
    // 20% and 40% of an 8k context: 103 and 205 blocks (3 and 6 chunks per warp); 10%: 52 blocks, 5 splits, no tail
    expect([103, 205, 52].map(at)).toEqual([3, 6, 0]);
    // a context of 16 x 192 + 1 tokens takes 193 chunks
    expect(tailChunks(192 * 16 + 1, L2)).toBe(6);
    expect(tailChunks(0, L2)).toBe(0);
    // past 288 blocks every split count is 9: the tail never leaves (the steps are those of the chunks per warp)
    for (let n = 289; n < 3000; n += 7) expect(tailChunks(n * 16, L2)).toBe(Math.ceil(n / 36));
  });

  it('never passes one wave with 8 KV heads (33 splits x 8 = 264 blocks at most)', () => {
    for (let n = 1; n <= 20000; n++) expect(tailChunks(n * 16, L3)).toBe(0);
  });
});

describe('the price', () => {
  const base: HardwareProfile = loadHardware('h100-pcie5');
  const curve = [
    { tokens: 1024, us: 15 },
    { tokens: 4096, us: 27 },
  ];
  const gpu = { ...base.gpu, attention_curve: curve };
  it('adds us_per_chunk x the tail chunks to the curve for an FP16 layer and a kernel of the same rule', () => {
    for (const [blocks, tail] of [
      [192, 0],
      [193, 6],
      [205, 6],
      [217, 0],
      [225, 7],
    ] as const) {
      const t = blocks * 16;
      expect(attentionTimeUs({ ...gpu, attention_waves: L2 }, t, 0, 0)).toBe(interpolate(curve, t) + 1.5 * tail);
      expect(tailWaveUs(t, L2)).toBe(1.5 * tail);
      expect(attentionTimeUs(gpu, t, 0, 0)).toBe(interpolate(curve, t));
    }
    // the kernels' own curves, timed at their contexts: FP16 at 192 blocks (no tail) and 225 (a 7-chunk tail)
    const fp16 = [
      { tokens: 192 * 16, us: 20 },
      { tokens: 225 * 16, us: 30 },
    ];
    const kernels = { fp16, int8: fp16.map((x) => ({ tokens: x.tokens, us: x.us + 4 })), int4: fp16.map((x) => ({ tokens: x.tokens, us: x.us - 5 })) };
    const g = { ...gpu, attention_kernels: kernels, attention_waves: L2 };
    const t = 193 * 16;
    const frac = 1 / 33;
    expect(attentionTimeUs(g, t, 0, 0, 'fp16')).toBeCloseTo(interpolate(curve, t) + 9, 12);
    // INT8 follows the rule: the curve, its tail, and its difference to FP16 as measured (4 us)
    expect(attentionTimeUs(g, t, 0, 0, 'int8')).toBeCloseTo(interpolate(curve, t) + 9 + 4, 12);
    // INT4 has a split of its own: its difference to FP16 less FP16's tails at FP16's points (0 and 7 x 1.5 us)
    const fp16Less = 20 + (30 - 1.5 * 7 - 20) * frac;
    const int4 = 15 + (25 - 15) * frac;
    expect(attentionTimeUs(g, t, 0, 0, 'int4')).toBeCloseTo(interpolate(curve, t) + int4 - fp16Less, 12);
    // (another price per chunk on the same curves: the FP16 points less their tails at that price)
    const g3 = { ...g, attention_waves: { ...L2, us_per_chunk: 3 } };
    expect(attentionTimeUs(g3, t, 0, 0, 'int4')).toBeCloseTo(interpolate(curve, t) + int4 - (20 + (30 - 3 * 7 - 20) * frac), 12);
    expect(attentionTimeUs(g, t, 0, 0, 'int4')).toBeCloseTo(interpolate(curve, t) + int4 - fp16Less, 12);
    // (the same without the tail wave priced: the difference as measured)
    expect(attentionTimeUs({ ...g, attention_waves: undefined }, t, 0, 0, 'int4')).toBeCloseTo(interpolate(curve, t) - 5, 12);
  });

  it('is a profile field checked by name, with the curve it adds to', () => {
    const p = (gpuOver: object) => ({ ...structuredClone(base), gpu: { ...base.gpu, ...gpuOver } });
    expect(validateProfile(p({ attention_curve: curve, attention_waves: L2 }), 'x.json').gpu.attention_waves).toEqual(L2);
    expect(() => validateProfile(p({ attention_waves: L2 }), 'x.json')).toThrow(/gpu.attention_waves prices the tail wave on top of gpu.attention_curve/);
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: { ...L2, slots: 26.4 } }), 'x.json')).toThrow(/gpu.attention_waves.slots must be an integer >= 1 \(got 26.4\)/);
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: { ...L2, us_per_chunk: -1 } }), 'x.json')).toThrow(/gpu.attention_waves.us_per_chunk must be a number >= 0/);
    const { chunk_tokens: _, ...short } = L2;
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: short }), 'x.json')).toThrow(/gpu.attention_waves.chunk_tokens is missing/);
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: { ...L2, wave: 1 } }), 'x.json')).toThrow(/gpu.attention_waves.wave is not a known field/);
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: { ...L2, kernels: ['int8'] } }), 'x.json')).toThrow(/gpu.attention_waves.kernels must list the kernels that follow the rule, "fp16" among them, each once and one of fp16, int8, int4/);
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: { ...L2, kernels: ['fp16', 'int9'] } }), 'x.json')).toThrow(/attention_waves.kernels must list/);
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: { ...L2, kernels: ['fp16', 'int8', 'int8'] } }), 'x.json')).toThrow(/attention_waves.kernels must list .* each once/);
    const { kernels: _k, ...noKernels } = L2;
    expect(() => validateProfile(p({ attention_curve: curve, attention_waves: noKernels }), 'x.json')).toThrow(/gpu.attention_waves.kernels is missing/);
  });
});
