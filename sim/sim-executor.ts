/**
 * The simulated executor, shaped like the hardware (the HIL executor, hil/executor/lower-plan.ts):
 * - a compute stream (high priority) for attention and linear kernels;
 * - ONE memory stream (normal priority) for every GPU<->host copy in either direction, copies
 *   between host memory tiers, and (de)quantization kernels — the HIL issues all of these on one
 *   CUDA stream, so H2D and D2H serialize (the SynapseVM two-stream design);
 * - a host I/O stream for file requests of storage tiers (nvme, hdd, remote): the HIL reads a
 *   storage block into its DRAM slot with file requests on host threads, then copies it to HBM on the
 *   memory stream (and writes back the other way: D2H into the slot, then a file write), so a storage
 *   tier <-> HBM move is two legs, the second waiting for the first.
 * Copies go through the topology's flow network; a batch of `runs` contiguous runs is `runs` copies
 * (file requests) back to back: alpha x runs + bytes / beta. Kernels are timed by roofline.ts; with
 * gpu.kernel_slowdown_under_h2d / _d2h a compute kernel runs on for that fraction of the time it shared
 * with memory-stream copies into / out of HBM (they share HBM bandwidth).
 * Cross-stream waits (options `staging`, `tailWaits`; on in simulate()): staged and fetched copies go
 * through the HIL's staging ring and wait for the compute that read the space they reuse, and each
 * wait is on the other stream's tail, as the HIL records its fences (measured: lab/notes/HIL-NOTES.md).
 */
import { Engine } from './engine.js';
import { adjacentCopies, spreadDoublings } from './host-spread.js';
import type { Executor, LayerWork, MoveBatch, StepTiming } from './executor.js';
import { type HardwareProfile, hasHostClock } from './hardware/profile.js';
import { kvElementsPerTokenLayer, type ModelSpec } from './models/model.js';
import { BusyClock } from './busy-clock.js';
import { IntervalLog } from './interval-log.js';
import { attentionTimeUs, kernelTimeUs, linearTimeUs } from './roofline.js';
import { Signal } from './signal.js';
import { type RingExtent, StagingRing, type StagingFence } from './staging-ring.js';
import { Stream, StreamTask, type StreamOp, type TraceSpan } from './stream.js';
import type { FlowSink } from './flow-network.js';
import { Topology, type Route } from './topology.js';
import { rotationTimeUs } from './rotation-cost.js';
import { requestAlphaUs } from './request-time.js';
import type { WeightStreaming } from './weight-streaming.js';
import { holeyObjectArray, objectArray } from '../common/array-kinds.js';

export interface SimExecutorOptions {
  /** record stream spans for steps < traceSteps (for the Chrome trace) */
  traceSteps: number;
  /**
   * stream each layer's weights (layerBytes, default the model's FP16 bytes) from `tier` into HBM
   * before its linear kernel, on a weight stream, with `buffers` layer buffers (2 = double buffering:
   * layer l+1's copy starts once layer l−1's linear kernel has released its buffer); layers below
   * residentLayers stay in HBM. The linear kernels read layerBytes, the LM head half of otherBytes.
   * Default: FP16 weights resident in HBM.
   */
  weightStreaming?: WeightStreaming;
  /**
   * RotateKV: a Walsh–Hadamard rotation kernel (sim/rotation-cost.ts) on the compute stream before
   * each layer's attention. Default false.
   */
  rotation?: boolean;
  /**
   * how a batch of blocks crosses PCIe: 'per-run' (default) = one copy per contiguous run of blocks,
   * as the HIL executor issues them (validated against the H100, lab/notes/HIL-NOTES.md); 'gather' = one
   * copy per batch, as a gather/scatter kernel or a batched memcpy would do (a what-if: not measured).
   * File requests to storage tiers stay one per run either way.
   */
  copyMode?: CopyMode;
  /**
   * model the HIL executor's staging ring (sim/staging-ring.ts): prefetched and fetched copies go into
   * a ring of `ringBytes` in HBM, and a copy into space an earlier attention read waits on the compute
   * stream (with the HIL's fence placement: `fence`). Default: none (staging copies never wait on compute).
   */
  staging?: { ringBytes: number; fence: StagingFence };
  /**
   * compute waits as the HIL executor places them (hil/executor/fences.ts): a fence is recorded where the
   * waiting stream first needs it, so a layer that needs any memory-stream work not yet waited for waits
   * for everything queued on the memory stream by then (e.g. the next layer's prefetch issued before
   * this layer's promotions), not just for the copies it reads. Default false: exact waits.
   */
  tailWaits?: boolean;
}

export type CopyMode = 'per-run' | 'gather';
const NO_WAITS: readonly Signal[] = [];
export const COPY_MODES: readonly CopyMode[] = ['per-run', 'gather'];

