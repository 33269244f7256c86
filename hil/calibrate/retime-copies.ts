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
import { buildCalibration, CALIBRATION_BLOCK_TOKENS, type CalibrationResult, writeCalibration } from './calibrate.js';
import { hbmLink } from './fit-copy-batches.js';
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
  /** per condition, the batches timed and how many the rebuilt fit took from the second timing */
  idle: { batches: number; from_second: number };
  gemv: { batches: number; from_second: number } | null;
  /** the H2D alpha (us) of the idle fit before and after */
  h2d_alpha_us: [number, number];
}

/**
 * Times the layout batches of the calibration written at `file` (and `file`'s .fit.json, as
 * writeCalibration writes them) again, idle and beside the layer GEMV, and rewrites both files with
 * each batch's lesser timing. Returns null where the calibration already holds two timings. Throws
 * where the backend's device is not the calibration's, or its plan's block size differs.
 */
export async function retimeCopyBatches(file: string, o: RetimeOptions): Promise<RetimeResult | null> {
  const side = file.replace(/\.json$/, '') + '.fit.json';
  const stored = JSON.parse(fs.readFileSync(side, 'utf8')) as { device: string; attention_options: ResolvedAttentionOptions; measurements: Measurements };
  const m = stored.measurements;
  if (m.layout_retimed) return null;
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as HardwareProfile;
  const model = loadModel(o.model);
  const log = o.log ?? (() => {});
  const b = openBackend(o.backend, 0, o.attention);
  let kind: BackendKind;
  let idle: Awaited<ReturnType<typeof measureLayoutCopies>>;
  let gemv: Awaited<ReturnType<typeof measureLayoutCopies>> | null = null;
  const at = new Date().toISOString();
  try {
    kind = b.kind;
    const name = b.info().name;
    if (name !== stored.device) throw new Error(`${file} was calibrated on ${stored.device}; this backend's device is ${name}: its copies are not the calibration's to time again`);
    const opt = { model, blockTokens: o.blockTokens ?? CALIBRATION_BLOCK_TOKENS, groupSize: o.groupSize ?? Math.min(128, model.head_dim), quick: o.quick };
    const ctx = m.layout_info.context_tokens;
    idle = await measureLayoutCopies(b, opt, ctx, false);
    if (m.h2d_layout_gemv?.length) gemv = await measureLayoutCopies(b, opt, ctx, 'gemv');
  } finally {
    b.close();
  }
  if (idle.info.block_bytes !== m.layout_info.block_bytes) {
    throw new Error(`${file}: its layout batches copied ${m.layout_info.block_bytes}-byte blocks, the second timing ${idle.info.block_bytes}-byte ones (another block size or model)`);
  }
  const split = (points: LayoutPoint[]) => ({ h2d: points.filter((p) => p.direction === 'h2d'), d2h: points.filter((p) => p.direction === 'd2h'), mixed: points.filter((p) => p.direction === 'mixed') });
  const all = (x: { h2d: LayoutPoint[]; d2h: LayoutPoint[]; mixed: LayoutPoint[] }) => [...x.h2d, ...x.d2h, ...x.mixed];
  const next: Measurements = structuredClone(m);
  const i = lesserTimings([...m.h2d_layout_idle, ...m.d2h_layout_idle, ...(m.mixed_layout_idle ?? [])], all(idle));
  const si = split(i.points);
  next.h2d_layout_idle = si.h2d;
  next.d2h_layout_idle = si.d2h;
  if (m.mixed_layout_idle) next.mixed_layout_idle = si.mixed;
  let g: ReturnType<typeof lesserTimings> | null = null;
  if (gemv) {
    g = lesserTimings([...m.h2d_layout_gemv!, ...(m.d2h_layout_gemv ?? []), ...(m.mixed_layout_gemv ?? [])], all(gemv));
    const sg = split(g.points);
    next.h2d_layout_gemv = sg.h2d;
    next.d2h_layout_gemv = sg.d2h;
    if (m.mixed_layout_gemv) next.mixed_layout_gemv = sg.mixed;
  }
  next.layout_retimed = { at, idle: all(idle), gemv: gemv ? all(gemv) : [], from_second: { idle: i.fromSecond, gemv: g?.fromSecond ?? [] } };
  // (a calibration stored before the device's memory was recorded: its profile's capacity, as that calibration wrote it)
  if (next.memory_bytes === undefined && kind === 'cuda') next.memory_bytes = Math.round(profile.tiers[0].capacity_GiB * 1024 ** 3);
  const result = buildCalibration({ m: next, base: o.base, model, device: stored.device, kind, attentionOptions: stored.attention_options, ...(o.blockTokens ? { blockTokens: o.blockTokens } : {}), ...(o.date ? { date: o.date } : {}), log });
  const h2d: [number, number] = [h2dAlpha(profile), h2dAlpha(result.profile)];
  // (result.measurements is `next`)
  next.layout_retimed.h2d_alpha_us = h2d;
  writeCalibration(file, result);
  return { result, ...retimedOf(next.layout_retimed), h2d_alpha_us: h2d };
}

/** the profile's H2D alpha: its hbm link's direction into HBM */
function h2dAlpha(p: HardwareProfile): number {
  const { index, toHbm } = hbmLink(p);
  return p.links[index][toHbm].alpha_us;
}

/** per condition, the batches timed twice and how many the fit took from the second timing */
export function retimedOf(rt: NonNullable<Measurements['layout_retimed']>): Pick<RetimeResult, 'idle' | 'gemv'> {
  return {
    idle: { batches: rt.idle.length, from_second: rt.from_second.idle.length },
    gemv: rt.gemv.length ? { batches: rt.gemv.length, from_second: rt.from_second.gemv.length } : null,
  };
}
