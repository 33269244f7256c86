/**
 * The simulator's side of a validation run done again against the hardware steps the run stored: each
 * cell that ran is simulated with the current simulator and the run's own calibrated profile for its
 * model (from the run's profiles/ folder), on its trace regenerated from the grid (or cut from the
 * captured file), and its statistics, pools and judgements are recomputed from the stored per-step
 * hardware times. The hardware is not touched: a change to the simulator's model can be checked against
 * every cell of a grid that ran on a GPU, on a machine without one. The cells keep the pool their run
 * gave them (it depends on the bytes the hardware moved too).
 * With `linkAsMeasured`, each cell is simulated with its profile's host link (the PCIe link between HBM and
 * DRAM) at the bandwidth the run measured before its hardware runs (their mean per direction) instead of
 * the calibration's: what is left is the model's error with the link's drift between the calibration and
 * the runs taken out (a diagnostic: the link is then known only because the runs measured it).
 * With `hostAsMeasured`, each cell whose runs probed the host's pace at issuing copies right before them
 * (HilInfo.host_before) is simulated with its profile's host issue costs scaled by the median of those
 * probes over the same probe taken at its calibration: the host's drift between the calibration and the
 * runs taken out, in the same diagnostic sense. With `diskAsMeasured`, each cell whose disk was probed
 * right before its runs (CellResult.hw_disk_before) is simulated with its storage link's read and write
 * directions fitted to that probe's batches, as the calibration fits its own.
 */
import * as fs from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { buildIdentity } from '../../common/build-identity.js';
import { checkOutDir } from '../../sim/output-dir.js';
import { type HardwareProfile, ISSUE_COST_FIELDS, type LinkDirection } from '../../sim/hardware/profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { simulate } from '../../sim/run.js';
import { readTraceHeader } from '../../traces/trace-reader.js';
import { expandGrid } from './grid.js';
import { median } from '../timing/median.js';
import { withMeasuredDisk } from './disk-probe.js';
import { hasNoHardware } from './tier-devices.js';
import { describePool, hostLink, poolByModel, readPool, withPooledLinkTerms, type PoolMember } from './pooled-link-terms.js';
import { calibrationHostProbe, cellRunConfig, POOLED_NOTE_START, cellsCsv, cellStats, type CellResult, withStandInNote, judgedFields, standInCells, summarizeCells, traceFile, type ValidateResult, writeAtomic } from './validate.js';

export interface ResimulateOptions {
  /** a validation output directory (validate.json, profiles/) */
  dir: string;
  /** where the recomputed validate.json, cells.csv and traces go; must not be `dir` */
  out: string;
  /** replace `out` when it exists and is not empty */
  force?: boolean;
  log?: (s: string) => void;
  onProgress?: (done: number, total: number, id: string) => void;
  /** simulate each cell with the host link's bandwidth as measured before its runs (cells without a measurement keep the profile's) */
  linkAsMeasured?: boolean;
  /** simulate each cell with the host's issue costs scaled to the pace probed before its runs (cells or calibrations without a probe keep the profile's) */
  hostAsMeasured?: boolean;
  /** simulate each cell whose disk was probed before its runs with its storage link fitted to the probe (disk-probe.ts withMeasuredDisk) */
  diskAsMeasured?: boolean;
  /**
   * profile files (other calibrations of the same GPU): simulate every cell with its profile's host-link
   * copy terms at their medians over those of its model (pooled-link-terms.ts poolOfModel,
   * withPooledLinkTerms)
   */
  copyTermsFrom?: readonly string[];
  /**
   * a run that pooled its copy terms (`copy_terms_pooled`): simulate its cells with the calibrated
   * profiles instead of the pooled ones it used. Only SynapseVM's plan reads the link (its copies sized
   * to the compute they hide under): its cells are then planned with other numbers than their
   * hardware runs were
   */
  asCalibrated?: boolean;
}

/**
 * `profile` with every host issue cost (gpu.issue_*_us) multiplied by `factor`: the host issuing
 * `factor` times as slowly as at the calibration. Throws on a factor that is not above 0.
 */
export function withHostPace(profile: HardwareProfile, factor: number, source: string): HardwareProfile {
  if (!(factor > 0 && Number.isFinite(factor))) throw new Error(`${source}: the host pace factor must be a number above 0 (got ${factor})`);
  const gpu = { ...profile.gpu };
  const sources = { ...profile.sources };
  for (const k of ISSUE_COST_FIELDS) {
    const v = gpu[k];
    if (v === undefined) continue;
    gpu[k] = v * factor;
    sources[`gpu.${k}`] = `${source}'s ${v} us x ${factor} (the host's pace probed before the runs over the calibration's)${sources[`gpu.${k}`] ? `; calibrated: ${sources[`gpu.${k}`]}` : ''}`;
  }
  return { ...profile, gpu, sources };
}

