/**
 * DPNC demand-paged tiers (seed system): HBM is the page cache the attention kernel reads; below it
 * four backing tiers, DRAM / CXL / SSD (nvme) / HDD, hold the pages (KV blocks, FP16). A page that is
 * not in HBM is not attended at a step unless it was paged in for that step, so a page the pager did
 * not bring in costs recall. docs/seed-dpnc.md describes the design and what a run reports.
 *
 * A page is *used* (needed) at a step when its attention mass is at least use_factor / nBlocks
 * (use_factor times the even share of the row).
 *
 * Decisions for layer l at step t are taken one layer ahead (while layer l−1 computes, so the page-ins
 * overlap its compute; with one layer, at the layer itself), in this order:
 * 1. Predictor: for every live page, its features (dpnc-features.ts) and the streaming Hoeffding
 *    tree's probability p that it is needed at t. The tree learns, when t's attention is observed,
 *    from every page it was asked about whose use at t was seen (attended): the label is "used at t".
 *    It predicts a page needed when p > predict_threshold, once it has seen tree_grace samples.
 * 2. Demotion from HBM on LRU duration: a resident page unused at each of the last hbm_age_steps
 *    steps (and not paged in during them) and not predicted needed (p > predict_threshold) goes to
 *    DRAM (0 = off).
 * 3. Capacity pressure: while HBM holds more than the budget (room for a new page counted), a
 *    resident page goes to DRAM: the one of lowest weighted LRU x importance value,
 *    importance / (1 + steps since its last use) (importance = cumulative attention over the
 *    layer's largest), among those not predicted needed when there are any.
 * 4. Promotion (page-in, `promote`, at most page_in per layer and step) of offloaded pages on any
 *    trigger: predicted access (p > predict_threshold; most probable first), then recency (used
 *    within recent_steps steps of t) and importance (importance above the least important resident
 *    page's; off by default), highest value first. A page-in takes a free slot or replaces the
 *    resident page of lowest value among those not predicted needed (for recency and importance,
 *    only one of lower value than its own). Then exploration: up to `explore` free HBM slots take
 *    offloaded pages drawn at random (a hash of seed, layer and step), which gives the tree labels
 *    for offloaded pages that no trigger brings in.
 * 5. Demotion between backing tiers: capacity pressure (a tier over its quota of pages per layer —
 *    DRAM dram_factor x budget, CXL cxl_factor x budget, SSD ssd_factor x budget, none by default —
 *    or with less free space than one page per layer) moves the lowest-value pages one tier down; LRU age (unused for age_steps) and low importance
 *    (below low_importance) move a page one tier down, no lower than demote_floor, at most demote_max
 *    per layer and step. Trigger page-ins come from page_in_max_tier or faster tiers only (default:
 *    not from HDD, whose ~10 ms per request outlasts a decode step).
 * At the layer itself, offloaded pages are skipped.
 *
 * The report (summary.policy_report) counts, page by page (dpnc-prefetch-audit.ts): the predictor's
 * accuracy on offloaded pages next to the majority class's on the same pages, prefetch precision and
 * recall, bytes paged in and wasted, per trigger; and the tree's own prequential accuracy on what it
 * trained on, next to that stream's majority class.
 *
 * The work of a decision follows the pages that changed, not every page: each tier's pages are kept
 * as they move; when no leaf the tree answers "needed" at is reached by a page unused for
 * RECENCY_HORIZON steps, only the offloaded pages used since (the recent list) are asked, and the
 * others are answered "no" in the audit's listing written when the step's attention is settled; the
 * backing tiers' pages are kept in order of value (dpnc-tier-order.ts); a trained page's bins are
 * computed when the attention is observed, from what its decision saw; the largest score and the
 * key-norm statistics are kept as they change. The results are those of valuing every page.
 */
import { AttentionScore } from './attention-score.js';
import {
  DPNC_FEATURES,
  firstBitsChanged,
  frequencyBinHolds,
  frequencyFeature,
  KeyNormBins,
  lastMassFeature,
  layerFeature,
  nearLayerFeature,
  normStats,
  positionFeature,
  RECENCY_HORIZON,
  recencyFeature,
  tierFeature,
} from './dpnc-features.js';
import { isNeeded, PrefetchAudit, TRIGGERS, type Trigger } from './dpnc-prefetch-audit.js';
import { InOrder } from './dpnc-in-order.js';
import { NONE, TierOrder, type TierValuation } from './dpnc-tier-order.js';
import { HoeffdingTree } from './hoeffding-tree.js';
import { mix32 } from '../traces/hash-noise.js';
import type { Actions, Observation, PolicyDefinition, PolicySetup, PolicyView } from './policy.js';

// the functions observe() calls for every attended page, held in module constants (a module loader
// that compiles imports to getters on a namespace object would otherwise run a getter per call)
const nearFeature = nearLayerFeature;
const massFeature = lastMassFeature;
const freqFeature = frequencyFeature;
const recFeature = recencyFeature;
const freqHolds = frequencyBinHolds;
const firstChanged = firstBitsChanged;
const needed = isNeeded;
const NORM_GUARD = KeyNormBins.GUARD;

interface Options extends Record<string, unknown> {
  use_factor: number;
  page_in: number;
  predict_threshold: number;
  recent_steps: number;
  importance_trigger: boolean;
  explore: number;
  explore_max_tier: string;
  seed: number;
  page_in_max_tier: string;
  hbm_age_steps: number;
  dram_factor: number;
  cxl_factor: number;
  ssd_factor: number;
  age_steps: number;
  low_importance: number;
  demote_floor: string;
  demote_max: number;
  train_on: string;
  train_rate: number;
  tree_bins: number;
  tree_grace: number;
  tree_delta: number;
  tree_tau: number;
}

const F = DPNC_FEATURES.length;
// a training sample's eight bins are written as two 32-bit words (four bins each, in the bytes'
// order in memory on this machine)
if (F !== 8) throw new Error(`policy dpnc: the training samples are written for 8 features (got ${F})`);
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
/** a page's bins in State.pageBin: bytes 4i + PB_FREQ, PB_MASS, PB_NORM of page i */
const PB_FREQ = 1;
const PB_MASS = 2;
const PB_NORM = 3;
/** the 32-bit word whose bytes in memory are a, b, c, d (each below 256) */
const fourBytes = (a: number, b: number, c: number, d: number): number =>
  LITTLE_ENDIAN ? a | (b << 8) | (c << 16) | (d << 24) : (a << 24) | (b << 16) | (c << 8) | d;
