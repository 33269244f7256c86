/**
 * The policy interface. A policy only decides: before each layer of each decode step it sees what a
 * real system would know at that moment and asks for actions through `Actions`; after the layer's
 * attention ran it observes the attention mass on the blocks the kernel attended. The replay driver
 * and the KV cache own all accounting; an action that would overflow a tier is refused and counted.
 */
import type { OptionSpec } from '../common/options.js';
import type { TraceHeader, TraceStep } from '../traces/format.js';
import type { CacheView } from './cache-view.js';
import type { PolicyModel } from './policy-model.js';
import type { WeightStreaming } from './weight-streaming.js';

/** Read-only facts for one decision (one layer of one decode step). */
export interface PolicyView {
  readonly step: number;
  readonly layer: number;
  readonly layers: number;
  readonly contextTokens: number;
  /** blocks that exist in this layer at this step (the last one may be partial) */
  readonly nBlocks: number;
  readonly blockSize: number;
  /** HBM KV budget per layer, in full blocks at FP16 */
  readonly budgetBlocks: number;
  /** true when block nBlocks-1 was created at this step */
  readonly newBlock: boolean;
  /** tier placement and precision of every block (read only: use Actions to change them) */
  readonly cache: CacheView;
  /**
   * per-block key L2 norms of this layer, length >= nBlocks: the largest over the KV groups (the
   * block holds every group's keys, so it is an outlier when any group's keys are); 0 = unknown
   */
  readonly keyNorms: Float32Array;
  /** the same per KV group (groupKeyNorms[g][b]); with one group, groupKeyNorms[0] is keyNorms */
  readonly groupKeyNorms: readonly Float32Array[];
  /**
   * optional: every block below this one kept its key norms (keyNorms and groupKeyNorms) since the
   * layer's previous decision (at the first decision, since the arrays were made); absent: unknown
   */
  readonly keyNormsFrom?: number;
}

/** What a policy may ask for. Every call is checked; refused calls are counted, never applied half. */
export interface Actions {
  /** drop a block: its KV is gone for good */
  evict(layer: number, block: number): boolean;
  /** move a block to a lower tier (or requantize in place) at `bits` (16, 8, 4, 3, 2) */
  demote(layer: number, block: number, tier: string, bits: number): boolean;
  /** bring a block into HBM as a resident block (default: keep its precision) */
  promote(layer: number, block: number, bits?: number): boolean;
  /**
   * Optional. demote(layer, blocks[j], tier, bits) for j = from, from + 1, ... below count, in that
   * order, until one is refused: returns its index (count when none was). The same effects as those
   * calls, with less work per block.
   */
  demoteBlocks?(layer: number, blocks: ArrayLike<number>, from: number, count: number, tier: string, bits: number): number;
  /**
   * Optional. promote(layer, blocks[j]) for j = from, from + 1, ... below count, in that order,
   * passing over the blocks already in HBM and the evicted ones, until one is refused: returns its
   * index (count when none was). The same effects as those calls, with less work per block, except
   * that a block passed over counts no refusal (promote() refuses a block in HBM or evicted).
   */
  promoteBlocks?(layer: number, blocks: ArrayLike<number>, from: number, count: number): number;
  /** stage a copy of an offloaded block in HBM for its next attention (transient, not resident) */
  prefetch(layer: number, block: number): boolean;
  /**
   * Optional. prefetch(layer, blocks[j]) for j = from, from + 1, ... below count, in that order, until
   * one is refused: returns its index (count when none was). The same effects as those calls, with
   * less work per block.
   */
  prefetchBlocks?(layer: number, blocks: ArrayLike<number>, from: number, count: number): number;
  /** stage every offloaded live block of `layer` (a layer-ahead stream, as offloading engines do) */
  prefetchOffloaded(layer: number): void;
  pin(layer: number, block: number): void;
  unpin(layer: number, block: number): void;
  /** leave a live block out of this layer's attention at this step (sparse attention) */
  skip(block: number): void;
  /**
   * skip(b) for every block b of this layer that is live and in `scope` ('offloaded': below HBM;
   * 'all': any tier) at the call and has keep[b] = 0 (keep null, or b >= keep.length: not kept); the
   * number of such blocks. One call instead of one per block; `keep` is read during the call only.
   */
  skipExcept(keep: Uint8Array | null, scope: SkipScope): number;
  /**
   * skipExcept with the kept blocks as a list: skip(b) for every block b of this layer that is live
   * and in `scope` at the call and not among blocks[0, count) (any order; repeats, and blocks not
   * live or out of scope, are ignored); the number of such blocks. When nothing else changes the
   * layer before its attention, the replay's work for the layer grows with the list, not with the
   * layer's blocks. `blocks` is read during the call only.
   */
  skipExceptListed(blocks: ArrayLike<number>, count: number, scope: SkipScope): number;
  /**
   * Optional. skipExceptListed(list, count, 'all') where the list is the one this layer's previous
   * decision kept (the live blocks it listed, with the blocks created after that call), less
   * removed[0, nRemoved), plus added[0, nAdded) (repeats, blocks not live or not kept, ignored as there);
   * the number of blocks skipped. Returns -1, having done nothing, where no such list is held (the
   * layer's previous decision did not end with one list of scope 'all', a block of the layer was
   * dropped since, or this decision already asked for skips): then call skipExceptListed with the
   * whole list. The replay's work for the layer then grows with the changes, not with the list.
   */
  skipExceptListedDelta?(added: ArrayLike<number>, nAdded: number, removed: ArrayLike<number>, nRemoved: number): number;
}

