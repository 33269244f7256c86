/**
 * The simulated executor: a compute stream (high priority) and memory streams (H2D, D2H, and one for
 * moves between host tiers) on the event engine; copies go through the topology's flow network,
 * kernels are timed by the roofline. Copies of a batch of blocks are one gather copy (one alpha).
 */
import { Engine } from './engine.js';
import type { Executor, LayerWork, MoveBatch, StepTiming } from './executor.js';
import type { HardwareProfile } from './hardware/profile.js';
import { kvElementsPerTokenLayer, type ModelSpec } from './models/model.js';
import { kernelTimeUs } from './roofline.js';
import { Signal } from './signal.js';
import { Stream, type StreamOp, type TraceSpan } from './stream.js';
import { Topology } from './topology.js';

export interface SimExecutorOptions {
  /** record stream spans for steps < traceSteps (for the Chrome trace) */
  traceSteps: number;
  /**
   * stream each layer's weights from `tier` into HBM before its linear kernel, on a weight stream,
   * with `buffers` layer buffers (2 = double buffering: layer l+1's copy starts once layer l−1's linear
   * kernel has released its buffer). Default: weights resident in HBM.
   */
  weightStreaming?: { tier: string; buffers: number };
}

export class SimExecutor implements Executor<Signal> {
  readonly kind = 'sim' as const;
  readonly engine = new Engine();
  readonly topology: Topology;
  readonly compute: Stream;
  readonly h2d: Stream;
  readonly d2h: Stream;
  readonly host: Stream;
  readonly spans: TraceSpan[] = [];
  private readonly tierNames: string[];
  private step = 0;
  private stepStart = 0;
  private computeBusy0 = 0;
  private stall0 = 0;
  private memBusy0 = 0;
  private bytes0: Record<string, number> = {};
  private readonly attnFlopsPerToken: number;
  /** weight streaming: its stream, and per layer executed (in order) the copy and the linear kernel */
  readonly weights?: Stream;
  private readonly weightCopy: Signal[] = [];
  private readonly linearDone: Signal[] = [];
  private layerSeq = 0;

  constructor(
    readonly hardware: HardwareProfile,
    readonly model: ModelSpec,
    private readonly opts: SimExecutorOptions = { traceSteps: 0 },
  ) {
    this.topology = new Topology(this.engine, hardware);
    this.tierNames = hardware.tiers.map((t) => t.name);
    this.compute = new Stream(this.engine, 'compute', 0);
    this.h2d = new Stream(this.engine, 'memory-h2d', 2);
    this.d2h = new Stream(this.engine, 'memory-d2h', 3);
    this.host = new Stream(this.engine, 'host-io', 4);
    if (opts.weightStreaming) {
      if (!this.tierNames.includes(opts.weightStreaming.tier) || opts.weightStreaming.tier === this.tierNames[0]) {
        throw new Error(`weight streaming: tier must be one of ${this.tierNames.slice(1).join(', ')} (got "${opts.weightStreaming.tier}")`);
      }
      if (!(opts.weightStreaming.buffers >= 1)) throw new Error(`weight streaming: buffers must be >= 1 (got ${opts.weightStreaming.buffers})`);
      this.weights = new Stream(this.engine, 'weights-h2d', 1);
    }
    for (const s of [this.compute, this.h2d, this.d2h, this.host, ...(this.weights ? [this.weights] : [])]) {
      s.onSpan = (span) => {
        if (this.step < this.opts.traceSteps) this.spans.push(span);
      };
    }
    // each query head multiplies and adds every K and V element of its KV head (MLA: of the latent)
    const group = model.attention === 'mla' ? model.q_heads : model.q_heads / model.kv_heads;
    this.attnFlopsPerToken = 2 * group * kvElementsPerTokenLayer(model);
    this.bytes0 = this.topology.linkBytes();
  }

  beginStep(step: number): void {
    this.step = step;
    this.stepStart = this.engine.now;
    this.computeBusy0 = this.compute.busyUs;
    this.stall0 = this.compute.stallUs;
    this.memBusy0 = this.memBusy();
  }

