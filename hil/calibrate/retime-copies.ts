/**
 * The layout copy batches a calibration fitted the hbm link to (GPU idle, and beside the layer GEMV)
 * timed a second time, later, and the calibration rebuilt (calibrate.ts buildCalibration) with each
 * batch's lesser timing. A stretch of slow host-to-device copies lengthens every timing taken in it,
 * and one can outlast a whole model's calibration (lab/notes/HIL-NOTES.md, 2026-11-28: on an H200
 * lease every H2D batch of one calibration ran 2.4-8.2% slower than the same batches on 14 other
 * leases, and the next model's calibration minutes later read the usual times); nothing makes a batch
 * run faster than the link allows. So of two timings far apart the lesser is the one outside such a
 * stretch, and with none the two differ by the timings' own noise. `kvtier hil validate` takes the
 * second timings after every model of its grid is calibrated.
 */
import * as fs from 'node:fs';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import type { AttentionOptions, BackendKind, ResolvedAttentionOptions } from '../addon-types.js';
import { openBackend } from '../backend.js';
import type { LayoutPoint } from '../bench/layout-copy-bench.js';
import { buildCalibration, CALIBRATION_BLOCK_TOKENS, type CalibrationResult, fitFileOf, writeCalibration } from './calibrate.js';
import { hbmLink, underComputeBatches } from './fit-copy-batches.js';
import { measureLayoutCopies, type Measurements } from './measure.js';

/** a layout batch's name across timings: its direction and label */
const nameOf = (p: Pick<LayoutPoint, 'direction' | 'label'>) => `${p.direction} ${p.label}`;

/**
 * Per batch of `first`, the timing of the lesser `us` of it and the batch of the same name in
 * `second` (the first's where they tie), in `first`'s order; `fromSecond` names the batches taken
 * from the second. Throws where `second` lacks a batch of `first` or names one twice (the timings are
 * not of one plan).
 */
export function lesserTimings(first: readonly LayoutPoint[], second: readonly LayoutPoint[]): { points: LayoutPoint[]; fromSecond: string[] } {
  const again = new Map<string, LayoutPoint>();
  for (const p of second) {
    if (again.has(nameOf(p))) throw new Error(`the second timings name the batch "${nameOf(p)}" twice`);
    again.set(nameOf(p), p);
  }
  const fromSecond: string[] = [];
  const points = first.map((p) => {
    const q = again.get(nameOf(p));
    if (!q) throw new Error(`the second timings have no batch "${nameOf(p)}": they are not of the plan the calibration timed`);
    if (!(q.us < p.us)) return p;
    fromSecond.push(nameOf(p));
    return q;
  });
  return { points, fromSecond };
}

export interface RetimeOptions {
  backend: BackendKind | 'auto';
  /** the base profile the calibration was built on (as calibrate's `base`) */
  base: string;
  /** the calibration's model (name or file) */
  model: string;
  /** quick calibration: the batches' trials as its (2, else 5) */
  quick: boolean;
  /** the calibration's tokens per block and quantization group (as calibrate's; default CALIBRATION_BLOCK_TOKENS and min(128, head_dim)) */
  blockTokens?: number;
  groupSize?: number;
  /** the attention options the calibration ran with (absent: the defaults) */
  attention?: AttentionOptions;
  date?: string;
  log?: (s: string) => void;
}

export interface RetimeResult {
  result: CalibrationResult;
  /** per condition, the calibration's batches compared and how many the rebuilt fit took from the second timing */
  idle: { batches: number; from_second: number };
  gemv: { batches: number; from_second: number } | null;
  /** the H2D alpha (us) of the idle fit before and after */
  h2d_alpha_us: [number, number];
}

