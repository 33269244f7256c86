// The validation grid's statistics, calibration points, grid file and expansion, and tier
// descriptions, checked against hand-computed values.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCalibrationPoints } from '../../hil/calibrate/measure.js';
import { heldOutPoints, pointsNearGrid, spread } from '../../hil/validate/calibration-points.js';
import { expandGrid } from '../../hil/validate/grid.js';
import { calibrationSeconds, cellSeconds, WallRatios } from '../../hil/validate/plan.js';
import { distribution, hostWaitShare, judgeCell, medianP95, pairSpreads, relErrors, repeatableSteps, stepMedians } from '../../hil/validate/stats.js';
import { formatPool } from '../../hil/validate/format.js';
import { describeBlockDevice, mountOf } from '../../hil/validate/tier-devices.js';
import { type CellResult, cellStats, movesTo, poolOf, poolSummary, standInCells, summarizeCells, withStandInNote } from '../../hil/validate/validate.js';
import { loadModel } from '../../sim/models/load-model.js';
import { parseValidateGrid, readValidateGrid } from '../../studies/validate-grid.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-validate-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = join(import.meta.dirname, '../fixtures/validate/grid.json');

describe('validation statistics', () => {
  it('per-step errors, medians over runs and the runs\' pairwise spread', () => {
    expect(relErrors([1.1, 0.9, 2], [1, 1, 2])).toEqual([expect.closeTo(0.1, 12), expect.closeTo(0.1, 12), 0]);
    expect(() => relErrors([1], [1, 2])).toThrow(/1 simulated steps against 2 measured/);
    expect(stepMedians([[1, 2, 3], [3, 2, 1], [2, 5, 2]])).toEqual([2, 2, 2]);
    expect(stepMedians([[1, 4], [3, 8]])).toEqual([2, 6]);
    // |1 - 3| / 2 = 1, |2 - 2| / 2 = 0
    expect(pairSpreads([[1, 2], [3, 2]])).toEqual([1, 0]);
    // three runs of one step: (1,2) 1/1.5, (1,4) 3/2.5, (2,4) 2/3
    expect(pairSpreads([[1], [2], [4]])).toEqual([expect.closeTo(2 / 3, 12), expect.closeTo(1.2, 12), expect.closeTo(2 / 3, 12)]);
    expect(pairSpreads([[1, 2, 3]])).toEqual([]);
  });

  it('distributions and median / p95 with linear interpolation', () => {
    expect(distribution([4, 1, 3, 2])).toEqual({ mean: 2.5, p50: 2.5, p99: expect.closeTo(3.97, 12) });
    expect(medianP95([0, 10])).toEqual({ median: 5, p95: 9.5, n: 2 });
    expect(Number.isNaN(distribution([]).mean)).toBe(true);
  });

  it('judges each pool against its own targets', () => {
    const d = { mean: 1, p50: 1, p99: 1 };
    const s = { median: 0, p95: 0.02, n: 4 };
    const moving = judgeCell('moving', { median: 0.02, p95: 0.09, n: 10 }, d, d, s);
    expect(moving.pass).toBe(false);
    expect(moving.checks.map((c) => [c.name, c.limit, c.pass])).toEqual([['median |error|', 0.03, true], ['p95 |error|', 0.08, false]]);
    expect(judgeCell('non-moving', { median: 0.009, p95: 0.019, n: 10 }, d, d, s).pass).toBe(true);
    expect(judgeCell('non-moving', { median: 0.011, p95: 0.019, n: 10 }, d, d, s).pass).toBe(false);
    // storage: mean 4% off (<= 5%), p50 1% off (<= the spread 2%), p99 25% off (> 2%)
    const st = judgeCell('storage', { median: 0.5, p95: 0.9, n: 10 }, { mean: 1.04, p50: 1.01, p99: 1.5 }, { mean: 1, p50: 1, p99: 1.2 }, s);
    expect(st.checks.map((c) => [c.name, c.pass])).toEqual([['mean step time', true], ['p50 step time', true], ['p99 step time', false]]);
    expect(st.checks[0].value).toBeCloseTo(0.04, 12);
    expect(st.checks[2].value).toBeCloseTo(0.25, 12);
    // one run: no spread, the distribution checks miss
    expect(judgeCell('storage', s, d, d, medianP95([])).pass).toBe(false);
  });

  it('pools by what a policy moves', () => {
    expect(poolOf([{}, { 'pcie:hbm->dram': 0 }], 'nvme')).toBe('non-moving');
    expect(poolOf([{}, { 'pcie:hbm->dram': 5 }], 'nvme')).toBe('moving');
    expect(poolOf([{ 'pcie:hbm->dram': 5, 'nvme-link:dram->nvme': 1 }], 'nvme')).toBe('storage');
    expect(poolOf([{ 'nvme-link:nvme->dram': 1 }], 'nvme')).toBe('storage');
    expect(poolOf([{ 'nvme-link:nvme->dram': 1 }], undefined)).toBe('moving');
  });

  it('cells that move data to or from a tier the machine does not have get a row of their own, beside their pool', () => {
    const cell = (id: string, bytes: Record<string, number>, sim: number[], hw: number[][]): CellResult => {
      const st = cellStats('moving', sim, hw, 1);
      return { id, key: '', trace: 't', trace_name: 't', trace_kind: 'generated', context: 256, prompt_tokens: 256, model: 'm', policy: id, label: id, options: {}, budget: '20%', status: 'ok', pool: 'moving', sim_bytes: bytes, sim_ms: sim, hw_ms: hw, error: st.error, spread: st.spread, judgement: st.judgement, estimate_s: 1 };
    };
    expect(movesTo({ 'cxl:dram->cxl': 5 }, ['cxl', 'hdd'])).toBe(true);
    expect(movesTo({ 'cxl:cxl->dram': 5 }, ['cxl'])).toBe(true);
    expect(movesTo({ 'cxl:dram->cxl': 0, 'pcie:hbm->dram': 3 }, ['cxl'])).toBe(false);
    expect(movesTo({ 'sata:dram->hdd': 1 }, [])).toBe(false);
    // a: to CXL, its steps 20% off; b: over PCIe only, exact
    const a = cell('a', { 'pcie:hbm->dram': 1, 'cxl:dram->cxl': 1 }, [0, 12, 12], [[0, 10, 10], [0, 10, 10]]);
    const b = cell('b', { 'pcie:hbm->dram': 1 }, [0, 10, 10], [[0, 10, 10], [0, 10, 10]]);
    const plain = summarizeCells([a, b], 1);
    expect(plain.pools.map((p) => p.name)).toEqual(['moving data (any bytes on a link)', 'moving data to or from storage', 'moving no data']);
    const s = summarizeCells([a, b], 1, ['cxl', 'hdd']);
    expect(s.pools.slice(0, 3)).toEqual(plain.pools);
    expect(s.pools[3]).toMatchObject({ name: 'moving data to or from cxl (stand-in)', cells: 1, passed: 0, error: { median: expect.closeTo(0.2, 12), n: 2 } });
    // none touched: no row
    expect(summarizeCells([b], 1, ['cxl', 'hdd']).pools.length).toBe(3);
    // the note names the cells' policies and the tiers they touched; made again, it replaces the earlier one
    const st = standInCells([a, b], ['cxl', 'hdd']);
    expect([st.cells.map((c) => c.id), st.tiers]).toEqual([['a'], ['cxl']]);
    expect(st.note).toMatch(/^1 cells moved data to or from cxl, which this machine does not have .*\(a\)$/);
    expect(standInCells([b], ['cxl']).note).toBeUndefined();
    expect(withStandInNote(['x', '3 cells moved data to or from cxl, which ...', 'y'], st.note)).toEqual(['x', 'y', st.note]);
    expect(withStandInNote(['x', '3 cells moved data to or from cxl, which ...'], undefined)).toEqual(['x']);
  });

  it('cell statistics leave out the warm-up steps, and pools put per-step values together', () => {
    const cell = (label: string, sim: number[], hw: number[][], pool: CellResult['pool']): CellResult => {
      const st = cellStats(pool!, sim, hw, 1);
      return { id: label, key: '', trace: 't', trace_name: 't', trace_kind: 'generated', context: 256, prompt_tokens: 256, model: 'm', policy: label, label, options: {}, budget: '20%', status: 'ok', pool, sim_ms: sim, hw_ms: hw, error: st.error, spread: st.spread, judgement: st.judgement, estimate_s: 1 };
    };
    // A: steps 1, 2 against 10: errors 0, 0.1; runs identical (spread 0)
    const a = cell('a', [99, 10, 11], [[10, 10, 10], [10, 10, 10]], 'moving');
    // B: steps 1, 2: 6 and 4 against 5 = 0.2 each; each run alone: run 1 (5, 5) and run 2 (5, 5)
    const b = cell('b', [1, 6, 4], [[5, 5, 5], [5, 5, 5]], 'moving');
    const st = cellStats('moving', [99, 10, 11], [[10, 10, 10], [10, 10, 10]], 1);
    expect(st.error).toEqual({ median: expect.closeTo(0.05, 12), p95: expect.closeTo(0.095, 12), n: 2 });
    expect(st.spread).toEqual({ median: 0, p95: 0, n: 2 });
    expect(st.judgement.pass).toBe(false);
    // runs that differ: medians (9, 11) -> 10, each run alone |10 - 9| / 9 and |10 - 11| / 11
    const d = cellStats('moving', [0, 10], [[0, 9], [0, 11]], 1);
    expect(d.error.median).toBe(0);
    expect(d.error_each_run.median).toBeCloseTo((1 / 9 + 1 / 11) / 2, 12);
    expect(d.spread.median).toBeCloseTo(2 / 10, 12);
    const p = poolSummary('moving', [a, b, { ...a, id: 'x', status: 'skipped' }], 1);
    // pooled errors 0, 0.1, 0.2, 0.2: median 0.15, p95 at position 2.85 = 0.2
    expect(p).toMatchObject({ cells: 2, passed: 0, error: { median: expect.closeTo(0.15, 12), p95: expect.closeTo(0.2, 12), n: 4 }, spread: { median: 0, n: 4 } });
    // every step of A and B repeated (identical runs): the repeated-step error is the whole error
    expect(p.error_repeatable).toEqual(p.error);
  });

  it('repeated steps: every pair of runs within 2% of its mean; the error over those steps pooled beside the strict one', () => {
    // pair spreads per step: 0, 2 / 101 (within), 3 / 101.5 (not), 1 (one run slowed 3x)
    expect(repeatableSteps([[100, 100, 100, 100], [100, 102, 103, 300]])).toEqual([true, true, false, false]);
    // three runs: every pair counts (99 against 101: 2 / 100, at the bound; 100 against 102.1: 2.1 / 101.05)
    expect(repeatableSteps([[100, 99, 100], [100, 101, 100], [100, 100, 102.1]])).toEqual([true, true, false]);
    expect(repeatableSteps([[100], [101]])).toEqual([true]);
    // one run: nothing says a step repeated
    expect(repeatableSteps([[1, 2, 3]])).toEqual([false, false, false]);
    expect(repeatableSteps([])).toEqual([]);
    const cell = (id: string, sim: number[], hw: number[][]): CellResult => {
      const st = cellStats('moving', sim, hw, 1);
      return { id, key: '', trace: 't', trace_name: 't', trace_kind: 'generated', context: 256, prompt_tokens: 256, model: 'm', policy: id, label: id, options: {}, budget: '20%', status: 'ok', pool: 'moving', sim_ms: sim, hw_ms: hw, error: st.error, spread: st.spread, judgement: st.judgement, estimate_s: 1 };
    };
    // steps 1..4 (step 0 left out): runs agree at 1 and 3 (errors 0.01, 0.05); at 2 one run took 30 and at
    // 4 the runs differ by 5%, so those two count in the strict error (medians 20, 10.25) only
    const c = cell('c', [0, 10.1, 10, 10.5, 10], [[0, 10, 10, 10, 10], [0, 10, 30, 10, 10.5]]);
    const st = cellStats('moving', c.sim_ms!, c.hw_ms!, 1);
    expect(st.repeatableErrors).toEqual([expect.closeTo(0.01, 12), expect.closeTo(0.05, 12)]);
    expect(st.errors).toEqual([expect.closeTo(0.01, 12), expect.closeTo(0.5, 12), expect.closeTo(0.05, 12), expect.closeTo(0.25 / 10.25, 12)]);
    const p = poolSummary('moving', [c], 1);
    expect(p.error_repeatable).toEqual({ median: expect.closeTo(0.03, 12), p95: expect.closeTo(0.048, 12), n: 2 });
    expect(p.error.n).toBe(4);
    expect(formatPool(p)).toMatch(/repeated steps: median {3}3\.00% p95 {3}4\.80% \(2 of 4\)$/);
  });
});