/** which blocks Actions.skipExcept may skip: those below HBM, or those in any tier */
export type SkipScope = 'offloaded' | 'all';

/**
 * The attention of one KV-head group of a layer at one step (the heads sharing one KV head, their
 * attention averaged). Sparse form: `mass[i]` belongs to block `idx[i]` (or block i when idx is
 * null); every other block carries `uniform`.
 */
export interface GroupAttention {
  readonly idx: Uint32Array | null;
  readonly mass: Float32Array;
  readonly uniform: number;
}

/**
 * The attention of one layer at one step, as the system saw it: masses on attended blocks only.
 * The layer-level fields (`idx`, `mass`, `uniform`) are the exact mean over the KV groups: block b
 * carries (1/G)·Σ_g (group g's listed mass on b, else group g's uniform share); in sparse form the
 * union of the groups' listed blocks is listed (ascending) and every other block carries the mean
 * of the groups' uniform shares. `groups` holds each group's own attention, for policies defined
 * per head. Masses of blocks not attended are unknown (reported as 0).
 */
export interface Observation extends GroupAttention {
  readonly step: number;
  readonly layer: number;
  readonly nBlocks: number;
  /** per KV group (length kv_groups); with one group, groups[0] carries the layer's own fields */
  readonly groups: readonly GroupAttention[];
  /** 1 where the kernel attended the block at this step */
  readonly attended: Uint8Array;
  /** number of 1s in `attended` */
  readonly attendedCount: number;
}

/**
 * Plain numbers about the modelled machine, for policies that size their copies to the compute they
 * hide under (derived from the hardware profile by sim/hardware/policy-hardware.ts).
 */
export interface PolicyHardware {
  /** per tier (PolicySetup.tiers order): bandwidth of a copy from the tier into HBM (its narrowest hop), GB/s; tier 0: 0 */
  toHbm_GBps: number[];
  /** per tier: fixed cost of one such copy started while a kernel runs (hop alphas + access latencies), µs; tier 0: 0 */
  toHbmAlpha_us: number[];
  /** compute time of one decode layer attending the HBM budget at FP16 (linear projections + attention), µs */
  layerCompute_us: number;
}

