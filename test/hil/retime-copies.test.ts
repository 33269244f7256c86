// A calibration's layout copy batches timed a second time (hil/calibrate/retime-copies.ts): each batch
// keeps the lesser of its two timings, the profile is rebuilt from those exactly as calibrate builds one
// (buildCalibration), and a calibration is timed twice at most.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LayoutPoint } from '../../hil/bench/layout-copy-bench.js';
import type { PlanIssueResult, PlanIssueStep } from '../../hil/bench/plan-issue-bench.js';
import { buildCalibration, calibrate, writeCalibration } from '../../hil/calibrate/calibrate.js';
import { issueCostsOf, LAUNCH_PLAN, type Measurements } from '../../hil/calibrate/measure.js';
import { lesserTimings, retimeCalibrations, retimeCopyBatches } from '../../hil/calibrate/retime-copies.js';
import { loadModel } from '../../sim/models/load-model.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const dir = mkdtempSync(join(tmpdir(), 'kvtier-retime-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** a quick host calibration of the HIL fixture model, written as `name` in the test directory */
async function calibrated(name: string, date: string) {
  const fx = makeHilFixture(256, 4);
  const r = await calibrate({ backend: 'host', base: 'h100-pcie5', model: fx.model, groupSize: 64, quick: true, fileDir: dir, date });
  const file = join(dir, name);
  writeCalibration(file, r);
  return { fx, r, file };
}

const batch = (direction: LayoutPoint['direction'], label: string, us: number): LayoutPoint =>
  ({ direction, label, us, runs: 1, bytes: 1, split: { h2d: { runs: 1, bytes: 1 }, d2h: { runs: 0, bytes: 0 } }, switches: 0, groups: 8, lengths: {}, enqueue_us: 0, gate_us: 0, compute_cover: 0, compute_extra_us: 0 }) as LayoutPoint;

describe('lesserTimings', () => {
  it("keeps each batch's lesser timing in the first's order, naming those taken from the second", () => {
    const first = [batch('h2d', 'runs of 1', 800), batch('h2d', 'runs of 2', 1000), batch('d2h', 'runs of 2', 900), batch('mixed', 'x', 200)];
    // (the second in another order; a tie keeps the first's)
    const second = [batch('mixed', 'x', 200), batch('d2h', 'runs of 2', 950), batch('h2d', 'runs of 2', 970), batch('h2d', 'runs of 1', 780)];
    const r = lesserTimings(first, second);
    expect(r.points.map((p) => [p.direction, p.label, p.us])).toEqual([
      ['h2d', 'runs of 1', 780],
      ['h2d', 'runs of 2', 970],
      ['d2h', 'runs of 2', 900],
      ['mixed', 'x', 200],
    ]);
    expect(r.points[2]).toBe(first[2]);
    expect(r.points[3]).toBe(first[3]);
    expect(r.fromSecond).toEqual(['h2d runs of 1', 'h2d runs of 2']);
  });

  it('refuses timings that are not of one plan', () => {
    const first = [batch('h2d', 'runs of 1', 800), batch('d2h', 'runs of 1', 700)];
    // (the same label in another direction is another batch)
    expect(() => lesserTimings(first, [batch('h2d', 'runs of 1', 800), batch('h2d', 'runs of 1', 790)])).toThrow('the second timings name the batch "h2d runs of 1" twice');
    expect(() => lesserTimings(first, [batch('h2d', 'runs of 1', 800), batch('mixed', 'runs of 1', 700)])).toThrow('the second timings have no batch "d2h runs of 1"');
  });
});

