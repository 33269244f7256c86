/**
 * SynapseVM tiering (seed system; DESIGN.md "Formulas"): three tiers of KV, forecast-driven staging.
 * - L1 = HBM, FP16: the anchors (blocks holding the first sink_tokens tokens, pinned: the anchor
 *   guard), a window of recent blocks, and the hottest blocks by saliency, up to the budget.
 * - L2 = host DRAM, INT4 (group 128, two values per byte — the run's group_size sets the scale
 *   overhead), at most l2_factor × budget blocks per layer.
 * - L3 = NVMe, INT2: everything colder.
 * Saliency is the H2O score (cumulative attention). Progressive demotion: when L1 overflows, the
 * lowest-saliency unguarded blocks go to L2; when L2 overflows, its lowest-saliency blocks go to L3.
 * Victims are the bottom-k by quickselect (linear time), not a sort; the one victim of a one-block
 * overflow (and of a promotion) comes from the layer's L1 blocks outside the window, or its L2 blocks,
 * kept in saliency order (synapse-cold-order.ts), not a scan, and so do the few victims of most L2
 * overflows (SynapsePaths.l2FromOrder). Guards: the anchors; outliers (a
 * block whose key norm exceeds mean + outlier_sigma·σ of its layer's live blocks is never quantized:
 * it moves down at FP16); hot blocks (observed mass ≥ promote_ratio × the layer's mean share within
 * the last hot_steps steps) leave L1 only when no other unguarded block can.
 *
 * Promotion back: a block below L1 whose mass at the layer's latest observation is ≥ promote_ratio ×
 * the layer's mean share (1 / nBlocks) is promoted to L1 at 16 bits (at most promote_blocks per layer
 * and step, hottest first), the coldest unguarded L1 block making room (demoted to L2).
 *
 * Forecast-driven staging (synapse-forecast.ts): when layer l decides, the previous layer's attention
 * at this step, the layer's own recent steps and their learned similarity score every block; the
 * blocks below L1 scoring ≥ heavy_ratio / nBlocks form the forecast, of which at most
 * ceil(stage_ratio × budget) are staged (`prefetch`), highest score first, while their copies fit in
 * the layer's expected compute time together with the layer's promotions and demotions
 * (synapse-copy-cost.ts: α + bytes / β per copy, from the options or the setup's hardware facts).
 * Modes: `lossless` attends every live block (what is not staged is fetched on demand before the
 * layer runs, and the step pays for it); `predictive` attends L1 and the staged blocks only (the
 * rest are skipped: recall < 1), and spends what the copy budget has left on the probe_blocks
 * offloaded blocks not attended for the longest time (those that fit), so that blocks turning hot outside the
 * forecast (a needle) are seen at all.
 *
 * Reported (report()): forecast precision and recall (synapse-forecast-audit.ts: the truth is the
 * blocks below L1 with mass ≥ heavy_ratio / nBlocks) as run totals and per-step min/median — recall
 * only when every such block was observed (lossless; in predictive mode skipped blocks are not seen,
 * auditTrueAttention() lets a measurement feed the true attention) — and the blocks staged, probed,
 * skipped, promoted back and fetched on demand per tier.
 *
 * Approximations: saliency and the forecast read the trace's head-averaged block masses (with several
 * KV groups, their mean: a block's tier and precision serve every group); the outlier guard reads the
 * block's key norm as the largest over the groups. A block promoted back at 16 bits from INT4/INT2 is
 * counted exact by the quality measures: that needs an FP16 copy kept below (as the original was
 * written), whose space the simulation does not count. The copy budget charges a storage tier's
 * copy its whole route (file request + PCIe), though the simulator runs the two legs on two streams.
 */
import { checkLowerTier } from './lower-tier.js';
import { ColdOrder, DROP, ELIGIBLE, SET_ASIDE } from './synapse-cold-order.js';
import { CopyCost } from './synapse-copy-cost.js';
import { ForecastAudit } from './synapse-forecast-audit.js';
import { HbmBlocks } from './synapse-hbm-blocks.js';
import { OutlierBound } from './synapse-outlier-bound.js';
import { SynapseForecast } from './synapse-forecast.js';
import { LISTED_FELL, SynapseScore } from './synapse-score.js';
import { forEachMass, type Actions, type Observation, type Policy, type PolicyDefinition, type PolicySetup, type PolicyView } from './policy.js';
import { selectBottomKKeyed } from './quickselect.js';

export const SYNAPSE_MODES = ['lossless', 'predictive'] as const;
export type SynapseMode = (typeof SYNAPSE_MODES)[number];

interface Options extends Record<string, unknown> {
  mode: SynapseMode;
  sink_tokens: number;
  recent_ratio: number;
  l2_tier: string;
  l2_bits: number;
  l2_factor: number;
  l3_tier: string;
  l3_bits: number;
  outlier_sigma: number;
  heavy_ratio: number;
  history_weight: number;
  sim_rate: number;
  stage_ratio: number;
  probe_blocks: number;
  promote_ratio: number;
  promote_blocks: number;
  hot_steps: number;
  link_GBps: number;
  copy_alpha_us: number;
  layer_us: number;
}

/** The policy object, with what a measurement may read or feed (never used by its decisions). */
export interface SynapsePolicy extends Policy {
  readonly audit: ForecastAudit;
  /** feed the forecast audit the true attention of layer l at `step` (mass of every block) */
  auditTrueAttention(step: number, layer: number, nBlocks: number, massOf: (b: number) => number): void;
  /** the blocks staged from the forecast at layer l's latest decision, in staging order */
  forecastOf(layer: number): number[];
}

