/**
 * Lowers a recorded plan (plan.ts) to real work: copies between regions, quantization kernels,
 * file reads and writes, attention over a block table, GEMVs, cross-stream fences and timing marks.
 *
 * Memory: the HBM arena is one device region, [staging ring | slabs]: resident blocks live in slab
 * slots (slab-allocator.ts), prefetched and fetched copies in ring extents (staging-ring.ts), so
 * one block table addresses both. Host tiers keep block (l, b) at a fixed slot (l * M + b) of
 * their pinned region; the NVMe tier keeps it at the same offset of its file and uses the DRAM slot
 * as its bounce buffer (host-tiers.ts). CXL has no hardware here: its blocks live in a second pinned
 * region. Moves of a batch are coalesced where source and destination are both contiguous.
 *
 * Stages: initial placement (place-initial.ts), then per step in issue order moves (lower-move.ts),
 * prefetch stages (lower-staging.ts) and layers (lower-layer.ts); the ops go to step-ops.ts.
 */
import type { WeightStreaming } from '../../policies/weight-streaming.js';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { defaultStagingRingBytes } from '../../sim/staging-ring.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { blockBytes } from '../kv-format.js';
import { geometryOf } from './block-geometry.js';
import { align } from './copy-runs.js';
import { MEMORY } from './fences.js';
import { allLinkKeys } from './link-keys.js';
import type { LayerMarks, LoweredPlan, LowStep } from './lowered-plan.js';
import { LoweringContext } from './lowering-context.js';
import { lowerLayer } from './lower-layer.js';
import { lowerMove } from './lower-move.js';
import { lowerStage } from './lower-staging.js';
import { placeInitial } from './place-initial.js';
import type { RecordedPlan } from './plan.js';
import type { SlabAllocator } from './slab-allocator.js';
import { RingFullError } from './staging-ring.js';
import { WeightSlots } from './weight-slots.js';

export interface LowerOptions {
  slabBytes: number;
  groupSize: number;
  /** staging ring size; default 3 layers of full-context FP16 KV (doubled on overflow) */
  ringBytes?: number;
  /**
   * default true: record the compute stream's fence right after each attention that read staging
   * extents, so a later copy into that ring space waits for that attention only (measured on the
   * H100: 1.3 ms per step less memory-stream idle for lru-offload, perf/HIL-NOTES.md). false: the
   * fence is recorded where the memory stream first needs it, i.e. after all compute work issued by
   * then (the next layer's attention and projections included).
   */
  eagerFences?: boolean;
  /**
   * HBM layout: 'slabs' (default) or 'buckets' — every (layer, width) in one contiguous region
   * (bucket-allocator.ts), sized by a first lowering pass with slabs
   */
  hbmLayout?: 'slabs' | 'buckets';
  /** the policy's weight streaming (SLEP), and the pinned host bytes its distinct layers may take (default 1 GiB) */
  weights?: WeightStreaming;
  weightHostBytes?: number;
  /** RotateKV: K/V stored rotated, q and the attention output rotated per layer */
  rotation?: boolean;
}

export function lowerPlan(plan: RecordedPlan, model: ModelSpec, hw: HardwareProfile, blockTokens: number, o: LowerOptions): LoweredPlan {
  const g = geometryOf(model, blockTokens, o.groupSize);
  let ring = o.ringBytes ?? defaultStagingRingBytes(plan.initial.maxBlocks, blockBytes(g, 'fp16'));
  for (;;) {
    try {
      const slabbed = withWeights(new LoweringContext(plan, hw, g, o.slabBytes, ring, o.eagerFences ?? true), model, o);
      const lowered = lowerSteps(slabbed);
      if (o.hbmLayout !== 'buckets') return lowered;
      const peaks = (slabbed.slabs as SlabAllocator).peaks();
      return lowerSteps(withWeights(new LoweringContext(plan, hw, g, o.slabBytes, ring, o.eagerFences ?? true, peaks), model, o));
    } catch (e) {
      if (!(e instanceof RingFullError)) throw e;
      ring *= 2;
    }
  }
}

function withWeights(c: LoweringContext, model: ModelSpec, o: LowerOptions): LoweringContext {
  if (o.weights) c.weights = new WeightSlots(c, o.weights, model.weight_bytes_per_layer, o.weightHostBytes ?? 1 << 30);
  c.rotation = o.rotation ?? false;
  return c;
}

function lowerSteps(c: LoweringContext): LoweredPlan {
  const initial = placeInitial(c);
  const steps: LowStep[] = [];
  const linkKeys = allLinkKeys(c.hw);
  for (const [si, s] of c.plan.steps.entries()) {
    c.out.begin(linkKeys);
    const layers: LayerMarks[] = [];
    // causality: the policy decided this step's moves after the previous step's token, so none of them
    // starts before that step's compute ends — on the memory stream (a fence) and, for file requests, on
    // the host (the I/O threads)
    if (si > 0) c.fences.barrier(MEMORY);
    for (const op of s.ops) {
      if (op.kind === 'move') lowerMove(c, op);
      else if (op.kind === 'stage') lowerStage(c, op);
      else layers.push(lowerLayer(c, op));
    }
    if (si > 0 && c.out.ops.some((op) => op.o === 'fileRead' || op.o === 'fileWrite')) c.out.ops.unshift({ o: 'hostWaitCompute' });
    steps.push({ step: s.step, contextTokens: s.contextTokens, ops: c.out.ops, layers, memSpans: c.out.memSpans, bytes: c.out.bytes });
  }
  const { host, places } = c;
  return {
    geometry: c.g,
    slotBytes: c.slotBytes,
    ringBytes: c.ringBytes,
    arenaBytes: c.ringBytes + c.slabs.extent,
    hostBytes: c.plan.initial.layers * c.M * c.slotBytes,
    usesCxl: host.usesCxl,
    usesNvme: host.usesNvme,
    usesHdd: host.usesHdd,
    steps,
    tables: c.tables.bytes,
    initial,
    fresh: c.fresh.list,
    marks: c.out.markCount,
    fences: c.fences.counts,
    scratchBytes: 2 * align(c.fp16Bytes, 4096),
    final: { tier: places.tier, bits: places.bits, slot: places.slot, via: places.via },
    layers: c.plan.initial.layers,
    maxBlocks: c.M,
    hostRegionOf: host.kinds.map((k) => (k === 'cxl' ? 'cxl' : k === 'dram' || k === 'nvme' || k === 'hdd' ? 'dram' : undefined)),
    nvmeTier: host.kinds.indexOf('nvme'),
    fileTiers: host.kinds.flatMap((k, t) => (host.isFile(t) ? [t] : [])),
    ...(c.weights ? { weights: c.weights.w } : {}),
    rotation: c.rotation,
  };
}