export class SimExecutor implements Executor<Signal> {
  readonly kind = 'sim' as const;
  readonly usesMixedShare: boolean;
  readonly engine = new Engine();
  readonly topology: Topology;
  readonly compute: Stream;
  readonly memory: Stream;
  readonly host: Stream;
  readonly spans: TraceSpan[] = [];
  private readonly tierNames: string[];
  /** per tier: true for storage tiers reached through a DRAM bounce buffer with file requests */
  private readonly storage: boolean[];
  private step = 0;
  private stepStart = 0;
  private computeBusy0 = 0;
  private stall0 = 0;
  private memBusy0 = 0;
  /** bytes per link direction (topology.linkDirections order) at the start of the step */
  private bytes0: Float64Array;
  private readonly attnFlopsPerToken: number;
  /** weight streaming: its stream, and per layer executed (in order) the copy and the linear kernel */
  readonly weights?: Stream;
  private readonly weightCopy: Signal[] = objectArray();
  private readonly linearDone: Signal[] = objectArray();
  private layerSeq = 0;
  /** a layer's linear projections (the same every layer), the LM head, and the rotation kernel (0: none) */
  private readonly linearUs: number;
  private readonly lmHeadUs: number;
  private readonly rotateUs: number;
  /** the staging ring (opts.staging), and per layer the extents its next attention reads */
  readonly ring?: StagingRing;
  private readonly ringExtents: RingExtent[][] = objectArray();
  /** busy time of memory-stream copies into HBM and out of it (gpu.kernel_slowdown_under_h2d / _d2h) */
  private readonly copiesIn = new BusyClock();
  private readonly copiesOut = new BusyClock();
  /** direction of the memory stream's last copy into (1) or out of (-1) HBM; 0 before any */
  private lastCopyDir = 0;
  /**
   * gpu.copy_under_compute 'gemv': when the compute stream's GEMVs ran (null: copies are priced when
   * they start, alphaOf), and the start of the memory-stream copy in flight (NaN: none)
   */
  private readonly gemvs: IntervalLog | null;
  private copyStart = Number.NaN;
  /** gpu.copy_batch_us: the fixed cost of a memory-stream copy batch into or out of HBM */
  private readonly batchUs: number;
  /**
   * layer * tiers + tier of the last op given to the memory stream if it was a stage of listed
   * blocks (-1: not), and whether the copy being issued continues it: the HIL executor issues
   * consecutive listed stages of one layer and tier as one batch (one ring extent, one pair of marks).
   * The replay driver hands such a run over as one stage already; a caller that stages block by
   * block gets the same batch costs.
   */
  private lastStage = -1;
  private continuesStage = false;
  /**
   * whether a link direction prices the spread of host slots (spread_us): batches count their doublings
   * only then, and the driver counts bulk stages' and fetches' for this executor (Executor.usesSpread)
   */
  readonly usesSpread: boolean;
  /** the doublings (spreadDoublings) of the batch being issued: its copy op to or from HBM pays the route's spread_us for each, once */
  private spreadNow = 0;
  /** the copies of the batch being issued whose host slot follows the previous copy's: its copy op into HBM takes the route's adjacent_us off for each, once */
  private adjacentNow = 0;
  /** the last block of the last stage, which a stage continuing it measures its first distance from */
  private lastStagedBlock = -1;
  /**
   * gpu.issue_copy_us / issue_record_us / issue_kernel_us / issue_convert_us / issue_attention_us: the
   * host's time to issue a copy, an event record, a kernel launch, a block's (de)quantization launch and
   * an attention launch; hostClock when any is set.
   * The host clock (hostAt) issues every op in the order the executor is given them, never waiting for
   * the GPU (the HIL executor enqueues every step without synchronizing), and each op starts no earlier
   * than the host issued it. File requests cost it nothing to issue; they start when the host reaches
   * them, and the host waits where the HIL does: at a batch's reads, and on the memory stream before
   * file writes from slots a copy filled.
   */
  private readonly issueCopy: number;
  private readonly issueRecord: number;
  private readonly issueKernel: number;
  private readonly issueConvert: number;
  private readonly issueAttention: number;
  private readonly hostClock: boolean;
  private hostAt = 0;
  /** ops the host clock has issued, and at the current step's start */
  private hostOps = 0;
  private stepOps0 = 0;
  /** gpu.launch_queue_ops with the host clock (0: no limit) */
  private readonly queueOps: number;
  /**
   * memory-stream ops the host clock has issued in this step (copies, conversion launches, the marks
   * around a batch or a requantization, the barrier's wait), and whether the step began behind the HIL's
   * barrier (memOps)
   */
  private memOpsStep = 0;
  private barrier = false;
  /** gpu.host_convert_us with the host clock (0: none): a block's change of bits in or between host tiers, on the host */
  private readonly hostConvertUs: number;
  /** gpu.file_batch_host_us with the host clock (0: none): the host's time per joined file read batch beyond the batch itself */
  private readonly fileBatchHostUs: number;
  /** per step so far: its ops and its GPU time (boundLead walks back over the latest of them) */
  private readonly leadOps: number[] = [];
  private readonly leadUs: number[] = [];
  /** a step has begun (the next one starts with the HIL's step barrier) */
  private begun = false;

  constructor(
    readonly hardware: HardwareProfile,
    readonly model: ModelSpec,
    private readonly opts: SimExecutorOptions = { traceSteps: 0 },
  ) {
    this.topology = new Topology(this.engine, hardware);
    this.tierNames = hardware.tiers.map((t) => t.name);
    this.routes = holeyObjectArray<Route>(this.tierNames.length * this.tierNames.length);
    this.compute = new Stream(this.engine, 'compute', 0);
    this.storage = hardware.tiers.map((t) => t.kind === 'nvme' || t.kind === 'hdd' || t.kind === 'remote');
    this.bounce = new Int8Array(this.tierNames.length).fill(-1);
    // every route and bounce tier asked for up front (a pair without one is asked again where it is used,
    // and refused there): their first use in a replay, which runs at its start, then takes no branch that
    // code compiled during an earlier replay has no type feedback for
    for (let from = 0; from < this.tierNames.length; from++) {
      for (let to = 0; to < this.tierNames.length; to++) {
        if (from === to) continue;
        try {
          this.routeOf(from, to);
        } catch {
          // (no route between these tiers)
        }
      }
      if (this.storage[from]) {
        try {
          this.bounceTier(from);
        } catch {
          // (no route to HBM)
        }
      }
    }
    this.memory = new Stream(this.engine, 'memory', 2);
    this.host = new Stream(this.engine, 'host-io', 4);
    if (opts.weightStreaming) {
      if (!this.tierNames.includes(opts.weightStreaming.tier) || opts.weightStreaming.tier === this.tierNames[0]) {
        throw new Error(`weight streaming: tier must be one of ${this.tierNames.slice(1).join(', ')} (got "${opts.weightStreaming.tier}")`);
      }
      if (!(opts.weightStreaming.buffers >= 1)) throw new Error(`weight streaming: buffers must be >= 1 (got ${opts.weightStreaming.buffers})`);
      const r = opts.weightStreaming.residentLayers ?? 0;
      if (!(Number.isInteger(r) && r >= 0 && r <= model.layers)) throw new Error(`weight streaming: residentLayers must be an integer in 0..${model.layers} (got ${r})`);
      const lb = opts.weightStreaming.layerBytes;
      if (lb !== undefined && !(lb > 0)) throw new Error(`weight streaming: layerBytes must be > 0 (got ${lb})`);
      this.weights = new Stream(this.engine, 'weights-h2d', 1);
    }
    this.traced = [this.compute, this.memory, this.host, ...(this.weights ? [this.weights] : [])];
    this.recordSpans();
    // each query head multiplies and adds every K and V element of its KV head (MLA: of the latent)
    const group = model.attention === 'mla' ? model.q_heads : model.q_heads / model.kv_heads;
    this.attnFlopsPerToken = 2 * group * kvElementsPerTokenLayer(model);
    this.bytes0 = new Float64Array(this.topology.linkDirections().keys.length);
    const ws = opts.weightStreaming;
    this.linearUs = linearTimeUs(hardware.gpu, ws?.layerBytes ?? model.weight_bytes_per_layer, model.flops_per_token_per_layer);
    // LM head: about half of the non-layer weights (embedding table and output projection)
    this.lmHeadUs = linearTimeUs(hardware.gpu, (ws?.otherBytes ?? model.other_weight_bytes) / 2, model.other_weight_bytes / 2);
    this.rotateUs = opts.rotation ? rotationTimeUs(hardware.gpu, model) : 0;
    // kernels slowed by copies that share HBM (gpu.kernel_slowdown_under_h2d / _d2h): a compute kernel
    // runs on for fraction x the time it shared with memory-stream copies into (out of) HBM. The memory
    // stream runs one copy at a time, so the two never overlap; the extra time itself is not
    // lengthened again (a second-order term: fraction^2).
    const slowIn = hardware.gpu.kernel_slowdown_under_h2d ?? 0;
    const slowOut = hardware.gpu.kernel_slowdown_under_d2h ?? 0;
    if (slowIn > 0 || slowOut > 0) {
      this.compute.stretch = (start) => {
        const in0 = this.copiesIn.at(start);
        const out0 = this.copiesOut.at(start);
        return (end) => slowIn * (this.copiesIn.at(end) - in0) + slowOut * (this.copiesOut.at(end) - out0);
      };
    }
    this.gemvs = hardware.gpu.copy_under_compute === 'gemv' ? new IntervalLog() : null;
    this.batchUs = hardware.gpu.copy_batch_us ?? 0;
    this.usesSpread = hardware.links.some((k) => [k.a_to_b, k.b_to_a].some((d) => (d?.spread_us ?? 0) > 0 || (d?.adjacent_us ?? 0) > 0));
    this.issueCopy = hardware.gpu.issue_copy_us ?? 0;
    this.issueRecord = hardware.gpu.issue_record_us ?? 0;
    this.issueKernel = hardware.gpu.issue_kernel_us ?? 0;
    this.issueConvert = hardware.gpu.issue_convert_us ?? this.issueKernel;
    this.issueAttention = hardware.gpu.issue_attention_us ?? this.issueKernel;
    this.usesMixedShare = hardware.gpu.attention_kernels?.mixed_interleaved !== undefined;
    this.hostClock = hasHostClock(hardware.gpu);
    this.queueOps = this.hostClock ? (hardware.gpu.launch_queue_ops ?? 0) : 0;
    this.hostConvertUs = this.hostClock ? (hardware.gpu.host_convert_us ?? 0) : 0;
    this.fileBatchHostUs = this.hostClock ? (hardware.gpu.file_batch_host_us ?? 0) : 0;
    if (this.gemvs) this.compute.log = { intervals: this.gemvs, names: new Set(['linear', 'lm-head']) };
    if (opts.staging) {
      this.ring = new StagingRing(opts.staging.ringBytes, opts.staging.fence, () => this.compute.idle);
      for (let l = 0; l < model.layers; l++) this.ringExtents.push(objectArray());
    }
  }