export const synapseVm: PolicyDefinition<Options> = {
  name: 'synapsevm',
  description:
    'SynapseVM tiering: L1 HBM FP16 (pinned anchors + recent window + hottest blocks), L2 DRAM INT4 (G128), L3 NVMe INT2; progressive demotion by H2O saliency (bottom-k by quickselect); ' +
    'outliers (key norm > mean + outlier_sigma x sigma, default 3) never quantized; hot demoted blocks promoted back at FP16; per layer, the blocks forecast from the previous layer at this step and the layer\'s recent steps (mix learned online) are staged within the copy time the layer\'s compute hides; ' +
    'mode lossless attends every block (the rest fetched on demand), predictive attends L1 + staged blocks only.',
  source: 'SynapseVM (seed system, kvtier DESIGN.md): H2O scorer (Zhang et al., NeurIPS 2023) with anchor guard and outlier protection; INT4 G128 as in FlexGen/KIVI group quantization; cross-layer forecast as in InfiniGen (Lee et al., OSDI 2024)',
  options: [
    { name: 'mode', type: 'string', default: 'lossless', choices: [...SYNAPSE_MODES], description: 'lossless: every live block attended (unstaged ones fetched on demand); predictive: L1 + staged blocks only' },
    { name: 'sink_tokens', type: 'integer', default: 4, min: 0, description: 'anchor guard: the first tokens are pinned in L1, never demoted or evicted' },
    { name: 'recent_ratio', type: 'number', default: 0.5, min: 0, max: 1, description: 'share of the L1 budget for the recent window (the rest holds the hottest blocks)' },
    { name: 'l2_tier', type: 'string', default: 'dram', description: 'tier of L2' },
    { name: 'l2_bits', type: 'integer', default: 4, min: 2, max: 16, description: 'precision in L2' },
    { name: 'l2_factor', type: 'number', default: 2, min: 0, description: 'L2 holds at most this many times the L1 budget, per layer; colder blocks go to L3' },
    { name: 'l3_tier', type: 'string', default: 'nvme', description: 'tier of L3' },
    { name: 'l3_bits', type: 'integer', default: 2, min: 2, max: 16, description: 'precision in L3' },
    { name: 'outlier_sigma', type: 'number', default: 3, min: 0, description: 'blocks with key norm > mean + this many sigma are never quantized' },
    { name: 'heavy_ratio', type: 'number', default: 2, min: 0, description: 'a block is heavy (forecast, and counted as needed) at mass >= this x the layer mean share 1/nBlocks' },
    { name: 'history_weight', type: 'number', default: 1, min: 0, max: 1, description: "weight of the newest step in the same-layer average of a block's mass" },
    { name: 'sim_rate', type: 'number', default: 0.25, min: 0, max: 1, description: 'learning rate of the cross-layer and same-layer overlap averages that set the forecast mix' },
    { name: 'stage_ratio', type: 'number', default: 1, min: 0, description: 'at most ceil(this x budget) forecast blocks staged per layer and step' },
    { name: 'probe_blocks', type: 'integer', default: 2, min: 0, description: 'predictive mode: offloaded blocks unattended the longest, staged per layer and step with the copy time left' },
    { name: 'promote_ratio', type: 'number', default: 8, min: 0, description: 'a block below L1 with mass >= this x the layer mean share is promoted back at 16 bits (and is hot)' },
    { name: 'promote_blocks', type: 'integer', default: 2, min: 0, description: 'blocks promoted back per layer and step' },
    { name: 'hot_steps', type: 'integer', default: 4, min: 0, description: 'a block hot within this many steps leaves L1 only when no other unguarded block can' },
    { name: 'link_GBps', type: 'number', default: 0, min: 0, description: 'copy bandwidth into HBM for the copy budget, GB/s (0: the hardware profile\'s per tier)' },
    { name: 'copy_alpha_us', type: 'number', default: -1, min: -1, description: 'fixed cost per copy for the copy budget, us (-1: the hardware profile\'s per tier)' },
    { name: 'layer_us', type: 'number', default: 0, min: 0, description: 'expected compute time of a layer, the copy budget, us (0: from the hardware profile; unbounded without one)' },
  ],
  create(o, setup): SynapsePolicy {
    return createSynapseVm(o, setup);
  },
};

/**
 * The shortcuts SynapseVM takes where they give the same results as the plain computation (each on
 * by default; off, the plain computation, which the tests replay the shortcut against).
 */
export interface SynapsePaths {
  /**
   * a listed observation that attended every block: the H2O score, the test for a fallen score and
   * the forecast's checks of the listed blocks in one pass (SynapseScore.observeAttendedAll), and the
   * hot blocks from one read of the forecast's kept high blocks, the audit's truth from the forecast's
   * count of the observed heavy judged blocks (else from that read)
   */
  fusedObserve: boolean;
  /** the promotion back's candidates read from the forecast's kept high blocks (their masses and the tier mirror), not lastAtLeast and a lookup per block */
  promoteFromHigh: boolean;
  /**
   * an L2 overflow of a few blocks takes its victims one by one from the L2 cold order (the same set as
   * the quickselect: the least saliencies, ties to the lower id) where they all make one move batch
   * (same precisions before and after), demoted in saliency order; else (or with the order not valid)
   * the quickselect over the layer's L2 blocks, whose order then decides which batch comes first
   */
  l2FromOrder: boolean;
}

const ALL_PATHS: SynapsePaths = { fusedObserve: true, promoteFromHigh: true, l2FromOrder: true };

/** the precisions a block can be stored at (the cache's) */
const STORED_BITS = [16, 8, 4, 3, 2] as const;

/** L2 overflows of at most this many blocks take their victims from the L2 cold order (SynapsePaths.l2FromOrder) */
const L2_FROM_ORDER_MAX = 16;

/** the policy with options `o` (resolved) on `setup`; `paths` turns shortcuts off (tests) */
export function createSynapseVm(o: Options, setup: PolicySetup, paths: Partial<SynapsePaths> = {}): SynapsePolicy {
  for (const [opt, t] of [['l2_tier', o.l2_tier], ['l3_tier', o.l3_tier]] as const) {
    checkLowerTier('synapsevm', opt, t, setup.tiers);
  }
  for (const [opt, b] of [['l2_bits', o.l2_bits], ['l3_bits', o.l3_bits]] as const) {
    if (![16, 8, 4, 2].includes(b)) throw new Error(`policy synapsevm: option ${opt} must be 16, 8, 4 or 2 (got ${b})`);
  }
  return new SynapseVm(o, setup, { ...ALL_PATHS, ...paths });
}

/**
 * The options as an object of one fixed shape: the resolved options are built key by key, which
 * leaves an object of this many keys in dictionary mode (each read a hash lookup), with a map of its
 * own per replay (code compiled for one replay's options would be thrown away at the next).
 */
function ownOptions(o: Options): Options {
  return {
    mode: o.mode,
    sink_tokens: o.sink_tokens,
    recent_ratio: o.recent_ratio,
    l2_tier: o.l2_tier,
    l2_bits: o.l2_bits,
    l2_factor: o.l2_factor,
    l3_tier: o.l3_tier,
    l3_bits: o.l3_bits,
    outlier_sigma: o.outlier_sigma,
    heavy_ratio: o.heavy_ratio,
    history_weight: o.history_weight,
    sim_rate: o.sim_rate,
    stage_ratio: o.stage_ratio,
    probe_blocks: o.probe_blocks,
    promote_ratio: o.promote_ratio,
    promote_blocks: o.promote_blocks,
    hot_steps: o.hot_steps,
    link_GBps: o.link_GBps,
    copy_alpha_us: o.copy_alpha_us,
    layer_us: o.layer_us,
  };
}

/** the policy's counts (SynapseVm.stats): blocks staged, their bytes, probed, skipped, promoted back; timed decisions, and the sum of their cross-layer weights */
const STAT_STAGED = 0;
const STAT_STAGED_BYTES = 1;
const STAT_PROBED = 2;
const STAT_SKIPPED = 3;
const STAT_PROMOTED_BACK = 4;
const STAT_DECISIONS = 5;
const STAT_ALPHA_SUM = 6;
const STAT_COUNT = 7;

/** what a cold order's query asks of a block (ColdOrder.coldest's judge): the L2 victim, the L1 victim, the L1 victim among hot blocks too */
const PASS_L2 = 0;
const PASS_L1 = 1;
const PASS_L1_HOT = 2;

/**
 * The policy. Its state is fields and its helpers are methods (of one class for every replay in a
 * process: the compiled code of one replay serves the next).
 */
