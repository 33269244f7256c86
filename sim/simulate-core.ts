/**
 * One simulated run: resolve the configuration (trace, model, hardware, policy, budget), replay the
 * trace through the policy on the simulated executor, and gather the per-step table and summary.
 * The policy must be registered already: sim/run.ts `simulate` registers the built-in ones first;
 * `kvtier run` registers only the one it runs.
 */
import { basename } from 'node:path';
import { getPolicy } from '../policies/registry.js';
import { openTrace } from '../traces/trace-reader.js';
import { blocksFor, type TraceHeader, type TraceStep } from '../traces/format.js';
import { parseBudget } from './budget.js';
import { GiB, type HardwareProfile } from './hardware/profile.js';
import { loadHardware } from './hardware/load-profile.js';
import { HbmSlots } from './hbm-slots.js';
import { HOST_SLOT_ALIGN, KVCache } from './kv-cache.js';
import { summarizeRun } from './metrics/summarize-run.js';
import type { RunSummary, StepRow } from './metrics/summary.js';
import { loadModel } from './models/load-model.js';
import { kvBytes, type ModelSpec } from './models/model.js';
import { defaultStagingRingBytes } from './staging-ring.js';
import { describeHbmWeights, hbmWeightBytes, hostWeightBytes, type WeightStreaming } from './weight-streaming.js';
import { energyOf } from './quality/energy-model.js';
import { QualityMeter } from './quality/quality-meter.js';
import type { Executor } from './executor.js';
import { ReplayDriver, type StepResult } from './replay-driver.js';
import { createRunPolicy } from './run-policy.js';
import { COPY_MODES, SimExecutor, type CopyMode } from './sim-executor.js';
import type { TraceSpan } from './stream.js';

export interface RunConfig {
  trace: string;
  policy: string;
  policy_options?: Record<string, unknown>;
  /** model preset; default: the trace header's model */
  model?: string;
  /** preset name or path to a profile JSON */
  hardware: string;
  /** share ("20%", 0.2) of the final-context FP16 KV, or a size ("4GiB") */
  hbm_budget: string | number;
  /** quantization group size for INT blocks (default 128) */
  group_size?: number;
  /** steps recorded in the Chrome trace (default 32) */
  trace_steps?: number;
  /** PCIe copies per contiguous run of blocks (default, as measured) or one gather copy per batch */
  copy_mode?: CopyMode;
}

export interface ResolvedRun {
  config: RunConfig;
  header: TraceHeader;
  model: ModelSpec;
  hardware: HardwareProfile;
  policyOptions: Record<string, unknown>;
  budgetBytes: number;
  budgetBlocks: number;
  fullKvBytes: number;
  hbmFreeBytes: number;
}

export interface RunResult {
  resolved: ResolvedRun;
  summary: RunSummary;
  steps: StepRow[];
  spans: TraceSpan[];
  refusalExamples: Record<string, string>;
}

/** Options of simulate(): the HIL layer passes its own executor (it records the work, then runs it on a backend). */
export interface SimulateOptions {
  /** `policy`: what the policy asks of the executor besides the driver's work (weight streaming, K/V rotation) */
  executor?: (resolved: ResolvedRun, cache: KVCache, policy: { weights?: WeightStreaming; rotation: boolean }) => Executor<unknown> & { readonly spans: TraceSpan[] };
  /**
   * Called after each replayed step, and for an oracle policy after each step of its look-ahead pass
   * over the trace: `done` of `total` steps (the look-ahead's and the replay's together), the phase.
   */
  onProgress?: (done: number, total: number, phase: 'look-ahead' | 'replay') => void;
}

