/**
 * `kvtier hil calibrate`: run the microbenchmarks (measure.ts) on a backend, fit them
 * (fit-linear.ts) and write a kvtier-hardware/v1 profile that `kvtier run` accepts: the base
 * preset with every measured number replaced and sourced. What the fits mean for the simulator:
 * - gpu.kernel_launch_us, gpu.hbm_bandwidth_GBps: one least-squares line through attention (at the
 *   model's shape, over contexts and precisions) and GEMV (the model's layer and LM-head shapes)
 *   times vs bytes read: the generic roofline (other kernels: (de)quantization).
 * - gpu.linear_launch_us, gpu.linear_GBps: a line through the GEMV times alone (relative error).
 * - gpu.attention_curve: attention time as the executor runs it (a chain of layers: marks, attention,
 *   GEMV; per layer, minus the layer GEMV as the fitted linear line predicts it, so that the simulated
 *   attention + linear is the measured chain), per context, FP16; the simulator interpolates it.
 *   gpu.attention_launch_us / attention_GBps:
 *   a line through the same points (the fallback; its residuals show why the curve is needed).
 * - gpu.attention_kernels: each dispatched attention kernel alone (FP16, INT8, INT4, INT2 throughout,
 *   and the per-block table kernel) vs context; a layer whose blocks are not all FP16 is simulated as
 *   the FP16 curve plus its kernel's measured difference to FP16.
 * - the nvme link's read direction: alpha per request and beta of file reads in the executor's own
 *   pattern (file-batches.ts: a layer's runs handed to the file tier as one readBatch and joined, with
 *   the executor's I/O thread count), time = requests x alpha + bytes / beta per batch, plain least
 *   squares (the layer batches that make up a step weigh most), and request_us: requests below a
 *   block's slot timed by size. `compare` re-measures both right before each NVMe policy
 *   (applyFileReadFit). Its write direction: writes in the same pattern (a layer's runs started at once
 *   and joined), the same form; gpu.file_batch_host_us: the host's time around a read batch beyond
 *   the batch's own.
 * - links hbm<->dram and gpu.copy_batch_us: pinned copies in the executor's own layout
 *   (bench/layout-batches.ts: H2D runs of 1..16 blocks from adjacent host slots into the staging ring, D2H
 *   slab slots to host slots, batches alternating a demotion and a promotion, and single blocks at the
 *   model's quantized sizes both ways), fitted per batch
 *   (fit-copy-batches.ts): time = copies x alpha + bytes / beta per direction + groups x per_group +
 *   direction changes x per_change, twice: with the GPU otherwise idle (alpha_us, GBps, switch_us,
 *   gpu.copy_batch_us = per_group) and with the layer GEMV running back to back on the compute stream
 *   (alpha_under_compute_us, switch_under_compute_us; per_group held at the idle one; the same batches
 *   beside attention + GEMV layers set the kernels' slowdown under copies), and
 *   gpu.copy_under_compute "gemv". Should that fit fail, the per-direction fits (time = copies x alpha +
 *   bytes / beta, each direction apart) and the direction-change medians set the link, copies priced
 *   when they start. Those, and isolated and scattered in-situ copy fits, are kept in the fits for comparison.
 * - links dram<->nvme and the nvme tier's bandwidth: alpha/beta of one file-tier request vs size.
 * Residuals go into the description, a side file (<out>.fit.json) and the log.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { ATTENTION_KERNELS, type GpuSpec, type HardwareProfile, hasHostClock, MIXED_SPARSE_CHANGE_SHARE } from '../../sim/hardware/profile.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import type { ModelSpec } from '../../sim/models/model.js';
import type { AttentionOptions, BackendKind, ResolvedAttentionOptions } from '../addon-types.js';
import { openBackend } from '../backend.js';
import { det, lusolve, multiply, transpose } from 'mathjs';
import { fitAlphaBeta, fitPerRequest, type LinearFit } from './fit-linear.js';
import { applyCopyBatchFit, COPY_BATCH_OUTLIER, type CopyBatchFits, fitLayoutCopyBatches, hbmLink, notAdjacent, pct, r2, underComputeBatches } from './fit-copy-batches.js';
import { isSmallLabel } from '../bench/layout-batches.js';
import type { LayoutPoint } from '../bench/layout-copy-bench.js';
import type { ConvertPoint } from '../bench/convert-bench.js';
import type { IssuePoint } from '../bench/issue-bench.js';
import type { QueueDepthResult } from '../bench/queue-depth-bench.js';
import type { HostConvertPoint } from '../bench/host-convert-bench.js';
import { fitSpread, type SpreadFit, type SpreadPoint } from '../bench/spread-bench.js';
import { convertCostFromPlan, copyCostFromPlan, type PlanIssueResult } from '../bench/plan-issue-bench.js';
import type { FileBatchPoint } from './file-batches.js';
import { tailWaveOf, type TailWaveResult, withoutTailWave } from './fit-tail-wave.js';
import { type CalibrationPoints, measureAll, type Measurements, pacedIssueCosts } from './measure.js';
import { interpolate, linearTimeUs } from '../../sim/roofline.js';
import { tailWaveUs } from '../../sim/attention-waves.js';
import { median } from '../timing/median.js';

export interface CalibrateOptions {
  backend: BackendKind | 'auto';
  base: string;
  model: string;
  blockTokens?: number;
  groupSize?: number;
  quick?: boolean;
  fileDir?: string;
  /** I/O threads of the file tier, as the HIL executor will run (default DEFAULT_IO_THREADS) */
  ioThreads?: number;
  /** date written into the sources (default today, UTC) */
  date?: string;
  /** options of every attention call timed (`kvtier hil options`; absent: the defaults) */
  attention?: AttentionOptions;
  /** the contexts the context-dependent benchmarks are taken at (measure.ts; default: its standard lists) */
  points?: CalibrationPoints;
  log?: (s: string) => void;
  /** measurements done of all (measure.ts measurementCount) */
  onProgress?: (done: number, total: number, label?: string) => void;
}

export interface CalibrationFits {
  kernels: LinearFit;
  /** attention in situ (chain), and GEMV alone */
  attention: LinearFit;
  linear: LinearFit;
  /** file reads in the executor's pattern (a layer's runs as one batch): a fixed time per batch, alpha per request, beta (relative-error least squares, fitFileReadBatches) */
  file_read_batch?: FileReadFit;
  /**
   * file reads of requests smaller than a slot (the model's quantized blocks), [request bytes, us per
   * request] ascending, ending at the slot with file_read_batch's line (fileRequestCurve): the NVMe read
   * direction's request_us (absent without those measurements)
   */
  file_read_request_us?: [number, number][];
  /**
   * per direction of the hbm link, the time per copy against the doublings of its host-slot distance
   * (bench/spread-bench.ts): the slopes beside the layer GEMV and idle and spread_us, their mean (absent
   * without spread measurements, or where the fit failed: spread_error)
   */
  spread?: { h2d: SpreadFit; d2h: SpreadFit };
  spread_error?: string;
  /**
   * file writes in the executor's pattern (a layer's runs written at once), the same form; kept for
   * comparison with the one-request write fit the profile takes (absent without those measurements)
   */
  file_write_batch?: LinearFit;
  /**
   * pinned copies in the executor's layout, per batch (runs x alpha + bytes / beta), while kernels run
   * on the compute stream: the link's alpha_under_compute_us
   */
  h2d_layout: LinearFit;
  d2h_layout: LinearFit;
  /** the same with the GPU otherwise idle: the link's alpha_us and GBps */
  h2d_layout_idle: LinearFit;
  d2h_layout_idle: LinearFit;
  /**
   * the cost of one D2H <-> H2D change on the memory stream: per mixed batch, its time beyond what the
   * single-direction fits of the same condition predict for its copies, over its changes; `us` the
   * median over the batches (absent without mixed batches)
   */
  direction_switch?: DirectionSwitchFit;
  /** the attention kernel's tail wave (fit-tail-wave.ts): its rule and fit, or why it is not priced */
  tail_wave?: TailWaveResult;
  /**
   * the per-batch copy model (fit-copy-batches.ts) over every layout batch of a condition: per
   * direction alpha and beta, a cost per group and per direction change; what the hbm link, switch
   * costs and gpu.copy_batch_us are written from (absent when the fit failed: then the per-direction
   * layout fits and direction_switch are)
   */
  copy_batches?: CopyBatchFits;
  /** why the per-batch copy fit failed, when it did (the profile then has the per-direction fits) */
  copy_batches_error?: string;
  /** pinned copies in situ from scattered host slots (HBM busy): for comparison */
  h2d_in_situ: LinearFit;
  d2h_in_situ: LinearFit;
  h2d: LinearFit;
  d2h: LinearFit;
  file_read: LinearFit;
  file_write: LinearFit;
}

export interface CalibrationResult {
  profile: HardwareProfile;
  fits: CalibrationFits;
  measurements: Measurements;
  device: string;
  /** the attention options the attention rows were timed with (every one, defaults included) */
  attention_options: ResolvedAttentionOptions;
  /** what in the measurements looks disturbed (calibrationWarnings), for the log and a validation's notes */
  warnings: string[];
}

const layoutWhat = { H2D: `runs of 1..16 blocks from adjacent host slots into the staging ring`, D2H: `blocks from HBM slab slots to their host slots (single blocks and runs)` };

/** tokens per block of the calibration's blocks unless told otherwise */
export const CALIBRATION_BLOCK_TOKENS = 16;

