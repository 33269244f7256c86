// The tail wave's rule against the dispatch itself (the addon's attentionPlan, host build), and its fit
// from phased layer chains: exact recovery from generated chains, the rule read from recorded plans, and
// the reasons a calibration gives for leaving it out.
import { describe, expect, it } from 'vitest';
import { attentionFits } from '../../hil/calibrate/calibrate.js';
import { fitTailWave, tailWaveOf, wavesRuleOf, withoutTailWave, type WavesRule } from '../../hil/calibrate/fit-tail-wave.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { attentionTimeUs } from '../../sim/roofline.js';
import type { ChainPlan, ChainPoint } from '../../hil/calibrate/measure.js';
import { splitOf, tailChunks } from '../../sim/attention-waves.js';
import { backendAvailability } from './availability.js';
import { addon, H100 } from './dispatch-facts.js';

const host = backendAvailability('host');
const shape = (kvHeads: number, qHeads: number, headDim = 128) => ({ qHeads, kvHeads, headDim, blockTokens: 16, groupSize: 128 });

describe.skipIf(!host.available)(`the split rule against the dispatch (host build)${host.available ? '' : ` — skipped: ${host.reason}`}`, () => {
  it("gives the dispatch's splits and chunks per warp for FP16 tables of 1 to 40 KV heads, two GPU sizes, 1 to 700 chunks", () => {
    let tails = 0;
    for (const [kv, q] of [
      [32, 32],
      [8, 32],
      [40, 40],
      [4, 16],
      [1, 4],
    ]) {
      for (const device of [H100, { ...H100, multiprocessors: 108 }]) {
        for (let chunks = 1; chunks <= 700; chunks += 3) {
          const p = addon().attentionPlan({ ...shape(kv, q), contextTokens: chunks * 16 - 5, uniformPrecision: 'fp16' }, {}, device);
          // the rule as a calibration reads it from a plan
          const rule: WavesRule = { slots: p.residentBlocks * device.multiprocessors, blocks_per_split: p.grid[1], warps_per_head: p.headWarps ? 1 : p.warpsPerBlock, chunk_tokens: 16 };
          expect(splitOf(chunks, rule), `${kv} kv heads, ${device.multiprocessors} SMs, ${chunks} chunks`).toEqual({ splits: p.splits, chunksPerWarp: p.chunksPerWarp });
          if (tailChunks(chunks * 16 - 5, rule) > 0) tails++;
        }
      }
    }
    // (the 32- and 40-head tables pass one wave at some of these contexts)
    expect(tails).toBeGreaterThan(0);
  });

  it('with one warp per KV head (fp16_head_warps on): a block per split, the head warps in it', () => {
    for (let chunks = 8; chunks <= 700; chunks += 5) {
      const p = addon().attentionPlan({ ...shape(8, 32), contextTokens: chunks * 16, uniformPrecision: 'fp16' }, { fp16_head_warps: 'on' }, H100);
      expect(p.headWarps).toBe(true);
      const rule: WavesRule = { slots: p.residentBlocks * 132, blocks_per_split: p.grid[1], warps_per_head: 1, chunk_tokens: 16 };
      expect(splitOf(chunks, rule)).toEqual({ splits: p.splits, chunksPerWarp: p.chunksPerWarp });
    }
  });
});

const RULE: WavesRule = { slots: 264, blocks_per_split: 32, warps_per_head: 4, chunk_tokens: 16 };
const PHASES = [-14, -10, -6, -2, 2, 6, 10, 14];
/** chains whose times are a level and slope per point plus l x the tail chunks, as measureChain records them */
function chains(l: number, points: number[], noise = (_i: number) => 0): ChainPoint[] {
  let k = 0;
  return points.map((tokens, p) => {
    const level = 10 + 3 * p;
    const slope = 0.05 + 0.01 * p;
    const at = (off: number) => level + slope * off + l * tailChunks(tokens + off * 16, RULE) + noise(k++);
    const around = PHASES.map(at);
    const mean = around.reduce((a, b) => a + b, 0) / around.length;
    return { tokens, bytes: tokens * 1024, us: mean, chain_us_per_layer: mean + 100, gemv_us_per_layer: 100, us_at_context: at(0), phases: PHASES, around_us: around };
  });
}

