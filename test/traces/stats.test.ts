import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceStep } from '../../traces/format.js';
import { computeTraceStats, formatTraceStats } from '../../traces/trace-stats.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { header, tmpDir } from './raw-kvt.js';

const f32 = (...xs: number[]) => Float32Array.from(xs);
const none = new Float32Array(0);
const H = (xs: Float32Array) => xs.reduce((s, v) => s - v * Math.log(v), 0);

// dense, block 4, prompt 14: context 15 and 16 tokens => 4 blocks at both steps; 2 layers
const denseHeader = header({ layers: 2, block_size: 4, prompt_tokens: 14, steps: 2 });
const m0 = f32(0.5, 0.15, 0.3, 0.05);
const m1 = f32(0.4, 0.45, 0.1, 0.05);
const flat = f32(0.25, 0.25, 0.25, 0.25);
const denseSteps: TraceStep[] = [
  { step: 0, contextTokens: 15, layers: [m0, flat].map((mass) => ({ nBlocks: 4, idx: null, mass, remainder: 0, normFrom: 0, norms: none })) },
  { step: 1, contextTokens: 16, layers: [m1, flat].map((mass) => ({ nBlocks: 4, idx: null, mass, remainder: 0, normFrom: 0, norms: none })) },
];

// topk k = 3, block 1, prompt 9: 10 blocks at step 0, 11 at step 1
const topkHeader = header({ layers: 1, block_size: 1, prompt_tokens: 9, steps: 2, encoding: 'topk', topk: 3 });
const topkSteps: TraceStep[] = [
  { step: 0, contextTokens: 10, layers: [{ nBlocks: 10, idx: Uint32Array.of(7, 0, 9), mass: f32(0.4, 0.2, 0.1), remainder: 0.3, normFrom: 0, norms: none }] },
  { step: 1, contextTokens: 11, layers: [{ nBlocks: 11, idx: Uint32Array.of(7, 0, 3), mass: f32(0.3, 0.3, 0.2), remainder: 0.2, normFrom: 0, norms: none }] },
];