export async function calibrate(o: CalibrateOptions): Promise<CalibrationResult> {
  const log = o.log ?? (() => {});
  const model = loadModel(o.model);
  // (an unknown base profile is an error before any benchmark runs)
  loadHardware(o.base);
  const b = openBackend(o.backend, 0, o.attention);
  let attentionOptions: ResolvedAttentionOptions;
  let m: Measurements;
  let device: string;
  let memBytes: number;
  const kind = b.kind;
  try {
    attentionOptions = b.attentionOptions();
    const info = b.info();
    device = info.name;
    memBytes = info.totalMemBytes;
    log(`calibrating on ${device} (${b.kind} backend)`);
    m = await measureAll(b, { model, blockTokens: o.blockTokens ?? CALIBRATION_BLOCK_TOKENS, groupSize: o.groupSize ?? Math.min(128, model.head_dim), quick: o.quick ?? false, fileDir: o.fileDir ?? tmpdir(), ioThreads: o.ioThreads, ...(o.points ? { points: o.points } : {}), ...(o.onProgress ? { onProgress: o.onProgress } : {}), plan: { model: o.model, hardware: o.base } }, log);
    m.multiprocessors = info.multiprocessors;
    m.memory_bytes = memBytes;
    m.date = o.date ?? new Date().toISOString().slice(0, 10);
  } finally {
    b.close();
  }
  return buildCalibration({ m, base: o.base, model, device, kind, attentionOptions, blockTokens: o.blockTokens, date: o.date, log });
}

/** what a profile is built from: a calibration's measurements and where they were taken */
export interface CalibrationInput {
  m: Measurements;
  /** the base profile (name or file) whose unmeasured numbers the profile keeps */
  base: string;
  model: ModelSpec;
  device: string;
  kind: BackendKind;
  attentionOptions: ResolvedAttentionOptions;
  /** tokens per block the chains were timed at (default CALIBRATION_BLOCK_TOKENS) */
  blockTokens?: number;
  /** date written into the sources (default the measurements' date, else today, UTC) */
  date?: string;
  log?: (s: string) => void;
}

/**
 * The profile, fits and warnings of a calibration from its measurements alone (no backend): what
 * `calibrate` returns after measuring, and what a calibration whose copy batches were timed again
 * (retime-copies.ts) is rebuilt with.
 */
