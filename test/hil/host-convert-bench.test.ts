// The host's block conversions (in and between host tiers, on the CPU as the executor makes them): the
// bench's arithmetic on a scripted clock, its argument checks, and the calibration's field.
import { describe, expect, it } from 'vitest';
import { benchHostConvert, type HostConvertPoint } from '../../hil/bench/host-convert-bench.js';
import { applyFileBatchHost, applyHostConvert } from '../../hil/calibrate/calibrate.js';
import type { FileBatchPoint } from '../../hil/calibrate/file-batches.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';

const geometry = { kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 };

describe('host block conversions', () => {
  it('times blocks per pair of widths: per trial the clock over its blocks, the first trial left out', () => {
    // each read of the clock moves it on: 1, 3, 6, 10, ... ms (a trial's two reads are k and k + 1 apart)
    let t = 0;
    let step = 0;
    const now = () => (t += ++step);
    const r = benchHostConvert({ geometry, pairs: [[8, 2]], blocks: 4, trials: 2, now });
    // trials: reads 1 -> 3 (untimed), 6 -> 10 (4 ms), 15 -> 21 (6 ms): 1000 and 1500 us per block
    expect(r).toEqual([{ from_bits: 8, to_bits: 2, blocks: 4, us: 1250, trials_us: [1000, 1500] }]);
  });

  it('converts real blocks on the real clock, every default pair, and refuses bad arguments', () => {
    const r = benchHostConvert({ geometry, blocks: 2, trials: 1 });
    expect(r.map((x) => [x.from_bits, x.to_bits])).toEqual([
      [8, 4],
      [8, 2],
      [4, 2],
    ]);
    for (const x of r) expect(x.us).toBeGreaterThan(0);
    expect(() => benchHostConvert({ geometry, pairs: [[8, 5]] })).toThrow('host convert bench: widths 8 -> 5: each must be one of 2, 3, 4, 8, 16');
    expect(() => benchHostConvert({ geometry, blocks: 0 })).toThrow('host convert bench: blocks must be an integer >= 1 (got 0)');
    expect(() => benchHostConvert({ geometry, trials: 1.5 })).toThrow('host convert bench: trials must be an integer >= 1 (got 1.5)');
  });

  it('the calibration writes the median over the pairs as gpu.host_convert_us, and nothing without points', () => {
    const pt = (from_bits: number, to_bits: number, us: number): HostConvertPoint => ({ from_bits, to_bits, blocks: 16, us, trials_us: [us] });
    const p = loadHardware('h100-pcie5');
    applyHostConvert(p, [pt(8, 4, 700), pt(8, 2, 650.456), pt(4, 2, 900), pt(4, 2, Number.NaN)], 'test');
    expect(p.gpu.host_convert_us).toBe(700);
    expect(p.sources['gpu.host_convert_us']).toContain('8 -> 2 bits 650.46 us');
    // it acts on the host clock: a profile without issue costs is refused, naming the fields
    expect(() => validateProfile(p, 'p.json')).toThrow("p.json: gpu.host_convert_us needs the host clock: set one of gpu.issue_copy_us, gpu.issue_record_us, gpu.issue_kernel_us, gpu.issue_convert_us, gpu.issue_attention_us above 0, or leave host_convert_us out");
    p.gpu.issue_copy_us = 3;
    expect(() => validateProfile(p, 'p.json')).not.toThrow();
    const q = loadHardware('h100-pcie5');
    applyHostConvert(q, [], 'test');
    applyHostConvert(q, undefined, 'test');
    expect(q.gpu.host_convert_us).toBeUndefined();
    (q.gpu as unknown as Record<string, unknown>).host_convert_us = -1;
    expect(() => validateProfile(q, 'q.json')).toThrow(/host_convert_us/);
  });

  it('the calibration writes the median host time around a file read batch as gpu.file_batch_host_us, and nothing without it', () => {
    const pt = (host_us: number | undefined): FileBatchPoint => ({ requests: 4, bytes: 4 << 16, us: 500, kind: 'layer', run_blocks: 1, layer: 0, round: 0, ...(host_us === undefined ? {} : { host_us }) });
    const p = loadHardware('h100-pcie5');
    applyFileBatchHost(p, [pt(30), pt(110.123), pt(50), pt(undefined), pt(Number.NaN)], 'test');
    expect(p.gpu.file_batch_host_us).toBe(50);
    expect(p.sources['gpu.file_batch_host_us']).toContain('the median over 3 batches in the executor\'s pattern (range 30 to 110.12 us)');
    p.gpu.issue_copy_us = 3;
    expect(() => validateProfile(p, 'p.json')).not.toThrow();
    const q = loadHardware('h100-pcie5');
    applyFileBatchHost(q, [pt(undefined)], 'test');
    applyFileBatchHost(q, undefined, 'test');
    expect(q.gpu.file_batch_host_us).toBeUndefined();
    // a host that went on before the batch's own clock stopped reads as none, not a negative cost
    applyFileBatchHost(q, [pt(-3)], 'test');
    expect(q.gpu.file_batch_host_us).toBe(0);
  });
});
