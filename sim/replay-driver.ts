/**
 * The replay driver: feeds an attention trace through a policy and an executor, step by step and
 * layer by layer. For each layer of each decode step: the policy decides (actions are checked and
 * applied to the KV cache accounting, then handed to the executor as batched moves), the layer's
 * attention and projections run, and the policy observes the attention on the blocks it attended.
 *
 * KV groups: a trace step holds one row per (layer, KV-head group), `row = layer * kv_groups + group`.
 * A layer's KV block holds every group's keys and values, so placement and eviction are per layer;
 * the policy observes each group's attention (Observation.groups) and its exact mean (the layer-level
 * fields, sim/group-mean.ts). Key norms are kept per group; a layer's block norm is the largest over
 * its groups. Recall is computed per group and averaged over the groups.
 *
 * Prefill is not timed: the whole prompt's KV is created in HBM (prefill needs it there; up to the
 * physical free HBM, `prefillCapacityBytes`, spilling beyond), the policy observes the first decode
 * step's attention as a stand-in for the prompt's attention, and its prefill decisions are applied to
 * the accounting only. Then the HBM budget holds: whatever the policy left above it is moved to the
 * next tier with room (oldest blocks first) and counted as refused 'prefill_budget'.
 */
import type { Executor, LayerWork, MoveBatch, StepTiming, TransferReason } from './executor.js';
import { BITS, BITS_DESCENDING, DROPPED, KVCache, NONE } from './kv-cache.js';
import type { AttentionKernel } from './hardware/profile.js';
import type { Actions, GroupAttention, Observation, Policy, PolicyView, SkipScope } from '../policies/policy.js';
import { blocksFor, type LayerAttention, type TraceHeader, type TraceStep } from '../traces/format.js';
import { GroupMean, rowUniform } from './group-mean.js';
import type { HbmSlots } from './hbm-slots.js';
import { moveRounds } from './move-order.js';
import { doubleArray, intArray, objectArray } from '../common/array-kinds.js';
import { gapDoublings } from './host-spread.js';

export interface StepResult {
  step: number;
  contextTokens: number;
  timing: StepTiming;
  /** per layer: share of the true attention mass on attended blocks, averaged over the KV groups */
  recall: Float64Array;
}

export interface DriverCounters {
  actions: Record<string, number>;
  refused: Record<string, number>;
  /** messages of the first refusals of each kind (for diagnosis) */
  refusalExamples: Record<string, string>;
  peakStagingBytes: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type MutableGroup = { idx: Uint32Array | null; mass: Float32Array; uniform: number };

export class ReplayDriver<H> implements Actions {
  private readonly counts: DriverCounters = newCounters();
  /**
   * the actions counted (counts.actions is written from it, in the same order of first use, when
   * `counters` is read): a record gaining a key per kind of action would take another chain of maps
   * in each replay (the order of first use differs between policies), and code compiled for one
   * replay's maps would be thrown away in the next
   */
  private readonly actionCounts = new Map<string, number>();
  /** actions counted but not yet added to counts.actions: a run of the same action (see count()) */
  private pendingKind = '';
  /** the action pendingKind counts (pendingKind is prefill_<it> during prefill) */
  private pendingBase = '';
  private pendingN = 0;

  /** what the policy did: actions taken and refused, by kind (prefill ones as prefill_<kind>), in order of first use */
  get counters(): DriverCounters {
    this.flushCount();
    const a = this.counts.actions;
    for (const [kind, n] of this.actionCounts) a[kind] = n;
    return this.counts;
  }
  /**
   * optional: called after each decode layer's attention with what it attended and the layer's trace
   * rows, one per KV group (quality measures; `rows` is reused: valid during the call only)
   */
  layerHook?: (step: number, layer: number, obs: Observation, rows: readonly LayerAttention[]) => void;
  private readonly L: number;
  /** KV-head groups per layer (rows per layer in a trace step) */
  private readonly G: number;
  private readonly M: number;
  private readonly B: number;
  private readonly T: number;
  /** per layer: block key norms, the largest over the groups; per layer and group: the group's */
  private readonly keyNorms: Float32Array[];
  private readonly groupNorms: Float32Array[][];
  private readonly groupMean: GroupMean;
  /** the current layer's rows (reused) */
  private readonly rows: LayerAttention[];
  /** staged bytes per (layer, tier) and their handles */
  private readonly staged: Float64Array;
  /** 1 where block (l, b) has a staged copy this step (l * M + b) that its attention reads: one of the tier and bits the block has */
  private readonly stagedMask: Uint8Array;
  /**
   * per block, the tier and bits (tier * 32 + bits) of its staged copy, kept from its first move after
   * it was staged until its layer's attention (valid where stagedCodeEpoch equals the layer's
   * stageEpoch): a block that moves after its stage reads that copy only where it is back at that tier
   * and those bits, as the HIL executor's staging does (else it is read anew)
   */
  private readonly stagedCode: Int16Array;
  private readonly stagedCodeEpoch: Int32Array;
  private readonly stageEpoch: Int32Array;
  private readonly pending: H[][];
  // (−0, not 0: a number field that starts as a small integer and turns double in the first replay
  // that stages gives the driver another map, and code compiled for one replay's driver would meet
  // the next one's as a wrong map; it is summed and compared only, where −0 is 0)
  private stagingBytes = -0;
  /**
   * batches collected during one decision, in the order they were made, flushed to the executor after
   * it, and the key of each (one number per layer, reason, tiers and precisions: see batch()); a
   * decision makes few, found by a scan of the keys (no Map, whose clear() makes a new table each flush)
   */
  private readonly batchList: MoveBatch[] = objectArray();
  private readonly batchKeys: number[] = doubleArray(0);
  /** flushed batches, emptied, for later batches to take (the executor reads a batch during its move() call only) */
  private readonly batchPool: MoveBatch[] = objectArray();
  private lastKey = NO_KEY;
  private lastBatch: MoveBatch | undefined = undefined;
  /** the tier name demote() was given last, and its index */
  private lastTierName = '';
  private lastTier: number;
  /** 1 where the current decision skips block b of its layer (cleared by the layer's pass over its blocks) */
  private readonly skipMark: Uint8Array;
  /** whether the current decision asked for any skip (skipMark has a 1) */
  private anySkip = false;
  /**
   * A skipExceptListed call of the current decision, kept as its list while nothing changes in the
   * layer until its attention, or while it changes as listHolds allows (then the layer's work follows the list, not every block; otherwise it becomes
   * skipMark): the listed blocks in scope (distinct, listed[0..nListed)), a mark per listed block (the
   * list's number, listNo: a list ends by taking the next number, not by clearing its marks), the
   * scope's lowest tier, the layer's blocks at the call and what its tiers were then (the blocks the
   * decision moved or dropped since, with their tiers before: the undo log), and the layer's change
   * and drop counts then.
   */
  private listPending = false;
  private listed: Int32Array;
  /** skipExcept's kept blocks, as a list for skipExceptListed */
  private readonly keepList: Int32Array;
  private nListed = 0;
  private readonly listedMark: Int32Array;
  private listNo = 1;
  private listMinTier = 1;
  private listCreated = 0;
  /** the layer's tiers at the call, made by listToMarks (the current tiers with the undo log applied backwards) */
  private readonly listTiers: Int8Array;
  /** while a list is pending: the current layer's blocks moved or dropped since the call, each with its tier before */
  private undoBlock = new Int32Array(64);
  private undoTier = new Int8Array(64);
  private nUndo = 0;
  private listChanges = 0;
  /** the layer's drop count at the call (layerDrops) */
  private listDrops = 0;
  /**
   * Per layer, the kept blocks of its latest decision when that decision ended with one list of scope
   * 'all' (its attended blocks): keptOf[l][0, keptN[l]) in no order, a mark per block
   * (keptMask[l * M + b] = 1: the layer's attended mask after such a decision) and its place in the
   * list (keptPos); per precision slot the kept blocks (keptBits[l * K + k]), their HBM bytes, their
   * quantized HBM bytes, and how many are below HBM (the counts follow the kept blocks' moves).
   * keptValid[l] = 1 while the list is the latest decision's and no block of the layer was dropped
   * since. Made when a layer first keeps such a list. listFromKept: the pending list is keptOf[curLayer].
   */
  private keptOf: Int32Array[] = [];
  private keptN = new Int32Array(0);
  private keptMask = new Uint8Array(0);
  private keptPos = new Int32Array(0);
  private keptBits = new Int32Array(0);
  private keptResident = new Float64Array(0);
  private keptQuant = new Float64Array(0);
  private keptBelow = new Int32Array(0);
  private readonly keptValid: Uint8Array;
  private keptViews: Uint8Array[] = [];
  private keptViewN = new Int32Array(0);
  private listFromKept = false;
  /** whether the latest layer work attended the blocks marked in keptMask (its attended mask is a view of keptMask) */
  private attendedKept = false;
  /** per layer: cache changes the driver made (blocks created, moved, dropped) */
  private readonly layerChanges: Float64Array;
  /** per layer: blocks the driver dropped */
  private readonly layerDrops: Float64Array;
  /** the attended blocks of a layer with skips (attendedMask, observation.attended), and its cached view */
  private readonly attended: Uint8Array;
  private attendedView: Uint8Array;
  /** per layer: a view of liveMask over its nBlocks blocks, and that nBlocks (views are cached) */
  private readonly masks: Uint8Array[];
  private readonly maskN: Int32Array;
  /** 1 where a layer has staged something this step (clearStaging has work) */
  private readonly stagedAny: Uint8Array;
  /** per layer, since its last clearStaging: the blocks staged one by one (may repeat), and 1 when a bulk stage ran */
  private readonly stagedList: number[][];
  private readonly bulkStaged: Uint8Array;
  /** scratch per tier for layerWork: staged bytes and the change in runs */
  private readonly tierScratch: Float64Array;
  private readonly runScratch: Int32Array;
  /** per tier, the last fetched block seen by fetchSpread (-1: none yet) */
  private readonly spreadPrev: Int32Array;
  /** with countSpread: the blocks the layer's work reads on demand (the first nFetched) */
  private readonly fetchedBlocks: Int32Array;
  private nFetched = 0;
  /**
   * A bulk stage of every block of a layer in a tier, when it is the layer's first stage of the step,
   * marks nothing: staging is then a number per (layer, tier), stagedSince, and a block counts as
   * staged when it entered its tier before that (enteredAt, a count of the cache changes the driver
   * made); a block that changes tier or bits gets its mark in stagedMask first (markStaged). 0: none.
   */
  private readonly stagedSince: Float64Array;
  private readonly enteredAt: Float64Array;
  private changes = 0;
  /** per layer: blocks created or moved since its last layerWork (may repeat), touched[l][0, touchedN[l]) */
  private readonly touched: Int32Array[];
  /** per layer: how many of touched[l] are set (touched[l][0, touchedN[l])) */
  private readonly touchedN: Int32Array;
  /** whether every block size is a whole number of bytes (byte sums are then exact in any order) */
  private readonly wholeBytes: boolean;
  /** per-layer objects handed to the policy and the executor, reused: valid during the call only */
  private readonly viewObj: Mutable<PolicyView>;
  private readonly obsObj: Mutable<Observation>;
  private readonly work: LayerWork;
  private readonly skippedBits: Int32Array;
  /** the attended blocks per precision (BITS order) of the layer kernelOf last looked at (LayerWork.blocksByBits) */
  private readonly attendedBits = new Int32Array(BITS.length);
  /** bytes of one block by its bits (cache.bytesOf, as a table) */
  private readonly bytesByBits: Float64Array;
  /** index of a precision in BITS, by its bits */
  private readonly bitsSlot: Int8Array;
  private timed = true;
  private curStep = -1;
  /**
   * Where the HIL executor would place each HBM block (its slab slots), so that a move's copies are
   * counted as it coalesces them; unset: one copy per block where HBM is an end.
   */
  hbmSlots?: HbmSlots;
  /**
   * a layer's staged and fetched bytes from the blocks moved or created since its last attention
   * (every lower tier bulk-staged) or from the blocks staged one by one, where those shortcuts apply
   * (default true); false counts them block by block over the layer, the reference they are tested against
   */
  fastPaths = true;
  private slotsPlaced = false;
  /** per layer: blocks dropped, and blocks created in HBM, since the layer's last attention */
  private droppedSince: number[][] = [];
  private createdSince: number[][] = [];
  /**
   * per block moved in the flush being gathered: flushBase + its tier and bits before (tier * 32 +
   * bits) + FLUSH_START_OFFSET, where marks below flushBase are of earlier flushes (flushBase grows by
   * FLUSH_STRIDE at each flush, and starts again when past flushBaseMax); whether a block moves twice in it
   */
  private flushMark = new Int32Array(0);
  private flushBase = FLUSH_STRIDE;
  /** the largest flushBase before the marks start again (flushMark is an Int32Array) */
  flushBaseMax = FLUSH_BASE_MAX;
  private flushMulti = false;
  private curLayer = 0;
  /** the batch handed to executor.stage (reused: the executor reads it during the call only), and prefetch's one-block list */
  private readonly stageBatch: MoveBatch = newBatch(0, 'prefetch', 0, 0, 16, 16);
  private readonly oneBlock: number[] = intArray(1);
  /** the listed prefetches gathered for one stage (emitStage): layer (-1: none), tier, first block's bits, blocks, bytes, copies, last block and whether a run goes on past it (KVCache.runBits) */
  private runLayer = -1;
  private runTier = -1;
  private runFirstBits = 16;
  private readonly runBlocks: number[] = [];
  private runBytes = 0;
  private runRuns = 0;
  /** copies of the listed run whose host slot follows the previous copy's (MoveBatch.adjacent) */
  private runAdjacent = 0;
  private runLast = -1;
  private runLastFull = false;