describe('the tail wave fit', () => {
  it("recovers us_per_chunk exactly from chains made by the model (each point's level and slope its own)", () => {
    const f = fitTailWave(chains(1.07, [2048, 3072, 4096, 6144]), RULE, 16);
    expect(f.us_per_chunk).toBeCloseTo(1.07, 10);
    expect(f.points).toBe(4);
    expect(f.contexts).toBe(36);
    expect(f.rms_with_us).toBeLessThan(1e-9);
    expect(f.rms_without_us).toBeGreaterThan(1);
  });

  it('is the least-squares value under noise: the residuals are orthogonal to the tail chunks', () => {
    const noisy = chains(0.9, [1024, 2048, 3072, 4096], (i) => Math.sin(i * 12.9898) * 0.3);
    const f = fitTailWave(noisy, RULE, 16);
    expect(f.us_per_chunk!).toBeGreaterThan(0.75);
    expect(f.us_per_chunk!).toBeLessThan(1.05);
    // a nudge either way raises the sum of squares (with each point's level and slope refitted)
    const sse = (l: number) => fitTailWave(chains(0, [1024, 2048, 3072, 4096]).map((c, i) => ({ ...c, us_at_context: noisy[i].us_at_context! - l * tailChunks(c.tokens, RULE), around_us: noisy[i].around_us!.map((y, j) => y - l * tailChunks(c.tokens + PHASES[j] * 16, RULE)) })), RULE, 16).rms_without_us;
    expect(sse(f.us_per_chunk!)).toBeLessThan(sse(f.us_per_chunk! + 0.01));
    expect(sse(f.us_per_chunk!)).toBeLessThan(sse(f.us_per_chunk! - 0.01));
    expect(sse(f.us_per_chunk!)).toBeCloseTo(f.rms_with_us, 12);
  });

  it('has nothing to fit where no context differs in its tail (8 KV heads), or no point was timed around', () => {
    expect(fitTailWave(chains(1, [2048, 4096]), { ...RULE, blocks_per_split: 8 }, 16).us_per_chunk).toBeUndefined();
    const plain = chains(1, [2048]).map(({ phases: _p, around_us: _a, us_at_context: _u, ...c }) => c);
    expect(fitTailWave(plain, RULE, 16)).toMatchObject({ points: 0, contexts: 0 });
  });

  it("takes each point's mean tail over the contexts its time is the mean of out of the chain and the curve time", () => {
    const c = chains(1.2, [1536, 3072]);
    const out = withoutTailWave(c, { ...RULE, us_per_chunk: 1.2 }, 16);
    // 3072 tokens = 192 blocks; around it 178 (5 chunks per warp, tail), 182-190 (none), 194-206 (6, tail)
    const mean3072 = PHASES.reduce((a, k) => a + tailChunks(3072 + k * 16, RULE), 0) / 8;
    expect(mean3072).toBe((5 + 4 * 6) / 8);
    expect(out[1].chain_us_per_layer).toBeCloseTo(c[1].chain_us_per_layer - 1.2 * mean3072, 12);
    expect(out[1].us).toBeCloseTo(c[1].us - 1.2 * mean3072, 12);
    // the chain then holds each point's level: the model's time without its tail, at the offsets' mean (0)
    expect(out[1].us).toBeCloseTo(10 + 3, 12);
    // a point timed at its context alone: that context's tail (1,648 tokens = 103 chunks: 9 splits of 3 chunks per warp, a tail)
    const alone = withoutTailWave([{ tokens: 1648, bytes: 0, us: 20, chain_us_per_layer: 120 }], { ...RULE, us_per_chunk: 1.2 }, 16);
    expect(tailChunks(1648, RULE)).toBe(3);
    expect(alone[0].chain_us_per_layer).toBeCloseTo(120 - 1.2 * 3, 12);
    expect(alone[0].us).toBeCloseTo(20 - 1.2 * 3, 12);
    // (96 blocks: 8 splits, no tail: as measured)
    expect(withoutTailWave([{ tokens: 1536, bytes: 0, us: 20, chain_us_per_layer: 120 }], { ...RULE, us_per_chunk: 1.2 }, 16)[0].chain_us_per_layer).toBe(120);
  });
});

