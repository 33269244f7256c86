// The HIL executor on the host backend: the run directory has the simulator's schema, the policy's
// decisions are the simulator's, and real bytes survive demote/promote round trips (DRAM and the
// NVMe file tier). The cuda variant runs where a GPU is.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hilRun, writeHilRunDir } from '../../hil/executor/hil-run.js';
import { writeRunDir } from '../../sim/run-dir.js';
import { simulate, type RunConfig } from '../../sim/run.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const cuda = backendAvailability('cuda');
const fx = makeHilFixture();
const fx6 = makeHilFixture(256, 6);
afterAll(() => {
  rmSync(fx.dir, { recursive: true, force: true });
  rmSync(fx6.dir, { recursive: true, force: true });
});

const config = (policy: string, opts: Record<string, string> = {}): RunConfig => ({
  trace: fx.trace,
  policy,
  policy_options: opts,
  model: fx.model,
  hardware: 'h100-pcie5',
  hbm_budget: '25%',
  group_size: 64,
});

describe.skipIf(!host.available)(`HIL executor, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('writes a run directory with the same files, columns and summary keys as kvtier run', async () => {
    const progress: [number, number, string | undefined][] = [];
    const x = await hilRun(config('lru-offload'), { backend: 'host', nvmeDir: fx.dir, onProgress: (d, n, label) => progress.push([d, n, label]) });
    const sim = simulate(config('lru-offload'));
    // steps done while in flight: setup at 0, never backwards, every step done at the end
    const n = x.hil.steps.length;
    expect(progress[0]).toEqual([0, n, 'setup']);
    expect(progress.at(-1)).toEqual([n, n, 'timings']);
    for (let i = 1; i < progress.length; i++) expect(progress[i][0]).toBeGreaterThanOrEqual(progress[i - 1][0]);
    expect(progress.every(([d, total]) => total === n && d >= 0 && d <= n)).toBe(true);
    writeHilRunDir(join(fx.dir, 'hil'), x);
    writeRunDir(join(fx.dir, 'sim'), sim);
    for (const f of ['config.json', 'steps.arrow', 'steps.csv', 'summary.json', 'trace.json']) expect(existsSync(join(fx.dir, 'hil', f))).toBe(true);
    const header = (d: string) => readFileSync(join(fx.dir, d, 'steps.csv'), 'utf8').split('\n')[0];
    expect(header('hil')).toBe(header('sim'));
    const hs = JSON.parse(readFileSync(join(fx.dir, 'hil', 'summary.json'), 'utf8'));
    const ss = JSON.parse(readFileSync(join(fx.dir, 'sim', 'summary.json'), 'utf8'));
    expect(Object.keys(hs).sort()).toEqual(Object.keys(ss).sort());
    // the same decisions: actions, recall and bytes per link direction
    expect(hs.actions).toEqual(ss.actions);
    expect(hs.attention_recall).toEqual(ss.attention_recall);
    expect(hs.steps).toBe(24);
    expect(hs.tbt_ms.p50).toBeGreaterThan(0);
    expect(hs.bytes['pcie:dram->hbm']).toBeGreaterThan(0);
    // the driver accounts staged bytes per (layer, tier), the executor moves named blocks: close, not equal
    expect(Math.abs(hs.bytes_total - ss.bytes_total) / ss.bytes_total).toBeLessThan(0.2);
    for (const row of x.result.steps) {
      expect(row.latency_ms).toBeGreaterThan(0);
      expect(row.stall_ms).toBeCloseTo(Math.max(0, row.latency_ms - row.compute_ms), 9);
    }
    const hil = JSON.parse(readFileSync(join(fx.dir, 'hil', 'hil.json'), 'utf8'));
    expect(hil.schema).toBe('kvtier-hil-run/v1');
    expect(hil.stall_definition).toMatch(/latency - kernel time/);
    const trace = JSON.parse(readFileSync(join(fx.dir, 'hil', 'trace.json'), 'utf8'));
    expect(trace.traceEvents.some((e: { name: string }) => e.name === 'attention')).toBe(true);
  });

  it('keeps every block\'s bytes through demote/promote round trips via the NVMe file tier', async () => {
    const x = await hilRun(config('lru-offload', { offload_tier: 'nvme' }), { backend: 'host', nvmeDir: fx.dir, verify: true, seed: 11 });
    expect(x.result.summary.actions.promote).toBeGreaterThan(0);
    expect(x.result.summary.actions.demote).toBeGreaterThan(0);
    expect(x.result.summary.bytes['nvme:nvme->dram']).toBeGreaterThan(0);
    expect(x.hil.nvme_file.used).toBe(true);
    expect(x.hil.nvme_file).toMatchObject({ io_threads: 32, batched_reads: true });
    expect(x.hil.verify).toMatchObject({ mismatches: 0 });
    expect(x.hil.verify!.checked).toBeGreaterThan(60);
    expect(x.hil.steps.some((s) => s.file_us > 0)).toBe(true);
    // one promise per request (`fileBatch: false`) keeps the same bytes and decisions
    const each = await hilRun(config('lru-offload', { offload_tier: 'nvme' }), { backend: 'host', nvmeDir: fx.dir, verify: true, seed: 11, fileBatch: false, ioThreads: 4 });
    expect(each.hil.nvme_file).toMatchObject({ io_threads: 4, batched_reads: false });
    expect(each.hil.verify).toMatchObject({ mismatches: 0 });
    expect(each.result.summary.actions).toEqual(x.result.summary.actions);
    expect(each.result.summary.bytes).toEqual(x.result.summary.bytes);
  });

  it('times the memory stream\'s waits on compute when asked (waitMarks), and eager fences keep the bytes right', async () => {
    const plain = await hilRun(config('lru-offload'), { backend: 'host', nvmeDir: fx.dir });
    expect(plain.hil.steps.every((s) => s.mem_waits === undefined)).toBe(true);
    const x = await hilRun(config('lru-offload'), { backend: 'host', nvmeDir: fx.dir, waitMarks: true, verify: true });
    expect(x.hil.verify).toMatchObject({ mismatches: 0 });
    expect(x.hil.steps.some((s) => (s.mem_waits ?? 0) > 0)).toBe(true);
    for (const s of x.hil.steps) expect(s.mem_wait_us).toBeGreaterThanOrEqual(0);
    writeHilRunDir(join(fx.dir, 'hil-marks'), x);
    expect(readFileSync(join(fx.dir, 'hil-marks', 'hil-steps.csv'), 'utf8').split('\n')[0]).toMatch(/,mem_wait_us,mem_waits,mem_dir_switches$/);
    const eager = await hilRun(config('lru-offload'), { backend: 'host', nvmeDir: fx.dir, eagerFences: true, verify: true });
    expect(eager.hil.verify).toMatchObject({ mismatches: 0 });
    expect(eager.result.summary.actions).toEqual(x.result.summary.actions);
  });

  it('declares uniform tables to the attention kernel (a broken promise would fail the host backend\'s check)', async () => {
    const full = await hilRun(config('full'), { backend: 'host', nvmeDir: fx.dir });
    const layers = full.result.steps.length * 2; // the fixture model has 2 layers
    expect(full.hil.attention_tables).toEqual({ fp16: layers });
    // every block at 4 bits, requantized every 16 tokens: uniform INT4 tables, or mixed while the newest block is FP16
    const int4 = await hilRun(config('uniform-int8', { uniform_bits: '4' }), { backend: 'host', nvmeDir: fx.dir, verify: true });
    const t = int4.hil.attention_tables;
    expect((t.int4 ?? 0) + (t.mixed ?? 0)).toBe(layers);
    expect(t.int4).toBeGreaterThan(0);
    expect(int4.hil.verify!.mismatches).toBe(0);
  });

  it('streams a SLEP policy\'s weights host -> two HBM slots before each layer\'s projections: the simulator\'s copies and bytes', async () => {
    for (const [opts, resident, layerBytes, copies] of [
      // FP16 weights, both layers streamed: one copy per layer and step, plus the first run-ahead
      [{}, 0, 256 * 1024 * 2, 6 * 2 + 1],
      // INT4 weights (4 bits + 4 B of scale and zero per 128 weights); layer 0 resident
      [{ weight_bits: '4', resident_layers: '1' }, 1, (256 * 1024) / 2 + ((256 * 1024) / 128) * 4, 6 + 1],
    ] as const) {
      const cfg = { ...config('slep', opts), trace: fx6.trace };
      const x = await hilRun(cfg, { backend: 'host', nvmeDir: fx.dir, verify: true });
      const sim = simulate(cfg);
      expect(x.hil.weight_streaming).toMatchObject({ tier: 'dram', buffers: 2, resident_layers: resident, layer_bytes: layerBytes });
      expect(x.result.spans.filter((e) => e.name.startsWith('weights layer')).length).toBe(copies);
      expect(x.result.summary.bytes['pcie:dram->hbm']).toBe(sim.summary.bytes['pcie:dram->hbm']);
      expect(x.hil.verify).toMatchObject({ mismatches: 0 });
    }
  });

  it('maps CXL to pinned DRAM and HDD to the NVMe tier\'s file, with warnings, and names what held every tier', async () => {
    const x = await hilRun(config('lru-offload', { offload_tier: 'cxl' }), { backend: 'host', verify: true });
    expect(x.hil.warnings.join(' ')).toMatch(/CXL is simulation-only/);
    expect(x.hil.verify).toMatchObject({ mismatches: 0 });
    expect(x.hil.tier_devices.cxl).toBe('pinned host DRAM, a second pool (no CXL here)');
    const h = await hilRun(config('lru-offload', { offload_tier: 'hdd' }), { backend: 'host', nvmeDir: fx.dir, verify: true });
    expect(h.hil.warnings.join(' ')).toMatch(/HDD is simulation-only: no HDD here, so blocks placed in the "hdd" tier lived in the NVMe tier's file/);
    expect(h.hil.nvme_file.used).toBe(true);
    expect(h.hil.tier_devices).toMatchObject({ hdd: `the NVMe tier's file in ${fx.dir} (no HDD here)`, nvme: `a file in ${fx.dir}` });
    // the HDD's legs are counted on its own links, none on the NVMe's
    expect(h.result.summary.bytes['sata:dram->hdd']).toBeGreaterThan(0);
    expect(h.result.summary.bytes['sata:hdd->dram']).toBeGreaterThan(0);
    expect(h.result.summary.bytes['nvme:nvme->dram']).toBe(0);
    expect(h.result.summary.actions.promote).toBeGreaterThan(0);
    expect(h.hil.verify).toMatchObject({ mismatches: 0 });
    expect(h.hil.verify!.checked).toBeGreaterThan(60);
  });
});

describe.skipIf(!cuda.available)(`HIL executor, cuda backend${cuda.available ? '' : ` (skipped: ${cuda.reason})`}`, () => {
  it('round-trips blocks through DRAM and NVMe on the GPU', async () => {
    for (const tier of ['dram', 'nvme']) {
      const x = await hilRun(config('lru-offload', { offload_tier: tier }), { backend: 'cuda', nvmeDir: fx.dir, verify: true });
      expect(x.hil.verify).toMatchObject({ mismatches: 0 });
    }
  });
});
