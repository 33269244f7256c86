/**
 * The per-batch copy model of the hbm<->dram link, fitted to the calibration's layout batches
 * (bench/layout-batches.ts, timed by bench/layout-copy-bench.ts: FP16 blocks and their runs, and single
 * blocks at the model's quantized sizes). Per condition (GPU otherwise idle,
 * or the layer GEMV on the compute stream):
 *
 *   time = H2D copies x alpha_h2d + H2D bytes / beta_h2d + D2H copies x alpha_d2h + D2H bytes / beta_d2h
 *        + groups x per_group + direction changes x per_change
 *
 * by relative-error least squares (each batch weighted by 1 / its time) over the single-direction
 * batches and the mixed ones together, leaving out a batch timed far off the fit of the others
 * (COPY_BATCH_OUTLIER). The per-group and per-change costs are fitted non-negative: a term whose
 * least-squares value is negative is held at 0 and the others refitted (a negative one that the
 * profile clamped would leave the other overpriced). The alternating mixed batches each have 16 groups
 * and 15 changes, so they give those two costs only together; the batches ordered by direction
 * (layout-batches.ts ORDERED_GROUP_BLOCKS: 16 groups, 1 change) tell them apart. Calibrations stored
 * before those batches existed have only the alternating ones. A group is one executor copies() call (a layer's fetch or
 * demotion, with marks around it): its fixed cost is what the simulator charges once per copy batch
 * (gpu.copy_batch_us). Under compute the per-group cost is held at the idle fit's (the events around
 * a group do not cost more beside kernels; what does is each copy: alpha_under_compute_us).
 * Without any batch that changes direction the per-change term is left out (not fitted).
 *
 * The profile takes (applyCopyBatchFit): each direction's alpha_us and GBps from the idle fit,
 * alpha_under_compute_us and GBps_under_compute from the under-compute one, switch_us / switch_under_compute_us = the
 * per-change terms, gpu.copy_batch_us = the idle per-group cost (both fitted non-negative), the alphas clamped to 0, and
 * gpu.copy_under_compute "gemv" (copies priced by their time beside the layers' GEMVs). The
 * under-compute fit takes the batches timed beside the layer GEMV alone (`*_layout_gemv`), the
 * condition "gemv" prices; measurements taken before those existed have only the batches beside
 * attention + GEMV layers, whose fit averages the copies' excess over both kernels (the per-op fits of
 * the executor's timelines found the excess beside GEMVs, lab/notes/HIL-NOTES.md), and the fit then
 * takes those.
 */
import { lup, lusolve } from 'mathjs';
import type { HardwareProfile, LinkDirection } from '../../sim/hardware/profile.js';
import { adjacentBytes, layoutOptions, smallLabel } from '../bench/layout-batches.js';

/** one timed copy batch: copies and bytes per direction, groups (copies() calls), D2H <-> H2D changes */
export interface CopyBatchPoint {
  label: string;
  h2d: { runs: number; bytes: number };
  d2h: { runs: number; bytes: number };
  groups: number;
  switches: number;
  us: number;
}

export interface CopyDirectionTerms {
  alpha_us: number;
  us_per_byte: number;
  GBps: number;
}

export interface CopyBatchFit {
  h2d: CopyDirectionTerms;
  d2h: CopyDirectionTerms;
  /** fixed cost per group */
  group_us: number;
  /** true when group_us was given (held at another fit's), not fitted */
  group_us_fixed: boolean;
  /** cost per D2H <-> H2D change; absent when no batch changed direction (the term was not fitted) */
  switch_us?: number;
  /** the terms whose least-squares value was negative, held at 0 (the others refitted without them); absent when none */
  held_at_zero?: string[];
  /** the batches fitted */
  points: (CopyBatchPoint & { fit_us: number; residual: number })[];
  /** batches left out as further than COPY_BATCH_OUTLIER from the fit of the others (residuals against the fit); absent when none */
  dropped?: (CopyBatchPoint & { fit_us: number; residual: number })[];
  /** relative residuals, (fit - measured) / measured, over `points` */
  rms_residual: number;
  max_abs_residual: number;
}