describe('held-out calibration points', () => {
  it('leave out every context near the grid and bracket it', () => {
    const p = heldOutPoints([1024, 4096]);
    expect(p.situ_contexts).toEqual([256, 384, 512, 768, 1536, 2048, 3072, 6144]);
    expect(p.attention_contexts).toEqual([256, 384, 512, 1536, 2048, 3072, 6144]);
    // copies and file batches below the smallest grid context, the overlap in the middle
    expect([p.layout_context, p.file_context, p.overlap_context]).toEqual([768, 768, 2048]);
    expect(pointsNearGrid(p, [1024, 4096], 0.1)).toEqual([]);
    const big = heldOutPoints([8192, 32768, 131072]);
    expect(pointsNearGrid(big, [8192, 32768, 131072], 0.1)).toEqual([]);
    expect(Math.max(...big.situ_contexts)).toBeGreaterThan(131072);
    expect(Math.min(...big.situ_contexts)).toBeLessThan(8192);
    // the standard calibration is taken at 8k and 32k
    expect(pointsNearGrid(defaultCalibrationPoints(false), [8192, 32768, 131072])).toEqual([8192, 32768]);
    expect(() => heldOutPoints([128, 192, 256, 384, 512, 768, 1024, 1536, 2048], { quick: true })).toThrow(/fewer than two candidate contexts/);
    expect(spread([1, 2, 3, 4, 5], 3)).toEqual([1, 3, 5]);
  });
});

