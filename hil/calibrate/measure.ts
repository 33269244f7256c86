/**
 * The calibration microbenchmarks: pinned copies vs size per direction (and pageable, recorded),
 * both directions at once, a copy under attention (overlap), attention vs context and precision,
 * GEMV at the model's shapes, pinned copies in the executor's layout (bench/layout-batches.ts) and
 * scattered, and file-tier reads and writes vs request size.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeBackend } from '../addon-types.js';
import { benchAttention, mixedAtInt8Bits } from '../bench/attention-bench.js';
import { buildDeviceCache } from '../bench/device-cache.js';
import { benchBidirectional, benchCopies, benchDeviceCopy } from '../bench/copy-bench.js';
import { benchGemv } from '../bench/gemv-bench.js';
import { benchLayoutCopies, type LayoutPoint } from '../bench/layout-copy-bench.js';
import { ComputeGate } from '../bench/gate.js';
import { benchOverlap } from '../bench/overlap-bench.js';
import { median } from '../timing/median.js';
import { loadHil } from '../load-addon.js';
import { blockBytes, type Precision } from '../kv-format.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { MIXED_SPARSE_CHANGE_SHARE } from '../../sim/hardware/profile.js';
import type { Point } from './fit-linear.js';
import { layoutBatches, layoutOptions, smallSizes } from '../bench/layout-batches.js';
import { benchConvertKernels, type ConvertPoint } from '../bench/convert-bench.js';
import { benchIssue, type IssuePoint } from '../bench/issue-bench.js';
import { benchQueueDepth, type QueueDepthResult } from '../bench/queue-depth-bench.js';
import { benchHostConvert, type HostConvertPoint } from '../bench/host-convert-bench.js';
import { benchSpread, SPREAD_SLOTS, type SpreadPoint } from '../bench/spread-bench.js';
import { warmLink } from '../timing/link-warmup.js';
import { type HostIssueProbe, LIST_COPIES, PROBE_COPY_BYTES, probeHostIssue } from '../timing/host-issue-probe.js';
import { benchPlanIssue, convertCostFromPlan, copyCostFromPlan, launchPaceFromPlan, type PlanIssueResult } from '../bench/plan-issue-bench.js';
import { type FileBatchPoint, measureFileBatches, measureFileWriteBatches } from './file-batches.js';
import { DEFAULT_IO_THREADS } from '../executor/run-plan.js';

/** the size of the calibration's large copies (the pace of copies far beyond the layout batches' runs, e.g. a streamed layer's weights) */
export const BULK_COPY_BYTES = 256 << 20;

/** a second timing of the layout batches, and which batch the fit took from which (retime-copies.ts) */
export interface LayoutRetimed {
  /** when the second timings began (ISO time) */
  at: string;
  idle: LayoutPoint[];
  gemv: LayoutPoint[];
  /** per condition, the batches compared (the calibration's) and those whose second timing was the lesser (direction and label) */
  compared: { idle: number; gemv: number };
  from_second: { idle: string[]; gemv: string[] };
  /** the profile's H2D alpha (us) from the first timings and from the lesser ones */
  h2d_alpha_us?: [number, number];
}