  /** whether the executor prices LayerWork.mixedShare */
  private readonly mixedShare: boolean;
  /** whether the executor prices the spread of host slots (Executor.usesSpread): bulk stages and fetches count it then */
  private readonly countSpread: boolean;

  constructor(
    readonly header: TraceHeader,
    readonly cache: KVCache,
    readonly policy: Policy,
    readonly executor: Executor<H>,
    readonly budgetBlocks: number,
    /** HBM bytes usable while the prompt is prefilled (default: the budget) */
    readonly prefillCapacityBytes = cache.capacity[0],
  ) {
    this.L = header.layers;
    this.mixedShare = executor.usesMixedShare === true;
    this.countSpread = executor.usesSpread === true;
    this.G = header.kv_groups;
    this.M = cache.maxBlocks;
    this.B = header.block_size;
    this.T = cache.tierNames.length;
    this.lastTier = cache.tierNames.indexOf(this.lastTierName);
    this.keyNorms = Array.from({ length: this.L }, () => new Float32Array(this.M));
    // with one group the layer's norms are the group's (one array)
    this.groupNorms = this.keyNorms.map((k) => (this.G === 1 ? [k] : Array.from({ length: this.G }, () => new Float32Array(this.M))));
    this.groupMean = new GroupMean(this.M);
    this.rows = new Array<LayerAttention>(this.G);
    this.staged = new Float64Array(this.L * this.T);
    this.stagedMask = new Uint8Array(this.L * this.M);
    this.stagedCode = new Int16Array(this.L * this.M);
    this.stagedCodeEpoch = new Int32Array(this.L * this.M);
    this.stageEpoch = new Int32Array(this.L).fill(1);
    // (lists of objects from the start: the executor pushes onto a layer's list)
    this.pending = Array.from({ length: this.L }, () => objectArray<H>());
    this.masks = Array.from({ length: this.L }, () => cache.liveMask.subarray(0, 0));
    this.skipMark = new Uint8Array(this.M);
    this.listed = new Int32Array(this.M);
    this.keepList = new Int32Array(this.M);
    this.listedMark = new Int32Array(this.M);
    this.listTiers = new Int8Array(this.M);
    this.layerChanges = new Float64Array(this.L);
    this.keptValid = new Uint8Array(this.L);
    this.layerDrops = new Float64Array(this.L);
    this.attended = new Uint8Array(this.M);
    this.attendedView = this.attended.subarray(0, 0);
    this.maskN = new Int32Array(this.L).fill(-1);
    this.stagedAny = new Uint8Array(this.L);
    this.stagedList = Array.from({ length: this.L }, () => []);
    this.bulkStaged = new Uint8Array(this.L);
    this.tierScratch = new Float64Array(this.T);
    this.runScratch = new Int32Array(this.T);
    this.spreadPrev = new Int32Array(this.T);
    this.fetchedBlocks = new Int32Array(this.countSpread ? this.M : 0);
    this.stagedSince = new Float64Array(this.L * this.T);
    this.enteredAt = new Float64Array(this.L * this.M);
    this.touched = Array.from({ length: this.L }, () => new Int32Array(16));
    this.touchedN = new Int32Array(this.L);
    this.wholeBytes = BITS.every((bits) => Number.isInteger(cache.bytesOf(bits)));
    this.viewObj = {
      step: 0,
      layer: 0,
      layers: this.L,
      contextTokens: 0,
      nBlocks: 0,
      blockSize: this.B,
      budgetBlocks,
      newBlock: false,
      cache,
      keyNorms: this.keyNorms[0],
      groupKeyNorms: this.groupNorms[0],
      keyNormsFrom: 0,
    };
    const groups: GroupAttention[] = Array.from({ length: this.G }, (): MutableGroup => ({ idx: null, mass: new Float32Array(0), uniform: 0 }));
    this.obsObj = { step: 0, layer: 0, nBlocks: 0, idx: null, mass: new Float32Array(0), uniform: 0, groups, attended: this.masks[0], attendedCount: 0 };
    this.bytesByBits = new Float64Array(17);
    for (const bits of BITS) this.bytesByBits[bits] = cache.bytesOf(bits);
    this.bitsSlot = new Int8Array(17).fill(-1);
    BITS.forEach((bits, k) => (this.bitsSlot[bits] = k));
    this.work = {
      step: 0,
      layer: 0,
      tokens: 0,
      // (−0: doubles from the start, as stagingBytes; every layerWork sets them before the executor reads them)
      residentBytes: -0,
      quantizedBytes: -0,
      stagedBytes: -0,
      fetchBytes: doubleArray(this.T),
      fetchRuns: doubleArray(this.T),
      fetchSpread: doubleArray(this.T),
      fetchAdjacent: doubleArray(this.T),
      nBlocks: 0,
      attendedMask: this.masks[0],
      attendedCount: 0,
      kernel: 'fp16',
      mixedShare: 0,
      blocksByBits: this.attendedBits,
    };
    this.skippedBits = new Int32Array(BITS.length);
  }

  /** liveMask of layer l over its first n blocks (a cached view) */
  private maskOf(l: number, n: number): Uint8Array {
    if (this.maskN[l] !== n) {
      this.masks[l] = this.cache.liveMask.subarray(l * this.M, l * this.M + n);
      this.maskN[l] = n;
    }
    return this.masks[l];
  }

  /** Replay every step; `onStep` receives each step's result. */
  run(steps: Iterable<TraceStep>, onStep: (r: StepResult) => void): void {
    let first = true;
    for (const s of steps) {
      if (first) {
        this.prefill(s);
        first = false;
        // (here, not in the first decode step: a branch that runs once a replay, at its start, has no type
        // feedback in code compiled during an earlier replay, which it would throw away)
        if (this.hbmSlots && !this.slotsPlaced) this.placeSlots();
      }
      onStep(this.decodeStep(s));
    }
    if (first) throw new Error('trace has no decode steps');
  }

  private prefill(s0: TraceStep): void {
    this.timed = false;
    this.curStep = -1;
    const promptBlocks = blocksFor(this.header.prompt_tokens, this.B);
    const budget = this.cache.capacity[0];
    this.cache.capacity[0] = Math.max(budget, this.prefillCapacityBytes);
    // the prompt's blocks, block-major across layers (so that a spill past HBM hits every layer alike):
    // the rounds of blocks that fit in HBM whole are created in bulk, the rest one by one
    const c = this.cache;
    const roundBytes = this.L * c.bytesOf(16);
    const bulk = Math.min(promptBlocks, Math.max(0, Math.floor(c.free(0) / roundBytes)));
    for (let l = 0; l < this.L && bulk > 0; l++) {
      if (c.created[l] !== 0) throw new Error(`prefill: layer ${l} already has ${c.created[l]} blocks (a ReplayDriver and its KVCache replay one trace once)`);
      if (!c.createMany(l, bulk, 0, 16)) throw new Error(`prefill: layer ${l}: ${bulk} blocks did not fit in HBM`);
    }
    for (let b = bulk; b < promptBlocks; b++) for (let l = 0; l < this.L; l++) this.createBlock(l, 'prefill');
    this.checkRows(s0);
    for (let l = 0; l < this.L; l++) {
      const rows = this.layerRows(s0, l);
      const normsFrom = this.updateNorms(l, rows);
      this.policy.observe(this.observation(-1, l, rows));
      this.curLayer = l;
      this.policy.decide(this.view(-1, l, rows[0].nBlocks, false, s0.contextTokens, normsFrom), this);
      this.clearBatches();
      // prefill attention is not modelled: a skip asked for here applies to nothing
      if (this.listPending) this.dropList();
      if (this.anySkip) this.clearSkips();
    }
    this.cache.capacity[0] = budget;
    this.enforceBudgetAfterPrefill();
    this.timed = true;
  }

  private enforceBudgetAfterPrefill(): void {
    const c = this.cache;
    for (let b = 0; b < this.M && c.used[0] > c.capacity[0]; b++) {
      for (let l = 0; l < this.L && c.used[0] > c.capacity[0]; l++) {
        if (b >= c.created[l] || c.tierOf(l, b) !== 0) continue;
        const to = this.firstTierWithRoom(c.bytesOf(c.bitsOf(l, b)));
        if (to < 0) throw new Error(`out of memory after prefill: no tier has room for layer ${l} block ${b}`);
        c.move(l, b, to, c.bitsOf(l, b));
        this.refuse('budget', `policy ${this.policy.name} left HBM above the budget after prefill; layer ${l} block ${b} moved to ${c.tierNames[to]}`);
      }
    }
  }

  private firstTierWithRoom(bytes: number): number {
    for (let t = 1; t < this.T; t++) if (this.cache.free(t) >= bytes) return t;
    return -1;
  }

  private decodeStep(s: TraceStep): StepResult {
    const ex = this.executor;
    this.curStep = s.step;
    ex.beginStep(s.step, s.contextTokens);
    const recall = new Float64Array(this.L);
    this.checkRows(s);
    for (let l = 0; l < this.L; l++) {
      const rows = this.layerRows(s, l);
      const n = rows[0].nBlocks;
      const normsFrom = this.updateNorms(l, rows);
      const isNew = n > this.cache.created[l];
      this.curLayer = l;
      this.policy.decide(this.view(s.step, l, n, isNew, s.contextTokens, normsFrom), this);
      while (this.cache.created[l] < n) this.createBlock(l, 'decode');
      this.flush();
      // the layer's attention over live blocks minus skipped ones: without skips, the layer's view of
      // the cache's live mask; with skips, `attended`
      if (this.listPending && (this.anySkip || !this.wholeBytes || (this.layerChanges[l] !== this.listChanges && !this.listHolds(l)))) this.listToMarks();
      const listed = this.listPending;
      const skipping = listed || this.anySkip;
      const w = listed ? (this.listFromKept ? this.layerWorkKept(s, l, n) : this.layerWorkListed(s, l, n)) : skipping ? this.layerWorkSkipping(s, l, n) : this.layerWork(s, l, n, this.maskOf(l, n));
      if (this.countSpread) this.fetchSpread(l, w);
      if (this.slotsPlaced) this.layerSlots(l);
      this.emitStage();
      const waits = this.pending[l];
      // the executor may add to `waits` during the call; it does not keep the array
      ex.layer(w, waits);
      // (emptied by pops, its room kept for the layer's next waits: setting the length is a runtime call that lets the room go)
      while (waits.length !== 0) waits.pop();
      this.clearStaging(l);
      const obs = this.observation(s.step, l, rows, w.attendedMask, w.attendedCount);
      // (attendedShare reads the array the mask views, at the layer's offset)
      const kept = this.attendedKept;
      const whole = kept ? this.keptMask : skipping ? this.attended : this.cache.liveMask;
      const base = skipping && !kept ? 0 : l * this.M;
      let share = 0;
      for (let g = 0; g < this.G; g++) share += attendedShare(rows[g], obs.attendedCount, whole, base);
      recall[l] = share / this.G;
      this.layerHook?.(s.step, l, obs, rows);
      this.policy.observe(obs);
    }
    this.emitStage();
    return { step: s.step, contextTokens: s.contextTokens, timing: ex.endStep(), recall };
  }

