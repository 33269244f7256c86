/**
 * The capture path end to end on CPU (CI has no GPU): a tiny randomly initialised kvtier model is
 * saved, checked (cached decoding = full pass; capture path = training path), captured by
 * traces/capture/capture.py, and the trace read back by the TypeScript reader. And the recorder's
 * reduction (heads -> KV groups -> blocks, key norms per block) on hand-made attention, checked
 * through `computeTraceStats` against values computed by hand.
 * Needs python3 with torch and numpy (torch 1.13 from Debian's python3-torch is enough); skips
 * with the reason otherwise.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cloneStep } from '../../traces/clone-step.js';
import { openTrace } from '../../traces/trace-reader.js';
import { computeTraceStats } from '../../traces/trace-stats.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { CAPTURE_DIR, PY_TORCH, runPy, tmpDir, TORCH_MISSING } from './python-env.js';

const HAND = `
import sys, torch
sys.path.insert(0, ${JSON.stringify(CAPTURE_DIR)})
from recorder import Recorder
from kvt_writer import KvtWriter
# 1 layer, 2 query heads on 1 KV head, block 2, prompt 3
rec = Recorder(layers=1, n_heads=2, n_kv_heads=1, kv_groups=1, block=2, topk=None, prompt_tokens=3)
rec.prefill([torch.full((2, 3, 3), 1 / 3)], [torch.tensor([[1.0, 4.0, 2.0]])], 0)
w = KvtWriter(sys.argv[1], {'model': 'hand', 'layers': 1, 'block_size': 2, 'prompt_tokens': 3, 'steps': 2,
                            'kv_groups': 1, 'encoding': 'dense', 'provenance': {'source': 'test'}})
p0 = torch.tensor([[0.4, 0.1, 0.2, 0.3], [0.2, 0.3, 0.0, 0.5]])
w.write_step(rec.decode([p0[:, None, :]], [torch.tensor([[3.0]])]))
p1 = torch.tensor([[0.1, 0.1, 0.1, 0.1, 0.6], [0.3, 0.1, 0.1, 0.1, 0.4]])
w.write_step(rec.decode([p1[:, None, :]], [torch.tensor([[0.5]])]))
w.close()
`;

describe.skipIf(PY_TORCH === null)(`capture on CPU (${PY_TORCH === null ? `skipped: ${TORCH_MISSING}` : PY_TORCH})`, () => {
  it('hand-made attention: block masses, key norms and trace stats equal the hand-computed values', () => {
    const file = path.join(tmpDir(), 'hand.kvt');
    runPy(PY_TORCH!, ['-c', HAND, file]);
    const r = openTrace(file);
    const steps = [...r].map(cloneStep);
    r.close();
    // heads averaged: step 0 [0.3, 0.2, 0.1, 0.4] -> blocks [0.5, 0.5]; step 1 [0.2, 0.1, 0.1, 0.1, 0.5] -> [0.3, 0.2, 0.5]
    expect(Array.from(steps[0]!.layers[0]!.mass).map((v) => +v.toFixed(6))).toEqual([0.5, 0.5]);
    expect(Array.from(steps[1]!.layers[0]!.mass).map((v) => +v.toFixed(6))).toEqual([0.3, 0.2, 0.5]);
    // key norms: max per block of [1, 4, 2, 3] -> [4, 3] at step 0; step 1 gives the last block [0.5]
    expect(Array.from(steps[0]!.layers[0]!.norms)).toEqual([4, 3]);
    expect(steps[1]!.layers[0]!.normFrom).toBe(2);
    expect(Array.from(steps[1]!.layers[0]!.norms)).toEqual([0.5]);
    const st = computeTraceStats(file, { topBlocks: 1 }).layers[0]!;
    expect(st.sinkMass).toBeCloseTo((0.5 + 0.3) / 2, 6);
    expect(st.recentMass.last1).toBeCloseTo((0.5 + 0.5) / 2, 6);
    expect(st.coverBlocks.p50).toBe(1);
    expect(st.coverBlocks.p90).toBe(2.5); // 2 blocks, then 3
    expect(st.entropyNats).toBeCloseTo((Math.log(2) - (0.3 * Math.log(0.3) + 0.2 * Math.log(0.2) + 0.5 * Math.log(0.5))) / 2, 5);
    // top-1 set: block 0 (tie at step 0 goes to the lower index), then block 2: nothing kept
    expect(st.persistence).toBe(0);
  });

  it('a tiny random model: selftest passes, capture.py writes a trace the TypeScript reader accepts', () => {
    const dir = tmpDir();
    const ck = path.join(dir, 'tiny');
    expect(runPy(PY_TORCH!, [path.join(CAPTURE_DIR, 'selftest.py'), '--kvtier-tiny', ck, '--device', 'cpu'])).toMatch(/selftest ok/);
    for (const encoding of ['topk', 'dense'] as const) {
      const out = path.join(dir, `tiny-${encoding}.kvt`);
      runPy(PY_TORCH!, [path.join(CAPTURE_DIR, 'capture.py'), '--model', ck, '--scenario', 'random', '--prompt-tokens', '70',
        '--steps', '6', '--topk', '3', '--encoding', encoding, '--prefill-chunk', '32', '--device', 'cpu', '--out', out]);
      expect(validateTrace(out).ok).toBe(true);
      const r = openTrace(out);
      const h = r.header as typeof r.header & Record<string, any>;
      expect([h.layers, h.kv_groups, h.block_size, h.prompt_tokens, h.steps, h.encoding]).toEqual([2, 2, 16, 70, 6, encoding]);
      expect(h.provenance.source).toBe('capture');
      const model = h.provenance.model as Record<string, unknown>;
      expect(model.kind).toBe('kvtier-gpt');
      expect(model.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(h.tokens.prompt.length).toBe(70);
      expect(h.tokens.generated.length).toBe(6);
      expect(h.prefill_attention.all.length).toBe(4);
      expect(h.capture_stats.sink4.length).toBe(2);
      const steps = [...r].map(cloneStep);
      r.close();
      expect(steps.length).toBe(6);
      for (const s of steps) {
        expect(s.layers.length).toBe(4);
        for (const row of s.layers) {
          const sum = row.mass.reduce((a, v) => a + v, 0) + row.remainder;
          expect(sum).toBeCloseTo(1, 4);
          expect(row.mass.length).toBe(encoding === 'topk' ? 3 : row.nBlocks);
        }
      }
      expect(steps[0]!.layers[0]!.norms.length).toBe(5); // ceil(71 / 16) blocks at step 0, then the last block
      expect(steps[1]!.layers[0]!.norms.length).toBe(1);
    }
  });
});

if (PY_TORCH === null) {
  describe('capture on CPU', () => {
    it.skip(`skipped: ${TORCH_MISSING}`, () => {});
  });
}