/** simulate() with the policies registered as they are */
export function simulateRegistered(config: RunConfig, opts: SimulateOptions = {}): RunResult {
  const reader = openTrace(config.trace);
  try {
    const header = reader.header;
    const model = loadModel(config.model ?? header.model);
    if (model.layers !== header.layers) {
      throw new Error(`${config.trace}: the trace has ${header.layers} layers but model ${model.name} has ${model.layers} (pass --model to pick the right one)`);
    }
    const hardware = loadHardware(config.hardware);
    if (config.copy_mode !== undefined && !COPY_MODES.includes(config.copy_mode)) {
      throw new Error(`--copy-mode must be one of ${COPY_MODES.join(', ')} (got "${config.copy_mode}")`);
    }
    const groupSize = config.group_size ?? 128;
    const B = header.block_size;
    const maxBlocks = blocksFor(header.prompt_tokens + header.steps, B);
    const blockBytes = kvBytes(model, B, 16, groupSize);
    const fullKvBytes = model.layers * maxBlocks * blockBytes;
    // the quality reference (definition.full) runs at 100% of the KV whatever budget is asked
    const definition = getPolicy(config.policy);
    const isFull = definition.full === true;
    const budgetBytes = isFull ? fullKvBytes : parseBudget(config.hbm_budget, fullKvBytes);
    const budgetBlocks = Math.floor(budgetBytes / (model.layers * blockBytes));
    const progress = opts.onProgress;
    // an oracle reads the whole trace once before it decides
    const lookAhead = definition.oracle === true ? header.steps : 0;
    const progressTotal = lookAhead + header.steps;
    if (budgetBlocks < 1) throw new Error(`--hbm-budget: ${budgetBytes} bytes is less than one block per layer (${model.layers * blockBytes} bytes)`);
    const { policy, options } = createRunPolicy(config.policy, config.policy_options ?? {}, {
      model,
      header,
      hardware,
      maxBlocks,
      budgetBlocks,
      futureSteps: () => traceSteps(config.trace, progress && ((i) => progress(i, progressTotal, 'look-ahead'))),
    });
    // the streamed layers' weights live in their host tier: the KV gets what is left of it
    const hostWeights = hostWeightBytes(model, policy.weights);
    const tiers = hardware.tiers.map((t, i) => {
      if (i === 0) return { name: t.name, capacityBytes: budgetBytes };
      const capacityBytes = t.capacity_GiB * GiB - (t.name === policy.weights?.tier ? hostWeights : 0);
      if (capacityBytes < 0) {
        throw new Error(`policy ${config.policy}: ${fmtGiB(hostWeights)} of streamed weights do not fit in ${hardware.name}'s ${t.name} (${t.capacity_GiB} GiB)`);
      }
      return { name: t.name, capacityBytes };
    });
    const cache = new KVCache(model, B, header.layers, maxBlocks, tiers, groupSize, HOST_SLOT_ALIGN);
    // HBM holds the weights that stay resident (all of them, unless the policy streams layers: then its
    // resident layers and streaming slots), the stated reserve (CUDA context, activations, workspace), and the KV
    const hbm = hardware.tiers[0];
    const weights = hbmWeightBytes(model, policy.weights);
    const hbmFreeBytes = hbm.capacity_GiB * GiB - weights - hardware.gpu.reserved_GiB * GiB;
    if (budgetBytes > hbmFreeBytes) {
      throw new Error(
        `--hbm-budget: ${fmtGiB(budgetBytes)} of KV does not fit in ${hardware.name}'s HBM: ${fmtGiB(hbmFreeBytes)} free ` +
          `(${hbm.capacity_GiB} GiB - ${describeHbmWeights(model, policy.weights, fmtGiB)} - ${hardware.gpu.reserved_GiB} GiB reserved)`,
      );
    }
    const resolved: ResolvedRun = { config, header, model, hardware, policyOptions: options, budgetBytes, budgetBlocks, fullKvBytes, hbmFreeBytes };
    // cross-stream waits as the HIL executor places them (lab/notes/HIL-NOTES.md, "Where the memory stream sits idle"):
    // staging copies go through a ring of its size (3 layers of full-context FP16 KV) and wait for the attention
    // that read the space they reuse (the HIL's eager fences); compute waits on the memory stream's tail
    const staging = { ringBytes: defaultStagingRingBytes(maxBlocks, blockBytes), fence: 'eager' as const };
    const executor = opts.executor
      ? opts.executor(resolved, cache, { weights: policy.weights, rotation: policy.quant?.rotation === true })
      : new SimExecutor(hardware, model, { traceSteps: config.trace_steps ?? 32, weightStreaming: policy.weights, rotation: policy.quant?.rotation === true, copyMode: config.copy_mode, staging, tailWaits: true });
    const driver = new ReplayDriver(header, cache, policy, executor, budgetBlocks, Math.max(budgetBytes, hbmFreeBytes));
    // the HIL executor's HBM slots (slabs; a policy whose HBM is laid out in per-bit buckets keeps one copy per block)
    if ((definition.hbmLayout ?? 'slabs') === 'slabs') driver.hbmSlots = new HbmSlots(header.layers, maxBlocks);
    const quality = new QualityMeter(header, cache, policy);
    driver.layerHook = (step, l, obs, la) => quality.layer(step, l, obs, la);
    const table = new StepTable(cache, quality, progress, lookAhead, progressTotal);
    // (bound: no function of its own made per replay, whose compiled code would take in add's)
    driver.run(reader, table.add.bind(table));
    const steps = table.rows;
    if (steps.length !== header.steps) throw new Error(`${config.trace}: replayed ${steps.length} steps, header says ${header.steps}`);
    const linkBytes = executor.finish();
    const summary = summarizeRun({
      trace: basename(config.trace),
      policy: config.policy,
      model: model.name,
      hardware: hardware.name,
      budgetBytes,
      fullKvBytes,
      steps,
      linkBytes,
      peak: Object.fromEntries(cache.tierNames.map((n, i) => [n, cache.peak[i]])),
      counters: driver.counters,
      quality: quality.summary(),
    });
    const seconds = steps.reduce((t, r) => t + r.latency_ms, 0) / 1e3;
    summary.energy = energyOf({
      hardware,
      linkBytes: summary.bytes,
      peakBytes: summary.peak_occupancy_bytes,
      seconds,
      gpuBusySeconds: summary.compute_ms / 1e3,
      tokens: steps.length,
    });
    const report = policy.report?.();
    if (report) summary.policy_report = report;
    return { resolved, summary, steps, spans: executor.spans, refusalExamples: driver.counters.refusalExamples };
  } finally {
    reader.close();
  }
}