  // ---- Actions (called by the policy during decide) ----

  evict(layer: number, block: number): boolean {
    const why = this.checkLive(layer, block);
    if (why) return this.refuse('evict', why);
    if (this.cache.isPinned(layer, block)) return this.refuse('evict', `layer ${layer} block ${block} is pinned`);
    if (this.listPending && layer === this.curLayer) this.logUndo(block);
    // (a pending list from keptOf keeps its blocks until its layer's work, which falls back to marks after a drop)
    this.keptValid[layer] = 0;
    this.cache.drop(layer, block);
    if (this.slotsPlaced) this.droppedSince[layer].push(block);
    this.layerChanges[layer]++;
    this.layerDrops[layer]++;
    this.count('evict');
    return true;
  }

  demote(layer: number, block: number, tier: string, bits: number): boolean {
    const i = this.liveAt(layer, block);
    if (i < 0) return this.refuse('demote', this.checkLive(layer, block)!);
    const to = tier === this.lastTierName ? this.lastTier : this.cache.tierNames.indexOf(tier);
    if (to < 0) return this.refuse('demote', `unknown tier "${tier}" (tiers: ${this.cache.tierNames.join(', ')})`);
    this.lastTierName = tier;
    this.lastTier = to;
    const k = bits >= 0 && bits <= 16 ? this.bitsSlot[bits] : -1;
    if (!(k >= 0)) return this.refuse('demote', `unsupported precision ${bits} bits (valid: ${BITS_DESCENDING.join(', ')})`);
    const c = this.cache;
    const from = c.tier[i];
    const fromBits = c.bits[i];
    if (to < from || (to === from && bits >= fromBits)) {
      return this.refuse('demote', `layer ${layer} block ${block}: ${tier}/${bits}b is not below ${c.tierNames[from]}/${fromBits}b`);
    }
    if (c.pinned[i] === 1) return this.refuse('demote', `layer ${layer} block ${block} is pinned`);
    return this.moveBlock(i, layer, block, from, fromBits, to, bits, k, 'demote');
  }

  promote(layer: number, block: number, bits?: number): boolean {
    const i = this.liveAt(layer, block);
    if (i < 0) return this.refuse('promote', this.checkLive(layer, block)!);
    const c = this.cache;
    const from = c.tier[i];
    const fromBits = c.bits[i];
    const b = bits ?? fromBits;
    const k = b >= 0 && b <= 16 ? this.bitsSlot[b] : -1;
    if (!(k >= 0)) return this.refuse('promote', `unsupported precision ${b} bits (valid: ${BITS_DESCENDING.join(', ')})`);
    if (from === 0 && b <= fromBits) return this.refuse('promote', `layer ${layer} block ${block} is already in ${c.tierNames[0]}`);
    return this.moveBlock(i, layer, block, from, fromBits, 0, b, k, 'promote');
  }