/** the backing tiers, fastest first */
const BACKING = ['dram', 'cxl', 'nvme', 'hdd'];
/** trigger indices (TRIGGERS order) */
const TREE = TRIGGERS.indexOf('tree');
const RECENT = TRIGGERS.indexOf('recent');
const IMPORTANT = TRIGGERS.indexOf('important');
/** A 32-bit hash of four integers (the exploration draw). */
function mix(a: number, b: number, c: number, d: number): number {
  let h = 0x811c9dc5;
  h = mixIn(h, a);
  h = mixIn(h, b);
  h = mixIn(h, c);
  h = mixIn(h, d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

function mixIn(h: number, v: number): number {
  h = Math.imul(h ^ (v & 0xffff), 0x01000193);
  return Math.imul(h ^ (v >>> 16), 0x01000193);
}

/** the draw's fourth word for the training samples' row hash (the exploration draws use 0 .. explore - 1) */
const TRAIN_SALT = 0x7fff_7261;

/** A 32-bit hash of a row's hash and a block (murmur3's finalizer of their mix): the training-sample draw. */
export function sampleDraw(row: number, b: number): number {
  return mix32(row ^ Math.imul(b + 1, 0x9e3779b1));
}

/**
 * Whether the training sample of block b at (seed, layer, step) is learned at rate `rate` (in (0, 1]):
 * its draw below rate x 2^32. Rate 1 keeps every sample.
 */
export function trainingSampleKept(seed: number, layer: number, step: number, b: number, rate: number): boolean {
  return rate >= 1 || sampleDraw(mix(seed, layer, step, TRAIN_SALT), b) < rate * 0x1_0000_0000;
}

/**
 * One past the last block below `created` of layer l whose tier is above 0 (0: none), from the
 * layer's HBM bitmap (bits[at + (b >> 5)], bit b & 31: block b is in HBM) where the cache's tiers are
 * read only for blocks not marked (a block not live, tier -1, is passed over). The bitmap must mark
 * exactly the blocks in HBM.
 */
export function offloadedEnd(bits: Int32Array, at: number, created: number, cache: { tierOf(l: number, b: number): number }, l: number): number {
  let end = created;
  while (end > 0) {
    const b = end - 1;
    // the word's bits of blocks b and below that are not in HBM, and the highest of them
    const missing = ~bits[at + (b >> 5)] & (-1 >>> (31 - (b & 31)));
    if (missing === 0) {
      end = b & ~31;
      continue;
    }
    const last = (b & ~31) + 31 - Math.clz32(missing);
    if (cache.tierOf(l, last) > 0) return last + 1;
    end = last;
  }
  return 0;
}

/** a step before any step (never) */
const NEVER = -0x7fffffff;

export const dpnc: PolicyDefinition<Options> = {
  name: 'dpnc',
  description:
    'DPNC demand-paged tiers: HBM page cache over DRAM/CXL/SSD/HDD; a streaming Hoeffding tree predicts which offloaded pages the next step needs and pages them in one layer ahead; page-in also on recency and importance, plus exploration; demotion on LRU duration, capacity pressure and low importance; offloaded pages not paged in are skipped. Reports predictor accuracy vs the majority class, prefetch precision/recall and wasted bytes.',
  source: 'DPNC (seed system: demand-paged tiers with a VFDT prefetcher); Hoeffding tree: Domingos & Hulten, Mining High-Speed Data Streams, KDD 2000',
  options: [
    { name: 'use_factor', type: 'number', default: 1, min: 0, description: 'a page is used (needed) at a step when its mass >= use_factor / nBlocks (use_factor x the even share)' },
    { name: 'page_in', type: 'integer', default: 4, min: 0, description: 'trigger page-ins (predicted, recent, important) per layer and step at most' },
    { name: 'predict_threshold', type: 'number', default: 0.5, min: 0, max: 1, description: 'predicted access: the tree predicts a page needed at the step when its probability is above this' },
    { name: 'recent_steps', type: 'integer', default: 2, min: 0, description: 'recency trigger: used within this many steps before the step decided for (0 = off)' },
    { name: 'importance_trigger', type: 'boolean', default: false, description: 'importance trigger: page in an offloaded page more important than the least important resident page (off by default: docs/seed-dpnc.md has its measured precision)' },
    { name: 'explore', type: 'integer', default: 1, min: 0, description: 'exploration page-ins per layer and step into free HBM slots (offloaded pages drawn at random), so the tree sees labels of pages no trigger brings in' },
    { name: 'seed', type: 'integer', default: 1, min: 0, description: 'seed of the exploration draws' },
    { name: 'page_in_max_tier', type: 'string', default: 'nvme', choices: ['dram', 'cxl', 'nvme', 'hdd'], description: 'trigger page-ins only from this tier or faster ones (an HDD read, ~10 ms, outlasts a decode step)' },
    { name: 'explore_max_tier', type: 'string', default: 'cxl', choices: ['dram', 'cxl', 'nvme', 'hdd'], description: 'exploration pages in only from this tier or faster ones' },
    { name: 'hbm_age_steps', type: 'integer', default: 0, min: 0, description: 'LRU duration in HBM: a resident page unused at the last this-many steps (and not paged in since) and not predicted needed goes to DRAM (0 = off)' },
    { name: 'dram_factor', type: 'number', default: 0, min: 0, description: 'DRAM quota per layer, x the HBM budget in pages (0: no quota, the tier\'s capacity)' },
    { name: 'cxl_factor', type: 'number', default: 0, min: 0, description: 'CXL quota per layer, x the HBM budget (0: no quota)' },
    { name: 'ssd_factor', type: 'number', default: 0, min: 0, description: 'SSD (nvme) quota per layer, x the HBM budget (0: no quota); HDD takes the rest' },
    { name: 'age_steps', type: 'integer', default: 16, min: 1, description: 'LRU age in the backing tiers: unused this many steps -> one tier down' },
    { name: 'low_importance', type: 'number', default: 0.01, min: 0, max: 1, description: 'low-importance trigger: normalized importance below this -> one tier down (backing tiers)' },
    { name: 'demote_floor', type: 'string', default: 'nvme', choices: ['dram', 'cxl', 'nvme', 'hdd'], description: 'LRU-age and low-importance demotions go no lower than this tier (capacity pressure still can): an HDD write (~10 ms) holds up the memory stream' },
    { name: 'demote_max', type: 'integer', default: 4, min: 0, description: 'age/importance demotions between backing tiers per layer and step at most' },
    { name: 'train_on', type: 'string', default: 'all', choices: ['all', 'offloaded'], description: 'the tree learns from every page it was asked about whose use was seen (all), or only from pages that were offloaded when asked' },
    { name: 'train_rate', type: 'number', default: 1, min: 0, max: 1, description: 'share of the training stream the tree learns, in (0, 1]: each sample is kept or not by a hash of seed, layer, step and block (uniform: the classes keep their shares, so leaf probabilities stay estimates of the need)' },
    { name: 'tree_bins', type: 'integer', default: 16, min: 2, description: 'Hoeffding tree: equal-width bins per feature' },
    { name: 'tree_grace', type: 'integer', default: 200, min: 1, description: 'Hoeffding tree: samples a leaf sees between split checks' },
    { name: 'tree_delta', type: 'number', default: 1e-7, min: 0, max: 1, description: 'Hoeffding tree: 1 - confidence of a split (delta in the Hoeffding bound)' },
    { name: 'tree_tau', type: 'number', default: 0.05, min: 0, description: 'Hoeffding tree: tie threshold (split when the bound falls below it)' },
  ],
  create(o, setup) {
    return build(o, setup);
  },
};

/** the state of one dpnc instance (the functions below take it as their first argument) */
function makeState(o: Options, setup: PolicySetup) {
  const L = setup.layers;
  const M = setup.maxBlocks;
  const T = setup.tiers.length;
  const chain = BACKING.filter((t) => setup.tiers.includes(t));
  if (chain.length === 0) throw new Error(`policy dpnc: the machine has none of the tiers dram, cxl, nvme, hdd (tiers: ${setup.tiers.join(', ')})`);
  if (!(o.tree_delta > 0 && o.tree_delta < 1)) throw new Error(`policy dpnc: option tree_delta must be in (0, 1) (got ${o.tree_delta})`);
  if (!(o.train_rate > 0 && o.train_rate <= 1)) throw new Error(`policy dpnc: option train_rate must be in (0, 1] (got ${o.train_rate})`);
  const upTo = (name: string) => chain.filter((t) => BACKING.indexOf(t) <= BACKING.indexOf(name));
  const exploreTiers = upTo(o.explore_max_tier);
  const pageInTiers = upTo(o.page_in_max_tier);
  const floor = BACKING.indexOf(o.demote_floor);
  const quotaFactor: Record<string, number> = { dram: o.dram_factor, cxl: o.cxl_factor, nvme: o.ssd_factor, hdd: Infinity };
  const score = new AttentionScore(L, M);
  const tree = new HoeffdingTree({ features: F, bins: o.tree_bins, grace: o.tree_grace, delta: o.tree_delta, tau: o.tree_tau });
  const audit = new PrefetchAudit(L, M, o.use_factor);
  // per (layer, block): history of use
  const lastUse = new Int32Array(L * M).fill(NEVER);
  const born = new Int32Array(L * M).fill(NEVER);
  // the step a page was last paged in for (its idle time counts from there when later than its last use)
  const touched = new Int32Array(L * M).fill(NEVER);
  const uses = new Int32Array(L * M);
  const seen = new Int32Array(L * M);
  const norms: Float32Array[] = Array.from({ length: L }, () => new Float32Array(M));
  const normBits = norms.map((a) => new Int32Array(a.buffer));
  // per layer: the key norms array the view last saw, and its bits
  const knOf: (Float32Array | null)[] = Array.from({ length: L }, () => null);
  const knBits: Int32Array[] = Array.from({ length: L }, () => new Int32Array(0));
  // the same two as 8-byte words (null: the view's norms are not 8-byte aligned)
  const normWords = norms.map((a) => new Float64Array(a.buffer, 0, a.length >> 1));
  const knWords: (Float64Array | null)[] = Array.from({ length: L }, () => null);
  // The tree reads a feature only through its bin (tree.bin of the value), so a page's features are
  // kept as bins: the ones that change only when the page is attended (frequency, last mass) are
  // binned then; the key norm's when the layer's key-norm statistics change; the rest per decision.
  // Page i's frequency, last-mass and key-norm bins are the bytes 4i + 1, 4i + 2 and 4i + 3 of
  // pageBin (PB_FREQ, PB_MASS, PB_NORM; byte 4i is 0): read as the 32-bit word pageWord[i], they are a
  // training sample's first word less its recency bin (byte 0).
  const pageBin = new Uint8Array(4 * L * M);
  const pageWord = new Int32Array(pageBin.buffer);
  {
    const freq0 = tree.bin(frequencyFeature(0, 0));
    const mass0 = tree.bin(lastMassFeature(0));
    for (let i = 0; i < L * M; i++) {
      pageBin[4 * i + PB_FREQ] = freq0;
      pageBin[4 * i + PB_MASS] = mass0;
    }
  }
  // the version of its layer's key-norm statistics a page's key-norm bin was computed with (-1: none)
  const normVer = new Int32Array(L * M).fill(-1);
  // per layer: key-norm statistics over its live pages, their version, and what they were computed from
  const nsMean = new Float64Array(L);
  const nsSd = new Float64Array(L);
  const nsVer = new Int32Array(L);
  const nsCreated = new Int32Array(L).fill(-1);
  const nsLive = new Int32Array(L).fill(-1);
  const normsChanged = new Uint8Array(L).fill(1);
  const keyNormBins = new KeyNormBins(tree, tree.bins);
  const layerBin = Array.from({ length: L }, (_, l) => tree.bin(layerFeature(l, L)));
  const tierBin = Array.from({ length: T }, (_, tier) => tree.bin(tierFeature(tier, T)));
  const neverBin = tree.bin(recencyFeature(Infinity));
  const recencyBin = Array.from({ length: 4 * RECENCY_HORIZON }, (_, r) => tree.bin(recencyFeature(r)));
  // past the table (at least RECENCY_HORIZON steps) every recency is 1: one bin
  const farBin = tree.bin(recencyFeature(recencyBin.length));
  // near_layer of the layer observed last, per block (unknownNear: not attended there)
  const unknownNear = tree.bin(nearLayerFeature(Number.NaN));
  const nearBin = new Uint8Array(M).fill(unknownNear);
  // position bins per block at posBinFor blocks
  const posBin = new Uint8Array(M);
  let posBinFor = -1;
  // the feature bins of a page at the last decision pass that wrote them (the tree's input), and its
  // tier at the last decision pass of its layer (a pass that writes every page's bins, or a page-in)
  const feats = new Uint8Array(L * M * F);
  const featTier = new Int8Array(L * M);
  // per layer, its last decision pass (what training at the step decided for reads): the step, tick,
  // blocks created and blocks at the step then, the near_layer bins then, and the key norms of the
  // key-norm statistics' version (copied when a pass finds a new version)
  const decStep = new Int32Array(L).fill(NEVER);
  const decTick = new Int32Array(L);
  const decCreated = new Int32Array(L);
  const decBlocks = new Int32Array(L);
  const nearAt = Array.from({ length: L }, () => new Uint8Array(M));
  const normsAt: Float32Array[] = Array.from({ length: L }, () => new Float32Array(M));
  const normsAtVer = new Int32Array(L).fill(-1);
  // per layer: the first block whose kept norm may differ from normsAt's (M: none)
  const normsAtFrom = new Int32Array(L);
  // one observation's attended blocks
  const attList = new Int32Array(M);
  // one observation's training samples: bins (F per sample) and labels
  const trainBins = new Uint8Array(M * F);
  const trainWords = new Int32Array(trainBins.buffer);
  const trainLabels = new Uint8Array(M);
  // pages paged in for step protectFor: not victims until that step's attention ran
  const protectFor = new Int32Array(L * M).fill(NEVER);
  // per block of the layer being managed (created <= M): tree probability, keep value, due for demotion
  const prob = new Float64Array(M);
  const value = new Float64Array(M);
  const due = new Uint8Array(M);
  // page lists of one decision (block order): resident at its start, exploration pool, trigger candidates
  const residents = new Int32Array(M);
  const offloaded = new Int32Array(M);
  const answer = new Uint8Array(M);
  const explorable = new Int32Array(M);
  const pool = new Int32Array(M);
  const cands = new Int32Array(M);
  const candKey = new Float64Array(M);
  const candTrigger = new Uint8Array(M);
  // a backing tier's pages, valued one by one (visitSlowly)
  const inTier = new Int32Array(M);
  // per (layer, tier): its live blocks (in no particular order), and per page its place there and
  // its tier as listed (-1: none); kept by syncMembers and member() after each move this policy makes
  const memList = Array.from({ length: L * T }, () => new Int32Array(M));
  const memCount = new Int32Array(L * T);
  const memPos = new Int32Array(L * M);
  const memTier = new Int8Array(L * M).fill(-1);
  // per layer, its HBM members as a bitmap (32 blocks a word; block b: bit b % 32 of word b >> 5)
  const W = (M + 31) >> 5;
  const hbmBits = new Int32Array(L * W);
  const memCreated = new Int32Array(L);
  // the backing tiers' pages in order of value (kept by member()), and per layer its raw scores
  // (the score less the layer's offset; a block not observed yet: 0 less the offset, as its first
  // observation sets it)
  const order = new TierOrder(L, M, T);
  const rawOf = Array.from({ length: L }, (_, l) => (b: number) => (b < score.known(l) ? score.raw(l, b) : -score.offsetOf(l)));
  const scoreOf = Array.from({ length: L }, (_, l) => (b: number) => score.get(l, b));
  // visits in order of a key (victims, page-ins, demotions)
  const ordered = new InOrder(M);
  const spare = new Int32Array(M);
  const visited = new Uint8Array(M);
  // attended masses of the layer observed (reused; in a top-k row, only the listed blocks', marked)
  const massScratch = new Float64Array(M);
  const listedMark = new Uint8Array(M);
  // blocks of each layer whose birth step is set (born is set for b < bornUpTo)
  const bornUpTo = new Int32Array(L);
  // per layer: a count of its observations (its scores change only then), and the largest score kept
  const scoreVer = new Int32Array(L);
  const maxVer = new Int32Array(L).fill(-1);
  const maxCreated = new Int32Array(L).fill(-1);
  const maxScore = new Float64Array(L);
  // the chain's tier indices, and the slowest tier triggers and exploration page in from (set at the first decision)
  let tierIdx: number[] | null = null;
  let pageInTop = 0;
  let exploreTop = 0;
  let prevLayer = -1;
  let prevStep = NEVER;
  // one tick per decision pass; per page, the tick at which it last left HBM, was paged in, had its
  // feature bins written and was answered "needed" (-1: never)
  let clock = 0;
  const leftAt = new Int32Array(L * M).fill(-1);
  const pagedInAt = new Int32Array(L * M).fill(-1);
  const yesAt = new Int32Array(L * M).fill(-1);
  // per layer, the latest tick written into leftAt, pagedInAt and yesAt (-1: none; the clock only
  // rises): while one is below a tick, no page of the layer has that array at or after the tick,
  // and the page's entry need not be read
  const leftLast = new Int32Array(L).fill(-1);
  const pagedInLast = new Int32Array(L).fill(-1);
  const yesLast = new Int32Array(L).fill(-1);
  // per layer, a listing of the offloaded pages written late (listLate): its step (NEVER: none), the
  // tick of its decision pass and the blocks created then
  const lateStep = new Int32Array(L).fill(NEVER);
  const lateTick = new Int32Array(L);
  const lateCreated = new Int32Array(L);
  let lastCache: PolicyView['cache'] | null = null;
  // per layer: offloaded pages that may have been used within RECENT_WINDOW steps (every offloaded
  // page used that recently is listed: listed when it leaves HBM, or when used while offloaded)
  const RECENT_WINDOW = Math.max(RECENCY_HORIZON, o.recent_steps);
  const recentList = Array.from({ length: L }, () => new Int32Array(M));
  const recentCount = new Int32Array(L);
  const inRecent = new Uint8Array(L * M);
  // the recency bin of a page unused for RECENCY_HORIZON steps or more (or never used)
  const staleBin = tree.bin(recencyFeature(Infinity));

  /** the layer's largest cumulative attention over its created blocks (1 when none is positive) */
  // per layer: the largest raw score of its observed blocks and a block that has it (-1: not kept;
  // score = raw + offset, and adding the offset keeps the order, so the largest score is the
  // largest raw's plus the offset), kept by keepLargest
  const topRaw = new Float64Array(L);
  const topBlock = new Int32Array(L).fill(-1);
  const topKnown = new Int32Array(L);
  // per layer: the running sums normStats adds, in its order, of the first k key norms (k <= sumsUpTo: still those norms)
  const sumS = Array.from({ length: L }, () => new Float64Array(M + 1));
  const sumQ = Array.from({ length: L }, () => new Float64Array(M + 1));
  const sumsUpTo = new Int32Array(L);
  /** sizes of the lists the last describe() made */
  const described = { residents: 0, explorable: 0, cands: 0 };

  // the decision pass being written by describeFast (its step, tick and the layer's feature context)
  let dT = 0;
  let dTick = 0;
  let dVer = 0;
  // (the fractional values a pass sets: NaN until the first, so that their fields hold doubles from the start)
  let dMean = Number.NaN;
  let dSd = Number.NaN;
  let dPrevOk = false;

  // the decision being taken by manage() (its layer, step, view and actions, HBM budget and incoming
  // pages, the largest score, the residents listed, whether they are scored, the victims kept):
  // read by the rules below, which are not made anew for each decision
  let mCache: PolicyView['cache'] = null as unknown as PolicyView['cache'];
  let mAct: Actions = null as unknown as Actions;
  let mL = 0;
  let mT = 0;
  let mK = 0;
  let mIncoming = 0;
  let mWarm = false;
  // (NaN until manage() sets it: a double from the start)
  let mMx = Number.NaN;
  let mResidents = 0;
  let mScored = true;
  let mFast = false;
  let mAudited = false;
  let mLowest = -1;
  let mLowestPredicted = -1;
  let mKnown = false;
  let mFailed = false;
  let mDone = 0;
  // the predicted pages capacity pressure passed over in a fast pass, in order of (value, block)
  const waiting = new Int32Array(M);
  let mWaiting = 0;

  // backingTiers' tier being visited (its chain index), the pages still to go over its quota, the
  // demotions left, and the valuation its visits use (one object per kind, filled per decision)
  let bK = 0;
  let bOver = 0;
  let bBudget = 0;
  // (mx: NaN until backingTiers() sets it, a double from the start)
  const dueValuation: TierValuation = { t: 0, mx: Number.NaN, score: scoreOf[0], raw: rawOf[0], due: { ageSteps: o.age_steps, lowImportance: o.low_importance } };
  const allValuation: TierValuation = { t: 0, mx: Number.NaN, score: scoreOf[0], raw: rawOf[0], due: null };
  return {
    o,
    setup,
    L,
    M,
    T,
    chain,
    upTo,
    exploreTiers,
    pageInTiers,
    floor,
    quotaFactor,
    score,
    tree,
    audit,
    lastUse,
    born,
    touched,
    uses,
    seen,
    norms,
    normBits,
    knOf,
    knBits,
    normWords,
    knWords,
    pageBin,
    pageWord,
    normVer,
    nsMean,
    nsSd,
    nsVer,
    nsCreated,
    nsLive,
    normsChanged,
    keyNormBins,
    layerBin,
    tierBin,
    neverBin,
    recencyBin,
    farBin,
    unknownNear,
    nearBin,
    posBin,
    posBinFor,
    feats,
    featTier,
    decStep,
    decTick,
    decCreated,
    decBlocks,
    nearAt,
    normsAt,
    normsAtVer,
    normsAtFrom,
    attList,
    trainBins,
    trainWords,
    trainLabels,
    protectFor,
    prob,
    value,
    due,
    residents,
    offloaded,
    answer,
    explorable,
    pool,
    cands,
    candKey,
    candTrigger,
    inTier,
    memList,
    memCount,
    memPos,
    memTier,
    W,
    hbmBits,
    memCreated,
    order,
    rawOf,
    scoreOf,
    ordered,
    spare,
    visited,
    massScratch,
    listedMark,
    bornUpTo,
    scoreVer,
    maxVer,
    maxCreated,
    maxScore,
    tierIdx: tierIdx as number[] | null,
    pageInTop,
    exploreTop,
    prevLayer,
    prevStep,
    clock,
    leftAt,
    pagedInAt,
    leftLast,
    pagedInLast,
    yesLast,
    yesAt,
    lateStep,
    lateTick,
    lateCreated,
    lastCache: lastCache as PolicyView['cache'] | null,
    RECENT_WINDOW,
    recentList,
    recentCount,
    inRecent,
    staleBin,
    topRaw,
    topBlock,
    topKnown,
    sumS,
    sumQ,
    sumsUpTo,
    described,
    dT,
    dTick,
    dVer,
    dMean,
    dSd,
    dPrevOk,
    mCache: mCache as PolicyView['cache'],
    mAct: mAct as Actions,
    mL,
    mT,
    mK,
    mIncoming,
    mWarm,
    mMx,
    mResidents,
    mScored,
    mFast,
    mAudited,
    mLowest,
    mLowestPredicted,
    mKnown,
    mFailed,
    mDone,
    waiting,
    mWaiting,
    bK,
    bOver,
    bBudget,
    dueValuation,
    allValuation,
  };
}

type StateFields = ReturnType<typeof makeState>;
/**
 * A dpnc instance's state. The rules and passes below are module functions of it (not closures made
 * for each instance), and every instance is made by one constructor, so has the same map: the code
 * V8 compiles for the first instance in a process serves the later ones (a closure made per
 * instance is compiled again for each new instance, with the context of the first folded in). The
 * constructor names every field, so that V8 lays them out in the object: copied in with
 * Object.assign, an object of this many fields is left in dictionary mode (checked with
 * %HasFastProperties on Node 20).
 */
interface State extends StateFields {}
class State {
  constructor(f: StateFields) {
    this.o = f.o;
    this.setup = f.setup;
    this.L = f.L;
    this.M = f.M;
    this.T = f.T;
    this.chain = f.chain;
    this.upTo = f.upTo;
    this.exploreTiers = f.exploreTiers;
    this.pageInTiers = f.pageInTiers;
    this.floor = f.floor;
    this.quotaFactor = f.quotaFactor;
    this.score = f.score;
    this.tree = f.tree;
    this.audit = f.audit;
    this.lastUse = f.lastUse;
    this.born = f.born;
    this.touched = f.touched;
    this.uses = f.uses;
    this.seen = f.seen;
    this.norms = f.norms;
    this.normBits = f.normBits;
    this.knOf = f.knOf;
    this.knBits = f.knBits;
    this.normWords = f.normWords;
    this.knWords = f.knWords;
    this.pageBin = f.pageBin;
    this.pageWord = f.pageWord;
    this.normVer = f.normVer;
    this.nsMean = f.nsMean;
    this.nsSd = f.nsSd;
    this.nsVer = f.nsVer;
    this.nsCreated = f.nsCreated;
    this.nsLive = f.nsLive;
    this.normsChanged = f.normsChanged;
    this.keyNormBins = f.keyNormBins;
    this.layerBin = f.layerBin;
    this.tierBin = f.tierBin;
    this.neverBin = f.neverBin;
    this.recencyBin = f.recencyBin;
    this.farBin = f.farBin;
    this.unknownNear = f.unknownNear;
    this.nearBin = f.nearBin;
    this.posBin = f.posBin;
    this.posBinFor = f.posBinFor;
    this.feats = f.feats;
    this.featTier = f.featTier;
    this.decStep = f.decStep;
    this.decTick = f.decTick;
    this.decCreated = f.decCreated;
    this.decBlocks = f.decBlocks;
    this.nearAt = f.nearAt;
    this.normsAt = f.normsAt;
    this.normsAtVer = f.normsAtVer;
    this.normsAtFrom = f.normsAtFrom;
    this.attList = f.attList;
    this.trainBins = f.trainBins;
    this.trainWords = f.trainWords;
    this.trainLabels = f.trainLabels;
    this.protectFor = f.protectFor;
    this.prob = f.prob;
    this.value = f.value;
    this.due = f.due;
    this.residents = f.residents;
    this.offloaded = f.offloaded;
    this.answer = f.answer;
    this.explorable = f.explorable;
    this.pool = f.pool;
    this.cands = f.cands;
    this.candKey = f.candKey;
    this.candTrigger = f.candTrigger;
    this.inTier = f.inTier;
    this.memList = f.memList;
    this.memCount = f.memCount;
    this.memPos = f.memPos;
    this.memTier = f.memTier;
    this.W = f.W;
    this.hbmBits = f.hbmBits;
    this.memCreated = f.memCreated;
    this.order = f.order;
    this.rawOf = f.rawOf;
    this.scoreOf = f.scoreOf;
    this.ordered = f.ordered;
    this.spare = f.spare;
    this.visited = f.visited;
    this.massScratch = f.massScratch;
    this.listedMark = f.listedMark;
    this.bornUpTo = f.bornUpTo;
    this.scoreVer = f.scoreVer;
    this.maxVer = f.maxVer;
    this.maxCreated = f.maxCreated;
    this.maxScore = f.maxScore;
    this.tierIdx = f.tierIdx;
    this.pageInTop = f.pageInTop;
    this.exploreTop = f.exploreTop;
    this.prevLayer = f.prevLayer;
    this.prevStep = f.prevStep;
    this.clock = f.clock;
    this.leftAt = f.leftAt;
    this.pagedInAt = f.pagedInAt;
    this.leftLast = f.leftLast;
    this.pagedInLast = f.pagedInLast;
    this.yesLast = f.yesLast;
    this.yesAt = f.yesAt;
    this.lateStep = f.lateStep;
    this.lateTick = f.lateTick;
    this.lateCreated = f.lateCreated;
    this.lastCache = f.lastCache;
    this.RECENT_WINDOW = f.RECENT_WINDOW;
    this.recentList = f.recentList;
    this.recentCount = f.recentCount;
    this.inRecent = f.inRecent;
    this.staleBin = f.staleBin;
    this.topRaw = f.topRaw;
    this.topBlock = f.topBlock;
    this.topKnown = f.topKnown;
    this.sumS = f.sumS;
    this.sumQ = f.sumQ;
    this.sumsUpTo = f.sumsUpTo;
    this.described = f.described;
    this.dT = f.dT;
    this.dTick = f.dTick;
    this.dVer = f.dVer;
    this.dMean = f.dMean;
    this.dSd = f.dSd;
    this.dPrevOk = f.dPrevOk;
    this.mCache = f.mCache;
    this.mAct = f.mAct;
    this.mL = f.mL;
    this.mT = f.mT;
    this.mK = f.mK;
    this.mIncoming = f.mIncoming;
    this.mWarm = f.mWarm;
    this.mMx = f.mMx;
    this.mResidents = f.mResidents;
    this.mScored = f.mScored;
    this.mFast = f.mFast;
    this.mAudited = f.mAudited;
    this.mLowest = f.mLowest;
    this.mLowestPredicted = f.mLowestPredicted;
    this.mKnown = f.mKnown;
    this.mFailed = f.mFailed;
    this.mDone = f.mDone;
    this.waiting = f.waiting;
    this.mWaiting = f.mWaiting;
    this.bK = f.bK;
    this.bOver = f.bOver;
    this.bBudget = f.bBudget;
    this.dueValuation = f.dueValuation;
    this.allValuation = f.allValuation;
  }
}

/** the step a page's idleness counts from (its last use, else its birth; NONE: counts as 0) */
function idleFrom(D: State, i: number) {
  return (D.lastUse[i] !== NEVER ? D.lastUse[i] : D.born[i] !== NEVER ? D.born[i] : NONE);
}

/** page (l, b) is in tier `tier` now (negative: not live) */
function member(D: State, l: number, b: number, tier: number) {
  const i = l * D.M + b;
  const old = D.memTier[i];
  if (old === tier) return;
  if (tier > 0) D.order.place(l, b, tier, idleFrom(D, i), D.rawOf[l]);
  else D.order.leave(l, b, D.rawOf[l]);
  // (a page that comes below HBM by any way may have been used lately)
  if (old <= 0 && tier > 0) toRecent(D, l, b);
  if (old >= 0) {
    const list = D.memList[l * D.T + old];
    const last = list[--D.memCount[l * D.T + old]];
    list[D.memPos[i]] = last;
    D.memPos[l * D.M + last] = D.memPos[i];
  }
  if (tier >= 0) {
    D.memPos[i] = D.memCount[l * D.T + tier];
    D.memList[l * D.T + tier][D.memCount[l * D.T + tier]++] = b;
  }
  D.memTier[i] = tier < 0 ? -1 : tier;
  if (old === 0) D.hbmBits[l * D.W + (b >> 5)] &= ~(1 << (b & 31));
  if (tier === 0) D.hbmBits[l * D.W + (b >> 5)] |= 1 << (b & 31);
}

/** the members of layer l: the blocks created since added; listed anew if a tier's count differs from the cache's */
function syncMembers(D: State, cache: PolicyView['cache'], l: number) {
  const created = cache.created[l];
  for (let b = D.memCreated[l]; b < created; b++) member(D, l, b, cache.tierOf(l, b));
  D.memCreated[l] = created;
  for (let tier = 0; tier < D.T; tier++) {
    if (D.memCount[l * D.T + tier] === cache.countIn(l, tier)) continue;
    for (let b = 0; b < created; b++) member(D, l, b, cache.tierOf(l, b));
    return;
  }
}

/**
 * After an observation of layer l: the largest raw score. A sparse observation raises only its
 * listed blocks' raws (the others keep theirs or lose the uniform share), so unless the block of
 * the largest lost some, the largest is among it, the listed blocks and the blocks new to the scores.
 */
function keepLargest(D: State, obs: Observation) {
  const l = obs.layer;
  const known = D.score.known(l);
  let top = D.topBlock[l];
  if (top < 0 || obs.idx === null || D.score.raw(l, top) < D.topRaw[l]) {
    let m = -Infinity;
    top = -1;
    for (let b = 0; b < known; b++) {
      const r = D.score.raw(l, b);
      if (r > m) {
        m = r;
        top = b;
      }
    }
    D.topRaw[l] = m;
    D.topBlock[l] = top;
    D.topKnown[l] = known;
    return;
  }
  let m = D.score.raw(l, top);
  const idx = obs.idx;
  for (let k = 0; k < idx.length; k++) {
    const b = idx[k];
    if (b >= known) continue;
    const r = D.score.raw(l, b);
    if (r > m) {
      m = r;
      top = b;
    }
  }
  for (let b = D.topKnown[l]; b < known; b++) {
    const r = D.score.raw(l, b);
    if (r > m) {
      m = r;
      top = b;
    }
  }
  D.topRaw[l] = m;
  D.topBlock[l] = top;
  D.topKnown[l] = known;
}

function layerMax(D: State, l: number, created: number) {
  if (D.maxVer[l] === D.scoreVer[l] && D.maxCreated[l] === created) return D.maxScore[l];
  let m = 0;
  // the blocks below `created` not observed yet score 0
  if (D.topBlock[l] >= 0 && D.topKnown[l] === D.score.known(l) && created >= D.topKnown[l]) m = Math.max(0, D.topRaw[l] + D.score.offsetOf(l));
  else for (let b = 0; b < created; b++) m = Math.max(m, D.score.get(l, b));
  D.maxVer[l] = D.scoreVer[l];
  D.maxCreated[l] = created;
  D.maxScore[l] = m > 0 ? m : 1;
  return D.maxScore[l];
}

function importance(D: State, l: number, b: number, mx: number) {
  return Math.max(0, D.score.get(l, b)) / mx;
}

/** steps since the page's last use (or since it was created, when never used) */
function sinceUse(D: State, i: number, t: number) {
  return (D.lastUse[i] === NEVER ? (D.born[i] === NEVER ? 0 : t - D.born[i]) : t - D.lastUse[i]);
}

/** weighted LRU x importance at step t */
function valueAt(D: State, l: number, b: number, mx: number, t: number) {
  return importance(D, l, b, mx) / (1 + Math.max(0, sinceUse(D, l * D.M + b, t)));
}

/** the key-norm statistics of layer l over its live pages, recomputed (new version) when its norms or pages changed */
function keyNormStats(D: State, cache: PolicyView['cache'], l: number, created: number) {
  const live = cache.live(l);
  if (D.normsChanged[l] === 0 && D.nsCreated[l] === created && D.nsLive[l] === live) return;
  const ns = live === created ? runningStats(D, l, created) : normStats(D.norms[l], created, (b) => cache.tierOf(l, b) >= 0);
  if (D.normsChanged[l] === 1 || !(ns.mean === D.nsMean[l] && ns.sd === D.nsSd[l])) D.nsVer[l]++;
  D.nsMean[l] = ns.mean;
  D.nsSd[l] = ns.sd;
  D.normsChanged[l] = 0;
  D.nsCreated[l] = created;
  D.nsLive[l] = live;
}

/** normStats(norms[l], created, every block) from the running sums, extended from the first norm changed */
function runningStats(D: State, l: number, created: number): { mean: number; sd: number } {
  const nl = D.norms[l];
  const S = D.sumS[l];
  const Q = D.sumQ[l];
  for (let b = D.sumsUpTo[l]; b < created; b++) {
    S[b + 1] = S[b] + nl[b];
    Q[b + 1] = Q[b] + nl[b] * nl[b];
  }
  if (created > D.sumsUpTo[l]) D.sumsUpTo[l] = created;
  const mean = created ? S[created] / created : 0;
  return { mean, sd: created ? Math.sqrt(Math.max(0, Q[created] / created - mean * mean)) : 0 };
}

/**
 * The decision's pass over layer l's pages for step t, every live page: its feature bins, tree
 * probability and value; the lists of residents, of offloaded pages (answered to the audit), of
 * the exploration pool and (importance trigger off) of the trigger candidates. Returns the
 * layer's largest score. (describeFast does the same work for the pages its rules read.)
 */
function describe(D: State, cache: PolicyView['cache'], l: number, t: number, nBlocksThen: number, created: number, warm: boolean, audited: boolean): number {
  const thr = D.o.predict_threshold;
  const candsNow = !D.o.importance_trigger;
  let nResident = 0;
  let nExplorable = 0;
  let nCands = 0;
  const mx = layerMax(D, l, created);
  keyNormStats(D, cache, l, created);
  const ver = D.nsVer[l];
  const mean = D.nsMean[l];
  const sd = D.nsSd[l];
  const nl = D.norms[l];
  // the layer observed last (one layer ahead, the layer before the one computing now), at t or t - 1
  const prevOk = D.prevLayer >= 0 && (D.prevStep === t || D.prevStep === t - 1);
  recordDecision(D, l, t, created, nBlocksThen, prevOk);
  const lb = D.layerBin[l];
  const ageSteps = D.o.age_steps;
  const lowImportance = D.o.low_importance;
  if (D.posBinFor !== nBlocksThen) {
    for (let b = 0; b < D.M; b++) D.posBin[b] = D.tree.bin(positionFeature(b, nBlocksThen));
    D.posBinFor = nBlocksThen;
  }
  let nOffloaded = 0;
  // the audit's listing, written here (direct) or handed over after the pass
  const direct = audited && D.audit.beginListing(l, t);
  const listedFor = D.audit.listedFor;
  const said = D.audit.answer;
  let nYes = 0;
  let end = 0;
  for (let b = 0; b < created; b++) {
    const tier = cache.tierOf(l, b);
    if (tier < 0) continue;
    const i = l * D.M + b;
    const at = i * F;
    const lu = D.lastUse[i];
    if (lu === NEVER) D.feats[at] = D.neverBin;
    else {
      const r = t - lu;
      D.feats[at] = r >= 0 ? (r < D.recencyBin.length ? D.recencyBin[r] : D.farBin) : D.tree.bin(recFeature(r));
    }
    D.feats[at + 1] = D.pageBin[4 * i + PB_FREQ];
    D.feats[at + 2] = D.pageBin[4 * i + PB_MASS];
    if (D.normVer[i] !== ver) {
      D.pageBin[4 * i + PB_NORM] = D.keyNormBins.ofNear(sd > 0 ? (nl[b] - mean) / sd : 0, D.pageBin[4 * i + PB_NORM]);
      D.normVer[i] = ver;
    }
    D.feats[at + 3] = D.pageBin[4 * i + PB_NORM];
    D.feats[at + 4] = D.posBin[b];
    D.feats[at + 5] = lb;
    D.feats[at + 6] = D.tierBin[tier];
    D.feats[at + 7] = prevOk ? D.nearBin[b] : D.unknownNear;
    D.featTier[i] = tier;
    const p = D.tree.probabilityOfBins(D.feats, at);
    D.prob[b] = p;
    const since = lu === NEVER ? (D.born[i] === NEVER ? 0 : t - D.born[i]) : t - lu;
    const imp = importance(D, l, b, mx);
    D.value[b] = imp / (1 + Math.max(0, since));
    D.due[b] = since >= ageSteps || imp < lowImportance ? 1 : 0;
    if (tier === 0) {
      D.residents[nResident++] = b;
      continue;
    }
    const yes = warm && p > thr;
    if (direct) {
      listedFor[i] = t;
      said[i] = yes ? 1 : 0;
      nOffloaded++;
      if (yes) nYes++;
      end = b + 1;
    } else if (audited) {
      D.offloaded[nOffloaded++] = b;
      D.answer[b] = yes ? 1 : 0;
    }
    if (tier <= D.exploreTop) D.explorable[nExplorable++] = b;
    if (candsNow && tier <= D.pageInTop) {
      if (yes) {
        D.cands[nCands] = b;
        D.candKey[b] = -(1 + p);
        D.candTrigger[b] = TREE;
        nCands++;
      } else if (D.o.recent_steps > 0 && D.lastUse[i] !== NEVER && t - D.lastUse[i] <= D.o.recent_steps) {
        D.cands[nCands] = b;
        D.candKey[b] = -D.value[b];
        D.candTrigger[b] = RECENT;
        nCands++;
      }
    }
  }
  if (direct) D.audit.endListing(l, nOffloaded, nYes, end);
  else if (audited) D.audit.listOffloaded(l, t, D.offloaded, D.answer, nOffloaded);
  D.described.residents = nResident;
  D.described.explorable = nExplorable;
  D.described.cands = nCands;
  return mx;
}

/** page (l, b)'s feature bins for the decision pass (written, for training), with tier `tier` */
function pageBins(D: State, l: number, b: number, tier: number): void {
  const i = l * D.M + b;
  const at = i * F;
  const lu = D.lastUse[i];
  if (lu === NEVER) D.feats[at] = D.neverBin;
  else {
    const r = D.dT - lu;
    D.feats[at] = r >= 0 ? (r < D.recencyBin.length ? D.recencyBin[r] : D.farBin) : D.tree.bin(recFeature(r));
  }
  D.feats[at + 1] = D.pageBin[4 * i + PB_FREQ];
  D.feats[at + 2] = D.pageBin[4 * i + PB_MASS];
  if (D.normVer[i] !== D.dVer) {
    D.pageBin[4 * i + PB_NORM] = D.keyNormBins.ofNear(D.dSd > 0 ? (D.normsAt[l][b] - D.dMean) / D.dSd : 0, D.pageBin[4 * i + PB_NORM]);
    D.normVer[i] = D.dVer;
  }
  D.feats[at + 3] = D.pageBin[4 * i + PB_NORM];
  D.feats[at + 4] = D.posBin[b];
  D.feats[at + 5] = D.layerBin[l];
  D.feats[at + 6] = D.tierBin[tier];
  D.feats[at + 7] = D.dPrevOk ? D.nearBin[b] : D.unknownNear;
}

/**
 * The decision pass for (l, t) (tick dTick) is the layer's last: what training on t's attention
 * reads of it. The bins of a trained page are computed then (in observe), from the state the
 * pass saw: its own history is not changed before that step's attention, the rest is kept here.
 */
function recordDecision(D: State, l: number, t: number, created: number, nBlocksThen: number, prevOk: boolean) {
  D.decStep[l] = t;
  D.decTick[l] = D.dTick;
  D.decCreated[l] = created;
  D.decBlocks[l] = nBlocksThen;
  if (prevOk) D.nearAt[l].set(D.nearBin);
  else D.nearAt[l].fill(D.unknownNear);
  if (D.normsAtVer[l] !== D.nsVer[l]) {
    // (the norms from the first one changed since the last copy)
    if (D.normsAtFrom[l] < D.M) D.normsAt[l].set(D.norms[l].subarray(D.normsAtFrom[l]), D.normsAtFrom[l]);
    D.normsAtFrom[l] = D.M;
    D.normsAtVer[l] = D.nsVer[l];
  }
}

/**
 * Write layer l's listing of the late listing (the pages offloaded at its decision pass, answered
 * "needed" where yesAt is its tick) into the audit for blocks b of `blocks` (null: every block
 * below the count created then). Valid until the layer's next decision pass: the pages that left
 * HBM or were paged in since the pass are told by their ticks.
 */
function writeLate(D: State, l: number, blocks: ArrayLike<number> | null) {
  const cache = D.lastCache!;
  const t = D.lateStep[l];
  const tick = D.lateTick[l];
  const created = D.lateCreated[l];
  const listedFor = D.audit.listedFor;
  const said = D.audit.answer;
  const n = blocks === null ? created : blocks.length;
  const leftSince = D.leftLast[l] >= tick;
  const pagedInSince = D.pagedInLast[l] >= tick;
  const yesThen = D.yesLast[l] >= tick;
  for (let j = 0; j < n; j++) {
    const b = blocks === null ? j : blocks[j];
    if (b >= created) continue;
    const i = l * D.M + b;
    if ((cache.tierOf(l, b) > 0 && !(leftSince && D.leftAt[i] >= tick)) || (pagedInSince && D.pagedInAt[i] >= tick)) {
      listedFor[i] = t;
      said[i] = yesThen && D.yesAt[i] === tick ? 1 : 0;
    } else if (listedFor[i] === t) listedFor[i] = -1;
  }
}

/** a page of layer l left HBM: its tick, and the recent list */
function leftHbmAt(D: State, l: number, b: number) {
  D.leftAt[l * D.M + b] = D.clock;
  if (D.clock > D.leftLast[l]) D.leftLast[l] = D.clock;
  toRecent(D, l, b);
}

/** page (l, b) is offloaded and may have been used lately: on the recent list (once) */
function toRecent(D: State, l: number, b: number) {
  const i = l * D.M + b;
  if (D.inRecent[i] === 0) {
    D.inRecent[i] = 1;
    D.recentList[l][D.recentCount[l]++] = b;
  }
}

/**
 * describe() when no page offloaded and unused for RECENCY_HORIZON steps can be answered "needed"
 * (no leaf the tree answers yes at is reached with the stale recency bin): the pass writes the
 * residents' bins, probabilities and values, lists the backing tiers' pages, and of the offloaded
 * pages visits only the recent list (the candidates and every "needed" answer); the audit's
 * listing is written late (writeLate), the exploration pool listed when wanted, and an offloaded
 * page's bins when it is paged in.
 */
function describeFast(D: State, cache: PolicyView['cache'], l: number, t: number, nBlocksThen: number, created: number, warm: boolean, audited: boolean): number {
  const thr = D.o.predict_threshold;
  const mx = layerMax(D, l, created);
  keyNormStats(D, cache, l, created);
  D.dT = t;
  D.dTick = ++D.clock;
  D.dVer = D.nsVer[l];
  D.dMean = D.nsMean[l];
  D.dSd = D.nsSd[l];
  D.dPrevOk = D.prevLayer >= 0 && (D.prevStep === t || D.prevStep === t - 1);
  if (D.posBinFor !== nBlocksThen) {
    for (let b = 0; b < D.M; b++) D.posBin[b] = D.tree.bin(positionFeature(b, nBlocksThen));
    D.posBinFor = nBlocksThen;
  }
  recordDecision(D, l, t, created, nBlocksThen, D.dPrevOk);
  // the residents (in no particular order), from the layer's HBM members (their bins: when read)
  const nResident = D.memCount[l * D.T];
  D.residents.set(D.memList[l * D.T].subarray(0, nResident));
  const nOffloaded = cache.live(l) - nResident;
  // one past the last offloaded page
  const end = offloadedEnd(D.hbmBits, l * D.W, created, cache, l);
  let nYes = 0;
  let nCands = 0;
  const list = D.recentList[l];
  let kept = 0;
  for (let j = 0; j < D.recentCount[l]; j++) {
    const b = list[j];
    const i = l * D.M + b;
    const tier = cache.tierOf(l, b);
    const lu = D.lastUse[i];
    if (tier <= 0 || lu === NEVER || t - lu > D.RECENT_WINDOW) {
      D.inRecent[i] = 0;
      continue;
    }
    list[kept++] = b;
    pageBins(D, l, b, tier);
    const p = D.tree.probabilityOfBins(D.feats, i * F);
    D.prob[b] = p;
    D.value[b] = valueAt(D, l, b, mx, t);
    const yes = warm && p > thr;
    if (yes) {
      D.yesAt[i] = D.dTick;
      if (D.dTick > D.yesLast[l]) D.yesLast[l] = D.dTick;
      nYes++;
    }
    if (tier > D.pageInTop) continue;
    if (yes) {
      D.cands[nCands] = b;
      D.candKey[b] = -(1 + p);
      D.candTrigger[b] = TREE;
      nCands++;
    } else if (D.o.recent_steps > 0 && t - lu <= D.o.recent_steps) {
      D.cands[nCands] = b;
      D.candKey[b] = -D.value[b];
      D.candTrigger[b] = RECENT;
      nCands++;
    }
  }
  D.recentCount[l] = kept;
  if (audited) {
    D.audit.beginListing(l, t);
    D.audit.endListing(l, nOffloaded, nYes, end);
    D.lateStep[l] = t;
    D.lateTick[l] = D.dTick;
    D.lateCreated[l] = created;
  }
  D.described.residents = nResident;
  D.described.explorable = -1;
  D.described.cands = nCands;
  return mx;
}

function residentNow(D: State) {
  return D.mCache.countIn(D.mL, 0);
}

function predicted(D: State, b: number) {
  return D.mWarm && D.prob[b] > D.o.predict_threshold;
}

/** a fast pass leaves the residents' probabilities and values to the first rule that reads them */
function scoreResidents(D: State) {
  D.mScored = true;
  for (let j = 0; j < D.mResidents; j++) {
    const b = D.residents[j];
    pageBins(D, D.mL, b, 0);
    D.prob[b] = D.tree.probabilityOfBins(D.feats, (D.mL * D.M + b) * F);
    D.value[b] = valueAt(D, D.mL, b, D.mMx, D.mT);
  }
}

/**
 * the resident page to give up: not protected for t, of value below `below`, not predicted
 * needed, of lowest value (ties: the lowest block); with `anyway`, a predicted page when no other
 * may go. The two candidates (lowest not predicted, lowest predicted) come from one scan of the
 * pages resident when the decision began (a page paged in since is protected for t), kept until a
 * demotion from HBM changes the resident set.
 */
function victim(D: State, below: number, anyway = false) {
  if (!D.mKnown) {
    if (!D.mScored) scoreResidents(D);
    D.mLowest = D.mLowestPredicted = -1;
    for (let j = 0; j < D.mResidents; j++) {
      const b = D.residents[j];
      if (D.mCache.tierOf(D.mL, b) !== 0 || D.protectFor[D.mL * D.M + b] === D.mT) continue;
      // (ties: the lowest block; the residents may be listed in any order)
      if (predicted(D, b)) {
        if (D.mLowestPredicted < 0 || D.value[b] < D.value[D.mLowestPredicted] || (D.value[b] === D.value[D.mLowestPredicted] && b < D.mLowestPredicted)) D.mLowestPredicted = b;
      } else if (D.mLowest < 0 || D.value[b] < D.value[D.mLowest] || (D.value[b] === D.value[D.mLowest] && b < D.mLowest)) D.mLowest = b;
    }
    D.mKnown = true;
  }
  const best = D.mLowest >= 0 && D.value[D.mLowest] < below ? D.mLowest : -1;
  if (best >= 0 || !anyway) return best;
  return D.mLowestPredicted >= 0 && D.value[D.mLowestPredicted] < below ? D.mLowestPredicted : -1;
}

/** page b went down from HBM: its tick, and its tier's members */
function leftHbm(D: State, b: number) {
  leftHbmAt(D, D.mL, b);
  member(D, D.mL, b, D.mCache.tierOf(D.mL, b));
}

function demoteVictim(D: State, vb: number): boolean {
  if (!D.mAct.demote(D.mL, vb, D.chain[0], 16)) return false;
  leftHbm(D, vb);
  D.mKnown = false;
  return true;
}

/** capacity pressure's visit: page b goes while HBM is over (mFailed: a demotion refused) */
function give(D: State, b: number) {
  if (residentNow(D) + D.mIncoming <= D.mK) return false;
  if (!demoteVictim(D, b)) D.mFailed = true;
  return !D.mFailed && residentNow(D) + D.mIncoming > D.mK;
}

/** give(b) for a resident not predicted needed (its probability computed here); a predicted one waits */
function giveUnlessPredicted(D: State, b: number) {
  pageBins(D, D.mL, b, 0);
  D.prob[b] = D.tree.probabilityOfBins(D.feats, (D.mL * D.M + b) * F);
  if (!predicted(D, b)) return give(D, b);
  D.waiting[D.mWaiting++] = b;
  return true;
}

/** page b in; when HBM is full, a victim of value below `below` makes room */
function pageIn(D: State, b: number, trigger: Trigger, below: number): boolean {
  if (residentNow(D) + D.mIncoming >= D.mK) {
    const vb = victim(D, below);
    if (vb < 0 || !demoteVictim(D, vb)) return false;
  }
  const l = D.mL;
  const t = D.mT;
  const i = l * D.M + b;
  // its tier at the pass (training reads it)
  D.featTier[i] = D.mCache.tierOf(l, b);
  const bits = D.mCache.bitsOf(l, b);
  if (!D.mAct.promote(l, b)) return false;
  member(D, l, b, 0);
  D.protectFor[i] = t;
  D.touched[i] = t;
  D.pagedInAt[i] = D.dTick;
  if (D.dTick > D.pagedInLast[l]) D.pagedInLast[l] = D.dTick;
  if (D.mAudited) {
    if (D.mFast) {
      D.audit.listedFor[i] = t;
      D.audit.answer[i] = D.yesAt[i] === D.dTick ? 1 : 0;
    }
    D.audit.pagedInFor(l, b, t, trigger, D.mCache.bytesOf(bits));
  }
  return true;
}

/** the trigger page-ins' visit (most probable first, then highest value), page_in at most */
function pageInCandidate(D: State, b: number) {
  if (D.mDone >= D.o.page_in) return false;
  const trigger = TRIGGERS[D.candTrigger[b]];
  if (pageIn(D, b, trigger, trigger === 'tree' ? Infinity : D.value[b])) D.mDone++;
  return D.mDone < D.o.page_in;
}


/**
 * Layer l's pages for step t. `decision`: the page-in decision (predictor, triggers, exploration,
 * backing tiers, features recorded for training); otherwise only room for `incoming` new pages.
 */
function manage(D: State, v: PolicyView, act: Actions, l: number, incoming: number, t: number, nBlocksThen: number, decision: boolean, audited: boolean) {
  const cache = v.cache;
  const created = cache.created[l];
  const K = Math.max(1, v.budgetBlocks);
  D.mCache = cache;
  D.mAct = act;
  D.mL = l;
  D.mT = t;
  D.mK = K;
  D.mIncoming = incoming;
  D.mAudited = audited;
  // the tree predicts nothing before it has seen tree_grace samples (one sample would make every page "needed")
  const warm = D.tree.seen >= D.o.tree_grace;
  D.mWarm = warm;
  syncMembers(D, cache, l);
  let mx = 1;
  let nResident = 0;
  let nExplorable = 0;
  let nCands = 0;
  // trigger candidates are listed with the features when the importance trigger is off (its bar,
  // the least important resident page, is known only after the demotions from HBM)
  const candsNow = !D.o.importance_trigger;
  if (D.tierIdx === null) {
    // the cache's tier indices (its tiers are the machine's: they do not change)
    D.tierIdx = D.chain.map((name) => cache.tierIndex(name));
    for (const name of D.pageInTiers) D.pageInTop = Math.max(D.pageInTop, cache.tierIndex(name));
    for (const name of D.exploreTiers) D.exploreTop = Math.max(D.exploreTop, cache.tierIndex(name));
  }
  let fast = false;
  if (decision) {
    // a late listing not settled is written out before this pass changes anything
    if (D.lateStep[l] !== NEVER) {
      writeLate(D, l, null);
      D.lateStep[l] = NEVER;
    }
    fast = candsNow && !(audited && D.audit.isListing(l, t)) && !(warm && D.tree.reachesAbove(0, D.staleBin, D.o.predict_threshold));
    if (fast) mx = describeFast(D, cache, l, t, nBlocksThen, created, warm, audited);
    else {
      D.dTick = ++D.clock;
      mx = describe(D, cache, l, t, nBlocksThen, created, warm, audited);
    }
    nResident = D.described.residents;
    nExplorable = D.described.explorable;
    nCands = D.described.cands;
  } else {
    if (residentNow(D) + incoming <= K) return;
    mx = layerMax(D, l, created);
    for (let b = 0; b < created; b++) {
      if (cache.tierOf(l, b) !== 0) continue;
      D.prob[b] = 0;
      D.value[b] = valueAt(D, l, b, mx, t);
      D.residents[nResident++] = b;
    }
  }
  D.mFast = fast;
  D.mMx = mx;
  D.mResidents = nResident;
  D.mScored = !fast;
  D.mKnown = false;
  // LRU duration in HBM
  if (decision && D.o.hbm_age_steps > 0) {
    if (!D.mScored) scoreResidents(D);
    // in block order (a fast pass lists the residents in any order)
    D.residents.subarray(0, nResident).sort();
    for (let j = 0; j < nResident; j++) {
      const b = D.residents[j];
      const i = l * D.M + b;
      if (cache.tierOf(l, b) !== 0 || D.protectFor[i] === t || predicted(D, b)) continue;
      // steps before t without a use, counted from its last use or page-in, whichever is later
      const idle = Math.min(sinceUse(D, i, t), D.touched[i] === NEVER ? Infinity : t - D.touched[i]) - 1;
      if (idle >= D.o.hbm_age_steps && act.demote(l, b, D.chain[0], 16)) leftHbm(D, b);
    }
  }
  // capacity pressure: room for the new page. The victims are victim(Infinity, true) one after
  // another: as values do not change within a decision, the eligible residents not predicted
  // needed in order of (value, block), then the predicted ones in that order.
  if (residentNow(D) + incoming > K && !D.mScored) {
    // (a fast pass: the residents' values, and the probabilities of the pages visited only, in
    // order of (value, block): a predicted one waits, in that order, for the others to run out)
    let n = 0;
    for (let j = 0; j < nResident; j++) {
      const b = D.residents[j];
      if (cache.tierOf(l, b) !== 0 || D.protectFor[l * D.M + b] === t) continue;
      D.value[b] = valueAt(D, l, b, mx, t);
      D.spare[n++] = b;
    }
    D.mFailed = false;
    D.mWaiting = 0;
    D.ordered.visit(D.spare, n, D.value, residentNow(D) + incoming - K, giveUnlessPredicted, D);
    for (let j = 0; j < D.mWaiting && !D.mFailed && give(D, D.waiting[j]); j++);
    D.mKnown = false;
  } else if (residentNow(D) + incoming > K) {
    let n0 = 0;
    let n1 = 0;
    for (let j = 0; j < nResident; j++) {
      const b = D.residents[j];
      if (cache.tierOf(l, b) !== 0 || D.protectFor[l * D.M + b] === t) continue;
      if (predicted(D, b)) D.spare[D.M - 1 - n1++] = b;
      else D.spare[n0++] = b;
    }
    D.mFailed = false;
    D.ordered.visit(D.spare, n0, D.value, residentNow(D) + incoming - K, give, D);
    if (!D.mFailed && residentNow(D) + incoming > K) D.ordered.visit(D.spare.subarray(D.M - n1), n1, D.value, residentNow(D) + incoming - K, give, D);
    D.mKnown = false;
  }
  if (!decision) return;

  // trigger page-ins: predicted access (any victim not predicted needed), then recency and
  // importance (a victim not predicted needed and of lower value)
  if (!candsNow) {
    let lowestImportance = Infinity;
    for (let b = 0; b < created; b++) if (cache.tierOf(l, b) === 0) lowestImportance = Math.min(lowestImportance, importance(D, l, b, mx));
    // (candidates are pages that were offloaded when the decision began: one demoted by it stays out)
    for (let b = 0; b < created; b++) {
      const i = l * D.M + b;
      if (cache.tierOf(l, b) <= 0 || cache.tierOf(l, b) > D.pageInTop || D.featTier[i] <= 0) continue;
      let trigger = -1;
      if (predicted(D, b)) trigger = TREE;
      else if (D.o.recent_steps > 0 && D.lastUse[i] !== NEVER && t - D.lastUse[i] <= D.o.recent_steps) trigger = RECENT;
      else if (importance(D, l, b, mx) > lowestImportance) trigger = IMPORTANT;
      if (trigger < 0) continue;
      D.cands[nCands++] = b;
      D.candKey[b] = trigger === TREE ? -(1 + D.prob[b]) : -D.value[b];
      D.candTrigger[b] = trigger;
    }
  }
  // most probable (tree) first, then highest value; ties: the lowest block
  D.mDone = 0;
  if (nCands > 0) D.ordered.visit(D.cands, nCands, D.candKey, D.o.page_in, pageInCandidate, D);
  // exploration: a free slot takes an offloaded page (in explore_max_tier or faster) drawn at
  // random (a hash of seed, layer and step: runs repeat exactly)
  for (let k = 0; k < D.o.explore && residentNow(D) + incoming < K; k++) {
    let count = 0;
    if (fast) {
      // the pages offloaded at the pass (not since: those left HBM after its tick) in explore_max_tier or faster
      for (let b = 0; b < created; b++) {
        const tier = cache.tierOf(l, b);
        if (tier > 0 && tier <= D.exploreTop && D.leftAt[l * D.M + b] < D.dTick) D.pool[count++] = b;
      }
    } else {
      for (let j = 0; j < nExplorable; j++) {
        const b = D.explorable[j];
        if (cache.tierOf(l, b) > 0) D.pool[count++] = b;
      }
    }
    if (count === 0) break;
    if (!pageIn(D, D.pool[mix(D.o.seed, l, t, k) % count], 'explore', -Infinity)) break;
  }

  backingTiers(D, cache, l, K, mx, t);
}

/** page b one tier down from backingTiers' tier; it joins the next tier's members */
function down(D: State, b: number): boolean {
  if (!D.mAct.demote(D.mL, b, D.chain[D.bK + 1], 16)) return false;
  member(D, D.mL, b, D.mCache.tierOf(D.mL, b));
  return true;
}

function downOver(D: State, b: number) {
  if (down(D, b)) D.bOver--;
  return D.bOver > 0;
}

function downDue(D: State, b: number) {
  if (down(D, b)) D.bBudget--;
  return D.bBudget > 0;
}

/**
 * Layer l's backing tiers at the end of a decision: capacity pressure, then LRU age / low
 * importance, one tier down.
 */
function backingTiers(D: State, cache: PolicyView['cache'], l: number, K: number, mx: number, t: number) {
  const idx = D.tierIdx!;
  D.bBudget = D.o.demote_max;
  D.dueValuation.t = D.allValuation.t = t;
  D.dueValuation.mx = D.allValuation.mx = mx;
  D.dueValuation.score = D.allValuation.score = D.scoreOf[l];
  D.dueValuation.raw = D.allValuation.raw = D.rawOf[l];
  for (let k = 0; k + 1 < D.chain.length; k++) {
    const tier = idx[k];
    D.bK = k;
    const factor = D.quotaFactor[D.chain[k]];
    const quota = factor > 0 ? Math.floor(factor * K) : Infinity;
    // the tier's pages, visited in order of value at t (ties: the lowest block): its members, a
    // page moved down joining the next tier's
    const count = D.memCount[l * D.T + tier];
    // over its quota, or too full for one more page per layer (a low watermark): the excess goes down
    D.bOver = Math.max(count - quota, cache.free(tier) < cache.bytesOf(16) * D.L ? 1 : 0);
    const ageDown = BACKING.indexOf(D.chain[k + 1]) <= D.floor;
    if (D.bOver <= 0 && (D.bBudget <= 0 || !ageDown)) continue;
    // the excess goes first, in order, until it is gone; the pages after it in that order (those
    // not visited) may go down on age / importance. The tier order gives that order while each
    // page visited moves; from a page that does not, the tier's values are computed and sorted.
    let stuck = -1;
    if (D.bOver > 0) {
      stuck = D.order.visit(l, tier, D.allValuation, downOver, D);
      if (stuck >= 0) {
        D.bBudget = visitSlowly(D, l, tier, t, mx, stuck, D.bOver, ageDown ? D.bBudget : 0);
        continue;
      }
    }
    if (D.bBudget > 0 && ageDown) {
      // only pages due for demotion move, the lowest values first, until the budget is spent
      stuck = D.order.visit(l, tier, D.dueValuation, downDue, D);
      if (stuck >= 0) D.bBudget = visitSlowly(D, l, tier, t, mx, -1, 0, D.bBudget, stuck);
    }
  }
}


/**
 * backingTiers' two visits of tier `tier` of layer l, from where the tier order left off: the
 * excess (`over` more pages; `passed`: a page visited that did not move) and then the due pages
 * (`budget` moves; `skip`: a due page visited that did not move), every value computed; the budget left.
 */
function visitSlowly(D: State, l: number, tier: number, t: number, mx: number, passed: number, over: number, budget: number, skip = -1): number {
  const count = D.memCount[l * D.T + tier];
  const ids = D.inTier;
  ids.set(D.memList[l * D.T + tier].subarray(0, count));
  for (let j = 0; j < count; j++) {
    const b = ids[j];
    const i = l * D.M + b;
    const since = sinceUse(D, i, t);
    const imp = importance(D, l, b, mx);
    D.value[b] = imp / (1 + Math.max(0, since));
    D.due[b] = since >= D.o.age_steps || imp < D.o.low_importance ? 1 : 0;
    D.visited[b] = b === passed || b === skip ? 1 : 0;
  }
  // the pages not visited yet (ids[0 .. rest))
  let rest = 0;
  for (let j = 0; j < count; j++) if (D.visited[ids[j]] === 0) ids[rest++] = ids[j];
  if (over > 0) {
    D.ordered.visit(
      ids,
      rest,
      D.value,
      over,
      (_, b) => {
        D.visited[b] = 1;
        if (down(D, b)) over--;
        return over > 0;
      },
      D,
    );
  }
  if (budget > 0) {
    let nDue = 0;
    for (let j = 0; j < rest; j++) if (D.visited[ids[j]] === 0 && D.due[ids[j]] === 1) ids[nDue++] = ids[j];
    D.ordered.visit(
      ids,
      nDue,
      D.value,
      budget,
      (_, b) => {
        if (down(D, b)) budget--;
        return budget > 0;
      },
      D,
    );
  }
  return budget;
}

/** the policy's decide(): the layer's decision, and the next layer's page-in decision one layer ahead */
function decidePages(D: State, v: PolicyView, act: Actions): void {
  const l = v.layer;
  D.lastCache = v.cache;
  // the key norms kept, compared bit for bit (a change of bits only, as 0 to -0, recomputes the same)
  // (the statistics' running sums are kept up to the first block changed)
  // (the kept norms equal the view's after every decision of the layer, so the compare starts
  // at the view's keyNormsFrom: every block below it kept its norm since the layer's last one)
  const kn = v.keyNorms;
  let from = v.keyNormsFrom ?? 0;
  if (D.knOf[l] !== kn) {
    D.knOf[l] = kn;
    const len = Math.min(D.M, kn.length);
    D.knBits[l] = new Int32Array(kn.buffer, kn.byteOffset, len);
    D.knWords[l] = kn.byteOffset % 8 === 0 ? new Float64Array(kn.buffer, kn.byteOffset, len >> 1) : null;
    from = 0;
  }
  const now = D.knBits[l];
  const kept = D.normBits[l];
  const b = firstChanged(now, kept, D.knWords[l], D.normWords[l], from);
  if (b >= 0) {
    D.normsChanged[l] = 1;
    kept.set(now.subarray(b), b);
    if (b < D.sumsUpTo[l]) D.sumsUpTo[l] = b;
    if (b < D.normsAtFrom[l]) D.normsAtFrom[l] = b;
  }
  const incoming = v.newBlock ? 1 : 0;
  if (v.step < 0) {
    // prefill: fit the budget; the features for step 0 are recorded (training), nothing audited
    manage(D, v, act, l, 0, 0, v.nBlocks, true, false);
    return;
  }
  // this layer: its page-in decision was taken one layer ahead (with one layer: here)
  const here = D.L === 1;
  manage(D, v, act, l, incoming, v.step, v.nBlocks, here, here);
  act.skipExcept(null, 'offloaded');
  if (here) return;
  // one layer ahead: the next layer's page-ins overlap this layer's compute
  const nextStep = l + 1 < D.L ? v.step : v.step + 1;
  if (nextStep >= D.setup.header.steps) return;
  const nl2 = l + 1 < D.L ? l + 1 : 0;
  const nBlocksThen = Math.ceil((v.contextTokens + (nextStep - v.step)) / D.setup.blockSize);
  manage(D, v, act, nl2, nBlocksThen > v.cache.created[nl2] ? 1 : 0, nextStep, nBlocksThen, true, true);
}

/** the policy's observe(): scores, the audit's settling, the pages' history, and the tree's training on the attended pages */
function observePages(D: State, obs: Observation): void {
  const l = obs.layer;
  const s = obs.step;
  const n = obs.nBlocks;
  const att = obs.attended;
  // the attended blocks in block order: from the HBM members when they hold every one (the
  // kernel attends HBM, as this policy skips every offloaded block), else from every block
  const attendedList = D.attList;
  let nAtt = 0;
  const words = (n + 31) >> 5;
  for (let w = 0; w < words; w++) {
    let bits = D.hbmBits[l * D.W + w];
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const b = (w << 5) + 31 - Math.clz32(low);
      if (b < n && att[b]) attendedList[nAtt++] = b;
    }
  }
  if (nAtt !== obs.attendedCount) {
    nAtt = 0;
    for (let b = 0; b < n; b++) if (att[b]) attendedList[nAtt++] = b;
  }
  D.score.observe(obs, attendedList, nAtt);
  keepLargest(D, obs);
  D.scoreVer[l]++;
  if (s >= 0) {
    if (D.lateStep[l] === s) {
      writeLate(D, l, obs.idx !== null && !D.audit.readsEveryPage(obs) ? obs.idx : null);
      D.lateStep[l] = NEVER;
    }
    D.audit.settle(obs);
  }
  const base = l * D.M;
  for (let b = D.bornUpTo[l]; b < n; b++) {
    if (D.born[base + b] !== NEVER) continue;
    D.born[base + b] = s;
    // a page below HBM counts its idleness from here now
    if (D.memTier[base + b] > 0 && D.lastUse[base + b] === NEVER) D.order.place(l, b, D.memTier[base + b], s, D.rawOf[l]);
  }
  if (n > D.bornUpTo[l]) D.bornUpTo[l] = n;
  // attended masses (dense view: read only where attended) and the largest
  let max = 0;
  const mass = D.massScratch;
  if (obs.idx === null) {
    for (let b = 0; b < n; b++) {
      if (!att[b]) continue;
      const m = obs.mass[b];
      mass[b] = m;
      if (m > max) max = m;
    }
  } else {
    let any = false;
    for (let b = 0; b < n && !any; b++) any = att[b] !== 0;
    if (any && obs.uniform > max) max = obs.uniform;
    for (let k = 0; k < obs.idx.length; k++) {
      const b = obs.idx[k];
      if (!att[b]) continue;
      const m = obs.mass[k];
      mass[b] = m;
      D.listedMark[b] = 1;
      if (m > max) max = m;
    }
  }
  // an attended block not listed has the row's uniform mass: its bins and need, once
  const uRel = max > 0 ? obs.uniform / max : 0;
  const uNear = D.tree.bin(nearLayerFeature(uRel));
  const uMass = D.tree.bin(lastMassFeature(uRel));
  const uUsed = isNeeded(obs.uniform, n, D.o.use_factor);
  const dense = obs.idx === null;
  D.prevLayer = l;
  D.prevStep = s;
  D.nearBin.fill(D.unknownNear);
  const trainAll = D.o.train_on === 'all';
  // pages trained on: attended, live at the layer's last decision pass, which was for this step;
  // their bins as the pass saw them gathered in block order, learned after
  const trained = s >= 0 && D.decStep[l] === s;
  const tick = D.decTick[l];
  const createdThen = D.decCreated[l];
  let samples = 0;
  // what the bins of a trained page read of its layer's last decision pass, once
  const ver = D.nsVer[l];
  const sd = D.nsSd[l];
  const mean = D.nsMean[l];
  const normsThen = D.normsAt[l];
  const nearThen = D.nearAt[l];
  const stepThen = D.decStep[l];
  const blocksThen = D.decBlocks[l];
  const posThen = D.posBinFor === blocksThen;
  const lb = D.layerBin[l];
  const recencies = D.recencyBin.length;
  const useFactor = D.o.use_factor;
  const bins = D.tree.bins;
  // the training samples kept: every one at rate 1, else those whose draw is below the rate's share of 2^32
  const sampleAll = D.o.train_rate >= 1;
  const keepBelow = D.o.train_rate * 0x1_0000_0000;
  const row = trained && !sampleAll ? mix(D.o.seed, l, s, TRAIN_SALT) : 0;
  // (the per-page arrays held in locals for the loop)
  const marks = D.listedMark;
  const nearNow = D.nearBin;
  const lastUseOf = D.lastUse;
  const pagedIn = D.pagedInAt;
  const pagedInSince = D.pagedInLast[l] >= tick;
  const tierThen = D.featTier;
  const normVerOf = D.normVer;
  const pageBinOf = D.pageBin;
  const pageWordOf = D.pageWord;
  const posBinOf = D.posBin;
  const sampleWords = D.trainWords;
  const sampleLabels = D.trainLabels;
  const seenOf = D.seen;
  const usesOf = D.uses;
  const memTierOf = D.memTier;
  const recencyBins = D.recencyBin;
  const tierBins = D.tierBin;
  const normBelow = D.keyNormBins.below;
  const normAbove = D.keyNormBins.above;
  const tree = D.tree;
  const keyNormBins = D.keyNormBins;
  const neverBin = D.neverBin;
  const farBin = D.farBin;
  // every page trained at tier 0 with its position bin kept (none sampled out, none paged in since
  // the pass, the pass's block count that of the position bins): its sample's second word is
  // plainSecond with the position and near_layer bins added
  const plain = trainAll && sampleAll && !pagedInSince && posThen;
  const plainSecond = fourBytes(0, lb, tierBins[0], 0);
  const recencyShift = LITTLE_ENDIAN ? 0 : 24;
  for (let a = 0; a < nAtt; a++) {
    const b = attendedList[a];
    const i = base + b;
    // its mass over the row's largest: the near_layer feature of the next decision, and its last mass
    let near = uNear;
    let last = uMass;
    let used = uUsed;
    if (dense || marks[b] === 1) {
      const rel = max > 0 ? mass[b] / max : 0;
      near = tree.bin(nearFeature(rel));
      last = tree.bin(massFeature(rel));
      used = needed(mass[b], n, useFactor);
    }
    nearNow[b] = near;
    const lu = lastUseOf[i];
    if (trained && b < createdThen) {
      // resident at the pass, or paged in by it
      const tier = pagedInSince && pagedIn[i] >= tick ? tierThen[i] : 0;
      if (plain || ((trainAll || tier > 0) && (sampleAll || sampleDraw(row, b) < keepBelow))) {
        // its feature bins at the layer's last decision pass (its own history is as it was then)
        // (trainBins[8 samples .. 8 samples + 8), as two words)
        let recency = neverBin;
        if (lu !== NEVER) {
          const r = stepThen - lu;
          recency = r >= 0 ? (r < recencies ? recencyBins[r] : farBin) : tree.bin(recFeature(r));
        }
        if (normVerOf[i] !== ver) {
          // (ofNear(z, k), its answer when z is well inside bin k taken here)
          const z = sd > 0 ? (normsThen[b] - mean) / sd : 0;
          const k = pageBinOf[4 * i + PB_NORM];
          if (!(z - normBelow[k] >= NORM_GUARD && normAbove[k] - z >= NORM_GUARD && z > -40 && z < 40)) pageBinOf[4 * i + PB_NORM] = keyNormBins.ofNear(z, k);
          normVerOf[i] = ver;
        }
        sampleWords[2 * samples] = pageWordOf[i] | (recency << recencyShift);
        // (a plain row's second word: a constant with the position and near_layer bins added)
        sampleWords[2 * samples + 1] = plain
          ? plainSecond | fourBytes(posBinOf[b], 0, 0, nearThen[b])
          : fourBytes(posThen ? posBinOf[b] : tree.bin(positionFeature(b, blocksThen)), lb, tierBins[tier], nearThen[b]);
        sampleLabels[samples++] = used ? 1 : 0;
      }
    }
    const attendances = seenOf[i] + 1;
    seenOf[i] = attendances;
    pageBinOf[4 * i + PB_MASS] = last;
    let count = usesOf[i];
    if (used) {
      usesOf[i] = ++count;
      lastUseOf[i] = s;
      // used while offloaded (attended where this policy does not skip, as at the prefill; a
      // page not listed below HBM yet is listed when it is)
      if (memTierOf[i] > 0) toRecent(D, l, b);
    }
    // its frequency bin: kept while the frequency stays strictly inside it, else computed
    if (!freqHolds(pageBinOf[4 * i + PB_FREQ], count, attendances, bins)) pageBinOf[4 * i + PB_FREQ] = tree.bin(freqFeature(count, attendances));
  }
  if (!dense) for (let k = 0; k < obs.idx!.length; k++) D.listedMark[obs.idx![k]] = 0;
  if (samples > 0) D.tree.learnBinsMany(D.trainBins, samples, D.trainLabels);
}

/** a dpnc instance: its state and the policy */
function build(o: Options, setup: PolicySetup) {
  const D = new State(makeState(o, setup));
  const policy = {
    name: 'dpnc',
    /** the prefetch predictor (for inspection: its structure and counters) */
    predictor: D.tree,
    report: () => ({
      ...D.audit.report(),
      training_samples: D.tree.seen,
      training_accuracy: D.tree.accuracy,
      training_majority_accuracy: D.tree.baseRate,
      tree_splits: D.tree.splits,
    }),
    decide(v: PolicyView, act: Actions) {
      decidePages(D, v, act);
    },
    observe(obs: Observation) {
      observePages(D, obs);
    },
  };
  return policy;
}

