import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';

// Untraced steps run the compute stream lazily (due signals, no engine event per kernel unless
// something waits on one). Traced steps schedule every event. Both must give the same run, for
// policies that only compute, that move blocks both ways, that stage, and that stream weights.
const dir = mkdtempSync(join(tmpdir(), 'kvtier-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const trace = join(dir, 't.kvt');
generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: 2048, steps: 24, encoding: 'topk', seed: 5 });

const cases: [string, Record<string, unknown>, string][] = [
  ['h2o', {}, '20%'],
  ['lru-offload', {}, '20%'],
  ['lru-offload', { prefetch: false, offload_tier: 'nvme' }, '20%'],
  ['synapsevm', {}, '10%'],
  ['slep', {}, '10%'],
  ['dpnc', {}, '10%'],
];

describe('lazy compute stream', () => {
  it.each(cases)('%s %j @ %s: every step as with traced (eager) steps', (policy, policy_options, hbm_budget) => {
    const run = (trace_steps: number) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps });
    const lazy = run(0);
    const eager = run(1_000_000);
    expect(lazy.steps).toEqual(eager.steps);
    expect(lazy.summary).toEqual(eager.summary);
    expect(lazy.spans).toEqual([]);
    expect(eager.spans.length).toBeGreaterThan(0);
  });
});
