/**
 * `kvtier hil validate`: the simulator against the hardware on a held-out grid. Per model, a
 * profile calibrated from microbenchmarks taken at contexts the grid never uses
 * (calibration-points.ts), or given; then per cell (trace x context x model x budget x policy) the
 * simulation and N HIL runs of the same policy, the per-step error |sim - hw| / hw against the
 * per-step median of the runs (and against each run alone), the runs' own spread, the step-time
 * distributions, and pass / miss against the targets of the cell's pool (stats.ts). Finished cells
 * are saved one file each (<out>/cells/<id>.json) and reused by a rerun with the same settings.
 * Writes <out>/validate.json and <out>/cells.csv; the page is reports/hil-validate-report.ts.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIdentity, type BuildIdentity } from '../../common/build-identity.js';
import { loadModel } from '../../sim/models/load-model.js';
import { simulate, type RunConfig, type RunResult } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';
import { openTrace, readTraceHeader } from '../../traces/trace-reader.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { openBackend } from '../backend.js';
import { calibrate, fitFileOf, writeCalibration } from '../calibrate/calibrate.js';
import { retimeCalibrations, type RetimedProfile } from '../calibrate/retime-copies.js';
import type { CalibrationPoints } from '../calibrate/measure.js';
import { hilRun, type HilOptions } from '../executor/hil-run.js';
import { DEFAULT_IO_THREADS } from '../executor/run-plan.js';
import { heldOutPoints, pointsNearGrid } from './calibration-points.js';
import { contextLabel, expandGrid, type GridCell, type ValidateGrid } from './grid.js';
import { calibrationSeconds, cellSeconds, formatSeconds, H100_PLAN, WallRatios } from './plan.js';
import { type CellJudgement, distribution, type Distribution, hostWaitShare, judgeCell, medianP95, type MedianP95, pairSpreads, type PolicyPool, relErrors, repeatableSteps, stepMedians, TARGETS, type Targets } from './stats.js';
import { describeTiers, hasNoHardware, type TierDevice } from './tier-devices.js';
import { type DiskProbe, probeDisk } from './disk-probe.js';
import { median } from '../timing/median.js';
import { describePool, modelSlug, poolByModel, readPool, withPooledLinkTerms } from './pooled-link-terms.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';

export interface ValidateOptions {
  grid: ValidateGrid;
  out: string;
  hil: HilOptions;
  /** profiles calibrated earlier, by model name or file as the grid names it; '*' for every model */
  profiles?: Record<string, string>;
  /** stop starting cells once this many seconds (from the start) would be exceeded by the next one's estimate */
  maxSeconds?: number;
  /** print the plan and stop */
  planOnly?: boolean;
  /**
   * after every model is calibrated, time the layout copy batches of each calibration this call took
   * again and rebuild it with each batch's lesser timing (calibrate/retime-copies.ts); default: where
   * the backend opened is cuda (the host backend's copies are its own memcpy, not a link)
   */
  retimeCopies?: boolean;
  /**
   * profile files (other calibrations of the same GPU): after calibrating, simulate (and plan) every
   * cell with its profile's host-link copy terms at their medians over those of these named for its
   * model (pooled-link-terms.ts poolByModel, withPooledLinkTerms), the pooled profile written beside
   * the calibrated one
   */
  copyTermsFrom?: readonly string[];
  log?: (s: string) => void;
  onProgress?: (done: number, total: number, label?: string) => void;
}

export interface CellResult {
  id: string;
  key: string;
  /** the trace file's name (generated: <trace>-<model>-<context>-s<seed>) and the grid entry's name */
  trace: string;
  trace_name: string;
  trace_kind: 'generated' | 'captured';
  context: number | null;
  /** the trace's prompt tokens (for captured traces, their own) */
  prompt_tokens: number;
  model: string;
  policy: string;
  label: string;
  options: Record<string, string>;
  budget: string;
  status: 'ok' | 'skipped' | 'error' | 'not-run';
  reason?: string;
  pool?: PolicyPool;
  /** bytes on links in the simulation and in the first HIL run, by link direction */
  sim_bytes?: Record<string, number>;
  hw_bytes?: Record<string, number>;
  steps?: number[];
  context_tokens?: number[];
  sim_ms?: number[];
  /** measured step latency per run (hw_ms[run][i]) */
  hw_ms?: number[][];
  /** the per-step median of the runs */
  hw_median_ms?: number[];
  /**
   * per run and step, the time the compute stream waited on the host (host_gap_us of hil-steps.csv: the
   * host had not enqueued the layer yet); hostWaitShare gives its share of the step (absent in runs
   * stored before it was kept)
   */
  hw_host_gap_ms?: number[][];
  /**
   * per run and step, the host's wall time issuing the step's ops (host_issue_us of hil-steps.csv);
   * absent in runs stored before it was kept
   */
  hw_host_issue_ms?: number[][];
  /**
   * cells whose runs used the storage file: per run and step, the file tier's time (hil-steps.csv
   * file_read_us, file_write_us, file_sync_us in ms: read batches on the tier's I/O threads, writes,
   * memory-stream synchronizations before file requests), those synchronizations' count, and the
   * host's wall time at its read joins (file_join_us: the reads plus the host's own time around each
   * batch; join_ms absent in runs stored before it was kept); hw_file absent in runs stored before it
   * was kept
   */
  hw_file?: { read_ms: number[][]; write_ms: number[][]; sync_ms: number[][]; syncs: number[][]; join_ms?: number[][] };
  /** (cuda) per run, the host link's H2D and D2H rate right before it (HilInfo.link_before), GB/s; absent in runs stored before it was kept */
  hw_link_GBps?: [number, number][];
  /** cells whose simulation reads or writes the storage tier: the disk's file batches timed right before the runs (disk-probe.ts); absent in runs stored before it was kept */
  hw_disk_before?: DiskProbe;
  /** (cuda) per run, the host's us per copy issued right before it (HilInfo.host_before); absent in runs stored before it was kept */
  hw_host_probe_us?: number[];
  /** errors against hw_median_ms (the statistics leave out the first skip_steps) */
  error?: MedianP95;
  error_each_run?: MedianP95;
  spread?: MedianP95;
  sim_dist?: Distribution;
  hw_dist?: Distribution;
  judgement?: CellJudgement;
  warnings?: string[];
  estimate_s: number;
  wall_s?: number;
}