  /** the streams whose spans are recorded while step < traceSteps */
  private readonly traced: Stream[];
  private readonly pushSpan = (span: TraceSpan): void => {
    this.spans.push(span);
  };

  /** spans are recorded for steps < traceSteps: the streams report none (make no span objects) after */
  private recordSpans(): void {
    const on = this.step < this.opts.traceSteps ? this.pushSpan : null;
    for (const s of this.traced) s.onSpan = on;
  }

  beginStep(step: number): void {
    this.memOpsStep = 0;
    this.barrier = this.begun;
    if (this.begun) {
      if (this.queueOps > 0) this.boundLead();
      // (the barrier's record and wait below count among this step's ops)
      this.stepOps0 = this.hostOps;
      // the HIL starts every step after the first with the memory stream waiting on a compute fence (all of
      // the previous step's compute, which has ended here): a record and a wait, and no staging copy of this
      // step waits on an earlier fence
      if (this.hostClock) {
        this.hostOp(1, this.issueRecord);
        this.memOps(1, this.issueRecord);
      }
      this.ring?.barrier();
    }
    this.begun = true;
    this.step = step;
    this.recordSpans();
    this.stepStart = this.engine.now;
    this.computeBusy0 = this.compute.busyUs;
    this.stall0 = this.compute.stallUs;
    this.lastStage = -1;
    this.memBusy0 = this.memBusy();
    // GEMVs that ended before the copy in flight (or now) price no copy any more
    this.gemvs?.dropBefore(Number.isNaN(this.copyStart) ? this.engine.now : this.copyStart);
    // untraced steps: compute kernels cost no engine event unless something waits on them
    this.compute.lazy = step >= this.opts.traceSteps;
  }

  move(b: MoveBatch): Signal {
    this.lastStage = -1;
    const args = this.stepArgs(b.layer, b.blocks.length, b.reason);
    const requant = b.fromBits !== b.toBits;
    const runs = Math.max(1, b.runs);
    if (requant && b.fromTier !== 0 && b.toTier !== 0 && this.hostConvertUs > 0) return this.hostRequant(b, runs, args);
    if (b.fromTier === b.toTier) {
      // (the HIL marks the memory stream before and after a requantization)
      if (this.hostClock) this.memOps(1, this.issueRecord);
      const done = this.convertOn(this.convertName('requantize', b.fromBits, b.toBits), b, args);
      if (this.hostClock) this.memOps(1, this.issueRecord);
      return done;
    }
    if (b.toTier === 0) {
      if (this.usesSpread) {
        this.spreadNow = spreadDoublings(b.blocks);
        // (consecutive blocks less those a run joins (blocks - runs: into touching HBM slots); none where
        // the blocks are converted on the way, each copied to scratch with a kernel between)
        this.adjacentNow = requant ? 0 : Math.max(0, adjacentCopies(b.blocks) - (b.blocks.length - runs));
      }
      const done = this.toHbm(b.fromTier, b.bytesFrom, runs, b.reason, args);
      return requant ? this.convertOn(this.convertName('dequantize', b.fromBits, b.toBits), b, args) : done;
    }
    if (b.fromTier === 0) {
      if (requant) this.convertOn(this.convertName('quantize', b.fromBits, b.toBits), b, args);
      if (this.usesSpread) this.spreadNow = spreadDoublings(b.blocks);
      return this.fromHbm(b.toTier, b.bytesTo, runs, b.reason, args);
    }
    // between host tiers (requantization happens on the host and is not timed): file requests for a
    // storage end, else a host-to-host copy on the memory stream (as the HIL issues it)
    if (!this.storage[b.fromTier] && !this.storage[b.toTier]) return this.copyOn(this.memory, b.fromTier, b.toTier, b.bytesTo, runs, b.reason, args);
    const done = this.fileRequests(b.fromTier, b.toTier, b.bytesTo, runs, b.reason, args);
    // (the host joins a storage source's reads before it issues anything else)
    if (this.storage[b.fromTier] && this.hostClock) this.joinReads(done);
    return done;
  }