/**
 * Times the layout batches of the calibration written at `file` (and its fit file, as
 * writeCalibration writes them) again, idle and, where its under-compute fit took the batches beside
 * the layer GEMV (underComputeBatches), beside it, and rewrites both files with each batch's lesser
 * timing. The rest is as measured the first time: the batches beside attention + GEMV layers (the
 * kernels' slowdown under copies), the bulk copies (bulk_GBps) and the spread bench (spread_us), and
 * the sources keep the calibration's date. Returns null where the calibration already holds two
 * timings. Throws where the backend's device is not the calibration's, or the second timings are not
 * of the calibration's plan.
 */
export async function retimeCopyBatches(file: string, o: RetimeOptions): Promise<RetimeResult | null> {
  const stored = JSON.parse(fs.readFileSync(fitFileOf(file), 'utf8')) as { device: string; attention_options: ResolvedAttentionOptions; measurements: Measurements };
  const m = stored.measurements;
  if (m.layout_retimed) return null;
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as HardwareProfile;
  const model = loadModel(o.model);
  const log = o.log ?? (() => {});
  const busy = underComputeBatches(m) === 'gemv';
  const b = openBackend(o.backend, 0, o.attention);
  let kind: BackendKind;
  let idle: LayoutPoint[];
  let gemv: LayoutPoint[] = [];
  const at = new Date().toISOString();
  try {
    kind = b.kind;
    const name = b.info().name;
    if (name !== stored.device) throw new Error(`${file} was calibrated on ${stored.device}; this backend's device is ${name}: its copies are not the calibration's to time again`);
    const opt = { model, blockTokens: o.blockTokens ?? CALIBRATION_BLOCK_TOKENS, groupSize: o.groupSize ?? Math.min(128, model.head_dim), quick: o.quick };
    const ctx = m.layout_info.context_tokens;
    const i = await measureLayoutCopies(b, opt, ctx, false);
    if (i.info.block_bytes !== m.layout_info.block_bytes) {
      throw new Error(`${file}: its layout batches copied ${m.layout_info.block_bytes}-byte blocks, the second timing ${i.info.block_bytes}-byte ones (another block size or model)`);
    }
    idle = [...i.h2d, ...i.d2h, ...i.mixed];
    if (busy) {
      const g = await measureLayoutCopies(b, opt, ctx, 'gemv');
      gemv = [...g.h2d, ...g.d2h, ...g.mixed];
    }
  } finally {
    b.close();
  }
  const next: Measurements = structuredClone(m);
  // per condition, the calibration's batches (every direction it timed) each replaced by its lesser timing
  const lesser = (sfx: '_idle' | '_gemv', second: LayoutPoint[]) => {
    const first = DIRECTIONS.flatMap((d) => m[`${d}_layout${sfx}`] ?? []);
    const r = lesserTimings(first, second);
    for (const d of DIRECTIONS) if (m[`${d}_layout${sfx}`]) next[`${d}_layout${sfx}`] = r.points.filter((p) => p.direction === d);
    return r;
  };
  // (batches the fits compare with each other, the adjacent-slot batch with the single blocks of its
  // size and the mixed batches with the single-direction fits, may now come from different timings:
  // each is the lesser of its own two)
  const i = lesser('_idle', idle);
  const g = busy ? lesser('_gemv', gemv) : null;
  next.layout_retimed = { at, idle, gemv, compared: { idle: i.points.length, gemv: g?.points.length ?? 0 }, from_second: { idle: i.fromSecond, gemv: g?.fromSecond ?? [] } };
  // (a calibration stored before the device's memory was recorded: its profile's capacity, as that calibration wrote it)
  if (next.memory_bytes === undefined && kind === 'cuda') next.memory_bytes = Math.round(profile.tiers[0].capacity_GiB * 1024 ** 3);
  // (and before its date was: the date its description names)
  if (next.date === undefined) next.date = /(\d{4}-\d\d-\d\d)/.exec(profile.description)?.[1];
  const result = buildCalibration({ m: next, base: o.base, model, device: stored.device, kind, attentionOptions: stored.attention_options, ...(o.blockTokens ? { blockTokens: o.blockTokens } : {}), ...(o.date ? { date: o.date } : {}), log });
  const h2d: [number, number] = [h2dAlpha(profile), h2dAlpha(result.profile)];
  // (result.measurements is `next`)
  next.layout_retimed.h2d_alpha_us = h2d;
  writeCalibration(file, result);
  return { result, ...retimedOf(next.layout_retimed), h2d_alpha_us: h2d };
}