  /**
   * demote(layer, blocks[j], tier, bits) for j = from, from + 1, ... below count, in that order, until
   * one is refused: returns its index (count when none was). The same moves, refusals, counts and
   * batches as those calls; the checks that do not depend on the block are made once.
   */
  demoteBlocks(layer: number, blocks: ArrayLike<number>, from: number, count: number, tier: string, bits: number): number {
    const c = this.cache;
    const to = tier === this.lastTierName ? this.lastTier : c.tierNames.indexOf(tier);
    const k = bits >= 0 && bits <= 16 ? this.bitsSlot[bits] : -1;
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.L) || to < 0 || !(k >= 0)) {
      // (each call refuses as it would alone)
      for (let j = from; j < count; j++) if (!this.demote(layer, blocks[j], tier, bits)) return j;
      return count;
    }
    this.lastTierName = tier;
    this.lastTier = to;
    const base = layer * this.M;
    const created = c.created[layer];
    const tiers = c.tier;
    const bitsAt = c.bits;
    const pinned = c.pinned;
    for (let j = from; j < count; ) {
      const b = blocks[j];
      const i = base + b;
      // (anything but a live, unpinned block above the destination: demote() refuses it with its reason)
      if (!(b >= 0 && b < created && b === Math.floor(b)) || tiers[i] < 0 || to < tiers[i] || (to === tiers[i] && bits >= bitsAt[i]) || pinned[i] === 1) {
        if (!this.demote(layer, b, tier, bits)) return j;
        j++;
        continue;
      }
      // (this block and those after it from the same place; the first one by demote() where the run does not take it)
      const e = this.moveRunFrom(layer, blocks, j, count, tiers[i], bitsAt[i], to, bits, k, 'demote');
      if (e === j && !this.demote(layer, b, tier, bits)) return j;
      j = e > j ? e : j + 1;
    }
    return count;
  }

  /**
   * promote(layer, blocks[j]) (at its precision) for j = from, from + 1, ... below count, in that
   * order, passing over the blocks in HBM and the evicted ones, until one is refused: returns its
   * index (count when none was). The same moves, refusals, counts and batches as those calls.
   */
  promoteBlocks(layer: number, blocks: ArrayLike<number>, from: number, count: number): number {
    const c = this.cache;
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.L)) {
      if (from >= count) return count;
      this.promote(layer, blocks[from]);
      return from;
    }
    const base = layer * this.M;
    const created = c.created[layer];
    const tiers = c.tier;
    const bitsAt = c.bits;
    for (let j = from; j < count; ) {
      const b = blocks[j];
      if (!(b >= 0 && b < created && b === Math.floor(b))) {
        if (!this.promote(layer, b)) return j;
        j++;
        continue;
      }
      const i = base + b;
      const t = tiers[i];
      if (t <= 0) {
        j++;
        continue;
      }
      const fromBits = bitsAt[i];
      // (the first one by promote() where the run does not take it: it does not fit, or is pinned)
      const e = this.moveRunFrom(layer, blocks, j, count, t, fromBits, 0, fromBits, this.bitsSlot[fromBits], 'promote');
      if (e === j && !this.promote(layer, b)) return j;
      j = e > j ? e : j + 1;
    }
    return count;
  }

  prefetch(layer: number, block: number): boolean {
    const why = this.checkLive(layer, block);
    if (why) return this.refuse('prefetch', why);
    const t = this.cache.tierOf(layer, block);
    if (t === 0) return this.refuse('prefetch', `layer ${layer} block ${block} is already resident`);
    const bits = this.cache.bitsOf(layer, block);
    const bytes = this.cache.bytesOf(bits);
    const left = this.cache.bytesIn(layer, t) - this.staged[layer * this.T + t];
    if (left < bytes) return this.refuse('prefetch', `layer ${layer}: everything offloaded in ${this.cache.tierNames[t]} is already staged`);
    const one = this.oneBlock;
    one[0] = block;
    this.stageBytes(layer, t, bits, bytes, one);
    this.count('prefetch');
    return true;
  }

  /**
   * prefetch(layer, blocks[j]) for j = from, from + 1, ... below count, in that order, until one is
   * refused: returns its index (count when none was). The same stages, refusals and counts as those
   * calls; a run of blocks in one tier that each have room is staged in one pass.
   */
  prefetchBlocks(layer: number, blocks: ArrayLike<number>, from: number, count: number): number {
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.L)) {
      if (from >= count) return count;
      this.prefetch(layer, blocks[from]);
      return from;
    }
    const c = this.cache;
    const base = layer * this.M;
    const created = c.created[layer];
    const tiers = c.tier;
    const bitsAt = c.bits;
    const bytesOf = this.bytesByBits;
    for (let j = from; j < count; ) {
      const b = blocks[j];
      const t = b >= 0 && b < created && b === Math.floor(b) ? tiers[base + b] : 0;
      // this block and those after it that are live in the same tier below HBM, while each has room
      // there (what is left unstaged of the tier: its bytes less those staged, these included)
      let e = j;
      let bytes = 0;
      if (t > 0) {
        const room = c.bytesIn(layer, t) - this.staged[layer * this.T + t];
        for (; e < count; e++) {
          const x = blocks[e];
          if (!(x >= 0 && x < created && x === Math.floor(x)) || tiers[base + x] !== t) break;
          const bx = bytesOf[bitsAt[base + x]];
          if (room - bytes < bx) break;
          bytes += bx;
        }
      }
      if (e === j) {
        // (not taken so: prefetch() refuses it with its reason)
        if (!this.prefetch(layer, b)) return j;
        j++;
        continue;
      }
      this.stageListed(layer, t, bitsAt[base + b], bytes, blocks, j, e);
      this.count('prefetch');
      this.pendingN += e - j - 1;
      j = e;
    }
    return count;
  }

  prefetchOffloaded(layer: number): void {
    if (!(layer >= 0 && layer < this.L)) {
      this.refuse('prefetch', `layer ${layer} does not exist (layers: 0..${this.L - 1})`);
      return;
    }
    for (let t = 1; t < this.T; t++) {
      const bytes = this.cache.bytesIn(layer, t) - this.staged[layer * this.T + t];
      if (bytes > 0) {
        this.stageBytes(layer, t, 16, bytes, NO_BLOCKS);
        this.count('prefetch');
      }
    }
  }

  pin(layer: number, block: number): void {
    const why = this.checkLive(layer, block);
    if (why) {
      this.refuse('pin', why);
      return;
    }
    this.cache.setPinned(layer, block, true);
    this.count('pin');
  }

  unpin(layer: number, block: number): void {
    if (!this.checkLive(layer, block)) this.cache.setPinned(layer, block, false);
  }

  skip(block: number): void {
    // (the common case first: a live block of the current layer)
    const c = this.cache;
    const l = this.curLayer;
    if (block >= 0 && block < c.created[l] && block === Math.floor(block) && c.tier[l * this.M + block] >= 0) {
      if (this.listPending) this.listToMarks();
      this.skipMark[block] = 1;
      this.anySkip = true;
      return;
    }
    const why = this.checkLive(l, block);
    if (why) this.refuse('skip', why);
  }

  skipExcept(keep: Uint8Array | null, scope: SkipScope): number {
    // the kept blocks as a list (one read of keep per block; mostly zeros), then as skipExceptListed
    const created = this.cache.created[this.curLayer];
    const n = keep === null ? 0 : Math.min(created, keep.length);
    const list = this.keepList;
    let k = 0;
    for (let b = 0; b < n; b++) if (keep![b] !== 0) list[k++] = b;
    return this.skipExceptListed(list, k, scope);
  }

  skipExceptListed(blocks: ArrayLike<number>, count: number, scope: SkipScope): number {
    const c = this.cache;
    const l = this.curLayer;
    if (scope !== 'offloaded' && scope !== 'all') {
      this.refuse('skip', `unknown skip scope "${String(scope)}" (valid: offloaded, all)`);
      return 0;
    }
    const minTier = scope === 'all' ? 0 : 1;
    // with skips asked for already, this one becomes marks too
    if (this.listPending) this.listToMarks();
    const base = l * this.M;
    const created = c.created[l];
    const tiers = c.tier;
    const mark = this.listedMark;
    const no = this.listNo;
    const listed = this.listed;
    let k = 0;
    for (let i = 0; i < count; i++) {
      const b = blocks[i];
      if (b >= 0 && b < created && b === Math.floor(b) && tiers[base + b] >= minTier && mark[b] !== no) {
        mark[b] = no;
        listed[k++] = b;
      }
    }
    let inScope = 0;
    if (minTier === 0) inScope = c.live(l);
    else for (let t = 1; t < this.T; t++) inScope += c.tierCount[l * this.T + t];
    this.nListed = k;
    this.listMinTier = minTier;
    this.listCreated = created;
    this.nUndo = 0;
    this.listChanges = this.layerChanges[l];
    this.listDrops = this.layerDrops[l];
    this.listPending = true;
    if (this.anySkip) this.listToMarks();
    return inScope - k;
  }

  skipExceptListedDelta(added: ArrayLike<number>, nAdded: number, removed: ArrayLike<number>, nRemoved: number): number {
    const l = this.curLayer;
    // (the list is held with whole numbers of bytes only: its counts are then exact in any order)
    if (this.keptValid[l] !== 1 || this.listPending || this.anySkip || !this.wholeBytes) return -1;
    const c = this.cache;
    const base = l * this.M;
    const created = c.created[l];
    const tiers = c.tier;
    const mark = this.keptMask;
    for (let j = 0; j < nRemoved; j++) {
      const b = removed[j];
      if (b >= 0 && b < created && b === Math.floor(b) && mark[base + b] === 1) this.keptRemove(l, b);
    }
    for (let j = 0; j < nAdded; j++) {
      const b = added[j];
      if (b >= 0 && b < created && b === Math.floor(b) && tiers[base + b] >= 0 && mark[base + b] !== 1) this.keptAdd(l, b);
    }
    this.listFromKept = true;
    this.listMinTier = 0;
    this.listCreated = created;
    this.nUndo = 0;
    this.listChanges = this.layerChanges[l];
    this.listDrops = this.layerDrops[l];
    this.listPending = true;
    return c.live(l) - this.keptN[l];
  }

  // ---- internals ----

  /** b onto layer l's touched blocks (the layer's array doubled when full) */
  private touch(l: number, b: number): void {
    let a = this.touched[l];
    const n = this.touchedN[l];
    if (n === a.length) {
      const grown = new Int32Array(2 * n);
      grown.set(a);
      this.touched[l] = a = grown;
    }
    a[n] = b;
    this.touchedN[l] = n + 1;
  }

  private view(step: number, layer: number, nBlocks: number, newBlock: boolean, contextTokens: number, keyNormsFrom: number): PolicyView {
    const v = this.viewObj;
    v.keyNormsFrom = keyNormsFrom;
    v.step = step;
    v.layer = layer;
    v.contextTokens = contextTokens;
    v.nBlocks = nBlocks;
    v.newBlock = newBlock;
    v.keyNorms = this.keyNorms[layer];
    v.groupKeyNorms = this.groupNorms[layer];
    return v;
  }

  /** A step must hold layers x kv_groups rows (the reader checks files; this guards in-memory steps). */
  private checkRows(s: TraceStep): void {
    if (s.layers.length !== this.L * this.G) {
      throw new Error(`step ${s.step}: ${s.layers.length} attention rows, expected ${this.L * this.G} (layers ${this.L} x kv_groups ${this.G}, row = layer * kv_groups + group)`);
    }
  }

  /** Layer l's rows, one per KV group: rows l*G .. l*G + G - 1 of the step (a reused array). */
  private layerRows(s: TraceStep, l: number): LayerAttention[] {
    const rows = this.rows;
    for (let g = 0; g < this.G; g++) rows[g] = s.layers[l * this.G + g];
    return rows;
  }

  private observation(step: number, layer: number, rows: readonly LayerAttention[], mask?: Uint8Array, attendedCount?: number): Observation {
    const n = rows[0].nBlocks;
    const attended = mask ?? this.maskOf(layer, n);
    let count = attendedCount ?? 0;
    if (attendedCount === undefined) for (let b = 0; b < n; b++) count += attended[b];
    const o = this.obsObj;
    o.step = step;
    o.layer = layer;
    o.nBlocks = n;
    this.groupMean.of(rows, 0, this.G, o);
    for (let g = 0; g < this.G; g++) {
      const view = o.groups[g] as MutableGroup;
      const la = rows[g];
      view.idx = la.idx;
      view.mass = la.mass;
      view.uniform = rowUniform(la);
    }
    o.attended = attended;
    o.attendedCount = count;
    return o;
  }

  /**
   * Keep the latest norm per (group, block); a layer's block norm is the largest over its groups.
   * Returns the first block whose norms were written (the layer's blocks below it kept theirs; M when none was).
   */
  private updateNorms(layer: number, rows: readonly LayerAttention[]): number {
    if (this.G === 1) {
      if (rows[0].norms.length === 0) return this.M;
      this.keyNorms[layer].set(rows[0].norms, rows[0].normFrom);
      return rows[0].normFrom;
    }
    const per = this.groupNorms[layer];
    let lo = Infinity;
    let hi = -1;
    for (let g = 0; g < this.G; g++) {
      const la = rows[g];
      if (la.norms.length === 0) continue;
      per[g].set(la.norms, la.normFrom);
      lo = Math.min(lo, la.normFrom);
      hi = Math.max(hi, la.normFrom + la.norms.length);
    }
    const out = this.keyNorms[layer];
    for (let b = lo; b < hi; b++) {
      let m = per[0][b];
      for (let g = 1; g < this.G; g++) if (per[g][b] > m) m = per[g][b];
      out[b] = m;
    }
    return lo === Infinity ? this.M : lo;
  }

  private createBlock(layer: number, phase: 'prefill' | 'decode'): void {
    const c = this.cache;
    this.enteredAt[layer * this.M + c.created[layer]] = ++this.changes;
    this.layerChanges[layer]++;
    if (this.timed) this.touch(layer, c.created[layer]);
    if (c.create(layer, 0, 16)) {
      if (this.slotsPlaced) this.createdSince[layer].push(c.created[layer] - 1);
      return;
    }
    // HBM is full: the new block goes to the first lower tier with room
    for (let t = 1; t < this.T; t++) {
      if (c.create(layer, t, 16)) {
        this.refuse('alloc', `${phase}: HBM full, layer ${layer} block ${c.created[layer] - 1} went to ${c.tierNames[t]}`);
        if (this.timed) {
          this.batch(layer, c.created[layer] - 1, 'spill', 0, t, 16, 16);
        }
        return;
      }
    }
    throw new Error(`out of memory: every tier is full creating layer ${layer} block ${c.created[layer]} (tier capacities: ${c.tierNames.map((n, i) => `${n} ${c.capacity[i]} B`).join(', ')})`);
  }

  /**
   * Live block i = layer * M + block, at (from, fromBits), to tier `to` at `bits` (BITS index k), for
   * demote and promote once they have checked the move.
   */
  private moveBlock(i: number, layer: number, block: number, from: number, fromBits: number, to: number, bits: number, k: number, reason: TransferReason): boolean {
    // (nothing bulk-staged since: no block entered its tier before 0)
    const since = this.stagedSince[layer * this.T + from];
    const code = this.stagedCodeAt(i, layer, from, fromBits, since);
    if (this.listPending && layer === this.curLayer) this.logUndo(block);
    const moved = this.cache.moveAt(i, layer, block, to, bits, k);
    // a kept block's counts: out at its place before, in at its place after the move (the same place if refused)
    if (this.keptValid[layer] === 1 && this.keptMask[i] === 1) {
      if (moved) this.keptMove(layer, from, fromBits, to, bits);
      else {
        this.keptCount(layer, i, -1);
        this.keptCount(layer, i, 1);
      }
    }
    if (!moved) {
      return this.refuse(reason, `layer ${layer} block ${block}: ${this.cache.tierNames[to]} is full`);
    }
    this.stagedMask[i] = code === to * 32 + bits ? 1 : 0;
    this.enteredAt[i] = ++this.changes;
    this.layerChanges[layer]++;
    if (this.timed) this.touch(layer, block);
    this.count(reason);
    if (this.timed) this.batch(layer, block, reason, from, to, fromBits, bits);
    return true;
  }

  /**
   * Before block i of `layer` moves from (from, fromBits): the tier and bits of its staged copy (tier *
   * 32 + bits), or -1 without one. Staged where it is now (marked, or in a tier bulk-staged after it
   * entered: `since`): those, kept for its later moves; else the one kept from an earlier move since its
   * stage, if any.
   */
  private stagedCodeAt(i: number, layer: number, from: number, fromBits: number, since: number): number {
    const e = this.stageEpoch[layer];
    if (this.stagedMask[i] === 1 || (since > 0 && this.enteredAt[i] < since)) {
      const code = from * 32 + fromBits;
      this.stagedCode[i] = code;
      this.stagedCodeEpoch[i] = e;
      return code;
    }
    return this.stagedCodeEpoch[i] === e ? this.stagedCode[i] : -1;
  }

  /**
   * moveBlock for blocks[j0], blocks[j0 + 1], ... below count while each is a live, unpinned block of
   * the layer at (from, fromBits) that fits `to` at `bits` (the cache's moveRun), for demoteBlocks and
   * promoteBlocks once they have checked blocks[j0]: the same effects as moveBlock for each, in that
   * order. Returns the index of the first block not moved: j0 when blocks[j0] is to take the single
   * call's path (it does not fit, is pinned, or a pending list logs each block's tier before its move).
   */
  private moveRunFrom(layer: number, blocks: ArrayLike<number>, j0: number, count: number, from: number, fromBits: number, to: number, bits: number, k: number, reason: TransferReason): number {
    if (this.listPending && layer === this.curLayer) return j0;
    const e = this.cache.moveRun(layer, blocks, j0, count, from, fromBits, to, bits, k);
    const n = e - j0;
    if (n === 0) return j0;
    const base = layer * this.M;
    const since = this.stagedSince[layer * this.T + from];
    const kept = this.keptValid[layer] === 1;
    const entered = this.enteredAt;
    const keptMask = this.keptMask;
    this.layerChanges[layer] += n;
    // (the first counted as its own action, the others added to that run of the kind)
    this.count(reason);
    this.pendingN += n - 1;
    const timed = this.timed;
    // (timed: one batch for the run, the first block by batch(), the others added to it; the layer's
    // touched blocks grown once for the run)
    let list: number[] | null = null;
    let marks: Int32Array | null = null;
    let touched = this.touched[layer];
    let nt = this.touchedN[layer];
    if (timed) {
      this.batch(layer, blocks[j0], reason, from, to, fromBits, bits);
      list = this.lastBatch!.blocks;
      if (this.slotsPlaced) marks = this.flushMark;
      if (nt + n > touched.length) {
        const grown = new Int32Array(Math.max(2 * touched.length, nt + n));
        grown.set(touched.subarray(0, nt));
        this.touched[layer] = touched = grown;
      }
    }
    const mark = this.flushBase + from * 32 + fromBits + FLUSH_START_OFFSET;
    const flushBase = this.flushBase;
    for (let j = j0; j < e; j++) {
      const b = blocks[j];
      const i = base + b;
      this.stagedMask[i] = this.stagedCodeAt(i, layer, from, fromBits, since) === to * 32 + bits ? 1 : 0;
      if (kept && keptMask[i] === 1) this.keptMove(layer, from, fromBits, to, bits);
      entered[i] = ++this.changes;
      if (!timed) continue;
      touched[nt++] = b;
      if (j === j0) continue;
      list!.push(b);
      if (marks !== null) {
        if (marks[i] >= flushBase) this.flushMulti = true;
        else marks[i] = mark;
      }
    }
    if (timed) this.touchedN[layer] = nt;
    return e;
  }

  /** the batch of this decision with `key`, if one was made */
  private batchWith(key: number): MoveBatch | undefined {
    const keys = this.batchKeys;
    for (let i = 0; i < keys.length; i++) if (keys[i] === key) return this.batchList[i];
    return undefined;
  }

  private batch(layer: number, block: number, reason: TransferReason, fromTier: number, toTier: number, fromBits: number, toBits: number): void {
    // one number per (layer, reason, tiers, precisions)
    const key = ((((layer * REASON_COUNT + reasonIndex(reason)) * this.T + fromTier) * this.T + toTier) * 17 + fromBits) * 17 + toBits;
    let b = key === this.lastKey ? this.lastBatch : this.batchWith(key);
    if (!b) {
      b = this.batchPool.pop();
      if (b === undefined) b = newBatch(layer, reason, fromTier, toTier, fromBits, toBits);
      else {
        b.layer = layer;
        b.reason = reason;
        b.fromTier = fromTier;
        b.toTier = toTier;
        b.fromBits = fromBits;
        b.toBits = toBits;
        b.bytesFrom = b.bytesTo = b.runs = 0;
      }
      this.batchList.push(b);
      this.batchKeys.push(key);
    }
    this.lastKey = key;
    this.lastBatch = b;
    // (its bytes are summed at the flush: bytesOfBatch)
    b.blocks.push(block);
    if (this.slotsPlaced) {
      const i = layer * this.M + block;
      if (this.flushMark[i] >= this.flushBase) this.flushMulti = true;
      else this.flushMark[i] = this.flushBase + (reason === 'spill' ? NONE : fromTier) * 32 + fromBits + FLUSH_START_OFFSET;
    }
  }

  /*
   * RUNS. Copies are counted as contiguous runs of a layer's blocks, as the HIL executor coalesces
   * them between host slots (block b of layer l at slot l * M + b) and a packed staging extent: a
   * block joins the previous copied block when that one is at KVCache.runBits (16-bit, where a 16-bit
   * block fills its slot, so the next slot starts where it ends); a quantized block ends its run.
   */
  private stageBytes(layer: number, tier: number, bits: number, bytes: number, blocks: number[]): void {
    if (blocks.length > 0) {
      this.stageListed(layer, tier, bits, bytes, blocks, 0, blocks.length);
      return;
    }
    const first = this.stageCount(layer, tier, bytes);
    if (!this.timed) return;
    // a bulk stage (no blocks listed) copies every offloaded block of the layer in `tier` not yet staged
    const runBits = this.cache.runBits;
    const c = this.cache;
    const base = layer * this.M;
    let runs: number;
    let spread = 0;
    // (copies right after the block in the slot before them that do not join its copy: that block below runBits)
    let adjacent = 0;
    if (first) {
      this.bulkStaged[layer] = 1;
      // nothing of the layer staged yet: every block in `tier` is staged, in the cache's runs
      runs = c.runsIn(layer, tier);
      this.stagedSince[layer * this.T + tier] = ++this.changes;
      if (this.countSpread) {
        spread = c.spreadIn(layer, tier);
        // (adjacent pairs in the tier less those a run joins: count - runs)
        adjacent = c.adjacentIn(layer, tier) - (c.countIn(layer, tier) - runs);
      }
    } else {
      this.bulkStaged[layer] = 1;
      this.markStaged(layer);
      // runs of the blocks in `tier` not yet staged (RUNS below), marked staged in the same pass
      const mask = this.stagedMask;
      const tiers = c.tier;
      const bitsAt = c.bits;
      runs = 0;
      let open = false;
      const count = this.countSpread;
      let prev = -1;
      for (let i = base, end = base + c.created[layer]; i < end; i++) {
        if (tiers[i] !== tier) {
          open = false;
          continue;
        }
        if (mask[i] === 0) {
          if (!open) runs++;
          open = bitsAt[i] === runBits;
          if (count) {
            if (prev >= 0) {
              spread += gapDoublings(i - prev);
              if (i - prev === 1 && bitsAt[prev] !== runBits) adjacent++;
            }
            prev = i;
          }
        } else open = false;
        mask[i] = 1;
      }
    }
    this.emitStage();
    const b = this.stageBatch;
    b.layer = layer;
    b.fromTier = tier;
    b.fromBits = b.toBits = bits;
    b.blocks = blocks;
    b.bytesFrom = b.bytesTo = bytes;
    b.runs = runs;
    b.spread = spread;
    b.adjacent = adjacent;
    this.pending[layer].push(this.executor.stage(b));
  }

  /**
   * A stage's accounting (the decision's moves so far are handed over first, in the policy's order):
   * `bytes` of the layer's `tier` staged. True when nothing of the layer was staged before.
   */
  private stageCount(layer: number, tier: number, bytes: number): boolean {
    if (this.batchList.length !== 0) this.flush();
    this.staged[layer * this.T + tier] += bytes;
    const first = this.stagedAny[layer] === 0;
    this.stagedAny[layer] = 1;
    this.stagingBytes += bytes;
    if (this.stagingBytes > this.counts.peakStagingBytes) this.counts.peakStagingBytes = this.stagingBytes;
    return first;
  }

  /**
   * The listed prefetches of blocks[from, to), all in the layer's `tier` (`bits`: the first one's
   * precision; `bytes`: theirs in all), as stageBytes takes a list: marked staged and gathered into the
   * stage of the layer's listed prefetches from that tier (emitStage), in that order. (The byte counts
   * are whole numbers: one sum gives what a sum per block gives, the peak included.)
   */
  private stageListed(layer: number, tier: number, bits: number, bytes: number, blocks: ArrayLike<number>, from: number, to: number): void {
    this.stageCount(layer, tier, bytes);
    if (!this.timed) return;
    const runBits = this.cache.runBits;
    const base = layer * this.M;
    const list = this.stagedList[layer];
    const mask = this.stagedMask;
    for (let j = from; j < to; j++) {
      const b = blocks[j];
      mask[base + b] = 1;
      list.push(b);
    }
    // listed prefetches of one layer and tier in a row are one stage (emitStage)
    if (this.runLayer !== layer || this.runTier !== tier) {
      this.emitStage();
      this.runLayer = layer;
      this.runTier = tier;
      this.runFirstBits = bits;
    }
    const bitsAt = this.cache.bits;
    const run = this.runBlocks;
    for (let j = from; j < to; j++) {
      const b = blocks[j];
      run.push(b);
      if (!(this.runLastFull && b === this.runLast + 1)) {
        this.runRuns++;
        if (this.countSpread && this.runLast >= 0 && b === this.runLast + 1) this.runAdjacent++;
      }
      this.runLast = b;
      this.runLastFull = bitsAt[base + b] === runBits;
    }
    this.runBytes += bytes;
  }

  /**
   * The prefetches of listed blocks gathered since the last call to the executor, as one stage: the
   * HIL executor copies a layer's listed prefetches from one tier, issued one after another, into one
   * staging extent, block after block in the order listed, so a block continues the previous copy
   * when it is the next block number and the previous one is at KVCache.runBits (a 16-bit block that
   * fills its host slot). Handed over before anything else reaches the executor (moves, a layer's
   * work, another stage, the step's end).
   */
  private emitStage(): void {
    if (this.runLayer < 0) return;
    const b = this.stageBatch;
    b.layer = this.runLayer;
    b.fromTier = this.runTier;
    b.fromBits = b.toBits = this.runFirstBits;
    b.blocks = this.runBlocks;
    b.bytesFrom = b.bytesTo = this.runBytes;
    b.runs = this.runRuns;
    b.spread = 0;
    b.adjacent = this.runAdjacent;
    this.pending[b.layer].push(this.executor.stage(b));
    // (emptied by pops, its room kept)
    const list = this.runBlocks;
    while (list.length !== 0) list.pop();
    this.runLayer = this.runTier = this.runLast = -1;
    this.runBytes = this.runRuns = this.runAdjacent = 0;
    this.runLastFull = false;
  }

  /** whether every tier below HBM that holds blocks of the layer was bulk-staged this step (stagedSince) */
  private stagedBelow(l: number): boolean {
    for (let t = 1; t < this.T; t++) if (this.cache.tierCount[l * this.T + t] > 0 && !(this.stagedSince[l * this.T + t] > 0)) return false;
    return true;
  }

  /** Marks in stagedMask the blocks of a layer staged by stagedSince, and clears it. */
  private markStaged(layer: number): void {
    const since = this.stagedSince;
    const row = layer * this.T;
    let any = false;
    for (let t = 0; t < this.T; t++) if (since[row + t] > 0) any = true;
    if (!any) return;
    const tiers = this.cache.tier;
    const entered = this.enteredAt;
    const mask = this.stagedMask;
    for (let i = layer * this.M, end = i + this.cache.created[layer]; i < end; i++) {
      const t = tiers[i];
      if (t >= 0 && entered[i] < since[row + t]) mask[i] = 1;
    }
    for (let t = 0; t < this.T; t++) since[row + t] = 0;
  }

  private clearStaging(layer: number): void {
    if (!this.stagedAny[layer]) return;
    this.stagedAny[layer] = 0;
    const list = this.stagedList[layer];
    if (this.bulkStaged[layer] === 0) {
      // without a bulk stage the layer's marks are its listed prefetches' (the other marks come
      // with a bulk stage): those are cleared, not the whole row
      const mask = this.stagedMask;
      const base = layer * this.M;
      for (let i = 0; i < list.length; i++) mask[base + list[i]] = 0;
    } else this.stagedMask.fill(0, layer * this.M, (layer + 1) * this.M);
    this.bulkStaged[layer] = 0;
    // (the staged copies' tiers and bits kept for moved blocks are let go with them)
    this.stageEpoch[layer]++;
    // (emptied by pops, as the layer's waits are)
    while (list.length !== 0) list.pop();
    for (let t = 0; t < this.T; t++) {
      this.stagingBytes -= this.staged[layer * this.T + t];
      this.staged[layer * this.T + t] = 0;
      this.stagedSince[layer * this.T + t] = 0;
    }
  }

  private flush(): void {
    if (this.batchList.length === 0) return;
    // (the moves were decided after the prefetches gathered so far)
    this.emitStage();
    const list = this.batchList;
    for (let i = 0; i < list.length; i++) {
      const b = list[i];
      b.bytesFrom = bytesOfBatch(b.blocks.length, this.bytesByBits[b.fromBits]);
      b.bytesTo = bytesOfBatch(b.blocks.length, this.bytesByBits[b.toBits]);
    }
    if (this.slotsPlaced) this.slotFlush();
    for (let i = 0; i < list.length; i++) {
      const b = list[i];
      if (!this.slotsPlaced || (b.fromTier !== 0 && b.toTier !== 0)) b.runs = this.batchRuns(b);
      const h = this.executor.move(b);
      // a block promoted into HBM must arrive before its layer's attention
      if (b.toTier === 0) this.pending[b.layer].push(h);
    }
    this.clearBatches();
  }

  private clearBatches(): void {
    // (the batches go back to the pool, their lists emptied by pops: their room kept)
    const pool = this.batchPool;
    const batches = this.batchList;
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i];
      const list = b.blocks;
      while (list.length !== 0) list.pop();
      pool.push(b);
    }
    // (emptied by pops, their room kept)
    const keys = this.batchKeys;
    while (batches.length !== 0) {
      batches.pop();
      keys.pop();
    }
    this.lastKey = NO_KEY;
    this.lastBatch = undefined;
  }

  /**
   * Copies (file requests) the HIL issues for a batch: one per block where HBM is an end (slab slots
   * of consecutive blocks are not adjacent in general); between host tiers, runs of consecutive
   * block numbers at 16 bits (same slot layout in every host tier).
   */
  private batchRuns(b: MoveBatch): number {
    if (b.fromTier === 0 || b.toTier === 0 || b.fromBits !== this.cache.runBits || b.blocks.length < 2) return b.blocks.length;
    const sorted = [...b.blocks].sort((x, y) => x - y);
    let runs = 1;
    for (let i = 1; i < sorted.length; i++) if (sorted[i] !== sorted[i - 1] + 1) runs++;
    return runs;
  }

  /** the HBM blocks when decoding starts get their slots, as the HIL executor's initial placement gives them */
  private placeSlots(): void {
    const c = this.cache;
    this.hbmSlots!.placeInitial(c.created, (l, b) => c.tierOf(l, b), (l, b) => c.bytesOf(c.bitsOf(l, b)));
    this.droppedSince = Array.from({ length: this.L }, () => []);
    this.createdSince = Array.from({ length: this.L }, () => []);
    this.flushMark = new Int32Array(this.L * this.M);
    this.slotsPlaced = true;
  }

  /**
   * The runs of the flush's moves with HBM at one end, on the slots, applied in the order the HIL
   * executor applies them: a block moved once in the flush in its batch's place; where one moved more
   * than once (the batches group a decision's moves by kind), in rounds as plan-recorder.ts orders
   * them (round k: each block's k-th move in the order blockPath finds, batch by batch).
   */
  private slotFlush(): void {
    if (!this.flushMulti) {
      const list = this.batchList;
      for (let i = 0; i < list.length; i++) {
        const b = list[i];
        if (b.fromTier === 0 || b.toTier === 0) b.runs = this.slotRuns(b, b.blocks);
      }
    } else {
      const batches = [...this.batchList];
      for (const b of batches) if (b.fromTier === 0 || b.toTier === 0) b.runs = 0;
      const start = (i: number): [number, number] => {
        const code = this.flushMark[i] - this.flushBase - FLUSH_START_OFFSET;
        const t = Math.floor(code / 32);
        return [t, code - t * 32];
      };
      for (const { k, blocks } of moveRounds(batches, this.M, start, (_i, ks) => ks)) {
        const m = batches[k];
        if (m.fromTier === 0 || m.toTier === 0) m.runs += this.slotRuns(m, blocks);
      }
    }
    this.flushBase += FLUSH_STRIDE;
    if (this.flushBase > this.flushBaseMax) {
      // every mark is of an earlier flush: they start again from 0
      this.flushMark.fill(0);
      this.flushBase = FLUSH_STRIDE;
    }
    this.flushMulti = false;
  }

  /** copies of a move with HBM at one end for `blocks`, counted on the slots (hbm-slots.ts); the slots follow the move */
  private slotRuns(b: MoveBatch, blocks: number[]): number {
    const slots = this.hbmSlots!;
    const l = b.layer;
    if (b.reason === 'spill') return blocks.length; // from the fresh KV, not from a slot
    if (b.fromTier === 0 && b.toTier === 0) {
      slots.requantize(l, blocks, this.cache.bytesOf(b.toBits));
      return blocks.length;
    }
    const bytes = this.cache.bytesOf(b.toBits);
    if (b.fromBits !== b.toBits) {
      // per block a conversion and a copy, one slot each
      if (b.toTier === 0) slots.promote(l, blocks, bytes, -1);
      else for (const x of blocks) slots.release(l, x);
      return blocks.length;
    }
    const bits = this.cache.runBits === 16 ? b.toBits : -1; // a 16-bit block fills its host slot
    return b.toTier === 0 ? slots.promote(l, blocks, bytes, bits) : slots.demote(l, blocks, bytes, bits);
  }

  /** at a layer's attention: the slots of its dropped blocks freed, its new HBM blocks placed */
  private layerSlots(l: number): void {
    const dropped = this.droppedSince[l];
    const created = this.createdSince[l];
    if (dropped.length === 0 && created.length === 0) return;
    const c = this.cache;
    let k = 0;
    for (const b of created) if (c.tierOf(l, b) === 0) created[k++] = b;
    created.length = k;
    this.hbmSlots!.layer(l, dropped, created, c.bytesOf(16));
    this.droppedSince[l] = [];
    this.createdSince[l] = [];
  }

  /**
   * The spread of the layer's fetches (LayerWork.fetchSpread): per source tier, the doublings of the
   * host-slot distances between the fetched blocks in block order, as the HIL copies an attention's
   * fetches (its attended blocks in block order). The layer's work lists the blocks it reads on demand
   * (fetchedBlocks), in block order or, from a list of the policy's, in the list's order.
   */
  private fetchSpread(l: number, w: LayerWork): void {
    const sp = w.fetchSpread!;
    const adj = w.fetchAdjacent!;
    for (let t = 0; t < this.T; t++) sp[t] = adj[t] = 0;
    const k = this.nFetched;
    this.nFetched = 0;
    if (k < 2) return;
    const list = this.fetchedBlocks;
    let sorted = true;
    for (let j = 1; j < k && sorted; j++) if (list[j] < list[j - 1]) sorted = false;
    if (!sorted) list.subarray(0, k).sort();
    const prev = this.spreadPrev;
    prev.fill(-1);
    const tiers = this.cache.tier;
    const bits = this.cache.bits;
    const runBits = this.cache.runBits;
    const base = l * this.M;
    for (let j = 0; j < k; j++) {
      const b = list[j];
      const t = tiers[base + b];
      if (prev[t] >= 0) {
        sp[t] += gapDoublings(b - prev[t]);
        if (b - prev[t] === 1 && bits[base + prev[t]] !== runBits) adj[t]++;
      }
      prev[t] = b;
    }
  }

  /** The layer's work when it skips nothing: every live block is attended (`mask`, the layer's view of the live mask). */
  private layerWork(s: TraceStep, l: number, n: number, mask: Uint8Array): LayerWork {
    const runBits = this.cache.runBits;
    const c = this.cache;
    const base = l * this.M;
    const tiers = c.tier;
    const bitsAt = c.bits;
    const bytesOf = this.bytesByBits;
    const w = this.work;
    const fetchBytes = w.fetchBytes;
    const fetchRuns = w.fetchRuns;
    fetchBytes[0] = fetchRuns[0] = 0;
    let stagedBytes = 0;
    const staged = this.stagedMask;
    const entered = this.enteredAt;
    const since = this.stagedSince;
    const row = l * this.T;
    let offloaded = false;
    for (let t = 1; t < this.T; t++) {
      fetchBytes[t] = fetchRuns[t] = 0;
      if (c.tierCount[l * this.T + t] > 0) offloaded = true;
    }
    const nTouched = this.touchedN[l];
    if (this.fastPaths && offloaded && c.created[l] === n && this.wholeBytes && this.stagedBelow(l)) {
      // every block below HBM is attended and every lower tier holding blocks was bulk-staged: the
      // blocks read on demand are among those moved or created since (touched); the rest are staged
      const touched = this.touched[l].subarray(0, nTouched).sort();
      let below = 0;
      for (let t = 1; t < this.T; t++) below += c.bytesIn(l, t);
      let fetched = 0;
      let prev = -2;
      let prevOpen = -1;
      for (let k = 0; k < nTouched; k++) {
        const b = touched[k];
        if (b === prev || b >= n) continue;
        const i = base + b;
        const t = tiers[i];
        const fetchedHere = t > 0 && staged[i] === 0 && !(entered[i] < since[row + t]);
        if (fetchedHere) {
          const bytes = bytesOf[bitsAt[i]];
          fetchBytes[t] += bytes;
          fetched += bytes;
          if (this.countSpread) this.fetchedBlocks[this.nFetched++] = b;
          if (!(prev === b - 1 && prevOpen === t)) fetchRuns[t]++;
        }
        prevOpen = fetchedHere && bitsAt[i] === runBits ? t : -1;
        prev = b;
      }
      stagedBytes = below - fetched;
    } else if (this.fastPaths && offloaded && c.created[l] === n && this.wholeBytes && this.bulkStaged[l] === 0 && this.timed && !this.countSpread) {
      // every live block attended and only blocks staged one by one (stagedList): per tier, the live
      // blocks' bytes and the cache's runs (RUNS) less the staged blocks' share: a staged block no
      // longer starts a run, and at 16 bits the fetched block after it in its tier starts one. The same
      // counts and (integer) sums as the loop below, in O(staged blocks)
      const list = this.stagedList[l];
      sortAscending(list);
      const stagedIn = this.tierScratch;
      const runDelta = this.runScratch;
      // (zeroed by a loop over the few tiers: a fill() call costs more here)
      for (let t = 0; t < stagedIn.length; t++) stagedIn[t] = 0;
      for (let t = 0; t < runDelta.length; t++) runDelta[t] = 0;
      let prev = -1;
      for (let k = 0; k < list.length; k++) {
        const b = list[k];
        if (b === prev) continue;
        prev = b;
        const i = base + b;
        const t = tiers[i];
        if (t <= 0 || staged[i] !== 1) continue;
        const bytes = bytesOf[bitsAt[i]];
        stagedBytes += bytes;
        stagedIn[t] += bytes;
        if (!(b > 0 && tiers[i - 1] === t && bitsAt[i - 1] === runBits)) runDelta[t]--;
        if (bitsAt[i] === runBits && b + 1 < n && tiers[i + 1] === t && staged[i + 1] === 0) runDelta[t]++;
      }
      for (let t = 1; t < this.T; t++) {
        fetchBytes[t] = c.bytesIn(l, t) - stagedIn[t];
        fetchRuns[t] = c.runsIn(l, t) + runDelta[t];
      }
    } else if (offloaded) {
      // per attended block below HBM: read from its staged copy, or fetched on demand (as the HIL
      // executor lowers it: a block demoted after its layer was staged has no staged copy, whatever
      // bytes the layer's promotions freed)
      // and, per tier, the runs of its fetched blocks (RUNS below): a fetched block continues the open
      // run when the block before it was fetched from the same tier at 16 bits
      let openTier = -1;
      const count = this.countSpread;
      for (let b = 0; b < n; b++) {
        const i = base + b;
        const t = tiers[i];
        if (mask[b] === 0 || t <= 0) {
          openTier = -1;
          continue;
        }
        const bits = bitsAt[i];
        const bytes = bytesOf[bits];
        if (staged[i] === 1 || entered[i] < since[row + t]) {
          stagedBytes += bytes;
          openTier = -1;
          continue;
        }
        fetchBytes[t] += bytes;
        if (openTier !== t) fetchRuns[t]++;
        openTier = bits === runBits ? t : -1;
        if (count) this.fetchedBlocks[this.nFetched++] = b;
      }
    }
    this.touchedN[l] = 0;
    this.keptValid[l] = 0;
    this.attendedKept = false;
    const live = c.live(l);
    const lastTokens = s.contextTokens - (n - 1) * this.B;
    w.step = s.step;
    w.layer = l;
    w.tokens = live * this.B - (mask[n - 1] ? this.B - lastTokens : 0);
    w.residentBytes = c.bytesIn(l, 0);
    w.quantizedBytes = c.quantizedBytesIn(l, 0);
    w.stagedBytes = stagedBytes;
    w.nBlocks = n;
    w.attendedMask = mask;
    w.attendedCount = live;
    w.kernel = this.kernelOf(l, false);
    w.mixedShare = w.kernel === 'mixed' && this.mixedShare ? this.cache.mixedWindowShare(l) : 0;
    return w;
  }

  /**
   * The layer's work when the decision skipped blocks (skipMark): one pass over the layer's blocks
   * writes `attended` (live and not skipped), clears skipMark, counts the skipped blocks by precision
   * (and their HBM bytes), and reads each attended block below HBM from its staged copy or on demand,
   * as layerWork does.
   */
  private layerWorkSkipping(s: TraceStep, l: number, n: number): LayerWork {
    const runBits = this.cache.runBits;
    const c = this.cache;
    const base = l * this.M;
    const tiers = c.tier;
    const bitsAt = c.bits;
    const bytesOf = this.bytesByBits;
    const slotOf = this.bitsSlot;
    const skippedBits = this.skippedBits;
    skippedBits.fill(0);
    let skippedResident = 0;
    let skippedQuant = 0;
    let skippedCount = 0;
    const w = this.work;
    const fetchBytes = w.fetchBytes;
    const fetchRuns = w.fetchRuns;
    for (let t = 0; t < this.T; t++) fetchBytes[t] = fetchRuns[t] = 0;
    let stagedBytes = 0;
    const staged = this.stagedMask;
    const entered = this.enteredAt;
    const since = this.stagedSince;
    const row = l * this.T;
    const mark = this.skipMark;
    const att = this.attended;
    let openTier = -1;
    const count = this.countSpread;
    // branch-free where the pattern is irregular (skips): x >>> 31 is 1 for a negative x, else 0
    for (let b = 0; b < n; b++) {
      const i = base + b;
      const t = tiers[i];
      const bits = bitsAt[i];
      const bytes = bytesOf[bits];
      const live = (t >>> 31) ^ 1;
      // skipped: live and marked (a block skipped and then evicted is not skipped); attended: live, not marked
      const skip = live & mark[b];
      const a = live ^ skip;
      mark[b] = 0;
      att[b] = a;
      skippedCount += skip;
      if (bits !== 16) skippedBits[slotOf[bits]] += skip;
      // skipped in HBM (t = 0): its bytes, and again when quantized (adding 0 leaves a sum exact)
      const inHbm = skip & ((t - 1) >>> 31);
      skippedResident += inHbm * bytes;
      skippedQuant += (inHbm & ((bits - 16) >>> 31)) * bytes;
      if ((a & (-t >>> 31)) === 0) {
        openTier = -1;
        continue;
      }
      // attended below HBM: from its staged copy, or fetched on demand (see layerWork)
      if (staged[i] === 1 || entered[i] < since[row + t]) {
        stagedBytes += bytes;
        openTier = -1;
        continue;
      }
      fetchBytes[t] += bytes;
      if (openTier !== t) fetchRuns[t]++;
      openTier = bits === runBits ? t : -1;
      if (count) this.fetchedBlocks[this.nFetched++] = b;
    }
    // (16-bit blocks were counted in skippedCount only)
    let others = 0;
    for (let k = 1; k < BITS.length; k++) others += skippedBits[k];
    skippedBits[0] = skippedCount - others;
    this.anySkip = false;
    this.keptValid[l] = 0;
    this.attendedKept = false;
    this.touchedN[l] = 0;
    if (this.attendedView.length !== n) this.attendedView = att.subarray(0, n);
    const live = c.live(l) - skippedCount;
    const lastTokens = s.contextTokens - (n - 1) * this.B;
    w.step = s.step;
    w.layer = l;
    w.tokens = live * this.B - (att[n - 1] ? this.B - lastTokens : 0);
    w.residentBytes = c.bytesIn(l, 0) - skippedResident;
    w.quantizedBytes = c.quantizedBytesIn(l, 0) - skippedQuant;
    w.stagedBytes = stagedBytes;
    w.nBlocks = n;
    w.attendedMask = this.attendedView;
    w.attendedCount = live;
    w.kernel = this.kernelOf(l, skippedCount !== 0);
    w.mixedShare = w.kernel === 'mixed' && this.mixedShare ? this.cache.mixedWindowShare(l) : 0;
    return w;
  }

  /**
   * The layer's work when its skips are a skipExceptListed call and nothing in the layer changed
   * since as listHolds allows (same results as layerWorkSkipping over the same skips): `attended` is the layer's HBM
   * mark (scope 'offloaded') or nothing (scope 'all') plus the listed blocks; the skipped blocks are
   * counted from the cache's counters less the listed ones; the listed blocks below HBM, in block
   * order, are read from their staged copies or on demand.
   */
  private layerWorkListed(s: TraceStep, l: number, n: number): LayerWork {
    const runBits = this.cache.runBits;
    const c = this.cache;
    const base = l * this.M;
    const T = this.T;
    const K = BITS.length;
    const tiers = c.tier;
    const bitsAt = c.bits;
    const bytesOf = this.bytesByBits;
    const slotOf = this.bitsSlot;
    const att = this.attended;
    const all = this.listMinTier === 0;
    if (all) att.fill(0, 0, n);
    else att.set(c.hbmMask.subarray(base, base + n));
    // skipped = in scope less listed, per precision
    const skippedBits = this.skippedBits;
    skippedBits.fill(0);
    for (let t = this.listMinTier; t < T; t++) for (let k = 0; k < K; k++) skippedBits[k] += c.tierBitsCount[(l * T + t) * K + k];
    let skippedCount = 0;
    for (let k = 0; k < K; k++) skippedCount += skippedBits[k];
    let listedResident = 0;
    let listedQuant = 0;
    const w = this.work;
    const fetchBytes = w.fetchBytes;
    const fetchRuns = w.fetchRuns;
    for (let t = 0; t < T; t++) fetchBytes[t] = fetchRuns[t] = 0;
    let stagedBytes = 0;
    const staged = this.stagedMask;
    const entered = this.enteredAt;
    const since = this.stagedSince;
    const row = l * T;
    const listed = this.listed;
    const nListed = this.nListed;
    const mark = this.listedMark;
    const no = this.listNo;
    // the listed blocks below 16 bits (the 16-bit ones are counted at the end), and those below HBM
    let quantized = 0;
    let below = 0;
    // in list order (sums of whole numbers of bytes: exact in any order); a fetched block continues
    // the run of the block before it when that one was fetched too (listed: attended), from the same
    // tier at 16 bits (RUNS)
    for (let k = 0; k < nListed; k++) {
      const b = listed[k];
      att[b] = 1;
      const i = base + b;
      const t = tiers[i];
      const bits = bitsAt[i];
      const bytes = bytesOf[bits];
      if (bits !== 16) {
        skippedBits[slotOf[bits]]--;
        quantized++;
      }
      if (t === 0) {
        listedResident += bytes;
        if (bits < 16) listedQuant += bytes;
        continue;
      }
      below++;
      if (staged[i] === 1 || entered[i] < since[row + t]) {
        stagedBytes += bytes;
        continue;
      }
      fetchBytes[t] += bytes;
      const continues = b > 0 && mark[b - 1] === no && tiers[i - 1] === t && bitsAt[i - 1] === runBits && !(staged[i - 1] === 1 || entered[i - 1] < since[row + t]);
      if (!continues) fetchRuns[t]++;
      if (this.countSpread) this.fetchedBlocks[this.nFetched++] = b;
    }
    skippedBits[0] -= nListed - quantized;
    skippedCount -= nListed;
    // scope 'all': the list is kept for the layer's next decision (skipExceptListedDelta)
    if (all) this.keepListed(l, listedResident, listedQuant, below);
    else this.keptValid[l] = 0;
    this.attendedKept = false;
    this.listNo++;
    this.listPending = false;
    this.nListed = 0;
    this.touchedN[l] = 0;
    if (this.attendedView.length !== n) this.attendedView = att.subarray(0, n);
    const live = c.live(l) - skippedCount;
    const lastTokens = s.contextTokens - (n - 1) * this.B;
    w.step = s.step;
    w.layer = l;
    w.tokens = live * this.B - (att[n - 1] ? this.B - lastTokens : 0);
    // scope 'all' skips the unlisted HBM blocks (whole numbers of bytes: exact in any order)
    w.residentBytes = all ? listedResident : c.bytesIn(l, 0);
    w.quantizedBytes = all ? listedQuant : c.quantizedBytesIn(l, 0);
    w.stagedBytes = stagedBytes;
    w.nBlocks = n;
    w.attendedMask = this.attendedView;
    w.attendedCount = live;
    w.kernel = this.kernelOf(l, skippedCount !== 0);
    w.mixedShare = w.kernel === 'mixed' && this.mixedShare ? this.cache.mixedWindowShare(l) : 0;
    return w;
  }

  /**
   * The layer's work when its skips are a skipExceptListedDelta call held as keptOf (same results as
   * layerWorkListed over the same list): the skipped blocks and the attended HBM bytes from the kept
   * counts; the kept blocks read only when some are below HBM.
   */
  private layerWorkKept(s: TraceStep, l: number, n: number): LayerWork {
    const runBits = this.cache.runBits;
    const c = this.cache;
    const base = l * this.M;
    const T = this.T;
    const K = BITS.length;
    const tiers = c.tier;
    const bitsAt = c.bits;
    const bytesOf = this.bytesByBits;
    const kept = this.keptMask;
    // skipped = live less kept, per precision
    const skippedBits = this.skippedBits;
    let skippedCount = 0;
    for (let k = 0; k < K; k++) {
      let x = -this.keptBits[l * K + k];
      for (let t = 0; t < T; t++) x += c.tierBitsCount[(l * T + t) * K + k];
      skippedBits[k] = x;
      skippedCount += x;
    }
    const w = this.work;
    const fetchBytes = w.fetchBytes;
    const fetchRuns = w.fetchRuns;
    for (let t = 0; t < T; t++) fetchBytes[t] = fetchRuns[t] = 0;
    let stagedBytes = 0;
    if (this.keptBelow[l] > 0) {
      // the kept blocks below HBM, as layerWorkListed reads its listed ones
      const staged = this.stagedMask;
      const entered = this.enteredAt;
      const since = this.stagedSince;
      const row = l * T;
      const list = this.keptOf[l];
      for (let k = 0, m = this.keptN[l]; k < m; k++) {
        const b = list[k];
        const i = base + b;
        const t = tiers[i];
        if (t <= 0) continue;
        const bytes = bytesOf[bitsAt[i]];
        if (staged[i] === 1 || entered[i] < since[row + t]) {
          stagedBytes += bytes;
          continue;
        }
        fetchBytes[t] += bytes;
        const continues = b > 0 && kept[i - 1] === 1 && tiers[i - 1] === t && bitsAt[i - 1] === runBits && !(staged[i - 1] === 1 || entered[i - 1] < since[row + t]);
        if (!continues) fetchRuns[t]++;
        if (this.countSpread) this.fetchedBlocks[this.nFetched++] = b;
      }
    }
    this.listNo++;
    this.listPending = false;
    this.listFromKept = false;
    this.nListed = 0;
    this.attendedKept = true;
    this.touchedN[l] = 0;
    if (this.keptViewN[l] !== n) {
      this.keptViews[l] = kept.subarray(base, base + n);
      this.keptViewN[l] = n;
    }
    const live = c.live(l) - skippedCount;
    const lastTokens = s.contextTokens - (n - 1) * this.B;
    w.step = s.step;
    w.layer = l;
    w.tokens = live * this.B - (kept[base + n - 1] ? this.B - lastTokens : 0);
    w.residentBytes = this.keptResident[l];
    w.quantizedBytes = this.keptQuant[l];
    w.stagedBytes = stagedBytes;
    w.nBlocks = n;
    w.attendedMask = this.keptViews[l];
    w.attendedCount = live;
    w.kernel = this.kernelOf(l, skippedCount !== 0);
    w.mixedShare = w.kernel === 'mixed' && this.mixedShare ? this.cache.mixedWindowShare(l) : 0;
    return w;
  }

  /** The kept state's arrays, made on first use (only policies that keep lists pay for them). */
  private makeKept(): void {
    if (this.keptOf.length !== 0) return;
    const { L, M } = this;
    const K = BITS.length;
    this.keptOf = Array.from({ length: L }, () => new Int32Array(M));
    this.keptN = new Int32Array(L);
    this.keptMask = new Uint8Array(L * M);
    this.keptPos = new Int32Array(L * M);
    this.keptBits = new Int32Array(L * K);
    this.keptResident = new Float64Array(L);
    this.keptQuant = new Float64Array(L);
    this.keptBelow = new Int32Array(L);
    this.keptViews = Array.from({ length: L }, () => this.keptMask.subarray(0, 0));
    this.keptViewN = new Int32Array(L).fill(-1);
  }

  /**
   * After layerWorkListed of scope 'all': its listed blocks become the layer's kept list, with the
   * counts that pass made (HBM bytes, quantized HBM bytes, blocks below HBM; per precision, live less
   * skipped).
   */
  private keepListed(l: number, resident: number, quant: number, below: number): void {
    this.makeKept();
    const base = l * this.M;
    const mark = this.keptMask;
    const list = this.keptOf[l];
    for (let k = 0, m = this.keptN[l]; k < m; k++) mark[base + list[k]] = 0;
    const listed = this.listed;
    const pos = this.keptPos;
    const n = this.nListed;
    for (let k = 0; k < n; k++) {
      const b = listed[k];
      list[k] = b;
      mark[base + b] = 1;
      pos[base + b] = k;
    }
    this.keptN[l] = n;
    const c = this.cache;
    const T = this.T;
    const K = BITS.length;
    for (let k = 0; k < K; k++) {
      let x = -this.skippedBits[k];
      for (let t = 0; t < T; t++) x += c.tierBitsCount[(l * T + t) * K + k];
      this.keptBits[l * K + k] = x;
    }
    this.keptResident[l] = resident;
    this.keptQuant[l] = quant;
    this.keptBelow[l] = below;
    this.keptValid[l] = 1;
  }

  /** block b of layer l joins its kept list (not in it) */
  private keptAdd(l: number, b: number): void {
    const i = l * this.M + b;
    const n = this.keptN[l]++;
    this.keptOf[l][n] = b;
    this.keptMask[i] = 1;
    this.keptPos[i] = n;
    this.keptCount(l, i, 1);
  }

  /** block b of layer l leaves its kept list (in it); the last one takes its place */
  private keptRemove(l: number, b: number): void {
    const i = l * this.M + b;
    this.keptCount(l, i, -1);
    this.keptMask[i] = 0;
    const list = this.keptOf[l];
    const at = this.keptPos[i];
    const moved = list[--this.keptN[l]];
    list[at] = moved;
    this.keptPos[l * this.M + moved] = at;
  }

  /**
   * A kept block of layer l moved from (t0, bits0) to (t1, bits1): keptCount(-1) at the first place and
   * keptCount(+1) at the second, the same sums in the same order (the per-precision count left as it
   * is where the precision's slot is the same)
   */
  private keptMove(l: number, t0: number, bits0: number, t1: number, bits1: number): void {
    const s0 = this.bitsSlot[bits0];
    const s1 = this.bitsSlot[bits1];
    if (s0 !== s1) {
      this.keptBits[l * BITS.length + s0]--;
      this.keptBits[l * BITS.length + s1]++;
    }
    if (t0 === 0) {
      const bytes = this.bytesByBits[bits0];
      this.keptResident[l] += -bytes;
      if (bits0 < 16) this.keptQuant[l] += -bytes;
    } else if (t0 > 0) this.keptBelow[l]--;
    if (t1 === 0) {
      const bytes = this.bytesByBits[bits1];
      this.keptResident[l] += bytes;
      if (bits1 < 16) this.keptQuant[l] += bytes;
    } else if (t1 > 0) this.keptBelow[l]++;
  }

  /** adds `sign` (+1 or -1) times kept block i (= l * M + b) at its tier and bits now to the layer's kept counts */
  private keptCount(l: number, i: number, sign: number): void {
    const t = this.cache.tier[i];
    const bits = this.cache.bits[i];
    this.keptBits[l * BITS.length + this.bitsSlot[bits]] += sign;
    if (t === 0) {
      const bytes = this.bytesByBits[bits];
      this.keptResident[l] += sign * bytes;
      if (bits < 16) this.keptQuant[l] += sign * bytes;
    } else if (t > 0) this.keptBelow[l] += sign;
  }

  /**
   * Whether a pending skipExceptListed call still gives the layer's skips as its list after the layer
   * changed. A block created since is attended (not in scope at the call): below the scope's lowest
   * tier it is attended as resident, else it joins the list. Scope 'all': when blocks only moved or
   * were created since (moves keep the live set the skips came from). Scope 'offloaded': when blocks
   * were only created (a move changes which blocks the tiers put in scope). False after a drop.
   */
  private listHolds(l: number): boolean {
    const created = this.cache.created[l];
    if (this.layerDrops[l] !== this.listDrops) return false;
    const minTier = this.listMinTier;
    if (minTier !== 0 && this.layerChanges[l] - this.listChanges !== created - this.listCreated) return false;
    const tiers = this.cache.tier;
    const base = l * this.M;
    for (let b = this.listCreated; b < created; b++) {
      if (tiers[base + b] < minTier) continue;
      if (this.listFromKept) {
        if (this.keptMask[base + b] !== 1) this.keptAdd(l, b);
        continue;
      }
      this.listedMark[b] = this.listNo;
      this.listed[this.nListed++] = b;
    }
    this.listCreated = created;
    return true;
  }

  /** A pending skipExceptListed call becomes skipMark: skip(b) for each block in scope at the call and not listed. */
  private listToMarks(): void {
    const tiers = this.listTiers;
    const created = this.listCreated;
    const base = this.curLayer * this.M;
    tiers.set(this.cache.tier.subarray(base, base + created));
    // backwards: a block changed more than once gets its tier at the call last
    for (let k = this.nUndo - 1; k >= 0; k--) if (this.undoBlock[k] < created) tiers[this.undoBlock[k]] = this.undoTier[k];
    const mark = this.skipMark;
    const minTier = this.listMinTier;
    let any = false;
    if (this.listFromKept) {
      const kept = this.keptMask;
      for (let b = 0; b < this.listCreated; b++) {
        if (tiers[b] >= minTier && kept[base + b] !== 1) {
          mark[b] = 1;
          any = true;
        }
      }
    } else {
      const listedMark = this.listedMark;
      const no = this.listNo;
      for (let b = 0; b < this.listCreated; b++) {
        if (tiers[b] >= minTier && listedMark[b] !== no) {
          mark[b] = 1;
          any = true;
        }
      }
    }
    if (any) this.anySkip = true;
    this.dropList();
  }

  /** Forget a pending skipExceptListed call. */
  private dropList(): void {
    this.listNo++;
    this.nListed = 0;
    this.listPending = false;
    if (this.listFromKept) {
      this.listFromKept = false;
      this.keptValid[this.curLayer] = 0;
    }
  }

  /** While a list is pending: block `block` of the current layer is about to change tier (the undo log keeps its tier now). */
  private logUndo(block: number): void {
    if (this.nUndo === this.undoBlock.length) {
      const b = new Int32Array(this.nUndo * 2);
      b.set(this.undoBlock);
      this.undoBlock = b;
      const t = new Int8Array(this.nUndo * 2);
      t.set(this.undoTier);
      this.undoTier = t;
    }
    this.undoBlock[this.nUndo] = block;
    this.undoTier[this.nUndo++] = this.cache.tier[this.curLayer * this.M + block];
  }

  /** Forget the current decision's skips. */
  private clearSkips(): void {
    this.skipMark.fill(0);
    this.anySkip = false;
  }

  /**
   * The attention kernel the executor dispatches for a layer: one precision over every attended block
   * (fp16, int8, int4, int2) or the per-block table kernel ('mixed') when the precisions differ; counts
   * the attended blocks per precision into attendedBits.
   */
  private kernelOf(l: number, anySkipped: boolean): AttentionKernel {
    let only = -1;
    let kinds = 0;
    const counts = this.attendedBits;
    for (let k = 0; k < BITS.length; k++) {
      const n = this.cache.countBits(l, BITS[k]) - (anySkipped ? this.skippedBits[k] : 0);
      counts[k] = n > 0 ? n : 0;
      if (n <= 0) continue;
      kinds++;
      only = k;
    }
    if (kinds > 1) return 'mixed';
    return only < 0 ? 'fp16' : (KERNEL_OF_BITS[BITS[only]] ?? 'mixed');
  }

  /** layer * M + block for a live block (the blocks checkLive passes), else -1 */
  private liveAt(layer: number, block: number): number {
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.L)) return -1;
    if (!(Number.isInteger(block) && block >= 0 && block < this.cache.created[layer])) return -1;
    const i = layer * this.M + block;
    return this.cache.tier[i] === DROPPED ? -1 : i;
  }

  private checkLive(layer: number, block: number): string | null {
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.L)) return `layer ${layer} does not exist (layers: 0..${this.L - 1})`;
    if (!(Number.isInteger(block) && block >= 0 && block < this.cache.created[layer])) {
      return `layer ${layer}: block ${block} does not exist (blocks: 0..${this.cache.created[layer] - 1})`;
    }
    if (this.cache.tierOf(layer, block) === DROPPED) return `layer ${layer}: block ${block} was evicted`;
    return null;
  }

  private count(kind: string): void {
    // runs of the same action (52k prefill evictions in a row, say) are summed in a plain number and
    // added to the record when another kind comes or someone reads `counters`
    const key = this.timed ? kind : kind === this.pendingBase ? this.pendingKind : prefillKey(kind);
    if (key === this.pendingKind) {
      this.pendingN++;
      return;
    }
    this.flushCount();
    this.pendingKind = key;
    this.pendingBase = this.timed ? '' : kind;
    this.pendingN = 1;
  }

  private flushCount(): void {
    if (this.pendingN === 0) return;
    const a = this.actionCounts;
    a.set(this.pendingKind, (a.get(this.pendingKind) ?? 0) + this.pendingN);
    this.pendingN = 0;
    this.pendingKind = this.pendingBase = '';
  }

  private refuse(kind: string, why: string): false {
    const key = this.timed ? kind : prefillKey(kind);
    this.counts.refused[key] = (this.counts.refused[key] ?? 0) + 1;
    this.counts.refusalExamples[key] ??= `step ${this.curStep}: ${why}`;
    return false;
  }
}