describe('grid files', () => {
  it('read the sweep grammar plus contexts, steps and runs, and expand in a fixed order', () => {
    const g = readValidateGrid(FIXTURE);
    expect(g).toMatchObject({ name: 'validate-tiny', contexts: [256], budgets: ['25%'], steps: 4, runs: 2, skip_steps: 1, calibration: 'quick', base_hardware: 'h100-pcie5' });
    expect(g.policies.map((p) => [p.label, p.full])).toEqual([['full', true], ['streaming-llm', false], ['lru-offload', false], ['lru-offload-nvme', false]]);
    const cells = expandGrid(g);
    expect(cells.map((c) => c.id)).toEqual([
      '0000_broad-hil-mini-256-s1_full_100pct',
      '0001_broad-hil-mini-256-s1_streaming-llm_25pct',
      '0002_broad-hil-mini-256-s1_lru-offload_25pct',
      '0003_broad-hil-mini-256-s1_lru-offload-nvme_25pct',
      '0004_broad-hil-mini-wide-256-s1_full_100pct',
      '0005_broad-hil-mini-wide-256-s1_streaming-llm_25pct',
      '0006_broad-hil-mini-wide-256-s1_lru-offload_25pct',
      '0007_broad-hil-mini-wide-256-s1_lru-offload-nvme_25pct',
    ]);
  });

  it('runs captured traces at their own context with their own models, after the generated contexts', () => {
    const g = parseValidateGrid(
      { traces: [{ path: 'c.kvt', models: ['own.model.json'] }, { generate: { preset: 'needle' }, name: 'n' }], contexts: [2048, 1024], budgets: ['10%', '40%'], models: ['llama-3-8b'], policies: ['h2o'], hardware: ['h100-pcie5'] },
      join(dir, 'g.json'),
    );
    expect(g.runs).toBe(3);
    expect(g.steps).toBe(32);
    expect(g.traces[0].models).toEqual([join(dir, 'own.model.json')]);
    expect(expandGrid(g).map((c) => [c.trace_id, c.context, c.budget])).toEqual([
      ['n-llama-3-8b-1k-s1', 1024, '10%'],
      ['n-llama-3-8b-1k-s1', 1024, '40%'],
      ['n-llama-3-8b-2k-s1', 2048, '10%'],
      ['n-llama-3-8b-2k-s1', 2048, '40%'],
      ['c', null, '10%'],
      ['c', null, '40%'],
    ]);
    // with its own context known, a captured trace runs after the generated traces at that context
    expect(expandGrid(g, () => 1024).map((c) => `${c.trace_id}@${c.budget}`)).toEqual(['n-llama-3-8b-1k-s1@10%', 'n-llama-3-8b-1k-s1@40%', 'c@10%', 'c@40%', 'n-llama-3-8b-2k-s1@10%', 'n-llama-3-8b-2k-s1@40%']);
    const all = parseValidateGrid({ traces: [{ generate: {} }], contexts: [512], budgets: ['20%'], models: ['llama-3-8b'], policies: 'all', hardware: ['h100-pcie5'] }, 'g.json');
    expect(all.policies.length).toBeGreaterThan(15);
  });

  it('refuses bad grids naming the file and the field', () => {
    const base = { traces: [{ generate: { preset: 'broad' } }], contexts: [512], budgets: ['20%'], models: ['llama-3-8b'], policies: ['h2o'], hardware: ['h100-pcie5'] };
    expect(() => parseValidateGrid({ ...base, contexts: undefined }, 'g.json')).toThrow(/^g\.json: "contexts" must be a non-empty list/);
    expect(() => parseValidateGrid({ ...base, contexts: [512, 512] }, 'g.json')).toThrow(/lists a context twice/);
    expect(() => parseValidateGrid({ ...base, hardware: ['h100-pcie5', 'a100-pcie4'] }, 'g.json')).toThrow(/"hardware" must list exactly one profile/);
    expect(() => parseValidateGrid({ ...base, policies: ['nope'] }, 'g.json')).toThrow(/policies\[0\]: .*nope/);
    expect(() => parseValidateGrid({ ...base, runs: 0 }, 'g.json')).toThrow(/"runs" must be an integer >= 1/);
    expect(() => parseValidateGrid({ ...base, calibration: 'fast' }, 'g.json')).toThrow(/"calibration" must be "full" or "quick"/);
    expect(() => parseValidateGrid({ ...base, colour: 1 }, 'g.json')).toThrow(/unknown field "colour"/);
  });
});