export interface Measurements {
  /** the GPU's SM count (device info; the attention dispatch's slots are its resident blocks per SM times this); absent from older measurements */
  multiprocessors?: number;
  h2d: Point[];
  d2h: Point[];
  pageable: { direction: string; bytes: number; us: number }[];
  d2d_GBps: number;
  bidirectional_GBps: number;
  overlap: { maskingEfficiency: number; computeMs: number; bothMs: number } | null;
  kernels: (Point & { kind: 'attention' | 'gemv'; precision?: string; context?: number })[];
  /**
   * attention as the executor runs it (FP16 KV): a chain of `layers` x (marks, attention, marks,
   * GEMV of the layer's weights) timed end to end; per point, us = chain time per layer - the same
   * chain's without the attention, timed in the same trials (ChainPoint; launch gaps and a cold L2
   * after each GEMV are in it)
   */
  attention_in_situ: ChainPoint[];
  /**
   * every other dispatched attention kernel in the same chains, at the attention contexts: us = chain
   * time per layer - the same chain's without the attention, as attention_in_situ (absent from
   * measurements taken before they existed)
   */
  kernels_in_situ?: { precision: AttentionCase; tokens: number; bytes: number; us: number; chain_us_per_layer: number; gemv_us_per_layer?: number; plans?: ChainPlan[] }[];
  /**
   * pinned copies one after another on the memory stream from scattered host slots (256 KiB
   * stride) while the compute stream streams GEMV weights (HBM busy), per direction and size;
   * us per copy (reported for comparison; the layout batches set the pcie link)
   */
  h2d_in_situ: Point[];
  d2h_in_situ: Point[];
  /**
   * pinned copies in the executor's own layout, batch by batch (H2D runs of 1..16 blocks into the
   * staging ring, D2H slab slots to host slots) under attention + GEMV layers: us per batch
   */
  h2d_layout: LayoutPoint[];
  d2h_layout: LayoutPoint[];
  /**
   * the same batches (mixed ones too) beside the layer GEMV alone, back to back on the compute stream:
   * the condition the simulator prices copies under compute in (gpu.copy_under_compute "gemv"), so the
   * per-batch copy fit takes its under-compute terms from these (absent from measurements taken before
   * they existed: the fit then takes the attention + GEMV batches)
   */
  h2d_layout_gemv?: LayoutPoint[];
  d2h_layout_gemv?: LayoutPoint[];
  mixed_layout_gemv?: LayoutPoint[];
  /** the same batches with nothing on the compute stream (the GPU otherwise idle) */
  h2d_layout_idle: LayoutPoint[];
  d2h_layout_idle: LayoutPoint[];
  /**
   * batches whose groups alternate a demotion (D2H) and a promotion (H2D) of single blocks, under
   * compute and idle: with the single-direction fits they give the cost of a direction change
   * (absent from measurements taken before they existed)
   */
  mixed_layout?: LayoutPoint[];
  mixed_layout_idle?: LayoutPoint[];
  /**
   * one block's quantize / dequantize kernel on the memory stream, back to back, idle and under
   * compute (absent from measurements taken before they existed)
   */
  convert_kernels?: ConvertPoint[];
  /**
   * the host's time per op through the executor's issue path (bench/issue-bench.ts): copies in the
   * prefetch layout at the model's block sizes, event records, GEMV, block conversion and attention
   * launches, as issued and (cuda) behind a compute gate (absent from measurements taken before they
   * existed; conversions absent from those taken before they were timed)
   */
  issue?: IssuePoint[];
  /**
   * (cuda) how many launches the host can issue ahead of the GPU before a launch waits
   * (bench/queue-depth-bench.ts; absent from measurements taken before it existed)
   */
  launch_queue?: QueueDepthResult;
  /**
   * (cuda) single-block copies against the spread of their host slots, beside the layer GEMV and idle
   * (bench/spread-bench.ts): what a link direction's spread_us is fitted from (absent from measurements
   * taken before it existed)
   */
  spread?: SpreadPoint[];
  /**
   * the host's time per block to convert it between widths on its CPU, as the executor does in and
   * between host tiers (bench/host-convert-bench.ts; absent from measurements taken before it existed)
   */
  host_convert?: HostConvertPoint[];
  /**
   * (cuda, with MeasureOptions.plan) the host's issue time per step of a whole plan run by the executor
   * (bench/plan-issue-bench.ts): a policy's small-copy run at the overlap context (absent otherwise, and
   * from measurements taken before it existed)
   */
  plan_issue?: PlanIssueResult;
  /**
   * (cuda, with MeasureOptions.plan) the same for a plan that moves nothing (LAUNCH_PLAN), each step
   * issued on an idle GPU: its records, kernels and attention launches as the executor's own loop issues
   * them, which sets the pace of gpu.issue_record_us, issue_kernel_us, issue_convert_us and
   * issue_attention_us against the same ops issued in a row (the converting plan then replaces
   * issue_convert_us where it gives a cost). Absent otherwise, where its timing failed
   * (plan_launch_error), and from measurements taken before it existed
   */
  plan_launch?: PlanIssueResult;
  /** (cuda, with MeasureOptions.plan) why plan_launch was not timed, where its timing failed */
  plan_launch_error?: string;
  /**
   * (cuda, with MeasureOptions.plan) the same for a plan that converts blocks between widths now and
   * then (CONVERT_PLAN: SmartKV re-assigning its precisions as blocks complete), whose conversion
   * launches price gpu.issue_convert_us as the executor's own loop issues them (absent otherwise, and
   * from measurements taken before it existed). It runs with its compute kernels taken out
   * (`compute: false`; in measurements taken before, as lowered): with them, the thousands of launches of
   * a converting step fill the launch queue behind the layers' attention and the host's time per launch
   * includes its waits for room, which the simulator models apart (gpu.launch_queue_ops)
   */
  plan_convert?: PlanIssueResult;
  /**
   * (cuda, with MeasureOptions.plan) further timings of a plan's issue (PACE_READINGS: the plan of
   * plan_issue before the first benchmark and after the last), each with its own policy, budget and start
   * time (`at`): with plan_issue, the host's time per copy as it wandered over the calibration. A timing
   * that failed is left out, so an entry's start time, not its place, says when it ran; an entry's own
   * policy, not PACE_READINGS, says which plan it timed. Absent otherwise, and from measurements taken
   * before they were
   */
  plan_issue_rounds?: PlanIssueResult[];
  /**
   * (cuda) the host's pace at issuing copies (timing/host-issue-probe.ts), right after the plan's issue
   * was timed: the reference for the same probe taken before each run (absent from measurements taken
   * before it existed)
   */
  host_probe?: HostIssueProbe;
  /**
   * (cuda) the same probe right before each timing of the host's issue costs, us per copy: the lists of
   * ops issued in a row (`issue`), the plan that moves nothing (`plan_launch`), the calibration's plan
   * (`plan_issue`) and the converting plan (`plan_convert`), kept as a record of the host's pace at each. The costs stay as timed: put at one
   * pace by these probes, they predicted a stored grid's hardware runs worse
   * (lab/validate/run-8d45b1a-h200-hostpace-seed211-2026-11-28/README.md). Absent from measurements taken before them, and a probe that failed is absent
   */
  host_probes_before?: HostProbesBefore;
  layout_info: { block_bytes: number; max_blocks: number; context_tokens: number; layer_us: number; verified_copies: number; /** the quantized block sizes timed as single-block batches (absent in calibrations stored before them) */ small_bytes?: number[] };
  /**
   * the layout batches the profile's hbm link is fitted to (idle and beside the layer GEMV) timed a
   * second time, later (retime-copies.ts): `h2d_layout_idle` .. `mixed_layout_gemv` then hold, per
   * batch, the lesser of the two timings, and this the second timings as taken (absent where the
   * batches were timed once)
   */
  layout_retimed?: LayoutRetimed;
  /** (cuda) the device's memory in bytes (absent from measurements taken before it was recorded) */
  memory_bytes?: number;
  /** the date (UTC) the sources name (absent from measurements taken before it was recorded) */
  date?: string;
  /**
   * (cuda) one large pinned copy's time per direction (BULK_COPY_BYTES, two back to back a trial on
   * the memory stream, median over the trials): the pace of copies far longer than the layout batches'
   * runs (absent on the host backend, and from measurements taken before it existed)
   */
  bulk?: { bytes: number; h2d_us: number; d2h_us: number };
  /**
   * file reads in the executor's own pattern (file-batches.ts): per layer one batch of runs handed to
   * the file tier at once (readBatch) and joined, then a small batch of single blocks; with the
   * executor's I/O thread count. Sets the nvme read link (requests x alpha + bytes / beta).
   */
  file_read_batch: FileBatchPoint[];
  file_batch_info?: { threads: number; direct: boolean; file_bytes: number; block_bytes: number; blocks_per_layer: number; layers: number; ms: number; GBps: number; at: string; h2d_copies: boolean };
  /**
   * file writes in the executor's pattern (file-batches.ts measureFileWriteBatches: a layer's runs
   * written at once, the batch timed to its last write); absent from measurements taken before they were
   */
  file_write_batch?: FileBatchPoint[];
  /** the same batches (one round) at other I/O thread counts: overall rate and per-layer-batch spread (for the record) */
  file_threads_sweep?: { threads: number; GBps: number; ms: number; layer_batch_cv: number }[];
  file_read: Point[];
  file_write: Point[];
  file_direct: boolean | null;
  /** the contexts the context-dependent benchmarks were taken at */
  points: CalibrationPoints;
}

export interface MeasureOptions {
  model: ModelSpec;
  blockTokens: number;
  groupSize: number;
  quick: boolean;
  fileDir: string;
  /** I/O threads of the file tier, as the executor will use (default DEFAULT_IO_THREADS) */
  ioThreads?: number;
  /** the contexts the benchmarks are taken at (default: defaultCalibrationPoints(quick)) */
  points?: CalibrationPoints;
  /** measurements done of all (measurementCount), after each one */
  onProgress?: (done: number, total: number, label?: string) => void;
  /**
   * (cuda) also time the host's issue path on a whole plan (bench/plan-issue-bench.ts), recorded on
   * this hardware profile with this model (preset names or files, as `kvtier run` takes them)
   */
  plan?: { model: string; hardware: string };
}

/**
 * The context lengths (tokens) the context-dependent benchmarks are taken at: attention kernels
 * (every dispatched kernel at each: a kernel timed only at long contexts would be extrapolated to
 * short ones along its long-context slope), attention in situ (layer chains), the compute under the
 * executor-layout copies, the blocks per layer of the executor-pattern file reads, and (CUDA) the
 * attention under the overlap copy. A caller that validates on other contexts passes a list that
 * leaves them out (hil/validate/calibration-points.ts).
 */
export interface CalibrationPoints {
  attention_contexts: number[];
  situ_contexts: number[];
  layout_context: number;
  file_context: number;
  overlap_context: number;
}

export function defaultCalibrationPoints(quick: boolean): CalibrationPoints {
  return quick
    ? { attention_contexts: [256, 1024], situ_contexts: [256, 1024], layout_context: 1024, file_context: 1024, overlap_context: 32768 }
    : {
        attention_contexts: [1024, 2048, 4096, 8192, 16384, 32768],
        situ_contexts: [1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768],
        layout_context: 8192,
        file_context: 8192,
        overlap_context: 32768,
      };
}

/** throws unless every context is a positive integer and each list is non-empty */
export function checkCalibrationPoints(p: CalibrationPoints): CalibrationPoints {
  const ok = (x: number) => Number.isInteger(x) && x > 0;
  for (const k of ['attention_contexts', 'situ_contexts'] as const) {
    if (!Array.isArray(p[k]) || p[k].length === 0 || !p[k].every(ok)) throw new Error(`calibration points: ${k} must be a non-empty list of positive integers (got ${JSON.stringify(p[k])})`);
  }
  for (const k of ['layout_context', 'file_context', 'overlap_context'] as const) {
    if (!ok(p[k])) throw new Error(`calibration points: ${k} must be a positive integer (got ${JSON.stringify(p[k])})`);
  }
  return p;
}