/**
 * A move batch with no blocks. Its numbers are made 0.5 first, then given their values, so that the
 * map every batch (and the stage batch) has holds doubles there from the start: a precision or a byte
 * count that arrives as a heap number would otherwise turn a small-integer field double in the first
 * replay that moves blocks, a new map that code compiled for an earlier replay's batches meets as
 * another (the values are the same numbers either way).
 */
function newBatch(layer: number, reason: TransferReason, fromTier: number, toTier: number, fromBits: number, toBits: number): MoveBatch {
  const b: MoveBatch = { layer, reason, fromTier, toTier, fromBits: 0.5, toBits: 0.5, blocks: [], bytesFrom: 0.5, bytesTo: 0.5, runs: 0, spread: 0.5 };
  b.fromBits = fromBits;
  b.toBits = toBits;
  b.bytesFrom = b.bytesTo = b.spread = 0;
  return b;
}

/**
 * A driver's counters, empty, with peakStagingBytes 0 held as a double: made 0.5, then 0, so that the
 * record's map has a double there from the start (see stagingBytes), where a 0 would be a small integer
 * until the first replay that stages
 */
function newCounters(): DriverCounters {
  const c: DriverCounters = { actions: {}, refused: {}, refusalExamples: {}, peakStagingBytes: 0.5 };
  c.peakStagingBytes = 0;
  return c;
}

