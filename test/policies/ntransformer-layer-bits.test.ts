import { describe, expect, it } from 'vitest';
import { groupEntropy } from '../../policies/attention-entropy.js';
import { allocateLayerBits } from '../../policies/layer-bits.js';
import { ntransformer } from '../../policies/ntransformer.js';
import { resolveOptions } from '../../policies/registry.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { tinyModel } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

const all = (n: number) => new Uint8Array(n).fill(1);

describe('attention entropy of an observed row', () => {
  it('uniform over n attended blocks = ln n; two halves = ln 2; one block = 0; only attended blocks count, renormalized', () => {
    expect(groupEntropy({ idx: null, mass: new Float32Array(17).fill(1 / 17), uniform: 0 }, all(17), 17)).toBeCloseTo(Math.log(17), 6);
    expect(groupEntropy({ idx: null, mass: Float32Array.from([0, 0.5, 0.5, 0]), uniform: 0 }, all(4), 4)).toBeCloseTo(Math.log(2), 12);
    expect(groupEntropy({ idx: null, mass: Float32Array.from([1, 0, 0]), uniform: 0 }, all(3), 3)).toBe(0);
    // block 3 not attended: 0.25 / 0.25 / 0.25 renormalized to thirds
    expect(groupEntropy({ idx: null, mass: new Float32Array(4).fill(0.25), uniform: 0 }, Uint8Array.from([1, 1, 1, 0]), 4)).toBeCloseTo(Math.log(3), 6);
  });

  it('sparse rows: listed masses plus `uniform` on each unlisted attended block', () => {
    // blocks 0 and 5 listed at 0.3 each, 4 unlisted attended blocks at 0.1 each (block 2 not attended)
    const attended = Uint8Array.from([1, 1, 0, 1, 1, 1, 1]);
    const h = groupEntropy({ idx: Uint32Array.from([0, 5]), mass: Float32Array.from([0.3, 0.3]), uniform: 0.1 }, attended, 7);
    const p = [0.3, 0.3, 0.1, 0.1, 0.1, 0.1];
    const total = 1.0;
    expect(h).toBeCloseTo(-p.reduce((s, x) => s + (x / total) * Math.log(x / total), 0), 6);
    // the attended count, when the caller knows it, replaces the count over the mask
    expect(groupEntropy({ idx: Uint32Array.from([0, 5]), mass: Float32Array.from([0.3, 0.3]), uniform: 0.1 }, attended, 7, 6)).toBe(h);
    expect(groupEntropy({ idx: Uint32Array.from([0, 5]), mass: Float32Array.from([0.3, 0.3]), uniform: 0.1 }, attended, 7, 4)).not.toBe(h);
  });
});

describe('per-layer bits: greedy by marginal error per byte', () => {
  // two layers, 10 quantizable blocks of 64 B at 16 bits, 36 at 8, 20 at 4, 12 at 2; error 0 / 0.01 / 0.1 / 0.5
  const size: Record<number, number> = { 16: 64, 8: 36, 4: 20, 2: 12 };
  const err: Record<number, number> = { 16: 0, 8: 0.01, 4: 0.1, 2: 0.5 };
  const problem = (budget: number, sensitivity: number[], current = [16, 16]) => ({
    sensitivity,
    current,
    bytesAt: (_l: number, b: number) => 10 * size[b],
    errorAt: (b: number) => err[b],
    budget,
  });

  it('the least sensitive layer steps down first; each step is the smallest Δerror / Δbytes', () => {
    // 1280 B at 16 bits. Step 1: 16->8 saves 280 B at 0.01·w: layer 1 (w 0.25) < layer 0 (w 1) -> 1000 B
    expect(allocateLayerBits(problem(1000, [1, 0.25]))).toEqual({ bits: [16, 8], bytes: 1000, feasible: true, steps: [[1, 16, 8]] });
    // step 2: layer 0 16->8: 0.01/280 = 3.6e-5; layer 1 8->4: 0.25·0.09/160 = 1.4e-4 -> layer 0 (720 B);
    // step 3: layer 0 8->4: 0.09/160 = 5.6e-4 vs layer 1 1.4e-4 -> layer 1 (560 B)
    expect(allocateLayerBits(problem(560, [1, 0.25]))).toEqual({ bits: [8, 4], bytes: 560, feasible: true, steps: [[1, 16, 8], [0, 16, 8], [1, 8, 4]] });
  });

  it('equal sensitivity: ties go to the lowest layer; bits never rise; too small a budget is reported infeasible at 2 bits', () => {
    expect(allocateLayerBits(problem(1000, [1, 1])).bits).toEqual([8, 16]);
    expect(allocateLayerBits(problem(1e9, [1, 1], [4, 16]))).toEqual({ bits: [4, 16], bytes: 840, feasible: true, steps: [] });
    expect(allocateLayerBits(problem(100, [1, 0.25]))).toMatchObject({ bits: [2, 2], bytes: 240, feasible: false });
    expect(allocateLayerBits({ ...problem(500, [1, 0.25]), minBits: 4 })).toMatchObject({ bits: [4, 4], bytes: 400, feasible: true });
  });
});