/** Attention kernels benchmarked: every one the executor dispatches (quick: fewer trials, not fewer kernels). */
export type AttentionCase = Precision | 'mixed' | 'mixed_sparse' | 'mixed_interleaved' | 'mixed_kinds';
const ATTENTION_PRECISIONS: readonly AttentionCase[] = ['fp16', 'int8', 'int4', 'int2', 'mixed', 'mixed_sparse', 'mixed_interleaved', 'mixed_kinds'];

/**
 * The plan whose issue the calibration times (bench/plan-issue-bench.ts): KIVI at 10% on a generated trace
 * at the overlap context, its offloaded blocks fetched back every step as thousands of small copies; its
 * steps per run.
 */
export const CALIBRATION_PLAN = { policy: 'kivi', budget: '10%' } as const;
export const calibrationPlanSteps = (quick: boolean): number => (quick ? 12 : 24);
/**
 * The plan whose conversion launches the calibration times: SmartKV at 40% on a generated trace at the
 * overlap context re-assigns its blocks' precisions each time a block completes, converting thousands of
 * blocks in HBM in that step; its other steps convert none. (At 20% it also moves blocks out of HBM and
 * converts some on the host's CPU, and a step where the host waits on that is left out.) Its steps: three
 * blocks' worth of tokens and two more, so that at least two steps convert whatever the context's place
 * in its block.
 */
export const CONVERT_PLAN = { policy: 'smartkv', budget: '40%' } as const;
/**
 * The plan that moves nothing whose records, kernels and attention launches the calibration times in the
 * executor's loop (launchPaceFromPlan): every block in HBM at FP16, each step issued on an idle GPU
 * (`settled`), so that no launch waits for room in the launch queue however long the model's step runs
 * on the GPU.
 */
export const LAUNCH_PLAN = { policy: 'full', budget: '100%' } as const;
export const convertPlanSteps = (blockTokens: number): number => 3 * blockTokens + 2;

/**
 * Further timings of the calibration's plan, one before the first benchmark and one after the last: with
 * the timing that sets gpu.issue_copy_us between them, the host's time per copy at three moments of the
 * calibration. The host's pace wanders by about +-10% over seconds to tens of seconds
 * (lab/notes/HIL-NOTES.md), so one timing is a sample of it. A plan of large copies would not read the
 * host: uniform INT8 at this context on Llama-2-7B copies 132 KiB blocks at about 5.6 us each on the link,
 * so it goes at the GPU's copy pace.
 */
export const PACE_READINGS = 2;

/** the host issue probe (us per copy) right before each timing of the host's issue costs (Measurements.host_probes_before) */
export interface HostProbesBefore {
  issue?: number;
  plan_launch?: number;
  plan_issue?: number;
  plan_convert?: number;
}

/** The measurements measureAll takes, in the units of its progress: each benchmark, each attention (precision, context), each GEMV shape, each file-thread count. */
export function measurementCount(o: Pick<MeasureOptions, 'model' | 'quick' | 'plan'>, pts: CalibrationPoints, cuda: boolean): number {
  const attention = ATTENTION_PRECISIONS.length * pts.attention_contexts.length;
  const gemv = 1 + (o.model.other_weight_bytes > 0 ? 1 : 0) + (o.quick ? 0 : 2);
  // copies, device copy, bidirectional, (cuda) overlap; chain, the other kernels' chains, copies in situ, layout, layout beside GEMVs, layout idle, (cuda) spread copies, convert kernels, host conversions, issue costs, (cuda) launch queue, (cuda with a plan) the launch pace in a plan, issue costs in a plan, conversions in a plan and the host pace readings, file, (full) 4 thread counts, batches
  return 3 + (cuda ? 1 : 0) + attention + gemv + 1 + (ATTENTION_PRECISIONS.length - 1) + 8 + (cuda ? 2 : 0) + (cuda && o.plan ? 3 + PACE_READINGS : 0) + (o.quick ? 0 : 4) + 1;
}

/**
 * Block precisions of a benchmarked attention table: one precision throughout; 'mixed' the
 * calibration's FP16-ends table; 'mixed_sparse' INT2 and INT8 in runs of 1 / MIXED_SPARSE_CHANGE_SHARE
 * blocks (a change at that share of the consecutive pairs); 'mixed_interleaved' INT2 and INT8 in turn;
 * 'mixed_kinds' the 'mixed_sparse' table with its blocks at a third and two thirds of the table INT4 and
 * INT3 (four quantized precisions, four changes more).
 */
export function tableOf(c: AttentionCase, mixed: (i: number, n: number) => Precision): (i: number, n: number) => Precision {
  if (c === 'mixed') return mixed;
  const run = Math.round(1 / MIXED_SPARSE_CHANGE_SHARE);
  if (c === 'mixed_sparse') return (i) => (Math.floor(i / run) % 2 === 1 ? 'int8' : 'int2');
  if (c === 'mixed_kinds') return (i, n) => (i === Math.floor(n / 3) ? 'int4' : i === Math.floor((2 * n) / 3) ? 'int3' : Math.floor(i / run) % 2 === 1 ? 'int8' : 'int2');
  if (c === 'mixed_interleaved') return (i) => (i % 2 === 1 ? 'int8' : 'int2');
  return () => c;
}

