// `hil compare` on the host backend: both sides run, errors are computed per step and the report
// page is written.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { compare } from '../../hil/compare/compare.js';
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

  it('takes --no-file-remeasure and --io-threads on the command line', async () => {
    const out = join(fx.dir, 'cmp-cli');
    const argv = ['node', 'kvtier', 'hil', 'compare', '--trace', fx.trace, '--policies', 'lru-offload:offload_tier=nvme', '--hbm-budget', '25%', '--hardware', 'h100-pcie5', '--model', fx.model, '--group-size', '64', '--backend', 'host', '--nvme-dir', fx.dir, '--io-threads', '3', '--no-file-remeasure', '--no-report', '--out', out];
    expect(await main(argv)).toBe(0);
    const r = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8'));
    expect(r.policies[0].file_read).toBeUndefined();
    const hil = JSON.parse(readFileSync(join(out, 'hil-lru-offload-nvme', 'hil.json'), 'utf8'));
    expect(hil.nvme_file.io_threads).toBe(3);
    expect(hil.nvme_file.used).toBe(true);
  }, 30_000);
});