export function buildCalibration(x: CalibrationInput): CalibrationResult {
  const { m, device, kind, model } = x;
  const log = x.log ?? (() => {});
  const base = loadHardware(x.base);
  const o = { blockTokens: x.blockTokens, date: x.date };
  const attentionOptions = x.attentionOptions;
  const memBytes = m.memory_bytes ?? 0;
  const linear = fitAlphaBeta(linearPoints(m), false);
  const { waves, curve, layerLinearUs, kernelCurves } = attentionFits(m, o.blockTokens ?? CALIBRATION_BLOCK_TOKENS, { ...base.gpu, linear_launch_us: r2(linear.alpha_us), linear_GBps: r2(linear.GBps) }, model);
  const fits: CalibrationFits = {
    // the generic kernel line over the FP16, INT8 and INT4 attention and the GEMVs (the INT2 and table
    // kernels are measured for gpu.attention_kernels only)
    kernels: fitAlphaBeta(m.kernels.filter((k) => k.precision !== 'int2' && !k.precision?.startsWith('mixed')), false),
    attention: fitAlphaBeta(curve.map((x) => ({ bytes: x.bytes, us: x.us, label: `attention in situ ${x.tokens}` })), true),
    linear,
    h2d_in_situ: fitAlphaBeta(m.h2d_in_situ, true),
    d2h_in_situ: fitAlphaBeta(m.d2h_in_situ, true),
    // (the batch from adjacent host slots prices adjacent copies only: fit-copy-batches.ts adjacentH2d)
    h2d_layout: fitLayout(notAdjacent(m.h2d_layout)),
    d2h_layout: fitLayout(notAdjacent(m.d2h_layout)),
    h2d_layout_idle: fitLayout(notAdjacent(m.h2d_layout_idle)),
    d2h_layout_idle: fitLayout(notAdjacent(m.d2h_layout_idle)),
    file_read_batch: m.file_read_batch.length >= 2 ? fitFileReadBatches(m.file_read_batch) : undefined,
    file_write_batch: (m.file_write_batch?.length ?? 0) >= 2 ? fitFileBatches(m.file_write_batch!) : undefined,
    h2d: fitAlphaBeta(m.h2d, true),
    d2h: fitAlphaBeta(m.d2h, true),
    file_read: fitAlphaBeta(m.file_read, true),
    file_write: fitAlphaBeta(m.file_write, true),
  };
  if (fits.file_read_batch && m.file_batch_info) fits.file_read_request_us = fileRequestCurve(m.file_read_batch, fits.file_read_batch, m.file_batch_info.block_bytes);
  fits.direction_switch = fitDirectionSwitch(m.mixed_layout ?? [], m.mixed_layout_idle ?? [], fits);
  fits.tail_wave = waves;
  const date = o.date ?? m.date ?? new Date().toISOString().slice(0, 10);
  const by = `measured by kvtier hil calibrate on ${device} ${date}`;
  const p: HardwareProfile = structuredClone(base);
  const src: Record<string, string> = {};
  for (const [k, v] of Object.entries(base.sources)) src[k] = `from base profile ${base.name} (not measured): ${v}`;
  p.sources = src; // (applyFileReadFit writes through p.sources)
  p.name = `hil-calibrated-${device.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
  p.gpu.name = device;
  p.gpu.kernel_launch_us = r2(fits.kernels.alpha_us);
  p.gpu.hbm_bandwidth_GBps = r2(fits.kernels.GBps);
  src['gpu.kernel_launch_us'] = `${by}: intercept of a least-squares line through ${m.kernels.length} attention and GEMV times vs bytes read (rms residual ${pct(fits.kernels.rms_residual)}, max ${pct(fits.kernels.max_abs_residual)})`;
  src['gpu.hbm_bandwidth_GBps'] = `${by}: slope of the same line (bytes read per second by the attention and GEMV kernels)`;
  p.gpu.linear_launch_us = r2(fits.linear.alpha_us);
  p.gpu.linear_GBps = r2(fits.linear.GBps);
  src['gpu.linear_launch_us'] = `${by}: intercept of a least-squares line through ${fits.linear.points.length} GEMV times vs weight bytes (${fits.linear.points.map((x) => `${x.label} ${r2(x.us)} us`).join(', ')}; plain least squares: the large layer and LM-head GEMVs weigh most) (rms residual ${pct(fits.linear.rms_residual)}, max ${pct(fits.linear.max_abs_residual)})`;
  src['gpu.linear_GBps'] = `${by}: slope of the same line`;
  p.gpu.attention_launch_us = r2(fits.attention.alpha_us);
  p.gpu.attention_GBps = r2(fits.attention.GBps);
  src['gpu.attention_launch_us'] = `${by}: intercept of a relative-error line through attention in situ (FP16) vs KV bytes (rms residual ${pct(fits.attention.rms_residual)}, max ${pct(fits.attention.max_abs_residual)}); used only without attention_curve`;
  src['gpu.attention_GBps'] = `${by}: slope of the same line`;
  p.gpu.attention_curve = curve.map((x) => ({ tokens: x.tokens, us: r2(x.us) }));
  if (waves.waves) {
    p.gpu.attention_waves = waves.waves;
    const f = waves.fit!;
    src['gpu.attention_waves'] = `${by}: the FP16 attention kernel's split rule as its dispatch planned every context timed around the curve's points (${waves.rule!.slots} slots: resident blocks x SMs; ${waves.rule!.blocks_per_split} blocks per split, ${waves.rule!.warps_per_head} warps per KV head; the kernels whose plans in the layer chains follow it: ${waves.waves.kernels.join(', ')}), and the time per chunk of a tail-wave warp fitted over those ${f.contexts} contexts of ${f.points} points (each point's level and slope apart): rms residual ${r2(f.rms_without_us)} us without the tail wave, ${r2(f.rms_with_us)} with it (max ${r2(f.max_with_us)} us)`;
  } else {
    // (nothing of a base profile's tail wave holds for this curve)
    delete p.gpu.attention_waves;
    delete src['gpu.attention_waves'];
  }
  const phased = m.attention_in_situ.filter((x) => x.phases?.length);
  const phaseText = phased.length
    ? `; from ${phased[0].tokens} tokens on, each point the mean over the contexts ${phased[0].phases!.join(', ')} blocks around it (the kernel's time follows where a context falls in its split of the context; at the contexts themselves: ${phased.map((x) => `${x.tokens} ${r2(x.us_at_context!)}`).join(', ')} us beyond the GEMV)${waves.waves ? `, less the tail wave's time as gpu.attention_waves prices it (the mean over the same contexts)` : ''}`
    : '';
  src['gpu.attention_curve'] = `${by}: attention in situ, FP16 KV, per context: chains of layers (marks, attention, marks, layer GEMV) as the HIL executor issues them, time per layer minus the layer GEMV as gpu.linear_* predicts it (${r2(layerLinearUs)} us; ${Number.isFinite(layerGemvInChainsUs(m)) ? `in the chains without the attention ${r2(layerGemvInChainsUs(m))} us, ` : ''}measured alone ${r2(layerGemvUs(m))} us), so that attention + linear reproduces the measured chain (launch gaps and cold L2 included)${phaseText}`;
  if (kernelCurves) {
    p.gpu.attention_kernels = kernelCurves;
    const tables = `one precision throughout: ${Object.keys(kernelCurves).filter((k) => !k.startsWith('mixed')).join(', ')}; 'mixed': the per-block table kernel over FP16 sink and recent blocks with INT4 between; 'mixed_sparse': INT2 and INT8 in runs of ${Math.round(1 / MIXED_SPARSE_CHANGE_SHARE)} blocks; 'mixed_interleaved': INT2 and INT8 in turn; 'mixed_kinds': 'mixed_sparse' with one INT4 and one INT3 block`;
    src['gpu.attention_kernels'] = m.kernels_in_situ?.length
      ? `${by}: each attention kernel in situ (${tables}) vs context: the layer chains of gpu.attention_curve with that kernel's table, time per layer minus the layer GEMV alone; the simulator adds a kernel's difference to FP16 at the same context to gpu.attention_curve. (Alone, back to back, a kernel rereads its KV from L2 at short contexts: those times stay in the calibration's measurements.)`
      : `${by}: each attention kernel alone (${tables}) vs context, median of timed trials behind a gate; the simulator adds a kernel's difference to FP16 at the same context to gpu.attention_curve`;
  }
  if (kind === 'cuda' && !(memBytes > 0)) throw new Error(`the measurements of ${device} do not give its memory (memory_bytes): the profile's HBM capacity would be the base profile's`);
  if (kind === 'cuda') {
    p.tiers[0].capacity_GiB = r2(memBytes / 1024 ** 3);
    src['tiers[0].capacity_GiB'] = `${by}: total device memory`;
    p.tiers[0].read_GBps = r2(m.d2d_GBps);
    p.tiers[0].write_GBps = r2(m.d2d_GBps);
    src['tiers[0].read_GBps'] = `${by}: device-to-device copy, bytes read + written per second`;
    src['tiers[0].write_GBps'] = src['tiers[0].read_GBps'];
  }
  if (kind === 'cuda') {
    for (const [key, pts, what] of [['kernel_slowdown_under_h2d', m.h2d_layout, 'H2D'], ['kernel_slowdown_under_d2h', m.d2h_layout, 'D2H']] as const) {
      const k = kernelSlowdown(pts);
      if (!k) {
        log(`warning: gpu.${key} not set: no ${what} layout batch ran wholly under compute`);
        continue;
      }
      p.gpu[key] = Math.round(Math.min(1, Math.max(0, k.fraction)) * 1000) / 1000;
      src[`gpu.${key}`] = `${by}: the ${what} batches of the executor-layout copy bench that ran wholly under attention + GEMV layers (${k.batches} batches, ${r2(k.copyUs)} us of copies): the layers' time beyond the same layers behind the same gate without copies, summed, over the copy time summed = ${(100 * k.fraction).toFixed(2)}%${k.fraction < 0 ? ' (clamped to 0)' : k.fraction > 1 ? ' (clamped to 1)' : ''}`;
    }
  }
  applyConvertKernels(p, m.convert_kernels ?? [], by, log);
  // (the host backend runs the ops on its own threads: what its issue path costs is not a driver call's)
  if (kind === 'cuda') applyIssueCosts(p, m.issue ?? [], by, m.plan_issue, m.plan_convert, m.plan_launch ?? (m.plan_launch_error !== undefined ? { error: m.plan_launch_error } : undefined));
  if (kind === 'cuda' && m.host_probe && p.sources['gpu.issue_copy_us'] !== undefined) {
    p.sources['gpu.issue_copy_us'] += `; the host issue probe (timing/host-issue-probe.ts) read ${r2(m.host_probe.copy_us)} us per copy right after`;
  }
  // (both act on the host clock: only where the issue costs were written)
  if (kind === 'cuda' && hasHostClock(p.gpu)) applyLaunchQueue(p, m.launch_queue, by);
  if (kind === 'cuda' && hasHostClock(p.gpu)) applyHostConvert(p, m.host_convert, by);
  if (kind === 'cuda' && hasHostClock(p.gpu)) applyFileBatchHost(p, m.file_read_batch, by);
  // (p is a copy of base: the same links; an error names the base profile)
  const { index: pcie, toHost, toHbm } = hbmLink(base);
  const L = p.links[pcie];
  const li = m.layout_info;
  try {
    fits.copy_batches = fitLayoutCopyBatches(m);
  } catch (e) {
    fits.copy_batches_error = (e as Error).message;
    log(`warning: the per-batch copy fit failed (${fits.copy_batches_error}); the hbm link keeps the per-direction layout fits, copies priced when they start`);
  }
  if (fits.copy_batches) {
    const small = li.small_bytes?.length ? `; single quantized blocks of ${li.small_bytes.join(', ')} bytes each way` : '';
    const batches = `pinned copies in the HIL executor's layout (${li.block_bytes}-byte blocks; H2D ${layoutWhat.H2D}; D2H ${layoutWhat.D2H}${small}; batches whose groups alternate a demotion and a promotion of n single blocks; back to back on the memory stream with marks per group (a layer's copies() call)`;
    const beside = underComputeBatches(m) === 'gemv' ? `the layer GEMV back to back on the compute stream throughout` : `attention at ${li.context_tokens} tokens + layer GEMV running on the compute stream throughout`;
    const rt = m.layout_retimed;
    const again = (cond: 'idle' | 'gemv') =>
      rt ? `; each batch the lesser of two timings, the second taken at ${rt.at} (${rt.from_second[cond].length} of ${rt.compared[cond]} batches from the second)` : '';
    applyCopyBatchFit(p, fits.copy_batches, by, { idle: `${batches}, nothing else on the GPU)${again('idle')}`, under_compute: `${batches}, ${beside})${underComputeBatches(m) === 'gemv' ? again('gemv') : ''}` });
    for (const [dir, iso, situ] of [[toHost, fits.d2h, fits.d2h_in_situ], [toHbm, fits.h2d, fits.h2d_in_situ]] as const) {
      src[`links[${pcie}].${dir}.alpha_us`] += `; for comparison, isolated pinned copies: alpha ${r2(iso.alpha_us)} us, ${r2(iso.GBps)} GB/s; scattered in situ: alpha ${r2(situ.alpha_us)} us, ${r2(situ.GBps)} GB/s`;
    }
  } else {
    applyPerDirectionLayoutFits(p, pcie, fits, by, li);
  }
  if (m.bulk) applyBulkPace(p, pcie, m.bulk, [...m.h2d_layout_idle, ...m.d2h_layout_idle], li.block_bytes, by);
  if (m.spread?.length) {
    try {
      fits.spread = fitSpread(m.spread);
    } catch (e) {
      fits.spread_error = (e as Error).message;
      log(`warning: the spread fit failed (${fits.spread_error}); the hbm link prices no spread of host slots`);
    }
  }
  if (fits.spread) applySpreadFit(p, fits.spread, m.spread!, by);
  L.copy_engines = 1;
  src[`links[${pcie}].copy_engines`] = `${by}: the HIL executor issues every copy on one memory stream (one transfer in flight)`;
  const nv = p.tiers.findIndex((t) => t.kind === 'nvme');
  if (nv >= 0) {
    const { li, toTier, fromTier: rd } = nvmeLink(p);
    // writes in the executor's pattern where measured (a layer's runs started at once), else one request per size
    const wb = fits.file_write_batch;
    const io = m.file_direct ? 'O_DIRECT' : 'buffered (O_DIRECT refused)';
    const threads = m.file_batch_info?.threads ?? 4;
    const one = `file-tier writes (${io}, ${threads} I/O threads), one request per size, relative-error least squares (rms residual ${pct(fits.file_write.rms_residual)}, max ${pct(fits.file_write.max_abs_residual)})`;
    if (wb) {
      applyFileWriteFit(p, wb, by, `file-tier writes (${io}, ${threads} I/O threads) in the HIL executor's pattern, a layer's runs started at once and joined`);
      src[`links[${li}].${toTier}.alpha_us`] += `; for comparison (not used here), ${one}: alpha ${r2(fits.file_write.alpha_us)} us, ${r2(fits.file_write.GBps)} GB/s`;
    } else {
      applyFileWriteFit(p, fits.file_write, by, one, null);
    }
    const rb = fits.file_read_batch;
    if (rb) {
      const info = m.file_batch_info;
      const what = info
        ? `file-tier reads (${io}, ${info.threads} I/O threads) in the HIL executor's pattern: per layer one batch of runs of ${info.block_bytes}-byte blocks (${info.layers} layers x ${info.blocks_per_layer} blocks, runs of 1..24 blocks or one run, ~80% of a layer) handed to the tier at once (readBatch) and joined${info.h2d_copies ? ', then copied to the device one copy per run while the next batch is read' : ''}, plus small batches of single blocks, ${(info.ms / 1000).toFixed(1)} s of reads at ${info.GBps.toFixed(3)} GB/s overall`
        : `file-tier reads (${io}) issued together and joined`;
      applyFileReadFit(p, rb, by, what, readBatchForm(rb), fits.file_read_request_us);
    } else {
      applyFileReadFit(p, fits.file_read, by, `file-tier reads (${io}), one request per size`, 'time = alpha + bytes / beta per request, relative-error fit');
    }
    src[`links[${li}].${rd}.alpha_us`] += `; one request alone: alpha ${r2(fits.file_read.alpha_us)} us, ${r2(fits.file_read.GBps)} GB/s`;
  }
  // the DRAM tier's ports must not cap the measured PCIe rate (pinned buffers stream at link speed)
  const dram = p.tiers.findIndex((t) => t.kind === 'dram');
  if (dram >= 0) {
    p.tiers[dram].read_GBps = Math.max(p.tiers[dram].read_GBps, r2(L[toHbm].GBps) * 2);
    p.tiers[dram].write_GBps = Math.max(p.tiers[dram].write_GBps, r2(L[toHost].GBps) * 2);
  }
  p.description =
    `calibrated by kvtier hil calibrate on ${device} (${kind} backend) ${date} from base ${base.name}. Fit residuals (rms / max |rel|): ` +
    `kernels ${pct(fits.kernels.rms_residual)} / ${pct(fits.kernels.max_abs_residual)}, attention in situ (line) ${pct(fits.attention.rms_residual)} / ${pct(fits.attention.max_abs_residual)}, linear ${pct(fits.linear.rms_residual)} / ${pct(fits.linear.max_abs_residual)}, H2D ${pct(fits.h2d.rms_residual)} / ${pct(fits.h2d.max_abs_residual)}, ` +
    `D2H ${pct(fits.d2h.rms_residual)} / ${pct(fits.d2h.max_abs_residual)}, H2D layout ${pct(fits.h2d_layout.rms_residual)} / ${pct(fits.h2d_layout.max_abs_residual)}, D2H layout ${pct(fits.d2h_layout.rms_residual)} / ${pct(fits.d2h_layout.max_abs_residual)}, H2D layout idle ${pct(fits.h2d_layout_idle.rms_residual)} / ${pct(fits.h2d_layout_idle.max_abs_residual)}, D2H layout idle ${pct(fits.d2h_layout_idle.rms_residual)} / ${pct(fits.d2h_layout_idle.max_abs_residual)}, file read ${pct(fits.file_read.rms_residual)} / ${pct(fits.file_read.max_abs_residual)}, ` +
    `file write ${pct(fits.file_write.rms_residual)} / ${pct(fits.file_write.max_abs_residual)}${fits.copy_batches ? `, copy batches idle ${pct(fits.copy_batches.idle.rms_residual)} / ${pct(fits.copy_batches.idle.max_abs_residual)}, under compute ${pct(fits.copy_batches.under_compute.rms_residual)} / ${pct(fits.copy_batches.under_compute.max_abs_residual)}` : ''}${fits.copy_batches_error ? `; the per-batch copy fit failed (${fits.copy_batches_error}), so the hbm link has the per-direction layout fits, copies priced at their start` : ''}. CXL and HDD numbers are the base profile's (no such hardware measured).`;
  p.sources = src;
  const profile = validateProfile(JSON.parse(JSON.stringify(p)), 'hil calibrate');
  const warnings = calibrationWarnings(m, fits, kind);
  for (const w of warnings) log(`warning: ${w}`);
  return { profile, fits, measurements: m, device, attention_options: attentionOptions, warnings };
}