class SynapseVm implements SynapsePolicy {
  readonly name = 'synapsevm';
  readonly audit: ForecastAudit;
  private readonly o: Options;
  private readonly tierNames: string[];
  private readonly M: number;
  private readonly T: number;
  private readonly predictive: boolean;
  private readonly sinkBlocks: number;
  private readonly hotSteps: number;
  private readonly score: SynapseScore;
  private readonly forecast: SynapseForecast;
  private readonly cost: CopyCost;
  /** per (layer, block): last step its observed mass reached the promotion threshold (−1e9: never) */
  private readonly hotStep: Int32Array;
  /** per layer: the blocks staged from the forecast at its latest decision (views of rows of M), and their count */
  private readonly staged: Int32Array[];
  private readonly stagedCount: Int32Array;
  private readonly stagedMask: Uint8Array;
  private readonly cand: Int32Array;
  /** keys[i] of cand[i], for the selections */
  private readonly candKeys: Float64Array;
  /** minus the forecast score of the block at the same place of cand (the forecast's candidates) */
  private readonly keys: Float64Array;
  private readonly up: Int32Array;
  private readonly kept: Int32Array;
  private readonly pinnedUpTo: Int32Array;
  /** per layer: the step of its latest timed decision (the forecast is judged on the blocks below L1 then: hbm.belowOf, unchanged until the layer's next decision) */
  private readonly judgedStep: Int32Array;
  /** the L1 blocks per layer, ascending (and L2's, for the L2 scans), every block's tier mirrored */
  private readonly hbm: HbmBlocks;
  private readonly bound: OutlierBound;
  private readonly upKeys: Float64Array;
  /**
   * per block of the deciding layer: the mark of the L2 victim selection that picked it (pickMark when
   * picked by the one running now: passed over by the L2 order's later queries of that selection).
   * pickMark is odd between selections and even during one, so no mark matches it outside a selection
   */
  private readonly pickedAt: Int32Array;
  private pickMark = 1;
  /**
   * per (tier, bits), at tier · 17 + bits: µs of one copy of a block of those bits from the tier
   * (cost.of), written for the tiers below L1 at every untimed (prefill) decision (NaN before; a
   * staging fills what is still NaN)
   */
  private readonly copyUsAt: Float64Array;
  /**
   * the least of those over the tiers below L1 and every precision (NaN until written with them;
   * −Infinity where one is not a number): with less copy time left no block's copy fits
   */
  private minCopyUs = Number.NaN;
  /**
   * the staging's list of prefetches (Actions.prefetchBlocks): the blocks, the copy time left before
   * each, its place among the candidates, its tier and bytes
   */
  private readonly plan: Int32Array;
  private readonly planLeft: Float64Array;
  private readonly planAt: Int32Array;
  private readonly planTier: Int32Array;
  private readonly planBytes: Float64Array;
  /** the counts report() gives, indexed by the STAT_* constants (numbers that stay doubles: an object literal's counters change representation as they grow, and a new policy's literal then comes with another map) */
  private readonly stats = new Float64Array(STAT_COUNT);
  private readonly fetched: Float64Array;
  private readonly fetchedBytes: Float64Array;
  /** per tier: blocks and bytes staged at the current decision */
  private readonly stagedIn: Float64Array;
  private readonly stagedBytesIn: Float64Array;
  /** the blocks of an observation at or above a threshold (observe) */
  private readonly heavy: Int32Array;
  /** per block: the step it was last attended (for the probes' order) */
  private readonly seenKeys: Float64Array;
  /**
   * per layer, from its latest observation when taken from the forecast's kept high blocks: those at or
   * above the promotion threshold (rows of M, ascending, with their masses), their count (−1: not kept)
   * and the observation's block count (the threshold's denominator)
   */
  private readonly hotIds: Int32Array;
  private readonly hotMasses: Float64Array;
  private readonly hotCount: Int32Array;
  private readonly hotN: Int32Array;

  // the decision being taken, for the helpers below
  private dv: PolicyView = null as never;
  private da: Actions = null as never;
  /** blocks from here on are in the recent window (or not created) */
  private dEnd = 0;
  /** the outlier bound, computed at the decision's first demotion (moves change no norm and no liveness) */
  private dBound = Number.NaN;
  /** copy time left of the layer's budget, us */
  private dLeft = 0;
  /** L2's tier index */
  private dL2 = 0;
  /** true when the deciding layer's coldL1 is kept (every block observed, no raw score fell) */
  private dOrdered1 = false;

  /**
   * the L2 blocks by saliency (synapse-cold-order.ts), so that the L2 victim needs no scan: kept for
   * l2Kept blocks per layer (when the cache counts others, something moved unseen: rebuilt)
   */
  private readonly coldL2: ColdOrder;
  private readonly l2Kept: Int32Array;
  /** per layer: 1 when its latest observation may have lowered a raw score (the scan serves until one does not) */
  private readonly fell: Uint8Array;
  /**
   * the L1 blocks outside the window by saliency, so that the L1 victim needs no scan while every
   * block was observed and no raw score fell: a block gets its entry when it leaves the window in
   * L1, or when it is promoted back after that; rebuilt from the L1 list when that was rebuilt
   */
  private readonly coldL1: ColdOrder;
  /** per layer: blocks below this have left the window (the L1 ones have entries) */
  private readonly l1Entered: Int32Array;
  /** per layer: hbm.rebuilds when coldL1 was built */
  private readonly l1Built: Int32Array;

  constructor(
    o: Options,
    setup: PolicySetup,
    private readonly paths: SynapsePaths,
  ) {
    const M = setup.maxBlocks;
    const L = setup.layers;
    const T = setup.tiers.length;
    this.o = ownOptions(o);
    this.tierNames = setup.tiers;
    this.M = M;
    this.T = T;
    this.predictive = o.mode === 'predictive';
    this.sinkBlocks = Math.ceil(o.sink_tokens / setup.blockSize);
    this.hotSteps = o.hot_steps;
    this.score = new SynapseScore(L, M);
    this.forecast = new SynapseForecast(L, M, { historyWeight: o.history_weight, heavyRatio: o.heavy_ratio, simRate: o.sim_rate });
    this.audit = new ForecastAudit(L, M);
    this.cost = new CopyCost(setup, o);
    this.hotStep = new Int32Array(L * M).fill(-1e9);
    const stagedRows = new Int32Array(L * M);
    this.staged = Array.from({ length: L }, (_, l) => stagedRows.subarray(l * M, (l + 1) * M));
    this.stagedCount = new Int32Array(L);
    this.stagedMask = new Uint8Array(M);
    // (one more place: a branch-free pass writes at the place after its last candidate)
    this.cand = new Int32Array(M + 1);
    this.candKeys = new Float64Array(M);
    this.keys = new Float64Array(M + 1);
    this.up = new Int32Array(M);
    this.kept = new Int32Array(M);
    this.pinnedUpTo = new Int32Array(L);
    this.judgedStep = new Int32Array(L).fill(-2);
    this.hbm = new HbmBlocks(L, M, setup.tiers.indexOf(o.l2_tier) !== setup.tiers.indexOf(o.l3_tier) ? setup.tiers.indexOf(o.l2_tier) : -1);
    this.bound = new OutlierBound(L, M, true);
    this.upKeys = new Float64Array(M);
    this.pickedAt = new Int32Array(M);
    this.copyUsAt = new Float64Array(T * 17).fill(Number.NaN);
    this.plan = new Int32Array(M);
    this.planLeft = new Float64Array(M);
    this.planAt = new Int32Array(M);
    this.planTier = new Int32Array(M);
    this.planBytes = new Float64Array(M);
    this.fetched = new Float64Array(T);
    this.fetchedBytes = new Float64Array(T);
    this.stagedIn = new Float64Array(T);
    this.stagedBytesIn = new Float64Array(T);
    this.heavy = new Int32Array(M);
    this.seenKeys = new Float64Array(M);
    this.hotIds = new Int32Array(L * M);
    this.hotMasses = new Float64Array(L * M);
    this.hotCount = new Int32Array(L).fill(-1);
    this.hotN = new Int32Array(L);
    this.coldL2 = new ColdOrder(L, M);
    this.l2Kept = new Int32Array(L).fill(-1);
    this.fell = new Uint8Array(L);
    this.coldL1 = new ColdOrder(L, M);
    this.l1Entered = new Int32Array(L);
    this.l1Built = new Int32Array(L).fill(-1);
  }

