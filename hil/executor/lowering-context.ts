/**
 * What every lowering stage shares: the block places, the arena's allocators (slabs for resident
 * blocks, the staging ring for prefetched and fetched copies), the cross-stream fences, the host
 * tiers, the step's ops, and per layer the blocks staged for its next attention.
 */
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { HOST_SLOT_ALIGN } from '../../sim/kv-cache.js';
import { type BlockGeometry, blockBytes } from '../kv-format.js';
import { BlockPlaces } from './block-places.js';
import { BucketAllocator, type BucketPeak } from './bucket-allocator.js';
import { BlockTables } from './block-tables.js';
import { align } from './copy-runs.js';
import { type Access, Fences, type StreamIx } from './fences.js';
import { FreshBlocks } from './fresh-blocks.js';
import { HostTiers } from './host-tiers.js';
import type { RecordedPlan } from './plan.js';
import { SlabAllocator } from './slab-allocator.js';
import { StagingRing } from './staging-ring.js';
import { StepOps } from './step-ops.js';
import type { StreamedWeights } from './lowered-plan.js';

export interface StagedBlock {
  offset: number;
  tier: number;
  bits: number;
}

export class LoweringContext {
  readonly M: number;
  readonly slotBytes: number;
  readonly fp16Bytes: number;
  readonly places: BlockPlaces;
  /** resident blocks' slots: slabs, or per-bit buckets (one region per layer and width) when the run asks for them */
  readonly slabs: SlabAllocator | BucketAllocator;
  readonly ring: StagingRing;
  readonly fences: Fences;
  readonly host: HostTiers;
  readonly out: StepOps;
  readonly fresh: FreshBlocks;
  readonly tables = new BlockTables();
  /** per layer: blocks staged for its next attention, and the ring extents holding them */
  readonly staged: Map<number, StagedBlock>[];
  readonly stagedExtents: number[][];
  /** accesses of the live ring extents, by offset */
  readonly extAcc = new Map<number, Access>();
  /** weight streaming (set by lowerPlan where the policy asks for it) */
  weights: { readonly w: StreamedWeights; beforeProjections(l: number): number; afterProjections(slot: number): void } | undefined;
  /** RotateKV (set by lowerPlan where the policy asks for it) */
  rotation = false;

  constructor(
    readonly plan: RecordedPlan,
    readonly hw: HardwareProfile,
    readonly g: BlockGeometry,
    slabBytes: number,
    readonly ringBytes: number,
    readonly eagerFences: boolean,
    /** per-bit buckets sized to these peaks (a first pass's SlabAllocator.peaks()); absent: slabs */
    buckets?: readonly BucketPeak[],
  ) {
    this.M = plan.initial.maxBlocks;
    this.fp16Bytes = blockBytes(g, 'fp16');
    // (the simulator counts a replay's copies on the same slots)
    this.slotBytes = align(this.fp16Bytes, HOST_SLOT_ALIGN);
    this.places = new BlockPlaces(this.M, plan.initial.tier, plan.initial.bits);
    this.slabs = buckets ? new BucketAllocator(ringBytes, buckets) : new SlabAllocator(ringBytes, Math.max(slabBytes, align(this.fp16Bytes, 16)));
    this.ring = new StagingRing(ringBytes);
    this.out = new StepOps(g);
    this.fences = new Fences((op) => this.out.push(op));
    this.host = new HostTiers(hw, this.M, this.slotBytes);
    this.fresh = new FreshBlocks(this.M, this.fp16Bytes);
    this.staged = Array.from({ length: plan.initial.layers }, () => new Map());
    this.stagedExtents = Array.from({ length: plan.initial.layers }, () => []);
  }

  /** stream s is about to touch a region last accessed as `acc` */
  touch(s: StreamIx, acc: Access): void {
    this.fences.before(s, acc);
  }
}