/**
 * A large copy's pace on the hbm link: bulk_GBps from one large copy per direction (measure.ts bulk),
 * taking over after the longest run of the layout batches the link's alpha and GBps were fitted to.
 */
export function applyBulkPace(p: HardwareProfile, pcie: number, bulk: NonNullable<Measurements['bulk']>, batches: readonly { lengths: Record<number, number> }[], blockBytes: number, by: string): void {
  const { toHost, toHbm } = hbmLink(p);
  const L = p.links[pcie];
  const longest = Math.max(0, ...batches.flatMap((x) => Object.keys(x.lengths).map(Number)));
  const from = longest * blockBytes;
  for (const [d, us, name] of [[toHbm, bulk.h2d_us, 'H2D'], [toHost, bulk.d2h_us, 'D2H']] as const) {
    const GBps = bulk.bytes / us / 1e3;
    if (!(Number.isFinite(GBps) && GBps > 0) || longest === 0) continue;
    L[d]!.bulk_GBps = r2(GBps);
    L[d]!.bulk_from_bytes = from;
    p.sources[`links[${pcie}].${d}.bulk_GBps`] = `${by}: one pinned ${name} copy of ${bulk.bytes} bytes (two back to back a trial on the memory stream, median), ${r2(us)} us`;
    p.sources[`links[${pcie}].${d}.bulk_from_bytes`] = `${by}: the longest run of the executor-layout batches the link's alpha_us and GBps were fitted to (${longest} blocks of ${blockBytes} bytes)`;
  }
}

/**
 * The hbm link from the per-direction layout fits (time = copies x alpha + bytes / beta per batch, each
 * direction apart) and the direction-change medians: what the calibration writes when the per-batch
 * fit (fit-copy-batches.ts) fails. Copies stay priced when they start (no gpu.copy_under_compute).
 */
export function applyPerDirectionLayoutFits(
  p: HardwareProfile,
  pcie: number,
  fits: Pick<CalibrationFits, 'h2d_layout' | 'd2h_layout' | 'h2d_layout_idle' | 'd2h_layout_idle' | 'direction_switch' | 'h2d' | 'd2h' | 'h2d_in_situ' | 'd2h_in_situ'>,
  by: string,
  li: Pick<Measurements['layout_info'], 'block_bytes' | 'context_tokens' | 'small_bytes'>,
): void {
  const L = p.links[pcie];
  const src = p.sources;
  const { toHost, toHbm } = hbmLink(p);
  // these alphas carry each group's fixed cost and go with copies priced at their start: a base profile's
  // per-batch pricing does not apply to them
  delete p.gpu.copy_batch_us;
  delete p.gpu.copy_under_compute;
  delete src['gpu.copy_batch_us'];
  delete src['gpu.copy_under_compute'];
  for (const d of [toHost, toHbm]) delete src[`links[${pcie}].${d}.GBps_under_compute`];
  L[toHost] = { alpha_us: r2(fits.d2h_layout_idle.alpha_us), GBps: r2(fits.d2h_layout_idle.GBps), alpha_under_compute_us: r2(fits.d2h_layout.alpha_us) };
  L[toHbm] = { alpha_us: r2(fits.h2d_layout_idle.alpha_us), GBps: r2(fits.h2d_layout_idle.GBps), alpha_under_compute_us: r2(fits.h2d_layout.alpha_us) };
  const sw = fits.direction_switch;
  if (sw) {
    for (const d of [toHost, toHbm] as const) {
      for (const [key, us, cond] of [['switch_us', sw.idle_us, 'idle'], ['switch_under_compute_us', sw.under_compute_us, 'under compute']] as const) {
        const xs = sw.batches.filter((x) => x.condition === cond);
        if (us === undefined || xs.length === 0) continue;
        L[d]![key] = r2(Math.max(0, us));
        src[`links[${pcie}].${d}.${key}`] =
          `${by}: ${xs.length} copy batches whose groups alternate a demotion (n single blocks from HBM slab slots to host slots) and a promotion (n other blocks into the slots freed), n = ${xs.map((x) => x.label.match(/(\d+) single/)?.[1]).join(', ')}, marks per group, ${cond === 'idle' ? 'nothing else on the GPU' : 'attention + GEMV layers on the compute stream throughout'}: ` +
          `per batch, (time - the ${cond} layout fits' time for its D2H and H2D copies) / its direction changes = ${xs.map((x) => `${r2(x.us_per_switch)}`).join(', ')} us; the median${us < 0 ? ' (negative: clamped to 0)' : ''}`;
      }
    }
  }
  for (const [dir, busy, f, iso, situ, what] of [[toHost, fits.d2h_layout, fits.d2h_layout_idle, fits.d2h, fits.d2h_in_situ, 'D2H'], [toHbm, fits.h2d_layout, fits.h2d_layout_idle, fits.h2d, fits.h2d_in_situ, 'H2D']] as const) {
    const layout = `${what} pinned copies in the HIL executor's layout (${li.block_bytes}-byte blocks, ${layoutWhat[what]}${li.small_bytes?.length ? `, single quantized blocks of ${li.small_bytes.join(', ')} bytes` : ''}, back to back on the memory stream with marks per layer`;
    const fit = (x: LinearFit) => `time = copies x alpha + bytes / beta over ${x.points.length} batches, relative-error least squares (rms residual ${pct(x.rms_residual)}, max ${pct(x.max_abs_residual)})`;
    src[`links[${pcie}].${dir}.alpha_us`] =
      `${by}: ${layout}, nothing else on the GPU), ${fit(f)}; ` +
      `for comparison, isolated pinned copies: alpha ${r2(iso.alpha_us)} us, ${r2(iso.GBps)} GB/s; scattered in situ: alpha ${r2(situ.alpha_us)} us, ${r2(situ.GBps)} GB/s`;
    src[`links[${pcie}].${dir}.GBps`] = `${by}: same fit as alpha_us`;
    src[`links[${pcie}].${dir}.alpha_under_compute_us`] =
      `${by}: ${layout}, attention at ${li.context_tokens} tokens + layer GEMV running on the compute stream throughout), ${fit(busy)} (its beta: ${r2(busy.GBps)} GB/s)`;
  }
}

/** how a fitFileReadBatches fit relates a batch's time to its requests, for the sources: with its fixed time, or the line it fell back to and why */
export function readBatchForm(f: FileReadFit): string {
  return f.batch_us > 0 ? 'time = batch_us + requests x alpha + bytes / beta per batch, relative-error least squares' : `time = requests x alpha + bytes / beta per batch (${f.degenerate ?? 'no fixed time'})`;
}

/** a file read fit with a fixed time per batch (fitFileReadBatches) */
export interface FileReadFit extends LinearFit {
  /** the fixed time of one batch, us (0 where the three-term fit fell back to fitFileBatches) */
  batch_us: number;
}

/**
 * Executor-pattern file read batches: time = batch_us + requests x alpha + bytes / beta, least squares
 * on the relative error over the batches of whole blocks (layer batches of many requests, and small
 * batches of a few single blocks, which alone tell the fixed time from the requests' alpha: the first
 * request's latency, which a batch of a few requests cannot hide behind others). Where alpha comes out
 * below zero, it is held at 0 and the other two fitted again; where the fixed time comes out below
 * zero, or the fit cannot be solved (fewer than three batches, or batches that do not tell the terms
 * apart), fitFileBatches' line with batch_us 0, and `degenerate` says why.
 */
