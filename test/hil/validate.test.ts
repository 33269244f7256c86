// `kvtier hil validate` on the host backend with the tiny grid (test/fixtures/validate/grid.json):
// calibration at held-out contexts, every cell simulated and run twice, the outputs' structure,
// aggregates recomputed from the per-step arrays, resume, the report page and the CLI.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIdentity } from '../../common/build-identity.js';
import { main } from '../../cli/main.js';
import { quantile } from '../../hil/compare/errors.js';
import { relErrors, stepMedians } from '../../hil/validate/stats.js';
import { resimulate } from '../../hil/validate/resimulate.js';
import { withMeasuredDisk } from '../../hil/validate/disk-probe.js';
import { fileRequestCurve, fitFileBatches, fitFileReadBatches } from '../../hil/calibrate/calibrate.js';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { validate, type ValidateResult } from '../../hil/validate/validate.js';
import { renderValidateReport, runBy } from '../../reports/hil-validate-report.js';
import { readValidateGrid } from '../../studies/validate-grid.js';
import { backendAvailability } from './availability.js';

const host = backendAvailability('host');
const dir = mkdtempSync(join(tmpdir(), 'kvtier-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = join(import.meta.dirname, '../fixtures/validate/grid.json');

describe.skipIf(!host.available)(`hil validate, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('calibrates away from the grid, runs every cell N times and writes the results, the CSV and the page', async () => {
    const out = join(dir, 'v');
    const logs: string[] = [];
    const r = await validate({ grid: readValidateGrid(FIXTURE), out, hil: { backend: 'host', nvmeDir: dir }, log: (s) => logs.push(s) });
    expect(r.schema).toBe('kvtier-hil-validate/v1');
    expect(r.backend).toBe('host');
    expect(r.cells).toHaveLength(8);
    expect(r.cells.map((c) => c.status)).toEqual(Array(8).fill('ok'));
    // calibration: one profile per model, none of its points at the grid's context
    expect(r.profiles.map((p) => [p.model.replace(/^.*\//, ''), p.calibrated, p.points_near_grid])).toEqual([
      ['hil-mini.model.json', true, []],
      ['hil-mini-wide.model.json', true, []],
    ]);
    expect(r.profiles[0].points!.situ_contexts).not.toContain(256);
    const fit = JSON.parse(readFileSync(r.profiles[0].file.replace(/\.json$/, '.fit.json'), 'utf8'));
    expect(fit.measurements.points).toEqual(r.profiles[0].points);
    expect(fit.measurements.attention_in_situ.map((x: { tokens: number }) => x.tokens)).toEqual(r.profiles[0].points!.situ_contexts);
    // pools by what each policy moved
    expect(Object.fromEntries(r.cells.map((c) => [c.label, c.pool]))).toEqual({ full: 'non-moving', 'streaming-llm': 'non-moving', 'lru-offload': 'moving', 'lru-offload-nvme': 'storage' });
    for (const c of r.cells) {
      expect(c.steps).toEqual([0, 1, 2, 3]);
      expect(c.hw_ms).toHaveLength(2);
      expect(c.sim_ms).toHaveLength(4);
      // the host gaps the runs measured, per run and step, and their share of the steps
      expect(c.hw_host_gap_ms!.map((x) => x.length)).toEqual([4, 4]);
      expect(c.hw_host_gap_ms!.flat().every((x) => x >= 0)).toBe(true);
      // the statistics, recomputed from the per-step arrays (the first step left out)
      const med = stepMedians(c.hw_ms!);
      expect(c.hw_median_ms).toEqual(med);
      const e = relErrors(c.sim_ms!.slice(1), med.slice(1));
      expect(c.error).toEqual({ median: quantile(e, 0.5), p95: quantile(e, 0.95), n: 3 });
      expect(c.spread!.n).toBe(3);
      expect(c.judgement!.checks.length).toBe(c.pool === 'storage' ? 3 : 2);
      expect(c.judgement!.pass).toBe(c.judgement!.checks.every((k) => k.value <= k.limit));
      // the file tier's times per run and step, kept for the cells whose runs used the storage file
      if (c.pool === 'storage') {
        const f = c.hw_file!;
        for (const k of ['read_ms', 'write_ms', 'sync_ms', 'syncs', 'join_ms'] as const) expect(f[k]!.map((x) => x.length)).toEqual([4, 4]);
        // the host's wall time at its joins holds the batches' own time
        f.read_ms.forEach((run, k) => run.forEach((x, s) => expect(f.join_ms![k][s]).toBeGreaterThanOrEqual(x)));
        expect([...f.read_ms.flat(), ...f.write_ms.flat(), ...f.sync_ms.flat()].every((x) => x >= 0)).toBe(true);
        // the runs read from the file: some step's reads took time (the storage tier's bytes came back)
        expect(c.hw_bytes!['nvme:nvme->dram']).toBeGreaterThan(0);
        expect(f.read_ms.every((run) => run.some((x) => x > 0))).toBe(true);
      } else expect(c.hw_file).toBeUndefined();
    }
    // pooled: the moving pool holds the moving and the storage cells' per-step errors
    const moving = r.pools[0];
    expect(moving.cells).toBe(4);
    const pooled = r.cells.filter((c) => c.pool !== 'non-moving').flatMap((c) => relErrors(c.sim_ms!.slice(1), c.hw_median_ms!.slice(1)));
    expect(moving.error.median).toBeCloseTo(quantile(pooled, 0.5), 12);
    expect(r.pools[2]).toMatchObject({ name: 'moving no data', cells: 4 });
    expect(r.per_policy.map((p) => [p.name, p.pool, p.cells])).toEqual([['full', 'non-moving', 2], ['streaming-llm', 'non-moving', 2], ['lru-offload', 'moving', 2], ['lru-offload-nvme', 'storage', 2]]);
    // every tier named with what backs it
    expect(r.tiers.map((t) => t.kind)).toEqual(expect.arrayContaining(['hbm', 'dram', 'nvme']));
    expect(r.tiers.find((t) => t.kind === 'nvme')!.device).toMatch(new RegExp(`^a file in .* on \\S+ at `));
    expect(r.tiers.find((t) => t.kind === 'hbm')!.device).toMatch(/host memory standing in for HBM/);
    expect(logs.some((l) => /^plan: 8 cells/.test(l))).toBe(true);
    expect(logs.some((l) => /^\[8\/8\] 0007_.*ETA/.test(l))).toBe(true);
    const saved = JSON.parse(readFileSync(join(out, 'validate.json'), 'utf8')) as ValidateResult;
    expect(saved.cells.map((c) => c.id)).toEqual(r.cells.map((c) => c.id));
    const csv = readFileSync(join(out, 'cells.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('id,trace,trace_kind,prompt_tokens,model,policy,budget,status,pool,error_median,error_p95,error_each_run_median,error_each_run_p95,spread_median,spread_p95,host_wait_share,hw_link_h2d_GBps,hw_host_probe_us,sim_mean_ms,hw_mean_ms,sim_p50_ms,hw_p50_ms,sim_p99_ms,hw_p99_ms,pass,wall_s,reason');
    expect(csv).toHaveLength(9);
    expect(csv[4].split(',').slice(5, 9)).toEqual(['lru-offload-nvme', '25%', 'ok', 'storage']);

    // a rerun into the same directory reuses every cell and both profiles
    const again = await validate({ grid: readValidateGrid(FIXTURE), out, hil: { backend: 'host', nvmeDir: dir }, log: (s) => logs.push(s) });
    // each call says when it started and which build it was, the rerun's after the first's
    expect(r.calls).toEqual([{ started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), kvtier: buildIdentity() }]);
    expect(again.calls).toEqual([r.calls![0], { started_at: expect.any(String), kvtier: buildIdentity() }]);
    expect(Date.parse(again.calls![1].started_at)).toBeGreaterThanOrEqual(Date.parse(r.calls![0].started_at));
    expect(runBy(again)).toMatch(/^, run \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by kvtier \S+ \(\S+\), then \d{4}-.* UTC by kvtier /);
    expect(again.cells.map((c) => c.hw_ms)).toEqual(r.cells.map((c) => c.hw_ms));
    expect(logs.filter((l) => /calibrated by an earlier run with the same points, reused/.test(l))).toHaveLength(2);
    // the same cells in another order (numbered anew) are found by name and reused, none run again
    const g0 = readValidateGrid(FIXTURE);
    cpSync(out, join(dir, 'reordered'), { recursive: true });
    const reordered = await validate({ grid: { ...g0, policies: [...g0.policies].reverse() }, out: join(dir, 'reordered'), hil: { backend: 'host', nvmeDir: dir } });
    const byName = (x: ValidateResult) => Object.fromEntries(x.cells.map((c) => [c.id.slice(5), c.hw_ms]));
    expect(reordered.cells.map((c) => c.id)).not.toEqual(r.cells.map((c) => c.id));
    expect(byName(reordered)).toEqual(byName(r));
    expect(existsSync(join(dir, 'reordered', 'cells', `${reordered.cells[0].id}.json`))).toBe(true);
    // a cell file that is not JSON (cut while written by hand, say) is named and its cell runs again
    cpSync(out, join(dir, 'broken'), { recursive: true });
    writeFileSync(join(dir, 'broken', 'cells', `${r.cells[0].id}.json`), '{"id": ');
    const brokenLog: string[] = [];
    const broken = await validate({ grid: g0, out: join(dir, 'broken'), hil: { backend: 'host', nvmeDir: dir }, log: (s) => brokenLog.push(s) });
    expect(brokenLog.some((l) => l.includes(`cell file ${join(dir, 'broken', 'cells', `${r.cells[0].id}.json`)} is not readable JSON`))).toBe(true);
    expect(broken.cells[0].status).toBe('ok');
    expect(broken.cells.slice(1).map((c) => c.hw_ms)).toEqual(r.cells.slice(1).map((c) => c.hw_ms));
    // the storage cells ran in the first call: the rerun, which ran none itself, does not say none did
    expect(r.notes.some((n) => /no cell moved bytes to or from the storage tier/.test(n))).toBe(false);
    expect(again.notes.some((n) => /no cell moved bytes to or from the storage tier/.test(n))).toBe(false);
    // a calibration's warnings (stored beside its profile) are notes of the run that calibrated and of a rerun reusing it
    const warned = r.profiles.flatMap((p) => (JSON.parse(readFileSync(p.file.replace(/\.json$/, '.fit.json'), 'utf8')).warnings as string[]).map((w) => `calibration of ${p.model}: ${w}`));
    expect(r.notes.filter((n) => n.startsWith('calibration of '))).toEqual(warned);
    expect(again.notes.filter((n) => n.startsWith('calibration of '))).toEqual(warned);
    cpSync(out, join(dir, 'warned'), { recursive: true });
    const side = join(dir, 'warned', 'profiles', basename(r.profiles[0].file).replace(/\.json$/, '.fit.json'));
    writeFileSync(side, JSON.stringify({ ...JSON.parse(readFileSync(side, 'utf8')), warnings: ['one copy batch left out'] }));
    const rewarned = await validate({ grid: g0, out: join(dir, 'warned'), hil: { backend: 'host', nvmeDir: dir } });
    expect(rewarned.notes).toContain(`calibration of ${r.profiles[0].model}: one copy batch left out`);

    // the simulator's side again from the stored hardware steps, with the same simulator: the same numbers
    const re = resimulate({ dir: out, out: join(dir, 'resim') });
    expect(re.cells.map((c) => c.sim_ms)).toEqual(r.cells.map((c) => c.sim_ms));
    expect(re.cells.map((c) => c.error)).toEqual(r.cells.map((c) => c.error));
    expect(re.cells.map((c) => c.hw_ms)).toEqual(r.cells.map((c) => c.hw_ms));
    expect(re.pools).toEqual(r.pools);
    expect(re.per_policy).toEqual(r.per_policy);
    expect(re.notes.at(-1)).toMatch(/simulator side recomputed from the stored hardware steps/);
    expect(re.calls).toEqual(again.calls); // (the directory's validate.json is the rerun's by now)
    expect(re.resimulated_with).toEqual(buildIdentity());
    expect(runBy(re)).toMatch(/, simulator side again by kvtier \S+ \(\S+\)$/);
    expect(JSON.parse(readFileSync(join(dir, 'resim', 'validate.json'), 'utf8')).cells).toHaveLength(8);
    // a profile the simulator reads differently gives other numbers against the same hardware steps
    const prof = JSON.parse(readFileSync(r.profiles[0].file, 'utf8'));
    prof.links[0].b_to_a.GBps /= 4;
    cpSync(out, join(dir, 'slow'), { recursive: true });
    writeFileSync(join(dir, 'slow', 'profiles', r.profiles[0].file.replace(/^.*\//, '')), JSON.stringify(prof));
    const slow = resimulate({ dir: join(dir, 'slow'), out: join(dir, 'slow-resim') });
    const lru = (x: ValidateResult) => x.cells.find((c) => c.label === 'lru-offload' && c.model.includes('hil-mini.model'))!;
    expect(lru(slow).hw_ms).toEqual(lru(r).hw_ms);
    expect(lru(slow).sim_dist!.mean).toBeGreaterThan(lru(r).sim_dist!.mean);
    // the host link's copy terms at their medians over other profiles of the cell's model (named as
    // hil validate names them): over the slow profile alone, the cell reads as in the slow run; over
    // the run's own profile, its model's cells read as in the run, and the other model's cells, which
    // the pool has no profile for, keep their calibrated link
    const slowFile = join(dir, 'slow', 'profiles', basename(r.profiles[0].file));
    const pooledSlow = resimulate({ dir: out, out: join(dir, 'pooled-slow'), copyTermsFrom: [slowFile] });
    expect(lru(pooledSlow).sim_ms).toEqual(lru(slow).sim_ms);
    const [m0, m1] = r.profiles.map((p) => p.model);
    expect(pooledSlow.notes.at(-1)).toBe(`each cell simulated with its profile's host-link copy terms and copy batch cost at their medians over other calibrations of its model: ${m0} over one profile of that model (${slowFile}); ${m1} as calibrated (no profile of the pool for it): the calibration's own readings of them set aside`);
    const pooledOwn = resimulate({ dir: out, out: join(dir, 'pooled-own'), copyTermsFrom: [r.profiles[0].file] });
    const ofModel = (x: ValidateResult, own: boolean) => x.cells.filter((c) => (c.model === r.profiles[0].model) === own).map((c) => c.sim_ms);
    expect(ofModel(pooledOwn, true)).toEqual(ofModel(r, true));
    expect(ofModel(pooledOwn, false)).toEqual(ofModel(r, false));
    // the other model's calibration in the pool too: its cells take their own model's terms, not m0's
    const pooledBoth = resimulate({ dir: join(dir, 'slow'), out: join(dir, 'pooled-both'), copyTermsFrom: [r.profiles[0].file, r.profiles[1].file] });
    expect(pooledBoth.cells.map((c) => c.sim_ms)).toEqual(r.cells.map((c) => c.sim_ms));
    // a pool with no profile named for a model of the run is refused, naming the names it takes, and nothing is written
    const stray = join(dir, 'stray.json');
    cpSync(r.profiles[0].file, stray);
    expect(() => resimulate({ dir: out, out: join(dir, 'pooled-stray'), copyTermsFrom: [stray] })).toThrow(new RegExp(`^--copy-terms-from: no profile of the pool \\(.*stray\\.json\\) is named for a model here .*${basename(r.profiles[0].file).replace('.', '\\.')}`));
    expect(existsSync(join(dir, 'pooled-stray'))).toBe(false);
    const lruProfile = JSON.parse(readFileSync(join(dir, 'pooled-slow', 'profiles', `${lru(r).id}.json`), 'utf8'));
    expect(lruProfile.links[0].b_to_a.GBps).toBeCloseTo(prof.links[0].b_to_a.GBps, 4);
    // a pool file that cannot be read is named, and nothing is written
    expect(() => resimulate({ dir: out, out: join(dir, 'pooled-none'), copyTermsFrom: [join(dir, 'none.json')] })).toThrow(/none\.json: not a readable JSON hardware profile/);
    expect(existsSync(join(dir, 'pooled-none'))).toBe(false);
    // the grid run again with its copy terms pooled from the slow profile (the calibrations reused): the
    // cells are planned and simulated with the pooled profile written beside each calibrated one, and a
    // re-simulation of that run prices them as it did
    cpSync(out, join(dir, 'pooled-run'), { recursive: true });
    const pooledRun = await validate({ grid: g0, out: join(dir, 'pooled-run'), hil: { backend: 'host', nvmeDir: dir }, copyTermsFrom: [slowFile] });
    const [p0, p1] = pooledRun.profiles;
    expect(p0.copy_terms_pooled).toEqual({ file: join(dir, 'pooled-run', 'profiles', basename(p0.file).replace(/\.json$/, '.pooled.json')), from: [slowFile] });
    expect(existsSync(p0.copy_terms_pooled!.file)).toBe(true);
    expect(p1.copy_terms_pooled).toBeUndefined();
    expect(lru(pooledRun).sim_dist!.mean).toBeGreaterThan(lru(r).sim_dist!.mean);
    expect(pooledRun.notes).toContain(`every cell planned and simulated with its profile's host-link copy terms and copy batch cost at their medians over other calibrations of its model (profiles/*.pooled.json): ${m0} over one profile of that model (${slowFile}); ${m1} as calibrated (no profile of the pool for it)`);
    const pooledAgain = resimulate({ dir: join(dir, 'pooled-run'), out: join(dir, 'pooled-run-resim') });
    expect(pooledAgain.cells.map((c) => c.sim_ms)).toEqual(pooledRun.cells.map((c) => c.sim_ms));
    // and with its calibrated profiles instead, it prices them as the run without the pool did
    const calibratedAgain = resimulate({ dir: join(dir, 'pooled-run'), out: join(dir, 'pooled-run-calibrated'), asCalibrated: true });
    expect(calibratedAgain.cells.map((c) => c.sim_ms)).toEqual(r.cells.map((c) => c.sim_ms));
    expect(calibratedAgain.cells.map((c) => c.sim_ms)).not.toEqual(pooledRun.cells.map((c) => c.sim_ms));
    expect(calibratedAgain.notes.at(-1)).toMatch(/^each cell simulated with its model's calibrated profile, not the one with pooled copy terms that the run used/);
    // ... and drops the run's pooled profiles and its note of them, which no longer hold
    expect(calibratedAgain.profiles.map((p) => p.copy_terms_pooled)).toEqual([undefined, undefined]);
    expect(calibratedAgain.notes.filter((n) => n.startsWith("every cell planned and simulated with its profile's host-link copy terms"))).toEqual([]);
    expect(pooledAgain.notes.filter((n) => n.startsWith("every cell planned and simulated with its profile's host-link copy terms"))).toHaveLength(1);
    // pooled again over another pool, a run that pooled its copy terms starts from its calibrated
    // profiles: over the other model's own calibration alone, every cell reads as calibrated
    const repooled = resimulate({ dir: join(dir, 'pooled-run'), out: join(dir, 'pooled-run-repooled'), copyTermsFrom: [r.profiles[1].file] });
    expect(repooled.cells.map((c) => c.sim_ms)).toEqual(r.cells.map((c) => c.sim_ms));
    expect(repooled.profiles.map((p) => p.copy_terms_pooled)).toEqual([undefined, undefined]);
    // on a run that did not pool them it changes nothing, and says so
    const notPooled = resimulate({ dir: out, out: join(dir, 'not-pooled-calibrated'), asCalibrated: true });
    expect(notPooled.cells.map((c) => c.sim_ms)).toEqual(r.cells.map((c) => c.sim_ms));
    expect(notPooled.notes.at(-1)).toBe('--as-calibrated: the run did not pool its copy terms, so its cells were simulated with their calibrated profiles as they were');
    await expect(validate({ grid: g0, out: join(dir, 'pooled-bad'), hil: { backend: 'host', nvmeDir: dir }, copyTermsFrom: [join(dir, 'none.json')] })).rejects.toThrow(/none\.json: not a readable JSON hardware profile/);
    expect(existsSync(join(dir, 'pooled-bad'))).toBe(false);
    // a pool that names no model of the grid is refused before anything is written or calibrated
    await expect(validate({ grid: g0, out: join(dir, 'pooled-stray-run'), hil: { backend: 'host', nvmeDir: dir }, copyTermsFrom: [stray] })).rejects.toThrow(/^--copy-terms-from: no profile of the pool/);
    expect(existsSync(join(dir, 'pooled-stray-run'))).toBe(false);
    // the link as the runs measured it: a cell with readings gets its own profile at their means, the others keep the run's
    cpSync(out, join(dir, 'measured'), { recursive: true });
    const stored = JSON.parse(readFileSync(join(out, 'validate.json'), 'utf8')) as ValidateResult;
    const lruCell = stored.cells.find((c) => c.label === 'lru-offload' && c.model.includes('hil-mini.model'))!;
    const h2d = prof.links[0].b_to_a.GBps; // already divided by 4 above
    // slower than the calibration in both directions (the host's copies vary run to run), and unlike h2d
    const d2h = Math.min(prof.links[0].a_to_b.GBps / 4, h2d / 2);
    lruCell.hw_link_GBps = [[h2d, d2h], [h2d, d2h]];
    for (const c of stored.cells) if (c !== lruCell) delete c.hw_link_GBps;
    writeFileSync(join(dir, 'measured', 'validate.json'), JSON.stringify(stored));
    const measured = resimulate({ dir: join(dir, 'measured'), out: join(dir, 'measured-resim'), linkAsMeasured: true });
    const cellProfile = JSON.parse(readFileSync(join(dir, 'measured-resim', 'profiles', `${lruCell.id}.json`), 'utf8'));
    // (links[0] runs from HBM to DRAM: b_to_a is H2D)
    expect([cellProfile.links[0].a, cellProfile.links[0].b]).toEqual([cellProfile.tiers[0].name, 'dram']);
    const pcie = cellProfile.links[0];
    expect(pcie.b_to_a.GBps).toBe(h2d);
    expect(pcie.a_to_b.GBps).toBe(d2h);
    expect(lru(measured).sim_dist!.mean).toBeGreaterThan(lru(r).sim_dist!.mean);
    expect(measured.cells.filter((c) => c.id !== lruCell.id).map((c) => c.sim_ms)).toEqual(r.cells.filter((c) => c.id !== lruCell.id).map((c) => c.sim_ms));
    expect(measured.notes.at(-1)).toMatch(/host link at the bandwidths measured before its runs/);
    // the host's pace as the runs probed it: issue costs scaled by the runs' probe over the calibration's
    cpSync(out, join(dir, 'paced'), { recursive: true });
    const hostProf = JSON.parse(readFileSync(r.profiles[0].file, 'utf8'));
    hostProf.gpu = { ...hostProf.gpu, issue_copy_us: 40, issue_record_us: 2, issue_kernel_us: 5 };
    writeFileSync(join(dir, 'paced', 'profiles', basename(r.profiles[0].file)), JSON.stringify(hostProf));
    const paced = JSON.parse(readFileSync(join(out, 'validate.json'), 'utf8')) as ValidateResult;
    paced.profiles[0].host_probe_us = 2;
    const pacedCell = paced.cells.find((c) => c.label === 'lru-offload' && c.model.includes('hil-mini.model'))!;
    pacedCell.hw_host_probe_us = [3, 1, 3]; // median 3: the host 1.5x as slow as at its calibration
    for (const c of paced.cells) if (c !== pacedCell) delete c.hw_host_probe_us;
    writeFileSync(join(dir, 'paced', 'validate.json'), JSON.stringify(paced));
    const plain = resimulate({ dir: join(dir, 'paced'), out: join(dir, 'paced-plain') });
    const hostPaced = resimulate({ dir: join(dir, 'paced'), out: join(dir, 'paced-resim'), hostAsMeasured: true });
    const pacedProfile = JSON.parse(readFileSync(join(dir, 'paced-resim', 'profiles', `${pacedCell.id}.json`), 'utf8'));
    expect([pacedProfile.gpu.issue_copy_us, pacedProfile.gpu.issue_record_us, pacedProfile.gpu.issue_kernel_us]).toEqual([60, 3, 7.5]);
    expect(pacedProfile.links).toEqual(hostProf.links);
    expect(lru(hostPaced).sim_dist!.mean).toBeGreaterThan(lru(plain).sim_dist!.mean);
    expect(hostPaced.cells.filter((c) => c.id !== pacedCell.id).map((c) => c.sim_ms)).toEqual(plain.cells.filter((c) => c.id !== pacedCell.id).map((c) => c.sim_ms));
    expect(hostPaced.notes.at(-1)).toMatch(/host's issue costs scaled by its runs' host issue probe/);
    expect(readFileSync(join(dir, 'paced-resim', 'cells.csv'), 'utf8').split('\n')[0].split(',')).toContain('hw_host_probe_us');
    // the disk as probed right before a storage cell's runs: only those cells carry a probe, and with
    // --disk-as-measured their storage link is the probe's fit
    const probed = r.cells.filter((c) => c.hw_disk_before);
    const touchesDisk = (c: ValidateResult['cells'][number]) => Object.entries(c.sim_bytes ?? {}).some(([k, v]) => v > 0 && (k.includes(':nvme->') || k.endsWith('->nvme')));
    expect(probed.length).toBeGreaterThan(0);
    expect(probed.map((c) => c.id)).toEqual(r.cells.filter((c) => c.status === 'ok' && touchesDisk(c)).map((c) => c.id));
    expect(probed.every((c) => c.label.endsWith('-nvme'))).toBe(true);
    const probe = probed[0].hw_disk_before!;
    expect(probe.read.filter((x) => x.kind === 'layer')).toHaveLength(16);
    expect(probe.write.map((x) => x.round)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    const diskResim = resimulate({ dir: out, out: join(dir, 'disk-resim'), diskAsMeasured: true });
    const diskProfile = JSON.parse(readFileSync(join(dir, 'disk-resim', 'profiles', `${probed[0].id}.json`), 'utf8')) as HardwareProfile;
    expect(diskProfile).toEqual(withMeasuredDisk(JSON.parse(readFileSync(r.profiles.find((p) => p.model === probed[0].model)!.file, 'utf8')), [probe], 'x'));
    const nvLink = diskProfile.links.find((l) => l.a === 'nvme' || l.b === 'nvme')!;
    const r2 = (x: number) => Math.round(x * 100) / 100;
    const wf = fitFileBatches(probe.write);
    expect(nvLink.a === 'nvme' ? nvLink.b_to_a : nvLink.a_to_b).toEqual({ alpha_us: r2(wf.alpha_us), GBps: r2(wf.GBps) });
    const rf = fitFileReadBatches(probe.read);
    expect(nvLink.a === 'nvme' ? nvLink.a_to_b : nvLink.b_to_a).toEqual({ alpha_us: r2(rf.alpha_us), GBps: r2(rf.GBps), request_us: fileRequestCurve(probe.read, rf, probe.block_bytes), ...(rf.batch_us > 0 ? { batch_us: r2(rf.batch_us) } : {}) });
    expect(diskResim.cells.filter((c) => !c.hw_disk_before).map((c) => c.sim_ms)).toEqual(re.cells.filter((c) => !c.hw_disk_before).map((c) => c.sim_ms));
    expect(diskResim.notes.at(-1)).toMatch(/disk was probed before its runs simulated with its storage link/);
    expect(() => resimulate({ dir: out, out })).toThrow(/--out must differ/);
    // an existing --out is replaced only when asked
    expect(() => resimulate({ dir: out, out: join(dir, 'resim') })).toThrow(/resim already exists; pass --force/);
    expect(resimulate({ dir: out, out: join(dir, 'resim'), force: true }).pools).toEqual(r.pools);
    expect(() => resimulate({ dir: join(dir, 'nothing'), out: join(dir, 'x') })).toThrow(/no validate.json in/);

    // profiles given: by model name (with the points recorded in their .fit.json) or for every model
    const given = await validate({ grid: { ...readValidateGrid(FIXTURE), runs: 1 }, out: join(dir, 'given'), hil: { backend: 'host', nvmeDir: dir }, profiles: { 'hil-mini': r.profiles[0].file, '*': r.profiles[1].file }, planOnly: false, maxSeconds: 1e-3 });
    expect(given.profiles.map((p) => [p.file, p.calibrated, p.points_near_grid, /avoid the grid contexts/.test(p.note)])).toEqual([
      [r.profiles[0].file, false, [], true],
      [r.profiles[1].file, false, [], true],
    ]);
    await expect(validate({ grid: readValidateGrid(FIXTURE), out: join(dir, 'bad-profile'), hil: { backend: 'host' }, profiles: { 'llama-3-8b': 'x.json' } })).rejects.toThrow(/--profile: no model "llama-3-8b" in the grid/);

    const page = readFileSync(await renderValidateReport(out), 'utf8');
    for (const s of ['held-out grid', 'Per policy', 'Tiers and what backs them', 'moving no data', 'lru-offload-nvme', 'runs differ', 'Storage tier, per run']) expect(page).toContain(s);
    // the storage cells' file times, one row per run: the median read time of the first storage cell's first run
    const storage = r.cells.find((c) => c.pool === 'storage')!;
    const reads = storage.hw_file!.read_ms[0].slice(1).sort((a, b) => a - b);
    const readMedian = reads.length % 2 ? reads[(reads.length - 1) / 2] : (reads[reads.length / 2 - 1] + reads[reads.length / 2]) / 2;
    const joins = storage.hw_file!.join_ms![0].slice(1).sort((a, b) => a - b);
    const joinMedian = joins.length % 2 ? joins[(joins.length - 1) / 2] : (joins[joins.length / 2 - 1] + joins[joins.length / 2]) / 2;
    expect(page).toMatch(new RegExp(`${storage.id}</td><td[^>]*>1</td><td[^>]*>[0-9.]+</td><td[^>]*>${readMedian.toFixed(2).replace('.', '\\.')}</td><td[^>]*>${joinMedian.toFixed(2).replace('.', '\\.')}</td>`));
    for (const c of ['error-per-cell', 'pass-miss', 'mean-step']) expect(existsSync(join(out, 'charts', `${c}.svg`))).toBe(true);
    // the host backend takes no host probe; with probes as a cuda run keeps them, each cell's runs are listed and summed up
    expect(page).not.toContain('issue pace, probed');
    const withProbes = join(dir, 'with-probes');
    cpSync(out, withProbes, { recursive: true });
    const probedRun = JSON.parse(readFileSync(join(withProbes, 'validate.json'), 'utf8')) as ValidateResult;
    probedRun.cells[0].hw_host_probe_us = [1.96, 3.1];
    probedRun.cells[1].hw_host_probe_us = [3.05, 3.2];
    writeFileSync(join(withProbes, 'validate.json'), JSON.stringify(probedRun));
    const probedPage = readFileSync(await renderValidateReport(withProbes), 'utf8');
    expect(probedPage).toContain('The host&#39;s issue pace, probed right before each run: 1.96-3.20 us per copy over 4 runs; in 1 of 2 cells the runs met paces 1.3x or more apart');
    expect(probedPage).toMatch(new RegExp(`${probedRun.cells[0].id}</td>.*?<td[^>]*>1\\.96 / 3\\.10</td>`));
  }, 120_000);

  it('stops at the time limit and says so; the CLI plans without running and refuses a bad grid', async () => {
    const out = join(dir, 'limit');
    // (the copy batches timed again after the calibrations, as on the cuda backend by default)
    const logs: string[] = [];
    const r = await validate({ grid: { ...readValidateGrid(FIXTURE), runs: 1 }, out, hil: { backend: 'host', nvmeDir: dir }, maxSeconds: 1e-3, retimeCopies: true, log: (s) => logs.push(s) });
    expect(r.cells.map((c) => c.status)).toEqual(Array(8).fill('not-run'));
    expect(r.cells[0].reason).toMatch(/time limit \(0\.001 s\) would be passed.*rerun with the same --out/);
    expect(r.notes.some((n) => /8 cells not run \(time limit\)/.test(n))).toBe(true);
    // every calibration timed twice, after the last of them, and the result says so
    const lastCalibrated = logs.map((l) => l.startsWith('calibrated ')).lastIndexOf(true);
    expect(logs.findIndex((l) => l.startsWith('timing the copy batches of '))).toBeGreaterThan(lastCalibrated);
    for (const p of r.profiles) {
      const m = JSON.parse(readFileSync(p.file.replace(/\.json$/, '.fit.json'), 'utf8')).measurements;
      const n = (cond: 'idle' | 'gemv') => `${m.layout_retimed.from_second[cond].length} of ${m.layout_retimed[cond].length}`;
      expect(p.copies_retimed).toEqual({ idle: n('idle'), gemv: n('gemv'), h2d_alpha_us: [expect.any(Number), JSON.parse(readFileSync(p.file, 'utf8')).links[0].b_to_a.alpha_us] });
    }
    // resumed: the profiles are reused, not timed again, and what the first call found is listed
    const resumed: string[] = [];
    const r2 = await validate({ grid: { ...readValidateGrid(FIXTURE), runs: 1 }, out, hil: { backend: 'host', nvmeDir: dir }, maxSeconds: 1e-3, retimeCopies: true, log: (s) => resumed.push(s) });
    expect(resumed.filter((l) => l.startsWith('timing the copy batches'))).toEqual([]);
    expect(r2.profiles.map((p) => p.copies_retimed)).toEqual(r.profiles.map((p) => p.copies_retimed));
    // a reused calibration timed once (an earlier call stopped before timing it again) stays so, and the notes say it
    const side = r.profiles[0].file.replace(/\.json$/, '.fit.json');
    const f = JSON.parse(readFileSync(side, 'utf8'));
    delete f.measurements.layout_retimed;
    writeFileSync(side, JSON.stringify(f));
    const before = readFileSync(r.profiles[0].file, 'utf8');
    const r3 = await validate({ grid: { ...readValidateGrid(FIXTURE), runs: 1 }, out, hil: { backend: 'host', nvmeDir: dir }, maxSeconds: 1e-3, retimeCopies: true });
    expect(r3.notes).toContain(`${r.profiles[0].model}'s calibration, from an earlier call of this run, has its copy batches timed once (they are timed again only in the call that calibrates)`);
    expect(readFileSync(r.profiles[0].file, 'utf8')).toBe(before);
    expect(r3.profiles[0].copies_retimed).toBeUndefined();
    expect(r3.profiles[1].copies_retimed).toEqual(r.profiles[1].copies_retimed);
    // by default only where the backend opened is cuda: 'auto' opens the host one here
    const autoLog: string[] = [];
    const auto = await validate({ grid: { ...readValidateGrid(FIXTURE), runs: 1 }, out: join(dir, 'limit-auto'), hil: { backend: 'auto', nvmeDir: dir }, maxSeconds: 1e-3, log: (s) => autoLog.push(s) });
    expect(auto.backend).toBe('host');
    expect(autoLog.filter((l) => l.startsWith('timing the copy batches'))).toEqual([]);
    expect(auto.profiles.map((p) => p.copies_retimed)).toEqual([undefined, undefined]);
    const lines: string[] = [];
    const log = console.log;
    console.log = (s: string) => void lines.push(s);
    try {
      expect(await main(['node', 'kvtier', 'hil', 'validate', FIXTURE, '--plan', '--backend', 'host', '--out', join(dir, 'plan')])).toBe(0);
    } finally {
      console.log = log;
    }
    expect(lines.filter((l) => /^  0\d{3}_.* about \d/.test(l))).toHaveLength(8);
    expect(existsSync(join(dir, 'plan', 'validate.json'))).toBe(false);
    const bad = join(dir, 'bad.json');
    cpSync(FIXTURE, bad);
    const g = JSON.parse(readFileSync(bad, 'utf8'));
    g.contexts = [];
    writeFileSync(bad, JSON.stringify(g));
    const errors: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => errors.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      expect(await main(['node', 'kvtier', 'hil', 'validate', bad, '--backend', 'host'])).not.toBe(0);
    } finally {
      process.stderr.write = write;
    }
    expect(errors.join('')).toMatch(/bad\.json: "contexts" must be a non-empty list/);
  }, 60_000);
});