  stage(b: MoveBatch): Signal {
    const args = this.stepArgs(b.layer, b.blocks.length, b.reason);
    const key = b.blocks.length > 0 ? b.layer * this.tierNames.length + b.fromTier : -1;
    this.continuesStage = key >= 0 && key === this.lastStage;
    const runs = Math.max(1, b.runs);
    const waits = this.ringWait(b.layer, b.bytesFrom);
    if (this.usesSpread) {
      // (a bulk stage lists no blocks: the driver counts its spread)
      if (b.blocks.length === 0) {
        this.spreadNow = b.spread ?? 0;
        this.lastStagedBlock = -1;
      } else {
        this.spreadNow = spreadDoublings(b.blocks, this.continuesStage ? this.lastStagedBlock : -1);
        this.lastStagedBlock = b.blocks[b.blocks.length - 1];
      }
      // (the driver counts a stage's adjacent copies, listed or bulk: which blocks coalesce depends on their bits)
      this.adjacentNow = b.adjacent ?? 0;
    }
    const done = this.toHbm(b.fromTier, b.bytesFrom, runs, b.reason, args, waits);
    this.continuesStage = false;
    this.lastStage = key;
    return done;
  }

  /** With the staging ring: an extent for a staged or fetched copy into layer `layer`; the compute signal the copy waits for, if any. */
  private ringWait(layer: number, bytes: number): readonly Signal[] {
    if (!this.ring) return NO_WAITS;
    this.ringExtents[layer].push(this.ring.place(bytes));
    const wait = this.ring.placedWait;
    if (!wait) return NO_WAITS;
    // (the HIL has the memory stream wait on the compute fence before the copy)
    if (this.hostClock) this.hostOp(1, this.issueRecord);
    return [wait];
  }

  /**
   * host tier -> HBM: one copy per run on the memory stream; a storage tier first reads into its DRAM
   * bounce slots. With the host clock the host joins those reads before it issues the copies (the HIL
   * awaits a batch's reads at its join), so nothing it issues after them starts earlier.
   */
  private toHbm(tier: number, bytes: number, runs: number, reason: string, args: StreamOp['args'], waits: readonly Signal[] = NO_WAITS): Signal {
    if (!this.storage[tier]) return this.copyOn(this.memory, tier, 0, bytes, runs, reason, args, waits);
    const mid = this.bounceTier(tier);
    // (a copy's name shows only in traced spans: untraced steps, without args, give the reason alone)
    const read = this.fileRequests(tier, mid, bytes, runs, args ? `${reason} read` : reason, args);
    if (this.hostClock) this.joinReads(read);
    const all = [read];
    for (let i = 0; i < waits.length; i++) all.push(waits[i]);
    return this.copyOn(this.memory, mid, 0, bytes, runs, reason, args, all);
  }

  /**
   * HBM -> host tier: one copy per run on the memory stream; to a storage tier, then file writes from
   * the DRAM slots. With the host clock the host synchronizes the memory stream before the writes (the
   * HIL does before a file write from a slot a copy filled) and goes on without waiting for them.
   */
  private fromHbm(tier: number, bytes: number, runs: number, reason: string, args: StreamOp['args']): Signal {
    if (!this.storage[tier]) return this.copyOn(this.memory, 0, tier, bytes, runs, reason, args);
    const mid = this.bounceTier(tier);
    const copied = this.copyOn(this.memory, 0, mid, bytes, runs, reason, args);
    if (this.hostClock) this.hostWaitFor(copied);
    return this.fileRequests(mid, tier, bytes, runs, args ? `${reason} write` : reason, args, [copied]);
  }

  /**
   * File requests on the host I/O stream (reads from or writes to a storage tier). With the host clock
   * they start no earlier than the host has issued everything before them, as the HIL hands a batch to
   * the file tier in its turn among the step's ops.
   */
  private fileRequests(from: number, to: number, bytes: number, runs: number, name: string, args: StreamOp['args'], waits: readonly Signal[] = NO_WAITS): Signal {
    if (this.hostClock && this.host.issueAt < this.hostAt) this.host.issueAt = this.hostAt;
    return this.copyOn(this.host, from, to, bytes, runs, name, args, waits);
  }

  /** the host tier (index) a storage tier's blocks pass through on their way to HBM (the tier next to HBM on the route) */
  private bounceTier(storage: number): number {
    let mid = this.bounce[storage];
    if (mid === -1) {
      const hops = this.topology.route(this.tierNames[storage], this.tierNames[0]).hops;
      const last = hops[hops.length - 1];
      mid = hops.length < 2 ? 0 : this.tierNames.indexOf(last.slice(last.indexOf(':') + 1, last.indexOf('->')));
      this.bounce[storage] = mid;
    }
    return mid;
  }
  /** per storage tier: its bounceTier once asked for (-1 before) */
  private readonly bounce: Int8Array;