describe('computeTraceStats on hand-made traces', () => {
  it('dense: every statistic equals the hand-computed value', () => {
    const st = computeTraceStats(denseSteps, { topBlocks: 2, sparseThreshold: 0.25, blockSize: 4 });
    expect(st.steps).toBe(2);
    expect(st.encoding).toBe('dense');
    const [a, b] = st.layers;
    expect(a!.rows).toBe(2);
    expect(a!.sinkMass).toBeCloseTo((0.5 + 0.4) / 2, 6);
    // cover 50%: {0.5} and {0.45, 0.4}; 90%: 3 and 3 blocks; 99%: all 4
    expect(a!.coverBlocks).toEqual({ p50: 1.5, p90: 3, p99: 4 });
    expect(a!.coverTokens).toEqual({ p50: 6, p90: 12, p99: 16 });
    // < 25% of the row max: step 0 {0.05} of 4, step 1 {0.1, 0.05} of 4
    expect(a!.sparsity).toBeCloseTo((1 / 4 + 2 / 4) / 2, 12);
    // top 2: {0, 2} then {1, 0}
    expect(a!.persistence).toBe(0.5);
    expect(a!.entropyNats).toBeCloseTo((H(m0) + H(m1)) / 2, 6);
    expect(a!.recentMass.last1).toBeCloseTo(0.05, 6);
    expect(a!.recentMass.last4).toBeCloseTo(1, 6);
    expect(a!.recentMass.last16).toBeCloseTo(1, 6);
    // the flat layer: ties go to the lower block indices, so the top set is {0, 1} at both steps
    expect(b!.sinkMass).toBe(0.25);
    expect(b!.coverBlocks).toEqual({ p50: 2, p90: 4, p99: 4 });
    expect(b!.sparsity).toBe(0);
    expect(b!.persistence).toBe(1);
    expect(b!.entropyNats).toBeCloseTo(Math.log(4), 12);
  });

  it('topk: spreads the remainder evenly over the unlisted blocks', () => {
    const st = computeTraceStats(topkSteps, { topBlocks: 3, sparseThreshold: 0.2 });
    expect(st.encoding).toBe('topk');
    expect(st.remainderSpread).toBe(true);
    const [l] = st.layers;
    const u0 = 0.3 / 7;
    const u1 = 0.2 / 8;
    expect(l!.sinkMass).toBeCloseTo((0.2 + 0.3) / 2, 6);
    // step 0: 0.4 + 0.2 >= 0.5 (2); 0.7 + 5 x 0.3/7 >= 0.9 (8); 0.7 + 7 x 0.3/7 (10)
    // step 1: 0.3 + 0.3 (2); 0.8 + 4 x 0.025 (7); 0.8 + 8 x 0.025 (11)
    expect(l!.coverBlocks).toEqual({ p50: 2, p90: 7.5, p99: 10.5 });
    // < 20% of the max: the unlisted blocks (7 of 10, then 8 of 11)
    expect(l!.sparsity).toBeCloseTo((7 / 10 + 8 / 11) / 2, 12);
    // top 3: {7, 0, 9} then {0, 7, 3}
    expect(l!.persistence).toBeCloseTo(2 / 3, 12);
    const e0 = H(f32(0.4, 0.2, 0.1)) - 7 * u0 * Math.log(u0);
    const e1 = H(f32(0.3, 0.3, 0.2)) - 8 * u1 * Math.log(u1);
    expect(l!.entropyNats).toBeCloseTo((e0 + e1) / 2, 6);
    // last 1: block 9 (0.1), then block 10 (unlisted); last 4: {6..9} = 0.4 + 0.1 + 2 u0, then {7..10} = 0.3 + 3 u1
    expect(l!.recentMass.last1).toBeCloseTo((0.1 + u1) / 2, 6);
    expect(l!.recentMass.last4).toBeCloseTo((0.5 + 2 * u0 + 0.3 + 3 * u1) / 2, 6);
    expect(l!.recentMass.last16).toBeCloseTo(1, 6);
    // the top set is capped at the listed blocks
    expect(computeTraceStats(topkSteps, { topBlocks: 5 }).layers[0]!.persistence).toBeCloseTo(2 / 3, 12);
    // the default top 10% of 10-11 blocks is one block: {7}, then {0} (7 and 0 tie at 0.3: the lower index)
    expect(computeTraceStats(topkSteps).layers[0]!.persistence).toBe(0);
  });

  it('gives the same result from a file as from the steps, with the header supplying block size', () => {
    const file = path.join(tmpDir(), 'tiny.kvt');
    const w = new TraceWriter(file, denseHeader);
    for (const s of denseSteps) w.writeStep(s);
    w.close();
    const fromFile = computeTraceStats(file, { topBlocks: 2, sparseThreshold: 0.25 });
    const fromSteps = computeTraceStats(denseSteps, { topBlocks: 2, sparseThreshold: 0.25, blockSize: 4 });
    expect(fromFile.layers).toEqual(fromSteps.layers);
    expect(fromFile.source).toBe(file);
  });

  it('averages KV groups into their layer', () => {
    const h = header({ layers: 1, kv_groups: 2, block_size: 4, prompt_tokens: 14, steps: 1 });
    const st = computeTraceStats({ header: h, [Symbol.iterator]: () => [denseSteps[0]!][Symbol.iterator]() });
    expect(st.layers.length).toBe(1);
    expect(st.layers[0]!.rows).toBe(2);
    expect(st.layers[0]!.sinkMass).toBeCloseTo((0.5 + 0.25) / 2, 6);
    expect(st.layers[0]!.persistence).toBeNull();
  });

  it('formats a readable table with one line per layer, a mean line and the topk note', () => {
    const text = formatTraceStats(computeTraceStats(denseSteps, { topBlocks: 2, blockSize: 4 }));
    const lines = text.split('\n');
    expect(lines[0]).toBe('steps: 2 steps, 2 layers, dense encoding, block 4 tokens');
    expect(lines[1]!.trim().split(/\s+/)).toEqual(['layer', 'sink', 'cov50', 'cov90', 'cov99', 'tok90', 'sparse', 'persist', 'entropy', 'last1', 'last4', 'last16']);
    expect(lines[2]!.trim().split(/\s+/).slice(0, 5)).toEqual(['0', '0.4500', '1.5', '3.0', '4.0']);
    expect(lines[4]!.trim().startsWith('mean')).toBe(true);
    expect(text).toContain('top 2 blocks');
    expect(text).not.toContain('remainder is spread');
    expect(formatTraceStats(computeTraceStats(topkSteps))).toContain('the remainder is spread evenly over the unlisted blocks');
  });

  it('rejects bad options', () => {
    expect(() => computeTraceStats(denseSteps, { topFraction: 0 })).toThrow(/topFraction must be in \(0, 1\], got 0/);
    expect(() => computeTraceStats(denseSteps, { topBlocks: 1.5 })).toThrow(/topBlocks must be an integer >= 1, got 1\.5/);
  });
});