export interface PoolSummary {
  name: string;
  cells: number;
  passed: number;
  error: MedianP95;
  error_each_run: MedianP95;
  spread: MedianP95;
  /**
   * the error over the steps the hardware repeated (stats.ts repeatableSteps: its runs within
   * REPEATABLE_SPREAD of each other); n of them out of error.n. Beside the strict error, not in place of
   * it: the cells are judged on every step. Absent in summaries stored before it was kept.
   */
  error_repeatable?: MedianP95;
}

/** one call of `kvtier hil validate` that wrote into a run's directory: when it started and which build it was */
export interface ValidateCall {
  started_at: string;
  kvtier: BuildIdentity;
}

export interface ValidateResult {
  schema: 'kvtier-hil-validate/v1';
  grid: ValidateGrid;
  /**
   * the calls that ran this directory's cells, oldest first (a run cut at a time limit is resumed by
   * another call, which reuses the finished cells); absent in results stored before it was kept
   */
  calls?: ValidateCall[];
  /** with `kvtier hil validate-resim`: the build whose simulator priced the stored hardware steps again */
  resimulated_with?: BuildIdentity;
  device: string;
  backend: string;
  tiers: TierDevice[];
  /** host_probe_us: the host issue probe its calibration took (measurements.host_probe of the profile's fit file), where it has one */
  profiles: {
    model: string;
    file: string;
    calibrated: boolean;
    points: CalibrationPoints | null;
    points_near_grid: number[] | null;
    note: string;
    host_probe_us?: number;
    /** where its copy batches were timed again (retimeCopies): per condition the batches the fit took from the second timing, and the H2D alpha before and after */
    copies_retimed?: { idle: string; gemv: string | null; h2d_alpha_us: [number, number] };
    /** with copyTermsFrom: the profile the cells were simulated with (`file` with its copy terms pooled) and the pool's files */
    copy_terms_pooled?: { file: string; from: string[] };
  }[];
  held_out_contexts: number[];
  runs: number;
  skip_steps: number;
  targets: Targets;
  plan_s: number;
  wall_s: number;
  cells: CellResult[];
  pools: PoolSummary[];
  per_policy: (PoolSummary & { pool: string })[];
  notes: string[];
}

const sha = (x: string) => createHash('sha256').update(x).digest('hex').slice(0, 16);

export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, path);
}

/** a trace of the first `steps` steps of `src` (the whole file when it has no more) */
export function writeTracePrefix(src: string, dst: string, steps: number): void {
  const h = readTraceHeader(src);
  if (h.steps <= steps) {
    fs.copyFileSync(src, dst);
    return;
  }
  const w = new TraceWriter(dst, { ...h, steps, provenance: { ...h.provenance, prefix_of: src, prefix_steps: steps } }, { overwrite: true });
  const r = openTrace(src);
  try {
    let n = 0;
    for (const s of r) {
      if (n++ >= steps) break;
      w.writeStep(s);
    }
    w.close();
  } catch (e) {
    w.abort();
    throw e;
  } finally {
    r.close();
  }
}

/** the pool of a cell: bytes to or from the storage tier, else any bytes moved, else none */
export function poolOf(bytes: Record<string, number>[], storageTier: string | undefined): PolicyPool {
  const moved = bytes.some((b) => Object.values(b).some((v) => v > 0));
  const storage = storageTier !== undefined && bytes.some((b) => Object.entries(b).some(([k, v]) => v > 0 && (k.includes(`:${storageTier}->`) || k.endsWith(`->${storageTier}`))));
  return storage ? 'storage' : moved ? 'moving' : 'non-moving';
}

/** statistics of one cell from its per-step arrays; the first `skip` steps left out */
export function cellStats(pool: PolicyPool, sim: number[], runs: number[][], skip: number, targets: Targets = TARGETS) {
  const first = Math.min(skip, Math.max(0, sim.length - 1));
  const med = stepMedians(runs);
  const s = sim.slice(first);
  const m = med.slice(first);
  const used = runs.map((r) => r.slice(first));
  const error = medianP95(relErrors(s, m));
  const error_each_run = medianP95(used.flatMap((r) => relErrors(s, r)));
  const spread = medianP95(pairSpreads(used));
  const sim_dist = distribution(s);
  const hw_dist = distribution(m);
  const errors = relErrors(s, m);
  const repeatable = repeatableSteps(used);
  return { hw_median_ms: med, error, error_each_run, spread, sim_dist, hw_dist, judgement: judgeCell(pool, error, sim_dist, hw_dist, spread, targets), errors, each: used.flatMap((r) => relErrors(s, r)), spreads: pairSpreads(used), repeatableErrors: errors.filter((_, i) => repeatable[i]) };
}

/** a cell's error, spread, distributions and judgement from its statistics */
export function judgedFields(st: ReturnType<typeof cellStats>): Pick<CellResult, 'error' | 'error_each_run' | 'spread' | 'sim_dist' | 'hw_dist' | 'judgement'> {
  return { error: st.error, error_each_run: st.error_each_run, spread: st.spread, sim_dist: st.sim_dist, hw_dist: st.hw_dist, judgement: st.judgement };
}