/** lastKey when there is no last batch: not a key (keys are whole numbers >= 0), and not a small integer (the keys outgrow those: see stagingBytes) */
const NO_KEY = -0.5;

/** an index per transfer reason (a batch's key holds it; the Record type makes the list complete) */
const REASON_INDEX: Record<TransferReason, number> = { demote: 0, promote: 1, prefetch: 2, fetch: 3, spill: 4 };
const REASON_COUNT = Object.keys(REASON_INDEX).length;
/**
 * REASON_INDEX[reason], the two reasons of most moves compared first: a keyed read of the record with
 * a reason that varies from call to call is a generic property lookup (about 4% of a quest replay)
 */
function reasonIndex(reason: TransferReason): number {
  return reason === 'demote' ? 0 : reason === 'promote' ? 1 : REASON_INDEX[reason];
}
/**
 * A flush's marks (flushMark): FLUSH_STRIDE apart, a block's tier and bits before the flush (tier * 32
 * + bits, from NONE * 32 to 99 * 32 + 16) + FLUSH_START_OFFSET in between
 */
const FLUSH_START_OFFSET = 64;
const FLUSH_STRIDE = 4096;
/** the largest flushBase (flushMark is an Int32Array) */
const FLUSH_BASE_MAX = 2 ** 30;