/**
 * A replay's per-step table: a row per decode step from the driver's step result, the quality
 * meter's step and the cache's occupancy. (A class whose method every replay calls, not a function
 * made per replay: compiled code kept for a function made per replay may be dropped once that
 * function is gone, and each replay would compile its own again.)
 */
class StepTable {
  readonly rows: StepRow[] = [];
  private readonly bytesKey = new Map<string, string>();
  private readonly occKeys: string[];

  constructor(
    private readonly cache: KVCache,
    private readonly quality: QualityMeter,
    private readonly progress: SimulateOptions['onProgress'],
    private readonly lookAhead: number,
    private readonly progressTotal: number,
  ) {
    this.occKeys = cache.tierNames.map((n) => `occ.${n}`);
  }

  add(r: StepResult): void {
    const row: StepRow = {
      step: r.step,
      context_tokens: r.contextTokens,
      latency_ms: r.timing.latency_us / 1e3,
      compute_ms: r.timing.compute_us / 1e3,
      stall_ms: r.timing.stall_us / 1e3,
      transfer_ms: r.timing.transfer_us / 1e3,
      recall: mean(r.recall),
      recall_min: minOf(r.recall),
      bytes_moved: 0,
    };
    Object.assign(row, this.quality.endStep());
    let moved = 0;
    const bytesKey = this.bytesKey;
    for (const k in r.timing.bytes) {
      const v = r.timing.bytes[k];
      let key = bytesKey.get(k);
      if (key === undefined) bytesKey.set(k, (key = `bytes.${k}`));
      row[key] = v;
      moved += v;
    }
    row.bytes_moved = moved;
    const occKeys = this.occKeys;
    const used = this.cache.used;
    for (let t = 0; t < occKeys.length; t++) row[occKeys[t]] = used[t];
    this.rows.push(row);
    this.progress?.(this.lookAhead + this.rows.length, this.progressTotal, 'replay');
  }
}

function mean(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return a.length ? s / a.length : Number.NaN;
}

function minOf(a: Float64Array): number {
  let m = Infinity;
  for (let i = 0; i < a.length; i++) m = Math.min(m, a[i]);
  return m;
}

function fmtGiB(bytes: number): string {
  return `${(bytes / GiB).toFixed(2)} GiB`;
}

/** Every step of a trace file from the first, the file closed when the pass ends or stops; `onStep(i)` after the i-th. */
function* traceSteps(path: string, onStep?: (i: number) => void): Generator<TraceStep> {
  const reader = openTrace(path);
  try {
    if (!onStep) {
      yield* reader;
      return;
    }
    let i = 0;
    for (const s of reader) {
      yield s;
      onStep(++i);
    }
  } finally {
    reader.close();
  }
}