/** pooled statistics over cells (their per-step values together) */
export function poolSummary(name: string, cells: CellResult[], skip: number): PoolSummary {
  const ok = cells.filter((c) => c.status === 'ok');
  const st = ok.map((c) => cellStats(c.pool!, c.sim_ms!, c.hw_ms!, skip));
  return {
    name,
    cells: ok.length,
    passed: ok.filter((c) => c.judgement?.pass).length,
    error: medianP95(st.flatMap((x) => x.errors)),
    error_each_run: medianP95(st.flatMap((x) => x.each)),
    spread: medianP95(st.flatMap((x) => x.spreads)),
    error_repeatable: medianP95(st.flatMap((x) => x.repeatableErrors)),
  };
}

/** whether a cell's simulated bytes cross a link to or from one of `tiers` (link keys "link:from->to") */
export function movesTo(bytes: Record<string, number> | undefined, tiers: readonly string[]): boolean {
  return tiers.length > 0 && Object.entries(bytes ?? {}).some(([k, v]) => v > 0 && tiers.some((t) => k.endsWith(`->${t}`) || k.includes(`:${t}->`)));
}

/**
 * The cells that moved data to or from a tier the machine has no hardware of (`noHardware`: CXL, HDD;
 * the HIL holds CXL in pinned host memory and HDD in the file tier), the tiers they touched, and a note
 * naming them (absent where there are none)
 */
export function standInCells(results: CellResult[], noHardware: readonly string[]): { cells: CellResult[]; tiers: string[]; note?: string } {
  const cells = results.filter((r) => r.status === 'ok' && movesTo(r.sim_bytes, noHardware));
  const tiers = noHardware.filter((t) => cells.some((r) => movesTo(r.sim_bytes, [t])));
  if (cells.length === 0) return { cells, tiers };
  return { cells, tiers, note: `${cells.length} cells ${STAND_IN_NOTE} ${tiers.join(', ')}, which this machine does not have (the HIL holds CXL in pinned host memory and HDD in the file tier): their hardware times are the stand-in's, not those of the simulated tier (${[...new Set(cells.map((r) => r.label))].join(', ')})` };
}

/** the words after the count in standInCells' note (to find the note of an earlier summary) */
export const STAND_IN_NOTE = 'moved data to or from';

/** `notes` without an earlier stand-in note, and with `note` (where given) at the end */
export function withStandInNote(notes: readonly string[], note: string | undefined): string[] {
  const earlier = new RegExp(`^\\d+ cells ${STAND_IN_NOTE} `);
  return [...notes.filter((n) => !earlier.test(n)), ...(note ? [note] : [])];
}

/**
 * The pools (moving, storage, moving nothing) and the per-policy summaries of a grid's cells; where
 * some cell moved data to or from a tier the machine has no hardware of (`noHardware`: CXL, HDD, held by
 * the HIL in host memory or the file), a row of those cells too (its hardware times are the stand-in's)
 */
export function summarizeCells(results: CellResult[], skip: number, noHardware: readonly string[] = []): Pick<ValidateResult, 'pools' | 'per_policy'> {
  const pools = [
    poolSummary('moving data (any bytes on a link)', results.filter((r) => r.pool === 'moving' || r.pool === 'storage'), skip),
    poolSummary('moving data to or from storage', results.filter((r) => r.pool === 'storage'), skip),
    poolSummary('moving no data', results.filter((r) => r.pool === 'non-moving'), skip),
  ];
  const standIn = standInCells(results, noHardware);
  if (standIn.cells.length > 0) pools.push(poolSummary(`moving data to or from ${standIn.tiers.join(', ')} (stand-in)`, standIn.cells, skip));
  const per_policy = [...new Set(results.map((r) => r.label))].map((label) => {
    const rs = results.filter((r) => r.label === label);
    const ps = [...new Set(rs.filter((r) => r.pool).map((r) => r.pool!))];
    return { ...poolSummary(label, rs, skip), pool: ps.join('/') || '-' };
  });
  return { pools, per_policy };
}

/** the calls recorded in a run directory's validate.json, if it has a readable one (a rerun resumes there) */
function earlierCalls(file: string): ValidateCall[] {
  if (!fs.existsSync(file)) return [];
  try {
    const prev = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ValidateResult>;
    return Array.isArray(prev.calls) ? prev.calls : [];
  } catch {
    return [];
  }
}

/** how the note of a run with pooled copy terms begins (a re-simulation that sets the pooled profiles aside drops the note by it) */
export const POOLED_NOTE_START = "every cell planned and simulated with its profile's host-link copy terms";