export interface CopyBatchFits {
  idle: CopyBatchFit;
  /** per-group cost held at idle.group_us */
  under_compute: CopyBatchFit;
  /**
   * where under_compute is fitted to the batches beside the GEMV alone: the same fit over the batches
   * beside attention + GEMV layers, for comparison (not written into the profile)
   */
  beside_layers?: CopyBatchFit;
  /**
   * where the layout plan has an H2D batch from adjacent host slots (layout-batches.ts adjacentLabel):
   * per condition, how much less an H2D copy whose host slot follows the previous copy's took than the
   * single-block batch of the same size from slots 2-4 apart (the slots the fitted alpha was timed
   * from), the groups' cost taken out of both (adjacentH2d; a group's first copy follows none). Not
   * part of either fit.
   */
  adjacent?: AdjacentH2d;
}

export interface AdjacentH2d {
  bytes: number;
  idle_us: number;
  under_compute_us: number;
  /** the two batches per condition: copies, groups, us */
  batches: { condition: 'idle' | 'under compute'; spread: { copies: number; groups: number; us: number }; adjacent: { copies: number; groups: number; us: number } }[];
}

const TERMS = ['H2D copies', 'H2D bytes', 'D2H copies', 'D2H bytes', 'groups', 'direction changes'] as const;
/** the terms fitted non-negative (a negative cost per group or per direction change is not a cost) */
const NON_NEGATIVE = [4, 5];

function rowOf(p: CopyBatchPoint): number[] {
  return [p.h2d.runs, p.h2d.bytes, p.d2h.runs, p.d2h.bytes, p.groups, p.switches];
}

/**
 * Weighted least squares: minimizes sum (w_k (rows_k . x - y_k))^2 through the normal equations,
 * columns scaled to unit maximum first (copies and bytes differ by ~10^5), solved by LU with partial
 * pivoting (mathjs, as fit-linear.ts). A column the points do not separate from the others (a pivot
 * below 1e-10 of the largest diagonal entry) is an error naming it.
 */
export function weightedLeastSquares(rows: readonly number[][], y: readonly number[], w: readonly number[], names: readonly string[]): number[] {
  const n = names.length;
  const scale = names.map((_, i) => Math.max(...rows.map((r) => Math.abs(r[i]))));
  for (const [i, s] of scale.entries()) if (!(s > 0) || !Number.isFinite(s)) throw new Error(`no batch has any ${names[i]}: its term cannot be fitted`);
  const A = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const b = new Array<number>(n).fill(0);
  rows.forEach((r0, k) => {
    const r = r0.map((v, i) => v / scale[i]);
    const wk = w[k] * w[k];
    for (let i = 0; i < n; i++) {
      b[i] += wk * r[i] * y[k];
      for (let j = 0; j < n; j++) A[i][j] += wk * r[i] * r[j];
    }
  });
  const top = Math.max(...A.map((r, i) => Math.abs(r[i])));
  const f = lup(A);
  const U = f.U as unknown as number[][];
  for (let c = 0; c < n; c++) {
    if (!(Math.abs(U[c][c]) > 1e-10 * top)) {
      throw new Error(`the batches do not separate the ${names[c]} term from the others (the normal equations are singular there): vary it independently across the batches`);
    }
  }
  // (solving with a decomposition gives a mathjs matrix: valueOf() is its nested array)
  const x = lusolve(f, b).valueOf() as number[][];
  return names.map((_, i) => x[i][0] / scale[i]);
}

/**
 * A batch whose time is further than this (relative) from the fit of the others is left out of the
 * fit: the cost model is linear in copies, bytes, groups and changes, and the batches of a healthy
 * calibration sit within a few percent of it (rms 1-3% on H100 and H200 leases), while a batch timed
 * through a disturbance of the GPU or its link (one seen at 2.2x its fit) would pull every term.
 */
export const COPY_BATCH_OUTLIER = 0.2;

/**
 * The per-batch fit of one condition; `fixedGroupUs` holds the per-group cost (under compute: the
 * idle fit's). The batch furthest from the fit is left out and the rest refitted while it is more than
 * COPY_BATCH_OUTLIER off, at most a quarter of the batches, never below one batch per term and never
 * where the rest would give a non-positive time per byte that all of them did not (`dropped` lists
 * them, residuals against the final fit). Throws on too few batches, a term the batches do not
 * separate, or a non-positive time per byte (the time did not grow with the bytes).
 */