export function fitFileReadBatches(points: { requests: number; bytes: number; us: number; kind?: string; run_blocks?: number }[]): FileReadFit {
  const two = fitFileBatches(points);
  const lines = points.filter((x) => x.kind !== 'sized');
  // relative-error least squares over the columns asked for (each row divided by its time); null where unsolvable
  const solve = (cols: ((x: (typeof lines)[number]) => number)[]): number[] | null => {
    try {
      const A = lines.map((x) => cols.map((c) => c(x) / x.us));
      const At = transpose(A);
      const N = multiply(At, A) as number[][];
      // (columns that (nearly) follow one another do not tell their terms apart: det over the diagonal's product ~ 0)
      if (!(Math.abs(det(N)) > 1e-9 * N.reduce((a, r, i) => a * r[i], 1))) return null;
      const sol = (lusolve(N, multiply(At, lines.map(() => 1)) as number[]) as number[][]).map((r) => r[0]);
      return sol.every((v) => Number.isFinite(v)) ? sol : null;
    } catch {
      return null;
    }
  };
  const fallback = (why: string): FileReadFit => ({ ...two, batch_us: 0, degenerate: two.degenerate ? `${two.degenerate}; ${why}` : why });
  if (lines.length < 3 || two.degenerate) return fallback(`${lines.length} batches of whole blocks${two.degenerate ? ' and a degenerate line' : ''}: no fixed time per batch; requests x alpha + bytes / beta`);
  let terms = solve([() => 1, (x) => x.requests, (x) => x.bytes]);
  if (terms && terms[1] < 0) {
    const held = solve([() => 1, (x) => x.bytes]);
    terms = held ? [held[0], 0, held[1]] : null;
  }
  if (!terms) return fallback('the fit with a fixed time per batch cannot be solved from these batches; requests x alpha + bytes / beta, no fixed time');
  const [batch, alpha, perByte] = terms;
  if (!(batch >= 0 && perByte > 0)) return fallback(`the fit with a fixed time per batch gave batch ${batch.toFixed(2)} us, ${perByte.toExponential(3)} us per byte: a term below zero; requests x alpha + bytes / beta, no fixed time`);
  const fitted = two.points.map((p, i) => {
    const fit = batch + lines[i].requests * alpha + p.bytes * perByte;
    return { ...p, fit_us: fit, residual: (fit - p.us) / p.us };
  });
  const rms = Math.sqrt(fitted.reduce((a, p) => a + p.residual ** 2, 0) / fitted.length);
  return { alpha_us: alpha, GBps: 1 / perByte / 1e3, batch_us: batch, points: fitted, rms_residual: rms, max_abs_residual: Math.max(...fitted.map((p) => Math.abs(p.residual))) };
}

/** executor-pattern file read batches: time = requests x alpha + bytes / beta, plain least squares (the layer batches that make up a step weigh most) */
export function fitFileBatches(points: { requests: number; bytes: number; us: number; kind?: string; run_blocks?: number }[]): LinearFit {
  // (the requests smaller than a slot go into fileRequestCurve, not the line)
  return fitPerRequest(points.filter((x) => x.kind !== 'sized').map((x) => ({ requests: x.requests, bytes: x.bytes, us: x.us, label: `${x.kind ?? 'batch'} ${x.requests} x ${x.run_blocks ?? Math.round(x.bytes / x.requests)}` })), false);
}

/**
 * Request time by size for requests smaller than a slot: per measured size of the 'sized' batches,
 * the median over its batches of the batch time per request, ascending; then the slot (a whole
 * block) at the line's alpha + slot / GBps, for comparison. Undefined without 'sized' batches below
 * the slot.
 */
export function fileRequestCurve(points: readonly { requests: number; us: number; kind?: string; request_bytes?: number }[], line: Pick<LinearFit, 'alpha_us' | 'GBps'> & { batch_us?: number }, slotBytes: number): [number, number][] | undefined {
  const slot = Math.ceil(slotBytes / 4096) * 4096;
  const per = new Map<number, number[]>();
  for (const x of points) {
    if (x.kind !== 'sized' || x.request_bytes === undefined || x.request_bytes >= slot || x.requests <= 0) continue;
    const list = per.get(x.request_bytes) ?? [];
    // (the batch's fixed time is the line's, once per batch: not the requests')
    list.push((x.us - (line.batch_us ?? 0)) / x.requests);
    per.set(x.request_bytes, list);
  }
  if (per.size === 0) return undefined;
  const out: [number, number][] = [...per].sort((a, b) => a[0] - b[0]).map(([bytes, us]) => [bytes, r2(median(us))]);
  out.push([slot, r2(line.alpha_us + slot / (line.GBps * 1e3))]);
  return out;
}

/** the profile's NVMe tier, the link that reaches it, and that link's directions into the tier (writes) and out of it (reads) */
function nvmeLink(p: HardwareProfile) {
  const nv = p.tiers.findIndex((t) => t.kind === 'nvme');
  if (nv < 0) throw new Error(`profile ${p.name} has no nvme tier`);
  const nvName = p.tiers[nv].name;
  const li = p.links.findIndex((l) => l.a === nvName || l.b === nvName);
  if (li < 0) throw new Error(`profile ${p.name} has no link to its nvme tier ${nvName}`);
  const N = p.links[li];
  const intoTier = N.b === nvName;
  return { nv, li, N, toTier: intoTier ? ('a_to_b' as const) : ('b_to_a' as const), fromTier: intoTier ? ('b_to_a' as const) : ('a_to_b' as const) };
}

/**
 * Sets the profile's NVMe read direction (link alpha/beta, the tier's read port = the link's rate,
 * latency 0: inside alpha) from a batch fit, with `what` as the source. Used by calibrate and by
 * compare's re-measurement right before an NVMe policy. Returns the link index.
 */
export function applyFileReadFit(
  p: HardwareProfile,
  fit: Pick<LinearFit, 'alpha_us' | 'GBps' | 'points' | 'rms_residual' | 'max_abs_residual'> & { batch_us?: number },
  by: string,
  what: string,
  /** how the fit relates time to the requests (the source text says it) */
  form = 'time = requests x alpha + bytes / beta per batch',
  /** requests smaller than a slot timed by size (fileRequestCurve), set as the direction's request_us */
  requestUs?: [number, number][],
): number {
  const { nv, li, N, fromTier: rd } = nvmeLink(p);
  N[rd] = { alpha_us: r2(fit.alpha_us), GBps: r2(fit.GBps) };
  p.tiers[nv].read_GBps = Math.max(r2(fit.GBps), 0.01);
  p.tiers[nv].read_latency_us = 0;
  const src = p.sources;
  src[`links[${li}].${rd}.alpha_us`] = `${by}: ${what}; ${form}, least squares over ${fit.points.length} points (rms residual ${pct(fit.rms_residual)}, max ${pct(fit.max_abs_residual)})`;
  src[`links[${li}].${rd}.GBps`] = `${by}: same fit as links[${li}].${rd}.alpha_us`;
  src[`tiers[${nv}].read_GBps`] = `${by}: = the fitted file read bandwidth of links[${li}].${rd} (the link alpha holds the latency)`;
  src[`tiers[${nv}].read_latency_us`] = `${by}: 0, inside the fitted link alpha of links[${li}].${rd}`;
  if (requestUs) {
    N[rd].request_us = requestUs;
    src[`links[${li}].${rd}.request_us`] = `${by}: per request size below a block's slot (the model's quantized blocks, each request 4 KiB-aligned), the median time per request of batches of one request per block over ~80% of a layer handed to the tier at once (less the fit's fixed time per batch, where it has one); the last point is the slot at the fitted alpha + bytes / GBps`;
  } else delete src[`links[${li}].${rd}.request_us`];
  if (fit.batch_us !== undefined && fit.batch_us > 0) {
    N[rd].batch_us = r2(fit.batch_us);
    src[`links[${li}].${rd}.batch_us`] = `${by}: the same fit's fixed time per batch (the first request's latency, which a batch of a few requests cannot hide behind others)`;
  } else delete src[`links[${li}].${rd}.batch_us`];
  return li;
}

/**
 * Sets the profile's NVMe write direction (link alpha/beta, one batch at a time, the tier's write port
 * = the link's rate, latency 0: inside alpha) from a fit, with `what` as the source; `form` says how the
 * fit relates time to the requests (null: `what` says it all). Used by calibrate and by a validation's
 * re-simulation with the disk as probed before a cell's runs. Returns the link index.
 */
export function applyFileWriteFit(
  p: HardwareProfile,
  fit: Pick<LinearFit, 'alpha_us' | 'GBps' | 'points' | 'rms_residual'>,
  by: string,
  what: string,
  form: string | null = 'time = requests x alpha + bytes / beta per batch',
): number {
  const { nv, li, N, toTier: wr } = nvmeLink(p);
  N[wr] = { alpha_us: r2(fit.alpha_us), GBps: r2(fit.GBps) };
  N.copy_engines = 1;
  const src = p.sources;
  src[`links[${li}].${wr}.alpha_us`] = form === null ? `${by}: ${what}` : `${by}: ${what}: ${form}, least squares over ${fit.points.length} batches (rms residual ${pct(fit.rms_residual)})`;
  src[`links[${li}].${wr}.GBps`] = `${by}: same fit as alpha_us`;
  src[`links[${li}].copy_engines`] = `${by}: the HIL executor issues file requests one batch at a time`;
  p.tiers[nv].write_GBps = Math.max(r2(fit.GBps), 0.01);
  p.tiers[nv].write_latency_us = 0;
  src[`tiers[${nv}].write_GBps`] = `${by}: = the fitted file write bandwidth`;
  src[`tiers[${nv}].write_latency_us`] = `${by}: 0, inside the fitted link alpha`;
  return li;
}

/**
 * gpu.convert_kernel_us (idle) and convert_kernel_under_compute_us (the points whose compute covered
 * every kernel): the median per-kernel time over the quantize and dequantize points of each condition.
 */
export function applyConvertKernels(p: HardwareProfile, points: readonly ConvertPoint[], by: string, log: (s: string) => void): void {
  if (points.length === 0) return;
  const idle = points.filter((x) => x.condition === 'idle');
  const busy = points.filter((x) => x.condition === 'under compute' && x.compute_cover >= 1);
  const list = (xs: readonly ConvertPoint[]) => xs.map((x) => `${x.op} ${x.bits}b ${r2(x.us)}`).join(', ');
  const what = `one block's quantize / dequantize kernel (FP16 <-> INT${[...new Set(points.map((x) => x.bits))].join('/')}) on the memory stream, ${points[0].kernels} back to back`;
  if (idle.length) {
    p.gpu.convert_kernel_us = r2(median(idle.map((x) => x.us)));
    p.sources['gpu.convert_kernel_us'] = `${by}: ${what}, GPU otherwise idle, us per kernel (${list(idle)}); the median`;
  }
  if (busy.length) {
    p.gpu.convert_kernel_under_compute_us = r2(median(busy.map((x) => x.us)));
    p.sources['gpu.convert_kernel_under_compute_us'] = `${by}: ${what}, layer GEMVs running on the compute stream throughout, us per kernel (${list(busy)}); the median`;
  } else if (idle.length) {
    log('warning: gpu.convert_kernel_under_compute_us not set: no convert trial ran wholly under compute');
  }
}