export async function validate(o: ValidateOptions): Promise<ValidateResult> {
  const log = o.log ?? (() => {});
  const g = o.grid;
  // (a pool file that cannot be read fails here, before anything is written or calibrated)
  const pool = o.copyTermsFrom && o.copyTermsFrom.length > 0 ? readPool(o.copyTermsFrom) : null;
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  const calls = [...earlierCalls(join(o.out, 'validate.json')), { started_at: new Date().toISOString(), kvtier: buildIdentity() }];
  const cells = expandGrid(g, (t) => readTraceHeader(t.path!).prompt_tokens);
  const notes: string[] = [];
  // the traces' own prompt lengths (captured) and the grid's contexts: calibration stays away from all of them
  const captured = g.traces.filter((t) => t.path);
  const capturedContexts = captured.map((t) => readTraceHeader(t.path!).prompt_tokens);
  const judged = [...new Set([...g.contexts, ...g.traces.flatMap((t) => t.contexts ?? []), ...capturedContexts])].sort((a, b) => a - b);
  const modelOf = (c: GridCell) => c.model || readTraceHeader(c.trace.path!).model;
  const models = [...new Set(cells.map(modelOf))];
  // (a pool that names no model of the grid fails here too)
  if (pool) poolByModel(pool, models);
  fs.mkdirSync(join(o.out, 'traces'), { recursive: true });
  fs.mkdirSync(join(o.out, 'cells'), { recursive: true });
  fs.mkdirSync(join(o.out, 'profiles'), { recursive: true });
  const fileDir = o.hil.nvmeDir ?? tmpdir();
  const unknown = Object.keys(o.profiles ?? {}).filter((k) => k !== '*' && !models.some((m) => m === k || loadModel(m).name === k));
  if (unknown.length) throw new Error(`--profile: no model ${unknown.map((k) => `"${k}"`).join(', ')} in the grid (its models: ${models.join(', ')})`);

  // plan: every cell simulated with the base profile (the simulator's step times stand for the hardware's)
  const est = await planCells(cells, g, o.out, modelOf, log);
  const calibS = models.filter((m) => !profileGiven(o.profiles, m)).reduce((a, m) => a + calibrationSeconds(loadModel(m), g.calibration === 'quick'), 0);
  const planS = calibS + [...est.values()].reduce((a, b) => a + b, 0);
  log(`plan: ${cells.length} cells (${g.traces.length} traces, contexts ${judged.map((c) => contextLabel(c)).join('/')}, ${models.length} models, ${g.budgets.length} budgets, ${g.policies.length} policies), ${g.steps} steps, ${g.runs} HIL runs each`);
  log(`plan: about ${formatSeconds(planS)} on an H100 (calibration ${formatSeconds(calibS)}, cells ${formatSeconds(planS - calibS)}: simulated step times on ${g.base_hardware} plus setup costs from lab HIL runs)${o.maxSeconds ? `; stops starting cells at ${o.maxSeconds} s` : ''}`);
  // (the backend 'auto' opens: the host one takes the quick host points)
  let device = 'not opened (plan only)';
  let backend: string = o.hil.backend;
  if (!o.planOnly) {
    const b = openBackend(o.hil.backend);
    try {
      device = b.info().name;
      backend = b.kind;
    } finally {
      b.close();
    }
  }

  const points = heldOutPoints(judged, { quick: g.calibration === 'quick' && backend === 'host' });
  log(`calibration points (held out from contexts ${judged.join(', ')}): attention ${points.attention_contexts.join(', ')}; chains ${points.situ_contexts.join(', ')}; layout copies and file batches at ${points.layout_context}, overlap at ${points.overlap_context}`);
  const gridOut = { ...g };
  fs.writeFileSync(join(o.out, 'grid.json'), JSON.stringify(gridOut, null, 2) + '\n');

  // profiles
  const profiles: ValidateResult['profiles'] = [];
  const profileFile = new Map<string, string>();
  // (the models calibrated by this call, not reused from an earlier one)
  const calibratedNow = new Set<string>();
  if (!o.planOnly) {
    for (const model of models) {
      const given = profileGiven(o.profiles, model);
      if (given) {
        const side = fitFileOf(given);
        let pts: CalibrationPoints | null = null;
        try {
          pts = (JSON.parse(fs.readFileSync(side, 'utf8')) as { measurements?: { points?: CalibrationPoints } }).measurements?.points ?? null;
        } catch {
          pts = null;
        }
        const near = pts ? pointsNearGrid(pts, judged) : null;
        const note = pts ? (near!.length ? `given; its calibration measured at grid contexts ${near!.join(', ')} (not held out)` : 'given; its calibration points avoid the grid contexts') : `given; no ${side} with its calibration points: whether it saw the grid's contexts is unknown`;
        profiles.push({ model, file: given, calibrated: false, points: pts, points_near_grid: near, note });
        profileFile.set(model, given);
        log(`profile for ${model}: ${given} (${note})`);
        continue;
      }
      const file = join(o.out, 'profiles', `${modelSlug(model)}.json`);
      const key = sha(JSON.stringify({ model, points, quick: g.calibration, base: g.base_hardware, backend: o.hil.backend }));
      const keyFile = `${file}.key`;
      if (fs.existsSync(file) && fs.existsSync(keyFile) && fs.readFileSync(keyFile, 'utf8') === key) {
        log(`profile for ${model}: ${file} (calibrated by an earlier run with the same points, reused)`);
        const side = fitFileOf(file);
        let earlier: string[] = [];
        try {
          earlier = fs.existsSync(side) ? ((JSON.parse(fs.readFileSync(side, 'utf8')) as { warnings?: string[] }).warnings ?? []) : [];
        } catch (e) {
          log(`  (the fit file ${side} is not readable JSON (${(e as Error).message}): its calibration warnings, if any, are not repeated)`);
        }
        for (const w of earlier) notes.push(`calibration of ${model}: ${w}`);
      } else {
        log(`calibrating for ${model} (${g.calibration}) on the ${o.hil.backend} backend`);
        const c0 = performance.now();
        const r = await calibrate({ backend: o.hil.backend, base: g.base_hardware, model, quick: g.calibration === 'quick', fileDir, ioThreads: o.hil.ioThreads, attention: o.hil.attention, points, log: (s) => log(`  ${s}`) });
        writeCalibration(file, r);
        fs.writeFileSync(keyFile, key);
        calibratedNow.add(model);
        for (const w of r.warnings) notes.push(`calibration of ${model}: ${w}`);
        log(`calibrated ${model} in ${((performance.now() - c0) / 1000).toFixed(1)} s`);
      }
      profiles.push({ model, file, calibrated: true, points, points_near_grid: pointsNearGrid(points, judged), note: 'calibrated here from the held-out points' });
      profileFile.set(model, file);
    }
  }

  if (!o.planOnly && (o.retimeCopies ?? backend === 'cuda')) {
    const listed: RetimedProfile[] = profiles.filter((x) => x.calibrated).map((x) => ({ model: x.model, file: x.file, calibrated_now: calibratedNow.has(x.model) }));
    notes.push(...(await retimeCalibrations(listed, { backend: o.hil.backend, base: g.base_hardware, quick: g.calibration === 'quick', ...(o.hil.attention ? { attention: o.hil.attention } : {}) }, log)));
    for (const x of listed) {
      const p = profiles.find((y) => y.model === x.model)!;
      if (x.copies_retimed) p.copies_retimed = x.copies_retimed;
    }
  }

  for (const p of profiles) {
    const probe = calibrationHostProbe(p.file);
    if (probe !== undefined) p.host_probe_us = probe;
  }

  // the host link's copy terms at their medians over other calibrations: each profile's pooled copy,
  // written beside it, is what the cells are planned and simulated with
  if (pool && !o.planOnly) {
    const byModel = poolByModel(pool, profiles.map((p) => p.model));
    for (const p of profiles) {
      const own = byModel.get(p.model);
      if (!own) {
        log(`profile for ${p.model}: ${p.file} as calibrated (no profile of the pool is named ${modelSlug(p.model)}.json)`);
        continue;
      }
      const pooled = withPooledLinkTerms(validateProfile(JSON.parse(fs.readFileSync(p.file, 'utf8')), p.file), own, p.file);
      const file = join(o.out, 'profiles', `${modelSlug(p.model)}.pooled.json`);
      writeAtomic(file, JSON.stringify(pooled, null, 2) + '\n');
      p.copy_terms_pooled = { file, from: own.map((m) => m.file) };
      profileFile.set(p.model, file);
      log(`profile for ${p.model}: ${file} (${p.file} with its host-link copy terms at their medians over ${own.length === 1 ? 'one profile' : `${own.length} profiles`} of that model)`);
    }
    notes.push(`${POOLED_NOTE_START} and copy batch cost at their medians over other calibrations of its model (profiles/*.pooled.json): ${describePool(byModel, profiles.map((p) => p.model))}`);
  }

  // cells
  const results: CellResult[] = [];
  const ratios = new WallRatios();
  let storageDirect: boolean | null = null;
  const total = cells.length;
  const finished = finishedCells(join(o.out, 'cells'));
  for (const [i, c] of cells.entries()) {
    const model = modelOf(c);
    const e = est.get(c.id)!;
    const base: CellResult = {
      id: c.id,
      key: '',
      trace: c.trace_id,
      trace_name: c.trace.name,
      trace_kind: c.trace.generate ? 'generated' : 'captured',
      context: c.context,
      prompt_tokens: c.context ?? readTraceHeader(c.trace.path!).prompt_tokens,
      model,
      policy: c.policy.name,
      label: c.policy.label,
      options: c.policy.options,
      budget: c.budget,
      status: 'not-run',
      estimate_s: e,
    };
    if (o.planOnly) {
      results.push({ ...base, reason: 'plan only' });
      continue;
    }
    const prof = profileFile.get(model)!;
    const key = sha(JSON.stringify({ cell: { ...c, index: undefined, id: undefined }, steps: g.steps, runs: g.runs, skip: g.skip_steps, profile: sha(fs.readFileSync(prof, 'utf8')), backend: o.hil.backend }));
    base.key = key;
    const cellFile = join(o.out, 'cells', `${c.id}.json`);
    // a finished cell of an earlier run, found by its name without the grid position (a grid with a
    // cell added or removed numbers the others anew) and reused when its settings match
    const candidates = [...(fs.existsSync(cellFile) ? [cellFile] : []), ...(finished.get(unnumbered(c.id)) ?? [])];
    let prev: CellResult | undefined;
    let prevFile = '';
    for (const f of candidates) {
      let r: CellResult;
      try {
        r = JSON.parse(fs.readFileSync(f, 'utf8')) as CellResult;
      } catch (err) {
        log(`cell file ${f} is not readable JSON (${(err as Error).message}): the cell runs again`);
        continue;
      }
      if (r.key === key && (r.status === 'ok' || r.status === 'skipped')) {
        prev = r;
        prevFile = f;
        break;
      }
    }
    if (prev) {
      if (prev.status === 'ok' && prev.wall_s !== undefined) ratios.add(c.policy.label, prev.wall_s, prev.estimate_s);
      const reused = { ...prev, id: c.id };
      if (prevFile !== cellFile) writeAtomic(cellFile, JSON.stringify(reused) + '\n');
      results.push(reused);
      o.onProgress?.(i + 1, total, c.id);
      continue;
    }
    const ratio = ratios.ratio(c.policy.label);
    if (o.maxSeconds !== undefined && elapsed() + e * ratio > o.maxSeconds) {
      results.push({ ...base, reason: `not started: the time limit (${o.maxSeconds} s) would be passed (elapsed ${elapsed().toFixed(0)} s, this cell about ${(e * ratio).toFixed(1)} s); rerun with the same --out to go on` });
      continue;
    }
    const c0 = performance.now();
    // after its simulation with the calibrated profile, the cell is started only if its runs end in time
    const fits = (seconds: number) => o.maxSeconds === undefined || elapsed() + seconds * ratio <= o.maxSeconds;
    const r = await runCell(c, base, prof, profiles.find((x) => x.model === model)?.points ?? null, g, o, fileDir, fits);
    r.wall_s = (performance.now() - c0) / 1000;
    if (r.status === 'ok') ratios.add(c.policy.label, r.wall_s, e);
    if (r.storage_direct !== undefined && r.storage_direct !== null) storageDirect = r.storage_direct;
    delete r.storage_tier;
    delete r.storage_direct;
    writeAtomic(cellFile, JSON.stringify(r) + '\n');
    results.push(r);
    const left = cells.slice(i + 1).reduce((a, x) => a + est.get(x.id)! * ratios.ratio(x.policy.label), 0);
    const link =
      (r.hw_link_GBps ? `; link before the runs H2D ${r.hw_link_GBps.map((x) => x[0].toFixed(1)).join(', ')} GB/s` : '') +
      (r.hw_host_probe_us ? `; host ${r.hw_host_probe_us.map((x) => x.toFixed(2)).join(', ')} us per copy` : '') +
      (r.hw_disk_before ? `; disk probed (${r.hw_disk_before.read.length} read, ${r.hw_disk_before.write.length} write batches)` : '');
    const what = r.status === 'ok' ? `median ${(r.error!.median * 100).toFixed(2)}%, p95 ${(r.error!.p95 * 100).toFixed(2)}%, runs differ ${(r.spread!.median * 100).toFixed(2)}% (${r.pool}, ${r.judgement!.pass ? 'pass' : 'miss'}${link})` : `${r.status}: ${r.reason}`;
    log(`[${i + 1}/${total}] ${c.id}: ${what} (${r.wall_s.toFixed(1)} s; elapsed ${formatSeconds(elapsed())}, ETA ${formatSeconds(left)})`);
    o.onProgress?.(i + 1, total, c.id);
  }

  // the storage tier's device, from a run that used it (O_DIRECT or not), else the directory alone
  const tiers = describeTiers(profileTiers(profileFile), { backend, device, fileDir, direct: storageDirect });
  // over every cell of the grid, those resumed from earlier calls included
  if (!results.some((r) => r.pool === 'storage')) notes.push('no cell moved bytes to or from the storage tier');
  const skip = g.skip_steps;
  const noHardware = tiers.filter((t) => hasNoHardware(t.kind)).map((t) => t.tier);
  const { pools, per_policy } = summarizeCells(results, skip, noHardware);
  const standInNote = standInCells(results, noHardware).note;
  if (standInNote) notes.push(standInNote);
  const skipped = results.filter((r) => r.status === 'skipped');
  if (skipped.length) notes.push(`${skipped.length} cells skipped (they do not fit): ${[...new Set(skipped.map((r) => r.reason))].slice(0, 6).join('; ')}`);
  const notRun = results.filter((r) => r.status === 'not-run');
  if (notRun.length) notes.push(`${notRun.length} cells not run${o.planOnly ? ' (plan only)' : ' (time limit); a rerun with the same --out resumes'}`);
  const errs = results.filter((r) => r.status === 'error');
  if (errs.length) notes.push(`${errs.length} cells failed: ${[...new Set(errs.map((r) => `${r.label}: ${r.reason}`))].slice(0, 6).join('; ')}`);
  const result: ValidateResult = {
    schema: 'kvtier-hil-validate/v1',
    grid: g,
    calls,
    device,
    backend,
    tiers,
    profiles,
    held_out_contexts: judged,
    runs: g.runs,
    skip_steps: skip,
    targets: TARGETS,
    plan_s: planS,
    wall_s: elapsed(),
    cells: results,
    pools,
    per_policy,
    notes,
  };
  if (!o.planOnly) {
    writeAtomic(join(o.out, 'validate.json'), JSON.stringify(result) + '\n');
    writeAtomic(join(o.out, 'cells.csv'), cellsCsv(result));
  }
  return result;
}