/**
 * Relative error of a block quantized to `bits` with groups of `groupSize` values (rotated or not),
 * from the run's quality model (sim/quality/error-table.ts); 0 at 16 bits.
 */
export type QuantRelError = (bits: number, groupSize: number, rotation: boolean) => number;

export interface PolicySetup {
  model: PolicyModel;
  header: TraceHeader;
  layers: number;
  maxBlocks: number;
  blockSize: number;
  budgetBlocks: number;
  tiers: string[];
  /**
   * the steps of the trace being replayed, from the first, each call a fresh pass (the caller opens and
   * closes the trace); given only to an oracle policy (definition.oracle = true), which reads ahead in it
   */
  futureSteps?: () => Iterable<TraceStep>;
  /** the quality model's quantization error, for policies that weigh precision against error */
  quantRelError?: QuantRelError;
  /** the machine's copy and compute speeds; absent where no hardware is modelled */
  hardware?: PolicyHardware;
}

/**
 * How a policy's quantized blocks are encoded, for the quality measures (sim/quality). Optional: by
 * default a block's error follows its stored bits at the run's group size, without rotation.
 */
export interface QuantScheme {
  /** quantization group size (default: the run's group_size) */
  groupSize?: number;
  /**
   * Walsh–Hadamard rotation of K/V before quantization and of q in attention (default false): the
   * quality measures take the error table's rotated entries, and the simulated executor times a fast
   * Walsh–Hadamard transform per layer and step (sim/sim-executor.ts, option `rotation`)
   */
  rotation?: boolean;
  /** effective bits of a block when they differ from its storage (e.g. 3-bit values kept in 4-bit slots) */
  bitsOf?(layer: number, block: number, storedBits: number): number;
}

export interface Policy {
  readonly name: string;
  decide(view: PolicyView, act: Actions): void;
  observe(obs: Observation): void;
  /** optional: the policy's quantization scheme for the quality measures */
  readonly quant?: QuantScheme;
  /**
   * optional: stream the model's weights layer by layer from a host tier into HBM layer slots (the
   * executor's weight streaming; SLEP), instead of keeping them resident; the HBM check then counts
   * only the resident layers, the slots and the non-layer weights (policies/weight-streaming.ts)
   */
  readonly weights?: WeightStreaming;
  /** optional: numbers the policy reports about itself at the end of a run (summary.policy_report) */
  report?(): Record<string, number>;
}

export type { OptionSpec, OptionType } from '../common/options.js';

export interface PolicyDefinition<O extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  /** paper or system the mechanism follows */
  source: string;
  /** true only for policies that read the future (bounds, never deployable); only they get setup.futureSteps */
  oracle?: boolean;
  /**
   * true for the quality reference: it keeps the whole KV cache in HBM at FP16, so it always runs at
   * 100% of the KV size whatever budget is asked (runs, sweeps and their checks read this flag)
   */
  full?: boolean;
  /**
   * how the hardware-in-the-loop executor lays out this policy's HBM blocks: 'slabs' (default) shares
   * slabs of one block size between layers; 'buckets' gives every (layer, width) one contiguous region
   */
  hbmLayout?: 'slabs' | 'buckets';
  options: OptionSpec[];
  create(options: O, setup: PolicySetup): Policy;
}

/** Apply `fn(block, mass)` to every attended block with its observed mass. O(nBlocks). */
export function forEachMass(obs: Observation, fn: (block: number, mass: number) => void): void {
  const { idx, mass, uniform, attended, nBlocks } = obs;
  if (idx === null) {
    for (let b = 0; b < nBlocks; b++) if (attended[b]) fn(b, mass[b]);
    return;
  }
  const listed = new Uint8Array(nBlocks);
  for (let i = 0; i < idx.length; i++) {
    const b = idx[i];
    listed[b] = 1;
    if (attended[b]) fn(b, mass[i]);
  }
  for (let b = 0; b < nBlocks; b++) if (!listed[b] && attended[b]) fn(b, uniform);
}
