/**
 * `kvtier hil run`: the same resolution, policy and driver as `kvtier run` (sim/run.ts), with the
 * work recorded (plan-recorder.ts), lowered to real copies and kernels (lower-plan.ts) and run on a
 * backend (run-plan.ts). The run directory has the same files and columns as a simulated run, from
 * measured times, plus hil.json (device, tiers, warnings, stall definition) and hil-steps.csv.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPolicy } from '../../policies/registry.js';
import { summarizeRun } from '../../sim/metrics/summarize-run.js';
import { energyOf } from '../../sim/quality/energy-model.js';
import type { StepRow } from '../../sim/metrics/summary.js';
import { writeDirAtomically } from '../../sim/output-dir.js';
import { writeRunFiles } from '../../sim/run-dir.js';
import { simulate, type RunConfig, type RunResult } from '../../sim/run.js';
import type { WeightStreaming } from '../../sim/weight-streaming.js';
import type { AttentionOptions, AttentionPlan, BackendKind, NativeBackend, ResolvedAttentionOptions } from '../addon-types.js';
import { resolveAttentionOptions } from '../attention-options.js';
import { openBackend } from '../backend.js';
import { blockBytes, type Precision } from '../kv-format.js';
import { BlockData } from './block-data.js';
import { allLinkKeys } from './link-keys.js';
import { lowerPlan } from './lower-plan.js';
import type { LoweredPlan, LowStep } from './lowered-plan.js';
import { PlanRecorder } from './plan-recorder.js';
import { DEFAULT_IO_THREADS, type MeasuredStep, runPlan } from './run-plan.js';

export interface HilOptions {
  backend: BackendKind | 'auto';
  /** seed of the KV bytes */
  seed?: number;
  /** HBM arena slab size (default 2 MiB) */
  slabBytes?: number;
  nvmeDir?: string;
  directIo?: boolean;
  /** I/O threads of the NVMe file tier (default DEFAULT_IO_THREADS, 32) */
  ioThreads?: number;
  /** RunPlanOptions.fileBatch (default true: one readBatch per layer's reads; false: one promise per request) */
  fileBatch?: boolean;
  /** at most this many bytes of distinct layer weights (default 24 GiB; host backend 256 MiB) */
  maxWeightBytes?: number;
  /** after the run, check every block's bytes where it ended up */
  verify?: boolean;
  /** measurement aid (default off): time the memory stream's waits on compute fences (hil-steps.csv gets mem_wait_us, mem_waits, mem_dir_switches) */
  waitMarks?: boolean;
  /** LowerOptions.eagerFences (default true; false: the fence placement the HIL had before, for comparison) */
  eagerFences?: boolean;
  /** options of every attention call (`kvtier hil options`; absent: the defaults) */
  attention?: AttentionOptions;
  /** decode steps done of all, while the run is in flight (RunPlanOptions.onProgress) */
  onProgress?: (done: number, total: number, label?: string) => void;
}

/** One kernel configuration the run's attention launches of one table precision ran with. */
export interface AttentionKernelUse {
  kernel: AttentionPlan['kernel'];
  stages: number;
  head_warps: boolean;
  early_chunks: number;
  l2_policy: AttentionPlan['l2Policy'];
  launches: number;
  /** attended tokens and split counts of those launches, least and most */
  context_tokens: [number, number];
  splits: [number, number];
}

export interface HilInfo {
  schema: 'kvtier-hil-run/v1';
  backend: string;
  device: string;
  warnings: string[];
  stall_definition: string;
  arena_bytes: number;
  staging_ring_bytes: number;
  host_pool_bytes: number;
  nvme_file: { used: boolean; direct: boolean | null; buffered_reason: string; io_threads: number; batched_reads: boolean };
  /** weight streaming where the policy asks for it: the streamed layers' bytes copied host -> HBM slots before their projections */
  weight_streaming?: { tier: string; buffers: number; resident_layers: number; layer_bytes: number; host_layers: number };
  /** RotateKV: K/V stored Walsh-Hadamard-rotated (new blocks rotated by the kernel as stored), q and the attention output rotated every layer */
  rotation: boolean;
  /** per tier of the profile: what held its blocks in this run */
  tier_devices: Record<string, string>;
  /** attention launches by the table precision they declared uniform (fp16, int8, int4, int2), or mixed */
  attention_tables: Record<string, number>;
  /** the attention options of the run (every one, defaults included) and, per table precision as in attention_tables, the kernels its launches ran */
  attention: { options: ResolvedAttentionOptions; kernels: Record<string, AttentionKernelUse[]> };
  weight_buffers: number;
  /**
   * (cuda) the host link's rate right before the steps (after the set-up): 64 MiB pinned copies both ways
   * for 50 ms (timing/link-warmup.ts), the last round trip, to set beside the profile's link (a lease's
   * PCIe rate can differ by several percent between its calibration and its runs); absent where it could
   * not be measured (a warning says why)
   */
  link_before?: { h2d_GBps: number; d2h_GBps: number };
  /**
   * (cuda) the host's us per copy issued right before the steps, after the link check
   * (timing/host-issue-probe.ts), to set beside the same probe taken at the calibration; absent where it
   * could not be measured (a warning says why)
   */
  host_before?: { copy_us: number };
  setup_ms: number;
  /** conversion kinds and widths and rotations warmed in the set-up, before the timed steps (warm-kernels.ts) */
  warm_launches: number;
  verify?: { checked: number; mismatches: number; firstMismatch?: string };
  steps: MeasuredStep[];
}