/** the host issue probe (us per copy) in the fit file beside a calibrated profile, if it has one */
export function calibrationHostProbe(profileFile: string): number | undefined {
  try {
    const fit = JSON.parse(fs.readFileSync(fitFileOf(profileFile), 'utf8')) as { measurements?: { host_probe?: { copy_us?: number } } };
    const us = fit.measurements?.host_probe?.copy_us;
    return typeof us === 'number' && us > 0 ? us : undefined;
  } catch {
    return undefined;
  }
}

/** the profile given for a model: by the grid's name or file for it, or by the model's name, else the one for every model */
function profileGiven(p: Record<string, string> | undefined, model: string): string | undefined {
  return p?.[model] ?? p?.[loadModel(model).name] ?? p?.['*'];
}

/** the tiers of the first profile (every profile derives from the grid's one base) */
function profileTiers(profiles: Map<string, string>): { name: string; kind: string }[] {
  const file = [...profiles.values()][0];
  if (file === undefined) return [];
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as { tiers: { name: string; kind: string }[] };
  return p.tiers.map((t) => ({ name: t.name, kind: t.kind }));
}

/** the simulator's (and the HIL's) configuration of a cell with a profile */
export function cellRunConfig(c: GridCell, trace: string, profile: string): RunConfig {
  // the quantization group size calibration uses (calibrate.ts): 128, or the head dimension when smaller
  const groupSize = Math.min(128, loadModel(c.model || readTraceHeader(trace).model).head_dim);
  return { trace, policy: c.policy.name, policy_options: c.policy.options, hardware: profile, hbm_budget: c.budget, group_size: groupSize, ...(c.model ? { model: c.model } : {}) };
}