describe.skipIf(!host.available)(`retimeCopyBatches, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('rebuilds the calibration from the lesser timings, once', async () => {
    const base = 'h100-pcie5';
    const { fx, r, file } = await calibrated('profile.json', '2026-11-20');
    // building from the measurements alone gives the profile calibrate gave
    const model = loadModel(fx.model);
    const again = buildCalibration({ m: r.measurements, base, model, device: r.device, kind: 'host', attentionOptions: r.attention_options });
    expect(again.profile).toEqual(r.profile);
    expect(again.fits).toEqual(r.fits);

    const first = r.measurements;
    // (no date given: the sources keep the calibration's)
    const t = await retimeCopyBatches(file, { backend: 'host', base, model: fx.model, quick: true, groupSize: 64 });
    expect(t).not.toBeNull();
    const side = JSON.parse(readFileSync(join(dir, 'profile.fit.json'), 'utf8')) as { measurements: Measurements };
    const m = side.measurements;
    const rt = m.layout_retimed!;
    // per condition: the second timings of every batch, and each batch fitted the lesser of the two
    for (const [cond, firsts, nows] of [
      ['idle', [...first.h2d_layout_idle, ...first.d2h_layout_idle, ...first.mixed_layout_idle!], [...m.h2d_layout_idle, ...m.d2h_layout_idle, ...m.mixed_layout_idle!]],
      ['gemv', [...first.h2d_layout_gemv!, ...first.d2h_layout_gemv!, ...first.mixed_layout_gemv!], [...m.h2d_layout_gemv!, ...m.d2h_layout_gemv!, ...m.mixed_layout_gemv!]],
    ] as const) {
      const seconds = rt[cond];
      expect(seconds.map((p) => `${p.direction} ${p.label}`).sort()).toEqual(firsts.map((p) => `${p.direction} ${p.label}`).sort());
      const byName = new Map(seconds.map((p) => [`${p.direction} ${p.label}`, p.us]));
      expect(nows.map((p) => p.us)).toEqual(firsts.map((p) => Math.min(p.us, byName.get(`${p.direction} ${p.label}`)!)));
      expect(rt.from_second[cond]).toEqual(firsts.filter((p) => byName.get(`${p.direction} ${p.label}`)! < p.us).map((p) => `${p.direction} ${p.label}`));
      expect(rt.compared[cond]).toBe(firsts.length);
      expect(t![cond]).toEqual({ batches: firsts.length, from_second: rt.from_second[cond].length });
    }
    // the batches the link was not fitted to are as they were
    expect(m.h2d_layout).toEqual(first.h2d_layout);
    expect(m.attention_in_situ).toEqual(first.attention_in_situ);
    // the profile written is the one the new measurements build, its sources saying so
    const p = JSON.parse(readFileSync(file, 'utf8'));
    const rebuilt = buildCalibration({ m, base, model, device: r.device, kind: 'host', attentionOptions: r.attention_options });
    expect(p).toEqual(JSON.parse(JSON.stringify(rebuilt.profile)));
    expect(p.sources['gpu.hbm_bandwidth_GBps']).toMatch(/^measured by kvtier hil calibrate on host CPU 2026-11-20:/);
    expect(p.sources['links[0].b_to_a.alpha_us']).toContain(`; each batch the lesser of two timings, the second taken at ${rt.at} (${rt.from_second.idle.length} of ${rt.idle.length} batches from the second)`);
    expect(p.sources['links[0].b_to_a.alpha_under_compute_us']).toContain(`(${rt.from_second.gemv.length} of ${rt.gemv.length} batches from the second)`);
    expect(t!.h2d_alpha_us).toEqual([r.profile.links[0].b_to_a!.alpha_us, p.links[0].b_to_a.alpha_us]);
    expect(rt.h2d_alpha_us).toEqual(t!.h2d_alpha_us);
    // a calibration timed twice is left as it is
    const before = readFileSync(file, 'utf8');
    expect(await retimeCopyBatches(file, { backend: 'host', base, model: fx.model, quick: true, groupSize: 64 })).toBeNull();
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it("refuses a calibration taken on another device, and leaves it as it was", async () => {
    const { fx, r, file } = await calibrated('other.json', '2026-11-28');
    const sideFile = join(dir, 'other.fit.json');
    const side = JSON.parse(readFileSync(sideFile, 'utf8'));
    side.device = 'NVIDIA H200';
    writeFileSync(sideFile, JSON.stringify(side));
    const before = readFileSync(file, 'utf8');
    await expect(retimeCopyBatches(file, { backend: 'host', base: 'h100-pcie5', model: fx.model, quick: true, groupSize: 64 })).rejects.toThrow(`${file} was calibrated on NVIDIA H200; this backend's device is ${r.device}`);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
  it('times again only the conditions a calibration has (no beside-GEMV or mixed batches in an older one)', async () => {
    const { fx, r, file } = await calibrated('older.json', '2026-11-20');
    const sideFile = join(dir, 'older.fit.json');
    const side = JSON.parse(readFileSync(sideFile, 'utf8'));
    for (const k of ['h2d_layout_gemv', 'd2h_layout_gemv', 'mixed_layout_gemv', 'mixed_layout_idle', 'mixed_layout', 'date']) delete side.measurements[k];
    writeFileSync(sideFile, JSON.stringify(side));
    const t = await retimeCopyBatches(file, { backend: 'host', base: 'h100-pcie5', model: fx.model, quick: true, groupSize: 64 });
    expect(t!.gemv).toBeNull();
    const m = JSON.parse(readFileSync(sideFile, 'utf8')).measurements as Measurements;
    for (const k of ['h2d_layout_gemv', 'd2h_layout_gemv', 'mixed_layout_gemv', 'mixed_layout_idle'] as const) expect(m[k], k).toBeUndefined();
    // (the second timing has the mixed batches the older plan lacked: only the calibration's are compared)
    expect(m.layout_retimed!.compared).toEqual({ idle: r.measurements.h2d_layout_idle.length + r.measurements.d2h_layout_idle.length, gemv: 0 });
    expect(m.layout_retimed!.idle.some((x) => x.direction === 'mixed')).toBe(true);
    expect(t!.idle.batches).toBe(m.layout_retimed!.compared.idle);
    // (the source counts the calibration's batches, not the second timing's)
    expect(JSON.parse(readFileSync(file, 'utf8')).sources['links[0].b_to_a.alpha_us']).toContain(`(${m.layout_retimed!.from_second.idle.length} of ${m.layout_retimed!.compared.idle} batches from the second)`);
    // the under-compute fit is over the batches beside attention + GEMV, timed once
    expect(JSON.parse(readFileSync(file, 'utf8')).sources['links[0].b_to_a.alpha_under_compute_us']).not.toContain('lesser of two timings');
    // (and its date, not recorded then, is the one its description names)
    expect(m.date).toBe('2026-11-20');
  });

  it('retimeCalibrations: a second timing that fails leaves the calibration as timed once, with a note', async () => {
    const { fx, r, file: good } = await calibrated('good.json', '2026-11-28');
    const bad = join(dir, 'bad.json');
    writeCalibration(bad, r);
    const badSide = join(dir, 'bad.fit.json');
    writeFileSync(badSide, JSON.stringify({ ...JSON.parse(readFileSync(badSide, 'utf8')), device: 'NVIDIA H200' }));
    const before = readFileSync(bad, 'utf8');
    const profiles = [
      { model: fx.model, file: bad, calibrated_now: true },
      { model: fx.model, file: good, calibrated_now: true },
    ];
    const notes = await retimeCalibrations(profiles, { backend: 'host', base: 'h100-pcie5', quick: true, groupSize: 64 }, () => {});
    expect(notes).toEqual([`the second timing of ${fx.model}'s copy batches failed (${bad} was calibrated on NVIDIA H200; this backend's device is ${r.device}: its copies are not the calibration's to time again): its calibration is kept as timed once`]);
    expect(readFileSync(bad, 'utf8')).toBe(before);
    expect(profiles[0]).not.toHaveProperty('copies_retimed');
    expect(profiles[1]).toHaveProperty('copies_retimed');
  });
});

