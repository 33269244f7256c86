/**
 * Runs a lowered plan on a backend, in stages: allocate the tiers (HBM arena, pinned host pool, CXL
 * stand-in, NVMe file; run-regions.ts) and the model's buffers (model-buffers.ts), write every
 * block's initial bytes (initial-bytes.ts), launch each conversion and rotation kernel the plan uses
 * once (warm-kernels.ts), enqueue the work of every step on the compute and memory
 * streams without synchronizing (as an inference engine would; issue-ops.ts), and read the timing
 * events at the end (step-timings.ts). The host waits only where real data needs it: before a file
 * write from a slot a copy filled (synchronize the memory stream), before a copy that reads what a
 * file read brought (join the reads), and before reusing a slot a file write still reads.
 *
 * Stall, measured: per layer, the compute stream's time between finishing the previous layer and
 * starting this layer's kernels — waiting on memory-stream events (`stall_wait`) or on the host
 * (`host_gap`, e.g. a file read the host had to finish first). Step stall = latency - kernel time.
 */
import type { ModelSpec } from '../../sim/models/model.js';
import type { TraceSpan } from '../../sim/stream.js';
import type { NativeBackend } from '../addon-types.js';
import { codesBytes, kMetaOffset, metaBytes, type Precision, vMetaOffset, vOffset } from '../kv-format.js';
import { EventSet } from '../timing/event-set.js';
import type { BlockData } from './block-data.js';
import { FileStepTimes } from './file-step-times.js';
import { writeFresh, writeInitial } from './initial-bytes.js';
import { warmLink } from '../timing/link-warmup.js';
import { type HostIssueProbe, probeHostIssue } from '../timing/host-issue-probe.js';
import { OpIssuer } from './issue-ops.js';
import type { LoweredPlan } from './lowered-plan.js';
import type { MeasuredStep } from './measured-step.js';
import { allocModelBuffers } from './model-buffers.js';
import { RunEvents } from './run-events.js';
import { type FileTierOptions, RunRegions } from './run-regions.js';
import { type StepProgress, watchSteps } from './step-progress.js';
import { warmKernels, warmSetOf } from './warm-kernels.js';
import { stepTimings } from './step-timings.js';
import { type VerifyResult, verifyBlocks } from './verify-blocks.js';

export type { MeasuredStep } from './measured-step.js';
export { directionSwitches } from './direction-switches.js';

/**
 * I/O threads of the NVMe file tier by default. Measured on the H100 device machine's virtual disk
 * (virtio-blk, 2026-11-22, perf/nvme-bench.c): replaying the executor's own read batches, 32 threads
 * read 1.73 / 1.58 GB/s in two rounds vs 1.61 / 1.52 (16), 1.57 / 1.44 (8), 1.35 / 1.57 (4); random
 * 64 KiB-4 MiB requests 1.84 GB/s (32) vs 1.70-1.73 (4-16); per-step spread the same for all counts.
 */
export const DEFAULT_IO_THREADS = 32;

export interface RunPlanOptions extends FileTierOptions {
  /**
   * true (default): the reads before one fileJoin (a layer's runs) go to the file tier as ONE batch
   * (readBatch: every request queued on the tier's I/O threads together); false: one promise per
   * request, as before (bounded by libuv's 4 worker threads: at most 4 reads in flight)
   */
  fileBatch?: boolean;
  /** distinct weight bytes allocated at most; layers beyond reuse buffers round-robin */
  maxWeightBytes: number;
  traceSteps: number;
  verify: boolean;
  /** measurement aid, default off: record an event on the memory stream before and after each of its waits on compute fences */
  waitMarks?: boolean;
  /** steps done of all (host backend: polled while the run is in flight; step-progress.ts) */
  onProgress?: StepProgress;
  /** worker threads packing the initial blocks (default: writeInitial's choice, initial-bytes.ts) */
  packThreads?: number;
  /**
   * after the set-up, right before the steps: keep the host link busy both ways for this long (ms) and
   * report the rate of its last round trip (timing/link-warmup.ts; default none)
   */
  linkCheckMs?: number;
  /** after the link check, right before the steps: read the host's pace at issuing copies (timing/host-issue-probe.ts) */
  hostProbe?: boolean;
}