type RunningCell = CellResult & { storage_tier?: string; storage_direct?: boolean | null };

async function runCell(c: GridCell, base: CellResult, profile: string, points: CalibrationPoints | null, g: ValidateGrid, o: ValidateOptions, fileDir: string, fits: (seconds: number) => boolean): Promise<RunningCell> {
  const config = cellRunConfig(c, traceFile(c, g, o.out), profile);
  let sim: RunResult;
  try {
    sim = simulate(config);
  } catch (e) {
    const msg = (e as Error).message;
    if (/does not fit|do not fit/.test(msg)) return { ...base, status: 'skipped', reason: `does not fit: ${msg}` };
    return { ...base, status: 'error', reason: `simulation: ${msg}` };
  }
  // the HIL keeps the KV outside HBM in host memory (pinned) or the storage file
  const hostBytes = sim.resolved.fullKvBytes - sim.resolved.budgetBytes;
  if (hostBytes > 0.7 * freemem()) return { ...base, status: 'skipped', reason: `does not fit host memory: ${(hostBytes / 2 ** 30).toFixed(1)} GiB of KV outside HBM, ${(freemem() / 2 ** 30).toFixed(1)} GiB free` };
  const storageTier = sim.resolved.hardware.tiers.find((t) => t.kind === 'nvme')?.name;
  const runsS = cellSeconds(sim.resolved.model, sim.resolved.header.prompt_tokens, sim.steps.length, sim.resolved.budgetBytes / sim.resolved.fullKvBytes, g.runs, H100_PLAN, sim.steps.reduce((t, s) => t + s.latency_ms, 0));
  if (!fits(runsS)) return { ...base, status: 'not-run', reason: `not started: its ${g.runs} runs (about ${runsS.toFixed(1)} s as simulated) would pass the time limit (${o.maxSeconds} s); rerun with the same --out to go on` };
  // a cell that reads or writes the storage tier: the disk as it is right before the runs
  const usesDisk = poolOf([sim.summary.bytes], storageTier) === 'storage';
  let disk: DiskProbe | undefined;
  let diskError: string | undefined;
  if (usesDisk) {
    try {
      disk = await probeDisk(sim.resolved.model, config.group_size!, { quick: g.calibration === 'quick', fileContext: points?.file_context }, { ...o.hil, nvmeDir: fileDir, ioThreads: o.hil.ioThreads ?? DEFAULT_IO_THREADS });
    } catch (e) {
      diskError = `the disk was not probed before the runs: ${(e as Error).message}`;
    }
  }
  const runs: Awaited<ReturnType<typeof hilRun>>[] = [];
  try {
    for (let k = 0; k < g.runs; k++) runs.push(await hilRun(config, { ...o.hil, nvmeDir: fileDir, ioThreads: o.hil.ioThreads ?? DEFAULT_IO_THREADS }));
  } catch (e) {
    const msg = (e as Error).message;
    const also = diskError ? `; ${diskError}` : '';
    if (/out of memory|cudaErrorMemoryAllocation|does not fit/i.test(msg)) return { ...base, status: 'skipped', reason: `does not fit on the device: ${msg}${also}` };
    return { ...base, status: 'error', reason: `HIL run ${runs.length + 1}: ${msg}${also}` };
  }
  for (const [k, r] of runs.entries()) {
    if (r.result.steps.length !== sim.steps.length) return { ...base, status: 'error', reason: `HIL run ${k + 1} has ${r.result.steps.length} steps, the simulation ${sim.steps.length}` };
  }
  const pool = poolOf([sim.summary.bytes, ...runs.map((r) => r.result.summary.bytes)], storageTier);
  const simMs = sim.steps.map((s) => s.latency_ms);
  const hwMs = runs.map((r) => r.result.steps.map((s) => s.latency_ms));
  const st = cellStats(pool, simMs, hwMs, g.skip_steps);
  const usedFile = runs.find((r) => r.hil.nvme_file.used);
  return {
    ...base,
    status: 'ok',
    pool,
    sim_bytes: sim.summary.bytes,
    hw_bytes: runs[0].result.summary.bytes,
    steps: sim.steps.map((s) => s.step),
    context_tokens: sim.steps.map((s) => s.context_tokens),
    sim_ms: simMs,
    hw_ms: hwMs,
    hw_median_ms: st.hw_median_ms,
    hw_host_gap_ms: runs.map((r) => r.hil.steps.map((m) => m.host_gap_us / 1e3)),
    hw_host_issue_ms: runs.map((r) => r.hil.steps.map((m) => m.host_issue_us / 1e3)),
    ...(usedFile ? { hw_file: { read_ms: runs.map((r) => r.hil.steps.map((m) => m.file_read_us / 1e3)), write_ms: runs.map((r) => r.hil.steps.map((m) => m.file_write_us / 1e3)), sync_ms: runs.map((r) => r.hil.steps.map((m) => m.file_sync_us / 1e3)), syncs: runs.map((r) => r.hil.steps.map((m) => m.file_syncs)), join_ms: runs.map((r) => r.hil.steps.map((m) => m.file_join_us / 1e3)) } } : {}),
    ...(runs.every((r) => r.hil.host_before) ? { hw_host_probe_us: runs.map((r) => r.hil.host_before!.copy_us) } : {}),
    ...(runs.every((r) => r.hil.link_before) ? { hw_link_GBps: runs.map((r): [number, number] => [r.hil.link_before!.h2d_GBps, r.hil.link_before!.d2h_GBps]) } : {}),
    ...judgedFields(st),
    ...(disk ? { hw_disk_before: disk } : {}),
    warnings: [...new Set([...runs.flatMap((r) => r.hil.warnings), ...(diskError ? [diskError] : [])])],
    ...(pool === 'storage' && storageTier ? { storage_tier: storageTier } : {}),
    ...(usedFile ? { storage_direct: usedFile.hil.nvme_file.direct } : {}),
  };
}

