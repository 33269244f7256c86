/**
 * KV-head groups in the replay: a trace step holds layers x kv_groups rows (row = layer * kv_groups +
 * group); the driver hands each layer its own groups' rows, policies observe the exact group mean and
 * each group, and recall is computed per group and averaged.
 */
import { describe, expect, it } from 'vitest';
import { h2o } from '../../policies/h2o.js';
import type { Observation, PolicyDefinition, PolicyView } from '../../policies/policy.js';
import { streamingLlm } from '../../policies/streaming-llm.js';
import { GroupMean } from '../../sim/group-mean.js';
import { blocksFor, type LayerAttention, type TraceHeader, type TraceStep } from '../../traces/format.js';
import { generatedHeader, generateSteps } from '../../traces/generator.js';
import { tinyHeader } from '../helpers/tiny.js';
import { replayPolicy } from '../policies/harness.js';

const dense = (n: number, mass: number[], norms?: number[]): LayerAttention => ({
  nBlocks: n,
  idx: null,
  mass: Float32Array.from(mass),
  remainder: 0,
  normFrom: 0,
  norms: Float32Array.from(norms ?? Array(n).fill(1)),
});

/** Steps with the same rows (given per row) at every step; 4-token blocks. */
function constantSteps(h: TraceHeader, rows: (n: number) => LayerAttention[]): TraceStep[] {
  return Array.from({ length: h.steps }, (_, s) => {
    const ctx = h.prompt_tokens + s + 1;
    return { step: s, contextTokens: ctx, layers: rows(blocksFor(ctx, h.block_size)) };
  });
}

/** A policy that records what it was shown (copies: the driver reuses its objects). */
function recorder() {
  const seen: { step: number; layer: number; mass: number[]; groups: number[][]; uniform: number; groupUniform: number[] }[] = [];
  const views: { step: number; layer: number; keyNorms: number[]; groupKeyNorms: number[][] }[] = [];
  const def: PolicyDefinition = {
    name: 'recorder',
    description: '',
    source: '',
    options: [],
    create: () => ({
      name: 'recorder',
      decide(v: PolicyView) {
        views.push({ step: v.step, layer: v.layer, keyNorms: Array.from(v.keyNorms.subarray(0, v.nBlocks)), groupKeyNorms: v.groupKeyNorms.map((k) => Array.from(k.subarray(0, v.nBlocks))) });
      },
      observe(o: Observation) {
        seen.push({
          step: o.step,
          layer: o.layer,
          mass: Array.from(o.mass, (m) => +m.toFixed(6)),
          groups: o.groups.map((g) => Array.from(g.mass, (m) => +m.toFixed(6))),
          uniform: o.uniform,
          groupUniform: o.groups.map((g) => g.uniform),
        });
      },
    }),
  };
  return { def, seen, views };
}