/** how long the host link is kept busy right before a cuda run, whose last round trip's rate the run records */
export const LINK_CHECK_MS = 50;

export interface HilRunResult {
  result: RunResult;
  hil: HilInfo;
}

export const STALL_DEFINITION =
  'stall = step latency - kernel time on the compute stream; latency = end of this step\'s last projection minus the end of the previous step\'s ' +
  '(CUDA events on the compute stream). Split per layer into stall_wait (between the compute stream finishing the previous layer and the attention ' +
  'being free to start: waits on memory-stream events) and host_gap (the rest: the host had not enqueued the layer yet, e.g. it waited for a file read).';

/** A run's simulation with its work recorded, and that work lowered to the executor's ops. */
export interface LoweredRun {
  sim: RunResult;
  lowered: LoweredPlan;
  /** the link keys the run's bytes are counted under */
  keys: string[];
  /** what the policy asked of the executor: weight streaming, RotateKV */
  asked: { weights?: WeightStreaming; rotation: boolean };
}

/**
 * Simulates the run with its work recorded (plan-recorder.ts) and lowers it (lower-plan.ts) as the
 * executor will run it on `backend` (its pinned host weight pool: 256 MiB on the host backend).
 */
export function recordAndLower(config: RunConfig, o: Pick<HilOptions, 'slabBytes' | 'eagerFences'> & { backend: HilOptions['backend'] }): LoweredRun {
  let recorder: PlanRecorder | undefined;
  let keys: string[] = [];
  let asked: { weights?: WeightStreaming; rotation: boolean } = { rotation: false };
  const r = simulate(config, {
    executor: (resolved, cache, policy) => {
      asked = policy;
      keys = allLinkKeys(resolved.hardware);
      recorder = new PlanRecorder(cache, keys);
      return recorder;
    },
  });
  const { model, hardware, header } = r.resolved;
  const groupSize = config.group_size ?? 128;
  // the policy's HBM layout: per-bit buckets (one region per layer and width) or shared slabs
  const hbmLayout = getPolicy(config.policy).hbmLayout ?? 'slabs';
  const lowered = lowerPlan(recorder!.plan, model, hardware, header.block_size, { slabBytes: o.slabBytes ?? 2 << 20, groupSize, eagerFences: o.eagerFences, hbmLayout, weights: asked.weights, rotation: asked.rotation, weightHostBytes: o.backend === 'host' ? 256 << 20 : 4 * 2 ** 30 });
  return { sim: r, lowered, keys, asked };
}