  layer(w: LayerWork, waits: Signal[]): void {
    this.lastStage = -1;
    const tracing = this.step < this.opts.traceSteps;
    const args = tracing ? { step: w.step, layer: w.layer } : undefined;
    const all = waits;
    let fetched = 0;
    for (let t = 1; t < w.fetchBytes.length; t++) {
      if (w.fetchBytes[t] > 0) {
        if (this.usesSpread) {
          this.spreadNow = w.fetchSpread?.[t] ?? 0;
          this.adjacentNow = w.fetchAdjacent?.[t] ?? 0;
        }
        all.push(this.toHbm(t, w.fetchBytes[t], Math.max(1, w.fetchRuns[t] ?? 1), 'fetch', args, this.ringWait(w.layer, w.fetchBytes[t])));
        fetched += w.fetchBytes[t];
      }
    }
    const fenced = this.opts.tailWaits ? this.waitOnMemoryTail(all) : false;
    const kvBytes = w.residentBytes + w.stagedBytes + fetched;
    const gpu = this.hardware.gpu;
    // the host issues the layer as the HIL lowers it: marks before and after the waits, (rotation,)
    // attention, a mark, the projections (and LM head), a mark
    const host = this.hostClock;
    if (host) this.hostOp(2, this.issueRecord);
    // (a wait on the memory stream's tail: the HIL records a fence there and has compute wait on it)
    if (host && fenced) this.hostOp(2, this.issueRecord);
    if (this.rotateUs > 0) {
      // (the HIL rotates q before the attention and the output after it: two launches)
      if (host) this.issueOn(this.compute, 2, this.issueKernel);
      this.compute.enqueueKernel('rotate', 'kernel', this.rotateUs, NO_WAITS, args);
    }
    if (host) this.issueOn(this.compute, 1, this.issueAttention);
    const attentionUs = attentionTimeUs(gpu, w.tokens, kvBytes, this.attnFlopsPerToken * w.tokens, w.kernel, w.mixedShare, w.blocksByBits);
    const attentionArgs = tracing ? { ...args, tokens: w.tokens, kv_bytes: kvBytes } : undefined;
    // the layer's staged and fetched extents are free for reuse once this attention has read them
    const ext = this.ring ? this.ringExtents[w.layer] : null;
    if (ext && ext.length !== 0) {
      this.ring!.release(ext, this.timedOn(this.compute, 'attention', attentionUs, all, attentionArgs));
      // (emptied by pops for the layer's next extents: setting an array's length is a slow runtime call)
      while (ext.length !== 0) ext.pop();
      // (the HIL records a compute fence right after an attention that read staging extents)
      if (host) this.hostOp(1, this.issueRecord);
    } else {
      // nothing keeps this kernel's signal: a lazy compute stream then makes none
      this.compute.enqueueKernel('attention', 'kernel', attentionUs, all, attentionArgs);
    }
    if (host) this.hostOp(1, this.issueRecord);
    if (this.weights && w.layer >= (this.opts.weightStreaming!.residentLayers ?? 0)) {
      // the layer's weight copies are issued before its projections (as the HIL issues them)
      const waits = this.streamWeights(args);
      if (host) this.issueOn(this.compute, 1, this.issueKernel);
      this.linearDone.push(this.timedOn(this.compute, 'linear', this.linearUs, waits, args));
    } else {
      if (host) this.issueOn(this.compute, 1, this.issueKernel);
      this.compute.enqueueKernel('linear', 'kernel', this.linearUs, NO_WAITS, args);
    }
    if (w.layer === this.model.layers - 1) {
      if (host) this.issueOn(this.compute, 1, this.issueKernel);
      this.compute.enqueueKernel('lm-head', 'kernel', this.lmHeadUs, NO_WAITS, args);
    }
    if (host) this.hostOp(1, this.issueRecord);
  }

  /**
   * The host clock issues `runs` copies for stream `s` one after another: the op enqueued next on `s`
   * starts no earlier than the first is issued; returns when the last is.
   */
  private issueCopies(s: Stream, runs: number): number {
    if (s === this.memory) {
      this.memOps(1, this.issueCopy);
      s.issueAt = this.hostAt;
      this.memOps(runs - 1, this.issueCopy);
      return this.hostAt;
    }
    s.issueAt = this.hostAt + this.issueCopy;
    this.hostOp(runs, this.issueCopy);
    return this.hostAt;
  }

  /** The host clock records a timing mark on stream `s` (on the memory stream, one of its queued ops). */
  private issueMark(s: Stream): void {
    if (s === this.memory) this.memOps(1, this.issueRecord);
    else this.hostOp(1, this.issueRecord);
  }

  /**
   * The host clock issues `n` memory-stream ops of `us` each. With gpu.launch_queue_ops (q): every step
   * after the first begins with the memory stream waiting on the previous step's compute (the HIL's
   * barrier), so the stream runs none of the step's ops before that compute has ended (the step's
   * start); its queue holds q ops, and the host issues the step's (q+1)-th memory-stream op no earlier
   * than the step's start, however far ahead of the GPU it was.
   */
  private memOps(n: number, us: number): void {
    const q = this.queueOps;
    if (q > 0 && this.barrier && this.memOpsStep <= q && this.memOpsStep + n > q) {
      const before = q - this.memOpsStep;
      this.hostOp(before, us);
      if (this.hostAt < this.stepStart) this.hostAt = this.stepStart;
      this.hostOp(n - before, us);
    } else {
      this.hostOp(n, us);
    }
    this.memOpsStep += n;
  }

  /** The host clock issues `n` ops of `us` each for stream `s`: the op enqueued next on `s` starts no earlier than then. */
  private issueOn(s: Stream, n: number, us: number): void {
    this.hostOp(n, us);
    s.issueAt = this.hostAt;
  }

  /**
   * A change of bits in or between host tiers as the HIL executor makes it (gpu.host_convert_us): a
   * storage source's blocks are read into their DRAM slots first, and the host waits for the reads;
   * then the host waits until everything queued on the memory stream (and the weight copies' stream,
   * which the HIL issues on its memory stream) has run, as its synchronize before a host conversion
   * does, and converts the blocks one after another on its CPU, writing each into its destination
   * slot (nothing crosses a host link between DRAM and CXL); a storage destination's blocks are then
   * written from their DRAM slots. The full drain before every conversion is the HIL's path without a
   * file tier; with one, the HIL syncs only where a slot has unsynchronized copies, so this is an
   * upper bound there.
   */
  private hostRequant(b: MoveBatch, runs: number, args: StreamOp['args']): Signal {
    if (this.storage[b.fromTier]) this.joinReads(this.fileRequests(b.fromTier, this.bounceTier(b.fromTier), b.bytesFrom, runs, args ? `${b.reason} read` : b.reason, args));
    this.hostWaitFor(this.memory.idle);
    if (this.weights) this.hostWaitFor(this.weights.idle);
    this.hostAt += b.blocks.length * this.hostConvertUs;
    // (the file requests that follow go after the conversions)
    if (this.storage[b.toTier]) return this.fileRequests(this.bounceTier(b.toTier), b.toTier, b.bytesTo, runs, args ? `${b.reason} write` : b.reason, args);
    // the blocks are converted when the host is done (a due signal is never before the engine's clock)
    return Signal.due(this.engine, Math.max(this.hostAt, this.engine.now), this.memory.priority);
  }

  /** the host joins a batch of file reads: it waits for them, then spends gpu.file_batch_host_us on the batch */
  private joinReads(read: Signal): void {
    this.hostWaitFor(read);
    this.hostAt += this.fileBatchHostUs;
  }

  /** the host waits until `sig` has fired: the engine runs to it, and the host clock is no earlier than it */
  private hostWaitFor(sig: Signal): void {
    this.runUntil(sig, 'the host waits on GPU or file work that never completes');
    if (sig.at > this.hostAt) this.hostAt = sig.at;
  }

  /** the engine runs until `sig` has fired (`stuck`: what the deadlock error says) */
  private runUntil(sig: Signal, stuck: string): void {
    if (!sig.done && !Number.isNaN(sig.dueAt)) {
      // a due signal: run what happens before it, then it fires (or its event, if something armed it)
      this.engine.runBefore(sig.dueAt);
      sig.settle();
    }
    while (!sig.done) {
      if (!this.engine.step()) throw new Error(`simulation deadlock: ${stuck}`);
    }
  }