/**
 * `profile` with the link between its HBM tier and its DRAM tier at the mean of the measured [H2D, D2H]
 * bandwidths (GB/s) of `runs`: each direction's GBps set to the measurement, and its GBps_under_compute
 * scaled by the same factor. Throws when the profile has no such link.
 */
export function withMeasuredLink(profile: HardwareProfile, runs: readonly (readonly [number, number])[], source: string): HardwareProfile {
  const { index: i, link, h2d: h2dKey, d2h: d2hKey } = hostLink(profile, source);
  const mean = (k: 0 | 1): number => runs.reduce((a, r) => a + r[k], 0) / runs.length;
  const h2d = mean(0);
  const d2h = mean(1);
  if (!(h2d > 0 && d2h > 0)) throw new Error(`${source}: the measured link bandwidths must be above 0 (H2D ${h2d}, D2H ${d2h} GB/s)`);
  const set = (d: LinkDirection, GBps: number): LinkDirection => ({ ...d, GBps, ...(d.GBps_under_compute !== undefined ? { GBps_under_compute: (d.GBps_under_compute * GBps) / d.GBps } : {}) });
  const links = profile.links.slice();
  links[i] = { ...link, [h2dKey]: set(link[h2dKey], h2d), [d2hKey]: set(link[d2hKey], d2h) };
  return { ...profile, links };
}

