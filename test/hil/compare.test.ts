// `hil compare` on the host backend: both sides run, errors are computed per step and the report
// page is written.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { compare, formatCompare } from '../../hil/compare/compare.js';
import { absRelErrors, quantile } from '../../hil/compare/errors.js';
import { parsePolicyList } from '../../hil/compare/policy-list.js';
import { renderCompareReport } from '../../reports/hil-compare-report.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const fx = makeHilFixture(256, 8);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

describe('compare helpers', () => {
  it('parses policy lists with options and labels', () => {
    expect(parsePolicyList('full, lru-offload:offload_tier=nvme;prefetch=false')).toEqual([
      { name: 'full', options: {}, label: 'full' },
      { name: 'lru-offload', options: { offload_tier: 'nvme', prefetch: 'false' }, label: 'lru-offload-nvme-false' },
    ]);
    expect(() => parsePolicyList('full,full')).toThrow(/listed twice/);
    expect(() => parsePolicyList('h2o:budget')).toThrow(/key=value/);
  });
  it('computes absolute relative errors and interpolated quantiles', () => {
    expect(absRelErrors([1.1, 0.9, 2], [1, 1, 2])).toEqual([expect.closeTo(0.1, 12), expect.closeTo(0.1, 12), 0]);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([0, 10], 0.95)).toBeCloseTo(9.5, 12);
  });
});