describe('KV groups: two groups that disagree (hand-computed)', () => {
  // One layer, two groups, 4-token blocks, prompt 24 tokens (blocks 0..5); steps 0 and 1 have 25 and
  // 26 tokens: 7 blocks, block 6 created at step 0. Budget 6 blocks, so step 0 must drop one block.
  //            block:  0     1     2     3     4     5     6
  const g0 = [0.05, 0.40, 0.35, 0.00, 0.05, 0.05, 0.10];
  const g1 = [0.05, 0.00, 0.35, 0.40, 0.05, 0.05, 0.10];
  const h: TraceHeader = { ...tinyHeader(24, 2, 1), kv_groups: 2 };
  const trace = constantSteps(h, (n) => [dense(n, g0, [1, 2, 9, 1, 1, 1, 1].slice(0, n)), dense(n, g1, [3, 1, 1, 1, 1, 1, 1].slice(0, n))]);

  it('StreamingLLM drops the oldest non-sink block (1): recall (0.60 + 1.00) / 2 = 0.80 per step', () => {
    // group 0 loses its 0.40 on block 1, group 1 loses nothing; reading only row 0 would give 0.60
    const r = replayPolicy(streamingLlm, 6, { fullHeader: h, trace });
    expect(r.log.filter((a) => a.what === 'evict').map((a) => [a.step, a.args[1]])).toEqual([[0, 1]]);
    expect(r.results.map((x) => +x.recall[0]!.toFixed(6))).toEqual([0.8, 0.8]);
  });

  it('H2O keeps each group\'s top heavy hitter (1 for group 0, 3 for group 1) and drops block 2: recall 0.65', () => {
    // sink block 0; window round(6 x 0.5) = 3 blocks (4..6); candidates 1, 2, 3 with one to drop.
    // Scores after the prefill observation: group 0: 1 = 0.40, 2 = 0.35, 3 = 0; group 1: 1 = 0, 2 = 0.35, 3 = 0.40.
    // Ranks: group 0: 1, 2, 3; group 1: 3, 2, 1. Best (rank, group): block 1 (1, g0), block 3 (1, g1),
    // block 2 (2, g0): block 2 goes. Each group then misses 0.35: recall 0.65. (On the group mean,
    // 1 = 3 = 0.20 < 2 = 0.35, H2O would drop block 1: recall (0.60 + 1.00) / 2 = 0.80.)
    const r = replayPolicy(h2o, 6, { fullHeader: h, trace });
    expect(r.log.filter((a) => a.what === 'evict').map((a) => [a.step, a.args[1]])).toEqual([[0, 2]]);
    expect(r.results.map((x) => +x.recall[0]!.toFixed(6))).toEqual([0.65, 0.65]);
  });

  it('the policy observes the exact group mean and each group; key norms per group, the layer\'s the largest', () => {
    const rec = recorder();
    replayPolicy(rec.def, 10, { fullHeader: h, trace });
    const step0 = rec.seen.find((o) => o.step === 0)!;
    expect(step0.mass).toEqual([0.05, 0.2, 0.35, 0.2, 0.05, 0.05, 0.1]);
    expect(step0.groups).toEqual([g0, g1]);
    expect([step0.uniform, ...step0.groupUniform]).toEqual([0, 0, 0]);
    const v = rec.views.find((x) => x.step === 0)!;
    expect(v.groupKeyNorms.map((k) => k.slice(0, 3))).toEqual([
      [1, 2, 9],
      [3, 1, 1],
    ]);
    expect(v.keyNorms.slice(0, 3)).toEqual([3, 2, 9]);
  });
});

describe('KV groups: the group mean of top-k rows', () => {
  it('lists the union ascending, each block at the mean of the listed masses and the other groups\' uniform shares', () => {
    // 7 blocks. Group 0 lists 1, 2 (0.40, 0.35), remainder 0.25 over 5 blocks: 0.05 each.
    // Group 1 lists 3, 2 (0.40, 0.30), remainder 0.30 over 5 blocks: 0.06 each.
    // Mean: block 1 (0.40 + 0.06) / 2 = 0.23; block 2 (0.35 + 0.30) / 2 = 0.325; block 3 (0.05 + 0.40) / 2 = 0.225;
    // every other block (0.05 + 0.06) / 2 = 0.055.
    const rows: LayerAttention[] = [
      { nBlocks: 7, idx: Uint32Array.of(1, 2), mass: Float32Array.of(0.4, 0.35), remainder: 0.25, normFrom: 0, norms: new Float32Array(0) },
      { nBlocks: 7, idx: Uint32Array.of(3, 2), mass: Float32Array.of(0.4, 0.3), remainder: 0.3, normFrom: 0, norms: new Float32Array(0) },
    ];
    const out = { idx: null as Uint32Array | null, mass: new Float32Array(0), uniform: 0 };
    new GroupMean(8).of(rows, 0, 2, out);
    expect(Array.from(out.idx!)).toEqual([1, 2, 3]);
    expect(Array.from(out.mass, (m) => +m.toFixed(6))).toEqual([0.23, 0.325, 0.225]);
    expect(out.uniform).toBeCloseTo(0.055, 7);
    // the mean's masses sum to 1 like each row's
    expect(out.mass.reduce((s, m) => s + m, 0) + 4 * out.uniform).toBeCloseTo(1, 6);
  });

  it('has no uniform share when the union lists every block', () => {
    const rows: LayerAttention[] = [
      { nBlocks: 2, idx: Uint32Array.of(0), mass: Float32Array.of(0.5), remainder: 0.5, normFrom: 0, norms: new Float32Array(0) },
      { nBlocks: 2, idx: Uint32Array.of(1), mass: Float32Array.of(0.75), remainder: 0.25, normFrom: 0, norms: new Float32Array(0) },
    ];
    const out = { idx: null as Uint32Array | null, mass: new Float32Array(0), uniform: 1 };
    new GroupMean(2).of(rows, 0, 2, out);
    expect([Array.from(out.idx!), Array.from(out.mass), out.uniform]).toEqual([[0, 1], [(0.5 + 0.25) / 2, (0.5 + 0.75) / 2], 0]);
  });
});