export async function measureAll(b: NativeBackend, o: MeasureOptions, log: (s: string) => void): Promise<Measurements> {
  const cuda = b.kind === 'cuda';
  // (cuda) the host link busy both ways right before each copy benchmark, as it is during a run's steps
  const warm = async (what: string) => {
    if (!cuda) return;
    const w = await warmLink(b);
    log(`  link warm-up before ${what}: ${w.rounds} round trips of 64 MiB in ${w.ms.toFixed(0)} ms, the last at ${w.h2d_GBps.toFixed(1)} GB/s H2D, ${w.d2h_GBps.toFixed(1)} D2H`);
  };
  const pts = checkCalibrationPoints(o.points ?? defaultCalibrationPoints(o.quick));
  const total = measurementCount(o, pts, cuda);
  let done = 0;
  const tick = (label: string) => o.onProgress?.(++done, total, label);
  o.onProgress?.(0, total, 'copies');
  const plan_issue_rounds: PlanIssueResult[] = [];
  let issue: IssuePoint[] = [];
  const planSteps = calibrationPlanSteps(o.quick);
  let plan_launch: PlanIssueResult | undefined;
  let plan_launch_error: string | undefined;
  const costs = () => pacedIssueCosts(issue, plan_launch);
  const perCopy = (r: PlanIssueResult): string => {
    const c = copyCostFromPlan(r.steps, costs());
    return `${c.copies.toFixed(0)} copies per step: ${c.us.toFixed(2)} us per copy on the host (median of ${c.per_step.length} steps)`;
  };
  const perConvert = (r: PlanIssueResult, copies: PlanIssueResult): string => {
    const c = convertCostFromPlan(r.steps, { copy: copyCostFromPlan(copies.steps, costs()).us, ...costs() });
    return `${c.conversions.toFixed(0)} conversion launches per converting step: ${c.us.toFixed(2)} us per launch on the host (median of ${c.per_step.length} steps; ${issueCostsOf(issue).convert.toFixed(2)} us issued in a row)`;
  };
  // (cuda with a plan) a further timing of the calibration's plan, kept apart from the one that sets
  // gpu.issue_copy_us; a failed timing is logged and left out
  const paceReading = async (when: string) => {
    if (!(cuda && o.plan)) return;
    log(`host pace ${when}: ${CALIBRATION_PLAN.policy} at ${CALIBRATION_PLAN.budget} on a generated ${pts.overlap_context}-token trace, ${planSteps} steps, run by the executor`);
    try {
      const r = await benchPlanIssue(b, { model: o.plan.model, hardware: o.plan.hardware, contextTokens: pts.overlap_context, steps: planSteps, ...CALIBRATION_PLAN, blockTokens: o.blockTokens, groupSize: o.groupSize, dir: o.fileDir });
      plan_issue_rounds.push(r);
      if (issue.length) log(`  ${perCopy(r)}`);
    } catch (e) {
      log(`  host pace reading not taken: ${(e as Error).message}`);
    }
    tick(`host pace ${when}`);
  };
  await paceReading('before the first benchmark');
  const sizes = (o.quick ? [64, 256, 1024, 4096] : [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536]).map((k) => k * 1024);
  log(`copies: ${sizes.length} sizes, pinned${cuda ? ' and pageable' : ''}`);
  await warm('copies');
  const rows = await benchCopies(b, { sizes, hostKinds: cuda && !o.quick ? ['pinned', 'pageable'] : ['pinned'], trials: o.quick ? 3 : 7, bytesPerTrial: o.quick ? 8 << 20 : 256 << 20 });
  tick('copies');
  const pin = (d: 'h2d' | 'd2h') => rows.filter((r) => r.direction === d && r.hostKind === 'pinned').map((r) => ({ bytes: r.bytes, us: r.usPerCopy, label: `${r.bytes} B` }));
  const pageable = rows.filter((r) => r.hostKind === 'pageable').map((r) => ({ direction: r.direction, bytes: r.bytes, us: r.usPerCopy }));
  const bulkRows = cuda ? await benchCopies(b, { sizes: [BULK_COPY_BYTES], hostKinds: ['pinned'], trials: o.quick ? 3 : 5, bytesPerTrial: 2 * BULK_COPY_BYTES }) : [];
  const bulkUs = (d: 'h2d' | 'd2h') => bulkRows.find((r) => r.direction === d)!.usPerCopy;
  const bulk = bulkRows.length ? { bytes: BULK_COPY_BYTES, h2d_us: bulkUs('h2d'), d2h_us: bulkUs('d2h') } : undefined;
  if (bulk) log(`    one ${BULK_COPY_BYTES >> 20} MiB copy: H2D ${(bulk.bytes / bulk.h2d_us / 1e3).toFixed(2)} GB/s, D2H ${(bulk.bytes / bulk.d2h_us / 1e3).toFixed(2)} GB/s`);
  const d2d = await benchDeviceCopy(b, o.quick ? 16 << 20 : 256 << 20, o.quick ? 3 : 7);
  tick('device copy');
  const bidir = await benchBidirectional(b, o.quick ? 1 << 20 : 8 << 20, o.quick ? 4 : 32, o.quick ? 2 : 5);
  tick('bidirectional copies');
  const overlap = cuda ? await benchOverlap(b, { contextTokens: pts.overlap_context, attnRepeat: 20, slabBytes: 2 << 20, slabs: 16 }) : null;
  if (cuda) tick('overlap');
  log('kernels: attention vs context and precision, GEMV at the model shapes');
  const m = o.model;
  const contexts = pts.attention_contexts;
  const kernels: Measurements['kernels'] = [];
  // every kernel the executor dispatches: one precision throughout, and the per-block table ('mixed': the
  // bench's table at INT8's average bits, FP16 sink and recent blocks, INT4 between)
  const mixed = mixedAtInt8Bits({ kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize });
  const precs = ATTENTION_PRECISIONS;
  // on cuda every trial behind a gate (bench/gate.ts), so that the host's time to launch a trial's
  // first call is not timed (measured on the H100: ~2.7 us per call at 32k, lab/notes/HIL-NOTES.md)
  const gate = cuda ? await ComputeGate.open(b) : undefined;
  try {
    for (const precision of precs) {
      for (const ctx of contexts) {
        const r = await benchAttention(b, { label: precision, contextTokens: ctx, qHeads: m.q_heads, kvHeads: m.kv_heads, headDim: m.head_dim, blockTokens: o.blockTokens, groupSize: o.groupSize, precisionOf: tableOf(precision, mixed.precisionOf), ...(gate ? { gate } : {}) }, o.quick ? 3 : 10);
        kernels.push({ kind: 'attention', precision, context: ctx, bytes: r.kvBytes, us: r.us, label: `attention ${precision} ${ctx}` });
        if (gate) log(`  attention ${precision} ${ctx}: ${r.us.toFixed(1)} us (gate held in ${r.gateHeld} of ${r.gateTrials} trials)`);
        tick(`attention ${precision} ${ctx}`);
      }
    }
  } finally {
    gate?.free();
  }
  const rowsW = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
  const shapes: [string, number, number][] = [[`layer ${rowsW}x${m.hidden}`, rowsW, m.hidden]];
  if (m.other_weight_bytes > 0) shapes.push([`lm-head`, Math.max(8, Math.round(m.other_weight_bytes / 4 / m.hidden)), m.hidden]);
  if (!o.quick) shapes.push(['4096x4096', 4096, 4096], ['14336x4096', 14336, 4096]);
  for (const [label, rows, cols] of shapes) {
    const r = await benchGemv(b, label, rows, cols, o.quick ? 3 : 10);
    kernels.push({ kind: 'gemv', bytes: rows * cols * 2, us: r.us, label: `gemv ${label}` });
    tick(`gemv ${label}`);
  }
  log('attention in situ: layer chains (attention + GEMV) vs context');
  const situContexts = pts.situ_contexts;
  const chainTrials = o.quick ? 5 : 7;
  // (cuda) the first context's chain repeated for CHAIN_WARM_MS before any chain is timed, as a run's steps follow one another
  // (each context of CHAIN_PHASE_MIN_BLOCKS blocks or more timed around it as well: the point is the mean over the kernel's split of the context)
  const attention_in_situ = await measureChain(b, o, situContexts, rowsW, m.hidden, chainTrials, { warmMs: cuda ? CHAIN_WARM_MS : 0, phases: CHAIN_PHASE_BLOCKS });
  tick('attention in situ');
  log('attention kernels in situ: the same layer chains with each other kernel, at the attention contexts');
  const kernels_in_situ: NonNullable<Measurements['kernels_in_situ']> = [];
  for (const precision of precs.filter((p) => p !== 'fp16')) {
    const pts = await measureChain(b, o, contexts, rowsW, m.hidden, chainTrials, { precisionOf: tableOf(precision, mixed.precisionOf) });
    for (const x of pts) kernels_in_situ.push({ precision, ...x });
    log(`  ${precision}: ${pts.map((x) => `${x.tokens} ${x.us.toFixed(1)}`).join(', ')} us per layer beyond the GEMV`);
    tick(`attention ${precision} in situ`);
  }
  log('copies in situ: scattered host slots, under GEMV');
  if (cuda) await warm('copies in situ');
  const situ = cuda ? await measureCopiesInSitu(b, rowsW, m.hidden, o.quick ? 2 : 5) : { h2d: pin('h2d'), d2h: pin('d2h') };
  tick('copies in situ');
  log('copies in the executor layout: H2D runs into the staging ring, D2H slab slots, demotions and promotions in turn, single quantized blocks both ways, under attention + GEMV, beside the layer GEMV alone and on an idle GPU');
  await warm('layout copies');
  const layout = await measureLayoutCopies(b, o, pts.layout_context);
  tick('layout copies');
  await warm('layout copies, beside GEMVs');
  const besideGemv = await measureLayoutCopies(b, o, pts.layout_context, 'gemv');
  tick('layout copies, beside GEMVs');
  await warm('layout copies, idle');
  const idle = await measureLayoutCopies(b, o, pts.layout_context, false);
  tick('layout copies, idle');
  let spread: SpreadPoint[] | undefined;
  if (cuda) {
    log(`single-block copies against the spread of their host slots (drawn from ${SPREAD_SLOTS.join(', ')} slots a layer), beside the layer GEMV and idle`);
    // (a bench that fails leaves the link without spread_us, as a calibration before it did)
    try {
      spread = await benchSpread(b, { geometry: { kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize }, gemvRows: Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden)), gemvCols: m.hidden, trials: o.quick ? 2 : 5 });
      for (const x of spread) log(`  ${x.condition === 'gemv' ? 'beside GEMV' : 'idle'} ${x.direction} from ${x.slots} slots: ${x.us.toFixed(2)} us per copy, ${x.doublings.toFixed(2)} doublings per copy`);
    } catch (e) {
      log(`warning: the spread bench failed (${(e as Error).message}); the hbm link prices no spread of host slots`);
    }
    tick('spread copies');
  }
  log('block (de)quantization kernels on the memory stream, idle and under compute');
  const convert_kernels = await measureConvertKernels(b, o, cuda);
  tick('convert kernels');
  log('block conversions on the host (in and between host tiers)');
  const host_convert = benchHostConvert({ geometry: { kvHeads: o.model.kv_heads, blockTokens: o.blockTokens, headDim: o.model.head_dim, groupSize: o.groupSize }, trials: o.quick ? 3 : 5 });
  for (const x of host_convert) log(`  ${x.from_bits} -> ${x.to_bits} bits: ${x.us.toFixed(1)} us per block`);
  tick('host conversions');
  // (cuda) the host's pace right before each timing of its issue costs; a failed probe is logged and left out
  const host_probes_before: HostProbesBefore = {};
  const probeBefore = async (key: keyof HostProbesBefore) => {
    if (!cuda) return;
    try {
      const r = await probeHostIssue(b);
      host_probes_before[key] = r.copy_us;
      log(`  host issue probe before the ${key.replace('_', ' ')} timing: ${r.copy_us.toFixed(2)} us per copy`);
    } catch (e) {
      log(`  host issue probe before the ${key.replace('_', ' ')} timing not taken: ${(e as Error).message}`);
    }
  };
  log("host issue costs: copies, event records, GEMV, conversion and attention launches through the executor's issue path");
  await probeBefore('issue');
  issue = await measureIssueCosts(b, o);
  for (const x of issue) log(`  ${x.kind}${x.bytes ? ` ${x.bytes} B` : ''}${x.gated ? ' (gated)' : ''}: ${x.us.toFixed(2)} us per op on the host`);
  tick('issue costs');
  let launch_queue: QueueDepthResult | undefined;
  if (cuda) {
    log('launch queue: GEMVs launched back to back until a launch waits for the GPU');
    launch_queue = await benchQueueDepth(b, { trials: o.quick ? 1 : 2 });
    log(`  ${Number.isFinite(launch_queue.ops) ? launch_queue.ops.toFixed(0) : 'no estimate:'} launches ahead of the GPU (${launch_queue.launches} GEMVs of ${launch_queue.gemv_us.toFixed(1)} us)`);
    tick('launch queue');
  }
  let plan_issue: PlanIssueResult | undefined;
  let plan_convert: PlanIssueResult | undefined;
  if (cuda && o.plan) {
    log(`host launch pace in a plan: ${LAUNCH_PLAN.policy} at ${LAUNCH_PLAN.budget} on a generated ${pts.overlap_context}-token trace, ${planSteps} steps, run by the executor, each step on an idle GPU`);
    await probeBefore('plan_launch');
    try {
      plan_launch = await benchPlanIssue(b, { model: o.plan.model, hardware: o.plan.hardware, contextTokens: pts.overlap_context, steps: planSteps, ...LAUNCH_PLAN, blockTokens: o.blockTokens, groupSize: o.groupSize, dir: o.fileDir, settled: true });
      const lp = costs().launch!;
      log(`  ${lp.issued_us.toFixed(1)} us a step against ${lp.listed_us.toFixed(1)} us of its records, kernels and attention launches issued in a row: pace ${lp.factor.toFixed(3)} (median of ${lp.per_step.length} steps)`);
    } catch (e) {
      plan_launch_error = (e as Error).message;
      log(`  launch pace in a plan not timed: ${plan_launch_error}`);
    }
    tick('launch pace in a plan');
    log(`host issue costs in a plan: ${CALIBRATION_PLAN.policy} at ${CALIBRATION_PLAN.budget} on a generated ${pts.overlap_context}-token trace, ${planSteps} steps, run by the executor`);
    await probeBefore('plan_issue');
    plan_issue = await benchPlanIssue(b, { model: o.plan.model, hardware: o.plan.hardware, contextTokens: pts.overlap_context, steps: planSteps, ...CALIBRATION_PLAN, blockTokens: o.blockTokens, groupSize: o.groupSize, dir: o.fileDir });
    log(`  ${perCopy(plan_issue)}`);
    // the timing taken before the first benchmark, priced now that the other ops' costs are known
    for (const r of plan_issue_rounds) log(`  host pace before the first benchmark: ${perCopy(r)}`);
    tick('issue costs in a plan');
    const convertSteps = convertPlanSteps(o.blockTokens);
    log(`host conversion launches in a plan: ${CONVERT_PLAN.policy} at ${CONVERT_PLAN.budget} on a generated ${pts.overlap_context}-token trace, ${convertSteps} steps, run by the executor with its compute kernels taken out`);
    await probeBefore('plan_convert');
    try {
      plan_convert = await benchPlanIssue(b, { model: o.plan.model, hardware: o.plan.hardware, contextTokens: pts.overlap_context, steps: convertSteps, ...CONVERT_PLAN, blockTokens: o.blockTokens, groupSize: o.groupSize, dir: o.fileDir, compute: false });
      log(`  ${perConvert(plan_convert, plan_issue)}`);
    } catch (e) {
      log(`  conversion launches in a plan not timed: ${(e as Error).message}`);
    }
    tick('conversions in a plan');
  }
  let host_probe: HostIssueProbe | undefined;
  if (cuda) {
    try {
      host_probe = await probeHostIssue(b);
      log(`  host issue probe: ${host_probe.copy_us.toFixed(2)} us per copy (${LIST_COPIES} copies of ${PROBE_COPY_BYTES} B a list, the median of ${host_probe.lists_us.length} lists)`);
    } catch (e) {
      log(`  host issue probe not taken: ${(e as Error).message}`);
    }
  }
  const threads = o.ioThreads ?? DEFAULT_IO_THREADS;
  log(`file tier: reads and writes vs request size, ${threads} I/O threads`);
  const file = await measureFile(b, o.fileDir, (o.quick ? [64, 256, 1024] : [64, 256, 1024, 4096, 16384, 65536]).map((k) => k * 1024), o.quick ? 2 : 5, threads);
  tick('file tier');
  const fb = fileBatchOptions(o, threads, pts.file_context);
  const file_threads_sweep: NonNullable<Measurements['file_threads_sweep']> = [];
  if (!o.quick) {
    log('file tier: executor-pattern read batches, one round at 4, 8, 16, 32 I/O threads');
    for (const t of [4, 8, 16, 32]) {
      const r = await measureFileBatches(b, { ...fb, threads: t, rounds: 1 });
      const layer = r.points.filter((p) => p.kind === 'layer').map((p) => p.us / p.bytes);
      const mean = layer.reduce((a, x) => a + x, 0) / layer.length;
      const sd = Math.sqrt(layer.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, layer.length - 1));
      file_threads_sweep.push({ threads: t, GBps: r.GBps, ms: r.ms, layer_batch_cv: sd / mean });
      tick(`file batches, ${t} threads`);
    }
  }
  log(`file tier: executor-pattern read batches (${fb.layers} layers x ${fb.blocksPerLayer} blocks of ${fb.blockBytes} B, ${fb.rounds} rounds, ${threads} I/O threads)`);
  const batches = await measureFileBatches(b, fb);
  tick('file batches');
  log(`file tier: executor-pattern write batches (${fb.layers} layers, ${WRITE_ROUNDS} rounds: every run's write started at once, as the executor writes a layer's demotions)`);
  const writes = await measureFileWriteBatches(b, { ...fb, rounds: WRITE_ROUNDS });
  log(`  ${writes.points.length} batches, ${(writes.ms).toFixed(1)} ms at ${writes.GBps.toFixed(3)} GB/s`);
  await paceReading('after the last benchmark');
  return { h2d: pin('h2d'), d2h: pin('d2h'), pageable, d2d_GBps: d2d.GBps, bidirectional_GBps: bidir.totalGBps, overlap: overlap ? { maskingEfficiency: overlap.maskingEfficiency, computeMs: overlap.computeMs, bothMs: overlap.bothMs } : null, kernels, attention_in_situ, kernels_in_situ, h2d_in_situ: situ.h2d, d2h_in_situ: situ.d2h, h2d_layout: layout.h2d, d2h_layout: layout.d2h, h2d_layout_gemv: besideGemv.h2d, d2h_layout_gemv: besideGemv.d2h, mixed_layout_gemv: besideGemv.mixed, h2d_layout_idle: idle.h2d, d2h_layout_idle: idle.d2h, mixed_layout: layout.mixed, mixed_layout_idle: idle.mixed, convert_kernels, host_convert, issue, ...(launch_queue ? { launch_queue } : {}), ...(spread ? { spread } : {}), ...(plan_issue ? { plan_issue } : {}), ...(plan_launch ? { plan_launch } : {}), ...(plan_launch_error !== undefined ? { plan_launch_error } : {}), ...(plan_convert ? { plan_convert } : {}), ...(plan_issue_rounds.length ? { plan_issue_rounds } : {}), ...(host_probe ? { host_probe } : {}), ...(Object.keys(host_probes_before).length ? { host_probes_before } : {}), layout_info: layout.info, ...(bulk ? { bulk } : {}), ...file, file_read_batch: batches.points, file_batch_info: { threads: batches.threads, direct: batches.direct, file_bytes: batches.file_bytes, block_bytes: fb.blockBytes, blocks_per_layer: fb.blocksPerLayer, layers: fb.layers, ms: batches.ms, GBps: batches.GBps, at: batches.at, h2d_copies: batches.h2d_copies }, ...(file_threads_sweep.length ? { file_threads_sweep } : {}), file_write_batch: writes.points, points: pts };
}