const DIRECTIONS = ['h2d', 'd2h', 'mixed'] as const;

/** the profile's H2D alpha: its hbm link's direction into HBM */
function h2dAlpha(p: HardwareProfile): number {
  const { index, toHbm } = hbmLink(p);
  return p.links[index][toHbm].alpha_us;
}

/** per condition, the calibration's batches compared and how many the fit took from the second timing */
export function retimedOf(rt: NonNullable<Measurements['layout_retimed']>): Pick<RetimeResult, 'idle' | 'gemv'> {
  return {
    idle: { batches: rt.compared.idle, from_second: rt.from_second.idle.length },
    gemv: rt.compared.gemv ? { batches: rt.compared.gemv, from_second: rt.from_second.gemv.length } : null,
  };
}

/** a profile of a validation run, as hil/validate lists them */
export interface RetimedProfile {
  model: string;
  file: string;
  /** calibrated by this call of the run (not reused from an earlier call, nor given) */
  calibrated_now: boolean;
  copies_retimed?: { idle: string; gemv: string | null; h2d_alpha_us: [number, number] };
}

/**
 * For a validation run: the profiles calibrated by this call timed again (retimeCopyBatches), and, for
 * those an earlier call of the run calibrated, what their fit files say of a second timing. Only a
 * calibration taken in this call is timed again, on the machine that timed it the first time (a
 * resumed call may run on another machine of the same kind, whose link is another). Sets
 * `copies_retimed`; returns notes for a second timing that failed (the calibration then stays as
 * timed once) or that a reused calibration lacks.
 */
export async function retimeCalibrations(profiles: RetimedProfile[], o: Omit<RetimeOptions, 'model'>, log: (s: string) => void): Promise<string[]> {
  const notes: string[] = [];
  const of = (x: { batches: number; from_second: number }) => `${x.from_second} of ${x.batches}`;
  const summary = (s: Pick<RetimeResult, 'idle' | 'gemv'>, h2d: [number, number]) => ({ idle: of(s.idle), gemv: s.gemv ? of(s.gemv) : null, h2d_alpha_us: h2d });
  for (const p of profiles) {
    if (!p.calibrated_now) {
      let rt: Measurements['layout_retimed'];
      try {
        rt = (JSON.parse(fs.readFileSync(fitFileOf(p.file), 'utf8')) as { measurements: Measurements }).measurements.layout_retimed;
      } catch (e) {
        rt = undefined;
        log(`  (the fit file of ${p.model}'s calibration is not readable (${(e as Error).message}))`);
      }
      if (rt?.h2d_alpha_us && rt.compared) p.copies_retimed = summary(retimedOf(rt), rt.h2d_alpha_us);
      else notes.push(`${p.model}'s calibration, from an earlier call of this run, has its copy batches timed once (they are timed again only in the call that calibrates)`);
      continue;
    }
    log(`timing the copy batches of ${p.model}'s calibration again (each batch's lesser timing is kept)`);
    try {
      const r = await retimeCopyBatches(p.file, { ...o, model: p.model, log: (s) => log(`  ${s}`) });
      if (!r) continue;
      p.copies_retimed = summary(r, r.h2d_alpha_us);
      log(`  from the second timing: ${p.copies_retimed.idle} idle batches${p.copies_retimed.gemv ? `, ${p.copies_retimed.gemv} beside the GEMV` : ''}; H2D alpha ${r.h2d_alpha_us[0]} -> ${r.h2d_alpha_us[1]} us`);
    } catch (e) {
      const why = `the second timing of ${p.model}'s copy batches failed (${(e as Error).message}): its calibration is kept as timed once`;
      log(`  warning: ${why}`);
      notes.push(why);
    }
  }
  return notes;
}