export async function hilRun(config: RunConfig, o: HilOptions): Promise<HilRunResult> {
  const attentionOptions = resolveAttentionOptions(o.attention);  // a bad option fails before the simulation
  const { sim: r, lowered, keys, asked } = recordAndLower(config, o);
  const { model, hardware } = r.resolved;
  const warnings: string[] = [];
  if (lowered.usesCxl) {
    warnings.push('CXL is simulation-only: no CXL hardware here, so blocks placed in the "cxl" tier lived in a second pinned host-DRAM pool; their measured times are DRAM-over-PCIe times, not CXL.');
  }
  if (lowered.usesHdd) {
    warnings.push('HDD is simulation-only: no HDD here, so blocks placed in the "hdd" tier lived in the NVMe tier\'s file (same disk, through the same DRAM bounce slots); their measured times are that disk\'s, not an HDD\'s.');
  }
  const backend = openBackend(o.backend, 0, o.attention);
  let measured;
  let device = '';
  let kernels: Record<string, AttentionKernelUse[]> = {};
  const kind = backend.kind;
  try {
    device = backend.info().name;
    kernels = attentionKernels(backend, lowered.steps, { qHeads: model.q_heads, kvHeads: model.kv_heads, headDim: model.head_dim, blockTokens: lowered.geometry.blockTokens, groupSize: lowered.geometry.groupSize });
    const data = new BlockData(o.seed ?? 1, blockBytes(lowered.geometry, 'fp16') / 2);
    measured = await runPlan(backend, lowered, model, data, {
      nvmeDir: o.nvmeDir ?? tmpdir(),
      directIo: o.directIo ?? true,
      ioThreads: o.ioThreads ?? DEFAULT_IO_THREADS,
      fileBatch: o.fileBatch ?? true,
      maxWeightBytes: o.maxWeightBytes ?? (backend.kind === 'host' ? 256 << 20 : 24 * 1024 ** 3),
      traceSteps: config.trace_steps ?? 32,
      verify: o.verify ?? false,
      waitMarks: o.waitMarks ?? false,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(kind === 'cuda' ? { linkCheckMs: LINK_CHECK_MS, hostProbe: true } : {}),
    });
  } finally {
    backend.close();
  }
  const linkBefore = measured.linkBefore && 'error' in measured.linkBefore ? undefined : measured.linkBefore;
  if (measured.linkBefore && 'error' in measured.linkBefore) warnings.push(`the host link's rate before the steps was not measured: ${measured.linkBefore.error}`);
  const hostBefore = measured.hostBefore && 'error' in measured.hostBefore ? undefined : measured.hostBefore;
  if (measured.hostBefore && 'error' in measured.hostBefore) warnings.push(`the host's pace at issuing copies before the steps was not measured: ${measured.hostBefore.error}`);
  if (measured.fileDirect === false) warnings.push(`the NVMe file tier fell back to buffered I/O: ${measured.fileBufferedReason}`);
  const steps: StepRow[] = r.steps.map((row, i) => {
    const m = measured.steps[i];
    const out: StepRow = { ...row };
    out.latency_ms = m.latency_us / 1e3;
    out.compute_ms = m.compute_us / 1e3;
    out.stall_ms = m.stall_us / 1e3;
    out.transfer_ms = m.transfer_us / 1e3;
    let moved = 0;
    for (const k of keys) {
      out[`bytes.${k}`] = m.bytes[k] ?? 0;
      moved += m.bytes[k] ?? 0;
    }
    out.bytes_moved = moved;
    return out;
  });
  const linkBytes: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
  for (const m of measured.steps) for (const k of keys) linkBytes[k] += m.bytes[k] ?? 0;
  const s0 = r.summary;
  // the recorded summary keeps everything the decisions decide (actions, recall, quality, policy
  // report); the fields that come from time and bytes are recomputed from the measured steps
  const timed = summarizeRun({
    trace: s0.trace,
    policy: s0.policy,
    model: s0.model,
    hardware: `${device} (hil ${kind})`,
    budgetBytes: s0.hbm_budget_bytes,
    fullKvBytes: s0.hbm_budget_bytes / s0.hbm_budget_fraction,
    steps,
    linkBytes,
    peak: s0.peak_occupancy_bytes,
    counters: { actions: s0.actions, refused: s0.refused_actions, refusalExamples: r.refusalExamples, peakStagingBytes: 0 },
  });
  const summary = { ...s0 };
  for (const k of ['hardware', 'tbt_ms', 'tokens_per_s', 'compute_ms', 'stall_ms', 'transfer_ms', 'masking_efficiency', 'bytes', 'bytes_total'] as const) {
    (summary as Record<string, unknown>)[k] = timed[k];
  }
  if (s0.energy) {
    const seconds = steps.reduce((t, x) => t + x.latency_ms, 0) / 1e3;
    summary.energy = energyOf({ hardware, linkBytes: summary.bytes, peakBytes: s0.peak_occupancy_bytes, seconds, gpuBusySeconds: summary.compute_ms / 1e3, tokens: steps.length });
  }
  const hil: HilInfo = {
    schema: 'kvtier-hil-run/v1',
    backend: kind,
    device,
    warnings,
    stall_definition: STALL_DEFINITION,
    arena_bytes: lowered.arenaBytes,
    staging_ring_bytes: lowered.ringBytes,
    host_pool_bytes: lowered.hostBytes,
    ...(lowered.weights ? { weight_streaming: { tier: asked.weights!.tier, buffers: lowered.weights.buffers, resident_layers: lowered.weights.resident, layer_bytes: lowered.weights.layerBytes, host_layers: lowered.weights.hostLayers } } : {}),
    rotation: lowered.rotation,
    tier_devices: tierDevices(hardware.tiers, kind, device, o.nvmeDir ?? tmpdir()),
    nvme_file: { used: lowered.usesNvme, direct: measured.fileDirect, buffered_reason: measured.fileBufferedReason, io_threads: o.ioThreads ?? DEFAULT_IO_THREADS, batched_reads: o.fileBatch ?? true },
    attention_tables: attentionTables(lowered.steps),
    attention: { options: attentionOptions, kernels },
    weight_buffers: measured.weightBuffers,
    ...(linkBefore ? { link_before: linkBefore } : {}),
    ...(hostBefore ? { host_before: { copy_us: hostBefore.copy_us } } : {}),
    setup_ms: measured.setupMs,
    warm_launches: measured.warmLaunches,
    verify: measured.verify,
    steps: measured.steps,
  };
  return { result: { ...r, summary, steps, spans: measured.spans }, hil };
}