export function fitCopyBatches(points: readonly CopyBatchPoint[], fixedGroupUs?: number): CopyBatchFit {
  for (const p of points) {
    if (!(p.us > 0) || !Number.isFinite(p.us)) throw new Error(`copy batch "${p.label}": time ${p.us} us is not a positive number`);
  }
  const withSwitch = points.some((p) => p.switches > 0);
  const fixed = fixedGroupUs !== undefined;
  const keep = TERMS.map((_, i) => !(i === 4 && fixed) && !(i === 5 && !withSwitch));
  const names = TERMS.filter((_, i) => keep[i]);
  if (points.length < names.length) {
    throw new Error(`the per-batch copy fit has ${names.length} terms (${names.join(', ')}) and needs at least as many batches (got ${points.length})`);
  }
  // the per-group and per-change costs are fitted non-negative: where the least-squares value of one
  // is negative, it is held at 0 and the others refitted (the most negative first, then again)
  let held: number[] = [];
  const solve = (pts: readonly CopyBatchPoint[]): number[] => {
    held = [];
    for (;;) {
      const on = keep.map((k, i) => k && !held.includes(i));
      const rows = pts.map((p) => rowOf(p).filter((_, i) => on[i]));
      const y = pts.map((p) => p.us - (fixed ? fixedGroupUs * p.groups : 0));
      const s = weightedLeastSquares(rows, y, pts.map((p) => 1 / p.us), TERMS.filter((_, i) => on[i]));
      const v: number[] = [];
      let k = 0;
      for (let i = 0; i < TERMS.length; i++) v.push(on[i] ? s[k++] : i === 4 && fixed ? fixedGroupUs! : 0);
      const negative = NON_NEGATIVE.filter((i) => on[i] && v[i] < 0).sort((a, b) => v[a] - v[b]);
      if (negative.length === 0) return v;
      held = [...held, negative[0]];
    }
  };
  const residualOf = (p: CopyBatchPoint, v: number[]) => {
    const fit = rowOf(p).reduce((a, x, i) => a + x * v[i], 0);
    return { ...p, fit_us: fit, residual: (fit - p.us) / p.us };
  };
  let kept = [...points];
  let v = solve(kept);
  let heldKept = held;
  const most = Math.floor(points.length / 4);
  while (points.length - kept.length < most && kept.length > names.length) {
    const res = kept.map((p) => Math.abs(residualOf(p, v).residual));
    const worst = res.indexOf(Math.max(...res));
    if (!(res[worst] > COPY_BATCH_OUTLIER)) break;
    const rest = kept.filter((_, i) => i !== worst);
    let next: number[];
    try {
      next = solve(rest);
    } catch {
      // (the rest no longer separate a term: keep the batch)
      break;
    }
    // (nor is a batch left out where the rest would no longer grow with their bytes)
    if (!(next[1] > 0 && next[3] > 0) && v[1] > 0 && v[3] > 0) break;
    kept = rest;
    v = next;
    heldKept = held;
  }
  for (const [d, i] of [['H2D', 1], ['D2H', 3]] as const) {
    if (!(v[i] > 0)) throw new Error(`the per-batch copy fit gave a non-positive time per ${d} byte (${v[i].toExponential(3)} us): the batch times do not grow with their ${d} bytes (measurements too noisy)`);
  }
  const dir = (a: number, upb: number): CopyDirectionTerms => ({ alpha_us: a, us_per_byte: upb, GBps: 1 / upb / 1e3 });
  const pts = kept.map((p) => residualOf(p, v));
  const dropped = points.filter((p) => !kept.includes(p)).map((p) => residualOf(p, v));
  return {
    h2d: dir(v[0], v[1]),
    d2h: dir(v[2], v[3]),
    group_us: v[4],
    group_us_fixed: fixed,
    ...(withSwitch ? { switch_us: v[5] } : {}),
    ...(heldKept.length ? { held_at_zero: heldKept.map((i) => TERMS[i]) } : {}),
    points: pts,
    ...(dropped.length ? { dropped } : {}),
    rms_residual: Math.sqrt(pts.reduce((a, p) => a + p.residual ** 2, 0) / pts.length),
    max_abs_residual: Math.max(...pts.map((p) => Math.abs(p.residual))),
  };
}

/** what the fit reads of a layout bench point (bench/layout-copy-bench.ts LayoutPoint) */
export interface LayoutBatchTimed {
  direction: 'h2d' | 'd2h' | 'mixed';
  label: string;
  split: { h2d: { runs: number; bytes: number }; d2h: { runs: number; bytes: number } };
  switches: number;
  us: number;
  /** copies() calls of the batch; absent in measurements taken before it was recorded: the plan's layers per batch (twice for mixed) */
  groups?: number;
}