  forecastOf(l: number): number[] {
    return Array.from(this.staged[l].subarray(0, this.stagedCount[l]));
  }

  auditTrueAttention(step: number, l: number, n: number, massOf: (b: number) => number): void {
    this.audit.truth(l, step, n, this.forecast.threshold(n), massOf);
  }

  /** a cold order's judge (ColdOrder.coldest): DROP a block no longer in the tier, SET_ASIDE one that may not leave */
  pass(b: number, mode: number): number {
    const v = this.dv;
    if (mode === PASS_L2) return this.hbm.tiers[v.layer * this.M + b] !== this.dL2 ? DROP : this.pickedAt[b] === this.pickMark ? SET_ASIDE : ELIGIBLE;
    const cache = v.cache;
    if (cache.tierOf(v.layer, b) !== 0) return DROP;
    // (the window, then hotness, then the pin: most blocks set aside are hot, and the pin is then not read)
    if (b >= this.dEnd) return SET_ASIDE;
    if (mode === PASS_L1 && v.step - this.hotStep[v.layer * this.M + b] <= this.hotSteps) return SET_ASIDE;
    return cache.isPinned(v.layer, b) ? SET_ASIDE : ELIGIBLE;
  }

  /** bits of block b demoted to `bits`: 16 for an outlier */
  private bitsFor(b: number, bits: number): number {
    if (Number.isNaN(this.dBound)) this.dBound = this.bound.of(this.dv, this.o.outlier_sigma);
    return this.dv.keyNorms[b] > this.dBound ? 16 : bits;
  }

  /** demote block b of the deciding layer; a copy out of L1 is charged to the copy budget */
  private demoteTo(b: number, tier: string, t: number, bits: number): boolean {
    const v = this.dv;
    const cache = v.cache;
    const l = v.layer;
    const from = cache.tierOf(l, b);
    if (!this.da.demote(l, b, tier, bits)) return false;
    this.hbm.moved(l, b, from, t);
    if (from === 0) this.dLeft -= this.cost.of(t, cache.bytesOf(bits));
    // (a block not yet observed is left out: the cache then counts more L2 blocks than kept, and the order is rebuilt)
    if (t === this.dL2 && from !== this.dL2 && b < this.score.known(l)) {
      this.l2Kept[l]++;
      this.coldL2.add(l, b, this.score.raw(l, b));
    }
    return true;
  }

  /** L1 blocks of the deciding layer that may leave (not pinned, not in the window), hot ones only when `withHot`, with their saliency into candKeys */
  private l1Victims(withHot: boolean): number {
    const v = this.dv;
    const cache = v.cache;
    const l = v.layer;
    const s = v.step;
    const l1 = this.hbm.list(l);
    const l1Base = l * this.M;
    const hotStep = this.hotStep;
    const hotSteps = this.hotSteps;
    const score = this.score;
    const cand = this.cand;
    const candKeys = this.candKeys;
    let n = 0;
    const end = this.dEnd;
    const pins = cache.pinnedIn(l) > 0;
    const count = this.hbm.countOf(l);
    for (let i = 0; i < count; i++) {
      const b = l1[l1Base + i];
      if (b >= end) break;
      // (no victim: pinned, when the layer has pins, or hot unless withHot)
      if ((pins && cache.isPinned(l, b)) || (!withHot && s - hotStep[l1Base + b] <= hotSteps)) continue;
      candKeys[n] = score.get(l, b);
      cand[n++] = b;
    }
    return n;
  }

  /** the unpinned L1 block outside the window of least saliency (ties: the lower id), hot ones only when `withHot`, or −1 (the bottom-1 of l1Victims) */
  private coldestL1(withHot: boolean): number {
    const v = this.dv;
    const l = v.layer;
    if (this.dOrdered1 && this.coldL1.valid(l)) {
      const c = this.coldL1.coldest(l, this.score, this, withHot ? PASS_L1_HOT : PASS_L1);
      if (c !== -2) return c;
    }
    const cache = v.cache;
    const s = v.step;
    const l1 = this.hbm.list(l);
    const l1Base = l * this.M;
    const hotStep = this.hotStep;
    const hotSteps = this.hotSteps;
    const score = this.score;
    let best = -1;
    let bestKey = 0;
    const end = this.dEnd;
    const pins = cache.pinnedIn(l) > 0;
    const count = this.hbm.countOf(l);
    for (let i = 0; i < count; i++) {
      const b = l1[l1Base + i];
      if (b >= end) break;
      if ((pins && cache.isPinned(l, b)) || (!withHot && s - hotStep[l1Base + b] <= hotSteps)) continue;
      const k = score.get(l, b);
      if (best < 0 || k < bestKey) {
        best = b;
        bestKey = k;
      }
    }
    return best;
  }

  /**
   * anchor guard: pin the sink blocks of layer l once they exist. (Its own method: the pins happen in a
   * replay's first decisions only, so code compiled for decide during one replay would have no type
   * feedback for them and be thrown away at the next replay's first pin.)
   */
  private pinSinks(l: number, cache: PolicyView['cache'], act: Actions): void {
    const pinnedUpTo = this.pinnedUpTo;
    const upTo = Math.min(this.sinkBlocks, cache.created[l]);
    for (let b = pinnedUpTo[l]; b < upTo; b++) if (cache.tierOf(l, b) >= 0) act.pin(l, b);
    pinnedUpTo[l] = upTo;
  }

  decide(v: PolicyView, act: Actions): void {
    const o = this.o;
    const M = this.M;
    const sinkBlocks = this.sinkBlocks;
    const score = this.score;
    const forecast = this.forecast;
    const cost = this.cost;
    const pinnedUpTo = this.pinnedUpTo;
    const hbm = this.hbm;
    const bound = this.bound;
    const coldL2 = this.coldL2;
    const l2Kept = this.l2Kept;
    const fell = this.fell;
    const coldL1 = this.coldL1;
    const l1Entered = this.l1Entered;
    const l1Built = this.l1Built;
    const l = v.layer;
    const s = v.step;
    const cache = v.cache;
    const tL2 = cache.tierIndex(o.l2_tier);
    const tL3 = cache.tierIndex(o.l3_tier);
    this.pinSinks(l, cache, act);
    const K = Math.max(v.budgetBlocks, sinkBlocks + 1);
    const recent = Math.max(1, Math.round(K * o.recent_ratio));
    const windowStart = v.nBlocks - recent;
    const created = cache.created[l];
    const hotBase = l * M;
    const timed = s >= 0;
    bound.note(v);
    // the L1 blocks, ascending, and the blocks below L1 (every move below is reported to hbm)
    hbm.sync(cache, l);
    this.dv = v;
    this.da = act;
    this.dEnd = Math.min(windowStart, created);
    this.dBound = Number.NaN;
    this.dLeft = timed ? cost.layerUs : Infinity;
    this.dL2 = tL2;
    // the L2 order answers once every block was observed (a block not yet observed has saliency 0)
    const ordered = score.known(l) >= created && tL2 > 0 && tL2 !== tL3;
    if (ordered && fell[l] === 0 && (!coldL2.valid(l) || l2Kept[l] !== cache.countIn(l, tL2))) {
      coldL2.reset(l);
      const tiers = hbm.tiers;
      for (let b = 0; b < created; b++) if (tiers[hotBase + b] === tL2) coldL2.add(l, b, score.raw(l, b));
      l2Kept[l] = cache.countIn(l, tL2);
    }
    this.dOrdered1 = score.known(l) >= created && fell[l] === 0;
    if (!this.dOrdered1) coldL1.invalidate(l);
    else if (!coldL1.valid(l) || l1Built[l] !== hbm.rebuilds[l]) {
      coldL1.reset(l);
      const l1 = hbm.list(l);
      for (let i = 0; i < hbm.countOf(l); i++) {
        const b = l1[hotBase + i];
        if (b >= this.dEnd) break;
        coldL1.add(l, b, score.raw(l, b));
      }
      l1Entered[l] = this.dEnd;
      l1Built[l] = hbm.rebuilds[l];
    } else if (this.dEnd > l1Entered[l]) {
      for (let b = l1Entered[l]; b < this.dEnd; b++) if (cache.tierOf(l, b) === 0) coldL1.add(l, b, score.raw(l, b));
      l1Entered[l] = this.dEnd;
    }
    if (timed && o.promote_blocks > 0 && forecast.lastStep(l) >= 0) this.promoteBack(v, act, K, created, tL2);
    this.overflowL1(v, K, tL2);
    this.overflowL2(v, act, K, created, ordered, tL2, tL3);
    if (timed) this.stageForecast(v, act, K, created);
    else this.copyTable(cache);
  }

