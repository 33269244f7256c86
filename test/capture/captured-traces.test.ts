/**
 * The committed reference traces: they validate, stay within 20 MB together, carry the
 * provenance the issue asks for (model, checkpoint hash, corpus, command, date, GPU), state what
 * did and did not form, and replay through `simulate` with the captured model's shape.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulate } from '../../sim/run.js';
import { readTraceHeader } from '../../traces/trace-reader.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { REPO } from './python-env.js';

const dir = path.join(REPO, 'traces/captured');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.kvt')).sort();

describe('traces/captured', () => {
  it('holds the long, multi-topic and needle captures and a 32k capture, under 20 MB together', () => {
    expect(files).toContain('brown-long-8k.kvt');
    expect(files).toContain('brown-long-32k.kvt');
    expect(files).toContain('brown-multitopic-8k.kvt');
    expect(files.filter((f) => f.startsWith('brown-needle-8k-d')).length).toBeGreaterThanOrEqual(3);
    const bytes = files.reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(20e6);
  });

  for (const f of files) {
    it(`${f}: valid, with provenance`, () => {
      const file = path.join(dir, f);
      expect(validateTrace(file).ok).toBe(true);
      const h = readTraceHeader(file) as unknown as Record<string, any>;
      expect(h.prompt_tokens).toBeGreaterThanOrEqual(8192);
      expect(h.prompt_tokens).toBe(Number(/-(\d+)k/.exec(f)![1]) * 1024);
      const p = h.provenance;
      expect(p.source).toBe('capture');
      expect(p.model.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(p.text.corpus_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(p.device).toMatch(/^NVIDIA H(100|200)/);
      expect(p.command).toContain('traces/capture/capture.py');
      expect(p.date).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(p.observed.sinks).toMatch(/sink/);
      if (f.includes('needle')) expect(p.text.retrieved).toBe(true);
    });
  }

  it('brown-needle-8k-d50.kvt replays through the simulator with the captured model\'s shape', () => {
    const r = simulate({
      trace: path.join(dir, 'brown-needle-8k-d50.kvt'),
      model: path.join(dir, 'kvtier-brown-gpt.model.json'),
      policy: 'h2o',
      hbm_budget: '20%',
      hardware: 'h100-pcie5',
    });
    expect(r.steps.length).toBeGreaterThan(0);
    expect(r.summary.model).toBe('kvtier-brown-gpt');
  });
});