describe.skipIf(!host.available)(`hil compare, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('runs the simulator and the hardware per policy and writes the report', async () => {
    const out = join(fx.dir, 'cmp');
    const r = await compare({ trace: fx.trace, policies: parsePolicyList('full,lru-offload,lru-offload:offload_tier=nvme,streaming-llm'), hbmBudget: '25%', hardware: 'h100-pcie5', model: fx.model, groupSize: 64, out, hil: { backend: 'host', nvmeDir: fx.dir } });
    expect(r.policies.map((p) => p.label)).toEqual(['full', 'lru-offload', 'lru-offload-nvme', 'streaming-llm']);
    for (const p of r.policies) {
      expect(p.steps).toHaveLength(8);
      expect(p.latency_error.steps).toBe(7);
      expect(p.latency_error.p95).toBeGreaterThanOrEqual(p.latency_error.median);
      expect(existsSync(join(out, `sim-${p.label}`, 'summary.json'))).toBe(true);
      expect(existsSync(join(out, `hil-${p.label}`, 'hil.json'))).toBe(true);
    }
    // the NVMe policy was simulated with the file reads re-measured right before its HIL run (and again after)
    const nv = r.policies.find((p) => p.label === 'lru-offload-nvme')!;
    expect(nv.file_read).toBeDefined();
    const fr = nv.file_read!;
    expect(fr.before.GBps).toBeGreaterThan(0);
    expect(fr.after!.GBps).toBeGreaterThan(0);
    expect(fr.before.batches).toBeGreaterThan(4);
    expect(fr.before.threads).toBe(32);
    const used = validateProfile(JSON.parse(readFileSync(fr.sim_profile, 'utf8')), fr.sim_profile);
    const nvmeLink = used.links.find((l) => l.a === 'nvme' || l.b === 'nvme')!;
    const rd = nvmeLink.b === 'nvme' ? nvmeLink.b_to_a : nvmeLink.a_to_b;
    expect(rd.GBps).toBeCloseTo(fr.before.GBps, 1);
    expect(used.tiers.find((t) => t.kind === 'nvme')!.read_GBps).toBe(rd.GBps);
    expect(Object.values(used.sources).some((v) => /re-measured by kvtier hil compare right before the HIL run of lru-offload-nvme/.test(v))).toBe(true);
    expect(nv.notes!.some((w) => /re-measured right before the HIL run/.test(w))).toBe(true);
    expect(nv.warnings.some((w) => /re-measured/.test(w))).toBe(false);
    for (const p of r.policies.filter((p) => p.label !== 'lru-offload-nvme')) expect(p.file_read).toBeUndefined();
    const page = await renderCompareReport(out);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('simulator vs hardware');
    expect(html).toContain('lru-offload-nvme');
    expect(html).toMatch(/Notes[\s\S]*lru-offload-nvme: simulated with the NVMe read link re-measured/);
    for (const c of ['latency', 'stall', 'bytes', 'error']) expect(existsSync(join(out, 'charts', `${c}.svg`))).toBe(true);
    expect(readFileSync(join(out, 'compare.csv'), 'utf8').split('\n')[0]).toMatch(/^policy,step,context_tokens,sim_latency_ms,hil_latency_ms/);
  }, 60_000);

  it('keeps the given profile for NVMe policies with fileRemeasure false', async () => {
    const out = join(fx.dir, 'cmp-plain');
    const r = await compare({ trace: fx.trace, policies: parsePolicyList('lru-offload:offload_tier=nvme'), hbmBudget: '25%', hardware: 'h100-pcie5', model: fx.model, groupSize: 64, out, hil: { backend: 'host', nvmeDir: fx.dir }, fileRemeasure: false });
    expect(r.policies[0].file_read).toBeUndefined();
    expect(existsSync(join(out, 'profile-lru-offload-nvme.json'))).toBe(false);
  }, 30_000);

  it('re-measures NVMe reads the way the HIL run reads them: buffered when asked', async () => {
    const out = join(fx.dir, 'cmp-buffered');
    const r = await compare({ trace: fx.trace, policies: parsePolicyList('lru-offload:offload_tier=nvme'), hbmBudget: '25%', hardware: 'h100-pcie5', model: fx.model, groupSize: 64, out, hil: { backend: 'host', nvmeDir: fx.dir, directIo: false, ioThreads: 3 }, fileRemeasureRounds: 1 });
    const fr = r.policies[0].file_read!;
    expect(fr.before.direct).toBe(false);
    expect(fr.after!.direct).toBe(false);
    expect(fr.before.threads).toBe(3);
  }, 30_000);

  it('repeats the HIL runs: measured = per-step medians, each run\'s error and the runs\' spread beside them', async () => {
    const out = join(fx.dir, 'cmp-repeat');
    const r = await compare({ trace: fx.trace, policies: parsePolicyList('lru-offload'), hbmBudget: '25%', hardware: 'h100-pcie5', model: fx.model, groupSize: 64, out, hil: { backend: 'host', nvmeDir: fx.dir }, repeat: 3 });
    expect(r.repeat).toBe(3);
    const p = r.policies[0];
    // the three runs' own step tables, read back from their run directories
    const runLat = ['hil-lru-offload', 'hil-lru-offload-r2', 'hil-lru-offload-r3'].map((d) =>
      readFileSync(join(out, d, 'hil-steps.csv'), 'utf8').trim().split('\n').slice(1).map((l) => Number(l.split(',')[1]) / 1000),
    );
    const near = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));
    for (const [i, s] of p.steps.entries()) {
      const xs = runLat.map((l) => l[i]);
      expect(s.hil_latency_runs_ms).toHaveLength(3);
      s.hil_latency_runs_ms!.forEach((x, k) => expect(near(x, xs[k])).toBe(true));
      const sorted = [...s.hil_latency_runs_ms!].sort((a, b) => a - b);
      expect(s.hil_latency_ms).toBe(sorted[1]);
      expect(s.latency_rel_error).toBeCloseTo(Math.abs(s.sim_latency_ms - sorted[1]) / sorted[1], 12);
    }
    const used = p.steps.slice(1);
    const each = used.flatMap((s) => s.hil_latency_runs_ms!.map((h) => Math.abs(s.sim_latency_ms - h) / h));
    expect(p.per_run_error!.median).toBeCloseTo(quantile(each, 0.5), 12);
    expect(p.per_run_error!.p95).toBeCloseTo(quantile(each, 0.95), 12);
    const spread = used.map((s) => (Math.max(...s.hil_latency_runs_ms!) - Math.min(...s.hil_latency_runs_ms!)) / s.hil_latency_ms);
    expect(p.repeat_spread).toEqual({ median: quantile(spread, 0.5), p95: quantile(spread, 0.95), runs: 3 });
    expect(p.notes!.some((n) => /per-step median of 3 HIL runs/.test(n))).toBe(true);
    expect(formatCompare(r)).toMatch(/each run: median .* runs differ: median[\s\S]*all policies, each run alone/);
    const html = readFileSync(await renderCompareReport(out), 'utf8');
    expect(html).toContain('runs differ: median / p95');
    // a bad count is refused before anything runs
    await expect(compare({ trace: fx.trace, policies: parsePolicyList('full'), hbmBudget: '25%', hardware: 'h100-pcie5', model: fx.model, out: join(fx.dir, 'cmp-bad'), hil: { backend: 'host', nvmeDir: fx.dir }, repeat: 0 })).rejects.toThrow(/repeat \(--repeat\) must be an integer from 1 to 20 \(got 0\)/);
    expect(existsSync(join(fx.dir, 'cmp-bad'))).toBe(false);
  }, 60_000);

  it('takes --no-file-remeasure and --io-threads on the command line', async () => {
    const out = join(fx.dir, 'cmp-cli');
    const argv = ['node', 'kvtier', 'hil', 'compare', '--trace', fx.trace, '--policies', 'lru-offload:offload_tier=nvme', '--hbm-budget', '25%', '--hardware', 'h100-pcie5', '--model', fx.model, '--group-size', '64', '--backend', 'host', '--nvme-dir', fx.dir, '--io-threads', '3', '--no-file-remeasure', '--no-report', '--out', out];
    expect(await main(argv)).toBe(0);
    const r = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8'));
    expect(r.policies[0].file_read).toBeUndefined();
    const hil = JSON.parse(readFileSync(join(out, 'hil-lru-offload-nvme', 'hil.json'), 'utf8'));
    expect(hil.nvme_file.io_threads).toBe(3);
    expect(hil.nvme_file.used).toBe(true);
    // --repeat out of range: refused with the flag's name, nothing written
    const bad = join(fx.dir, 'cmp-cli-bad');
    const errors: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => errors.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      expect(await main([...argv.slice(0, -1), bad, '--repeat', '25'])).not.toBe(0);
    } finally {
      process.stderr.write = write;
    }
    expect(errors.join('\n')).toMatch(/--repeat.*1 to 20.*25/);
    expect(existsSync(bad)).toBe(false);
  }, 30_000);
});