/**
 * Seconds per cell: each cell simulated with the grid's base profile (cellSeconds with the simulated
 * steps), the analytic estimate where the simulation refuses it. Saved in <out>/plan.json by cell
 * settings, so a rerun does not simulate again.
 */
async function planCells(cells: GridCell[], g: ValidateGrid, out: string, modelOf: (c: GridCell) => string, log: (s: string) => void): Promise<Map<string, number>> {
  const file = join(out, 'plan.json');
  let saved: Record<string, { key: string; s: number }> = {};
  try {
    saved = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof saved;
  } catch {
    saved = {};
  }
  const est = new Map<string, number>();
  const t0 = performance.now();
  let simulated = 0;
  const refused: string[] = [];
  for (const c of cells) {
    const key = sha(JSON.stringify({ cell: { ...c, index: undefined, id: undefined }, steps: g.steps, runs: g.runs, base: g.base_hardware }));
    if (saved[c.id]?.key === key) {
      est.set(c.id, saved[c.id].s);
      continue;
    }
    const trace = traceFile(c, g, out);
    const m = loadModel(modelOf(c));
    let seconds: number;
    try {
      const sim = simulate({ trace, policy: c.policy.name, policy_options: c.policy.options, hardware: g.base_hardware, hbm_budget: c.budget, group_size: Math.min(128, m.head_dim), ...(c.model ? { model: c.model } : {}) });
      seconds = cellSeconds(m, sim.resolved.header.prompt_tokens, sim.steps.length, sim.resolved.budgetBytes / sim.resolved.fullKvBytes, g.runs, H100_PLAN, sim.steps.reduce((t, s) => t + s.latency_ms, 0));
    } catch (e) {
      refused.push(`${c.id}: ${(e as Error).message.split('\n')[0]}`);
      seconds = cellSeconds(m, c.context ?? readTraceHeader(trace).prompt_tokens, g.steps, 1, g.runs);
    }
    simulated++;
    est.set(c.id, seconds);
    saved[c.id] = { key, s: seconds };
  }
  writeAtomic(file, JSON.stringify(saved) + '\n');
  if (simulated) log(`plan: ${simulated} cells simulated on ${g.base_hardware} for the estimate (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  for (const r of refused) log(`plan: the simulator refuses ${r}`);
  return est;
}

/** the cell's trace file under <out>/traces, generated or cut on first use */
export function traceFile(c: GridCell, g: ValidateGrid, out: string): string {
  const p = join(out, 'traces', `${c.trace_id}.kvt`);
  if (fs.existsSync(p)) return p;
  const tmp = `${p}.tmp-${process.pid}`;
  if (c.trace.generate) {
    const m = loadModel(c.model);
    generateTrace(tmp, { ...c.trace.generate, model: m.name, layers: m.layers, prompt_tokens: c.context!, steps: g.steps, seed: c.seed } as never, { overwrite: true });
  } else {
    writeTracePrefix(c.trace.path!, tmp, g.steps);
  }
  fs.renameSync(tmp, p);
  return p;
}

const CSV_COLS = ['id', 'trace', 'trace_kind', 'prompt_tokens', 'model', 'policy', 'budget', 'status', 'pool', 'error_median', 'error_p95', 'error_each_run_median', 'error_each_run_p95', 'spread_median', 'spread_p95', 'host_wait_share', 'hw_link_h2d_GBps', 'hw_host_probe_us', 'sim_mean_ms', 'hw_mean_ms', 'sim_p50_ms', 'hw_p50_ms', 'sim_p99_ms', 'hw_p99_ms', 'pass', 'wall_s', 'reason'] as const;

export function cellsCsv(r: ValidateResult): string {
  const q = (x: unknown) => {
    const s = x === undefined || x === null ? '' : String(x);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [CSV_COLS.join(',')];
  for (const c of r.cells) {
    const row: Record<(typeof CSV_COLS)[number], unknown> = {
      id: c.id,
      trace: c.trace,
      trace_kind: c.trace_kind,
      prompt_tokens: c.prompt_tokens,
      model: c.model,
      policy: c.label,
      budget: c.budget,
      status: c.status,
      pool: c.pool,
      error_median: c.error?.median,
      error_p95: c.error?.p95,
      error_each_run_median: c.error_each_run?.median,
      error_each_run_p95: c.error_each_run?.p95,
      spread_median: c.spread?.median,
      spread_p95: c.spread?.p95,
      host_wait_share: hostWaitShare(c, r.grid.skip_steps),
      hw_link_h2d_GBps: c.hw_link_GBps ? Math.min(...c.hw_link_GBps.map((x) => x[0])).toFixed(2) : undefined,
      hw_host_probe_us: c.hw_host_probe_us ? median(c.hw_host_probe_us).toFixed(2) : undefined,
      sim_mean_ms: c.sim_dist?.mean,
      hw_mean_ms: c.hw_dist?.mean,
      sim_p50_ms: c.sim_dist?.p50,
      hw_p50_ms: c.hw_dist?.p50,
      sim_p99_ms: c.sim_dist?.p99,
      hw_p99_ms: c.hw_dist?.p99,
      pass: c.judgement ? (c.judgement.pass ? 'pass' : 'miss') : '',
      wall_s: c.wall_s?.toFixed(2),
      reason: c.reason,
    };
    lines.push(CSV_COLS.map((k) => q(row[k])).join(','));
  }
  return lines.join('\n') + '\n';
}

/** a cell id without its position in the grid (the leading four digits) */
function unnumbered(id: string): string {
  return id.replace(/^\d{4}_/, '');
}

/** the cell files under `dir` by their unnumbered ids */
function finishedCells(dir: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  if (!fs.existsSync(dir)) return m;
  for (const f of fs.readdirSync(dir).sort()) {
    if (!f.endsWith('.json')) continue;
    const k = unnumbered(f.slice(0, -5));
    m.set(k, [...(m.get(k) ?? []), join(dir, f)]);
  }
  return m;
}
