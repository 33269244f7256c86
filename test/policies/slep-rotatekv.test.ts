import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import measured from '../../sim/quality/measured-quality-h100.json' with { type: 'json' };
import { slep } from '../../policies/slep.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { MEASURED_SOURCE } from '../../sim/quality/measured-table.js';
import { rotationTimeUs, rotationWork } from '../../sim/rotation-cost.js';
import { simulate } from '../../sim/run.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { generateTrace } from '../../traces/generator.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';
import { replayPolicy } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-rotatekv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** one step of two layers on the tiny machine (attention 64 us, linear 1000 us); the compute stream's spans */
function tinyStep(rotation: boolean) {
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 1, rotation });
  ex.beginStep(0);
  ex.layer(tinyLayerWork(0), []);
  ex.layer(tinyLayerWork(1), []);
  const t = ex.endStep();
  return { t, spans: ex.spans.filter((s) => s.stream === 'compute').map((s) => [s.name, s.start, s.end]) };
}

describe('RotateKV: the rotation work is timed', () => {
  it('tiny model: 8 K/V values + 4 q values of d = 4 -> 24 additions, 48 B read + written = 48 us per layer at 1 B/us, before the attention', () => {
    expect(rotationWork(tinyModel)).toEqual({ values: 12, flops: 24, bytes: 48 });
    const off = tinyStep(false);
    const on = tinyStep(true);
    expect(off.spans).toEqual([
      ['attention', 0, 64],
      ['linear', 64, 1064],
      ['attention', 1064, 1128],
      ['linear', 1128, 2128],
      ['lm-head', 2128, 2128],
    ]);
    expect(on.spans).toEqual([
      ['rotate', 0, 48],
      ['attention', 48, 112],
      ['linear', 112, 1112],
      ['rotate', 1112, 1160],
      ['attention', 1160, 1224],
      ['linear', 1224, 2224],
      ['lm-head', 2224, 2224],
    ]);
    expect(on.t.latency_us - off.t.latency_us).toBe(96);
  });

  it('Llama-3-70B on the RTX 3090: (2·8 + 64) heads x 128 = 10,240 values, x log2(128) = 71,680 additions, 40,960 B -> 4 + 40,960 / 822,000 us per layer', () => {
    const m = loadModel('llama-3-70b');
    const gpu = loadHardware('rtx3090-pcie4').gpu;
    expect(rotationWork(m)).toEqual({ values: 10_240, flops: 71_680, bytes: 40_960 });
    // the additions take 71,680 / 57e6 us = 0.0013 us: the bytes bound the kernel
    expect(rotationTimeUs(gpu, m)).toBe(4 + 40_960 / 822_000);
  });

  it('with SLEP the rotation adds 80 x 4.05 us of compute per step and no latency: it hides under the weight copies', () => {
    const trace = join(dir, 'l70.kvt');
    generateTrace(trace, { model: 'llama-3-70b', layers: 80, prompt_tokens: 256, steps: 3, encoding: 'topk', seed: 4 });
    const run = (kv_precision: string) => simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4, kv_precision } });
    const plain = run('int4');
    const rotated = run('rotatekv-4');
    const perLayer = 4 + 40_960 / 822_000;
    for (let s = 0; s < 3; s++) {
      expect(rotated.steps[s].compute_ms - plain.steps[s].compute_ms).toBeCloseTo((80 * perLayer) / 1e3, 9);
      expect(rotated.steps[s].latency_ms).toBeCloseTo(plain.steps[s].latency_ms, 9);
    }
  });
});

describe('RotateKV: the quality model takes the measured rotated errors', () => {
  const row = (bits: number, rotation: boolean) => measured.rows.find((r) => r.bits === bits && r.groupSize === 128 && r.rotation === rotation)!;

  it('the error table holds the H100 measurements (hil/quality.ts) for rotated INT4 and INT2 at G = 128, with their source', () => {
    const t = defaultErrorTable();
    expect(t.relError(4, 128, true)).toBe(0.13394954319968153);
    expect(t.relError(2, 128, true)).toBe(0.6728200160363844);
    expect(t.relError(4, 128, true)).toBe(row(4, true).kvRmse);
    expect(t.relError(2, 128, false)).toBe(row(2, false).kvRmse);
    const e = t.entries.find((x) => x.bits === 2 && x.group === 128 && x.rotation)!;
    expect(e.source.startsWith(MEASURED_SOURCE)).toBe(true);
    expect(MEASURED_SOURCE).toContain('NVIDIA H100 80GB HBM3');
  });

  it('a rotated INT4 / INT2 block under slep has exactly the table\'s rotated error; the same block unrotated the unrotated one', () => {
    for (const [precision, bits, rotation] of [['rotatekv-4', 4, true], ['rotatekv-2', 2, true], ['int4', 4, false], ['int2', 2, false]] as const) {
      const r = replayPolicy(slep, 10, { prompt: 16, steps: 1, layers: 1, options: { kv_precision: precision } });
      expect(r.bits(0)).toEqual([16, bits, bits, bits, 16]);
      expect(r.quality.blockError(0, 1)).toBe(row(bits, rotation).kvRmse);
      expect(r.quality.blockError(0, 0)).toBe(0);
      // uniform attention over 5 blocks, 3 quantized
      expect(r.qualities[0].quant_error).toBeCloseTo((3 / 5) * row(bits, rotation).kvRmse, 12);
    }
  });
});