/** one block's (de)quantization kernels at the model's block geometry (on cuda behind a compute gate) */
export async function measureConvertKernels(b: NativeBackend, o: Pick<MeasureOptions, 'model' | 'blockTokens' | 'groupSize' | 'quick'>, cuda: boolean): Promise<ConvertPoint[]> {
  const m = o.model;
  const geometry = { kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize };
  const rows = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
  const gate = cuda ? await ComputeGate.open(b) : undefined;
  try {
    return await benchConvertKernels(b, { geometry, kernels: cuda ? 128 : 4, trials: o.quick ? 2 : 5, gemvRows: cuda ? rows : 64, gemvCols: cuda ? m.hidden : 64, ...(gate ? { gate } : {}) });
  } finally {
    gate?.free();
  }
}

/**
 * rounds of the executor-pattern write batches: with 4 layers a round, three rounds time all six run
 * lengths of the batches (1, 2, 4, 9, 24 blocks and whole layers; each round starts one length further
 * on), 12 batches, where one round timed four lengths once each and the write line's alpha rested on a
 * single one-block batch (one lease's calibration read 149 us where the one before read 50)
 */
export const WRITE_ROUNDS = 3;

/** the as-issued median per op of the issue bench's records, GEMV, conversion and attention launches (NaN where a kind has no trials) */
export function issueCostsOf(points: readonly IssuePoint[]): { record: number; kernel: number; convert: number; attention: number } {
  const of = (kind: IssuePoint['kind']) => {
    // (the points the profile's costs are taken from: every trial finite)
    const xs = points.filter((x) => x.kind === kind && !x.gated && x.trials_us.length > 0 && x.trials_us.every(Number.isFinite)).flatMap((x) => x.trials_us);
    return xs.length ? median(xs) : Number.NaN;
  };
  return { record: of('record'), kernel: of('kernel'), convert: of('convert'), attention: of('attention') };
}