export function copyBatchPoints(points: readonly LayoutBatchTimed[]): CopyBatchPoint[] {
  const layers = layoutOptions(1, 1).layersPerBatch;
  return points.map((p) => ({
    label: `${p.direction} ${p.label}`,
    h2d: { runs: p.split.h2d.runs, bytes: p.split.h2d.bytes },
    d2h: { runs: p.split.d2h.runs, bytes: p.split.d2h.bytes },
    groups: p.groups ?? (p.direction === 'mixed' ? 2 * layers : layers),
    switches: p.switches,
    us: p.us,
  }));
}

/** the layout measurements of a calibration (measure.ts Measurements, or a stored PROFILE.fit.json's) */
export interface LayoutMeasurements {
  h2d_layout: readonly LayoutBatchTimed[];
  d2h_layout: readonly LayoutBatchTimed[];
  mixed_layout?: readonly LayoutBatchTimed[];
  h2d_layout_gemv?: readonly LayoutBatchTimed[];
  d2h_layout_gemv?: readonly LayoutBatchTimed[];
  mixed_layout_gemv?: readonly LayoutBatchTimed[];
  h2d_layout_idle: readonly LayoutBatchTimed[];
  d2h_layout_idle: readonly LayoutBatchTimed[];
  mixed_layout_idle?: readonly LayoutBatchTimed[];
}

/** which batches the under-compute fit takes: beside the layer GEMV alone where measured, else beside attention + GEMV layers */
export function underComputeBatches(m: LayoutMeasurements): 'gemv' | 'attention + gemv' {
  return m.h2d_layout_gemv?.length && m.d2h_layout_gemv?.length ? 'gemv' : 'attention + gemv';
}

/** both conditions: idle first, then under compute (underComputeBatches) with the idle per-group cost */
export function fitLayoutCopyBatches(m: LayoutMeasurements): CopyBatchFits {
  const busy = underComputeBatches(m) === 'gemv' ? '_gemv' : '';
  // (the batch from adjacent host slots is not fitted: it gives the adjacent copies' price, adjacentH2d)
  const of = (sfx: '' | '_idle' | '_gemv') => copyBatchPoints(notAdjacent([...(m[`h2d_layout${sfx}`] ?? []), ...(m[`d2h_layout${sfx}`] ?? []), ...(m[`mixed_layout${sfx}`] ?? [])]));
  let idle: CopyBatchFit;
  try {
    idle = fitCopyBatches(of('_idle'));
  } catch (e) {
    throw new Error(`layout batches, GPU idle: ${(e as Error).message}`);
  }
  const adjacent = adjacentH2d(m, idle.group_us);
  const withAdjacent = <T extends CopyBatchFits>(f: T): T => (adjacent ? { ...f, adjacent } : f);
  try {
    const under_compute = fitCopyBatches(of(busy), idle.group_us);
    if (!busy || !m.h2d_layout.length || !m.d2h_layout.length) return withAdjacent({ idle, under_compute });
    // (for comparison only: batches that do not fit leave it out, not the fit the profile takes)
    let beside_layers: CopyBatchFit | undefined;
    try {
      beside_layers = fitCopyBatches(of(''), idle.group_us);
    } catch {
      beside_layers = undefined;
    }
    return withAdjacent(beside_layers ? { idle, under_compute, beside_layers } : { idle, under_compute });
  } catch (e) {
    throw new Error(`layout batches under compute: ${(e as Error).message}`);
  }
}

/** the layout batches but the one from adjacent host slots (which no fit of alpha and beta takes) */
export function notAdjacent<P extends { label: string }>(points: readonly P[]): P[] {
  return points.filter((p) => !Number.isFinite(adjacentBytes(p.label)));
}

/**
 * The adjacent-slot H2D batch against the single-block batch of its size, idle and under compute (the
 * batches fitCopyBatches takes for each), `groupUs` the fitted cost per group (held the same under
 * compute): the spread batch's time per copy less its groups' cost, times the adjacent batch's copies,
 * plus its groups' cost, less its time, over its adjacent copies (those after a group's first).
 * Undefined where either condition lacks either batch, or the adjacent batch has no adjacent copy.
 */