describe('plan and tier devices', () => {
  it('estimates grow with context, runs and budget', () => {
    const m = loadModel('llama-3-8b');
    expect(cellSeconds(m, 131072, 16, 0.2, 2)).toBeGreaterThan(cellSeconds(m, 8192, 16, 0.2, 2));
    expect(cellSeconds(m, 8192, 16, 0.2, 3)).toBeGreaterThan(cellSeconds(m, 8192, 16, 0.2, 2));
    expect(cellSeconds(m, 8192, 16, 1, 2)).toBeGreaterThan(cellSeconds(m, 8192, 16, 0.1, 2));
  });

  it("a calibration's estimate follows the model's weights and its KV per token", () => {
    // 6 s + 8.2 s per GB of layer weights + 3.2 s per KiB of one layer's FP16 KV per token
    const l3 = loadModel('llama-3-8b'); // 32 x 436,207,616 B of layer weights, 8 KV heads x 128 x 2 x 2 B = 4 KiB
    const l2 = loadModel('llama-2-7b'); // 32 x 404,750,336 B, 32 KV heads: 16 KiB
    expect(calibrationSeconds(l3, true)).toBeCloseTo(6 + 13.958643712 * 8.2 + 4 * 3.2, 6);
    expect(calibrationSeconds(l2, true)).toBeCloseTo(6 + 12.952010752 * 8.2 + 16 * 3.2, 6);
    expect(calibrationSeconds(l3, false)).toBeCloseTo(2.5 * calibrationSeconds(l3, true), 9);
  });

  it('finds the mount of a path and the driver behind a block device', () => {
    const mounts = ['/dev/vda / ext4 rw 0 0', 'tmpfs /dev/shm tmpfs rw 0 0', '/dev/nvme0n1p2 /data xfs rw 0 0', '/dev/sdb1 /data/x\\040y ext4 rw 0 0'].join('\n');
    expect(mountOf('/tmp/a', mounts)).toEqual({ source: '/dev/vda', mount_point: '/', fstype: 'ext4' });
    expect(mountOf('/dev/shm/f', mounts)?.fstype).toBe('tmpfs');
    expect(mountOf('/data/f', mounts)?.source).toBe('/dev/nvme0n1p2');
    expect(mountOf('/data/x y/f', mounts)?.source).toBe('/dev/sdb1');
    expect(mountOf('/datax', mounts)?.source).toBe('/dev/vda');
    const sys = join(dir, 'sys-block');
    mkdirSync(join(sys, 'vdz', 'device'), { recursive: true });
    mkdirSync(join(sys, 'vdz', 'queue'), { recursive: true });
    mkdirSync(join(dir, 'drivers', 'virtio_blk'), { recursive: true });
    symlinkSync(join(dir, 'drivers', 'virtio_blk'), join(sys, 'vdz', 'device', 'driver'));
    writeFileSync(join(sys, 'vdz', 'queue', 'rotational'), '0\n');
    expect(describeBlockDevice('/dev/vdz1', sys)).toBe('/dev/vdz, driver virtio_blk, a virtio disk of a virtual machine (not a local NVMe drive), non-rotational');
    expect(describeBlockDevice('overlay', sys)).toBe('overlay (not a block device)');
  });
});

