// The host issue-cost bench: its copies go through the executor's own issuer and land where the
// prefetch layout puts them (consecutive FP16-sized host slots into one packed extent); every kind
// gives one point per size with its trials (attention and block conversion launches included); the calibration writes the medians as the profile's
// gpu.issue_*_us with their sources.
import { describe, expect, it } from 'vitest';
import { benchIssue, type IssuePoint } from '../../hil/bench/issue-bench.js';
import { applyIssueCosts } from '../../hil/calibrate/calibrate.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { backendAvailability } from './availability.js';

const host = backendAvailability('host');
const cuda = backendAvailability('cuda');

describe('host issue costs into the profile', () => {
  it('writes the median per kind (copies: over their sizes) and names the points in the sources', () => {
    const p = loadHardware('h100-pcie5');
    const pt = (kind: IssuePoint['kind'], bytes: number, us: number, gated = false): IssuePoint => ({ kind, bytes, gated, ops: 256, us, trials_us: [us, us, us + 1] });
    applyIssueCosts(p, [pt('copy', 65536, 3.4), pt('copy', 17408, 3.1), pt('copy', 9216, 3.0), pt('record', 0, 0.61), pt('kernel', 0, 2.27), pt('convert', 0, 12.5), pt('attention', 0, 14.5), { ...pt('attention', 0, 9, true), held: 2, held_us: [9, 9] }, pt('copy', 9216, 1, true)], 'test');
    // copies: every size's trials together (3, 3, 4, 3.1, 3.1, 4.1, 3.4, 3.4, 4.4): 3.4
    expect(p.gpu.issue_copy_us).toBe(3.4);
    expect(p.gpu.issue_record_us).toBe(0.61);
    expect(p.gpu.issue_kernel_us).toBe(2.27);
    expect(p.gpu.issue_convert_us).toBe(12.5);
    expect(p.sources['gpu.issue_convert_us']).toContain("dequantization (INT8) and quantization (INT2)");
    // as issued; the gated times only in the sources
    expect(p.gpu.issue_attention_us).toBe(14.5);
    expect(p.sources['gpu.issue_attention_us']).toContain('behind a compute gate: 9 us');
    expect(p.sources['gpu.issue_copy_us']).toContain('65536 B 3.4, 17408 B 3.1, 9216 B 3');
    const q = loadHardware('h100-pcie5');
    applyIssueCosts(q, [], 'test');
    expect(q.gpu.issue_copy_us).toBeUndefined();
    // points without finite trials write nothing
    applyIssueCosts(q, [{ ...pt('copy', 9216, Number.NaN), trials_us: [] }, { ...pt('record', 0, 1), trials_us: [1, Number.NaN] }], 'test');
    expect(q.gpu.issue_copy_us).toBeUndefined();
    expect(q.gpu.issue_record_us).toBeUndefined();
  });
});

describe.skipIf(!host.available)(`issue bench, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it("issues through the executor's issuer: one point per size and kind, each with its trials", async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const model = loadModel('llama-3-8b');
    const b = openBackend('host');
    try {
      const points = await benchIssue(b, model, { blockTokens: 16, groupSize: 128, copyBytes: [65536, 9216], ops: 8, trials: 2 });
      expect(points.map((x) => [x.kind, x.bytes, x.ops, x.trials_us.length])).toEqual([
        ['copy', 65536, 8, 2],
        ['copy', 9216, 8, 2],
        ['record', 0, 8, 2],
        ['kernel', 0, 8, 2],
        ['attention', 0, 8, 2],
        ['convert', 0, 8, 2],
      ]);
      for (const x of points) expect(x.us).toBeGreaterThan(0);
      await expect(benchIssue(b, model, { blockTokens: 16, groupSize: 128, copyBytes: [65537] })).rejects.toThrow('issue bench: copyBytes: copy size 65537 must be an integer in 1..65536 (an FP16 block)');
      await expect(benchIssue(b, model, { blockTokens: 16, groupSize: 128, copyBytes: [9216], warmupMs: -1 })).rejects.toThrow('issue bench: warmupMs must be a number >= 0 (got -1)');
      // a warm-up issues the lists for that long before the timed rounds
      const t0 = performance.now();
      await benchIssue(b, model, { blockTokens: 16, groupSize: 128, copyBytes: [9216], ops: 4, trials: 1, warmupMs: 50 });
      expect(performance.now() - t0).toBeGreaterThanOrEqual(50);
      for (const trials of [0, -1, 1.5, Number.NaN]) await expect(benchIssue(b, model, { blockTokens: 16, groupSize: 128, copyBytes: [9216], trials })).rejects.toThrow(`issue bench: trials must be an integer >= 1 (got ${trials})`);
    } finally {
      b.close();
    }
  });
});

describe.skipIf(!cuda.available)(`issue bench, cuda backend${cuda.available ? '' : ` (skipped: ${cuda.reason})`}`, () => {
  it('times every kind as issued and behind a gate that holds, and the calibration takes the as-issued times', async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const { ComputeGate } = await import('../../hil/bench/gate.js');
    const model = loadModel('llama-3-8b');
    const b = openBackend('cuda');
    const gate = await ComputeGate.open(b);
    try {
      const points = await benchIssue(b, model, { blockTokens: 16, groupSize: 128, copyBytes: [65536, 9216], ops: 64, trials: 3, gate });
      expect(points.map((x) => [x.kind, x.bytes, x.gated])).toEqual([
        ['copy', 65536, true],
        ['copy', 65536, false],
        ['copy', 9216, true],
        ['copy', 9216, false],
        ['record', 0, true],
        ['record', 0, false],
        ['kernel', 0, true],
        ['kernel', 0, false],
        ['attention', 0, true],
        ['attention', 0, false],
        ['convert', 0, true],
        ['convert', 0, false],
      ]);
      for (const x of points) {
        expect(x.us).toBeGreaterThan(0);
        expect(x.trials_us).toHaveLength(3);
        // the gate learns each kind's enqueue time from its warm-up round: the timed trials are held
        if (x.gated) expect(x.held).toBeGreaterThanOrEqual(2);
      }
      const p = loadHardware('h100-pcie5');
      applyIssueCosts(p, points, 'test');
      for (const k of ['issue_copy_us', 'issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us'] as const) expect(p.gpu[k]).toBeGreaterThan(0);
    } finally {
      gate.free();
      b.close();
    }
  });
});