  /** promotion back: blocks below L1 that were hot at the layer's latest observation (a timed decision) */
  private promoteBack(v: PolicyView, act: Actions, K: number, created: number, tL2: number): void {
    const o = this.o;
    const M = this.M;
    const score = this.score;
    const forecast = this.forecast;
    const cost = this.cost;
    const hotStep = this.hotStep;
    const cand = this.cand;
    const up = this.up;
    const hbm = this.hbm;
    const upKeys = this.upKeys;
    const stats = this.stats;
    const l2Kept = this.l2Kept;
    const coldL1 = this.coldL1;
    const l1Entered = this.l1Entered;
    const l = v.layer;
    const s = v.step;
    const cache = v.cache;
    const hotBase = l * M;
    const theta = o.promote_ratio / Math.max(1, v.nBlocks);
    let nUp = 0;
    const nHigh = this.paths.promoteFromHigh && theta > 0 ? forecast.latestHigh(l, theta) : -1;
    if (nHigh >= 0) {
      // (in listed form the blocks at or above theta are among the kept high ones, with their masses;
      // the tier mirror is the cache's: no move yet at this decision). With the same block count as
      // the observation, theta is the one observe() kept the hot blocks for: those, in the same order
      const hot = this.hotN[l] === v.nBlocks ? this.hotCount[l] : -1;
      const ids = hot >= 0 ? this.hotIds : forecast.highIds;
      const vals = hot >= 0 ? this.hotMasses : forecast.highMasses;
      const count = hot >= 0 ? hot : nHigh;
      const tiers = hbm.tiers;
      for (let j = 0; j < count; j++) {
        const b = ids[hotBase + j];
        if (b < created && vals[hotBase + j] >= theta && tiers[hotBase + b] > 0) {
          up[nUp++] = b;
          upKeys[b] = -vals[hotBase + j];
        }
      }
    } else {
      const heavy = forecast.lastAtLeast(l, created, theta, cand);
      for (let i = 0; i < heavy; i++) if (cache.tierOf(l, cand[i]) > 0) up[nUp++] = cand[i];
      for (let i = 0; i < nUp; i++) upKeys[up[i]] = -forecast.lastMass(l, up[i]);
    }
    // hottest first (ties: the lower id)
    sortByKey(up, nUp, upKeys);
    for (let i = 0; i < Math.min(nUp, o.promote_blocks); i++) {
      const b = up[i];
      if (cache.countIn(l, 0) + (v.newBlock ? 1 : 0) >= K) {
        const c = this.coldestL1(false);
        if (c < 0) break;
        if (!this.demoteTo(c, o.l2_tier, tL2, Math.min(cache.bitsOf(l, c), this.bitsFor(c, o.l2_bits)))) break;
      }
      const from = cache.tierOf(l, b);
      const bytes = cache.bytesOf(cache.bitsOf(l, b));
      if (!act.promote(l, b, 16)) break;
      hbm.moved(l, b, from, 0);
      if (this.dOrdered1 && b < l1Entered[l]) coldL1.add(l, b, score.raw(l, b));
      if (from === tL2) l2Kept[l]--;
      this.dLeft -= cost.of(from, bytes);
      hotStep[hotBase + b] = s;
      stats[STAT_PROMOTED_BACK]++;
    }
  }

  /** L1 -> L2: bottom-k saliency among unguarded L1 blocks (hot ones last) */
  private overflowL1(v: PolicyView, K: number, tL2: number): void {
    const o = this.o;
    const cand = this.cand;
    const candKeys = this.candKeys;
    const hbm = this.hbm;
    const coldL2 = this.coldL2;
    const l = v.layer;
    const cache = v.cache;
    const want = cache.countIn(l, 0) + (v.newBlock ? 1 : 0);
    if (want === K + 1) {
      let c = this.coldestL1(false);
      if (c < 0) c = this.coldestL1(true);
      if (c >= 0) this.demoteTo(c, o.l2_tier, tL2, this.bitsFor(c, o.l2_bits));
    } else if (want > K) {
      let n = this.l1Victims(false);
      if (n < want - K) n = this.l1Victims(true);
      const k = selectBottomKKeyed(cand, candKeys, n, want - K);
      // (the L2 order takes the k blocks in one sort, not one by one)
      coldL2.defer(l);
      for (let i = 0; i < k; i++) this.demoteTo(cand[i], o.l2_tier, tL2, this.bitsFor(cand[i], o.l2_bits));
      coldL2.settle(l);
    }
  }

  /** L2 -> L3: bottom-k saliency in L2 */
  private overflowL2(v: PolicyView, act: Actions, K: number, created: number, ordered: boolean, tL2: number, tL3: number): void {
    const o = this.o;
    const M = this.M;
    const score = this.score;
    const cand = this.cand;
    const candKeys = this.candKeys;
    const hbm = this.hbm;
    const coldL2 = this.coldL2;
    const l2Kept = this.l2Kept;
    const l = v.layer;
    const cache = v.cache;
    const hotBase = l * M;
    const K2 = Math.floor(o.l2_factor * K);
    const inL2 = cache.countIn(l, tL2);
    if (inL2 === K2 + 1) {
      // the bottom-1: least saliency, ties to the lower id
      let c = ordered && coldL2.valid(l) ? coldL2.coldest(l, score, this, PASS_L2) : -2;
      if (c === -2) {
        c = -1;
        let cKey = 0;
        const tiers = hbm.tiers;
        for (let b = 0; b < created; b++) {
          if (tiers[hotBase + b] !== tL2) continue;
          const k = score.get(l, b);
          if (c < 0 || k < cKey) {
            c = b;
            cKey = k;
          }
        }
      }
      if (c >= 0 && act.demote(l, c, o.l3_tier, Math.min(cache.bitsOf(l, c), this.bitsFor(c, o.l3_bits)))) {
        hbm.moved(l, c, tL2, tL3);
        l2Kept[l]--;
      }
    } else if (inL2 > K2) {
      if (this.paths.l2FromOrder && inL2 - K2 <= L2_FROM_ORDER_MAX && ordered && coldL2.valid(l) && this.demoteColdestL2(inL2 - K2, act, tL2, tL3)) return;
      // the L2 blocks, ascending, with their saliency (score.get written out)
      let n = 0;
      const known = score.known(l);
      const off = score.offsetOf(l);
      if (hbm.second === tL2) {
        n = hbm.listSecond(l, cand);
        for (let i = 0; i < n; i++) {
          const b = cand[i];
          candKeys[i] = b < known ? score.raw(l, b) + off : 0;
        }
      } else {
        const tiers = hbm.tiers;
        for (let b = 0; b < created; b++) {
          if (tiers[hotBase + b] !== tL2) continue;
          candKeys[n] = b < known ? score.raw(l, b) + off : 0;
          cand[n++] = b;
        }
      }
      const k = selectBottomKKeyed(cand, candKeys, n, inL2 - K2);
      for (let i = 0; i < k; i++) {
        const b = cand[i];
        if (act.demote(l, b, o.l3_tier, Math.min(cache.bitsOf(l, b), this.bitsFor(b, o.l3_bits)))) {
          hbm.moved(l, b, tL2, tL3);
          l2Kept[l]--;
        }
      }
    }
  }