  /** The host clock issues `n` ops of `us` each. */
  private hostOp(n: number, us: number): void {
    this.hostAt += n * us;
    this.hostOps += n;
  }

  /**
   * gpu.launch_queue_ops: the host issues at most this many ops ahead of the GPU. When the host has
   * issued a step, the GPU still had at most that many of the latest ops to run: the host clock is
   * then no earlier than the step's end less the GPU time of those ops (each step's time spread
   * evenly over its ops). Checked at each step's start, as the steps before it are timed.
   */
  private boundLead(): void {
    const q = this.queueOps;
    const ops = this.hostOps - this.stepOps0;
    this.leadOps.push(ops);
    this.leadUs.push(this.engine.now - this.stepStart);
    let left = q;
    let lead = 0;
    for (let k = this.leadOps.length - 1; k >= 0 && left > 0; k--) {
      const n = this.leadOps[k];
      const us = this.leadUs[k];
      if (n <= left) {
        lead += us;
        left -= n;
      } else {
        lead += (us * left) / n;
        left = 0;
      }
    }
    if (left > 0) return;
    const earliest = this.engine.now - lead;
    if (this.hostAt < earliest) this.hostAt = earliest;
  }

  endStep(): StepTiming {
    this.runUntil(this.compute.idle, 'compute stream waits on work that never completes');
    const { keys, resources } = this.topology.linkDirections();
    const delta: Record<string, number> = {};
    for (let i = 0; i < keys.length; i++) {
      const now = resources[i].bytes;
      delta[keys[i]] = now - this.bytes0[i];
      this.bytes0[i] = now;
    }
    return {
      latency_us: this.engine.now - this.stepStart,
      compute_us: this.compute.busyUs - this.computeBusy0,
      stall_us: this.compute.stallUs - this.stall0,
      transfer_us: this.memBusy() - this.memBusy0,
      bytes: delta,
    };
  }

  finish(): Record<string, number> {
    this.engine.run();
    return this.topology.linkBytes();
  }

  private memBusy(): number {
    return this.memory.busyUs + this.host.busyUs + (this.weights?.busyUs ?? 0);
  }

  /**
   * With weight streaming, for a streamed layer (the i-th streamed layer executed): issue the copies of
   * the next streamed layers' weights as buffers free up; the waits of this layer's linear kernel.
   */
  private streamWeights(args: StreamOp['args']): readonly Signal[] {
    const ws = this.opts.weightStreaming;
    if (!ws || !this.weights) return NO_WAITS;
    const i = this.layerSeq++;
    for (let j = this.weightCopy.length; j <= i + ws.buffers - 1; j++) {
      // layer j's weights go into the buffer that layer j - buffers used: wait for its linear kernel
      const waits = j - ws.buffers >= 0 ? [this.linearDone[j - ws.buffers]] : [];
      this.weightCopy.push(this.copyOn(this.weights, this.tierNames.indexOf(ws.tier), 0, ws.layerBytes ?? this.model.weight_bytes_per_layer, 1, 'weights', args, waits));
    }
    return [this.weightCopy[i]];
  }

  /**
   * A batch's change of bits on the memory stream. With the profile's convert_kernel_us: one kernel
   * per block and quantized end (INT -> INT goes through FP16: two), each costing
   * convert_kernel_under_compute_us while kernels run on the compute stream (pro rata over the batch,
   * as alphaOf), else convert_kernel_us. Without it: one kernel for the batch on the generic line.
   */
  /** a conversion kernel's name, `${kind} ${from}->${to}b` (made once per kind and bit widths) */
  private convertName(kind: 'requantize' | 'dequantize' | 'quantize', from: number, to: number): string {
    if (!(from >= 0 && from < 256 && to >= 0 && to < 256 && Number.isInteger(from) && Number.isInteger(to))) return `${kind} ${from}->${to}b`;
    const key = (kind === 'requantize' ? 0 : kind === 'dequantize' ? 1 : 2) * 65536 + from * 256 + to;
    let name = this.convertNames.get(key);
    if (name === undefined) this.convertNames.set(key, (name = `${kind} ${from}->${to}b`));
    return name;
  }
  private readonly convertNames = new Map<number, string>();

  private convertOn(name: string, b: MoveBatch, args: StreamOp['args']): Signal {
    const gpu = this.hardware.gpu;
    const idle = gpu.convert_kernel_us;
    if (idle === undefined) {
      if (this.hostClock) {
        this.memOps(1, this.issueConvert);
        this.memory.issueAt = this.hostAt;
      }
      return this.kernelOn(this.memory, name, b.bytesFrom + b.bytesTo, 0, NO_WAITS, args);
    }
    const busy = gpu.convert_kernel_under_compute_us ?? idle;
    const kernels = b.blocks.length * ((b.fromBits !== 16 ? 1 : 0) + (b.toBits !== 16 ? 1 : 0));
    // with the host clock: the first kernel starts once issued, and the last runs after its own issue
    let last = 0;
    if (this.hostClock && kernels > 0) {
      this.memOps(1, this.issueConvert);
      this.memory.issueAt = this.hostAt;
      this.memOps(kernels - 1, this.issueConvert);
      last = this.hostAt;
    }
    const op: StreamOp = {
      name,
      cat: 'quantize',
      waits: [],
      args: args ? { ...args, kernels } : undefined,
      run: (finish) => {
        const now = this.engine.now;
        const us = busy !== idle && this.compute.busyAt(now) ? this.proRata(idle, busy, busy, kernels) : idle * kernels;
        // the last kernel, where the host issued it after the others had run: at the pace of its issue time
        const end = last > 0 ? last + (this.compute.busyAt(last) ? busy : idle) : 0;
        this.engine.after(now + us < end ? end - now : us, finish, this.memory.priority);
      },
    };
    return this.tagMem(this.memory, this.memory.enqueue(op));
  }

  private kernelOn(s: Stream, name: string, bytes: number, flops: number, waits: readonly Signal[], args: StreamOp['args']): Signal {
    return this.tagMem(s, this.timedOn(s, name, kernelTimeUs(this.hardware.gpu, bytes, flops), waits, args));
  }

  /** tail waits: memory-stream ops are numbered in issue order; the compute stream has waited for every op up to memCovered */
  private memSeq = 0;
  private memCovered = 0;
  private tagMem(s: Stream, sig: Signal): Signal {
    if (this.opts.tailWaits && s === this.memory) sig.seq = ++this.memSeq;
    return sig;
  }