/**
 * The per-op issue costs of issueCostsOf with records, kernels, conversions and attention launches put at
 * the pace of the executor's loop over a plan that moves nothing (launchPaceFromPlan), where that plan
 * was timed and gives a positive pace; otherwise as issued in a row.
 */
export function pacedIssueCosts(points: readonly IssuePoint[], launchPlan: PlanIssueResult | undefined): { record: number; kernel: number; convert: number; attention: number; pace: number; launch?: ReturnType<typeof launchPaceFromPlan> } {
  const listed = issueCostsOf(points);
  const launch = launchPlan ? launchPaceFromPlan(launchPlan.steps, listed) : undefined;
  const f = launch ? launch.factor : Number.NaN;
  if (!(Number.isFinite(f) && f > 0)) return { ...listed, pace: Number.NaN, ...(launch ? { launch } : {}) };
  return { record: listed.record * f, kernel: listed.kernel * f, convert: listed.convert * f, attention: listed.attention * f, pace: f, launch: launch! };
}

/** the host's issue costs (bench/issue-bench.ts; on cuda also behind a compute gate), copies at an FP16 block and at INT8, INT4 and INT2 blocks of the model */
export async function measureIssueCosts(b: NativeBackend, o: Pick<MeasureOptions, 'model' | 'blockTokens' | 'groupSize' | 'quick'>): Promise<IssuePoint[]> {
  const m = o.model;
  const g = { kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize };
  const copyBytes = [...new Set([blockBytes(g, 'fp16'), ...quantizedBlockBytes(g)])];
  const gate = b.kind === 'cuda' ? await ComputeGate.open(b) : undefined;
  try {
    // (the host backend computes each attention on the host: fewer ops there)
    return await benchIssue(b, m, { blockTokens: o.blockTokens, groupSize: o.groupSize, copyBytes, trials: o.quick ? 5 : 9, ops: gate ? 256 : 16, ...(gate ? { gate } : {}) });
  } finally {
    gate?.free();
  }
}

/**
 * the executor-layout copy batches at the model's block size (and single blocks at its quantized sizes); compute: true = layers of attention at
 * `contextTokens` + the layer GEMV, 'gemv' = the layer GEMV alone, false = nothing (the GPU idle)
 */