  /**
   * The L2 overflow's k victims (the k L2 blocks of least saliency, ties to the lower id) from the L2
   * cold order, one query each (a block picked is passed over by the later ones), demoted to L3 in
   * that order where every victim's move has the same precisions before and after (one move batch,
   * whose blocks' order no result reads: its count, bytes and sorted runs); true when done. False,
   * having moved nothing, where the victims' moves differ in precision (the quickselect's order then
   * says which batch comes first), where L3 has no room for all of them (which ones it refuses
   * depends on the order), or the order could not answer (not valid any more, or short of victims).
   */
  private demoteColdestL2(k: number, act: Actions, tL2: number, tL3: number): boolean {
    const o = this.o;
    const l = this.dv.layer;
    const cache = this.dv.cache;
    const cand = this.cand;
    const coldL2 = this.coldL2;
    // (a mark of its own: marks of earlier selections never match it)
    const mark = ++this.pickMark;
    let n = 0;
    let same = true;
    let first = 0;
    for (; n < k; n++) {
      const c = coldL2.coldest(l, this.score, this, PASS_L2);
      if (c < 0) break;
      this.pickedAt[c] = mark;
      cand[n] = c;
      const from = cache.bitsOf(l, c);
      const key = from * 32 + Math.min(from, this.bitsFor(c, o.l3_bits));
      if (n === 0) first = key;
      else if (key !== first) same = false;
    }
    // (the picks are let go: the one-block query and later selections pass over no block)
    this.pickMark++;
    if (n < k || !same) return false;
    // every move must find room in L3: where some would be refused, which ones move depends on the
    // order, and the quickselect's is the policy's
    if (cache.free(tL3) < k * cache.bytesOf(first % 32)) return false;
    for (let i = 0; i < k; i++) {
      const b = cand[i];
      if (act.demote(l, b, o.l3_tier, Math.min(cache.bitsOf(l, b), this.bitsFor(b, o.l3_bits)))) {
        this.hbm.moved(l, b, tL2, tL3);
        this.l2Kept[l]--;
      }
    }
    return true;
  }

  /**
   * copyUsAt and minCopyUs written out. (Called at every untimed decision, so that a replay's stagings
   * find them written: filling them at a replay's first staging would be a branch that code compiled
   * for stageForecast during an earlier replay has no type feedback for, and throws away.)
   */
  private copyTable(cache: PolicyView['cache']): void {
    const at = this.copyUsAt;
    let least = Infinity;
    for (let t = 1; t < this.T; t++) {
      for (let k = 0; k < STORED_BITS.length; k++) {
        const bits = STORED_BITS[k];
        const us = this.cost.of(t, cache.bytesOf(bits));
        at[t * 17 + bits] = us;
        // (a copy time that is not a number: −Infinity, and the staging never stops early)
        if (us !== us) least = -Infinity;
        else if (us < least) least = us;
      }
    }
    this.minCopyUs = least;
  }


  /** a timed decision's staging: the forecast's blocks below L1 while their copies fit, then (predictive) the probes and skips */
  private stageForecast(v: PolicyView, act: Actions, K: number, created: number): void {
    const o = this.o;
    const T = this.T;
    const forecast = this.forecast;
    const audit = this.audit;
    const cost = this.cost;
    const staged = this.staged;
    const stagedMask = this.stagedMask;
    const cand = this.cand;
    const candKeys = this.candKeys;
    const keys = this.keys;
    const kept = this.kept;
    const judgedStep = this.judgedStep;
    const hbm = this.hbm;
    const stats = this.stats;
    const fetched = this.fetched;
    const fetchedBytes = this.fetchedBytes;
    const stagedIn = this.stagedIn;
    const stagedBytesIn = this.stagedBytesIn;
    const seenKeys = this.seenKeys;
    const predictive = this.predictive;
    const l = v.layer;
    const s = v.step;
    const cache = v.cache;

    // the blocks below L1 now (staging changes no tier): what the forecast picks from and is judged on
    const below = hbm.belowOf(l);
    // the forecast: blocks below L1 scoring >= theta, the best ceil(stage_ratio x K), staged while they fit
    const theta = forecast.threshold(v.nBlocks);
    const alpha = forecast.alpha(l, s);
    stats[STAT_DECISIONS]++;
    stats[STAT_ALPHA_SUM] += alpha;
    const n = forecast.candidates(l, created, alpha, theta, below, cand, keys);
    const cap = Math.ceil(o.stage_ratio * K);
    // (no selection when every candidate is kept)
    const best = n > cap ? selectBottomKKeyed(cand, keys, n, cap) : n;
    // highest score first (ties: the lower id)
    sortPairs(cand, keys, best);
    const st = staged[l];
    let nSt = 0;
    // (the mask is read by the probes only)
    if (predictive) stagedMask.fill(0, 0, v.nBlocks);
    // (a loop over the few tiers: a fill() call costs more here)
    for (let t = 0; t < T; t++) {
      stagedIn[t] = 0;
      stagedBytesIn[t] = 0;
    }
    // (NaN, before copyTable: no early stop, as no comparison with it holds)
    const minUs = this.minCopyUs;
    const copyUsAt = this.copyUsAt;
    if (act.prefetchBlocks === undefined) {
      for (let i = 0; i < best; i++) {
        // (no copy fits: every one left would be passed over below)
        if (minUs > this.dLeft) break;
        const b = cand[i];
        const t = cache.tierOf(l, b);
        const bits = cache.bitsOf(l, b);
        const bytes = cache.bytesOf(bits);
        let us = copyUsAt[t * 17 + bits];
        if (us !== us) us = copyUsAt[t * 17 + bits] = cost.of(t, bytes);
        if (us > this.dLeft) continue;
        if (!act.prefetch(l, b)) continue;
        this.dLeft -= us;
        st[nSt++] = b;
        stagedMask[b] = 1;
        stagedIn[t]++;
        stagedBytesIn[t] += bytes;
        stats[STAT_STAGED]++;
        stats[STAT_STAGED_BYTES] += bytes;
      }
    } else {
      // the same prefetches handed over as lists: the candidates from i whose copies fit, as the calls
      // one by one take them where none is refused (with the copy time left before each); where one is
      // refused, the copy time is what it was before it and the candidates after it are planned again
      const plan = this.plan;
      const planLeft = this.planLeft;
      const planAt = this.planAt;
      const planTier = this.planTier;
      const planBytes = this.planBytes;
      let i = 0;
      while (i < best) {
        let left = this.dLeft;
        let np = 0;
        for (; i < best; i++) {
          // (no copy fits: every one left would be passed over below)
          if (minUs > left) break;
          const b = cand[i];
          const t = cache.tierOf(l, b);
          const bits = cache.bitsOf(l, b);
          let us = copyUsAt[t * 17 + bits];
          if (us !== us) us = copyUsAt[t * 17 + bits] = cost.of(t, cache.bytesOf(bits));
          if (us > left) continue;
          plan[np] = b;
          planLeft[np] = left;
          planAt[np] = i;
          planTier[np] = t;
          planBytes[np] = cache.bytesOf(bits);
          np++;
          left -= us;
        }
        const took = np === 0 ? 0 : act.prefetchBlocks(l, plan, 0, np);
        for (let j = 0; j < took; j++) {
          const b = plan[j];
          const t = planTier[j];
          const bytes = planBytes[j];
          st[nSt++] = b;
          stagedMask[b] = 1;
          stagedIn[t]++;
          stagedBytesIn[t] += bytes;
          stats[STAT_STAGED]++;
          stats[STAT_STAGED_BYTES] += bytes;
        }
        if (took === np) {
          this.dLeft = left;
          break;
        }
        this.dLeft = planLeft[took];
        i = planAt[took] + 1;
      }
    }
    judgedStep[l] = s;
    // (the mask is kept, not copied: it stays as it is until the layer's next decision, after this one's truth)
    this.stagedCount[l] = nSt;
    audit.begin(l, s, v.nBlocks, below, st, nSt, true);
    if (predictive) {
      // the blocks attended below L1: the staged ones, then the probed ones
      let nKept = 0;
      for (let i = 0; i < nSt; i++) kept[nKept++] = st[i];
      // probes: the offloaded blocks unattended the longest, with the copy time left
      if (o.probe_blocks > 0) {
        let m = 0;
        for (let b = 0; b < created; b++) {
          if (below[b] === 0 || stagedMask[b]) continue;
          candKeys[m] = forecast.seen(l, b);
          cand[m++] = b;
        }
        const k = selectBottomKKeyed(cand, candKeys, m, o.probe_blocks);
        for (let i = 0; i < k; i++) seenKeys[cand[i]] = forecast.seen(l, cand[i]);
        sortByKey(cand, k, seenKeys);
        const order = cand.subarray(0, k);
        for (const b of order) {
          const us = cost.of(cache.tierOf(l, b), cache.bytesOf(cache.bitsOf(l, b)));
          if (us > this.dLeft) continue;
          if (!act.prefetch(l, b)) continue;
          this.dLeft -= us;
          stagedMask[b] = 1;
          kept[nKept++] = b;
          stats[STAT_PROBED]++;
        }
      }
      // every block below L1 neither staged nor probed is skipped
      stats[STAT_SKIPPED] += act.skipExceptListed(kept, nKept, 'offloaded');
    } else {
      // every block below L1 not staged is fetched on demand: per tier, its blocks and bytes less the staged ones
      for (let t = 1; t < T; t++) {
        fetched[t] += cache.countIn(l, t) - stagedIn[t];
        fetchedBytes[t] += cache.bytesIn(l, t) - stagedBytesIn[t];
      }
    }
  }