export function resimulate(o: ResimulateOptions): ValidateResult {
  const src = resolve(o.dir);
  const out = resolve(o.out);
  if (src === out) throw new Error(`hil validate-resim: --out must differ from ${o.dir} (its validate.json holds what the hardware measured)`);
  const file = join(src, 'validate.json');
  if (!fs.existsSync(file)) throw new Error(`hil validate-resim: no validate.json in ${o.dir}`);
  const prev = JSON.parse(fs.readFileSync(file, 'utf8')) as ValidateResult;
  if (prev.schema !== 'kvtier-hil-validate/v1') throw new Error(`hil validate-resim: ${file} is not a validation result (schema ${String(prev.schema)}, expected kvtier-hil-validate/v1)`);
  const g = prev.grid;
  // the run's profiles, found in its profiles/ folder by file name (the run may have been elsewhere)
  const profileOf = new Map<string, string>();
  for (const p of prev.profiles) {
    // (a run that pooled its copy terms simulated its cells with the pooled profile; set aside, or pooled
    // again over another pool, the calibrated one is the start)
    const used = o.asCalibrated || (o.copyTermsFrom?.length ?? 0) > 0 ? p.file : (p.copy_terms_pooled?.file ?? p.file);
    const here = join(src, 'profiles', basename(used));
    const path = fs.existsSync(here) ? here : used;
    if (!fs.existsSync(path)) throw new Error(`hil validate-resim: the profile for ${p.model} is neither ${here} nor ${used}`);
    profileOf.set(p.model, path);
  }
  // each profile with its copy terms pooled, made before anything is written (a pool that cannot price
  // every profile of the run is refused here)
  const pool = o.copyTermsFrom && o.copyTermsFrom.length > 0 ? readPool(o.copyTermsFrom) : null;
  const byModel = pool ? poolByModel(pool, [...profileOf.keys()]) : new Map<string, PoolMember[]>();
  const pooledOf = new Map([...profileOf].filter(([m]) => byModel.has(m)).map(([m, path]) => [path, withPooledLinkTerms(validateProfile(JSON.parse(fs.readFileSync(path, 'utf8')), path), byModel.get(m)!, path)]));
  checkOutDir(o.out, o.force === true, [src]);
  fs.mkdirSync(join(out, 'traces'), { recursive: true });
  if (o.linkAsMeasured || o.hostAsMeasured || o.diskAsMeasured || pool) fs.mkdirSync(join(out, 'profiles'), { recursive: true });
  const probeOf = new Map(prev.profiles.map((p) => [p.model, p.host_probe_us ?? calibrationHostProbe(profileOf.get(p.model)!)]));
  let paced = 0;
  const cells = new Map(expandGrid(g, (t) => readTraceHeader(t.path!).prompt_tokens).map((c) => [c.id, c]));
  const results: CellResult[] = [];
  const ok = prev.cells.filter((c) => c.status === 'ok');
  let done = 0;
  for (const before of prev.cells) {
    if (before.status !== 'ok') {
      results.push(before);
      continue;
    }
    const c = cells.get(before.id);
    if (!c) throw new Error(`hil validate-resim: cell ${before.id} of ${file} is not in its grid`);
    const profile = profileOf.get(before.model);
    if (!profile) throw new Error(`hil validate-resim: no profile for model ${before.model} in ${file}`);
    let cellProfile = profile;
    const link = o.linkAsMeasured && before.hw_link_GBps && before.hw_link_GBps.length > 0 ? before.hw_link_GBps : undefined;
    const calibProbe = probeOf.get(before.model);
    const pace = o.hostAsMeasured && calibProbe && before.hw_host_probe_us && before.hw_host_probe_us.length > 0 ? median(before.hw_host_probe_us) / calibProbe : undefined;
    const disk = o.diskAsMeasured ? before.hw_disk_before : undefined;
    if (link || pace || disk || pool) {
      // the cell's own profile, kept beside the results
      let p = pooledOf.get(profile) ?? validateProfile(JSON.parse(fs.readFileSync(profile, 'utf8')), profile);
      if (link) p = withMeasuredLink(p, link, profile);
      if (pace) {
        p = withHostPace(p, pace, profile);
        paced++;
      }
      if (disk) p = withMeasuredDisk(p, [disk], `${profile} (cell ${before.id})`);
      cellProfile = join(out, 'profiles', `${before.id}.json`);
      writeAtomic(cellProfile, JSON.stringify(p, null, 2) + '\n');
    }
    const sim = simulate(cellRunConfig(c, traceFile(c, g, out), cellProfile));
    if (sim.steps.length !== before.hw_ms![0].length) throw new Error(`hil validate-resim: cell ${before.id}: the simulation has ${sim.steps.length} steps, the stored hardware runs ${before.hw_ms![0].length}`);
    const simMs = sim.steps.map((s) => s.latency_ms);
    const st = cellStats(before.pool!, simMs, before.hw_ms!, g.skip_steps, prev.targets);
    results.push({
      ...before,
      sim_bytes: sim.summary.bytes,
      sim_ms: simMs,
      ...judgedFields(st),
    });
    o.onProgress?.(++done, ok.length, before.id);
    o.log?.(`[${done}/${ok.length}] ${before.id}: median ${(st.error.median * 100).toFixed(2)}% (was ${(before.error!.median * 100).toFixed(2)}%), p95 ${(st.error.p95 * 100).toFixed(2)}% (was ${(before.error!.p95 * 100).toFixed(2)}%)`);
  }
  const noHardware = (prev.tiers ?? []).filter((t) => hasNoHardware(t.kind)).map((t) => t.tier);
  const standInNote = standInCells(results, noHardware).note;
  // a run that pooled its copy terms: its pooled profiles and their note stand only where they were used
  const runPooled = prev.profiles.some((p) => p.copy_terms_pooled);
  const pooledGone = runPooled && (o.asCalibrated === true || pool !== null);
  const result: ValidateResult = {
    ...prev,
    ...(pooledGone ? { profiles: prev.profiles.map(({ copy_terms_pooled: _, ...p }) => p) } : {}),
    resimulated_with: buildIdentity(),
    cells: results,
    ...summarizeCells(results, g.skip_steps, noHardware),
    notes: [
      // (the stand-in cells' note made again from these cells)
      ...withStandInNote(pooledGone ? prev.notes.filter((n) => !n.startsWith(POOLED_NOTE_START)) : prev.notes, standInNote),
      `simulator side recomputed from the stored hardware steps of ${o.dir} with the simulator of this build (its profiles; the hardware runs not repeated)`,
      ...(o.linkAsMeasured ? ['each cell simulated with the host link at the bandwidths measured before its runs (a diagnostic: the link drift between calibration and runs taken out)'] : []),
      ...(o.diskAsMeasured ? ["each cell whose disk was probed before its runs simulated with its storage link's reads and writes fitted to that probe (a diagnostic: the disk's drift between calibration and runs taken out)"] : []),
      ...(o.hostAsMeasured && paced > 0 ? ["each cell simulated with the host's issue costs scaled by its runs' host issue probe over its calibration's (a diagnostic: the host's drift between calibration and runs taken out)"] : []),
      ...(o.asCalibrated && !runPooled ? ['--as-calibrated: the run did not pool its copy terms, so its cells were simulated with their calibrated profiles as they were'] : []),
      ...(o.asCalibrated && runPooled ? ["each cell simulated with its model's calibrated profile, not the one with pooled copy terms that the run used (SynapseVM's plan reads the link, so its cells are planned with other numbers than their hardware runs were)"] : []),
      ...(pool ? [`each cell simulated with its profile's host-link copy terms and copy batch cost at their medians over other calibrations of its model: ${describePool(byModel, [...profileOf.keys()])}: the calibration's own readings of them set aside`] : []),
    ],
  };
  writeAtomic(join(out, 'validate.json'), JSON.stringify(result) + '\n');
  writeAtomic(join(out, 'cells.csv'), cellsCsv(result));
  return result;
}