/**
 * bytes of `n` blocks of `bytes` each, as n additions of `bytes` from 0 would sum them: the product
 * where every partial sum is an exact integer
 */
export function bytesOfBatch(n: number, bytes: number): number {
  if (Number.isInteger(bytes) && n * bytes <= Number.MAX_SAFE_INTEGER) return n * bytes;
  let sum = 0;
  for (let j = 0; j < n; j++) sum += bytes;
  return sum;
}
/** a bulk stage's block list (none listed; never written) */
const NO_BLOCKS: number[] = [];

const prefillKeys = new Map<string, string>();
/** counter name of an action taken during prefill (cached: counted once per action) */
const ascending = (x: number, y: number): number => x - y;

/** Sorts integers ascending in place (up to 32: an insertion sort, no comparator calls and no sort buffer). */
function sortAscending(a: number[]): void {
  const n = a.length;
  if (n > 32) {
    a.sort(ascending);
    return;
  }
  for (let i = 1; i < n; i++) {
    const x = a[i];
    let j = i;
    while (j > 0 && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

function prefillKey(kind: string): string {
  let k = prefillKeys.get(kind);
  if (k === undefined) prefillKeys.set(kind, (k = `prefill_${kind}`));
  return k;
}

/**
 * Share of one row's true attention mass (one KV group of a layer: listed masses + the even
 * remainder) on the attended blocks. `mask[base + b]` is 1 where block b was attended and
 * `attendedCount` counts them: the driver passes the cache's whole live mask and the layer's offset
 * (random reads through a subarray view cost V8 about twice as much as through the array it views).
 */
export function attendedShare(la: LayerAttention, attendedCount: number, mask: Uint8Array, base = 0): number {
  const nBlocks = la.nBlocks;
  let total = la.remainder;
  let hit = 0;
  if (la.idx === null) {
    const mass = la.mass;
    for (let b = 0; b < nBlocks; b++) {
      const m = mass[b];
      total += m;
      hit += m * mask[base + b];
    }
    return total > 0 ? hit / total : 1;
  }
  let attendedListed = 0;
  const { idx, mass } = la;
  // branch-free (attended is 0/1): a skipped or dropped listed block adds exactly 0
  for (let i = 0, k = idx.length; i < k; i++) {
    const m = mass[i];
    const a = mask[base + idx[i]];
    total += m;
    hit += m * a;
    attendedListed += a;
  }
  hit += rowUniform(la) * (attendedCount - attendedListed);
  return total > 0 ? hit / total : 1;
}

/** the uniform-precision attention kernels, by bits (any other width goes through the table kernel) */
const KERNEL_OF_BITS: Record<number, AttentionKernel> = { 16: 'fp16', 8: 'int8', 4: 'int4', 2: 'int2' };