export function adjacentH2d(m: LayoutMeasurements, groupUs: number): AdjacentH2d | undefined {
  const busy = underComputeBatches(m) === 'gemv' ? m.h2d_layout_gemv! : m.h2d_layout;
  const adj = m.h2d_layout_idle.find((p) => Number.isFinite(adjacentBytes(p.label)));
  if (!adj) return undefined;
  const bytes = adjacentBytes(adj.label);
  const batches: AdjacentH2d['batches'] = [];
  const layers = layoutOptions(1, 1).layersPerBatch;
  for (const [condition, pts] of [['idle', m.h2d_layout_idle], ['under compute', busy]] as const) {
    const a = pts.find((p) => adjacentBytes(p.label) === bytes);
    const s = pts.find((p) => p.label === smallLabel(bytes));
    if (!a || !s) return undefined;
    batches.push({ condition, spread: { copies: s.split.h2d.runs, groups: s.groups ?? layers, us: s.us }, adjacent: { copies: a.split.h2d.runs, groups: a.groups ?? layers, us: a.us } });
  }
  if (batches.some((b) => !(b.adjacent.copies > b.adjacent.groups) || !(b.spread.copies > 0))) return undefined;
  const off = (b: AdjacentH2d['batches'][number]) => {
    const perCopy = (b.spread.us - b.spread.groups * groupUs) / b.spread.copies;
    return (b.adjacent.copies * perCopy + b.adjacent.groups * groupUs - b.adjacent.us) / (b.adjacent.copies - b.adjacent.groups);
  };
  return { bytes, idle_us: off(batches[0]), under_compute_us: off(batches[1]), batches };
}

/** rounded to 0.01 */
export const r2 = (x: number) => Math.round(x * 100) / 100;
/** a fraction as a percentage with one decimal */
export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/**
 * The profile's link from its first tier (HBM): its index and which of its directions leaves HBM
 * (toHost) and which enters it (toHbm).
 */
export function hbmLink(p: HardwareProfile): { index: number; toHost: 'a_to_b' | 'b_to_a'; toHbm: 'a_to_b' | 'b_to_a' } {
  const hbm = p.tiers[0].name;
  const index = p.links.findIndex((l) => l.a === hbm || l.b === hbm);
  if (index < 0) throw new Error(`profile ${p.name} has no link from ${hbm}`);
  return p.links[index].a === hbm ? { index, toHost: 'a_to_b', toHbm: 'b_to_a' } : { index, toHost: 'b_to_a', toHbm: 'a_to_b' };
}

/** rounded to 0.01 and clamped to 0, with a note when clamped */
function nonNegative(x: number): { v: number; note: string } {
  return x < 0 ? { v: 0, note: ` (${r2(x)}: clamped to 0)` } : { v: r2(x), note: '' };
}

/**
 * Writes the per-batch model into a profile (in place): the hbm<->dram link's alpha_us, GBps,
 * alpha_under_compute_us, GBps_under_compute (where that fit's beta is positive), switch_us,
 * switch_under_compute_us per direction, the H2D direction's adjacent_us (where the plan timed adjacent host slots), gpu.copy_batch_us and
 * gpu.copy_under_compute "gemv", each with a source starting `by` (`what`: the batches, per
 * direction). Returns the link's index.
 */