describe('the rule read from recorded plans', () => {
  const planAt = (tokens: number, over: Partial<ChainPlan> = {}): ChainPlan => {
    const s = splitOf(Math.ceil(tokens / 16), RULE);
    return { tokens, kernel: 'mma-fp16', splits: s.splits, chunks_per_warp: s.chunksPerWarp, grid: [s.splits, 32], resident_blocks: 2, warps_per_block: 4, head_warps: false, ...over };
  };
  const withPlans = (cs: ChainPoint[], over: (t: number) => Partial<ChainPlan> = () => ({})) => cs.map((c) => ({ ...c, plans: [c.tokens, ...PHASES.map((k) => c.tokens + k * 16)].map((t) => planAt(t, over(t))) }));

  it('takes slots, blocks per split and warps per head from the plans, and prices the fit', () => {
    const m = { attention_in_situ: withPlans(chains(0.8765, [2048, 3072, 4096])), multiprocessors: 132 };
    expect(wavesRuleOf(m.attention_in_situ, 132)).toEqual({ rule: RULE });
    const r = tailWaveOf(m, 16);
    expect(r.waves).toEqual({ ...RULE, us_per_chunk: 0.877, kernels: ['fp16'] });
    expect(r.reason).toBeUndefined();
  });

  it('names why it leaves the tail wave out', () => {
    const cs = chains(1, [2048, 3072]);
    expect(tailWaveOf({ attention_in_situ: cs, multiprocessors: 132 }, 16)).toEqual({ reason: 'no attention plan recorded with the chains' });
    expect(tailWaveOf({ attention_in_situ: withPlans(cs) }, 16)).toEqual({ reason: 'no SM count' });
    // a split count the rule does not give (an option's): named with both counts
    expect(tailWaveOf({ attention_in_situ: withPlans(cs, (t) => (t === 2048 + 32 ? { splits: 4 } : {})), multiprocessors: 132 }, 16).reason).toBe('at 2080 tokens the dispatch chose 4 splits of 4 chunks per warp, the rule 9 of 4');
    expect(tailWaveOf({ attention_in_situ: withPlans(cs, (t) => (t === 3072 ? { resident_blocks: 3 } : {})), multiprocessors: 132 }, 16).reason).toMatch(/the plans differ in resident blocks, grid or warps \(at 2048 and 3072 tokens\)/);
    // a fitted price at or below 0 is not one
    const r = tailWaveOf({ attention_in_situ: withPlans(chains(-0.5, [2048, 3072])), multiprocessors: 132 }, 16);
    expect(r.waves).toBeUndefined();
    expect(r.reason).toBe('the fitted time per chunk is not above 0 (-0.500 us)');
    expect(tailWaveOf({ attention_in_situ: withPlans(chains(1, [2048])), multiprocessors: 132 }, 16).rule).toEqual(RULE);
  });
});