  /**
   * opts.tailWaits: the layer's waits on memory-stream ops become one wait on everything queued on the
   * memory stream so far, unless an earlier such wait already covered them all (then none); waits on
   * other streams stay. In place.
   */
  /** true when the attention now waits on the memory stream's tail (a fence the HIL records and waits on) */
  private waitOnMemoryTail(waits: Signal[]): boolean {
    let need = 0;
    let k = 0;
    for (let i = 0; i < waits.length; i++) {
      const x = waits[i];
      const q = x.seq;
      if (q === 0) waits[k++] = x;
      else if (q > need) need = q;
    }
    // (cut by pops: setting an array's length is a slow runtime call)
    while (waits.length !== k) waits.pop();
    if (need > this.memCovered) {
      waits.push(this.memory.idle);
      this.memCovered = this.memSeq;
      return true;
    }
    return false;
  }

  private timedOn(s: Stream, name: string, us: number, waits: readonly Signal[], args: StreamOp['args']): Signal {
    return s.enqueueTimed(name, 'kernel', us, waits, args);
  }

  private stepArgs(layer: number, blocks: number, reason: string): StreamOp['args'] {
    return this.step < this.opts.traceSteps ? { step: this.step, layer, blocks, reason } : undefined;
  }

  /**
   * Total alpha of `runs` copies of `bytes` issued back to back on the memory stream now: the runs
   * that start while kernels run on the compute stream pay alpha_under_compute_us, the others alpha_us.
   * How many start under compute: the compute stream's busy stretch ends at busyUntil; each run takes
   * its alpha plus its bytes at the route's narrowest bandwidth (sharing with other flows ignored).
   */
  private alphaOf(route: Route, bytes: number, runs: number): number {
    const idle = route.alpha_us;
    const busy = route.alpha_under_compute_us;
    const now = this.engine.now;
    if (busy === idle || !this.compute.busyAt(now)) return idle * runs;
    return this.proRata(idle, busy, busy + bytes / runs / narrowest(route), runs);
  }

  /**
   * `n` items back to back from now, each costing `busy` while the compute stream's busy stretch lasts
   * (an item there takes `perItem` in all) and `idle` after it: the items that start under compute
   * pro rata, the rest idle. (The caller has checked that the compute stream is busy now.)
   */
  private proRata(idle: number, busy: number, perItem: number, n: number): number {
    const under = Math.min(n, (this.compute.busyUntil - this.engine.now) / perItem);
    return under * busy + (n - under) * idle;
  }

  /** `runs` copies (file requests) back to back: the route's alpha once per run, the bytes at the flow rate */
  private copyOn(s: Stream, from: number, to: number, bytes: number, runs: number, reason: string, args: StreamOp['args'], waits: readonly Signal[] = NO_WAITS): Signal {
    const route = this.routeOf(from, to);
    if (this.opts.copyMode === 'gather' && s === this.memory) runs = 1;
    const dir = s !== this.memory ? 0 : to === 0 ? 1 : from === 0 ? -1 : 0;
    // (the name shows only in traced spans, and only traced steps have args)
    const name = args ? `${reason} ${this.tierNames[from]}->${this.tierNames[to]}` : reason;
    let batchUs = s === this.memory && dir !== 0 && !this.continuesStage ? this.batchUs : 0;
    // (the spread of a batch's host slots: paid once, by its copy to or from HBM on the memory stream;
    // a gather copies the blocks in one run)
    if (this.spreadNow > 0 && s === this.memory && dir !== 0) {
      if (this.opts.copyMode !== 'gather') batchUs += this.spreadNow * route.spread_us;
      this.spreadNow = 0;
    }
    // (adjacent host slots: read faster into HBM, per copy after the batch's first, each by at most its alpha)
    if (this.adjacentNow > 0 && s === this.memory && dir !== 0) {
      if (this.opts.copyMode !== 'gather' && dir > 0) batchUs -= Math.min(this.adjacentNow, runs - 1) * Math.min(route.adjacent_us, route.alpha_us);
      this.adjacentNow = 0;
    }
    const opArgs = args ? { ...args, bytes, runs } : undefined;
    const free = this.freeOps;
    const op = free.length !== 0 ? free.pop()!.reuse(s, name, waits, opArgs, route, bytes, runs, dir, batchUs) : new CopyOp(this, s, name, waits, opArgs, route, bytes, runs, dir, batchUs);
    // the host issues a GPU copy batch copy by copy (a memory-stream batch between two marks); the
    // file requests of the host I/O stream are not on its clock
    if (this.hostClock && s !== this.host) {
      // (marks around a memory-stream batch, and around each weight copy: the HIL issues those on its memory stream)
      const marked = (s === this.memory && !this.continuesStage) || s === this.weights;
      if (marked) this.issueMark(s);
      op.issuedLast = this.issueCopies(s, runs);
      if (marked) this.issueMark(s);
    }
    return this.tagMem(s, s.enqueueTask(op));
  }

  /** The topology's route between two tiers (indices), kept per pair once asked for. */
  private routeOf(from: number, to: number): Route {
    const k = from * this.tierNames.length + to;
    return (this.routes[k] ??= this.topology.route(this.tierNames[from], this.tierNames[to]));
  }
  private readonly routes: (Route | undefined)[];

  /**
   * The run of a copy op: the transfer through the flow network, timed on the HBM copy clocks (dir 1:
   * into HBM, -1: out of it). A memory-stream copy whose direction differs from the stream's previous
   * copy's pays the route's switch_us once (switch_under_compute_us if it starts while a kernel runs on
   * the compute stream). With gpu.copy_under_compute 'gemv' a memory-stream copy runs at alpha_us and
   * settles what it ran beside GEMVs when it ends (copyDone). (Called by CopyOp only; the transfer's
   * end calls copyDone.)
   */
  runCopy(op: CopyOp): void {
    const clock = op.dir > 0 ? this.copiesIn : op.dir < 0 ? this.copiesOut : null;
    clock?.start(this.engine.now);
    const { route, bytes, runs } = op;
    let alpha = route.request_us !== null && runs > 0 ? requestAlphaUs(route.request_us, route.alpha_us, narrowest(route), bytes, runs) : route.alpha_us * runs;
    // (a storage move on the host's I/O stream is one batch of file requests, joined: its fixed time once)
    if (op.stream === this.host && runs > 0) alpha += route.batch_us;
    if (op.stream === this.memory) {
      if (this.gemvs) this.copyStart = this.engine.now;
      else alpha = this.alphaOf(route, bytes, runs);
      if (op.dir !== 0) {
        alpha += op.batchUs;
        if (this.lastCopyDir !== 0 && op.dir !== this.lastCopyDir) alpha += this.compute.busyAt(this.engine.now) ? route.switch_under_compute_us : route.switch_us;
        this.lastCopyDir = op.dir;
      }
    }
    this.topology.network.send(route.resources, bytes, alpha, op, workOf(route, bytes, runs));
  }

