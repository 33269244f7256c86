import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkServeSweep, checkSweep } from '../../studies/check-sweep.js';
import { parseServeSweepSpec } from '../../studies/serve-sweep-spec.js';
import { expandSweep, parseSweepSpec } from '../../studies/sweep-spec.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';
import { kvtierArgs } from '../helpers/kvtier-from-sources.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-dry-run-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const NEEDLE = join(process.cwd(), 'traces/bundled/llama-3-8b-2k-needle.kvt');
const gen = { generate: { prompt_tokens: 512, steps: 4 }, name: 'g' };
const check = (o: Record<string, unknown>) =>
  checkSweep(parseSweepSpec({ traces: [gen], policies: ['h2o'], budgets: ['20%'], hardware: ['h100-pcie5'], ...o }, join(dir, 'f.json')), 'f.json');

describe('sweep --dry-run', () => {
  it('counts the configurations of a valid sweep and finds nothing wrong', () => {
    // full runs once per trace; 2 traces x (1 + 2 policies x 3 budgets) x 2 hardware
    expect(check({ traces: [gen, NEEDLE], policies: ['full', 'h2o', { name: 'quest', options: { dense_layers: 2 } }], budgets: ['10%', '20%', '1GiB'], hardware: ['h100-pcie5', 'a100-pcie4'] })).toEqual({
      count: 28,
      errors: [],
    });
  });

  it('names the field and the valid choices of each bad value, once', () => {
    const r = check({ policies: ['h2o', { name: 'h2o', options: { nope: 1 } }, 'nope'], budgets: ['10%', '20%'], hardware: ['h100-pcie5', 'no-hw'], models: [null, 'no-model'] });
    expect(r.count).toBe(24);
    expect(r.errors).toHaveLength(4);
    expect(r.errors).toContain('f.json: policies[1]: policy h2o: unknown option "nope" (options: heavy_ratio, sink_tokens)');
    expect(r.errors.find((e) => e.startsWith('f.json: policies[2]: '))).toMatch(/^f\.json: policies\[2\]: unknown policy "nope" \(valid: full, lru-offload, streaming-llm, h2o, /);
    expect(r.errors.find((e) => e.startsWith('f.json: hardware[1]: '))).toMatch(/^f\.json: hardware\[1\]: hardware "no-hw" is neither a preset nor a file .*; presets: h100-pcie5, /);
    expect(r.errors.find((e) => e.startsWith('f.json: models[1]: '))).toMatch(/^f\.json: models\[1\]: model "no-model" is neither a preset nor a file .*; presets: llama-2-7b, llama-3-8b, /);
  });

  it('reads every trace header and resolves generator settings', () => {
    const r = check({ traces: [join(dir, 'missing.kvt'), { generate: { prompt_tokens: 128, steps: 4, zipf_alpha: -1 } }] });
    expect(r.errors).toEqual([
      `f.json: traces[0]: ${join(dir, 'missing.kvt')}: cannot read the attention trace: no such file (expected a .kvt attention trace file)`,
      "f.json: traces[1].generate: invalid generator parameter 'zipf_alpha': expected a number in [0, 10], got -1",
    ]);
  });

  it('checks what only a combination decides: budget in HBM, model layers against the trace', () => {
    const r = check({ budgets: ['20%', '4000GiB'], models: [null, 'llama-3-70b'] });
    expect(r.errors).toEqual([
      "f.json: configuration 0001_g-s1_h100-pcie5_h2o_4000GiB: budget 4000GiB: 4000.00 GiB of KV does not fit in h100-pcie5's HBM (61.22 GiB free after the weights of llama-3-8b)",
      'f.json: configuration 0002_g-s1_h100-pcie5_llama-3-70b_h2o_20pct (and 1 more): the trace has 32 layers but model llama-3-70b has 80; pick a model with models: [...]',
    ]);
  });

  it('counts the weights a policy keeps in HBM as a run does: streaming policies fit Llama-3-70B on an RTX 3090', () => {
    // Llama-3-70B per layer: q, o 8192x8192, k, v 8192x1024, MLP 3 x 8192x28672 = 855,638,016 parameters,
    // 1,711,276,032 bytes FP16 (1.59 GiB); embeddings + LM head 2 x 128256 x 8192 x 2 bytes = 4,202,692,608 (3.91 GiB).
    // Whole model: 80 layers + the rest = 141,104,775,168 bytes = 131.41 GiB; RTX 3090: 23.6 GiB - 2 GiB reserved.
    // slep (FP16 weights, 2 slots, no resident layers): 2 x 1.59 + 3.91 = 7.10 GiB in HBM, so 14.50 GiB free.
    // ntransformer (INT4 weights, groups of 128 with 4 bytes of scales): a layer is 855,638,016 / 2 + 6,684,672 x 4
    // = 454,557,696 bytes (0.42 GiB), the rest 1,050,673,152 + 16,416,768 x 4 = 1,116,340,224 (1.04 GiB): 1.89 GiB, 19.71 GiB free.
    const g70 = { generate: { model: 'llama-3-70b', layers: 80, prompt_tokens: 512, steps: 4 }, name: 'g' };
    const r = check({ traces: [g70], policies: ['slep', 'ntransformer', 'h2o'], budgets: ['20%', '16GiB', '20GiB'], hardware: ['rtx3090-pcie4'] });
    const noFit = (id: string, budget: string, free: string, after: string) =>
      `f.json: configuration ${id}: budget ${budget}: ${budget.replace('GiB', '.00 GiB')} of KV does not fit in rtx3090-pcie4's HBM (${free} GiB free after ${after})`;
    expect(r).toEqual({
      count: 9,
      errors: [
        noFit('0001_g-s1_rtx3090-pcie4_slep_16GiB', '16GiB', '14.50', '7.10 GiB weights of llama-3-70b (0 resident layers + 2 streaming slots of 1.59 GiB, + 3.91 GiB outside the layers)'),
        noFit('0002_g-s1_rtx3090-pcie4_slep_20GiB', '20GiB', '14.50', '7.10 GiB weights of llama-3-70b (0 resident layers + 2 streaming slots of 1.59 GiB, + 3.91 GiB outside the layers)'),
        noFit('0005_g-s1_rtx3090-pcie4_ntransformer_20GiB', '20GiB', '19.71', '1.89 GiB weights of llama-3-70b (0 resident layers + 2 streaming slots of 0.42 GiB, + 1.04 GiB outside the layers)'),
        "f.json: configuration 0006_g-s1_rtx3090-pcie4_h2o_20pct: budget 20%: 0.03 GiB of KV does not fit in rtx3090-pcie4's HBM (-109.81 GiB free after the weights of llama-3-70b)",
        noFit('0007_g-s1_rtx3090-pcie4_h2o_16GiB', '16GiB', '-109.81', 'the weights of llama-3-70b'),
        noFit('0008_g-s1_rtx3090-pcie4_h2o_20GiB', '20GiB', '-109.81', 'the weights of llama-3-70b'),
      ],
    });
    // and the run agrees: slep at 20% runs on the same machine and trace
    const trace = join(dir, 'g70.kvt');
    generateTrace(trace, { model: 'llama-3-70b', layers: 80, prompt_tokens: 512, steps: 4 } as never);
    const run = simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '20%', trace_steps: 0 });
    expect(run.summary.policy).toBe('slep');
    expect(() => simulate({ trace, policy: 'h2o', hardware: 'rtx3090-pcie4', hbm_budget: '20%', trace_steps: 0 })).toThrow(/does not fit in rtx3090-pcie4's HBM/);
  });

  it('checks a serving sweep: request traces, caches, hardware, models', () => {
    const spec = parseServeSweepSpec(
      { kind: 'serve', requests: ['mooncake:synthetic', 'mooncake:nope', 'missing.jsonl'], caches: ['lru', 'nope'], capacities: [1000], hardware: ['h100-pcie5'], models: ['llama-3-8b'] },
      join(dir, 's.json'),
      's',
    );
    expect(checkServeSweep(spec, 's.json')).toEqual({
      count: 6,
      errors: [
        's.json: caches[1]: unknown cache policy "nope" (valid: lru, lfu, arc, s3fifo)',
        's.json: requests[1]: mooncake:nope: unknown bundled request trace "nope" (valid: mooncake:conversation, mooncake:synthetic; or the path of a Mooncake .jsonl, Azure or BurstGPT .csv file)',
        `s.json: requests[2]: ${join(dir, 'missing.jsonl')}: no such request trace (or give mooncake:conversation / mooncake:synthetic)`,
      ],
    });
  });

  it('the CLI prints the count and exits 0, or the errors and exits 1, and runs nothing', () => {
    const good = join(dir, 'good.json');
    fs.writeFileSync(good, JSON.stringify({ traces: [gen], policies: ['h2o', 'lru-offload'], budgets: ['10%', '20%'], hardware: ['h100-pcie5'] }));
    const bad = join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ traces: [gen], policies: ['h2o', 'nope'], budgets: ['10%'], hardware: ['h100-pcie5'] }));
    const ok = spawnSync(process.execPath, kvtierArgs('sweep', '--dry-run', good), { encoding: 'utf8' });
    expect(ok.stdout).toBe(`${good}: 4 configurations, all valid\n`);
    expect(ok.status).toBe(0);
    const no = spawnSync(process.execPath, kvtierArgs('sweep', '--dry-run', bad, '--out', join(dir, 'never')), { encoding: 'utf8' });
    expect(no.status).toBe(1);
    expect(no.stderr).toMatch(new RegExp(`^kvtier: error: ${bad.replace(/[.]/g, '\\.')}: policies\\[1\\]: unknown policy "nope" \\(valid: full, `));
    expect(no.stderr).toContain(`kvtier: 1 error(s) in ${bad}; nothing was run\n`);
    expect(fs.existsSync(join(dir, 'never'))).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});