export interface RunPlanResult {
  steps: MeasuredStep[];
  spans: TraceSpan[];
  fileDirect: boolean | null;
  fileBufferedReason: string;
  verify?: VerifyResult;
  setupMs: number;
  /** conversion kinds and widths and rotations warmed in the set-up, before the steps (warm-kernels.ts) */
  warmLaunches: number;
  weightBuffers: number;
  /** with linkCheckMs: the host link's rate right before the steps, or why it was not measured */
  linkBefore?: { h2d_GBps: number; d2h_GBps: number } | { error: string };
  /** with hostProbe: the host's us per copy issued right before the steps, or why it was not measured */
  hostBefore?: HostIssueProbe | { error: string };
}

export async function runPlan(b: NativeBackend, p: LoweredPlan, model: ModelSpec, data: BlockData, o: RunPlanOptions): Promise<RunPlanResult> {
  const t0 = performance.now();
  checkContiguousSections(p);
  o.onProgress?.(0, p.steps.length, 'setup');
  const mem = new RunRegions(b);
  const events = new EventSet(b);
  try {
    mem.allocPlan(p, o);
    const buffers = allocModelBuffers(b, mem, model, data.seed, o.maxWeightBytes, p.weights);
    await b.synchronize();
    await writeInitial(b, p, data, mem.regions, mem.file, o.packThreads);
    writeFresh(b, p, data, mem.r('fresh'));
    await b.synchronize();
    const warmed = await warmKernels(b, p.geometry, model.q_heads, warmSetOf(p.steps));
    const setupMs = performance.now() - t0;
    let linkBefore: RunPlanResult['linkBefore'];
    if (o.linkCheckMs !== undefined) {
      try {
        const w = await warmLink(b, o.linkCheckMs);
        linkBefore = { h2d_GBps: w.h2d_GBps, d2h_GBps: w.d2h_GBps };
      } catch (e) {
        linkBefore = { error: (e as Error).message };
      }
    }
    let hostBefore: RunPlanResult['hostBefore'];
    if (o.hostProbe) {
      try {
        hostBefore = await probeHostIssue(b);
      } catch (e) {
        hostBefore = { error: (e as Error).message };
      }
    }

    const ev = new RunEvents(b, events, p);
    const times = new FileStepTimes(p.steps.length);
    const issuer = new OpIssuer(b, p, model, mem, buffers, ev, times, { fileBatch: o.fileBatch ?? true, waitMarks: o.waitMarks ?? false });
    const watch = o.onProgress && b.kind === 'host' ? watchSteps(b, p, ev, o.onProgress) : undefined;
    try {
      await issuer.issueAll();
      await b.synchronize();
      await issuer.writesDone();
    } finally {
      watch?.stop();
    }
    o.onProgress?.(p.steps.length, p.steps.length, o.verify ? 'verify' : 'timings');

    const { steps, spans } = stepTimings(b, p, ev, times, o);
    const verify = o.verify ? await verifyBlocks(b, p, data, mem.regions, mem.file) : undefined;
    return { steps, spans, fileDirect: mem.file ? mem.file.direct : null, fileBufferedReason: mem.file?.bufferedReason ?? '', verify, setupMs, warmLaunches: warmed, weightBuffers: buffers.weights.length, ...(linkBefore ? { linkBefore } : {}), ...(hostBefore ? { hostBefore } : {}) };
  } finally {
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    mem.file?.close();
    events.destroyAll();
    mem.free();
  }
}

/** the (de)quantization kernels read a block's K and V sections as one run: no padding between them */
function checkContiguousSections(p: LoweredPlan): void {
  const g = p.geometry;
  for (const pr of ['int8', 'int4', 'int3', 'int2'] as Precision[]) {
    if (vOffset(g, pr) !== codesBytes(g, pr) || vMetaOffset(g, pr) !== kMetaOffset(g, pr) + metaBytes(g)) {
      throw new Error(`hil: block layout of ${pr} is padded (K/V sections not contiguous); pick another block size or group size`);
    }
  }
}