describe('ntransformer: a sharp and a broad layer under a KV budget', () => {
  // tiny machine: 4-token blocks of 64 B (16 bits), 36 B (8), 20 B (4), 12 B (2) with group 128; prompt 64 tokens:
  // 17 blocks at steps 0 and 1, of which 15 quantizable (the sink and the block being written stay FP16).
  // Layer 0 is sharp: half the mass on block 1, half on block 2 (H = ln 2, w = 0.707).
  // Layer 1 is broad: uniform (H = ln 16 at prefill, ln 17 after: w = 0.25, then 0.243).
  // Bytes per layer: 16 bits 1088, 8 bits 668, 4 bits 428, 2 bits 308. Rotated errors (G = 128, measured):
  // e8 = 0.0079, e4 = 0.134, e2 = 0.673. Greedy order: L1 16->8, L0 16->8, L1 8->4, L0 8->4, L1 4->2, L0 4->2.
  const massOf = (_s: number, l: number, n: number) => (l === 0 ? Array.from({ length: n }, (_, b) => (b === 1 || b === 2 ? 0.5 : 0)) : Array(n).fill(1 / n));
  const run = (budgetBlocks: number) => replayPolicy(ntransformer, budgetBlocks, { prompt: 64, steps: 2, layers: 2, massOf });
  const layerBits = (r: ReturnType<typeof run>, l: number) => r.bits(l)[1];

  it.each([
    // budget = 2 layers x budgetBlocks x 64 B
    [16, 16, 8], // 2048 B: 1088 + 668 = 1756
    [9, 8, 4], // 1152 B: 668 + 428 = 1096
    [6, 4, 2], // 768 B: 428 + 308 = 736
    [5, 2, 2], // 640 B: 308 + 308 = 616
  ])('budget %i blocks per layer: sharp layer %i bits, broad layer %i bits', (budgetBlocks, sharp, broad) => {
    const r = run(budgetBlocks);
    expect(layerBits(r, 0)).toBe(sharp);
    expect(layerBits(r, 1)).toBe(broad);
    // every complete block but the sink at the layer's bits, the block being written at 16
    for (const [l, b] of [[0, sharp], [1, broad]]) expect(r.bits(l)).toEqual([16, ...Array(15).fill(b), 16]);
    expect(r.cache.used[0]).toBeLessThanOrEqual(2 * budgetBlocks * 64);
    // quality: the broad layer's error is its bits' rotated error over the 15 of 17 quantized blocks it attends evenly
    const e = (bits: number) => defaultErrorTable().relError(bits, 128, true);
    expect(r.qualities[1].quant_error).toBeCloseTo((e(sharp) + (15 / 17) * e(broad)) / 2, 6);
  });

  it('the sensitivity direction matters: with the layers swapped, the other layer keeps more bits', () => {
    const swapped = replayPolicy(ntransformer, 9, { prompt: 64, steps: 2, layers: 2, massOf: (s, l, n) => massOf(s, 1 - l, n) });
    expect([swapped.bits(0)[1], swapped.bits(1)[1]]).toEqual([4, 8]);
  });

  it('4 blocks per layer (512 B) cannot fit even at 2 bits (616 B): both at 2 bits, the oldest blocks beyond an equal share go to DRAM', () => {
    const r = run(4);
    expect([r.bits(0)[1], r.bits(1)[1]]).toEqual([2, 2]);
    // each layer keeps at most 256 B in HBM: at step 0 the new block (64 B) pushes 244 + 64 B over, so blocks 1..5 (5 x 12 B) go to DRAM
    for (const l of [0, 1]) {
      expect(r.tiers(l).slice(0, 7)).toEqual([0, 1, 1, 1, 1, 1, 0]);
      expect(r.cache.bytesIn(l, 0)).toBeLessThanOrEqual(256);
      expect(r.acts('demote:dram:2', -1, l)).toEqual([]);
      expect(r.acts('demote:dram:2', 0, l)).toEqual([1, 2, 3, 4, 5].map((b) => `${l}:${b}`));
    }
  });

  it('streams INT4 weights by default, rotates, and refuses a bad min_bits naming the choices', () => {
    const quantRelError = (b: number, g: number, r: boolean) => defaultErrorTable().relError(b, g, r);
    const setup = { tiers: ['hbm', 'dram'], layers: 2, model: tinyModel, quantRelError } as never;
    const p = ntransformer.create(resolveOptions(ntransformer, {}) as never, setup);
    expect(p.weights).toEqual({ tier: 'dram', buffers: 2, layerBytes: 266, otherBytes: 0, residentLayers: 0 });
    expect(p.quant).toEqual({ rotation: true });
    expect(() => ntransformer.create(resolveOptions(ntransformer, { min_bits: 3 }) as never, setup)).toThrow(/option min_bits must be one of 16, 8, 4, 2 \(got 3\)/);
    const noQuality = { tiers: ['hbm', 'dram'], layers: 2, model: tinyModel } as never;
    expect(() => ntransformer.create(resolveOptions(ntransformer, {}) as never, noQuality)).toThrow(/needs the quality model's quantization error \(setup.quantRelError\)/);
  });
});