describe('the standing grid', () => {
  it('lab/validate/grid.json: contexts 8k/32k/128k, at least two models, a captured trace, a storage policy, held-out calibration', () => {
    const g = readValidateGrid(join(import.meta.dirname, '../../lab/validate/grid.json'));
    const cells = expandGrid(g);
    expect([...new Set(cells.map((c) => c.context))].sort()).toEqual([131072, 32768, 8192, null]);
    expect(new Set(cells.filter((c) => c.context !== null).map((c) => c.model)).size).toBeGreaterThanOrEqual(2);
    expect(cells.some((c) => c.trace.path?.endsWith('.kvt') && c.model.endsWith('kvtier-brown-gpt.model.json'))).toBe(true);
    expect(cells.some((c) => c.policy.options.offload_tier === 'nvme')).toBe(true);
    expect(new Set(cells.map((c) => c.budget))).toEqual(new Set(['10%', '20%', '40%', '100%']));
    expect(new Set(cells.map((c) => c.id)).size).toBe(cells.length);
    expect(pointsNearGrid(heldOutPoints([8192, 32768, 131072]), [8192, 32768, 131072], 0.1)).toEqual([]);
    expect(() => parseValidateGrid({ traces: [{ generate: {}, policies: ['lru'] }], contexts: [512], budgets: ['20%'], models: ['llama-3-8b'], policies: ['h2o'], hardware: ['h100-pcie5'] }, 'g.json')).toThrow(/traces\[0\]\.policies: "lru" is not one of the grid's policies \(h2o\)/);
  });

  it('a trace\'s own contexts apply to generated traces only', () => {
    const base = { budgets: ['20%'], models: ['llama-3-8b'], policies: ['h2o'], hardware: ['h100-pcie5'] };
    const g = parseValidateGrid({ ...base, traces: [{ generate: { preset: 'broad' }, name: 'b', contexts: [4096] }, { generate: {}, name: 'd' }], contexts: [1024] }, 'g.json');
    expect(expandGrid(g).map((c) => `${c.trace.name}@${c.context}`)).toEqual(['d@1024', 'b@4096']);
    // every generated trace with its own contexts: the grid needs none
    expect(parseValidateGrid({ ...base, traces: [{ generate: {}, contexts: [512] }] }, 'g.json').contexts).toEqual([]);
    expect(() => parseValidateGrid({ ...base, traces: [{ path: 'c.kvt', contexts: [512] }] }, 'g.json')).toThrow(/traces\[0\]\.contexts: only a generated trace takes contexts/);
    expect(() => parseValidateGrid({ ...base, traces: [{ generate: {}, contexts: [] }] }, 'g.json')).toThrow(/"traces\[0\]\.contexts" must be a non-empty list/);
  });
});

describe('wall-time ratios of the cells run so far', () => {
  it('scale a cell by its own policy\'s median ratio, else the median of all, so one slow policy does not stretch the rest', () => {
    const r = new WallRatios();
    expect(r.ratio('h2o')).toBe(1);
    r.add('h2o', 2, 1);
    r.add('h2o', 4, 1);
    r.add('quest', 3, 2);
    r.add('smartkv', 127, 2); // host work the estimate misses
    r.add('full', 0, 1); // no wall time: ignored
    expect(r.ratio('h2o')).toBe(3); // (2 + 4) / 2
    expect(r.ratio('smartkv')).toBe(63.5);
    expect(r.ratio('lru-offload')).toBe(3); // median of 1.5, 2, 4, 63.5
  });
});

describe('host wait share', () => {
  it('is the median over steps (the first skip left out) of the runs\' host gap over their latency', () => {
    // two runs, four steps; step 0 left out: steps 1..3 give (1 + 3) / (10 + 10) = 0.2, (0 + 0) / 20 = 0,
    // (5 + 5) / (10 + 30) = 0.25: median 0.2
    const hw_ms = [
      [50, 10, 10, 10],
      [50, 10, 10, 30],
    ];
    const hw_host_gap_ms = [
      [40, 1, 0, 5],
      [40, 3, 0, 5],
    ];
    expect(hostWaitShare({ hw_ms, hw_host_gap_ms }, 1)).toBeCloseTo(0.2, 12);
    // with step 0 kept: 80 / 100 = 0.8 joins, median of 0, 0.2, 0.25, 0.8 is 0.225
    expect(hostWaitShare({ hw_ms, hw_host_gap_ms }, 0)).toBeCloseTo(0.225, 12);
    // runs stored before host gaps were kept
    expect(hostWaitShare({ hw_ms }, 1)).toBeUndefined();
  });
});