  /**
   * A copy op's transfer has completed: its HBM copy clock stops, and the op ends. With
   * gpu.copy_under_compute 'gemv', a memory-stream copy first runs on for what its time beside GEMVs
   * costs (besideGemvsEnd). (Called by CopyOp only.)
   */
  copyDone(op: CopyOp): void {
    let end = this.engine.now;
    if (this.gemvs && op.stream === this.memory) {
      this.copyStart = Number.NaN;
      end = this.besideGemvsEnd(op.route, op.bytes, op.runs, op.began);
    }
    // host clock: the last copy runs once the host has issued it, priced as one copy starting then
    if (op.issuedLast > 0) {
      const last = this.hostBoundEnd(op);
      if (last > end) end = last;
    }
    const extra = end - this.engine.now;
    if (extra > 0) {
      op.phase = 3; // its own event: step() ends it
      this.engine.after(extra, op, op.stream.priority);
      return;
    }
    this.copyEnd(op);
  }

  /**
   * When a copy op's last copy ends if it starts when the host issued it (op.issuedLast): one copy of
   * the op's bytes per run, at the memory stream's pricing: with gpu.copy_under_compute 'gemv' slowed
   * inside the GEMVs it runs beside; else at alpha_under_compute_us if a kernel runs then. Other
   * streams' copies at alpha_us.
   */
  private hostBoundEnd(op: CopyOp): number {
    const route = op.route;
    const at = op.issuedLast;
    const perCopy = workOf(route, op.bytes / op.runs, 1);
    const idle = route.alpha_us + perCopy / narrowest(route);
    if (op.stream !== this.memory) return at + idle;
    if (this.gemvs) {
      const busy = route.alpha_under_compute_us + perCopy / route.under_compute_capacity;
      return idle > 0 && busy > idle ? this.gemvs.slowedEnd(at, at + idle, idle / busy) : at + idle;
    }
    return at + (this.compute.busyAt(at) ? route.alpha_under_compute_us - route.alpha_us : 0) + idle;
  }

  /** A copy op ends: its HBM copy clock stops. (Called by CopyOp only.) */
  copyEnd(op: CopyOp): void {
    const clock = op.dir > 0 ? this.copiesIn : op.dir < 0 ? this.copiesOut : null;
    clock?.stop(this.engine.now);
    op.finish();
    // ended: its signal has fired and its stream, transfer and events are done with it
    if (this.reuseOps) this.freeOps.push(op);
  }
  /** ended copy ops, for copyOn() to reuse (reuseOps, on by default: off, every copy op is a new object) */
  private readonly freeOps: CopyOp[] = objectArray();
  reuseOps = true;

  /**
   * When `runs` copies of `bytes` in all, which ran from `began` to now at the idle pace (each alpha_us
   * plus its bytes, as workOf counts them, at the route's narrowest bandwidth), end once their time
   * beside GEMVs is priced: there each copy takes alpha_under_compute_us plus the same bytes at the
   * route's under-compute bandwidth, so the copies go at idle pace / that pace while a GEMV runs. A
   * batch inside a GEMV pays the difference per copy; a long batch with a GEMV inside it pays for the
   * copies that fit in the GEMV at the slower pace.
   */
  private besideGemvsEnd(route: Route, bytes: number, runs: number, began: number): number {
    const now = this.engine.now;
    const perCopy = workOf(route, bytes / runs, 1);
    const idle = route.alpha_us + perCopy / narrowest(route);
    const busy = route.alpha_under_compute_us + perCopy / route.under_compute_capacity;
    if (!(idle > 0) || !(busy > idle)) return now;
    return this.gemvs!.slowedEnd(began, now, idle / busy);
  }
}

/**
 * The route capacity's worth of bytes that `runs` copies of `bytes` in all take: the bytes themselves,
 * or where the route has a large copy's pace, each copy's first bulk_from_bytes and the rest scaled to
 * that pace.
 */
function workOf(route: Route, bytes: number, runs: number): number {
  const from = route.bulk_from_bytes;
  if (from < 0) return bytes;
  const per = bytes / runs;
  return per <= from ? bytes : runs * (from + (per - from) * route.bulk_work);
}

/** a route's narrowest bandwidth (its slowest resource's capacity, bytes per us) */
function narrowest(route: Route): number {
  let cap = Infinity;
  const rs = route.resources;
  for (let i = 0; i < rs.length; i++) if (rs[i].capacity < cap) cap = rs[i].capacity;
  return cap;
}

/**
 * A copy queued on a stream: `runs` copies of `bytes` in all over `route`. One object is the stream's
 * task and the sink of its transfer (no closure per copy).
 */
class CopyOp extends StreamTask implements FlowSink {
  constructor(
    private readonly ex: SimExecutor,
    stream: Stream,
    name: string,
    waits: readonly Signal[],
    args: StreamOp['args'],
    public route: Route,
    bytes: number,
    runs: number,
    dir: number,
    batchUs: number,
  ) {
    super(stream, name, 'copy', waits, args);
    this.bytes = bytes;
    this.runs = runs;
    this.dir = dir;
    this.batchUs = batchUs;
  }

  // (numeric fields start as numbers, not undefined as a parameter property does: V8 then keeps each
  // as a double written in place; a field that starts undefined takes any value, and every double
  // written to it is a new heap number)
  /** its copies: bytes in all and runs (one copy each) */
  bytes = 0;
  runs = 0;
  /** 1: into HBM, -1: out of it, 0: neither (or not on the memory stream) */
  dir = 0;
  /** gpu.copy_batch_us if this copy opens a batch of the HIL executor's, else 0 */
  batchUs = 0;

  /** an ended op (SimExecutor.copyEnd: nothing holds it) becomes a new one, as the constructor makes it */
  reuse(stream: Stream, name: string, waits: readonly Signal[], args: StreamOp['args'], route: Route, bytes: number, runs: number, dir: number, batchUs: number): CopyOp {
    this.renew(stream, name, 'copy', waits, args);
    this.route = route;
    this.bytes = bytes;
    this.runs = runs;
    this.dir = dir;
    this.batchUs = batchUs;
    this.issuedLast = 0;
    return this;
  }

  /** with the executor's host clock: when the host issued the last of its copies (0: no host clock) */
  issuedLast = 0;

  begin(): void {
    this.ex.runCopy(this);
  }

  flowDone(): void {
    this.ex.copyDone(this);
  }

  /** the end of what it owed for its time beside GEMVs (scheduled by copyDone) */
  override step(): void {
    this.ex.copyEnd(this);
  }
}