describe("the calibration's attention fields with the tail wave priced (attentionFits)", () => {
  const planAt = (tokens: number, resident = 2): ChainPlan => {
    const s = splitOf(Math.ceil(tokens / 16), { ...RULE, slots: resident * 132 });
    return { tokens, kernel: 'mma-fp16', splits: s.splits, chunks_per_warp: s.chunksPerWarp, grid: [s.splits, 32], resident_blocks: resident, warps_per_block: 4, head_warps: false };
  };
  const situ = chains(1.25, [1536, 2048, 3072, 4096]).map((c) => ({ ...c, plans: [c.tokens, ...PHASES.map((k) => c.tokens + k * 16)].map((t) => planAt(t)) }));
  const gpu = { ...loadHardware('h100-pcie5').gpu, linear_launch_us: 5, linear_GBps: 1000 };
  const model = { weight_bytes_per_layer: 4e6, flops_per_token_per_layer: 8e6 };
  // INT8 (the FP16 kernel's rule) and INT4 (4 resident blocks a SM: a rule of its own) timed in the layer
  // chains at 3,104 tokens (194 blocks: FP16 has a 6-chunk tail there) and at 4,096 (none)
  const kernels_in_situ = [
    { precision: 'int8' as const, tokens: 3104, bytes: 0, us: 24, chain_us_per_layer: 124, plans: [planAt(3104)] },
    { precision: 'int8' as const, tokens: 4096, bytes: 0, us: 26, chain_us_per_layer: 126, plans: [planAt(4096)] },
    { precision: 'int4' as const, tokens: 3104, bytes: 0, us: 20, chain_us_per_layer: 120, plans: [planAt(3104, 4)] },
    { precision: 'int4' as const, tokens: 4096, bytes: 0, us: 22, chain_us_per_layer: 122, plans: [planAt(4096, 4)] },
  ];
  const m = { attention_in_situ: situ, multiprocessors: 132, kernels: [], kernels_in_situ };

  it("holds each curve point's level (the time without the tail wave), the kernels as measured, and the kernels of the rule", () => {
    const f = attentionFits(m, 16, gpu, model);
    expect(f.waves.waves).toEqual({ ...RULE, us_per_chunk: 1.25, kernels: ['fp16', 'int8'] });
    // chains(): point p's level is 10 + 3p beyond the GEMV, its chain 100 more; the curve is the chain less the GEMV line
    expect(f.curve.map((x) => x.us)).toEqual([0, 1, 2, 3].map((p) => expect.closeTo(10 + 3 * p + 100 - f.layerLinearUs, 9)));
    // FP16 at 3,104 tokens (not a chain context) read off the chains without the tail wave (the levels 16
    // and 19 of 3,072's and 4,096's points), plus its own 6-chunk tail there; at 4,096 as timed there
    const fp16 = f.kernelCurves!.fp16!;
    expect(fp16.map((x) => x.tokens)).toEqual([3104, 4096]);
    expect(fp16[0].us).toBe(Math.round((16 + (3 * 32) / 1024 + 1.25 * 6) * 100) / 100);
    expect(fp16[1].us).toBe(Math.round(situ[3].us_at_context! * 100) / 100);
    // priced at 3,104 tokens: FP16 is the curve (the level between the points, less the GEMV line) plus the
    // tail; INT8 (the same rule) and INT4 (a rule of its own) come to their own chains as timed (124 and
    // 120 us with the GEMV's 100: 24 and 20 beyond it), to the 0.01 us the kernel curves are rounded to
    const p = { ...gpu, attention_curve: f.curve.map((x) => ({ tokens: x.tokens, us: x.us })), attention_kernels: f.kernelCurves, attention_waves: f.waves.waves };
    const level = 16 + (3 * 32) / 1024 + 100 - f.layerLinearUs;
    expect(attentionTimeUs(p, 3104, 0, 0, 'fp16')).toBeCloseTo(level + 1.25 * 6, 9);
    expect(Math.abs(attentionTimeUs(p, 3104, 0, 0, 'int8') + f.layerLinearUs - 124)).toBeLessThan(0.006);
    expect(Math.abs(attentionTimeUs(p, 3104, 0, 0, 'int4') + f.layerLinearUs - 120)).toBeLessThan(0.006);
    // at 4,096 (a chain context, no tail): INT8 and INT4 at 26 and 22 beyond the GEMV, up to the chain's own
    // time at the context against the point's level (the phases' slope: 0.08 x 0)
    expect(Math.abs(attentionTimeUs(p, 4096, 0, 0, 'int8') + f.layerLinearUs - 126)).toBeLessThan(0.006);
    expect(Math.abs(attentionTimeUs(p, 4096, 0, 0, 'int4') + f.layerLinearUs - 122)).toBeLessThan(0.006);
  });

  it('leaves every field as measured where nothing is priced', () => {
    const f = attentionFits({ ...m, multiprocessors: 0 }, 16, gpu, model);
    expect(f.waves).toEqual({ reason: 'no SM count' });
    expect(f.curve.map((x) => x.us)).toEqual(situ.map((c) => expect.closeTo(c.chain_us_per_layer - f.layerLinearUs, 9)));
    expect(f.kernelCurves!.fp16![1].us).toBe(Math.round(situ[3].us_at_context! * 100) / 100);
  });

  it.skipIf(!host.available)('takes the kernels that follow the rule from the dispatch itself: the table kernel, not the INT4 tensor-core kernel (host build)', () => {
    // Llama-2-7B's layer on 132 SMs, the dispatch's plans for INT8, INT2, INT4 and a mixed table at 2k-4k tokens
    const dev = { ...H100 };
    const planOf = (tokens: number, uniformPrecision?: 'int8' | 'int2' | 'int4'): ChainPlan => {
      const p = addon().attentionPlan({ ...shape(32, 32), contextTokens: tokens, ...(uniformPrecision ? { uniformPrecision } : {}) }, {}, dev);
      return { tokens, kernel: p.kernel, splits: p.splits, chunks_per_warp: p.chunksPerWarp, grid: p.grid, resident_blocks: p.residentBlocks, warps_per_block: p.warpsPerBlock, head_warps: p.headWarps };
    };
    const point = (precision: 'int8' | 'int2' | 'int4' | 'mixed', tokens: number) => ({ precision, tokens, bytes: 0, us: 1, chain_us_per_layer: 101, plans: [planOf(tokens, precision === 'mixed' ? undefined : precision)] });
    const ks = [2048, 3104, 4096].flatMap((t) => (['int8', 'int2', 'int4', 'mixed'] as const).map((k) => point(k, t)));
    expect(ks.filter((k) => k.precision === 'int4').map((k) => k.plans[0].resident_blocks)).toEqual([4, 4, 4]);
    const f = attentionFits({ ...m, kernels_in_situ: ks }, 16, gpu, model);
    expect(f.waves.waves!.kernels).toEqual(['fp16', 'int8', 'int2', 'mixed']);
  });

  it("counts a kernel as following the rule only where every point has plans, each the rule's", () => {
    const f = (ks: typeof kernels_in_situ) => attentionFits({ ...m, kernels_in_situ: ks }, 16, gpu, model).waves.waves!.kernels;
    expect(f(kernels_in_situ.map((k) => (k.tokens === 4096 && k.precision === 'int8' ? { ...k, plans: [] } : k)))).toEqual(['fp16']);
    expect(f(kernels_in_situ.map((k) => (k.precision === 'int8' ? { ...k, plans: [{ ...k.plans[0], splits: 4 }] } : k)))).toEqual(['fp16']);
    expect(f(kernels_in_situ.map((k) => (k.precision === 'int4' ? { ...k, plans: [planAt(k.tokens)] } : k)))).toEqual(['fp16', 'int8', 'int4']);
  });
});