/**
 * gpu.issue_copy_us, issue_record_us, issue_kernel_us, issue_convert_us, issue_attention_us: the host's time per op
 * through the executor's issue path (bench/issue-bench.ts), timed as the executor issues them (the GPU
 * running the ops): the median of the trials, for copies of every size's trials together (the driver
 * call's cost does not follow the size at these sizes); the gated times go in the sources. With
 * `launchPlan` (a plan that moves nothing, each step on an idle GPU), records, kernels, conversions and
 * attention launches at the pace the executor's own loop issued that plan's steps at, against the same
 * ops in a row (launchPaceFromPlan). With `plan`, copies at their cost in the executor's own loop over a
 * whole plan, its other ops at those costs; with `convertPlan` as well, conversion launches likewise
 * (applyConvertFromPlan).
 */
export function applyIssueCosts(p: HardwareProfile, points: readonly IssuePoint[], by: string, plan?: PlanIssueResult, convertPlan?: PlanIssueResult, launchPlan?: PlanIssueResult | { error: string }): void {
  const what = (xs: readonly IssuePoint[]) => xs.map((x) => `${x.bytes ? `${x.bytes} B ` : ''}${r2(x.us)}`).join(', ');
  /** the costs this call took from the ops issued in a row */
  const inRow: Partial<Record<IssueKey, number>> = {};
  for (const [key, kind, desc] of [
    ['issue_copy_us', 'copy', 'memory-stream copies from pinned host slots into HBM in the prefetch layout'],
    ['issue_record_us', 'record', 'timing marks (an event recorded on the memory stream)'],
    ['issue_kernel_us', 'kernel', 'launches of a small GEMV on the compute stream'],
    ['issue_convert_us', 'convert', 'launches of one block\'s dequantization (INT8) and quantization (INT2) in turn on the memory stream'],
    ['issue_attention_us', 'attention', 'launches of the paged attention over a table of FP16 blocks on the compute stream'],
  ] as const) {
    // as the executor issues them (the GPU running the ops meanwhile); the gated points are for the record
    const xs = points.filter((x) => x.kind === kind && !x.gated && x.trials_us.length > 0 && x.trials_us.every(Number.isFinite));
    if (xs.length === 0) continue;
    p.gpu[key] = r2(median(xs.flatMap((x) => x.trials_us)));
    inRow[key] = p.gpu[key]!;
    const g = points.filter((x) => x.kind === kind && x.gated);
    const gated = g.length ? `; behind a compute gate: ${what(g)} us` : '';
    p.sources[`gpu.${key}`] = `${by}: host time per op through the executor's issue path, ${xs[0].ops} ${desc} issued in a row as the executor issues them, the median of ${xs[0].trials_us.length} trials (medians ${what(xs)} us)${xs.length > 1 ? '; the median of every size\'s trials' : ''}${gated}`;
  }
  const timedPlan = launchPlan && 'steps' in launchPlan ? launchPlan : undefined;
  const costs = pacedIssueCosts(points, timedPlan);
  if (timedPlan) applyLaunchPace(p, timedPlan, costs, inRow);
  else if (launchPlan && 'error' in launchPlan) {
    for (const key of PACED) if (inRow[key] !== undefined) p.sources[`gpu.${key}`] += `; the plan that moves nothing was not timed (${launchPlan.error}), so the cost in a row stands`;
  }
  const paced = Number.isFinite(costs.pace) && costs.pace > 0;
  if (!plan) return;
  // copies: as the executor's own loop issues a whole plan, where it took one (the list above for the record)
  const c = copyCostFromPlan(plan.steps, costs);
  if (!Number.isFinite(c.us) || c.us <= 0) {
    const why = `; a whole plan (${plan.policy} at ${plan.budget}, ${plan.steps.length} steps) gave no copy cost (${c.per_step.length} usable steps, median ${c.us} us), so the listed copies' cost stands`;
    if (p.sources['gpu.issue_copy_us'] !== undefined) p.sources['gpu.issue_copy_us'] += why;
    if (convertPlan) applyConvertFromPlan(p, costs, convertPlan, p.gpu.issue_copy_us, points, inRow.issue_convert_us, paced, by);
    return;
  }
  const listed = p.gpu.issue_copy_us;
  p.gpu.issue_copy_us = r2(c.us);
  p.sources['gpu.issue_copy_us'] = `${by}: host time per copy as the HIL executor issued a whole plan (${plan.policy} at ${plan.budget} on a generated ${plan.context_tokens}-token trace, ${plan.steps.length} steps, ${c.copies.toFixed(0)} copies per step used): per step its issue time less its records, kernel, conversion and attention launches at the costs below, over its copies; the median of ${c.per_step.length} steps (the first left out)${listed !== undefined ? `; ${points.find((x) => x.kind === 'copy' && !x.gated)?.ops ?? 0} copies issued in a row read ${listed} us` : ''}`;
  if (convertPlan) applyConvertFromPlan(p, costs, convertPlan, p.gpu.issue_copy_us, points, inRow.issue_convert_us, paced, by);
}

type IssueKey = 'issue_copy_us' | 'issue_record_us' | 'issue_kernel_us' | 'issue_convert_us' | 'issue_attention_us';
/** the issue costs the launch pace applies to, and their kinds in pacedIssueCosts */
const PACED = ['issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us'] as const;
const KIND_OF = { issue_record_us: 'record', issue_kernel_us: 'kernel', issue_convert_us: 'convert', issue_attention_us: 'attention' } as const;

/**
 * gpu.issue_record_us, issue_kernel_us, issue_convert_us, issue_attention_us, where this calibration
 * took them from ops in a row (`inRow`), put at the paced costs (`costs`, the costs in a row times the
 * pace, rounded once), the plan and the pace in their sources; where the pace is not a positive number
 * the costs in a row stand and their sources say why.
 */
function applyLaunchPace(p: HardwareProfile, plan: PlanIssueResult, costs: ReturnType<typeof pacedIssueCosts>, inRow: Partial<Record<IssueKey, number>>): void {
  const lp = costs.launch!;
  const pace = costs.pace;
  const what = `a plan that moves nothing (${plan.policy} at ${plan.budget} on a generated ${plan.context_tokens}-token trace, ${plan.steps.length} steps${plan.settled ? ', each issued on an idle GPU' : ''})`;
  for (const key of PACED) {
    if (inRow[key] === undefined) continue;
    if (!(Number.isFinite(pace) && pace > 0)) {
      p.sources[`gpu.${key}`] += `; ${what} gave no pace (${lp.per_step.length} usable steps), so the cost in a row stands`;
      continue;
    }
    p.gpu[key] = r2(costs[KIND_OF[key]]);
    p.sources[`gpu.${key}`] += `; times ${pace.toFixed(3)}, the pace of the HIL executor's own loop over ${what}: per step (${r2(lp.issued_us)} us, median) its issue time over its records, kernels and attention launches at the costs in a row (${r2(lp.listed_us)} us), the median of ${lp.per_step.length} steps (the first left out)`;
  }
}

/**
 * gpu.issue_convert_us as the executor's own loop issued a converting plan's steps (plan-issue-bench.ts
 * convertCostFromPlan, the other ops at `costs` and copies at `copyUs`), where it gives a cost;
 * otherwise the cost the profile has stands (the launches' cost in a row, at the launch pace where
 * `paced`) and its source says why. `inRow`: the launches' cost in a row, for the source.
 */
function applyConvertFromPlan(p: HardwareProfile, costs: { record: number; kernel: number; attention: number }, plan: PlanIssueResult, copyUs: number | undefined, points: readonly IssuePoint[], inRow: number | undefined, paced: boolean, by: string): void {
  const c = convertCostFromPlan(plan.steps, { ...costs, copy: copyUs ?? Number.NaN });
  const what = `a whole plan (${plan.policy} at ${plan.budget} on a generated ${plan.context_tokens}-token trace, ${plan.steps.length} steps${plan.compute === false ? ', its compute kernels taken out so that no launch waited for room in the launch queue' : ''})`;
  if (!Number.isFinite(c.us) || c.us <= 0) {
    if (p.sources['gpu.issue_convert_us'] !== undefined) p.sources['gpu.issue_convert_us'] += `; ${what} gave no conversion cost (${c.per_step.length} converting steps, median ${c.us} us), so the launches' cost in a row${paced ? ' at the launch pace' : ''} stands`;
    return;
  }
  p.gpu.issue_convert_us = r2(c.us);
  p.sources['gpu.issue_convert_us'] = `${by}: host time per block conversion launch as the HIL executor issued ${what}: per step that converts (${c.conversions.toFixed(0)} launches on average), its issue time less its other ops at the costs of this profile and the residual of the steps that convert nothing (median ${r2(c.baseline_us)} us), over its launches; the median of ${c.per_step.length} steps (${c.per_step.map(r2).join(', ')} us)${inRow !== undefined ? `; ${points.find((x) => x.kind === 'convert' && !x.gated)?.ops ?? 0} launches issued in a row read ${inRow} us` : ''}`;
}

/**
 * Writes each hbm-link direction's spread_us (its fit's mean slope, to 0.001 us) into a profile, in
 * place, with the timings it came from in the sources.
 */