describe('a trace with its own model', () => {
  const CAPTURED = join(process.cwd(), 'traces/captured/brown-needle-8k-d50.kvt');
  const BROWN = join(process.cwd(), 'traces/captured/kvtier-brown-gpt.model.json');

  it('replays with that model instead of the sweep models; the other traces keep the sweep models', () => {
    const spec = parseSweepSpec(
      { traces: [gen, { path: '../captured/brown-needle-8k-d50.kvt', model: '../captured/kvtier-brown-gpt.model.json' }], policies: ['h2o'], budgets: ['20%'], hardware: ['h100-pcie5'], models: [null, 'llama-3-8b'] },
      join(process.cwd(), 'traces/bundled/f.json'),
    );
    expect(spec.traces[1]).toEqual({ path: CAPTURED, name: undefined, model: BROWN });
    const configs = expandSweep(spec);
    expect(configs.map((c) => [c.id, c.model])).toEqual([
      ['0000_g-s1_h100-pcie5_h2o_20pct', null],
      ['0001_g-s1_h100-pcie5_llama-3-8b_h2o_20pct', 'llama-3-8b'],
      ['0002_brown-needle-8k-d50_h100-pcie5_kvtier-brown-gpt_h2o_20pct', BROWN],
    ]);
    expect(checkSweep(spec, 'f.json')).toEqual({ count: 3, errors: [] });
  });

  it('names the trace entry of a bad model', () => {
    expect(() => parseSweepSpec({ traces: [{ path: 'x.kvt', model: 3 }], policies: ['h2o'], budgets: ['20%'], hardware: ['h100-pcie5'] }, 'f.json')).toThrow(
      'f.json: traces[0].model must be a model preset name or a model JSON path',
    );
    const r = check({ traces: [{ ...gen, model: 'no-model' }] });
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^f\.json: traces\[0\]\.model: model "no-model" is neither a preset nor a file/);
  });
});