  observe(obs: Observation): void {
    const o = this.o;
    const M = this.M;
    const score = this.score;
    const forecast = this.forecast;
    const audit = this.audit;
    const hotStep = this.hotStep;
    const heavy = this.heavy;
    const fell = this.fell;
    const l = obs.layer;
    // a listed observation that attended every block: the score and the facts of its listed blocks in one pass
    let listed = 0;
    const fused = this.paths.fusedObserve;
    if (fused && obs.idx !== null && obs.attendedCount === obs.nBlocks) {
      listed = score.observeAttendedAll(obs);
      fell[l] = listed & LISTED_FELL ? 1 : 0;
    } else {
      fell[l] = scoreMayFall(obs) ? 1 : 0;
      score.observe(obs);
    }
    if (fell[l]) {
      this.coldL2.invalidate(l);
      this.coldL1.invalidate(l);
    }
    forecast.observe(obs, this.judgedStep[l] === obs.step ? this.hbm.belowOf(l) : undefined, listed & ~LISTED_FELL);
    const theta = o.promote_ratio / Math.max(1, obs.nBlocks);
    const th = forecast.threshold(obs.nBlocks);
    const { idx, mass, attended } = obs;
    // (in listed form the blocks at or above both thresholds are among the forecast's kept high ones: one pass for both)
    const nHigh = fused ? forecast.latestHigh(l, Math.min(theta, th)) : -1;
    this.hotCount[l] = -1;
    if (nHigh >= 0) {
      const ids = forecast.highIds;
      const vals = forecast.highMasses;
      const base = l * M;
      // the hot blocks, marked and kept for the layer's next promotion back
      const hotIds = this.hotIds;
      const hotMasses = this.hotMasses;
      // (every block written at the next hot place, which moves on by 0 or 1: no branch on the masses;
      // then the hot ones marked)
      let nHot = 0;
      for (let j = 0; j < nHigh; j++) {
        const m = vals[base + j];
        hotIds[base + nHot] = ids[base + j];
        hotMasses[base + nHot] = m;
        nHot += +(m >= theta);
      }
      const step = obs.step;
      for (let j = 0; j < nHot; j++) hotStep[base + hotIds[base + j]] = step;
      this.hotCount[l] = nHot;
      this.hotN[l] = obs.nBlocks;
      if (obs.step >= 0) {
        // where the forecast counted the observed heavy blocks among the judged ones (those below L1 at
        // the layer's decision at this step: the audit's offloaded blocks), that count is the truth, and
        // the hits are the staged blocks (the recorded forecast: distinct, below L1 then, below n) with
        // mass ≥ th: a few lookups instead of a pass over the kept high blocks
        const truth = forecast.judgedHeavyOf(l);
        if (truth >= 0 && this.judgedStep[l] === obs.step) audit.truthCounted(l, obs.step, obs.nBlocks, truth, forecast.countAtLeast(l, this.staged[l], this.stagedCount[l], th));
        else audit.truthOfHigh(l, obs.step, obs.nBlocks, ids, vals, base, nHigh, th);
      }
      return;
    }
    // (in listed form the forecast lists the blocks at or above a threshold from its kept high ones)
    const nHot = forecast.heavyOfLatest(l, theta, heavy);
    if (nHot >= 0) {
      for (let i = 0; i < nHot; i++) hotStep[l * M + heavy[i]] = obs.step;
    } else if (idx !== null && obs.uniform < theta) {
      // only listed blocks can reach theta
      for (let i = 0; i < idx.length; i++) if (attended[idx[i]] && mass[i] >= theta) hotStep[l * M + idx[i]] = obs.step;
    } else {
      forEachMass(obs, (b, m) => {
        if (m >= theta) hotStep[l * M + b] = obs.step;
      });
    }
    if (obs.step >= 0) {
      const nHeavy = forecast.heavyOfLatest(l, th, heavy);
      if (nHeavy >= 0) audit.truthOfHeavy(l, obs.step, obs.nBlocks, heavy, nHeavy);
      else audit.truthOf(l, obs.step, th, obs);
    }
  }