  move(b: MoveBatch): Signal {
    const from = this.tierNames[b.fromTier];
    const to = this.tierNames[b.toTier];
    const args = this.stepArgs(b.layer, b.blocks.length, b.reason);
    const requant = b.fromBits !== b.toBits;
    if (b.fromTier === b.toTier) {
      return this.kernelOn(this.d2h, `requantize ${b.fromBits}->${b.toBits}b`, b.bytesFrom + b.bytesTo, 0, [], args);
    }
    if (b.toTier === 0) {
      const done = this.copyOn(this.h2d, from, to, b.bytesFrom, b.reason, args);
      return requant ? this.kernelOn(this.h2d, `dequantize ${b.fromBits}->${b.toBits}b`, b.bytesFrom + b.bytesTo, 0, [], args) : done;
    }
    if (b.fromTier === 0) {
      if (requant) this.kernelOn(this.d2h, `quantize ${b.fromBits}->${b.toBits}b`, b.bytesFrom + b.bytesTo, 0, [], args);
      return this.copyOn(this.d2h, from, to, b.bytesTo, b.reason, args);
    }
    // between host tiers: requantization happens on the host and is not timed
    return this.copyOn(this.host, from, to, b.bytesTo, b.reason, args);
  }

  stage(b: MoveBatch): Signal {
    const args = this.stepArgs(b.layer, b.blocks.length, b.reason);
    return this.copyOn(this.h2d, this.tierNames[b.fromTier], this.tierNames[0], b.bytesFrom, b.reason, args);
  }

  layer(w: LayerWork, waits: Signal[]): void {
    const tracing = this.step < this.opts.traceSteps;
    const args = tracing ? { step: w.step, layer: w.layer } : undefined;
    const all = waits;
    let fetched = 0;
    for (let t = 1; t < w.fetchBytes.length; t++) {
      if (w.fetchBytes[t] > 0) {
        all.push(this.copyOn(this.h2d, this.tierNames[t], this.tierNames[0], w.fetchBytes[t], 'fetch', args));
        fetched += w.fetchBytes[t];
      }
    }
    const kvBytes = w.residentBytes + w.stagedBytes + fetched;
    this.kernelOn(this.compute, 'attention', kvBytes, this.attnFlopsPerToken * w.tokens, all, tracing ? { ...args, tokens: w.tokens, kv_bytes: kvBytes } : undefined);
    const linear = this.kernelOn(this.compute, 'linear', this.model.weight_bytes_per_layer, this.model.flops_per_token_per_layer, this.streamWeights(args), args);
    if (this.weights) this.linearDone.push(linear);
    if (w.layer === this.model.layers - 1) {
      // LM head: about half of the non-layer weights (embedding table and output projection)
      this.kernelOn(this.compute, 'lm-head', this.model.other_weight_bytes / 2, this.model.other_weight_bytes / 2, [], args);
    }
  }

  endStep(): StepTiming {
    const done = this.compute.idle;
    while (!done.done) {
      if (!this.engine.step()) throw new Error('simulation deadlock: compute stream waits on work that never completes');
    }
    const bytes = this.topology.linkBytes();
    const delta: Record<string, number> = {};
    for (const k of Object.keys(bytes)) delta[k] = bytes[k] - (this.bytes0[k] ?? 0);
    this.bytes0 = bytes;
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
    return this.h2d.busyUs + this.d2h.busyUs + this.host.busyUs + (this.weights?.busyUs ?? 0);
  }

  /** With weight streaming: issue the copies of the next layers' weights as buffers free up; the waits of this layer's linear kernel. */
  private streamWeights(args: StreamOp['args']): Signal[] {
    const ws = this.opts.weightStreaming;
    if (!ws || !this.weights) return [];
    const i = this.layerSeq++;
    for (let j = this.weightCopy.length; j <= i + ws.buffers - 1; j++) {
      // layer j's weights go into the buffer that layer j - buffers used: wait for its linear kernel
      const waits = j - ws.buffers >= 0 ? [this.linearDone[j - ws.buffers]] : [];
      this.weightCopy.push(this.copyOn(this.weights, ws.tier, this.tierNames[0], this.model.weight_bytes_per_layer, 'weights', args, waits));
    }
    return [this.weightCopy[i]];
  }

  private kernelOn(s: Stream, name: string, bytes: number, flops: number, waits: Signal[], args: StreamOp['args']): Signal {
    const us = kernelTimeUs(this.hardware.gpu, bytes, flops);
    return s.enqueue({ name, cat: 'kernel', waits, args, run: (finish) => this.engine.after(us, finish, s.priority) });
  }

  private stepArgs(layer: number, blocks: number, reason: string): StreamOp['args'] {
    return this.step < this.opts.traceSteps ? { step: this.step, layer, blocks, reason } : undefined;
  }

  private copyOn(s: Stream, from: string, to: string, bytes: number, reason: string, args: StreamOp['args'], waits: Signal[] = []): Signal {
    const route = this.topology.route(from, to);
    return s.enqueue({
      name: `${reason} ${from}->${to}`,
      cat: 'copy',
      waits,
      args: args ? { ...args, bytes } : undefined,
      run: (finish) => this.topology.network.transfer(route.resources, bytes, route.alpha_us).done.then(finish),
    });
  }
}
