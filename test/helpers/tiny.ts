/**
 * A tiny machine and model whose numbers make timelines easy to compute by hand:
 * a block (4 tokens x 8 values x 2 bytes) is 64 bytes; HBM reads 1 byte/us; PCIe moves 1 byte/us
 * per direction with alpha 10 us; a layer's linear projections read 1000 bytes (1000 us).
 */
import type { LayerWork } from '../../sim/executor.js';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { blocksFor, type TraceHeader, type TraceStep } from '../../traces/format.js';

export const tinyModel: ModelSpec = {
  name: 'tiny',
  description: 'test model',
  layers: 2,
  hidden: 4,
  q_heads: 1,
  kv_heads: 1,
  head_dim: 4,
  attention: 'mha',
  weight_bytes_per_layer: 1000,
  flops_per_token_per_layer: 0,
  other_weight_bytes: 0,
  sources: {},
};

const dir = (alpha_us: number, GBps: number) => ({ alpha_us, GBps });

/** One layer of step 0 over one 64-byte resident block (attention 64 us on the tiny machine); `over` replaces fields. */
export function tinyLayerWork(layer: number, over: Partial<LayerWork> = {}): LayerWork {
  return {
    step: 0,
    layer,
    tokens: 4,
    residentBytes: 64,
    quantizedBytes: 0,
    stagedBytes: 0,
    fetchBytes: [0, 0, 0],
    fetchRuns: [0, 0, 0],
    nBlocks: 1,
    attendedMask: new Uint8Array([1]),
    attendedCount: 1,
    kernel: 'fp16',
    mixedShare: 0,
    ...over,
  };
}

export function tinyHardware(): HardwareProfile {
  return {
    schema: 'kvtier-hardware/v1',
    name: 'tiny',
    description: 'test machine',
    gpu: { name: 'tiny-gpu', hbm_bandwidth_GBps: 0.001, fp16_TFLOPs: 1000, kernel_launch_us: 0, reserved_GiB: 0 },
    tiers: [
      { name: 'hbm', kind: 'hbm', capacity_GiB: 1, read_GBps: 1000, write_GBps: 1000, read_latency_us: 0, write_latency_us: 0 },
      { name: 'dram', kind: 'dram', capacity_GiB: 1, read_GBps: 1000, write_GBps: 1000, read_latency_us: 0, write_latency_us: 0 },
      { name: 'nvme', kind: 'nvme', capacity_GiB: 1, read_GBps: 1000, write_GBps: 1000, read_latency_us: 0, write_latency_us: 0 },
    ],
    links: [
      { name: 'pcie', a: 'hbm', b: 'dram', a_to_b: dir(10, 0.001), b_to_a: dir(10, 0.001), copy_engines: 2 },
      { name: 'nvme', a: 'dram', b: 'nvme', a_to_b: dir(0, 0.0005), b_to_a: dir(0, 0.0005), copy_engines: 1 },
    ],
    sources: {},
  };
}

export function tinyHeader(prompt: number, steps: number, layers = 2): TraceHeader {
  return {
    format: 'kvtier-attention-trace',
    version: 1,
    model: 'tiny',
    layers,
    block_size: 4,
    prompt_tokens: prompt,
    steps,
    kv_groups: 1,
    encoding: 'dense',
    provenance: { test: true },
  };
}

/** Dense steps where `massOf(step, layer, nBlocks)` gives the per-block masses. */
export function denseSteps(h: TraceHeader, massOf: (step: number, layer: number, n: number) => number[]): TraceStep[] {
  const out: TraceStep[] = [];
  for (let s = 0; s < h.steps; s++) {
    const ctx = h.prompt_tokens + s + 1;
    const n = blocksFor(ctx, h.block_size);
    out.push({
      step: s,
      contextTokens: ctx,
      layers: Array.from({ length: h.layers }, (_, l) => ({
        nBlocks: n,
        idx: null,
        mass: Float32Array.from(massOf(s, l, n)),
        remainder: 0,
        normFrom: 0,
        norms: new Float32Array(n).fill(1),
      })),
    });
  }
  return out;
}