export function applyCopyBatchFit(p: HardwareProfile, f: CopyBatchFits, by: string, what: { idle: string; under_compute: string } = { idle: 'layout copy batches, GPU idle', under_compute: 'layout copy batches under compute' }): number {
  const { index: li, toHost, toHbm } = hbmLink(p);
  const L = p.links[li];
  const fitText = (x: CopyBatchFit) =>
    `time = H2D copies x alpha_h2d + H2D bytes / beta_h2d + the same for D2H + groups x per_group${x.switch_us !== undefined ? ' + direction changes x per_change' : ''}${x.group_us_fixed ? ' (per_group held at the idle fit\'s)' : ''} over ${x.points.length} batches, relative-error least squares${x.held_at_zero?.length ? ` with ${x.held_at_zero.map((t) => `per ${t === 'groups' ? 'group' : 'change'}`).join(' and ')} held at 0 (fitted negative)` : ''} (rms residual ${pct(x.rms_residual)}, max ${pct(x.max_abs_residual)})${x.dropped?.length ? `; left out as more than ${pct(COPY_BATCH_OUTLIER)} off the fit of the others: ${x.dropped.map((p) => `"${p.label}" ${r2(p.us)} us against ${r2(p.fit_us)}`).join(', ')}` : ''}`;
  const src = p.sources;
  const group = nonNegative(f.idle.group_us);
  for (const [d, k, name] of [[toHost, 'd2h', 'D2H'], [toHbm, 'h2d', 'H2D']] as const) {
    const alpha = nonNegative(f.idle[k].alpha_us);
    const busy = nonNegative(f.under_compute[k].alpha_us);
    const next: LinkDirection = { alpha_us: alpha.v, GBps: r2(f.idle[k].GBps), alpha_under_compute_us: busy.v };
    src[`links[${li}].${d}.alpha_us`] = `${by}: ${what.idle}: ${fitText(f.idle)}; its ${name} alpha${alpha.note}`;
    src[`links[${li}].${d}.GBps`] = `${by}: the same fit's ${name} beta`;
    const layers = f.beside_layers ? `; for comparison, the same batches beside attention + GEMV layers: alpha ${r2(f.beside_layers[k].alpha_us)} us, ${r2(f.beside_layers[k].GBps)} GB/s` : '';
    src[`links[${li}].${d}.alpha_under_compute_us`] = `${by}: ${what.under_compute}: ${fitText(f.under_compute)}; its ${name} alpha${busy.note}${layers}`;
    const busyGBps = r2(f.under_compute[k].GBps);
    if (Number.isFinite(busyGBps) && busyGBps > 0) {
      next.GBps_under_compute = busyGBps;
      src[`links[${li}].${d}.GBps_under_compute`] = `${by}: the same under-compute fit's ${name} beta`;
    } else {
      // not written: copies beside GEMVs move their bytes at GBps; the alpha's source says why
      delete src[`links[${li}].${d}.GBps_under_compute`];
      src[`links[${li}].${d}.alpha_under_compute_us`] += ` (its beta, ${busyGBps} GB/s, is not positive: GBps_under_compute left out, the idle GBps used)`;
    }
    for (const [key, x, cond] of [['switch_us', f.idle, 'idle'], ['switch_under_compute_us', f.under_compute, 'under compute']] as const) {
      if (x.switch_us === undefined) continue;
      const s = nonNegative(x.switch_us);
      next[key] = s.v;
      src[`links[${li}].${d}.${key}`] = `${by}: the per-change term of the ${cond} per-batch copy fit (see alpha_${cond === 'idle' ? 'us' : 'under_compute_us'})${s.note}`;
    }
    if (k === 'h2d' && f.adjacent) {
      const a = f.adjacent;
      // (at most the direction's alpha: an adjacent copy costs no less than its bytes)
      const v = Math.round(Math.min(Math.max(0, a.idle_us), next.alpha_us) * 1000) / 1000;
      next.adjacent_us = v;
      const [bi, bc] = a.batches;
      src[`links[${li}].${d}.adjacent_us`] = `${by}: ${a.bytes}-byte blocks H2D, ${bi.adjacent.copies} copies in ${bi.adjacent.groups} groups from adjacent host slots against ${bi.spread.copies} from slots 2-4 apart: idle ${r2(bi.adjacent.us)} against ${r2(bi.spread.us)} us, ${a.idle_us.toFixed(3)} us less per adjacent copy${a.idle_us < 0 ? ' (negative: clamped to 0)' : a.idle_us > next.alpha_us ? ` (held at the alpha, ${next.alpha_us} us)` : ''}; under compute ${r2(bc.adjacent.us)} against ${r2(bc.spread.us)} us, ${a.under_compute_us.toFixed(3)} us less (not priced: a copy beside the GEMVs pays its slowdown as any other)`;
    } else delete src[`links[${li}].${d}.adjacent_us`];
    L[d] = next;
  }
  p.gpu.copy_batch_us = group.v;
  src['gpu.copy_batch_us'] = `${by}: the per-group term of the idle per-batch copy fit (links[${li}].${toHbm}.alpha_us: ${what.idle}), charged once per memory-stream copy batch into or out of HBM${group.note}`;
  p.gpu.copy_under_compute = 'gemv';
  src['gpu.copy_under_compute'] = `${by}: "gemv", the pricing the per-batch copy fit goes with (copies run at alpha_us and their bytes at GBps, beside the layers' GEMVs at alpha_under_compute_us and GBps_under_compute)`;
  return li;
}