describe('KV groups: each layer reads its own rows', () => {
  it('layer l observes rows 2l and 2l+1 (row = layer * kv_groups + group), and its recall is theirs', () => {
    // 2 layers x 2 groups over 3 blocks; every row distinct. Reading row l as layer l would show
    // layer 1 rows 1 (and 2), and leave rows 2, 3 unread.
    const rowsOf = [
      [0.5, 0.25, 0.25],
      [0.25, 0.5, 0.25],
      [0.75, 0.125, 0.125],
      [0.125, 0.125, 0.75],
    ];
    const h: TraceHeader = { ...tinyHeader(9, 1, 2), kv_groups: 2 };
    const trace = constantSteps(h, (n) => rowsOf.map((m) => dense(n, m)));
    const rec = recorder();
    replayPolicy(rec.def, 10, { fullHeader: h, trace });
    const at = (l: number) => rec.seen.find((o) => o.step === 0 && o.layer === l)!;
    expect(at(0).groups).toEqual([rowsOf[0], rowsOf[1]]);
    expect(at(1).groups).toEqual([rowsOf[2], rowsOf[3]]);
    expect(at(1).mass).toEqual([0.4375, 0.125, 0.4375]);
    // drop block 2 of layer 1 at step 0: layer 1 keeps (0.875 + 0.25) / 2 = 0.5625, layer 0 keeps 1
    const dropper: PolicyDefinition = {
      name: 'dropper',
      description: '',
      source: '',
      options: [],
      create: () => ({
        name: 'dropper',
        decide(v, act) {
          if (v.step === 0 && v.layer === 1) act.evict(1, 2);
        },
        observe() {},
      }),
    };
    const r = replayPolicy(dropper, 10, { fullHeader: h, trace });
    expect(Array.from(r.results[0]!.recall)).toEqual([1, 0.5625]);
  });

  it('a step without layers x kv_groups rows is refused, naming the count', () => {
    const h: TraceHeader = { ...tinyHeader(9, 1, 2), kv_groups: 2 };
    const trace = constantSteps(h, (n) => [dense(n, [0.5, 0.25, 0.25]), dense(n, [0.5, 0.25, 0.25])]);
    expect(() => replayPolicy(streamingLlm, 10, { fullHeader: h, trace })).toThrow(/step 0: 2 attention rows, expected 4 \(layers 2 x kv_groups 2/);
  });
});

describe('KV groups: upper layers are read (regression)', () => {
  it('uniform attention in layers 4-7 of a generated 8-layer, 2-group trace changes exactly those layers\' recall', () => {
    const input = { layers: 8, kv_groups: 2, prompt_tokens: 256, steps: 24, block_size: 16, encoding: 'topk' as const, topk: 8, seed: 5 };
    const h = generatedHeader(input);
    const trace = [...generateSteps(input)];
    const uniformTail = trace.map((s) => ({
      ...s,
      layers: s.layers.map((la, row) => (Math.floor(row / 2) < 4 ? la : { ...la, idx: new Uint32Array(0), mass: new Float32Array(0), remainder: 1 })),
    }));
    const a = replayPolicy(h2o, 4, { fullHeader: h, trace });
    const b = replayPolicy(h2o, 4, { fullHeader: h, trace: uniformTail });
    const lower = (r: typeof a) => r.results.map((x) => Array.from(x.recall.subarray(0, 4)));
    const upper = (r: typeof a) => r.results.map((x) => Array.from(x.recall.subarray(4)));
    expect(lower(b)).toEqual(lower(a));
    expect(upper(b)).not.toEqual(upper(a));
    // uniform attention over n blocks with 4 kept: recall 4 / n in each upper layer
    const last = b.results[b.results.length - 1]!;
    const n = blocksFor(last.contextTokens, 16);
    for (let l = 4; l < 8; l++) expect(last.recall[l]).toBeCloseTo(4 / n, 6);
  });
});