  report(): Record<string, number> {
    const stats = this.stats;
    const T = this.T;
    const fetched = this.fetched;
    const fetchedBytes = this.fetchedBytes;
    const out: Record<string, number> = {
      predictive: this.predictive ? 1 : 0,
      ...this.audit.report(),
      staged_blocks: stats[STAT_STAGED],
      staged_bytes: stats[STAT_STAGED_BYTES],
      probe_blocks: stats[STAT_PROBED],
      skipped_blocks: stats[STAT_SKIPPED],
      promoted_back: stats[STAT_PROMOTED_BACK],
      cross_layer_weight_mean: stats[STAT_DECISIONS] ? stats[STAT_ALPHA_SUM] / stats[STAT_DECISIONS] : 0,
    };
    if (Number.isFinite(this.cost.layerUs)) out.copy_budget_us_per_layer = this.cost.layerUs;
    for (let t = 1; t < T; t++) {
      if (fetched[t] === 0) continue;
      out[`fetched_on_demand_blocks.${this.tierNames[t]}`] = fetched[t];
      out[`fetched_on_demand_bytes.${this.tierNames[t]}`] = fetchedBytes[t];
    }
    return out;
  }
}

/**
 * True when the observation may lower a block's raw H2O score (AttentionScore.observe): a dense mass
 * below 0, a listed mass below the uniform share, an unattended block losing the uniform share, or
 * a value that is not a number.
 */
function scoreMayFall(obs: Observation): boolean {
  const { idx, mass, uniform, attended } = obs;
  if (idx === null) {
    for (let b = 0; b < obs.nBlocks; b++) if (attended[b] && !(mass[b] >= 0)) return true;
    return false;
  }
  if (!(uniform >= 0) || (uniform > 0 && obs.attendedCount < obs.nBlocks)) return true;
  for (let i = 0; i < idx.length; i++) if (attended[idx[i]] && !(mass[i] - uniform >= 0)) return true;
  return false;
}

/**
 * Sort ids[0..n) by (key[id], id) ascending (keys not NaN: every pair is ordered, so any sort gives
 * this order): insertion sort for short lists, else quicksort down to short parts.
 */
export function sortByKey(ids: Int32Array, n: number, key: Float64Array): void {
  if (n > SHORT) {
    quickSortByKey(ids, 0, n - 1, key);
    return;
  }
  // a short list: insertion sort with the keys alongside the ids (one read of key[] per id)
  const k = shortKeys;
  for (let i = 0; i < n; i++) k[i] = key[ids[i]];
  for (let i = 1; i < n; i++) {
    const b = ids[i];
    const kb = k[i];
    let j = i - 1;
    while (j >= 0 && (k[j] > kb || (k[j] === kb && ids[j] > b))) {
      ids[j + 1] = ids[j];
      k[j + 1] = k[j];
      j--;
    }
    ids[j + 1] = b;
    k[j + 1] = kb;
  }
}

/**
 * Sort ids[0..n) with keys[0..n) alongside (keys[i] belongs to ids[i]) by (key, id) ascending (keys
 * not NaN, ids distinct: every pair is ordered, so any sort gives this order): insertion sort for
 * short lists, else quicksort down to short parts.
 */
export function sortPairs(ids: Int32Array, keys: Float64Array, n: number): void {
  if (n > SHORT) {
    sortPairsIn(ids, keys, 0, n - 1);
    return;
  }
  // (a short list, as most are: a loop of its own, small enough to be inlined at the call)
  for (let i = 1; i < n; i++) {
    const b = ids[i];
    const kb = keys[i];
    let j = i - 1;
    while (j >= 0 && (keys[j] > kb || (keys[j] === kb && ids[j] > b))) {
      ids[j + 1] = ids[j];
      keys[j + 1] = keys[j];
      j--;
    }
    ids[j + 1] = b;
    keys[j + 1] = kb;
  }
}

/** sortPairs on the places lo..hi: quicksort down to short parts, then insertion sort */
function sortPairsIn(ids: Int32Array, keys: Float64Array, lo: number, hi: number): void {
  while (hi - lo > 16) {
    // median of three as the pivot, moved to hi
    const mid = (lo + hi) >>> 1;
    if (pairBefore(ids, keys, mid, lo)) swapPairs(ids, keys, mid, lo);
    if (pairBefore(ids, keys, hi, lo)) swapPairs(ids, keys, hi, lo);
    if (pairBefore(ids, keys, mid, hi)) swapPairs(ids, keys, mid, hi);
    let i = lo;
    for (let j = lo; j < hi; j++) {
      if (pairBefore(ids, keys, j, hi)) {
        swapPairs(ids, keys, i, j);
        i++;
      }
    }
    swapPairs(ids, keys, i, hi);
    // the shorter part sorted by a call (depth O(log n)), the longer one in this loop
    if (i - lo < hi - i) {
      sortPairsIn(ids, keys, lo, i - 1);
      lo = i + 1;
    } else {
      sortPairsIn(ids, keys, i + 1, hi);
      hi = i - 1;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const b = ids[i];
    const kb = keys[i];
    let j = i - 1;
    while (j >= lo && (keys[j] > kb || (keys[j] === kb && ids[j] > b))) {
      ids[j + 1] = ids[j];
      keys[j + 1] = keys[j];
      j--;
    }
    ids[j + 1] = b;
    keys[j + 1] = kb;
  }
}

/** true when the pair at place a comes before the one at place b: (keys[a], ids[a]) < (keys[b], ids[b]) */
function pairBefore(ids: Int32Array, keys: Float64Array, a: number, b: number): boolean {
  return keys[a] < keys[b] || (keys[a] === keys[b] && ids[a] < ids[b]);
}

function swapPairs(ids: Int32Array, keys: Float64Array, i: number, j: number): void {
  const t = ids[i];
  ids[i] = ids[j];
  ids[j] = t;
  const k = keys[i];
  keys[i] = keys[j];
  keys[j] = k;
}

/** sortByKey's short lists (at most SHORT ids) and their keys */
const SHORT = 32;
const shortKeys = new Float64Array(SHORT);

function quickSortByKey(ids: Int32Array, lo: number, hi: number, key: Float64Array): void {
  while (hi - lo > 16) {
    // median of three as the pivot, moved to hi
    const mid = (lo + hi) >>> 1;
    if (before(ids[mid], ids[lo], key)) swap(ids, mid, lo);
    if (before(ids[hi], ids[lo], key)) swap(ids, hi, lo);
    if (before(ids[mid], ids[hi], key)) swap(ids, mid, hi);
    const p = ids[hi];
    let i = lo;
    for (let j = lo; j < hi; j++) {
      if (before(ids[j], p, key)) {
        swap(ids, i, j);
        i++;
      }
    }
    swap(ids, i, hi);
    // the shorter part first (recursion depth O(log n)), the longer one in this loop
    if (i - lo < hi - i) {
      quickSortByKey(ids, lo, i - 1, key);
      lo = i + 1;
    } else {
      quickSortByKey(ids, i + 1, hi, key);
      hi = i - 1;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const b = ids[i];
    const k = key[b];
    let j = i - 1;
    while (j >= lo && (key[ids[j]] > k || (key[ids[j]] === k && ids[j] > b))) {
      ids[j + 1] = ids[j];
      j--;
    }
    ids[j + 1] = b;
  }
}

/** true when a comes before b: (key[a], a) < (key[b], b) */
function before(a: number, b: number, key: Float64Array): boolean {
  return key[a] < key[b] || (key[a] === key[b] && a < b);
}

function swap(ids: Int32Array, i: number, j: number): void {
  const t = ids[i];
  ids[i] = ids[j];
  ids[j] = t;
}