describe('buildCalibration on a device calibration', () => {
  // a quick calibration on an NVIDIA H200 (validate run of 2026-11-28, commit 66955ac): its profile as
  // that build wrote it. After a deliberate change to how profiles are built, write buildCalibration's
  // output over the expected file and review the difference.
  it('rebuilds the stored profile byte for byte from its measurements (the cuda-only parts included)', () => {
    const expected = readFileSync('test/fixtures/calibration/h200-llama-3-8b.json', 'utf8');
    const side = JSON.parse(readFileSync('test/fixtures/calibration/h200-llama-3-8b.fit.json', 'utf8'));
    const m = side.measurements as Measurements;
    // (recorded since: the device's memory and the date, as the profile gives them)
    const p = JSON.parse(expected);
    m.memory_bytes = Math.round(p.tiers[0].capacity_GiB * 1024 ** 3);
    m.date = '2026-11-28';
    const r = buildCalibration({ m, base: 'h100-pcie5', model: loadModel('llama-3-8b'), device: side.device, kind: 'cuda', attentionOptions: side.attention_options });
    expect(JSON.stringify(r.profile, null, 2) + '\n').toBe(expected);
    expect(r.fits).toEqual(side.fits);
    // a plan that moves nothing, timed: records, kernels and attention at its pace; its timing failed: the costs in a row, and the sources say why
    const listed = issueCostsOf(m.issue!);
    const step = (i: number, issue_us: number): PlanIssueStep => ({ step: i, issue_us, ops: { copy: 0, record: 130, kernel: 33, convert: 0, attention: 32, other: 0 } });
    const sum = 130 * listed.record + 33 * listed.kernel + 32 * listed.attention;
    const launch: PlanIssueResult = { ...LAUNCH_PLAN, context_tokens: 40960, settled: true, steps: [step(0, 9e9), step(1, 1.2 * sum), step(2, 1.3 * sum), step(3, 1.25 * sum)] };
    const paced = buildCalibration({ m: { ...m, plan_launch: launch }, base: 'h100-pcie5', model: loadModel('llama-3-8b'), device: side.device, kind: 'cuda', attentionOptions: side.attention_options }).profile;
    const asTimed = r.profile;
    const r2 = (x: number) => Math.round(x * 100) / 100;
    expect([paced.gpu.issue_record_us, paced.gpu.issue_kernel_us, paced.gpu.issue_attention_us]).toEqual([r2(listed.record * 1.25), r2(listed.kernel * 1.25), r2(listed.attention * 1.25)]);
    expect(paced.gpu.issue_record_us).not.toBe(asTimed.gpu.issue_record_us);
    expect(paced.sources['gpu.issue_kernel_us']).toContain("; times 1.250, the pace of the HIL executor's own loop over a plan that moves nothing (full at 100% on a generated 40960-token trace, 4 steps, each issued on an idle GPU)");
    // the copies' cost from its plan: its other ops at the paced costs (records, kernels and attention cost more, so a copy less)
    expect(paced.gpu.issue_copy_us!).toBeLessThan(asTimed.gpu.issue_copy_us!);
    const failed = buildCalibration({ m: { ...m, plan_launch_error: 'out of memory' }, base: 'h100-pcie5', model: loadModel('llama-3-8b'), device: side.device, kind: 'cuda', attentionOptions: side.attention_options }).profile;
    expect(failed.gpu).toEqual(asTimed.gpu);
    expect(failed.sources['gpu.issue_attention_us']).toBe(`${asTimed.sources['gpu.issue_attention_us']}; the plan that moves nothing was not timed (out of memory), so the cost in a row stands`);
    // without the device's memory a cuda profile is refused, not given the base profile's capacity
    delete m.memory_bytes;
    expect(() => buildCalibration({ m, base: 'h100-pcie5', model: loadModel('llama-3-8b'), device: side.device, kind: 'cuda', attentionOptions: side.attention_options })).toThrow('the measurements of NVIDIA H200 do not give its memory (memory_bytes)');
  });
});
