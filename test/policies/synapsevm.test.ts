import { describe, expect, it } from 'vitest';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { synapseVm } from '../../policies/synapsevm.js';
import { replayPolicy } from './harness.js';

const T = defaultErrorTable();

describe('synapsevm (L1 HBM FP16 / L2 DRAM INT4 / L3 NVMe INT2)', () => {
  // one layer, prompt 24 tokens = blocks 0..5, block 6 written at step 0. Budget 3 blocks:
  // recent window round(3 * 0.5) = 2 blocks, anchor = block 0 (pinned), L2 holds l2_factor * 3 = 3.
  // Block 3's key norm 10 against 1 elsewhere is an outlier at 2 sigma (z = 5 / sqrt(6) = 2.04).
  const m0 = [0.3, 0.05, 0.2, 0.1, 0.05, 0.1, 0.2];
  const base = { prompt: 24, steps: 1, layers: 1, massOf: () => m0, normOf: (_l: number, b: number) => (b === 3 ? 10 : 1) };

  it('demotes progressively by saliency (bottom-k), keeps outliers unquantized and the anchor pinned', () => {
    const r = replayPolicy(synapseVm, 3, { ...base, options: { l2_factor: 1, promote_blocks: 0, outlier_sigma: 2 } });
    expect(r.acts('pin', -1)).toEqual(['0:0']);
    // prefill: 6 blocks for 3 slots; candidates outside the window (blocks 5, 6) and not pinned: 1..4;
    // the 3 lowest scores 0.05 (1), 0.05 (4), 0.1 (3) go to L2 - block 3 at FP16 (outlier)
    expect(r.acts('demote:dram:4', -1)).toEqual(['0:1', '0:4']);
    expect(r.acts('demote:dram:16', -1)).toEqual(['0:3']);
    // step 0: block 6 arrives -> block 2 (the only candidate) to L2; L2 has 4 > 3 -> its coldest
    // (block 1, tie with 4 broken by id) goes to L3 at INT2
    expect(r.acts('demote:dram:4', 0)).toEqual(['0:2']);
    expect(r.acts('demote:nvme:2', 0)).toEqual(['0:1']);
    expect(r.tiers(0)).toEqual([0, 2, 1, 1, 1, 0, 0]);
    expect(r.bits(0)).toEqual([16, 2, 4, 16, 4, 16, 16]);
    expect(r.cache.isPinned(0, 0)).toBe(true);
    // everything stays attended; quant error = mass-weighted error of the quantized blocks
    expect(r.results[0].recall[0]).toBeCloseTo(1, 9);
    const e2 = T.relError(2, 128, false);
    const e4 = T.relError(4, 128, false);
    expect(r.qualities[0].quant_error).toBeCloseTo(0.05 * e2 + 0.25 * e4, 6);
  });

  it('keeps an outlier unquantized down to L3 (INT2 for the others)', () => {
    // l2_factor 0: L2 holds nothing, so every block that leaves L1 goes on to L3 in the same decision
    const r = replayPolicy(synapseVm, 3, { ...base, options: { l2_factor: 0, promote_blocks: 0, outlier_sigma: 2 } });
    expect(r.acts('demote:nvme:2', -1)).toEqual(['0:1', '0:4']);
    expect(r.acts('demote:nvme:16', -1)).toEqual(['0:3']);
    expect(r.tiers(0)).toEqual([0, 2, 2, 2, 2, 0, 0]);
    expect(r.bits(0)).toEqual([16, 2, 2, 16, 2, 16, 16]);
    // with the guard off (sigma high enough that nothing is an outlier), block 3 is quantized like the rest
    const off = replayPolicy(synapseVm, 3, { ...base, options: { l2_factor: 0, promote_blocks: 0, outlier_sigma: 3 } });
    expect(off.bits(0)).toEqual([16, 2, 2, 2, 2, 16, 16]);
  });
});

describe('synapsevm instances', () => {
  // the policy is one class for every replay: an instance keeps its state in its own fields, so a
  // replay run after another instance's (other options, another trace) takes the same actions as before
  const massOf = (s: number, l: number, n: number) => Array.from({ length: n }, (_, b) => ((b * 7 + s * 3 + l) % 11) + (b === 2 ? 30 : 0));
  const run = (options: Record<string, unknown>, seed: number) =>
    replayPolicy(synapseVm, 3, { prompt: 40, steps: 6, layers: 2, options, massOf: (s, l, n) => massOf(s + seed, l, n).map((m, _, a) => m / a.reduce((x, y) => x + y, 0)) }).log.map(
      (a) => `${a.step}/${a.layer} ${a.what} ${a.args.join(',')} ${a.ok}`,
    );
  it('takes the same actions whatever ran before it in the process', () => {
    const first = run({ promote_ratio: 2, l2_factor: 0.5 }, 0);
    const other = run({ mode: 'predictive', probe_blocks: 1, promote_ratio: 1.5 }, 5);
    const again = run({ promote_ratio: 2, l2_factor: 0.5 }, 0);
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    // the run moves blocks down and back up (its promotions read the kept saliency orders)
    expect(first.some((a) => a.includes(' promote '))).toBe(true);
    expect(first.some((a) => a.includes(' demote:nvme'))).toBe(true);
  });
});