export async function measureLayoutCopies(b: NativeBackend, o: Pick<MeasureOptions, 'model' | 'blockTokens' | 'groupSize' | 'quick'>, contextTokens = o.quick ? 1024 : 8192, compute: boolean | 'gemv' = true) {
  const m = o.model;
  const g = { kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize };
  const B = blockBytes(g, 'fp16');
  const maxBlocks = Math.max(64, Math.ceil(contextTokens / o.blockTokens));
  const opts = layoutOptions(B, maxBlocks, quantizedBlockBytes(g));
  const small = smallSizes(opts);
  const plan = layoutBatches(opts);
  const rows = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
  const r = await benchLayoutCopies(b, { plan, geometry: g, qHeads: m.q_heads, contextTokens, gemvRows: rows, gemvCols: m.hidden, trials: o.quick ? 2 : 5, compute: compute !== false, attention: compute !== 'gemv' });
  return {
    h2d: r.points.filter((p) => p.direction === 'h2d'),
    d2h: r.points.filter((p) => p.direction === 'd2h'),
    mixed: r.points.filter((p) => p.direction === 'mixed'),
    info: { block_bytes: B, max_blocks: maxBlocks, context_tokens: contextTokens, layer_us: r.layer_us, verified_copies: r.verified_copies, small_bytes: small },
  };
}

export async function measureCopiesInSitu(b: NativeBackend, rows: number, cols: number, trials: number): Promise<{ h2d: Point[]; d2h: Point[] }> {
  const poolBytes = 1 << 30;
  const devBytes = 64 << 20;
  const pool = b.alloc('pinned', poolBytes);
  const dev = b.alloc('device', devBytes);
  const w = b.alloc('device', rows * cols * 2);
  const x = b.alloc('device', cols * 4);
  const y = b.alloc('device', rows * 4);
  const e0 = b.createEvent();
  const e1 = b.createEvent();
  const out: { h2d: Point[]; d2h: Point[] } = { h2d: [], d2h: [] };
  try {
    b.write(x, 0, new Float32Array(cols));
    for (const dir of ['h2d', 'd2h'] as const) {
      for (const size of [64 << 10, 192 << 10, 512 << 10, 1 << 20, 4 << 20]) {
        const n = Math.max(8, Math.min(256, Math.floor((32 << 20) / size)));
        const per: number[] = [];
        for (let t = 0; t <= trials; t++) {
          // the compute stream keeps HBM busy for longer than the copies take (~50 GB/s)
          const busyUs = ((n * size) / 40e3) * 1.5;
          b.gemv('compute', { w, x, y, rows, cols }, Math.max(2, Math.ceil(busyUs / 120)));
          b.record('memory', e0);
          for (let i = 0; i < n; i++) {
            const host = (((i * 7919 + t * 104729) % 4096) * (1 << 18)) % (poolBytes - size);
            const devOff = (i * size) % (devBytes - size + 1);
            if (dir === 'h2d') b.copy('memory', dev, devOff, pool, host - (host % 4096), size);
            else b.copy('memory', pool, host - (host % 4096), dev, devOff, size);
          }
          b.record('memory', e1);
          await b.synchronize();
          if (t > 0) per.push((b.elapsedMs(e0, e1) * 1000) / n);
        }
        out[dir].push({ bytes: size, us: median(per), label: `${size} B x ${n} in situ` });
      }
    }
  } finally {
    b.destroyEvent(e0);
    b.destroyEvent(e1);
    for (const r of [pool, dev, w, x, y]) b.free(r);
  }
  return out;
}

/** how long (ms) the first layer chain of a cuda calibration is repeated before the chains are timed */
export const CHAIN_WARM_MS = 200;

/**
 * Block offsets around a context at which the FP16 layer chains are also timed, their mean being the
 * point's time: the attention kernel's time does not follow the context smoothly but with where the
 * context falls in the kernel's split of it (on an H100, Llama-2-7B's kernel at 3,073-3,456 tokens took
 * 6-8 us per layer more than at 3,072 and at 3,472-3,584, a pattern that repeats every 32 blocks;
 * lab/notes/HIL-NOTES.md), and the calibration's round contexts fall where it is fastest. Eight
 * offsets 4 blocks apart cover a period of 32 blocks evenly, centred on the context.
 */
export const CHAIN_PHASE_BLOCKS: readonly number[] = [-14, -10, -6, -2, 2, 6, 10, 14];
/**
 * contexts below this many blocks are timed at the context alone. A 32-KV-head model's split on a
 * 132-SM GPU asks for a second, short wave of blocks at 72 blocks and at most contexts from 97 to 287
 * blocks (sim/attention-waves.ts), so the 1,536-token point (96 blocks) is timed around as well: at 98,
 * 102 and 106 blocks its tail wave's warps take 3 chunks each, and the tail wave's price
 * (fit-tail-wave.ts) is fitted over those too, not only over the 4-8 of the contexts from 2k tokens on.
 */
export const CHAIN_PHASE_MIN_BLOCKS = 96;

/**
 * one context's layer chain: us = chain time per layer - the same chain's time per layer without the
 * attention (gemv_us_per_layer; in measurements taken before it was timed: - the GEMV's isolated time)
 */
export interface ChainPoint {
  tokens: number;
  bytes: number;
  us: number;
  chain_us_per_layer: number;
  /** the chain without the attention (marks and layer GEMV), time per layer, median over the same trials; absent from older measurements */
  gemv_us_per_layer?: number;
  /**
   * with phases: the same at the context alone (us and chain_us_per_layer are then the mean over the
   * contexts `phases` blocks around it); absent from points timed at the context alone
   */
  us_at_context?: number;
  phases?: number[];
  /** with phases: the time at each offset (as us, in the order of phases) */
  around_us?: number[];
  /** the dispatch's plan at each context timed (the context, then its offsets); absent from older measurements */
  plans?: ChainPlan[];
}

/** What the attention dispatch chose for one timed context (addon-types.ts AttentionPlan, the fields the tail wave's rule reads). */
export interface ChainPlan {
  tokens: number;
  kernel: string;
  splits: number;
  chunks_per_warp: number;
  grid: [number, number];
  resident_blocks: number;
  warps_per_block: number;
  head_warps: boolean;
}

/**
 * `layers` x (mark, mark, attention, mark, GEMV, mark) on the compute stream, as the executor issues a
 * step, and in every trial the same without the attention (the point's time is taken beyond it), over
 * a table of `precisionOf` blocks (default FP16 throughout; a uniform table declared as the executor
 * declares it); with `warmMs`, the first context's chain repeated that long before any is timed.
 * With `phases` (FP16 tables only): a context of at least CHAIN_PHASE_MIN_BLOCKS blocks is also timed at
 * each of those block offsets around it (one cache, its table's first blocks; the contexts in turn within
 * each trial), the point's time the mean of their medians over the trials.
 */