/** What held each tier's blocks: tiers without hardware here name their stand-in. */
export function tierDevices(tiers: readonly { name: string; kind: string }[], backend: string, device: string, fileDir: string): Record<string, string> {
  const of = (kind: string): string => {
    if (kind === 'hbm') return backend === 'cuda' ? `${device} device memory` : `host memory standing in for HBM (${backend} backend)`;
    if (kind === 'dram') return 'pinned host DRAM';
    if (kind === 'cxl') return 'pinned host DRAM, a second pool (no CXL here)';
    if (kind === 'nvme') return `a file in ${fileDir}`;
    if (kind === 'hdd') return `the NVMe tier's file in ${fileDir} (no HDD here)`;
    return 'no hardware here';
  };
  return Object.fromEntries(tiers.map((t) => [t.name, of(t.kind)]));
}

const TABLE_NAME: Record<number, 'mixed' | Precision> = { 0: 'mixed', 16: 'fp16', 8: 'int8', 4: 'int4', 3: 'int3', 2: 'int2' };

function attentionTables(steps: LowStep[]): Record<string, number> {
  const n: Record<string, number> = {};
  for (const s of steps) for (const op of s.ops) if (op.o === 'attn') n[TABLE_NAME[op.uniform]!] = (n[TABLE_NAME[op.uniform]!] ?? 0) + 1;
  return n;
}

/** The kernel configurations the run's attention launches ran with, per table precision (the backend's plan of each launch's shape). */
export function attentionKernels(
  b: Pick<NativeBackend, 'attentionPlan'>,
  steps: LowStep[],
  shape: { qHeads: number; kvHeads: number; headDim: number; blockTokens: number; groupSize: number },
): Record<string, AttentionKernelUse[]> {
  const plans = new Map<string, AttentionPlan>();
  const out: Record<string, AttentionKernelUse[]> = {};
  for (const s of steps) {
    for (const op of s.ops) {
      if (op.o !== 'attn') continue;
      const table = TABLE_NAME[op.uniform]!;
      const at = `${op.uniform}:${op.tokens}`;
      let plan = plans.get(at);
      if (!plan) {
        plan = b.attentionPlan({ ...shape, contextTokens: op.tokens, ...(table !== 'mixed' ? { uniformPrecision: table } : {}) });
        plans.set(at, plan);
      }
      const uses = (out[table] ??= []);
      let use = uses.find((u) => u.kernel === plan.kernel && u.stages === plan.stages && u.head_warps === plan.headWarps && u.early_chunks === plan.earlyChunks && u.l2_policy === plan.l2Policy);
      if (!use) {
        use = { kernel: plan.kernel, stages: plan.stages, head_warps: plan.headWarps, early_chunks: plan.earlyChunks, l2_policy: plan.l2Policy, launches: 0, context_tokens: [op.tokens, op.tokens], splits: [plan.splits, plan.splits] };
        uses.push(use);
      }
      use.launches++;
      use.context_tokens = [Math.min(use.context_tokens[0], op.tokens), Math.max(use.context_tokens[1], op.tokens)];
      use.splits = [Math.min(use.splits[0], plan.splits), Math.max(use.splits[1], plan.splits)];
    }
  }
  return out;
}

export function writeHilRunDir(out: string, x: HilRunResult, force = false): void {
  writeDirAtomically(out, force, (tmp) => {
    writeRunFiles(tmp, x.result);
    fs.writeFileSync(join(tmp, 'hil.json'), JSON.stringify({ ...x.hil, steps: undefined }, null, 2) + '\n');
    const base = ['step', 'latency_us', 'compute_us', 'stall_us', 'stall_wait_us', 'host_gap_us', 'host_issue_us', 'host_wait_compute_us', 'transfer_us', 'file_us', 'file_read_us', 'file_write_us', 'file_sync_us', 'file_syncs', 'file_join_us'] as const;
    const extra = ['mem_wait_us', 'mem_waits', 'mem_dir_switches'] as const;
    const cols: (keyof MeasuredStep)[] = x.hil.steps.some((s) => s.mem_waits !== undefined) ? [...base, ...extra] : [...base];
    const lines = [cols.join(','), ...x.hil.steps.map((s) => cols.map((c) => round3((s[c] as number | undefined) ?? 0)).join(','))];
    fs.writeFileSync(join(tmp, 'hil-steps.csv'), lines.join('\n') + '\n');
  });
}

function round3(x: number): string {
  return String(Math.round(x * 1000) / 1000);
}