export function applySpreadFit(p: HardwareProfile, fit: { h2d: SpreadFit; d2h: SpreadFit }, points: readonly SpreadPoint[], by: string): void {
  const { index, toHost, toHbm } = hbmLink(p);
  for (const [dir, f, what] of [[toHbm, fit.h2d, 'h2d'], [toHost, fit.d2h, 'd2h']] as const) {
    p.links[index][dir].spread_us = Math.round(f.us * 1000) / 1000;
    const pts = points.filter((x) => x.direction === what);
    const copies = pts[0]?.copies ?? 0;
    p.sources[`links[${index}].${dir}.spread_us`] = `${by}: ${copies} single-block copies a layer, host slots drawn from ${[...new Set(pts.map((x) => x.slots))].join(', ')} per layer; per copy ${pts.map((x) => `${x.condition === 'gemv' ? 'beside GEMV' : 'idle'} ${r2(x.us)} us at ${r2(x.doublings)} doublings`).join(', ')}; slope (from the fewest doublings' point) beside the GEMV ${f.gemv_us.toFixed(3)}, idle ${f.idle_us.toFixed(3)} us per doubling, their mean${f.gemv_us + f.idle_us < 0 ? ' (negative: clamped to 0)' : ''}`;
  }
}

/**
 * gpu.launch_queue_ops: how many launches the host could issue ahead of the GPU before one waited
 * (bench/queue-depth-bench.ts), rounded; not set without an estimate.
 */
export function applyLaunchQueue(p: HardwareProfile, q: QueueDepthResult | undefined, by: string): void {
  if (!q || !Number.isFinite(q.ops) || q.ops < 1) return;
  p.gpu.launch_queue_ops = Math.round(q.ops);
  p.sources['gpu.launch_queue_ops'] = `${by}: ${q.launches} GEMVs of ${r2(q.gemv_us)} us launched back to back on the compute stream, the host's clock read after each: launches ahead of the GPU once a launch waited, the median over the second half of the launches (trials ${q.trials.map((t) => (Number.isFinite(t.ops) ? t.ops.toFixed(0) : 'none')).join(', ')})`;
}

/**
 * gpu.host_convert_us: the host's time per block conversion (bench/host-convert-bench.ts), the median
 * over its pairs of widths; not set without points.
 */
export function applyHostConvert(p: HardwareProfile, points: readonly HostConvertPoint[] | undefined, by: string): void {
  const xs = (points ?? []).filter((x) => Number.isFinite(x.us) && x.us > 0);
  if (xs.length === 0) return;
  p.gpu.host_convert_us = r2(median(xs.map((x) => x.us)));
  p.sources['gpu.host_convert_us'] = `${by}: one block of the model's geometry converted on the host's CPU as the HIL executor does (dequantized to FP16, quantized again with the reference quantizer), ${xs[0].blocks} blocks per trial: the median over ${xs.map((x) => `${x.from_bits} -> ${x.to_bits} bits ${r2(x.us)} us`).join(', ')}`;
}

/**
 * gpu.file_batch_host_us: the host's wall time around a file read batch beyond the batch's own time on
 * the tier's threads (file-batches.ts host_us), the median over the batches; not set without them.
 */
export function applyFileBatchHost(p: HardwareProfile, points: readonly FileBatchPoint[] | undefined, by: string): void {
  const xs = (points ?? []).map((x) => x.host_us).filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (xs.length === 0) return;
  p.gpu.file_batch_host_us = r2(Math.max(0, median(xs)));
  p.sources['gpu.file_batch_host_us'] = `${by}: the host's wall time from handing a file read batch to the tier (readBatch) to going on after it, less the batch's own time on the tier's I/O threads, the median over ${xs.length} batches in the executor's pattern (range ${r2(Math.min(...xs))} to ${r2(Math.max(...xs))} us)`;
}

export interface DirectionSwitchFit {
  /** median over every batch */
  us: number;
  /** median over the batches of each condition */
  idle_us?: number;
  under_compute_us?: number;
  batches: { label: string; condition: 'under compute' | 'idle'; switches: number; us: number; predicted_us: number; us_per_switch: number }[];
}

/**
 * The cost of a copy-direction change on the memory stream, from batches whose groups alternate D2H
 * and H2D: (measured - predicted) / changes per batch, predicted by the single-direction layout fits of
 * the same condition (time = copies x alpha + bytes / beta per direction); the median over the batches,
 * over all and per condition.
 */
export function fitDirectionSwitch(
  underCompute: readonly LayoutPoint[],
  idle: readonly LayoutPoint[],
  fits: Pick<CalibrationFits, 'h2d_layout' | 'd2h_layout' | 'h2d_layout_idle' | 'd2h_layout_idle'>,
): DirectionSwitchFit | undefined {
  const t = (f: LinearFit, x: { runs: number; bytes: number }) => x.runs * f.alpha_us + x.bytes / (f.GBps * 1e3);
  const batches: DirectionSwitchFit['batches'] = [];
  for (const [points, condition, h, d] of [[underCompute, 'under compute', fits.h2d_layout, fits.d2h_layout], [idle, 'idle', fits.h2d_layout_idle, fits.d2h_layout_idle]] as const) {
    for (const p of points) {
      // (batches whose groups alternate: those that change direction once, ordered by direction, tell the per-group cost apart in the per-batch fit)
      if (p.switches <= 0 || (p.groups !== undefined && p.switches !== p.groups - 1)) continue;
      const predicted = t(h, p.split.h2d) + t(d, p.split.d2h);
      batches.push({ label: p.label, condition, switches: p.switches, us: p.us, predicted_us: predicted, us_per_switch: (p.us - predicted) / p.switches });
    }
  }
  if (batches.length === 0) return undefined;
  const of = (c: string) => {
    const xs = batches.filter((x) => x.condition === c).map((x) => x.us_per_switch);
    return xs.length ? median(xs) : undefined;
  };
  return { us: median(batches.map((x) => x.us_per_switch)), idle_us: of('idle'), under_compute_us: of('under compute'), batches };
}

/** layout batches: time = copies x alpha + bytes / beta */
export function fitLayout(points: LayoutPoint[]): LinearFit {
  return fitPerRequest(points.map((p) => ({ requests: p.runs, bytes: p.bytes, us: p.us, label: `${p.direction} ${p.label}` })));
}

/** the side file a profile's fits and measurements are written to (writeCalibration): PROFILE.fit.json */
export function fitFileOf(profileFile: string): string {
  return profileFile.replace(/\.json$/, '') + '.fit.json';
}

export function writeCalibration(out: string, r: CalibrationResult): void {
  fs.writeFileSync(out, JSON.stringify(r.profile, null, 2) + '\n');
  const side = fitFileOf(out);
  fs.writeFileSync(side, JSON.stringify({ schema: 'kvtier-hil-calibration/v1', device: r.device, attention_options: r.attention_options, warnings: r.warnings, fits: r.fits, measurements: r.measurements }, null, 2) + '\n');
}

export function formatFits(f: CalibrationFits): string {
  const row = (name: string, x: LinearFit) =>
    `  ${name.padEnd(11)} alpha ${x.alpha_us.toFixed(2).padStart(8)} us  beta ${x.GBps.toFixed(2).padStart(9)} GB/s  residual rms ${pct(x.rms_residual).padStart(6)}  max ${pct(x.max_abs_residual).padStart(6)}${x.degenerate ? `  DEGENERATE: ${x.degenerate}` : ''}`;
  const rows = [row('kernels', f.kernels), row('attention', f.attention), row('linear', f.linear), row('H2D', f.h2d), row('D2H', f.d2h), row('file read', f.file_read), row('file write', f.file_write)];
  rows.push(row('H2D situ', f.h2d_in_situ), row('D2H situ', f.d2h_in_situ), row('H2D layout', f.h2d_layout), row('D2H layout', f.d2h_layout), row('H2D lay idle', f.h2d_layout_idle), row('D2H lay idle', f.d2h_layout_idle));
  if (f.file_read_batch) rows.push(row('read batch', f.file_read_batch));
  if (f.file_read_request_us) rows.push(`  ${'read by size'.padEnd(11)} ${f.file_read_request_us.map(([b, us]) => `${b / 1024} KiB ${us.toFixed(1)} us`).join(', ')} per request`);
  if (f.file_read_batch && f.file_read_batch.batch_us > 0) rows.push(`  ${'batch fixed'.padEnd(11)} ${f.file_read_batch.batch_us.toFixed(1)} us per read batch, with the read batch line`);
  const sw = f.direction_switch;
  if (sw) rows.push(`  ${'dir switch'.padEnd(11)} idle ${sw.idle_us?.toFixed(2) ?? '-'} us, under compute ${sw.under_compute_us?.toFixed(2) ?? '-'} us per D2H <-> H2D change (batches: ${sw.batches.map((x) => x.us_per_switch.toFixed(1)).join(', ')})`);
  const sp = f.spread;
  if (sp) rows.push(`  ${'spread'.padEnd(11)} H2D ${sp.h2d.us.toFixed(3)} us, D2H ${sp.d2h.us.toFixed(3)} us per doubling of the host-slot distance (beside GEMV / idle: ${sp.h2d.gemv_us.toFixed(3)} / ${sp.h2d.idle_us.toFixed(3)}, ${sp.d2h.gemv_us.toFixed(3)} / ${sp.d2h.idle_us.toFixed(3)})`);
  const tw = f.tail_wave;
  if (tw) rows.push(`  ${'tail wave'.padEnd(11)} ${tw.waves ? `${tw.waves.us_per_chunk.toFixed(3)} us per chunk of a tail-wave warp (${tw.waves.slots} slots, ${tw.waves.blocks_per_split} blocks per split; ${tw.waves.kernels.join(', ')}; rms ${tw.fit!.rms_without_us.toFixed(2)} -> ${tw.fit!.rms_with_us.toFixed(2)} us over ${tw.fit!.contexts} contexts)` : `not priced: ${tw.reason}`}`);
  const cb = f.copy_batches;
  if (cb) {
    for (const [name, x] of [['batch idle', cb.idle], ['batch busy', cb.under_compute]] as const) {
      rows.push(
        `  ${name.padEnd(11)} H2D ${x.h2d.alpha_us.toFixed(2)} us + ${x.h2d.GBps.toFixed(2)} GB/s, D2H ${x.d2h.alpha_us.toFixed(2)} us + ${x.d2h.GBps.toFixed(2)} GB/s, per group ${x.group_us.toFixed(2)} us${x.group_us_fixed ? ' (idle)' : ''}, per change ${x.switch_us?.toFixed(2) ?? '-'} us  residual rms ${pct(x.rms_residual)}  max ${pct(x.max_abs_residual)}`,
      );
    }
  }
  return rows.join('\n');
}