export async function measureChain(b: NativeBackend, o: MeasureOptions, contexts: number[], rows: number, cols: number, trials: number, c: { precisionOf?: (i: number, n: number) => Precision; warmMs?: number; phases?: readonly number[] } = {}): Promise<ChainPoint[]> {
  if (c.phases && c.precisionOf) throw new Error('measureChain: phases apply to FP16 tables only (a mixed table changes with its length)');
  const m = o.model;
  const g = { kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize };
  const layers = Math.max(4, Math.min(m.layers, 32));
  const w = b.alloc('device', rows * cols * 2);
  const x = b.alloc('device', cols * 4);
  const y = b.alloc('device', rows * 4);
  const qBytes = m.q_heads * m.head_dim * 4;
  const q = b.alloc('device', qBytes);
  const out = b.alloc('device', qBytes);
  const marks = Array.from({ length: 4 }, () => b.createEvent());
  const e0 = b.createEvent();
  const e1 = b.createEvent();
  const points: ChainPoint[] = [];
  try {
    b.write(w, 0, new Uint8Array(Math.min(rows * cols * 2, 1 << 22)));
    b.write(x, 0, new Float32Array(cols).map((_, i) => Math.cos(i)));
    b.write(q, 0, new Float32Array(m.q_heads * m.head_dim).map((_, i) => Math.sin(i * 0.37)));
    for (const tokens of contexts) {
      const blocks = Math.ceil(tokens / o.blockTokens);
      const phases = c.phases && blocks >= CHAIN_PHASE_MIN_BLOCKS ? [...c.phases] : [];
      const most = blocks + Math.max(0, ...phases);
      const precisions = Array.from({ length: most }, (_, i) => (c.precisionOf ? c.precisionOf(i, most) : ('fp16' as Precision)));
      const cache = buildDeviceCache(b, g, precisions);
      try {
        // uniformPrecision as the executor declares it for a table of one precision (e.g. the tensor-core FP16 kernel where it applies)
        const uniform = precisions.every((p) => p === precisions[0]) ? { uniformPrecision: precisions[0] } : {};
        const op = { arena: cache.arena, arenaBytes: cache.arenaBytes, table: cache.table, q, out, qHeads: m.q_heads, kvHeads: m.kv_heads, headDim: m.head_dim, blockTokens: o.blockTokens, groupSize: o.groupSize, contextTokens: tokens, ...uniform };
        const chain = (attention = true) => {
          for (let l = 0; l < layers; l++) {
            b.record('compute', marks[0]);
            b.record('compute', marks[1]);
            if (attention) b.attention('compute', op);
            b.record('compute', marks[2]);
            b.gemv('compute', { w, x, y, rows, cols });
            b.record('compute', marks[3]);
          }
        };
        chain();
        await b.synchronize();
        if (c.warmMs && tokens === contexts[0]) {
          const t0 = performance.now();
          while (performance.now() - t0 < c.warmMs) {
            chain();
            await b.synchronize();
          }
        }
        // the context and each offset in turn within every trial (not one context's trials back to back),
        // so that a disturbance of the GPU lasting a few chains slows one trial of several contexts, which
        // each context's median over its trials leaves out, rather than every trial of one context
        // (the same chain without the attention, once per trial: the layer GEMV as the chains run it, in
        // the GPU's state of the same trials, which the attention's time is taken beyond)
        const at = [tokens, ...phases.map((k) => tokens + k * o.blockTokens)];
        const per = at.map((): number[] => []);
        const gemvPer: number[] = [];
        const timeChain = async (attention: boolean) => {
          b.record('compute', e0);
          chain(attention);
          b.record('compute', e1);
          await b.synchronize();
          return (b.elapsedMs(e0, e1) * 1000) / layers;
        };
        for (let t = 0; t < trials; t++) {
          gemvPer.push(await timeChain(false));
          for (let i = 0; i < at.length; i++) {
            op.contextTokens = at[i];
            per[i].push(await timeChain(true));
          }
        }
        const gemvUs = median(gemvPer);
        const atContext = median(per[0]);
        const around = per.slice(1).map((x) => median(x));
        const perLayer = around.length ? around.reduce((a, x) => a + x, 0) / around.length : atContext;
        // (a host backend can time the difference at or below zero: keep the curve positive)
        const bytes = blockBytes(g, 'fp16') * blocks;
        const point: ChainPoint = { tokens, bytes: c.precisionOf ? cache.arenaBytes : bytes, us: Math.max(0.01, perLayer - gemvUs), chain_us_per_layer: perLayer, gemv_us_per_layer: gemvUs };
        if (around.length) Object.assign(point, { us_at_context: Math.max(0.01, atContext - gemvUs), phases, around_us: around.map((x) => Math.max(0.01, x - gemvUs)) });
        // the dispatch's plan at each context timed (the context, then its offsets)
        point.plans = at.map((t): ChainPlan => {
          const p = b.attentionPlan({ ...op, contextTokens: t });
          return { tokens: t, kernel: p.kernel, splits: p.splits, chunks_per_warp: p.chunksPerWarp, grid: [p.grid[0], p.grid[1]], resident_blocks: p.residentBlocks, warps_per_block: p.warpsPerBlock, head_warps: p.headWarps };
        });
        points.push(point);
      } finally {
        cache.free();
      }
    }
  } finally {
    for (const e of [...marks, e0, e1]) b.destroyEvent(e);
    for (const r of [w, x, y, q, out]) b.free(r);
  }
  return points;
}

/**
 * the executor-pattern read batches' geometry: the model's FP16 block, blocks per layer for `context`
 * tokens (default 8k, 1k quick), the model's layers (4 quick), 4 rounds (so that a quick calibration's 4
 * layers take every run length of file-batches.ts RUN_BLOCKS: with one round its line rested on runs of 1-9
 * blocks). A quick calibration's file holds its 4 layers only: read batches over a file of every layer of
 * Llama-3-8B (776 MiB) or 64 layers timed the same as over 4 layers (97 MiB) on the lent machine's virtio
 * disk (perf/device/file-span-ab.mjs), and the smaller file keeps the pinned buffer small.
 */
export function fileBatchOptions(o: Pick<MeasureOptions, 'model' | 'blockTokens' | 'groupSize' | 'quick' | 'fileDir'>, threads: number, context = o.quick ? 1024 : 8192) {
  const m = o.model;
  const g = { kvHeads: m.kv_heads, blockTokens: o.blockTokens, headDim: m.head_dim, groupSize: o.groupSize };
  return { dir: o.fileDir, threads, blockBytes: blockBytes(g, 'fp16'), blocksPerLayer: Math.ceil(context / o.blockTokens) + 4, layers: o.quick ? 4 : m.layers, rounds: 4, requestBytes: quantizedBlockBytes(g) };
}

/** bytes of one block of the model at each quantized precision (INT8, INT4, INT2), distinct */
export function quantizedBlockBytes(g: Parameters<typeof blockBytes>[0]): number[] {
  return [...new Set((['int8', 'int4', 'int2'] as Precision[]).map((p) => blockBytes(g, p)))];
}

/** one request of each size through the file tier, median of trials */
async function measureFile(b: NativeBackend, dir: string, sizes: number[], trials: number, threads: number) {
  const loaded = loadHil();
  if (!loaded.ok) throw new Error(loaded.reasons.join('; '));
  const max = Math.max(...sizes);
  const path = join(dir, `kvtier-calibrate-${process.pid}.bin`);
  const tier = new loaded.addon.FileTier(b, { path, bytes: max * 4, threads, removeOnClose: true });
  const buf = b.alloc('pinned', max);
  b.write(buf, 0, new Uint8Array(max).map((_, i) => (i * 2654435761) >>> 24));
  const read: Point[] = [];
  const write: Point[] = [];
  try {
    for (let k = 0; k < 4; k++) await tier.write(buf, 0, k * max, max, { sync: true });
    for (const n of sizes) {
      const w: number[] = [];
      const r: number[] = [];
      for (let t = 0; t < trials; t++) {
        // rotate file offsets so reads do not hit a drive-side cache of the block just written
        const off = ((t % 3) + 1) * max;
        w.push((await tier.write(buf, 0, off, n)).ms);
        r.push((await tier.read(buf, 0, ((t + 1) % 3 + 1) * max, n)).ms);
      }
      write.push({ bytes: n, us: median(w) * 1000, label: `${n} B` });
      read.push({ bytes: n, us: median(r) * 1000, label: `${n} B` });
    }
    return { file_read: read, file_write: write, file_direct: tier.direct };
  } finally {
    tier.close();
    b.free(buf);
    rmSync(path, { force: true });
  }
}