/** the layer GEMV's isolated time (the first GEMV measured: the model's layer shape) */
function layerGemvUs(m: Pick<Measurements, 'kernels'>): number {
  return m.kernels.find((k) => k.kind === 'gemv')?.us ?? NaN;
}

/**
 * What in a calibration's measurements looks disturbed, each a sentence: FP16 layer chains that came
 * out no longer than the same chain without the attention (their curve points floored at 0.01 us; on
 * a GPU the attention always costs something, so the chains or their GEMV were timed through a
 * disturbance), and copy batches the per-batch fit left out. The host backend's chains can time
 * the attention at or below zero and are not judged.
 */
export function calibrationWarnings(m: Pick<Measurements, 'attention_in_situ'>, fits: Pick<CalibrationFits, 'copy_batches'>, kind: string): string[] {
  const out: string[] = [];
  const floored = m.attention_in_situ.filter((x) => x.us <= 0.01);
  if (kind === 'cuda' && floored.length) {
    out.push(`the FP16 attention in the layer chains came out at or below nothing at ${floored.length} of ${m.attention_in_situ.length} contexts (${floored.map((x) => x.tokens).join(', ')} tokens; floored at 0.01 us): those chains were timed through a disturbance, calibrate again`);
  }
  for (const [cond, f] of [['idle', fits.copy_batches?.idle], ['under compute', fits.copy_batches?.under_compute]] as const) {
    const list = (xs: NonNullable<typeof f>['points']) => xs.map((p) => `"${p.label}" (${r2(p.us)} us against ${r2(p.fit_us)} fitted)`).join(', ');
    const other = f?.dropped?.filter((p) => !isSmallLabel(p.label)) ?? [];
    const small = f?.dropped?.filter((p) => isSmallLabel(p.label)) ?? [];
    if (other.length) out.push(`copy batches ${cond}: ${list(other)} left out of the fit, more than ${pct(COPY_BATCH_OUTLIER)} off the others`);
    // (single blocks at a quantized size sit off the line systematically, not through a disturbance)
    if (small.length) out.push(`copy batches ${cond}: single blocks at quantized sizes ${list(small)} lie more than ${pct(COPY_BATCH_OUTLIER)} off the line the other batches fit and were left out of it: the per-copy cost at those sizes departs from the line, and the profile prices those copies on it`);
  }
  return out;
}

/** the layer GEMV as the FP16 layer chains ran it (median over their contexts of the chain without the attention); NaN in measurements taken before it was timed */
export function layerGemvInChainsUs(m: Pick<Measurements, 'attention_in_situ'>): number {
  const x = m.attention_in_situ.map((p) => p.gemv_us_per_layer).filter((v): v is number => v !== undefined && Number.isFinite(v));
  return x.length ? median(x) : NaN;
}

/**
 * The GEMV times the linear fields are fitted to: each GEMV timed alone, the layer's (the first)
 * taken as the layer chains ran it where they timed it. Alone, the layer GEMV is timed in a few
 * trials between other benchmarks, where a GPU not yet at its running clocks has read 10% slow (an
 * H100 lease: 164.9 us alone, 149-150 in the chains); in the chains it is timed in the trials the
 * attention's time is taken beyond, so the split of a layer between attention and GEMV does not
 * take such a reading.
 */
export function linearPoints(m: Pick<Measurements, 'kernels' | 'attention_in_situ'>): Measurements['kernels'] {
  const gemvs = m.kernels.filter((k) => k.kind === 'gemv');
  const inChains = layerGemvInChainsUs(m);
  if (!gemvs.length || !Number.isFinite(inChains)) return gemvs;
  return [{ ...gemvs[0], us: inChains, label: `${gemvs[0].label} in the layer chains` }, ...gemvs.slice(1)];
}

/**
 * The attention's profile fields from the measurements: the kernel's tail wave where the dispatch's
 * plans follow the split rule and the chains around the contexts tell it (fit-tail-wave.ts), the curve
 * from the chains (attentionCurveFromChains; without the tail wave where it is priced) and the kernels'
 * curves as measured (attentionKernelCurves). `gpu` carries the profile's (rounded) linear_* fields.
 */
export function attentionFits(
  m: Pick<Measurements, 'attention_in_situ' | 'kernels' | 'kernels_in_situ' | 'multiprocessors'>,
  blockTokens: number,
  gpu: HardwareProfile['gpu'],
  model: Pick<ModelSpec, 'weight_bytes_per_layer' | 'flops_per_token_per_layer'>,
): { waves: TailWaveResult; curve: { tokens: number; bytes: number; us: number }[]; layerLinearUs: number; kernelCurves: GpuSpec['attention_kernels'] } {
  const waves = tailWaveOf(m, blockTokens);
  const w = waves.waves;
  const chains = w ? withoutTailWave(m.attention_in_situ, w, blockTokens) : m.attention_in_situ;
  // The simulator runs a layer as attention_curve(tokens) + linearTimeUs(layer weights). So the curve is the
  // measured chain time per layer minus what the fitted GEMV line predicts for the layer's weights (not minus
  // the GEMV's isolated time): the simulated layer then equals the measured chain, and the line's residual
  // at the layer's shape does not become a per-layer error.
  const { curve, layerLinearUs } = attentionCurveFromChains(chains, gpu, model);
  // (FP16 at a kernel context between the chains' points is read off them: off the points without the
  // tail wave, plus the tail wave at that context, where it is priced)
  const without = [...chains].sort((a, b) => a.tokens - b.tokens);
  const fp16Between = w ? (t: number) => interpolate(without, t) + tailWaveUs(t, w) : undefined;
  return { waves, curve, layerLinearUs, kernelCurves: attentionKernelCurves(m, fp16Between) };
}

/**
 * The attention curve from measured layer chains (attention + layer GEMV per layer): each point is
 * the chain's time per layer minus the layer GEMV as `gpu`'s linear fields predict it for the
 * model's layer weights (floored at 0.01 us), so that the simulator's attention + linear per layer
 * reproduces the measured chain. `gpu` carries the profile's (rounded) linear_* fields.
 */
export function attentionCurveFromChains(
  chains: { tokens: number; bytes: number; chain_us_per_layer: number }[],
  gpu: HardwareProfile['gpu'],
  model: Pick<ModelSpec, 'weight_bytes_per_layer' | 'flops_per_token_per_layer'>,
): { curve: { tokens: number; bytes: number; us: number }[]; layerLinearUs: number } {
  const layerLinearUs = linearTimeUs(gpu, model.weight_bytes_per_layer, model.flops_per_token_per_layer);
  return { layerLinearUs, curve: chains.map((x) => ({ tokens: x.tokens, bytes: x.bytes, us: Math.max(0.01, x.chain_us_per_layer - layerLinearUs) })) };
}

/**
 * The compute slowdown per unit of copy time from executor-layout batches that ran under compute
 * (compute_cover >= 1): sum of the layers' extra time over the sum of the copy times; null without such batches.
 */
export function kernelSlowdown(points: readonly LayoutPoint[]): { fraction: number; batches: number; copyUs: number } | null {
  const under = points.filter((p) => p.compute_cover >= 1 && p.us > 0);
  if (under.length === 0) return null;
  const copyUs = under.reduce((t, p) => t + p.us, 0);
  return { fraction: under.reduce((t, p) => t + p.compute_extra_us, 0) / copyUs, batches: under.length, copyUs };
}

/**
 * Per dispatched attention kernel, its time vs context (ascending; kernels with at least two contexts,
 * and only when FP16 is among them: the simulator uses differences to FP16). From the kernels in situ
 * where measured (layer chains, as the executor runs them: FP16 from attention_in_situ at the contexts
 * the other kernels were chained at, piecewise-linear between its points where it was not taken there,
 * or `fp16Between` there where given), else from the kernels alone. Undefined when no kernel besides
 * FP16 was measured.
 */
export function attentionKernelCurves(m: Pick<Measurements, 'kernels'> & Partial<Pick<Measurements, 'attention_in_situ' | 'kernels_in_situ'>>, fp16Between?: (tokens: number) => number): GpuSpec['attention_kernels'] {
  const out: NonNullable<GpuSpec['attention_kernels']> = {};
  const situ = m.kernels_in_situ ?? [];
  const fp16 = [...(m.attention_in_situ ?? [])].sort((a, b) => a.tokens - b.tokens);
  const at = [...new Set(situ.map((x) => x.tokens))];
  const rows: { precision: string; tokens: number; us: number }[] =
    situ.length > 0 && fp16.length >= 2
      ? [
          // FP16 in situ at the contexts the other kernels were chained at (read off the FP16 chains where
          // they were not taken at the same context)
          // (at the context itself where the FP16 point is a mean around it: the other kernels were timed there)
          ...at.map((t) => {
            const x = fp16.find((p) => p.tokens === t);
            return { precision: 'fp16', tokens: t, us: x ? (x.us_at_context ?? x.us) : fp16Between ? fp16Between(t) : interpolate(fp16, t) };
          }),
          ...situ.map((x) => ({ precision: x.precision, tokens: x.tokens, us: x.us })),
        ]
      : m.kernels.filter((k) => k.kind === 'attention' && k.context !== undefined).map((k) => ({ precision: k.precision!, tokens: k.context!, us: k.us }));
  for (const name of ATTENTION_KERNELS) {
    const pts = rows
      .filter((k) => k.precision === name)
      .map((k) => ({ tokens: k.tokens, us: r2(k.us) }))
      .sort((a, b) => a.tokens - b.tokens);
    if (pts.length >= 2) out[name] = pts;
  }
  return out.fp16 && Object.keys(out).length > 1 ? out : undefined;
}
